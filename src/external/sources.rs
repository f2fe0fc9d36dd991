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
        for link in &page.sponsored {
            let url = &link.url.0;
            let at = split.yaml.find(url.as_str()).unwrap_or(0);
            push(&mut sites, rel, &lines, split.yaml_offset + at, url);
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
/// byte offset of each value. Values holding template syntax are skipped.
pub fn html_links(html: &str) -> Vec<(usize, String)> {
    tag_attributes(html)
        .into_iter()
        .filter(|a| (a.name == "href" && matches!(a.tag.as_str(), "a" | "area")) || a.name == "src")
        .filter(|a| !a.value.contains("{{") && !a.value.contains("{%"))
        .map(|a| (a.offset, decode_entities(&a.value)))
        .collect()
}

/// One attribute of one start tag.
#[derive(Debug, PartialEq, Eq)]
struct Attribute {
    /// The element's name, lowercase.
    tag: String,
    /// The attribute's name, lowercase.
    name: String,
    /// The value as written (entities not decoded).
    value: String,
    /// Byte offset of the value (or of the name, for a bare attribute).
    offset: usize,
}

/// The attributes of every start tag in `html`, skipping comments,
/// doctypes and the text of raw-text elements.
fn tag_attributes(html: &str) -> Vec<Attribute> {
    let bytes = html.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(found) = html[i..].find('<') {
        i += found;
        let rest = &html[i..];
        if rest.starts_with("<!--") {
            i += rest.find("-->").map_or(rest.len(), |end| end + 3);
            continue;
        }
        if !bytes.get(i + 1).is_some_and(u8::is_ascii_alphabetic) {
            i += 1;
            continue;
        }
        let name_end = rest[1..]
            .find(|c: char| c.is_ascii_whitespace() || c == '/' || c == '>')
            .map_or(rest.len(), |n| n + 1);
        let tag = rest[1..name_end].to_ascii_lowercase();
        let mut j = i + name_end;
        // Attributes until the end of the tag.
        loop {
            while j < bytes.len() && (bytes[j].is_ascii_whitespace() || bytes[j] == b'/') {
                j += 1;
            }
            if j >= bytes.len() || bytes[j] == b'>' {
                j += 1;
                break;
            }
            let name_start = j;
            while j < bytes.len()
                && !bytes[j].is_ascii_whitespace()
                && !matches!(bytes[j], b'=' | b'>' | b'/')
            {
                j += 1;
            }
            let name = html[name_start..j].to_ascii_lowercase();
            let mut k = j;
            while k < bytes.len() && bytes[k].is_ascii_whitespace() {
                k += 1;
            }
            if bytes.get(k) != Some(&b'=') {
                if j == name_start {
                    j += 1;
                }
                continue;
            }
            k += 1;
            while k < bytes.len() && bytes[k].is_ascii_whitespace() {
                k += 1;
            }
            let (start, end, next) = match bytes.get(k) {
                Some(&q @ (b'"' | b'\'')) => {
                    let end = html[k + 1..]
                        .find(q as char)
                        .map_or(bytes.len(), |e| k + 1 + e);
                    (k + 1, end, (end + 1).min(bytes.len()))
                }
                _ => {
                    let end = html[k..]
                        .find(|c: char| c.is_ascii_whitespace() || c == '>')
                        .map_or(bytes.len(), |e| k + e);
                    (k, end, end)
                }
            };
            out.push(Attribute {
                tag: tag.clone(),
                name,
                value: html[start..end].to_string(),
                offset: start,
            });
            j = next;
        }
        i = j.min(bytes.len());
        if matches!(tag.as_str(), "script" | "style" | "textarea" | "title") {
            let close = format!("</{tag}");
            let lower = html[i..].to_ascii_lowercase();
            i += lower.find(&close).unwrap_or(lower.len());
        }
    }
    out
}

/// Decodes the character references that occur in URLs (`&amp;`, `&quot;`,
/// `&apos;`, `&lt;`, `&gt;`, and numeric ones); others stay as written.
fn decode_entities(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let Some(end) = rest[..rest.len().min(12)].find(';') else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let name = &rest[1..end];
        let decoded = match name {
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "lt" => Some('<'),
            "gt" => Some('>'),
            _ => name
                .strip_prefix("#x")
                .or_else(|| name.strip_prefix("#X"))
                .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
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
                ("https://shop.example/x?tag=me-20".to_string(), 5, 23),
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
    fn entities_are_decoded() {
        assert_eq!(
            decode_entities("a&amp;b&#61;c&#x3D;d&bogus;"),
            "a&b=c=d&bogus;"
        );
        assert_eq!(decode_entities("&"), "&");
    }
}
