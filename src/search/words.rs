//! A parsed page's words: what Pagefind's `parse_digest` and
//! `parse_meta_words` (1.6.0, `src/fossick/mod.rs`, MIT licence) make of
//! the digest and the meta, in the same order and at the same positions,
//! and the page's fragment (its text, anchors, filters and meta, as JSON).
//!
//! Pagefind splits and stems every word of every page afresh; most of a
//! site's words recur, so each thread keeps what [`splitting`] made of a
//! word ([`Memo`]), and words are numbered once per build ([`Words`]): a
//! page's postings hold numbers, not strings.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use pagefind_stem::{Algorithm, Stemmer};
use serde::Serialize;

use super::parse::{Parsed, normalize_content};
use super::splitting::{get_dotted_tails, get_indexable_words};

/// Pagefind's `WORD_SYMBOLS`: the "Punctuation, Connector" characters,
/// which count as part of a word.
pub const WORD_SYMBOLS: [char; 10] = ['_', '‿', '⁀', '⁔', '︳', '︴', '﹍', '﹎', '﹏', '＿'];

/// A word's weight where nothing sets one (1.0, as Pagefind scales it).
const DEFAULT_WEIGHT: u8 = 24;
/// A memo this large is dropped and started again.
const MEMO_LIMIT: usize = 200_000;

/// The words of one build, numbered; shared by the threads that index it.
pub struct Words {
    /// Tells this build's memo entries from another's on the same thread.
    build: u64,
    stemmer: Option<Stemmer>,
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    numbers: hashbrown::HashMap<Box<str>, u32>,
    words: Vec<Box<str>>,
}

impl Table {
    fn number(&mut self, word: &str) -> u32 {
        if let Some(&n) = self.numbers.get(word) {
            return n;
        }
        let n = u32::try_from(self.words.len()).expect("fewer than 2^32 distinct words");
        self.words.push(word.into());
        self.numbers.insert(word.into(), n);
        n
    }
}

/// One word to index, as [`splitting`] gives it, numbered.
#[derive(Clone, Copy)]
struct Indexable {
    word: u32,
    /// The form before diacritics were folded, when it differs.
    original: Option<u32>,
    compound: bool,
}

/// What one raw word gives: its indexable words, of which the first
/// `base` are `get_indexable_words`' (meta words stop there) and the rest
/// dotted tails.
struct Split {
    words: Vec<Indexable>,
    base: usize,
    compounds: usize,
}

/// This thread's splits, for one build at a time.
#[derive(Default)]
struct Memo {
    build: u64,
    splits: hashbrown::HashMap<Box<str>, Split>,
}

thread_local! {
    static MEMO: RefCell<Memo> = RefCell::new(Memo::default());
}

/// A word on a page: its positions (weighted and packed as Pagefind packs
/// them) and its positions in the meta fields.
#[derive(Debug, Default)]
struct Locs {
    locs: Vec<i32>,
    /// (the page's own meta field number, position), sorted.
    meta: Vec<(u16, u32)>,
}

/// One word's postings on one page, while they are grouped.
struct OnPage {
    word: u32,
    /// Where the word appears as it is (no diacritics folded).
    plain: Option<Locs>,
    /// Where it appears in a form with diacritics, by that form.
    variants: Vec<(u32, Locs)>,
}

/// An anchor as a fragment lists it.
#[derive(Serialize, Debug, Clone)]
pub struct Anchor {
    pub element: String,
    pub id: String,
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub location: u32,
}

/// A page's fragment: what a search result shows.
#[derive(Serialize, Debug)]
pub struct Fragment {
    pub url: String,
    pub content: String,
    pub word_count: usize,
    pub filters: BTreeMap<String, Vec<String>>,
    pub meta: BTreeMap<String, String>,
    pub anchors: Vec<Anchor>,
}

/// A page's words and fragment.
pub struct PageWords {
    pub fragment: Fragment,
    pub postings: Postings,
}

/// A page's postings, packed flat: a build holds every page's until the
/// bundle is made.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Postings {
    /// By word; a word's plain form first, then its other forms.
    entries: Vec<Entry>,
    locs: Vec<i32>,
    meta: Vec<(u16, u32)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Entry {
    word: u32,
    /// [`PLAIN`], or the form with diacritics.
    form: u32,
    /// Where this entry's positions end in `locs` and `meta`.
    locs_end: u32,
    meta_end: u32,
}

/// One entry of [`Postings`].
pub struct Posting<'a> {
    pub word: u32,
    /// `None` for the plain form.
    pub form: Option<u32>,
    pub locs: &'a [i32],
    /// (the page's own meta field number, position), sorted.
    pub meta: &'a [(u16, u32)],
}

