//! A language-model client over HTTP with tool calling: the OpenAI-compatible chat completions
//! API (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp's server) and Anthropic's Messages API.
//! One conversation shape for both; timeouts, retries with backoff on 429 and 5xx (honouring
//! `Retry-After`), and the token counts of every reply.

use std::time::Duration;

use reqwest::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Which wire format the endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Api {
    /// `POST {endpoint}/chat/completions` with `tools` and `tool_calls`.
    Openai,
    /// `POST {endpoint}/v1/messages` with `tool_use` and `tool_result` blocks.
    Anthropic,
}

/// `[agent]` in `retrace.toml`: the model the agent asks. Off unless this section is present.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// The wire format.
    pub api: Api,
    /// The base URL (`https://api.openai.com/v1`, `http://localhost:11434/v1`,
    /// `https://api.anthropic.com`).
    pub endpoint: String,
    /// The model's name.
    pub model: String,
    /// The environment variable holding the key (none: no key is sent, as local servers
    /// allow).
    #[serde(default)]
    pub key_env: Option<String>,
    /// Sampling temperature (default 0: as deterministic as the endpoint allows).
    #[serde(default)]
    pub temperature: f64,
    /// A seed, for endpoints that honour one.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Most tokens one reply may hold (default 2048).
    #[serde(default = "reply_tokens")]
    pub max_reply_tokens: u32,
    /// Seconds before a request is given up (default 120).
    #[serde(default = "timeout_secs")]
    pub timeout_secs: u64,
    /// Attempts for a request that meets a rate limit or a server error (default 4).
    #[serde(default = "attempts")]
    pub attempts: u32,
}

fn reply_tokens() -> u32 {
    2048
}
fn timeout_secs() -> u64 {
    120
}
fn attempts() -> u32 {
    4
}

/// Why a request to the model failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The key's environment variable is not set.
    #[error("no key for the model: set the environment variable {0}")]
    NoKey(String),
    /// The request could not be sent or the answer not read (endpoint down, timeout).
    #[error("the model at {endpoint} could not be reached: {message}")]
    Transport {
        /// The endpoint.
        endpoint: String,
        /// Why.
        message: String,
    },
    /// The endpoint answered with an error status.
    #[error("the model at {endpoint} answered {status}: {message}")]
    Status {
        /// The endpoint.
        endpoint: String,
        /// The HTTP status.
        status: u16,
        /// The endpoint's message.
        message: String,
    },
    /// The answer did not have the expected shape.
    #[error("the model at {endpoint} gave an answer retrace cannot read: {message}")]
    Reply {
        /// The endpoint.
        endpoint: String,
        /// What was wrong.
        message: String,
    },
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tool {
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The JSON schema of its input.
    pub schema: Value,
}

/// A call of a tool the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUse {
    /// The call's id, echoed with its result.
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its input.
    pub input: Value,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Message {
    /// What retrace says.
    User(String),
    /// What the model said, and the tools it called.
    Assistant {
        /// Its text.
        text: String,
        /// Its tool calls.
        tool_uses: Vec<ToolUse>,
    },
    /// The result of a tool call.
    ToolResult {
        /// The call's id.
        id: String,
        /// The result, as text.
        content: String,
    },
}

/// Tokens a reply cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt (input) tokens.
    pub prompt: u64,
    /// Completion (output) tokens.
    pub completion: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.prompt += other.prompt;
        self.completion += other.completion;
    }
}

/// What the model answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// Its text.
    pub text: String,
    /// The tools it called.
    pub tool_uses: Vec<ToolUse>,
    /// What it cost.
    pub usage: Usage,
}

/// A conversation to send: the system prompt, the messages, the tools.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conversation {
    /// The system prompt.
    pub system: String,
    /// The messages so far.
    pub messages: Vec<Message>,
    /// The tools on offer.
    pub tools: Vec<Tool>,
}

/// A client for one configured model.
#[derive(Debug, Clone)]
pub struct ModelClient {
    config: AgentConfig,
    key: Option<String>,
    http: reqwest::Client,
}

impl ModelClient {
    /// A client for `config`, with its key read from the environment.
    pub fn new(config: &AgentConfig) -> Result<ModelClient, ClientError> {
        let key = match &config.key_env {
            Some(variable) => Some(
                std::env::var(variable)
                    .ok()
                    .filter(|k| !k.is_empty())
                    .ok_or_else(|| ClientError::NoKey(variable.clone()))?,
            ),
            None => None,
        };
        ModelClient::with_key(config, key)
    }

