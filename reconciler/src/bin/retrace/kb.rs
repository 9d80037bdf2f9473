//! `retrace kb`: the knowledge base's rules with their provenance and track record, past runs,
//! review of learned rules, and export/import to share what one store learned.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Value, json};

use knowledge::store::{Provenance, RuleFilter, RuleRecord, RuleReview, Stats, Store};
use reconciler::config::Config;
use reconciler::record::{Knowledge, default_store_path};

use crate::coverage::CoverageArgs;
use crate::exit;
use crate::reconcile::KbSettings;

/// Options of `retrace kb`.
#[derive(Debug, Args)]
pub struct KbArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = KbFormat::Text, global = true)]
    format: KbFormat,
    #[command(subcommand)]
    command: KbCommand,
}

/// How `retrace kb` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum KbFormat {
    /// Lines for a terminal.
    Text,
    /// One JSON document.
    Json,
}

#[derive(Debug, Subcommand)]
enum KbCommand {
    /// List the stored rules.
    List(ListArgs),
    /// Show one rule with its provenance, counts and evidence.
    Show {
        /// The rule's row id (from `kb list`).
        id: i64,
    },
    /// Counts by provenance, service and outcome.
    Stats,
    /// Write the learned and reviewed rules as JSON (to standard output or a file).
    Export {
        /// Write to this file (atomically) instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Include every recorded reconciliation.
        #[arg(long)]
        reconciliations: bool,
    },
    /// Read an export document into the store, all or nothing.
    Import {
        /// The export document.
        file: PathBuf,
    },
    /// Accept or reject a learned rule.
    Review(ReviewArgs),
    /// Which resource types and write APIs the shipped rules cover: the most used types of
    /// public Terraform code, or those a project manages.
    Coverage(CoverageArgs),
}

#[derive(Debug, Args)]
struct ListArgs {
    /// Only this provenance.
    #[arg(long, value_parser = ["shipped", "learned", "agent", "reviewed"])]
    provenance: Option<String>,
    /// Only this service (e.g. `ec2`).
    #[arg(long)]
    service: Option<String>,
    /// Only inactive (demoted, rejected or retired) rules.
    #[arg(long, conflicts_with = "active")]
    inactive: bool,
    /// Only active rules.
    #[arg(long)]
    active: bool,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("verdict").required(true).args(["accept", "reject"])))]
struct ReviewArgs {
    /// The rule's row id.
    id: i64,
    /// Keep the rule: it becomes `reviewed` and active.
    #[arg(long)]
    accept: bool,
    /// Retire the rule: it is made inactive and never learned again until accepted.
    #[arg(long)]
    reject: bool,
}

/// The knowledge base a command uses: `--kb`, else `[knowledge] store`, else the default.
pub fn settings(kb: Option<PathBuf>, config: &Config) -> Result<KbSettings> {
    let path = kb
        .or_else(|| config.knowledge.store.clone())
        .or_else(default_store_path)
        .context("no knowledge base: give --kb FILE, set [knowledge] store, or set HOME")?;
    Ok(KbSettings {
        path,
        demote_after: config.knowledge.demote_after,
    })
}

/// Runs `retrace kb`.
pub fn run(args: KbArgs, kb: KbSettings) -> Result<u8> {
    let json = args.format == KbFormat::Json;
    let command = match args.command {
        KbCommand::Coverage(coverage) => {
            let out = crate::coverage::report(&coverage, json)?;
            std::io::stdout().lock().write_all(out.as_bytes())?;
            return Ok(exit::OK);
        }
        other => other,
    };
    let knowledge = Knowledge::open(&kb.path, kb.demote_after)?;
    let mut store = knowledge.into_store();
    let out = match command {
        KbCommand::List(list) => list_rules(&store, &list, json)?,
        KbCommand::Show { id } => {
            let record = store.show(id)?;
            if json {
                pretty(&rule_json(&record))?
            } else {
                show_text(&record)
            }
        }
        KbCommand::Stats => stats(&store.stats()?, &store.rule_reviews()?, json)?,
        KbCommand::Export {
            out,
            reconciliations,
        } => return export(&store, out.as_deref(), reconciliations),
        KbCommand::Import { file } => import(&mut store, &file, json)?,
        KbCommand::Coverage(_) => String::new(),
        KbCommand::Review(review) => {
            let record = if review.accept {
                store.review(review.id)?
            } else {
                store.reject(review.id)?
            };
            if json {
                pretty(&rule_json(&record))?
            } else {
                format!("{}\n", line(&record))
            }
        }
    };
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(exit::OK)
}

fn list_rules(store: &Store, list: &ListArgs, json: bool) -> Result<String> {
    let filter = RuleFilter {
        provenance: list.provenance.as_deref().map(provenance),
        service: list.service.clone(),
        active: match (list.active, list.inactive) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        },
    };
    let records = store.list(&filter)?;
    if json {
        return pretty(&Value::Array(records.iter().map(rule_json).collect()));
    }
    Ok(records.iter().map(|r| format!("{}\n", line(r))).collect())
}

fn provenance(name: &str) -> Provenance {
    match name {
        "learned" => Provenance::Learned,
        "agent" => Provenance::Agent,
        "reviewed" => Provenance::Reviewed,
        _ => Provenance::Shipped,
    }
}

