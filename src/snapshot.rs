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
/// (see the module doc for the one exception, and how it is avoided). It is
/// the file's [`FileStat`](crate::file_stat::FileStat), recorded as is.
pub type Fingerprint = crate::file_stat::FileStat;

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

/// One content file as a build records it, serialised from borrowed
/// parts (a record is written once per fresh file, without a copy of its
/// front matter).
#[derive(Debug, Serialize)]
struct RecordRef<'a> {
    rel: &'a str,
    fingerprint: Fingerprint,
    hash: &'a str,
    stored: &'a Stored,
}

/// A record as read back.
#[derive(Debug, Deserialize)]
struct Record {
    rel: String,
    hash: String,
    stored: Stored,
}

/// What a snapshot knows of one file: its fingerprint and text hash, the
/// record's line (as written to the file), and its parsed front matter
/// when a build of this process parsed or used it (`errata serve` keeps
/// it, so an unchanged file's record is not parsed again).
#[derive(Debug, Clone)]
pub struct Entry {
    fingerprint: Fingerprint,
    /// [`crate::hash::content_hash`] of the text (hex in the file).
    hash: u128,
    line: Arc<str>,
    stored: Option<Arc<Stored>>,
}

impl Entry {
    /// The entry of a file just read and parsed. With `keep` (a session,
    /// whose snapshot stays in memory and is never written), `stored` is
    /// kept and no line is made; otherwise the line is made, to be written.
    pub fn fresh(
        rel: &str,
        fingerprint: Fingerprint,
        text_hash: u128,
        stored: &Stored,
        keep: bool,
    ) -> Entry {
        let line = if keep {
            String::new()
        } else {
            serde_json::to_string(&RecordRef {
                rel,
                fingerprint,
                hash: &format!("{text_hash:032x}"),
                stored,
            })
            .unwrap_or_default()
        };
        Entry {
            fingerprint,
            hash: text_hash,
            line: Arc::from(line),
            stored: keep.then(|| Arc::new(stored.clone())),
        }
    }

    /// The parsed front matter (parsed from the line if need be), if the
    /// line is intact and is `rel`'s.
    fn parsed(&self, rel: &str) -> Option<Arc<Stored>> {
        if let Some(stored) = &self.stored {
            return Some(Arc::clone(stored));
        }
        let record: Record = serde_json::from_str(&self.line).ok()?;
        let hash = u128::from_str_radix(&record.hash, 16).ok();
        (record.rel == rel && hash == Some(self.hash)).then(|| Arc::new(record.stored))
    }
}

/// What the snapshot knows of an unchanged file: its entry, with the
/// front matter parsed.
#[derive(Debug, Clone)]
pub struct Known(Entry);

impl Known {
    /// The file's parsed front matter.
    pub fn stored(&self) -> &Stored {
        self.0.stored.as_deref().expect("a known entry is parsed")
    }

    /// The hash of the file's text.
    pub fn text_hash(&self) -> u128 {
        self.0.hash
    }

    /// The entry, to record again.
    pub fn into_entry(self) -> Entry {
        self.0
    }
}

/// A file's entry for the next snapshot, by its path relative to `content/`.
pub type Recorded = (String, Entry);

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

/// The records of one build, as kept in memory between the builds of one
/// process (`errata serve`), or read from the snapshot file.
#[derive(Debug)]
pub struct Memo {
    /// The snapshot file.
    file: PathBuf,
    /// The content folder the paths are relative to.
    content: PathBuf,
    /// The file system's time when the build that made them began: a
    /// record is trusted only for a file last changed before it.
    began: i128,
    records: HashMap<String, Entry>,
}

impl Memo {
    /// Writes the snapshot file (atomically, by rename); a failure costs
    /// the next build time only. Only for records that have their lines
    /// (see [`Entry::fresh`]).
    fn write(&self) {
        let mut lines: Vec<(&String, &Arc<str>)> =
            self.records.iter().map(|(rel, e)| (rel, &e.line)).collect();
        lines.sort_unstable();
        let header = serde_json::to_string(&header(&self.content, self.began)).unwrap_or_default();
        let lines = std::iter::once(header.as_str()).chain(lines.iter().map(|(_, line)| &***line));
        let _ = crate::state_file::write_lines(&self.file, lines);
    }

