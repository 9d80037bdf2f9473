//! Finding the resource instance that manages a cloud object, by the object's id, ARN or
//! natural key.

use knowledge::catalog::Catalog;
use std::collections::HashMap;

use super::{Instance, State};

/// Joins the values of a natural key of several attributes, in the catalog's order.
pub const KEY_SEPARATOR: &str = "/";

/// The keys indexed for every resource type.
const UNIVERSAL_KEYS: &[&str] = &["id", "arn"];

/// State with lookups by address and by cloud identity.
#[derive(Debug, Clone)]
pub struct StateIndex {
    state: State,
    by_address: HashMap<String, usize>,
    by_identity: HashMap<String, Vec<usize>>,
}

impl StateIndex {
    /// Indexes every instance of `state`.
    pub fn new(state: State) -> StateIndex {
        let mut by_address = HashMap::new();
        let mut by_identity: HashMap<String, Vec<usize>> = HashMap::new();
        for (position, instance) in state.instances.iter().enumerate() {
            if instance.deposed.is_none() {
                by_address.insert(instance.address.clone(), position);
            }
            for identity in identities(instance) {
                by_identity.entry(identity).or_default().push(position);
            }
        }
        StateIndex {
            state,
            by_address,
            by_identity,
        }
    }

    /// The indexed state.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The instances whose id, ARN or natural key is `identity`, only of `resource_type` when
    /// given: managed resources first, then data sources, each in state order.
    pub fn lookup(&self, resource_type: Option<&str>, identity: &str) -> Vec<&Instance> {
        let mut found: Vec<&Instance> = self
            .by_identity
            .get(identity)
            .into_iter()
            .flatten()
            .map(|&position| &self.state.instances[position])
            .filter(|instance| resource_type.is_none_or(|t| instance.resource_type == t))
            .collect();
        found.sort_by_key(|instance| instance.mode);
        found
    }

    /// The current (not deposed) instance at `address`, such as `aws_instance.web[0]`.
    pub fn instance(&self, address: &str) -> Option<&Instance> {
        self.by_address
            .get(address)
            .map(|&position| &self.state.instances[position])
    }

    /// Every instance, in state order.
    pub fn iter(&self) -> impl Iterator<Item = &Instance> {
        self.state.instances.iter()
    }
}

/// The distinct identities an instance is found by.
fn identities(instance: &Instance) -> Vec<String> {
    let natural = Catalog::bundled().natural_keys(&instance.resource_type);
    let universal = UNIVERSAL_KEYS
        .iter()
        .filter_map(|key| instance.string_attribute(key));
    let mut found: Vec<String> = universal
        .map(str::to_owned)
        .chain(natural.iter().filter_map(|key| key_value(instance, key)))
        .filter(|value| !value.is_empty())
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The value of a key, when every attribute in it is a non-empty string, a number or a
/// boolean (a network ACL entry's `rule_number` and `egress`), written as text.
fn key_value(instance: &Instance, attributes: &[String]) -> Option<String> {
    let parts = attributes
        .iter()
        .map(|name| key_part(instance.attributes.get(name)?))
        .collect::<Option<Vec<_>>>()?;
    Some(parts.join(KEY_SEPARATOR))
}

/// One attribute of a natural key as text.
fn key_part(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(s) if !s.is_empty() => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}
