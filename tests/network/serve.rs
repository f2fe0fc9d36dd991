//! `errata serve` under hostile and heavy loopback traffic.

use std::path::Path;
use std::time::Duration;

use crate::REPO;
use crate::copy_dir_support::copy_dir;
use crate::serve_process::{ServeProcess, exchange, get};

/// The `basic` fixture site with the default theme, in a temporary folder.
fn basic_site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&Path::new(REPO).join("tests/fixtures/basic"), dir.path());
    copy_dir(
        &Path::new(REPO).join("themes/default"),
        &dir.path().join("themes/default"),
    );
    copy_dir(&Path::new(REPO).join("data"), &dir.path().join("data"));
    dir
}

/// A WebSocket handshake for the live-reload path.
fn handshake(host: &str, origin: Option<&str>) -> Vec<u8> {
    let origin = origin
        .map(|o| format!("Origin: {o}\r\n"))
        .unwrap_or_default();
    format!(
        "GET /__errata/livereload HTTP/1.1\r\nHost: {host}\r\n{origin}Upgrade: websocket\r\n\
         Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    )
    .into_bytes()
}

/// Status of the first response on a connection, reading only its head
/// (a WebSocket stays open after its 101).
fn head_status(port: u16, request: &[u8]) -> u16 {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    std::io::Write::write_all(&mut stream, request).unwrap();
    let mut head = [0u8; 12];
    std::io::Read::read_exact(&mut stream, &mut head).unwrap();
    String::from_utf8_lossy(&head[9..12]).parse().unwrap()
}

#[test]
fn serve_answers_only_local_hosts_and_origins() {
    let site = basic_site();
    let served = ServeProcess::start(site.path());
    let port = served.port;
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("LOCALHOST:{port}"),
        format!("[::1]:{port}"),
        "127.0.0.1".to_string(),
    ] {
        assert_eq!(exchange(port, &get("/", &host, "")).0, Some(200), "{host}");
    }
    // A folder named without its slash is redirected to it, as static
    // hosts do (relative links resolve from there), on this server only.
    let host = format!("127.0.0.1:{port}");
    for (path, location) in [
        ("/guides", "/guides/"),
        ("/guides?x=1", "/guides/?x=1"),
        ("//guides", "/guides/"),
    ] {
        let (status, response) = exchange(port, &get(path, &host, ""));
        assert_eq!(status, Some(301), "{path}: {response}");
        assert!(
            response
                .to_ascii_lowercase()
                .contains(&format!("location: {location}\r\n")),
            "{path}: {response}"
        );
    }
    assert_eq!(exchange(port, &get("/guides/", &host, "")).0, Some(200));
    // DNS rebinding: a page on evil.example whose name now points at 127.0.0.1.
    for host in [
        "evil.example".to_string(),
        format!("evil.example:{port}"),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
        format!("localhost.evil.example:{port}"),
        format!("127.0.0.1.nip.io:{port}"),
    ] {
        let (status, body) = exchange(port, &get("/", &host, ""));
        assert_eq!(status, Some(403), "{host}: {body}");
        assert!(!body.contains("<html"), "{host}");
    }
    // No Host at all, and an absolute URI naming another host.
    assert_eq!(exchange(port, b"GET / HTTP/1.0\r\n\r\n").0, Some(403));
    // Two Host headers, the local one first: a proxy in between may go by
    // the other.
    let two = format!(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: evil.example\r\nConnection: close\r\n\r\n"
    );
    assert_eq!(exchange(port, two.as_bytes()).0, Some(403));
    assert_eq!(
        exchange(port, &get("http://evil.example/", &served.host(), "")).0,
        Some(403)
    );
    // The WebSocket: a foreign Origin is refused; the page's own, or none
    // (not a browser), is let in.
    let host = served.host();
    assert_eq!(
        head_status(port, &handshake(&host, Some("http://evil.example"))),
        403
    );
    assert_eq!(head_status(port, &handshake(&host, Some("null"))), 403);
    // No port in an origin means port 80: another server's page.
    assert_eq!(
        head_status(port, &handshake(&host, Some("http://localhost"))),
        403
    );
    assert_eq!(
        head_status(port, &handshake(&host, Some("http://127.0.0.1"))),
        403
    );
    // Two Origin headers, the good one first: refused.
    let good = format!("http://localhost:{port}");
    let two = String::from_utf8(handshake(&host, Some(&good)))
        .unwrap()
        .replacen(
            &format!("Origin: {good}\r\n"),
            &format!("Origin: {good}\r\nOrigin: http://evil.example\r\n"),
            1,
        );
    assert_eq!(head_status(port, two.as_bytes()), 403);
    assert_eq!(
        head_status(
            port,
            &handshake(&host, Some(&format!("http://evil.example:{port}")))
        ),
        403
    );
    assert_eq!(
        head_status(
            port,
            &handshake(&host, Some(&format!("http://localhost:{port}")))
        ),
        101
    );
    assert_eq!(head_status(port, &handshake(&host, None)), 101);
    assert_eq!(
        head_status(
            port,
            &handshake("evil.example", Some(&format!("http://localhost:{port}")))
        ),
        403
    );
}

