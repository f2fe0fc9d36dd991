//! Taxonomy list and term pages.

use super::*;

impl Renderer<'_> {
    pub(super) fn render_taxonomies(&self, site: &SiteView<'_>) -> RenderReport {
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
        let mut report = RenderReport::default();
        for taxonomy in &self.site.taxonomies {
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
            let check = Check {
                source: Path::new("site.toml"),
                jsonld: Some(COLLECTION_NODES),
                headings: &[],
            };
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
            self.emit("taxonomy_list.html", &list_path, &ctx, &check, &mut report);
            let terms: Vec<RenderReport> = taxonomy
                .terms
                .par_iter()
                .zip(view.terms.par_iter())
                .map(|(term, term_view)| {
                    let mut report = RenderReport::default();
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
                    self.emit("taxonomy_term.html", &term_path, &ctx, &check, &mut report);
                    report
                })
                .collect();
            report = terms.into_iter().fold(report, RenderReport::merge);
        }
        report
    }
}
