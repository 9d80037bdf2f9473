//! End-to-end: the agent through the `retrace` binary against hostile and merely wrong model
//! endpoints on a loopback port, in both wire formats (chat completions and Anthropic
//! Messages). The model is untrusted input: whatever it answers, no security-relevant change
//! is absorbed, no file is written outside the sandbox, no planted secret is sent, the bounds
//! hold, and every failure ends in plain words with exit code 3.
//!
//! The project is a copy of fixtures/agent/ in a temporary directory, with a trail of our
//! own: a `CreatePolicyVersion` that makes the deploy policy allow every action (its shipped
//! rule withheld, so it is the long tail), and a Lambda configuration change whose
//! environment carries planted secrets.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// The policy document the trail's call sets: every action on everything.
const ADMIN: &str =
    r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}"#;

/// The same document as the caller sent it: the request keeps the caller's layout, the
/// refreshed state holds it compact, so the drift learner cannot match the two.
const ADMIN_SENT: &str = "{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [\n    {\"Effect\": \"Allow\", \"Action\": \"*\", \"Resource\": \"*\"}\n  ]\n}\n";

const POLICY_ARN: &str = "arn:aws:iam::111122223333:policy/shop-prod-deploy";

/// Every secret planted in the project, the states and the trail.
const SECRETS: &[&str] = &[
    "Tr0ub4dor&3-horse-battery",
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
    "Smtp-plain-pass-77",
    "hunter2-lambda-pw",
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "Pg-s3cret-pass",
];

/// One scripted answer of the hostile endpoint.
struct Answer {
    status: u16,
    body: String,
    retry_after: Option<u64>,
    delay: Duration,
}

impl Answer {
    fn ok(body: String) -> Answer {
        Answer {
            status: 200,
            body,
            retry_after: None,
            delay: Duration::ZERO,
        }
    }
}

/// How the endpoint answers: given the wire format, the turn (assistant messages already in
/// the request) and the request count so far.
type Behaviour = dyn Fn(&str, usize, usize) -> Answer + Send + Sync;

/// A loopback endpoint answering by a behaviour, keeping every request body.
struct Hostile {
    url: String,
    bodies: Arc<Mutex<Vec<String>>>,
}

impl Hostile {
    fn start(api: &'static str, behaviour: Box<Behaviour>) -> Hostile {
        let listener = TcpListener::bind("127.0.0.1:0").expect("listens");
        let url = format!("http://{}/v1/chat", listener.local_addr().expect("addr"));
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&bodies);
        let behaviour: Arc<Behaviour> = Arc::from(behaviour);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (kept, behaviour) = (Arc::clone(&kept), Arc::clone(&behaviour));
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                    let Some(body) = read_request(&mut reader) else {
                        return;
                    };
                    let turn = assistant_turns(&body);
                    let count = {
                        let mut all = kept.lock().expect("lock");
                        all.push(body);
                        all.len()
                    };
                    let answer = behaviour(api, turn, count);
                    std::thread::sleep(answer.delay);
                    let retry = answer
                        .retry_after
                        .map(|s| format!("Retry-After: {s}\r\n"))
                        .unwrap_or_default();
                    let head = format!(
                        "HTTP/1.1 {} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{retry}Connection: close\r\n\r\n",
                        answer.status,
                        answer.body.len()
                    );
                    let mut stream = stream;
                    let _ = stream.write_all(head.as_bytes());
                    let _ = stream.write_all(answer.body.as_bytes());
                });
            }
        });
        Hostile { url, bodies }
    }

    fn bodies(&self) -> Vec<String> {
        self.bodies.lock().expect("lock").clone()
    }
}

fn read_request(reader: &mut impl BufRead) -> Option<String> {
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    String::from_utf8(body).ok()
}

fn assistant_turns(body: &str) -> usize {
    let value: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    value["messages"]
        .as_array()
        .map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count())
}

/// A reply calling tools, in the endpoint's format, with or without a usage count.
fn tool_reply(api: &str, calls: &[(&str, Value)], usage: bool) -> String {
    let mut reply = if api == "openai" {
        let calls: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(i, (name, input))| {
                json!({"id": format!("c{i}"), "type": "function",
                    "function": {"name": name, "arguments": input.to_string()}})
            })
            .collect();
        json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": calls}}]})
    } else {
        let blocks: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(i, (name, input))| json!({"type": "tool_use", "id": format!("t{i}"), "name": name, "input": input}))
            .collect();
        json!({"content": blocks, "stop_reason": "tool_use"})
    };
    if usage {
        reply["usage"] = if api == "openai" {
            json!({"prompt_tokens": 1, "completion_tokens": 1})
        } else {
            json!({"input_tokens": 1, "output_tokens": 1})
        };
    }
    reply.to_string()
}

