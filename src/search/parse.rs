//! What Pagefind's parser makes of a page: its digest (the text to index,
//! with markers for weights and anchors), its filters, sort keys and meta,
//! the text of each anchor, and whether it has a `data-pagefind-body`.
//!
//! Pagefind 1.6.0 (`src/fossick/parser.rs`, MIT licence, Copyright (c)
//! 2022 CloudCannon) reads a page with lol_html, one handler per element
//! with `Rc<RefCell<…>>` nodes; this reads it with errata's own tokenizer
//! ([`super::html`]) and a plain stack, about ten times faster, and makes
//! the same digest: the same rules, in the same order, so the same text and
//! the same words at the same positions (`tests/search_index.rs` builds the
//! bundle both ways and compares them), lol_html's ways included: an
//! element closed by an ancestor's end tag (`<p>x<b>y</p>`) ends with that
//! tag's name, so it takes that tag's sentence break and heading weight;
//! `/>` ends an element only in SVG and MathML; and a removed element with
//! no content (`<svg/>`) makes the element it is in ignored, as Pagefind
//! marks whichever element is current. The tokenizer reads comments
//! (`<!-->`, `--!>`), bogus comments and scripts (`<!-- <script>`) as
//! HTML's does. Known to differ: CDATA in MathML, whose text is read here
//! as in HTML, a bogus comment to the first `>` (in SVG it is ignored
//! anyway), and HTML elements inside MathML or SVG, which HTML's parser
//! moves out of them; random tag soup mixing those with stray comment and
//! CDATA markers differs in a few pages in a hundred (a differential run
//! against Pagefind found them). Implied end tags are built by neither
//! (`<li>a<li>b` nests the second item in both).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

pub use super::attributes::normalize_content;
use super::attributes::{Attrs, attribute_pair, ends_sentence, parse_attr_string};
use super::elements::Kind;
use super::html::{Markup, closing_tag};
use super::node::{Named, Node, Status, is_foreign};
use super::skip;

/// What the parser found on a page.
#[derive(Debug, Default)]
pub struct Parsed {
    pub digest: String,
    pub filters: BTreeMap<String, Vec<String>>,
    pub sort: BTreeMap<String, String>,
    pub meta: BTreeMap<String, String>,
    /// An anchor's text, by `counter:id`.
    pub anchor_content: HashMap<String, String>,
    pub anchor_titles: HashMap<String, String>,
    /// The page has an element with `data-pagefind-body`.
    pub has_custom_body: bool,
}

/// The parser's state while it reads one page.
struct Parser<'a> {
    html: &'a str,
    stack: Vec<Node<'a>>,
    /// The text of the open elements (see [`Node`]).
    text: String,
    /// How deep in the stack the `html` element is, once open.
    html_at: Option<usize>,
    anchors: usize,
    /// Where the last quick way through a dropped element gave up (see
    /// [`Parser::dropped`]).
    bail: usize,
    /// `data-pagefind-default-meta`, kept apart until the end.
    default_meta: BTreeMap<String, String>,
    out: Parsed,
}

/// Parses one page as Pagefind would with its default options (root
/// selector `html`, no exclusions).
pub fn parse(html: &str) -> Parsed {
    let mut parser = Parser {
        html,
        stack: vec![Node::new(Cow::Borrowed(""), Kind::default())],
        text: String::with_capacity(html.len() / 2),
        html_at: None,
        anchors: 0,
        bail: 0,
        default_meta: BTreeMap::new(),
        out: Parsed::default(),
    };
    parser.read();
    parser.finish()
}

