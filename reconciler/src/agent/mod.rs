//! The agent for the long tail: calls no rule explains (and the deterministic learner could
//! not either) are given, one API at a time, to a language model with tools. The model looks
//! at the code, state, schema and similar rules, and proposes a rule; retrace reconciles with
//! it and checks the patch against the observed cloud. A rule that validates is kept and
//! learned, so the same change costs no tokens the next time.
//!
//! Bounded: turns, tokens and wall time per task and per run. Private: every text sent
//! passes through [`redact::Redactor`]. Off unless `[agent]` is configured.

pub mod bench;
pub mod client;
pub mod context;
pub mod redact;
pub mod scripted;

use crate::ingest::Call;
use crate::reconcile::{Outcome, Placed, ReconcileError};
use crate::resolve::{FindingKind, Reach};
use crate::synthesize::edit::Files;
use crate::synthesize::plan::Unplanned;
use crate::validate::Sandbox;
use bench::{Bench, Recheck};
use client::{Api, Client, ClientError, Message, Part, Role, Usage, estimate_tokens};
use context::{Sources, Style, Task};
use knowledge::rules::Rule;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `[agent]` in `retrace.toml`: the model endpoint and the agent's bounds.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// The wire format: `openai` (chat completions) or `anthropic` (Messages).
    pub api: Api,
    /// The URL requests are posted to (`https://api.openai.com/v1/chat/completions`,
    /// `http://localhost:11434/v1/chat/completions`, `https://api.anthropic.com/v1/messages`).
    pub endpoint: String,
    /// The model's name.
    pub model: String,
    /// The environment variable holding the API key (none for a local server).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Sampling temperature (default 0).
    #[serde(default)]
    pub temperature: f64,
    /// A seed, for endpoints that honour one.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Tokens one reply may have (default 1024).
    #[serde(default = "defaults::max_tokens")]
    pub max_tokens: u32,
    /// Seconds one request may take (default 60).
    #[serde(default = "defaults::timeout_seconds")]
    pub timeout_seconds: u64,
    /// Retries of a request answered 429 or 5xx (default 3).
    #[serde(default = "defaults::retries")]
    pub retries: u32,
    /// Model turns per task (default 8).
    #[serde(default = "defaults::max_turns")]
    pub max_turns: u32,
    /// Tokens per task (default 40000).
    #[serde(default = "defaults::task_tokens")]
    pub task_tokens: u64,
    /// Tokens per run (default 200000).
    #[serde(default = "defaults::run_tokens")]
    pub run_tokens: u64,
    /// Seconds per task (default 300).
    #[serde(default = "defaults::task_seconds")]
    pub task_seconds: u64,
    /// Seconds per run (default 900).
    #[serde(default = "defaults::run_seconds")]
    pub run_seconds: u64,
    /// Attempts per task, each with its own seed, until one validates (default 1).
    #[serde(default = "defaults::samples")]
    pub samples: u32,
    /// The first message's style: `focused` (default) or `naive` (the evaluation's baseline).
    #[serde(default)]
    pub context: Style,
    /// Whether the agent also places the parts the planner could not (default true). A
    /// placement is not learned: a later run that needs it asks the model again.
    #[serde(default = "defaults::place")]
    pub place: bool,
}

mod defaults {
    pub fn place() -> bool {
        true
    }
    pub fn max_tokens() -> u32 {
        1024
    }
    pub fn timeout_seconds() -> u64 {
        60
    }
    pub fn retries() -> u32 {
        3
    }
    pub fn max_turns() -> u32 {
        8
    }
    pub fn task_tokens() -> u64 {
        40_000
    }
    pub fn run_tokens() -> u64 {
        200_000
    }
    pub fn task_seconds() -> u64 {
        300
    }
    pub fn run_seconds() -> u64 {
        900
    }
    pub fn samples() -> u32 {
        1
    }
}

/// How one task ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "result", content = "detail", rename_all = "kebab-case")]
pub enum TaskResult {
    /// A proposed rule validated.
    Validated,
    /// The model stopped without a rule that validated.
    GaveUp,
    /// A bound was reached (which one, in words).
    OverBudget(String),
    /// The endpoint failed (the reason, in words).
    Failed(String),
    /// A dry run: the prompt was written to this file instead of being sent.
    DryRun(String),
}