    /// Reads the snapshot file, if its header fits this executable and
    /// `content`.
    fn read(file: &Path, content: &Path) -> Option<Memo> {
        let text = std::fs::read_to_string(file).ok()?;
        let (head, body) = text.split_once('\n')?;
        let head: Header = serde_json::from_str(head).ok()?;
        if head != header(content, head.began) {
            return None;
        }
        let lines: Vec<&str> = body.lines().collect();
        let records = lines
            .par_iter()
            .map(|line| {
                let head = serde_json::from_str::<Head>(line).ok()?;
                let entry = Entry {
                    fingerprint: head.fingerprint,
                    hash: u128::from_str_radix(&head.hash, 16).ok()?,
                    line: Arc::from(*line),
                    stored: None,
                };
                Some((head.rel, entry))
            })
            .collect::<Option<HashMap<_, _>>>()?;
        Some(Memo {
            file: file.to_path_buf(),
            content: content.to_path_buf(),
            began: head.began,
            records,
        })
    }
}

fn header(content: &Path, began: i128) -> Header {
    Header {
        format: FORMAT.into(),
        errata: crate::hash::executable_identity(),
        content: content.to_path_buf(),
        began,
    }
}

/// The source snapshot for one build: what the previous one recorded,
/// and the time this one began.
pub struct Snapshot {
    file: PathBuf,
    content: PathBuf,
    /// The file system's time now, from the probe; `None` when `.errata/`
    /// cannot be written (then nothing is trusted or saved).
    began: Option<i128>,
    /// The previous build's records.
    previous: Option<Arc<Memo>>,
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
    /// `content`: the previous build's records, from `previous` (the same
    /// process's last build) or else from the file. With `write`, notes
    /// the time this build begins (so that [`Snapshot::finish`] can record
    /// it); without, nothing is written and nothing saved. Anything wrong
    /// with the file leaves it empty.
    pub fn open_after(
        root: &Path,
        content: &Path,
        write: bool,
        previous: Option<Arc<Memo>>,
    ) -> Snapshot {
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
        let file = dir.join("sources.jsonl");
        let previous = match previous {
            Some(memo) if memo.content == content && memo.file == file => Some(memo),
            _ => Memo::read(&file, content).map(Arc::new),
        };
        Snapshot {
            file,
            content: content.to_path_buf(),
            began,
            previous,
        }
    }

    /// What the previous build knew of `rel`, if the file still has
    /// `fingerprint`, changed before that build began, and its record is
    /// intact.
    pub fn unchanged(&self, rel: &str, fingerprint: &Fingerprint) -> Option<Known> {
        let memo = self.previous.as_ref()?;
        let entry = memo.records.get(rel)?;
        if entry.fingerprint != *fingerprint || fingerprint.latest() >= memo.began {
            return None;
        }
        Some(Known(Entry {
            stored: Some(entry.parsed(rel)?),
            ..entry.clone()
        }))
    }

    /// This build's records (`records`, one per file parsed), kept for
    /// the next build. With `persist`, the snapshot file is written too,
    /// unless it would hold the lines it holds. `None` when nothing may be
    /// saved (see [`Snapshot::open_after`]).
    pub fn finish(self, records: Vec<Recorded>, persist: bool) -> Option<Arc<Memo>> {
        let began = self.began?;
        let same = self.previous.as_ref().is_some_and(|memo| {
            records.len() == memo.records.len()
                && records.iter().all(|(rel, entry)| {
                    memo.records
                        .get(rel)
                        .is_some_and(|old| Arc::ptr_eq(&old.line, &entry.line))
                })
        });
        let memo = Memo {
            file: self.file,
            content: self.content,
            began,
            records: records.into_iter().collect(),
        };
        if persist && !same {
            memo.write();
        }
        Some(Arc::new(memo))
    }
}
