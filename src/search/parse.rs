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
//! bundle both ways and compares them). It can differ on HTML that the
//! default theme and sanitised Markdown never produce (the sanitiser
//! re-serialises raw HTML, and the output keeps every closing tag; raw HTML
//! under `unsafe_html`, or another theme, can), found by review:
//! - an element closed by an ancestor's end tag (`<p>x<b>y</p>`): lol_html
//!   ends it with the ancestor's tag name, so it takes that tag's sentence
//!   break and heading weight; here it is ended as itself;
//! - `/>` on an HTML element (`<span/>`, `<script/>`): lol_html ignores it,
//!   and `<svg/>` with no content makes Pagefind ignore its parent; here
//!   such an element is empty;
//! - HTML's tokenizer corners: script-data escapes, `<!-->`, `--!>`,
//!   CDATA outside foreign content, and `title`/`style` inside SVG.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

use regex::Regex;

use super::html::{Markup, RAW_TEXT, closing_tag};

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

static SENTENCE_CHARS: LazyLock<Regex> = LazyLock::new(|| Regex::new("[\\w'\"\\)\\$\\*]").unwrap());
static ATTRIBUTE_MATCH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new("^\\s*(?P<name>[^:\\[\\]]+)\\[(?P<attribute>.+)\\]\\s*$").unwrap());
static ALL_SPACES: LazyLock<Regex> = LazyLock::new(|| Regex::new("\\s").unwrap());
static NEWLINES: LazyLock<Regex> = LazyLock::new(|| Regex::new("(\n|\r\n)+").unwrap());
static TRIM_NEWLINES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new("^[\n\r\\s]+|[\n\r\\s]+$").unwrap());
static EXTRANEOUS_SPACES: LazyLock<Regex> = LazyLock::new(|| Regex::new("\\s{2,}").unwrap());

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

#[derive(Clone, Copy, Debug, PartialEq)]
enum Status {
    Indexing,
    Ignored,
    Excluded,
    Body,
    /// A `data-pagefind-body` was below: only bodies add to it.
    ParentOfBody,
}

/// An open element (or the document, at the bottom of the stack).
#[derive(Debug)]
struct Node<'a> {
    /// Lower-case tag name.
    tag: Cow<'a, str>,
    /// Adds its text to the element below it (see [`TRANSPARENT`]).
    transparent: bool,
    value: String,
    filter: Option<Vec<String>>,
    sort: Option<Vec<String>>,
    meta: Option<Vec<String>>,
    default_meta: Option<Vec<String>>,
    weight: Option<String>,
    anchor_ids: Option<Vec<String>>,
    status: Status,
}

impl<'a> Node<'a> {
    fn new(tag: Cow<'a, str>) -> Node<'a> {
        Node {
            tag,
            transparent: false,
            value: String::new(),
            filter: None,
            sort: None,
            meta: None,
            default_meta: None,
            weight: None,
            anchor_ids: None,
            status: Status::Indexing,
        }
    }

    /// `filter:value` names its value; a bare `filter` takes the element's
    /// text (none when it has no text).
    fn attribute_pair(&self, input: &str) -> Option<(String, String)> {
        match input.split_once(':') {
            Some((key, value)) => Some((key.to_owned(), normalize_content(value))),
            None if self.value.is_empty() => None,
            None => Some((input.to_owned(), normalize_content(&self.value))),
        }
    }
}

/// The attributes of a start tag that the parser reads.
#[derive(Default)]
struct Attrs<'a> {
    all: Vec<(&'a str, &'a str)>,
}

impl<'a> Attrs<'a> {
    /// The first attribute named `name` (as lol_html finds it).
    fn get(&self, name: &str) -> Option<&'a str> {
        self.all
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|&(_, v)| v)
    }
}

