//! The files errata keeps about a site under `.errata/` (the incremental
//! cache, the source snapshot, the output manifests): each is written
//! whole through a temporary file and a rename, so a reader sees the old
//! file or the new one, never half of one. Lines are streamed to the file
//! as they come, so writing one never holds a second copy of it in memory
//! (a 100,000-page site's snapshot is over 100 MB).

use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Writes `lines`, each followed by a line break, as the whole of `file`.
pub(crate) fn write_lines<L: AsRef<str>>(
    file: &Path,
    lines: impl IntoIterator<Item = L>,
) -> io::Result<()> {
    let tmp = file.with_extension(format!("tmp-{}", std::process::id()));
    let written = (|| {
        let mut out = BufWriter::with_capacity(1 << 16, std::fs::File::create(&tmp)?);
        for line in lines {
            out.write_all(line.as_ref().as_bytes())?;
            out.write_all(b"\n")?;
        }
        out.into_inner().map_err(io::IntoInnerError::into_error)?;
        Ok(())
    })();
    match written {
        Ok(()) => std::fs::rename(&tmp, file),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_replace_the_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state");
        std::fs::write(&file, "old\n").unwrap();
        write_lines(&file, ["a", "b c"]).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "a\nb c\n");
        write_lines(&file, Vec::<String>::new()).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file is left");
        // A folder that is not there: an error, and nothing written.
        assert!(write_lines(&dir.path().join("none/state"), ["a"]).is_err());
    }
}
