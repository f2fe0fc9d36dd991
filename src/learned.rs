//! What the pipeline keeps of each rendered job once its sink has it
//! ([`Learned`]), and the check of fragment links against every page's ids
//! that needs all of them.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::diagnostics::Diagnostic;
use crate::markdown::AnchorRef;
use crate::render::RenderedPage;

/// What the pipeline keeps of each page once its sink has it: counts,
/// problems, and the ids and fragment links the anchor check needs.
#[derive(Debug, Default)]
pub(crate) struct Learned {
    pub(crate) html_files: usize,
    pub(crate) code_blocks: usize,
    pub(crate) cached_pages: usize,
    pub(crate) diagnostics: Vec<Diagnostic>,
    anchors: Vec<(PathBuf, AnchorRef)>,
    /// Site path → every id on that page.
    ids: HashMap<Box<str>, PageIds>,
}

/// The ids of one page, sorted and each exactly as written, in one
/// buffer: held for every page until the anchor check, so kept compact (a
/// set of `String`s took over a kilobyte a page).
#[derive(Debug)]
struct PageIds {
    text: Box<str>,
    /// Where each id ends in `text`.
    ends: Box<[u32]>,
}

impl PageIds {
    fn new(mut ids: Vec<String>) -> PageIds {
        ids.sort_unstable();
        ids.dedup();
        let mut text = String::with_capacity(ids.iter().map(String::len).sum());
        let mut ends = Vec::with_capacity(ids.len());
        for id in &ids {
            text.push_str(id);
            ends.push(u32::try_from(text.len()).unwrap_or(u32::MAX));
        }
        PageIds {
            text: text.into_boxed_str(),
            ends: ends.into_boxed_slice(),
        }
    }

    fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        self.text
            .get(start..self.ends[i] as usize)
            .unwrap_or_default()
    }

    fn contains(&self, id: &str) -> bool {
        let (mut low, mut high) = (0, self.ends.len());
        while low < high {
            let mid = (low + high) / 2;
            match self.get(mid).cmp(id) {
                std::cmp::Ordering::Equal => return true,
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
            }
        }
        false
    }
}

impl Learned {
    /// What `page`, the output of a job (a triage page when `is_page`),
    /// taught.
    pub(crate) fn of(page: RenderedPage, is_page: bool, kept: Vec<Diagnostic>) -> Learned {
        let mut diagnostics = page.diagnostics;
        diagnostics.extend(kept);
        Learned {
            html_files: page.files.len(),
            code_blocks: page.code_blocks,
            cached_pages: usize::from(is_page && page.cached),
            diagnostics,
            anchors: page.anchors,
            ids: page
                .ids
                .into_iter()
                .map(|(path, ids)| (path.into_boxed_str(), PageIds::new(ids)))
                .collect(),
        }
    }

    pub(crate) fn merge(mut self, mut other: Learned) -> Learned {
        // The larger map takes in the smaller.
        if self.ids.len() < other.ids.len() {
            std::mem::swap(&mut self.ids, &mut other.ids);
        }
        self.html_files += other.html_files;
        self.code_blocks += other.code_blocks;
        self.cached_pages += other.cached_pages;
        self.diagnostics.extend(other.diagnostics);
        self.anchors.extend(other.anchors);
        self.ids.extend(other.ids);
        self
    }

    /// Reports every fragment link whose target page lacks that id.
    pub(crate) fn check_anchors(&mut self, base_path: &str) {
        for (source, anchor) in std::mem::take(&mut self.anchors) {
            let found = self
                .ids
                .get(anchor.page.as_str())
                .is_some_and(|ids| ids.contains(&anchor.fragment));
            if !found {
                self.diagnostics.push(
                    Diagnostic::error(
                        source,
                        anchor.line,
                        anchor.col,
                        format!(
                            "link to missing anchor `#{}` on {base_path}{}",
                            anchor.fragment, anchor.page
                        ),
                    )
                    .with_help("link to one of the page's headings; each heading's id is its slug"),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::PageIds;

    #[test]
    fn page_ids_find_exactly_the_ids_written() {
        let written = ["root-cause", "a\nb", "", "root", "é", "root-cause", "z"];
        let ids = PageIds::new(written.iter().map(|s| s.to_string()).collect());
        for id in written {
            assert!(ids.contains(id), "{id:?}");
        }
        for absent in ["root-caus", "root-cause-1", "a", "b", "a\nbz", "Root", "e"] {
            assert!(!ids.contains(absent), "{absent:?}");
        }
        assert!(!PageIds::new(Vec::new()).contains(""));
    }
}
