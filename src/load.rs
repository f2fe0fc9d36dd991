//! Stage 1, `load`: walk `content/`, take each Markdown file's fingerprint,
//! and tell the files the source snapshot knows unchanged from the ones to
//! read. The parse stage reads those ([`Unread::read`]), so a fresh file's
//! text is read once to parse and once to render, and never held between.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;
use walkdir::WalkDir;

use crate::diagnostics::{Diagnostic, LineIndex};
use crate::snapshot::{Fingerprint, Known, Snapshot};

/// What a content file is, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// `_index.md`: the section of its folder.
    Section,
    /// Any other `.md`: a triage page.
    Page,
}

/// One content file. A file on disk is not held in memory: its text is
/// read each time it is asked for (to render its body, to locate a
/// problem), and must still hash to what it hashed to when it was parsed.
/// So a build holds no page's text longer than the page's parse or render
/// takes (on 100,000 pages, all texts held were 850 MB), and a file
/// changed during the build is caught.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Path relative to the site root, such as `content/oom/cuda-out-of-memory.md`;
    /// diagnostics use it.
    pub path: PathBuf,
    /// Path relative to `content/`, with `/` separators: `oom/cuda-out-of-memory.md`.
    pub rel: String,
    /// Section or page.
    pub kind: SourceKind,
    /// The text, or where to read it from.
    text: Text,
    /// [`crate::hash::content_hash`] of the text.
    hash: u128,
    /// Set when a late read found other text than the hash says.
    stale: OnceLock<()>,
}

/// Where a [`SourceFile`]'s text is.
#[derive(Debug, Clone)]
enum Text {
    /// Held (a file made from text, such as in tests).
    Held(Arc<str>),
    /// In the file at this path, read when asked for.
    OnDisk(PathBuf),
}

impl SourceFile {
    /// A file whose text is at hand.
    pub fn new(path: PathBuf, rel: String, kind: SourceKind, text: String) -> SourceFile {
        SourceFile {
            path,
            rel,
            kind,
            hash: crate::hash::content_hash(text.as_bytes()),
            text: Text::Held(text.into()),
            stale: OnceLock::new(),
        }
    }

    /// A file on disk at `full` whose text hashes to `hash`: read when
    /// asked for.
    fn on_disk(path: PathBuf, rel: String, kind: SourceKind, full: PathBuf, hash: u128) -> Self {
        SourceFile {
            path,
            rel,
            kind,
            text: Text::OnDisk(full),
            hash,
            stale: OnceLock::new(),
        }
    }

    /// The text, with any byte-order mark removed. A file on disk is read
    /// now; if it no longer is the text it was when parsed (or when the
    /// snapshot knew it), the text is empty and
    /// [`SourceFile::changed_during_build`] says so.
    pub fn text(&self) -> Arc<str> {
        let full = match &self.text {
            Text::Held(text) => return Arc::clone(text),
            Text::OnDisk(full) => full,
        };
        let read = decode(std::fs::read(full).unwrap_or_default())
            .ok()
            .filter(|text| crate::hash::content_hash(text.as_bytes()) == self.hash);
        match read {
            Some(text) => text.into(),
            None => {
                let _ = self.stale.set(());
                Arc::from("")
            }
        }
    }

    /// The hash of the text, known without reading it.
    pub fn text_hash(&self) -> u128 {
        self.hash
    }

    /// True when a read found other text than the file had when it was
    /// parsed (or when the snapshot knew it): the build saw two versions.
    pub fn changed_during_build(&self) -> bool {
        self.stale.get().is_some()
    }

    /// The error for a file that [changed during the
    /// build](SourceFile::changed_during_build).
    pub(crate) fn changed_error(&self) -> Diagnostic {
        Diagnostic::error(
            &self.path,
            1,
            1,
            "file changed while errata was building it",
        )
        .with_help("build again")
    }
}

/// A content file as loaded.
#[derive(Debug, Clone)]
pub enum Loaded {
    /// Unchanged since the source snapshot: its text is not read, and its
    /// front matter comes from the snapshot.
    Known(SourceFile, Known),
    /// New or changed: the parse stage reads it.
    Unread(Unread),
    /// A file whose text is at hand (tests, one-off checks).
    Held(SourceFile),
}

impl Loaded {
    /// Path relative to `content/`, with `/` separators.
    pub fn rel(&self) -> &str {
        match self {
            Loaded::Known(file, _) | Loaded::Held(file) => &file.rel,
            Loaded::Unread(unread) => &unread.rel,
        }
    }

    /// True when the snapshot knew the file unchanged.
    pub fn is_known(&self) -> bool {
        matches!(self, Loaded::Known(..))
    }
}

/// A content file found but not read yet.
#[derive(Debug, Clone)]
pub struct Unread {
    /// As [`SourceFile::path`].
    shown: PathBuf,
    /// As [`SourceFile::rel`].
    rel: String,
    kind: SourceKind,
    /// Where to read it.
    full: PathBuf,
    /// Its length when it was found.
    len: u64,
    /// Its fingerprint, taken before it is read, so that a file written in
    /// between is seen as changed by the next build. `None` when its
    /// metadata could not be read.
    pub fingerprint: Option<Fingerprint>,
}

