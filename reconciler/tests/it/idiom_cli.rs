//! New code in the project's own idiom: a queue created in the console with the project's
//! common tags and a name on its prefix is imported beside the project's other queues, its
//! tags and name written on the project's locals, identity first and tags last.
#![allow(clippy::unwrap_used)]

use crate::common;

use serde_json::json;

const MAIN: &str = r#"locals {
  prefix = "shop-prod"

  common_tags = {
    Env     = "prod"
    Project = "shop"
  }
}
"#;

const QUEUES: &str = r#"resource "aws_sqs_queue" "orders" {
  name = "${local.prefix}-orders"
  tags = local.common_tags
}

resource "aws_sqs_queue" "payments" {
  name = "${local.prefix}-payments"
  tags = local.common_tags
}
"#;

fn deployed() -> serde_json::Value {
    let queue = |name: &str| {
        let full = format!("shop-prod-{name}");
        json!({
            "mode": "managed", "type": "aws_sqs_queue", "name": name,
            "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
            "instances": [{"schema_version": 0, "attributes": {
                "id": format!("https://sqs.eu-west-1.amazonaws.com/123456789012/{full}"),
                "arn": format!("arn:aws:sqs:eu-west-1:123456789012:{full}"),
                "name": full,
                "tags": {"Env": "prod", "Project": "shop"},
                "tags_all": {"Env": "prod", "Project": "shop"}
            }}]
        })
    };
    json!({
        "version": 4, "terraform_version": "1.11.4", "serial": 1, "lineage": "idiom",
        "outputs": {},
        "resources": [queue("orders"), queue("payments")]
    })
}

fn create_queue(tags: serde_json::Value) -> serde_json::Value {
    let url = "https://sqs.eu-west-1.amazonaws.com/123456789012/shop-prod-refunds";
    json!({"Records": [{
        "eventVersion": "1.09",
        "userIdentity": {"type": "IAMUser", "principalId": "AIDAEXAMPLE", "arn": "arn:aws:iam::123456789012:user/alice",
                         "accountId": "123456789012", "accessKeyId": "ASIAEXAMPLE", "userName": "alice"},
        "eventTime": "2026-11-20T09:05:00Z", "eventSource": "sqs.amazonaws.com", "eventName": "CreateQueue",
        "awsRegion": "eu-west-1", "sourceIPAddress": "203.0.113.7", "userAgent": "AWS Internal",
        "sessionCredentialFromConsole": "true",
        "requestParameters": {"queueName": "shop-prod-refunds", "tags": tags},
        "responseElements": {"queueUrl": url},
        "requestID": "r1", "eventID": "e1", "readOnly": false, "eventType": "AwsApiCall",
        "managementEvent": true, "recipientAccountId": "123456789012"
    }]})
}

/// Reconciles a CreateQueue with `tags` and returns the diff.
fn imported(tags: serde_json::Value) -> String {
    let records = create_queue(tags)["Records"].as_array().unwrap().clone();
    let (code, doc, _dir) = common::reconcile_records(
        &[("main.tf", MAIN), ("queues.tf", QUEUES)],
        &deployed(),
        records,
    );
    assert_eq!(code, 2, "{doc}");
    doc["diff"].as_str().unwrap().to_string()
}

#[test]
fn an_imported_queue_reuses_the_projects_tags_and_prefix_beside_its_kind() {
    let diff = imported(json!({"Env": "prod", "Project": "shop"}));
    insta::assert_snapshot!(diff);
    assert!(
        diff.starts_with("diff --git a/queues.tf b/queues.tf"),
        "{diff}"
    );
}

#[test]
fn extra_tags_are_merged_over_the_common_ones() {
    let diff = imported(json!({"Env": "prod", "Project": "shop", "Team": "payments"}));
    assert!(
        diff.contains("+  tags = merge(local.common_tags, { Team = \"payments\" })"),
        "{diff}"
    );
}
