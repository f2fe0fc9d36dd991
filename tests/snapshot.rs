//! The source snapshot (`.errata/sources.jsonl`, see `src/snapshot.rs`):
//! a build reads and parses only the content files changed since the last
//! one, never trusts a fingerprint an edit could hide behind, and fails
//! rather than mix two versions of a file edited mid-build.
use std::time::{Duration, SystemTime};

use std::path::Path;

use errata::load::{Loaded, SourceFile, load};
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

/// What one build's load and parse saw.
struct Built {
    /// The files the snapshot knew unchanged (by path in `content/`).
    known: Vec<String>,
    /// Every page parsed, in load order.
    files: Vec<SourceFile>,
}

/// One `errata build`'s load and parse, saving the snapshot file.
fn build(root: &Path) -> Built {
    Builds::Disk.build(root)
}

impl Builds {
    /// One build's load and parse, keeping the snapshot.
    fn build(&mut self, root: &Path) -> Built {
        let content = root.join("content");
        let (previous, keep) = match self {
            Builds::Disk => (None, false),
            Builds::Memory(memo) => (memo.clone(), true),
        };
        let snapshot = Snapshot::open_after(root, &content, true, previous);
        let (loaded, diagnostics) = load(root, &content, Some(&snapshot));
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let known = loaded
            .iter()
            .filter(|l| l.is_known())
            .map(|l| l.rel().to_string())
            .collect();
        let mut parsed = parse_loaded(loaded, false, keep);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let memo = snapshot.finish(std::mem::take(&mut parsed.records), !keep);
        if let Builds::Memory(kept) = self {
            *kept = memo;
        }
        let files = parsed.pages.into_iter().map(|p| p.source).collect();
        Built { known, files }
    }
}

fn known(built: &Built) -> Vec<&str> {
    built.known.iter().map(String::as_str).collect()
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
        assert_eq!(&*again.files[0].text(), PAGE);
        assert!(!again.files[0].changed_during_build());
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
        // Let the file system's clock move past the edit, or the build
        // after next would rightly not trust the file either: it changed
        // in the tick the next build began (this failed under load).
        std::thread::sleep(Duration::from_millis(50));
        let after = builds.build(site.path());
        assert_eq!(known(&after), ["b.md"]);
        assert!(after.files[0].text().contains("Bodx"));
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
        let built = builds.build(site.path());
        let a = &built.files[0];
        assert_eq!(known(&built), ["a.md", "b.md"]);
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
fn a_cold_build_reads_each_file_once_to_parse_holds_no_text_and_catches_a_later_edit() {
    let site = site();
    let content = site.path().join("content");
    // A first build: its snapshot knows nothing yet.
    let snapshot = Snapshot::open_after(site.path(), &content, false, None);
    let (loaded, diagnostics) = load(site.path(), &content, Some(&snapshot));
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert!(
        loaded.iter().all(|l| matches!(l, Loaded::Unread(_))),
        "nothing is known, and loading reads nothing"
    );
    // An edit between load and parse is simply what parse reads...
    std::fs::write(content.join("a.md"), PAGE.replace("Body", "Edit")).unwrap();
    let parsed = parse_loaded(loaded, false, false);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let recorded: Vec<_> = parsed.records.iter().map(|(rel, _)| rel.as_str()).collect();
    assert_eq!(recorded, ["a.md", "b.md"]);
    // ...and parsing kept only its hash: the text is read when asked for.
    let a = parsed.pages[0].source.clone();
    assert_eq!(&*a.text(), PAGE.replace("Body", "Edit"));
    assert!(!a.changed_during_build());
    // So an edit made after parsing (before rendering) is seen, never
    // mixed with the front matter parsed.
    std::fs::write(content.join("a.md"), PAGE).unwrap();
    assert_eq!(&*a.text(), "");
    assert!(a.changed_during_build());
}

#[test]
fn a_file_edited_between_load_and_parse_is_not_trusted_by_the_next_build() {
    for mut builds in both() {
        let site = site();
        builds.build(site.path());
        // The next build loads (fingerprints) a.md unchanged since the
        // snapshot, then it is edited before that build reads anything:
        // the snapshot trusts the old record this once, and...
        let root = site.path();
        let content = root.join("content");
        let (previous, keep) = match &builds {
            Builds::Disk => (None, false),
            Builds::Memory(memo) => (memo.clone(), true),
        };
        let snapshot = Snapshot::open_after(root, &content, true, previous);
        std::thread::sleep(Duration::from_millis(50));
        let (loaded, _) = load(root, &content, Some(&snapshot));
        std::fs::write(content.join("a.md"), PAGE.replace("Body", "Late")).unwrap();
        assert!(loaded.iter().all(Loaded::is_known));
        let mut parsed = parse_loaded(loaded, false, keep);
        let memo = snapshot.finish(std::mem::take(&mut parsed.records), !keep);
        // ...its render read catches the edit.
        assert!(parsed.pages[0].source.text().is_empty());
        assert!(parsed.pages[0].source.changed_during_build());
        if let Builds::Memory(kept) = &mut builds {
            *kept = memo;
        }
        // The build after reads it again and sees the edit.
        std::thread::sleep(Duration::from_millis(50));
        let after = builds.build(root);
        assert_eq!(known(&after), ["b.md"]);
        assert!(after.files[0].text().contains("Late"));
        // And a changed file edited again between load and parse: parse
        // reads the newer text, and as it changed after the build began,
        // the build after does not trust its record but reads it again.
        let b = content.join("b.md");
        std::fs::write(&b, PAGE.replace("Body", "New")).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let (previous, keep) = match &builds {
            Builds::Disk => (None, false),
            Builds::Memory(memo) => (memo.clone(), true),
        };
        let snapshot = Snapshot::open_after(root, &content, true, previous);
        let (loaded, _) = load(root, &content, Some(&snapshot));
        let unread: Vec<_> = loaded
            .iter()
            .filter(|l| !l.is_known())
            .map(Loaded::rel)
            .collect();
        assert_eq!(unread, ["b.md"]);
        std::fs::write(&b, PAGE.replace("Body", "Newer")).unwrap();
        let mut parsed = parse_loaded(loaded, false, keep);
        assert!(parsed.pages[1].source.text().contains("Newer"));
        let memo = snapshot.finish(std::mem::take(&mut parsed.records), !keep);
        if let Builds::Memory(kept) = &mut builds {
            *kept = memo;
        }
        std::thread::sleep(Duration::from_millis(50));
        let last = builds.build(root);
        assert_eq!(known(&last), ["a.md"]);
        assert!(last.files[1].text().contains("Newer"));
    }
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
        let built = build(site.path());
        // Nothing is taken from it: every file is read and parsed.
        assert!(
            known(&built).is_empty(),
            "{:?} from {}",
            known(&built),
            edit(&text)
        );
        std::fs::write(&file, &text).unwrap();
    }
}
