//! Variable type constraints and the simple conversions Terraform makes to meet them.

use std::collections::BTreeMap;

use hcl::Expression;
use hcl::expr::{FuncCall, ObjectKey};

use crate::terraform::functions::{EvalScope, Value, evaluate};

/// A type constraint, as written in a `variable` block's `type`.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Type {
    /// `any`, or a form not understood: no conversion.
    Any,
    /// `string`.
    String,
    /// `number`.
    Number,
    /// `bool`.
    Bool,
    /// `list(T)` or `tuple([...])` (tuples are checked element by element as lists of `any`).
    List(Box<Type>),
    /// `set(T)`.
    Set(Box<Type>),
    /// `map(T)`.
    Map(Box<Type>),
    /// `object({...})`.
    Object(BTreeMap<String, Attribute>),
}

/// One attribute of an object type.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Attribute {
    ty: Type,
    optional: bool,
    default: Option<Value>,
}

/// The type a constraint expression stands for.
pub(super) fn parse_type(expr: &Expression) -> Type {
    match expr {
        Expression::Variable(name) => match name.as_str() {
            "string" => Type::String,
            "number" => Type::Number,
            "bool" => Type::Bool,
            _ => Type::Any,
        },
        Expression::FuncCall(call) => parse_call(call),
        _ => Type::Any,
    }
}

fn parse_call(call: &FuncCall) -> Type {
    let inner = || call.args.first().map_or(Type::Any, parse_type);
    match call.name.name.as_str() {
        "list" => Type::List(Box::new(inner())),
        "set" => Type::Set(Box::new(inner())),
        "map" => Type::Map(Box::new(inner())),
        "tuple" => Type::List(Box::new(Type::Any)),
        "object" => match call.args.first() {
            Some(Expression::Object(fields)) => Type::Object(
                fields
                    .iter()
                    .filter_map(|(key, value)| Some((key_name(key)?, attribute(value))))
                    .collect(),
            ),
            _ => Type::Any,
        },
        _ => Type::Any,
    }
}

fn key_name(key: &ObjectKey) -> Option<String> {
    match key {
        ObjectKey::Identifier(name) => Some(name.to_string()),
        ObjectKey::Expression(Expression::String(name)) => Some(name.clone()),
        _ => None,
    }
}

/// An object attribute's type, unwrapping `optional(T, default)`.
fn attribute(expr: &Expression) -> Attribute {
    match expr {
        Expression::FuncCall(call) if call.name.name.as_str() == "optional" => Attribute {
            ty: call.args.first().map_or(Type::Any, parse_type),
            optional: true,
            default: call
                .args
                .get(1)
                .and_then(|d| evaluate(d, &EvalScope::new(".")).ok()),
        },
        expr => Attribute {
            ty: parse_type(expr),
            optional: false,
            default: None,
        },
    }
}

/// Converts `value` to `ty` the way Terraform converts variable values; an error says why not.
pub(super) fn convert(value: Value, ty: &Type) -> Result<Value, String> {
    match (ty, value) {
        (_, value @ (Value::Unknown | Value::Null)) | (Type::Any, value) => Ok(value),
        (Type::String, value @ (Value::String(_) | Value::Number(_) | Value::Bool(_))) => {
            Ok(Value::String(value.to_text().unwrap_or_default()))
        }
        (Type::Number, Value::Number(n)) => Ok(Value::Number(n)),
        (Type::Number, Value::String(s)) => s
            .trim()
            .parse()
            .map(Value::Number)
            .map_err(|_| format!("a number is required, not {s:?}")),
        (Type::Bool, Value::Bool(b)) => Ok(Value::Bool(b)),
        (Type::Bool, Value::String(s)) if s == "true" || s == "false" => {
            Ok(Value::Bool(s == "true"))
        }
        (Type::List(element), Value::List(items)) => convert_all(items, element).map(Value::List),
        (Type::Set(element), Value::List(items)) => convert_all(items, element).map(set_of),
        (Type::Map(element), Value::Object(map)) => map
            .into_iter()
            .map(|(key, value)| Ok((key, convert(value, element)?)))
            .collect::<Result<_, String>>()
            .map(Value::Object),
        (Type::Object(attributes), Value::Object(mut map)) => attributes
            .iter()
            .map(|(name, attribute)| {
                let value = match map.remove(name) {
                    Some(value) => convert(value, &attribute.ty)?,
                    None if attribute.optional => attribute.default.clone().unwrap_or(Value::Null),
                    None => return Err(format!("attribute {name:?} is required")),
                };
                Ok((name.clone(), value))
            })
            .collect::<Result<_, String>>()
            .map(Value::Object),
        (ty, value) => Err(format!(
            "a {} is required, not a {}",
            ty.name(),
            value.type_name()
        )),
    }
}

fn convert_all(items: Vec<Value>, element: &Type) -> Result<Vec<Value>, String> {
    items.into_iter().map(|v| convert(v, element)).collect()
}

/// A set: duplicates removed, sorted the way Terraform orders sets of strings and numbers.
fn set_of(items: Vec<Value>) -> Value {
    let mut unique: Vec<Value> = Vec::with_capacity(items.len());
    for item in items {
        if !unique.contains(&item) {
            unique.push(item);
        }
    }
    unique.sort_by(|a, b| match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.total_cmp(y),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        _ => std::cmp::Ordering::Equal,
    });
    Value::List(unique)
}

impl Type {
    fn name(&self) -> &'static str {
        match self {
            Type::Any => "value",
            Type::String => "string",
            Type::Number => "number",
            Type::Bool => "bool",
            Type::List(_) => "list",
            Type::Set(_) => "set",
            Type::Map(_) => "map",
            Type::Object(_) => "object",
        }
    }

    /// Whether `-var` takes values of this type literally rather than as HCL expressions.
    pub fn is_primitive(&self) -> bool {
        matches!(self, Type::Any | Type::String | Type::Number | Type::Bool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(text: &str) -> Type {
        parse_type(&text.parse().expect("parses"))
    }

    fn value(text: &str) -> Value {
        evaluate(&text.parse().expect("parses"), &EvalScope::new(".")).expect("evaluates")
    }

    #[test]
    fn primitives_convert_from_strings_and_back() {
        assert_eq!(
            convert(value("\"2\""), &ty("number")),
            Ok(Value::Number(2.0))
        );
        assert_eq!(
            convert(value("\"true\""), &ty("bool")),
            Ok(Value::Bool(true))
        );
        assert_eq!(convert(value("5"), &ty("string")), Ok(value("\"5\"")));
        assert!(convert(value("\"two\""), &ty("number")).is_err());
        assert!(convert(value("[1]"), &ty("string")).is_err());
    }

    #[test]
    fn collections_convert_element_by_element() {
        assert_eq!(
            convert(value("[\"1\", 2]"), &ty("list(number)")),
            Ok(value("[1, 2]"))
        );
        assert_eq!(
            convert(value("[\"b\", \"a\", \"b\"]"), &ty("set(string)")),
            Ok(value("[\"a\", \"b\"]"))
        );
        assert_eq!(
            convert(value("{a = 1}"), &ty("map(string)")),
            Ok(value("{a = \"1\"}"))
        );
    }

    #[test]
    fn objects_fill_optional_attributes_and_drop_extra_ones() {
        let t =
            ty("object({ name = string, size = optional(number, 30), tag = optional(string) })");
        assert_eq!(
            convert(value("{name = \"x\", extra = true}"), &t),
            Ok(value("{name = \"x\", size = 30, tag = null}"))
        );
        assert!(convert(value("{size = 1}"), &t).is_err());
    }
}
