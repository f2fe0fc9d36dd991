//! Locating a YAML problem in the original file: the deserialiser's error
//! position, the top-level entries, and the key or value it concerns.

use super::*;

/// The located problem behind `e`, raised while parsing `text` (the YAML of
/// `split`, possibly with entries blanked out).
pub(super) fn locate(split: &Split<'_>, text: &str, e: &yaml_serde::Error) -> FrontMatterError {
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
pub(super) fn duplicate_field(message: &str) -> Option<&str> {
    if let Some(rest) = message.strip_prefix("duplicate field `") {
        return Some(&rest[..rest.find('`')?]);
    }
    let rest = &message[message.find("duplicate entry with key \"")? + 26..];
    Some(&rest[..rest.find('"')?])
}

/// The key in `missing field `key``.
pub(super) fn missing_field(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("missing field `")?;
    Some(&rest[..rest.find('`')?])
}

/// The top-level key a message's key path starts with (`sponsored[0].url: ...`).
pub(super) fn problem_key(message: &str) -> Option<&str> {
    let (path, _) = message.split_once(": ")?;
    let key = path.split(['[', '.']).next()?;
    (!key.is_empty() && !key.contains(' ')).then_some(key)
}

/// Turns the bytes of `range` into spaces, keeping line breaks, so that the
/// entry disappears and every other offset stays where it was.
pub(super) fn blank(text: &mut String, range: std::ops::Range<usize>) {
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
pub(super) struct Entry {
    pub(super) key: String,
    pub(super) start: usize,
    pub(super) end: usize,
}

/// The entries of the YAML's top-level block mapping, in order. Lines at
/// the first key's indentation start entries (comments, and `- ` items of a
/// compact sequence, do not). Empty for flow mappings and other shapes.
pub(super) fn top_level_entries(yaml: &str) -> Vec<Entry> {
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
pub(super) fn entry_key(line: &str) -> String {
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

/// Every top-level key written in the front matter of `split`, with the
/// file offset where its entry starts, in order.
pub fn key_offsets(split: &Split<'_>) -> Vec<(String, usize)> {
    top_level_entries(split.yaml)
        .into_iter()
        .map(|e| (e.key, split.yaml_offset + e.start))
        .collect()
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
pub(super) fn strip_marks(message: &str) -> String {
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
pub(super) fn rejected_value(message: &str) -> Option<&str> {
    // The crate may prefix the key path (`aliases[0]: invalid ...`).
    let rest = &message[message.find("invalid ")? + "invalid ".len()..];
    let start = rest.find('`')? + 1;
    let len = rest[start..].find('`')?;
    Some(&rest[start..start + len])
}

/// The offset of `value` written as a YAML scalar at or after `from`.
pub(super) fn find_value(yaml: &str, from: usize, value: &str) -> Option<usize> {
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
