//! `retrace reconcile` and `retrace demo`: from a trail and a Terraform project to a
//! validated patch.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;

use knowledge::rules::RuleSet;
use knowledge::schema::ProviderSchema;
use knowledge::signals::SignalSet;
use reconciler::agent::{Agent, AgentReport};
use reconciler::attribute::{Attribution, Attributor, Verdict};
use reconciler::config::Config;
use reconciler::pipeline::InputSummary;
use reconciler::pipeline::{self, Request};
use reconciler::policy::Policy;
use reconciler::reconcile::Input;
use reconciler::reconcile::Outcome;
use reconciler::record::{self, Knowledge};
use reconciler::report::Format;
use reconciler::report::explain::Explanation;
use reconciler::run::{self, Ran, Trail};
use reconciler::terraform::state::State;
use reconciler::text::escaped;
use reconciler::validate::{Sandbox, TerraformPlan, Validator};

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
    /// A `-var-file` for the project, relative to the working directory; repeatable.
    #[arg(long = "var-file", value_name = "FILE")]
    var_files: Vec<PathBuf>,
    /// Apply the patch to the project's files (atomically).
    #[arg(long)]
    write: bool,
    /// Let edits land in modules outside the project's root (`../modules/...`), which other
    /// roots may use too; without it such an edit is reported and left out.
    #[arg(long)]
    allow_shared_module_edits: bool,
}

/// Options shared with `retrace demo`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Output format (text or json).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Leave the knowledge base alone: use the shipped rules only and record nothing.
    #[arg(long)]
    no_record: bool,
    /// Leave every shipped rule out, as if `[knowledge] withhold` named them all: only the
    /// knowledge base's own rules, the drift learner and the agent explain calls (to measure
    /// them alone; give the run a store of its own with `--kb`). Rules the learner or the
    /// agent propose are then vetted against no shipped rule's risk and flags.
    #[arg(long)]
    no_shipped_rules: bool,
    /// Do not run the real `terraform plan` on the patch (the built-in check still runs).
    #[arg(long)]
    no_terraform: bool,
    /// Write the agent's prompts into this directory instead of sending them (needs an
    /// `[agent]` table in retrace.toml).
    #[arg(long, value_name = "DIR")]
    agent_dry_run: Option<PathBuf>,
    /// Do not run the agent even when `[agent]` is configured.
    #[arg(long)]
    no_agent: bool,
}

/// The knowledge base a run uses: its file and demotion threshold, or none (`--no-record`).
pub struct KbSettings {
    /// The store file.
    pub path: PathBuf,
    /// Failures in a row that demote a learned rule.
    pub demote_after: Option<u64>,
}

/// Runs `retrace reconcile`.
pub async fn run(args: ReconcileArgs, config: &Config, kb: KbSettings) -> Result<u8> {
    let (project, state, var_files, observed) = paths(&args, config)?;
    let kb = (!args.run.no_record).then_some(kb);
    if reconciler::patch::recover(&project).with_context(|| {
        format!(
            "completing an interrupted patch under {}",
            project.display()
        )
    })? {
        eprintln!(
            "completed a patch an earlier run was interrupted writing under {}",
            project.display()
        );
    }
    let result = outcome(
        &args.sources,
        config,
        &project,
        &state,
        observed.as_deref(),
        var_files,
        kb,
        &args.run,
        args.allow_shared_module_edits,
    )
    .await?;
    print(&result, &args.run)?;
    let outcome = finish(result.ran)?;
    if args.write && !outcome.changes.is_empty() {
        outcome
            .changes
            .apply(&project)
            .with_context(|| format!("writing the patch under {}", project.display()))?;
        eprintln!("wrote the patch under {}", project.display());
    }
    Ok(outcome.status.exit_code())
}

/// The project directory, state file, var files and observed snapshot of a run: the
/// command line's, else `[project]`'s.
fn paths(
    args: &ReconcileArgs,
    config: &Config,
) -> Result<(PathBuf, PathBuf, Vec<PathBuf>, Option<PathBuf>)> {
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
    var_files.extend(from_working_directory(&args.var_files)?);
    let observed = args
        .observed
        .clone()
        .or_else(|| config.project.observed.clone());
    Ok((project, state, var_files, observed))
}

/// Options of `retrace explain`: the event and the options of `retrace reconcile`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The `eventID` of the call to explain.
    #[arg(value_name = "EVENT_ID")]
    event_id: String,
    #[command(flatten)]
    reconcile: ReconcileArgs,
}

