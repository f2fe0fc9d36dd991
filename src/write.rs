//! Stage 6, `write`: files go into a staging folder beside the output,
//! which replaces the output only when the whole build succeeded.
//!
//! - The staging folder, `.<output>.tmp-<pid>`, holds the ownership marker
//!   ([`MARKER`]) from its creation and is locked (`flock`) for as long as
//!   its build runs.
//! - On success it is exchanged with the output in one step where the OS
//!   can (`renameat2(RENAME_EXCHANGE)` on Linux, `RENAME_SWAP` on macOS).
//!   Elsewhere, or where the file system refuses, the old output is first
//!   renamed to `.<output>.old-<pid>` and the staging folder renamed in.
//! - A build killed at any point leaves the previous output whole. The next
//!   build ([`remove_dead_staging`]) puts back an output that a killed
//!   fallback swap had moved aside, and removes staging folders that are
//!   provably errata's (marked) and provably dead (nobody holds their lock).
//!   A live concurrent build's folders are locked, so they are left alone.

use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::assets::AssetSource;
use crate::diagnostics::Diagnostic;
use crate::output_dir::{MARKER, MARKER_TEXT, is_errata_output};

/// Joins a `/`-separated relative path onto `base`, refusing anything that
/// could leave `base`: `..`, `.`, empty segments, absolute paths, drive
/// letters and backslashes.
pub fn safe_join(base: &Path, rel: &str) -> Result<PathBuf, String> {
    let mut out = base.to_path_buf();
    for segment in rel.split('/') {
        if segment.is_empty()
            || segment == "."
            || segment == ".."
            || segment.contains(['\\', ':', '\0'])
        {
            return Err(format!(
                "refusing to write `{rel}`: it is not a plain path inside the output folder"
            ));
        }
        let mut components = Path::new(segment).components();
        if !matches!(
            (components.next(), components.next()),
            (Some(Component::Normal(_)), None)
        ) {
            return Err(format!(
                "refusing to write `{rel}`: it is not a plain path inside the output folder"
            ));
        }
        out.push(segment);
    }
    Ok(out)
}

/// Where a build's files go: a staging folder on disk ([`Staging`]) or a
/// map in memory ([`Memory`], for `errata serve`).
pub trait Store: Sync {
    /// Writes `bytes` at `rel` (a `/`-separated path).
    fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), String>;
    /// Copies the file `from` to `rel`.
    fn copy(&self, rel: &str, from: &Path) -> Result<(), String>;
}

impl Store for Staging {
    fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), String> {
        Staging::write(self, rel, bytes)
    }
    fn copy(&self, rel: &str, from: &Path) -> Result<(), String> {
        Staging::copy(self, rel, from)
    }
}

/// A site kept in memory: output path → bytes. Paths are held to the same
/// rule as on disk ([`safe_join`]).
#[derive(Debug, Default)]
pub struct Memory(std::sync::Mutex<std::collections::BTreeMap<String, bytes::Bytes>>);

impl Memory {
    /// The files, by output path.
    pub fn into_files(self) -> std::collections::BTreeMap<String, bytes::Bytes> {
        self.0.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    fn put(&self, rel: &str, bytes: Vec<u8>) -> Result<(), String> {
        safe_join(Path::new(""), rel)?;
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(rel.to_string(), bytes.into());
        Ok(())
    }
}

impl Store for Memory {
    fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), String> {
        self.put(rel, bytes.to_vec())
    }
    fn copy(&self, rel: &str, from: &Path) -> Result<(), String> {
        let bytes =
            std::fs::read(from).map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
        self.put(rel, bytes)
    }
}

/// A staging folder that becomes the output on [`Staging::commit`] and is
/// removed if dropped before that.
pub struct Staging {
    dir: PathBuf,
    target: PathBuf,
    /// Held while the build runs, so other builds see the folder is alive.
    _lock: Option<lock::DirLock>,
    committed: bool,
    written: AtomicUsize,
}

