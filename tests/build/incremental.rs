use crate::support::*;

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
    let progress = errata::progress::Progress(std::sync::Arc::new(
        move |stage: errata::progress::Stage, done: usize, total: usize| {
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
            "search",
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
