use crate::support::*;

/// The default site carries the seed page faithfully.
#[test]
fn default_site_carries_the_seed_page() {
    let (out, report) = build_default_site();
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
