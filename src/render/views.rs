//! The views templates see: the site, pages, sections, pagination, the
//! calculator and head metadata.

use super::*;

/// The site, as templates see it.
#[derive(Debug, Serialize)]
pub struct SiteView<'a> {
    /// Site name.
    pub title: &'a str,
    /// Site description.
    pub description: &'a str,
    /// `lang` attribute.
    pub language: &'a str,
    /// Absolute base URL, ending in `/`.
    pub base_url: &'a str,
    /// Path of the base URL, ending in `/`.
    pub base_path: &'a str,
    /// Author or publisher.
    pub author: Option<&'a str>,
    /// Whether the full-text search index is built (`[search] enabled`).
    pub search: bool,
    /// The top-level sections, for navigation.
    pub sections: Vec<LinkView>,
}

/// What every job's templates share, serialised once per build.
pub struct Shared {
    /// The site (`site` in every template).
    pub(super) site: Prepared,
    /// Each taxonomy, in the site's order (`taxonomy` on its list page and
    /// on each term's).
    pub(super) taxonomies: Vec<Prepared>,
}

/// A titled link.
#[derive(Debug, Clone, Serialize)]
pub struct LinkView {
    /// Link text.
    pub title: String,
    /// Path from the host root, such as `/triage/oom/`.
    pub url: String,
}

/// A page in a list.
#[derive(Debug, Clone, Serialize)]
pub(super) struct PageSummary<'a> {
    pub(super) title: &'a str,
    pub(super) url: String,
    pub(super) description: Option<&'a str>,
    pub(super) signature: &'a str,
    /// The one-line "Direct Error Triage" summary.
    pub(super) triage: Option<&'a str>,
    pub(super) date: Option<&'a str>,
}

#[derive(Debug, Serialize)]
pub(super) struct TermLink {
    pub(super) name: String,
    pub(super) url: String,
}

#[derive(Debug, Serialize)]
pub(super) struct TaxonomyLinks {
    pub(super) name: &'static str,
    pub(super) title: String,
    pub(super) terms: Vec<TermLink>,
}

#[derive(Debug, Serialize)]
pub(super) struct SponsoredView<'a> {
    pub(super) label: &'a str,
    pub(super) url: &'a str,
    pub(super) note: Option<&'a str>,
}

#[derive(Debug, Serialize)]
pub(super) struct SourceView<'a> {
    pub(super) title: &'a str,
    pub(super) url: &'a str,
}

#[derive(Debug, Serialize)]
pub(super) struct PageView<'a> {
    pub(super) title: &'a str,
    pub(super) description: &'a str,
    pub(super) signature: &'a str,
    pub(super) patterns: &'a [String],
    pub(super) triage: Option<&'a str>,
    pub(super) url: String,
    pub(super) permalink: String,
    pub(super) date: Option<&'a str>,
    pub(super) updated: Option<&'a str>,
    pub(super) taxonomies: Vec<TaxonomyLinks>,
    pub(super) sponsored: Vec<SponsoredView<'a>>,
    pub(super) sources: Vec<SourceView<'a>>,
    pub(super) disclosure: Vec<&'a str>,
    /// The body has affiliate links: the disclosure goes above it.
    pub(super) disclosure_top: bool,
    pub(super) calculator: Option<CalculatorView>,
    pub(super) toc: &'a [Heading],
    pub(super) section: LinkView,
    pub(super) source: &'a str,
}

#[derive(Debug, Serialize)]
pub(super) struct SectionView<'a> {
    pub(super) title: &'a str,
    pub(super) description: &'a str,
    pub(super) url: String,
    pub(super) permalink: String,
    pub(super) pages: Vec<PageSummary<'a>>,
    pub(super) subsections: Vec<SectionLink<'a>>,
    /// On the home page: the newest pages of the whole site.
    pub(super) recent: Vec<PageSummary<'a>>,
    pub(super) toc: &'a [Heading],
    /// Position among the section's list pages.
    pub(super) paginator: Paginator,
}

/// Where a list page sits among its siblings.
#[derive(Debug, Serialize)]
pub(super) struct Paginator {
    pub(super) current: usize,
    pub(super) total: usize,
    pub(super) first: String,
    pub(super) previous: Option<String>,
    pub(super) next: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct SectionLink<'a> {
    pub(super) title: String,
    pub(super) url: String,
    pub(super) count: usize,
    /// The section's first pages (at most `paginate_by`), for listings by section.
    pub(super) pages: Vec<PageSummary<'a>>,
}

/// The calculator on a page: its starting state, the result computed at
/// build time by the sizing crate, and the choices the form offers.
#[derive(Debug, Clone, Serialize)]
pub struct CalculatorView {
    pub(super) model: String,
    pub(super) weights: &'static str,
    pub(super) runtime: &'static str,
    pub(super) context: u64,
    pub(super) kv: &'static str,
    pub(super) gpu: String,
    /// The answer, with the figures `errata size --format json` gives.
    pub(super) result: super::calculator::ResultView,
    /// GiB figures formatted with two decimals, as the script shows them.
    pub(super) shown: BTreeMap<&'static str, String>,
    pub(super) models: Vec<(String, String)>,
    pub(super) gpus: Vec<String>,
    pub(super) formats: Vec<&'static str>,
    pub(super) runtimes: Vec<&'static str>,
    pub(super) kv_types: Vec<&'static str>,
}

/// Head metadata every template gets as `meta`.
#[derive(Debug, Serialize)]
pub(super) struct MetaView<'a> {
    pub(super) title: String,
    pub(super) description: &'a str,
    pub(super) canonical: Option<String>,
    pub(super) og_type: &'static str,
}
