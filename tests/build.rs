//! Fixture sites under `tests/fixtures/<case>/`, built through one builder.

#[path = "support/copy_dir.rs"]
mod copy_dir_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use copy_dir_support::copy_dir;
use errata::{BuildError, BuildOptions, BuildReport, Diagnostic};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// A fixture copied into a temporary folder, with the default theme added
/// when the fixture has none.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new(case: &str) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(
            &Path::new(REPO).join("tests/fixtures").join(case),
            dir.path(),
        );
        if !dir.path().join("themes").exists() {
            copy_dir(
                &Path::new(REPO).join("themes/default"),
                &dir.path().join("themes/default"),
            );
        }
        // Calculator presets, for fixtures whose pages carry a calculator.
        if !dir.path().join("data").exists() {
            copy_dir(&Path::new(REPO).join("data"), &dir.path().join("data"));
        }
        Fixture { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn options(&self) -> BuildOptions {
        BuildOptions {
            root: self.root().to_path_buf(),
            ..BuildOptions::default()
        }
    }

    fn build(&self) -> Result<BuildReport, BuildError> {
        errata::build(&self.options())
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root().join("public").join(rel))
            .unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    fn write(&self, rel: &str, text: &str) {
        std::fs::write(self.root().join(rel), text).unwrap();
    }
}

fn errors(result: Result<BuildReport, BuildError>) -> Vec<String> {
    match result {
        Err(BuildError::Diagnostics(all)) => all
            .iter()
            .filter(|d| d.is_error())
            .map(|d| format!("{}:{}:{}: {}", d.path.display(), d.line, d.col, d.message))
            .collect(),
        Err(other) => panic!("expected diagnostics, got {other}"),
        Ok(_) => panic!("expected the build to fail"),
    }
}

