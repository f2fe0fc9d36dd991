//! What builds leave beside the output: the names of staging, moved-aside
//! and spare folders, the taking of the spare, and the clean-up of those
//! dead builds left.

use super::*;

/// Clears what dead builds left beside the output folder `target`:
/// - an output that a fallback swap had moved aside when it was killed goes
///   back in place, if nothing took its place since;
/// - staging folders holding the marker are removed; unmarked ones only if
///   they are empty (a build killed before writing its marker).
///
/// Only folders named like errata's staging folders for this output, and
/// whose lock nobody holds, are touched: a live build (this process's
/// included) holds its folders' locks. Where locks are not available
/// nothing is removed, since nothing can be proved dead.
pub fn remove_dead_staging(target: &Path) {
    let target = crate::output_dir::resolve(target).unwrap_or_else(|_| target.to_path_buf());
    let (parent, name) = parent_and_name(&target);
    let Ok(entries) = std::fs::read_dir(&parent) else {
        return;
    };
    let mut found: Vec<(PathBuf, bool)> = entries
        .flatten()
        .filter_map(|entry| {
            let file_name = entry.file_name().into_string().ok()?;
            let moved_aside = staging_kind(&name, &file_name)?;
            Some((entry.path(), moved_aside))
        })
        .collect();
    found.sort();
    for (path, moved_aside) in found {
        if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let Lock::Held(_lock) = lock::try_lock(&path) else {
            continue;
        };
        let errata_output = is_errata_output(&path);
        if moved_aside && errata_output && std::fs::symlink_metadata(&target).is_err() {
            let _ = std::fs::rename(&path, &target);
        } else if errata_output {
            // Kept as the spare when there is none: the next build stages
            // into it (its files are unknown, so each is written again),
            // which costs far less than deleting a site's worth of folders.
            let spare = parent.join(spare_name(&name));
            if std::fs::symlink_metadata(&spare).is_ok() || std::fs::rename(&path, &spare).is_err()
            {
                let _ = std::fs::remove_dir_all(&path);
            }
        } else {
            let _ = std::fs::remove_dir(&path);
        }
    }
}

/// The folder holding `target`, and the name the staging folders derive from.
pub(super) fn parent_and_name(target: &Path) -> (PathBuf, String) {
    let parent = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map_or_else(|| "public".into(), |n| n.to_string_lossy().into_owned());
    (parent.to_path_buf(), name)
}

/// `.public.spare`: the output the last swap replaced, kept for the next
/// build to stage into (see [`reuse`]).
pub(super) fn spare_name(name: &str) -> String {
    format!(".{name}.spare")
}

/// `.public.tmp-<pid>` (a staging folder) or `.public.old-<pid>` (an output
/// moved aside by the fallback swap); later attempts add `-<n>`.
pub(super) fn staging_name(name: &str, kind: &str, pid: u32, attempt: u32) -> String {
    match attempt {
        0 => format!(".{name}.{kind}-{pid}"),
        n => format!(".{name}.{kind}-{pid}-{n}"),
    }
}

/// Whether `file_name` is a staging folder of the output `name`: `Some(true)`
/// for an output moved aside, `Some(false)` for a staging folder.
pub(super) fn staging_kind(name: &str, file_name: &str) -> Option<bool> {
    let rest = file_name.strip_prefix('.')?.strip_prefix(name)?;
    let (moved_aside, numbers) = if let Some(n) = rest.strip_prefix(".tmp-") {
        (false, n)
    } else {
        (true, rest.strip_prefix(".old-")?)
    };
    let mut parts = numbers.split('-');
    let all_digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    match (parts.next(), parts.next(), parts.next()) {
        (Some(pid), None, None) if all_digits(pid) => Some(moved_aside),
        (Some(pid), Some(n), None) if all_digits(pid) && all_digits(n) => Some(moved_aside),
        _ => None,
    }
}

/// Takes the spare for a build: locks it, then renames it to `dir`, the
/// build's staging folder name, unless something is there already. `None`
/// when there is none, another build holds it, or it is not errata's.
pub(super) fn claim(spare: &Path, dir: &Path) -> Option<lock::DirLock> {
    if !std::fs::symlink_metadata(spare).is_ok_and(|m| m.is_dir()) || !is_errata_output(spare) {
        return None;
    }
    let Lock::Held(lock) = lock::try_lock(spare) else {
        return None;
    };
    // Under our lock, with nothing replaced: the folder at `dir` is ours.
    swap::rename_new(spare, dir).ok().map(|()| lock)
}
