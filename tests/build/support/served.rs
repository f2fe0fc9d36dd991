use super::*;

// ---- errata serve ----

/// `errata serve` running on a free port, stopped with SIGINT on drop.
pub struct Served {
    pub child: std::process::Child,
    pub port: u16,
    pub dir: PathBuf,
}

impl Served {
    pub fn start(root: &Path) -> Served {
        let port = free_port();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_errata"))
            .args(["serve", "--port", &port.to_string(), "--root"])
            .arg(root)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let line = loop {
            let line = rx
                .recv_timeout(std::time::Duration::from_secs(30))
                .expect("serve starts");
            if line.starts_with("Serving ") {
                break line;
            }
        };
        let dir = PathBuf::from(
            line.trim_start_matches("Serving ")
                .split(" at ")
                .next()
                .unwrap(),
        );
        Served { child, port, dir }
    }

    pub fn url(&self, path: &str) -> url::Url {
        url::Url::parse(&format!("http://127.0.0.1:{}{path}", self.port)).unwrap()
    }

    pub fn get(&self, path: &str) -> (u16, String) {
        http_get(&self.url(path))
    }

    pub fn wait_until(
        &self,
        path: &str,
        what: &str,
        check: impl Fn(&str) -> bool,
    ) -> std::time::Duration {
        let start = std::time::Instant::now();
        loop {
            if check(&self.get(path).1) {
                return start.elapsed();
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(10),
                "timed out waiting for {what}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    pub fn interrupt(&mut self) -> std::process::ExitStatus {
        std::process::Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        self.child.wait().unwrap()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}