/// Every file under `dir`, with its bytes.
fn snapshot_dir(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            (
                e.path().strip_prefix(dir).unwrap().to_path_buf(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

#[test]
fn basic_site_builds_with_sections_and_pretty_urls() {
    let site = Fixture::new("basic");
    let report = site.build().unwrap();
    assert_eq!(report.pages, 2, "the draft is skipped");
    let page = site.read("guides/first-error/index.html");
    assert!(page.contains("<h1>Fix FirstError</h1>"));
    // Internal `@/` links resolve to the target's URL.
    assert!(page.contains("href=/guides/second-error/"), "{page}");
    // Duplicate headings get unique ids and self-links.
    assert!(
        page.contains("<h2 id=fix>") && page.contains("<h2 id=fix-1>"),
        "{page}"
    );
    assert!(page.contains("href=#fix-1"));
    // The section lists its pages, newest first.
    let section = site.read("guides/index.html");
    let second = section.find("Fix SecondError").unwrap();
    let first = section.find("Fix FirstError").unwrap();
    assert!(second < first);
    assert!(!section.contains("Draft"));
    // Hidden and `_` folders are not content.
    assert!(!site.root().join("public/_drafts").exists());
    assert!(!site.root().join("public/.hidden").exists());
}

#[test]
fn drafts_are_built_with_the_drafts_flag() {
    let site = Fixture::new("basic");
    let report = errata::build(&BuildOptions {
        drafts: true,
        ..site.options()
    })
    .unwrap();
    assert_eq!(report.pages, 3);
    assert!(
        site.read("guides/draft-error/index.html")
            .contains("DraftError")
    );
}

#[test]
fn crlf_and_bom_are_accepted() {
    let site = Fixture::new("basic");
    site.build().unwrap();
    let page = site.read("guides/second-error/index.html");
    assert!(page.contains("<h2 id=windows-line-endings>"), "{page}");
    assert!(page.contains("data-lang=powershell"));
    assert!(!page.contains('\r'));
}

#[test]
fn unknown_code_language_is_a_warning_at_its_line() {
    let site = Fixture::new("basic");
    let report = site.build().unwrap();
    let warnings: Vec<String> = report
        .warnings
        .iter()
        .map(|d| format!("{}:{}:{}", d.path.display(), d.line, d.col))
        .collect();
    assert_eq!(warnings, ["content/guides/first-error.md:18:1"]);
}

#[test]
fn console_blocks_mark_prompts_and_output() {
    let site = Fixture::new("basic");
    site.build().unwrap();
    let page = site.read("guides/first-error/index.html");
    assert!(page.contains("<span class=gp>$ </span>"), "{page}");
    assert!(page.contains("<span class=go>Error: model requires more system memory</span>"));
}

#[test]
fn site_templates_override_theme_templates() {
    let site = Fixture::new("basic");
    site.build().unwrap();
    assert!(
        site.read("guides/index.html")
            .contains("<h1 class=site-override>Guides</h1>")
    );
    // The theme's page template is still used for pages.
    assert!(
        site.read("guides/first-error/index.html")
            .contains("class=triage")
    );
}

#[test]
fn every_front_matter_problem_is_reported_at_its_location() {
    let site = Fixture::new("bad_front_matter");
    let errors = errors(site.build());
    assert_eq!(
        errors,
        [
            "content/oom/bad-date.md:4:7: invalid date `2026-02-30`: expected YYYY-MM-DD or an RFC 3339 date-time",
            "content/oom/dup-b.md:1:1: URL /oom/same/ is already used by content/oom/dup-a.md",
            "content/oom/latin1.md:3:16: file is not valid UTF-8",
            "content/oom/missing-signature.md:2:1: missing field `signature`",
            "content/oom/syntax.md:5:1: did not find expected ',' or ']', while parsing a flow sequence",
            "content/oom/unclosed.md:1:1: front matter opened with `---` is never closed",
            "content/oom/unknown-key.md:3:1: unknown key `signatrue`",
            "content/oom/wrong-type.md:4:7: tags: invalid type: integer `5`, expected a sequence",
        ]
    );
}

#[test]
fn unknown_front_matter_key_suggests_the_closest() {
    let site = Fixture::new("bad_front_matter");
    let Err(BuildError::Diagnostics(all)) = site.build() else {
        panic!("expected failure")
    };
    let d: &Diagnostic = all
        .iter()
        .find(|d| d.message.contains("signatrue"))
        .unwrap();
    assert!(
        d.help
            .as_deref()
            .unwrap()
            .starts_with("did you mean `signature`?"),
        "{:?}",
        d.help
    );
}

#[test]
fn unknown_config_key_is_located_in_site_toml() {
    let site = Fixture::new("bad_config");
    assert_eq!(
        errors(site.build()),
        ["site.toml:3:1: unknown key `descripton`"]
    );
}

#[test]
fn escapes_and_script_urls_are_rejected() {
    let site = Fixture::new("escape");
    let errors = errors(site.build());
    assert_eq!(
        errors,
        [
            "content/evil.md:4:7: invalid slug `..`: use one URL segment of letters, digits, `-`, `_` and `.`",
        ]
    );
    // Fix the slug: the alias and the link are the next problems, each located.
    let text = std::fs::read_to_string(site.root().join("content/evil.md")).unwrap();
    site.write(
        "content/evil.md",
        &text.replace("slug: \"..\"\n", "slug: \"fine\"\n"),
    );
    let errors = self::errors(site.build());
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].starts_with("content/evil.md:5:11: aliases: invalid path `../../outside/`"),
        "{errors:?}"
    );
    site.write(
        "content/evil.md",
        "---\ntitle: E\nsignature: E\n---\n[click](javascript:alert(1))\n",
    );
    assert_eq!(
        self::errors(site.build()),
        ["content/evil.md:5:1: `javascript` links are not allowed"]
    );
    assert!(!site.root().join("outside").exists());
    assert!(!site.root().parent().unwrap().join("outside").exists());
}

#[test]
fn a_failed_build_leaves_the_previous_output_untouched() {
    let site = Fixture::new("basic");
    site.build().unwrap();
    let before = snapshot_dir(&site.root().join("public"));
    assert!(before.len() > 5);
    site.write(
        "content/guides/first-error.md",
        "---\ntitle: [broken\n---\n",
    );
    assert!(site.build().is_err());
    assert_eq!(snapshot_dir(&site.root().join("public")), before);
    // No staging folder is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(site.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".public"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn output_is_deterministic() {
    let site = Fixture::new("basic");
    site.build().unwrap();
    let first = snapshot_dir(&site.root().join("public"));
    site.build().unwrap();
    assert_eq!(snapshot_dir(&site.root().join("public")), first);
}

#[test]
fn the_output_folder_cannot_be_the_site_itself() {
    let site = Fixture::new("basic");
    for output in [
        site.root().to_path_buf(),
        site.root().join("content"),
        site.root().parent().unwrap().to_path_buf(),
    ] {
        let result = errata::build(&BuildOptions {
            output: Some(output.clone()),
            ..site.options()
        });
        assert!(
            matches!(result, Err(BuildError::Usage(_))),
            "{}",
            output.display()
        );
    }
    assert!(site.root().join("content/_index.md").exists());
}

#[test]
fn base_url_override_changes_links_and_canonicals() {
    let site = Fixture::new("basic");
    let options = BuildOptions {
        base_url: Some("https://preview.example.net/sub".into()),
        ..site.options()
    };
    errata::build(&options).unwrap();
    let page = site.read("guides/first-error/index.html");
    assert!(
        page.contains("href=https://preview.example.net/sub/guides/first-error/ rel=canonical"),
        "{page}"
    );
    assert!(page.contains("href=/sub/guides/second-error/"));
    assert!(page.contains("/sub/css/style."));
}

/// The default site carries the seed page faithfully.
#[test]
fn default_site_carries_the_seed_page() {
    let out = tempfile::tempdir().unwrap();
    let options = BuildOptions {
        root: PathBuf::from(REPO),
        output: Some(out.path().join("public")),
        ..BuildOptions::default()
    };
    let report = errata::build(&options).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let html = std::fs::read_to_string(out.path().join("public/oom/cuda-out-of-memory/index.html"))
        .unwrap();
    let text = decode_entities(&strip_tags(&html));
    let seed = std::fs::read_to_string(Path::new(REPO).join("tests/seed.txt")).unwrap();

    let title = seed.lines().next().unwrap().trim_start_matches("# ");
    assert!(text.contains(title), "title");
    let triage = seed
        .lines()
        .find(|l| l.starts_with("> **Direct Error Triage**: "))
        .unwrap();
    assert!(
        text.contains(triage.trim_start_matches("> **Direct Error Triage**: ")),
        "triage summary"
    );
    assert!(
        text.contains("RuntimeError: CUDA out of memory. Tried to allocate ... MiB"),
        "signature"
    );
    let root_cause = seed
        .lines()
        .skip_while(|l| !l.starts_with("## Root Cause"))
        .nth(1)
        .unwrap();
    assert!(text.contains(&root_cause.replace('`', "")), "root cause");
    // Every command line, verbatim, inside a code block.
    let mut in_block = false;
    let mut commands = 0;
    for line in seed.lines() {
        if line.starts_with("```") {
            in_block = !in_block;
        } else if in_block {
            assert!(text.contains(line), "missing command: {line}");
            commands += 1;
        }
    }
    assert!(commands >= 10);
    // All three hardware and cloud links with their exact URLs, as sponsored links.
    let doc = scraper::Html::parse_document(&html);
    let anchors = scraper::Selector::parse("a[href]").unwrap();
    let mut links = 0;
    for line in seed
        .lines()
        .filter(|l| l.starts_with("- ") && l.contains("https://"))
    {
        let (label, rest) = line[2..].split_once(": ").unwrap();
        let url = rest.split_whitespace().next().unwrap();
        let a = doc
            .select(&anchors)
            .find(|a| a.value().attr("href") == Some(url))
            .unwrap_or_else(|| panic!("missing link {label} {url}"));
        assert_eq!(a.text().collect::<String>(), label);
        assert_eq!(a.value().attr("rel"), Some("noopener sponsored"));
        assert_eq!(a.value().attr("target"), Some("_blank"));
        links += 1;
    }
    assert_eq!(links, 3);
    // Home and section pages list it.
    for list in ["index.html", "oom/index.html"] {
        let list_html = std::fs::read_to_string(out.path().join("public").join(list)).unwrap();
        assert!(
            list_html.contains("href=/oom/cuda-out-of-memory/"),
            "{list}"
        );
    }
}

fn strip_tags(html: &str) -> String {
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

fn decode_entities(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

// ---- Sponsored links, disclosure and structured data ----

use scraper::{ElementRef, Html, Selector};

fn select<'a>(doc: &'a Html, css: &str) -> Vec<ElementRef<'a>> {
    doc.select(&Selector::parse(css).unwrap()).collect()
}

/// Position of each element in document order.
fn position(doc: &Html, element: &ElementRef<'_>) -> usize {
    doc.root_element()
        .descendants()
        .position(|n| n.id() == element.id())
        .unwrap()
}

fn is_affiliate(href: &str) -> bool {
    (href.contains("amazon.com") && href.contains("tag="))
        || (href.contains("runpod.io") && href.contains("ref="))
        || (href.contains("vast.ai") && href.contains("ref_id="))
}

/// Checks the policy on one built page and returns its parsed document.
fn check_policy(html: &str, expect_amazon: bool) -> Html {
    let doc = Html::parse_document(html);
    let links = select(&doc, "a[href]");
    let sponsored: Vec<_> = links
        .iter()
        .filter(|a| {
            a.value()
                .attr("rel")
                .is_some_and(|r| r.split(' ').any(|t| t == "sponsored"))
        })
        .collect();
    for a in &links {
        let href = a.value().attr("href").unwrap();
        if is_affiliate(href) {
            let rel = a.value().attr("rel").unwrap_or_default();
            let mut tokens: Vec<_> = rel.split(' ').collect();
            tokens.sort();
            assert!(
                tokens.contains(&"sponsored") && tokens.contains(&"noopener"),
                "{href}: rel={rel}"
            );
            assert!(!tokens.contains(&"noreferrer"), "{href}");
            assert_eq!(a.value().attr("target"), Some("_blank"), "{href}");
        }
    }
    let disclosures = select(&doc, "[data-disclosure]");
    if let Some(first) = sponsored.first() {
        let disclosure = disclosures
            .first()
            .expect("a page with sponsored links has a disclosure");
        assert!(
            position(&doc, disclosure) < position(&doc, first),
            "disclosure after the first sponsored link"
        );
        let text: String = disclosure.text().collect();
        assert_eq!(
            text.contains("As an Amazon Associate I earn from qualifying purchases."),
            expect_amazon,
            "{text}"
        );
    } else {
        assert!(
            disclosures.is_empty(),
            "a page without sponsored links has no disclosure"
        );
    }
    doc
}

fn json_ld(doc: &Html) -> serde_json::Value {
    let scripts = select(doc, "script[type='application/ld+json']");
    assert_eq!(scripts.len(), 1, "exactly one JSON-LD script");
    serde_json::from_str(&scripts[0].text().collect::<String>()).expect("JSON-LD parses")
}

fn node<'v>(graph: &'v serde_json::Value, kind: &str) -> &'v serde_json::Value {
    graph["@graph"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["@type"] == kind)
        .unwrap_or_else(|| panic!("no {kind}"))
}

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
            "application/json",
            "errata",
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
fn default_site_follows_the_link_policy() {
    let out = tempfile::tempdir().unwrap();
    let options = BuildOptions {
        root: PathBuf::from(REPO),
        output: Some(out.path().join("public")),
        ..BuildOptions::default()
    };
    errata::build(&options).unwrap();
    let html = std::fs::read_to_string(out.path().join("public/oom/cuda-out-of-memory/index.html"))
        .unwrap();
    let doc = check_policy(&html, true);
    let graph = json_ld(&doc);
    for kind in ["TechArticle", "BreadcrumbList", "WebApplication"] {
        node(&graph, kind);
    }
    assert_eq!(
        node(&graph, "TechArticle")["about"]["name"],
        "RuntimeError: CUDA out of memory. Tried to allocate ... MiB"
    );
    for list in ["index.html", "oom/index.html", "tools/index.html"] {
        let doc = check_policy(
            &std::fs::read_to_string(out.path().join("public").join(list)).unwrap(),
            false,
        );
        node(&json_ld(&doc), "CollectionPage");
    }
}

