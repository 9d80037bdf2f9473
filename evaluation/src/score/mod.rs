//! Scoring: runs the reconciler as a library on each scenario with only what it would have in
//! real use (a copy of the project, the pre-drift state, the trail, and the cloud as a
//! refresh reports it), applies its patch to the copy, and checks the result against the
//! scenario's ground truth ([`checks`]); then pass@k and the other figures ([`results`]).

pub mod baseline;
pub mod checks;
pub mod compare;
pub mod compare_agents;
pub mod contenders;
pub mod fix_source;
pub mod hcl_scan;
pub mod passk;
pub mod report;
pub mod results;
pub mod retrace;
pub mod system;
pub mod terraform;
pub mod tfplan;

use crate::scenario::{ScenarioError, Stored, sha256_file};
use checks::{CheckResult, Evidence};
use fix_source::FixSource;
use knowledge::rules::RuleSet;
use knowledge::schema::ProviderSchema;
use knowledge::signals::SignalSet;
use knowledge::store::Store;
use reconciler::agent::Agent;
use reconciler::agent::client::Usage;
use reconciler::attribute::{Attribution, Attributor, Verdict};
use reconciler::ingest::record::Origin;
use reconciler::ingest::{Call, Filter, SourcesConfig, sources};
use reconciler::ownership::OwnershipConfig;
use reconciler::pipeline::{self, Request};
use reconciler::policy::{Policy, PolicyConfig};
use reconciler::reconcile::Input;
use reconciler::reconcile::Outcome;
use reconciler::record::{Knowledge, RecordError};
use reconciler::run;
use reconciler::terraform::config::{LoadOptions, Project};
use reconciler::terraform::state::{Mode, State};
use reconciler::validate::Sandbox;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;
use terraform::{TerraformOracle, TerraformVerdict};

