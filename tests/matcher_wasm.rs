//! The matcher's committed WebAssembly (what the paste box runs) against its
//! source and against the native matcher (what `errata match` runs), on
//! every fixture log.

#[path = "support/copy_dir.rs"]
mod copy_dir_support;
#[path = "build/support/tools.rs"]
#[allow(dead_code, reason = "this binary uses only missing_tool")]
mod tools;
#[path = "support/wasm.rs"]
mod wasm_support;

use std::path::Path;

use wasm_support::Wasm;

const REPO: &str = env!("CARGO_MANIFEST_DIR");
const WASM: &str = "themes/default/static/wasm/matcher.wasm";

/// The committed `matcher.wasm`, driven the way find-worker.js drives it.
struct MatcherWasm(Wasm);

impl MatcherWasm {
    fn load() -> MatcherWasm {
        MatcherWasm(Wasm::load(&Path::new(REPO).join(WASM)))
    }

    fn with_bytes<R>(&mut self, bytes: &[u8], f: impl FnOnce(&mut Wasm, i32, i32) -> R) -> R {
        let len = bytes.len() as i32;
        let at: i32 = self.0.call("alloc", len);
        self.0.write(at, bytes);
        let result = f(&mut self.0, at, len);
        self.0.call::<(i32, i32), ()>("dealloc", (at, len));
        result
    }

    fn answer(&mut self) -> String {
        let at: i32 = self.0.call("answer_ptr", ());
        let len: i32 = self.0.call("answer_len", ());
        String::from_utf8(self.0.read(at, len)).unwrap()
    }

    fn index(&mut self, json: &str) -> Result<(), String> {
        let code: i32 = self.with_bytes(json.as_bytes(), |w, at, len| w.call("load", (at, len)));
        if code == 0 {
            Ok(())
        } else {
            Err(self.answer())
        }
    }

    fn matches(&mut self, log: &[u8], chunk: usize) -> String {
        self.0.call::<(), ()>("begin", ());
        for piece in log.chunks(chunk.max(1)) {
            self.with_bytes(piece, |w, at, len| {
                w.call::<(i32, i32), ()>("feed", (at, len))
            });
        }
        self.0.call::<(), ()>("finish", ());
        self.answer()
    }
}

/// Every fixture log's bytes, with its path.
fn logs() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(Path::new(REPO).join("tests/logs")).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.path().extension().is_some_and(|e| e == "log") {
            out.push((
                entry.path().display().to_string(),
                std::fs::read(entry.path()).unwrap(),
            ));
        }
    }
    out
}

#[test]
fn committed_wasm_gives_the_native_matches_on_every_fixture_log() {
    let mut indexes = vec![errata::match_cmd::site_index(Path::new(REPO), None).unwrap()];
    // A site with more pages, so ranking is compared too.
    let rank = tempfile::tempdir().unwrap();
    copy_dir_support::copy_dir(
        &Path::new(REPO).join("tests/fixtures/match_rank"),
        rank.path(),
    );
    copy_dir_support::copy_dir(
        &Path::new(REPO).join("themes/default"),
        &rank.path().join("themes/default"),
    );
    indexes.push(errata::match_cmd::site_index(rank.path(), None).unwrap());

    let mut hard =
        b"\x1b[31m[rank0]: CUDA out of memory. Tried to allocate 2.00 GiB\x1b[0m\r\n".to_vec();
    hard.extend((0..=255u8).cycle().take(20_000));
    hard.extend(b"\n 10%|#  |\r100%|##|\rMQEngineDeadError: Engine loop is not running\n\xff\xfe");
    let mut cases = logs();
    cases.push(("hostile bytes".into(), hard));
    cases.push((
        "fuzzy".into(),
        b"RuntimeError: CUDA out of memory. Tried to allocate more (GPU 0)\n".to_vec(),
    ));

    let mut wasm = MatcherWasm::load();
    let mut compared = 0;
    let mut matched = 0;
    for index in indexes {
        let json = serde_json::to_string(&index).unwrap();
        wasm.index(&json).unwrap();
        let native = matcher::Matcher::new(index).unwrap();
        for (name, log) in &cases {
            let expected = matcher::to_json(&native.match_bytes(log));
            // Whole, and in chunks that split lines (wasmi interprets: keep it brief).
            for chunk in [log.len(), 4096] {
                assert_eq!(
                    wasm.matches(log, chunk),
                    expected,
                    "{name}, chunks of {chunk}"
                );
            }
            compared += 1;
            matched += usize::from(expected != r#"{"matches":[]}"#);
        }
    }
    assert!(
        compared >= 2 * 9 && matched >= 2 * 6,
        "{compared} compared, {matched} matched"
    );
    // A bad index is refused with a message, as JSON parsing or compiling.
    assert!(wasm.index("{").unwrap_err().contains("not valid"));
    let bad = r#"{"version":1,"pages":[{"url":"/","title":"t","signature":"s","source":"x","patterns":["("]}]}"#;
    assert!(wasm.index(bad).unwrap_err().contains("does not compile"));
    let size = std::fs::metadata(Path::new(REPO).join(WASM)).unwrap().len();
    assert!(
        size < 1024 * 1024,
        "matcher.wasm is {size} bytes; keep it under 1 MiB"
    );
}

#[test]
fn committed_wasm_matches_its_source() {
    if !wasm_support::target_installed() {
        tools::missing_tool(
            "committed_wasm_matches_its_source",
            "the wasm32-unknown-unknown target is not installed",
            "it with `rustup target add wasm32-unknown-unknown`",
        );
        return;
    }
    let built = wasm_support::build(Path::new(REPO), "matcher");
    let committed = std::fs::read(Path::new(REPO).join(WASM)).unwrap();
    assert!(
        built == committed,
        "{WASM} is stale: run crates/matcher/build-wasm.sh and commit the result"
    );
}
