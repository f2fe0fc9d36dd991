//! Callouts: GitHub's alert syntax (`> [!WARNING]`), as pulldown-cmark
//! reads it with `ENABLE_GFM`, rendered as errata's own markup.
//!
//! A callout is `<div role="note" aria-label="Warning" data-callout=...>`:
//! `role="note"` is ARIA's role for content that is parenthetic to the
//! main text (an `<aside>` would be a landmark of its own, and `alert` is a
//! live region that interrupts a screen reader as the page loads). The
//! visible title repeats the label, so it is hidden from assistive
//! technology, as Starlight's asides do; the icon is decoration. The
//! theme styles `[data-callout]`, an attribute the sanitiser removes from
//! authors' raw HTML, so a callout cannot be forged with `class`.

use pulldown_cmark::BlockQuoteKind;

/// The alert types GitHub and pulldown-cmark know, as written.
pub(super) const KINDS: &str = "NOTE, TIP, IMPORTANT, WARNING and CAUTION";

/// Name, title and icon (SVG paths on a 16×16 grid) of each kind.
fn parts(kind: BlockQuoteKind) -> (&'static str, &'static str, &'static str) {
    match kind {
        BlockQuoteKind::Note => (
            "note",
            "Note",
            "<circle cx=\"8\" cy=\"8\" r=\"6.25\"/><path d=\"M8 7.25v4M8 4.75v.01\"/>",
        ),
        BlockQuoteKind::Tip => (
            "tip",
            "Tip",
            "<path d=\"M8 1.75a4.25 4.25 0 0 0-2.5 7.7v1.8h5v-1.8A4.25 4.25 0 0 0 8 1.75zM6 13.25h4M6.75 14.75h2.5\"/>",
        ),
        BlockQuoteKind::Important => (
            "important",
            "Important",
            "<path d=\"M1.75 2.25h12.5v8.5h-6.5l-3.5 3v-3h-2.5z\"/><path d=\"M8 4.5v3M8 9.25v.01\"/>",
        ),
        BlockQuoteKind::Warning => (
            "warning",
            "Warning",
            "<path d=\"M8 1.75l6.75 12.5H1.25z\"/><path d=\"M8 6.25v3.5M8 11.75v.01\"/>",
        ),
        BlockQuoteKind::Caution => (
            "caution",
            "Caution",
            "<path d=\"M5.25 1.25h5.5l4 4v5.5l-4 4h-5.5l-4-4v-5.5z\"/><path d=\"M8 4.5v4M8 11v.01\"/>",
        ),
    }
}

/// The opening of a callout of `kind`, with its title.
pub(super) fn open(kind: BlockQuoteKind) -> String {
    let (name, title, icon) = parts(kind);
    format!(
        "<div data-callout=\"{name}\" role=\"note\" aria-label=\"{title}\">\
         <p class=\"callout-title\" aria-hidden=\"true\"><svg class=\"callout-icon\" viewBox=\"0 0 16 16\" width=\"16\" height=\"16\" \
         fill=\"none\" stroke=\"currentColor\" stroke-width=\"1.5\" stroke-linecap=\"round\" stroke-linejoin=\"round\" \
         aria-hidden=\"true\" focusable=\"false\">{icon}</svg>{title}</p>\n"
    )
}

/// The end of a callout.
pub(super) const CLOSE: &str = "</div>\n";

/// An alert marker pulldown-cmark did not take (`> [!DANGER]`) in the
/// blockquote that starts at byte `start` of `body`: its offset and the
/// name as written. Like GitHub, only a marker alone on the quote's first
/// line counts.
pub(super) fn unknown_marker(body: &str, start: usize) -> Option<(usize, &str)> {
    let line = body[start..].split('\n').next().unwrap_or("");
    let after_quote = line.trim_start_matches([' ', '\t']).strip_prefix('>')?;
    let marker = after_quote.trim_start_matches([' ', '\t']);
    let at = start + line.len() - marker.len();
    let name = marker.strip_prefix("[!")?;
    let end = name.find(']')?;
    let (name, rest) = (&name[..end], &name[end + 1..]);
    let plain = !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    (plain && rest.trim().is_empty()).then_some((at, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_markers_are_found_where_github_would_read_one() {
        let body = "x\n\n  >  [!DANGER]\n> text\n";
        let start = body.find("  >").unwrap();
        let (at, name) = unknown_marker(body, start).unwrap();
        assert_eq!((&body[at..at + 9], name), ("[!DANGER]", "DANGER"));
        for not_a_marker in [
            "> [!DANGER] text",
            "> [DANGER]",
            "> [!]",
            "> [!not a name]",
            "> text",
        ] {
            assert_eq!(unknown_marker(not_a_marker, 0), None, "{not_a_marker}");
        }
    }
}