/// One task's record: the API, the result, the tokens.
#[derive(Debug, Clone, Serialize)]
pub struct TaskReport {
    /// `eventSource`.
    pub event_source: String,
    /// The API.
    pub api: String,
    /// The calls it covered.
    pub event_ids: Vec<String>,
    /// How it ended.
    pub result: TaskResult,
    /// Model turns taken, over every attempt.
    pub turns: u32,
    /// Attempts made.
    pub attempts: u32,
    /// Tokens the endpoint counted.
    pub usage: Usage,
    /// The size of the first prompt (system, tools and task message), estimated in tokens.
    pub first_prompt_tokens: u64,
    /// Of that, the task's context (the first message: calls, change, code, schema, similar
    /// rules), estimated in tokens: what the context style decides.
    pub context_tokens: u64,
    /// The rule that validated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<Rule>,
    /// Whether the task was to place a change the planner could not (else to explain an API).
    pub placement: bool,
    /// For a task to place a change: the edits that validated.
    #[serde(skip)]
    pub placed: Option<Placed>,
}

/// What the agent did in a run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AgentReport {
    /// The model's name.
    pub model: String,
    /// One entry per task.
    pub tasks: Vec<TaskReport>,
    /// Tokens over every task.
    pub usage: Usage,
}

impl AgentReport {
    /// The tasks' contexts (first messages) over the run, estimated in tokens.
    pub fn context_tokens(&self) -> u64 {
        self.tasks.iter().map(|t| t.context_tokens).sum()
    }

    /// The validated rules with the task that found each.
    pub fn validated(&self) -> impl Iterator<Item = (&TaskReport, &Rule)> {
        self.tasks
            .iter()
            .filter_map(|t| t.rule.as_ref().map(|r| (t, r)))
    }
}

/// The agent could not start.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The client could not be made (a missing key, a bad endpoint).
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The dry-run folder could not be written.
    #[error("cannot write the prompt to {}: {source}", path.display())]
    DryRun {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// A configured agent: its settings and either a client or a folder for dry runs.
pub struct Agent {
    config: AgentConfig,
    client: Option<Client>,
    dry_run: Option<PathBuf>,
}

/// Reconciles again with edits made beside the planner (supplied by the run).
pub type Replan<'a> = dyn Fn(&Placed) -> Result<Outcome, ReconcileError> + 'a;

/// What a run gives the agent besides the outcome.
pub struct Workspace<'a> {
    /// The context's sources.
    pub sources: Sources<'a>,
    /// The project root.
    pub root: &'a Path,
    /// The run's one scratch copy of the project, where `check_plan` tries edits.
    pub sandbox: &'a Sandbox,
    /// `-var-file` arguments.
    pub var_files: &'a [PathBuf],
    /// Reconciles again with a rule set.
    pub recheck: &'a Recheck<'a>,
    /// Whether a rule may be replaced when it reads no change from a call (rules the store
    /// learned; shipped rules are changed in their files).
    pub replaceable: &'a dyn Fn(&Rule) -> bool,
    /// Reconciles again with edits made beside the planner.
    pub replan: &'a Replan<'a>,
    /// Whether edits may land in modules outside the root.
    pub shared_module_edits: bool,
    /// The run's deadline (`run_seconds` from the run's start), which every phase, task and
    /// retry wait of the run shares.
    pub until: Instant,
}

impl Agent {
    /// An agent sending to the configured endpoint.
    pub fn new(config: AgentConfig) -> Result<Agent, AgentError> {
        let client = Client::new(&config)?;
        Ok(Agent {
            config,
            client: Some(client),
            dry_run: None,
        })
    }

    /// An agent that writes each task's first request into `dir` and sends nothing.
    pub fn dry_run(config: AgentConfig, dir: PathBuf) -> Agent {
        Agent {
            config,
            client: None,
            dry_run: Some(dir),
        }
    }

    /// The settings.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// Works on every API whose calls no rule explains and that touched a managed resource;
    /// stops at the run's bounds.
    pub async fn explain(
        &self,
        outcome: &Outcome,
        calls: &[Call],
        work: &Workspace<'_>,
    ) -> AgentReport {
        let mut report = AgentReport {
            model: self.config.model.clone(),
            ..AgentReport::default()
        };
        for task in tasks(outcome, calls, work.sources.rules, work.replaceable) {
            let spent = report.usage.total();
            let left = self.bounds(spent, work.until);
            let done = self
                .attempt_all(&task, work, left, work.sources.project.files())
                .await;
            report.usage.add(done.usage);
            report.tasks.push(done);
        }
        report
    }

