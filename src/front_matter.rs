//! YAML front matter: splitting it from the body and deserialising it into
//! typed structs. The only module that knows the YAML crate.

use std::fmt;

use serde::de::{self, DeserializeOwned};
use serde::{Deserialize, Deserializer, Serialize};

/// Front matter of a triage page.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PageFrontMatter {
    /// The page title, usually "Fix" followed by the error.
    pub title: String,
    /// Meta description; a warning past 160 characters.
    #[serde(default)]
    pub description: Option<String>,
    /// The error message exactly as users see it.
    pub signature: String,
    /// Regular expressions that recognise the error in logs.
    #[serde(default)]
    pub patterns: Vec<String>,
    /// Rank among pages that match one log: higher first (default 0). Give
    /// pages about errors that are usually consequences (a launcher's
    /// summary, a watchdog timeout) a negative priority.
    #[serde(default)]
    pub priority: i32,
    /// The one-paragraph "Direct Error Triage" summary.
    #[serde(default)]
    pub triage: Option<String>,
    /// Taxonomy: frameworks the error occurs in.
    #[serde(default)]
    pub frameworks: Vec<String>,
    /// Taxonomy: tools the fixes cover.
    #[serde(default)]
    pub tools: Vec<String>,
    /// Taxonomy: free tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Publication date (`YYYY-MM-DD` or RFC 3339).
    #[serde(default)]
    pub date: Option<Date>,
    /// Last update.
    #[serde(default)]
    pub updated: Option<Date>,
    /// Hardware and cloud links, rendered with `rel="sponsored noopener"`.
    #[serde(default)]
    pub sponsored: Vec<SponsoredLink>,
    /// The calculator's starting state; the widget appears when present.
    #[serde(default)]
    pub calculator: Option<CalculatorState>,
    /// Documentation and public issues the page relies on: listed under
    /// "Sources" and given to JSON-LD as `citation`.
    #[serde(default)]
    pub sources: Vec<SourceLink>,
    /// Overrides the last URL segment (the file name by default).
    #[serde(default)]
    pub slug: Option<Slug>,
    /// Old URLs that redirect here.
    #[serde(default)]
    pub aliases: Vec<SitePath>,
    /// Template to render with instead of `page.html`.
    #[serde(default)]
    pub template: Option<TemplateName>,
    /// Drafts are built only with `--drafts`.
    #[serde(default)]
    pub draft: bool,
}

/// Front matter of a section (`_index.md`).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SectionFrontMatter {
    /// The section heading.
    #[serde(default)]
    pub title: String,
    /// Meta description.
    #[serde(default)]
    pub description: Option<String>,
    /// Template to render with instead of `section.html` (or `index.html` at the root).
    #[serde(default)]
    pub template: Option<TemplateName>,
    /// Order among sibling sections; lower first.
    #[serde(default)]
    pub weight: i64,
    /// Drafts are built only with `--drafts`.
    #[serde(default)]
    pub draft: bool,
}

/// A hardware or cloud link.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SponsoredLink {
    /// Link text.
    pub label: String,
    /// Absolute http(s) URL.
    pub url: HttpUrl,
    /// Optional line under the link.
    #[serde(default)]
    pub note: Option<String>,
}

/// A document or public issue a page relies on.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SourceLink {
    /// What the link is, as a reader would cite it.
    pub title: String,
    /// Absolute http(s) URL.
    pub url: HttpUrl,
}

/// The calculator's starting state.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CalculatorState {
    /// A preset from `data/models.yaml`.
    pub model: String,
    /// Weight format, such as `fp16` or `q4_k_m`.
    #[serde(default = "default_weights")]
    pub weights: String,
    /// Context length in tokens.
    #[serde(default = "default_context")]
    pub context: u64,
    /// Runtime: `pytorch`, `vllm`, `llama.cpp` or `ollama`.
    #[serde(default)]
    pub runtime: Option<String>,
    /// GPU preset from `data/gpus.yaml`.
    #[serde(default)]
    pub gpu: Option<String>,
}

fn default_weights() -> String {
    "fp16".into()
}
fn default_context() -> u64 {
    4096
}

