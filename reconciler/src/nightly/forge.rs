//! Pull requests on GitHub (REST API v3, GitHub Enterprise included) and merge requests on
//! GitLab (REST API v4): find the open one for a branch, open or update it, label it, make it
//! a draft or ready (GitHub's GraphQL API; GitLab's `Draft:` title prefix), comment on it,
//! and read how it stands.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::config::{ForgeConfig, ForgeKind};

/// Why talking to the forge failed.
#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    /// The token's environment variable is not set.
    #[error("no token: set the environment variable {0} to a token that may open pull requests")]
    NoToken(String),
    /// The forge could not be reached, or its answer not read.
    #[error(
        "{what}: cannot reach the forge at {api} ({reason}); check [nightly.forge] api_url and that the forge is up, then run again"
    )]
    Unreachable {
        /// What was being done.
        what: String,
        /// The API's base URL.
        api: String,
        /// Why, in words (`connection refused`, `timed out`).
        reason: String,
    },
    /// The forge kept answering with a rate limit or a server error.
    #[error(
        "{what}: the forge answered {status} {attempts} times in a row (retries exhausted): {message}; run again later"
    )]
    Exhausted {
        /// What was being done.
        what: String,
        /// The last HTTP status.
        status: u16,
        /// How many times the request was sent.
        attempts: u32,
        /// The forge's last message.
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

/// A request as the forge holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// Its number (GitLab: the project-level `iid`).
    pub number: i64,
    /// Its web address.
    pub url: String,
    /// Its title as the forge shows it (GitLab: with any `Draft:` prefix).
    pub title: String,
    /// Its description.
    pub body: String,
    /// Whether it is a draft.
    pub draft: bool,
    /// Its labels.
    pub labels: Vec<String>,
    /// GitHub's GraphQL id, to make it a draft or ready.
    pub node_id: Option<String>,
    /// How it stands.
    pub fate: Fate,
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
    /// The forge does not know it (404): deleted, or the repository moved.
    Gone,
}

