//! Matches logs against triage pages: which pages explain the errors in this
//! log, root cause first?
//!
//! The same code runs natively (`errata match`) and as WebAssembly in the
//! site's "Paste your error or search" box, with one regex engine (the
//! `regex` crate), so a pattern means the same thing everywhere.
//!
//! 1. **Normalise** each line ([`normalise`]): carriage-return redraws,
//!    ANSI escapes, and launcher and collector prefixes are removed.
//! 2. **Match patterns**: every page's `patterns` over every line, in one
//!    pass: a [`prefilter`] finds, with one automaton over the text every
//!    pattern requires, which patterns can match the line; only those run,
//!    for their named captures. Each page keeps one hit: the log line
//!    number, the line and the captures.
//! 3. **Fuzzy fallback** ([`fuzzy`]): when no pattern matched anywhere, each
//!    page's `signature` is compared with the log's error-looking lines.
//! 4. **Rank** (see [`rank`]): `priority` first, then root-cause context,
//!    then log order.
//!
//! A log streams through [`Matcher::feed`] in chunks of any size, in memory
//! bounded by the number of pages and [`MAX_LINE`], whatever its length.

use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

pub mod fuzzy;
pub mod normalise;
pub mod prefilter;
mod scan;

pub use fuzzy::FUZZY_THRESHOLD;
pub use scan::{MAX_LINE, Scan, rank};

#[cfg(target_arch = "wasm32")]
mod wasm;

/// Version of the match index format.
pub const INDEX_VERSION: u32 = 1;

/// The match index: what the site's box and `errata match` know of each page.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Index {
    /// [`INDEX_VERSION`].
    pub version: u32,
    /// Pages, in a stable order.
    pub pages: Vec<Page>,
}

/// One triage page, as the matcher sees it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Page {
    /// Where the page is (absolute, or relative to the site root).
    pub url: String,
    /// Its title.
    pub title: String,
    /// The error message as users see it.
    pub signature: String,
    /// The page's Markdown file, relative to the site root.
    pub source: String,
    /// Regular expressions (the `regex` crate's syntax) that recognise the error.
    #[serde(default)]
    pub patterns: Vec<String>,
    /// Rank among pages matching one log: higher first (default 0).
    #[serde(default)]
    pub priority: i32,
}

/// How a page matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// One of its patterns matched a line.
    Pattern,
    /// Its signature resembled an error line (no pattern matched anywhere).
    Fuzzy,
}

/// A page that matched a log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Match {
    /// The page's URL.
    pub url: String,
    /// Its title.
    pub title: String,
    /// Its signature.
    pub signature: String,
    /// Its Markdown file.
    pub source: String,
    /// The log line number (1-based; counted per input).
    pub line: u64,
    /// The line, normalised (at most [`MAX_TEXT`] bytes).
    pub text: String,
    /// The pattern's named captures that took part in the match.
    pub captures: Captures,
    /// Pattern or fuzzy.
    pub kind: Kind,
    /// 1 for a pattern; the similarity for a fuzzy match.
    pub score: f64,
    /// The log's name, when the caller matched several (the matcher leaves
    /// it empty; `errata match` names the file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// Which input it came from (0 for the first), when several were scanned.
    #[serde(skip)]
    pub input: usize,
    /// The page's priority.
    #[serde(skip)]
    pub priority: i32,
    /// Where the line sits: a root-cause hint, neutral, or a consequence.
    #[serde(skip)]
    pub context: scan::Context,
}

/// Named captures in the pattern's order; a JSON object in that order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Captures(pub Vec<(String, String)>);

impl Captures {
    /// The value captured by `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether nothing was captured.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Captures {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Captures {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Captures;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of capture names to strings")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Captures, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    out.push(entry);
                }
                Ok(Captures(out))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

/// Longest matched line kept in a [`Match`], in bytes.
pub const MAX_TEXT: usize = 1000;

/// A pattern that does not compile.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternError {
    /// Index of the page in the index.
    pub page: usize,
    /// The pattern.
    pub pattern: String,
    /// The regex crate's message, last line only.
    pub message: String,
}

/// Compiles one pattern the way the matcher does (the regex crate, default
/// flags), returning the compile error's last line on failure.
pub fn compile(pattern: &str) -> Result<Regex, String> {
    regex::RegexBuilder::new(pattern)
        .size_limit(SIZE_LIMIT)
        .build()
        .map_err(|e| last_line(&e.to_string()))
}

/// Checks that `pattern` is a valid pattern for the matcher (the regex
/// crate's syntax, default flags), every error [`compile`] reports, at a
/// fraction of the cost: a pattern is compiled here only when counted
/// repetitions could make it large (`\w{2000}`), to check the
/// compiled-size limit; otherwise it is only parsed. The matcher compiles
/// a pattern only when a line may match it, so one over the limit would
/// silently never match.
pub fn validate(pattern: &str) -> Result<(), String> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .map_err(|e| last_line(&e.to_string()))?;
    if repeated(&hir) > 64 {
        compile(pattern)?;
    }
    Ok(())
}

