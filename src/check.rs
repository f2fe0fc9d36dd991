//! `errata check`: validates a site without deploying it, and reports in
//! formats CI understands.
//!
//! The offline checks are everything `errata build` validates (front
//! matter, internal links and `#anchors`, the sponsored-link policy and
//! disclosure, JSON-LD), run against a throwaway output folder so `public/`
//! is never touched, plus lints a build only warns about or does not do:
//! duplicate ids within a page, a missing description, and log `patterns`
//! that do not compile or do not match the page's own `signature`.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::diagnostics::{self, Diagnostic, LineIndex, Severity};
use crate::front_matter::{self, PageFrontMatter};
use crate::load::{SourceKind, load};
use crate::pipeline::{BuildError, BuildOptions, build};

/// How problems are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Grouped by file, for people.
    Human,
    /// One JSON document (see [`JsonReport`]).
    Json,
    /// JUnit XML, for CI test reports.
    Junit,
    /// GitHub Actions workflow commands, shown on the pull request's diff.
    Github,
}

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

/// Runs every offline check; returns all problems, sorted. A broken
/// `site.toml` is an `Err` (a configuration error, not a content problem).
pub fn check(options: &CheckOptions) -> Result<Vec<Diagnostic>, String> {
    if let Some(rev) = &options.changed_since {
        check_revision(rev)?;
    }
    let config = crate::config::Config::load(&options.root).map_err(|problems| {
        problems
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    let scratch = tempfile_dir()?;
    let build_options = BuildOptions {
        root: options.root.clone(),
        output: Some(scratch.join("public")),
        drafts: options.drafts,
        check_only: true,
        ..BuildOptions::default()
    };
    let mut all = match build(&build_options) {
        Ok(report) => {
            let mut all = report.warnings;
            all.extend(crawl(&scratch.join("public"), &config));
            all
        }
        Err(BuildError::Diagnostics(all)) => all,
        Err(other) => {
            let _ = std::fs::remove_dir_all(&scratch);
            return Err(other.to_string());
        }
    };
    let _ = std::fs::remove_dir_all(&scratch);
    all.extend(lint_front_matter(&options.root));
    // Some build warnings (duplicate ids) are errors to a check.
    for d in all.iter_mut().filter(|d| d.error_in_check) {
        d.severity = Severity::Error;
    }
    let sites = crate::external::find_urls(&config, options.drafts);
    all.extend(crate::affiliate_ids::id_warnings(&config, &sites));
    if options.external {
        let mut config = config;
        config.check.external.include_private |= options.include_private;
        all.extend(crate::external::check_external(&config, &sites)?);
    }
    let scope = match &options.changed_since {
        Some(rev) => changed_scope(&options.root, rev)?,
        None => None,
    };
    if let Some(keep) = scope {
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

/// The files whose problems `--changed-since rev` reports: content files
/// changed since `rev` (committed, staged, unstaged or new) and the content
/// files that link to them. `None` when something other than content
/// changed (a template, data, the config), which can affect every page.
fn changed_scope(
    root: &Path,
    rev: &str,
) -> Result<Option<std::collections::HashSet<std::path::PathBuf>>, String> {
    check_revision(rev)?;
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
    let changed: Vec<&str> = changed
        .lines()
        .chain(untracked.lines())
        // errata's own cache and output are not sources.
        .filter(|l| !l.is_empty() && !l.starts_with(".errata/") && !l.starts_with("public/"))
        .collect();
    if changed.iter().any(|p| !p.starts_with("content/")) {
        return Ok(None);
    }
    let mut keep: std::collections::HashSet<std::path::PathBuf> =
        changed.iter().map(std::path::PathBuf::from).collect();
    // Pages that link to a changed page, by its source path or its file name.
    let (files, _) = load(root, &root.join("content"));
    for file in &files {
        let links_to_changed = changed.iter().any(|c| {
            let rel = c.trim_start_matches("content/");
            let name = rel.rsplit('/').next().unwrap_or(rel);
            file.text.contains(&format!("@/{rel}"))
                || file.text.contains(&format!("]({name}"))
                || file.text.contains(&format!("/{name}"))
        });
        if links_to_changed {
            keep.insert(file.path.clone());
        }
    }
    Ok(Some(keep))
}

/// A link found in a built page.
struct FoundLink {
    /// The built file, relative to the output folder.
    file: String,
    /// The attribute value.
    target: String,
}

fn extract_links(html: &str, file: &str) -> (Vec<FoundLink>, Vec<String>) {
    use lol_html::{RewriteStrSettings, element, rewrite_str};
    let links = std::cell::RefCell::new(Vec::new());
    let ids = std::cell::RefCell::new(Vec::new());
    let _ = rewrite_str(
        html,
        RewriteStrSettings::new()
            .append_element_content_handler(element!("a[href], link[href]", |el| {
                if let Some(target) = el.get_attribute("href") {
                    links.borrow_mut().push(FoundLink {
                        file: file.to_string(),
                        target,
                    });
                }
                Ok(())
            }))
            .append_element_content_handler(element!(
                "script[src], img[src], source[src], iframe[src]",
                |el| {
                    if let Some(target) = el.get_attribute("src") {
                        links.borrow_mut().push(FoundLink {
                            file: file.to_string(),
                            target,
                        });
                    }
                    Ok(())
                }
            ))
            .append_element_content_handler(element!("[id]", |el| {
                if let Some(id) = el.get_attribute("id") {
                    ids.borrow_mut().push(id);
                }
                Ok(())
            })),
    );
    (links.into_inner(), ids.into_inner())
}

/// Checks every internal `href` and `src` of the built site: the file must
/// exist and the `#fragment` must be an id on it. Links written in content
/// were already checked by the build at their line and column, so what is
/// left comes from templates: each problem is reported at the template line
/// that holds the link's path, when exactly one template does.
fn crawl(out: &Path, config: &crate::config::Config) -> Vec<Diagnostic> {
    use std::collections::{BTreeSet, HashMap, HashSet};
    let files: Vec<(String, std::path::PathBuf)> = crate::load::files_under(out);
    let existing: HashSet<&str> = files.iter().map(|(rel, _)| rel.as_str()).collect();
    let mut ids: HashMap<String, HashSet<String>> = HashMap::new();
    let mut links = Vec::new();
    // Pages are read and parsed in parallel; the checks below are cheap lookups.
    use rayon::prelude::*;
    let parsed: Vec<(String, Vec<FoundLink>, Vec<String>)> = files
        .par_iter()
        .filter(|(rel, _)| rel.ends_with(".html"))
        .filter_map(|(rel, path)| {
            let html = std::fs::read_to_string(path).ok()?;
            let (found, page_ids) = extract_links(&html, rel);
            Some((rel.clone(), found, page_ids))
        })
        .collect();
    for (rel, found, page_ids) in parsed {
        ids.insert(rel, page_ids.into_iter().collect());
        links.extend(found);
    }
    let templates: Vec<(std::path::PathBuf, String)> = [
        config.theme_dir.join("templates"),
        config.root.join("templates"),
    ]
    .iter()
    .flat_map(|dir| crate::load::files_under(dir))
    .filter_map(|(_, path)| {
        let text = std::fs::read_to_string(&path).ok()?;
        Some((crate::load::relative(&config.root, &path), text))
    })
    .collect();
    let base = config.base_path();
    let origin = url::Url::parse("http://site.invalid/").expect("a valid URL");
    let mut seen = BTreeSet::new();
    let mut out_problems = Vec::new();
    for link in links {
        let target = link.target.trim();
        if target.is_empty()
            || target.starts_with("//")
            || target.contains(':') && !target.starts_with('/') && !target.starts_with('#')
        {
            continue;
        }
        let page_dir = link.file.rsplit_once('/').map_or("", |(dir, _)| dir);
        let Ok(page_url) = origin.join(&format!("{base}{page_dir}/")) else {
            continue;
        };
        let Ok(resolved) = page_url.join(target) else {
            continue;
        };
        let path = resolved.path();
        let problem = match path.strip_prefix(base) {
            None => Some(format!(
                "link to `{target}` leaves the site's base path {base}"
            )),
            Some(rel) => {
                let rel = crate::serve::percent_decode(rel).unwrap_or_else(|| rel.to_string());
                let file = if rel.is_empty() || rel.ends_with('/') {
                    format!("{rel}index.html")
                } else {
                    rel.clone()
                };
                if !existing.contains(file.as_str()) {
                    Some(format!(
                        "link to missing `{target}` (no {file} in the built site)"
                    ))
                } else {
                    match resolved.fragment().filter(|f| !f.is_empty()) {
                        Some(fragment)
                            if !ids.get(&file).is_some_and(|ids| ids.contains(fragment)) =>
                        {
                            Some(format!("link to missing anchor `#{fragment}` on {path}"))
                        }
                        _ => None,
                    }
                }
            }
        };
        let Some(message) = problem else { continue };
        // Find the template that writes this link: its path, as given to url(path=...).
        let needle = target.trim_start_matches(base).trim_start_matches('/');
        let needle = if needle.is_empty() { target } else { needle };
        let holders: Vec<&(std::path::PathBuf, String)> = templates
            .iter()
            .filter(|(_, text)| text.contains(needle))
            .collect();
        let diagnostic = match holders.as_slice() {
            [(template, text)] => {
                let offset = text.find(needle).unwrap_or(0);
                let (line, col) = LineIndex::new(text).line_col(offset);
                Diagnostic::error(
                    template,
                    line,
                    col,
                    format!(
                        "{message} (seen on /{})",
                        link.file.trim_end_matches("index.html")
                    ),
                )
            }
            // No single template holds the path: report at the templates folder.
            _ => Diagnostic::error(
                crate::load::relative(&config.root, &config.theme_dir.join("templates")),
                1,
                1,
                format!("{message} (seen in {})", link.file),
            ),
        };
        if seen.insert((
            diagnostic.path.clone(),
            diagnostic.line,
            diagnostic.col,
            message,
        )) {
            out_problems.push(diagnostic);
        }
    }
    out_problems
}

fn tempfile_dir() -> Result<std::path::PathBuf, String> {
    // Unique per process and per call, so checks may run side by side.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("errata-check-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// Front-matter lints: a missing description, and `patterns` that do not
/// compile or do not match the page's own `signature`.
pub fn lint_front_matter(root: &Path) -> Vec<Diagnostic> {
    let content = root.join("content");
    let (files, _) = load(root, &content);
    let mut out = Vec::new();
    for file in files.iter().filter(|f| f.kind == SourceKind::Page) {
        let Ok(split) = front_matter::split(&file.text) else {
            continue;
        };
        let Ok(front) = front_matter::parse::<PageFrontMatter>(&split) else {
            continue;
        };
        let lines = LineIndex::new(&file.text);
        let at_key = |key: &str| lines.line_col(front_matter::key_offset(&split, key).unwrap_or(0));
        if front
            .description
            .as_deref()
            .is_none_or(|d| d.trim().is_empty())
        {
            let (line, col) = if front.description.is_some() {
                at_key("description")
            } else {
                (1, 1)
            };
            out.push(
                Diagnostic::warning(
                    &file.path,
                    line,
                    col,
                    "no description: search engines will make up a snippet",
                )
                .with_help("add `description:` with one sentence of under 160 characters"),
            );
        }
        // A pattern that does not compile is a build error (see
        // `match_index::check_patterns`), reported once by the build.
        let any_matches = front
            .patterns
            .iter()
            .filter_map(|p| matcher::compile(p).ok())
            .any(|re| re.is_match(&front.signature));
        if !front.patterns.is_empty() && !any_matches {
            let (line, col) = at_key("patterns");
            out.push(
                Diagnostic::warning(
                    &file.path,
                    line,
                    col,
                    "none of the page's `patterns` matches its own `signature`",
                )
                .with_help("a log line with this error would not find this page"),
            );
        }
    }
    out
}

/// The JSON report: `{"version": 1, "errors": N, "warnings": N, "notes": N, "problems": [...]}`.
#[derive(Debug, Serialize)]
pub struct JsonReport<'a> {
    /// Schema version; changes only when fields are removed or change meaning.
    pub version: u32,
    /// How many errors.
    pub errors: usize,
    /// How many warnings.
    pub warnings: usize,
    /// How many notes (never failures).
    pub notes: usize,
    /// Every problem, sorted by file, line and column.
    pub problems: Vec<JsonProblem<'a>>,
}

/// One problem in the JSON report.
#[derive(Debug, Serialize)]
pub struct JsonProblem<'a> {
    /// `error`, `warning` or `note`.
    pub severity: &'static str,
    /// The problem's kind where it has one (`external-broken`,
    /// `external-unverifiable`...), else null.
    pub code: Option<&'a str>,
    /// File, relative to the site root.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: &'a str,
    /// How to fix it, or null.
    pub help: Option<&'a str>,
}

fn severity_name(d: &Diagnostic) -> &'static str {
    match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

fn xml(text: &str) -> String {
    crate::outputs::escape_xml(text)
}

/// Escapes a GitHub workflow command's message (`%`, CR, LF).
fn github_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a GitHub workflow command's property (also `:` and `,`).
fn github_property(text: &str) -> String {
    github_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// Renders `problems` in `format`. `colour` applies to `Human` only.
pub fn render(problems: &[Diagnostic], format: Format, colour: bool) -> String {
    let count = |severity| problems.iter().filter(|d| d.severity == severity).count();
    let (errors, warnings, notes) = (
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Note),
    );
    let mut out = String::new();
    match format {
        Format::Human => {
            let mut current: Option<&Path> = None;
            for d in problems {
                if current != Some(d.path.as_path()) {
                    let _ = writeln!(
                        out,
                        "{}{}",
                        if current.is_some() { "\n" } else { "" },
                        d.path.display()
                    );
                    current = Some(&d.path);
                }
                let kind = severity_name(d);
                let kind = match (colour, d.severity) {
                    (true, Severity::Error) => format!("\x1b[31m{kind}\x1b[0m"),
                    (true, Severity::Warning) => format!("\x1b[33m{kind}\x1b[0m"),
                    (true, Severity::Note) => format!("\x1b[36m{kind}\x1b[0m"),
                    (false, _) => kind.to_string(),
                };
                let _ = writeln!(out, "  {}:{}: {kind}: {}", d.line, d.col, d.message);
                if let Some(help) = &d.help {
                    let _ = writeln!(out, "    help: {help}");
                }
            }
            let _ = writeln!(
                out,
                "{}{errors} error(s), {warnings} warning(s){}",
                if problems.is_empty() { "" } else { "\n" },
                if notes > 0 {
                    format!(", {notes} note(s)")
                } else {
                    String::new()
                }
            );
        }
        Format::Json => {
            let report = JsonReport {
                version: 1,
                errors,
                warnings,
                notes,
                problems: problems
                    .iter()
                    .map(|d| JsonProblem {
                        severity: severity_name(d),
                        code: d.code.as_deref(),
                        file: d.path.display().to_string(),
                        line: d.line,
                        column: d.col,
                        message: &d.message,
                        help: d.help.as_deref(),
                    })
                    .collect(),
            };
            out = serde_json::to_string_pretty(&report).expect("the report serialises");
            out.push('\n');
        }
        Format::Junit => {
            let _ = writeln!(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
            let _ = writeln!(
                out,
                "<testsuites name=\"errata check\" tests=\"{}\" failures=\"{errors}\" skipped=\"{notes}\">",
                problems.len().max(1)
            );
            let _ = writeln!(
                out,
                "  <testsuite name=\"errata check\" tests=\"{}\" failures=\"{errors}\" skipped=\"{notes}\">",
                problems.len().max(1)
            );
            if problems.is_empty() {
                let _ = writeln!(out, "    <testcase name=\"site\" classname=\"errata\"/>");
            }
            for d in problems {
                let name = xml(&format!("{}:{}:{}", d.path.display(), d.line, d.col));
                let class = xml(&d.path.display().to_string());
                let _ = write!(out, "    <testcase name=\"{name}\" classname=\"{class}\"");
                match d.severity {
                    Severity::Error => {
                        let _ = writeln!(
                            out,
                            "><failure message=\"{}\">{}</failure></testcase>",
                            xml(&d.message),
                            xml(d.help.as_deref().unwrap_or(""))
                        );
                    }
                    Severity::Warning => {
                        let _ = writeln!(
                            out,
                            "><system-out>warning: {}</system-out></testcase>",
                            xml(&d.message)
                        );
                    }
                    // A note is a check that was not run to a verdict: JUnit's `skipped`.
                    Severity::Note => {
                        let _ = writeln!(
                            out,
                            "><skipped message=\"{}\"{}/></testcase>",
                            xml(&d.message),
                            d.code
                                .as_deref()
                                .map(|c| format!(" type=\"{}\"", xml(c)))
                                .unwrap_or_default()
                        );
                    }
                }
            }
            let _ = writeln!(out, "  </testsuite>\n</testsuites>");
        }
        Format::Github => {
            for d in problems {
                let mut message = d.message.clone();
                if let Some(help) = &d.help {
                    message.push_str(&format!("\n{help}"));
                }
                let command = match d.severity {
                    Severity::Note => "notice",
                    _ => severity_name(d),
                };
                let _ = writeln!(
                    out,
                    "::{} file={},line={},col={}::{}",
                    command,
                    github_property(&d.path.display().to_string()),
                    d.line,
                    d.col,
                    github_data(&message)
                );
            }
        }
    }
    out
}

/// The exit code for `problems`: 0 when clean, 2 when any error is found
/// (or any warning, with `warnings_as_errors`).
pub fn exit_code(problems: &[Diagnostic], warnings_as_errors: bool) -> u8 {
    let failing = problems
        .iter()
        .any(|d| d.is_error() || warnings_as_errors && d.severity == Severity::Warning);
    if failing { 2 } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Diagnostic> {
        vec![
            Diagnostic::error("content/a.md", 3, 7, "link to missing page `@/x.md`")
                .with_help("fix it, 100%"),
            Diagnostic::warning("content/b.md", 1, 1, "no description"),
        ]
    }

    #[test]
    fn github_lines_escape_properties_and_data() {
        let out = render(&sample(), Format::Github, false);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            "::error file=content/a.md,line=3,col=7::link to missing page `@/x.md`%0Afix it, 100%25"
        );
        assert_eq!(
            lines[1],
            "::warning file=content/b.md,line=1,col=1::no description"
        );
        assert_eq!(github_property("a:b,c"), "a%3Ab%2Cc");
    }

    #[test]
    fn exit_codes() {
        assert_eq!(exit_code(&[], false), 0);
        assert_eq!(exit_code(&sample()[1..], false), 0);
        assert_eq!(exit_code(&sample()[1..], true), 2);
        assert_eq!(exit_code(&sample(), false), 2);
    }

    #[test]
    fn junit_is_xml_with_failures_for_errors() {
        let out = render(&sample(), Format::Junit, false);
        assert!(out.contains("failures=\"1\""));
        assert!(
            out.contains(
                "<failure message=\"link to missing page `@/x.md`\">fix it, 100%</failure>"
            )
        );
    }
}
