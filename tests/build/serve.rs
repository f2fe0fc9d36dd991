use crate::support::*;

#[test]
fn serve_reloads_after_an_edit_and_tells_the_browser() {
    let site = Fixture::new("basic");
    let served = Served::start(site.root());
    let (status, body) = served.get("/guides/first-error/");
    assert_eq!(status, 200);
    assert!(body.contains("Fix FirstError") && body.contains("/__errata/livereload"));

    let (mut ws, _) = tungstenite::connect(format!(
        "ws://127.0.0.1:{}/__errata/livereload",
        served.port
    ))
    .unwrap();
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_mut() {
        s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
    }
    let path = site.root().join("content/guides/first-error.md");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace(
            "title: \"Fix FirstError\"",
            "title: \"Fix FirstError, edited\"",
        ),
    )
    .unwrap();
    let took = served.wait_until("/guides/first-error/", "the edit", |b| {
        b.contains("Fix FirstError, edited")
    });
    assert!(took < std::time::Duration::from_secs(2), "took {took:?}");
    let message = ws.read().unwrap();
    assert_eq!(message.into_text().unwrap().as_str(), "reload");
}

#[test]
fn serve_shows_build_errors_and_keeps_the_last_good_page() {
    let site = Fixture::new("basic");
    let served = Served::start(site.root());
    let path = site.root().join("content/guides/first-error.md");
    let good = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        good.replace("signature: \"FirstError: it broke\"", "signatur: \"oops\""),
    )
    .unwrap();
    served.wait_until("/guides/first-error/", "the overlay", |b| {
        b.contains("errata-overlay")
    });
    let (status, body) = served.get("/guides/first-error/");
    assert_eq!(status, 200);
    assert!(
        body.contains("content/guides/first-error.md:3:1: error: unknown key `signatur`"),
        "{body}"
    );
    assert!(
        body.contains("<h1>Fix FirstError</h1>"),
        "the last good page is still served"
    );
    std::fs::write(&path, good).unwrap();
    served.wait_until("/guides/first-error/", "the overlay to clear", |b| {
        !b.contains("errata-overlay")
    });
}

#[test]
fn serve_stays_inside_the_site_and_answers_like_a_host() {
    let site = Fixture::new("basic");
    std::fs::write(site.root().join("secret.txt"), "TOP SECRET").unwrap();
    let served = Served::start(site.root());
    for attack in [
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/..%2fsecret.txt",
        "/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
        "/guides/../../secret.txt",
        "//etc/passwd",
        "/..\\secret.txt",
    ] {
        let mut stream = TcpStream::connect(("127.0.0.1", served.port)).unwrap();
        write!(
            stream,
            "GET {attack} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
            served.port
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let status: u16 = response.split_whitespace().nth(1).unwrap().parse().unwrap();
        assert!(status == 400 || status == 404, "{attack}: {status}");
        assert!(
            !response.contains("TOP SECRET") && !response.contains("root:"),
            "{attack}"
        );
    }
    let (status, body) = served.get("/no/such/page/");
    assert_eq!(status, 404);
    assert!(body.contains("Page not found"));
    let headers = served.get("/_headers").1;
    let wasm = headers
        .lines()
        .find(|l| l.starts_with("/wasm/sizing.") && l.ends_with(".wasm"))
        .unwrap();
    let mut stream = TcpStream::connect(("127.0.0.1", served.port)).unwrap();
    write!(
        stream,
        "GET {wasm} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
        served.port
    )
    .unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let head = String::from_utf8_lossy(&response[..200]);
    assert!(
        head.starts_with("HTTP/1.1 200") && head.contains("Content-Type: application/wasm"),
        "{head}"
    );
}

#[test]
fn serve_keeps_the_site_in_memory_and_stops_cleanly_on_ctrl_c() {
    let site = Fixture::new("basic");
    let before = snapshot_dir(site.root());
    let mut served = Served::start(site.root());
    let (status, home) = served.get("/");
    assert_eq!(status, 200);
    assert!(home.contains("</html>"), "{home}");
    let status = served.interrupt();
    assert!(status.success(), "{status:?}");
    // Nothing written: no output folder, no temporary folder, no cache;
    // only the empty probe file the source snapshot reads the file
    // system's time from.
    let left: Vec<_> = std::fs::read_dir(served.tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "serve wrote a temporary folder: {left:?}");
    let mut after = snapshot_dir(site.root());
    let state: Vec<_> = after
        .keys()
        .filter(|path| path.starts_with(".errata") && path.as_os_str() != ".errata")
        .cloned()
        .collect();
    assert_eq!(state, [std::path::PathBuf::from(".errata/sources.probe")]);
    after.retain(|path, _| !path.starts_with(".errata"));
    assert_eq!(after, before, "serve changes nothing in the site");
}

#[test]
fn serve_watches_source_folders_made_after_it_started() {
    // A site with no static/ and no templates/: made while serving, each is
    // watched from then on (a file added or edited in it later rebuilds),
    // as the folders that were there at the start are.
    let site = Fixture::new("basic");
    std::fs::remove_dir_all(site.root().join("templates")).unwrap();
    assert!(!site.root().join("static").exists());
    let served = Served::start(site.root());
    assert_eq!(served.get("/guides/first-error/").0, 200);
    std::fs::create_dir_all(site.root().join("static/img")).unwrap();
    std::fs::write(site.root().join("static/img/a.txt"), "first").unwrap();
    served.wait_until("/img/a.txt", "the new static folder", |b| b == "first");
    std::fs::write(site.root().join("static/img/a.txt"), "edited").unwrap();
    served.wait_until("/img/a.txt", "an edit in it", |b| b == "edited");
    // A site template made after the start replaces the theme's.
    let theme = site.root().join("themes/default/templates/404.html");
    std::fs::create_dir_all(site.root().join("templates")).unwrap();
    let text = std::fs::read_to_string(theme).unwrap();
    std::fs::write(
        site.root().join("templates/404.html"),
        text.replace("<h1>Page not found</h1>", "<h1>SITE-404</h1>"),
    )
    .unwrap();
    served.wait_until("/no-such-page/", "the site's own 404 template", |b| {
        b.contains("SITE-404")
    });
    // site.toml replaced by a rename, as editors save it.
    let config = site.root().join("site.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let title = text
        .lines()
        .find(|l| l.starts_with("title"))
        .unwrap()
        .to_string();
    let saved = site.root().join(".site.toml.new");
    std::fs::write(&saved, text.replace(&title, "title = \"Renamed Title\"")).unwrap();
    std::fs::rename(&saved, &config).unwrap();
    served.wait_until("/", "site.toml replaced", |b| b.contains("Renamed Title"));
    // And after that, an edit in place still rebuilds.
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("Renamed Title", "Edited Title")).unwrap();
    served.wait_until("/", "site.toml edited", |b| b.contains("Edited Title"));
}
