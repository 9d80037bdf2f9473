//! The HTTP transport of the model client (the `llm` feature): posts a turn to the
//! configured endpoint, retrying what may pass, and reads the reply within its size bound.

use super::{Api, ClientError, Message, Reply, ToolDef, counted, parse_reply, request_body};
use crate::agent::{AgentConfig, redact};
use serde_json::Value;
use std::time::{Duration, Instant};

/// An HTTP client for one configured endpoint.
pub struct Client {
    http: reqwest::Client,
    config: AgentConfig,
    key: Option<String>,
}

/// The longest wait a `Retry-After` header may ask for.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

impl Client {
    /// A client for the configured endpoint, reading the API key from its environment
    /// variable (none needed when `api_key_env` is not set, as for a local server).
    pub fn new(config: &AgentConfig) -> Result<Client, ClientError> {
        let key = match &config.api_key_env {
            Some(var) => Some(
                std::env::var(var)
                    .ok()
                    .filter(|k| !k.is_empty())
                    .ok_or_else(|| ClientError::MissingKey(var.clone()))?,
            ),
            None => None,
        };
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(config.timeout_seconds))
            .connect_timeout(Duration::from_secs(config.timeout_seconds.min(10)))
            .build()
            .map_err(|e| ClientError::Unreachable {
                endpoint: redact::url(&config.endpoint),
                reason: e.to_string(),
            })?;
        Ok(Client {
            http,
            config: config.clone(),
            key,
        })
    }

    /// Sends one turn (the system text, the conversation so far and the tools) and reads the
    /// model's reply, retrying what may pass, bounded only by the timeouts and retries.
    pub async fn complete(
        &self,
        system: &str,
        messages: &[Message],
        tools: &[ToolDef],
    ) -> Result<Reply, ClientError> {
        let per_attempt = Duration::from_secs(self.config.timeout_seconds) + MAX_RETRY_AFTER;
        let until = Instant::now() + per_attempt * (self.config.retries + 1);
        self.complete_by(system, messages, tools, (self.config.seed, until))
            .await
    }

    /// [`Client::complete`] with this seed (a sample's own), where neither a request nor a
    /// retry wait goes past `until`. The body is sent as given: the caller redacts it.
    pub async fn complete_by(
        &self,
        system: &str,
        messages: &[Message],
        tools: &[ToolDef],
        (seed, until): (Option<u64>, Instant),
    ) -> Result<Reply, ClientError> {
        let config = AgentConfig {
            seed,
            ..self.config.clone()
        };
        let body = request_body(&config, system, messages, tools).to_string();
        let attempts = self.config.retries + 1;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ClientError::OutOfTime);
            }
            let (status, message, retry_after) = match self.send(&body, left).await {
                Ok(text) => {
                    let mut reply = parse_reply(self.config.api, &text)?;
                    reply.usage = counted(reply.usage, body.len(), text.len());
                    return Ok(reply);
                }
                Err(Failure::Final(error)) => return Err(error),
                Err(Failure::Passing {
                    status,
                    message,
                    retry_after,
                }) => (status, message, retry_after),
            };
            if attempt >= attempts {
                return Err(ClientError::Exhausted {
                    attempts,
                    status,
                    message,
                });
            }
            let wait = retry_after
                .unwrap_or_else(|| backoff(attempt))
                .min(MAX_RETRY_AFTER);
            if Instant::now() + wait >= until {
                return Err(ClientError::OutOfTime);
            }
            tracing::info!(
                attempt,
                status,
                wait_ms = wait.as_millis() as u64,
                "model endpoint busy, retrying"
            );
            tokio::time::sleep(wait).await;
        }
    }

    async fn send(&self, body: &str, left: Duration) -> Result<String, Failure> {
        let endpoint = &self.config.endpoint;
        let mut request = self
            .http
            .post(endpoint)
            .timeout(left.min(Duration::from_secs(self.config.timeout_seconds)))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_owned());
        request = match (self.config.api, &self.key) {
            (Api::Openai, Some(key)) => request.bearer_auth(key).header("api-key", key),
            (Api::Anthropic, Some(key)) => request.header("x-api-key", key),
            (_, None) => request,
        };
        if self.config.api == Api::Anthropic {
            request = request.header("anthropic-version", "2023-06-01");
        }
        let mut response = request.send().await.map_err(|e| self.network(e))?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let limit = self.reply_limit();
        let mut bytes: Vec<u8> = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.network(e))? {
            if bytes.len() + chunk.len() > limit {
                return Err(Failure::Final(ClientError::TooLarge { limit }));
            }
            bytes.extend_from_slice(&chunk);
        }
        let text = String::from_utf8_lossy(&bytes).into_owned();
        match status {
            200..=299 => Ok(text),
            401 | 403 => Err(Failure::Final(ClientError::Refused {
                status,
                message: error_message(&text),
            })),
            429 | 500..=599 => Err(Failure::Passing {
                status,
                message: error_message(&text),
                retry_after,
            }),
            _ => Err(Failure::Final(ClientError::Rejected {
                status,
                message: error_message(&text),
            })),
        }
    }

    /// The most bytes a reply may have: what `max_tokens` tokens can take, JSON-escaped,
    /// with room for the envelope (at least 64 KiB).
    fn reply_limit(&self) -> usize {
        (self.config.max_tokens as usize)
            .saturating_mul(24)
            .max(64 * 1024)
    }

    fn network(&self, error: reqwest::Error) -> Failure {
        let endpoint = redact::url(&self.config.endpoint);
        if error.is_timeout() {
            Failure::Final(ClientError::Timeout {
                endpoint,
                seconds: self.config.timeout_seconds,
            })
        } else {
            Failure::Final(ClientError::Unreachable {
                endpoint,
                reason: plain_reason(&error),
            })
        }
    }
}

/// A failed attempt: final, or worth another try (HTTP 429 or 5xx).
enum Failure {
    Final(ClientError),
    Passing {
        status: u16,
        message: String,
        retry_after: Option<Duration>,
    },
}

/// The wait before attempt `attempt + 1`: 0.5 s, 1 s, 2 s, ... up to 30 s.
fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(500u64.saturating_mul(1 << attempt.saturating_sub(1).min(6)))
        .min(Duration::from_secs(30))
}

/// The innermost cause of a network error, which names what went wrong.
fn plain_reason(error: &reqwest::Error) -> String {
    let mut source: &dyn std::error::Error = error;
    while let Some(inner) = source.source() {
        source = inner;
    }
    source.to_string()
}

/// The `error.message` both APIs put in an error body, else the body cut short.
fn error_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| body.chars().take(200).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_a_ceiling() {
        assert_eq!(backoff(1), Duration::from_millis(500));
        assert_eq!(backoff(2), Duration::from_millis(1000));
        assert_eq!(backoff(3), Duration::from_millis(2000));
        assert_eq!(backoff(20), Duration::from_secs(30));
    }

    #[test]
    fn error_messages_are_taken_from_either_api_body() {
        assert_eq!(
            error_message(r#"{"error":{"message":"Incorrect API key"}}"#),
            "Incorrect API key"
        );
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "Overloaded"
        );
    }
}
