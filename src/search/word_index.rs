//! The word index: every word of the site with its postings, page by page,
//! sorted by word and cut into chunks (`index/*.pf_index`), CBOR encoded as
//! Pagefind 1.6.0 encodes its `WordIndex` (`src/index/`, MIT licence).
//!
//! Pagefind builds a struct per word and page, with its own vectors, and
//! merges them; at 10k pages that is millions of small allocations. Here
//! the postings stay where each page put them ([`Postings`]) until the
//! word index is made: in runs of pages at once, one pass over a run sizes
//! each word's list, a second writes each page's entries at their words'
//! places (and drops the page's postings); the chunks are cut from that,
//! in parallel, each handed on as soon as it is made.

use rayon::prelude::*;

use super::bundle::PageRecord;
use super::cbor::Cbor;
use super::words::{Posting, Words};

/// Pagefind's `index_chunk_size`: postings in a chunk of the word index.
const CHUNK_SIZE: usize = 20_000;

/// A chunk of the word index: its first and last words (cut to the
/// shortest prefixes that tell it from its neighbours) and what was made of
/// its CBOR.
pub struct Chunk<T> {
    pub from: String,
    pub to: String,
    pub made: T,
}

/// The word index of `pages` (numbered in order), whose meta fields the
/// site's `fields` number: each chunk's CBOR is handed to `make` as it is
/// encoded (so that no more than a chunk a thread is held). The pages'
/// postings are read once, and dropped: a build holds them until now.
pub fn chunks<T: Send>(
    words: &Words,
    pages: &mut [PageRecord],
    fields: &[String],
    make: impl Fn(Vec<u8>) -> T + Sync,
) -> Vec<Chunk<T>> {
    let field_ids: Vec<Vec<u16>> = pages
        .iter()
        .map(|page| {
            let id = |f| u16::try_from(fields.binary_search(f).unwrap_or(0)).unwrap_or(u16::MAX);
            page.meta_fields.iter().map(id).collect()
        })
        .collect();
    let table_len = words.with_words(<[_]>::len);
    let (plain, mut forms) = Plain::encode(pages, &field_ids, table_len);
    // By word, and then in page order, as Pagefind meets them.
    forms.sort_by_key(|f| f.word);
    let mut sizes = plain.sizes.clone();
    for form in &forms {
        sizes[form.word as usize] += size(&form.posting());
    }
    // Each form counts once more towards its word's size.
    let mut distinct: Vec<(u32, u32)> = forms.iter().map(|f| (f.word, f.form)).collect();
    distinct.sort_unstable();
    distinct.dedup();
    for (word, _) in distinct {
        sizes[word as usize] += 1;
    }
    words.with_words(|table| {
        let mut sorted: Vec<usize> = (0..table_len).filter(|&w| sizes[w] > 0).collect();
        words.set_live(sorted.len());
        if sorted.is_empty() {
            return Vec::new();
        }
        sorted.par_sort_unstable_by(|&a, &b| table[a].cmp(&table[b]));
        let mut cuts = Vec::new();
        let mut size = 0;
        for (i, &w) in sorted.iter().enumerate() {
            size += sizes[w];
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
        let index = Index {
            table,
            plain: &plain,
            forms: &forms,
            field_ids: &field_ids,
        };
        ranges
            .into_par_iter()
            .zip(names)
            .map(|(range, (from, to))| Chunk {
                from,
                to,
                made: make(index.chunk(range)),
            })
            .collect()
    })
}

/// An entry in another form than the plain one (rare), and its page's
/// number: copied out of the page's postings, which are dropped once read.
struct Form {
    page: u32,
    word: u32,
    form: u32,
    locs: Box<[u8]>,
    meta: Box<[(u16, u32)]>,
}

impl Form {
    fn of(page: u32, posting: &Posting, form: u32) -> Form {
        Form {
            page,
            word: posting.word,
            form,
            locs: posting.locs.into(),
            meta: posting.meta.into(),
        }
    }

    fn posting(&self) -> Posting<'_> {
        Posting {
            word: self.word,
            form: Some(self.form),
            locs: &self.locs,
            meta: &self.meta,
        }
    }
}

/// A posting's size as Pagefind counts it towards a chunk: its positions,
/// its meta positions and one.
fn size(posting: &Posting) -> usize {
    posting.loc_count() + meta_len(posting.meta) + 1
}

/// Every word's plain-form pages, encoded, in runs of consecutive pages
/// ([`Block`]s) made in parallel: a word's list is its entries in each
/// block, in block order. Within a block, one pass over its pages' postings
/// sizes each word's entries (and copies out the entries in other forms),
/// and a second writes each entry at its word's place and drops the page's
/// postings. A block's bytes are a fraction of the whole, so the second
/// pass's scattered writes mostly stay in the cache.
struct Plain {
    /// By word: its size as Pagefind counts it (positions, meta positions
    /// and one per page), from its plain-form entries.
    sizes: Vec<usize>,
    /// By word: how many pages have its plain form.
    counts: Vec<u32>,
    blocks: Vec<Block>,
}

