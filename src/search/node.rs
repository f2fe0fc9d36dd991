//! An element as the search parser ([`super::parse`]) keeps it while it
//! is open: its kind, its status (indexed, ignored, a body...), where its
//! text starts in the parser's buffer, and what its attributes name.

use std::borrow::Cow;

use super::elements::Kind;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Status {
    Indexing,
    Ignored,
    Excluded,
    Body,
    /// A `data-pagefind-body` was below: only bodies add to it.
    ParentOfBody,
}

/// An open element (or the document, at the bottom of the stack).
///
/// Pagefind gives each element its own text and adds it to its parent's
/// when it ends, so a word is copied once for every element around it.
/// Here the text of every open element is one buffer: an element's is the
/// end of it, from where the element started, and ending an element only
/// adds what goes around its text (or drops it).
#[derive(Debug)]
pub(super) struct Node<'a> {
    /// Lower-case tag name.
    pub(super) tag: Cow<'a, str>,
    /// The name of the end tag that ended it, when an ancestor's did (see
    /// `end_as` in [`super::parse`]): its heading weight goes by that name.
    pub(super) ended_as: Option<Box<str>>,
    pub(super) kind: Kind,
    /// Adds its text to the element below it (see `TRANSPARENT` in
    /// [`super::elements`]); it has no text of its own.
    pub(super) transparent: bool,
    /// Where its text starts in the parser's buffer: what goes before its
    /// text if it is indexed (its weight marker, a space before a
    /// sentence), then its text from `content` on.
    pub(super) start: usize,
    pub(super) content: usize,
    /// What its `data-pagefind-…` attributes name; most elements have none.
    pub(super) named: Option<Box<Named>>,
    pub(super) anchor_ids: Option<Vec<String>>,
    pub(super) status: Status,
}

/// The filters, sort keys, meta and weight an element's attributes name.
#[derive(Debug, Default)]
pub(super) struct Named {
    pub(super) filter: Option<Vec<String>>,
    pub(super) sort: Option<Vec<String>>,
    pub(super) meta: Option<Vec<String>>,
    pub(super) default_meta: Option<Vec<String>>,
    pub(super) weight: Option<String>,
}

impl<'a> Node<'a> {
    pub(super) fn new(tag: Cow<'a, str>, kind: Kind) -> Node<'a> {
        Node {
            tag,
            ended_as: None,
            kind,
            transparent: false,
            start: 0,
            content: 0,
            named: None,
            anchor_ids: None,
            status: Status::Indexing,
        }
    }

    /// Writes what goes before its text, if it is indexed: its weight
    /// marker, then a space if it is a sentence.
    pub(super) fn push_prefix(&self, out: &mut String) {
        if let Some((marker, weight)) = self.weight_marker() {
            out.push_str(marker);
            out.push_str(weight);
            out.push(' ');
        }
        if self.kind.is(Kind::SENTENCE) {
            out.push(' ');
        }
    }

    /// The weight marker that goes before its text: its own weight, or a
    /// heading's.
    pub(super) fn weight_marker(&self) -> Option<(&'static str, &str)> {
        if let Some(weight) = self.named.as_ref().and_then(|n| n.weight.as_ref()) {
            return Some((" ___PAGEFIND_WEIGHT___", weight));
        }
        let heading = match self.ended_as.as_deref().unwrap_or(&self.tag) {
            "h1" => "7",
            "h2" => "6",
            "h3" => "5",
            "h4" => "4",
            "h5" => "3",
            "h6" => "2",
            _ => return None,
        };
        Some((" ___PAGEFIND_AUTO_WEIGHT___", heading))
    }
}

/// SVG and MathML, where `/>` ends an element.
pub(super) fn is_foreign(tag: &str) -> bool {
    tag == "svg" || tag == "math"
}
