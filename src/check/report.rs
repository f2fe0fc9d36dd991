//! How `errata check` prints its problems: for people, as JSON, as JUnit
//! XML, or as GitHub Actions annotations; and its exit code.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::diagnostics::{Diagnostic, Severity};
use crate::escape::{self, Colour};

/// How problems are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Grouped by file, for people.
    Human,
    /// One JSON document (see [`JsonReport`]).
    Json,
    /// JUnit XML, for CI test reports.
    Junit,
    /// GitHub Actions workflow commands, shown on the pull request's diff.
    Github,
}

/// The JSON report: `{"version": 1, "errors": N, "warnings": N, "notes": N, "problems": [...]}`.
#[derive(Debug, Serialize)]
pub struct JsonReport<'a> {
    /// Schema version; changes only when fields are removed or change meaning.
    pub version: u32,
    /// How many errors.
    pub errors: usize,
    /// How many warnings.
    pub warnings: usize,
    /// How many notes (never failures).
    pub notes: usize,
    /// Every problem, sorted by file, line and column.
    pub problems: Vec<JsonProblem<'a>>,
}

/// One problem in the JSON report.
#[derive(Debug, Serialize)]
pub struct JsonProblem<'a> {
    /// `error`, `warning` or `note`.
    pub severity: &'static str,
    /// The problem's kind where it has one (`external-broken`,
    /// `external-unverifiable`...), else null.
    pub code: Option<&'a str>,
    /// File, relative to the site root.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: &'a str,
    /// How to fix it, or null.
    pub help: Option<&'a str>,
}

fn severity_name(d: &Diagnostic) -> &'static str {
    match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

/// Renders `problems` in `format`. `colour` applies to `Human` only.
pub fn render(problems: &[Diagnostic], format: Format, colour: bool) -> String {
    let count = |severity| problems.iter().filter(|d| d.severity == severity).count();
    let (errors, warnings, notes) = (
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Note),
    );
    let mut out = String::new();
    match format {
        Format::Human => {
            let mut current: Option<&Path> = None;
            for d in problems {
                if current != Some(d.path.as_path()) {
                    let _ = writeln!(
                        out,
                        "{}{}",
                        if current.is_some() { "\n" } else { "" },
                        escape::terminal(&d.path.display().to_string(), false)
                    );
                    current = Some(&d.path);
                }
                let kind = severity_name(d);
                let hue = match d.severity {
                    Severity::Error => Colour::Red,
                    Severity::Warning => Colour::Yellow,
                    Severity::Note => Colour::Cyan,
                };
                let kind = escape::paint(kind, hue, colour);
                let message = escape::terminal(&d.message, true);
                let _ = writeln!(out, "  {}:{}: {kind}: {message}", d.line, d.col);
                if let Some(help) = &d.help {
                    let _ = writeln!(out, "    help: {}", escape::terminal(help, true));
                }
            }
            let _ = writeln!(
                out,
                "{}{errors} error(s), {warnings} warning(s){}",
                if problems.is_empty() { "" } else { "\n" },
                if notes > 0 {
                    format!(", {notes} note(s)")
                } else {
                    String::new()
                }
            );
        }
        Format::Json => {
            let report = JsonReport {
                version: 1,
                errors,
                warnings,
                notes,
                problems: problems
                    .iter()
                    .map(|d| JsonProblem {
                        severity: severity_name(d),
                        code: d.code.as_deref(),
                        file: d.path.display().to_string(),
                        line: d.line,
                        column: d.col,
                        message: &d.message,
                        help: d.help.as_deref(),
                    })
                    .collect(),
            };
            out = serde_json::to_string_pretty(&report).expect("the report serialises");
            out.push('\n');
        }
        Format::Junit => {
            let _ = writeln!(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
            let _ = writeln!(
                out,
                "<testsuites name=\"errata check\" tests=\"{}\" failures=\"{errors}\" skipped=\"{notes}\">",
                problems.len().max(1)
            );
            let _ = writeln!(
                out,
                "  <testsuite name=\"errata check\" tests=\"{}\" failures=\"{errors}\" skipped=\"{notes}\">",
                problems.len().max(1)
            );
            if problems.is_empty() {
                let _ = writeln!(out, "    <testcase name=\"site\" classname=\"errata\"/>");
            }
            for d in problems {
                let name = escape::xml(&format!("{}:{}:{}", d.path.display(), d.line, d.col));
                let class = escape::xml(&d.path.display().to_string());
                let _ = write!(out, "    <testcase name=\"{name}\" classname=\"{class}\"");
                match d.severity {
                    Severity::Error => {
                        let _ = writeln!(
                            out,
                            "><failure message=\"{}\">{}</failure></testcase>",
                            escape::xml(&d.message),
                            escape::xml(d.help.as_deref().unwrap_or(""))
                        );
                    }
                    Severity::Warning => {
                        let help = d.help.as_deref().map(|h| format!("\nhelp: {h}"));
                        let _ = writeln!(
                            out,
                            "><system-out>warning: {}</system-out></testcase>",
                            escape::xml(&format!("{}{}", d.message, help.unwrap_or_default()))
                        );
                    }
                    // A note is a check that was not run to a verdict: JUnit's `skipped`.
                    Severity::Note => {
                        let _ = writeln!(
                            out,
                            "><skipped message=\"{}\"{}/></testcase>",
                            escape::xml(&d.message),
                            d.code
                                .as_deref()
                                .map(|c| format!(" type=\"{}\"", escape::xml(c)))
                                .unwrap_or_default()
                        );
                    }
                }
            }
            let _ = writeln!(out, "  </testsuite>\n</testsuites>");
        }
        Format::Github => {
            for d in problems {
                let mut message = d.message.clone();
                if let Some(help) = &d.help {
                    message.push_str(&format!("\n{help}"));
                }
                let command = match d.severity {
                    Severity::Note => "notice",
                    _ => severity_name(d),
                };
                let _ = writeln!(
                    out,
                    "::{} file={},line={},col={}::{}",
                    command,
                    escape::github(&d.path.display().to_string(), true),
                    d.line,
                    d.col,
                    escape::github(&message, false)
                );
            }
        }
    }
    out
}

