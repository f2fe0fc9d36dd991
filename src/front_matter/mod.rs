//! YAML front matter: splitting it from the body and deserialising it into
//! typed structs. The only module that knows the YAML crate.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

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

impl PageFrontMatter {
    /// The page's terms in taxonomy `name` (one of
    /// [`crate::config::TAXONOMIES`]; none for any other name).
    pub fn terms(&self, name: &str) -> &[String] {
        match name {
            "frameworks" => &self.frameworks,
            "tools" => &self.tools,
            "tags" => &self.tags,
            _ => &[],
        }
    }
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

mod locate;
pub mod spans;
mod values;

use locate::*;
pub use spans::Spans;
pub use values::{Date, HttpUrl, SitePath, Slug, TemplateName};

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
    let entries = entries(split.yaml);
    let mut text = split.yaml.to_string();
    let mut blanked = vec![false; entries.len()];
    let mut errors = Vec::new();
    let mut next = Some(first);
    // Each round blanks an entry or appends a placeholder for one, so the
    // rounds are bounded by twice the number of entries.
    for _ in 0..=2 * entries.len() + 1 {
        let Some(e) = next.take() else { break };
        let message = strip_marks(&e.inner().to_string());
        // A missing field is raised after every entry was read without a
        // problem; once a placeholder is appended, any other problem is the
        // placeholder's own, not the author's.
        if text.len() > split.yaml.len() && missing_field(&message).is_none() {
            break;
        }
        let nodes = Spans::of(&text, split.yaml_offset);
        let problem = locate(split, &text, &nodes, &e);
        let at = problem.offset - split.yaml_offset;
        // The entry the problem is in, else the one its key path starts at.
        let top = path_of(&e);
        let top = top.split(['[', '.']).next().unwrap_or_default();
        let entry = entries
            .iter()
            .rposition(|entry| entry.start <= at && at < entry.end)
            .or_else(|| entries.iter().position(|entry| entry.key == top));
        let missing = missing_field(&message).map(str::to_string);
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

fn from_yaml<T: DeserializeOwned>(yaml: &str) -> Result<T, PathError> {
    let yaml = if yaml.trim().is_empty() { "{}" } else { yaml };
    serde_path_to_error::deserialize(yaml_serde::Deserializer::from_str(yaml))
}

#[cfg(test)]
mod tests {
    use super::values::*;
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

    /// Found by the `front_matter` fuzz target: with no front matter, the
    /// second missing key was located inside the first one's placeholder,
    /// past the end of the file.
    #[test]
    fn missing_keys_are_located_inside_the_file_even_with_no_front_matter() {
        for text in ["", "body only\n", "---\n---\n", "---\n# c\n---\nx"] {
            let split = split(text).unwrap();
            let all = parse_all::<PageFrontMatter>(&split).unwrap_err();
            assert!(all.len() >= 2, "{text:?}: {all:?}");
            for e in all {
                assert!(e.offset <= text.len(), "{text:?}: {e:?}");
                assert!(
                    e.offset >= split.yaml_offset.min(text.len()),
                    "{text:?}: {e:?}"
                );
            }
        }
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
    fn rejected_values_are_located_by_their_key_path_not_their_text() {
        // The same text earlier in a free-text field, YAML escapes, a
        // multi-byte title, flow style and a list item.
        let text = "---\ntitle: \"Ärger: a/b\"\nsignature: a/b\nslug: a/b\naliases: [/ok/, \"/ok/../../etc\"]\nsponsored: [{label: x, url: \"java\\x73cript:alert(1)\"}]\n---\n";
        assert_eq!(
            all_problems(text),
            [
                "4:7 invalid slug `a/b`: use one URL segment of letters, digits, `-`, `_` and `.`",
                "5:17 aliases: invalid path `/ok/../../etc`: use a site path like `old/page/` without `..`, `\\` or a scheme",
                "6:29 sponsored[0]: invalid URL `javascript:alert(1)`: only absolute http(s) URLs are allowed",
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
        let spans = Spans::of(s.yaml, s.yaml_offset);
        let key = |k: &str| spans.key(k).map(|o| &text[o..o + k.len()]);
        assert_eq!(key("description"), Some("description"));
        assert_eq!(key("tags"), Some("tags"));
        assert_eq!(key("a"), None);
        // Flow-style front matter: every problem is found too.
        let flow = "---\n{title: T, signature: S, tagz: 1, tagy: 2}\n---\n";
        assert_eq!(
            all_problems(flow),
            ["2:26 unknown key `tagz`", "2:35 unknown key `tagy`"]
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