    /// Works on the parts of intents the planner could not place, one intent at a time: the
    /// model edits a copy of the patched code, and edits that place the parts and pass the
    /// check are kept. Each task starts from the code as the tasks before it left it; `spent`
    /// tokens of the run are already used.
    pub async fn place(
        &self,
        outcome: &Outcome,
        calls: &[Call],
        work: &Workspace<'_>,
        spent: u64,
    ) -> (Placed, AgentReport) {
        let mut report = AgentReport {
            model: self.config.model.clone(),
            ..AgentReport::default()
        };
        let mut placed = Placed::default();
        let mut base = patched_files(work.sources.project, outcome);
        for task in placements(outcome, calls) {
            let left = self.bounds(spent + report.usage.total(), work.until);
            let done = self.attempt_all(&task, work, left, &base).await;
            if let Some(found) = &done.placed {
                let mut next = placed.clone();
                next.extend(found.clone());
                if let Ok(replanned) = (work.replan)(&next) {
                    base = patched_files(work.sources.project, &replanned);
                    placed = next;
                }
            }
            report.usage.add(done.usage);
            report.tasks.push(done);
        }
        (placed, report)
    }

    /// A task's bounds when the run has spent `spent` tokens: the task's tokens, or fewer
    /// when the run has fewer left; its turns; and the earlier of its own deadline and the
    /// run's.
    fn bounds(&self, spent: u64, run_until: Instant) -> Bounds {
        Bounds {
            tokens: self
                .config
                .run_tokens
                .saturating_sub(spent)
                .min(self.config.task_tokens),
            turns: self.config.max_turns,
            until: (Instant::now() + Duration::from_secs(self.config.task_seconds)).min(run_until),
        }
    }

    /// The seed of sample `sample` (0-based): the configured seed plus the sample, so no two
    /// samples of a task share one; with no seed configured, a single sample sends none.
    fn seed(&self, sample: u32) -> Option<u64> {
        match (self.config.seed, self.config.samples) {
            (Some(seed), _) => Some(seed.wrapping_add(u64::from(sample))),
            (None, 0 | 1) => None,
            (None, _) => Some(u64::from(sample)),
        }
    }

    async fn attempt_all(
        &self,
        task: &Task<'_>,
        work: &Workspace<'_>,
        bounds: Bounds,
        base: &Files,
    ) -> TaskReport {
        let mut report = TaskReport {
            event_source: task.event_source.to_owned(),
            api: task.api.to_owned(),
            event_ids: task.calls.iter().map(|c| c.event_id.clone()).collect(),
            result: TaskResult::GaveUp,
            turns: 0,
            attempts: 0,
            usage: Usage::default(),
            first_prompt_tokens: 0,
            context_tokens: 0,
            rule: None,
            placement: task.is_placement(),
            placed: None,
        };
        for sample in 0..self.config.samples.max(1) {
            report.attempts += 1;
            let left = Bounds {
                tokens: bounds.tokens.saturating_sub(report.usage.total()),
                turns: bounds.turns.saturating_sub(report.turns),
                until: bounds.until,
            };
            if left.turns == 0 || left.tokens == 0 || Instant::now() >= left.until {
                break;
            }
            let attempt = self
                .attempt(task, work, left, self.seed(sample), base)
                .await;
            report.turns += attempt.turns;
            report.usage.add(attempt.usage);
            report.first_prompt_tokens = attempt.first_prompt_tokens;
            report.context_tokens = attempt.context_tokens;
            report.result = attempt.result;
            report.rule = attempt.rule;
            report.placed = attempt.placed;
            if !matches!(report.result, TaskResult::GaveUp | TaskResult::Failed(_)) {
                break;
            }
        }
        report
    }

