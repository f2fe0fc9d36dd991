use crate::support::*;

#[test]
fn check_finds_every_seeded_problem_and_pins_the_json() {
    let site = Fixture::new("check");
    let (code, json) = check_cmd(site.root(), &["--format", "json"]);
    assert_eq!(code, 2);
    insta::assert_snapshot!(json);
    assert!(
        !site.root().join("public").exists(),
        "check never writes public/"
    );
}

#[test]
fn check_github_format_is_one_annotation_per_problem() {
    let site = Fixture::new("check");
    let (code, out) = check_cmd(site.root(), &["--format", "github"]);
    assert_eq!(code, 2);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "::warning file=content/docs/problems.md,line=1,col=1::no description: search engines will make up a snippet%0Aadd `description:` with one sentence of under 160 characters",
            "::warning file=content/docs/problems.md,line=4,col=1::none of the page's `patterns` matches its own `signature`%0Aa log line with this error would not find this page",
            "::error file=content/docs/problems.md,line=6,col=5::pattern does not compile: error: unclosed group",
            "::error file=content/docs/problems.md,line=8,col=1::duplicate id `error-signature` on /docs/problems/ (rendering template page.html)",
            "::error file=content/docs/problems.md,line=10,col=1::link to missing page `@/docs/nope.md` (no content/docs/nope.md)",
            "::error file=content/docs/problems.md,line=10,col=36::link to missing anchor `#nowhere` on /docs/good/%0Alink to one of the page's headings; each heading's id is its slug",
        ]
    );
}

#[test]
fn a_broken_site_toml_is_reported_in_the_format_asked_for() {
    // A configuration error is exit code 1, and still an annotation, a JSON
    // problem or a JUnit failure where CI reads them (it was plain text on
    // standard error whatever the format).
    let site = Fixture::new("check");
    let config = site.root().join("site.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{text}\ndescripton = \"typo\"\n")).unwrap();
    let line = text.lines().count() + 2;
    let (code, out) = check_cmd(site.root(), &["--format", "github"]);
    assert_eq!(code, 1);
    assert!(
        out.starts_with(&format!(
            "::error file=site.toml,line={line},col=1::unknown key `descripton`"
        )),
        "{out}"
    );
    let (code, out) = check_cmd(site.root(), &["--format", "json"]);
    assert_eq!(code, 1);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["errors"], 1);
    assert_eq!(json["problems"][0]["file"], "site.toml");
    let (code, out) = check_cmd(site.root(), &["--format", "junit"]);
    assert_eq!(code, 1);
    assert!(
        out.contains("failures=\"1\"") && out.contains("descripton"),
        "{out}"
    );
}

#[test]
fn check_junit_is_valid_xml_and_exit_codes_follow_severity() {
    let site = Fixture::new("check");
    let (_, junit) = check_cmd(site.root(), &["--format", "junit"]);
    let doc = roxmltree::Document::parse(&junit).expect("JUnit XML parses");
    assert_eq!(
        doc.descendants()
            .filter(|n| n.has_tag_name("failure"))
            .count(),
        4
    );

    // A clean site passes, even with warnings counted as errors (the
    // default site's own check is in `seed.rs`).
    std::fs::remove_file(site.root().join("content/docs/problems.md")).unwrap();
    assert_eq!(check_cmd(site.root(), &["--warnings-as-errors"]).0, 0);
    // Warnings alone pass, unless they count as errors.
    let good = site.root().join("content/docs/good.md");
    let text = std::fs::read_to_string(&good).unwrap();
    std::fs::write(
        &good,
        text.replace("description: \"A page with nothing wrong.\"\n", ""),
    )
    .unwrap();
    assert_eq!(check_cmd(site.root(), &[]).0, 0);
    assert_eq!(check_cmd(site.root(), &["--warnings-as-errors"]).0, 2);
    // A usage error is exit code 1 too (not clap's 2, which means "problems found").
    assert_eq!(check_cmd(site.root(), &["--no-such-flag"]).0, 1);
    assert_eq!(check_cmd(site.root(), &["--format", "yaml"]).0, 1);
    // A broken site.toml is a configuration error: exit code 1.
    std::fs::write(site.root().join("site.toml"), "title = 1\n").unwrap();
    assert_eq!(check_cmd(site.root(), &[]).0, 1);
}

