//! The source snapshot in `.errata/sources.jsonl`: what the last build
//! learned of each content file, so the next one reads and parses only the
//! files that changed.
//!
//! A record holds a file's fingerprint (size, modification and change
//! times, inode), the hash of its text, and its parsed front matter with
//! the warnings parsing gave. A file whose fingerprint is unchanged is not
//! read: its front matter comes from the record, and its text is read only
//! if something needs it (a page whose rendering is not cached). When that
//! late read finds text with another hash, the file changed during the
//! build, and the build fails rather than mix two versions.
//!
//! As in git's index, a fingerprint is trusted only when the file was last
//! modified strictly before the snapshot's build began (by the file
//! system's own clock, read from a probe file): a file written twice within
//! one clock tick, same size, could otherwise look unchanged. Such files
//! are simply read again. Files with broken front matter are never
//! recorded. Any damage to the snapshot file makes it ignored.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::diagnostics::Diagnostic;
use crate::front_matter::{PageFrontMatter, SectionFrontMatter};

/// Where a file's identity is read from: size, times and inode. Two
/// fingerprints that are equal mean the file was not written in between
/// (see the module doc for the one exception, and how it is avoided).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    len: u64,
    /// Modification time, nanoseconds since the epoch.
    modified: i128,
    /// Status change time (Unix), nanoseconds since the epoch; 0 elsewhere.
    changed: i128,
    inode: u64,
    device: u64,
}

impl Fingerprint {
    /// The fingerprint in `meta`.
    pub fn of(meta: &std::fs::Metadata) -> Fingerprint {
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128);
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Fingerprint {
                len: meta.len(),
                modified,
                changed: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
                inode: meta.ino(),
                device: meta.dev(),
            }
        }
        #[cfg(not(unix))]
        Fingerprint {
            len: meta.len(),
            modified,
            changed: 0,
            inode: 0,
            device: 0,
        }
    }

    /// The later of the modification and change times.
    fn latest(&self) -> i128 {
        self.modified.max(self.changed)
    }
}

/// A file's parsed front matter, as the parse stage made it (before drafts
/// are dropped, so `--drafts` builds share it).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Stored {
    /// A triage page.
    Page {
        /// Its front matter.
        front: Box<PageFrontMatter>,
        /// Byte offset of the body.
        body_offset: usize,
        /// Warnings parsing gave.
        warnings: Vec<Diagnostic>,
    },
    /// A section.
    Section {
        /// Its front matter.
        front: SectionFrontMatter,
        /// Byte offset of the body.
        body_offset: usize,
        /// Warnings parsing gave.
        warnings: Vec<Diagnostic>,
    },
}

impl Stored {
    /// Whether the file is a draft.
    pub fn draft(&self) -> bool {
        match self {
            Stored::Page { front, .. } => front.draft,
            Stored::Section { front, .. } => front.draft,
        }
    }
}

/// One content file as the last build left it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// Path relative to `content/`, `/`-separated.
    pub rel: String,
    /// The file's fingerprint when it was read.
    pub fingerprint: Fingerprint,
    /// [`crate::hash::content_hash`] of its text, as hex.
    pub hash: String,
    /// Its parsed front matter.
    pub stored: Stored,
}

impl Record {
    /// The record as one line of the snapshot file.
    pub fn line(&self) -> Arc<str> {
        Arc::from(serde_json::to_string(self).unwrap_or_default())
    }

    /// The text hash.
    pub fn text_hash(&self) -> Option<u128> {
        u128::from_str_radix(&self.hash, 16).ok()
    }
}

/// The first line of the snapshot file: what the records are valid for.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Header {
    format: String,
    /// The errata executable (a new build of errata may parse differently).
    errata: String,
    /// The content folder the paths are relative to.
    content: PathBuf,
    /// The file system's time when the build that wrote it began.
    began: i128,
}

const FORMAT: &str = "errata-sources-v1";

/// The snapshot file, the probe file and the time this build began.
pub struct Snapshot {
    file: PathBuf,
    content: PathBuf,
    /// The file system's time now, from the probe; `None` when `.errata/`
    /// cannot be written (then nothing is trusted or saved).
    began: Option<i128>,
    /// By path: the fingerprint and text hash (read when the snapshot
    /// opens) and the whole record's line (parsed only for a file found
    /// unchanged, by the thread that loads it).
    records: HashMap<String, (Head, Arc<str>)>,
}

