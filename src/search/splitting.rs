//! How Pagefind turns one whitespace-separated word of a page into the
//! words it indexes: lower-cased and stemmed, the parts of a compound
//! (`CUDA_VISIBLE_DEVICES`, `torch.cuda.OutOfMemoryError`), dotted tails,
//! katakana suffixes and emoji, with diacritics folded.
//!
//! Taken from Pagefind 1.6.0 (`src/fossick/splitting.rs`, MIT licence,
//! Copyright (c) 2022 CloudCannon), without the segmented languages
//! (Chinese, Japanese, Thai) that need Pagefind's `extended` feature,
//! which errata does not build. It must stay word for word what Pagefind
//! does: the search script in the browser is Pagefind's, and it looks up
//! the words it makes of a query in what this module made of the page.
//! `tests/search_index.rs` checks the whole bundle against Pagefind's own.

use convert_case::{Case, Casing};
use pagefind_stem::Stemmer;
use regex::Regex;
use std::collections::HashSet;
use std::sync::LazyLock;
use unicode_normalization::UnicodeNormalization;
use unicode_segmentation::UnicodeSegmentation;

const MAX_KATAKANA_SUFFIX_CHARS: usize = 16;
const MAX_DOTTED_TAIL_CHARS: usize = 64;

static EMOJI: LazyLock<Regex> = LazyLock::new(|| Regex::new("\\p{Emoji}").unwrap());

#[derive(Debug, Clone, PartialEq)]
pub struct IndexableWord {
    pub stemmed: String,
    pub is_compound_part: bool,
    /// The original word before diacritic normalization (if different)
    pub original: Option<String>,
}

/// Returns all words that should be indexed for a given input word.
/// This includes:
/// - The primary normalized+stemmed word
/// - Compound word parts (for hyphenated/camelCase/etc words)
/// - Emoji characters
pub fn get_indexable_words(
    raw_word: &str,
    stemmer: Option<&Stemmer>,
    include_characters: &[char],
) -> Vec<IndexableWord> {
    let mut results = Vec::new();

    let normalized_word = normalize_word(raw_word, include_characters);

    if !normalized_word.is_empty() {
        results.push(stem_word(&normalized_word, stemmer, false));
    }

    for suffix in katakana_suffixes(raw_word) {
        let suffix_diacritic = normalize_diacritics(suffix);
        results.push(IndexableWord {
            stemmed: suffix_diacritic
                .clone()
                .unwrap_or_else(|| suffix.to_string()),
            original: suffix_diacritic.map(|_| suffix.to_string()),
            is_compound_part: true,
        });
    }

    let possibly_compound = raw_word.chars().any(|c| !c.is_alphanumeric())
        || raw_word.chars().skip(1).any(|c| c.is_uppercase());

    if !possibly_compound {
        return results;
    }

    let (word_parts, extras) = get_discrete_words(raw_word);
    if !normalized_word.is_empty()
        && (word_parts.contains(|c: char| c.is_whitespace())
            || !normalized_word.starts_with(&word_parts))
    {
        let part_words: Vec<_> = word_parts.split_whitespace().collect();

        // Only index two+ character words
        for part_word in part_words.into_iter().filter(|w| w.len() > 1) {
            let part_diacritic = normalize_diacritics(part_word);

            let stemmed_part = if let Some(stemmer) = stemmer {
                stemmer
                    .stem(part_diacritic.as_deref().unwrap_or(part_word))
                    .into_owned()
            } else {
                part_diacritic
                    .clone()
                    .unwrap_or_else(|| part_word.to_string())
            };

            results.push(IndexableWord {
                stemmed: stemmed_part,
                original: part_diacritic.map(|_| part_word.to_string()),
                is_compound_part: true,
            });
        }
    }

    if let Some(extras) = extras {
        for extra in extras {
            results.push(IndexableWord {
                stemmed: extra,
                original: None,
                is_compound_part: false,
            });
        }
    }

    results
}

/// Pulling out a useful compound word from a dot-segmented word,
/// so that we index the `is_python_build` in `sysconfig.is_python_build`
/// without completely decomposing it.
pub fn get_dotted_tails(
    raw_word: &str,
    stemmer: Option<&Stemmer>,
    include_characters: &[char],
    existing: &[IndexableWord],
) -> Vec<IndexableWord> {
    let mut tails = Vec::new();
    if !raw_word.contains('.') {
        return tails;
    }
    let seen: HashSet<&str> = existing.iter().map(|w| w.stemmed.as_str()).collect();
    let mut seen_tails: HashSet<String> = HashSet::new();
    for (i, _) in raw_word.match_indices('.') {
        let rest = &raw_word[i + 1..];
        let tail = match rest.char_indices().nth(MAX_DOTTED_TAIL_CHARS) {
            Some((end, _)) => &rest[..end],
            None => rest,
        };
        let tail_is_compound = tail.chars().any(|c| !c.is_alphanumeric())
            || tail.chars().skip(1).any(|c| c.is_uppercase());
        if !tail_is_compound {
            // A plain tail is already indexed, as the final compound part.
            continue;
        }
        let tail_normalized = normalize_word(tail, include_characters);
        if tail_normalized.chars().count() < 2 {
            continue;
        }
        let tail_word = stem_word(&tail_normalized, stemmer, true);
        if !seen.contains(tail_word.stemmed.as_str())
            && seen_tails.insert(tail_word.stemmed.clone())
        {
            tails.push(tail_word);
        }
    }
    tails
}

