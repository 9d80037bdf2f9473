//! End-to-end: the knowledge base through the `retrace` binary — a rule learned from a call
//! without one, used on the next run, demoted after failing validation; a store that survives
//! runs killed mid-way; export and import between stores.
//!
//! fixtures/learn/ is a topic and an SQS subscription with `raw_message_delivery = false`;
//! each trail holds one CLI `SetSubscriptionAttributes` call setting `RawMessageDelivery` to
//! "true" (no shipped rule covers that API), and `observed-raw-delivery-on.tfstate` is the
//! state after it. Every run records into a temporary store (`--kb`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use serde_json::Value;

const CALL_1: &str = "8d2f6a41-3c7e-4b95-a0d8-61e4f2b9c357";
const LEARNED_EDIT: &str = "+  raw_message_delivery = true";

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/learn")
        .join(path)
}

fn retrace(kb: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retrace"))
        .env_remove("RETRACE_KB")
        .arg("--kb")
        .arg(kb)
        .args(args)
        .output()
        .expect("runs")
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `retrace reconcile` on the fixture project with one trail and maybe an observed state.
fn reconcile(kb: &Path, trail: &str, observed: Option<&str>) -> (i32, String) {
    let project = fixture("project");
    let state = fixture("terraform.tfstate");
    let logs = fixture(trail);
    let mut args = vec![
        "reconcile".to_owned(),
        "--project".into(),
        project.display().to_string(),
        "--state".into(),
        state.display().to_string(),
        "--logs".into(),
        logs.display().to_string(),
        "--no-terraform".into(),
    ];
    if let Some(observed) = observed {
        args.push("--observed".into());
        args.push(fixture(observed).display().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = retrace(kb, &args);
    assert_ne!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code().unwrap_or(-1), text(&output))
}

fn json(kb: &Path, args: &[&str]) -> Value {
    let mut all = vec!["kb", "--format", "json"];
    all.extend(args);
    let output = retrace(kb, &all);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("json")
}

fn learned(kb: &Path) -> Vec<Value> {
    json(kb, &["list", "--provenance", "learned"])
        .as_array()
        .cloned()
        .expect("list")
}

#[test]
fn a_rule_is_learned_used_demoted_and_reviewed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let kb = dir.path().join("kb.sqlite");

    // Run 1: no rule explains the call, but the observed state shows the subscription's
    // raw_message_delivery turned on and the request holds "true" for it.
    let (code, out) = reconcile(&kb, "trail-1", Some("observed-raw-delivery-on.tfstate"));
    assert_eq!(code, 2, "{out}");
    assert!(out.contains(LEARNED_EDIT), "{out}");
    assert!(out.contains("plan-check: passed"), "{out}");
    assert!(
        out.contains("sns:SetSubscriptionAttributes: explained a call without a rule"),
        "{out}"
    );
    let rules = learned(&kb);
    assert_eq!(rules.len(), 1, "{rules:?}");
    let rule = &rules[0];
    let id = rule["id"].as_i64().expect("id");
    assert_eq!(rule["active"], true);
    assert_eq!(rule["evidence"]["event_ids"], serde_json::json!([CALL_1]));
    assert_eq!(rule["evidence"]["reconciliation_id"], 1);
    let spec = &rule["rule"]["spec"];
    assert_eq!(spec["resource"], "aws_sns_topic_subscription");
    assert_eq!(spec["identity"][0]["path"], "subscriptionArn");
    let set = &spec["set"][0];
    assert_eq!(set["attribute"], "raw_message_delivery");
    assert_eq!(set["path"], "attributeValue");
    assert_eq!(set["transform"], "bool");
    assert_eq!(set["when"]["path"], "attributeName");
    assert_eq!(set["when"]["equals"], "RawMessageDelivery");

    // Run 2: a later call of the same kind, no observed state: the learned rule explains it.
    let (code, out) = reconcile(&kb, "trail-2", None);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains(LEARNED_EDIT), "{out}");
    assert!(
        out.contains("rule sns:SetSubscriptionAttributes: success"),
        "{out}"
    );
    assert!(out.contains("seen before: run #1, validated"), "{out}");

    // Runs 3 and 4: the cloud (observed) still has raw delivery off, so the patch the rule
    // makes fails validation; after the second failure in a row the rule is demoted.
    let (code, out) = reconcile(&kb, "trail-3", Some("terraform.tfstate"));
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("plan-check: FAILED"), "{out}");
    assert!(
        out.contains("rule sns:SetSubscriptionAttributes: failure"),
        "{out}"
    );
    assert!(!out.contains("demoted"), "{out}");
    let (code, out) = reconcile(&kb, "trail-3", Some("terraform.tfstate"));
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains(&format!(
            "demoted learned rule #{id} sns:SetSubscriptionAttributes"
        )),
        "{out}"
    );
    let shown = json(&kb, &["show", &id.to_string()]);
    assert_eq!(shown["active"], false);
    assert_eq!(
        (&shown["successes"], &shown["failures"]),
        (&serde_json::json!(1), &serde_json::json!(2))
    );

    // Run 5: demoted, the rule is no longer used: the call on the managed subscription is an
    // unexplained change left for a person.
    let (code, out) = reconcile(&kb, "trail-2", None);
    assert_eq!(code, 3, "{out}");
    assert!(!out.contains(LEARNED_EDIT), "{out}");
    assert!(
        out.contains("SetSubscriptionAttributes c41e8b07-9d25-4f6a-8e3b-7a0f5c1d2e94"),
        "{out}"
    );
    assert!(
        out.contains("no rule in the knowledge base for this API"),
        "{out}"
    );

    // Nor is it learned again from the same evidence while demoted.
    let (_, out) = reconcile(&kb, "trail-1", Some("observed-raw-delivery-on.tfstate"));
    assert!(!out.contains("explained a call without a rule"), "{out}");
    assert_eq!(learned(&kb).len(), 1);

    // A person accepts it: reviewed, active, used again.
    let accepted = json(&kb, &["review", &id.to_string(), "--accept"]);
    assert_eq!(accepted["provenance"], "reviewed");
    assert_eq!(accepted["active"], true);
    let (code, out) = reconcile(&kb, "trail-2", None);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains(LEARNED_EDIT), "{out}");

    let stats = json(&kb, &["stats"]);
    assert_eq!(stats["rules_by_provenance"]["reviewed"], 1);
    // Runs 1, 2 and 7 passed; 3 and 4 failed; 5 and 6 (the call unexplained on a managed
    // subscription, left for a person) are flagged.
    assert_eq!(stats["reconciliations_by_outcome"]["passed"], 3);
    assert_eq!(stats["reconciliations_by_outcome"]["flagged"], 2);
    assert_eq!(stats["reconciliations_by_outcome"]["failed"], 2);
}

