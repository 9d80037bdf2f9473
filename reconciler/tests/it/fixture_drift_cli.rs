//! Drift on the fixture projects (`fixtures/projects/`) where the code holds a part of a
//! resource in a resource of its own: web3tier's application security group rules (a rule
//! changed in place in the console with `ModifySecurityGroupRules`, logged as the raw request,
//! and a tag put on a rule's `sgr-` id) and serverless's queue policy (`SetQueueAttributes`
//! with `Policy`) are written on those resources' blocks; a bucket's notification
//! configuration, which the call replaces whole, is written as the net change of its blocks;
//! tags of a shared subnet held one by one (`aws_ec2_tag`) are written on those resources.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// A copy of a fixture project in a scratch directory.
fn project(name: &str) -> (tempfile::TempDir, PathBuf) {
    let scratch = tempfile::tempdir().unwrap();
    let from = common::repo().join("fixtures/projects").join(name);
    let root = scratch.path().join(name);
    common::copy_dir(&from, &root);
    (scratch, root)
}

/// A console user's EC2 call in web3tier's account and region.
fn console_call(name: &str, request: Value) -> Value {
    console_call_to("ec2.amazonaws.com", "us-east-1", name, request)
}

/// A console user's call in the fixtures' account, to a service in a region.
fn console_call_to(source: &str, region: &str, name: &str, request: Value) -> Value {
    json!({
        "eventVersion": "1.09",
        "userIdentity": {"type": "IAMUser", "principalId": "AIDAEXAMPLEBOB000001",
            "arn": "arn:aws:iam::123456789012:user/bob", "accountId": "123456789012",
            "accessKeyId": "ASIAEXAMPLEBOB000001", "userName": "bob"},
        "eventTime": "2026-11-20T10:00:00Z",
        "eventSource": source,
        "eventName": name,
        "awsRegion": region,
        "sourceIPAddress": "203.0.113.9",
        "userAgent": "AWS Internal",
        "requestParameters": request,
        "responseElements": {"requestId": "r-1", "_return": true},
        "requestID": "r-1",
        "eventID": format!("network-{name}"),
        "readOnly": false,
        "eventType": "AwsApiCall",
        "managementEvent": true,
        "recipientAccountId": "123456789012",
        "sessionCredentialFromConsole": "true"
    })
}

/// One console call reconciled into the project with `--write`: the exit code, the report and
/// the project's `main.tf` afterwards.
fn reconcile_call(
    root: &Path,
    (source, region, name): (&str, &str, &str),
    request: Value,
) -> (Option<i32>, Value, String) {
    let (code, report) = reconcile(root, vec![console_call_to(source, region, name, request)]);
    let main = std::fs::read_to_string(root.join("main.tf")).unwrap();
    (code, report, main)
}

/// `retrace reconcile --write` on the project with the records; the exit code and report.
fn reconcile(root: &Path, records: Vec<Value>) -> (Option<i32>, Value) {
    let trail = root.join("../trail.json");
    std::fs::write(&trail, json!({"Records": records}).to_string()).unwrap();
    let output = common::retrace(&[
        "reconcile",
        "--project",
        root.to_str().unwrap(),
        "--state",
        root.join("terraform.tfstate").to_str().unwrap(),
        "--logs",
        trail.to_str().unwrap(),
        "--no-record",
        "--no-terraform",
        "--write",
        "--format",
        "json",
    ]);
    (output.status.code(), common::json(&output))
}

#[test]
fn a_rule_resource_changed_in_place_is_written_on_its_block() {
    let (_scratch, root) = project("web3tier");
    let request = json!({"ModifySecurityGroupRulesRequest": {
        "GroupId": "sg-00c4ce524514a93a7",
        "SecurityGroupRule": {
            "SecurityGroupRuleId": "sgr-08fa1747a1e114b3e",
            "SecurityGroupRule": {
                "IpProtocol": "tcp", "FromPort": 8080, "ToPort": 8080,
                "ReferencedGroupId": "sg-03d71fb0ee728d938",
                "Description": "App port from the ALB"
            },
            "tag": 1
        }
    }});
    let (code, report) = reconcile(
        &root,
        vec![console_call("ModifySecurityGroupRules", request)],
    );
    assert_eq!(code, Some(2), "{report:#}");
    let diff = report["diff"].as_str().unwrap();
    assert!(
        diff.contains(
            "-  description                  = \"Application port from the load balancer\""
        ) && diff.contains("+  description                  = \"App port from the ALB\""),
        "{diff}"
    );
    // Only the description changed: the ports stay written through the variable.
    assert_eq!(
        diff.lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .count(),
        1,
        "{diff}"
    );
}