    /// A client for `config` sending `key` (none: no key, as local servers allow).
    pub fn with_key(config: &AgentConfig, key: Option<String>) -> Result<ModelClient, ClientError> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(config.timeout_secs))
            .build()
            .map_err(|e| ClientError::Transport {
                endpoint: config.endpoint.clone(),
                message: e.to_string(),
            })?;
        Ok(ModelClient {
            config: config.clone(),
            key,
            http,
        })
    }

    /// The model's name.
    pub fn model(&self) -> &str {
        &self.config.model
    }

    /// The request body for `conversation`, exactly as it is sent.
    pub fn body(&self, conversation: &Conversation) -> Value {
        match self.config.api {
            Api::Openai => openai_body(&self.config, conversation),
            Api::Anthropic => anthropic_body(&self.config, conversation),
        }
    }

    /// Sends `conversation` and reads the reply, retrying rate limits and server errors.
    pub async fn complete(&self, conversation: &Conversation) -> Result<Reply, ClientError> {
        let body = self.body(conversation);
        let base = self.config.endpoint.trim_end_matches('/');
        let url = match self.config.api {
            Api::Openai => format!("{base}/chat/completions"),
            Api::Anthropic => format!("{base}/v1/messages"),
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut request = self.http.post(&url).json(&body);
            request = match (self.config.api, &self.key) {
                (Api::Openai, Some(key)) => request.bearer_auth(key),
                (Api::Anthropic, Some(key)) => request.header("x-api-key", key),
                (_, None) => request,
            };
            if self.config.api == Api::Anthropic {
                request = request.header("anthropic-version", "2023-06-01");
            }
            let response = request.send().await.map_err(|e| self.transport(&e))?;
            let status = response.status();
            let retry = status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error();
            if retry && attempt < self.config.attempts {
                tokio::time::sleep(backoff(&response, attempt)).await;
                continue;
            }
            let text = response.text().await.map_err(|e| self.transport(&e))?;
            if !status.is_success() {
                return Err(ClientError::Status {
                    endpoint: self.config.endpoint.clone(),
                    status: status.as_u16(),
                    message: error_message(&text),
                });
            }
            let answer: Value =
                serde_json::from_str(&text).map_err(|e| self.reply(e.to_string()))?;
            return match self.config.api {
                Api::Openai => openai_reply(&answer),
                Api::Anthropic => anthropic_reply(&answer),
            }
            .map_err(|m| self.reply(m));
        }
    }

    fn transport(&self, e: &reqwest::Error) -> ClientError {
        ClientError::Transport {
            endpoint: self.config.endpoint.clone(),
            message: e.to_string(),
        }
    }

    fn reply(&self, message: String) -> ClientError {
        ClientError::Reply {
            endpoint: self.config.endpoint.clone(),
            message,
        }
    }
}

/// How long to wait before attempt `attempt + 1`: `Retry-After` (seconds, at most a minute),
/// else 1, 2, 4 ... seconds.
fn backoff(response: &reqwest::Response, attempt: u32) -> Duration {
    let asked = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    Duration::from_secs(asked.unwrap_or(1 << (attempt - 1).min(5)).min(60))
}

/// The endpoint's error message (`error.message`, `message`), else the text's start.
fn error_message(text: &str) -> String {
    let value: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    value
        .pointer("/error/message")
        .or_else(|| value.get("message"))
        .and_then(Value::as_str)
        .map_or_else(|| text.chars().take(300).collect(), str::to_owned)
}

fn openai_body(config: &AgentConfig, c: &Conversation) -> Value {
    let mut messages = vec![json!({"role": "system", "content": c.system})];
    for m in &c.messages {
        messages.push(match m {
            Message::User(text) => json!({"role": "user", "content": text}),
            Message::Assistant { text, tool_uses } => {
                let calls: Vec<Value> = tool_uses
                    .iter()
                    .map(|t| {
                        json!({"id": t.id, "type": "function",
                        "function": {"name": t.name, "arguments": t.input.to_string()}})
                    })
                    .collect();
                let mut message = json!({"role": "assistant", "content": text});
                if !calls.is_empty() {
                    message["tool_calls"] = Value::Array(calls);
                }
                message
            }
            Message::ToolResult { id, content } => {
                json!({"role": "tool", "tool_call_id": id, "content": content})
            }
        });
    }
    let tools: Vec<Value> = c
        .tools
        .iter()
        .map(|t| {
            json!({"type": "function", "function": {"name": t.name,
            "description": t.description, "parameters": t.schema}})
        })
        .collect();
    let mut body = json!({"model": config.model, "messages": messages, "tools": tools,
        "temperature": config.temperature, "max_tokens": config.max_reply_tokens});
    if let Some(seed) = config.seed {
        body["seed"] = json!(seed);
    }
    body
}

