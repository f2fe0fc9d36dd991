//! Page templates. The only module that knows Tera.
//!
//! Templates come from the theme's `templates/`; a file of the same name in
//! the site's own `templates/` replaces it. Autoescaping is on for `.html`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use tera::{Context, ErrorKind, Kwargs, State, Tera, Value};

use crate::diagnostics::Diagnostic;
use crate::load::{files_under, relative};

/// The loaded templates and where each came from.
pub struct Templates {
    tera: Tera,
    sources: HashMap<String, PathBuf>,
    fingerprint: String,
}

/// Values rendered into a template.
#[derive(Default)]
pub struct TemplateContext(Context);

/// A value serialised once for the contexts of many templates: inserting
/// it shares it instead of serialising it again.
#[derive(Debug, Clone)]
pub struct Prepared(Value);

impl Prepared {
    /// Serialises `value` (as [`TemplateContext::insert`] would).
    pub fn of<T: Serialize + ?Sized>(value: &T) -> Prepared {
        Prepared(Value::from_serializable(value))
    }
}

impl TemplateContext {
    /// Adds a serialisable value.
    pub fn insert<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) {
        self.0.insert(key, value);
    }

    /// Adds a value serialised beforehand.
    pub fn insert_prepared(&mut self, key: &'static str, value: &Prepared) {
        self.0.insert_value(key, value.0.clone());
    }

    /// Adds trusted HTML that must not be escaped (rendered Markdown).
    pub fn insert_html(&mut self, key: &'static str, html: &str) {
        self.0.insert_value(key, Value::safe_string(html));
    }
}

impl Templates {
    /// Loads the theme's templates, then the site's overrides, and registers
    /// `url(path=...)` and `asset(path=...)`.
    ///
    /// `base_path` is the base URL's path (`/` or `/triage/`); `assets` maps a
    /// logical asset path to its fingerprinted output path.
    pub fn load(
        root: &Path,
        theme_dir: &Path,
        base_path: &str,
        assets: Arc<BTreeMap<String, String>>,
    ) -> Result<Templates, Vec<Diagnostic>> {
        let mut sources: BTreeMap<String, PathBuf> = BTreeMap::new();
        for dir in [theme_dir.join("templates"), root.join("templates")] {
            for (name, path) in files_under(&dir) {
                sources.insert(name, path);
            }
        }
        let mut texts = Vec::new();
        let mut errors = Vec::new();
        for (name, path) in &sources {
            match std::fs::read_to_string(path) {
                Ok(text) => texts.push((name.clone(), text)),
                Err(e) => errors.push(Diagnostic::error(
                    relative(root, path),
                    1,
                    1,
                    format!("cannot read template: {e}"),
                )),
            }
        }
        let sources: HashMap<String, PathBuf> = sources
            .into_iter()
            .map(|(n, p)| (n, relative(root, &p)))
            .collect();
        if !errors.is_empty() {
            return Err(errors);
        }
        let parts: Vec<&[u8]> = texts
            .iter()
            .flat_map(|(n, t)| [n.as_bytes(), t.as_bytes()])
            .collect();
        let fingerprint = crate::hash::hash_hex(&parts);
        let mut tera = Tera::new();
        tera.autoescape_on(vec![".html", ".xml"]);
        let base = base_path.to_string();
        tera.register_function(
            "url",
            move |kwargs: Kwargs, _: &State| -> tera::TeraResult<String> {
                let path: String = kwargs.must_get("path")?;
                Ok(format!("{base}{}", path.trim_start_matches('/')))
            },
        );
        let base = base_path.to_string();
        tera.register_function(
            "asset",
            move |kwargs: Kwargs, _: &State| -> tera::TeraResult<String> {
                let path: String = kwargs.must_get("path")?;
                let logical = path.trim_start_matches('/');
                match assets.get(logical) {
                    Some(out) => Ok(format!("{base}{out}")),
                    None => Err(tera::Error::message(format!(
                        "asset `{logical}` not found in the theme's or the site's static/"
                    ))),
                }
            },
        );
        if let Err(e) = tera.add_raw_templates(texts.iter().map(|(n, t)| (n.as_str(), t.as_str())))
        {
            return Err(load_diagnostics(&e, &sources, &texts));
        }

        Ok(Templates {
            tera,
            sources,
            fingerprint,
        })
    }

