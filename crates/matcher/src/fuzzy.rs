//! Step 3: fuzzy matching of a page's `signature` against error-looking lines,
//! used only when no pattern matched anywhere in the log.
//!
//! Both sides are masked first, so that what varies between two occurrences
//! of one error does not count: quoted strings, paths, hex numbers and
//! numbers are removed (as is the `...` a signature writes for "anything").
//! What remains is split into lower-case words, and the similarity is the
//! Sørensen–Dice coefficient of the two sets of words:
//! `2 × |common| / (|signature words| + |line words|)`.
//!
//! A line matches a page when the similarity is at least
//! [`FUZZY_THRESHOLD`] (0.7), the page's signature has at least
//! [`MIN_SIGNATURE_WORDS`] words, and the line looks like an error (it names
//! an error, exception, failure, fatal, panic, abort, ...). A log with no
//! known error therefore matches nothing.

use std::collections::{BTreeSet, HashMap};
use std::hash::Hasher;
use std::sync::OnceLock;

use regex::Regex;

/// The least Dice similarity for a fuzzy match.
pub const FUZZY_THRESHOLD: f64 = 0.7;

/// Signatures with fewer words are too vague to match fuzzily.
pub const MIN_SIGNATURE_WORDS: usize = 3;

fn maskable() -> &'static Regex {
    static MASK: OnceLock<Regex> = OnceLock::new();
    MASK.get_or_init(|| {
        Regex::new(
            r#"(?x)
              "[^"]*"                                   # double-quoted strings
            | (?:^|[\s(=:,\[])'[^'\n]*'                 # single-quoted (not the apostrophe in can't)
            | `[^`]*`                                   # backticks
            | (?:[A-Za-z]:)?(?:[\\/][\w.@+~-]+){2,}[\\/]?   # paths
            | [\w.-]+\.(?:py|pyx|rs|c|cc|cpp|cu|cuh|h|hpp|so|js|ts|go|java):?\d*  # source files
            | \b0x[0-9A-Fa-f]+\b                        # hex
            | \b[0-9a-f]{8,}\b                          # hashes and addresses
            | \.\.\.                                    # a signature's "anything"
            "#,
        )
        .expect("the mask pattern compiles")
    })
}

/// What makes a line look like an error: any of these, in any case.
pub const ERROR_WORDS: &[&str] = &[
    "error",
    "exception",
    "traceback",
    "fatal",
    "panic",
    "fail",
    "abort",
    "killed",
    "denied",
    "refused",
    "unable to",
    "cannot",
    "can't",
    "could not",
    "segmentation fault",
    "core dumped",
    "out of memory",
    "not found",
    "no such",
    "invalid",
    "timed out",
    "timeout",
];

fn error_like() -> &'static Regex {
    static ERROR: OnceLock<Regex> = OnceLock::new();
    ERROR.get_or_init(|| {
        let words: Vec<String> = ERROR_WORDS.iter().map(|w| regex::escape(w)).collect();
        Regex::new(&format!("(?i){}", words.join("|"))).expect("the error-word pattern compiles")
    })
}

/// Whether a normalised line looks like it reports an error: it holds one
/// of [`ERROR_WORDS`], Unicode's case aside (the regex crate's `(?i)`).
pub fn looks_like_error(line: &str) -> bool {
    error_like().is_match(line)
}

/// [`looks_like_error`] for a line in which the prefilter found (`word`)
/// or did not find one of [`ERROR_WORDS`], ASCII case aside. That is the
/// answer for ASCII text; only `(?i)` also matches the Kelvin sign for `k`
/// and the long s for `s`, so other text asks the regex.
pub fn looks_like_error_given(line: &str, word: bool) -> bool {
    if line.is_ascii() {
        word
    } else {
        looks_like_error(line)
    }
}

/// The masked words of `text`, lower-cased and deduplicated. A number on
/// its own is dropped; digits inside a word become one `0`, so the word
/// stays one word (`E1Error` and `E2Error` are both `e0error`, `rank3` is
/// `rank0`): a signature has as many words as its author wrote.
pub fn words(text: &str) -> BTreeSet<String> {
    let mut arena = String::new();
    let mut spans = Vec::new();
    push_words(text, &mut arena, &mut spans);
    spans
        .iter()
        .map(|&(start, end)| arena[start..end].to_string())
        .collect()
}

/// The words of `text` (see [`words`], duplicates kept), each appended to
/// `arena`, with where it is in `arena` pushed to `spans`: no allocation
/// per word.
fn push_words(text: &str, arena: &mut String, spans: &mut Vec<(usize, usize)>) {
    // What the mask finds separates words, as a space would.
    let mut from = 0;
    for masked in maskable().find_iter(text) {
        push_unmasked_words(&text[from..masked.start()], arena, spans);
        from = masked.end();
    }
    push_unmasked_words(&text[from..], arena, spans);
}

fn push_unmasked_words(text: &str, arena: &mut String, spans: &mut Vec<(usize, usize)>) {
    if text.is_ascii() {
        // The same words, byte by byte: in ASCII a character is alphanumeric
        // when it is an ASCII letter or digit.
        let is_word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
        for word in text.as_bytes().split(|b| !is_word(b)) {
            if word.iter().all(u8::is_ascii_digit) {
                continue;
            }
            let start = arena.len();
            let mut after_digit = false;
            for &b in word {
                if !b.is_ascii_digit() {
                    arena.push(char::from(b.to_ascii_lowercase()));
                } else if !after_digit {
                    arena.push('0');
                }
                after_digit = b.is_ascii_digit();
            }
            spans.push((start, arena.len()));
        }
        return;
    }
    let words = text.split(|c: char| !(c.is_alphanumeric() || c == '_'));
    for word in words.filter(|w| !w.bytes().all(|b| b.is_ascii_digit())) {
        let start = arena.len();
        let mut after_digit = false;
        for c in word.chars() {
            if !c.is_ascii_digit() {
                arena.extend(c.to_lowercase());
            } else if !after_digit {
                arena.push('0');
            }
            after_digit = c.is_ascii_digit();
        }
        spans.push((start, arena.len()));
    }
}

/// A quick hash for short words (the postings' keys): not meant to resist
/// chosen collisions, which would only slow a lookup.
#[derive(Debug, Default, Clone, Copy)]
struct WordHasher(u64);

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Word → pages.
type Postings = HashMap<String, Vec<u32>, std::hash::BuildHasherDefault<WordHasher>>;

/// Dice similarity of two word sets.
pub fn dice(common: usize, a: usize, b: usize) -> f64 {
    if a + b == 0 {
        0.0
    } else {
        2.0 * common as f64 / (a + b) as f64
    }
}

/// Every page's signature words, indexed by word for one pass per line.
#[derive(Debug, Default)]
pub struct SignatureIndex {
    /// Word → pages whose signature has it.
    postings: Postings,
    /// Words in each page's signature (0 for pages too vague to match).
    sizes: Vec<usize>,
}

impl SignatureIndex {
    /// Indexes the signatures, one per page in order.
    pub fn new<'a>(signatures: impl Iterator<Item = &'a str>) -> SignatureIndex {
        let mut index = SignatureIndex::default();
        for (page, signature) in signatures.enumerate() {
            let words = words(signature);
            if words.len() < MIN_SIGNATURE_WORDS {
                index.sizes.push(0);
                continue;
            }
            index.sizes.push(words.len());
            for word in words {
                index.postings.entry(word).or_default().push(page as u32);
            }
        }
        index
    }

    /// The pages whose similarity with `line` reaches the threshold, with
    /// the similarity (in no set order). `scratch` must be as long as there are pages and all
    /// zero; it is left all zero.
    pub fn similar(&self, line: &str, scratch: &mut [u32]) -> Vec<(usize, f64)> {
        // The words, deduplicated, as [`words`] gives them: sorted by a
        // hash first, so that most comparisons are of two numbers.
        let mut arena = String::with_capacity(line.len());
        let mut spans = Vec::new();
        push_words(line, &mut arena, &mut spans);
        let mut words: Vec<(u64, &str)> = spans
            .iter()
            .map(|&(start, end)| {
                let word = &arena[start..end];
                let mut hasher = WordHasher::default();
                hasher.write(word.as_bytes());
                (hasher.finish(), word)
            })
            .collect();
        words.sort_unstable();
        words.dedup();
        let mut touched = Vec::new();
        for &(_, word) in &words {
            for &page in self.postings.get(word).map_or(&[][..], Vec::as_slice) {
                let count = &mut scratch[page as usize];
                if *count == 0 {
                    touched.push(page as usize);
                }
                *count += 1;
            }
        }
        let mut out = Vec::new();
        for page in touched {
            let score = dice(scratch[page] as usize, self.sizes[page], words.len());
            scratch[page] = 0;
            if score >= FUZZY_THRESHOLD {
                out.push((page, score));
            }
        }
        out
    }

    /// How many pages are indexed.
    pub fn len(&self) -> usize {
        self.sizes.len()
    }

    /// Whether no page is indexed.
    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(words: &[&str]) -> BTreeSet<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn numbers_hex_paths_and_quoted_strings_are_masked() {
        assert_eq!(
            words("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB at 0x7f3a"),
            set(&[
                "runtimeerror",
                "cuda",
                "out",
                "of",
                "memory",
                "tried",
                "to",
                "allocate",
                "mib",
                "at"
            ])
        );
        assert_eq!(
            words("ModuleNotFoundError: No module named 'vllm._C' in /usr/lib/python3/site.py"),
            set(&["modulenotfounderror", "no", "module", "named", "in"])
        );
        assert_eq!(
            words("can't open \"x y\" deadbeefcafe"),
            set(&["can", "t", "open"])
        );
        assert_eq!(
            words("Tried to allocate ... MiB"),
            set(&["tried", "to", "allocate", "mib"])
        );
        // Digits in a word are masked in place; numbers on their own go.
        assert_eq!(
            words("[rank3] E1Error on cuda:1 after 20.00MiB"),
            set(&["rank0", "e0error", "on", "cuda", "after", "0mib"])
        );
    }

    #[test]
    fn similarity_has_a_threshold() {
        let index = SignatureIndex::new(
            [
                "RuntimeError: CUDA out of memory. Tried to allocate ... MiB",
                "ModuleNotFoundError: No module named 'flash_attn'",
                "Killed",
            ]
            .into_iter(),
        );
        let mut scratch = vec![0; index.len()];
        // The same error with other numbers, an older wording.
        let hits = index.similar(
            "RuntimeError: CUDA out of memory. Tried to allocate 1.5 GiB (GPU 0)",
            &mut scratch,
        );
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].0, 0);
        assert!(hits[0].1 >= FUZZY_THRESHOLD, "{hits:?}");
        // Another module: quoted strings are masked.
        let hits = index.similar(
            "ModuleNotFoundError: No module named 'triton'",
            &mut scratch,
        );
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), vec![1]);
        // Another CUDA error shares two words: far below the threshold.
        assert!(
            index
                .similar(
                    "RuntimeError: CUDA error: device-side assert triggered",
                    &mut scratch
                )
                .is_empty()
        );
        // One-word signatures never match fuzzily.
        assert!(index.similar("Killed", &mut scratch).is_empty());
        // Nor do two-word ones, digits inside a word included (they were
        // split into words of their own, so "E1Error: failed" had three).
        let short = SignatureIndex::new(["E1Error: failed", "E2Error: failed"].into_iter());
        let mut scratch = vec![0; short.len()];
        assert!(short.similar("E1Error failed", &mut scratch).is_empty());
        assert!(scratch.iter().all(|&c| c == 0));
    }

    #[test]
    fn error_lines_are_recognised() {
        assert!(looks_like_error(
            "torch.OutOfMemoryError: CUDA out of memory."
        ));
        assert!(looks_like_error("Segmentation fault (core dumped)"));
        assert!(!looks_like_error("Loading model weights took 14.99 GB"));
    }

    /// `words` as it was written first: the masked text copied, and a
    /// `String` per word.
    fn words_one_string_each(text: &str) -> BTreeSet<String> {
        let masked = maskable().replace_all(text, " ");
        masked
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty() && !w.chars().all(|c| c.is_ascii_digit()))
            .map(|w| {
                let mut out = String::with_capacity(w.len());
                for c in w.chars() {
                    if !c.is_ascii_digit() {
                        out.extend(c.to_lowercase());
                    } else if !out.ends_with('0') || out.is_empty() {
                        out.push('0');
                    }
                }
                out
            })
            .collect()
    }

    #[test]
    fn words_are_read_without_copying_each_one_and_stay_the_same() {
        let mut lines: Vec<String> = [
            // Non-ASCII words: lower-cased by Unicode's rules (İ is two
            // characters in lower case), digits folded in place.
            "Ошибка3x: ÄRGER 12 İstanbul_7 ǅemal ΣΊΣΥΦΟΣ 1٣ x١",
            "E1Error 00 a0b0c 9z \"quoted 1\" /a/b/c 0xff deadbeef12 x.py:3 ...",
            "",
            "   ",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        lines.extend(crate::fixture_log_lines());
        let index = SignatureIndex::new(lines.iter().map(String::as_str));
        let mut scratch = vec![0; index.len()];
        for line in &lines {
            let expected = words_one_string_each(line);
            assert_eq!(words(line), expected, "{line:?}");
            // Each line is most like itself: its own word count is used.
            if expected.len() >= MIN_SIGNATURE_WORDS {
                let hits = index.similar(line, &mut scratch);
                assert!(hits.iter().any(|&(_, score)| score == 1.0), "{line:?}");
            }
        }
    }

    #[test]
    fn error_words_found_by_the_prefilter_answer_as_the_regex_does() {
        let pre =
            crate::prefilter::Prefilter::with_markers(&[], &[], ERROR_WORDS, 1 << 20).unwrap();
        let mut lines = crate::fixture_log_lines();
        lines.extend(
            [
                "TRACEBACK (MOST RECENT CALL LAST)",
                "Can'T open",
                "all good",
                "",
                // `(?i)` matches the Kelvin sign for k and the long s for
                // s; ASCII case folding does not.
                "process \u{212A}illed",
                "\u{17F}egmentation fault",
                "d\u{e9}j\u{e0} vu, no such file",
                "d\u{e9}j\u{e0} vu",
            ]
            .map(String::from),
        );
        let mut candidates = Vec::new();
        let (mut yes, mut no) = (0, 0);
        for line in &lines {
            let found = pre.find(line, &mut candidates);
            let expected = looks_like_error(line);
            assert_eq!(
                looks_like_error_given(line, found.word),
                expected,
                "{line:?}"
            );
            if expected { yes += 1 } else { no += 1 }
        }
        assert!(yes > 50 && no > 50, "{yes} error lines, {no} others");
        assert!(looks_like_error("process \u{212A}illed"));
    }
}
