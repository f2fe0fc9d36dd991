//! The incremental build cache in `.errata/cache/`: what each page
//! produced, keyed by a hash of everything its output depends on.
//!
//! An entry holds what a cache hit needs besides the HTML: the hash of each
//! output file, the page's ids, fragment links, warnings and code-block
//! count (under a kilobyte; it held the HTML too, 40 KB a page). The files
//! themselves are carried over from the previous output (see
//! [`crate::write`]): a hit is a hit only where the previous output still
//! holds a file with that hash, unchanged since errata wrote it.
//!
//! A job's output (a page, or a list page: section, taxonomy, 404) depends
//! on site-wide inputs: the errata version, `site.toml` and the
//! command-line overrides, templates, data, asset names, and the site's
//! structure (every page's and section's URL, section titles and order,
//! taxonomy term names). The site-wide part is one hash; each job's key adds its own
//! inputs ([`crate::render::SiteContext::inputs`]: a page's text and URL, a
//! list's summaries). So editing one page's body re-renders that page only,
//! while a change to a template or the config re-renders everything.
//! Anchors are checked on every build, so cached pages stay correct.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::diagnostics::Diagnostic;
use crate::markdown::AnchorRef;

/// What one page produced, as stored.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CacheEntry {
    /// Output path → hash of the file's bytes ([`crate::hash::content_hash`],
    /// as hex), for the page and its alias pages.
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

pub use crate::hash::fast_hex;

/// The site-wide inputs every page's output depends on.
pub struct SiteInputs<'a> {
    /// The configuration (with the command line's overrides).
    pub config: &'a crate::config::Config,
    /// Whether drafts are built.
    pub drafts: bool,
    /// The site's structure.
    pub site: &'a crate::assemble::SiteIndex,
    /// The templates.
    pub templates: &'a crate::templates::Templates,
    /// The static files and their fingerprinted names.
    pub assets: &'a crate::assets::Assets,
    /// The calculator's data, as pages embed it.
    pub catalogue_json: &'a str,
}

/// The hash of every site-wide input a page's output depends on: the
/// errata executable, `site.toml` and the overrides, templates, assets,
/// calculator data and the site's structure.
pub fn site_key(inputs: &SiteInputs<'_>) -> String {
    let SiteInputs {
        config,
        drafts,
        site,
        templates,
        assets,
        catalogue_json,
    } = inputs;
    let mut structure = String::new();
    for page in &site.pages {
        structure.push_str(&format!("p {} {}\n", page.parsed.source.rel, page.path));
    }
    for section in &site.sections {
        structure.push_str(&format!("s {} {}", section.path, section.title()));
        // Its subsections in the order lists and every page's menu show
        // them (by weight, then title): a weight that reorders them
        // changes every page.
        for &i in &section.subsections {
            structure.push_str(&format!(" {}", site.sections[i].path));
        }
        structure.push('\n');
    }
    structure.push_str(&crate::bundle::fingerprint(&site.bundle_files));
    structure.push_str(&crate::bundle::fingerprint(
        site.static_files
            .iter()
            .filter_map(|(out, source)| Some((out, source.as_ref()?))),
    ));
    for taxonomy in &site.taxonomies {
        for term in &taxonomy.terms {
            structure.push_str(&format!(
                "t {} {} {}\n",
                taxonomy.name, term.slug, term.name
            ));
        }
    }
    let assets: String = assets
        .names
        .iter()
        .map(|(k, v)| format!("{k} {v}\n"))
        .collect();
    fast_hex(&[
        crate::hash::executable_identity().as_bytes(),
        config.text.as_bytes(),
        config.base_url.as_str().as_bytes(),
        &[u8::from(*drafts)],
        templates.fingerprint().as_bytes(),
        assets.as_bytes(),
        catalogue_json.as_bytes(),
        structure.as_bytes(),
    ])
}

