//! The shipped rule files: they load, cover enough of AWS, and name only real Terraform
//! resource types and attribute paths (checked against the bundled provider schema).

use knowledge::{ProviderSchema, RuleSet};

fn rules() -> &'static RuleSet {
    RuleSet::bundled().expect("the shipped rules load")
}

#[test]
fn coverage_is_at_least_385_apis_over_24_services() {
    let rules = rules();
    let services = rules.services();
    eprintln!(
        "{} rules over {} services: {services:?}",
        rules.len(),
        services.len()
    );
    assert!(rules.len() >= 385, "only {} rules", rules.len());
    assert!(services.len() >= 24, "only {} services", services.len());
}

#[test]
fn every_rule_names_real_types_and_attributes() {
    let schema = ProviderSchema::bundled().expect("schema loads");
    let problems = rules().check_schema(schema);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_directory_loads_the_same_rules() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let loaded = RuleSet::load_dir(&dir).expect("directory loads");
    assert_eq!(loaded.len(), rules().len());
    assert!(loaded.iter().eq(rules().iter()));
}

#[test]
fn every_service_has_a_distinct_event_source() {
    let mut seen = std::collections::BTreeMap::new();
    for rule in rules().iter() {
        let previous = seen.insert(rule.service.as_str(), rule.event_source.as_str());
        assert!(
            previous.is_none_or(|p| p == rule.event_source),
            "{} has two event sources",
            rule.service
        );
    }
}

#[test]
fn id_prefixes_find_types() {
    assert_eq!(
        rules().id_prefix_types("sg-0abc"),
        ["aws_security_group", "aws_default_security_group"]
    );
    assert_eq!(rules().id_prefix_types("subnet-1"), ["aws_subnet"]);
    assert_eq!(rules().id_prefix_types("eipalloc-9"), ["aws_eip"]);
    assert!(rules().id_prefix_types("ami-1").is_empty());
    assert_eq!(
        rules().id_prefix_types("sgr-0abc"),
        [
            "aws_vpc_security_group_ingress_rule",
            "aws_vpc_security_group_egress_rule"
        ]
    );
}

#[test]
fn a_bad_directory_is_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("bad.toml"),
        "service = \"x\"\nevent_source = \"x.amazonaws.com\"\n[[rule]]\napi = \"A\"\nkind = \"zap\"\n",
    )
    .expect("write");
    let err = RuleSet::load_dir(dir.path())
        .expect_err("rejected")
        .to_string();
    assert!(
        err.contains("bad.toml:5: rule A: unknown variant `zap`"),
        "{err}"
    );
    let err = RuleSet::load_dir(&dir.path().join("missing"))
        .expect_err("rejected")
        .to_string();
    assert!(err.contains("missing: cannot read"), "{err}");
}

#[test]
fn a_second_rule_for_one_api_is_rejected() {
    let text = "service = \"x\"\nevent_source = \"x.amazonaws.com\"\n[[rule]]\napi = \"A\"\nresource = \"aws_vpc\"\nkind = \"delete\"\nrisk = \"low\"\nsummary = \"s\"\nidentity = [{ path = \"id\" }]\n";
    let err = RuleSet::from_texts([("one.toml", text), ("two.toml", text)])
        .expect_err("rejected")
        .to_string();
    assert_eq!(
        err,
        "two.toml: rule x:A is defined twice (also in one.toml)"
    );
}

#[test]
fn fields_of_set_blocks_are_checked() {
    let schema = ProviderSchema::bundled().expect("schema loads");
    let text = "service = \"x\"\nevent_source = \"x.amazonaws.com\"\n[[rule]]\napi = \"A\"\nresource = \"aws_ecs_cluster\"\nkind = \"update\"\nrisk = \"low\"\nsummary = \"s\"\nidentity = [{ path = \"id\" }]\nset = [{ attribute = \"setting.value\", path = \"v\" }, { attribute = \"setting.level\", path = \"l\" }]\n";
    let rules = RuleSet::from_texts([("x.toml", text)]).expect("loads");
    assert_eq!(
        rules.check_schema(schema),
        vec!["x:A: aws_ecs_cluster: no attribute setting.level"]
    );
}
