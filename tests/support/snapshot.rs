//! A folder's entries and bytes, to prove a folder unchanged byte for byte.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every entry under `dir`, keyed by its path relative to `dir`: files with
/// their bytes, folders as empty, symlinks as their target, so that any
/// change shows (a new empty folder, a file turned into a link). A symlink
/// at `dir` itself is followed.
pub fn snapshot_dir(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.expect("a readable folder"))
        .filter(|e| e.depth() > 0)
        .map(|e| {
            let bytes = if e.file_type().is_file() {
                std::fs::read(e.path()).expect("a readable file")
            } else if e.path_is_symlink() {
                std::fs::read_link(e.path())
                    .expect("a symlink")
                    .into_os_string()
                    .into_encoded_bytes()
            } else {
                Vec::new()
            };
            (e.path().strip_prefix(dir).unwrap().to_path_buf(), bytes)
        })
        .collect()
}