/// How many generations (sets of entries for one site-wide key) are kept.
/// Builds with another `--base-url` or `--drafts` each have their own, so
/// they do not evict each other's entries. (`errata serve` keeps its
/// entries in memory: see [`crate::pipeline::Session`].)
const GENERATIONS: usize = 4;

/// The tag that opens each line of an entries file.
const MAGIC: &str = "errata-cache-v3";

/// The file holding a generation's entries, one per line.
const ENTRIES: &str = "entries";

/// One generation's entries: each entry's line as stored, and the entry
/// itself once a build of this process decoded or stored it (`errata
/// serve` keeps them between builds, so an entry is not decoded again).
#[derive(Debug)]
pub struct Memo {
    root: PathBuf,
    dir: PathBuf,
    global: String,
    entries: HashMap<String, Line>,
}

/// An entry as stored: its line, and the entry when it is at hand. An
/// entry stored in a session (kept decoded, never written) has no line.
#[derive(Debug, Clone)]
struct Line {
    text: Arc<str>,
    entry: Option<Arc<CacheEntry>>,
}

impl Memo {
    /// Writes the generation's entries file and its last-used stamp, and
    /// removes all but the [`GENERATIONS`] most recently used generations.
    /// A failure costs a later build some time only.
    fn write(&self) {
        let mut lines: Vec<&str> = self.entries.values().map(|l| &*l.text).collect();
        lines.sort_unstable();
        let _ = std::fs::create_dir_all(&self.dir);
        let _ = crate::state_file::write_lines(&self.dir.join(ENTRIES), lines);
        let _ = std::fs::write(self.dir.join(STAMP), now().to_string());
        let Ok(generations) = std::fs::read_dir(&self.root) else {
            return;
        };
        let mut others: Vec<(u64, PathBuf)> = generations
            .flatten()
            .map(|g| g.path())
            .filter(|g| *g != self.dir)
            .map(|g| {
                let stamp = std::fs::read_to_string(g.join(STAMP))
                    .ok()
                    .and_then(|s| s.trim().parse().ok())
                    .unwrap_or(0);
                (stamp, g)
            })
            .collect();
        others.sort_by(|a, b| b.cmp(a));
        for (_, old) in others.into_iter().skip(GENERATIONS - 1) {
            if old.is_dir() {
                let _ = std::fs::remove_dir_all(&old);
            } else {
                let _ = std::fs::remove_file(&old);
            }
        }
    }
}

/// The cache for one build.
///
/// A generation (named after the site-wide key) lives in
/// `.errata/cache/<generation>/`, its entries in one file, `entries`, read
/// once when the cache opens (a file per entry cost a build of 10,000
/// pages more time opening files than using them). Each line is
/// `errata-cache-v3 <key> <checksum> <JSON>`, the checksum covering the key
/// and the JSON: a line that fails it (damaged, edited, or moved to
/// another key) is dropped and its page rendered afresh.
/// [`PageCache::finish`] keeps the entries this build used or stored (and
/// writes them, so the file never grows with edits).
pub struct PageCache {
    root: PathBuf,
    dir: PathBuf,
    global: String,
    /// The entries as read (none when reading is off).
    stored: Arc<Memo>,
    /// Whether decoded entries are kept for a next build in this process.
    keep: bool,
    /// What to keep: the entries used and those stored by this build.
    kept: Mutex<HashMap<String, Line>>,
}

/// How long a build's cache entries live.
#[derive(Debug, Clone)]
pub enum Lifetime {
    /// `errata build`: read from `.errata/cache`, and the entries used or
    /// stored written back there for the next process.
    Process,
    /// A session (`errata serve`): entries are kept decoded in memory from
    /// one build to the next; here, the session's last build's, if any.
    Session(Option<Arc<Memo>>),
}

impl PageCache {
    /// The cache under `root/.errata/cache`, for builds whose site-wide
    /// inputs hash to `global`. With `read` false (`--clean`), nothing is
    /// read, but fresh entries are still saved.
    pub fn open(root: &Path, global: String, read: bool) -> PageCache {
        PageCache::open_after(root, global, read, Lifetime::Process)
    }

