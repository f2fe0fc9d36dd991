//! The sink of `errata check`: nothing is written; each rendered file's
//! ids and link targets are kept in memory, and [`CheckSink::check_links`]
//! checks every internal link once the site is complete.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Mutex;

use crate::assemble::SiteIndex;
use crate::config::Config;
use crate::diagnostics::{Diagnostic, LineIndex, Severity};
use crate::outbound::UrlSite;
use crate::render::{RenderedPage, output_file};
use crate::sink::{Output, Sink};

/// What `check` keeps of the rendered site.
#[derive(Debug, Default)]
struct Kept {
    /// Every output file's path.
    files: HashSet<String>,
    /// Output file → its ids.
    ids: HashMap<String, HashSet<String>>,
    /// Output file → the link targets in it.
    links: Vec<(String, Vec<String>)>,
    /// Outbound links written in content, when asked for.
    outbound: Vec<UrlSite>,
}

/// Keeps ids and links in memory; see [`crate::sink`].
pub struct CheckSink<'a> {
    config: &'a Config,
    /// `--changed-since`: the content files that changed, when only they
    /// and the files linking to them are reported.
    changed: Option<Vec<String>>,
    /// The files whose problems are reported (from `changed`).
    scope: Option<HashSet<PathBuf>>,
    /// Keep the outbound links written in content ([`CheckSink::outbound`]).
    wants_outbound: bool,
    kept: Mutex<Kept>,
}

impl<'a> CheckSink<'a> {
    /// A sink for `config`'s site; `changed` as for `--changed-since`.
    pub fn new(config: &'a Config, changed: Option<Vec<String>>) -> Self {
        CheckSink {
            config,
            changed,
            scope: None,
            wants_outbound: false,
            kept: Mutex::new(Kept::default()),
        }
    }

    /// Also keeps the outbound links written in content (front matter and
    /// Markdown), for the passes that need them.
    pub fn keeping_outbound(mut self) -> Self {
        self.wants_outbound = true;
        self
    }

    /// The outbound links written in content, in file order (empty unless
    /// [`CheckSink::keeping_outbound`]).
    pub fn outbound(&self) -> Vec<UrlSite> {
        crate::outbound::sorted(std::mem::take(&mut self.keep().outbound))
    }

    /// With `--changed-since`: the files whose problems are reported (the
    /// changed content files and the content files that link to them).
    pub fn scope(&self) -> Option<&HashSet<PathBuf>> {
        self.scope.as_ref()
    }

