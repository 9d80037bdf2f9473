//! `retrace check-config` on roots written the way public modules write them: it reports
//! only what Terraform itself cannot know before apply. Each expectation was checked by
//! hand against `terraform plan -refresh=false` (Terraform 1.11, AWS provider 5.100.0) on
//! the same files.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};

use crate::common;

/// A provider block as the roots' examples write it (a region, nothing else).
const PROVIDER: &str = "provider \"aws\" {\n  region = \"us-east-1\"\n}\n";

/// `retrace check-config --project DIR [--state STATE] --format json`.
fn check_with(dir: &Path, state: Option<&Path>) -> (Option<i32>, serde_json::Value) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_retrace"));
    command.args(["check-config", "--project"]).arg(dir);
    if let Some(state) = state {
        command.arg("--state").arg(state);
    }
    let output: Output = command
        .args(["--format", "json"])
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    (output.status.code(), common::json(&output))
}

/// `retrace check-config --project DIR --format json`.
fn check(dir: &Path) -> (Option<i32>, serde_json::Value) {
    check_with(dir, None)
}

/// The diagnostics' `subject: message` lines.
fn diagnostics(doc: &serde_json::Value) -> Vec<String> {
    doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{}: {}",
                d["subject"].as_str().unwrap(),
                d["message"].as_str().unwrap()
            )
        })
        .collect()
}

/// Users made by `count`, whose configured names key other resources' `for_each`, directly,
/// through a local and through a module argument (Terraform plans all nine instances).
const USERS: &str = r#"
variable "user_names" {
  type    = list(string)
  default = ["alice", "bob"]
}

resource "aws_iam_user" "this" {
  count = length(var.user_names)
  name  = var.user_names[count.index]
}

resource "aws_iam_group" "ops" {
  name = "ops"
}

locals {
  user_names = aws_iam_user.this[*].name
}

resource "aws_iam_user_group_membership" "this" {
  for_each = toset(local.user_names)
  user     = each.value
  groups   = [aws_iam_group.ops.name]
}

module "groups" {
  source = "./modules/grp"
  users  = aws_iam_user.this[*].name
  group  = aws_iam_group.ops.name
}
"#;

/// The module the root above calls.
const GROUP_MODULE: &str = r#"
variable "users" {
  type = list(string)
}

variable "group" {
  type = string
}

resource "aws_iam_group_membership" "this" {
  for_each = toset(var.users)
  name     = "m-${each.key}"
  users    = [each.value]
  group    = var.group
}
"#;

#[test]
fn configured_arguments_of_planned_resources_are_known() {
    let main = format!("{PROVIDER}{USERS}");
    let dir = common::scratch(&[("main.tf", &main), ("modules/grp/main.tf", GROUP_MODULE)]);
    let (code, doc) = check(dir.path());
    assert_eq!(diagnostics(&doc), Vec::<String>::new());
    assert_eq!(code, Some(0));
    // 2 users, 1 group, 2 memberships in the root and 2 in the module.
    assert_eq!(doc["resources"], 7, "{doc}");
}

#[test]
fn computed_attributes_of_planned_resources_stay_unknown() {
    // Terraform: "Invalid for_each argument" (the ARNs are known only after apply).
    let by_arn = r#"
resource "aws_iam_user_policy_attachment" "by_arn" {
  for_each   = toset(aws_iam_user.this[*].arn)
  user       = "x"
  policy_arn = each.value
}
"#;
    let main = format!("{PROVIDER}{USERS}{by_arn}");
    let dir = common::scratch(&[("main.tf", &main), ("modules/grp/main.tf", GROUP_MODULE)]);
    let (code, doc) = check(dir.path());
    assert_eq!(
        diagnostics(&doc),
        vec![
            "aws_iam_user_policy_attachment.by_arn: for_each is not known until apply; no instances"
                .to_string()
        ]
    );
    assert_eq!(code, Some(3));
}

/// A registry module (Cloud Posse's label, as their examples call it) that `terraform init`
/// has not installed, whose outputs a resource's `count` and `bucket` read. Terraform: "Module
/// not installed", nothing about the bucket.
const LABEL_NOT_INSTALLED: &str = r#"
module "label" {
  source  = "cloudposse/label/null"
  version = "0.25.0"

  namespace = "eg"
  name      = "app"
}

resource "aws_s3_bucket" "this" {
  count  = module.label.enabled ? 1 : 0
  bucket = module.label.id
}
"#;

