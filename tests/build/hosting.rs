use crate::support::*;

#[test]
fn base_url_override_changes_links_and_canonicals() {
    // site.toml's base_url is https://user.github.io/triage/.
    let site = Fixture::new("hosting");
    let options = BuildOptions {
        base_url: Some("https://preview.example.net/sub".into()),
        ..site.options()
    };
    errata::build(&options).unwrap();
    let page = site.read("errors/e1/index.html");
    assert!(
        page.contains("href=https://preview.example.net/sub/errors/e1/ rel=canonical"),
        "{page}"
    );
    assert!(page.contains("href=/sub/errors/e2/#fix"), "{page}");
    assert!(
        page.contains("href=/sub/errors/e2/#why-it-happens"),
        "{page}"
    );
    assert!(page.contains("/sub/css/style."), "{page}");
    assert!(!page.contains("/triage/"), "{page}");
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

#[test]
fn static_well_known_is_published_and_other_hidden_files_are_not() {
    let site = Fixture::new("hosting");
    for (rel, text) in [
        (
            "static/.well-known/security.txt",
            "Contact: mailto:sec@example.org\n",
        ),
        ("static/.env", "SECRET=1\n"),
        ("static/docs/.well-known/x.txt", "nested\n"),
        ("static/.git/config", "[core]\n"),
    ] {
        let path = site.root().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    site.build().unwrap();
    assert_eq!(
        site.read(".well-known/security.txt"),
        "Contact: mailto:sec@example.org\n"
    );
    let public = site.root().join("public");
    for hidden in [".env", "docs/.well-known/x.txt", ".git/config"] {
        assert!(!public.join(hidden).exists(), "{hidden} was published");
    }
}
