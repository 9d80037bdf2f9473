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

/// A `retrace.toml` with an `[agent]` table pointing at `url`. The shipped rule for IAM's
/// TagPolicy is withheld, so the call is one no rule explains: the long tail.
fn config(dir: &Path, url: &str, context: &str) -> PathBuf {
    config_withholding(dir, url, context, "\"iam:TagPolicy\"")
}

/// A `retrace.toml` with an `[agent]` table pointing at `url`, withholding the shipped rules
/// `withhold` lists (TOML strings, separated by commas).
fn config_withholding(dir: &Path, url: &str, context: &str, withhold: &str) -> PathBuf {
    let path = dir.join("retrace.toml");
    let text = format!(
        "[knowledge]\nwithhold = [{withhold}]\n\n[agent]\napi = \"openai\"\nendpoint = \"{url}\"\nmodel = \"scripted\"\nseed = 7\ncontext = \"{context}\"\n"
    );
    std::fs::write(&path, text).expect("config");
    path
}

fn reconcile(config: &Path, kb: &Path, extra: &[&str]) -> Output {
    reconcile_in(&fixture(""), Some(config), kb, extra)
}

/// `retrace reconcile` over the project, states and trail under `dir` (the layout of
/// fixtures/agent/), with the configuration when given.
fn reconcile_in(dir: &Path, config: Option<&Path>, kb: &Path, extra: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_retrace"));
    command.env_remove("RETRACE_KB");
    if let Some(config) = config {
        command.arg("--config").arg(config);
    }
    command
        .arg("--kb")
        .arg(kb)
        .arg("reconcile")
        .arg("--project")
        .arg(dir.join("project"))
        .arg("--state")
        .arg(dir.join("terraform.tfstate"))
        .arg("--observed")
        .arg(dir.join("observed.tfstate"))
        .arg("--logs")
        .arg(dir.join("trail"))
        .args(["--no-terraform", "--format", "json"])
        .args(extra)
        .output()
        .expect("runs")
}

fn report(output: &Output) -> Value {
    assert_ne!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
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
    assert!(
        first["agent"]["usage"]["prompt_tokens"]
            .as_u64()
            .expect("tokens")
            > 0
    );
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
    assert!(
        second["diff"]
            .as_str()
            .expect("diff")
            .contains("CostCenter")
    );
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
    assert_eq!(
        evidence["prompt_tokens"],
        first["agent"]["usage"]["prompt_tokens"]
    );
}

#[test]
fn dry_runs_write_prompts_without_secrets_and_only_the_naive_one_holds_the_whole_trail() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Nothing listens here: a dry run must not send.
    let url = "http://127.0.0.1:9/v1/chat/completions";
    for (context, whole_trail) in [("focused", false), ("naive", true)] {
        let config = config(dir.path(), url, context);
        let out = dir.path().join(context);
        let kb = dir.path().join(format!("{context}.sqlite"));
        let done = report(&reconcile(
            &config,
            &kb,
            &["--agent-dry-run", out.to_str().expect("utf-8")],
        ));
        assert_eq!(done["agent"]["tasks"][0]["result"]["result"], "dry-run");
        let prompt =
            std::fs::read_to_string(out.join("iam-TagPolicy.json")).expect("prompt written");
        assert!(prompt.contains("Task: explain eventName TagPolicy of iam.amazonaws.com"));
        assert_no_secret(&prompt, &format!("the {context} prompt"));
        // The naive prompt carries every record (the CreateSecret one too) and whole files.
        assert_eq!(prompt.contains("CreateSecret"), whole_trail, "{context}");
        assert_eq!(
            prompt.contains("--- terraform.tfvars"),
            whole_trail,
            "{context}"
        );
    }
}

#[test]
fn an_endpoint_that_is_down_is_reported_in_plain_words() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(
        dir.path(),
        "http://127.0.0.1:9/v1/chat/completions",
        "focused",
    );
    let done = report(&reconcile(&config, &dir.path().join("kb.sqlite"), &[]));
    let result = &done["agent"]["tasks"][0]["result"];
    assert_eq!(result["result"], "failed");
    let reason = result["detail"].as_str().expect("reason");
    assert!(
        reason.starts_with("cannot reach the model at http://127.0.0.1:9/"),
        "{reason}"
    );
    // The call stays unexplained: drift not all absorbed.
    assert_eq!(done["status"], "partial");
}

/// Every `*.tfstate` under `fixtures/`, recursively.
fn fixture_states(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("fixtures").flatten() {
        let path = entry.path();
        if path.is_dir() {
            fixture_states(&path, out);
        } else if path.extension().is_some_and(|e| e == "tfstate") {
            out.push(path);
        }
    }
}