/// Explains one call: its verdict and why, and for an out-of-band write the intent or finding
/// it ended in, from a reconciliation of the same trail and project that records nothing and
/// asks no agent. Exits 0, or 1 when the event is not in the trail.
pub async fn explain(mut args: ExplainArgs, config: &Config) -> Result<u8> {
    if args.reconcile.write {
        bail!("explain changes no file: leave out --write");
    }
    let sources = &args.reconcile.sources;
    let (call, attribution) = find_event(sources, config, &args.event_id).await?;
    let outcome = match attribution.verdict {
        Verdict::OutOfBand => {
            let (project, state, var_files, observed) = paths(&args.reconcile, config)?;
            args.reconcile.run.no_record = true;
            args.reconcile.run.no_agent = true;
            let ran = outcome(
                sources,
                config,
                &project,
                &state,
                observed.as_deref(),
                var_files,
                None,
                &args.reconcile.run,
                args.reconcile.allow_shared_module_edits,
            )
            .await?;
            Some(ran.ran.outcome)
        }
        _ => None,
    };
    let explanation = Explanation::new(&call, &attribution, outcome.as_ref());
    let mut stdout = crate::stdout();
    match args.reconcile.run.format {
        Format::Text => stdout.write_all(escaped(&explanation.text()).as_bytes())?,
        Format::Json => {
            serde_json::to_writer_pretty(&mut stdout, &explanation)?;
            writeln!(stdout)?
        }
        Format::Ndjson => bail!("explain prints one document: use --format text or json"),
    }
    stdout.flush()?;
    Ok(crate::exit::OK)
}

/// The call with `event_id` in the trail, with its verdict.
async fn find_event(
    sources: &SourceArgs,
    config: &Config,
    event_id: &str,
) -> Result<(reconciler::ingest::Call, Attribution)> {
    let filter = sources.filter(config)?;
    let attributor = Attributor::new(&config.attribution)?;
    let readers = sources.sources(config).await?;
    let request = Request::new(filter, Verdict::ALL.to_vec());
    let gathered = pipeline::gather(&readers, &attributor, &request).await?;
    let mut calls = gathered.calls;
    while let Some((call, attribution)) = calls.next_call()? {
        if call.event_id == event_id {
            return Ok((call, attribution));
        }
    }
    bail!(
        "no record with event id {event_id} in the trail (inside the window, accounts and regions asked for)"
    )
}

/// Command-line paths made absolute from the working directory, as Terraform reads
/// `-var-file` (the loader would take a relative one from the project's root).
pub fn from_working_directory(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    paths
        .iter()
        .map(|path| {
            std::path::absolute(path).with_context(|| format!("cannot resolve {}", path.display()))
        })
        .collect()
}

/// Options of `retrace demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Unpack the example into this directory (new or empty) and keep it, instead of a
    /// temporary one.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// The bundled example, embedded so the binary runs it from anywhere.
mod bundled {
    use include_dir::{Dir, include_dir};

    /// The Terraform project.
    pub static PROJECT: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../fixtures/demo/project");
    /// A day of CloudTrail in the S3 delivery layout.
    pub static TRAIL: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../fixtures/demo/trail");
    /// The state the project was applied with.
    pub const STATE: &str = include_str!("../../../../fixtures/demo/terraform.tfstate");
    /// Its `retrace.toml`.
    pub const CONFIG: &str = include_str!("../../../../fixtures/demo/retrace.toml");
}

/// Writes the bundled example into `dir`: `project/`, `trail/`, `terraform.tfstate` and
/// `retrace.toml`.
fn unpack_demo(dir: &Path) -> Result<()> {
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text)
            .with_context(|| format!("writing {}", dir.join(name).display()))
    };
    for (sub, tree) in [("project", &bundled::PROJECT), ("trail", &bundled::TRAIL)] {
        let target = dir.join(sub);
        std::fs::create_dir_all(&target)
            .with_context(|| format!("creating {}", target.display()))?;
        tree.extract(&target)
            .with_context(|| format!("unpacking the example into {}", target.display()))?;
    }
    write("terraform.tfstate", bundled::STATE)?;
    write("retrace.toml", bundled::CONFIG)
}

