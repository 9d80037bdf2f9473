//! Routes: one destination per table, and tables whose routes the code holds as resources.
//!
//! A route table's routes can be written inline (`route` blocks of `aws_route_table` or
//! `aws_default_route_table`) or as `aws_route` resources; the provider documentation warns
//! against mixing the two. A table routes each destination once: `ReplaceRoute` (and a route
//! added for a destination the table routes already) changes that route's target.
//!
//! So a route added or removed on a table whose routes the state holds as `aws_route`
//! resources becomes a new `aws_route` (imported as `<table>_<destination>`, the provider's
//! import id), the change of the `aws_route` for that destination, or its deletion; on an
//! inline table, a route for a destination it routes already replaces that route's block.

use super::effect::{Change, Effect, ResourceKey};
use crate::terraform::state::{Instance, Mode, StateIndex};
use knowledge::catalog::{Catalog, Split};
use serde_json::{Map, Value};

/// The block whose items are routes.
const BLOCK: &str = "route";

/// A route's target fields, named alike in a `route` block and an `aws_route`.
const TARGETS: [&str; 9] = [
    "gateway_id",
    "nat_gateway_id",
    "network_interface_id",
    "transit_gateway_id",
    "vpc_peering_connection_id",
    "vpc_endpoint_id",
    "egress_only_gateway_id",
    "carrier_gateway_id",
    "core_network_arn",
];

/// The effects with route changes on managed tables read as AWS applies them: replacements of
/// a destination's route, and changes of the table's `aws_route` resources when it has any.
pub(super) fn as_routes(effects: Vec<Effect>, state: &StateIndex) -> Vec<Effect> {
    super::rewrite(effects, |effect| route_change(effect, state))
}

/// The replacement of one effect, or `None` when it is not a route change on a managed table
/// that needs one.
fn route_change(effect: &Effect, state: &StateIndex) -> Option<Vec<Effect>> {
    let address = effect.address.as_deref()?;
    let (fields, added) = match &effect.change {
        Change::AddBlock { block, fields } if block == BLOCK => (fields, true),
        Change::RemoveBlock { block, fields } if block == BLOCK => (fields, false),
        _ => return None,
    };
    let split = Catalog::bundled().split(&effect.resource.resource_type, BLOCK)?;
    let (field, destination) = destination(fields, split)?;
    let table = effect.resource.identity.as_str();
    let routes = route_resources(state, table, split);
    if routes.is_empty() {
        let current = state.instance(address).map(|i| &i.attributes)?;
        return added
            .then(|| replaced_inline(effect, fields, current, field, destination))
            .flatten();
    }
    let existing = routes
        .iter()
        .find(|r| routes_to(r, field, destination))
        .copied();
    Some(match (added, existing) {
        (true, Some(route)) => retargeted(effect, fields, route),
        (true, None) => vec![created(effect, fields, split, field, destination)],
        (false, Some(route)) => vec![effect.on_instance(route, Change::Delete)],
        (false, None) => return None,
    })
}

/// The route block's destination: the split's key field it gives, and its value.
fn destination<'a>(fields: &'a Map<String, Value>, split: &'a Split) -> Option<(&'a str, &'a str)> {
    split.key.iter().find_map(|field| {
        let value = fields.get(field)?.as_str().filter(|v| !v.is_empty())?;
        Some((field.as_str(), value))
    })
}

/// The `aws_route` attribute for a route block's destination field (`cidr_block` →
/// `destination_cidr_block`).
fn route_attribute(field: &str) -> String {
    if field.starts_with("destination_") {
        field.to_owned()
    } else {
        format!("destination_{field}")
    }
}

/// The managed `aws_route` resources of a table.
fn route_resources<'s>(state: &'s StateIndex, table: &str, split: &Split) -> Vec<&'s Instance> {
    state
        .iter()
        .filter(|i| i.mode == Mode::Managed && i.deposed.is_none())
        .filter(|i| i.resource_type == split.resource)
        .filter(|i| i.string_attribute(&split.parent) == Some(table))
        .collect()
}

/// Whether a route resource routes the destination.
fn routes_to(route: &Instance, field: &str, destination: &str) -> bool {
    route.string_attribute(&route_attribute(field)) == Some(destination)
}

/// The new target of the route resource for the destination: the target the call names, and
/// every other target empty: cleared when the resource had it, else as empty as the state
/// holds it (so a target an earlier call of the trail set is undone too).
fn retargeted(effect: &Effect, fields: &Map<String, Value>, route: &Instance) -> Vec<Effect> {
    TARGETS
        .iter()
        .filter_map(|target| {
            let given = fields.get(*target).filter(|v| !is_empty(v));
            let stored = route.attributes.get(*target);
            let value = match (given, stored) {
                (Some(new), _) => new.clone(),
                (None, Some(had)) if !is_empty(had) => Value::Null,
                (None, Some(empty)) => empty.clone(),
                (None, None) => return None,
            };
            let change = Change::Set {
                attribute: (*target).to_owned(),
                value,
            };
            Some(effect.on_instance(route, change))
        })
        .collect()
}

/// A new `aws_route` for an added route, identified by the provider's import id.
fn created(
    effect: &Effect,
    fields: &Map<String, Value>,
    split: &Split,
    field: &str,
    destination: &str,
) -> Effect {
    let table = effect.resource.identity.clone();
    let mut attributes = vec![
        (split.parent.clone(), Value::from(table.clone())),
        (route_attribute(field), Value::from(destination)),
    ];
    attributes.extend(TARGETS.iter().filter_map(|t| {
        Some((
            (*t).to_owned(),
            fields.get(*t).filter(|v| !is_empty(v))?.clone(),
        ))
    }));
    let identity = format!("{table}_{destination}");
    let mut mentions = effect.mentions.clone();
    mentions.push(table);
    Effect {
        resource: ResourceKey {
            resource_type: split.resource.clone(),
            identity: identity.clone(),
        },
        address: None,
        change: Change::Create { attributes },
        mentions,
        allocates: vec![identity],
        ..effect.clone()
    }
}