impl<'a> Parser<'a> {
    fn read(&mut self) {
        let html = self.html;
        let mut attributes = Vec::new();
        let mut at = 0;
        while at < html.len() {
            let Some(found) = memchr::memchr(b'<', &html.as_bytes()[at..]) else {
                self.push_text(&html[at..]);
                break;
            };
            let lt = at + found;
            self.push_text(&html[at..lt]);
            let Some(markup) = Markup::at(html, lt, &mut attributes) else {
                self.push_text("<");
                at = lt + 1;
                continue;
            };
            at = markup.end();
            let Markup::Tag(tag) = markup else {
                continue;
            };
            if tag.name.is_empty() {
                break;
            }
            let name = tag.lower_name();
            if tag.closing {
                self.end(&name);
                continue;
            }
            let kind = Kind::of(&name);
            // `/>` ends an element only in SVG and MathML: on an HTML
            // element, HTML's parser (and lol_html) ignores it.
            let self_closing = tag.self_closing && (self.in_foreign() || is_foreign(&name));
            let content = !self_closing && !kind.is(Kind::VOID);
            let raw_text = content && kind.is(Kind::RAW_TEXT);
            let depth = self.stack.len();
            self.start(name.clone(), kind, &Attrs { all: &attributes }, content);
            if content && !raw_text && self.stack.len() > depth && self.dropped(&name, &mut at) {
                continue;
            }
            if raw_text {
                match closing_tag(html, at, &name) {
                    Some((lt, end)) => {
                        self.push_text(&html[at..lt]);
                        self.end(&name);
                        at = end;
                    }
                    None => {
                        self.push_text(&html[at..]);
                        break;
                    }
                }
            } else if name == "plaintext" && content {
                self.push_text(&html[at..]);
                break;
            }
        }
    }

    /// Reads the inside of the element `name` just opened (whose
    /// contents start at `at`) the quick way when its text is dropped
    /// (see [`super::skip`]), and ends it; false when it cannot be.
    fn dropped(&mut self, name: &str, at: &mut usize) -> bool {
        let node = self.stack.last().expect("the element just opened");
        let named = node.named.as_ref().is_some_and(|n| {
            n.filter.is_some() || n.meta.is_some() || n.default_meta.is_some() || n.sort.is_some()
        });
        // `plaintext` makes the rest of the page its text; an element with
        // an anchor passes it on to the inline elements inside, whose text
        // (not ignored) is that anchor's.
        if !matches!(node.status, Status::Ignored | Status::Excluded)
            || named
            || matches!(name, "h1" | "plaintext")
            || node.anchor_ids.is_some()
        {
            return false;
        }
        // Inside an element whose quick way gave up: read as it was.
        if *at < self.bail {
            return false;
        }
        let excluded = node.status == Status::Excluded;
        let html_at = self.html_at.unwrap_or(0);
        let outside = &self.stack[html_at..self.stack.len() - 1];
        let skipped = match skip::dropped(
            self.html,
            *at,
            name,
            |tag| outside.iter().any(|n| n.tag == tag),
            self.in_foreign(),
            excluded,
        ) {
            Ok(skipped) => skipped,
            Err(bail) => {
                self.bail = bail;
                return false;
            }
        };
        for (id, title) in skipped.anchors {
            let id = format!("{}:{id}", self.anchors);
            self.anchors += 1;
            if let Some(title) = title {
                self.out.anchor_titles.insert(id, title);
            }
        }
        for title in skipped.titles {
            self.out
                .meta
                .entry("auto_page_title".into())
                .or_insert_with(|| normalize_content(title));
        }
        *at = skipped.end;
        self.end(name);
        true
    }

    /// Inside an open `svg` or `math` element.
    fn in_foreign(&self) -> bool {
        self.stack.iter().any(|n| is_foreign(&n.tag))
    }

    fn in_scope(&self) -> bool {
        self.html_at.is_some()
    }

    /// Where the innermost open element that is not transparent is: where
    /// text goes.
    fn top_at(&self) -> usize {
        self.stack.iter().rposition(|n| !n.transparent).unwrap_or(0)
    }