#[test]
fn a_rejected_rule_is_not_used_or_learned_again() {
    let dir = tempfile::tempdir().expect("temp dir");
    let kb = dir.path().join("kb.sqlite");
    reconcile(&kb, "trail-1", Some("observed-raw-delivery-on.tfstate"));
    let id = learned(&kb)[0]["id"].as_i64().expect("id");
    let rejected = json(&kb, &["review", &id.to_string(), "--reject"]);
    assert_eq!(rejected["active"], false);
    let (code, out) = reconcile(&kb, "trail-2", None);
    assert_eq!(code, 3, "{out}");
    let (code, out) = reconcile(&kb, "trail-1", Some("observed-raw-delivery-on.tfstate"));
    assert_eq!(code, 3, "{out}");
    assert!(!out.contains("explained a call without a rule"), "{out}");
}

#[test]
fn export_then_import_into_a_fresh_store_round_trips() {
    let dir = tempfile::tempdir().expect("temp dir");
    let first = dir.path().join("first.sqlite");
    reconcile(&first, "trail-1", Some("observed-raw-delivery-on.tfstate"));
    reconcile(&first, "trail-2", None);
    let exported = dir.path().join("export.json");
    let output = retrace(
        &first,
        &["kb", "export", "--out", exported.to_str().expect("utf-8")],
    );
    assert_eq!(output.status.code(), Some(0));

    let second = dir.path().join("second.sqlite");
    let imported = json(&second, &["import", exported.to_str().expect("utf-8")]);
    assert_eq!(imported["rules_added"], 1);
    let strip = |rules: Vec<Value>| -> Vec<Value> {
        rules
            .into_iter()
            .map(|mut r| {
                // Row ids are per store; everything else travels.
                r.as_object_mut().map(|o| o.remove("id"));
                r
            })
            .collect()
    };
    assert_eq!(strip(learned(&first)), strip(learned(&second)));
    assert_eq!(learned(&second)[0]["successes"], 1);

    // Importing again adds nothing; the imported rule is used by the second store's runs.
    let again = json(&second, &["import", exported.to_str().expect("utf-8")]);
    assert_eq!(
        (&again["rules_added"], &again["rules_skipped"]),
        (&0.into(), &1.into())
    );
    let (code, out) = reconcile(&second, "trail-2", None);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains(LEARNED_EDIT), "{out}");
}

#[test]
fn bad_imports_and_unknown_ids_are_errors_naming_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let kb = dir.path().join("kb.sqlite");
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"format": "retrace-knowledge", "version": 1, "rules": [{}]}"#,
    )
    .expect("write");
    let output = retrace(&kb, &["kb", "import", bad.to_str().expect("utf-8")]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("bad.json"), "{stderr}");
    assert!(stderr.contains("rules[0]"), "{stderr}");
    let missing = dir.path().join("missing.json");
    let output = retrace(&kb, &["kb", "import", missing.to_str().expect("utf-8")]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("missing.json"));
    // A usage error is an error (1), not clap's 2, which `reconcile` uses for "patch produced".
    let output = retrace(&kb, &["kb", "review", "1"]);
    assert_eq!(output.status.code(), Some(1));
    let output = retrace(&kb, &["kb", "show", "99999"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("kb.sqlite") && stderr.contains("99999"),
        "{stderr}"
    );
}

