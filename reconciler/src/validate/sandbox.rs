//! The one scratch copy of a project that every check of a run works in, and the one rule for
//! where an edit may land.
//!
//! The built-in plan check of the planner's patch, its repair rounds, and the agent's tools
//! that try edits (`check_plan`, `submit_edits`, the placement it checks) all set the same
//! copy to their patch: it is made once, at its first use, and afterwards only the files a
//! patch changes are written (and put back when the next patch leaves them). Every path
//! written into it, and every path an edit may take in the project itself, passes [`admit`].

use super::ValidateError;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// Where an admitted edit lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// In the project's own directory tree.
    Root,
    /// Outside it, in files other roots may read too: through leading `..` (a module beside
    /// the root) or through a symbolic link to a directory outside the root.
    Shared,
}

/// Whether an edit may write the root-relative `path` of the project at `root`, and where it
/// lands. A path must be relative and plainly written (names separated by `/`; `..` only at its
/// start, to reach a module beside the root), and must not be a symbolic link: writing it
/// would replace the link with a file. A path through a linked directory lands where the link
/// points, [`Reach::Shared`] when that is outside the root. Refused with the reason.
pub fn admit(root: &Path, path: &str) -> Result<Reach, String> {
    if path.is_empty() {
        return Err("an empty path names no file".to_owned());
    }
    if path.starts_with('/') || path.contains('\\') || Path::new(path).has_root() {
        return Err(format!(
            "{path} is not a path relative to the project's root"
        ));
    }
    let mut reach = Reach::Root;
    let mut climbing = true;
    let mut at = root.to_path_buf();
    let names: Vec<&str> = path.split('/').collect();
    for (i, name) in names.iter().enumerate() {
        match *name {
            ".." if climbing => {
                reach = Reach::Shared;
                at.push(name);
                continue;
            }
            "" | "." | ".." => {
                return Err(format!(
                    "{path} is not written plainly (empty, `.` or inner `..` parts)"
                ));
            }
            _ => climbing = false,
        }
        at.push(name);
        let Ok(meta) = at.symlink_metadata() else {
            continue;
        };
        if !meta.file_type().is_symlink() {
            continue;
        }
        if i + 1 == names.len() || at.is_file() {
            return Err(format!(
                "{path} is a symbolic link: an edit would replace the link with a file"
            ));
        }
        if !inside(root, &at) {
            reach = Reach::Shared;
        }
    }
    Ok(reach)
}

/// Whether the real location of `path` lies in the real directory `root`.
fn inside(root: &Path, path: &Path) -> bool {
    match (root.canonicalize(), path.canonicalize()) {
        (Ok(root), Ok(path)) => path.starts_with(root),
        _ => false,
    }
}

/// One scratch copy of the project at a root, shared by every check of a run; see the module
/// documentation. Checks that use it wait for one another.
pub struct Sandbox {
    root: PathBuf,
    tree: Mutex<Option<Tree>>,
}

/// The copy itself, once made.
struct Tree {
    /// The directory that holds the copy and what it reads beside its root; removes them
    /// when dropped.
    area: tempfile::TempDir,
    /// The copied root.
    copy: PathBuf,
    /// What was copied from beside the root ([`super::Check::outside`]).
    outside: Vec<String>,
    /// The root-relative paths the last patch wrote.
    patched: Vec<String>,
}

impl Sandbox {
    /// A sandbox for the project at `root`; nothing is copied before the first check.
    pub fn new(root: &Path) -> Sandbox {
        Sandbox {
            root: root.to_owned(),
            tree: Mutex::new(None),
        }
    }