#[test]
fn a_tag_on_a_rule_resource_is_written_on_its_block() {
    let (_scratch, root) = project("web3tier");
    let request = json!({
        "resourcesSet": {"items": [{"resourceId": "sgr-08fa1747a1e114b3e"}]},
        "tagSet": {"items": [{"key": "Owner", "value": "platform"}]}
    });
    let (code, report) = reconcile(&root, vec![console_call("CreateTags", request)]);
    assert_eq!(code, Some(2), "{report:#}");
    let diff = report["diff"].as_str().unwrap();
    assert!(
        diff.contains("Owner") && diff.contains("platform"),
        "{diff}"
    );
    assert!(
        report["intents"]
            .to_string()
            .contains("aws_vpc_security_group_ingress_rule.app_from_alb"),
        "{report:#}"
    );
}

const JOBS_QUEUE: &str = "https://sqs.eu-west-1.amazonaws.com/123456789012/orders-staging-jobs";

/// serverless holds the jobs queue's policy in `aws_sqs_queue_policy.jobs`: a policy set on
/// the queue in the console is written there, not as a `policy` argument of the queue, which
/// the provider documentation warns would fight the policy resource.
#[test]
fn a_queue_policy_held_apart_is_written_on_its_resource() {
    let (_scratch, root) = project("serverless");
    let policy = json!({"Version": "2012-10-17", "Statement": [{
        "Sid": "AllowOrderEvents", "Effect": "Allow",
        "Principal": {"Service": "sns.amazonaws.com"}, "Action": "sqs:SendMessage",
        "Resource": "arn:aws:sqs:eu-west-1:123456789012:orders-staging-jobs",
        "Condition": {"ArnEquals": {"aws:SourceArn": "arn:aws:sns:eu-west-1:123456789012:orders-staging-audit"}}
    }]});
    let request = json!({"queueUrl": JOBS_QUEUE, "attributes": {"Policy": policy.to_string()}});
    let (code, report, main) = reconcile_call(
        &root,
        ("sqs.amazonaws.com", "eu-west-1", "SetQueueAttributes"),
        request,
    );
    assert_eq!(code, Some(2), "{report:#}");
    let intents = report["intents"].to_string();
    assert!(intents.contains("aws_sqs_queue_policy.jobs"), "{report:#}");
    let diff = report["diff"].as_str().unwrap();
    assert!(diff.contains("orders-staging-audit"), "{diff}");
    let queue = main
        .split("resource \"aws_sqs_queue\" \"jobs\"")
        .nth(1)
        .unwrap();
    let queue = queue.split("\n}\n").next().unwrap();
    assert!(
        !queue.lines().any(|l| l.trim_start().starts_with("policy ")),
        "the queue block is left alone:\n{queue}"
    );
}

/// An empty `Policy` removes the queue's policy: the policy resource goes.
#[test]
fn a_queue_policy_removed_deletes_its_resource() {
    let (_scratch, root) = project("serverless");
    let request = json!({"queueUrl": JOBS_QUEUE, "attributes": {"Policy": ""}});
    let (code, report, main) = reconcile_call(
        &root,
        ("sqs.amazonaws.com", "eu-west-1", "SetQueueAttributes"),
        request,
    );
    assert_eq!(code, Some(2), "{report:#}");
    assert!(
        !main.contains("resource \"aws_sqs_queue_policy\" \"jobs\""),
        "{report:#}"
    );
}

/// A project of one `main.tf` and its state in a scratch directory.
fn inline_project(main_tf: &str, state: Value) -> (tempfile::TempDir, PathBuf) {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("project");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("main.tf"), main_tf).unwrap();
    std::fs::write(root.join("terraform.tfstate"), state.to_string()).unwrap();
    (scratch, root)
}

/// A state of managed resources of one instance each: (type, name, attributes).
fn state_of(resources: &[(&str, &str, Value)]) -> Value {
    let resources: Vec<Value> = resources
        .iter()
        .map(|(ty, name, attributes)| {
            json!({"mode": "managed", "type": ty, "name": name,
                "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
                "instances": [{"schema_version": 0, "attributes": attributes}]})
        })
        .collect();
    json!({"version": 4, "terraform_version": "1.11.4", "serial": 1, "lineage": "inline",
        "outputs": {}, "resources": resources})
}

const NOTIFIED: &str = r#"resource "aws_s3_bucket" "media" {
  bucket = "media-uploads"
}

resource "aws_s3_bucket_notification" "media" {
  bucket = aws_s3_bucket.media.id

  queue {
    id            = "thumbnails"
    queue_arn     = "arn:aws:sqs:eu-west-1:123456789012:thumbnails"
    events        = ["s3:ObjectCreated:Put"]
    filter_prefix = "uploads/"
  }
}
"#;

