//! Snapshot tests of the HCL edit tools on the files under `fixtures/hcl/`.
//!
//! Every edit is checked three ways: the snapshot of its unified diff (reviewed by eye), the
//! edited files parse again, and — when `terraform` is on PATH — `terraform fmt -check` accepts
//! them unchanged.

use reconciler::synthesize::edit::{EditError, Files, ToolResult, run_tool, tools};
use std::path::Path;
use std::process::Command;

fn fixture_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/hcl")
}

fn fixtures() -> Files {
    let mut files = Files::new();
    for entry in std::fs::read_dir(fixture_dir()).expect("fixtures/hcl") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("name")
            .to_owned();
        files.insert(name, std::fs::read_to_string(&path).expect("read fixture"));
    }
    files
}

/// Runs a tool on the fixtures and checks every changed file; returns the diffs.
fn edit(tool: &str, input: serde_json::Value) -> String {
    let files = fixtures();
    let result =
        run_tool(tool, &input.to_string(), &files).unwrap_or_else(|e| panic!("{tool}: {e}"));
    check(&result);
    diffs(&files, &result)
}

fn refuse(tool: &str, input: serde_json::Value) -> EditError {
    match run_tool(tool, &input.to_string(), &fixtures()) {
        Ok(result) => panic!(
            "{tool} should have refused, changed {:?}",
            result.files.keys()
        ),
        Err(e) => e,
    }
}

fn check(result: &ToolResult) {
    assert!(
        !result.files.is_empty(),
        "nothing changed: {}",
        result.summary
    );
    for (path, text) in &result.files {
        hcl::edit::parser::parse_body(text)
            .unwrap_or_else(|e| panic!("{path} does not parse: {e}\n{text}"));
        fmt_check(path, text);
    }
}

/// Asserts `terraform fmt` would leave `text` as it is; skipped when terraform is absent.
pub fn fmt_check(path: &str, text: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join(path), text).expect("write");
    let output = Command::new("terraform")
        .arg("fmt")
        .arg("-check")
        .arg("-diff")
        .arg(dir.path())
        .output();
    match output {
        Err(_) => eprintln!("note: terraform not on PATH; skipped the fmt check of {path}"),
        Ok(out) => assert!(
            out.status.success(),
            "terraform fmt would change {path}:\n{}",
            String::from_utf8_lossy(&out.stdout)
        ),
    }
}

fn diffs(before: &Files, result: &ToolResult) -> String {
    let mut out = format!("# {}\n", result.summary);
    for (path, after) in &result.files {
        let old = before.get(path).map(String::as_str).unwrap_or("");
        let diff = similar::TextDiff::from_lines(old, after.as_str());
        let unified = diff
            .unified_diff()
            .context_radius(3)
            .header(path, path)
            .to_string();
        out.push_str(&unified.replace('\r', "␍"));
    }
    out
}

fn web() -> serde_json::Value {
    serde_json::json!({"block_type": "resource", "labels": ["aws_instance", "web"]})
}

fn sg() -> serde_json::Value {
    serde_json::json!({"block_type": "resource", "labels": ["aws_security_group", "web"]})
}

#[test]
fn registry_lists_every_tool() {
    let names: Vec<&str> = tools().iter().map(|t| t.name).collect();
    insta::assert_debug_snapshot!(names);
}

#[test]
fn registry_schemas_are_pinned() {
    // Derived from the input types: a change to an input changes what a model is told.
    insta::assert_json_snapshot!(tools());
}

#[test]
fn set_attribute_replaces_a_value_and_realigns() {
    let input = serde_json::json!({"target": web(), "name": "instance_type", "value": "m5.xlarge"});
    insta::assert_snapshot!(edit("set_attribute", input));
}

#[test]
fn set_attribute_adds_a_longer_key_to_a_run() {
    let input =
        serde_json::json!({"target": web(), "name": "associate_public_ip_address", "value": true});
    insta::assert_snapshot!(edit("set_attribute", input));
}

#[test]
fn set_attribute_in_a_nested_block() {
    let mut target = web();
    target["path"] = serde_json::json!([{"block": "root_block_device"}]);
    let input = serde_json::json!({"target": target, "name": "iops", "value": 3000});
    insta::assert_snapshot!(edit("set_attribute", input));
}

