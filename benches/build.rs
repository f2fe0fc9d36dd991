//! Build benchmark: the new `errata` binary against a baseline binary built
//! from an earlier git revision, in the same run, alternating, so that a
//! noisy machine cannot fake a win.
//!
//! `cargo bench --bench build` generates the synthetic corpora
//! (benches/corpus.rs: a realistic one whose code lines recur across pages,
//! and a distinct one where no line repeats) and, for each size, measures:
//! - cold builds (no cache, fresh output), baseline and new alternately;
//! - warm builds after a one-page body edit: the first after a cold build,
//!   and the median of three more (each stages into the output the one
//!   before replaced);
//! - `errata check` (offline);
//! - the stages of the new build (`--timings`), and peak memory;
//! - that the new output is byte-identical with the highlight memo off;
//! - what full-text search costs: the "new" line builds the corpus as it is,
//!   with search off (the default); the "search" line builds it with
//!   `[search] enabled = true` added to its `site.toml`, alternating with
//!   the others, and reports the time and memory Pagefind adds (by the
//!   medians, and round by round, in time and in CPU time), the bundle's
//!   size, and the match index's size per page.
//!
//! Settings (environment):
//! - `ERRATA_BENCH_SIZES` (default `1000,10000`; any size works, e.g.
//!   `100000`, which takes minutes per build);
//! - `ERRATA_BENCH_BASELINE`, a git revision (default [`BASELINE`], `main`
//!   before the performance work), or `none` to time the new binary alone;
//! - `ERRATA_BENCH_ROUNDS`, cold runs per binary (default 3);
//! - `ERRATA_BENCH_CORPORA` (default `realistic,distinct`);
//! - `ERRATA_BENCH_SEARCH=off` skips the builds with search on;
//! - `TMPDIR`: where the corpus and the builds' outputs go (a new temporary
//!   folder). `TMPDIR=/dev/shm` leaves the disk out, which matters on ext4
//!   without a journal: after many files were deleted there, each new file
//!   costs the kernel a scan of the recently deleted inodes of its folder's
//!   block group, and a build that makes 10k files in one folder (search's
//!   fragments) pays that 10k times;
//! - `ERRATA_BENCH_CORPUS_DIR=<dir>` only writes the corpus (the size and
//!   kind set above) into `<dir>` and exits, to profile by hand, e.g.
//!   `errata build --root <dir> --timings`; when several sizes or kinds are
//!   set, each goes to `<dir>/<size>-<kind>/`.

#[path = "../tests/support/copy_dir.rs"]
mod copy_dir;
mod corpus;
mod measure;

use std::path::{Path, PathBuf};
use std::process::Command;

use measure::{Run, digest, median, median_of, run};

/// `main` as it was before the performance work (issue "Performance").
const BASELINE: &str = "f53044a";

fn env_or(key: &str, default: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| default.to_string())
}