/// A reply with text only: the model stops.
fn text_reply(api: &str) -> String {
    if api == "openai" {
        json!({"choices": [{"message": {"role": "assistant", "content": "done"}}]}).to_string()
    } else {
        json!({"content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn"})
            .to_string()
    }
}

/// Proposes `rule` on the first turn, then stops.
fn proposes(rule: Value) -> Box<Behaviour> {
    Box::new(move |api, turn, _| match turn {
        0 => Answer::ok(tool_reply(
            api,
            &[("propose_rule", json!({"rule": rule}))],
            true,
        )),
        _ => Answer::ok(text_reply(api)),
    })
}

/// Makes the given tool calls, one per turn, then stops.
fn calls_in_turn(calls: Vec<(&'static str, Value)>) -> Box<Behaviour> {
    Box::new(move |api, turn, _| match calls.get(turn) {
        Some((name, input)) => Answer::ok(tool_reply(api, &[(name, input.clone())], true)),
        None => Answer::ok(text_reply(api)),
    })
}

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/agent")
        .join(path)
}

/// A working copy of fixtures/agent/ under `dir/work` with this suite's trail, the observed
/// cloud holding the admin policy (and not the fixture's own tag change), and a plain (not
/// sensitive) password in the variables.
fn workspace(dir: &Path) -> PathBuf {
    let work = dir.join("work");
    std::fs::create_dir_all(work.join("project")).expect("dirs");
    std::fs::create_dir_all(work.join("trail")).expect("dirs");
    std::fs::create_dir_all(dir.join("tmp")).expect("dirs");
    let main = std::fs::read_to_string(fixture("project/main.tf")).expect("main.tf");
    std::fs::write(
        work.join("project/main.tf"),
        format!("{main}\nvariable \"smtp_password\" {{\n  type = string\n}}\n"),
    )
    .expect("main.tf");
    let vars = std::fs::read_to_string(fixture("project/terraform.tfvars")).expect("tfvars");
    std::fs::write(
        work.join("project/terraform.tfvars"),
        format!("{vars}smtp_password = \"Smtp-plain-pass-77\"\n"),
    )
    .expect("tfvars");
    std::fs::copy(fixture("terraform.tfstate"), work.join("terraform.tfstate")).expect("state");
    let mut observed: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("observed.tfstate")).expect("observed"),
    )
    .expect("json");
    for resource in observed["resources"].as_array_mut().expect("resources") {
        if resource["type"] == "aws_iam_policy" {
            let attributes = &mut resource["instances"][0]["attributes"];
            attributes["policy"] = json!(ADMIN);
            // The fixture's observed cloud has a tag its own trail adds; this trail does not.
            attributes["tags"] = json!({"Team": "shop"});
            attributes["tags_all"] = json!({"Team": "shop"});
        }
    }
    std::fs::write(work.join("observed.tfstate"), observed.to_string()).expect("observed");
    let trail = json!({"Records": [
        record("e1", "iam.amazonaws.com", "CreatePolicyVersion", json!({
            "policyArn": POLICY_ARN, "policyDocument": ADMIN_SENT, "setAsDefault": true}),
            json!({"policyVersion": {"versionId": "v2", "isDefaultVersion": true}})),
        record("e2", "lambda.amazonaws.com", "UpdateFunctionConfiguration20150331v2", json!({
            "functionName": "shop-prod-worker",
            "environment": {"variables": {
                "DB_PASS": "hunter2-lambda-pw",
                "STRIPE_KEY": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
                "DATABASE_URL": "postgres://app:Pg-s3cret-pass@db.internal:5432/shop"}}}),
            Value::Null),
    ]});
    std::fs::write(work.join("trail/records.json"), trail.to_string()).expect("trail");
    work
}