fn openai_reply(answer: &Value) -> Result<Reply, String> {
    let message = answer
        .pointer("/choices/0/message")
        .ok_or("no choices[0].message")?;
    let mut tool_uses = Vec::new();
    for call in message["tool_calls"].as_array().into_iter().flatten() {
        let arguments = call.pointer("/function/arguments").and_then(Value::as_str);
        tool_uses.push(ToolUse {
            id: call["id"].as_str().unwrap_or_default().to_owned(),
            name: call
                .pointer("/function/name")
                .and_then(Value::as_str)
                .ok_or("a tool call without a name")?
                .to_owned(),
            input: serde_json::from_str(arguments.unwrap_or("{}"))
                .map_err(|e| format!("tool call arguments: {e}"))?,
        });
    }
    Ok(Reply {
        text: message["content"].as_str().unwrap_or_default().to_owned(),
        tool_uses,
        usage: Usage {
            prompt: answer
                .pointer("/usage/prompt_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            completion: answer
                .pointer("/usage/completion_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
        },
    })
}

fn anthropic_body(config: &AgentConfig, c: &Conversation) -> Value {
    let mut messages: Vec<Value> = Vec::new();
    for m in &c.messages {
        let (role, block) = match m {
            Message::User(text) => ("user", vec![json!({"type": "text", "text": text})]),
            Message::Assistant { text, tool_uses } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                blocks.extend(tool_uses.iter().map(
                    |t| json!({"type": "tool_use", "id": t.id, "name": t.name, "input": t.input}),
                ));
                ("assistant", blocks)
            }
            Message::ToolResult { id, content } => (
                "user",
                vec![json!({"type": "tool_result", "tool_use_id": id, "content": content})],
            ),
        };
        // Consecutive messages of one role are one message to Anthropic.
        match messages.last_mut() {
            Some(last) if last["role"] == role => {
                if let Some(content) = last["content"].as_array_mut() {
                    content.extend(block);
                }
            }
            _ => messages.push(json!({"role": role, "content": block})),
        }
    }
    let tools: Vec<Value> = c
        .tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.schema}))
        .collect();
    json!({"model": config.model, "system": c.system, "messages": messages, "tools": tools,
        "temperature": config.temperature, "max_tokens": config.max_reply_tokens})
}

