//! Links from content to files of the built site: `smi.png` beside a
//! bundle's `index.md`, `../other/run.log`, `/img/diagram.svg`. Each must
//! name a file the build publishes (a page, a bundle file, a static file, a
//! generated file), or the build fails at the link.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::claims::Claims;

/// Every static and theme file the build copies (or generates, with no
/// source), by output path.
pub type StaticFiles = BTreeMap<String, Option<PathBuf>>;

/// The match index the build writes (see `match_index`), relative to the
/// output folder. It is claimed like a page, so that no static file stands
/// in for it; it is here so that `assemble` can claim it without depending
/// on `match_index`.
pub const MATCH_INDEX_FILE: &str = "match-index.json";

/// Files the build writes that no page or section makes: the generated
/// ones (a site's `static/` may replace them, the match index aside).
/// `match_index` checks that its file is here.
pub const GENERATED_FILES: &[&str] = &[
    "sitemap.xml",
    "robots.txt",
    "atom.xml",
    MATCH_INDEX_FILE,
    "_headers",
];

/// A published file a content link points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalFile {
    /// Its path in the output folder: `oom/b/smi.png`, `oom/page/index.html`.
    pub output: String,
    /// The file it is copied from, when it is copied (bundle and static
    /// files), for reading an image's size.
    pub source: Option<PathBuf>,
}

/// What the build publishes, as far as links from content are concerned.
pub struct Published<'a> {
    /// Pages, sections, taxonomy pages, aliases, bundle files.
    pub claims: &'a Claims,
    /// Bundle files and where they come from.
    pub bundle_files: &'a BTreeMap<String, PathBuf>,
    /// Static and theme files and where they come from.
    pub static_files: &'a StaticFiles,
}

impl Published<'_> {
    /// The published file that `link`, written in the page at site path
    /// `own_path` (`oom/page/`), points at. `Ok(None)` when it is not a link
    /// to a file of this site (it has a scheme, starts with `//`, or is
    /// only a `#fragment` or `?query`); `Err` says why the file is missing.
    pub fn local_file(&self, link: &str, own_path: &str) -> Result<Option<LocalFile>, String> {
        if link.starts_with("//") || crate::links::scheme(link).is_some() {
            return Ok(None);
        }
        let path = link.split(['#', '?']).next().unwrap_or("");
        // Pages by their source (`@/a.md`, `../a.md`) are resolved by
        // [`SiteIndex::resolve`].
        if path.is_empty()
            || path.starts_with("@/")
            || (path.ends_with(".md") && !path.starts_with('/'))
        {
            return Ok(None);
        }
        let decoded = crate::links::percent_decode(path)
            .ok_or_else(|| format!("link `{link}` has a malformed %-escape"))?;
        let (joined, from) = match decoded.strip_prefix('/') {
            Some(rooted) => (rooted.to_string(), "the site root".to_string()),
            None => (format!("{own_path}{decoded}"), format!("/{own_path}")),
        };
        let Some(mut target) = crate::links::normalise(&joined) else {
            return Err(format!("link `{link}` points outside the site"));
        };
        let folder = target.is_empty() || joined.ends_with('/');
        if folder && !target.is_empty() {
            target.push('/');
        }
        let candidates = if folder {
            vec![format!("{target}index.html")]
        } else {
            vec![target.clone(), format!("{target}/index.html")]
        };
        for output in candidates {
            if let Some(source) = self.bundle_files.get(&output) {
                let source = Some(source.clone());
                return Ok(Some(LocalFile { output, source }));
            }
            if let Some(source) = self.static_files.get(&output) {
                let source = source.clone();
                return Ok(Some(LocalFile { output, source }));
            }
            if self.claims.get(&output).is_some() || GENERATED_FILES.contains(&output.as_str()) {
                return Ok(Some(LocalFile {
                    output,
                    source: None,
                }));
            }
        }
        Err(format!(
            "link to missing file `{link}`: nothing is published at /{target} (relative links start from {from}; put the file beside the page's index.md in a page bundle, or under static/)"
        ))
    }
}