/// One run of pages' plain-form entries, by word.
struct Block {
    /// By word: where its entries start in `bytes` (and the next word's,
    /// where they end).
    starts: Vec<usize>,
    bytes: Vec<u8>,
}

/// What the first pass learns of one block.
struct Sized {
    /// By word, as [`Plain`]'s.
    sizes: Vec<usize>,
    counts: Vec<u32>,
    /// By word: its entries' bytes, the first one's page number written
    /// as if it were the word's first page (one byte): the blocks before
    /// decide it.
    lens: Vec<usize>,
    /// By word: its first and last page in the block.
    first: Vec<u32>,
    last: Vec<u32>,
    forms: Vec<Form>,
}

/// The fewest pages in a block: enough that each block's work outweighs
/// its tables (a few numbers per word of the site).
const BLOCK_PAGES: usize = 256;

impl Plain {
    fn encode(
        pages: &mut [PageRecord],
        field_ids: &[Vec<u16>],
        words: usize,
    ) -> (Plain, Vec<Form>) {
        let threads = rayon::current_num_threads().max(1);
        let block_len = pages.len().div_ceil(threads * 2).max(BLOCK_PAGES);
        let sized: Vec<Sized> = pages
            .par_chunks(block_len)
            .enumerate()
            .map(|(b, block)| Plain::size(block, (b * block_len) as u32, field_ids, words))
            .collect();
        // A block's first entry of a word counts its page from the word's
        // last page in the blocks before.
        let mut sizes = vec![0usize; words];
        let mut counts = vec![0u32; words];
        let mut last = vec![0u32; words];
        let mut layouts = Vec::with_capacity(sized.len());
        let mut forms = Vec::new();
        for mut block in sized {
            let before = last.clone();
            let mut starts = vec![0usize; words + 1];
            for w in 0..words {
                starts[w + 1] = starts[w];
                if block.counts[w] > 0 {
                    sizes[w] += block.sizes[w];
                    counts[w] += block.counts[w];
                    starts[w + 1] += block.lens[w] + uint_len(block.first[w] - last[w]) - 1;
                    last[w] = block.last[w];
                }
            }
            forms.append(&mut block.forms);
            layouts.push((before, starts));
        }
        let blocks = pages
            .par_chunks_mut(block_len)
            .zip(layouts)
            .enumerate()
            .map(|(b, (block, (before, starts)))| {
                Plain::write(block, (b * block_len) as u32, field_ids, before, starts)
            })
            .collect();
        let plain = Plain {
            sizes,
            counts,
            blocks,
        };
        (plain, forms)
    }

    /// The first pass over a block whose first page is numbered `from`.
    fn size(pages: &[PageRecord], from: u32, field_ids: &[Vec<u16>], words: usize) -> Sized {
        let mut out = Sized {
            sizes: vec![0; words],
            counts: vec![0; words],
            lens: vec![0; words],
            first: vec![0; words],
            last: vec![0; words],
            forms: Vec::new(),
        };
        let mut item = Cbor::default();
        for (number, page) in (from..).zip(pages) {
            for posting in page.postings.iter() {
                if let Some(form) = posting.form {
                    out.forms.push(Form::of(number, &posting, form));
                    continue;
                }
                let w = posting.word as usize;
                let delta = if out.counts[w] == 0 {
                    out.first[w] = number;
                    0
                } else {
                    number - out.last[w]
                };
                out.sizes[w] += size(&posting);
                out.counts[w] += 1;
                let field_ids = &field_ids[number as usize];
                out.lens[w] += page_len(delta, &posting, field_ids, &mut item);
                out.last[w] = number;
            }
        }
        out
    }

    /// The second pass over a block whose first page is numbered `from`:
    /// each entry written at its word's place in the block, each page's
    /// postings dropped. `last` holds each word's last page in the blocks
    /// before (0 where none has it).
    fn write(
        pages: &mut [PageRecord],
        from: u32,
        field_ids: &[Vec<u16>],
        mut last: Vec<u32>,
        starts: Vec<usize>,
    ) -> Block {
        let mut at = starts.clone();
        let mut bytes = vec![0u8; starts.last().copied().unwrap_or(0)];
        let mut item = Cbor::default();
        for (number, page) in (from..).zip(pages) {
            let postings = std::mem::take(&mut page.postings);
            for posting in postings.iter().filter(|p| p.form.is_none()) {
                let w = posting.word as usize;
                item.0.clear();
                encode_page(
                    &mut item,
                    number - last[w],
                    &posting,
                    &field_ids[number as usize],
                );
                last[w] = number;
                bytes[at[w]..at[w] + item.0.len()].copy_from_slice(&item.0);
                at[w] += item.0.len();
                debug_assert!(at[w] <= starts[w + 1], "page_len agrees with encode_page");
            }
        }
        Block { starts, bytes }
    }
}

