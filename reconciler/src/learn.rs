//! Learning: a rule proposed for an API the knowledge base has no rule for, from what an
//! observed state shows the call did.
//!
//! A call is explained when its request names a managed resource that drifted (a request
//! value equal to the resource's id, ARN or natural key, as the state index finds it) and
//! holds the new value of one of the resource's drifted settable attributes (as logged, or
//! through one of the rule format's simple transforms: string, number, bool, case). The
//! proposal is an `update` rule from the call's (eventSource, eventName) to the resource type,
//! with the identity path and one `set` per matched attribute. A sibling parameter that names
//! what is set (a key ending in `name` or `key`, like SNS's `attributeName`) becomes the
//! `set`'s `when` condition. The caller plans and validates with the proposal before keeping
//! it.

use crate::ingest::Call;
use crate::resolve::{Finding, FindingKind};
use crate::terraform::state::{Instance, Mode, State, StateIndex};
use knowledge::rules::{
    Kind, Paths, Risk, Rule, RuleSet, RuleSpec, SetSpec, Transform, ValueSource, When, validate,
};
use knowledge::schema::ProviderSchema;
use knowledge::store::AgentEvidence;
use serde_json::Value;

/// A rule proposed from one or more unexplained calls.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    /// The rule.
    pub rule: Rule,
    /// The calls it explains.
    pub event_ids: Vec<String>,
    /// The resource whose drift explained them.
    pub address: String,
    /// The model and tokens, when the agent found it rather than the drift alone.
    pub agent: Option<AgentEvidence>,
}

/// Transforms tried, in order, to match a request value with a drifted attribute's value.
const TRANSFORMS: &[Transform] = &[
    Transform::Raw,
    Transform::String,
    Transform::Int,
    Transform::Number,
    Transform::Bool,
    Transform::Lower,
    Transform::Upper,
];

/// One drifted attribute of a managed resource.
#[derive(Debug, Clone, PartialEq)]
struct Drift {
    address: String,
    resource_type: String,
    attribute: String,
    value: Value,
}

/// Rules for the unexplained calls that have no rule at all, from the drift between the state
/// of `index` and `observed`; proposals that would not load or do not fit the provider schema
/// are left out.
pub fn propose(
    calls: &[Call],
    findings: &[Finding],
    rules: &RuleSet,
    index: &StateIndex,
    observed: &State,
    schema: &ProviderSchema,
) -> Vec<Proposal> {
    let drifts = drifts(index, observed, schema);
    let mut proposals: Vec<Proposal> = Vec::new();
    let unexplained = findings
        .iter()
        .filter(|f| f.kind == FindingKind::Unexplained);
    for finding in unexplained {
        if rules.find(&finding.event_source, &finding.api).is_some() {
            continue;
        }
        let Some(call) = calls.iter().find(|c| c.event_id == finding.event_id) else {
            continue;
        };
        let Some(proposal) = propose_one(call, &finding.api, rules, &drifts, index) else {
            continue;
        };
        if !fits(&proposal.rule, schema) {
            tracing::debug!(rule = %proposal.rule.id(), "proposed rule does not fit the schema");
            continue;
        }
        tracing::info!(rule = %proposal.rule.id(), address = %proposal.address, "rule proposed");
        // One rule per API: a second call read another way (another attribute of the same
        // API) keeps the first rule, and stays unexplained unless that rule explains it.
        match proposals
            .iter_mut()
            .find(|p| p.rule.id() == proposal.rule.id())
        {
            Some(same) if same.rule == proposal.rule => same.event_ids.extend(proposal.event_ids),
            Some(_) => {
                tracing::debug!(rule = %proposal.rule.id(), "a rule for this API was proposed first")
            }
            None => proposals.push(proposal),
        }
    }
    proposals
}

/// Whether a rule loads and every type and path resolves in the schema.
fn fits(rule: &Rule, schema: &ProviderSchema) -> bool {
    validate(rule).is_ok()
        && RuleSet::from_rules([rule.clone()]).is_ok_and(|set| set.check_schema(schema).is_empty())
}