/// Pagefind's `normalize_content`: entities decoded, the ends trimmed, and
/// runs of line breaks and of white space made one space.
pub fn normalize_content(content: &str) -> String {
    let content = html_escape::decode_html_entities(content);
    let content = TRIM_NEWLINES.replace_all(&content, "");
    let content = NEWLINES.replace_all(&content, " ");
    let content = EXTRANEOUS_SPACES.replace_all(&content, " ");
    content.into_owned()
}

/// `filter`, `meta`, `sort` and `default-meta` attribute values: comma
/// separated keys, `key:literal`, or `key[attribute]` for another
/// attribute's value.
fn parse_attr_string(input: &str, attrs: &Attrs) -> Vec<String> {
    if let Some((keys, literal)) = input.split_once(':') {
        let mut keys = parse_attr_string(keys, attrs);
        if let Some(last) = keys.last_mut() {
            last.push(':');
            last.push_str(literal);
        }
        return keys;
    }
    input
        .split(',')
        .map(|chunk| {
            let chunk = chunk.trim();
            match ATTRIBUTE_MATCH.captures(chunk) {
                Some(found) => format!(
                    "{}:{}",
                    &found["name"],
                    attrs.get(&found["attribute"]).unwrap_or_default()
                ),
                None => chunk.to_owned(),
            }
        })
        .collect()
}

fn ends_sentence(value: &str) -> bool {
    value.chars().last().is_some_and(|c| {
        if c.is_ascii() {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '\'' | '"' | ')' | '$' | '*')
        } else {
            SENTENCE_CHARS.is_match(c.encode_utf8(&mut [0; 4]))
        }
    })
}

/// The parser's state while it reads one page.
struct Parser<'a> {
    html: &'a str,
    stack: Vec<Node<'a>>,
    /// How deep in the stack the `html` element is, once open.
    html_at: Option<usize>,
    anchors: usize,
    /// A start tag's attributes (kept to reuse their memory).
    attrs: Vec<(&'a str, &'a str)>,
    /// `data-pagefind-default-meta`, kept apart until the end.
    default_meta: BTreeMap<String, String>,
    out: Parsed,
}

/// Parses one page as Pagefind would with its default options (root
/// selector `html`, no exclusions).
pub fn parse(html: &str) -> Parsed {
    let mut parser = Parser {
        html,
        stack: vec![Node::new(Cow::Borrowed(""))],
        html_at: None,
        anchors: 0,
        attrs: Vec::new(),
        default_meta: BTreeMap::new(),
        out: Parsed::default(),
    };
    parser.read();
    parser.finish()
}

