//! Where finished pages go. `build` and `check` run the same stages (see
//! `pipeline::run`) and differ only in their [`Sink`]:
//!
//! - [`WriteSink`] (`errata build`, `errata serve`) minifies each page,
//!   writes it into the staging folder and keeps it in the incremental cache;
//! - [`crate::check::CheckSink`] (`errata check`) keeps every page's ids and
//!   links in memory, and checks them once the site is complete.
//!
//! Before a page reaches its sink, [`finish`] applies the link policy and
//! learns its ids and links (the same for every sink, so `check` never
//! passes what `build` rejects).

mod write;

use std::path::Path;

use rayon::prelude::*;

use crate::assemble::SiteIndex;
use crate::cache::SiteInputs;
use crate::diagnostics::{Diagnostic, Severity};
use crate::finish::{self as html, FinishContext};
use crate::render::RenderedPage;

pub use write::WriteSink;

/// A file that is not a rendered page: a static file or a generated one.
#[derive(Debug, Clone, Copy)]
pub enum Output<'a> {
    /// Copied from this file.
    Copy(&'a Path),
    /// These bytes.
    Bytes(&'a [u8]),
}

/// What a sink knows about a page before it is rendered.
#[derive(Debug)]
pub enum Lookup {
    /// The page as an earlier run finished it: nothing it depends on changed.
    Hit(Box<RenderedPage>),
    /// Render it; store it under this key once finished, if given.
    Miss(Option<String>),
}

/// Receives the site as the pipeline produces it. Called from several
/// threads at once (`page`, `file` and `lookup`).
pub trait Sink: Sync {
    /// The parsed and assembled site, before anything is rendered.
    fn parsed(&mut self, _site: &SiteIndex) -> Vec<Diagnostic> {
        Vec::new()
    }

    /// Everything rendering depends on is known.
    fn ready(&mut self, _inputs: &SiteInputs<'_>) {}

    /// Whether code is highlighted. A sink that throws the HTML away says
    /// no: code is then only escaped (languages are still recognised and
    /// unknown ones reported).
    fn highlights(&self) -> bool {
        true
    }

    /// Whether the run may write the site's state in `.errata/` (the source
    /// snapshot). A check writes nothing; it still reads what builds left.
    fn keeps_state(&self) -> bool {
        false
    }

    /// A job's files from an earlier run, or a key to store them under:
    /// `inputs` is the hash of what the job's output depends on (see
    /// [`crate::render::SiteContext::inputs`]), `source` where its problems
    /// are reported.
    fn lookup(&self, _source: &Path, _inputs: u128) -> Lookup {
        Lookup::Miss(None)
    }

    /// How a duplicate id is reported: a build warns, a check fails.
    fn duplicate_id_severity(&self) -> Severity {
        Severity::Warning
    }

    /// Keeps one finished page; returns the problems keeping it raised.
    fn page(&self, page: &RenderedPage) -> Vec<Diagnostic>;

    /// Keeps one static or generated file at output path `out`.
    fn file(&self, out: &str, output: Output<'_>) -> Result<(), String>;
}

/// The `finish` stage for one rendered page: the link policy, the
/// disclosure guarantee and the JSON-LD check on every file, and what each
/// file holds (ids, links). A file with problems is dropped (its problems
/// are errors); duplicate ids are reported at `duplicates` severity.
pub fn finish(page: &mut RenderedPage, ctx: &FinishContext<'_>, duplicates: Severity) {
    let source = page.source.clone();
    let results: Vec<_> = std::mem::take(&mut page.files)
        .into_par_iter()
        .map(|mut file| {
            let mut problems = Vec::new();
            if file.done {
                return (Some(file), None, problems);
            }
            let ctx = FinishContext {
                jsonld: file.jsonld,
                ..*ctx
            };
            let (path, name) = (&file.path, &file.template);
            match html::finish(&file.html, &ctx) {
                Ok((finished, stats)) => {
                    if stats.disclosure_inserted {
                        problems.push(Diagnostic::warning(
                            &source,
                            1,
                            1,
                            format!(
                                "template {name} puts a sponsored link before any affiliate disclosure on /{path}; errata inserted the disclosure before it"
                            ),
                        ).with_help("render the disclosure (partials/disclosure.html) above the template's first sponsored link"));
                    }
                    for id in &stats.duplicate_ids {
                        // At the heading that carries the id, when one of the page's does.
                        let (line, col) = file
                            .headings
                            .iter()
                            .find(|h| h.id == *id)
                            .map_or((1, 1), |h| h.at);
                        problems.push(Diagnostic {
                            severity: duplicates,
                            ..Diagnostic::error(
                                &source,
                                line,
                                col,
                                format!("duplicate id `{id}` on /{path} (rendering template {name})"),
                            )
                        });
                    }
                    let ids = (file.path.clone(), stats.ids);
                    file.html = finished;
                    file.links = stats.links;
                    (Some(file), Some(ids), problems)
                }
                Err(errors) => {
                    problems.extend(errors.into_iter().map(|problem| {
                        Diagnostic::error(
                            &source,
                            1,
                            1,
                            format!("{problem} (rendering template {name} for /{path})"),
                        )
                    }));
                    (None, None, problems)
                }
            }
        })
        .collect();
    for (file, ids, problems) in results {
        page.files.extend(file);
        page.ids.extend(ids);
        page.diagnostics.extend(problems);
    }
}
