//! What a session of builds (`errata serve`) keeps of one build's search
//! index for the next: its numbered words, and what each triage page's
//! HTML gave the index, by the HTML's hash. A page whose HTML is the same
//! is not parsed, split or compressed again, so that after a one-page edit
//! a rebuild indexes that page alone; the bundle is still made whole,
//! from every page's record, and is the one a clean build makes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::bundle::{FragmentFile, PageRecord};
use super::words::Words;

/// One build's search index, as the next build of a session takes it.
pub struct Kept {
    pub(super) language: String,
    /// The words the postings are numbered by.
    pub(super) words: Arc<Words>,
    /// By HTML file (`oom/x/index.html`).
    pub(super) pages: HashMap<String, Arc<KeptPage>>,
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kept")
            .field("language", &self.language)
            .field("pages", &self.pages.len())
            .finish_non_exhaustive()
    }
}

/// A build's side of it, in a session: the last build's, and this one's
/// as pages are indexed.
pub(super) struct Keeping {
    previous: Option<Arc<Kept>>,
    pages: Mutex<HashMap<String, Arc<KeptPage>>>,
    reused: AtomicUsize,
}

impl Keeping {
    /// For a build after `previous` (taken only in the same language).
    pub fn after(previous: Option<Arc<Kept>>, language: &str) -> Keeping {
        Keeping {
            previous: previous.filter(|p| p.language == language),
            pages: Mutex::default(),
            reused: AtomicUsize::new(0),
        }
    }

    /// The words of the last build, to number this one's by.
    pub fn words(&self) -> Option<Arc<Words>> {
        Some(Arc::clone(&self.previous.as_ref()?.words))
    }

    /// What the last build made of `file` when its HTML hashed to `html`.
    pub fn known(&self, file: &str, html: u128) -> Option<Arc<KeptPage>> {
        let page = self.previous.as_ref()?.pages.get(file)?;
        (page.html == html).then(|| {
            self.reused.fetch_add(1, Ordering::Relaxed);
            Arc::clone(page)
        })
    }

    /// Keeps what `file` gave, for the next build.
    pub fn keep(&self, file: &str, page: &Arc<KeptPage>) {
        let mut pages = self.pages.lock().expect("the kept pages");
        pages.insert(file.to_string(), Arc::clone(page));
    }

    /// Pages taken from the last build.
    pub fn reused(&self) -> usize {
        self.reused.load(Ordering::Relaxed)
    }

    /// This build's, for the next one.
    pub fn into_kept(self, language: &str, words: Arc<Words>) -> Kept {
        Kept {
            language: language.to_string(),
            words,
            pages: self.pages.into_inner().expect("the kept pages"),
        }
    }
}

/// What a page's HTML gave the index: its record, whose fragment is kept
/// (its bytes).
#[derive(Clone)]
pub(super) struct KeptPage {
    /// The HTML's [`crate::hash::content_hash`].
    pub html: u128,
    pub record: PageRecord,
}

impl KeptPage {
    /// The page's record for the bundle, with its fragment written (under
    /// `written`, its name) or kept; and the fragment's bytes when written.
    /// Copied out of `page` only when a session keeps it too.
    pub fn record(page: Arc<KeptPage>, written: Option<String>) -> (PageRecord, Option<Vec<u8>>) {
        let mut record = Arc::unwrap_or_clone(page).record;
        let bytes = match written {
            Some(name) => {
                match std::mem::replace(&mut record.fragment, FragmentFile::Written(name)) {
                    FragmentFile::Kept(bytes) => Some(bytes),
                    FragmentFile::Written(_) => None,
                }
            }
            None => None,
        };
        (record, bytes)
    }
}
