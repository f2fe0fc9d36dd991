//! What Pagefind is handed of a page: the page as published, less the
//! token spans errata's highlighter writes inside code blocks.
//!
//! Pagefind parses each page again (lol_html), and that parse was half of
//! its time per page on the benchmark's pages (callgrind), growing with the
//! number of elements; the highlighter's `<span class=…>` tokens are about
//! 40% of them. Such a span adds nothing to what Pagefind records: for
//! Pagefind a `span` is inline (no sentence break, no weight), a `class`
//! names no filter, meta, sort, anchor or index attribute, and its text
//! joins its parent's at the same place whether the span is there or not.
//! Inside a code block no anchor reaches it either (a `pre` passes none to
//! its children). So the spans go, but only:
//! - inside a block exactly as the highlighter writes it: `<pre>` with
//!   `class=code` and at most a `data-lang`, then `<code>` with no
//!   attribute;
//! - when the block holds nothing but text and spans whose one attribute
//!   is `class`; anything else leaves the whole block as it is.
//!
//! The page is read as HTML's tokenizer reads it: quoted attribute values,
//! comments, CDATA and the contents of raw-text elements (`script`,
//! `style`, `title`, `textarea`, ...) are skipped whole, so nothing in them
//! is taken for a code block. The tests build Pagefind's bundle from both
//! forms and compare them byte for byte.

use std::borrow::Cow;

/// Elements whose contents the HTML tokenizer does not read as markup.
const RAW_TEXT: &[&str] = &[
    "script", "style", "title", "textarea", "xmp", "iframe", "noembed", "noframes", "noscript",
];

/// `html` without the highlighter's spans (see the module comment);
/// borrowed when there were none to remove.
pub fn for_index(html: &str) -> Cow<'_, str> {
    let mut out = String::with_capacity(html.len());
    // `html[..copied]` is in `out` (with its blocks stripped).
    let mut copied = 0;
    let mut at = 0;
    while let Some(found) = html[at..].find('<') {
        let lt = at + found;
        let Some(markup) = Markup::at(html, lt) else {
            at = lt + 1;
            continue;
        };
        at = markup.end();
        let Markup::Tag(tag) = markup else {
            continue;
        };
        if tag.closing {
            continue;
        }
        if let Some(raw) = RAW_TEXT.iter().find(|raw| tag.is(raw)) {
            at = closing_tag(html, at, raw);
            continue;
        }
        if tag.is("plaintext") {
            break;
        }
        if !tag.is("pre") || !tag.is_code_block(html) || !html[at..].starts_with("<code>") {
            continue;
        }
        let start = at + "<code>".len();
        let mark = out.len();
        out.push_str(&html[copied..start]);
        match strip_block(html, start, &mut out) {
            Some(end) => (copied, at) = (end, end),
            None => out.truncate(mark),
        }
    }
    if copied == 0 {
        return Cow::Borrowed(html);
    }
    out.push_str(&html[copied..]);
    Cow::Owned(out)
}

/// Adds to `out` the contents of the code block starting at `start`
/// (after `<code>`) without its spans, and returns where its `</code>`
/// starts; `None` (with some of it added) when it holds anything but text
/// and class-only spans.
fn strip_block(html: &str, start: usize, out: &mut String) -> Option<usize> {
    let mut depth = 0usize;
    let mut at = start;
    loop {
        let lt = at + html[at..].find('<')?;
        out.push_str(&html[at..lt]);
        let next = html[lt + 1..].chars().next()?;
        if !(next.is_ascii_alphabetic() || matches!(next, '/' | '!' | '?')) {
            // Text: `<` that starts no markup.
            out.push('<');
            at = lt + 1;
            continue;
        }
        let Some(Markup::Tag(tag)) = Markup::at(html, lt) else {
            return None;
        };
        match (tag.closing, depth) {
            (false, _) if tag.is("span") && !tag.self_closing && tag.only_class(html) => depth += 1,
            (true, 1..) if tag.is("span") => depth -= 1,
            (true, 0) if tag.is("code") => return Some(lt),
            _ => return None,
        }
        at = tag.end;
    }
}

/// Where the raw-text element `name` whose contents start at `at` ends
/// (after its end tag), or the end of the page.
fn closing_tag(html: &str, mut at: usize, name: &str) -> usize {
    while let Some(found) = html[at..].find("</") {
        let lt = at + found;
        if let Some(Markup::Tag(tag)) = Markup::at(html, lt)
            && tag.is(name)
        {
            return tag.end;
        }
        at = lt + 2;
    }
    html.len()
}