/// How many copies of its largest part a pattern's counted repetitions
/// make, at most (nested ones multiply): `a{3}(b{2}){10}` is 20.
fn repeated(hir: &regex_syntax::hir::Hir) -> u64 {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Repetition(rep) => {
            let count = u64::from(rep.max.unwrap_or(rep.min).max(1));
            count.saturating_mul(repeated(&rep.sub))
        }
        HirKind::Capture(capture) => repeated(&capture.sub),
        HirKind::Concat(parts) | HirKind::Alternation(parts) => {
            parts.iter().map(repeated).max().unwrap_or(1)
        }
        _ => 1,
    }
}

fn last_line(message: &str) -> String {
    message
        .lines()
        .last()
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Compiled-program size limit per pattern, and for the set of patterns
/// without needles (bytes).
const SIZE_LIMIT: usize = 64 << 20;

/// Every page's patterns and signatures, compiled once.
#[derive(Debug)]
pub struct Matcher {
    pages: Vec<Page>,
    /// Which patterns can match a line.
    prefilter: prefilter::Prefilter,
    /// Every pattern, in page order, and its regex once a line needed it
    /// (`None` if it exceeds the compiled-size limit: it never matches).
    patterns: Vec<(String, OnceLock<Option<Regex>>)>,
    /// The page each pattern belongs to.
    owner: Vec<usize>,
    signatures: fuzzy::SignatureIndex,
}

impl Matcher {
    /// Compiles the index; every pattern that does not compile is reported.
    pub fn new(index: Index) -> Result<Matcher, Vec<PatternError>> {
        let mut patterns = Vec::new();
        let mut owner = Vec::new();
        let mut errors = Vec::new();
        for (page, entry) in index.pages.iter().enumerate() {
            for pattern in &entry.patterns {
                match validate(pattern) {
                    Ok(()) => {
                        patterns.push((pattern.clone(), OnceLock::new()));
                        owner.push(page);
                    }
                    Err(message) => errors.push(PatternError {
                        page,
                        pattern: pattern.clone(),
                        message,
                    }),
                }
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let sources: Vec<&str> = patterns.iter().map(|(p, _)| p.as_str()).collect();
        let prefilter = prefilter::Prefilter::with_markers(
            &sources,
            &scan::markers(),
            fuzzy::ERROR_WORDS,
            SIZE_LIMIT,
        )
        .map_err(|message| {
            vec![PatternError {
                page: 0,
                pattern: String::new(),
                message,
            }]
        })?;
        let signatures =
            fuzzy::SignatureIndex::new(index.pages.iter().map(|p| p.signature.as_str()));
        Ok(Matcher {
            pages: index.pages,
            prefilter,
            patterns,
            owner,
            signatures,
        })
    }

    /// Parses a match index in JSON and compiles it.
    pub fn from_json(json: &str) -> Result<Matcher, String> {
        let index: Index =
            serde_json::from_str(json).map_err(|e| format!("the match index is not valid: {e}"))?;
        Matcher::new(index).map_err(|errors| {
            errors
                .iter()
                .map(|e| format!("pattern `{}` does not compile: {}", e.pattern, e.message))
                .collect::<Vec<_>>()
                .join("; ")
        })
    }

    /// Pattern `index`'s regex, compiled on first use.
    fn regex(&self, index: usize) -> Option<&Regex> {
        let (source, regex) = &self.patterns[index];
        regex.get_or_init(|| compile(source).ok()).as_ref()
    }

    /// The pages, in index order.
    pub fn pages(&self) -> &[Page] {
        &self.pages
    }

    /// Matches a whole log held in memory (see [`Matcher::feed`] to stream).
    pub fn match_bytes(&self, log: &[u8]) -> Vec<Match> {
        let mut scan = self.scan();
        self.feed(&mut scan, log);
        self.finish(scan)
    }
}

/// The JSON answer: `{"matches":[...]}`.
pub fn to_json(matches: &[Match]) -> String {
    #[derive(Serialize)]
    struct Answer<'a> {
        matches: &'a [Match],
    }
    serde_json::to_string(&Answer { matches }).expect("matches serialise")
}

/// Every line of every fixture log under the repository's `tests/logs/`,
/// read lossily: real text for the unit tests of the fast paths.
#[cfg(test)]
fn fixture_log_lines() -> Vec<String> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/logs");
    let mut lines = Vec::new();
    let mut folders = vec![std::path::PathBuf::from(root)];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|x| x == "log") {
                let bytes = std::fs::read(&path).unwrap();
                lines.extend(String::from_utf8_lossy(&bytes).lines().map(String::from));
            }
        }
    }
    assert!(lines.len() > 200, "{} fixture lines", lines.len());
    lines
}

#[cfg(test)]
mod validate_tests {
    use super::*;

    #[test]
    fn a_pattern_past_the_size_limit_is_refused_before_it_could_never_match() {
        let big = r"BigError (?P<w>\w{2000})";
        assert!(compile(big).is_err());
        let e = validate(big).unwrap_err();
        assert!(e.contains("size limit"), "{e}");
        assert!(validate(r"(?:\w{100}){100}").is_err());
        // Small counted repetitions are only parsed, and pass.
        for ok in [
            r"Tried to allocate (\d+(?:\.\d+)?) (MiB|GiB)",
            r"\d{1,3}%\|",
            r"x{64}",
        ] {
            assert!(validate(ok).is_ok(), "{ok}");
        }
        assert!(validate("(unclosed").is_err());
    }
}
