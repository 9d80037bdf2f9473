//! `retrace-eval`: the evaluation harness's command line. `trail` runs a list of calls
//! against a cloud simulated from a Terraform state and writes their CloudTrail records;
//! `generate` rebuilds the drift scenarios; `run` and `show` score them.

#![forbid(unsafe_code)]

mod dataset_cmd;
mod generate_cmd;
mod score;

use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand, ValueEnum};
use evaluation::sim::{Agent, Caller, Cloud, Identity, Request, Settings};
use reconciler::agent::scripted::{ScriptedModel, load_transcripts};
use reconciler::terraform::state::State;
use serde::Deserialize;

/// mimalloc: building, writing and reading each scenario's background day allocates and
/// frees millions of small JSON values, which it serves faster than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Evaluation tools for retrace.
#[derive(Parser)]
#[command(
    name = "retrace-eval",
    version,
    after_help = "Exit codes: 0 success (run: every scenario passed, or with --check-baseline no regression); \
                  1 error (run --check-baseline: a scenario that passed in the baseline fails now); \
                  3 run/show: some scenarios failed."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run calls (NDJSON on standard input or a file: `{"eventSource", "eventName",
    /// "requestParameters"}` per line) against a cloud seeded from a Terraform state; print
    /// one CloudTrail record per line, and optionally write the state after the calls.
    Trail {
        /// The Terraform state to seed the cloud from.
        #[arg(long)]
        state: PathBuf,
        /// The calls; standard input when absent.
        #[arg(long)]
        calls: Option<PathBuf>,
        /// Seed of ids, event ids and times.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// The program making the calls.
        #[arg(long, value_enum, default_value_t = AgentArg::Cli)]
        agent: AgentArg,
        /// The IAM user making the calls.
        #[arg(long, default_value = "alice")]
        user: String,
        /// Insert a read-only call before every call.
        #[arg(long)]
        noise: bool,
        /// Write the state after the calls here.
        #[arg(long)]
        state_out: Option<PathBuf>,
    },
    /// Rebuild the drift scenarios deterministically from a seed and print their counts.
    Generate(generate_cmd::GenerateArgs),
    /// Reconcile every stored scenario n times, score each against its ground truth, and
    /// write results.json, results.md and chart.svg (pass@k overall, per category, per project).
    Run(Box<score::RunArgs>),
    /// Export the scenarios as a frozen dataset: each scenario's whole trail (background day
    /// included) as JSON Lines, the fixture projects, a datasheet, a Python loader and a
    /// manifest of SHA-256 checksums (`run --dataset` scores it).
    Dataset(dataset_cmd::DatasetArgs),
    /// Print one scenario's trail, the reconciler's intents and diff, and each check's verdict.
    Show(score::ShowArgs),
    /// Serve a scripted model on a loopback port: it answers chat-completions and Messages
    /// requests by replaying recorded tool-call transcripts, for `run --agent` where no model
    /// endpoint exists. Runs until stopped.
    Model {
        /// The folder of transcripts (`*.json`, one per API).
        #[arg(long, default_value = "evaluation/agent/transcripts")]
        transcripts: PathBuf,
        /// The address to listen on.
        #[arg(long, default_value = "127.0.0.1:8399")]
        listen: String,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum AgentArg {
    Console,
    Cli,
    Boto3,
    Terraform,
}

/// One line of the calls file.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallLine {
    event_source: String,
    event_name: String,
    #[serde(default)]
    request_parameters: serde_json::Value,
}

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let result = match Cli::parse().command {
        Command::Generate(args) => generate_cmd::run(&args).map(|()| score::PASSED),
        Command::Run(args) => score::run(*args),
        Command::Dataset(args) => dataset_cmd::run(&args).map(|()| score::PASSED),
        Command::Show(args) => score::show(args),
        Command::Model {
            transcripts,
            listen,
        } => model(&transcripts, &listen),
        Command::Trail {
            state,
            calls,
            seed,
            agent,
            user,
            noise,
            state_out,
        } => trail(state, calls, seed, agent, user, noise, state_out).map(|()| score::PASSED),
    };
    match result {
        Ok(code) => std::process::ExitCode::from(code),
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::from(score::ERROR)
        }
    }
}

/// Runs `retrace-eval model` until the process is stopped.
fn model(transcripts: &std::path::Path, listen: &str) -> anyhow::Result<u8> {
    let loaded = load_transcripts(transcripts)
        .with_context(|| format!("cannot read the transcripts in {}", transcripts.display()))?;
    if loaded.is_empty() {
        bail!("{} holds no transcripts (*.json)", transcripts.display());
    }
    let server = ScriptedModel::start(listen, loaded, Vec::new())
        .with_context(|| format!("cannot listen on {listen}"))?;
    println!(
        "scripted model listening: chat completions at {}, Messages at {}",
        server.openai_url(),
        server.anthropic_url()
    );
    std::io::stdout().flush()?;
    loop {
        std::thread::park();
    }
}

/// Runs `retrace-eval trail`.
#[allow(clippy::too_many_arguments)]
fn trail(
    state: PathBuf,
    calls: Option<PathBuf>,
    seed: u64,
    agent: AgentArg,
    user: String,
    noise: bool,
    state_out: Option<PathBuf>,
) -> anyhow::Result<()> {
    let seed_state = State::read(&state)?;
    let mut cloud = Cloud::from_state(
        &seed_state,
        &Settings {
            seed,
            ..Settings::default()
        },
    );
    let agent = match agent {
        AgentArg::Console => Agent::Console,
        AgentArg::Cli => Agent::Cli,
        AgentArg::Boto3 => Agent::Boto3,
        AgentArg::Terraform => Agent::Terraform,
    };
    let caller = Caller::new(Identity::IamUser { name: user }, agent);
    let input: Box<dyn BufRead> = match &calls {
        Some(path) => Box::new(std::io::BufReader::new(
            std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?,
        )),
        None => Box::new(std::io::stdin().lock()),
    };
    let name = calls
        .as_ref()
        .map_or("standard input".to_owned(), |p| p.display().to_string());
    let mut out = std::io::stdout().lock();
    for (n, line) in input.lines().enumerate() {
        let line = line.with_context(|| format!("{name}: cannot read line {}", n + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let call: CallLine =
            serde_json::from_str(&line).with_context(|| format!("{name} line {}", n + 1))?;
        if noise {
            let read = cloud.noise_request();
            let outcome = cloud.execute(&read, &caller)?;
            writeln!(out, "{}", outcome.record)?;
        }
        let request = Request::new(
            &call.event_source,
            &call.event_name,
            call.request_parameters,
        );
        let outcome = match cloud.execute(&request, &caller) {
            Ok(outcome) => outcome,
            Err(e) => bail!("{name} line {}: {e}", n + 1),
        };
        writeln!(out, "{}", outcome.record)?;
    }
    if let Some(path) = state_out {
        write_state(&cloud.snapshot(), &path)?;
    }
    Ok(())
}

/// Writes a state as a version 4 state file, atomically.
fn write_state(state: &State, path: &std::path::Path) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(&evaluation::sim::tfstate_json(state))?;
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot rename to {}", path.display()))?;
    Ok(())
}
