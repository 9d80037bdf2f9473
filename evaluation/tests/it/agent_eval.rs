//! The long tail through the harness: `retrace-eval run --agent` with shipped rules withheld,
//! against the scripted model (recorded tool-call transcripts in evaluation/agent/transcripts)
//! on a loopback port, exactly as against a real endpoint.

use std::path::{Path, PathBuf};
use std::process::Command;

use knowledge::store::Store;
use reconciler::agent::scripted::{ScriptedModel, load_transcripts};
use serde_json::Value;

/// The rules withheld: each has a transcript, and scenarios of the project call it. The agent
/// explains only (`place = false`): placements are not learned, and these tests measure what
/// is.
const WITHHELD: &str = "logs:PutRetentionPolicy,iam:UpdateRole,iam:TagRole,sns:SetTopicAttributes,s3:PutBucketVersioning";

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

fn model() -> ScriptedModel {
    let transcripts = load_transcripts(&repo("evaluation/agent/transcripts")).expect("transcripts");
    ScriptedModel::start("127.0.0.1:0", transcripts, Vec::new()).expect("listens")
}

fn agent_config(dir: &Path, model: &ScriptedModel) -> PathBuf {
    let path = dir.join("agent.toml");
    let text = format!(
        "[agent]\napi = \"openai\"\nendpoint = \"{}\"\nmodel = \"scripted\"\nseed = 7\nplace = false\n",
        model.openai_url()
    );
    std::fs::write(&path, text).expect("config");
    path
}

/// How many of the scenarios that call a withheld API each run takes, spread over the
/// categories (`--sample`): the 16 call the same four withheld APIs the whole 50 do, and each
/// run costs seconds rather than a minute (the whole set is `run --withheld-only`).
const SAMPLE: &str = "16";

/// Runs the harness on a fixed sample of the serverless project's scenarios that call a
/// withheld API; returns results.json.
fn run(out: &Path, extra: &[&str]) -> Value {
    let status = Command::new(env!("CARGO_BIN_EXE_retrace-eval"))
        .current_dir(repo(""))
        .args(["run", "--project", "serverless", "--n", "1", "--k", "1"])
        .args([
            "--withhold",
            WITHHELD,
            "--withheld-only",
            "--sample",
            SAMPLE,
            "--out",
        ])
        .arg(out)
        .args(extra)
        .status()
        .expect("runs");
    assert!(
        matches!(status.code(), Some(0 | 3)),
        "the harness ran: {status}"
    );
    read(&out.join("results.json"))
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("written")).expect("JSON")
}

fn passed(results: &Value) -> u64 {
    results["overall"]["passed"].as_u64().expect("passed")
}

/// Each scenario's sources of its fixes (`fixed_by`) and its tokens.
fn sources(results: &Value) -> Vec<(Vec<String>, u64)> {
    let scenarios = results["scenarios"].as_array().expect("scenarios");
    scenarios
        .iter()
        .map(|s| {
            let fixed_by = s["fixed_by"].as_array().map_or(Vec::new(), |sources| {
                sources
                    .iter()
                    .map(|v| v.as_str().expect("a source").to_owned())
                    .collect()
            });
            (fixed_by, s["tokens"].as_u64().expect("tokens"))
        })
        .collect()
}

/// How many scenarios name `source` among their fixes' sources.
fn fixed_by(results: &Value, source: &str) -> usize {
    sources(results)
        .iter()
        .filter(|(fixed_by, _)| fixed_by.iter().any(|s| s == source))
        .count()
}