#[test]
fn set_attribute_renders_maps_and_escapes_templates() {
    let input = serde_json::json!({
        "target": web(),
        "name": "metadata_options",
        "value": {"http_tokens": "required", "note": "use ${var} literally", "hop_limit": 2}
    });
    insta::assert_snapshot!(edit("set_attribute", input));
}

#[test]
fn set_attribute_on_a_crlf_file_stays_crlf() {
    let target =
        serde_json::json!({"block_type": "resource", "labels": ["aws_sqs_queue", "orders"]});
    let input = serde_json::json!({"target": target, "name": "delay_seconds", "value": 5});
    let out = edit("set_attribute", input);
    assert!(
        !out.lines()
            .skip(1)
            .any(|l| l.starts_with('+') && !l.starts_with("+++") && !l.ends_with('␍'))
    );
    insta::assert_snapshot!(out);
}

#[test]
fn set_attribute_joins_the_run_before_it() {
    let target = serde_json::json!({"block_type": "resource", "labels": ["aws_s3_bucket", "logs"]});
    let input = serde_json::json!({"target": target, "name": "force_destroy", "value": false});
    insta::assert_snapshot!(edit("set_attribute", input));
}

#[test]
fn remove_attribute_realigns_the_rest() {
    let input = serde_json::json!({"target": web(), "name": "vpc_security_group_ids"});
    insta::assert_snapshot!(edit("remove_attribute", input));
}

#[test]
fn add_block_goes_after_its_siblings() {
    let input = serde_json::json!({"target": sg(), "block": {
        "block": "ingress",
        "attributes": {"from_port": 8443, "to_port": 8443, "protocol": "tcp", "cidr_blocks": ["10.0.0.0/8"], "description": "Alt HTTPS"}
    }});
    insta::assert_snapshot!(edit("add_block", input));
}

#[test]
fn remove_block_by_content_takes_its_comment() {
    let input =
        serde_json::json!({"target": sg(), "block": "ingress", "match": {"from_port": 443}});
    insta::assert_snapshot!(edit("remove_block", input));
}

#[test]
fn replace_block_by_content() {
    let input = serde_json::json!({"target": sg(), "block": "ingress", "match": {"from_port": "80"}, "with": {
        "block": "ingress",
        "attributes": {"from_port": 80, "to_port": 80, "protocol": "tcp", "cidr_blocks": ["10.0.0.0/8", "192.168.0.0/16"]}
    }});
    insta::assert_snapshot!(edit("replace_block", input));
}

#[test]
fn set_tags_merges_keeping_order_and_comments() {
    let input = serde_json::json!({"target": web(), "tags": {"Environment": "production", "CostCenter": "cc-42"}, "remove": ["Name"]});
    insta::assert_snapshot!(edit("set_tags", input));
}

#[test]
fn set_tags_goes_into_the_literal_map_of_merge() {
    let input =
        serde_json::json!({"target": sg(), "tags": {"Name": "web-public", "Owner": "web-team"}});
    insta::assert_snapshot!(edit("set_tags", input));
}

#[test]
fn update_block_edits_a_replaced_rule_in_place() {
    let input = serde_json::json!({
        "target": sg(),
        "block": "ingress",
        "match": {"from_port": 443},
        "attributes": {"from_port": 8443, "to_port": 8443, "protocol": "tcp", "cidr_blocks": ["10.0.0.0/8"], "description": "Alt HTTPS"},
        "drop_comments": true
    });
    insta::assert_snapshot!(edit("update_block", input));
}

#[test]
fn set_collection_entry_in_a_local_map() {
    let input = serde_json::json!({"file": "main.tf", "in": {"kind": "local", "name": "common_tags"}, "path": ["Service"], "value": "web-api"});
    insta::assert_snapshot!(edit("set_collection_entry", input));
}

#[test]
fn add_collection_entry_to_a_tfvars_list_and_a_commented_default() {
    let tfvar = serde_json::json!({"file": "terraform.tfvars", "in": {"kind": "tfvar", "name": "admin_ports"}, "value": 443});
    let default = serde_json::json!({"file": "variables.tf", "in": {"kind": "variable_default", "name": "admin_cidrs"}, "value": "192.168.0.0/16"});
    insta::assert_snapshot!(format!(
        "{}{}",
        edit("add_collection_entry", tfvar),
        edit("add_collection_entry", default)
    ));
}

