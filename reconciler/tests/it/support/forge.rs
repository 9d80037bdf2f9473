//! A loopback server that behaves like the parts of the GitHub REST API (and of GitLab's
//! merge request API, and of Gitea's) `retrace nightly` uses, keeping pull requests in memory
//! and recording every request. Tests drive it directly; `cargo run -p reconciler --example fake_forge`
//! serves it for trying `retrace nightly` by hand.
//!
//! Besides the forge's own routes it answers two control routes, so a person can play the
//! reviewer: `POST /_control/merge/NUMBER?sha=COMMIT` and `POST /_control/close/NUMBER`.
//! Tests can also delete a request, tick its checklist, and script failures: answer the
//! next requests matching a method and path with a status (a 429 storm, a 502), or make a
//! request and then answer 502 as if the answer were lost.

#![allow(dead_code)]

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};
use tiny_http::{Header, Method, Response, Server};

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path and query.
    pub url: String,
    /// The JSON body, or null.
    pub body: Value,
    /// The token the request carried (`Authorization: Bearer`, `Authorization: token` or
    /// `PRIVATE-TOKEN`).
    pub token: Option<String>,
}

/// A pull (or merge) request the server holds.
#[derive(Debug, Clone)]
pub struct Pull {
    /// Its number.
    pub number: i64,
    /// The branch it proposes.
    pub head: String,
    /// The branch it goes into.
    pub base: String,
    /// Its title.
    pub title: String,
    /// Its description.
    pub body: String,
    /// Whether it is a draft.
    pub draft: bool,
    /// `open`, `closed` or `merged`.
    pub state: String,
    /// The merge commit, once merged.
    pub merge_commit: Option<String>,
    /// Its labels.
    pub labels: Vec<String>,
    /// Comments on it.
    pub comments: Vec<String>,
}

/// A scripted failure: the next `times` requests whose method is `method` and whose path
/// contains `path` are answered `status`; with `after`, the request is served first and
/// its answer replaced (the forge did the work, the client saw an error).
#[derive(Debug, Clone)]
pub struct Failure {
    /// `GET`, `POST`, ...
    pub method: String,
    /// A part of the path.
    pub path: String,
    /// The status to answer.
    pub status: u16,
    /// How many requests to fail.
    pub times: usize,
    /// Serve the request before failing it.
    pub after: bool,
}

#[derive(Debug, Default)]
struct Inner {
    pulls: Vec<Pull>,
    requests: Vec<Recorded>,
    failures: Vec<Failure>,
    next: i64,
    /// Gitea's repository labels, the id of each its place plus one.
    labels: Vec<String>,
}

/// Which API the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// GitHub's REST API.
    Github,
    /// GitLab's REST API v4.
    Gitlab,
    /// Gitea's (and Forgejo's) REST API v1.
    Gitea,
}

/// The running server.
#[derive(Clone)]
pub struct FakeForge {
    /// Its base URL, `http://127.0.0.1:PORT`.
    pub url: String,
    inner: Arc<Mutex<Inner>>,
}

impl FakeForge {
    /// Starts a server of `kind` on `address` (`127.0.0.1:0` for any free port) in a thread.
    pub fn start(kind: Kind, address: &str) -> FakeForge {
        let server = Server::http(address).expect("the fake forge binds");
        let url = format!("http://{}", server.server_addr());
        let inner = Arc::new(Mutex::new(Inner::default()));
        let shared = Arc::clone(&inner);
        std::thread::spawn(move || {
            for mut request in server.incoming_requests() {
                let mut text = String::new();
                let _ = request.as_reader().read_to_string(&mut text);
                let token = token(&request);
                let method = request.method().to_string();
                let url = request.url().to_owned();
                let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                let (status, answer) = {
                    let mut inner = shared.lock().unwrap_or_else(PoisonError::into_inner);
                    inner.requests.push(Recorded {
                        method: method.clone(),
                        url: url.clone(),
                        body: body.clone(),
                        token: token.clone(),
                    });
                    let failure = inner
                        .failures
                        .iter_mut()
                        .find(|f| f.times > 0 && f.method == method && url.contains(&f.path));
                    let failure = failure.map(|f| {
                        f.times -= 1;
                        (f.status, f.after)
                    });
                    match failure {
                        _ if token.is_none() && !url.starts_with("/_control/") => {
                            (401, json!({"message": "Bad credentials"}))
                        }
                        Some((status, false)) => (status, json!({"message": "injected failure"})),
                        Some((status, true)) => {
                            route(kind, &mut inner, request.method(), &url, &body);
                            (
                                status,
                                json!({"message": "injected failure after the work"}),
                            )
                        }
                        None => route(kind, &mut inner, request.method(), &url, &body),
                    }
                };
                let header =
                    Header::from_bytes("Content-Type", "application/json").expect("a valid header");
                let response = Response::from_string(answer.to_string())
                    .with_status_code(status)
                    .with_header(header);
                let _ = request.respond(response);
            }
        });
        FakeForge { url, inner }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        f(&mut self.inner.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.with(|i| i.requests.clone())
    }

    /// The requests that changed something (not `GET`, not control routes).
    pub fn writes(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.method != "GET" && !r.url.starts_with("/_control/"))
            .collect()
    }

