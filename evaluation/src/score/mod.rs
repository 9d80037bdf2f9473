//! Scoring: gives the system under test each scenario with only what it would have in real
//! use (a copy of the project, the pre-drift state, the trail, and the cloud as a refresh
//! reports it) — retrace run in-process ([`crate::contender`]) or any program (`run
//! --system`, [`system`]) — and judges what it left, its patched files and its decisions
//! ([`report::Report`]), against the scenario's ground truth: the built-in checks
//! ([`checks`]) and the Terraform oracle ([`terraform`]); then pass@k and the other figures
//! ([`results`]).

pub mod baseline;
pub mod checks;
pub mod compare;
pub mod compare_agents;
pub mod fix_source;
pub mod hcl_scan;
pub mod importable;
pub mod passk;
pub mod provider;
pub mod report;
pub mod results;
pub mod system;
pub mod systems_table;
pub mod terraform;
pub mod tfplan;

use crate::contender::{Agent, Call, ContenderError, Outcome, Retrace, Spent, Task};
use crate::scenario::{ScenarioError, Stored, sha256_file};
use checks::{CheckResult, Evidence, Project, load, load_imported};
use fix_source::FixSource;
use knowledge::schema::ProviderSchema;
use reconciler::terraform::state::{Mode, State};
use serde::{Deserialize, Serialize};
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

pub use crate::contender::TrailCall;

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
    schema: &'static ProviderSchema,
    /// retrace, the system under test unless `system` names another.
    retrace: Retrace,
    prepared: HashMap<String, Prepared>,
    oracle: Option<TerraformOracle>,
    /// Time spent so far, per phase.
    pub phases: Phases,
    /// The released dataset the scenarios come from, when they do.
    dataset: Option<crate::dataset::Opened>,
    /// The command run as the system under test instead of retrace (`run --system`).
    system: Option<String>,
}

impl Scorer {
    /// A scorer for scenarios over the projects under `projects_root`
    /// (`fixtures/projects`), with the bundled rules, schema and the default policy.
    pub fn new(projects_root: &Path) -> Result<Scorer, ScoreError> {
        Ok(Scorer {
            projects_root: projects_root.to_owned(),
            schema: ProviderSchema::bundled().map_err(|e| ScoreError::Setup(e.to_string()))?,
            retrace: Retrace::new().map_err(|e| ScoreError::Setup(e.to_string()))?,
            prepared: HashMap::new(),
            oracle: None,
            phases: Phases::default(),
            dataset: None,
            system: None,
        })
    }

    /// Leaves these shipped rules (`service:Api`) out of every sample, besides those a
    /// scenario withholds itself.
    pub fn withholding(mut self, withhold: Vec<String>) -> Scorer {
        self.retrace.withholding(withhold);
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
        self.retrace.with_agent(agent, knowledge);
        self
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

    /// One reconciliation by retrace and its score, with retrace's outcome.
    pub fn sample(
        &mut self,
        stored: &Stored,
        calls: &[Call],
    ) -> Result<(Sample, Outcome), ScoreError> {
        let start = Instant::now();
        let scenario = &stored.scenario;
        let post_delta = stored.post()?;
        self.prepare(stored)?;
        let prepared = &self.prepared[&scenario.project];
        let post = post_delta.apply(&prepared.pre);
        let scratch = tempfile::tempdir().map_err(|source| ScoreError::Scratch {
            project: prepared.dir.clone(),
            source,
        })?;
        crate::files::copy_project(&prepared.dir, scratch.path()).map_err(|source| {
            ScoreError::Scratch {
                project: prepared.dir.clone(),
                source,
            }
        })?;
        let task = Task {
            id: &scenario.id,
            dir: scratch.path(),
            pre: &prepared.pre,
            observed: refreshed(&prepared.pre, &post),
            withhold: &scenario.withhold,
        };
        let ran = match self.retrace.run(calls, task) {
            Ok(ran) => ran,
            Err(ContenderError::Setup(message)) => return Err(ScoreError::Setup(message)),
            Err(error) => return Ok((failed_run(error.to_string(), start), Outcome::empty())),
        };
        self.phases.reconcile += since(start);
        let made = Made {
            report: ran.report,
            applied: ran.applied,
            key: ran.key,
            lines: ran.lines,
            at_source: ran.at_source,
            overrides: ran.overrides,
            spent: ran.spent,
        };
        let sample = self.judge(stored, &post, scratch.path(), made, start);
        Ok((sample, ran.outcome))
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
        crate::files::copy_project(&prepared.dir, &copy).map_err(|source| ScoreError::Scratch {
            project: prepared.dir.clone(),
            source,
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
            tokens: made.spent.tokens,
            prompt_tokens: made.spent.prompt_tokens,
            context_tokens: made.spent.context_tokens,
            fixed_by: made.spent.fixed_by,
            wall_ms: start.elapsed().as_secs_f64() * 1000.0,
            records: 0,
        }
    }

    /// The trail's out-of-band calls in time order, as retrace reads them.
    pub fn out_of_band(&self, trail: &Path) -> Result<Vec<Call>, ScoreError> {
        self.retrace
            .out_of_band(trail)
            .map_err(|e| trail_error(trail, e))
    }

    /// Every call of the trail with retrace's attribution, in time order.
    pub fn trail(&self, trail: &Path) -> Result<Vec<TrailCall>, ScoreError> {
        self.retrace.trail(trail).map_err(|e| trail_error(trail, e))
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

/// A trail retrace could not read, as the scorer reports it.
fn trail_error(trail: &Path, error: ContenderError) -> ScoreError {
    ScoreError::Trail {
        path: trail.to_owned(),
        message: error.to_string(),
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
