//! retrace as the system under test, run in-process: the one part of the harness that runs the
//! product. It reads a trail as `retrace reconcile` reads files, reconciles a copy of the
//! project (with the agent and the drift learner when asked), writes the patch into the copy,
//! and gives what it did in the shape any system's run is judged in ([`Report`]: the files
//! it changed and its decisions), as `run --system` does for another program. The judges
//! under [`crate::score`] see that report, the patched files and the states, never the
//! product's own outcome.

mod fix_source;
mod report;

use crate::score::fix_source::FixSource;
use crate::score::report::Report;
use knowledge::rules::RuleSet;
use knowledge::schema::ProviderSchema;
use knowledge::signals::SignalSet;
use knowledge::store::Store;
use reconciler::attribute::{Attribution, Attributor, Verdict};
use reconciler::ingest::record::Origin;
use reconciler::ingest::{Filter, SourcesConfig, sources};
use reconciler::ownership::OwnershipConfig;
use reconciler::pipeline::{self, Request};
use reconciler::policy::{Policy, PolicyConfig};
use reconciler::record::{Knowledge, RecordError};
use reconciler::run;
use reconciler::terraform::state::State;
use reconciler::validate::Sandbox;
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub use reconciler::agent::Agent;
pub use reconciler::ingest::Call;
pub use reconciler::reconcile::Outcome;

/// retrace could not be run.
#[derive(Debug, thiserror::Error)]
pub enum ContenderError {
    /// The rules, signals or policy did not load, or a withheld rule is unknown.
    #[error("{0}")]
    Setup(String),
    /// The trail could not be read.
    #[error("{0}")]
    Trail(String),
    /// The reconciliation stopped with an error (a result of the run, not of the harness).
    #[error("the reconciler stopped: {0}")]
    Stopped(String),
}

/// A trail call with its attribution, for display.
pub struct TrailCall {
    /// The call.
    pub call: Call,
    /// Its verdict and reason.
    pub attribution: Attribution,
}

/// One scenario's project as retrace gets it, as it would have it in real use.
#[derive(Debug)]
pub struct Task<'a> {
    /// The scenario's id (names the run in a shared knowledge store).
    pub id: &'a str,
    /// The copy of the project retrace patches.
    pub dir: &'a Path,
    /// The state before the drift.
    pub pre: &'a State,
    /// The cloud as a refresh reports it now.
    pub observed: State,
    /// Shipped rules the scenario withholds (`service:Api`).
    pub withhold: &'a [String],
}

/// What one run of retrace did.
#[derive(Debug)]
pub struct Ran {
    /// retrace's own outcome (for `retrace-eval show`).
    pub outcome: Outcome,
    /// The files it changed and its decisions, as the judges read them.
    pub report: Report,
    /// `None` when it changed nothing; else whether its patch applied to the copy.
    pub applied: Option<Result<(), String>>,
    /// What identifies the patch (its diff).
    pub key: String,
    /// Lines added and removed.
    pub lines: (usize, usize),
    /// Edits at the value's source (variable, tfvars entry, module argument, the literal).
    pub at_source: usize,
    /// Overrides of an expression at the use site.
    pub overrides: usize,
    /// What the agent spent.
    pub spent: Spent,
}

/// What the agent spent on one run, and where the fix's rules came from.
#[derive(Debug, Clone, Default)]
pub struct Spent {
    /// Language-model tokens, prompts and completions.
    pub tokens: u64,
    /// Of those, the prompts'.
    pub prompt_tokens: u64,
    /// The agent's task contexts (first messages), estimated in tokens.
    pub context_tokens: u64,
    /// Where the rules behind the fix came from.
    pub fixed_by: BTreeSet<FixSource>,
}

/// The agent retrace is given, and where what it learns is kept.
struct AgentRun {
    agent: Agent,
    /// A knowledge store shared by every run (what one run learns, the next uses); without
    /// it each run starts from the shipped rules in a store of its own.
    knowledge: Option<PathBuf>,
}

/// retrace with the bundled rules, signals and schema and the default policy.
pub struct Retrace {
    rules: &'static RuleSet,
    signals: &'static SignalSet,
    schema: &'static ProviderSchema,
    policy: Policy,
    attributor: Attributor,
    runtime: tokio::runtime::Runtime,
    withhold: Vec<String>,
    agent: Option<AgentRun>,
}

