//! Tagging calls per resource type, for sessions that tag many resources at once.

use super::change::{Change, XMLNS, req, s3, text};
use crate::sim::Request;
use reconciler::terraform::state::Instance;
use serde_json::{Value, json};

/// Resource types EC2's CreateTags reaches.
const EC2_TYPES: [&str; 5] = [
    "aws_security_group",
    "aws_vpc",
    "aws_subnet",
    "aws_route_table",
    "aws_launch_template",
];

/// The call that adds the tag `key=value` to `instance`, for the types that have one.
pub fn tag_request(instance: &Instance, key: &str, value: &str) -> Option<Request> {
    let t = instance.resource_type.as_str();
    let arn = text(instance, "arn");
    let pair = json!([{"key": key, "value": value}]);
    let map = json!({key: value});
    let request = match t {
        _ if EC2_TYPES.contains(&t) => req(
            "ec2.amazonaws.com",
            "CreateTags",
            json!({
            "resourcesSet": {"items": [{"resourceId": text(instance, "id")}]},
            "tagSet": {"items": [{"key": key, "value": value}]}}),
        ),
        "aws_s3_bucket" => s3_tagging(instance, key, value),
        "aws_iam_role" => req(
            "iam.amazonaws.com",
            "TagRole",
            json!({"roleName": text(instance, "name"), "tags": pair}),
        ),
        "aws_lambda_function" => req(
            "lambda.amazonaws.com",
            "TagResource",
            json!({"resource": arn, "tags": map}),
        ),
        "aws_db_instance" => req(
            "rds.amazonaws.com",
            "AddTagsToResource",
            json!({"resourceName": arn, "tags": pair}),
        ),
        "aws_dynamodb_table" => req(
            "dynamodb.amazonaws.com",
            "TagResource",
            json!({"resourceArn": arn, "tags": pair}),
        ),
        "aws_wafv2_web_acl" => req(
            "wafv2.amazonaws.com",
            "TagResource",
            json!({"resourceARN": arn, "tags": pair}),
        ),
        "aws_lb" | "aws_lb_target_group" => req(
            "elasticloadbalancing.amazonaws.com",
            "AddTags",
            json!({"resourceArns": [arn], "tags": pair}),
        ),
        "aws_cloudwatch_log_group" => req(
            "logs.amazonaws.com",
            "TagResource",
            json!({"resourceArn": arn.trim_end_matches(":*"), "tags": map}),
        ),
        "aws_sqs_queue" => req(
            "sqs.amazonaws.com",
            "TagQueue",
            json!({"queueUrl": text(instance, "url"), "tags": map}),
        ),
        "aws_sns_topic" => req(
            "sns.amazonaws.com",
            "TagResource",
            json!({"resourceArn": arn, "tags": pair}),
        ),
        "aws_kms_key" => req(
            "kms.amazonaws.com",
            "TagResource",
            json!({"keyId": text(instance, "key_id"), "tags": [{"tagKey": key, "tagValue": value}]}),
        ),
        "aws_secretsmanager_secret" => req(
            "secretsmanager.amazonaws.com",
            "TagResource",
            json!({"secretId": arn, "tags": pair}),
        ),
        "aws_autoscaling_group" => req(
            "autoscaling.amazonaws.com",
            "CreateOrUpdateTags",
            json!({"tags": [{
            "resourceId": text(instance, "name"), "resourceType": "auto-scaling-group", "key": key, "value": value, "propagateAtLaunch": true}]}),
        ),
        _ => return super::tagging::tag_request(instance, key, value),
    };
    Some(request)
}

/// PutBucketTagging replaces the whole set: the bucket's tags plus the new one.
fn s3_tagging(instance: &Instance, key: &str, value: &str) -> Request {
    let mut tags: Vec<Value> = instance
        .attributes
        .get("tags_all")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter(|(k, _)| k.as_str() != key)
                .map(|(k, v)| json!({"Key": k, "Value": v}))
                .collect()
        })
        .unwrap_or_default();
    tags.push(json!({"Key": key, "Value": value}));
    s3(
        "PutBucketTagging",
        text(instance, "bucket"),
        "Tagging",
        json!({"xmlns": XMLNS, "TagSet": {"Tag": tags}}),
        "tagging",
    )
}

/// One tag set on several resources in one session.
pub fn tag_many(instances: &[&Instance], key: &str, value: &str) -> Vec<Change> {
    instances
        .iter()
        .filter_map(|i| {
            let call = tag_request(i, key, value)?;
            let path = match i.resource_type.as_str() {
                "aws_autoscaling_group" => "tag",
                _ => "tags",
            };
            Some(Change::modify(
                "tag-many",
                i,
                format!("tagged {key}={value}"),
                &[path],
                vec![call],
            ))
        })
        .collect()
}

/// Tag sets people add by hand.
pub const TAG_SETS: [(&str, &str); 4] = [
    ("CostCenter", "cc-7310"),
    ("Owner", "data-platform"),
    ("Compliance", "pci"),
    ("Backup", "daily"),
];

/// A tag from [`TAG_SETS`], starting at `n`, that none of `instances` has yet.
pub fn fresh_tag(instances: &[&Instance], n: usize) -> Option<(&'static str, &'static str)> {
    let has = |i: &Instance, k: &str, v: &str| i.attributes["tags_all"][k] == v;
    (0..TAG_SETS.len())
        .map(|k| TAG_SETS[(n + k) % TAG_SETS.len()])
        .find(|(k, v)| instances.iter().all(|i| !has(i, k, v)))
}

/// One tag added to one resource, for every taggable instance.
pub fn changes(instance: &Instance, n: usize) -> Vec<Change> {
    let Some((key, value)) = fresh_tag(&[instance], n) else {
        return Vec::new();
    };
    tag_many(&[instance], key, value)
        .into_iter()
        .map(|mut c| {
            c.name = "tag-add";
            c
        })
        .collect()
}
