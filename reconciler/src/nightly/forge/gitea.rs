//! Gitea's pull requests (REST API v1; Forgejo speaks the same API). Gitea is self-hosted, so
//! its API's URL comes from the configuration. The API cannot filter pull requests by branch,
//! so the open one from a branch is found by reading the open ones a page at a time (a bounded
//! number of pages). Labels are added by id after opening, each created in the repository when
//! it has none of that name; a draft is marked by the title's `WIP:` prefix.

use reqwest::{Method, RequestBuilder};
use serde_json::{Value, json};

use super::common::{Keys, Pulls, comment_pull, create_pull, opened, read_pull, text, update_pull};
use super::model::{Answer, Fate, Forge, ForgeError, Opened, Proposal, reply};
use super::rest::{Defaults, Rest};
use crate::config::ForgeConfig;

/// Gitea's defaults: no public API, and `GITEA_TOKEN`.
const DEFAULTS: Defaults = Defaults {
    name: "Gitea",
    api: None,
    token_env: "GITEA_TOKEN",
    authorize,
};

/// Where a pull request's number, web address and description are in Gitea's answers.
const KEYS: Keys = Keys {
    number: "number",
    url: "html_url",
    body: "body",
};

/// The items asked for per page: Gitea's default largest page (`MAX_RESPONSE_ITEMS`).
const PAGE: usize = 50;

/// The most pages read of one list: a repository with more open pull requests (or labels)
/// than this is refused rather than read without end.
const PAGES: usize = 20;

/// The prefix that makes a pull request a draft (the first of Gitea's default
/// `WORK_IN_PROGRESS_PREFIXES`).
const WIP: &str = "WIP: ";

/// The colour of a label retrace creates.
const LABEL_COLOR: &str = "#ededed";

/// A repository on a Gitea or Forgejo server.
pub(super) struct Gitea {
    rest: Rest,
}

impl Gitea {
    /// The Gitea API `config` names, for repository `owner/name`.
    pub fn new(config: &ForgeConfig, repository: &str) -> Result<Gitea, ForgeError> {
        Ok(Gitea {
            rest: Rest::new(config, repository, &DEFAULTS)?,
        })
    }

    /// The first item of the list at `path` (with `query`) that `wanted` picks, read a page at
    /// a time until a page comes back empty; an error when [`PAGES`] pages were not enough.
    async fn search(
        &self,
        what: &str,
        path: &str,
        query: &[(&str, String)],
        wanted: impl Fn(&Value) -> bool,
    ) -> Result<Option<Value>, ForgeError> {
        for page in 1..=PAGES {
            let mut query = query.to_vec();
            query.push(("page", page.to_string()));
            query.push(("limit", PAGE.to_string()));
            let answer = self
                .rest
                .send(what, Method::GET, path, &query, None)
                .await?;
            let list: Vec<Value> =
                serde_json::from_value(answer).map_err(|e| reply(what, e.to_string()))?;
            if list.is_empty() {
                return Ok(None);
            }
            if let Some(found) = list.into_iter().find(|v| wanted(v)) {
                return Ok(Some(found));
            }
        }
        Err(reply(
            what,
            format!("not found in the first {PAGES} pages of {PAGE}: too many to read"),
        ))
    }

    /// The id of the repository's label `name`, created when there is none.
    async fn label_id(&self, name: &str) -> Result<i64, ForgeError> {
        let what = format!("looking for the label {name}");
        let path = format!("{}/labels", self.repo());
        let found = self
            .search(&what, &path, &[], |l| {
                l.get("name").and_then(Value::as_str) == Some(name)
            })
            .await?;
        let label = match found {
            Some(label) => label,
            None => {
                let what = format!("creating the label {name}");
                let body = json!({"name": name, "color": LABEL_COLOR});
                self.rest
                    .send(&what, Method::POST, &path, &[], Some(body))
                    .await?
            }
        };
        label
            .get("id")
            .and_then(Value::as_i64)
            .ok_or_else(|| reply(&what, format!("the label {name} has no `id`")))
    }
}

impl Pulls for Gitea {
    fn rest(&self) -> &Rest {
        &self.rest
    }

    /// The pull request in an answer: merged when `merged` says so, else closed or open by
    /// its `state`; a draft when Gitea says so or its title has a work-in-progress prefix.
    fn pull(what: &str, value: &Value) -> Result<Opened, ForgeError> {
        let fate = if value.get("merged").and_then(Value::as_bool) == Some(true) {
            Fate::Merged(text(value, "merge_commit_sha"))
        } else if text(value, "state").as_deref() == Some("closed") {
            Fate::Closed
        } else {
            Fate::Open
        };
        let mut pull = opened(what, value, &KEYS, fate)?;
        pull.draft = pull.draft || in_progress(&pull.title);
        Ok(pull)
    }

    /// Adds the labels named `names` to pull request `number`, creating those the
    /// repository lacks.
    async fn label(&self, number: i64, names: &[String]) -> Result<(), ForgeError> {
        if names.is_empty() {
            return Ok(());
        }
        let mut ids = Vec::new();
        for name in names {
            ids.push(self.label_id(name).await?);
        }
        let what = format!("labelling pull request {number}");
        let path = format!("{}/issues/{number}/labels", self.repo());
        self.rest.post(&what, &path, json!({ "labels": ids })).await
    }
}

