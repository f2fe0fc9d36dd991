//! Tool tabs, by a heading convention: the subsections of a heading marked
//! `{.tabs}` form one tab group, a tab per subsection, named by its heading.
//!
//! ```markdown
//! ## Step-by-Step CLI Remediation {.tabs}
//!
//! ### Ollama
//! ...
//! ### vLLM
//! ...
//! ```
//!
//! errata writes a group (`<div data-tabs="...">`) around the subsections
//! and a panel (`<div data-tab="ollama" data-label="Ollama">`) around each;
//! the theme's script turns them into WAI-ARIA tabs. Without the script
//! the page reads as written: every block under its heading. The group
//! ends at the next heading of the marked heading's level or higher (or at
//! the end of the page); text between the marked heading and its first
//! subsection stays above the tabs. Only headings outside quotes, lists
//! and footnotes take part, so the divs always nest.

use pulldown_cmark::{Event, Tag, TagEnd};

use super::attribute;
use crate::slug::slugify;

/// The class that marks a heading whose subsections are tabs.
pub(super) const CLASS: &str = "tabs";

/// The tab group being written, if any.
#[derive(Default)]
pub(super) struct Tabs {
    /// Quotes, lists and footnotes open around the current event.
    containers: usize,
    group: Option<Group>,
}

struct Group {
    /// Level of the marked heading.
    level: u8,
    /// Its text, which names the tab list.
    label: String,
    /// The group's div is open (it opens at the first subsection).
    open: bool,
    /// A panel's div is open.
    panel: bool,
}

impl Tabs {
    /// Follows the nesting of containers; call with every event.
    pub(super) fn observe(&mut self, event: &Event<'_>) {
        match event {
            Event::Start(
                Tag::BlockQuote(_) | Tag::List(_) | Tag::Item | Tag::FootnoteDefinition(_),
            ) => self.containers += 1,
            Event::End(
                TagEnd::BlockQuote(_) | TagEnd::List(_) | TagEnd::Item | TagEnd::FootnoteDefinition,
            ) => self.containers = self.containers.saturating_sub(1),
            _ => {}
        }
    }

    /// The markup that goes before a heading of `level` with text `text`
    /// (closing a panel or the group, opening a panel); empty when none.
    /// `marked` says the heading carries the `tabs` class: it starts a group.
    pub(super) fn before_heading(&mut self, level: u8, text: &str, marked: bool) -> String {
        let mut html = String::new();
        if self.containers > 0 {
            return html;
        }
        if let Some(group) = &mut self.group {
            if level <= group.level {
                html.push_str(&self.finish());
            } else if level == group.level + 1 {
                if group.panel {
                    html.push_str("</div>\n");
                } else if !group.open {
                    html.push_str("<div class=\"tab-group\" data-tabs=\"");
                    attribute(&group.label, &mut html);
                    html.push_str("\">\n");
                    group.open = true;
                }
                let label = text.trim();
                html.push_str("<div class=\"tab-panel\" data-tab=\"");
                attribute(&slugify(label), &mut html);
                html.push_str("\" data-label=\"");
                attribute(label, &mut html);
                html.push_str("\">\n");
                group.panel = true;
            }
        }
        // Groups do not nest: a marked heading inside a group is a plain heading.
        if marked && self.group.is_none() {
            self.group = Some(Group {
                level,
                label: text.trim().to_string(),
                open: false,
                panel: false,
            });
        }
        html
    }

    /// Closes what is open; call at the end of the page.
    pub(super) fn finish(&mut self) -> String {
        let mut html = String::new();
        if let Some(group) = self.group.take() {
            if group.panel {
                html.push_str("</div>\n");
            }
            if group.open {
                html.push_str("</div>\n");
            }
        }
        html
    }
}
