//! Stage 2, `parse`: split and deserialise front matter, in parallel.

use rayon::prelude::*;

use crate::diagnostics::{Diagnostic, LineIndex};
use crate::front_matter::{self, FrontMatterError, PageFrontMatter, SectionFrontMatter};
use crate::load::{Loaded, SourceFile, SourceKind};
use crate::snapshot::{Entry, Recorded, Stored};

/// Longest meta description search engines show in full.
pub const DESCRIPTION_LIMIT: usize = 160;

/// A content file with typed front matter.
#[derive(Debug, Clone)]
pub struct ParsedFile<F> {
    /// The file it came from.
    pub source: SourceFile,
    /// Its front matter.
    pub front: F,
    /// Byte offset of the Markdown body in `source.text`.
    pub body_offset: usize,
}

/// A triage page.
pub type ParsedPage = ParsedFile<PageFrontMatter>;
/// A section (`_index.md`).
pub type ParsedSection = ParsedFile<SectionFrontMatter>;

impl<F> ParsedFile<F> {
    /// Where each front-matter value is written, read again from the file
    /// (only when a problem needs a location).
    pub fn spans(&self) -> front_matter::Spans {
        spans_in(&self.source.text())
    }

    /// The 1-based line and column of the front-matter key at `path`
    /// (`template`, `sponsored[0].url`), if it is written.
    pub fn key_at(&self, path: &str) -> Option<(usize, usize)> {
        let text = self.source.text();
        let offset = spans_in(&text).key(path)?;
        Some(LineIndex::new(&text).line_col(offset))
    }

    /// The 1-based line and column of the front-matter value at `path`
    /// (`aliases[1]`, `patterns[0]`), if it is written.
    pub fn value_at(&self, path: &str) -> Option<(usize, usize)> {
        let text = self.source.text();
        let offset = spans_in(&text).value(path)?;
        Some(LineIndex::new(&text).line_col(offset))
    }
}

/// Where each front-matter value of `text` is written.
fn spans_in(text: &str) -> front_matter::Spans {
    match front_matter::split(text) {
        Ok(split) => front_matter::Spans::of(split.yaml, split.yaml_offset),
        Err(_) => front_matter::Spans::default(),
    }
}

/// Everything the parse stage produced.
#[derive(Debug, Default)]
pub struct Parsed {
    /// Pages, in load order.
    pub pages: Vec<ParsedPage>,
    /// Sections, in load order.
    pub sections: Vec<ParsedSection>,
    /// Errors and warnings.
    pub diagnostics: Vec<Diagnostic>,
    /// Files whose front matter is broken (their errors are in
    /// `diagnostics`). They exist, so links to them are not reported as
    /// missing, and their bodies are still checked.
    pub broken: Vec<BrokenFile>,
    /// Drafts left out (paths relative to `content/`): a link to one is
    /// told apart from a link to nothing.
    pub drafts: Vec<String>,
    /// The source snapshot's records of the files parsed (by path
    /// relative to `content/`).
    pub records: Vec<Recorded>,
}

/// A content file whose front matter could not be parsed.
#[derive(Debug, Clone)]
pub struct BrokenFile {
    /// The file.
    pub source: SourceFile,
    /// Byte offset of its Markdown body, when the front matter was at least
    /// closed (so the body can still be checked for link problems).
    pub body_offset: Option<usize>,
}

enum One {
    Page(Box<ParsedPage>),
    Section(ParsedSection),
    Broken(BrokenFile),
    /// A draft left out: its path relative to `content/`.
    Skipped(String),
}

/// Parses files whose text is at hand; drafts are dropped unless `drafts`
/// is set.
pub fn parse(files: Vec<SourceFile>, drafts: bool) -> Parsed {
    parse_loaded(files.into_iter().map(Loaded::Held).collect(), drafts, false)
}

