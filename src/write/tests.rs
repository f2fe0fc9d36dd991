//! Unit tests of the staging folder and its swap.
use super::*;

#[test]
fn safe_join_refuses_escapes() {
    let base = Path::new("/out");
    assert_eq!(
        safe_join(base, "oom/x/index.html").unwrap(),
        PathBuf::from("/out/oom/x/index.html")
    );
    for bad in [
        "../x",
        "a/../../x",
        "/etc/passwd",
        "a//b",
        "a\\..\\b",
        "C:/x",
        "./x",
        "",
    ] {
        assert!(safe_join(base, bad).is_err(), "{bad}");
    }
}

fn staged_site(target: &Path, text: &str) -> Staging {
    let staging = Staging::create(target).unwrap();
    staging.write("index.html", text.as_bytes()).unwrap();
    staging
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn commit_exchanges_or_falls_back_to_two_renames() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("public");
    staged_site(&target, "one").commit().unwrap();
    assert_eq!(
        std::fs::read_to_string(target.join("index.html")).unwrap(),
        "one"
    );
    assert!(target.join(MARKER).is_file());
    staged_site(&target, "two").commit().unwrap();
    assert_eq!(
        std::fs::read_to_string(target.join("index.html")).unwrap(),
        "two"
    );
    // Where the OS cannot exchange folders.
    staged_site(&target, "three")
        .commit_with(|_, _| Ok(false))
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(target.join("index.html")).unwrap(),
        "three"
    );
    assert_eq!(names(dir.path()), ["public"]);
}

#[test]
fn an_output_moved_aside_by_a_killed_fallback_swap_is_put_back() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("public");
    let aside = dir.path().join(".public.old-4000000");
    std::fs::create_dir(&aside).unwrap();
    std::fs::write(aside.join(MARKER), MARKER_TEXT).unwrap();
    std::fs::write(aside.join("index.html"), "previous").unwrap();
    // The staging folder of the killed build, complete but never renamed.
    let dead = dir.path().join(".public.tmp-4000000");
    std::fs::create_dir(&dead).unwrap();
    std::fs::write(dead.join(MARKER), MARKER_TEXT).unwrap();
    remove_dead_staging(&target);
    if cfg!(unix) {
        assert_eq!(
            std::fs::read_to_string(target.join("index.html")).unwrap(),
            "previous"
        );
        // The dead build's folder is kept as the spare, to stage into.
        assert_eq!(names(dir.path()), [".public.spare", "public"]);
    }
}

#[test]
fn a_folder_named_like_a_moved_aside_output_but_not_errata_s_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("public");
    // Someone's own folder, with no marker: not errata's to move.
    let notes = dir.path().join(".public.old-99999");
    std::fs::create_dir(&notes).unwrap();
    std::fs::write(notes.join("notes.txt"), "my notes").unwrap();
    remove_dead_staging(&target);
    assert_eq!(
        std::fs::read_to_string(notes.join("notes.txt")).unwrap(),
        "my notes"
    );
    assert_eq!(names(dir.path()), [".public.old-99999"]);
}

#[test]
fn a_build_stages_into_the_spare_and_writes_only_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("public");
    let state = dir.path().join("state");
    let site = |files: &[(&str, &str)]| {
        let staging = Staging::reusing(&target, &state).unwrap();
        for (rel, text) in files {
            staging.write(rel, text.as_bytes()).unwrap();
        }
        let written = staging.contents().out.clone();
        staging.commit().unwrap();
        written
    };
    site(&[
        ("a/index.html", "a1"),
        ("b/index.html", "b1"),
        ("c/d/e.txt", "e"),
    ]);
    site(&[
        ("a/index.html", "a2"),
        ("b/index.html", "b1"),
        ("c/d/e.txt", "e"),
    ]);
    assert_eq!(names(dir.path()), [".public.spare", "public", "state"]);
    // The third build stages into the first one's folder: b is the same
    // file as then; a is rewritten; c goes, and its folders with it.
    let spare = dir.path().join(".public.spare");
    let b_before = reuse::Sig::of(&std::fs::metadata(spare.join("b/index.html")).unwrap());
    let written = site(&[("a/index.html", "a3"), ("b/index.html", "b1")]);
    assert_eq!(written["b/index.html"].sig, b_before, "b was written again");
    assert_eq!(
        std::fs::read_to_string(target.join("a/index.html")).unwrap(),
        "a3"
    );
    assert!(!target.join("c").exists());
    assert!(target.join(MARKER).is_file());
    // Two manifests: the output's and the spare's.
    assert_eq!(std::fs::read_dir(&state).unwrap().count(), 2);
}

#[test]
fn nothing_is_written_over_the_marker() {
    let dir = tempfile::tempdir().unwrap();
    let staging = Staging::create(&dir.path().join("public")).unwrap();
    for rel in [MARKER, &format!("{MARKER}/index.html")] {
        let error = staging.write(rel, b"x").unwrap_err();
        assert!(error.contains("reserved"), "{error}");
    }
    assert!(staging.write(&format!("a/{MARKER}"), b"x").is_ok());
    assert_eq!(
        std::fs::read_to_string(staging.dir.join(MARKER)).unwrap(),
        MARKER_TEXT
    );
}

