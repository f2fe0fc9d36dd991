//! The errors of a failed build, as `path:line:col: message` lines.

use errata::{BuildError, BuildReport};

/// The build's errors; panics if it did not fail with diagnostics.
pub fn errors(result: Result<BuildReport, BuildError>) -> Vec<String> {
    match result {
        Err(BuildError::Diagnostics(all)) => all
            .iter()
            .filter(|d| d.is_error())
            .map(|d| format!("{}:{}:{}: {}", d.path.display(), d.line, d.col, d.message))
            .collect(),
        Err(other) => panic!("expected diagnostics, got {other}"),
        Ok(_) => panic!("expected the build to fail"),
    }
}
