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

mod fs_error;
mod leftovers;
mod reuse;
mod store;
mod swap;

pub use store::{Memory, MemorySite, Store, safe_join};

pub use fs_error::FsError;
pub use leftovers::remove_dead_staging;

use fs_error::At;
use leftovers::*;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use reuse::{Entry, Found, Manifest, Manifests, Sig};

use crate::assets::AssetSource;
use crate::diagnostics::Diagnostic;
use crate::output_dir::{MARKER, MARKER_TEXT, is_errata_output};

/// Staging folders this process has named: the next one's number.
static ATTEMPTS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

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
impl Contents {
    /// Keeps the reused folder's file at `rel` if it holds the bytes
    /// hashing to `hash`, recording it as this build's; `false` otherwise.
    fn keep_found(&mut self, rel: &str, hash: u128) -> bool {
        match self.found.get(rel).copied() {
            Some(found) if found.known == Some(hash) => {
                self.found.remove(rel);
                let sig = found.sig;
                self.out.insert(rel.to_string(), Entry { hash, sig });
                true
            }
            _ => false,
        }
    }
}

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
    pub fn create(target: &Path) -> Result<Staging, FsError> {
        Staging::open(target, None)
    }

    /// Like [`Staging::create`], but stages into the spare (the output the
    /// last swap replaced) when there is one, keeps what it holds where the
    /// build writes the same bytes, carries cache hits over from the
    /// current output, and records manifests in `state` (see [`reuse`]).
    pub fn reusing(target: &Path, state: &Path) -> Result<Staging, FsError> {
        Staging::open(target, Some(Manifests::new(state, target)))
    }

    fn open(target: &Path, manifests: Option<Manifests>) -> Result<Staging, FsError> {
        let (parent, name) = parent_and_name(target);
        std::fs::create_dir_all(&parent).at(&parent)?;
        remove_dead_staging(target);
        let pid = std::process::id();
        let spare = parent.join(spare_name(&name));
        // Until the spare turns out unreadable.
        let mut spare_usable = true;
        for _ in 0..100 {
            // Unique in this process too, should two of its threads build
            // one output.
            let attempt = ATTEMPTS.fetch_add(1, Ordering::Relaxed);
            let dir = parent.join(staging_name(&name, "tmp", pid, attempt));
            let claimed = match &manifests {
                Some(_) if spare_usable => claim(&spare, &dir),
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
                        Err(e) => {
                            let e = io::Error::new(
                                e.kind(),
                                format!("cannot create a staging folder here: {e}"),
                            );
                            return Err(e).at(&parent);
                        }
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
                let tree = match reuse::scan(&dir, &known, MARKER) {
                    Ok(tree) => tree,
                    Err(e) => {
                        // The folder goes (under its lock, still held). The
                        // spare is only a head start: when it was the one
                        // that could not be read through, the build stages
                        // into a new folder.
                        let _ = std::fs::remove_dir_all(&dir);
                        if !reused {
                            return Err(e);
                        }
                        spare_usable = false;
                        continue;
                    }
                };
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
                let marker = staging.dir.join(MARKER);
                std::fs::write(&marker, MARKER_TEXT).at(&marker)?;
            }
            return Ok(staging);
        }
        Err(io::Error::other(
            "100 staging folders beside it were all taken",
        ))
        .at(target)
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
            if contents.keep_found(rel, hash) {
                drop(contents);
                self.wrote_one();
                return Ok(());
            }
            match contents.found.remove(rel) {
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
            if contents.keep_found(rel, hash) {
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
    fn remove_leftovers(&self) -> Result<(), FsError> {
        let mut contents = self.contents();
        for rel in std::mem::take(&mut contents.found).into_keys() {
            self.remove_rel(&rel)?;
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
            self.remove_rel(dir)?;
            removed.push(dir);
        }
        Ok(())
    }

    /// Removes `rel` from the staging folder.
    fn remove_rel(&self, rel: &str) -> Result<(), FsError> {
        let path = self.dir.join(rel);
        safe_join(&self.dir, rel)
            .map_err(io::Error::other)
            .and_then(|path| reuse::remove_any(&path))
            .at(&path)
    }

    /// Replaces the target folder with the staging folder: in one step
    /// where the OS allows it, else by moving the old output aside first.
    pub fn commit(self) -> Result<(), FsError> {
        self.commit_with(swap::exchange)
    }

    fn commit_with(
        mut self,
        exchange: fn(&Path, &Path) -> io::Result<bool>,
    ) -> Result<(), FsError> {
        self.remove_leftovers()?;
        test_hook::pause("swap");
        self.swap_in(exchange)?;
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

    fn swap_in(&mut self, exchange: fn(&Path, &Path) -> io::Result<bool>) -> Result<(), FsError> {
        let target = &self.target.clone();
        let explain = |e| swap::explain_swap_error(target, e);
        // One swap at a time beside the output: the fallback's two renames
        // leave a moment with no output, which another build must not see
        // (it would move its own folder in, or fail to open the output).
        // A folder one may write in but not list cannot be locked: the
        // swap then goes on, as it did before this lock.
        let (parent, name) = parent_and_name(target);
        let _swapping = match lock::wait_for(&parent) {
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => None,
            locked => locked.at(&parent)?,
        };
        match std::fs::symlink_metadata(target) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                std::fs::rename(&self.dir, target)
                    .map_err(explain)
                    .at(target)?;
                self.committed = true;
                return Ok(());
            }
            Err(e) => return Err(e).at(target),
            Ok(_) => {}
        }
        // The old output stays locked until it is put away, so that no
        // other build takes it for a dead build's leftover meanwhile.
        let _old_lock = lock::wait_for(target).at(target)?;
        if exchange(&self.dir, target).map_err(explain).at(target)? {
            self.committed = true;
            test_hook::pause("swapped");
            // The old output now sits at the staging folder's name.
            self.keep_as_spare(&self.dir.clone());
        } else {
            let attempt = ATTEMPTS.fetch_add(1, Ordering::Relaxed);
            let old = parent.join(staging_name(&name, "old", std::process::id(), attempt));
            swap::rename_new(target, &old).map_err(explain).at(target)?;
            test_hook::pause("moved-aside");
            if let Err(e) = std::fs::rename(&self.dir, target) {
                let _ = std::fs::rename(&old, target);
                return Err(explain(e)).at(target);
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

#[cfg(unix)]
#[path = "lock_unix.rs"]
mod lock;
#[cfg(not(unix))]
#[path = "lock_other.rs"]
mod lock;
mod test_hook;

#[cfg(test)]
mod tests;
