//! Security group rules the code manages as resources of their own.
//!
//! A security group's rules can be written inline (`ingress`/`egress` blocks of
//! `aws_security_group`) or as separate resources (`aws_vpc_security_group_ingress_rule`,
//! `aws_vpc_security_group_egress_rule`, or the older `aws_security_group_rule`). The provider
//! documentation warns against mixing the two: an inline block would make Terraform own every
//! rule of the group and fight the separate resources. So when the state shows a group's rules
//! of one direction managed as separate resources, an authorised rule becomes a new
//! `aws_vpc_security_group_*_rule` (imported by the `securityGroupRuleId` EC2 returns) and a
//! revoked rule the deletion of the resource that manages it.

use super::effect::{Change, Effect, ResourceKey};
use crate::ingest::Call;
use crate::terraform::state::{Instance, Mode, StateIndex};
use knowledge::catalog::{Catalog, Split};
use serde_json::{Map, Value};

/// The type whose split rules EC2's responses describe (`securityGroupRuleSet`).
const GROUP: &str = "aws_security_group";

/// The effects with inline rule changes on groups whose rules are separate resources turned
/// into creations and deletions of those resources.
pub(super) fn as_rule_resources(
    effects: Vec<Effect>,
    call: &Call,
    state: &StateIndex,
) -> Vec<Effect> {
    let response = call.response_elements.json();
    super::rewrite(effects, |effect| {
        separate_rule_change(effect, response.as_ref(), state).filter(|r| !r.is_empty())
    })
}

/// The replacement of one effect, or `None` when it is not an inline rule change on a group
/// with separate rule resources.
fn separate_rule_change(
    effect: &Effect,
    response: Option<&Value>,
    state: &StateIndex,
) -> Option<Vec<Effect>> {
    if effect.resource.resource_type != GROUP || effect.address.is_none() {
        return None;
    }
    let group = effect.resource.identity.as_str();
    let (block, fields) = match &effect.change {
        Change::AddBlock { block, fields } | Change::RemoveBlock { block, fields } => {
            (block.as_str(), fields)
        }
        _ => return None,
    };
    let split = Catalog::bundled().split(GROUP, block)?;
    let rules = rule_instances(state, group, split);
    if rules.is_empty() {
        return None;
    }
    match &effect.change {
        Change::AddBlock { .. } => Some(created(effect, response?, split)),
        _ => Some(deleted(effect, fields, &rules, split)),
    }
}

/// Inline rules that name their own group as a source, as Terraform writes them: `self =
/// true`. EC2 records a self-referencing rule as a pair naming the group itself; the
/// provider keeps that id out of `security_groups` and sets `self` instead.
pub(super) fn self_references(effects: Vec<Effect>) -> Vec<Effect> {
    super::rewrite(effects, |effect| {
        let inline = [GROUP, "aws_default_security_group"];
        if !inline.contains(&effect.resource.resource_type.as_str()) {
            return None;
        }
        let own = effect.resource.identity.as_str();
        let mut effect = effect.clone();
        let (Change::AddBlock { fields, .. } | Change::RemoveBlock { fields, .. }) =
            &mut effect.change
        else {
            return None;
        };
        let groups = fields.get("security_groups")?.as_array()?;
        if !groups.iter().any(|g| g.as_str() == Some(own)) {
            return None;
        }
        let others: Vec<Value> = groups
            .iter()
            .filter(|g| g.as_str() != Some(own))
            .cloned()
            .collect();
        match others.is_empty() {
            true => fields.remove("security_groups"),
            false => fields.insert("security_groups".to_owned(), Value::Array(others)),
        };
        fields.insert("self".to_owned(), Value::Bool(true));
        Some(vec![effect])
    })
}

