//! Security events on managed resources: a role made assumable by a foreign account, a topic
//! or a bucket opened to everyone. A correct reconciliation flags each for a person and writes
//! nothing for it: the security-events category. They are derived apart from the other
//! families so adding them leaves every other category's candidates as they were.

use super::change::{Change, req, s3, text};
use crate::sim::canonical_json;
use reconciler::terraform::state::{Instance, Mode, State};
use serde_json::{Value, json};

/// An account no project of the benchmark knows.
const FOREIGN_ACCOUNT: &str = "444455556666";

/// The security events that apply to the managed instances of `state`.
pub fn changes(state: &State) -> Vec<Change> {
    let all: Vec<&Instance> = state
        .instances
        .iter()
        .filter(|i| i.mode == Mode::Managed && i.deposed.is_none())
        .collect();
    let mut out = Vec::new();
    for instance in &all {
        out.extend(match instance.resource_type.as_str() {
            "aws_iam_role" => foreign_trust(instance),
            "aws_sns_topic" => public_topic(instance),
            "aws_s3_bucket_policy" => public_bucket(instance),
            _ => None,
        });
    }
    out
}

/// A document with one more statement, when the current one parses. Documents are written
/// with sorted keys ([`canonical_json`]) so every build gives the same bytes.
fn with_statement(current: &str, statement: Value) -> Option<Value> {
    let mut document: Value = serde_json::from_str(current).ok()?;
    document["Statement"].as_array_mut()?.push(statement);
    Some(document)
}

/// UpdateAssumeRolePolicy letting a foreign account assume the role.
fn foreign_trust(instance: &Instance) -> Option<Change> {
    let role = text(instance, "name");
    let current = text(instance, "assume_role_policy");
    let trust = json!({"Effect": "Allow", "Action": "sts:AssumeRole",
        "Principal": {"AWS": format!("arn:aws:iam::{FOREIGN_ACCOUNT}:root")}});
    let document = with_statement(current, trust)?;
    let put = |doc: String| {
        req(
            "iam.amazonaws.com",
            "UpdateAssumeRolePolicy",
            json!({"roleName": role, "policyDocument": doc}),
        )
    };
    Some(
        Change::modify(
            "role-trusts-foreign-account",
            instance,
            format!("let account {FOREIGN_ACCOUNT} assume role {role}"),
            &["assume_role_policy"],
            vec![put(canonical_json(&document))],
        )
        .undo(vec![put(current.to_owned())]),
    )
}

/// SetTopicAttributes giving every principal the right to publish to the topic.
fn public_topic(instance: &Instance) -> Option<Change> {
    let arn = text(instance, "arn");
    let current = text(instance, "policy");
    let open = json!({"Sid": "open", "Effect": "Allow", "Principal": "*",
        "Action": "SNS:Publish", "Resource": arn});
    let document = with_statement(current, open)?;
    let set = |doc: String| {
        req(
            "sns.amazonaws.com",
            "SetTopicAttributes",
            json!({"topicArn": arn, "attributeName": "Policy", "attributeValue": doc}),
        )
    };
    Some(
        Change::modify(
            "topic-open-to-everyone",
            instance,
            format!("let everyone publish to topic {arn}"),
            &["policy"],
            vec![set(canonical_json(&document))],
        )
        .undo(vec![set(current.to_owned())]),
    )
}

/// PutBucketPolicy letting everyone read the bucket's objects.
fn public_bucket(instance: &Instance) -> Option<Change> {
    let bucket = text(instance, "bucket");
    let current = text(instance, "policy");
    let open = json!({"Sid": "public-read", "Effect": "Allow", "Principal": "*",
        "Action": "s3:GetObject", "Resource": format!("arn:aws:s3:::{bucket}/*")});
    let document = with_statement(current, open)?;
    let put = |doc: Value| s3("PutBucketPolicy", bucket, "bucketPolicy", doc, "policy");
    let original: Value = serde_json::from_str(current).ok()?;
    Some(
        Change::modify(
            "bucket-open-to-everyone",
            instance,
            format!("let everyone read the objects of s3://{bucket}"),
            &["policy"],
            vec![put(document)],
        )
        .undo(vec![put(original)]),
    )
}
