//! The repository's own default site (`site.toml`, `content/`, `data/`,
//! `themes/`, and `static/` and `templates/` when there are any, at the
//! root). Only the seed-page tests and the pinned digest build it, always
//! from a copy, so that no build writes into the repository (a build keeps
//! its cache in `<root>/.errata/`).

use super::*;
use std::sync::OnceLock;

/// Copies the default site out of the repository into `dest`: every input a
/// build reads from a site root, where the repository has it.
pub fn copy_default_site(dest: &Path) {
    for part in [
        "site.toml",
        "content",
        "data",
        "themes",
        "static",
        "templates",
    ] {
        let from = Path::new(REPO).join(part);
        if !from.exists() {
            continue;
        }
        if from.is_dir() {
            copy_dir(&from, &dest.join(part));
        } else {
            std::fs::create_dir_all(dest).unwrap();
            std::fs::copy(&from, dest.join(part)).unwrap();
        }
    }
}

/// The default site built once per test run and shared by every test that
/// reads it: its copy and its output under `target/tmp/default-site/`.
pub struct DefaultSite {
    /// The copy of the site (what `--root` names).
    pub root: PathBuf,
    /// The built site.
    pub public: PathBuf,
    /// The build's warnings.
    pub warnings: Vec<String>,
}

impl DefaultSite {
    /// Builds it the first time it is asked for; later calls wait for that
    /// build and share it. The folder is replaced on each run.
    pub fn get() -> &'static DefaultSite {
        static SITE: OnceLock<DefaultSite> = OnceLock::new();
        SITE.get_or_init(|| {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("default-site");
            if dir.exists() {
                std::fs::remove_dir_all(&dir).unwrap();
            }
            let root = dir.join("site");
            let public = dir.join("public");
            copy_default_site(&root);
            let report = errata::build(&BuildOptions {
                root: root.clone(),
                output: Some(public.clone()),
                ..BuildOptions::default()
            })
            .unwrap();
            DefaultSite {
                root,
                public,
                warnings: report.warnings.iter().map(|w| w.to_string()).collect(),
            }
        })
    }

    /// A built file, by its path under the output folder.
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.public.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }
}
