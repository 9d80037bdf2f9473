//! Converting a variable's value to its declared type: `string`, `number`, `bool`, `any`,
//! `list(T)`, `set(T)`, `map(T)`, `tuple([...])` and `object({...})` with `optional`
//! attributes and their defaults.

use super::expr::{EvalError, as_bool, as_number, string_of};
use super::functions::is_unknown;
use hcl::{Expression, Map, ObjectKey, Value};

/// `value` converted to the type `constraint` writes.
pub(super) fn convert(value: Value, constraint: &Expression) -> Result<Value, EvalError> {
    if value.is_null() || is_unknown(&value) {
        return Ok(value);
    }
    match constraint {
        Expression::Variable(name) => primitive(value, name.as_str()),
        Expression::FuncCall(call) => match (call.name.name.as_str(), call.args.as_slice()) {
            ("list", [element]) => elements(value, element),
            ("set", [element]) => elements(value, element).map(set),
            ("map", [element]) => map(value, element),
            ("tuple", [Expression::Array(types)]) => tuple(value, types),
            ("object", [Expression::Object(attributes)]) => object(value, attributes),
            ("optional", [inner, ..]) => convert(value, inner),
            (other, _) => Err(EvalError::Type(format!("unsupported type {other}"))),
        },
        _ => Ok(value),
    }
}

fn primitive(value: Value, name: &str) -> Result<Value, EvalError> {
    let converted = match name {
        "string" => Value::String(string_of(&value)?),
        "number" => as_number(value),
        "bool" => as_bool(value),
        _ => return Ok(value),
    };
    let fits = match name {
        "number" => converted.is_number(),
        "bool" => converted.is_boolean(),
        _ => true,
    };
    if fits {
        Ok(converted)
    } else {
        Err(EvalError::Type(format!("{converted} is not a {name}")))
    }
}

fn elements(value: Value, element: &Expression) -> Result<Value, EvalError> {
    match value {
        Value::Array(items) => items
            .into_iter()
            .map(|item| convert(item, element))
            .collect(),
        other => Err(EvalError::Type(format!("{other} is not a list"))),
    }
}

/// A list as a set: each element once, in order (numbers by value, the rest as text).
fn set(value: Value) -> Value {
    let Value::Array(mut items) = value else {
        return value;
    };
    items.sort_by(|a, b| match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        _ => a.to_string().cmp(&b.to_string()),
    });
    items.dedup();
    Value::Array(items)
}

fn map(value: Value, element: &Expression) -> Result<Value, EvalError> {
    match value {
        Value::Object(entries) => entries
            .into_iter()
            .map(|(k, v)| Ok((k, convert(v, element)?)))
            .collect::<Result<Map<_, _>, _>>()
            .map(Value::Object),
        other => Err(EvalError::Type(format!("{other} is not a map"))),
    }
}

fn tuple(value: Value, types: &[Expression]) -> Result<Value, EvalError> {
    match value {
        Value::Array(items) if items.len() == types.len() => items
            .into_iter()
            .zip(types)
            .map(|(item, t)| convert(item, t))
            .collect(),
        other => Err(EvalError::Type(format!("{other} does not fit the tuple"))),
    }
}

/// An object converted attribute by attribute; attributes the type does not declare are
/// dropped, an absent `optional` one takes its default (or null).
fn object(
    value: Value,
    attributes: &hcl::Object<ObjectKey, Expression>,
) -> Result<Value, EvalError> {
    let Value::Object(mut given) = value else {
        return Err(EvalError::Type(format!("{value} is not an object")));
    };
    let mut out = Map::new();
    for (key, constraint) in attributes {
        let name = match key {
            ObjectKey::Identifier(id) => id.to_string(),
            ObjectKey::Expression(Expression::String(s)) => s.clone(),
            other => {
                return Err(EvalError::Type(format!(
                    "{other:?} is not an attribute name"
                )));
            }
        };
        let value = match (given.swap_remove(&name), optional(constraint)) {
            (Some(v), _) if !v.is_null() => v,
            (_, Some(default)) => default,
            (Some(v), None) => v,
            (None, None) => return Err(EvalError::Missing(name)),
        };
        out.insert(name, convert(value, constraint)?);
    }
    Ok(Value::Object(out))
}

/// The default of an `optional(T, default)` attribute type: null without one; `None` for a
/// required attribute.
fn optional(constraint: &Expression) -> Option<Value> {
    match constraint {
        Expression::FuncCall(call) if call.name.name.as_str() == "optional" => {
            Some(call.args.get(1).cloned().map_or(Value::Null, Value::from))
        }
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ty(text: &str) -> Expression {
        text.parse().unwrap()
    }

    fn value(text: &str) -> Value {
        Value::from(text.parse::<Expression>().unwrap())
    }

    #[test]
    fn primitives_convert_between_strings_numbers_and_booleans() {
        assert_eq!(convert(value("\"2\""), &ty("number")), Ok(value("2")));
        assert_eq!(convert(value("2"), &ty("string")), Ok(value("\"2\"")));
        assert_eq!(convert(value("\"true\""), &ty("bool")), Ok(value("true")));
        assert!(convert(value("\"x\""), &ty("number")).is_err());
        assert_eq!(convert(value("null"), &ty("number")), Ok(Value::Null));
    }

    #[test]
    fn optional_attributes_take_their_default_and_undeclared_ones_are_dropped() {
        let t = ty(
            "map(object({ versioning = string, expire = optional(number, 30), note = optional(string) }))",
        );
        let got = convert(
            value(
                "{ logs = { versioning = \"Enabled\", extra = 1 }, assets = { versioning = \"Suspended\", expire = \"90\" } }",
            ),
            &t,
        );
        let want = value(
            "{ logs = { versioning = \"Enabled\", expire = 30, note = null }, assets = { versioning = \"Suspended\", expire = 90, note = null } }",
        );
        assert_eq!(got, Ok(want));
        assert!(convert(value("{ a = {} }"), &t).is_err());
    }

    #[test]
    fn sets_hold_each_element_once_in_order() {
        assert_eq!(
            convert(value("[443, 22, 443]"), &ty("set(number)")),
            Ok(value("[22, 443]"))
        );
        assert_eq!(
            convert(value("[\"b\", \"a\"]"), &ty("set(string)")),
            Ok(value("[\"a\", \"b\"]"))
        );
        assert_eq!(
            convert(value("[1, \"2\"]"), &ty("list(string)")),
            Ok(value("[\"1\", \"2\"]"))
        );
    }
}