impl Staging {
    /// Creates a staging folder next to `target` (an output folder already
    /// resolved and accepted by `output_dir::check`), holding only
    /// the marker, after clearing what dead builds left there.
    pub fn create(target: &Path) -> io::Result<Staging> {
        let (parent, name) = parent_and_name(target);
        std::fs::create_dir_all(&parent)?;
        remove_dead_staging(target);
        let pid = std::process::id();
        for attempt in 0..100 {
            let dir = parent.join(staging_name(&name, "tmp", pid, attempt));
            match std::fs::create_dir(&dir) {
                Ok(()) => {}
                // A live process with our pid in another pid namespace.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
            let lock = match lock::try_lock(&dir) {
                Lock::Held(lock) => Some(lock),
                Lock::Unsupported => None,
                // Another build's clean-up took the folder while it was empty.
                Lock::Busy | Lock::Gone => continue,
            };
            let staging = Staging {
                dir,
                target: target.to_path_buf(),
                _lock: lock,
                committed: false,
                written: AtomicUsize::new(0),
            };
            std::fs::write(staging.dir.join(MARKER), MARKER_TEXT)?;
            return Ok(staging);
        }
        Err(io::Error::other(format!(
            "cannot create a staging folder beside {}",
            target.display()
        )))
    }

    /// Writes `bytes` at `rel` (a `/`-separated path) inside the staging folder.
    pub fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), String> {
        let path = self.path_of(rel)?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(&path, bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        self.wrote_one();
        Ok(())
    }

    /// Copies a file to `rel` inside the staging folder.
    pub fn copy(&self, rel: &str, from: &Path) -> Result<(), String> {
        let path = self.path_of(rel)?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::copy(from, &path).map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
        self.wrote_one();
        Ok(())
    }

    /// Where `rel` goes; never over the marker, which tells later builds
    /// that errata made this folder.
    fn path_of(&self, rel: &str) -> Result<PathBuf, String> {
        if rel.split('/').next() == Some(MARKER) {
            return Err(format!(
                "refusing to write `{rel}`: `{MARKER}` is reserved for the marker errata writes into every output folder"
            ));
        }
        safe_join(&self.dir, rel)
    }

    /// Writes every static file (copied or generated) into the staging
    /// folder; a file that cannot be written is an error at its output path.
    pub fn write_assets(
        &self,
        files: &std::collections::BTreeMap<String, AssetSource>,
    ) -> Vec<Diagnostic> {
        let mut problems = Vec::new();
        for (out, source) in files {
            let result = match source {
                AssetSource::File(path) => self.copy(out, path),
                AssetSource::Generated(bytes) => self.write(out, bytes),
            };
            if let Err(message) = result {
                problems.push(Diagnostic::error(out, 1, 1, message));
            }
        }
        problems
    }

    fn wrote_one(&self) {
        let count = self.written.fetch_add(1, Ordering::Relaxed) + 1;
        test_hook::pause_after_write(count);
    }

    /// How many files were written (the marker not counted).
    pub fn written(&self) -> usize {
        self.written.load(Ordering::Relaxed)
    }

    /// Replaces the target folder with the staging folder: in one step
    /// where the OS allows it, else by moving the old output aside first.
    pub fn commit(self) -> io::Result<()> {
        self.commit_with(exchange)
    }

    fn commit_with(mut self, exchange: fn(&Path, &Path) -> io::Result<bool>) -> io::Result<()> {
        test_hook::pause("swap");
        self.swap_in(exchange)
            .map_err(|e| explain_swap_error(&self.target, e))
    }

    fn swap_in(&mut self, exchange: fn(&Path, &Path) -> io::Result<bool>) -> io::Result<()> {
        match std::fs::symlink_metadata(&self.target) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                match std::fs::rename(&self.dir, &self.target) {
                    Ok(()) => {
                        self.committed = true;
                        return Ok(());
                    }
                    // A concurrent build made the output meanwhile: it is
                    // exchanged like any other.
                    Err(_) if std::fs::symlink_metadata(&self.target).is_ok() => {}
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
            Ok(_) => {}
        }
        // The old output stays locked until it is gone, so that no other
        // build takes it for a dead build's leftover while we remove it.
        let _old_lock = lock::wait_for(&self.target)?;
        if exchange(&self.dir, &self.target)? {
            self.committed = true;
            test_hook::pause("swapped");
            // The old output now sits at the staging folder's name.
            let _ = std::fs::remove_dir_all(&self.dir);
        } else {
            let (parent, name) = parent_and_name(&self.target);
            let old = parent.join(staging_name(&name, "old", std::process::id(), 0));
            std::fs::rename(&self.target, &old)?;
            test_hook::pause("moved-aside");
            if let Err(e) = std::fs::rename(&self.dir, &self.target) {
                let _ = std::fs::rename(&old, &self.target);
                return Err(e);
            }
            self.committed = true;
            let _ = std::fs::remove_dir_all(&old);
        }
        Ok(())
    }
}

/// Says what to do when the OS refuses to swap folders because the output
/// is a mount point (or on another file system than the folder holding it).
fn explain_swap_error(target: &Path, e: io::Error) -> io::Error {
    match e.kind() {
        io::ErrorKind::CrossesDevices | io::ErrorKind::ResourceBusy => io::Error::new(
            e.kind(),
            format!(
                "cannot swap the new site in ({e}): is {} a mount point? errata replaces the output \
                 folder as a whole, so build into a folder inside it, or mount the folder above it",
                target.display()
            ),
        ),
        _ => e,
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Clears what dead builds left beside the output folder `target`:
/// - an output that a fallback swap had moved aside when it was killed goes
///   back in place, if nothing took its place since;
/// - staging folders holding the marker are removed; unmarked ones only if
///   they are empty (a build killed before writing its marker).
///
/// Only folders named like errata's staging folders for this output, and
/// whose lock nobody holds, are touched: a live build (this process's
/// included) holds its folders' locks. Where locks are not available
/// nothing is removed, since nothing can be proved dead.
pub fn remove_dead_staging(target: &Path) {
    let target = crate::output_dir::resolve(target).unwrap_or_else(|_| target.to_path_buf());
    let (parent, name) = parent_and_name(&target);
    let Ok(entries) = std::fs::read_dir(&parent) else {
        return;
    };
    let mut found: Vec<(PathBuf, bool)> = entries
        .flatten()
        .filter_map(|entry| {
            let file_name = entry.file_name().into_string().ok()?;
            let moved_aside = staging_kind(&name, &file_name)?;
            Some((entry.path(), moved_aside))
        })
        .collect();
    found.sort();
    for (path, moved_aside) in found {
        if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let Lock::Held(lock) = lock::try_lock(&path) else {
            continue;
        };
        if !lock.is_at(&path) {
            continue;
        }
        if moved_aside && std::fs::symlink_metadata(&target).is_err() {
            let _ = std::fs::rename(&path, &target);
        } else if is_errata_output(&path) {
            let _ = std::fs::remove_dir_all(&path);
        } else {
            let _ = std::fs::remove_dir(&path);
        }
    }
}

/// The folder holding `target`, and the name the staging folders derive from.
fn parent_and_name(target: &Path) -> (PathBuf, String) {
    let parent = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map_or_else(|| "public".into(), |n| n.to_string_lossy().into_owned());
    (parent.to_path_buf(), name)
}

/// `.public.tmp-<pid>` (a staging folder) or `.public.old-<pid>` (an output
/// moved aside by the fallback swap); later attempts add `-<n>`.
fn staging_name(name: &str, kind: &str, pid: u32, attempt: u32) -> String {
    match attempt {
        0 => format!(".{name}.{kind}-{pid}"),
        n => format!(".{name}.{kind}-{pid}-{n}"),
    }
}

/// Whether `file_name` is a staging folder of the output `name`: `Some(true)`
/// for an output moved aside, `Some(false)` for a staging folder.
fn staging_kind(name: &str, file_name: &str) -> Option<bool> {
    let rest = file_name.strip_prefix('.')?.strip_prefix(name)?;
    let (moved_aside, numbers) = if let Some(n) = rest.strip_prefix(".tmp-") {
        (false, n)
    } else {
        (true, rest.strip_prefix(".old-")?)
    };
    let mut parts = numbers.split('-');
    let all_digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    match (parts.next(), parts.next(), parts.next()) {
        (Some(pid), None, None) if all_digits(pid) => Some(moved_aside),
        (Some(pid), Some(n), None) if all_digits(pid) && all_digits(n) => Some(moved_aside),
        _ => None,
    }
}

/// Swaps two folders in one step. `Ok(false)` where the OS or the file
/// system cannot (the caller then falls back to two renames).
#[cfg(any(target_os = "linux", target_os = "android", target_os = "macos"))]
fn exchange(a: &Path, b: &Path) -> io::Result<bool> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    use rustix::io::Errno;
    match renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE) {
        Ok(()) => Ok(true),
        Err(e) if [Errno::INVAL, Errno::NOSYS, Errno::NOTSUP, Errno::OPNOTSUPP].contains(&e) => {
            Ok(false)
        }
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos")))]
fn exchange(_: &Path, _: &Path) -> io::Result<bool> {
    Ok(false)
}

/// What trying to lock a folder found.
enum Lock {
    /// We hold it now.
    Held(lock::DirLock),
    /// A live process holds it.
    Busy,
    /// The folder is no longer there.
    Gone,
    /// The OS or file system has no folder locks.
    Unsupported,
}

/// Folder locks: `flock` on the folder itself, released by the kernel when
/// the process holding it ends, however it ends.
#[cfg(unix)]
mod lock {
    use std::fs::File;
    use std::io;
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;

    use rustix::fs::{FlockOperation, flock};

    use super::Lock;

    /// An exclusive lock on a folder, held until dropped.
    pub(super) struct DirLock(File);

    impl DirLock {
        /// Whether `path` is still the folder this lock is on.
        pub(super) fn is_at(&self, path: &Path) -> bool {
            match (self.0.metadata(), std::fs::symlink_metadata(path)) {
                (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
                _ => false,
            }
        }
    }

    /// Takes the folder's lock if nobody holds it.
    pub(super) fn try_lock(dir: &Path) -> Lock {
        let file = match File::open(dir) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Lock::Gone,
            Err(_) => return Lock::Unsupported,
        };
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Lock::Held(DirLock(file)),
            Err(rustix::io::Errno::WOULDBLOCK) => Lock::Busy,
            Err(_) => Lock::Unsupported,
        }
    }

    /// Waits for the lock on the folder now at `dir` (another build may
    /// be swapping it); `None` where locks are not available.
    pub(super) fn wait_for(dir: &Path) -> io::Result<Option<DirLock>> {
        loop {
            let file = File::open(dir)?;
            if flock(&file, FlockOperation::LockExclusive).is_err() {
                return Ok(None);
            }
            let lock = DirLock(file);
            if lock.is_at(dir) {
                return Ok(Some(lock));
            }
        }
    }
}

#[cfg(not(unix))]
mod lock {
    use std::io;
    use std::path::Path;

    use super::Lock;

    /// No folder locks here.
    pub(super) struct DirLock;

    impl DirLock {
        pub(super) fn is_at(&self, _: &Path) -> bool {
            false
        }
    }

    pub(super) fn try_lock(_: &Path) -> Lock {
        Lock::Unsupported
    }

    pub(super) fn wait_for(_: &Path) -> io::Result<Option<DirLock>> {
        Ok(None)
    }
}

/// Test-only: with `ERRATA_TEST_PAUSE` set to one of these points, a build
/// stops there for good, after saying so on stderr, so that a test can kill
/// it at exactly that point. Never set it outside tests.
/// - `write:<n>`: after the n-th file is written to the staging folder
///   (pages are written as they render, so this is during render);
/// - `swap`: the staging folder is complete, the swap not begun;
/// - `swapped`: the folders are exchanged, the old output not yet removed;
/// - `moved-aside`: the fallback swap, between its two renames.
mod test_hook {
    use std::sync::OnceLock;

    fn wanted() -> Option<&'static str> {
        static WANTED: OnceLock<Option<String>> = OnceLock::new();
        WANTED
            .get_or_init(|| std::env::var("ERRATA_TEST_PAUSE").ok())
            .as_deref()
    }

    pub(super) fn pause(point: &str) {
        if wanted() == Some(point) {
            eprintln!("errata: paused at {point} (ERRATA_TEST_PAUSE)");
            loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        }
    }

    pub(super) fn pause_after_write(count: usize) {
        if let Some(n) = wanted().and_then(|w| w.strip_prefix("write:"))
            && n.parse() == Ok(count)
        {
            pause(&format!("write:{count}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_join_refuses_escapes() {
        let base = Path::new("/out");
        assert_eq!(
            safe_join(base, "oom/x/index.html").unwrap(),
            PathBuf::from("/out/oom/x/index.html")
        );
        for bad in [
            "../x",
            "a/../../x",
            "/etc/passwd",
            "a//b",
            "a\\..\\b",
            "C:/x",
            "./x",
            "",
        ] {
            assert!(safe_join(base, bad).is_err(), "{bad}");
        }
    }

    fn staged_site(target: &Path, text: &str) -> Staging {
        let staging = Staging::create(target).unwrap();
        staging.write("index.html", text.as_bytes()).unwrap();
        staging
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn commit_exchanges_or_falls_back_to_two_renames() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("public");
        staged_site(&target, "one").commit().unwrap();
        assert_eq!(
            std::fs::read_to_string(target.join("index.html")).unwrap(),
            "one"
        );
        assert!(target.join(MARKER).is_file());
        staged_site(&target, "two").commit().unwrap();
        assert_eq!(
            std::fs::read_to_string(target.join("index.html")).unwrap(),
            "two"
        );
        // Where the OS cannot exchange folders.
        staged_site(&target, "three")
            .commit_with(|_, _| Ok(false))
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(target.join("index.html")).unwrap(),
            "three"
        );
        assert_eq!(names(dir.path()), ["public"]);
    }

    #[test]
    fn an_output_moved_aside_by_a_killed_fallback_swap_is_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("public");
        let aside = dir.path().join(".public.old-4000000");
        std::fs::create_dir(&aside).unwrap();
        std::fs::write(aside.join(MARKER), MARKER_TEXT).unwrap();
        std::fs::write(aside.join("index.html"), "previous").unwrap();
        // The staging folder of the killed build, complete but never renamed.
        let dead = dir.path().join(".public.tmp-4000000");
        std::fs::create_dir(&dead).unwrap();
        std::fs::write(dead.join(MARKER), MARKER_TEXT).unwrap();
        remove_dead_staging(&target);
        if cfg!(unix) {
            assert_eq!(
                std::fs::read_to_string(target.join("index.html")).unwrap(),
                "previous"
            );
            assert_eq!(names(dir.path()), ["public"]);
        }
    }

    #[test]
    fn nothing_is_written_over_the_marker() {
        let dir = tempfile::tempdir().unwrap();
        let staging = Staging::create(&dir.path().join("public")).unwrap();
        for rel in [MARKER, &format!("{MARKER}/index.html")] {
            let error = staging.write(rel, b"x").unwrap_err();
            assert!(error.contains("reserved"), "{error}");
        }
        assert!(staging.write(&format!("a/{MARKER}"), b"x").is_ok());
        assert_eq!(
            std::fs::read_to_string(staging.dir.join(MARKER)).unwrap(),
            MARKER_TEXT
        );
    }

    #[test]
    fn staging_names_are_recognised_exactly() {
        assert_eq!(staging_kind("public", ".public.tmp-12"), Some(false));
        assert_eq!(staging_kind("public", ".public.tmp-12-3"), Some(false));
        assert_eq!(staging_kind("public", ".public.old-12"), Some(true));
        for other in [
            ".public.tmp-",
            ".public.tmp-12-",
            ".public.tmp-1-2-3",
            ".public.tmp-x",
            ".publicx.tmp-12",
            "public.tmp-12",
            ".public.tmp-12.bak",
            ".dist.tmp-12",
        ] {
            assert_eq!(staging_kind("public", other), None, "{other}");
        }
        assert_eq!(staging_name("public", "tmp", 7, 0), ".public.tmp-7");
        assert_eq!(staging_name("public", "old", 7, 2), ".public.old-7-2");
    }
}
