//! Terraform's values as JSON (state attributes, call parameters): looking a dotted path up,
//! and equality as Terraform sees it.

use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Looks a dotted attribute path up in state attributes; a nested block (a list of one object
/// in state) is stepped into transparently, and a numeric step indexes a list.
pub fn lookup<'a>(attributes: &'a Value, path: &str) -> Option<&'a Value> {
    let mut here = attributes;
    for step in path.split('.') {
        here = match here {
            Value::Object(map) => map.get(step)?,
            Value::Array(items) => match step.parse::<usize>() {
                Ok(i) => items.get(i)?,
                Err(_) if items.len() == 1 => items[0].get(step)?,
                Err(_) => return None,
            },
            _ => return None,
        };
    }
    Some(here)
}

/// The string entries of a JSON object (a `tags` map), or none when it is not an object.
pub fn string_map(value: Option<&Value>) -> BTreeMap<String, String> {
    value
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether two values are equal the way Terraform compares them: numbers by value, strings
/// holding numbers or booleans equal to those, sets (lists) regardless of order, and an empty
/// list equal to null.
pub fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Array(v)) | (Value::Array(v), Value::Null) => v.is_empty(),
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::String(s), Value::Number(n)) | (Value::Number(n), Value::String(s)) => {
            s.parse::<f64>().ok() == n.as_f64()
        }
        (Value::String(s), Value::Bool(v)) | (Value::Bool(v), Value::String(s)) => {
            s == if *v { "true" } else { "false" }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len()
                && x.iter().all(|i| y.iter().any(|j| same_value(i, j)))
                && y.iter().all(|j| x.iter().any(|i| same_value(i, j)))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        (Value::String(text), document @ (Value::Object(_) | Value::Array(_)))
        | (document @ (Value::Object(_) | Value::Array(_)), Value::String(text)) => {
            serde_json::from_str::<Value>(text).is_ok_and(|parsed| same_value(&parsed, document))
        }
        (Value::String(x), Value::String(y)) if x != y => same_document(x, y),
        _ => a == b,
    }
}

/// Whether two strings hold the same JSON document (policies differ in key order and spacing
/// between what a call sent, what the state holds and what `jsonencode` writes).
fn same_document(x: &str, y: &str) -> bool {
    let framed = |s: &str| s.trim_start().starts_with(['{', '[']);
    if !framed(x) || !framed(y) {
        return false;
    }
    match (
        serde_json::from_str::<Value>(x),
        serde_json::from_str::<Value>(y),
    ) {
        (Ok(p), Ok(q)) => same_value(&p, &q),
        _ => false,
    }
}

/// Whether two nested blocks are the same: every attribute both name is equal, and attributes
/// only one names are empty in the other (a revoke names a rule by fewer fields than the
/// block has).
pub fn same_block(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter().all(|k| match (a.get(k), b.get(k)) {
        (Some(x), Some(y)) => same_value(x, y),
        (Some(x), None) | (None, Some(x)) => is_empty(x),
        (None, None) => true,
    })
}

/// Whether a removal described by `pattern` (a revoke's fields) removes `block`: the fields the
/// pattern names must match, and of the others the block may hold only a description or `false`
/// flags (such as `self`). AWS matches a revoked rule on its protocol, ports and source and needs
/// no description to revoke it; a state block also spells out flags the call leaves unsaid.
pub fn removes(pattern: &Map<String, Value>, block: &Map<String, Value>) -> bool {
    let named: Map<String, Value> = block
        .iter()
        .filter(|(k, v)| {
            pattern.contains_key(*k) || !(k.as_str() == "description" || **v == Value::Bool(false))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    same_block(pattern, &named)
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}