fn propose_one(
    call: &Call,
    api: &str,
    rules: &RuleSet,
    drifts: &[Drift],
    index: &StateIndex,
) -> Option<Proposal> {
    let request = call.request_parameters.json()?;
    let leaves = leaves(&request);
    let mut addresses: Vec<&str> = drifts.iter().map(|d| d.address.as_str()).collect();
    addresses.dedup();
    for address in addresses {
        let mine: Vec<&Drift> = drifts.iter().filter(|d| d.address == address).collect();
        let resource_type = &mine[0].resource_type;
        let Some(identity) = leaves.iter().find(|(_, value)| {
            value.as_str().is_some_and(|s| {
                index
                    .lookup(Some(resource_type), s)
                    .iter()
                    .any(|i| i.address == address && i.mode == Mode::Managed)
            })
        }) else {
            continue;
        };
        let sets: Vec<SetSpec> = mine
            .iter()
            .filter_map(|drift| set_for(drift, &leaves, &identity.0))
            .collect();
        if sets.is_empty() {
            continue;
        }
        let rule = Rule {
            service: service_of(&call.event_source, rules),
            event_source: call.event_source.clone(),
            id_prefixes: Default::default(),
            spec: RuleSpec {
                api: api.to_owned(),
                variant: None,
                requires: None,
                resource: Some(resource_type.clone()),
                resources: Vec::new(),
                kind: Kind::Update,
                risk: Risk::Medium,
                summary: format!("changed {} (learned)", attribute_list(&sets)),
                identity: vec![ValueSource {
                    from: Default::default(),
                    path: Paths::One(identity.0.clone()),
                    transform: None,
                }],
                separator: None,
                missing: None,
                sets,
                blocks: Vec::new(),
                tags: None,
                flags: Vec::new(),
                delete_unless: None,
                delete_when: None,
                hidden: Vec::new(),
                hold: None,
            },
        };
        return Some(Proposal {
            rule,
            event_ids: vec![call.event_id.clone()],
            address: address.to_owned(),
            agent: None,
        });
    }
    None
}

/// The `set` reading a drifted attribute's new value from the request, when a value other
/// than the identity matches it.
fn set_for(drift: &Drift, leaves: &[(String, Value)], identity: &str) -> Option<SetSpec> {
    for (path, value) in leaves.iter().filter(|(p, _)| p != identity) {
        let Some(transform) = TRANSFORMS
            .iter()
            .find(|t| t.apply_one(value.clone()).is_ok_and(|v| v == drift.value))
        else {
            continue;
        };
        return Some(SetSpec {
            attribute: drift.attribute.clone(),
            from: Default::default(),
            path: Some(Paths::One(path.clone())),
            value: None,
            transform: (*transform != Transform::Raw).then_some(*transform),
            when: naming_sibling(path, leaves, identity),
            members: None,
            each: None,
        });
    }
    None
}

/// A string parameter beside `path` whose key says it names the setting (`attributeName`,
/// `AttributeName`, `ParameterKey`).
fn naming_sibling(path: &str, leaves: &[(String, Value)], identity: &str) -> Option<When> {
    let parent = parent_of(path);
    leaves
        .iter()
        .filter(|(p, v)| p != path && p != identity && v.is_string() && parent_of(p) == parent)
        .find(|(p, _)| {
            let key = p.rsplit('.').next().unwrap_or(p).to_ascii_lowercase();
            key.ends_with("name") || key.ends_with("key")
        })
        .map(|(p, v)| When {
            from: Default::default(),
            path: p.clone(),
            equals: v.clone(),
        })
}

fn parent_of(path: &str) -> &str {
    path.rsplit_once('.').map_or("", |(parent, _)| parent)
}

fn attribute_list(sets: &[SetSpec]) -> String {
    sets.iter()
        .map(|s| s.attribute.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The service name shipped rules use for an event source, else its first label
/// (`sns.amazonaws.com` → `sns`).
pub fn service_of(event_source: &str, rules: &RuleSet) -> String {
    rules
        .iter()
        .find(|r| r.event_source == event_source)
        .map(|r| r.service.clone())
        .unwrap_or_else(|| {
            event_source
                .split('.')
                .next()
                .unwrap_or(event_source)
                .to_owned()
        })
}

/// Every scalar in a request with its dotted path; arrays are not entered, since a rule path
/// through one would iterate.
fn leaves(request: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    walk(request, String::new(), &mut out);
    out
}

fn walk(value: &Value, path: String, out: &mut Vec<(String, Value)>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let child_path = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                walk(child, child_path, out);
            }
        }
        Value::Array(_) | Value::Null => {}
        scalar => out.push((path, scalar.clone())),
    }
}

/// The settable attributes whose values differ between the (indexed) state and the observed
/// state, for
/// managed instances present in both: top-level scalars, and fields of a nested block that
/// holds one object (`metadata_options.http_tokens`).
fn drifts(before: &StateIndex, observed: &State, schema: &ProviderSchema) -> Vec<Drift> {
    let mut out = Vec::new();
    for after in observed
        .instances
        .iter()
        .filter(|i| i.mode == Mode::Managed)
    {
        let Some(old) = before.instance(&after.address) else {
            continue;
        };
        for (attribute, value) in changed(old, after) {
            let settable = schema
                .attribute(&after.resource_type, &attribute)
                .is_some_and(|a| a.presence.is_settable());
            if settable {
                out.push(Drift {
                    address: after.address.clone(),
                    resource_type: after.resource_type.clone(),
                    attribute,
                    value,
                });
            }
        }
    }
    out
}

