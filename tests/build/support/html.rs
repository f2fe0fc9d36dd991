use super::*;

pub fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

pub fn decode_entities(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

pub fn select<'a>(doc: &'a Html, css: &str) -> Vec<ElementRef<'a>> {
    doc.select(&Selector::parse(css).unwrap()).collect()
}

/// Position of each element in document order.
pub fn position(doc: &Html, element: &ElementRef<'_>) -> usize {
    doc.root_element()
        .descendants()
        .position(|n| n.id() == element.id())
        .unwrap()
}

pub fn json_ld(doc: &Html) -> serde_json::Value {
    let scripts = select(doc, "script[type='application/ld+json']");
    assert_eq!(scripts.len(), 1, "exactly one JSON-LD script");
    serde_json::from_str(&scripts[0].text().collect::<String>()).expect("JSON-LD parses")
}

pub fn node<'v>(graph: &'v serde_json::Value, kind: &str) -> &'v serde_json::Value {
    graph["@graph"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["@type"] == kind)
        .unwrap_or_else(|| panic!("no {kind}"))
}
