//! GitHub's pull requests (REST API v3, GitHub Enterprise included): labels are added after
//! opening, and a pull request is made a draft or ready through the GraphQL API, which the
//! REST API cannot do.

use reqwest::{Method, RequestBuilder};
use serde_json::{Value, json};

use super::common::{
    Keys, Pulls, comment_pull, create_pull, first, opened, read_pull, text, update_pull,
};
use super::model::{Answer, Fate, Forge, ForgeError, Opened, Proposal, reply};
use super::rest::{Defaults, Rest, message_of};
use crate::config::ForgeConfig;

/// GitHub's defaults: its public API and `GITHUB_TOKEN`.
const DEFAULTS: Defaults = Defaults {
    name: "GitHub",
    api: Some("https://api.github.com"),
    token_env: "GITHUB_TOKEN",
    authorize,
};

/// Where a pull request's number, web address and description are in GitHub's answers.
const KEYS: Keys = Keys {
    number: "number",
    url: "html_url",
    body: "body",
};

/// A repository on GitHub.
pub(super) struct GitHub {
    rest: Rest,
}

impl GitHub {
    /// The GitHub API `config` names, for repository `owner/name`.
    pub fn new(config: &ForgeConfig, repository: &str) -> Result<GitHub, ForgeError> {
        Ok(GitHub {
            rest: Rest::new(config, repository, &DEFAULTS)?,
        })
    }

    /// Makes pull request `current` a draft or ready for review (GraphQL: the REST API
    /// cannot).
    async fn set_draft(&self, current: &Opened, draft: bool) -> Result<(), ForgeError> {
        let what = format!(
            "marking pull request {} {}",
            current.number,
            if draft { "a draft" } else { "ready for review" }
        );
        let id = current
            .node_id
            .clone()
            .ok_or_else(|| reply(&what, "no `node_id`".into()))?;
        let mutation = if draft {
            "convertPullRequestToDraft"
        } else {
            "markPullRequestReadyForReview"
        };
        let query = format!(
            "mutation($id: ID!) {{ {mutation}(input: {{pullRequestId: $id}}) {{ pullRequest {{ isDraft }} }} }}"
        );
        let body = json!({"query": query, "variables": {"id": id}});
        let answer = self
            .rest
            .send_to(&what, Method::POST, &self.graphql_url(), &[], Some(body))
            .await?;
        match answer.get("errors").and_then(Value::as_array) {
            Some(errors) if !errors.is_empty() => {
                Err(reply(&what, message_of(&answer.to_string())))
            }
            _ => Ok(()),
        }
    }

    /// GitHub's GraphQL endpoint beside the REST API: `https://api.github.com/graphql`,
    /// `https://HOST/api/graphql` for Enterprise (REST at `https://HOST/api/v3`).
    fn graphql_url(&self) -> String {
        let api = self.rest.api();
        match api.strip_suffix("/api/v3") {
            Some(host) => format!("{host}/api/graphql"),
            None => format!("{api}/graphql"),
        }
    }
}

impl Pulls for GitHub {
    fn rest(&self) -> &Rest {
        &self.rest
    }

    /// The pull request in an answer.
    fn pull(what: &str, value: &Value) -> Result<Opened, ForgeError> {
        let merged = value.get("merged").and_then(Value::as_bool) == Some(true)
            || value.get("merged_at").is_some_and(|v| !v.is_null());
        let fate = if merged {
            Fate::Merged(text(value, "merge_commit_sha"))
        } else if text(value, "state").as_deref() == Some("closed") {
            Fate::Closed
        } else {
            Fate::Open
        };
        opened(what, value, &KEYS, fate)
    }

    /// Adds `labels` to pull request `number`.
    async fn label(&self, number: i64, labels: &[String]) -> Result<(), ForgeError> {
        if labels.is_empty() {
            return Ok(());
        }
        let what = format!("labelling pull request {number}");
        let path = format!("{}/issues/{number}/labels", self.repo());
        let body = json!({ "labels": labels });
        self.rest.post(&what, &path, body).await
    }
}

impl Forge for GitHub {
    fn noun(&self) -> &'static str {
        "pull request"
    }

    fn name(&self) -> &'static str {
        "github"
    }

    fn repository(&self) -> &str {
        self.rest.repository()
    }

    fn title(&self, proposal: &Proposal) -> String {
        proposal.title.clone()
    }

    fn find_open<'a>(&'a self, branch: &'a str) -> Answer<'a, Option<Opened>> {
        Box::pin(async move {
            let what = format!("looking for an open pull request from {branch}");
            let owner = self.repository().split('/').next().unwrap_or_default();
            let query = [
                ("head", format!("{owner}:{branch}")),
                ("state", "open".into()),
            ];
            let path = format!("{}/pulls", self.repo());
            let found = self
                .rest
                .send(&what, Method::GET, &path, &query, None)
                .await?;
            first(&what, found)?
                .map(|v| Self::pull(&what, &v))
                .transpose()
        })
    }

    fn create<'a>(&'a self, proposal: &'a Proposal) -> Answer<'a, Opened> {
        Box::pin(async move {
            let body = json!({"title": proposal.title, "head": proposal.branch, "base": proposal.base,
                          "body": proposal.body, "draft": proposal.draft});
            create_pull(self, proposal, body).await
        })
    }

    fn update<'a>(&'a self, current: &'a Opened, proposal: &'a Proposal) -> Answer<'a, Opened> {
        Box::pin(async move {
            let edit = update_pull(self, current, proposal).await?;
            if edit.sends_draft() {
                self.set_draft(current, proposal.draft).await?;
            }
            Ok(edit.done())
        })
    }

    fn comment<'a>(&'a self, number: i64, text: &'a str) -> Answer<'a, ()> {
        Box::pin(comment_pull(self, number, text))
    }

    fn read(&self, number: i64) -> Answer<'_, Opened> {
        Box::pin(read_pull(self, number))
    }
}

/// GitHub takes a bearer token, and is asked for its JSON media type and API version.
fn authorize(request: RequestBuilder, token: &str) -> RequestBuilder {
    request
        .bearer_auth(token)
        .header("Accept", "application/vnd.github+json")
        .header("X-GitHub-Api-Version", "2022-11-28")
}