#[test]
fn a_module_not_installed_is_reported_once() {
    let main = format!("{PROVIDER}{LABEL_NOT_INSTALLED}");
    let dir = common::scratch(&[("main.tf", &main)]);
    let (code, doc) = check(dir.path());
    let found = diagnostics(&doc);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("module.label: "), "{found:?}");
    assert!(found[0].contains("cloudposse/label/null"), "{found:?}");
    assert!(found[0].contains("not installed"), "{found:?}");
    assert!(found[0].contains("terraform init"), "{found:?}");
    assert_eq!(code, Some(3));
}

/// Two subnets in the first two zones a data source lists, through a local, as the VPC
/// examples write it. Terraform reads the data source while planning ("Reading...").
const SUBNETS: &str = r#"
data "aws_availability_zones" "available" {
  state = "available"
}

locals {
  azs = slice(data.aws_availability_zones.available.names, 0, 2)
}

resource "aws_subnet" "private" {
  count             = length(local.azs)
  vpc_id            = "vpc-12345678"
  availability_zone = local.azs[count.index]
  cidr_block        = cidrsubnet("10.0.0.0/16", 8, count.index)
}
"#;

/// A state that holds the data source read in `us-east-1`.
const ZONES_STATE: &str = r#"{
  "version": 4,
  "terraform_version": "1.11.4",
  "serial": 1,
  "lineage": "3f1c1b4e-0000-4000-8000-000000000001",
  "outputs": {},
  "resources": [
    {
      "mode": "data",
      "type": "aws_availability_zones",
      "name": "available",
      "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
      "instances": [
        {
          "schema_version": 0,
          "attributes": {
            "id": "us-east-1",
            "names": ["us-east-1a", "us-east-1b", "us-east-1c"],
            "state": "available"
          }
        }
      ]
    }
  ]
}
"#;

#[test]
fn a_data_source_without_state_is_read_at_plan_time_not_apply() {
    let main = format!("{PROVIDER}{SUBNETS}");
    let dir = common::scratch(&[("main.tf", &main), ("zones.tfstate", ZONES_STATE)]);
    let (code, doc) = check(dir.path());
    let found = diagnostics(&doc);
    assert_eq!(found.len(), 1, "{found:?}");
    let message = &found[0];
    assert!(message.starts_with("aws_subnet.private: "), "{message}");
    assert!(
        message.contains("data.aws_availability_zones.available"),
        "{message}"
    );
    assert!(message.contains("plan time"), "{message}");
    assert!(message.contains("--state"), "{message}");
    assert!(!message.contains("until apply"), "{message}");
    assert_eq!(code, Some(3));

    // With a state that read it: two subnets, nothing left unknown.
    let (code, doc) = check_with(dir.path(), Some(&dir.path().join("zones.tfstate")));
    assert_eq!(diagnostics(&doc), Vec::<String>::new());
    assert_eq!(doc["resources"], 2, "{doc}");
    assert_eq!(code, Some(0));
}

/// Queues configured by a map whose entries repeat a key, one item per line and with commas,
/// as the ALB examples' target groups repeat `port`. Terraform keeps the last item: `jobs`
/// keeps 180 s, `mail` a delay of 10, so `copies` has 180 / 60 + 10 / 10 = 4 instances.
const REPEATED_KEYS: &str = r#"
locals {
  queues = {
    jobs = {
      retention = 60
      delay     = 5
      retention = 180
    }
    mail = { retention = 60, delay = 0, delay = 10 }
  }
}

resource "aws_sqs_queue" "this" {
  for_each                  = local.queues
  name                      = each.key
  message_retention_seconds = each.value.retention
  delay_seconds             = each.value.delay
}

resource "aws_sqs_queue" "copies" {
  count = local.queues.jobs.retention / 60 + local.queues.mail.delay / 10
  name  = "copy-${count.index}"
}
"#;

#[test]
fn a_repeated_object_key_keeps_its_last_value() {
    let main = format!("{PROVIDER}{REPEATED_KEYS}");
    let dir = common::scratch(&[("main.tf", &main)]);
    let (code, doc) = check(dir.path());
    assert_eq!(diagnostics(&doc), Vec::<String>::new());
    assert_eq!(code, Some(0));
    // 2 queues by the map and 4 copies.
    assert_eq!(doc["resources"], 6, "{doc}");
}

/// Two policy documents with `dynamic "statement"` blocks: one over the accounts other than
/// the caller's (a data source Terraform reads while planning), one present only when a queue's
/// ARN is not null (the ARN is known only after apply: Terraform reads that document "during
/// apply").
const DYNAMIC_STATEMENTS: &str = r#"
data "aws_caller_identity" "current" {}

locals {
  readers = {
    "111111111111" = "audit"
    "222222222222" = "backup"
  }
}