fn anthropic_reply(answer: &Value) -> Result<Reply, String> {
    let blocks = answer["content"].as_array().ok_or("no content blocks")?;
    let mut text = String::new();
    let mut tool_uses = Vec::new();
    for block in blocks {
        match block["type"].as_str() {
            Some("text") => text.push_str(block["text"].as_str().unwrap_or_default()),
            Some("tool_use") => tool_uses.push(ToolUse {
                id: block["id"].as_str().unwrap_or_default().to_owned(),
                name: block["name"]
                    .as_str()
                    .ok_or("a tool_use block without a name")?
                    .to_owned(),
                input: block["input"].clone(),
            }),
            _ => {}
        }
    }
    Ok(Reply {
        text,
        tool_uses,
        usage: Usage {
            prompt: answer
                .pointer("/usage/input_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            completion: answer
                .pointer("/usage/output_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A scripted loopback model: answers each request with the next (status, body) and keeps
    /// what it was sent (headers as `name: value` lines, then the body).
    /// What the scripted model was sent: headers and body of each request.
    type Seen = Arc<Mutex<Vec<(String, Value)>>>;

    fn scripted(answers: Vec<(u16, Value)>) -> (String, Seen) {
        let server = tiny_http::Server::http("127.0.0.1:0").expect("binds");
        let url = format!("http://{}", server.server_addr());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&seen);
        std::thread::spawn(move || {
            for (mut request, (status, body)) in server.incoming_requests().zip(answers) {
                let mut text = String::new();
                let _ = request.as_reader().read_to_string(&mut text);
                let headers: String = request
                    .headers()
                    .iter()
                    .map(|h| {
                        format!(
                            "{}: {}\n",
                            h.field.as_str().as_str().to_ascii_lowercase(),
                            h.value
                        )
                    })
                    .collect();
                let body_seen = serde_json::from_str(&text).unwrap_or(Value::Null);
                kept.lock().expect("lock").push((headers, body_seen));
                let retry = tiny_http::Header::from_bytes("Retry-After", "0").expect("header");
                let _ = request.respond(
                    tiny_http::Response::from_string(body.to_string())
                        .with_status_code(status)
                        .with_header(retry),
                );
            }
        });
        (url, seen)
    }

    fn config(api: Api, endpoint: &str) -> AgentConfig {
        AgentConfig {
            api,
            endpoint: endpoint.to_owned(),
            model: "test-model".into(),
            key_env: Some("RETRACE_TEST_MODEL_KEY".into()),
            temperature: 0.0,
            seed: Some(7),
            max_reply_tokens: 512,
            timeout_secs: 10,
            attempts: 3,
        }
    }

    fn client(api: Api, url: &str) -> ModelClient {
        ModelClient::with_key(&config(api, url), Some("not-a-real-key".into())).expect("client")
    }

    fn conversation() -> Conversation {
        Conversation {
            system: "You reconcile Terraform with AWS.".into(),
            messages: vec![
                Message::User("The call: PutRetentionPolicy".into()),
                Message::Assistant {
                    text: String::new(),
                    tool_uses: vec![ToolUse {
                        id: "call_1".into(),
                        name: "show_state".into(),
                        input: json!({"address": "aws_cloudwatch_log_group.app"}),
                    }],
                },
                Message::ToolResult {
                    id: "call_1".into(),
                    content: "retention_in_days = 14".into(),
                },
            ],
            tools: vec![Tool {
                name: "set_attribute".into(),
                description: "Set an attribute.".into(),
                schema: json!({"type": "object"}),
            }],
        }
    }

    #[tokio::test]
    async fn openai_tool_calls_are_read_after_a_rate_limit() {
        let answer = json!({"choices": [{"message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "call_2", "type": "function", "function": {"name": "set_attribute",
            "arguments": "{\"attribute\": \"retention_in_days\", \"value\": 30}"}}]}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 30}});
        let (url, seen) = scripted(vec![
            (429, json!({"error": {"message": "slow down"}})),
            (200, answer),
        ]);
        let client = client(Api::Openai, &url);
        let reply = client.complete(&conversation()).await.expect("a reply");
        assert_eq!(reply.tool_uses[0].name, "set_attribute");
        assert_eq!(reply.tool_uses[0].input["value"], 30);
        assert_eq!(
            reply.usage,
            Usage {
                prompt: 120,
                completion: 30
            }
        );
        let seen = seen.lock().expect("lock");
        assert_eq!(seen.len(), 2, "retried once");
        let (headers, body) = &seen[1];
        assert!(
            headers.contains("authorization: Bearer not-a-real-key"),
            "{headers}"
        );
        assert_eq!(body["model"], "test-model");
        assert_eq!(body["seed"], 7);
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["name"],
            "show_state"
        );
        assert_eq!(body["messages"][3]["role"], "tool");
        assert_eq!(body["tools"][0]["function"]["name"], "set_attribute");
    }

    #[tokio::test]
    async fn anthropic_blocks_are_read_and_sent_in_its_shape() {
        let answer = json!({"content": [{"type": "text", "text": "Setting it."},
            {"type": "tool_use", "id": "toolu_1", "name": "set_attribute",
             "input": {"attribute": "retention_in_days", "value": 30}}],
            "usage": {"input_tokens": 200, "output_tokens": 40}});
        let (url, seen) = scripted(vec![(200, answer)]);
        let client = client(Api::Anthropic, &url);
        let reply = client.complete(&conversation()).await.expect("a reply");
        assert_eq!(reply.text, "Setting it.");
        assert_eq!(reply.tool_uses[0].id, "toolu_1");
        assert_eq!(
            reply.usage,
            Usage {
                prompt: 200,
                completion: 40
            }
        );
        let seen = seen.lock().expect("lock");
        let (headers, body) = &seen[0];
        assert!(headers.contains("x-api-key: not-a-real-key"), "{headers}");
        assert!(
            headers.contains("anthropic-version: 2023-06-01"),
            "{headers}"
        );
        assert_eq!(body["system"], "You reconcile Terraform with AWS.");
        assert_eq!(body["messages"][1]["content"][0]["type"], "tool_use");
        assert_eq!(body["messages"][2]["content"][0]["type"], "tool_result");
        assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
    }

    #[tokio::test]
    async fn an_error_status_is_said_with_the_endpoints_message() {
        let (url, _) = scripted(vec![(
            401,
            json!({"error": {"message": "invalid api key"}}),
        )]);
        let client = client(Api::Openai, &url);
        let error = client
            .complete(&conversation())
            .await
            .expect_err("fails")
            .to_string();
        assert!(
            error.contains("401") && error.contains("invalid api key"),
            "{error}"
        );
    }

    #[test]
    fn a_missing_key_is_named() {
        let mut c = config(Api::Openai, "http://127.0.0.1:9");
        c.key_env = Some("RETRACE_TEST_MODEL_KEY_NEVER_SET".into());
        let error = ModelClient::new(&c).expect_err("no key").to_string();
        assert!(
            error.contains("RETRACE_TEST_MODEL_KEY_NEVER_SET"),
            "{error}"
        );
    }
}
