//! Parts of an intent the code already holds, so a second run over the same or an overlapping
//! window writes nothing: a created resource whose id an `import` block already brings in (or,
//! of a type the provider cannot import, that a block of the configuration declares), a
//! deleted resource already gone from the code (or let go by a `removed` block), and a value,
//! nested block or tags the configuration already evaluates to.

use crate::intents::{BlockOp, Delta, Lifecycle, lookup, same_value};
use crate::policy::Part;
use crate::terraform::config::{Import, Project, project_imports, project_removed};
use crate::terraform::functions::Value as Evaluated;
use serde_json::{Map, Value};

/// Why a part needs no edit, and for a created resource the address it is already imported
/// into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    /// In plain words.
    pub reason: String,
    /// The address an `import` block already brings the resource into.
    pub imported_as: Option<String>,
}

/// What the configuration already says.
pub struct InCode<'a> {
    project: &'a Project,
    imports: Vec<Import>,
    removed: Vec<String>,
}

impl<'a> InCode<'a> {
    /// Reads the project's `import` and `removed` blocks.
    pub fn new(project: &'a Project) -> Self {
        Self {
            project,
            imports: project_imports(project.files()),
            removed: project_removed(project.files()),
        }
    }

    /// Why a part of a delta needs no edit, when the code already holds it.
    pub fn settled(&self, delta: &Delta, part: &Part) -> Option<Settled> {
        let plain = |reason: String| Settled {
            reason,
            imported_as: None,
        };
        match (delta.lifecycle, part) {
            (Lifecycle::Created, _) => self.imported(delta).or_else(|| self.declared(delta)),
            (Lifecycle::Deleted, _) => self.gone(delta.address.as_deref()?).map(plain),
            (Lifecycle::Managed, Part::Attribute(path)) => {
                let configured = self.configured(delta)?;
                let have = lookup(&configured, path)?;
                let want = &delta.attributes.get(path)?.after;
                same_value(have, want)
                    .then(|| plain(format!("the code already sets {path} to this value")))
            }
            (Lifecycle::Managed, Part::Block { index, .. }) => {
                let block = delta.blocks.get(*index)?;
                let configured = self.configured(delta)?;
                let present = blocks(&configured, &block.block)
                    .iter()
                    .any(|b| holds(b, &block.fields));
                match block.op {
                    BlockOp::Added if present => Some(plain(format!(
                        "the code already has this {} block",
                        block.block
                    ))),
                    BlockOp::Removed if !present => Some(plain(format!(
                        "this {} block is already gone from the code",
                        block.block
                    ))),
                    _ => None,
                }
            }
            (Lifecycle::Managed, Part::Tags) => {
                let configured = self.configured(delta)?;
                let tags = configured.get("tags");
                let has = |k: &String, v: &String| {
                    tags.and_then(|t| t.get(k)).and_then(Value::as_str) == Some(v.as_str())
                };
                let set = delta.tags_set.iter().all(|(k, v)| has(k, v));
                let removed = delta
                    .tags_removed
                    .iter()
                    .all(|k| tags.and_then(|t| t.get(k)).is_none());
                (set && removed).then(|| plain("the code already has these tags".to_owned()))
            }
            _ => None,
        }
    }

    /// The address an `import` block brings the object with import id `id` into.
    pub fn imported_into(&self, id: &str) -> Option<&str> {
        self.imports
            .iter()
            .find(|i| i.id.as_deref() == Some(id))
            .map(|i| i.to.as_str())
    }

    /// The evaluated configuration of a managed delta's instance, as JSON.
    fn configured(&self, delta: &Delta) -> Option<Value> {
        let address = delta.address.as_deref()?;
        self.project
            .instance(address)
            .map(|i| as_json(&i.attributes))
    }

    /// A created resource an `import` block of its type already brings in.
    fn imported(&self, delta: &Delta) -> Option<Settled> {
        let key = &delta.resource;
        let prefix = format!("{}.", key.resource_type);
        let import = self.imports.iter().find(|i| {
            i.id.as_deref() == Some(key.identity.as_str()) && i.to.starts_with(&prefix)
        })?;
        Some(Settled {
            reason: format!(
                "already in the code: an import block brings {} into {}",
                key.identity, import.to
            ),
            imported_as: Some(import.to.clone()),
        })
    }

