//! Changes whose right patch depends on how AWS and the Terraform AWS provider really behave,
//! on projects written the way public modules write them: targets registered with a target
//! group (each its own attachment, with its own id, port and zone), a VPC put back on the
//! default DHCP options (the VPC's one association changes), a launch template's default
//! version set where the code makes every new version the default (the provider refuses
//! `default_version` beside `update_default_version`), and a bucket made public through its
//! canned ACL (held on the bucket's one managed ACL, whose provider id is `bucket,acl`: the
//! provider reads `acl` from that id, so the change shows in `access_control_policy`).
#![allow(clippy::unwrap_used)]

use crate::common;

use serde_json::{Value, json};

const PROVIDER: &str = "provider[\"registry.terraform.io/hashicorp/aws\"]";

/// One managed resource of a state with a single instance.
fn resource(resource_type: &str, name: &str, attributes: Value) -> Value {
    json!({
        "mode": "managed", "type": resource_type, "name": name, "provider": PROVIDER,
        "instances": [{"schema_version": 0, "attributes": attributes}]
    })
}

fn state(resources: Vec<Value>) -> Value {
    json!({
        "version": 4, "terraform_version": "1.11.4", "serial": 3, "lineage": "semantics",
        "outputs": {}, "resources": resources
    })
}

/// A CloudTrail record of a console user's successful call.
fn call(source: &str, name: &str, minute: u32, request: Value, response: Value) -> Value {
    json!({
        "eventVersion": "1.09",
        "userIdentity": {"type": "IAMUser", "principalId": "AIDAEXAMPLE",
                         "arn": "arn:aws:iam::123456789012:user/alice", "accountId": "123456789012",
                         "accessKeyId": "ASIAEXAMPLE", "userName": "alice"},
        "eventTime": format!("2026-11-20T09:{minute:02}:00Z"), "eventSource": source,
        "eventName": name, "awsRegion": "eu-west-1", "sourceIPAddress": "203.0.113.7",
        "userAgent": "console.amazonaws.com", "sessionCredentialFromConsole": "true",
        "requestParameters": request, "responseElements": response,
        "requestID": format!("req-{minute}"), "eventID": format!("evt-{minute}"),
        "readOnly": false, "eventType": "AwsApiCall", "managementEvent": true,
        "recipientAccountId": "123456789012"
    })
}

/// `retrace reconcile --write` over the files, state and records: the exit code, the JSON
/// report and the project directory (kept alive by the returned guard).
fn reconcile(
    files: &[(&str, &str)],
    state: Value,
    records: Vec<Value>,
) -> (i32, Value, tempfile::TempDir) {
    common::reconcile_records(files, &state, records)
}

