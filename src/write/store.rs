//! Where a build's files go: the [`Store`] trait, the in-memory store
//! `errata serve` uses, and the path rule both stores share.

use std::sync::Arc;

use super::*;

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

/// A site in memory: output path → the hash of the file's bytes
/// ([`crate::hash::content_hash`]) and the bytes. What `errata serve`
/// serves, and what its next build keeps files from without hashing them
/// again.
#[derive(Debug, Default, Clone)]
pub struct MemorySite(BTreeMap<String, (u128, bytes::Bytes)>);

impl MemorySite {
    /// The file at `path`.
    pub fn get(&self, path: &str) -> Option<&bytes::Bytes> {
        self.0.get(path).map(|(_, bytes)| bytes)
    }

    /// How many files it holds.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it holds no file.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every output path, sorted.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }
}

/// A site kept in memory ([`MemorySite`]). Paths are held to the same rule
/// as on disk ([`safe_join`]). Files of the previous site (`errata serve`'s
/// last build) are kept by [`Store::keep`] without a copy.
#[derive(Debug, Default)]
pub struct Memory {
    files: Mutex<BTreeMap<String, (u128, bytes::Bytes)>>,
    previous: Arc<MemorySite>,
}

impl Memory {
    /// An empty store whose [`Store::keep`] takes files from `previous`.
    pub fn reusing(previous: Arc<MemorySite>) -> Memory {
        Memory {
            files: Mutex::default(),
            previous,
        }
    }

    /// The site built.
    pub fn into_site(self) -> MemorySite {
        MemorySite(self.files.into_inner().unwrap_or_else(|e| e.into_inner()))
    }

    fn put(&self, rel: &str, hash: u128, bytes: bytes::Bytes) -> Result<(), String> {
        safe_join(Path::new(""), rel)?;
        self.files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(rel.to_string(), (hash, bytes));
        Ok(())
    }
}

impl Store for Memory {
    fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), String> {
        let hash = crate::hash::content_hash(bytes);
        self.put(rel, hash, bytes.to_vec().into())
    }
    fn copy(&self, rel: &str, from: &Path) -> Result<(), String> {
        let bytes =
            std::fs::read(from).map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
        self.write(rel, &bytes)
    }
    fn keep(&self, rel: &str, hash: u128) -> bool {
        match self.previous.0.get(rel) {
            Some((had, bytes)) if *had == hash => self.put(rel, hash, bytes.clone()).is_ok(),
            _ => false,
        }
    }
    fn read(&self, rel: &str) -> Option<Vec<u8>> {
        let files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        files.get(rel).map(|(_, b)| b.to_vec())
    }
}
