//! The scorer on scenarios built here with the simulator against the `serverless` fixture
//! project: a drift the reconciler absorbs passes, a noise-only trail passes with no patch, a
//! drift the trail never mentions fails naming the attribute, a change to code the drift did
//! not touch is caught, and `retrace-eval run` writes its results and checks a baseline.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use evaluation::evaluate::Project;
use evaluation::scenario::{
    self, Category, Expect, Scenario, StateDelta, Stored, load_all, sha256_file,
};
use evaluation::score::checks::{self, Evidence};
use evaluation::score::report::Report;
use evaluation::score::{ScoreError, Scorer};
use evaluation::sim::{Agent, Caller, Cloud, Request, Settings};
use knowledge::schema::ProviderSchema;
use reconciler::terraform::state::State;
use serde_json::{Value, json};

const PROJECT: &str = "serverless";
const JOBS_URL: &str = "https://sqs.eu-west-1.amazonaws.com/123456789012/orders-staging-jobs";

fn projects() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/projects")
}

fn state_path() -> PathBuf {
    projects().join(PROJECT).join("terraform.tfstate")
}

fn pre() -> State {
    State::read(&state_path()).unwrap()
}

/// Runs the calls as a console user in a cloud seeded from the project's state, and saves
/// the scenario under `root`; `tamper` may change the post-drift state before it is saved.
fn build(
    root: &Path,
    id: &str,
    category: Category,
    expect: Expect,
    calls: &[Request],
    tamper: impl FnOnce(&mut State),
) -> Stored {
    let base = pre();
    let mut cloud = Cloud::from_state(&base, &Settings::default());
    let caller = Caller::user("alice", Agent::Console);
    let mut records = Vec::new();
    for request in calls {
        let outcome = cloud.execute(request, &caller).unwrap();
        assert!(outcome.error.is_none(), "{:?}", outcome.error);
        records.push(outcome.record);
    }
    let mut post = cloud.snapshot();
    tamper(&mut post);
    let scenario = Scenario {
        id: id.into(),
        project: PROJECT.into(),
        category,
        family: String::new(),
        description: format!("test scenario {id}"),
        generator: "test".into(),
        seed: 0,
        base_state_sha256: sha256_file(&state_path()).unwrap(),
        expect,
        touches: Vec::new(),
        background: None,
        withhold: Vec::new(),
    };
    let delta = StateDelta::between(&base, &post);
    scenario::save(root, &scenario, &records, &delta, &base).unwrap();
    load_all(root)
        .unwrap()
        .into_iter()
        .find(|s| s.scenario.id == id)
        .unwrap()
}

fn set_wait_time(seconds: &str) -> Request {
    Request::new(
        "sqs.amazonaws.com",
        "SetQueueAttributes",
        json!({"queueUrl": JOBS_URL, "attributes": {"ReceiveMessageWaitTimeSeconds": seconds}}),
    )
}

fn patch() -> Expect {
    Expect {
        patch: true,
        ..Expect::default()
    }
}

fn scorer() -> Scorer {
    Scorer::new(&projects()).unwrap()
}

fn set_attribute(state: &mut State, address: &str, attribute: &str, value: Value) {
    let instance = state
        .instances
        .iter_mut()
        .find(|i| i.address == address)
        .unwrap();
    instance.attributes[attribute] = value;
}

#[test]
fn a_literal_change_the_reconciler_absorbs_passes() {
    let dir = tempfile::tempdir().unwrap();
    let stored = build(
        dir.path(),
        "serverless-console-001",
        Category::Console,
        patch(),
        &[set_wait_time("10")],
        |_| {},
    );
    let samples = scorer().score(&stored, 2).unwrap();
    assert_eq!(samples.len(), 2);
    for sample in &samples {
        assert!(sample.passed, "{:#?}", sample.reasons());
        // `receive_wait_time_seconds = 20` is a literal: one line out, one in, at the source.
        assert_eq!((sample.lines_added, sample.lines_removed), (1, 1));
        assert_eq!((sample.at_source, sample.overrides), (1, 0));
        assert_eq!(sample.tokens, 0);
    }
}

