//! The match index: each page's URL, title, signature, patterns and priority,
//! for `errata match` and the site's "Paste your error or search" box
//! (written as `/match-index.json`). Patterns are compiled here, with the
//! matcher's own engine, so a pattern that does not compile fails the build
//! at its line and column.

use std::collections::HashSet;
use std::sync::Mutex;

use rayon::prelude::*;

use crate::assemble::SiteIndex;
use crate::config::Config;
use crate::diagnostics::Diagnostic;

/// The file the build writes, relative to the output folder.
pub const FILE: &str = crate::local_links::MATCH_INDEX_FILE;

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

/// Patterns known to compile (by [`crate::hash::content_hash`]), kept
/// between the builds of one process: `errata serve` checks the same
/// patterns after every edit.
pub type KnownPatterns = Mutex<HashSet<u128>>;

/// Every pattern that does not compile, at its line and column in the
/// page's front matter. Patterns in `known` are not compiled again, and
/// those that compile are added to it.
pub fn check_patterns(site: &SiteIndex, known: Option<&KnownPatterns>) -> Vec<Diagnostic> {
    let guard = known.map(|k| k.lock().unwrap_or_else(|e| e.into_inner()));
    let before = guard.as_deref();
    let found: Vec<(Vec<Diagnostic>, Vec<u128>)> = site
        .pages
        .par_iter()
        .map(|page| {
            let (mut bad, mut valid) = (Vec::new(), Vec::new());
            for (i, pattern) in page.parsed.front.patterns.iter().enumerate() {
                let hash = crate::hash::content_hash(pattern.as_bytes());
                if before.is_some_and(|b| b.contains(&hash)) {
                    continue;
                }
                let Err(message) = matcher::validate(pattern) else {
                    valid.push(hash);
                    continue;
                };
                let (line, col) = page
                    .parsed
                    .value_at(&format!("patterns[{i}]"))
                    .unwrap_or((1, 1));
                bad.push(Diagnostic::error(
                    &page.parsed.source.path,
                    line,
                    col,
                    format!("pattern does not compile: {message}"),
                ));
            }
            (bad, valid)
        })
        .collect();
    let mut known = guard;
    let mut out = Vec::new();
    for (bad, valid) in found {
        out.extend(bad);
        if let Some(known) = known.as_mut() {
            known.extend(valid);
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
