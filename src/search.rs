//! Full-text search: the [Pagefind](https://pagefind.app) bundle under
//! `/pagefind/`, built from the HTML of every triage page as the render
//! stage emits it (the output folder is never scanned).
//!
//! Pagefind's own indexer reads pages one at a time behind a lock, and at
//! 10k pages it tripled the build. errata indexes each page on the render
//! thread that made it, the way Pagefind 1.6.0 does and into the same
//! files, so Pagefind's search script in the browser reads them as its
//! own:
//! - [`parse`]: a page's text, weights, anchors, filters and meta, through
//!   the elements whose text it drops the quick way ([`skip`]);
//! - [`words`] with [`splitting`]: its words, stemmed, at their positions,
//!   and its fragment (what a result shows);
//! - [`bundle`] with [`word_index`]: the word index, filters and meta
//!   index of the site;
//! - [`assets`]: Pagefind's script, worker and WebAssembly, from the
//!   `pagefind` crate.
//!
//! `tests/search_index.rs` builds the bundle of the same pages with the
//! `pagefind` crate's own indexer and checks that every file is the same.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::claims::html_file;

pub mod assets;
mod attributes;
mod bundle;
mod cbor;
mod elements;
mod html;
mod json;
mod kept;
mod memo;
mod node;
mod parse;
mod skip;
mod splitting;
mod white_space;
mod word_index;
mod words;

use bundle::{FragmentFile, PageRecord};
pub use kept::Kept;
use kept::{Keeping, KeptPage};
use words::Words;

/// The folder the bundle is written to, relative to the output folder.
pub const FOLDER: &str = "pagefind/";

/// The bundle's files (paths relative to the output folder), or why it
/// could not be made.
type Bundle = Result<Vec<(String, Vec<u8>)>, String>;

/// The search index of one build, fed while pages render.
pub struct SearchIndex {
    language: String,
    /// A triage page's HTML file (`oom/x/index.html`) → its place in the
    /// site's order.
    pages: HashMap<String, usize>,
    /// By place: the URL Pagefind records, relative to the site root (its
    /// script adds the base path it is served under, so a sub-path
    /// `base_url` works unchanged).
    urls: Vec<String>,
    words: Arc<Words>,
    /// In a session (`errata serve`): the last build's pages, and this
    /// one's for the next.
    keeping: Option<Keeping>,
    /// By place; `None` for a page not (yet) indexed.
    records: Mutex<Vec<Option<PageRecord>>>,
    /// Fragment names handed out while pages render, and the full hash of
    /// the fragment each was handed out for.
    claimed: Mutex<HashMap<String, String>>,
}

/// `pagefind-entry.json`, as Pagefind writes it.
#[derive(Serialize)]
struct Entry<'a> {
    version: &'a str,
    languages: std::collections::BTreeMap<&'a str, EntryLanguage<'a>>,
    include_characters: &'a [char],
}

#[derive(Serialize)]
struct EntryLanguage<'a> {
    hash: &'a str,
    wasm: Option<&'a str>,
    page_count: usize,
}

