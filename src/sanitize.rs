//! Sanitising the raw HTML that Markdown lets authors write. The only
//! module that knows ammonia.
//!
//! The allowlist keeps what documentation uses (disclosure widgets, key
//! caps, sub/superscripts, images, tables, figures, links with a title and
//! `rel`) and everything pulldown-cmark itself produces (footnotes, table
//! alignment; task-list check boxes are errata's own markup, added after). Scripts, styles, forms, frames,
//! event handlers, `style` attributes and any URL that is not `http(s)`,
//! `mailto`, relative or `#` are removed. `data-*` attributes go too: the
//! finish stage trusts `data-disclosure` from templates only.

use std::collections::HashSet;
use std::sync::LazyLock;

use ammonia::Builder;

/// Elements kept, with the attributes each may carry besides
/// [`GENERIC_ATTRIBUTES`].
const TAGS: &[(&str, &[&str])] = &[
    ("a", &["href", "title", "rel", "hreflang"]),
    ("abbr", &[]),
    ("b", &[]),
    ("bdi", &[]),
    ("bdo", &["dir"]),
    ("blockquote", &["cite"]),
    ("br", &[]),
    ("caption", &[]),
    ("cite", &[]),
    ("code", &[]),
    ("col", &["span"]),
    ("colgroup", &["span"]),
    ("dd", &[]),
    ("del", &["cite", "datetime"]),
    ("details", &["open"]),
    ("dfn", &[]),
    ("div", &[]),
    ("dl", &[]),
    ("dt", &[]),
    ("em", &[]),
    ("figcaption", &[]),
    ("figure", &[]),
    ("h1", &[]),
    ("h2", &[]),
    ("h3", &[]),
    ("h4", &[]),
    ("h5", &[]),
    ("h6", &[]),
    ("hr", &[]),
    ("i", &[]),
    ("img", &["src", "alt", "width", "height", "loading"]),
    // Task-list items, as pulldown-cmark writes them.
    ("ins", &["cite", "datetime"]),
    ("kbd", &[]),
    ("li", &["value"]),
    ("mark", &[]),
    ("ol", &["start", "reversed", "type"]),
    ("p", &[]),
    ("pre", &[]),
    ("q", &["cite"]),
    ("rp", &[]),
    ("rt", &[]),
    ("ruby", &[]),
    ("s", &[]),
    ("samp", &[]),
    ("small", &[]),
    ("span", &[]),
    ("strong", &[]),
    ("sub", &[]),
    ("summary", &[]),
    ("sup", &[]),
    ("table", &[]),
    ("tbody", &[]),
    ("td", &["colspan", "rowspan", "headers", "style"]),
    ("tfoot", &[]),
    ("th", &["colspan", "rowspan", "headers", "scope", "style"]),
    ("thead", &[]),
    ("time", &["datetime"]),
    ("tr", &[]),
    ("u", &[]),
    ("ul", &[]),
    ("var", &[]),
    ("wbr", &[]),
];

/// Attributes any kept element may carry.
const GENERIC_ATTRIBUTES: &[&str] = &["id", "class", "title", "lang", "dir", "align"];

static SANITISER: LazyLock<Builder<'static>> = LazyLock::new(|| {
    let mut builder = Builder::empty();
    builder
        .tags(TAGS.iter().map(|(tag, _)| *tag).collect())
        .tag_attributes(
            TAGS.iter()
                .map(|(tag, attributes)| (*tag, attributes.iter().copied().collect()))
                .collect(),
        )
        .generic_attributes(GENERIC_ATTRIBUTES.iter().copied().collect())
        .url_schemes(crate::links::ALLOWED_SCHEMES.iter().copied().collect())
        // Content that is dropped with its element, not kept as text.
        .clean_content_tags(HashSet::from(["script", "style"]))
        // The link policy sets `rel` in the finish stage.
        .link_rel(None)
        // Table cell alignment, as pulldown-cmark writes it.
        .filter_style_properties(HashSet::from(["text-align"]))
        .strip_comments(true);
    builder
});

/// True when the sanitiser keeps element `tag`.
pub(crate) fn keeps_tag(tag: &str) -> bool {
    TAGS.iter().any(|(t, _)| *t == tag)
}

/// True when the sanitiser keeps attribute `name` on a kept element `tag`.
pub(crate) fn keeps_attribute(tag: &str, name: &str) -> bool {
    GENERIC_ATTRIBUTES.contains(&name)
        || TAGS
            .iter()
            .any(|(t, attributes)| *t == tag && attributes.contains(&name))
}

/// Sanitises an HTML fragment: what the allowlist does not keep is removed,
/// and the rest is re-serialised as html5ever parsed it (a browser's view).
pub fn sanitise(html: &str) -> String {
    SANITISER.clean(html).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_what_docs_use() {
        let html = "<details open><summary>More</summary><p>Press <kbd>Ctrl</kbd>+<kbd>C</kbd>, H<sub>2</sub>O, x<sup>2</sup></p></details>\
            <figure><img src=\"/a.png\" alt=\"A\" width=\"10\"><figcaption>Cap</figcaption></figure>\
            <table><thead><tr><th style=\"text-align: left\">h</th></tr></thead><tbody><tr><td>d</td></tr></tbody></table>\
            <a href=\"https://x.example/\" title=\"t\" rel=\"me\">x</a>";
        let expected = html
            .replace("open>", "open=\"\">")
            .replace("text-align: left", "text-align:left");
        assert_eq!(sanitise(html), expected);
    }

    #[test]
    fn removes_scripts_handlers_and_bad_urls() {
        let out = sanitise(
            "<script>alert(1)</script><img src=x onerror=alert(1)><a href=\"jav&#x09;ascript:x\" onclick=y>a</a>\
             <iframe src=\"https://e.example\"></iframe><svg><a xlink:href=\"javascript:x\">s</a></svg>\
             <p style=\"color:red\" data-disclosure>p</p><input type=\"text\">",
        );
        assert_eq!(out, "<img src=\"x\"><a>a</a><p>p</p>");
    }
}
