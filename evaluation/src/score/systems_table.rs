//! Several systems scored on the same scenarios by the same judge (`run --system A --system
//! B ...`): one column per system, naming it and its judge, with the headline (pass@1 over the
//! scenarios with something to do and its 95% Wilson interval), the false-positive rate over
//! the noise-only ones and pass@1 per other category, each as [`Results`] computes it.

use super::results::{FalsePositives, Group, Results, escape};
use crate::scenario::Category;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One system's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Column {
    /// The system's command.
    pub system: String,
    /// Who judged: `built-in checks` or `terraform plan`.
    pub judge: String,
    /// Where its whole results are, relative to the comparison's directory.
    pub results: String,
    /// pass@1 over the scenarios with something to do.
    pub headline: Group,
    /// The noise-only scenarios, as a false-positive rate.
    pub noise_only: Option<FalsePositives>,
    /// Per category, by name.
    pub by_category: BTreeMap<String, Group>,
    /// Scenarios the harness could not run.
    pub errors: usize,
}

/// The comparison: what `results.json` holds when several systems ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemsTable {
    /// Scenarios each system ran.
    pub scenarios: usize,
    /// Samples per scenario.
    pub n: usize,
    /// The k of pass@k.
    pub k: usize,
    /// Which inputs were scored, in words.
    pub inputs: String,
    /// One column per system, in the order given.
    pub systems: Vec<Column>,
}

impl SystemsTable {
    /// The columns of `runs`: each system's command, the folder of its whole results
    /// (relative to the comparison's) and its results.
    pub fn of(runs: &[(String, String, Results)]) -> SystemsTable {
        let first = runs.first().map(|(_, _, r)| r);
        SystemsTable {
            scenarios: first.map_or(0, |r| r.overall.scenarios),
            n: first.map_or(0, |r| r.n),
            k: first.map_or(0, |r| r.k),
            inputs: first.map_or_else(String::new, Results::dataset_line),
            systems: runs
                .iter()
                .map(|(system, dir, r)| Column {
                    system: system.clone(),
                    judge: r.judge().to_owned(),
                    results: dir.clone(),
                    headline: r.headline.clone(),
                    noise_only: r.noise_only.clone(),
                    by_category: r.by_category.clone(),
                    errors: r.errors,
                })
                .collect(),
        }
    }

    /// The comparison as a Markdown table: a row per figure, a column per system.
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "# retrace evaluation: {} systems on the same scenarios\n\n{} scenarios, n = {} \
             samples per scenario; inputs: {}. Each cell is pass@1 with its 95% Wilson interval \
             and the scenarios passed; each system's whole report is in its folder.\n\n",
            self.systems.len(),
            self.scenarios,
            self.n,
            self.inputs
        );
        out.push_str("| |");
        for c in &self.systems {
            let _ = write!(out, " `{}`, judged by {} |", escape(&c.system), c.judge);
        }
        out.push_str("\n|---|");
        out.push_str(&"---:|".repeat(self.systems.len()));
        out.push('\n');
        self.row(&mut out, "**pass@1, something to do**", |c| {
            Some(cell(&c.headline))
        });
        self.row(&mut out, "**false-positive rate, noise-only**", |c| {
            c.noise_only.as_ref().map(|f| {
                format!(
                    "{:.3} ({:.3}-{:.3}), {} of {}",
                    f.rate, f.ci_low, f.ci_high, f.failed, f.scenarios
                )
            })
        });
        // The noise-only category is the false-positive row.
        let noise = Category::NoiseOnly.name();
        let mut categories: Vec<&String> = self
            .systems
            .iter()
            .flat_map(|c| c.by_category.keys())
            .filter(|name| *name != noise)
            .collect();
        categories.sort();
        categories.dedup();
        for name in categories {
            self.row(&mut out, name, |c| c.by_category.get(name).map(cell));
        }
        self.row(&mut out, "scenarios the harness could not run", |c| {
            Some(c.errors.to_string())
        });
        self.row(&mut out, "results", |c| {
            Some(format!("{}/results.md", c.results))
        });
        out
    }

    fn row(&self, out: &mut String, name: &str, value: impl Fn(&Column) -> Option<String>) {
        let _ = write!(out, "| {name} |");
        for c in &self.systems {
            let _ = write!(out, " {} |", value(c).unwrap_or_else(|| "-".to_owned()));
        }
        out.push('\n');
    }
}

/// A group's pass@1, interval and scenarios passed, in one cell.
fn cell(g: &Group) -> String {
    format!(
        "{:.3} ({:.3}-{:.3}), {} of {}",
        g.pass_at_1, g.ci_low, g.ci_high, g.passed, g.scenarios
    )
}