impl Retrace {
    /// retrace as shipped.
    pub fn new() -> Result<Retrace, ContenderError> {
        let setup = |e: &dyn std::fmt::Display| ContenderError::Setup(e.to_string());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| setup(&e))?;
        Ok(Retrace {
            rules: RuleSet::bundled().map_err(|e| setup(&e))?,
            signals: SignalSet::bundled().map_err(|e| setup(&e))?,
            schema: ProviderSchema::bundled().map_err(|e| setup(&e))?,
            policy: Policy::new(PolicyConfig::default()).map_err(|e| setup(&e))?,
            attributor: Attributor::default(),
            runtime,
            withhold: Vec::new(),
            agent: None,
        })
    }

    /// Leaves these shipped rules (`service:Api`) out of every run, besides those a scenario
    /// withholds itself.
    pub fn withholding(&mut self, withhold: Vec<String>) {
        self.withhold = withhold;
    }

    /// Lets the agent explain what no rule does, learning into the store at `knowledge` when
    /// given (else into a fresh store per run).
    pub fn with_agent(&mut self, agent: Agent, knowledge: Option<PathBuf>) {
        self.agent = Some(AgentRun { agent, knowledge });
    }

    /// The trail's out-of-band calls in time order with their records' text, read as
    /// `retrace reconcile` reads files ([`run::gather`]); a malformed record is an error.
    pub fn out_of_band(&self, trail: &Path) -> Result<Vec<Call>, ContenderError> {
        let fail = |message: String| ContenderError::Trail(message);
        let (calls, input) = self.runtime.block_on(async {
            let sources = sources::open(&files(trail), None)
                .await
                .map_err(|e| fail(e.to_string()))?;
            let trail = run::Trail {
                sources: &sources,
                attributor: &self.attributor,
                filter: Filter::default(),
                allow_empty: true,
                records: true,
            };
            run::gather(&trail).await.map_err(|e| fail(e.to_string()))
        })?;
        if let Some(bad) = input.skipped_records.first() {
            let at = Origin {
                source: bad.source.as_str().into(),
                index: bad.index,
                offset: bad.offset,
            };
            return Err(fail(format!("{at}: {}", bad.reason)));
        }
        Ok(calls)
    }

    /// Every call of the trail with its attribution, in time order.
    pub fn trail(&self, trail: &Path) -> Result<Vec<TrailCall>, ContenderError> {
        let fail = |message: String| ContenderError::Trail(message);
        let request = Request::new(Filter::default(), Verdict::ALL.to_vec());
        let gathered = self.runtime.block_on(async {
            let sources = sources::open(&files(trail), None)
                .await
                .map_err(|e| fail(e.to_string()))?;
            pipeline::gather(&sources, &self.attributor, &request)
                .await
                .map_err(|e| fail(e.to_string()))
        })?;
        if let Some(error) = gathered.findings.errors.first() {
            return Err(fail(error.to_string()));
        }
        if let Some(bad) = gathered.findings.bad_records.first() {
            return Err(fail(format!("{}: {}", bad.origin, bad.reason)));
        }
        let mut ordered = gathered.calls;
        let mut out = Vec::new();
        while let Some((call, attribution)) =
            ordered.next_call().map_err(|e| fail(e.to_string()))?
        {
            out.push(TrailCall { call, attribution });
        }
        Ok(out)
    }

    /// Reconciles the task's copy with `calls` through [`run::run`] and writes the patch into
    /// it: with the agent, with the learner and the agent as `retrace reconcile` does with a
    /// knowledge base and an observed state, recording the run when the store is shared;
    /// without, one reconciliation with the rules.
    pub fn run(&self, calls: &[Call], task: Task<'_>) -> Result<Ran, ContenderError> {
        let withheld: Vec<String> = self.withhold.iter().chain(task.withhold).cloned().collect();
        let rules = match withheld.is_empty() {
            true => Cow::Borrowed(self.rules),
            false => Cow::Owned(without(self.rules, &withheld)?),
        };
        let rules = rules.as_ref();
        let no_validators = Vec::new;
        let ownership = OwnershipConfig::default();
        let project = reconciler::reconcile::Input {
            dir: task.dir,
            var_files: Vec::new(),
            state: task.pre.clone(),
            observed: Some(task.observed),
            accounts: Vec::new(),
            regions: Vec::new(),
            rules,
            signals: self.signals,
            schema: self.schema,
            policy: &self.policy,
            ownership: &ownership,
            validators: &no_validators,
            shared_module_edits: false,
            sandbox: Sandbox::new(task.dir),
        };
        let (outcome, spent) = self
            .settle(calls, project, rules, task.id)
            .map_err(ContenderError::Stopped)?;
        let applied = (!outcome.changes.is_empty()).then(|| {
            outcome
                .changes
                .apply(task.dir)
                .map_err(|e| format!("the patch does not apply: {e}"))
        });
        let at_source = outcome.plan.steps.iter().filter(|s| s.at_source).count();
        Ok(Ran {
            report: report::report(&outcome),
            applied,
            key: outcome.diff.clone(),
            lines: reconciler::patch::diff_size(&outcome.diff),
            at_source,
            overrides: outcome.plan.steps.len() - at_source,
            spent,
            outcome,
        })
    }

    /// One run of [`run::run`] and what it spent.
    fn settle(
        &self,
        calls: &[Call],
        project: reconciler::reconcile::Input<'_>,
        rules: &RuleSet,
        id: &str,
    ) -> Result<(Outcome, Spent), String> {
        let agent = self.agent.as_ref();
        let mut knowledge = match agent.map(|run| &run.knowledge) {
            None => None,
            Some(Some(path)) => Some(Knowledge::open_with(path, None, rules)),
            Some(None) => Some(
                Store::open_in_memory()
                    .map_err(RecordError::from)
                    .and_then(|store| Knowledge::from_store_with(store, rules)),
            ),
        }
        .transpose()
        .map_err(|e| e.to_string())?;
        let input = run::Input {
            project,
            agent: agent.map(|run| &run.agent),
            record: agent
                .and_then(|run| run.knowledge.as_ref())
                .map(|_| id.to_owned()),
        };
        let ran = self
            .runtime
            .block_on(run::run(calls, &input, knowledge.as_mut()))
            .map_err(|e| e.to_string())?;
        if let Some(Err(error)) = &ran.recorded {
            return Err(error.to_string());
        }
        let usage = ran.agent.as_ref().map(|a| a.usage).unwrap_or_default();
        let spent = Spent {
            tokens: usage.total(),
            prompt_tokens: usage.prompt_tokens,
            context_tokens: ran.agent.as_ref().map_or(0, |a| a.context_tokens()),
            fixed_by: fix_source::of(&ran.outcome, &ran.learned, rules),
        };
        Ok((ran.outcome, spent))
    }
}

