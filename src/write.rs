//! Stage 6, `write`: files go into a fresh folder beside the output, which
//! replaces the output only when the whole build succeeded. A failed build
//! leaves the previous output exactly as it was.

use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Joins a `/`-separated relative path onto `base`, refusing anything that
/// could leave `base`: `..`, `.`, empty segments, absolute paths, drive
/// letters and backslashes.
pub fn safe_join(base: &Path, rel: &str) -> Result<PathBuf, String> {
    let mut out = base.to_path_buf();
    for segment in rel.split('/') {
        if segment.is_empty()
            || segment == "."
            || segment == ".."
            || segment.contains(['\\', ':', '\0'])
        {
            return Err(format!(
                "refusing to write `{rel}`: it is not a plain path inside the output folder"
            ));
        }
        let mut components = Path::new(segment).components();
        if !matches!(
            (components.next(), components.next()),
            (Some(Component::Normal(_)), None)
        ) {
            return Err(format!(
                "refusing to write `{rel}`: it is not a plain path inside the output folder"
            ));
        }
        out.push(segment);
    }
    Ok(out)
}

/// A staging folder that becomes the output on [`Staging::commit`] and is
/// removed if dropped before that.
pub struct Staging {
    dir: PathBuf,
    target: PathBuf,
    committed: bool,
    written: AtomicUsize,
}

impl Staging {
    /// Creates an empty staging folder next to `target`.
    pub fn create(target: &Path) -> io::Result<Staging> {
        let parent = target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent)?;
        let name = target
            .file_name()
            .map_or_else(|| "public".into(), |n| n.to_string_lossy().into_owned());
        let dir = parent.join(format!(".{name}.tmp-{}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        std::fs::create_dir(&dir)?;
        Ok(Staging {
            dir,
            target: target.to_path_buf(),
            committed: false,
            written: AtomicUsize::new(0),
        })
    }

    /// Writes `bytes` at `rel` (a `/`-separated path) inside the staging folder.
    pub fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), String> {
        let path = safe_join(&self.dir, rel)?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(&path, bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        self.written.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Copies a file to `rel` inside the staging folder.
    pub fn copy(&self, rel: &str, from: &Path) -> Result<(), String> {
        let path = safe_join(&self.dir, rel)?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::copy(from, &path).map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
        self.written.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// How many files were written.
    pub fn written(&self) -> usize {
        self.written.load(Ordering::Relaxed)
    }

    /// Replaces the target folder with the staging folder.
    pub fn commit(mut self) -> io::Result<()> {
        let old = self.dir.with_file_name(format!(
            ".{}.old-{}",
            self.target
                .file_name()
                .map_or_else(|| "public".into(), |n| n.to_string_lossy().into_owned()),
            std::process::id()
        ));
        let had_old = self.target.exists();
        if had_old {
            std::fs::rename(&self.target, &old)?;
        }
        if let Err(e) = std::fs::rename(&self.dir, &self.target) {
            if had_old {
                let _ = std::fs::rename(&old, &self.target);
            }
            return Err(e);
        }
        self.committed = true;
        if had_old {
            std::fs::remove_dir_all(&old)?;
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

#[cfg(test)]
mod tests {
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
}
