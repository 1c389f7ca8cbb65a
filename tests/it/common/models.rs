//! The real models some tests check, fetched by `.ci/run` where no variable names a copy.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

/// Runs `.ci/run <command>` once per test run (a second caller waits for the first and gets
/// its answer): the path it prints, if it succeeded and the path is a file.
pub fn fetch_once(command: &str, variable: &str) -> Option<PathBuf> {
    static FETCHED: Mutex<BTreeMap<String, Option<PathBuf>>> = Mutex::new(BTreeMap::new());
    let mut fetched = FETCHED.lock().unwrap_or_else(PoisonError::into_inner);
    fetched
        .entry(command.to_owned())
        .or_insert_with(|| fetch_with_ci(command, variable))
        .clone()
}

/// Runs `.ci/run <command>`, which prints `export <variable>='path'`, and returns the path.
fn fetch_with_ci(command: &str, variable: &str) -> Option<PathBuf> {
    let out = std::process::Command::new("bash")
        .args([".ci/run", command])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stderr(std::process::Stdio::inherit())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let path = text.trim().strip_prefix(&format!("export {variable}="))?;
    let path = PathBuf::from(path.trim_matches('\''));
    (out.status.success() && path.is_file()).then_some(path)
}
