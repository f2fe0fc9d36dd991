//! The source snapshot (`.errata/sources.jsonl`, see `src/snapshot.rs`):
//! a build reads and parses only the content files changed since the last
//! one, never trusts a fingerprint an edit could hide behind, and fails
//! rather than mix two versions of a file edited mid-build.
use std::time::{Duration, SystemTime};

use std::path::Path;

use errata::load::{Loaded, load_with};
use errata::parse::parse_loaded;
use errata::snapshot::{Memo, Snapshot};
use std::sync::Arc;

const PAGE: &str = "---\ntitle: T\nsignature: S\n---\nBody\n";

fn site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("content")).unwrap();
    std::fs::write(dir.path().join("content/a.md"), PAGE).unwrap();
    std::fs::write(dir.path().join("content/b.md"), PAGE).unwrap();
    // Written long before any build began.
    let old = SystemTime::now() - Duration::from_secs(60);
    for name in ["a.md", "b.md"] {
        let file = std::fs::File::options()
            .write(true)
            .open(dir.path().join("content").join(name))
            .unwrap();
        file.set_modified(old).unwrap();
    }
    // Their status-change time is now: let the file system's clock
    // move on, or the first build would not trust them (as it should
    // not for a file written in the tick it began).
    std::thread::sleep(Duration::from_millis(50));
    dir
}

/// Where builds keep the snapshot: in the file (each build a process of
/// its own, as `errata build`), or in memory between the builds of one
/// process (`errata serve`), which writes nothing.
enum Builds {
    Disk,
    Memory(Option<Arc<Memo>>),
}

/// Both ways of building.
fn both() -> [Builds; 2] {
    [Builds::Disk, Builds::Memory(None)]
}

/// One `errata build`'s load and parse, saving the snapshot file.
fn build(root: &Path) -> Vec<Loaded> {
    Builds::Disk.build(root)
}

impl Builds {
    /// One build's load and parse, keeping the snapshot; the loaded files.
    fn build(&mut self, root: &Path) -> Vec<Loaded> {
        let content = root.join("content");
        let (previous, keep) = match self {
            Builds::Disk => (None, false),
            Builds::Memory(memo) => (memo.clone(), true),
        };
        let snapshot = Snapshot::open_after(root, &content, true, previous);
        let (loaded, diagnostics) = load_with(root, &content, Some(&snapshot));
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let known: Vec<_> = loaded
            .iter()
            .map(|l| Loaded {
                file: l.file.clone(),
                fingerprint: l.fingerprint,
                known: l.known.clone(),
            })
            .collect();
        let mut parsed = parse_loaded(loaded, false, keep);
        let memo = snapshot.finish(std::mem::take(&mut parsed.records), !keep);
        if let Builds::Memory(kept) = self {
            *kept = memo;
        }
        known
    }
}

fn known(loaded: &[Loaded]) -> Vec<&str> {
    loaded
        .iter()
        .filter(|l| l.known.is_some())
        .map(|l| l.file.rel.as_str())
        .collect()
}

#[test]
fn only_files_changed_since_the_last_build_are_read() {
    for mut builds in both() {
        let site = site();
        assert!(
            known(&builds.build(site.path())).is_empty(),
            "nothing is known yet"
        );
        let again = builds.build(site.path());
        assert_eq!(known(&again), ["a.md", "b.md"]);
        // Known files are parsed from the record, and their text is read
        // when asked for.
        assert_eq!(&*again[0].file.text(), PAGE);
        assert!(!again[0].file.changed_during_build());
        // An edit of the same size, even with the old modification time
        // put back, changes the status-change time.
        let a = site.path().join("content/a.md");
        let before = std::fs::metadata(&a).unwrap().modified().unwrap();
        std::fs::write(&a, PAGE.replace("Body", "Bodx")).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&a)
            .unwrap()
            .set_modified(before)
            .unwrap();
        let after = builds.build(site.path());
        assert_eq!(known(&after), ["b.md"]);
        assert!(after[0].file.text().contains("Bodx"));
        // The edited file is known again to the build after.
        assert_eq!(known(&builds.build(site.path())), ["a.md", "b.md"]);
    }
}