/// Parses loaded files: a file the source snapshot knows unchanged takes
/// its front matter from there, any other is read now (and dropped once
/// parsed). [`Parsed::records`] holds what the next snapshot is to record;
/// with `keep`, a freshly parsed file's record holds its front matter (for
/// a next build in the same process).
pub fn parse_loaded(files: Vec<Loaded>, drafts: bool, keep: bool) -> Parsed {
    let results: Vec<(Option<One>, Vec<Diagnostic>, Option<Recorded>)> = files
        .into_par_iter()
        .map(|loaded| {
            let (file, stored, entry) = match loaded {
                Loaded::Known(file, known) => {
                    (file, Ok(known.stored().clone()), Some(known.into_entry()))
                }
                Loaded::Held(file) => {
                    let mut stored = parse_front(&file, &file.text());
                    // A file on disk, read again since it was parsed
                    // elsewhere, may have changed.
                    if file.changed_during_build() {
                        stored = Err((None, vec![file.changed_error()]));
                    }
                    (file, stored, None)
                }
                Loaded::Unread(unread) => {
                    let fingerprint = unread.fingerprint;
                    let (file, text) = match unread.read() {
                        Ok(read) => read,
                        Err(d) => return (None, vec![d], None),
                    };
                    let stored = parse_front(&file, &text);
                    drop(text);
                    // Only a file read with a fingerprint is recorded.
                    let entry = match (&stored, fingerprint) {
                        (Ok(stored), Some(fingerprint)) => Some(Entry::fresh(
                            &file.rel,
                            fingerprint,
                            file.text_hash(),
                            stored,
                            keep,
                        )),
                        _ => None,
                    };
                    (file, stored, entry)
                }
            };
            let rel = file.rel.clone();
            let (one, diagnostics) = finish(file, stored, drafts);
            (Some(one), diagnostics, entry.map(|entry| (rel, entry)))
        })
        .collect();
    let mut parsed = Parsed::default();
    for (one, diagnostics, record) in results {
        parsed.diagnostics.extend(diagnostics);
        parsed.records.extend(record);
        match one {
            Some(One::Page(p)) => parsed.pages.push(*p),
            Some(One::Section(s)) => parsed.sections.push(s),
            Some(One::Broken(rel)) => parsed.broken.push(rel),
            Some(One::Skipped(rel)) => parsed.drafts.push(rel),
            None => {}
        }
    }
    parsed
}

/// A file whose front matter did not parse: the body offset, when the front
/// matter was at least closed, and every problem.
type Broken = (Option<usize>, Vec<Diagnostic>);

/// Reads the front matter of `source`, whose text is `text` (drafts
/// included).
fn parse_front(source: &SourceFile, text: &str) -> Result<Stored, Broken> {
    let lines = LineIndex::new(text);
    let located = |e: FrontMatterError| {
        let (line, col) = lines.line_col(e.offset);
        let d = Diagnostic::error(&source.path, line, col, e.message);
        match e.help {
            Some(help) => d.with_help(help),
            None => d,
        }
    };
    // A NUL is never text: the file is binary or damaged.
    if let Some(at) = text.find('\0') {
        let d = located(FrontMatterError {
            offset: at,
            message: "file contains a NUL byte".into(),
            help: Some("the file looks binary or damaged; remove the NUL (U+0000)".into()),
        });
        return Err((None, vec![d]));
    }
    let split = front_matter::split(text).map_err(|e| (None, vec![located(e)]))?;
    let body_offset = split.body_offset;
    let broken =
        |all: Vec<FrontMatterError>| (Some(body_offset), all.into_iter().map(located).collect());
    match source.kind {
        SourceKind::Page => {
            let front = front_matter::parse_all::<PageFrontMatter>(&split).map_err(broken)?;
            let mut warnings = Vec::new();
            if let Some(description) = &front.description {
                let count = description.chars().count();
                if count > DESCRIPTION_LIMIT {
                    let offset = front_matter::Spans::of(split.yaml, split.yaml_offset)
                        .key("description")
                        .unwrap_or(0);
                    let (line, col) = lines.line_col(offset);
                    warnings.push(Diagnostic::warning(
                        &source.path,
                        line,
                        col,
                        format!("description is {count} characters; search engines cut it after about {DESCRIPTION_LIMIT}"),
                    ));
                }
            }
            Ok(Stored::Page {
                front: Box::new(front),
                body_offset,
                warnings,
            })
        }
        SourceKind::Section => {
            let front = front_matter::parse_all::<SectionFrontMatter>(&split).map_err(broken)?;
            Ok(Stored::Section {
                front,
                body_offset,
                warnings: Vec::new(),
            })
        }
    }
}

/// The parsed file, with drafts dropped unless `drafts` is set.
fn finish(
    source: SourceFile,
    stored: Result<Stored, Broken>,
    drafts: bool,
) -> (One, Vec<Diagnostic>) {
    match stored {
        Err((body_offset, diagnostics)) => (
            One::Broken(BrokenFile {
                source,
                body_offset,
            }),
            diagnostics,
        ),
        Ok(stored) if stored.draft() && !drafts => (One::Skipped(source.rel), Vec::new()),
        Ok(Stored::Page {
            front,
            body_offset,
            warnings,
        }) => {
            let front = *front;
            let page = ParsedFile {
                source,
                front,
                body_offset,
            };
            (One::Page(Box::new(page)), warnings)
        }
        Ok(Stored::Section {
            front,
            body_offset,
            warnings,
        }) => (
            One::Section(ParsedFile {
                source,
                front,
                body_offset,
            }),
            warnings,
        ),
    }
}