#[test]
fn set_tags_replace_mode_drops_other_keys() {
    let input = serde_json::json!({"target": web(), "mode": "replace", "tags": {"Environment": "staging", "Owner": "alice"}});
    insta::assert_snapshot!(edit("set_tags", input));
}

#[test]
fn set_tags_rewrites_a_one_line_map() {
    let target = serde_json::json!({"block_type": "resource", "labels": ["aws_s3_bucket", "logs"]});
    let input = serde_json::json!({"target": target, "tags": {"Retention": "90d"}});
    insta::assert_snapshot!(edit("set_tags", input));
}

#[test]
fn set_tags_adds_a_missing_map() {
    let target =
        serde_json::json!({"block_type": "resource", "labels": ["aws_sns_topic", "events"]});
    let input = serde_json::json!({"target": target, "tags": {"Team": "orders", "kubernetes.io/role": "x"}});
    insta::assert_snapshot!(edit("set_tags", input));
}

#[test]
fn import_resource_appends_resource_and_import() {
    let input = serde_json::json!({
        "file": "main.tf", "resource_type": "aws_s3_bucket", "name": "reports", "id": "example-reports",
        "attributes": {"bucket": "example-reports", "tags": {"Team": "data"}},
        "blocks": [{"block": "lifecycle", "attributes": {"prevent_destroy": true}}]
    });
    insta::assert_snapshot!(edit("import_resource", input));
}

/// The same block as `import_resource` writes, worked out by hand, and no import block.
#[test]
fn add_resource_appends_the_resource_alone() {
    let input = serde_json::json!({
        "file": "main.tf", "resource_type": "aws_lb_target_group_attachment", "name": "api_3",
        "attributes": {"target_group_arn": "arn:tg", "target_id": "10.0.1.15", "port": 9443}
    });
    let out = edit("add_resource", input);
    let added: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .collect();
    assert_eq!(
        added,
        [
            "+",
            "+resource \"aws_lb_target_group_attachment\" \"api_3\" {",
            "+  target_group_arn = \"arn:tg\"",
            "+  target_id        = \"10.0.1.15\"",
            "+  port             = 9443",
            "+}",
        ],
        "{out}"
    );
    assert!(
        out.starts_with(
            "# added resource aws_lb_target_group_attachment.api_3 to main.tf, with no import block"
        ),
        "{out}"
    );
}

#[test]
fn remove_resource_outright() {
    let target =
        serde_json::json!({"block_type": "resource", "labels": ["aws_security_group", "admin"]});
    insta::assert_snapshot!(edit(
        "remove_resource",
        serde_json::json!({"target": target})
    ));
}

#[test]
fn remove_resource_keeping_it_in_state() {
    let input = serde_json::json!({"target": web(), "keep_in_state": true});
    insta::assert_snapshot!(edit("remove_resource", input));
}

#[test]
fn ignore_changes_creates_lifecycle() {
    let input =
        serde_json::json!({"target": web(), "attributes": ["tags[\"Environment\"]", "user_data"]});
    insta::assert_snapshot!(edit("ignore_changes", input));
}

#[test]
fn ignore_changes_adds_to_an_existing_lifecycle() {
    let target =
        serde_json::json!({"block_type": "resource", "labels": ["aws_security_group", "admin"]});
    let input = serde_json::json!({"target": target, "attributes": ["ingress", "description"]});
    insta::assert_snapshot!(edit("ignore_changes", input));
}

#[test]
fn set_variable_default_replaces_and_adds() {
    let input =
        serde_json::json!({"name": "admin_cidrs", "value": ["10.0.0.0/8", "172.16.0.0/12"]});
    insta::assert_snapshot!(
        "set_variable_default_replaces",
        edit("set_variable_default", input)
    );
    let input = serde_json::json!({"name": "vpc_id", "value": "vpc-0abc"});
    insta::assert_snapshot!(
        "set_variable_default_adds",
        edit("set_variable_default", input)
    );
}

