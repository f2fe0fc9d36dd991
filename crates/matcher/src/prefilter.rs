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

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::RegexSet;
use regex_syntax::hir::{Class, Hir, HirKind};

/// Shortest needle worth looking for; a pattern whose best needle is
/// shorter runs on every line.
pub const MIN_NEEDLE: usize = 3;

/// Most needles one pattern may have (an alternation of many short words
/// is cheaper to run than to look for).
const MAX_NEEDLES: usize = 64;

/// Finds the candidate patterns of a line.
#[derive(Debug)]
pub struct Prefilter {
    /// Every needle of every pattern.
    needles: Option<AhoCorasick>,
    /// Needle → the patterns it stands for.
    owners: Vec<Vec<u32>>,
    /// Patterns without needles, and the set that runs them.
    always: Vec<u32>,
    always_set: Option<RegexSet>,
}

impl Prefilter {
    /// A prefilter for `patterns` (each already known to compile).
    pub fn new(patterns: &[&str], size_limit: usize) -> Result<Prefilter, String> {
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
        let automaton = if needles.is_empty() {
            None
        } else {
            // The builder picks the automaton: a DFA for few needles, a
            // contiguous NFA for many (quicker to build, in the browser too).
            Some(
                AhoCorasickBuilder::new()
                    .ascii_case_insensitive(true)
                    .match_kind(MatchKind::Standard)
                    .build(&needles)
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
            always,
            always_set,
        })
    }

    /// The patterns that may match `line`, in ascending order, into `out`
    /// (cleared first).
    pub fn candidates(&self, line: &str, out: &mut Vec<u32>) {
        out.clear();
        if let Some(ac) = &self.needles {
            for found in ac.find_overlapping_iter(line) {
                out.extend_from_slice(&self.owners[found.pattern().as_usize()]);
            }
        }
        if let Some(set) = &self.always_set {
            out.extend(set.matches(line).iter().map(|i| self.always[i]));
        }
        out.sort_unstable();
        out.dedup();
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
}
