//! Matching benchmark ("Find the fix"): how fast a log streams through the
//! matcher against 1,000 pages' patterns, and whether memory stays flat as
//! the log grows.
//!
//! The site is the default site's real pages plus synthetic ones up to
//! `ERRATA_MATCH_PAGES` (default 1,000), each with three patterns shaped
//! like the real ones (literal prefixes, alternations, named captures).
//! The log is the real logs of `tests/logs/` (see `SOURCES.md` there),
//! with lines of the synthetic errors between them, repeated to
//! `ERRATA_MATCH_MB` (default 256) MB.
//!
//! It reports:
//! - single-thread throughput of `Matcher::feed` in 64 KiB chunks, in
//!   MB/s of the thread's CPU time (one core, whatever else runs) and of
//!   wall-clock time (median of 3 runs), for that log and for one where no
//!   pattern matches (every error-looking line goes to the fuzzy fallback);
//! - `errata match` end to end on a file of that size and on one an eighth
//!   of it: wall time and peak memory (the two peaks should be about the
//!   same: the log streams).
//!
//! `cargo bench --bench match`

#[path = "../tests/support/copy_dir.rs"]
mod copy_dir;
#[allow(dead_code)] // the build benchmark uses the rest
mod measure;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

fn env_or(key: &str, default: usize) -> usize {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

const LIBS: &[&str] = &[
    "Tensor",
    "Kernel",
    "Stream",
    "Device",
    "Graph",
    "Cache",
    "Shard",
    "Queue",
    "Tokenizer",
    "Sampler",
    "Loader",
    "Engine",
    "Worker",
    "Scheduler",
    "Allocator",
    "Pipeline",
    "Quant",
    "Adapter",
    "Router",
    "Expert",
    "Attention",
    "Embedding",
    "Optimizer",
    "Checkpoint",
    "Runtime",
    "Compiler",
    "Launcher",
    "Collective",
    "Mesh",
    "Context",
    "Buffer",
    "Handle",
    "Plugin",
    "Session",
    "Profiler",
    "Backend",
    "Driver",
    "Module",
    "Layer",
    "Block",
];

const KINDS: &[&str] = &[
    "Timeout",
    "Overflow",
    "Mismatch",
    "Corrupt",
    "Missing",
    "Denied",
    "Busy",
    "Invalid",
    "Unsupported",
    "Exhausted",
    "Closed",
    "Stale",
    "Conflict",
    "Unavailable",
    "Aborted",
    "Deadlock",
    "Underflow",
    "Duplicate",
    "Unaligned",
    "Unknown",
    "Frozen",
    "Detached",
    "Expired",
    "Locked",
    "Partial",
];

/// Names for synthetic page `i` (distinct for i < 1,000).
fn names(i: usize) -> (&'static str, &'static str) {
    (LIBS[i % LIBS.len()], KINDS[(i / LIBS.len()) % KINDS.len()])
}

/// A synthetic triage page, front matter and a short body.
fn synthetic_page(i: usize) -> String {
    let (lib, kind) = names(i);
    let lower = format!("{}_{}", lib.to_lowercase(), kind.to_lowercase());
    [
        "---".to_string(),
        format!("title: \"Fix {lib}{kind}Error in run {i}\""),
        "description: \"A synthetic page for the match benchmark.\"".to_string(),
        format!("signature: \"{lib}{kind}Error: ... (code ...)\""),
        "patterns:".to_string(),
        format!("  - '{lib}{kind}Error: (?P<detail>.+?) \\(code (?P<code>\\d+)\\)'"),
        format!("  - '{lower}_failed(?:: (?P<reason>.+))?'"),
        format!("  - 'E{i:04} {lib}\\.(?:open|close|sync)\\(\\): (?P<what>timeout|refused|invalid \\w+)'"),
        "---".to_string(),
        "## Fix\n\nSynthetic.\n".to_string(),
    ]
    .join("\n")
}

/// A line of synthetic page `i`'s error, as a log would print it.
fn synthetic_line(i: usize) -> String {
    let (lib, kind) = names(i);
    format!(
        "[rank0]: {lib}{kind}Error: step {i} could not finish (code {})\n",
        i % 97
    )
}

/// The default site with synthetic pages up to `pages` in all.
fn site(dir: &Path, pages: usize) -> usize {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for part in ["content", "themes", "data"] {
        copy_dir::copy_dir(&repo.join(part), &dir.join(part));
    }
    std::fs::copy(repo.join("site.toml"), dir.join("site.toml")).unwrap();
    let real = walkdir::WalkDir::new(dir.join("content"))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .filter(|e| e.file_name() != "_index.md")
        .count();
    let folder = dir.join("content/bench");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("_index.md"), "---\ntitle: Bench\n---\n").unwrap();
    for i in 0..pages.saturating_sub(real) {
        std::fs::write(folder.join(format!("e{i:04}.md")), synthetic_page(i)).unwrap();
    }
    real
}

