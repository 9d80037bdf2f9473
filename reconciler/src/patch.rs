//! A change set over several files: shown as a git-style unified diff, and applied atomically
//! file by file, refusing to overwrite a file that changed since it was read.

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
        let path = path.into();
        let inside = path
            .components()
            .all(|component| matches!(component, Component::Normal(_) | Component::CurDir));
        if !inside || path.as_os_str().is_empty() {
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
        self.check_unchanged(root)?;
        let mut staged = Vec::new();
        for (path, change) in self.changed() {
            let target = root.join(path);
            let temp = match &change.new {
                Some(text) => Some(stage(&target, text)?),
                None => None,
            };
            staged.push((target, temp));
        }
        self.check_unchanged(root)?;
        for (target, temp) in staged {
            commit(&target, temp)?;
        }
        Ok(())
    }

    /// Fails unless every file under `root` still holds its old text.
    fn check_unchanged(&self, root: &Path) -> Result<(), PatchError> {
        self.changed()
            .try_for_each(|(path, change)| check_file(&root.join(path), change.old.as_deref()))
    }
}

/// The path as the diff names it, with `/` separators.
fn diff_path(path: &Path) -> String {
    let parts: Vec<_> = path
        .components()
        .filter_map(|component| match component {
            Component::Normal(part) => Some(part.to_string_lossy()),
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

/// Writes `text` to a flushed temporary file beside `target`, with `target`'s permissions
/// (or, for a new file, the usual ones), creating missing directories.
fn stage(target: &Path, text: &str) -> Result<NamedTempFile, PatchError> {
    let io_error = |source| PatchError::Io {
        path: target.to_path_buf(),
        source,
    };
    let dir = target.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(io_error)?;
    let mut temp = NamedTempFile::new_in(dir).map_err(io_error)?;
    temp.write_all(text.as_bytes()).map_err(io_error)?;
    let permissions = match fs::metadata(target) {
        Ok(metadata) => metadata.permissions(),
        Err(error) if error.kind() == io::ErrorKind::NotFound => new_file_permissions(&temp)?,
        Err(error) => return Err(io_error(error)),
    };
    temp.as_file()
        .set_permissions(permissions)
        .map_err(io_error)?;
    temp.as_file().sync_all().map_err(io_error)?;
    Ok(temp)
}

/// The permissions of a new file: `0644` on Unix, the temporary file's own elsewhere.
fn new_file_permissions(temp: &NamedTempFile) -> Result<fs::Permissions, PatchError> {
    let metadata = temp.as_file().metadata().map_err(|source| PatchError::Io {
        path: temp.path().to_path_buf(),
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

/// Renames the staged file over `target`, or removes `target` when there is none, then
/// flushes the directory entry.
fn commit(target: &Path, temp: Option<NamedTempFile>) -> Result<(), PatchError> {
    let io_error = |source| PatchError::Io {
        path: target.to_path_buf(),
        source,
    };
    match temp {
        Some(temp) => {
            temp.persist(target).map_err(|e| io_error(e.error))?;
        }
        None => fs::remove_file(target).map_err(io_error)?,
    }
    sync_dir(target.parent().unwrap_or(Path::new("."))).map_err(io_error)
}

/// Flushes a directory's entries to disk (Unix only; elsewhere a rename is as durable as
/// the system makes it).
fn sync_dir(dir: &Path) -> io::Result<()> {
    if cfg!(unix) {
        fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}
