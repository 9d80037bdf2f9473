//! Pull requests on GitHub (REST API v3, GitHub Enterprise included) and merge requests on
//! GitLab (REST API v4): find the open one for a branch, open or update it, label it, comment
//! on it, and read how it ended.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::config::{ForgeConfig, ForgeKind};

/// Attempts for a request that meets a rate limit or a server error.
const ATTEMPTS: u32 = 4;

/// Why talking to the forge failed.
#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    /// The token's environment variable is not set.
    #[error("no token: set the environment variable {0} to a token that may open pull requests")]
    NoToken(String),
    /// The request could not be sent or its answer not read.
    #[error("{what}: {message}")]
    Transport {
        /// What was being done.
        what: String,
        /// Why it failed.
        message: String,
    },
    /// The forge answered with an error status.
    #[error("{what}: the forge answered {status}: {message}")]
    Status {
        /// What was being done.
        what: String,
        /// The HTTP status.
        status: u16,
        /// The forge's message.
        message: String,
    },
    /// The answer did not have the expected shape.
    #[error("{what}: unexpected answer: {message}")]
    Reply {
        /// What was being done.
        what: String,
        /// What was wrong.
        message: String,
    },
}

/// A request to open or update.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    /// The title.
    pub title: String,
    /// The description, in Markdown.
    pub body: String,
    /// The branch with the changes.
    pub branch: String,
    /// The branch they go into.
    pub base: String,
    /// Labels to put on it.
    pub labels: Vec<String>,
    /// Whether it is opened as a draft (something waits for a person).
    pub draft: bool,
}

/// An open request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// Its number (GitLab: the project-level `iid`).
    pub number: i64,
    /// Its web address.
    pub url: String,
}

/// How a request stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    /// Still open.
    Open,
    /// Merged, as this commit when the forge says.
    Merged(Option<String>),
    /// Closed without merging.
    Closed,
}

/// A forge and one repository on it.
#[derive(Debug, Clone)]
pub struct Forge {
    kind: ForgeKind,
    api: String,
    repository: String,
    token: String,
    http: reqwest::Client,
}