/// The real logs, each once, with synthetic error lines between them.
fn log_unit() -> Vec<u8> {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut logs: Vec<PathBuf> = walkdir::WalkDir::new(repo.join("tests/logs"))
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| e.into_path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    let mut out = Vec::new();
    for (k, log) in logs.iter().enumerate() {
        out.extend(std::fs::read(log).unwrap());
        out.extend(synthetic_line(k * 37 % 900).as_bytes());
    }
    out
}

/// `unit` repeated to at least `bytes`.
fn repeated(unit: &[u8], bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + unit.len());
    while out.len() < bytes {
        out.extend_from_slice(unit);
    }
    out
}

/// This thread's CPU time: what one core spent, whatever else the machine
/// is doing.
fn cpu_seconds() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

/// MB/s of one thread feeding `log` in 64 KiB chunks, by wall-clock time
/// and by the thread's CPU time (medians of 3), and how many pages matched.
fn throughput(m: &matcher::Matcher, log: &[u8]) -> (f64, f64, usize) {
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    let mut found = 0;
    for _ in 0..3 {
        let (start, start_cpu) = (Instant::now(), cpu_seconds());
        let mut scan = m.scan();
        for chunk in log.chunks(64 * 1024) {
            m.feed(&mut scan, chunk);
        }
        found = m.finish(scan).len();
        let mb = log.len() as f64 / 1e6;
        wall.push(mb / start.elapsed().as_secs_f64());
        cpu.push(mb / (cpu_seconds() - start_cpu));
    }
    (measure::median(&wall), measure::median(&cpu), found)
}

fn main() {
    let pages = env_or("ERRATA_MATCH_PAGES", 1000);
    let mb = env_or("ERRATA_MATCH_MB", 256);
    let dir = tempfile::tempdir().unwrap();
    let real = site(dir.path(), pages);
    let index = match errata::match_cmd::site_index(dir.path(), None) {
        Ok(index) => index,
        Err(problems) => panic!(
            "the bench site does not load: {:?}",
            &problems[..problems.len().min(5)]
        ),
    };
    let patterns: usize = index.pages.iter().map(|p| p.patterns.len()).sum();
    let compile = Instant::now();
    let m = matcher::Matcher::new(index).expect("the patterns compile");
    println!(
        "errata match benchmark: {} pages ({real} real), {patterns} patterns, compiled in {:.0} ms",
        m.pages().len(),
        compile.elapsed().as_secs_f64() * 1e3
    );

    let unit = log_unit();
    let log = repeated(&unit, mb << 20);
    let (wall, cpu, found) = throughput(&m, &log);
    println!(
        "  one thread, real logs: {cpu:.0} MB/s of CPU time ({wall:.0} MB/s wall-clock) over {} MB ({found} pages matched)",
        log.len() >> 20
    );
    // No pattern hits: keep only the no-match logs' lines, which are
    // error-looking but explained by no page.
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut quiet = Vec::new();
    for e in std::fs::read_dir(repo.join("tests/logs/no-match")).unwrap() {
        quiet.extend(std::fs::read(e.unwrap().path()).unwrap());
    }
    let quiet = repeated(&quiet, (mb << 20) / 4);
    let (wall, cpu, found) = throughput(&m, &quiet);
    println!(
        "  one thread, no pattern hits (fuzzy fallback on every error line): {cpu:.0} MB/s of CPU time ({wall:.0} MB/s wall-clock) over {} MB ({found} pages matched)",
        quiet.len() >> 20
    );
    drop((log, quiet));

    // End to end: the binary on a small and a large file.
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_errata"));
    let root = dir.path().to_string_lossy().into_owned();
    for size in [(mb << 20) / 8, mb << 20] {
        let path = dir.path().join(format!("big-{size}.log"));
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let mut written = 0;
        while written < size {
            file.write_all(&unit).unwrap();
            written += unit.len();
        }
        file.flush().unwrap();
        drop(file);
        let run = measure::run(
            &bin,
            &[
                "match",
                "--root",
                &root,
                "--format",
                "json",
                &path.to_string_lossy(),
            ],
            &[],
        );
        println!(
            "  errata match on {} MB: {:.2} s ({:.0} MB/s with loading the site), peak memory {:.0} MiB",
            written >> 20,
            run.seconds,
            written as f64 / 1e6 / run.seconds,
            run.peak_mib
        );
        std::fs::remove_file(&path).unwrap();
    }
}