/// The diff's added lines with runs of spaces collapsed (alignment aside).
fn added(doc: &Value) -> Vec<String> {
    doc["diff"]
        .as_str()
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .map(|l| l[1..].split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

const TARGETS_TF: &str = r#"variable "name" {
  type    = string
  default = "shop"
}

variable "vpc_id" {
  type    = string
  default = "vpc-0a1b2c3d"
}

variable "targets" {
  description = "IP targets of the API, by name."
  type        = map(string)
  default = {
    api-1 = "10.0.1.10"
  }
}

resource "aws_lb_target_group" "api" {
  name        = "${var.name}-api"
  port        = 8443
  protocol    = "HTTPS"
  target_type = "ip"
  vpc_id      = var.vpc_id
}

resource "aws_lb_target_group_attachment" "api" {
  for_each = var.targets

  target_group_arn = aws_lb_target_group.api.arn
  target_id        = each.value
  port             = 8443
}
"#;

const TG_ARN: &str =
    "arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/shop-api/0123456789abcdef";

fn targets_state() -> Value {
    let mut attachment = resource(
        "aws_lb_target_group_attachment",
        "api",
        json!({"id": format!("{TG_ARN}-20261101000000000000000001"), "target_group_arn": TG_ARN,
               "target_id": "10.0.1.10", "port": 8443, "availability_zone": ""}),
    );
    attachment["instances"][0]["index_key"] = json!("api-1");
    state(vec![
        resource(
            "aws_lb_target_group",
            "api",
            json!({"id": TG_ARN, "arn": TG_ARN, "name": "shop-api", "port": 8443,
                   "protocol": "HTTPS", "target_type": "ip", "vpc_id": "vpc-0a1b2c3d"}),
        ),
        attachment,
    ])
}

#[test]
fn each_registered_target_gets_its_own_id_port_and_zone() {
    let register = call(
        "elasticloadbalancing.amazonaws.com",
        "RegisterTargets",
        5,
        json!({"targetGroupArn": TG_ARN, "targets": [
            {"id": "10.0.1.15", "port": 8443},
            {"id": "192.168.7.20", "port": 9443, "availabilityZone": "all"}
        ]}),
        Value::Null,
    );
    let (code, doc, _dir) = reconcile(&[("lb.tf", TARGETS_TF)], targets_state(), vec![register]);
    assert_eq!(code, 2, "{doc}");
    let lines = added(&doc);
    let blocks: Vec<&[String]> = lines
        .split(|l| l.starts_with("resource ") || l.starts_with("import {"))
        .filter(|b| b.iter().any(|l| l.starts_with("target_id")))
        .collect();
    assert_eq!(blocks.len(), 2, "{lines:#?}");
    let has = |block: &[String], line: &str| block.iter().any(|l| l == line);
    let first = blocks
        .iter()
        .find(|b| has(b, "target_id = \"10.0.1.15\""))
        .unwrap_or_else(|| panic!("{lines:#?}"));
    assert!(has(first, "port = 8443"), "{first:#?}");
    assert!(
        !first.iter().any(|l| l.starts_with("availability_zone")),
        "{first:#?}"
    );
    let second = blocks
        .iter()
        .find(|b| has(b, "target_id = \"192.168.7.20\""))
        .unwrap_or_else(|| panic!("{lines:#?}"));
    assert!(has(second, "port = 9443"), "{second:#?}");
    assert!(has(second, "availability_zone = \"all\""), "{second:#?}");
    for block in [first, second] {
        assert!(
            has(block, "target_group_arn = aws_lb_target_group.api.arn"),
            "{block:#?}"
        );
    }
}

/// The provider cannot import target group attachments ("resource
/// aws_lb_target_group_attachment doesn't support import", terraform 1.11 and the provider
/// 5.100.0): a registered target is declared by a resource block alone, the report says the
/// next apply registers it again, and the plan check expects that create.
#[test]
fn a_registered_target_is_declared_without_an_import_block() {
    let register = call(
        "elasticloadbalancing.amazonaws.com",
        "RegisterTargets",
        5,
        json!({"targetGroupArn": TG_ARN, "targets": [{"id": "10.0.1.15", "port": 9443}]}),
        Value::Null,
    );
    let (code, doc, _dir) = reconcile(
        &[("lb.tf", TARGETS_TF)],
        targets_state(),
        vec![register.clone()],
    );
    assert_eq!(code, 2, "{doc}");
    let name = "lb_target_group_attachment_arn_aws_elasticloadbalancing_eu_west_1_123456789012_targetgroup_shop_api_0123456789abcdef_10_0_1_15";
    let address = format!("aws_lb_target_group_attachment.{name}");
    assert_eq!(
        added(&doc),
        [
            String::new(),
            format!("resource \"aws_lb_target_group_attachment\" \"{name}\" {{"),
            "target_group_arn = aws_lb_target_group.api.arn".to_owned(),
            "target_id = \"10.0.1.15\"".to_owned(),
            "port = 9443".to_owned(),
            "}".to_owned(),
        ],
        "{doc:#}"
    );
    let steps = doc["plan"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{doc:#}");
    assert_eq!(steps[0]["tool"], "add_resource", "{doc:#}");
    let warning = steps[0]["warning"].as_str().unwrap_or_default();
    let apply = format!(
        "the next terraform apply creates {address} again, repeating the call that made it (elbv2:RegisterTargets)"
    );
    assert!(
        warning.contains("the AWS provider cannot import aws_lb_target_group_attachment")
            && warning.contains(&apply),
        "{warning}"
    );
    assert_eq!(
        doc["plan"]["not_imported"][0]["address"], address,
        "{doc:#}"
    );
    let check = doc["validations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["validator"] == "plan-check")
        .unwrap_or_else(|| panic!("{doc:#}"));
    assert_eq!(check["passed"], true, "{check:#}");
    // A second run over the same call on the patched code has nothing to write.
    let patched = format!(
        "{TARGETS_TF}\nresource \"aws_lb_target_group_attachment\" \"{name}\" {{\n  target_group_arn = aws_lb_target_group.api.arn\n  target_id        = \"10.0.1.15\"\n  port             = 9443\n}}\n"
    );
    let (code, doc, _dir) = reconcile(&[("lb.tf", &patched)], targets_state(), vec![register]);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["diff"], "", "{doc:#}");
    let settled = doc["plan"]["settled"][0]["reason"]
        .as_str()
        .unwrap_or_default();
    assert!(
        settled.starts_with(&format!("already in the code: {address} declares")),
        "{doc:#}"
    );
}

const VPC_TF: &str = r#"variable "name" {
  type    = string
  default = "shop"
}

variable "dhcp_options_domain_name" {
  description = "The DHCP options' domain name."
  type        = string
  default     = "shop.internal"
}

resource "aws_vpc" "this" {
  cidr_block           = "10.0.0.0/16"
  enable_dns_hostnames = true

  tags = {
    Name = var.name
  }
}

resource "aws_vpc_dhcp_options" "this" {
  domain_name         = var.dhcp_options_domain_name
  domain_name_servers = ["AmazonProvidedDNS"]

  tags = {
    Name = var.name
  }
}

resource "aws_vpc_dhcp_options_association" "this" {
  vpc_id          = aws_vpc.this.id
  dhcp_options_id = aws_vpc_dhcp_options.this.id
}
"#;

fn vpc_state() -> Value {
    state(vec![
        resource(
            "aws_vpc",
            "this",
            json!({"id": "vpc-0a1b2c3d", "arn": "arn:aws:ec2:eu-west-1:123456789012:vpc/vpc-0a1b2c3d",
                   "cidr_block": "10.0.0.0/16", "enable_dns_hostnames": true,
                   "dhcp_options_id": "dopt-0f1e2d3c", "tags": {"Name": "shop"},
                   "tags_all": {"Name": "shop"}}),
        ),
        resource(
            "aws_vpc_dhcp_options",
            "this",
            json!({"id": "dopt-0f1e2d3c",
                   "arn": "arn:aws:ec2:eu-west-1:123456789012:dhcp-options/dopt-0f1e2d3c",
                   "domain_name": "shop.internal", "domain_name_servers": ["AmazonProvidedDNS"],
                   "tags": {"Name": "shop"}, "tags_all": {"Name": "shop"}}),
        ),
        resource(
            "aws_vpc_dhcp_options_association",
            "this",
            json!({"id": "dopt-0f1e2d3c-vpc-0a1b2c3d", "vpc_id": "vpc-0a1b2c3d",
                   "dhcp_options_id": "dopt-0f1e2d3c"}),
        ),
    ])
}

#[test]
fn a_vpc_put_back_on_the_default_dhcp_options_changes_its_one_association() {
    let associate = call(
        "ec2.amazonaws.com",
        "AssociateDhcpOptions",
        5,
        json!({"dhcpOptionsId": "default", "vpcId": "vpc-0a1b2c3d"}),
        json!({"_return": true, "requestId": "r-5"}),
    );
    let (code, doc, _dir) = reconcile(&[("main.tf", VPC_TF)], vpc_state(), vec![associate]);
    assert_eq!(code, 2, "{doc}");
    let diff = doc["diff"].as_str().unwrap();
    assert!(
        diff.contains(
            "-  dhcp_options_id = aws_vpc_dhcp_options.this.id\n+  dhcp_options_id = \"default\"\n"
        ),
        "{diff}"
    );
    assert!(
        !diff.contains("+resource \"aws_vpc_dhcp_options_association\""),
        "{diff}"
    );
    assert!(!diff.contains("import {"), "{diff}");
}

const LAUNCH_TEMPLATE_TF: &str = r#"variable "instance_type" {
  description = "Instance type of the app servers."
  type        = string
  default     = "t3.large"
}

resource "aws_launch_template" "app" {
  name                   = "shop-app"
  image_id               = "ami-0123456789abcdef0"
  instance_type          = var.instance_type
  update_default_version = true

  metadata_options {
    http_tokens = "required"
  }
}
"#;

fn launch_template_state() -> Value {
    state(vec![resource(
        "aws_launch_template",
        "app",
        json!({"id": "lt-0abc1234def567890",
               "arn": "arn:aws:ec2:eu-west-1:123456789012:launch-template/lt-0abc1234def567890",
               "name": "shop-app", "image_id": "ami-0123456789abcdef0", "instance_type": "t3.large",
               "default_version": 3, "latest_version": 3, "update_default_version": true,
               "metadata_options": [{"http_tokens": "required"}]}),
    )])
}

/// A `ModifyLaunchTemplate` making `version` the default, the template's latest being `latest`.
fn set_default(minute: u32, version: u32, latest: u32) -> Value {
    call(
        "ec2.amazonaws.com",
        "ModifyLaunchTemplate",
        minute,
        json!({"ModifyLaunchTemplateRequest": {"LaunchTemplateId": "lt-0abc1234def567890",
                                               "SetDefaultVersion": version.to_string()}}),
        json!({"ModifyLaunchTemplateResponse": {"launchTemplate": {
            "launchTemplateId": "lt-0abc1234def567890", "launchTemplateName": "shop-app",
            "defaultVersionNumber": version, "latestVersionNumber": latest}}}),
    )
}

#[test]
fn the_latest_version_made_the_default_needs_no_default_version_beside_update_default_version() {
    let new_version = call(
        "ec2.amazonaws.com",
        "CreateLaunchTemplateVersion",
        4,
        json!({"CreateLaunchTemplateVersionRequest": {"LaunchTemplateId": "lt-0abc1234def567890",
               "SourceVersion": "3", "LaunchTemplateData": {"InstanceType": "t3.xlarge"}}}),
        json!({"CreateLaunchTemplateVersionResponse": {"launchTemplateVersion": {
            "launchTemplateId": "lt-0abc1234def567890", "launchTemplateName": "shop-app",
            "versionNumber": 4, "defaultVersion": false}}}),
    );
    let (code, doc, _dir) = reconcile(
        &[("main.tf", LAUNCH_TEMPLATE_TF)],
        launch_template_state(),
        vec![new_version, set_default(6, 4, 4)],
    );
    assert_eq!(code, 2, "{doc}");
    let diff = doc["diff"].as_str().unwrap();
    assert!(diff.contains("+  default     = \"t3.xlarge\""), "{diff}");
    assert!(!diff.contains("default_version"), "{diff}");
    assert!(!diff.contains("latest_version"), "{diff}");
    assert!(
        doc["plan"]["unplanned"].as_array().unwrap().is_empty(),
        "{}",
        doc["plan"]
    );
}

#[test]
fn an_older_version_made_the_default_is_held_where_the_code_follows_the_latest() {
    let (code, doc, _dir) = reconcile(
        &[("main.tf", LAUNCH_TEMPLATE_TF)],
        launch_template_state(),
        vec![set_default(6, 2, 3)],
    );
    assert_eq!(code, 3, "{doc}");
    assert_eq!(doc["diff"].as_str().unwrap_or_default(), "", "{doc}");
    let reasons: Vec<&str> = doc["plan"]["unplanned"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|u| u["reason"].as_str())
        .collect();
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("update_default_version") && r.contains("default_version")),
        "{reasons:?}"
    );
}

