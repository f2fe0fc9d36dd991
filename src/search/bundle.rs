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

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use minicbor::Encode;
use rayon::prelude::*;
use sha1::{Digest, Sha1};

use super::word_index;
use super::words::{Fragment, Postings, Words};

/// One page, as the bundle takes it.
#[derive(Clone)]
pub struct PageRecord {
    /// The page has a `data-pagefind-body`.
    pub custom_body: bool,
    /// Shared with the session's memo of the page (see
    /// [`super::Kept`]), which keeps them for the next build.
    pub postings: Arc<Postings>,
    pub word_count: usize,
    pub filters: BTreeMap<String, Vec<String>>,
    pub sort: BTreeMap<String, String>,
    /// The page's meta fields, in order (its words number them so).
    pub meta_fields: Vec<String>,
    /// `{language}_{sha1 of the fragment}`.
    pub fragment_hash: String,
    pub fragment: FragmentFile,
}

/// A page's fragment file: its bytes, until it is written while pages
/// render (a build holds no fragment it wrote), then the name it was
/// written under.
#[derive(Clone)]
pub enum FragmentFile {
    Kept(Vec<u8>),
    Written(String),
}

/// How long a file's name is before any collision: eight characters after
/// the language, as Pagefind cuts its hashes.
fn name_len(language: &str) -> usize {
    language.len() + 8
}

/// A fragment's name before any collision.
pub fn short_name<'h>(language: &str, full: &'h str) -> &'h str {
    &full[..name_len(language).min(full.len())]
}

