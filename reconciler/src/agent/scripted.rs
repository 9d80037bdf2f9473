//! A scripted model on a loopback port: it answers chat-completions and Messages requests by
//! replaying recorded transcripts, and keeps every request body it received. Tests and the
//! evaluation use it where no model endpoint exists; the agent talks to it over HTTP exactly
//! as to a real endpoint.
//!
//! A transcript is the model's side of one task: the tool calls of each turn, then a closing
//! text. The server picks the transcript whose API the request's first message names (its
//! task line) and the turn by the number of assistant messages the request already holds,
//! so it keeps no conversation state. Token usage is estimated from the request and reply
//! sizes ([`estimate_tokens`]), the same measure for every prompt style.

use super::client::estimate_tokens;
use super::context::task_line_for;
use serde::Deserialize;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The model's side of one task.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transcript {
    /// `eventSource` of the task's API.
    pub event_source: String,
    /// The API.
    pub api: String,
    /// Whether the transcript places a change of the API the planner could not (default:
    /// it explains the API with a rule).
    #[serde(default)]
    pub place: bool,
    /// Per turn, the tool calls the model makes.
    pub turns: Vec<Vec<ScriptedCall>>,
    /// The text the model ends with once the turns are used up.
    #[serde(default = "closing")]
    pub closing: String,
}

fn closing() -> String {
    "I could not find a rule that validates.".to_owned()
}

/// One recorded tool call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// The tool.
    pub name: String,
    /// Its input.
    pub input: Value,
}

/// A reply the server gives instead of the transcript's, for the next request (to script
/// failures: 429 with `Retry-After`, 401, a malformed body).
#[derive(Debug, Clone, PartialEq)]
pub struct Canned {
    /// The HTTP status.
    pub status: u16,
    /// The body.
    pub body: String,
    /// A `Retry-After` header, in seconds.
    pub retry_after: Option<u64>,
}

/// A running scripted model.
pub struct ScriptedModel {
    addr: SocketAddr,
    bodies: Arc<Mutex<Vec<String>>>,
}

struct Shared {
    transcripts: Vec<Transcript>,
    canned: Mutex<Vec<Canned>>,
    bodies: Arc<Mutex<Vec<String>>>,
}

/// Reads every `*.json` transcript in a folder, in name order.
pub fn load_transcripts(dir: &Path) -> std::io::Result<Vec<Transcript>> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p)?;
            serde_json::from_str(&text).map_err(|e| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{}: {e}", p.display()),
                )
            })
        })
        .collect()
}

impl ScriptedModel {
    /// Listens on `addr` (port 0: any free port) and serves in a background thread.
    pub fn start(
        addr: &str,
        transcripts: Vec<Transcript>,
        canned: Vec<Canned>,
    ) -> std::io::Result<ScriptedModel> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::new(Shared {
            transcripts,
            canned: Mutex::new(canned),
            bodies: Arc::clone(&bodies),
        });
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let shared = Arc::clone(&shared);
                std::thread::spawn(move || {
                    if let Err(e) = serve(stream, &shared) {
                        tracing::debug!(error = %e, "scripted model connection failed");
                    }
                });
            }
        });
        Ok(ScriptedModel { addr, bodies })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The chat-completions URL.
    pub fn openai_url(&self) -> String {
        format!("http://{}/v1/chat/completions", self.addr)
    }

    /// The Messages URL.
    pub fn anthropic_url(&self) -> String {
        format!("http://{}/v1/messages", self.addr)
    }

    /// Every request body received so far.
    pub fn bodies(&self) -> Vec<String> {
        self.bodies.lock().map(|b| b.clone()).unwrap_or_default()
    }
}

fn serve(stream: TcpStream, shared: &Shared) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_owned();
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let body = String::from_utf8_lossy(&body).into_owned();
    if let Ok(mut bodies) = shared.bodies.lock() {
        bodies.push(body.clone());
    }
    let canned = shared
        .canned
        .lock()
        .ok()
        .and_then(|mut c| (!c.is_empty()).then(|| c.remove(0)));
    let reply = match canned {
        Some(canned) => canned,
        None => Canned {
            status: 200,
            body: answer(&path, &body, &shared.transcripts).to_string(),
            retry_after: None,
        },
    };
    respond(stream, &reply)
}

fn respond(mut stream: TcpStream, reply: &Canned) -> std::io::Result<()> {
    let retry = reply
        .retry_after
        .map(|s| format!("Retry-After: {s}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "HTTP/1.1 {} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{retry}Connection: close\r\n\r\n{}",
        reply.status,
        reply.body.len(),
        reply.body
    )?;
    stream.flush()
}

/// The reply to a request: the next turn of the transcript its task names.
fn answer(path: &str, body: &str, transcripts: &[Transcript]) -> Value {
    let anthropic = path.ends_with("/messages");
    let request: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let messages = request
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let first = messages
        .iter()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .map(first_text)
        .unwrap_or_default();
    let turn = messages
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
        .count();
    let task_line = first.lines().next().unwrap_or("");
    let transcript = transcripts
        .iter()
        .find(|t| task_line == task_line_for(t.place, &t.api, &t.event_source));
    let calls = transcript.and_then(|t| t.turns.get(turn));
    let text = transcript.map_or_else(closing, |t| t.closing.clone());
    let prompt_tokens = estimate_tokens(body);
    match (anthropic, calls) {
        (false, Some(calls)) => {
            let tool_calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    json!({"id": format!("call_{turn}_{i}"), "type": "function",
                    "function": {"name": c.name, "arguments": c.input.to_string()}})
                })
                .collect();
            let completion = estimate_tokens(&Value::Array(tool_calls.clone()).to_string());
            json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": null, "tool_calls": tool_calls}}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion}})
        }
        (false, None) => json!({"choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": estimate_tokens(&text)}}),
        (true, Some(calls)) => {
            let content: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(i, c)| json!({"type": "tool_use", "id": format!("toolu_{turn}_{i}"), "name": c.name, "input": c.input}))
                .collect();
            let completion = estimate_tokens(&Value::Array(content.clone()).to_string());
            json!({"type": "message", "role": "assistant", "content": content, "stop_reason": "tool_use",
                "usage": {"input_tokens": prompt_tokens, "output_tokens": completion}})
        }
        (true, None) => json!({"type": "message", "role": "assistant",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": prompt_tokens, "output_tokens": estimate_tokens(&text)}}),
    }
}

/// A message's text: its string content, or its first text block.
fn first_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .find_map(|b| b.get("text").and_then(Value::as_str))
            .unwrap_or("")
            .to_owned(),
        _ => String::new(),
    }
}
