//! The HTTP plumbing every forge shares: one repository on a forge's REST API, its token,
//! and requests retried on rate limits and server errors, failures told in plain words.

use std::time::Duration;

use reqwest::{Method, RequestBuilder, StatusCode};
use serde::Deserialize;
use serde_json::Value;

use super::model::{ForgeError, reply};
use crate::config::ForgeConfig;

/// The most of a forge's answer read, in bytes: its answers are JSON documents of a request,
/// a page of requests or labels, so a larger one is a fault or an attack, refused unread.
const MAX_ANSWER: usize = 8 << 20;

/// What a kind of forge brings to [`Rest::new`].
pub(super) struct Defaults {
    /// The forge's name, for messages.
    pub name: &'static str,
    /// The API's base URL when the configuration names none (a self-hosted forge has none).
    pub api: Option<&'static str>,
    /// The token's environment variable when the configuration names none.
    pub token_env: &'static str,
    /// How the forge takes its token (and any header it wants on every request).
    pub authorize: fn(RequestBuilder, &str) -> RequestBuilder,
}

/// A forge's REST API and one repository on it.
pub(super) struct Rest {
    api: String,
    repository: String,
    token: String,
    authorize: fn(RequestBuilder, &str) -> RequestBuilder,
    http: reqwest::Client,
    attempts: u32,
    max_wait: u64,
}

impl Rest {
    /// The API `config` names (else the kind's default; neither is an error), for
    /// `repository`, with the token from its environment variable.
    pub fn new(
        config: &ForgeConfig,
        repository: &str,
        defaults: &Defaults,
    ) -> Result<Rest, ForgeError> {
        let api = config
            .api_url
            .as_deref()
            .or(defaults.api)
            .ok_or(ForgeError::NoApiUrl(defaults.name))?;
        let variable = config
            .token_env
            .clone()
            .unwrap_or_else(|| defaults.token_env.to_owned());
        let token = std::env::var(&variable)
            .ok()
            .filter(|t| !t.is_empty())
            .ok_or(ForgeError::NoToken(variable))?;
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .user_agent(concat!("retrace/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| reply("setting up the HTTP client", e.to_string()))?;
        Ok(Rest {
            api: api.trim_end_matches('/').to_owned(),
            repository: repository.to_owned(),
            token,
            authorize: defaults.authorize,
            http,
            attempts: config.attempts.max(1),
            max_wait: config.max_wait_seconds,
        })
    }

    /// The API's base URL, without a trailing slash.
    pub fn api(&self) -> &str {
        &self.api
    }

    /// The repository on the forge.
    pub fn repository(&self) -> &str {
        &self.repository
    }

    /// The answer to a GET of `path`, or `None` when the forge answers 404 while the
    /// repository at `repository_path` can be read: the thing is gone. A token that cannot
    /// see the repository gets 404s too, and that must not read as gone.
    pub async fn get_unless_gone(
        &self,
        what: &str,
        path: &str,
        repository_path: &str,
    ) -> Result<Option<Value>, ForgeError> {
        match self.send(what, Method::GET, path, &[], None).await {
            Ok(answer) => Ok(Some(answer)),
            Err(ForgeError::Status { status: 404, .. }) => {
                let what = format!("reading the repository {}", self.repository);
                self.send(&what, Method::GET, repository_path, &[], None)
                    .await
                    .map(|_| None)
            }
            Err(e) => Err(e),
        }
    }

    /// POSTs `body` to `path`, the answer unread.
    pub async fn post(&self, what: &str, path: &str, body: Value) -> Result<(), ForgeError> {
        self.send(what, Method::POST, path, &[], Some(body))
            .await
            .map(|_| ())
    }

    /// Sends a request to `path` of the REST API (see [`Rest::send_to`]).
    pub async fn send(
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
    pub async fn send_to(
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
            let request = self.http.request(method.clone(), url).query(query);
            let mut request = (self.authorize)(request, &self.token);
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
            let text = self.answer_text(what, response).await?;
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

    /// The answer's text, read up to [`MAX_ANSWER`] bytes: a longer one is refused, not held.
    async fn answer_text(
        &self,
        what: &str,
        mut response: reqwest::Response,
    ) -> Result<String, ForgeError> {
        let mut bytes = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.unreachable(what, &e))?
        {
            if bytes.len() + chunk.len() > MAX_ANSWER {
                return Err(reply(
                    what,
                    format!(
                        "the answer is larger than {} MiB, far more than a forge sends; it was not read",
                        MAX_ANSWER >> 20
                    ),
                ));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
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
pub(super) fn message_of(text: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A forge at `127.0.0.1` that answers one request with `length` bytes of JSON
    /// whitespace; its API URL.
    fn sending(length: usize) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
        let api = format!("http://{}", listener.local_addr().expect("an address"));
        std::thread::spawn(move || {
            let Ok((mut stream, _)) = listener.accept() else {
                return;
            };
            let mut request = Vec::new();
            let mut byte = [0u8; 1];
            while !request.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                request.push(byte[0]);
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                length + 2
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(b"[");
            let page = vec![b' '; 1 << 16];
            let mut left = length;
            while left > 0 {
                let n = left.min(page.len());
                if stream.write_all(&page[..n]).is_err() {
                    return;
                }
                left -= n;
            }
            let _ = stream.write_all(b"]");
        });
        api
    }

    fn rest(api: &str) -> Rest {
        // PATH is always set: the loopback forge ignores the token.
        let config: ForgeConfig = toml::from_str(&format!(
            "kind = \"gitea\"\napi_url = \"{api}\"\ntoken_env = \"PATH\"\nattempts = 1"
        ))
        .expect("config");
        let defaults = Defaults {
            name: "a test forge",
            api: None,
            token_env: "PATH",
            authorize: |request, token| request.bearer_auth(token),
        };
        Rest::new(&config, "acme/infra", &defaults).expect("a client")
    }

    #[tokio::test]
    async fn an_answer_larger_than_a_forge_sends_is_refused_unread() {
        let api = sending(MAX_ANSWER + 1);
        let error = rest(&api)
            .send(
                "reading the pull requests",
                Method::GET,
                "/pulls",
                &[],
                None,
            )
            .await
            .expect_err("refused");
        assert!(
            error
                .to_string()
                .contains("the answer is larger than 8 MiB"),
            "{error}"
        );
        // An answer within the bound is read.
        let api = sending(1 << 20);
        let answer = rest(&api)
            .send(
                "reading the pull requests",
                Method::GET,
                "/pulls",
                &[],
                None,
            )
            .await
            .expect("read");
        assert_eq!(answer, serde_json::json!([]));
    }
}
