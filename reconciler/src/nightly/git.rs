//! The `git` command line, run in one repository: fetch, branch, commit and push with the
//! user's own git configuration and credentials.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A git command that failed.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// git could not be started.
    #[error("cannot run git ({0}): is it installed and on PATH?")]
    Start(std::io::Error),
    /// git ran and failed.
    #[error("`git {command}` in {dir} failed: {message}")]
    Failed {
        /// The arguments, joined.
        command: String,
        /// The directory it ran in.
        dir: String,
        /// What git printed on standard error.
        message: String,
    },
}

/// A repository's working tree.
#[derive(Debug, Clone)]
pub struct Git {
    dir: PathBuf,
}

/// Who commits.
#[derive(Debug, Clone)]
pub struct Author {
    /// The name.
    pub name: String,
    /// The e-mail address.
    pub email: String,
}

impl Git {
    /// The working tree at `dir`.
    pub fn at(dir: &Path) -> Git {
        Git {
            dir: dir.to_owned(),
        }
    }

    /// The working tree's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Clones `url` into `dir` (which must not exist yet).
    pub fn clone_into(url: &str, dir: &Path) -> Result<Git, GitError> {
        let parent = dir.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent).map_err(GitError::Start)?;
        let target = dir.display().to_string();
        Git::at(parent).run(&["clone", "--quiet", url, &target])?;
        Ok(Git::at(dir))
    }

    /// Runs git with `args` and returns its standard output, trimmed.
    pub fn run(&self, args: &[&str]) -> Result<String, GitError> {
        let output = Command::new("git")
            .args(args)
            .current_dir(&self.dir)
            .env("GIT_TERMINAL_PROMPT", "0")
            .output()
            .map_err(GitError::Start)?;
        if !output.status.success() {
            return Err(GitError::Failed {
                command: args.join(" "),
                dir: self.dir.display().to_string(),
                message: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            });
        }
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }

    /// Fetches `origin`, pruning branches deleted there.
    pub fn fetch(&self) -> Result<(), GitError> {
        self.run(&["fetch", "--quiet", "--prune", "origin"])
            .map(|_| ())
    }

    /// Whether `origin` has `branch`.
    pub fn remote_has(&self, branch: &str) -> Result<bool, GitError> {
        let name = format!("refs/remotes/origin/{branch}");
        Ok(!self
            .run(&["for-each-ref", "--format=%(refname)", &name])?
            .is_empty())
    }

    /// Checks out `branch` as a copy of `start` (a commit or `origin/NAME`), discarding local
    /// changes and files git does not track, so the tree is exactly `start`.
    pub fn start_branch(&self, branch: &str, start: &str) -> Result<(), GitError> {
        self.run(&["checkout", "--quiet", "--force", "-B", branch, start])?;
        self.run(&["clean", "--quiet", "-d", "--force"]).map(|_| ())
    }

    /// Commits every change in the tree with `message`; with nothing changed, an empty
    /// commit when `empty` allows it (it carries the evidence of what waits for a person),
    /// else `None`.
    pub fn commit_all(
        &self,
        message: &str,
        author: &Author,
        empty: bool,
    ) -> Result<Option<String>, GitError> {
        self.run(&["add", "--all"])?;
        let unchanged = self.run(&["status", "--porcelain"])?.is_empty();
        if unchanged && !empty {
            return Ok(None);
        }
        let name = format!("user.name={}", author.name);
        let email = format!("user.email={}", author.email);
        let file = tempfile::NamedTempFile::new().map_err(GitError::Start)?;
        std::fs::write(file.path(), message).map_err(GitError::Start)?;
        let from = format!("--file={}", file.path().display());
        let mut args = vec![
            "-c",
            &name,
            "-c",
            &email,
            "commit",
            "--quiet",
            "--no-verify",
            &from,
        ];
        if unchanged {
            args.push("--allow-empty");
        }
        self.run(&args)?;
        self.head().map(Some)
    }

    /// The commits of `branch` beyond `base` that someone other than `email` authored, each
    /// as `abc1234 by Name <email>: subject`.
    pub fn foreign_commits(
        &self,
        base: &str,
        branch: &str,
        email: &str,
    ) -> Result<Vec<String>, GitError> {
        let range = format!("{base}..{branch}");
        let log = self.run(&["log", "--format=%h%x00%an%x00%ae%x00%s", &range])?;
        Ok(log
            .lines()
            .filter_map(|line| {
                let fields: Vec<&str> = line.split('\0').collect();
                let [hash, name, mail, subject] = fields[..] else {
                    return None;
                };
                (mail != email).then(|| format!("{hash} by {name} <{mail}>: {subject}"))
            })
            .collect())
    }

    /// Whether merging `branch` into `base` would conflict.
    pub fn conflicts(&self, base: &str, branch: &str) -> Result<bool, GitError> {
        match self.run(&["merge-tree", "--write-tree", "--name-only", base, branch]) {
            Ok(_) => Ok(false),
            Err(GitError::Failed { message, .. }) if message.is_empty() => Ok(true),
            Err(e) => Err(e),
        }
    }

    /// The diff of what the checked-out branch changed since it left `base`, with paths
    /// relative to the repository.
    pub fn diff_since(&self, base: &str) -> Result<String, GitError> {
        let range = format!("{base}...HEAD");
        let diff = self.run(&["diff", "--no-color", "--no-ext-diff", &range])?;
        Ok(if diff.is_empty() { diff } else { diff + "\n" })
    }

    /// The commit checked out.
    pub fn head(&self) -> Result<String, GitError> {
        self.run(&["rev-parse", "HEAD"])
    }

    /// Pushes `branch` to `origin`; `force` replaces what is there, but only if it is still
    /// what the last fetch saw (a commit pushed since is never lost).
    pub fn push(&self, branch: &str, force: bool) -> Result<(), GitError> {
        let spec = format!("{branch}:refs/heads/{branch}");
        let lease = format!("--force-with-lease=refs/heads/{branch}");
        let mut args = vec!["push", "--quiet", "origin", spec.as_str()];
        if force {
            args.insert(1, &lease);
        }
        self.run(&args).map(|_| ())
    }

    /// Whether `base` already holds everything `rev` changed since it left `base` (or it
    /// changed nothing): a request from it would propose nothing.
    pub fn proposes_nothing(&self, base: &str, rev: &str) -> Result<bool, GitError> {
        let since = format!("{base}...{rev}");
        let changed = self.run(&["diff", "--name-only", &since])?;
        if changed.is_empty() {
            return Ok(true);
        }
        let mut args = vec!["diff", "--quiet", base, rev, "--"];
        args.extend(changed.lines());
        match self.run(&args) {
            Ok(_) => Ok(true),
            Err(GitError::Failed { message, .. }) if message.is_empty() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The text of `path` at commit `rev`, `None` when the commit has no such file.
    pub fn show(&self, rev: &str, path: &str) -> Result<Option<String>, GitError> {
        match self.run(&["show", &format!("{rev}:{path}")]) {
            Ok(text) => Ok(Some(text)),
            Err(GitError::Failed { message, .. })
                if message.contains("does not exist") || message.contains("exists on disk") =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// The URL of the `origin` remote.
    pub fn origin_url(&self) -> Result<String, GitError> {
        self.run(&["remote", "get-url", "origin"])
    }
}

/// The forge repository (`owner/name`, or a GitLab group path) a remote URL points at:
/// `https://github.com/acme/infra.git`, `git@github.com:acme/infra.git`,
/// `ssh://git@host/group/sub/project`.
pub fn repository_of(url: &str) -> Option<String> {
    let path = match url.split_once("://") {
        Some((_, rest)) => rest.split_once('/')?.1,
        None => url.split_once(':')?.1,
    };
    let path = path.trim_matches('/').trim_end_matches(".git");
    (path.contains('/') && !path.is_empty()).then(|| path.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repository_is_read_from_every_form_of_remote_url() {
        for (url, repo) in [
            ("https://github.com/acme/infra.git", Some("acme/infra")),
            ("https://github.com/acme/infra", Some("acme/infra")),
            ("git@github.com:acme/infra.git", Some("acme/infra")),
            (
                "ssh://git@gitlab.example.com/group/sub/infra.git",
                Some("group/sub/infra"),
            ),
            ("/srv/git/infra.git", None),
        ] {
            assert_eq!(repository_of(url).as_deref(), repo, "{url}");
        }
    }
}