/// Defines a string newtype whose value is checked while deserialising, so a
/// bad value is reported at its own line and column.
macro_rules! checked_string {
    ($(#[$meta:meta])* $name:ident, $check:path) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = String::deserialize(deserializer)?;
                $check(&value).map_err(de::Error::custom)?;
                Ok($name(value))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

checked_string!(
    /// A date, `YYYY-MM-DD`, optionally followed by an RFC 3339 time.
    Date,
    check_date
);
checked_string!(
    /// One URL segment: letters, digits, `-`, `_` and `.`, never `.` or `..`.
    Slug,
    check_slug
);
checked_string!(
    /// A site-relative path such as `old/path/`: no `..`, no scheme.
    SitePath,
    check_site_path
);
checked_string!(
    /// An absolute `http` or `https` URL.
    HttpUrl,
    check_http_url
);
checked_string!(
    /// A template file name such as `page.html`.
    TemplateName,
    check_template_name
);

fn check_date(value: &str) -> Result<(), String> {
    let bad = || format!("invalid date `{value}`: expected YYYY-MM-DD or an RFC 3339 date-time");
    let day = value.get(..10).ok_or_else(bad)?;
    let rest = &value[10..];
    let parts: Vec<&str> = day.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return Err(bad());
    };
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if !(digits(y, 4) && digits(m, 2) && digits(d, 2)) {
        return Err(bad());
    }
    let (year, month, day): (u32, u32, u32) = (
        y.parse().unwrap_or(0),
        m.parse().unwrap_or(0),
        d.parse().unwrap_or(0),
    );
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return Err(bad()),
    };
    if day == 0 || day > days {
        return Err(bad());
    }
    if !(rest.is_empty() || rest.starts_with(['T', 't', ' ']) && rest.len() >= 6) {
        return Err(bad());
    }
    Ok(())
}

/// An output path segment named like the marker errata writes into every
/// output folder would replace (or be replaced by) that marker. `kind` names
/// the value as the other messages do (`slug`, `path`).
fn check_not_reserved(kind: &str, value: &str, segment: &str) -> Result<(), String> {
    if segment == crate::output_dir::MARKER {
        return Err(format!(
            "invalid {kind} `{value}`: `{segment}` is reserved for the marker errata writes into every output folder"
        ));
    }
    Ok(())
}

fn check_slug(value: &str) -> Result<(), String> {
    check_not_reserved("slug", value, value)?;
    let ok = !value.is_empty()
        && value != "."
        && value != ".."
        && value
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid slug `{value}`: use one URL segment of letters, digits, `-`, `_` and `.`"
        ))
    }
}

fn check_site_path(value: &str) -> Result<(), String> {
    let trimmed = value.trim_matches('/');
    for segment in trimmed.split('/') {
        check_not_reserved("path", value, segment)?;
    }
    let ok = !trimmed.is_empty()
        && !value.contains(['\\', '?', '#', ':'])
        && trimmed
            .split('/')
            .all(|segment| check_slug(segment).is_ok());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid path `{value}`: use a site path like `old/page/` without `..`, `\\` or a scheme"
        ))
    }
}

fn check_http_url(value: &str) -> Result<(), String> {
    let lower = value.trim_start().to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) {
        return Err(format!(
            "invalid URL `{value}`: only absolute http(s) URLs are allowed"
        ));
    }
    url::Url::parse(value.trim())
        .map(|_| ())
        .map_err(|e| format!("invalid URL `{value}`: {e}"))
}

fn check_template_name(value: &str) -> Result<(), String> {
    let ok = value.ends_with(".html") && value.split('/').all(|s| check_slug(s).is_ok());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid template name `{value}`: expected a file such as `page.html`"
        ))
    }
}

/// A problem in front matter, at a byte offset of the whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontMatterError {
    /// Byte offset in the file.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
}

/// A file split into its front matter and body.
#[derive(Debug, Clone, Copy)]
pub struct Split<'a> {
    /// The YAML between the `---` lines.
    pub yaml: &'a str,
    /// Byte offset of `yaml` in the file.
    pub yaml_offset: usize,
    /// The Markdown after the closing `---`.
    pub body: &'a str,
    /// Byte offset of `body` in the file.
    pub body_offset: usize,
}

