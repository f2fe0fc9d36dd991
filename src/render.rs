//! Stages 4 and 5, `render` and `finish`: Markdown and templates to HTML,
//! then minification, in parallel over pages. Each finished page is written
//! at once, so the build never holds every rendered page in memory.

use std::path::Path;

use rayon::prelude::*;
use serde::Serialize;

use crate::assemble::{PageEntry, SectionEntry, SiteIndex};
use crate::cache::{CacheEntry, PageCache};
use crate::calculator::{Architecture, Catalogue, Query};
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
    /// The top-level sections, for navigation.
    pub sections: Vec<LinkView>,
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
struct PageSummary<'a> {
    title: &'a str,
    url: String,
    description: Option<&'a str>,
    signature: &'a str,
    /// The one-line "Direct Error Triage" summary.
    triage: Option<&'a str>,
    date: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct TermLink {
    name: String,
    url: String,
}

#[derive(Debug, Serialize)]
struct TaxonomyLinks {
    name: &'static str,
    title: String,
    terms: Vec<TermLink>,
}

#[derive(Debug, Serialize)]
struct SponsoredView<'a> {
    label: &'a str,
    url: &'a str,
    note: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct SourceView<'a> {
    title: &'a str,
    url: &'a str,
}

#[derive(Debug, Serialize)]
struct PageView<'a> {
    title: &'a str,
    description: &'a str,
    signature: &'a str,
    patterns: &'a [String],
    triage: Option<&'a str>,
    url: String,
    permalink: String,
    date: Option<&'a str>,
    updated: Option<&'a str>,
    taxonomies: Vec<TaxonomyLinks>,
    sponsored: Vec<SponsoredView<'a>>,
    sources: Vec<SourceView<'a>>,
    disclosure: Vec<&'a str>,
    /// The body has affiliate links: the disclosure goes above it.
    disclosure_top: bool,
    calculator: Option<CalculatorView>,
    toc: &'a [Heading],
    section: LinkView,
    source: &'a str,
}

#[derive(Debug, Serialize)]
struct SectionView<'a> {
    title: &'a str,
    description: &'a str,
    url: String,
    permalink: String,
    pages: Vec<PageSummary<'a>>,
    subsections: Vec<SectionLink<'a>>,
    /// On the home page: the newest pages of the whole site.
    recent: Vec<PageSummary<'a>>,
    toc: &'a [Heading],
    /// Position among the section's list pages.
    paginator: Paginator,
}

/// Where a list page sits among its siblings.
#[derive(Debug, Serialize)]
struct Paginator {
    current: usize,
    total: usize,
    first: String,
    previous: Option<String>,
    next: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
struct SectionLink<'a> {
    title: String,
    url: String,
    count: usize,
    /// The section's first pages (at most `paginate_by`), for listings by section.
    pages: Vec<PageSummary<'a>>,
}

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
    /// Told about every rendered page.
    pub progress: Option<&'a crate::pipeline::Progress>,
    /// Pages rendered so far, for `progress`.
    pub rendered: std::sync::atomic::AtomicUsize,
    /// Calculator results by front-matter state: most pages share a few
    /// starting states, so each is computed once per build.
    pub calculator_cache: &'a CalculatorCache,
}

/// Calculator views already computed in this build, by front-matter state.
pub type CalculatorCache = std::sync::Mutex<HashMap<String, Result<CalculatorView, String>>>;

