use crate::support::*;

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
            "content/oom/dup-b.md:4:7: two producers write oom/same/index.html: page content/oom/dup-b.md and page content/oom/dup-a.md (content/oom/dup-a.md:4:7)",
            "content/oom/latin1.md:3:16: file is not valid UTF-8",
            "content/oom/missing-signature.md:2:1: missing field `signature`",
            "content/oom/syntax.md:5:1: did not find expected ',' or ']', while parsing a flow sequence",
            "content/oom/unclosed.md:1:1: front matter opened with `---` is never closed",
            // The misspelt key leaves the real one missing: both are said.
            "content/oom/unknown-key.md:2:1: missing field `signature`",
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
    // Every problem in one run, each located: the slug, the alias, and the
    // link in the body of the page whose front matter is broken.
    assert_eq!(
        errors,
        [
            "content/evil.md:4:7: invalid slug `..`: use one URL segment of letters, digits, `-`, `_` and `.`",
            "content/evil.md:5:11: aliases: invalid path `../../outside/`: use a site path like `old/page/` without `..`, `\\` or a scheme",
            "content/evil.md:7:1: `javascript:` links are not allowed",
        ]
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

/// A page's `sources` are listed under "Sources", in order, and given to
/// JSON-LD as the TechArticle's citations; a page without any has neither.
#[test]
fn sources_are_listed_on_the_page_and_cited_in_json_ld() {
    use errata::front_matter::{self, PageFrontMatter};
    let site = Fixture::new("sources");
    site.build().unwrap();
    let text =
        std::fs::read_to_string(site.root().join("content/nccl/nccl-watchdog-timeout.md")).unwrap();
    let front: PageFrontMatter = front_matter::parse(&front_matter::split(&text).unwrap()).unwrap();
    assert!(front.sources.len() >= 3);
    let doc = Html::parse_document(&site.read("nccl/nccl-watchdog-timeout/index.html"));
    let links: Vec<(String, String)> = select(&doc, "section.sources li a")
        .iter()
        .map(|a| {
            (
                a.text().collect(),
                a.value().attr("href").unwrap().to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = front
        .sources
        .iter()
        .map(|s| (s.title.clone(), s.url.0.clone()))
        .collect();
    assert_eq!(links, expected);
    let graph = json_ld(&doc);
    let cited: Vec<(String, String)> = node(&graph, "TechArticle")["citation"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["@type"], "CreativeWork");
            (
                c["name"].as_str().unwrap().into(),
                c["url"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(cited, expected);

    let doc = Html::parse_document(&site.read("nccl/unhandled-system-error/index.html"));
    assert!(select(&doc, "section.sources").is_empty());
    assert!(
        node(&json_ld(&doc), "TechArticle")
            .get("citation")
            .is_none()
    );
}
