//! Every out-of-band write call has a fate: generated trails (services with and without
//! rules, console, service and forward-access invokers, event versions with and without
//! `readOnly` and `recipientAccountId`, empty, null and real error codes, repeated writes by
//! several people on managed and unmanaged resources) are attributed and reconciled against
//! the intents fixture project, and every write that entered is part of a listed intent or a
//! finding.

use crate::common;

use knowledge::rules::RuleSet;
use knowledge::schema::ProviderSchema;
use knowledge::signals::SignalSet;
use proptest::prelude::*;
use reconciler::attribute::{Attributor, Verdict};
use reconciler::ingest::Call;
use reconciler::ingest::record::Origin;
use reconciler::ownership::OwnershipConfig;
use reconciler::policy::{Policy, PolicyConfig};
use reconciler::reconcile::{Accounting, Context, Decided, Input, Outcome};
use reconciler::terraform::state::State;
use reconciler::validate::Sandbox;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;

const ACCOUNT: &str = "444455556666";
const MANAGED_INSTANCE: &str = "i-0e1f2a3b4c5d6e7f8";
const MANAGED_GROUP: &str = "sg-0b7a6c5d4e3f21098";
const MANAGED_QUEUE: &str =
    "https://sqs.us-east-1.amazonaws.com/444455556666/ledger-staging-invoices";

/// One generated call: which API, on a managed resource or not, who, through what, which
/// record shape, which error, when.
#[derive(Debug, Clone)]
struct Spec {
    api: usize,
    managed: bool,
    actor: usize,
    invoker: usize,
    version: usize,
    error: usize,
    minute: u32,
    value: usize,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        (0..APIS, any::<bool>(), 0..3usize, 0..INVOKERS),
        (0..3usize, 0..4usize, 0..40u32, 0..3usize),
    )
        .prop_map(
            |((api, managed, actor, invoker), (version, error, minute, value))| Spec {
                api,
                managed,
                actor,
                invoker,
                version,
                error,
                minute,
                value,
            },
        )
}

const APIS: usize = 13;
const INVOKERS: usize = 7;

/// Event source, event name, request and response of API number `api`.
fn call_of(spec: &Spec) -> (&'static str, &'static str, Value, Value) {
    let instance = if spec.managed {
        MANAGED_INSTANCE
    } else {
        "i-0aaaabbbbccccdddd"
    };
    let group = if spec.managed {
        MANAGED_GROUP
    } else {
        "sg-0aaaabbbbccccdddd"
    };
    let queue = if spec.managed {
        MANAGED_QUEUE
    } else {
        "https://sqs.us-east-1.amazonaws.com/444455556666/someone-elses"
    };
    let port = [443, 8443, 22][spec.value];
    let permission = json!({"items": [{"ipProtocol": "tcp", "fromPort": port, "toPort": port,
        "ipRanges": {"items": [{"cidrIp": "10.1.0.0/16"}]}}]});
    match spec.api {
        0 => (
            "ec2.amazonaws.com",
            "ModifyInstanceAttribute",
            json!({"instanceId": instance,
                   "instanceType": {"value": (["t3.large", "t3.small", "m5.large"][spec.value])}}),
            json!({"_return": true}),
        ),
        1 => (
            "ec2.amazonaws.com",
            "AuthorizeSecurityGroupIngress",
            json!({"groupId": group, "ipPermissions": permission}),
            json!({"_return": true}),
        ),
        2 => (
            "ec2.amazonaws.com",
            "RevokeSecurityGroupIngress",
            json!({"groupId": group, "ipPermissions": permission}),
            json!({"_return": true}),
        ),
        3 => (
            "ec2.amazonaws.com",
            "CreateTags",
            json!({"resourcesSet": {"items": [{"resourceId": instance}]},
                   "tagSet": {"items": [{"key": "Owner", "value": (["a", "b", "c"][spec.value])}]}}),
            json!({"_return": true}),
        ),
        4 => (
            "s3.amazonaws.com",
            "PutBucketVersioning",
            json!({"bucketName": "scratch-bucket", "versioning": "",
                   "VersioningConfiguration": {"Status": (["Enabled", "Suspended", "Enabled"][spec.value])}}),
            Value::Null,
        ),
        5 => (
            "s3.amazonaws.com",
            "CreateBucket",
            json!({"bucketName": format!("scratch-{}", spec.value)}),
            Value::Null,
        ),
        6 => (
            "sqs.amazonaws.com",
            "SetQueueAttributes",
            json!({"queueUrl": queue, "attributes": {"VisibilityTimeout": (["60", "30", "90"][spec.value])}}),
            Value::Null,
        ),
        7 => (
            "cloudtrail.amazonaws.com",
            "StopLogging",
            json!({"name": format!("arn:aws:cloudtrail:us-east-1:{ACCOUNT}:trail/main")}),
            Value::Null,
        ),
        8 => (
            "iam.amazonaws.com",
            "CreateAccessKey",
            json!({"userName": "mallory"}),
            json!({"accessKey": {"accessKeyId": "AKIAEXAMPLE", "status": "Active", "userName": "mallory"}}),
        ),
        9 => (
            "example.amazonaws.com",
            "ReticulateSplines",
            json!({"splineId": "s-1"}),
            Value::Null,
        ),
        10 => (
            "ec2.amazonaws.com",
            "StartInstances",
            json!({"instancesSet": {"items": [{"instanceId": instance}]}}),
            Value::Null,
        ),
        11 => (
            "kms.amazonaws.com",
            "Decrypt",
            json!({"encryptionAlgorithm": "SYMMETRIC_DEFAULT"}),
            Value::Null,
        ),
        _ => (
            "sts.amazonaws.com",
            "AssumeRole",
            json!({"roleArn": format!("arn:aws:iam::{ACCOUNT}:role/ledger-app"), "roleSessionName": "s"}),
            Value::Null,
        ),
    }
}

