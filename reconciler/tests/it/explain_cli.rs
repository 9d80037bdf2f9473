//! End-to-end: `retrace explain EVENT_ID` on the intents fixtures tells each call's verdict and
//! why, and where an out-of-band write ended: the intent and its decision, or the finding.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/intents")
}

/// Runs `retrace explain` for `event_id` on the trail of `case` against the fixture project.
fn explain(case: &str, event_id: &str, format: &str) -> Output {
    let trail = fixtures().join(case).join("trail.json");
    run(&["explain", event_id], &trail, format)
}

/// Runs retrace's `command` on `trail` against the intents fixture project.
fn run(command: &[&str], trail: &Path, format: &str) -> Output {
    let base = fixtures();
    let dir = tempfile::tempdir().expect("temp dir");
    Command::new(env!("CARGO_BIN_EXE_retrace"))
        .current_dir(dir.path())
        .args(command)
        .arg("--project")
        .arg(base.join("project"))
        .arg("--state")
        .arg(base.join("project.tfstate"))
        .arg("--logs")
        .arg(trail)
        .args([
            "--since",
            "2026-11-21T00:00:00Z",
            "--until",
            "2026-11-22T00:00:00Z",
            "--no-terraform",
            "--format",
            format,
        ])
        .output()
        .expect("runs")
}

fn text(output: &Output) -> String {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `retrace explain`'s text for bob's resize (event `id`): its verdict, intent and decision.
fn tells_of_the_absorbed_resize(report: &str, id: &str) {
    assert!(
        report.starts_with(&format!("ModifyInstanceAttribute {id} at 2026-11-21")),
        "{report}"
    );
    assert!(report.contains("Verdict: out-of-band: "), "{report}");
    assert!(
        report.contains("Ended in intent I1: bob (aws-cli/2"),
        "{report}"
    );
    assert!(
        report.contains("instance_type = \"t3.medium\" on aws_instance.app"),
        "{report}"
    );
    assert!(report.contains("absorb"), "{report}");
}

#[test]
fn an_absorbed_write_names_its_intent_and_decision() {
    // bob's CLI ModifyInstanceAttribute: instance type t3.medium, absorbed into the variable
    // default (fixtures/intents/README.md, update-attribute).
    let id = "f7598075-6b58-8fc3-208d-987e8efbbf20";
    let report = text(&explain("update-attribute", id, "text"));
    tells_of_the_absorbed_resize(&report, id);
    let doc: serde_json::Value =
        serde_json::from_slice(&explain("update-attribute", id, "json").stdout).expect("json");
    assert_eq!(doc["verdict"], "out-of-band");
    assert_eq!(doc["fate"]["in"], "intent");
    assert_eq!(doc["fate"]["id"], "I1");
    assert_eq!(doc["event_id"], id);
}

#[test]
fn a_call_that_is_not_out_of_band_says_why() {
    // Auto Scaling's CreateTags through its service principal, in the dropped case.
    let report = text(&explain(
        "dropped",
        "06d51d8a-8127-a093-6ba3-6254824da0b9",
        "text",
    ));
    assert!(
        report.contains("Verdict: service: made by the AWS service autoscaling.amazonaws.com"),
        "{report}"
    );
    assert!(report.contains("Not reconciled"), "{report}");
    let doc: serde_json::Value = serde_json::from_slice(
        &explain("dropped", "51bf9c04-8e8c-fc7c-2173-aee155a21b08", "json").stdout,
    )
    .expect("json");
    assert_eq!(doc["verdict"], "data-event");
    assert!(doc.get("fate").is_none());
}

#[test]
fn an_unknown_event_id_is_an_error() {
    let output = explain("update-attribute", "no-such-event", "text");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no record with event id no-such-event"),
        "{stderr}"
    );
}

/// The fields a CloudTrail record has had since event version 1.0 (the record contents
/// reference: `eventID`, `requestID`, `readOnly` and `resources` came with 1.01, `eventType` and
/// `recipientAccountId` with 1.02, the rest later).
const VERSION_1_0_FIELDS: [&str; 12] = [
    "eventTime",
    "userIdentity",
    "eventSource",
    "eventName",
    "awsRegion",
    "sourceIPAddress",
    "userAgent",
    "errorCode",
    "errorMessage",
    "requestParameters",
    "responseElements",
    "additionalEventData",
];

/// The trail of `case` with every record written as CloudTrail wrote them at version 1.0.
fn as_version_1_0(case: &str, dir: &Path) -> PathBuf {
    let text = std::fs::read(fixtures().join(case).join("trail.json")).expect("trail");
    let mut doc: serde_json::Value = serde_json::from_slice(&text).expect("json");
    for record in doc["Records"].as_array_mut().expect("records") {
        let fields = record.as_object_mut().expect("a record is an object");
        fields.retain(|key, _| VERSION_1_0_FIELDS.contains(&key.as_str()));
        fields.insert("eventVersion".into(), "1.0".into());
    }
    let path = dir.join("trail-1.0.json");
    std::fs::write(&path, doc.to_string()).expect("write");
    path
}

#[test]
fn a_version_1_0_write_without_an_event_id_is_reconciled_and_explained_by_its_derived_id() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trail = as_version_1_0("update-attribute", dir.path());
    let output = run(&["reconcile"], &trail, "json");
    assert_eq!(
        output.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    let evidence = &doc["intents"][0]["intent"]["evidence"][0];
    assert_eq!(evidence["api"], "ModifyInstanceAttribute", "{evidence}");
    let id = evidence["event_id"].as_str().expect("an event id");
    assert!(id.starts_with("record-"), "{id}");
    let explained = run(&["explain", id], &trail, "text");
    tells_of_the_absorbed_resize(&text(&explained), id);
}
