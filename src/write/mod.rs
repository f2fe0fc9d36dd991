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
//! - The output the swap replaced is not deleted: it is kept as the spare,
//!   `.<output>.spare`, and the next build stages into it, writing only
//!   what changed ([`reuse`]). Nothing is deleted on the build's path but
//!   the files and folders the new site no longer has.
//! - A build killed at any point leaves the previous output whole. The next
//!   build ([`remove_dead_staging`]) puts back an output that a killed
//!   fallback swap had moved aside, and takes staging folders that are
//!   provably errata's (marked) and provably dead (nobody holds their lock)
//!   as its spare, or removes them. A live concurrent build's folders are
//!   locked, so they are left alone.

mod reuse;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use reuse::{Entry, Found, Manifest, Manifests, Sig};

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
    /// Puts at `rel` the previous output's file there, if its bytes hash to
    /// `hash` ([`crate::hash::content_hash`]); `false` when no previous
    /// output provably holds them (the caller then writes `rel` itself).
    fn keep(&self, _rel: &str, _hash: u128) -> bool {
        false
    }
    /// The bytes this build put at `rel`.
    fn read(&self, rel: &str) -> Option<Vec<u8>>;
}

impl Store for Staging {
    fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), String> {
        Staging::write(self, rel, bytes)
    }
    fn copy(&self, rel: &str, from: &Path) -> Result<(), String> {
        Staging::copy(self, rel, from)
    }
    fn keep(&self, rel: &str, hash: u128) -> bool {
        Staging::keep(self, rel, hash)
    }
    fn read(&self, rel: &str) -> Option<Vec<u8>> {
        std::fs::read(self.path_of(rel).ok()?).ok()
    }
}

/// A site kept in memory: output path → bytes. Paths are held to the same
/// rule as on disk ([`safe_join`]). Files of the previous site (`errata
/// serve`'s last build) are kept by [`Store::keep`] without a copy.
#[derive(Debug, Default)]
pub struct Memory {
    files: Mutex<BTreeMap<String, bytes::Bytes>>,
    previous: BTreeMap<String, bytes::Bytes>,
}

impl Memory {
    /// An empty store whose [`Store::keep`] takes files from `previous`.
    pub fn reusing(previous: BTreeMap<String, bytes::Bytes>) -> Memory {
        Memory {
            files: Mutex::default(),
            previous,
        }
    }

    /// The files, by output path.
    pub fn into_files(self) -> BTreeMap<String, bytes::Bytes> {
        self.files.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    fn put(&self, rel: &str, bytes: bytes::Bytes) -> Result<(), String> {
        safe_join(Path::new(""), rel)?;
        self.files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(rel.to_string(), bytes);
        Ok(())
    }
}

impl Store for Memory {
    fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), String> {
        self.put(rel, bytes.to_vec().into())
    }
    fn copy(&self, rel: &str, from: &Path) -> Result<(), String> {
        let bytes =
            std::fs::read(from).map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
        self.put(rel, bytes.into())
    }
    fn keep(&self, rel: &str, hash: u128) -> bool {
        match self.previous.get(rel) {
            Some(bytes) if crate::hash::content_hash(bytes) == hash => {
                self.put(rel, bytes.clone()).is_ok()
            }
            _ => false,
        }
    }
    fn read(&self, rel: &str) -> Option<Vec<u8>> {
        let files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        files.get(rel).map(|b| b.to_vec())
    }
}

/// The current output, whose files a cache hit may carry over.
struct Carry {
    dir: PathBuf,
    manifest: Manifest,
}

/// What the staging folder holds, as the build goes.
#[derive(Default)]
struct Contents {
    /// Files found in the reused spare and not yet written, kept or
    /// removed.
    found: HashMap<String, Found>,
    /// Folders that exist in the staging folder (`""` is its root).
    dirs: HashSet<String>,
    /// What this build put in the folder: its manifest.
    out: HashMap<String, Entry>,
}

/// How a file is written.
enum Mode {
    /// A new file.
    Create,
    /// Over an unshared file (no truncation first, so that no block is
    /// freed and allocated again).
    InPlace,
    /// Unlinked first: the old file may be another folder's too.
    Replace,
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
    contents: Mutex<Contents>,
    /// Where the manifests go; `None` for a staging folder that reuses
    /// nothing and records nothing.
    manifests: Option<Manifests>,
    carry: Option<Carry>,
    /// The identities of the staging folder and of the output it replaces.
    ids: (Option<u64>, Option<u64>),
    /// The folder was the spare.
    reused: bool,
}

