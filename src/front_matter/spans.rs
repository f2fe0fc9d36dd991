//! Where each front-matter value is written: the YAML's nodes by key path
//! (`title`, `sponsored[0].url`, `aliases[1]`), with the offsets of their
//! keys and values, from the positions of the YAML parser's events.
//!
//! yaml_serde gives values without positions, so the same text is read a
//! second time by an event parser (`saphyr-parser`) when a position is
//! needed: to locate an error, never on the way of a good build.

use std::ops::Range;

use saphyr_parser::{Event, Parser};

/// One value written in the YAML: a scalar, a sequence or a mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Its key path, as serde names it: `title`, `sponsored[0].url`.
    pub path: String,
    /// How deep it is: 1 for the values of the top-level mapping.
    pub depth: usize,
    /// Byte offset of its key, when it is a mapping's value.
    pub key: Option<usize>,
    /// Byte range of the value as written (quotes included). A block
    /// collection ends where the next token starts.
    pub value: Range<usize>,
}

/// The nodes of one YAML text, in the order they are written. Offsets are
/// relative to the text given to [`Spans::of`] plus its base offset.
#[derive(Debug, Clone, Default)]
pub struct Spans {
    nodes: Vec<Node>,
    /// Whether the text parsed to its end (false after a syntax error:
    /// the nodes before it are still here).
    pub complete: bool,
}

/// `parent.key`, or `key` at the top.
pub fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// Char index → byte offset (the parser counts characters).
struct Offsets(Option<Vec<usize>>);

impl Offsets {
    fn new(text: &str) -> Offsets {
        if text.is_ascii() {
            return Offsets(None);
        }
        let mut table: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        table.push(text.len());
        Offsets(Some(table))
    }

    fn byte(&self, char_index: usize) -> usize {
        match &self.0 {
            None => char_index,
            Some(table) => table[char_index.min(table.len() - 1)],
        }
    }
}

/// A collection being read.
struct Open {
    /// Index of its node in `nodes`.
    node: usize,
    /// A mapping (waiting for a key, or for the value of `key`), or a
    /// sequence with its next index.
    kind: OpenKind,
    /// It is a mapping's key itself (`? [a, b]: x`): once closed, it
    /// stands for the key `?`.
    is_key: bool,
}

enum OpenKind {
    Mapping(Option<(String, usize)>),
    Sequence(usize),
}

impl Spans {
    /// The nodes of `yaml`, with every offset moved by `base` (the YAML's
    /// offset in its file).
    pub fn of(yaml: &str, base: usize) -> Spans {
        let offsets = Offsets::new(yaml);
        let mut nodes: Vec<Node> = Vec::new();
        let mut open: Vec<Open> = Vec::new();
        let mut parser = Parser::new_from_str(yaml);
        let mut complete = false;
        while let Some(event) = parser.next_event() {
            let Ok((event, span)) = event else { break };
            let start = base + offsets.byte(span.start.index());
            let end = base + offsets.byte(span.end.index());
            match event {
                Event::Scalar(..) | Event::Alias(_) => {
                    let text = match &event {
                        Event::Scalar(value, ..) => value.to_string(),
                        _ => "*".to_string(),
                    };
                    if let Some(slot) = place(&mut open, &nodes, &text, start) {
                        nodes.push(Node {
                            path: slot.0,
                            depth: open.len(),
                            key: slot.1,
                            value: start..end,
                        });
                    }
                }
                Event::MappingStart(..) | Event::SequenceStart(..) => {
                    let mapping = matches!(event, Event::MappingStart(..));
                    let (path, key, is_key) = match place(&mut open, &nodes, "?", start) {
                        Some((path, key)) => (path, key, false),
                        None => {
                            let parent = open
                                .last()
                                .map_or(String::new(), |o| nodes[o.node].path.clone());
                            (join(&parent, "?"), None, true)
                        }
                    };
                    nodes.push(Node {
                        path,
                        depth: open.len(),
                        key,
                        value: start..end,
                    });
                    open.push(Open {
                        node: nodes.len() - 1,
                        kind: if mapping {
                            OpenKind::Mapping(None)
                        } else {
                            OpenKind::Sequence(0)
                        },
                        is_key,
                    });
                }
                Event::MappingEnd | Event::SequenceEnd => {
                    if let Some(closed) = open.pop() {
                        nodes[closed.node].value.end = end.max(nodes[closed.node].value.start);
                        if closed.is_key
                            && let Some(Open {
                                kind: OpenKind::Mapping(pending),
                                ..
                            }) = open.last_mut()
                        {
                            *pending = Some(("?".into(), nodes[closed.node].value.start));
                        }
                    }
                }
                Event::StreamEnd => complete = true,
                _ => {}
            }
        }
        // The root node has depth 0; its own path is empty.
        Spans { nodes, complete }
    }

