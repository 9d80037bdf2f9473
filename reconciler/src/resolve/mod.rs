//! Resolve: for every out-of-band call, the resources it touches — the Terraform type and
//! cloud identity the knowledge base's rule extracts from the request and response — and the
//! state address when Terraform manages the resource.

use crate::ingest::Call;
use crate::intents::{Change, Effect, Evidence, Flag, ResourceKey, Risk, lookup, same_value};
use crate::terraform::state::{Mode, StateIndex};
use knowledge::rules::{BlockChange, Extraction, Kind, Missing, RuleSet, TagOp, Target};
use serde::Serialize;
use serde_json::{Map, Value};

mod sg_rules;

/// A call the knowledge base could not explain, kept as a finding with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unexplained {
    /// CloudTrail's `eventID`.
    pub event_id: String,
    /// `eventSource`.
    pub event_source: String,
    /// The API.
    pub api: String,
    /// Who made it.
    pub actor: String,
    /// Why it was not resolved.
    pub reason: String,
}

/// Resolves calls against the rules and the state.
pub struct Resolver<'a> {
    rules: &'a RuleSet,
    state: &'a StateIndex,
}

impl<'a> Resolver<'a> {
    /// A resolver over a rule set and a state index.
    pub fn new(rules: &'a RuleSet, state: &'a StateIndex) -> Self {
        Self { rules, state }
    }

    /// The call's effects, one per resource and kind of change.
    pub fn resolve(&self, call: &Call) -> Result<Vec<Effect>, Unexplained> {
        let api = call.api_name();
        let unexplained = |reason: String| Unexplained {
            event_id: call.event_id.clone(),
            event_source: call.event_source.clone(),
            api: api.to_owned(),
            actor: call.identity.actor(),
            reason,
        };
        let rule = self
            .rules
            .find(&call.event_source, api)
            .ok_or_else(|| unexplained("no rule in the knowledge base for this API".into()))?;
        let request = call.request_parameters.json();
        let response = call.response_elements.json();
        let extraction = rule
            .extract(request.as_ref(), response.as_ref())
            .map_err(|e| unexplained(e.to_string()))?;
        let evidence = evidence(call);
        let mentions = mentions(&extraction, call);
        let mut effects = Vec::new();
        for target in &extraction.targets {
            let (resource, address) = self.locate(&extraction, target);
            let allocates = if matches!(extraction.kind, Kind::Create | Kind::Associate) {
                vec![target.identity.clone()]
            } else {
                Vec::new()
            };
            let state = address
                .as_deref()
                .and_then(|a| self.state.instance(a))
                .map(|i| &i.attributes);
            for change in changes(&extraction, address.is_some(), state) {
                effects.push(Effect {
                    evidence: evidence.clone(),
                    resource: resource.clone(),
                    address: address.clone(),
                    change,
                    rule: extraction.rule_id.clone(),
                    risk: risk(&extraction),
                    flags: standing_flags(&extraction, state),
                    summary: extraction.summary.clone(),
                    mentions: mentions.clone(),
                    allocates: allocates.clone(),
                });
            }
        }
        Ok(sg_rules::as_rule_resources(effects, call, self.state))
    }

    /// The resource type and, when managed, the state address of a target.
    fn locate(&self, extraction: &Extraction, target: &Target) -> (ResourceKey, Option<String>) {
        let candidates: Vec<&str> = match &target.resource_type {
            Some(t) => vec![t.as_str()],
            None => extraction
                .resource_types
                .iter()
                .map(String::as_str)
                .collect(),
        };
        for resource_type in &candidates {
            let found = self.state.lookup(Some(resource_type), &target.identity);
            if let Some(instance) = found.into_iter().find(|i| i.mode == Mode::Managed) {
                let key = ResourceKey {
                    resource_type: (*resource_type).to_owned(),
                    identity: target.identity.clone(),
                };
                return (key, Some(instance.address.clone()));
            }
        }
        let key = ResourceKey {
            resource_type: candidates.first().map_or("unknown", |t| t).to_owned(),
            identity: target.identity.clone(),
        };
        (key, None)
    }
}

/// The extraction's flags that stand against the target's state attributes (`state`, when
/// managed), with their reasons and levels: a flag about moving away from a value needs the
/// state to hold it.
fn standing_flags(extraction: &Extraction, state: Option<&Value>) -> Vec<Flag> {
    extraction
        .flags
        .iter()
        .filter(|f| f.fires_against(state.and_then(|s| lookup(s, &f.field))))
        .map(|f| Flag {
            reason: f.reason.clone(),
            level: f.level,
        })
        .collect()
}

