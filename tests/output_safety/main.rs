//! Nothing lost (issue 10): the output folder is resolved before it is
//! compared, errata replaces only a folder it built itself, a symlinked
//! output stays a symlink, the swap is atomic, and a build killed at any
//! point leaves the previous output whole for the next build to clean up.
//!
//! - `refused`: which outputs errata refuses, and which it replaces;
//! - `killed`: builds killed, failed or run side by side, and the swap.

#[path = "../support/copy_dir.rs"]
mod copy_dir_support;
#[path = "../support/snapshot.rs"]
mod snapshot_support;

mod killed;
mod refused;

use std::path::{Path, PathBuf};
use std::process::Command;

use copy_dir_support::copy_dir;
use errata::{BuildError, BuildOptions};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The `basic` fixture plus enough pages that a build spends a while in
/// render, in a temporary folder.
pub struct Site {
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
