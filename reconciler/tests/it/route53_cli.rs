//! Route 53 records as AWS and the Terraform AWS provider (5.100) really keep them, end to
//! end through `retrace reconcile`. Route 53 treats a name with and without its trailing dot
//! as the same name and stores letters in lower case (ChangeResourceRecordSets'
//! `ResourceRecordSet.Name`, "DNS domain name format" in the Route 53 guide); the provider
//! keeps a record's `name` lower-cased without the dot, but builds its id
//! (`ZONEID_NAME_TYPE`) from the name as the code gave it, so a record named after an ACM
//! validation option (`resource_record_name` ends with a dot) has the dot in its id. A routing
//! policy's record adds its set identifier to the id; a TXT value Route 53 keeps in double
//! quotes is in the provider's `records` without the outer pair; an edit may come as a DELETE
//! and a CREATE in one batch; and a Route 53 write no rule reads is left to a person.
#![allow(clippy::unwrap_used)]

use crate::common;

use serde_json::{Value, json};

const PROVIDER: &str = "provider[\"registry.terraform.io/hashicorp/aws\"]";
const ZONE: &str = "Z0825171EXAMPLE";

/// `retrace reconcile` (no `--write`) over the files, state and records: the exit code and
/// the JSON report.
fn reconcile(files: &[(&str, &str)], state: &Value, records: Vec<Value>) -> (i32, Value) {
    let (code, doc, _dir) = common::reconcile_records(files, state, records);
    (code, doc)
}

/// A state of the zone and the given records (resource name, attributes).
fn state(records: &[(&str, Value)]) -> Value {
    let zone = json!({"mode": "managed", "type": "aws_route53_zone", "name": "main",
        "provider": PROVIDER, "instances": [{"schema_version": 0, "attributes": {
            "id": ZONE, "zone_id": ZONE, "name": "example.com", "comment": "Managed by Terraform",
            "arn": format!("arn:aws:route53:::hostedzone/{ZONE}"), "force_destroy": false,
            "name_servers": ["ns-1.awsdns-01.org"], "tags": {}, "tags_all": {},
            "delegation_set_id": "", "vpc": []}}]});
    let mut resources = vec![zone];
    resources.extend(records.iter().map(|(name, attributes)| {
        json!({"mode": "managed", "type": "aws_route53_record", "name": name,
            "provider": PROVIDER, "instances": [{"schema_version": 2, "attributes": attributes}]})
    }));
    json!({"version": 4, "terraform_version": "1.11.4", "serial": 7, "lineage": "route53",
        "outputs": {}, "resources": resources})
}

/// A simple record's attributes as the provider keeps them: `name` lower-cased without the
/// dot, `id` built from `code_name` (the name as the code gave it, lower-cased).
fn record(code_name: &str, record_type: &str, ttl: u64, records: &[&str]) -> Value {
    let name = code_name.trim_end_matches('.').to_lowercase();
    json!({"id": format!("{ZONE}_{}_{record_type}", code_name.to_lowercase()),
        "zone_id": ZONE, "name": name, "fqdn": name, "type": record_type, "ttl": ttl,
        "records": records, "set_identifier": "", "health_check_id": "", "alias": [],
        "allow_overwrite": null, "multivalue_answer_routing_policy": null,
        "failover_routing_policy": [], "geolocation_routing_policy": [],
        "geoproximity_routing_policy": [], "latency_routing_policy": [],
        "weighted_routing_policy": [], "cidr_routing_policy": []})
}

/// A CloudTrail record of bob's AWS CLI ChangeResourceRecordSets with one change, as
/// CloudTrail logs Route 53 (lowerCamelCase, `tTL`).
fn change(minute: u32, action: &str, set: Value) -> Value {
    json!({
        "eventVersion": "1.08",
        "userIdentity": {"type": "IAMUser", "principalId": "AIDAEXAMPLEBOB",
            "arn": "arn:aws:iam::123456789012:user/bob", "accountId": "123456789012",
            "accessKeyId": "AKIAEXAMPLEBOB", "userName": "bob"},
        "eventTime": format!("2026-11-20T10:{minute:02}:00Z"),
        "eventSource": "route53.amazonaws.com", "eventName": "ChangeResourceRecordSets",
        "awsRegion": "us-east-1", "sourceIPAddress": "203.0.113.9",
        "userAgent": "aws-cli/2.15.30 md/command#route53.change-resource-record-sets",
        "requestParameters": {"hostedZoneId": ZONE,
            "changeBatch": {"changes": [{"action": action, "resourceRecordSet": set}]}},
        "responseElements": {"changeInfo": {"id": "/change/C0EXAMPLE", "status": "PENDING",
            "submittedAt": "Nov 20, 2026 10:00:00 AM"}},
        "additionalEventData": {"Note": "Do not use to reconstruct hosted zone"},
        "requestID": format!("req-{minute}"), "eventID": format!("evt-{minute}"),
        "readOnly": false, "eventType": "AwsApiCall", "apiVersion": "2013-04-01",
        "managementEvent": true, "recipientAccountId": "123456789012",
        "eventCategory": "Management"
    })
}

