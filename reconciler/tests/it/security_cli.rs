//! `retrace reconcile` on attack-like trails against `fixtures/security` (a project whose
//! state holds the attacked resources; README.md there gives each expectation, worked out by
//! hand), the cross-account name collision, and re-runs over the same trail.
#![allow(clippy::unwrap_used, missing_docs)]

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// A scratch copy of a project directory and the state beside it.
struct Scratch {
    _dir: tempfile::TempDir,
    project: PathBuf,
    state: PathBuf,
}

fn scratch(project: &Path, state: &Path) -> Scratch {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("project");
    fs::create_dir_all(&copy).unwrap();
    for entry in fs::read_dir(project).unwrap() {
        let path = entry.unwrap().path();
        fs::copy(&path, copy.join(path.file_name().unwrap())).unwrap();
    }
    let state_copy = dir.path().join("terraform.tfstate");
    fs::copy(state, &state_copy).unwrap();
    Scratch {
        _dir: dir,
        project: copy,
        state: state_copy,
    }
}

fn security() -> Scratch {
    let root = common::repo().join("fixtures/security");
    scratch(&root.join("project"), &root.join("terraform.tfstate"))
}

fn intents_project() -> Scratch {
    let root = common::repo().join("fixtures/intents");
    scratch(&root.join("project"), &root.join("project.tfstate"))
}

/// Runs `reconcile --write --format json` with `trail`; the exit code and the report.
fn run(s: &Scratch, trail: &Path) -> (i32, Value) {
    let output = Command::new(env!("CARGO_BIN_EXE_retrace"))
        .args(["reconcile", "--project"])
        .arg(&s.project)
        .arg("--state")
        .arg(&s.state)
        .arg("--logs")
        .arg(trail)
        .args([
            "--write",
            "--no-record",
            "--no-terraform",
            "--format",
            "json",
        ])
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    (output.status.code().unwrap_or(-1), common::json(&output))
}

fn files(dir: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, fs::read_to_string(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

fn trail(name: &str) -> PathBuf {
    common::repo()
        .join("fixtures/security/trails")
        .join(format!("{name}.json"))
}

/// Each finding of the report as (kind, API, reach, first managed address).
fn findings(doc: &Value) -> Vec<(String, String, String, String)> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let address = f["resources"]
                .as_array()
                .unwrap()
                .iter()
                .find_map(|r| r["address"].as_str())
                .unwrap_or_default();
            let text = |k: &str| f[k].as_str().unwrap().to_owned();
            (text("kind"), text("api"), text("reach"), address.to_owned())
        })
        .collect()
}

fn owned(rows: &[(&str, &str, &str, &str)]) -> Vec<(String, String, String, String)> {
    rows.iter()
        .map(|(a, b, c, d)| (a.to_string(), b.to_string(), c.to_string(), d.to_string()))
        .collect()
}

/// Every ruling of every intent, as (address or identity, decision).
fn rulings(doc: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for d in doc["intents"].as_array().unwrap() {
        let deltas = d["intent"]["deltas"].as_array().unwrap();
        for (delta, per) in deltas.iter().zip(d["rulings"].as_array().unwrap()) {
            let name = delta["address"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| delta["resource"]["identity"].as_str().unwrap().to_owned());
            for r in per.as_array().unwrap() {
                out.push((name.clone(), r["decision"].as_str().unwrap().to_owned()));
            }
        }
    }
    out
}

