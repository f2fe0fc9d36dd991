//! Stage 2, `parse`: split and deserialise front matter, in parallel.

use rayon::prelude::*;

use crate::diagnostics::{Diagnostic, LineIndex};
use crate::front_matter::{self, FrontMatterError, PageFrontMatter, SectionFrontMatter};
use crate::load::{SourceFile, SourceKind};

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
        match front_matter::split(&self.source.text) {
            Ok(split) => front_matter::Spans::of(split.yaml, split.yaml_offset),
            Err(_) => front_matter::Spans::default(),
        }
    }

    /// The 1-based line and column of the front-matter key at `path`
    /// (`template`, `sponsored[0].url`), if it is written.
    pub fn key_at(&self, path: &str) -> Option<(usize, usize)> {
        let offset = self.spans().key(path)?;
        Some(LineIndex::new(&self.source.text).line_col(offset))
    }

    /// The 1-based line and column of the front-matter value at `path`
    /// (`aliases[1]`, `patterns[0]`), if it is written.
    pub fn value_at(&self, path: &str) -> Option<(usize, usize)> {
        let offset = self.spans().value(path)?;
        Some(LineIndex::new(&self.source.text).line_col(offset))
    }
}

/// Front matter that can mark its file a draft.
trait Draft {
    fn draft(&self) -> bool;
}

impl Draft for PageFrontMatter {
    fn draft(&self) -> bool {
        self.draft
    }
}

impl Draft for SectionFrontMatter {
    fn draft(&self) -> bool {
        self.draft
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
    Skipped,
}

/// Parses every file; drafts are dropped unless `drafts` is set.
pub fn parse(files: Vec<SourceFile>, drafts: bool) -> Parsed {
    let results: Vec<(One, Vec<Diagnostic>)> = files
        .into_par_iter()
        .map(|file| parse_one(file, drafts))
        .collect();
    let mut parsed = Parsed::default();
    for (one, diagnostics) in results {
        parsed.diagnostics.extend(diagnostics);
        match one {
            One::Page(p) => parsed.pages.push(*p),
            One::Section(s) => parsed.sections.push(s),
            One::Broken(rel) => parsed.broken.push(rel),
            One::Skipped => {}
        }
    }
    parsed
}

fn parse_one(source: SourceFile, drafts: bool) -> (One, Vec<Diagnostic>) {
    let lines = LineIndex::new(&source.text);
    let located = |e: FrontMatterError| {
        let (line, col) = lines.line_col(e.offset);
        let d = Diagnostic::error(&source.path, line, col, e.message);
        match e.help {
            Some(help) => d.with_help(help),
            None => d,
        }
    };
    // A NUL is never text: the file is binary or damaged.
    if let Some(at) = source.text.find('\0') {
        let d = located(FrontMatterError {
            offset: at,
            message: "file contains a NUL byte".into(),
            help: Some("the file looks binary or damaged; remove the NUL (U+0000)".into()),
        });
        let broken = BrokenFile {
            source,
            body_offset: None,
        };
        return (One::Broken(broken), vec![d]);
    }
    let split = match front_matter::split(&source.text) {
        Ok(split) => split,
        Err(e) => {
            let d = located(e);
            let broken = BrokenFile {
                source,
                body_offset: None,
            };
            return (One::Broken(broken), vec![d]);
        }
    };
    let body_offset = split.body_offset;
    let mut diagnostics = Vec::new();
    /// Parses typed front matter; `Ok(None)` for a draft that is skipped.
    fn typed<F: serde::de::DeserializeOwned + Draft>(
        split: &front_matter::Split<'_>,
        drafts: bool,
    ) -> Result<Option<F>, Vec<FrontMatterError>> {
        front_matter::parse_all::<F>(split).map(|front| (drafts || !front.draft()).then_some(front))
    }
    enum Front {
        Page(Box<PageFrontMatter>),
        Section(SectionFrontMatter),
    }
    let front = match source.kind {
        SourceKind::Page => {
            typed::<PageFrontMatter>(&split, drafts).map(|f| f.map(|f| Front::Page(Box::new(f))))
        }
        SourceKind::Section => {
            typed::<SectionFrontMatter>(&split, drafts).map(|f| f.map(Front::Section))
        }
    };
    let one = match front {
        Ok(None) => One::Skipped,
        Err(all) => {
            diagnostics.extend(all.into_iter().map(located));
            One::Broken(BrokenFile {
                source,
                body_offset: Some(body_offset),
            })
        }
        Ok(Some(Front::Page(front))) => {
            if let Some(description) = &front.description {
                let count = description.chars().count();
                if count > DESCRIPTION_LIMIT {
                    let offset = front_matter::Spans::of(split.yaml, split.yaml_offset)
                        .key("description")
                        .unwrap_or(0);
                    let (line, col) = lines.line_col(offset);
                    diagnostics.push(Diagnostic::warning(
                        &source.path,
                        line,
                        col,
                        format!("description is {count} characters; search engines cut it after about {DESCRIPTION_LIMIT}"),
                    ));
                }
            }
            One::Page(Box::new(ParsedFile {
                source,
                front: *front,
                body_offset,
            }))
        }
        Ok(Some(Front::Section(front))) => One::Section(ParsedFile {
            source,
            front,
            body_offset,
        }),
    };
    (one, diagnostics)
}