const VALIDATION_TF: &str = r#"resource "aws_route53_zone" "main" {
  name = "example.com"
}

resource "aws_route53_record" "validation" {
  zone_id = aws_route53_zone.main.zone_id
  name    = "_a1b2c3d4.www.example.com."
  type    = "CNAME"
  ttl     = 60
  records = ["_e5f6a7b8.xlfgrmvvlj.acm-validations.aws."]
}
"#;

fn validation_state() -> Value {
    let record = record(
        "_a1b2c3d4.www.example.com.",
        "CNAME",
        60,
        &["_e5f6a7b8.xlfgrmvvlj.acm-validations.aws."],
    );
    state(&[("validation", record)])
}

fn validation_delete(name: &str) -> Value {
    change(
        5,
        "DELETE",
        json!({"name": name, "type": "CNAME", "tTL": 60,
            "resourceRecords": [{"value": "_e5f6a7b8.xlfgrmvvlj.acm-validations.aws."}]}),
    )
}

/// Each delta of the report's intents: its address (or, unmanaged, its identity) and what
/// happened to it.
fn deltas(doc: &Value) -> Vec<(String, String)> {
    doc["intents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|i| i["intent"]["deltas"].as_array().unwrap())
        .map(|d| {
            let name = d["address"]
                .as_str()
                .or(d["resource"]["identity"].as_str())
                .unwrap();
            (name.to_owned(), d["lifecycle"].as_str().unwrap().to_owned())
        })
        .collect()
}

fn deleted(name: &str) -> Vec<(String, String)> {
    vec![(name.to_owned(), "deleted".to_owned())]
}

#[test]
fn a_record_deleted_by_a_name_without_the_dot_its_id_keeps_is_the_managed_record() {
    // The state's id is Z0825171EXAMPLE__a1b2c3d4.www.example.com._CNAME; the call names
    // the record without the dot, as Route 53 allows.
    let delete = validation_delete("_a1b2c3d4.www.example.com");
    let (code, doc) = reconcile(
        &[("main.tf", VALIDATION_TF)],
        &validation_state(),
        vec![delete],
    );
    assert_eq!(
        deltas(&doc),
        deleted("aws_route53_record.validation"),
        "{doc:#}"
    );
    // The deletion is absorbed (the policy's default): the block goes, and the drift is
    // patched, never "nothing to do".
    assert_eq!(code, 2, "{doc:#}");
    let diff = doc["diff"].as_str().unwrap_or_default();
    assert!(
        diff.contains("-resource \"aws_route53_record\" \"validation\" {"),
        "{diff}"
    );
    assert!(diff.contains("-  ttl     = 60"), "{diff}");
    assert!(!diff.contains("-resource \"aws_route53_zone\""), "{diff}");
}

#[test]
fn a_record_deleted_by_its_name_in_capitals_and_with_the_dot_is_the_managed_record() {
    let delete = validation_delete("_A1B2C3D4.WWW.Example.com.");
    let (code, doc) = reconcile(
        &[("main.tf", VALIDATION_TF)],
        &validation_state(),
        vec![delete],
    );
    assert_eq!(
        deltas(&doc),
        deleted("aws_route53_record.validation"),
        "{doc:#}"
    );
    assert_eq!(code, 2, "{doc:#}");
}

#[test]
fn a_deleted_record_no_state_holds_is_reported_as_unmanaged() {
    // Another name in the same zone: not this project's record, and the report says so by
    // its identity (zone, name in Route 53's form, type).
    let delete = validation_delete("_FFFF0000.www.example.com.");
    let (code, doc) = reconcile(
        &[("main.tf", VALIDATION_TF)],
        &validation_state(),
        vec![delete],
    );
    assert_eq!(
        deltas(&doc),
        deleted("Z0825171EXAMPLE__ffff0000.www.example.com_CNAME"),
        "{doc:#}"
    );
    assert_eq!(code, 0, "{doc:#}");
    assert!(
        doc["diff"].as_str().unwrap_or_default().is_empty(),
        "{doc:#}"
    );
}

#[test]
fn a_ttl_changed_on_a_record_whose_id_keeps_the_dot_is_absorbed_into_that_record() {
    // The console-009/018 case: an UPSERT of the validation record's TTL (60 → 300), the
    // name without the dot. It is the managed record, not a new one to import.
    let upsert = change(
        7,
        "UPSERT",
        json!({"name": "_a1b2c3d4.www.example.com", "type": "CNAME", "tTL": 300,
            "resourceRecords": [{"value": "_e5f6a7b8.xlfgrmvvlj.acm-validations.aws."}]}),
    );
    let (code, doc) = reconcile(
        &[("main.tf", VALIDATION_TF)],
        &validation_state(),
        vec![upsert],
    );
    assert_eq!(
        deltas(&doc),
        [(
            "aws_route53_record.validation".to_owned(),
            "managed".to_owned()
        )],
        "{doc:#}"
    );
    assert_eq!(code, 2, "{doc:#}");
    let diff = doc["diff"].as_str().unwrap_or_default();
    assert!(diff.contains("-  ttl     = 60"), "{diff}");
    assert!(diff.contains("+  ttl     = 300"), "{diff}");
    assert!(!diff.contains("import {"), "{diff}");
    assert!(!diff.contains("+resource"), "{diff}");
}

const ZONE_TF: &str = r#"resource "aws_route53_zone" "main" {
  name = "example.com"
}
"#;