#[test]
fn no_sensitive_value_of_any_fixture_state_survives_redaction() {
    use reconciler::agent::redact::Redactor;
    use reconciler::terraform::state::{PathStep, State};
    let schema = knowledge::schema::ProviderSchema::bundled().expect("schema");
    let mut states = Vec::new();
    fixture_states(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures"),
        &mut states,
    );
    let mut checked = 0;
    for path in states {
        let Ok(state) = State::read(&path) else {
            continue;
        };
        let redactor = Redactor::new(&[&state], None, schema);
        for instance in &state.instances {
            let text = redactor.text(&instance.attributes.to_string());
            let sensitive_paths = instance
                .sensitive
                .iter()
                .filter_map(|p| match p.as_slice() {
                    [PathStep::Key(name)] => Some(name.clone()),
                    _ => None,
                });
            let schema_sensitive = instance
                .attributes
                .as_object()
                .into_iter()
                .flat_map(|m| m.keys())
                .filter(|k| {
                    schema
                        .attribute(&instance.resource_type, k)
                        .is_some_and(|a| a.sensitive)
                })
                .cloned();
            for name in sensitive_paths.chain(schema_sensitive) {
                let Some(value) = instance.attributes.get(&name).and_then(|v| v.as_str()) else {
                    continue;
                };
                if value.len() >= 6 {
                    checked += 1;
                    let shown = serde_json::Value::String(value.to_owned()).to_string();
                    assert!(
                        !text.contains(&shown[1..shown.len() - 1]),
                        "{}: {} {name}",
                        path.display(),
                        instance.address
                    );
                }
            }
        }
    }
    // The agent fixture alone has two; the other fixtures add their own.
    assert!(checked >= 2, "{checked}");
}

#[tokio::test]
async fn the_client_retries_a_busy_endpoint_and_names_a_refused_key() {
    use reconciler::agent::client::{Client, Message, Part, Role};
    use reconciler::agent::scripted::Canned;
    let busy = Canned {
        status: 429,
        body: r#"{"error":{"message":"slow down"}}"#.into(),
        retry_after: Some(0),
    };
    let refused = Canned {
        status: 401,
        body: r#"{"error":{"message":"Incorrect API key"}}"#.into(),
        retry_after: None,
    };
    let garbled = Canned {
        status: 200,
        body: "<html>".into(),
        retry_after: None,
    };
    let transcripts = load_transcripts(&fixture("transcripts")).expect("transcripts");
    let model = ScriptedModel::start("127.0.0.1:0", transcripts, vec![busy, refused, garbled])
        .expect("listens");
    let settings: reconciler::agent::AgentConfig = toml::from_str(&format!(
        "api = \"anthropic\"\nendpoint = \"{}\"\nmodel = \"m\"\nretries = 0\n",
        model.anthropic_url()
    ))
    .expect("settings");
    let hello = [Message {
        role: Role::User,
        parts: vec![Part::Text {
            text: "hello".into(),
        }],
    }];
    let client = Client::new(&settings).expect("client");
    let busy = client
        .complete("s", &hello, &[])
        .await
        .expect_err("busy, no retries left");
    assert_eq!(
        busy.to_string(),
        "the model endpoint kept failing after 1 attempts (last: HTTP 429): slow down"
    );
    let refused = client
        .complete("s", &hello, &[])
        .await
        .expect_err("refused");
    assert_eq!(
        refused.to_string(),
        "the model endpoint refused the API key (HTTP 401): Incorrect API key"
    );
    let garbled = client
        .complete("s", &hello, &[])
        .await
        .expect_err("garbled");
    assert!(
        garbled
            .to_string()
            .starts_with("the model's reply is not a valid Anthropic Messages response"),
        "{garbled}"
    );
    // With retries, a 429 followed by an answer succeeds.
    let again = ScriptedModel::start(
        "127.0.0.1:0",
        Vec::new(),
        vec![Canned {
            status: 503,
            body: "{}".into(),
            retry_after: Some(0),
        }],
    )
    .expect("listens");
    let settings: reconciler::agent::AgentConfig = toml::from_str(&format!(
        "api = \"anthropic\"\nendpoint = \"{}\"\nmodel = \"m\"\nretries = 2\n",
        again.anthropic_url()
    ))
    .expect("settings");
    let reply = Client::new(&settings)
        .expect("client")
        .complete("s", &hello, &[])
        .await
        .expect("second attempt answers");
    assert!(reply.usage.prompt_tokens > 0);
    assert_eq!(again.bodies().len(), 2);
}

