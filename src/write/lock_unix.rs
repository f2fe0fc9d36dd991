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
