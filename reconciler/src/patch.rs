//! A change set over several files: shown as a git-style unified diff, and applied all or
//! nothing across files, refusing to overwrite a file that changed since it was read.
//!
//! Applying follows a journal in the root's `.retrace/` directory, so that an interruption at
//! any point leaves every file old or, once the next run completes it, every file new:
//!
//! 1. each new text is written to `.retrace/staged/<n>` and flushed;
//! 2. `.retrace/journal.json` lists each target and its staged file (or its removal), written
//!    to a temporary name, flushed and renamed into place: from here the change is decided;
//! 3. each staged file is renamed over its target (or the target removed), directories
//!    flushed;
//! 4. the journal is removed, then the staging directory.
//!
//! [`recover`] (run before every apply, and by `retrace reconcile` before it reads a project)
//! finishes a decided change whose journal is still there, and throws away staged files that
//! no journal names, so no temporary file outlives a run. `RETRACE_FAULT_AFTER=N` makes the
//! process abort after the N-th step, for the tests that kill a write at every step.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::{self, Write as _};
use std::path::{Component, Path, PathBuf};

use similar::{ChangeTag, TextDiff};
use tempfile::NamedTempFile;

/// Lines of unchanged context around each hunk.
const CONTEXT_LINES: usize = 3;

/// The mode of new files on disk (Unix).
#[cfg(unix)]
const NEW_FILE_MODE: u32 = 0o644;
/// The mode git writes in diff headers for a regular file.
const DIFF_FILE_MODE: &str = "100644";

/// The ANSI sequences of coloured output.
const BOLD: &str = "\x1b[1m";
const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const CYAN: &str = "\x1b[36m";
const RESET: &str = "\x1b[0m";

/// One file's change: `old` is `None` for a new file, `new` is `None` for a deleted one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The text as it was read.
    pub old: Option<String>,
    /// The text to write.
    pub new: Option<String>,
}

/// Whether a diff carries ANSI colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Colour {
    /// No escape sequences: for files, pipes and `git apply`.
    Plain,
    /// Bold headers, cyan hunk headers, red removals and green additions: for a terminal.
    Ansi,
}

/// Changes to several files, by path relative to the root they are applied under.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeSet {
    files: BTreeMap<PathBuf, FileChange>,
}

/// A problem building or applying a change set.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    /// A path is absolute or climbs out of the root.
    #[error("{}: a changed file's path must be relative and stay under the root", path.display())]
    BadPath {
        /// The path.
        path: PathBuf,
    },
    /// A file is not what it was when the change was made, so the change would lose work.
    #[error("{} changed on disk since it was read; not overwriting it", path.display())]
    ChangedOnDisk {
        /// The file.
        path: PathBuf,
    },
    /// Reading, writing, renaming or removing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

impl ChangeSet {
    /// An empty change set.
    pub fn new() -> ChangeSet {
        ChangeSet::default()
    }

    /// Adds or replaces the change to `path`, which must be relative and stay under the root.
    pub fn insert(
        &mut self,
        path: impl Into<PathBuf>,
        old: Option<String>,
        new: Option<String>,
    ) -> Result<(), PatchError> {
        self.insert_checked(path.into(), old, new, false)
    }

    /// Adds or replaces the change to `path`, which may climb out of the root through leading
    /// `..` (a shared module beside it, `../../modules/x/main.tf`), but is otherwise as
    /// [`ChangeSet::insert`] takes it.
    pub fn insert_beside(
        &mut self,
        path: impl Into<PathBuf>,
        old: Option<String>,
        new: Option<String>,
    ) -> Result<(), PatchError> {
        self.insert_checked(path.into(), old, new, true)
    }

    fn insert_checked(
        &mut self,
        path: PathBuf,
        old: Option<String>,
        new: Option<String>,
        beside: bool,
    ) -> Result<(), PatchError> {
        let mut climbing = beside;
        let good = path.components().all(|component| match component {
            Component::ParentDir => climbing,
            Component::Normal(_) | Component::CurDir => {
                climbing = false;
                true
            }
            _ => false,
        });
        let named = path.components().any(|c| matches!(c, Component::Normal(_)));
        if !good || !named {
            return Err(PatchError::BadPath { path });
        }
        self.files.insert(path, FileChange { old, new });
        Ok(())
    }

    /// Whether no file changes.
    pub fn is_empty(&self) -> bool {
        self.changed().next().is_none()
    }

    /// The changes that alter a file, by path.
    pub fn changed(&self) -> impl Iterator<Item = (&Path, &FileChange)> {
        self.files
            .iter()
            .filter(|(_, change)| change.old != change.new)
            .map(|(path, change)| (path.as_path(), change))
    }

