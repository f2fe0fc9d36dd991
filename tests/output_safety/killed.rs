//! Builds killed at each point before and after the swap, failed builds,
//! dead builds' staging folders, and two builds of one output at once.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::Site;
use crate::snapshot_support::snapshot_dir as snapshot;
use errata::BuildOptions;
use errata::output_dir::MARKER;

/// A running `errata build` that reports on stderr.
struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Running {
    fn start(mut command: Command) -> Running {
        let mut child = command
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Running { child, lines }
    }

    /// Waits until the build says it paused at `point`.
    fn wait_for_pause(&mut self, point: &str) {
        let wanted = format!("errata: paused at {point} ");
        let mut seen = Vec::new();
        loop {
            match self.lines.recv_timeout(Duration::from_secs(120)) {
                Ok(line) if line.starts_with(&wanted) => return,
                Ok(line) => seen.push(line),
                Err(_) => {
                    let _ = self.child.kill();
                    panic!("the build never paused at {point}; stderr: {seen:?}");
                }
            }
        }
    }

    /// SIGKILL, as an out-of-memory killer or a power cut would.
    fn kill(mut self) {
        self.child.kill().unwrap();
        let status = self.child.wait().unwrap();
        assert!(!status.success());
    }
}

/// Starts a build that stops at `point` and waits until it is there.
fn paused_build(site: &Site, point: &str) -> Running {
    let mut command = site.command();
    command.env("ERRATA_TEST_PAUSE", point);
    let mut running = Running::start(command);
    running.wait_for_pause(point);
    running
}