    /// A hash of every template's name and text, for the incremental cache.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// True when a template of this name exists.
    pub fn has(&self, name: &str) -> bool {
        self.tera.contains_template(name)
    }

    /// Renders template `name`.
    pub fn render(&self, name: &str, context: &TemplateContext) -> Result<String, Diagnostic> {
        self.tera
            .render(name, &context.0)
            .map_err(|e| to_diagnostic(&e, &self.sources, Some(name)))
    }
}

/// The diagnostics for an error Tera raised while loading the templates.
/// Its checks across templates (an unknown include, filter, test, function
/// or block) come as one message of reports, each naming `name:line:col`;
/// a missing parent names no place, so it is put at its `extends` tag.
fn load_diagnostics(
    error: &tera::Error,
    sources: &HashMap<String, PathBuf>,
    texts: &[(String, String)],
) -> Vec<Diagnostic> {
    let path_of = |name: &str| template_path(sources, name);
    match error.kind() {
        ErrorKind::Msg(text) => {
            let located: Vec<Diagnostic> = text
                .split("\n\n")
                .filter_map(report_location)
                .map(|(name, line, col, message)| {
                    Diagnostic::error(path_of(name), line, col, message)
                })
                .collect();
            if located.is_empty() {
                vec![to_diagnostic(error, sources, None)]
            } else {
                located
            }
        }
        ErrorKind::MissingParent { current, parent } => {
            let text = texts
                .iter()
                .find(|(n, _)| n == current)
                .map_or("", |(_, t)| t.as_str());
            // The parent's name where it follows `extends` (not in a comment).
            let offset = text
                .match_indices(parent.as_str())
                .map(|(i, _)| i)
                .find(|&i| {
                    text[..i]
                        .trim_end_matches(['"', '\''])
                        .trim_end()
                        .ends_with("extends")
                })
                .unwrap_or(0);
            let (line, col) = crate::diagnostics::LineIndex::new(text).line_col(offset);
            vec![
                Diagnostic::error(
                    path_of(current),
                    line,
                    col,
                    format!("extends `{parent}`, which is not a template"),
                )
                .with_help(
                    "templates are read from the theme's templates/ and the site's templates/",
                ),
            ]
        }
        _ => vec![to_diagnostic(error, sources, None)],
    }
}

/// The site-relative path of template `name`.
fn template_path(sources: &HashMap<String, PathBuf>, name: &str) -> PathBuf {
    sources
        .get(name)
        .cloned()
        .unwrap_or_else(|| PathBuf::from(format!("templates/{name}")))
}

/// `(template, line, column, message)` from one of Tera's reports:
/// `error: <message>\n --> <template>:<line>:<column>\n...`.
fn report_location(report: &str) -> Option<(&str, usize, usize, String)> {
    let mut lines = report.trim_start().lines();
    let message = lines.next()?.trim().strip_prefix("error: ")?;
    let place = lines.next()?.trim_start().strip_prefix("--> ")?;
    let mut parts = place.trim_end().rsplitn(3, ':');
    let col = parts.next()?.parse().ok()?;
    let line = parts.next()?.parse().ok()?;
    let name = parts.next()?;
    Some((name, line, col, message.to_string()))
}

/// Turns a Tera error into a diagnostic at the template's path and line.
fn to_diagnostic(
    error: &tera::Error,
    sources: &HashMap<String, PathBuf>,
    rendering: Option<&str>,
) -> Diagnostic {
    let path_of = |name: &str| template_path(sources, name);
    match error.kind() {
        ErrorKind::SyntaxError(report) | ErrorKind::RenderingError(report) => {
            let span = report.span();
            let name = if report.filename().is_empty() {
                rendering.unwrap_or("")
            } else {
                report.filename()
            };
            Diagnostic::error(
                path_of(name),
                span.start_line.max(1),
                span.start_col + 1,
                report.message().to_string(),
            )
        }
        other => {
            let path = rendering.map_or_else(|| PathBuf::from("templates"), path_of);
            let mut message = other.to_string();
            let mut source = std::error::Error::source(error);
            while let Some(s) = source {
                message = format!("{message}: {s}");
                source = s.source();
            }
            Diagnostic::error(path, 1, 1, message)
        }
    }
}