impl Forge for Gitea {
    fn noun(&self) -> &'static str {
        "pull request"
    }

    fn name(&self) -> &'static str {
        "gitea"
    }

    fn repository(&self) -> &str {
        self.rest.repository()
    }

    fn title(&self, proposal: &Proposal) -> String {
        if proposal.draft {
            format!("{WIP}{}", proposal.title)
        } else {
            proposal.title.clone()
        }
    }

    fn find_open<'a>(&'a self, branch: &'a str) -> Answer<'a, Option<Opened>> {
        Box::pin(async move {
            let what = format!("looking for an open pull request from {branch}");
            let path = format!("{}/pulls", self.repo());
            let query = [("state", "open".to_owned())];
            self.search(&what, &path, &query, |v| from_branch(v, branch))
                .await?
                .map(|v| Self::pull(&what, &v))
                .transpose()
        })
    }

    fn create<'a>(&'a self, proposal: &'a Proposal) -> Answer<'a, Opened> {
        Box::pin(async move {
            let body = json!({"title": self.title(proposal), "head": proposal.branch,
                              "base": proposal.base, "body": proposal.body});
            create_pull(self, proposal, body).await
        })
    }

    fn update<'a>(&'a self, current: &'a Opened, proposal: &'a Proposal) -> Answer<'a, Opened> {
        Box::pin(async move { Ok(update_pull(self, current, proposal).await?.done()) })
    }

    fn comment<'a>(&'a self, number: i64, text: &'a str) -> Answer<'a, ()> {
        Box::pin(comment_pull(self, number, text))
    }

    fn read(&self, number: i64) -> Answer<'_, Opened> {
        Box::pin(read_pull(self, number))
    }
}

/// Whether pull request `value` proposes `branch` of the repository itself (not a fork's
/// branch of the same name).
fn from_branch(value: &Value, branch: &str) -> bool {
    let head = &value["head"];
    let own = head["repo_id"].as_i64().is_some() && head["repo_id"] == value["base"]["repo_id"];
    own && head["ref"].as_str() == Some(branch)
}

/// Whether `title` starts with one of Gitea's default work-in-progress prefixes (`WIP:`,
/// `[WIP]`), in any case, as Gitea reads them.
fn in_progress(title: &str) -> bool {
    let upper = title.to_uppercase();
    upper.starts_with("WIP:") || upper.starts_with("[WIP]")
}

/// Gitea takes its token as `Authorization: token TOKEN`.
fn authorize(request: RequestBuilder, token: &str) -> RequestBuilder {
    request.header("Authorization", format!("token {token}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_repositorys_own_branch_is_its_pull_request() {
        let pull = |head_repo: Value, base_repo: Value, branch: &str| {
            json!({"head": {"ref": branch, "repo_id": head_repo},
                   "base": {"ref": "main", "repo_id": base_repo}})
        };
        assert!(from_branch(
            &pull(json!(7), json!(7), "retrace/shop"),
            "retrace/shop"
        ));
        assert!(!from_branch(
            &pull(json!(7), json!(7), "retrace/shop-eu"),
            "retrace/shop"
        ));
        assert!(
            !from_branch(&pull(json!(9), json!(7), "retrace/shop"), "retrace/shop"),
            "a fork"
        );
        assert!(
            !from_branch(
                &pull(Value::Null, Value::Null, "retrace/shop"),
                "retrace/shop"
            ),
            "a deleted fork"
        );
    }

    #[test]
    fn the_fate_and_the_draft_are_read_from_the_answer() {
        let read = |value: Value| Gitea::pull("reading", &value).expect("a pull request");
        let merged = read(json!({"number": 3, "state": "closed", "merged": true,
                                 "merge_commit_sha": "abc", "title": "t"}));
        assert_eq!(merged.fate, Fate::Merged(Some("abc".into())));
        let closed = read(json!({"number": 3, "state": "closed", "merged": false, "title": "t"}));
        assert_eq!(closed.fate, Fate::Closed);
        let open = read(json!({"number": 3, "state": "open", "title": "WIP: t"}));
        assert_eq!((open.fate, open.draft), (Fate::Open, true));
        assert!(read(json!({"number": 3, "state": "open", "title": "[wip] t"})).draft);
        assert!(!read(json!({"number": 3, "state": "open", "title": "t WIP:"})).draft);
        assert!(
            Gitea::pull("reading", &json!({"state": "open"})).is_err(),
            "no number"
        );
    }

    #[test]
    fn without_an_api_url_the_configuration_is_refused() {
        let config = ForgeConfig {
            kind: crate::config::ForgeKind::Gitea,
            api_url: None,
            token_env: None,
            attempts: 1,
            max_wait_seconds: 0,
        };
        let Err(error) = Gitea::new(&config, "acme/infra") else {
            panic!("a Gitea without an API URL");
        };
        assert!(matches!(error, ForgeError::NoApiUrl("Gitea")), "{error}");
        assert!(error.to_string().contains("api_url"), "{error}");
    }
}