/// The directory the demo unpacks into: `--out` (new or empty), else a temporary one kept
/// for the run.
fn demo_dir(out: Option<&Path>) -> Result<(PathBuf, Option<tempfile::TempDir>)> {
    match out {
        Some(dir) => {
            let empty = match std::fs::read_dir(dir) {
                Ok(mut entries) => entries.next().is_none(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
                Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
            };
            if !empty {
                bail!(
                    "--out {}: the directory is not empty; give a new or empty one",
                    dir.display()
                );
            }
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            Ok((dir.to_owned(), None))
        }
        None => {
            let temp =
                tempfile::tempdir().context("creating a temporary directory for the demo")?;
            Ok((temp.path().to_owned(), Some(temp)))
        }
    }
}

/// Runs `retrace demo`: reconcile on the bundled example, unpacked into a temporary directory
/// (or `--out`), recording into a temporary knowledge base unless `--kb` names one.
pub async fn demo(args: DemoArgs, kb: Option<KbSettings>) -> Result<u8> {
    let (root, _temp) = demo_dir(args.out.as_deref())?;
    unpack_demo(&root)?;
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
    if kb.is_none() && !args.run.no_record && args.out.is_none() {
        eprintln!(
            "the demo records into a temporary knowledge base; give --kb FILE to keep it (and \
             terraform's initialised working directory beside it, for a faster next run)"
        );
    }
    let kb = kb.unwrap_or_else(|| KbSettings {
        path: root.join("knowledge.sqlite"),
        demote_after: None,
    });
    let kb = (!args.run.no_record).then_some(kb);
    let result = outcome(
        &SourceArgs::default(),
        &config,
        &project,
        &state,
        None,
        var_files,
        kb,
        &args.run,
        false,
    )
    .await?;
    print(&result, &args.run)?;
    if let Some(out) = &args.out {
        eprintln!("the example is in {}", out.display());
    }
    Ok(finish(result.ran)?.status.exit_code())
}

/// The outcome, or the record stage's error once the report is out, or the bug of a write
/// call with no fate in the report.
fn finish(result: Ran) -> Result<Outcome> {
    if !result.outcome.accounting.holds() {
        bail!(
            "{}",
            reconciler::report::reconcile::unaccounted_text(&result.outcome.accounting)
        );
    }
    match result.recorded {
        Some(Err(error)) => Err(error.into()),
        _ => Ok(result.outcome),
    }
}

/// A run, and what it read.
struct Reconciled {
    ran: Ran,
    input: InputSummary,
}

fn print(reconciled: &Reconciled, run: &RunArgs) -> Result<()> {
    let (result, read) = (&reconciled.ran, &reconciled.input);
    let mut stdout = crate::stdout();
    match run.format {
        Format::Text => {
            let mut text =
                reconciler::report::reconcile::input_text(read, &result.outcome.accounting);
            text.push_str(&reconciler::report::reconcile::text(&result.outcome));
            if let Some(agent) = &result.agent {
                text.push_str("\nAgent:\n");
                for line in reconciler::report::agent::lines(agent) {
                    text.push_str(&format!("  {line}\n"));
                }
            }
            let lines = knowledge_lines(result);
            if !lines.is_empty() {
                text.push_str("\nKnowledge base:\n");
                for line in lines {
                    text.push_str(&format!("  {line}\n"));
                }
            }
            stdout.write_all(escaped(&text).as_bytes())?
        }
        Format::Json => {
            let recorded = match &result.recorded {
                Some(Ok(recorded)) => Some(recorded),
                _ => None,
            };
            let report = JsonReport {
                outcome: &result.outcome,
                knowledge: JsonKnowledge {
                    recorded,
                    notes: &result.notes,
                },
                input: JsonInput {
                    summary: read,
                    writes: &result.outcome.accounting,
                },
                agent: result.agent.as_ref(),
            };
            // Written as it is serialised: no copy of the whole document in memory.
            serde_json::to_writer_pretty(&mut stdout, &report)?;
            writeln!(stdout)?
        }
        Format::Ndjson => bail!("reconcile prints one document: use --format text or json"),
    }
    stdout.flush()?;
    Ok(())
}

/// The JSON report: the outcome's fields, what the knowledge base recorded, what was read.
#[derive(serde::Serialize)]
struct JsonReport<'a> {
    #[serde(flatten)]
    outcome: &'a Outcome,
    knowledge: JsonKnowledge<'a>,
    input: JsonInput<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<&'a AgentReport>,
}

/// The input section of the JSON report: what was read and what became of the write calls.
#[derive(serde::Serialize)]
struct JsonInput<'a> {
    #[serde(flatten)]
    summary: &'a reconciler::pipeline::InputSummary,
    writes: &'a reconciler::reconcile::Accounting,
}

