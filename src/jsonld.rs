//! Structured data: one JSON-LD `@graph` per page, serialised so that no
//! value can close the `<script>` element, and validated after rendering.

use serde_json::{Value, json};

/// One breadcrumb: a name and an absolute URL.
#[derive(Debug, Clone)]
pub struct Crumb {
    /// Shown name.
    pub name: String,
    /// Absolute URL.
    pub url: String,
}

/// What a triage page's graph is built from.
#[derive(Debug, Clone)]
pub struct Article<'a> {
    /// Page title.
    pub headline: &'a str,
    /// Meta description.
    pub description: &'a str,
    /// The error signature (`about`).
    pub signature: &'a str,
    /// Absolute page URL.
    pub url: &'a str,
    /// `datePublished`.
    pub published: Option<&'a str>,
    /// `dateModified` (falls back to `published`).
    pub modified: Option<&'a str>,
    /// Taxonomy terms.
    pub keywords: Vec<&'a str>,
    /// Page language.
    pub language: &'a str,
    /// Author or publisher name.
    pub author: &'a str,
    /// The site's name and absolute URL, for `publisher`.
    pub site_name: &'a str,
    /// The site's absolute base URL.
    pub site_url: &'a str,
    /// Home → section → page.
    pub crumbs: Vec<Crumb>,
    /// The page carries the sizing calculator.
    pub calculator: bool,
    /// Documents the page relies on, as `(title, absolute URL)`: `citation`.
    pub citations: Vec<(&'a str, &'a str)>,
}

fn unique<'k>(items: &[&'k str]) -> Vec<&'k str> {
    let mut seen = Vec::new();
    for item in items {
        if !seen.contains(item) {
            seen.push(*item);
        }
    }
    seen
}

fn breadcrumbs(crumbs: &[Crumb]) -> Value {
    let items: Vec<Value> = crumbs
        .iter()
        .enumerate()
        .map(
            |(i, c)| json!({"@type": "ListItem", "position": i + 1, "name": c.name, "item": c.url}),
        )
        .collect();
    json!({"@type": "BreadcrumbList", "itemListElement": items})
}

/// The graph of a triage page: TechArticle, BreadcrumbList and, with the
/// calculator, WebApplication. No ratings or reviews are invented.
pub fn article(a: &Article<'_>) -> Value {
    let mut article = json!({
        "@type": "TechArticle",
        "@id": format!("{}#article", a.url),
        "headline": a.headline,
        "description": a.description,
        "about": {"@type": "Thing", "name": a.signature},
        "keywords": unique(&a.keywords).join(", "),
        "inLanguage": a.language,
        "url": a.url,
        "mainEntityOfPage": {"@type": "WebPage", "@id": a.url},
        "author": {"@type": "Organization", "name": a.author, "url": a.site_url},
        "publisher": {"@type": "Organization", "name": a.site_name, "url": a.site_url},
    });
    if let Some(published) = a.published {
        article["datePublished"] = json!(published);
    }
    if let Some(modified) = a.modified.or(a.published) {
        article["dateModified"] = json!(modified);
    }
    if !a.citations.is_empty() {
        let cited: Vec<Value> = a
            .citations
            .iter()
            .map(|(name, url)| json!({"@type": "CreativeWork", "name": name, "url": url}))
            .collect();
        article["citation"] = json!(cited);
    }
    let mut graph = vec![article, breadcrumbs(&a.crumbs)];
    if a.calculator {
        graph.push(json!({
            "@type": "WebApplication",
            "name": "GPU memory sizing calculator",
            "url": format!("{}#calculator", a.url),
            "applicationCategory": "DeveloperApplication",
            "operatingSystem": "Any",
        }));
    }
    json!({"@context": "https://schema.org", "@graph": graph})
}

/// The graph of a list page (home, section, taxonomy): CollectionPage and
/// BreadcrumbList.
pub fn collection(name: &str, description: &str, url: &str, crumbs: &[Crumb]) -> Value {
    json!({
        "@context": "https://schema.org",
        "@graph": [
            {"@type": "CollectionPage", "@id": url, "name": name, "description": description, "url": url},
            breadcrumbs(crumbs),
        ]
    })
}

