//! Validation: does the patched configuration describe the cloud as it now is?
//!
//! Two validators behind one trait. [`PlanCheck`] is built in and needs nothing outside: it
//! loads the patched configuration, evaluates every resource instance, and compares each
//! configured attribute with the observed state after the drift (a `terraform show -json`
//! snapshot after a refresh when one is given, otherwise the state with the intents' net
//! effect applied), the way `terraform plan` would find differences; it also reports what the
//! patch changed that it should not have (an instance whose evaluated arguments changed
//! although no intent touched it). [`TerraformPlan`] has the real `terraform` and AWS provider
//! plan the patched project against the observed state, offline when no credentials are set.

mod observed;
mod plan_check;
mod sandbox;
mod terraform;

pub use observed::expected_state;
pub use plan_check::PlanCheck;
pub use sandbox::{Reach, Sandbox, admit};
pub use terraform::{TerraformPlan, terraform_binary, terraform_present};

use crate::terraform::state::State;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a validator checks.
pub struct Check<'a> {
    /// The project's root directory, unpatched.
    pub root: &'a Path,
    /// The run's one scratch copy of the project, which the built-in check sets to the patch.
    pub sandbox: &'a Sandbox,
    /// What the configuration reads outside the root, root-relative (`../../modules/vpc`,
    /// `../common.tfvars`): copied beside the root in the scratch area, layout kept.
    pub outside: &'a [String],
    /// The patched text of every changed file, by path relative to the root.
    pub changed: &'a BTreeMap<String, String>,
    /// `-var-file` arguments.
    pub var_files: &'a [PathBuf],
    /// The state before the drift (references between resources resolve from it).
    pub state: &'a State,
    /// The cloud after the drift, in state form.
    pub observed: &'a State,
    /// Addresses whose configuration should now match the observed state.
    pub touched: &'a [String],
    /// (address, attribute) pairs left alone on purpose (flagged or ignored parts); an empty
    /// attribute means the whole resource.
    pub excused: &'a [(String, String)],
    /// Addresses of objects created outside Terraform that the patch declares without an
    /// import (the provider cannot import their type): the observed state holds each object
    /// at its address, and the plan creates it, setting what the object has.
    pub creates: &'a [String],
}

/// One attribute where the configuration and the observed cloud disagree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    /// The instance address.
    pub address: String,
    /// The attribute path (empty for the whole instance).
    pub attribute: String,
    /// What the configuration says (null when the instance is missing from it).
    pub config: Value,
    /// What the cloud has (null when the instance is missing from it).
    pub observed: Value,
}

/// A validator's verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Validation {
    /// The validator's name.
    pub validator: String,
    /// Whether the touched resources now match and nothing else changed.
    pub passed: bool,
    /// What still differs on the touched resources.
    pub differences: Vec<Difference>,
    /// Instances the patch changed although no intent touched them.
    pub collateral: Vec<Difference>,
    /// Anything else worth saying (why a validator did not run, Terraform's own summary).
    pub note: Option<String>,
}

