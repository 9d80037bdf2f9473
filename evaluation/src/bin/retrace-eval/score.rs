//! `retrace-eval run` and `retrace-eval show`: score the stored scenarios.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use evaluation::dataset::{DatasetRef, Opened};
use evaluation::scenario::{Category, Stored, every_nth, load_all, spread};
use evaluation::score::baseline::Baseline;
use evaluation::score::compare_agents::Comparison;
use evaluation::score::results::{Results, ScenarioResult};
use evaluation::score::systems_table::SystemsTable;
use evaluation::score::terraform::TerraformOracle;
use evaluation::score::{Phases, Scorer, passk};
use indicatif::{ProgressBar, ProgressStyle};
use knowledge::rules::RuleSet;
use reconciler::agent::context::Style;
use reconciler::agent::{Agent, AgentConfig};
use reconciler::config::Config;
use serde_json::Value;

/// Exit code: every scenario passed (or, with --check-baseline, no regression).
pub const PASSED: u8 = 0;
/// Exit code: an error, or a scenario that passed in the baseline now fails.
pub const ERROR: u8 = 1;
/// Exit code: some scenarios failed.
pub const FAILED: u8 = 3;

/// Where the scenarios and projects are.
#[derive(Debug, Args)]
pub struct Place {
    /// The scenarios directory.
    #[arg(long, value_name = "DIR", default_value = "scenarios")]
    scenarios: PathBuf,
    /// The fixture projects the scenarios name.
    #[arg(long, value_name = "DIR", default_value_os_t = default_projects())]
    projects: PathBuf,
}

/// The fixture projects of this checkout.
pub fn default_projects() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/projects")
}

/// Output format of `run`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    /// A summary per category.
    Text,
    /// The whole results document.
    Json,
}

/// Who judges a patch in `run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Oracle {
    /// retrace-eval's own checks against the scenario's ground truth.
    Builtin,
    /// `terraform plan -refresh=false` of the patched project against the post-drift state,
    /// with the real AWS provider; the built-in checks still run, for the agreement matrix.
    Terraform,
}

/// Options of `retrace-eval run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    place: Place,
    /// The k of pass@k (at most n).
    #[arg(long, default_value_t = 3)]
    k: usize,
    /// Reconciliations per scenario.
    #[arg(long, default_value_t = 3)]
    n: usize,
    /// Only this project's scenarios.
    #[arg(long)]
    project: Option<String>,
    /// Only this category's scenarios.
    #[arg(long)]
    category: Option<String>,
    /// Only this scenario (repeatable).
    #[arg(long)]
    scenario: Vec<String>,
    /// A fixed stratified sample: within each project and category, every N-th scenario in id
    /// order (the first, the N+1-th, ...).
    #[arg(long, value_name = "N")]
    every: Option<usize>,
    /// A fixed sample of N scenarios spread evenly over categories and projects (smaller
    /// than `--every` can make: that takes at least one of each project and category); with
    /// `--every`, spread over the scenarios `--every` picks.
    #[arg(long, value_name = "N")]
    sample: Option<usize>,
    /// Who judges each patch.
    #[arg(long, value_enum, default_value_t = Oracle::Builtin)]
    oracle: Oracle,
    /// Score this command instead of retrace: run by `sh -c` once per sample, given a copy
    /// of the scenario's project to patch and the paths in RETRACE_PROJECT, RETRACE_STATE, RETRACE_TRAIL,
    /// RETRACE_OBSERVED and RETRACE_DECISIONS (README: "Scoring another system"). Repeatable:
    /// each system is scored on the same scenarios by the same judge, its whole results go to
    /// OUT/system-1, OUT/system-2, ... and results.json and results.md compare them.
    #[arg(long, value_name = "CMD", conflicts_with = "agent")]
    system: Vec<String>,
    /// Where results.json, results.md and chart.svg go.
    #[arg(long, value_name = "DIR", default_value = "target/eval")]
    out: PathBuf,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Worker threads (default: the machine's cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Score a released dataset (`retrace-eval dataset`'s export) instead of `--scenarios` and
    /// `--projects`: every file is checked against its manifest, trails are read as released.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["scenarios", "projects"])]
    dataset: Option<PathBuf>,
    /// Write the per-scenario pass/fail baseline to this file.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "evaluation/baseline.json")]
    write_baseline: Option<PathBuf>,
    /// Compare with this baseline: exit 1 listing scenarios that passed there and fail now;
    /// known failures and new scenarios are reported, not errors.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "evaluation/baseline.json")]
    check_baseline: Option<PathBuf>,
    #[command(flatten)]
    long_tail: LongTail,
}

