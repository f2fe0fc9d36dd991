//! `errata serve`'s builds and the search index: a build of a session
//! indexes only the pages whose HTML changed since the session's last good
//! build, and still makes the bundle a clean build makes, byte for byte.

use super::support::*;
use errata::pipeline::{Session, build_in_session};

/// The bundle's files (`pagefind/…`) a session's last build holds.
fn session_bundle(session: &Session) -> BTreeMap<String, Vec<u8>> {
    let site = session.site();
    site.paths()
        .filter(|path| path.starts_with("pagefind/"))
        .map(|path| (path.to_string(), site.get(path).unwrap().to_vec()))
        .collect()
}

/// The bundle a clean `errata build` of the site makes now.
fn clean_bundle(site: &Fixture) -> BTreeMap<String, Vec<u8>> {
    let out = site.root().join("clean");
    errata::build(&BuildOptions {
        output: Some(out.clone()),
        clean: true,
        ..site.options()
    })
    .unwrap();
    let bundle = out.join("pagefind");
    let files = snapshot_dir(&bundle)
        .into_iter()
        .filter(|(path, _)| bundle.join(path).is_file())
        .map(|(path, bytes)| (format!("pagefind/{}", path.display()), bytes))
        .collect();
    std::fs::remove_dir_all(&out).unwrap();
    files
}

/// Asserts that two bundles hold the same files, naming those that differ.
fn assert_same(session: &BTreeMap<String, Vec<u8>>, clean: &BTreeMap<String, Vec<u8>>) {
    let differ: Vec<&String> = session
        .keys()
        .chain(clean.keys())
        .filter(|name| session.get(*name) != clean.get(*name))
        .collect();
    assert!(
        differ.is_empty(),
        "files that differ from a clean build's: {differ:?}"
    );
}

#[test]
fn a_session_indexes_only_the_pages_that_changed_and_makes_the_clean_bundle() {
    let site = Fixture::new("find");
    let mut session = Session::default();
    let build = |session: &mut Session| build_in_session(&site.options(), session);

    let first = build(&mut session).unwrap();
    let pages = first.pages;
    assert!(pages >= 4, "the fixture's triage pages: {pages}");
    assert_eq!(
        first.search_reused, 0,
        "a session's first build indexes all"
    );
    assert_same(&session_bundle(&session), &clean_bundle(&site));

    // One page's text changes: it alone is indexed again, and its new words
    // are found (the bundle is the clean build's).
    let page = "content/oom/cuda-out-of-memory.md";
    let text = std::fs::read_to_string(site.root().join(page)).unwrap();
    site.write(page, &format!("{text}\nA zanzibarite paragraph.\n"));
    let second = build(&mut session).unwrap();
    assert_eq!(second.search_reused, pages - 1);
    let bundle = session_bundle(&session);
    assert_same(&bundle, &clean_bundle(&site));

    // A failed build (another page broken) keeps what the last good one
    // kept: once mended, every page is taken from it, the edited one too.
    let other = "content/nccl/nccl-watchdog-timeout.md";
    let other_text = std::fs::read_to_string(site.root().join(other)).unwrap();
    site.write(other, "---\ntitle: [unclosed\n---\n");
    assert!(build(&mut session).is_err());
    site.write(other, &other_text);
    let third = build(&mut session).unwrap();
    assert_eq!(third.search_reused, pages);
    assert_same(&session_bundle(&session), &bundle);

    // The edit undone: that page is indexed again, and its words are gone.
    site.write(page, &text);
    let fourth = build(&mut session).unwrap();
    assert_eq!(fourth.search_reused, pages - 1);
    assert_same(&session_bundle(&session), &clean_bundle(&site));
    assert_ne!(session_bundle(&session), bundle, "the new words are gone");

    // A page added, then removed: no fragment of it stays behind.
    let added = "content/oom/zanzibar-error.md";
    site.write(
        added,
        "---\ntitle: \"Zanzibar error\"\nsignature: \"ZanzibarError: out of zanzibars\"\n---\nRestart the zanzibar.\n",
    );
    let fifth = build(&mut session).unwrap();
    assert_eq!((fifth.pages, fifth.search_reused), (pages + 1, pages));
    assert_same(&session_bundle(&session), &clean_bundle(&site));
    std::fs::remove_file(site.root().join(added)).unwrap();
    let sixth = build(&mut session).unwrap();
    assert_eq!((sixth.pages, sixth.search_reused), (pages, pages));
    assert_same(&session_bundle(&session), &clean_bundle(&site));

    // Most of the words numbered gone from every page (5,000 words added,
    // then removed): the build after starts afresh, with no record kept,
    // while its pages come from the page cache. So each page's HTML is
    // read back from the output and indexed.
    let words: Vec<String> = (0..5000).map(|n| format!("zq{n:05}")).collect();
    site.write(
        added,
        &format!(
            "---\ntitle: \"Zanzibar error\"\nsignature: \"ZanzibarError: out of zanzibars\"\n---\n{}\n",
            words.join(" ")
        ),
    );
    build(&mut session).unwrap();
    std::fs::remove_file(site.root().join(added)).unwrap();
    build(&mut session).unwrap();
    let afresh = build(&mut session).unwrap();
    assert_eq!(
        (afresh.pages, afresh.cached_pages, afresh.search_reused),
        (pages, pages, 0)
    );
    assert_same(&session_bundle(&session), &clean_bundle(&site));

    // A change to every page (the site's title is in each) indexes all.
    let config = std::fs::read_to_string(site.root().join("site.toml")).unwrap();
    site.write(
        "site.toml",
        &config.replacen("title = \"Find\"", "title = \"Found\"", 1),
    );
    let last = build(&mut session).unwrap();
    assert_eq!(last.search_reused, 0);
    assert_same(&session_bundle(&session), &clean_bundle(&site));
}