    /// A created resource of a type the provider cannot import (written without an `import`
    /// block) that an instance of the configuration already declares: one of its type whose
    /// evaluated arguments hold every value the calls gave.
    fn declared(&self, delta: &Delta) -> Option<Settled> {
        let key = &delta.resource;
        let list = knowledge::NotImportable::bundled().ok()?;
        if list.importable(&key.resource_type) {
            return None;
        }
        let given: Vec<(&String, &Value)> = delta
            .attributes
            .iter()
            .filter(|(path, _)| !path.contains('.'))
            .map(|(path, change)| (path, &change.after))
            .collect();
        if given.is_empty() {
            return None;
        }
        let instance = self
            .project
            .instances()
            .filter(|i| i.resource_type == key.resource_type)
            .find(|i| {
                let configured = as_json(&i.attributes);
                given.iter().all(|(path, want)| {
                    lookup(&configured, path).is_some_and(|have| same_value(have, want))
                })
            })?;
        Some(Settled {
            reason: format!(
                "already in the code: {} declares {} (the provider cannot import it)",
                instance.address, key.identity
            ),
            imported_as: Some(instance.address.clone()),
        })
    }

    /// Why a deleted resource needs no edit: a `removed` block lets go of it, or no block of
    /// the configuration gives it any more.
    fn gone(&self, address: &str) -> Option<String> {
        let let_go = self
            .removed
            .iter()
            .any(|r| r == address || address.starts_with(&format!("{r}[")));
        if let_go {
            return Some(format!("a removed block already lets go of {address}"));
        }
        self.project
            .instance(address)
            .is_none()
            .then(|| format!("{address} is already gone from the code"))
    }
}

/// An evaluated value as JSON; a value known only after apply becomes a text no cloud value
/// equals, so it never counts as already written.
fn as_json(value: &Evaluated) -> Value {
    match value {
        Evaluated::Unknown => Value::String("(known after apply)".to_owned()),
        Evaluated::Null => Value::Null,
        Evaluated::Bool(b) => Value::Bool(*b),
        Evaluated::Number(n) => serde_json::Number::from_f64(*n).map_or(Value::Null, Value::Number),
        Evaluated::String(s) => Value::String(s.clone()),
        Evaluated::List(items) | Evaluated::Set(items) => {
            Value::Array(items.iter().map(as_json).collect())
        }
        Evaluated::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), as_json(v))).collect())
        }
    }
}

/// The nested blocks of a type in an evaluated configuration (a list of objects, or one).
pub(super) fn blocks<'v>(attributes: &'v Value, name: &str) -> Vec<&'v Map<String, Value>> {
    match attributes.get(name) {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_object).collect(),
        Some(Value::Object(one)) => vec![one],
        _ => Vec::new(),
    }
}

/// Whether a configured block holds every field of a change (dotted fields step into nested
/// blocks; an empty value matches an absent one).
pub(super) fn holds(block: &Map<String, Value>, fields: &Map<String, Value>) -> bool {
    let whole = Value::Object(block.clone());
    fields
        .iter()
        .all(|(field, want)| match lookup(&whole, field) {
            Some(have) => same_value(have, want),
            None => is_empty(want),
        })
}

/// Whether a value is what the cloud gives for an unset argument: null, false, or empty.
pub(super) fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_configured_block_holds_the_fields_of_a_change() {
        let configured = map(json!({"from_port": 443, "to_port": 443, "protocol": "tcp",
            "cidr_blocks": ["10.0.0.0/16"], "description": "", "self": false,
            "expiration": [{"days": 30}]}));
        assert!(holds(
            &configured,
            &map(
                json!({"from_port": 443, "to_port": "443", "protocol": "tcp",
                "cidr_blocks": ["10.0.0.0/16"]})
            )
        ));
        assert!(holds(&configured, &map(json!({"expiration.days": 30}))));
        assert!(!holds(
            &configured,
            &map(json!({"from_port": 22, "cidr_blocks": ["10.0.0.0/16"]}))
        ));
        assert!(holds(&configured, &map(json!({"ipv6_cidr_blocks": []}))));
    }
}
