//! One reconciliation run, as every front end performs it: gather the out-of-band calls from
//! the sources, reconcile them with the project, learn rules for calls no rule explains and
//! re-check with them, then record the outcome in the knowledge base.
//!
//! `retrace reconcile`, `retrace demo` and the evaluation harness call [`run`]; they keep
//! only their own argument handling and printing.

use crate::agent::redact::Redactor;
use crate::agent::{self, Agent, AgentReport};
use crate::attribute::{Attributor, Verdict};
use crate::ingest::order::Holding;
use crate::ingest::{Call, Filter, Source};
use crate::learn::{self, Proposal};
use crate::ownership::OwnershipConfig;
use crate::pipeline::{self, InputSummary, PipelineError, Request};
use crate::policy::Policy;
use crate::reconcile::{Input, Outcome, Placed, ReconcileError, reconcile};
use crate::record::{self, Knowledge, RecordError, Recorded};
use crate::terraform::config::{self as tfconfig, LoadOptions};
use crate::terraform::state::State;
use crate::validate::{Sandbox, Validator};
use crate::vet;
use knowledge::rules::{Rule, RuleError, RuleSet};
use knowledge::schema::ProviderSchema;
use knowledge::signals::SignalSet;
use knowledge::store::AgentEvidence;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where the calls come from.
pub struct Trail<'a> {
    /// The sources, read in order.
    pub sources: &'a [Box<dyn Source>],
    /// Decides which calls are out of band.
    pub attributor: &'a Attributor,
    /// The window, accounts and regions.
    pub filter: Filter,
    /// Whether a trail with no record inside the window is acceptable (else an error: an
    /// all-clear nobody should trust).
    pub allow_empty: bool,
}

/// The project and the knowledge a run reconciles against.
pub struct Project<'a> {
    /// The root module directory.
    pub dir: &'a Path,
    /// `-var-file` arguments.
    pub var_files: Vec<PathBuf>,
    /// The state before the drift.
    pub state: State,
    /// A refreshed snapshot of the cloud, when at hand (needed to learn rules).
    pub observed: Option<State>,
    /// The project's accounts (empty: derived from the state).
    pub accounts: Vec<String>,
    /// The project's regions (empty: derived from the state).
    pub regions: Vec<String>,
    /// The rules, when no knowledge base is used (else the store's).
    pub rules: &'a RuleSet,
    /// The security signals.
    pub signals: &'a SignalSet,
    /// The provider schema.
    pub schema: &'a ProviderSchema,
    /// The policy.
    pub policy: &'a Policy,
    /// What marks a created resource as this workspace's.
    pub ownership: &'a OwnershipConfig,
    /// Makes the validators run after the built-in check, once per reconciliation.
    pub validators: &'a dyn Fn() -> Vec<Box<dyn Validator>>,
    /// Whether an edit may land in a module outside the root, which other roots may share.
    pub shared_module_edits: bool,
    /// The agent for calls no rule explains, when configured (it needs `observed`).
    pub agent: Option<&'a Agent>,
    /// The one scratch copy of the project every check of the run works in (made at its
    /// first use: `Sandbox::new(dir)`).
    pub sandbox: Sandbox,
}

/// What a run produced.
pub struct Ran {
    /// The reconciliation's outcome (with learned rules, when any validated).
    pub outcome: Outcome,
    /// What was read.
    pub input: InputSummary,
    /// What the record stage did, or why it failed; `None` without a knowledge base.
    pub recorded: Option<Result<Recorded, RecordError>>,
    /// Notes on learning, in words.
    pub notes: Vec<String>,
    /// What the agent did, when it ran.
    pub agent: Option<AgentReport>,
}