/// One rule on one line: id, rule, provenance, state and record (control characters of a
/// model-written rule escaped).
fn line(r: &RuleRecord) -> String {
    let text = format!(
        "#{:<4} {:<45} {:<8} {:<8} {} ok / {} failed",
        r.id,
        r.rule.id(),
        r.provenance.as_str(),
        if r.active { "active" } else { "inactive" },
        r.successes,
        r.failures
    );
    reconciler::text::escaped(&text).into_owned()
}

fn show_text(r: &RuleRecord) -> String {
    let mut out = format!("{}\n", line(r));
    out.push_str(&format!(
        "  event source: {}\n  resource: {}\n  kind: {}\n  summary: {}\n",
        r.rule.event_source,
        r.rule.resource_types().join(", "),
        r.rule.kind().as_str(),
        r.rule.spec.summary
    ));
    out.push_str(&format!(
        "  failures in a row: {}\n  stored: {}\n  updated: {}\n",
        r.consecutive_failures, r.created_at, r.updated_at
    ));
    if let Some(e) = &r.evidence {
        out.push_str(&format!(
            "  learned in run #{} from {}\n",
            e.reconciliation_id,
            e.event_ids.join(", ")
        ));
        if let Some(agent) = &e.agent {
            out.push_str(&format!(
                "  found by the agent ({}) for {} prompt and {} completion tokens\n",
                agent.model, agent.prompt_tokens, agent.completion_tokens
            ));
        }
    }
    let body = serde_json::to_string_pretty(&r.rule).unwrap_or_default();
    out.push_str("  rule:\n");
    for text in body.lines() {
        out.push_str(&format!("    {text}\n"));
    }
    // A learned rule's text may be a model's: escape what would rewrite the terminal.
    reconciler::text::escaped(&out).into_owned()
}

fn rule_json(r: &RuleRecord) -> Value {
    json!({
        "id": r.id,
        "rule_id": r.rule.id(),
        "provenance": r.provenance,
        "active": r.active,
        "successes": r.successes,
        "failures": r.failures,
        "consecutive_failures": r.consecutive_failures,
        "evidence": r.evidence,
        "created_at": r.created_at,
        "updated_at": r.updated_at,
        "rule": r.rule,
    })
}

fn stats(stats: &Stats, reviews: &[RuleReview], json: bool) -> Result<String> {
    if json {
        return pretty(&json!({
            "rules_by_provenance": stats.rules_by_provenance,
            "rules_by_service": stats.rules_by_service,
            "inactive_rules": stats.inactive_rules,
            "reconciliations_by_outcome": stats.reconciliations_by_outcome,
            "rule_success_rate": stats.rule_success_rate,
            "agent_tokens": {"prompt": stats.prompt_tokens, "completion": stats.completion_tokens},
            "reviews_by_rule": reviews,
        }));
    }
    let mut out = String::new();
    counts(&mut out, "rules by provenance", &stats.rules_by_provenance);
    out.push_str(&format!("inactive rules: {}\n", stats.inactive_rules));
    counts(
        &mut out,
        "reconciliations by outcome",
        &stats.reconciliations_by_outcome,
    );
    match stats.rule_success_rate {
        Some(rate) => out.push_str(&format!("rule success rate: {:.1}%\n", rate * 100.0)),
        None => out.push_str("rule success rate: no outcomes yet\n"),
    }
    out.push_str(&format!(
        "agent tokens over every run: {} prompt, {} completion\n",
        stats.prompt_tokens, stats.completion_tokens
    ));
    counts(&mut out, "rules by service", &stats.rules_by_service);
    out.push_str("pull request reviews by rule (merged, closed unmerged, lines corrected):\n");
    if reviews.is_empty() {
        out.push_str("  none yet\n");
    }
    for r in reviews {
        out.push_str(&format!(
            "  {}: {} merged, {} rejected, {} corrected\n",
            r.rule, r.merged, r.rejected, r.corrected
        ));
    }
    Ok(out)
}

fn counts(out: &mut String, title: &str, counts: &std::collections::BTreeMap<String, u64>) {
    out.push_str(&format!("{title}:\n"));
    for (name, n) in counts {
        out.push_str(&format!("  {name}: {n}\n"));
    }
}

/// Writes the export to standard output, or to a file through a temporary file renamed into
/// place.
fn export(store: &Store, out: Option<&Path>, reconciliations: bool) -> Result<u8> {
    let Some(path) = out else {
        let mut stdout = crate::stdout();
        store.export(&mut stdout, reconciliations)?;
        writeln!(stdout)?;
        stdout.flush()?;
        return Ok(exit::OK);
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write {}", path.display()))?;
    store.export(&mut temp, reconciliations)?;
    temp.as_file()
        .sync_all()
        .with_context(|| format!("cannot write {}", path.display()))?;
    temp.persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(exit::OK)
}

fn import(store: &mut Store, file: &Path, json: bool) -> Result<String> {
    let reader =
        std::fs::File::open(file).with_context(|| format!("cannot read {}", file.display()))?;
    let report = store
        .import(std::io::BufReader::new(reader))
        .with_context(|| format!("importing {}", file.display()))?;
    if json {
        return pretty(&json!({
            "rules_added": report.rules_added,
            "rules_skipped": report.rules_skipped,
            "reconciliations_added": report.reconciliations_added,
            "reconciliations_skipped": report.reconciliations_skipped,
        }));
    }
    Ok(format!(
        "{}: {} rule(s) added, {} already present; {} reconciliation(s) added, {} already present\n",
        file.display(),
        report.rules_added,
        report.rules_skipped,
        report.reconciliations_added,
        report.reconciliations_skipped
    ))
}

fn pretty(value: &Value) -> Result<String> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    Ok(text)
}