impl Forge {
    /// The forge `config` names, for `repository` (`owner/name` or a GitLab project path),
    /// with the token from its environment variable.
    pub fn new(config: &ForgeConfig, repository: &str) -> Result<Forge, ForgeError> {
        let (api, variable) = match config.kind {
            ForgeKind::Github => ("https://api.github.com", "GITHUB_TOKEN"),
            ForgeKind::Gitlab => ("https://gitlab.com/api/v4", "GITLAB_TOKEN"),
        };
        let variable = config
            .token_env
            .clone()
            .unwrap_or_else(|| variable.to_owned());
        let token = std::env::var(&variable)
            .ok()
            .filter(|t| !t.is_empty())
            .ok_or(ForgeError::NoToken(variable))?;
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .user_agent(concat!("retrace/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| transport("setting up the HTTP client", &e))?;
        Ok(Forge {
            kind: config.kind,
            api: config
                .api_url
                .clone()
                .unwrap_or_else(|| api.to_owned())
                .trim_end_matches('/')
                .to_owned(),
            repository: repository.to_owned(),
            token,
            http,
        })
    }

    /// `github` or `gitlab`.
    pub fn name(&self) -> &'static str {
        match self.kind {
            ForgeKind::Github => "github",
            ForgeKind::Gitlab => "gitlab",
        }
    }

    /// The repository on the forge.
    pub fn repository(&self) -> &str {
        &self.repository
    }

    /// The open request from `branch`, if there is one.
    pub async fn find_open(&self, branch: &str) -> Result<Option<Opened>, ForgeError> {
        let what = format!("looking for an open request from {branch}");
        let (path, query) = match self.kind {
            ForgeKind::Github => {
                let owner = self.repository.split('/').next().unwrap_or_default();
                (
                    format!("/repos/{}/pulls", self.repository),
                    vec![
                        ("head", format!("{owner}:{branch}")),
                        ("state", "open".into()),
                    ],
                )
            }
            ForgeKind::Gitlab => (
                format!("/projects/{}/merge_requests", self.project_id()),
                vec![
                    ("source_branch", branch.to_owned()),
                    ("state", "opened".into()),
                ],
            ),
        };
        let found = self.send(&what, Method::GET, &path, &query, None).await?;
        let list: Vec<Value> = parse(&what, found)?;
        list.into_iter()
            .next()
            .map(|v| self.opened(&what, v))
            .transpose()
    }

    /// Opens a request.
    pub async fn create(&self, proposal: &Proposal) -> Result<Opened, ForgeError> {
        let what = format!("opening a request from {}", proposal.branch);
        let (path, body) = match self.kind {
            ForgeKind::Github => (
                format!("/repos/{}/pulls", self.repository),
                json!({"title": proposal.title, "head": proposal.branch, "base": proposal.base,
                       "body": proposal.body, "draft": proposal.draft}),
            ),
            ForgeKind::Gitlab => (
                format!("/projects/{}/merge_requests", self.project_id()),
                json!({"title": gitlab_title(proposal), "source_branch": proposal.branch,
                       "target_branch": proposal.base, "description": proposal.body,
                       "labels": proposal.labels.join(",")}),
            ),
        };
        let answer = self
            .send(&what, Method::POST, &path, &[], Some(body))
            .await?;
        let opened = self.opened(&what, answer)?;
        if self.kind == ForgeKind::Github {
            self.label(opened.number, &proposal.labels).await?;
        }
        Ok(opened)
    }

    /// Updates request `number` with the proposal's title, description and labels.
    pub async fn update(&self, number: i64, proposal: &Proposal) -> Result<(), ForgeError> {
        let what = format!("updating request {number}");
        match self.kind {
            ForgeKind::Github => {
                let path = format!("/repos/{}/pulls/{number}", self.repository);
                let body = json!({"title": proposal.title, "body": proposal.body});
                self.send(&what, Method::PATCH, &path, &[], Some(body))
                    .await?;
                self.label(number, &proposal.labels).await
            }
            ForgeKind::Gitlab => {
                let path = format!("/projects/{}/merge_requests/{number}", self.project_id());
                let body = json!({"title": gitlab_title(proposal), "description": proposal.body,
                                  "add_labels": proposal.labels.join(",")});
                self.send(&what, Method::PUT, &path, &[], Some(body))
                    .await
                    .map(|_| ())
            }
        }
    }

    /// Comments on request `number`.
    pub async fn comment(&self, number: i64, text: &str) -> Result<(), ForgeError> {
        let what = format!("commenting on request {number}");
        let path = match self.kind {
            ForgeKind::Github => format!("/repos/{}/issues/{number}/comments", self.repository),
            ForgeKind::Gitlab => format!(
                "/projects/{}/merge_requests/{number}/notes",
                self.project_id()
            ),
        };
        let body = json!({ "body": text });
        self.send(&what, Method::POST, &path, &[], Some(body))
            .await
            .map(|_| ())
    }

    /// How request `number` stands.
    pub async fn fate(&self, number: i64) -> Result<Fate, ForgeError> {
        let what = format!("reading request {number}");
        let path = match self.kind {
            ForgeKind::Github => format!("/repos/{}/pulls/{number}", self.repository),
            ForgeKind::Gitlab => format!("/projects/{}/merge_requests/{number}", self.project_id()),
        };
        let answer = self.send(&what, Method::GET, &path, &[], None).await?;
        let text = |key: &str| answer.get(key).and_then(Value::as_str).map(str::to_owned);
        let state = text("state").unwrap_or_default();
        Ok(match self.kind {
            ForgeKind::Github if answer.get("merged").and_then(Value::as_bool) == Some(true) => {
                Fate::Merged(text("merge_commit_sha"))
            }
            ForgeKind::Github if state == "closed" => Fate::Closed,
            ForgeKind::Gitlab if state == "merged" => {
                Fate::Merged(text("merge_commit_sha").or_else(|| text("squash_commit_sha")))
            }
            ForgeKind::Gitlab if state == "closed" || state == "locked" => Fate::Closed,
            _ => Fate::Open,
        })
    }

    /// Adds `labels` to GitHub pull request `number`.
    async fn label(&self, number: i64, labels: &[String]) -> Result<(), ForgeError> {
        if labels.is_empty() {
            return Ok(());
        }
        let what = format!("labelling request {number}");
        let path = format!("/repos/{}/issues/{number}/labels", self.repository);
        let body = json!({ "labels": labels });
        self.send(&what, Method::POST, &path, &[], Some(body))
            .await
            .map(|_| ())
    }

    /// The GitLab project's path as the API takes it in a URL.
    fn project_id(&self) -> String {
        self.repository.replace('/', "%2F")
    }

    /// The number and address of a request in an answer.
    fn opened(&self, what: &str, value: Value) -> Result<Opened, ForgeError> {
        let (number, url) = match self.kind {
            ForgeKind::Github => ("number", "html_url"),
            ForgeKind::Gitlab => ("iid", "web_url"),
        };
        Ok(Opened {
            number: value
                .get(number)
                .and_then(Value::as_i64)
                .ok_or_else(|| reply(what, format!("no `{number}`")))?,
            url: value
                .get(url)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
        })
    }

    /// Sends a request, retrying rate limits and server errors with backoff (honouring
    /// `Retry-After`), and returns the answer's JSON.
    async fn send(
        &self,
        what: &str,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<Value>,
    ) -> Result<Value, ForgeError> {
        let url = format!("{}{path}", self.api);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut request = self.http.request(method.clone(), &url).query(query);
            request = match self.kind {
                ForgeKind::Github => request
                    .bearer_auth(&self.token)
                    .header("Accept", "application/vnd.github+json")
                    .header("X-GitHub-Api-Version", "2022-11-28"),
                ForgeKind::Gitlab => request.header("PRIVATE-TOKEN", &self.token),
            };
            if let Some(body) = &body {
                request = request.json(body);
            }
            tracing::debug!(%method, %url, attempt, "forge request");
            let response = request.send().await.map_err(|e| transport(what, &e))?;
            let status = response.status();
            let retry = status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error();
            if retry && attempt < ATTEMPTS {
                tokio::time::sleep(wait(&response, attempt)).await;
                continue;
            }
            let text = response.text().await.map_err(|e| transport(what, &e))?;
            if !status.is_success() {
                return Err(ForgeError::Status {
                    what: what.to_owned(),
                    status: status.as_u16(),
                    message: message_of(&text),
                });
            }
            if text.trim().is_empty() {
                return Ok(Value::Null);
            }
            return serde_json::from_str(&text).map_err(|e| reply(what, e.to_string()));
        }
    }
}