    /// Every node, in the order written.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The first node at `path`.
    pub fn get(&self, path: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.path == path)
    }

    /// The byte offset of `path`'s key (of its value when it has no key).
    pub fn key(&self, path: &str) -> Option<usize> {
        self.get(path).map(|n| n.key.unwrap_or(n.value.start))
    }

    /// The byte offset of `path`'s value.
    pub fn value(&self, path: &str) -> Option<usize> {
        self.get(path).map(|n| n.value.start)
    }

    /// The nodes written again at a path already written (repeated keys),
    /// in order.
    pub fn repeats<'a>(&'a self, path: &'a str) -> impl Iterator<Item = &'a Node> + 'a {
        self.nodes.iter().filter(move |n| n.path == path).skip(1)
    }

    /// The top-level mapping's entries: each key, with the byte range from
    /// the key to the next entry's key (the last ends with its value).
    pub fn entries(&self) -> Vec<(String, Range<usize>)> {
        let top: Vec<&Node> = self
            .nodes
            .iter()
            .filter(|n| n.depth == 1 && n.key.is_some())
            .collect();
        top.iter()
            .enumerate()
            .map(|(i, n)| {
                let start = n.key.unwrap_or(n.value.start);
                let end = top
                    .get(i + 1)
                    .and_then(|next| next.key)
                    .unwrap_or(n.value.end)
                    .max(start);
                (n.path.clone(), start..end)
            })
            .collect()
    }
}

/// Where a new value goes in the innermost open collection: its path and
/// key offset, or `None` when it is a mapping's key (recorded as pending).
fn place(
    open: &mut [Open],
    nodes: &[Node],
    text: &str,
    start: usize,
) -> Option<(String, Option<usize>)> {
    let Some(top) = open.last_mut() else {
        return Some((String::new(), None));
    };
    let parent = &nodes[top.node].path;
    match &mut top.kind {
        OpenKind::Sequence(next) => {
            let path = format!("{parent}[{next}]");
            *next += 1;
            Some((path, None))
        }
        OpenKind::Mapping(pending) => match pending.take() {
            Some((key, at)) => Some((join(parent, &key), Some(at))),
            None => {
                *pending = Some((text.to_string(), start));
                None
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at<'a>(yaml: &'a str, spans: &Spans, path: &str) -> (&'a str, &'a str) {
        let n = spans
            .get(path)
            .unwrap_or_else(|| panic!("no node {path}: {spans:?}"));
        let key = n.key.map_or("", |k| &yaml[k..k + 1]);
        (key, &yaml[n.value.clone()])
    }

    #[test]
    fn nodes_are_found_in_block_and_flow_style() {
        let yaml = "title: \"Fehler ü\"\n# note\nsponsored:\n  - label: a\n    url: https://a.test/\n  - {label: b, url: 'https://b.test/'}\naliases: [/x/, \"/y/\"]\n";
        let spans = Spans::of(yaml, 0);
        assert!(spans.complete);
        assert_eq!(at(yaml, &spans, "title"), ("t", "\"Fehler ü\""));
        assert_eq!(
            at(yaml, &spans, "sponsored[0].url"),
            ("u", "https://a.test/")
        );
        assert_eq!(
            at(yaml, &spans, "sponsored[1].url"),
            ("u", "'https://b.test/'")
        );
        assert_eq!(at(yaml, &spans, "aliases[1]"), ("", "\"/y/\""));
        let keys: Vec<String> = spans.entries().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["title", "sponsored", "aliases"]);
    }

    #[test]
    fn offsets_are_bytes_after_multibyte_text_and_moved_by_the_base() {
        let yaml = "title: ÄÖÜ — 中文\nslug: \"a/b\"\n";
        let spans = Spans::of(yaml, 4);
        let n = spans.get("slug").unwrap();
        assert_eq!(&yaml[n.value.start - 4..n.value.end - 4], "\"a/b\"");
        assert_eq!(&yaml[n.key.unwrap() - 4..][..4], "slug");
    }

    #[test]
    fn entries_cover_each_top_level_key_up_to_the_next() {
        let yaml = "a: 1\nb:\n  - x\n  - y\nc: {d: 2}\n";
        let spans = Spans::of(yaml, 0);
        let entries = spans.entries();
        let texts: Vec<&str> = entries.iter().map(|(_, r)| &yaml[r.clone()]).collect();
        assert_eq!(texts, ["a: 1\n", "b:\n  - x\n  - y\n", "c: {d: 2}"]);
        // A flow mapping at the top has entries too.
        let flow = "{a: 1, b: 2}";
        let entries = Spans::of(flow, 0).entries();
        assert_eq!(&flow[entries[0].1.clone()], "a: 1, ");
    }

    #[test]
    fn repeated_keys_are_listed_after_the_first() {
        let yaml = "tags: [a]\ntitle: t\ntags: [b]\ntags: [c]\n";
        let spans = Spans::of(yaml, 0);
        let repeats: Vec<usize> = spans.repeats("tags").filter_map(|n| n.key).collect();
        assert_eq!(repeats, [19, 29]);
    }

    #[test]
    fn a_syntax_error_keeps_what_came_before() {
        let spans = Spans::of("a: 1\nb: [unclosed\nc: 2\n", 0);
        assert!(!spans.complete);
        assert!(spans.get("a").is_some());
        assert!(spans.get("c").is_none());
    }

    #[test]
    fn complex_keys_and_aliases_do_not_confuse_the_paths() {
        let yaml = "? [k1, k2]\n: v\nbase: &b x\nref: *b\nlast: 1\n";
        let spans = Spans::of(yaml, 0);
        assert_eq!(at(yaml, &spans, "ref"), ("r", "*b"));
        assert_eq!(at(yaml, &spans, "last"), ("l", "1"));
    }
}
