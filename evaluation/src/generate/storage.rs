//! Changes to S3 buckets, through the configuration resources Terraform splits them into.

use super::change::{Change, Kind, XMLNS, block, s3, text};
use crate::sim::Request;
use reconciler::terraform::state::Instance;
use serde_json::{Value, json};

/// The changes that apply to one bucket.
pub fn changes(instance: &Instance, all: &[Instance]) -> Vec<Change> {
    if instance.resource_type != "aws_s3_bucket" {
        return Vec::new();
    }
    let bucket = text(instance, "bucket");
    let part = |t: &str| {
        all.iter()
            .find(|i| i.resource_type == t && text(i, "bucket") == bucket)
    };
    let mut out = Vec::new();
    out.push(versioning(
        instance,
        bucket,
        part("aws_s3_bucket_versioning"),
    ));
    out.extend(encryption(
        instance,
        bucket,
        part("aws_s3_bucket_server_side_encryption_configuration"),
        all,
    ));
    out.push(public_access(
        instance,
        bucket,
        part("aws_s3_bucket_public_access_block"),
    ));
    out.extend(part("aws_s3_bucket_logging").map(|l| logging_off(l, bucket)));
    out.extend(part("aws_s3_bucket_lifecycle_configuration").map(|l| {
        Change::modify(
            "s3-delete-lifecycle",
            l,
            format!("deleted the lifecycle configuration of s3://{bucket}"),
            &[],
            vec![s3(
                "DeleteBucketLifecycle",
                bucket,
                "",
                Value::Null,
                "lifecycle",
            )],
        )
        .kind(Kind::Delete)
    }));
    out.extend(
        part("aws_s3_bucket_lifecycle_configuration").and_then(|l| lifecycle_days(l, bucket)),
    );
    out.extend(part("aws_s3_bucket_policy").map(|p| delete_policy(p, bucket)));
    out.extend(ssl_only(instance, bucket, part("aws_s3_bucket_policy")));
    out.extend(logging_on(
        instance,
        bucket,
        part("aws_s3_bucket_logging"),
        all,
    ));
    out
}

/// Expiration periods a team picks, in days.
const EXPIRATION_DAYS: [i64; 9] = [30, 60, 90, 180, 365, 730, 1095, 1825, 2555];

/// A lifecycle rule of the state in the request's XML shape.
fn rule_request(rule: &Value) -> Value {
    let first = |k: &str| {
        rule.get(k)
            .and_then(|v| v.get(0))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let mut out = json!({"ID": rule["id"], "Status": rule["status"],
        "Filter": {"Prefix": first("filter")["prefix"].as_str().unwrap_or("")}});
    if let Some(days) = first("expiration")["days"].as_i64() {
        out["Expiration"] = json!({"Days": days});
    }
    let transitions: Vec<Value> = rule["transition"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .map(|t| json!({"Days": t["days"], "StorageClass": t["storage_class"]}))
                .collect()
        })
        .unwrap_or_default();
    if !transitions.is_empty() {
        out["Transition"] = json!(transitions);
    }
    if let Some(days) = first("noncurrent_version_expiration")["noncurrent_days"].as_i64() {
        out["NoncurrentVersionExpiration"] = json!({"NoncurrentDays": days});
    }
    if let Some(days) = first("abort_incomplete_multipart_upload")["days_after_initiation"].as_i64()
    {
        out["AbortIncompleteMultipartUpload"] = json!({"DaysAfterInitiation": days});
    }
    out
}

fn lifecycle_call(bucket: &str, rules: Vec<Value>) -> Request {
    s3(
        "PutBucketLifecycle",
        bucket,
        "LifecycleConfiguration",
        json!({"xmlns": XMLNS, "Rule": rules}),
        "lifecycle",
    )
}

/// A longer expiration on the first rule that expires objects.
fn lifecycle_days(lifecycle: &Instance, bucket: &str) -> Option<Change> {
    let rules = lifecycle.attributes.get("rule")?.as_array()?;
    let original: Vec<Value> = rules.iter().map(rule_request).collect();
    let at = original
        .iter()
        .position(|r| r["Expiration"]["Days"].is_i64())?;
    let days = original[at]["Expiration"]["Days"].as_i64()?;
    let longer = super::change::next_in(&EXPIRATION_DAYS, days)?;
    let mut changed = original.clone();
    changed[at]["Expiration"]["Days"] = json!(longer);
    let id = original[at]["ID"].as_str().unwrap_or("");
    let path = format!("rule.{at}.expiration.0.days");
    let mut change = Change::modify(
        "s3-lifecycle-expiration",
        lifecycle,
        format!("extended expiration in lifecycle rule {id} of s3://{bucket} from {days} to {longer} days"),
        &[],
        vec![lifecycle_call(bucket, changed)],
    )
    .undo(vec![lifecycle_call(bucket, original)]);
    change.paths = vec![path];
    Some(change)
}

