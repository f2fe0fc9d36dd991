//! The text of a log file, as `errata match` reads it: UTF-8 whatever the
//! file was written in.
//!
//! - A byte-order mark decides: UTF-8, UTF-16LE (what Windows PowerShell's
//!   `>` and `Out-File` write) or UTF-16BE; the mark itself is dropped.
//! - Without one, text that is UTF-16 by its zero bytes (ASCII in UTF-16
//!   has a zero in every other byte, and UTF-8 text has none) is read as
//!   UTF-16 of that order.
//! - Anything else is read as UTF-8; the matcher reads bytes that are not
//!   UTF-8 as U+FFFD, so Latin-1 or binary input never stops it.
//!
//! Reading streams: a character split between two reads is joined.

use encoding_rs::{Decoder, Encoding, UTF_8, UTF_16BE, UTF_16LE};

/// How many bytes the UTF-16 guess looks at, at most.
const SNIFF: usize = 512;

/// Turns one log's chunks of bytes into chunks of UTF-8.
pub struct LogText {
    /// `None` until the first bytes are seen; then the decoder, which is
    /// `None` for UTF-8 (passed through as it is).
    decoder: Option<Option<Decoder>>,
    /// Bytes held back until the encoding is known.
    start: Vec<u8>,
    out: Vec<u8>,
}

impl Default for LogText {
    fn default() -> Self {
        Self::new()
    }
}

impl LogText {
    pub fn new() -> LogText {
        LogText {
            decoder: None,
            start: Vec::new(),
            out: Vec::new(),
        }
    }

    /// Takes the next chunk of the file; `emit` gets UTF-8 (possibly with
    /// invalid bytes, for a file read as UTF-8) when there is some.
    pub fn feed(&mut self, bytes: &[u8], emit: &mut dyn FnMut(&[u8])) {
        if self.decoder.is_none() {
            self.start.extend_from_slice(bytes);
            if self.start.len() < SNIFF {
                return;
            }
            let start = std::mem::take(&mut self.start);
            self.begin(&start, emit, false);
            return;
        }
        self.decode(bytes, false, emit);
    }

    /// Ends the file: what is held back is given out.
    pub fn finish(&mut self, emit: &mut dyn FnMut(&[u8])) {
        if self.decoder.is_none() {
            let start = std::mem::take(&mut self.start);
            self.begin(&start, emit, true);
        } else {
            self.decode(&[], true, emit);
        }
        self.decoder = None;
    }

    fn begin(&mut self, start: &[u8], emit: &mut dyn FnMut(&[u8]), last: bool) {
        let (encoding, mark) = Encoding::for_bom(start).unwrap_or_else(|| (guess(start), 0));
        self.decoder =
            Some((encoding != UTF_8).then(|| encoding.new_decoder_without_bom_handling()));
        self.decode(&start[mark..], last, emit);
    }

    fn decode(&mut self, bytes: &[u8], last: bool, emit: &mut dyn FnMut(&[u8])) {
        let Some(Some(decoder)) = &mut self.decoder else {
            if !bytes.is_empty() {
                emit(bytes);
            }
            return;
        };
        let mut rest = bytes;
        loop {
            // Room for what this much UTF-16 can become, and a little more.
            let room = decoder
                .max_utf8_buffer_length(rest.len())
                .unwrap_or(usize::MAX / 2)
                .clamp(16, 256 * 1024);
            self.out.resize(room, 0);
            let (result, read, written, _) = decoder.decode_to_utf8(rest, &mut self.out, last);
            if written > 0 {
                emit(&self.out[..written]);
            }
            rest = &rest[read..];
            if result == encoding_rs::CoderResult::InputEmpty {
                break;
            }
        }
    }
}

