//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used, missing_docs)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The real CloudTrail samples in `../shared/cloudtrail-samples` beside the checkout
/// (`RETRACE_SAMPLES` overrides), or `None` with a visible notice when they are absent, so a
/// fresh clone with nothing beside it still passes. Under `CI=true`, where they are always
/// present, their absence fails the test.
pub fn samples() -> Option<PathBuf> {
    shared(
        "RETRACE_SAMPLES",
        "cloudtrail-samples",
        "real CloudTrail samples",
    )
}

/// The public Terraform projects in `../shared/terraform-corpus` (`RETRACE_CORPUS`
/// overrides), as [`samples`] finds its directory.
pub fn corpus() -> Option<PathBuf> {
    shared("RETRACE_CORPUS", "terraform-corpus", "the Terraform corpus")
}

fn shared(variable: &str, name: &str, what: &str) -> Option<PathBuf> {
    let dir = std::env::var_os(variable)
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("../shared").join(name));
    if dir.is_dir() {
        return Some(dir);
    }
    let message = format!(
        "{what} not found at {}; check out ../shared beside the repo or set {variable}",
        dir.display()
    );
    assert!(
        std::env::var("CI").map_or(true, |v| v != "true"),
        "{message} (required under CI=true)"
    );
    // Written to the process's stderr directly: the test harness captures `eprintln!` of a
    // passing test, and this notice must be seen.
    let _ = writeln!(std::io::stderr(), "notice: skipping: {message}");
    None
}

/// Runs the `retrace` binary with arguments, from the repository root.
pub fn retrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retrace"))
        .args(args)
        .current_dir(repo())
        .env_remove("RUST_LOG")
        .output()
        .expect("retrace runs")
}

/// Standard output as JSON.
pub fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// Count of one verdict in a `--format json` summary.
pub fn count(doc: &serde_json::Value, verdict: &str) -> u64 {
    doc["summary"]["counts"]["by_verdict"][verdict]
        .as_u64()
        .unwrap_or(0)
}

/// The event ids of the listed calls, in output order.
pub fn ids(doc: &serde_json::Value) -> Vec<String> {
    doc["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["event_id"].as_str().unwrap().to_owned())
        .collect()
}

/// Copies a directory tree (a fixture project into a scratch directory).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// `retrace reconcile --format json` (no `--write`, no store, no Terraform) over the files, a
/// state and CloudTrail records: the exit code, the JSON report and the project directory
/// (kept alive by the returned guard).
pub fn reconcile_records(
    files: &[(&str, &str)],
    state: &serde_json::Value,
    records: Vec<serde_json::Value>,
) -> (i32, serde_json::Value, tempfile::TempDir) {
    let dir = scratch(files);
    let state_path = dir.path().join("terraform.tfstate");
    std::fs::write(&state_path, state.to_string()).unwrap();
    let trail = dir.path().join("trail.json");
    std::fs::write(&trail, serde_json::json!({"Records": records}).to_string()).unwrap();
    let output = retrace(&[
        "reconcile",
        "--project",
        dir.path().to_str().unwrap(),
        "--state",
        state_path.to_str().unwrap(),
        "--logs",
        trail.to_str().unwrap(),
        "--no-record",
        "--no-terraform",
        "--format",
        "json",
    ]);
    (output.status.code().unwrap_or(-1), json(&output), dir)
}

/// Writes `files` (path, text) into a new temporary directory, making parent directories.
pub fn scratch(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}
