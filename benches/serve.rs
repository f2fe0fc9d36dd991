//! Dev-server benchmark: with `errata serve` on a large site, how long a
//! saved edit takes to reach an open tab as its live-reload message.
//!
//! It writes the realistic corpus (benches/corpus.rs) of
//! `ERRATA_SERVE_PAGES` pages (default 10,000), starts `errata serve` on
//! it, opens the live-reload WebSocket as a browser tab does, then edits
//! one page `ERRATA_SERVE_EDITS` times (default 9): a body edit, then a
//! title edit (which re-renders the lists that show it), in turn. Each
//! edit is timed from the moment the file is written to the moment the
//! tab receives `reload` (the server sends it once the new site is
//! served). It prints each time, the median and the maximum, for each
//! kind of edit, and the server's resident memory. `ERRATA_SERVE_SEARCH=on`
//! turns full-text search on in the corpus's `site.toml`.
//!
//! `cargo bench --bench serve`

#[path = "../tests/support/copy_dir.rs"]
mod copy_dir;
#[allow(dead_code)] // the build benchmark uses the rest
mod corpus;
#[path = "../tests/support/serve_process.rs"]
mod serve_process;

use std::path::PathBuf;
use std::time::{Duration, Instant};

fn env_or(key: &str, default: usize) -> usize {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let pages = env_or("ERRATA_SERVE_PAGES", 10_000);
    let edits = env_or("ERRATA_SERVE_EDITS", 9);
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    corpus::generate(
        root,
        pages,
        corpus::Kind::Realistic,
        &repo.join("themes/default"),
        &repo.join("data"),
    );
    let search = std::env::var("ERRATA_SERVE_SEARCH").is_ok_and(|v| v == "on");
    if search {
        let config = root.join("site.toml");
        let mut text = std::fs::read_to_string(&config).expect("the corpus's site.toml");
        text.push_str("\n[search]\nenabled = true\n");
        std::fs::write(&config, text).expect("the corpus's site.toml");
    }
    let start = Instant::now();
    let served = serve_process::ServeProcess::start(root);
    println!(
        "== errata serve, {pages} pages{}: first build and start {:.1} s, {} MiB resident",
        if search { ", search on" } else { "" },
        start.elapsed().as_secs_f64(),
        served.memory_kib("VmRSS") / 1024
    );
    let (mut tab, _) = tungstenite::connect(format!(
        "ws://127.0.0.1:{}/__errata/livereload",
        served.port
    ))
    .expect("the live-reload socket opens");
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = tab.get_mut() {
        s.set_read_timeout(Some(Duration::from_secs(120)))
            .expect("a timeout");
    }
    // A page in the middle of the first section.
    let page = walkdir::WalkDir::new(root.join("content"))
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() != "_index.md" && e.path().extension().is_some_and(|x| x == "md"))
        .nth(pages / 40)
        .expect("a page")
        .into_path();
    let original = std::fs::read_to_string(&page).expect("the page");
    let title = original
        .lines()
        .find(|l| l.starts_with("title:"))
        .expect("a title")
        .to_string();
    let (mut body, mut titles) = (Vec::new(), Vec::new());
    for n in 0..edits {
        // Let the server settle, as between two saves by hand.
        std::thread::sleep(Duration::from_millis(500));
        let is_title = n % 2 == 1;
        let text = if is_title {
            // Inside the quotes: the title stays valid YAML.
            let edited = match title.strip_suffix('"') {
                Some(open) => format!("{open} (edit {n})\""),
                None => format!("{title} (edit {n})"),
            };
            original.replacen(&title, &edited, 1)
        } else {
            format!("{original}\nEdit {n}.\n")
        };
        let t0 = Instant::now();
        std::fs::write(&page, text).expect("the edit");
        loop {
            let message = tab.read().expect("a live-reload message");
            if message.to_text().is_ok_and(|m| m == "reload") {
                break;
            }
        }
        let took = t0.elapsed().as_secs_f64() * 1000.0;
        if is_title { &mut titles } else { &mut body }.push(took);
    }
    for (what, times) in [("body edit", &mut body), ("title edit", &mut titles)] {
        if times.is_empty() {
            continue;
        }
        let shown: Vec<String> = times.iter().map(|t| format!("{t:.0}")).collect();
        times.sort_by(f64::total_cmp);
        println!(
            "{what}: edit to reload median {:.0} ms, max {:.0} ms ({} ms)",
            times[times.len() / 2],
            times[times.len() - 1],
            shown.join(", ")
        );
    }
    println!(
        "resident memory after the edits: {} MiB (peak {} MiB)",
        served.memory_kib("VmRSS") / 1024,
        served.memory_kib("VmHWM") / 1024
    );
}
