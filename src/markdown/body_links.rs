//! The links a reader can follow in a body, for the external link checker.

use super::*;

/// Something in a Markdown body that a reader can follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyLink {
    /// A link or image target (inline, reference or autolink), as the
    /// reader's browser gets it, at its byte offset in the body.
    Target(usize, String),
    /// Raw HTML (a block or an inline tag), at its byte offset in the body;
    /// its `href` and `src` attributes are the caller's to read.
    Html(usize, String),
}

/// The link targets and raw HTML of `body`, in order. Code blocks and
/// inline code are never looked into: a URL there is text, not a link.
pub fn body_links(body: &str) -> Vec<BodyLink> {
    let mut out = Vec::new();
    let mut in_html_block = false;
    for (event, range) in Parser::new_ext(body, options()).into_offset_iter() {
        match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                // At the target as written, when it is written here (not in
                // a reference definition, and without escapes).
                let at = body[range.clone()]
                    .rfind(&*dest_url)
                    .map_or(range.start, |i| range.start + i);
                out.push(BodyLink::Target(at, dest_url.into_string()));
            }
            Event::Start(Tag::HtmlBlock) => {
                in_html_block = true;
                out.push(BodyLink::Html(range.start, body[range].to_string()));
            }
            Event::End(TagEnd::HtmlBlock) => in_html_block = false,
            Event::InlineHtml(html) | Event::Html(html) if !in_html_block => {
                out.push(BodyLink::Html(range.start, html.into_string()));
            }
            _ => {}
        }
    }
    out
}
