//! Real attack trails (`../shared/cloudtrail-samples/stratus-red-team`, recorded by Stratus Red
//! Team against real accounts) run through `retrace reconcile`: every out-of-band write ends
//! absorbed, flagged, ignored or reported — none silent — nothing is ever absorbed from them,
//! and against a project that manages the attacked resource each attack is flagged with that
//! resource named, exit 3, and no file changed.
#![allow(clippy::unwrap_used, missing_docs)]

use crate::common;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use reconciler::attribute::{Attributor, Verdict};
use reconciler::ingest::files::read_file;
use reconciler::ingest::{Call, SourceItem};
use serde_json::{Value, json};

/// The attack files, in name order, or `None` (with a notice) when the samples are not beside
/// the checkout.
fn attack_files() -> Option<Vec<PathBuf>> {
    let dir = common::samples()?.join("stratus-red-team");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 30, "expected the 35 attack files");
    Some(files)
}

/// The file's out-of-band calls (what `reconcile` reads), by retrace's own attribution.
fn out_of_band(path: &Path) -> Vec<Call> {
    let attributor = Attributor::default();
    let mut calls = Vec::new();
    read_file(path, None, &mut |item| {
        if let Ok(SourceItem::Call(call)) = item
            && attributor.attribute(&call).verdict == Verdict::OutOfBand
        {
            calls.push(*call);
        }
        true
    });
    calls
}

/// Runs `retrace reconcile --write --format json` on a copy of `project` (with `state`);
/// returns the exit code, the JSON report and the project's files before and after.
struct Run {
    code: i32,
    doc: Value,
    unchanged: bool,
}

fn reconcile(project: &Path, state: &Path, trail: &Path, extra: &[&str]) -> Run {
    let work = tempfile::tempdir().unwrap();
    let copy = work.path().join("project");
    common::copy_dir(project, &copy);
    let before = snapshot(&copy);
    let mut args = vec![
        "reconcile".to_owned(),
        "--project".into(),
        copy.display().to_string(),
        "--state".into(),
        state.display().to_string(),
        "--logs".into(),
        trail.display().to_string(),
        "--write".into(),
        "--no-record".into(),
        "--no-terraform".into(),
        "--format".into(),
        "json".into(),
    ];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let output = Command::new(env!("CARGO_BIN_EXE_retrace"))
        .args(&args)
        .current_dir(work.path())
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        doc: common::json(&output),
        unchanged: snapshot(&copy) == before,
    }
}

/// Every file under a directory with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in walk(dir) {
        out.push((entry.clone(), fs::read(&entry).unwrap()));
    }
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// The event ids a report accounts for: in an intent (with a ruling on each part) or in a
/// finding.
fn accounted(doc: &Value) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    for intent in doc["intents"].as_array().unwrap() {
        for e in intent["intent"]["evidence"].as_array().unwrap() {
            ids.insert(e["event_id"].as_str().unwrap().to_owned());
        }
    }
    for f in doc["findings"].as_array().unwrap() {
        ids.insert(f["event_id"].as_str().unwrap().to_owned());
    }
    ids
}

/// The decisions of every part of every intent.
fn decisions(doc: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for intent in doc["intents"].as_array().unwrap() {
        for per_delta in intent["rulings"].as_array().unwrap() {
            for ruling in per_delta.as_array().unwrap() {
                out.push(ruling["decision"].as_str().unwrap().to_owned());
            }
        }
    }
    out
}

