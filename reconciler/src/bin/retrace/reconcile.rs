//! `retrace reconcile` and `retrace demo`: from a trail and a Terraform project to a
//! validated patch.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;

use knowledge::rules::RuleSet;
use knowledge::schema::ProviderSchema;
use reconciler::attribute::{Attributor, Verdict};
use reconciler::config::Config;
use reconciler::pipeline::{self, Request};
use reconciler::policy::Policy;
use reconciler::reconcile::{Input, Outcome, reconcile};
use reconciler::report::Format;
use reconciler::terraform::state::State;
use reconciler::validate::TerraformPlan;

use crate::sources::SourceArgs;

/// Options of `retrace reconcile`.
#[derive(Debug, Args)]
pub struct ReconcileArgs {
    #[command(flatten)]
    sources: SourceArgs,
    #[command(flatten)]
    run: RunArgs,
    /// The Terraform project's root module directory (default: `[project] dir`).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// The state file before the drift (default: `[project] state`).
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// A refreshed snapshot of the cloud (`terraform show -json` after a refresh).
    #[arg(long, value_name = "FILE")]
    observed: Option<PathBuf>,
    /// A `-var-file` for the project; repeatable.
    #[arg(long = "var-file", value_name = "FILE")]
    var_files: Vec<PathBuf>,
    /// Apply the patch to the project's files (atomically).
    #[arg(long)]
    write: bool,
}

/// Options shared with `retrace demo`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Output format (text or json).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Runs `retrace reconcile`.
pub async fn run(args: ReconcileArgs, config: &Config) -> Result<u8> {
    let project = args
        .project
        .clone()
        .or_else(|| config.project.dir.clone())
        .context("no project: give --project or set [project] dir in retrace.toml")?;
    let state = args
        .state
        .clone()
        .or_else(|| config.project.state.clone())
        .context("no state: give --state or set [project] state in retrace.toml")?;
    let mut var_files = config.project.var_files.clone();
    var_files.extend(args.var_files.iter().cloned());
    let observed = args
        .observed
        .clone()
        .or_else(|| config.project.observed.clone());
    let outcome = outcome(
        &args.sources,
        config,
        &project,
        &state,
        observed.as_deref(),
        var_files,
    )
    .await?;
    print(&outcome, &args.run)?;
    if args.write && !outcome.changes.is_empty() {
        outcome
            .changes
            .apply(&project)
            .with_context(|| format!("writing the patch under {}", project.display()))?;
        eprintln!("wrote the patch under {}", project.display());
    }
    Ok(outcome.status.exit_code())
}

/// Runs `retrace demo`: reconcile on the bundled example, never writing.
pub async fn demo(args: RunArgs) -> Result<u8> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/demo");
    let config = Config::load(&root.join("retrace.toml"))?;
    let project = config
        .project
        .dir
        .clone()
        .context("the demo config names no project")?;
    let state = config
        .project
        .state
        .clone()
        .context("the demo config names no state")?;
    let var_files = config.project.var_files.clone();
    let outcome = outcome(
        &SourceArgs::default(),
        &config,
        &project,
        &state,
        None,
        var_files,
    )
    .await?;
    print(&outcome, &args)?;
    Ok(outcome.status.exit_code())
}

fn print(outcome: &Outcome, run: &RunArgs) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match run.format {
        Format::Text => {
            stdout.write_all(reconciler::report::reconcile::text(outcome).as_bytes())?
        }
        Format::Json => writeln!(stdout, "{}", reconciler::report::reconcile::json(outcome)?)?,
        Format::Ndjson => bail!("reconcile prints one document: use --format text or json"),
    }
    Ok(())
}

async fn outcome(
    sources: &SourceArgs,
    config: &Config,
    project: &Path,
    state: &Path,
    observed: Option<&Path>,
    var_files: Vec<PathBuf>,
) -> Result<Outcome> {
    let filter = sources.filter(config)?;
    let attributor = Attributor::new(&config.attribution)?;
    let readers = sources.sources(config).await?;
    let request = Request::new(filter, vec![Verdict::OutOfBand]);
    let gathered = pipeline::gather(&readers, &attributor, &request).await?;
    if let Some(error) = gathered.findings.errors.first() {
        bail!("{error}");
    }
    let calls = gathered.into_calls()?;
    let state = State::read(state)?;
    let observed = observed.map(State::read).transpose()?;
    let rules = RuleSet::bundled()?;
    let schema = ProviderSchema::bundled()?;
    let policy = Policy::new(config.policy.clone())?;
    Ok(reconcile(Input {
        project,
        var_files,
        state,
        observed,
        calls: &calls,
        rules,
        schema,
        policy: &policy,
        validators: vec![Box::new(TerraformPlan)],
    })?)
}