    /// [`PageCache::open`] for a build of `lifetime`: in a session, decoded
    /// entries are kept in memory, and taken from the session's last build
    /// when it is the same generation instead of from the file.
    pub fn open_after(root: &Path, global: String, read: bool, lifetime: Lifetime) -> PageCache {
        let (keep, previous) = match lifetime {
            Lifetime::Process => (false, None),
            Lifetime::Session(previous) => (true, previous),
        };
        let cache_root = root.join(".errata").join("cache");
        let dir = cache_root.join(&global[..global.len().min(16)]);
        let stored = match previous {
            Some(memo) if read && memo.dir == dir && memo.global == global => memo,
            _ => Arc::new(Memo {
                root: cache_root.clone(),
                dir: dir.clone(),
                global: global.clone(),
                entries: if read {
                    read_entries(&dir)
                } else {
                    HashMap::new()
                },
            }),
        };
        PageCache {
            root: cache_root,
            dir,
            global,
            stored,
            keep,
            kept: Mutex::default(),
        }
    }

    /// The key of a job whose own inputs hash to `inputs` (see
    /// [`crate::render::SiteContext::inputs`]).
    pub fn key(&self, inputs: u128) -> String {
        fast_hex(&[self.global.as_bytes(), &inputs.to_le_bytes()])
    }

    /// The stored entry, if any (and if reading is on) and if it is intact;
    /// it is then kept for the next build.
    pub fn load(&self, key: &str) -> Option<Arc<CacheEntry>> {
        let line = self.stored.entries.get(key)?;
        let entry = match &line.entry {
            Some(entry) => Arc::clone(entry),
            None => Arc::new(decode(key, &line.text)?),
        };
        let kept = Line {
            text: Arc::clone(&line.text),
            entry: self.keep.then(|| Arc::clone(&entry)),
        };
        self.kept
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.to_string(), kept);
        Some(entry)
    }

    /// Stores an entry (kept by [`PageCache::finish`]).
    pub fn store(&self, key: &str, entry: CacheEntry) {
        let line = if self.keep {
            Some(Line {
                text: Arc::from(""),
                entry: Some(Arc::new(entry)),
            })
        } else {
            serde_json::to_string(&entry).ok().map(|json| Line {
                text: Arc::from(encode(key, &json)),
                entry: None,
            })
        };
        if let Some(line) = line {
            self.kept
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key.to_string(), line);
        }
    }

    /// This generation's entries as this build leaves them: those it used
    /// or stored, so they do not grow with every edit. With `persist`,
    /// they are written now (see [`Memo::write`]).
    pub fn finish(&self, persist: bool) -> Arc<Memo> {
        let entries = std::mem::take(&mut *self.kept.lock().unwrap_or_else(|e| e.into_inner()));
        let memo = Memo {
            root: self.root.clone(),
            dir: self.dir.clone(),
            global: self.global.clone(),
            entries,
        };
        if persist {
            memo.write();
        }
        Arc::new(memo)
    }
}

