//! A file's identity as its metadata gives it (length, times, inode),
//! read one way for every stage that tells whether a file changed between
//! builds without reading it: the source snapshot ([`crate::snapshot`])
//! and the reused output folder ([`crate::write`]).

/// What a file's metadata says of it. Times are nanoseconds since the
/// epoch; a field the OS does not give is 0. The source snapshot records it
/// (as its `fingerprint`) with these field names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileStat {
    /// Length in bytes.
    pub len: u64,
    /// Modification time.
    pub modified: i128,
    /// Status-change time (Unix).
    pub changed: i128,
    /// Inode (Unix).
    pub inode: u64,
    /// Device (Unix).
    pub device: u64,
}

impl FileStat {
    /// The identity in `meta`.
    #[cfg(unix)]
    pub fn of(meta: &std::fs::Metadata) -> FileStat {
        use std::os::unix::fs::MetadataExt;
        let nanos = |secs: i64, nsec: i64| i128::from(secs) * 1_000_000_000 + i128::from(nsec);
        FileStat {
            len: meta.len(),
            modified: nanos(meta.mtime(), meta.mtime_nsec()),
            changed: nanos(meta.ctime(), meta.ctime_nsec()),
            inode: meta.ino(),
            device: meta.dev(),
        }
    }

    /// The identity in `meta`.
    #[cfg(not(unix))]
    pub fn of(meta: &std::fs::Metadata) -> FileStat {
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128);
        FileStat {
            len: meta.len(),
            modified,
            changed: 0,
            inode: 0,
            device: 0,
        }
    }

    /// The later of the modification and change times.
    pub fn latest(&self) -> i128 {
        self.modified.max(self.changed)
    }
}

#[cfg(test)]
mod tests {
    use super::FileStat;

    #[test]
    fn an_edit_changes_the_stat_and_a_read_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.md");
        std::fs::write(&file, "one").unwrap();
        let before = FileStat::of(&std::fs::metadata(&file).unwrap());
        assert_eq!(before.len, 3);
        assert!(before.modified > 0);
        let _ = std::fs::read(&file).unwrap();
        assert_eq!(FileStat::of(&std::fs::metadata(&file).unwrap()), before);
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&file, "two").unwrap();
        let after = FileStat::of(&std::fs::metadata(&file).unwrap());
        assert_eq!(after.len, before.len);
        assert_ne!(after, before, "a same-size edit changes the times");
    }
}
