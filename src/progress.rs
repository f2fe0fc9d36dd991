//! How a run tells people where it is: the [`Stage`]s of the pipeline and
//! the [`Progress`] hook they are reported to.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A stage of the pipeline, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// `site.toml` read and the output folder accepted.
    Config,
    /// Content files read.
    Load,
    /// Front matter parsed.
    Parse,
    /// URLs, sections, taxonomies and the link map.
    Assemble,
    /// Assets collected and templates loaded.
    Templates,
    /// Pages rendered and finished (the stage that counts pages).
    Render,
    /// Assets and generated files (sitemap, feed...) handed to the sink.
    Assets,
    /// The full-text search bundle built (when search is on).
    Search,
    /// The sink done: the output swapped in (build) or checked (check).
    Write,
}

impl Stage {
    /// The stage's name, as `--timings` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Config => "config",
            Stage::Load => "load",
            Stage::Parse => "parse",
            Stage::Assemble => "assemble",
            Stage::Templates => "templates",
            Stage::Render => "render",
            Stage::Assets => "assets",
            Stage::Search => "search",
            Stage::Write => "write",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// Called as a run advances, with the stage, the pages done and the pages
/// in all (both 0 when a stage ends). Called from several threads at once.
#[derive(Clone)]
pub struct Progress(pub Arc<ProgressFn>);

/// The function behind [`Progress`]: stage, pages done, pages in all.
pub type ProgressFn = dyn Fn(Stage, usize, usize) + Send + Sync;

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Progress(..)")
    }
}

impl Progress {
    /// Tells the hook that `done` of `total` items of `stage` are finished.
    pub fn report(&self, stage: Stage, done: usize, total: usize) {
        (self.0)(stage, done, total);
    }
}

/// Counts the items of one stage as threads finish them, and reports each.
pub(crate) struct Counter<'a> {
    progress: Option<&'a Progress>,
    stage: Stage,
    total: usize,
    done: AtomicUsize,
}

impl<'a> Counter<'a> {
    /// A counter for `total` items of `stage`.
    pub(crate) fn new(progress: Option<&'a Progress>, stage: Stage, total: usize) -> Self {
        Counter {
            progress,
            stage,
            total,
            done: AtomicUsize::new(0),
        }
    }

    /// One more item is done.
    pub(crate) fn tick(&self) {
        if let Some(progress) = self.progress {
            let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
            progress.report(self.stage, done, self.total);
        }
    }
}