/// The effects on a security group rule that the state does not hold as an
/// `aws_vpc_security_group_*_rule` but as an older `aws_security_group_rule` (whose
/// `security_group_rule_id` is the `sgr-` id EC2 gives a rule with a single source) moved onto
/// that resource, with its attribute names: `ModifySecurityGroupRules` names the rule by that
/// id, whichever resource type manages it.
pub(super) fn onto_legacy_rules(effects: Vec<Effect>, state: &StateIndex) -> Vec<Effect> {
    super::rewrite(effects, |effect| {
        let legacy = legacy_rule(effect, state)?;
        Some(
            legacy_changes(&effect.change, legacy)
                .into_iter()
                .map(|change| effect.on_instance(legacy, change))
                .collect(),
        )
    })
}

/// The managed `aws_security_group_rule` holding the unmanaged rule an effect names.
fn legacy_rule<'s>(effect: &Effect, state: &'s StateIndex) -> Option<&'s Instance> {
    let split_types = [
        "aws_vpc_security_group_ingress_rule",
        "aws_vpc_security_group_egress_rule",
    ];
    if effect.address.is_some() || !split_types.contains(&effect.resource.resource_type.as_str()) {
        return None;
    }
    let id = effect.resource.identity.as_str();
    state.iter().find(|i| {
        i.mode == Mode::Managed
            && i.deposed.is_none()
            && i.resource_type == LEGACY
            && i.string_attribute("security_group_rule_id") == Some(id)
    })
}

/// The older resource type that holds one rule per source.
const LEGACY: &str = "aws_security_group_rule";

/// The sources of a rule: the newer type's attribute and the older type's.
const SOURCES: [(&str, &str); 4] = [
    ("cidr_ipv4", "cidr_blocks"),
    ("cidr_ipv6", "ipv6_cidr_blocks"),
    ("prefix_list_id", "prefix_list_ids"),
    ("referenced_security_group_id", "source_security_group_id"),
];

/// A change of an `aws_vpc_security_group_*_rule` attribute as the changes of the older
/// type's: `ip_protocol` is `protocol`, a source is a one-item list (or the source group), and
/// a new source empties the older type's other sources, since the call replaces the rule.
fn legacy_changes(change: &Change, legacy: &Instance) -> Vec<Change> {
    let Change::Set { attribute, value } = change else {
        return vec![change.clone()];
    };
    let Some((_, old_name)) = SOURCES.iter().find(|(new, _)| new == attribute) else {
        let name = if attribute == "ip_protocol" {
            "protocol"
        } else {
            attribute
        };
        return vec![set(name, value.clone())];
    };
    let mut out = vec![match *old_name {
        "source_security_group_id" => set(old_name, value.clone()),
        list => set(list, Value::Array(vec![value.clone()])),
    }];
    for (_, other) in SOURCES.iter().filter(|(_, other)| other != old_name) {
        if !strings(&legacy.attributes[*other]).is_empty() {
            out.push(set(other, Value::Null));
        }
    }
    out
}

fn set(attribute: &str, value: Value) -> Change {
    Change::Set {
        attribute: attribute.to_owned(),
        value,
    }
}

/// The managed separate rule resources of `group` for the split block.
fn rule_instances<'s>(state: &'s StateIndex, group: &str, split: &Split) -> Vec<&'s Instance> {
    state
        .iter()
        .filter(|i| i.mode == Mode::Managed && i.deposed.is_none())
        .filter(|i| i.string_attribute(&split.parent) == Some(group))
        .filter(|i| {
            i.resource_type == split.resource
                || split.legacy.as_ref().is_some_and(|legacy| {
                    i.resource_type == legacy.resource
                        && i.string_attribute(&legacy.field) == Some(split.block.as_str())
                })
        })
        .collect()
}