/// The `userIdentity`, `userAgent` and console flag of invoker number `invoker`.
fn who(spec: &Spec) -> (Value, &'static str, bool) {
    let name = ["alice", "bob", "carol"][spec.actor];
    let user = |invoked_by: Option<&str>| {
        let mut identity = json!({"type": "IAMUser", "principalId": format!("AIDA{name}"),
            "arn": format!("arn:aws:iam::{ACCOUNT}:user/{name}"), "accountId": ACCOUNT,
            "accessKeyId": format!("AKIA{name}"), "userName": name});
        if let Some(service) = invoked_by {
            identity["invokedBy"] = json!(service);
        }
        identity
    };
    let role = |path: &str, role: &str, invoked_by: &str| {
        json!({"type": "AssumedRole", "principalId": "AROAEXAMPLE:s",
            "arn": format!("arn:aws:sts::{ACCOUNT}:assumed-role/{role}/s"), "accountId": ACCOUNT,
            "sessionContext": {"sessionIssuer": {"type": "Role",
                "arn": format!("arn:aws:iam::{ACCOUNT}:role{path}{role}"), "userName": role}},
            "invokedBy": invoked_by})
    };
    match spec.invoker {
        0 => (user(None), "aws-cli/2.15.0 md/command#ec2.x", false),
        1 => (
            user(Some("signin.amazonaws.com")),
            "signin.amazonaws.com",
            false,
        ),
        2 => (user(Some("AWS Internal")), "AWS Internal", true),
        3 => (
            role(
                "/aws-service-role/autoscaling.amazonaws.com/",
                "AWSServiceRoleForAutoScaling",
                "autoscaling.amazonaws.com",
            ),
            "autoscaling.amazonaws.com",
            false,
        ),
        4 => (
            json!({"type": "AWSService", "invokedBy": "config.amazonaws.com"}),
            "config.amazonaws.com",
            false,
        ),
        5 => (
            role("/", "cfn-exec", "cloudformation.amazonaws.com"),
            "cloudformation.amazonaws.com",
            false,
        ),
        _ => (user(Some("ec2.amazonaws.com")), "ec2.amazonaws.com", false),
    }
}

/// The CloudTrail record of a generated call, with event id `event-n` from version 1.01 on.
fn record(n: usize, spec: &Spec) -> Value {
    let (source, name, request, response) = call_of(spec);
    let (identity, agent, console) = who(spec);
    let mut record = json!({
        "eventVersion": (["1.0", "1.05", "1.09"][spec.version]),
        "userIdentity": identity,
        "eventTime": format!("2026-11-21T10:{:02}:00Z", spec.minute),
        "eventSource": source,
        "eventName": name,
        "awsRegion": "us-east-1",
        "sourceIPAddress": "203.0.113.9",
        "userAgent": agent,
        "requestParameters": request,
        "responseElements": response,
    });
    // Version 1.0 records have no `eventID` (from 1.01) and no `eventType` (from 1.02).
    if spec.version > 0 {
        record["eventID"] = json!(format!("event-{n}"));
        record["eventType"] = json!("AwsApiCall");
        let read_only = matches!(spec.api, 11 | 12);
        record["readOnly"] = json!(read_only);
        record["recipientAccountId"] = json!(ACCOUNT);
        record["managementEvent"] = json!(true);
        record["eventCategory"] = json!("Management");
    }
    if console {
        record["sessionCredentialFromConsole"] = json!("true");
    }
    match spec.error {
        1 => record["errorCode"] = json!(""),
        2 => record["errorCode"] = Value::Null,
        3 => record["errorCode"] = json!("AccessDenied"),
        _ => {}
    }
    record
}

