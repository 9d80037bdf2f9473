//! Security events on managed resources: a role made assumable by a foreign account, a topic
//! or a bucket opened to everyone. A correct reconciliation flags each for a person and writes
//! nothing for it: the security-events category. They are derived apart from the other
//! families so adding them leaves every other category's candidates as they were.
//! [`account_events`] adds events on nothing a state holds, played by [`super::events`].

use super::change::{Change, Kind, req, s3, text};
use super::events::Event;
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
            "aws_vpc_block_public_access_options" => super::vpc::block_public_access_off(instance),
            "aws_s3_bucket_acl" => Some(public_acl(instance)),
            "aws_lambda_function_url" => Some(open_function_url(instance)),
            "aws_kms_grant" => Some(foreign_grant(instance)),
            "aws_wafv2_web_acl_association" => Some(unprotected(instance)),
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

/// PutBucketAcl with the `public-read` canned ACL.
fn public_acl(instance: &Instance) -> Change {
    let bucket = text(instance, "bucket");
    let mut put = s3("PutBucketAcl", bucket, "", Value::Null, "acl");
    put.request_parameters["x-amz-acl"] = json!(["public-read"]);
    let mut back = put.clone();
    back.request_parameters["x-amz-acl"] = json!(["private"]);
    Change::modify(
        "bucket-acl-public-read",
        instance,
        format!("gave everyone read access to bucket {bucket} by its ACL"),
        &["access_control_policy"],
        vec![put],
    )
    .undo(vec![back])
}

/// UpdateFunctionUrlConfig dropping the URL's authentication.
fn open_function_url(instance: &Instance) -> Change {
    let function = text(instance, "function_name");
    let current = text(instance, "authorization_type");
    let set = |auth: &str| {
        req(
            "lambda.amazonaws.com",
            "UpdateFunctionUrlConfig",
            json!({"functionName": function, "authType": auth}),
        )
    };
    Change::modify(
        "function-url-without-auth",
        instance,
        format!("let anyone call {function} through its URL"),
        &["authorization_type"],
        vec![set("NONE")],
    )
    .undo(vec![set(current)])
}

/// CreateGrant giving a foreign account the use of a grant's key.
fn foreign_grant(instance: &Instance) -> Change {
    let key = text(instance, "key_id");
    let grantee = format!("arn:aws:iam::{FOREIGN_ACCOUNT}:root");
    Change::modify(
        "key-granted-to-foreign-account",
        instance,
        format!("let account {FOREIGN_ACCOUNT} decrypt with key {key}"),
        &[],
        vec![req(
            "kms.amazonaws.com",
            "CreateGrant",
            json!({"keyId": key, "granteePrincipal": grantee, "operations": ["Decrypt"]}),
        )],
    )
    .kind(Kind::Create)
}

/// DisassociateWebACL taking a resource out from behind its firewall.
fn unprotected(instance: &Instance) -> Change {
    let resource = text(instance, "resource_arn");
    let acl = text(instance, "web_acl_arn");
    Change::modify(
        "web-acl-disassociated",
        instance,
        format!("took {resource} out from behind web ACL {acl}"),
        &[],
        vec![req(
            "wafv2.amazonaws.com",
            "DisassociateWebACL",
            json!({"resourceArn": resource}),
        )],
    )
    .kind(Kind::Delete)
}

