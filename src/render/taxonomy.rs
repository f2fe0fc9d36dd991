//! Taxonomy list and term pages: a job each, so that a new title renders
//! again only the term pages that list its page.

use super::*;

/// A term as the templates see it.
#[derive(Serialize)]
struct TermView<'a> {
    name: &'a str,
    slug: &'a str,
    url: String,
    count: usize,
}

/// A taxonomy as the templates see it (on its list page and each term's).
#[derive(Serialize)]
pub(super) struct TaxonomyView<'a> {
    name: &'a str,
    title: &'a str,
    url: String,
    terms: Vec<TermView<'a>>,
}

impl SiteContext<'_> {
    /// The view of a taxonomy with every term, made once per build (see
    /// [`Shared`]): each term's page shares it.
    pub(super) fn taxonomy_view<'t>(
        &self,
        taxonomy: &'t crate::assemble::Taxonomy,
    ) -> TaxonomyView<'t> {
        TaxonomyView {
            name: taxonomy.name,
            title: &taxonomy.title,
            url: self.url(&format!("{}/", taxonomy.name)),
            terms: (taxonomy.terms.iter())
                .map(|t| self.term_view(taxonomy, t))
                .collect(),
        }
    }

    fn term_view<'t>(
        &self,
        taxonomy: &crate::assemble::Taxonomy,
        term: &'t crate::assemble::Term,
    ) -> TermView<'t> {
        TermView {
            name: &term.name,
            slug: &term.slug,
            url: self.url(&format!("{}/{}/", taxonomy.name, term.slug)),
            count: term.pages.len(),
        }
    }

    /// The list page of the `at`-th taxonomy of the site.
    pub(super) fn render_taxonomy(&self, at: usize, shared: &Shared) -> RenderedPage {
        let taxonomy = &self.site.taxonomies[at];
        let mut report = RenderedPage::new(Job::Taxonomy(at).source());
        let list_path = format!("{}/", taxonomy.name);
        let mut ctx = TemplateContext::default();
        ctx.insert_prepared("site", &shared.site);
        let crumbs = self.crumbs(None, Some((&taxonomy.title, &list_path)));
        self.list_meta(
            &mut ctx,
            &taxonomy.title,
            &self.config.description,
            &list_path,
            crumbs,
        );
        ctx.insert_prepared("taxonomy", &shared.taxonomies[at]);
        self.emit(
            &mut report,
            "taxonomy_list.html",
            &list_path,
            &ctx,
            Some(COLLECTION_NODES),
            &[],
        );
        report
    }

    /// The page of the `term`-th term of the `at`-th taxonomy.
    pub(super) fn render_term(&self, at: usize, term: usize, shared: &Shared) -> RenderedPage {
        let taxonomy = &self.site.taxonomies[at];
        let mut report = RenderedPage::new(Job::Term(at, term).source());
        let term = &taxonomy.terms[term];
        let list_path = format!("{}/", taxonomy.name);
        let mut ctx = TemplateContext::default();
        ctx.insert_prepared("site", &shared.site);
        let term_path = format!("{}/{}/", taxonomy.name, term.slug);
        let mut crumbs = self.crumbs(None, Some((&taxonomy.title, &list_path)));
        crumbs.push(Crumb {
            name: term.name.clone(),
            url: self.config.absolute(&term_path),
        });
        let title = format!("{}: {}", taxonomy.title, term.name);
        self.list_meta(
            &mut ctx,
            &title,
            &self.config.description,
            &term_path,
            crumbs,
        );
        ctx.insert_prepared("taxonomy", &shared.taxonomies[at]);
        ctx.insert("term", &self.term_view(taxonomy, term));
        let pages: Vec<PageSummary<'_>> = term
            .pages
            .iter()
            .map(|&i| self.summary(&self.site.pages[i]))
            .collect();
        ctx.insert("pages", &pages);
        self.emit(
            &mut report,
            "taxonomy_term.html",
            &term_path,
            &ctx,
            Some(COLLECTION_NODES),
            &[],
        );
        report
    }
}
