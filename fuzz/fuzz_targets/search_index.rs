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
    index.add("a/index.html", html.as_bytes());
    index.add("b/index.html", b"<html><body><p>second page</p></body></html>");
    let files = index.finish().expect("a bundle");
    assert!(files.iter().any(|(name, _)| name == "pagefind/pagefind-entry.json"));
});
