//! Nothing injected: hostile Markdown, raw HTML and link variants, built
//! into real sites, with the final (minified) HTML parsed by a browser-grade
//! parser (`scraper`, html5ever) and checked for what must never survive.

#[path = "support/copy_dir.rs"]
mod copy_dir_support;
#[path = "support/errors.rs"]
mod errors_support;

use std::path::Path;

use copy_dir_support::copy_dir;
use errata::check::{CheckOptions, check};
use errata::{BuildError, BuildOptions, BuildReport, Diagnostic};
use errors_support::errors;
use scraper::{ElementRef, Html, Selector};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

const SITE_TOML: &str = r#"title = "Injection"
base_url = "https://example.org/"
description = "Hostile input."

[[links.affiliate]]
name = "amazon"
hosts = ["amazon.com"]
params = ["tag"]

[disclosure]
text = "FIXTURE DISCLOSURE."
amazon = "As an Amazon Associate I earn from qualifying purchases."
"#;

/// A site in a temporary folder: `site.toml` (plus `extra`), the default
/// theme, the calculator data and one `content/<name>.md` per page.
struct Site {
    dir: tempfile::TempDir,
}

impl Site {
    fn new(extra: &str, pages: &[(&str, &str)]) -> Site {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("site.toml"), format!("{SITE_TOML}{extra}")).unwrap();
        copy_dir(
            &Path::new(REPO).join("themes/default"),
            &root.join("themes/default"),
        );
        copy_dir(&Path::new(REPO).join("data"), &root.join("data"));
        std::fs::create_dir_all(root.join("content")).unwrap();
        for (name, body) in pages {
            let text = format!(
                "---\ntitle: \"{name}\"\nsignature: \"{name} error\"\ndescription: \"A page.\"\n---\n{body}"
            );
            std::fs::write(root.join("content").join(format!("{name}.md")), text).unwrap();
        }
        Site { dir }
    }

    fn build(&self) -> Result<BuildReport, BuildError> {
        errata::build(&BuildOptions {
            root: self.dir.path().to_path_buf(),
            ..BuildOptions::default()
        })
    }

    fn check(&self) -> Vec<Diagnostic> {
        check(&CheckOptions {
            root: self.dir.path().to_path_buf(),
            ..CheckOptions::default()
        })
        .unwrap()
    }

    fn page(&self, name: &str) -> Html {
        let path = self.dir.path().join("public").join(name).join("index.html");
        Html::parse_document(&std::fs::read_to_string(&path).unwrap())
    }
}

fn select<'a>(doc: &'a Html, css: &str) -> Vec<ElementRef<'a>> {
    doc.select(&Selector::parse(css).unwrap()).collect()
}

/// What a browser would run from a URL: its scheme once tabs, newlines and
/// leading controls are gone. Written independently of errata's own check.
fn runs_script(url: &str) -> bool {
    let cleaned: String = url
        .trim_start_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect::<String>()
        .to_ascii_lowercase();
    ["javascript:", "data:", "vbscript:"]
        .iter()
        .any(|s| cleaned.starts_with(s))
}

/// The page body (the content) has no event handler, no `<script>`, and
/// the whole page no script URL in any attribute.
fn assert_nothing_injected(doc: &Html) {
    for el in select(doc, ".body, .body *") {
        for (name, value) in el.value().attrs() {
            assert!(
                !name.to_ascii_lowercase().starts_with("on"),
                "event handler {name}={value:?} on <{}>",
                el.value().name()
            );
        }
    }
    for el in select(doc, "*") {
        for (name, value) in el.value().attrs() {
            for url in value.split([',', ' ']) {
                assert!(
                    !runs_script(url),
                    "script URL {name}={value:?} on <{}>",
                    el.value().name()
                );
            }
        }
    }
    assert!(select(doc, ".body script, .body iframe, .body object, .body embed").is_empty());
    assert!(select(doc, "script").iter().all(|s| {
        let text: String = s.text().collect();
        !text.contains("alert")
    }));
}

