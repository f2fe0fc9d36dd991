//! Who writes each output file. Every producer (a page, a section and its
//! pagination, a taxonomy page, an alias, a static file, a generated file
//! such as `404.html`) claims the files it writes; a second claim on a file
//! is an error naming both producers, instead of one silently replacing
//! the other.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::diagnostics::Diagnostic;

/// Something that writes an output file, and where it is written down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Producer {
    /// What it is, for people: `page content/a.md`, `the tags taxonomy`.
    pub what: String,
    /// The file that makes it, with a 1-based line and column.
    pub at: (PathBuf, usize, usize),
}

impl Producer {
    /// A producer described by `what`, located at `path:line:col`.
    pub fn new(what: impl Into<String>, path: impl Into<PathBuf>, line: usize, col: usize) -> Self {
        Producer {
            what: what.into(),
            at: (path.into(), line, col),
        }
    }

    fn location(&self) -> String {
        format!("{}:{}:{}", self.at.0.display(), self.at.1, self.at.2)
    }
}

/// The output files claimed so far (paths relative to the output folder).
#[derive(Debug, Default)]
pub struct Claims {
    files: BTreeMap<String, Producer>,
    /// Folders (ending in `/`) whose whole content one producer writes,
    /// such as the search bundle's `pagefind/`.
    folders: Vec<(String, Producer)>,
}

impl Claims {
    /// Claims `file` for `producer`. If another producer has it, returns the
    /// error, at the new producer's location and naming the first one.
    pub fn claim(&mut self, file: &str, producer: Producer) -> Result<(), Box<Diagnostic>> {
        let in_folder = self
            .folders
            .iter()
            .find(|(folder, _)| file.starts_with(folder.as_str()))
            .map(|(_, p)| p);
        if let Some(first) = self.files.get(file).or(in_folder) {
            let (path, line, col) = &producer.at;
            return Err(Box::new(
                Diagnostic::error(
                    path,
                    *line,
                    *col,
                    format!(
                        "two producers write {file}: {} and {} ({})",
                        producer.what,
                        first.what,
                        first.location()
                    ),
                )
                .with_help(
                    "give one of them another URL (`slug`, the file or folder name, or the alias)",
                ),
            ));
        }
        self.files.insert(file.to_string(), producer);
        Ok(())
    }

    /// Claims everything under `folder` (ending in `/`) for `producer`,
    /// so that no other producer can write there. Claim folders before
    /// files: a file claimed earlier under it is not reported.
    pub fn claim_folder(&mut self, folder: &str, producer: Producer) {
        debug_assert!(folder.ends_with('/'), "{folder}");
        self.folders.push((folder.to_string(), producer));
    }

    /// Claims `file` and adds any error to `diagnostics`; true when the
    /// claim succeeded.
    pub fn claim_or_report(
        &mut self,
        file: &str,
        producer: Producer,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> bool {
        match self.claim(file, producer) {
            Ok(()) => true,
            Err(d) => {
                diagnostics.push(*d);
                false
            }
        }
    }

    /// Errors for static files (`(output path, source file)`) that would
    /// replace a file another producer writes.
    pub fn check_static<'a>(
        &self,
        files: impl IntoIterator<Item = (&'a str, PathBuf)>,
    ) -> Vec<Diagnostic> {
        let mut claims = Claims {
            files: self.files.clone(),
            folders: self.folders.clone(),
        };
        let mut problems = Vec::new();
        for (out, source) in files {
            let what = format!("static file {}", source.display());
            claims.claim_or_report(out, Producer::new(what, source, 1, 1), &mut problems);
        }
        problems
    }

    /// The producer of `file`, if any.
    pub fn get(&self, file: &str) -> Option<&Producer> {
        self.files.get(file)
    }
}

/// The HTML file of site path `path` (`oom/` → `oom/index.html`).
pub fn html_file(path: &str) -> String {
    format!("{path}index.html")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_claim_names_both_producers() {
        let mut claims = Claims::default();
        let taxonomy = Producer::new("the `tags` taxonomy's list page", "site.toml", 1, 1);
        let section = Producer::new(
            "section content/tags/_index.md",
            "content/tags/_index.md",
            2,
            1,
        );
        assert!(claims.claim("tags/index.html", taxonomy).is_ok());
        let e = claims.claim("tags/index.html", section).unwrap_err();
        assert_eq!(
            e.to_string(),
            "content/tags/_index.md:2:1: error: two producers write tags/index.html: \
             section content/tags/_index.md and the `tags` taxonomy's list page (site.toml:1:1)\n  \
             help: give one of them another URL (`slug`, the file or folder name, or the alias)"
        );
        assert!(
            claims
                .claim("tags/x/index.html", Producer::new("x", "a", 1, 1))
                .is_ok()
        );
    }

    #[test]
    fn nothing_else_may_write_into_a_claimed_folder() {
        let mut claims = Claims::default();
        claims.claim_folder(
            "pagefind/",
            Producer::new("the search index", "site.toml", 1, 1),
        );
        let page = Producer::new("page content/pagefind.md", "content/pagefind.md", 1, 1);
        let e = claims.claim("pagefind/index.html", page).unwrap_err();
        assert!(
            e.to_string().contains(
                "two producers write pagefind/index.html: page content/pagefind.md and the search index (site.toml:1:1)"
            ),
            "{e}"
        );
        let static_file = [(
            "pagefind/pagefind.js",
            PathBuf::from("static/pagefind/pagefind.js"),
        )];
        assert_eq!(claims.check_static(static_file).len(), 1);
        // A name that only starts the same way is another folder.
        assert!(
            claims
                .claim("pagefinder/index.html", Producer::new("x", "a", 1, 1))
                .is_ok()
        );
    }
}
