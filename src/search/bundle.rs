//! The search bundle's index files, from every page's words: the word
//! index in chunks (`index/*.pf_index`), the filters (`filter/*.pf_filter`)
//! and the meta index (`pagefind.*.pf_meta`), each CBOR, gzipped behind
//! Pagefind's `pagefind_dcd` signature, and named by its SHA-1 as Pagefind
//! names them. The page fragments are made as pages are indexed
//! ([`fragment_file`]).
//!
//! The encoding is Pagefind 1.6.0's (`src/index/`, MIT licence, Copyright
//! (c) 2022 CloudCannon), which its search script reads: the same structs,
//! the same chunking, delta encoding and hash names.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use flate2::Compression;
use flate2::write::GzEncoder;
use minicbor::Encode;
use rayon::prelude::*;
use sha1::{Digest, Sha1};

use super::words::{Fragment, Postings, Words};

/// Pagefind's `index_chunk_size`: postings in a chunk of the word index.
const CHUNK_SIZE: usize = 20_000;

/// One page, as the bundle takes it.
pub struct PageRecord {
    /// The page has a `data-pagefind-body`.
    pub custom_body: bool,
    pub postings: Postings,
    pub word_count: usize,
    pub filters: BTreeMap<String, Vec<String>>,
    pub sort: BTreeMap<String, String>,
    /// The page's meta fields, in order (its words number them so).
    pub meta_fields: Vec<String>,
    /// `{language}_{sha1 of the fragment}`.
    pub fragment_hash: String,
    /// The fragment file's bytes.
    pub fragment: Vec<u8>,
}

/// The fragment of a page, as its file's bytes and its full hash name.
pub fn fragment_file(language: &str, fragment: &Fragment) -> (String, Vec<u8>) {
    let json = serde_json::to_string(fragment).expect("a fragment serialises");
    (
        format!("{language}_{}", full_hash(json.as_bytes())),
        gzip(json.as_bytes()),
    )
}

/// What the bundle's language entry records.
pub struct Index {
    pub meta_hash: String,
    pub page_count: usize,
    /// Files relative to the bundle's folder.
    pub files: Vec<(String, Vec<u8>)>,
}

#[derive(Encode)]
struct MetaIndex {
    #[n(0)]
    version: String,
    #[n(1)]
    pages: Vec<MetaPage>,
    #[n(2)]
    index_chunks: Vec<MetaChunk>,
    #[n(3)]
    filters: Vec<MetaFilter>,
    #[n(4)]
    sorts: Vec<MetaSort>,
    #[n(5)]
    meta_fields: Vec<String>,
}

#[derive(Encode, Debug, PartialEq)]
struct MetaChunk {
    #[n(0)]
    from: String,
    #[n(1)]
    to: String,
    #[n(2)]
    hash: String,
}

#[derive(Encode)]
struct MetaPage {
    #[n(0)]
    hash: String,
    #[n(1)]
    word_count: u32,
    #[n(2)]
    group_hash: String,
}

#[derive(Encode)]
struct MetaFilter {
    #[n(0)]
    filter: String,
    #[n(1)]
    hash: String,
}

#[derive(Encode)]
struct MetaSort {
    #[n(0)]
    sort: String,
    #[n(1)]
    pages: Vec<usize>,
}

#[derive(Encode)]
struct WordIndex<'a> {
    #[n(0)]
    words: &'a [PackedWord],
}

#[derive(Encode, Clone, Debug)]
struct PackedWord {
    #[n(0)]
    word: String,
    #[n(1)]
    pages: Vec<PackedPage>,
    #[n(2)]
    additional_variants: Vec<PackedVariant>,
}

#[derive(Encode, Clone, Debug)]
struct PackedVariant {
    #[n(0)]
    form: String,
    #[n(1)]
    pages: Vec<PackedPage>,
    /// The form's number, while variants are merged.
    #[cbor(skip)]
    number: u32,
}

#[derive(Encode, Clone, Debug)]
struct PackedPage {
    #[n(0)]
    page_number: usize,
    #[n(1)]
    locs: Vec<i32>,
    #[n(2)]
    meta_locs: Vec<i32>,
}

