//! A parsed page's words: what Pagefind's `parse_digest` and
//! `parse_meta_words` (1.6.0, `src/fossick/mod.rs`, MIT licence) make of
//! the digest and the meta, in the same order and at the same positions,
//! and the page's fragment (its text, anchors, filters and meta, as JSON).
//!
//! Pagefind splits and stems every word of every page afresh; most of a
//! site's words recur, so each thread keeps what [`splitting`] made of a
//! word ([`super::memo`]), and words are numbered once per build, or once
//! per session of builds (`errata serve`, see [`super::kept`]) ([`Words`]):
//! a page's postings hold numbers, not strings.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use pagefind_stem::{Algorithm, Stemmer};
use serde::Serialize;

use super::cbor::{Cbor, array_len};
use super::memo::{Indexable, Memo, PLAIN, Split};
use super::parse::{Parsed, normalize_content};
use super::splitting::{get_dotted_tails, get_indexable_words};
use super::white_space;

/// Pagefind's `WORD_SYMBOLS`: the "Punctuation, Connector" characters,
/// which count as part of a word.
pub const WORD_SYMBOLS: [char; 10] = ['_', '‿', '⁀', '⁔', '︳', '︴', '﹍', '﹎', '﹏', '＿'];

/// A word's weight where nothing sets one (1.0, as Pagefind scales it).
const DEFAULT_WEIGHT: u8 = 24;

/// The words of one build (or of a session's builds), numbered; shared by
/// the threads that index it.
pub struct Words {
    /// Tells these words' memo entries from others' on the same thread.
    build: u64,
    stemmer: Option<Stemmer>,
    table: Mutex<Table>,
    /// How many of the words the last word index made had postings.
    live: AtomicUsize,
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

thread_local! {
    static MEMO: RefCell<Memo> = RefCell::new(Memo::default());
    /// Each thread's buffers for a page's hits and for the same grouped by
    /// word (tens of kilobytes a page): reused, they stay in the cache.
    static HITS: Cell<Vec<Hit>> = const { Cell::new(Vec::new()) };
    static GROUPED: Cell<Vec<Hit>> = const { Cell::new(Vec::new()) };
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
/// bundle is made, so each entry's positions are kept as the bytes the word
/// index will hold (a CBOR array of small integers, mostly a byte each).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Postings {
    /// By word, a word's plain form first, then its other forms: the word,
    /// and where the entry's positions end in `locs`.
    entries: Vec<(u32, u32)>,
    /// Each entry's positions, packed as Pagefind packs them, as CBOR.
    locs: Vec<u8>,
    /// The entries of another form than the plain one: (entry, the form).
    forms: Vec<(u32, u32)>,
    /// The entries with positions in the meta: (entry, where they end in
    /// `meta`). Both lists are by entry, and short.
    meta_ends: Vec<(u32, u32)>,
    meta: Vec<(u16, u32)>,
}

/// One entry of [`Postings`].
pub struct Posting<'a> {
    pub word: u32,
    /// `None` for the plain form.
    pub form: Option<u32>,
    /// The packed positions, a CBOR array.
    pub locs: &'a [u8],
    /// (the page's own meta field number, position), sorted.
    pub meta: &'a [(u16, u32)],
}

impl Posting<'_> {
    /// How many packed positions there are.
    pub fn loc_count(&self) -> usize {
        array_len(self.locs)
    }
}

