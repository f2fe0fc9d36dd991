//! "Paste your error or search" in a real browser, on the `find` fixture:
//! the box without scripts, the matcher's WebAssembly in its Worker on a
//! 5 MB paste, and Pagefind's full-text search. A real traceback leading to
//! the seed page's "From your log" block is in `seed.rs`.

use crate::support::*;

/// The `find` fixture (triage pages with patterns, one found by its words),
/// built and served at `/`.
fn find_site() -> (Fixture, StaticServer) {
    let site = Fixture::new("find");
    site.build().unwrap();
    let server = StaticServer::start(site.root().join("public"), "/");
    (site, server)
}

/// Whether full-text search (not the matcher) listed the page at `href`.
fn is_search_hit(found: &[(String, String)], href: &str) -> bool {
    found
        .iter()
        .any(|(class, h)| class == "find-hit" && h == href)
}

/// Every resource the page has fetched so far.
fn fetched(browser: &Browser) -> Vec<String> {
    let v = browser.script(
        "return performance.getEntriesByType('resource').map(function (e) { return e.name; });",
    );
    v.as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_box_is_hidden_without_javascript_and_in_place_with_it() {
    let site = Fixture::new("find");
    site.build().unwrap();
    for page in [
        "index.html",
        "404.html",
        "oom/cuda-out-of-memory/index.html",
    ] {
        let html = site.read(page);
        let doc = Html::parse_document(&html);
        let found: Vec<_> = doc
            .select(&Selector::parse("[data-find]").unwrap())
            .collect();
        assert_eq!(found.len(), 1, "{page}");
        // Shown from the first paint (a script showing it would shift the
        // page), and hidden by a style that applies only without scripts.
        assert!(found[0].value().attr("hidden").is_none(), "{page}");
        let hiding: Vec<String> = doc
            .select(&Selector::parse("head noscript").unwrap())
            .map(|n| n.inner_html())
            .collect();
        assert!(
            hiding
                .iter()
                .any(|h| h.contains("[data-find]") && h.contains("display:none")),
            "{page}: {hiding:?}"
        );
        let large = found[0].value().classes().any(|c| c == "find-large");
        assert_eq!(large, page != "oom/cuda-out-of-memory/index.html", "{page}");
    }
}

#[test]
fn typed_words_find_pages_by_full_text_search() {
    let Some(browser) = Browser::start("typed_words_find_pages_by_full_text_search") else {
        return;
    };
    let (_site, server) = find_site();
    let origin = server.origin();
    browser.go(&format!("{origin}/"));
    let input = the_box(&browser);
    // Nothing for the box is loaded with the page.
    let loaded = fetched(&browser);
    assert!(
        !loaded
            .iter()
            .any(|u| u.contains("pagefind") || u.contains("matcher") || u.contains("match-index")),
        "{loaded:?}"
    );
    browser.type_text(&input, "watchdog heartbeat");
    let found = results(&browser);
    assert!(
        is_search_hit(&found, "/nccl/nccl-watchdog-timeout/"),
        "{found:?}"
    );
    // An excerpt with the words marked.
    let excerpt = browser.script(
        "var m = document.querySelectorAll('.find-hit .find-excerpt mark'); return Array.prototype.map.call(m, function (x) { return x.textContent.toLowerCase(); });",
    );
    assert!(
        excerpt.as_array().unwrap().iter().any(|m| m == "watchdog"),
        "{excerpt}"
    );
    // The site's own files only.
    let loaded = fetched(&browser);
    assert!(
        loaded.iter().any(|u| u.contains("/pagefind/")),
        "{loaded:?}"
    );
    for url in &loaded {
        assert!(url.starts_with(&format!("{origin}/")), "{url}");
    }
}

#[test]
fn a_pasted_5_mb_log_leaves_the_page_responsive() {
    let Some(browser) = Browser::start("a_pasted_5_mb_log_leaves_the_page_responsive") else {
        return;
    };
    let (_site, server) = find_site();
    browser.go(&format!("{}/", server.origin()));
    the_box(&browser);
    // Real log lines that match nothing, repeated to 5 MB, with the OOM
    // error at the end.
    let logs = Path::new(REPO).join("tests/logs");
    let mut noise = String::new();
    for entry in std::fs::read_dir(logs.join("no-match")).unwrap() {
        noise.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
        noise.push('\n');
    }
    assert!(noise.len() > 500);
    let error = std::fs::read_to_string(logs.join("cuda-out-of-memory/3.log")).unwrap();
    // The clipboard's text, made in a task of its own: building 5 MB of
    // text is the test's work, not the page's, and must not count as one
    // of the page's long tasks.
    let setup = format!(
        "var noise = {noise}, error = {error};
         var text = noise.repeat(Math.ceil(5 * 1024 * 1024 / noise.length)) + error;
         var clipboard = window.clipboard = new DataTransfer();
         clipboard.setData('text/plain', text);
         var probe = window.probe = {{ gap: 0, longest: 0, bytes: text.length }};
         new PerformanceObserver(function (list) {{
           list.getEntries().forEach(function (e) {{
             // Only tasks that end once the paste's task has begun.
             if (probe.start !== undefined && e.startTime + e.duration >= probe.start)
               probe.longest = Math.max(probe.longest, e.duration);
           }});
         }}).observe({{ type: 'longtask' }});
         return text.length;",
        noise = serde_json::to_string(&noise).unwrap(),
        error = serde_json::to_string(&error).unwrap(),
    );
    let bytes = browser.script(&setup).as_u64().unwrap();
    assert!(bytes >= 5 * 1024 * 1024, "{bytes}");
    // The paste event a browser fires, carrying the clipboard's text.
    // Meanwhile a frame probe and the long-task observer watch the page.
    let script = "var probe = window.probe;
         var box = document.querySelector('[data-find]'), input = box.querySelector('textarea');
         input.focus();
         probe.start = performance.now();
         input.dispatchEvent(new ClipboardEvent('paste', { clipboardData: window.clipboard, bubbles: true, cancelable: true }));
         probe.shown = input.value.length;
         var last = performance.now();
         function frame(t) {
           probe.gap = Math.max(probe.gap, t - last);
           last = t;
           if (box.getAttribute('data-state') === 'done') probe.took = t - probe.start;
           else requestAnimationFrame(frame);
         }
         requestAnimationFrame(frame);
         return true;";
    browser.script(script);
    let probe = browser.wait_for_within(
        "return window.probe.took !== undefined ? window.probe : null",
        std::time::Duration::from_secs(60),
    );
    let found = results(&browser);
    assert_eq!(found[0].0, "find-match", "{found:?}");
    assert!(
        found[0].1.starts_with("/oom/cuda-out-of-memory/#log="),
        "{found:?}"
    );
    // The box shows the end of the log, not 5 MB of it.
    let shown = probe["shown"].as_u64().unwrap();
    assert!(shown > 100 && shown < 64 * 1024, "{probe}");
    let note = browser
        .script("return document.querySelector('[data-find] textarea').value.split('\\n')[0]");
    assert_eq!(
        note,
        "[5.0 MB pasted: all of it is matched; its last lines:]"
    );
    // Matching 5 MB took a while, and the page drew frames all along: the
    // longest gap between two frames, and the longest task, stay a small
    // part of it. Matching on the page's own thread in one go would block
    // for about all of it. The bound is relative because every time here
    // scales with the machine: on a 2-core machine running Chromium, its
    // Worker and the test, the same run gave results after 0.75-2.4 s
    // with the longest task at a fifth of that each time.
    let took = probe["took"].as_f64().unwrap();
    let gap = probe["gap"].as_f64().unwrap();
    let longest = probe["longest"].as_f64().unwrap();
    eprintln!(
        "5 MB paste: result after {took:.0} ms, longest frame gap {gap:.0} ms, longest task {longest:.0} ms"
    );
    assert!(
        gap < took / 2.0 && gap < 1000.0,
        "the page froze for {gap} ms ({probe})"
    );
    assert!(
        longest < took / 2.0 && longest < 1000.0,
        "a task blocked the page for {longest} ms ({probe})"
    );
}

#[test]
fn serve_keeps_search_working_after_a_rebuild() {
    let Some(browser) = Browser::start("serve_keeps_search_working_after_a_rebuild") else {
        return;
    };
    let site = Fixture::new("basic");
    let served = Served::start(site.root());
    browser.go(served.url("/").as_str());
    let input = the_box(&browser);
    browser.type_text(&input, "zebracorn stampede");
    assert!(
        !results(&browser)
            .iter()
            .any(|(class, _)| class == "find-hit"),
        "nothing says zebracorn yet"
    );
    // Edit a page; the preview rebuilds and the open tab reloads itself.
    browser.script("window.beforeTheEdit = true; return null;");
    let path = site.root().join("content/guides/first-error.md");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        format!("{text}\nA zebracorn stampede in the logs.\n"),
    )
    .unwrap();
    served.wait_until("/guides/first-error/", "the rebuild", |b| {
        b.contains("zebracorn")
    });
    browser.wait_for("return !window.beforeTheEdit && document.readyState === 'complete'");
    let input = the_box(&browser);
    browser.type_text(&input, "zebracorn stampede");
    let found = results(&browser);
    assert!(is_search_hit(&found, "/guides/first-error/"), "{found:?}");
}

#[test]
fn search_results_keep_a_sub_path_base_url() {
    let Some(browser) = Browser::start("search_results_keep_a_sub_path_base_url") else {
        return;
    };
    // base_url https://user.github.io/triage/, served under /triage/.
    let site = Fixture::new("hosting");
    site.build().unwrap();
    let server = StaticServer::start(site.root().join("public"), "/triage/");
    browser.go(&format!("{}/triage/", server.origin()));
    let input = the_box(&browser);
    browser.type_text(&input, "E1Error failed");
    let found = results(&browser);
    assert!(is_search_hit(&found, "/triage/errors/e1/"), "{found:?}");
}
