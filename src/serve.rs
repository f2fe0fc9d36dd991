//! `errata serve`: builds the site into a private folder, serves it on
//! 127.0.0.1, rebuilds when sources change, and tells open tabs to reload
//! over a WebSocket on the same port. A failed rebuild keeps the last good
//! site and shows the errors in an overlay and in the terminal.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::{RecursiveMode, Watcher};

use crate::pipeline::{BuildError, BuildOptions, build};

/// The path the live-reload WebSocket listens on.
pub const LIVE_RELOAD_PATH: &str = "/__errata/livereload";

/// What `errata serve` was asked to do.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The site root.
    pub root: PathBuf,
    /// Port on 127.0.0.1.
    pub port: u16,
    /// Include drafts.
    pub drafts: bool,
    /// Open the site in the default browser once it is up.
    pub open: bool,
}

/// State shared by the server threads and the rebuild loop.
struct Shared {
    /// The folder being served (the build output).
    dir: PathBuf,
    /// The last build's problems, shown as an overlay; `None` when it succeeded.
    error: Mutex<Option<String>>,
    /// Open live-reload sockets.
    clients: Mutex<Vec<tungstenite::WebSocket<TcpStream>>>,
}

impl Shared {
    fn broadcast_reload(&self) {
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        clients.retain_mut(|ws| ws.send(tungstenite::Message::text("reload")).is_ok());
    }
}

/// The build's outcome as text for the terminal and the overlay.
fn describe(result: &Result<crate::BuildReport, BuildError>) -> Result<String, String> {
    match result {
        Ok(report) => Ok(format!(
            "Built {} page(s) in {} ms",
            report.pages,
            report.total.as_millis()
        )),
        Err(BuildError::Diagnostics(all)) => Err(all
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")),
        Err(other) => Err(other.to_string()),
    }
}

/// Runs the server until Ctrl-C. Returns an error if it cannot start.
pub fn serve(options: &ServeOptions) -> Result<(), String> {
    let listener = TcpListener::bind(("127.0.0.1", options.port))
        .map_err(|e| format!("cannot listen on 127.0.0.1:{}: {e}", options.port))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let dir = std::env::temp_dir().join(format!("errata-serve-{}-{port}", std::process::id()));
    let base_url = format!("http://127.0.0.1:{port}/");
    let build_options = BuildOptions {
        root: options.root.clone(),
        output: Some(dir.clone()),
        base_url: Some(base_url.clone()),
        drafts: options.drafts,
        force: false,
        clean: false,
        progress: None,
        check_only: false,
    };

    // Ctrl-C waits for a build in progress (which would otherwise put the
    // folder back after we removed it), removes the served folder and leaves.
    let cleanup_dir = dir.clone();
    let stopping = Arc::new(AtomicBool::new(false));
    let building = Arc::new(Mutex::new(()));
    let stop_flag = Arc::clone(&stopping);
    let build_lock = Arc::clone(&building);
    ctrlc::set_handler(move || {
        stop_flag.store(true, Ordering::SeqCst);
        let _no_more_builds = build_lock.lock().unwrap_or_else(|e| e.into_inner());
        let _ = std::fs::remove_dir_all(&cleanup_dir);
        // A build interrupted half-way leaves its staging folder beside ours.
        crate::write::remove_dead_staging(&cleanup_dir);
        println!("\nStopped; removed {}", cleanup_dir.display());
        std::process::exit(0);
    })
    .map_err(|e| format!("cannot handle Ctrl-C: {e}"))?;

    let shared = Arc::new(Shared {
        dir: dir.clone(),
        error: Mutex::new(None),
        clients: Mutex::new(Vec::new()),
    });
    // Watch before the first build, so no edit between the two is missed.
    let (tx, rx) = std::sync::mpsc::channel::<notify::Result<notify::Event>>();
    let mut watcher =
        notify::recommended_watcher(tx).map_err(|e| format!("cannot watch files: {e}"))?;
    for name in [
        "content",
        "data",
        "themes",
        "templates",
        "static",
        "site.toml",
    ] {
        let path = options.root.join(name);
        if path.exists() {
            let mode = if path.is_dir() {
                RecursiveMode::Recursive
            } else {
                RecursiveMode::NonRecursive
            };
            watcher
                .watch(&path, mode)
                .map_err(|e| format!("cannot watch {}: {e}", path.display()))?;
        }
    }
    rebuild(&build_options, &shared, &building, &stopping);
    println!("Serving {} at {base_url} (Ctrl-C to stop)", dir.display());
    if options.open {
        open_browser(&base_url);
    }

    let server_shared = Arc::clone(&shared);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let shared = Arc::clone(&server_shared);
            std::thread::spawn(move || handle(stream, &shared));
        }
    });

    while let Ok(event) = rx.recv() {
        if stopping.load(Ordering::SeqCst) {
            break;
        }
        if !event.as_ref().is_ok_and(is_source_change) {
            continue;
        }
        // Debounce: an editor's save is several events; wait for quiet.
        while rx.recv_timeout(Duration::from_millis(120)).is_ok() {}
        rebuild(&build_options, &shared, &building, &stopping);
        shared.broadcast_reload();
    }
    Ok(())
}

