use super::*;

/// A static file server on 127.0.0.1 that serves `root` under `mount`
/// (such as `/triage/`), like GitHub Pages serves a project site: directory
/// URLs get their `index.html`, unknown paths get `404.html` with status 404.
pub struct StaticServer {
    pub addr: std::net::SocketAddr,
}

impl StaticServer {
    pub fn start(root: PathBuf, mount: &'static str) -> StaticServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let root = root.clone();
                std::thread::spawn(move || serve_one(stream, &root, mount));
            }
        });
        StaticServer { addr }
    }

    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }
}

pub fn serve_one(mut stream: TcpStream, root: &Path, mount: &str) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) <= 2 {
            break;
        }
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .split(['?', '#'])
        .next()
        .unwrap()
        .to_string();
    let file = path
        .strip_prefix(mount)
        .filter(|rest| !rest.split('/').any(|s| s == ".."))
        .map(|rest| {
            let mut file = root.join(rest);
            if rest.is_empty() || rest.ends_with('/') {
                file.push("index.html");
            }
            file
        })
        .filter(|f| f.is_file());
    let (status, body, file) = match file {
        Some(f) => ("200 OK", std::fs::read(&f).unwrap(), f),
        None => (
            "404 Not Found",
            std::fs::read(root.join("404.html")).unwrap_or_default(),
            root.join("404.html"),
        ),
    };
    let content_type = match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css",
        Some("js") => "text/javascript",
        Some("xml") => "application/xml",
        Some("svg") => "image/svg+xml",
        Some("wasm") => "application/wasm",
        _ => "text/plain",
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(&body);
}

/// GET over a fresh connection; returns the status code and body.
pub fn http_get(url: &url::Url) -> (u16, String) {
    let mut stream = TcpStream::connect((url.host_str().unwrap(), url.port().unwrap())).unwrap();
    write!(
        stream,
        "GET {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        url.path(),
        url.host_str().unwrap()
    )
    .unwrap();
    // Bytes, not a String: binary assets such as favicon.ico are crawled too.
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).unwrap();
    let response = String::from_utf8_lossy(&bytes);
    let status = response.split_whitespace().nth(1).unwrap().parse().unwrap();
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