/// Total rule uses (successes + failures) and reconciliations in a store.
fn counts(kb: &Path) -> (i64, i64) {
    let conn = rusqlite::Connection::open(kb).expect("open");
    let uses = conn
        .query_row(
            "SELECT COALESCE(SUM(successes + failures), 0) FROM rules",
            [],
            |r| r.get(0),
        )
        .expect("uses");
    let runs = conn
        .query_row("SELECT COUNT(*) FROM reconciliations", [], |r| r.get(0))
        .expect("runs");
    (uses, runs)
}

#[test]
fn runs_killed_at_any_point_leave_the_store_consistent() {
    let dir = tempfile::tempdir().expect("temp dir");
    // One clean demo run: how many rule outcomes a run records, and how long it takes.
    let reference = dir.path().join("reference.sqlite");
    let started = Instant::now();
    let output = retrace(&reference, &["demo", "--no-terraform"]);
    let took = started.elapsed();
    assert_eq!(output.status.code(), Some(3));
    let (per_run, runs) = counts(&reference);
    assert_eq!(runs, 1);
    assert!(per_run > 0);

    let kb = dir.path().join("kb.sqlite");
    let attempts = 24u32;
    let (mut killed, mut finished) = (0, 0);
    for i in 0..attempts {
        let mut child = Command::new(env!("CARGO_BIN_EXE_retrace"))
            .env_remove("RETRACE_KB")
            .arg("--kb")
            .arg(&kb)
            .args(["demo", "--no-terraform"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        // Delays spread over the whole run and a little past it.
        std::thread::sleep(took.mul_f64(1.2 * f64::from(i) / f64::from(attempts)));
        match child.try_wait().expect("wait") {
            Some(_) => finished += 1,
            None => {
                child.kill().expect("SIGKILL");
                child.wait().expect("reap");
                killed += 1;
            }
        }
    }
    assert!(killed > 0, "no run was killed");
    eprintln!("{killed} runs killed, {finished} finished");

    let conn = rusqlite::Connection::open(&kb).expect("open");
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity check");
    assert_eq!(check, "ok");
    // Every recorded run has all of its rule outcomes, and no outcome lacks its run.
    let (uses, runs) = counts(&kb);
    assert!(
        runs >= finished,
        "{runs} runs recorded, {finished} finished"
    );
    assert_eq!(uses, per_run * runs, "{uses} uses for {runs} runs");
    let mut stmt = conn
        .prepare("SELECT intents, patch FROM reconciliations")
        .expect("prepare");
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .expect("query");
    for row in rows {
        let (intents, patch) = row.expect("row");
        let intents: Value = serde_json::from_str(&intents).expect("intents are whole JSON");
        assert!(!intents.as_array().expect("array").is_empty());
        assert!(patch.starts_with("diff --git"), "{patch}");
    }
    // And the store still works.
    let output = retrace(&kb, &["demo", "--no-terraform"]);
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(counts(&kb), (per_run * (runs + 1), runs + 1));
}

#[test]
fn json_reports_what_was_recorded_and_no_record_leaves_the_store_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let kb = dir.path().join("kb.sqlite");
    let project = fixture("project");
    let state = fixture("terraform.tfstate");
    let logs = fixture("trail-1");
    let observed = fixture("observed-raw-delivery-on.tfstate");
    let mut args = vec![
        "reconcile",
        "--project",
        project.to_str().expect("utf-8"),
        "--state",
        state.to_str().expect("utf-8"),
        "--logs",
        logs.to_str().expect("utf-8"),
        "--observed",
        observed.to_str().expect("utf-8"),
        "--no-terraform",
        "--format",
        "json",
    ];
    let output = retrace(&kb, &args);
    assert_eq!(output.status.code(), Some(2));
    let doc: Value = serde_json::from_slice(&output.stdout).expect("json");
    let recorded = &doc["knowledge"]["recorded"];
    assert_eq!(recorded["run"], 1);
    assert_eq!(recorded["learned"][0][1], "sns:SetSubscriptionAttributes");
    assert_eq!(recorded["store"], kb.to_str().expect("utf-8"));

    // With --no-record nothing is read or written: shipped rules only, no store created.
    let untouched = dir.path().join("untouched.sqlite");
    args.push("--no-record");
    let output = retrace(&untouched, &args);
    assert_eq!(output.status.code(), Some(3));
    let doc: Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(doc["knowledge"]["recorded"], Value::Null);
    let finding = &doc["findings"][0];
    assert_eq!(finding["api"], "SetSubscriptionAttributes");
    assert_eq!(finding["kind"], "unexplained");
    assert_eq!(finding["reach"], "managed");
    assert_eq!(
        finding["resources"][0]["address"],
        "aws_sns_topic_subscription.fulfilment"
    );
    assert!(!untouched.exists());
}