#[derive(Encode)]
struct FilterIndex<'a> {
    #[n(0)]
    filter: &'a str,
    #[n(1)]
    values: Vec<PackedValue<'a>>,
}

#[derive(Encode)]
struct PackedValue<'a> {
    #[n(0)]
    value: &'a str,
    #[n(1)]
    pages: &'a [usize],
}

/// Pagefind's file hash: SHA-1, each byte in hex without a leading zero.
pub fn full_hash(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(40);
    for b in Sha1::digest(bytes) {
        let _ = write!(out, "{b:x}");
    }
    out
}

/// A bundle file's bytes: gzipped, behind Pagefind's signature.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::with_capacity(bytes.len() / 3), Compression::new(6));
    gz.write_all(b"pagefind_dcd").expect("writing to memory");
    gz.write_all(bytes).expect("writing to memory");
    gz.finish().expect("writing to memory")
}

/// `hash` cut to `len` characters, longer while the cut is taken.
fn short(hash: &str, mut len: usize, taken: impl Fn(&str) -> bool) -> &str {
    while len < hash.len() && taken(&hash[..len]) {
        len += 1;
    }
    &hash[..len.min(hash.len())]
}

/// Builds the index of `pages` (in the site's order) in `language`.
/// Pagefind leaves out pages with no words, and pages with no
/// `data-pagefind-body` when some page has one.
/// `None` when no page is left.
pub fn build(
    language: &str,
    version: &str,
    words: &Words,
    pages: Vec<PageRecord>,
) -> Option<Index> {
    let custom_body = pages.iter().any(|p| p.custom_body);
    let pages: Vec<PageRecord> = pages
        .into_iter()
        .filter(|p| (p.custom_body || !custom_body) && !p.postings.is_empty())
        .collect();
    if pages.is_empty() {
        return None;
    }
    let mut meta = MetaIndex {
        version: version.to_string(),
        pages: Vec::new(),
        index_chunks: Vec::new(),
        filters: Vec::new(),
        sorts: sorts(&pages),
        meta_fields: pages
            .iter()
            .flat_map(|p| p.meta_fields.iter().cloned())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
    };
    let mut files = Vec::new();

    // Fragments, named by their hash cut short.
    let prefix = language.len() + 8;
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    let mut filters: BTreeMap<&str, BTreeMap<&str, Vec<usize>>> = BTreeMap::new();
    for (number, page) in pages.iter().enumerate() {
        let name = short(&page.fragment_hash, prefix, |name| {
            names
                .get(name)
                .is_some_and(|full| *full != page.fragment_hash)
        });
        if names
            .insert(name.to_string(), page.fragment_hash.clone())
            .is_none()
        {
            files.push((
                format!("fragment/{name}.pf_fragment"),
                page.fragment.clone(),
            ));
        }
        meta.pages.push(MetaPage {
            hash: name.to_string(),
            word_count: u32::try_from(page.word_count).unwrap_or(u32::MAX),
            group_hash: String::new(),
        });
        for (filter, values) in &page.filters {
            for value in values {
                let pages = filters.entry(filter).or_default().entry(value).or_default();
                pages.push(number);
            }
        }
    }

    // Filters.
    let encoded: Vec<(&str, Vec<u8>)> = filters
        .par_iter()
        .map(|(filter, values)| {
            let index = FilterIndex {
                filter,
                values: values
                    .iter()
                    .map(|(value, pages)| PackedValue { value, pages })
                    .collect(),
            };
            (
                *filter,
                minicbor::to_vec(index).expect("encoding to memory"),
            )
        })
        .collect();
    let mut taken = BTreeSet::new();
    for (filter, bytes) in encoded {
        let hash = format!("{language}_{}", full_hash(&bytes));
        let name = short(&hash, prefix, |name| taken.contains(name)).to_string();
        taken.insert(name.clone());
        files.push((format!("filter/{name}.pf_filter"), gzip(&bytes)));
        meta.filters.push(MetaFilter {
            filter: filter.to_string(),
            hash: name,
        });
    }

    // Words.
    let packed = merge(words, &pages, &meta.meta_fields);
    let chunks = chunk(packed);
    meta.index_chunks = chunk_meta(&chunks);
    let encoded: Vec<(Vec<u8>, Vec<u8>)> = chunks
        .into_par_iter()
        .map(|mut chunk| {
            for word in &mut chunk {
                delta(&mut word.pages);
                for variant in &mut word.additional_variants {
                    delta(&mut variant.pages);
                }
            }
            let bytes = minicbor::to_vec(WordIndex { words: &chunk }).expect("encoding to memory");
            let gz = gzip(&bytes);
            (bytes, gz)
        })
        .collect();
    let mut taken = BTreeSet::new();
    for (i, (bytes, gz)) in encoded.into_iter().enumerate() {
        let hash = format!("{language}_{}", full_hash(&bytes));
        let name = short(&hash, prefix, |name| taken.contains(name)).to_string();
        taken.insert(name.clone());
        files.push((format!("index/{name}.pf_index"), gz));
        meta.index_chunks[i].hash = name;
    }

    let bytes = minicbor::to_vec(&meta).expect("encoding to memory");
    let meta_hash = format!("{language}_{}", &full_hash(&bytes)[..prefix]);
    files.push((format!("pagefind.{meta_hash}.pf_meta"), gzip(&bytes)));
    Some(Index {
        meta_hash,
        page_count: pages.len(),
        files,
    })
}

