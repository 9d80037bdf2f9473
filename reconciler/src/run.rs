//! One reconciliation run, as every front end performs it: gather the out-of-band calls from
//! the sources, reconcile them with the project, learn rules for calls no rule explains and
//! re-check with them, then record the outcome in the knowledge base.
//!
//! `retrace reconcile`, `retrace demo`, `retrace nightly` (per workspace) and the evaluation
//! harness (per scenario) call [`gather`] and [`run`] with one [`Input`]; they keep only their
//! own argument handling and printing. A run loads the project once ([`Context`]): every
//! re-check (with learned rules, the agent's rules, its placements) borrows it.

use crate::agent::redact::Redactor;
use crate::agent::{self, Agent, AgentReport};
use crate::attribute::{Attributor, Verdict};
use crate::ingest::order::Holding;
use crate::ingest::{Call, Filter, Source};
use crate::learn::{self, Proposal};
use crate::pipeline::{self, InputSummary, PipelineError, Request};
use crate::reconcile::{self, Context, Outcome, Placed, ReconcileError};
use crate::record::{self, Knowledge, RecordError, Recorded};
use crate::terraform::state::State;
use crate::vet;
use knowledge::rules::{Rule, RuleError, RuleSet};
use knowledge::store::AgentEvidence;
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
    /// Whether the calls keep their record's text, most of a call's memory (the evaluation's
    /// naive baseline shows it to the model); else it is dropped as they are read.
    pub records: bool,
}

/// What a run reconciles against and does besides: the project and the knowledge, the agent,
/// and the name the outcome is recorded under.
pub struct Input<'a> {
    /// The project, its state and the knowledge, made ready once per run
    /// ([`reconcile::Context`]).
    pub project: reconcile::Input<'a>,
    /// The agent for calls no rule explains, when configured (it needs `project.observed`).
    pub agent: Option<&'a Agent>,
    /// The name the outcome is recorded under in the knowledge base given to [`run`]; `None`
    /// records nothing (the caller may record [`Ran::learned`] itself: nightly does, once the
    /// patch is written).
    pub record: Option<String>,
}

