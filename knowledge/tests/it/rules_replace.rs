//! Whole-document replacements, deletions read from the request's content, and the flags that
//! mark a widened policy, removed encryption or an opened public access block. Records are
//! shaped like CloudTrail's (S3's XML bodies as nested objects, IAM documents as strings,
//! Route 53 parameters in lowerCamelCase); every expected value was worked out by hand.

use knowledge::{Extraction, Kind, RuleSet};
use serde_json::{Value, json};

fn extract(source: &str, api: &str, request: Value) -> Extraction {
    let rule = RuleSet::bundled()
        .expect("rules load")
        .find(source, api)
        .unwrap_or_else(|| panic!("no rule for {source} {api}"));
    rule.extract(Some(&request), None)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn reasons(x: &Extraction) -> Vec<&str> {
    x.flags.iter().map(|f| f.reason.as_str()).collect()
}

#[test]
fn a_lifecycle_configuration_is_a_keyed_set_of_rules() {
    let x = extract(
        "s3.amazonaws.com",
        "PutBucketLifecycle",
        json!({
            "bucketName": "logs", "lifecycle": "",
            "LifecycleConfiguration": {"Rule": {
                "ID": "tiering", "Status": "Enabled", "Filter": {"Prefix": ""},
                "Expiration": {"Days": 730},
                "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7}
            }}
        }),
    );
    assert_eq!(x.kind, Kind::AddBlock);
    let blocks = x.blocks.first().expect("blocks");
    assert_eq!(blocks.key.as_deref(), Some("id"));
    assert_eq!(
        Value::Array(blocks.items.iter().cloned().map(Value::Object).collect()),
        json!([{
            "id": "tiering", "status": "Enabled", "filter.prefix": "",
            "expiration.days": 730,
            "abort_incomplete_multipart_upload.days_after_initiation": 7
        }])
    );
}

#[test]
fn logging_without_a_target_turns_logging_off() {
    let off = extract(
        "s3.amazonaws.com",
        "PutBucketLogging",
        json!({"bucketName": "raw", "logging": "",
               "BucketLoggingStatus": {"xmlns": "http://s3.amazonaws.com/doc/2006-03-01/"}}),
    );
    assert_eq!(off.kind, Kind::Delete);
    assert_eq!(reasons(&off), ["turns off server access logging"]);

    let on = extract(
        "s3.amazonaws.com",
        "PutBucketLogging",
        json!({"bucketName": "raw", "logging": "",
               "BucketLoggingStatus": {"LoggingEnabled": {"TargetBucket": "logs", "TargetPrefix": "raw/"}}}),
    );
    assert_eq!(on.kind, Kind::Update);
    assert_eq!(on.value("target_bucket"), Some(&json!("logs")));
    assert!(on.flags.is_empty());
}

#[test]
fn encryption_removed_or_downgraded_is_flagged() {
    let gone = extract(
        "s3.amazonaws.com",
        "DeleteBucketEncryption",
        json!({"bucketName": "raw", "encryption": ""}),
    );
    assert_eq!(gone.kind, Kind::Delete);
    assert_eq!(gone.flags.len(), 1);

    let body = |algorithm: &str| {
        json!({"bucketName": "raw", "encryption": "",
               "ServerSideEncryptionConfiguration": {"Rule": {
                   "ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": algorithm}}}})
    };
    let s3_keys = extract("s3.amazonaws.com", "PutBucketEncryption", body("AES256"));
    assert_eq!(s3_keys.flags.len(), 1);
    let kms = extract("s3.amazonaws.com", "PutBucketEncryption", body("aws:kms"));
    assert!(kms.flags.is_empty());
}

#[test]
fn public_access_block_under_both_names() {
    for api in ["PutBucketPublicAccessBlock", "PutPublicAccessBlock"] {
        let x = extract(
            "s3.amazonaws.com",
            api,
            json!({"bucketName": "site", "publicAccessBlock": "",
                   "PublicAccessBlockConfiguration": {"BlockPublicAcls": true, "IgnorePublicAcls": true,
                     "BlockPublicPolicy": false, "RestrictPublicBuckets": false}}),
        );
        assert_eq!(
            reasons(&x),
            [
                "allows public bucket policies",
                "lets a public bucket policy grant access to anyone"
            ],
            "{api}"
        );
    }
    for api in ["DeleteBucketPublicAccessBlock", "DeletePublicAccessBlock"] {
        let x = extract(
            "s3.amazonaws.com",
            api,
            json!({"bucketName": "site", "publicAccessBlock": ""}),
        );
        assert_eq!(x.kind, Kind::Delete, "{api}");
        assert_eq!(x.flags.len(), 1, "{api}");
    }
}

#[test]
fn only_wildcard_actions_flag_an_inline_policy() {
    let policy = |action: Value, resource: Value| {
        json!({"roleName": "task", "policyName": "runtime",
               "policyDocument": json!({"Version": "2012-10-17", "Statement": [
                   {"Effect": "Allow", "Action": ["ssm:GetParameter"], "Resource": "arn:aws:ssm:eu-west-1:1:parameter/app/*"},
                   {"Effect": "Allow", "Action": action, "Resource": resource}]}).to_string()})
    };
    let flagged = |request: Value| {
        !extract("iam.amazonaws.com", "PutRolePolicy", request)
            .flags
            .is_empty()
    };
    assert!(flagged(policy(json!("*"), json!("*"))));
    assert!(flagged(policy(json!(["s3:*"]), json!("arn:aws:s3:::b/*"))));
    // A resource ARN ending in `*` and a named action on every resource widen no action.
    assert!(!flagged(policy(json!("logs:PutLogEvents"), json!("*"))));
    assert!(!flagged(policy(
        json!(["s3:GetObject"]),
        json!("arn:aws:s3:::b/*")
    )));
}

#[test]
fn route53_ids_drop_the_dot_and_a_delete_only_batch_deletes() {
    let batch = |action: &str| {
        json!({"hostedZoneId": "Z74", "changeBatch": {"changes": [{"action": action,
            "resourceRecordSet": {"name": "_a1.example.", "type": "CNAME", "tTL": 300,
              "resourceRecords": [{"value": "_b2.acm-validations.aws."}]}}]}})
    };
    let upsert = extract(
        "route53.amazonaws.com",
        "ChangeResourceRecordSets",
        batch("UPSERT"),
    );
    assert_eq!(upsert.identities(), ["Z74__a1.example_CNAME"]);
    assert_eq!(upsert.kind, Kind::Update);
    assert_eq!(upsert.value("ttl"), Some(&json!(300)));
    let delete = extract(
        "route53.amazonaws.com",
        "ChangeResourceRecordSets",
        batch("DELETE"),
    );
    assert_eq!(delete.kind, Kind::Delete);
    assert_eq!(delete.identities(), ["Z74__a1.example_CNAME"]);
}
