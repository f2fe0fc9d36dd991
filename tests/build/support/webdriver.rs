use super::*;

// ---- The calculator in a real browser (Debian's chromium, driven by chromedriver) ----

/// A minimal WebDriver client over HTTP/1.1 to a chromedriver on 127.0.0.1.
pub struct Browser {
    pub driver: std::process::Child,
    pub port: u16,
    pub session: String,
}

impl Browser {
    /// Starts chromedriver and a headless Chromium session for `test`, or
    /// reports the missing tools (see [`missing_tool`]).
    pub fn start(test: &str) -> Option<Browser> {
        let (Some(chromium), Some(chromedriver)) =
            (find_tool("chromium"), find_tool("chromedriver"))
        else {
            missing_tool(
                test,
                "chromium and chromedriver are not on this machine",
                "them with `apt-get install chromium chromium-driver`",
            );
            return None;
        };
        let port = free_port();
        let driver = std::process::Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let profile = tempfile::tempdir().unwrap().keep();
        let caps = serde_json::json!({"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
            "binary": chromium,
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-dev-shm-usage", format!("--user-data-dir={}", profile.display())]
        }}}});
        let mut browser = Browser {
            driver,
            port,
            session: String::new(),
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let session = loop {
            if let Ok(v) = browser.try_call("POST", "/session", Some(&caps)) {
                break v;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "chromedriver did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        };
        browser.session = session["value"]["sessionId"].as_str().unwrap().to_string();
        Some(browser)
    }

    pub fn try_call(
        &self,
        method: &str,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> std::io::Result<serde_json::Value> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))?;
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )?;
        // Read exactly one response: chromedriver may keep the connection open.
        let mut reader = BufReader::new(stream);
        let mut head = String::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line)? == 0 || line == "\r\n" {
                break;
            }
            head.push_str(&line.to_ascii_lowercase());
        }
        let length = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse::<usize>().ok());
        let body = match length {
            Some(n) => {
                let mut buf = vec![0; n];
                reader.read_exact(&mut buf)?;
                String::from_utf8_lossy(&buf).into_owned()
            }
            None if head.contains("transfer-encoding: chunked") => {
                let mut out = Vec::new();
                loop {
                    let mut size = String::new();
                    reader.read_line(&mut size)?;
                    let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    let mut chunk = vec![0; n + 2];
                    reader.read_exact(&mut chunk)?;
                    out.extend_from_slice(&chunk[..n]);
                }
                String::from_utf8_lossy(&out).into_owned()
            }
            None => {
                let mut rest = String::new();
                reader.read_to_string(&mut rest)?;
                rest
            }
        };
        serde_json::from_str(&body).map_err(|e| std::io::Error::other(format!("{e}: {body}")))
    }

    pub fn call(&self, method: &str, path: &str, body: serde_json::Value) -> serde_json::Value {
        let path = format!("/session/{}{path}", self.session);
        let body = if method == "GET" { None } else { Some(&body) };
        let v = self.try_call(method, &path, body).unwrap();
        assert!(v["value"].get("error").is_none(), "{method} {path}: {v}");
        v["value"].clone()
    }

    pub fn script(&self, script: &str) -> serde_json::Value {
        self.call(
            "POST",
            "/execute/sync",
            serde_json::json!({"script": script, "args": []}),
        )
    }

    pub fn element(&self, css: &str) -> String {
        let v = self.call(
            "POST",
            "/element",
            serde_json::json!({"using": "css selector", "value": css}),
        );
        v.as_object()
            .unwrap()
            .values()
            .next()
            .unwrap()
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Opens `url` in the session's tab.
    pub fn go(&self, url: &str) {
        self.call("POST", "/url", serde_json::json!({ "url": url }));
    }

    /// Clicks the element that `css` selects.
    pub fn click(&self, css: &str) {
        let element = self.element(css);
        self.call(
            "POST",
            &format!("/element/{element}/click"),
            serde_json::json!({}),
        );
    }

    /// Clears the field that `css` selects and types `text` into it, as a
    /// user replaces a value.
    pub fn replace_text(&self, css: &str, text: &str) {
        let element = self.element(css);
        self.call(
            "POST",
            &format!("/element/{element}/clear"),
            serde_json::json!({}),
        );
        self.type_text(&element, text);
    }

    /// Types `text` into the element with WebDriver id `element`, key by key.
    pub fn type_text(&self, element: &str, text: &str) {
        self.call(
            "POST",
            &format!("/element/{element}/value"),
            serde_json::json!({ "text": text }),
        );
    }

    pub fn wait_for(&self, script: &str) -> serde_json::Value {
        self.wait_for_within(script, std::time::Duration::from_secs(10))
    }

    /// [`Browser::wait_for`] with a time limit of `limit`.
    pub fn wait_for_within(&self, script: &str, limit: std::time::Duration) -> serde_json::Value {
        let deadline = std::time::Instant::now() + limit;
        loop {
            let v = self.script(script);
            if !v.is_null() && v != serde_json::json!(false) {
                return v;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting for: {script}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.try_call("DELETE", &format!("/session/{}", self.session), None);
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