/// The long tail: rules withheld, and the agent that explains what no rule does.
#[derive(Debug, Args)]
pub struct LongTail {
    /// A file with an `[agent]` table (a retrace.toml works): the agent explains the calls no
    /// rule does, as `retrace reconcile` does with that configuration and an observed state.
    #[arg(long, value_name = "FILE")]
    agent: Option<PathBuf>,
    /// Shipped rules to leave out (`service:Api`, separated by commas), so their calls are
    /// the long tail.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    withhold: Vec<String>,
    /// Only the scenarios whose trail calls an API whose rule is withheld.
    #[arg(long)]
    withheld_only: bool,
    /// A knowledge store every sample shares, so what one sample learns the later ones use
    /// (scenarios then run one at a time). Without it each sample starts from the shipped
    /// rules in a store of its own.
    #[arg(long, value_name = "FILE", requires = "agent")]
    knowledge: Option<PathBuf>,
    /// Run a naive baseline agent on the same scenarios too (the whole raw trail, every file
    /// whole, a plan-like listing of every changed resource) and compare: pass rates and
    /// prompt tokens side by side.
    #[arg(long, requires = "agent")]
    naive_baseline: bool,
}

/// How the scorers of a run are made.
#[derive(Clone)]
struct Setup {
    dataset: Option<Opened>,
    system: Option<String>,
    oracle: Oracle,
    withhold: Vec<String>,
    agent: Option<AgentConfig>,
    knowledge: Option<PathBuf>,
}

impl Setup {
    fn scorer(&self, projects: &Path) -> Result<Scorer> {
        let mut scorer = Scorer::new(projects)?.withholding(self.withhold.clone());
        if let Some(dataset) = &self.dataset {
            scorer = scorer.with_dataset(dataset.clone());
        }
        if let Some(command) = &self.system {
            scorer = scorer.with_system(command.clone());
        }
        if self.oracle == Oracle::Terraform {
            scorer = scorer.with_terraform()?;
        }
        if let Some(config) = &self.agent {
            scorer = scorer.with_agent(Agent::new(config.clone())?, self.knowledge.clone());
        }
        Ok(scorer)
    }
}

/// Options of `retrace-eval show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The scenario id.
    id: String,
    #[command(flatten)]
    place: Place,
}

