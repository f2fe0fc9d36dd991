//! HTTP servers on 127.0.0.1 for the link checker's tests: one that answers
//! by route and logs every request, and one that counts how many
//! connections the client holds open at once.

#![allow(dead_code)] // each test binary uses the part it needs

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub headers: Vec<String>,
    pub at: Instant,
}

/// What a route answers: status line, extra header lines, and how long to
/// wait first.
pub struct Reply {
    pub status: &'static str,
    pub headers: String,
    pub delay: Duration,
}

impl Reply {
    pub fn status(status: &'static str) -> Reply {
        Reply {
            status,
            headers: String::new(),
            delay: Duration::ZERO,
        }
    }

    pub fn redirect(status: &'static str, location: &str) -> Reply {
        Reply {
            headers: format!("Location: {location}\r\n"),
            ..Reply::status(status)
        }
    }
}

type Route = dyn Fn(&str, &str, usize) -> Reply + Send + Sync;

/// A server that answers each request with `route(method, path, earlier)`,
/// `earlier` being how many requests for that path came before.
pub struct LinkServer {
    pub port: u16,
    log: Arc<Mutex<Vec<Seen>>>,
}

impl LinkServer {
    pub fn start(route: impl Fn(&str, &str, usize) -> Reply + Send + Sync + 'static) -> LinkServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let route: Arc<Route> = Arc::new(route);
        let server_log = Arc::clone(&log);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let log = Arc::clone(&server_log);
                let route = Arc::clone(&route);
                std::thread::spawn(move || answer(stream, &log, &*route));
            }
        });
        LinkServer { port, log }
    }

    /// Every request for `path`, in order.
    pub fn requests(&self, path: &str) -> Vec<Seen> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.path == path)
            .cloned()
            .collect()
    }

    /// Every request.
    pub fn all(&self) -> Vec<Seen> {
        self.log.lock().unwrap().clone()
    }
}

fn answer(stream: TcpStream, log: &Mutex<Vec<Seen>>, route: &Route) {
    let mut stream = stream;
    let Ok(clone) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(clone);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) <= 2 {
            break;
        }
        headers.push(h.trim_end().to_string());
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let earlier = {
        let mut log = log.lock().unwrap();
        let earlier = log.iter().filter(|s| s.path == path).count();
        log.push(Seen {
            method: method.clone(),
            path: path.clone(),
            headers,
            at: Instant::now(),
        });
        earlier
    };
    let reply = route(&method, &path, earlier);
    std::thread::sleep(reply.delay);
    let _ = write!(
        stream,
        "HTTP/1.1 {}\r\n{}Content-Length: 0\r\nConnection: close\r\n\r\n",
        reply.status, reply.headers
    );
}

/// A server that holds each request for `hold` before answering 200, and
/// records the most connections that were open at once.
///
/// One thread polls every socket, so the count is exact: a connection the
/// client has closed is noticed (its end of stream is already queued on
/// loopback) before a newer connection is counted.
pub struct CountingServer {
    pub port: u16,
    peak: Arc<Mutex<(usize, usize)>>,
}

impl CountingServer {
    pub fn start(hold: Duration) -> CountingServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let peak = Arc::new(Mutex::new((0, 0)));
        let shared = Arc::clone(&peak);
        std::thread::spawn(move || {
            // (stream, bytes read so far, when the request was complete, answered)
            let mut open: Open = Vec::new();
            loop {
                let mut idle = !sweep(&mut open);
                while let Ok((stream, _)) = listener.accept() {
                    idle = false;
                    // Closes that happened before this connection was made
                    // are queued already: account for them first.
                    sweep(&mut open);
                    stream.set_nonblocking(true).unwrap();
                    open.push((stream, Vec::new(), None, false));
                    let mut peak = shared.lock().unwrap();
                    peak.0 = peak.0.max(open.len());
                    peak.1 += 1;
                }
                for (stream, _, done, answered) in &mut open {
                    if !*answered && done.is_some_and(|d| d.elapsed() >= hold) {
                        *answered = true;
                        let _ = stream.write_all(
                            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                        );
                    }
                }
                if idle {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        });
        CountingServer { port, peak }
    }
}

type Open = Vec<(TcpStream, Vec<u8>, Option<Instant>, bool)>;

/// Reads what each connection sent and drops the ones the client closed;
/// true if anything happened.
fn sweep(open: &mut Open) -> bool {
    let mut busy = false;
    open.retain_mut(|(stream, buf, done, _)| {
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk) {
            Ok(0) => {
                busy = true;
                false
            }
            Ok(n) => {
                busy = true;
                buf.extend_from_slice(&chunk[..n]);
                if done.is_none() && buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    *done = Some(Instant::now());
                }
                true
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => true,
            Err(_) => false,
        }
    });
    busy
}

impl CountingServer {
    /// The most connections open at once, and how many there were in all.
    pub fn peak_and_total(&self) -> (usize, usize) {
        *self.peak.lock().unwrap()
    }
}
