//! errata's own markup kept out of the sanitiser's way (see [`Trusted`]).

use super::*;

/// errata's own markup (highlighted code, heading tags and self-links),
/// kept out of the sanitiser's way: on a page that is sanitised each piece
/// stands in the Markdown output as a marker that no author can forge (it
/// carries a hash of the whole body), and is put back after sanitising.
pub(super) struct Trusted {
    marker: Option<String>,
    pieces: Vec<String>,
}

impl Trusted {
    pub(super) fn new(body: &str, sanitise: bool) -> Trusted {
        let marker = sanitise.then(|| {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            body.hash(&mut hasher);
            format!("errata-{:016x}-", hasher.finish())
        });
        Trusted {
            marker,
            pieces: Vec::new(),
        }
    }

    /// The event that stands for `html` in the Markdown output.
    pub(super) fn event(&mut self, html: String) -> Event<'static> {
        match &self.marker {
            Some(marker) => {
                let slot = format!("{marker}{}.", self.pieces.len());
                self.pieces.push(html);
                Event::Html(slot.into())
            }
            None => Event::Html(html.into()),
        }
    }

    /// Sanitises `html` and puts errata's pieces back.
    pub(super) fn finish(self, html: String) -> String {
        let Some(marker) = self.marker else {
            return html;
        };
        let clean = sanitize::sanitise(&html);
        let mut out =
            String::with_capacity(clean.len() + self.pieces.iter().map(String::len).sum::<usize>());
        let mut rest = clean.as_str();
        while let Some(i) = rest.find(&marker) {
            out.push_str(&rest[..i]);
            let after = &rest[i + marker.len()..];
            let piece = after.split_once('.').and_then(|(n, tail)| {
                let piece = self.pieces.get(n.parse::<usize>().ok()?)?;
                Some((piece, tail))
            });
            match piece {
                Some((piece, tail)) => {
                    out.push_str(piece);
                    rest = tail;
                }
                None => {
                    out.push_str(&marker);
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }
}
