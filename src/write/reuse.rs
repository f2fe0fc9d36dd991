//! Reusing the previous outputs instead of writing every file again.
//!
//! After a swap, the output it replaced is kept beside the new one as the
//! *spare* (`.<output>.spare`), and the next build stages into it: its
//! folders already exist, and each of its files whose bytes the build would
//! write again is left alone. Only what changed is written; files and
//! folders the new site no longer has are removed before the swap. So a
//! rebuild neither creates nor deletes thousands of folders (deleting one
//! can cost milliseconds on a file system mounted with `discard`).
//!
//! What a folder holds is known from its *manifest*, kept in the site's
//! `.errata/outputs/`: every file errata wrote into it, with the hash of
//! its bytes and the file's inode, length and modification time as written.
//! A file whose inode, length or time differ (edited, replaced or touched
//! while it was the live output) is treated as unknown and written again.
//! Anything in the spare that is neither a plain file nor a folder (a
//! symlink someone made) is removed before anything is written.
//!
//! A cache hit needs no HTML: the page's files are kept in the spare if it
//! holds them, or else carried over from the current output by a hard link
//! (its manifest and a fresh `lstat` prove the bytes). Since files may be
//! shared between the output and the spare that way, a file is never
//! rewritten in place unless it has one link.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::fs_error::{At, FsError};

/// What identifies a file's bytes without reading them, for a file errata
/// wrote: its inode, length and modification time. (Not the change time:
/// a hard link changes it.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Sig {
    ino: u64,
    len: u64,
    mtime: i128,
}

impl Sig {
    pub(super) fn of(meta: &fs::Metadata) -> Sig {
        let stat = crate::file_stat::FileStat::of(meta);
        Sig {
            ino: stat.inode,
            len: stat.len,
            mtime: stat.modified,
        }
    }
}

/// Links to a file's inode (1 where the OS does not say).
fn links(meta: &fs::Metadata) -> u64 {
    #[cfg(unix)]
    {
        std::os::unix::fs::MetadataExt::nlink(meta)
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        1
    }
}