fn record(id: &str, source: &str, name: &str, request: Value, response: Value) -> Value {
    json!({
        "eventVersion": "1.09",
        "userIdentity": {"type": "IAMUser", "arn": "arn:aws:iam::111122223333:user/mallory",
            "accountId": "111122223333", "userName": "mallory"},
        "eventTime": "2026-11-20T09:14:27Z",
        "eventSource": source,
        "eventName": name,
        "awsRegion": "us-east-1",
        "sourceIPAddress": "198.51.100.23",
        "userAgent": "aws-cli/2.22.35",
        "requestParameters": request,
        "responseElements": response,
        "requestID": format!("r-{id}"),
        "eventID": format!("{id}-6b3c-4f8a-9e15-c2d7b08f3a64"),
        "readOnly": false,
        "eventType": "AwsApiCall",
        "managementEvent": true,
        "recipientAccountId": "111122223333",
    })
}

/// A `retrace.toml` withholding the shipped rule for the policy call, with an `[agent]` table
/// for `url` when given, and these extra agent settings.
fn config(dir: &Path, api: &str, url: Option<&str>, extra: &str) -> PathBuf {
    config_withholding(dir, api, url, extra, "iam:CreatePolicyVersion")
}

/// [`config`] withholding the shipped rule `withheld` instead.
fn config_withholding(
    dir: &Path,
    api: &str,
    url: Option<&str>,
    extra: &str,
    withheld: &str,
) -> PathBuf {
    let path = dir.join(format!("retrace-{api}.toml"));
    let agent = url.map_or(String::new(), |url| {
        let mut settings: BTreeMap<&str, String> = BTreeMap::from([
            ("api", format!("\"{api}\"")),
            ("endpoint", format!("\"{url}\"")),
            ("model", "\"hostile\"".to_owned()),
            ("seed", "1".to_owned()),
            ("timeout_seconds", "5".to_owned()),
            ("retries", "1".to_owned()),
            ("task_seconds", "20".to_owned()),
            ("run_seconds", "30".to_owned()),
        ]);
        for line in extra.lines() {
            let (key, value) = line.split_once(" = ").expect("key = value");
            settings.insert(key, value.to_owned());
        }
        let lines: String = settings
            .iter()
            .map(|(k, v)| format!("{k} = {v}\n"))
            .collect();
        format!("\n[agent]\n{lines}")
    });
    std::fs::write(
        &path,
        format!("[knowledge]\nwithhold = [\"{withheld}\"]\n{agent}"),
    )
    .expect("config");
    path
}

fn reconcile(dir: &Path, config: &Path, extra: &[&str]) -> Output {
    let work = dir.join("work");
    Command::new(env!("CARGO_BIN_EXE_retrace"))
        .env_remove("RETRACE_KB")
        .env("TMPDIR", dir.join("tmp"))
        .arg("--config")
        .arg(config)
        .arg("--kb")
        .arg(dir.join("kb.sqlite"))
        .arg("reconcile")
        .arg("--project")
        .arg(work.join("project"))
        .arg("--state")
        .arg(work.join("terraform.tfstate"))
        .arg("--observed")
        .arg(work.join("observed.tfstate"))
        .arg("--logs")
        .arg(work.join("trail"))
        .args(["--no-terraform", "--format", "json"])
        .args(extra)
        .output()
        .expect("runs")
}

/// The JSON report of a run that ended with drift not all absorbed (exit 3).
fn partial(output: &Output) -> Value {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        output.status.code(),
        Some(3),
        "{stderr}\n{}",
        String::from_utf8_lossy(&output.stdout)
    );
    serde_json::from_slice(&output.stdout).expect("json report")
}

fn task(report: &Value) -> &Value {
    let tasks = report["agent"]["tasks"].as_array().expect("tasks");
    tasks
        .iter()
        .find(|t| t["api"] == "CreatePolicyVersion")
        .expect("a task for the policy call")
}

/// A result's detail is plain words: no Rust debug output.
fn assert_plain(text: &str) {
    for debug in ["Error {", "Os {", "kind:", "Some(", "\\\""] {
        assert!(!text.contains(debug), "not plain words: {text}");
    }
}

fn assert_no_secret(texts: &[String], what: &str) {
    for text in texts {
        for secret in SECRETS {
            assert!(!text.contains(secret), "{what} holds the secret {secret}");
        }
    }
}

