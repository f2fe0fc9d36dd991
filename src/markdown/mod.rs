//! Markdown to HTML. The only module that knows pulldown-cmark.
//!
//! Rendering takes an explicit [`RenderContext`] and never sees the site, so
//! it can be tested alone.

mod attributes;
mod limits;
pub(crate) mod raw_html;

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::Path;

use pulldown_cmark::{CodeBlockKind, CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use serde::Serialize;

use crate::diagnostics::{Diagnostic, LineIndex};
use crate::highlight::Highlighter;
use crate::links;
use crate::sanitize;
use crate::slug::slugify;

pub use limits::{MAX_CONTAINERS, MAX_DEPTH};

/// Resolves an author-written link target (`@/oom/page.md#anchor`,
/// `../other.md`, `#anchor`) to a URL. `Ok(None)` leaves the link as written
/// (external and ordinary URLs); `Err` says why the target does not exist.
pub type LinkResolver<'a> = dyn Fn(&str) -> Result<Option<ResolvedLink>, String> + Sync + 'a;

/// The intrinsic width and height of the image an author-written `src`
/// names, when it is a file of the site whose header says.
pub type ImageSize<'a> = dyn Fn(&str) -> Option<(u32, u32)> + Sync + 'a;

/// A link to a page of this site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedLink {
    /// The URL to write in the page.
    pub url: String,
    /// The target page's site path.
    pub page: String,
    /// The `#fragment`, if any.
    pub fragment: Option<String>,
}

/// A `#fragment` link to check once every page's ids are known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct AnchorRef {
    /// The target page's site path.
    pub page: String,
    /// The id that must exist there.
    pub fragment: String,
    /// 1-based line of the link.
    pub line: usize,
    /// 1-based column of the link.
    pub col: usize,
}

/// What Markdown rendering needs to know about the page it renders.
pub struct RenderContext<'a> {
    /// The file, for diagnostics.
    pub path: &'a Path,
    /// Line index over the whole file.
    pub lines: &'a LineIndex<'a>,
    /// Byte offset of the body in the file.
    pub body_offset: usize,
    /// The build's highlighter.
    pub highlighter: &'a Highlighter,
    /// Resolves `@/` links.
    pub resolve: &'a LinkResolver<'a>,
    /// Sizes images.
    pub image_size: &'a ImageSize<'a>,
    /// Sanitise raw HTML (false when `site.toml` sets
    /// `[markdown] unsafe_html = true`).
    pub sanitise: bool,
}

/// One heading, for the table of contents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Heading {
    /// 1 to 6.
    pub level: u8,
    /// The unique id.
    pub id: String,
    /// The heading's text.
    pub title: String,
    /// Where the heading is written: 1-based line and column in the file.
    #[serde(skip)]
    pub at: (usize, usize),
}

/// Rendered Markdown.
#[derive(Debug, Clone, Default)]
pub struct RenderedMarkdown {
    /// The HTML.
    pub html: String,
    /// Every heading in order.
    pub toc: Vec<Heading>,
    /// How many fenced or indented code blocks.
    pub code_blocks: usize,
    /// Problems found while rendering.
    pub diagnostics: Vec<Diagnostic>,
    /// Fragment links, checked after all pages are rendered.
    pub anchors: Vec<AnchorRef>,
    /// Outbound `http(s)` links a reader can follow (link and image
    /// targets, and `href`/`src` in raw HTML that is kept): line, column
    /// and URL.
    pub outbound: Vec<(usize, usize, String)>,
}

fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_GFM
}

/// Gives every heading a unique id: the slug, then `-1`, `-2`... on repeats.
#[derive(Default)]
pub(crate) struct HeadingIds {
    seen: HashMap<String, usize>,
}

impl HeadingIds {
    pub(crate) fn unique(&mut self, wanted: &str) -> String {
        let base = if wanted.is_empty() {
            "section".to_string()
        } else {
            wanted.to_string()
        };
        let mut id = base.clone();
        while let Some(count) = self.seen.get_mut(&id) {
            *count += 1;
            id = format!("{base}-{count}");
        }
        self.seen.insert(id.clone(), 0);
        id
    }
}