impl Postings {
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every entry, in order, reading the side lists as it goes.
    pub fn iter(&self) -> impl Iterator<Item = Posting<'_>> {
        let (mut forms, mut metas) = (
            self.forms.iter().peekable(),
            self.meta_ends.iter().peekable(),
        );
        let (mut locs_start, mut meta_start) = (0, 0);
        self.entries
            .iter()
            .enumerate()
            .map(move |(i, &(word, locs_end))| {
                let i = i as u32;
                let form = forms.next_if(|f| f.0 == i).map(|f| f.1);
                let meta = match metas.next_if(|m| m.0 == i) {
                    Some(&(_, end)) => {
                        let meta = &self.meta[meta_start as usize..end as usize];
                        meta_start = end;
                        meta
                    }
                    None => &[],
                };
                let locs = &self.locs[locs_start as usize..locs_end as usize];
                locs_start = locs_end;
                Posting {
                    word,
                    form,
                    locs,
                    meta,
                }
            })
    }

    /// Adds an entry: `word` in `form` ([`PLAIN`] or one with diacritics)
    /// at `text` (by weight and position) and in the meta at `meta`.
    fn push(&mut self, word: u32, form: u32, text: &[Hit], meta: &[Hit]) {
        let entry = self.entries.len() as u32;
        let mut e = Cbor(std::mem::take(&mut self.locs));
        pack(text, &mut e);
        self.locs = e.0;
        self.entries.push((word, self.locs.len() as u32));
        if form != PLAIN {
            self.forms.push((entry, form));
        }
        if !meta.is_empty() {
            self.meta
                .extend(meta.iter().map(|h| (h.weight, h.position)));
            self.meta_ends.push((entry, self.meta.len() as u32));
        }
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

static BUILDS: AtomicU64 = AtomicU64::new(1);

impl Words {
    pub fn new(language: &str) -> Words {
        Words {
            build: BUILDS.fetch_add(1, Ordering::Relaxed),
            stemmer: stemmer(language),
            table: Mutex::new(Table::default()),
            live: AtomicUsize::new(0),
        }
    }

    /// Records how many words the word index just made had postings.
    pub fn set_live(&self, words: usize) {
        self.live.store(words, Ordering::Relaxed);
    }

    /// Whether most of the words numbered are no longer on any page (a
    /// session's words only grow: text edited away, pages removed), so
    /// that starting afresh costs less than carrying them: every word
    /// index goes through them all.
    pub fn outgrown(&self) -> bool {
        let numbered = self.with_words(<[_]>::len);
        numbered > 2 * self.live.load(Ordering::Relaxed) + 1000
    }

    /// The word numbered `n`.
    pub fn with_words<T>(&self, f: impl FnOnce(&[Box<str>]) -> T) -> T {
        f(&self.table.lock().expect("the word table").words)
    }

    /// What `raw` splits into, from this thread's memo.
    fn split_in(&self, memo: &mut Memo, raw: &str) -> Split {
        let key = crate::hash::content_hash(raw.as_bytes());
        memo.get(key, || {
            let stemmer = self.stemmer.as_ref();
            let mut words = get_indexable_words(raw, stemmer, &WORD_SYMBOLS);
            let base = words.len();
            let tails = get_dotted_tails(raw, stemmer, &WORD_SYMBOLS, &words);
            words.extend(tails);
            let mut table = self.table.lock().expect("the word table");
            let numbered = words.iter().map(|w| Indexable {
                word: table.number(&w.stemmed),
                original: w.original.as_deref().map_or(PLAIN, |o| table.number(o)),
                compound: w.is_compound_part,
            });
            (numbered.collect(), base)
        })
    }

    /// The words and fragment of a parsed page at `url`.
    pub fn page(&self, url: &str, mut parsed: Parsed) -> PageWords {
        tidy(&mut parsed);
        let (hits, meta_hits, content, anchors, last) = MEMO.with_borrow_mut(|memo| {
            memo.start(self.build);
            let mut hits = HITS.take();
            hits.clear();
            hits.reserve(parsed.digest.len() / 6);
            let mut anchors = Vec::new();
            let mut content = String::with_capacity(parsed.digest.len());
            let mut position: u32 = 0;
            let mut last = 0;
            let mut weights = vec![DEFAULT_WEIGHT];
            let zero_width = parsed.digest.contains('\u{200B}');
            for word in white_space::words(&parsed.digest) {
                if word.starts_with('_')
                    && marker(word, &parsed, position, &mut weights, &mut anchors)
                {
                    continue;
                }
                let base_word = if zero_width && word.contains('\u{200B}') {
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
                let split = self.split_in(memo, &base_word);
                let compounds = memo.compounds(split);
                let partial = if compounds > 0 && weight > 0 {
                    (weight / u8::try_from(compounds).unwrap_or(u8::MAX)).max(1)
                } else {
                    0
                };
                for w in memo.words(split) {
                    hits.push(Hit {
                        word: w.word,
                        original: w.original,
                        weight: u16::from(if w.compound { partial } else { weight }),
                        position,
                    });
                }
                last = position;
                position += 1;
            }
            if content.ends_with(' ') {
                content.pop();
            }
            let mut meta_hits = Vec::new();
            for (field, value) in parsed.meta.values().enumerate() {
                for (at, word) in white_space::words(value).enumerate() {
                    let split = self.split_in(memo, word);
                    for w in memo.words(split).take(memo.base(split)) {
                        meta_hits.push(Hit {
                            word: w.word,
                            original: w.original,
                            weight: u16::try_from(field).unwrap_or(u16::MAX),
                            position: u32::try_from(at).unwrap_or(u32::MAX),
                        });
                    }
                }
            }
            (hits, meta_hits, content, anchors, last)
        });
        let postings = if hits.is_empty() {
            // Pagefind leaves out a page with no words to index.
            Postings::default()
        } else {
            self.postings(&hits, meta_hits)
        };
        HITS.set(hits);
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

    /// A page's hits, grouped by word and form and packed as Pagefind
    /// packs them: for each word (by number), its plain form, then its
    /// forms with diacritics in the text, then those only in the meta
    /// (each by the form's text, the order Pagefind's maps keep).
    fn postings(&self, hits: &[Hit], mut meta_hits: Vec<Hit>) -> Postings {
        let (mut grouped, groups) = group_by_word(hits);
        meta_hits.sort_unstable_by_key(|h| (h.word, h.original, h.weight, h.position));
        let mut meta_groups = meta_hits.chunk_by(|a, b| a.word == b.word).peekable();
        let mut out = Postings {
            entries: Vec::with_capacity(groups.len()),
            locs: Vec::with_capacity(hits.len() * 2),
            ..Postings::default()
        };
        let mut start = 0;
        for (word, end) in groups {
            let group = &mut grouped[start..end];
            start = end;
            // Words only in the meta, before this one.
            while let Some(meta) = meta_groups.next_if(|g| g[0].word < word) {
                self.push_word(&mut out, meta[0].word, &[], meta);
            }
            // Within a word, Pagefind orders positions by form, then weight
            // (the usual weight first), then position.
            let key = |h: &Hit| (h.original, weight_key(h.weight), h.position);
            if !group.is_sorted_by_key(key) {
                group.sort_unstable_by_key(key);
            }
            let meta = meta_groups
                .next_if(|g| g[0].word == word)
                .unwrap_or_default();
            self.push_word(&mut out, word, group, meta);
        }
        for meta in meta_groups {
            self.push_word(&mut out, meta[0].word, &[], meta);
        }
        GROUPED.set(grouped);
        out.entries.shrink_to_fit();
        out.locs.shrink_to_fit();
        out
    }

    /// One word's entries: `text` its hits in the text (by form, weight
    /// and position), `meta` in the meta (by form, field and position).
    fn push_word(&self, out: &mut Postings, word: u32, text: &[Hit], meta: &[Hit]) {
        let by_form = |hits: &[Hit], form: u32| -> std::ops::Range<usize> {
            let from = hits.partition_point(|h| h.original < form);
            from..from + hits[from..].partition_point(|h| h.original == form)
        };
        let mut push = |form: u32, text: &[Hit], meta: &[Hit]| out.push(word, form, text, meta);
        let (plain_text, plain_meta) = (by_form(text, PLAIN), by_form(meta, PLAIN));
        if !plain_text.is_empty() || !plain_meta.is_empty() {
            push(PLAIN, &text[plain_text.clone()], &meta[plain_meta.clone()]);
        }
        let text = &text[..plain_text.start];
        let meta = &meta[..plain_meta.start];
        if text.is_empty() && meta.is_empty() {
            return;
        }
        // Forms with diacritics: those in the text, then those only in the
        // meta, each by the form's text.
        let mut forms: Vec<(bool, u32)> = text
            .chunk_by(|a, b| a.original == b.original)
            .map(|g| (false, g[0].original))
            .collect();
        for g in meta.chunk_by(|a, b| a.original == b.original) {
            if by_form(text, g[0].original).is_empty() {
                forms.push((true, g[0].original));
            }
        }
        if forms.len() > 1 {
            self.with_words(|table| {
                forms.sort_by(|a, b| (a.0, &table[a.1 as usize]).cmp(&(b.0, &table[b.1 as usize])));
            });
        }
        for (_, form) in forms {
            push(form, &text[by_form(text, form)], &meta[by_form(meta, form)]);
        }
    }
}

/// A page's hits (in position order) grouped by word: the words by number,
/// each with where its hits end, and each word's hits in the order they
/// came. A counting sort, through this thread's table from a word's number
/// to its place on the page (cleared again before it returns): a page has
/// a thousand hits of a few hundred words. The grouped hits are in this
/// thread's buffer, [`GROUPED`], which the caller gives back.
fn group_by_word(hits: &[Hit]) -> (Vec<Hit>, Vec<(u32, usize)>) {
    thread_local! {
        static PLACES: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    }
    let Some(&first) = hits.first() else {
        return (Vec::new(), Vec::new());
    };
    PLACES.with_borrow_mut(|places| {
        // (word, its hits), in the order the words first came.
        let mut words: Vec<(u32, usize)> = Vec::new();
        for hit in hits {
            let word = hit.word as usize;
            if word >= places.len() {
                places.resize(word + 1, 0);
            }
            if places[word] == 0 {
                words.push((hit.word, 0));
                places[word] = words.len() as u32;
            }
            words[places[word] as usize - 1].1 += 1;
        }
        let mut order: Vec<u32> = (0..words.len() as u32).collect();
        order.sort_unstable_by_key(|&at| words[at as usize].0);
        let mut next = vec![0; words.len()];
        let mut groups = Vec::with_capacity(words.len());
        let mut end = 0;
        for at in order {
            let (word, count) = words[at as usize];
            next[at as usize] = end;
            end += count;
            groups.push((word, end));
        }
        // This thread's buffer, given back by the caller.
        let mut grouped = GROUPED.take();
        grouped.clear();
        grouped.resize(hits.len(), first);
        for hit in hits {
            let at = places[hit.word as usize] as usize - 1;
            grouped[next[at]] = *hit;
            next[at] += 1;
        }
        for (word, _) in words {
            places[word as usize] = 0;
        }
        (grouped, groups)
    })
}

/// The order Pagefind gives a word's positions: the usual weight first.
fn weight_key(weight: u16) -> u16 {
    if weight == 25 { 0 } else { weight }
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

/// Pagefind's `positions_to_packed_page`, as a CBOR array: positions
/// sorted by weight (the usual first) and position, delta encoded, with a
/// change of weight written as `-(weight + 1)` and then the absolute
/// position.
fn pack(hits: &[Hit], out: &mut Cbor) {
    const USUAL: u16 = 25;
    let mut current = USUAL;
    let changes = hits
        .iter()
        .filter(|hit| std::mem::replace(&mut current, hit.weight) != hit.weight)
        .count();
    out.array(hits.len() + changes);
    out.0.reserve(hits.len() + changes * 3);
    let (mut current, mut last) = (USUAL, 0);
    for hit in hits {
        if hit.weight != current {
            out.i32(-i32::from(hit.weight) - 1);
            out.i32(hit.position as i32);
            current = hit.weight;
        } else {
            out.i32((hit.position - last) as i32);
        }
        last = hit.position;
    }
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
