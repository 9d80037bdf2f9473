//! The net effect of a group of calls on one resource: last writer wins, a change undone later
//! cancels out, a block removed and another added is a replacement, a resource created and then
//! deleted leaves nothing.

use crate::resolve::effect::{Change, Effect, Flag, ResourceKey, Risk};
use crate::terraform::values::{lookup, removes, same_block, same_value, string_map};
use knowledge::catalog::Catalog;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Where the resource stands after the calls, relative to Terraform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lifecycle {
    /// Terraform manages it and it still exists.
    Managed,
    /// Terraform does not manage it and the calls only changed it.
    Unmanaged,
    /// The calls created it.
    Created,
    /// The calls deleted it.
    Deleted,
    /// The calls created and then deleted it: nothing remains.
    Transient,
}

/// One attribute's net change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttributeDelta {
    /// The value the state had (absent for a resource the calls created).
    pub before: Option<Value>,
    /// The value after the last call that set it.
    pub after: Value,
    /// Risk conditions that fired on that call.
    pub flags: Vec<Flag>,
}

/// Whether a nested block was added or removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BlockOp {
    /// The block is new.
    Added,
    /// The block is gone.
    Removed,
}

/// One nested block's net change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockDelta {
    /// Added or removed.
    pub op: BlockOp,
    /// The block type, e.g. `ingress`.
    pub block: String,
    /// The block's attributes.
    pub fields: Map<String, Value>,
    /// Risk conditions that fired on the call.
    pub flags: Vec<Flag>,
}

/// The net change to one resource.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Delta {
    /// The resource.
    pub resource: ResourceKey,
    /// Its state address when managed.
    pub address: Option<String>,
    /// Where it stands.
    pub lifecycle: Lifecycle,
    /// Attribute path → net change (for a created resource: every attribute the calls set).
    pub attributes: BTreeMap<String, AttributeDelta>,
    /// Nested blocks added and removed, in call order.
    pub blocks: Vec<BlockDelta>,
    /// Tags set to a new value.
    pub tags_set: BTreeMap<String, String>,
    /// Tags removed.
    pub tags_removed: BTreeSet<String>,
    /// Rules that explained the calls.
    pub rules: BTreeSet<String>,
    /// The highest risk among the calls.
    pub risk: Risk,
    /// Risk conditions that fired on calls whose change survived.
    pub flags: Vec<Flag>,
    /// The calls' event ids, in time order.
    pub evidence: Vec<String>,
}

impl Delta {
    /// Whether nothing is left to reconcile.
    pub fn is_empty(&self) -> bool {
        match self.lifecycle {
            Lifecycle::Transient => true,
            Lifecycle::Created | Lifecycle::Deleted => false,
            Lifecycle::Managed | Lifecycle::Unmanaged => {
                self.attributes.is_empty()
                    && self.blocks.is_empty()
                    && self.tags_set.is_empty()
                    && self.tags_removed.is_empty()
            }
        }
    }
}

/// Nets the effects on one resource (in time order) against its state attributes.
pub fn net(effects: &[&Effect], state: Option<&Value>) -> Option<Delta> {
    let first = effects.first()?;
    let mut delta = Delta {
        resource: first.resource.clone(),
        address: effects.iter().find_map(|e| e.address.clone()),
        lifecycle: if state.is_some() {
            Lifecycle::Managed
        } else {
            Lifecycle::Unmanaged
        },
        attributes: BTreeMap::new(),
        blocks: Vec::new(),
        tags_set: BTreeMap::new(),
        tags_removed: BTreeSet::new(),
        rules: BTreeSet::new(),
        risk: Risk::Low,
        flags: Vec::new(),
        evidence: Vec::new(),
    };
    for effect in effects {
        apply(&mut delta, effect, state);
        delta.rules.insert(effect.rule.clone());
        delta.risk = delta.risk.max(effect.risk);
        delta.evidence.push(effect.evidence.event_id.clone());
        for flag in &effect.flags {
            if !delta.flags.contains(flag) {
                delta.flags.push(flag.clone());
            }
        }
    }
    drop_reverts(&mut delta, state);
    Some(delta)
}