impl<'a> Parser<'a> {
    fn read(&mut self) {
        let html = self.html;
        let mut at = 0;
        while at < html.len() {
            let Some(found) = html[at..].find('<') else {
                self.text(&html[at..]);
                break;
            };
            let lt = at + found;
            self.text(&html[at..lt]);
            let Some(markup) = Markup::at(html, lt) else {
                self.text("<");
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
            let name = if tag.name.bytes().any(|b| b.is_ascii_uppercase()) {
                Cow::Owned(tag.name.to_ascii_lowercase())
            } else {
                Cow::Borrowed(tag.name)
            };
            if tag.closing {
                self.end(&name);
                continue;
            }
            let mut attrs = Attrs {
                all: std::mem::take(&mut self.attrs),
            };
            attrs.all.clear();
            attrs.all.extend(tag.attributes(html));
            let content = !tag.self_closing && !VOID.contains(&&*name);
            self.start(name.clone(), &attrs, content);
            self.attrs = attrs.all;
            if content && RAW_TEXT.contains(&&*name) {
                match closing_tag(html, at, &name) {
                    Some((lt, end)) => {
                        self.text(&html[at..lt]);
                        self.end(&name);
                        at = end;
                    }
                    None => {
                        self.text(&html[at..]);
                        break;
                    }
                }
            } else if name == "plaintext" && content {
                self.text(&html[at..]);
                break;
            }
        }
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

    fn text(&mut self, text: &str) {
        if text.is_empty() || !self.in_scope() {
            return;
        }
        let at = self.top_at();
        let node = &mut self.stack[at];
        node.value.push_str(text);
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

    fn start(&mut self, tag: Cow<'a, str>, attrs: &Attrs<'a>, content: bool) {
        if self.html_at.is_none() {
            if tag != "html" {
                return;
            }
            self.html_at = Some(self.stack.len());
        }
        if content
            && TRANSPARENT.contains(&&*tag)
            && matches!(self.top().status, Status::Indexing | Status::Body)
            && !attrs.all.iter().any(|(name, _)| {
                name.eq_ignore_ascii_case("id")
                    || name
                        .get(..14)
                        .is_some_and(|p| p.eq_ignore_ascii_case("data-pagefind-"))
            })
        {
            let mut node = Node::new(tag);
            node.transparent = true;
            self.stack.push(node);
            return;
        }
        let explicit_ignore = attrs.get("data-pagefind-ignore").map(|value| {
            match value.to_ascii_lowercase().as_str() {
                "" | "index" | "true" => Status::Ignored,
                // "all", and (as Pagefind warns) anything else.
                _ => Status::Excluded,
            }
        });
        let status = if attrs.get("data-pagefind-body").is_some() {
            Status::Body
        } else {
            explicit_ignore.unwrap_or(Status::Indexing)
        };
        let parse_list = |name: &str| attrs.get(name).map(|v| parse_attr_string(v, attrs));
        let filter = parse_list("data-pagefind-filter");
        let meta = parse_list("data-pagefind-meta");
        let default_meta = parse_list("data-pagefind-default-meta");
        let sort = parse_list("data-pagefind-sort");
        let weight = attrs.get("data-pagefind-weight").map(str::to_owned);
        let element_id = attrs
            .get("id")
            .map(|id| ALL_SPACES.replace_all(id, "").into_owned());
        let title = attrs
            .get("data-pagefind-title")
            .map(normalize_content)
            .filter(|t| !t.is_empty());
        let index_attrs = attrs.get("data-pagefind-index-attrs");

        let counter = self.anchors;
        let parent = self.top();
        let mut anchor_id = None;
        if !matches!(status, Status::Excluded | Status::Ignored)
            && let Some(element_id) = element_id
            // Outside a body, once a body was seen, no anchor is taken.
            && (parent.status != Status::ParentOfBody
                || matches!(status, Status::Body | Status::ParentOfBody))
        {
            parent.value.push_str(&format!(
                " ___PAGEFIND_ANCHOR___{tag}:{counter}:{element_id} "
            ));
            anchor_id = Some(format!("{counter}:{element_id}"));
        }
        if status != Status::Excluded {
            for name in index_attrs.into_iter().flat_map(|a| a.split(',')) {
                let mut value = attrs.get(name.trim()).unwrap_or_default().to_owned();
                if ends_sentence(&value) {
                    value.push('.');
                }
                parent.value.push(' ');
                parent.value.push_str(&value);
                parent.value.push(' ');
            }
            if tag == "br" {
                parent.value.push(' ');
            }
        }
        let mut anchor_ids = match &parent.anchor_ids {
            Some(ids) if INLINE.contains(&&*tag) => Some(ids.clone()),
            _ => None,
        };
        if let Some(id) = &anchor_id {
            anchor_ids.get_or_insert_with(Vec::new).push(id.clone());
        }
        let mut node = Node {
            status: if parent.status == Status::Excluded {
                Status::Excluded
            } else {
                status
            },
            filter,
            sort,
            meta,
            default_meta,
            weight,
            anchor_ids,
            ..Node::new(tag)
        };
        if let Some(id) = anchor_id {
            self.anchors += 1;
            if let Some(title) = title {
                self.out.anchor_titles.insert(id, title);
            }
        }
        if content {
            if REMOVE.contains(&&*node.tag) {
                node.status = Status::Ignored;
            }
            self.stack.push(node);
            return;
        }
        // An element with no content ends where it starts.
        if node.status == Status::Excluded {
            return;
        }
        self.attributes_of(&node);
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
            let node = self.stack.pop().expect("above the document");
            self.close(node);
        }
        if self.stack.len() <= html_at {
            self.html_at = None;
        }
    }

    /// Filters, sort keys and meta an element names.
    fn attributes_of(&mut self, node: &Node<'a>) {
        for filter in node.filter.iter().flatten() {
            if let Some((key, value)) = node.attribute_pair(filter) {
                let values = self.out.filters.entry(key).or_default();
                values.push(normalize_content(&value));
            }
        }
        for (list, into) in [
            (&node.sort, &mut self.out.sort),
            (&node.meta, &mut self.out.meta),
            (&node.default_meta, &mut self.default_meta),
        ] {
            for item in list.iter().flatten() {
                if let Some((key, value)) = node.attribute_pair(item) {
                    into.insert(key, value);
                }
            }
        }
    }

    fn close(&mut self, mut node: Node<'a>) {
        if node.transparent || node.status == Status::Excluded {
            return;
        }
        self.attributes_of(&node);
        let meta = &mut self.out.meta;
        if node.tag == "h1" && !meta.contains_key("auto_title") && !node.value.trim().is_empty() {
            meta.insert("auto_title".into(), normalize_content(&node.value));
        }
        if node.tag == "title" && !meta.contains_key("auto_page_title") {
            meta.insert("auto_page_title".into(), normalize_content(&node.value));
        }
        if node.status == Status::Ignored {
            return;
        }
        if SENTENCE.contains(&&*node.tag) {
            node.value.insert(0, ' ');
            if ends_sentence(&node.value) {
                node.value.push('.');
            }
            node.value.push(' ');
        }
        let auto_weight = match &*node.tag {
            "h1" => Some("7"),
            "h2" => Some("6"),
            "h3" => Some("5"),
            "h4" => Some("4"),
            "h5" => Some("3"),
            "h6" => Some("2"),
            _ => None,
        };
        if let Some(weight) = &node.weight {
            node.value = [
                " ___PAGEFIND_WEIGHT___",
                weight,
                " ",
                &node.value,
                " ___END_PAGEFIND_WEIGHT___ ",
            ]
            .concat();
        } else if let Some(weight) = auto_weight {
            node.value = [
                " ___PAGEFIND_AUTO_WEIGHT___",
                weight,
                " ",
                &node.value,
                " ___END_PAGEFIND_WEIGHT___ ",
            ]
            .concat();
        }
        let parent = self.top();
        if parent.status == Status::ParentOfBody
            && !matches!(node.status, Status::Body | Status::ParentOfBody)
        {
            return;
        }
        match node.status {
            Status::Ignored | Status::Excluded => {}
            Status::Indexing => parent.value.push_str(&node.value),
            Status::Body | Status::ParentOfBody => {
                if parent.status != Status::ParentOfBody {
                    parent.value.clear();
                }
                parent.value.push_str(&node.value);
                parent.status = Status::ParentOfBody;
            }
        }
    }

    /// Pagefind's `wrap`: elements left open are folded into their
    /// parents, then the meta is settled.
    fn finish(mut self) -> Parsed {
        while self.stack.len() > 1 {
            let node = self.stack.pop().expect("above the document");
            if node.transparent {
                continue;
            }
            let parent = self.top();
            if parent.status == Status::ParentOfBody {
                continue;
            }
            match node.status {
                Status::Ignored | Status::Excluded => {}
                Status::Indexing => parent.value.push_str(&node.value),
                Status::Body | Status::ParentOfBody => {
                    parent.value.clear();
                    parent.value.push_str(&node.value);
                    parent.status = Status::ParentOfBody;
                }
            }
        }
        let root = self.stack.pop().expect("the document");
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
        out.digest = html_escape::decode_html_entities(&root.value).into_owned();
        out.has_custom_body = root.status == Status::ParentOfBody;
        out
    }
}
