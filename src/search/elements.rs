//! What Pagefind's parser does with an element, by its name: the lists of
//! Pagefind 1.6.0's `src/fossick/parser.rs` (MIT licence, Copyright (c)
//! 2022 CloudCannon) and lol_html's void elements, and each element's
//! [`Kind`] in one lookup. The lists are kept as Pagefind writes them, and
//! the tests check the lookup against them.

#[cfg(test)]
use super::html::RAW_TEXT;

/// Elements that end a sentence (`SENTENCE_SELECTORS`).
#[cfg(test)]
const SENTENCE: &[&str] = &[
    "h1", "h2", "h3", "h4", "h5", "h6", "p", "td", "div", "ul", "li", "article", "section",
];
/// Elements that pass an anchor on to their children (`INLINE_SELECTORS`).
#[cfg(test)]
const INLINE: &[&str] = &[
    "a", "abbr", "acronym", "b", "bdo", "big", "br", "button", "cite", "code", "dfn", "em", "i",
    "img", "input", "kbd", "label", "map", "object", "output", "q", "samp", "script", "select",
    "small", "span", "strong", "sub", "sup", "textarea", "time", "tt", "var",
];
/// Elements never indexed (`REMOVE_SELECTORS`).
#[cfg(test)]
const REMOVE: &[&str] = &[
    "head", "style", "script", "noscript", "label", "form", "svg", "footer", "nav", "iframe",
    "template",
];
/// Inline elements that, with no `id` and no `data-pagefind-*` attribute,
/// inside an element being indexed, only pass their text on to it: the
/// parser does not make a node of them (the highlighter writes thousands
/// of `span`s a page). Pagefind's inline elements less `script`, `label`,
/// `textarea` and the void ones.
#[cfg(test)]
const TRANSPARENT: &[&str] = &[
    "a", "abbr", "acronym", "b", "bdo", "big", "button", "cite", "code", "dfn", "em", "i", "kbd",
    "map", "object", "output", "q", "samp", "select", "small", "span", "strong", "sub", "sup",
    "time", "tt", "var",
];
/// Elements with no content, as lol_html knows them.
#[cfg(test)]
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

    /// An element's kind, by its lower-case name: one `match`, which the
    /// compiler turns into a few comparisons of length and bytes, where
    /// the lists would take a hundred for each tag (`tests` checks it
    /// against the lists).
    pub fn of(tag: &str) -> Kind {
        const S: u8 = Kind::SENTENCE;
        const I: u8 = Kind::INLINE;
        const R: u8 = Kind::REMOVE;
        const T: u8 = Kind::TRANSPARENT;
        const V: u8 = Kind::VOID;
        const X: u8 = Kind::RAW_TEXT;
        Kind(match tag {
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "p" | "td" | "div" | "ul" | "li"
            | "article" | "section" => S,
            "a" | "abbr" | "acronym" | "b" | "bdo" | "big" | "button" | "cite" | "code" | "dfn"
            | "em" | "i" | "kbd" | "map" | "object" | "output" | "q" | "samp" | "select"
            | "small" | "span" | "strong" | "sub" | "sup" | "time" | "tt" | "var" => I | T,
            "br" | "img" | "input" => I | V,
            "script" => I | R | X,
            "label" => I | R,
            "textarea" => I | X,
            "style" | "noscript" | "iframe" => R | X,
            "head" | "form" | "svg" | "footer" | "nav" | "template" => R,
            "title" | "xmp" | "noembed" | "noframes" => X,
            "area" | "base" | "basefont" | "bgsound" | "col" | "embed" | "hr" | "keygen"
            | "link" | "meta" | "param" | "source" | "track" | "wbr" => V,
            _ => 0,
        })
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

    #[test]
    fn the_match_says_what_the_lists_say() {
        let lists = [
            (SENTENCE, Kind::SENTENCE),
            (INLINE, Kind::INLINE),
            (REMOVE, Kind::REMOVE),
            (TRANSPARENT, Kind::TRANSPARENT),
            (VOID, Kind::VOID),
            (RAW_TEXT, Kind::RAW_TEXT),
        ];
        let names = lists.iter().flat_map(|(list, _)| list.iter());
        for &name in names.chain(&["html", "body", "main", "table", "svgx", "h7", ""]) {
            let mut flags = 0;
            for (list, flag) in lists {
                if list.contains(&name) {
                    flags |= flag;
                }
            }
            assert_eq!(Kind::of(name), Kind(flags), "{name}");
        }
    }
}