#[test]
fn no_write_call_of_a_real_attack_is_silent_or_absorbed() {
    let project = common::repo().join("fixtures/security/project");
    let state = common::repo().join("fixtures/security/terraform.tfstate");
    let Some(files) = attack_files() else { return };
    for file in files {
        let calls = out_of_band(&file);
        // The project is in another account: every call is the account's, not the project's.
        // Asked about the attack's own account and region, the same calls are in scope.
        let mut scoped: Vec<String> = Vec::new();
        if let Some(call) = calls.first() {
            scoped = vec![
                "--account".into(),
                call.recipient_account_id.clone().unwrap(),
                "--region".into(),
                call.aws_region.clone(),
            ];
        }
        for extra in [Vec::new(), scoped] {
            let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
            let run = reconcile(&project, &state, &file, &extra);
            let name = file.file_name().unwrap().to_string_lossy();
            assert!(run.code == 0 || run.code == 3, "{name}: exit {}", run.code);
            assert!(run.unchanged, "{name}: a file changed");
            assert!(
                !decisions(&run.doc).iter().any(|d| d == "absorb"),
                "{name}: something was absorbed: {}",
                run.doc["intents"]
            );
            let seen = accounted(&run.doc);
            for call in calls.iter().filter(|c| {
                extra.is_empty()
                    || (Some(c.recipient_account_id.as_deref().unwrap_or_default())
                        == extra.get(1).copied()
                        && c.aws_region == extra[3])
            }) {
                assert!(
                    seen.contains(&call.event_id),
                    "{name}: {} {} is not accounted for",
                    call.api_name(),
                    call.event_id
                );
            }
            // In the attack's own account, a write call leaves work for a person.
            if !extra.is_empty() && !calls.is_empty() {
                assert_eq!(run.code, 3, "{name} in its own account: {}", run.doc);
            }
        }
    }
}

/// What a project that manages the attacked resource holds: the attack file, the API whose
/// target it is, the resource type, and where the request names it.
const TARGETS: &[(&str, &str, &str, &str)] = &[
    ("cloudtrail-delete", "DeleteTrail", "aws_cloudtrail", "name"),
    ("cloudtrail-stop", "StopLogging", "aws_cloudtrail", "name"),
    (
        "cloudtrail-event-selectors",
        "PutEventSelectors",
        "aws_cloudtrail",
        "trailName",
    ),
    (
        "dns-delete-logs",
        "DeleteResolverQueryLogConfig",
        "aws_route53_resolver_query_log_config",
        "resolverQueryLogConfigId",
    ),
    (
        "vpc-remove-flow-logs",
        "DeleteFlowLogs",
        "aws_flow_log",
        "DeleteFlowLogsRequest.FlowLogId.content",
    ),
    (
        "ec2-share-ami",
        "ModifyImageAttribute",
        "aws_ami",
        "imageId",
    ),
    (
        "ec2-share-ebs-snapshot",
        "ModifySnapshotAttribute",
        "aws_ebs_snapshot",
        "snapshotId",
    ),
    (
        "rds-share-snapshot",
        "ModifyDBSnapshotAttribute",
        "aws_db_snapshot",
        "dBSnapshotIdentifier",
    ),
    (
        "execution.ec2-user-data",
        "ModifyInstanceAttribute",
        "aws_instance",
        "instanceId",
    ),
    (
        "ssm-send-command",
        "SendCommand",
        "aws_instance",
        "instanceIds.0",
    ),
    (
        "ec2-steal-instance-credentials",
        "SendCommand",
        "aws_instance",
        "instanceIds.0",
    ),
    (
        "ec2-instance-connect",
        "SendSSHPublicKey",
        "aws_instance",
        "instanceId",
    ),
    (
        "ec2-serial-console-send-ssh-public-key",
        "SendSerialConsoleSSHPublicKey",
        "aws_instance",
        "instanceId",
    ),
    (
        "ssm-start-session",
        "StartSession",
        "aws_instance",
        "target",
    ),
    (
        "open-port-22-ingress",
        "AuthorizeSecurityGroupIngress",
        "aws_security_group",
        "groupId",
    ),
    (
        "iam-backdoor-role",
        "UpdateAssumeRolePolicy",
        "aws_iam_role",
        "roleName",
    ),
    (
        "iam-backdoor-user",
        "CreateAccessKey",
        "aws_iam_user",
        "userName",
    ),
    (
        "iam-create-user-login-profile",
        "CreateLoginProfile",
        "aws_iam_user",
        "userName",
    ),
    (
        "iam-update-user-login-profile",
        "UpdateLoginProfile",
        "aws_iam_user",
        "userName",
    ),
    (
        "lambda-backdoor-function",
        "AddPermission",
        "aws_lambda_function",
        "functionName",
    ),
    (
        "lambda-layer-extension",
        "UpdateFunctionConfiguration",
        "aws_lambda_function",
        "functionName",
    ),
    (
        "lambda-overwrite-code",
        "UpdateFunctionCode",
        "aws_lambda_function",
        "functionName",
    ),
];