fn normalize_word(raw_word: &str, include_characters: &[char]) -> String {
    let mut normalized_word = String::with_capacity(raw_word.len());
    for mut c in raw_word.chars() {
        let is_alpha = c.is_alphanumeric();
        if is_alpha || include_characters.contains(&c) {
            c.make_ascii_lowercase();
            if c.is_uppercase() {
                // Non-ascii uppercase can lower to multiple chars
                normalized_word.extend(c.to_lowercase());
            } else {
                normalized_word.push(c);
            }
        }
    }
    normalized_word
}

fn stem_word(
    normalized_word: &str,
    stemmer: Option<&Stemmer>,
    is_compound_part: bool,
) -> IndexableWord {
    let diacritic_normalized = normalize_diacritics(normalized_word);

    let stemmed = if let Some(stemmer) = stemmer {
        stemmer
            .stem(diacritic_normalized.as_deref().unwrap_or(normalized_word))
            .into_owned()
    } else {
        diacritic_normalized
            .clone()
            .unwrap_or_else(|| normalized_word.to_string())
    };

    IndexableWord {
        stemmed,
        original: diacritic_normalized.map(|_| normalized_word.to_string()),
        is_compound_part,
    }
}

/// True for the characters ICU4X (currently) leaves in an unsegmented run: katakana,
/// the prolonged sound mark, and their halfwidth forms.
fn is_katakana(c: char) -> bool {
    matches!(c as u32,
        0x30A1..=0x30FA | 0x30FC..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9F)
}

/// ICU4X's dictionary (currently) has no katakana entries.
/// Indexing every suffix is a cheap hack for now, so the existing prefix
/// matching resolves a query for substrings.
///
/// Tracking: https://github.com/unicode-org/icu4x/issues/2239
fn katakana_suffixes(word: &str) -> Vec<&str> {
    if word.chars().count() < 3 || !word.chars().all(is_katakana) {
        return Vec::new();
    }
    let mut seen = HashSet::new();
    let mut suffixes = Vec::new();
    for (i, _) in word.char_indices().skip(1) {
        let rest = &word[i..];
        let suffix = match rest.char_indices().nth(MAX_KATAKANA_SUFFIX_CHARS) {
            Some((end, _)) => &rest[..end],
            None => rest,
        };
        // Skip duplicate suffixes
        if suffix.chars().count() >= 2 && seen.insert(suffix) {
            suffixes.push(suffix);
        }
    }
    suffixes
}

/// Normalize diacritics, if required, before indexing
/// (context: we index "café" as "cafe" for retrieval purposes,
/// but we do still store each variant in the index,
/// so matching diacritics are preferred when ranking search results)
fn normalize_diacritics(word: &str) -> Option<String> {
    if word.is_ascii() || !has_decomposition(word) {
        return None;
    }

    // The kana voiced/semi-voiced sound marks are combining marks, but they
    // distinguish words, so they are kept
    let stripped: String = word
        .nfd()
        .filter(|c| {
            !unicode_normalization::char::is_combining_mark(*c)
                || matches!(*c, '\u{3099}' | '\u{309A}')
        })
        .collect();

    // Recompose when kana voiced/semi-voiced sound marks survived,
    // otherwise we conflate バンド ("band") and ハンド ("hand").
    // Leave everything else decomposed for better search, for example in Hangul,
    // jamo are letters rather than combining marks. Composing them into syllable
    // blocks would stop a partially-typed syllable being a prefix of the indexed word
    let normalized = if stripped
        .chars()
        .any(|c| matches!(c, '\u{3099}' | '\u{309A}'))
    {
        stripped.nfc().collect::<String>()
    } else {
        stripped
    };

    if normalized != word {
        Some(normalized)
    } else {
        None
    }
}

fn has_decomposition(word: &str) -> bool {
    word.chars().any(|c| {
        unicode_normalization::char::is_combining_mark(c) || {
            let mut decomposes = false;
            unicode_normalization::char::decompose_canonical(c, |part| {
                decomposes = decomposes || part != c;
            });
            decomposes
        }
    })
}

fn get_discrete_words<S: AsRef<str>>(s: S) -> (String, Option<Vec<String>>) {
    let mut extras = None;

    let words = s
        .as_ref()
        .replace(|c: char| c.is_ascii_punctuation(), " ")
        .to_case(Case::Lower)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");

    if EMOJI.is_match(s.as_ref()) {
        extras = Some(
            s.as_ref()
                .graphemes(true)
                .filter_map(|x| {
                    if emojis::get(x).is_some() {
                        Some(x.to_string())
                    } else {
                        None
                    }
                })
                .collect::<Vec<_>>(),
        );
    }

    (words, extras)
}
