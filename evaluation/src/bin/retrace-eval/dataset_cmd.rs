//! `retrace-eval dataset`: exports the scenarios as a frozen, self-contained dataset
//! (`evaluation::dataset` describes the layout).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, Result, bail};
use clap::Args;
use evaluation::dataset::{self, MANIFEST, TRAIL};
use evaluation::scenario::{Stored, load_all};
use evaluation::score::Scorer;
use serde_json::json;

/// The datasheet and the Python loader, shipped in every export.
const DATASHEET: &str = include_str!("../../../DATASHEET.md");
const LOADER: &str = include_str!("../../../dataset/load.py");

/// Options of `retrace-eval dataset`.
#[derive(Debug, Args)]
pub struct DatasetArgs {
    /// The scenarios directory.
    #[arg(long, value_name = "DIR", default_value = "scenarios")]
    scenarios: PathBuf,
    /// The fixture projects the scenarios name.
    #[arg(long, value_name = "DIR", default_value_os_t = super::score::default_projects())]
    projects: PathBuf,
    /// Where the dataset goes; must not exist yet (it is written beside, then renamed).
    #[arg(long, value_name = "DIR", default_value = "target/dataset")]
    out: PathBuf,
    /// Only this project's scenarios.
    #[arg(long)]
    project: Option<String>,
    /// Only this scenario (repeatable).
    #[arg(long)]
    scenario: Vec<String>,
    /// Within each project and category, every N-th scenario (as `run --every`).
    #[arg(long, value_name = "N")]
    every: Option<usize>,
    /// Worker threads (default: the machine's cores).
    #[arg(long)]
    jobs: Option<usize>,
}

/// Runs `retrace-eval dataset`.
pub fn run(args: &DatasetArgs) -> Result<()> {
    if args.out.exists() {
        bail!(
            "{} exists; the export goes to a new directory",
            args.out.display()
        );
    }
    let mut scenarios: Vec<Stored> = load_all(&args.scenarios)?
        .into_iter()
        .filter(|s| {
            args.project
                .as_ref()
                .is_none_or(|p| *p == s.scenario.project)
        })
        .filter(|s| args.scenario.is_empty() || args.scenario.contains(&s.scenario.id))
        .collect();
    if let Some(n) = args.every {
        if n == 0 {
            bail!("--every takes a number of 1 or more");
        }
        scenarios = evaluation::scenario::every_nth(scenarios, n);
    }
    if scenarios.is_empty() {
        bail!("no scenarios under {} match", args.scenarios.display());
    }
    let partial = args.out.with_extension("partial");
    if partial.exists() {
        std::fs::remove_dir_all(&partial)
            .with_context(|| format!("cannot clear {}", partial.display()))?;
    }
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let records = export(&scenarios, &args.projects, &partial, jobs)?;
    let manifest = dataset::manifest_of(&partial, scenarios.len(), records)?;
    let mut text = serde_json::to_string_pretty(&manifest)?;
    text.push('\n');
    std::fs::write(partial.join(MANIFEST), &text)?;
    std::fs::rename(&partial, &args.out).with_context(|| {
        format!(
            "cannot rename {} to {}",
            partial.display(),
            args.out.display()
        )
    })?;
    println!(
        "dataset {} {}: {} scenarios, {} records, {} files; manifest SHA-256 {}",
        manifest.name,
        manifest.version,
        manifest.scenarios,
        manifest.records,
        manifest.files.len(),
        dataset::sha256_hex(text.as_bytes())
    );
    eprintln!("wrote {}", args.out.display());
    Ok(())
}

/// Writes the projects, the scenarios, the index, the datasheet and the loader under `root`;
/// the records over all trails.
fn export(scenarios: &[Stored], projects: &Path, root: &Path, jobs: usize) -> Result<usize> {
    let mut names: Vec<&str> = scenarios
        .iter()
        .map(|s| s.scenario.project.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let to = root.join("projects").join(name);
        evaluation::files::copy_project(&projects.join(name), &to)
            .with_context(|| format!("cannot copy project {name} to {}", to.display()))?;
    }
    let counts = trails(scenarios, projects, root, jobs)?;
    let mut index = String::new();
    for (stored, records) in scenarios.iter().zip(&counts) {
        let s = &stored.scenario;
        let line = json!({
            "id": s.id, "project": s.project, "category": s.category, "family": s.family,
            "dir": format!("scenarios/{}/{}", s.project, s.id), "records": records,
        });
        index.push_str(&serde_json::to_string(&evaluation::dataset::Canonical(
            &line,
        ))?);
        index.push('\n');
    }
    std::fs::write(root.join("index.jsonl"), index)?;
    std::fs::write(root.join("DATASHEET.md"), DATASHEET)?;
    std::fs::write(root.join("load.py"), LOADER)?;
    Ok(counts.iter().sum())
}

/// Writes each scenario's directory, its whole trail included, on `jobs` threads; the
/// records of each trail, in the scenarios' order.
fn trails(scenarios: &[Stored], projects: &Path, root: &Path, jobs: usize) -> Result<Vec<usize>> {
    let next = AtomicUsize::new(0);
    let counts = Mutex::new(vec![0; scenarios.len()]);
    std::thread::scope(|scope| -> Result<()> {
        let mut workers = Vec::new();
        for _ in 0..jobs.max(1) {
            workers.push(scope.spawn(|| -> Result<()> {
                let mut scorer = Scorer::new(projects)?;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(stored) = scenarios.get(i) else {
                        return Ok(());
                    };
                    let s = &stored.scenario;
                    let dir = root.join("scenarios").join(&s.project).join(&s.id);
                    std::fs::create_dir_all(&dir)
                        .with_context(|| format!("cannot create {}", dir.display()))?;
                    for file in ["scenario.json", "post.tfstate", "trail.json"] {
                        std::fs::copy(stored.dir.join(file), dir.join(file)).with_context(
                            || format!("cannot copy {}", stored.dir.join(file).display()),
                        )?;
                    }
                    let merged = scorer
                        .merged_records(stored)
                        .with_context(|| format!("scenario {}", s.id))?;
                    dataset::write_trail(&dir.join(TRAIL), &merged)?;
                    if let Ok(mut counts) = counts.lock() {
                        counts[i] = merged.len();
                    }
                }
            }));
        }
        for worker in workers {
            worker
                .join()
                .map_err(|_| anyhow::anyhow!("an export thread panicked"))??;
        }
        Ok(())
    })?;
    counts
        .into_inner()
        .map_err(|_| anyhow::anyhow!("an export thread panicked"))
}