fn is_fence(line: &str) -> bool {
    line.trim_end_matches(['\r', '\n']).trim_end() == "---"
}

/// Splits `text` at its `---` fences. A file without an opening fence is all
/// body with empty front matter.
pub fn split(text: &str) -> Result<Split<'_>, FrontMatterError> {
    let mut lines = text.split_inclusive('\n');
    let Some(first) = lines.next().filter(|l| is_fence(l)) else {
        return Ok(Split {
            yaml: "",
            yaml_offset: 0,
            body: text,
            body_offset: 0,
        });
    };
    let yaml_offset = first.len();
    let mut offset = yaml_offset;
    for line in lines {
        if is_fence(line) {
            return Ok(Split {
                yaml: &text[yaml_offset..offset],
                yaml_offset,
                body: &text[offset + line.len()..],
                body_offset: offset + line.len(),
            });
        }
        offset += line.len();
    }
    Err(FrontMatterError {
        offset: 0,
        message: "front matter opened with `---` is never closed".into(),
        help: Some("add a line with `---` after the last front-matter key".into()),
    })
}

/// Deserialises the YAML of `split` into `T`, with the first error at its
/// file offset.
pub fn parse<T: DeserializeOwned>(split: &Split<'_>) -> Result<T, FrontMatterError> {
    parse_all(split).map_err(|mut all| all.swap_remove(0))
}

/// Deserialises the YAML of `split` into `T`; on failure, returns every
/// problem in it, each at its file offset, in file order (never empty).
///
/// The deserialiser stops at its first problem. To find the next one, the
/// top-level entry that held the problem is blanked out (its bytes turned
/// into spaces, so every other offset stays put) and the text is parsed
/// again, until it parses or the problem cannot be tied to one entry. A
/// required key whose entry was blanked gets a placeholder appended, so it
/// is not also reported as missing. Well-formed front matter is parsed once.
pub fn parse_all<T: DeserializeOwned>(split: &Split<'_>) -> Result<T, Vec<FrontMatterError>> {
    let first = match from_yaml::<T>(split.yaml) {
        Ok(value) => return Ok(value),
        Err(e) => e,
    };
    let entries = top_level_entries(split.yaml);
    let mut text = split.yaml.to_string();
    let mut blanked = vec![false; entries.len()];
    let mut errors = Vec::new();
    let mut next = Some(first);
    // Each round blanks an entry or appends a placeholder for one, so the
    // rounds are bounded by twice the number of entries.
    for _ in 0..=2 * entries.len() + 1 {
        let Some(e) = next.take() else { break };
        // A missing field is raised after every entry was read without a
        // problem; once a placeholder is appended, any other problem is the
        // placeholder's own, not the author's.
        if text.len() > split.yaml.len() && missing_field(&strip_marks(&e.to_string())).is_none() {
            break;
        }
        let mut problem = locate(split, &text, &e);
        // A repeated key is reported at the repeat, which is then skipped.
        let repeat = duplicate_field(&problem.message).and_then(|key| {
            entries
                .iter()
                .enumerate()
                .filter(|(_, entry)| entry.key == key)
                .map(|(i, _)| i)
                .skip(1)
                .find(|&i| !blanked[i])
        });
        if let Some(i) = repeat {
            problem.offset = split.yaml_offset + entries[i].start;
        }
        let entry = repeat.or_else(|| {
            entries
                .iter()
                .rposition(|entry| entry.start <= problem.offset - split.yaml_offset)
                .filter(|&i| problem.offset - split.yaml_offset < entries[i].end)
                .or_else(|| {
                    // Checked values are reported at the start of their mapping;
                    // the key path in front of the message names the entry.
                    let key = problem_key(&problem.message)?;
                    entries.iter().position(|entry| entry.key == key)
                })
        });
        let missing = missing_field(&problem.message).map(str::to_string);
        let placeholder = missing.as_ref().is_some_and(|key| {
            entries
                .iter()
                .zip(&blanked)
                .any(|(entry, &b)| b && entry.key == *key)
        });
        if !placeholder {
            errors.push(problem);
        }
        if let Some(key) = missing {
            // Stand in for the missing key to find what else is wrong.
            text.push_str(&format!("\n{key}: \"\"\n"));
        } else {
            match entry.filter(|&i| !blanked[i]) {
                Some(i) => {
                    blank(&mut text, entries[i].start..entries[i].end);
                    blanked[i] = true;
                }
                None => break,
            }
        }
        next = from_yaml::<T>(&text).err();
    }
    errors.sort_by_key(|e| e.offset);
    errors.dedup();
    Err(errors)
}