impl Postings {
    fn from_words(words: Vec<OnPage>) -> Postings {
        let mut out = Postings::default();
        let mut push = |word: u32, form: u32, locs: Locs| {
            out.locs.extend(locs.locs);
            out.meta.extend(locs.meta);
            out.entries.push(Entry {
                word,
                form,
                locs_end: out.locs.len() as u32,
                meta_end: out.meta.len() as u32,
            });
        };
        for on in words {
            if let Some(locs) = on.plain {
                push(on.word, PLAIN, locs);
            }
            for (form, locs) in on.variants {
                push(on.word, form, locs);
            }
        }
        out.entries.shrink_to_fit();
        out.locs.shrink_to_fit();
        out.meta.shrink_to_fit();
        out
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry numbered `i` (in [`Postings::iter`]'s order).
    pub fn get(&self, i: usize) -> Posting<'_> {
        let e = &self.entries[i];
        let (locs, meta) = match i.checked_sub(1).map(|j| &self.entries[j]) {
            Some(before) => (before.locs_end as usize, before.meta_end as usize),
            None => (0, 0),
        };
        Posting {
            word: e.word,
            form: (e.form != PLAIN).then_some(e.form),
            locs: &self.locs[locs..e.locs_end as usize],
            meta: &self.meta[meta..e.meta_end as usize],
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = Posting<'_>> {
        (0..self.entries.len()).map(|i| self.get(i))
    }
}

/// One position of a word in the text or the meta, before packing.
#[derive(Clone, Copy)]
struct Hit {
    word: u32,
    /// `u32::MAX` for the plain form.
    original: u32,
    /// The weight, or the meta field.
    weight: u16,
    position: u32,
}

const PLAIN: u32 = u32::MAX;

static BUILDS: AtomicU64 = AtomicU64::new(1);

impl Words {
    pub fn new(language: &str) -> Words {
        Words {
            build: BUILDS.fetch_add(1, Ordering::Relaxed),
            stemmer: stemmer(language),
            table: Mutex::new(Table::default()),
        }
    }

    /// The word numbered `n`.
    pub fn with_words<T>(&self, f: impl FnOnce(&[Box<str>]) -> T) -> T {
        f(&self.table.lock().expect("the word table").words)
    }

    /// Runs `f` on what `raw` splits into.
    fn split<T>(&self, raw: &str, f: impl FnOnce(&Split) -> T) -> T {
        MEMO.with_borrow_mut(|memo| {
            if memo.build != self.build || memo.splits.len() >= MEMO_LIMIT {
                memo.splits.clear();
                memo.build = self.build;
            }
            if let Some(split) = memo.splits.get(raw) {
                return f(split);
            }
            let stemmer = self.stemmer.as_ref();
            let mut words = get_indexable_words(raw, stemmer, &WORD_SYMBOLS);
            let base = words.len();
            let tails = get_dotted_tails(raw, stemmer, &WORD_SYMBOLS, &words);
            words.extend(tails);
            let mut table = self.table.lock().expect("the word table");
            let split = Split {
                compounds: words.iter().filter(|w| w.is_compound_part).count(),
                words: words
                    .iter()
                    .map(|w| Indexable {
                        word: table.number(&w.stemmed),
                        original: w.original.as_deref().map(|o| table.number(o)),
                        compound: w.is_compound_part,
                    })
                    .collect(),
                base,
            };
            drop(table);
            let result = f(&split);
            memo.splits.insert(raw.into(), split);
            result
        })
    }

    /// The words and fragment of a parsed page at `url`.
    pub fn page(&self, url: &str, mut parsed: Parsed) -> PageWords {
        let mut hits = Vec::new();
        let mut anchors = Vec::new();
        let mut content = String::with_capacity(parsed.digest.len());
        let mut position: u32 = 0;
        let mut last = 0;
        let mut weights = vec![DEFAULT_WEIGHT];
        for word in parsed.digest.split_whitespace() {
            if word.starts_with('_') && marker(word, &parsed, position, &mut weights, &mut anchors)
            {
                continue;
            }
            let base_word = if word.contains('\u{200B}') {
                std::borrow::Cow::Owned(word.replace('\u{200B}', ""))
            } else {
                std::borrow::Cow::Borrowed(word)
            };
            if base_word.is_empty() {
                continue;
            }
            content.push_str(&base_word);
            content.push(' ');
            let weight = *weights.last().unwrap_or(&1);
            self.split(&base_word, |split| {
                let partial = if split.compounds > 0 && weight > 0 {
                    (weight / u8::try_from(split.compounds).unwrap_or(u8::MAX)).max(1)
                } else {
                    0
                };
                for w in &split.words {
                    hits.push(Hit {
                        word: w.word,
                        original: w.original.unwrap_or(PLAIN),
                        weight: u16::from(if w.compound { partial } else { weight }),
                        position,
                    });
                }
            });
            last = position;
            position += 1;
        }
        if content.ends_with(' ') {
            content.pop();
        }
        tidy(&mut parsed);
        let mut meta_hits = Vec::new();
        for (field, value) in parsed.meta.values().enumerate() {
            for (at, word) in value.split_whitespace().enumerate() {
                self.split(word, |split| {
                    for w in &split.words[..split.base] {
                        meta_hits.push(Hit {
                            word: w.word,
                            original: w.original.unwrap_or(PLAIN),
                            weight: u16::try_from(field).unwrap_or(u16::MAX),
                            position: u32::try_from(at).unwrap_or(u32::MAX),
                        });
                    }
                });
            }
        }
        let postings = if hits.is_empty() {
            // Pagefind leaves out a page with no words to index.
            Postings::default()
        } else {
            Postings::from_words(self.postings(hits, meta_hits))
        };
        PageWords {
            fragment: Fragment {
                url: url.to_string(),
                content,
                word_count: last as usize + 1,
                filters: parsed.filters,
                meta: parsed.meta,
                anchors,
            },
            postings,
        }
    }

    /// Groups a page's hits by word and form, packed as Pagefind packs them.
    fn postings(&self, mut hits: Vec<Hit>, mut meta_hits: Vec<Hit>) -> Vec<OnPage> {
        // Within a group, Pagefind orders positions by weight (the usual
        // weight first) and then position.
        let weight_key = |w: u16| if w == 25 { 0 } else { w };
        hits.sort_unstable_by_key(|h| (h.word, h.original, weight_key(h.weight), h.position));
        meta_hits.sort_unstable_by_key(|h| (h.word, h.original, h.weight, h.position));
        let mut words: Vec<OnPage> = Vec::new();
        let mut has_variants = false;
        for group in hits.chunk_by(|a, b| (a.word, a.original) == (b.word, b.original)) {
            let (word, original) = (group[0].word, group[0].original);
            if words.last().is_none_or(|w| w.word != word) {
                words.push(OnPage {
                    word,
                    plain: None,
                    variants: Vec::new(),
                });
            }
            let on = words.last_mut().expect("just pushed");
            let locs = Locs {
                locs: pack(group),
                meta: Vec::new(),
            };
            if original == PLAIN {
                on.plain = Some(locs);
            } else {
                has_variants = true;
                on.variants.push((original, locs));
            }
        }
        let mut meta_only: Vec<(usize, u32, Locs)> = Vec::new();
        for group in meta_hits.chunk_by(|a, b| (a.word, a.original) == (b.word, b.original)) {
            let (word, original) = (group[0].word, group[0].original);
            let at = match words.binary_search_by_key(&word, |w| w.word) {
                Ok(at) => at,
                Err(at) => {
                    words.insert(
                        at,
                        OnPage {
                            word,
                            plain: None,
                            variants: Vec::new(),
                        },
                    );
                    for m in &mut meta_only {
                        if m.0 >= at {
                            m.0 += 1;
                        }
                    }
                    at
                }
            };
            let meta: Vec<(u16, u32)> = group.iter().map(|h| (h.weight, h.position)).collect();
            let on = &mut words[at];
            if original == PLAIN {
                on.plain.get_or_insert_with(Locs::default).meta = meta;
            } else if let Some((_, locs)) = on.variants.iter_mut().find(|v| v.0 == original) {
                locs.meta = meta;
            } else {
                meta_only.push((
                    at,
                    original,
                    Locs {
                        locs: Vec::new(),
                        meta,
                    },
                ));
            }
        }
        if has_variants || !meta_only.is_empty() {
            // Forms in the order Pagefind's maps keep them: by the form's
            // text, those in the text before those only in the meta.
            self.with_words(|table| {
                for on in &mut words {
                    on.variants
                        .sort_by(|a, b| table[a.0 as usize].cmp(&table[b.0 as usize]));
                }
                meta_only
                    .sort_by(|a, b| (a.0, &table[a.1 as usize]).cmp(&(b.0, &table[b.1 as usize])));
            });
            for (at, original, locs) in meta_only {
                words[at].variants.push((original, locs));
            }
        }
        words
    }
}

/// Handles a `___PAGEFIND_…` marker; false when `word` is not one.
fn marker(
    word: &str,
    parsed: &Parsed,
    position: u32,
    weights: &mut Vec<u8>,
    anchors: &mut Vec<Anchor>,
) -> bool {
    if let Some(rest) = word.strip_prefix("___PAGEFIND_ANCHOR___") {
        let rest = rest.replace("___PAGEFIND_ANCHOR___", "");
        if let Some((element, anchor)) = rest.split_once(':') {
            let text = parsed
                .anchor_content
                .get(anchor)
                .map(|t| normalize_content(t))
                .unwrap_or_default();
            if let Some((_, id)) = anchor.split_once(':') {
                anchors.push(Anchor {
                    element: element.to_string(),
                    id: id.to_string(),
                    text: normalize_content(&text),
                    title: parsed.anchor_titles.get(anchor).cloned(),
                    location: position,
                });
            }
        }
        return true;
    }
    if let Some(rest) = word.strip_prefix("___PAGEFIND_WEIGHT___") {
        let weight = rest
            .replace("___PAGEFIND_WEIGHT___", "")
            .parse::<f32>()
            .unwrap_or(1.0);
        weights.push(if weight <= 0.0 {
            0
        } else {
            ((weight.clamp(0.0, 10.0) * 24.0) as u8).max(1)
        });
        return true;
    }
    if let Some(rest) = word.strip_prefix("___PAGEFIND_AUTO_WEIGHT___") {
        // Inside an explicitly weighted block, that weight holds.
        let weight = if weights.len() == 1 {
            let weight = rest
                .replace("___PAGEFIND_AUTO_WEIGHT___", "")
                .parse::<f32>()
                .unwrap_or(1.0);
            (weight.clamp(0.0, 10.0) * 24.0) as u8
        } else {
            weights.last().copied().unwrap_or_default()
        };
        weights.push(weight);
        return true;
    }
    if word.starts_with("___END_PAGEFIND_WEIGHT___") {
        weights.pop();
        return true;
    }
    false
}

/// Pagefind's `tidy_meta_and_filters`: its markers never reach a filter or
/// a meta value.
fn tidy(parsed: &mut Parsed) {
    static PRIVATE: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new("___PAGEFIND_[\\S]+\\s?").unwrap());
    let values = parsed.filters.values_mut().flatten();
    for value in values.chain(parsed.meta.values_mut()) {
        if let std::borrow::Cow::Owned(tidied) = PRIVATE.replace_all(value, "") {
            *value = tidied;
        }
    }
}

/// Pagefind's `positions_to_packed_page`: positions sorted by weight (the
/// usual first) and position, delta encoded, with a change of weight
/// written as `-(weight + 1)` and then the absolute position.
fn pack(hits: &[Hit]) -> Vec<i32> {
    let mut current = 25;
    let mut last = 0;
    let mut out = Vec::with_capacity(hits.len());
    for hit in hits {
        if hit.weight != current {
            out.push(-i32::from(hit.weight) - 1);
            out.push(hit.position as i32);
            current = hit.weight;
        } else {
            out.push((hit.position - last) as i32);
        }
        last = hit.position;
    }
    out
}

/// Pagefind's stemmer for a language (`get_stemmer`); none for a language
/// it cannot stem.
fn stemmer(language: &str) -> Option<Stemmer> {
    let algorithm = match language.split('-').next().unwrap_or_default() {
        "ar" => Algorithm::Arabic,
        "hy" => Algorithm::Armenian,
        "eu" => Algorithm::Basque,
        "ca" => Algorithm::Catalan,
        "da" => Algorithm::Danish,
        "nl" => Algorithm::Dutch,
        "en" => Algorithm::English,
        "eo" => Algorithm::Esperanto,
        "et" => Algorithm::Estonian,
        "fi" => Algorithm::Finnish,
        "fr" => Algorithm::French,
        "de" => Algorithm::German,
        "el" => Algorithm::Greek,
        "hi" => Algorithm::Hindi,
        "hu" => Algorithm::Hungarian,
        "id" => Algorithm::Indonesian,
        "ga" => Algorithm::Irish,
        "it" => Algorithm::Italian,
        "lt" => Algorithm::Lithuanian,
        "nb" | "nn" | "no" => Algorithm::Norwegian,
        "ne" => Algorithm::Nepali,
        "pt" => Algorithm::Portuguese,
        "ro" => Algorithm::Romanian,
        "ru" => Algorithm::Russian,
        "sr" => Algorithm::Serbian,
        "pl" => Algorithm::Polish,
        "es" => Algorithm::Spanish,
        "sv" => Algorithm::Swedish,
        "ta" => Algorithm::Tamil,
        "tr" => Algorithm::Turkish,
        "yi" => Algorithm::Yiddish,
        _ => return None,
    };
    Some(Stemmer::create(algorithm))
}