#[test]
fn logging_switched_off_is_flagged_on_each_managed_resource() {
    let s = security();
    let before = files(&s.project);
    let (code, doc) = run(&s, &trail("logging-off"));
    assert_eq!(code, 3, "{doc}");
    assert_eq!(files(&s.project), before);
    assert_eq!(
        findings(&doc),
        owned(&[
            ("security", "StopLogging", "managed", "aws_cloudtrail.audit"),
            (
                "security",
                "PutEventSelectors",
                "managed",
                "aws_cloudtrail.audit"
            ),
            ("security", "DeleteFlowLogs", "managed", "aws_flow_log.vpc"),
            (
                "security",
                "DeleteResolverQueryLogConfig",
                "managed",
                "aws_route53_resolver_query_log_config.dns"
            ),
        ])
    );
    assert_eq!(doc["findings"][0]["category"], "audit-logging");
    assert_eq!(doc["findings"][0]["risk"], "high");
    // The deletions with a rule are intents held for a person, never written.
    let held = |address: &str| (address.to_owned(), "flag".to_owned());
    assert_eq!(
        rulings(&doc),
        vec![
            held("aws_flow_log.vpc"),
            held("aws_route53_resolver_query_log_config.dns")
        ]
    );
}

#[test]
fn sharing_outside_the_account_is_flagged_and_never_written() {
    let s = security();
    let before = files(&s.project);
    let (code, doc) = run(&s, &trail("sharing"));
    assert_eq!(code, 3, "{doc}");
    assert_eq!(files(&s.project), before);
    assert_eq!(
        findings(&doc),
        owned(&[
            (
                "security",
                "ModifySnapshotAttribute",
                "managed",
                "aws_ebs_snapshot.backup"
            ),
            (
                "security",
                "ModifyDBSnapshotAttribute",
                "managed",
                "aws_db_snapshot.nightly"
            ),
            (
                "security",
                "UpdateAssumeRolePolicy",
                "managed",
                "aws_iam_role.app"
            ),
            (
                "security",
                "AddPermission",
                "managed",
                "aws_lambda_function.api"
            ),
        ])
    );
    // The trust policy and the public invoke permission have rules, and the policy's
    // default is to absorb: the security signal holds them all the same.
    let decided = rulings(&doc);
    assert!(
        decided.contains(&("aws_iam_role.app".into(), "flag".into())),
        "{decided:?}"
    );
    assert!(
        decided.contains(&("orders-api/open".into(), "flag".into())),
        "{decided:?}"
    );
    assert!(decided.iter().all(|(_, d)| d == "flag"), "{decided:?}");
}

#[test]
fn a_credential_created_for_a_managed_user_is_never_imported() {
    let s = security();
    let before = files(&s.project);
    let (code, doc) = run(&s, &trail("credentials"));
    assert_eq!(code, 3, "{doc}");
    assert_eq!(
        files(&s.project),
        before,
        "no access key or import block written"
    );
    assert_eq!(
        findings(&doc),
        owned(&[
            (
                "security",
                "CreateAccessKey",
                "managed",
                "aws_iam_user.deploy"
            ),
            (
                "security",
                "CreateLoginProfile",
                "managed",
                "aws_iam_user.deploy"
            ),
        ])
    );
    assert_eq!(
        rulings(&doc),
        [("AKIAQ3EGUL2BACKDOOR".to_owned(), "flag".to_owned())]
    );
    assert!(doc["plan"]["steps"].as_array().unwrap().is_empty());
}

#[test]
fn user_data_code_and_layers_are_flagged_and_hidden_values_reported() {
    let s = security();
    let before = files(&s.project);
    let (code, doc) = run(&s, &trail("code"));
    assert_eq!(code, 3, "{doc}");
    assert_eq!(files(&s.project), before);
    assert_eq!(
        findings(&doc),
        owned(&[
            (
                "hidden-value",
                "ModifyInstanceAttribute",
                "managed",
                "aws_instance.worker"
            ),
            (
                "security",
                "ModifyInstanceAttribute",
                "managed",
                "aws_instance.worker"
            ),
            (
                "security",
                "UpdateFunctionCode",
                "managed",
                "aws_lambda_function.api"
            ),
            (
                "hidden-value",
                "UpdateFunctionConfiguration",
                "managed",
                "aws_lambda_function.api"
            ),
            (
                "security",
                "UpdateFunctionConfiguration",
                "managed",
                "aws_lambda_function.api"
            ),
        ])
    );
    // Per call, what its rule could not read comes before the signal it fired.
    let hidden = &doc["findings"][3]["reason"];
    assert!(
        hidden.as_str().unwrap().contains("environment variables"),
        "{hidden}"
    );
}