#[test]
fn serve_caps_request_heads_and_stays_small() {
    let site = basic_site();
    let served = ServeProcess::start(site.path());
    let (port, host) = (served.port, served.host());
    let before = served.memory_kib("VmRSS");
    // A request line over 8 KiB.
    let long_path = format!("/{}", "a".repeat(9 * 1024));
    let (status, response) = exchange(port, &get(&long_path, &host, ""));
    assert_eq!(status, Some(431), "{response}");
    // One header line over 8 KiB.
    let big = format!("X-Big: {}\r\n", "b".repeat(9 * 1024));
    assert_eq!(exchange(port, &get("/", &host, &big)).0, Some(431));
    // Lines under the cap, but 80 KiB of them: refused (the server may
    // close before reading it all, so the 431 can be lost to a reset).
    let many: String = (0..20)
        .map(|i| format!("X-{i}: {}\r\n", "c".repeat(4000)))
        .collect();
    let (status, _) = exchange(port, &get("/", &host, &many));
    assert!(matches!(status, Some(431) | None), "{status:?}");
    // Under the caps: fine.
    let fine = format!("X-Fine: {}\r\n", "d".repeat(7 * 1024));
    assert_eq!(exchange(port, &get("/", &host, &fine)).0, Some(200));

    // One endless header line: the server stops reading and closes long
    // before 300 MiB, and does not grow.
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_write_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let chunk = vec![b'x'; 64 * 1024];
    let mut sent = 0usize;
    let mut error = None;
    std::io::Write::write_all(
        &mut stream,
        format!("GET / HTTP/1.1\r\nHost: {host}\r\nX-Endless: ").as_bytes(),
    )
    .unwrap();
    while sent < 300 * 1024 * 1024 {
        match std::io::Write::write_all(&mut stream, &chunk) {
            Ok(()) => sent += chunk.len(),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let error = error.expect("the server closed the connection");
    assert!(
        !matches!(
            error.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        "the server stopped reading but kept the connection: {error}"
    );
    assert!(sent < 64 * 1024 * 1024, "{sent} bytes accepted");
    let after = served.memory_kib("VmRSS");
    println!(
        "endless header: {} KiB accepted before the close; RSS {before} KiB -> {after} KiB",
        sent / 1024
    );
    assert!(
        after < before + 16 * 1024,
        "RSS grew from {before} to {after} KiB"
    );
}

/// The dev server's library side on a folder holding one page, with `limits`.
fn folder_server(limits: errata::serve::Limits) -> (tempfile::TempDir, errata::serve::Server) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("index.html"),
        "<html><body>hi</body></html>",
    )
    .unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let server = errata::serve::Server::start(
        listener,
        errata::serve::Folder(dir.path().to_path_buf()),
        limits,
    )
    .unwrap();
    (dir, server)
}

#[test]
fn silent_connections_and_half_handshakes_time_out() {
    let limits = errata::serve::Limits {
        header_timeout: Duration::from_millis(600),
        ..errata::serve::Limits::default()
    };
    let (_dir, server) = folder_server(limits);
    let port = server.port();
    let closed_within = |request: &[u8]| {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        std::io::Write::write_all(&mut stream, request).unwrap();
        let start = std::time::Instant::now();
        let mut rest = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stream, &mut rest);
        (start.elapsed(), String::from_utf8_lossy(&rest).into_owned())
    };
    // Nothing at all; a request line and no end of head; half a WebSocket handshake.
    let host = format!("127.0.0.1:{port}");
    let half_handshake =
        format!("GET /__errata/livereload HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n");
    for request in [&b""[..], b"GET / HTTP/1.1\r\n", half_handshake.as_bytes()] {
        let (took, _) = closed_within(request);
        assert!(
            took >= Duration::from_millis(400) && took < Duration::from_secs(5),
            "{:?}: closed after {took:?}",
            String::from_utf8_lossy(request)
        );
    }
    // A keep-alive connection left idle after its response is closed too.
    let (took, response) =
        closed_within(format!("GET / HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes());
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// A client of the live-reload socket, over a raw TCP stream.
struct Tab {
    stream: std::net::TcpStream,
}

impl Tab {
    fn open(port: u16) -> Tab {
        Tab::open_with_receive_buffer(port, None)
    }

    /// A tab whose socket can hold only `receive_buffer` bytes unread.
    fn open_with_receive_buffer(port: u16, receive_buffer: Option<usize>) -> Tab {
        let socket =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        if let Some(size) = receive_buffer {
            socket.set_recv_buffer_size(size).unwrap();
        }
        let addr: std::net::SocketAddr = ([127, 0, 0, 1], port).into();
        socket.connect(&addr.into()).unwrap();
        let mut stream: std::net::TcpStream = socket.into();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let host = format!("127.0.0.1:{port}");
        std::io::Write::write_all(
            &mut stream,
            &handshake(&host, Some(&format!("http://{host}"))),
        )
        .unwrap();
        // Read the 101 head, byte by byte up to its blank line.
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            std::io::Read::read_exact(&mut stream, &mut byte).unwrap();
            head.push(byte[0]);
        }
        assert!(
            head.starts_with(b"HTTP/1.1 101"),
            "{}",
            String::from_utf8_lossy(&head)
        );
        Tab { stream }
    }

    /// The next frame's opcode and payload, within `wait`; `None` when
    /// the server closed the connection or sent nothing in time.
    fn next_frame(&mut self, wait: Duration) -> Option<(u8, Vec<u8>)> {
        self.stream.set_read_timeout(Some(wait)).unwrap();
        let mut head = [0u8; 2];
        std::io::Read::read_exact(&mut self.stream, &mut head).ok()?;
        let mut payload = vec![0u8; usize::from(head[1] & 0x7f)];
        std::io::Read::read_exact(&mut self.stream, &mut payload).ok()?;
        Some((head[0] & 0x0f, payload))
    }

    /// The next text frame, within `wait` (the server's pings are skipped).
    fn next_text(&mut self, wait: Duration) -> Option<String> {
        loop {
            let (opcode, payload) = self.next_frame(wait)?;
            if opcode != 0x9 {
                return String::from_utf8(payload).ok();
            }
        }
    }
}

#[test]
fn live_reload_tabs_are_capped_and_silent_ones_dropped() {
    let idle = Duration::from_millis(900);
    let limits = errata::serve::Limits {
        max_tabs: 2,
        tab_idle_timeout: idle,
        ..errata::serve::Limits::default()
    };
    let (_dir, server) = folder_server(limits);
    let port = server.port();
    let host = format!("127.0.0.1:{port}");
    let origin = format!("http://{host}");
    let (mut silent, mut answering) = (Tab::open(port), Tab::open(port));
    // A third tab is refused while two are open.
    assert_eq!(head_status(port, &handshake(&host, Some(&origin))), 503);

    // Both are pinged; the one that answers (as a browser does) stays,
    // the silent one is dropped once `idle` has passed.
    let start = std::time::Instant::now();
    let (opcode, _) = silent.next_frame(Duration::from_secs(5)).expect("a ping");
    assert_eq!(opcode, 0x9);
    while start.elapsed() < idle * 3 {
        if let Some((0x9, payload)) = answering.next_frame(Duration::from_millis(100)) {
            std::io::Write::write_all(&mut answering.stream, &client_frame(0xA, &payload)).unwrap();
        }
    }
    let mut rest = Vec::new();
    silent
        .stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let closed = std::io::Read::read_to_end(&mut silent.stream, &mut rest).is_ok();
    assert!(closed, "the silent tab was not closed");
    server.reload();
    assert_eq!(
        answering.next_text(Duration::from_secs(5)).as_deref(),
        Some("reload")
    );
    // Its place is free again.
    let _again = Tab::open(port);
}

/// A masked client frame.
fn client_frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mask = [1u8, 2, 3, 4];
    let mut out = vec![0x80 | opcode, 0x80 | payload.len() as u8];
    out.extend_from_slice(&mask);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    out
}

#[test]
fn a_stalled_tab_does_not_delay_the_others() {
    let write_timeout = Duration::from_secs(6);
    let limits = errata::serve::Limits {
        write_timeout,
        ..errata::serve::Limits::default()
    };
    let (_dir, server) = folder_server(limits);
    let port = server.port();

    // The live tab answers a ping, so the protocol works both ways.
    let mut live = Tab::open(port);
    std::io::Write::write_all(&mut live.stream, &client_frame(0x9, b"hi")).unwrap();
    let mut pong = [0u8; 4];
    std::io::Read::read_exact(&mut live.stream, &mut pong).expect("a pong");

    assert_eq!(pong, [0x8A, 2, b'h', b'i']);

    // The stalled tab has a small receive buffer, sends a ping every
    // millisecond and never reads: the pongs fill its socket, and the
    // server's next write to it blocks. The thread notes when the server
    // finally drops it (its writes start failing).
    let stalled = Tab::open_with_receive_buffer(port, Some(4096));
    let mut writer = stalled.stream.try_clone().unwrap();
    let ping = client_frame(0x9, &[7u8; 125]);
    let flood_start = std::time::Instant::now();
    let dropped = std::thread::spawn(move || {
        while std::io::Write::write_all(&mut writer, &ping).is_ok() {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::time::Instant::now()
    });
    // Long enough for the pongs to fill the stalled tab's socket.
    std::thread::sleep(Duration::from_secs(2));

    // Meanwhile every reload reaches the live tab at once.
    let reloads_start = std::time::Instant::now();
    let mut slowest = Duration::ZERO;
    for _ in 0..20 {
        let start = std::time::Instant::now();
        server.reload();
        assert_eq!(
            live.next_text(Duration::from_secs(2)).as_deref(),
            Some("reload")
        );
        slowest = slowest.max(start.elapsed());
    }
    let reloads_end = std::time::Instant::now();
    // The stalled tab is dropped `write_timeout` after a write to it
    // blocked; that write had blocked before the reloads began, and the tab
    // was still connected when they ended.
    let dropped_at = dropped.join().unwrap();
    println!(
        "stalled tab dropped {:?} after it began flooding; slowest reload to the live tab {slowest:?}",
        dropped_at - flood_start
    );
    assert!(dropped_at > reloads_end, "dropped before the reloads ended");
    assert!(
        dropped_at - write_timeout <= reloads_start,
        "the stalled tab was not stalled during the reloads"
    );
    assert!(slowest < Duration::from_millis(500), "{slowest:?}");
    // The live tab still works.
    server.reload();
    assert_eq!(
        live.next_text(Duration::from_secs(2)).as_deref(),
        Some("reload")
    );
    drop(stalled);
}

#[test]
fn serve_memory_stays_flat_under_a_bounded_loopback_load() {
    const CONNECTIONS: usize = 200;
    const PER_CONNECTION: usize = 50; // 10,000 requests in all
    let site = basic_site();
    let served = ServeProcess::start(site.path());
    let (port, host) = (served.port, served.host());
    // Warm up, then take the baseline.
    for _ in 0..50 {
        exchange(port, &get("/", &host, ""));
    }
    let baseline = served.memory_kib("VmRSS");
    let big = format!("X-Big: {}\r\n", "b".repeat(9 * 1024));
    let kinds: Vec<(Vec<u8>, u16)> = vec![
        (get("/", &host, ""), 200),
        (get("/guides/first-error/", &host, ""), 200),
        (get("/no/such/page/", &host, ""), 404),
        (get("/%2e%2e/%2e%2e/etc/passwd", &host, ""), 400),
        (get("/", &host, &big), 431),
    ];
    let kinds = std::sync::Arc::new(kinds);
    let errors = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(CONNECTIONS));
    let started = std::time::Instant::now();
    let workers: Vec<_> = (0..CONNECTIONS)
        .map(|worker| {
            let (kinds, errors, barrier) = (
                std::sync::Arc::clone(&kinds),
                std::sync::Arc::clone(&errors),
                std::sync::Arc::clone(&barrier),
            );
            std::thread::spawn(move || {
                barrier.wait();
                for i in 0..PER_CONNECTION {
                    let (request, expected) = &kinds[(worker + i) % kinds.len()];
                    if exchange(port, request).0 != Some(*expected) {
                        errors.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let took = started.elapsed();
    let requests = CONNECTIONS * PER_CONNECTION;
    let errors = errors.load(std::sync::atomic::Ordering::Relaxed);
    let (rss, peak) = (served.memory_kib("VmRSS"), served.memory_kib("VmHWM"));
    println!(
        "serve load: {requests} requests over {CONNECTIONS} concurrent connections in {:.1} s = {:.0} req/s, \
         {errors} errors, RSS {} MiB before, {} MiB after, peak {} MiB",
        took.as_secs_f64(),
        requests as f64 / took.as_secs_f64(),
        baseline / 1024,
        rss / 1024,
        peak / 1024
    );
    assert_eq!(errors, 0);
    assert!(took < Duration::from_secs(120), "{took:?}");
    assert!(
        rss < baseline + 32 * 1024,
        "RSS grew from {baseline} to {rss} KiB"
    );
    assert!(peak < 256 * 1024, "peak RSS {peak} KiB");
}
