//! `errata serve` as a user runs it, in a child process, on a fixture site;
//! with raw-socket helpers and the process's memory figures.

#![allow(dead_code)] // each test binary uses the part it needs

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

/// A running `errata serve --port 0`; interrupted (Ctrl-C) when dropped.
pub struct ServeProcess {
    pub port: u16,
    /// Its temporary folder (`TMPDIR`): serve keeps the site in memory, so
    /// nothing should appear here.
    pub tmp: tempfile::TempDir,
    child: std::process::Child,
}

impl ServeProcess {
    pub fn start(root: &Path) -> ServeProcess {
        let tmp = tempfile::tempdir().unwrap();
        // As a user runs it: in the site's folder, with the default
        // `--root .` (events name absolute paths; a relative root must
        // still see them).
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_errata"))
            .args(["serve", "--port", "0"])
            .current_dir(root)
            .env("TMPDIR", tmp.path())
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
                .recv_timeout(Duration::from_secs(60))
                .expect("serve starts");
            if line.starts_with("Serving ") {
                break line;
            }
        };
        let port = line
            .rsplit("http://127.0.0.1:")
            .next()
            .and_then(|rest| rest.split('/').next())
            .and_then(|p| p.parse().ok())
            .expect("a port in the Serving line");
        ServeProcess { port, tmp, child }
    }

    /// Interrupts it (Ctrl-C) and waits for it to exit.
    pub fn interrupt(&mut self) -> std::process::ExitStatus {
        std::process::Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        self.child.wait().unwrap()
    }

    /// A field of `/proc/<pid>/status` in KiB (`VmRSS`, `VmHWM`).
    pub fn memory_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{field}:")))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    /// The local `Host` value.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.interrupt();
        }
    }
}

/// Sends `request` on a new connection and reads until the server closes
/// it: the status (when a status line came back) and the whole response.
pub fn exchange(port: u16, request: &[u8]) -> (Option<u16>, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream
        .set_write_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    if stream.write_all(request).is_err() {
        return (None, String::new());
    }
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .strip_prefix("HTTP/1.")
        .and_then(|rest| rest.get(2..5))
        .and_then(|code| code.parse().ok());
    (status, text)
}

/// A `GET` with `Connection: close` and the given `Host` and extra headers.
pub fn get(path: &str, host: &str, extra: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n").into_bytes()
}