/// Builds `errata` at `rev` into `target/bench-baseline/` (kept between runs)
/// and returns the binary's path.
fn baseline_binary(repo: &Path, rev: &str) -> PathBuf {
    let dir = repo.join("target/bench-baseline");
    let src = dir.join(format!("src-{rev}"));
    let bin = dir.join("target/release/errata");
    let stamp = dir.join("built-from");
    if bin.exists() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == rev) {
        return bin;
    }
    println!(
        "building the baseline errata at {rev} (once; kept in {})",
        dir.display()
    );
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(&src).unwrap();
    let archive = Command::new("git")
        .current_dir(repo)
        .args(["archive", "--format=tar", "--end-of-options", rev])
        .output()
        .expect("git runs");
    assert!(
        archive.status.success(),
        "git archive {rev}: {}",
        String::from_utf8_lossy(&archive.stderr)
    );
    let mut tar = Command::new("tar")
        .current_dir(&src)
        .args(["-x", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("tar runs");
    std::io::Write::write_all(tar.stdin.as_mut().unwrap(), &archive.stdout).unwrap();
    assert!(tar.wait().unwrap().success());
    let status = Command::new(env!("CARGO"))
        .current_dir(&src)
        .args([
            "build",
            "--release",
            "--locked",
            "--bin",
            "errata",
            "--target-dir",
        ])
        .arg(dir.join("target"))
        .status()
        .expect("cargo runs");
    assert!(status.success(), "the baseline {rev} builds");
    std::fs::write(&stamp, rev).unwrap();
    bin
}

/// One cold build of `root` by `bin` into `root/public-<name>`.
fn cold(bin: &Path, root: &Path, name: &str, envs: &[(&str, &str)]) -> Run {
    let out = root.join(format!("public-{name}"));
    let _ = std::fs::remove_dir_all(root.join(".errata"));
    let _ = std::fs::remove_dir_all(&out);
    // The output a later build would stage into: a cold build has none.
    let _ = std::fs::remove_dir_all(root.join(format!(".public-{name}.spare")));
    run(
        bin,
        &[
            "build",
            "--root",
            &root.to_string_lossy(),
            "--output",
            &out.to_string_lossy(),
            "--timings",
        ],
        envs,
    )
}

fn figures(label: &str, runs: &[Run]) -> f64 {
    let secs: Vec<f64> = runs.iter().map(|r| r.seconds).collect();
    let peak = runs.iter().map(|r| r.peak_mib).fold(0.0, f64::max);
    let (lo, hi) = (
        secs.iter().copied().fold(f64::MAX, f64::min),
        secs.iter().copied().fold(0.0, f64::max),
    );
    let m = median(&secs);
    println!(
        "  {label:<9} cold build median {m:.2} s (range {lo:.2}–{hi:.2} s), peak memory {peak:.0} MiB"
    );
    m
}

/// One cold build by `bin` into `root/public-search` with `[search]
/// enabled = true` added to the corpus's `site.toml` (put back afterwards).
fn cold_with_search(bin: &Path, root: &Path) -> Run {
    let config = root.join("site.toml");
    let text = std::fs::read_to_string(&config).expect("site.toml");
    std::fs::write(&config, format!("{text}\n[search]\nenabled = true\n")).unwrap();
    let run = cold(bin, root, "search", &[]);
    std::fs::write(&config, text).unwrap();
    run
}

/// Bytes under `dir`, every file.
fn size_of(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.metadata().map_or(0, |m| m.len()))
        .sum()
}

/// What search costs: the time and memory the search index adds to a
/// cold build (the "new" runs, search off), its bundle's size, and the
/// match index's size per page.
fn search_figures(root: &Path, n: usize, without: &[Run], with: &[Run]) {
    let out = root.join("public-search");
    let match_index = std::fs::metadata(out.join("match-index.json")).map_or(0, |m| m.len());
    let bundle = size_of(&out.join("pagefind"));
    let off = median_of(without, |r| r.seconds);
    let on = figures("search", with);
    let peak = |runs: &[Run]| runs.iter().map(|r| r.peak_mib).fold(0.0, f64::max);
    println!(
        "  search    the index adds {:.2} s ({:+.1}% of the cold build without it) and {:+.0} MiB of peak memory; bundle {:.1} MiB ({:.0} B per page); match-index.json {:.1} KiB ({:.0} B per page)",
        on - off,
        100.0 * (on - off) / off,
        peak(with) - peak(without),
        bundle as f64 / 1_048_576.0,
        bundle as f64 / n as f64,
        match_index as f64 / 1024.0,
        match_index as f64 / n as f64
    );
    // Each round builds without search and then with it: on a machine
    // whose speed drifts, a round's pair compares better than the medians
    // do. CPU time counts what the index costs whatever the cores.
    let pairs = |f: fn(&Run) -> f64| -> Vec<f64> {
        without
            .iter()
            .zip(with)
            // A build too short for a clock tick has no CPU time to compare.
            .filter(|(off, _)| f(off) > 0.0)
            .map(|(off, on)| 100.0 * (f(on) - f(off)) / f(off))
            .collect()
    };
    let show = |xs: &[f64]| {
        if xs.is_empty() {
            return "none to compare".to_string();
        }
        let each: Vec<String> = xs.iter().map(|x| format!("{x:+.1}%")).collect();
        format!("{} (median {:+.1}%)", each.join(", "), median(xs))
    };
    let (wall, cpu) = (pairs(|r| r.seconds), pairs(|r| r.cpu_seconds));
    let cpu_off = median_of(without, |r| r.cpu_seconds);
    let cpu_on = median_of(with, |r| r.cpu_seconds);
    println!(
        "  search    by round (with against without): time {}; CPU time {} (medians {cpu_off:.1} and {cpu_on:.1} CPU-seconds)",
        show(&wall),
        show(&cpu),
    );
    let _ = std::fs::remove_dir_all(out);
}

