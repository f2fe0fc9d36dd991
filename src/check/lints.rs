//! Front-matter lints over the parsed pages: a missing description, and
//! `patterns` that do not match the page's own `signature`. (A pattern
//! that does not compile is a build error, see
//! [`crate::match_index::check_patterns`].)

use crate::assemble::SiteIndex;
use crate::diagnostics::Diagnostic;

/// Every lint on every page of `site`.
pub(super) fn front_matter(site: &SiteIndex) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for page in &site.pages {
        let parsed = &page.parsed;
        let front = &parsed.front;
        let path = &parsed.source.path;
        let at_key = |key: &str| parsed.key_at(key).unwrap_or((1, 1));
        if front
            .description
            .as_deref()
            .is_none_or(|d| d.trim().is_empty())
        {
            let (line, col) = if front.description.is_some() {
                at_key("description")
            } else {
                (1, 1)
            };
            out.push(
                Diagnostic::warning(
                    path,
                    line,
                    col,
                    "no description: search engines will make up a snippet",
                )
                .with_help("add `description:` with one sentence of under 160 characters"),
            );
        }
        let any_matches = front
            .patterns
            .iter()
            .filter_map(|p| matcher::compile(p).ok())
            .any(|re| re.is_match(&front.signature));
        if !front.patterns.is_empty() && !any_matches {
            let (line, col) = at_key("patterns");
            out.push(
                Diagnostic::warning(
                    path,
                    line,
                    col,
                    "none of the page's `patterns` matches its own `signature`",
                )
                .with_help("a log line with this error would not find this page"),
            );
        }
    }
    out
}