// ---- Static hosting: sub-path base URLs, crawled through a real HTTP server ----

use std::collections::{BTreeSet, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};

/// A static file server on 127.0.0.1 that serves `root` under `mount`
/// (such as `/triage/`), like GitHub Pages serves a project site: directory
/// URLs get their `index.html`, unknown paths get `404.html` with status 404.
struct StaticServer {
    addr: std::net::SocketAddr,
}

impl StaticServer {
    fn start(root: PathBuf, mount: &'static str) -> StaticServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let root = root.clone();
                std::thread::spawn(move || serve_one(stream, &root, mount));
            }
        });
        StaticServer { addr }
    }

    fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }
}

fn serve_one(mut stream: TcpStream, root: &Path, mount: &str) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) <= 2 {
            break;
        }
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .split(['?', '#'])
        .next()
        .unwrap()
        .to_string();
    let file = path
        .strip_prefix(mount)
        .filter(|rest| !rest.split('/').any(|s| s == ".."))
        .map(|rest| {
            let mut file = root.join(rest);
            if rest.is_empty() || rest.ends_with('/') {
                file.push("index.html");
            }
            file
        })
        .filter(|f| f.is_file());
    let (status, body, file) = match file {
        Some(f) => ("200 OK", std::fs::read(&f).unwrap(), f),
        None => (
            "404 Not Found",
            std::fs::read(root.join("404.html")).unwrap_or_default(),
            root.join("404.html"),
        ),
    };
    let content_type = match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css",
        Some("js") => "text/javascript",
        Some("xml") => "application/xml",
        Some("svg") => "image/svg+xml",
        Some("wasm") => "application/wasm",
        _ => "text/plain",
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(&body);
}

