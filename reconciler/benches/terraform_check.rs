//! `retrace demo` with the real Terraform check, cold and warm, against a bare
//! `terraform plan -refresh=false` of the patched demo project, printed as figures (not a
//! timed test).
//!
//! Run with `cargo bench -p reconciler --bench terraform_check [-- --runs N]`.
//!
//! - bare plan: the demo project patched by `retrace reconcile --write`, initialised once from
//!   the plugin directory (not timed), planned offline against the demo's state;
//! - the old check's four commands on the same copy, as the check ran them before it kept its
//!   working directory: `init` into a fresh `.terraform`, `validate`, `plan -out`, `show -json`;
//! - `retrace demo` cold: a new knowledge base directory, so Terraform's working directory is
//!   initialised in the run;
//! - `retrace demo` warm: the same knowledge base directory again, the working directory reused.
//!
//! Each row is the best of `--runs` runs (default 3; cold runs each get a new directory). The
//! target of issue 27 — warm `retrace demo` under 1.3x the bare plan — is checked at the end.
//! Needs `terraform` and the AWS provider in a plugin directory (`TF_PLUGIN_DIR`, default
//! `/opt/tf-plugins`); without them it prints why and exits.

#![allow(unsafe_code)]

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

// Each benchmark uses a part of the shared code.
#[allow(dead_code)]
mod common;

use common::measure::{Usage, run_with_codes};

/// The target: warm `retrace demo` within this factor of a bare plan.
const TARGET_RATIO: f64 = 1.3;

/// The AWS provider's path under a plugin directory.
const AWS: &str = "registry.terraform.io/hashicorp/aws";

fn main() -> io::Result<()> {
    let runs = runs();
    let retrace = PathBuf::from(env!("CARGO_BIN_EXE_retrace"));
    let plugins = std::env::var_os("TF_PLUGIN_DIR")
        .map_or_else(|| PathBuf::from("/opt/tf-plugins"), PathBuf::from);
    let terraform = Command::new("terraform").arg("version").output();
    if !terraform.is_ok_and(|o| o.status.success()) || !plugins.join(AWS).is_dir() {
        println!(
            "skipped: needs terraform on PATH and the AWS provider under {} (TF_PLUGIN_DIR)",
            plugins.display()
        );
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let example = dir.path().join("example");
    run(
        Command::new(&retrace)
            .args(["demo", "--no-record", "--no-terraform", "--out"])
            .arg(&example),
        &[3],
    )?;
    let config = example.join("retrace.toml");
    run(
        Command::new(&retrace).arg("--config").arg(&config).args([
            "reconcile",
            "--write",
            "--no-record",
            "--no-terraform",
        ]),
        &[2, 3],
    )?;
    let bare = dir.path().join("bare");
    copy_dir(&example.join("project"), &bare)?;
    std::fs::copy(
        example.join("terraform.tfstate"),
        bare.join("terraform.tfstate"),
    )?;
    std::fs::write(bare.join("bench_override.tf"), OVERRIDE)?;
    let plugin_dir = format!("-plugin-dir={}", plugins.display());
    run(
        terraform_in(&bare).args(["init", "-input=false", &plugin_dir]),
        &[0],
    )?;
    println!(
        "machine: {} cores",
        std::thread::available_parallelism().map_or(0, usize::from)
    );
    println!(
        "{:<44} {:>8} {:>8}",
        "what (best of runs)", "wall s", "cpu s"
    );
    let plan = best(
        runs,
        || {
            let mut c = terraform_in(&bare);
            c.args(["plan", "-refresh=false", "-input=false", "-lock=false"]);
            c
        },
        &[0, 2],
    )?;
    row("bare terraform plan -refresh=false", plan);
    let old = best(runs, || old_check(&bare, &plugin_dir), &[0])?;
    row("old check: init, validate, plan, show", old);
    let mut cold_runs = Vec::new();
    for n in 0..runs {
        let kb = dir.path().join(format!("kb-cold-{n}/knowledge.sqlite"));
        cold_runs.push(best(1, || demo(&retrace, &kb), &[3])?);
    }
    let cold = fastest(&cold_runs);
    row("retrace demo, cold (working directory made)", cold);
    let kb = dir.path().join("kb-cold-0/knowledge.sqlite");
    let warm = best(runs, || demo(&retrace, &kb), &[3])?;
    row("retrace demo, warm (working directory reused)", warm);
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    let warm_ratio = ratio(warm.wall, plan.wall);
    let verdict = if warm_ratio < TARGET_RATIO {
        "met"
    } else {
        "NOT met"
    };
    println!(
        "\nwarm retrace demo / bare plan: wall {warm_ratio:.2}x (target < {TARGET_RATIO}x: \
         {verdict}), cpu {:.2}x",
        ratio(warm.cpu, plan.cpu)
    );
    for (what, usage) in [("cold retrace demo", cold), ("old check", old)] {
        println!(
            "{what} / bare plan: wall {:.2}x, cpu {:.2}x",
            ratio(usage.wall, plan.wall),
            ratio(usage.cpu, plan.cpu)
        );
    }
    Ok(())
}

/// The override that plans the copy offline against its local state.
const OVERRIDE: &str = "terraform {\n  backend \"local\" {\n    path = \"terraform.tfstate\"\n  }\n}\n\nprovider \"aws\" {\n  skip_credentials_validation = true\n  skip_requesting_account_id  = true\n  skip_metadata_api_check     = true\n}\n";

/// `--runs N` from the arguments (cargo bench adds `--bench`), default 3.
fn runs() -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(3)
        .max(1)
}