/// A heading being collected: its attributes, inner events and plain text.
struct OpenHeading<'e> {
    at: (usize, usize),
    level: HeadingLevel,
    id: Option<String>,
    classes: Vec<String>,
    attrs: Vec<(String, Option<String>)>,
    inner: Vec<Event<'e>>,
    text: String,
}

mod callouts;
mod checks;
mod images;
mod tabs;
#[cfg(test)]
mod tests;
mod trusted;

use checks::*;
use trusted::*;

/// Escapes an attribute value, `"` and `'` included.
fn attribute(value: &str, out: &mut String) {
    out.push_str(&htmlize::escape_attribute(value).replace('\'', "&#39;"));
}

/// Renders `body` to HTML with heading ids, self-links, highlighted code and
/// resolved internal links; raw HTML is sanitised unless `ctx.sanitise` is
/// off. A body nested deeper than the limits is not rendered at all.
pub fn render(body: &str, ctx: &RenderContext<'_>) -> RenderedMarkdown {
    let mut out = RenderedMarkdown::default();
    let locate = |offset: usize| ctx.lines.line_col(ctx.body_offset + offset);
    let error = |out: &mut RenderedMarkdown, offset: usize, message: String| {
        let (line, col) = locate(offset);
        out.diagnostics
            .push(Diagnostic::error(ctx.path, line, col, message));
    };

    // Before anything that could recurse on a deeply nested page.
    let has_html = match limits::check(body) {
        Ok(has_html) => has_html,
        Err((at, message)) => {
            let (line, col) = locate(at);
            out.diagnostics.push(
                Diagnostic::error(ctx.path, line, col, message)
                    .with_help(format!("errata renders at most {MAX_CONTAINERS} nested blockquotes and lists and {MAX_DEPTH} nested elements; flatten the structure")),
            );
            return out;
        }
    };
    let sanitise = ctx.sanitise && has_html;
    let mut trusted = Trusted::new(body, sanitise);
    let mut ids = HeadingIds::default();
    let mut events: Vec<Event<'_>> = Vec::new();

    // Set while inside a heading or a code block.
    let mut heading: Option<OpenHeading<'_>> = None;
    let mut code: Option<(String, String, usize)> = None;
    let mut gatherer = raw_html::Gatherer::default();
    let mut images = images::Images::default();
    let mut tabs = tabs::Tabs::default();

    for (event, range) in Parser::new_ext(body, options()).into_offset_iter() {
        trusted.reading(range.start);
        // An HTML block comes line by line and a tag may span lines: it is
        // checked, and passed on, whole.
        let event = match gatherer.gather(&event, range.start) {
            raw_html::Gathered::Pending => continue,
            raw_html::Gathered::Done(block, inline) => {
                let kept = raw_event(block, ctx, &mut out).into();
                if inline {
                    Event::InlineHtml(kept)
                } else {
                    Event::Html(kept)
                }
            }
            raw_html::Gathered::Other | raw_html::Gathered::Text(_) => event,
        };
        tabs.observe(&event);
        if code.is_some() {
            match event {
                Event::Text(t) => {
                    if let Some((_, text, _)) = code.as_mut() {
                        text.push_str(&t);
                    }
                }
                Event::End(TagEnd::CodeBlock) => {
                    let (lang, text, start) = code.take().expect("inside a code block");
                    out.code_blocks += 1;
                    let highlighted = ctx.highlighter.highlight(&lang, &text);
                    if !highlighted.known_language {
                        let (line, col) = locate(start);
                        out.diagnostics.push(
                            Diagnostic::warning(ctx.path, line, col, format!("unknown code block language `{lang}`; rendered as plain text"))
                                .with_help("use a known language such as bash, console, python, yaml, toml, json or text"),
                        );
                    }
                    let lang_attr = if lang.is_empty() {
                        "text"
                    } else {
                        lang.as_str()
                    };
                    let mut html = String::from("<div class=\"codeblock\" data-lang=\"");
                    attribute(lang_attr, &mut html);
                    html.push_str("\">");
                    html.push_str(&highlighted.html);
                    html.push_str("</div>\n");
                    events.push(trusted.event(html));
                }
                _ => {}
            }
            continue;
        }
        let event = match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => match attributes::fence_language(&info) {
                        Ok(lang) => lang,
                        Err(message) => {
                            error(&mut out, info_offset(body, range.start), message);
                            String::new()
                        }
                    },
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((lang, String::new(), range.start));
                continue;
            }
            Event::Start(Tag::Heading {
                level,
                id,
                classes,
                attrs,
            }) => {
                let problems: Vec<String> = id
                    .iter()
                    .map(|id| attributes::check_id(id))
                    .chain(classes.iter().map(|c| attributes::check_class(c)))
                    .chain(
                        attrs
                            .iter()
                            .map(|(k, v)| attributes::check_attribute(k, v.as_deref())),
                    )
                    .filter_map(Result::err)
                    .collect();
                let ok = problems.is_empty();
                if !ok {
                    // At the `{` of the attribute block.
                    let source = &body[range.clone()];
                    let at = range.start + source.rfind('{').unwrap_or(0);
                    for message in problems {
                        error(&mut out, at, message);
                    }
                }
                heading = Some(OpenHeading {
                    at: locate(range.start),
                    level,
                    id: id.filter(|_| ok).map(|i| i.to_string()),
                    classes: if ok {
                        classes.iter().map(|c| c.to_string()).collect()
                    } else {
                        Vec::new()
                    },
                    attrs: if ok {
                        attrs
                            .iter()
                            .map(|(k, v)| (k.to_string(), v.as_ref().map(|v| v.to_string())))
                            .collect()
                    } else {
                        Vec::new()
                    },
                    inner: Vec::new(),
                    text: String::new(),
                });
                continue;
            }
            Event::End(TagEnd::Heading(_)) => {
                let OpenHeading {
                    at,
                    level,
                    id,
                    classes,
                    attrs,
                    inner,
                    text,
                } = heading.take().expect("inside a heading");
                let unique = ids.unique(id.as_deref().unwrap_or(&slugify(&text)));
                if let Some(wanted) = id.filter(|wanted| *wanted != unique) {
                    out.diagnostics.push(
                        Diagnostic::error(
                            ctx.path,
                            at.0,
                            at.1,
                            format!("heading id `{wanted}` is already used on this page, so this heading would get `{unique}` and links to `#{wanted}` would reach the other one"),
                        )
                        .with_help("give this heading an id of its own"),
                    );
                }
                let id = unique;
                let n = level as u8;
                let mut open = format!("<h{n} id=\"");
                attribute(&id, &mut open);
                open.push('"');
                if !classes.is_empty() {
                    open.push_str(" class=\"");
                    attribute(&classes.join(" "), &mut open);
                    open.push('"');
                }
                for (key, value) in &attrs {
                    open.push(' ');
                    open.push_str(key);
                    if let Some(value) = value {
                        open.push_str("=\"");
                        attribute(value, &mut open);
                        open.push('"');
                    }
                }
                open.push('>');
                let marked = classes.iter().any(|c| c == tabs::CLASS);
                let before = tabs.before_heading(n, &text, marked);
                if !before.is_empty() {
                    events.push(trusted.event(before));
                }
                events.push(trusted.event(open));
                events.extend(inner);
                let mut close = String::from(" <a class=\"anchor\" href=\"#");
                attribute(&id, &mut close);
                close.push_str("\" aria-label=\"Link to this section\">#</a>");
                close.push_str(&format!("</h{n}>\n"));
                events.push(trusted.event(close));
                out.toc.push(Heading {
                    level: n,
                    id,
                    title: text.trim().to_string(),
                    at,
                });
                continue;
            }
            // Link and image targets are checked (and resolved) in place.
            Event::Start(mut tag @ (Tag::Link { .. } | Tag::Image { .. })) => {
                if let Tag::Image { dest_url, .. } = &tag {
                    images.size_next((ctx.image_size)(dest_url));
                }
                if let Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } = &mut tag {
                    let written = std::mem::replace(dest_url, CowStr::Borrowed(""));
                    if links::is_outbound(&written) {
                        // At the target as written, when it is written here
                        // (not in a reference definition, and without escapes).
                        let at = body[range.clone()]
                            .rfind(&*written)
                            .map_or(range.start, |i| range.start + i);
                        let (line, col) = locate(at);
                        out.outbound.push((line, col, written.trim().to_string()));
                    }
                    *dest_url = check_link(written, range.start, ctx, &mut out);
                }
                Event::Start(tag)
            }
            Event::Start(Tag::BlockQuote(Some(kind))) => trusted.event(callouts::open(kind)),
            Event::End(TagEnd::BlockQuote(Some(_))) => trusted.event(callouts::CLOSE.into()),
            Event::Start(Tag::BlockQuote(None)) => {
                if let Some((at, name)) = callouts::unknown_marker(body, range.start) {
                    let (line, col) = locate(at);
                    out.diagnostics.push(
                        Diagnostic::warning(
                            ctx.path,
                            line,
                            col,
                            format!("unknown alert type `[!{name}]`; rendered as a plain quote"),
                        )
                        .with_help(format!("the alert types are {}", callouts::KINDS)),
                    );
                }
                event
            }
            // A check box is errata's markup, so the sanitiser need not
            // allow `<input>` (which raw HTML could then use).
            Event::TaskListMarker(checked) => trusted.event(
                if checked {
                    "<input disabled=\"\" type=\"checkbox\" checked=\"\"/>\n"
                } else {
                    "<input disabled=\"\" type=\"checkbox\"/>\n"
                }
                .to_string(),
            ),
            other => other,
        };
        let Some(event) = images.take(event, &mut trusted) else {
            continue;
        };
        match heading.as_mut() {
            Some(open) => {
                if let Event::Text(t) | Event::Code(t) = &event {
                    open.text.push_str(t);
                }
                open.inner.push(event);
            }
            None => events.push(event),
        }
    }
    let rest = tabs.finish();
    if !rest.is_empty() {
        events.push(trusted.event(rest));
    }
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    // Before the sanitiser, which drops a URL it cannot read. (Images are
    // written apart, and mended where they are.)
    let (html, lost) = trusted.finish(ip_literal_hosts(html));
    out.html = html;
    for at in lost {
        let (line, col) = locate(at);
        out.diagnostics.push(
            Diagnostic::error(
                ctx.path,
                line,
                col,
                "this falls inside a tag of the raw HTML before it (an attribute value or a tag left open), so it cannot be shown",
            )
            .with_help("close the raw HTML's quotes and tags before the Markdown that follows it"),
        );
    }
    out
}

