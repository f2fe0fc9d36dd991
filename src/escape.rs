//! One home for escaping text into the formats errata writes: HTML text,
//! XML (attribute-safe), GitHub Actions workflow commands, double-quoted
//! YAML (`errata new`), text from the site printed at a terminal or into a
//! CI log, and colour for a terminal. (Attribute values in Markdown output
//! are escaped by htmlize, inside the `markdown` module.)

/// HTML-escapes text content (`&`, `<`, `>`) onto `out`.
pub fn html_into(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
}

/// HTML-escapes text content.
pub fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    html_into(text, &mut out);
    out
}

/// Escapes text for XML content and attribute values.
pub fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Kept through attribute-value normalisation, which would turn
            // them into spaces (JUnit's `message="..."`).
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            // Not allowed in an XML 1.0 document at all, even escaped.
            c if c < ' ' || matches!(c, '\u{fffe}' | '\u{ffff}') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// Escapes a GitHub Actions workflow command's message (`%`, CR, LF), and
/// with `property` also `:` and `,` (for `file=`, `title=`...).
pub fn github(text: &str, property: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            ':' if property => out.push_str("%3A"),
            ',' if property => out.push_str("%2C"),
            c => out.push(c),
        }
    }
    out
}

/// `s` as the content of a double-quoted YAML scalar.
pub fn yaml_double(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Text from the site (a file name, a front-matter key, a quoted value)
/// made safe to print at a terminal or into a CI log: control characters
/// (ESC, which starts colour and cursor sequences, CR, the C1 set) and the
/// bidirectional overrides are written as `\u{1b}`, a tab is kept. With
/// `lines`, a newline is kept and the line after it indented, so that it
/// cannot pass for a `path:line:col:` diagnostic of its own; without, it
/// is escaped too.
pub fn terminal(text: &str, lines: bool) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| {
        (c.is_control() && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' if lines => out.push_str("\n  "),
            c if unsafe_char(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A terminal colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Colour {
    /// Errors.
    Red,
    /// Warnings.
    Yellow,
    /// Notes.
    Cyan,
}

/// `text` in `colour` (ANSI escapes) when `on`, else as it is.
pub fn paint(text: &str, colour: Colour, on: bool) -> String {
    if !on {
        return text.to_string();
    }
    let code = match colour {
        Colour::Red => 31,
        Colour::Yellow => 33,
        Colour::Cyan => 36,
    };
    format!("\x1b[{code}m{text}\x1b[0m")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_escapes_what_it_must() {
        assert_eq!(html("a<b>&\"'"), "a&lt;b&gt;&amp;\"'");
        assert_eq!(xml("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
        assert_eq!(xml("a\tb\r\nc\u{1}"), "a&#9;b&#13;&#10;c\u{fffd}");
        assert_eq!(terminal("plain\ttext", true), "plain\ttext");
        assert_eq!(
            terminal("a\x1b[31mb\rc\u{9b}\u{202e}d", false),
            "a\\u{1b}[31mb\\u{d}c\\u{9b}\\u{202e}d"
        );
        assert_eq!(
            terminal("key\nx.md:1:1: error: forged", true),
            "key\n  x.md:1:1: error: forged"
        );
        assert_eq!(terminal("a/b\nc", false), "a/b\\u{a}c");
        assert_eq!(github("a:b,c%\r\n", true), "a%3Ab%2Cc%25%0D%0A");
        assert_eq!(github("a:b,c%\n", false), "a:b,c%25%0A");
        assert_eq!(paint("x", Colour::Red, true), "\x1b[31mx\x1b[0m");
        assert_eq!(paint("x", Colour::Red, false), "x");
    }
}
