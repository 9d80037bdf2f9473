//! End-to-end: `retrace demo` and `retrace reconcile` on the bundled example. Every expected
//! line below was worked out by hand from fixtures/demo (its README lists each change).

use std::path::Path;
use std::process::Command;

fn retrace(args: &[&str]) -> (i32, String) {
    // Each run records into a throwaway knowledge base, never the user's.
    let kb = tempfile::tempdir().expect("temp dir");
    let output = Command::new(env!("CARGO_BIN_EXE_retrace"))
        .env("RETRACE_KB", kb.path().join("knowledge.sqlite"))
        .args(args)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.trim().is_empty() || output.status.code() != Some(1),
        "{stderr}"
    );
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

fn demo_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/demo")
}

#[test]
fn demo_absorbs_what_it_should_and_flags_the_open_ssh_rule() {
    // The real Terraform's verdict on the demo is checked by
    // the_real_terraform_judges_the_demo_where_it_and_the_aws_provider_are_installed.
    let (code, out) = retrace(&["demo", "--no-terraform"]);
    // The SSH rule opened to the internet is flagged, so not everything is reconciled.
    assert_eq!(code, 3, "{out}");
    for line in [
        // bob's CLI resize: var.instance_type is set in terraform.tfvars and used once.
        "-instance_type = \"t3.medium\"",
        "+instance_type = \"t3.large\"",
        // alice's console edit of the web group: HTTP from anywhere out, HTTPS from the VPC in.
        "-    from_port   = 80",
        "+    cidr_blocks = [\"10.0.0.0/16\"]",
        "+    description = \"HTTPS from the VPC\"",
        // S3 versioning and the tag PutBucketTagging added to the full set.
        "-    status = \"Suspended\"",
        "+    status = \"Enabled\"",
        "+    CostCenter  = \"marketing\"",
        // The desired capacity is left to scaling.
        "+    ignore_changes = [desired_capacity]",
        "plan-check: passed",
    ] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
    // The queue change was undone; the SSH rule is not absorbed.
    assert!(!out.contains("visibility_timeout_seconds ="), "{out}");
    assert!(!out.contains("+    from_port   = 22"), "{out}");
    assert!(out.contains("opens the security group"), "{out}");
}

#[test]
fn the_demo_text_report_reads_in_plain_words() {
    // Reviewed by eye against fixtures/demo/README.md: six intents, bob's SSH rule on its own
    // and held, alice's console edit of the same group absorbed.
    let dir = tempfile::tempdir().expect("temp dir");
    let out_dir = dir.path().join("demo");
    let out_arg = out_dir.to_str().expect("utf-8");
    let (code, out) = retrace(&["demo", "--no-record", "--no-terraform", "--out", out_arg]);
    assert_eq!(code, 3, "{out}");
    insta::assert_snapshot!(out.replace(out_arg, "[demo]"));
}

