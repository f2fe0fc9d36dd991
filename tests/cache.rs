//! The incremental cache under damage: corrupt and edited entries are
//! discarded and their pages rendered again, cached HTML goes through the
//! link policy like fresh HTML, and builds with different site-wide inputs
//! (`build` and `serve`) keep each other's entries.

#[path = "support/copy_dir.rs"]
mod copy_dir_support;
#[path = "support/snapshot.rs"]
mod snapshot_support;

use std::path::{Path, PathBuf};

use copy_dir_support::copy_dir;
use errata::{BuildOptions, BuildReport};
use snapshot_support::snapshot_dir;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// A small site with two pages, one with an external link.
fn site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "site.toml",
        "title = \"Cache\"\nbase_url = \"https://example.org/\"\ndescription = \"Cache tests.\"\n",
    );
    write(
        "content/a.md",
        "---\ntitle: \"A\"\nsignature: \"AError\"\ndescription: \"Page A.\"\n---\n## Fix\n\nBuy [a GPU](https://www.amazon.com/dp/B0?tag=site-20).\n",
    );
    write(
        "content/b.md",
        "---\ntitle: \"B\"\nsignature: \"BError\"\ndescription: \"Page B.\"\n---\n## Fix\n\nSee [A](@/a.md#fix).\n",
    );
    copy_dir(
        &Path::new(REPO).join("themes/default"),
        &root.join("themes/default"),
    );
    dir
}

fn build(root: &Path, base_url: Option<&str>, output: &Path) -> BuildReport {
    errata::build(&BuildOptions {
        root: root.to_path_buf(),
        output: Some(output.to_path_buf()),
        base_url: base_url.map(str::to_string),
        ..BuildOptions::default()
    })
    .unwrap_or_else(|e| panic!("build failed: {e:?}"))
}

/// Every entry file in the cache.
fn entries(root: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(root.join(".errata/cache"))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "entry"))
        .map(|e| e.into_path())
        .collect()
}

/// The entry holding `needle`, split into key, header and JSON.
fn entry_with(root: &Path, needle: &str) -> (PathBuf, String, String) {
    for path in entries(root) {
        let text = std::fs::read_to_string(&path).unwrap();
        if text.contains(needle) {
            let key = path.file_stem().unwrap().to_string_lossy().into_owned();
            let json = text.split_once('\n').unwrap().1.to_string();
            return (path, key, json);
        }
    }
    panic!("no cache entry holds {needle:?}");
}

#[test]
fn corrupt_and_edited_entries_are_rendered_again_never_served() {
    let dir = site();
    let root = dir.path();
    let clean = root.join("clean");
    build(root, None, &clean);
    let expected = snapshot_dir(&clean);
    assert_eq!(entries(root).len(), 2);

    let damage: [&dyn Fn(&str) -> String; 4] = [
        // Edited HTML, checksum left alone.
        &|t| t.replace("<!doctype html>", "<!doctype html><p>edited by hand</p>"),
        // Truncated mid-write.
        &|t| t[..t.len() / 2].to_string(),
        // Not even text.
        &|_| "\u{0}\u{1}garbage".into(),
        // Emptied.
        &|_| String::new(),
    ];
    for (n, hurt) in damage.iter().enumerate() {
        for path in entries(root) {
            let text = std::fs::read_to_string(&path).unwrap();
            std::fs::write(&path, hurt(&text)).unwrap();
        }
        let out = root.join(format!("out-{n}"));
        let report = build(root, None, &out);
        assert_eq!(report.cached_pages, 0, "damage {n}: a bad entry was served");
        assert_eq!(snapshot_dir(&out), expected, "damage {n}");
        // The pages were rendered and stored again, and are served next time.
        assert_eq!(build(root, None, &root.join("again")).cached_pages, 2);
        std::fs::remove_dir_all(root.join("again")).unwrap();
    }
}

#[test]
fn cached_html_goes_through_the_link_policy() {
    let dir = site();
    let root = dir.path();
    build(root, None, &root.join("public"));
    // An entry written by an errata whose link policy missed this link (say,
    // an older version): the HTML lacks its rel, the checksum is right.
    let (path, key, json) = entry_with(root, "amazon.com");
    let stale = json.replace(r#" rel=noopener>a GPU"#, ">a GPU");
    assert_ne!(
        stale, json,
        "the fixture's external link carries rel=noopener"
    );
    let checksum = errata::cache::hash_hex(&[key.as_bytes(), stale.as_bytes()]);
    std::fs::write(&path, format!("errata-cache-v1 {checksum}\n{stale}")).unwrap();

    let out = root.join("out");
    let report = build(root, None, &out);
    assert_eq!(
        report.cached_pages, 2,
        "the stale entry is intact, so it is used"
    );
    let html = std::fs::read_to_string(out.join("a/index.html")).unwrap();
    let doc = scraper::Html::parse_document(&html);
    let link = doc
        .select(&scraper::Selector::parse("a[href*='amazon.com']").unwrap())
        .next()
        .expect("the affiliate link");
    let rel = link.value().attr("rel").unwrap_or_default();
    assert!(rel.split(' ').any(|t| t == "noopener"), "rel={rel:?}");
}

#[test]
fn cached_html_the_policy_rejects_is_rendered_again() {
    let dir = site();
    let root = dir.path();
    build(root, None, &root.join("public"));
    let expected = snapshot_dir(&root.join("public"));
    // A hand-made entry with a script URL and a correct checksum.
    let (path, key, json) = entry_with(root, "Page B.");
    let evil = json.replace(
        "<a class=skip-link href=#main>",
        r#"<a class=skip-link href=\"javascript:alert(1)\">"#,
    );
    assert_ne!(evil, json);
    let checksum = errata::cache::hash_hex(&[key.as_bytes(), evil.as_bytes()]);
    std::fs::write(&path, format!("errata-cache-v1 {checksum}\n{evil}")).unwrap();
    let out = root.join("out");
    let report = build(root, None, &out);
    assert_eq!(report.cached_pages, 1, "only the untouched page is served");
    assert_eq!(snapshot_dir(&out), expected);
}

#[test]
fn serve_and_build_do_not_evict_each_others_entries() {
    let dir = site();
    let root = dir.path();
    // `serve` builds with its own base URL; `build` with the site's.
    let serve = || build(root, Some("http://127.0.0.1:1111/"), &root.join("served"));
    let deploy = || build(root, None, &root.join("public"));
    assert_eq!(deploy().cached_pages, 0);
    assert_eq!(serve().cached_pages, 0);
    assert_eq!(deploy().cached_pages, 2, "serve evicted build's entries");
    assert_eq!(serve().cached_pages, 2, "build evicted serve's entries");
}
