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

impl Renderer<'_> {
    /// Renders a page, or takes its files from the incremental cache when
    /// nothing it depends on has changed.
    pub(super) fn render_page_cached(&self, page: &PageEntry, site: &SiteView<'_>) -> RenderReport {
        let Some(cache) = self.cache else {
            return self.render_page(page, site, false);
        };
        let key = cache.key(&page.parsed.source.text, &page.path);
        // Cached HTML goes through the link policy again, like fresh HTML;
        // an entry the policy rejects is not served (the page is rendered).
        let entry = cache.load(&key).and_then(|entry| {
            let files = entry
                .files
                .iter()
                .map(|(file, html)| Some((file.clone(), self.refinish(html)?)))
                .collect::<Option<Vec<_>>>()?;
            Some((entry, files))
        });
        if let Some((entry, files)) = entry {
            let mut report = RenderReport {
                cached_pages: 1,
                code_blocks: entry.code_blocks,
                ..Default::default()
            };
            for (file, html) in &files {
                match self.staging.write(file, html) {
                    Ok(()) => report.html_files += 1,
                    Err(message) => report.diagnostics.push(Diagnostic::error(
                        &page.parsed.source.path,
                        1,
                        1,
                        message,
                    )),
                }
            }
            report.ids = entry
                .ids
                .into_iter()
                .map(|(path, ids)| (path, ids.into_iter().collect()))
                .collect();
            report.anchors = entry.anchors;
            report.diagnostics.extend(entry.warnings);
            return report;
        }
        let report = self.render_page(page, site, true);
        if !report.diagnostics.iter().any(Diagnostic::is_error) {
            let entry = CacheEntry {
                files: report.written.clone().unwrap_or_default(),
                ids: report
                    .ids
                    .iter()
                    .map(|(path, ids)| {
                        let mut ids: Vec<String> = ids.iter().cloned().collect();
                        ids.sort();
                        (path.clone(), ids)
                    })
                    .collect(),
                anchors: report.anchors.clone(),
                warnings: report.diagnostics.clone(),
                code_blocks: report.code_blocks,
            };
            cache.store(&key, &entry);
        }
        report
    }

    /// Applies the link policy to a cached file: the same bytes when it
    /// changes nothing (the usual case), the re-minified result when it
    /// does, and `None` when the policy finds a problem in it.
    pub(super) fn refinish(&self, html: &str) -> Option<Vec<u8>> {
        let ctx = FinishContext {
            policy: self.policy,
            disclosure: &self.config.disclosure,
            jsonld: None,
        };
        let (finished, _) = finish::finish(html, &ctx).ok()?;
        if finished == html {
            Some(finished.into_bytes())
        } else {
            Some(minify(&finished))
        }
    }

    pub(super) fn render_page(
        &self,
        page: &PageEntry,
        site: &SiteView<'_>,
        record: bool,
    ) -> RenderReport {
        let mut report = RenderReport {
            written: record.then(Vec::new),
            ..Default::default()
        };
        let parsed = &page.parsed;
        let front = &parsed.front;
        let md = self.markdown(&parsed.source, parsed.body_offset, &page.path);
        report.add_markdown(&parsed.source.path, &md);
        let body_links = finish::affiliate_summary(&md.html, self.policy);
        let section = &self.site.sections[page.section];
        let taxonomies = self
            .site
            .taxonomies
            .iter()
            .map(|t| {
                let values = match t.name {
                    "frameworks" => &front.frameworks,
                    "tools" => &front.tools,
                    _ => &front.tags,
                };
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
                Some(state) => match self.cached_calculator(state) {
                    Ok(view) => Some(view),
                    Err(message) => {
                        let text = &parsed.source.text;
                        let at = text[..parsed.body_offset].find("calculator:").unwrap_or(0);
                        let (line, col) = LineIndex::new(text).line_col(at);
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
        ctx.insert("site", site);
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
        let check = Check {
            source: &parsed.source.path,
            jsonld: Some(nodes),
            headings: &md.toc,
        };
        self.emit(template, &page.path, &ctx, &check, &mut report);
        for alias in &front.aliases {
            let alias_path = format!("{}/", alias.0.trim_matches('/'));
            let mut ctx = TemplateContext::default();
            ctx.insert("site", site);
            ctx.insert(
                "target",
                &LinkView {
                    title: front.title.clone(),
                    url: view.url.clone(),
                },
            );
            ctx.insert("canonical", &view.permalink);
            let check = Check {
                source: &parsed.source.path,
                jsonld: None,
                headings: &[],
            };
            self.emit("alias.html", &alias_path, &ctx, &check, &mut report);
        }
        report
    }
}