/// The settings that read one trail file.
fn files(trail: &Path) -> SourcesConfig {
    SourcesConfig {
        files: vec![trail.to_owned()],
        ..SourcesConfig::default()
    }
}

/// The rules without those `withhold` names (`service:Api`, `sqs:SetQueueAttributes`): an
/// unknown name is an error, so a misspelt one cannot leave the rule in silently.
pub fn without(rules: &RuleSet, withhold: &[String]) -> Result<RuleSet, ContenderError> {
    if let Some(unknown) = withhold
        .iter()
        .find(|w| !rules.iter().any(|r| &r.id() == *w))
    {
        return Err(ContenderError::Setup(format!(
            "withhold names {unknown}, which no shipped rule covers (write service:Api)"
        )));
    }
    Ok(rules.without(withhold))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn withheld_rules_leave_the_set_and_unknown_names_are_refused() {
        let rules = RuleSet::bundled().expect("the shipped rules load");
        let fewer = without(rules, &["sqs:SetQueueAttributes".to_owned()]).expect("a known rule");
        assert_eq!(fewer.len(), rules.len() - 1);
        assert!(
            fewer
                .find("sqs.amazonaws.com", "SetQueueAttributes")
                .is_none()
        );
        assert!(fewer.find("sqs.amazonaws.com", "CreateQueue").is_some());
        let typo = without(rules, &["sqs:SetQueueAttribute".to_owned()]);
        assert!(
            matches!(typo, Err(ContenderError::Setup(m)) if m.contains("sqs:SetQueueAttribute"))
        );
    }
}