    fn top(&mut self) -> &mut Node<'a> {
        let at = self.top_at();
        &mut self.stack[at]
    }

    fn push_text(&mut self, text: &str) {
        if text.is_empty() || !self.in_scope() {
            return;
        }
        self.text.push_str(text);
        let node = &self.stack[self.top_at()];
        if matches!(node.status, Status::Ignored | Status::Excluded) {
            return;
        }
        if let Some(ids) = &node.anchor_ids {
            for id in ids {
                self.out
                    .anchor_content
                    .entry(id.clone())
                    .or_default()
                    .push_str(text);
            }
        }
    }

    /// Opens an element (`content` false for one with none), after what
    /// its start adds to its parent's text.
    fn open(&mut self, mut node: Node<'a>) {
        node.start = self.text.len();
        node.push_prefix(&mut self.text);
        node.content = self.text.len();
        self.stack.push(node);
    }

    fn start(&mut self, tag: Cow<'a, str>, kind: Kind, attrs: &Attrs<'a, '_>, content: bool) {
        if self.html_at.is_none() {
            if tag != "html" {
                return;
            }
            self.html_at = Some(self.stack.len());
        }
        let read = attrs.any_read();
        let parent_status = self.top().status;
        if content
            && kind.is(Kind::TRANSPARENT)
            && matches!(parent_status, Status::Indexing | Status::Body)
            && !read
        {
            let mut node = Node::new(tag, kind);
            node.transparent = true;
            node.start = self.text.len();
            node.content = node.start;
            self.stack.push(node);
            return;
        }
        let mut node = Node::new(tag, kind);
        let mut anchor = None;
        if read {
            anchor = self.read_attributes(&mut node, attrs);
        } else if node.tag == "br" {
            self.text.push(' ');
        }
        if parent_status == Status::Excluded {
            node.status = Status::Excluded;
        }
        if node.kind.is(Kind::INLINE)
            && let Some(ids) = &self.top().anchor_ids
        {
            node.anchor_ids = Some(ids.clone());
        }
        if let Some(id) = anchor {
            node.anchor_ids.get_or_insert_with(Vec::new).push(id);
        }
        if content {
            if node.kind.is(Kind::REMOVE) {
                node.status = Status::Ignored;
            }
            self.open(node);
            return;
        }
        // An element with no content ends where it starts.
        if node.status == Status::Excluded {
            return;
        }
        // Pagefind marks the element it is in when a removed element
        // (`<svg/>`) starts, and this one has ended by then: the element
        // around it is ignored.
        if node.kind.is(Kind::REMOVE) {
            self.ignore_innermost();
        }
        self.attributes_of(&node, "");
        let meta = &mut self.out.meta;
        if node.tag == "img"
            && !meta.contains_key("auto_image")
            && (meta.contains_key("auto_title") || meta.contains_key("title"))
            && let Some(src) = attrs.get("src")
        {
            meta.insert("auto_image".into(), normalize_content(src));
            if let Some(alt) = attrs.get("alt") {
                meta.insert("auto_image_alt".into(), normalize_content(alt));
            }
        }
    }

    /// Reads an element's `id` and `data-pagefind-…` attributes into it,
    /// adding to its parent's text what they add there; its anchor's id
    /// when it takes one.
    fn read_attributes(&mut self, node: &mut Node<'a>, attrs: &Attrs<'a, '_>) -> Option<String> {
        // "all", and (as Pagefind warns) any value but "index" or "true",
        // excludes.
        let explicit_ignore = attrs.ignores().then(|| match attrs.excludes() {
            true => Status::Excluded,
            false => Status::Ignored,
        });
        node.status = if attrs.get("data-pagefind-body").is_some() {
            Status::Body
        } else {
            explicit_ignore.unwrap_or(Status::Indexing)
        };
        let parse_list = |name: &str| attrs.get(name).map(|v| parse_attr_string(v, attrs));
        node.named = Some(Box::new(Named {
            filter: parse_list("data-pagefind-filter"),
            meta: parse_list("data-pagefind-meta"),
            default_meta: parse_list("data-pagefind-default-meta"),
            sort: parse_list("data-pagefind-sort"),
            weight: attrs.get("data-pagefind-weight").map(str::to_owned),
        }));
        let element_id = attrs.anchor_id();
        let title = attrs.anchor_title();
        let index_attrs = attrs.get("data-pagefind-index-attrs");

        let counter = self.anchors;
        let parent_status = self.top().status;
        let mut anchor_id = None;
        if !matches!(node.status, Status::Excluded | Status::Ignored)
            && let Some(element_id) = element_id
            // Outside a body, once a body was seen, no anchor is taken.
            && (parent_status != Status::ParentOfBody
                || matches!(node.status, Status::Body | Status::ParentOfBody))
        {
            let tag = &node.tag;
            self.text.push_str(&format!(
                " ___PAGEFIND_ANCHOR___{tag}:{counter}:{element_id} "
            ));
            anchor_id = Some(format!("{counter}:{element_id}"));
        }
        if node.status != Status::Excluded {
            for name in index_attrs.into_iter().flat_map(|a| a.split(',')) {
                let mut value = attrs.get(name.trim()).unwrap_or_default().to_owned();
                if ends_sentence(&value) {
                    value.push('.');
                }
                self.text.push(' ');
                self.text.push_str(&value);
                self.text.push(' ');
            }
            if node.tag == "br" {
                self.text.push(' ');
            }
        }
        if let Some(id) = &anchor_id {
            self.anchors += 1;
            if let Some(title) = title {
                self.out.anchor_titles.insert(id.clone(), title);
            }
        }
        anchor_id
    }

    /// An end tag: closes the innermost open element of that name, and the
    /// ones inside it; an end tag with no such element is ignored.
    fn end(&mut self, tag: &str) {
        let Some(html_at) = self.html_at else {
            return;
        };
        let Some(at) = self.stack[html_at..].iter().rposition(|n| n.tag == *tag) else {
            return;
        };
        while self.stack.len() > html_at + at {
            let mut node = self.stack.pop().expect("above the document");
            // lol_html ends the elements inside with this end tag, and
            // Pagefind takes the sentence break and heading weight of the
            // end tag's name.
            if self.stack.len() > html_at + at && node.tag != *tag {
                self.end_as(&mut node, tag);
            }
            self.close(node);
        }
        if self.stack.len() <= html_at {
            self.html_at = None;
        }
    }

    /// Makes `node` end as the element `tag` would (see [`Parser::end`]):
    /// what goes before its text becomes that element's.
    fn end_as(&mut self, node: &mut Node<'a>, tag: &str) {
        if node.status == Status::Excluded {
            return;
        }
        node.transparent = false;
        node.kind = node.kind.with_sentence_of(Kind::of(tag));
        node.ended_as = Some(tag.into());
        let mut prefix = String::new();
        node.push_prefix(&mut prefix);
        self.text.replace_range(node.start..node.content, &prefix);
        node.content = node.start + prefix.len();
    }

    /// Ignores the innermost open element (a transparent one becomes an
    /// element of its own, whose text is dropped when it ends).
    fn ignore_innermost(&mut self) {
        if self.stack.len() == 1 {
            return;
        }
        let node = self.stack.last_mut().expect("above the document");
        if node.status == Status::Excluded {
            return;
        }
        node.transparent = false;
        node.status = Status::Ignored;
    }

    /// Filters, sort keys and meta an element with text `text` names.
    fn attributes_of(&mut self, node: &Node<'a>, text: &str) {
        let Some(named) = &node.named else {
            return;
        };
        for filter in named.filter.iter().flatten() {
            if let Some((key, value)) = attribute_pair(filter, text) {
                let values = self.out.filters.entry(key).or_default();
                values.push(normalize_content(&value));
            }
        }
        for (list, into) in [
            (&named.sort, &mut self.out.sort),
            (&named.meta, &mut self.out.meta),
            (&named.default_meta, &mut self.default_meta),
        ] {
            for item in list.iter().flatten() {
                if let Some((key, value)) = attribute_pair(item, text) {
                    into.insert(key, value);
                }
            }
        }
    }

    fn close(&mut self, node: Node<'a>) {
        if node.transparent {
            return;
        }
        if node.status == Status::Excluded {
            self.text.truncate(node.start);
            return;
        }
        let text = std::mem::take(&mut self.text);
        let content = &text[node.content..];
        self.attributes_of(&node, content);
        let meta = &mut self.out.meta;
        if node.tag == "h1" && !meta.contains_key("auto_title") && !content.trim().is_empty() {
            meta.insert("auto_title".into(), normalize_content(content));
        }
        if node.tag == "title" && !meta.contains_key("auto_page_title") {
            meta.insert("auto_page_title".into(), normalize_content(content));
        }
        self.text = text;
        let parent = self.top();
        let parent_status = parent.status;
        let kept = match node.status {
            Status::Ignored | Status::Excluded => false,
            _ => {
                parent_status != Status::ParentOfBody
                    || matches!(node.status, Status::Body | Status::ParentOfBody)
            }
        };
        if !kept {
            self.text.truncate(node.start);
            return;
        }
        if node.kind.is(Kind::SENTENCE) {
            // The space before it is in place; it ends a sentence when its
            // text (after that space) does.
            if ends_sentence(&self.text[node.content - 1..]) {
                self.text.push('.');
            }
            self.text.push(' ');
        }
        if node.weight_marker().is_some() {
            self.text.push_str(" ___END_PAGEFIND_WEIGHT___ ");
        }
        if matches!(node.status, Status::Body | Status::ParentOfBody) {
            self.adopt_body(node.start);
        }
    }

    /// A body's text (from `start` on) replaces its parent's, which then
    /// takes only bodies. A parent that had no text of its own (see
    /// [`Node::transparent`]) has it from now on, as Pagefind's has.
    fn adopt_body(&mut self, start: usize) {
        let parent = self.stack.last_mut().expect("the document");
        parent.transparent = false;
        let from = parent.content;
        if parent.status != Status::ParentOfBody {
            parent.status = Status::ParentOfBody;
            self.text.replace_range(from..start, "");
        }
    }

    /// Pagefind's `wrap`: elements left open are folded into their
    /// parents (as they are, nothing around their text), then the meta is
    /// settled.
    fn finish(mut self) -> Parsed {
        while self.stack.len() > 1 {
            let node = self.stack.pop().expect("above the document");
            if node.transparent {
                continue;
            }
            let parent_status = self.top().status;
            let kept = parent_status != Status::ParentOfBody
                && !matches!(node.status, Status::Ignored | Status::Excluded);
            if !kept {
                self.text.truncate(node.start);
                continue;
            }
            self.text.replace_range(node.start..node.content, "");
            if matches!(node.status, Status::Body | Status::ParentOfBody) {
                self.adopt_body(node.start);
            }
        }
        let mut out = self.out;
        let meta = &mut out.meta;
        if let Some(image) = meta.remove("auto_image") {
            let alt = meta.remove("auto_image_alt").unwrap_or_default();
            if !meta.contains_key("image") {
                meta.insert("image".into(), image);
                meta.insert("image_alt".into(), alt);
            }
        }
        for auto in ["auto_title", "auto_page_title"] {
            if let Some(title) = meta.remove(auto)
                && !meta.contains_key("title")
            {
                meta.insert("title".into(), title);
            }
        }
        // Page meta wins over default meta.
        let mut merged = self.default_meta;
        merged.extend(std::mem::take(&mut out.meta));
        out.meta = merged;
        // Pagefind's digest is `normalize_content` of this, but its only
        // reader splits it at white space, and normalising changes only
        // white space: decoding the entities is enough.
        out.digest = match html_escape::decode_html_entities(&self.text) {
            Cow::Borrowed(_) => self.text,
            Cow::Owned(decoded) => decoded,
        };
        out.has_custom_body = self.stack[0].status == Status::ParentOfBody;
        out
    }
}