const BUCKET_TF: &str = r#"resource "aws_s3_bucket" "media" {
  bucket = "acme-media"
}

resource "aws_s3_bucket_ownership_controls" "media" {
  bucket = aws_s3_bucket.media.id

  rule {
    object_ownership = "BucketOwnerPreferred"
  }
}

resource "aws_s3_bucket_acl" "media" {
  bucket = aws_s3_bucket.media.id
  acl    = "private"

  depends_on = [aws_s3_bucket_ownership_controls.media]
}
"#;

fn bucket_state() -> Value {
    let owner = "ac1721bfba39cad4586200d587bb45ab9164e7d0a20c7e28bb13b9276865aefb";
    state(vec![
        resource(
            "aws_s3_bucket",
            "media",
            json!({"id": "acme-media", "arn": "arn:aws:s3:::acme-media", "bucket": "acme-media"}),
        ),
        resource(
            "aws_s3_bucket_ownership_controls",
            "media",
            json!({"id": "acme-media", "bucket": "acme-media",
                   "rule": [{"object_ownership": "BucketOwnerPreferred"}]}),
        ),
        resource(
            "aws_s3_bucket_acl",
            "media",
            json!({"id": "acme-media,private", "bucket": "acme-media", "acl": "private",
                   "expected_bucket_owner": "",
                   "access_control_policy": [{
                       "grant": [{"grantee": [{"id": owner, "type": "CanonicalUser",
                                               "display_name": "", "email_address": "", "uri": ""}],
                                  "permission": "FULL_CONTROL"}],
                       "owner": [{"id": owner, "display_name": ""}]}]}),
        ),
    ])
}

