//! Pull requests on GitHub (REST API v3, GitHub Enterprise included), merge requests on
//! GitLab (REST API v4) and pull requests on Gitea or Forgejo (REST API v1): find the open one
//! for a branch, open or update it, label it, make it a draft or ready (GitHub's GraphQL API;
//! GitLab's `Draft:` and Gitea's `WIP:` title prefixes), comment on it, and read how it stands.
//!
//! The nightly job sees only the [`Forge`] trait (`model.rs`, with the requests and errors
//! every forge shares); each kind implements it in its own file (`github.rs`, `gitlab.rs`,
//! `gitea.rs`) over the shared HTTP plumbing (`rest.rs`), and [`open`] picks the kind once
//! from the configuration.

mod gitea;
mod github;
mod gitlab;
mod model;
mod rest;

pub use model::{Answer, Fate, Forge, ForgeError, Opened, Proposal};

use crate::config::{ForgeConfig, ForgeKind};

/// The forge `config` names, for `repository` (`owner/name` or a GitLab project path), with
/// the token from its environment variable; an error when the token is not set, or when the
/// forge has no public API and `config` names none.
pub fn open(config: &ForgeConfig, repository: &str) -> Result<Box<dyn Forge>, ForgeError> {
    Ok(match config.kind {
        ForgeKind::Github => Box::new(github::GitHub::new(config, repository)?),
        ForgeKind::Gitlab => Box::new(gitlab::GitLab::new(config, repository)?),
        ForgeKind::Gitea => Box::new(gitea::Gitea::new(config, repository)?),
    })
}