/// The part of a record read when the snapshot opens.
#[derive(Debug, Deserialize)]
struct Head {
    rel: String,
    fingerprint: Fingerprint,
    hash: String,
}

impl Snapshot {
    /// Opens the snapshot of the site at `root` whose content is in
    /// `content`. With `write`, notes the time this build begins (so that
    /// [`Snapshot::save`] can record it); without, nothing is written and
    /// nothing saved. Anything wrong with the file leaves it empty.
    pub fn open(root: &Path, content: &Path, write: bool) -> Snapshot {
        let dir = root.join(".errata");
        let probe = dir.join("sources.probe");
        let began = write
            .then(|| {
                std::fs::create_dir_all(&dir)
                    .and_then(|()| std::fs::write(&probe, b""))
                    .and_then(|()| std::fs::metadata(&probe))
                    .ok()
            })
            .flatten()
            .map(|meta| Fingerprint::of(&meta).latest());
        let mut snapshot = Snapshot {
            file: dir.join("sources.jsonl"),
            content: content.to_path_buf(),
            began,
            records: HashMap::new(),
        };
        snapshot.records = snapshot.read().unwrap_or_default();
        snapshot
    }

    /// The records of the file, if its header fits this build.
    fn read(&self) -> Option<HashMap<String, (Head, Arc<str>)>> {
        let text = std::fs::read_to_string(&self.file).ok()?;
        let (header, body) = text.split_once('\n')?;
        let header: Header = serde_json::from_str(header).ok()?;
        let expected = self.header(header.began);
        if header != expected {
            return None;
        }
        let lines: Vec<&str> = body.lines().collect();
        let records: Vec<(Head, Arc<str>)> = lines
            .par_iter()
            .map(|line| Some((serde_json::from_str::<Head>(line).ok()?, Arc::from(*line))))
            .collect::<Option<_>>()?;
        Some(
            records
                .into_iter()
                // Trusted only if written before that build began.
                .filter(|(head, _)| head.fingerprint.latest() < header.began)
                .map(|(head, line)| (head.rel.clone(), (head, line)))
                .collect(),
        )
    }

    fn header(&self, began: i128) -> Header {
        Header {
            format: FORMAT.into(),
            errata: crate::hash::executable_identity(),
            content: self.content.clone(),
            began,
        }
    }

    /// The record of `rel` and the line it was read from, if the file
    /// still has `fingerprint` (and the line is intact).
    pub fn unchanged(&self, rel: &str, fingerprint: &Fingerprint) -> Option<(Record, &Arc<str>)> {
        let (head, line) = self.records.get(rel)?;
        if head.fingerprint != *fingerprint {
            return None;
        }
        let record: Record = serde_json::from_str(line).ok()?;
        (record.rel == head.rel && record.hash == head.hash).then_some((record, line))
    }

    /// Writes the snapshot of this build: `lines` are the records (each as
    /// [`Record::line`], or the line it was read from). Skipped when the
    /// records are the ones read; a failure costs the next build time only.
    pub fn save(&self, mut lines: Vec<(String, Arc<str>)>) {
        let Some(began) = self.began else { return };
        let same = lines.len() == self.records.len()
            && lines.iter().all(|(rel, line)| {
                self.records
                    .get(rel)
                    .is_some_and(|(_, old)| Arc::ptr_eq(old, line) || old == line)
            });
        if same {
            return;
        }
        lines.sort_unstable();
        let header = serde_json::to_string(&self.header(began)).unwrap_or_default();
        let mut text = String::with_capacity(lines.iter().map(|(_, l)| l.len() + 1).sum());
        text.push_str(&header);
        text.push('\n');
        for (_, line) in &lines {
            text.push_str(line);
            text.push('\n');
        }
        let tmp = self
            .file
            .with_extension(format!("tmp-{}", std::process::id()));
        if std::fs::write(&tmp, text).is_ok() {
            let _ = std::fs::rename(&tmp, &self.file);
        }
    }
}