fn from_yaml<T: DeserializeOwned>(yaml: &str) -> Result<T, yaml_serde::Error> {
    if yaml.trim().is_empty() {
        yaml_serde::from_str("{}")
    } else {
        yaml_serde::from_str(yaml)
    }
}

/// The located problem behind `e`, raised while parsing `text` (the YAML of
/// `split`, possibly with entries blanked out).
fn locate(split: &Split<'_>, text: &str, e: &yaml_serde::Error) -> FrontMatterError {
    let mut offset = e.location().map_or(0, |l| l.index()).min(split.yaml.len());
    // The crate's messages carry their own "at line L column C" marks,
    // relative to the YAML alone; we locate the error ourselves.
    let message = strip_marks(&e.to_string());
    // Values rejected by our checked types are reported by the crate at the
    // start of their mapping; point at the value itself instead.
    if let Some(at) = rejected_value(&message).and_then(|value| find_value(text, offset, value)) {
        offset = at;
    }
    let offset = split.yaml_offset + offset.min(split.yaml.len());
    match crate::suggest::unknown_field(&message) {
        Some((message, help)) => FrontMatterError {
            offset,
            message,
            help: Some(help),
        },
        None => FrontMatterError {
            offset,
            message,
            help: None,
        },
    }
}

/// The key in `duplicate field `key`` (serde) or `duplicate entry with key "key"` (YAML).
fn duplicate_field(message: &str) -> Option<&str> {
    if let Some(rest) = message.strip_prefix("duplicate field `") {
        return Some(&rest[..rest.find('`')?]);
    }
    let rest = &message[message.find("duplicate entry with key \"")? + 26..];
    Some(&rest[..rest.find('"')?])
}

/// The key in `missing field `key``.
fn missing_field(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("missing field `")?;
    Some(&rest[..rest.find('`')?])
}

/// The top-level key a message's key path starts with (`sponsored[0].url: ...`).
fn problem_key(message: &str) -> Option<&str> {
    let (path, _) = message.split_once(": ")?;
    let key = path.split(['[', '.']).next()?;
    (!key.is_empty() && !key.contains(' ')).then_some(key)
}

/// Turns the bytes of `range` into spaces, keeping line breaks, so that the
/// entry disappears and every other offset stays where it was.
fn blank(text: &mut String, range: std::ops::Range<usize>) {
    let blanked: String = text[range.clone()]
        .bytes()
        .map(|b| {
            if b == b'\n' || b == b'\r' {
                b as char
            } else {
                ' '
            }
        })
        .collect();
    text.replace_range(range, &blanked);
}

/// One `key: value` of a block mapping at the top level of the YAML, with
/// the byte range from its key to the next entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    key: String,
    start: usize,
    end: usize,
}

/// The entries of the YAML's top-level block mapping, in order. Lines at
/// the first key's indentation start entries (comments, and `- ` items of a
/// compact sequence, do not). Empty for flow mappings and other shapes.
fn top_level_entries(yaml: &str) -> Vec<Entry> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut indent = None;
    let mut offset = 0;
    for line in yaml.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let content = line.trim_start_matches(' ');
        let this_indent = line.len() - content.len();
        let bare = content.trim_end();
        if bare.is_empty() || bare.starts_with('#') {
            continue;
        }
        let indent = *indent.get_or_insert(this_indent);
        if this_indent != indent || bare == "-" || bare.starts_with("- ") {
            continue;
        }
        if entries.is_empty() && bare.starts_with(['{', '[', '-', '?', '&', '!', '|', '>']) {
            return Vec::new();
        }
        if let Some(last) = entries.last_mut() {
            last.end = start;
        }
        entries.push(Entry {
            key: entry_key(content),
            start: start + this_indent,
            end: yaml.len(),
        });
    }
    entries
}