/// Every file under `dir` but the run's own temporary directory and knowledge base, with a
/// hash of its bytes.
fn tree(dir: &Path) -> BTreeMap<PathBuf, u64> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<PathBuf, u64>) {
        for entry in std::fs::read_dir(dir).expect("readable").flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(root).expect("inside").to_path_buf();
            let name = relative.to_string_lossy();
            if name == "tmp" || name.starts_with("kb.sqlite") {
                continue;
            }
            if path.is_dir() {
                walk(&path, root, out);
            } else {
                use std::hash::{DefaultHasher, Hash, Hasher};
                let mut hasher = DefaultHasher::new();
                std::fs::read(&path).unwrap_or_default().hash(&mut hasher);
                out.insert(relative, hasher.finish());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The wildcard rule a careless or steered model proposes: low risk, no flags.
fn admin_rule() -> Value {
    json!({"resource": "aws_iam_policy", "kind": "update", "risk": "low",
        "summary": "changed a policy", "identity": [{"path": "policyArn"}],
        "set": [{"attribute": "policy", "path": "policyDocument", "transform": "json"}]})
}

#[test]
fn a_wildcard_policy_proposed_as_low_risk_is_held_and_the_rule_learned_holds() {
    for api in ["openai", "anthropic"] {
        let dir = tempfile::tempdir().expect("tempdir");
        workspace(dir.path());
        let model = Hostile::start(api, proposes(admin_rule()));
        let with_agent = config(dir.path(), api, Some(&model.url), "");
        let first = partial(&reconcile(dir.path(), &with_agent, &[]));
        let diff = first["diff"].as_str().expect("diff");
        assert!(
            !diff.contains("\\\"*\\\"") && !diff.contains("= \"*\""),
            "{api}: {diff}"
        );
        let task = task(&first);
        let answered = model.bodies().last().cloned().unwrap_or_default();
        let tail = serde_json::from_str::<Value>(&answered).unwrap_or_default()["messages"]
            .as_array()
            .and_then(|m| m.last().cloned())
            .unwrap_or_default();
        assert_eq!(
            task["result"]["result"], "validated",
            "{api}: {task}\n{tail}"
        );
        let learned = &task["rule"]["spec"];
        // No shipped rule updating aws_iam_policy is left (CreatePolicyVersion is withheld):
        // the document checks hold the change, whatever risk the model chose.
        assert_eq!(learned["risk"], "low", "{api}: {learned}");
        assert!(
            learned["hold"]
                .as_str()
                .is_some_and(|h| h.contains("wildcard")),
            "{api}: the rule is learned as a hold rule: {learned}"
        );
        assert_no_secret(&model.bodies(), "a request body");

        // Later runs without the model hold the same change by the learned rule.
        let without = config(dir.path(), api, None, "");
        let second = partial(&reconcile(dir.path(), &without, &[]));
        assert!(second["agent"].is_null(), "{second}");
        let diff = second["diff"].as_str().expect("diff");
        assert!(!diff.contains("= \"*\""), "{api}: {diff}");
    }
}

#[test]
fn a_rule_that_invents_a_creation_is_refused() {
    for api in ["openai", "anthropic"] {
        let dir = tempfile::tempdir().expect("tempdir");
        workspace(dir.path());
        let invented = json!({"resource": "aws_iam_user", "kind": "create", "risk": "low",
            "summary": "created a user", "identity": [{"path": "policyArn"}]});
        let model = Hostile::start(api, proposes(invented));
        let report = partial(&reconcile(
            dir.path(),
            &config(dir.path(), api, Some(&model.url), ""),
            &[],
        ));
        let task = task(&report);
        assert_eq!(task["result"]["result"], "gave-up", "{api}: {task}");
        assert!(
            !report["diff"]
                .as_str()
                .expect("diff")
                .contains("aws_iam_user")
        );
        let answer = model.bodies().last().cloned().expect("a second turn");
        assert!(
            answer.contains(
                "which the observed cloud does not hold and CreatePolicyVersion does not create"
            ),
            "{api}: {answer}"
        );
        assert_eq!(
            report["knowledge"]["recorded"]["learned"],
            json!([]),
            "{api}"
        );
    }
}

#[test]
fn edits_outside_the_project_are_refused_and_nothing_outside_the_sandbox_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    workspace(dir.path());
    let escape = |file: &str| {
        (
            "edit",
            json!({"tool": "import_resource", "input": {"file": file,
                "resource_type": "aws_s3_bucket", "name": "x", "id": "x"}}),
        )
    };
    let model = Hostile::start(
        "openai",
        calls_in_turn(vec![
            escape("../../escape/main.tf"),
            escape("/tmp/absolute.tf"),
            escape("./../project/../../escape.tf"),
            ("check_plan", json!({})),
            ("read_file", json!({"path": "../../../etc/passwd"})),
        ]),
    );
    let config = config(dir.path(), "openai", Some(&model.url), "");
    let before = tree(dir.path());
    let report = partial(&reconcile(dir.path(), &config, &[]));
    assert_eq!(
        tree(dir.path()),
        before,
        "a file outside the sandbox changed"
    );
    assert!(!dir.path().join("escape").exists());
    let bodies = model.bodies();
    let last = bodies.last().expect("bodies");
    assert_eq!(last.matches("refused:").count(), 3, "{last}");
    assert!(last.contains("no edit made yet"), "{last}");
    assert!(last.contains("no file ../../../etc/passwd"), "{last}");
    assert_plain(&task(&report)["result"].to_string());
}

#[test]
fn a_model_that_echoes_what_it_reads_sends_no_secret() {
    let dir = tempfile::tempdir().expect("tempdir");
    workspace(dir.path());
    let model = Hostile::start(
        "anthropic",
        calls_in_turn(vec![
            ("read_file", json!({"path": "terraform.tfvars"})),
            ("search_config", json!({"text": "password"})),
            (
                "show_state",
                json!({"address": "aws_ssm_parameter.db_password"}),
            ),
            ("propose_rule", json!({"rule": admin_rule()})),
        ]),
    );
    partial(&reconcile(
        dir.path(),
        &config(dir.path(), "anthropic", Some(&model.url), ""),
        &[],
    ));
    let bodies = model.bodies();
    assert!(bodies.len() >= 4, "{}", bodies.len());
    assert_no_secret(&bodies, "a request body");
    // A fresh copy for the dry runs: the store above has learned the policy rule.
    let dir = tempfile::tempdir().expect("tempdir");
    workspace(dir.path());
    for style in ["focused", "naive"] {
        let out = dir.path().join(style);
        let dry = config(
            dir.path(),
            "openai",
            Some("http://user:Pg-s3cret-pass@127.0.0.1:9/v1"),
            &format!("context = \"{style}\"\n"),
        );
        let report = partial(&reconcile(
            dir.path(),
            &dry,
            &["--agent-dry-run", out.to_str().expect("utf-8")],
        ));
        let prompts: Vec<String> = std::fs::read_dir(&out)
            .expect("prompts written")
            .flatten()
            .map(|e| std::fs::read_to_string(e.path()).expect("prompt"))
            .collect();
        assert!(!prompts.is_empty());
        assert_no_secret(&prompts, &format!("the {style} dry-run prompt"));
        assert_no_secret(&[report.to_string()], "the report");
    }
}

#[test]
fn an_endpoint_that_lies_about_usage_cannot_stretch_the_token_bound() {
    // Every reply asks for a search with a 16 KB argument and reports one token.
    for api in ["openai", "anthropic"] {
        let dir = tempfile::tempdir().expect("tempdir");
        workspace(dir.path());
        let big = "x".repeat(16 * 1024);
        let model = Hostile::start(
            api,
            Box::new(move |api, _, _| {
                Answer::ok(tool_reply(
                    api,
                    &[("search_config", json!({"text": big}))],
                    true,
                ))
            }),
        );
        let budget = 40_000u64;
        let report = partial(&reconcile(
            dir.path(),
            &config(
                dir.path(),
                api,
                Some(&model.url),
                &format!("max_turns = 100\ntask_tokens = {budget}\nrun_tokens = {budget}\n"),
            ),
            &[],
        ));
        let task = task(&report);
        assert_eq!(task["result"]["result"], "over-budget", "{api}: {task}");
        assert_plain(task["result"]["detail"].as_str().expect("detail"));
        let bodies = model.bodies();
        let sent: u64 = bodies.iter().map(|b| b.len() as u64).sum::<u64>() / 4;
        let received = bodies.len() as u64 * (16 * 1024) / 4;
        assert!(
            sent + received <= budget * 11 / 10,
            "{api}: {sent} tokens sent and {received} received under a bound of {budget}"
        );
    }
}

#[test]
fn endless_tool_calls_stop_at_max_turns_per_task() {
    let dir = tempfile::tempdir().expect("tempdir");
    workspace(dir.path());
    let model = Hostile::start(
        "openai",
        Box::new(|api, _, _| {
            Answer::ok(tool_reply(
                api,
                &[("show_schema", json!({"resource_type": "aws_iam_policy"}))],
                true,
            ))
        }),
    );
    let report = partial(&reconcile(
        dir.path(),
        &config(
            dir.path(),
            "openai",
            Some(&model.url),
            "max_turns = 3\nsamples = 3\n",
        ),
        &[],
    ));
    let task = task(&report);
    assert_eq!(task["result"]["result"], "over-budget", "{task}");
    assert_eq!(task["turns"], 3, "three turns over every sample: {task}");
    assert_eq!(model.bodies().len(), 3);
}

#[test]
fn samples_are_sent_with_distinct_seeds() {
    let dir = tempfile::tempdir().expect("tempdir");
    workspace(dir.path());
    let model = Hostile::start("openai", Box::new(|api, _, _| Answer::ok(text_reply(api))));
    partial(&reconcile(
        dir.path(),
        &config(dir.path(), "openai", Some(&model.url), "samples = 3\n"),
        &[],
    ));
    let seeds: Vec<Value> = model
        .bodies()
        .iter()
        .map(|b| serde_json::from_str::<Value>(b).expect("json")["seed"].clone())
        .collect();
    assert_eq!(seeds, [json!(1), json!(2), json!(3)]);
}

#[test]
fn broken_and_slow_endpoints_end_in_plain_words() {
    let cases: Vec<(&str, Box<Behaviour>, &str, &str)> = vec![
        (
            "a malformed reply",
            Box::new(|_, _, _| Answer::ok("{\"choices\": 7".into())),
            "",
            "is not a valid chat completions response",
        ),
        (
            "a 10 MB reply",
            Box::new(|_, _, _| Answer::ok(format!("{{\"x\":\"{}\"}}", "a".repeat(10 << 20)))),
            "",
            "larger than",
        ),
        (
            "a storm of 429s",
            Box::new(|_, _, _| Answer {
                status: 429,
                body: "{\"error\":{\"message\":\"slow down\"}}".into(),
                retry_after: Some(1),
                delay: Duration::ZERO,
            }),
            "retries = 20\ntask_seconds = 2\n",
            "ran out of time",
        ),
        (
            "a slow reply",
            Box::new(|api, _, _| Answer {
                delay: Duration::from_secs(3),
                ..Answer::ok(text_reply(api))
            }),
            "timeout_seconds = 1\n",
            "did not answer within 1 s",
        ),
        (
            "an unknown tool",
            Box::new(|api, turn, _| match turn {
                0 => Answer::ok(tool_reply(api, &[("rm_rf", json!({"path": "/"}))], true)),
                _ => Answer::ok(text_reply(api)),
            }),
            "",
            "",
        ),
    ];
    for (what, behaviour, extra, expected) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        workspace(dir.path());
        let model = Hostile::start("openai", behaviour);
        let report = partial(&reconcile(
            dir.path(),
            &config(dir.path(), "openai", Some(&model.url), extra),
            &[],
        ));
        let result = &task(&report)["result"];
        let detail = result["detail"].as_str().unwrap_or_default();
        assert!(detail.contains(expected), "{what}: {result}");
        assert_plain(detail);
        assert_eq!(
            report["knowledge"]["recorded"]["learned"],
            json!([]),
            "{what}"
        );
        if what == "a storm of 429s" {
            // Two seconds of one-second waits: the retries stopped at the task's deadline.
            assert!(
                model.bodies().len() <= 3,
                "{what}: {}",
                model.bodies().len()
            );
        }
        if what == "an unknown tool" {
            assert_eq!(result["result"], "gave-up");
            let last = model.bodies().last().cloned().expect("bodies");
            assert!(last.contains("no tool rm_rf"), "{last}");
        }
    }
}

