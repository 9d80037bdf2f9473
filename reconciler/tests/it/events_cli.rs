//! End-to-end tests of `retrace events`: the bundled example, every source layout, each
//! client, identity and verdict, and bad input. Expected values were worked out by hand from
//! the fixture records (see the comments), not copied from the tool's output.
#![allow(clippy::unwrap_used, missing_docs)]

use crate::common;

use std::io::Write;
use std::path::Path;

use common::{count, ids, json, retrace};
use serde_json::Value;

const EXAMPLE: &str = "fixtures/example/retrace.toml";
const KINDS: &str = "fixtures/cloudtrail/kinds.ndjson";

#[test]
fn bundled_example_counts_by_verdict() {
    let out = retrace(&["--config", EXAMPLE, "events", "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json(&out);
    // 18 records in four eu-west-1 files and one eu-central-1 file; the 443 rule is
    // delivered twice; the digest file is not read.
    assert_eq!(doc["summary"]["total"], 17);
    assert_eq!(doc["summary"]["counts"]["duplicates"], 1);
    // 443 rule, instance type, stack, bucket tags, Lambda memory, role policy, volume tags
    assert_eq!(count(&doc, "out-of-band"), 7);
    // the CI role's rule, tags and versioning
    assert_eq!(count(&doc, "iac-principal"), 3);
    // Terraform's Describe, the console sign-in, the console's Describe
    assert_eq!(count(&doc, "read-only"), 3);
    assert_eq!(count(&doc, "failed"), 1);
    assert_eq!(count(&doc, "service"), 1);
    assert_eq!(count(&doc, "other-iac"), 1);
    assert_eq!(count(&doc, "data-event"), 1);
    assert_eq!(count(&doc, "terraform"), 0);
    assert_eq!(doc["calls"].as_array().unwrap().len(), 17);
}

#[test]
fn calls_come_out_in_time_order() {
    let doc = json(&retrace(&[
        "--config", EXAMPLE, "events", "--format", "json",
    ]));
    let times: Vec<&str> = doc["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["time"].as_str().unwrap())
        .collect();
    let mut sorted = times.clone();
    sorted.sort();
    assert_eq!(times, sorted);
    assert_eq!(times.first(), Some(&"2026-11-20T09:03:10Z"));
    assert_eq!(times.last(), Some(&"2026-11-20T15:02:00Z"));
}

#[test]
fn only_out_of_band_with_reasons() {
    let out = retrace(&[
        "--config",
        EXAMPLE,
        "events",
        "--only",
        "out-of-band",
        "--format",
        "json",
    ]);
    let doc = json(&out);
    let calls = doc["calls"].as_array().unwrap();
    let apis: Vec<&str> = calls.iter().map(|c| c["api"].as_str().unwrap()).collect();
    assert_eq!(
        apis,
        [
            "AuthorizeSecurityGroupIngress",
            "ModifyInstanceAttribute",
            "CreateStack",
            "PutBucketTagging",
            "UpdateFunctionConfiguration",
            "AttachRolePolicy",
            "CreateTags"
        ]
    );
    assert_eq!(
        calls[0]["actor"],
        "alice@example.com via AdministratorAccess (SSO)"
    );
    assert_eq!(calls[0]["client"]["kind"], "console");
    assert_eq!(calls[0]["resources"][0], "sg-0a1b2c3d4e5f60718");
    assert_eq!(
        calls[4]["event_name"],
        "UpdateFunctionConfiguration20150331v2"
    );
    assert!(
        calls[0]["reason"]
            .as_str()
            .unwrap()
            .contains("not by the Terraform pipeline")
    );
    // every verdict is still counted
    assert_eq!(count(&doc, "iac-principal"), 3);
}

#[test]
fn filters_by_window_region_and_account() {
    let late = json(&retrace(&[
        "--config",
        EXAMPLE,
        "events",
        "--only",
        "out-of-band",
        "--format",
        "json",
        "--since",
        "2026-11-20T12:00:00Z",
    ]));
    // stack 13:30, tags 14:15, Lambda 14:16, policy 14:21, volume tags 15:02
    assert_eq!(ids(&late).len(), 5);
    let ireland = json(&retrace(&[
        "--config",
        EXAMPLE,
        "events",
        "--only",
        "out-of-band",
        "--format",
        "json",
        "--region",
        "eu-west-1",
    ]));
    // without the eu-central-1 volume tags and the us-east-1 (IAM) policy attachment
    assert_eq!(ids(&ireland).len(), 5);
    // No log of another account: an error (a mistyped id must not read as an all-clear),
    // unless an empty result is allowed.
    let args = [
        "--config",
        EXAMPLE,
        "events",
        "--format",
        "json",
        "--account",
        "999999999999",
    ];
    let refused = retrace(&args);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("no CloudTrail log file"));
    let allowed = [args.as_slice(), &["--allow-empty"]].concat();
    let other_account = json(&retrace(&allowed));
    assert_eq!(other_account["summary"]["total"], 0);
}

#[test]
fn without_the_ci_identity_terraform_is_known_by_its_user_agent() {
    let doc = json(&retrace(&[
        "events",
        "--logs",
        "fixtures/example/AWSLogs",
        "--format",
        "json",
    ]));
    assert_eq!(count(&doc, "terraform"), 3);
    assert_eq!(count(&doc, "iac-principal"), 0);
}

/// Expected client kind, actor and verdict of each record in `kinds.ndjson`, by event id.
const KIND_TABLE: [(&str, &str, &str, &str); 39] = [
    ("client-console", "console", "dana", "out-of-band"),
    ("client-console-s3", "console", "dana", "out-of-band"),
    ("client-console-internal", "console", "dana", "out-of-band"),
    ("client-cli1", "aws-cli", "dana", "out-of-band"),
    ("client-cli2-old", "aws-cli", "dana", "out-of-band"),
    ("client-cli2-new", "aws-cli", "dana", "out-of-band"),
    ("client-boto3", "boto3", "dana", "out-of-band"),
    ("client-botocore", "boto3", "dana", "out-of-band"),
    ("client-go2", "sdk", "dana", "out-of-band"),
    ("client-java2", "sdk", "dana", "out-of-band"),
    ("client-js3", "sdk", "dana", "out-of-band"),
    ("client-terraform", "terraform", "dana", "terraform"),
    ("client-terraform-s3", "terraform", "dana", "terraform"),
    ("client-opentofu", "opentofu", "dana", "terraform"),
    ("client-pulumi", "pulumi", "dana", "other-iac"),
    ("client-ack", "ack-controller", "dana", "other-iac"),
    (
        "client-cloudformation",
        "cloudformation",
        "AWSCloudFormation via cfn-exec",
        "other-iac",
    ),
    ("client-cdk", "cdk", "dana", "other-iac"),
    (
        "client-ssm",
        "ssm-automation",
        "4c5bd8f2-9e41-4a6b-b1f0-2a3c4d5e6f70 via AutomationRole",
        "out-of-band",
    ),
    (
        "client-service",
        "service-internal",
        "AutoScaling via AWSServiceRoleForAutoScaling",
        "service",
    ),
    ("client-other", "other", "dana", "out-of-band"),
    ("client-stratus", "stratus-red-team", "dana", "out-of-band"),
    ("client-none", "unknown", "dana", "out-of-band"),
    ("id-root", "aws-cli", "root", "out-of-band"),
    (
        "id-federated",
        "boto3",
        "erin via token-broker",
        "out-of-band",
    ),
    (
        "id-service",
        "service-internal",
        "sns.amazonaws.com",
        "service",
    ),
    (
        "id-identity-center",
        "aws-cli",
        "94482488-3041-7026-18f3-be45837cd0e4 (Identity Center)",
        "out-of-band",
    ),
    (
        "id-sso-role",
        "console",
        "frank@example.com via ReadWrite (SSO)",
        "out-of-band",
    ),
    ("id-web-identity", "sdk", "1234567890", "out-of-band"),
    (
        "id-aws-account",
        "sdk",
        "account 777788889999",
        "out-of-band",
    ),
    ("id-unknown", "sdk", "FUTURE123", "out-of-band"),
    ("v-readonly-derived", "aws-cli", "dana", "read-only"),
    ("v-failed", "aws-cli", "dana", "failed"),
    ("v-data", "aws-cli", "dana", "data-event"),
    (
        "v-service-event",
        "service-internal",
        "AWS Internal",
        "service",
    ),
    ("v-lambda-versioned", "boto3", "dana", "out-of-band"),
    ("v-omitted", "aws-cli", "dana", "out-of-band"),
    ("v-null-params", "aws-cli", "dana", "out-of-band"),
    (
        "v-login-failed",
        "other",
        "HIDDEN_DUE_TO_SECURITY_REASONS",
        "read-only",
    ),
];

#[test]
fn each_client_identity_and_verdict() {
    let out = retrace(&["events", "--logs", KINDS, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let doc = json(&out);
    let calls = doc["calls"].as_array().unwrap();
    assert_eq!(calls.len(), KIND_TABLE.len());
    for (id, client, actor, verdict) in KIND_TABLE {
        let call = calls
            .iter()
            .find(|c| c["event_id"] == id)
            .unwrap_or_else(|| panic!("{id} missing"));
        assert_eq!(call["client"]["kind"], client, "{id}");
        assert_eq!(call["actor"], actor, "{id}");
        assert_eq!(call["verdict"], verdict, "{id}");
    }
    let by_id = |id: &str| calls.iter().find(|c| c["event_id"] == id).unwrap().clone();
    assert_eq!(
        by_id("client-terraform")["client"]["provider_version"],
        "5.76.0"
    );
    assert_eq!(
        by_id("client-cli2-new")["client"]["command"],
        "s3api.put-bucket-tagging"
    );
    assert_eq!(
        by_id("client-cli2-old")["client"]["command"],
        "s3api.put-bucket-tagging"
    );
    assert_eq!(
        by_id("v-lambda-versioned")["api"],
        "UpdateFunctionConfiguration"
    );
    assert_eq!(
        by_id("client-stratus")["client"]["execution"],
        "6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"
    );
    assert_eq!(by_id("id-unknown")["identity"]["kind"], "FutureKind");
    assert_eq!(
        by_id("id-identity-center")["identity"]["kind"],
        "IdentityCenterUser"
    );
}

#[test]
fn pipeline_identity_and_run_token_from_config() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("retrace.toml");
    std::fs::write(
        &config,
        "[attribution]\niac_session_names = [\"AWSCloudFormation\"]\nrun_token = \"build-77\"\n",
    )
    .unwrap();
    let kinds = common::repo().join(KINDS);
    let doc = json(&retrace(&[
        "--config",
        config.to_str().unwrap(),
        "events",
        "--logs",
        kinds.to_str().unwrap(),
        "--format",
        "json",
    ]));
    let verdict_of = |id: &str| {
        doc["calls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["event_id"] == id)
            .unwrap()["verdict"]
            .clone()
    };
    assert_eq!(verdict_of("client-cloudformation"), "iac-principal");
    // Terraform calls without the run token were applied from outside the pipeline
    assert_eq!(verdict_of("client-terraform"), "out-of-band");
    assert_eq!(verdict_of("client-opentofu"), "out-of-band");
    assert_eq!(count(&doc, "terraform"), 0);
}

/// Every layout of the same records gives the same calls.
#[test]
fn every_source_layout_gives_the_same_calls() {
    let records: Vec<Value> = std::fs::read_to_string(common::repo().join(KINDS))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let envelope = serde_json::json!({ "Records": records }).to_string();
    let pretty = serde_json::to_string_pretty(&serde_json::json!({ "Records": records })).unwrap();
    let array = serde_json::to_string_pretty(&records).unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let layouts = [
        write("envelope.json", envelope.as_bytes()),
        write("pretty.json", pretty.as_bytes()),
        write("array.json", array.as_bytes()),
        write(
            "export.ndjson",
            std::fs::read(common::repo().join(KINDS))
                .unwrap()
                .as_slice(),
        ),
        write("envelope.json.gz", &gzip(envelope.as_bytes())),
        delivery_tree(dir.path(), &records),
    ];
    let expected = listing(&common::repo().join(KINDS));
    assert_eq!(expected.len(), KIND_TABLE.len());
    for layout in &layouts {
        assert_eq!(listing(layout), expected, "{}", layout.display());
    }
}

/// Splits records into a delivery layout by region and day, gzipped, with a digest file.
fn delivery_tree(root: &Path, records: &[Value]) -> std::path::PathBuf {
    let top = root.join("bucket");
    for (i, chunk) in records.chunks(10).enumerate() {
        let day = format!("2025/03/0{}", 1 + i % 9);
        let dir = top.join(format!(
            "AWSLogs/o-exampleorg/444455556666/CloudTrail/us-west-2/{day}"
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let body = serde_json::json!({ "Records": chunk }).to_string();
        let name = format!(
            "444455556666_CloudTrail_us-west-2_2025030{}T0800Z_chunk{i}.json.gz",
            1 + i % 9
        );
        std::fs::write(dir.join(name), gzip(body.as_bytes())).unwrap();
    }
    let digest =
        top.join("AWSLogs/o-exampleorg/444455556666/CloudTrail-Digest/us-west-2/2025/03/01");
    std::fs::create_dir_all(&digest).unwrap();
    std::fs::write(
        digest.join("digest.json.gz"),
        gzip(b"{\"awsAccountId\":\"444455556666\"}"),
    )
    .unwrap();
    top
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// (event id, verdict) of every call read from a path, in output order.
fn listing(path: &Path) -> Vec<(String, String)> {
    let out = retrace(&[
        "events",
        "--logs",
        path.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json(&out);
    assert_eq!(doc["summary"]["bad_record_count"], 0, "{}", path.display());
    doc["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["event_id"].as_str().unwrap().to_owned(),
                c["verdict"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn ndjson_output_has_one_call_per_line_and_the_summary_on_stderr() {
    let out = retrace(&[
        "--config",
        EXAMPLE,
        "events",
        "--only",
        "out-of-band",
        "--format",
        "ndjson",
        "--raw",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 7);
    assert_eq!(
        lines[0]["record"]["eventName"],
        "AuthorizeSecurityGroupIngress"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("17 distinct calls"));
}

#[test]
fn text_output_is_a_table_and_a_summary() {
    let out = retrace(&["--config", EXAMPLE, "events", "--only", "out-of-band"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    for column in ["TIME", "ACTOR", "CLIENT", "API", "VERDICT", "RESOURCES"] {
        assert!(header.contains(column), "{header}");
    }
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("2026-11-20 10:06:40  alice@example.com")
    );
    assert!(text.contains("17 distinct calls"));
    assert!(text.contains("(duplicates)"));
}

#[test]
fn a_malformed_record_is_reported_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let good: Vec<String> = std::fs::read_to_string(common::repo().join(KINDS))
        .unwrap()
        .lines()
        .take(3)
        .map(str::to_owned)
        .collect();
    let body = format!(
        "{{\"Records\":[{},{{\"eventID\":\"no-time\",\"eventName\":\"X\",\"eventSource\":\"s3.amazonaws.com\"}},{{\"eventTime\":\"x\" \"oops\"}},{}]}}",
        good[0], good[1]
    );
    let path = dir.path().join("mixed.json");
    std::fs::write(&path, &body).unwrap();
    let out = retrace(&[
        "events",
        "--logs",
        path.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let doc = json(&out);
    assert_eq!(doc["summary"]["total"], 2);
    assert_eq!(doc["summary"]["bad_record_count"], 2);
    let bad = &doc["summary"]["bad_records"];
    assert_eq!(bad[0]["origin"]["index"], 1);
    assert_eq!(bad[0]["origin"]["source"], path.to_str().unwrap());
    let offset = bad[0]["origin"]["offset"].as_u64().unwrap() as usize;
    assert!(body[offset..].starts_with("{\"eventID\":\"no-time\""));
    assert!(bad[0]["reason"].as_str().unwrap().contains("eventTime"));
    assert_eq!(bad[1]["origin"]["index"], 2);
    assert!(
        bad[1]["reason"]
            .as_str()
            .unwrap()
            .contains("not a valid CloudTrail record")
    );
    // the text summary names them too
    let text = retrace(&["events", "--logs", path.to_str().unwrap()]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("2 malformed records skipped"), "{text}");
    assert!(text.contains("mixed.json record #1"), "{text}");
}

#[test]
fn a_truncated_gzip_is_an_error_naming_the_file_after_its_good_records() {
    let records = std::fs::read(common::repo().join(KINDS)).unwrap();
    let whole = gzip(&records);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.json.gz");
    std::fs::write(&path, &whole[..whole.len() * 2 / 3]).unwrap();
    let out = retrace(&[
        "events",
        "--logs",
        path.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let doc = json(&out);
    let errors = doc["summary"]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].as_str().unwrap().contains("cut.json.gz"),
        "{errors:?}"
    );
    let read = doc["summary"]["total"].as_u64().unwrap();
    assert!(
        read > 0 && read < 37,
        "the records before the cut are delivered: {read}"
    );
}

#[test]
fn unreadable_inputs_are_errors_naming_them() {
    let out = retrace(&["events", "--logs", "no/such/trail.json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("no/such/trail.json"));
    let none = retrace(&["events"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&none.stderr).contains("no CloudTrail source"));
}

#[test]
fn garbage_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut bytes = Vec::new();
    for _ in 0..200_000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        bytes.push((seed >> 24) as u8);
    }
    let path = dir.path().join("noise.json");
    std::fs::write(&path, &bytes).unwrap();
    // Noise holds no record: an error, said in words, unless an empty result is allowed.
    let refused = retrace(&["events", "--logs", path.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("no CloudTrail record inside"));
    let out = retrace(&[
        "events",
        "--logs",
        path.to_str().unwrap(),
        "--format",
        "json",
        "--allow-empty",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json(&out);
    assert_eq!(doc["summary"]["total"], 0);
    assert!(doc["summary"]["bad_record_count"].as_u64().unwrap() > 0);
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, b"").unwrap();
    let out = retrace(&[
        "events",
        "--logs",
        empty.to_str().unwrap(),
        "--format",
        "json",
        "--allow-empty",
    ]);
    assert_eq!(json(&out)["summary"]["total"], 0);
}

#[test]
fn a_bad_config_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("retrace.toml");
    std::fs::write(&config, "[filter]\nsince = \"soon\"\n").unwrap();
    let out = retrace(&[
        "--config",
        config.to_str().unwrap(),
        "events",
        "--logs",
        KINDS,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`soon` is not a time"));
    std::fs::write(&config, "[sources]\nfile = []\n").unwrap();
    let out = retrace(&["--config", config.to_str().unwrap(), "events"]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        err.contains("retrace.toml") && err.contains("line 2"),
        "{err}"
    );
}
