//! Sequences the stages, times them and gathers diagnostics: `run` is
//! the one pipeline, and [`build`] is `run` into a [`WriteSink`] followed
//! by the swap of the staging folder.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::assemble::assemble;
use crate::assets::{AssetSource, Assets};
use crate::cache::SiteInputs;
use crate::calculator::Catalogue;
use crate::config::Config;
use crate::diagnostics::{self, Diagnostic};
use crate::finish::FinishContext;
use crate::highlight::{self, Highlighter};
use crate::jsonld;
use crate::learned::Learned;
use crate::links::LinkPolicy;
use crate::load::load;
use crate::match_index;
use crate::outputs;
use crate::parse::parse_loaded;
use crate::progress::{Counter, Progress, Stage};
use crate::render::{Calculators, Job, SiteContext};
use crate::sink::{self, Lookup, Output, Sink, WriteSink};
use crate::snapshot::Snapshot;
use crate::templates::Templates;
use crate::write::{FsError, Memory, MemorySite, Staging, Store};

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
}

/// What a successful build did.
#[derive(Debug, Clone)]
pub struct BuildReport {
    /// Where the site was written (empty when it was kept in memory).
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
    /// Pages whose search records were taken from the session's last
    /// build (`errata serve`) rather than indexed again.
    pub search_reused: usize,
    /// Warnings (the build succeeded despite them).
    pub warnings: Vec<Diagnostic>,
    /// Time per stage, in order.
    pub timings: Vec<(Stage, Duration)>,
    /// Total time.
    pub total: Duration,
}