/// A run that could not finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Gathering the calls failed as a whole.
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    /// A source could not be read.
    #[error("{0}")]
    Source(String),
    /// The reconciliation failed.
    #[error(transparent)]
    Reconcile(#[from] ReconcileError),
    /// The knowledge base could not be read.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The learned rules did not combine with the others.
    #[error("the learned rules do not load: {0}")]
    Rules(#[from] RuleError),
}

/// Gathers the trail's out-of-band calls, reconciles, learns and re-checks, and records into
/// `knowledge` when given.
pub async fn run(
    trail: Trail<'_>,
    project: Project<'_>,
    knowledge: Option<&mut Knowledge>,
) -> Result<Ran, RunError> {
    let (calls, input) = gather(&trail).await?;
    let place = project.dir.display().to_string();
    reconcile_calls(&calls, input, &project, knowledge, Some(&place)).await
}

/// Reconciles calls gathered earlier (see [`gather`]) with the rules of `knowledge` when
/// given, learns and re-checks, and records the run under the name `record` when given.
pub async fn reconcile_calls(
    calls: &[Call],
    input: InputSummary,
    project: &Project<'_>,
    knowledge: Option<&mut Knowledge>,
    record: Option<&str>,
) -> Result<Ran, RunError> {
    let settled = settle(calls, project, knowledge.as_deref()).await?;
    let recorded = match (knowledge, record) {
        (Some(k), Some(workspace)) => {
            let tokens = settled.agent.as_ref().map(|a| a.usage).unwrap_or_default();
            Some(k.record(&settled.outcome, workspace, &settled.learned, tokens.into()))
        }
        _ => None,
    };
    Ok(Ran {
        outcome: settled.outcome,
        input,
        recorded,
        notes: settled.notes,
        agent: settled.agent,
    })
}

/// The out-of-band calls in time order and what was read.
pub async fn gather(trail: &Trail<'_>) -> Result<(Vec<Call>, InputSummary), RunError> {
    let request = Request {
        holding: Holding::Memory { records: false },
        ..Request::new(trail.filter.clone(), vec![Verdict::OutOfBand])
    };
    let gathered = pipeline::gather(trail.sources, trail.attributor, &request).await?;
    if let Some(error) = gathered.findings.errors.first() {
        return Err(RunError::Source(error.to_string()));
    }
    let (calls, input) = gathered.into_calls_and_input()?;
    if !trail.allow_empty {
        pipeline::require_records(&input, &trail.filter)?;
    }
    Ok((calls, input))
}

/// A reconciliation before recording: its outcome, notes on learning, the rules learned and
/// what the agent did.
pub struct Settled {
    /// The outcome, with the learned rules when any validated.
    pub outcome: Outcome,
    /// Notes on learning, in words.
    pub notes: Vec<String>,
    /// The rules learned (by the drift alone, or by the agent).
    pub learned: Vec<Proposal>,
    /// What the agent did, when it ran.
    pub agent: Option<AgentReport>,
}

/// Reconciles `calls`; with an observed cloud, proposes rules for the calls no rule
/// explains (from the drift, then by the agent when configured), and keeps the re-run with
/// them when they validated. `knowledge` gives the rules (else the project's) and the rules
/// retired before.
pub async fn settle(
    calls: &[Call],
    project: &Project<'_>,
    knowledge: Option<&Knowledge>,
) -> Result<Settled, RunError> {
    let mut settled = learn_from_drift(calls, project, knowledge)?;
    if let (Some(agent), Some(observed)) = (project.agent, &project.observed) {
        let until = Instant::now() + Duration::from_secs(agent.config().run_seconds);
        let base = knowledge.map_or(project.rules, Knowledge::rules);
        let rules = with_rules(base, &settled.learned)?;
        let learned: Vec<Rule> = settled.learned.iter().map(|p| p.rule.clone()).collect();
        let replaceable =
            |rule: &Rule| learned.contains(rule) || knowledge.is_some_and(|k| k.is_learned(rule));
        let (mut report, _) = ask_agent(
            agent,
            calls,
            project,
            (&settled.outcome, &rules),
            observed,
            (&replaceable, Phase::Explain, until),
        )
        .await;
        let mut found: Vec<Proposal> = report
            .validated()
            .map(|(task, rule)| Proposal {
                rule: rule.clone(),
                event_ids: task.event_ids.clone(),
                address: String::new(),
                agent: Some(AgentEvidence {
                    model: report.model.clone(),
                    prompt_tokens: task.usage.prompt_tokens,
                    completion_tokens: task.usage.completion_tokens,
                }),
            })
            .collect();
        // Two tasks may each validate a rule for one API (two calls of it the rules before
        // did not explain): the first is kept; calls it does not explain stay unexplained.
        let mut ids = std::collections::HashSet::new();
        found.retain(|p| ids.insert(p.rule.id()));
        let rules = with_rules(&rules, &found)?;
        if !found.is_empty() {
            settled.outcome = reconcile_with(calls, project, &rules)?;
            // The agent's rule replaces the drift learner's for the same API.
            settled
                .learned
                .retain(|p| !found.iter().any(|f| f.rule.id() == p.rule.id()));
            settled.learned.extend(found);
        }
        if agent.config().place && !settled.outcome.plan.unplanned.is_empty() {
            let spent = Phase::Place(report.usage.total());
            let (placing, placed) = ask_agent(
                agent,
                calls,
                project,
                (&settled.outcome, &rules),
                observed,
                (&replaceable, spent, until),
            )
            .await;
            if !placed.parts.is_empty() {
                settled.outcome = reconcile_placed(calls, project, &rules, Some(&placed))?;
            }
            report.usage.add(placing.usage);
            report.tasks.extend(placing.tasks);
        }
        settled.agent = Some(report);
    }
    Ok(settled)
}

/// What the agent is asked to do.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Explain the calls no rule explains, with rules.
    Explain,
    /// Place the parts the planner could not, with edits; the run's tokens spent so far.
    Place(u64),
}

/// `rules` with the proposals' rules added.
fn with_rules(rules: &RuleSet, proposals: &[Proposal]) -> Result<RuleSet, RuleError> {
    let added: Vec<Rule> = proposals.iter().map(|p| p.rule.clone()).collect();
    rules.with_replaced(&added)
}

