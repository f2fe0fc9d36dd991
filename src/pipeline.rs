//! Sequences the build stages, times them and gathers diagnostics.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::assemble::assemble;
use crate::assets::{AssetSource, Assets};
use crate::cache::PageCache;
use crate::calculator::Catalogue;
use crate::config::Config;
use crate::diagnostics::{self, Diagnostic};
use crate::highlight::{self, Highlighter};
use crate::jsonld;
use crate::links::LinkPolicy;
use crate::load::load;
use crate::match_index;
use crate::outputs;
use crate::parse::parse;
use crate::progress::{Counter, Progress, Stage};
use crate::render::{CalculatorCache, Renderer};
use crate::templates::Templates;
use crate::write::Staging;

/// What `errata build` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// The site root (holds `site.toml`).
    pub root: PathBuf,
    /// Output folder; `<root>/public` when `None`.
    pub output: Option<PathBuf>,
    /// Replaces `base_url` from `site.toml`.
    pub base_url: Option<String>,
    /// Include drafts.
    pub drafts: bool,
    /// Replace the output folder even if errata did not build it (it has no
    /// [`crate::output_dir::MARKER`]). Source folders are refused regardless.
    pub force: bool,
    /// Ignore the incremental cache in `.errata/` (every page is rendered).
    pub clean: bool,
    /// Told about each stage and each rendered page.
    pub progress: Option<Progress>,
    /// Validate only (`errata check`): the output is thrown away, so code is
    /// not highlighted, HTML is not minified, and the cache is not used.
    pub check_only: bool,
}

/// What a successful build did.
#[derive(Debug, Clone)]
pub struct BuildReport {
    /// Where the site was written.
    pub output: PathBuf,
    /// Triage pages built.
    pub pages: usize,
    /// Sections built.
    pub sections: usize,
    /// HTML files written (pages, sections, taxonomy pages, redirects, 404).
    pub html_files: usize,
    /// All files written.
    pub files: usize,
    /// Code blocks rendered.
    pub code_blocks: usize,
    /// Pages taken unchanged from the incremental cache.
    pub cached_pages: usize,
    /// Warnings (the build succeeded despite them).
    pub warnings: Vec<Diagnostic>,
    /// Time per stage, in order.
    pub timings: Vec<(Stage, Duration)>,
    /// Total time.
    pub total: Duration,
}

/// Why a build failed.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Problems in the site's files; all of them, sorted, warnings included.
    #[error("build failed with {} error(s)", .0.iter().filter(|d| d.is_error()).count())]
    Diagnostics(Vec<Diagnostic>),
    /// The options make no sense (such as an output folder that is the site itself).
    #[error("{0}")]
    Usage(String),
    /// Reading or writing failed outside any content file.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

struct Timer {
    start: Instant,
    stage: Instant,
    timings: Vec<(Stage, Duration)>,
}

impl Timer {
    fn new() -> Self {
        let now = Instant::now();
        Timer {
            start: now,
            stage: now,
            timings: Vec::new(),
        }
    }
    fn lap(&mut self, stage: Stage, progress: Option<&Progress>) {
        if let Some(p) = progress {
            p.report(stage, 0, 0);
        }
        let now = Instant::now();
        self.timings.push((stage, now - self.stage));
        self.stage = now;
    }
}

fn fail(mut all: Vec<Diagnostic>) -> BuildError {
    diagnostics::sort(&mut all);
    BuildError::Diagnostics(all)
}

/// Refuses output folders whose replacement would destroy sources or
/// someone's files (see [`crate::output_dir::check`]); returns the folder the
/// site really goes to.
fn check_output(config: &Config, output: &Path, force: bool) -> Result<PathBuf, BuildError> {
    let sources = [config.content_dir(), config.theme_dir.clone()];
    crate::output_dir::check(&config.root, &sources, output, force).map_err(BuildError::Usage)
}