/// What the extraction did to one target, whose state attributes are `state` when managed.
fn changes(extraction: &Extraction, managed: bool, state: Option<&Value>) -> Vec<Change> {
    let attributes = || extraction.sets.clone();
    match extraction.kind {
        Kind::Create | Kind::Associate => vec![Change::Create {
            attributes: attributes(),
        }],
        Kind::Delete | Kind::Disassociate => vec![Change::Delete],
        Kind::Update if !managed && extraction.missing == Some(Missing::Create) => {
            vec![Change::Create {
                attributes: attributes(),
            }]
        }
        _ => {
            let mut out: Vec<Change> = extraction
                .sets
                .iter()
                .map(|(attribute, value)| Change::Set {
                    attribute: attribute.clone(),
                    value: value.clone(),
                })
                .collect();
            match (&extraction.blocks, state) {
                (Some(blocks), Some(state)) if blocks.key.is_some() => {
                    out.extend(replaced_blocks(blocks, state));
                }
                _ => out.extend(block_changes(extraction)),
            }
            out.extend(tag_change(extraction));
            out
        }
    }
}

fn block_changes(extraction: &Extraction) -> Vec<Change> {
    let Some(blocks) = &extraction.blocks else {
        return Vec::new();
    };
    blocks
        .items
        .iter()
        .map(|fields| {
            let block = blocks.name.clone();
            let fields = fields.clone();
            if extraction.kind == Kind::RemoveBlock {
                Change::RemoveBlock { block, fields }
            } else {
                Change::AddBlock { block, fields }
            }
        })
        .collect()
}

/// A call that replaces a whole set of blocks, as its net change against the state's blocks
/// matched by the key field: a block whose fields changed is a `Set` of each changed field
/// when the resource has only that one block (the path `rule.expiration.days` then names it
/// unambiguously), and otherwise its removal plus the new block; new keys are added blocks and
/// keys the call left out are removed blocks. Only the fields the rule reads are compared.
fn replaced_blocks(blocks: &BlockChange, state: &Value) -> Vec<Change> {
    let Some(key) = blocks.key.as_deref() else {
        return Vec::new();
    };
    let old: Vec<&Map<String, Value>> = state
        .get(&blocks.name)
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default();
    let fields: Vec<&String> = blocks.items.iter().flat_map(|i| i.keys()).collect();
    let project = |block: &Map<String, Value>| -> Map<String, Value> {
        let whole = Value::Object(block.clone());
        fields
            .iter()
            .filter_map(|f| Some(((*f).clone(), flat(lookup(&whole, f)?)?)))
            .collect()
    };
    let name = || blocks.name.clone();
    let mut out = Vec::new();
    for new in &blocks.items {
        let Some(before) = old.iter().find(|b| same_key(b, new, key)) else {
            out.push(Change::AddBlock {
                block: name(),
                fields: new.clone(),
            });
            continue;
        };
        if old.len() == 1 {
            // Every field, changed or not: netting drops those equal to the state, and a later
            // call putting a value back then undoes an earlier change.
            out.extend(
                new.iter()
                    .filter(|(f, _)| *f != key)
                    .map(|(f, v)| Change::Set {
                        attribute: format!("{}.{f}", blocks.name),
                        value: v.clone(),
                    }),
            );
            continue;
        }
        let before = Value::Object((*before).clone());
        let changed = new
            .iter()
            .any(|(f, v)| lookup(&before, f).is_none_or(|b| !same_value(b, v)));
        if !changed {
            continue;
        }
        if let Value::Object(before) = &before {
            out.push(Change::RemoveBlock {
                block: name(),
                fields: project(before),
            });
            out.push(Change::AddBlock {
                block: name(),
                fields: new.clone(),
            });
        }
    }
    let kept = |b: &&&Map<String, Value>| blocks.items.iter().any(|n| same_key(b, n, key));
    for gone in old.iter().filter(|b| !kept(b)) {
        out.push(Change::RemoveBlock {
            block: name(),
            fields: project(gone),
        });
    }
    out
}

/// Whether two blocks have the same value of the key field.
fn same_key(a: &Map<String, Value>, b: &Map<String, Value>, key: &str) -> bool {
    matches!((a.get(key), b.get(key)), (Some(x), Some(y)) if same_value(x, y))
}

/// A state value as a block field: a nested block held as a one-element list is stepped
/// into by `lookup` already; null stays out.
fn flat(value: &Value) -> Option<Value> {
    (!value.is_null()).then(|| value.clone())
}

fn tag_change(extraction: &Extraction) -> Option<Change> {
    let tags = extraction.tags.as_ref()?;
    Some(Change::Tags {
        set: tags.added.clone(),
        remove: tags.removed.clone(),
        replace: tags.op == TagOp::Replace,
    })
}

fn risk(extraction: &Extraction) -> Risk {
    match extraction.risk {
        knowledge::rules::Risk::Low => Risk::Low,
        knowledge::rules::Risk::Medium => Risk::Medium,
        knowledge::rules::Risk::High => Risk::High,
    }
}

