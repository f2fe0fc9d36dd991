use crate::support::*;

#[test]
fn affiliate_links_get_sponsored_rel_wherever_they_come_from() {
    let site = Fixture::new("sponsored");
    site.build().unwrap();
    let html = site.read("gpu/inline/index.html");
    let doc = check_policy(&html, true);
    let rel = |href: &str| {
        let a = select(&doc, "a[href]")
            .into_iter()
            .find(|a| a.value().attr("href") == Some(href))
            .unwrap();
        (
            a.value().attr("rel").map(str::to_string),
            a.value().attr("target").map(str::to_string),
        )
    };
    // Markdown, raw HTML (the author's rel kept), front matter, external, internal.
    assert_eq!(
        rel("https://www.amazon.com/dp/B0?tag=fixture-20"),
        (Some("sponsored noopener".into()), Some("_blank".into()))
    );
    assert_eq!(
        rel("https://runpod.io?ref=raw"),
        (Some("me sponsored noopener".into()), Some("_blank".into()))
    );
    assert_eq!(
        rel("https://runpod.io?ref=front"),
        (Some("noopener sponsored".into()), Some("_blank".into()))
    );
    assert_eq!(
        rel("https://pytorch.org/docs/"),
        (Some("noopener".into()), None)
    );
    assert_eq!(rel("/gpu/plain/"), (None, None));
}

#[test]
fn disclosure_only_where_sponsored_links_are() {
    let site = Fixture::new("sponsored");
    site.build().unwrap();
    check_policy(&site.read("gpu/plain/index.html"), false);
    // Marked by the author with rel="sponsored": a disclosure, without the Amazon sentence.
    let doc = check_policy(&site.read("gpu/marked/index.html"), false);
    assert_eq!(select(&doc, "[data-disclosure]").len(), 1);
}

#[test]
fn external_nofollow_is_configurable() {
    let site = Fixture::new("sponsored");
    let toml = std::fs::read_to_string(site.root().join("site.toml")).unwrap();
    site.write(
        "site.toml",
        &format!("{toml}\n[links]\nexternal_nofollow = true\n"),
    );
    site.build().unwrap();
    let doc = Html::parse_document(&site.read("gpu/plain/index.html"));
    let a = select(&doc, "a[href='https://github.com/pytorch/pytorch']");
    assert_eq!(a[0].value().attr("rel"), Some("noopener nofollow"));
}

const HOSTILE_TITLE: &str = "</script><script>alert(1)</script></title><script>alert(3)</script> <!-- \"quoted\" \\ back 🚀";

#[test]
fn hostile_front_matter_cannot_inject_script_or_break_json_ld() {
    let site = Fixture::new("sponsored");
    site.build().unwrap();
    let html = site.read("gpu/inline/index.html");
    let doc = Html::parse_document(&html);
    // Only the theme's scripts (by src) and data scripts: nothing injected.
    let scripts = select(&doc, "script");
    let kinds: Vec<String> = scripts
        .iter()
        .map(|s| match (s.value().attr("src"), s.value().attr("type")) {
            (Some(src), _) => src
                .split('/')
                .next_back()
                .unwrap()
                .split('.')
                .next()
                .unwrap()
                .to_string(),
            (None, Some(kind)) => kind.to_string(),
            (None, None) => format!("inline script: {}", s.text().collect::<String>()),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "application/ld+json",
            "find",
            "from-log",
            "application/json",
            "errata",
            "tabs",
            "sizing"
        ],
        "{html}"
    );
    // minify-html may decode `&lt;` in <title> where the HTML parser cannot
    // leave the element; what matters is how a real parser reads the page.
    let title: String = select(&doc, "title")[0].text().collect();
    assert!(title.starts_with(HOSTILE_TITLE), "{title}");
    let graph = json_ld(&doc);
    let article = node(&graph, "TechArticle");
    assert_eq!(article["headline"], HOSTILE_TITLE);
    assert_eq!(
        article["about"]["name"],
        "Error </script><script>alert(2)</script> & <!-- \u{2028} ok"
    );
    // The title is text, not markup, everywhere else too.
    let h1: String = select(&doc, "h1")[0].text().collect();
    assert_eq!(h1, HOSTILE_TITLE);
}

