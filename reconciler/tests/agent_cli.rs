//! End-to-end: the agent through the `retrace` binary, against a scripted model on a
//! loopback port (`reconciler::agent::scripted`).
//!
//! fixtures/agent/ is an IAM policy tagged `Team = shop` and two SSM parameters holding
//! secrets from sensitive variables (a password and a PEM key in `terraform.tfvars`, also in
//! the state's sensitive `value`s). The trail holds carol's CLI `TagPolicy` call adding
//! `CostCenter = 4410` to the policy (IAM `TagPolicy` has no shipped rule, and a tag list is
//! nothing the drift learner reads), and a `CreateSecret` elsewhere carrying planted
//! secrets: a token under `secretString`, an access key id in its description.
//! `transcripts/iam-TagPolicy.json` is the model's side: look at similar rules and the
//! schema, then propose a `tags` rule.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use reconciler::agent::scripted::{ScriptedModel, load_transcripts};
use serde_json::Value;

/// Every secret planted in the fixture, as it would appear in a request body.
const SECRETS: &[&str] = &[
    "Tr0ub4dor&3-horse-battery",
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
    "BEGIN OPENSSH PRIVATE KEY",
    "xoxb-2231-88412-Zq8LmN3pRtVw",
    "AKIAQ3EXAMPLEKEY7XYZ",
];

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/agent")
        .join(path)
}

fn model() -> ScriptedModel {
    let transcripts = load_transcripts(&fixture("transcripts")).expect("transcripts");
    ScriptedModel::start("127.0.0.1:0", transcripts, Vec::new()).expect("listens")
}

/// A `retrace.toml` with an `[agent]` table pointing at `url`.
fn config(dir: &Path, url: &str, context: &str) -> PathBuf {
    let path = dir.join("retrace.toml");
    let text = format!(
        "[agent]\napi = \"openai\"\nendpoint = \"{url}\"\nmodel = \"scripted\"\nseed = 7\ncontext = \"{context}\"\n"
    );
    std::fs::write(&path, text).expect("config");
    path
}

fn reconcile(config: &Path, kb: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retrace"))
        .env_remove("RETRACE_KB")
        .arg("--config")
        .arg(config)
        .arg("--kb")
        .arg(kb)
        .arg("reconcile")
        .arg("--project")
        .arg(fixture("project"))
        .arg("--state")
        .arg(fixture("terraform.tfstate"))
        .arg("--observed")
        .arg(fixture("observed.tfstate"))
        .arg("--logs")
        .arg(fixture("trail"))
        .args(["--no-terraform", "--format", "json"])
        .args(extra)
        .output()
        .expect("runs")
}

fn report(output: &Output) -> Value {
    assert_ne!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("json report")
}

fn assert_no_secret(text: &str, what: &str) {
    for secret in SECRETS {
        assert!(!text.contains(secret), "{what} holds the secret {secret}");
    }
}

#[test]
fn the_agent_learns_a_rule_and_the_second_run_costs_no_tokens() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = model();
    let config = config(dir.path(), &model.openai_url(), "focused");
    let kb = dir.path().join("kb.sqlite");

    let first = report(&reconcile(&config, &kb, &[]));
    let task = &first["agent"]["tasks"][0];
    assert_eq!(task["api"], "TagPolicy");
    assert_eq!(task["result"]["result"], "validated", "{task}");
    assert_eq!(task["turns"], 2);
    assert!(first["agent"]["usage"]["prompt_tokens"].as_u64().expect("tokens") > 0);
    let diff = first["diff"].as_str().expect("diff");
    assert!(diff.contains("+    CostCenter = \"4410\""), "{diff}");
    let learned = &first["knowledge"]["recorded"]["learned"];
    assert_eq!(learned[0][1], "iam:TagPolicy", "{learned}");
    // Two turns: two requests, neither holding a planted secret.
    let bodies = model.bodies();
    assert_eq!(bodies.len(), 2);
    for body in &bodies {
        assert_no_secret(body, "a request body");
    }

    let second = report(&reconcile(&config, &kb, &[]));
    assert_eq!(second["agent"]["tasks"], Value::Array(Vec::new()));
    assert_eq!(second["agent"]["usage"]["prompt_tokens"], 0);
    assert_eq!(second["agent"]["usage"]["completion_tokens"], 0);
    assert!(second["diff"].as_str().expect("diff").contains("CostCenter"));
    assert_eq!(model.bodies().len(), 2, "the second run sent nothing");

    let shown = Command::new(env!("CARGO_BIN_EXE_retrace"))
        .env_remove("RETRACE_KB")
        .arg("--kb")
        .arg(&kb)
        .args(["kb", "show", &learned[0][0].to_string(), "--format", "json"])
        .output()
        .expect("runs");
    let shown: Value = serde_json::from_slice(&shown.stdout).expect("json");
    let evidence = &shown["evidence"]["agent"];
    assert_eq!(evidence["model"], "scripted", "{shown}");
    assert_eq!(evidence["prompt_tokens"], first["agent"]["usage"]["prompt_tokens"]);
}

#[test]
fn dry_runs_write_prompts_without_secrets_and_the_naive_one_is_larger() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Nothing listens here: a dry run must not send.
    let url = "http://127.0.0.1:9/v1/chat/completions";
    let mut sizes = Vec::new();
    for context in ["focused", "naive"] {
        let config = config(dir.path(), url, context);
        let out = dir.path().join(context);
        let kb = dir.path().join(format!("{context}.sqlite"));
        let done = report(&reconcile(&config, &kb, &["--agent-dry-run", out.to_str().expect("utf-8")]));
        assert_eq!(done["agent"]["tasks"][0]["result"]["result"], "dry-run");
        let prompt = std::fs::read_to_string(out.join("iam-TagPolicy.json")).expect("prompt written");
        assert!(prompt.contains("Task: explain eventName TagPolicy of iam.amazonaws.com"));
        assert_no_secret(&prompt, &format!("the {context} prompt"));
        sizes.push(prompt.len());
    }
    assert!(sizes[1] > sizes[0], "naive {} vs focused {}", sizes[1], sizes[0]);
}

#[test]
fn an_endpoint_that_is_down_is_reported_in_plain_words() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path(), "http://127.0.0.1:9/v1/chat/completions", "focused");
    let done = report(&reconcile(&config, &dir.path().join("kb.sqlite"), &[]));
    let result = &done["agent"]["tasks"][0]["result"];
    assert_eq!(result["result"], "failed");
    let reason = result["detail"].as_str().expect("reason");
    assert!(reason.starts_with("cannot reach the model at http://127.0.0.1:9/"), "{reason}");
    // The call stays unexplained: drift not all absorbed.
    assert_eq!(done["status"], "partial");
}
