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
    /// For a build after `previous` (taken only in the same language, and
    /// while most of its words are still on some page).
    pub fn after(previous: Option<Arc<Kept>>, language: &str) -> Keeping {
        Keeping {
            previous: previous.filter(|p| p.language == language && !p.words.outgrown()),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What a session kept, with no pages, numbered by `words`.
    fn kept(words: &Arc<Words>, language: &str) -> Option<Arc<Kept>> {
        Some(Arc::new(Kept {
            language: language.into(),
            words: Arc::clone(words),
            pages: HashMap::new(),
        }))
    }

    #[test]
    fn a_session_starts_afresh_in_another_language_or_once_most_words_are_gone() {
        let words = Arc::new(Words::new("en"));
        let text: String = (0..1500_u32)
            .map(|i| {
                format!(
                    "{} ",
                    char::from_u32(0x4e00 + i).unwrap().to_string().repeat(2)
                )
            })
            .collect();
        let html = format!("<html><body><p data-pagefind-body>{text}</p></body></html>");
        words.page("/a/", super::super::parse::parse(&html));
        let numbered = words.with_words(<[_]>::len);
        assert!(numbered >= 1500, "{numbered}");

        // Half the words still on some page: the next build takes them.
        words.set_live(numbered / 2);
        assert!(Keeping::after(kept(&words, "en"), "en").words().is_some());
        assert!(Keeping::after(kept(&words, "en"), "fr").words().is_none());
        // Fewer, with a thousand words to spare: it starts afresh.
        words.set_live((numbered - 1001) / 2);
        assert!(Keeping::after(kept(&words, "en"), "en").words().is_none());
        assert!(Keeping::after(None, "en").words().is_none());
    }
}