#[test]
fn set_tfvar_replaces_and_appends() {
    let input = serde_json::json!({"file": "terraform.tfvars", "name": "vpc_id", "value": "vpc-0fedcba9876543210"});
    insta::assert_snapshot!("set_tfvar_replaces", edit("set_tfvar", input));
    let input = serde_json::json!({"file": "terraform.tfvars", "name": "admin_cidrs", "value": ["10.1.0.0/16"]});
    insta::assert_snapshot!("set_tfvar_appends", edit("set_tfvar", input));
}

#[test]
fn set_module_argument_in_an_aligned_run() {
    let input = serde_json::json!({"module": "vpc", "name": "enable_dns_hostnames", "value": true});
    insta::assert_snapshot!(
        "set_module_argument_adds",
        edit("set_module_argument", input)
    );
    let input = serde_json::json!({"module": "queue", "name": "name", "value": "orders-v2"});
    insta::assert_snapshot!(
        "set_module_argument_replaces",
        edit("set_module_argument", input)
    );
}

#[test]
fn edits_in_dynamic_block_content() {
    let target = serde_json::json!({"block_type": "resource", "labels": ["aws_security_group", "admin"], "path": [
        {"block": "dynamic", "labels": ["ingress"]}, {"block": "content"}
    ]});
    let input = serde_json::json!({"target": target, "name": "description", "value": "admin port ${ingress.value}"});
    insta::assert_snapshot!(edit("set_attribute", input));
}

#[test]
fn unchanged_values_change_nothing() {
    let input = serde_json::json!({"target": web(), "name": "monitoring", "value": false});
    let result = run_tool("set_attribute", &input.to_string(), &fixtures()).expect("runs");
    assert!(result.files.is_empty(), "{:?}", result.files.keys());
    assert!(result.summary.starts_with("no change"));
}

#[test]
fn refusals_name_file_block_and_path() {
    let errors = [
        refuse(
            "set_attribute",
            serde_json::json!({"target": {"block_type": "resource", "labels": ["aws_instance", "api"]}, "name": "a", "value": 1}),
        ),
        refuse(
            "remove_block",
            serde_json::json!({"target": sg(), "block": "ingress", "match": {"protocol": "tcp"}}),
        ),
        refuse(
            "remove_block",
            serde_json::json!({"target": sg(), "block": "ingress", "match": {"from_port": 22}}),
        ),
        refuse(
            "update_block",
            serde_json::json!({"target": sg(), "block": "ingress", "match": {"protocol": "tcp"}, "attributes": {}}),
        ),
        refuse(
            "set_collection_entry",
            serde_json::json!({"file": "main.tf", "in": {"kind": "local", "name": "common_tags"}, "path": ["Team", "x"], "value": 1}),
        ),
        refuse(
            "remove_attribute",
            serde_json::json!({"target": web(), "name": "key_name"}),
        ),
        refuse(
            "ignore_changes",
            serde_json::json!({"target": web(), "attributes": ["tags ++"]}),
        ),
        refuse(
            "set_attribute",
            serde_json::json!({"target": web(), "name": "bad name", "value": 1}),
        ),
        refuse(
            "set_attribute",
            serde_json::json!({"target": web(), "nme": "x", "value": 1}),
        ),
        refuse(
            "remove_resource",
            serde_json::json!({"target": {"block_type": "data", "labels": ["aws_ami", "ubuntu"]}}),
        ),
        refuse(
            "import_resource",
            serde_json::json!({"file": "main.tf", "resource_type": "aws_instance", "name": "web", "id": "i-1"}),
        ),
        refuse("no_such_tool", serde_json::json!({})),
    ];
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    insta::assert_debug_snapshot!(messages);
}

fn log_group() -> serde_json::Value {
    serde_json::json!({"block_type": "resource", "labels": ["aws_cloudwatch_log_group", "app"]})
}

#[test]
fn set_attribute_expands_a_one_line_block() {
    let mut target = log_group();
    target["path"] = serde_json::json!([{"block": "lifecycle"}]);
    let input =
        serde_json::json!({"target": target, "name": "create_before_destroy", "value": true});
    insta::assert_snapshot!(edit("set_attribute", input));
}

#[test]
fn ignore_changes_expands_a_one_line_lifecycle() {
    let input = serde_json::json!({"target": log_group(), "attributes": ["tags"]});
    insta::assert_snapshot!(edit("ignore_changes", input));
}

