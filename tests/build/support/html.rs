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

/// `(data-tab, heading text, code)` of each panel of each group of a built page.
pub fn tab_groups(html: &str) -> Vec<Vec<(String, String, String)>> {
    let doc = Html::parse_document(html);
    select(&doc, ".body [data-tabs]")
        .iter()
        .map(|group| {
            group
                .select(&Selector::parse(":scope > [data-tab]").unwrap())
                .map(|panel| {
                    let first = panel.first_child().and_then(ElementRef::wrap).unwrap();
                    let code = panel
                        .select(&Selector::parse(".codeblock code").unwrap())
                        .next()
                        .unwrap();
                    (
                        panel.value().attr("data-tab").unwrap().to_string(),
                        format!(
                            "{}:{}",
                            first.value().name(),
                            first.text().collect::<String>()
                        ),
                        code.text().collect::<String>(),
                    )
                })
                .collect()
        })
        .collect()
}