#[test]
fn a_change_undone_is_noise_only_and_passes_with_no_patch() {
    let dir = tempfile::tempdir().unwrap();
    let read = Request::new(
        "sqs.amazonaws.com",
        "GetQueueAttributes",
        json!({"queueUrl": JOBS_URL, "attributeNames": ["All"]}),
    );
    let stored = build(
        dir.path(),
        "serverless-noise-only-001",
        Category::NoiseOnly,
        Expect::default(),
        &[read, set_wait_time("5"), set_wait_time("20")],
        |_| {},
    );
    assert!(stored.post().unwrap().is_empty());
    let mut scorer = scorer();
    let calls = scorer.out_of_band(&stored.trail_path()).unwrap();
    let (sample, outcome) = scorer.sample(&stored, &calls).unwrap();
    assert!(sample.passed, "{:#?}", sample.reasons());
    assert!(outcome.diff.is_empty(), "{}", outcome.diff);
    assert!(
        sample
            .checks
            .iter()
            .any(|c| c.name == "no-patch" && c.passed)
    );
}

#[test]
fn a_drift_the_trail_never_mentions_fails_naming_the_attribute() {
    let dir = tempfile::tempdir().unwrap();
    let stored = build(
        dir.path(),
        "serverless-console-002",
        Category::Console,
        patch(),
        &[set_wait_time("10")],
        |post| set_attribute(post, "aws_sqs_queue.jobs", "delay_seconds", json!(30)),
    );
    let samples = scorer().score(&stored, 1).unwrap();
    assert!(!samples[0].passed);
    let reasons = samples[0].reasons();
    assert_eq!(
        reasons,
        vec!["drift-absorbed: aws_sqs_queue.jobs.delay_seconds: code gives nothing, cloud has 30"],
    );
}

#[test]
fn a_noise_only_scenario_with_a_patch_fails() {
    // The trail changes the wait time, but the scenario says no patch is right: the scorer
    // must not accept the reconciler's (otherwise correct) patch.
    let dir = tempfile::tempdir().unwrap();
    let stored = build(
        dir.path(),
        "serverless-noise-only-002",
        Category::NoiseOnly,
        Expect::default(),
        &[set_wait_time("10")],
        |_| {},
    );
    let sample = &scorer().score(&stored, 1).unwrap()[0];
    assert!(!sample.passed);
    assert_eq!(
        sample.reasons(),
        vec!["no-patch: main.tf: changed, but nothing out of band changed the cloud"]
    );
}

#[test]
fn a_stale_base_state_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut stored = build(
        dir.path(),
        "serverless-console-003",
        Category::Console,
        patch(),
        &[set_wait_time("10")],
        |_| {},
    );
    stored.scenario.base_state_sha256 = "0".repeat(64);
    let error = scorer().score(&stored, 1).unwrap_err();
    assert!(matches!(error, ScoreError::StaleBase { .. }));
    assert!(
        error.to_string().contains("regenerate the scenarios"),
        "{error}"
    );
}

fn load(dir: &Path, state: &State) -> Project {
    Project::load(dir, state).unwrap()
}

