//! `retrace-eval generate`: rebuilds the drift scenarios from a seed.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use evaluation::generate::{self, DEFAULT_SEED};
use evaluation::scenario::Category;

/// Options of `retrace-eval generate`.
#[derive(Args)]
pub struct GenerateArgs {
    /// The master seed.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Where scenarios are written (`<out>/<project>/<id>/`).
    #[arg(long, default_value = "scenarios")]
    out: PathBuf,
    /// The directory holding the projects.
    #[arg(long, default_value = "fixtures/projects")]
    projects: PathBuf,
    /// Only this project (repeatable); every project when absent.
    #[arg(long)]
    project: Vec<String>,
    /// Output format of the counts.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

/// Generates and writes the scenarios, then prints the counts per project and category.
pub fn run(args: &GenerateArgs) -> anyhow::Result<()> {
    let names = match args.project.is_empty() {
        true => generate::project_names(&args.projects)?,
        false => args.project.clone(),
    };
    let mut done = Vec::new();
    for name in &names {
        let project = generate::generate_project(&args.projects, name, args.seed)?;
        generate::write_project(&args.out, &project)?;
        done.push(project);
    }
    let counts = generate::counts(&done);
    let coverage = generate::coverage::coverage(&done);
    match args.format {
        Format::Json => {
            let total: usize = counts.values().flat_map(|r| r.values()).sum();
            let json = serde_json::json!({"seed": args.seed, "projects": counts, "total": total,
                "types": coverage.types, "families": coverage.families});
            println!("{}", serde_json::to_string_pretty(&json)?);
        }
        Format::Text => {
            print_table(&counts);
            print_coverage(&coverage);
        }
    }
    Ok(())
}

fn print_table(
    counts: &std::collections::BTreeMap<String, std::collections::BTreeMap<Category, usize>>,
) {
    let mut header = format!("{:<12}", "project");
    for c in Category::ALL {
        header.push_str(&format!(" {:>14}", c.name()));
    }
    println!("{header} {:>6}", "total");
    let mut totals = [0usize; Category::ALL.len()];
    for (project, row) in counts {
        let mut line = format!("{project:<12}");
        for (n, c) in Category::ALL.into_iter().enumerate() {
            let v = row.get(&c).copied().unwrap_or(0);
            totals[n] += v;
            line.push_str(&format!(" {v:>14}"));
        }
        println!("{line} {:>6}", row.values().sum::<usize>());
    }
    let mut line = format!("{:<12}", "total");
    for t in totals {
        line.push_str(&format!(" {t:>14}"));
    }
    println!("{line} {:>6}", totals.iter().sum::<usize>());
}

fn print_coverage(coverage: &generate::coverage::Coverage) {
    println!();
    println!(
        "{} resource types changed, created or deleted in scenarios",
        coverage.types.len()
    );
    let families: Vec<String> = coverage
        .families
        .iter()
        .map(|(family, n)| format!("{family} {n}"))
        .collect();
    println!("scenarios per family: {}", families.join(", "));
}
