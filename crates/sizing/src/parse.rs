//! Numbers and names the way people type them: `6.74e9`, `7B`, `24GiB`,
//! `rtx-3090`. The page's WebAssembly and `errata size` share this code, so
//! both accept exactly the same forms.
//!
//! Written by hand rather than with `str::parse::<f64>`: the float parser
//! would more than double the size of the WebAssembly, and integer
//! arithmetic keeps `6.74e9` exactly 6,740,000,000.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// Splits `bytes` at the first byte `at` matches: (before, after it).
fn split_at_byte(bytes: &[u8], at: impl Fn(u8) -> bool) -> (&[u8], Option<&[u8]>) {
    match bytes.iter().position(|&b| at(b)) {
        Some(i) => (&bytes[..i], Some(&bytes[i + 1..])),
        None => (bytes, None),
    }
}

/// A decimal split into an integer mantissa and a power of ten:
/// `6.74e9` is (674, 7). Works on bytes: string slicing would bring its
/// panic formatting into the WebAssembly.
fn mantissa_exponent(text: &[u8]) -> Option<(u64, i32)> {
    let (number, exponent) = split_at_byte(text, |b| b == b'e' || b == b'E');
    let (whole, fraction) = split_at_byte(number, |b| b == b'.');
    let fraction = fraction.unwrap_or_default();
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let mut mantissa: u64 = 0;
    let mut power: i32 = 0;
    for (i, part) in [whole, fraction].into_iter().enumerate() {
        for &b in part {
            if b == b'_' {
                continue;
            }
            if !b.is_ascii_digit() {
                return None;
            }
            match mantissa
                .checked_mul(10)
                .and_then(|m| m.checked_add(u64::from(b - b'0')))
            {
                Some(m) => {
                    mantissa = m;
                    if i == 1 {
                        power -= 1;
                    }
                }
                // Digits past u64's precision: drop them (keeping the scale).
                None if i == 0 => power += 1,
                None => {}
            }
        }
    }
    if let Some(exponent) = exponent {
        let (negative, digits) = match exponent.first() {
            Some(b'-') => (true, &exponent[1..]),
            Some(b'+') => (false, &exponent[1..]),
            _ => (false, exponent),
        };
        if digits.is_empty() || digits.len() > 3 || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let e: i32 = digits.iter().fold(0, |n, b| n * 10 + i32::from(b - b'0'));
        power += if negative { -e } else { e };
    }
    Some((mantissa, power))
}

/// `mantissa × 10^power` (exact while it stays an integer below 2^53).
fn scale(mantissa: u64, power: i32) -> f64 {
    let mut value = mantissa as f64;
    if power >= 0 {
        let mut exact = Some(mantissa);
        for _ in 0..power {
            exact = exact.and_then(|m| m.checked_mul(10));
            value *= 10.0;
        }
        if let Some(m) = exact {
            return m as f64;
        }
    } else {
        // Dividing by an exact power of ten rounds once, as a parser would.
        let mut divisor = 1.0;
        for _ in 0..-power {
            divisor *= 10.0;
        }
        value /= divisor;
    }
    value
}

/// Parses a non-negative decimal such as `0.9`, `24564` or `1e3`.
pub fn parse_decimal(text: &str) -> Option<f64> {
    let (m, p) = mantissa_exponent(text.trim().as_bytes())?;
    Some(scale(m, p))
}

/// The most parameters a count may claim (1,000T): beyond it, a typo.
const MAX_COUNT: f64 = 1e15;

/// Parses a parameter count as people write it: `6738415616`, `6.74e9`,
/// `6_738_415_616`, or with a suffix `K`, `M`, `B` or `T` (thousand,
/// million, billion, trillion; any case): `7B`, `70b`, `1.5T`, `500M`.
pub fn parse_count(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let bad =
        || format!("`{trimmed}` is not a parameter count: write 6738415616, 6.74e9, 7B or 1.5T");
    let bytes = trimmed.as_bytes();
    let (number, multiplier) = match bytes.split_last() {
        Some((last, rest)) => match last.to_ascii_lowercase() {
            b'k' => (rest, 3),
            b'm' => (rest, 6),
            b'b' => (rest, 9),
            b't' => (rest, 12),
            _ => (bytes, 0),
        },
        None => (bytes, 0),
    };
    let (m, p) = mantissa_exponent(number.trim_ascii_end()).ok_or_else(bad)?;
    let value = scale(m, p + multiplier);
    if value < 1.0 {
        return Err(format!(
            "`{trimmed}` is not a parameter count: it must be at least 1"
        ));
    }
    if value > MAX_COUNT {
        return Err(format!("`{trimmed}` is more parameters than any model has"));
    }
    Ok(value)
}

/// Parses an amount of memory into bytes: `24GiB`, `24GB`, `24576MiB`,
/// `80 GB`, `1.5TiB`, `24g`. `GB` is read as GiB, the way memory makers
/// (JEDEC) and GPU spec sheets use it: a "24 GB" RTX 3090 has 24,576 MiB.
/// A bare number is refused, since `24` and `24576` both occur.
pub fn parse_memory(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let bytes = trimmed.as_bytes();
    let split = bytes
        .iter()
        .position(|&b| b.is_ascii_alphabetic() && b != b'e' && b != b'E')
        .unwrap_or(bytes.len());
    let (number, unit) = bytes.split_at(split);
    let unit = String::from_utf8_lossy(unit.trim_ascii());
    let lower = unit.to_ascii_lowercase();
    let shift = match lower.as_str() {
        "" => {
            return Err(format!(
                "`{trimmed}` needs a unit: write 24GiB, 24GB or 24576MiB"
            ));
        }
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => {
            return Err(format!(
                "`{trimmed}`: unknown unit `{unit}` (use MiB, GiB or TiB; GB means GiB)"
            ));
        }
    };
    let value = mantissa_exponent(number.trim_ascii())
        .map(|(m, p)| scale(m, p))
        .ok_or_else(|| format!("`{trimmed}` is not an amount of memory such as 24GiB"))?;
    let bytes = value * (1u64 << shift) as f64;
    if bytes < (1u64 << 20) as f64 || bytes > (1u64 << 50) as f64 {
        return Err(format!(
            "`{trimmed}` is not a GPU's memory (between 1 MiB and 1 PiB)"
        ));
    }
    Ok(bytes)
}

