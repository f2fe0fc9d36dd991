//! Stable content hashes: FNV-1a for fingerprinted file names (part of the
//! output, so it never changes), xxh3 for the incremental cache's keys and
//! checksums and the output manifest (internal, and fast on large inputs).
//! Not for security.

const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0100_0000_01b3;

/// FNV-1a, 64-bit: a stable content hash for file names.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(OFFSET, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(PRIME))
}

/// A 128-bit content hash of several parts as hex: two FNV-1a passes with
/// different seeds and primes.
pub fn hash_hex(parts: &[&[u8]]) -> String {
    let mut a: u64 = OFFSET;
    let mut b: u64 = 0x6c62_272e_07bb_0142;
    for part in parts {
        // The length separates parts, so ("ab", "c") and ("a", "bc") differ.
        for &byte in (part.len() as u64).to_le_bytes().iter().chain(part.iter()) {
            a = (a ^ u64::from(byte)).wrapping_mul(PRIME);
            b = (b ^ u64::from(byte)).wrapping_mul(PRIME.rotate_left(7) | 1);
        }
    }
    format!("{a:016x}{b:016x}")
}

/// xxh3, 128-bit, of one byte string: the hash of an output file's bytes.
pub fn content_hash(bytes: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(bytes)
}

/// xxh3, 128-bit, of several parts (each prefixed by its length, so
/// ("ab", "c") and ("a", "bc") differ), as 32 hex digits.
pub fn fast_hex(parts: &[&[u8]]) -> String {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for part in parts {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    format!("{:032x}", hasher.digest128())
}

/// This errata executable: its version, and its size and modification
/// time (the version alone does not change with every build of errata).
/// Anything errata stores that a new build could read differently is
/// stored under it.
pub fn executable_identity() -> String {
    let exe = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|m| format!("{} {:?}", m.len(), m.modified().ok()))
        .unwrap_or_default();
    format!("{} {exe}", env!("CARGO_PKG_VERSION"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_separate_parts_and_differ_by_content() {
        assert_ne!(hash_hex(&[b"ab", b"c"]), hash_hex(&[b"a", b"bc"]));
        assert_ne!(hash_hex(&[b"x"]), hash_hex(&[b"y"]));
        assert_eq!(hash_hex(&[b"x"]).len(), 32);
    }

    #[test]
    fn fast_hashes_separate_parts() {
        assert_ne!(fast_hex(&[b"ab", b"c"]), fast_hex(&[b"a", b"bc"]));
        assert_eq!(fast_hex(&[b"x"]).len(), 32);
        assert_ne!(content_hash(b"x"), content_hash(b"y"));
    }

    #[test]
    fn fnv1a_is_the_published_function() {
        // Test vectors from the FNV reference (http://www.isthe.com/chongo/tech/comp/fnv/).
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