#[test]
fn reconcile_json_reports_decisions_and_writes_atomically_with_write() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let project = scratch.path().join("project");
    std::fs::create_dir(&project).expect("mkdir");
    for file in ["main.tf", "variables.tf", "terraform.tfvars"] {
        std::fs::copy(demo_dir().join("project").join(file), project.join(file)).expect("copy");
    }
    let demo = demo_dir();
    let state = demo.join("terraform.tfstate");
    let trail = demo.join("trail/AWSLogs");
    let config = demo.join("retrace.toml");
    let args = [
        "--config",
        config.to_str().expect("utf-8"),
        "reconcile",
        "--no-terraform",
        "--project",
        project.to_str().expect("utf-8"),
        "--state",
        state.to_str().expect("utf-8"),
        "--logs",
        trail.to_str().expect("utf-8"),
        "--format",
        "json",
    ];
    let (code, out) = retrace(&args);
    assert_eq!(code, 3, "{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("json");
    let decisions: Vec<(String, String)> = doc["intents"]
        .as_array()
        .expect("intents")
        .iter()
        .flat_map(|i| i["rulings"].as_array().cloned().unwrap_or_default())
        .flat_map(|r| r.as_array().cloned().unwrap_or_default())
        .map(|r| {
            (
                r["decision"].as_str().unwrap_or("").to_owned(),
                r["reason"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let count = |d: &str| decisions.iter().filter(|(x, _)| x == d).count();
    // Absorbed: ingress out, ingress in, instance_type, versioning status, tags.
    assert_eq!(count("absorb"), 5, "{decisions:?}");
    assert_eq!(count("flag"), 1, "{decisions:?}");
    assert_eq!(count("ignore"), 1, "{decisions:?}");
    let before = std::fs::read_to_string(project.join("terraform.tfvars")).expect("read");
    let mut write = args.to_vec();
    write.push("--write");
    let (code, _) = retrace(&write);
    assert_eq!(code, 3);
    let after = std::fs::read_to_string(project.join("terraform.tfvars")).expect("read");
    assert_eq!(after, before.replace("\"t3.medium\"", "\"t3.large\""));
}

/// One console `PutBucketVersioning` suspending versioning on the datalake project's raw
/// bucket (its state says `Enabled`), shaped as CloudTrail logs S3 configuration calls.
const SUSPEND_VERSIONING: &str = r#"{"Records": [{
  "eventVersion": "1.10",
  "userIdentity": {"type": "IAMUser", "principalId": "AIDAEXAMPLEALICE0001",
    "arn": "arn:aws:iam::123456789012:user/alice", "accountId": "123456789012",
    "accessKeyId": "ASIAEXAMPLEALICE0001", "userName": "alice"},
  "eventTime": "2026-03-02T09:08:04Z",
  "eventSource": "s3.amazonaws.com",
  "eventName": "PutBucketVersioning",
  "awsRegion": "us-west-2",
  "sourceIPAddress": "203.0.113.24",
  "userAgent": "[S3Console/0.4, aws-internal/3 aws-sdk-java/1.12.750]",
  "requestParameters": {"bucketName": "acme-corp-analytics-prod-raw",
    "Host": "acme-corp-analytics-prod-raw.s3.amazonaws.com", "versioning": "",
    "VersioningConfiguration": {"Status": "Suspended",
      "xmlns": "http://s3.amazonaws.com/doc/2006-03-01/"}},
  "responseElements": null,
  "requestID": "EXAMPLE0REQUEST1",
  "eventID": "5b0c9a4e-2f1d-4c3b-9a8e-7d6c5b4a3f21",
  "readOnly": false,
  "eventType": "AwsApiCall",
  "managementEvent": true,
  "recipientAccountId": "123456789012",
  "eventCategory": "Management",
  "sessionCredentialFromConsole": "true"
}]}"#;

/// `retrace reconcile` on the datalake project (not written to) with the versioning trail and
/// a `retrace.toml` holding `policy`, in the given format.
fn reconcile_suspended_versioning(policy: &str, format: &str) -> (i32, String) {
    let scratch = tempfile::tempdir().expect("temp dir");
    let trail = scratch.path().join("trail.json");
    std::fs::write(&trail, SUSPEND_VERSIONING).expect("trail written");
    let config = scratch.path().join("retrace.toml");
    std::fs::write(&config, format!("[policy]\n{policy}\n")).expect("config written");
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/projects/datalake");
    let state = project.join("terraform.tfstate");
    retrace(&[
        "--config",
        config.to_str().expect("utf-8"),
        "reconcile",
        "--no-terraform",
        "--project",
        project.to_str().expect("utf-8"),
        "--state",
        state.to_str().expect("utf-8"),
        "--logs",
        trail.to_str().expect("utf-8"),
        "--since",
        "2026-03-02",
        "--until",
        "2026-03-03",
        "--format",
        format,
    ])
}

const SUSPENDS: &str =
    "suspends versioning, so overwritten and deleted objects can no longer be recovered";

#[test]
fn a_warned_change_is_written_with_its_warning_in_text_and_json() {
    let (code, out) = reconcile_suspended_versioning("", "text");
    // Patched: the warning does not hold the change back.
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("raw = \"Suspended\""), "{out}");
    let ruling = format!(
        "absorb versioning_configuration.status = \"Suspended\": the policy's default (warning: {SUSPENDS})"
    );
    assert!(out.contains(&ruling), "missing {ruling:?} in\n{out}");
    let edit = out
        .lines()
        .find(|l| l.contains("set_attribute on aws_s3_bucket_versioning.this[\"raw\"]"))
        .unwrap_or_else(|| panic!("no edit in\n{out}"));
    assert!(edit.contains(&format!("(warning: {SUSPENDS}; ")), "{edit}");

    let (code, out) = reconcile_suspended_versioning("", "json");
    assert_eq!(code, 2, "{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("json");
    let ruling = &doc["intents"][0]["rulings"][0][0];
    assert_eq!(ruling["decision"], "absorb", "{ruling}");
    assert_eq!(ruling["warning"], SUSPENDS, "{ruling}");
    let flags = &doc["intents"][0]["intent"]["deltas"][0]["flags"];
    assert_eq!(
        flags,
        &serde_json::json!([{"reason": SUSPENDS, "level": "warn"}])
    );
    let step = &doc["plan"]["steps"][0];
    let warning = step["warning"].as_str().expect("a warning on the step");
    assert!(warning.starts_with(SUSPENDS), "{warning}");
}

#[test]
fn hold_warnings_holds_a_warned_change_for_a_person() {
    let (code, out) = reconcile_suspended_versioning("hold_warnings = true", "json");
    assert_eq!(code, 3, "{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("json");
    let ruling = &doc["intents"][0]["rulings"][0][0];
    assert_eq!(ruling["decision"], "flag", "{ruling}");
    assert_eq!(ruling["reason"], SUSPENDS, "{ruling}");
    assert!(ruling.get("warning").is_none(), "{ruling}");
    assert_eq!(doc["plan"]["steps"], serde_json::json!([]), "{out}");
    assert_eq!(doc["diff"], "", "{out}");
}

#[test]
fn the_real_terraform_judges_the_demo_where_it_and_the_aws_provider_are_installed() {
    let (code, out) = retrace(&["demo", "--format", "json"]);
    assert_eq!(code, 3, "{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("json");
    let ran = doc["validations"]
        .as_array()
        .expect("validations")
        .iter()
        .find(|v| v["validator"] == "terraform-plan");
    match ran {
        Some(verdict) => assert_eq!(verdict["passed"], true, "{verdict}"),
        None => {
            let skipped = doc["skipped_validators"].to_string();
            assert!(skipped.contains("terraform-plan"), "{skipped}");
            let present = reconciler::validate::terraform_present();
            assert!(
                !(present && std::env::var("CI").is_ok_and(|v| v == "true")),
                "terraform is installed but its validator did not run: {skipped}"
            );
            eprintln!("notice: the Terraform validator did not run here: {skipped}");
        }
    }
}

#[test]
fn the_real_terraform_fails_a_patch_the_cloud_does_not_match() {
    // The observed cloud is the state before the drift: nothing the patch writes is there, so
    // both validators must find the resized instance (t3.large in the code, t3.medium in the
    // cloud).
    let demo = demo_dir();
    let config = demo.join("retrace.toml");
    let state = demo.join("terraform.tfstate");
    let (code, out) = retrace(&[
        "--config",
        config.to_str().expect("utf-8"),
        "reconcile",
        "--observed",
        state.to_str().expect("utf-8"),
        "--format",
        "json",
    ]);
    assert_eq!(code, 3, "{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("json");
    for verdict in doc["validations"].as_array().expect("validations") {
        assert_eq!(verdict["passed"], false, "{verdict}");
        let resized = serde_json::json!({"address": "aws_instance.web",
            "attribute": "instance_type", "config": "t3.large", "observed": "t3.medium"});
        assert!(
            verdict["differences"]
                .as_array()
                .expect("differences")
                .contains(&resized),
            "{verdict}"
        );
    }
}

#[test]
fn the_demo_runs_from_a_copied_binary_anywhere_and_leaves_the_default_store_alone() {
    // The binary moved away from the source tree, as `cargo install` leaves it, run from an
    // unrelated directory with a home of its own.
    let place = tempfile::tempdir().expect("temp dir");
    let binary = place.path().join("retrace");
    std::fs::copy(env!("CARGO_BIN_EXE_retrace"), &binary).expect("copy the binary");
    let home = place.path().join("home");
    let elsewhere = place.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    let output = Command::new(&binary)
        .current_dir(&elsewhere)
        .env_remove("RETRACE_KB")
        .env("HOME", &home)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .args(["demo", "--no-terraform"])
        .output()
        .expect("runs");
    let out = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "{out}");
    assert!(out.contains("+instance_type = \"t3.large\""), "{out}");
    assert!(
        !home.join(".local/share/retrace").exists(),
        "the demo wrote into the default knowledge base"
    );
    assert_eq!(
        std::fs::read_dir(&elsewhere).expect("read").count(),
        0,
        "the demo left files in the working directory"
    );

    // --out keeps the unpacked example; a non-empty directory is refused.
    let out_dir = place.path().join("example");
    let kept = Command::new(&binary)
        .current_dir(&elsewhere)
        .args(["demo", "--no-terraform", "--no-record", "--out"])
        .arg(&out_dir)
        .output()
        .expect("runs");
    assert_eq!(kept.status.code(), Some(3));
    for name in [
        "project/main.tf",
        "terraform.tfstate",
        "retrace.toml",
        "trail",
    ] {
        assert!(out_dir.join(name).exists(), "{name} was not unpacked");
    }
    let refused = Command::new(&binary)
        .args(["demo", "--no-record", "--out"])
        .arg(&out_dir)
        .output()
        .expect("runs");
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not empty"));
}

/// A copy of the demo (project, state, trail) in a temporary directory.
fn demo_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let copy = |from: &Path, to: &Path| {
        let status = Command::new("cp")
            .arg("-r")
            .arg(from)
            .arg(to)
            .status()
            .expect("cp runs");
        assert!(status.success());
    };
    for name in ["project", "trail", "terraform.tfstate"] {
        copy(&demo_dir().join(name), &dir.path().join(name));
    }
    dir
}

fn reconcile_json(dir: &Path, extra: &[&str]) -> (i32, serde_json::Value, String) {
    let project = dir.join("project");
    let state = dir.join("terraform.tfstate");
    let trail = dir.join("trail");
    let mut args = vec![
        "reconcile",
        "--project",
        project.to_str().expect("utf-8"),
        "--state",
        state.to_str().expect("utf-8"),
        "--logs",
        trail.to_str().expect("utf-8"),
        "--region",
        "us-east-1",
        "--no-terraform",
        "--format",
        "json",
    ];
    args.extend(extra);
    let kb = tempfile::tempdir().expect("temp dir");
    let output = Command::new(env!("CARGO_BIN_EXE_retrace"))
        .env("RETRACE_KB", kb.path().join("knowledge.sqlite"))
        .args(&args)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let doc = serde_json::from_slice(&output.stdout).unwrap_or(serde_json::Value::Null);
    (output.status.code().unwrap_or(-1), doc, stderr)
}

#[test]
fn a_malformed_record_mid_file_costs_only_itself() {
    let dir = demo_copy();
    // The 11-record file of the 10:30 delivery: record 3 (GetBucketVersioning) loses its
    // closing brace. The S3 and SQS changes after it must still be reconciled.
    let file = dir.path().join(
        "trail/AWSLogs/111122223333/CloudTrail/us-east-1/2026/11/20/\
         111122223333_CloudTrail_us-east-1_20261120T1130Z_Vq3LmT8xKp2RzW5n.json",
    );
    let text = std::fs::read_to_string(&file).expect("read");
    let mut doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    let records = doc["Records"].as_array_mut().expect("records");
    assert_eq!(records.len(), 11);
    let parts: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    let start = parts[..3].iter().map(|p| p.len() + 1).sum::<usize>() + "{\"Records\":[".len();
    let mut broken = parts.clone();
    broken[3].pop();
    std::fs::write(&file, format!("{{\"Records\":[{}]}}", broken.join(","))).expect("write");
    let (code, doc, stderr) = reconcile_json(dir.path(), &[]);
    assert_eq!(code, 3, "{stderr}");
    let apis: Vec<&str> = doc["intents"]
        .as_array()
        .expect("intents")
        .iter()
        .flat_map(|d| d["intent"]["evidence"].as_array().expect("evidence"))
        .map(|e| e["api"].as_str().expect("api"))
        .collect();
    for api in [
        "PutBucketVersioning",
        "PutBucketTagging",
        "SetQueueAttributes",
    ] {
        assert!(apis.contains(&api), "{api} vanished: {apis:?}");
    }
    let input = &doc["input"];
    assert_eq!(input["skipped"], 1, "{input}");
    let skipped = &input["skipped_records"][0];
    assert_eq!(skipped["index"], 3);
    assert_eq!(skipped["offset"], start as u64);
    assert!(
        skipped["source"]
            .as_str()
            .expect("source")
            .ends_with(".json")
    );
    assert!(
        skipped["reason"]
            .as_str()
            .expect("reason")
            .starts_with("not valid JSON"),
        "{skipped}"
    );
}

#[test]
fn a_run_that_reads_nothing_is_an_error_unless_allowed() {
    let dir = demo_copy();
    // An empty directory, one with no log file, and a window no record falls in.
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let project = dir.path().join("project");
    let state = dir.path().join("terraform.tfstate");
    let run = |logs: &Path, extra: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_retrace"));
        command
            .args(["reconcile", "--no-record", "--no-terraform", "--project"])
            .arg(&project)
            .arg("--state")
            .arg(&state)
            .arg("--logs")
            .arg(logs)
            .args(extra);
        let output = command.output().expect("runs");
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, stderr) = run(&empty, &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("no CloudTrail log file under"), "{stderr}");
    assert!(stderr.contains(empty.to_str().expect("utf-8")), "{stderr}");
    std::fs::write(empty.join("README.txt"), "not a log").expect("write");
    let (code, stderr) = run(&empty, &[]);
    assert_eq!(code, 1, "{stderr}");
    let trail = dir.path().join("trail");
    let (code, stderr) = run(
        &trail,
        &[
            "--since",
            "2026-11-20T20:00:00Z",
            "--until",
            "2026-11-21T00:00:00Z",
        ],
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("no CloudTrail record inside the window"),
        "{stderr}"
    );
    let (code, stderr) = run(&empty, &["--allow-empty"]);
    assert_eq!(code, 0, "{stderr}");
}

/// Every file under a directory with its bytes, by path relative to it.
fn tree(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(here) = stack.pop() {
        for entry in std::fs::read_dir(&here).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path
                    .strip_prefix(dir)
                    .expect("inside")
                    .display()
                    .to_string();
                out.insert(name, std::fs::read(&path).expect("read"));
            }
        }
    }
    out
}

