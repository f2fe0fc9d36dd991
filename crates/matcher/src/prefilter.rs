//! Which patterns can match a line, before any regex runs.
//!
//! For each pattern, a set of *needles* is read from its syntax tree: plain
//! strings of which every match contains at least one (`CUDA out of
//! memory` in `CUDA out of memory\. Tried to allocate (?P<size>.+)`; one of
//! `cudaErrorIllegalAddress` or `illegal memory access` for an
//! alternation). One Aho-Corasick automaton finds every needle in a line,
//! ASCII case-insensitively, in a single pass; only the patterns whose
//! needles occur are then run. Patterns with no needle of at least
//! [`MIN_NEEDLE`] bytes (`\w+ failed`) are run on every line, through one
//! `RegexSet` of just those.
//!
//! A needle is a prefilter, never a verdict: a pattern it lets through is
//! still run, and a line with none of its needles cannot match it, so the
//! matches are exactly those of running every pattern on every line.
//!
//! The same pass finds the *markers* (exact, case-sensitive text such as
//! the root-cause and consequence lines of `scan`), needles of their own
//! whose case is checked where the automaton found them, and *words* whose
//! ASCII case does not matter (the fuzzy step's error words).

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::RegexSet;
use regex_syntax::hir::{Class, Hir, HirKind};

/// Shortest needle worth looking for; a pattern whose best needle is
/// shorter runs on every line.
pub const MIN_NEEDLE: usize = 3;

/// Most needles one pattern may have (an alternation of many short words
/// is cheaper to run than to look for).
const MAX_NEEDLES: usize = 64;

/// Most markers one prefilter looks for (one bit each).
pub const MAX_MARKERS: usize = 64;

/// Above this many bytes of needles, native builds stop building the
/// automaton as a DFA (quickest to run, but about 6 KiB of table per needle
/// at 1,000 pages) and let the builder choose.
#[cfg(not(target_arch = "wasm32"))]
const DFA_NEEDLE_BYTES: usize = 256 * 1024;

/// What [`Prefilter::find`] saw in a line besides the candidates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Found {
    /// Bit `k` for each marker `k` that occurs as it was written (ASCII
    /// case included).
    pub markers: u64,
    /// Whether one of the words occurs, ASCII case aside.
    pub word: bool,
}

/// Finds the candidate patterns of a line.
#[derive(Debug)]
pub struct Prefilter {
    /// Every needle of every pattern, then every marker.
    needles: Option<AhoCorasick>,
    /// Needle → the patterns it stands for.
    owners: Vec<Vec<u32>>,
    /// The markers, in order; marker `k` is needle `owners.len() + k`.
    /// The words are the needles after them.
    markers: Vec<Vec<u8>>,
    /// Patterns without needles, and the set that runs them.
    always: Vec<u32>,
    always_set: Option<RegexSet>,
}

impl Prefilter {
    /// A prefilter for `patterns` (each already known to compile).
    pub fn new(patterns: &[&str], size_limit: usize) -> Result<Prefilter, String> {
        Prefilter::with_markers(patterns, &[], &[], size_limit)
    }

