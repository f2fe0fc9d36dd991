//! Images: each `![alt](src)` becomes an `<img>` with the file's intrinsic
//! `width` and `height` (so the page does not shift as images arrive) and
//! `loading="lazy"`, except the page's first image, which is likely in view.

use super::*;

/// Collects the events of one image (its alt text may hold emphasis, code,
/// even another image) and renders it as errata's own markup.
#[derive(Default)]
pub(super) struct Images {
    /// The events of the image being read, and how deep in nested images.
    open: Option<(Vec<Event<'static>>, usize)>,
    /// The size of the next image to open, from its file.
    next_size: Option<(u32, u32)>,
    /// Images rendered so far on the page.
    count: usize,
}

impl Images {
    /// Records the intrinsic size of the image whose start comes next.
    pub(super) fn size_next(&mut self, size: Option<(u32, u32)>) {
        // An image inside another's alt text is only text.
        if self.open.is_none() {
            self.next_size = size;
        }
    }

    /// Takes `event` when it belongs to an image: `None` while the image is
    /// being read, the finished `<img>` at its end; any other event is
    /// given back as it is.
    pub(super) fn take<'e>(
        &mut self,
        event: Event<'e>,
        trusted: &mut Trusted,
    ) -> Option<Event<'e>> {
        let (events, depth) = match (&mut self.open, &event) {
            (None, Event::Start(Tag::Image { .. })) => {
                self.open = Some((vec![event.into_static()], 0));
                return None;
            }
            (None, _) => return Some(event),
            (Some(open), _) => open,
        };
        match &event {
            Event::Start(Tag::Image { .. }) => *depth += 1,
            Event::End(TagEnd::Image) if *depth > 0 => *depth -= 1,
            Event::End(TagEnd::Image) => {
                events.push(event.into_static());
                let (events, _) = self.open.take().expect("an open image");
                return Some(trusted.event(self.finish(events)));
            }
            _ => {}
        }
        events.push(event.into_static());
        None
    }

    /// pulldown-cmark's `<img>` (its escaping of `src`, `alt` and `title`),
    /// with the size and loading attributes added.
    fn finish(&mut self, events: Vec<Event<'static>>) -> String {
        let mut html = String::new();
        pulldown_cmark::html::push_html(&mut html, events.into_iter());
        let mut html = super::ip_literal_hosts(html);
        let mut extra = String::new();
        if let Some((width, height)) = self.next_size.take() {
            extra.push_str(&format!(" width=\"{width}\" height=\"{height}\""));
        }
        if self.count > 0 {
            extra.push_str(" loading=\"lazy\"");
        }
        extra.push_str(" decoding=\"async\"");
        self.count += 1;
        match html.rfind(" />") {
            Some(at) => html.insert_str(at, &extra),
            None => html.push_str(&extra),
        }
        html
    }
}