/// A forge and one repository on it.
#[derive(Debug, Clone)]
pub struct Forge {
    kind: ForgeKind,
    api: String,
    repository: String,
    token: String,
    http: reqwest::Client,
    attempts: u32,
    max_wait: u64,
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
            .map_err(|e| reply("setting up the HTTP client", e.to_string()))?;
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
            attempts: config.attempts.max(1),
            max_wait: config.max_wait_seconds,
        })
    }

    /// What the forge calls a request: `pull request` or `merge request`.
    pub fn noun(&self) -> &'static str {
        match self.kind {
            ForgeKind::Github => "pull request",
            ForgeKind::Gitlab => "merge request",
        }
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
        let what = format!("looking for an open {} from {branch}", self.noun());
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
        let what = format!("opening a {} from {}", self.noun(), proposal.branch);
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
        let opened = match self.send(&what, Method::POST, &path, &[], Some(body)).await {
            Ok(answer) => self.opened(&what, answer)?,
            // An earlier attempt may have made it before its answer was lost (a 5xx after
            // the forge created it): the forge refuses a second one for the branch.
            Err(
                e @ ForgeError::Status {
                    status: 422 | 409, ..
                },
            ) => {
                return match self.find_open(&proposal.branch).await? {
                    Some(existing) => self.update(&existing, proposal).await,
                    None => Err(e),
                };
            }
            Err(e) => return Err(e),
        };
        if self.kind == ForgeKind::Github {
            self.label(opened.number, &proposal.labels).await?;
        }
        Ok(opened)
    }

    /// Brings request `current` to the proposal: title, description, missing labels and
    /// draft state, sending only what differs. Returns the request as it now stands.
    pub async fn update(
        &self,
        current: &Opened,
        proposal: &Proposal,
    ) -> Result<Opened, ForgeError> {
        let number = current.number;
        let what = format!("updating {} {number}", self.noun());
        let missing: Vec<String> = proposal
            .labels
            .iter()
            .filter(|l| !current.labels.contains(l))
            .cloned()
            .collect();
        let title = match self.kind {
            ForgeKind::Github => proposal.title.clone(),
            ForgeKind::Gitlab => gitlab_title(proposal),
        };
        if current.title != title || current.body != proposal.body || !missing.is_empty() {
            match self.kind {
                ForgeKind::Github => {
                    let path = format!("/repos/{}/pulls/{number}", self.repository);
                    let body = json!({"title": title, "body": proposal.body});
                    self.send(&what, Method::PATCH, &path, &[], Some(body))
                        .await?;
                    self.label(number, &missing).await?;
                }
                ForgeKind::Gitlab => {
                    let path = format!("/projects/{}/merge_requests/{number}", self.project_id());
                    let body = json!({"title": title, "description": proposal.body,
                                      "add_labels": missing.join(",")});
                    self.send(&what, Method::PUT, &path, &[], Some(body))
                        .await?;
                }
            }
        }
        if self.kind == ForgeKind::Github && current.draft != proposal.draft {
            self.set_draft(current, proposal.draft).await?;
        }
        let mut labels = current.labels.clone();
        labels.extend(missing);
        Ok(Opened {
            title,
            body: proposal.body.clone(),
            draft: proposal.draft,
            labels,
            ..current.clone()
        })
    }

    /// Makes GitHub pull request `current` a draft or ready for review (GraphQL: the REST
    /// API cannot).
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
        match self.api.strip_suffix("/api/v3") {
            Some(host) => format!("{host}/api/graphql"),
            None => format!("{}/graphql", self.api),
        }
    }

    /// Comments on request `number`.
    pub async fn comment(&self, number: i64, text: &str) -> Result<(), ForgeError> {
        let what = format!("commenting on {} {number}", self.noun());
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

    /// Request `number` as the forge holds it; its fate is [`Fate::Gone`] when the forge
    /// answers 404.
    pub async fn read(&self, number: i64) -> Result<Opened, ForgeError> {
        let what = format!("reading {} {number}", self.noun());
        let path = match self.kind {
            ForgeKind::Github => format!("/repos/{}/pulls/{number}", self.repository),
            ForgeKind::Gitlab => format!("/projects/{}/merge_requests/{number}", self.project_id()),
        };
        match self.send(&what, Method::GET, &path, &[], None).await {
            Ok(answer) => self.opened(&what, answer),
            // Gone only when the repository itself is readable: a token that cannot see it
            // gets 404s too, and that must not forget every request.
            Err(ForgeError::Status { status: 404, .. }) if self.repository_readable().await? => {
                Ok(Opened {
                    number,
                    url: String::new(),
                    title: String::new(),
                    body: String::new(),
                    draft: false,
                    labels: Vec::new(),
                    node_id: None,
                    fate: Fate::Gone,
                })
            }
            Err(e) => Err(e),
        }
    }

    /// Whether the repository can be read (an error names it when it cannot).
    async fn repository_readable(&self) -> Result<bool, ForgeError> {
        let what = format!("reading the repository {}", self.repository);
        let path = match self.kind {
            ForgeKind::Github => format!("/repos/{}", self.repository),
            ForgeKind::Gitlab => format!("/projects/{}", self.project_id()),
        };
        self.send(&what, Method::GET, &path, &[], None)
            .await
            .map(|_| true)
    }

    /// Adds `labels` to GitHub pull request `number`.
    async fn label(&self, number: i64, labels: &[String]) -> Result<(), ForgeError> {
        if labels.is_empty() {
            return Ok(());
        }
        let what = format!("labelling pull request {number}");
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

    /// A request in an answer.
    fn opened(&self, what: &str, value: Value) -> Result<Opened, ForgeError> {
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        let (number, url, body) = match self.kind {
            ForgeKind::Github => ("number", "html_url", "body"),
            ForgeKind::Gitlab => ("iid", "web_url", "description"),
        };
        let labels = value
            .get("labels")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|l| l.get("name").unwrap_or(l).as_str().map(str::to_owned))
            .collect();
        let state = text("state").unwrap_or_default();
        let fate = match self.kind {
            ForgeKind::Github if value.get("merged").and_then(Value::as_bool) == Some(true) => {
                Fate::Merged(text("merge_commit_sha"))
            }
            ForgeKind::Github if value.get("merged_at").is_some_and(|v| !v.is_null()) => {
                Fate::Merged(text("merge_commit_sha"))
            }
            ForgeKind::Github if state == "closed" => Fate::Closed,
            ForgeKind::Gitlab if state == "merged" => {
                Fate::Merged(text("merge_commit_sha").or_else(|| text("squash_commit_sha")))
            }
            ForgeKind::Gitlab if state == "closed" || state == "locked" => Fate::Closed,
            _ => Fate::Open,
        };
        Ok(Opened {
            number: value
                .get(number)
                .and_then(Value::as_i64)
                .ok_or_else(|| reply(what, format!("no `{number}`")))?,
            url: text(url).unwrap_or_default(),
            title: text("title").unwrap_or_default(),
            body: text(body).unwrap_or_default(),
            draft: value.get("draft").and_then(Value::as_bool).unwrap_or(false),
            labels,
            node_id: text("node_id"),
            fate,
        })
    }

    /// Sends a request to `path` of the REST API (see [`Forge::send_to`]).
    async fn send(
        &self,
        what: &str,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<Value>,
    ) -> Result<Value, ForgeError> {
        let url = format!("{}{path}", self.api);
        self.send_to(what, method, &url, query, body).await
    }

    /// Sends a request, retrying rate limits and server errors with backoff (honouring
    /// `Retry-After`, up to the configured longest wait), and returns the answer's JSON.
    async fn send_to(
        &self,
        what: &str,
        method: Method,
        url: &str,
        query: &[(&str, String)],
        body: Option<Value>,
    ) -> Result<Value, ForgeError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut request = self.http.request(method.clone(), url).query(query);
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
            let response = request
                .send()
                .await
                .map_err(|e| self.unreachable(what, &e))?;
            let status = response.status();
            let retry = status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error();
            if retry && attempt < self.attempts {
                tokio::time::sleep(wait(&response, attempt, self.max_wait)).await;
                continue;
            }
            let text = response
                .text()
                .await
                .map_err(|e| self.unreachable(what, &e))?;
            if retry && attempt > 1 {
                return Err(ForgeError::Exhausted {
                    what: what.to_owned(),
                    status: status.as_u16(),
                    attempts: attempt,
                    message: message_of(&text),
                });
            }
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

    /// A transport failure in plain words.
    fn unreachable(&self, what: &str, e: &reqwest::Error) -> ForgeError {
        ForgeError::Unreachable {
            what: what.to_owned(),
            api: self.api.clone(),
            reason: transport_reason(e),
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

/// How long to wait before attempt `attempt + 1`: the forge's `Retry-After` (seconds), else
/// 1, 2, 4 ... seconds; at most `max` seconds.
fn wait(response: &reqwest::Response, attempt: u32, max: u64) -> Duration {
    let asked = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    Duration::from_secs(asked.unwrap_or(1 << (attempt - 1).min(16)).min(max))
}

/// Why a request could not be sent or its answer read, in plain words: `connection refused`,
/// `timed out`, else the innermost cause.
fn transport_reason(e: &reqwest::Error) -> String {
    let mut cause: Option<&dyn std::error::Error> = Some(e);
    let mut last = e.to_string();
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => return "connection refused".into(),
                std::io::ErrorKind::TimedOut => return "timed out".into(),
                _ => {}
            }
        }
        last = c.to_string();
        cause = c.source();
    }
    if e.is_timeout() {
        return "timed out".into();
    }
    last
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

fn reply(what: &str, message: String) -> ForgeError {
    ForgeError::Reply {
        what: what.to_owned(),
        message,
    }
}
