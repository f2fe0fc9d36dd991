//! `errata match` on real logs (tests/logs/, sources in tests/logs/SOURCES.md),
//! run as a user runs it: the binary, a site, files and standard input.

#[path = "support/copy_dir.rs"]
mod copy_dir_support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

fn errata_match(root: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_errata"))
        .arg("match")
        .arg("--root")
        .arg(root)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The child may exit without reading (a usage error): ignore a broken pipe.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    child.wait_with_output().unwrap()
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)))
}

/// The match_rank site's OOM page matched, capturing `2.00 GiB`.
fn assert_matched_2_gib(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        json(out)["matches"][0]["captures"]["tried_to_allocate"],
        "2.00 GiB"
    );
}

fn sources(value: &serde_json::Value) -> Vec<String> {
    value["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["source"].as_str().unwrap().to_string())
        .collect()
}

/// Every fixture log listed in tests/logs/SOURCES.md: `(path, the page it
/// must find first)`, with `None` for the logs that must match nothing.
fn fixture_logs() -> Vec<(PathBuf, Option<String>)> {
    let base = Path::new(REPO).join("tests/logs");
    let text = std::fs::read_to_string(base.join("SOURCES.md")).unwrap();
    text.lines()
        .filter(|l| l.starts_with("| ") && l.contains(".log |"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let page =
                (!cells[2].starts_with("nothing")).then(|| format!("content/{}.md", cells[2]));
            (base.join(cells[1]), page)
        })
        .collect()
}

/// A fixture site in a temporary folder, with the default theme.
fn site(case: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir_support::copy_dir(
        &Path::new(REPO).join("tests/fixtures").join(case),
        dir.path(),
    );
    copy_dir_support::copy_dir(
        &Path::new(REPO).join("themes/default"),
        &dir.path().join("themes/default"),
    );
    dir
}

#[test]
fn every_fixture_log_finds_its_page_and_negatives_find_nothing() {
    let logs = fixture_logs();
    assert!(logs.iter().any(|(_, page)| page.is_some()));
    assert!(logs.iter().any(|(_, page)| page.is_none()));
    for (log, page) in logs {
        let output = errata_match(
            Path::new(REPO),
            &["--format", "json", log.to_str().unwrap()],
            b"",
        );
        let found = json(&output);
        match page {
            Some(page) => {
                assert_eq!(output.status.code(), Some(0), "{}", log.display());
                assert!(
                    Path::new(REPO).join(&page).is_file(),
                    "{} is for {page}, which does not exist",
                    log.display()
                );
                assert_eq!(sources(&found).first(), Some(&page), "{}", log.display());
                let first = &found["matches"][0];
                assert_eq!(first["kind"], "pattern", "{}", log.display());
                // The line number points at the line printed.
                let text = std::fs::read_to_string(&log).unwrap();
                let line = first["line"].as_u64().unwrap() as usize;
                let raw = text.lines().nth(line - 1).unwrap();
                assert!(
                    raw.contains(first["text"].as_str().unwrap()),
                    "{}: line {line} is {raw:?}, not {}",
                    log.display(),
                    first["text"]
                );
            }
            None => {
                assert_eq!(output.status.code(), Some(2), "{}", log.display());
                assert_eq!(
                    found,
                    serde_json::json!({"matches": []}),
                    "{}",
                    log.display()
                );
            }
        }
    }
}

#[test]
fn the_seed_page_reports_what_the_log_says() {
    let log = Path::new(REPO).join("tests/logs/cuda-out-of-memory/5.log");
    let output = errata_match(
        Path::new(REPO),
        &["--format", "json", log.to_str().unwrap()],
        b"",
    );
    let m = &json(&output)["matches"][0];
    assert_eq!(
        m["captures"],
        serde_json::json!({"tried_to_allocate": "132.00 MiB", "total_capacity": "79.10 GiB", "free": "98.00 MiB"})
    );
    assert_eq!(m["line"], 1);
    assert!(
        m["text"]
            .as_str()
            .unwrap()
            .starts_with("torch.OutOfMemoryError: CUDA out of memory.")
    );
    assert_eq!(
        m["url"],
        "https://www.gpugarden.com/oom/cuda-out-of-memory/"
    );
    assert_eq!(m["score"], 1.0);
    // PyTorch 2.1 wrote "capacty", and "0 bytes" free.
    let log = Path::new(REPO).join("tests/logs/cuda-out-of-memory/8.log");
    let output = errata_match(
        Path::new(REPO),
        &["--format", "json", log.to_str().unwrap()],
        b"",
    );
    assert_eq!(json(&output)["matches"][0]["captures"]["free"], "0 bytes");
}

#[test]
fn real_multi_error_logs_rank_the_root_cause_first() {
    let site = site("match_rank");
    let logs = Path::new(REPO).join("tests/logs/cuda-out-of-memory");
    for (log, expected) in [
        // The wrapper names the OOM on the same line: priority decides.
        ("7.log", vec!["oom", "engine-dead"]),
        // A shutdown warning after the OOM: log order decides.
        ("6.log", vec!["oom", "destroy-process-group"]),
        // The second traceback of a chained exception is a consequence.
        ("4.log", vec!["oom", "sync-params"]),
    ] {
        let output = errata_match(
            site.path(),
            &["--format", "json", logs.join(log).to_str().unwrap()],
            b"",
        );
        let expected: Vec<String> = expected
            .iter()
            .map(|p| format!("content/errors/{p}.md"))
            .collect();
        assert_eq!(sources(&json(&output)), expected, "{log}");
    }
    // Reversing the log's lines does not put the consequence first when it
    // has a lower priority.
    let text = std::fs::read_to_string(logs.join("7.log")).unwrap();
    let reversed: Vec<&str> = text.lines().rev().collect();
    let output = errata_match(
        site.path(),
        &["--format", "json"],
        reversed.join("\n").as_bytes(),
    );
    assert_eq!(sources(&json(&output))[0], "content/errors/oom.md");
}

#[test]
fn stdin_dash_limit_and_formats() {
    let root = site("match_rank");
    let log = std::fs::read(Path::new(REPO).join("tests/logs/cuda-out-of-memory/6.log")).unwrap();
    // No file: standard input. `-` is standard input too.
    let a = errata_match(root.path(), &["--format", "json"], &log);
    let b = errata_match(root.path(), &["--format", "json", "-"], &log);
    assert_eq!(a.status.code(), Some(0));
    assert_eq!(a.stdout, b.stdout);
    assert_eq!(sources(&json(&a)).len(), 2);
    let one = errata_match(root.path(), &["--format", "json", "--limit", "1"], &log);
    assert_eq!(sources(&json(&one)), ["content/errors/oom.md"]);

    let human = errata_match(root.path(), &[], &log);
    let human = String::from_utf8(human.stdout).unwrap();
    assert!(
        human.starts_with("1. Fix CUDA out of memory\n   https://example.org/errors/oom/\n   line 1: torch.OutOfMemoryError: CUDA out of memory."),
        "{human}"
    );
    assert!(
        human.contains("   tried_to_allocate: 74.16 GiB\n"),
        "{human}"
    );
    assert!(
        human.contains("2. Fix destroy_process_group() was not called\n"),
        "{human}"
    );

    let github = errata_match(
        root.path(),
        &[
            "--format",
            "github",
            "--base-url",
            "https://preview.example.net/x/",
        ],
        &log,
    );
    let github = String::from_utf8(github.stdout).unwrap();
    let lines: Vec<&str> = github.lines().collect();
    assert_eq!(lines.len(), 2, "{github}");
    assert!(
        lines[0].starts_with("::error title=Fix CUDA out of memory::https://preview.example.net/x/errors/oom/%0Aline 1: torch.OutOfMemoryError"),
        "{github}"
    );
    assert!(
        lines[0].ends_with("%0Atried_to_allocate: 74.16 GiB"),
        "{github}"
    );

    // Several files: line numbers restart, and each match names its log.
    let logs = Path::new(REPO).join("tests/logs/cuda-out-of-memory");
    let two = errata_match(
        root.path(),
        &[
            "--format",
            "json",
            logs.join("7.log").to_str().unwrap(),
            logs.join("6.log").to_str().unwrap(),
        ],
        b"",
    );
    let two = json(&two);
    assert_eq!(two["matches"][0]["line"], 1);
    assert!(
        two["matches"][0]["log"]
            .as_str()
            .unwrap()
            .ends_with("7.log")
    );
}

#[test]
fn exit_codes_and_hostile_input() {
    let root = site("match_rank");
    // Nothing known: 2, for every format.
    for format in ["human", "json", "github"] {
        let out = errata_match(root.path(), &["--format", format], b"all good\n");
        assert_eq!(out.status.code(), Some(2), "{format}");
    }
    // Binary and invalid UTF-8 are read lossily.
    let mut binary: Vec<u8> = (0..=255u8).cycle().take(1 << 20).collect();
    binary.extend_from_slice(b"\xff\xfe CUDA out of memory. Tried to allocate 2.00 GiB \xc3\n");
    let out = errata_match(root.path(), &["--format", "json"], &binary);
    assert_matched_2_gib(&out);
    // Unreadable input and usage errors: 1.
    let out = errata_match(root.path(), &["/no/such/log"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read /no/such/log"));
    let out = errata_match(root.path(), &["--limit", "0"], b"");
    assert_eq!(out.status.code(), Some(1));
    let out = errata_match(root.path(), &["--format", "xml"], b"");
    assert_eq!(out.status.code(), Some(1));
    let out = errata_match(&root.path().join("missing"), &[], b"");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn logs_in_utf16_or_with_a_byte_order_mark_match_as_in_utf8() {
    // Windows PowerShell's `>` writes UTF-16LE with a mark; Start-Transcript
    // writes UTF-8 with one. Each fixture log, so encoded, finds what the
    // UTF-8 file finds, at the same lines.
    let encode = |text: &str, big: bool, mark: bool| -> Vec<u8> {
        mark.then_some(0xfeff_u16)
            .into_iter()
            .chain(text.encode_utf16())
            .flat_map(|u| {
                if big {
                    u.to_be_bytes()
                } else {
                    u.to_le_bytes()
                }
            })
            .collect()
    };
    let dir = tempfile::tempdir().unwrap();
    for (log, _) in fixture_logs() {
        let expected = errata_match(
            Path::new(REPO),
            &["--format", "json", log.to_str().unwrap()],
            b"",
        );
        let text = String::from_utf8_lossy(&std::fs::read(&log).unwrap()).into_owned();
        let mut utf8_mark = b"\xef\xbb\xbf".to_vec();
        utf8_mark.extend_from_slice(text.as_bytes());
        for (name, bytes) in [
            ("utf8-mark", utf8_mark),
            ("utf16le-mark", encode(&text, false, true)),
            ("utf16be-mark", encode(&text, true, true)),
            ("utf16le", encode(&text, false, false)),
        ] {
            let file = dir.path().join(name);
            std::fs::write(&file, &bytes).unwrap();
            let out = errata_match(
                Path::new(REPO),
                &["--format", "json", file.to_str().unwrap()],
                b"",
            );
            assert_eq!(
                out.status.code(),
                expected.status.code(),
                "{} in {name}",
                log.display()
            );
            assert_eq!(json(&out), json(&expected), "{} in {name}", log.display());
            // Standard input too.
            let piped = errata_match(Path::new(REPO), &["--format", "json"], &bytes);
            assert_eq!(
                json(&piped),
                json(&expected),
                "{} in {name}, piped",
                log.display()
            );
        }
    }
}

#[test]
fn a_site_whose_theme_is_not_checked_out_still_matches() {
    // errata match renders nothing: a CI job that did not fetch the theme
    // (a git submodule) can still match logs against the pages.
    let root = site("match_rank");
    std::fs::remove_dir_all(root.path().join("themes")).unwrap();
    let out = errata_match(
        root.path(),
        &["--format", "json"],
        b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n",
    );
    assert_matched_2_gib(&out);
}

#[cfg(target_os = "linux")]
#[test]
fn matches_that_cannot_be_written_are_an_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_errata"))
        .args(["match", "--root", REPO])
        .stdin(Stdio::from(
            std::fs::File::open(Path::new(REPO).join("tests/logs/cuda-out-of-memory/1.log"))
                .unwrap(),
        ))
        .stdout(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot write the matches"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_pattern_that_does_not_compile_is_an_error_at_its_line() {
    let root = site("match_rank");
    let page = root.path().join("content/errors/oom.md");
    let text = std::fs::read_to_string(&page)
        .unwrap()
        .replace("(?P<tried_to_allocate>", "(?P<tried_to_allocate");
    std::fs::write(&page, text).unwrap();
    let out = errata_match(root.path(), &[], b"x\n");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("content/errors/oom.md:5:5: error: pattern does not compile"),
        "{stderr}"
    );
    // The build refuses it at the same place.
    let build = Command::new(env!("CARGO_BIN_EXE_errata"))
        .args(["build", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    assert_eq!(build.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&build.stderr)
            .contains("content/errors/oom.md:5:5: error: pattern does not compile"),
        "{}",
        String::from_utf8_lossy(&build.stderr)
    );
}

#[test]
fn the_build_writes_the_match_index() {
    let root = site("match_rank");
    let out = Command::new(env!("CARGO_BIN_EXE_errata"))
        .args(["build", "--base-url", "https://example.org/sub/", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(root.path().join("public/match-index.json")).unwrap();
    let index: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(index["version"], 1);
    let dead = index["pages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["source"] == "content/errors/engine-dead.md")
        .unwrap();
    assert_eq!(
        dead,
        &serde_json::json!({
            "url": "/sub/errors/engine-dead/",
            "title": "Fix vLLM MQEngineDeadError",
            "signature": "vllm.engine.multiprocessing.MQEngineDeadError: Engine loop is not running.",
            "source": "content/errors/engine-dead.md",
            "patterns": ["MQEngineDeadError: Engine loop is not running"],
            "priority": -5
        })
    );
}

/// The prefilter never drops a match: on every line of every fixture log
/// (normalised as the matcher reads it), each of the default site's
/// patterns that matches the line is among the line's candidates.
#[test]
fn the_prefilter_lets_through_every_pattern_that_matches() {
    let index = errata::match_cmd::site_index(Path::new(REPO), None).unwrap();
    let patterns: Vec<&str> = index
        .pages
        .iter()
        .flat_map(|p| p.patterns.iter().map(String::as_str))
        .collect();
    let regexes: Vec<regex::Regex> = patterns
        .iter()
        .map(|p| matcher::compile(p).unwrap())
        .collect();
    let prefilter = matcher::prefilter::Prefilter::new(&patterns, 64 << 20).unwrap();
    let (mut lines, mut hits, mut candidates) = (0, 0, Vec::new());
    for (log, _) in fixture_logs() {
        let text = String::from_utf8_lossy(&std::fs::read(&log).unwrap()).into_owned();
        for raw in text.lines() {
            let line = matcher::normalise::normalise(raw);
            prefilter.candidates(&line, &mut candidates);
            lines += 1;
            for (i, re) in regexes.iter().enumerate() {
                if re.is_match(&line) {
                    hits += 1;
                    assert!(
                        candidates.contains(&(i as u32)),
                        "{}: `{}` matches {line:?} but the prefilter dropped it",
                        log.display(),
                        patterns[i]
                    );
                }
            }
        }
    }
    assert!(lines > 200 && hits > 30, "{lines} lines, {hits} hits");
    // Nearly every pattern of the default site has a needle.
    assert!(
        prefilter.unfiltered() <= 2,
        "{} unfiltered",
        prefilter.unfiltered()
    );
}
