//! Any program as the system under test (`retrace-eval run --system 'CMD'`).
//!
//! For each sample the harness copies the scenario's project into a scratch directory and runs
//! `sh -c CMD` (in the harness's own working directory) with these environment variables:
//!
//! | variable | what it is |
//! |---|---|
//! | `RETRACE_PROJECT` | the project copy (code and pre-drift `terraform.tfstate`): patch it in place |
//! | `RETRACE_STATE` | the pre-drift state, `$RETRACE_PROJECT/terraform.tfstate` |
//! | `RETRACE_TRAIL` | every CloudTrail record of the day: `{"Records": [...]}` JSON, or JSON Lines (`.jsonl.gz`) from a released dataset |
//! | `RETRACE_OBSERVED` | the state as `terraform plan -refresh-only` would see the cloud now (managed resources only) |
//! | `RETRACE_DECISIONS` | where the system may write its decisions: JSON as [`Decisions`] |
//! | `RETRACE_SCENARIO` | the scenario id (for the system's logs only) |
//!
//! Exit codes 0, 2 and 3 (retrace's: nothing to do, patched, not all absorbed) count as a run;
//! any other is a failed sample with the system's last lines of standard error as the reason.
//! The files the system changed, added or deleted in the copy (the state files and
//! `.terraform*` entries aside) are its patch; the decisions file is optional.

use super::report::{ChangedFile, Decisions, Report};
use reconciler::terraform::state::{State, tfstate_json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the harness gives the system.
pub struct Inputs<'a> {
    /// The scenario id.
    pub id: &'a str,
    /// The project as it was (to tell what the system changed).
    pub original: &'a Path,
    /// The copy the system patches.
    pub project: &'a Path,
    /// The trail file.
    pub trail: &'a Path,
    /// The refreshed state.
    pub observed: &'a State,
    /// A scratch directory outside the copy, for the observed state and the decisions.
    pub work: &'a Path,
}

/// What the system left.
pub struct Ran {
    /// Its changed files and decisions.
    pub report: Report,
    /// The changed files' paths and texts, identifying the patch.
    pub key: String,
    /// Lines added and removed over the changed files.
    pub lines: (usize, usize),
}