/// A GitLab title: a draft is marked by its `Draft:` prefix.
fn gitlab_title(proposal: &Proposal) -> String {
    if proposal.draft {
        format!("Draft: {}", proposal.title)
    } else {
        proposal.title.clone()
    }
}

/// How long to wait before attempt `attempt + 1`: the forge's `Retry-After` (seconds, at
/// most a minute), else 1, 2, 4 ... seconds.
fn wait(response: &reqwest::Response, attempt: u32) -> Duration {
    let asked = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    Duration::from_secs(asked.unwrap_or(1 << (attempt - 1)).min(60))
}

/// The forge's message in an error answer (`message`, GitLab's `error`), else the text.
fn message_of(text: &str) -> String {
    #[derive(Deserialize)]
    struct Answer {
        message: Option<Value>,
        error: Option<Value>,
    }
    let found = serde_json::from_str::<Answer>(text)
        .ok()
        .and_then(|a| a.message.or(a.error));
    match found {
        Some(Value::String(s)) => s,
        Some(other) => other.to_string(),
        None => text.chars().take(300).collect(),
    }
}

fn parse<T: serde::de::DeserializeOwned>(what: &str, value: Value) -> Result<T, ForgeError> {
    serde_json::from_value(value).map_err(|e| reply(what, e.to_string()))
}

fn transport(what: &str, e: &reqwest::Error) -> ForgeError {
    ForgeError::Transport {
        what: what.to_owned(),
        message: e.to_string(),
    }
}

fn reply(what: &str, message: String) -> ForgeError {
    ForgeError::Reply {
        what: what.to_owned(),
        message,
    }
}
