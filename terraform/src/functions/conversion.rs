//! Type conversion functions (`tostring`, `tolist`, `toset`, ...), the sensitivity and
//! ephemerality functions, and the functions whose values differ on every run (`timestamp`,
//! `plantimestamp`, `uuid`).

use std::collections::BTreeMap;

use super::convert::{into_set, to_bool, to_number, unify};
use super::{Builtin, Call, EvalError, Value};

/// The conversion and apply-time functions.
pub(super) const FUNCTIONS: &[Builtin] = &[
    Builtin::fixed("ephemeralasnull", 1, identity).shallow(),
    Builtin::fixed("nonsensitive", 1, identity).shallow(),
    Builtin::fixed("plantimestamp", 0, known_after_apply),
    Builtin::fixed("sensitive", 1, identity).shallow(),
    Builtin::fixed("timestamp", 0, known_after_apply),
    Builtin::fixed("tobool", 1, tobool),
    Builtin::fixed("tolist", 1, tolist).shallow(),
    Builtin::fixed("tomap", 1, tomap).shallow(),
    Builtin::fixed("tonumber", 1, tonumber),
    Builtin::fixed("toset", 1, toset),
    Builtin::fixed("tostring", 1, tostring),
    Builtin::fixed("uuid", 0, known_after_apply),
];

fn known_after_apply(_call: &Call) -> Result<Value, EvalError> {
    Ok(Value::Unknown)
}

/// `sensitive` and `nonsensitive` only mark values, and this evaluator has no marks; neither
/// has it ephemeral values (ephemeral resources are not in any scope), so `ephemeralasnull`
/// returns its argument.
fn identity(call: &Call) -> Result<Value, EvalError> {
    call.arg(0).cloned()
}

fn tostring(call: &Call) -> Result<Value, EvalError> {
    match call.arg(0)? {
        Value::Null => Ok(Value::Null),
        _ => call.string(0).map(Value::String),
    }
}

fn tonumber(call: &Call) -> Result<Value, EvalError> {
    match call.arg(0)? {
        Value::Null => Ok(Value::Null),
        value => to_number(value)
            .map(Value::Number)
            .ok_or_else(|| call.error(format!("cannot convert {value} to a number"))),
    }
}

fn tobool(call: &Call) -> Result<Value, EvalError> {
    match call.arg(0)? {
        Value::Null => Ok(Value::Null),
        value => to_bool(value)
            .map(Value::Bool)
            .ok_or_else(|| call.error(format!("cannot convert {value} to a bool"))),
    }
}

fn tolist(call: &Call) -> Result<Value, EvalError> {
    match call.arg(0)? {
        Value::Null => Ok(Value::Null),
        _ => Ok(Value::List(one_type(call, call.list(0)?.to_vec())?)),
    }
}

fn toset(call: &Call) -> Result<Value, EvalError> {
    match call.arg(0)? {
        Value::Null => Ok(Value::Null),
        _ => Ok(into_set(one_type(call, call.list(0)?.to_vec())?)),
    }
}

fn tomap(call: &Call) -> Result<Value, EvalError> {
    if call.arg(0)? == &Value::Null {
        return Ok(Value::Null);
    }
    let map = call.object(0)?;
    let values = one_type(call, map.values().cloned().collect())?;
    Ok(Value::Object(
        map.keys().cloned().zip(values).collect::<BTreeMap<_, _>>(),
    ))
}

/// The elements of the collection given one type, or the function's error.
fn one_type(call: &Call, items: Vec<Value>) -> Result<Vec<Value>, EvalError> {
    unify(items).map_err(|message| call.error(message))
}