#[test]
fn a_txt_record_created_out_of_band_is_written_without_the_quotes_route53_keeps() {
    // The console sends TXT values in double quotes, as Route 53 requires; the provider
    // sends `"` + each of `records` + `"` and reads them back without the outer pair, so the
    // code holds the value without them. A value over 255 characters is split into quoted
    // strings; only the outer pair goes (the provider's documentation: `\"\"` inside).
    let long_head = "k".repeat(255);
    let split = format!("\"{long_head}\" \"tail\"");
    let create = change(
        9,
        "CREATE",
        json!({"name": "_verify.example.com", "type": "TXT", "tTL": 300,
            "resourceRecords": [{"value": "\"site-verification=Qx7Y\""}, {"value": split}]}),
    );
    let (code, doc) = reconcile(&[("main.tf", ZONE_TF)], &state(&[]), vec![create]);
    assert_eq!(code, 2, "{doc:#}");
    let diff = doc["diff"].as_str().unwrap_or_default();
    // HCL: the split value's inner quotes escaped, the verification value bare.
    let split_line = format!("+    \"{long_head}\\\" \\\"tail\",");
    assert!(diff.contains(&split_line), "{diff}");
    assert!(diff.contains("+    \"site-verification=Qx7Y\","), "{diff}");
    assert!(!diff.contains("\\\"site-verification"), "{diff}");
    assert!(
        diff.contains("id = \"Z0825171EXAMPLE__verify.example.com_TXT\""),
        "{diff}"
    );
}

const WEIGHTED_TF: &str = r#"resource "aws_route53_zone" "main" {
  name = "example.com"
}

resource "aws_route53_record" "blue" {
  zone_id        = aws_route53_zone.main.zone_id
  name           = "api.example.com"
  type           = "A"
  ttl            = 60
  records        = ["192.0.2.10"]
  set_identifier = "blue"

  weighted_routing_policy {
    weight = 90
  }
}

resource "aws_route53_record" "green" {
  zone_id        = aws_route53_zone.main.zone_id
  name           = "api.example.com"
  type           = "A"
  ttl            = 60
  records        = ["192.0.2.20"]
  set_identifier = "green"

  weighted_routing_policy {
    weight = 10
  }
}
"#;

/// A weighted record: the provider's id ends with its set identifier.
fn weighted(set_identifier: &str, address: &str, weight: u64) -> Value {
    let mut attributes = record("api.example.com", "A", 60, &[address]);
    attributes["id"] = json!(format!("{ZONE}_api.example.com_A_{set_identifier}"));
    attributes["set_identifier"] = json!(set_identifier);
    attributes["weighted_routing_policy"] = json!([{"weight": weight}]);
    attributes
}

