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

/// The output a clean build (no cache, a fresh folder) gives now.
fn clean_build(site: &Fixture, n: usize) -> BTreeMap<PathBuf, Vec<u8>> {
    let out = site.root().join(format!("clean-{n}"));
    errata::build(&BuildOptions {
        output: Some(out.clone()),
        clean: true,
        ..site.options()
    })
    .unwrap();
    let files = snapshot_dir(&out);
    std::fs::remove_dir_all(&out).unwrap();
    files
}

#[test]
fn rebuilds_stage_into_the_previous_output_and_stay_byte_identical() {
    let site = Fixture::new("hosting");
    let public = site.root().join("public");
    let spare = site.root().join(".public.spare");
    site.build().unwrap();
    assert!(!spare.exists(), "nothing was replaced yet");
    let e1 = site.root().join("content/errors/e1.md");
    let original = std::fs::read_to_string(&e1).unwrap();
    let page = |text: &str| format!("---\ntitle: \"New\"\nsignature: \"NewError\"\n---\n{text}\n");
    // Each step changes the site; each build goes on top of the last one
    // (from the second on, into the output the one before replaced).
    type Step<'a> = (&'a str, Box<dyn Fn() + 'a>);
    let steps: [Step<'_>; 6] = [
        (
            "edit a body",
            Box::new(|| {
                std::fs::write(&e1, original.replace("Because.", "Because one.")).unwrap();
            }),
        ),
        (
            "edit it again",
            Box::new(|| {
                std::fs::write(&e1, original.replace("Because.", "Because two.")).unwrap();
            }),
        ),
        (
            "add a page",
            Box::new(|| site.write("content/errors/new.md", &page("Fresh."))),
        ),
        ("change nothing", Box::new(|| {})),
        (
            "remove the page",
            Box::new(|| {
                std::fs::remove_file(site.root().join("content/errors/new.md")).unwrap();
            }),
        ),
        (
            "change a stylesheet",
            Box::new(|| {
                let css = site.root().join("themes/default/static/css/style.css");
                let text = std::fs::read_to_string(&css).unwrap();
                std::fs::write(&css, format!("{text}\n/* edited */\n")).unwrap();
            }),
        ),
    ];
    for (n, (what, step)) in steps.iter().enumerate() {
        step();
        let report = site.build().unwrap();
        assert!(spare.join(errata::output_dir::MARKER).is_file(), "{what}");
        assert_eq!(snapshot_dir(&public), clean_build(&site, n), "{what}");
        if *what == "change nothing" {
            assert_eq!(report.cached_pages, report.pages, "{what}");
        }
    }

    // Hand-made changes to the live output: an edited file (same inode),
    // a new file and folder, and a page folder turned into a symlink to a
    // folder outside. Two builds later that folder is the spare again.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("index.html"), "not errata's").unwrap();
    let e2 = public.join("errors/e2/index.html");
    let mut file = std::fs::OpenOptions::new().append(true).open(&e2).unwrap();
    file.write_all(b"<!-- edited by hand -->").unwrap();
    drop(file);
    std::fs::write(public.join("extra.txt"), "extra").unwrap();
    std::fs::create_dir_all(public.join("extra/deep")).unwrap();
    std::fs::remove_dir_all(public.join("errors/e3")).unwrap();
    std::os::unix::fs::symlink(outside.path(), public.join("errors/e3")).unwrap();
    let expected = clean_build(&site, 10);
    for _ in 0..2 {
        site.build().unwrap();
        assert_eq!(snapshot_dir(&public), expected);
    }
    assert_eq!(
        std::fs::read_to_string(outside.path().join("index.html")).unwrap(),
        "not errata's"
    );
    // And with no cache at all, into the same folders.
    std::fs::remove_dir_all(site.root().join(".errata")).unwrap();
    site.build().unwrap();
    assert_eq!(snapshot_dir(&public), expected);
}

#[test]
fn a_section_weight_that_reorders_the_menu_rebuilds_every_page() {
    // Every page's menu lists the top-level sections by weight: moving one
    // must not leave the cached pages with the old order.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_default_site(root);
    let options = BuildOptions {
        root: root.to_path_buf(),
        output: Some(root.join("public")),
        ..BuildOptions::default()
    };
    errata::build(&options).unwrap();
    let cuda = root.join("content/cuda/_index.md");
    let text = std::fs::read_to_string(&cuda).unwrap();
    std::fs::write(&cuda, text.replace("weight: 10", "weight: 99")).unwrap();
    let warm = errata::build(&options).unwrap();
    assert!(
        warm.cached_pages < warm.pages,
        "every page came from the cache"
    );
    let clean_out = root.join("clean-public");
    errata::build(&BuildOptions {
        output: Some(clean_out.clone()),
        clean: true,
        ..options.clone()
    })
    .unwrap();
    assert_eq!(snapshot_dir(&root.join("public")), snapshot_dir(&clean_out));
    // And a weight that keeps the order keeps the cache.
    let text = std::fs::read_to_string(&cuda).unwrap();
    std::fs::write(&cuda, text.replace("weight: 99", "weight: 98")).unwrap();
    let again = errata::build(&options).unwrap();
    assert_eq!(again.cached_pages, again.pages);
}