#[test]
fn every_affiliate_url_variant_gets_sponsored_rel_and_a_disclosure() {
    let variants: &[(&str, &str)] = &[
        (
            "md-tag-second",
            "[card](https://www.amazon.com/dp/B0BG9?th=1&tag=mysite-20)",
        ),
        (
            "md-tag-first",
            "[card](https://www.amazon.com/dp/B0BG9?tag=mysite-20&th=1)",
        ),
        (
            "md-percent-name",
            "[card](https://www.amazon.com/dp/B0BG9?th=1&%74ag=mysite-20)",
        ),
        (
            "md-upper-host",
            "[card](HTTPS://WWW.AMAZON.COM/dp/B0BG9?tag=mysite-20)",
        ),
        (
            "md-trailing-dot",
            "[card](https://www.amazon.com./dp/B0BG9?tag=mysite-20)",
        ),
        (
            "md-subdomain",
            "[card](https://smile.amazon.com/dp/B0BG9?tag=mysite-20)",
        ),
        (
            "md-scheme-relative",
            "[card](//www.amazon.com/dp/B0BG9?tag=mysite-20)",
        ),
        (
            "md-http-no-slashes",
            "[card](http:www.amazon.com/dp/B0BG9?tag=mysite-20)",
        ),
        (
            "md-entity-amp",
            "[card](https://www.amazon.com/dp/B0BG9?th=1&amp;tag=mysite-20)",
        ),
        (
            "md-autolink",
            "<https://www.amazon.com/dp/B0BG9?th=1&tag=mysite-20>",
        ),
        (
            "md-reference",
            "[card][r]\n\n[r]: https://www.amazon.com/dp/B0BG9?th=1&tag=mysite-20\n\nEnd",
        ),
        (
            "html-amp",
            "<a href=\"https://www.amazon.com/dp/B0BG9?th=1&amp;tag=mysite-20\">card</a>",
        ),
        (
            "html-raw-amp",
            "<a href=\"https://www.amazon.com/dp/B0BG9?th=1&tag=mysite-20\">card</a>",
        ),
        (
            "html-numeric-amp",
            "<a href=\"https://www.amazon.com/dp/B0BG9?th=1&#38;tag=mysite-20\">card</a>",
        ),
        (
            "html-backslashes",
            "<a href=\"https:\\\\www.amazon.com\\dp\\B0BG9?tag=mysite-20\">card</a>",
        ),
        (
            "html-upper-param",
            "<a href='https://www.amazon.com/dp/B0BG9?TAG=mysite-20'>card</a>",
        ),
    ];
    let pages: Vec<(&str, String)> = variants
        .iter()
        .map(|(name, link)| (*name, format!("Intro text.\n\nBuy the {link} today.\n")))
        .collect();
    let pages: Vec<(&str, &str)> = pages.iter().map(|(n, b)| (*n, b.as_str())).collect();
    let site = Site::new("", &pages);
    site.build().unwrap();
    for (name, _) in variants {
        let doc = site.page(name);
        let body_links = select(&doc, ".body a[href]");
        let card = body_links
            .iter()
            .find(|a| {
                a.value()
                    .attr("href")
                    .unwrap()
                    .to_ascii_lowercase()
                    .contains("amazon")
            })
            .unwrap_or_else(|| panic!("{name}: no link"));
        let rel = card.value().attr("rel").unwrap_or_default();
        assert!(
            rel.split(' ').any(|t| t == "sponsored"),
            "{name}: rel={rel:?}"
        );
        let html = doc.root_element().html();
        let disclosure = html.find("FIXTURE DISCLOSURE.").expect(name);
        let amazon = html.find("As an Amazon Associate").expect(name);
        let link = html.find(&card.html()).unwrap();
        assert!(
            disclosure < link && amazon < link,
            "{name}: disclosure after the link"
        );
        assert_nothing_injected(&doc);
    }
}

