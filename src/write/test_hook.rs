//! Test-only: with `ERRATA_TEST_PAUSE` set to one of these points, a build
//! stops there for good, after saying so on stderr, so that a test can kill
//! it at exactly that point. Never set it outside tests.
//! - `write:<n>`: after the n-th file is written to the staging folder
//!   (pages are written as they render, so this is during render);
//! - `swap`: the staging folder is complete, the swap not begun;
//! - `swapped`: the folders are exchanged, the old output not yet removed;
//! - `moved-aside`: the fallback swap, between its two renames.

use std::sync::OnceLock;

fn wanted() -> Option<&'static str> {
    static WANTED: OnceLock<Option<String>> = OnceLock::new();
    WANTED
        .get_or_init(|| std::env::var("ERRATA_TEST_PAUSE").ok())
        .as_deref()
}

pub(super) fn pause(point: &str) {
    if wanted() == Some(point) {
        eprintln!("errata: paused at {point} (ERRATA_TEST_PAUSE)");
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
}

pub(super) fn pause_after_write(count: usize) {
    if let Some(n) = wanted().and_then(|w| w.strip_prefix("write:"))
        && n.parse() == Ok(count)
    {
        pause(&format!("write:{count}"));
    }
}