/// GET over a fresh connection; returns the status code and body.
fn http_get(url: &url::Url) -> (u16, String) {
    let mut stream = TcpStream::connect((url.host_str().unwrap(), url.port().unwrap())).unwrap();
    write!(
        stream,
        "GET {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        url.path(),
        url.host_str().unwrap()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response.split_whitespace().nth(1).unwrap().parse().unwrap();
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// Crawls every page reachable from `start`, checking that each internal
/// `href` and `src` answers 200 and each `#fragment` exists on its target.
/// Returns the pages visited.
fn crawl(start: &url::Url, extra: &[url::Url]) -> BTreeSet<String> {
    let origin = start.origin();
    let mut queue: VecDeque<url::Url> = std::iter::once(start.clone())
        .chain(extra.iter().cloned())
        .collect();
    let mut seen: BTreeSet<String> = queue.iter().map(|u| u.path().to_string()).collect();
    let mut pages: BTreeMap<String, Html> = BTreeMap::new();
    let mut fragments: Vec<(String, String, String)> = Vec::new();
    let mut problems = Vec::new();
    while let Some(url) = queue.pop_front() {
        let (status, body) = http_get(&url);
        if status != 200 {
            problems.push(format!("{} answered {status}", url.path()));
            continue;
        }
        if !url.path().ends_with('/') && !url.path().ends_with(".html") {
            continue;
        }
        let doc = Html::parse_document(&body);
        let mut targets: Vec<String> = Vec::new();
        for (css, attr) in [
            ("a[href]", "href"),
            ("link[href]", "href"),
            ("script[src]", "src"),
            ("img[src]", "src"),
        ] {
            targets.extend(
                select(&doc, css)
                    .iter()
                    .filter_map(|e| e.value().attr(attr).map(str::to_string)),
            );
        }
        for meta in select(&doc, "meta[http-equiv=refresh]") {
            let content = meta.value().attr("content").unwrap();
            targets.push(content.split_once("url=").unwrap().1.to_string());
        }
        for target in targets {
            let Ok(resolved) = url.join(&target) else {
                problems.push(format!("{}: bad URL {target}", url.path()));
                continue;
            };
            if resolved.origin() != origin {
                continue;
            }
            if let Some(fragment) = resolved.fragment().filter(|f| !f.is_empty()) {
                fragments.push((
                    url.path().to_string(),
                    resolved.path().to_string(),
                    fragment.to_string(),
                ));
            }
            let mut page = resolved.clone();
            page.set_fragment(None);
            if seen.insert(page.path().to_string()) {
                queue.push_back(page);
            }
        }
        pages.insert(url.path().to_string(), doc);
    }
    for (from, page, fragment) in fragments {
        let Some(doc) = pages.get(&page) else {
            problems.push(format!(
                "{from}: #{fragment} points into {page}, which is not a page"
            ));
            continue;
        };
        if select(doc, &format!("[id='{fragment}']")).is_empty() {
            problems.push(format!("{from}: no id `{fragment}` on {page}"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    pages.into_keys().collect()
}

fn xml_locs(xml: &str, tag: &str, attr: Option<&str>) -> Vec<String> {
    let doc = roxmltree::Document::parse(xml).expect("well-formed XML");
    doc.descendants()
        .filter(|n| n.tag_name().name() == tag)
        .filter_map(|n| match attr {
            Some(a) => n.attribute(a).map(str::to_string),
            None => n.text().map(str::to_string),
        })
        .collect()
}

fn crawl_site(base_url: &str, mount: &'static str) {
    let site = Fixture::new("hosting");
    errata::build(&BuildOptions {
        base_url: Some(base_url.into()),
        ..site.options()
    })
    .unwrap();
    let public = site.root().join("public");
    let server = StaticServer::start(public.clone(), mount);
    let start = url::Url::parse(&format!("{}{mount}", server.origin())).unwrap();
    // Also start from the files nothing links to: the 404 page and the aliases.
    let extra: Vec<url::Url> = ["404.html", "old/e1/", "old/e5/"]
        .iter()
        .map(|p| start.join(p).unwrap())
        .collect();
    let visited = crawl(&start, &extra);
    for expected in [
        "errors/",
        "errors/e1/",
        "errors/e5/",
        "errors/page/2/",
        "errors/page/3/",
        "tools/tool0/",
    ] {
        assert!(
            visited.contains(&format!("{mount}{expected}")),
            "{expected} not reached: {visited:?}"
        );
    }
    assert!(!visited.iter().any(|p| p.contains("draft")));
    // An unknown path gets the 404 page with status 404.
    let (status, body) = http_get(&start.join("no/such/page/").unwrap());
    assert_eq!(status, 404);
    assert!(body.contains("Page not found"));

    // sitemap.xml lists exactly the non-draft pages (and list pages), all reachable.
    let sitemap = std::fs::read_to_string(public.join("sitemap.xml")).unwrap();
    let locs = xml_locs(&sitemap, "loc", None);
    let base = base_url.trim_end_matches('/');
    let page_locs: BTreeSet<String> = locs
        .iter()
        .filter(|l| l.contains("/errors/e"))
        .cloned()
        .collect();
    let expected: BTreeSet<String> = (1..=5).map(|i| format!("{base}/errors/e{i}/")).collect();
    assert_eq!(page_locs, expected);
    for loc in &locs {
        let path = loc.strip_prefix(base).unwrap();
        assert_eq!(
            http_get(&start.join(path.trim_start_matches('/')).unwrap()).0,
            200,
            "{loc}"
        );
    }
    assert!(sitemap.contains("<lastmod>2026-10-05</lastmod>"));

    // robots.txt names the sitemap.
    let robots = std::fs::read_to_string(public.join("robots.txt")).unwrap();
    assert!(
        robots
            .lines()
            .any(|l| l == format!("Sitemap: {base}/sitemap.xml")),
        "{robots}"
    );

    // atom.xml: the newest feed_limit (3) entries, newest first.
    let atom = std::fs::read_to_string(public.join("atom.xml")).unwrap();
    let ids = xml_locs(&atom, "id", None);
    assert_eq!(
        ids[1..],
        [
            format!("{base}/errors/e5/"),
            format!("{base}/errors/e4/"),
            format!("{base}/errors/e3/")
        ]
    );

    // static/ passes through untouched.
    assert_eq!(
        std::fs::read_to_string(public.join("CNAME")).unwrap(),
        "triage.example.org\n"
    );
}

#[test]
fn a_sub_path_site_crawls_clean_through_a_real_server() {
    crawl_site("https://user.github.io/triage/", "/triage/");
}

#[test]
fn a_root_site_crawls_clean_through_a_real_server() {
    crawl_site("https://triage.example.org/", "/");
}

#[test]
fn headers_file_sets_wasm_type_and_caching() {
    let site = Fixture::new("hosting");
    site.build().unwrap();
    let headers = site.read("_headers");
    assert!(
        headers.contains("/triage/*.wasm\n  Content-Type: application/wasm"),
        "{headers}"
    );
    let css = std::fs::read_dir(site.root().join("public/css"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.starts_with("style."))
        .unwrap();
    assert!(
        headers.contains(&format!(
            "/triage/css/{css}\n  Cache-Control: public, max-age=31536000, immutable"
        )),
        "{headers}"
    );
    assert!(headers.contains("/triage/*/\n  Cache-Control: public, max-age=0, must-revalidate"));
}

#[test]
fn broken_internal_links_are_errors_where_written() {
    let site = Fixture::new("broken_links");
    assert_eq!(
        errors(site.build()),
        [
            "content/docs/a.md:8:1: link to missing page `@/docs/nope.md` (no content/docs/nope.md)",
            "content/docs/a.md:9:1: link to missing anchor `#nowhere` on /docs/b/",
            "content/docs/a.md:10:1: link to missing anchor `#not-here` on /docs/a/",
            "content/docs/a.md:11:1: link `../../outside.md` points outside content/",
        ]
    );
}

// ---- The calculator: the committed WebAssembly against its source and the native build ----

const WASM: &str = "themes/default/static/wasm/sizing.wasm";

/// The committed `sizing.wasm`, run in wasmi.
struct SizingWasm {
    store: wasmi::Store<()>,
    instance: wasmi::Instance,
}

impl SizingWasm {
    fn load() -> SizingWasm {
        let bytes = std::fs::read(Path::new(REPO).join(WASM)).unwrap();
        let engine = wasmi::Engine::default();
        let module = wasmi::Module::new(&engine, &bytes[..]).unwrap();
        let mut store = wasmi::Store::new(&engine, ());
        let linker = wasmi::Linker::<()>::new(&engine);
        let instance = linker.instantiate_and_start(&mut store, &module).unwrap();
        SizingWasm { store, instance }
    }

    fn handle(&mut self, request: &str) -> String {
        let f = |name: &str| self.instance.get_func(&self.store, name).unwrap();
        let (reset, alloc, handle, ptr, len) = (
            f("reset"),
            f("alloc"),
            f("handle"),
            f("answer_ptr"),
            f("answer_len"),
        );
        reset
            .typed::<(), ()>(&self.store)
            .unwrap()
            .call(&mut self.store, ())
            .unwrap();
        let at = alloc
            .typed::<i32, i32>(&self.store)
            .unwrap()
            .call(&mut self.store, request.len() as i32)
            .unwrap();
        let memory = self.instance.get_memory(&self.store, "memory").unwrap();
        memory
            .write(&mut self.store, at as usize, request.as_bytes())
            .unwrap();
        handle
            .typed::<(i32, i32), ()>(&self.store)
            .unwrap()
            .call(&mut self.store, (at, request.len() as i32))
            .unwrap();
        let p = ptr
            .typed::<(), i32>(&self.store)
            .unwrap()
            .call(&mut self.store, ())
            .unwrap() as usize;
        let n = len
            .typed::<(), i32>(&self.store)
            .unwrap()
            .call(&mut self.store, ())
            .unwrap() as usize;
        let mut out = vec![0; n];
        memory.read(&self.store, p, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }
}

#[test]
fn committed_wasm_gives_the_native_numbers_across_a_grid() {
    let catalogue = errata::calculator::Catalogue::load(Path::new(REPO)).unwrap();
    let mut wasm = SizingWasm::load();
    let mut checked = 0;
    for model in [
        "llama-2-7b",
        "llama-3.1-8b",
        "llama-3.1-70b",
        "mixtral-8x7b",
        "gemma-2-9b",
        "qwen2.5-14b",
    ] {
        for (weights, runtime) in [
            ("bf16", "vllm"),
            ("fp16", "pytorch"),
            ("q4_k_m", "llama.cpp"),
            ("q8_0", "ollama"),
            ("awq", "vllm"),
        ] {
            for context in [512, 8192, 131_072] {
                for (kv, gpu) in [
                    ("f16", "RTX 4090"),
                    ("q8_0", "RTX 3060 12GB"),
                    ("fp8", "H100 80GB"),
                ] {
                    let query = errata::calculator::Query {
                        model: errata::calculator::Architecture::Preset(model.into()),
                        weights: weights.into(),
                        runtime: runtime.into(),
                        context,
                        parallel: 2,
                        kv: kv.into(),
                        flash_attention: context != 512,
                        gpu: Some(gpu.into()),
                        ..Default::default()
                    };
                    let request = catalogue.request(&query).unwrap();
                    assert_eq!(wasm.handle(&request), sizing::handle(&request), "{request}");
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 6 * 5 * 3 * 3);
    // Small enough to load with the page.
    let size = std::fs::metadata(Path::new(REPO).join(WASM)).unwrap().len();
    assert!(
        size < 64 * 1024,
        "sizing.wasm is {size} bytes; keep it under 64 KiB"
    );
    // Errors come back as JSON too.
    assert!(wasm.handle("layers=banana").contains("\"error\""));
}

#[test]
fn committed_wasm_matches_its_source() {
    let sysroot = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .unwrap();
    let sysroot = PathBuf::from(String::from_utf8(sysroot.stdout).unwrap().trim());
    if !sysroot.join("lib/rustlib/wasm32-unknown-unknown").exists() {
        eprintln!("wasm32-unknown-unknown is not installed; skipping (`.ci/run` installs it)");
        return;
    }
    let target_dir = Path::new(REPO).join("target/wasm-check");
    let status = std::process::Command::new(env!("CARGO"))
        .current_dir(REPO)
        .args([
            "build",
            "-p",
            "sizing",
            "--target",
            "wasm32-unknown-unknown",
            "--profile",
            "wasm",
            "--locked",
        ])
        .env("CARGO_TARGET_DIR", &target_dir)
        .status()
        .unwrap();
    assert!(status.success());
    let built = std::fs::read(target_dir.join("wasm32-unknown-unknown/wasm/sizing.wasm")).unwrap();
    let committed = std::fs::read(Path::new(REPO).join(WASM)).unwrap();
    assert!(
        built == committed,
        "{WASM} is stale: run crates/sizing/build-wasm.sh and commit the result"
    );
}

// ---- The calculator in a real browser (Debian's chromium, driven by chromedriver) ----

/// A minimal WebDriver client over HTTP/1.1 to a chromedriver on 127.0.0.1.
struct Browser {
    driver: std::process::Child,
    port: u16,
    session: String,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Browser {
    fn start() -> Option<Browser> {
        let find = |name: &str| {
            ["/usr/bin/", "/usr/local/bin/"]
                .iter()
                .map(|d| PathBuf::from(d).join(name))
                .find(|p| p.exists())
        };
        let (Some(chromium), Some(chromedriver)) = (find("chromium"), find("chromedriver")) else {
            assert!(
                std::env::var_os("ERRATA_SKIP_BROWSER").is_some(),
                "chromium and chromedriver are needed (apt-get install chromium chromium-driver), or set ERRATA_SKIP_BROWSER=1"
            );
            return None;
        };
        let port = free_port();
        let driver = std::process::Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let profile = tempfile::tempdir().unwrap().keep();
        let caps = serde_json::json!({"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
            "binary": chromium,
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-dev-shm-usage", format!("--user-data-dir={}", profile.display())]
        }}}});
        let mut browser = Browser {
            driver,
            port,
            session: String::new(),
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let session = loop {
            if let Ok(v) = browser.try_call("POST", "/session", Some(&caps)) {
                break v;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "chromedriver did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        };
        browser.session = session["value"]["sessionId"].as_str().unwrap().to_string();
        Some(browser)
    }

    fn try_call(
        &self,
        method: &str,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> std::io::Result<serde_json::Value> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))?;
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )?;
        // Read exactly one response: chromedriver may keep the connection open.
        let mut reader = BufReader::new(stream);
        let mut head = String::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line)? == 0 || line == "\r\n" {
                break;
            }
            head.push_str(&line.to_ascii_lowercase());
        }
        let length = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse::<usize>().ok());
        let body = match length {
            Some(n) => {
                let mut buf = vec![0; n];
                reader.read_exact(&mut buf)?;
                String::from_utf8_lossy(&buf).into_owned()
            }
            None if head.contains("transfer-encoding: chunked") => {
                let mut out = Vec::new();
                loop {
                    let mut size = String::new();
                    reader.read_line(&mut size)?;
                    let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    let mut chunk = vec![0; n + 2];
                    reader.read_exact(&mut chunk)?;
                    out.extend_from_slice(&chunk[..n]);
                }
                String::from_utf8_lossy(&out).into_owned()
            }
            None => {
                let mut rest = String::new();
                reader.read_to_string(&mut rest)?;
                rest
            }
        };
        serde_json::from_str(&body).map_err(|e| std::io::Error::other(format!("{e}: {body}")))
    }

    fn call(&self, method: &str, path: &str, body: serde_json::Value) -> serde_json::Value {
        let path = format!("/session/{}{path}", self.session);
        let body = if method == "GET" { None } else { Some(&body) };
        let v = self.try_call(method, &path, body).unwrap();
        assert!(v["value"].get("error").is_none(), "{method} {path}: {v}");
        v["value"].clone()
    }

    fn script(&self, script: &str) -> serde_json::Value {
        self.call(
            "POST",
            "/execute/sync",
            serde_json::json!({"script": script, "args": []}),
        )
    }

    fn element(&self, css: &str) -> String {
        let v = self.call(
            "POST",
            "/element",
            serde_json::json!({"using": "css selector", "value": css}),
        );
        v.as_object()
            .unwrap()
            .values()
            .next()
            .unwrap()
            .as_str()
            .unwrap()
            .to_string()
    }

    fn wait_for(&self, script: &str) -> serde_json::Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let v = self.script(script);
            if !v.is_null() && v != serde_json::json!(false) {
                return v;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting for: {script}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.try_call("DELETE", &format!("/session/{}", self.session), None);
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

#[test]
fn the_calculator_in_the_browser_matches_errata_size() {
    let Some(browser) = Browser::start() else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let options = BuildOptions {
        root: PathBuf::from(REPO),
        output: Some(out.path().join("public")),
        ..BuildOptions::default()
    };
    errata::build(&options).unwrap();
    let server = StaticServer::start(out.path().join("public"), "/");
    browser.call(
        "POST",
        "/url",
        serde_json::json!({"url": format!("{}/oom/cuda-out-of-memory/", server.origin())}),
    );
    browser.wait_for("return document.querySelector('.calc-form').getAttribute('data-ready')");

    let read = || {
        browser.script(
            "var o = {}; document.querySelectorAll('.calculator [data-out]').forEach(function (e) { o[e.getAttribute('data-out')] = e.textContent; }); return o;",
        )
    };
    let size = |args: &[&str]| -> serde_json::Value {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_errata"))
            .args(["size", "--root", REPO, "--format", "json"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let compare = |shown: &serde_json::Value, expected: &serde_json::Value| {
        for key in [
            "weights_gib",
            "kv_cache_gib",
            "compute_gib",
            "overhead_gib",
            "total_gib",
        ] {
            let shown: f64 = shown[key].as_str().unwrap().parse().unwrap();
            assert_eq!(shown, expected[key].as_f64().unwrap(), "{key}");
        }
        assert_eq!(
            shown["kv_tokens"].as_str().unwrap(),
            expected["kv_tokens"].to_string()
        );
    };

    // The page's starting state (front matter: llama-3.1-8b, fp16, 8192 tokens).
    compare(
        &read(),
        &size(&[
            "--model",
            "llama-3.1-8b",
            "--weights",
            "fp16",
            "--context",
            "8192",
        ]),
    );

    // Change the model and the context the way a user does: pick an option, type a number.
    let option = browser.element("select[name=model] option[value='qwen2.5-14b']");
    browser.call(
        "POST",
        &format!("/element/{option}/click"),
        serde_json::json!({}),
    );
    let context = browser.element("input[name=context]");
    browser.call(
        "POST",
        &format!("/element/{context}/clear"),
        serde_json::json!({}),
    );
    browser.call(
        "POST",
        &format!("/element/{context}/value"),
        serde_json::json!({"text": "32768"}),
    );
    browser
        .wait_for("return document.querySelector('[data-out=kv_tokens]').textContent === '32768'");
    let shown = read();
    let expected = size(&[
        "--model",
        "qwen2.5-14b",
        "--weights",
        "fp16",
        "--context",
        "32768",
    ]);
    compare(&shown, &expected);
    assert!(shown["verdict"].as_str().unwrap().contains("RTX 4090"));

    // The state is in the URL hash, and loading that URL restores it.
    let hash = browser
        .script("return window.location.hash")
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        hash.contains("qwen2.5-14b") && hash.contains("32768"),
        "{hash}"
    );
    browser.call("POST", "/url", serde_json::json!({"url": "about:blank"}));
    browser.call(
        "POST",
        "/url",
        serde_json::json!({"url": format!("{}/oom/cuda-out-of-memory/{hash}", server.origin())}),
    );
    browser.wait_for("return document.querySelector('.calc-form').getAttribute('data-ready')");
    compare(&read(), &expected);
}

#[test]
fn errata_size_rejects_bad_input_with_exit_code_1() {
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_errata"))
            .args(["size", "--root", REPO])
            .args(args)
            .output()
            .unwrap()
    };
    for (args, message) in [
        (&["--model", "gpt-9"][..], "unknown model `gpt-9`"),
        (
            &["--model", "llama-3.1-8b", "--context", "10000001"][..],
            "between 1 and 10000000",
        ),
        (
            &["--model", "llama-3.1-8b", "--context", "0"][..],
            "between 1 and 10000000",
        ),
        (
            &[
                "--params", "0", "--layers", "32", "--hidden", "4096", "--heads", "32", "--vocab",
                "32000",
            ][..],
            "`params` is required",
        ),
        (
            &["--model", "llama-3.1-8b", "--gpu", "Voodoo 2"][..],
            "unknown GPU `Voodoo 2`",
        ),
        (
            &["--model", "llama-3.1-8b", "--weights", "q1_magic"][..],
            "unknown weight format",
        ),
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    // A negative size is refused by the argument parser, also with a message.
    let out = run(&["--model", "llama-3.1-8b", "--context", "-5"]);
    assert_ne!(out.status.code(), Some(0));
    // Custom architectures work without a preset, and --gpu gives max_context.
    let out = run(&[
        "--params",
        "8030261248",
        "--layers",
        "32",
        "--hidden",
        "4096",
        "--heads",
        "32",
        "--kv-heads",
        "8",
        "--vocab",
        "128256",
        "--weights",
        "bf16",
        "--gpu",
        "H100 80GB",
        "--format",
        "json",
    ]);
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["weights_gib"], 14.96);
    assert!(json["max_context"].as_u64().unwrap() > 100_000);
    assert!(
        json["fits"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["gpu"] == "H100 80GB")
    );
}

#[test]
fn copy_buttons_copy_console_commands_without_prompts() {
    let Some(browser) = Browser::start() else {
        return;
    };
    let site = Fixture::new("basic");
    site.build().unwrap();
    let server = StaticServer::start(site.root().join("public"), "/");
    browser.call(
        "POST",
        "/url",
        serde_json::json!({"url": format!("{}/guides/first-error/", server.origin())}),
    );
    // Every code block gets a button; click the console block's.
    let counts = browser.wait_for(
        "var b = document.querySelectorAll('.codeblock'), c = document.querySelectorAll('.codeblock > button.copy'); return c.length ? [b.length, c.length] : null;",
    );
    assert_eq!(counts[0], counts[1]);
    let button = browser.element(".codeblock[data-lang=console] > button.copy");
    browser.call(
        "POST",
        &format!("/element/{button}/click"),
        serde_json::json!({}),
    );
    let copied = browser.wait_for("return document.querySelector('.codeblock[data-lang=console]').getAttribute('data-copied-text')");
    assert_eq!(copied, "ollama run llama3\n");
}

// ---- errata new ----

fn errata_cmd(root: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_errata"))
        .args(args)
        .arg("--root")
        .arg(root)
        .output()
        .unwrap()
}

#[test]
fn new_scaffolds_a_page_that_builds_cleanly() {
    let site = Fixture::new("basic");
    let message = r#"RuntimeError: CUDA error: an illegal memory access was encountered (at "kernel.cu":42) \ 100%"#;
    let out = errata_cmd(
        site.root(),
        &[
            "new",
            message,
            "--section",
            "guides",
            "--tools",
            "vllm,llama.cpp",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let rel = "content/guides/runtimeerror-cuda-error-an-illegal-memory-access-was.md";
    assert!(stdout.contains(rel), "{stdout}");
    assert!(
        stdout.contains(
            "https://example.org/guides/runtimeerror-cuda-error-an-illegal-memory-access-was/"
        ),
        "{stdout}"
    );
    let text = std::fs::read_to_string(site.root().join(rel)).unwrap();
    assert!(
        text.contains("### vllm") && text.contains("### llama.cpp"),
        "{text}"
    );

    // As it is (a draft), it builds without a warning, and the signature survives quoting.
    let report = errata::build(&BuildOptions {
        drafts: true,
        ..site.options()
    })
    .unwrap();
    assert!(
        report.warnings.iter().all(|w| !w.path.ends_with("was.md")),
        "{:?}",
        report.warnings
    );
    let html = site.read("guides/runtimeerror-cuda-error-an-illegal-memory-access-was/index.html");
    let doc = Html::parse_document(&html);
    let signature: String = select(&doc, ".signature code")[0].text().collect();
    assert_eq!(signature, message);
    // The pattern it wrote matches the message it came from.
    let front: serde_json::Value = serde_json::to_value(
        yaml_serde::from_str::<yaml_serde::Value>(text.split("---").nth(1).unwrap()).unwrap(),
    )
    .unwrap();
    let pattern = front["patterns"][0].as_str().unwrap();
    let unescaped: String = {
        let mut out = String::new();
        let mut chars = pattern.chars();
        while let Some(c) = chars.next() {
            out.push(if c == '\\' { chars.next().unwrap() } else { c });
        }
        out
    };
    assert_eq!(unescaped, message);
}

#[test]
fn new_never_overwrites_and_never_leaves_content() {
    let site = Fixture::new("basic");
    let first = errata_cmd(
        site.root(),
        &["new", "Fix FirstError", "--section", "guides"],
    );
    assert!(first.status.success());
    let path = site.root().join("content/guides/fix-firsterror.md");
    std::fs::write(&path, "mine").unwrap();
    let again = errata_cmd(
        site.root(),
        &["new", "Fix FirstError", "--section", "guides"],
    );
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("never overwrites"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "mine");
    for section in ["../outside", "/tmp/x", "guides/../../x", "a/./b"] {
        let out = errata_cmd(site.root(), &["new", "Escape", "--section", section]);
        assert_eq!(out.status.code(), Some(1), "{section}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("refusing section"),
            "{section}"
        );
    }
    assert!(
        !site.root().join("outside").exists() && !site.root().parent().unwrap().join("x").exists()
    );
}

// ---- errata serve ----

/// `errata serve` running on a free port, stopped with SIGINT on drop.
struct Served {
    child: std::process::Child,
    port: u16,
    dir: PathBuf,
}

impl Served {
    fn start(root: &Path) -> Served {
        let port = free_port();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_errata"))
            .args(["serve", "--port", &port.to_string(), "--root"])
            .arg(root)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let line = loop {
            let line = rx
                .recv_timeout(std::time::Duration::from_secs(30))
                .expect("serve starts");
            if line.starts_with("Serving ") {
                break line;
            }
        };
        let dir = PathBuf::from(
            line.trim_start_matches("Serving ")
                .split(" at ")
                .next()
                .unwrap(),
        );
        Served { child, port, dir }
    }

    fn url(&self, path: &str) -> url::Url {
        url::Url::parse(&format!("http://127.0.0.1:{}{path}", self.port)).unwrap()
    }

    fn get(&self, path: &str) -> (u16, String) {
        http_get(&self.url(path))
    }

    fn wait_until(
        &self,
        path: &str,
        what: &str,
        check: impl Fn(&str) -> bool,
    ) -> std::time::Duration {
        let start = std::time::Instant::now();
        loop {
            if check(&self.get(path).1) {
                return start.elapsed();
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(10),
                "timed out waiting for {what}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    fn interrupt(&mut self) -> std::process::ExitStatus {
        std::process::Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        self.child.wait().unwrap()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

#[test]
fn serve_reloads_after_an_edit_and_tells_the_browser() {
    let site = Fixture::new("basic");
    let served = Served::start(site.root());
    let (status, body) = served.get("/guides/first-error/");
    assert_eq!(status, 200);
    assert!(body.contains("Fix FirstError") && body.contains("/__errata/livereload"));

    let (mut ws, _) = tungstenite::connect(format!(
        "ws://127.0.0.1:{}/__errata/livereload",
        served.port
    ))
    .unwrap();
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_mut() {
        s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
    }
    let path = site.root().join("content/guides/first-error.md");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace(
            "title: \"Fix FirstError\"",
            "title: \"Fix FirstError, edited\"",
        ),
    )
    .unwrap();
    let took = served.wait_until("/guides/first-error/", "the edit", |b| {
        b.contains("Fix FirstError, edited")
    });
    assert!(took < std::time::Duration::from_secs(2), "took {took:?}");
    let message = ws.read().unwrap();
    assert_eq!(message.into_text().unwrap().as_str(), "reload");
}

#[test]
fn serve_shows_build_errors_and_keeps_the_last_good_page() {
    let site = Fixture::new("basic");
    let served = Served::start(site.root());
    let path = site.root().join("content/guides/first-error.md");
    let good = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        good.replace("signature: \"FirstError: it broke\"", "signatur: \"oops\""),
    )
    .unwrap();
    served.wait_until("/guides/first-error/", "the overlay", |b| {
        b.contains("errata-overlay")
    });
    let (status, body) = served.get("/guides/first-error/");
    assert_eq!(status, 200);
    assert!(
        body.contains("content/guides/first-error.md:3:1: error: unknown key `signatur`"),
        "{body}"
    );
    assert!(
        body.contains("<h1>Fix FirstError</h1>"),
        "the last good page is still served"
    );
    std::fs::write(&path, good).unwrap();
    served.wait_until("/guides/first-error/", "the overlay to clear", |b| {
        !b.contains("errata-overlay")
    });
}

#[test]
fn serve_stays_inside_the_site_and_answers_like_a_host() {
    let site = Fixture::new("basic");
    std::fs::write(site.root().join("secret.txt"), "TOP SECRET").unwrap();
    let served = Served::start(site.root());
    for attack in [
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/..%2fsecret.txt",
        "/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
        "/guides/../../secret.txt",
        "//etc/passwd",
        "/..\\secret.txt",
    ] {
        let mut stream = TcpStream::connect(("127.0.0.1", served.port)).unwrap();
        write!(
            stream,
            "GET {attack} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let status: u16 = response.split_whitespace().nth(1).unwrap().parse().unwrap();
        assert!(status == 400 || status == 404, "{attack}: {status}");
        assert!(
            !response.contains("TOP SECRET") && !response.contains("root:"),
            "{attack}"
        );
    }
    let (status, body) = served.get("/no/such/page/");
    assert_eq!(status, 404);
    assert!(body.contains("Page not found"));
    let headers = served.get("/_headers").1;
    let wasm = headers
        .lines()
        .find(|l| l.starts_with("/wasm/sizing.") && l.ends_with(".wasm"))
        .unwrap();
    let mut stream = TcpStream::connect(("127.0.0.1", served.port)).unwrap();
    write!(
        stream,
        "GET {wasm} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let head = String::from_utf8_lossy(&response[..200]);
    assert!(
        head.starts_with("HTTP/1.1 200") && head.contains("Content-Type: application/wasm"),
        "{head}"
    );
}

#[test]
fn serve_stops_cleanly_on_ctrl_c() {
    let site = Fixture::new("basic");
    let mut served = Served::start(site.root());
    assert!(served.dir.join("index.html").exists());
    let status = served.interrupt();
    assert!(status.success(), "{status:?}");
    assert!(!served.dir.exists(), "{} left behind", served.dir.display());
    assert!(
        !site.root().join("public").exists(),
        "serve does not write public/"
    );
}

// ---- Incremental builds ----

#[test]
fn incremental_builds_are_byte_identical_to_clean_builds() {
    let site = Fixture::new("hosting");
    let first = site.build().unwrap();
    assert_eq!(first.cached_pages, 0);
    let public = site.root().join("public");

    // Nothing changed: every page comes from the cache, with the same bytes.
    let before = snapshot_dir(&public);
    let again = site.build().unwrap();
    assert_eq!(again.cached_pages, again.pages);
    assert_eq!(snapshot_dir(&public), before);

    // Edit one page's body and another's title; remove a heading a third page links to.
    let e1 = site.root().join("content/errors/e1.md");
    let text = std::fs::read_to_string(&e1).unwrap();
    std::fs::write(
        &e1,
        text.replace("Because.", "Because the allocator fragments."),
    )
    .unwrap();
    let e2 = site.root().join("content/errors/e2.md");
    let text = std::fs::read_to_string(&e2).unwrap();
    std::fs::write(&e2, text.replace("Fix E2Error", "Fix E2Error (renamed)")).unwrap();
    let incremental = site.build().unwrap();
    assert_eq!(incremental.cached_pages, incremental.pages - 2);

    let clean_out = site.root().join("clean-public");
    errata::build(&BuildOptions {
        output: Some(clean_out.clone()),
        clean: true,
        ..site.options()
    })
    .unwrap();
    assert_eq!(snapshot_dir(&public), snapshot_dir(&clean_out));

    // A change a cached page depends on is still caught: e4 links to e5#why-it-happens.
    let e5 = site.root().join("content/errors/e5.md");
    let text = std::fs::read_to_string(&e5).unwrap();
    std::fs::write(&e5, text.replace("## Why it happens", "## Why")).unwrap();
    let errors = errors(site.build());
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("content/errors/e4.md:10:32:") && e.contains("#why-it-happens")),
        "{errors:?}"
    );

    // A template change re-renders every page.
    std::fs::write(&e5, text).unwrap();
    let base = site.root().join("themes/default/templates/base.html");
    let template = std::fs::read_to_string(&base).unwrap();
    std::fs::write(&base, template.replace("<main", "<!-- edited --><main")).unwrap();
    assert_eq!(site.build().unwrap().cached_pages, 0);
}

#[test]
fn cached_pages_keep_their_warnings() {
    let site = Fixture::new("basic");
    let first = site.build().unwrap();
    let second = site.build().unwrap();
    assert_eq!(second.cached_pages, second.pages);
    assert_eq!(first.warnings, second.warnings);
    assert!(!second.warnings.is_empty());
}

#[test]
fn progress_reports_every_stage_and_page() {
    let site = Fixture::new("hosting");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(String, usize, usize)>::new()));
    let sink = std::sync::Arc::clone(&seen);
    let progress = errata::pipeline::Progress(std::sync::Arc::new(
        move |stage: &str, done: usize, total: usize| {
            sink.lock().unwrap().push((stage.to_string(), done, total));
        },
    ));
    let report = errata::build(&BuildOptions {
        progress: Some(progress),
        ..site.options()
    })
    .unwrap();
    let seen = seen.lock().unwrap();
    let stages: Vec<&str> = seen
        .iter()
        .filter(|(_, _, total)| *total == 0)
        .map(|(s, _, _)| s.as_str())
        .collect();
    assert_eq!(
        stages,
        [
            "config",
            "load",
            "parse",
            "assemble",
            "templates",
            "render",
            "assets",
            "write"
        ]
    );
    let mut pages: Vec<usize> = seen
        .iter()
        .filter(|(s, _, total)| s == "render" && *total > 0)
        .map(|(_, d, _)| *d)
        .collect();
    pages.sort();
    assert_eq!(pages, (1..=report.pages).collect::<Vec<_>>());
}

// ---- errata check ----

fn check_cmd(root: &Path, args: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_errata"))
        .arg("check")
        .arg("--root")
        .arg(root)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn check_finds_every_seeded_problem_and_pins_the_json() {
    let site = Fixture::new("check");
    let (code, json) = check_cmd(site.root(), &["--format", "json"]);
    assert_eq!(code, 2);
    insta::assert_snapshot!(json);
    assert!(
        !site.root().join("public").exists(),
        "check never writes public/"
    );
}

#[test]
fn check_github_format_is_one_annotation_per_problem() {
    let site = Fixture::new("check");
    let (code, out) = check_cmd(site.root(), &["--format", "github"]);
    assert_eq!(code, 2);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "::warning file=content/docs/problems.md,line=1,col=1::no description: search engines will make up a snippet%0Aadd `description:` with one sentence of under 160 characters",
            "::warning file=content/docs/problems.md,line=4,col=1::none of the page's `patterns` matches its own `signature`%0Aa log line with this error would not find this page",
            "::error file=content/docs/problems.md,line=6,col=6::pattern does not compile: error: unclosed group",
            "::error file=content/docs/problems.md,line=8,col=1::duplicate id `error-signature` on /docs/problems/ (rendering template page.html)",
            "::error file=content/docs/problems.md,line=10,col=1::link to missing page `@/docs/nope.md` (no content/docs/nope.md)",
            "::error file=content/docs/problems.md,line=10,col=36::link to missing anchor `#nowhere` on /docs/good/%0Alink to one of the page's headings; each heading's id is its slug",
        ]
    );
}

#[test]
fn check_junit_is_valid_xml_and_exit_codes_follow_severity() {
    let site = Fixture::new("check");
    let (_, junit) = check_cmd(site.root(), &["--format", "junit"]);
    let doc = roxmltree::Document::parse(&junit).expect("JUnit XML parses");
    assert_eq!(
        doc.descendants()
            .filter(|n| n.has_tag_name("failure"))
            .count(),
        4
    );

    // The default site is clean.
    assert_eq!(check_cmd(Path::new(REPO), &[]).0, 0);
    // Warnings alone pass, unless they count as errors.
    std::fs::remove_file(site.root().join("content/docs/problems.md")).unwrap();
    let good = site.root().join("content/docs/good.md");
    let text = std::fs::read_to_string(&good).unwrap();
    std::fs::write(
        &good,
        text.replace("description: \"A page with nothing wrong.\"\n", ""),
    )
    .unwrap();
    assert_eq!(check_cmd(site.root(), &[]).0, 0);
    assert_eq!(check_cmd(site.root(), &["--warnings-as-errors"]).0, 2);
    // A usage error is exit code 1 too (not clap's 2, which means "problems found").
    assert_eq!(check_cmd(site.root(), &["--no-such-flag"]).0, 1);
    assert_eq!(check_cmd(site.root(), &["--format", "yaml"]).0, 1);
    // A broken site.toml is a configuration error: exit code 1.
    std::fs::write(site.root().join("site.toml"), "title = 1\n").unwrap();
    assert_eq!(check_cmd(site.root(), &[]).0, 1);
}

#[test]
fn check_finds_broken_links_in_templates_at_their_line() {
    let site = Fixture::new("check");
    std::fs::remove_file(site.root().join("content/docs/problems.md")).unwrap();
    std::fs::create_dir_all(site.root().join("templates")).unwrap();
    site.write(
        "templates/section.html",
        "{% extends \"base.html\" %}\n{% block content %}\n<h1>{{ section.title }}</h1>\n<a href=\"{{ url(path='changelog/') }}\">Changelog</a>\n<a href=\"#nowhere\">top</a>\n<img src=\"{{ url(path='img/missing.png') }}\" alt=\"\">\n{% endblock content %}\n",
    );
    let (code, out) = check_cmd(site.root(), &["--format", "github"]);
    assert_eq!(code, 2, "{out}");
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("templates/section.html"))
        .collect();
    assert_eq!(
        lines,
        [
            "::error file=templates/section.html,line=4,col=23::link to missing `/changelog/` (no changelog/index.html in the built site) (seen on /docs/)",
            "::error file=templates/section.html,line=5,col=10::link to missing anchor `#nowhere` on /docs/ (seen on /docs/)",
            "::error file=templates/section.html,line=6,col=24::link to missing `/img/missing.png` (no img/missing.png in the built site) (seen on /docs/)",
        ],
        "{out}"
    );
}

#[test]
fn check_changed_since_reports_changed_pages_and_their_linkers() {
    let site = Fixture::new("check");
    site.write("content/docs/other.md", "---\ntitle: Other\ndescription: \"Unrelated.\"\nsignature: OtherError\n---\n[gone](@/docs/gone.md)\n");
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .arg("-C")
            .arg(site.root())
            .args(["-c", "user.email=ci@example.org", "-c", "user.name=CI"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            status.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&status.stderr)
        );
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "fixture"]);
    let files = |out: &str| -> BTreeSet<String> {
        let json: serde_json::Value = serde_json::from_str(out).unwrap();
        json["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["file"].as_str().unwrap().to_string())
            .collect()
    };
    // Nothing changed: nothing to report, exit 0.
    let (code, out) = check_cmd(
        site.root(),
        &["--format", "json", "--changed-since", "HEAD"],
    );
    assert_eq!((code, files(&out)), (0, BTreeSet::new()));
    // good.md changed: its problems, and those of problems.md, which links to it; not other.md's.
    let good = site.root().join("content/docs/good.md");
    let text = std::fs::read_to_string(&good).unwrap();
    std::fs::write(
        &good,
        text.replace("description: \"A page with nothing wrong.\"\n", ""),
    )
    .unwrap();
    let (code, out) = check_cmd(
        site.root(),
        &["--format", "json", "--changed-since", "HEAD"],
    );
    assert_eq!(code, 2);
    assert_eq!(
        files(&out),
        BTreeSet::from([
            "content/docs/good.md".to_string(),
            "content/docs/problems.md".to_string()
        ])
    );
    // Everything is checked without the flag.
    assert!(
        files(&check_cmd(site.root(), &["--format", "json"]).1).contains("content/docs/other.md")
    );
    // A bad revision is a usage error.
    assert_eq!(
        check_cmd(site.root(), &["--changed-since", "no-such-rev"]).0,
        1
    );
}

/// A link-checking target on 127.0.0.1 with every behaviour the checker must
/// handle, logging each request it gets.
struct LinkServer {
    port: u16,
    log: std::sync::Arc<std::sync::Mutex<Vec<(String, String, std::time::Instant)>>>,
}

impl LinkServer {
    fn start() -> LinkServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let server_log = std::sync::Arc::clone(&log);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let log = std::sync::Arc::clone(&server_log);
                std::thread::spawn(move || {
                    let mut stream = stream;
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).unwrap_or(0) <= 2 {
                            break;
                        }
                    }
                    let mut parts = line.split_whitespace();
                    let (method, path) = (
                        parts.next().unwrap_or("").to_string(),
                        parts.next().unwrap_or("").to_string(),
                    );
                    let earlier = {
                        let mut log = log.lock().unwrap();
                        let earlier = log.iter().filter(|(_, p, _)| *p == path).count();
                        log.push((method.clone(), path.clone(), std::time::Instant::now()));
                        earlier
                    };
                    let (status, extra) = match (path.as_str(), method.as_str()) {
                        ("/ok", _) => ("200 OK", String::new()),
                        ("/moved", _) => ("301 Moved Permanently", "Location: /ok\r\n".to_string()),
                        ("/nohead", "HEAD") => ("405 Method Not Allowed", String::new()),
                        ("/nohead", _) => ("200 OK", String::new()),
                        ("/busy", _) if earlier == 0 => {
                            ("429 Too Many Requests", "Retry-After: 1\r\n".to_string())
                        }
                        ("/busy", _) => ("200 OK", String::new()),
                        ("/slow", _) => {
                            std::thread::sleep(std::time::Duration::from_secs(3));
                            ("200 OK", String::new())
                        }
                        _ => ("404 Not Found", String::new()),
                    };
                    let _ = write!(
                        stream,
                        "HTTP/1.1 {status}\r\n{extra}Content-Length: 0\r\nConnection: close\r\n\r\n"
                    );
                });
            }
        });
        LinkServer { port, log }
    }

    fn requests(&self, path: &str) -> Vec<(String, std::time::Instant)> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, p, _)| p == path)
            .map(|(m, _, t)| (m.clone(), *t))
            .collect()
    }
}

