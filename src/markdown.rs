//! Markdown to HTML. The only module that knows pulldown-cmark.
//!
//! Rendering takes an explicit [`RenderContext`] and never sees the site, so
//! it can be tested alone.

mod attributes;
mod limits;
mod raw_html;

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
}

fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
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

/// errata's own markup (highlighted code, heading tags and self-links),
/// kept out of the sanitiser's way: on a page that is sanitised each piece
/// stands in the Markdown output as a marker that no author can forge (it
/// carries a hash of the whole body), and is put back after sanitising.
struct Trusted {
    marker: Option<String>,
    pieces: Vec<String>,
}

impl Trusted {
    fn new(body: &str, sanitise: bool) -> Trusted {
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
    fn event(&mut self, html: String) -> Event<'static> {
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
    fn finish(self, html: String) -> String {
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

    for (event, range) in Parser::new_ext(body, options()).into_offset_iter() {
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
            raw_html::Gathered::Other => event,
        };
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
                let id = ids.unique(&id.unwrap_or_else(|| slugify(&text)));
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
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let dest_url = check_link(dest_url, range.start, ctx, &mut out);
                Event::Start(Tag::Link {
                    link_type,
                    dest_url,
                    title,
                    id,
                })
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
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let dest_url = check_link(dest_url, range.start, ctx, &mut out);
                Event::Start(Tag::Image {
                    link_type,
                    dest_url,
                    title,
                    id,
                })
            }
            other => other,
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
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    out.html = trusted.finish(html);
    out
}

/// The offset of a fence's info string, from the offset of the fence.
fn info_offset(body: &str, fence: usize) -> usize {
    let line = &body[fence..];
    let skipped = line.len() - line.trim_start_matches([' ', '`', '~']).len();
    let rest = &line[skipped..];
    fence + skipped + (rest.len() - rest.trim_start_matches([' ', '\t']).len())
}

/// Checks raw HTML and reports its problems; returns it without its bad
/// URL attributes.
fn raw_event(
    block: raw_html::Block,
    ctx: &RenderContext<'_>,
    out: &mut RenderedMarkdown,
) -> String {
    let kept = check_raw_html(&block.text, ctx.sanitise, &mut |at, message, is_error| {
        let (line, col) = ctx.lines.line_col(ctx.body_offset + block.source(at));
        out.diagnostics.push(if is_error {
            Diagnostic::error(ctx.path, line, col, message)
        } else {
            Diagnostic::warning(ctx.path, line, col, message).with_help(
                "errata keeps an allowlist of HTML in Markdown; a site whose every author is trusted can keep all of it with `[markdown] unsafe_html = true` in site.toml",
            )
        });
    });
    kept.unwrap_or(block.text)
}

/// Checks one piece of raw HTML: every URL attribute
/// must carry an allowed URL once entity-decoded (an error otherwise);
/// when `sanitise` is on, what the sanitiser will drop is a warning.
/// Returns the HTML without its bad URL attributes, if it had any, so that
/// they reach no later stage even when the site does not sanitise.
fn check_raw_html(
    raw: &str,
    sanitise: bool,
    report: &mut dyn FnMut(usize, String, bool),
) -> Option<String> {
    let mut bad: Vec<(usize, usize)> = Vec::new();
    for tag in raw_html::tags(raw) {
        let raw_html::HtmlTag::Start {
            name,
            at,
            attributes,
        } = tag
        else {
            continue;
        };
        if sanitise && !sanitize::keeps_tag(&name) {
            report(
                at,
                format!("raw HTML `<{name}>` is removed by the sanitiser"),
                false,
            );
        }
        for attribute in &attributes {
            if links::URL_ATTRIBUTES.contains(&attribute.name.as_str()) {
                let value = links::decode_attribute(attribute.value);
                if let Err(scheme) = links::check_url_attribute(&attribute.name, &value) {
                    report(
                        attribute.at,
                        format!(
                            "`{scheme}:` URLs are not allowed in raw HTML (`{}` of `<{name}>`); use http(s), mailto, relative or #fragment URLs",
                            attribute.name
                        ),
                        true,
                    );
                    bad.push((attribute.at, attribute.end));
                    continue;
                }
            }
            if sanitise
                && sanitize::keeps_tag(&name)
                && !sanitize::keeps_attribute(&name, &attribute.name)
            {
                report(
                    attribute.at,
                    format!(
                        "raw HTML attribute `{}` of `<{name}>` is removed by the sanitiser",
                        attribute.name
                    ),
                    false,
                );
            }
        }
    }
    if bad.is_empty() {
        return None;
    }
    let mut kept = String::with_capacity(raw.len());
    let mut from = 0;
    for (start, end) in bad {
        kept.push_str(&raw[from..start]);
        from = end;
    }
    kept.push_str(&raw[from..]);
    Some(kept)
}

/// Rejects URLs with a scheme other than http(s) and mailto, and resolves
/// links to this site's pages; other links pass unchanged.
fn check_link<'e>(
    dest: CowStr<'e>,
    offset: usize,
    ctx: &RenderContext<'_>,
    out: &mut RenderedMarkdown,
) -> CowStr<'e> {
    let (line, col) = ctx.lines.line_col(ctx.body_offset + offset);
    // pulldown-cmark has decoded character references in `dest` already.
    if let Err(scheme) = links::check_url(&dest) {
        out.diagnostics.push(
            Diagnostic::error(
                ctx.path,
                line,
                col,
                format!("`{scheme}:` links are not allowed"),
            )
            .with_help("links may be http(s), mailto, relative or #fragment URLs"),
        );
        return CowStr::Borrowed("#");
    }
    match (ctx.resolve)(&dest) {
        Ok(Some(resolved)) => {
            if let Some(fragment) = resolved.fragment {
                out.anchors.push(AnchorRef {
                    page: resolved.page,
                    fragment,
                    line,
                    col,
                });
            }
            CowStr::Boxed(resolved.url.into_boxed_str())
        }
        Ok(None) => dest,
        Err(message) => {
            out.diagnostics
                .push(Diagnostic::error(ctx.path, line, col, message));
            dest
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn render_str(body: &str) -> RenderedMarkdown {
        let lines = LineIndex::new(body);
        let highlighter = Highlighter::default();
        let resolve = |link: &str| match link {
            "@/oom/cuda-out-of-memory.md" => Ok(Some(ResolvedLink {
                url: "/oom/cuda-out-of-memory/".into(),
                page: "oom/cuda-out-of-memory/".into(),
                fragment: None,
            })),
            l if l.starts_with("@/") => Err(format!("link to missing page `{link}`")),
            _ => Ok(None),
        };
        let ctx = RenderContext {
            path: Path::new("x.md"),
            lines: &lines,
            body_offset: 0,
            highlighter: &highlighter,
            resolve: &resolve,
            sanitise: true,
        };
        render(body, &ctx)
    }

    #[test]
    fn headings_get_unique_ids_and_self_links() {
        let out = render_str("# Fix it\n\n## Ollama\n\n## Ollama\n\n## Ollama {#custom}\n");
        let ids: Vec<_> = out.toc.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["fix-it", "ollama", "ollama-1", "custom"]);
        insta::assert_snapshot!(out.html);
    }

    #[test]
    fn extensions_are_on() {
        let out = render_str(
            "| a | b |\n|---|---|\n| 1 | 2 |\n\n~~old~~\n\n- [x] done\n\nNote[^1].\n\n[^1]: Footnote.\n",
        );
        insta::assert_snapshot!(out.html);
    }

    #[test]
    fn code_blocks_are_highlighted_and_counted() {
        let out = render_str("```bash\nexport OLLAMA_NUM_PARALLEL=1\n```\n\n    indented\n");
        assert_eq!(out.code_blocks, 2);
        insta::assert_snapshot!(out.html);
    }

    #[test]
    fn unknown_language_warns_at_the_fence() {
        let out = render_str("text\n\n```klingon\nQapla'\n```\n");
        assert_eq!(out.diagnostics.len(), 1);
        let d = &out.diagnostics[0];
        assert_eq!((d.line, d.col, d.is_error()), (3, 1, false));
        assert!(out.html.contains("Qapla&#39;") || out.html.contains("Qapla'"));
    }

    #[test]
    fn script_urls_are_errors_at_the_link() {
        let out =
            render_str("ok\n\nclick [here](javascript:alert(1)) or ![x]( DATA:text/html,hi)\n");
        let at: Vec<_> = out
            .diagnostics
            .iter()
            .map(|d| (d.line, d.col, d.is_error()))
            .collect();
        assert_eq!(at, [(3, 7, true), (3, 38, true)]);
        assert!(!out.html.contains("javascript"));
    }

    #[test]
    fn script_urls_in_raw_html_are_errors_at_the_attribute() {
        let out = render_str(
            "para\n\n<div><a title=x HREF = 'jav&#x09;ascript:x'>a</a></div>\n\ntext <img src=\"data:x\"> and <a href=\"/ok\">ok</a> <a href=\"&#106;avascript:y\">j</a>\n",
        );
        let at: Vec<_> = out
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| (d.line, d.col, d.message.as_str()))
            .collect();
        assert_eq!(
            at,
            [
                (
                    3,
                    17,
                    "`javascript:` URLs are not allowed in raw HTML (`href` of `<a>`); use http(s), mailto, relative or #fragment URLs"
                ),
                (
                    5,
                    11,
                    "`data:` URLs are not allowed in raw HTML (`src` of `<img>`); use http(s), mailto, relative or #fragment URLs"
                ),
                (
                    5,
                    53,
                    "`javascript:` URLs are not allowed in raw HTML (`href` of `<a>`); use http(s), mailto, relative or #fragment URLs"
                ),
            ]
        );
        assert!(!out.html.contains("javascript"), "{}", out.html);
    }

    #[test]
    fn raw_html_is_sanitised_and_errata_markup_kept() {
        let out = render_str(
            "# Fix it {.lead data-level=1}\n\n<details><summary>More</summary>\n\n```bash\necho \"<b>hi</b>\"\n```\n\n</details>\n\n<script>alert(1)</script>\n\nPress <kbd onclick=\"x()\">Ctrl</kbd>.\n",
        );
        assert!(out.html.contains("<h1 id=\"fix-it\" class=\"lead\" data-level=\"1\">Fix it <a class=\"anchor\" href=\"#fix-it\""), "{}", out.html);
        assert!(
            out.html.contains(
                "<details><summary>More</summary>\n<div class=\"codeblock\" data-lang=\"bash\">"
            ),
            "{}",
            out.html
        );
        assert!(out.html.contains("<kbd>Ctrl</kbd>"), "{}", out.html);
        assert!(
            !out.html.contains("script") && !out.html.contains("onclick"),
            "{}",
            out.html
        );
        let warnings: Vec<_> = out
            .diagnostics
            .iter()
            .map(|d| (d.line, d.col, d.is_error()))
            .collect();
        assert_eq!(warnings, [(11, 1, false), (13, 12, false)]);
    }

    #[test]
    fn a_forged_marker_is_only_text() {
        let out = render_str("<b>x</b> errata-0000000000000000-0. and\n\n```sh\nls\n```\n");
        assert!(
            out.html.contains("errata-0000000000000000-0. and"),
            "{}",
            out.html
        );
        assert_eq!(out.html.matches("codeblock").count(), 1);
    }

    #[test]
    fn heading_attributes_and_fence_info_are_checked_where_written() {
        let out = render_str(
            "# Title {#a\"onclick=\"alert(2)}\n\n## B {onmouseover=x}\n\n```bash\"onclick=alert(1)\nls\n```\n",
        );
        let at: Vec<_> = out
            .diagnostics
            .iter()
            .map(|d| (d.line, d.col, d.is_error()))
            .collect();
        assert_eq!(at, [(1, 9, true), (3, 6, true), (5, 4, true)]);
        assert!(
            !out.html.contains("onclick") && !out.html.contains("onmouseover"),
            "{}",
            out.html
        );
    }

    #[test]
    fn deep_nesting_is_an_error_before_rendering() {
        let body = format!("ok\n\n{} x\n", ">".repeat(5000));
        let out = render_str(&body);
        assert_eq!(out.diagnostics.len(), 1);
        let d = &out.diagnostics[0];
        assert_eq!((d.line, d.col, d.is_error()), (3, 101, true));
        assert!(out.html.is_empty());
    }

    #[test]
    fn internal_links_resolve_or_fail_where_written() {
        let out = render_str("[OOM](@/oom/cuda-out-of-memory.md) and\n[gone](@/nope.md)\n");
        assert!(out.html.contains("href=\"/oom/cuda-out-of-memory/\""));
        assert_eq!(out.diagnostics.len(), 1);
        assert_eq!((out.diagnostics[0].line, out.diagnostics[0].col), (2, 1));
    }
}
