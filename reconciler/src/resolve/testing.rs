//! Helpers for the unit tests of the resolve passes: a state index and an effect.

use super::effect::{Change, Effect, Evidence, ResourceKey, Risk};
use crate::terraform::state::{State, StateIndex};
use serde_json::{Value, json};

/// A state index of `resources` (state file `resources` entries).
pub fn index(resources: Value) -> StateIndex {
    let text = json!({"version": 4, "resources": resources});
    StateIndex::new(State::parse(text.to_string().as_bytes(), "t").expect("state"))
}

/// A managed resource of one instance, as a state file lists it.
pub fn resource(resource_type: &str, name: &str, attributes: Value) -> Value {
    json!({"mode": "managed", "type": resource_type, "name": name,
           "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
           "instances": [{"schema_version": 0, "attributes": attributes}]})
}

/// A console call's effect on a resource (managed at `address`, when given).
pub fn effect(api: &str, resource: (&str, &str), address: Option<&str>, change: Change) -> Effect {
    Effect {
        evidence: Evidence {
            event_id: "e".into(),
            time: chrono::Utc::now(),
            event_source: "test.amazonaws.com".into(),
            api: api.into(),
            actor: "alice".into(),
            client: "console".into(),
            session: "s".into(),
            region: "us-east-1".into(),
            account: None,
        },
        resource: ResourceKey {
            resource_type: resource.0.into(),
            identity: resource.1.into(),
        },
        address: address.map(str::to_owned),
        change,
        rule: format!("test:{api}"),
        risk: Risk::Medium,
        flags: Vec::new(),
        summary: "changed it".into(),
        mentions: Vec::new(),
        allocates: Vec::new(),
    }
}