/// A validator could not run to a verdict.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    /// The patched project could not be written to a scratch directory.
    #[error("cannot prepare a scratch copy of {root}: {source}")]
    Scratch {
        /// The project root.
        root: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A patched file's path leaves the project's scratch copy (`..` past it, an absolute
    /// path, a symbolic link).
    #[error("the patched file {path} lies outside the project's scratch copy")]
    Outside {
        /// The path as given.
        path: String,
    },
    /// The patched configuration does not load.
    #[error("the patched configuration does not load: {0}")]
    Load(String),
    /// `terraform` failed to run.
    #[error("terraform failed: {0}")]
    Terraform(String),
    /// The validator cannot judge here after all (a provider that does not meet the version
    /// constraints, a plan that needed the cloud): reported as not run, with the reason.
    #[error("{0}")]
    Unavailable(String),
}

/// Something that judges a patch. Validators run on threads beside one another.
pub trait Validator: Send + Sync {
    /// A short name for reports.
    fn name(&self) -> &'static str;
    /// Whether it can run here (binary, credentials); the reason when not.
    fn available(&self, root: &Path) -> Result<(), String>;
    /// Gets ready to judge patches of the project at `root` before the patch is known (the
    /// real Terraform initialises its working directory), so that [`Validator::validate`]
    /// waits less; `outside` as in [`Check::outside`]. Nothing by default.
    fn prepare(&self, _root: &Path, _outside: &[String]) {}
    /// Checks the patch.
    fn validate(&self, check: &Check) -> Result<Validation, ValidateError>;
}

/// A scratch copy of a project: its directory, and the root inside it.
pub struct Scratch {
    dir: tempfile::TempDir,
    root: PathBuf,
}

impl Scratch {
    /// The copied root module directory.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The directory that holds the copy (removed when dropped), and the copied root.
    fn into_parts(self) -> (tempfile::TempDir, PathBuf) {
        (self.dir, self.root)
    }
}

/// Copies the project at `root` to a new directory under `parent` (the system's temporary
/// directory when `None`) and writes the `changed` texts into it; provider plugins are left
/// out, `.terraform/modules` and the lock file are kept. What the configuration reads outside
/// the root (`outside`, as [`Check::outside`]) is copied at the same place relative to the
/// root, so `../` paths resolve inside the scratch area and nowhere else; a changed path
/// [`admit`] refuses, or one that leaves the area, is refused before anything is written.
pub(crate) fn scratch_copy_in(
    root: &Path,
    outside: &[String],
    changed: &BTreeMap<String, String>,
    parent: Option<&Path>,
) -> Result<Scratch, ValidateError> {
    let fail = |source| ValidateError::Scratch {
        root: root.to_owned(),
        source,
    };
    let dir = match parent {
        Some(parent) => tempfile::tempdir_in(parent),
        None => tempfile::tempdir(),
    }
    .map_err(fail)?;
    let depth = outside.iter().map(|p| parents(p)).max().unwrap_or(0);
    let copy = dir.path().join(tail(root, depth).map_err(fail)?);
    let targets = sandbox::targets(root, dir.path(), &copy, changed)?;
    copy_project(root, &copy).map_err(fail)?;
    for path in outside {
        let (from, to) = (root.join(path), copy.join(path));
        if from.is_dir() {
            copy_project(&from, &to).map_err(fail)?;
        } else if from.is_file() {
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(fail)?;
            }
            std::fs::copy(&from, &to).map_err(fail)?;
        }
    }
    for (text, target) in changed.values().zip(targets) {
        sandbox::write(&target, text).map_err(fail)?;
    }
    Ok(Scratch { dir, root: copy })
}

/// How many leading `..` a root-relative path has.
fn parents(path: &str) -> usize {
    path.split('/').take_while(|part| *part == "..").count()
}

/// The last `depth` components of the root's absolute path (`examples/complete` for depth 2),
/// where it sits below the directory its `../` paths reach; empty for depth 0.
fn tail(root: &Path, depth: usize) -> std::io::Result<PathBuf> {
    let absolute = root.canonicalize()?;
    let parts: Vec<_> = absolute.components().collect();
    let keep = depth.min(parts.len().saturating_sub(1));
    Ok(parts[parts.len() - keep..].iter().collect())
}

/// Copies a project directory tree into `to` (created when missing), leaving out `.git` and
/// the provider plugins under `.terraform/providers`. Symbolic links are followed (a module
/// directory linked into the project is copied as a directory), except one that leads back
/// to a directory being copied; a dangling link is left out.
pub fn copy_project(from: &Path, to: &Path) -> std::io::Result<()> {
    copy_tree(from, to, &mut vec![from.canonicalize()?])
}

fn copy_tree(from: &Path, to: &Path, open: &mut Vec<PathBuf>) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        let skip = name == ".git"
            || name == ".retrace"
            || name == "providers" && from.ends_with(".terraform");
        if skip {
            continue;
        }
        let path = entry.path();
        let Ok(real) = path.canonicalize() else {
            continue;
        };
        if real.is_dir() {
            if open.iter().any(|o| o.starts_with(&real)) {
                continue;
            }
            open.push(real);
            copy_tree(&path, &to.join(&name), open)?;
            open.pop();
        } else if real.is_file() {
            std::fs::copy(&real, to.join(&name))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlinked_module_directory_is_copied_and_a_loop_is_not_followed() {
        let temp = tempfile::tempdir().expect("a temporary directory");
        let shared = temp.path().join("shared/bucket");
        std::fs::create_dir_all(&shared).expect("dirs");
        std::fs::write(shared.join("main.tf"), "variable \"name\" {}\n").expect("module");
        let root = temp.path().join("project");
        std::fs::create_dir_all(root.join("modules")).expect("dirs");
        std::fs::write(root.join("main.tf"), "module \"b\" {}\n").expect("root");
        std::os::unix::fs::symlink(&shared, root.join("modules/bucket")).expect("link");
        std::os::unix::fs::symlink(&root, root.join("modules/again")).expect("loop");
        std::os::unix::fs::symlink(temp.path().join("gone"), root.join("dangling")).expect("link");
        let copy = temp.path().join("copy");
        copy_project(&root, &copy).expect("copied");
        assert_eq!(
            std::fs::read_to_string(copy.join("modules/bucket/main.tf")).expect("module copied"),
            "variable \"name\" {}\n"
        );
        assert!(!copy.join("modules/again").exists());
        assert!(!copy.join("dangling").exists());
    }
}