/// A name reduced to what people agree on: lower-case letters and digits
/// (`RTX 3090`, `rtx-3090` and `rtx3090` all become `rtx3090`).
pub fn name_key(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Edit distance between two short ASCII keys.
fn distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = previous + usize::from(ca != cb);
            previous = row[j + 1];
            row[j + 1] = substitute.min(previous + 1).min(row[j] + 1);
        }
    }
    row[b.len()]
}

/// Finds `wanted` among `names`: the same name in any case or spelling
/// (`rtx-3090` is `RTX 3090`), or the only name that contains it (`4090`).
/// Otherwise an error that says which names come close.
pub fn find_name<'a>(
    names: impl Iterator<Item = &'a str> + Clone,
    wanted: &str,
    what: &str,
) -> Result<usize, String> {
    let key = name_key(wanted);
    if let Some(found) = names.clone().position(|n| name_key(n) == key) {
        return Ok(found);
    }
    let containing: Vec<(usize, &str)> = names
        .clone()
        .enumerate()
        .filter(|(_, n)| {
            // A byte-wise search: `str::contains` brings a 2 KiB searcher.
            let name = name_key(n);
            !key.is_empty()
                && name
                    .as_bytes()
                    .windows(key.len())
                    .any(|w| w == key.as_bytes())
        })
        .collect();
    if let [(only, _)] = containing[..] {
        return Ok(only);
    }
    let close: Vec<(usize, &str)> = names
        .map(|n| (distance(&key, &name_key(n)), n))
        .filter(|(d, _)| *d <= 2.max(key.len() / 3))
        .collect();
    let mut hints: Vec<&str> = containing.iter().map(|(_, n)| *n).collect();
    // Closest first (no sort: it would double the WebAssembly).
    for wanted_distance in 0..=2.max(key.len() / 3) {
        for &(d, n) in &close {
            if d == wanted_distance && !hints.contains(&n) {
                hints.push(n);
            }
        }
    }
    hints.truncate(4);
    let wanted = wanted.trim();
    Err(if hints.is_empty() {
        format!("unknown {what} `{wanted}`")
    } else {
        format!(
            "unknown {what} `{wanted}`; did you mean {}?",
            hints
                .iter()
                .map(|h| format!("`{h}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_as_people_write_them() {
        for (text, value) in [
            ("6738415616", 6_738_415_616.0),
            ("6.74e9", 6_740_000_000.0),
            ("6.74E+9", 6_740_000_000.0),
            ("6_738_415_616", 6_738_415_616.0),
            ("7B", 7e9),
            ("70b", 70e9),
            ("1.5T", 1.5e12),
            ("1.5t", 1.5e12),
            ("500M", 5e8),
            ("500m", 5e8),
            ("8k", 8e3),
            (" 7 B ", 7e9),
            ("0.5B", 5e8),
            ("46.7e9", 46.7e9),
        ] {
            assert_eq!(parse_count(text), Ok(value), "{text}");
        }
        for bad in [
            "", "B", "7x", "-7B", "7BB", "1e", "e9", "0", "0.1", "7 GB", "1e99", "7.B.", "1.2.3",
        ] {
            assert!(parse_count(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn memory_as_people_write_it() {
        let gib = (1u64 << 30) as f64;
        for (text, bytes) in [
            ("24GiB", 24.0 * gib),
            ("24GB", 24.0 * gib),
            ("24 gb", 24.0 * gib),
            ("24g", 24.0 * gib),
            ("24576MiB", 24.0 * gib),
            ("24576 MB", 24.0 * gib),
            ("1.5TiB", 1536.0 * gib),
            ("79.6GiB", 79.6 * gib),
        ] {
            assert_eq!(parse_memory(text), Ok(bytes), "{text}");
        }
        assert!(parse_memory("24").unwrap_err().contains("needs a unit"));
        assert!(
            parse_memory("24 bananas")
                .unwrap_err()
                .contains("unknown unit")
        );
        for bad in ["GiB", "-1GiB", "0GiB", "1.2.3GiB", "5PiB", "99999TiB"] {
            assert!(parse_memory(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_in_any_spelling_and_did_you_mean() {
        let names = [
            "RTX 3090",
            "RTX 4090",
            "H100 80GB",
            "H100 NVL",
            "L4",
            "L40S",
        ];
        let find = |w: &str| find_name(names.iter().copied(), w, "GPU");
        for spelling in ["RTX 3090", "rtx-3090", "rtx3090", "Rtx_3090", "3090"] {
            assert_eq!(find(spelling), Ok(0), "{spelling}");
        }
        assert_eq!(find("l4"), Ok(4));
        assert_eq!(find("h100-nvl"), Ok(3));
        let ambiguous = find("h100").unwrap_err();
        assert!(
            ambiguous.contains("did you mean `H100 80GB` or `H100 NVL`?"),
            "{ambiguous}"
        );
        let typo = find("rtx 3009").unwrap_err();
        assert!(typo.contains("did you mean `RTX 3090`"), "{typo}");
        assert_eq!(find("quantum"), Err("unknown GPU `quantum`".into()));
    }
}