/// Runs `retrace-eval run`.
pub fn run(mut args: RunArgs) -> Result<u8> {
    passk::pass_at_k(args.n, 0, args.k).context("--k and --n")?;
    let dataset = match &args.dataset {
        Some(dir) => {
            let opened = Opened::open(dir)?;
            opened.verify_small_files()?;
            args.place.scenarios = dir.join("scenarios");
            args.place.projects = dir.join("projects");
            Some(opened)
        }
        None => None,
    };
    let category = match &args.category {
        Some(name) => Some(Category::parse(name).with_context(|| {
            let names: Vec<&str> = Category::ALL.iter().map(|c| c.name()).collect();
            format!("unknown category {name}; one of {}", names.join(", "))
        })?),
        None => None,
    };
    let scenarios: Vec<Stored> = load_all(&args.place.scenarios)?
        .into_iter()
        .filter(|s| {
            args.project
                .as_ref()
                .is_none_or(|p| *p == s.scenario.project)
        })
        .filter(|s| category.is_none_or(|c| c == s.scenario.category))
        .filter(|s| args.scenario.is_empty() || args.scenario.contains(&s.scenario.id))
        .collect();
    let withhold = withheld(&args.long_tail.withhold)?;
    let scenarios = if args.long_tail.withheld_only {
        with_withheld_calls(scenarios, &withhold)?
    } else {
        scenarios
    };
    let scenarios = match args.every {
        Some(0) => bail!("--every takes a number of 1 or more"),
        Some(n) => every_nth(scenarios, n),
        None => scenarios,
    };
    let scenarios = match args.sample {
        Some(n) => spread(scenarios, n),
        None => scenarios,
    };
    if scenarios.is_empty() {
        bail!(
            "no scenarios under {} match",
            args.place.scenarios.display()
        );
    }
    let start = Instant::now();
    let mut jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if args.long_tail.knowledge.is_some() {
        // Samples learn in order from one store.
        jobs = 1;
    }
    let agent = match &args.long_tail.agent {
        Some(path) => Some(agent_config(path)?),
        None => None,
    };
    let reference = dataset.as_ref().map(Opened::reference);
    let setup = Setup {
        dataset,
        system: args.system.first().cloned(),
        oracle: args.oracle,
        withhold,
        agent,
        knowledge: args.long_tail.knowledge.clone(),
    };
    if args.system.len() > 1 {
        return compare_systems(&args, &scenarios, jobs, &setup, reference);
    }
    let results = score_run(&args, &scenarios, jobs, &setup, reference, start)?;
    write_outputs(&args.out, &results)?;
    match args.format {
        Format::Text => print!("{}", results.summary()),
        Format::Json => println!("{}", serde_json::to_string_pretty(&results)?),
    }
    eprintln!("{}", results.phase_line());
    eprintln!(
        "wrote results.json, results.md, results.html and chart.svg to {}",
        args.out.display()
    );
    if args.long_tail.naive_baseline {
        compare_with_naive(&args, &scenarios, jobs, &setup, &results)?;
    }
    if let Some(path) = &args.write_baseline {
        Baseline::of(&results).write(path)?;
        eprintln!("wrote the baseline to {}", path.display());
    }
    let mut code = exit_code(&results);
    if let Some(path) = &args.check_baseline {
        let sampled = args.project.is_some()
            || args.category.is_some()
            || !args.scenario.is_empty()
            || args.every.is_some()
            || args.sample.is_some()
            || args.long_tail.withheld_only;
        code = check_baseline(path, &results, sampled)?.max(if results.errors > 0 {
            ERROR
        } else {
            PASSED
        });
    }
    Ok(code)
}

/// Scores the scenarios as `setup` says and gathers the results, named after the system or
/// the planner.
fn score_run(
    args: &RunArgs,
    scenarios: &[Stored],
    jobs: usize,
    setup: &Setup,
    reference: Option<DatasetRef>,
    start: Instant,
) -> Result<Results> {
    let (scored, phases) = score_all(scenarios, &args.place.projects, args.n, args.k, jobs, setup)?;
    Ok(
        Results::new(args.n, args.k, scored, start.elapsed().as_secs_f64())
            .with_planner(&match &setup.system {
                Some(command) => format!("the system `{command}`"),
                None => planner(setup.agent.as_ref()),
            })
            .with_dataset(reference)
            .with_phases(phases),
    )
}