/// fixtures/agent/place/ is a log bucket made by a shared module outside the root
/// (`../modules/bucket`), whose versioning status is `var.versioning_enabled ? "Enabled" :
/// "Suspended"`; erin enabled versioning from the CLI. The planner cannot write the status
/// (the module is shared, and a condition is no value to set), so the change is not placed.
/// `transcripts/s3-place-PutBucketVersioning.json` finds the module input, sets it in the
/// root's module call, checks and submits.
fn reconcile_placement(config: Option<&Path>, kb: &Path) -> Output {
    reconcile_in(&fixture("place"), config, kb, &[])
}

#[test]
fn the_agent_places_a_change_the_planner_could_not_with_checked_edits() {
    let dir = tempfile::tempdir().expect("tempdir");
    let alone = reconcile_placement(None, &dir.path().join("alone.sqlite"));
    assert_eq!(alone.status.code(), Some(3));
    let alone = report(&alone);
    let reason = alone["plan"]["unplanned"][0]["reason"]
        .as_str()
        .expect("a reason");
    assert!(reason.contains("a module outside this root"), "{reason}");

    let model = model();
    let config = dir.path().join("retrace.toml");
    std::fs::write(
        &config,
        format!(
            "[agent]\napi = \"openai\"\nendpoint = \"{}\"\nmodel = \"scripted\"\n",
            model.openai_url()
        ),
    )
    .expect("config");
    let output = reconcile_placement(Some(&config), &dir.path().join("kb.sqlite"));
    assert_eq!(output.status.code(), Some(2), "drift patched");
    let done = report(&output);
    let diff = done["diff"].as_str().expect("diff");
    assert!(
        diff.contains("-  versioning_enabled = false\n+  versioning_enabled = true\n"),
        "{diff}"
    );
    assert_eq!(
        diff.matches("+++ ").count(),
        1,
        "only main.tf changes: {diff}"
    );
    assert_eq!(done["plan"]["unplanned"], Value::Array(Vec::new()));
    assert_eq!(
        done["plan"]["placed"][0]["resource"],
        "module.logs.aws_s3_bucket_versioning.this"
    );
    let task = &done["agent"]["tasks"][0];
    assert_eq!(task["placement"], true);
    assert_eq!(task["result"]["result"], "validated", "{task}");
    assert_eq!(task["turns"], 3);
    assert!(
        done["validations"][0]["passed"]
            .as_bool()
            .expect("a verdict")
    );
    let first = &model.bodies()[0];
    assert!(
        first.contains(
            "Task: place the change of eventName PutBucketVersioning of s3.amazonaws.com"
        ),
        "{first}"
    );
    assert!(
        first.contains("module \\\"logs\\\""),
        "the module call is in the context"
    );
}

#[test]
fn without_the_shipped_rules_only_the_agent_explains_the_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = model();
    let config = config_withholding(dir.path(), &model.openai_url(), "focused", "");
    let tagged = "+    CostCenter = \"4410\"";
    let kinds = |done: &Value| -> Vec<(String, String)> {
        let findings = done["findings"].as_array().expect("findings");
        let text = |v: &Value| v.as_str().expect("a string").to_owned();
        findings
            .iter()
            .map(|f| (text(&f["kind"]), text(&f["api"])))
            .collect()
    };

    // The shipped rule explains TagPolicy: the agent is not asked, and a shipped rule knows
    // CreateSecret creates a secret the code does not manage.
    let shipped = report(&reconcile(&config, &dir.path().join("shipped.sqlite"), &[]));
    assert!(
        shipped["agent"]["tasks"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "{shipped}"
    );
    assert!(shipped["diff"].as_str().expect("diff").contains(tagged));
    assert_eq!(
        kinds(&shipped),
        [("unowned".to_owned(), "CreateSecret".to_owned())]
    );

    // Without them the agent explains TagPolicy and its rule is learned; nothing explains
    // CreateSecret.
    let alone = report(&reconcile(
        &config,
        &dir.path().join("alone.sqlite"),
        &["--no-shipped-rules"],
    ));
    assert_eq!(alone["agent"]["tasks"][0]["api"], "TagPolicy");
    assert_eq!(alone["agent"]["tasks"][0]["result"]["result"], "validated");
    assert!(alone["diff"].as_str().expect("diff").contains(tagged));
    let learned = &alone["knowledge"]["recorded"]["learned"];
    assert_eq!(learned[0][1], "iam:TagPolicy", "{learned}");
    assert_eq!(
        kinds(&alone),
        [("unexplained".to_owned(), "CreateSecret".to_owned())]
    );

    // Without them and without the agent, nothing explains TagPolicy either (the drift
    // learner reads no tag list): no patch.
    let neither = report(&reconcile(
        &config,
        &dir.path().join("neither.sqlite"),
        &["--no-shipped-rules", "--no-agent"],
    ));
    assert_eq!(neither["diff"], "");
    assert!(
        kinds(&neither).contains(&("unexplained".to_owned(), "TagPolicy".to_owned())),
        "{neither}"
    );
}
