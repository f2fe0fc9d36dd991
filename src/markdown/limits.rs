//! Nesting limits, checked before anything that recurses sees the page.
//!
//! pulldown-cmark, html5ever (the sanitiser) and lol_html work iteratively,
//! but the minifier recurses once per open element: in a debug build it
//! overflows a 2 MiB worker thread's stack (rayon's default) between 400
//! and 600 elements deep, aborting the whole build. So a page may nest at
//! most [`MAX_CONTAINERS`] blockquotes and lists, and at most [`MAX_DEPTH`]
//! elements in all (Markdown's and its raw HTML's together), which leaves
//! room for the template around the body. Browsers stop nesting at 512
//! (Chromium's parser attaches deeper elements to the 512th); no real page
//! comes near either limit.

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

use super::raw_html::{self, Gathered, VOID};

/// Blockquotes and lists nested in one another, at most.
pub const MAX_CONTAINERS: usize = 100;
/// Elements nested in one another in a page's body, at most.
pub const MAX_DEPTH: usize = 256;

/// Start tags that close an open element of the same kind (`<li>` after
/// `<li>`), as the HTML parser does, so that they do not count as nesting.
const SELF_CLOSING_SIBLINGS: [&str; 12] = [
    "p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "rt", "rp", "tbody",
];

/// Whether `body` holds raw HTML, or the first place it nests deeper than
/// a limit: its byte offset and the message. Iterative: safe on any input.
pub(crate) fn check(body: &str) -> Result<bool, (usize, String)> {
    let mut has_html = false;
    let mut markdown = 0usize;
    let mut containers = 0usize;
    let mut html: Vec<String> = Vec::new();
    let too_deep = |at: usize| Err((at, format!("elements nest more than {MAX_DEPTH} deep here")));
    let mut gatherer = raw_html::Gatherer::default();
    for (event, range) in Parser::new_ext(body, super::options()).into_offset_iter() {
        let raw = match gatherer.gather(&event, range.start) {
            Gathered::Done(raw, _) | Gathered::Text(raw) => raw,
            Gathered::Pending => continue,
            Gathered::Other => match event {
                Event::Start(tag) => {
                    markdown += 1;
                    if matches!(tag, Tag::BlockQuote(_) | Tag::List(_)) {
                        containers += 1;
                        if containers > MAX_CONTAINERS {
                            return Err((
                                range.start,
                                format!(
                                    "blockquotes and lists nest more than {MAX_CONTAINERS} deep here"
                                ),
                            ));
                        }
                    }
                    if markdown + html.len() > MAX_DEPTH {
                        return too_deep(range.start);
                    }
                    continue;
                }
                Event::End(end) => {
                    markdown = markdown.saturating_sub(1);
                    if matches!(end, TagEnd::BlockQuote(_) | TagEnd::List(_)) {
                        containers = containers.saturating_sub(1);
                    }
                    continue;
                }
                _ => continue,
            },
        };
        has_html = true;
        for tag in raw_html::tags(&raw.text) {
            match tag {
                raw_html::HtmlTag::Start { name, at, .. } => {
                    if VOID.contains(&name.as_str()) {
                        continue;
                    }
                    if SELF_CLOSING_SIBLINGS.contains(&name.as_str()) && html.last() == Some(&name)
                    {
                        html.pop();
                    }
                    html.push(name);
                    if markdown + html.len() > MAX_DEPTH {
                        return too_deep(raw.source(at));
                    }
                }
                raw_html::HtmlTag::End { name, .. } => {
                    if let Some(open) = html.iter().rposition(|n| *n == name) {
                        html.truncate(open);
                    }
                }
            }
        }
    }
    Ok(has_html)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blockquotes_past_the_limit_are_found_where_they_cross_it() {
        let ok = ">".repeat(MAX_CONTAINERS) + " x\n";
        assert_eq!(check(&ok), Ok(false));
        let deep = format!("text\n\n{} x\n", ">".repeat(5000));
        let (at, message) = check(&deep).unwrap_err();
        assert_eq!(at, 6 + MAX_CONTAINERS);
        assert!(message.contains("100"), "{message}");
    }

    #[test]
    fn nested_lists_count_as_containers() {
        let mut body = String::new();
        for level in 0..150 {
            body.push_str(&"  ".repeat(level));
            body.push_str("- x\n");
        }
        let (at, _) = check(&body).unwrap_err();
        let line = body[..at].matches('\n').count() + 1;
        assert_eq!(line, MAX_CONTAINERS + 1);
    }

    #[test]
    fn raw_html_elements_count_and_siblings_do_not() {
        let siblings = "<ul>".to_string() + &"<li>x".repeat(2000) + "</ul>\n";
        assert_eq!(check(&siblings), Ok(true));
        let closed = "<div></div>".repeat(2000) + "\n";
        assert_eq!(check(&closed), Ok(true));
        let deep = "<div>".repeat(20_000) + "\n";
        let (at, message) = check(&deep).unwrap_err();
        // The HTML block is inside no Markdown element.
        assert_eq!(at, MAX_DEPTH * 5);
        assert_eq!(&deep[at..at + 5], "<div>");
        assert!(message.contains("256"), "{message}");
    }
}