#[test]
fn check_finds_broken_links_in_templates_at_their_line() {
    let site = Fixture::new("check");
    std::fs::remove_file(site.root().join("content/docs/problems.md")).unwrap();
    std::fs::create_dir_all(site.root().join("templates")).unwrap();
    site.write(
        "templates/section.html",
        "{% extends \"base.html\" %}\n{% block content %}\n<h1>{{ section.title }}</h1>\n<a href=\"{{ url(path='changelog/') }}\">Changelog</a>\n<a href=\"#nowhere\">top</a>\n<img src=\"{{ url(path='img/missing.png') }}\" alt=\"\">\n{% endblock content %}\n",
    );
    let (code, out) = check_cmd(site.root(), &["--format", "github"]);
    assert_eq!(code, 2, "{out}");
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("templates/section.html"))
        .collect();
    assert_eq!(
        lines,
        [
            "::error file=templates/section.html,line=4,col=23::link to missing `/changelog/` (no changelog/index.html in the built site) (seen on /docs/)",
            "::error file=templates/section.html,line=5,col=10::link to missing anchor `#nowhere` on /docs/ (seen on /docs/)",
            "::error file=templates/section.html,line=6,col=24::link to missing `/img/missing.png` (no img/missing.png in the built site) (seen on /docs/)",
        ],
        "{out}"
    );
}