#[test]
fn json_ld_has_the_required_nodes_with_absolute_urls() {
    let site = Fixture::new("sponsored");
    site.build().unwrap();
    let doc = Html::parse_document(&site.read("gpu/inline/index.html"));
    let graph = json_ld(&doc);
    let article = node(&graph, "TechArticle");
    for key in [
        "headline",
        "description",
        "datePublished",
        "dateModified",
        "author",
        "publisher",
        "about",
        "keywords",
        "url",
        "mainEntityOfPage",
    ] {
        assert!(!article[key].is_null(), "TechArticle.{key}");
    }
    assert_eq!(article["url"], "https://example.org/gpu/inline/");
    assert_eq!(article["author"]["name"], "Fixture Author");
    let crumbs: Vec<_> = node(&graph, "BreadcrumbList")["itemListElement"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["item"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        crumbs,
        [
            "https://example.org/",
            "https://example.org/gpu/",
            "https://example.org/gpu/inline/"
        ]
    );
    let app = node(&graph, "WebApplication");
    assert_eq!(app["operatingSystem"], "Any");
    assert!(app["applicationCategory"].is_string());
    assert!(!html_has_rating(&graph));
    // No calculator, no WebApplication.
    let plain = json_ld(&Html::parse_document(&site.read("gpu/plain/index.html")));
    assert!(
        plain["@graph"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n["@type"] != "WebApplication")
    );
    // Head metadata.
    let head = |css: &str, attr: &str| select(&doc, css)[0].value().attr(attr).unwrap().to_string();
    assert_eq!(
        head("link[rel=canonical]", "href"),
        "https://example.org/gpu/inline/"
    );
    assert_eq!(
        head("meta[property='og:url']", "content"),
        "https://example.org/gpu/inline/"
    );
    assert_eq!(
        head("meta[name=description]", "content"),
        "Hostile values & affiliate links in the body."
    );
    assert_eq!(head("meta[name='twitter:card']", "content"), "summary");
    assert_eq!(head("html", "lang"), "en");
}

fn html_has_rating(graph: &serde_json::Value) -> bool {
    let text = graph.to_string();
    text.contains("aggregateRating") || text.contains("\"review")
}

#[test]
fn template_links_follow_the_policy_and_get_a_disclosure() {
    let site = Fixture::new("sponsored");
    std::fs::create_dir_all(site.root().join("templates")).unwrap();
    site.write(
        "templates/page.html",
        "{% extends \"base.html\" %}{% block content %}<p>Ad: <a href=\"https://www.amazon.com/?tag=tpl-20\">deal</a></p>{{ content }}{% endblock content %}",
    );
    let report = site.build().unwrap();
    assert!(
        report.warnings.iter().any(|w| w
            .message
            .contains("puts a sponsored link before any affiliate disclosure")),
        "{:?}",
        report.warnings
    );
    // The template put its affiliate link before any disclosure: one is inserted.
    let doc = check_policy(&site.read("gpu/plain/index.html"), true);
    assert_eq!(select(&doc, "[data-disclosure]").len(), 1);
    // A script URL in a template fails the build, naming the template.
    site.write("templates/page.html", "{% extends \"base.html\" %}{% block content %}<a href=\"javascript:void(0)\">x</a>{% endblock content %}");
    let errors = errors(site.build());
    assert!(
        errors
            .iter()
            .all(|e| e.contains("javascript:void(0)") && e.contains("template page.html")),
        "{errors:?}"
    );
    assert_eq!(errors.len(), 3);
}

#[test]
fn a_broken_json_ld_template_fails_the_build() {
    let site = Fixture::new("sponsored");
    std::fs::create_dir_all(site.root().join("templates")).unwrap();
    let base =
        std::fs::read_to_string(site.root().join("themes/default/templates/base.html")).unwrap();
    site.write(
        "templates/base.html",
        &base.replace(
            "{{ jsonld }}</script>",
            "{{ jsonld }}</script><script type=\"application/ld+json\">{\"@context\": </script>",
        ),
    );
    let errors = errors(site.build());
    assert!(
        errors.iter().any(|e| e.contains("exactly one")),
        "{errors:?}"
    );
}

#[test]
fn links_with_another_sites_id_or_none_are_warned_about_at_their_line() {
    let site = Fixture::new("affiliate_ids");
    let (code, json) = check_cmd(site.root(), &["--format", "json"]);
    assert_eq!(code, 0, "warnings do not fail a check: {json}");
    let report: serde_json::Value = serde_json::from_str(&json).expect("JSON report");
    let found: Vec<(u64, u64, &str, &str)> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            p["code"]
                .as_str()
                .is_some_and(|c| c.starts_with("affiliate-"))
        })
        .map(|p| {
            assert_eq!(p["file"], "content/gpu/cards.md");
            assert_eq!(p["severity"], "warning");
            (
                p["line"].as_u64().unwrap(),
                p["column"].as_u64().unwrap(),
                p["code"].as_str().unwrap(),
                p["message"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                8,
                37,
                "affiliate-foreign-id",
                "affiliate link carries the id `theirs`, which is not one of this site's `runpod` ids"
            ),
            (
                11,
                14,
                "affiliate-foreign-id",
                "affiliate link carries the id `other-20`, which is not one of this site's `amazon` ids"
            ),
            (
                13,
                29,
                "affiliate-missing-id",
                "link to `amazon` carries no affiliate id (`tag`): it earns nothing"
            ),
            (
                15,
                16,
                "affiliate-foreign-id",
                "affiliate link carries the id `raw-21`, which is not one of this site's `amazon` ids"
            ),
            // Links a browser takes to amazon.com, though not written
            // `https://`: `//host`, `http:host` under an https site,
            // backslashes, a tab in the scheme.
            (
                23,
                49,
                "affiliate-foreign-id",
                "affiliate link carries the id `rel-23`, which is not one of this site's `amazon` ids"
            ),
            (
                24,
                14,
                "affiliate-foreign-id",
                "affiliate link carries the id `colon-24`, which is not one of this site's `amazon` ids"
            ),
            (
                25,
                10,
                "affiliate-foreign-id",
                "affiliate link carries the id `back-25`, which is not one of this site's `amazon` ids"
            ),
            (
                26,
                10,
                "affiliate-foreign-id",
                "affiliate link carries the id `tab-26`, which is not one of this site's `amazon` ids"
            ),
            (
                27,
                13,
                "affiliate-missing-id",
                "link to `amazon` carries no affiliate id (`tag`): it earns nothing"
            ),
        ],
        "{json}"
    );
    // Every output format carries them, at the same place.
    let (_, github) = check_cmd(site.root(), &["--format", "github"]);
    assert!(
        github.contains("::warning file=content/gpu/cards.md,line=11,col=14::affiliate link carries the id `other-20`"),
        "{github}"
    );
    let (_, human) = check_cmd(site.root(), &[]);
    assert!(human.contains("content/gpu/cards.md\n"), "{human}");
    assert!(
        human.contains("13:29: warning: link to `amazon` carries no affiliate id"),
        "{human}"
    );
    assert!(
        human.contains("use this site's id: `tag=mine-20`"),
        "{human}"
    );
    let (_, junit) = check_cmd(site.root(), &["--format", "junit"]);
    roxmltree::Document::parse(&junit).expect("JUnit XML parses");
    assert!(junit.contains("`raw-21`"), "{junit}");
    // The links are still affiliate links: a build marks them sponsored.
    site.build().unwrap();
    let html = site.read("gpu/cards/index.html");
    assert!(
        html.contains(
            r#"href="https://www.amazon.com/dp/B0?th=1&amp;tag=other-20" rel="sponsored"#
        ) || html
            .contains(r#"href="https://www.amazon.com/dp/B0?th=1&tag=other-20" rel="sponsored"#),
        "{html}"
    );
}