/// The key written at the start of `line` (`key:`, `"key":` or `'key':`).
fn entry_key(line: &str) -> String {
    if let Some(quote) = line.chars().next().filter(|c| matches!(c, '"' | '\'')) {
        let rest = &line[1..];
        return rest[..rest.find(quote).unwrap_or(rest.len())].to_string();
    }
    let end = line
        .match_indices(':')
        .map(|(i, _)| i)
        .find(|&i| line[i + 1..].starts_with([' ', '\t', '\r', '\n']) || i + 1 == line.len())
        .unwrap_or(line.len());
    line[..end].trim_end().to_string()
}

/// The file offset of top-level `key` in the front matter of `split`, if it
/// is written there.
pub fn key_offset(split: &Split<'_>, key: &str) -> Option<usize> {
    top_level_entries(split.yaml)
        .into_iter()
        .find(|e| e.key == key)
        .map(|e| split.yaml_offset + e.start)
}

/// Removes every " at line L column C" from a YAML error message.
fn strip_marks(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find(" at line ") {
        out.push_str(&rest[..i]);
        let after = &rest[i + " at line ".len()..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let tail = &after[digits..];
        match tail.strip_prefix(" column ") {
            Some(col) if digits > 0 => {
                rest = col.trim_start_matches(|c: char| c.is_ascii_digit());
            }
            _ => {
                out.push_str(" at line ");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The value quoted in one of our own "invalid <kind> `value`" messages.
fn rejected_value(message: &str) -> Option<&str> {
    // The crate may prefix the key path (`aliases[0]: invalid ...`).
    let rest = &message[message.find("invalid ")? + "invalid ".len()..];
    let start = rest.find('`')? + 1;
    let len = rest[start..].find('`')?;
    Some(&rest[start..start + len])
}

/// The offset of `value` written as a YAML scalar at or after `from`.
fn find_value(yaml: &str, from: usize, value: &str) -> Option<usize> {
    if value.is_empty() {
        return None;
    }
    let mut search = from.min(yaml.len());
    while let Some(i) = yaml[search..].find(value) {
        let at = search + i;
        let before = yaml[..at].trim_end_matches(' ').chars().next_back();
        let start = match before {
            Some('"' | '\'') => at - 1,
            _ => at,
        };
        let lead = yaml[..start].trim_end_matches(' ').chars().next_back();
        let next = yaml[at + value.len()..].chars().next();
        let whole = matches!(
            next,
            None | Some('"' | '\'' | '\n' | '\r' | ',' | ']' | ' ' | '#')
        );
        if whole && matches!(lead, Some(':' | '-' | '[' | ',')) {
            return Some(start);
        }
        search = at + value.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_finds_fences_and_offsets() {
        let text = "---\r\ntitle: a\r\n---\r\nbody\r\n";
        let s = split(text).unwrap();
        assert_eq!(s.yaml, "title: a\r\n");
        assert_eq!(s.yaml_offset, 5);
        assert_eq!(s.body, "body\r\n");
        assert_eq!(&text[s.body_offset..], "body\r\n");
    }

    #[test]
    fn unclosed_front_matter_is_an_error() {
        assert!(
            split("---\ntitle: a\n")
                .unwrap_err()
                .message
                .contains("never closed")
        );
    }

    #[test]
    fn no_front_matter_is_all_body() {
        let s = split("# hi\n").unwrap();
        assert_eq!((s.yaml, s.body), ("", "# hi\n"));
    }

    #[test]
    fn marks_are_stripped_from_messages() {
        assert_eq!(
            strip_marks(
                "did not find expected ',' at line 4 column 1, while parsing a flow sequence at line 3 column 7"
            ),
            "did not find expected ',', while parsing a flow sequence"
        );
        assert_eq!(
            strip_marks("at line but no numbers"),
            "at line but no numbers"
        );
    }

    #[test]
    fn checked_values_are_located_at_the_value() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)] // only the error matters here
        struct T {
            a: String,
            date: Date,
        }
        let text = "---\na: 2026-02-30x\ndate: \"2026-02-30\"\n---\n";
        let e = parse::<T>(&split(text).unwrap()).unwrap_err();
        assert_eq!(&text[e.offset..e.offset + 5], "\"2026");
    }

    /// Every problem as `line:col message`, for the page front matter in `text`.
    fn all_problems(text: &str) -> Vec<String> {
        let lines = crate::diagnostics::LineIndex::new(text);
        parse_all::<PageFrontMatter>(&split(text).unwrap())
            .unwrap_err()
            .into_iter()
            .map(|e| {
                let (line, col) = lines.line_col(e.offset);
                format!("{line}:{col} {}", e.message)
            })
            .collect()
    }

    #[test]
    fn every_front_matter_problem_is_found_in_one_parse() {
        let text = "---\ntitle: 5\ntagz: [cuda]\ndate: 2026-02-30\nsponsored:\n  - { label: x, url: \"javascript:alert(1)\" }\ndraft: maybe\nslug: a/b\ntitel: y\n---\nBody\n";
        assert_eq!(
            all_problems(text),
            [
                "2:1 missing field `signature`",
                "3:1 unknown key `tagz`",
                "4:7 invalid date `2026-02-30`: expected YYYY-MM-DD or an RFC 3339 date-time",
                "6:22 sponsored[0]: invalid URL `javascript:alert(1)`: only absolute http(s) URLs are allowed",
                "7:8 draft: invalid type: string \"maybe\", expected a boolean",
                "8:7 invalid slug `a/b`: use one URL segment of letters, digits, `-`, `_` and `.`",
                "9:1 unknown key `titel`",
            ]
        );
    }

    #[test]
    fn a_repeated_key_is_reported_at_each_repeat() {
        let text = "---\ntitle: T\ntags: [a]\nsignature: S\ntags: [b]\ntags: [c]\n---\n";
        assert_eq!(
            all_problems(text),
            ["5:1 duplicate field `tags`", "6:1 duplicate field `tags`"]
        );
    }

    #[test]
    fn a_required_key_with_a_bad_value_is_not_also_missing() {
        let text = "---\ntitle: [a]\nsignature: {x: 1}\n---\n";
        let all = all_problems(text);
        assert_eq!(all.len(), 2, "{all:?}");
        assert!(all.iter().all(|p| !p.contains("missing")), "{all:?}");
    }

    #[test]
    fn good_front_matter_parses_and_keys_are_found() {
        let text = "---\n# a comment\ntitle: \"T\"\nsignature: S\ntags:\n- a\n- b\ndescription: >\n  long\n---\n";
        let s = split(text).unwrap();
        let front = parse_all::<PageFrontMatter>(&s).unwrap();
        assert_eq!(front.tags, ["a", "b"]);
        let key = |k: &str| key_offset(&s, k).map(|o| &text[o..o + k.len()]);
        assert_eq!(key("description"), Some("description"));
        assert_eq!(key("tags"), Some("tags"));
        assert_eq!(key("a"), None);
        // Flow-style front matter has no block entries; its first problem is still found.
        let flow = "---\n{title: T, signature: S, tagz: 1, tagy: 2}\n---\n";
        assert_eq!(
            parse_all::<PageFrontMatter>(&split(flow).unwrap())
                .unwrap_err()
                .len(),
            1
        );
    }

    #[test]
    fn dates_are_checked() {
        for ok in ["2026-11-29", "2024-02-29", "2026-11-29T10:00:00Z"] {
            assert!(check_date(ok).is_ok(), "{ok}");
        }
        for bad in [
            "2026-13-01",
            "2023-02-29",
            "29-11-2026",
            "2026-11-29x",
            "yesterday",
        ] {
            assert!(check_date(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn slugs_and_paths_cannot_escape() {
        assert!(check_slug("cuda-oom").is_ok());
        for bad in ["..", ".", "a/b", "", "a b"] {
            assert!(check_slug(bad).is_err(), "{bad}");
        }
        assert!(check_site_path("old/path/").is_ok());
        for bad in ["../etc", "/a/../b", "https://x", "a\\b", "/"] {
            assert!(check_site_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn urls_must_be_http() {
        assert!(check_http_url("https://runpod.io?ref=x").is_ok());
        assert!(check_http_url("javascript:alert(1)").is_err());
        assert!(check_http_url(" JavaScript:alert(1)").is_err());
        assert!(check_http_url("data:text/html,x").is_err());
    }
}