/// The call as evidence.
pub fn evidence(call: &Call) -> Evidence {
    let identity = &call.identity;
    let principal = identity
        .arn
        .clone()
        .or_else(|| identity.principal_id.clone())
        .unwrap_or_default();
    let session = format!(
        "{principal}|{}",
        identity.access_key_id.as_deref().unwrap_or_default()
    );
    Evidence {
        event_id: call.event_id.clone(),
        time: call.event_time,
        event_source: call.event_source.clone(),
        api: call.api_name().to_owned(),
        actor: identity.actor(),
        client: call.client.label(),
        session,
        region: call.aws_region.clone(),
    }
}

/// Ids and ARNs the call refers to besides its targets: string values it sets and the
/// record's `resources[]`.
fn mentions(extraction: &Extraction, call: &Call) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: &str| {
        if looks_like_id(s) && !out.iter().any(|o| o == s) {
            out.push(s.to_owned());
        }
    };
    for (_, value) in &extraction.sets {
        strings(value, &mut push);
    }
    for resource in &call.resources {
        if let Some(arn) = &resource.arn {
            push(arn);
        }
    }
    out
}

fn strings(value: &Value, push: &mut impl FnMut(&str)) {
    match value {
        Value::String(s) => push(s),
        Value::Array(items) => items.iter().for_each(|v| strings(v, push)),
        Value::Object(map) => map.values().for_each(|v| strings(v, push)),
        _ => {}
    }
}

/// An AWS id (`sg-0abc...`, `subnet-...`) or an ARN.
fn looks_like_id(s: &str) -> bool {
    s.starts_with("arn:")
        || s.split_once('-').is_some_and(|(prefix, rest)| {
            (1..=10).contains(&prefix.len())
                && prefix.bytes().all(|b| b.is_ascii_lowercase())
                && rest.len() >= 8
                && rest.bytes().all(|b| b.is_ascii_hexdigit())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keyed(items: Value) -> BlockChange {
        let items = items
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_object().cloned())
            .collect();
        BlockChange {
            name: "rule".into(),
            items,
            key: Some("id".into()),
        }
    }

    #[test]
    fn a_replaced_document_sets_every_field_of_its_one_block() {
        // State as the provider writes it: nested blocks are one-element lists.
        let state = serde_json::json!({"rule": [{"id": "tiering", "status": "Enabled",
            "expiration": [{"days": 400, "date": null}], "filter": [{"prefix": ""}]}]});
        let call = keyed(serde_json::json!([{"id": "tiering", "status": "Enabled",
            "filter.prefix": "", "expiration.days": 730}]));
        let set = |attribute: &str, value: Value| Change::Set {
            attribute: attribute.into(),
            value,
        };
        // Every field but the key; netting keeps only `expiration.days` (400 → 730). The
        // order follows the request's fields, which a JSON map may keep or sort.
        let mut changes = replaced_blocks(&call, &state);
        changes.sort_by_key(|c| match c {
            Change::Set { attribute, .. } => attribute.clone(),
            _ => String::new(),
        });
        assert_eq!(
            changes,
            [
                set("rule.expiration.days", serde_json::json!(730)),
                set("rule.filter.prefix", serde_json::json!("")),
                set("rule.status", serde_json::json!("Enabled")),
            ]
        );
    }

    #[test]
    fn with_several_blocks_a_change_is_a_replacement_and_left_out_keys_are_removed() {
        let state = serde_json::json!({"rule": [
            {"id": "a", "status": "Enabled", "expiration": [{"days": 30}]},
            {"id": "b", "status": "Enabled", "expiration": [{"days": 60}]}]});
        let call = keyed(serde_json::json!([
            {"id": "a", "status": "Disabled", "expiration.days": 30},
            {"id": "c", "status": "Enabled"}]));
        let map = |v: Value| v.as_object().cloned().unwrap_or_default();
        assert_eq!(
            replaced_blocks(&call, &state),
            [
                Change::RemoveBlock {
                    block: "rule".into(),
                    fields: map(
                        serde_json::json!({"id": "a", "status": "Enabled", "expiration.days": 30})
                    )
                },
                Change::AddBlock {
                    block: "rule".into(),
                    fields: map(
                        serde_json::json!({"id": "a", "status": "Disabled", "expiration.days": 30})
                    )
                },
                Change::AddBlock {
                    block: "rule".into(),
                    fields: map(serde_json::json!({"id": "c", "status": "Enabled"}))
                },
                Change::RemoveBlock {
                    block: "rule".into(),
                    fields: map(
                        serde_json::json!({"id": "b", "status": "Enabled", "expiration.days": 60})
                    )
                },
            ]
        );
    }

    #[test]
    fn ids_and_arns_are_recognised() {
        assert!(looks_like_id("sg-0123456789abcdef0"));
        assert!(looks_like_id("vpc-1a2b3c4d"));
        assert!(looks_like_id("arn:aws:iam::111122223333:role/app"));
        assert!(!looks_like_id("t3-large"));
        assert!(!looks_like_id("my-bucket-name"));
    }
}
