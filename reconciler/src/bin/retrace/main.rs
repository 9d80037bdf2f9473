//! The `retrace` command line.

#![forbid(unsafe_code)]

mod check;
mod coverage;
mod events;
mod kb;
mod nightly;
mod reconcile;
mod sources;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// mimalloc: ingest allocates and frees many small strings per record, which it serves
/// faster than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// retrace keeps Terraform code true to the AWS cloud it describes: it reads CloudTrail,
/// finds the changes made outside Terraform, and proposes the code that absorbs them.
#[derive(Debug, Parser)]
#[command(name = "retrace", version, about, long_about = None)]
struct Cli {
    /// Configuration file (default: ./retrace.toml when it exists).
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The knowledge base (SQLite); default: `[knowledge] store` in retrace.toml, else
    /// $XDG_DATA_HOME/retrace/knowledge.sqlite (~/.local/share/retrace/knowledge.sqlite).
    #[arg(long, global = true, value_name = "FILE", env = "RETRACE_KB")]
    kb: Option<PathBuf>,
    /// More log output on standard error (-v info, -vv debug); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List CloudTrail calls with who made them, how, and whether they are out of band.
    Events(events::EventsArgs),
    /// Group out-of-band calls into intents and write the HCL patch that absorbs them.
    Reconcile(reconcile::ReconcileArgs),
    /// Tell what became of one call: its verdict and why, and the intent or finding it ended
    /// in (same trail and project options as `reconcile`).
    Explain(reconcile::ExplainArgs),
    /// Run `reconcile` on the bundled example project, state and trail.
    Demo(reconcile::DemoArgs),
    /// Load a Terraform project and list every construct retrace could not evaluate.
    CheckConfig(check::CheckArgs),
    /// Inspect and share the knowledge base: rules, their track record, past runs.
    Kb(kb::KbArgs),
    /// Reconcile every [[workspace]] of retrace.toml from one read of the events and open or
    /// update a pull request for each.
    Nightly(nightly::NightlyArgs),
}

/// Exit codes shared by every command.
mod exit {
    /// Nothing to do.
    pub const OK: u8 = 0;
    /// An error stopped the command or an input could not be read.
    pub const ERROR: u8 = 1;
}

fn main() -> ExitCode {
    // A usage error exits 1 like any other error: clap's own 2 would read as "patch produced".
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            let code = if error.use_stderr() {
                exit::ERROR
            } else {
                exit::OK
            };
            return ExitCode::from(code);
        }
    };
    init_logging(cli.verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return fail(&error.into()),
    };
    let result = runtime.block_on(async {
        tokio::select! {
            result = run(cli) => result,
            _ = tokio::signal::ctrl_c() => {
                reconciler::ingest::query::cancel_running().await;
                Err(anyhow::anyhow!("interrupted"))
            }
        }
    });
    match result {
        Ok(code) => ExitCode::from(code),
        Err(error) => fail(&error),
    }
}

/// Runs the command.
async fn run(cli: Cli) -> anyhow::Result<u8> {
    let config = sources::load_config(cli.config.as_deref())?;
    let store = || kb::settings(cli.kb.clone(), &config);
    match cli.command {
        Command::Events(args) => events::run(args, &config).await,
        Command::Reconcile(args) => reconcile::run(args, &config, store()?).await,
        Command::Explain(args) => reconcile::explain(args, &config).await,
        Command::Demo(args) => {
            let kb = cli.kb.clone().map(|path| reconcile::KbSettings {
                path,
                demote_after: config.knowledge.demote_after,
            });
            reconcile::demo(args, kb).await
        }
        Command::Kb(args) => kb::run(args, store()?),
        Command::CheckConfig(args) => check::run(args, &config),
        Command::Nightly(args) => {
            nightly::run(args, &config, cli.config.as_deref(), store()?).await
        }
    }
}

/// Standard output behind a buffer: reports are written in many small pieces, and standard
/// output's own line buffering makes a system call of every line (a profile of a 47 MB JSON
/// report put over a quarter of the run there). The caller flushes it, so that a failed write
/// is an error.
fn stdout() -> std::io::BufWriter<std::io::StdoutLock<'static>> {
    std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock())
}

fn fail(error: &anyhow::Error) -> ExitCode {
    let closed_pipe = error
        .downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe);
    if closed_pipe {
        // The reader of our output went away (`retrace events | head`): not an error.
        return ExitCode::from(exit::OK);
    }
    eprintln!(
        "error: {}",
        reconciler::text::escaped(&format!("{error:#}"))
    );
    ExitCode::from(exit::ERROR)
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
}

#[cfg(test)]
mod tests {
    /// The build profile keeps backtraces readable: this test's own frame is named with its
    /// file and line, although the line tables sit compressed in the binary (and, on Linux and
    /// macOS, the rest of the debug information in a separate file).
    #[test]
    #[inline(never)]
    fn backtraces_name_source_lines() {
        let trace = std::backtrace::Backtrace::force_capture().to_string();
        // Paths in the line tables are relative to the package (`./src/...`).
        let here = format!("src/bin/retrace/main.rs:{}", line!() - 2);
        assert!(
            trace.contains("backtraces_name_source_lines") && trace.contains(&here),
            "no `{here}` in the backtrace:\n{trace}"
        );
    }
}