/// True for events that change a source: not reads or metadata changes (the
/// build itself reads every source), and not editors' swap and backup files.
fn is_source_change(event: &notify::Event) -> bool {
    use notify::EventKind;
    use notify::event::ModifyKind;
    // Metadata changes are not edits: the build's own first read of a freshly
    // written file updates its access time, which must not trigger a rebuild.
    let kind = matches!(
        event.kind,
        EventKind::Create(_)
            | EventKind::Remove(_)
            | EventKind::Modify(
                ModifyKind::Data(_) | ModifyKind::Name(_) | ModifyKind::Any | ModifyKind::Other
            )
    );
    kind && event.paths.iter().any(|p| {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        !(name.starts_with('.')
            || name.ends_with('~')
            || name.ends_with(".swp")
            || name.ends_with(".tmp"))
    })
}

/// Rebuilds everything. On failure the previous site stays in place (the
/// build only replaces its output on success) and the errors are kept for
/// the overlay.
fn rebuild(options: &BuildOptions, shared: &Shared, building: &Mutex<()>, stopping: &AtomicBool) {
    let _building = building.lock().unwrap_or_else(|e| e.into_inner());
    if stopping.load(Ordering::SeqCst) {
        return;
    }
    let outcome = describe(&build(options));
    let mut error = shared.error.lock().unwrap_or_else(|e| e.into_inner());
    match outcome {
        Ok(summary) => {
            println!("{summary}");
            *error = None;
        }
        Err(problems) => {
            eprintln!("{problems}\nerror: build failed; still serving the last good version");
            *error = Some(problems);
        }
    }
}

fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(opener).arg(url).spawn() {
        eprintln!("warning: could not open a browser ({opener}: {e}); open {url} yourself");
    }
}

/// Decodes `%XX` escapes; `None` for malformed ones or invalid UTF-8.
pub(crate) fn percent_decode(path: &str) -> Option<String> {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Maps a request path to a file inside `dir`, or `None` when the path is
/// not a plain path inside it (`..`, encoded or not, absolute paths,
/// backslashes, NUL).
pub fn resolve(dir: &Path, request_path: &str) -> Option<PathBuf> {
    let decoded = percent_decode(request_path)?;
    if decoded.contains(['\\', '\0']) {
        return None;
    }
    let mut path = dir.to_path_buf();
    for segment in decoded.split('/') {
        match segment {
            "" | "." => {}
            ".." => return None,
            s => {
                let mut components = Path::new(s).components();
                if !matches!(
                    (components.next(), components.next()),
                    (Some(Component::Normal(_)), None)
                ) {
                    return None;
                }
                path.push(s);
            }
        }
    }
    if path.is_dir() {
        path.push("index.html");
    }
    Some(path)
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "json" => "application/json",
        "xml" => "application/xml",
        "txt" => "text/plain; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "webp" => "image/webp",
        "ico" => "image/x-icon",
        "wasm" => "application/wasm",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    }
}