/// pulldown-cmark percent-encodes `[` and `]` in a link's URL, and so
/// breaks an IPv6 host: no browser opens `https://%5B2001:db8::1%5D/`
/// (the sanitiser then dropped the link). Puts the brackets back around
/// the host of an `href` or `src` value.
pub(super) fn ip_literal_hosts(html: String) -> String {
    const OPEN: &str = "//%5B";
    if !html.contains(OPEN) {
        return html;
    }
    let mut out = String::with_capacity(html.len());
    let mut rest = html.as_str();
    while let Some(i) = rest.find(OPEN) {
        let (before, after) = rest.split_at(i);
        out.push_str(before);
        // Right after `href="` or `src="`, and an optional scheme.
        let in_url = before.rsplit_once('"').is_some_and(|(attribute, scheme)| {
            (attribute.ends_with("href=") || attribute.ends_with("src="))
                && (scheme.is_empty()
                    || scheme.strip_suffix(':').is_some_and(|s| {
                        s.starts_with(|c: char| c.is_ascii_alphabetic())
                            && s.chars()
                                .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
                    }))
        });
        let inner = &after[OPEN.len()..];
        let host = inner.find("%5D").map(|j| &inner[..j]).filter(|host| {
            host.contains(':')
                && host.chars().all(|c| {
                    c.is_ascii_alphanumeric() || matches!(c, ':' | '.' | '%' | '-' | '_' | '~')
                })
        });
        match host {
            Some(host) if in_url => {
                out.push_str("//[");
                out.push_str(host);
                out.push(']');
                rest = &inner[host.len() + 3..];
            }
            _ => {
                out.push_str(OPEN);
                rest = inner;
            }
        }
    }
    out.push_str(rest);
    out
}