/// `program` in `dir` with Terraform offline: dummy keys, no metadata service.
fn offline(program: &str, dir: &Path) -> Command {
    let mut c = Command::new(program);
    c.current_dir(dir)
        .env("TF_IN_AUTOMATION", "1")
        .env("AWS_ACCESS_KEY_ID", "bench")
        .env("AWS_SECRET_ACCESS_KEY", "bench")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_EC2_METADATA_DISABLED", "true");
    c
}

/// `terraform` in `dir`, offline.
fn terraform_in(dir: &Path) -> Command {
    offline("terraform", dir)
}

/// The check as it ran before: a fresh init, validate, plan into a file, show the file.
fn old_check(dir: &Path, plugin_dir: &str) -> Command {
    let script = format!(
        "rm -rf old && mkdir old && cp *.tf *.tfvars terraform.tfstate old/ && cd old && \
         terraform init -input=false {plugin_dir} >/dev/null && terraform validate -json >/dev/null && \
         {{ terraform plan -refresh=false -input=false -lock=false -detailed-exitcode -out=p >/dev/null; \
         [ $? -ne 1 ]; }} && terraform show -json p >/dev/null"
    );
    let mut shell = offline("sh", dir);
    shell.args(["-c", &script]);
    shell
}

/// `retrace demo` recording into `kb` (Terraform's working directory is kept beside it).
fn demo(retrace: &Path, kb: &Path) -> Command {
    let mut c = Command::new(retrace);
    c.arg("--kb").arg(kb).arg("demo");
    c
}

/// Runs a command to one of the `ok` exit codes.
fn run(command: &mut Command, ok: &[i32]) -> io::Result<()> {
    let output = command.output()?;
    match output.status.code() {
        Some(code) if ok.contains(&code) => Ok(()),
        _ => Err(io::Error::other(format!(
            "{command:?}: {}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ))),
    }
}

/// The best wall time (and its CPU time) of `runs` runs.
fn best(runs: usize, mut make: impl FnMut() -> Command, ok: &[i32]) -> io::Result<Usage> {
    let mut all = Vec::new();
    for _ in 0..runs {
        all.push(run_with_codes(make(), ok)?.0);
    }
    Ok(fastest(&all))
}

/// The run with the least wall time.
fn fastest(runs: &[Usage]) -> Usage {
    runs.iter()
        .copied()
        .min_by_key(|u| u.wall)
        .unwrap_or(Usage {
            wall: Duration::ZERO,
            cpu: Duration::ZERO,
            peak_rss_bytes: 0,
        })
}

fn row(what: &str, usage: Usage) {
    println!(
        "{what:<44} {:>8.2} {:>8.2}",
        usage.wall.as_secs_f64(),
        usage.cpu.as_secs_f64()
    );
}

/// Copies the files of a directory (the demo project has no subdirectories).
fn copy_dir(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}
