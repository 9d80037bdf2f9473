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
mod terraform;

pub use observed::expected_state;
pub use plan_check::PlanCheck;
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
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Scratch {
    /// The copied root module directory.
    pub fn path(&self) -> &Path {
        &self.root
    }
}

/// Copies the project to a scratch directory and writes the patched files into it; provider
/// plugins are left out, `.terraform/modules` and the lock file are kept. What the
/// configuration reads outside the root (`check.outside`) is copied at the same place
/// relative to the root, so `../` paths resolve inside the scratch area and nowhere else.
pub fn scratch_copy(check: &Check) -> Result<Scratch, ValidateError> {
    scratch_copy_in(check.root, check.outside, check.changed, None)
}

/// [`scratch_copy`] of `root` with the `changed` texts, in a new directory under `parent`
/// (the system's temporary directory when `None`).
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
    for (path, text) in changed {
        let target = copy.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(fail)?;
        }
        std::fs::write(&target, text).map_err(fail)?;
    }
    Ok(Scratch {
        _dir: dir,
        root: copy,
    })
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

/// Copies a project directory tree into `to` (created when missing), leaving out `.git`,
/// retrace's own `.retrace` and the provider plugins under `.terraform/providers`. A symbolic
/// link is followed when it points inside `from` (a module directory linked from another
/// place in the project) and refused, with the reason, when it points outside it or at a
/// directory holding the link.
pub fn copy_project(from: &Path, to: &Path) -> std::io::Result<()> {
    copy_tree(&from.canonicalize()?, from, to)
}

/// [`copy_project`] of the directory `from`, which lies inside `project` (canonical).
fn copy_tree(project: &Path, from: &Path, to: &Path) -> std::io::Result<()> {
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
        let (path, target) = (entry.path(), to.join(&name));
        let mut kind = entry.file_type()?;
        if kind.is_symlink() {
            followed(project, &path)?;
            kind = std::fs::metadata(&path)?.file_type();
        }
        if kind.is_dir() {
            copy_tree(project, &path, &target)?;
        } else if kind.is_file() {
            std::fs::copy(&path, &target)?;
        }
    }
    Ok(())
}

/// Checks that the symbolic link `link` may be followed: it points inside `project` and not at
/// a directory that holds the link (which would copy forever).
fn followed(project: &Path, link: &Path) -> std::io::Result<()> {
    let refuse = |why: String| std::io::Error::other(why);
    let target = link.canonicalize().map_err(|e| {
        refuse(format!(
            "{} is a symbolic link that cannot be followed: {e}",
            link.display()
        ))
    })?;
    if !target.starts_with(project) {
        return Err(refuse(format!(
            "{} is a symbolic link to {}, outside the project {}; retrace copies only what \
             lies inside the project (copy the directory in, or point the module source at it)",
            link.display(),
            target.display(),
            project.display()
        )));
    }
    let holder = link.parent().map(Path::canonicalize).transpose()?;
    if holder.is_some_and(|holder| holder.starts_with(&target)) {
        return Err(refuse(format!(
            "{} is a symbolic link to {}, a directory that holds the link itself",
            link.display(),
            target.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_inside_the_project_are_followed_and_the_rest_refused() {
        let place = tempfile::tempdir().unwrap();
        let project = place.path().join("project");
        std::fs::create_dir_all(project.join("shared/net")).unwrap();
        std::fs::write(project.join("shared/net/main.tf"), "# net\n").unwrap();
        std::fs::create_dir_all(project.join("modules")).unwrap();
        symlink("../shared/net", project.join("modules/net")).unwrap();
        symlink("shared/net/main.tf", project.join("net.tf")).unwrap();
        std::fs::create_dir_all(project.join(".retrace/terraform")).unwrap();
        let copy = place.path().join("copy");
        copy_project(&project, &copy).unwrap();
        // Followed: real directories and files in the copy, with the linked content.
        assert!(!copy.join("modules/net").is_symlink());
        assert_eq!(
            std::fs::read_to_string(copy.join("modules/net/main.tf")).unwrap(),
            "# net\n"
        );
        assert_eq!(
            std::fs::read_to_string(copy.join("net.tf")).unwrap(),
            "# net\n"
        );
        // retrace's own directory is not part of the project.
        assert!(!copy.join(".retrace").exists());

        // A link out of the project, and one to a directory holding it, are refused.
        let elsewhere = place.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        symlink(&elsewhere, project.join("modules/out")).unwrap();
        let error = copy_project(&project, &place.path().join("copy2")).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("modules/out"), "{text}");
        assert!(text.contains("outside the project"), "{text}");
        std::fs::remove_file(project.join("modules/out")).unwrap();
        symlink("..", project.join("modules/loop")).unwrap();
        let error = copy_project(&project, &place.path().join("copy3")).unwrap_err();
        assert!(
            error.to_string().contains("holds the link itself"),
            "{error}"
        );
    }
}