/// One rule resource per rule EC2 reports in `securityGroupRuleSet`.
fn created(effect: &Effect, response: &Value, split: &Split) -> Vec<Effect> {
    let egress = split.block == "egress";
    let items = response["securityGroupRuleSet"]["items"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    items
        .iter()
        .filter(|item| item["isEgress"].as_bool() == Some(egress))
        .filter_map(|item| {
            let id = item["securityGroupRuleId"].as_str()?;
            let attributes = rule_attributes(&split.parent, &effect.resource.identity, item);
            let open = attributes.iter().any(|(name, value)| {
                name.starts_with("cidr_") && value.as_str().is_some_and(|c| c.ends_with("/0"))
            });
            let mut mentions = effect.mentions.clone();
            mentions.push(effect.resource.identity.clone());
            Some(Effect {
                resource: ResourceKey {
                    resource_type: split.resource.clone(),
                    identity: id.to_owned(),
                },
                address: None,
                change: Change::Create { attributes },
                flags: if open {
                    effect.flags.clone()
                } else {
                    Vec::new()
                },
                mentions,
                allocates: vec![id.to_owned()],
                ..effect.clone()
            })
        })
        .collect()
}

/// The arguments of an `aws_vpc_security_group_*_rule` for one reported rule.
fn rule_attributes(parent: &str, group: &str, item: &Value) -> Vec<(String, Value)> {
    let mut out = vec![(parent.to_owned(), Value::from(group))];
    let protocol = item["ipProtocol"].as_str().unwrap_or("-1");
    out.push(("ip_protocol".to_owned(), Value::from(protocol)));
    if protocol != "-1" {
        for (name, key) in [("from_port", "fromPort"), ("to_port", "toPort")] {
            if let Some(port) = item[key].as_i64() {
                out.push((name.to_owned(), Value::from(port)));
            }
        }
    }
    let sources = [
        ("cidr_ipv4", &item["cidrIpv4"]),
        ("cidr_ipv6", &item["cidrIpv6"]),
        (
            "referenced_security_group_id",
            &item["referencedGroupInfo"]["groupId"],
        ),
        ("prefix_list_id", &item["prefixListId"]),
        ("description", &item["description"]),
    ];
    for (name, value) in sources {
        if let Some(text) = value.as_str() {
            out.push((name.to_owned(), Value::from(text)));
        }
    }
    out
}

/// The deletion of every separate rule resource the revoked block matches; empty when none
/// matches, so the inline change stands.
fn deleted(
    effect: &Effect,
    fields: &Map<String, Value>,
    rules: &[&Instance],
    split: &Split,
) -> Vec<Effect> {
    rules
        .iter()
        .filter(|rule| matches(fields, rule, is_legacy(rule, split)))
        .map(|rule| effect.on_instance(rule, Change::Delete))
        .collect()
}

/// Whether a rule resource is of the split's older type, whose attributes are named
/// differently.
fn is_legacy(rule: &Instance, split: &Split) -> bool {
    split
        .legacy
        .as_ref()
        .is_some_and(|legacy| legacy.resource == rule.resource_type)
}

/// Whether a revoked permission (protocol, ports, sources) covers a rule resource.
fn matches(fields: &Map<String, Value>, rule: &Instance, legacy: bool) -> bool {
    let attributes = &rule.attributes;
    let rule_protocol = attributes[if legacy { "protocol" } else { "ip_protocol" }]
        .as_str()
        .unwrap_or_default();
    let protocol = fields
        .get("protocol")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if protocol_name(protocol) != protocol_name(rule_protocol) {
        return false;
    }
    if protocol_name(protocol) != "-1" {
        let port = |name: &str| fields.get(name).and_then(Value::as_i64);
        if port("from_port") != attributes["from_port"].as_i64()
            || port("to_port") != attributes["to_port"].as_i64()
        {
            return false;
        }
    }
    sources(fields)
        .iter()
        .any(|source| rule_sources(rule, legacy).contains(source))
}

/// The sources a revoked permission names: CIDR ranges, groups and prefix lists.
fn sources(fields: &Map<String, Value>) -> Vec<String> {
    [
        "cidr_blocks",
        "ipv6_cidr_blocks",
        "security_groups",
        "prefix_list_ids",
    ]
    .iter()
    .filter_map(|name| fields.get(*name))
    .flat_map(strings)
    .collect()
}

/// The sources a rule resource allows.
fn rule_sources(rule: &Instance, legacy: bool) -> Vec<String> {
    let names: &[&str] = if legacy {
        &[
            "cidr_blocks",
            "ipv6_cidr_blocks",
            "source_security_group_id",
            "prefix_list_ids",
        ]
    } else {
        &[
            "cidr_ipv4",
            "cidr_ipv6",
            "referenced_security_group_id",
            "prefix_list_id",
        ]
    };
    names
        .iter()
        .flat_map(|name| strings(&rule.attributes[*name]))
        .collect()
}

fn strings(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) if !s.is_empty() => vec![s.clone()],
        Value::Array(items) => items.iter().flat_map(strings).collect(),
        _ => Vec::new(),
    }
}

