//! Pull requests on GitHub (REST API v3, GitHub Enterprise included), merge requests on
//! GitLab (REST API v4) and pull requests on Gitea or Forgejo (REST API v1): find the open one
//! for a branch, open or update it, label it, make it a draft or ready (GitHub's GraphQL API;
//! GitLab's `Draft:` and Gitea's `WIP:` title prefixes), comment on it, and read how it stands.
//!
//! The nightly job sees only the [`Forge`] trait (`model.rs`, with the requests and errors
//! every forge shares); each kind implements it in its own file (`github.rs`, `gitlab.rs`,
//! `gitea.rs`) over the steps they take alike (`common.rs`) and the shared HTTP plumbing
//! (`rest.rs`), and [`open`] picks the kind once from the configuration. The kinds are the
//! `forge` feature: a build without it refuses a configured forge in words, and the nightly
//! job, which sees only the trait, still runs without `[nightly.forge]`.

#[cfg(feature = "forge")]
mod common;
#[cfg(feature = "forge")]
mod gitea;
#[cfg(feature = "forge")]
mod github;
#[cfg(feature = "forge")]
mod gitlab;
mod model;
#[cfg(feature = "forge")]
mod rest;

pub use model::{Answer, Fate, Forge, ForgeError, Opened, Proposal};

use crate::config::ForgeConfig;

/// The forge `config` names, for `repository` (`owner/name` or a GitLab project path), with
/// the token from its environment variable; an error when the token is not set, or when the
/// forge has no public API and `config` names none.
#[cfg(feature = "forge")]
pub fn open(config: &ForgeConfig, repository: &str) -> Result<Box<dyn Forge>, ForgeError> {
    use crate::config::ForgeKind;
    Ok(match config.kind {
        ForgeKind::Github => Box::new(github::GitHub::new(config, repository)?),
        ForgeKind::Gitlab => Box::new(gitlab::GitLab::new(config, repository)?),
        ForgeKind::Gitea => Box::new(gitea::Gitea::new(config, repository)?),
    })
}

/// Without the `forge` feature a configured forge is refused.
#[cfg(not(feature = "forge"))]
pub fn open(_config: &ForgeConfig, repository: &str) -> Result<Box<dyn Forge>, ForgeError> {
    Err(ForgeError::NoForge(repository.to_owned()))
}

#[cfg(test)]
mod tests {
    /// A build without the `forge` feature refuses a configured forge in words.
    #[cfg(not(feature = "forge"))]
    #[test]
    fn without_the_forge_feature_a_configured_forge_is_refused() {
        let config: super::ForgeConfig = toml::from_str("kind = \"github\"").expect("config");
        let Err(error) = super::open(&config, "acme/infra") else {
            panic!("a forge was opened");
        };
        assert_eq!(
            error.to_string(),
            "cannot reach the forge for acme/infra: this build of retrace has no forge client \
             (the `forge` feature)"
        );
    }
}
