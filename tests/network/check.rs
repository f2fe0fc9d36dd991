//! `errata check --external` against link servers on 127.0.0.1.

use std::path::Path;
use std::time::Duration;

use crate::REPO;
use crate::copy_dir_support::copy_dir;
use crate::link_server::{CountingServer, LinkServer, Reply};

/// A one-page site in a temporary folder, with the default theme.
struct Site {
    dir: tempfile::TempDir,
}

impl Site {
    /// `external` goes under `[check.external]`; `body` is the page's Markdown.
    fn new(external: &str, front: &str, body: &str) -> Site {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(
            &Path::new(REPO).join("themes/default"),
            &dir.path().join("themes/default"),
        );
        // Quick defaults for loopback, unless the case sets them.
        let defaults: String = [
            "timeout_secs = 2",
            "retries = 0",
            "backoff_ms = 50",
            "per_host_interval_ms = 0",
        ]
        .iter()
        .filter(|line| {
            let key = line.split(' ').next().unwrap_or_default();
            !external.lines().any(|l| l.starts_with(key))
        })
        .map(|line| format!("{line}\n"))
        .collect();
        std::fs::write(
            dir.path().join("site.toml"),
            format!(
                "title = \"Net\"\nbase_url = \"https://example.org/\"\n\n[check.external]\n{defaults}{external}\n"
            ),
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("content")).unwrap();
        std::fs::write(
            dir.path().join("content/links.md"),
            format!(
                "---\ntitle: Links\ndescription: \"Outbound links.\"\nsignature: LinkError\n{front}---\n{body}"
            ),
        )
        .unwrap();
        Site { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Runs `errata check --external` with `args`; exit code and stdout+stderr.
    fn check(&self, args: &[&str]) -> (i32, String) {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_errata"))
            .args(["check", "--external", "--root"])
            .arg(self.root())
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8(out.stdout).unwrap() + &String::from_utf8_lossy(&out.stderr),
        )
    }

    /// The JSON report's problems as `line:col severity code: message`.
    fn problems(&self, args: &[&str]) -> (i32, Vec<String>, String) {
        let mut all = vec!["--format", "json"];
        all.extend_from_slice(args);
        let (code, out) = self.check(&all);
        let json: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        let problems = json["problems"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["file"] == "content/links.md")
            .map(|p| {
                format!(
                    "{}:{} {} {}: {}",
                    p["line"],
                    p["column"],
                    p["severity"].as_str().unwrap(),
                    p["code"].as_str().unwrap_or("-"),
                    p["message"].as_str().unwrap()
                )
            })
            .collect();
        (code, problems, out)
    }
}

/// A server where every path answers 200.
fn ok_server() -> LinkServer {
    LinkServer::start(|_, _, _| Reply::status("200 OK"))
}

#[test]
fn external_checks_only_links_a_reader_can_follow() {
    let server = ok_server();
    let base = format!("http://127.0.0.1:{}", server.port);
    let front = format!("sponsored:\n  - {{ label: Shop, url: \"{base}/sponsored\" }}\n");
    let body = format!(
        "[link]({base}/link) and ![image]({base}/image.png) and <{base}/autolink>\n\n\
         ```console\n$ curl -X POST {base}/admin/delete-all?confirm=yes\n```\n\n\
         Inline `{base}/inline-code` and bare {base}/bare-text here.\n\n    {base}/indented-code\n\n\
         <p><a href=\"{base}/raw-html?a=1&amp;b=2\">raw</a> <!-- <a href=\"{base}/comment\"> --></p>\n"
    );
    let site = Site::new("", &front, &body);
    let (code, problems, out) = site.problems(&["--include-private"]);
    assert_eq!(code, 0, "{out}");
    assert!(problems.is_empty(), "{problems:?}");
    let mut paths: Vec<String> = server.all().into_iter().map(|s| s.path).collect();
    paths.sort();
    paths.dedup();
    assert_eq!(
        paths,
        [
            "/autolink",
            "/image.png",
            "/link",
            "/raw-html?a=1&b=2",
            "/sponsored"
        ]
    );
}

#[test]
fn non_public_addresses_are_skipped_and_reported_where_written() {
    let server = ok_server();
    let port = server.port;
    let body = format!(
        "- [loopback](http://127.0.0.1:{port}/direct)\n\
         - [a name that resolves to loopback](http://localhost:{port}/by-name)\n\
         - [private](http://10.0.0.1/admin)\n\
         - [CGNAT](http://100.64.1.1/)\n\
         - [link-local](http://169.254.169.254/latest/meta-data/)\n\
         - [unspecified](http://0.0.0.0:{port}/)\n\
         - [IPv6 loopback](http://[::1]:{port}/)\n\
         - [IPv4-mapped IPv6](http://[::ffff:127.0.0.1]:{port}/mapped)\n\
         - [unique local](http://[fd00::1]/)\n"
    );
    let site = Site::new("", "", &body);
    let (code, problems, out) = site.problems(&[]);
    // Notes never fail a check, not even with --warnings-as-errors.
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        problems,
        [
            format!("6:14 note external-skipped: skipped http://127.0.0.1:{port}/direct: 127.0.0.1 is a loopback address"),
            format!("7:38 note external-skipped: skipped http://localhost:{port}/by-name: localhost resolves to {}, a loopback address", problems_ip(&problems[1])),
            "8:13 note external-skipped: skipped http://10.0.0.1/admin: 10.0.0.1 is a private address".to_string(),
            "9:11 note external-skipped: skipped http://100.64.1.1/: 100.64.1.1 is a shared (carrier-grade NAT) address".to_string(),
            "10:16 note external-skipped: skipped http://169.254.169.254/latest/meta-data/: 169.254.169.254 is a link-local address".to_string(),
            format!("11:17 note external-skipped: skipped http://0.0.0.0:{port}/: 0.0.0.0 is an unspecified address"),
            format!("12:19 note external-skipped: skipped http://[::1]:{port}/: ::1 is a loopback address"),
            format!("13:22 note external-skipped: skipped http://[::ffff:7f00:1]:{port}/mapped: ::ffff:127.0.0.1 is a loopback address"),
            "14:18 note external-skipped: skipped http://[fd00::1]/: fd00::1 is a private (unique local) address".to_string(),
        ]
    );
    assert!(server.all().is_empty(), "{:?}", server.all());
    assert_eq!(site.check(&["--warnings-as-errors"]).0, 0);