/// The fragment of a page, as its file's bytes and its full hash name.
pub fn fragment_file(language: &str, fragment: &Fragment) -> (String, Vec<u8>) {
    thread_local! {
        /// Each thread's buffer for a fragment's JSON, reused.
        static JSON: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    JSON.with_borrow_mut(|json| {
        json.clear();
        super::json::fragment(fragment, json);
        (
            format!("{language}_{}", full_hash(json)),
            gzip(json, FRAGMENT_LEVEL),
        )
    })
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

/// How hard fragments are compressed: there is one per page, and a search
/// fetches only those of the results it shows. libdeflate's level 1 makes
/// them a fifth smaller than zlib's level 1 did, for about 10% more time
/// (some 9 µs a page, of about 300 µs of indexing).
pub const FRAGMENT_LEVEL: i32 = 1;
/// How hard the word index, filters and meta index are compressed: every
/// search fetches them, but the build spends this after the last page. At
/// 10k pages libdeflate's level 1 makes the word index 2% larger than
/// zlib's level 3 did (11.5 MB against 11.3 MB; a search fetches a few of
/// its 220 chunks) in less than half the time. Pagefind uses zlib's 9.
const INDEX_LEVEL: i32 = 1;

/// A bundle file's bytes: gzipped at `level` (libdeflate's, 1 to 12),
/// behind Pagefind's signature. Each thread keeps one compressor per
/// level: making one allocates its tables.
pub fn gzip(bytes: &[u8], level: i32) -> Vec<u8> {
    use libdeflater::{CompressionLvl, Compressor};
    const SIGNATURE: &[u8] = b"pagefind_dcd";
    /// ID, deflate, no flags, no time, no extra flags, unknown OS.
    const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    /// Each thread's compressors, and its buffers for the signed input and
    /// the compressed output: reused from page to page, they stay in the
    /// cache, where a fresh 30 KB buffer per page churned the heap.
    #[derive(Default)]
    struct Scratch {
        compressors: Vec<(i32, Compressor)>,
        input: Vec<u8>,
        output: Vec<u8>,
    }
    thread_local! {
        static SCRATCH: RefCell<Scratch> = RefCell::default();
    }
    SCRATCH.with_borrow_mut(|scratch| {
        let Scratch {
            compressors,
            input,
            output,
        } = scratch;
        input.clear();
        input.extend_from_slice(SIGNATURE);
        input.extend_from_slice(bytes);
        let at = match compressors.iter().position(|(l, _)| *l == level) {
            Some(at) => at,
            None => {
                let level = CompressionLvl::new(level).expect("a compression level of 1 to 12");
                compressors.push((level.into(), Compressor::new(level)));
                compressors.len() - 1
            }
        };
        let compressor = &mut compressors[at].1;
        let bound = compressor.deflate_compress_bound(input.len());
        if output.len() < bound {
            output.resize(bound, 0);
        }
        let len = compressor
            .deflate_compress(input, output)
            .expect("the bound libdeflate gave is enough");
        let mut out = Vec::with_capacity(HEADER.len() + len + 8);
        out.extend_from_slice(&HEADER);
        out.extend_from_slice(&output[..len]);
        out.extend_from_slice(&libdeflater::crc32(input).to_le_bytes());
        out.extend_from_slice(&(input.len() as u32).to_le_bytes());
        out
    })
}

/// `hash` cut to `len` characters, `step` longer while the cut is taken:
/// Pagefind lengthens a fragment's name by one character, a word index
/// chunk's or a filter's by two.
fn short(hash: &str, mut len: usize, step: usize, taken: impl Fn(&str) -> bool) -> &str {
    len = len.min(hash.len());
    while len < hash.len() && taken(&hash[..len]) {
        len = (len + step).min(hash.len());
    }
    &hash[..len]
}

/// Builds the index of `pages` (in the site's order) in `language`.
/// Pagefind leaves out pages with no words, and pages with no
/// `data-pagefind-body` when some page has one.
/// `None` when no page is left.
///
/// A fragment written while pages rendered under a name Pagefind gives
/// another page (rare: two hashes that start alike, arriving out of
/// order) is read back with `read` (a path relative to the bundle folder),
/// to be written again under its own name; an error if it cannot be.
pub fn build(
    language: &str,
    version: &str,
    words: &Words,
    pages: Vec<PageRecord>,
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
) -> Result<Option<Index>, String> {
    let custom_body = pages.iter().any(|p| p.custom_body);
    let mut pages: Vec<PageRecord> = pages
        .into_iter()
        .filter(|p| (p.custom_body || !custom_body) && !p.postings.is_empty())
        .collect();
    if pages.is_empty() {
        return Ok(None);
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
    let prefix = name_len(language);
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    let mut filters: BTreeMap<&str, BTreeMap<&str, Vec<usize>>> = BTreeMap::new();
    for (number, page) in pages.iter().enumerate() {
        let name = short(&page.fragment_hash, prefix, 1, |name| {
            names
                .get(name)
                .is_some_and(|full| *full != page.fragment_hash)
        });
        // Written already, unless another page's hash took the name.
        if names
            .insert(name.to_string(), page.fragment_hash.clone())
            .is_none()
        {
            let bytes = match &page.fragment {
                FragmentFile::Written(written) if written == name => None,
                FragmentFile::Written(written) => {
                    let path = format!("fragment/{written}.pf_fragment");
                    let bytes = read(&path);
                    Some(bytes.ok_or_else(|| format!("search index: cannot read back {path}"))?)
                }
                FragmentFile::Kept(bytes) => Some(bytes.clone()),
            };
            if let Some(bytes) = bytes {
                files.push((format!("fragment/{name}.pf_fragment"), bytes));
            }
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
        let name = short(&hash, prefix, 2, |name| taken.contains(name)).to_string();
        taken.insert(name.clone());
        files.push((
            format!("filter/{name}.pf_filter"),
            gzip(&bytes, INDEX_LEVEL),
        ));
        meta.filters.push(MetaFilter {
            filter: filter.to_string(),
            hash: name,
        });
    }

    // Words.
    let chunks = word_index::chunks(words, &mut pages, &meta.meta_fields, |bytes| {
        (full_hash(&bytes), gzip(&bytes, INDEX_LEVEL))
    });
    let mut taken = BTreeSet::new();
    for word_index::Chunk { from, to, made } in chunks {
        let (hash, gz) = made;
        let hash = format!("{language}_{hash}");
        let name = short(&hash, prefix, 2, |name| taken.contains(name)).to_string();
        taken.insert(name.clone());
        files.push((format!("index/{name}.pf_index"), gz));
        meta.index_chunks.push(MetaChunk {
            from,
            to,
            hash: name,
        });
    }

    let bytes = minicbor::to_vec(&meta).expect("encoding to memory");
    let meta_hash = full_hash(&bytes);
    let meta_hash = format!("{language}_{}", &meta_hash[..prefix.min(meta_hash.len())]);
    files.push((
        format!("pagefind.{meta_hash}.pf_meta"),
        gzip(&bytes, INDEX_LEVEL),
    ));
    Ok(Some(Index {
        meta_hash,
        page_count: pages.len(),
        files,
    }))
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
    fn a_taken_name_grows_by_pagefinds_step() {
        let taken = |name: &str| ["en_abcdefg", "en_abcdefgh"].contains(&name);
        assert_eq!(short("en_abcdefghijk", 10, 1, taken), "en_abcdefghi");
        assert_eq!(short("en_abcdefghijk", 10, 2, taken), "en_abcdefghi");
        assert_eq!(
            short("en_abcdefghijk", 10, 2, |n| n != "en_abcdefghijk"),
            "en_abcdefghijk"
        );
        assert_eq!(short("en_abc", 10, 1, |_| true), "en_abc");
    }

    #[test]
    fn hashes_are_written_as_pagefind_writes_them() {
        // SHA-1 of "abc" is a9993e36 4706816a ba3e2571 7850c26c 9cd0d89d:
        // the 06 and 0d bytes lose their leading zero.
        assert_eq!(full_hash(b"abc"), "a9993e36476816aba3e25717850c26c9cd0d89d");
    }
}
