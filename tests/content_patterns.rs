//! The default site's `patterns` against real logs: every log listed in
//! `tests/logs/SOURCES.md` is matched by a pattern of the page it names, the
//! `no-match/` logs by no page at all, and every triage page has a log.

use std::collections::BTreeMap;
use std::path::Path;

use errata::front_matter::{self, PageFrontMatter};
use regex::Regex;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// Every triage page of the default site: its path under `content/` without
/// `.md`, and its compiled patterns.
fn pages() -> BTreeMap<String, Vec<Regex>> {
    let mut out = BTreeMap::new();
    let content = Path::new(REPO).join("content");
    for section in std::fs::read_dir(&content).unwrap() {
        let section = section.unwrap().path();
        if !section.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&section).unwrap() {
            let file = file.unwrap().path();
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            if name == "_index.md" || !name.ends_with(".md") {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            let split = front_matter::split(&text).unwrap();
            let front: PageFrontMatter = front_matter::parse(&split).unwrap();
            let patterns = front
                .patterns
                .iter()
                .map(|p| Regex::new(p).unwrap_or_else(|e| panic!("{}: {e}", file.display())))
                .collect();
            let key = format!(
                "{}/{}",
                section.file_name().unwrap().to_string_lossy(),
                name.trim_end_matches(".md")
            );
            out.insert(key, patterns);
        }
    }
    out
}

/// `(log file, page it must match)` rows of the SOURCES.md table; the page is
/// `None` for logs that must match nothing.
fn sources() -> Vec<(String, Option<String>)> {
    let text = std::fs::read_to_string(Path::new(REPO).join("tests/logs/SOURCES.md")).unwrap();
    text.lines()
        .filter(|l| l.starts_with("| ") && l.contains(".log |"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let page = cells[2];
            let page = (!page.starts_with("nothing")).then(|| page.to_string());
            (cells[1].to_string(), page)
        })
        .collect()
}

fn matching<'p>(pages: &'p BTreeMap<String, Vec<Regex>>, log: &str) -> Vec<&'p str> {
    pages
        .iter()
        .filter(|(_, patterns)| patterns.iter().any(|p| p.is_match(log)))
        .map(|(page, _)| page.as_str())
        .collect()
}

#[test]
fn every_real_log_matches_its_page() {
    let pages = pages();
    let rows = sources();
    assert!(
        rows.len() >= pages.len() + 3,
        "too few logs: {}",
        rows.len()
    );
    let mut failures = Vec::new();
    for (file, page) in &rows {
        let log = std::fs::read_to_string(Path::new(REPO).join("tests/logs").join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let found = matching(&pages, &log);
        match page {
            Some(page) => {
                if !pages.contains_key(page) {
                    failures.push(format!("{file}: no page {page}"));
                } else if !found.contains(&page.as_str()) {
                    failures.push(format!("{file}: {page} does not match (matched {found:?})"));
                }
            }
            None if !found.is_empty() => {
                failures.push(format!("{file}: must match nothing, matched {found:?}"))
            }
            None => {}
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn every_page_has_a_real_log_and_every_log_is_listed() {
    let pages = pages();
    let rows = sources();
    for page in pages.keys() {
        assert!(
            rows.iter()
                .any(|(_, p)| p.as_deref() == Some(page.as_str())),
            "{page} has no log in tests/logs/SOURCES.md"
        );
    }
    let listed: Vec<&str> = rows.iter().map(|(f, _)| f.as_str()).collect();
    for dir in std::fs::read_dir(Path::new(REPO).join("tests/logs")).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for log in std::fs::read_dir(&dir).unwrap() {
            let log = log.unwrap().path();
            let rel = log
                .strip_prefix(Path::new(REPO).join("tests/logs"))
                .unwrap()
                .to_string_lossy()
                .into_owned();
            assert!(listed.contains(&rel.as_str()), "{rel} is not in SOURCES.md");
        }
    }
}

#[test]
fn numbers_in_messages_are_named_captures() {
    // The message's figures reach the matcher by name: a pattern that matches
    // a digit must do it inside a named group.
    for (page, patterns) in pages() {
        for p in &patterns {
            let unnamed_digits =
                p.as_str().contains(r"\d") && p.capture_names().flatten().count() == 0;
            let seed = page == "oom/cuda-out-of-memory";
            assert!(
                seed || !unnamed_digits,
                "{page}: `{}` captures no number by name",
                p.as_str()
            );
        }
    }
}
