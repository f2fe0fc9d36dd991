//! Located problems: every content error and warning carries the file, line
//! and column it refers to, computed from byte offsets in the original file.

use std::fmt;
use std::path::{Path, PathBuf};

/// How bad a problem is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Severity {
    /// The build fails.
    Error,
    /// Reported, the build goes on.
    Warning,
    /// Information that never fails a run, not even with
    /// `--warnings-as-errors` (a link skipped or that could not be verified).
    Note,
}

/// One problem in one file, at a 1-based line and column.
///
/// Columns count characters, not bytes, so they match what an editor shows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The file, relative to the site root where possible.
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// What is wrong.
    pub message: String,
    /// How to fix it, when we know.
    pub help: Option<String>,
    /// A stable machine-readable kind (`external-broken`...), for the
    /// problems whose kind a report must carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// `Diagnostic::error`, `::warning` and `::note`: one constructor each,
/// the same but for the severity.
macro_rules! constructors {
    ($($(#[$doc:meta])* $name:ident => $severity:expr;)*) => {$(
        $(#[$doc])*
        pub fn $name(
            path: impl Into<PathBuf>,
            line: usize,
            col: usize,
            message: impl Into<String>,
        ) -> Self {
            Diagnostic {
                severity: $severity,
                path: path.into(),
                line,
                col,
                message: message.into(),
                help: None,
                code: None,
            }
        }
    )*};
}

impl Diagnostic {
    constructors! {
        /// An error at `line:col` of `path`.
        error => Severity::Error;
        /// A warning at `line:col` of `path`.
        warning => Severity::Warning;
        /// A note at `line:col` of `path`.
        note => Severity::Note;
    }

    /// Sets the machine-readable kind.
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// Adds a hint on how to fix the problem.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    fn sort_key(&self) -> (&Path, usize, usize, Severity, &str) {
        (
            &self.path,
            self.line,
            self.col,
            self.severity,
            &self.message,
        )
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        use crate::escape::terminal;
        write!(
            f,
            "{}:{}:{}: {kind}: {}",
            terminal(&self.path.display().to_string(), false),
            self.line,
            self.col,
            terminal(&self.message, true)
        )?;
        if let Some(help) = &self.help {
            write!(f, "\n  help: {}", terminal(help, true))?;
        }
        Ok(())
    }
}

/// Sorts diagnostics by path, line and column, and drops exact repeats.
pub fn sort(diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    diagnostics.dedup();
}

/// Maps byte offsets in one text to 1-based line and column numbers.
///
/// Built once per file; each lookup is a binary search over line starts, so
/// locating many links in a long page stays linear overall.
#[derive(Debug, Clone)]
pub struct LineIndex<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    /// Indexes the line starts of `text`.
    pub fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, line_starts }
    }

    /// The 1-based `(line, column)` of byte `offset`. Offsets past the end
    /// map to the end; offsets inside a character map to that character.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let start = self.line_starts[line];
        let mut end = offset;
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let col = self.text[start..end].trim_end_matches('\r').chars().count() + 1;
        (line + 1, col)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters_from_one() {
        let idx = LineIndex::new("ab\ncé d\n\nx");
        assert_eq!(idx.line_col(0), (1, 1));
        assert_eq!(idx.line_col(2), (1, 3));
        assert_eq!(idx.line_col(3), (2, 1));
        // "é" is two bytes; "d" is at byte 7, the 4th character.
        assert_eq!(idx.line_col(7), (2, 4));
        assert_eq!(idx.line_col(9), (3, 1));
        assert_eq!(idx.line_col(10), (4, 1));
        assert_eq!(idx.line_col(99), (4, 2));
    }

    #[test]
    fn sorting_orders_by_location_and_dedups() {
        let mut all = vec![
            Diagnostic::error("b.md", 1, 1, "x"),
            Diagnostic::error("a.md", 9, 1, "y"),
            Diagnostic::error("a.md", 2, 5, "z"),
            Diagnostic::error("a.md", 2, 5, "z"),
        ];
        sort(&mut all);
        let order: Vec<_> = all
            .iter()
            .map(|d| format!("{}:{}", d.path.display(), d.line))
            .collect();
        assert_eq!(order, ["a.md:2", "a.md:9", "b.md:1"]);
    }
}
