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

    /// A file errata generates (`sitemap.xml`), located at `site.toml`.
    pub fn generated(file: &str) -> Self {
        Producer::new(
            format!("the generated {file}"),
            crate::config::CONFIG_FILE,
            1,
            1,
        )
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
        if let Some(problem) = unwritable(file) {
            let message = format!("{} cannot be written: {problem}", producer.what);
            return Err(Box::new(at_producer(&producer, message, "give it")));
        }
        let in_folder = self
            .folders
            .iter()
            .find(|(folder, _)| file.starts_with(folder.as_str()))
            .map(|(_, p)| p);
        if let Some(first) = self.files.get(file).or(in_folder) {
            return Err(Box::new(conflict(
                &producer,
                format!(
                    "two producers write {file}: {} and {} ({})",
                    producer.what,
                    first.what,
                    first.location()
                ),
            )));
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

    /// Errors where one output file stands where another needs a folder:
    /// a page at `t/` (`t/index.html`) and a static file `t`, a slug
    /// `robots.txt` (`robots.txt/index.html`) and the generated
    /// `robots.txt`, a static file inside a claimed folder's name. Written
    /// anyway, one would delete or hide the other. `others` are the files
    /// no claim covers (static, theme and generated files); a claimed file
    /// of the same name stands for them.
    ///
    /// One error for each file standing in the way, at the first file (in
    /// path order) that needs it to be a folder, naming how many more do.
    pub fn check_folders(&self, others: &BTreeMap<String, Producer>) -> Vec<Diagnostic> {
        let owner = |path: &str| self.files.get(path).or_else(|| others.get(path));
        // File in the way → (the first file under it, its producer, how many).
        let mut blocked: BTreeMap<&str, (&str, &Producer, usize)> = BTreeMap::new();
        let paths = self
            .files
            .iter()
            .chain(others.iter().filter(|(p, _)| !self.files.contains_key(*p)));
        for (path, producer) in paths {
            let ancestors = path.match_indices('/').map(|(i, _)| &path[..i]);
            if let Some(folder) = ancestors.into_iter().find(|a| owner(a).is_some()) {
                let entry = blocked.entry(folder).or_insert((path, producer, 0));
                if path.as_str() < entry.0 {
                    *entry = (path, producer, entry.2);
                }
                entry.2 += 1;
            }
        }
        let mut problems: Vec<Diagnostic> = blocked
            .into_iter()
            .map(|(file, (path, producer, count))| {
                let first = owner(file).expect("a file in the way has an owner");
                let more = match count - 1 {
                    0 => String::new(),
                    1 => " (and 1 more file)".to_string(),
                    n => format!(" (and {n} more files)"),
                };
                conflict(
                    producer,
                    format!(
                        "{} writes {path}{more}, which needs {file}/ to be a folder, but {} writes a file {file} ({})",
                        producer.what,
                        first.what,
                        first.location()
                    ),
                )
            })
            .collect();
        // A file named as a claimed folder (`pagefind` beside `pagefind/`).
        for (folder, owner_of_folder) in &self.folders {
            let name = folder.trim_end_matches('/');
            if let Some(producer) = owner(name) {
                problems.push(conflict(
                    producer,
                    format!(
                        "{} writes a file {name}, where {} writes the folder {folder} ({})",
                        producer.what,
                        owner_of_folder.what,
                        owner_of_folder.location()
                    ),
                ));
            }
        }
        problems
    }

    /// The producer of `file`, if any.
    pub fn get(&self, file: &str) -> Option<&Producer> {
        self.files.get(file)
    }
}

/// The longest file or folder name, in bytes, that file systems take
/// (`NAME_MAX` on Linux and the BSDs, and APFS's, NTFS's and ext4's limit).
pub const MAX_NAME: usize = 255;

/// Why no file system can hold output file `file`, if so: an empty part
/// (a slug or folder name that slugifies to nothing) or a name too long.
fn unwritable(file: &str) -> Option<String> {
    file.split('/').find_map(|name| {
        if name.is_empty() {
            Some(format!(
                "its path {file} has an empty part (a slug, file or folder name with no letter or digit to keep)"
            ))
        } else if name.len() > MAX_NAME {
            Some(format!(
                "the name `{}...` is {} bytes long, and file systems take at most {MAX_NAME}",
                name.chars().take(24).collect::<String>(),
                name.len()
            ))
        } else {
            None
        }
    })
}

/// An error at `producer`'s location, saying `message`.
fn conflict(producer: &Producer, message: String) -> Diagnostic {
    at_producer(producer, message, "give one of them")
}

/// An error at `producer`'s location, whose help starts `whom` ("give it").
fn at_producer(producer: &Producer, message: String, whom: &str) -> Diagnostic {
    let (path, line, col) = &producer.at;
    Diagnostic::error(path, *line, *col, message).with_help(format!(
        "{whom} another URL (`slug`, the file or folder name, or the alias)"
    ))
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

    #[test]
    fn a_file_where_another_needs_a_folder_is_an_error_once() {
        let mut claims = Claims::default();
        claims.claim_folder(
            "pagefind/",
            Producer::new("the search index", "site.toml", 1, 1),
        );
        for (file, source) in [
            ("t/index.html", "content/t/_index.md"),
            ("t/a/index.html", "content/t/a.md"),
            ("t/b/index.html", "content/t/b.md"),
            ("u/index.html", "content/u.md"),
            ("v/index.html", "content/v.md"),
        ] {
            claims
                .claim(file, Producer::new(format!("page {source}"), source, 1, 1))
                .unwrap();
        }
        let others: BTreeMap<String, Producer> = [
            ("t", "static/t"),
            ("u/index.html/x.png", "static/u/index.html/x.png"),
            ("pagefind", "static/pagefind"),
            // Only names that start alike: no conflict.
            ("v.html", "static/v.html"),
            ("vv/index.html", "static/vv/index.html"),
            ("pagefinder/a.js", "static/pagefinder/a.js"),
            // The same file as a page: check_static's error, not this one's.
            ("v/index.html", "static/v/index.html"),
        ]
        .into_iter()
        .map(|(out, source)| {
            (
                out.to_string(),
                Producer::new(format!("static file {source}"), source, 1, 1),
            )
        })
        .collect();
        let problems: Vec<String> = claims
            .check_folders(&others)
            .iter()
            .map(|d| d.to_string())
            .collect();
        assert_eq!(problems.len(), 3, "{problems:#?}");
        assert!(problems[0].starts_with(
            "content/t/a.md:1:1: error: page content/t/a.md writes t/a/index.html (and 2 more files), which needs t/ to be a folder, but static file static/t writes a file t (static/t:1:1)"
        ), "{problems:#?}");
        assert!(problems[1].starts_with(
            "static/u/index.html/x.png:1:1: error: static file static/u/index.html/x.png writes u/index.html/x.png, which needs u/index.html/ to be a folder, but page content/u.md writes a file u/index.html (content/u.md:1:1)"
        ), "{problems:#?}");
        assert!(problems[2].starts_with(
            "static/pagefind:1:1: error: static file static/pagefind writes a file pagefind, where the search index writes the folder pagefind/ (site.toml:1:1)"
        ), "{problems:#?}");
    }
}
