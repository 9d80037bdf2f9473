//! GitLab's merge requests (REST API v4): labels go with the request itself, and a draft is
//! marked by its title's `Draft:` prefix.

use reqwest::{Method, RequestBuilder};
use serde_json::{Value, json};

use super::common::{Edit, Keys, adopt_after, first_where, opened, text};
use super::model::{Answer, Fate, Forge, ForgeError, Opened, Proposal};
use super::rest::{Defaults, Rest};
use crate::config::ForgeConfig;

/// GitLab's defaults: gitlab.com's API and `GITLAB_TOKEN`.
const DEFAULTS: Defaults = Defaults {
    name: "GitLab",
    api: Some("https://gitlab.com/api/v4"),
    token_env: "GITLAB_TOKEN",
    authorize,
};

/// Where a merge request's number, web address and description are in GitLab's answers.
const KEYS: Keys = Keys {
    number: "iid",
    url: "web_url",
    body: "description",
};

/// A project on GitLab.
pub(super) struct GitLab {
    rest: Rest,
}

impl GitLab {
    /// The GitLab API `config` names, for project path `repository`.
    pub fn new(config: &ForgeConfig, repository: &str) -> Result<GitLab, ForgeError> {
        Ok(GitLab {
            rest: Rest::new(config, repository, &DEFAULTS)?,
        })
    }

    /// The project's path in the API (its path URL-encoded as the project id).
    fn project(&self) -> String {
        format!("/projects/{}", self.rest.repository().replace('/', "%2F"))
    }

    /// The merge request in an answer.
    fn opened(what: &str, value: &Value) -> Result<Opened, ForgeError> {
        let fate = match text(value, "state").as_deref() {
            Some("merged") => Fate::Merged(
                text(value, "merge_commit_sha").or_else(|| text(value, "squash_commit_sha")),
            ),
            Some("closed" | "locked") => Fate::Closed,
            _ => Fate::Open,
        };
        opened(what, value, &KEYS, fate)
    }
}

impl Forge for GitLab {
    fn noun(&self) -> &'static str {
        "merge request"
    }

    fn name(&self) -> &'static str {
        "gitlab"
    }

    fn repository(&self) -> &str {
        self.rest.repository()
    }

    fn title(&self, proposal: &Proposal) -> String {
        if proposal.draft {
            format!("Draft: {}", proposal.title)
        } else {
            proposal.title.clone()
        }
    }

    fn find_open<'a>(&'a self, branch: &'a str) -> Answer<'a, Option<Opened>> {
        Box::pin(async move {
            let what = format!("looking for an open merge request from {branch}");
            let query = [
                ("source_branch", branch.to_owned()),
                ("state", "opened".into()),
            ];
            let path = format!("{}/merge_requests", self.project());
            let found = self
                .rest
                .send(&what, Method::GET, &path, &query, None)
                .await?;
            first_where(&what, found, from_the_project)?
                .map(|v| Self::opened(&what, &v))
                .transpose()
        })
    }

    fn create<'a>(&'a self, proposal: &'a Proposal) -> Answer<'a, Opened> {
        Box::pin(async move {
            let what = format!("opening a merge request from {}", proposal.branch);
            let path = format!("{}/merge_requests", self.project());
            let body = json!({"title": self.title(proposal), "source_branch": proposal.branch,
                          "target_branch": proposal.base, "description": proposal.body,
                          "labels": proposal.labels.join(",")});
            match self
                .rest
                .send(&what, Method::POST, &path, &[], Some(body))
                .await
            {
                Ok(answer) => Self::opened(&what, &answer),
                Err(e) => adopt_after(self, e, proposal).await,
            }
        })
    }

    fn update<'a>(&'a self, current: &'a Opened, proposal: &'a Proposal) -> Answer<'a, Opened> {
        Box::pin(async move {
            let number = current.number;
            let edit = Edit::new(current, proposal, self.title(proposal));
            if edit.sends_text() {
                let what = format!("updating merge request {number}");
                let path = format!("{}/merge_requests/{number}", self.project());
                let body = json!({"title": edit.title, "description": proposal.body,
                              "add_labels": edit.missing.join(",")});
                self.rest
                    .send(&what, Method::PUT, &path, &[], Some(body))
                    .await?;
            }
            Ok(edit.done())
        })
    }

    fn comment<'a>(&'a self, number: i64, text: &'a str) -> Answer<'a, ()> {
        Box::pin(async move {
            let what = format!("commenting on merge request {number}");
            let path = format!("{}/merge_requests/{number}/notes", self.project());
            let body = json!({ "body": text });
            self.rest.post(&what, &path, body).await
        })
    }

    fn read(&self, number: i64) -> Answer<'_, Opened> {
        Box::pin(async move {
            let what = format!("reading merge request {number}");
            let path = format!("{}/merge_requests/{number}", self.project());
            match self
                .rest
                .get_unless_gone(&what, &path, &self.project())
                .await?
            {
                Some(answer) => Self::opened(&what, &answer),
                None => Ok(Opened::gone(number)),
            }
        })
    }
}

/// GitLab takes its token in the `PRIVATE-TOKEN` header.
fn authorize(request: RequestBuilder, token: &str) -> RequestBuilder {
    request.header("PRIVATE-TOKEN", token)
}

/// Whether a merge request comes from the project itself: a fork's, from a branch of the same
/// name, is not retrace's.
fn from_the_project(request: &Value) -> bool {
    request.get("source_project_id") == request.get("target_project_id")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forks_merge_request_from_a_branch_of_the_same_name_is_not_ours() {
        let answer = json!([
            {"iid": 7, "source_project_id": 91, "target_project_id": 12},
            {"iid": 8, "source_project_id": 12, "target_project_id": 12}
        ]);
        let found = first_where("looking", answer, from_the_project).expect("a list");
        assert_eq!(found.and_then(|r| r["iid"].as_i64()), Some(8));
    }
}