fn stage_table(label: &str, runs: &[Run]) {
    let Some(first) = runs.first() else { return };
    let cells: Vec<String> = first
        .stages
        .iter()
        .map(|(stage, _)| {
            let ms: Vec<f64> = runs
                .iter()
                .filter_map(|r| r.stages.iter().find(|(s, _)| s == stage).map(|(_, ms)| *ms))
                .collect();
            format!("{stage} {:.0} ms", median(&ms))
        })
        .collect();
    println!("  {label:<9} stages: {}", cells.join(", "));
}

/// A baseline binary and the source tree it was built from (its theme and
/// data files are the ones it reads).
struct Baseline<'a> {
    bin: &'a Path,
    src: &'a Path,
}

fn bench(
    n: usize,
    kind: corpus::Kind,
    new: &Path,
    baseline: Option<Baseline<'_>>,
    rounds: usize,
    search: bool,
) {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    corpus::generate(
        root,
        n,
        kind,
        &repo.join("themes/default"),
        &repo.join("data"),
    );
    // The same pages with the baseline's own theme and data: a newer theme
    // or data file may use what the baseline does not know.
    let base_dir = tempfile::tempdir().expect("temp dir");
    let base_root = base_dir.path();
    if let Some(b) = &baseline {
        corpus::generate(
            base_root,
            n,
            kind,
            &b.src.join("themes/default"),
            &b.src.join("data"),
        );
    }
    println!("== {n} pages, {} corpus", kind.name());
    let (mut new_runs, mut base_runs, mut with_search) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        // Alternate which goes first, so that neither always gets a warm page cache.
        let order: Vec<bool> = if round % 2 == 0 {
            vec![false, true]
        } else {
            vec![true, false]
        };
        for is_new in order {
            match (is_new, &baseline) {
                (true, _) => new_runs.push(cold(new, root, "new", &[])),
                (false, Some(base)) => base_runs.push(cold(base.bin, base_root, "base", &[])),
                (false, None) => {}
            }
        }
        if search {
            with_search.push(cold_with_search(new, root));
        }
    }
    let new_median = figures("new", &new_runs);
    if search {
        search_figures(root, n, &new_runs, &with_search);
    }
    if !base_runs.is_empty() {
        let base_median = figures("baseline", &base_runs);
        println!(
            "  speed-up  {:.2}× (baseline median / new median)",
            base_median / new_median
        );
        stage_table("baseline", &base_runs);
    }
    stage_table("new", &new_runs);

    // The memo must change nothing: the same site with it off, byte for byte.
    if kind == corpus::Kind::Realistic && n <= 2_000 {
        cold(new, root, "nomemo", &[("ERRATA_HIGHLIGHT_MEMO", "off")]);
        let (a, b) = (
            digest(&root.join("public-new")),
            digest(&root.join("public-nomemo")),
        );
        assert_eq!(a, b, "the highlight memo changed the output");
        println!("  output with the highlight memo off: byte-identical");
        let _ = std::fs::remove_dir_all(root.join("public-nomemo"));
    }

    // Warm: rebuilds after a one-page body edit, on top of the new cold
    // build. The first has only the output to carry cached pages from (each
    // is hard-linked into a fresh folder tree); later ones stage into the
    // output the one before replaced, and write only what changed.
    let _ = std::fs::remove_dir_all(root.join(".errata"));
    let _ = std::fs::remove_dir_all(root.join("public-new"));
    cold(new, root, "new", &[]);
    let edited = root.join("content/s00/error-00000.md");
    let original = std::fs::read_to_string(&edited).expect("page 0 exists");
    let out = root.join("public-new");
    for (round, label) in ["first rebuild", "later rebuilds"].iter().enumerate() {
        let mut warm = Vec::new();
        for k in 0..(1 + 2 * round) {
            let text = format!(
                "{original}\nOne more paragraph ({round}.{k}), edited for the incremental benchmark.\n"
            );
            std::fs::write(&edited, text).expect("page 0 is writable");
            warm.push(run(
                new,
                &[
                    "build",
                    "--root",
                    &root.to_string_lossy(),
                    "--output",
                    &out.to_string_lossy(),
                    "--timings",
                ],
                &[],
            ));
        }
        let secs = median_of(&warm, |r| r.seconds);
        println!(
            "  new       one page edited, {label}: {secs:.2} s ({:.1}% of the cold build), peak memory {:.0} MiB",
            100.0 * secs / new_median,
            warm.iter().map(|r| r.peak_mib).fold(0.0, f64::max)
        );
        stage_table("warm", &warm);
    }
    std::fs::write(&edited, &original).expect("page 0 is writable");
    let check = run(new, &["check", "--root", &root.to_string_lossy()], &[]);
    println!(
        "  new       errata check (offline): {:.2} s ({:.0}% of the cold build), peak memory {:.0} MiB",
        check.seconds,
        100.0 * check.seconds / new_median,
        check.peak_mib
    );
}