/// The attribute a type is known by besides `id`, and the value for it from the request's.
fn managed_attributes(resource_type: &str, named: &str, account: &str, region: &str) -> Value {
    let name = named.rsplit([':', '/']).next().unwrap();
    match resource_type {
        "aws_cloudtrail" => json!({"id": name, "name": name,
            "arn": format!("arn:aws:cloudtrail:{region}:{account}:trail/{name}")}),
        "aws_iam_role" | "aws_iam_user" => {
            let kind = &resource_type[8..];
            json!({"id": name, "name": name, "arn": format!("arn:aws:iam::{account}:{kind}/{name}")})
        }
        "aws_lambda_function" => json!({"id": name, "function_name": name,
            "arn": format!("arn:aws:lambda:{region}:{account}:function:{name}")}),
        _ => json!({"id": named}),
    }
}

/// Writes a project and state managing one resource of `resource_type` named `named`.
fn managing(dir: &Path, resource_type: &str, named: &str, account: &str, region: &str) -> PathBuf {
    let project = dir.join("project");
    fs::create_dir_all(&project).unwrap();
    fs::write(
        project.join("main.tf"),
        format!("resource \"{resource_type}\" \"target\" {{\n}}\n"),
    )
    .unwrap();
    let state = json!({"version": 4, "terraform_version": "1.11.4", "serial": 1,
        "lineage": "attack", "outputs": {}, "resources": [{"mode": "managed",
        "type": resource_type, "name": "target",
        "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
        "instances": [{"schema_version": 0,
            "attributes": managed_attributes(resource_type, named, account, region)}]}]});
    let path = dir.join("terraform.tfstate");
    fs::write(&path, state.to_string()).unwrap();
    path
}

/// The value at a dotted path (numbers index arrays).
fn at<'v>(value: &'v Value, path: &str) -> &'v Value {
    path.split('.')
        .fold(value, |v, step| match step.parse::<usize>() {
            Ok(i) => &v[i],
            Err(_) => &v[step],
        })
}

/// The addresses a report names for one event: in its findings and its flagged intents.
fn named_addresses(doc: &Value, event_id: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for f in doc["findings"].as_array().unwrap() {
        if f["event_id"] == event_id {
            for r in f["resources"].as_array().unwrap() {
                if let Some(a) = r["address"].as_str() {
                    out.insert(a.to_owned());
                }
            }
        }
    }
    for d in doc["intents"].as_array().unwrap() {
        let intent = &d["intent"];
        let has = intent["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["event_id"] == event_id);
        if has {
            for delta in intent["deltas"].as_array().unwrap() {
                if let Some(a) = delta["address"].as_str() {
                    out.insert(a.to_owned());
                }
            }
        }
    }
    out
}

#[test]
fn each_attack_on_a_managed_resource_is_flagged_with_the_resource_named() {
    let Some(files) = attack_files() else { return };
    for (file_part, api, resource_type, path) in TARGETS {
        let file = files
            .iter()
            .find(|f| f.to_string_lossy().contains(file_part))
            .unwrap_or_else(|| panic!("no attack file for {file_part}"));
        let calls = out_of_band(file);
        let call = calls
            .iter()
            .find(|c| c.api_name() == *api)
            .unwrap_or_else(|| panic!("{file_part}: no out-of-band {api}"));
        let request = call.request_parameters.json().unwrap();
        let named = at(&request, path).as_str().unwrap();
        let account = call.recipient_account_id.as_deref().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let state = managing(dir.path(), resource_type, named, account, &call.aws_region);
        let run = reconcile(&dir.path().join("project"), &state, file, &[]);
        assert_eq!(run.code, 3, "{file_part}: {}", run.doc);
        assert!(run.unchanged, "{file_part}: a file changed");
        let address = format!("{resource_type}.target");
        assert!(
            named_addresses(&run.doc, &call.event_id).contains(&address),
            "{file_part}: {address} is not named for {api}: {}",
            run.doc
        );
        let flagged = run.doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["event_id"] == call.event_id.as_str() && f["kind"] == "security")
            || decisions(&run.doc).iter().any(|d| d == "flag");
        assert!(flagged, "{file_part}: {api} is not flagged: {}", run.doc);
    }
}