    /// The whole change set as a git-style unified diff, files in path order.
    pub fn diff(&self, colour: Colour) -> String {
        let mut out = String::new();
        for (path, change) in self.changed() {
            write_file_diff(&mut out, &diff_path(path), change, colour);
        }
        out
    }

    /// Writes every change under `root`. Each new text goes to a temporary file in its
    /// file's directory, flushed to disk, and is renamed over the file only once every file
    /// has been checked to hold exactly its old text (or, for a new file, not to exist);
    /// otherwise nothing is written (but for directories made for new files, when a file
    /// changes while the others are being staged). A replaced file keeps its permissions.
    pub fn apply(&self, root: &Path) -> Result<(), PatchError> {
        recover(root)?;
        self.check_unchanged(root)?;
        let mut fault = Fault::from_env();
        let staging = root.join(STAGING);
        create_dir(&staging)?;
        let mut entries = Vec::new();
        for (n, (path, change)) in self.changed().enumerate() {
            let staged = match &change.new {
                Some(text) => {
                    let name = format!("{n}");
                    stage(&staging.join(&name), &root.join(path), text)?;
                    fault.step();
                    Some(name)
                }
                None => None,
            };
            entries.push(Entry {
                target: path.to_path_buf(),
                staged,
            });
        }
        self.check_unchanged(root)?;
        write_journal(root, &entries)?;
        fault.step();
        for entry in &entries {
            entry.commit(root)?;
            fault.step();
        }
        finish(root)
    }

    /// Fails unless every file under `root` still holds its old text.
    fn check_unchanged(&self, root: &Path) -> Result<(), PatchError> {
        self.changed()
            .try_for_each(|(path, change)| check_file(&root.join(path), change.old.as_deref()))
    }
}

/// Lines added and removed in a unified diff (file headers not counted).
pub fn diff_size(diff: &str) -> (usize, usize) {
    let added = diff
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .count();
    let removed = diff
        .lines()
        .filter(|l| l.starts_with('-') && !l.starts_with("---"))
        .count();
    (added, removed)
}

