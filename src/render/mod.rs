//! Stage 4, `render`: Markdown and templates to HTML, one [`RenderedPage`]
//! per page, section, taxonomy or other output, in parallel.
//!
//! Renderers read a borrowed, immutable [`SiteContext`] and return what they
//! made: the HTML of each output file plus what was learned while making it
//! (headings, fragment links, code blocks, diagnostics). They hold no
//! counter, lock or output folder; `finish` then applies the link policy and
//! learns each file's ids and links, and a [`crate::sink`] keeps the result
//! (the build writes it, `check` keeps ids and links in memory).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::assemble::{PageEntry, SectionEntry, SiteIndex};
use crate::calculator::Catalogue;
use crate::config::Config;
use crate::diagnostics::{Diagnostic, LineIndex};
use crate::front_matter::CalculatorState;
use crate::highlight::Highlighter;
use crate::jsonld::{self, Crumb};
use crate::links::LinkPolicy;
use crate::outbound::UrlSite;
use std::collections::{BTreeMap, HashMap};

use crate::load::SourceFile;
use crate::markdown::{self, AnchorRef, Heading, RenderContext, ResolvedLink};
use crate::templates::{Prepared, TemplateContext, Templates};

mod calculator;
mod inputs;
mod page;
mod section;
mod taxonomy;
mod views;

pub use calculator::Calculators;
pub use inputs::Summaries;
use views::*;
pub use views::{CalculatorView, LinkView, Shared};

/// One output of the site (a page with its aliases, a section with its
/// list pages, a taxonomy with its terms, the 404 page) as rendered, with
/// what was learned while making it.
#[derive(Debug, Default)]
pub struct RenderedPage {
    /// The file problems are reported against.
    pub source: PathBuf,
    /// The output files, in order.
    pub files: Vec<RenderedFile>,
    /// Code blocks rendered.
    pub code_blocks: usize,
    /// Errors and warnings.
    pub diagnostics: Vec<Diagnostic>,
    /// Fragment links to check, with the file they were written in.
    pub anchors: Vec<(PathBuf, AnchorRef)>,
    /// Outbound links written in its Markdown, for `errata check`.
    pub outbound: Vec<UrlSite>,
    /// Site path → every id on that page (filled in by `finish`; for a
    /// body whose front matter is broken, its headings').
    pub ids: Vec<(String, Vec<String>)>,
    /// Taken unchanged from the incremental cache.
    pub cached: bool,
    /// The cache key to store the page under once it is finished, if any.
    pub store_as: Option<String>,
}

/// One output file of a [`RenderedPage`].
#[derive(Debug, Clone, Default)]
pub struct RenderedFile {
    /// Its site path: `oom/cuda/` (written as `oom/cuda/index.html`) or a
    /// file name such as `404.html`.
    pub path: String,
    /// The template that made it (for messages).
    pub template: String,
    /// The HTML.
    pub html: String,
    /// Final: the HTML is finished and minified, or the file is already
    /// in the store (`kept`).
    pub done: bool,
    /// Already in the store, carried over from the previous output for a
    /// cache hit, with the hash of its bytes ([`crate::hash::content_hash`],
    /// which the store proved): `html` is empty, and the sink writes
    /// nothing.
    pub kept: Option<u128>,
    /// Node types the JSON-LD must hold; `None`: no structured data.
    pub jsonld: Option<&'static [&'static str]>,
    /// The page's headings, to locate problems with their ids.
    pub headings: Vec<Heading>,
    /// Every `href` and `src` in the finished HTML (filled in by `finish`).
    pub links: Vec<String>,
}

impl RenderedFile {
    /// The output file's path relative to the output folder.
    pub fn file(&self) -> String {
        output_file(&self.path)
    }
}

/// `oom/cuda/` → `oom/cuda/index.html`; `404.html` stays.
pub fn output_file(path: &str) -> String {
    if path.ends_with(".html") {
        path.to_string()
    } else {
        format!("{path}index.html")
    }
}

impl RenderedPage {
    fn new(source: &Path) -> Self {
        RenderedPage {
            source: source.to_path_buf(),
            ..RenderedPage::default()
        }
    }

    fn add_markdown(&mut self, source: &Path, md: &markdown::RenderedMarkdown) {
        self.code_blocks += md.code_blocks;
        self.diagnostics.extend(md.diagnostics.iter().cloned());
        self.anchors
            .extend(md.anchors.iter().map(|a| (source.to_path_buf(), a.clone())));
        self.outbound
            .extend(md.outbound.iter().map(|(line, col, url)| UrlSite {
                path: source.to_path_buf(),
                line: *line,
                col: *col,
                url: url.clone(),
            }));
    }
}

