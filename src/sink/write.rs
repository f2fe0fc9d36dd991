//! The sink of `errata build` and `errata serve`: minifies each finished
//! page, writes it into a [`Store`] (the staging folder, or memory for
//! `serve`), keeps it in the incremental cache, and hands it to the
//! full-text search index.

use crate::assemble::{PageEntry, SiteIndex};
use crate::cache::{CacheEntry, PageCache, SiteInputs};
use crate::config::Config;
use crate::diagnostics::Diagnostic;
use crate::finish::{self, FinishContext};
use crate::links::LinkPolicy;
use crate::minify::minify;
use crate::render::{RenderedFile, RenderedPage};
use crate::search::SearchIndex;
use crate::write::Store;

use super::{Lookup, Output, Sink};

/// Writes the site into a [`Store`] (see [`crate::write`]).
pub struct WriteSink<'a, S: Store> {
    /// Where files go.
    pub store: &'a S,
    config: &'a Config,
    policy: LinkPolicy,
    /// Read entries from the cache (off with `--clean`; entries are still
    /// written).
    read_cache: bool,
    cache: Option<PageCache>,
    /// The full-text search index, when `[search]` is on.
    search: Option<SearchIndex>,
}

impl<'a, S: Store> WriteSink<'a, S> {
    /// A sink writing into `store`, with the cache read unless `clean`.
    pub fn new(store: &'a S, config: &'a Config, clean: bool) -> Self {
        WriteSink {
            store,
            config,
            policy: LinkPolicy::new(config),
            read_cache: !clean,
            cache: None,
            search: None,
        }
    }

    /// Writes the search bundle (under [`crate::search::FOLDER`]) into the
    /// staging folder once every page is in; `None` when search is off.
    pub fn finish_search(&mut self) -> Option<Vec<Diagnostic>> {
        let files = match self.search.take()?.finish() {
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
        let problems = files
            .into_iter()
            .filter_map(|(name, bytes)| {
                let message = self.store.write(&name, &bytes).err()?;
                Some(Diagnostic::error(name, 1, 1, message))
            })
            .collect();
        Some(problems)
    }

    /// Removes the cache entries this build did not use.
    pub fn prune_cache(&self) {
        if let Some(cache) = &self.cache {
            cache.prune();
        }
    }

    /// Applies the link policy to a cached file: the same bytes when it
    /// changes nothing (the usual case), the re-minified result when it
    /// does, and `None` when the policy finds a problem in it.
    fn refinish(&self, html: &str) -> Option<String> {
        let ctx = FinishContext {
            policy: &self.policy,
            disclosure: &self.config.disclosure,
            jsonld: None,
        };
        let (finished, _) = finish::finish(html, &ctx).ok()?;
        if finished == html {
            Some(finished)
        } else {
            String::from_utf8(minify(&finished)).ok()
        }
    }
}

impl<S: Store> Sink for WriteSink<'_, S> {
    fn parsed(&mut self, site: &SiteIndex) -> Vec<Diagnostic> {
        if self.config.search.enabled {
            let pages = site.pages.iter().map(|p| p.path.as_str());
            self.search = Some(SearchIndex::start(&self.config.language, pages));
        }
        Vec::new()
    }

    fn ready(&mut self, inputs: &SiteInputs<'_>) {
        let key = crate::cache::site_key(inputs);
        self.cache = Some(PageCache::open(&self.config.root, key, self.read_cache));
    }

    /// Cached HTML goes through the link policy again, like fresh HTML;
    /// an entry the policy rejects is not used (the page is rendered).
    fn lookup(&self, page: &PageEntry) -> Lookup {
        let Some(cache) = &self.cache else {
            return Lookup::Miss(None);
        };
        let key = cache.key(&page.parsed.source.text, &page.path);
        let Some(entry) = cache.load(&key) else {
            return Lookup::Miss(Some(key));
        };
        let files = entry
            .files
            .iter()
            .map(|(file, html)| Some((file, self.refinish(html)?)))
            .collect::<Option<Vec<_>>>();
        let Some(files) = files else {
            return Lookup::Miss(Some(key));
        };
        Lookup::Hit(Box::new(RenderedPage {
            source: page.parsed.source.path.clone(),
            files: files
                .into_iter()
                .map(|(file, html)| RenderedFile {
                    path: file.clone(),
                    html,
                    done: true,
                    ..RenderedFile::default()
                })
                .collect(),
            code_blocks: entry.code_blocks,
            diagnostics: entry.warnings,
            anchors: entry.anchors,
            outbound: Vec::new(),
            ids: entry.ids,
            cached: true,
            store_as: None,
        }))
    }

    fn page(&self, page: &RenderedPage) -> Vec<Diagnostic> {
        let mut problems = Vec::new();
        let mut written = Vec::new();
        for file in &page.files {
            // Cached files are stored under their output file name.
            let (name, bytes) = if file.done {
                (file.path.clone(), file.html.as_bytes().to_vec())
            } else {
                (file.file(), minify(&file.html))
            };
            match self.store.write(&name, &bytes) {
                Ok(()) => {
                    if let Some(search) = &self.search {
                        search.add(&name, &bytes);
                    }
                    if page.store_as.is_some() {
                        written.push((name, String::from_utf8_lossy(&bytes).into_owned()));
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
            cache.store(key, &entry);
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