/// The path as the diff names it, with `/` separators (`../` kept for a shared module).
fn diff_path(path: &Path) -> String {
    let parts: Vec<_> = path
        .components()
        .filter_map(|component| match component {
            Component::Normal(part) => Some(part.to_string_lossy()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    parts.join("/")
}

/// `prefix` and `path`, in double quotes with C escapes when the path needs them, as git
/// writes names holding quotes, backslashes or ASCII control characters.
fn quoted(prefix: &str, path: &str) -> String {
    let needs_quotes = path
        .chars()
        .any(|c| c == '"' || c == '\\' || c.is_ascii_control());
    if !needs_quotes {
        return format!("{prefix}{path}");
    }
    let mut out = format!("\"{prefix}");
    for c in path.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            c if c.is_ascii_control() => {
                let _ = write!(out, "\\{:03o}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Appends one file's diff: the git header, then its hunks.
fn write_file_diff(out: &mut String, path: &str, change: &FileChange, colour: Colour) {
    let (a, b) = (quoted("a/", path), quoted("b/", path));
    push_line(out, colour, BOLD, &format!("diff --git {a} {b}\n"));
    let created_or_deleted = match (&change.old, &change.new) {
        (None, _) => Some("new"),
        (_, None) => Some("deleted"),
        _ => None,
    };
    if let Some(kind) = created_or_deleted {
        let line = format!("{kind} file mode {DIFF_FILE_MODE}\n");
        push_line(out, colour, BOLD, &line);
    }
    let diff = TextDiff::from_lines(
        change.old.as_deref().unwrap_or(""),
        change.new.as_deref().unwrap_or(""),
    );
    let mut unified = diff.unified_diff();
    unified.context_radius(CONTEXT_LINES);
    let mut hunks = unified.iter_hunks().peekable();
    if hunks.peek().is_none() {
        return;
    }
    // Like git, end the names with a tab when they hold a space, for `patch`'s sake.
    let tab = if path.contains(' ') { "\t" } else { "" };
    let side = |text: &Option<String>, name: String| match text {
        Some(_) => name + tab,
        None => "/dev/null".to_string(),
    };
    push_line(
        out,
        colour,
        BOLD,
        &format!("--- {}\n", side(&change.old, a)),
    );
    push_line(
        out,
        colour,
        BOLD,
        &format!("+++ {}\n", side(&change.new, b)),
    );
    for hunk in hunks {
        push_line(out, colour, CYAN, &format!("{}\n", hunk.header()));
        for line in hunk.iter_changes() {
            let (sign, ansi) = match line.tag() {
                ChangeTag::Equal => (' ', ""),
                ChangeTag::Delete => ('-', RED),
                ChangeTag::Insert => ('+', GREEN),
            };
            push_line(out, colour, ansi, &format!("{sign}{}", line.value()));
            if line.missing_newline() {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
}

/// Appends a line, wrapped in `ansi` when colouring, keeping its line ending (`\n`, `\r\n`
/// or none) outside the colour.
fn push_line(out: &mut String, colour: Colour, ansi: &str, line: &str) {
    if colour == Colour::Plain || ansi.is_empty() {
        out.push_str(line);
        return;
    }
    let body = line.trim_end_matches(['\n', '\r']);
    out.push_str(ansi);
    out.push_str(body);
    out.push_str(RESET);
    out.push_str(&line[body.len()..]);
}

/// The staging directory, under the root.
const STAGING: &str = ".retrace/staged";
/// The journal of a decided change, under the root.
const JOURNAL: &str = ".retrace/journal.json";

/// One file of a decided change: its target and the staged file that replaces it (`None`:
/// the target is removed).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Entry {
    target: PathBuf,
    staged: Option<String>,
}

impl Entry {
    /// Puts the staged file in place of the target (or removes the target); done already when
    /// the staged file is gone (or the target is).
    fn commit(&self, root: &Path) -> Result<(), PatchError> {
        let target = root.join(&self.target);
        let io_error = |source| PatchError::Io {
            path: target.clone(),
            source,
        };
        match &self.staged {
            Some(name) => {
                let staged = root.join(STAGING).join(name);
                if !staged.exists() {
                    return Ok(());
                }
                if let Some(dir) = target.parent() {
                    fs::create_dir_all(dir).map_err(io_error)?;
                }
                fs::rename(&staged, &target).map_err(io_error)?;
            }
            None => match fs::remove_file(&target) {
                Err(error) if error.kind() != io::ErrorKind::NotFound => {
                    return Err(io_error(error));
                }
                _ => {}
            },
        }
        sync_dir(target.parent().unwrap_or(root)).map_err(io_error)
    }
}

/// Finishes or clears an interrupted apply under `root`: a journal still there means the
/// change was decided, so its remaining files are put in place; staged files without a
/// journal were never decided and are removed. Returns whether there was anything to do.
pub fn recover(root: &Path) -> Result<bool, PatchError> {
    let journal = root.join(JOURNAL);
    let staging = root.join(STAGING);
    let io_error = |path: &Path, source| PatchError::Io {
        path: path.to_path_buf(),
        source,
    };
    let pending = match fs::read(&journal) {
        Ok(bytes) => Some(bytes),
        Err(error) if error.kind() == io::ErrorKind::NotFound => None,
        Err(error) => return Err(io_error(&journal, error)),
    };
    if let Some(bytes) = pending {
        let entries: Vec<Entry> = serde_json::from_slice(&bytes)
            .map_err(|e| io_error(&journal, io::Error::new(io::ErrorKind::InvalidData, e)))?;
        for entry in &entries {
            entry.commit(root)?;
        }
        tracing::warn!(root = %root.display(), "completed a patch an earlier run was interrupted writing");
        finish(root)?;
        return Ok(true);
    }
    if staging.exists() {
        fs::remove_dir_all(&staging).map_err(|e| io_error(&staging, e))?;
        remove_if_empty(&root.join(".retrace"));
        return Ok(true);
    }
    Ok(false)
}

/// Removes the journal, then the staging directory and `.retrace/` when nothing else is in it.
fn finish(root: &Path) -> Result<(), PatchError> {
    let journal = root.join(JOURNAL);
    match fs::remove_file(&journal) {
        Err(error) if error.kind() != io::ErrorKind::NotFound => {
            return Err(PatchError::Io {
                path: journal,
                source: error,
            });
        }
        _ => {}
    }
    let meta = root.join(".retrace");
    sync_dir(&meta).ok();
    let staging = root.join(STAGING);
    if staging.exists() {
        fs::remove_dir_all(&staging).map_err(|source| PatchError::Io {
            path: staging,
            source,
        })?;
    }
    remove_if_empty(&meta);
    Ok(())
}

/// Removes a directory that holds nothing (a `.retrace/` the user keeps other things in stays).
fn remove_if_empty(dir: &Path) {
    let _ = fs::remove_dir(dir);
}

fn create_dir(dir: &Path) -> Result<(), PatchError> {
    fs::create_dir_all(dir).map_err(|source| PatchError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

/// Writes the journal under a temporary name, flushes it and renames it into place: the
/// change is decided once the rename is on disk.
fn write_journal(root: &Path, entries: &[Entry]) -> Result<(), PatchError> {
    let journal = root.join(JOURNAL);
    let io_error = |source| PatchError::Io {
        path: journal.clone(),
        source,
    };
    let dir = journal.parent().unwrap_or(root);
    let mut temp = NamedTempFile::new_in(dir).map_err(io_error)?;
    let text = serde_json::to_vec(entries).map_err(|e| io_error(io::Error::other(e)))?;
    temp.write_all(&text).map_err(io_error)?;
    temp.as_file().sync_all().map_err(io_error)?;
    temp.persist(&journal).map_err(|e| io_error(e.error))?;
    sync_dir(dir).map_err(io_error)
}

/// The steps of an apply, counted so a test can abort the process after any one of them
/// (`RETRACE_FAULT_AFTER=N`, a testing aid).
struct Fault {
    after: Option<u32>,
    done: u32,
}

impl Fault {
    fn from_env() -> Fault {
        Fault {
            after: std::env::var("RETRACE_FAULT_AFTER")
                .ok()
                .and_then(|v| v.parse().ok()),
            done: 0,
        }
    }

    /// Counts a step; aborts the process when it is the one asked for.
    fn step(&mut self) {
        self.done += 1;
        if self.after == Some(self.done) {
            std::process::abort();
        }
    }
}

/// Writes `text` to the staging file `staged`, flushed, with `target`'s permissions (or, for
/// a new file, the usual ones).
fn stage(staged: &Path, target: &Path, text: &str) -> Result<(), PatchError> {
    let io_error = |source| PatchError::Io {
        path: staged.to_path_buf(),
        source,
    };
    let mut file = fs::File::create(staged).map_err(io_error)?;
    file.write_all(text.as_bytes()).map_err(io_error)?;
    let permissions = match fs::metadata(target) {
        Ok(metadata) => metadata.permissions(),
        Err(error) if error.kind() == io::ErrorKind::NotFound => new_file_permissions(&file)?,
        Err(error) => return Err(io_error(error)),
    };
    file.set_permissions(permissions).map_err(io_error)?;
    file.sync_all().map_err(io_error)
}

/// The permissions of a new file: `0644` on Unix, the staged file's own elsewhere.
fn new_file_permissions(file: &fs::File) -> Result<fs::Permissions, PatchError> {
    let metadata = file.metadata().map_err(|source| PatchError::Io {
        path: PathBuf::from(STAGING),
        source,
    })?;
    let mut permissions = metadata.permissions();
    #[cfg(unix)]
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, NEW_FILE_MODE);
    Ok(permissions)
}

/// Fails unless `target` holds exactly `old`, or does not exist when `old` is `None`.
fn check_file(target: &Path, old: Option<&str>) -> Result<(), PatchError> {
    let current = match fs::read(target) {
        Ok(bytes) => Some(bytes),
        Err(error) if error.kind() == io::ErrorKind::NotFound => None,
        Err(source) => {
            return Err(PatchError::Io {
                path: target.to_path_buf(),
                source,
            });
        }
    };
    if current.as_deref() == old.map(str::as_bytes) {
        Ok(())
    } else {
        Err(PatchError::ChangedOnDisk {
            path: target.to_path_buf(),
        })
    }
}

/// Flushes a directory's entries to disk (Unix only; elsewhere a rename is as durable as
/// the system makes it).
fn sync_dir(dir: &Path) -> io::Result<()> {
    if cfg!(unix) {
        fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_size_counts_changed_lines_not_headers() {
        let diff = "--- a/main.tf\n+++ b/main.tf\n@@ -1,2 +1,2 @@\n resource {\n-  x = 1\n+  x = 2\n+  y = 3\n";
        assert_eq!(diff_size(diff), (2, 1));
    }

    #[test]
    fn paths_stay_under_the_root_unless_a_shared_module_is_allowed() {
        let mut set = ChangeSet::new();
        for bad in ["/etc/passwd", "../../main.tf", "a/../../b.tf", ""] {
            assert!(set.insert(bad, None, Some("x".into())).is_err(), "{bad}");
        }
        assert!(
            set.insert("modules/a/main.tf", None, Some("x".into()))
                .is_ok()
        );
        for bad in ["/etc/passwd", "modules/../../x.tf", "..", "../.."] {
            assert!(
                set.insert_beside(bad, None, Some("x".into())).is_err(),
                "{bad}"
            );
        }
        assert!(
            set.insert_beside("../../main.tf", Some("a".into()), Some("b".into()))
                .is_ok()
        );
        assert!(set.diff(Colour::Plain).contains("--- a/../../main.tf"));
    }
}
