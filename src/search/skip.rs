//! A quick way through an element whose text the search index drops: one
//! that `data-pagefind-ignore` marks, or one Pagefind never indexes
//! (`nav`, `footer`, `form`, `head`...). The calculator, the hardware
//! offers, the table of contents and the navigation are a third of a
//! triage page's text and almost half its tags.
//!
//! The parser ([`super::parse`]) reads such an element as it reads any
//! other, then throws its text away when it ends. Inside it, only a few
//! things still count, and this reads just those: each element with an
//! `id` takes an anchor number (and records its `data-pagefind-title`),
//! and a `<title>` gives the page's title. Where anything else could count
//! (a filter, meta or sort attribute, a body, an `h1`, an `img`) or the
//! markup nests oddly (an end tag of an element outside, a page that ends
//! inside), it gives up, and the parser reads the element the usual way.
//! The parser does not take this way for an element inside an anchor's
//! element (the text of inline elements in it still counts for the
//! anchor), nor for `plaintext` (the rest of the page is its text).

use std::borrow::Cow;

use super::attributes::Attrs;
use super::elements::Kind;
use super::html::{Markup, closing_tag};
use super::node::is_foreign;

/// What the inside of a dropped element adds to a page.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Skipped<'a> {
    /// Just after the end tag that closes the element.
    pub(super) end: usize,
    /// The elements inside that take an anchor, in order: their anchor id
    /// and title.
    pub(super) anchors: Vec<(String, Option<String>)>,
    /// The text of each `title` element inside, in order.
    pub(super) titles: Vec<&'a str>,
}

/// The `data-pagefind-` attributes that change nothing inside a dropped
/// element but its anchors (the text they add is dropped with it).
const HARMLESS: &[&str] = &["ignore", "title", "weight", "index-attrs"];

/// Reads the inside of the element `name`, whose contents start at `at`,
/// up to its end tag; when something inside it may count for more than an
/// anchor or a title, where that is. The parser then tries no quick way
/// again for the elements that start before it (those inside this one), so
/// that no part of a page is scanned twice the quick way, however deep
/// dropped elements nest. `outside` says whether an open element
/// around it has the name given (its end tag would close this one too),
/// and `foreign` whether it is inside SVG or MathML.
pub(super) fn dropped<'a>(
    html: &'a str,
    mut at: usize,
    name: &str,
    outside: impl Fn(&str) -> bool,
    foreign: bool,
    excluded: bool,
) -> Result<Skipped<'a>, usize> {
    let mut out = Skipped::default();
    // The elements open inside it, whether each is excluded
    // (`data-pagefind-ignore=all`, or in one: a `title` there gives none)
    // and whether it is in SVG or MathML.
    let mut open: Vec<(Cow<'a, str>, bool, bool)> = Vec::new();
    let mut attributes = Vec::new();
    loop {
        let Some(found) = memchr::memchr(b'<', &html.as_bytes()[at..]) else {
            return Err(html.len());
        };
        let lt = at + found;
        let Some(markup) = Markup::at(html, lt, &mut attributes) else {
            at = lt + 1;
            continue;
        };
        at = markup.end();
        let Markup::Tag(tag) = markup else {
            continue;
        };
        if tag.name.is_empty() {
            return Err(html.len());
        }
        let tag_name = tag.lower_name();
        if tag.closing {
            if let Some(inner) = open.iter().rposition(|(n, ..)| *n == tag_name) {
                open.truncate(inner);
            } else if tag_name == name {
                out.end = at;
                return Ok(out);
            } else if outside(&tag_name) {
                return Err(lt);
            }
            continue;
        }
        let attrs = Attrs { all: &attributes };
        if matches!(&*tag_name, "h1" | "img" | "plaintext") || !harmless(&attrs) {
            return Err(lt);
        }
        if !attrs.ignores()
            && let Some(id) = attrs.anchor_id()
        {
            out.anchors.push((id, attrs.anchor_title()));
        }
        let kind = Kind::of(&tag_name);
        let (excluded, in_foreign) = open.last().map_or((excluded, foreign), |&(_, e, f)| (e, f));
        let excluded = excluded || attrs.excludes();
        let in_foreign = in_foreign || is_foreign(&tag_name);
        let self_closing = tag.self_closing && in_foreign;
        if self_closing || kind.is(Kind::VOID) {
            continue;
        }
        if kind.is(Kind::RAW_TEXT) {
            let (lt, end) = closing_tag(html, at, &tag_name).ok_or(html.len())?;
            if tag_name == "title" && !excluded {
                out.titles.push(&html[at..lt]);
            }
            at = end;
            continue;
        }
        // A removed element is ignored, never excluded.
        open.push((tag_name, excluded && !kind.is(Kind::REMOVE), in_foreign));
    }
}

