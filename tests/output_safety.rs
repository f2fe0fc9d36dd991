//! Nothing lost (issue 10): the output folder is resolved before it is
//! compared, errata replaces only a folder it built itself, a symlinked
//! output stays a symlink, the swap is atomic, and a build killed at any
//! point leaves the previous output whole for the next build to clean up.

#[path = "support/copy_dir.rs"]
mod copy_dir_support;
#[path = "support/snapshot.rs"]
mod snapshot_support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use copy_dir_support::copy_dir;
use errata::output_dir::MARKER;
use errata::{BuildError, BuildOptions};
use snapshot_support::snapshot_dir as snapshot;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The `basic` fixture plus enough pages that a build spends a while in
/// render, in a temporary folder.
struct Site {
    dir: tempfile::TempDir,
}

impl Site {
    fn new() -> Site {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        copy_dir(&Path::new(REPO).join("tests/fixtures/basic"), root);
        copy_dir(
            &Path::new(REPO).join("themes/default"),
            &root.join("themes/default"),
        );
        copy_dir(&Path::new(REPO).join("data"), &root.join("data"));
        for i in 0..30 {
            std::fs::write(
                root.join(format!("content/guides/generated-{i}.md")),
                format!(
                    "---\ntitle: Generated {i}\nsignature: GeneratedError{i}\n---\nBody {i}.\n"
                ),
            )
            .unwrap();
        }
        Site { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn public(&self) -> PathBuf {
        self.root().join("public")
    }

    fn build_into(&self, output: &Path, force: bool) -> Result<(), String> {
        errata::build(&BuildOptions {
            root: self.root().to_path_buf(),
            output: Some(output.to_path_buf()),
            force,
            ..BuildOptions::default()
        })
        .map(|_| ())
        .map_err(|e| match e {
            BuildError::Usage(message) => message,
            other => panic!("expected a usage error, got {other:?}"),
        })
    }

    /// Changes a page, so the next build's output differs from the last.
    fn edit(&self, text: &str) {
        std::fs::write(
            self.root().join("content/guides/generated-0.md"),
            format!("---\ntitle: Generated 0\nsignature: GeneratedError0\n---\n{text}\n"),
        )
        .unwrap();
    }

    /// The real `errata build`, at `root`.
    fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_errata"));
        command.current_dir(self.root()).arg("build");
        command
    }

    /// Names in the site root that look like staging folders.
    fn leftovers(&self) -> Vec<String> {
        leftovers_in(self.root())
    }
}

fn leftovers_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-") || n.contains(".old-"))
        .collect();
    names.sort();
    names
}

fn assert_refused(site: &Site, output: &Path, why: &str) {
    let before = snapshot(site.root());
    let message = site
        .build_into(output, true)
        .expect_err(&output.display().to_string());
    assert!(
        message.contains("refusing to use") && message.contains(why),
        "{}: {message}",
        output.display()
    );
    assert!(
        message.contains("\nhelp: build into a folder of its own"),
        "{message}"
    );
    assert_eq!(snapshot(site.root()), before, "{}", output.display());
    assert_eq!(site.leftovers(), Vec::<String>::new());
}

#[test]
fn outputs_that_resolve_to_the_site_or_its_sources_are_refused_even_with_force() {
    let site = Site::new();
    let root = site.root();
    let inside = "inside the source folder";
    let is_root = "it is the site's root folder";
    for (output, why) in [
        (root.join("x/../content"), inside),
        (root.join("content/guides/../guides"), inside),
        (root.join("public/../themes/default/templates"), inside),
        (root.join("data/new-folder"), inside),
        (root.join(".errata/x"), inside),
        (root.join("src"), inside),
        (root.to_path_buf(), is_root),
        (root.join("content/.."), is_root),
        (root.join("."), is_root),
        (
            root.parent().unwrap().to_path_buf(),
            "it holds the site's root folder",
        ),
        (PathBuf::from("/"), "it holds the site's root folder"),
    ] {
        assert_refused(&site, &output, why);
    }
}