/// `ERRATA_BENCH_CORPUS_DIR`: writes the corpus asked for into `dir` (each
/// into `<dir>/<size>-<kind>/` when several are) and nothing else.
fn write_corpora(dir: &Path, sizes: &[usize], kinds: &[corpus::Kind]) {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let several = sizes.len() * kinds.len() > 1;
    for &n in sizes {
        for &kind in kinds {
            let root = if several {
                dir.join(format!("{n}-{}", kind.name()))
            } else {
                dir.to_path_buf()
            };
            corpus::generate(
                &root,
                n,
                kind,
                &repo.join("themes/default"),
                &repo.join("data"),
            );
            println!(
                "wrote the {n}-page {} corpus to {}",
                kind.name(),
                root.display()
            );
        }
    }
}

fn main() {
    let sizes: Vec<usize> = env_or("ERRATA_BENCH_SIZES", "1000,10000")
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let rounds: usize = env_or("ERRATA_BENCH_ROUNDS", "3")
        .parse()
        .unwrap_or(3)
        .max(1);
    let kinds: Vec<corpus::Kind> = env_or("ERRATA_BENCH_CORPORA", "realistic,distinct")
        .split(',')
        .filter_map(|k| match k.trim() {
            "realistic" => Some(corpus::Kind::Realistic),
            "distinct" => Some(corpus::Kind::Distinct),
            _ => None,
        })
        .collect();
    if let Ok(dir) = std::env::var("ERRATA_BENCH_CORPUS_DIR") {
        write_corpora(Path::new(&dir), &sizes, &kinds);
        return;
    }
    let search = env_or("ERRATA_BENCH_SEARCH", "on") != "off";
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let new = PathBuf::from(env!("CARGO_BIN_EXE_errata"));
    let rev = env_or("ERRATA_BENCH_BASELINE", BASELINE);
    let baseline = (rev != "none").then(|| baseline_binary(&repo, &rev));
    let base_src = repo
        .join("target/bench-baseline")
        .join(format!("src-{rev}"));
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "errata build benchmark: {threads} threads, baseline {}, {rounds} cold runs each",
        baseline
            .as_ref()
            .map_or("none".to_string(), |_| rev.clone())
    );
    for n in sizes {
        for &kind in &kinds {
            let base = baseline.as_deref().map(|bin| Baseline {
                bin,
                src: &base_src,
            });
            bench(n, kind, &new, base, rounds, search);
        }
    }
}