    /// The pull requests held.
    pub fn pulls(&self) -> Vec<Pull> {
        self.with(|i| i.pulls.clone())
    }

    /// Marks pull request `number` merged as `commit`.
    pub fn merge(&self, number: i64, commit: &str) {
        self.with(|i| set_state(i, number, "merged", Some(commit)));
    }

    /// Marks pull request `number` closed without merging.
    pub fn close(&self, number: i64) {
        self.with(|i| set_state(i, number, "closed", None));
    }

    /// Deletes pull request `number`: the forge answers 404 for it from now on.
    pub fn delete(&self, number: i64) {
        self.with(|i| i.pulls.retain(|p| p.number != number));
    }

    /// Ticks every checklist item of pull request `number`'s description, as a reviewer
    /// who dealt with them.
    pub fn tick_all(&self, number: i64) {
        self.with(|i| {
            if let Some(p) = i.pulls.iter_mut().find(|p| p.number == number) {
                p.body = p.body.replace("- [ ] ", "- [x] ");
            }
        });
    }

    /// Takes labels off pull request `number`, as a person might.
    pub fn unlabel(&self, number: i64) {
        self.with(|i| {
            if let Some(p) = i.pulls.iter_mut().find(|p| p.number == number) {
                p.labels.clear();
            }
        });
    }

    /// Scripts a failure (see [`Failure`]).
    pub fn fail(&self, failure: Failure) {
        self.with(|i| i.failures.push(failure));
    }

    /// Forgets the requests recorded so far.
    pub fn clear_requests(&self) {
        self.with(|i| i.requests.clear());
    }
}

/// The next number, as forges count: never reused, even after a delete.
fn next_number(inner: &mut Inner) -> i64 {
    inner.next += 1;
    inner.next
}

fn set_state(inner: &mut Inner, number: i64, state: &str, commit: Option<&str>) -> bool {
    let Some(pull) = inner.pulls.iter_mut().find(|p| p.number == number) else {
        return false;
    };
    pull.state = state.to_owned();
    pull.merge_commit = commit.map(str::to_owned);
    true
}

fn token(request: &tiny_http::Request) -> Option<String> {
    request.headers().iter().find_map(|h| {
        let name = h.field.as_str().as_str().to_ascii_lowercase();
        let value = h.value.as_str();
        match name.as_str() {
            "authorization" => value
                .strip_prefix("Bearer ")
                .or_else(|| value.strip_prefix("token "))
                .map(str::to_owned),
            "private-token" => Some(value.to_owned()),
            _ => None,
        }
    })
}

/// The query parameter `key` of `url`, percent-decoded.
fn query(url: &str, key: &str) -> Option<String> {
    let (_, query) = url.split_once('?')?;
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == key).then(|| decode(v))
    })
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Answers one request: (status, JSON).
fn route(kind: Kind, inner: &mut Inner, method: &Method, url: &str, body: &Value) -> (u16, Value) {
    let path = url.split('?').next().unwrap_or_default();
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    match (method, parts.as_slice()) {
        (Method::Post, ["_control", "merge", n]) => {
            let sha = query(url, "sha");
            control(inner, n, "merged", sha.as_deref())
        }
        (Method::Post, ["_control", "close", n]) => control(inner, n, "closed", None),
        _ => match kind {
            Kind::Github => github(inner, method, url, &parts, body),
            Kind::Gitlab => gitlab(inner, method, url, &parts, body),
            Kind::Gitea => gitea(inner, method, url, &parts, body),
        },
    }
}

