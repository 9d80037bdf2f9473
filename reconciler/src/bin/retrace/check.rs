//! `retrace check-config`: loads a Terraform project as `reconcile` would and prints what
//! retrace sees of it, with every construct it could not evaluate.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use reconciler::config::Config;
use reconciler::report::Format;
use reconciler::report::load::LoadReport;
use reconciler::terraform::config::{LoadOptions, Project};
use reconciler::terraform::state::State;

use crate::reconcile::from_working_directory;

/// Options of `retrace check-config`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The Terraform project's root module directory (default: `[project] dir`).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// A state file to evaluate data sources and resource references from (default:
    /// `[project] state`, if set).
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// A `-var-file` for the project, relative to the working directory; repeatable.
    #[arg(long = "var-file", value_name = "FILE")]
    var_files: Vec<PathBuf>,
    /// A `-var` assignment, `NAME=VALUE`; repeatable.
    #[arg(long = "var", value_name = "NAME=VALUE")]
    vars: Vec<String>,
    /// Output format (text or json).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Runs `retrace check-config`: exit 0 when everything was evaluated, 3 when some
/// constructs were not (listed), 1 when the project does not load.
pub fn run(args: CheckArgs, config: &Config) -> Result<u8> {
    let dir = args
        .project
        .clone()
        .or_else(|| config.project.dir.clone())
        .context("no project: give --project or set [project] dir in retrace.toml")?;
    let state = match args.state.clone().or_else(|| config.project.state.clone()) {
        Some(path) => Some(
            State::read(&path).with_context(|| format!("reading the state {}", path.display()))?,
        ),
        None => None,
    };
    let mut var_files = config.project.var_files.clone();
    var_files.extend(from_working_directory(&args.var_files)?);
    let options = LoadOptions {
        var_files,
        vars: args.vars.clone(),
        state: state.as_ref(),
    };
    let project = Project::load(&dir, &options)
        .with_context(|| format!("loading the project {}", dir.display()))?;
    let report = LoadReport::of(&project);
    match args.format {
        Format::Text => print!("{}", report.text()),
        Format::Json | Format::Ndjson => println!("{}", serde_json::to_string(&report)?),
    }
    Ok(if report.clean() { 0 } else { 3 })
}
