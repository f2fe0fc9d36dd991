//! errata's own markup kept out of the sanitiser's way (see [`Trusted`]).

use super::*;

/// errata's own markup (highlighted code, heading tags and self-links,
/// images, callouts, check boxes), kept out of the sanitiser's way: on a
/// page that is sanitised each piece stands in the Markdown output as a
/// marker that no author can forge (it carries a hash of the whole body),
/// and is put back after sanitising, where the marker is text.
///
/// Raw HTML can swallow a marker: an attribute value left open
/// (`<details title="`) takes in the Markdown after it, markers and all.
/// A piece put back there would end the author's value with its own
/// quotes, and whatever followed would be read as attributes of the
/// author's element (`ontoggle=...`, past the sanitiser). So a piece goes
/// back only where its marker is text between tags; one whose marker is
/// anywhere else, or gone, is left out and reported where it was written.
pub(super) struct Trusted {
    marker: Option<String>,
    /// Each piece, and the source offset of what it renders.
    pieces: Vec<(String, usize)>,
    /// The source offset of the Markdown event being read.
    at: usize,
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
            at: 0,
        }
    }

    /// Notes where the Markdown being read starts (for the pieces it gives).
    pub(super) fn reading(&mut self, at: usize) {
        self.at = at;
    }

    /// The event that stands for `html` in the Markdown output.
    pub(super) fn event(&mut self, html: String) -> Event<'static> {
        match &self.marker {
            Some(marker) => {
                let slot = format!("{marker}{}.", self.pieces.len());
                self.pieces.push((html, self.at));
                Event::Html(slot.into())
            }
            None => Event::Html(html.into()),
        }
    }

    /// Sanitises `html` and puts errata's pieces back where their markers
    /// are text; the source offsets of the pieces left out.
    pub(super) fn finish(self, html: String) -> (String, Vec<usize>) {
        let Some(marker) = &self.marker else {
            return (html, Vec::new());
        };
        let clean = sanitize::sanitise(&html);
        let mut out = String::with_capacity(
            clean.len() + self.pieces.iter().map(|p| p.0.len()).sum::<usize>(),
        );
        let mut used = vec![false; self.pieces.len()];
        for (span, text) in spans(&clean) {
            if text {
                self.put_back(span, marker, &mut used, &mut out);
            } else {
                // Inside a tag: a marker there is taken out (its piece is
                // reported below), anything else kept as it is.
                if span.contains(marker.as_str()) {
                    out.push_str(&span.replace(marker.as_str(), ""));
                } else {
                    out.push_str(span);
                }
            }
        }
        let lost = used
            .iter()
            .zip(&self.pieces)
            .filter(|(used, _)| !**used)
            .map(|(_, (_, at))| *at)
            .collect();
        (out, lost)
    }

    /// Copies the text `text` into `out`, each of this body's markers with
    /// a real slot replaced by its piece (once).
    fn put_back(&self, text: &str, marker: &str, used: &mut [bool], out: &mut String) {
        let mut rest = text;
        while let Some(i) = rest.find(marker) {
            out.push_str(&rest[..i]);
            let after = &rest[i + marker.len()..];
            let slot = after.split_once('.').and_then(|(n, tail)| {
                let n = n.parse::<usize>().ok()?;
                let piece = self.pieces.get(n).filter(|_| !used[n])?;
                Some((n, &piece.0, tail))
            });
            match slot {
                Some((n, piece, tail)) => {
                    used[n] = true;
                    out.push_str(piece);
                    rest = tail;
                }
                None => {
                    out.push_str(marker);
                    rest = after;
                }
            }
        }
        out.push_str(rest);
    }
}

/// The sanitiser's output cut into text between tags (`true`) and tags
/// (`false`). html5ever writes text with `<` escaped, every attribute
/// value in double quotes with `"` escaped, and (as the sanitiser keeps no
/// comment) nothing else: a tag ends at the first `>` outside quotes.
fn spans(html: &str) -> impl Iterator<Item = (&str, bool)> {
    let bytes = html.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= bytes.len() {
            return None;
        }
        let start = at;
        if bytes[at] != b'<' {
            at += memchr::memchr(b'<', &bytes[at..]).unwrap_or(bytes.len() - at);
            return Some((&html[start..at], true));
        }
        let mut quoted = false;
        at += 1;
        while at < bytes.len() && (quoted || bytes[at] != b'>') {
            quoted ^= bytes[at] == b'"';
            at += 1;
        }
        at = (at + 1).min(bytes.len());
        Some((&html[start..at], false))
    })
}