#[test]
fn check_changed_since_reports_changed_pages_and_their_linkers() {
    let site = Fixture::new("check");
    site.write("content/docs/other.md", "---\ntitle: Other\ndescription: \"Unrelated.\"\nsignature: OtherError\n---\n[gone](@/docs/gone.md)\n");
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .arg("-C")
            .arg(site.root())
            .args(["-c", "user.email=ci@example.org", "-c", "user.name=CI"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            status.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&status.stderr)
        );
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "fixture"]);
    let problems = |out: &str| -> BTreeSet<(String, String)> {
        let json: serde_json::Value = serde_json::from_str(out).unwrap();
        json["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["file"].as_str().unwrap().to_string(),
                    p["severity"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let warned = |out: &str| -> BTreeSet<String> {
        problems(out)
            .into_iter()
            .filter(|(_, severity)| severity == "warning")
            .map(|(file, _)| file)
            .collect()
    };
    // Nothing changed: no warnings, but errors anywhere are still reported
    // (they fail the build, and check never passes what build rejects).
    let (code, out) = check_cmd(
        site.root(),
        &["--format", "json", "--changed-since", "HEAD"],
    );
    assert_eq!((code, warned(&out)), (2, BTreeSet::new()), "{out}");
    assert!(
        problems(&out).contains(&("content/docs/other.md".to_string(), "error".to_string())),
        "{out}"
    );
    // good.md changed: its warnings, and those of problems.md, which links to it; not other.md's.
    let good = site.root().join("content/docs/good.md");
    let text = std::fs::read_to_string(&good).unwrap();
    std::fs::write(
        &good,
        text.replace("description: \"A page with nothing wrong.\"\n", ""),
    )
    .unwrap();
    let (code, out) = check_cmd(
        site.root(),
        &["--format", "json", "--changed-since", "HEAD"],
    );
    assert_eq!(code, 2);
    let warned_files = warned(&out);
    assert!(warned_files.contains("content/docs/good.md"), "{out}");
    assert!(
        warned_files.is_subset(&BTreeSet::from([
            "content/docs/good.md".to_string(),
            "content/docs/problems.md".to_string()
        ])),
        "{out}"
    );
    // Everything is checked without the flag.
    assert!(
        problems(&check_cmd(site.root(), &["--format", "json"]).1)
            .iter()
            .any(|(file, _)| file == "content/docs/other.md")
    );
    // A bad revision is a usage error; so is an option in its place, which
    // never reaches git.
    assert_eq!(
        check_cmd(site.root(), &["--changed-since", "no-such-rev"]).0,
        1
    );
    // git would take the value as its own option and write the file.
    let target = site.root().join("written-by-git");
    let option = format!("--changed-since=--output={}", target.display());
    let (code, out) = check_cmd(site.root(), &[&option]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("a revision never starts with `-`"), "{out}");
    assert!(!target.exists());
}

#[test]
fn check_external_follows_the_rules_of_the_road() {
    let server = checker_target();
    let site = Fixture::new("check");
    std::fs::remove_file(site.root().join("content/docs/problems.md")).unwrap();
    let toml = std::fs::read_to_string(site.root().join("site.toml")).unwrap();
    site.write(
        "site.toml",
        &format!("{toml}\n[check.external]\ntimeout_secs = 1\nretries = 1\nbackoff_ms = 100\nper_host_interval_ms = 0\nper_host_concurrency = 8\nexclude = ['/excluded']\n"),
    );
    let base = format!("http://127.0.0.1:{}", server.port);
    let body: String = [
        "ok", "missing", "moved", "nohead", "busy", "slow", "excluded",
    ]
    .iter()
    .map(|p| format!("- [{p}]({base}/{p})\n"))
    .collect();
    site.write(
        "content/docs/links.md",
        &format!(
            "---\ntitle: Links\ndescription: \"Outbound links.\"\nsignature: LinkError\n---\n{body}"
        ),
    );

    let (code, out) = check_cmd(
        site.root(),
        &["--external", "--include-private", "--format", "json"],
    );
    assert_eq!(code, 2, "{out}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let problems: Vec<String> = json["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "{}:{}:{} {}: {}",
                p["file"].as_str().unwrap(),
                p["line"],
                p["column"],
                p["severity"].as_str().unwrap(),
                p["message"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        problems,
        [
            format!(
                "content/docs/links.md:7:13 error: broken link {base}/missing: HTTP 404 Not Found"
            ),
            format!("content/docs/links.md:8:11 warning: {base}/moved redirects to {base}/ok"),
            format!(
                "content/docs/links.md:11:10 error: broken link {base}/slow: timed out after 1 s"
            ),
        ]
    );
    // HEAD refused: the checker asked again with GET.
    let nohead: Vec<String> = server
        .requests("/nohead")
        .into_iter()
        .map(|seen| seen.method)
        .collect();
    assert_eq!(nohead, ["HEAD", "GET"]);
    // 429 with Retry-After: 1 waited a second before asking again.
    let busy = server.requests("/busy");
    assert_eq!(busy.len(), 2);
    assert!(
        busy[1].at - busy[0].at >= std::time::Duration::from_millis(950),
        "{:?}",
        busy[1].at - busy[0].at
    );
    // The slow link was retried once, after the backoff.
    assert_eq!(server.requests("/slow").len(), 2);
    assert!(server.requests("/excluded").is_empty());

    // Only working links are cached; the next run asks again about the rest
    // only. They worked with private addresses allowed: that policy has a
    // cache file of its own.
    assert!(!site.root().join(".errata/linkcache.json").exists());
    let private_cache = std::fs::read_dir(site.root().join(".errata"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("linkcache-private-")
        })
        .expect("the link cache of --include-private");
    let cache: BTreeMap<String, u64> =
        serde_json::from_str(&std::fs::read_to_string(private_cache).unwrap()).unwrap();
    let cached: Vec<&str> = cache.keys().map(|k| k.trim_start_matches(&base)).collect();
    assert_eq!(cached, ["/busy", "/nohead", "/ok"]);
    let before = server.requests("/nohead").len();
    let (code, _) = check_cmd(
        site.root(),
        &["--external", "--include-private", "--format", "json"],
    );
    assert_eq!(code, 2);
    assert_eq!(
        server.requests("/nohead").len(),
        before,
        "a cached link is not requested again"
    );
    assert_eq!(
        server.requests("/missing").len(),
        2,
        "a failure is never cached"
    );
    // Without --include-private, the links that worked through 127.0.0.1
    // are not taken from that cache: each is skipped, and says so.
    let requests = server.requests("/ok").len();
    let (code, out) = check_cmd(site.root(), &["--external", "--format", "json"]);
    assert_eq!(code, 0, "{out}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let skipped: Vec<&str> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["code"] == "external-skipped")
        .map(|p| p["message"].as_str().unwrap())
        .collect();
    assert!(
        skipped.iter().any(|m| m.contains(&format!("{base}/ok"))),
        "{skipped:#?}"
    );
    assert_eq!(server.requests("/ok").len(), requests, "nothing requested");
}

#[test]
fn check_reports_what_a_build_warns_about_without_highlighting() {
    let site = Fixture::new("basic");
    let (code, out) = check_cmd(site.root(), &["--format", "github"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.lines().any(|l| l.starts_with("::warning file=content/guides/first-error.md,line=18,col=1::unknown code block language `klingon`")),
        "{out}"
    );
    // Known languages are not reported, though check does not highlight them.
    assert!(
        !out.contains("`console`") && !out.contains("`powershell`"),
        "{out}"
    );
}

/// `check` runs the build's stages into a sink that keeps ids and links in
/// memory: it writes nothing, not in the site (no `public/`, no cache in
/// `.errata/`) and not in a scratch folder.
#[test]
fn check_writes_nothing_anywhere() {
    let site = Fixture::new("check");
    let before = snapshot_dir(site.root());
    let tmp = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_errata"))
        .args(["check", "--root"])
        .arg(site.root())
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "the fixture has problems");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("duplicate id `error-signature`"),
        "the check ran"
    );
    assert_eq!(snapshot_dir(site.root()), before, "the site is unchanged");
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing in the temporary folder: {left:?}");
}
