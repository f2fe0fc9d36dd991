//! Full-text search: the [Pagefind](https://pagefind.app) bundle under
//! `/pagefind/`, built from the HTML of every triage page as the render
//! stage emits it (the output folder is never read back). The only module
//! that knows the `pagefind` crate.
//!
//! Pagefind indexes one page at a time behind a lock, so the render stage's
//! threads hand each page over a bounded channel to one indexing thread and
//! go on. The bundle depends on the order pages are added in, and the
//! output must not depend on thread timing, so that thread adds them in the
//! site's order: a page that arrives early waits until the pages before it
//! are in. The render stage takes pages in that order, so few wait at once
//! (about one per render thread), and a full channel makes the renderers
//! wait for the indexer instead of piling pages up in memory. Pagefind
//! itself keeps each page's text until the bundle is written.
//!
//! Each page is handed over without the highlighter's token spans
//! ([`for_index`]): the same bundle, byte for byte, for less parsing on
//! the indexing thread, and the render threads do the stripping.

use std::collections::{BTreeMap, HashMap};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use pagefind::api::PagefindIndex;
use pagefind::options::PagefindServiceConfig;

use crate::claims::html_file;

mod strip;
pub use strip::for_index;

/// The folder the bundle is written to, relative to the output folder.
pub const FOLDER: &str = "pagefind/";

/// Pages in the channel before a render thread waits for the indexer.
const QUEUE: usize = 16;

/// The bundle's files (paths relative to the output folder), or why
/// Pagefind failed.
type Bundle = Result<Vec<(String, Vec<u8>)>, String>;

/// The search index of one build, fed while pages render.
pub struct SearchIndex {
    /// A triage page's HTML file (`oom/x/index.html`) → its place in the
    /// site's order.
    pages: HashMap<String, usize>,
    /// Pages by their place in the site's order; `None` asks for the
    /// bundle. A build that fails drops this without asking, and the
    /// indexer stops without building a bundle nobody waits for.
    queue: SyncSender<Option<(usize, String)>>,
    indexer: JoinHandle<Bundle>,
}

impl SearchIndex {
    /// Starts the indexing thread for the triage pages at site paths
    /// `pages` (`oom/x/`), in the site's order, written in `language`.
    /// Other HTML (lists, taxonomy pages, redirects, the 404 page) is not
    /// searched: search finds fixes.
    pub fn start<'p>(language: &str, pages: impl IntoIterator<Item = &'p str>) -> SearchIndex {
        let mut files = HashMap::new();
        // The URL Pagefind records is relative to the site root: its script
        // adds the base path it is served under (`/triage/pagefind/` gives
        // `/triage/`), so a sub-path `base_url` works unchanged.
        let mut urls = Vec::new();
        for (i, path) in pages.into_iter().enumerate() {
            files.insert(html_file(path), i);
            urls.push(format!("/{path}"));
        }
        let language = language.to_string();
        let (queue, received) = sync_channel(QUEUE);
        let indexer = std::thread::Builder::new()
            .name("errata-search".into())
            .spawn(move || index_in_order(&language, &urls, received))
            .expect("the search indexing thread starts");
        SearchIndex {
            pages: files,
            queue,
            indexer,
        }
    }

    /// Hands over an HTML file the build emitted (`file` relative to the
    /// output folder); files other than triage pages are ignored. Called
    /// from any render thread.
    pub fn add(&self, file: &str, html: &[u8]) {
        let Some(&at) = self.pages.get(file) else {
            return;
        };
        let html = for_index(&String::from_utf8_lossy(html)).into_owned();
        // A closed channel means the indexer failed; `finish` reports why.
        let _ = self.queue.send(Some((at, html)));
    }

    /// Waits for the indexer and returns the bundle's files, each a path
    /// relative to the output folder (under [`FOLDER`]) and its bytes.
    pub fn finish(self) -> Bundle {
        let _ = self.queue.send(None);
        drop(self.queue);
        self.indexer
            .join()
            .unwrap_or_else(|_| Err("the search indexer panicked".into()))
    }
}

