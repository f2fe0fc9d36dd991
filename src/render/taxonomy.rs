//! Taxonomy list and term pages.

use rayon::prelude::*;

use super::*;

impl SiteContext<'_> {
    /// A taxonomy's list page and its term pages (terms in parallel).
    pub(super) fn render_taxonomy(
        &self,
        taxonomy: &crate::assemble::Taxonomy,
        site: &SiteView<'_>,
    ) -> RenderedPage {
        #[derive(Serialize)]
        struct TermView<'a> {
            name: &'a str,
            slug: &'a str,
            url: String,
            count: usize,
        }
        #[derive(Serialize)]
        struct TaxonomyView<'a> {
            name: &'a str,
            title: &'a str,
            url: String,
            terms: Vec<TermView<'a>>,
        }
        let mut report = RenderedPage::new(Job::Taxonomy(taxonomy).source());
        {
            let view = TaxonomyView {
                name: taxonomy.name,
                title: &taxonomy.title,
                url: self.url(&format!("{}/", taxonomy.name)),
                terms: taxonomy
                    .terms
                    .iter()
                    .map(|t| TermView {
                        name: &t.name,
                        slug: &t.slug,
                        url: self.url(&format!("{}/{}/", taxonomy.name, t.slug)),
                        count: t.pages.len(),
                    })
                    .collect(),
            };
            let list_path = format!("{}/", taxonomy.name);
            let mut ctx = TemplateContext::default();
            ctx.insert("site", site);
            let crumbs = self.crumbs(None, Some((&taxonomy.title, &list_path)));
            self.list_meta(
                &mut ctx,
                &taxonomy.title,
                &self.config.description,
                &list_path,
                crumbs,
            );
            ctx.insert("taxonomy", &view);
            self.emit(
                &mut report,
                "taxonomy_list.html",
                &list_path,
                &ctx,
                Some(COLLECTION_NODES),
                &[],
            );
            let terms: Vec<RenderedPage> = taxonomy
                .terms
                .par_iter()
                .zip(view.terms.par_iter())
                .map(|(term, term_view)| {
                    let mut report = RenderedPage::new(Job::Taxonomy(taxonomy).source());
                    let mut ctx = TemplateContext::default();
                    ctx.insert("site", site);
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
                    ctx.insert("taxonomy", &view);
                    ctx.insert("term", term_view);
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
                })
                .collect();
            for term in terms {
                report.files.extend(term.files);
                report.diagnostics.extend(term.diagnostics);
            }
        }
        report
    }
}
