//! `site.toml`: any text is a config or a list of located errors, never a
//! panic. Parsed against this repository, so the default theme is found and
//! the whole validation runs.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let lines = text.lines().count() + 1;
    if let Err(all) = errata::config::Config::parse(&root, text) {
        assert!(!all.is_empty());
        for d in all {
            assert!(d.line >= 1 && d.line <= lines, "{d} is outside the file");
        }
    }
});
