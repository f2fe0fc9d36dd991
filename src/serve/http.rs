//! The preview server: hyper's HTTP/1.1 on a small tokio runtime.
//!
//! hyper parses requests (a parser that has seen the internet, rather than
//! our own), and this module adds what a preview server on a developer's
//! machine owes them:
//!
//! - **DNS rebinding**: a request whose `Host` (or absolute URI) is not
//!   `127.0.0.1`, `localhost` or `[::1]` (with this port, or none) gets 403,
//!   as webpack-dev-server and Vite do; the live-reload WebSocket also
//!   refuses an `Origin` that is not one of those.
//! - **Size caps**: the request line and each header line at most
//!   `max_line` bytes, the whole head at most `max_head`; beyond either, 431
//!   and the connection is closed. Nothing a client sends is buffered past
//!   those caps.
//! - **Timeouts**: a connection must deliver a complete request head within
//!   `header_timeout` of opening (and of each response, for keep-alive), or
//!   it is closed; so must the WebSocket handshake, which is a request too.
//! - **Bounded concurrency**: at most `max_connections` connections are
//!   served at once; more wait in the kernel's accept queue.

use std::convert::Infallible;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::{Semaphore, watch};

use super::LIVE_RELOAD_PATH;
use super::files::{self, SiteFiles};
use super::livereload;

/// The server's limits; the defaults suit a developer's machine.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Longest request line, and longest header line, in bytes.
    pub max_line: usize,
    /// Longest request head (request line and all headers), in bytes; at
    /// least 8 KiB.
    pub max_head: usize,
    /// Time allowed for a complete request head (and the WebSocket
    /// handshake), from the connection's start or the previous response.
    pub header_timeout: Duration,
    /// Time a live-reload message may take to be accepted by a tab before
    /// that tab's socket is dropped.
    pub write_timeout: Duration,
    /// Connections served at once.
    pub max_connections: usize,
    /// Live-reload tabs open at once (an upgraded connection no longer
    /// counts against `max_connections`); more get 503.
    pub max_tabs: usize,
    /// A tab that sends nothing for this long (not even the pong a browser
    /// gives to the server's pings, sent every third of it) is dropped.
    pub tab_idle_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_line: 8 * 1024,
            max_head: 64 * 1024,
            header_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(10),
            max_connections: 512,
            max_tabs: 64,
            tab_idle_timeout: Duration::from_secs(60),
        }
    }
}

/// What every connection shares.
pub(super) struct State {
    files: Box<dyn SiteFiles>,
    /// The last build's problems, for the overlay; locked only to read or
    /// replace the text, never across I/O.
    error: Mutex<Option<String>>,
    port: u16,
    pub(super) limits: Limits,
    pub(super) reloads: watch::Receiver<u64>,
    /// One permit per open live-reload tab.
    pub(super) tabs: Arc<Semaphore>,
}

/// A running preview server. Dropping it stops it.
pub struct Server {
    port: u16,
    state: Arc<State>,
    reload: watch::Sender<u64>,
    _runtime: tokio::runtime::Runtime,
}

impl Server {
    /// Serves `files` on `listener` (bound by the caller, on loopback).
    pub fn start(
        listener: TcpListener,
        files: impl SiteFiles + 'static,
        limits: Limits,
    ) -> std::io::Result<Server> {
        let port = listener.local_addr()?.port();
        listener.set_nonblocking(true)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("errata-serve")
            .enable_all()
            .build()?;
        let (reload, reloads) = watch::channel(0u64);
        let state = Arc::new(State {
            files: Box::new(files),
            error: Mutex::new(None),
            port,
            tabs: Arc::new(Semaphore::new(limits.max_tabs.max(1))),
            limits,
            reloads,
        });
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(listener)?
        };
        runtime.spawn(accept_loop(listener, Arc::clone(&state)));
        Ok(Server {
            port,
            state,
            reload,
            _runtime: runtime,
        })
    }

    /// The port served on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Tells every open tab to reload. Never waits for a tab: each one has
    /// its own task that picks the message up.
    pub fn reload(&self) {
        self.reload.send_modify(|generation| *generation += 1);
    }

    /// Sets (or clears) the build errors shown in the overlay.
    pub fn set_error(&self, error: Option<String>) {
        *self.state.error.lock().unwrap_or_else(|e| e.into_inner()) = error;
    }
}