#[cfg(unix)]
#[test]
fn symlinks_into_sources_are_seen_through() {
    use std::os::unix::fs::symlink;
    let site = Site::new();
    let root = site.root();
    symlink(root.join("content"), root.join("out")).unwrap();
    assert_refused(&site, &root.join("out"), "inside the source folder");
    assert_refused(&site, &root.join("out/guides"), "inside the source folder");
    // `link/..` is the folder above the link's target, as the OS reads it.
    symlink(root.join("content/guides"), root.join("deep")).unwrap();
    assert_refused(&site, &root.join("deep/.."), "inside the source folder");
    // A symlink elsewhere pointing back at the site root.
    let elsewhere = tempfile::tempdir().unwrap();
    symlink(root, elsewhere.path().join("site")).unwrap();
    assert_refused(
        &site,
        &elsewhere.path().join("site"),
        "the site's root folder",
    );
    // A source folder that is itself a symlink protects its target.
    let theme_home = tempfile::tempdir().unwrap();
    std::fs::rename(
        root.join("themes/default"),
        theme_home.path().join("default"),
    )
    .unwrap();
    symlink(
        theme_home.path().join("default"),
        root.join("themes/default"),
    )
    .unwrap();
    assert_refused(
        &site,
        &theme_home.path().join("default/static"),
        "inside the source folder",
    );
    assert!(site.public().symlink_metadata().is_err());
}

#[test]
fn relative_output_forms_are_resolved_against_the_current_folder() {
    let site = Site::new();
    let before = snapshot(site.root());
    for output in ["x/../content", "./content/", "content/guides/..", "."] {
        let out = site.command().args(["--output", output]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{output}: {stderr}");
        assert!(
            stderr.contains("error: refusing to use") && stderr.contains(output),
            "{output}: {stderr}"
        );
        assert_eq!(snapshot(site.root()), before, "{output}");
    }
}

#[test]
fn the_home_folder_is_refused_even_with_force() {
    let site = Site::new();
    let home = tempfile::tempdir().unwrap();
    let user = home.path().join("user");
    std::fs::create_dir_all(user.join("Documents")).unwrap();
    std::fs::write(user.join("Documents/thesis.tex"), "years of work").unwrap();
    for output in [user.clone(), home.path().to_path_buf()] {
        let out = site
            .command()
            .env("HOME", &user)
            .arg("--force")
            .arg("--output")
            .arg(&output)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("your home folder"), "{stderr}");
    }
    assert_eq!(
        std::fs::read(user.join("Documents/thesis.tex")).unwrap(),
        b"years of work"
    );
}

#[cfg(unix)]
#[test]
fn a_mount_point_is_refused_before_the_build() {
    use std::os::unix::fs::MetadataExt;
    let dev = |p: &Path| std::fs::metadata(p).map(|m| m.dev()).ok();
    // A folder on another device than its parent is a mount point.
    let mount = ["/proc", "/sys", "/dev", "/dev/shm", "/run", "/tmp"]
        .into_iter()
        .map(Path::new)
        .find(|p| dev(p).is_some() && dev(p) != p.parent().and_then(dev));
    let Some(mount) = mount else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "no mount point found among /proc, /sys, /dev, /run and /tmp"
        );
        eprintln!("skipped: no mount point found here to build into");
        return;
    };
    let site = Site::new();
    let message = site.build_into(mount, false).unwrap_err();
    assert!(message.contains("it is a mount point"), "{message}");
    let inside = mount.join("site");
    assert!(
        message.contains(&format!(
            "help: build into a folder inside it, such as {}",
            inside.display()
        )),
        "{message}"
    );
    assert_eq!(site.leftovers(), Vec::<String>::new());
}

