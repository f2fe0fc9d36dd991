//! Build benchmark: generates the synthetic corpus (benches/corpus.rs) and
//! builds it, printing pages per second, time per stage and peak memory.
//!
//! `cargo bench --bench build` runs 1,000 and 10,000 pages;
//! `ERRATA_BENCH_SIZES=1000,5000` picks other sizes. Each build runs in its
//! own child process so that peak memory (VmHWM) is that build's alone.

#[path = "../tests/support/copy_dir.rs"]
mod copy_dir;
mod corpus;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const CHILD: &str = "ERRATA_BENCH_CHILD";

fn peak_memory_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// In the child: build the site at `root` once and print the figures.
fn child(root: &Path) {
    let options = errata::BuildOptions {
        root: root.to_path_buf(),
        ..Default::default()
    };
    let start = Instant::now();
    let report = errata::build(&options).expect("the corpus builds");
    let total = start.elapsed().as_secs_f64();
    println!(
        "pages {} | html files {} | code blocks {} | total {:.2} s | {:.0} pages/s | peak memory {:.0} MiB",
        report.pages,
        report.html_files,
        report.code_blocks,
        total,
        report.pages as f64 / total,
        peak_memory_kib().unwrap_or(0) as f64 / 1024.0
    );
    // Edit one page and build again: only it is rendered; the rest come from
    // the incremental cache.
    let edited = root.join("content/s00/error-00000.md");
    let mut text = std::fs::read_to_string(&edited).expect("page 0 exists");
    text.push_str("\nOne more paragraph, edited for the incremental benchmark.\n");
    std::fs::write(&edited, text).expect("page 0 is writable");
    let start = Instant::now();
    let incremental = errata::build(&options).expect("the edited corpus builds");
    let again = start.elapsed().as_secs_f64();
    println!(
        "  one page edited: {:.2} s ({} of {} pages from cache), {:.1}% of the full build",
        again,
        incremental.cached_pages,
        incremental.pages,
        100.0 * again / total
    );
    // The offline check of the same site, which must not be slower than a build.
    let start = Instant::now();
    let problems = errata::check::check(&errata::check::CheckOptions {
        root: root.to_path_buf(),
        ..Default::default()
    })
    .expect("the corpus checks");
    let checked = start.elapsed().as_secs_f64();
    println!(
        "  errata check (offline): {:.2} s, {:.0}% of the full build, {} problem(s)",
        checked,
        100.0 * checked / total,
        problems.len()
    );
    let stages: Vec<String> = report
        .timings
        .iter()
        .map(|(stage, t)| format!("{stage} {:.0} ms", t.as_secs_f64() * 1000.0))
        .collect();
    println!("  stages: {}", stages.join(", "));
}

fn main() {
    if let Ok(root) = std::env::var(CHILD) {
        child(Path::new(&root));
        return;
    }
    let sizes: Vec<usize> = std::env::var("ERRATA_BENCH_SIZES")
        .unwrap_or_else(|_| "1000,10000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let (theme, data) = (repo.join("themes/default"), repo.join("data"));
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("errata build benchmark ({threads} threads)");
    for n in sizes {
        let dir = tempfile::tempdir().expect("temp dir");
        corpus::generate(dir.path(), n, &theme, &data);
        println!("== {n} pages");
        let status = Command::new(std::env::current_exe().expect("own path"))
            .env(CHILD, dir.path())
            .status()
            .expect("child runs");
        assert!(status.success(), "build of {n} pages failed");
    }
}