impl Unread {
    /// Reads the file: the file (keeping only its text's hash) and its text,
    /// or why it cannot be read.
    pub fn read(self) -> Result<(SourceFile, String), Diagnostic> {
        let shown = &self.shown;
        let size = self.len;
        if size > MAX_SOURCE_BYTES {
            return Err(Diagnostic::error(
                shown,
                1,
                1,
                format!(
                    "file is {:.1} MiB; content files are limited to {} MiB",
                    size as f64 / 1048576.0,
                    MAX_SOURCE_BYTES / 1024 / 1024
                ),
            )
            .with_help("move large logs or data out of content/ and link to them"));
        }
        let bytes = std::fs::read(&self.full)
            .map_err(|e| Diagnostic::error(shown, 1, 1, format!("cannot read: {e}")))?;
        let text = decode(bytes).map_err(|(line, col)| {
            Diagnostic::error(shown, line, col, "file is not valid UTF-8")
                .with_help("save the file as UTF-8")
        })?;
        let hash = crate::hash::content_hash(text.as_bytes());
        let file = SourceFile::on_disk(self.shown, self.rel, self.kind, self.full, hash);
        Ok((file, text))
    }
}

/// Walks `content_dir` (sorted; hidden entries and `_`-prefixed ones other
/// than `_index.md` skipped) and fingerprints every `.md` file in parallel;
/// a file that `snapshot` knows unchanged is [`Loaded::Known`], any other
/// [`Loaded::Unread`].
pub fn load(
    root: &Path,
    content_dir: &Path,
    snapshot: Option<&Snapshot>,
) -> (Vec<Loaded>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let mut paths = Vec::new();
    // Symlinks are followed, as a user who links a folder in expects; a
    // loop is an error at the link, and so is a link that leaves the site.
    let site = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut walker = WalkDir::new(content_dir)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| {
            let name = entry.file_name().to_string_lossy();
            entry.depth() == 0
                || !(name.starts_with('.') || (name.starts_with('_') && name != "_index.md"))
        });
    while let Some(entry) = walker.next() {
        match entry {
            Ok(entry) if entry.path_is_symlink() && !inside(&site, entry.path()) => {
                // Not a step further: the files below a linked folder are
                // not links themselves, and none of them may be read.
                if entry.file_type().is_dir() {
                    walker.skip_current_dir();
                }
                diagnostics.push(outside_the_site(root, entry.path()));
            }
            Ok(entry) if entry.file_type().is_file() => {
                if entry.path().extension().is_some_and(|e| e == "md") {
                    paths.push(entry.into_path());
                }
            }
            Ok(_) => {}
            Err(e) => diagnostics.push(walk_error(root, content_dir, &e)),
        }
    }
    let files = paths
        .par_iter()
        .map(|path| found(root, content_dir, path, snapshot))
        .collect();
    (files, diagnostics)
}

/// True when `path` resolves to somewhere inside `site` (a canonical path).
fn inside(site: &Path, path: &Path) -> bool {
    path.canonicalize().is_ok_and(|p| p.starts_with(site))
}

/// The error at a symbolic link under the site that leads out of it.
fn outside_the_site(root: &Path, link: &Path) -> Diagnostic {
    Diagnostic::error(
        relative(root, link),
        1,
        1,
        "symlink points outside the site",
    )
    .with_help("content and static files may link only to files and folders inside the site root")
}

/// The error where walking `dir` failed: a symlink loop, a folder or file
/// that cannot be read, a link that leads nowhere.
fn walk_error(root: &Path, dir: &Path, e: &walkdir::Error) -> Diagnostic {
    let path = e
        .path()
        .map_or_else(|| dir.to_path_buf(), Path::to_path_buf);
    let message = match e.loop_ancestor() {
        Some(ancestor) => format!(
            "symlink loop: this link leads back to {}",
            relative(root, ancestor).display()
        ),
        None => match e.io_error() {
            Some(io) => format!("cannot read: {io}"),
            None => format!("cannot read: {e}"),
        },
    };
    Diagnostic::error(relative(root, &path), 1, 1, message)
}

/// The largest content file errata reads. A triage page is a few dozen
/// kilobytes; a file past this is a mistake (a pasted log, a binary).
pub const MAX_SOURCE_BYTES: u64 = 10 * 1024 * 1024;