#[test]
fn an_endpoint_url_with_credentials_is_printed_without_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    workspace(dir.path());
    let report = partial(&reconcile(
        dir.path(),
        &config(
            dir.path(),
            "openai",
            Some("http://user:Pg-s3cret-pass@127.0.0.1:9/v1"),
            "",
        ),
        &[],
    ));
    let detail = task(&report)["result"]["detail"]
        .as_str()
        .expect("detail")
        .to_owned();
    assert!(
        detail.starts_with("cannot reach the model at http://user:[redacted]@127.0.0.1:9/"),
        "{detail}"
    );
    assert_no_secret(&[report.to_string()], "the report");
}

/// A copy of fixtures/agent/place/ (a log bucket made by a shared module; the planner cannot
/// place its versioning) under `dir/work`, with a provider block and a queue the change does
/// not touch in the root. With `linked`,
/// the root's `main.tf` is a symbolic link to a file outside the project.
fn placement(dir: &Path, linked: bool) -> PathBuf {
    let work = dir.join("work");
    let from = fixture("place");
    for sub in ["project", "modules/bucket", "trail"] {
        std::fs::create_dir_all(work.join(sub)).expect("dirs");
    }
    std::fs::create_dir_all(dir.join("tmp")).expect("dirs");
    for file in ["modules/bucket/main.tf", "trail/records.json"] {
        std::fs::copy(from.join(file), work.join(file)).expect("copy");
    }
    // A queue beside the bucket, in the code and both states, that the change does not touch.
    let queue = json!({"mode": "managed", "type": "aws_sqs_queue", "name": "jobs",
        "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
        "instances": [{"schema_version": 0, "attributes": {
            "id": "https://sqs.eu-west-1.amazonaws.com/111122223333/shop-prod-jobs",
            "arn": "arn:aws:sqs:eu-west-1:111122223333:shop-prod-jobs",
            "name": "shop-prod-jobs", "delay_seconds": 0, "tags": {}, "tags_all": {}}}]});
    for file in ["terraform.tfstate", "observed.tfstate"] {
        let mut state: Value =
            serde_json::from_str(&std::fs::read_to_string(from.join(file)).expect("state"))
                .expect("json");
        state["resources"]
            .as_array_mut()
            .expect("resources")
            .push(queue.clone());
        std::fs::write(work.join(file), state.to_string()).expect("state");
    }
    let main = std::fs::read_to_string(from.join("project/main.tf")).expect("main.tf");
    let main = format!(
        "provider \"aws\" {{\n  region = \"us-east-1\"\n}}\n\n{main}\nresource \"aws_sqs_queue\" \"jobs\" {{\n  name = \"shop-prod-jobs\"\n}}\n"
    );
    if linked {
        std::fs::create_dir_all(dir.join("elsewhere")).expect("dirs");
        std::fs::write(dir.join("elsewhere/main.tf"), main).expect("main.tf");
        std::os::unix::fs::symlink(dir.join("elsewhere/main.tf"), work.join("project/main.tf"))
            .expect("link");
    } else {
        std::fs::write(work.join("project/main.tf"), main).expect("main.tf");
    }
    work
}

