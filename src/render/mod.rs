//! Stages 4 and 5, `render` and `finish`: Markdown and templates to HTML,
//! then minification, in parallel over pages. Each finished page is written
//! at once, so the build never holds every rendered page in memory.

use std::path::Path;

use rayon::prelude::*;
use serde::Serialize;

use crate::assemble::{PageEntry, SectionEntry, SiteIndex};
use crate::cache::{CacheEntry, PageCache};
use crate::calculator::Catalogue;
use crate::config::Config;
use crate::diagnostics::{Diagnostic, LineIndex};
use crate::finish::{self, FinishContext};
use crate::front_matter::CalculatorState;
use crate::highlight::Highlighter;
use crate::jsonld::{self, Crumb};
use crate::links::LinkPolicy;
use std::collections::{BTreeMap, HashMap, HashSet};

use crate::load::SourceFile;
use crate::markdown::{self, AnchorRef, Heading, RenderContext, ResolvedLink};
use crate::minify::minify;
use crate::templates::{TemplateContext, Templates};
use crate::write::Staging;

mod calculator;
mod page;
mod section;
mod taxonomy;
mod views;

use views::*;
pub use views::{CalculatorCache, CalculatorView, LinkView, SiteView};

/// What rendering produced, besides the files it wrote.
#[derive(Debug, Default)]
pub struct RenderReport {
    /// HTML files written.
    pub html_files: usize,
    /// Code blocks rendered.
    pub code_blocks: usize,
    /// Errors and warnings.
    pub diagnostics: Vec<Diagnostic>,
    /// Fragment links to check, with the file they were written in.
    anchors: Vec<(std::path::PathBuf, AnchorRef)>,
    /// Site path → every id on that page.
    ids: HashMap<String, HashSet<String>>,
    /// Files written, kept when the page is to be cached.
    written: Option<Vec<(String, String)>>,
    /// Pages taken from the incremental cache.
    pub cached_pages: usize,
}

impl RenderReport {
    fn merge(mut self, other: RenderReport) -> RenderReport {
        self.html_files += other.html_files;
        self.code_blocks += other.code_blocks;
        self.diagnostics.extend(other.diagnostics);
        self.anchors.extend(other.anchors);
        self.ids.extend(other.ids);
        self.cached_pages += other.cached_pages;
        self.written = None;
        self
    }

    fn add_markdown(&mut self, source: &Path, md: &markdown::RenderedMarkdown) {
        self.code_blocks += md.code_blocks;
        self.diagnostics.extend(md.diagnostics.iter().cloned());
        self.anchors
            .extend(md.anchors.iter().map(|a| (source.to_path_buf(), a.clone())));
    }

    /// Reports every fragment link whose target page lacks that id.
    fn check_anchors(&mut self, base_path: &str) {
        for (source, anchor) in std::mem::take(&mut self.anchors) {
            if !self
                .ids
                .get(&anchor.page)
                .is_some_and(|ids| ids.contains(&anchor.fragment))
            {
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

/// Everything a renderer reads; shared by all threads.
pub struct Renderer<'a> {
    /// The configuration.
    pub config: &'a Config,
    /// The assembled site.
    pub site: &'a SiteIndex,
    /// The templates.
    pub templates: &'a Templates,
    /// The build's highlight cache.
    pub highlighter: &'a Highlighter,
    /// Where files go.
    pub staging: &'a Staging,
    /// The link policy applied to every page.
    pub policy: &'a LinkPolicy,
    /// Calculator presets.
    pub catalogue: &'a Catalogue,
    /// The catalogue as JSON for the calculator script, escaped for `<script>`.
    pub catalogue_json: &'a str,
    /// The incremental cache, if this build uses one.
    pub cache: Option<&'a PageCache>,
    /// Minify HTML (off when the output is only checked).
    pub minify: bool,
    /// Counts rendered pages for the progress hook.
    pub(crate) pages: &'a crate::progress::Counter<'a>,
    /// Calculator results by front-matter state: most pages share a few
    /// starting states, so each is computed once per build.
    pub calculator_cache: &'a CalculatorCache,
}

/// What `emit` checks in a rendered page.
struct Check<'a> {
    /// The file problems are reported against.
    source: &'a Path,
    /// Node types the JSON-LD must hold; `None`: no structured data.
    jsonld: Option<&'a [&'a str]>,
    /// The page's headings, to locate problems with their ids in the source.
    headings: &'a [Heading],
}

const ARTICLE_NODES: &[&str] = &["TechArticle", "BreadcrumbList"];
const CALCULATOR_NODES: &[&str] = &["TechArticle", "BreadcrumbList", "WebApplication"];
const COLLECTION_NODES: &[&str] = &["CollectionPage", "BreadcrumbList"];

impl Renderer<'_> {
    fn url(&self, path: &str) -> String {
        format!("{}{}", self.config.base_path(), path)
    }