/// Whether an element's `data-pagefind-` attributes, if any, are ones that
/// change nothing inside a dropped element.
fn harmless(attrs: &Attrs<'_, '_>) -> bool {
    attrs.all.iter().all(|(name, _)| {
        let Some(prefix) = name.get(..14) else {
            return true;
        };
        !prefix.eq_ignore_ascii_case("data-pagefind-")
            || HARMLESS.iter().any(|h| name[14..].eq_ignore_ascii_case(h))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skip(html: &str) -> Option<Skipped<'_>> {
        // The element `nav` starts the page; `main` is open around it.
        let at = html.find('>').unwrap() + 1;
        dropped(html, at, "nav", |n| n == "main", false, false).ok()
    }

    #[test]
    fn a_dropped_element_gives_its_anchors_and_titles_and_ends_at_its_end_tag() {
        let html = "<nav><NAV><a id=' a b '>x</a></nav><p>in</p>\
                    <input id=i><title>T &amp; t</title><div data-pagefind-ignore id=no>\
                    <h2 id=h data-pagefind-title=' Head '>h</h2><br/><span/></div></NAV>after";
        let skipped = skip(html).unwrap();
        assert_eq!(&html[skipped.end..], "after");
        assert_eq!(
            skipped.anchors,
            [
                ("ab".to_string(), None),
                ("i".to_string(), None),
                ("h".to_string(), Some("Head".to_string())),
            ]
        );
        assert_eq!(skipped.titles, ["T &amp; t"]);
    }

    #[test]
    fn dropped_elements_nested_deep_around_what_counts_are_read_the_usual_way() {
        // Each of the 20,000 elements gives up at the `h1`: the quick way
        // is tried once, not once for each (which took seconds).
        let depth = 20_000;
        let html = format!(
            "<html><body>{}<h1>Deep title</h1>{}<p data-pagefind-body>words</p></body></html>",
            "<div data-pagefind-ignore>".repeat(depth),
            "</div>".repeat(depth)
        );
        let parsed = super::super::parse::parse(&html);
        assert_eq!(
            parsed.meta.get("title").map(String::as_str),
            Some("Deep title")
        );
        assert_eq!(
            parsed.digest.split_whitespace().collect::<Vec<_>>(),
            ["words."]
        );
    }

    #[test]
    fn what_may_count_for_more_is_left_to_the_parser() {
        for inside in [
            "<h1>title</h1>",
            "<img src=x.png>",
            "<p data-pagefind-meta=m>x</p>",
            "<p DATA-PAGEFIND-FILTER=f>x</p>",
            "<div data-pagefind-body>x</div>",
            "<p data-pagefind-sort=s:1>x</p>",
            // An end tag of an element outside closes this one too.
            "<p>x</main>",
        ] {
            assert_eq!(skip(&format!("<nav>{inside}</nav>")), None, "{inside}");
        }
        // Where it gave up: the tag that may count, or the page's end.
        let html = "<nav><p>x</p><h1>t</h1></nav>";
        let found = dropped(html, 5, "nav", |_| false, false, false);
        assert_eq!(found, Err(html.find("<h1").unwrap()));
        assert_eq!(
            dropped("<nav><p>x", 5, "nav", |_| false, false, false),
            Err(9)
        );
        // The page ends inside.
        for html in ["<nav><p>x", "<nav><textarea>x</nav>", "<nav><p x='</nav>"] {
            assert_eq!(skip(html), None, "{html}");
        }
        // A stray end tag of nothing open is ignored, as the parser does.
        assert!(skip("<nav><p>x</span></p></nav>").is_some());
        // `/>` ends an element only in SVG; the `nav` end tag closes the
        // `div` left open inside it too.
        let html = "<nav><div/><svg><g/></svg></nav>after";
        assert_eq!(skip(html).map(|s| &html[s.end..]), Some("after"));
    }
}