/// Account-level security events: calls on nothing a Terraform state holds (the account's
/// trail, its GuardDuty detector, IAM users, snapshots), each an attack technique a person
/// must hear about: audit logging stopped or deleted (MITRE ATT&CK T1562.008), threat
/// detection deleted or disabled (T1562.001), credentials made for another user (T1098.001),
/// snapshots shared with a foreign account (T1537), default EBS encryption turned off.
pub fn account_events(state: &State) -> Vec<Event> {
    let Some((region, account)) = state.instances.iter().find_map(|i| {
        let arn = i.string_attribute("arn")?;
        let mut parts = arn.split(':').skip(3);
        let region = parts.next().filter(|r| !r.is_empty())?;
        Some((region.to_owned(), parts.next()?.to_owned()))
    }) else {
        return Vec::new();
    };
    let trail = format!("arn:aws:cloudtrail:{region}:{account}:trail/management-events");
    let detector = "6ec5f2c1a3b84d0e9f7a2b3c4d5e6f70";
    let event = |generator, what: &str, request, response| Event {
        generator,
        what: what.to_owned(),
        request,
        response,
        address: None,
    };
    vec![
        event(
            "cloudtrail-stop-logging",
            "stopped the account's CloudTrail trail",
            req(
                "cloudtrail.amazonaws.com",
                "StopLogging",
                json!({"name": trail}),
            ),
            Value::Null,
        ),
        event(
            "cloudtrail-delete-trail",
            "deleted the account's CloudTrail trail",
            req(
                "cloudtrail.amazonaws.com",
                "DeleteTrail",
                json!({"name": trail}),
            ),
            Value::Null,
        ),
        event(
            "guardduty-delete-detector",
            "deleted the GuardDuty detector",
            req(
                "guardduty.amazonaws.com",
                "DeleteDetector",
                json!({"detectorId": detector}),
            ),
            Value::Null,
        ),
        event(
            "guardduty-disable-detector",
            "suspended the GuardDuty detector",
            req(
                "guardduty.amazonaws.com",
                "UpdateDetector",
                json!({"detectorId": detector, "enable": false}),
            ),
            Value::Null,
        ),
        event(
            "iam-access-key-for-another-user",
            "created an access key for the IAM user backup-operator",
            req(
                "iam.amazonaws.com",
                "CreateAccessKey",
                json!({"userName": "backup-operator"}),
            ),
            json!({"accessKey": {"userName": "backup-operator", "accessKeyId": "AKIAQX3EXAMPLEK7Z2LM",
                                 "status": "Active", "createDate": "Mar 2, 2026 9:14:07 AM"}}),
        ),
        event(
            "iam-login-profile",
            "gave the IAM user svc-reporting a console password",
            req(
                "iam.amazonaws.com",
                "CreateLoginProfile",
                json!({"userName": "svc-reporting", "passwordResetRequired": false}),
            ),
            json!({"loginProfile": {"userName": "svc-reporting", "createDate": "Mar 2, 2026 9:14:07 AM",
                                    "passwordResetRequired": false}}),
        ),
        event(
            "ebs-snapshot-shared",
            &format!("shared an EBS snapshot with account {FOREIGN_ACCOUNT}"),
            req(
                "ec2.amazonaws.com",
                "ModifySnapshotAttribute",
                json!({"snapshotId": "snap-0a1b2c3d4e5f60718", "attributeType": "CREATE_VOLUME_PERMISSION",
                       "createVolumePermission": {"add": {"items": [{"userId": FOREIGN_ACCOUNT}]}}}),
            ),
            json!({"_return": true}),
        ),
        event(
            "rds-snapshot-shared",
            &format!("shared a database snapshot with account {FOREIGN_ACCOUNT}"),
            req(
                "rds.amazonaws.com",
                "ModifyDBSnapshotAttribute",
                json!({"dBSnapshotIdentifier": "nightly-2026-03-01", "attributeName": "restore",
                       "valuesToAdd": [FOREIGN_ACCOUNT]}),
            ),
            json!({"dBSnapshotIdentifier": "nightly-2026-03-01",
                   "dBSnapshotAttributes": [{"attributeName": "restore", "attributeValues": [FOREIGN_ACCOUNT]}]}),
        ),
        event(
            "ebs-default-encryption-off",
            "turned off EBS encryption by default",
            req(
                "ec2.amazonaws.com",
                "DisableEbsEncryptionByDefault",
                json!({"DisableEbsEncryptionByDefaultRequest": ""}),
            ),
            json!({"DisableEbsEncryptionByDefaultResponse": {"xmlns": "http://ec2.amazonaws.com/doc/2016-11-15/",
                   "ebsEncryptionByDefault": false}}),
        ),
    ]
}