    fn keep(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Checks every internal `href` and `src` of the rendered site: the
    /// file must exist and the `#fragment` must be an id on it. Links
    /// written in content were already checked at their line and column,
    /// so what is left comes from templates: each problem is reported at
    /// the template line that holds the link's path, when exactly one
    /// template does.
    pub fn check_links(&self) -> Vec<Diagnostic> {
        let kept = self.keep();
        let config = self.config;
        let templates: Vec<(PathBuf, String)> = [
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
        let mut problems = Vec::new();
        let mut links: Vec<&(String, Vec<String>)> = kept.links.iter().collect();
        links.sort_by(|a, b| a.0.cmp(&b.0));
        for (file, targets) in links {
            for target in targets {
                let Some(message) = problem(&kept, &origin, base, file, target.trim()) else {
                    continue;
                };
                let target = target.trim();
                let diagnostic = at_template(config, &templates, base, file, target, message);
                if seen.insert((
                    diagnostic.path.clone(),
                    diagnostic.line,
                    diagnostic.col,
                    diagnostic.message.clone(),
                )) {
                    problems.push(diagnostic);
                }
            }
        }
        problems
    }
}

/// What is wrong with link `target` in output file `file`, if anything.
fn problem(kept: &Kept, origin: &url::Url, base: &str, file: &str, target: &str) -> Option<String> {
    if target.is_empty()
        || target.starts_with("//")
        || target.contains(':') && !target.starts_with('/') && !target.starts_with('#')
    {
        return None;
    }
    let page_dir = file.rsplit_once('/').map_or("", |(dir, _)| dir);
    let page_url = origin.join(&format!("{base}{page_dir}/")).ok()?;
    let resolved = page_url.join(target).ok()?;
    let path = resolved.path();
    let Some(rel) = path.strip_prefix(base) else {
        return Some(format!(
            "link to `{target}` leaves the site's base path {base}"
        ));
    };
    let rel = crate::links::percent_decode(rel).unwrap_or_else(|| rel.to_string());
    let wanted = output_file(&rel);
    let wanted = if rel.is_empty() || rel.ends_with('/') {
        wanted
    } else {
        // A path without a trailing slash names the file itself.
        rel
    };
    if !kept.files.contains(wanted.as_str()) {
        return Some(format!(
            "link to missing `{target}` (no {wanted} in the built site)"
        ));
    }
    match resolved.fragment().filter(|f| !f.is_empty()) {
        Some(fragment)
            if !kept
                .ids
                .get(&wanted)
                .is_some_and(|ids| ids.contains(fragment)) =>
        {
            Some(format!("link to missing anchor `#{fragment}` on {path}"))
        }
        _ => None,
    }
}

/// Locates a link problem at the template that writes the link: its path,
/// as given to `url(path=...)`, in exactly one template; else at the
/// templates folder.
fn at_template(
    config: &Config,
    templates: &[(PathBuf, String)],
    base: &str,
    file: &str,
    target: &str,
    message: String,
) -> Diagnostic {
    let needle = target.trim_start_matches(base).trim_start_matches('/');
    let needle = if needle.is_empty() { target } else { needle };
    let holders: Vec<&(PathBuf, String)> = templates
        .iter()
        .filter(|(_, text)| text.contains(needle))
        .collect();
    match holders.as_slice() {
        [(template, text)] => {
            let offset = text.find(needle).unwrap_or(0);
            let (line, col) = LineIndex::new(text).line_col(offset);
            Diagnostic::error(
                template,
                line,
                col,
                format!(
                    "{message} (seen on /{})",
                    file.trim_end_matches("index.html")
                ),
            )
        }
        _ => Diagnostic::error(
            crate::load::relative(&config.root, &config.theme_dir.join("templates")),
            1,
            1,
            format!("{message} (seen in {file})"),
        ),
    }
}

/// The content files that link to one of `changed`, by its source path or
/// its file name, among the site's sources.
fn linking_to(site: &SiteIndex, content: &str, changed: &[String]) -> Vec<PathBuf> {
    let sources = site
        .pages
        .iter()
        .map(|p| &p.parsed.source)
        .chain(
            site.sections
                .iter()
                .filter_map(|s| s.parsed.as_ref().map(|p| &p.source)),
        )
        .chain(site.broken_bodies.iter().map(|b| &b.source));
    sources
        .filter(|file| {
            let text = file.text();
            changed.iter().any(|c| {
                let rel = c.trim_start_matches(content);
                let name = rel.rsplit('/').next().unwrap_or(rel);
                text.contains(&format!("@/{rel}"))
                    || text.contains(&format!("]({name}"))
                    || text.contains(&format!("/{name}"))
            })
        })
        .map(|file| file.path.clone())
        .collect()
}

impl Sink for CheckSink<'_> {
    fn parsed(&mut self, site: &SiteIndex) -> Vec<Diagnostic> {
        if let Some(changed) = &self.changed {
            let content = format!(
                "{}/",
                crate::load::relative(&self.config.root, &self.config.content_dir()).display()
            );
            let mut keep: HashSet<PathBuf> = changed.iter().map(PathBuf::from).collect();
            keep.extend(linking_to(site, &content, changed));
            self.scope = Some(keep);
        }
        if self.wants_outbound {
            let sponsored = site
                .pages
                .iter()
                .flat_map(|p| crate::outbound::sponsored(&p.parsed));
            self.keep().outbound.extend(sponsored);
        }
        super::lints::front_matter(site)
    }

    /// The HTML is thrown away: code is only escaped.
    fn highlights(&self) -> bool {
        false
    }

    fn duplicate_id_severity(&self) -> Severity {
        Severity::Error
    }

    fn page(&self, page: &RenderedPage) -> Vec<Diagnostic> {
        let ids: HashMap<&str, &Vec<String>> =
            page.ids.iter().map(|(p, ids)| (p.as_str(), ids)).collect();
        let mut kept = self.keep();
        if self.wants_outbound {
            kept.outbound.extend(page.outbound.iter().cloned());
        }
        for file in &page.files {
            let name = file.file();
            if let Some(ids) = ids.get(file.path.as_str()) {
                kept.ids.insert(name.clone(), ids.iter().cloned().collect());
            }
            kept.links.push((name.clone(), file.links.clone()));
            kept.files.insert(name);
        }
        Vec::new()
    }

    fn file(&self, out: &str, output: Output<'_>) -> Result<(), String> {
        // A static HTML file's links are checked like a page's.
        if out.ends_with(".html") {
            let html = match output {
                Output::Copy(path) => std::fs::read_to_string(path).ok(),
                Output::Bytes(bytes) => String::from_utf8(bytes.to_vec()).ok(),
            };
            if let Some(html) = html {
                let (links, ids) = crate::finish::links_and_ids(&html);
                let mut kept = self.keep();
                kept.ids.insert(out.to_string(), ids.into_iter().collect());
                kept.links.push((out.to_string(), links));
            }
        }
        self.keep().files.insert(out.to_string());
        Ok(())
    }
}
