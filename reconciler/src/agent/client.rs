//! The model client: one chat turn with tool calling over HTTP, in either of the two wire
//! formats most endpoints speak — OpenAI's chat completions (OpenAI, Azure OpenAI, vLLM,
//! Ollama, the llama.cpp server) and Anthropic's Messages API.
//!
//! Conversations are kept in a neutral form ([`Message`], [`Part`]) and written in the
//! endpoint's format only when sent ([`request_body`]), so the same conversation can be
//! written to disk for a dry run. The HTTP transport ([`Client`], `http.rs`) is the `llm`
//! feature: failures that may pass (HTTP 429 and 5xx, a connection refused, a timeout) are
//! retried with exponential backoff, honouring `Retry-After`. A build without it has a
//! [`Client`] that cannot be made: [`Client::new`] refuses in words.

use super::AgentConfig;
#[cfg(not(feature = "llm"))]
use super::redact;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
#[cfg(not(feature = "llm"))]
use std::time::Instant;

#[cfg(feature = "llm")]
mod http;
#[cfg(feature = "llm")]
pub use http::Client;

/// Which wire format the endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Api {
    /// OpenAI's chat completions with `tools` (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp).
    Openai,
    /// Anthropic's Messages API with `tools`.
    Anthropic,
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// retrace: the task and the tools' results.
    User,
    /// The model.
    Assistant,
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// The model asks for a tool to run.
    ToolUse {
        /// The endpoint's id for the call.
        id: String,
        /// The tool's name.
        name: String,
        /// Its input object.
        input: Value,
    },
    /// A tool's result, answering the call with this id.
    ToolResult {
        /// The call's id.
        id: String,
        /// The result, as text.
        content: String,
    },
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    /// Its author.
    pub role: Role,
    /// Its pieces.
    pub parts: Vec<Part>,
}

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDef {
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The JSON schema of its input.
    pub schema: Value,
}

/// Tokens an endpoint counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens of the prompts sent.
    pub prompt_tokens: u64,
    /// Tokens the model wrote.
    pub completion_tokens: u64,
}

impl From<Usage> for knowledge::store::Tokens {
    fn from(usage: Usage) -> Self {
        Self {
            prompt: usage.prompt_tokens,
            completion: usage.completion_tokens,
        }
    }
}

impl Usage {
    /// Both counts added.
    pub fn total(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }

    /// Adds another count to this one.
    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
    }
}

/// The model's answer to one turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// Its text and tool calls, in order.
    pub parts: Vec<Part>,
    /// The tokens the turn cost: per direction, the endpoint's count or, when higher (or
    /// when the endpoint reports none), the estimate from the bytes sent and received.
    pub usage: Usage,
}

/// The tokens of a turn: per direction the higher of the endpoint's count and the estimate
/// from the bytes, so an endpoint that reports little or nothing cannot stretch a budget.
pub fn counted(reported: Usage, sent_bytes: usize, received_bytes: usize) -> Usage {
    let estimate = |bytes: usize| (bytes as u64).div_ceil(4);
    Usage {
        prompt_tokens: reported.prompt_tokens.max(estimate(sent_bytes)),
        completion_tokens: reported.completion_tokens.max(estimate(received_bytes)),
    }
}

/// A turn that could not be completed, in plain words.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The API key's environment variable is not set.
    #[error("the environment variable {0} that should hold the model's API key is not set")]
    MissingKey(String),
    /// The endpoint could not be reached at all.
    #[error("cannot reach the model at {endpoint}: {reason}")]
    Unreachable {
        /// The URL.
        endpoint: String,
        /// Why.
        reason: String,
    },
    /// The endpoint did not answer in time.
    #[error("the model at {endpoint} did not answer within {seconds} s")]
    Timeout {
        /// The URL.
        endpoint: String,
        /// The configured timeout.
        seconds: u64,
    },
    /// The endpoint refused the key (401, 403).
    #[error("the model endpoint refused the API key (HTTP {status}): {message}")]
    Refused {
        /// The HTTP status.
        status: u16,
        /// The endpoint's message.
        message: String,
    },
    /// The endpoint refused the request for another reason (4xx).
    #[error("the model endpoint refused the request (HTTP {status}): {message}")]
    Rejected {
        /// The HTTP status.
        status: u16,
        /// The endpoint's message.
        message: String,
    },
    /// The endpoint kept failing (429 or 5xx) after every retry.
    #[error(
        "the model endpoint kept failing after {attempts} attempts (last: HTTP {status}): {message}"
    )]
    Exhausted {
        /// Attempts made.
        attempts: u32,
        /// The last HTTP status.
        status: u16,
        /// The endpoint's last message.
        message: String,
    },
    /// The task's or the run's time ran out while waiting to retry or for a reply.
    #[error("the model endpoint did not answer before the agent's time ran out")]
    OutOfTime,
    /// The reply is larger than any reply within `max_tokens` can be.
    #[error("the model's reply is larger than {limit} bytes: refused unread")]
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The reply is not what the API returns.
    #[error("the model's reply is not a valid {api} response: {reason}")]
    Malformed {
        /// The API's name.
        api: &'static str,
        /// What was wrong.
        reason: String,
    },
    /// A model endpoint was configured in a build without the `llm` feature.
    #[error(
        "cannot send to the model at {0}: this build of retrace has no language-model client (the `llm` feature)"
    )]
    NoLlm(String),
}

