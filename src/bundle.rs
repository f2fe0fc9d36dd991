//! Page bundles: a folder holding `index.md` is one page at the folder's
//! URL (as in Hugo and Zola), and every other file in it (images, logs,
//! subfolders of them) is published beside the page's `index.html`.

use std::path::{Path, PathBuf};

use walkdir::WalkDir;

/// The name that makes a folder a page bundle.
pub const BUNDLE_INDEX: &str = "index.md";

/// Where a page's URL comes from: its content-relative folder (`oom/`,
/// with a trailing slash, `""` at the root) and the name of its last URL
/// segment before any `slug` (the file stem, or the bundle folder's name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PagePlace<'a> {
    /// The folder of the page's section (the bundle folder's parent).
    pub dir: &'a str,
    /// The file stem, or the bundle folder's name.
    pub name: &'a str,
    /// True for `<folder>/index.md`.
    pub bundle: bool,
}

/// Splits a content-relative page path: `oom/page.md` is `("oom/", "page")`,
/// and the bundle `oom/page/index.md` is `("oom/", "page")` too.
pub fn place(rel: &str) -> PagePlace<'_> {
    let (dir, file) = match rel.rfind('/') {
        Some(i) => (&rel[..=i], &rel[i + 1..]),
        None => ("", rel),
    };
    if file == BUNDLE_INDEX && !dir.is_empty() {
        let folder = &dir[..dir.len() - 1];
        let (parent, name) = match folder.rfind('/') {
            Some(i) => (&dir[..=i], &folder[i + 1..]),
            None => ("", folder),
        };
        return PagePlace {
            dir: parent,
            name,
            bundle: true,
        };
    }
    PagePlace {
        dir,
        name: file.strip_suffix(".md").unwrap_or(file),
        bundle: false,
    }
}

/// One file of a bundle, published beside the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleFile {
    /// Path inside the bundle, `/`-separated: `smi.png`, `img/a.png`.
    pub rel: String,
    /// The file on disk.
    pub source: PathBuf,
}

/// The files of the bundle folder `folder` (an absolute path inside the
/// site `root`), sorted: every file that is not Markdown, in the folder and
/// in its subfolders, except subfolders that are pages or sections of their
/// own (they hold `index.md` or `_index.md`) and hidden or `_`-prefixed
/// entries, which the build skips everywhere in `content/`.
///
/// A symlink that leaves the site is never followed: `load` walks the same
/// folders and reports it as an error at the link.
pub fn files(root: &Path, folder: &Path) -> Vec<BundleFile> {
    let site = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut out = Vec::new();
    let mut walker = WalkDir::new(folder)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            e.depth() == 0 || !(name.starts_with('.') || name.starts_with('_'))
        });
    while let Some(Ok(entry)) = walker.next() {
        let path = entry.path();
        if entry.path_is_symlink() && !path.canonicalize().is_ok_and(|p| p.starts_with(&site)) {
            if entry.file_type().is_dir() {
                walker.skip_current_dir();
            }
            continue;
        }
        if entry.file_type().is_dir() {
            if entry.depth() > 0
                && (path.join(BUNDLE_INDEX).exists() || path.join("_index.md").exists())
            {
                walker.skip_current_dir();
            }
            continue;
        }
        if !entry.file_type().is_file() || path.extension().is_some_and(|e| e == "md") {
            continue;
        }
        let rel = path.strip_prefix(folder).unwrap_or(path);
        out.push(BundleFile {
            rel: crate::load::slash_path(rel),
            source: entry.into_path(),
        });
    }
    out
}

/// A line per file (output path, size, modification time), for the
/// incremental cache's key: a page's HTML depends on the files beside it
/// (which exist, and the sizes of its images).
pub fn fingerprint<'a>(files: impl IntoIterator<Item = (&'a String, &'a PathBuf)>) -> String {
    files
        .into_iter()
        .map(|(out, source)| {
            let meta = std::fs::metadata(source).ok();
            format!(
                "f {out} {:?} {:?}\n",
                meta.as_ref().map(std::fs::Metadata::len),
                meta.and_then(|m| m.modified().ok())
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_takes_its_folders_place() {
        let p = place("oom/bundle/index.md");
        assert_eq!((p.dir, p.name, p.bundle), ("oom/", "bundle", true));
        let p = place("bundle/index.md");
        assert_eq!((p.dir, p.name, p.bundle), ("", "bundle", true));
        let p = place("oom/page.md");
        assert_eq!((p.dir, p.name, p.bundle), ("oom/", "page", false));
        // `content/index.md` is not a bundle: it has no folder of its own.
        let p = place("index.md");
        assert_eq!((p.dir, p.name, p.bundle), ("", "index", false));
    }

    #[test]
    fn files_skip_markdown_hidden_entries_nested_pages_and_links_out() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("site");
        let bundle = root.join("content/b");
        for dir in ["img", "child", ".git", "_drafts"] {
            std::fs::create_dir_all(bundle.join(dir)).unwrap();
        }
        for file in [
            "index.md",
            "notes.md",
            "a.png",
            "run.log",
            "img/c.svg",
            "child/index.md",
            "child/d.png",
            ".hidden",
            ".git/x",
            "_drafts/y.png",
        ] {
            std::fs::write(bundle.join(file), "x").unwrap();
        }
        std::fs::write(tmp.path().join("secret.txt"), "s").unwrap();
        std::os::unix::fs::symlink(tmp.path().join("secret.txt"), bundle.join("leak.txt")).unwrap();
        std::os::unix::fs::symlink(bundle.join("a.png"), bundle.join("same.png")).unwrap();
        let found: Vec<String> = files(&root, &bundle).into_iter().map(|f| f.rel).collect();
        assert_eq!(found, ["a.png", "img/c.svg", "run.log", "same.png"]);
    }
}
