//! What each job's output depends on beyond the site-wide inputs (see
//! [`crate::cache::site_key`]), as one hash: the key under which the
//! incremental cache keeps the job's files.
//!
//! - A page: its source text and site path.
//! - A section: its own source text and path, and the summaries (title,
//!   description, signature, triage, date, URL) of every page it or its
//!   subsections list, and of the home page's recent pages.
//! - A taxonomy's list page: its terms and how many pages each has.
//! - A term's page: the same, and the summaries of the pages it lists.
//! - The 404 page: nothing more.
//!
//! A list page shows summaries, never bodies, so editing a page's body
//! re-renders that page alone; a new title re-renders the lists it is on.

use rayon::prelude::*;

use super::{Job, SiteContext};

/// What list pages show of the site, hashed (see
/// [`SiteContext::summary_hashes`]).
pub struct Summaries {
    /// Each page's summary, by index in [`crate::assemble::SiteIndex::pages`].
    pages: Vec<u128>,
    /// Each taxonomy's terms and counts, by index in
    /// [`crate::assemble::SiteIndex::taxonomies`].
    taxonomies: Vec<u128>,
}

impl SiteContext<'_> {
    /// What list pages show of the site, hashed once for every job: each
    /// page's summary, and each taxonomy's terms with their page counts.
    pub fn summary_hashes(&self) -> Summaries {
        let pages = self
            .site
            .pages
            .par_iter()
            .map(|page| {
                let json = serde_json::to_vec(&self.summary(page)).unwrap_or_default();
                crate::hash::content_hash(&json)
            })
            .collect();
        let taxonomies = self
            .site
            .taxonomies
            .iter()
            .map(|taxonomy| {
                let mut hasher = xxhash_rust::xxh3::Xxh3::new();
                terms(&mut hasher, taxonomy);
                hasher.digest128()
            })
            .collect();
        Summaries { pages, taxonomies }
    }

    /// The hash of what `job`'s output depends on beyond the site-wide
    /// inputs; `None` for a job that is never cached (a broken file's body
    /// is only checked).
    pub fn inputs(&self, job: &Job<'_>, summaries: &Summaries) -> Option<u128> {
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        let pages = |hasher: &mut xxhash_rust::xxh3::Xxh3, pages: &[usize]| {
            hasher.update(&(pages.len() as u64).to_le_bytes());
            for &i in pages {
                hasher.update(&summaries.pages[i].to_le_bytes());
            }
        };
        match job {
            Job::Page(page) => {
                hasher.update(b"page");
                hasher.update(&page.parsed.source.text_hash().to_le_bytes());
                hasher.update(page.path.as_bytes());
            }
            Job::Section(section) => {
                hasher.update(b"section\0");
                hasher.update(section.path.as_bytes());
                let own = section.parsed.as_ref().map(|p| p.source.text_hash());
                hasher.update(&own.unwrap_or_default().to_le_bytes());
                pages(&mut hasher, &section.pages);
                for &i in &section.subsections {
                    pages(&mut hasher, &self.site.sections[i].pages);
                }
                if section.parent.is_none() {
                    pages(&mut hasher, &self.site.recent);
                }
            }
            // A taxonomy's terms and counts are hashed once per build (a
            // term's page shows them all: hashing them per term grew with
            // the square of the terms).
            Job::Taxonomy(at) => {
                hasher.update(b"taxonomy\0");
                hasher.update(&summaries.taxonomies[*at].to_le_bytes());
            }
            Job::Term(at, term) => {
                hasher.update(b"term\0");
                hasher.update(&summaries.taxonomies[*at].to_le_bytes());
                let term = &self.site.taxonomies[*at].terms[*term];
                hasher.update(term.slug.as_bytes());
                hasher.update(b"\0");
                pages(&mut hasher, &term.pages);
            }
            Job::NotFound => hasher.update(b"404"),
            Job::BrokenBody(_) => return None,
        }
        Some(hasher.digest128())
    }
}

/// What every page of `taxonomy` shows of it: its name, and each term
/// with the number of its pages (names are in the site-wide inputs).
fn terms(hasher: &mut xxhash_rust::xxh3::Xxh3, taxonomy: &crate::assemble::Taxonomy) {
    hasher.update(taxonomy.name.as_bytes());
    hasher.update(b"\0");
    for term in &taxonomy.terms {
        hasher.update(term.slug.as_bytes());
        hasher.update(b"\0");
        hasher.update(&(term.pages.len() as u64).to_le_bytes());
    }
}

impl Job<'_> {
    /// The file a job's problems are reported at.
    pub fn source(&self) -> &std::path::Path {
        use std::path::Path;
        match self {
            Job::Page(page) => &page.parsed.source.path,
            Job::Section(section) => section
                .parsed
                .as_ref()
                .map_or(Path::new("content"), |p| p.source.path.as_path()),
            Job::Taxonomy(_) | Job::Term(..) => Path::new(crate::config::CONFIG_FILE),
            Job::BrokenBody(broken) => &broken.source.path,
            Job::NotFound => Path::new("404.html"),
        }
    }
}