/// Something starting with `<` that is not text.
enum Markup<'a> {
    /// A comment, CDATA section, doctype or processing instruction.
    Other {
        end: usize,
    },
    Tag(Tag<'a>),
}

/// A start or end tag, as HTML's tokenizer reads it.
struct Tag<'a> {
    /// As written (compare with `eq_ignore_ascii_case`); empty for a tag
    /// that runs past the end of the page.
    name: &'a str,
    closing: bool,
    self_closing: bool,
    /// Where its attributes start (see [`Attributes`]).
    attributes: usize,
    /// Just after the `>`.
    end: usize,
}

impl<'a> Markup<'a> {
    /// The markup starting at `html[lt]` (a `<`); `None` when the `<` is
    /// text.
    fn at(html: &'a str, lt: usize) -> Option<Markup<'a>> {
        let rest = &html[lt..];
        // Unterminated markup runs to the end of the page.
        let after = |open: &str, close: &str| {
            let end = rest[open.len()..]
                .find(close)
                .map_or(html.len(), |i| lt + open.len() + i + close.len());
            Some(Markup::Other { end })
        };
        if rest.starts_with("<!--") {
            return after("<!--", "-->");
        }
        if rest.starts_with("<![CDATA[") {
            return after("<![CDATA[", "]]>");
        }
        if rest.starts_with("<!") || rest.starts_with("<?") {
            return after("<", ">");
        }
        Tag::at(html, lt).map(Markup::Tag)
    }

    fn end(&self) -> usize {
        match self {
            Markup::Other { end } => *end,
            Markup::Tag(tag) => tag.end,
        }
    }
}

impl<'a> Tag<'a> {
    /// The tag at `html[lt]` (a `<`), `None` when the `<` starts no tag.
    /// A tag that runs past the end of the page (which HTML drops) comes
    /// back nameless, ending there.
    fn at(html: &'a str, lt: usize) -> Option<Tag<'a>> {
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
        let mut attributes = Attributes::new(html, name_end);
        for _ in attributes.by_ref() {}
        Some(match attributes.closed {
            Some(gt) => Tag {
                name: &html[name_start..name_end],
                closing,
                self_closing: attributes.self_closing,
                attributes: name_end,
                end: gt + 1,
            },
            None => Tag {
                name: "",
                closing,
                self_closing: false,
                attributes: name_end,
                end: html.len(),
            },
        })
    }

    fn is(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
    }

    fn attributes(&self, html: &'a str) -> Attributes<'a> {
        Attributes::new(html, self.attributes)
    }

    /// `<pre>` as the highlighter writes it: `class=code`, and a
    /// `data-lang` or nothing else.
    fn is_code_block(&self, html: &str) -> bool {
        let (mut class, mut lang) = (0, 0);
        for (name, value) in self.attributes(html) {
            if name.eq_ignore_ascii_case("class") && value == "code" {
                class += 1;
            } else if name.eq_ignore_ascii_case("data-lang") {
                lang += 1;
            } else {
                return false;
            }
        }
        class == 1 && lang <= 1
    }

    /// A single attribute, `class`.
    fn only_class(&self, html: &str) -> bool {
        let mut attributes = self.attributes(html);
        attributes
            .next()
            .is_some_and(|(name, _)| name.eq_ignore_ascii_case("class"))
            && attributes.next().is_none()
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
                    let close = j + 1 + html[j + 1..].find(quote as char)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::sync_channel;

    /// A triage page the way errata publishes one (minified), with `body`
    /// inside `data-pagefind-body`.
    fn page(title: &str, body: &str) -> String {
        format!(
            "<!doctype html><html lang=en><head><title>{title} | Site</title>\
             <script type=application/ld+json>{{\"text\":\"<pre class=code><code><span class=k>ld</span></code></pre>\"}}</script>\
             </head><body><nav>Navigation words</nav><article class=triage data-pagefind-body>\
             <h1>{title}</h1>{body}</article><footer>Footer words</footer></body></html>"
        )
    }

    const BLOCK: &str = "<div class=codeblock data-lang=bash><pre class=code data-lang=bash><code>\
        <span class=gp>$ </span><span class=nb>export</span> <span class=nv>PYTORCH_CUDA_ALLOC_CONF</span>=expandable_segments:True\n\
        <span class=c># a &lt;comment> with a < sign</span>\n<span class=k><span class=s>nested</span> spans</span>\n</code></pre></div>";

    /// Pagefind's bundle for `pages` (in order), through the indexer.
    fn bundle(pages: &[String]) -> Vec<(String, Vec<u8>)> {
        let urls: Vec<String> = (0..pages.len()).map(|i| format!("/p{i}/")).collect();
        let (queue, received) = sync_channel(pages.len() + 1);
        for (i, html) in pages.iter().enumerate() {
            queue.send(Some((i, html.clone()))).unwrap();
        }
        queue.send(None).unwrap();
        let mut files = super::super::index_in_order("en", &urls, received).unwrap();
        files.sort();
        files
    }

    #[test]
    fn the_highlighters_spans_go_and_the_text_stays() {
        let html = page("Out of memory", BLOCK);
        let stripped = for_index(&html);
        assert!(matches!(stripped, Cow::Owned(_)));
        assert!(stripped.contains(
            "<pre class=code data-lang=bash><code>$ export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n\
             # a &lt;comment> with a < sign\nnested spans\n</code></pre>"
        ), "{stripped}");
        // The script's text is not markup, and is left alone.
        assert!(
            stripped.contains("<code><span class=k>ld</span></code>"),
            "{stripped}"
        );
        assert_eq!(stripped.len(), html.len() - spans_len(BLOCK));
    }

    /// Bytes of the span tags in `block`.
    fn spans_len(block: &str) -> usize {
        let mut n = 0;
        let mut rest = block;
        while let Some(i) = rest.find("<span") {
            let end = i + rest[i..].find('>').unwrap() + 1;
            n += end - i;
            rest = &rest[end..];
        }
        n + block.matches("</span>").count() * "</span>".len()
    }

    #[test]
    fn anything_but_a_plain_highlighted_block_is_left_as_it_is() {
        for body in [
            // A span with another attribute, which Pagefind may read.
            "<pre class=code data-lang=sh><code><span class=k id=here>x</span></code></pre>",
            "<pre class=code data-lang=sh><code><span class=k data-pagefind-weight=9>x</span></code></pre>",
            // Other markup in the block.
            "<pre class=code data-lang=sh><code><span class=k>x</span><b>bold</b></code></pre>",
            // A pre with an id (an anchor), or another attribute.
            "<pre class=code data-lang=sh id=a><code><span class=k>x</span></code></pre>",
            "<pre class=code data-lang=sh data-pagefind-ignore><code><span class=k>x</span></code></pre>",
            "<pre class=other><code><span class=k>x</span></code></pre>",
            // A code element with attributes.
            "<pre class=code><code class=x><span class=k>x</span></code></pre>",
            // Unbalanced spans, a self-closing one, a block never closed.
            "<pre class=code><code><span class=k>x</code></pre>",
            "<pre class=code><code><span class=k/>x</code></pre>",
            "<pre class=code><code><span class=k>x</span>",
            // In an attribute value, a comment, a textarea: not markup.
            "<p title='<pre class=code><code><span class=k>x</span></code></pre>'>t</p>",
            "<!-- <pre class=code><code><span class=k>x</span></code></pre> -->",
            "<textarea><pre class=code><code><span class=k>x</span></code></pre></textarea>",
        ] {
            let html = page("Title", body);
            assert!(matches!(for_index(&html), Cow::Borrowed(_)), "{body}");
        }
    }

    #[test]
    fn pagefind_builds_the_same_bundle_from_either() {
        let pages = vec![
            page("Out of memory", BLOCK),
            page(
                "Illegal memory access",
                &format!(
                    "<h2 id=fix>Fix</h2><p>Run this:</p>{BLOCK}<p>then <code>retry</code>.</p>"
                ),
            ),
            // A block in an ignored section, and one in a filtered one.
            page(
                "Watchdog timeout",
                &format!(
                    "<section data-pagefind-ignore>{BLOCK}</section>\
                     <div data-pagefind-filter=tool>vllm {BLOCK}</div><p>NCCL words</p>"
                ),
            ),
            // A page whose blocks are left alone.
            page(
                "Kept",
                "<pre class=code id=a><code><span class=k>kept</span> text</code></pre>",
            ),
        ];
        let stripped: Vec<String> = pages.iter().map(|p| for_index(p).into_owned()).collect();
        assert_ne!(pages, stripped);
        let expected = bundle(&pages);
        assert_eq!(bundle(&stripped), expected);
        // The comparison sees a one-word change inside a block.
        let mut changed = stripped.clone();
        changed[0] = changed[0].replace("nested", "nestled");
        assert_ne!(bundle(&changed), expected);
    }
}
