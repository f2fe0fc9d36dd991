//! Folder locks: `flock` on the folder itself, released by the kernel when
//! the process holding it ends, however it ends.

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

/// Takes the folder's lock if nobody holds it, and if the folder is still
/// at `dir` once locked.
/// A folder that cannot be opened for another reason is [`Lock::Busy`]:
/// left alone, never taken for unlocked.
pub(super) fn try_lock(dir: &Path) -> Lock {
    match File::open(dir) {
        Ok(file) => lock_opened(file, dir),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Lock::Gone,
        Err(_) => Lock::Busy,
    }
}

/// Locks `file`, the folder opened at `dir`. Between the opening and the
/// lock, another build may have locked the folder, removed it (a dead
/// build's leftover, as it thought) and let go: the lock is then on a
/// folder no longer at `dir`, which is [`Lock::Gone`], never held.
fn lock_opened(file: File, dir: &Path) -> Lock {
    match flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {
            let lock = DirLock(file);
            if lock.is_at(dir) {
                Lock::Held(lock)
            } else {
                Lock::Gone
            }
        }
        Err(e) if no_locks(e) => Lock::Unsupported,
        Err(_) => Lock::Busy,
    }
}

/// The file system has no `flock` (some network file systems): nothing
/// can be proved dead, and builds go on unlocked. Any other error (out of
/// file descriptors, a lock interrupted) is not that.
fn no_locks(e: rustix::io::Errno) -> bool {
    e == rustix::io::Errno::NOLCK || super::swap::unsupported(e)
}

/// Waits for the lock on the folder now at `dir` (another build may
/// be swapping it); `None` where locks are not available.
pub(super) fn wait_for(dir: &Path) -> io::Result<Option<DirLock>> {
    loop {
        let file = File::open(dir)?;
        match flock(&file, FlockOperation::LockExclusive) {
            Ok(()) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) if no_locks(e) => return Ok(None),
            Err(e) => return Err(e.into()),
        }
        let lock = DirLock(file);
        if lock.is_at(dir) {
            return Ok(Some(lock));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_removed_or_replaced_between_open_and_lock_is_gone() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join(".public.tmp-1");
        std::fs::create_dir(&dir).unwrap();
        let opened = File::open(&dir).unwrap();
        std::fs::remove_dir(&dir).unwrap();
        assert!(matches!(lock_opened(opened, &dir), Lock::Gone));

        std::fs::create_dir(&dir).unwrap();
        let opened = File::open(&dir).unwrap();
        std::fs::remove_dir(&dir).unwrap();
        std::fs::create_dir(&dir).unwrap();
        assert!(matches!(lock_opened(opened, &dir), Lock::Gone));
        // The folder now at `dir` is a new one, and free.
        assert!(matches!(try_lock(&dir), Lock::Held(_)));
    }

    #[test]
    fn a_folder_locked_elsewhere_is_busy() {
        let root = tempfile::tempdir().unwrap();
        let Lock::Held(_held) = try_lock(root.path()) else {
            panic!("an unlocked folder could not be locked");
        };
        assert!(matches!(try_lock(root.path()), Lock::Busy));
    }
}
