//! `retrace nightly`: every `[[workspace]]` of retrace.toml reconciled from one read of the
//! events, each with its pull request.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use chrono::Utc;
use clap::Args;

use knowledge::rules::RuleSet;
use knowledge::schema::ProviderSchema;
use knowledge::signals::SignalSet;
use knowledge::store::ReviewState;
use reconciler::agent::Agent;
use reconciler::attribute::Attributor;
use reconciler::config::{Config, parse_when};
use reconciler::ingest::Filter;
use reconciler::nightly::lock::RunLock;
use reconciler::nightly::{self, Setup, WorkspaceReport};
use reconciler::record::Knowledge;
use reconciler::report::{Format, words};
use reconciler::run::{self, Trail};
use reconciler::text::escaped;

use crate::reconcile::KbSettings;
use crate::sources::SourceArgs;

/// Options of `retrace nightly`.
#[derive(Debug, Args)]
pub struct NightlyArgs {
    #[command(flatten)]
    sources: SourceArgs,
    /// Read, reconcile and print what would be pushed and opened; push, open and record
    /// nothing.
    #[arg(long)]
    dry_run: bool,
    /// Run only this workspace; repeatable.
    #[arg(long = "workspace", value_name = "NAME")]
    only: Vec<String>,
    /// Output format (text or json).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Do not run the real `terraform plan` on the patches (the built-in check still runs).
    #[arg(long)]
    no_terraform: bool,
    /// Let edits land in modules outside a project's root, which other roots may use too.
    #[arg(long)]
    allow_shared_module_edits: bool,
    /// Do not run the agent even when `[agent]` is configured.
    #[arg(long)]
    no_agent: bool,
}

/// Runs `retrace nightly`.
pub async fn run(
    args: NightlyArgs,
    config: &Config,
    config_path: Option<&Path>,
    kb: KbSettings,
) -> Result<u8> {
    if config.workspaces.is_empty() {
        bail!("no workspace to run: add [[workspace]] tables to retrace.toml (see README.md)");
    }
    for name in &args.only {
        if !config.workspaces.iter().any(|w| &w.name == name) {
            bail!("--workspace {name}: retrace.toml has no workspace of that name");
        }
    }
    let _lock = RunLock::acquire(&kb.path)?;
    let shipped = RuleSet::bundled()?.without(&config.knowledge.withhold);
    let mut knowledge = Knowledge::open_with(&kb.path, kb.demote_after, &shipped)?;
    let agent = match config.agent.clone().filter(|_| !args.no_agent) {
        Some(settings) => Some(Agent::new(settings)?),
        None => None,
    };
    let now = Utc::now();
    let when = |text: &Option<String>| text.as_deref().map(|t| parse_when(t, now)).transpose();
    let since = when(&args.sources.since)?;
    let terraform = !args.no_terraform && config.terraform.validate;
    let cache_dir = crate::reconcile::terraform_cache(&kb.path);
    let validators = |regions: &[String]| {
        crate::reconcile::validators(config, terraform, regions, Some(&cache_dir))
    };
    let setup = Setup {
        config,
        checkouts: checkouts(config, config_path),
        dry_run: args.dry_run,
        since,
        only: &args.only,
        rules: &shipped,
        signals: SignalSet::bundled()?,
        schema: ProviderSchema::bundled()?,
        validators: &validators,
        shared_module_edits: args.allow_shared_module_edits,
        agent: agent.as_ref(),
    };
    let planned = nightly::plan(&setup, Some(&knowledge), now)?;
    let earliest = planned.iter().map(|p| p.read_from).min();
    let readers = args.sources.sources(config).await?;
    let attributor = Attributor::new(&config.attribution)?;
    let until = when(&args.sources.until)?;
    let trail = Trail {
        sources: &readers,
        attributor: &attributor,
        filter: Filter {
            since: earliest,
            until,
            ..Filter::default()
        },
        allow_empty: true,
        records: false,
    };
    let (calls, input) = run::gather(&trail).await?;
    let reports = nightly::run_all(&setup, planned, &calls, &input, Some(&mut knowledge)).await;
    print(&reports, args.format, args.dry_run)?;
    Ok(nightly::exit_code(&reports))
}

/// Where repositories are cloned: `[nightly] checkouts`, else `.retrace/checkouts` beside
/// the configuration file (or in the working directory).
fn checkouts(config: &Config, config_path: Option<&Path>) -> PathBuf {
    config.nightly.checkouts.clone().unwrap_or_else(|| {
        let base = config_path
            .and_then(Path::parent)
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        base.join(".retrace/checkouts")
    })
}

fn print(reports: &[WorkspaceReport], format: Format, dry_run: bool) -> Result<()> {
    let mut stdout = crate::stdout();
    match format {
        Format::Text => {
            let text: String = reports.iter().map(|r| text(r, dry_run)).collect();
            stdout.write_all(escaped(&text).as_bytes())?;
        }
        Format::Json => {
            serde_json::to_writer_pretty(
                &mut stdout,
                &serde_json::json!({ "workspaces": reports }),
            )?;
            writeln!(stdout)?;
        }
        Format::Ndjson => bail!("nightly prints one document: use --format text or json"),
    }
    stdout.flush()?;
    Ok(())
}

/// One workspace's part of the text report.
fn text(r: &WorkspaceReport, dry_run: bool) -> String {
    let mut out = format!(
        "Workspace {} (branch {}): events from {}, {} out-of-band call(s)\n",
        r.workspace, r.branch, r.window, r.calls
    );
    for review in &r.reviewed {
        let corrected = match review.corrected {
            0 => String::new(),
            n => format!(", {n} line(s) corrected by the reviewer"),
        };
        let fate = match review.state {
            ReviewState::Closed => {
                "closed unmerged: its changes are not proposed again until the cloud changes them again"
            }
            ReviewState::Withdrawn => {
                "closed after retrace said it was no longer needed (not a rejection)"
            }
            ReviewState::Gone => "gone from the forge: forgotten",
            state => state.as_str(),
        };
        out.push_str(&format!(
            "  earlier request #{} was {fate}{corrected}\n",
            review.number
        ));
    }
    for note in &r.notes {
        out.push_str(&format!("  {note}\n"));
    }
    if let Some(error) = &r.error {
        out.push_str(&format!("  error: {error}\n\n"));
        return out;
    }
    if let Some(status) = r.status {
        out.push_str(&format!("  {}\n", words::status(status)));
    }
    if let Some(commit) = &r.commit {
        let short: String = commit.chars().take(12).collect();
        out.push_str(&format!("  committed {short}\n"));
    }
    match &r.request {
        Some(request) => {
            let number = request.number.map(|n| format!(" #{n}")).unwrap_or_default();
            let url = request
                .url
                .as_deref()
                .map(|u| format!(": {u}"))
                .unwrap_or_default();
            let draft = if request.draft {
                " (draft: something waits for a person)"
            } else {
                ""
            };
            out.push_str(&format!(
                "  {} {}{number}{url}{draft}\n    {}\n",
                request.action, request.noun, request.title
            ));
            if dry_run {
                out.push_str("\n--- description ---\n");
                out.push_str(&request.body);
                out.push_str("--- end ---\n");
            }
        }
        None => out.push_str("  no request opened or changed: nothing new to propose\n"),
    }
    out.push('\n');
    out
}
