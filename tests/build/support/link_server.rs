use super::*;

/// A link-checking target on 127.0.0.1 with every behaviour the checker must
/// handle, logging each request it gets.
pub struct LinkServer {
    pub port: u16,
    pub log: std::sync::Arc<std::sync::Mutex<Vec<(String, String, std::time::Instant)>>>,
}

impl LinkServer {
    pub fn start() -> LinkServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let server_log = std::sync::Arc::clone(&log);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let log = std::sync::Arc::clone(&server_log);
                std::thread::spawn(move || {
                    let mut stream = stream;
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).unwrap_or(0) <= 2 {
                            break;
                        }
                    }
                    let mut parts = line.split_whitespace();
                    let (method, path) = (
                        parts.next().unwrap_or("").to_string(),
                        parts.next().unwrap_or("").to_string(),
                    );
                    let earlier = {
                        let mut log = log.lock().unwrap();
                        let earlier = log.iter().filter(|(_, p, _)| *p == path).count();
                        log.push((method.clone(), path.clone(), std::time::Instant::now()));
                        earlier
                    };
                    let (status, extra) = match (path.as_str(), method.as_str()) {
                        ("/ok", _) => ("200 OK", String::new()),
                        ("/moved", _) => ("301 Moved Permanently", "Location: /ok\r\n".to_string()),
                        ("/nohead", "HEAD") => ("405 Method Not Allowed", String::new()),
                        ("/nohead", _) => ("200 OK", String::new()),
                        ("/busy", _) if earlier == 0 => {
                            ("429 Too Many Requests", "Retry-After: 1\r\n".to_string())
                        }
                        ("/busy", _) => ("200 OK", String::new()),
                        ("/slow", _) => {
                            std::thread::sleep(std::time::Duration::from_secs(3));
                            ("200 OK", String::new())
                        }
                        _ => ("404 Not Found", String::new()),
                    };
                    let _ = write!(
                        stream,
                        "HTTP/1.1 {status}\r\n{extra}Content-Length: 0\r\nConnection: close\r\n\r\n"
                    );
                });
            }
        });
        LinkServer { port, log }
    }

    pub fn requests(&self, path: &str) -> Vec<(String, std::time::Instant)> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, p, _)| p == path)
            .map(|(m, _, t)| (m.clone(), *t))
            .collect()
    }
}
