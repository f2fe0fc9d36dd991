//! Static files: the theme's `static/` (CSS, JS and `.wasm` fingerprinted by
//! content hash), the generated highlight stylesheet, and the site's own
//! `static/`, which passes through untouched.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::claims::Producer;
use crate::diagnostics::Diagnostic;
use crate::hash::fnv1a;
use crate::load::{relative, static_files_under};

/// Where an output file's bytes come from.
#[derive(Debug, Clone)]
pub enum AssetSource {
    /// Copied from this file.
    File(PathBuf),
    /// Generated during the build.
    Generated(Vec<u8>),
}

/// Every static file of the build, and the fingerprinted name of each theme asset.
#[derive(Debug, Default, Clone)]
pub struct Assets {
    /// Logical path (`css/style.css`) → output path (`css/style.3f9a1c0b2d.css`).
    pub names: BTreeMap<String, String>,
    /// Output path → source. A site file replaces a theme file at the same path.
    pub files: BTreeMap<String, AssetSource>,
    /// What was left out and said so (a FIFO in `static/`).
    pub warnings: Vec<Diagnostic>,
}

/// Extensions that get a content hash in their name.
const FINGERPRINTED: &[&str] = &["css", "js", "wasm"];

/// `css/style.css` + content → `css/style.3f9a1c0b2d.css`.
fn fingerprinted(logical: &str, bytes: &[u8]) -> String {
    let hash = format!("{:016x}", fnv1a(bytes));
    match logical.rsplit_once('.') {
        Some((stem, ext)) => format!("{stem}.{}.{ext}", &hash[..10]),
        None => format!("{logical}.{}", &hash[..10]),
    }
}

impl Assets {
    /// Who writes each file, as [`Claims::check_folders`] names them: the
    /// static file it is copied from (relative to `root`), or errata.
    ///
    /// [`Claims::check_folders`]: crate::claims::Claims::check_folders
    pub fn producers(&self, root: &Path) -> BTreeMap<String, Producer> {
        self.files
            .iter()
            .map(|(out, source)| {
                let producer = match source {
                    AssetSource::File(path) => {
                        let rel = relative(root, path);
                        Producer::new(format!("static file {}", rel.display()), rel, 1, 1)
                    }
                    AssetSource::Generated(_) => Producer::generated(out),
                };
                (out.clone(), producer)
            })
            .collect()
    }

    /// Output paths that carry a content hash, sorted.
    pub fn fingerprinted(&self) -> Vec<String> {
        self.names
            .iter()
            .filter(|(logical, out)| logical != out)
            .map(|(_, out)| out.clone())
            .collect()
    }

    /// Collects the theme's and the site's static files, and adds the
    /// generated ones (`generated`: logical path → bytes, fingerprinted).
    pub fn collect(
        root: &Path,
        theme_dir: &Path,
        generated: Vec<(String, Vec<u8>)>,
    ) -> Result<Assets, Vec<Diagnostic>> {
        let mut assets = Assets::default();
        let mut errors = Vec::new();
        let (theme_files, problems) = static_files_under(root, &theme_dir.join("static"));
        assets.sort_out(problems, &mut errors);
        for (logical, path) in theme_files {
            let ext = logical.rsplit('.').next().unwrap_or_default();
            if FINGERPRINTED.contains(&ext) {
                match std::fs::read(&path) {
                    Ok(bytes) => {
                        let out = fingerprinted(&logical, &bytes);
                        assets.names.insert(logical, out.clone());
                        assets.files.insert(out, AssetSource::Generated(bytes));
                    }
                    Err(e) => errors.push(Diagnostic::error(
                        relative(root, &path),
                        1,
                        1,
                        format!("cannot read: {e}"),
                    )),
                }
            } else {
                assets.names.insert(logical.clone(), logical.clone());
                assets.files.insert(logical, AssetSource::File(path));
            }
        }
        for (logical, bytes) in generated {
            let out = fingerprinted(&logical, &bytes);
            assets.names.insert(logical, out.clone());
            assets.files.insert(out, AssetSource::Generated(bytes));
        }
        let (site_files, problems) = static_files_under(root, &root.join("static"));
        assets.sort_out(problems, &mut errors);
        for (logical, path) in site_files {
            assets
                .names
                .entry(logical.clone())
                .or_insert_with(|| logical.clone());
            assets.files.insert(logical, AssetSource::File(path));
        }
        if errors.is_empty() {
            Ok(assets)
        } else {
            Err(errors)
        }
    }

    /// Keeps the warnings among `problems`, and adds the errors to `errors`.
    fn sort_out(&mut self, problems: Vec<Diagnostic>, errors: &mut Vec<Diagnostic>) {
        let (bad, warnings): (Vec<_>, Vec<_>) =
            problems.into_iter().partition(Diagnostic::is_error);
        errors.extend(bad);
        self.warnings.extend(warnings);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_depends_on_content_only() {
        let a = fingerprinted("css/style.css", b"body{}");
        assert!(
            a.starts_with("css/style.")
                && a.ends_with(".css")
                && a.len() == "css/style..css".len() + 10,
            "{a}"
        );
        assert_eq!(a, fingerprinted("css/style.css", b"body{}"));
        assert_ne!(a, fingerprinted("css/style.css", b"body{ }"));
    }
}