/// AWSConfigRemediation-RestrictBucketSSLRequestsOnly: a statement denying plain HTTP,
/// added to the bucket policy (or a new policy), when none denies it yet.
fn ssl_only(bucket_instance: &Instance, bucket: &str, policy: Option<&Instance>) -> Option<Change> {
    let current = policy.map(|p| text(p, "policy")).unwrap_or("");
    if current.contains("aws:SecureTransport") {
        return None;
    }
    let arn = format!("arn:aws:s3:::{bucket}");
    let deny = json!({"Sid": "AllowSSLRequestsOnly", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
        "Resource": [arn, format!("{arn}/*")], "Condition": {"Bool": {"aws:SecureTransport": "false"}}});
    let mut document: Value = serde_json::from_str(current)
        .unwrap_or_else(|_| json!({"Version": "2012-10-17", "Statement": []}));
    document["Statement"].as_array_mut()?.push(deny);
    let put = |doc: Value| s3("PutBucketPolicy", bucket, "bucketPolicy", doc, "policy");
    let change = Change::modify(
        "s3-ssl-only",
        policy.unwrap_or(bucket_instance),
        format!("denied non-TLS requests in the bucket policy of s3://{bucket}"),
        &["policy"],
        vec![put(document)],
    )
    .runbook("AWSConfigRemediation-RestrictBucketSSLRequestsOnly");
    Some(match policy {
        Some(_) => change.undo(vec![put(
            serde_json::from_str(current).unwrap_or(Value::Null)
        )]),
        None => change.kind(Kind::Create),
    })
}

/// AWS-ConfigureS3BucketLogging on a bucket without logging, into the bucket the project's
/// other buckets already log to.
fn logging_on(
    bucket_instance: &Instance,
    bucket: &str,
    current: Option<&Instance>,
    all: &[Instance],
) -> Option<Change> {
    if current.is_some() {
        return None;
    }
    let target = all
        .iter()
        .filter(|i| i.resource_type == "aws_s3_bucket_logging")
        .map(|i| text(i, "target_bucket"))
        .find(|t| !t.is_empty() && *t != bucket)?;
    Some(
        Change::modify(
            "s3-enable-logging",
            bucket_instance,
            format!("turned on server access logging of s3://{bucket} into s3://{target}"),
            &["target_bucket", "target_prefix"],
            vec![s3(
                "PutBucketLogging",
                bucket,
                "BucketLoggingStatus",
                json!({"xmlns": XMLNS, "LoggingEnabled": {"TargetBucket": target, "TargetPrefix": format!("{bucket}/")}}),
                "logging",
            )],
        )
        .kind(Kind::Create)
        .runbook("AWS-ConfigureS3BucketLogging"),
    )
}

fn versioning_call(bucket: &str, status: &str) -> Request {
    s3(
        "PutBucketVersioning",
        bucket,
        "VersioningConfiguration",
        json!({"Status": status, "xmlns": XMLNS}),
        "versioning",
    )
}

fn versioning(bucket_instance: &Instance, bucket: &str, current: Option<&Instance>) -> Change {
    let status = current
        .map(|v| {
            block(v, "versioning_configuration")["status"]
                .as_str()
                .unwrap_or("")
        })
        .unwrap_or("");
    let target = current.unwrap_or(bucket_instance);
    let kind = if current.is_some() {
        Kind::Modify
    } else {
        Kind::Create
    };
    match status {
        "Enabled" => Change::modify(
            "s3-suspend-versioning",
            target,
            format!("suspended versioning on s3://{bucket}"),
            &["versioning_configuration.0.status"],
            vec![versioning_call(bucket, "Suspended")],
        )
        .undo(vec![versioning_call(bucket, "Enabled")]),
        _ => Change::modify(
            "s3-enable-versioning",
            target,
            format!("enabled versioning on s3://{bucket}"),
            &["versioning_configuration.0.status"],
            vec![versioning_call(bucket, "Enabled")],
        )
        .kind(kind)
        .runbook("AWS-ConfigureS3BucketVersioning"),
    }
}

fn encryption_call(bucket: &str, algorithm: &str, key: &str, bucket_key: bool) -> Request {
    let mut default = json!({"SSEAlgorithm": algorithm});
    if !key.is_empty() {
        default["KMSMasterKeyID"] = json!(key);
    }
    s3(
        "PutBucketEncryption",
        bucket,
        "ServerSideEncryptionConfiguration",
        json!({"xmlns": XMLNS, "Rule": {"ApplyServerSideEncryptionByDefault": default, "BucketKeyEnabled": bucket_key}}),
        "encryption",
    )
}