    // With --include-private, the loopback ones are requested.
    let site = Site::new(
        "",
        "",
        &format!(
            "- [loopback](http://127.0.0.1:{port}/direct)\n- [name](http://localhost:{port}/by-name)\n"
        ),
    );
    let (code, problems, out) = site.problems(&["--include-private"]);
    assert_eq!((code, problems.len()), (0, 0), "{out}");
    assert_eq!(server.requests("/direct").len(), 1);
    assert_eq!(server.requests("/by-name").len(), 1);
}

/// The address `localhost` resolved to, as the message names it.
/// The address a report says a name resolved to, which must really be a
/// loopback address (so the report cannot have come from the name alone).
fn problems_ip(line: &str) -> String {
    let ip = line
        .split("resolves to ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .unwrap_or_default()
        .to_string();
    let parsed: std::net::IpAddr = ip.parse().unwrap_or_else(|e| panic!("{ip:?}: {e}"));
    assert!(parsed.is_loopback(), "{ip} is not loopback");
    ip
}

#[test]
fn every_redirect_hop_is_checked_after_resolution_and_targets_are_redacted() {
    let holder = std::sync::Arc::new(std::sync::Mutex::new(0u16));
    let port_for_route = std::sync::Arc::clone(&holder);
    let server = LinkServer::start(move |_, path, _| {
        let port = *port_for_route.lock().unwrap();
        match path.split('?').next().unwrap_or_default() {
            "/to-localhost" => {
                Reply::redirect("302 Found", &format!("http://localhost:{port}/ok?hop=2"))
            }
            "/to-private" => {
                Reply::redirect("301 Moved Permanently", "http://10.1.2.3/x?secret=hunter2")
            }
            "/to-public" => Reply::redirect("302 Found", "/ok?session=s3cr3t&user=me#frag"),
            "/ok" => Reply::status("200 OK"),
            _ => Reply::status("404 Not Found"),
        }
    });
    *holder.lock().unwrap() = server.port;
    let base = format!("http://127.0.0.1:{}", server.port);
    let body = format!(
        "- [a](http://user:pa55word@127.0.0.1:{}/missing)\n- [b]({base}/to-localhost)\n- [c]({base}/to-private)\n- [d]({base}/to-public)\n",
        server.port
    );
    // 127.0.0.1 is allowed by name; what it redirects to is checked on its own.
    let site = Site::new("allow_private_hosts = [\"127.0.0.1\"]", "", &body);
    let (code, problems, out) = site.problems(&[]);
    assert_eq!(code, 2, "{out}");
    assert_eq!(
        problems,
        [
            format!(
                "6:7 error external-broken: broken link http://***@127.0.0.1:{}/missing: HTTP 404 Not Found",
                server.port
            ),
            format!(
                "7:7 note external-skipped: skipped {base}/to-localhost: it redirects to http://localhost:{}/ok?…, and localhost resolves to {}, a loopback address",
                server.port,
                problems_ip(&problems[1])
            ),
            format!(
                "8:7 note external-skipped: skipped {base}/to-private: it redirects to http://10.1.2.3/x?…, and 10.1.2.3 is a private address"
            ),
            format!("9:7 warning external-redirected: {base}/to-public redirects to {base}/ok?…"),
        ]
    );
    for secret in ["pa55word", "hunter2", "s3cr3t", "hop=2", "user=me"] {
        assert!(!out.contains(secret), "{secret} printed: {out}");
    }
    // The private hops were never requested; the public one was.
    assert_eq!(server.requests("/ok?hop=2").len(), 0);
    assert_eq!(server.requests("/ok?session=s3cr3t&user=me").len(), 1);
    // Credentials in a link are neither printed nor sent.
    let missing = server.requests("/missing");
    assert!(
        missing.iter().all(|s| s
            .headers
            .iter()
            .all(|h| !h.to_ascii_lowercase().starts_with("authorization"))),
        "{missing:?}"
    );
    // The human format redacts the same way.
    let (_, human) = site.check(&[]);
    assert!(
        human.contains("redirects to") && !human.contains("s3cr3t"),
        "{human}"
    );
}

#[test]
fn requests_to_one_host_are_spaced_by_the_interval() {
    let server = ok_server();
    let body: String = (0..5)
        .map(|i| format!("- [{i}](http://127.0.0.1:{}/spaced/{i})\n", server.port))
        .collect();
    // Nothing else holds the requests back: only the interval spaces them.
    let site = Site::new(
        "per_host_interval_ms = 250\nper_host_concurrency = 5\nmax_concurrency = 5",
        "",
        &body,
    );
    let (code, problems, out) = site.problems(&["--include-private"]);
    assert_eq!((code, problems.len()), (0, 0), "{out}");
    let mut starts: Vec<_> = server.all().into_iter().map(|s| s.at).collect();
    starts.sort();
    assert_eq!(starts.len(), 5, "{starts:?}");
    for pair in starts.windows(2) {
        let gap = pair[1] - pair[0];
        // A little slack for the time between the client's start and the
        // server's accept.
        assert!(gap >= Duration::from_millis(200), "requests {gap:?} apart");
    }
}

#[test]
fn open_sockets_never_exceed_the_global_cap() {
    let server = CountingServer::start(Duration::from_millis(150));
    let body: String = (0..40)
        .map(|i| format!("- [{i}](http://127.0.0.1:{}/page/{i})\n", server.port))
        .collect();
    // The per-host limit is out of the way: only the global cap holds requests back.
    let site = Site::new("max_concurrency = 4\nper_host_concurrency = 100", "", &body);
    let started = std::time::Instant::now();
    let (code, problems, out) = site.problems(&["--include-private"]);
    let took = started.elapsed();
    assert_eq!((code, problems.len()), (0, 0), "{out}");
    let (peak, total) = server.peak_and_total();
    println!("40 links, cap 4: peak {peak} open sockets, {total} connections, {took:?}");
    assert_eq!(total, 40);
    assert_eq!(peak, 4, "the cap is reached and never exceeded");
    // 40 requests held 150 ms each, 4 at a time: at least 10 rounds.
    assert!(took >= Duration::from_millis(1500), "{took:?}");
}

#[test]
fn bot_blocking_hosts_could_not_be_verified_rather_than_broken() {
    let server = LinkServer::start(|_, path, _| match path {
        "/dp/B0BG9" => Reply::status("503 Service Unavailable"),
        "/forbidden" => Reply::status("403 Forbidden"),
        _ => Reply::status("503 Service Unavailable"),
    });
    let port = server.port;
    let front =
        format!("sponsored:\n  - {{ label: Card, url: \"http://127.0.0.1:{port}/dp/B0BG9\" }}\n");
    let body = format!(
        "[gone](http://127.0.0.1:{port}/forbidden) and [other host](http://localhost:{port}/down)\n"
    );
    let site = Site::new(
        "include_private = true\nunverifiable_hosts = [\"127.0.0.1\"]\nretries = 1",
        &front,
        &body,
    );
    let (code, problems, out) = site.problems(&[]);
    assert_eq!(code, 2, "{out}");
    assert_eq!(
        problems,
        [
            format!(
                "6:25 note external-unverifiable: could not verify http://127.0.0.1:{port}/dp/B0BG9: HTTP 503 Service Unavailable"
            ),
            format!(
                "8:8 note external-unverifiable: could not verify http://127.0.0.1:{port}/forbidden: HTTP 403 Forbidden"
            ),
            format!(
                "8:59 error external-broken: broken link http://localhost:{port}/down: HTTP 503 Service Unavailable"
            ),
        ]
    );
    // HEAD, then GET once; never the retries a rate limit gets.
    let methods: Vec<String> = server
        .requests("/dp/B0BG9")
        .into_iter()
        .map(|s| s.method)
        .collect();
    assert_eq!(methods, ["HEAD", "GET"]);
    // A host not listed is retried and then reported broken.
    assert_eq!(server.requests("/down").len(), 2);

    // JUnit: could-not-verify is a skipped test case, broken is a failure.
    let (_, junit) = site.check(&["--format", "junit"]);
    let doc = roxmltree::Document::parse(&junit).expect("JUnit XML parses");
    let count = |tag: &str| doc.descendants().filter(|n| n.has_tag_name(tag)).count();
    assert_eq!((count("skipped"), count("failure")), (2, 1), "{junit}");
    let skipped = doc
        .descendants()
        .find(|n| n.has_tag_name("skipped"))
        .unwrap();
    assert_eq!(skipped.attribute("type"), Some("external-unverifiable"));
    assert!(
        skipped
            .attribute("message")
            .unwrap()
            .starts_with("could not verify")
    );

    // Only the unverifiable ones left: the check passes, warnings-as-errors too.
    let site = Site::new(
        "include_private = true\nunverifiable_hosts = [\"127.0.0.1\"]",
        &front,
        "No other links.\n",
    );
    assert_eq!(site.check(&["--warnings-as-errors"]).0, 0);
}
