//! Triage pages (fresh or from the incremental cache) and their aliases.

use super::*;

/// A page's meta description: its own, else its triage summary, else the
/// site's, else its signature, so that it is never empty.
pub(super) fn page_description<'a>(
    front: &'a crate::front_matter::PageFrontMatter,
    site: &'a str,
) -> &'a str {
    [
        front.description.as_deref(),
        front.triage.as_deref(),
        Some(site),
    ]
    .into_iter()
    .flatten()
    .find(|d| !d.trim().is_empty())
    .unwrap_or(&front.signature)
}

impl SiteContext<'_> {
    pub(super) fn render_page(&self, page: &PageEntry, shared: &Shared) -> RenderedPage {
        let parsed = &page.parsed;
        let mut report = RenderedPage::new(&parsed.source.path);
        let front = &parsed.front;
        let md = self.markdown(&parsed.source, parsed.body_offset, &page.path);
        report.add_markdown(&parsed.source.path, &md);
        let body_links = crate::finish::affiliate_summary(&md.html, self.policy);
        let section = &self.site.sections[page.section];
        let taxonomies = self
            .site
            .taxonomies
            .iter()
            .map(|t| {
                let values = front.terms(t.name);
                let terms = values
                    .iter()
                    .map(|v| crate::slug::slugify(v))
                    .filter(|s| !s.is_empty())
                    .map(|slug| {
                        let name = t
                            .terms
                            .iter()
                            .find(|term| term.slug == slug)
                            .map_or(slug.clone(), |term| term.name.clone());
                        TermLink {
                            name,
                            url: self.url(&format!("{}/{slug}/", t.name)),
                        }
                    })
                    .collect();
                TaxonomyLinks {
                    name: t.name,
                    title: t.title.clone(),
                    terms,
                }
            })
            .collect();
        let view = PageView {
            title: &front.title,
            description: page_description(front, &self.config.description),
            signature: &front.signature,
            patterns: &front.patterns,
            triage: front.triage.as_deref(),
            url: self.url(&page.path),
            permalink: self.config.absolute(&page.path),
            date: front.date.as_ref().map(|d| d.0.as_str()),
            updated: front.updated.as_ref().map(|d| d.0.as_str()),
            taxonomies,
            sponsored: front
                .sponsored
                .iter()
                .map(|s| SponsoredView {
                    label: &s.label,
                    url: s.url.0.trim(),
                    note: s.note.as_deref(),
                })
                .collect(),
            sources: front
                .sources
                .iter()
                .map(|s| SourceView {
                    title: &s.title,
                    url: s.url.0.trim(),
                })
                .collect(),
            disclosure: self.disclosure(front, body_links),
            disclosure_top: body_links.0,
            calculator: match &front.calculator {
                Some(state) => match self.calculators.get(state) {
                    Ok(view) => Some(view.clone()),
                    Err(message) => {
                        let (line, col) = parsed.key_at("calculator").unwrap_or((1, 1));
                        report.diagnostics.push(Diagnostic::error(
                            &parsed.source.path,
                            line,
                            col,
                            message,
                        ));
                        None
                    }
                },
                None => None,
            },
            toc: &md.toc,
            section: LinkView {
                title: section.title().to_string(),
                url: self.url(&section.path),
            },
            source: &parsed.source.rel,
        };
        let keywords: Vec<&str> = front
            .frameworks
            .iter()
            .chain(&front.tools)
            .chain(&front.tags)
            .map(String::as_str)
            .collect();
        let graph = jsonld::article(&jsonld::Article {
            headline: &front.title,
            description: view.description,
            signature: &front.signature,
            url: &view.permalink,
            published: view.date,
            modified: view.updated,
            keywords,
            language: &self.config.language,
            author: self.config.author.as_deref().unwrap_or(&self.config.title),
            site_name: &self.config.title,
            site_url: self.config.base_url.as_str(),
            crumbs: self.crumbs(Some(section), Some((&front.title, &page.path))),
            calculator: front.calculator.is_some(),
            citations: view.sources.iter().map(|s| (s.title, s.url)).collect(),
        });
        let meta = MetaView {
            title: format!("{} | {}", front.title, self.config.title),
            description: view.description,
            canonical: Some(view.permalink.clone()),
            og_type: "article",
        };
        let mut ctx = TemplateContext::default();
        ctx.insert_prepared("site", &shared.site);
        ctx.insert("meta", &meta);
        ctx.insert("page", &view);
        ctx.insert_html("content", &md.html);
        ctx.insert_html("jsonld", &jsonld::to_script(&graph));
        if view.calculator.is_some() {
            ctx.insert_html("calculator_data", self.catalogue_json);
        }
        let template = front
            .template
            .as_ref()
            .map_or("page.html", |t| t.0.as_str());
        let nodes = if front.calculator.is_some() {
            CALCULATOR_NODES
        } else {
            ARTICLE_NODES
        };
        self.emit(
            &mut report,
            template,
            &page.path,
            &ctx,
            Some(nodes),
            &md.toc,
        );
        for alias in &front.aliases {
            let alias_path = format!("{}/", alias.0.trim_matches('/'));
            let mut ctx = TemplateContext::default();
            ctx.insert_prepared("site", &shared.site);
            ctx.insert(
                "target",
                &LinkView {
                    title: front.title.clone(),
                    url: view.url.clone(),
                },
            );
            ctx.insert("canonical", &view.permalink);
            self.emit(&mut report, "alias.html", &alias_path, &ctx, None, &[]);
        }
        report
    }
}
