//! Tests that need a tool this machine may lack (Chromium, chromedriver, the
//! wasm target) ask for it here. Outside CI a missing tool skips the test with
//! one visible line saying what to install; under `CI=true` it fails instead.

use std::path::PathBuf;

/// Whether this run is CI's (`CI=true`, as GitHub Actions and `.ci/run` set it).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Reports a missing tool: a `skipped:` line outside CI, a failure under CI.
/// Returns so that the caller can `return` from the test.
pub fn missing_tool(test: &str, why: &str, install: &str) {
    if in_ci() {
        panic!("{test}: {why}; install {install} (CI=true: this test must run)");
    }
    // Written straight to the terminal: cargo test captures stderr of passing
    // tests, and a skip must be visible.
    let line = format!("skipped: {test}: {why}, install {install}\n");
    if let Ok(mut tty) = std::fs::OpenOptions::new().write(true).open("/dev/tty") {
        use std::io::Write;
        let _ = tty.write_all(line.as_bytes());
    }
    eprint!("{line}");
}

/// The first of `/usr/bin/NAME` and `/usr/local/bin/NAME` that exists.
pub fn find_tool(name: &str) -> Option<PathBuf> {
    ["/usr/bin/", "/usr/local/bin/"]
        .iter()
        .map(|d| PathBuf::from(d).join(name))
        .find(|p| p.exists())
}