    /// Sets the copy to the project with `changed` (root-relative paths and their texts) over
    /// it and runs `look` on the copied root; `outside` is what the configuration reads beside
    /// its root, copied at the same place relative to it. A path [`admit`] refuses, or one that
    /// leaves the copy, is refused with [`ValidateError::Outside`] and nothing is written.
    pub fn with_patch<T>(
        &self,
        outside: &[String],
        changed: &BTreeMap<String, String>,
        look: impl FnOnce(&Path) -> Result<T, ValidateError>,
    ) -> Result<T, ValidateError> {
        let mut tree = self.tree.lock().unwrap_or_else(PoisonError::into_inner);
        if tree.as_ref().is_none_or(|t| t.outside != outside) {
            *tree = None;
            *tree = Some(Tree::build(&self.root, outside)?);
        }
        let Some(built) = tree.as_mut() else {
            unreachable!("the copy was just made");
        };
        let targets = targets(&self.root, built.area.path(), &built.copy, changed)?;
        if let Err(source) = built.set(&self.root, changed, targets) {
            // Half set: the next check copies afresh.
            *tree = None;
            return Err(ValidateError::Scratch {
                root: self.root.clone(),
                source,
            });
        }
        look(&built.copy)
    }
}

impl Tree {
    fn build(root: &Path, outside: &[String]) -> Result<Tree, ValidateError> {
        let scratch = super::scratch_copy_in(root, outside, &BTreeMap::new(), None)?;
        let (area, copy) = scratch.into_parts();
        Ok(Tree {
            area,
            copy,
            outside: outside.to_vec(),
            patched: Vec::new(),
        })
    }

    /// Puts back what the last patch wrote, then writes `changed` at its `targets`.
    fn set(
        &mut self,
        root: &Path,
        changed: &BTreeMap<String, String>,
        targets: Vec<PathBuf>,
    ) -> std::io::Result<()> {
        for path in std::mem::take(&mut self.patched) {
            if changed.contains_key(&path) {
                continue;
            }
            if let Some(target) = confined(self.area.path(), &self.copy, &path) {
                restore(&root.join(&path), &target)?;
            }
        }
        for ((path, text), target) in changed.iter().zip(targets) {
            self.patched.push(path.clone());
            write(&target, text)?;
        }
        Ok(())
    }
}

/// Where each changed path lands in a copy (root `copy` inside `area`), all checked before
/// anything is written.
pub(super) fn targets(
    root: &Path,
    area: &Path,
    copy: &Path,
    changed: &BTreeMap<String, String>,
) -> Result<Vec<PathBuf>, ValidateError> {
    changed
        .keys()
        .map(|path| {
            let outside = || ValidateError::Outside { path: path.clone() };
            admit(root, path).map_err(|_| outside())?;
            confined(area, copy, path).ok_or_else(outside)
        })
        .collect()
}

/// Writes `text` to `target`, making its directory.
pub(super) fn write(target: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(target, text)
}

/// Makes `target` the project's `original` again, or removes it when the project has none.
fn restore(original: &Path, target: &Path) -> std::io::Result<()> {
    if original.is_file() {
        std::fs::copy(original, target).map(drop)
    } else {
        match std::fs::remove_file(target) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
            _ => Ok(()),
        }
    }
}