#[test]
fn staging_names_are_recognised_exactly() {
    assert_eq!(staging_kind("public", ".public.tmp-12"), Some(false));
    assert_eq!(staging_kind("public", ".public.tmp-12-3"), Some(false));
    assert_eq!(staging_kind("public", ".public.old-12"), Some(true));
    for other in [
        ".public.tmp-",
        ".public.tmp-12-",
        ".public.tmp-1-2-3",
        ".public.tmp-x",
        ".publicx.tmp-12",
        "public.tmp-12",
        ".public.tmp-12.bak",
        ".dist.tmp-12",
    ] {
        assert_eq!(staging_kind("public", other), None, "{other}");
    }
    assert_eq!(staging_name("public", "tmp", 7, 0), ".public.tmp-7");
    assert_eq!(staging_name("public", "old", 7, 2), ".public.old-7-2");
}

/// Builds of one output racing each other: each creates or claims its
/// staging folder, scans it, writes, clears leftovers and swaps while the
/// others do (`exchange` as in [`Staging::commit_with`]). Threads of one
/// process share a pid, so staging names must be unique in a process too.
fn race(exchange: fn(&Path, &Path) -> io::Result<bool>) {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("public");
    let state = dir.path().join("state");
    staged_site(&target, "zero").commit().unwrap();
    let (done, finished) = std::sync::mpsc::channel();
    for t in 0..8 {
        let (target, state, done) = (target.clone(), state.clone(), done.clone());
        std::thread::spawn(move || {
            let mut errors = Vec::new();
            for round in 0..100 {
                let built = Staging::reusing(&target, &state).and_then(|staging| {
                    for page in 0..10 {
                        let text = format!("{t} {round}");
                        if let Err(e) =
                            staging.write(&format!("p{page}/index.html"), text.as_bytes())
                        {
                            errors.push(e);
                        }
                    }
                    staging.commit_with(exchange)
                });
                if let Err(e) = built {
                    errors.push(format!(
                        "thread {t}, round {round}: {}: {}",
                        e.path.display(),
                        e.source
                    ));
                }
            }
            done.send(errors).unwrap();
        });
    }
    drop(done);
    let mut errors = Vec::new();
    for _ in 0..8 {
        let timeout = std::time::Duration::from_secs(120);
        errors.extend(finished.recv_timeout(timeout).expect("a build hung"));
    }
    assert_eq!(errors, Vec::<String>::new());
    // One build's site is whole in the output, and nothing is left beside
    // it but the spare.
    let text = std::fs::read_to_string(target.join("p0/index.html")).unwrap();
    for page in 1..10 {
        let other = std::fs::read_to_string(target.join(format!("p{page}/index.html"))).unwrap();
        assert_eq!(other, text);
    }
    assert_eq!(names(dir.path()), [".public.spare", "public", "state"]);
}

#[test]
fn builds_racing_for_one_output_all_succeed() {
    race(swap::exchange);
}

/// Where the OS cannot exchange folders, the two renames leave a moment
/// with no output; no other build may see it.
#[test]
fn builds_racing_for_one_output_all_succeed_with_two_renames() {
    race(|_, _| Ok(false));
}

/// A spare is never renamed over a folder already at the staging name (an
/// empty one another build just made).
#[test]
fn the_spare_is_not_claimed_over_a_folder_already_there() {
    let dir = tempfile::tempdir().unwrap();
    let spare = dir.path().join(".public.spare");
    let taken = dir.path().join(".public.tmp-1");
    std::fs::create_dir(&spare).unwrap();
    std::fs::write(spare.join(MARKER), MARKER_TEXT).unwrap();
    std::fs::create_dir(&taken).unwrap();
    assert!(claim(&spare, &taken).is_none());
    assert!(spare.join(MARKER).is_file());
    assert!(taken.is_dir());
    assert!(!taken.join(MARKER).exists());
    // With nothing there, it is claimed.
    std::fs::remove_dir(&taken).unwrap();
    assert!(claim(&spare, &taken).is_some());
    assert!(taken.join(MARKER).is_file());
    assert!(!spare.exists());
}

/// A spare that cannot be read through (here a path in it longer than
/// the OS takes) is dropped, and the build stages into a new folder: it
/// never fails the build, nor stays beside the output under a staging
/// name.
#[cfg(target_os = "linux")]
#[test]
fn an_unreadable_spare_is_dropped_and_the_build_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("public");
    let state = dir.path().join("state");
    let site = |text: &str| {
        let staging = Staging::reusing(&target, &state).unwrap();
        staging.write("a/index.html", text.as_bytes()).unwrap();
        staging.commit().unwrap();
    };
    site("a1");
    site("a2");
    let spare = dir.path().join(".public.spare");
    // Folders inside folders, each made from the one above (where its
    // name is short), to a path of some 5,000 bytes.
    {
        use rustix::fs::{Mode, OFlags, mkdirat, open, openat};
        let name = "d".repeat(120);
        let mut at = open(spare.join("a"), OFlags::DIRECTORY, Mode::empty()).unwrap();
        for _ in 0..40 {
            mkdirat(&at, name.as_str(), Mode::from_raw_mode(0o755)).unwrap();
            at = openat(&at, name.as_str(), OFlags::DIRECTORY, Mode::empty()).unwrap();
        }
    }
    let staging = Staging::reusing(&target, &state).expect("the build goes on");
    assert!(!staging.reused, "the unreadable spare was not staged into");
    staging.write("a/index.html", b"a3").unwrap();
    staging.commit().unwrap();
    assert_eq!(
        std::fs::read_to_string(target.join("a/index.html")).unwrap(),
        "a3"
    );
    assert_eq!(names(dir.path()), [".public.spare", "public", "state"]);
    // The spare now is the output the last build replaced.
    assert_eq!(
        std::fs::read_to_string(spare.join("a/index.html")).unwrap(),
        "a2"
    );
}
