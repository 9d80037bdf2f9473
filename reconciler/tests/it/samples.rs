//! Every real CloudTrail record in `../shared/cloudtrail-samples` parses, keeps all its
//! fields, and gets a verdict.
#![allow(clippy::unwrap_used, missing_docs)]

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use reconciler::attribute::{Attributor, Verdict};
use reconciler::ingest::files::{discover, read_file};
use reconciler::ingest::record::Payload;
use reconciler::ingest::{Call, Filter, SourceItem};
use serde_json::Value;

/// The sample files, or `None` (with a notice) when the samples are not beside the checkout.
fn sample_files() -> Option<Vec<PathBuf>> {
    let dir = common::samples()?;
    let (files, errors) = discover(&[dir], &Filter::default());
    assert!(errors.is_empty(), "{errors:?}");
    assert!(
        files.len() >= 30,
        "expected the 35 sample files, found {}",
        files.len()
    );
    Some(files)
}

fn read_all(path: &Path) -> Vec<Call> {
    let mut calls = Vec::new();
    read_file(path, None, &mut |item| {
        match item {
            Ok(SourceItem::Call(call)) => calls.push(*call),
            Ok(SourceItem::Skipped(bad)) => panic!("skipped a real record: {bad}"),
            Ok(SourceItem::Settled(_)) => panic!("read_file settles no record"),
            Err(error) => panic!("{error}"),
        }
        true
    });
    calls
}

fn text(value: &Value) -> Option<&str> {
    value.as_str()
}

/// The typed view agrees with the raw record, field by field.
fn assert_typed_matches(call: &Call, raw: &Value) {
    let at = &call.origin;
    assert_eq!(Some(call.event_id.as_str()), text(&raw["eventID"]), "{at}");
    assert_eq!(
        Some(call.event_name.as_str()),
        text(&raw["eventName"]),
        "{at}"
    );
    assert_eq!(
        Some(call.event_source.as_str()),
        text(&raw["eventSource"]),
        "{at}"
    );
    assert_eq!(
        Some(call.event_version.as_str()),
        text(&raw["eventVersion"]),
        "{at}"
    );
    assert_eq!(
        Some(call.aws_region.as_str()),
        text(&raw["awsRegion"]),
        "{at}"
    );
    assert_eq!(call.user_agent.as_deref(), text(&raw["userAgent"]), "{at}");
    assert_eq!(
        call.source_ip_address.as_deref(),
        text(&raw["sourceIPAddress"]),
        "{at}"
    );
    assert_eq!(call.error_code.as_deref(), text(&raw["errorCode"]), "{at}");
    assert_eq!(
        call.error_message.as_deref(),
        text(&raw["errorMessage"]),
        "{at}"
    );
    assert_eq!(call.request_id.as_deref(), text(&raw["requestID"]), "{at}");
    assert_eq!(
        call.recipient_account_id.as_deref(),
        text(&raw["recipientAccountId"]),
        "{at}"
    );
    assert_eq!(
        call.event_category.as_deref(),
        text(&raw["eventCategory"]),
        "{at}"
    );
    assert_eq!(
        Some(call.event_type.as_str()),
        text(&raw["eventType"]),
        "{at}"
    );
    assert_eq!(Some(call.read_only), raw["readOnly"].as_bool(), "{at}");
    assert_eq!(
        call.management_event,
        raw["managementEvent"].as_bool(),
        "{at}"
    );
    let time = text(&raw["eventTime"]).unwrap();
    assert_eq!(
        call.event_time
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        time,
        "{at}"
    );
    let identity = &raw["userIdentity"];
    assert_eq!(
        call.identity.kind.name(),
        text(&identity["type"]).unwrap(),
        "{at}"
    );
    assert_eq!(call.identity.arn.as_deref(), text(&identity["arn"]), "{at}");
    assert_eq!(
        call.identity.account_id.as_deref(),
        text(&identity["accountId"]),
        "{at}"
    );
    assert_eq!(
        call.identity.user_name.as_deref(),
        text(&identity["userName"]),
        "{at}"
    );
    let issuer = &identity["sessionContext"]["sessionIssuer"];
    assert_eq!(
        call.identity.issuer().and_then(|i| i.arn.as_deref()),
        text(&issuer["arn"]),
        "{at}"
    );
    assert_payload(&call.request_parameters, &raw["requestParameters"], at);
    assert_payload(&call.response_elements, &raw["responseElements"], at);
    assert_payload(&call.additional_event_data, &raw["additionalEventData"], at);
    let arns: Vec<Option<&str>> = call.resources.iter().map(|r| r.arn.as_deref()).collect();
    let raw_arns: Vec<Option<&str>> = raw["resources"]
        .as_array()
        .map(|list| list.iter().map(|r| text(&r["ARN"])).collect())
        .unwrap_or_default();
    assert_eq!(arns, raw_arns, "{at}");
    let tls = call
        .tls_details
        .as_ref()
        .and_then(|t| t.tls_version.as_deref());
    assert_eq!(tls, text(&raw["tlsDetails"]["tlsVersion"]), "{at}");
}