fn build_with_binary(site: &Site) {
    let out = site.command().output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Kills a build stopped at `point`, before the swap: the previous output
/// must be whole, and the next build must succeed and leave nothing behind.
fn kill_before_swap(point: &str, check_while_paused: impl FnOnce(&Site)) {
    let site = Site::new();
    site.edit("Before.");
    build_with_binary(&site);
    let before = snapshot(&site.public());
    site.edit("After.");

    let running = paused_build(&site, point);
    check_while_paused(&site);
    running.kill();
    assert_eq!(
        site.leftovers().len(),
        1,
        "the dead build left its staging folder"
    );
    assert_eq!(snapshot(&site.public()), before, "{point}");

    build_with_binary(&site);
    assert_eq!(site.leftovers(), Vec::<String>::new(), "{point}");
    let page =
        std::fs::read_to_string(site.public().join("guides/generated-0/index.html")).unwrap();
    assert!(page.contains("After."), "{page}");
    assert!(site.public().join(MARKER).is_file());
}

#[test]
fn a_build_killed_during_render_leaves_the_previous_output_whole() {
    kill_before_swap("write:10", |site| {
        // Render is under way: some pages are in the staging folder.
        let staging = site.root().join(&site.leftovers()[0]);
        let staged = snapshot(&staging);
        assert!(staged.len() > 5 && !staged.contains_key(Path::new("sitemap.xml")));
    });
}

#[test]
fn a_build_killed_before_the_swap_leaves_the_previous_output_whole() {
    kill_before_swap("swap", |site| {
        // The new site is complete beside the old one.
        let staging = site.root().join(&site.leftovers()[0]);
        assert!(staging.join("sitemap.xml").is_file());
        assert!(staging.join(MARKER).is_file());
    });
}

#[test]
fn the_swap_is_one_exchange_and_a_build_killed_after_it_leaves_the_new_output_whole() {
    let site = Site::new();
    site.edit("Before.");
    build_with_binary(&site);
    let before = snapshot(&site.public());
    site.edit("After.");
    // A reference build of the new site, elsewhere.
    let reference = tempfile::tempdir().unwrap();
    site.build_into(&reference.path().join("public"), false)
        .unwrap();
    let new_site = snapshot(&reference.path().join("public"));

    let running = paused_build(&site, "swapped");
    // Both folders are whole at once: the new site in place, the old one at
    // the staging folder's name. Two renames could not show this.
    let staging = site.root().join(&site.leftovers()[0]);
    assert_eq!(snapshot(&site.public()), new_site);
    assert_eq!(snapshot(&staging), before);
    running.kill();
    assert_eq!(snapshot(&site.public()), new_site);

    build_with_binary(&site);
    assert_eq!(site.leftovers(), Vec::<String>::new());
    assert_eq!(snapshot(&site.public()), new_site);
}

#[test]
fn the_next_build_removes_only_dead_builds_staging_folders() {
    let site = Site::new();
    build_with_binary(&site);
    let root = site.root();
    // A live build, stopped in render: its staging folder must survive.
    let live = paused_build(&site, "write:3");
    let live_staging = site.leftovers();
    assert_eq!(live_staging.len(), 1);
    // Dead builds' leftovers: marked, so provably errata's.
    for name in [
        ".public.tmp-999999",
        ".public.tmp-999998-2",
        ".public.old-999997",
    ] {
        std::fs::create_dir_all(root.join(name).join("deep")).unwrap();
        std::fs::write(root.join(name).join(MARKER), "").unwrap();
        std::fs::write(root.join(name).join("deep/index.html"), "old").unwrap();
    }
    // Killed before writing its marker: empty, removed.
    std::fs::create_dir(root.join(".public.tmp-999996")).unwrap();
    // Not provably errata's: kept.
    std::fs::create_dir(root.join(".public.tmp-999995")).unwrap();
    std::fs::write(root.join(".public.tmp-999995/notes"), "mine").unwrap();
    std::fs::create_dir(root.join(".public.tmp-cache")).unwrap();
    std::fs::write(root.join(".public.tmp-cache").join(MARKER), "").unwrap();
    std::fs::create_dir(root.join(".other.tmp-999994")).unwrap();
    std::fs::write(root.join(".other.tmp-999994").join(MARKER), "").unwrap();

    site.build_into(&site.public(), false).unwrap();
    let kept = [
        ".other.tmp-999994",
        ".public.tmp-999995",
        ".public.tmp-cache",
    ];
    let mut expected: Vec<String> = kept.iter().map(ToString::to_string).collect();
    expected.push(live_staging[0].clone());
    expected.sort();
    assert_eq!(site.leftovers(), expected);

    live.kill();
    site.build_into(&site.public(), false).unwrap();
    assert_eq!(site.leftovers(), kept);
}

#[test]
fn a_failed_build_reports_its_failure_before_anything_is_swapped() {
    let site = Site::new();
    build_with_binary(&site);
    let before = snapshot(&site.public());
    std::fs::write(
        site.root().join("content/guides/broken.md"),
        "---\ntitle: Broken\nsignature: B\n---\n[dead](@/nowhere.md)\n",
    )
    .unwrap();
    // A build that reached the swap would stop there; this one must fail first.
    let mut command = site.command();
    command.env("ERRATA_TEST_PAUSE", "swap");
    let mut running = Running::start(command);
    let mut stderr = Vec::new();
    let status = loop {
        if let Some(status) = running.child.try_wait().unwrap() {
            break status;
        }
        while let Ok(line) = running.lines.try_recv() {
            assert!(
                !line.starts_with("errata: paused at swap"),
                "reached the swap"
            );
            stderr.push(line);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    stderr.extend(running.lines.iter());
    assert_eq!(status.code(), Some(1), "{stderr:?}");
    assert!(
        stderr
            .iter()
            .any(|l| l.contains("content/guides/broken.md:5:1")),
        "{stderr:?}"
    );
    assert!(
        stderr
            .iter()
            .any(|l| l.contains("the output folder was not changed")),
        "{stderr:?}"
    );
    assert_eq!(snapshot(&site.public()), before);
    assert_eq!(site.leftovers(), Vec::<String>::new());
}

#[test]
fn concurrent_builds_of_one_output_both_succeed_and_leave_it_whole() {
    let site = Site::new();
    build_with_binary(&site);
    site.edit("Concurrent.");
    let reference = tempfile::tempdir().unwrap();
    site.build_into(&reference.path().join("public"), false)
        .unwrap();
    let children: Vec<Child> = (0..3)
        .map(|_| {
            site.command()
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(
        snapshot(&site.public()),
        snapshot(&reference.path().join("public"))
    );
    assert_eq!(site.leftovers(), Vec::<String>::new());
}

#[test]
fn a_build_killed_while_staging_into_the_spare_leaves_the_previous_output_whole() {
    let site = Site::new();
    site.edit("First.");
    build_with_binary(&site);
    site.edit("Second.");
    build_with_binary(&site);
    // The first output is now the spare, and the next build stages into it.
    let spare = site.root().join(".public.spare");
    assert!(spare.join(MARKER).is_file());
    let before = snapshot(&site.public());
    site.edit("Third.");
    let running = paused_build(&site, "write:3");
    assert!(!spare.exists(), "the build took the spare");
    running.kill();
    assert_eq!(snapshot(&site.public()), before);
    assert_eq!(site.leftovers().len(), 1);

    // The next build takes the dead build's folder as its spare and gives
    // what a clean build gives.
    build_with_binary(&site);
    assert_eq!(site.leftovers(), Vec::<String>::new());
    let reference = tempfile::tempdir().unwrap();
    errata::build(&BuildOptions {
        root: site.root().to_path_buf(),
        output: Some(reference.path().join("public")),
        clean: true,
        ..BuildOptions::default()
    })
    .unwrap();
    assert_eq!(
        snapshot(&site.public()),
        snapshot(&reference.path().join("public"))
    );
    let page =
        std::fs::read_to_string(site.public().join("guides/generated-0/index.html")).unwrap();
    assert!(page.contains("Third."), "{page}");
}
