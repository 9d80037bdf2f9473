//! Finding the resource instance that manages a cloud object, by the object's id, ARN or
//! natural key.

use knowledge::catalog::{Catalog, CompositeId};
use knowledge::dns::canonical_name;
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
    let catalog = Catalog::bundled();
    let natural = catalog.natural_keys(&instance.resource_type);
    let composite = catalog
        .composite_id(&instance.resource_type)
        .and_then(|id| composite_value(instance, id));
    let universal = UNIVERSAL_KEYS
        .iter()
        .filter_map(|key| instance.string_attribute(key));
    let mut found: Vec<String> = universal
        .map(str::to_owned)
        .chain(natural.iter().filter_map(|key| key_value(instance, key)))
        .chain(composite)
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

/// The instance's id as the provider joins it from its attributes, DNS names in one form
/// (`Z123_www.example.com_A` whether the state's `id` keeps `www.Example.com.`), when every
/// attribute but empty ones at the end has a value.
fn composite_value(instance: &Instance, id: &CompositeId) -> Option<String> {
    let mut parts: Vec<String> = id
        .attributes
        .iter()
        .map(|name| {
            let part = instance.attributes.get(name).and_then(key_part);
            match part {
                Some(text) if id.dns_names.contains(name) => canonical_name(&text),
                other => other.unwrap_or_default(),
            }
        })
        .collect();
    while parts.last().is_some_and(String::is_empty) {
        parts.pop();
    }
    if parts.is_empty() || parts.iter().any(String::is_empty) {
        return None;
    }
    Some(parts.join(&id.separator))
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn index(records: &[Value]) -> StateIndex {
        let instances: Vec<Value> = records
            .iter()
            .map(|attributes| json!({"schema_version": 2, "attributes": attributes}))
            .collect();
        let text = json!({"version": 4, "resources": [{"mode": "managed",
            "type": "aws_route53_record", "name": "r", "each": "list",
            "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
            "instances": instances}]});
        let state = State::parse(text.to_string().as_bytes(), "test.tfstate").expect("a state");
        StateIndex::new(state)
    }

    fn record(id: &str, name: &str, record_type: &str, set_identifier: &str) -> Value {
        json!({"id": id, "zone_id": "Z0EXAMPLE", "name": name, "type": record_type,
               "set_identifier": set_identifier})
    }

    fn found(index: &StateIndex, identity: &str) -> usize {
        index.lookup(Some("aws_route53_record"), identity).len()
    }

    #[test]
    fn a_record_is_found_by_its_zone_name_and_type_whatever_form_its_id_keeps() {
        // The provider keeps the name lower-cased and without its dot, and builds the id
        // from the name as the code gave it: an ACM validation name keeps its trailing dot.
        let index = index(&[record(
            "Z0EXAMPLE__a1.www.example.com._CNAME",
            "_a1.www.example.com",
            "CNAME",
            "",
        )]);
        assert_eq!(found(&index, "Z0EXAMPLE__a1.www.example.com._CNAME"), 1);
        assert_eq!(found(&index, "Z0EXAMPLE__a1.www.example.com_CNAME"), 1);
        assert_eq!(found(&index, "Z0EXAMPLE__a1.www.example.com_TXT"), 0);
        assert_eq!(found(&index, "Z0OTHER__a1.www.example.com_CNAME"), 0);
    }

    #[test]
    fn a_name_as_the_code_wrote_it_is_indexed_in_the_one_form() {
        let index = index(&[record(
            "Z0EXAMPLE_*.Example.com._A",
            "\\052.Example.com.",
            "A",
            "",
        )]);
        assert_eq!(found(&index, "Z0EXAMPLE_*.example.com_A"), 1);
    }

    #[test]
    fn a_routing_policy_record_is_found_with_its_set_identifier_only() {
        let index = index(&[
            record(
                "Z0EXAMPLE_api.example.com_A_blue",
                "api.example.com",
                "A",
                "blue",
            ),
            record(
                "Z0EXAMPLE_api.example.com_A_green",
                "api.example.com",
                "A",
                "green",
            ),
        ]);
        assert_eq!(found(&index, "Z0EXAMPLE_api.example.com_A_green"), 1);
        assert_eq!(found(&index, "Z0EXAMPLE_api.example.com_A"), 0);
    }

    #[test]
    fn a_record_missing_a_part_has_no_composite_identity() {
        let mut partial = record("r-1", "api.example.com", "A", "");
        partial["zone_id"] = json!("");
        let index = index(&[partial]);
        assert_eq!(found(&index, "_api.example.com_A"), 0);
        assert_eq!(found(&index, "api.example.com_A"), 0);
    }
}
