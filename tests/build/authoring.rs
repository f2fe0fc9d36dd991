use crate::support::*;

#[test]
fn new_scaffolds_a_page_that_builds_cleanly() {
    let site = Fixture::new("basic");
    let message = r#"RuntimeError: CUDA error: an illegal memory access was encountered (at "kernel.cu":42) \ 100%"#;
    let out = errata_cmd(
        site.root(),
        &[
            "new",
            message,
            "--section",
            "guides",
            "--tools",
            "vllm,llama.cpp",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let rel = "content/guides/runtimeerror-cuda-error-an-illegal-memory-access-was.md";
    assert!(stdout.contains(rel), "{stdout}");
    assert!(
        stdout.contains(
            "https://example.org/guides/runtimeerror-cuda-error-an-illegal-memory-access-was/"
        ),
        "{stdout}"
    );
    let text = std::fs::read_to_string(site.root().join(rel)).unwrap();
    assert!(
        text.contains("### vllm") && text.contains("### llama.cpp"),
        "{text}"
    );

    // As it is (a draft), it builds without a warning, and the signature survives quoting.
    let report = errata::build(&BuildOptions {
        drafts: true,
        ..site.options()
    })
    .unwrap();
    assert!(
        report.warnings.iter().all(|w| !w.path.ends_with("was.md")),
        "{:?}",
        report.warnings
    );
    let html = site.read("guides/runtimeerror-cuda-error-an-illegal-memory-access-was/index.html");
    let doc = Html::parse_document(&html);
    let signature: String = select(&doc, ".signature code")[0].text().collect();
    assert_eq!(signature, message);
    // The pattern it wrote matches the message it came from.
    let front: serde_json::Value = serde_json::to_value(
        yaml_serde::from_str::<yaml_serde::Value>(text.split("---").nth(1).unwrap()).unwrap(),
    )
    .unwrap();
    let pattern = front["patterns"][0].as_str().unwrap();
    let unescaped: String = {
        let mut out = String::new();
        let mut chars = pattern.chars();
        while let Some(c) = chars.next() {
            out.push(if c == '\\' { chars.next().unwrap() } else { c });
        }
        out
    };
    assert_eq!(unescaped, message);
}

#[test]
fn new_never_overwrites_and_never_leaves_content() {
    let site = Fixture::new("basic");
    let first = errata_cmd(
        site.root(),
        &["new", "Fix FirstError", "--section", "guides"],
    );
    assert!(first.status.success());
    let path = site.root().join("content/guides/fix-firsterror.md");
    std::fs::write(&path, "mine").unwrap();
    let again = errata_cmd(
        site.root(),
        &["new", "Fix FirstError", "--section", "guides"],
    );
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("never overwrites"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "mine");
    for section in ["../outside", "/tmp/x", "guides/../../x", "a/./b"] {
        let out = errata_cmd(site.root(), &["new", "Escape", "--section", section]);
        assert_eq!(out.status.code(), Some(1), "{section}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("refusing section"),
            "{section}"
        );
    }
    assert!(
        !site.root().join("outside").exists() && !site.root().parent().unwrap().join("x").exists()
    );
}