/// How many bytes [`encode_page`] writes (`scratch` for the rare page
/// with meta positions, which it encodes to count).
fn page_len(delta: u32, posting: &Posting, field_ids: &[u16], scratch: &mut Cbor) -> usize {
    if posting.meta.is_empty() {
        // `[delta, locs, []]`: two one-byte heads.
        return 2 + uint_len(delta) + posting.locs.len();
    }
    scratch.0.clear();
    encode_page(scratch, delta, posting, field_ids);
    scratch.0.len()
}

/// How many bytes CBOR takes for the unsigned integer `n`.
fn uint_len(n: u32) -> usize {
    match n {
        0..=23 => 1,
        24..=0xff => 2,
        0x100..=0xffff => 3,
        _ => 5,
    }
}

/// What the chunks are made from.
struct Index<'a> {
    table: &'a [Box<str>],
    plain: &'a Plain,
    forms: &'a [Form],
    field_ids: &'a [Vec<u16>],
}

impl Index<'_> {
    /// A chunk, as `WordIndex { words: Vec<PackedWord> }` encodes: each
    /// word `[word, [page…], [[form, [page…]]…]]`, each page `[page number
    /// (from the one before), locs, meta locs]`.
    fn chunk(&self, words: &[usize]) -> Vec<u8> {
        let mut e = Cbor::default();
        e.array(1);
        e.array(words.len());
        for &w in words {
            e.array(3);
            e.str(&self.table[w]);
            e.array(self.plain.counts[w] as usize);
            for block in &self.plain.blocks {
                e.raw(&block.bytes[block.starts[w]..block.starts[w + 1]]);
            }
            let from = self.forms.partition_point(|f| (f.word as usize) < w);
            let to = from + self.forms[from..].partition_point(|f| f.word as usize == w);
            // Forms in the order first seen, each with its pages.
            let mut forms: Vec<(u32, Vec<&Form>)> = Vec::new();
            for entry in &self.forms[from..to] {
                let form = entry.form;
                match forms.iter_mut().find(|f| f.0 == form) {
                    Some(f) => f.1.push(entry),
                    None => forms.push((form, vec![entry])),
                }
            }
            e.array(forms.len());
            for (form, list) in &forms {
                e.array(2);
                e.str(&self.table[*form as usize]);
                e.array(list.len());
                let mut last = 0;
                for entry in list {
                    let field_ids = &self.field_ids[entry.page as usize];
                    encode_page(&mut e, entry.page - last, &entry.posting(), field_ids);
                    last = entry.page;
                }
            }
        }
        e.0
    }
}

/// One page of a word's list: `[page number (from the one before), locs,
/// meta locs]`.
fn encode_page(e: &mut Cbor, delta: u32, posting: &Posting, field_ids: &[u16]) {
    e.array(3);
    e.u64(u64::from(delta));
    e.raw(posting.locs);
    if posting.meta.is_empty() {
        e.array(0);
        return;
    }
    let meta = pack_meta(posting.meta, field_ids);
    e.array(meta.len());
    for loc in meta {
        e.i32(loc);
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
    fn a_pages_length_is_what_encode_page_writes() {
        let locs = {
            let mut e = Cbor::default();
            e.array(2);
            e.i32(3);
            e.i32(-26);
            e.0
        };
        let meta = [(0, 0), (1, 300)];
        for meta in [&meta[..0], &meta[..]] {
            let posting = Posting {
                word: 0,
                form: None,
                locs: &locs,
                meta,
            };
            for delta in [0, 23, 24, 255, 256, 65_535, 65_536, u32::MAX] {
                let mut written = Cbor::default();
                encode_page(&mut written, delta, &posting, &[0, 7]);
                let len = page_len(delta, &posting, &[0, 7], &mut Cbor::default());
                assert_eq!(len, written.0.len(), "delta {delta}, meta {meta:?}");
            }
        }
    }

    #[test]
    fn positions_of_a_meta_word_are_grouped_by_field() {
        // The page's fields 0 and 1 are the site's 0 and 3.
        let meta = [(0, 0), (0, 5), (1, 2)];
        assert_eq!(pack_meta(&meta, &[0, 3]), [-1, 0, 5, -4, 2]);
        assert_eq!(meta_len(&meta), 5);
    }
}