/// Every word's postings over the site, as Pagefind merges pages: in page
/// order, each form with diacritics apart, in the order first seen.
fn merge(words: &Words, pages: &[PageRecord], fields: &[String]) -> Vec<PackedWord> {
    let table_len = words.with_words(<[_]>::len);
    let mut merged: Vec<Option<PackedWord>> = vec![None; table_len];
    for (number, page) in pages.iter().enumerate() {
        let field_ids: Vec<u16> = page
            .meta_fields
            .iter()
            .map(|f| {
                let at = fields.binary_search(f).expect("a field of the site");
                u16::try_from(at).unwrap_or(u16::MAX)
            })
            .collect();
        for posting in page.postings.iter() {
            let word = merged[posting.word as usize].get_or_insert_with(|| PackedWord {
                word: String::new(),
                pages: Vec::new(),
                additional_variants: Vec::new(),
            });
            let page = PackedPage {
                page_number: number,
                locs: posting.locs.to_vec(),
                meta_locs: pack_meta(posting.meta, &field_ids),
            };
            let Some(form) = posting.form else {
                word.pages.push(page);
                continue;
            };
            match word
                .additional_variants
                .iter_mut()
                .find(|v| v.number == form)
            {
                Some(variant) => variant.pages.push(page),
                None => word.additional_variants.push(PackedVariant {
                    form: String::new(),
                    pages: vec![page],
                    number: form,
                }),
            }
        }
    }
    words.with_words(|table| {
        let mut out: Vec<PackedWord> = merged
            .into_iter()
            .enumerate()
            .filter_map(|(n, word)| {
                let mut word = word?;
                word.word = table[n].to_string();
                for variant in &mut word.additional_variants {
                    variant.form = table[variant.number as usize].to_string();
                }
                Some(word)
            })
            .collect();
        out.par_sort_unstable_by(|a, b| a.word.cmp(&b.word));
        out
    })
}