#[test]
fn an_existing_file_is_refused_as_output() {
    let site = Site::new();
    let root = site.root();
    assert_refused(&site, &root.join("site.toml"), "it is an existing file");
    assert!(root.join("site.toml").is_file());
    std::fs::write(root.join("notes.txt"), "mine").unwrap();
    assert_refused(&site, &root.join("notes.txt"), "it is an existing file");
    assert_eq!(std::fs::read(root.join("notes.txt")).unwrap(), b"mine");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(root.join("notes.txt"), root.join("link.txt")).unwrap();
        assert_refused(&site, &root.join("link.txt"), "it is an existing file");
    }
}

#[test]
fn a_folder_errata_did_not_build_is_replaced_only_with_force() {
    let site = Site::new();
    let theirs = site.root().join("docs");
    std::fs::create_dir_all(theirs.join("keep")).unwrap();
    std::fs::write(theirs.join("keep/notes.md"), "precious").unwrap();

    let out = site.command().args(["--output", "docs"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("errata did not build"), "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("help:") && l.contains("--force")),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(theirs.join("keep/notes.md")).unwrap(),
        b"precious"
    );
    assert_eq!(site.leftovers(), Vec::<String>::new());

    let out = site
        .command()
        .args(["--output", "docs", "--force"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!theirs.join("keep").exists());
    assert!(theirs.join("index.html").is_file());
    assert!(theirs.join(MARKER).is_file());
    // Now errata built it, so it is replaced without --force.
    site.build_into(&theirs, false).unwrap();
    assert_eq!(site.leftovers(), Vec::<String>::new());
}

#[test]
fn only_a_marked_folder_is_replaced_and_empty_folders_are_fine() {
    let site = Site::new();
    let public = site.public();
    std::fs::create_dir(&public).unwrap();
    site.build_into(&public, false).unwrap();
    let built = snapshot(&public);
    assert!(built.contains_key(Path::new(MARKER)));
    site.build_into(&public, false).unwrap();
    assert_eq!(snapshot(&public), built, "rebuilt in place, same bytes");
    // Without the marker, the folder is someone else's.
    std::fs::remove_file(public.join(MARKER)).unwrap();
    let message = site.build_into(&public, false).unwrap_err();
    assert!(
        message.contains("help: ") && message.contains("--force"),
        "{message}"
    );
    assert!(public.join("index.html").is_file());
    // A marker that is a symlink is not a marker.
    #[cfg(unix)]
    {
        std::fs::write(site.root().join("elsewhere"), "").unwrap();
        std::os::unix::fs::symlink(site.root().join("elsewhere"), public.join(MARKER)).unwrap();
        assert!(site.build_into(&public, false).is_err());
    }
}

#[cfg(unix)]
#[test]
fn a_symlinked_output_stays_a_symlink_and_its_target_gets_the_site() {
    let site = Site::new();
    let hosting = tempfile::tempdir().unwrap();
    let target = hosting.path().join("www");
    std::fs::create_dir(&target).unwrap();
    std::os::unix::fs::symlink(&target, site.public()).unwrap();
    for round in 0..2 {
        site.edit(&format!("Round {round}."));
        site.build_into(&site.public(), false).unwrap();
        assert!(
            site.public()
                .symlink_metadata()
                .unwrap()
                .file_type()
                .is_symlink(),
            "round {round}"
        );
        assert_eq!(std::fs::read_link(site.public()).unwrap(), target);
        let page = std::fs::read_to_string(target.join("guides/generated-0/index.html")).unwrap();
        assert!(page.contains(&format!("Round {round}.")), "{page}");
        assert_eq!(leftovers_in(hosting.path()), Vec::<String>::new());
        assert_eq!(site.leftovers(), Vec::<String>::new());
    }
    // A symlink to a folder errata did not build is refused like the folder.
    let foreign = hosting.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("x"), "x").unwrap();
    std::os::unix::fs::symlink(&foreign, site.root().join("out")).unwrap();
    let message = site
        .build_into(&site.root().join("out"), false)
        .unwrap_err();
    assert!(message.contains("--force"), "{message}");
}

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
