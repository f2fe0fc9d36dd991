//! Checks on what an author wrote: raw HTML, link targets and fence info
//! strings, each reported at its place in the body.

use super::*;

/// The offset of a fence's info string, from the offset of the fence.
pub(super) fn info_offset(body: &str, fence: usize) -> usize {
    let line = &body[fence..];
    let skipped = line.len() - line.trim_start_matches([' ', '`', '~']).len();
    let rest = &line[skipped..];
    fence + skipped + (rest.len() - rest.trim_start_matches([' ', '\t']).len())
}

/// Checks raw HTML and reports its problems; returns it without its bad
/// URL attributes.
pub(super) fn raw_event(
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
    // `src` and `href` of raw HTML that stays must name what the build
    // publishes, as Markdown links and images must (the HTML is not
    // rewritten: only a missing target is reported).
    for tag in raw_html::tags(&block.text) {
        let raw_html::HtmlTag::Start {
            name, attributes, ..
        } = tag
        else {
            continue;
        };
        if ctx.sanitise && !sanitize::keeps_tag(&name) {
            continue;
        }
        for attribute in &attributes {
            if !matches!(attribute.name.as_str(), "src" | "href") {
                continue;
            }
            let value = links::decode_attribute(attribute.value);
            let followable = attribute.name == "src" || matches!(name.as_str(), "a" | "area");
            if followable && links::is_outbound(&value) {
                let at = ctx.body_offset + block.source(attribute.value_at(&block.text));
                let (line, col) = ctx.lines.line_col(at);
                out.outbound.push((line, col, value.trim().to_string()));
            }
            // A URL that is not allowed is reported above.
            if links::check_url(&value).is_err() {
                continue;
            }
            if let Err(message) = (ctx.resolve)(value.trim()) {
                let at = ctx.body_offset + block.source(attribute.at);
                let (line, col) = ctx.lines.line_col(at);
                out.diagnostics
                    .push(Diagnostic::error(ctx.path, line, col, message));
            }
        }
    }
    kept.unwrap_or(block.text)
}

/// Checks one piece of raw HTML: every URL attribute
/// must carry an allowed URL once entity-decoded (an error otherwise);
/// when `sanitise` is on, what the sanitiser will drop is a warning.
/// Returns the HTML without its bad URL attributes, if it had any, so that
/// they reach no later stage even when the site does not sanitise.
pub(super) fn check_raw_html(
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
        // URLs carried outside the URL attributes (a refresh, an animation).
        let value_of = |wanted: &str| {
            attributes
                .iter()
                .find(|a| a.name == wanted)
                .map(|a| links::decode_attribute(a.value).into_owned())
        };
        for (carrier, url) in links::carried_urls(&name, &value_of) {
            let (Err(scheme), Some(a)) = (
                links::check_url(&url),
                attributes.iter().find(|a| a.name == carrier),
            ) else {
                continue;
            };
            report(
                a.at,
                format!(
                    "`{scheme}:` URLs are not allowed in raw HTML (`{carrier}` of `<{name}>`); use http(s), mailto, relative or #fragment URLs"
                ),
                true,
            );
            bad.push((a.at, a.end));
        }
    }
    if bad.is_empty() {
        return None;
    }
    bad.sort_unstable();
    bad.dedup();
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
pub(super) fn check_link<'e>(
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