#[test]
fn a_write_killed_at_any_step_leaves_every_file_old_or_every_file_new() {
    // The demo's patch changes main.tf and terraform.tfvars: two staged files, the journal,
    // two renames. Kill the writer after each step; the next run completes or clears it.
    let reference = demo_copy();
    let old = tree(&reference.path().join("project"));
    let (code, _, stderr) = reconcile_json(reference.path(), &["--write"]);
    assert_eq!(code, 3, "{stderr}");
    let new = tree(&reference.path().join("project"));
    let changed: Vec<&String> = new.keys().filter(|k| old.get(*k) != new.get(*k)).collect();
    assert_eq!(changed, ["main.tf", "terraform.tfvars"]);
    for step in 1..=5 {
        let dir = demo_copy();
        let project = dir.path().join("project");
        let state = dir.path().join("terraform.tfstate");
        let trail = dir.path().join("trail");
        let killed = Command::new(env!("CARGO_BIN_EXE_retrace"))
            .env("RETRACE_FAULT_AFTER", step.to_string())
            .args([
                "reconcile",
                "--no-record",
                "--no-terraform",
                "--write",
                "--project",
            ])
            .arg(&project)
            .arg("--state")
            .arg(&state)
            .arg("--logs")
            .arg(&trail)
            .args(["--region", "us-east-1"])
            .output()
            .expect("runs");
        assert_eq!(
            killed.status.code(),
            None,
            "step {step}: the writer was not killed"
        );
        // The next run finds the interrupted write and completes or clears it.
        let (code, _, stderr) = reconcile_json(dir.path(), &[]);
        assert_ne!(code, 1, "step {step}: {stderr}");
        let after = tree(&project);
        let expected = if step <= 2 { &old } else { &new };
        assert_eq!(
            after.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>(),
            "step {step}: stray or missing files"
        );
        assert!(
            after == *expected,
            "step {step}: files are neither all old nor all new"
        );
    }
}

#[test]
fn a_patch_terraform_did_not_check_says_so_in_its_status() {
    // bob's resize in the intents fixtures is patched (exit 2); with no `terraform` on PATH the
    // real check cannot run, and the status line must not read as if it had.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/intents");
    let empty = tempfile::tempdir().expect("temp dir");
    let output = Command::new(env!("CARGO_BIN_EXE_retrace"))
        .current_dir(empty.path())
        .env("PATH", empty.path())
        .arg("reconcile")
        .arg("--project")
        .arg(fixtures.join("project"))
        .arg("--state")
        .arg(fixtures.join("project.tfstate"))
        .arg("--logs")
        .arg(fixtures.join("update-attribute/trail.json"))
        .args(["--since", "2026-11-21T00:00:00Z", "--no-record"])
        .output()
        .expect("runs");
    let out = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(2), "{out}");
    let status = out
        .lines()
        .find(|l| l.starts_with("Status: "))
        .expect("a status line");
    assert!(
        status.starts_with(
            "Status: drift patched (exit 2), checked by the built-in check only: terraform-plan \
             did not check the patch ("
        ),
        "{status}"
    );
}