fn apply(delta: &mut Delta, effect: &Effect, state: Option<&Value>) {
    match &effect.change {
        Change::Set { attribute, value } => {
            let before = state.and_then(|s| lookup(s, attribute)).cloned();
            delta.attributes.insert(
                attribute.clone(),
                AttributeDelta {
                    before,
                    after: value.clone(),
                    flags: effect.flags.clone(),
                },
            );
        }
        Change::Members {
            attribute,
            add,
            remove,
        } => {
            let before = state.and_then(|s| lookup(s, attribute)).cloned();
            let current = delta
                .attributes
                .get(attribute)
                .map(|a| a.after.clone())
                .or_else(|| before.clone());
            delta.attributes.insert(
                attribute.clone(),
                AttributeDelta {
                    before,
                    after: with_members(current, add, remove),
                    flags: effect.flags.clone(),
                },
            );
        }
        Change::AddBlock { block, fields } => {
            toggle_block(delta, BlockOp::Added, block, fields, &effect.flags);
        }
        Change::RemoveBlock { block, fields } => {
            toggle_block(delta, BlockOp::Removed, block, fields, &effect.flags);
        }
        Change::Tags {
            set,
            remove,
            replace,
        } => apply_tags(delta, set, remove, *replace, state),
        Change::Create { attributes } => {
            delta.lifecycle = Lifecycle::Created;
            for (path, value) in attributes {
                delta.attributes.insert(
                    path.clone(),
                    AttributeDelta {
                        before: None,
                        after: value.clone(),
                        flags: effect.flags.clone(),
                    },
                );
            }
        }
        Change::Delete => {
            delta.lifecycle = match delta.lifecycle {
                Lifecycle::Created | Lifecycle::Transient => Lifecycle::Transient,
                _ => Lifecycle::Deleted,
            };
        }
    }
}

/// Adds a block change, cancelling the opposite change of the same block made earlier.
fn toggle_block(
    delta: &mut Delta,
    op: BlockOp,
    block: &str,
    fields: &Map<String, Value>,
    flags: &[Flag],
) {
    let key = Catalog::bundled()
        .split(&delta.resource.resource_type, block)
        .map(|s| s.key.as_slice())
        .unwrap_or_default();
    let opposite = delta.blocks.iter().position(|b| {
        // A revoke undoes an earlier authorize as AWS matches it, without the description; a
        // block the parent holds once per key (a table's route per destination) is removed by
        // its key alone; an authorize undoes an earlier revoke only when it brings back the
        // same block.
        let undone = match op {
            BlockOp::Removed if !key.is_empty() => same_key(key, fields, &b.fields),
            BlockOp::Removed => removes(fields, &b.fields),
            BlockOp::Added => same_block(&b.fields, fields),
        };
        b.op != op && b.block == block && undone
    });
    if let Some(i) = opposite {
        delta.blocks.remove(i);
        return;
    }
    // Blocks are a set: the same block added or removed again is one change, the later call's
    // fields (a new description, say) kept.
    let again = delta.blocks.iter().position(|b| {
        b.op == op
            && b.block == block
            && match op {
                BlockOp::Added => same_block(&b.fields, fields),
                BlockOp::Removed => b.fields == *fields,
            }
    });
    match again {
        Some(i) => {
            delta.blocks[i].fields = fields.clone();
            delta.blocks[i].flags = flags.to_vec();
        }
        None => delta.blocks.push(BlockDelta {
            op,
            block: block.to_owned(),
            fields: fields.clone(),
            flags: flags.to_vec(),
        }),
    }
}