fn changed(old: &Instance, new: &Instance) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let Some(fields) = new.attributes.as_object() else {
        return out;
    };
    for (name, value) in fields {
        let before = old.attributes.get(name);
        if before == Some(value) {
            continue;
        }
        match (value, before) {
            (Value::Array(items), Some(Value::Array(old_items)))
                if items.len() == 1 && old_items.len() == 1 =>
            {
                if let (Some(inner), Some(old_inner)) =
                    (items[0].as_object(), old_items[0].as_object())
                {
                    for (field, v) in inner {
                        if old_inner.get(field) != Some(v) && is_scalar(v) {
                            out.push((format!("{name}.{field}"), v.clone()));
                        }
                    }
                }
            }
            (v, _) if is_scalar(v) => out.push((name.clone(), v.clone())),
            _ => {}
        }
    }
    out
}

fn is_scalar(value: &Value) -> bool {
    matches!(value, Value::String(_) | Value::Number(_) | Value::Bool(_))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn leaves_skip_arrays_and_nulls() {
        let request = json!({"a": {"b": "x", "c": [1]}, "d": 2, "e": null});
        assert_eq!(
            leaves(&request),
            vec![("a.b".to_owned(), json!("x")), ("d".to_owned(), json!(2))]
        );
    }

    #[test]
    fn a_string_matches_a_bool_through_the_bool_transform() {
        let drift = Drift {
            address: "aws_sns_topic_subscription.s".into(),
            resource_type: "aws_sns_topic_subscription".into(),
            attribute: "raw_message_delivery".into(),
            value: json!(true),
        };
        let leaves = leaves(&json!({
            "subscriptionArn": "arn:aws:sns:us-east-1:1:t:abc",
            "attributeName": "RawMessageDelivery",
            "attributeValue": "true"
        }));
        let set = set_for(&drift, &leaves, "subscriptionArn").expect("matches");
        assert_eq!(set.path, Some(Paths::One("attributeValue".into())));
        assert_eq!(set.transform, Some(Transform::Bool));
        let when = set.when.expect("named by attributeName");
        assert_eq!(when.path, "attributeName");
        assert_eq!(when.equals, json!("RawMessageDelivery"));
    }

    #[test]
    fn numbers_and_case_match_through_transforms() {
        let drift = |value| Drift {
            address: "a.b".into(),
            resource_type: "t".into(),
            attribute: "x".into(),
            value,
        };
        let leaves = leaves(&json!({"id": "r-1", "size": "120", "mode": "STANDARD"}));
        let size = set_for(&drift(json!(120)), &leaves, "id").expect("number");
        assert_eq!(size.transform, Some(Transform::Int));
        let mode = set_for(&drift(json!("standard")), &leaves, "id").expect("case");
        assert_eq!(mode.transform, Some(Transform::Lower));
        // The identity itself never explains a value, and a value nothing equals is no match.
        assert!(set_for(&drift(json!("r-1")), &leaves, "id").is_none());
        assert!(set_for(&drift(json!(7)), &leaves, "id").is_none());
    }

    fn instance_state(instance_type: &str, tokens: &str, arn: &str) -> State {
        let doc = json!({
            "version": 4, "terraform_version": "1.9.8", "serial": 1, "lineage": "l",
            "outputs": {},
            "resources": [{
                "mode": "managed", "type": "aws_instance", "name": "web",
                "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
                "instances": [{"schema_version": 1, "attributes": {
                    "id": "i-0abc", "arn": arn, "instance_type": instance_type,
                    "metadata_options": [{"http_tokens": tokens, "http_endpoint": "enabled"}]
                }}]
            }]
        });
        State::parse(doc.to_string().as_bytes(), "test").expect("state")
    }

    #[test]
    fn drift_covers_settable_scalars_and_single_nested_blocks_only() {
        let schema = ProviderSchema::bundled().expect("schema");
        let before = instance_state("t3.small", "optional", "arn:aws:ec2:r:1:instance/i-0abc");
        // `arn` is computed only: a change to it is not drift the code could absorb.
        let after = instance_state("t3.large", "required", "arn:aws:ec2:r:1:instance/other");
        let found = drifts(&StateIndex::new(before), &after, schema);
        let pairs: Vec<(&str, &Value)> = found
            .iter()
            .map(|d| (d.attribute.as_str(), &d.value))
            .collect();
        assert_eq!(
            pairs,
            vec![
                ("instance_type", &json!("t3.large")),
                ("metadata_options.http_tokens", &json!("required")),
            ]
        );
        assert!(found.iter().all(|d| d.address == "aws_instance.web"));
    }

    #[test]
    fn service_names_follow_shipped_rules() {
        let rules = RuleSet::bundled().expect("rules");
        assert_eq!(
            service_of("elasticloadbalancing.amazonaws.com", rules),
            "elbv2"
        );
        assert_eq!(service_of("newthing.amazonaws.com", rules), "newthing");
    }
}
