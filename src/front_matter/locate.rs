//! Locating a YAML problem in the original file: the deserialiser's error
//! position, the top-level entries, and the key or value it concerns.

use super::*;

/// The deserialiser's error, with the key path of the value it concerns.
pub(super) type PathError = serde_path_to_error::Error<yaml_serde::Error>;

/// The key path of `e` in [`Spans`]' notation (`sponsored[0].url`; empty
/// for the whole document).
pub(super) fn path_of(e: &PathError) -> String {
    use serde_path_to_error::Segment;
    let mut path = String::new();
    for segment in e.path().iter() {
        match segment {
            Segment::Seq { index } => path.push_str(&format!("[{index}]")),
            Segment::Map { key } => path = spans::join(&path, key),
            Segment::Enum { variant } => path = spans::join(&path, variant),
            Segment::Unknown => path = spans::join(&path, "?"),
        }
    }
    path
}

/// The located problem behind `e`, raised while parsing `text` (the YAML of
/// `split`, possibly with entries blanked out), whose nodes are `nodes`
/// (offsets in the file).
pub(super) fn locate(
    split: &Split<'_>,
    text: &str,
    nodes: &Spans,
    e: &PathError,
) -> FrontMatterError {
    let inner = e.inner();
    // The crate's messages carry their own "at line L column C" marks,
    // relative to the YAML alone; we locate the error ourselves.
    let message = strip_marks(&inner.to_string());
    let path = path_of(e);
    let reported = split.yaml_offset + inner.location().map_or(0, |l| l.index()).min(text.len());
    let at_node = if let Some(key) = duplicate_field(&message) {
        // Reported at the mapping; the repeat is what to point at.
        nodes
            .repeats(&spans::join(&path, key))
            .next()
            .and_then(|n| n.key)
    } else if missing_field(&message).is_some() {
        nodes.value(&path)
    } else if message.contains("unknown field `") {
        nodes.key(&path)
    } else {
        // A rejected value: the crate reports checked values at the start
        // of their mapping; the path names the value itself.
        nodes.value(&path)
    };
    // Where the crate points further in (a syntax error inside the value),
    // it knows better than the node's start.
    let offset = match at_node {
        Some(at) if at >= reported => at,
        _ => reported,
    };
    // `text` may end with placeholders for missing keys (see
    // `parse_all`), which are not in the file: a node there points at the
    // end of the real front matter.
    let offset = offset.min(split.yaml_offset + split.yaml.len());
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
    if let Some(i) = message.find("duplicate field `") {
        let rest = &message[i + "duplicate field `".len()..];
        return Some(&rest[..rest.find('`')?]);
    }
    let rest = &message[message.find("duplicate entry with key \"")? + 26..];
    Some(&rest[..rest.find('"')?])
}

/// The key in `missing field `key``.
pub(super) fn missing_field(message: &str) -> Option<&str> {
    let rest = &message[message.find("missing field `")? + "missing field `".len()..];
    Some(&rest[..rest.find('`')?])
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

/// The top-level entries of `yaml`, to blank out one at a time: from its
/// nodes when it parses; after a syntax error, where the nodes stop, from
/// its lines (a line at the first key's indentation starts an entry).
pub(super) fn entries(yaml: &str) -> Vec<Entry> {
    let spans = Spans::of(yaml, 0);
    if !spans.complete {
        return line_entries(yaml);
    }
    spans
        .entries()
        .into_iter()
        .map(|(key, range)| Entry {
            key,
            start: range.start,
            end: range.end,
        })
        .collect()
}

/// The entries of the YAML's top-level block mapping, by its lines, in
/// order. Lines at the first key's indentation start entries (comments,
/// and `- ` items of a compact sequence, do not). Empty for flow mappings
/// and other shapes.
fn line_entries(yaml: &str) -> Vec<Entry> {
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
