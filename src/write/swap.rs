//! Swapping the staged site in: two folders exchanged in one step where
//! the OS can, and what to tell the user when it refuses.

use std::io;
use std::path::Path;

/// Swaps two folders in one step. `Ok(false)` where the OS or the file
/// system cannot (the caller then falls back to two renames).
#[cfg(any(target_os = "linux", target_os = "android", target_os = "macos"))]
pub(super) fn exchange(a: &Path, b: &Path) -> io::Result<bool> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    match renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE) {
        Ok(()) => Ok(true),
        Err(e) if unsupported(e) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos")))]
pub(super) fn exchange(_: &Path, _: &Path) -> io::Result<bool> {
    Ok(false)
}

/// Renames `from` to `to` only if nothing is at `to`, in one step where
/// the OS can: a plain rename would replace an empty folder another build
/// just made there.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "macos"))]
pub(super) fn rename_new(from: &Path, to: &Path) -> io::Result<()> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(()),
        Err(e) if unsupported(e) => rename_if_free(from, to),
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos")))]
pub(super) fn rename_new(from: &Path, to: &Path) -> io::Result<()> {
    rename_if_free(from, to)
}

/// The best a plain rename can do: look first.
fn rename_if_free(from: &Path, to: &Path) -> io::Result<()> {
    if std::fs::symlink_metadata(to).is_ok() {
        return Err(io::ErrorKind::AlreadyExists.into());
    }
    std::fs::rename(from, to)
}

/// What the OS or file system answers for a call it does not have (a
/// rename flag, `flock`): the caller falls back rather than failing.
#[cfg(unix)]
pub(super) fn unsupported(e: rustix::io::Errno) -> bool {
    use rustix::io::Errno;
    [Errno::INVAL, Errno::NOSYS, Errno::NOTSUP, Errno::OPNOTSUPP].contains(&e)
}

/// Says what to do when the OS refuses to swap folders because the output
/// is a mount point (or on another file system than the folder holding it).
pub(super) fn explain_swap_error(target: &Path, e: io::Error) -> io::Error {
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