/// What a run produced.
pub struct Ran {
    /// The reconciliation's outcome (with learned rules, when any validated).
    pub outcome: Outcome,
    /// What the record stage did, or why it failed; `None` when nothing was recorded.
    pub recorded: Option<Result<Recorded, RecordError>>,
    /// Notes on learning, in words.
    pub notes: Vec<String>,
    /// The rules learned (by the drift alone, or by the agent).
    pub learned: Vec<Proposal>,
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

/// Reconciles `calls` (gathered by [`gather`]) with the project of `input`, loaded once for
/// the whole run; with an observed cloud, proposes rules for the calls no rule explains (from
/// the drift, then by the agent when configured) and keeps the re-check with them when they
/// validated; then records the outcome into `knowledge` when `input` names the record.
/// `knowledge` gives the rules (else the project's) and the rules retired before.
pub async fn run(
    calls: &[Call],
    input: &Input<'_>,
    knowledge: Option<&mut Knowledge>,
) -> Result<Ran, RunError> {
    let context = Context::new(&input.project)?;
    let mut ran = settle(calls, &context, input.agent, knowledge.as_deref()).await?;
    if let (Some(k), Some(name)) = (knowledge, &input.record) {
        let tokens = ran.agent.as_ref().map(|a| a.usage).unwrap_or_default();
        ran.recorded = Some(k.record(&ran.outcome, name, &ran.learned, tokens.into()));
    }
    Ok(ran)
}

/// The out-of-band calls in time order and what was read.
pub async fn gather(trail: &Trail<'_>) -> Result<(Vec<Call>, InputSummary), RunError> {
    let request = Request {
        holding: Holding::Memory {
            records: trail.records,
        },
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

/// [`run`] before recording: reconciles, learns from the drift, asks the agent, and re-checks
/// against the one `context`.
async fn settle(
    calls: &[Call],
    context: &Context<'_>,
    agent: Option<&Agent>,
    knowledge: Option<&Knowledge>,
) -> Result<Ran, RunError> {
    let mut settled = learn_from_drift(calls, context, knowledge)?;
    if let (Some(agent), Some(observed)) = (agent, &context.input().observed) {
        let until = Instant::now() + Duration::from_secs(agent.config().run_seconds);
        let base = knowledge.map_or(context.input().rules, Knowledge::rules);
        let rules = with_rules(base, &settled.learned)?;
        let learned: Vec<Rule> = settled.learned.iter().map(|p| p.rule.clone()).collect();
        let replaceable =
            |rule: &Rule| learned.contains(rule) || knowledge.is_some_and(|k| k.is_learned(rule));
        let (mut report, _) = ask_agent(
            agent,
            calls,
            context,
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
            settled.outcome = context.reconcile(calls, &rules, None)?;
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
                context,
                (&settled.outcome, &rules),
                observed,
                (&replaceable, spent, until),
            )
            .await;
            if !placed.parts.is_empty() {
                settled.outcome = context.reconcile(calls, &rules, Some(&placed))?;
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

/// What the agent is asked: which rules its own may replace, the phase, and the run's deadline.
type Asked<'a> = (&'a dyn Fn(&Rule) -> bool, Phase, Instant);

/// `rules` with the proposals' rules added.
fn with_rules(rules: &RuleSet, proposals: &[Proposal]) -> Result<RuleSet, RuleError> {
    let added: Vec<Rule> = proposals.iter().map(|p| p.rule.clone()).collect();
    rules.with_replaced(&added)
}

/// Runs the agent on what `outcome` left unexplained, or on what its plan could not place.
async fn ask_agent(
    agent: &Agent,
    calls: &[Call],
    context: &Context<'_>,
    (outcome, rules): (&Outcome, &RuleSet),
    observed: &State,
    (replaceable, phase, until): Asked<'_>,
) -> (AgentReport, Placed) {
    let (project, config) = (context.input(), context.project());
    let redactor = Redactor::new(&[&project.state, observed], Some(config), project.schema);
    let recheck = |with: &RuleSet| context.reconcile(calls, with, None);
    let replan = |placed: &Placed| context.reconcile(calls, rules, Some(placed));
    let work = agent::Workspace {
        sources: agent::context::Sources {
            all_calls: calls,
            state: &project.state,
            observed,
            project: config,
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
    context: &Context<'_>,
    knowledge: Option<&Knowledge>,
) -> Result<Ran, RunError> {
    let project = context.input();
    let rules = knowledge.map_or(project.rules, Knowledge::rules);
    let mut outcome = context.reconcile(calls, rules, None)?;
    let mut notes = Vec::new();
    let mut learned = Vec::new();
    if let (Some(k), Some(observed)) = (knowledge, &project.observed) {
        let proposals = proposals(k, calls, &outcome, rules, context, observed)?;
        if !proposals.is_empty() {
            let with = RuleSet::from_rules(
                rules
                    .iter()
                    .cloned()
                    .chain(proposals.iter().map(|p| p.rule.clone())),
            )?;
            let trial = context.reconcile(calls, &with, None)?;
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
    Ok(Ran {
        outcome,
        recorded: None,
        notes,
        learned,
        agent: None,
    })
}

/// Rules proposed for calls without one, leaving out those rejected or demoted before.
fn proposals(
    knowledge: &Knowledge,
    calls: &[Call],
    outcome: &Outcome,
    rules: &RuleSet,
    context: &Context<'_>,
    observed: &State,
) -> Result<Vec<Proposal>, RunError> {
    let schema = context.input().schema;
    let proposed = learn::propose(
        calls,
        &outcome.findings,
        rules,
        context.index(),
        observed,
        schema,
    );
    let mut out = Vec::new();
    for mut p in proposed {
        if knowledge.retired(&p.rule)? {
            continue;
        }
        match vet::harden(p.rule.clone(), rules, schema) {
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