    fn site_view(&self) -> SiteView<'_> {
        let root = &self.site.sections[0];
        SiteView {
            title: &self.config.title,
            description: &self.config.description,
            language: &self.config.language,
            base_url: self.config.base_url.as_str(),
            base_path: self.config.base_path(),
            author: self.config.author.as_deref(),
            sections: root
                .subsections
                .iter()
                .map(|&i| LinkView {
                    title: self.site.sections[i].title().to_string(),
                    url: self.url(&self.site.sections[i].path),
                })
                .collect(),
        }
    }

    fn summary<'p>(&self, page: &'p PageEntry) -> PageSummary<'p> {
        let front = &page.parsed.front;
        PageSummary {
            title: &front.title,
            url: self.url(&page.path),
            description: front.description.as_deref(),
            signature: &front.signature,
            triage: front.triage.as_deref(),
            date: front.date.as_ref().map(|d| d.0.as_str()),
        }
    }

    /// Renders and writes every page, section, taxonomy page and the 404 page.
    pub fn render_all(&self) -> RenderReport {
        let site = self.site_view();
        let pages = self
            .site
            .pages
            .par_iter()
            .map(|page| {
                let report = self.render_page_cached(page, &site);
                self.pages.tick();
                report
            })
            .reduce(RenderReport::default, RenderReport::merge);
        let sections = self
            .site
            .sections
            .par_iter()
            .map(|section| self.render_section(section, &site))
            .reduce(RenderReport::default, RenderReport::merge);
        let taxonomies = self.render_taxonomies(&site);
        let broken = self
            .site
            .broken_bodies
            .par_iter()
            .map(|b| self.check_broken_body(b))
            .reduce(RenderReport::default, RenderReport::merge);
        let mut report = pages
            .merge(sections)
            .merge(taxonomies)
            .merge(broken)
            .merge(self.render_404(&site));
        report.check_anchors(self.config.base_path());
        report
    }

    /// Checks the body of a file whose front matter is broken, so its link
    /// problems show in the same run; nothing is written for it.
    fn check_broken_body(&self, broken: &crate::assemble::BrokenBody) -> RenderReport {
        let md = self.markdown(&broken.source, broken.body_offset, &broken.path);
        let mut report = RenderReport::default();
        report.add_markdown(&broken.source.path, &md);
        report.ids.insert(
            broken.path.clone(),
            md.toc.iter().map(|h| h.id.clone()).collect(),
        );
        report
    }

    /// Renders the body of `source`, whose page lives at site path `own_path`.
    fn markdown(
        &self,
        source: &SourceFile,
        body_offset: usize,
        own_path: &str,
    ) -> markdown::RenderedMarkdown {
        let text = &source.text;
        let lines = LineIndex::new(text);
        let resolve = |link: &str| {
            // A link to a file (not a page's source) must name one the build publishes.
            self.site.local_file(link, own_path)?;
            // Root-relative links (`/img/x.svg`) are relative to the site's
            // root, which may sit under a sub-path of the host.
            if link.starts_with('/') && !link.starts_with("//") {
                let url = format!("{}{}", self.config.base_path(), &link[1..]);
                return Ok(Some(ResolvedLink {
                    url,
                    page: link[1..].to_string(),
                    fragment: None,
                }));
            }
            self.site
                .resolve(link, &source.rel, own_path)
                .map(|target| {
                    target.map(|(page, fragment)| {
                        let mut url = self.url(&page);
                        if let Some(f) = &fragment {
                            if page == own_path {
                                url.clear();
                            }
                            url.push('#');
                            url.push_str(f);
                        }
                        ResolvedLink {
                            url,
                            page,
                            fragment,
                        }
                    })
                })
        };
        let ctx = RenderContext {
            path: &source.path,
            lines: &lines,
            body_offset,
            highlighter: self.highlighter,
            resolve: &resolve,
            image_size: &|src: &str| {
                let file = self.site.local_file(src, own_path).ok()??;
                crate::images::intrinsic_size(&file.source?)
            },
            sanitise: !self.config.markdown.unsafe_html,
        };
        markdown::render(&text[body_offset..], &ctx)
    }

    /// Renders template `name`, applies the link policy and checks, minifies,
    /// and writes the result at `<path>index.html` (or at `path` if it names
    /// an `.html` file).
    fn emit(
        &self,
        name: &str,
        path: &str,
        ctx: &TemplateContext,
        check: &Check<'_>,
        report: &mut RenderReport,
    ) {
        let html = match self.templates.render(name, ctx) {
            Ok(html) => html,
            Err(d) => return report.diagnostics.push(d),
        };
        let finish_ctx = FinishContext {
            policy: self.policy,
            disclosure: &self.config.disclosure,
            jsonld: check.jsonld,
        };
        let html = match finish::finish(&html, &finish_ctx) {
            Ok((html, stats)) => {
                if stats.disclosure_inserted {
                    report.diagnostics.push(Diagnostic::warning(
                        check.source,
                        1,
                        1,
                        format!(
                            "template {name} puts a sponsored link before any affiliate disclosure on /{path}; errata inserted the disclosure before it"
                        ),
                    ).with_help("render the disclosure (partials/disclosure.html) above the template's first sponsored link"));
                }
                for id in &stats.duplicate_ids {
                    // At the heading that carries the id, when one of the page's does.
                    let (line, col) = check
                        .headings
                        .iter()
                        .find(|h| h.id == *id)
                        .map_or((1, 1), |h| h.at);
                    report.diagnostics.push(
                        Diagnostic::warning(
                            check.source,
                            line,
                            col,
                            format!("duplicate id `{id}` on /{path} (rendering template {name})"),
                        )
                        .error_in_check(),
                    );
                }
                report
                    .ids
                    .insert(path.to_string(), stats.ids.into_iter().collect());
                html
            }
            Err(problems) => {
                for problem in problems {
                    report.diagnostics.push(Diagnostic::error(
                        check.source,
                        1,
                        1,
                        format!("{problem} (rendering template {name} for /{path})"),
                    ));
                }
                return;
            }
        };
        let file = if path.ends_with(".html") {
            path.to_string()
        } else {
            format!("{path}index.html")
        };
        let bytes = if self.minify {
            minify(&html)
        } else {
            html.into_bytes()
        };
        match self.staging.write(&file, &bytes) {
            Ok(()) => {
                report.html_files += 1;
                if let Some(written) = report.written.as_mut() {
                    written.push((file, String::from_utf8_lossy(&bytes).into_owned()));
                }
            }
            Err(message) => report
                .diagnostics
                .push(Diagnostic::error(check.source, 1, 1, message)),
        }
    }

    /// Adds `meta` and a CollectionPage `jsonld` for a list page at `path`.
    fn list_meta(
        &self,
        ctx: &mut TemplateContext,
        title: &str,
        description: &str,
        path: &str,
        crumbs: Vec<Crumb>,
    ) {
        let url = self.config.absolute(path);
        let full_title = if path.is_empty() {
            title.to_string()
        } else {
            format!("{title} | {}", self.config.title)
        };
        let meta = MetaView {
            title: full_title,
            description,
            canonical: Some(url.clone()),
            og_type: "website",
        };
        ctx.insert("meta", &meta);
        ctx.insert_html(
            "jsonld",
            &jsonld::to_script(&jsonld::collection(title, description, &url, &crumbs)),
        );
    }

    fn crumbs(&self, section: Option<&SectionEntry>, last: Option<(&str, &str)>) -> Vec<Crumb> {
        let mut crumbs = vec![Crumb {
            name: "Home".into(),
            url: self.config.base_url.to_string(),
        }];
        if let Some(section) = section.filter(|s| s.parent.is_some()) {
            crumbs.push(Crumb {
                name: section.title().to_string(),
                url: self.config.absolute(&section.path),
            });
        }
        if let Some((name, path)) = last {
            crumbs.push(Crumb {
                name: name.to_string(),
                url: self.config.absolute(path),
            });
        }
        crumbs
    }

    /// The disclosure sentences for a page: the site's text, plus the Amazon
    /// Associates sentence when an Amazon affiliate link is on the page.
    /// Empty when the page has no affiliate link.
    fn disclosure<'p>(
        &'p self,
        front: &'p crate::front_matter::PageFrontMatter,
        body: (bool, bool),
    ) -> Vec<&'p str> {
        let (body_affiliate, body_amazon) = body;
        let kinds: Vec<_> = front
            .sponsored
            .iter()
            .map(|s| self.policy.classify(s.url.0.trim(), Some("sponsored")))
            .collect();
        if kinds.is_empty() && !body_affiliate {
            return Vec::new();
        }
        let amazon =
            body_amazon || kinds.contains(&crate::links::LinkKind::Affiliate { amazon: true });
        let mut lines = vec![self.config.disclosure.text.as_str()];
        if amazon {
            lines.push(self.config.disclosure.amazon.as_str());
        }
        lines
    }
}
