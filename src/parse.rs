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
    /// The Markdown body.
    pub fn body(&self) -> &str {
        &self.source.text[self.body_offset..]
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
}

enum One {
    Page(Box<ParsedPage>),
    Section(ParsedSection),
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
    let split = match front_matter::split(&source.text) {
        Ok(split) => split,
        Err(e) => return (One::Skipped, vec![located(e)]),
    };
    let body_offset = split.body_offset;
    let mut diagnostics = Vec::new();
    /// Parses typed front matter; `Ok(None)` for a draft that is skipped.
    fn typed<F: serde::de::DeserializeOwned + Draft>(
        split: &front_matter::Split<'_>,
        drafts: bool,
    ) -> Result<Option<F>, FrontMatterError> {
        front_matter::parse::<F>(split).map(|front| (drafts || !front.draft()).then_some(front))
    }
    let one = match source.kind {
        SourceKind::Page => match typed::<PageFrontMatter>(&split, drafts) {
            Ok(Some(front)) => {
                if let Some(description) = &front.description {
                    let count = description.chars().count();
                    if count > DESCRIPTION_LIMIT {
                        let offset = split
                            .yaml
                            .find("description:")
                            .map_or(0, |i| split.yaml_offset + i);
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
                    front,
                    body_offset,
                }))
            }
            Ok(None) => One::Skipped,
            Err(e) => {
                diagnostics.push(located(e));
                One::Skipped
            }
        },
        SourceKind::Section => match typed::<SectionFrontMatter>(&split, drafts) {
            Ok(Some(front)) => One::Section(ParsedFile {
                source,
                front,
                body_offset,
            }),
            Ok(None) => One::Skipped,
            Err(e) => {
                diagnostics.push(located(e));
                One::Skipped
            }
        },
    };
    (one, diagnostics)
}
