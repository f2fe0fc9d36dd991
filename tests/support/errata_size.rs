//! `errata size` as a user runs it: the real binary, the repository's data/.

use std::ffi::OsStr;
use std::process::{Command, Output};

/// Runs `errata size --root <repository> ARGS`.
pub fn errata_size<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>) -> Output {
    Command::new(env!("CARGO_BIN_EXE_errata"))
        .args(["size", "--root", env!("CARGO_MANIFEST_DIR")])
        .args(args)
        .output()
        .unwrap()
}

/// Runs it with `--format json`: the answer, or standard error when it fails.
pub fn size_json<S: AsRef<OsStr>>(
    args: impl IntoIterator<Item = S>,
) -> Result<serde_json::Value, String> {
    let mut all: Vec<std::ffi::OsString> = vec!["--format".into(), "json".into()];
    all.extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
    let output = errata_size(all);
    if output.status.success() {
        Ok(serde_json::from_slice(&output.stdout).unwrap())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}