/// A folder's identity across renames: its inode (`None` where the OS has
/// none; folders are then never reused).
pub(super) fn folder_id(dir: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        fs::symlink_metadata(dir).ok().map(|m| m.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

/// One file of an output folder as errata wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Entry {
    pub(super) hash: u128,
    pub(super) sig: Sig,
}

/// Every file errata wrote into one output folder, by output path.
#[derive(Debug, Default)]
pub(super) struct Manifest(pub(super) HashMap<String, Entry>);

const MANIFEST_MAGIC: &str = "errata-output-manifest-v1";

impl Manifest {
    /// The manifest in `file`; empty when there is none or it is damaged.
    pub(super) fn load(file: &Path) -> Manifest {
        let Ok(text) = fs::read_to_string(file) else {
            return Manifest::default();
        };
        let mut lines = text.split('\n');
        if lines.next() != Some(MANIFEST_MAGIC) {
            return Manifest::default();
        }
        let mut map = HashMap::new();
        for line in lines.filter(|l| !l.is_empty()) {
            let mut parts = line.splitn(5, ' ');
            let parsed = (|| {
                let hash = u128::from_str_radix(parts.next()?, 16).ok()?;
                let ino = parts.next()?.parse().ok()?;
                let len = parts.next()?.parse().ok()?;
                let mtime = parts.next()?.parse().ok()?;
                let rel = parts.next()?.to_string();
                Some((
                    rel,
                    Entry {
                        hash,
                        sig: Sig { ino, len, mtime },
                    },
                ))
            })();
            match parsed {
                Some((rel, entry)) => {
                    map.insert(rel, entry);
                }
                None => return Manifest::default(),
            }
        }
        Manifest(map)
    }

    /// Writes the manifest to `file` (through a temporary file and a rename).
    pub(super) fn save(&self, file: &Path) -> io::Result<()> {
        // A name with a line break is not recorded: always written again.
        let lines = self
            .0
            .iter()
            .filter(|(rel, _)| !rel.contains(['\n', '\r']))
            .map(|(rel, e)| {
                format!(
                    "{:032x} {} {} {} {rel}",
                    e.hash, e.sig.ino, e.sig.len, e.sig.mtime
                )
            });
        if let Some(parent) = file.parent() {
            fs::create_dir_all(parent)?;
        }
        crate::state_file::write_lines(
            file,
            std::iter::once(MANIFEST_MAGIC.to_string()).chain(lines),
        )
    }
}

/// Where the manifests of the output folder `target` live: `state` (the
/// site's `.errata/outputs/`), one file per folder, named after the
/// output's path and the folder's identity.
#[derive(Debug, Clone)]
pub(super) struct Manifests {
    state: PathBuf,
    prefix: String,
}

impl Manifests {
    pub(super) fn new(state: &Path, target: &Path) -> Manifests {
        let key = crate::hash::fast_hex(&[target.to_string_lossy().as_bytes()]);
        Manifests {
            state: state.to_path_buf(),
            prefix: format!("{}-", &key[..16]),
        }
    }

    pub(super) fn file(&self, id: u64) -> PathBuf {
        self.state.join(format!("{}{id}.manifest", self.prefix))
    }

    /// Removes this output's manifests other than those of folders `keep`.
    pub(super) fn prune(&self, keep: &[u64]) {
        let Ok(entries) = fs::read_dir(&self.state) else {
            return;
        };
        let kept: Vec<String> = keep
            .iter()
            .map(|id| format!("{}{id}.manifest", self.prefix))
            .collect();
        // Another build may be writing its manifest (`….tmp-<pid>`) right
        // now: only one a killed build left, an hour old, is removed.
        let stale = |entry: &fs::DirEntry| {
            entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age.as_secs() > 3600))
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(rest) = name.strip_prefix(&self.prefix) else {
                continue;
            };
            let old_manifest = rest.ends_with(".manifest") && !kept.contains(&name);
            if old_manifest || (rest.contains(".tmp-") && stale(&entry)) {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}

/// A file found in a reused folder.
#[derive(Debug, Clone, Copy)]
pub(super) struct Found {
    pub(super) sig: Sig,
    /// Its bytes' hash, when its manifest entry matches it.
    pub(super) known: Option<u128>,
    /// More than one link: never rewritten in place.
    pub(super) shared: bool,
}

/// What a reused folder holds: its files and folders (the root is `""`).
#[derive(Debug, Default)]
pub(super) struct Tree {
    pub(super) files: HashMap<String, Found>,
    pub(super) dirs: HashSet<String>,
}

/// Walks `root` (in parallel), removing whatever is neither a plain file
/// nor a folder, and matches files against `manifest`. `skip` (the marker)
/// is left out of the result.
pub(super) fn scan(root: &Path, manifest: &Manifest, skip: &str) -> Result<Tree, FsError> {
    let mut tree = Tree::default();
    tree.dirs.insert(String::new());
    let (files, dirs) = scan_dir(root, "")?;
    for (rel, meta) in files {
        if rel == skip {
            continue;
        }
        let sig = Sig::of(&meta);
        let known = manifest
            .0
            .get(&rel)
            .filter(|e| e.sig == sig)
            .map(|e| e.hash);
        let shared = links(&meta) > 1;
        tree.files.insert(rel, Found { sig, known, shared });
    }
    tree.dirs.extend(dirs);
    Ok(tree)
}

type Scanned = (Vec<(String, fs::Metadata)>, Vec<String>);

fn scan_dir(root: &Path, rel: &str) -> Result<Scanned, FsError> {
    let dir = if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    };
    let mut files = Vec::new();
    let mut subdirs = Vec::new();
    for entry in fs::read_dir(&dir).at(&dir)? {
        let entry = entry.at(&dir)?;
        let Ok(name) = entry.file_name().into_string() else {
            // Not a name errata writes: removed.
            remove_any(&entry.path()).at(&entry.path())?;
            continue;
        };
        let child = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        let kind = entry.file_type().at(&entry.path())?;
        if kind.is_dir() {
            subdirs.push(child);
        } else if kind.is_file() {
            files.push((child, entry.metadata().at(&entry.path())?));
        } else {
            remove_any(&entry.path()).at(&entry.path())?;
        }
    }
    let below: Vec<Scanned> = subdirs
        .par_iter()
        .map(|d| scan_dir(root, d))
        .collect::<Result<_, FsError>>()?;
    for (f, d) in below {
        files.extend(f);
        subdirs.extend(d);
    }
    Ok((files, subdirs))
}

/// Removes a file, symlink or folder (a symlink is removed, never followed).
pub(super) fn remove_any(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Every folder that holds one of `files` (their ancestors; the root is `""`).
pub(super) fn needed_dirs<'a>(files: impl Iterator<Item = &'a String>) -> HashSet<String> {
    let mut dirs = HashSet::new();
    dirs.insert(String::new());
    for rel in files {
        let mut at = rel.as_str();
        while let Some((parent, _)) = at.rsplit_once('/') {
            if !dirs.insert(parent.to_string()) {
                break;
            }
            at = parent;
        }
    }
    dirs
}