/// Serialises `value` for a `<script type="application/ld+json">` element:
/// `<`, `>`, `&`, U+2028 and U+2029 become `\u` escapes, so no string can
/// end the element or open a comment, and the JSON still parses the same.
pub fn to_script(value: &Value) -> String {
    let json = serde_json::to_string(value).expect("JSON values serialise");
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Properties each node type must carry.
const REQUIRED: &[(&str, &[&str])] = &[
    (
        "TechArticle",
        &[
            "headline",
            "description",
            "author",
            "publisher",
            "about",
            "url",
            "mainEntityOfPage",
        ],
    ),
    ("BreadcrumbList", &["itemListElement"]),
    (
        "WebApplication",
        &["name", "applicationCategory", "operatingSystem"],
    ),
    ("CollectionPage", &["name", "url"]),
];

fn absolute(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
}

/// Checks one script's JSON-LD: it parses, has an `@graph` whose nodes carry
/// their required properties, and every URL in it is absolute. `expected`
/// lists node types that must be present.
pub fn validate(script: &str, expected: &[&str]) -> Result<(), String> {
    let value: Value =
        serde_json::from_str(script).map_err(|e| format!("JSON-LD does not parse: {e}"))?;
    if value["@context"] != json!("https://schema.org") {
        return Err("JSON-LD has no \"@context\": \"https://schema.org\"".into());
    }
    let graph = value["@graph"]
        .as_array()
        .ok_or("JSON-LD has no \"@graph\" array")?;
    for want in expected {
        if !graph.iter().any(|n| n["@type"] == json!(want)) {
            return Err(format!("JSON-LD has no {want} node"));
        }
    }
    for node in graph {
        let kind = node["@type"]
            .as_str()
            .ok_or("a JSON-LD node has no \"@type\"")?;
        if let Some((_, props)) = REQUIRED.iter().find(|(t, _)| *t == kind) {
            for prop in *props {
                let v = &node[*prop];
                if v.is_null() || v == &json!("") || v == &json!([]) {
                    return Err(format!("JSON-LD {kind} is missing \"{prop}\""));
                }
            }
        }
        if kind == "BreadcrumbList" {
            for item in node["itemListElement"].as_array().into_iter().flatten() {
                let url = item["item"].as_str().unwrap_or_default();
                if !absolute(url) {
                    return Err(format!(
                        "JSON-LD breadcrumb \"{}\" has no absolute URL",
                        item["name"]
                    ));
                }
            }
        }
        for cited in node["citation"].as_array().into_iter().flatten() {
            let url = cited["url"].as_str().unwrap_or_default();
            if !absolute(url) {
                return Err(format!(
                    "JSON-LD {kind} citation {} has no absolute URL",
                    cited["name"]
                ));
            }
        }
        let urls = [
            ("url", &node["url"]),
            ("@id", &node["@id"]),
            ("mainEntityOfPage", &node["mainEntityOfPage"]["@id"]),
        ];
        for (key, value) in urls {
            if let Some(url) = value.as_str().filter(|u| !absolute(u)) {
                return Err(format!(
                    "JSON-LD {kind} \"{key}\" is not an absolute URL: {url}"
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(headline: &str, signature: &str) -> Value {
        article(&Article {
            headline,
            description: "d",
            signature,
            url: "https://x.example/oom/a/",
            published: Some("2026-11-29"),
            modified: None,
            keywords: vec!["cuda"],
            language: "en",
            author: "A",
            site_name: "S",
            site_url: "https://x.example/",
            crumbs: vec![
                Crumb {
                    name: "Home".into(),
                    url: "https://x.example/".into(),
                },
                Crumb {
                    name: headline.into(),
                    url: "https://x.example/oom/a/".into(),
                },
            ],
            calculator: true,
            citations: vec![("vLLM docs", "https://docs.vllm.ai/en/latest/")],
        })
    }

    #[test]
    fn hostile_values_cannot_close_the_script() {
        let nasty = "</script><script>alert(1)</script> <!-- \"q\" \\ 🚀 \u{2028}";
        let script = to_script(&sample(nasty, nasty));
        for bad in ["<", ">", "&", "\u{2028}", "\u{2029}"] {
            assert!(!script.contains(bad), "{bad} in {script}");
        }
        let back: Value = serde_json::from_str(&script).unwrap();
        assert_eq!(back["@graph"][0]["headline"], json!(nasty));
        assert_eq!(back["@graph"][0]["about"]["name"], json!(nasty));
        validate(
            &script,
            &["TechArticle", "BreadcrumbList", "WebApplication"],
        )
        .unwrap();
    }

    #[test]
    fn sources_become_citations() {
        let v = sample("t", "s");
        assert_eq!(
            v["@graph"][0]["citation"],
            json!([{"@type": "CreativeWork", "name": "vLLM docs", "url": "https://docs.vllm.ai/en/latest/"}])
        );
        let mut none = sample("t", "s");
        none["@graph"][0]
            .as_object_mut()
            .unwrap()
            .remove("citation");
        validate(&to_script(&none), &["TechArticle"]).unwrap();
    }

    #[test]
    fn validation_catches_missing_and_relative() {
        let mut v = sample("t", "s");
        v["@graph"][0]["url"] = json!("/relative/");
        assert!(
            validate(&to_script(&v), &[])
                .unwrap_err()
                .contains("absolute")
        );
        let mut v = sample("t", "s");
        v["@graph"][0].as_object_mut().unwrap().remove("headline");
        assert!(
            validate(&to_script(&v), &[])
                .unwrap_err()
                .contains("headline")
        );
        assert!(validate("{not json", &[]).unwrap_err().contains("parse"));
        let mut v = sample("t", "s");
        v["@graph"][0]["citation"][0]["url"] = json!("docs/");
        assert!(
            validate(&to_script(&v), &[])
                .unwrap_err()
                .contains("citation")
        );
        assert!(validate(&to_script(&sample("t", "s")), &["CollectionPage"]).is_err());
    }
}
