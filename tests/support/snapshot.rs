//! A folder's files and bytes, to prove a folder unchanged byte for byte.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every file under `dir` (a symlink at `dir` itself is followed), with its
/// bytes, keyed by its path relative to `dir`.
pub fn snapshot_dir(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            (
                e.path().strip_prefix(dir).unwrap().to_path_buf(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}
