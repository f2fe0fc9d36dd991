//! The incremental build cache in `.errata/cache/`: each page's finished
//! files, keyed by a hash of everything its output depends on.
//!
//! A page's output depends on its own source and on site-wide inputs: the
//! errata version, `site.toml` and the command-line overrides, templates,
//! data, asset names, and the site's structure (every page's and section's
//! URL, section titles, taxonomy term names). The site-wide part is one
//! hash; each page's key adds its own text and URL. So editing one page's
//! body re-renders that page only, while a change to a title, a template or
//! the config re-renders everything. Sections, taxonomy pages and anchors
//! are always rebuilt and checked, so cached pages stay correct.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::diagnostics::Diagnostic;
use crate::markdown::AnchorRef;

/// What one page produced, as stored.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CacheEntry {
    /// Output path → file contents (the page and its alias pages).
    pub files: Vec<(String, String)>,
    /// Site path → ids on that page.
    pub ids: Vec<(String, Vec<String>)>,
    /// Fragment links to re-check against the current site.
    pub anchors: Vec<(PathBuf, AnchorRef)>,
    /// Warnings the page produced (errors are never cached).
    pub warnings: Vec<Diagnostic>,
    /// Code blocks rendered.
    pub code_blocks: usize,
}

/// A 128-bit content hash as hex: two FNV-1a passes with different seeds.
pub fn hash_hex(parts: &[&[u8]]) -> String {
    let mut a: u64 = 0xcbf2_9ce4_8422_2325;
    let mut b: u64 = 0x6c62_272e_07bb_0142;
    for part in parts {
        // The length separates parts, so ("ab", "c") and ("a", "bc") differ.
        for &byte in (part.len() as u64).to_le_bytes().iter().chain(part.iter()) {
            a = (a ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
            b = (b ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3_u64.rotate_left(7) | 1);
        }
    }
    format!("{a:016x}{b:016x}")
}

/// The cache for one build.
pub struct PageCache {
    dir: PathBuf,
    global: String,
    read: bool,
    used: Mutex<HashSet<String>>,
}

impl PageCache {
    /// The cache under `root/.errata/cache`, for builds whose site-wide
    /// inputs hash to `global`. With `read` false (`--clean`), nothing is
    /// read, but fresh entries are still written.
    pub fn open(root: &Path, global: String, read: bool) -> PageCache {
        PageCache {
            dir: root.join(".errata").join("cache"),
            global,
            read,
            used: Mutex::new(HashSet::new()),
        }
    }

    /// The key of a page with this source text at this site path.
    pub fn key(&self, text: &str, path: &str) -> String {
        hash_hex(&[self.global.as_bytes(), text.as_bytes(), path.as_bytes()])
    }

    fn file(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    /// The stored entry, if any (and if reading is on).
    pub fn load(&self, key: &str) -> Option<CacheEntry> {
        self.used
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.to_string());
        if !self.read {
            return None;
        }
        let text = std::fs::read_to_string(self.file(key)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Stores an entry; a failure only costs the next build some time.
    pub fn store(&self, key: &str, entry: &CacheEntry) {
        let path = self.file(key);
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        if let Ok(json) = serde_json::to_string(entry) {
            let tmp = path.with_extension("tmp");
            if std::fs::write(&tmp, json).is_ok() {
                let _ = std::fs::rename(&tmp, &path);
            }
        }
    }

    /// Removes entries this build did not use, so the cache does not grow
    /// with every edit.
    pub fn prune(&self) {
        let used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        let Ok(shards) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for shard in shards.flatten() {
            let Ok(files) = std::fs::read_dir(shard.path()) else {
                continue;
            };
            for file in files.flatten() {
                let name = file.file_name().to_string_lossy().into_owned();
                let key = name.trim_end_matches(".json");
                if !used.contains(key) {
                    let _ = std::fs::remove_file(file.path());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_separate_parts_and_differ_by_content() {
        assert_ne!(hash_hex(&[b"ab", b"c"]), hash_hex(&[b"a", b"bc"]));
        assert_ne!(hash_hex(&[b"x"]), hash_hex(&[b"y"]));
        assert_eq!(hash_hex(&[b"x"]).len(), 32);
    }

    #[test]
    fn entries_round_trip_and_prune() {
        let dir = tempfile::tempdir().unwrap();
        let cache = PageCache::open(dir.path(), "g".into(), true);
        let key = cache.key("text", "a/");
        assert!(cache.load(&key).is_none());
        let entry = CacheEntry {
            files: vec![("a/index.html".into(), "<p>x</p>".into())],
            code_blocks: 2,
            ..Default::default()
        };
        cache.store(&key, &entry);
        assert_eq!(cache.load(&key).unwrap().files, entry.files);
        // A new build that does not use the entry removes it.
        let next = PageCache::open(dir.path(), "g2".into(), true);
        next.prune();
        assert!(
            PageCache::open(dir.path(), "g".into(), true)
                .load(&key)
                .is_none()
        );
    }
}