/// Sets `name = value` on the block `block_type labels` of `file`, then submits.
fn edits_then_submits(
    file: &'static str,
    block_type: &'static str,
    labels: Value,
    name: &'static str,
    value: Value,
) -> Box<Behaviour> {
    calls_in_turn(vec![
        (
            "edit",
            json!({"tool": "set_attribute", "input": {
                "target": {"file": file, "block_type": block_type, "labels": labels},
                "name": name, "value": value}}),
        ),
        ("submit_edits", json!({})),
    ])
}

#[test]
fn placement_edits_past_the_change_are_refused_with_the_reason() {
    // (what, the root's main.tf linked from outside, the model's edits, the reason the
    // refusal names)
    let cases: Vec<(&str, bool, Box<Behaviour>, &str)> = vec![
        (
            "a provider's region",
            false,
            edits_then_submits(
                "main.tf",
                "provider",
                json!(["aws"]),
                "region",
                json!("eu-west-1"),
            ),
            "changes `provider aws`",
        ),
        (
            "another resource's arguments",
            false,
            edits_then_submits(
                "main.tf",
                "resource",
                json!(["aws_sqs_queue", "jobs"]),
                "delay_seconds",
                json!(90),
            ),
            "changes `resource aws_sqs_queue jobs`",
        ),
        (
            "a symlinked file",
            true,
            edits_then_submits(
                "main.tf",
                "module",
                json!(["logs"]),
                "versioning_enabled",
                json!(true),
            ),
            "symbolic link",
        ),
    ];
    for (what, linked, behaviour, reason) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        placement(dir.path(), linked);
        let model = Hostile::start("openai", behaviour);
        let config = config(dir.path(), "openai", Some(&model.url), "");
        let before = tree(dir.path());
        let report = partial(&reconcile(dir.path(), &config, &[]));
        assert_eq!(tree(dir.path()), before, "{what}: a file changed");
        let tasks = report["agent"]["tasks"].as_array().expect("tasks");
        let placing = tasks
            .iter()
            .find(|t| t["placement"] == true)
            .expect("a placement task");
        assert_ne!(
            placing["result"]["result"], "validated",
            "{what}: {placing}"
        );
        let placed = report["plan"]["placed"].as_array().map_or(0, Vec::len);
        assert_eq!(placed, 0, "{what}");
        let bodies = model.bodies();
        let last = bodies.last().expect("bodies");
        assert!(last.contains(reason), "{what}: {last}");
    }
}

