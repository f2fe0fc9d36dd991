use super::*;

// ---- errata serve ----

/// `errata serve` running on a free port (see [`ServeProcess`]), with the
/// page helpers the serve tests use.
pub struct Served(ServeProcess);

impl std::ops::Deref for Served {
    type Target = ServeProcess;
    fn deref(&self) -> &ServeProcess {
        &self.0
    }
}

impl std::ops::DerefMut for Served {
    fn deref_mut(&mut self) -> &mut ServeProcess {
        &mut self.0
    }
}

impl Served {
    pub fn start(root: &Path) -> Served {
        Served(ServeProcess::start(root))
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
}
