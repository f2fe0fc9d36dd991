//! The closed lists a user picks from (weight formats, runtimes, KV-cache
//! types): one list per type, with its names and aliases, read by the
//! request parser, the page's form and (with the `clap` feature) the
//! command line.

use alloc::format;
use alloc::string::String;

/// A type whose values are picked by name from a fixed list.
pub trait Choice: Copy + 'static {
    /// Every value, in the order forms list them.
    const ALL: &'static [Self];
    /// What a value is, for messages (`weight format`).
    const WHAT: &'static str;
    /// The canonical name (front matter, URLs, the command line).
    fn name(self) -> &'static str;
    /// Other names accepted for it.
    fn aliases(self) -> &'static [&'static str] {
        &[]
    }
    /// The value named `name`, in any case, or by one of its aliases.
    fn parse(name: &str) -> Option<Self> {
        let name = name.trim();
        Self::ALL.iter().copied().find(|v| {
            v.name().eq_ignore_ascii_case(name)
                || v.aliases().iter().any(|a| a.eq_ignore_ascii_case(name))
        })
    }
    /// [`Choice::parse`], or a message naming the choices.
    fn named(name: &str) -> Result<Self, String> {
        Self::parse(name).ok_or_else(|| {
            let mut known = String::new();
            for (i, v) in Self::ALL.iter().enumerate() {
                known.push_str(if i == 0 { "" } else { ", " });
                known.push_str(v.name());
            }
            format!("unknown {} `{}` (one of: {known})", Self::WHAT, name.trim())
        })
    }
}

/// `clap::ValueEnum` from [`Choice`], so the command line offers exactly
/// the crate's lists (with aliases) and `--help` shows them.
#[cfg(feature = "clap")]
macro_rules! value_enum {
    ($($t:ty),*) => {$(
        impl clap::ValueEnum for $t {
            fn value_variants<'a>() -> &'a [Self] {
                <$t as Choice>::ALL
            }
            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                Some(clap::builder::PossibleValue::new(self.name()).aliases(self.aliases().iter().copied()))
            }
        }
    )*};
}

#[cfg(feature = "clap")]
value_enum!(
    crate::formats::WeightFormat,
    crate::runtime::Runtime,
    crate::kv::KvType
);
