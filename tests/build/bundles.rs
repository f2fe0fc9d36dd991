//! Page bundles: a folder holding `index.md` is a page at the folder's URL,
//! and the files beside it are published beside the page.

use crate::support::*;

const BUNDLE: &str = "content/guides/nested/smi-output";

#[test]
fn a_bundle_is_a_page_at_its_folders_url_with_its_files_beside_it() {
    let site = Fixture::new("bundles");
    let report = site.build().unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let public = site.root().join("public");
    // In nested sections, at the folder's URL, not `.../index/`.
    assert!(public.join("guides/nested/smi-output/index.html").is_file());
    assert!(!public.join("guides/nested/smi-output/index").exists());
    // Every other file, subfolders included, byte for byte; Markdown is not a file to copy.
    for file in ["smi.png", "run.log", "notes.txt", "img/layout.gif"] {
        assert_eq!(
            std::fs::read(public.join("guides/nested/smi-output").join(file)).unwrap(),
            std::fs::read(site.root().join(BUNDLE).join(file)).unwrap(),
            "{file}"
        );
    }
    assert!(!public.join("guides/nested/smi-output/index.md").exists());
    // A bundle without images, and a bundle at the top with a `slug`.
    assert!(public.join("guides/plain-text/index.html").is_file());
    assert!(public.join("top/index.html").is_file());
    assert_eq!(
        std::fs::read_to_string(public.join("top/data.csv")).unwrap(),
        "a,b\n1,2\n"
    );
    // Links to bundles, by relative path and by `@/`, reach their URLs.
    let plain = Html::parse_document(&site.read("guides/plain-text/index.html"));
    let hrefs: Vec<&str> = select(&plain, ".body a[href]")
        .iter()
        .filter_map(|a| a.value().attr("href"))
        .collect();
    assert!(
        hrefs.contains(&"/docs/guides/nested/smi-output/"),
        "{hrefs:?}"
    );
    assert!(hrefs.contains(&"/docs/top/"), "{hrefs:?}");
    // The bundle belongs to the section of the folder holding it.
    let nested = site.read("guides/nested/index.html");
    assert!(
        nested.contains("/docs/guides/nested/smi-output/"),
        "{nested}"
    );
    assert!(
        site.read("sitemap.xml")
            .contains("https://example.org/docs/guides/nested/smi-output/")
    );
}

#[test]
fn a_bundle_file_and_a_page_on_one_output_file_name_each_other() {
    let site = Fixture::new("bundles");
    std::fs::create_dir_all(site.root().join(BUNDLE).join("extra")).unwrap();
    site.write(&format!("{BUNDLE}/extra/index.html"), "<p>mine</p>");
    site.write(
        &format!("{BUNDLE}/extra.md"),
        "---\ntitle: Extra\nsignature: Extra\n---\nx\n",
    );
    let errors = errors(site.build());
    assert!(
        errors.iter().any(|e| e
            .contains("two producers write guides/nested/smi-output/extra/index.html")
            && e.contains("content/guides/nested/smi-output/extra/index.html")
            && e.contains("page content/guides/nested/smi-output/extra.md")),
        "{errors:?}"
    );
}

#[test]
fn a_bundle_file_linked_from_outside_the_site_is_an_error_and_not_copied() {
    let site = Fixture::new("bundles");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "SECRET").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        site.root().join(BUNDLE).join("secret.txt"),
    )
    .unwrap();
    let errors = errors(site.build());
    assert!(
        errors.contains(&format!(
            "{BUNDLE}/secret.txt:1:1: symlink points outside the site"
        )),
        "{errors:?}"
    );
    assert!(!site.root().join("public").exists());
}

#[test]
fn new_with_bundle_writes_a_bundle_that_builds_at_its_folders_url() {
    let site = Fixture::new("bundles");
    let out = errata_cmd(
        site.root(),
        &[
            "new",
            "NCCL error: unhandled system error",
            "--section",
            "guides",
            "--bundle",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("content/guides/nccl-error-unhandled-system-error/index.md"),
        "{stdout}"
    );
    assert!(
        stdout.contains("https://example.org/docs/guides/nccl-error-unhandled-system-error/"),
        "{stdout}"
    );
    site.write(
        "content/guides/nccl-error-unhandled-system-error/nccl.log",
        "NCCL WARN\n",
    );
    errata::build(&BuildOptions {
        drafts: true,
        ..site.options()
    })
    .unwrap();
    assert!(
        site.read("guides/nccl-error-unhandled-system-error/index.html")
            .contains("NCCL error")
    );
    assert_eq!(
        site.read("guides/nccl-error-unhandled-system-error/nccl.log"),
        "NCCL WARN\n"
    );
}

#[test]
fn images_carry_their_files_size_and_all_but_the_first_load_lazily() {
    let site = Fixture::new("bundles");
    site.build().unwrap();
    let doc = Html::parse_document(&site.read("guides/nested/smi-output/index.html"));
    let images: Vec<_> = select(&doc, "main img")
        .iter()
        .map(|img| {
            let a = |name| img.value().attr(name).map(str::to_string);
            (a("src"), a("width"), a("height"), a("loading"))
        })
        .collect();
    let s = |v: &str| Some(v.to_string());
    assert_eq!(
        images,
        [
            (s("smi.png"), s("64"), s("48"), None),
            (s("img/layout.gif"), s("24"), s("12"), s("lazy")),
            (s("./smi.png"), s("64"), s("48"), s("lazy")),
        ]
    );
    // A changed image gives a changed size, also when the page is cached.
    let png = std::fs::read(site.root().join(BUNDLE).join("smi.png")).unwrap();
    let mut wider = png.clone();
    wider[16..20].copy_from_slice(&128u32.to_be_bytes());
    std::fs::write(site.root().join(BUNDLE).join("smi.png"), wider).unwrap();
    let report = site.build().unwrap();
    assert!(
        report.cached_pages == 0,
        "the bundle's pages are rendered again"
    );
    let doc = Html::parse_document(&site.read("guides/nested/smi-output/index.html"));
    assert_eq!(
        select(&doc, "main img")[0].value().attr("width"),
        Some("128")
    );
}
