//! Which folder a build may replace. The output path is resolved first
//! (`..`, `.`, symlinks, relative forms), then compared with the site's root
//! and source folders, so `x/../content` or a symlink into `content/` is seen
//! for what it is. errata replaces only a folder it built itself: every
//! output carries the [`MARKER`] file, and a non-empty folder without it is
//! refused unless the user passes `--force`.

use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

/// The file written into every output folder (and every staging folder,
/// from its creation). A folder holding it was built by errata and may be
/// replaced by the next build; a non-empty folder without it is not
/// replaced without `--force`. The content is fixed, so output stays
/// deterministic.
pub const MARKER: &str = ".errata-output";

/// What the marker file says, for anyone who finds it.
pub(crate) const MARKER_TEXT: &str = "This folder was built by errata. `errata build` replaces it as a whole; \
without this file, errata refuses to replace the folder unless given --force.\n";

/// Folders under the site root that hold sources (besides the content and
/// theme folders named by the configuration) or errata's own state, plus
/// `src/`, where a site kept beside code (like errata's own) has its code.
const SOURCE_FOLDERS: [&str; 8] = [
    "content",
    "themes",
    "templates",
    "static",
    "data",
    "src",
    ".git",
    ".errata",
];

/// The most symlinks followed while resolving one path (Linux's limit).
const MAX_LINKS: usize = 40;

/// Resolves `path` the way the file system will: made absolute against the
/// current folder, every symlink that exists replaced by its target, `.`
/// dropped and `..` applied to what precedes it after resolution. Parts
/// that do not exist yet are kept as written (a missing name cannot be a
/// symlink), so a new output folder resolves too.
pub fn resolve(path: &Path) -> io::Result<PathBuf> {
    let absolute = std::path::absolute(path)?;
    // The parts still to walk, last first.
    let mut rest: Vec<OsString> = absolute
        .components()
        .rev()
        .map(|c| c.as_os_str().to_owned())
        .collect();
    let mut out = PathBuf::new();
    let mut links = 0;
    while let Some(part) = rest.pop() {
        match Path::new(&part).components().next() {
            Some(Component::Prefix(_) | Component::RootDir) => out.push(&part),
            Some(Component::CurDir) | None => {}
            Some(Component::ParentDir) => {
                out.pop();
            }
            Some(Component::Normal(name)) => {
                out.push(name);
                let is_link =
                    std::fs::symlink_metadata(&out).is_ok_and(|m| m.file_type().is_symlink());
                if is_link {
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(io::Error::other(format!(
                            "too many levels of symbolic links at {}",
                            out.display()
                        )));
                    }
                    let target = std::fs::read_link(&out)?;
                    out.pop();
                    // An absolute target restarts from its root when pushed.
                    rest.extend(target.components().rev().map(|c| c.as_os_str().to_owned()));
                }
            }
        }
    }
    Ok(out)
}

