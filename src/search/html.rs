//! A page's HTML, read the way HTML's tokenizer reads it: text, tags with
//! their attributes (values as written, entities and all), comments and
//! the like, and the contents of raw-text elements (`script`, `style`,
//! `title`, `textarea`, ...) as text. No tree is built: the search parser
//! keeps its own stack of open elements.

use std::borrow::Cow;

/// Elements whose contents the HTML tokenizer does not read as markup
/// (the search parser knows them by [`super::elements::Kind`]).
#[cfg(test)]
pub const RAW_TEXT: &[&str] = &[
    "script", "style", "title", "textarea", "xmp", "iframe", "noembed", "noframes", "noscript",
];

/// Where the end tag of the raw-text element `name` whose contents start
/// at `at` is: its `<` and just after its `>`; `None` when the page ends
/// first.
pub fn closing_tag(html: &str, mut at: usize, name: &str) -> Option<(usize, usize)> {
    if name.eq_ignore_ascii_case("script") {
        return script_end(html, at);
    }
    let mut attributes = Vec::new();
    let finder = memchr::memmem::Finder::new("</");
    while let Some(found) = finder.find(&html.as_bytes()[at..]) {
        let lt = at + found;
        if let Some(Markup::Tag(tag)) = Markup::at(html, lt, &mut attributes)
            && tag.is(name)
        {
            return Some((lt, tag.end));
        }
        at = lt + 2;
    }
    None
}

/// [`closing_tag`] of a script whose contents start at `at`, read as
/// HTML's tokenizer reads script data: after `<!--`, a `<script` start
/// hides the end tags that follow, up to a `</script` or the `-->` that
/// ends the escape.
fn script_end(html: &str, at: usize) -> Option<(usize, usize)> {
    let bytes = html.as_bytes();
    let (mut escaped, mut hidden) = (false, false);
    let mut i = at;
    loop {
        // Dashes matter only inside `<!--`.
        let found = if escaped {
            memchr::memchr2(b'<', b'-', &bytes[i..])
        } else {
            memchr::memchr(b'<', &bytes[i..])
        };
        let at = i + found?;
        let rest = &bytes[at..];
        i = at + 1;
        if escaped && rest.starts_with(b"-->") {
            (escaped, hidden) = (false, false);
            i = at + 3;
        } else if !escaped && rest.starts_with(b"<!--") {
            escaped = true;
            // Its dashes may end it too: `<!-->`.
            i = at + 2;
        } else if is_tag(rest, b"</script") {
            if !hidden {
                let tag = Tag::at(html, at, &mut Vec::new())?;
                return Some((at, tag.end));
            }
            hidden = false;
        } else if escaped && !hidden && is_tag(rest, b"<script") {
            hidden = true;
        }
    }
}

/// Whether `rest` starts with `tag` (ASCII case-insensitively) followed
/// by white space, `/` or `>`.
fn is_tag(rest: &[u8], tag: &[u8]) -> bool {
    rest.len() > tag.len()
        && rest[..tag.len()].eq_ignore_ascii_case(tag)
        && (is_space(rest[tag.len()]) || matches!(rest[tag.len()], b'/' | b'>'))
}

/// Something starting with `<` that is not text.
pub enum Markup<'a> {
    /// A comment, CDATA section, doctype or processing instruction.
    Other {
        end: usize,
    },
    Tag(Tag<'a>),
}

/// A start or end tag, as HTML's tokenizer reads it.
pub struct Tag<'a> {
    /// As written (compare with `eq_ignore_ascii_case`); empty for a tag
    /// that runs past the end of the page.
    pub name: &'a str,
    pub closing: bool,
    pub self_closing: bool,
    /// Just after the `>`.
    pub end: usize,
}

