//! `retrace-eval run` and `retrace-eval show`: score the stored scenarios.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use evaluation::scenario::{Category, Stored, load_all};
use evaluation::score::baseline::Baseline;
use evaluation::score::results::{Results, ScenarioResult};
use evaluation::score::terraform::TerraformOracle;
use evaluation::score::{Scorer, passk};
use indicatif::{ProgressBar, ProgressStyle};

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

fn default_projects() -> PathBuf {
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
    /// Only this scenario.
    #[arg(long)]
    scenario: Option<String>,
    /// A fixed stratified sample: within each project and category, every N-th scenario in id
    /// order (the first, the N+1-th, ...).
    #[arg(long, value_name = "N")]
    every: Option<usize>,
    /// Who judges each patch.
    #[arg(long, value_enum, default_value_t = Oracle::Builtin)]
    oracle: Oracle,
    /// Where results.json, results.md and chart.svg go.
    #[arg(long, value_name = "DIR", default_value = "target/eval")]
    out: PathBuf,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Worker threads (default: the machine's cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Write the per-scenario pass/fail baseline to this file.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "evaluation/baseline.json")]
    write_baseline: Option<PathBuf>,
    /// Compare with this baseline: exit 1 listing scenarios that passed there and fail now;
    /// known failures and new scenarios are reported, not errors.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "evaluation/baseline.json")]
    check_baseline: Option<PathBuf>,
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
pub fn run(args: RunArgs) -> Result<u8> {
    passk::pass_at_k(args.n, 0, args.k).context("--k and --n")?;
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
        .filter(|s| args.scenario.as_ref().is_none_or(|id| *id == s.scenario.id))
        .collect();
    let scenarios = match args.every {
        Some(0) => bail!("--every takes a number of 1 or more"),
        Some(n) => every_nth(scenarios, n),
        None => scenarios,
    };
    if scenarios.is_empty() {
        bail!(
            "no scenarios under {} match",
            args.place.scenarios.display()
        );
    }
    let start = Instant::now();
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let scored = score_all(
        &scenarios,
        &args.place.projects,
        args.n,
        args.k,
        jobs,
        args.oracle,
    )?;
    let results = Results::new(args.n, args.k, scored, start.elapsed().as_secs_f64());
    write_outputs(&args.out, &results)?;
    match args.format {
        Format::Text => print!("{}", results.summary()),
        Format::Json => println!("{}", serde_json::to_string_pretty(&results)?),
    }
    eprintln!(
        "wrote results.json, results.md and chart.svg to {}",
        args.out.display()
    );
    if let Some(path) = &args.write_baseline {
        Baseline::of(&results).write(path)?;
        eprintln!("wrote the baseline to {}", path.display());
    }
    let mut code = if results.errors > 0 {
        ERROR
    } else if results.failing().next().is_some() {
        FAILED
    } else {
        PASSED
    };
    if let Some(path) = &args.check_baseline {
        code = check_baseline(path, &results)?.max(if results.errors > 0 { ERROR } else { PASSED });
    }
    Ok(code)
}

/// Every `n`-th scenario of each project and category, in id order.
fn every_nth(mut scenarios: Vec<Stored>, n: usize) -> Vec<Stored> {
    scenarios.sort_by(|a, b| a.scenario.id.cmp(&b.scenario.id));
    let mut seen: std::collections::HashMap<(String, Category), usize> = Default::default();
    scenarios.retain(|s| {
        let at = seen
            .entry((s.scenario.project.clone(), s.scenario.category))
            .or_default();
        *at += 1;
        (*at - 1).is_multiple_of(n)
    });
    scenarios
}

/// Scores every scenario on `jobs` threads, each with its own scorer.
fn score_all(
    scenarios: &[Stored],
    projects: &Path,
    n: usize,
    k: usize,
    jobs: usize,
    oracle: Oracle,
) -> Result<Vec<ScenarioResult>> {
    if oracle == Oracle::Terraform {
        // Fails before any work when terraform is missing.
        TerraformOracle::new().map_err(anyhow::Error::msg)?;
    }
    let bar = ProgressBar::new(scenarios.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} scenarios {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<ScenarioResult>>> = Mutex::new(vec![None; scenarios.len()]);
    std::thread::scope(|scope| -> Result<()> {
        let mut workers = Vec::new();
        for _ in 0..jobs.max(1) {
            workers.push(scope.spawn(|| -> Result<()> {
                let mut scorer = Scorer::new(projects)?;
                if oracle == Oracle::Terraform {
                    scorer = scorer.with_terraform()?;
                }
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(stored) = scenarios.get(i) else {
                        return Ok(());
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
            worker
                .join()
                .map_err(|_| anyhow::anyhow!("a scoring thread panicked"))??;
        }
        Ok(())
    })?;
    bar.finish_and_clear();
    let slots = slots
        .into_inner()
        .map_err(|_| anyhow::anyhow!("a scoring thread panicked"))?;
    Ok(slots.into_iter().flatten().collect())
}

/// Writes results.json, results.md and chart.svg, each atomically.
fn write_outputs(out: &Path, results: &Results) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut json = serde_json::to_string_pretty(results)?;
    json.push('\n');
    write(&out.join("results.json"), &json)?;
    write(&out.join("results.md"), &results.markdown())?;
    write(&out.join("chart.svg"), &results.chart())
}

fn write(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot rename to {}", path.display()))
}

/// Prints the comparison with the baseline; `ERROR` when a scenario regressed.
fn check_baseline(path: &Path, results: &Results) -> Result<u8> {
    let baseline = Baseline::read(path)?;
    let cmp = baseline.compare(results);
    let mut err = std::io::stderr().lock();
    for id in &cmp.new {
        writeln!(err, "new scenario (not in the baseline): {id}")?;
    }
    for id in &cmp.fixed {
        writeln!(err, "now passes (failed in the baseline): {id}")?;
    }
    for id in &cmp.missing {
        writeln!(err, "in the baseline but not run: {id}")?;
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