/// Scores every `--system` on the same scenarios by the same judge: each one's whole results
/// under OUT/system-N, the comparison in OUT/results.json and OUT/results.md. Exits as the
/// worst of them would alone.
fn compare_systems(
    args: &RunArgs,
    scenarios: &[Stored],
    jobs: usize,
    setup: &Setup,
    reference: Option<DatasetRef>,
) -> Result<u8> {
    if args.write_baseline.is_some() || args.check_baseline.is_some() {
        bail!(
            "a baseline is one system's: give --system once with --write-baseline or --check-baseline"
        );
    }
    let mut runs = Vec::new();
    for (i, command) in args.system.iter().enumerate() {
        let setup = Setup {
            system: Some(command.clone()),
            ..setup.clone()
        };
        let results = score_run(
            args,
            scenarios,
            jobs,
            &setup,
            reference.clone(),
            Instant::now(),
        )?;
        let folder = format!("system-{}", i + 1);
        write_outputs(&args.out.join(&folder), &results)?;
        eprintln!("{}\n  {}", results.planner, results.phase_line());
        runs.push((command.clone(), folder, results));
    }
    let table = SystemsTable::of(&runs);
    let mut json = serde_json::to_string_pretty(&table)?;
    json.push('\n');
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    write(&args.out.join("results.json"), &json)?;
    write(&args.out.join("results.md"), &table.markdown())?;
    match args.format {
        Format::Text => print!("{}", table.markdown()),
        Format::Json => print!("{json}"),
    }
    eprintln!(
        "wrote results.json and results.md comparing {} systems, and each one's results under system-N, to {}",
        runs.len(),
        args.out.display()
    );
    let codes: Vec<u8> = runs
        .iter()
        .map(|(_, _, results)| exit_code(results))
        .collect();
    Ok(if codes.contains(&ERROR) {
        ERROR
    } else if codes.contains(&FAILED) {
        FAILED
    } else {
        PASSED
    })
}

/// The exit code of a run's results: an error, some scenarios failed, or every one passed.
fn exit_code(results: &Results) -> u8 {
    if results.errors > 0 {
        ERROR
    } else if results.failing().next().is_some() {
        FAILED
    } else {
        PASSED
    }
}

/// The withheld rule ids, each checked against the bundled rules.
fn withheld(ids: &[String]) -> Result<Vec<String>> {
    let rules = RuleSet::bundled()?;
    let unknown: Vec<&str> = ids
        .iter()
        .filter(|id| !rules.iter().any(|r| &r.id() == *id))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        bail!(
            "--withhold: no shipped rule {} (rule ids are service:Api, as `retrace kb list` shows them)",
            unknown.join(", ")
        );
    }
    Ok(ids.to_vec())
}

/// The scenarios whose trail has a call whose shipped rule is withheld, by the run or by the
/// scenario itself.
fn with_withheld_calls(scenarios: Vec<Stored>, withhold: &[String]) -> Result<Vec<Stored>> {
    let rules = RuleSet::bundled()?;
    let mut kept = Vec::new();
    for stored in scenarios {
        let text = std::fs::read_to_string(stored.trail_path())
            .with_context(|| format!("cannot read {}", stored.trail_path().display()))?;
        let trail: Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not JSON", stored.trail_path().display()))?;
        let withheld =
            |id: String| withhold.contains(&id) || stored.scenario.withhold.contains(&id);
        let calls_one = trail["Records"].as_array().into_iter().flatten().any(|r| {
            let (source, api) = (r["eventSource"].as_str(), r["eventName"].as_str());
            source
                .zip(api)
                .and_then(|(source, api)| rules.find(source, api))
                .is_some_and(|rule| withheld(rule.id()))
        });
        if calls_one {
            kept.push(stored);
        }
    }
    Ok(kept)
}

/// The `[agent]` table of a configuration file.
fn agent_config(path: &Path) -> Result<AgentConfig> {
    let config = Config::load(path)?;
    config
        .agent
        .with_context(|| format!("{}: no [agent] table", path.display()))
}

/// The planner's name in the results: deterministic, or the agent's model and context style.
fn planner(agent: Option<&AgentConfig>) -> String {
    match agent {
        None => "deterministic".into(),
        Some(a) => format!(
            "deterministic, then the agent ({}, {} context)",
            a.model,
            a.context.name()
        ),
    }
}