fn control(inner: &mut Inner, number: &str, state: &str, sha: Option<&str>) -> (u16, Value) {
    match number.parse() {
        Ok(n) if set_state(inner, n, state, sha) => (200, json!({"ok": true})),
        _ => (404, json!({"message": "no such pull request"})),
    }
}

fn text(body: &Value, key: &str) -> String {
    body.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn github(
    inner: &mut Inner,
    method: &Method,
    url: &str,
    parts: &[&str],
    body: &Value,
) -> (u16, Value) {
    let view = |p: &Pull, repo: &str| {
        json!({"number": p.number, "html_url": format!("https://github.example/{repo}/pull/{}", p.number),
               "state": if p.state == "merged" { "closed" } else { p.state.as_str() },
               "merged": p.state == "merged", "merge_commit_sha": p.merge_commit,
               "draft": p.draft, "title": p.title, "body": p.body,
               "node_id": format!("PR_{}", p.number),
               "labels": p.labels.iter().map(|l| json!({"name": l})).collect::<Vec<_>>(),
               "head": {"ref": p.head}, "base": {"ref": p.base}})
    };
    match (method, parts) {
        (Method::Get, ["repos", o, r, "pulls"]) => {
            let repo = format!("{o}/{r}");
            let head = query(url, "head").unwrap_or_default();
            let state = query(url, "state").unwrap_or_else(|| "open".into());
            let list: Vec<Value> = inner
                .pulls
                .iter()
                .filter(|p| format!("{o}:{}", p.head) == head && p.state == state)
                .map(|p| view(p, &repo))
                .collect();
            (200, Value::Array(list))
        }
        (Method::Post, ["repos", o, r, "pulls"]) => {
            let head = text(body, "head");
            if inner
                .pulls
                .iter()
                .any(|p| p.head == head && p.state == "open")
            {
                return (
                    422,
                    json!({"message": "Validation Failed: a pull request already exists"}),
                );
            }
            let pull = Pull {
                number: next_number(inner),
                head,
                base: text(body, "base"),
                title: text(body, "title"),
                body: text(body, "body"),
                draft: body.get("draft").and_then(Value::as_bool).unwrap_or(false),
                state: "open".into(),
                merge_commit: None,
                labels: Vec::new(),
                comments: Vec::new(),
            };
            let answer = view(&pull, &format!("{o}/{r}"));
            inner.pulls.push(pull);
            (201, answer)
        }
        (Method::Patch, ["repos", o, r, "pulls", n]) => {
            let repo = format!("{o}/{r}");
            match find(inner, n) {
                Some(pull) => {
                    pull.title = text(body, "title");
                    pull.body = text(body, "body");
                    (200, view(pull, &repo))
                }
                None => (404, json!({"message": "Not Found"})),
            }
        }
        (Method::Get, ["repos", o, r, "pulls", n]) => {
            let repo = format!("{o}/{r}");
            match find(inner, n) {
                Some(pull) => (200, view(pull, &repo)),
                None => (404, json!({"message": "Not Found"})),
            }
        }
        (Method::Post, ["repos", _, _, "issues", n, "labels"]) => match find(inner, n) {
            Some(pull) => {
                for label in body["labels"].as_array().into_iter().flatten() {
                    let label = label.as_str().unwrap_or_default().to_owned();
                    if !pull.labels.contains(&label) {
                        pull.labels.push(label);
                    }
                }
                (
                    200,
                    json!(
                        pull.labels
                            .iter()
                            .map(|l| json!({"name": l}))
                            .collect::<Vec<_>>()
                    ),
                )
            }
            None => (404, json!({"message": "Not Found"})),
        },
        (Method::Post, ["graphql"]) => graphql(inner, body),
        (Method::Get, ["repos", o, r]) => (200, json!({"full_name": format!("{o}/{r}")})),
        (Method::Post, ["repos", _, _, "issues", n, "comments"]) => match find(inner, n) {
            Some(pull) => {
                pull.comments.push(text(body, "body"));
                (201, json!({"id": pull.comments.len()}))
            }
            None => (404, json!({"message": "Not Found"})),
        },
        _ => (404, json!({"message": "Not Found"})),
    }
}

fn gitlab(
    inner: &mut Inner,
    method: &Method,
    url: &str,
    parts: &[&str],
    body: &Value,
) -> (u16, Value) {
    let view = |p: &Pull| {
        json!({"iid": p.number, "web_url": format!("https://gitlab.example/mr/{}", p.number),
               "state": if p.state == "open" { "opened" } else { p.state.as_str() },
               "merge_commit_sha": p.merge_commit, "title": p.title, "description": p.body,
               "source_branch": p.head, "target_branch": p.base, "draft": p.draft,
               "labels": p.labels})
    };
    match (method, parts) {
        (Method::Get, ["projects", id]) => (200, json!({"path_with_namespace": decode(id)})),
        (Method::Get, ["projects", _, "merge_requests"]) => {
            let branch = query(url, "source_branch").unwrap_or_default();
            let list: Vec<Value> = inner
                .pulls
                .iter()
                .filter(|p| p.head == branch && p.state == "open")
                .map(view)
                .collect();
            (200, Value::Array(list))
        }
        (Method::Post, ["projects", _, "merge_requests"]) => {
            let title = text(body, "title");
            let head = text(body, "source_branch");
            if inner
                .pulls
                .iter()
                .any(|p| p.head == head && p.state == "open")
            {
                return (
                    409,
                    json!({"message": ["Another open merge request already exists for this source branch"]}),
                );
            }
            let pull = Pull {
                number: next_number(inner),
                head: text(body, "source_branch"),
                base: text(body, "target_branch"),
                draft: title.starts_with("Draft:"),
                title,
                body: text(body, "description"),
                state: "open".into(),
                merge_commit: None,
                labels: text(body, "labels")
                    .split(',')
                    .filter(|l| !l.is_empty())
                    .map(str::to_owned)
                    .collect(),
                comments: Vec::new(),
            };
            let answer = view(&pull);
            inner.pulls.push(pull);
            (201, answer)
        }
        (Method::Put, ["projects", _, "merge_requests", n]) => match find(inner, n) {
            Some(pull) => {
                pull.title = text(body, "title");
                pull.draft = pull.title.starts_with("Draft:");
                pull.body = text(body, "description");
                for label in text(body, "add_labels")
                    .split(',')
                    .filter(|l| !l.is_empty())
                {
                    if !pull.labels.iter().any(|l| l == label) {
                        pull.labels.push(label.to_owned());
                    }
                }
                (200, view(pull))
            }
            None => (404, json!({"message": "404 Not found"})),
        },
        (Method::Get, ["projects", _, "merge_requests", n]) => match find(inner, n) {
            Some(pull) => (200, view(pull)),
            None => (404, json!({"message": "404 Not found"})),
        },
        (Method::Post, ["projects", _, "merge_requests", n, "notes"]) => match find(inner, n) {
            Some(pull) => {
                pull.comments.push(text(body, "body"));
                (201, json!({"id": pull.comments.len()}))
            }
            None => (404, json!({"message": "404 Not found"})),
        },
        _ => (404, json!({"message": "404 Not found"})),
    }
}

/// The most items Gitea answers per page (its `MAX_RESPONSE_ITEMS`, 50 by default): one here,
/// so that any list of two items or more takes several pages.
const GITEA_PAGE: usize = 1;

/// Page `page` of `items` as Gitea cuts it: `limit` items (at most [`GITEA_PAGE`]) a page,
/// from page 1.
fn gitea_page(url: &str, items: Vec<Value>) -> Value {
    let number = |key: &str| query(url, key).and_then(|v| v.parse::<usize>().ok());
    let limit = number("limit").unwrap_or(GITEA_PAGE).clamp(1, GITEA_PAGE);
    let page = number("page").unwrap_or(1).max(1);
    Value::Array(
        items
            .into_iter()
            .skip((page - 1) * limit)
            .take(limit)
            .collect(),
    )
}

fn gitea(
    inner: &mut Inner,
    method: &Method,
    url: &str,
    parts: &[&str],
    body: &Value,
) -> (u16, Value) {
    let labels = inner.labels.clone();
    let label = move |name: &String| {
        let id = labels.iter().position(|l| l == name).map_or(0, |i| i + 1);
        json!({"id": id, "name": name, "color": "ededed"})
    };
    let view = |p: &Pull, repo: &str| {
        json!({"number": p.number, "html_url": format!("https://gitea.example/{repo}/pulls/{}", p.number),
               "state": if p.state == "merged" { "closed" } else { p.state.as_str() },
               "merged": p.state == "merged", "merge_commit_sha": p.merge_commit,
               "title": p.title, "body": p.body,
               "labels": p.labels.iter().map(&label).collect::<Vec<_>>(),
               "head": {"ref": p.head, "repo_id": 1}, "base": {"ref": p.base, "repo_id": 1}})
    };
    let not_found = || (404, json!({"message": "The target couldn't be found."}));
    match (method, parts) {
        (Method::Get, ["repos", o, r]) => (200, json!({"full_name": format!("{o}/{r}")})),
        (Method::Get, ["repos", o, r, "pulls"]) => {
            let repo = format!("{o}/{r}");
            let state = query(url, "state").unwrap_or_else(|| "open".into());
            let list = inner
                .pulls
                .iter()
                .filter(|p| p.state == state)
                .map(|p| view(p, &repo))
                .collect();
            (200, gitea_page(url, list))
        }
        (Method::Post, ["repos", o, r, "pulls"]) => {
            let head = text(body, "head");
            if inner
                .pulls
                .iter()
                .any(|p| p.head == head && p.state == "open")
            {
                return (
                    409,
                    json!({"message": "pull request already exists for these targets"}),
                );
            }
            let title = text(body, "title");
            let pull = Pull {
                number: next_number(inner),
                head,
                base: text(body, "base"),
                draft: title.starts_with("WIP:"),
                title,
                body: text(body, "body"),
                state: "open".into(),
                merge_commit: None,
                labels: Vec::new(),
                comments: Vec::new(),
            };
            let answer = view(&pull, &format!("{o}/{r}"));
            inner.pulls.push(pull);
            (201, answer)
        }
        (Method::Patch, ["repos", o, r, "pulls", n]) => {
            let repo = format!("{o}/{r}");
            match find(inner, n) {
                Some(pull) => {
                    pull.title = text(body, "title");
                    pull.draft = pull.title.starts_with("WIP:");
                    pull.body = text(body, "body");
                    (200, view(pull, &repo))
                }
                None => not_found(),
            }
        }
        (Method::Get, ["repos", o, r, "pulls", n]) => {
            let repo = format!("{o}/{r}");
            match find(inner, n) {
                Some(pull) => (200, view(pull, &repo)),
                None => not_found(),
            }
        }
        (Method::Get, ["repos", _, _, "labels"]) => {
            let list = inner.labels.iter().map(&label).collect();
            (200, gitea_page(url, list))
        }
        (Method::Post, ["repos", _, _, "labels"]) => {
            let name = text(body, "name");
            inner.labels.push(name.clone());
            (
                201,
                json!({"id": inner.labels.len(), "name": name, "color": "ededed"}),
            )
        }
        (Method::Post, ["repos", _, _, "issues", n, "labels"]) => {
            let names: Vec<String> = body["labels"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|id| {
                    let place = usize::try_from(id.as_i64()?).ok()?.checked_sub(1)?;
                    inner.labels.get(place).cloned()
                })
                .collect();
            match find(inner, n) {
                Some(pull) => {
                    for name in names {
                        if !pull.labels.contains(&name) {
                            pull.labels.push(name);
                        }
                    }
                    (
                        200,
                        json!(pull.labels.iter().map(&label).collect::<Vec<_>>()),
                    )
                }
                None => not_found(),
            }
        }
        (Method::Post, ["repos", _, _, "issues", n, "comments"]) => match find(inner, n) {
            Some(pull) => {
                pull.comments.push(text(body, "body"));
                (201, json!({"id": pull.comments.len()}))
            }
            None => not_found(),
        },
        _ => not_found(),
    }
}

/// GitHub's GraphQL mutations that make a pull request a draft or ready for review.
fn graphql(inner: &mut Inner, body: &Value) -> (u16, Value) {
    let query = text(body, "query");
    let id = body["variables"]["id"].as_str().unwrap_or_default();
    let number = id.strip_prefix("PR_").unwrap_or_default();
    let draft = if query.contains("convertPullRequestToDraft") {
        true
    } else if query.contains("markPullRequestReadyForReview") {
        false
    } else {
        return (200, json!({"errors": [{"message": "unknown mutation"}]}));
    };
    match find(inner, number) {
        Some(pull) => {
            pull.draft = draft;
            (200, json!({"data": {"pullRequest": {"isDraft": draft}}}))
        }
        None => (
            200,
            json!({"errors": [{"message": format!("Could not resolve to a node with the global id of '{id}'")}]}),
        ),
    }
}

fn find<'a>(inner: &'a mut Inner, number: &str) -> Option<&'a mut Pull> {
    let number: i64 = number.parse().ok()?;
    inner.pulls.iter_mut().find(|p| p.number == number)
}