impl Staging {
    /// Creates a staging folder next to `target` (an output folder already
    /// resolved and accepted by `output_dir::check`), holding only
    /// the marker, after clearing what dead builds left there.
    pub fn create(target: &Path) -> io::Result<Staging> {
        Staging::open(target, None)
    }

    /// Like [`Staging::create`], but stages into the spare (the output the
    /// last swap replaced) when there is one, keeps what it holds where the
    /// build writes the same bytes, carries cache hits over from the
    /// current output, and records manifests in `state` (see [`reuse`]).
    pub fn reusing(target: &Path, state: &Path) -> io::Result<Staging> {
        Staging::open(target, Some(Manifests::new(state, target)))
    }

    fn open(target: &Path, manifests: Option<Manifests>) -> io::Result<Staging> {
        let (parent, name) = parent_and_name(target);
        std::fs::create_dir_all(&parent)?;
        remove_dead_staging(target);
        let pid = std::process::id();
        let spare = parent.join(spare_name(&name));
        for attempt in 0..100 {
            let dir = parent.join(staging_name(&name, "tmp", pid, attempt));
            let claimed = match &manifests {
                Some(_) if std::fs::symlink_metadata(&dir).is_err() => claim(&spare, &dir),
                _ => None,
            };
            let reused = claimed.is_some();
            let lock = match claimed {
                Some(lock) => Some(lock),
                None => {
                    match std::fs::create_dir(&dir) {
                        Ok(()) => {}
                        // A live process with our pid in another pid namespace.
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                        Err(e) => return Err(e),
                    }
                    match lock::try_lock(&dir) {
                        Lock::Held(lock) => Some(lock),
                        Lock::Unsupported => None,
                        // Another build's clean-up took the folder while it was empty.
                        Lock::Busy | Lock::Gone => continue,
                    }
                }
            };
            let ids = (reuse::folder_id(&dir), reuse::folder_id(target));
            let mut contents = Contents::default();
            let mut carry = None;
            if let Some(m) = &manifests {
                let known = ids
                    .0
                    .map(|id| Manifest::load(&m.file(id)))
                    .unwrap_or_default();
                let tree = reuse::scan(&dir, &known, MARKER)?;
                contents.found = tree.files;
                contents.dirs = tree.dirs;
                carry = ids.1.map(|id| Carry {
                    dir: target.to_path_buf(),
                    manifest: Manifest::load(&m.file(id)),
                });
            } else {
                contents.dirs.insert(String::new());
            }
            let staging = Staging {
                dir,
                target: target.to_path_buf(),
                _lock: lock,
                committed: false,
                written: AtomicUsize::new(0),
                contents: Mutex::new(contents),
                manifests,
                carry,
                ids,
                reused,
            };
            if !is_errata_output(&staging.dir) {
                std::fs::write(staging.dir.join(MARKER), MARKER_TEXT)?;
            }
            return Ok(staging);
        }
        Err(io::Error::other(format!(
            "cannot create a staging folder beside {}",
            target.display()
        )))
    }