    /// A prefilter for `patterns` that also finds `markers` (at most
    /// [`MAX_MARKERS`]) and `words` (see [`Prefilter::find`]).
    pub fn with_markers(
        patterns: &[&str],
        markers: &[&str],
        words: &[&str],
        size_limit: usize,
    ) -> Result<Prefilter, String> {
        if markers.len() > MAX_MARKERS {
            return Err(format!("more than {MAX_MARKERS} markers"));
        }
        let mut needles: Vec<Vec<u8>> = Vec::new();
        let mut owners: Vec<Vec<u32>> = Vec::new();
        let mut index: std::collections::HashMap<Vec<u8>, usize> = Default::default();
        let mut always = Vec::new();
        for (i, pattern) in patterns.iter().enumerate() {
            match needles_of(pattern) {
                Some(set) => {
                    for needle in set {
                        let slot = *index.entry(needle.clone()).or_insert_with(|| {
                            needles.push(needle);
                            owners.push(Vec::new());
                            owners.len() - 1
                        });
                        owners[slot].push(i as u32);
                    }
                }
                None => always.push(i as u32),
            }
        }
        let markers: Vec<Vec<u8>> = markers.iter().map(|m| m.as_bytes().to_vec()).collect();
        let words = words.iter().map(|w| w.as_bytes());
        let automaton = if needles.is_empty() && markers.is_empty() && words.len() == 0 {
            None
        } else {
            // The browser's builder picks the automaton: a DFA for few
            // needles, a contiguous NFA for many (quicker to build, and
            // smaller). Natively a DFA runs about twice as fast as the NFA
            // at 1,000 pages; past [`DFA_NEEDLE_BYTES`] the builder chooses.
            let mut builder = AhoCorasickBuilder::new();
            builder
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard);
            #[cfg(not(target_arch = "wasm32"))]
            if needles.iter().map(Vec::len).sum::<usize>() <= DFA_NEEDLE_BYTES {
                builder.kind(Some(aho_corasick::AhoCorasickKind::DFA));
            }
            Some(
                builder
                    .build(
                        needles
                            .iter()
                            .map(Vec::as_slice)
                            .chain(markers.iter().map(Vec::as_slice))
                            .chain(words),
                    )
                    .map_err(|e| e.to_string())?,
            )
        };
        let always_set = if always.is_empty() {
            None
        } else {
            let sources = always.iter().map(|&i| patterns[i as usize]);
            Some(
                regex::RegexSetBuilder::new(sources)
                    .size_limit(size_limit)
                    .dfa_size_limit(size_limit)
                    .build()
                    .map_err(|e| e.to_string())?,
            )
        };
        Ok(Prefilter {
            needles: automaton,
            owners,
            markers,
            always,
            always_set,
        })
    }

    /// The patterns that may match `line`, in ascending order, into `out`
    /// (cleared first).
    pub fn candidates(&self, line: &str, out: &mut Vec<u32>) {
        self.find(line, out);
    }

    /// [`Prefilter::candidates`], and which markers and words occur in
    /// `line`.
    pub fn find(&self, line: &str, out: &mut Vec<u32>) -> Found {
        out.clear();
        let mut seen = Found::default();
        if let Some(ac) = &self.needles {
            for found in ac.find_overlapping_iter(line) {
                let needle = found.pattern().as_usize();
                if let Some(owners) = self.owners.get(needle) {
                    out.extend_from_slice(owners);
                    continue;
                }
                let k = needle - self.owners.len();
                match self.markers.get(k) {
                    Some(marker) if line.as_bytes()[found.range()] == marker[..] => {
                        seen.markers |= 1 << k;
                    }
                    Some(_) => {}
                    None => seen.word = true,
                }
            }
        }
        if let Some(set) = &self.always_set {
            out.extend(set.matches(line).iter().map(|i| self.always[i]));
        }
        out.sort_unstable();
        out.dedup();
        seen
    }

    /// How many patterns run on every line (they have no needle).
    pub fn unfiltered(&self) -> usize {
        self.always.len()
    }
}

/// The needles of `pattern`: strings of which every match contains one
/// (ASCII case aside), or `None` when there is no useful set.
pub fn needles_of(pattern: &str) -> Option<Vec<Vec<u8>>> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .ok()?;
    let set = needles(&hir)?;
    let shortest = set.iter().map(Vec::len).min()?;
    (shortest >= MIN_NEEDLE && set.len() <= MAX_NEEDLES).then_some(set)
}

/// The one character a class stands for, as bytes, when it is a single
/// character or one ASCII letter in both cases (`(?i)a` is `[Aa]`). A
/// class that also holds a non-ASCII look-alike (`(?i)k` holds the Kelvin
/// sign) is not one character.
fn single_char(class: &Class) -> Option<Vec<u8>> {
    let chars: Vec<char> = match class {
        Class::Unicode(c) => {
            let mut chars = Vec::new();
            for r in c.iter() {
                if (r.end() as u32) - (r.start() as u32) > 2 {
                    return None;
                }
                chars.extend(r.start()..=r.end());
            }
            chars
        }
        Class::Bytes(c) => {
            let mut chars = Vec::new();
            for r in c.iter() {
                if r.end() - r.start() > 2 || !r.end().is_ascii() {
                    return None;
                }
                chars.extend((r.start()..=r.end()).map(char::from));
            }
            chars
        }
    };
    let first = *chars.first()?;
    let same = chars
        .iter()
        .all(|c| c.is_ascii() && c.eq_ignore_ascii_case(&first));
    same.then(|| first.to_ascii_lowercase().to_string().into_bytes())
}