fn assert_payload(payload: &Payload, raw: &Value, at: &reconciler::ingest::Origin) {
    match raw {
        Value::Null => assert!(matches!(payload, Payload::Absent), "{at}"),
        Value::String(s) if s == "HIDDEN_DUE_TO_SECURITY_REASONS" => {
            assert!(matches!(payload, Payload::Hidden), "{at}")
        }
        other => assert_eq!(payload.json().as_ref(), Some(other), "{at}"),
    }
}

#[test]
fn every_sample_record_parses_losslessly() {
    let Some(files) = sample_files() else { return };
    let mut records = 0;
    for file in files {
        let raw: Vec<Value> = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let calls = read_all(&file);
        assert_eq!(calls.len(), raw.len(), "{}", file.display());
        for (call, raw) in calls.iter().zip(&raw) {
            let kept: Value = serde_json::from_str(call.raw().unwrap()).unwrap();
            assert_eq!(&kept, raw, "{} is not kept exactly", call.origin);
            assert_typed_matches(call, raw);
        }
        records += calls.len();
    }
    assert_eq!(records, 310, "the samples README says 310 records");
}

/// One line per (service, API) with its verdicts, plus totals by verdict, client and
/// identity kind.
fn classification_summary(files: Vec<PathBuf>) -> String {
    let attributor = Attributor::default();
    let mut by_api: BTreeMap<String, BTreeMap<Verdict, u32>> = BTreeMap::new();
    let mut by_verdict: BTreeMap<Verdict, u32> = BTreeMap::new();
    let mut by_client: BTreeMap<String, u32> = BTreeMap::new();
    let mut by_identity: BTreeMap<String, u32> = BTreeMap::new();
    for file in files {
        for call in read_all(&file) {
            let verdict = attributor.attribute(&call).verdict;
            let api = format!("{}:{}", call.service(), call.api_name());
            *by_api.entry(api).or_default().entry(verdict).or_default() += 1;
            *by_verdict.entry(verdict).or_default() += 1;
            let client = serde_json::to_value(&call.client).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_owned();
            *by_client.entry(client).or_default() += 1;
            *by_identity
                .entry(call.identity.kind.name().to_owned())
                .or_default() += 1;
        }
    }
    let mut out = String::new();
    let mut section = |title: &str, rows: Vec<(String, String)>| {
        out.push_str(&format!("{title}\n"));
        for (key, value) in rows {
            out.push_str(&format!("  {key:<52} {value}\n"));
        }
    };
    section(
        "verdicts",
        by_verdict
            .iter()
            .map(|(v, n)| (v.to_string(), n.to_string()))
            .collect(),
    );
    section(
        "clients",
        by_client
            .into_iter()
            .map(|(k, n)| (k, n.to_string()))
            .collect(),
    );
    section(
        "identities",
        by_identity
            .into_iter()
            .map(|(k, n)| (k, n.to_string()))
            .collect(),
    );
    section(
        "apis",
        by_api
            .into_iter()
            .map(|(api, verdicts)| {
                let list: Vec<String> = verdicts.iter().map(|(v, n)| format!("{v} {n}")).collect();
                (api, list.join(", "))
            })
            .collect(),
    );
    out
}

#[test]
fn sample_classification_summary() {
    let Some(files) = sample_files() else { return };
    insta::assert_snapshot!(classification_summary(files));
}
