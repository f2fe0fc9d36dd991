//! The word index: every word of the site with its postings, page by page,
//! sorted by word and cut into chunks (`index/*.pf_index`), CBOR encoded as
//! Pagefind 1.6.0 encodes its `WordIndex` (`src/index/`, MIT licence).
//!
//! Pagefind builds a struct per word and page, with its own vectors, and
//! merges them; at 10k pages that is millions of small allocations. Here
//! the postings stay where each page put them ([`Postings`]): one pass
//! counts them by word, a second lists (page, entry) pairs by word in one
//! flat array, and each chunk is encoded straight from those, in parallel.

use rayon::prelude::*;

use super::bundle::PageRecord;
use super::cbor::Cbor;
use super::words::{Posting, Words};

/// Pagefind's `index_chunk_size`: postings in a chunk of the word index.
const CHUNK_SIZE: usize = 20_000;

/// A chunk of the word index: its first and last words (cut to the
/// shortest prefixes that tell it from its neighbours) and its CBOR.
pub struct Chunk {
    pub from: String,
    pub to: String,
    pub bytes: Vec<u8>,
}

/// The word index of `pages` (numbered in order), whose meta fields the
/// site's `fields` number.
pub fn chunks(words: &Words, pages: &[PageRecord], fields: &[String]) -> Vec<Chunk> {
    let field_ids: Vec<Vec<u16>> = pages
        .iter()
        .map(|page| {
            let id = |f| u16::try_from(fields.binary_search(f).unwrap_or(0)).unwrap_or(u16::MAX);
            page.meta_fields.iter().map(id).collect()
        })
        .collect();
    let table_len = words.with_words(<[_]>::len);
    // Postings per word, and each word's size as Pagefind counts it.
    let mut starts = vec![0u32; table_len + 1];
    let mut sizes = vec![0usize; table_len];
    for page in pages {
        for posting in page.postings.iter() {
            let w = posting.word as usize;
            starts[w + 1] += 1;
            sizes[w] += posting.loc_count() + meta_len(posting.meta) + 1;
        }
    }
    for w in 0..table_len {
        starts[w + 1] += starts[w];
    }
    let mut filled = starts.clone();
    let mut by_word = vec![(0u32, 0u32); starts[table_len] as usize];
    for (number, page) in pages.iter().enumerate() {
        for (entry, posting) in page.postings.iter().enumerate() {
            let at = &mut filled[posting.word as usize];
            by_word[*at as usize] = (number as u32, entry as u32);
            *at += 1;
        }
    }
    let postings = |w: usize| &by_word[starts[w] as usize..starts[w + 1] as usize];
    words.with_words(|table| {
        if by_word.is_empty() {
            return Vec::new();
        }
        let mut sorted: Vec<usize> = (0..table_len)
            .filter(|&w| starts[w + 1] > starts[w])
            .collect();
        sorted.par_sort_unstable_by(|&a, &b| table[a].cmp(&table[b]));
        // Variants count once each towards the size.
        let forms = |w: usize| {
            let mut forms: Vec<u32> = postings(w)
                .iter()
                .filter_map(|&(p, e)| pages[p as usize].postings.get(e as usize).form)
                .collect();
            forms.sort_unstable();
            forms.dedup();
            forms.len()
        };
        let mut cuts = Vec::new();
        let mut size = 0;
        for (i, &w) in sorted.iter().enumerate() {
            size += sizes[w] + forms(w);
            if size >= CHUNK_SIZE {
                cuts.push(i + 1);
                size = 0;
            }
        }
        if cuts.last() != Some(&sorted.len()) {
            cuts.push(sorted.len());
        }
        let ranges: Vec<&[usize]> = std::iter::once(0)
            .chain(cuts.iter().copied())
            .zip(cuts.iter().copied())
            .map(|(a, b)| &sorted[a..b])
            .collect();
        let names = chunk_names(
            ranges
                .iter()
                .map(|r| (&*table[r[0]], &*table[r[r.len() - 1]]))
                .collect(),
        );
        ranges
            .into_par_iter()
            .zip(names)
            .map(|(range, (from, to))| {
                let mut e = Cbor::default();
                encode_chunk(&mut e, table, range, &postings, pages, &field_ids);
                Chunk {
                    from,
                    to,
                    bytes: e.0,
                }
            })
            .collect()
    })
}

