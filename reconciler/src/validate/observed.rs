//! The cloud after the drift, when no refreshed snapshot is given: the state before it with
//! every intent's net effect applied.

use crate::intents::{BlockOp, Delta, Lifecycle, ResourceKey, removes};
use crate::terraform::state::{Instance, Mode, State};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The state with the deltas applied; `created` names the address each created resource will
/// have in the patched configuration.
pub fn expected_state(
    state: &State,
    deltas: &[&Delta],
    created: &BTreeMap<ResourceKey, String>,
) -> State {
    let mut out = state.clone();
    for delta in deltas {
        match delta.lifecycle {
            Lifecycle::Deleted => {
                out.instances
                    .retain(|i| Some(&i.address) != delta.address.as_ref());
            }
            Lifecycle::Created => {
                if let Some(address) = created.get(&delta.resource) {
                    out.instances.push(new_instance(address, delta));
                }
            }
            Lifecycle::Managed => {
                let found = out
                    .instances
                    .iter_mut()
                    .find(|i| Some(&i.address) == delta.address.as_ref());
                if let Some(instance) = found {
                    apply(&mut instance.attributes, delta);
                }
            }
            Lifecycle::Unmanaged | Lifecycle::Transient => {}
        }
    }
    out
}

fn new_instance(address: &str, delta: &Delta) -> Instance {
    let mut attributes = Value::Object(Map::new());
    if let Value::Object(map) = &mut attributes {
        map.insert("id".into(), Value::String(delta.resource.identity.clone()));
    }
    apply(&mut attributes, delta);
    let name = address.rsplit('.').next().unwrap_or(address).to_owned();
    Instance {
        address: address.to_owned(),
        module: None,
        mode: Mode::Managed,
        resource_type: delta.resource.resource_type.clone(),
        name,
        index: None,
        provider: "provider[\"registry.terraform.io/hashicorp/aws\"]".into(),
        schema_version: 0,
        attributes,
        sensitive: Vec::new(),
        private: None,
        dependencies: Vec::new(),
        tainted: false,
        deposed: None,
    }
}

/// Applies a delta's attributes, blocks and tags to state attributes.
fn apply(attributes: &mut Value, delta: &Delta) {
    for (path, change) in &delta.attributes {
        set_path(attributes, path, change.after.clone());
    }
    for block in &delta.blocks {
        let Some(map) = attributes.as_object_mut() else {
            continue;
        };
        let list = map
            .entry(block.block.clone())
            .or_insert_with(|| Value::Array(Vec::new()));
        if !list.is_array() {
            *list = Value::Array(Vec::new());
        }
        let Some(items) = list.as_array_mut() else {
            continue;
        };
        match block.op {
            BlockOp::Added => items.push(Value::Object(block.fields.clone())),
            BlockOp::Removed => {
                if let Some(i) = items
                    .iter()
                    .position(|v| v.as_object().is_some_and(|o| removes(&block.fields, o)))
                {
                    items.remove(i);
                }
            }
        }
    }
    if !delta.tags_set.is_empty() || !delta.tags_removed.is_empty() {
        // a tag the resource has only from the provider's `default_tags` (in `tags_all`, not
        // in `tags`) changes where the planner writes it: on `default_tags`, so in `tags_all`
        let own = |k: &str| attributes.get("tags").and_then(|t| t.get(k)).is_some();
        let from_provider: Vec<String> = delta
            .tags_set
            .keys()
            .filter(|k| !own(k))
            .filter(|k| {
                attributes
                    .get("tags_all")
                    .and_then(|t| t.get(k.as_str()))
                    .is_some()
            })
            .cloned()
            .collect();
        update_tags(attributes, "tags", delta, &from_provider);
        update_tags(attributes, "tags_all", delta, &[]);
    }
}

fn update_tags(attributes: &mut Value, key: &str, delta: &Delta, skip: &[String]) {
    let Some(map) = attributes.as_object_mut() else {
        return;
    };
    let tags = map
        .entry(key.to_owned())
        .or_insert_with(|| Value::Object(Map::new()));
    if !tags.is_object() {
        *tags = Value::Object(Map::new());
    }
    if let Some(tags) = tags.as_object_mut() {
        for k in &delta.tags_removed {
            tags.remove(k);
        }
        for (k, v) in delta.tags_set.iter().filter(|(k, _)| !skip.contains(k)) {
            tags.insert(k.clone(), Value::String(v.clone()));
        }
    }
}

/// Sets a dotted path, stepping into the single item of a nested block list and creating
/// missing levels (a missing nested block becomes a list of one object).
fn set_path(root: &mut Value, path: &str, value: Value) {
    let steps: Vec<&str> = path.split('.').collect();
    let Some((last, heads)) = steps.split_last() else {
        return;
    };
    let mut here = root;
    for step in heads {
        let Some(map) = here.as_object_mut() else {
            return;
        };
        let next = map
            .entry((*step).to_owned())
            .or_insert_with(|| Value::Array(vec![Value::Object(Map::new())]));
        if next.is_null() || next.as_array().is_some_and(Vec::is_empty) {
            *next = Value::Array(vec![Value::Object(Map::new())]);
        }
        here = match next {
            Value::Array(items) => match items.first_mut() {
                Some(item) => item,
                None => return,
            },
            other => other,
        };
    }
    if let Some(map) = here.as_object_mut() {
        map.insert((*last).to_owned(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_paths_are_created_and_stepped_into() {
        let mut v = json!({"versioning_configuration": []});
        set_path(&mut v, "versioning_configuration.status", json!("Enabled"));
        assert_eq!(
            v,
            json!({"versioning_configuration": [{"status": "Enabled"}]})
        );
        let mut v = json!({"a": [{"b": 1, "c": 2}]});
        set_path(&mut v, "a.b", json!(3));
        assert_eq!(v, json!({"a": [{"b": 3, "c": 2}]}));
    }
}