/// The lines of the entries file in `dir`, by key.
fn read_entries(dir: &Path) -> HashMap<String, Line> {
    std::fs::read_to_string(dir.join(ENTRIES))
        .map(|text| {
            text.lines()
                .filter_map(|line| {
                    let key = line.strip_prefix(MAGIC)?.strip_prefix(' ')?;
                    let (key, _) = key.split_once(' ')?;
                    let line = Line {
                        text: Arc::from(line),
                        entry: None,
                    };
                    Some((key.to_string(), line))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The file in each generation that records when it was last used.
const STAMP: &str = "last-used";

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// An entry's line: the magic, the key, the checksum of key and JSON, then
/// the JSON (which holds no line break).
fn encode(key: &str, json: &str) -> String {
    format!(
        "{MAGIC} {key} {} {json}",
        fast_hex(&[key.as_bytes(), json.as_bytes()])
    )
}

/// The entry in `line`, if it is `key`'s and its checksum matches.
fn decode(key: &str, line: &str) -> Option<CacheEntry> {
    let rest = line.strip_prefix(MAGIC)?.strip_prefix(' ')?;
    let rest = rest.strip_prefix(key)?.strip_prefix(' ')?;
    let (checksum, json) = rest.split_once(' ')?;
    if checksum != fast_hex(&[key.as_bytes(), json.as_bytes()]) {
        return None;
    }
    serde_json::from_str(json).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> CacheEntry {
        CacheEntry {
            files: vec![(
                "a/index.html".into(),
                "0123456789abcdef0123456789abcdef".into(),
            )],
            code_blocks: 2,
            ..Default::default()
        }
    }

    fn file(cache: &PageCache) -> PathBuf {
        cache.dir.join(ENTRIES)
    }

    #[test]
    fn entries_round_trip_and_unused_ones_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let cache = PageCache::open(dir.path(), "g".repeat(32), true);
        let key = cache.key(1);
        assert!(cache.load(&key).is_none());
        cache.store(&key, entry());
        cache.finish(true);
        let next = PageCache::open(dir.path(), "g".repeat(32), true);
        assert_eq!(next.load(&key).unwrap().files, entry().files);
        // A build that does not use the entry: it is not saved again.
        let unused = PageCache::open(dir.path(), "g".repeat(32), true);
        unused.finish(true);
        assert!(
            PageCache::open(dir.path(), "g".repeat(32), true)
                .load(&key)
                .is_none()
        );
    }

    #[test]
    fn a_damaged_or_edited_entry_is_discarded() {
        let dir = tempfile::tempdir().unwrap();
        let open = || PageCache::open(dir.path(), "g".repeat(32), true);
        let cache = open();
        let (key, other) = (cache.key(1), cache.key(2));
        let edits: [&dyn Fn(&str) -> String; 5] = [
            &|t| t.replace("0123", "3210"),
            &|t| t[..t.len() - 3].to_string(),
            &|t| t.replace(MAGIC, "errata-cache-v2"),
            &|t| t.replacen(' ', "", 2),
            &|_| "not an entry at all".into(),
        ];
        for edit in edits {
            let cache = open();
            cache.store(&key, entry());
            cache.finish(true);
            let line = std::fs::read_to_string(file(&cache)).unwrap();
            std::fs::write(file(&cache), edit(line.trim_end())).unwrap();
            let cache = open();
            assert!(cache.load(&key).is_none(), "{}", edit(&line));
            cache.finish(true);
            assert!(open().load(&key).is_none(), "the bad entry is not kept");
        }
        // An intact entry moved to another key is not that key's entry.
        let cache = open();
        cache.store(&other, entry());
        cache.finish(true);
        let line = std::fs::read_to_string(file(&cache)).unwrap();
        std::fs::write(file(&cache), line.replace(&other, &key)).unwrap();
        assert!(open().load(&key).is_none());
    }

    #[test]
    fn generations_do_not_evict_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let stored = |global: &str| {
            let cache = PageCache::open(dir.path(), global.repeat(32), true);
            let key = cache.key(1);
            let had = cache.load(&key).is_some();
            cache.store(&key, entry());
            cache.finish(true);
            had
        };
        // build and serve take turns: each finds its own entries.
        assert!(!stored("b"));
        assert!(!stored("s"));
        assert!(stored("b"));
        assert!(stored("s"));
        // Only the most recently used generations are kept.
        for g in ["1", "2", "3", "4"] {
            stored(g);
        }
        let left = std::fs::read_dir(dir.path().join(".errata/cache"))
            .unwrap()
            .count();
        assert_eq!(left, GENERATIONS);
        assert!(!stored("b"), "the oldest generation was removed");
    }
}