impl BuildReport {
    /// The time each stage took, one indented line per stage, as
    /// `--timings` prints it.
    pub fn timings_table(&self) -> String {
        self.timings
            .iter()
            .map(|(stage, time)| format!("  {stage:<10} {:>8.1} ms\n", time.as_secs_f64() * 1000.0))
            .collect()
    }
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

impl From<FsError> for BuildError {
    fn from(e: FsError) -> BuildError {
        BuildError::Io {
            path: e.path,
            source: e.source,
        }
    }
}

/// Times the stages and tells the progress hook when each ends.
pub(crate) struct Timer {
    start: Instant,
    stage: Instant,
    timings: Vec<(Stage, Duration)>,
}

impl Timer {
    pub(crate) fn new() -> Self {
        let now = Instant::now();
        Timer {
            start: now,
            stage: now,
            timings: Vec::new(),
        }
    }
    pub(crate) fn lap(&mut self, stage: Stage, progress: Option<&Progress>) {
        if let Some(p) = progress {
            p.report(stage, 0, 0);
        }
        let now = Instant::now();
        self.timings.push((stage, now - self.stage));
        self.stage = now;
    }
}

pub(crate) fn fail(mut all: Vec<Diagnostic>) -> BuildError {
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

/// What a process that builds again (`errata serve`) keeps from one build
/// for the next, so that the next reads, parses and decodes only what
/// changed: the site in memory, the source snapshot and the cache's
/// entries. None of it is written to `.errata/`: a cache entry is of use
/// only with the output files it describes, which are in this process's
/// memory, and an `errata build` after it reads again only the files
/// edited meanwhile.
#[derive(Debug, Default)]
pub struct Session {
    site: Arc<MemorySite>,
    snapshot: Option<Arc<crate::snapshot::Memo>>,
    cache: Option<Arc<crate::cache::Memo>>,
    /// What the last good build's search index kept (see
    /// [`crate::search::Kept`]).
    search: Option<Arc<crate::search::Kept>>,
    patterns: Arc<match_index::KnownPatterns>,
}

impl Session {
    /// The site the last successful build made.
    pub fn site(&self) -> &Arc<MemorySite> {
        &self.site
    }
}

/// What a `run` learned, besides what its sink kept.
#[derive(Debug, Default)]
pub(crate) struct Run {
    /// Every problem found, unsorted.
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// Triage pages.
    pub(crate) pages: usize,
    /// Sections.
    pub(crate) sections: usize,
    /// HTML files handed to the sink.
    pub(crate) html_files: usize,
    /// Code blocks rendered.
    pub(crate) code_blocks: usize,
    /// Pages taken from the sink's cache.
    pub(crate) cached_pages: usize,
    /// The source snapshot this run recorded (when its sink keeps state).
    pub(crate) snapshot: Option<Arc<crate::snapshot::Memo>>,
}

/// The one pipeline: load, parse, assemble, render and finish every page
/// (in parallel), and hand pages, static files and generated files to
/// `sink`. Content problems do not stop it (every page whose front matter
/// is fine is still rendered, so all problems show in one run); a broken
/// theme, asset or data file does, with every problem found so far.
///
/// With a `session` (a process that builds again), the previous build's
/// snapshot comes from it, parsed front matter is kept in the snapshot
/// [`Run::snapshot`] returns, and nothing is written to `.errata/` (see
/// [`Session`]).
pub(crate) fn run<S: Sink>(
    config: &Config,
    drafts: bool,
    progress: Option<&Progress>,
    timer: &mut Timer,
    sink: &mut S,
    session: Option<&Session>,
) -> Result<Run, BuildError> {
    let root = &config.root;
    let snapshot = Snapshot::open_after(
        root,
        &config.content_dir(),
        sink.keeps_state(),
        session.and_then(|s| s.snapshot.clone()),
    );
    let (files, mut all) = load(root, &config.content_dir(), Some(&snapshot));
    timer.lap(Stage::Load, progress);

    let mut parsed = parse_loaded(files, drafts, session.is_some());
    all.extend(parsed.diagnostics.iter().cloned());
    let snapshot = snapshot.finish(std::mem::take(&mut parsed.records), session.is_none());
    // Only a session builds again from it: a build alone does not hold
    // every file's record (about a kilobyte a page) to its end.
    let snapshot = snapshot.filter(|_| session.is_some());
    timer.lap(Stage::Parse, progress);

    let (mut site, assemble_diagnostics) = assemble(parsed, config);
    all.extend(assemble_diagnostics);
    all.extend(sink.parsed(&site));
    timer.lap(Stage::Assemble, progress);

    highlight::warm_up();
    let stylesheet = highlight::stylesheet();
    // Problems that stop the run before rendering are reported together
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
    all.extend(assets.warnings.iter().cloned());
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
    // Nor may any file stand where another needs a folder (`t` and
    // `t/index.html`, a page at `robots.txt/` and the generated file).
    let mut others = assets.producers(root);
    for name in crate::local_links::GENERATED_FILES {
        others
            .entry(name.to_string())
            .or_insert_with(|| crate::claims::Producer::generated(name));
    }
    all.extend(site.claims.check_folders(&others));
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
    let catalogue = Catalogue::load(root).map_err(|more| stop(&mut all, more))?;
    let catalogue_json = jsonld::to_script(&catalogue.page_data());
    sink.ready(&SiteInputs {
        config,
        drafts,
        site: &site,
        templates: &templates,
        assets: &assets,
        catalogue_json: &catalogue_json,
    });
    timer.lap(Stage::Templates, progress);

    let highlighter = if sink.highlights() {
        Highlighter::default()
    } else {
        Highlighter::plain()
    };
    let policy = LinkPolicy::new(config);
    let calculators = Calculators::compute(&catalogue, &site);
    let ctx = SiteContext {
        config,
        site: &site,
        templates: &templates,
        highlighter: &highlighter,
        policy: &policy,
        catalogue: &catalogue,
        catalogue_json: &catalogue_json,
        calculators: &calculators,
    };
    let finish_ctx = FinishContext {
        policy: &policy,
        disclosure: &config.disclosure,
        jsonld: None,
    };
    let shared = ctx.shared();
    let pages = Counter::new(progress, Stage::Render, site.pages.len());
    let sink = &*sink;
    let summaries = ctx.summary_hashes();
    let render = |job: Job<'_>| {
        let mut store_as = None;
        if let Some(inputs) = ctx.inputs(&job, &summaries) {
            match sink.lookup(job.source(), inputs) {
                Lookup::Hit(page) => return *page,
                Lookup::Miss(key) => store_as = key,
            }
        }
        let mut page = ctx.render(job, &shared);
        sink::finish(&mut page, &finish_ctx, sink.duplicate_id_severity());
        page.store_as = store_as;
        page
    };
    // Jobs are handed out in the site's order (pages first), so a sink
    // that needs pages in order (the search index) holds few waiting.
    let mut learned = Job::all(&site)
        .into_iter()
        .par_bridge()
        .map(|job| {
            let page = render(job);
            let kept = sink.page(&page);
            let is_page = matches!(job, Job::Page(_));
            if is_page {
                pages.tick();
            }
            Learned::of(page, is_page, kept)
        })
        .reduce(Learned::default, Learned::merge);
    learned.check_anchors(config.base_path());
    all.append(&mut learned.diagnostics);
    all.extend(changed_during_build(&site));
    timer.lap(Stage::Render, progress);

    for (out, source) in &site.bundle_files {
        if let Err(message) = sink.file(out, Output::Copy(source)) {
            all.push(Diagnostic::error(
                crate::load::relative(root, source),
                1,
                1,
                message,
            ));
        }
    }
    for (out, source) in &assets.files {
        let output = match source {
            AssetSource::File(path) => Output::Copy(path),
            AssetSource::Generated(bytes) => Output::Bytes(bytes),
        };
        if let Err(message) = sink.file(out, output) {
            all.push(Diagnostic::error(out, 1, 1, message));
        }
    }
    // Patterns that do not compile are errors, reported with the rest.
    all.extend(match_index::check_patterns(
        &site,
        session.map(|s| &*s.patterns),
    ));
    for (name, text) in outputs::generated(config, &site, &assets) {
        if let Err(message) = sink.file(name, Output::Bytes(text.as_bytes())) {
            all.push(Diagnostic::error(name, 1, 1, message));
        }
    }
    timer.lap(Stage::Assets, progress);

    let run = Run {
        diagnostics: all,
        pages: site.pages.len(),
        sections: site.sections.len(),
        html_files: learned.html_files,
        code_blocks: learned.code_blocks,
        cached_pages: learned.cached_pages,
        snapshot,
    };
    // A process that builds again need not wait for the freeing; one that
    // exits next does not free on a thread it would not wait for.
    if session.is_some() {
        drop_later((site, learned, templates, assets));
    }
    Ok(run)
}

/// Frees `value` on a thread of its own: freeing a site's worth of small
/// allocations was a visible part of a rebuild in `errata serve`, and
/// nothing needs to wait for it.
pub(crate) fn drop_later<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new()
        .name("errata-drop".into())
        .spawn(move || drop(value));
}

