//! A small tokenizer for the raw HTML pieces of Markdown: start and end
//! tags with their attributes and byte offsets, following the WHATWG
//! tokenizer closely enough to locate problems in the source. It builds no
//! tree and never recurses; the sanitiser (html5ever) decides what the HTML
//! means, this only says where each tag and attribute was written.

use pulldown_cmark::{Event, Tag, TagEnd};

/// One attribute of a start tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attribute<'a> {
    /// Lowercased name.
    pub name: String,
    /// The value as written (not entity-decoded); empty when there is none.
    pub value: &'a str,
    /// Byte offset of the name in the scanned text.
    pub at: usize,
    /// Byte offset just past the attribute (its value's closing quote).
    pub end: usize,
}

impl Attribute<'_> {
    /// Byte offset of the value in `scanned`, the text the tag was read
    /// from (of the name when the value is not a slice of it).
    pub fn value_at(&self, scanned: &str) -> usize {
        (self.value.as_ptr() as usize)
            .checked_sub(scanned.as_ptr() as usize)
            .filter(|&i| i + self.value.len() <= scanned.len())
            .unwrap_or(self.at)
    }
}

/// A tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HtmlTag<'a> {
    /// `<name ...>`.
    Start {
        /// Lowercased name.
        name: String,
        /// Byte offset of the `<`.
        at: usize,
        /// Attributes in the order written.
        attributes: Vec<Attribute<'a>>,
    },
    /// `</name>`.
    End {
        /// Lowercased name.
        name: String,
        /// Byte offset of the `<`.
        at: usize,
    },
}

/// The raw HTML of one HTML block, which pulldown-cmark gives line by line
/// (a tag may span lines), gathered into one text, with where each line
/// sits in the source so that offsets in the text map back to the file.
#[derive(Debug, Default)]
pub(crate) struct Block {
    /// The block's HTML.
    pub text: String,
    /// `(offset in text, offset in source)` of each line.
    lines: Vec<(usize, usize)>,
}

impl Block {
    /// A block holding `text` written at `source`.
    pub fn single(text: &str, source: usize) -> Block {
        let mut block = Block::default();
        block.push(text, source);
        block
    }

    /// Adds a line written at byte `source` of the source.
    pub fn push(&mut self, text: &str, source: usize) {
        self.lines.push((self.text.len(), source));
        self.text.push_str(text);
    }

    /// The source offset of byte `at` of the text.
    pub fn source(&self, at: usize) -> usize {
        let i = self.lines.partition_point(|&(start, _)| start <= at);
        let (start, source) = self.lines[i.saturating_sub(1)];
        source + (at - start)
    }
}

/// What [`Gatherer::gather`] made of an event.
pub(crate) enum Gathered {
    /// Not raw HTML.
    Other,
    /// A line of an HTML block, kept until the block ends.
    Pending,
    /// A whole piece of raw HTML: an HTML block, or inline HTML (`true`).
    Done(Block, bool),
    /// Inline HTML that is text to a browser: inside a raw-text element
    /// (`<title>`, `<textarea>`...) that an earlier piece opened. Its
    /// links are not links; it still counts where nesting is counted.
    Text(Block),
}

/// Gathers the lines of each HTML block from pulldown-cmark's events.
#[derive(Debug, Default)]
pub(crate) struct Gatherer {
    open: Option<Block>,
    /// The raw-text element an inline piece opened and none has closed:
    /// until its end tag, the inline HTML that follows is its text.
    raw_text: Option<String>,
}

impl Gatherer {
    /// Takes the event written at byte `source`.
    pub fn gather(&mut self, event: &Event<'_>, source: usize) -> Gathered {
        match event {
            Event::Start(Tag::HtmlBlock) => {
                self.open = Some(Block::default());
                Gathered::Pending
            }
            Event::Html(text) => match self.open.as_mut() {
                Some(block) => {
                    block.push(text, source);
                    Gathered::Pending
                }
                None => Gathered::Done(Block::single(text, source), false),
            },
            Event::End(TagEnd::HtmlBlock) => {
                Gathered::Done(self.open.take().unwrap_or_default(), false)
            }
            Event::InlineHtml(text) => {
                if let Some(name) = &self.raw_text {
                    if find_ci(text.as_bytes(), 0, format!("</{name}").as_bytes()).is_none() {
                        return Gathered::Text(Block::single(text, source));
                    }
                    self.raw_text = None;
                }
                self.raw_text = unclosed_raw_text(text);
                Gathered::Done(Block::single(text, source), true)
            }
            _ => Gathered::Other,
        }
    }
}

/// The raw-text element that `html` opens last and does not close.
fn unclosed_raw_text(html: &str) -> Option<String> {
    let (name, at) = tags(html).into_iter().rev().find_map(|tag| match tag {
        HtmlTag::Start { name, at, .. } if RAW_TEXT.contains(&name.as_str()) => Some((name, at)),
        _ => None,
    })?;
    let close = format!("</{name}");
    find_ci(html.as_bytes(), at, close.as_bytes())
        .is_none()
        .then_some(name)
}

/// Elements whose content is text up to their end tag.
const RAW_TEXT: [&str; 8] = [
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes",
];

/// Elements that have no end tag and so never nest anything.
pub(crate) const VOID: [&str; 14] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