/// On an inline table, a route for a destination the table routes already: the old block's
/// removal before the new one. `None` when the destination is new.
fn replaced_inline(
    effect: &Effect,
    fields: &Map<String, Value>,
    table: &Value,
    field: &str,
    destination: &str,
) -> Option<Vec<Effect>> {
    let old = table
        .get(BLOCK)?
        .as_array()?
        .iter()
        .filter_map(Value::as_object)
        .find(|route| route.get(field).and_then(Value::as_str) == Some(destination))?;
    if TARGETS.iter().all(|t| same(old.get(*t), fields.get(*t))) {
        return Some(Vec::new());
    }
    let old: Map<String, Value> = old
        .iter()
        .filter(|(_, v)| !is_empty(v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let removed = Effect {
        change: Change::RemoveBlock {
            block: BLOCK.to_owned(),
            fields: old,
        },
        ..effect.clone()
    };
    let added = Effect {
        change: Change::AddBlock {
            block: BLOCK.to_owned(),
            fields: fields.clone(),
        },
        ..effect.clone()
    };
    Some(vec![removed, added])
}

/// Whether two optional field values say the same (absent and empty alike).
fn same(a: Option<&Value>, b: Option<&Value>) -> bool {
    let a = a.filter(|v| !is_empty(v));
    let b = b.filter(|v| !is_empty(v));
    a == b
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::testing::{effect, index, resource};
    use serde_json::json;

    fn added(fields: Value) -> Effect {
        let change = Change::AddBlock {
            block: "route".into(),
            fields: fields.as_object().cloned().unwrap_or_default(),
        };
        let table = ("aws_route_table", "rtb-1");
        effect("ReplaceRoute", table, Some("aws_route_table.main"), change)
    }

    fn fields(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_new_target_for_an_inline_route_replaces_its_block() {
        let state = index(json!([resource(
            "aws_route_table",
            "main",
            json!({
            "id": "rtb-1",
            "route": [
                {"cidr_block": "0.0.0.0/0", "gateway_id": "igw-1", "nat_gateway_id": ""},
                {"cidr_block": "10.9.0.0/16", "gateway_id": "", "vpc_peering_connection_id": "pcx-1"}
            ]})
        )]));
        let effects = as_routes(
            vec![added(
                json!({"cidr_block": "0.0.0.0/0", "nat_gateway_id": "nat-2"}),
            )],
            &state,
        );
        let changes: Vec<&Change> = effects.iter().map(|e| &e.change).collect();
        assert_eq!(
            changes,
            [
                &Change::RemoveBlock {
                    block: "route".into(),
                    fields: fields(json!({"cidr_block": "0.0.0.0/0", "gateway_id": "igw-1"}))
                },
                &Change::AddBlock {
                    block: "route".into(),
                    fields: fields(json!({"cidr_block": "0.0.0.0/0", "nat_gateway_id": "nat-2"}))
                },
            ]
        );
        let new_destination = added(json!({"cidr_block": "10.8.0.0/16", "gateway_id": "igw-1"}));
        assert_eq!(
            as_routes(vec![new_destination.clone()], &state),
            [new_destination]
        );
    }

    #[test]
    fn a_new_target_for_a_route_resource_sets_it_and_clears_the_old_one() {
        let state = index(json!([
            resource(
                "aws_route_table",
                "main",
                json!({"id": "rtb-1", "route": []})
            ),
            resource(
                "aws_route",
                "default",
                json!({
                "id": "r-rtb-11080289494", "route_table_id": "rtb-1",
                "destination_cidr_block": "0.0.0.0/0", "gateway_id": "igw-1"})
            ),
        ]));
        let effects = as_routes(
            vec![added(
                json!({"cidr_block": "0.0.0.0/0", "nat_gateway_id": "nat-2"}),
            )],
            &state,
        );
        let sets: Vec<(&str, &str, &Value)> = effects
            .iter()
            .filter_map(|e| match &e.change {
                Change::Set { attribute, value } => {
                    Some((e.address.as_deref()?, attribute.as_str(), value))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            sets,
            [
                ("aws_route.default", "gateway_id", &Value::Null),
                ("aws_route.default", "nat_gateway_id", &json!("nat-2")),
            ]
        );
    }

    #[test]
    fn a_new_target_leaves_the_other_targets_as_empty_as_the_state_holds_them() {
        let state = index(json!([
            resource(
                "aws_route_table",
                "main",
                json!({"id": "rtb-1", "route": []})
            ),
            resource(
                "aws_route",
                "onprem",
                json!({
                "id": "r-rtb-1123", "route_table_id": "rtb-1", "destination_cidr_block": "10.9.0.0/16",
                "gateway_id": "vgw-1", "transit_gateway_id": ""})
            ),
        ]));
        let effects = as_routes(
            vec![added(
                json!({"cidr_block": "10.9.0.0/16", "gateway_id": "vgw-1"}),
            )],
            &state,
        );
        let transit = effects.iter().find_map(|e| match &e.change {
            Change::Set { attribute, value } if attribute == "transit_gateway_id" => Some(value),
            _ => None,
        });
        assert_eq!(transit, Some(&json!("")));
    }
}
