//! Outbound links: each `http(s)` link a reader can follow, where it is
//! written, for `errata check` (affiliate ids, and `--external`).
//!
//! They come from what the pipeline already has, never from reading the
//! content again:
//! - Markdown link and image targets, and `href` on `<a>`/`<area>` and
//!   `src` on any element of raw HTML that the page keeps, are collected
//!   while the body renders ([`crate::markdown::RenderedMarkdown`]);
//! - the front matter's `sponsored` URLs, from the parsed pages, located
//!   by their YAML spans;
//! - `href`/`src` written literally in templates, from the template files.
//!
//! Code blocks, inline code, HTML comments and the insides of `<script>`
//! and `<style>` are never looked into.

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::diagnostics::LineIndex;
use crate::links;
use crate::markdown::raw_html::{self, HtmlTag};
use crate::parse::ParsedPage;

/// Where an outbound URL is written.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct UrlSite {
    /// The file, relative to the site root.
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// The URL as a browser reads it (entities decoded).
    pub url: String,
}

pub use crate::links::is_outbound;

/// The `sponsored` URLs of `page`, each at its value in the front matter.
pub fn sponsored(page: &ParsedPage) -> Vec<UrlSite> {
    if page.front.sponsored.is_empty() {
        return Vec::new();
    }
    let spans = page.spans();
    let text = page.source.text();
    let lines = LineIndex::new(&text);
    page.front
        .sponsored
        .iter()
        .enumerate()
        .map(|(i, link)| {
            let at = spans.value(&format!("sponsored[{i}].url")).unwrap_or(0);
            let (line, col) = lines.line_col(at);
            UrlSite {
                path: page.source.path.clone(),
                line,
                col,
                url: link.url.0.trim().to_string(),
            }
        })
        .collect()
}

/// The outbound links written literally in the site's and the theme's
/// templates.
pub fn in_templates(config: &Config) -> Vec<UrlSite> {
    let mut sites = Vec::new();
    let mut template_dirs = vec![
        config.root.join("templates"),
        config.theme_dir.join("templates"),
    ];
    template_dirs.dedup();
    for dir in template_dirs {
        for (_, path) in crate::load::files_under(&dir) {
            if let Ok(text) = std::fs::read_to_string(&path) {
                let rel = crate::load::relative(&config.root, &path);
                let lines = LineIndex::new(&text);
                for (offset, url) in html_links(&text) {
                    if is_outbound(&url) {
                        let (line, col) = lines.line_col(offset);
                        sites.push(UrlSite {
                            path: rel.clone(),
                            line,
                            col,
                            url: url.trim().to_string(),
                        });
                    }
                }
            }
        }
    }
    sites
}

/// The sites whose URL leaves the site, as a browser resolves it against
/// the base URL ([`crate::links::outbound_url`]), each with that URL:
/// `//host/x` is `https://host/x`, and `http:host/x` under an `https` site
/// goes to `host`.
pub fn resolved(config: &Config, mut sites: Vec<UrlSite>) -> Vec<UrlSite> {
    sites.retain_mut(
        |site| match links::outbound_url(&config.base_url, &site.url) {
            Some(url) => {
                site.url = url;
                true
            }
            None => false,
        },
    );
    sites
}

/// `sites` in file order, each written place once.
pub fn sorted(mut sites: Vec<UrlSite>) -> Vec<UrlSite> {
    sites.sort();
    sites.dedup();
    sites
}

/// Keeps the sites in files under `keep` (`--changed-since`).
pub fn only_in(sites: &mut Vec<UrlSite>, keep: &std::collections::HashSet<PathBuf>) {
    sites.retain(|s| keep.contains(Path::new(&s.path)));
}

/// `href` of `<a>`/`<area>` and `src` of any element in `html`, with the
/// byte offset of each value, entity-decoded as the link policy decodes it.
/// Tags are read by the same tokenizer that checks raw HTML in content.
/// Values holding template syntax are skipped.
pub fn html_links(html: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for tag in raw_html::tags(html) {
        let HtmlTag::Start {
            name, attributes, ..
        } = tag
        else {
            continue;
        };
        for a in attributes {
            let followable =
                (a.name == "href" && matches!(name.as_str(), "a" | "area")) || a.name == "src";
            if !followable || a.value.contains("{{") || a.value.contains("{%") {
                continue;
            }
            let offset = a.value_at(html);
            out.push((offset, links::decode_attribute(a.value).into_owned()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_give_literal_links_only() {
        let html = "<a href=\"{{ page.url }}\">x</a><a href=\"https://x.example/\">y</a>\
<script>var s = '<a href=\"https://in-script.example/\">';</script><iframe src=https://v.example/e></iframe>";
        let found: Vec<String> = html_links(html).into_iter().map(|(_, u)| u).collect();
        assert_eq!(found, ["https://x.example/", "https://v.example/e"]);
    }

    #[test]
    fn entities_are_decoded_as_the_link_policy_decodes_them() {
        let html = "<a href=\"https://a.example/?x=1&amp;y=2&#61;&colon;&bogus;&\">a</a>";
        assert_eq!(
            html_links(html),
            [(9, "https://a.example/?x=1&y=2=:&bogus;&".to_string())]
        );
    }

    #[test]
    fn sponsored_urls_are_located_at_their_values() {
        let text = "---\ntitle: t\nsignature: s\nsponsored:\n  - { label: L, url: \"https://shop.example/x?tag=me-20\" }\n  - label: M\n    url: https://m.example/\n---\nBody\n";
        let file = crate::load::SourceFile::new(
            "content/a.md".into(),
            "a.md".into(),
            crate::load::SourceKind::Page,
            text.into(),
        );
        let parsed = crate::parse::parse(vec![file], false);
        let found: Vec<(usize, usize, String)> = sponsored(&parsed.pages[0])
            .into_iter()
            .map(|s| (s.line, s.col, s.url))
            .collect();
        assert_eq!(
            found,
            [
                (5, 22, "https://shop.example/x?tag=me-20".to_string()),
                (7, 10, "https://m.example/".to_string()),
            ]
        );
    }
}