#[test]
fn raw_html_is_sanitised_and_errata_markup_survives() {
    let body = r#"## Steps {#steps .lead data-level=2}

<details open><summary>Show more</summary>

Press <kbd onclick="alert(1)">Ctrl</kbd>+<kbd>C</kbd>; H<sub>2</sub>O and x<sup>2</sup>.

```bash
export CUDA_VISIBLE_DEVICES="0" # <script>alert(1)</script>
```

</details>

<script>alert(2)</script>
<img src="/a.png" alt="diagram" onerror="alert(3)">
<iframe src="https://evil.example/"></iframe>
<p style="position:fixed" data-disclosure>fake disclosure</p>
<svg><a xlink:href="https://evil.example/"><text>svg</text></a></svg>
<object data="https://evil.example/x.swf"></object>
<figure><img src="/b.png" alt="b"><figcaption>Caption</figcaption></figure>

<table><tr><th>a</th></tr><tr><td>1</td></tr></table>

<a href="https://example.org/ok/" title="ok" rel="me" onmouseover="alert(4)">ok</a>
<form action="/search"><input name="q"><button>Go</button></form>
"#;
    let site = Site::new("", &[("sanitised", body)]);
    // The images exist: a raw `src` to a missing file is an error.
    std::fs::create_dir_all(site.dir.path().join("static")).unwrap();
    for image in ["a.png", "b.png"] {
        std::fs::write(site.dir.path().join("static").join(image), "png").unwrap();
    }
    let report = site.build().unwrap();
    // Each removal is a located warning.
    let warned: Vec<_> = report
        .warnings
        .iter()
        .filter(|w| w.message.contains("sanitiser"))
        .map(|w| (w.line, w.col))
        .collect();
    assert!(warned.contains(&(10, 12)), "{warned:?}"); // kbd onclick
    assert!(warned.contains(&(18, 1)), "{warned:?}"); // script
    let doc = site.page("sanitised");
    assert_nothing_injected(&doc);
    for kept in [
        ".body details[open] > summary",
        ".body kbd",
        ".body sub",
        ".body sup",
        ".body figure > img[src='/b.png'][alt='b']",
        ".body figure > figcaption",
        ".body table th",
        ".body img[src='/a.png'][alt='diagram']",
        ".body a[href='https://example.org/ok/'][title='ok'][rel='me']",
        // errata's own markup, untouched by the sanitiser:
        ".body h2#steps.lead[data-level='2'] > a.anchor[href='#steps']",
        ".body details .codeblock[data-lang='bash'] pre code span",
    ] {
        assert!(!select(&doc, kept).is_empty(), "{kept} is missing");
    }
    for gone in [
        ".body iframe",
        ".body svg",
        ".body object",
        ".body form",
        ".body input",
        ".body [style]",
        ".body [data-disclosure]",
    ] {
        assert!(select(&doc, gone).is_empty(), "{gone} survived");
    }
    // The code block's text is code, not markup.
    let code: String = select(&doc, ".body .codeblock")[0].text().collect();
    assert!(code.contains("<script>alert(1)</script>"), "{code}");
}

#[test]
fn the_calculator_and_highlighting_survive_a_sanitised_page() {
    let body = "<kbd>x</kbd>\n\n```python\nimport torch\n```\n";
    let site = Site::new("", &[("calc", body)]);
    let path = site.dir.path().join("content/calc.md");
    let text = std::fs::read_to_string(&path).unwrap().replacen(
        "---\n",
        "---\ncalculator: { model: llama-3.1-8b, weights: fp16, context: 8192 }\n",
        1,
    );
    std::fs::write(&path, text).unwrap();
    site.build().unwrap();
    let doc = site.page("calc");
    assert_eq!(select(&doc, "section.calculator#calculator").len(), 1);
    assert_eq!(select(&doc, "script#sizing-data").len(), 1);
    assert!(!select(&doc, ".body .codeblock[data-lang='python'] span").is_empty());
    assert_nothing_injected(&doc);
}

#[test]
fn unsafe_html_keeps_raw_html_but_not_bad_urls() {
    let body = "<div class=\"widget\" data-x=\"1\" onclick=\"go()\">w</div>\n";
    let site = Site::new("\n[markdown]\nunsafe_html = true\n", &[("trusted", body)]);
    site.build().unwrap();
    let doc = site.page("trusted");
    assert_eq!(
        select(&doc, ".body div.widget[data-x='1'][onclick='go()']").len(),
        1
    );
    // URL attributes are checked all the same.
    let bad = "<a href=\"&#106;avascript:alert(1)\">x</a>\n";
    let site = Site::new("\n[markdown]\nunsafe_html = true\n", &[("trusted", bad)]);
    assert_eq!(
        errors(site.build()),
        [
            "content/trusted.md:6:4: `javascript:` URLs are not allowed in raw HTML (`href` of `<a>`); use http(s), mailto, relative or #fragment URLs"
        ]
    );
}

