//! The seed page (`tests/seed.txt`, published as `/oom/cuda-out-of-memory/`)
//! and the repository's own default site around it: the only tests that
//! build the site the repository ships (besides the pinned digest in
//! `default_site.rs`). Every feature is tested on a fixture; these prove
//! that the shipped site uses the features as intended. They share one
//! build of a copy of the site ([`DefaultSite::get`]).

use crate::support::*;

/// The seed page as built.
fn seed_page() -> String {
    DefaultSite::get().read("oom/cuda-out-of-memory/index.html")
}

/// The seed text, `tests/seed.txt`.
fn seed_text() -> String {
    std::fs::read_to_string(Path::new(REPO).join("tests/seed.txt")).unwrap()
}

/// The default site builds without warnings and carries the seed page
/// faithfully.
#[test]
fn default_site_carries_the_seed_page() {
    let site = DefaultSite::get();
    assert!(site.warnings.is_empty(), "{:?}", site.warnings);
    let html = seed_page();
    let text = decode_entities(&strip_tags(&html));
    let seed = seed_text();

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
        let list_html = site.read(list);
        assert!(
            list_html.contains("href=/oom/cuda-out-of-memory/"),
            "{list}"
        );
    }
}

#[test]
fn the_seed_pages_remediation_is_one_tab_group_with_its_commands_unchanged() {
    let found = tab_groups(&seed_page());
    assert_eq!(found.len(), 1, "one group");
    let tools: Vec<(&str, &str)> = found[0]
        .iter()
        .map(|(k, h, _)| (k.as_str(), h.as_str()))
        .collect();
    assert_eq!(
        tools,
        [
            ("ollama", "h3:Ollama #"),
            ("llama-cpp", "h3:Llama.cpp #"),
            ("vllm", "h3:vLLM #")
        ]
    );
    // Each panel holds exactly the seed's block for its tool, line for line.
    let seed = seed_text();
    let blocks: Vec<String> = seed
        .split("```bash\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap().to_string())
        .collect();
    let codes: Vec<String> = found[0]
        .iter()
        .map(|(_, _, c)| decode_entities(c))
        .collect();
    assert_eq!(codes, blocks);
}

#[test]
fn the_seed_page_and_its_lists_follow_the_link_policy_and_carry_json_ld() {
    let site = DefaultSite::get();
    let doc = check_policy(&seed_page(), true);
    let graph = json_ld(&doc);
    for kind in ["TechArticle", "BreadcrumbList", "WebApplication"] {
        node(&graph, kind);
    }
    assert_eq!(
        node(&graph, "TechArticle")["about"]["name"],
        "RuntimeError: CUDA out of memory. Tried to allocate ... MiB"
    );
    for list in ["index.html", "oom/index.html", "tools/index.html"] {
        let doc = check_policy(&site.read(list), false);
        node(&json_ld(&doc), "CollectionPage");
    }
}

#[test]
fn default_site_passes_errata_check() {
    let (code, out) = check_cmd(&DefaultSite::get().root, &[]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_pasted_traceback_leads_to_the_seed_page_with_the_captures() {
    let Some(browser) =
        Browser::start("a_pasted_traceback_leads_to_the_seed_page_with_the_captures")
    else {
        return;
    };
    let server = StaticServer::start(DefaultSite::get().public.clone(), "/");
    browser.go(&format!("{}/", server.origin()));
    let input = the_box(&browser);
    // A real multi-error log: the OOM traceback, then the traceback raised
    // while handling it (pytorch/pytorch#18853).
    let log = std::fs::read_to_string(Path::new(REPO).join("tests/logs/cuda-out-of-memory/4.log"))
        .unwrap();
    assert!(log.lines().count() > 10);
    browser.type_text(&input, &log);
    let found = results(&browser);
    let (class, href) = &found[0];
    assert_eq!(class, "find-match", "{found:?}");
    assert!(
        href.starts_with("/oom/cuda-out-of-memory/#log="),
        "{found:?}"
    );
    let status = browser.script("return document.querySelector('[data-find-status]').textContent");
    assert!(status.as_str().unwrap().contains("your error"), "{status}");
    // The matched line, with the captures highlighted.
    let marks = browser.script(
        "return Array.prototype.map.call(document.querySelectorAll('.find-match')[0].querySelectorAll('.find-line mark'), function (m) { return m.textContent; });",
    );
    assert_eq!(
        marks,
        serde_json::json!(["1024.00 MiB", "15.90 GiB", "991.56 MiB"])
    );

    // By keyboard: ↓ from the end of the text reaches the first result,
    // Enter follows it.
    browser.type_text(&input, "\u{E015}");
    let focused = browser.script("return document.activeElement.getAttribute('href')");
    assert_eq!(focused.as_str(), Some(href.as_str()));
    let link = browser.element(".find-match a");
    browser.type_text(&link, "\u{E007}");
    browser.wait_for("return location.pathname === '/oom/cuda-out-of-memory/'");
    let said = browser.wait_for(
        "var a = document.querySelector('[data-from-log]'); return a.hidden ? null : a.textContent;",
    );
    let said = said.as_str().unwrap();
    for capture in [
        "From your log:",
        "tried to allocate 1024.00 MiB",
        "total capacity 15.90 GiB",
        "free 991.56 MiB",
        "RuntimeError: CUDA out of memory. Tried to allocate 1024.00 MiB (GPU 0;",
    ] {
        assert!(said.contains(capture), "{capture:?} in {said:?}");
    }
}
