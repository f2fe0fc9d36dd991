//! The repository's own site, byte for byte: a digest of every output file
//! (path and SHA-256), pinned as a snapshot. A refactor must leave it
//! unchanged; a change to the site, theme or output is accepted on purpose
//! with `INSTA_UPDATE=always cargo test --test build default_site` (or
//! `cargo insta review`), and the new digest is committed with it.

use crate::support::*;

/// `path  sha256` for every file under `dir`, sorted by path.
fn digest(dir: &Path) -> String {
    snapshot_dir(dir)
        .into_iter()
        .filter(|(path, _)| dir.join(path).is_file())
        .map(|(path, bytes)| {
            let sum = ring::digest::digest(&ring::digest::SHA256, &bytes);
            let hex: String = sum.as_ref().iter().map(|b| format!("{b:02x}")).collect();
            format!("{}  {hex}\n", path.display())
        })
        .collect()
}

/// The default site, copied out of the repository (so no build writes
/// into it), built twice from a clean cache and then once warm.
#[test]
fn default_site_output_is_pinned_byte_for_byte() {
    let site = tempfile::tempdir().unwrap();
    copy_default_site(site.path());
    // Both builds go to one output folder: the second carries its cached
    // pages over from the first.
    let out = tempfile::tempdir().unwrap();
    let build = |clean| {
        let report = errata::build(&BuildOptions {
            root: site.path().to_path_buf(),
            output: Some(out.path().join("public")),
            clean,
            ..BuildOptions::default()
        })
        .unwrap();
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        (digest(&out.path().join("public")), report.cached_pages)
    };
    let (cold, _) = build(true);
    // The same input gives the same bytes, and pages from the cache are
    // the pages a fresh render gives.
    let (warm, cached) = build(false);
    assert!(cached > 0, "the second build took its pages from the cache");
    assert_eq!(warm, cold, "a cached build differs from a fresh one");
    insta::assert_snapshot!(cold);
}

/// The default site's `site.toml`: a link to any of Amazon's stores with a
/// tag is an Amazon affiliate link (`rel="sponsored"`, the Amazon
/// disclosure), as is a short link; other links to the same hosts are not.
#[test]
fn the_default_site_marks_links_to_every_amazon_store_as_affiliate() {
    use errata::links::{LinkKind, LinkPolicy};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let policy = LinkPolicy::new(&errata::config::Config::load(root).unwrap());
    let amazon = LinkKind::Affiliate { amazon: true };
    for url in [
        "https://www.amazon.com/dp/B0?tag=sparecables-20",
        "https://amzn.to/3AbCdEf",
        "https://www.amazon.co.uk/dp/B0?tag=mine-21",
        "https://www.amazon.de/dp/B0?th=1&tag=mine-21",
        "https://www.amazon.co.jp/dp/B0?tag=mine-22",
        "https://www.amazon.com.au/dp/B0?tag=mine-22",
        "https://www.amazon.ca/dp/B0?tag=mine-20",
        "https://www.amazon.in/dp/B0?tag=mine-21",
        "https://WWW.AMAZON.FR./dp/B0?TAG=mine-21",
    ] {
        assert_eq!(policy.classify(url, None), amazon, "{url}");
    }
    for url in [
        "https://www.amazon.co.uk/dp/B0",
        "https://aws.amazon.com/ec2/",
        "https://amazon.co.uk.example/dp?tag=x",
    ] {
        assert_eq!(policy.classify(url, None), LinkKind::External, "{url}");
    }
}