/// Runs the naive baseline agent on the same scenarios, each sample in a store of its own,
/// and prints and writes both side by side.
fn compare_with_naive(
    args: &RunArgs,
    scenarios: &[Stored],
    jobs: usize,
    setup: &Setup,
    focused: &Results,
) -> Result<()> {
    let mut naive_setup = setup.clone();
    if let Some(agent) = &mut naive_setup.agent {
        agent.context = Style::Naive;
    }
    naive_setup.knowledge = None;
    let start = Instant::now();
    let (scored, _) = score_all(
        scenarios,
        &args.place.projects,
        args.n,
        args.k,
        jobs,
        &naive_setup,
    )?;
    let naive = Results::new(args.n, args.k, scored, start.elapsed().as_secs_f64())
        .with_planner(&planner(naive_setup.agent.as_ref()));
    let comparison = Comparison::of(focused, &naive);
    let out = &args.out;
    write(
        &out.join("naive-results.json"),
        &serde_json::to_string_pretty(&naive)?,
    )?;
    write(
        &out.join("comparison.json"),
        &serde_json::to_string_pretty(&comparison)?,
    )?;
    match args.format {
        Format::Text => print!("{}", comparison.text()),
        Format::Json => println!("{}", serde_json::to_string_pretty(&comparison)?),
    }
    Ok(())
}

/// Scores every scenario on `jobs` threads, each with its own scorer.
fn score_all(
    scenarios: &[Stored],
    projects: &Path,
    n: usize,
    k: usize,
    jobs: usize,
    setup: &Setup,
) -> Result<(Vec<ScenarioResult>, Phases)> {
    if setup.oracle == Oracle::Terraform {
        // Fails before any work when terraform is missing.
        TerraformOracle::new().map_err(anyhow::Error::msg)?;
    }
    let bar = ProgressBar::new(scenarios.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} scenarios {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let next = AtomicUsize::new(0);
    let mut phases = Phases::default();
    let slots: Mutex<Vec<Option<ScenarioResult>>> = Mutex::new(vec![None; scenarios.len()]);
    std::thread::scope(|scope| -> Result<()> {
        let mut workers = Vec::new();
        for _ in 0..jobs.max(1) {
            workers.push(scope.spawn(|| -> Result<Phases> {
                let mut scorer = setup.scorer(projects)?;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(stored) = scenarios.get(i) else {
                        return Ok(scorer.phases);
                    };
                    let result = match scorer.score(stored, n) {
                        Ok(samples) => ScenarioResult::new(&stored.scenario, &samples, k)?,
                        Err(error) => {
                            tracing::error!(scenario = %stored.scenario.id, %error, "cannot score");
                            ScenarioResult::error(&stored.scenario, n, &error.to_string())
                        }
                    };
                    bar.inc(1);
                    if let Ok(mut slots) = slots.lock() {
                        slots[i] = Some(result);
                    }
                }
            }));
        }
        for worker in workers {
            let spent = worker
                .join()
                .map_err(|_| anyhow::anyhow!("a scoring thread panicked"))??;
            phases.add(&spent);
        }
        Ok(())
    })?;
    bar.finish_and_clear();
    let slots = slots
        .into_inner()
        .map_err(|_| anyhow::anyhow!("a scoring thread panicked"))?;
    Ok((slots.into_iter().flatten().collect(), phases))
}

/// Writes results.json, results.md, results.html and chart.svg, each atomically.
fn write_outputs(out: &Path, results: &Results) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut json = serde_json::to_string_pretty(results)?;
    json.push('\n');
    write(&out.join("results.json"), &json)?;
    write(&out.join("results.md"), &results.markdown())?;
    write(&out.join("chart.svg"), &results.chart())?;
    write(&out.join("results.html"), &results.html())
}

fn write(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot rename to {}", path.display()))
}

