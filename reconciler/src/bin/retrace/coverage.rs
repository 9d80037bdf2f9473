//! `retrace kb coverage`: which resource types and write APIs the rules cover, for the most
//! used types of public Terraform code (the bundled ranking) or for the types a project
//! manages, sorted by rank.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use serde_json::{Value, json};

use knowledge::catalog::Catalog;
use knowledge::coverage::{Part, TypeCoverage, bundled_ranking, coverage};
use knowledge::{ProviderSchema, RuleSet};
use reconciler::terraform::config::{LoadOptions, Project};
use reconciler::terraform::state::Mode;

/// Options of `retrace kb coverage`.
#[derive(Debug, Args)]
pub struct CoverageArgs {
    /// Report the AWS resource types this Terraform project manages instead of the ranking.
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// How many of the ranking's most used types to report (without --project).
    #[arg(long, default_value_t = 100, value_name = "N")]
    top: usize,
}

/// One reported type: its rank when the ranking has it, its instances in the project, and its
/// coverage.
struct Row {
    rank: Option<usize>,
    instances: Option<usize>,
    coverage: TypeCoverage,
}

/// Builds the report: the rows and what they describe.
pub fn report(args: &CoverageArgs, json_out: bool) -> Result<String> {
    let rules = RuleSet::bundled()?;
    let schema = ProviderSchema::bundled()?;
    let ranking = bundled_ranking()?;
    let ranks: BTreeMap<&str, usize> = ranking
        .iter()
        .map(|r| (r.resource_type.as_str(), r.rank))
        .collect();
    let (subject, types): (String, Vec<(String, Option<usize>)>) = match &args.project {
        Some(dir) => (
            format!("the AWS resource types {} manages", dir.display()),
            managed_types(dir)?
                .into_iter()
                .map(|(t, n)| (t, Some(n)))
                .collect(),
        ),
        None => (
            format!(
                "the {} most used AWS resource types in public Terraform code",
                args.top.min(ranking.len())
            ),
            ranking
                .iter()
                .take(args.top)
                .map(|r| (r.resource_type.clone(), None))
                .collect(),
        ),
    };
    let mut rows: Vec<Row> = types
        .into_iter()
        .map(|(t, instances)| Row {
            rank: ranks.get(t.as_str()).copied(),
            instances,
            coverage: coverage(&t, rules, Catalog::bundled(), schema),
        })
        .collect();
    rows.sort_by(|a, b| {
        (a.rank.is_none(), a.rank, &a.coverage.resource_type).cmp(&(
            b.rank.is_none(),
            b.rank,
            &b.coverage.resource_type,
        ))
    });
    if json_out {
        let mut text = serde_json::to_string_pretty(&to_json(&subject, args, &rows))?;
        text.push('\n');
        Ok(text)
    } else {
        Ok(text(&subject, &rows))
    }
}

/// The managed `aws_*` resource types of a project, with their instance counts.
fn managed_types(dir: &Path) -> Result<BTreeMap<String, usize>> {
    let project = Project::load(dir, &LoadOptions::default())
        .with_context(|| format!("loading the project {}", dir.display()))?;
    let mut types = BTreeMap::new();
    for instance in project
        .instances()
        .filter(|i| i.mode == Mode::Managed && i.resource_type.starts_with("aws_"))
    {
        *types.entry(instance.resource_type.clone()).or_insert(0) += 1;
    }
    Ok(types)
}

/// The parts no rule covers, in words: `change, tags`; `unknown type` for a type the bundled
/// provider schema lacks.
fn missing_words(c: &TypeCoverage) -> String {
    if !c.in_schema {
        return "not in the bundled provider schema".to_owned();
    }
    c.missing
        .iter()
        .map(|p| p.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The count of rules for a part, `-` for none, `n/a` when the type does not need it.
fn part_cell(c: &TypeCoverage, part: Part) -> String {
    match c.apis_for(part).len() {
        0 if !c.needed.contains(&part) => "n/a".to_owned(),
        0 => "-".to_owned(),
        n => n.to_string(),
    }
}

fn text(subject: &str, rows: &[Row]) -> String {
    let covered = rows.iter().filter(|r| r.coverage.is_covered()).count();
    let mut out = format!(
        "Coverage of {subject}: {covered} of {} covered.\n\
         A type is covered when rules create, change, delete and tag it (each part it has).\n\
         Columns count the write APIs with a rule; n/a: the type has no such API.\n\n",
        rows.len()
    );
    let width = rows
        .iter()
        .map(|r| r.coverage.resource_type.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let with_instances = rows.iter().any(|r| r.instances.is_some());
    let instances_head = if with_instances { "instances  " } else { "" };
    out.push_str(&format!(
        "{:>4}  {:<width$}  {instances_head}covered  create  change  delete  tags  missing\n",
        "rank", "type"
    ));
    for row in rows {
        let c = &row.coverage;
        let rank = row.rank.map_or("-".to_owned(), |r| r.to_string());
        let instances = row.instances.map_or(String::new(), |n| format!("{n:>9}  "));
        out.push_str(
            format!(
                "{rank:>4}  {:<width$}  {instances}{:<7}  {:>6}  {:>6}  {:>6}  {:>4}  {}",
                c.resource_type,
                if c.is_covered() { "yes" } else { "no" },
                part_cell(c, Part::Create),
                part_cell(c, Part::Change),
                part_cell(c, Part::Delete),
                part_cell(c, Part::Tags),
                missing_words(c),
            )
            .trim_end(),
        );
        out.push('\n');
    }
    out
}

fn to_json(subject: &str, args: &CoverageArgs, rows: &[Row]) -> Value {
    let types: Vec<Value> = rows
        .iter()
        .map(|row| {
            let c = &row.coverage;
            let apis: serde_json::Map<String, Value> = Part::ALL
                .iter()
                .map(|p| (p.as_str().to_owned(), json!(c.apis_for(*p))))
                .collect();
            json!({
                "rank": row.rank,
                "type": c.resource_type,
                "instances": row.instances,
                "covered": c.is_covered(),
                "in_schema": c.in_schema,
                "needed": c.needed.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
                "missing": c.missing.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
                "apis": apis,
            })
        })
        .collect();
    json!({
        "subject": subject,
        "project": args.project.as_ref().map(|p| p.display().to_string()),
        "types": rows.len(),
        "covered": rows.iter().filter(|r| r.coverage.is_covered()).count(),
        "coverage": types,
    })
}