/// With `--warnings-as-errors`: every warning becomes an error, so that
/// each format (a JUnit failure, a GitHub `::error`) says what the exit
/// code counts.
pub fn warnings_as_errors(problems: &mut [Diagnostic]) {
    for d in problems {
        if d.severity == Severity::Warning {
            d.severity = Severity::Error;
        }
    }
}

/// The exit code for `problems`: 0 when clean, 2 when any error is found
/// (with `--warnings-as-errors`, [`warnings_as_errors`] has made every
/// warning one).
pub fn exit_code(problems: &[Diagnostic]) -> u8 {
    if problems.iter().any(Diagnostic::is_error) {
        2
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Diagnostic> {
        vec![
            Diagnostic::error("content/a.md", 3, 7, "link to missing page `@/x.md`")
                .with_help("fix it, 100%"),
            Diagnostic::warning("content/b.md", 1, 1, "no description"),
        ]
    }

    #[test]
    fn github_lines_escape_properties_and_data() {
        let out = render(&sample(), Format::Github, false);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            "::error file=content/a.md,line=3,col=7::link to missing page `@/x.md`%0Afix it, 100%25"
        );
        assert_eq!(
            lines[1],
            "::warning file=content/b.md,line=1,col=1::no description"
        );
    }

    #[test]
    fn exit_codes() {
        assert_eq!(exit_code(&[]), 0);
        assert_eq!(exit_code(&sample()[1..]), 0);
        assert_eq!(exit_code(&sample()), 2);
    }

    #[test]
    fn warnings_as_errors_fail_in_every_format() {
        let mut problems = sample();
        problems.retain(|d| d.severity == Severity::Warning);
        assert!(!problems.is_empty());
        assert!(render(&problems, Format::Junit, false).contains("failures=\"0\""));
        warnings_as_errors(&mut problems);
        assert_eq!(exit_code(&problems), 2);
        let junit = render(&problems, Format::Junit, false);
        assert!(
            junit.contains(&format!("failures=\"{}\"", problems.len())),
            "{junit}"
        );
        assert!(render(&problems, Format::Github, false).starts_with("::error "));
    }

    #[test]
    fn human_output_escapes_control_characters_from_the_site() {
        let problems = vec![Diagnostic::error(
            "content/a\x1b[2J.md",
            1,
            1,
            "unknown key `k\u{9b}31m\nb.md:1:1: error: forged`",
        )];
        let out = render(&problems, Format::Human, false);
        assert!(!out.contains(['\x1b', '\u{9b}']), "{out:?}");
        assert!(out.starts_with("content/a\\u{1b}[2J.md\n"), "{out:?}");
        assert!(out.contains("\n  b.md:1:1: error: forged"), "{out:?}");
        let line = problems[0].to_string();
        assert!(
            !line.contains('\x1b') && line.contains("\n  b.md:1:1"),
            "{line:?}"
        );
    }

    #[test]
    fn junit_is_xml_with_failures_for_errors() {
        let out = render(&sample(), Format::Junit, false);
        assert!(out.contains("failures=\"1\""));
        assert!(
            out.contains(
                "<failure message=\"link to missing page `@/x.md`\">fix it, 100%</failure>"
            )
        );
    }
}