/// A build without the `llm` feature has no client: none can be made.
#[cfg(not(feature = "llm"))]
pub enum Client {}

#[cfg(not(feature = "llm"))]
impl Client {
    /// Refuses: this build cannot send to a model endpoint.
    pub fn new(config: &AgentConfig) -> Result<Client, ClientError> {
        Err(ClientError::NoLlm(redact::url(&config.endpoint)))
    }

    /// Never runs: no client exists.
    pub async fn complete_by(
        &self,
        _system: &str,
        _messages: &[Message],
        _tools: &[ToolDef],
        _bounds: (Option<u64>, Instant),
    ) -> Result<Reply, ClientError> {
        match *self {}
    }
}

/// The request body for the configured API.
pub fn request_body(
    config: &AgentConfig,
    system: &str,
    messages: &[Message],
    tools: &[ToolDef],
) -> Value {
    match config.api {
        Api::Openai => openai_body(config, system, messages, tools),
        Api::Anthropic => anthropic_body(config, system, messages, tools),
    }
}

fn openai_body(
    config: &AgentConfig,
    system: &str,
    messages: &[Message],
    tools: &[ToolDef],
) -> Value {
    let mut out = vec![json!({"role": "system", "content": system})];
    for message in messages {
        out.extend(openai_messages(message));
    }
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| {
            json!({"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.schema}})
        })
        .collect();
    let mut body = json!({
        "model": config.model,
        "messages": out,
        "tools": tools,
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
    });
    if let Some(seed) = config.seed {
        body["seed"] = json!(seed);
    }
    body
}

/// One neutral message as OpenAI messages: tool results are messages of their own.
fn openai_messages(message: &Message) -> Vec<Value> {
    let text: String = message
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut out: Vec<Value> = message
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolResult { id, content } => {
                Some(json!({"role": "tool", "tool_call_id": id, "content": content}))
            }
            _ => None,
        })
        .collect();
    let calls: Vec<Value> = message
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolUse { id, name, input } => Some(json!({
                "id": id, "type": "function",
                "function": {"name": name, "arguments": input.to_string()}})),
            _ => None,
        })
        .collect();
    match message.role {
        Role::Assistant => {
            let mut m = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
            if !calls.is_empty() {
                m["tool_calls"] = json!(calls);
            }
            out.push(m);
        }
        Role::User if !text.is_empty() => out.push(json!({"role": "user", "content": text})),
        Role::User => {}
    }
    out
}

fn anthropic_body(
    config: &AgentConfig,
    system: &str,
    messages: &[Message],
    tools: &[ToolDef],
) -> Value {
    let messages: Vec<Value> = messages
        .iter()
        .map(|m| {
            let content: Vec<Value> = m
                .parts
                .iter()
                .map(|p| match p {
                    Part::Text { text } => json!({"type": "text", "text": text}),
                    Part::ToolUse { id, name, input } => {
                        json!({"type": "tool_use", "id": id, "name": name, "input": input})
                    }
                    Part::ToolResult { id, content } => {
                        json!({"type": "tool_result", "tool_use_id": id, "content": content})
                    }
                })
                .collect();
            json!({"role": m.role, "content": content})
        })
        .collect();
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.schema}))
        .collect();
    json!({
        "model": config.model,
        "system": system,
        "messages": messages,
        "tools": tools,
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
    })
}

/// Reads a reply in the configured API's format.
pub fn parse_reply(api: Api, body: &str) -> Result<Reply, ClientError> {
    let name = match api {
        Api::Openai => "chat completions",
        Api::Anthropic => "Anthropic Messages",
    };
    let malformed = |reason: String| ClientError::Malformed { api: name, reason };
    let value: Value =
        serde_json::from_str(body).map_err(|e| malformed(format!("not JSON ({e})")))?;
    match api {
        Api::Openai => openai_reply(&value).map_err(malformed),
        Api::Anthropic => anthropic_reply(&value).map_err(malformed),
    }
}

