//! The sink of `errata build` and `errata serve`: minifies each finished
//! page, writes it into a [`Store`] (the staging folder, or memory for
//! `serve`), keeps it in the incremental cache, and hands it to the
//! full-text search index.

use std::path::Path;
use std::sync::Arc;

use crate::assemble::SiteIndex;
use crate::cache::{CacheEntry, Lifetime, Memo, PageCache, SiteInputs};
use crate::config::Config;
use crate::diagnostics::Diagnostic;
use crate::minify::minify;
use crate::render::{RenderedFile, RenderedPage};
use crate::search::{Kept, SearchIndex};
use crate::write::Store;
use rayon::prelude::*;

use super::{Lookup, Output, Sink};

/// Writes the site into a [`Store`] (see [`crate::write`]).
pub struct WriteSink<'a, S: Store> {
    /// Where files go.
    pub store: &'a S,
    config: &'a Config,
    /// Read entries from the cache (off with `--clean`; entries are still
    /// written).
    read_cache: bool,
    cache: Option<PageCache>,
    /// How long cache entries live: this process, or a session's builds.
    lifetime: Lifetime,
    /// The full-text search index, when `[search]` is on.
    search: Option<SearchIndex>,
    /// In a session: what the last build's search index kept (taken when
    /// this one starts), then what this one keeps for the next.
    search_kept: Option<Arc<Kept>>,
    /// Search records taken from the last build of the session.
    pub search_reused: usize,
}

impl<'a, S: Store> WriteSink<'a, S> {
    /// A sink writing into `store`, with the cache read unless `clean`.
    pub fn new(store: &'a S, config: &'a Config, clean: bool) -> Self {
        WriteSink {
            store,
            config,
            read_cache: !clean,
            cache: None,
            lifetime: Lifetime::Process,
            search: None,
            search_kept: None,
            search_reused: 0,
        }
    }

    /// The sink of a build in a session (`errata serve`): cache entries
    /// come from `previous` (the session's last build's) when it is the
    /// same generation, and are kept decoded for the next build.
    /// `search` is what the session's last build's search index kept.
    pub fn in_session(self, previous: Option<Arc<Memo>>, search: Option<Arc<Kept>>) -> Self {
        WriteSink {
            lifetime: Lifetime::Session(previous),
            search_kept: search,
            ..self
        }
    }

    /// What this build's search index keeps for the session's next build
    /// (once [`WriteSink::finish_search`] has run), or the last build's.
    pub fn search_kept(&self) -> Option<Arc<Kept>> {
        self.search_kept
            .clone()
            .filter(|_| self.config.search.enabled)
    }

    /// Writes the search bundle (under [`crate::search::FOLDER`]) into the
    /// staging folder once every page is in; `None` when search is off.
    pub fn finish_search(&mut self) -> Option<Vec<Diagnostic>> {
        let mut search = self.search.take()?;
        self.search_reused = search.reused();
        if let Some(kept) = search.kept() {
            self.search_kept = Some(Arc::new(kept));
        }
        let files = match search.finish(|path| self.store.read(path)) {
            Ok(files) => files,
            Err(message) => {
                return Some(vec![Diagnostic::error(
                    crate::config::CONFIG_FILE,
                    1,
                    1,
                    message,
                )]);
            }
        };
        // Most of the bundle is small files (a fragment per page).
        let problems = files
            .into_par_iter()
            .filter_map(|(name, bytes)| {
                let message = self.store.write(&name, &bytes).err()?;
                Some(Diagnostic::error(name, 1, 1, message))
            })
            .collect();
        Some(problems)
    }

    /// Hands a written HTML file to the search index, and writes the
    /// page's search fragment when the index gives it back.
    fn index(&self, file: &str, html: &[u8], problems: &mut Vec<Diagnostic>) {
        if let Some(search) = &self.search {
            self.write_fragment(search.add(file, html), problems);
        }
    }

    /// Writes a search fragment the index gave back.
    fn write_fragment(&self, fragment: Option<(String, Vec<u8>)>, problems: &mut Vec<Diagnostic>) {
        if let Some((name, bytes)) = fragment
            && let Err(message) = self.store.write(&name, &bytes)
        {
            problems.push(Diagnostic::error(name, 1, 1, message));
        }
    }

