//! The incremental cache under damage: corrupt and edited entries are
//! discarded and their pages rendered again, a hit is served only from a
//! previous output that provably holds its bytes, a change to the link
//! policy renders every page again, and builds with different site-wide
//! inputs (two base URLs) keep each other's entries.

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

/// The cache's entries files, one per generation.
fn entry_files(root: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(root.join(".errata/cache"))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == "entries")
        .map(|e| e.into_path())
        .collect()
}

/// Every entry in the cache: its file, key and JSON.
fn entries(root: &Path) -> Vec<(PathBuf, String, String)> {
    let mut all = Vec::new();
    for path in entry_files(root) {
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            // `errata-cache-v3 <key> <checksum> <JSON>`
            let mut parts = line.splitn(4, ' ');
            let (_, key, _, json) = (
                parts.next(),
                parts.next().unwrap(),
                parts.next(),
                parts.next().unwrap(),
            );
            all.push((path.clone(), key.to_string(), json.to_string()));
        }
    }
    all
}

/// The entry holding `needle`: its file, key and JSON.
fn entry_with(root: &Path, needle: &str) -> (PathBuf, String, String) {
    entries(root)
        .into_iter()
        .find(|(_, _, json)| json.contains(needle))
        .unwrap_or_else(|| panic!("no cache entry holds {needle:?}"))
}

/// Rewrites every line of every entries file with `hurt`.
fn rewrite_entries(root: &Path, hurt: &dyn Fn(&str) -> String) {
    for path in entry_files(root) {
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<String> = text.lines().map(hurt).collect();
        std::fs::write(&path, lines.join("\n")).unwrap();
    }
}

#[test]
fn corrupt_and_edited_entries_are_rendered_again_never_served() {
    let dir = site();
    let root = dir.path();
    let clean = root.join("clean");
    build(root, None, &clean);
    let expected = snapshot_dir(&clean);
    // Two pages, the home page, the three taxonomies, the 404 page.
    assert_eq!(entries(root).len(), 7);

    let damage: [&dyn Fn(&str) -> String; 4] = [
        // Edited by hand, checksum left alone.
        &|t| t.replace("\"code_blocks\":0", "\"code_blocks\":1"),
        // Truncated mid-write.
        &|t| t[..t.len() / 2].to_string(),
        // Not even text.
        &|_| "\u{0}\u{1}garbage".into(),
        // Emptied.
        &|_| String::new(),
    ];
    for (n, hurt) in damage.iter().enumerate() {
        rewrite_entries(root, hurt);
        let out = root.join(format!("out-{n}"));
        let report = build(root, None, &out);
        assert_eq!(report.cached_pages, 0, "damage {n}: a bad entry was served");
        assert_eq!(snapshot_dir(&out), expected, "damage {n}");
        // The pages were rendered and stored again, and are served next
        // time (from this output, which holds their files).
        assert_eq!(build(root, None, &out).cached_pages, 2);
        assert_eq!(snapshot_dir(&out), expected, "damage {n}");
    }
}

#[test]
fn a_hit_is_served_only_from_files_that_provably_hold_its_bytes() {
    let dir = site();
    let root = dir.path();
    let public = root.join("public");
    build(root, None, &public);
    let expected = snapshot_dir(&public);
    // The live output's page edited in place (same file, new bytes): the
    // page is rendered again, not carried over.
    let a = public.join("a/index.html");
    let mut text = std::fs::read_to_string(&a).unwrap();
    text.push_str("<!-- edited -->");
    std::fs::write(&a, &text).unwrap();
    let report = build(root, None, &public);
    assert_eq!(report.cached_pages, 1, "the edited page was carried over");
    assert_eq!(snapshot_dir(&public), expected);
    // Both outputs gone: nothing to carry a hit from, every page rendered.
    std::fs::remove_dir_all(&public).unwrap();
    std::fs::remove_dir_all(root.join(".public.spare")).unwrap();
    assert_eq!(build(root, None, &public).cached_pages, 0);
    assert_eq!(snapshot_dir(&public), expected);
    // A hand-made entry (right checksum) naming bytes no output holds.
    let (_, key, json) = entry_with(root, "b/index.html");
    let hash = json.split("b/index.html\",\"").nth(1).unwrap()[..32].to_string();
    let forged = json.replace(&hash, &"0".repeat(32));
    let checksum = errata::cache::fast_hex(&[key.as_bytes(), forged.as_bytes()]);
    rewrite_entries(root, &|line| {
        if line.contains(&json) {
            format!("errata-cache-v3 {key} {checksum} {forged}")
        } else {
            line.to_string()
        }
    });
    let report = build(root, None, &public);
    assert_eq!(report.cached_pages, 1, "only the untouched page is served");
    assert_eq!(snapshot_dir(&public), expected);
}