async fn accept_loop(listener: tokio::net::TcpListener, state: Arc<State>) {
    let slots = Arc::new(Semaphore::new(state.limits.max_connections.max(1)));
    loop {
        let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
            return;
        };
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // Out of file descriptors, say: wait a moment rather than spin.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        let state = Arc::clone(&state);
        tokio::spawn(async move {
            let _ = stream.set_nodelay(true);
            let service_state = Arc::clone(&state);
            let service = hyper::service::service_fn(move |request| {
                let state = Arc::clone(&service_state);
                async move { Ok::<_, Infallible>(respond(request, &state)) }
            });
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new())
                .header_read_timeout(state.limits.header_timeout)
                .max_buf_size(state.limits.max_head.max(8192))
                .max_header_size(state.limits.max_head)
                .max_headers(100)
                .title_case_headers(true);
            let _ = http
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades()
                .await;
            drop(slot);
        });
    }
}

/// A small response.
pub(super) fn plain(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{text}\n"))));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A response after which the connection is closed.
fn closing(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    let mut response = plain(status, text);
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

impl State {
    /// True for `127.0.0.1`, `localhost` and `[::1]`, with this port or none.
    pub(super) fn is_local_authority(&self, authority: &str) -> bool {
        let authority = authority.to_ascii_lowercase();
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !port.contains(']') => (host, Some(port)),
            _ => (authority.as_str(), None),
        };
        matches!(host, "127.0.0.1" | "localhost" | "[::1]")
            && port.is_none_or(|p| p == self.port.to_string())
    }

    /// True for `http://` origins of the local authorities with this port:
    /// a browser leaves the port out of an origin only for port 80, so
    /// `http://localhost` is another server's page unless this one is on 80.
    pub(super) fn is_local_origin(&self, origin: &str) -> bool {
        let Some(authority) = origin.strip_prefix("http://") else {
            return false;
        };
        let has_port = authority
            .rsplit_once(':')
            .is_some_and(|(_, port)| !port.contains(']'));
        (has_port || self.port == 80) && self.is_local_authority(authority)
    }
}

fn respond(request: Request<Incoming>, state: &Arc<State>) -> Response<Full<Bytes>> {
    let max_line = state.limits.max_line;
    let target_len = request
        .uri()
        .path_and_query()
        .map_or(0, |p| p.as_str().len())
        + request.uri().authority().map_or(0, |a| a.as_str().len());
    if target_len > max_line {
        return closing(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "request line too long",
        );
    }
    if request
        .headers()
        .iter()
        .any(|(name, value)| name.as_str().len() + 2 + value.len() > max_line)
    {
        return closing(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "header line too long",
        );
    }
    let head: usize = target_len
        + request
            .headers()
            .iter()
            .map(|(name, value)| name.as_str().len() + value.len() + 4)
            .sum::<usize>();
    if head > state.limits.max_head {
        return closing(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "request head too large",
        );
    }
    // Every `Host` must be local: with two, a proxy or cache in between
    // may go by the other one (RFC 9112 answers such a request 400).
    let hosts = request.headers().get_all(header::HOST);
    let host_ok = hosts.iter().count() == 1
        && hosts
            .iter()
            .all(|h| h.to_str().is_ok_and(|h| state.is_local_authority(h)))
        && request
            .uri()
            .authority()
            .is_none_or(|a| state.is_local_authority(a.as_str()));
    if !host_ok {
        return closing(
            StatusCode::FORBIDDEN,
            "this preview answers only to 127.0.0.1, localhost and [::1]",
        );
    }
    if request.uri().path() == LIVE_RELOAD_PATH {
        return livereload::handshake(request, state);
    }
    let head_only = request.method() == Method::HEAD;
    if request.method() != Method::GET && !head_only {
        let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD");
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let Some(path) = files::site_path(request.uri().path()) else {
        return plain(StatusCode::BAD_REQUEST, "bad request");
    };
    let (status, found) = match files::find(&*state.files, &path) {
        // A folder named without its trailing slash: redirected there, as
        // static hosts do, so that the page's relative links resolve as
        // they will once deployed. The one leading slash kept makes the
        // target a path on this server, never `//host/`.
        Some((name, _)) if !path.is_empty() && name == format!("{path}/index.html") => {
            let raw = request.uri().path().trim_start_matches('/');
            let query = request.uri().query().map(|q| format!("?{q}"));
            let target = format!("/{raw}/{}", query.unwrap_or_default());
            let mut response = plain(StatusCode::MOVED_PERMANENTLY, "moved");
            if let Ok(value) = HeaderValue::from_str(&target) {
                response.headers_mut().insert(header::LOCATION, value);
            }
            return response;
        }
        Some(found) => (StatusCode::OK, found),
        None => match state.files.read("404.html") {
            Some(body) => (StatusCode::NOT_FOUND, ("404.html".to_string(), body)),
            None => return plain(StatusCode::NOT_FOUND, "not found"),
        },
    };
    let (name, mut body) = found;
    let kind = files::content_type(&name);
    if kind.starts_with("text/html") {
        let error = state
            .error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        body = Bytes::from(files::inject(&body, &files::injection(error.as_deref())));
    }
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}
