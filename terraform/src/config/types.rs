//! Variable type constraints, on the one type model of the provider schema ([`AttrType`]):
//! `any` is `dynamic`, and an object attribute written `optional(T, default)` is
//! [`AttrType::Optional`]. Values are converted to them by [`convert`](crate::functions::convert).

use hcl::Expression;
use hcl::expr::{FuncCall, ObjectKey};
use knowledge::schema::AttrType;

use crate::functions::{EvalScope, evaluate};

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
    use crate::functions::{Value, convert};

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
            Ok(Value::Set(vec!["a".into(), "b".into()]))
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