#[test]
fn check_external_follows_the_rules_of_the_road() {
    let server = LinkServer::start();
    let site = Fixture::new("check");
    std::fs::remove_file(site.root().join("content/docs/problems.md")).unwrap();
    let toml = std::fs::read_to_string(site.root().join("site.toml")).unwrap();
    site.write(
        "site.toml",
        &format!("{toml}\n[check.external]\ntimeout_secs = 1\nretries = 1\nbackoff_ms = 100\nper_host_interval_ms = 0\nper_host_concurrency = 8\nexclude = ['/excluded']\n"),
    );
    let base = format!("http://127.0.0.1:{}", server.port);
    let body: String = [
        "ok", "missing", "moved", "nohead", "busy", "slow", "excluded",
    ]
    .iter()
    .map(|p| format!("- [{p}]({base}/{p})\n"))
    .collect();
    site.write(
        "content/docs/links.md",
        &format!(
            "---\ntitle: Links\ndescription: \"Outbound links.\"\nsignature: LinkError\n---\n{body}"
        ),
    );

    let (code, out) = check_cmd(site.root(), &["--external", "--format", "json"]);
    assert_eq!(code, 2, "{out}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let problems: Vec<String> = json["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "{}:{}:{} {}: {}",
                p["file"].as_str().unwrap(),
                p["line"],
                p["column"],
                p["severity"].as_str().unwrap(),
                p["message"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        problems,
        [
            format!(
                "content/docs/links.md:7:13 error: broken link {base}/missing: HTTP 404 Not Found"
            ),
            format!("content/docs/links.md:8:11 warning: {base}/moved redirects to {base}/ok"),
            format!(
                "content/docs/links.md:11:10 error: broken link {base}/slow: timed out after 1 s"
            ),
        ]
    );
    // HEAD refused: the checker asked again with GET.
    let nohead: Vec<String> = server
        .requests("/nohead")
        .into_iter()
        .map(|(m, _)| m)
        .collect();
    assert_eq!(nohead, ["HEAD", "GET"]);
    // 429 with Retry-After: 1 waited a second before asking again.
    let busy = server.requests("/busy");
    assert_eq!(busy.len(), 2);
    assert!(
        busy[1].1 - busy[0].1 >= std::time::Duration::from_millis(950),
        "{:?}",
        busy[1].1 - busy[0].1
    );
    // The slow link was retried once, after the backoff.
    assert_eq!(server.requests("/slow").len(), 2);
    assert!(server.requests("/excluded").is_empty());

    // Only working links are cached; the next run asks again about the rest only.
    let cache: BTreeMap<String, u64> = serde_json::from_str(
        &std::fs::read_to_string(site.root().join(".errata/linkcache.json")).unwrap(),
    )
    .unwrap();
    let cached: Vec<&str> = cache.keys().map(|k| k.trim_start_matches(&base)).collect();
    assert_eq!(cached, ["/busy", "/nohead", "/ok"]);
    let before = server.requests("/nohead").len();
    let (code, _) = check_cmd(site.root(), &["--external", "--format", "json"]);
    assert_eq!(code, 2);
    assert_eq!(
        server.requests("/nohead").len(),
        before,
        "a cached link is not requested again"
    );
    assert_eq!(
        server.requests("/missing").len(),
        2,
        "a failure is never cached"
    );
}

#[test]
fn check_reports_what_a_build_warns_about_without_highlighting() {
    let site = Fixture::new("basic");
    let (code, out) = check_cmd(site.root(), &["--format", "github"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.lines().any(|l| l.starts_with("::warning file=content/guides/first-error.md,line=18,col=1::unknown code block language `klingon`")),
        "{out}"
    );
    // Known languages are not reported, though check does not highlight them.
    assert!(
        !out.contains("`console`") && !out.contains("`powershell`"),
        "{out}"
    );
}