/// The script that reloads the page when the server says so, and the error
/// overlay when the last build failed.
fn injection(error: Option<&str>) -> String {
    let mut out = String::from(
        "<script>(function(){var p=location.protocol==='https:'?'wss://':'ws://';\
         function c(){var s=new WebSocket(p+location.host+'/__errata/livereload');\
         s.onmessage=function(e){if(e.data==='reload')location.reload();};\
         s.onclose=function(){setTimeout(c,1000);};}c();})();</script>",
    );
    if let Some(error) = error {
        let mut escaped = String::new();
        crate::highlight::escape_into(error, &mut escaped);
        out.push_str(
            "<div id=\"errata-overlay\" role=\"alert\" style=\"position:fixed;inset:auto 0 0 0;max-height:60vh;overflow:auto;\
             z-index:2147483647;background:#1b1f24;color:#ffdcd7;border-top:4px solid #cf222e;padding:1rem;\
             font:14px/1.5 ui-monospace,monospace\"><strong>errata: the build failed; showing the last good version</strong><pre style=\"white-space:pre-wrap;margin:.5rem 0 0\">",
        );
        out.push_str(&escaped);
        out.push_str("</pre></div>");
    }
    out
}

fn respond(stream: &mut TcpStream, status: &str, content_type: &str, body: &[u8], head_only: bool) {
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if !head_only {
        let _ = stream.write_all(body);
    }
}

fn bad_request(stream: &mut TcpStream, head_only: bool) {
    respond(
        stream,
        "400 Bad Request",
        "text/plain",
        b"bad request\n",
        head_only,
    );
}

fn handle(mut stream: TcpStream, shared: &Shared) {
    // A live-reload socket: hand the untouched stream to the WebSocket handshake.
    let mut peek = [0u8; 64];
    let n = stream.peek(&mut peek).unwrap_or(0);
    if peek[..n].starts_with(format!("GET {LIVE_RELOAD_PATH}").as_bytes()) {
        if let Ok(ws) = tungstenite::accept(stream) {
            shared
                .clients
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(ws);
        }
        return;
    }
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    });
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        match reader.read_line(&mut header) {
            Ok(0) | Err(_) => break,
            Ok(_) if header == "\r\n" || header == "\n" => break,
            Ok(_) => {}
        }
    }
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    let head_only = method == "HEAD";
    if method != "GET" && !head_only {
        return respond(
            &mut stream,
            "405 Method Not Allowed",
            "text/plain",
            b"only GET and HEAD\n",
            false,
        );
    }
    let path = target.split(['?', '#']).next().unwrap_or("/");
    if !path.starts_with('/') {
        return bad_request(&mut stream, head_only);
    }
    let error = shared
        .error
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let (status, file) = match resolve(&shared.dir, path) {
        None => return bad_request(&mut stream, head_only),
        Some(file) if file.is_file() => ("200 OK", file),
        Some(_) => ("404 Not Found", shared.dir.join("404.html")),
    };
    let Ok(mut body) = std::fs::read(&file) else {
        return respond(
            &mut stream,
            "404 Not Found",
            "text/plain",
            b"not found\n",
            head_only,
        );
    };
    let kind = content_type(&file);
    if kind.starts_with("text/html") {
        let extra = injection(error.as_deref());
        let at = body
            .windows(7)
            .rposition(|w| w.eq_ignore_ascii_case(b"</body>"))
            .unwrap_or(body.len());
        body.splice(at..at, extra.into_bytes());
    }
    respond(&mut stream, status, kind, &body, head_only);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_stays_inside_the_served_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("oom")).unwrap();
        assert_eq!(
            resolve(dir.path(), "/oom/").unwrap(),
            dir.path().join("oom/index.html")
        );
        assert_eq!(
            resolve(dir.path(), "/a%20b.txt").unwrap(),
            dir.path().join("a b.txt")
        );
        for bad in [
            "/../etc/passwd",
            "/%2e%2e/etc/passwd",
            "/oom/%2E%2E/%2e%2e/x",
            "/a\\..\\b",
            "/%00",
            "/%zz",
            "/%2e%2e%2fetc",
        ] {
            assert!(resolve(dir.path(), bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn overlay_escapes_the_errors() {
        let html = injection(Some("content/a.md:1:1: <script>x</script>"));
        assert!(html.contains("&lt;script&gt;x&lt;/script&gt;"));
        assert!(html.contains("errata-overlay"));
        assert!(!injection(None).contains("errata-overlay"));
    }
}
