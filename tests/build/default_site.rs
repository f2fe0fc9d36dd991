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