/// The calculator on a page: its starting state, the result computed at
/// build time by the sizing crate, and the choices the form offers.
#[derive(Debug, Clone, Serialize)]
pub struct CalculatorView {
    model: String,
    weights: String,
    runtime: String,
    context: u64,
    kv: String,
    gpu: String,
    /// The answer, as `errata size --format json` gives it.
    result: serde_json::Value,
    /// GiB figures formatted with two decimals, as the script shows them.
    shown: BTreeMap<&'static str, String>,
    models: Vec<(String, String)>,
    gpus: Vec<String>,
    formats: Vec<&'static str>,
    runtimes: [&'static str; 4],
    kv_types: [&'static str; 4],
}

/// Head metadata every template gets as `meta`.
#[derive(Debug, Serialize)]
struct MetaView<'a> {
    title: String,
    description: &'a str,
    canonical: Option<String>,
    og_type: &'static str,
}

fn query_model(query: &Query) -> String {
    match &query.model {
        Architecture::Preset(id) => id.clone(),
        Architecture::Custom(m) => m.id.clone(),
    }
}

/// A page's meta description: its own, else its triage summary, else the
/// site's, else its signature, so that it is never empty.
fn page_description<'a>(front: &'a crate::front_matter::PageFrontMatter, site: &'a str) -> &'a str {
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
                if let Some(progress) = self.progress {
                    let done = self
                        .rendered
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                        + 1;
                    progress.report("render", done, self.site.pages.len());
                }
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

    /// The calculator's view for a page's front-matter state.
    fn cached_calculator(&self, state: &CalculatorState) -> Result<CalculatorView, String> {
        let key = format!(
            "{}|{}|{}|{:?}|{:?}",
            state.model, state.weights, state.context, state.runtime, state.gpu
        );
        if let Some(hit) = self
            .calculator_cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return hit.clone();
        }
        let view = self.calculator(state);
        self.calculator_cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, view.clone());
        view
    }

    fn calculator(&self, state: &CalculatorState) -> Result<CalculatorView, String> {
        if self.catalogue.models.is_empty() {
            return Err("the page has a calculator but the site has no data/models.yaml".into());
        }
        let query = Query {
            model: Architecture::Preset(state.model.clone()),
            weights: state.weights.clone(),
            runtime: state.runtime.clone().unwrap_or_else(|| "pytorch".into()),
            context: state.context,
            gpu: Some(state.gpu.clone().unwrap_or_else(|| {
                let default = Query::default().gpu.unwrap_or_default();
                if self.catalogue.gpus.iter().any(|g| g.name == default) {
                    default
                } else {
                    self.catalogue
                        .gpus
                        .first()
                        .map(|g| g.name.clone())
                        .unwrap_or_default()
                }
            })),
            ..Query::default()
        };
        let result = self
            .catalogue
            .answer(&query)
            .map_err(|e| format!("calculator: {e}"))?;
        let shown = [
            "weights_gib",
            "kv_cache_gib",
            "compute_gib",
            "overhead_gib",
            "total_gib",
        ]
        .into_iter()
        .map(|k| (k, format!("{:.2}", result[k].as_f64().unwrap_or(0.0))))
        .collect();
        Ok(CalculatorView {
            model: query_model(&query),
            weights: query.weights,
            runtime: query.runtime,
            context: query.context,
            kv: query.kv,
            gpu: query.gpu.unwrap_or_default(),
            result,
            shown,
            models: self
                .catalogue
                .models
                .iter()
                .map(|m| (m.id.clone(), m.name.clone()))
                .collect(),
            gpus: self.catalogue.gpus.iter().map(|g| g.name.clone()).collect(),
            formats: crate::calculator::weight_formats(),
            runtimes: ["pytorch", "vllm", "llama.cpp", "ollama"],
            kv_types: ["f16", "fp8", "q8_0", "q4_0"],
        })
    }

    /// Renders a page, or takes its files from the incremental cache when
    /// nothing it depends on has changed.
    fn render_page_cached(&self, page: &PageEntry, site: &SiteView<'_>) -> RenderReport {
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
    fn refinish(&self, html: &str) -> Option<Vec<u8>> {
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

    fn render_page(&self, page: &PageEntry, site: &SiteView<'_>, record: bool) -> RenderReport {
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

    fn render_section(&self, section: &SectionEntry, site: &SiteView<'_>) -> RenderReport {
        let mut report = RenderReport::default();
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
        let source = section
            .parsed
            .as_ref()
            .map_or(Path::new("content"), |p| p.source.path.as_path());
        let check = Check {
            source,
            jsonld: Some(COLLECTION_NODES),
            headings: md.as_ref().map_or(&[], |m| &m.toc),
        };
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
            ctx.insert("site", site);
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
            self.emit(template, &path, &ctx, &check, &mut report);
        }
        report
    }

    fn render_taxonomies(&self, site: &SiteView<'_>) -> RenderReport {
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

    fn render_404(&self, site: &SiteView<'_>) -> RenderReport {
        let mut report = RenderReport::default();
        let mut ctx = TemplateContext::default();
        ctx.insert("site", site);
        let meta = MetaView {
            title: format!("Page not found | {}", self.config.title),
            description: &self.config.description,
            canonical: None,
            og_type: "website",
        };
        ctx.insert("meta", &meta);
        let check = Check {
            source: Path::new("404.html"),
            jsonld: None,
            headings: &[],
        };
        self.emit("404.html", "404.html", &ctx, &check, &mut report);
        report
    }
}