    /// One conversation, until a rule validates, the model stops, or a bound is reached.
    async fn attempt(
        &self,
        task: &Task<'_>,
        work: &Workspace<'_>,
        bounds: Bounds,
        seed: Option<u64>,
        base: &Files,
    ) -> Attempt {
        let system = context::system_prompt();
        let tools = bench::definitions();
        let first = context::first_message(self.config.context, task, &work.sources);
        let mut config = self.config.clone();
        config.seed = seed;
        let tools_text = serde_json::to_string(&tools).unwrap_or_default();
        let context_tokens = estimate_tokens(&first);
        let mut attempt = Attempt {
            first_prompt_tokens: estimate_tokens(&system)
                + estimate_tokens(&tools_text)
                + context_tokens,
            context_tokens,
            ..Attempt::default()
        };
        let mut messages = vec![Message {
            role: Role::User,
            parts: vec![Part::Text { text: first }],
        }];
        let redactor = work.sources.redactor;
        let system = redactor.text(&system);
        if let Some(dir) = &self.dry_run {
            attempt.result = write_prompt(
                dir,
                task,
                &client::request_body(&config, &system, &redactor.messages(&messages), &tools),
            );
            return attempt;
        }
        let Some(client) = &self.client else {
            attempt.result = TaskResult::Failed("no model endpoint".to_owned());
            return attempt;
        };
        let mut bench = Bench {
            sources: &work.sources,
            root: work.root,
            sandbox: work.sandbox,
            var_files: work.var_files,
            event_source: task.event_source,
            api: task.api,
            event_ids: task.calls.iter().map(|c| c.event_id.clone()).collect(),
            addresses: &task.addresses,
            recheck: work.recheck,
            files: base.clone(),
            place: task.is_placement().then_some(bench::PlaceCheck {
                parts: &task.place,
                replan: work.replan,
                shared: work.shared_module_edits,
            }),
        };
        loop {
            let outgoing = redactor.messages(&messages);
            let size = estimate_tokens(
                &client::request_body(&config, &system, &outgoing, &tools).to_string(),
            );
            if let Some(bound) = over(&attempt, &bounds, size) {
                attempt.result = TaskResult::OverBudget(bound);
                return attempt;
            }
            attempt.turns += 1;
            let reply = match client
                .complete_by(&system, &outgoing, &tools, (seed, bounds.until))
                .await
            {
                Ok(reply) => reply,
                Err(ClientError::OutOfTime) => {
                    attempt.result = TaskResult::OverBudget("ran out of time".to_owned());
                    return attempt;
                }
                Err(e) => {
                    attempt.result = TaskResult::Failed(redactor.text(&e.to_string()));
                    return attempt;
                }
            };
            attempt.usage.add(reply.usage);
            let uses: Vec<(String, String, serde_json::Value)> = reply
                .parts
                .iter()
                .filter_map(|p| match p {
                    Part::ToolUse { id, name, input } => {
                        Some((id.clone(), name.clone(), input.clone()))
                    }
                    _ => None,
                })
                .collect();
            messages.push(Message {
                role: Role::Assistant,
                parts: reply.parts,
            });
            if uses.is_empty() {
                attempt.result = TaskResult::GaveUp;
                return attempt;
            }
            let mut results = Vec::new();
            for (id, name, input) in uses {
                tracing::info!(tool = %name, api = task.api, "agent tool call");
                let output = bench.run(&name, &input);
                results.push(Part::ToolResult {
                    id,
                    content: work.sources.redactor.text(&output.text),
                });
                if let Some(rule) = output.validated {
                    attempt.rule = Some(rule);
                }
                if let Some(placed) = output.placed {
                    attempt.placed = Some(placed);
                }
            }
            if attempt.rule.is_some() || attempt.placed.is_some() {
                attempt.result = TaskResult::Validated;
                return attempt;
            }
            messages.push(Message {
                role: Role::User,
                parts: results,
            });
        }
    }
}

/// The tokens, turns and deadline left.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    tokens: u64,
    turns: u32,
    until: Instant,
}

/// One conversation's record.
#[derive(Debug)]
struct Attempt {
    result: TaskResult,
    turns: u32,
    usage: Usage,
    first_prompt_tokens: u64,
    context_tokens: u64,
    rule: Option<Rule>,
    placed: Option<Placed>,
}

impl Default for Attempt {
    fn default() -> Self {
        Attempt {
            result: TaskResult::GaveUp,
            turns: 0,
            usage: Usage::default(),
            first_prompt_tokens: 0,
            context_tokens: 0,
            rule: None,
            placed: None,
        }
    }
}

/// The bound a next turn, whose request is `request` tokens, would cross, in words.
fn over(attempt: &Attempt, bounds: &Bounds, request: u64) -> Option<String> {
    if attempt.turns >= bounds.turns {
        return Some(format!("used all {} turns the task had left", bounds.turns));
    }
    let used = attempt.usage.total();
    if used >= bounds.tokens {
        return Some(format!(
            "used {used} of the {} tokens allowed",
            bounds.tokens
        ));
    }
    if used + request > bounds.tokens {
        return Some(format!(
            "the next request ({request} tokens) would pass the {} tokens allowed ({used} used)",
            bounds.tokens
        ));
    }
    (Instant::now() >= bounds.until).then(|| "ran out of time".to_owned())
}