/// An error for each file whose text, read late (see [`crate::snapshot`]),
/// was no longer the text it had when the build began: its output may mix
/// two versions, so the build must not be used.
fn changed_during_build(site: &crate::assemble::SiteIndex) -> Vec<Diagnostic> {
    let pages = site.pages.iter().map(|p| &p.parsed.source);
    let sections = site
        .sections
        .iter()
        .filter_map(|s| s.parsed.as_ref().map(|p| &p.source));
    let broken = site.broken_bodies.iter().map(|b| &b.source);
    pages
        .chain(sections)
        .chain(broken)
        .filter(|source| source.changed_during_build())
        .map(crate::load::SourceFile::changed_error)
        .collect()
}

/// `site.toml` with the command line's overrides.
fn load_config(options: &BuildOptions) -> Result<Config, BuildError> {
    let mut config = Config::load(&options.root).map_err(fail)?;
    if let Some(url) = &options.base_url {
        config.set_base_url(url).map_err(BuildError::Usage)?;
    }
    Ok(config)
}

/// Runs the pipeline into a [`WriteSink`] over `store`; the report of a
/// clean run (warnings sorted), or every problem.
fn build_into<S: Store>(
    config: &Config,
    options: &BuildOptions,
    store: &S,
    timer: &mut Timer,
    session: Option<&mut Session>,
) -> Result<BuildReport, BuildError> {
    let mut sink = WriteSink::new(store, config, options.clean);
    if let Some(session) = &session {
        sink = sink.in_session(session.cache.clone(), session.search.clone());
    }
    let run = run(
        config,
        options.drafts,
        options.progress.as_ref(),
        timer,
        &mut sink,
        session.as_deref(),
    )?;
    // The snapshot is good whether the build is (it records what parsed).
    let mut session = session;
    if let Some(session) = session.as_deref_mut() {
        session.snapshot = run.snapshot.clone();
    }
    let mut all = run.diagnostics;
    // The search bundle, once every page is in (not for a failed build).
    if !all.iter().any(Diagnostic::is_error)
        && let Some(search) = sink.finish_search()
    {
        all.extend(search);
        timer.lap(Stage::Search, options.progress.as_ref());
    }
    if all.iter().any(Diagnostic::is_error) {
        return Err(fail(all));
    }
    let cache = sink.finish_cache(session.is_none());
    if let Some(session) = session {
        session.cache = cache;
        session.search = sink.search_kept();
    }
    diagnostics::sort(&mut all);
    Ok(BuildReport {
        output: PathBuf::new(),
        pages: run.pages,
        sections: run.sections,
        html_files: run.html_files,
        files: 0,
        code_blocks: run.code_blocks,
        cached_pages: run.cached_pages,
        search_reused: sink.search_reused,
        warnings: all,
        total: Duration::ZERO,
        timings: Vec::new(),
    })
}

