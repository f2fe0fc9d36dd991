//! The harnesses shared by the test modules, one file each.

pub mod commands;
#[path = "../../support/copy_dir.rs"]
mod copy_dir_support;
pub mod default_site;
#[path = "../../support/errors.rs"]
mod errors_support;
pub mod find_box;
pub mod html;
pub mod link_policy;
pub mod link_server;
#[path = "../../support/serve_process.rs"]
pub mod serve_process;
pub mod served;
pub mod sizing_wasm;
#[path = "../../support/snapshot.rs"]
mod snapshot_support;
pub mod static_server;
pub mod tools;
#[path = "../../support/wasm.rs"]
pub mod wasm_support;
pub mod webdriver;

pub use commands::*;
pub use copy_dir_support::copy_dir;
pub use default_site::*;
pub use errata::{BuildError, BuildOptions, BuildReport, Diagnostic};
pub use errors_support::errors;
pub use find_box::*;
pub use html::*;
pub use link_policy::*;
pub use link_server::*;
pub use scraper::{ElementRef, Html, Selector};
pub use serve_process::ServeProcess;
pub use served::*;
pub use sizing_wasm::*;
pub use snapshot_support::snapshot_dir;
pub use static_server::*;
pub use std::collections::{BTreeMap, BTreeSet, VecDeque};
pub use std::io::{BufRead, BufReader, Read, Write};
pub use std::net::{TcpListener, TcpStream};
pub use std::path::{Path, PathBuf};
pub use tools::*;
pub use wasm_support::Wasm;
pub use webdriver::*;

pub const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// A fixture copied into a temporary folder, with the default theme added
/// when the fixture has none.
pub struct Fixture {
    pub dir: tempfile::TempDir,
}

impl Fixture {
    pub fn new(case: &str) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(
            &Path::new(REPO).join("tests/fixtures").join(case),
            dir.path(),
        );
        if !dir.path().join("themes").exists() {
            copy_dir(
                &Path::new(REPO).join("themes/default"),
                &dir.path().join("themes/default"),
            );
        }
        // Calculator presets, for fixtures whose pages carry a calculator.
        if !dir.path().join("data").exists() {
            copy_dir(&Path::new(REPO).join("data"), &dir.path().join("data"));
        }
        Fixture { dir }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn options(&self) -> BuildOptions {
        BuildOptions {
            root: self.root().to_path_buf(),
            ..BuildOptions::default()
        }
    }

    pub fn build(&self) -> Result<BuildReport, BuildError> {
        errata::build(&self.options())
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root().join("public").join(rel))
            .unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    pub fn write(&self, rel: &str, text: &str) {
        std::fs::write(self.root().join(rel), text).unwrap();
    }
}
