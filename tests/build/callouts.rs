//! Callouts: GitHub's alert syntax rendered as accessible, styled notes.

use crate::support::*;

#[test]
fn every_alert_type_is_a_titled_note_with_an_icon() {
    let site = Fixture::new("authoring");
    let report = site.build().unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let doc = Html::parse_document(&site.read("guides/callouts/index.html"));
    let callouts = select(&doc, ".body [data-callout]");
    let found: Vec<(String, String, String, String)> = callouts
        .iter()
        .map(|c| {
            let title = select_in(c, ".callout-title");
            (
                c.value().attr("data-callout").unwrap().to_string(),
                c.value().attr("role").unwrap_or_default().to_string(),
                c.value().attr("aria-label").unwrap_or_default().to_string(),
                title.text().collect::<String>(),
            )
        })
        .collect();
    let expected: Vec<(String, String, String, String)> = [
        ("note", "Note"),
        ("tip", "Tip"),
        ("important", "Important"),
        ("warning", "Warning"),
        ("caution", "Caution"),
    ]
    .iter()
    .map(|(k, t)| (k.to_string(), "note".into(), t.to_string(), t.to_string()))
    .collect();
    assert_eq!(found, expected);
    for c in &callouts {
        // The title is visible text (the icon is not the only signal); the
        // icon is decoration, and the label is not read twice.
        let title = select_in(c, ".callout-title");
        assert_eq!(title.value().attr("aria-hidden"), Some("true"));
        let icon = select_in(c, "svg");
        assert_eq!(icon.value().attr("aria-hidden"), Some("true"));
        // The body follows the title, inline Markdown intact.
        assert!(c.text().collect::<String>().len() > 20);
    }
    assert_eq!(
        select(&doc, ".body [data-callout=warning] a[href='#callouts']").len(),
        1
    );
    assert_eq!(select(&doc, ".body blockquote").len(), 0);
}

fn select_in<'a>(element: &ElementRef<'a>, css: &str) -> ElementRef<'a> {
    element
        .select(&Selector::parse(css).unwrap())
        .next()
        .unwrap_or_else(|| panic!("no {css}"))
}