#[test]
fn a_deletion_in_another_account_and_region_never_touches_the_project() {
    let s = security();
    let before = files(&s.project);
    let (code, doc) = run(&s, &trail("other-account"));
    assert_eq!(code, 0, "{doc}");
    assert_eq!(files(&s.project), before);
    assert_eq!(
        rulings(&doc),
        [("/orders/api".to_owned(), "ignore".to_owned())]
    );
    assert_eq!(doc["scope"]["accounts"][0], "111122223333");
    assert_eq!(doc["scope"]["regions"][0], "eu-west-1");
}

#[test]
fn the_same_deletion_in_the_projects_account_removes_the_block() {
    let s = security();
    let (code, doc) = run(&s, &trail("same-account"));
    assert_eq!(code, 2, "{doc}");
    let main = fs::read_to_string(s.project.join("main.tf")).unwrap();
    assert!(!main.contains("aws_cloudwatch_log_group"), "{main}");
    assert!(main.contains("resource \"aws_db_snapshot\" \"nightly\""));
}

#[test]
fn a_second_run_over_the_same_trail_writes_nothing_and_exits_0() {
    let cases = [
        "create-with-dependencies",
        "associate",
        "update-attribute",
        "tags",
        "add-block",
    ];
    for case in cases {
        let s = intents_project();
        let trail = common::repo().join("fixtures/intents").join(case);
        let (first, doc) = run(&s, &trail);
        assert_eq!(first, 2, "{case}: {doc}");
        let after_first = files(&s.project);
        let (second, doc) = run(&s, &trail);
        assert_eq!(second, 0, "{case}: {doc}");
        assert_eq!(doc["diff"], "", "{case}");
        assert_eq!(files(&s.project), after_first, "{case}");
        assert!(
            !doc["plan"]["settled"].as_array().unwrap().is_empty(),
            "{case}"
        );
        let imports = after_first
            .iter()
            .map(|(_, text)| text.matches("import {").count())
            .sum::<usize>();
        assert!(imports <= 1, "{case}: {imports} import blocks");
    }
}

#[test]
fn removing_a_resource_also_removes_its_import_and_moved_blocks() {
    let s = intents_project();
    let main = s.project.join("main.tf");
    let mut text = fs::read_to_string(&main).unwrap();
    text.push_str(
        "\nimport {\n  to = aws_cloudwatch_log_group.app\n  id = \"/ledger/app\"\n}\n\
         \nmoved {\n  from = aws_cloudwatch_log_group.old\n  to   = aws_cloudwatch_log_group.app\n}\n",
    );
    fs::write(&main, &text).unwrap();
    let trail = common::repo().join("fixtures/intents/delete-resource");
    let (code, doc) = run(&s, &trail);
    assert_eq!(code, 2, "{doc}");
    let after = fs::read_to_string(&main).unwrap();
    assert!(!after.contains("aws_cloudwatch_log_group.app"), "{after}");
    assert!(!after.contains("import {"), "{after}");
    assert!(!after.contains("moved {"), "{after}");
    // Again: nothing left to do.
    let (code, doc) = run(&s, &trail);
    assert_eq!(code, 0, "{doc}");
}

#[test]
fn redacted_values_are_reported_for_a_person_and_stay_out_of_code_and_report() {
    let s = security();
    let before = files(&s.project);
    let (code, doc) = run(&s, &trail("secrets"));
    assert_eq!(code, 3, "{doc}");
    assert_eq!(files(&s.project), before);
    assert_eq!(
        findings(&doc),
        owned(&[
            (
                "hidden-value",
                "PutParameter",
                "managed",
                "aws_ssm_parameter.db_url"
            ),
            (
                "hidden-value",
                "PutSecretValue",
                "managed",
                "aws_secretsmanager_secret.api_key"
            ),
            (
                "hidden-value",
                "UpdateFunctionConfiguration",
                "managed",
                "aws_lambda_function.api"
            ),
        ])
    );
    let reasons: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["reason"].as_str().unwrap())
        .collect();
    assert!(reasons[0].contains("the parameter's value"), "{reasons:?}");
    assert!(reasons[1].contains("the secret's value"), "{reasons:?}");
    assert!(reasons[2].contains("environment variables"), "{reasons:?}");
    // The parameter's value (a sensitive variable in terraform.tfvars, and in the state)
    // appears nowhere in the report.
    assert!(!doc.to_string().contains("db.internal"), "{doc}");
}