#[test]
fn the_agent_explains_the_long_tail_with_a_smaller_context_than_the_naive_baseline() {
    let dir = tempfile::tempdir().expect("temp dir");
    let model = model();
    let config = agent_config(dir.path(), &model);
    let alone = run(&dir.path().join("alone"), &[]);
    assert_eq!(alone["tokens"], 0);
    let out = dir.path().join("agent");
    let with_agent = run(
        &out,
        &[
            "--agent",
            config.to_str().expect("path"),
            "--naive-baseline",
        ],
    );
    assert!(
        passed(&with_agent) > passed(&alone),
        "the agent explains calls no rule does: {} passed with it, {} without",
        passed(&with_agent),
        passed(&alone)
    );
    assert!(with_agent["prompt_tokens"].as_u64().expect("tokens") > 0);
    // Without the agent every fix is the shipped rules'; with it, the model's rules fix some
    // scenarios, and a fix is the model's only where tokens were spent.
    assert!(fixed_by(&alone, "shipped") > 0);
    for source in ["model", "learner", "earlier"] {
        assert_eq!(fixed_by(&alone, source), 0, "{source} without the agent");
    }
    assert!(
        fixed_by(&with_agent, "model") > 0,
        "{:?}",
        sources(&with_agent)
    );
    for (fixed_by, tokens) in sources(&with_agent) {
        if fixed_by.iter().any(|s| s == "model") {
            assert!(tokens > 0, "a model's fix without tokens: {fixed_by:?}");
        }
    }
    let report = std::fs::read_to_string(out.join("results.md")).expect("results.md");
    assert!(report.contains("## Where the fixes came from"), "{report}");
    let comparison = read(&out.join("comparison.json"));
    let context = comparison["context_ratio"]
        .as_f64()
        .expect("a context ratio");
    assert!(context >= 3.0, "retrace's context is {context:.1}x smaller");
    // The total prompt tokens are no measure of context: the token bounds count the bytes of
    // each request, so the naive agent's oversized requests are stopped before they are sent
    // (issue 29). The ratio is still reported.
    assert!(
        comparison["prompt_token_ratio"].as_f64().is_some(),
        "a prompt ratio"
    );
    assert_eq!(
        comparison["retrace"]["pass_at_1"], with_agent["overall"]["pass_at_1"],
        "the comparison reports the same run"
    );
    let bodies = model.bodies();
    assert!(!bodies.is_empty());
    assert!(
        bodies.iter().all(|b| b.contains("Task: explain eventName")),
        "every request is a task"
    );
}

#[test]
fn what_the_agent_found_is_learned_and_a_second_run_costs_no_tokens() {
    let dir = tempfile::tempdir().expect("temp dir");
    let model = model();
    let config = agent_config(dir.path(), &model);
    let store = dir.path().join("knowledge.db");
    let args = [
        "--agent",
        config.to_str().expect("path"),
        "--knowledge",
        store.to_str().expect("path"),
    ];
    let first = run(&dir.path().join("first"), &args);
    assert!(
        first["tokens"].as_u64().expect("tokens") > 0,
        "{}",
        first["tokens"]
    );
    let stats = Store::open(&store).expect("store").stats().expect("stats");
    assert!(
        stats.rules_by_provenance.get("agent").copied().unwrap_or(0) >= 1,
        "a rule the agent found is kept as such: {:?}",
        stats.rules_by_provenance
    );
    assert!(stats.prompt_tokens > 0, "the store keeps the tokens");
    let requests = model.bodies().len();
    let second = run(&dir.path().join("second"), &args);
    assert_eq!(
        second["tokens"], 0,
        "the same changes cost nothing the second time"
    );
    assert_eq!(model.bodies().len(), requests, "nothing was sent");
    assert!(passed(&second) >= passed(&first));
    // The second run's fixes come from what the first learned, none from the model.
    assert!(fixed_by(&first, "model") > 0, "{:?}", sources(&first));
    assert!(fixed_by(&second, "earlier") > 0, "{:?}", sources(&second));
    assert_eq!(fixed_by(&second, "model"), 0, "{:?}", sources(&second));
}

#[test]
fn two_rules_proposed_for_one_api_do_not_stop_the_run() {
    // web3tier-multi-actor-004: two people change two attributes of the alerts topic; with
    // SetTopicAttributes withheld, the drift learner reads each call its own way and proposed
    // two rules for the one API. One is kept: the run once stopped with "rule
    // sns:SetTopicAttributes is defined twice".
    let dir = tempfile::tempdir().expect("temp dir");
    let model = model();
    let config = agent_config(dir.path(), &model);
    let out = dir.path().join("out");
    let status = Command::new(env!("CARGO_BIN_EXE_retrace-eval"))
        .current_dir(repo(""))
        .args([
            "run",
            "--scenario",
            "web3tier-multi-actor-004",
            "--n",
            "1",
            "--k",
            "1",
        ])
        .args(["--withhold", WITHHELD, "--agent"])
        .arg(&config)
        .arg("--out")
        .arg(&out)
        .status()
        .expect("runs");
    assert!(matches!(status.code(), Some(0 | 3)), "{status}");
    let results = read(&out.join("results.json"));
    let reasons = results["scenarios"][0]["reasons"].to_string();
    assert!(!reasons.contains("the reconciler stopped"), "{reasons}");
    assert!(
        results["tokens"].as_u64().expect("tokens") > 0,
        "the agent ran"
    );
}