/// A state for [`NOTIFIED`] as the provider writes it.
fn notified_state() -> Value {
    let bucket = json!({"id": "media-uploads", "bucket": "media-uploads",
        "arn": "arn:aws:s3:::media-uploads", "tags": {}, "tags_all": {}});
    let notification = json!({"id": "media-uploads", "bucket": "media-uploads", "eventbridge": false,
        "lambda_function": [], "topic": [],
        "queue": [{"id": "thumbnails", "queue_arn": "arn:aws:sqs:eu-west-1:123456789012:thumbnails",
                   "events": ["s3:ObjectCreated:Put"], "filter_prefix": "uploads/", "filter_suffix": ""}]});
    state_of(&[
        ("aws_s3_bucket", "media", bucket),
        ("aws_s3_bucket_notification", "media", notification),
    ])
}

/// The whole configuration sent again with one more event on the queue and a new topic: the
/// queue block gains the event and a topic block is added; nothing else moves.
#[test]
fn a_notification_configuration_sent_whole_is_written_as_its_net_change() {
    let (_scratch, root) = inline_project(NOTIFIED, notified_state());
    let request = json!({"bucketName": "media-uploads", "notification": "",
        "NotificationConfiguration": {
            "QueueConfiguration": {"Id": "thumbnails",
                "Queue": "arn:aws:sqs:eu-west-1:123456789012:thumbnails",
                "Event": ["s3:ObjectCreated:Put", "s3:ObjectCreated:CompleteMultipartUpload"],
                "Filter": {"S3Key": {"FilterRule": {"Name": "prefix", "Value": "uploads/"}}}},
            "TopicConfiguration": {"Id": "deletions",
                "Topic": "arn:aws:sns:eu-west-1:123456789012:media-deletions",
                "Event": "s3:ObjectRemoved:*"}}});
    let (code, report, main) = reconcile_call(
        &root,
        ("s3.amazonaws.com", "eu-west-1", "PutBucketNotification"),
        request,
    );
    assert_eq!(code, Some(2), "{report:#}");
    assert!(
        main.contains("s3:ObjectCreated:CompleteMultipartUpload"),
        "{main}"
    );
    assert!(main.contains("topic {"), "{main}");
    assert!(
        main.contains("arn:aws:sns:eu-west-1:123456789012:media-deletions"),
        "{main}"
    );
    assert_eq!(main.matches("queue {").count(), 1, "{main}");
    assert!(main.contains("filter_prefix = \"uploads/\""), "{main}");
    insta::assert_snapshot!(report["diff"].as_str().unwrap());
}

const SHARED_SUBNET: &str = "subnet-0a1b2c3d4e5f60718";

const SUBNET_TAGS: &str = r#"variable "shared_subnet_id" {
  type    = string
  default = "subnet-0a1b2c3d4e5f60718"
}

resource "aws_ec2_tag" "elb_role" {
  resource_id = var.shared_subnet_id
  key         = "kubernetes.io/role/elb"
  value       = "1"
}

resource "aws_ec2_tag" "team" {
  resource_id = var.shared_subnet_id
  key         = "team"
  value       = "web"
}
"#;

/// A state for [`SUBNET_TAGS`] as the provider writes it.
fn subnet_tags_state() -> Value {
    let tag = |key: &str, value: &str| {
        json!({"id": format!("{SHARED_SUBNET},{key}"),
        "resource_id": SHARED_SUBNET, "key": key, "value": value})
    };
    state_of(&[
        (
            "aws_ec2_tag",
            "elb_role",
            tag("kubernetes.io/role/elb", "1"),
        ),
        ("aws_ec2_tag", "team", tag("team", "web")),
    ])
}

/// The project tags a subnet it does not manage, one `aws_ec2_tag` a key: the console changes
/// one key's value, adds a key and removes another. Each lands on its own resource: the value
/// set, a new `aws_ec2_tag` imported as `<subnet>,<key>`, the removed one's block deleted.
#[test]
fn tags_of_a_shared_subnet_held_one_by_one_are_written_on_their_resources() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("tags");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("main.tf"), SUBNET_TAGS).unwrap();
    std::fs::write(
        root.join("terraform.tfstate"),
        subnet_tags_state().to_string(),
    )
    .unwrap();
    let resources = json!({"items": [{"resourceId": SHARED_SUBNET}]});
    let create = console_call(
        "CreateTags",
        json!({"resourcesSet": resources,
        "tagSet": {"items": [{"key": "team", "value": "platform"}, {"key": "owner", "value": "ops"}]}}),
    );
    let mut delete = console_call(
        "DeleteTags",
        json!({"resourcesSet": resources,
        "tagSet": {"items": [{"key": "kubernetes.io/role/elb"}]}}),
    );
    delete["eventTime"] = json!("2026-11-20T10:05:00Z");
    let (code, report) = reconcile(&root, vec![create, delete]);
    assert_eq!(code, Some(2), "{report:#}");
    insta::assert_snapshot!(report["diff"].as_str().unwrap());
}

