//! Full-text search: the [Pagefind](https://pagefind.app) bundle under
//! `/pagefind/`, built from the HTML of every triage page as the render
//! stage emits it (the output folder is never read back).
//!
//! Pagefind's own indexer reads pages one at a time behind a lock, and at
//! 10k pages it tripled the build. errata indexes each page on the render
//! thread that made it, the way Pagefind 1.6.0 does and into the same
//! files, so Pagefind's search script in the browser reads them as its
//! own:
//! - [`parse`]: a page's text, weights, anchors, filters and meta;
//! - [`words`] with [`splitting`]: its words, stemmed, at their positions,
//!   and its fragment (what a result shows);
//! - [`bundle`] with [`word_index`]: the word index, filters and meta
//!   index of the site;
//! - [`assets`]: Pagefind's script, worker and WebAssembly, from the
//!   `pagefind` crate.
//!
//! `tests/search_index.rs` builds the bundle of the same pages with the
//! `pagefind` crate's own indexer and checks that every file is the same.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Serialize;

use crate::claims::html_file;

pub mod assets;
mod bundle;
mod html;
mod parse;
mod splitting;
mod word_index;
mod words;

use bundle::PageRecord;
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
    words: Words,
    /// By place; `None` for a page not (yet) indexed.
    records: Mutex<Vec<Option<PageRecord>>>,
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
            words: Words::new(language),
            records,
        }
    }

    /// Indexes an HTML file the build emitted (`file` relative to the
    /// output folder); files other than triage pages are ignored. Called
    /// from any render thread, which does the work.
    pub fn add(&self, file: &str, html: &[u8]) {
        let Some(&at) = self.pages.get(file) else {
            return;
        };
        let parsed = parse::parse(&String::from_utf8_lossy(html));
        let custom_body = parsed.has_custom_body;
        let sort = parsed.sort.clone();
        let page = self.words.page(&self.urls[at], parsed);
        let (fragment_hash, fragment) = bundle::fragment_file(&self.language, &page.fragment);
        let record = PageRecord {
            custom_body,
            postings: page.postings,
            word_count: page.fragment.word_count,
            filters: page.fragment.filters,
            sort,
            meta_fields: page.fragment.meta.into_keys().collect(),
            fragment_hash,
            fragment,
        };
        self.records.lock().expect("the search records")[at] = Some(record);
    }

    /// The bundle's files, each a path relative to the output folder
    /// (under [`FOLDER`]) and its bytes. A page that failed to render was
    /// never added (and the build fails): the others are indexed.
    pub fn finish(self) -> Bundle {
        let assets = assets::for_language(&self.language)?;
        let records: Vec<PageRecord> = self
            .records
            .into_inner()
            .expect("the search records")
            .into_iter()
            .flatten()
            .collect();
        let mut languages = std::collections::BTreeMap::new();
        let index = bundle::build(&self.language, &assets.version, &self.words, records);
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
        let files = index.into_iter().flat_map(|i| i.files);
        let files = files.chain(assets.files.iter().cloned());
        Ok(files
            .chain([("pagefind-entry.json".to_string(), entry)])
            .map(|(name, bytes)| (format!("{FOLDER}{name}"), bytes))
            .collect())
    }
}
