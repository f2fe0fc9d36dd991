//! Where the outbound links of a site are written: the links a reader can
//! follow, never text that merely looks like a URL.
//!
//! - Markdown link and image targets (inline, reference, autolinks);
//! - `href` on `<a>` and `<area>`, and `src` on any element, in the raw
//!   HTML of Markdown bodies and in templates (when written literally);
//! - the front matter's `sponsored` URLs.
//!
//! Code blocks, inline code, HTML comments and the insides of `<script>`
//! and `<style>` are never looked into.

use std::path::Path;

use crate::config::Config;
use crate::diagnostics::LineIndex;
use crate::front_matter::{self, PageFrontMatter};
use crate::links;
use crate::markdown::raw_html::{self, HtmlTag};
use crate::markdown::{BodyLink, body_links};

use super::UrlSite;

/// Every outbound `http(s)` link of the site, where it is written. Drafts
/// count only with `drafts`.
pub fn find_urls(config: &Config, drafts: bool) -> Vec<UrlSite> {
    let mut sites = Vec::new();
    for (_, path) in crate::load::files_under(&config.root.join("content")) {
        if path.extension().is_some_and(|e| e == "md")
            && let Ok(text) = std::fs::read_to_string(&path)
        {
            let rel = crate::load::relative(&config.root, &path);
            sites.extend(content_urls(&rel, &text, drafts));
        }
    }
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
                    push(&mut sites, &rel, &lines, offset, &url);
                }
            }
        }
    }
    sites
}

/// The outbound links of one content file (`rel` is its path for reports).
pub fn content_urls(rel: &Path, text: &str, drafts: bool) -> Vec<UrlSite> {
    let mut sites = Vec::new();
    let lines = LineIndex::new(text);
    let Ok(split) = front_matter::split(text) else {
        return sites;
    };
    let is_section = rel.file_name().is_some_and(|n| n == "_index.md");
    if !is_section && let Ok(page) = front_matter::parse::<PageFrontMatter>(&split) {
        if page.draft && !drafts {
            return sites;
        }
        let spans = front_matter::Spans::of(split.yaml, split.yaml_offset);
        for (i, link) in page.sponsored.iter().enumerate() {
            let at = spans.value(&format!("sponsored[{i}].url"));
            push(
                &mut sites,
                rel,
                &lines,
                at.unwrap_or(split.yaml_offset),
                &link.url.0,
            );
        }
    }
    for link in body_links(split.body) {
        match link {
            BodyLink::Target(at, url) => {
                push(&mut sites, rel, &lines, split.body_offset + at, &url);
            }
            BodyLink::Html(at, html) => {
                for (inner, url) in html_links(&html) {
                    push(
                        &mut sites,
                        rel,
                        &lines,
                        split.body_offset + at + inner,
                        &url,
                    );
                }
            }
        }
    }
    sites
}

fn push(sites: &mut Vec<UrlSite>, rel: &Path, lines: &LineIndex<'_>, offset: usize, url: &str) {
    let url = url.trim();
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        let (line, col) = lines.line_col(offset);
        sites.push(UrlSite {
            url: url.to_string(),
            path: rel.to_path_buf(),
            line,
            col,
        });
    }
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
            // The value is a slice of `html`: its offset is where it starts.
            let offset = a.value.as_ptr() as usize - html.as_ptr() as usize;
            out.push((offset, links::decode_attribute(a.value).into_owned()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(text: &str) -> Vec<(String, usize, usize)> {
        content_urls(Path::new("content/a.md"), text, false)
            .into_iter()
            .map(|s| (s.url, s.line, s.col))
            .collect()
    }

    #[test]
    fn only_followable_links_are_found() {
        let text = "---\ntitle: t\nsignature: s\nsponsored:\n  - { label: L, url: \"https://shop.example/x?tag=me-20\" }\n---\n\
[a](https://a.example/p) and <https://b.example/>\n\n\
```console\n$ curl -X POST http://127.0.0.1:8000/admin/delete-all?confirm=yes\n```\n\n\
Inline `http://localhost:11434/api` and bare https://bare.example/ text.\n\n\
<p>Raw <a class=x href=\"https://c.example/q?a=1&amp;b=2\">c</a> <img src='https://d.example/i.png'>\n\
<link href=\"https://e.example/style.css\"><!-- <a href=\"https://f.example/\"> --></p>\n\n\
    http://indented.example/code\n";
        assert_eq!(
            urls(text),
            [
                ("https://shop.example/x?tag=me-20".to_string(), 5, 22),
                ("https://a.example/p".to_string(), 7, 5),
                ("https://b.example/".to_string(), 7, 31),
                ("https://c.example/q?a=1&b=2".to_string(), 15, 25),
                ("https://d.example/i.png".to_string(), 15, 74),
            ]
        );
    }

    #[test]
    fn drafts_count_only_when_asked() {
        let text = "---\ntitle: t\nsignature: s\ndraft: true\n---\n[a](https://a.example/)\n";
        assert!(urls(text).is_empty());
        assert_eq!(content_urls(Path::new("content/a.md"), text, true).len(), 1);
    }

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
}