/// Checks that the build may replace `output` and returns it resolved: the
/// folder the new site really goes to (a symlinked output stays a symlink;
/// its target is replaced). Refused, with nothing touched:
/// - the site root, or any folder above it;
/// - a source folder (`sources`, plus [`SOURCE_FOLDERS`] under the root),
///   anything inside one, or a folder holding one;
/// - the user's home folder or a folder above it (the site may live
///   elsewhere, and `--force` must not empty a home folder);
/// - an existing file;
/// - a mount point (the OS cannot swap it);
/// - a non-empty folder without the [`MARKER`], unless `force`.
pub(crate) fn check(
    root: &Path,
    sources: &[PathBuf],
    output: &Path,
    force: bool,
) -> Result<PathBuf, String> {
    let resolved = resolve(output)
        .map_err(|e| format!("cannot resolve the output folder {}: {e}", output.display()))?;
    let shown = if resolved == output {
        output.display().to_string()
    } else {
        format!("{} (which is {})", output.display(), resolved.display())
    };
    let root = resolve(root).map_err(|e| format!("cannot resolve {}: {e}", root.display()))?;
    let refuse = |why: String| {
        format!(
            "refusing to use {shown} as the output folder: {why}; a build replaces its output folder as a whole\n\
             help: build into a folder of its own: a new one such as {} (the default), or one errata built before",
            root.join("public").display()
        )
    };
    if root.starts_with(&resolved) {
        return Err(refuse(if root == resolved {
            "it is the site's root folder".into()
        } else {
            format!("it holds the site's root folder {}", root.display())
        }));
    }
    // Even with --force: a typo must not cost anyone their home folder.
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty())
        && let Ok(home) = resolve(Path::new(&home))
        && home.starts_with(&resolved)
    {
        return Err(refuse(if home == resolved {
            "it is your home folder".into()
        } else {
            format!("it holds your home folder {}", home.display())
        }));
    }
    let named = SOURCE_FOLDERS.iter().map(|name| root.join(name));
    for source in sources.iter().cloned().chain(named) {
        let source = resolve(&source).unwrap_or(source);
        if resolved.starts_with(&source) {
            return Err(refuse(format!(
                "it is inside the source folder {}",
                source.display()
            )));
        }
        if source.starts_with(&resolved) {
            return Err(refuse(format!(
                "it holds the source folder {}",
                source.display()
            )));
        }
    }
    match std::fs::metadata(&resolved) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(resolved),
        Err(e) => Err(format!("cannot read {shown}: {e}")),
        Ok(meta) if !meta.is_dir() => Err(refuse("it is an existing file, not a folder".into())),
        Ok(_) if is_mount_point(&resolved) => Err(format!(
            "refusing to use {shown} as the output folder: it is a mount point, and a build \
             replaces its output folder as a whole (the OS cannot swap a mount point)\n\
             help: build into a folder inside it, such as {}, or mount the folder above it",
            resolved.join("site").display()
        )),
        Ok(_) if force || is_errata_output(&resolved) => Ok(resolved),
        Ok(_) => {
            let empty = std::fs::read_dir(&resolved)
                .map_err(|e| format!("cannot read {shown}: {e}"))?
                .next()
                .is_none();
            if empty {
                Ok(resolved)
            } else {
                Err(format!(
                    "refusing to replace {shown}: it is a folder that errata did not build \
                     (it has no {MARKER} file), and it is not empty\n\
                     help: choose a new or empty folder, or pass --force to replace it \
                     (everything in it will be deleted)"
                ))
            }
        }
    }
}

/// Whether `dir` is on another file system than the folder holding it.
/// (A bind mount within one file system is not seen here; the swap then
/// fails with an error that says what to do, before anything changed.)
#[cfg(unix)]
fn is_mount_point(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let parent = dir.parent().unwrap_or(dir);
    match (std::fs::metadata(dir), std::fs::metadata(parent)) {
        (Ok(a), Ok(b)) => a.dev() != b.dev(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn is_mount_point(_: &Path) -> bool {
    false
}

/// Whether `dir` holds the marker of an errata build (a plain file, not a
/// symlink to one).
pub(crate) fn is_errata_output(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(MARKER)).is_ok_and(|m| m.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_applies_parent_parts_after_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let base = resolve(dir.path()).unwrap();
        std::fs::create_dir_all(base.join("a/b")).unwrap();
        assert_eq!(
            resolve(&base.join("x/../a/./b/..")).unwrap(),
            base.join("a")
        );
        assert_eq!(
            resolve(&base.join("new/deeper")).unwrap(),
            base.join("new/deeper")
        );
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(base.join("a/b"), base.join("link")).unwrap();
            // `link/..` is `a`, not the folder holding the link.
            assert_eq!(resolve(&base.join("link/..")).unwrap(), base.join("a"));
            std::os::unix::fs::symlink("a/b/missing", base.join("dangling")).unwrap();
            assert_eq!(
                resolve(&base.join("dangling")).unwrap(),
                base.join("a/b/missing")
            );
            std::os::unix::fs::symlink("loop", base.join("loop")).unwrap();
            assert!(resolve(&base.join("loop")).is_err());
        }
    }
}
