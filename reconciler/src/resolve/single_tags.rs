//! Tags the code holds one by one.
//!
//! `aws_ec2_tag` (and kin, the catalog's `tag_of`) manages a single tag of a resource by its
//! id, most often a resource Terraform does not manage itself (a subnet of a shared VPC, the
//! security group EKS makes for a cluster). A tag call on that resource then changes the
//! holder of each key the state holds apart: its value set, or the holder deleted when the
//! key is removed. A new key on a resource whose tags the code holds only this way, one by
//! one, becomes a new holder, imported as `<id>,<key>`.

use super::effect::{Change, Effect, ResourceKey};
use crate::terraform::state::{Instance, Mode, StateIndex};
use knowledge::catalog::{Catalog, TagOf};
use serde_json::Value;
use std::collections::BTreeMap;

/// The effects with tag changes moved onto the single-tag resources the state holds for the
/// tagged resource.
pub(super) fn as_single_tags(effects: Vec<Effect>, state: &StateIndex) -> Vec<Effect> {
    super::rewrite(effects, |effect| split(effect, state))
}

/// The tag change of one effect shared between its resource and the holders of its keys, or
/// `None` when the state holds no tag of the resource apart.
fn split(effect: &Effect, state: &StateIndex) -> Option<Vec<Effect>> {
    let Change::Tags {
        set,
        remove,
        replace: false,
    } = &effect.change
    else {
        return None;
    };
    let id = effect.resource.identity.as_str();
    let (holder, holders) = holders(state, id)?;
    let held = |key: &str| {
        holders
            .iter()
            .find(|h| h.string_attribute("key") == Some(key))
    };
    let mut out = Vec::new();
    let mut rest_set = BTreeMap::new();
    for (key, value) in set {
        match held(key) {
            Some(holder) => out.push(effect.on_instance(holder, set_value(value))),
            None if effect.address.is_none() => {
                out.push(created(effect, holder, id, key, value));
            }
            None => {
                rest_set.insert(key.clone(), value.clone());
            }
        }
    }
    let mut rest_remove = Vec::new();
    for key in remove {
        match held(key) {
            Some(holder) => out.push(effect.on_instance(holder, Change::Delete)),
            None => rest_remove.push(key.clone()),
        }
    }
    if !rest_set.is_empty() || !rest_remove.is_empty() {
        out.push(Effect {
            change: Change::Tags {
                set: rest_set,
                remove: rest_remove,
                replace: false,
            },
            ..effect.clone()
        });
    }
    Some(out)
}

/// The single-tag type (with how it names the tagged resource) and the managed instances of
/// it that hold tags of the resource `id`.
fn holders<'s>(
    state: &'s StateIndex,
    id: &str,
) -> Option<((&'static str, &'static TagOf), Vec<&'s Instance>)> {
    Catalog::bundled()
        .tag_holders()
        .find_map(|(holder_type, tag_of)| {
            let found: Vec<&Instance> = state
                .iter()
                .filter(|i| i.mode == Mode::Managed && i.deposed.is_none())
                .filter(|i| i.resource_type == holder_type)
                .filter(|i| i.string_attribute(&tag_of.parent) == Some(id))
                .collect();
            (!found.is_empty()).then_some(((holder_type, tag_of), found))
        })
}

fn set_value(value: &str) -> Change {
    Change::Set {
        attribute: "value".into(),
        value: Value::from(value),
    }
}

/// A new holder for a key the resource did not have, named by the provider's import id.
fn created(
    effect: &Effect,
    (holder_type, tag_of): (&str, &TagOf),
    id: &str,
    key: &str,
    value: &str,
) -> Effect {
    let identity = format!("{id},{key}");
    let mut mentions = effect.mentions.clone();
    mentions.push(id.to_owned());
    Effect {
        resource: ResourceKey {
            resource_type: holder_type.to_owned(),
            identity: identity.clone(),
        },
        address: None,
        change: Change::Create {
            attributes: vec![
                (tag_of.parent.clone(), Value::from(id)),
                ("key".to_owned(), Value::from(key)),
                ("value".to_owned(), Value::from(value)),
            ],
        },
        mentions,
        allocates: vec![identity],
        ..effect.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::testing::{effect, index, resource};
    use serde_json::json;

    const SUBNET: &str = "subnet-0a1b2c3d4e5f60718";

    fn tag(name: &str, key: &str, value: &str) -> Value {
        let attributes = json!({"id": format!("{SUBNET},{key}"), "resource_id": SUBNET,
            "key": key, "value": value});
        resource("aws_ec2_tag", name, attributes)
    }

    fn tagged(set: &[(&str, &str)], remove: &[&str]) -> Effect {
        let change = Change::Tags {
            set: set
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            remove: remove.iter().map(|k| (*k).to_owned()).collect(),
            replace: false,
        };
        effect("CreateTags", ("aws_subnet", SUBNET), None, change)
    }

    #[test]
    fn a_held_key_is_changed_or_deleted_on_its_holder_and_a_new_key_gets_one() {
        let state = index(json!([
            tag("elb", "kubernetes.io/role/elb", "1"),
            tag("team", "team", "web"),
        ]));
        let effects = as_single_tags(
            vec![tagged(&[("team", "platform"), ("owner", "ops")], &[])],
            &state,
        );
        let summary: Vec<(Option<&str>, &Change)> = effects
            .iter()
            .map(|e| (e.address.as_deref(), &e.change))
            .collect();
        assert_eq!(
            summary,
            [
                (
                    None,
                    &Change::Create {
                        attributes: vec![
                            ("resource_id".into(), json!(SUBNET)),
                            ("key".into(), json!("owner")),
                            ("value".into(), json!("ops")),
                        ]
                    }
                ),
                (
                    Some("aws_ec2_tag.team"),
                    &Change::Set {
                        attribute: "value".into(),
                        value: json!("platform")
                    }
                ),
            ]
        );
        assert_eq!(effects[0].resource.identity, format!("{SUBNET},owner"));
        let removed = as_single_tags(vec![tagged(&[], &["kubernetes.io/role/elb"])], &state);
        assert_eq!(removed.len(), 1);
        assert_eq!(removed[0].address.as_deref(), Some("aws_ec2_tag.elb"));
        assert_eq!(removed[0].change, Change::Delete);
    }

    #[test]
    fn tags_of_a_resource_with_no_tag_held_apart_stay_where_they_were() {
        let state = index(json!([tag("team", "team", "web")]));
        let mut other = tagged(&[("team", "x")], &[]);
        other.resource.identity = "subnet-0ffffffffffffffff".into();
        assert_eq!(as_single_tags(vec![other.clone()], &state), [other]);
    }
}