data "aws_iam_policy_document" "read" {
  dynamic "statement" {
    for_each = { for account, team in local.readers : account => team if account != data.aws_caller_identity.current.account_id }
    content {
      sid       = statement.value
      actions   = ["s3:GetObject"]
      resources = ["arn:aws:s3:::reports/*"]
      principals {
        type        = "AWS"
        identifiers = ["arn:aws:iam::${statement.key}:root"]
      }
    }
  }
}

resource "aws_sqs_queue" "dlq" {
  name = "dlq"
}

data "aws_iam_policy_document" "dlq" {
  dynamic "statement" {
    for_each = aws_sqs_queue.dlq.arn == null ? [] : [1]
    content {
      actions   = ["sqs:SendMessage"]
      resources = [aws_sqs_queue.dlq.arn]
    }
  }
}
"#;

/// A state that holds the caller's identity.
const CALLER_STATE: &str = r#"{
  "version": 4,
  "terraform_version": "1.11.4",
  "serial": 1,
  "lineage": "3f1c1b4e-0000-4000-8000-000000000002",
  "outputs": {},
  "resources": [
    {
      "mode": "data",
      "type": "aws_caller_identity",
      "name": "current",
      "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
      "instances": [
        {
          "schema_version": 0,
          "attributes": {
            "id": "111111111111",
            "account_id": "111111111111",
            "arn": "arn:aws:iam::111111111111:user/ci",
            "user_id": "AIDAEXAMPLE"
          }
        }
      ]
    }
  ]
}
"#;

#[test]
fn a_dynamic_block_over_a_data_source_is_known_at_plan_time() {
    let main = format!("{PROVIDER}{DYNAMIC_STATEMENTS}");
    let dir = common::scratch(&[("main.tf", &main), ("caller.tfstate", CALLER_STATE)]);
    let until_apply = "data.aws_iam_policy_document.dlq dynamic \"statement\": for_each is not \
                       known until apply; the blocks are left out";
    let (code, doc) = check(dir.path());
    let found = diagnostics(&doc);
    assert_eq!(found.len(), 2, "{found:?}");
    let read = &found[0];
    assert!(
        read.starts_with("data.aws_iam_policy_document.read dynamic \"statement\": "),
        "{read}"
    );
    assert!(read.contains("data.aws_caller_identity.current"), "{read}");
    assert!(read.contains("plan time"), "{read}");
    assert!(read.contains("--state"), "{read}");
    assert!(!read.contains("until apply"), "{read}");
    assert!(read.ends_with("; the blocks are left out"), "{read}");
    assert_eq!(found[1], until_apply);
    assert_eq!(code, Some(3));

    // With a state that read it, only the queue's document waits for apply.
    let (code, doc) = check_with(dir.path(), Some(&dir.path().join("caller.tfstate")));
    assert_eq!(diagnostics(&doc), vec![until_apply.to_string()]);
    assert_eq!(code, Some(3));
}

/// The region set from a local, as the terraform-aws-modules examples write it, and a log
/// bucket's policy statement for the region's ELB account picked by `data.aws_region`, as
/// their S3 module writes it. Terraform reads `aws_region` and `aws_partition` offline while
/// planning ("Read complete ... [id=eu-west-1]") and plans one bucket policy.
const REGION_FROM_LOCAL: &str = r#"
provider "aws" {
  region = local.region
}

locals {
  region = "eu-west-1"
  log_accounts = {
    us-east-1 = "127311923021"
    eu-west-1 = "156460612806"
  }
  here = { for region, account in local.log_accounts : region => account if region == data.aws_region.current.name }
}

data "aws_region" "current" {}

data "aws_partition" "current" {}

data "aws_iam_policy_document" "logs" {
  dynamic "statement" {
    for_each = local.here
    content {
      actions   = ["s3:PutObject"]
      resources = ["arn:${data.aws_partition.current.partition}:s3:::logs/*"]
      principals {
        type        = "AWS"
        identifiers = ["arn:${data.aws_partition.current.partition}:iam::${statement.value}:root"]
      }
    }
  }
}

resource "aws_s3_bucket_policy" "logs" {
  count  = length(local.here)
  bucket = "logs"
  policy = data.aws_iam_policy_document.logs.json
}
"#;

#[test]
fn a_provider_region_set_from_a_local_is_known() {
    let dir = common::scratch(&[("main.tf", REGION_FROM_LOCAL)]);
    let (code, doc) = check(dir.path());
    assert_eq!(diagnostics(&doc), Vec::<String>::new());
    assert_eq!(code, Some(0));
    assert_eq!(doc["resources"], 1, "{doc}");
    assert_eq!(doc["data_sources"], 3, "{doc}");
}