/// Where a root-relative path lands inside the scratch area `area` (the copy's root is
/// `root`), with `..` resolved by name; `None` for one that leaves the area.
fn confined(area: &Path, root: &Path, path: &str) -> Option<PathBuf> {
    let mut out = root.to_path_buf();
    for part in Path::new(path).components() {
        match part {
            Component::Normal(name) => out.push(name),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (out.starts_with(area) && out != area).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A project `examples/app` under a temporary directory, reading `../../modules/m`.
    fn project() -> (tempfile::TempDir, PathBuf) {
        let temp = tempfile::tempdir().expect("a temporary directory");
        let root = temp.path().join("examples/app");
        std::fs::create_dir_all(&root).expect("root");
        std::fs::create_dir_all(temp.path().join("modules/m")).expect("module");
        std::fs::write(root.join("main.tf"), "# root\n").expect("main");
        std::fs::write(temp.path().join("modules/m/main.tf"), "# module\n").expect("module");
        (temp, root)
    }

    fn patch(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
            .collect()
    }

    fn read(dir: &Path, path: &str) -> Option<String> {
        std::fs::read_to_string(dir.join(path)).ok()
    }

    #[test]
    fn admits_plain_paths_and_names_what_lands_outside_the_root() {
        let (temp, root) = project();
        assert_eq!(admit(&root, "main.tf"), Ok(Reach::Root));
        assert_eq!(admit(&root, "new/extra.tf"), Ok(Reach::Root));
        assert_eq!(admit(&root, "../../modules/m/main.tf"), Ok(Reach::Shared));
        for bad in [
            "",
            "/etc/passwd",
            "a/../../x.tf",
            "./main.tf",
            "a//b.tf",
            "..\\x.tf",
        ] {
            assert!(admit(&root, bad).is_err(), "{bad:?} admitted");
        }
        symlink(temp.path().join("modules/m"), root.join("linked")).expect("dir link");
        symlink(root.join("main.tf"), root.join("alias.tf")).expect("file link");
        std::fs::create_dir_all(root.join("inner")).expect("inner");
        symlink(root.join("inner"), root.join("also")).expect("inner link");
        assert_eq!(admit(&root, "linked/main.tf"), Ok(Reach::Shared));
        assert_eq!(admit(&root, "also/x.tf"), Ok(Reach::Root));
        let refused = admit(&root, "alias.tf").expect_err("a linked file is refused");
        assert!(refused.contains("symbolic link"), "{refused}");
    }

    #[test]
    fn one_copy_takes_each_patch_in_turn_and_puts_back_what_the_last_one_wrote() {
        let (temp, root) = project();
        let sandbox = Sandbox::new(&root);
        let outside = ["../../modules/m".to_owned()];
        let first = patch(&[("main.tf", "# one\n"), ("extra.tf", "# new\n")]);
        let copy = sandbox
            .with_patch(&outside, &first, |copy| {
                assert_eq!(read(copy, "main.tf").as_deref(), Some("# one\n"));
                assert_eq!(read(copy, "extra.tf").as_deref(), Some("# new\n"));
                assert_eq!(
                    read(copy, "../../modules/m/main.tf").as_deref(),
                    Some("# module\n")
                );
                // Left in the copy to show the second check does not copy afresh.
                std::fs::write(copy.join("marker"), "").expect("marker");
                Ok(copy.to_owned())
            })
            .expect("first check");
        let second = patch(&[("../../modules/m/main.tf", "# two\n")]);
        sandbox
            .with_patch(&outside, &second, |again| {
                assert_eq!(again, copy);
                assert!(again.join("marker").exists(), "copied afresh");
                assert_eq!(read(again, "main.tf").as_deref(), Some("# root\n"));
                assert_eq!(read(again, "extra.tf"), None);
                assert_eq!(
                    read(again, "../../modules/m/main.tf").as_deref(),
                    Some("# two\n")
                );
                Ok(())
            })
            .expect("second check");
        assert_eq!(read(&root, "main.tf").as_deref(), Some("# root\n"));
        assert_eq!(
            read(temp.path(), "modules/m/main.tf").as_deref(),
            Some("# module\n")
        );
        drop(sandbox);
        assert!(!copy.exists(), "the copy outlives its sandbox");
    }

    #[test]
    fn a_path_out_of_the_copy_or_through_a_link_is_refused_and_nothing_is_written() {
        let (_temp, root) = project();
        symlink(root.join("main.tf"), root.join("alias.tf")).expect("file link");
        let sandbox = Sandbox::new(&root);
        let stray = "../../retrace-sandbox-test-stray.tf";
        for bad in [stray, "/tmp/retrace-sandbox-test-stray.tf", "alias.tf"] {
            let changed = patch(&[("main.tf", "# one\n"), (bad, "# stray\n")]);
            let error = sandbox
                .with_patch(&[], &changed, |_| Ok(()))
                .expect_err("refused");
            assert!(
                matches!(&error, ValidateError::Outside { path } if path == bad),
                "{error}"
            );
        }
        sandbox
            .with_patch(&[], &BTreeMap::new(), |copy| {
                assert_eq!(read(copy, "main.tf").as_deref(), Some("# root\n"));
                Ok(())
            })
            .expect("an empty patch");
        // The copy sits in a new directory of the system's temporary one.
        let beside = std::env::temp_dir().join("retrace-sandbox-test-stray.tf");
        assert!(!beside.exists(), "written beside the copy");
        assert_eq!(read(&root, "alias.tf").as_deref(), Some("# root\n"));
    }
}