/// Builds the site: every stage, then swaps the result in for the output
/// folder. On any error, nothing in the output folder changes.
pub fn build(options: &BuildOptions) -> Result<BuildReport, BuildError> {
    let mut timer = Timer::new();
    let root = &options.root;
    let mut config = Config::load(root).map_err(fail)?;
    if let Some(url) = &options.base_url {
        config.set_base_url(url).map_err(BuildError::Usage)?;
    }
    let output = options
        .output
        .clone()
        .unwrap_or_else(|| root.join("public"));
    let target = check_output(&config, &output, options.force)?;
    timer.lap(Stage::Config, options.progress.as_ref());

    let (files, mut all) = load(root, &config.content_dir());
    timer.lap(Stage::Load, options.progress.as_ref());

    let parsed = parse(files, options.drafts);
    all.extend(parsed.diagnostics.iter().cloned());
    timer.lap(Stage::Parse, options.progress.as_ref());

    let (mut site, assemble_diagnostics) = assemble(parsed, &config);
    all.extend(assemble_diagnostics);
    // Content errors so far do not stop the build here: every page whose
    // front matter is fine is still rendered, so its link and anchor
    // problems are reported in the same run. Nothing is swapped in unless
    // the whole run is clean.
    timer.lap(Stage::Assemble, options.progress.as_ref());

    highlight::warm_up();
    let stylesheet = highlight::stylesheet();
    // Problems that stop the build before rendering are reported together
    // with every content problem found so far.
    let stop = |all: &mut Vec<Diagnostic>, more: Vec<Diagnostic>| {
        all.extend(more);
        fail(std::mem::take(all))
    };
    let assets = Assets::collect(
        root,
        &config.theme_dir,
        vec![("css/highlight.css".into(), stylesheet.into_bytes())],
    )
    .map_err(|more| stop(&mut all, more))?;
    // A static file may not replace a page, a section, a taxonomy page, an
    // alias or the 404 page (it may replace the theme's file, and the
    // generated sitemap.xml, robots.txt, atom.xml and _headers).
    all.extend(
        site.claims.check_static(
            assets
                .files
                .iter()
                .filter_map(|(out, source)| match source {
                    AssetSource::File(path) => {
                        Some((out.as_str(), crate::load::relative(root, path)))
                    }
                    AssetSource::Generated(_) => None,
                }),
        ),
    );
    site.static_files = assets
        .files
        .iter()
        .map(|(out, source)| match source {
            AssetSource::File(path) => (out.clone(), Some(path.clone())),
            AssetSource::Generated(_) => (out.clone(), None),
        })
        .collect();
    let templates = Templates::load(
        root,
        &config.theme_dir,
        config.base_path(),
        Arc::new(assets.names.clone()),
    )
    .map_err(|more| stop(&mut all, more))?;
    all.extend(crate::assemble::missing_templates(&site, |name| {
        templates.has(name)
    }));
    timer.lap(Stage::Templates, options.progress.as_ref());

    let staging = Staging::create(&target).map_err(|source| BuildError::Io {
        path: target.clone(),
        source,
    })?;
    let catalogue = Catalogue::load(root).map_err(|more| stop(&mut all, more))?;
    let catalogue_json = jsonld::to_script(&catalogue.page_data());
    let highlighter = if options.check_only {
        Highlighter::plain()
    } else {
        Highlighter::default()
    };
    let policy = LinkPolicy::new(&config);
    let global = crate::cache::site_key(&crate::cache::SiteInputs {
        config: &config,
        drafts: options.drafts,
        site: &site,
        templates: &templates,
        assets: &assets,
        catalogue_json: &catalogue_json,
    });
    let cache = PageCache::open(root, global, !options.clean);
    let renderer = Renderer {
        config: &config,
        site: &site,
        templates: &templates,
        highlighter: &highlighter,
        staging: &staging,
        policy: &policy,
        catalogue: &catalogue,
        catalogue_json: &catalogue_json,
        calculator_cache: &CalculatorCache::default(),
        cache: (!options.check_only).then_some(&cache),
        minify: !options.check_only,
        pages: &Counter::new(options.progress.as_ref(), Stage::Render, site.pages.len()),
    };
    let report = renderer.render_all();
    all.extend(report.diagnostics);
    timer.lap(Stage::Render, options.progress.as_ref());

    for (out, source) in &site.bundle_files {
        if let Err(message) = staging.copy(out, source) {
            all.push(Diagnostic::error(
                crate::load::relative(root, source),
                1,
                1,
                message,
            ));
        }
    }
    all.extend(staging.write_assets(&assets.files));
    // Patterns that do not compile are errors, reported with the rest (the
    // pages are rendered first, so `errata check` sees every problem).
    all.extend(match_index::check_patterns(&site));
    for (name, text) in outputs::generated(&config, &site, &assets) {
        if let Err(message) = staging.write(name, text.as_bytes()) {
            all.push(Diagnostic::error(name, 1, 1, message));
        }
    }
    timer.lap(Stage::Assets, options.progress.as_ref());

    if all.iter().any(Diagnostic::is_error) {
        return Err(fail(all));
    }
    let files = staging.written();
    if !options.check_only {
        cache.prune();
    }
    staging.commit().map_err(|source| BuildError::Io {
        path: output.clone(),
        source,
    })?;
    timer.lap(Stage::Write, options.progress.as_ref());

    diagnostics::sort(&mut all);
    Ok(BuildReport {
        output,
        pages: site.pages.len(),
        sections: site.sections.len(),
        html_files: report.html_files,
        files,
        code_blocks: report.code_blocks,
        cached_pages: report.cached_pages,
        warnings: all,
        total: timer.start.elapsed(),
        timings: timer.timings,
    })
}
