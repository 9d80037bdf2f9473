//! Changes to IAM roles, their inline policies and attachments, and managed policies.

use super::change::{Change, Kind, req, text};
use reconciler::terraform::state::Instance;
use serde_json::{Value, json};

const IAM: &str = "iam.amazonaws.com";
const ADMIN: &str = "arn:aws:iam::aws:policy/AdministratorAccess";
const READ_ONLY: [&str; 2] = [
    "arn:aws:iam::aws:policy/CloudWatchLogsReadOnlyAccess",
    "arn:aws:iam::aws:policy/AmazonSSMReadOnlyAccess",
];

/// The changes that apply to one instance.
pub fn changes(instance: &Instance, all: &[Instance]) -> Vec<Change> {
    match instance.resource_type.as_str() {
        "aws_iam_role" => role(instance, all),
        "aws_iam_role_policy" => inline_policy(instance),
        "aws_iam_role_policy_attachment" => vec![detach(instance)],
        "aws_iam_policy" => managed_policy(instance),
        _ => Vec::new(),
    }
}

fn attach_call(name: &str, role: &str, arn: &str) -> crate::sim::Request {
    req(IAM, name, json!({"roleName": role, "policyArn": arn}))
}

fn attached(all: &[Instance], role: &str, arn: &str) -> bool {
    all.iter().any(|i| {
        i.resource_type == "aws_iam_role_policy_attachment"
            && text(i, "role") == role
            && text(i, "policy_arn") == arn
    })
}

fn role(instance: &Instance, all: &[Instance]) -> Vec<Change> {
    let name = text(instance, "name").to_owned();
    let mut out = vec![
        new_inline_policy(instance, &name),
        describe_role(instance, &name),
    ];
    if let Some(arn) = READ_ONLY.iter().find(|a| !attached(all, &name, a)) {
        let short = arn.rsplit('/').next().unwrap_or(arn);
        out.push(
            Change::modify(
                "iam-attach-policy",
                instance,
                format!("attached {short} to role {name}"),
                &[],
                vec![attach_call("AttachRolePolicy", &name, arn)],
            )
            .undo(vec![attach_call("DetachRolePolicy", &name, arn)])
            .kind(Kind::Create),
        );
    }
    if !attached(all, &name, ADMIN) {
        out.push(
            Change::modify(
                "iam-attach-admin",
                instance,
                format!("attached AdministratorAccess to role {name}"),
                &[],
                vec![attach_call("AttachRolePolicy", &name, ADMIN)],
            )
            .undo(vec![attach_call("DetachRolePolicy", &name, ADMIN)])
            .kind(Kind::Create)
            .risky(),
        );
    }
    out
}

/// A new inline policy letting the role read its own CloudWatch metrics.
fn new_inline_policy(instance: &Instance, role: &str) -> Change {
    let doc = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
        "Action": ["cloudwatch:GetMetricData", "cloudwatch:ListMetrics"], "Resource": "*"}]});
    let policy = "metrics-read";
    Change::modify(
        "iam-create-inline-policy",
        instance,
        format!("added inline policy {policy} to role {role}"),
        &[],
        vec![req(
            IAM,
            "PutRolePolicy",
            json!({"roleName": role, "policyName": policy, "policyDocument": crate::sim::canonical_json(&doc)}),
        )],
    )
    .undo(vec![req(
        IAM,
        "DeleteRolePolicy",
        json!({"roleName": role, "policyName": policy}),
    )])
    .kind(Kind::Create)
}

/// A new description on the role (UpdateRole).
fn describe_role(instance: &Instance, role: &str) -> Change {
    let current = text(instance, "description");
    let new = match current.is_empty() {
        true => format!("Role {role}; owner: platform team"),
        false => format!("{current} (reviewed 2026-03)"),
    };
    let call = |d: &str| {
        req(
            IAM,
            "UpdateRole",
            json!({"roleName": role, "description": d}),
        )
    };
    Change::modify(
        "iam-role-description",
        instance,
        format!("changed the description of role {role}"),
        &["description"],
        vec![call(&new)],
    )
    .undo(vec![call(current)])
}

/// A policy document with one more statement.
fn widened(document: &str, statement: Value) -> Option<String> {
    let mut doc: Value = serde_json::from_str(document).ok()?;
    let statements = doc.get_mut("Statement")?;
    if let Some(one) = statements.as_object().cloned() {
        *statements = json!([one]);
    }
    statements.as_array_mut()?.push(statement);
    Some(crate::sim::canonical_json(&doc))
}