#[test]
fn a_change_to_the_link_policy_renders_every_page_again() {
    // The policy comes from site.toml, which every key covers: a cached
    // page was always finished under the policy of the build that uses it.
    let dir = site();
    let root = dir.path();
    build(root, None, &root.join("public"));
    let config = root.join("site.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!("{text}[[links.affiliate]]\nname = \"amazon\"\nhosts = [\"amazon.com\"]\nparams = [\"tag\"]\n"),
    )
    .unwrap();
    let report = build(root, None, &root.join("public"));
    assert_eq!(report.cached_pages, 0);
    let html = std::fs::read_to_string(root.join("public/a/index.html")).unwrap();
    assert!(html.contains("sponsored"), "{html}");
}

#[test]
fn builds_for_two_base_urls_do_not_evict_each_others_entries() {
    let dir = site();
    let root = dir.path();
    // A preview build with `--base-url`, and the site's own.
    let preview = || {
        build(
            root,
            Some("https://preview.example.org/"),
            &root.join("preview"),
        )
    };
    let deploy = || build(root, None, &root.join("public"));
    assert_eq!(deploy().cached_pages, 0);
    assert_eq!(preview().cached_pages, 0);
    assert_eq!(
        deploy().cached_pages,
        2,
        "the preview evicted build's entries"
    );
    assert_eq!(
        preview().cached_pages,
        2,
        "build evicted the preview's entries"
    );
}

/// The names of the cache's entries.
fn entry_names(root: &Path) -> std::collections::BTreeSet<String> {
    entries(root).into_iter().map(|(_, key, _)| key).collect()
}

/// List pages (the home page, sections, taxonomies, 404) are cached by the
/// summaries they show: a body edit renders its page again and no list; a
/// new title renders the lists that show it too. Either way the output is
/// what a clean build gives.
#[test]
fn list_pages_are_rendered_again_only_when_what_they_list_changes() {
    let site = site();
    let root = site.path();
    let out = root.join("public");
    let c = root.join("content/c.md");
    let page = |title: &str, body: &str| {
        format!("---\ntitle: \"{title}\"\nsignature: \"CError\"\ntags: [gpu]\n---\n{body}\n")
    };
    std::fs::write(&c, page("C", "Body one.")).unwrap();
    // Another term, on a page of its own.
    std::fs::write(
        root.join("content/d.md"),
        "---\ntitle: \"D\"\nsignature: \"DError\"\ntags: [cpu]\n---\nD.\n",
    )
    .unwrap();
    build(root, None, &out);
    let first = entry_names(root);
    // Pages a, b, c, d; the home page; the tags list page and its two
    // terms' pages; the 404 page.
    assert!(first.len() >= 9, "{first:?}");

    let clean = |n: &str| {
        let clean = root.join(n);
        errata::build(&BuildOptions {
            root: root.to_path_buf(),
            output: Some(clean.clone()),
            clean: true,
            ..BuildOptions::default()
        })
        .unwrap();
        snapshot_dir(&clean)
    };

    std::fs::write(&c, page("C", "Body two, longer.")).unwrap();
    build(root, None, &out);
    let body_edit = entry_names(root);
    assert_eq!(
        first.difference(&body_edit).count(),
        1,
        "only c's entry went"
    );
    assert_eq!(
        body_edit.difference(&first).count(),
        1,
        "only c's entry came"
    );
    assert_eq!(snapshot_dir(&out), clean("clean-1"));

    std::fs::write(&c, page("C renamed", "Body two, longer.")).unwrap();
    build(root, None, &out);
    let title_edit = entry_names(root);
    // c itself, the home page that lists it, and the page of its term
    // (not the tags list page, nor the other term's page).
    assert_eq!(body_edit.difference(&title_edit).count(), 3);
    assert_eq!(snapshot_dir(&out), clean("clean-2"));

    // A new term for c changes the counts every page of the taxonomy
    // shows: c, the list page and each term's page are rendered again
    // (the home page does not show terms).
    std::fs::write(
        &c,
        page("C renamed", "Body two, longer.").replace("[gpu]", "[gpu, cpu]"),
    )
    .unwrap();
    build(root, None, &out);
    let tag_edit = entry_names(root);
    assert_eq!(title_edit.difference(&tag_edit).count(), 4);
    assert_eq!(snapshot_dir(&out), clean("clean-3"));
}
