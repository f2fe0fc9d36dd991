//! Folder locks where the OS has none: nothing can be proved dead.

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
