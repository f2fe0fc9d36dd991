//! The little CBOR the search bundle's word index needs, written as
//! minicbor writes it (Pagefind encodes its index with minicbor): definite
//! lengths, integers in their shortest form.

/// A CBOR writer.
#[derive(Default)]
pub struct Cbor(pub Vec<u8>);

impl Cbor {
    fn head(&mut self, major: u8, n: u64) {
        let major = major << 5;
        match n {
            0..=23 => self.0.push(major | n as u8),
            24..=0xff => self.0.extend_from_slice(&[major | 24, n as u8]),
            0x100..=0xffff => {
                self.0.push(major | 25);
                self.0.extend_from_slice(&(n as u16).to_be_bytes());
            }
            0x1_0000..=0xffff_ffff => {
                self.0.push(major | 26);
                self.0.extend_from_slice(&(n as u32).to_be_bytes());
            }
            _ => {
                self.0.push(major | 27);
                self.0.extend_from_slice(&n.to_be_bytes());
            }
        }
    }

    pub fn array(&mut self, len: usize) {
        self.head(4, len as u64);
    }

    pub fn u64(&mut self, n: u64) {
        self.head(0, n);
    }

    #[inline]
    pub fn i32(&mut self, n: i32) {
        // Most packed positions are small deltas: one byte.
        if let Ok(small @ 0..24) = u8::try_from(n) {
            self.0.push(small);
            return;
        }
        match u64::try_from(n) {
            Ok(n) => self.head(0, n),
            Err(_) => self.head(1, (-1 - i64::from(n)) as u64),
        }
    }

    /// Bytes that are CBOR already.
    pub fn raw(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }

    pub fn str(&mut self, s: &str) {
        self.head(3, s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }
}

/// The length an array's head at the start of `bytes` gives (as
/// [`Cbor::array`] writes it).
pub fn array_len(bytes: &[u8]) -> usize {
    let n = |len: usize| {
        bytes[1..=len]
            .iter()
            .fold(0usize, |n, &b| (n << 8) | usize::from(b))
    };
    match bytes[0] & 0x1f {
        small @ 0..=23 => usize::from(small),
        24 => n(1),
        25 => n(2),
        26 => n(4),
        _ => n(8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_and_strings_are_written_as_minicbor_writes_them() {
        let ints = [
            0,
            1,
            23,
            24,
            255,
            256,
            65_535,
            65_536,
            i32::MAX,
            -1,
            -24,
            -25,
            -256,
            -257,
            -65_536,
            -65_537,
            i32::MIN,
        ];
        for n in ints {
            let mut e = Cbor::default();
            e.i32(n);
            assert_eq!(e.0, minicbor::to_vec(n).unwrap(), "{n}");
        }
        for n in [
            0u64,
            23,
            24,
            255,
            256,
            65_535,
            65_536,
            4_294_967_295,
            4_294_967_296,
        ] {
            let mut e = Cbor::default();
            e.u64(n);
            assert_eq!(e.0, minicbor::to_vec(n).unwrap(), "{n}");
        }
        let text = "ü".repeat(30);
        let mut e = Cbor::default();
        e.array(1);
        e.str(&text);
        assert_eq!(e.0, minicbor::to_vec([text.as_str()]).unwrap());
    }

    #[test]
    fn an_array_head_is_read_back() {
        for len in [0, 1, 23, 24, 255, 256, 65_535, 65_536, 1 << 33] {
            let mut e = Cbor::default();
            e.array(len);
            assert_eq!(array_len(&e.0), len, "{len}");
        }
    }
}
