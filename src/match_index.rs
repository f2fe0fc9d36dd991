//! The match index: each page's URL, title, signature, patterns and priority,
//! for `errata match` and the site's "Paste your error or search" box
//! (written as `/match-index.json`). Patterns are compiled here, with the
//! matcher's own engine, so a pattern that does not compile fails the build
//! at its line and column.

use crate::assemble::SiteIndex;
use crate::config::Config;
use crate::diagnostics::Diagnostic;

/// The file the build writes, relative to the output folder.
pub const FILE: &str = "match-index.json";

/// Builds the index. `url` turns a page's site path into the URL to record
/// (root-relative for the site, absolute for `errata match`).
pub fn index(site: &SiteIndex, url: impl Fn(&str) -> String) -> matcher::Index {
    let mut pages: Vec<matcher::Page> = site
        .pages
        .iter()
        .map(|page| {
            let front = &page.parsed.front;
            matcher::Page {
                url: url(&page.path),
                title: front.title.clone(),
                signature: front.signature.clone(),
                source: format!("content/{}", page.parsed.source.rel),
                patterns: front.patterns.clone(),
                priority: front.priority,
            }
        })
        .collect();
    pages.sort_by(|a, b| a.source.cmp(&b.source));
    matcher::Index {
        version: matcher::INDEX_VERSION,
        pages,
    }
}

/// Every pattern that does not compile, at its line and column in the
/// page's front matter.
pub fn check_patterns(site: &SiteIndex) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for page in &site.pages {
        let file = &page.parsed.source;
        for (i, pattern) in page.parsed.front.patterns.iter().enumerate() {
            let Err(message) = matcher::validate(pattern) else {
                continue;
            };
            let (line, col) = page
                .parsed
                .value_at(&format!("patterns[{i}]"))
                .unwrap_or((1, 1));
            out.push(Diagnostic::error(
                &file.path,
                line,
                col,
                format!("pattern does not compile: {message}"),
            ));
        }
    }
    out
}

/// The index as the site serves it: root-relative URLs, compact JSON.
pub fn site_json(config: &Config, site: &SiteIndex) -> String {
    let base = config.base_path().to_string();
    let index = index(site, |path| format!("{base}{path}"));
    serde_json::to_string(&index).expect("the match index serialises")
}

#[cfg(test)]
mod tests {
    #[test]
    fn links_from_content_to_the_index_are_known() {
        assert!(crate::local_links::GENERATED_FILES.contains(&super::FILE));
    }
}