/// Everything a renderer reads; borrowed, immutable, shared by all threads.
pub struct SiteContext<'a> {
    /// The configuration.
    pub config: &'a Config,
    /// The assembled site.
    pub site: &'a SiteIndex,
    /// The templates.
    pub templates: &'a Templates,
    /// The build's highlighter.
    pub highlighter: &'a Highlighter,
    /// The link policy applied to every page.
    pub policy: &'a LinkPolicy,
    /// Calculator presets.
    pub catalogue: &'a Catalogue,
    /// The catalogue as JSON for the calculator script, escaped for `<script>`.
    pub catalogue_json: &'a str,
    /// The calculator on each distinct front-matter state, computed once
    /// before rendering (see [`Calculators::compute`]).
    pub calculators: &'a Calculators,
}

/// One unit of rendering work: each becomes one [`RenderedPage`].
#[derive(Debug, Clone, Copy)]
pub enum Job<'a> {
    /// A triage page (with its aliases).
    Page(&'a PageEntry),
    /// A section or the home page, with its list pages.
    Section(&'a SectionEntry),
    /// A taxonomy's list page (by index in [`SiteIndex::taxonomies`]).
    Taxonomy(usize),
    /// The page of one term of a taxonomy (by index in
    /// [`SiteIndex::taxonomies`], then in its terms).
    Term(usize, usize),
    /// The body of a file whose front matter is broken: checked, not written.
    BrokenBody(&'a crate::assemble::BrokenBody),
    /// `404.html`.
    NotFound,
}

impl<'a> Job<'a> {
    /// Every job of `site`: pages first (the ones the progress hook counts).
    pub fn all(site: &'a SiteIndex) -> Vec<Job<'a>> {
        let mut jobs: Vec<Job<'a>> = site.pages.iter().map(Job::Page).collect();
        jobs.extend(site.sections.iter().map(Job::Section));
        for (at, taxonomy) in site.taxonomies.iter().enumerate() {
            jobs.push(Job::Taxonomy(at));
            jobs.extend((0..taxonomy.terms.len()).map(|term| Job::Term(at, term)));
        }
        jobs.extend(site.broken_bodies.iter().map(Job::BrokenBody));
        jobs.push(Job::NotFound);
        jobs
    }
}

const ARTICLE_NODES: &[&str] = &["TechArticle", "BreadcrumbList"];
const CALCULATOR_NODES: &[&str] = &["TechArticle", "BreadcrumbList", "WebApplication"];
const COLLECTION_NODES: &[&str] = &["CollectionPage", "BreadcrumbList"];

impl SiteContext<'_> {
    fn url(&self, path: &str) -> String {
        format!("{}{}", self.config.base_path(), path)
    }

    /// What every job's templates share, serialised once.
    pub fn shared(&self) -> Shared {
        Shared {
            site: Prepared::of(&self.site_view()),
            taxonomies: (self.site.taxonomies.iter())
                .map(|t| Prepared::of(&self.taxonomy_view(t)))
                .collect(),
        }
    }

    /// The site as every template sees it.
    fn site_view(&self) -> SiteView<'_> {
        let root = &self.site.sections[0];
        SiteView {
            title: &self.config.title,
            description: &self.config.description,
            language: &self.config.language,
            base_url: self.config.base_url.as_str(),
            base_path: self.config.base_path(),
            author: self.config.author.as_deref(),
            search: self.config.search.enabled,
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

    /// Renders one job.
    pub fn render(&self, job: Job<'_>, shared: &Shared) -> RenderedPage {
        match job {
            Job::Page(page) => self.render_page(page, shared),
            Job::Section(section) => self.render_section(section, shared),
            Job::Taxonomy(at) => self.render_taxonomy(at, shared),
            Job::Term(at, term) => self.render_term(at, term, shared),
            Job::BrokenBody(broken) => self.check_broken_body(broken),
            Job::NotFound => self.render_404(shared),
        }
    }

    /// Checks the body of a file whose front matter is broken, so its link
    /// problems show in the same run; nothing is written for it.
    fn check_broken_body(&self, broken: &crate::assemble::BrokenBody) -> RenderedPage {
        let md = self.markdown(&broken.source, broken.body_offset, &broken.path);
        let mut rendered = RenderedPage::new(&broken.source.path);
        rendered.add_markdown(&broken.source.path, &md);
        rendered.ids.push((
            broken.path.clone(),
            md.toc.iter().map(|h| h.id.clone()).collect(),
        ));
        rendered
    }

    /// Renders the body of `source`, whose page lives at site path `own_path`.
    fn markdown(
        &self,
        source: &SourceFile,
        body_offset: usize,
        own_path: &str,
    ) -> markdown::RenderedMarkdown {
        let text = source.text();
        let lines = LineIndex::new(&text);
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

    /// Renders template `name` for site path `path` into `rendered`: a
    /// template error is a diagnostic, and no file.
    fn emit(
        &self,
        rendered: &mut RenderedPage,
        name: &str,
        path: &str,
        ctx: &TemplateContext,
        jsonld: Option<&'static [&'static str]>,
        headings: &[Heading],
    ) {
        match self.templates.render(name, ctx) {
            Ok(html) => rendered.files.push(RenderedFile {
                path: path.to_string(),
                template: name.to_string(),
                html,
                jsonld,
                headings: headings.to_vec(),
                ..RenderedFile::default()
            }),
            Err(d) => rendered.diagnostics.push(d),
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