impl SearchIndex {
    /// A search index for the triage pages at site paths `pages`
    /// (`oom/x/`), in the site's order, written in `language`. Other HTML
    /// (lists, taxonomy pages, redirects, the 404 page) is not searched:
    /// search finds fixes.
    pub fn start<'p>(language: &str, pages: impl IntoIterator<Item = &'p str>) -> SearchIndex {
        let mut files = HashMap::new();
        let mut urls = Vec::new();
        for (i, path) in pages.into_iter().enumerate() {
            files.insert(html_file(path), i);
            urls.push(format!("/{path}"));
        }
        let records = Mutex::new((0..urls.len()).map(|_| None).collect());
        SearchIndex {
            language: language.to_string(),
            pages: files,
            urls,
            words: Arc::new(Words::new(language)),
            keeping: None,
            records,
            claimed: Mutex::default(),
        }
    }

    /// The index of a build in a session, after the build that left
    /// `previous`: pages whose HTML is the same are taken from it (see
    /// [`Kept`]).
    pub fn in_session(self, previous: Option<Arc<Kept>>) -> SearchIndex {
        let keeping = Keeping::after(previous, &self.language);
        SearchIndex {
            words: keeping.words().unwrap_or(self.words),
            keeping: Some(keeping),
            ..self
        }
    }

    /// Pages taken unchanged from the session's last build.
    pub fn reused(&self) -> usize {
        self.keeping.as_ref().map_or(0, Keeping::reused)
    }

    /// What the next build of the session takes from this one; `None`
    /// outside a session. Called before [`SearchIndex::finish`].
    pub fn kept(&mut self) -> Option<Kept> {
        let keeping = self.keeping.take()?;
        Some(keeping.into_kept(&self.language, Arc::clone(&self.words)))
    }

    /// Indexes an HTML file the build emitted (`file` relative to the
    /// output folder); files other than triage pages are ignored. Called
    /// from any render thread, which does the work.
    ///
    /// Returns the page's fragment file (a path relative to the output
    /// folder, and its bytes) when it can be written now, so that the
    /// caller writes it while pages render rather than all at the end. Its
    /// name is the fragment's hash cut short, which is final unless
    /// another page's hash starts the same way: then [`SearchIndex::finish`]
    /// writes the fragments concerned, under the names Pagefind gives them.
    pub fn add(&self, file: &str, html: &[u8]) -> Option<(String, Vec<u8>)> {
        // Only a session looks a page up by its hash, and only a triage
        // page's.
        let hash = match self.keeping {
            Some(_) if self.pages.contains_key(file) => crate::hash::content_hash(html),
            _ => 0,
        };
        self.add_hashed(file, hash, || Some(Cow::Borrowed(html)))
    }

    /// As [`SearchIndex::add`], for an HTML file already in the output
    /// (a cache hit's, kept from the last build), whose bytes the store
    /// has proved to hash to `hash`: `read` gives them, and is called only
    /// when the session kept no record of a page with that hash.
    pub fn add_kept(
        &self,
        file: &str,
        hash: u128,
        read: impl FnOnce() -> Option<Vec<u8>>,
    ) -> Option<(String, Vec<u8>)> {
        self.add_hashed(file, hash, || read().map(Cow::Owned))
    }

    fn add_hashed<'h>(
        &self,
        file: &str,
        hash: u128,
        html: impl FnOnce() -> Option<Cow<'h, [u8]>>,
    ) -> Option<(String, Vec<u8>)> {
        let &at = self.pages.get(file)?;
        let page = match self.keeping.as_ref().and_then(|k| k.known(file, hash)) {
            Some(page) => page,
            None => Arc::new(self.index(at, &html()?, hash)),
        };
        if let Some(keeping) = &self.keeping {
            keeping.keep(file, &page);
        }
        // A page without a body may be left out at the end (when another
        // page has one), and one without words is: neither is written yet.
        let early = (page.record.custom_body && !page.record.postings.is_empty())
            .then(|| self.claim(&page.record.fragment_hash))
            .flatten();
        let path = early
            .as_ref()
            .map(|name| format!("{FOLDER}fragment/{name}.pf_fragment"));
        let (record, bytes) = KeptPage::record(page, early);
        self.records.lock().expect("the search records")[at] = Some(record);
        path.zip(bytes)
    }

    /// What the HTML of the page at place `at` gives the index (`html`
    /// hashing to `hash`).
    fn index(&self, at: usize, html: &[u8], hash: u128) -> KeptPage {
        // The build emits UTF-8; checking that is quicker than a lossy read.
        let parsed = match std::str::from_utf8(html) {
            Ok(html) => parse::parse(html),
            Err(_) => parse::parse(&String::from_utf8_lossy(html)),
        };
        let custom_body = parsed.has_custom_body;
        let sort = parsed.sort.clone();
        let page = self.words.page(&self.urls[at], parsed);
        let (fragment_hash, fragment) = bundle::fragment_file(&self.language, &page.fragment);
        let record = PageRecord {
            custom_body,
            postings: Arc::new(page.postings),
            word_count: page.fragment.word_count,
            filters: page.fragment.filters,
            sort,
            meta_fields: page.fragment.meta.into_keys().collect(),
            fragment_hash,
            fragment: FragmentFile::Kept(fragment),
        };
        KeptPage { html: hash, record }
    }

    /// The short name for a fragment with this full hash, if no other
    /// fragment has it yet.
    fn claim(&self, full: &str) -> Option<String> {
        let short = bundle::short_name(&self.language, full).to_string();
        let mut claimed = self.claimed.lock().expect("the fragment names");
        match claimed.get(&short) {
            Some(owner) if owner != full => None,
            _ => {
                claimed.insert(short.clone(), full.to_string());
                Some(short)
            }
        }
    }

    /// The bundle's files, each a path relative to the output folder
    /// (under [`FOLDER`]) and its bytes. A page that failed to render was
    /// never added (and the build fails): the others are indexed.
    ///
    /// `read` gives back a file [`SearchIndex::add`] had written (a path
    /// relative to the output folder): in the rare case where Pagefind
    /// names that fragment otherwise, it is written again under its name.
    /// Nothing of the bundle is written yet when it is called.
    pub fn finish(self, read: impl Fn(&str) -> Option<Vec<u8>>) -> Bundle {
        let assets = assets::for_language(&self.language)?;
        let records: Vec<PageRecord> = self
            .records
            .into_inner()
            .expect("the search records")
            .into_iter()
            .flatten()
            .collect();
        let mut languages = std::collections::BTreeMap::new();
        let read = |path: &str| read(&format!("{FOLDER}{path}"));
        let index = bundle::build(&self.language, &assets.version, &self.words, records, &read)?;
        if let Some(index) = &index {
            languages.insert(
                self.language.as_str(),
                EntryLanguage {
                    hash: &index.meta_hash,
                    wasm: assets.stems.then_some(self.language.as_str()),
                    page_count: index.page_count,
                },
            );
        }
        let entry = serde_json::to_vec(&Entry {
            version: &assets.version,
            languages,
            include_characters: &assets.include_characters,
        })
        .map_err(|e| format!("search index: {e}"))?;
        // With no page indexed, Pagefind writes no stemming WebAssembly
        // for the language (the entry names none).
        let stemming = format!("wasm.{}.pagefind", self.language);
        let indexed = index.is_some();
        let files = index.into_iter().flat_map(|i| i.files);
        let files = files.chain(
            assets
                .files
                .iter()
                .filter(|(name, _)| indexed || *name != stemming)
                .cloned(),
        );
        Ok(files
            .chain([("pagefind-entry.json".to_string(), entry)])
            .map(|(name, bytes)| (format!("{FOLDER}{name}"), bytes))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page record with one word, whose fragment is `url`'s bytes: kept,
    /// or written already under the name `written`.
    fn record(words: &Words, url: &str, hash: &str, written: Option<&str>) -> PageRecord {
        let parsed = parse::parse("<html><body><p data-pagefind-body>some words</p></body></html>");
        let page = words.page(url, parsed);
        PageRecord {
            custom_body: true,
            postings: Arc::new(page.postings),
            word_count: page.fragment.word_count,
            filters: Default::default(),
            sort: Default::default(),
            meta_fields: page.fragment.meta.into_keys().collect(),
            fragment_hash: hash.into(),
            fragment: match written {
                Some(name) => FragmentFile::Written(name.into()),
                None => FragmentFile::Kept(url.as_bytes().to_vec()),
            },
        }
    }

    /// The fragment files `build` makes of `pages`, reading back those
    /// written already from `site` (path relative to the bundle → bytes).
    fn fragments(
        words: &Words,
        pages: Vec<PageRecord>,
        site: &[(&str, &[u8])],
    ) -> Result<Vec<(String, Vec<u8>)>, String> {
        let read = |path: &str| {
            site.iter()
                .find(|(p, _)| *p == path)
                .map(|(_, b)| b.to_vec())
        };
        let index = bundle::build("en", "1.6.0", words, pages, &read)?.unwrap();
        Ok(index
            .files
            .into_iter()
            .filter(|(name, _)| name.starts_with("fragment/"))
            .collect())
    }

    #[test]
    fn fragments_written_early_are_written_again_where_pagefind_names_them_otherwise() {
        let words = Words::new("en");
        // Page 1 arrived first and took the short name its hash shares with
        // page 0; page 2 wrote its own. In the site's order page 0 gets the
        // short name and page 1 a longer one, as Pagefind names them: page
        // 1's fragment, which the build no longer holds, is read back from
        // where it was written before page 0's takes its place.
        let pages = || {
            vec![
                record(&words, "/zero/", "en_abcdef12aa", None),
                record(&words, "/one/", "en_abcdef19bb", Some("en_abcdef1")),
                record(&words, "/two/", "en_0123456789", Some("en_0123456")),
            ]
        };
        let site: &[(&str, &[u8])] = &[
            ("fragment/en_abcdef1.pf_fragment", b"/one/"),
            ("fragment/en_0123456.pf_fragment", b"/two/"),
        ];
        assert_eq!(
            fragments(&words, pages(), site).unwrap(),
            [
                (
                    "fragment/en_abcdef1.pf_fragment".to_string(),
                    b"/zero/".to_vec()
                ),
                (
                    "fragment/en_abcdef19.pf_fragment".to_string(),
                    b"/one/".to_vec()
                ),
            ]
        );
        // A fragment that cannot be read back fails the bundle, naming it.
        let error = fragments(&words, pages(), &site[1..]).unwrap_err();
        assert!(error.contains("fragment/en_abcdef1.pf_fragment"), "{error}");
    }
}
