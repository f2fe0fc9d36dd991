//! `errata match` and the site's box on any log, against the default
//! site's pages: matching must never panic, and a log fed in chunks (as
//! the CLI reads a file and the page's worker a paste) must match exactly
//! as the same log fed whole, wherever the chunks split a line, a CRLF, an
//! ANSI sequence or a multi-byte character. The first byte picks the chunk
//! size; the rest is the log.
#![no_main]

use std::path::Path;
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;

static MATCHER: LazyLock<matcher::Matcher> = LazyLock::new(|| {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let index = errata::match_cmd::site_index(&root, None).expect("the default site loads");
    matcher::Matcher::new(index).expect("the default site's patterns compile")
});

fn chunked(log: &[u8], size: usize) -> String {
    let mut scan = MATCHER.scan();
    for piece in log.chunks(size) {
        MATCHER.feed(&mut scan, piece);
    }
    matcher::to_json(&MATCHER.finish(scan))
}

fuzz_target!(|data: &[u8]| {
    let Some((&size, log)) = data.split_first() else {
        return;
    };
    let whole = matcher::to_json(&MATCHER.match_bytes(log));
    let size = usize::from(size).max(1);
    assert_eq!(chunked(log, size), whole, "in chunks of {size}");
    if log.len() <= 4096 {
        assert_eq!(chunked(log, 1), whole, "a byte at a time");
    }
});