/// Prints the comparison with the baseline; `ERROR` when a scenario regressed. When only some
/// scenarios were asked for (`sampled`), those of the baseline left out are counted, not listed.
fn check_baseline(path: &Path, results: &Results, sampled: bool) -> Result<u8> {
    let baseline = Baseline::read(path)?;
    let cmp = baseline.compare(results);
    let mut err = std::io::stderr().lock();
    for id in &cmp.new {
        writeln!(err, "new scenario (not in the baseline): {id}")?;
    }
    for id in &cmp.fixed {
        writeln!(err, "now passes (failed in the baseline): {id}")?;
    }
    if sampled && !cmp.missing.is_empty() {
        writeln!(
            err,
            "{} scenario(s) of the baseline not asked for in this run",
            cmp.missing.len()
        )?;
    } else {
        for id in &cmp.missing {
            writeln!(err, "in the baseline but not run: {id}")?;
        }
    }
    if cmp.regressions.is_empty() {
        writeln!(err, "no regressions against {}", path.display())?;
        return Ok(PASSED);
    }
    writeln!(
        err,
        "{} scenario(s) passed in {} and fail now:",
        cmp.regressions.len(),
        path.display()
    )?;
    for id in &cmp.regressions {
        let reasons = results
            .scenarios
            .iter()
            .find(|r| &r.id == id)
            .map(|r| r.reasons.join("; "))
            .unwrap_or_default();
        writeln!(err, "  {id}: {reasons}")?;
    }
    Ok(ERROR)
}

/// Runs `retrace-eval show`.
pub fn show(args: ShowArgs) -> Result<u8> {
    let stored = load_all(&args.place.scenarios)?
        .into_iter()
        .find(|s| s.scenario.id == args.id)
        .with_context(|| {
            format!(
                "no scenario {} under {}",
                args.id,
                args.place.scenarios.display()
            )
        })?;
    let mut scorer = Scorer::new(&args.place.projects)?;
    let trail = scorer.trail(&stored.trail_path())?;
    let merged = scorer.merged_trail(&stored)?;
    let calls = scorer.out_of_band(merged.path())?;
    let (sample, outcome) = scorer.sample(&stored, &calls)?;
    let s = &stored.scenario;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{} ({}, {}): {}",
        s.id, s.project, s.category, s.description
    )?;
    writeln!(out, "generator {} seed {}", s.generator, s.seed)?;
    writeln!(
        out,
        "the reconciler reads {} records: these {} and a background day\n\nTrail:",
        merged.records,
        trail.len()
    )?;
    for t in &trail {
        let c = &t.call;
        let failed = c
            .error_code
            .as_deref()
            .map_or(String::new(), |e| format!(" [{e}]"));
        writeln!(
            out,
            "  {} {} | {} | {}:{}{} | {}",
            c.event_time.format("%Y-%m-%d %H:%M:%S"),
            c.identity.actor(),
            c.client.label(),
            c.service(),
            c.api_name(),
            failed,
            t.attribution.verdict.name()
        )?;
    }
    writeln!(out, "\nReconciler:")?;
    out.write_all(reconciler::report::reconcile::text(&outcome).as_bytes())?;
    writeln!(out, "\nDiff:")?;
    if outcome.diff.is_empty() {
        writeln!(out, "  (none)")?;
    } else {
        out.write_all(outcome.diff.as_bytes())?;
    }
    writeln!(out, "\nChecks:")?;
    for check in &sample.checks {
        let verdict = if check.passed { "pass" } else { "FAIL" };
        writeln!(out, "  {verdict} {}", check.name)?;
        for reason in &check.reasons {
            writeln!(out, "       {reason}")?;
        }
    }
    let verdict = if sample.passed { "PASSED" } else { "FAILED" };
    writeln!(out, "\n{verdict} in {:.1} ms", sample.wall_ms)?;
    Ok(if sample.passed { PASSED } else { FAILED })
}