#[test]
fn ignore_changes_extends_a_multi_line_list_without_duplicates() {
    let target = serde_json::json!({"block_type": "resource", "labels": ["aws_s3_bucket", "logs"]});
    let input = serde_json::json!({"target": target, "attributes": ["tags[\"CreatedBy\"]", "tags[\"Owner\"]"]});
    insta::assert_snapshot!(edit("ignore_changes", input));
}

#[test]
fn set_attribute_replaces_a_heredoc() {
    let input = serde_json::json!({"target": web(), "name": "user_data", "value": "#!/bin/bash\necho hi\n"});
    insta::assert_snapshot!(edit("set_attribute", input));
}

#[test]
fn remove_attribute_from_a_one_line_block_leaves_it_empty() {
    let mut target = log_group();
    target["path"] = serde_json::json!([{"block": "lifecycle"}]);
    let input = serde_json::json!({"target": target, "name": "prevent_destroy"});
    insta::assert_snapshot!(edit("remove_attribute", input));
}

/// A nested block for one instance of a `for_each` block: a `dynamic` block selecting its key,
/// the other instances getting none; a second one for the same instance is refused.
#[test]
fn add_block_for_one_instance_selects_its_key() {
    let logs = serde_json::json!({"file": "main.tf", "block_type": "resource", "labels": ["aws_s3_bucket", "logs"]});
    let input = serde_json::json!({"target": logs, "instance": "audit", "block": {
        "block": "logging",
        "attributes": {"target_bucket": "example-audit-archive", "target_prefix": "audit/"}
    }});
    insta::assert_snapshot!(edit("add_block", input.clone()));
    let once = run_tool("add_block", &input.to_string(), &fixtures()).expect("added");
    let again = run_tool("add_block", &input.to_string(), &once.files)
        .expect_err("a second block for the same instance is refused");
    assert!(
        again
            .to_string()
            .contains("a `dynamic \"logging\"` block for each.key \"audit\" is there already"),
        "{again}"
    );
}

/// One instance of a `for_each` block gets its own value: the expression is wrapped in a
/// lookup by `each.key`, a second instance joins the same map, and an argument the block does
/// not set defaults to null for the others.
#[test]
fn set_attribute_for_one_instance_looks_it_up_by_its_key() {
    let before = fixtures();
    let logs = serde_json::json!({"file": "main.tf", "block_type": "resource", "labels": ["aws_s3_bucket", "logs"]});
    let inputs = [
        serde_json::json!({"target": logs, "name": "bucket", "value": "example-audit-archive", "instance": "audit"}),
        serde_json::json!({"target": logs, "name": "bucket", "value": "example-access-logs-v2", "instance": "access"}),
        serde_json::json!({"target": logs, "name": "force_destroy", "value": true, "instance": "audit"}),
    ];
    let mut files = before.clone();
    for input in inputs {
        let result = run_tool("set_attribute", &input.to_string(), &files)
            .unwrap_or_else(|e| panic!("{input}: {e}"));
        check(&result);
        files.extend(result.files);
    }
    let changed = files
        .into_iter()
        .filter(|(path, text)| before.get(path) != Some(text))
        .collect();
    let result = ToolResult {
        files: changed,
        summary: String::new(),
    };
    insta::assert_snapshot!(diffs(&before, &result));
}

#[test]
fn add_collection_entry_to_a_module_argument_then_add_import() {
    let call = serde_json::json!({"file": "modules.tf", "block_type": "module", "labels": ["vpc"]});
    let entry = serde_json::json!({"file": "modules.tf", "in": {"kind": "argument", "target": call, "name": "private_subnets"}, "value": "10.0.3.0/24"});
    let import = serde_json::json!({"file": "modules.tf", "to": "module.vpc.aws_subnet.private[2]", "id": "subnet-0abc"});
    insta::assert_snapshot!(format!(
        "{}{}",
        edit("add_collection_entry", entry),
        edit("add_import", import)
    ));
}

#[test]
fn add_import_refuses_what_is_not_an_instance_address() {
    let input = serde_json::json!({"file": "modules.tf", "to": "module.vpc\n}\nresource \"x\" \"y\" {", "id": "subnet-0abc"});
    let error = refuse("add_import", input).to_string();
    assert!(
        error.contains("is not a resource instance address"),
        "{error}"
    );
}
