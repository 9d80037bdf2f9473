//! `retrace events`: list calls with their verdicts.

use std::io::Write;

use anyhow::Result;
use clap::Args;

use reconciler::attribute::{Attributor, Verdict};
use reconciler::config::Config;
use reconciler::pipeline::{self, Request};
use reconciler::report::Format;
use reconciler::report::events::{EventsWriter, Summary};

use crate::exit;
use crate::sources::SourceArgs;

/// Options of `retrace events`.
#[derive(Debug, Args)]
pub struct EventsArgs {
    #[command(flatten)]
    sources: SourceArgs,
    /// Only list calls with this verdict (all are counted); repeatable, e.g. --only out-of-band.
    #[arg(long, value_name = "VERDICT")]
    only: Vec<Verdict>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Include each raw CloudTrail record in JSON and NDJSON output.
    #[arg(long)]
    raw: bool,
    /// Print only the summary, not the calls.
    #[arg(long)]
    summary_only: bool,
}

/// Runs the command; exits 1 when any input failed, 0 otherwise.
pub async fn run(args: EventsArgs, config: &Config) -> Result<u8> {
    let filter = args.sources.filter(config)?;
    let attributor = Attributor::new(&config.attribution)?;
    let sources = args.sources.sources(config).await?;
    let keep = match (args.summary_only, args.only.is_empty()) {
        (true, _) => Vec::new(),
        (false, true) => Verdict::ALL.to_vec(),
        (false, false) => args.only.clone(),
    };
    let request = Request::new(filter, keep);
    let gathered = pipeline::gather(&sources, &attributor, &request).await?;
    // An input that failed is reported below and ends the run with an error anyway.
    if gathered.findings.errors.is_empty() {
        args.sources
            .check_read(&gathered.findings.input, &request.filter)?;
    }
    let stdout = std::io::stdout().lock();
    let mut writer = EventsWriter::new(std::io::BufWriter::new(stdout), args.format, args.raw);
    let mut calls = gathered.calls;
    while let Some((call, attribution)) = calls.next_call()? {
        writer.call(&call, &attribution)?;
    }
    let summary = Summary::new(calls.counts(), &gathered.findings, gathered.pushed_down);
    writer.finish(&summary, &mut std::io::stderr().lock())?;
    std::io::stderr().flush()?;
    Ok(if gathered.findings.errors.is_empty() {
        exit::OK
    } else {
        exit::ERROR
    })
}
