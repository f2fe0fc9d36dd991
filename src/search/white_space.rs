//! `str::split_whitespace`, faster on text that is mostly ASCII: a page's
//! digest is split once per page, ten thousand bytes at a time, and the
//! standard one decodes every character to ask whether it is white space.
//! This one looks at bytes, and decodes only a character whose first byte
//! can start a white-space character beyond ASCII (U+0085, U+00A0,
//! U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000). The
//! words are exactly the standard one's: Pagefind splits with it.

/// The words of `text` between runs of Unicode white space, as
/// `text.split_whitespace()` gives them.
pub fn words(text: &str) -> Words<'_> {
    Words { text, at: 0 }
}

pub struct Words<'a> {
    text: &'a str,
    at: usize,
}

/// Whether an ASCII byte is white space to `char::is_whitespace` (which,
/// unlike HTML, counts the vertical tab).
#[inline]
fn ascii_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ')
}

/// The length of the white-space character at `bytes[at]`, or 0.
#[inline]
fn space_at(text: &str, at: usize) -> usize {
    let b = text.as_bytes()[at];
    if b < 0x80 {
        return usize::from(ascii_space(b));
    }
    if !matches!(b, 0xc2 | 0xe1 | 0xe2 | 0xe3) {
        return 0;
    }
    match text[at..].chars().next() {
        Some(c) if c.is_whitespace() => c.len_utf8(),
        _ => 0,
    }
}

/// Where in `chunk` (eight bytes, the first in its low bits) the first
/// byte is that may start white space: one at most U+0020 or beyond
/// ASCII; 8 when there is none. Within a word, the bytes it stops at are
/// mostly the space ending it.
#[inline]
fn first_candidate(chunk: u64) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A byte below 0x21 borrows from its high bit when 0x21 is taken from
    // it (and a byte beyond ASCII has it set); a borrow only moves up, so
    // the lowest byte marked is exact (the bytes above it may be marked
    // wrongly, and are not looked at).
    let marked = (chunk.wrapping_sub(ONES * 0x21) | chunk) & HIGH;
    marked.trailing_zeros() as usize / 8
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let text = self.text;
        let len = text.len();
        let mut at = self.at;
        loop {
            if at >= len {
                self.at = at;
                return None;
            }
            match space_at(text, at) {
                0 => break,
                n => at += n,
            }
        }
        let start = at;
        // Past the first byte of a word's first character: a following
        // byte of a character is never white space's first byte.
        at += 1;
        let bytes = text.as_bytes();
        while at < len {
            // Eight bytes at a time up to the first that may be white
            // space: most words are a few ASCII letters.
            if let Some(chunk) = bytes.get(at..at + 8) {
                let chunk = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
                match first_candidate(chunk) {
                    8 => {
                        at += 8;
                        continue;
                    }
                    n => at += n,
                }
            }
            let b = bytes[at];
            if b < 0x80 {
                if ascii_space(b) {
                    break;
                }
            } else if matches!(b, 0xc2 | 0xe1 | 0xe2 | 0xe3) && space_at(text, at) > 0 {
                break;
            }
            at += 1;
        }
        self.at = at;
        Some(&text[start..at])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every character `char::is_whitespace` says is white space, and
    /// characters that share a first byte with one but are not.
    #[test]
    fn splits_as_split_whitespace_does() {
        let spaces: Vec<char> = (0..=0x10ffff_u32)
            .filter_map(char::from_u32)
            .filter(|c| c.is_whitespace())
            .collect();
        assert_eq!(spaces.len(), 25, "Unicode's White_Space characters");
        let neighbours = [
            '\u{80}', '\u{a1}', '\u{c0}', '\u{1681}', '\u{200b}', '\u{2030}', '\u{3001}', 'é',
            '日', '🦀', '\u{0}', '\u{8}', '\u{e}', '\u{1f}', '!', '\u{7f}',
        ];
        let mut texts = vec![
            String::new(),
            " ".into(),
            "a".into(),
            "  a  b  ".into(),
            "x\u{a0}y\u{3000}z\u{85}".into(),
        ];
        // Words of every length around the eight bytes read at a time,
        // ended by each white space.
        for len in 1..20 {
            for &space in &spaces {
                let word = "w".repeat(len);
                texts.push(format!("{word}{space}{word}\u{1}{word}é{word}{space}"));
            }
        }
        // Each white space and each neighbour, between, before and after
        // words of each kind.
        for &space in &spaces {
            for &other in &neighbours {
                texts.push(format!("{space}a{other}{space}{other}b{space}"));
                texts.push(format!("{other}{space}{space}{other}{other}"));
                texts.push(format!("é{space}{other}"));
            }
        }
        // A deterministic mix of all of them.
        let pool: Vec<char> = spaces
            .iter()
            .chain(&neighbours)
            .copied()
            .chain("abc.-_".chars())
            .collect();
        let mut state = 0x2545f4914f6cdd1d_u64;
        for _ in 0..2000 {
            let mut text = String::new();
            for _ in 0..(state % 40) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push(pool[(state % pool.len() as u64) as usize]);
            }
            texts.push(text);
        }
        for text in &texts {
            assert_eq!(
                words(text).collect::<Vec<_>>(),
                text.split_whitespace().collect::<Vec<_>>(),
                "{text:?}"
            );
        }
    }
}