/// The bytes `hir` always matches exactly (ASCII case aside), if it is a
/// literal or a one-character class.
fn literal(hir: &Hir) -> Option<Vec<u8>> {
    match hir.kind() {
        HirKind::Literal(l) => Some(l.0.to_vec()),
        HirKind::Class(c) => single_char(c),
        HirKind::Capture(c) => literal(&c.sub),
        _ => None,
    }
}

/// Whether `hir` matches only the empty string (anchors, word boundaries).
fn zero_width(hir: &Hir) -> bool {
    matches!(hir.kind(), HirKind::Empty | HirKind::Look(_))
}

/// Whether needle set `a` is better than `b`: a longer shortest needle,
/// then fewer needles.
fn better(a: &[Vec<u8>], b: &[Vec<u8>]) -> bool {
    let short = |s: &[Vec<u8>]| s.iter().map(Vec::len).min().unwrap_or(0);
    (short(a), std::cmp::Reverse(a.len())) > (short(b), std::cmp::Reverse(b.len()))
}

fn needles(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => None,
        HirKind::Literal(l) => Some(vec![l.0.to_vec()]),
        HirKind::Class(c) => single_char(c).map(|b| vec![b]),
        HirKind::Capture(c) => needles(&c.sub),
        HirKind::Repetition(r) => (r.min >= 1).then(|| needles(&r.sub)).flatten(),
        HirKind::Alternation(subs) => {
            let mut all = Vec::new();
            for sub in subs {
                all.extend(needles(sub)?);
            }
            Some(all)
        }
        HirKind::Concat(subs) => {
            let mut best: Option<Vec<Vec<u8>>> = None;
            let mut consider = |set: Vec<Vec<u8>>| {
                if best.as_ref().is_none_or(|b| better(&set, b)) {
                    best = Some(set);
                }
            };
            // Adjacent literals make one run: `CUDA`, ` `, `error` is
            // `CUDA error`. Zero-width parts do not break a run.
            let mut run: Vec<u8> = Vec::new();
            for sub in subs {
                if let Some(bytes) = literal(sub) {
                    run.extend(bytes);
                    continue;
                }
                if zero_width(sub) {
                    continue;
                }
                if !run.is_empty() {
                    consider(vec![std::mem::take(&mut run)]);
                }
                if let Some(set) = needles(sub) {
                    consider(set);
                }
            }
            if !run.is_empty() {
                consider(vec![run]);
            }
            best
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(pattern: &str) -> Option<Vec<String>> {
        needles_of(pattern).map(|set| {
            set.into_iter()
                .map(|n| String::from_utf8(n).unwrap())
                .collect()
        })
    }

    #[test]
    fn needles_are_the_longest_required_text() {
        assert_eq!(
            strings(r"CUDA out of memory\. Tried to allocate (?P<size>[\d.]+ [KMG]iB)").unwrap(),
            ["CUDA out of memory. Tried to allocate "]
        );
        assert_eq!(
            strings(r"(?:CUDA [Ee]rror|cuda runtime error \((?P<code>\d+)\) ): no kernel image")
                .unwrap(),
            [": no kernel image"]
        );
        assert_eq!(
            strings(r"cudaErrorIllegalAddress|illegal memory access").unwrap(),
            ["cudaErrorIllegalAddress", "illegal memory access"]
        );
        // Case-insensitive text is still a needle (the automaton ignores
        // ASCII case); a look-alike letter splits it.
        assert_eq!(strings(r"(?i)nccl watchdog").unwrap(), ["nccl watchdog"]);
        assert_eq!(strings(r"(?i)cuda ok then").unwrap(), ["cuda o"]);
        assert_eq!(strings(r"\bWorkNCCL\b.*timeout").unwrap(), ["WorkNCCL"]);
        assert_eq!(strings(r"(?:Error){2}x").unwrap(), ["Error"]);
    }

    #[test]
    fn patterns_without_a_useful_needle_run_on_every_line() {
        for pattern in [r"\w+ \d+", r"(?:ab)?cd", r"a|bc", r"x*", r"[a-z]+ed", r"^$"] {
            assert_eq!(strings(pattern), None, "{pattern}");
        }
    }

    #[test]
    fn candidates_are_exactly_the_patterns_that_can_match() {
        let patterns = [
            r"CUDA out of memory\. Tried to allocate (?P<size>.+)",
            r"(?i)watchdog caught collective operation timeout",
            r"\w+ \d+",
            r"\w+Error: \d+",
            r"illegal memory access|cudaErrorIllegalAddress",
        ];
        let pre = Prefilter::new(&patterns, 1 << 20).unwrap();
        assert_eq!(pre.unfiltered(), 1);
        let regexes: Vec<regex::Regex> = patterns
            .iter()
            .map(|p| regex::Regex::new(p).unwrap())
            .collect();
        let mut out = Vec::new();
        for line in [
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
            "[rank0]: Watchdog caught collective operation TIMEOUT: WorkNCCL(SeqNum=1)",
            "ValueError: 42",
            "RuntimeError: CUDA error: an illegal memory access was encountered",
            "nothing to see",
        ] {
            pre.candidates(line, &mut out);
            let can: Vec<usize> = out.iter().map(|&i| i as usize).collect();
            for (i, re) in regexes.iter().enumerate() {
                if re.is_match(line) {
                    assert!(
                        can.contains(&i),
                        "{line}: pattern {i} matches but is no candidate"
                    );
                }
            }
        }
        pre.candidates("nothing to see", &mut out);
        assert!(out.is_empty(), "{out:?}");
    }

    /// What `find` saw: marker bits and whether a word was found.
    fn seen(markers: u64, word: bool) -> Found {
        Found { markers, word }
    }

    #[test]
    fn markers_and_words_are_found_in_the_same_pass() {
        let patterns = [r"CUDA error: (?P<what>.+)", r"NCCL error", r"\w+ \d+"];
        let markers = ["Root Cause", "Shutting down", "shutdown", "NCCL error"];
        let words = ["fail", "error"];
        let pre = Prefilter::with_markers(&patterns, &markers, &words, 1 << 20).unwrap();
        let mut out = Vec::new();
        let root = pre.find("Root Cause (first observed failure):", &mut out);
        assert_eq!(root, seen(0b0001, true));
        assert!(out.is_empty(), "{out:?}");
        // Needles and words ignore ASCII case; markers do not.
        assert_eq!(
            pre.find("ROOT CAUSE: cuda ERROR: x", &mut out),
            seen(0, true)
        );
        assert_eq!(out, [0]);
        // Overlapping and repeated markers are all found.
        assert_eq!(
            pre.find("Shutting down during shutdown", &mut out),
            seen(0b0110, false)
        );
        // A marker that is also a needle is both.
        assert_eq!(pre.find("NCCL error 3", &mut out), seen(0b1000, true));
        assert_eq!(out, [1, 2]);
        assert_eq!(pre.find("nccl error", &mut out), seen(0, true));
        assert_eq!(out, [1]);
        assert_eq!(pre.find("all good", &mut out), seen(0, false));
        assert!(out.is_empty());
        // Markers and words without patterns, and too many markers.
        let alone = Prefilter::with_markers(&[], &markers, &words, 1 << 20).unwrap();
        assert_eq!(
            alone.find("FAILED during shutdown", &mut out),
            seen(0b0100, true)
        );
        assert!(out.is_empty());
        let many: Vec<String> = (0..=MAX_MARKERS).map(|i| format!("m{i:03}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(Prefilter::with_markers(&[], &many, &[], 1 << 20).is_err());
    }

    #[test]
    fn a_site_past_the_dfa_budget_finds_the_same_candidates() {
        // More needle bytes than a native DFA is built for: the builder
        // picks the automaton, and the candidates are the same.
        let texts: Vec<String> = (0..3000)
            .map(|i| format!("Error{i:04}: {}", "the same long tail ".repeat(5)))
            .collect();
        let patterns: Vec<String> = texts.iter().map(|t| regex::escape(t)).collect();
        let patterns: Vec<&str> = patterns.iter().map(String::as_str).collect();
        assert!(texts.iter().map(String::len).sum::<usize>() > 256 * 1024);
        let pre = Prefilter::with_markers(&patterns, &["Error0007"], &["tail"], 64 << 20).unwrap();
        let mut out = Vec::new();
        let line = format!("x {} y", texts[7]);
        assert_eq!(pre.find(&line, &mut out), seen(1, true));
        assert_eq!(out, [7]);
        let line = texts[2999].to_lowercase();
        assert_eq!(pre.find(&line, &mut out), seen(0, true));
        assert_eq!(out, [2999]);
        assert_eq!(pre.find("Error0007 alone", &mut out), seen(1, false));
        assert!(out.is_empty());
    }
}
