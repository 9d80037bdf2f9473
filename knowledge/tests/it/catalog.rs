//! The bundled resource catalog against the real AWS provider schema and the rules.

use knowledge::catalog::Catalog;
use knowledge::rules::RuleSet;
use knowledge::schema::ProviderSchema;

fn catalog() -> &'static Catalog {
    Catalog::load_bundled().expect("the bundled catalog loads")
}

#[test]
fn every_entry_names_a_real_type_and_real_attributes() {
    let schema = ProviderSchema::bundled().expect("schema");
    let mut wrong = Vec::new();
    for entry in catalog().entries() {
        let ty = &entry.resource_type;
        if schema.resource(ty).is_none() {
            wrong.push(format!("{ty}: not a resource type of the provider"));
            continue;
        }
        let mut attributes: Vec<(&str, &str)> = Vec::new();
        for key in &entry.natural_keys {
            attributes.extend(key.iter().map(|a| (ty.as_str(), a.as_str())));
        }
        if let Some(id) = &entry.composite_id {
            attributes.extend(id.attributes.iter().map(|a| (ty.as_str(), a.as_str())));
        }
        for owned in &entry.automation_owned {
            attributes.push((ty, &owned.attribute));
        }
        for conflict in &entry.conflict {
            attributes.push((ty, &conflict.attribute));
            attributes.push((ty, &conflict.with));
            attributes.extend(conflict.follows.as_deref().map(|f| (ty.as_str(), f)));
        }
        for split in &entry.split {
            attributes.push((ty, &split.block));
            attributes.push((&split.resource, &split.parent));
            if let Some(legacy) = &split.legacy {
                attributes.push((&legacy.resource, &legacy.field));
                attributes.push((&legacy.resource, &split.parent));
            }
        }
        for (owner, attribute) in attributes {
            if schema
                .resource(owner)
                .and_then(|r| r.member(attribute))
                .is_none()
            {
                wrong.push(format!("{owner}.{attribute}: not in the provider schema"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_type_a_rule_touches_or_a_split_makes_has_an_entry() {
    let rules = RuleSet::bundled().expect("rules");
    let mut types: Vec<String> = rules
        .iter()
        .flat_map(|r| r.resource_types())
        .map(str::to_owned)
        .collect();
    for entry in catalog().entries() {
        for split in &entry.split {
            types.push(split.resource.clone());
            types.extend(split.legacy.iter().map(|l| l.resource.clone()));
        }
    }
    let missing: Vec<&String> = types
        .iter()
        .filter(|t| catalog().entry(t).is_none())
        .collect();
    assert!(missing.is_empty(), "no catalog entry for {missing:?}");
}

#[test]
fn the_catalog_holds_what_the_stages_relied_on() {
    let c = catalog();
    assert_eq!(
        c.natural_keys("aws_security_group"),
        [vec!["vpc_id".to_owned(), "name".to_owned()]]
    );
    assert_eq!(
        c.automation_owner("aws_autoscaling_group", "desired_capacity")
            .map(|o| o.owner.as_str()),
        Some("scaling policies and schedules")
    );
    // A scalable target's capacities belong to scheduled actions only where one exists for it.
    let capacity = c
        .automation_owner("aws_appautoscaling_target", "max_capacity")
        .and_then(|o| o.when.as_ref())
        .expect("a condition");
    assert_eq!(capacity.resource, "aws_appautoscaling_scheduled_action");
    assert_eq!(
        capacity.same,
        ["service_namespace", "resource_id", "scalable_dimension"]
    );
    for association in [
        "aws_iam_role_policy_attachment",
        "aws_route_table_association",
        "aws_volume_attachment",
    ] {
        assert!(c.is_association(association), "{association}");
    }
    assert!(!c.is_association("aws_iam_role"));
    let split = c
        .split("aws_security_group", "egress")
        .expect("egress rules split");
    assert_eq!(split.resource, "aws_vpc_security_group_egress_rule");
}
