//! PLACEHOLDER until helper h-func's function library is merged: the few built-in functions
//! the fixture projects call, and the unknown marker.

use hcl::Value;
use hcl::eval::{Context, FuncArgs, FuncDef, ParamType};

/// The marker of a value not known until apply.
const UNKNOWN: &str = "\u{0}(known after apply)";

/// The value not known until apply.
pub fn unknown() -> Value {
    Value::String(UNKNOWN.to_owned())
}

/// Whether `value` is the unknown marker.
pub fn is_unknown(value: &Value) -> bool {
    value.as_str() == Some(UNKNOWN)
}

/// Declares every function.
pub fn declare(ctx: &mut Context) {
    let any = || FuncDef::builder().variadic_param(ParamType::Any);
    ctx.declare_func("merge", any().build(merge));
    ctx.declare_func("toset", any().build(toset));
    ctx.declare_func("length", any().build(length));
    ctx.declare_func("lookup", any().build(lookup));
    ctx.declare_func("keys", any().build(keys));
    ctx.declare_func("concat", any().build(concat));
    ctx.declare_func("tostring", any().build(tostring));
    ctx.declare_func("jsonencode", any().build(jsonencode));
}

fn merge(args: FuncArgs) -> Result<Value, String> {
    let mut out = hcl::Map::new();
    for arg in args.into_values() {
        if let Value::Object(map) = arg {
            out.extend(map);
        }
    }
    Ok(Value::Object(out))
}

fn toset(args: FuncArgs) -> Result<Value, String> {
    let mut items: Vec<Value> = match args.into_values().pop() {
        Some(Value::Array(items)) => items,
        _ => return Err("not a list".to_owned()),
    };
    items.sort_by_key(|v| v.to_string());
    items.dedup();
    Ok(Value::Array(items))
}

fn length(args: FuncArgs) -> Result<Value, String> {
    match args.into_values().pop() {
        Some(Value::Array(items)) => Ok(Value::from(items.len())),
        Some(Value::Object(map)) => Ok(Value::from(map.len())),
        Some(Value::String(s)) => Ok(Value::from(s.chars().count())),
        _ => Err("no length".to_owned()),
    }
}

fn lookup(args: FuncArgs) -> Result<Value, String> {
    let mut args = args.into_values().into_iter();
    let (Some(Value::Object(map)), Some(Value::String(key))) = (args.next(), args.next()) else {
        return Err("lookup".to_owned());
    };
    map.get(&key)
        .cloned()
        .or_else(|| args.next())
        .ok_or_else(|| "no such key".to_owned())
}

fn keys(args: FuncArgs) -> Result<Value, String> {
    match args.into_values().pop() {
        Some(Value::Object(map)) => {
            let mut keys: Vec<String> = map.keys().cloned().collect();
            keys.sort();
            Ok(Value::Array(keys.into_iter().map(Value::String).collect()))
        }
        _ => Err("keys".to_owned()),
    }
}

fn concat(args: FuncArgs) -> Result<Value, String> {
    let mut out = Vec::new();
    for arg in args.into_values() {
        match arg {
            Value::Array(items) => out.extend(items),
            _ => return Err("concat".to_owned()),
        }
    }
    Ok(Value::Array(out))
}

fn tostring(args: FuncArgs) -> Result<Value, String> {
    match args.into_values().pop() {
        Some(Value::String(s)) => Ok(Value::String(s)),
        Some(Value::Number(n)) => Ok(Value::String(n.to_string())),
        Some(Value::Bool(b)) => Ok(Value::String(b.to_string())),
        _ => Err("tostring".to_owned()),
    }
}

fn jsonencode(args: FuncArgs) -> Result<Value, String> {
    let value = args.into_values().pop().unwrap_or(Value::Null);
    let json = serde_json::to_value(&value).map_err(|e| e.to_string())?;
    serde_json::to_string(&json)
        .map(Value::String)
        .map_err(|e| e.to_string())
}