fn openai_reply(value: &Value) -> Result<Reply, String> {
    let message = value
        .pointer("/choices/0/message")
        .ok_or("no choices[0].message")?;
    let mut parts = Vec::new();
    if let Some(text) = message.get("content").and_then(Value::as_str)
        && !text.is_empty()
    {
        parts.push(Part::Text {
            text: text.to_owned(),
        });
    }
    for call in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .ok_or("a tool call without an id")?;
        let name = call
            .pointer("/function/name")
            .and_then(Value::as_str)
            .ok_or("a tool call without a function name")?;
        let arguments = call
            .pointer("/function/arguments")
            .and_then(Value::as_str)
            .unwrap_or("{}");
        let input = serde_json::from_str(arguments)
            .map_err(|e| format!("the arguments of tool call {name} are not JSON ({e})"))?;
        parts.push(Part::ToolUse {
            id: id.to_owned(),
            name: name.to_owned(),
            input,
        });
    }
    let usage = Usage {
        prompt_tokens: count(value, "/usage/prompt_tokens"),
        completion_tokens: count(value, "/usage/completion_tokens"),
    };
    Ok(Reply { parts, usage })
}

fn anthropic_reply(value: &Value) -> Result<Reply, String> {
    let content = value
        .get("content")
        .and_then(Value::as_array)
        .ok_or("no content array")?;
    let mut parts = Vec::new();
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => parts.push(Part::Text {
                text: block
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            }),
            Some("tool_use") => parts.push(Part::ToolUse {
                id: block
                    .get("id")
                    .and_then(Value::as_str)
                    .ok_or("a tool_use block without an id")?
                    .to_owned(),
                name: block
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or("a tool_use block without a name")?
                    .to_owned(),
                input: block.get("input").cloned().unwrap_or_else(|| json!({})),
            }),
            _ => {}
        }
    }
    let usage = Usage {
        prompt_tokens: count(value, "/usage/input_tokens"),
        completion_tokens: count(value, "/usage/output_tokens"),
    };
    Ok(Reply { parts, usage })
}

fn count(value: &Value, pointer: &str) -> u64 {
    value.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}

/// A rough token count of a text (a quarter of its bytes), to measure prompts the same way
/// whatever the endpoint.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_tool_calls_and_usage_are_read() {
        let body = r#"{"choices":[{"message":{"role":"assistant","content":null,
            "tool_calls":[{"id":"c1","type":"function","function":{"name":"show_schema","arguments":"{\"resource_type\":\"aws_sqs_queue\"}"}}]}}],
            "usage":{"prompt_tokens":120,"completion_tokens":9}}"#;
        let reply = parse_reply(Api::Openai, body).expect("reply");
        assert_eq!(
            reply.parts,
            vec![Part::ToolUse {
                id: "c1".into(),
                name: "show_schema".into(),
                input: json!({"resource_type": "aws_sqs_queue"})
            }]
        );
        assert_eq!(
            reply.usage,
            Usage {
                prompt_tokens: 120,
                completion_tokens: 9
            }
        );
    }

    #[test]
    fn anthropic_text_and_tool_use_are_read() {
        let body = r#"{"content":[{"type":"text","text":"Looking."},
            {"type":"tool_use","id":"t1","name":"read_file","input":{"path":"main.tf"}}],
            "stop_reason":"tool_use","usage":{"input_tokens":50,"output_tokens":7}}"#;
        let reply = parse_reply(Api::Anthropic, body).expect("reply");
        assert_eq!(reply.parts.len(), 2);
        assert_eq!(reply.usage.total(), 57);
    }

    #[test]
    fn a_malformed_reply_says_what_is_wrong() {
        let error = parse_reply(Api::Openai, "<html>").expect_err("not JSON");
        assert!(
            error.to_string().starts_with(
                "the model's reply is not a valid chat completions response: not JSON"
            )
        );
        let error = parse_reply(Api::Openai, r#"{"choices":[]}"#).expect_err("empty");
        assert!(
            error.to_string().ends_with("no choices[0].message"),
            "{error}"
        );
        let bad_args = r#"{"choices":[{"message":{"tool_calls":[{"id":"c","function":{"name":"x","arguments":"{"}}]}}]}"#;
        assert!(parse_reply(Api::Openai, bad_args).is_err());
    }

    #[test]
    fn tool_results_become_tool_messages_in_openai_form() {
        let message = Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                id: "c1".into(),
                content: "ok".into(),
            }],
        };
        assert_eq!(
            openai_messages(&message),
            vec![json!({"role": "tool", "tool_call_id": "c1", "content": "ok"})]
        );
    }
}