#[test]
fn a_public_canned_acl_is_held_on_the_managed_acl() {
    let put = call(
        "s3.amazonaws.com",
        "PutBucketAcl",
        5,
        json!({"bucketName": "acme-media", "Host": "acme-media.s3.amazonaws.com", "acl": "",
               "x-amz-acl": ["public-read"]}),
        Value::Null,
    );
    let (code, doc, _dir) = reconcile(&[("main.tf", BUCKET_TF)], bucket_state(), vec![put]);
    assert_eq!(code, 3, "{doc}");
    assert_eq!(doc["diff"].as_str().unwrap_or_default(), "", "{doc}");
    let held: Vec<String> = doc["intents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| {
            let deltas = d["intent"]["deltas"].as_array().unwrap();
            let rulings = d["rulings"].as_array().unwrap();
            deltas.iter().zip(rulings).flat_map(|(delta, rulings)| {
                rulings
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|r| r["decision"] == "flag")
                    .map(move |r| format!("{} {}", delta["address"], r["part"]))
            })
        })
        .collect();
    // The bucket's one ACL is the managed one (the provider's id is `bucket,acl`), not a new
    // resource; the provider reads `acl` from that id, so Terraform sees the change in the
    // grants of `access_control_policy`, held beside the `acl` a person would write.
    assert_eq!(
        held,
        [
            "\"aws_s3_bucket_acl.media\" {\"part\":\"attribute\",\"name\":\"access_control_policy\"}",
            "\"aws_s3_bucket_acl.media\" {\"part\":\"attribute\",\"name\":\"acl\"}"
        ],
        "{doc}"
    );
}

#[test]
fn a_canned_acl_absorbed_is_written_as_acl_and_its_grants_left_to_the_provider() {
    let put = call(
        "s3.amazonaws.com",
        "PutBucketAcl",
        5,
        json!({"bucketName": "acme-media", "Host": "acme-media.s3.amazonaws.com", "acl": "",
               "x-amz-acl": ["log-delivery-write"]}),
        Value::Null,
    );
    let (code, doc, _dir) = reconcile(&[("main.tf", BUCKET_TF)], bucket_state(), vec![put]);
    assert_eq!(code, 2, "{doc}");
    let diff = doc["diff"].as_str().unwrap();
    assert!(
        diff.contains("-  acl    = \"private\"\n+  acl    = \"log-delivery-write\"\n"),
        "{diff}"
    );
    assert!(!diff.contains("access_control_policy"), "{diff}");
    let settled: Vec<&str> = doc["plan"]["settled"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["reason"].as_str())
        .collect();
    assert_eq!(
        settled,
        [
            "the provider reads access_control_policy from AWS where the code sets acl instead: nothing to write of its own"
        ],
        "{doc}"
    );
}