    fn contents(&self) -> std::sync::MutexGuard<'_, Contents> {
        self.contents.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes `bytes` at `rel` (a `/`-separated path) inside the staging
    /// folder; nothing when the reused folder already holds those bytes.
    pub fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), String> {
        let path = self.path_of(rel)?;
        let hash = crate::hash::content_hash(bytes);
        let mode = {
            let mut contents = self.contents();
            match contents.found.remove(rel) {
                Some(found) if found.known == Some(hash) => {
                    contents.out.insert(
                        rel.to_string(),
                        Entry {
                            hash,
                            sig: found.sig,
                        },
                    );
                    drop(contents);
                    self.wrote_one();
                    return Ok(());
                }
                Some(found) if !found.shared => Mode::InPlace,
                Some(_) => Mode::Replace,
                None if contents.out.contains_key(rel) => Mode::Replace,
                None => Mode::Create,
            }
        };
        self.make_parent(rel)?;
        let file = write_file(&path, bytes, mode)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        if let Ok(meta) = file.metadata() {
            let entry = Entry {
                hash,
                sig: Sig::of(&meta),
            };
            self.contents().out.insert(rel.to_string(), entry);
        }
        self.wrote_one();
        Ok(())
    }

    /// Puts at `rel` the bytes hashing to `hash` without writing them: the
    /// reused folder's file if it holds them, else the current output's,
    /// hard-linked (or copied). `false` if neither provably has them.
    pub fn keep(&self, rel: &str, hash: u128) -> bool {
        let Ok(path) = self.path_of(rel) else {
            return false;
        };
        {
            let mut contents = self.contents();
            if let Some(found) = contents.found.get(rel).copied()
                && found.known == Some(hash)
            {
                contents.found.remove(rel);
                contents.out.insert(
                    rel.to_string(),
                    Entry {
                        hash,
                        sig: found.sig,
                    },
                );
                drop(contents);
                self.wrote_one();
                return true;
            }
        }
        let Some(carry) = &self.carry else {
            return false;
        };
        let Some(entry) = carry.manifest.0.get(rel).filter(|e| e.hash == hash) else {
            return false;
        };
        let Ok(from) = safe_join(&carry.dir, rel) else {
            return false;
        };
        if !std::fs::symlink_metadata(&from).is_ok_and(|m| Sig::of(&m) == entry.sig) {
            return false;
        }
        let existing = {
            let mut contents = self.contents();
            contents.found.remove(rel).is_some() || contents.out.contains_key(rel)
        };
        if self.make_parent(rel).is_err() {
            return false;
        }
        if existing && reuse::remove_any(&path).is_err() {
            return false;
        }
        // The link is the same inode: the same bytes, if it is still the
        // file the manifest describes.
        if std::fs::hard_link(&from, &path).is_ok() {
            if std::fs::symlink_metadata(&path).is_ok_and(|m| Sig::of(&m) == entry.sig) {
                self.contents().out.insert(rel.to_string(), *entry);
                self.wrote_one();
                return true;
            }
            let _ = std::fs::remove_file(&path);
        }
        match std::fs::read(&from) {
            Ok(bytes) if crate::hash::content_hash(&bytes) == hash => {
                self.write(rel, &bytes).is_ok()
            }
            _ => false,
        }
    }

    /// Makes the folder `rel` goes in, once: folders already there (or made
    /// by this build) cost no call.
    fn make_parent(&self, rel: &str) -> Result<(), String> {
        let Some((parent, _)) = rel.rsplit_once('/') else {
            return Ok(());
        };
        if self.contents().dirs.contains(parent) {
            return Ok(());
        }
        let dir = self.path_of(parent)?;
        if let Err(e) = std::fs::create_dir_all(&dir) {
            // A reused folder may hold a file where this build needs a folder.
            let mut at = String::new();
            for segment in parent.split('/') {
                if !at.is_empty() {
                    at.push('/');
                }
                at.push_str(segment);
                let path = self.path_of(&at)?;
                if std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_dir()) {
                    self.contents().found.remove(&at);
                    let _ = reuse::remove_any(&path);
                }
            }
            std::fs::create_dir_all(&dir)
                .map_err(|_| format!("cannot create {}: {e}", dir.display()))?;
        }
        let mut contents = self.contents();
        let mut at = parent;
        loop {
            if !contents.dirs.insert(at.to_string()) {
                break;
            }
            match at.rsplit_once('/') {
                Some((up, _)) => at = up,
                None => break,
            }
        }
        Ok(())
    }

    /// Copies a file to `rel` inside the staging folder.
    pub fn copy(&self, rel: &str, from: &Path) -> Result<(), String> {
        let bytes =
            std::fs::read(from).map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
        self.write(rel, &bytes)
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
    pub fn write_assets(&self, files: &BTreeMap<String, AssetSource>) -> Vec<Diagnostic> {
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

    /// How many files were written or kept (the marker not counted).
    pub fn written(&self) -> usize {
        self.written.load(Ordering::Relaxed)
    }

    /// Removes what the reused folder held that this build did not put
    /// there: files, then folders no file of the new site is in.
    fn remove_leftovers(&self) -> io::Result<()> {
        let mut contents = self.contents();
        for rel in std::mem::take(&mut contents.found).into_keys() {
            reuse::remove_any(&safe_join(&self.dir, &rel).map_err(io::Error::other)?)?;
        }
        let needed = reuse::needed_dirs(contents.out.keys());
        let mut extra: Vec<&String> = contents
            .dirs
            .iter()
            .filter(|d| !needed.contains(*d))
            .collect();
        // Outermost first: removing one removes what is inside.
        extra.sort_by_key(|d| d.len());
        let mut removed: Vec<&str> = Vec::new();
        for dir in extra {
            if removed.iter().any(|r| {
                dir.strip_prefix(r)
                    .is_some_and(|rest| rest.starts_with('/'))
            }) {
                continue;
            }
            reuse::remove_any(&safe_join(&self.dir, dir).map_err(io::Error::other)?)?;
            removed.push(dir);
        }
        Ok(())
    }

    /// Replaces the target folder with the staging folder: in one step
    /// where the OS allows it, else by moving the old output aside first.
    pub fn commit(self) -> io::Result<()> {
        self.commit_with(exchange)
    }

    fn commit_with(mut self, exchange: fn(&Path, &Path) -> io::Result<bool>) -> io::Result<()> {
        self.remove_leftovers()?;
        test_hook::pause("swap");
        self.swap_in(exchange)
            .map_err(|e| explain_swap_error(&self.target, e))?;
        self.record();
        Ok(())
    }

    /// Saves the new output's manifest, and keeps only that one and the
    /// spare's. A failure only costs the next build some writing.
    fn record(&self) {
        let (Some(manifests), (Some(new), old)) = (&self.manifests, self.ids) else {
            return;
        };
        let contents = self.contents();
        let manifest = Manifest(contents.out.clone());
        if manifest.save(&manifests.file(new)).is_ok() {
            let mut keep = vec![new];
            keep.extend(old);
            manifests.prune(&keep);
        }
    }

    /// Keeps the output the swap replaced, now at `old`, as the spare (or
    /// removes it, when this staging folder reuses nothing or a spare is
    /// already there).
    fn keep_as_spare(&self, old: &Path) {
        if self.manifests.is_some() {
            let (parent, name) = parent_and_name(&self.target);
            if std::fs::rename(old, parent.join(spare_name(&name))).is_ok() {
                return;
            }
        }
        let _ = std::fs::remove_dir_all(old);
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
        // The old output stays locked until it is put away, so that no
        // other build takes it for a dead build's leftover meanwhile.
        let _old_lock = lock::wait_for(&self.target)?;
        if exchange(&self.dir, &self.target)? {
            self.committed = true;
            test_hook::pause("swapped");
            // The old output now sits at the staging folder's name.
            self.keep_as_spare(&self.dir.clone());
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
            self.keep_as_spare(&old);
        }
        Ok(())
    }
}

/// Writes `bytes` to `path` as `mode` says, and returns the open file.
fn write_file(path: &Path, bytes: &[u8], mode: Mode) -> io::Result<std::fs::File> {
    use std::io::Write as _;
    let create = |path: &Path| {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
    };
    let mut file = match mode {
        Mode::InPlace => match std::fs::OpenOptions::new().write(true).open(path) {
            Ok(file) => file,
            Err(_) => {
                reuse::remove_any(path)?;
                create(path)?
            }
        },
        Mode::Replace => {
            reuse::remove_any(path)?;
            create(path)?
        }
        Mode::Create => match create(path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                reuse::remove_any(path)?;
                create(path)?
            }
            Err(e) => return Err(e),
        },
    };
    file.write_all(bytes)?;
    file.set_len(bytes.len() as u64)?;
    Ok(file)
}