/// Pagefind's `meta_positions_to_packed`: positions by field, a change of
/// field written as `-(field + 1)`, positions delta encoded within one.
fn pack_meta(meta: &[(u16, u32)], field_ids: &[u16]) -> Vec<i32> {
    let mut out = Vec::with_capacity(meta.len() + 2);
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

/// Page numbers as differences from the one before.
fn delta(pages: &mut [PackedPage]) {
    let mut last = 0;
    for page in pages {
        let number = page.page_number;
        page.page_number = number - last;
        last = number;
    }
}

/// Pagefind's `chunk_index`: words (sorted) in chunks of about
/// [`CHUNK_SIZE`] postings.
fn chunk(words: Vec<PackedWord>) -> Vec<Vec<PackedWord>> {
    let mut chunks = Vec::new();
    let mut current = Vec::new();
    let mut size = 0;
    for word in words {
        size += word
            .pages
            .iter()
            .chain(word.additional_variants.iter().flat_map(|v| &v.pages))
            .map(|p| p.locs.len() + p.meta_locs.len() + 1)
            .sum::<usize>()
            + word.additional_variants.len();
        current.push(word);
        if size >= CHUNK_SIZE {
            chunks.push(std::mem::take(&mut current));
            size = 0;
        }
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks
}

/// Pagefind's `chunk_meta`: each chunk's first and last word, cut to the
/// shortest prefixes that still tell neighbouring chunks apart.
fn chunk_meta(chunks: &[Vec<PackedWord>]) -> Vec<MetaChunk> {
    let mut named: Vec<MetaChunk> = chunks
        .iter()
        .map(|chunk| MetaChunk {
            from: chunk.first().map_or(String::new(), |w| w.word.clone()),
            to: chunk.last().map_or(String::new(), |w| w.word.clone()),
            hash: String::new(),
        })
        .collect();
    for i in 1..named.len() {
        let (a, b) = prefixes(&named[i - 1].to, &named[i].from);
        if a >= named[i - 1].from {
            named[i - 1].to = a;
        }
        named[i].from = b;
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

/// Pagefind's sort orders: for each sort key, the pages that have it, in
/// order of their value (as numbers when every value is one).
fn sorts(pages: &[PageRecord]) -> Vec<MetaSort> {
    let keys: BTreeSet<&String> = pages.iter().flat_map(|p| p.sort.keys()).collect();
    let int = |v: &str| lexical_core::parse::<i32>(v.as_bytes()).ok();
    let float = |v: &str| lexical_core::parse::<f32>(v.as_bytes()).ok();
    keys.into_iter()
        .map(|key| {
            let mut values: Vec<(&String, usize)> = pages
                .iter()
                .enumerate()
                .filter_map(|(n, p)| p.sort.get(key).map(|v| (v, n)))
                .collect();
            if values
                .iter()
                .all(|(v, _)| int(v).is_some() || float(v).is_some())
            {
                let number = |v: &str| {
                    int(v)
                        .map(|i| i as f32)
                        .unwrap_or_else(|| float(v).unwrap_or_default())
                };
                values.sort_by(|a, b| number(a.0).total_cmp(&number(b.0)));
            } else {
                values.sort_by_key(|v| v.0);
            }
            MetaSort {
                sort: key.clone(),
                pages: values.into_iter().map(|(_, n)| n).collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_names_are_the_shortest_prefixes_that_tell_them_apart() {
        let word = |w: &str| PackedWord {
            word: w.into(),
            pages: vec![PackedPage {
                page_number: 0,
                locs: vec![0; 9],
                meta_locs: vec![],
            }],
            additional_variants: vec![],
        };
        // Ten postings make a chunk of size 10; the cut is at 10 here.
        let chunks: Vec<Vec<PackedWord>> = vec![
            vec![word("apple")],
            vec![word("apricot"), word("banana")],
            vec![word("peach")],
        ];
        let meta = chunk_meta(&chunks);
        let names: Vec<(&str, &str)> = meta.iter().map(|m| (&*m.from, &*m.to)).collect();
        assert_eq!(
            names,
            [("apple", "apple"), ("apr", "b"), ("p", "peach")],
            "Pagefind's own test of chunk_meta"
        );
    }

    #[test]
    fn hashes_are_written_as_pagefind_writes_them() {
        // SHA-1 of "abc" is a9993e36 4706816a ba3e2571 7850c26c 9cd0d89d:
        // the 06 and 0d bytes lose their leading zero.
        assert_eq!(full_hash(b"abc"), "a9993e36476816aba3e25717850c26c9cd0d89d");
    }

    #[test]
    fn positions_of_a_meta_word_are_grouped_by_field() {
        // The page's fields 0 and 1 are the site's 0 and 3.
        assert_eq!(
            pack_meta(&[(0, 0), (0, 5), (1, 2)], &[0, 3]),
            [-1, 0, 5, -4, 2]
        );
    }
}