/// UTF-16 of one order when the zero bytes of `start` say so: at least a
/// quarter of its two-byte units have a zero on one side, and at most an
/// eighth as many on the other. Otherwise UTF-8 (binary input has zeros
/// on both sides).
fn guess(start: &[u8]) -> &'static Encoding {
    let sample = &start[..start.len().min(SNIFF) & !1];
    let units = sample.len() / 2;
    if units < 2 {
        return UTF_8;
    }
    let (mut even, mut odd) = (0, 0);
    for pair in sample.chunks_exact(2) {
        even += usize::from(pair[0] == 0);
        odd += usize::from(pair[1] == 0);
    }
    // A few zeros on the other side are characters such as U+4E00 or
    // half of a surrogate pair (U+DE00).
    if odd * 4 >= units && even * 8 <= odd {
        UTF_16LE
    } else if even * 4 >= units && odd * 8 <= even {
        UTF_16BE
    } else {
        UTF_8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "Traceback (most recent call last):\r\n  File \"t.py\", line 1\r\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB — 😀\r\n";

    fn utf16(text: &str, big_endian: bool, mark: bool) -> Vec<u8> {
        let units = mark
            .then_some(0xfeff)
            .into_iter()
            .chain(text.encode_utf16());
        units
            .flat_map(|u| {
                if big_endian {
                    u.to_be_bytes()
                } else {
                    u.to_le_bytes()
                }
            })
            .collect()
    }

    /// The text `bytes` gives when fed `size` bytes at a time.
    fn read(bytes: &[u8], size: usize) -> Vec<u8> {
        let mut text = LogText::new();
        let mut out = Vec::new();
        for chunk in bytes.chunks(size) {
            text.feed(chunk, &mut |b| out.extend_from_slice(b));
        }
        text.finish(&mut |b| out.extend_from_slice(b));
        out
    }

    #[test]
    fn every_encoding_reads_as_the_same_text_however_it_is_cut() {
        let long = LOG.repeat(40);
        for text in [LOG, long.as_str(), "a", ""] {
            let mut utf8_bom = b"\xef\xbb\xbf".to_vec();
            utf8_bom.extend_from_slice(text.as_bytes());
            for (name, bytes) in [
                ("UTF-8", text.as_bytes().to_vec()),
                ("UTF-8, marked", utf8_bom),
                ("UTF-16LE, marked", utf16(text, false, true)),
                ("UTF-16BE, marked", utf16(text, true, true)),
                ("UTF-16LE", utf16(text, false, false)),
                ("UTF-16BE", utf16(text, true, false)),
            ] {
                if text.len() < 2 && name.starts_with("UTF-16") && !name.ends_with("marked") {
                    continue; // too short to tell
                }
                for size in [1, 3, 7, 511, 512, 4096] {
                    assert_eq!(
                        String::from_utf8(read(&bytes, size)).unwrap(),
                        text,
                        "{name}, {size} bytes at a time"
                    );
                }
            }
        }
    }

    #[test]
    fn text_that_is_not_utf16_passes_through_unchanged() {
        // Latin-1, binary (zeros on both sides), and invalid UTF-8: the
        // bytes are the matcher's to read lossily.
        let mut binary: Vec<u8> = (0..=255u8).cycle().take(2000).collect();
        binary[10] = 0;
        let zeros_both_sides = b"ab\0\0cd\0\0".repeat(100);
        for bytes in [
            zeros_both_sides,
            b"caf\xe9 CUDA out of memory\n".to_vec(),
            binary,
            b"\xff\xfeX".to_vec()[1..].to_vec(),
        ] {
            assert_eq!(read(&bytes, 5), bytes);
        }
    }

    #[test]
    fn a_lone_surrogate_or_odd_byte_is_a_replacement_character() {
        let mut bytes = utf16("ok", false, true);
        bytes.extend_from_slice(&[0x00, 0xd8, b'!']);
        let text = String::from_utf8(read(&bytes, 2)).unwrap();
        assert!(text.starts_with("ok\u{fffd}"), "{text:?}");
    }
}