/// A chunk, as `WordIndex { words: Vec<PackedWord> }` encodes: each word
/// `[word, [page…], [[form, [page…]]…]]`, each page `[page number (from
/// the one before), locs, meta locs]`.
fn encode_chunk<'a>(
    e: &mut Cbor,
    table: &[Box<str>],
    words: &[usize],
    postings: &impl Fn(usize) -> &'a [(u32, u32)],
    pages: &[PageRecord],
    field_ids: &[Vec<u16>],
) {
    e.array(1);
    e.array(words.len());
    for &w in words {
        let all = postings(w);
        let get = |&(p, entry): &(u32, u32)| (p, pages[p as usize].postings.get(entry as usize));
        let plain: Vec<(u32, Posting)> = all
            .iter()
            .map(get)
            .filter(|(_, x)| x.form.is_none())
            .collect();
        // Forms in the order first seen, each with its pages.
        let mut forms: Vec<(u32, Vec<(u32, Posting)>)> = Vec::new();
        for (p, posting) in all.iter().map(get) {
            let Some(form) = posting.form else { continue };
            match forms.iter_mut().find(|f| f.0 == form) {
                Some(f) => f.1.push((p, posting)),
                None => forms.push((form, vec![(p, posting)])),
            }
        }
        e.array(3);
        e.str(&table[w]);
        encode_pages(e, &plain, field_ids);
        e.array(forms.len());
        for (form, list) in &forms {
            e.array(2);
            e.str(&table[*form as usize]);
            encode_pages(e, list, field_ids);
        }
    }
}

fn encode_pages(e: &mut Cbor, list: &[(u32, Posting)], field_ids: &[Vec<u16>]) {
    e.array(list.len());
    let mut last = 0;
    for (page, posting) in list {
        e.array(3);
        e.u64(u64::from(page - last));
        last = *page;
        e.raw(posting.locs);
        if posting.meta.is_empty() {
            e.array(0);
            continue;
        }
        let meta = pack_meta(posting.meta, &field_ids[*page as usize]);
        e.array(meta.len());
        for loc in meta {
            e.i32(loc);
        }
    }
}

/// The length of [`pack_meta`]'s result.
fn meta_len(meta: &[(u16, u32)]) -> usize {
    meta.len() + meta.chunk_by(|a, b| a.0 == b.0).count()
}

/// Pagefind's `meta_positions_to_packed`: positions by field, a change of
/// field written as `-(field + 1)`, positions delta encoded within one.
pub fn pack_meta(meta: &[(u16, u32)], field_ids: &[u16]) -> Vec<i32> {
    let mut out = Vec::with_capacity(meta_len(meta));
    let mut current = None;
    let mut last = 0;
    for &(field, position) in meta {
        let field = field_ids[field as usize];
        if current != Some(field) {
            out.push(-(i32::from(field) + 1));
            current = Some(field);
            last = 0;
        }
        out.push((position - last) as i32);
        last = position;
    }
    out
}

/// Pagefind's `chunk_meta`: each chunk's first and last word, cut to the
/// shortest prefixes that still tell neighbouring chunks apart.
fn chunk_names(ends: Vec<(&str, &str)>) -> Vec<(String, String)> {
    let mut named: Vec<(String, String)> = ends
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    for i in 1..named.len() {
        let (a, b) = prefixes(&named[i - 1].1, &named[i].0);
        if a >= named[i - 1].0 {
            named[i - 1].1 = a;
        }
        named[i].0 = b;
    }
    named
}

fn prefixes(a: &str, b: &str) -> (String, String) {
    let common = b.chars().zip(a.chars()).take_while(|(x, y)| x == y).count();
    (
        a.chars().take(common + 1).collect(),
        b.chars().take(common + 1).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_names_are_the_shortest_prefixes_that_tell_them_apart() {
        let names = chunk_names(vec![
            ("apple", "apple"),
            ("apricot", "banana"),
            ("peach", "peach"),
        ]);
        // Pagefind's own test of `chunk_meta`.
        assert_eq!(
            names,
            [
                ("apple".to_string(), "apple".to_string()),
                ("apr".into(), "b".into()),
                ("p".into(), "peach".into())
            ]
        );
    }

    #[test]
    fn positions_of_a_meta_word_are_grouped_by_field() {
        // The page's fields 0 and 1 are the site's 0 and 3.
        let meta = [(0, 0), (0, 5), (1, 2)];
        assert_eq!(pack_meta(&meta, &[0, 3]), [-1, 0, 5, -4, 2]);
        assert_eq!(meta_len(&meta), 5);
    }
}
