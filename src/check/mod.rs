//! `errata check`: validates a site without deploying it, and reports in
//! formats CI understands.
//!
//! `errata check` runs the same pipeline as `errata build` (so it checks
//! everything a build validates: front matter, internal links and
//! `#anchors`, the sponsored-link policy and disclosure, JSON-LD) into a
//! [`CheckSink`], which writes nothing and keeps each page's ids and links
//! in memory. On top of that it runs passes a build does not:
//!
//! - `sink`: every internal `href` and `src` of the rendered site
//!   (templates' links included) must reach a file and an id; duplicate
//!   ids within a page are errors;
//! - `lints`: a missing description, and log `patterns` that do not match
//!   the page's own `signature` (over the parsed pages);
//! - affiliate ids and, with `--external`, outbound links.
//!
//! `report` prints the result for people or CI.

mod lints;
mod report;
mod sink;

use std::path::Path;

use crate::config::Config;
use crate::diagnostics::{self, Diagnostic};
use crate::pipeline::{BuildError, run};

pub use report::{Format, JsonProblem, JsonReport, exit_code, render, warnings_as_errors};
pub use sink::CheckSink;

/// What `errata check` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// The site root.
    pub root: std::path::PathBuf,
    /// Include drafts.
    pub drafts: bool,
    /// Report only pages changed since this git revision, and the pages
    /// that link to them.
    pub changed_since: Option<String>,
    /// Also check outbound `http(s)` links.
    pub external: bool,
    /// With `external`: also request loopback, private and other
    /// non-public addresses.
    pub include_private: bool,
}

/// Why `errata check` could not check the site (exit code 1).
#[derive(Debug)]
pub enum CheckError {
    /// `site.toml` is broken: located problems, reported in the format
    /// asked for like any other (a CI annotation, a JUnit failure).
    Config(Vec<Diagnostic>),
    /// A usage error or a failure outside the site (git, the network).
    Other(String),
}

impl From<String> for CheckError {
    fn from(message: String) -> Self {
        CheckError::Other(message)
    }
}

/// Runs every offline check; returns all problems, sorted. A broken
/// `site.toml` is an `Err` (a configuration error, not a content problem).
pub fn check(options: &CheckOptions) -> Result<Vec<Diagnostic>, CheckError> {
    if let Some(rev) = &options.changed_since {
        check_revision(rev)?;
    }
    let config = crate::config::Config::load(&options.root).map_err(CheckError::Config)?;
    let changed = match &options.changed_since {
        Some(rev) => changed_files(&config, rev)?,
        None => None,
    };
    // Outbound links are kept only when a pass needs them: a rule with
    // ids, or `--external`.
    let wants_ids = config.affiliate.iter().any(|r| !r.ids.is_empty());
    let mut sink = CheckSink::new(&config, changed);
    if wants_ids || options.external {
        sink = sink.keeping_outbound();
    }
    let mut timer = crate::pipeline::Timer::new();
    let mut all = match run(&config, options.drafts, None, &mut timer, &mut sink, None) {
        // Internal links are checked on a site that rendered: a page that
        // failed is reported already, not again as a missing link target.
        Ok(run) if !run.diagnostics.iter().any(Diagnostic::is_error) => {
            let mut all = run.diagnostics;
            all.extend(sink.check_links());
            all
        }
        Ok(run) => run.diagnostics,
        Err(BuildError::Diagnostics(all)) => all,
        Err(other) => return Err(CheckError::Other(other.to_string())),
    };
    // What the pipeline learned, and the links written in templates.
    let mut sites = sink.outbound();
    if wants_ids || options.external {
        sites.extend(crate::outbound::in_templates(&config));
    }
    let mut sites = crate::outbound::resolved(&config, sites);
    if let Some(keep) = sink.scope() {
        // `--changed-since`: only the links of the files reported.
        crate::outbound::only_in(&mut sites, keep);
    }
    all.extend(crate::affiliate_ids::id_warnings(&config, &sites));
    if options.external {
        let mut config = config.clone();
        config.check.external.include_private |= options.include_private;
        all.extend(crate::external::check_external(&config, &sites)?);
    }
    if let Some(keep) = sink.scope() {
        // Errors elsewhere still fail the build, so they are always
        // reported: check never passes a site that build rejects.
        all.retain(|d| d.is_error() || keep.contains(&d.path));
    }
    diagnostics::sort(&mut all);
    Ok(all)
}

/// Refuses a `--changed-since` value that git would read as an option.
fn check_revision(rev: &str) -> Result<(), String> {
    if rev.trim().is_empty() || rev.starts_with('-') {
        return Err(format!(
            "--changed-since takes a git revision, not `{rev}`: a revision never starts with `-`"
        ));
    }
    Ok(())
}

fn git(root: &Path, args: &[&str]) -> Result<String, String> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .map_err(|e| format!("--changed-since needs git: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The content files changed since `rev` (committed, staged, unstaged or
/// new), relative to the site root. `None` when something other than
/// content changed (a template, data, the config), which can affect every
/// page: then every problem is reported.
fn changed_files(config: &Config, rev: &str) -> Result<Option<Vec<String>>, String> {
    check_revision(rev)?;
    let root = &config.root;
    // `--end-of-options` makes git read `rev` as a revision whatever it says.
    let changed = git(
        root,
        &[
            "diff",
            "--name-only",
            "--relative",
            "--end-of-options",
            rev,
            "--",
        ],
    )?;
    let untracked = git(root, &["ls-files", "--others", "--exclude-standard"])?;
    let content = format!(
        "{}/",
        crate::load::relative(root, &config.content_dir()).display()
    );
    let changed: Vec<String> = changed
        .lines()
        .chain(untracked.lines())
        // errata's own cache and output are not sources.
        .filter(|l| !l.is_empty() && !l.starts_with(".errata/") && !l.starts_with("public/"))
        .map(str::to_string)
        .collect();
    if changed.iter().any(|p| !p.starts_with(&content)) {
        return Ok(None);
    }
    Ok(Some(changed))
}