/// The knowledge section of the JSON report.
#[derive(serde::Serialize)]
struct JsonKnowledge<'a> {
    recorded: Option<&'a reconciler::record::Recorded>,
    notes: &'a [String],
}

fn knowledge_lines(result: &Ran) -> Vec<String> {
    let mut lines = result.notes.clone();
    match &result.recorded {
        Some(Ok(recorded)) => lines.extend(record::report_lines(recorded)),
        Some(Err(error)) => lines.push(format!("not recorded: {error}")),
        None => lines.push("not recorded (--no-record)".into()),
    }
    lines
}

#[allow(clippy::too_many_arguments)]
async fn outcome(
    sources: &SourceArgs,
    config: &Config,
    project: &Path,
    state: &Path,
    observed: Option<&Path>,
    var_files: Vec<PathBuf>,
    kb: Option<KbSettings>,
    run_args: &RunArgs,
    shared_module_edits: bool,
) -> Result<Reconciled> {
    let terraform = !run_args.no_terraform;
    let agent = agent(config, run_args)?;
    let readers = sources.sources(config).await?;
    let attributor = Attributor::new(&config.attribution)?;
    let trail = Trail {
        sources: &readers,
        attributor: &attributor,
        filter: sources.filter(config)?,
        allow_empty: sources.allow_empty,
        records: false,
    };
    let shipped = if run_args.no_shipped_rules {
        RuleSet::default()
    } else {
        RuleSet::bundled()?.without(&config.knowledge.withhold)
    };
    let cache_dir = kb.as_ref().map(|kb| terraform_cache(&kb.path));
    let mut knowledge = kb
        .map(|kb| Knowledge::open_with(&kb.path, kb.demote_after, &shipped))
        .transpose()?;
    let policy = Policy::new(config.policy.clone())?;
    let or_config = |given: &[String], configured: &[String]| {
        if given.is_empty() {
            configured.to_vec()
        } else {
            given.to_vec()
        }
    };
    let regions = or_config(&sources.regions, &config.project.regions);
    let validators = || validators(config, terraform, &regions, cache_dir.as_deref());
    let input = run::Input {
        record: Some(project.display().to_string()),
        agent: agent.as_ref(),
        project: Input {
            dir: project,
            var_files,
            state: State::read(state)?,
            observed: observed.map(State::read).transpose()?,
            accounts: or_config(&sources.accounts, &config.project.accounts),
            regions: regions.clone(),
            rules: &shipped,
            signals: SignalSet::bundled()?,
            schema: ProviderSchema::bundled()?,
            policy: &policy,
            ownership: &config.ownership,
            validators: &validators,
            shared_module_edits,
            sandbox: Sandbox::new(project),
        },
    };
    let (calls, read) = run::gather(&trail).await?;
    let ran = run::run(&calls, &input, knowledge.as_mut()).await?;
    Ok(Reconciled { ran, input: read })
}

/// The agent `[agent]` configures, unless `--no-agent`; `--agent-dry-run` makes it write its
/// prompts instead of sending them.
fn agent(config: &Config, run: &RunArgs) -> Result<Option<Agent>> {
    let Some(settings) = config.agent.clone().filter(|_| !run.no_agent) else {
        if run.agent_dry_run.is_some() {
            bail!("--agent-dry-run needs an [agent] table in retrace.toml");
        }
        return Ok(None);
    };
    Ok(Some(match &run.agent_dry_run {
        Some(dir) => Agent::dry_run(settings, dir.clone()),
        None => Agent::new(settings)?,
    }))
}

/// The validators run beside the built-in check: the real `terraform plan`, unless turned off
/// by `--no-terraform` or `[terraform] validate = false`, keeping its initialised working
/// directories under `cache_dir` (see [`terraform_cache`]) and showing its stage on a
/// terminal.
pub fn validators(
    config: &Config,
    terraform: bool,
    regions: &[String],
    cache_dir: Option<&Path>,
) -> Vec<Box<dyn Validator>> {
    if !terraform || !config.terraform.validate {
        return Vec::new();
    }
    let mut plan = TerraformPlan::new(
        config.terraform.plugin_dir.clone(),
        regions.first().cloned(),
    );
    plan.cache_dir = cache_dir.map(Path::to_owned);
    plan.progress = true;
    vec![Box::new(plan)]
}

/// Where Terraform's initialised working directories are kept between runs: beside the
/// knowledge base (`DIR/terraform/KEY` for `--kb DIR/knowledge.sqlite`).
pub fn terraform_cache(kb: &Path) -> PathBuf {
    kb.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_owned)
}