/// Takes the spare for a build: locks it, then renames it to `dir`, the
/// build's staging folder name. `None` when there is none, another build
/// holds it, or it is not errata's.
fn claim(spare: &Path, dir: &Path) -> Option<lock::DirLock> {
    if !std::fs::symlink_metadata(spare).is_ok_and(|m| m.is_dir()) || !is_errata_output(spare) {
        return None;
    }
    let Lock::Held(lock) = lock::try_lock(spare) else {
        return None;
    };
    if !lock.is_at(spare) || std::fs::rename(spare, dir).is_err() {
        return None;
    }
    lock.is_at(dir).then_some(lock)
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
    /// A build that did not swap removes its folder, or puts it back if it
    /// was the spare (what it wrote differs from the manifest, so the next
    /// build writes that again).
    fn drop(&mut self) {
        if !self.committed && self.reused {
            self.keep_as_spare(&self.dir.clone());
        } else if !self.committed {
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
            // Kept as the spare when there is none: the next build stages
            // into it (its files are unknown, so each is written again),
            // which costs far less than deleting a site's worth of folders.
            let spare = parent.join(spare_name(&name));
            if std::fs::symlink_metadata(&spare).is_ok() || std::fs::rename(&path, &spare).is_err()
            {
                let _ = std::fs::remove_dir_all(&path);
            }
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

/// `.public.spare`: the output the last swap replaced, kept for the next
/// build to stage into (see [`reuse`]).
fn spare_name(name: &str) -> String {
    format!(".{name}.spare")
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
mod tests;
