//! Section pages (with pagination), the home page and the 404 page.

use super::*;

impl SiteContext<'_> {
    pub(super) fn render_section(&self, section: &SectionEntry, shared: &Shared) -> RenderedPage {
        let empty = Vec::new();
        let (title, description, md) = match &section.parsed {
            Some(p) => {
                let md = self.markdown(&p.source, p.body_offset, &section.path);
                (
                    p.front.title.as_str(),
                    p.front
                        .description
                        .as_deref()
                        .unwrap_or(&self.config.description),
                    Some(md),
                )
            }
            None => (
                self.config.title.as_str(),
                self.config.description.as_str(),
                None,
            ),
        };
        let mut report = RenderedPage::new(Job::Section(section).source());
        if let (Some(md), Some(p)) = (&md, &section.parsed) {
            report.add_markdown(&p.source.path, md);
        }
        let subsections: Vec<SectionLink> = section
            .subsections
            .iter()
            .map(|&i| {
                let s = &self.site.sections[i];
                SectionLink {
                    title: s.title().to_string(),
                    url: self.url(&s.path),
                    count: s.pages.len(),
                    pages: s
                        .pages
                        .iter()
                        .take(self.config.paginate_by)
                        .map(|&p| self.summary(&self.site.pages[p]))
                        .collect(),
                }
            })
            .collect();
        let recent: Vec<usize> = if section.parent.is_none() {
            self.site
                .recent
                .iter()
                .take(self.config.paginate_by)
                .copied()
                .collect()
        } else {
            Vec::new()
        };
        let default = if section.parent.is_none() {
            "index.html"
        } else {
            "section.html"
        };
        let template = section
            .parsed
            .as_ref()
            .and_then(|p| p.front.template.as_ref())
            .map_or(default, |t| t.0.as_str());
        let headings: &[Heading] = md.as_ref().map_or(&[], |m| &m.toc);
        let parent = section.parent.map(|p| &self.site.sections[p]);

        // One list page per `paginate_by` pages: the section's URL, then `page/2/`...
        let chunks: Vec<&[usize]> = if section.pages.is_empty() {
            vec![&[]]
        } else {
            section.pages.chunks(self.config.paginate_by).collect()
        };
        let page_path = |n: usize| {
            if n == 1 {
                section.path.clone()
            } else {
                format!("{}page/{n}/", section.path)
            }
        };
        for (index, chunk) in chunks.iter().enumerate() {
            let number = index + 1;
            let path = page_path(number);
            let paginator = Paginator {
                current: number,
                total: chunks.len(),
                first: self.url(&section.path),
                previous: (number > 1).then(|| self.url(&page_path(number - 1))),
                next: (number < chunks.len()).then(|| self.url(&page_path(number + 1))),
            };
            let view = SectionView {
                title,
                description,
                url: self.url(&path),
                permalink: self.config.absolute(&path),
                pages: chunk
                    .iter()
                    .map(|&i| self.summary(&self.site.pages[i]))
                    .collect(),
                subsections: subsections.clone(),
                recent: recent
                    .iter()
                    .map(|&i| self.summary(&self.site.pages[i]))
                    .collect(),
                toc: md.as_ref().map_or(&empty, |m| &m.toc),
                paginator,
            };
            let mut ctx = TemplateContext::default();
            ctx.insert_prepared("site", &shared.site);
            let last = section.parent.map(|_| (title, path.as_str()));
            let title_n = if number == 1 {
                title.to_string()
            } else {
                format!("{title} (page {number})")
            };
            self.list_meta(
                &mut ctx,
                &title_n,
                description,
                &path,
                self.crumbs(parent, last),
            );
            ctx.insert("section", &view);
            ctx.insert_html("content", md.as_ref().map_or("", |m| m.html.as_str()));
            self.emit(
                &mut report,
                template,
                &path,
                &ctx,
                Some(COLLECTION_NODES),
                headings,
            );
        }
        report
    }

    pub(super) fn render_404(&self, shared: &Shared) -> RenderedPage {
        let mut report = RenderedPage::new(Job::NotFound.source());
        let mut ctx = TemplateContext::default();
        ctx.insert_prepared("site", &shared.site);
        let meta = MetaView {
            title: format!("Page not found | {}", self.config.title),
            description: &self.config.description,
            canonical: None,
            og_type: "website",
        };
        ctx.insert("meta", &meta);
        self.emit(&mut report, "404.html", "404.html", &ctx, None, &[]);
        report
    }
}
