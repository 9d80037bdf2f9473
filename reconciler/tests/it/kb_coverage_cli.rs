//! End-to-end: `retrace kb coverage` through the binary, for the bundled ranking and for a
//! small project, as a table and as JSON.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

const PROJECT: &str = r#"
resource "aws_vpc" "main" {
  cidr_block = "10.0.0.0/16"
}

resource "aws_route" "internet" {
  route_table_id         = "rtb-0a1b2c3d"
  destination_cidr_block = "0.0.0.0/0"
  gateway_id             = "igw-0a1b2c3d"
}

resource "aws_ecs_capacity_provider" "spot" {
  name = "spot"
  auto_scaling_group_provider {
    auto_scaling_group_arn = "arn:aws:autoscaling:eu-west-1:123456789012:autoScalingGroup:1a2b:autoScalingGroupName/spot"
  }
}

resource "aws_eks_cluster" "main" {
  name     = "main"
  role_arn = "arn:aws:iam::123456789012:role/eks"
  vpc_config {
    subnet_ids = ["subnet-0a1b2c3d", "subnet-1a2b3c4d"]
  }
}

resource "aws_sfn_state_machine" "jobs" {
  count      = 2
  name       = "jobs-${count.index}"
  role_arn   = "arn:aws:iam::123456789012:role/sfn"
  definition = "{}"
}

resource "random_id" "suffix" {
  byte_length = 4
}
"#;

fn retrace(args: &[&str]) -> (i32, String, String) {
    let kb = tempfile::tempdir().expect("temp dir");
    let output = Command::new(env!("CARGO_BIN_EXE_retrace"))
        .env_remove("RETRACE_KB")
        .arg("--kb")
        .arg(kb.path().join("kb.sqlite"))
        .args(args)
        .output()
        .expect("runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("main.tf"), PROJECT).expect("write");
    dir
}

fn json(args: &[&str]) -> Value {
    let (code, out, err) = retrace(args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).expect("json")
}

fn entry<'a>(report: &'a Value, resource_type: &str) -> &'a Value {
    report["coverage"]
        .as_array()
        .expect("entries")
        .iter()
        .find(|e| e["type"] == resource_type)
        .unwrap_or_else(|| panic!("no {resource_type}"))
}

#[test]
fn the_ranking_report_lists_the_top_types_by_rank() {
    let report = json(&["kb", "coverage", "--format", "json"]);
    assert_eq!(report["types"], 100);
    assert!(
        report["covered"].as_u64().expect("count") >= 81,
        "{}",
        report["covered"]
    );
    let ranks: Vec<u64> = report["coverage"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["rank"].as_u64().expect("rank"))
        .collect();
    assert_eq!(ranks, (1..=100).collect::<Vec<u64>>());
    let top = json(&["kb", "coverage", "--top", "3", "--format", "json"]);
    assert_eq!(top["types"], 3);
}

#[test]
fn a_project_report_names_the_rules_and_what_is_missing() {
    let dir = project();
    let path = dir.path().to_str().expect("utf-8");
    let report = json(&["kb", "coverage", "--project", path, "--format", "json"]);
    assert_eq!(report["types"], 5, "random_id is not an AWS type");
    assert_eq!(report["covered"], 4);

    let eks = entry(&report, "aws_eks_cluster");
    assert_eq!(eks["covered"], true);
    assert_eq!(
        eks["apis"]["create"],
        serde_json::json!(["eks:CreateCluster"])
    );
    assert_eq!(
        eks["apis"]["change"],
        serde_json::json!(["eks:UpdateClusterConfig", "eks:UpdateClusterVersion"])
    );
    assert_eq!(
        eks["apis"]["delete"],
        serde_json::json!(["eks:DeleteCluster"])
    );
    assert_eq!(
        eks["apis"]["tags"],
        serde_json::json!(["eks:TagResource", "eks:UntagResource"])
    );

    // Routes held as `aws_route` resources are made by the table's route rules: a route
    // added for a destination the table routes already replaces that route's target.
    let route = entry(&report, "aws_route");
    assert_eq!(route["covered"], true);
    assert_eq!(
        route["apis"]["create"],
        serde_json::json!(["ec2:CreateRoute", "ec2:ReplaceRoute"])
    );
    assert_eq!(
        route["apis"]["change"],
        serde_json::json!(["ec2:CreateRoute", "ec2:ReplaceRoute"])
    );
    assert_eq!(
        route["apis"]["delete"],
        serde_json::json!(["ec2:DeleteRoute"])
    );

    let capacity = entry(&report, "aws_ecs_capacity_provider");
    assert_eq!(capacity["covered"], false);
    assert_eq!(
        capacity["missing"],
        serde_json::json!(["create", "change", "delete", "tags"]),
        "no rule reads the capacity provider APIs"
    );

    let sfn = entry(&report, "aws_sfn_state_machine");
    assert_eq!(sfn["instances"], 2);
    assert_eq!(sfn["covered"], true);
    assert_eq!(
        sfn["apis"]["change"],
        serde_json::json!(["sfn:UpdateStateMachine"])
    );
    assert_eq!(
        sfn["apis"]["tags"],
        serde_json::json!(["sfn:TagResource", "sfn:UntagResource"])
    );

    let order: Vec<&str> = report["coverage"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["type"].as_str().expect("type"))
        .collect();
    assert_eq!(
        order,
        [
            "aws_route",
            "aws_vpc",
            "aws_eks_cluster",
            "aws_ecs_capacity_provider",
            "aws_sfn_state_machine"
        ],
        "by rank: 9, 27, 99, 113, 137"
    );
}

#[test]
fn the_project_table() {
    let dir = project();
    let path = dir.path().to_str().expect("utf-8");
    let (code, out, err) = retrace(&["kb", "coverage", "--project", path]);
    assert_eq!(code, 0, "{err}");
    let out = out.replace(path, "PROJECT");
    insta::assert_snapshot!(out);
}

#[test]
fn a_missing_project_is_an_error() {
    let (code, _, err) = retrace(&["kb", "coverage", "--project", "/no/such/dir"]);
    assert_eq!(code, 1);
    assert!(err.contains("loading the project /no/such/dir"), "{err}");
    assert!(!Path::new("/no/such/dir").exists());
}