    /// The cache entries this build used or stored (and only those),
    /// written now when `persist`.
    pub fn finish_cache(&self, persist: bool) -> Option<Arc<Memo>> {
        Some(self.cache.as_ref()?.finish(persist))
    }
}

impl<S: Store> Sink for WriteSink<'_, S> {
    fn parsed(&mut self, site: &SiteIndex) -> Vec<Diagnostic> {
        if self.config.search.enabled {
            let pages = site.pages.iter().map(|p| p.path.as_str());
            let index = SearchIndex::start(&self.config.language, pages);
            self.search = Some(match self.lifetime {
                Lifetime::Session(_) => index.in_session(self.search_kept.take()),
                Lifetime::Process => index,
            });
        }
        Vec::new()
    }

    fn ready(&mut self, inputs: &SiteInputs<'_>) {
        let key = crate::cache::site_key(inputs);
        self.cache = Some(PageCache::open_after(
            &self.config.root,
            key,
            self.read_cache,
            self.lifetime.clone(),
        ));
    }

    /// A hit needs the page's files in the store: kept from the previous
    /// output (see [`Store::keep`]), which proves their bytes by hash.
    /// Where it cannot, the page is rendered.
    fn keeps_state(&self) -> bool {
        true
    }

    fn lookup(&self, source: &Path, inputs: u128) -> Lookup {
        let Some(cache) = &self.cache else {
            return Lookup::Miss(None);
        };
        let key = cache.key(inputs);
        let Some(entry) = cache.load(&key) else {
            return Lookup::Miss(Some(key));
        };
        let mut files = Vec::with_capacity(entry.files.len());
        for (file, hash) in &entry.files {
            match u128::from_str_radix(hash, 16) {
                Ok(hash) if self.store.keep(file, hash) => files.push(RenderedFile {
                    path: file.clone(),
                    done: true,
                    kept: Some(hash),
                    ..RenderedFile::default()
                }),
                _ => return Lookup::Miss(Some(key)),
            }
        }
        Lookup::Hit(Box::new(RenderedPage {
            source: source.to_path_buf(),
            files,
            code_blocks: entry.code_blocks,
            diagnostics: entry.warnings.clone(),
            anchors: entry.anchors.clone(),
            outbound: Vec::new(),
            ids: entry.ids.clone(),
            cached: true,
            store_as: None,
        }))
    }

    fn page(&self, page: &RenderedPage) -> Vec<Diagnostic> {
        let mut problems = Vec::new();
        let mut written = Vec::new();
        for file in &page.files {
            if let Some(hash) = file.kept {
                if let Some(search) = &self.search {
                    let fragment =
                        search.add_kept(&file.path, hash, || self.store.read(&file.path));
                    self.write_fragment(fragment, &mut problems);
                }
                continue;
            }
            // Cached files are stored under their output file name.
            let (name, bytes) = if file.done {
                (file.path.clone(), file.html.as_bytes().to_vec())
            } else {
                (file.file(), minify(&file.html))
            };
            match self.store.write(&name, &bytes) {
                Ok(()) => {
                    self.index(&name, &bytes, &mut problems);
                    if page.store_as.is_some() {
                        let hash = crate::hash::content_hash(&bytes);
                        written.push((name, format!("{hash:032x}")));
                    }
                }
                Err(message) => problems.push(Diagnostic::error(&page.source, 1, 1, message)),
            }
        }
        if let (Some(key), Some(cache)) = (&page.store_as, &self.cache)
            && problems.is_empty()
            && !page.diagnostics.iter().any(Diagnostic::is_error)
        {
            let entry = CacheEntry {
                files: written,
                ids: page
                    .ids
                    .iter()
                    .map(|(path, ids)| {
                        let mut ids = ids.clone();
                        ids.sort();
                        ids.dedup();
                        (path.clone(), ids)
                    })
                    .collect(),
                anchors: page.anchors.clone(),
                warnings: page.diagnostics.clone(),
                code_blocks: page.code_blocks,
            };
            cache.store(key, entry);
        }
        problems
    }

    fn file(&self, out: &str, output: Output<'_>) -> Result<(), String> {
        match output {
            Output::Copy(path) => self.store.copy(out, path),
            Output::Bytes(bytes) => self.store.write(out, bytes),
        }
    }
}
