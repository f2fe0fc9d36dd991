//! What Pagefind's parser does with an element, by its name: the lists of
//! Pagefind 1.6.0's `src/fossick/parser.rs` (MIT licence, Copyright (c)
//! 2022 CloudCannon) and lol_html's void elements, and each element's
//! [`Kind`] in one lookup.

use std::sync::LazyLock;

use super::html::RAW_TEXT;

/// Elements that end a sentence (`SENTENCE_SELECTORS`).
const SENTENCE: &[&str] = &[
    "h1", "h2", "h3", "h4", "h5", "h6", "p", "td", "div", "ul", "li", "article", "section",
];
/// Elements that pass an anchor on to their children (`INLINE_SELECTORS`).
const INLINE: &[&str] = &[
    "a", "abbr", "acronym", "b", "bdo", "big", "br", "button", "cite", "code", "dfn", "em", "i",
    "img", "input", "kbd", "label", "map", "object", "output", "q", "samp", "script", "select",
    "small", "span", "strong", "sub", "sup", "textarea", "time", "tt", "var",
];
/// Elements never indexed (`REMOVE_SELECTORS`).
const REMOVE: &[&str] = &[
    "head", "style", "script", "noscript", "label", "form", "svg", "footer", "nav", "iframe",
    "template",
];
/// Inline elements that, with no `id` and no `data-pagefind-*` attribute,
/// inside an element being indexed, only pass their text on to it: the
/// parser does not make a node of them (the highlighter writes thousands
/// of `span`s a page). Pagefind's inline elements less `script`, `label`,
/// `textarea` and the void ones.
const TRANSPARENT: &[&str] = &[
    "a", "abbr", "acronym", "b", "bdo", "big", "button", "cite", "code", "dfn", "em", "i", "kbd",
    "map", "object", "output", "q", "samp", "select", "small", "span", "strong", "sub", "sup",
    "time", "tt", "var",
];
/// Elements with no content, as lol_html knows them.
const VOID: &[&str] = &[
    "area", "base", "basefont", "bgsound", "br", "col", "embed", "hr", "img", "input", "keygen",
    "link", "meta", "param", "source", "track", "wbr",
];

/// What the lists above say of an element.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Kind(u8);

impl Kind {
    pub const SENTENCE: u8 = 1;
    pub const INLINE: u8 = 2;
    pub const REMOVE: u8 = 4;
    pub const TRANSPARENT: u8 = 8;
    pub const VOID: u8 = 16;
    pub const RAW_TEXT: u8 = 32;

    /// An element's kind, by its lower-case name: one lookup, where the
    /// lists would take a hundred comparisons for each tag.
    pub fn of(tag: &str) -> Kind {
        static KINDS: LazyLock<hashbrown::HashMap<&str, Kind>> = LazyLock::new(|| {
            let mut kinds = hashbrown::HashMap::<&str, Kind>::new();
            for (list, flag) in [
                (SENTENCE, Kind::SENTENCE),
                (INLINE, Kind::INLINE),
                (REMOVE, Kind::REMOVE),
                (TRANSPARENT, Kind::TRANSPARENT),
                (VOID, Kind::VOID),
                (RAW_TEXT, Kind::RAW_TEXT),
            ] {
                for &name in list {
                    kinds.entry(name).or_default().0 |= flag;
                }
            }
            kinds
        });
        KINDS.get(tag).copied().unwrap_or_default()
    }

    pub fn is(self, flag: u8) -> bool {
        self.0 & flag != 0
    }

    /// This kind, breaking a sentence as `other` does.
    pub fn with_sentence_of(self, other: Kind) -> Kind {
        Kind((self.0 & !Kind::SENTENCE) | (other.0 & Kind::SENTENCE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_is_what_the_lists_say() {
        let a = Kind::of("a");
        assert!(a.is(Kind::INLINE) && a.is(Kind::TRANSPARENT) && !a.is(Kind::SENTENCE));
        let script = Kind::of("script");
        assert!(script.is(Kind::INLINE) && script.is(Kind::REMOVE) && script.is(Kind::RAW_TEXT));
        assert!(!script.is(Kind::TRANSPARENT));
        assert!(Kind::of("br").is(Kind::VOID) && Kind::of("h3").is(Kind::SENTENCE));
        assert!(Kind::of("title").is(Kind::RAW_TEXT) && !Kind::of("title").is(Kind::REMOVE));
        // Names are looked up as the parser lower-cases them.
        assert_eq!(Kind::of("custom-element"), Kind::default());
        assert_eq!(Kind::of("P"), Kind::default());
    }
}
