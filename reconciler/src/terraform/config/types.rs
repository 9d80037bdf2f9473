//! Variable type constraints and the conversions Terraform makes to meet them, on the one
//! type model of the provider schema ([`AttrType`]): `any` is `dynamic`, and an object
//! attribute written `optional(T, default)` is [`AttrType::Optional`].

use std::collections::BTreeMap;

use hcl::Expression;
use hcl::expr::{FuncCall, ObjectKey};
use knowledge::schema::AttrType;

use crate::terraform::functions::{EvalScope, Value, evaluate};

/// The type a constraint expression stands for; a form not understood is `any`.
pub(super) fn parse_type(expr: &Expression) -> AttrType {
    match expr {
        Expression::Variable(name) => match name.as_str() {
            "string" => AttrType::String,
            "number" => AttrType::Number,
            "bool" => AttrType::Bool,
            _ => AttrType::Dynamic,
        },
        Expression::FuncCall(call) => parse_call(call),
        _ => AttrType::Dynamic,
    }
}

fn parse_call(call: &FuncCall) -> AttrType {
    let inner = || Box::new(call.args.first().map_or(AttrType::Dynamic, parse_type));
    match call.name.name.as_str() {
        "list" => AttrType::List(inner()),
        "set" => AttrType::Set(inner()),
        "map" => AttrType::Map(inner()),
        "tuple" => match call.args.first() {
            Some(Expression::Array(elements)) => {
                AttrType::Tuple(elements.iter().map(parse_type).collect())
            }
            _ => AttrType::Dynamic,
        },
        "object" => match call.args.first() {
            Some(Expression::Object(fields)) => AttrType::Object(
                fields
                    .iter()
                    .filter_map(|(key, value)| Some((key_name(key)?, attribute(value))))
                    .collect(),
            ),
            _ => AttrType::Dynamic,
        },
        _ => AttrType::Dynamic,
    }
}

fn key_name(key: &ObjectKey) -> Option<String> {
    match key {
        ObjectKey::Identifier(name) => Some(name.to_string()),
        ObjectKey::Expression(Expression::String(name)) => Some(name.clone()),
        _ => None,
    }
}

/// An object attribute's type: `optional(T, default)` becomes [`AttrType::Optional`] with the
/// default's value.
fn attribute(expr: &Expression) -> AttrType {
    match expr {
        Expression::FuncCall(call) if call.name.name.as_str() == "optional" => {
            let ty = call.args.first().map_or(AttrType::Dynamic, parse_type);
            let default = call
                .args
                .get(1)
                .and_then(|d| evaluate(d, &EvalScope::new(".")).ok())
                .and_then(|v| v.to_json());
            AttrType::Optional(Box::new(ty), default)
        }
        expr => parse_type(expr),
    }
}

/// Converts `value` to `ty` the way Terraform converts variable values; an error says why not.
pub(super) fn convert(value: Value, ty: &AttrType) -> Result<Value, String> {
    match (ty, value) {
        (_, value @ (Value::Unknown | Value::Null)) | (AttrType::Dynamic, value) => Ok(value),
        (AttrType::Optional(inner, _), value) => convert(value, inner),
        (AttrType::String, value @ (Value::String(_) | Value::Number(_) | Value::Bool(_))) => {
            Ok(Value::String(value.to_text().unwrap_or_default()))
        }
        (AttrType::Number, Value::Number(n)) => Ok(Value::Number(n)),
        (AttrType::Number, Value::String(s)) => s
            .trim()
            .parse()
            .map(Value::Number)
            .map_err(|_| format!("a number is required, not \"{s}\"")),
        (AttrType::Bool, Value::Bool(b)) => Ok(Value::Bool(b)),
        (AttrType::Bool, Value::String(s)) if s == "true" || s == "false" => {
            Ok(Value::Bool(s == "true"))
        }
        (AttrType::List(element), Value::List(items)) => {
            convert_all(items, element).map(Value::List)
        }
        (AttrType::Set(element), Value::List(items)) => convert_all(items, element).map(set_of),
        (AttrType::Tuple(elements), Value::List(items)) if elements.len() == items.len() => items
            .into_iter()
            .zip(elements)
            .map(|(item, ty)| convert(item, ty))
            .collect::<Result<_, String>>()
            .map(Value::List),
        (AttrType::Map(element), Value::Object(map)) => map
            .into_iter()
            .map(|(key, value)| Ok((key, convert(value, element)?)))
            .collect::<Result<_, String>>()
            .map(Value::Object),
        (AttrType::Object(attributes), Value::Object(map)) => convert_object(attributes, map),
        (ty, value) => Err(format!(
            "a {} is required, not a {}",
            kind(ty),
            value.type_name()
        )),
    }
}

/// An object converted attribute by attribute: a missing optional attribute takes its
/// default (itself converted, so nested defaults apply) or null; extra attributes are dropped.
fn convert_object(
    attributes: &BTreeMap<String, AttrType>,
    mut map: BTreeMap<String, Value>,
) -> Result<Value, String> {
    attributes
        .iter()
        .map(|(name, ty)| {
            let value = match (map.remove(name), ty) {
                (Some(value), ty) => convert(value, ty)?,
                (None, AttrType::Optional(inner, Some(default))) => {
                    convert(Value::from_json(default), inner)?
                }
                (None, AttrType::Optional(_, None)) => Value::Null,
                (None, _) => return Err(format!("attribute \"{name}\" is required")),
            };
            Ok((name.clone(), value))
        })
        .collect::<Result<_, String>>()
        .map(Value::Object)
}

fn convert_all(items: Vec<Value>, element: &AttrType) -> Result<Vec<Value>, String> {
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

/// A type's kind in words, for errors.
fn kind(ty: &AttrType) -> &'static str {
    match ty {
        AttrType::Dynamic => "value",
        AttrType::String => "string",
        AttrType::Number => "number",
        AttrType::Bool => "bool",
        AttrType::List(_) => "list",
        AttrType::Set(_) => "set",
        AttrType::Map(_) => "map",
        AttrType::Object(_) => "object",
        AttrType::Tuple(_) => "tuple",
        AttrType::Optional(inner, _) => kind(inner),
    }
}

/// Whether `-var` takes values of this type literally rather than as HCL expressions.
pub(super) fn is_primitive(ty: &AttrType) -> bool {
    matches!(
        ty,
        AttrType::Dynamic | AttrType::String | AttrType::Number | AttrType::Bool
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(text: &str) -> AttrType {
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

    #[test]
    fn defaults_apply_inside_defaults_and_tuples_convert_by_position() {
        // Terraform's documentation example: an optional object whose own attributes have
        // defaults; the outer default `{}` gets the inner defaults.
        let t = ty(
            "object({ a = string, c = optional(object({ d = optional(bool, true), e = optional(string) }), {}) })",
        );
        assert_eq!(
            convert(value("{a = \"x\"}"), &t),
            Ok(value("{a = \"x\", c = {d = true, e = null}}"))
        );
        assert_eq!(
            convert(value("[\"1\", 2]"), &ty("tuple([number, string])")),
            Ok(value("[1, \"2\"]"))
        );
        assert!(convert(value("[1]"), &ty("tuple([number, string])")).is_err());
    }
}