fn found(root: &Path, content_dir: &Path, path: &Path, snapshot: Option<&Snapshot>) -> Loaded {
    let shown = relative(root, path);
    let rel = slash_path(path.strip_prefix(content_dir).unwrap_or(path));
    let kind = if path.file_name().is_some_and(|n| n == "_index.md") {
        SourceKind::Section
    } else {
        SourceKind::Page
    };
    // One look at the metadata, for the size limit and the fingerprint.
    // Without a snapshot (`errata match`) nothing is recorded, so no
    // fingerprint is taken.
    let meta = std::fs::metadata(path).ok();
    let len = meta.as_ref().map_or(0, std::fs::Metadata::len);
    let fingerprint = snapshot.and(meta.as_ref()).map(Fingerprint::of);
    if let (Some(snapshot), Some(fingerprint)) = (snapshot, &fingerprint)
        && let Some(known) = snapshot.unchanged(&rel, fingerprint)
    {
        let file = SourceFile::on_disk(shown, rel, kind, path.to_path_buf(), known.text_hash());
        return Loaded::Known(file, known);
    }
    Loaded::Unread(Unread {
        shown,
        rel,
        kind,
        full: path.to_path_buf(),
        len,
        fingerprint,
    })
}

/// Decodes UTF-8, dropping a byte-order mark. On failure, returns the line and
/// column of the first invalid byte.
fn decode(mut bytes: Vec<u8>) -> Result<String, (usize, usize)> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let prefix = std::str::from_utf8(&e.as_bytes()[..valid]).unwrap_or_default();
        LineIndex::new(prefix).line_col(valid)
    })
}

/// Every file under `dir` (sorted; hidden entries skipped), as a
/// `/`-separated path relative to `dir` and the full path. Empty when `dir`
/// does not exist.
pub(crate) fn files_under(dir: &Path) -> Vec<(String, PathBuf)> {
    walk_files(dir)
}

/// The files of a `static/` folder of the site at `root`: as
/// [`files_under`], but a top-level `.well-known/` (RFC 8615:
/// `security.txt`, app links) is kept, and nothing is left out unsaid.
/// Symbolic links are followed (a linked file or folder is published as
/// the files it leads to); a link out of the site, a loop, a link to
/// nothing and what cannot be read are errors, and what is not a file (a
/// FIFO, a socket) a warning, each at its path.
pub(crate) fn static_files_under(
    root: &Path,
    dir: &Path,
) -> (Vec<(String, PathBuf)>, Vec<Diagnostic>) {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    if !dir.is_dir() {
        return (files, problems);
    }
    let site = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut walker = WalkDir::new(dir)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            e.depth() == 0
                || !name.starts_with('.')
                || e.depth() == 1 && name == ".well-known" && e.file_type().is_dir()
        });
    while let Some(entry) = walker.next() {
        match entry {
            Ok(entry) if entry.path_is_symlink() && !inside(&site, entry.path()) => {
                if entry.file_type().is_dir() {
                    walker.skip_current_dir();
                }
                problems.push(outside_the_site(root, entry.path()));
            }
            Ok(entry) if entry.file_type().is_file() => files.push((
                slash_path(entry.path().strip_prefix(dir).unwrap_or(entry.path())),
                entry.into_path(),
            )),
            Ok(entry) if !entry.file_type().is_dir() => problems.push(Diagnostic::warning(
                relative(root, entry.path()),
                1,
                1,
                "not published: not a file or a folder (a FIFO, a socket or a device)",
            )),
            Ok(_) => {}
            Err(e) => problems.push(walk_error(root, dir, &e)),
        }
    }
    (files, problems)
}

fn walk_files(dir: &Path) -> Vec<(String, PathBuf)> {
    if !dir.is_dir() {
        return Vec::new();
    }
    WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            (
                slash_path(e.path().strip_prefix(dir).unwrap_or(e.path())),
                e.into_path(),
            )
        })
        .collect()
}

/// A relative path with `/` separators.
pub(crate) fn slash_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// `path` relative to `root` when it is inside it, else as given.
pub(crate) fn relative(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root)
        .map_or_else(|_| path.to_path_buf(), Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_strips_bom_and_locates_bad_bytes() {
        assert_eq!(decode(b"\xEF\xBB\xBFhi".to_vec()).unwrap(), "hi");
        assert_eq!(decode(b"ok\nab\xFFc".to_vec()).unwrap_err(), (2, 3));
    }

    #[test]
    fn nothing_below_a_folder_linked_from_outside_the_site_is_read() {
        let tmp = tempfile::tempdir().unwrap();
        let (site, outside) = (tmp.path().join("site"), tmp.path().join("outside"));
        std::fs::create_dir_all(site.join("content")).unwrap();
        std::fs::create_dir_all(outside.join("deeper")).unwrap();
        std::fs::write(outside.join("secret.md"), "---\ntitle: s\n---\nSECRET\n").unwrap();
        std::fs::write(outside.join("deeper/more.md"), "SECRET\n").unwrap();
        std::fs::write(site.join("content/ok.md"), "---\ntitle: ok\n---\nfine\n").unwrap();
        std::os::unix::fs::symlink(&outside, site.join("content/linked")).unwrap();
        let (files, diagnostics) = load(&site, &site.join("content"), None);
        let read: Vec<_> = files.iter().map(Loaded::rel).collect();
        assert_eq!(read, ["ok.md"], "{read:?}");
        assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
        assert_eq!(
            diagnostics[0].path,
            std::path::PathBuf::from("content/linked")
        );
        assert!(diagnostics[0].message.contains("outside the site"));
    }
}
