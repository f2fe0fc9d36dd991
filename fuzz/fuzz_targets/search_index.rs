//! The search indexer on arbitrary HTML: parsing a page, its words and
//! fragment, and the bundle of it must never panic. Input starting with a
//! zero byte is put inside a page's `data-pagefind-body`, so that most
//! runs reach the indexed text; any other input is the page as it is.
#![no_main]

use errata::search::SearchIndex;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let html = match data.split_first() {
        Some((0, body)) => {
            let body = String::from_utf8_lossy(body);
            format!("<html lang=en><body><main data-pagefind-body>{body}</main></body></html>")
        }
        _ => String::from_utf8_lossy(data).into_owned(),
    };
    let index = SearchIndex::start("en", ["a/", "b/"]);
    // The fragments written early, which the index may read back.
    let mut written = Vec::new();
    written.extend(index.add("a/index.html", html.as_bytes()));
    written.extend(index.add("b/index.html", b"<html><body><p>second page</p></body></html>"));
    let read = |path: &str| {
        written
            .iter()
            .find(|(name, _)| name == path)
            .map(|(_, bytes)| bytes.clone())
    };
    let files = index.finish(read).expect("a bundle");
    assert!(files.iter().any(|(name, _)| name == "pagefind/pagefind-entry.json"));
});
