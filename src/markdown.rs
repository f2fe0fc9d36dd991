//! Markdown to HTML. The only module that knows pulldown-cmark.
//!
//! Rendering takes an explicit [`RenderContext`] and never sees the site, so
//! it can be tested alone.

use std::collections::HashMap;
use std::path::Path;

use pulldown_cmark::{CodeBlockKind, CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use serde::Serialize;

use crate::diagnostics::{Diagnostic, LineIndex};
use crate::highlight::{Highlighter, escape_into};
use crate::slug::slugify;

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
    inner: Vec<Event<'e>>,
    text: String,
}

/// Renders `body` to HTML with heading ids, self-links, highlighted code and
/// resolved internal links.
pub fn render(body: &str, ctx: &RenderContext<'_>) -> RenderedMarkdown {
    let mut out = RenderedMarkdown::default();
    let mut ids = HeadingIds::default();
    let mut events: Vec<Event<'_>> = Vec::new();
    let locate = |offset: usize| ctx.lines.line_col(ctx.body_offset + offset);

    // Set while inside a heading or a code block.
    let mut heading: Option<OpenHeading<'_>> = None;
    let mut code: Option<(String, String, usize)> = None;

    for (event, range) in Parser::new_ext(body, options()).into_offset_iter() {
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
                    escape_into(lang_attr, &mut html);
                    html.push_str("\">");
                    html.push_str(&highlighted.html);
                    html.push_str("</div>\n");
                    events.push(Event::Html(html.into()));
                }
                _ => {}
            }
            continue;
        }
        let event = match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split([' ', ',', '{'])
                        .next()
                        .unwrap_or("")
                        .trim()
                        .to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((lang, String::new(), range.start));
                continue;
            }
            Event::Start(Tag::Heading {
                level, id, classes, ..
            }) => {
                heading = Some(OpenHeading {
                    at: locate(range.start),
                    level,
                    id: id.map(|i| i.to_string()),
                    classes: classes.iter().map(|c| c.to_string()).collect(),
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
                    inner,
                    text,
                } = heading.take().expect("inside a heading");
                let id = ids.unique(&id.unwrap_or_else(|| slugify(&text)));
                let n = level as u8;
                let mut open = format!("<h{n} id=\"");
                escape_into(&id, &mut open);
                open.push('"');
                if !classes.is_empty() {
                    open.push_str(" class=\"");
                    escape_into(&classes.join(" "), &mut open);
                    open.push('"');
                }
                open.push('>');
                events.push(Event::Html(open.into()));
                events.extend(inner);
                let mut close = String::from(" <a class=\"anchor\" href=\"#");
                escape_into(&id, &mut close);
                close.push_str("\" aria-label=\"Link to this section\">#</a>");
                close.push_str(&format!("</h{n}>\n"));
                events.push(Event::Html(close.into()));
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
            Event::Html(ref raw) | Event::InlineHtml(ref raw) => {
                for (at, scheme) in script_attributes(raw) {
                    let (line, col) = locate(range.start + at);
                    out.diagnostics.push(Diagnostic::error(
                        ctx.path,
                        line,
                        col,
                        format!("`{scheme}` URLs are not allowed in raw HTML"),
                    ));
                }
                event
            }
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
    pulldown_cmark::html::push_html(&mut out.html, events.into_iter());
    out
}

/// Rejects script URLs and resolves links to this site's pages; other
/// links pass unchanged.
fn check_link<'e>(
    dest: CowStr<'e>,
    offset: usize,
    ctx: &RenderContext<'_>,
    out: &mut RenderedMarkdown,
) -> CowStr<'e> {
    let (line, col) = ctx.lines.line_col(ctx.body_offset + offset);
    if is_script_url(&dest) {
        out.diagnostics.push(Diagnostic::error(
            ctx.path,
            line,
            col,
            format!("`{}` links are not allowed", scheme(&dest)),
        ));
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

fn scheme(url: &str) -> String {
    url.split(':')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// Offsets (in `html`) and schemes of `href`, `src`, `action` and
/// `formaction` attributes in raw HTML whose value is a script URL.
fn script_attributes(html: &str) -> Vec<(usize, String)> {
    let lower = html.to_ascii_lowercase();
    let mut found = Vec::new();
    for name in ["href", "src", "action"] {
        let mut from = 0;
        while let Some(i) = lower[from..].find(name) {
            let at = from + i;
            from = at + name.len();
            let boundary = lower[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_whitespace());
            let rest = lower[from..].trim_start();
            let Some(value) = rest.strip_prefix('=') else {
                continue;
            };
            let value = value.trim_start().trim_start_matches(['"', '\'']);
            if boundary && is_script_url(value) {
                found.push((at, scheme(value)));
            }
        }
    }
    found.sort();
    found
}

/// True for `javascript:`, `vbscript:` and `data:` URLs, however they are
/// cased or padded with whitespace and control characters (as browsers
/// ignore those).
pub fn is_script_url(url: &str) -> bool {
    let cleaned: String = url
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && !c.is_ascii_control())
        .take(16)
        .collect::<String>()
        .to_ascii_lowercase();
    ["javascript:", "vbscript:", "data:"]
        .iter()
        .any(|s| cleaned.starts_with(s))
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
            "para\n\n<div><a title=x HREF = 'javascript:x'>a</a></div>\n\ntext <img src=\"data:x\"> and <a href=\"/ok\">ok</a>\n",
        );
        let at: Vec<_> = out
            .diagnostics
            .iter()
            .map(|d| (d.line, d.col, d.message.as_str()))
            .collect();
        assert_eq!(
            at,
            [
                (3, 17, "`javascript` URLs are not allowed in raw HTML"),
                (5, 11, "`data` URLs are not allowed in raw HTML")
            ]
        );
    }

    #[test]
    fn internal_links_resolve_or_fail_where_written() {
        let out = render_str("[OOM](@/oom/cuda-out-of-memory.md) and\n[gone](@/nope.md)\n");
        assert!(out.html.contains("href=\"/oom/cuda-out-of-memory/\""));
        assert_eq!(out.diagnostics.len(), 1);
        assert_eq!((out.diagnostics[0].line, out.diagnostics[0].col), (2, 1));
    }
}