fn encryption(
    bucket_instance: &Instance,
    bucket: &str,
    current: Option<&Instance>,
    all: &[Instance],
) -> Option<Change> {
    let Some(sse) = current else {
        return Some(
            Change::modify(
                "s3-enable-encryption",
                bucket_instance,
                format!("enabled default encryption (SSE-S3) on s3://{bucket}"),
                &["rule"],
                vec![encryption_call(bucket, "AES256", "", false)],
            )
            .kind(Kind::Create)
            .runbook("AWS-EnableS3BucketEncryption"),
        );
    };
    let rule = block(sse, "rule");
    let default = &rule["apply_server_side_encryption_by_default"][0];
    let algorithm = default["sse_algorithm"].as_str().unwrap_or("");
    let key = default["kms_master_key_id"].as_str().unwrap_or("");
    let bucket_key = rule["bucket_key_enabled"].as_bool().unwrap_or(false);
    let restore = encryption_call(bucket, algorithm, key, bucket_key);
    match algorithm {
        "AES256" => {
            let kms = all
                .iter()
                .find(|i| i.resource_type == "aws_kms_key")
                .map_or("", |k| text(k, "arn"));
            Some(
                Change::modify(
                    "s3-encrypt-with-kms",
                    sse,
                    format!("switched s3://{bucket} default encryption to SSE-KMS"),
                    &["rule"],
                    vec![encryption_call(bucket, "aws:kms", kms, true)],
                )
                .undo(vec![restore]),
            )
        }
        "aws:kms" | "aws:kms:dsse" => Some(
            Change::modify(
                "s3-delete-encryption",
                sse,
                format!("deleted the KMS default encryption of s3://{bucket}"),
                &["rule"],
                vec![s3(
                    "DeleteBucketEncryption",
                    bucket,
                    "",
                    Value::Null,
                    "encryption",
                )],
            )
            .undo(vec![restore])
            .risky(),
        ),
        _ => None,
    }
}

fn pab_call(bucket: &str, on: bool) -> Request {
    s3(
        "PutPublicAccessBlock",
        bucket,
        "PublicAccessBlockConfiguration",
        json!({"xmlns": XMLNS, "BlockPublicAcls": on, "IgnorePublicAcls": on,
               "BlockPublicPolicy": on, "RestrictPublicBuckets": on}),
        "publicAccessBlock",
    )
}

const PAB_FIELDS: [&str; 4] = [
    "block_public_acls",
    "ignore_public_acls",
    "block_public_policy",
    "restrict_public_buckets",
];

fn public_access(bucket_instance: &Instance, bucket: &str, current: Option<&Instance>) -> Change {
    let all_on = current.is_some_and(|p| {
        PAB_FIELDS
            .iter()
            .all(|f| p.attributes.get(*f) == Some(&json!(true)))
    });
    match (current, all_on) {
        (Some(pab), true) => Change::modify(
            "s3-delete-public-access-block",
            pab,
            format!("deleted the public access block of s3://{bucket}"),
            &[],
            vec![s3(
                "DeletePublicAccessBlock",
                bucket,
                "",
                Value::Null,
                "publicAccessBlock",
            )],
        )
        .undo(vec![pab_call(bucket, true)])
        .kind(Kind::Delete)
        .risky(),
        (found, _) => Change::modify(
            "s3-block-public-access",
            found.unwrap_or(bucket_instance),
            format!("blocked all public access on s3://{bucket}"),
            &PAB_FIELDS,
            vec![pab_call(bucket, true)],
        )
        .kind(if found.is_some() {
            Kind::Modify
        } else {
            Kind::Create
        })
        .runbook("AWSConfigRemediation-ConfigureS3BucketPublicAccessBlock"),
    }
}

fn logging_off(logging: &Instance, bucket: &str) -> Change {
    let target = text(logging, "target_bucket");
    let prefix = text(logging, "target_prefix");
    let restore = s3(
        "PutBucketLogging",
        bucket,
        "BucketLoggingStatus",
        json!({"xmlns": XMLNS, "LoggingEnabled": {"TargetBucket": target, "TargetPrefix": prefix}}),
        "logging",
    );
    Change::modify(
        "s3-disable-logging",
        logging,
        format!("turned off server access logging on s3://{bucket}"),
        &["target_bucket"],
        vec![s3(
            "PutBucketLogging",
            bucket,
            "BucketLoggingStatus",
            json!({"xmlns": XMLNS}),
            "logging",
        )],
    )
    .undo(vec![restore])
    .kind(Kind::Delete)
    .risky()
}

fn delete_policy(policy: &Instance, bucket: &str) -> Change {
    let document = text(policy, "policy");
    Change::modify(
        "s3-delete-policy",
        policy,
        format!("deleted the bucket policy of s3://{bucket}"),
        &[],
        vec![s3("DeleteBucketPolicy", bucket, "", Value::Null, "policy")],
    )
    .undo(vec![s3(
        "PutBucketPolicy",
        bucket,
        "bucketPolicy",
        serde_json::from_str(document).unwrap_or(json!(document)),
        "policy",
    )])
    .kind(Kind::Delete)
}