/// Runs `command` on the inputs; why not, when it could not run or failed.
pub fn run(command: &str, inputs: &Inputs) -> Result<Ran, String> {
    let observed = inputs.work.join("observed.tfstate");
    let decisions = inputs.work.join("decisions.json");
    let text =
        serde_json::to_vec_pretty(&tfstate_json(inputs.observed)).map_err(|e| e.to_string())?;
    std::fs::write(&observed, text).map_err(|e| format!("{}: {e}", observed.display()))?;
    let output = Command::new("sh")
        .arg("-c")
        .arg(command)
        .env("RETRACE_PROJECT", inputs.project)
        .env("RETRACE_STATE", inputs.project.join("terraform.tfstate"))
        .env("RETRACE_TRAIL", inputs.trail)
        .env("RETRACE_OBSERVED", &observed)
        .env("RETRACE_DECISIONS", &decisions)
        .env("RETRACE_SCENARIO", inputs.id)
        .output()
        .map_err(|e| format!("cannot run the system `{command}`: {e}"))?;
    let code = output.status.code();
    if !matches!(code, Some(0 | 2 | 3)) {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!(
            "the system exited with {}: {}",
            code.map_or("a signal".to_owned(), |c| format!("code {c}")),
            tail.join(" / ")
        ));
    }
    let decided = match std::fs::read(&decisions) {
        Ok(bytes) => serde_json::from_slice::<Decisions>(&bytes)
            .map_err(|e| format!("{}: not a decisions document: {e}", decisions.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Decisions::default(),
        Err(e) => return Err(format!("{}: {e}", decisions.display())),
    };
    let changed = changed_files(inputs.original, inputs.project)?;
    let mut key = String::new();
    let mut lines = (0, 0);
    for change in &changed {
        let old = std::fs::read_to_string(inputs.original.join(&change.path)).unwrap_or_default();
        let new = change.new.as_deref().unwrap_or_default();
        let (added, removed) = line_changes(&old, new);
        lines = (lines.0 + added, lines.1 + removed);
        key.push_str(&format!("{}\n{new}\n", change.path.display()));
    }
    Ok(Ran {
        report: Report {
            changed,
            decisions: decided,
        },
        key,
        lines,
    })
}

/// Lines added and removed from `old` to `new`.
fn line_changes(old: &str, new: &str) -> (usize, usize) {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut counts = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Insert => counts.0 += 1,
            similar::ChangeTag::Delete => counts.1 += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    counts
}

/// The files that differ between the two trees (relative paths), with their new text.
fn changed_files(original: &Path, copy: &Path) -> Result<Vec<ChangedFile>, String> {
    let before = texts(original)?;
    let after = texts(copy)?;
    let mut changed = Vec::new();
    for (path, text) in &after {
        if before.get(path) != Some(text) {
            changed.push(ChangedFile {
                path: path.clone(),
                new: Some(text.clone()),
            });
        }
    }
    for path in before.keys().filter(|p| !after.contains_key(*p)) {
        changed.push(ChangedFile {
            path: path.clone(),
            new: None,
        });
    }
    changed.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(changed)
}

/// Every file under `root` that is code (not a state file, not under `.terraform`), by
/// relative path.
fn texts(root: &Path) -> Result<BTreeMap<PathBuf, String>, String> {
    let mut out = BTreeMap::new();
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let name = name.unwrap_or_default();
            if name.starts_with(".terraform") || name.starts_with("terraform.tfstate") {
                continue;
            }
            if path.is_dir() {
                pending.push(path);
            } else {
                let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                let relative = path.strip_prefix(root).unwrap_or(&path).to_owned();
                out.insert(relative, String::from_utf8_lossy(&bytes).into_owned());
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn changed_added_and_deleted_files_are_the_patch_and_state_files_are_not() {
        let original = tempfile::tempdir().unwrap();
        let copy = tempfile::tempdir().unwrap();
        for dir in [original.path(), copy.path()] {
            std::fs::write(dir.join("main.tf"), "a = 1\n").unwrap();
            std::fs::write(dir.join("old.tf"), "b = 2\n").unwrap();
            std::fs::write(dir.join("terraform.tfstate"), "{}").unwrap();
        }
        std::fs::write(copy.path().join("main.tf"), "a = 2\nc = 3\n").unwrap();
        std::fs::remove_file(copy.path().join("old.tf")).unwrap();
        std::fs::write(copy.path().join("imports.tf"), "import {}\n").unwrap();
        std::fs::write(copy.path().join("terraform.tfstate"), "{\"x\":1}").unwrap();
        std::fs::create_dir(copy.path().join(".terraform")).unwrap();
        std::fs::write(copy.path().join(".terraform/x"), "").unwrap();
        let changed = changed_files(original.path(), copy.path()).unwrap();
        let names: Vec<(String, bool)> = changed
            .iter()
            .map(|c| (c.path.display().to_string(), c.new.is_some()))
            .collect();
        assert_eq!(
            names,
            [
                ("imports.tf".to_owned(), true),
                ("main.tf".to_owned(), true),
                ("old.tf".to_owned(), false)
            ]
        );
        assert_eq!(line_changes("a = 1\n", "a = 2\nc = 3\n"), (2, 1));
    }

    #[test]
    fn a_system_gets_its_inputs_and_its_patch_and_decisions_are_read() {
        let original = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let project = work.path().join("project");
        std::fs::create_dir(&project).unwrap();
        for dir in [original.path(), project.as_path()] {
            std::fs::write(dir.join("main.tf"), "a = 1\n").unwrap();
        }
        let trail = work.path().join("trail.json");
        std::fs::write(&trail, "{\"Records\": []}").unwrap();
        let observed = State::parse(
            br#"{"version":4,"terraform_version":"1.9.0","serial":1,"lineage":"l","resources":[]}"#,
            "test",
        )
        .unwrap();
        let inputs = Inputs {
            id: "s-1",
            original: original.path(),
            project: &project,
            trail: &trail,
            observed: &observed,
            work: work.path(),
        };
        let script = r#"test -f "$RETRACE_TRAIL" && test -f "$RETRACE_OBSERVED" && test "$RETRACE_SCENARIO" = s-1 &&
            echo 'a = 2' > "$RETRACE_PROJECT/main.tf" &&
            echo '{"findings":[{"kind":"security","event":"iam.amazonaws.com:PutRolePolicy"}]}' > "$RETRACE_DECISIONS"; exit 2"#;
        let ran = run(script, &inputs).unwrap();
        assert_eq!(ran.report.changed.len(), 1);
        assert_eq!(ran.report.changed[0].new.as_deref(), Some("a = 2\n"));
        assert_eq!(
            ran.report.decisions.findings[0].event,
            "iam.amazonaws.com:PutRolePolicy"
        );
        assert_eq!(ran.lines, (1, 1));
        let failed = run("echo broken >&2; exit 1", &inputs).err().unwrap();
        assert!(
            failed.contains("code 1") && failed.contains("broken"),
            "{failed}"
        );
    }
}