fn state() -> State {
    let path = common::repo().join("fixtures/intents/project.tfstate");
    State::parse(&std::fs::read(&path).expect("state"), "project.tfstate").expect("parses")
}

/// The out-of-band calls of a generated trail, in time order, a record that repeats an
/// earlier one's event id (two identical version 1.0 records) counted once, as ingest does.
fn out_of_band(specs: &[Spec]) -> Vec<Call> {
    let attributor = Attributor::default();
    let mut seen = HashSet::new();
    let mut calls: Vec<Call> = specs
        .iter()
        .enumerate()
        .map(|(n, spec)| {
            let text = record(n, spec).to_string();
            let origin = Origin {
                source: Arc::from("generated"),
                index: n as u64,
                offset: None,
            };
            Call::parse(text.as_bytes(), origin).expect("a generated record parses")
        })
        .filter(|call| seen.insert(call.event_id.clone()))
        .filter(|call| attributor.attribute(call).verdict == Verdict::OutOfBand)
        .collect();
    calls.sort_by_key(|c| c.event_time);
    calls
}

/// The reconciliation of `calls` against the intents fixture project.
fn reconciled(calls: &[Call]) -> Outcome {
    let policy = Policy::new(PolicyConfig::default()).expect("policy");
    let dir = common::repo().join("fixtures/intents/project");
    let rules = RuleSet::bundled().expect("rules");
    let input = Input {
        dir: &dir,
        var_files: Vec::new(),
        state: state(),
        observed: None,
        rules,
        signals: SignalSet::bundled().expect("signals"),
        accounts: Vec::new(),
        regions: Vec::new(),
        schema: ProviderSchema::bundled().expect("schema"),
        policy: &policy,
        ownership: &OwnershipConfig::default(),
        validators: &Vec::new,
        shared_module_edits: false,
        sandbox: Sandbox::new(&dir),
    };
    let context = Context::new(&input).expect("loads");
    context.reconcile(calls, rules, None).expect("reconciles")
}

/// The event ids of every call the intents hold.
fn evidence_ids(intents: &[Decided]) -> HashSet<&str> {
    intents
        .iter()
        .flat_map(|d| &d.intent.evidence)
        .map(|e| e.event_id.as_str())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_write_that_enters_has_a_fate(specs in prop::collection::vec(spec(), 1..10)) {
        let calls = out_of_band(&specs);
        let outcome = reconciled(&calls);
        let writes: HashSet<&str> = calls.iter().map(|c| c.event_id.as_str()).collect();
        let accounting = &outcome.accounting;
        prop_assert!(accounting.holds(), "unaccounted: {:?}", accounting.unaccounted);
        prop_assert_eq!(accounting.writes, writes.len());
        prop_assert_eq!(accounting.in_intents + accounting.findings, writes.len());
        // A failed call never enters; a read-only one (STS, KMS) never does either.
        for call in &calls {
            prop_assert!(call.error_code.is_none());
            prop_assert!(!matches!(call.event_source.as_str(), "kms.amazonaws.com" | "sts.amazonaws.com"));
        }
    }

    /// The check above can fail: a report that loses an intent, or its findings, leaves
    /// exactly their calls without a fate.
    #[test]
    fn a_report_that_loses_an_intent_or_its_findings_fails_the_check(
        specs in prop::collection::vec(spec(), 1..10),
    ) {
        let calls = out_of_band(&specs);
        let outcome = reconciled(&calls);
        let in_findings: HashSet<&str> =
            outcome.findings.iter().map(|f| f.event_id.as_str()).collect();
        if let Some((lost, kept)) = outcome.intents.split_first() {
            let kept_ids = evidence_ids(kept);
            let orphaned: HashSet<&str> = lost
                .intent
                .evidence
                .iter()
                .map(|e| e.event_id.as_str())
                .filter(|id| !kept_ids.contains(id) && !in_findings.contains(id))
                .collect();
            let accounting = Accounting::of(&calls, kept, &outcome.findings);
            let unaccounted: HashSet<&str> =
                accounting.unaccounted.iter().map(String::as_str).collect();
            prop_assert_eq!(unaccounted, orphaned);
        }
        let in_intents = evidence_ids(&outcome.intents);
        let only_findings: HashSet<&str> =
            in_findings.difference(&in_intents).copied().collect();
        let accounting = Accounting::of(&calls, &outcome.intents, &[]);
        let unaccounted: HashSet<&str> =
            accounting.unaccounted.iter().map(String::as_str).collect();
        prop_assert_eq!(accounting.holds(), only_findings.is_empty());
        prop_assert_eq!(unaccounted, only_findings);
    }
}