/// EC2 accepts protocol names or numbers; the common ones are compared by name.
fn protocol_name(protocol: &str) -> &str {
    match protocol {
        "6" => "tcp",
        "17" => "udp",
        "1" => "icmp",
        "58" => "icmpv6",
        "all" => "-1",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(resource_type: &str, attributes: Value) -> Instance {
        let text = json!({"version": 4, "resources": [{"mode": "managed", "type": resource_type,
            "name": "r", "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
            "instances": [{"schema_version": 0, "attributes": attributes}]}]});
        let state =
            crate::terraform::state::State::parse(text.to_string().as_bytes(), "t").expect("state");
        state.instances[0].clone()
    }

    fn fields(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_rule_naming_its_own_group_is_a_self_rule() {
        let revoke = |groups: Value| {
            super::super::testing::effect(
                "RevokeSecurityGroupIngress",
                ("aws_default_security_group", "sg-own"),
                Some("aws_default_security_group.this"),
                Change::RemoveBlock {
                    block: "ingress".to_owned(),
                    fields: fields(json!({"protocol": "-1", "from_port": 0, "to_port": 0,
                                          "security_groups": groups})),
                },
            )
        };
        let fields_of = |effects: Vec<Effect>| match &effects[0].change {
            Change::RemoveBlock { fields, .. } => Value::Object(fields.clone()),
            other => panic!("{other:?}"),
        };
        let own = fields_of(self_references(vec![revoke(json!(["sg-own"]))]));
        assert_eq!(
            own,
            json!({"protocol": "-1", "from_port": 0, "to_port": 0, "self": true})
        );
        let both = fields_of(self_references(vec![revoke(json!(["sg-own", "sg-other"]))]));
        assert_eq!(both["security_groups"], json!(["sg-other"]));
        assert_eq!(both["self"], json!(true));
        let other = fields_of(self_references(vec![revoke(json!(["sg-other"]))]));
        assert_eq!(other.get("self"), None);
    }

    #[test]
    fn a_revoked_cidr_matches_the_rule_resource_that_allows_it() {
        let ssh = rule(
            "aws_vpc_security_group_ingress_rule",
            json!({"id": "sgr-1", "security_group_id": "sg-1", "ip_protocol": "tcp",
                   "from_port": 22, "to_port": 22, "cidr_ipv4": "198.51.100.0/24"}),
        );
        let revoked = fields(json!({"protocol": "6", "from_port": 22, "to_port": 22,
                                    "cidr_blocks": ["198.51.100.0/24"]}));
        assert!(matches(&revoked, &ssh, false));
        let other = fields(json!({"protocol": "tcp", "from_port": 22, "to_port": 22,
                                  "cidr_blocks": ["192.0.2.0/24"]}));
        assert!(!matches(&other, &ssh, false));
        let port = fields(
            json!({"protocol": "tcp", "from_port": 2222, "to_port": 2222,
                                 "cidr_blocks": ["198.51.100.0/24"]}),
        );
        assert!(!matches(&port, &ssh, false));
    }

    #[test]
    fn legacy_rules_match_by_their_own_attribute_names() {
        let legacy = rule(
            "aws_security_group_rule",
            json!({"id": "sgrule-1", "security_group_id": "sg-1", "type": "ingress",
                   "protocol": "-1", "from_port": 0, "to_port": 0,
                   "source_security_group_id": "sg-2"}),
        );
        let revoked = fields(json!({"protocol": "-1", "security_groups": ["sg-2"]}));
        assert!(matches(&revoked, &legacy, true));
    }

    #[test]
    fn a_modified_rule_is_found_in_the_legacy_resource_that_holds_its_id() {
        // The state holds the rule as an aws_security_group_rule with a single source, whose
        // security_group_rule_id is the sgr- id ModifySecurityGroupRules names.
        use crate::resolve::testing;
        let index = testing::index(json!([testing::resource(
            "aws_security_group_rule",
            "https",
            json!({"id": "sgrule-1234", "security_group_rule_id": "sgr-0abc",
                   "security_group_id": "sg-1", "type": "ingress", "protocol": "tcp",
                   "from_port": 443, "to_port": 443, "cidr_blocks": ["10.0.0.0/16"]}),
        )]));
        let effect = |attribute: &str, value: Value| {
            let change = Change::Set {
                attribute: attribute.to_owned(),
                value,
            };
            let rule = ("aws_vpc_security_group_ingress_rule", "sgr-0abc");
            testing::effect("ModifySecurityGroupRules", rule, None, change)
        };
        let moved = onto_legacy_rules(
            vec![
                effect("ip_protocol", json!("tcp")),
                effect("from_port", json!(8443)),
                effect("referenced_security_group_id", json!("sg-2")),
            ],
            &index,
        );
        let changes: Vec<(String, Value)> = moved
            .iter()
            .map(|e| {
                assert_eq!(e.address.as_deref(), Some("aws_security_group_rule.https"));
                assert_eq!(e.resource.identity, "sgrule-1234");
                match &e.change {
                    Change::Set { attribute, value } => (attribute.clone(), value.clone()),
                    other => panic!("not a set: {other:?}"),
                }
            })
            .collect();
        assert_eq!(
            changes,
            vec![
                ("protocol".to_owned(), json!("tcp")),
                ("from_port".to_owned(), json!(8443)),
                ("source_security_group_id".to_owned(), json!("sg-2")),
                ("cidr_blocks".to_owned(), Value::Null),
            ]
        );
        // A rule id the state does not hold stays as it was.
        let mut unknown = effect("from_port", json!(1));
        unknown.resource.identity = "sgr-0def".into();
        let other = onto_legacy_rules(vec![unknown], &index);
        assert_eq!(other[0].address, None);
        assert_eq!(
            other[0].resource.resource_type,
            "aws_vpc_security_group_ingress_rule"
        );
    }

    #[test]
    fn each_reported_rule_becomes_the_arguments_of_a_rule_resource() {
        let item = json!({"securityGroupRuleId": "sgr-9", "isEgress": false, "ipProtocol": "tcp",
                          "fromPort": 443, "toPort": 443, "cidrIpv4": "10.0.0.0/16",
                          "description": "https"});
        let attributes = rule_attributes("security_group_id", "sg-1", &item);
        assert_eq!(
            attributes,
            vec![
                ("security_group_id".to_owned(), json!("sg-1")),
                ("ip_protocol".to_owned(), json!("tcp")),
                ("from_port".to_owned(), json!(443)),
                ("to_port".to_owned(), json!(443)),
                ("cidr_ipv4".to_owned(), json!("10.0.0.0/16")),
                ("description".to_owned(), json!("https")),
            ]
        );
        let all = json!({"securityGroupRuleId": "sgr-8", "isEgress": true, "ipProtocol": "-1",
                         "fromPort": -1, "toPort": -1, "cidrIpv4": "0.0.0.0/0"});
        assert_eq!(rule_attributes("security_group_id", "sg-1", &all).len(), 3);
    }
}