/// X-Ray tracing turned on for one of media's three functions (one `for_each` block): a
/// `dynamic` block gives that function alone its `tracing_config`, and a second run over the
/// same call finds it in the code and writes nothing.
#[test]
fn tracing_turned_on_for_one_function_of_a_for_each_is_written_for_it_alone_once() {
    let (_scratch, root) = project("media");
    let call = || {
        console_call_to(
            "lambda.amazonaws.com",
            "ca-central-1",
            "UpdateFunctionConfiguration20150331v2",
            json!({"functionName": "reelhouse-prod-transcode", "tracingConfig": {"mode": "Active"}}),
        )
    };
    let (code, report) = reconcile(&root, vec![call()]);
    assert_eq!(code, Some(2), "{report}");
    let functions = std::fs::read_to_string(root.join("functions.tf")).unwrap();
    assert!(
        functions.contains(
            "  dynamic \"tracing_config\" {\n    for_each = contains([\"transcode\"], each.key) ? [1] : []\n    content {\n      mode = \"Active\"\n    }\n  }\n"
        ),
        "{functions}"
    );
    let (again, report) = reconcile(&root, vec![call()]);
    assert_eq!(again, Some(0), "{report}");
    assert_eq!(
        std::fs::read_to_string(root.join("functions.tf")).unwrap(),
        functions
    );
}

/// TTL turned on for one table of a `for_each` whose `ttl` blocks a `dynamic` block makes from
/// each table's `ttl_attribute`: the other table's block shows where that comes from, so the
/// table's own tfvars entry is set, and `ttl.enabled`, which the content writes as `true`
/// for every table, needs nothing more.
#[test]
fn ttl_turned_on_for_one_table_sets_its_entry_that_the_dynamic_block_reads() {
    let (_scratch, root) = project("serverless");
    let call = console_call_to(
        "dynamodb.amazonaws.com",
        "eu-west-1",
        "UpdateTimeToLive",
        json!({"tableName": "orders-staging-orders",
               "timeToLiveSpecification": {"enabled": true, "attributeName": "expires_at"}}),
    );
    let main = std::fs::read_to_string(root.join("main.tf")).unwrap();
    let tfvars = std::fs::read_to_string(root.join("terraform.tfvars")).unwrap();
    let (code, report) = reconcile(&root, vec![call]);
    assert_eq!(code, Some(2), "{report}");
    let orders = "  orders = {\n    hash_key      = \"pk\"\n    range_key     = \"sk\"\n    ttl_attribute = ";
    assert!(tfvars.contains(&format!("{orders}\"\"\n")), "{tfvars}");
    assert_eq!(
        std::fs::read_to_string(root.join("terraform.tfvars")).unwrap(),
        tfvars.replace(
            &format!("{orders}\"\"\n"),
            &format!("{orders}\"expires_at\"\n")
        )
    );
    assert_eq!(std::fs::read_to_string(root.join("main.tf")).unwrap(), main);
}

/// The default security group's self-referencing rule revoked (EC2 records it as a pair naming
/// the group itself): it is the code's `self = true` rule, written by a `dynamic` block over a
/// variable only that block reads, so its entry leaves the variable's tfvars list.
#[test]
fn a_revoked_self_rule_written_by_a_dynamic_block_leaves_the_variables_list() {
    let (_scratch, root) = project("network");
    let revoke = console_call_to(
        "ec2.amazonaws.com",
        "sa-east-1",
        "RevokeSecurityGroupIngress",
        json!({"groupId": "sg-0de87de14050d07be", "ipPermissions": {"items": [{
            "ipProtocol": "-1", "groups": {"items": [{"groupId": "sg-0de87de14050d07be"}]},
            "ipRanges": {}, "ipv6Ranges": {}, "prefixListIds": {}
        }]}}),
    );
    let before = std::fs::read_to_string(root.join("main.tf")).unwrap();
    let tfvars = std::fs::read_to_string(root.join("terraform.tfvars")).unwrap();
    let entry = r#"  { protocol = "-1", from_port = 0, to_port = 0, self = true, cidr_blocks = [] },
"#;
    assert!(tfvars.contains(entry), "{tfvars}");
    let (code, report) = reconcile(&root, vec![revoke]);
    assert_eq!(code, Some(2), "{report}");
    let text = report.to_string();
    assert!(
        text.contains("made by entry 0 of var.default_security_group_ingress in terraform.tfvars"),
        "{report}"
    );
    assert!(!text.contains("already gone from the code"), "{report}");
    assert_eq!(
        std::fs::read_to_string(root.join("terraform.tfvars")).unwrap(),
        tfvars.replace(entry, "")
    );
    assert_eq!(
        std::fs::read_to_string(root.join("main.tf")).unwrap(),
        before
    );
}
