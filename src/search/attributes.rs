//! The attributes of an element as Pagefind 1.6.0 reads them
//! (`src/fossick/parser.rs`, MIT licence, Copyright (c) 2022 CloudCannon):
//! `data-pagefind-filter`, `-meta`, `-sort` and `-default-meta` lists,
//! `key[attribute]` references, and how a value's text is normalised.

use std::sync::LazyLock;

use regex::Regex;

static ALL_SPACES: LazyLock<Regex> = LazyLock::new(|| Regex::new("\\s").unwrap());
static SENTENCE_CHARS: LazyLock<Regex> = LazyLock::new(|| Regex::new("[\\w'\"\\)\\$\\*]").unwrap());
static ATTRIBUTE_MATCH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new("^\\s*(?P<name>[^:\\[\\]]+)\\[(?P<attribute>.+)\\]\\s*$").unwrap());

/// `filter:value` names its value; a bare `filter` takes the element's
/// text (none when it has no text).
pub fn attribute_pair(input: &str, text: &str) -> Option<(String, String)> {
    match input.split_once(':') {
        Some((key, value)) => Some((key.to_owned(), normalize_content(value))),
        None if text.is_empty() => None,
        None => Some((input.to_owned(), normalize_content(text))),
    }
}

/// The attributes of a start tag that the parser reads.
pub struct Attrs<'a, 'b> {
    pub all: &'b [(&'a str, &'a str)],
}

impl<'a> Attrs<'a, '_> {
    /// The first attribute named `name` (as lol_html finds it).
    pub fn get(&self, name: &str) -> Option<&'a str> {
        self.all
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|&(_, v)| v)
    }

    /// The anchor id an element with an `id` takes: its `id` with all
    /// white space taken out (nothing else changed, entities and all).
    pub fn anchor_id(&self) -> Option<String> {
        self.get("id")
            .map(|id| ALL_SPACES.replace_all(id, "").into_owned())
    }

    /// An anchor's `data-pagefind-title`, normalised, when it says any.
    pub fn anchor_title(&self) -> Option<String> {
        self.get("data-pagefind-title")
            .map(normalize_content)
            .filter(|t| !t.is_empty())
    }

    /// Whether `data-pagefind-ignore` is there, whatever its value.
    pub fn ignores(&self) -> bool {
        self.get("data-pagefind-ignore").is_some()
    }

    /// Whether `data-pagefind-ignore` excludes the element and all in it
    /// (any value but none, `index` or `true`).
    pub fn excludes(&self) -> bool {
        self.get("data-pagefind-ignore")
            .is_some_and(|v| !matches!(v.to_ascii_lowercase().as_str(), "" | "index" | "true"))
    }

    /// Whether any attribute is an `id` or a `data-pagefind-…`: the only
    /// ones that change how an element is read (an `img`'s `src` and
    /// `alt` aside).
    pub fn any_read(&self) -> bool {
        self.all.iter().any(|(name, _)| {
            name.eq_ignore_ascii_case("id")
                || name
                    .get(..14)
                    .is_some_and(|p| p.eq_ignore_ascii_case("data-pagefind-"))
        })
    }
}

/// Pagefind's `normalize_content`: entities decoded, the ends trimmed, and
/// runs of line breaks and of white space made one space.
///
/// Pagefind does it with three regular expressions (trim `[\n\r\s]`,
/// then `(\n|\r\n)+` to a space, then `\s{2,}` to a space); in one pass,
/// that is: every run of white space becomes one space, except a single
/// white-space character other than a line feed, which stays as it is.
pub fn normalize_content(content: &str) -> String {
    let decoded = html_escape::decode_html_entities(content);
    let content = decoded.trim();
    let mut out = String::with_capacity(content.len());
    let mut chars = content.chars().peekable();
    while let Some(c) = chars.next() {
        if !c.is_whitespace() {
            out.push(c);
            continue;
        }
        let mut run = 1;
        while chars.next_if(|c| c.is_whitespace()).is_some() {
            run += 1;
        }
        out.push(if run == 1 && c != '\n' { c } else { ' ' });
    }
    out
}

/// `filter`, `meta`, `sort` and `default-meta` attribute values: comma
/// separated keys, `key:literal`, or `key[attribute]` for another
/// attribute's value.
pub fn parse_attr_string(input: &str, attrs: &Attrs) -> Vec<String> {
    if let Some((keys, literal)) = input.split_once(':') {
        let mut keys = parse_attr_string(keys, attrs);
        if let Some(last) = keys.last_mut() {
            last.push(':');
            last.push_str(literal);
        }
        return keys;
    }
    input
        .split(',')
        .map(|chunk| {
            let chunk = chunk.trim();
            match ATTRIBUTE_MATCH.captures(chunk) {
                Some(found) => format!(
                    "{}:{}",
                    &found["name"],
                    attrs.get(&found["attribute"]).unwrap_or_default()
                ),
                None => chunk.to_owned(),
            }
        })
        .collect()
}

pub fn ends_sentence(value: &str) -> bool {
    value.chars().last().is_some_and(|c| {
        if c.is_ascii() {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '\'' | '"' | ')' | '$' | '*')
        } else {
            SENTENCE_CHARS.is_match(c.encode_utf8(&mut [0; 4]))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pagefind's own `normalize_content`.
    fn pagefinds(content: &str) -> String {
        static TRIM: LazyLock<Regex> =
            LazyLock::new(|| Regex::new("^[\n\r\\s]+|[\n\r\\s]+$").unwrap());
        static NEWLINES: LazyLock<Regex> = LazyLock::new(|| Regex::new("(\n|\r\n)+").unwrap());
        static SPACES: LazyLock<Regex> = LazyLock::new(|| Regex::new("\\s{2,}").unwrap());
        let (trim, newlines, spaces) = (&*TRIM, &*NEWLINES, &*SPACES);
        let content = html_escape::decode_html_entities(content);
        let content = trim.replace_all(&content, "");
        let content = newlines.replace_all(&content, " ");
        spaces.replace_all(&content, " ").into_owned()
    }

    #[test]
    fn content_is_normalised_as_pagefinds_regular_expressions_do() {
        let pieces = [
            " ", "\n", "\r", "\r\n", "\t", "\u{a0}", "&nbsp;", "\u{2003}", "\u{85}", "a", "b c",
            "&amp;", "é", "\u{200b}", "x\ny",
        ];
        // Every string of up to four pieces, and longer ones from a fixed
        // sequence.
        let mut cases = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = cases
                .iter()
                .flat_map(|c| pieces.iter().map(move |p| format!("{c}{p}")))
                .collect();
            cases.extend(longer);
            cases.dedup();
        }
        let mut seed = 7u64;
        for _ in 0..2000 {
            let mut case = String::new();
            for _ in 0..12 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                case.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            cases.push(case);
        }
        for case in &cases {
            assert_eq!(normalize_content(case), pagefinds(case), "{case:?}");
        }
        assert_eq!(normalize_content(" a \r\n\r\n b\tc\n"), "a b\tc");
    }
}