/// Copies the project and edits `main.tf` in the copy.
fn edited_copy(from: &str, to: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let source = projects().join(PROJECT);
    copy(&source, dir.path());
    let main = dir.path().join("main.tf");
    let text = std::fs::read_to_string(&main).unwrap();
    assert!(text.contains(from));
    std::fs::write(&main, text.replacen(from, to, 1)).unwrap();
    dir
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

fn check(
    pre: &State,
    post: &State,
    original: &Project,
    patched: &Project,
    expect: &Expect,
) -> Vec<checks::CheckResult> {
    checks::run(&Evidence {
        pre,
        post,
        original,
        patched: Ok(patched),
        report: &Report::default(),
        expect,
        schema: ProviderSchema::bundled().unwrap(),
    })
}

fn failures(results: &[checks::CheckResult]) -> Vec<String> {
    results
        .iter()
        .filter(|c| !c.passed)
        .flat_map(|c| c.reasons.iter().map(move |r| format!("{}: {r}", c.name)))
        .collect()
}

#[test]
fn a_change_to_code_the_drift_did_not_touch_is_collateral() {
    let state = pre();
    let original = load(&projects().join(PROJECT), &state);
    let dir = edited_copy(
        "message_retention_seconds = 1209600",
        "message_retention_seconds = 60",
    );
    let patched = load(dir.path(), &state);
    let results = check(&state, &state, &original, &patched, &patch());
    assert_eq!(
        failures(&results),
        vec![
            "untouched: aws_sqs_queue.dlq.message_retention_seconds: was 1209600 in the code, now 60"
        ]
    );
}

#[test]
fn a_drifted_attribute_absorbed_by_hand_passes_and_a_removed_resource_is_caught() {
    let state = pre();
    let original = load(&projects().join(PROJECT), &state);
    let mut post = state.clone();
    set_attribute(
        &mut post,
        "aws_sqs_queue.jobs",
        "receive_wait_time_seconds",
        json!(10),
    );
    let fixed = edited_copy(
        "receive_wait_time_seconds  = 20",
        "receive_wait_time_seconds  = 10",
    );
    let patched = load(fixed.path(), &state);
    assert!(failures(&check(&state, &post, &original, &patched, &patch())).is_empty());
    // Editing the other queue instead leaves the drift and changes what it did not touch.
    let wrong = edited_copy(
        "message_retention_seconds = 1209600",
        "message_retention_seconds = 1209600\n  receive_wait_time_seconds = 10",
    );
    let patched = load(wrong.path(), &state);
    assert_eq!(
        failures(&check(&state, &post, &original, &patched, &patch())),
        vec![
            "drift-absorbed: aws_sqs_queue.jobs.receive_wait_time_seconds: code gives 20, cloud has 10",
            "untouched: aws_sqs_queue.dlq.receive_wait_time_seconds: was nothing in the code, now 10",
        ]
    );
}

#[test]
fn a_flagged_target_must_be_flagged_and_kept() {
    let state = pre();
    let original = load(&projects().join(PROJECT), &state);
    let mut post = state.clone();
    set_attribute(
        &mut post,
        "aws_sqs_queue.jobs",
        "receive_wait_time_seconds",
        json!(10),
    );
    let expect = Expect {
        patch: true,
        flag: vec![scenario::Target {
            address: "aws_sqs_queue.jobs".into(),
            attribute: "receive_wait_time_seconds".into(),
        }],
        ignore: Vec::new(),
        ..Expect::default()
    };
    // The code absorbed what it should have left alone, and nothing was flagged.
    let absorbed = edited_copy(
        "receive_wait_time_seconds  = 20",
        "receive_wait_time_seconds  = 10",
    );
    let patched = load(absorbed.path(), &state);
    assert_eq!(
        failures(&check(&state, &post, &original, &patched, &expect)),
        vec![
            "flagged: aws_sqs_queue.jobs.receive_wait_time_seconds: expected to be flagged, but the reconciler did not flag it",
            "flagged: aws_sqs_queue.jobs.receive_wait_time_seconds: the code must keep 20, but the patch made it 10",
        ]
    );
}

#[test]
fn an_ignored_target_needs_ignore_changes() {
    let state = pre();
    let original = load(&projects().join(PROJECT), &state);
    let mut post = state.clone();
    set_attribute(
        &mut post,
        "aws_sqs_queue.jobs",
        "receive_wait_time_seconds",
        json!(10),
    );
    let expect = Expect {
        patch: true,
        flag: Vec::new(),
        ignore: vec![scenario::Target {
            address: "aws_sqs_queue.jobs".into(),
            attribute: "receive_wait_time_seconds".into(),
        }],
        ..Expect::default()
    };
    let plain = load(&projects().join(PROJECT), &state);
    assert_eq!(
        failures(&check(&state, &post, &original, &plain, &expect)),
        vec![
            "ignored: aws_sqs_queue.jobs: lifecycle.ignore_changes does not name receive_wait_time_seconds (it names [])"
        ]
    );
    let ignoring = edited_copy(
        "  receive_wait_time_seconds  = 20\n",
        "  receive_wait_time_seconds  = 20\n\n  lifecycle {\n    ignore_changes = [receive_wait_time_seconds]\n  }\n",
    );
    let patched = load(ignoring.path(), &state);
    assert!(failures(&check(&state, &post, &original, &patched, &expect)).is_empty());
}

fn retrace_eval(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_retrace-eval"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn run_writes_results_and_checks_a_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = dir.path().join("scenarios");
    build(
        &scenarios,
        "serverless-console-001",
        Category::Console,
        patch(),
        &[set_wait_time("10")],
        |_| {},
    );
    build(
        &scenarios,
        "serverless-console-002",
        Category::Console,
        patch(),
        &[set_wait_time("10")],
        |post| set_attribute(post, "aws_sqs_queue.jobs", "delay_seconds", json!(30)),
    );
    let out = dir.path().join("out");
    let baseline = dir.path().join("baseline.json");
    let (s, o) = (scenarios.to_str().unwrap(), out.to_str().unwrap());
    let b = baseline.to_str().unwrap();
    let (code, stdout, stderr) = retrace_eval(&[
        "run",
        "--scenarios",
        s,
        "--out",
        o,
        "--n",
        "2",
        "--k",
        "2",
        "--write-baseline",
        b,
    ]);
    assert_eq!(code, 3, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("2 scenarios, n = 2: pass@1 0.500, pass@2 0.500"),
        "{stdout}"
    );
    let results: Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["n"], 2);
    assert_eq!(results["k"], 2);
    assert_eq!(results["overall"]["scenarios"], 2);
    assert_eq!(results["overall"]["pass_at_k"], 0.5);
    assert_eq!(results["by_category"]["console"]["passed"], 1);
    assert_eq!(results["by_project"]["serverless"]["scenarios"], 2);
    assert_eq!(results["tokens"], 0);
    let rows = results["scenarios"].as_array().unwrap();
    assert_eq!(rows[0]["id"], "serverless-console-001");
    assert_eq!(
        (rows[0]["c"].clone(), rows[0]["passed"].clone()),
        (json!(2), json!(true))
    );
    assert_eq!(
        (rows[1]["c"].clone(), rows[1]["passed"].clone()),
        (json!(0), json!(false))
    );
    assert!(
        rows[1]["reasons"][0]
            .as_str()
            .unwrap()
            .contains("delay_seconds")
    );
    let markdown = std::fs::read_to_string(out.join("results.md")).unwrap();
    assert!(
        // 1 of 2: the 95% Wilson interval is 0.0945-0.9055.
        markdown.contains("| console | 2 | 1 | 0.500 | 0.095-0.905 | 0.500 |"),
        "{markdown}"
    );
    assert!(markdown.contains("**serverless-console-002**"));
    assert!(
        std::fs::read_to_string(out.join("chart.svg"))
            .unwrap()
            .starts_with("<svg")
    );
    // The baseline records the failure, so checking against it is clean.
    let written: Value = serde_json::from_slice(&std::fs::read(&baseline).unwrap()).unwrap();
    assert_eq!(
        written,
        json!({"scenarios": {"serverless-console-001": true, "serverless-console-002": false}})
    );
    let (code, _, stderr) = retrace_eval(&[
        "run",
        "--scenarios",
        s,
        "--out",
        o,
        "--n",
        "1",
        "--k",
        "1",
        "--check-baseline",
        b,
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("no regressions"), "{stderr}");
    // A baseline where the failing scenario passed: a regression, exit 1, listed.
    std::fs::write(
        &baseline,
        r#"{"scenarios": {"serverless-console-002": true}}"#,
    )
    .unwrap();
    let (code, _, stderr) = retrace_eval(&[
        "run",
        "--scenarios",
        s,
        "--out",
        o,
        "--n",
        "1",
        "--k",
        "1",
        "--check-baseline",
        b,
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("new scenario (not in the baseline): serverless-console-001"),
        "{stderr}"
    );
    assert!(stderr.contains("1 scenario(s) passed in"), "{stderr}");
    assert!(
        stderr
            .contains("  serverless-console-002: drift-absorbed: aws_sqs_queue.jobs.delay_seconds"),
        "{stderr}"
    );
    // k above n is refused.
    let (code, _, stderr) =
        retrace_eval(&["run", "--scenarios", s, "--out", o, "--n", "1", "--k", "2"]);
    assert_eq!(code, 1, "{stderr}");
}

#[test]
fn show_prints_the_trail_the_diff_and_the_checks() {
    let dir = tempfile::tempdir().unwrap();
    build(
        dir.path(),
        "serverless-console-001",
        Category::Console,
        patch(),
        &[set_wait_time("10")],
        |_| {},
    );
    let (code, stdout, stderr) = retrace_eval(&[
        "show",
        "serverless-console-001",
        "--scenarios",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("sqs:SetQueueAttributes"), "{stdout}");
    assert!(stdout.contains("out-of-band"), "{stdout}");
    assert!(
        stdout.contains("+  receive_wait_time_seconds  = 10"),
        "{stdout}"
    );
    assert!(stdout.contains("pass drift-absorbed"), "{stdout}");
    assert!(stdout.contains("PASSED"), "{stdout}");
}

#[test]
fn an_attached_admin_policy_flagged_on_its_attachment_counts_for_the_role() {
    // The reconciler sees AttachRolePolicy as a new `aws_iam_role_policy_attachment` whose
    // identity (`role/policy-arn`) names the role; the scenario names the role's
    // `managed_policy_arns`, which is what the simulated cloud changed.
    let dir = tempfile::tempdir().unwrap();
    let role = r#"module.function["create-order"].aws_iam_role.this"#;
    let attach = Request::new(
        "iam.amazonaws.com",
        "AttachRolePolicy",
        json!({"roleName": "orders-staging-create-order-role",
               "policyArn": "arn:aws:iam::aws:policy/AdministratorAccess"}),
    );
    let expect = Expect {
        patch: true,
        // The simulated cloud also gains the attachment as a resource, flagged as a whole.
        flag: vec![
            scenario::Target {
                address: role.into(),
                attribute: "managed_policy_arns".into(),
            },
            scenario::Target {
                address: "aws_iam_role_policy_attachment.unmanaged_1".into(),
                attribute: String::new(),
            },
        ],
        ignore: Vec::new(),
        ..Expect::default()
    };
    let stored = build(
        dir.path(),
        "serverless-policy-gated-001",
        Category::PolicyGated,
        expect,
        &[attach],
        |_| {},
    );
    let post = stored.post().unwrap();
    assert!(post.upserts.iter().any(|i| i.address == role), "{post:?}");
    let sample = &scorer().score(&stored, 1).unwrap()[0];
    assert!(sample.passed, "{:#?}", sample.reasons());
    assert!(
        sample
            .checks
            .iter()
            .any(|c| c.name == "flagged" && c.passed)
    );
}

#[test]
fn a_role_whose_code_writes_no_inline_policy_leaves_it_to_the_cloud() {
    let state = pre();
    let original = load(&projects().join(PROJECT), &state);
    let mut post = state.clone();
    let role = r#"module.function["create-order"].aws_iam_role.this"#;
    set_attribute(
        &mut post,
        role,
        "inline_policy",
        json!([{"name": "extra", "policy": "{\"Version\":\"2012-10-17\",\"Statement\":[]}"}]),
    );
    assert_eq!(
        failures(&check(&state, &post, &original, &original, &patch())),
        Vec::<String>::new()
    );
    // A top-level attribute the code leaves unset is not excused that way.
    set_attribute(&mut post, role, "max_session_duration", json!(7200));
    assert_eq!(
        failures(&check(&state, &post, &original, &original, &patch())),
        vec![format!(
            "drift-absorbed: {role}.max_session_duration: code gives nothing, cloud has 7200"
        )]
    );
}