#[test]
fn script_urls_are_located_errors_however_they_are_written() {
    let body = "\
[a](javascript:alert(1))
[b](JAVASCRIPT:alert(1))
[c](jav&#x09;ascript:alert(1))
[d](&#106;avascript:alert(1))
![e](data:image/svg+xml,x)
[f](vbscript:x)
<a href=\"jav&#x09;ascript:x\">g</a>
<a href=\"&#106;avascript:x\">h</a>
<a href=\"javascript&colon;x\">i</a>
<a href=\" &#x0A;javascript:x\">j</a>
<img src=\"DATA:text/html,x\">
<a href=\"java&Tab;script:x\">k</a>
<video poster=\"javascript:x\"></video>
<blockquote cite=\"vbscript:x\"></blockquote>
";
    let site = Site::new("", &[("evil", body)]);
    let errors = errors(site.build());
    let lines: Vec<String> = errors
        .iter()
        .map(|e| e.split(": ").next().unwrap().to_string())
        .collect();
    let expected: Vec<String> = [
        "6:1", "7:1", "8:1", "9:1", "10:1", "11:1", "12:4", "13:4", "14:4", "15:4", "16:6", "17:4",
        "18:8", "19:13",
    ]
    .iter()
    .map(|at| format!("content/evil.md:{at}"))
    .collect();
    assert_eq!(lines, expected, "{errors:#?}");
    // `check` finds the same.
    let checked: Vec<String> = site
        .check()
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{}:{}:{}", d.path.display(), d.line, d.col))
        .collect();
    assert_eq!(checked, expected);
    assert!(!site.dir.path().join("public").exists());
}

#[test]
fn heading_attributes_cannot_open_an_attribute() {
    let site = Site::new(
        "",
        &[("h", "## Title {#a\"onclick=\"alert(2)}\n\n## Other {#ok}\n")],
    );
    assert_eq!(
        errors(site.build()),
        [
            "content/h.md:6:10: heading id `#a\"onclick=\"alert(2)` may hold only letters, digits, `-`, `_`, `.` and `:`"
        ]
    );
    // Quotes elsewhere in a heading are escaped text.
    let site = Site::new("", &[("q", "## Say \"hi\" & 'bye' {#say}\n")]);
    site.build().unwrap();
    let doc = site.page("q");
    let h = &select(&doc, "h2#say")[0];
    assert_eq!(h.value().attrs().count(), 1);
    assert_nothing_injected(&doc);
}

#[test]
fn nesting_past_the_limits_is_located_by_build_and_check() {
    let cases = [
        (format!("{} deep\n", ">".repeat(5000)), "content/n.md:6:101"),
        ("<div>".repeat(20_000), "content/n.md:6:1281"),
        (
            (0..150)
                .map(|k| format!("{}- x\n", "  ".repeat(k)))
                .collect(),
            "content/n.md:106:201",
        ),
    ];
    for (body, at) in cases {
        let site = Site::new("", &[("n", &body)]);
        let errors = errors(site.build());
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].starts_with(&format!("{at}: ")), "{errors:?}");
        let checked: Vec<_> = site
            .check()
            .into_iter()
            .filter(Diagnostic::is_error)
            .collect();
        assert_eq!(checked.len(), 1);
        assert_eq!(
            format!(
                "{}:{}:{}",
                checked[0].path.display(),
                checked[0].line,
                checked[0].col
            ),
            at
        );
    }
}

#[test]
fn nesting_at_the_limits_builds() {
    // The deepest page allowed renders and minifies on an ordinary worker
    // thread's stack.
    let divs = "<div>".repeat(errata::markdown::MAX_DEPTH) + "deep";
    let quotes = format!("{} deep\n", ">".repeat(errata::markdown::MAX_CONTAINERS));
    let site = Site::new("", &[("divs", &divs), ("quotes", &quotes)]);
    site.build().unwrap();
    assert_eq!(
        select(&site.page("divs"), ".body div").len(),
        errata::markdown::MAX_DEPTH
    );
    assert_eq!(
        select(&site.page("quotes"), ".body blockquote").len(),
        errata::markdown::MAX_CONTAINERS
    );
}