#[test]
fn a_file_modified_at_or_after_the_build_began_is_read_again() {
    for mut builds in both() {
        let site = site();
        // A modification time the file system's clock has not reached (or
        // the same tick as the build): the fingerprint could miss an edit.
        let a = site.path().join("content/a.md");
        let file = std::fs::File::options().write(true).open(&a).unwrap();
        file.set_modified(SystemTime::now() + Duration::from_secs(3600))
            .unwrap();
        // Only the modification time is ahead, not the status change.
        std::thread::sleep(Duration::from_millis(50));
        builds.build(site.path());
        assert_eq!(known(&builds.build(site.path())), ["b.md"]);
        assert_eq!(known(&builds.build(site.path())), ["b.md"]);
    }
}

#[test]
fn text_changed_during_a_build_is_caught_never_mixed() {
    for mut builds in both() {
        let site = site();
        builds.build(site.path());
        let loaded = builds.build(site.path());
        let a = &loaded[0].file;
        assert!(loaded[0].known.is_some());
        // Edited after the build found it unchanged, before it was read.
        std::fs::write(site.path().join("content/a.md"), "---\ntitle: New\n---\n").unwrap();
        assert_eq!(&*a.text(), "");
        assert!(a.changed_during_build());
    }
}

#[test]
fn builds_in_memory_write_no_snapshot_and_a_build_after_them_reads_every_file() {
    let site = site();
    let mut builds = Builds::Memory(None);
    builds.build(site.path());
    assert_eq!(known(&builds.build(site.path())), ["a.md", "b.md"]);
    let file = site.path().join(".errata/sources.jsonl");
    assert!(!file.exists(), "a build in memory wrote the snapshot");
    // A new process has nothing to go by: it reads and parses every file,
    // and records them for the next.
    assert!(known(&build(site.path())).is_empty());
    assert_eq!(known(&build(site.path())), ["a.md", "b.md"]);
}

#[test]
fn a_cold_build_holds_no_text_and_catches_a_file_edited_after_it_was_loaded() {
    let site = site();
    let content = site.path().join("content");
    let (loaded, diagnostics) = load_with(site.path(), &content, None);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert!(loaded.iter().all(|l| l.known.is_none()), "nothing is known");
    // Loading kept only the hash: the text is read when asked for...
    let a = loaded[0].file.clone();
    assert_eq!(&*a.text(), PAGE);
    assert!(!a.changed_during_build());
    // ...so an edit made after loading is seen, not the text loaded.
    std::fs::write(content.join("a.md"), PAGE.replace("Body", "Edit")).unwrap();
    assert_eq!(&*a.text(), "");
    assert!(a.changed_during_build());
    // Parsing it then fails with the reason, and records nothing of it.
    let parsed = parse_loaded(loaded, false, false);
    let messages: Vec<_> = parsed
        .diagnostics
        .iter()
        .map(|d| format!("{}: {}", d.path.display(), d.message))
        .collect();
    assert_eq!(
        messages,
        ["content/a.md: file changed while errata was building it"]
    );
    let recorded: Vec<_> = parsed.records.iter().map(|(rel, _)| rel.as_str()).collect();
    assert_eq!(recorded, ["b.md"]);
    assert_eq!(parsed.pages.len(), 1);
}

#[test]
fn a_damaged_or_foreign_snapshot_is_ignored() {
    let site = site();
    build(site.path());
    let file = site.path().join(".errata/sources.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let edits: [&dyn Fn(&str) -> String; 4] = [
        &|t| t.replacen("errata-sources-v1", "errata-sources-v0", 1),
        &|t| t.replacen("\"content\":\"", "\"content\":\"/elsewhere", 1),
        &|t| t[..t.len() - 5].to_string(),
        &|t| t.replace("\"hash\":\"", "\"hash\":\"zz"),
    ];
    for edit in edits {
        std::fs::write(&file, edit(&text)).unwrap();
        let loaded = build(site.path());
        // Nothing is taken from it: every file is read and parsed.
        assert!(
            known(&loaded).is_empty(),
            "{:?} from {}",
            known(&loaded),
            edit(&text)
        );
        std::fs::write(&file, &text).unwrap();
    }
}