/// Adds the function the trail's Lambda call changes to the workspace `work`: in the code
/// (no environment), in the state, and in the observed cloud with the call's environment.
fn with_worker(work: &Path) {
    let main = work.join("project/main.tf");
    let mut text = std::fs::read_to_string(&main).expect("main.tf");
    text.push_str(
        "\nresource \"aws_lambda_function\" \"worker\" {\n  function_name = \"shop-prod-worker\"\n  role          = \"arn:aws:iam::111122223333:role/shop-worker\"\n  handler       = \"index.handler\"\n  runtime       = \"nodejs20.x\"\n  filename      = \"worker.zip\"\n}\n",
    );
    std::fs::write(&main, text).expect("main.tf");
    let environment = json!([{"variables": {
        "DB_PASS": "hunter2-lambda-pw",
        "STRIPE_KEY": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "DATABASE_URL": "postgres://app:Pg-s3cret-pass@db.internal:5432/shop"}}]);
    for (file, environment) in [
        ("terraform.tfstate", json!([])),
        ("observed.tfstate", environment),
    ] {
        let path = work.join(file);
        let mut state: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("state")).expect("json");
        state["resources"].as_array_mut().expect("resources").push(
            json!({"mode": "managed", "type": "aws_lambda_function", "name": "worker",
                "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
                "instances": [{"schema_version": 0, "attributes": {
                    "id": "shop-prod-worker", "function_name": "shop-prod-worker",
                    "arn": "arn:aws:lambda:us-east-1:111122223333:function:shop-prod-worker",
                    "role": "arn:aws:iam::111122223333:role/shop-worker",
                    "handler": "index.handler", "runtime": "nodejs20.x",
                    "filename": "worker.zip", "environment": environment,
                    "tags": {}, "tags_all": {}}}]}),
        );
        std::fs::write(&path, state.to_string()).expect("state");
    }
}

