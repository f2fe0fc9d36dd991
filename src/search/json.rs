//! A page's fragment as JSON, byte for byte what `serde_json::to_string`
//! makes of it (Pagefind writes its fragments with serde_json, and the
//! bundle must be its bytes), with strings escaped eight bytes at a time:
//! a fragment holds the page's whole text, ten to thirty kilobytes, and
//! serde_json looks at it byte by byte.

use super::words::{Anchor, Fragment};

/// Appends `fragment` as compact JSON to `out`, its fields in their
/// declared order.
pub fn fragment(fragment: &Fragment, out: &mut Vec<u8>) {
    out.reserve(fragment.content.len() + 256);
    out.extend_from_slice(b"{\"url\":");
    string(out, &fragment.url);
    out.extend_from_slice(b",\"content\":");
    string(out, &fragment.content);
    out.extend_from_slice(b",\"word_count\":");
    out.extend_from_slice(fragment.word_count.to_string().as_bytes());
    out.extend_from_slice(b",\"filters\":{");
    list(out, &fragment.filters, |out, (key, values)| {
        string(out, key);
        out.extend_from_slice(b":[");
        list(out, values, |out, value| string(out, value));
        out.push(b']');
    });
    out.extend_from_slice(b"},\"meta\":{");
    list(out, &fragment.meta, |out, (key, value)| {
        string(out, key);
        out.push(b':');
        string(out, value);
    });
    out.extend_from_slice(b"},\"anchors\":[");
    list(out, &fragment.anchors, anchor);
    out.extend_from_slice(b"]}");
}

/// `items` written by `each`, separated by commas.
fn list<T>(
    out: &mut Vec<u8>,
    items: impl IntoIterator<Item = T>,
    mut each: impl FnMut(&mut Vec<u8>, T),
) {
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        each(out, item);
    }
}

fn anchor(out: &mut Vec<u8>, anchor: &Anchor) {
    out.extend_from_slice(b"{\"element\":");
    string(out, &anchor.element);
    out.extend_from_slice(b",\"id\":");
    string(out, &anchor.id);
    out.extend_from_slice(b",\"text\":");
    string(out, &anchor.text);
    if let Some(title) = &anchor.title {
        out.extend_from_slice(b",\"title\":");
        string(out, title);
    }
    out.extend_from_slice(b",\"location\":");
    out.extend_from_slice(anchor.location.to_string().as_bytes());
    out.push(b'}');
}

/// Whether any of the eight bytes in `word` is a quote, a backslash or a
/// control character (below 0x20): the bytes JSON escapes.
#[inline]
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_in = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    // A byte below 0x20: subtracting 0x20 borrows into its high bit (a
    // byte of 0x80 or more is not flagged: `!word` clears it).
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    control | zero_in(word ^ (ONES * u64::from(b'"'))) | zero_in(word ^ (ONES * u64::from(b'\\')))
        != 0
}

/// `s` as a JSON string, escaped as serde_json escapes it: `"` and `\`,
/// the short escapes for backspace, tab, line feed, form feed and carriage
/// return, `\u00xx` (lower-case hex) for the other control characters,
/// and nothing else.
pub fn string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let (mut run, mut i) = (0, 0);
    while i < bytes.len() {
        // Eight bytes at a time while none is escaped, then those eight
        // one by one.
        while let Some(word) = bytes.get(i..i + 8) {
            if needs_escape(u64::from_le_bytes(word.try_into().expect("eight bytes"))) {
                break;
            }
            i += 8;
        }
        for _ in 0..8 {
            let Some(&byte) = bytes.get(i) else { break };
            i += 1;
            let escape: &[u8] = match byte {
                b'"' => b"\\\"",
                b'\\' => b"\\\\",
                0x08 => b"\\b",
                b'\t' => b"\\t",
                b'\n' => b"\\n",
                0x0c => b"\\f",
                b'\r' => b"\\r",
                0..=0x1f => &[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(byte >> 4)],
                    HEX[usize::from(byte & 0xf)],
                ],
                _ => continue,
            };
            out.extend_from_slice(&bytes[run..i - 1]);
            out.extend_from_slice(escape);
            run = i;
        }
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Every byte JSON escapes, and its neighbours, at each of the eight
    /// places in a word, beside ASCII and other UTF-8.
    fn awkward() -> Vec<String> {
        let mut texts = vec![
            String::new(),
            "plain text, long enough for a few words".into(),
        ];
        let specials: Vec<char> = (0u8..0x20)
            .map(char::from)
            .chain([
                '"', '\\', ' ', '!', '#', '[', ']', '\u{7f}', '\u{80}', 'é', '\u{2028}', '🦀',
            ])
            .collect();
        for &c in &specials {
            for at in 0..9 {
                let mut text: String = "abcdefghijklmnop".chars().take(at).collect();
                text.push(c);
                text.push_str("qrstuvwxyz");
                texts.push(text);
                texts.push(format!("{c}{c}{}{c}", "é".repeat(at)));
            }
        }
        texts
    }

    #[test]
    fn strings_escape_as_serde_json_escapes_them() {
        for text in awkward() {
            let mut out = Vec::new();
            string(&mut out, &text);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string(&text).unwrap(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_fragment_is_what_serde_json_makes_of_it() {
        let texts = awkward();
        let anchor = |n: usize, title: Option<String>| Anchor {
            element: texts[n % texts.len()].clone(),
            id: texts[(n + 1) % texts.len()].clone(),
            text: texts[(n + 2) % texts.len()].clone(),
            title,
            location: n as u32 * 1000,
        };
        let fragments = [
            Fragment {
                url: "/a/".into(),
                content: String::new(),
                word_count: 0,
                filters: BTreeMap::new(),
                meta: BTreeMap::new(),
                anchors: Vec::new(),
            },
            Fragment {
                url: texts[5].clone(),
                content: texts.concat(),
                word_count: 123_456,
                filters: BTreeMap::from([
                    ("tool".into(), vec!["vLLM".into(), texts[7].clone()]),
                    (texts[9].clone(), vec![]),
                    ("z".into(), vec![texts[11].clone()]),
                ]),
                meta: BTreeMap::from([
                    ("title".into(), texts[13].clone()),
                    (texts[15].clone(), "x\"y".into()),
                ]),
                anchors: vec![
                    anchor(1, None),
                    anchor(20, Some(texts[30].clone())),
                    anchor(40, Some(String::new())),
                ],
            },
        ];
        let mut out = b"before".to_vec();
        for f in &fragments {
            out.truncate(6);
            fragment(f, &mut out);
            assert_eq!(
                std::str::from_utf8(&out[6..]).unwrap(),
                serde_json::to_string(f).unwrap()
            );
        }
    }
}