/// The indexing thread: adds pages in the site's order as they arrive,
/// then builds the bundle.
fn index_in_order(
    language: &str,
    urls: &[String],
    received: Receiver<Option<(usize, String)>>,
) -> Bundle {
    let failed = |e: anyhow::Error| format!("search index (Pagefind): {e:#}");
    // Pagefind's interface is async; its work runs on blocking threads.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| format!("search index: {e}"))?;
    let options = PagefindServiceConfig::builder()
        .force_language(language.to_string())
        .build();
    let mut index = PagefindIndex::new(Some(options)).map_err(failed)?;
    let mut add = |at: usize, html: String| {
        runtime
            .block_on(index.add_html_file(None, Some(urls[at].clone()), html))
            .map(drop)
            .map_err(failed)
    };
    let mut waiting = BTreeMap::new();
    let mut next = 0;
    loop {
        let (at, html) = match received.recv() {
            Ok(Some(page)) => page,
            Ok(None) => break,
            // The build was abandoned: no bundle.
            Err(_) => return Ok(Vec::new()),
        };
        waiting.insert(at, html);
        while let Some(html) = waiting.remove(&next) {
            add(next, html)?;
            next += 1;
        }
    }
    // A page that failed to render never arrives (and the build fails):
    // the pages after it follow in order.
    for (at, html) in std::mem::take(&mut waiting) {
        add(at, html)?;
    }
    let files = runtime.block_on(index.get_files()).map_err(failed)?;
    Ok(files
        .into_iter()
        .map(|file| {
            let name: Vec<String> = file
                .filename
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            (format!("{FOLDER}{}", name.join("/")), file.contents)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn html(title: &str, body: &str) -> String {
        format!(
            "<!doctype html><html lang=en><head><title>{title}</title></head><body>\
             <nav>Navigation words</nav><article data-pagefind-body><h1>{title}</h1><p>{body}</p></article></body></html>"
        )
    }

    /// The indexer alone, with pages arriving out of order.
    fn bundle(order: &[usize]) -> Vec<(String, Vec<u8>)> {
        let urls: Vec<String> = (0..3).map(|i| format!("/p{i}/")).collect();
        let (queue, received) = sync_channel(QUEUE);
        let pages = [
            html("Zero", "cudaErrorIllegalAddress happens"),
            html("One", "NCCL watchdog timeout"),
            html("Two", "out of memory while allocating"),
        ];
        for &i in order {
            queue.send(Some((i, pages[i].clone()))).unwrap();
        }
        queue.send(None).unwrap();
        let mut files = index_in_order("en", &urls, received).unwrap();
        files.sort();
        files
    }

    #[test]
    fn the_bundle_does_not_depend_on_arrival_order() {
        let first = bundle(&[0, 1, 2]);
        assert_eq!(bundle(&[2, 0, 1]), first);
        assert_eq!(bundle(&[1, 2, 0]), first);
        let names: Vec<&str> = first.iter().map(|(n, _)| n.as_str()).collect();
        for expected in ["pagefind/pagefind.js", "pagefind/pagefind-entry.json"] {
            assert!(names.contains(&expected), "{names:?}");
        }
        assert!(names.iter().all(|n| n.starts_with(FOLDER)), "{names:?}");
        assert!(
            names.iter().any(|n| n.ends_with(".pf_fragment")),
            "{names:?}"
        );
    }

    #[test]
    fn an_abandoned_index_builds_nothing() {
        let index = SearchIndex::start("en", ["a/", "b/"]);
        index.add("a/index.html", html("A", "words here").as_bytes());
        let SearchIndex { queue, indexer, .. } = index;
        drop(queue);
        assert_eq!(indexer.join().unwrap(), Ok(Vec::new()));
    }

    #[test]
    fn a_page_that_never_arrives_does_not_hold_back_the_rest() {
        // Page 0 failed to render: 1 and 2 are still indexed, in order.
        let files = bundle(&[2, 1]);
        let entry = files
            .iter()
            .find(|(n, _)| n == "pagefind/pagefind-entry.json")
            .unwrap();
        let entry: serde_json::Value = serde_json::from_slice(&entry.1).unwrap();
        assert_eq!(entry["languages"]["en"]["page_count"], 2, "{entry}");
    }
}
