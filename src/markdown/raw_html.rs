//! A small tokenizer for the raw HTML pieces of Markdown: start and end
//! tags with their attributes and byte offsets, following the WHATWG
//! tokenizer closely enough to locate problems in the source. It builds no
//! tree and never recurses; the sanitiser (html5ever) decides what the HTML
//! means, this only says where each tag and attribute was written.

/// One attribute of a start tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attribute<'a> {
    /// Lowercased name.
    pub name: String,
    /// The value as written (not entity-decoded); empty when there is none.
    pub value: &'a str,
    /// Byte offset of the name in the scanned text.
    pub at: usize,
}

/// A tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tag<'a> {
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
pub(crate) fn tags(html: &str) -> Vec<Tag<'_>> {
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
            out.push(Tag::End { name, at: lt });
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
            out.push(Tag::Start {
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
        }
        attributes.push(Attribute {
            name: attr_name,
            value,
            at: name_at,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn starts(html: &str) -> Vec<(String, usize, Vec<(String, &str)>)> {
        tags(html)
            .into_iter()
            .filter_map(|t| match t {
                Tag::Start {
                    name,
                    at,
                    attributes,
                } => Some((
                    name,
                    at,
                    attributes.into_iter().map(|a| (a.name, a.value)).collect(),
                )),
                Tag::End { .. } => None,
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
    fn end_tags_and_stray_brackets() {
        let t = tags("a < b <3 </div><div>");
        assert_eq!(
            t,
            [
                Tag::End {
                    name: "div".into(),
                    at: 9
                },
                Tag::Start {
                    name: "div".into(),
                    at: 15,
                    attributes: vec![]
                }
            ]
        );
    }
}