#[test]
fn a_parameter_created_with_a_hidden_value_is_held_whatever_the_policy_says() {
    let s = security();
    // A policy that absorbs everything it may: the creation is held all the same, since code
    // without the parameter's value would not even plan.
    fs::write(
        s.project.join("retrace.toml"),
        "[policy]\nrule_flags = false\n\n[[policy.rule]]\ndecision = \"absorb\"\nreason = \"absorb everything\"\n",
    )
    .unwrap();
    let before = files(&s.project);
    let (code, doc) = run(&s, &trail("created-parameter"));
    assert_eq!(code, 3, "{doc}");
    assert_eq!(
        files(&s.project),
        before,
        "no parameter or import block written"
    );
    let kinds: Vec<(String, String)> = findings(&doc)
        .into_iter()
        .map(|(kind, api, _, _)| (kind, api))
        .collect();
    assert_eq!(
        kinds,
        [("hidden-value".to_owned(), "PutParameter".to_owned())]
    );
    let rulings = rulings(&doc);
    assert!(!rulings.is_empty(), "{doc}");
    assert!(
        rulings
            .iter()
            .all(|(name, decision)| name == "/orders/maintenance-mode" && decision == "flag"),
        "{rulings:?}"
    );
    let reason = doc["intents"][0]["rulings"][0][0]["reason"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains("created with the parameter's value, which CloudTrail does not record"),
        "{reason}"
    );
    assert!(doc["plan"]["steps"].as_array().unwrap().is_empty());
}

#[test]
fn escape_sequences_and_direction_overrides_never_reach_the_terminal_or_the_code() {
    // The tag trail with a user agent carrying a colour escape and a tag value carrying a
    // right-to-left override, as an intruder could send them.
    let s = intents_project();
    let source = common::repo().join("fixtures/intents/tags/trail.json");
    let mut doc: Value = serde_json::from_slice(&fs::read(source).unwrap()).unwrap();
    let record = &mut doc["Records"][0];
    record["userAgent"] = Value::String("aws-cli/2.15.0 \u{1b}[31mred\u{1b}[0m".into());
    record["requestParameters"]["tagSet"]["items"][0]["value"] =
        Value::String("payments\u{202E}maet".into());
    let dir = tempfile::tempdir().unwrap();
    let trail = dir.path().join("trail.json");
    fs::write(&trail, doc.to_string()).unwrap();
    let text = Command::new(env!("CARGO_BIN_EXE_retrace"))
        .args(["reconcile", "--project"])
        .arg(&s.project)
        .arg("--state")
        .arg(&s.state)
        .arg("--logs")
        .arg(&trail)
        .args(["--write", "--no-record", "--no-terraform"])
        .output()
        .unwrap();
    let out = String::from_utf8(text.stdout).unwrap();
    assert!(!out.contains('\u{1b}'), "raw escape in the report:\n{out}");
    assert!(
        !out.contains('\u{202E}'),
        "raw override in the report:\n{out}"
    );
    assert!(out.contains("payments\\u{202e}maet"), "{out}");
    let main = fs::read_to_string(s.project.join("main.tf")).unwrap();
    assert!(
        !main.contains('\u{202E}'),
        "raw override written into main.tf"
    );
    assert!(main.contains("payments\\u202emaet"), "{main}");
    // JSON output keeps the exact value.
    let s = intents_project();
    let (_, json) = run(&s, &trail);
    let tags = &json["intents"][0]["intent"]["deltas"][0]["tags_set"]["Owner"];
    assert_eq!(tags, "payments\u{202E}maet");
}