fn inline_policy(instance: &Instance) -> Vec<Change> {
    let role = text(instance, "role");
    let name = text(instance, "name");
    let document = text(instance, "policy");
    let put = |doc: &str| {
        req(
            IAM,
            "PutRolePolicy",
            json!({"roleName": role, "policyName": name, "policyDocument": doc}),
        )
    };
    let mut out = vec![
        Change::modify(
            "iam-delete-inline-policy",
            instance,
            format!("deleted inline policy {name} from role {role}"),
            &[],
            vec![req(
                IAM,
                "DeleteRolePolicy",
                json!({"roleName": role, "policyName": name}),
            )],
        )
        .undo(vec![put(document)])
        .kind(Kind::Delete),
    ];
    let metrics = json!({"Effect": "Allow", "Action": "cloudwatch:PutMetricData", "Resource": "*"});
    if let Some(doc) = widened(document, metrics) {
        out.push(
            Change::modify(
                "iam-extend-inline-policy",
                instance,
                format!("allowed cloudwatch:PutMetricData in inline policy {name} of role {role}"),
                &["policy"],
                vec![put(&doc)],
            )
            .undo(vec![put(document)]),
        );
    }
    let everything = json!({"Effect": "Allow", "Action": "*", "Resource": "*"});
    if let Some(doc) = widened(document, everything) {
        out.push(
            Change::modify(
                "iam-widen-inline-policy",
                instance,
                format!(
                    "allowed every action on every resource in inline policy {name} of role {role}"
                ),
                &["policy"],
                vec![put(&doc)],
            )
            .undo(vec![put(document)])
            .risky(),
        );
    }
    out
}

fn detach(instance: &Instance) -> Change {
    let role = text(instance, "role");
    let arn = text(instance, "policy_arn");
    let short = arn.rsplit('/').next().unwrap_or(arn);
    Change::modify(
        "iam-detach-policy",
        instance,
        format!("detached {short} from role {role}"),
        &[],
        vec![attach_call("DetachRolePolicy", role, arn)],
    )
    .undo(vec![attach_call("AttachRolePolicy", role, arn)])
    .kind(Kind::Delete)
}

fn managed_policy(instance: &Instance) -> Vec<Change> {
    let arn = text(instance, "arn");
    let name = text(instance, "name");
    let document = text(instance, "policy");
    let version = |doc: &str| {
        req(
            IAM,
            "CreatePolicyVersion",
            json!({"policyArn": arn, "policyDocument": doc, "setAsDefault": true}),
        )
    };
    let mut out = Vec::new();
    let list = json!({"Effect": "Allow", "Action": "s3:ListAllMyBuckets", "Resource": "*"});
    if let Some(doc) = widened(document, list) {
        out.push(
            Change::modify(
                "iam-extend-policy",
                instance,
                format!("added s3:ListAllMyBuckets to policy {name}"),
                &["policy"],
                vec![version(&doc)],
            )
            .undo(vec![version(document)]),
        );
    }
    let everything = json!({"Effect": "Allow", "Action": "*", "Resource": "*"});
    if let Some(doc) = widened(document, everything) {
        out.push(
            Change::modify(
                "iam-widen-policy",
                instance,
                format!("allowed every action on every resource in policy {name}"),
                &["policy"],
                vec![version(&doc)],
            )
            .undo(vec![version(document)])
            .risky(),
        );
    }
    out
}

/// A new role for a Lambda function with a managed policy attached (one per account): a
/// debugging role with no link to the project and neither its tags nor its naming, so it
/// belongs to no workspace and is reported, not imported.
pub fn creations(all: &[Instance]) -> Vec<Change> {
    let Some(anchor) = all.iter().find(|i| i.resource_type == "aws_iam_role") else {
        return Vec::new();
    };
    let trust = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
        "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]});
    let name = "ops-debug-lambda";
    vec![
        Change::modify(
            "iam-create-role",
            anchor,
            format!("created role {name} with AWSLambdaBasicExecutionRole attached"),
            &[],
            vec![
                req(
                    IAM,
                    "CreateRole",
                    json!({"roleName": name, "assumeRolePolicyDocument": crate::sim::canonical_json(&trust)}),
                ),
                attach_call(
                    "AttachRolePolicy",
                    name,
                    "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
                ),
            ],
        )
        .kind(Kind::Create)
        .unowned(&["aws_iam_role", "aws_iam_role_policy_attachment"]),
    ]
}