fn write_prompt(dir: &Path, task: &Task<'_>, body: &serde_json::Value) -> TaskResult {
    let name = format!(
        "{}-{}.json",
        task.event_source.split('.').next().unwrap_or("api"),
        task.api
    );
    let path = dir.join(name);
    let written = std::fs::create_dir_all(dir).and_then(|()| {
        std::fs::write(
            &path,
            serde_json::to_string_pretty(body).unwrap_or_default(),
        )
    });
    match written {
        Ok(()) => TaskResult::DryRun(path.display().to_string()),
        Err(e) => TaskResult::Failed(AgentError::DryRun { path, source: e }.to_string()),
    }
}

/// The tasks to place changes: per intent, the parts the planner could not place, with the
/// intent's calls and the addresses of those parts.
pub fn placements<'a>(outcome: &Outcome, calls: &'a [Call]) -> Vec<Task<'a>> {
    let mut out = Vec::new();
    for decided in &outcome.intents {
        let id = &decided.intent.id;
        let place: Vec<Unplanned> = outcome
            .plan
            .unplanned
            .iter()
            .filter(|u| &u.intent == id)
            .cloned()
            .collect();
        let ids: Vec<&str> = decided
            .intent
            .evidence
            .iter()
            .map(|e| e.event_id.as_str())
            .collect();
        let task_calls: Vec<&Call> = calls
            .iter()
            .filter(|c| ids.contains(&c.event_id.as_str()))
            .collect();
        let Some(first) = task_calls.first().filter(|_| !place.is_empty()) else {
            continue;
        };
        let mut addresses: Vec<String> = Vec::new();
        for part in &place {
            if !addresses.contains(&part.resource) {
                addresses.push(part.resource.clone());
            }
        }
        out.push(Task {
            event_source: &first.event_source,
            api: first.api_name(),
            calls: task_calls,
            addresses,
            current: None,
            place,
        });
    }
    out
}

/// The project's files with the outcome's patch applied.
fn patched_files(project: &crate::terraform::config::Project, outcome: &Outcome) -> Files {
    let mut files = project.files().clone();
    for (path, change) in outcome.changes.changed() {
        let path = path.to_string_lossy().into_owned();
        match &change.new {
            Some(text) => files.insert(path, text.clone()),
            None => files.remove(&path),
        };
    }
    files
}

/// The tasks of an outcome: per API with no rule, or whose replaceable rule read no change,
/// its unexplained calls that touched a managed resource, with the addresses they touched.
pub fn tasks<'a>(
    outcome: &Outcome,
    calls: &'a [Call],
    rules: &'a knowledge::rules::RuleSet,
    replaceable: &dyn Fn(&Rule) -> bool,
) -> Vec<Task<'a>> {
    let mut out: Vec<Task<'a>> = Vec::new();
    let findings = outcome
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::Unexplained && f.reach == Reach::Managed)
        .filter(|f| rules.find(&f.event_source, &f.api).is_none_or(replaceable));
    for finding in findings {
        let Some(call) = calls.iter().find(|c| c.event_id == finding.event_id) else {
            continue;
        };
        let addresses = finding.resources.iter().filter_map(|t| t.address.clone());
        let index = match out
            .iter()
            .position(|t| t.event_source == call.event_source && t.api == call.api_name())
        {
            Some(i) => i,
            None => {
                out.push(Task {
                    event_source: &call.event_source,
                    api: call.api_name(),
                    calls: Vec::new(),
                    addresses: Vec::new(),
                    current: rules.find(&call.event_source, call.api_name()),
                    place: Vec::new(),
                });
                out.len() - 1
            }
        };
        let task = &mut out[index];
        task.calls.push(call);
        for address in addresses {
            if !task.addresses.contains(&address) {
                task.addresses.push(address);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// A build without the `llm` feature refuses an agent that would send to an endpoint,
    /// naming it (without its password) and the feature.
    #[cfg(not(feature = "llm"))]
    #[test]
    fn without_the_llm_feature_an_agent_cannot_send() {
        let config: super::AgentConfig = toml::from_str(
            "api = \"openai\"\nendpoint = \"https://u:p4ss@example.com/v1\"\nmodel = \"m\"",
        )
        .expect("config");
        let Err(error) = super::Agent::new(config) else {
            panic!("an agent was made");
        };
        assert_eq!(
            error.to_string(),
            "cannot send to the model at https://u:[redacted]@example.com/v1: this build of \
             retrace has no language-model client (the `llm` feature)"
        );
    }
}