/// A set with values added and removed, sorted as Terraform lists a set of strings.
fn with_members(current: Option<Value>, add: &[Value], remove: &[Value]) -> Value {
    let mut items: Vec<Value> = match current {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    items.extend(add.iter().cloned());
    items.retain(|v| !remove.contains(v));
    items.sort_by_key(ToString::to_string);
    items.dedup();
    Value::Array(items)
}

/// Whether two blocks name the same item by the key fields (absent and empty alike).
fn same_key(key: &[String], a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    let given = |m: &Map<String, Value>, k: &String| {
        m.get(k)
            .filter(|v| !matches!(v, Value::Null) && v.as_str() != Some(""))
            .cloned()
    };
    key.iter().all(|k| given(a, k) == given(b, k)) && key.iter().any(|k| given(a, k).is_some())
}

fn apply_tags(
    delta: &mut Delta,
    set: &BTreeMap<String, String>,
    remove: &[String],
    replace: bool,
    state: Option<&Value>,
) {
    if replace {
        let mut old: BTreeSet<String> = state_tags(state).into_keys().collect();
        old.extend(delta.tags_set.keys().cloned());
        delta.tags_set.clear();
        delta.tags_removed = old.into_iter().filter(|k| !set.contains_key(k)).collect();
    }
    for (key, value) in set {
        delta.tags_removed.remove(key);
        delta.tags_set.insert(key.clone(), value.clone());
    }
    for key in remove {
        delta.tags_set.remove(key);
        delta.tags_removed.insert(key.clone());
    }
}

/// Drops the parts whose final value is what the state already had.
fn drop_reverts(delta: &mut Delta, state: Option<&Value>) {
    if delta.lifecycle != Lifecycle::Created {
        delta
            .attributes
            .retain(|_, a| a.before.as_ref().is_none_or(|b| !same_value(b, &a.after)));
    }
    let tags = state_tags(state);
    let all = string_map(state.and_then(|s| s.get("tags_all")));
    delta.tags_set.retain(|k, v| match tags.get(k) {
        Some(old) => old != v,
        // a tag the resource does not set itself but has from the provider's `default_tags`
        // (`tags_all` in the state): a call that sends the full set repeats it unchanged
        None => all.get(k) != Some(v),
    });
    if state.is_some() {
        delta.tags_removed.retain(|k| tags.contains_key(k));
    }
}

/// The `tags` map of a state instance.
fn state_tags(state: Option<&Value>) -> BTreeMap<String, String> {
    string_map(state.and_then(|s| s.get("tags")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::effect::Evidence;
    use serde_json::json;

    #[test]
    fn json_documents_compare_by_content() {
        let object = json!({"Version": "2012-10-17", "Statement": []});
        let spaced = json!("{ \"Statement\": [], \"Version\": \"2012-10-17\" }");
        let compact = json!("{\"Version\":\"2012-10-17\",\"Statement\":[]}");
        assert!(same_value(&spaced, &object));
        assert!(same_value(&object, &compact));
        assert!(same_value(&spaced, &compact));
        assert!(!same_value(
            &json!("{\"Version\":\"2008-10-17\"}"),
            &compact
        ));
        assert!(!same_value(&json!("not json"), &object));
    }

    fn effect(n: u32, change: Change) -> Effect {
        Effect {
            evidence: Evidence {
                event_id: format!("e{n}"),
                time: chrono::DateTime::from_timestamp(1_700_000_000 + i64::from(n) * 60, 0)
                    .unwrap_or_default(),
                event_source: "ec2.amazonaws.com".into(),
                api: "X".into(),
                actor: "alice".into(),
                client: "console".into(),
                session: "alice".into(),
                region: "us-east-1".into(),
                account: None,
            },
            resource: ResourceKey {
                resource_type: "aws_security_group".into(),
                identity: "sg-1".into(),
            },
            address: Some("aws_security_group.web".into()),
            change,
            rule: "ec2:X".into(),
            risk: Risk::Medium,
            flags: vec![],
            summary: String::new(),
            mentions: vec![],
            allocates: vec![],
        }
    }

    fn set(attribute: &str, value: Value) -> Change {
        Change::Set {
            attribute: attribute.into(),
            value,
        }
    }

    fn block(op: bool, cidr: &str) -> Change {
        let fields =
            json!({"from_port": 443, "to_port": 443, "protocol": "tcp", "cidr_blocks": [cidr]});
        let fields = fields.as_object().cloned().unwrap_or_default();
        let block = "ingress".to_owned();
        if op {
            Change::AddBlock { block, fields }
        } else {
            Change::RemoveBlock { block, fields }
        }
    }

    fn run(changes: Vec<Change>, state: &Value) -> Delta {
        let effects: Vec<Effect> = changes
            .into_iter()
            .enumerate()
            .map(|(i, c)| effect(i as u32, c))
            .collect();
        let refs: Vec<&Effect> = effects.iter().collect();
        net(&refs, Some(state)).expect("a delta")
    }

    #[test]
    fn a_route_deleted_by_its_destination_undoes_its_addition() {
        let route = |fields: Value| fields.as_object().cloned().unwrap_or_default();
        let added = Change::AddBlock {
            block: "route".into(),
            fields: route(json!({"cidr_block": "192.168.0.0/16", "nat_gateway_id": "nat-1"})),
        };
        let deleted = |cidr: &str| Change::RemoveBlock {
            block: "route".into(),
            fields: route(json!({"cidr_block": cidr})),
        };
        let on_table = |changes: Vec<Change>| {
            let effects: Vec<Effect> = changes
                .into_iter()
                .enumerate()
                .map(|(i, c)| {
                    let mut e = effect(i as u32, c);
                    e.resource.resource_type = "aws_route_table".into();
                    e
                })
                .collect();
            let refs: Vec<&Effect> = effects.iter().collect();
            net(&refs, Some(&json!({"route": []}))).expect("a delta")
        };
        let d = on_table(vec![added.clone(), deleted("192.168.0.0/16")]);
        assert!(d.is_empty(), "{d:?}");
        let d = on_table(vec![added, deleted("10.0.0.0/8")]);
        assert_eq!(
            d.blocks.len(),
            2,
            "another destination is another route: {d:?}"
        );
    }

    #[test]
    fn members_added_and_removed_by_several_calls_add_up() {
        let state = json!({"enabled_cluster_log_types": ["api", "audit"]});
        let members = |add: &[&str], remove: &[&str]| Change::Members {
            attribute: "enabled_cluster_log_types".into(),
            add: add.iter().map(|v| json!(v)).collect(),
            remove: remove.iter().map(|v| json!(v)).collect(),
        };
        let d = run(
            vec![
                members(&["scheduler"], &[]),
                members(&["authenticator"], &["audit"]),
            ],
            &state,
        );
        let a = &d.attributes["enabled_cluster_log_types"];
        assert_eq!(a.before, Some(json!(["api", "audit"])));
        assert_eq!(a.after, json!(["api", "authenticator", "scheduler"]));
    }

    #[test]
    fn last_writer_wins() {
        let state = json!({"instance_type": "t3.micro"});
        let d = run(
            vec![
                set("instance_type", json!("t3.large")),
                set("instance_type", json!("t3.xlarge")),
            ],
            &state,
        );
        let a = &d.attributes["instance_type"];
        assert_eq!(a.before, Some(json!("t3.micro")));
        assert_eq!(a.after, json!("t3.xlarge"));
        assert_eq!(d.evidence, ["e0", "e1"]);
    }

    #[test]
    fn a_change_undone_cancels_out() {
        let state = json!({"instance_type": "t3.micro", "tags": {"env": "prod"}});
        let d = run(
            vec![
                set("instance_type", json!("t3.large")),
                Change::Tags {
                    set: BTreeMap::from([("env".into(), "dev".into())]),
                    remove: vec![],
                    replace: false,
                },
                set("instance_type", json!("t3.micro")),
                Change::Tags {
                    set: BTreeMap::from([("env".into(), "prod".into())]),
                    remove: vec![],
                    replace: false,
                },
            ],
            &state,
        );
        assert!(d.is_empty(), "{d:?}");
    }

    #[test]
    fn a_revoke_without_a_description_removes_the_described_rule() {
        let rule = json!({"protocol": "tcp", "from_port": 8080, "to_port": 8080,
            "cidr_blocks": ["10.20.0.0/16"], "description": "App port", "self": false});
        let pattern = json!({"protocol": "tcp", "from_port": 8080, "to_port": 8080,
            "cidr_blocks": ["10.20.0.0/16"]});
        let other_port = json!({"protocol": "tcp", "from_port": 80, "to_port": 80,
            "cidr_blocks": ["10.20.0.0/16"]});
        let other_text = json!({"protocol": "tcp", "from_port": 8080, "to_port": 8080,
            "cidr_blocks": ["10.20.0.0/16"], "description": "Another"});
        let map = |v: &Value| v.as_object().cloned().unwrap_or_default();
        assert!(removes(&map(&pattern), &map(&rule)));
        assert!(!removes(&map(&other_port), &map(&rule)));
        assert!(!removes(&map(&other_text), &map(&rule)));
    }

    #[test]
    fn a_rule_revoked_and_authorized_with_a_new_description_is_a_replacement() {
        let fields = |v: Value| v.as_object().cloned().unwrap_or_default();
        let rule = json!({"protocol": "tcp", "from_port": 443, "to_port": 443,
            "cidr_blocks": ["10.0.0.0/8"]});
        let mut described = rule.clone();
        described["description"] = json!("HTTPS");
        let d = run(
            vec![
                Change::RemoveBlock {
                    block: "ingress".into(),
                    fields: fields(rule.clone()),
                },
                Change::AddBlock {
                    block: "ingress".into(),
                    fields: fields(described.clone()),
                },
            ],
            &json!({"ingress": []}),
        );
        assert_eq!(d.blocks.len(), 2, "{d:?}");
        // Authorized with a description, then revoked without one: nothing is left.
        let d = run(
            vec![
                Change::AddBlock {
                    block: "ingress".into(),
                    fields: fields(described),
                },
                Change::RemoveBlock {
                    block: "ingress".into(),
                    fields: fields(rule),
                },
            ],
            &json!({"ingress": []}),
        );
        assert!(d.blocks.is_empty(), "{d:?}");
    }

    #[test]
    fn revoke_then_authorize_is_a_replacement_and_add_then_revoke_cancels() {
        let state = json!({"ingress": []});
        let d = run(
            vec![block(false, "10.0.0.0/8"), block(true, "0.0.0.0/0")],
            &state,
        );
        let ops: Vec<(BlockOp, &Value)> = d
            .blocks
            .iter()
            .map(|b| (b.op, &b.fields["cidr_blocks"][0]))
            .collect();
        assert_eq!(
            ops,
            [
                (BlockOp::Removed, &json!("10.0.0.0/8")),
                (BlockOp::Added, &json!("0.0.0.0/0"))
            ]
        );
        let d = run(
            vec![block(true, "0.0.0.0/0"), block(false, "0.0.0.0/0")],
            &state,
        );
        assert!(d.is_empty());
    }

    #[test]
    fn the_same_block_added_twice_is_one_change() {
        let state = json!({"ingress": []});
        let twice = vec![block(true, "0.0.0.0/0"), block(true, "0.0.0.0/0")];
        let d = run(twice.clone(), &state);
        assert_eq!(d.blocks.len(), 1);
        let mut undone = twice;
        undone.push(block(false, "0.0.0.0/0"));
        assert!(run(undone, &state).is_empty());
    }

    #[test]
    fn create_then_delete_leaves_nothing() {
        let effects = [
            effect(0, Change::Create { attributes: vec![] }),
            effect(1, Change::Delete),
        ];
        let refs: Vec<&Effect> = effects.iter().collect();
        let d = net(&refs, None).expect("delta");
        assert_eq!(d.lifecycle, Lifecycle::Transient);
        assert!(d.is_empty());
    }

    #[test]
    fn tag_replacement_removes_tags_not_given() {
        let state = json!({"tags": {"a": "1", "b": "2"}});
        let d = run(
            vec![Change::Tags {
                set: BTreeMap::from([("a".into(), "1".into()), ("c".into(), "3".into())]),
                remove: vec![],
                replace: true,
            }],
            &state,
        );
        assert_eq!(d.tags_set, BTreeMap::from([("c".into(), "3".into())]));
        assert_eq!(d.tags_removed, BTreeSet::from(["b".to_owned()]));
    }

    #[test]
    fn a_full_tag_set_repeating_the_providers_default_tags_changes_only_the_rest() {
        // PutBucketTagging sends every tag, those `default_tags` give (in `tags_all`) too
        let state = json!({
            "tags": {"Name": "logs"},
            "tags_all": {"Name": "logs", "Env": "prod", "Team": "data"}
        });
        let d = run(
            vec![Change::Tags {
                set: BTreeMap::from([
                    ("Name".into(), "logs".into()),
                    ("Env".into(), "prod".into()),
                    ("Team".into(), "web".into()),
                    ("Owner".into(), "ops".into()),
                ]),
                remove: vec![],
                replace: true,
            }],
            &state,
        );
        assert_eq!(
            d.tags_set,
            BTreeMap::from([
                ("Owner".into(), "ops".into()),
                ("Team".into(), "web".into())
            ])
        );
        assert!(d.tags_removed.is_empty());
    }

    #[test]
    fn nested_block_paths_and_terraform_equality() {
        let state = json!({"versioning_configuration": [{"status": "Suspended"}], "port": 80});
        assert_eq!(
            lookup(&state, "versioning_configuration.status"),
            Some(&json!("Suspended"))
        );
        assert!(same_value(&json!("80"), &json!(80)));
        assert!(same_value(&json!(["b", "a"]), &json!(["a", "b"])));
        assert!(same_value(&json!(null), &json!([])));
        assert!(!same_value(&json!(["a"]), &json!(["a", "a", "b"])));
    }
}
