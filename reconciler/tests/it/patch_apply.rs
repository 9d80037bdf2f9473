//! Applying a change set: contents, permissions, and refusal when a file changed on disk.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::Path;

use reconciler::patch::{ChangeSet, PatchError};

fn read(root: &Path, path: &str) -> Option<String> {
    fs::read_to_string(root.join(path)).ok()
}

/// The names in a directory, to see no temporary file is left behind.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A root with `main.tf` and `old.tf`, and a change set editing, adding and deleting files.
fn setup() -> (tempfile::TempDir, ChangeSet) {
    let root = tempfile::tempdir().unwrap();
    fs::write(root.path().join("main.tf"), "a = 1\n").unwrap();
    fs::write(root.path().join("old.tf"), "b = 2\n").unwrap();
    let mut changes = ChangeSet::new();
    changes
        .insert("main.tf", Some("a = 1\n".into()), Some("a = 2\n".into()))
        .unwrap();
    changes
        .insert("modules/new/main.tf", None, Some("c = 3\n".into()))
        .unwrap();
    changes
        .insert("old.tf", Some("b = 2\n".into()), None)
        .unwrap();
    (root, changes)
}

#[test]
fn apply_edits_creates_and_deletes() {
    let (root, changes) = setup();
    changes.apply(root.path()).unwrap();
    assert_eq!(read(root.path(), "main.tf").as_deref(), Some("a = 2\n"));
    assert_eq!(
        read(root.path(), "modules/new/main.tf").as_deref(),
        Some("c = 3\n")
    );
    assert_eq!(read(root.path(), "old.tf"), None);
    assert_eq!(names(root.path()), ["main.tf", "modules"]);
    assert_eq!(names(&root.path().join("modules/new")), ["main.tf"]);
}

#[cfg(unix)]
#[test]
fn apply_keeps_permissions_and_gives_new_files_0644() {
    use std::os::unix::fs::PermissionsExt;
    let (root, changes) = setup();
    let main = root.path().join("main.tf");
    fs::set_permissions(&main, fs::Permissions::from_mode(0o750)).unwrap();
    changes.apply(root.path()).unwrap();
    let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&main), 0o750);
    assert_eq!(mode(&root.path().join("modules/new/main.tf")), 0o644);
}

#[test]
fn a_file_edited_since_it_was_read_stops_everything() {
    let (root, changes) = setup();
    fs::write(root.path().join("old.tf"), "b = 2\n# edited by someone\n").unwrap();
    let error = changes.apply(root.path()).unwrap_err();
    assert!(
        matches!(error, PatchError::ChangedOnDisk { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("old.tf"), "{error}");
    assert_eq!(read(root.path(), "main.tf").as_deref(), Some("a = 1\n"));
    assert_eq!(names(root.path()), ["main.tf", "old.tf"]);
}

#[test]
fn a_new_file_that_appeared_is_not_overwritten() {
    let (root, changes) = setup();
    fs::create_dir_all(root.path().join("modules/new")).unwrap();
    fs::write(root.path().join("modules/new/main.tf"), "mine\n").unwrap();
    let error = changes.apply(root.path()).unwrap_err();
    assert!(error.to_string().contains("modules/new/main.tf"), "{error}");
    assert_eq!(
        read(root.path(), "modules/new/main.tf").as_deref(),
        Some("mine\n")
    );
    assert_eq!(read(root.path(), "main.tf").as_deref(), Some("a = 1\n"));
}

#[test]
fn a_file_removed_since_it_was_read_is_a_change() {
    let (root, changes) = setup();
    fs::remove_file(root.path().join("main.tf")).unwrap();
    let error = changes.apply(root.path()).unwrap_err();
    assert!(error.to_string().contains("main.tf"), "{error}");
    assert_eq!(read(root.path(), "main.tf"), None);
}

#[test]
fn applying_keeps_crlf_and_missing_final_newlines_byte_for_byte() {
    let root = tempfile::tempdir().unwrap();
    fs::write(root.path().join("w.tf"), "a = 1\r\nb = 2").unwrap();
    let mut changes = ChangeSet::new();
    changes
        .insert(
            "w.tf",
            Some("a = 1\r\nb = 2".into()),
            Some("a = 1\r\nb = 3".into()),
        )
        .unwrap();
    changes.apply(root.path()).unwrap();
    assert_eq!(
        fs::read(root.path().join("w.tf")).unwrap(),
        b"a = 1\r\nb = 3"
    );
}
