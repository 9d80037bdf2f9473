//! How far the shipped rules cover the most used resource types (the bundled ranking), and how
//! a rule counts towards a type's coverage.

use knowledge::catalog::Catalog;
use knowledge::coverage::{Part, bundled_ranking, coverage, parts_of};
use knowledge::{ProviderSchema, RuleSet};

fn schema() -> &'static ProviderSchema {
    ProviderSchema::bundled().expect("schema loads")
}

#[test]
fn at_least_90_of_the_100_most_used_types_are_covered() {
    let rules = RuleSet::bundled().expect("rules load");
    let ranking = bundled_ranking().expect("ranking loads");
    assert!(
        ranking.len() >= 100,
        "the ranking holds {} types",
        ranking.len()
    );
    let mut covered = 0;
    for ranked in &ranking[..100] {
        let c = coverage(&ranked.resource_type, rules, Catalog::bundled(), schema());
        if c.is_covered() {
            covered += 1;
        } else {
            eprintln!(
                "#{} {}: no rule to {:?}",
                ranked.rank, ranked.resource_type, c.missing
            );
        }
    }
    assert!(
        covered >= 90,
        "only {covered} of the top 100 types are covered"
    );
}

#[test]
fn a_configuration_call_that_creates_a_missing_resource_covers_create_and_change() {
    let rules = RuleSet::bundled().expect("rules load");
    let rule = rules
        .find("s3.amazonaws.com", "PutBucketVersioning")
        .expect("rule");
    assert_eq!(parts_of(rule), vec![Part::Create, Part::Change]);
    let c = coverage(
        "aws_s3_bucket_versioning",
        rules,
        Catalog::bundled(),
        schema(),
    );
    assert_eq!(
        c.needed,
        vec![Part::Create, Part::Change],
        "AWS cannot remove versioning"
    );
    assert!(c.is_covered());
}

#[test]
fn separate_security_group_rules_are_created_by_the_groups_block_rules() {
    let rules = RuleSet::bundled().expect("rules load");
    let c = coverage(
        "aws_vpc_security_group_ingress_rule",
        rules,
        Catalog::bundled(),
        schema(),
    );
    assert_eq!(
        c.apis_for(Part::Create),
        ["ec2:AuthorizeSecurityGroupIngress"]
    );
    assert_eq!(c.apis_for(Part::Delete), ["ec2:RevokeSecurityGroupIngress"]);
    assert_eq!(c.apis_for(Part::Change), ["ec2:ModifySecurityGroupRules"]);
    assert_eq!(c.apis_for(Part::Tags), ["ec2:CreateTags", "ec2:DeleteTags"]);
    assert!(c.is_covered());
}

#[test]
fn a_type_terraform_adopts_needs_no_create_or_delete() {
    let rules = RuleSet::bundled().expect("rules load");
    let c = coverage(
        "aws_default_security_group",
        rules,
        Catalog::bundled(),
        schema(),
    );
    assert_eq!(c.needed, vec![Part::Change, Part::Tags]);
    assert!(
        c.apis_for(Part::Change)
            .contains(&"ec2:AuthorizeSecurityGroupIngress".to_owned())
    );
    assert!(c.is_covered());
    let vpc = coverage("aws_default_vpc", rules, Catalog::bundled(), schema());
    assert_eq!(
        vpc.needed,
        vec![Part::Create, Part::Change, Part::Delete, Part::Tags],
        "a default VPC can be created when none exists, and deleted with force_destroy"
    );
    assert_eq!(vpc.apis_for(Part::Create), ["ec2:CreateDefaultVpc"]);
}

#[test]
fn a_type_without_rules_misses_every_part_it_needs() {
    let text = "service = \"x\"\nevent_source = \"x.amazonaws.com\"\n[[rule]]\napi = \"A\"\nresource = \"aws_vpc\"\nkind = \"delete\"\nrisk = \"low\"\nsummary = \"s\"\nidentity = [{ path = \"id\" }]\n";
    let rules = RuleSet::from_texts([("x.toml", text)]).expect("loads");
    let c = coverage("aws_vpc", &rules, Catalog::bundled(), schema());
    assert_eq!(c.apis_for(Part::Delete), ["x:A"]);
    assert_eq!(c.missing, vec![Part::Create, Part::Change, Part::Tags]);
    assert!(!c.is_covered());
    let unknown = coverage("aws_not_a_type", &rules, Catalog::bundled(), schema());
    assert!(!unknown.in_schema && !unknown.is_covered());
}

#[test]
fn a_policy_held_apart_is_covered_by_the_parents_call_that_sets_it() {
    let rules = RuleSet::bundled().expect("rules load");
    for (companion, rule) in [
        ("aws_sqs_queue_policy", "sqs:SetQueueAttributes"),
        ("aws_sns_topic_policy", "sns:SetTopicAttributes"),
    ] {
        let c = coverage(companion, rules, Catalog::bundled(), schema());
        for part in [Part::Create, Part::Change, Part::Delete] {
            assert!(
                c.apis_for(part).contains(&rule.to_owned()),
                "{companion} {part:?}: {:?}",
                c.apis
            );
        }
        assert!(c.is_covered(), "{companion}: {:?}", c.missing);
    }
}
