//! Running one errata command as a child process and measuring it: wall time,
//! CPU time and peak resident memory (both polled from /proc while it runs)
//! and, for builds run with `--timings`, the time of each stage.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one run took.
#[derive(Clone, Debug, Default)]
pub struct Run {
    pub seconds: f64,
    /// User and system CPU time of all its threads, as last read (at most
    /// one poll, 5 ms, before it ended).
    pub cpu_seconds: f64,
    pub peak_mib: f64,
    /// `stage ms` pairs as printed by `--timings`, in order.
    pub stages: Vec<(String, f64)>,
}

fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// User plus system CPU time of process `pid`'s threads, in clock ticks:
/// fields 14 and 15 of `/proc/<pid>/stat`, after the command name (which
/// is in parentheses and may hold spaces).
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat.get(stat.rfind(')')? + 2..)?.split(' ');
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

/// Runs `bin args...` with `envs`, panicking with its output if it fails.
pub fn run(bin: &Path, args: &[&str], envs: &[(&str, &str)]) -> Run {
    let mut command = Command::new(bin);
    command
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in envs {
        command.env(k, v);
    }
    let start = Instant::now();
    let mut child = command.spawn().expect("errata starts");
    let pid = child.id();
    // Read the pipes on threads so that a chatty child never blocks.
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let (mut peak, mut ticks) = (0, 0);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        peak = peak.max(peak_kib(pid).unwrap_or(0));
        ticks = ticks.max(cpu_ticks(pid).unwrap_or(0));
        std::thread::sleep(Duration::from_millis(5));
    };
    let seconds = start.elapsed().as_secs_f64();
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    assert!(
        status.success(),
        "{} {args:?} failed: {status}\n{out}\n{err}",
        bin.display()
    );
    Run {
        seconds,
        // Linux's USER_HZ: 100 ticks a second on every architecture it
        // reports `/proc` times for.
        cpu_seconds: ticks as f64 / 100.0,
        peak_mib: peak as f64 / 1024.0,
        stages: stages(&format!("{out}\n{err}")),
    }
}

/// Parses `--timings` lines of the form `  stage   123 ms` (or `1.23 s`).
fn stages(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let stage = words.next()?;
            let value: f64 = words.next()?.parse().ok()?;
            let ms = match words.next()? {
                "ms" => value,
                "s" => value * 1000.0,
                _ => return None,
            };
            Some((stage.trim_end_matches(':').to_string(), ms))
        })
        .collect()
}

/// The median of `xs` (which must not be empty).
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The median of one figure of `runs` (which must not be empty).
pub fn median_of(runs: &[Run], figure: fn(&Run) -> f64) -> f64 {
    median(&runs.iter().map(figure).collect::<Vec<_>>())
}

/// A digest of every file under `dir` (paths and bytes), to compare outputs.
pub fn digest(dir: &Path) -> u64 {
    let mut files: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().to_path_buf())
        .collect();
    files.sort();
    // FNV-1a: a stable digest needs no dependency.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for path in files {
        feed(path.strip_prefix(dir).unwrap().to_string_lossy().as_bytes());
        feed(&std::fs::read(&path).unwrap());
    }
    hash
}
