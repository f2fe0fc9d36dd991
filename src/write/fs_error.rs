//! A failed file-system call, with the file or folder it failed on: the
//! path a message names is the one the OS refused, not the output folder
//! the call was made for.

use std::io;
use std::path::{Path, PathBuf};

/// An I/O error and the path it happened at.
#[derive(Debug)]
pub struct FsError {
    /// The file or folder.
    pub path: PathBuf,
    /// What the OS said.
    pub source: io::Error,
}

/// Names the path an `io::Result` is about.
pub(super) trait At<T> {
    fn at(self, path: &Path) -> Result<T, FsError>;
}

impl<T> At<T> for io::Result<T> {
    fn at(self, path: &Path) -> Result<T, FsError> {
        self.map_err(|source| FsError {
            path: path.to_path_buf(),
            source,
        })
    }
}