#[test]
fn a_weighted_record_deleted_is_the_managed_record_of_its_set_identifier() {
    let state = state(&[
        ("blue", weighted("blue", "192.0.2.10", 90)),
        ("green", weighted("green", "192.0.2.20", 10)),
    ]);
    let delete = change(
        11,
        "DELETE",
        json!({"name": "api.example.com.", "type": "A", "setIdentifier": "green",
            "weight": 10, "tTL": 60, "resourceRecords": [{"value": "192.0.2.20"}]}),
    );
    let (code, doc) = reconcile(&[("main.tf", WEIGHTED_TF)], &state, vec![delete]);
    assert_eq!(deltas(&doc), deleted("aws_route53_record.green"), "{doc:#}");
    assert_eq!(code, 2, "{doc:#}");
    let diff = doc["diff"].as_str().unwrap_or_default();
    assert!(
        diff.contains("-resource \"aws_route53_record\" \"green\" {"),
        "{diff}"
    );
    assert!(
        !diff.contains("-resource \"aws_route53_record\" \"blue\""),
        "{diff}"
    );
}

#[test]
fn an_edit_sent_as_a_delete_and_a_create_in_one_batch_takes_the_new_values() {
    // One batch: the old record's DELETE, then the new one's CREATE, TTL 60 → 300. Reading
    // the DELETE's values made the edit vanish ("nothing to do").
    let mut edit = validation_delete("_a1b2c3d4.www.example.com.");
    let changes = &mut edit["requestParameters"]["changeBatch"]["changes"];
    let mut create = changes[0].clone();
    create["action"] = json!("CREATE");
    create["resourceRecordSet"]["tTL"] = json!(300);
    changes.as_array_mut().unwrap().push(create);
    let (code, doc) = reconcile(
        &[("main.tf", VALIDATION_TF)],
        &validation_state(),
        vec![edit],
    );
    assert_eq!(
        deltas(&doc),
        [(
            "aws_route53_record.validation".to_owned(),
            "managed".to_owned()
        )],
        "{doc:#}"
    );
    assert_eq!(code, 2, "{doc:#}");
    let diff = doc["diff"].as_str().unwrap_or_default();
    assert!(diff.contains("+  ttl     = 300"), "{diff}");
    assert!(!diff.contains("-  records"), "{diff}");
}

#[test]
fn a_route53_write_no_rule_knows_on_the_managed_zone_is_unexplained() {
    // EnableHostedZoneDNSSEC (HostedZoneId in the URI, logged as `hostedZoneId`): no rule
    // reads it, so it stays a finding for a person on the zone it names, never "nothing to do".
    let mut enable = change(13, "UPSERT", json!({}));
    enable["eventName"] = json!("EnableHostedZoneDNSSEC");
    enable["requestParameters"] = json!({"hostedZoneId": ZONE});
    let (code, doc) = reconcile(
        &[("main.tf", VALIDATION_TF)],
        &validation_state(),
        vec![enable],
    );
    assert_eq!(code, 3, "{doc:#}");
    let findings = doc["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{doc:#}");
    let finding = &findings[0];
    assert_eq!(finding["kind"], "unexplained", "{finding:#}");
    assert_eq!(finding["api"], "EnableHostedZoneDNSSEC", "{finding:#}");
    assert_eq!(finding["reach"], "managed", "{finding:#}");
    assert_eq!(
        finding["resources"][0]["address"], "aws_route53_zone.main",
        "{finding:#}"
    );
}

#[test]
fn a_change_naming_the_record_in_another_case_leaves_the_codes_name_alone() {
    // The provider stores `name` lower-cased without the dot, so `_A1B2C3D4.www.example.com`
    // and the code's `_a1b2c3d4.www.example.com.` are one name: only the TTL changes.
    let upsert = change(
        15,
        "UPSERT",
        json!({"name": "_A1B2C3D4.www.example.com", "type": "CNAME", "tTL": 300,
            "resourceRecords": [{"value": "_e5f6a7b8.xlfgrmvvlj.acm-validations.aws."}]}),
    );
    let (code, doc) = reconcile(
        &[("main.tf", VALIDATION_TF)],
        &validation_state(),
        vec![upsert],
    );
    assert_eq!(code, 2, "{doc:#}");
    let diff = doc["diff"].as_str().unwrap_or_default();
    assert!(diff.contains("+  ttl     = 300"), "{diff}");
    assert!(!diff.contains("-  name"), "{diff}");
    assert!(!diff.contains("+  name"), "{diff}");
}