/// Builds the site: every stage, then swaps the result in for the output
/// folder. On any error, nothing in the output folder changes.
pub fn build(options: &BuildOptions) -> Result<BuildReport, BuildError> {
    let mut timer = Timer::new();
    let progress = options.progress.as_ref();
    let config = load_config(options)?;
    let output = options
        .output
        .clone()
        .unwrap_or_else(|| options.root.join("public"));
    let target = check_output(&config, &output, options.force)?;
    timer.lap(Stage::Config, progress);

    let state = config.root.join(".errata").join("outputs");
    // Errors about the output name it as the user gave it.
    let named = |e: FsError| {
        if e.path == target {
            FsError {
                path: output.clone(),
                ..e
            }
        } else {
            e
        }
    };
    let staging = Staging::reusing(&target, &state).map_err(named)?;
    let report = build_into(&config, options, &staging, &mut timer, None)?;
    let files = staging.written();
    staging.commit().map_err(named)?;
    timer.lap(Stage::Write, progress);
    Ok(BuildReport {
        output,
        files,
        total: timer.start.elapsed(),
        timings: timer.timings,
        ..report
    })
}

/// Builds the site into memory after the build that left `session`: a
/// cached page's files are taken from its site, and unchanged sources and
/// cache entries from its memory. On success, `session` holds this build's
/// site; its snapshot is this build's either way. Nothing is written to
/// `.errata/` (see [`Session`]).
pub fn build_in_session(
    options: &BuildOptions,
    session: &mut Session,
) -> Result<BuildReport, BuildError> {
    let mut timer = Timer::new();
    let progress = options.progress.as_ref();
    let config = load_config(options)?;
    timer.lap(Stage::Config, progress);
    let memory = Memory::reusing(Arc::clone(&session.site));
    let report = build_into(&config, options, &memory, &mut timer, Some(session))?;
    session.site = Arc::new(memory.into_site());
    timer.lap(Stage::Write, progress);
    Ok(BuildReport {
        files: session.site.len(),
        total: timer.start.elapsed(),
        timings: timer.timings,
        ..report
    })
}