/// Scoring could not run (as opposed to a scenario failing, which is a result).
#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    /// A scenario's files are unreadable or malformed.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The project's state changed since the scenario was generated.
    #[error(
        "{state}: its SHA-256 is {actual}, but scenario {id} was generated from {expected}; regenerate the scenarios (retrace-eval generate)"
    )]
    StaleBase {
        /// The scenario.
        id: String,
        /// The state file.
        state: PathBuf,
        /// The digest the scenario names.
        expected: String,
        /// The file's digest now.
        actual: String,
    },
    /// The unpatched project does not load.
    #[error("{project}: {message}")]
    Project {
        /// The project directory.
        project: PathBuf,
        /// Why.
        message: String,
    },
    /// The trail could not be read.
    #[error("{path}: {message}")]
    Trail {
        /// The trail file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The scratch copy could not be made.
    #[error("scratch copy of {project}: {source}")]
    Scratch {
        /// The project directory.
        project: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The rules, schema or policy did not load.
    #[error("{0}")]
    Setup(String),
    /// A released dataset's file is missing, unlisted or altered.
    #[error(transparent)]
    Dataset(#[from] crate::dataset::DatasetError),
}

/// The figures of one reconciliation of a scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Whether every check passed.
    pub passed: bool,
    /// Each check's verdict.
    pub checks: Vec<CheckResult>,
    /// Lines the patch adds.
    pub lines_added: usize,
    /// Lines the patch removes.
    pub lines_removed: usize,
    /// Edits at the value's source (variable, tfvars entry, module argument, the literal).
    pub at_source: usize,
    /// Overrides of an expression at the use site.
    pub overrides: usize,
    /// Language-model tokens spent (zero for the deterministic planner).
    pub tokens: u64,
    /// Of those, the tokens of the prompts sent.
    #[serde(default)]
    pub prompt_tokens: u64,
    /// The agent's task contexts (first messages), estimated in tokens.
    #[serde(default)]
    pub context_tokens: u64,
    /// Where the rules behind the changes the run absorbed came from (empty when it absorbed
    /// none, or for a system other than retrace).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub fixed_by: BTreeSet<FixSource>,
    /// Wall time of the reconciliation and its scoring, in milliseconds.
    pub wall_ms: f64,
    /// CloudTrail records the reconciler read: the scenario's trail and its background day.
    #[serde(default)]
    pub records: usize,
    /// Whether the built-in checks all passed (`passed` is Terraform's verdict when it judged).
    #[serde(default)]
    pub builtin_passed: bool,
    /// Terraform's verdict, when the oracle is Terraform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terraform: Option<TerraformVerdict>,
}

impl Sample {
    /// The failing checks' reasons, one per line, then Terraform's planned changes.
    pub fn reasons(&self) -> Vec<String> {
        let builtin = self
            .checks
            .iter()
            .filter(|c| !c.passed)
            .flat_map(|c| c.reasons.iter().map(move |r| format!("{}: {r}", c.name)));
        let terraform = self.terraform.iter().filter(|t| !t.passed).flat_map(|t| {
            t.changes
                .iter()
                .map(|c| format!("terraform plan: {c}"))
                .chain(t.error.iter().map(|e| format!("terraform: {e}")))
        });
        builtin.chain(terraform).collect()
    }
}

/// A trail call with its attribution, for display.
pub struct TrailCall {
    /// The call.
    pub call: Call,
    /// Its verdict and reason.
    pub attribution: Attribution,
}

/// A trail file as the reconciler reads it, kept while in use.
pub struct Trail {
    /// How many records it holds.
    pub records: usize,
    path: PathBuf,
    _dir: Option<tempfile::TempDir>,
}

impl Trail {
    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Seconds spent in each phase of scoring, summed over the scenarios a scorer ran (over
/// threads, so their sum can exceed the run's wall time).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    /// Reading each scenario's trail and post-drift state.
    pub read: f64,
    /// Building the background days.
    pub background: f64,
    /// Writing each merged trail where the reconciler reads it.
    pub merge: f64,
    /// The reconciler reading and attributing the trail (ingestion).
    pub ingest: f64,
    /// Copying the project and reconciling.
    pub reconcile: f64,
    /// Applying the patch, loading the patched code and judging it.
    pub judge: f64,
}

impl Phases {
    /// The two summed, phase by phase.
    pub fn add(&mut self, other: &Phases) {
        self.read += other.read;
        self.background += other.background;
        self.merge += other.merge;
        self.ingest += other.ingest;
        self.reconcile += other.reconcile;
        self.judge += other.judge;
    }

    /// Each phase with its name, in order.
    pub fn named(&self) -> [(&'static str, f64); 6] {
        [
            ("read", self.read),
            ("background", self.background),
            ("merge", self.merge),
            ("ingest", self.ingest),
            ("reconcile", self.reconcile),
            ("judge", self.judge),
        ]
    }
}

/// Seconds since `start`.
fn since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64()
}

/// CloudTrail records as JSON values.
type Records = Vec<serde_json::Value>;

/// What a system left for judging.
struct Made {
    /// Its files and decisions.
    report: report::Report,
    /// `None` when it changed nothing; else whether its patch applied.
    applied: Option<Result<(), String>>,
    /// What identifies the patch (its diff), so the oracle plans each patch once.
    key: String,
    /// Lines added and removed.
    lines: (usize, usize),
    /// Edits at the value's source.
    at_source: usize,
    /// Use-site overrides.
    overrides: usize,
    /// What an agent spent.
    spent: Spent,
}

/// What the scorer keeps per project: its directory, pre-drift state and evaluated code.
struct Prepared {
    dir: PathBuf,
    state_sha256: String,
    pre: State,
    original: Project,
}

/// Runs scenarios; one per worker thread (it caches each project's evaluated code).
pub struct Scorer {
    projects_root: PathBuf,
    rules: &'static RuleSet,
    signals: &'static SignalSet,
    schema: &'static ProviderSchema,
    policy: Policy,
    attributor: Attributor,
    runtime: tokio::runtime::Runtime,
    prepared: HashMap<String, Prepared>,
    oracle: Option<TerraformOracle>,
    withhold: Vec<String>,
    agent: Option<AgentRun>,
    /// Time spent so far, per phase.
    pub phases: Phases,
    /// The released dataset the scenarios come from, when they do.
    dataset: Option<crate::dataset::Opened>,
    /// The command run as the system under test instead of retrace (`run --system`).
    system: Option<String>,
}

/// What the agent spent on one sample, and where the fix's rules came from.
#[derive(Debug, Clone, Default)]
struct Spent {
    usage: Usage,
    context_tokens: u64,
    /// Where the rules behind the fix came from.
    fixed_by: BTreeSet<FixSource>,
}

/// The agent a scorer gives the reconciler, and where what it learns is kept.
struct AgentRun {
    agent: Agent,
    /// A knowledge store shared by every sample (what one sample learns, the next uses);
    /// without it each sample starts from the shipped rules in a store of its own.
    knowledge: Option<PathBuf>,
}

impl Scorer {
    /// A scorer for scenarios over the projects under `projects_root`
    /// (`fixtures/projects`), with the bundled rules, schema and the default policy.
    pub fn new(projects_root: &Path) -> Result<Scorer, ScoreError> {
        let setup = |e: &dyn std::fmt::Display| ScoreError::Setup(e.to_string());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| setup(&e))?;
        Ok(Scorer {
            projects_root: projects_root.to_owned(),
            rules: RuleSet::bundled().map_err(|e| setup(&e))?,
            signals: SignalSet::bundled().map_err(|e| setup(&e))?,
            schema: ProviderSchema::bundled().map_err(|e| setup(&e))?,
            policy: Policy::new(PolicyConfig::default()).map_err(|e| setup(&e))?,
            attributor: Attributor::default(),
            runtime,
            prepared: HashMap::new(),
            oracle: None,
            withhold: Vec::new(),
            agent: None,
            phases: Phases::default(),
            dataset: None,
            system: None,
        })
    }

    /// Leaves these shipped rules (`service:Api`) out of every sample, besides those a
    /// scenario withholds itself.
    pub fn withholding(mut self, withhold: Vec<String>) -> Scorer {
        self.withhold = withhold;
        self
    }

    /// Reads each scenario's whole trail from a released dataset (checked against its
    /// manifest) instead of building its background day.
    pub fn with_dataset(mut self, dataset: crate::dataset::Opened) -> Scorer {
        self.dataset = Some(dataset);
        self
    }

    /// Scores `command` (run by `sh -c`, as [`system`] describes) instead of retrace.
    pub fn with_system(mut self, command: String) -> Scorer {
        self.system = Some(command);
        self
    }

    /// Lets the agent explain what no rule does, learning into the store at `knowledge` when
    /// given (else into a fresh store per sample).
    pub fn with_agent(mut self, agent: Agent, knowledge: Option<PathBuf>) -> Scorer {
        self.agent = Some(AgentRun { agent, knowledge });
        self
    }

    /// The rules a scenario runs with: the bundled ones less those withheld.
    fn rules_for(
        &self,
        scenario: &crate::scenario::Scenario,
    ) -> Result<Cow<'static, RuleSet>, ScoreError> {
        let withheld: Vec<String> = self
            .withhold
            .iter()
            .chain(&scenario.withhold)
            .cloned()
            .collect();
        Ok(if withheld.is_empty() {
            Cow::Borrowed(self.rules)
        } else {
            Cow::Owned(without(self.rules, &withheld)?)
        })
    }

    /// Lets Terraform judge every sample (`passed` becomes its verdict; the built-in
    /// checks still run, for the agreement figures). Fails with the reason when `terraform`
    /// or the AWS provider cannot be found.
    pub fn with_terraform(mut self) -> Result<Scorer, ScoreError> {
        let oracle = TerraformOracle::new().map_err(ScoreError::Setup)?;
        self.oracle = Some(oracle);
        Ok(self)
    }

    /// Runs `n` reconciliations of the scenario and scores each.
    pub fn score(&mut self, stored: &Stored, n: usize) -> Result<Vec<Sample>, ScoreError> {
        let trail = self.merged_trail(stored)?;
        if let Some(command) = self.system.clone() {
            let mut samples = Vec::with_capacity(n);
            for _ in 0..n {
                let mut sample = self.system_sample(stored, trail.path(), &command)?;
                sample.records = trail.records;
                samples.push(sample);
            }
            return Ok(samples);
        }
        let start = Instant::now();
        let calls = self.out_of_band(trail.path())?;
        self.phases.ingest += since(start);
        let mut samples = Vec::with_capacity(n);
        for _ in 0..n {
            let mut sample = self.sample(stored, &calls)?.0;
            sample.records = trail.records;
            samples.push(sample);
        }
        Ok(samples)
    }

    /// The trail the reconciler reads: in a released dataset, the scenario's `trail.jsonl.gz`
    /// once checked against the manifest; otherwise its records and, when the scenario has a
    /// background day, the day's, shuffled together into one file.
    pub fn merged_trail(&mut self, stored: &Stored) -> Result<Trail, ScoreError> {
        if let Some(dataset) = &self.dataset {
            let start = Instant::now();
            let path = stored.dir.join(crate::dataset::TRAIL);
            let records = dataset.trail_records(&path)?;
            self.phases.read += since(start);
            return Ok(Trail {
                records,
                path,
                _dir: None,
            });
        }
        let (records, day) = self.records_and_day(stored)?;
        let Some((day, seed)) = day else {
            return Ok(Trail {
                records: records.len(),
                path: stored.trail_path(),
                _dir: None,
            });
        };
        let start = Instant::now();
        let write = || -> std::io::Result<(tempfile::TempDir, PathBuf, usize)> {
            let dir = tempfile::tempdir()?;
            let path = dir.path().join("trail.json");
            let file = std::fs::File::create(&path)?;
            let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
            let records = crate::generate::background::write_merged(records, day, seed, &mut out)?;
            std::io::Write::flush(&mut out)?;
            Ok((dir, path, records))
        };
        let (dir, path, records) = write().map_err(|e| ScoreError::Trail {
            path: stored.trail_path(),
            message: e.to_string(),
        })?;
        self.phases.merge += since(start);
        Ok(Trail {
            records,
            path,
            _dir: Some(dir),
        })
    }

    /// Every record the reconciler reads, in delivery order: the scenario's own and, when it
    /// has a background day, the day's, shuffled together.
    pub fn merged_records(
        &mut self,
        stored: &Stored,
    ) -> Result<Vec<serde_json::Value>, ScoreError> {
        let (records, day) = self.records_and_day(stored)?;
        Ok(match day {
            Some((day, seed)) => crate::generate::background::merge(records, day, seed),
            None => records,
        })
    }

    /// The scenario's own records and, when it has a background day, the day's records and
    /// the seed of their shuffle.
    fn records_and_day(
        &mut self,
        stored: &Stored,
    ) -> Result<(Records, Option<(Records, u64)>), ScoreError> {
        let start = Instant::now();
        let own = stored.trail_path();
        let fail = |message: String| ScoreError::Trail {
            path: own.clone(),
            message,
        };
        let bytes = std::fs::read(&own).map_err(|e| fail(e.to_string()))?;
        let mut doc: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| fail(e.to_string()))?;
        let records = match doc["Records"].take() {
            serde_json::Value::Array(records) => records,
            _ => return Err(fail("no Records list".to_owned())),
        };
        let Some(background) = stored.scenario.background else {
            self.phases.read += since(start);
            return Ok((records, None));
        };
        self.prepare(stored)?;
        let delta = stored.post()?;
        let drifted = delta
            .upserts
            .iter()
            .map(|i| i.address.clone())
            .chain(delta.removed.iter().cloned())
            .collect();
        let pre = &self.prepared[&stored.scenario.project].pre;
        self.phases.read += since(start);
        let start = Instant::now();
        let day = crate::generate::background::day(pre, &background, &drifted);
        self.phases.background += since(start);
        Ok((records, Some((day, background.seed))))
    }

    /// One reconciliation and its score, with the reconciler's outcome.
    pub fn sample(
        &mut self,
        stored: &Stored,
        calls: &[Call],
    ) -> Result<(Sample, Outcome), ScoreError> {
        let start = Instant::now();
        let scenario = &stored.scenario;
        let post_delta = stored.post()?;
        self.prepare(stored)?;
        let rules = self.rules_for(scenario)?;
        let rules = rules.as_ref();
        let (schema, policy) = (self.schema, &self.policy);
        let prepared = &self.prepared[&scenario.project];
        let post = post_delta.apply(&prepared.pre);
        let scratch = tempfile::tempdir().map_err(|source| ScoreError::Scratch {
            project: prepared.dir.clone(),
            source,
        })?;
        reconciler::validate::copy_project(&prepared.dir, scratch.path()).map_err(|source| {
            ScoreError::Scratch {
                project: prepared.dir.clone(),
                source,
            }
        })?;
        let no_validators = Vec::new;
        let ownership = OwnershipConfig::default();
        let project = Input {
            dir: scratch.path(),
            var_files: Vec::new(),
            state: prepared.pre.clone(),
            observed: Some(refreshed(&prepared.pre, &post)),
            accounts: Vec::new(),
            regions: Vec::new(),
            rules,
            signals: self.signals,
            schema,
            policy,
            ownership: &ownership,
            validators: &no_validators,
            shared_module_edits: false,
            sandbox: Sandbox::new(scratch.path()),
        };
        let result = self.settle(calls, project, rules, &scenario.id);
        let (outcome, spent) = match result {
            Ok(done) => done,
            Err(error) => {
                let reason = format!("the reconciler stopped: {error}");
                return Ok((failed_run(reason, start), Outcome::empty()));
            }
        };
        self.phases.reconcile += since(start);
        let applied = if outcome.changes.is_empty() {
            None
        } else {
            Some(
                outcome
                    .changes
                    .apply(scratch.path())
                    .map_err(|e| format!("the patch does not apply: {e}")),
            )
        };
        let at_source = outcome.plan.steps.iter().filter(|s| s.at_source).count();
        let made = Made {
            report: retrace::report(&outcome),
            applied,
            key: outcome.diff.clone(),
            lines: reconciler::patch::diff_size(&outcome.diff),
            at_source,
            overrides: outcome.plan.steps.len() - at_source,
            spent,
        };
        let sample = self.judge(stored, &post, scratch.path(), made, start);
        Ok((sample, outcome))
    }

    /// Runs the system under test (`run --system`) once on the scenario and scores what it
    /// left: the same checks and oracle as retrace's own runs.
    pub fn system_sample(
        &mut self,
        stored: &Stored,
        trail: &Path,
        command: &str,
    ) -> Result<Sample, ScoreError> {
        let start = Instant::now();
        let post_delta = stored.post()?;
        self.prepare(stored)?;
        let prepared = &self.prepared[&stored.scenario.project];
        let post = post_delta.apply(&prepared.pre);
        let scratch = tempfile::tempdir().map_err(|source| ScoreError::Scratch {
            project: prepared.dir.clone(),
            source,
        })?;
        let copy = scratch.path().join("project");
        reconciler::validate::copy_project(&prepared.dir, &copy).map_err(|source| {
            ScoreError::Scratch {
                project: prepared.dir.clone(),
                source,
            }
        })?;
        let inputs = system::Inputs {
            id: &stored.scenario.id,
            original: &prepared.dir,
            project: &copy,
            trail,
            observed: &refreshed(&prepared.pre, &post),
            work: scratch.path(),
        };
        let ran = system::run(command, &inputs);
        self.phases.reconcile += since(start);
        let ran = match ran {
            Ok(ran) => ran,
            Err(error) => return Ok(failed_run(format!("the system stopped: {error}"), start)),
        };
        let made = Made {
            applied: (!ran.report.changed.is_empty()).then_some(Ok(())),
            report: ran.report,
            key: ran.key,
            lines: ran.lines,
            at_source: 0,
            overrides: 0,
            spent: Spent::default(),
        };
        Ok(self.judge(stored, &post, &copy, made, start))
    }

    /// Judges what a system left in `dir`: loads the patched code, runs the checks and the
    /// oracle, and gives the sample.
    fn judge(
        &mut self,
        stored: &Stored,
        post: &State,
        dir: &Path,
        made: Made,
        start: Instant,
    ) -> Sample {
        let judging = Instant::now();
        let scenario = &stored.scenario;
        let prepared = &self.prepared[&scenario.project];
        // An empty patch leaves the code as it was: its evaluation is the original's.
        let patched = made
            .applied
            .map(|applied| applied.and_then(|()| load_imported(dir, &prepared.pre, post)));
        let evidence = Evidence {
            pre: &prepared.pre,
            post,
            original: &prepared.original,
            patched: match &patched {
                None => Ok(&prepared.original),
                Some(loaded) => loaded.as_ref().map_err(String::clone),
            },
            report: &made.report,
            expect: &scenario.expect,
            schema: self.schema,
        };
        let checks = checks::run(&evidence);
        let builtin_passed = checks.iter().all(|c| c.passed);
        let terraform = self
            .oracle
            .as_mut()
            .map(|o| o.judge(&scenario.id, &scenario.project, &made.key, dir, &evidence));
        self.phases.judge += since(judging);
        let (lines_added, lines_removed) = made.lines;
        Sample {
            passed: terraform.as_ref().map_or(builtin_passed, |t| t.passed),
            builtin_passed,
            terraform,
            checks,
            lines_added,
            lines_removed,
            at_source: made.at_source,
            overrides: made.overrides,
            tokens: made.spent.usage.total(),
            prompt_tokens: made.spent.usage.prompt_tokens,
            context_tokens: made.spent.context_tokens,
            fixed_by: made.spent.fixed_by,
            wall_ms: start.elapsed().as_secs_f64() * 1000.0,
            records: 0,
        }
    }

    /// Reconciles through [`run::run`]: with the agent, with the learner and the agent as
    /// `retrace reconcile` does with a knowledge base and an observed state, recording the run
    /// when the store is shared; without, one reconciliation with `rules`.
    fn settle(
        &self,
        calls: &[Call],
        project: Input<'_>,
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
        let spent = Spent {
            usage: ran.agent.as_ref().map(|a| a.usage).unwrap_or_default(),
            context_tokens: ran.agent.as_ref().map_or(0, |a| a.context_tokens()),
            fixed_by: fix_source::of(&ran.outcome, &ran.learned, rules),
        };
        Ok((ran.outcome, spent))
    }

    /// The trail's out-of-band calls in time order with their records' text, read as
    /// `retrace reconcile` reads files ([`run::gather`]); a malformed record is an error.
    pub fn out_of_band(&self, trail: &Path) -> Result<Vec<Call>, ScoreError> {
        let fail = |message: String| ScoreError::Trail {
            path: trail.to_owned(),
            message,
        };
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
    pub fn trail(&self, trail: &Path) -> Result<Vec<TrailCall>, ScoreError> {
        let fail = |message: String| ScoreError::Trail {
            path: trail.to_owned(),
            message,
        };
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

    /// Loads the project's state and evaluated code once, and checks the scenario was made
    /// from this state.
    fn prepare(&mut self, stored: &Stored) -> Result<(), ScoreError> {
        let name = &stored.scenario.project;
        if !self.prepared.contains_key(name) {
            let dir = self.projects_root.join(name);
            let state_path = dir.join("terraform.tfstate");
            let state_sha256 = sha256_file(&state_path)?;
            let pre = State::read(&state_path).map_err(ScenarioError::from)?;
            let original = load(&dir, &pre).map_err(|message| ScoreError::Project {
                project: dir.clone(),
                message,
            })?;
            self.prepared.insert(
                name.clone(),
                Prepared {
                    dir,
                    state_sha256,
                    pre,
                    original,
                },
            );
        }
        let prepared = &self.prepared[name];
        if prepared.state_sha256 != stored.scenario.base_state_sha256 {
            return Err(ScoreError::StaleBase {
                id: stored.scenario.id.clone(),
                state: prepared.dir.join("terraform.tfstate"),
                expected: stored.scenario.base_state_sha256.clone(),
                actual: prepared.state_sha256.clone(),
            });
        }
        Ok(())
    }
}

/// The settings that read one trail file.
fn files(trail: &Path) -> SourcesConfig {
    SourcesConfig {
        files: vec![trail.to_owned()],
        ..SourcesConfig::default()
    }
}

/// What `terraform plan -refresh-only` would report: the instances the state manages, with
/// their post-drift values; deleted ones gone, resources created out of band absent.
pub fn refreshed(pre: &State, post: &State) -> State {
    let mut out = pre.clone();
    out.instances = pre
        .instances
        .iter()
        .filter_map(|old| {
            if old.mode != Mode::Managed {
                return Some(old.clone());
            }
            post.instances
                .iter()
                .find(|i| i.address == old.address && i.deposed == old.deposed)
                .cloned()
        })
        .collect();
    out
}

/// The rules without those `withhold` names (`service:Api`, `sqs:SetQueueAttributes`): an
/// unknown name is an error, so a misspelt one cannot leave the rule in silently.
pub fn without(rules: &RuleSet, withhold: &[String]) -> Result<RuleSet, ScoreError> {
    if let Some(unknown) = withhold
        .iter()
        .find(|w| !rules.iter().any(|r| &r.id() == *w))
    {
        return Err(ScoreError::Setup(format!(
            "withhold names {unknown}, which no shipped rule covers (write service:Api)"
        )));
    }
    Ok(rules.without(withhold))
}

/// Loads a configuration with the pre-drift state; the error as text.
fn load(dir: &Path, state: &State) -> Result<Project, String> {
    let options = LoadOptions {
        state: Some(state),
        ..LoadOptions::default()
    };
    Project::load(dir, &options).map_err(|e| e.to_string())
}

/// Loads the patched configuration as `terraform plan` sees it: `import` blocks whose id names
/// a resource the drift created read that resource into the state first, so references to it
/// (`role = aws_iam_role.new.id`) evaluate to its values rather than unknown.
fn load_imported(dir: &Path, pre: &State, post: &State) -> Result<Project, String> {
    let project = load(dir, pre)?;
    let state = with_imports(&project, pre, post);
    if state.instances.len() == pre.instances.len() {
        return Ok(project);
    }
    load(dir, &state)
}

/// `state` with each resource the drift created (in `post`) that an `import` block of the
/// project names, at the block's address, as the state holds it once imported.
pub fn with_imports(project: &Project, state: &State, post: &State) -> State {
    let imports = hcl_scan::project_imports(project.files());
    let mut state = state.clone();
    for import in &imports {
        let known = |address: &str| state.instances.iter().any(|i| i.address == address);
        let created = post
            .instances
            .iter()
            .filter(|i| !known(&i.address))
            .find(|i| {
                i.mode == Mode::Managed
                    && import.id.as_deref().is_some_and(|id| checks::names(id, i))
                    && import.to.starts_with(&format!("{}.", i.resource_type))
            });
        if let (Some(created), false) = (created, known(&import.to)) {
            state.instances.push(imported(created, &import.to));
        }
    }
    state
}

/// A created cloud resource as the state holds it once imported at a root-module `address`.
fn imported(
    created: &reconciler::terraform::state::Instance,
    address: &str,
) -> reconciler::terraform::state::Instance {
    let mut instance = created.clone();
    instance.address = address.to_owned();
    instance.module = None;
    instance.index = None;
    instance.name = address.rsplit('.').next().unwrap_or(address).to_owned();
    instance
}

/// A sample whose reconciliation stopped with an error.
fn failed_run(reason: String, start: Instant) -> Sample {
    Sample {
        passed: false,
        checks: vec![CheckResult {
            name: "reconciles".into(),
            passed: false,
            reasons: vec![reason],
        }],
        lines_added: 0,
        lines_removed: 0,
        at_source: 0,
        overrides: 0,
        tokens: 0,
        prompt_tokens: 0,
        context_tokens: 0,
        fixed_by: BTreeSet::new(),
        wall_ms: start.elapsed().as_secs_f64() * 1000.0,
        records: 0,
        builtin_passed: false,
        terraform: None,
    }
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
        assert!(matches!(typo, Err(ScoreError::Setup(m)) if m.contains("sqs:SetQueueAttribute")));
    }
}