/// Runs the agent on what `outcome` left unexplained, or on what its plan could not place.
async fn ask_agent(
    agent: &Agent,
    calls: &[Call],
    project: &Project<'_>,
    (outcome, rules): (&Outcome, &RuleSet),
    observed: &State,
    (replaceable, phase, until): (&dyn Fn(&Rule) -> bool, Phase, Instant),
) -> (AgentReport, Placed) {
    let options = LoadOptions {
        var_files: project.var_files.clone(),
        vars: Vec::new(),
        state: Some(&project.state),
    };
    let config = match tfconfig::Project::load(project.dir, &options) {
        Ok(config) => config,
        Err(e) => {
            tracing::warn!(error = %e, "the agent cannot read the configuration");
            return (AgentReport::default(), Placed::default());
        }
    };
    let redactor = Redactor::new(&[&project.state, observed], Some(&config), project.schema);
    let recheck = |with: &RuleSet| reconcile_with(calls, project, with);
    let replan = |placed: &Placed| reconcile_placed(calls, project, rules, Some(placed));
    let work = agent::Workspace {
        sources: agent::context::Sources {
            all_calls: calls,
            state: &project.state,
            observed,
            project: &config,
            schema: project.schema,
            rules,
            redactor: &redactor,
        },
        root: project.dir,
        sandbox: &project.sandbox,
        var_files: &project.var_files,
        recheck: &recheck,
        replaceable,
        replan: &replan,
        shared_module_edits: project.shared_module_edits,
        until,
    };
    match phase {
        Phase::Explain => (
            agent.explain(outcome, calls, &work).await,
            Placed::default(),
        ),
        Phase::Place(spent) => {
            let (placed, report) = agent.place(outcome, calls, &work, spent).await;
            (report, placed)
        }
    }
}

/// Reconciles, then with a knowledge base and an observed cloud proposes rules from the
/// drift for the calls no rule explains, keeping the re-run when every proposal validated.
fn learn_from_drift(
    calls: &[Call],
    project: &Project<'_>,
    knowledge: Option<&Knowledge>,
) -> Result<Settled, RunError> {
    let rules = knowledge.map_or(project.rules, Knowledge::rules);
    let mut outcome = reconcile_with(calls, project, rules)?;
    let mut notes = Vec::new();
    let mut learned = Vec::new();
    if let (Some(k), Some(observed)) = (knowledge, &project.observed) {
        let proposals = proposals(k, calls, &outcome, rules, project, observed)?;
        if !proposals.is_empty() {
            let with = RuleSet::from_rules(
                rules
                    .iter()
                    .cloned()
                    .chain(proposals.iter().map(|p| p.rule.clone())),
            )?;
            let trial = reconcile_with(calls, project, &with)?;
            let verdicts = record::rule_explains(&trial);
            let all_passed = trial.validations.iter().all(|v| v.passed);
            let (kept, refused): (Vec<Proposal>, Vec<Proposal>) = proposals
                .into_iter()
                .partition(|p| all_passed && verdicts.get(&p.rule.id()) == Some(&true));
            notes.extend(refused.iter().map(|p| {
                format!(
                    "a rule for {} proposed from the drift of {} did not validate: not learned",
                    p.rule.id(),
                    p.address
                )
            }));
            if !kept.is_empty() {
                outcome = trial;
                learned = kept;
            }
        }
    }
    Ok(Settled {
        outcome,
        notes,
        learned,
        agent: None,
    })
}

/// One reconciliation of `calls` with `rules`.
pub fn reconcile_with(
    calls: &[Call],
    project: &Project<'_>,
    rules: &RuleSet,
) -> Result<Outcome, ReconcileError> {
    reconcile_placed(calls, project, rules, None)
}

/// One reconciliation of `calls` with `rules` and edits made beside the planner.
pub fn reconcile_placed(
    calls: &[Call],
    project: &Project<'_>,
    rules: &RuleSet,
    placed: Option<&Placed>,
) -> Result<Outcome, ReconcileError> {
    reconcile(Input {
        project: project.dir,
        var_files: project.var_files.clone(),
        state: project.state.clone(),
        observed: project.observed.clone(),
        calls,
        rules,
        signals: project.signals,
        accounts: project.accounts.clone(),
        regions: project.regions.clone(),
        schema: project.schema,
        policy: project.policy,
        ownership: project.ownership,
        validators: (project.validators)(),
        shared_module_edits: project.shared_module_edits,
        placed,
        sandbox: Some(&project.sandbox),
    })
}

/// Rules proposed for calls without one, leaving out those rejected or demoted before.
fn proposals(
    knowledge: &Knowledge,
    calls: &[Call],
    outcome: &Outcome,
    rules: &RuleSet,
    project: &Project<'_>,
    observed: &State,
) -> Result<Vec<Proposal>, RunError> {
    let proposed = learn::propose(
        calls,
        &outcome.findings,
        rules,
        &project.state,
        observed,
        project.schema,
    );
    let mut out = Vec::new();
    for mut p in proposed {
        if knowledge.retired(&p.rule)? {
            continue;
        }
        match vet::harden(p.rule.clone(), rules, project.schema) {
            Ok(rule) => {
                p.rule = rule;
                out.push(p);
            }
            Err(reason) => {
                tracing::info!(rule = %p.rule.id(), %reason, "a rule proposed from the drift is refused");
            }
        }
    }
    Ok(out)
}