fn find_ci(haystack: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
        .map(|i| from + i)
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

/// Every tag in `html`, in order. Comments, doctypes and the content of
/// raw-text elements (`<script>`, `<style>`, `<textarea>`...) are skipped.
pub(crate) fn tags(html: &str) -> Vec<HtmlTag<'_>> {
    let bytes = html.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(lt) = bytes[i..].iter().position(|&b| b == b'<').map(|p| i + p) {
        let next = bytes.get(lt + 1).copied().unwrap_or(b' ');
        if html[lt..].starts_with("<!--") {
            i = html[lt + 4..]
                .find("-->")
                .map_or(bytes.len(), |e| lt + 4 + e + 3);
        } else if next == b'!' || next == b'?' {
            i = html[lt..].find('>').map_or(bytes.len(), |e| lt + e + 1);
        } else if next == b'/' && bytes.get(lt + 2).is_some_and(u8::is_ascii_alphabetic) {
            let (name, _, end) = tag_body(html, lt + 2);
            out.push(HtmlTag::End { name, at: lt });
            i = end;
        } else if next.is_ascii_alphabetic() {
            let (name, attributes, end) = tag_body(html, lt + 1);
            i = end;
            if name == "plaintext" {
                i = bytes.len();
            } else if RAW_TEXT.contains(&name.as_str()) {
                let close = format!("</{name}");
                i = find_ci(bytes, end, close.as_bytes()).unwrap_or(bytes.len());
            }
            out.push(HtmlTag::Start {
                name,
                at: lt,
                attributes,
            });
        } else {
            i = lt + 1;
        }
    }
    out
}

/// Reads a tag's name and attributes from `start` (just after `<` or
/// `</`); returns them and the offset after the closing `>`.
fn tag_body(html: &str, start: usize) -> (String, Vec<Attribute<'_>>, usize) {
    let bytes = html.as_bytes();
    let stop = |b: u8| is_space(b) || b == b'/' || b == b'>';
    let mut i = start;
    while i < bytes.len() && !stop(bytes[i]) {
        i += 1;
    }
    let name = html[start..i].to_ascii_lowercase();
    let mut attributes = Vec::new();
    loop {
        while i < bytes.len() && (is_space(bytes[i]) || bytes[i] == b'/') {
            i += 1;
        }
        if i >= bytes.len() {
            return (name, attributes, i);
        }
        if bytes[i] == b'>' {
            return (name, attributes, i + 1);
        }
        // The first character of a name may be `=`, as in the WHATWG rules.
        let name_at = i;
        i += 1;
        while i < bytes.len() && !stop(bytes[i]) && bytes[i] != b'=' {
            i += 1;
        }
        let attr_name = html[name_at..i].to_ascii_lowercase();
        let mut j = i;
        while j < bytes.len() && is_space(bytes[j]) {
            j += 1;
        }
        let mut value = "";
        let mut end = i;
        if bytes.get(j) == Some(&b'=') {
            j += 1;
            while j < bytes.len() && is_space(bytes[j]) {
                j += 1;
            }
            match bytes.get(j) {
                Some(&q @ (b'"' | b'\'')) => {
                    let end = bytes[j + 1..]
                        .iter()
                        .position(|&b| b == q)
                        .map_or(bytes.len(), |e| j + 1 + e);
                    value = &html[j + 1..end];
                    j = (end + 1).min(bytes.len());
                }
                Some(_) => {
                    let begin = j;
                    while j < bytes.len() && !is_space(bytes[j]) && bytes[j] != b'>' {
                        j += 1;
                    }
                    value = &html[begin..j];
                }
                None => {}
            }
            i = j;
            end = j;
        }
        attributes.push(Attribute {
            name: attr_name,
            value,
            at: name_at,
            end,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A start tag's name, offset and `(name, value)` attributes.
    type Start<'a> = (String, usize, Vec<(String, &'a str)>);

    fn starts(html: &str) -> Vec<Start<'_>> {
        tags(html)
            .into_iter()
            .filter_map(|t| match t {
                HtmlTag::Start {
                    name,
                    at,
                    attributes,
                } => Some((
                    name,
                    at,
                    attributes.into_iter().map(|a| (a.name, a.value)).collect(),
                )),
                HtmlTag::End { .. } => None,
            })
            .collect()
    }

    #[test]
    fn reads_attributes_in_every_quoting() {
        let got = starts("<A HREF = 'x>y' title=\"a b\" data=v disabled/>");
        assert_eq!(
            got,
            [(
                "a".to_string(),
                0,
                vec![
                    ("href".to_string(), "x>y"),
                    ("title".to_string(), "a b"),
                    ("data".to_string(), "v"),
                    ("disabled".to_string(), ""),
                ]
            )]
        );
    }

    #[test]
    fn skips_comments_and_raw_text() {
        let got = starts("<!-- <a href=x> --><script>'<img src=y>'</script><p>");
        let names: Vec<_> = got.iter().map(|(n, ..)| n.as_str()).collect();
        assert_eq!(names, ["script", "p"]);
        assert_eq!(got[1].1, 49);
    }

    #[test]
    fn a_block_maps_offsets_back_to_its_lines() {
        let mut block = Block::default();
        block.push("<p><a title=x\n", 100);
        block.push("  href=y>", 200);
        let HtmlTag::Start { attributes, .. } = &tags(&block.text)[1] else {
            panic!()
        };
        assert_eq!(block.source(attributes[1].at), 202);
        assert_eq!(block.source(0), 100);
    }

    #[test]
    fn end_tags_and_stray_brackets() {
        let t = tags("a < b <3 </div><div>");
        assert_eq!(
            t,
            [
                HtmlTag::End {
                    name: "div".into(),
                    at: 9
                },
                HtmlTag::Start {
                    name: "div".into(),
                    at: 15,
                    attributes: vec![]
                }
            ]
        );
    }
}