impl<'a> Markup<'a> {
    /// The markup starting at `html[lt]` (a `<`); `None` when the `<` is
    /// text. A tag's attributes (name, value as written) replace what
    /// `attributes` held.
    pub fn at(
        html: &'a str,
        lt: usize,
        attributes: &mut Vec<(&'a str, &'a str)>,
    ) -> Option<Markup<'a>> {
        let rest = &html[lt..];
        // Unterminated markup runs to the end of the page.
        let after = |open: &str, close: &str| {
            let end = memchr::memmem::find(&rest.as_bytes()[open.len()..], close.as_bytes())
                .map_or(html.len(), |i| lt + open.len() + i + close.len());
            Some(Markup::Other { end })
        };
        if let Some(comment) = rest.strip_prefix("<!--") {
            // `<!-->` and `<!--->` are empty comments; `--!>` ends one too.
            for empty in [">", "->"] {
                if comment.starts_with(empty) {
                    return Some(Markup::Other {
                        end: lt + 4 + empty.len(),
                    });
                }
            }
            let body = &comment.as_bytes();
            let end = [&b"-->"[..], b"--!>"]
                .iter()
                .filter_map(|close| {
                    memchr::memmem::find(body, close).map(|i| lt + 4 + i + close.len())
                })
                .min()
                .unwrap_or(html.len());
            return Some(Markup::Other { end });
        }
        // CDATA outside SVG and MathML, a doctype, a processing
        // instruction: a bogus comment, to the first `>`.
        if rest.starts_with("<!") || rest.starts_with("<?") {
            return after("<", ">");
        }
        Tag::at(html, lt, attributes).map(Markup::Tag)
    }

    pub fn end(&self) -> usize {
        match self {
            Markup::Other { end } => *end,
            Markup::Tag(tag) => tag.end,
        }
    }
}

impl<'a> Tag<'a> {
    /// The tag at `html[lt]` (a `<`), `None` when the `<` starts no tag;
    /// its attributes replace what `attributes` held. A tag that runs past
    /// the end of the page (which HTML drops) comes back nameless, ending
    /// there.
    pub fn at(
        html: &'a str,
        lt: usize,
        attributes: &mut Vec<(&'a str, &'a str)>,
    ) -> Option<Tag<'a>> {
        let bytes = html.as_bytes();
        let closing = bytes.get(lt + 1) == Some(&b'/');
        let name_start = lt + 1 + usize::from(closing);
        if !bytes.get(name_start)?.is_ascii_alphabetic() {
            return None;
        }
        let mut name_end = name_start;
        while name_end < bytes.len()
            && !is_space(bytes[name_end])
            && !matches!(bytes[name_end], b'/' | b'>')
        {
            name_end += 1;
        }
        let mut reader = Attributes::new(html, name_end);
        attributes.clear();
        attributes.extend(reader.by_ref());
        Some(match reader.closed {
            Some(gt) => Tag {
                name: &html[name_start..name_end],
                closing,
                self_closing: reader.self_closing,
                end: gt + 1,
            },
            None => Tag {
                name: "",
                closing,
                self_closing: false,
                end: html.len(),
            },
        })
    }

    pub fn is(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
    }

    /// Its name in lower case, as elements are known by.
    pub fn lower_name(&self) -> Cow<'a, str> {
        if self.name.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(self.name.to_ascii_lowercase())
        } else {
            Cow::Borrowed(self.name)
        }
    }
}

/// A tag's attributes (name, value as written), as HTML's tokenizer reads
/// them; once read, where the tag's `>` is.
struct Attributes<'a> {
    html: &'a str,
    at: usize,
    /// The `>` ending the tag, once reached.
    closed: Option<usize>,
    /// Whether `/` came just before it.
    self_closing: bool,
}

impl<'a> Attributes<'a> {
    fn new(html: &'a str, at: usize) -> Self {
        Attributes {
            html,
            at,
            closed: None,
            self_closing: false,
        }
    }
}

impl<'a> Iterator for Attributes<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let (html, bytes) = (self.html, self.html.as_bytes());
        let mut i = self.at;
        loop {
            while i < bytes.len() && is_space(bytes[i]) {
                i += 1;
            }
            match *bytes.get(i)? {
                b'>' => {
                    self.at = i;
                    self.closed = Some(i);
                    return None;
                }
                b'/' => {
                    i += 1;
                    self.self_closing = bytes.get(i) == Some(&b'>');
                }
                _ => break,
            }
        }
        self.self_closing = false;
        let start = i;
        i += 1;
        while i < bytes.len() && !is_space(bytes[i]) && !matches!(bytes[i], b'/' | b'>' | b'=') {
            i += 1;
        }
        let name = &html[start..i];
        let mut j = i;
        while j < bytes.len() && is_space(bytes[j]) {
            j += 1;
        }
        let mut value = "";
        if bytes.get(j) == Some(&b'=') {
            j += 1;
            while j < bytes.len() && is_space(bytes[j]) {
                j += 1;
            }
            match *bytes.get(j)? {
                quote @ (b'"' | b'\'') => {
                    let close = j + 1 + memchr::memchr(quote, &bytes[j + 1..])?;
                    value = &html[j + 1..close];
                    j = close + 1;
                }
                _ => {
                    let v = j;
                    while j < bytes.len() && !is_space(bytes[j]) && bytes[j] != b'>' {
                        j += 1;
                    }
                    value = &html[v..j];
                }
            }
            i = j;
        }
        self.at = i;
        Some((name, value))
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}