#[test]
fn an_agent_rule_that_copies_environment_values_writes_no_secret_into_the_code() {
    let dir = tempfile::tempdir().expect("tempdir");
    let work = workspace(dir.path());
    with_worker(&work);
    // The model maps the call's environment straight into the code, as the shipped rule
    // (withheld here) never does.
    let careless = json!({"resource": "aws_lambda_function", "kind": "update", "risk": "low",
        "summary": "changed a function's environment",
        "identity": [{"path": "functionName"}],
        "set": [{"attribute": "environment.variables", "path": "environment.variables"}]});
    let project = |file: &str| {
        std::fs::read_to_string(work.join("project").join(file)).expect("a project file")
    };
    let before = project("main.tf") + &project("terraform.tfvars");
    let model = Hostile::start("openai", proposes(careless));
    let config = config_withholding(
        dir.path(),
        "openai",
        Some(&model.url),
        "",
        "lambda:UpdateFunctionConfiguration",
    );
    let output = reconcile(dir.path(), &config, &["--write"]);
    let report = partial(&output);
    let asked = report["agent"]["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .any(|t| {
            t["api"]
                .as_str()
                .is_some_and(|a| a.starts_with("UpdateFunctionConfiguration"))
        });
    assert!(
        asked,
        "the model was not asked about the Lambda call: {report}"
    );
    assert!(!model.bodies().is_empty(), "no request reached the model");
    // The project plants a password of its own; none of the call's secrets may join it.
    let after = project("main.tf") + &project("terraform.tfvars");
    for secret in SECRETS.iter().filter(|s| !before.contains(*s)) {
        assert!(
            !after.contains(secret),
            "--write put {secret} into the code"
        );
    }
    let reported = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .any(|f| f["kind"] == "unexplained" || f["kind"] == "hidden-value");
    assert!(reported, "the Lambda change is in no finding: {report}");
    assert_no_secret(&[output_text(&output)], "the report");
    assert_no_secret(&model.bodies(), "a request body");
}

/// Everything a run printed.
fn output_text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
