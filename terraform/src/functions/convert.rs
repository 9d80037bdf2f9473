//! Terraform's type conversions, the one place where a value is made to meet a type: a
//! variable's type constraint, `count` and `for_each`, a function's parameters, operators and
//! the `to*` functions all convert by these rules.
//!
//! The rules are those of Terraform 1.11 (its type system, cty): a number or bool converts to a
//! string; a string converts to a number when it is a decimal number with nothing around it,
//! and to a bool when it is `"true"` or `"false"` (Terraform also takes `"1"` and `"0"`);
//! a bool and a number never convert into each other; null converts to every type and stays
//! null. A list of any element type (`list(any)`, `tolist`) gives its elements one type: a mix
//! of strings with numbers or bools becomes strings, lists and objects unify element by
//! element, and elements with no common type are an error. A list and a set convert into
//! each other (a set's elements each once, in Terraform's order); maps and objects convert
//! into each other.

use std::collections::{BTreeMap, BTreeSet};

use knowledge::schema::AttrType;

use super::Value;

/// Converts `value` to `ty`; an error says why it cannot be converted.
pub fn convert(value: Value, ty: &AttrType) -> Result<Value, String> {
    match (ty, value) {
        (_, value @ (Value::Unknown | Value::Null)) | (AttrType::Dynamic, value) => Ok(value),
        (AttrType::Optional(inner, _), value) => convert(value, inner),
        (AttrType::String, value) => value
            .to_text()
            .map(Value::String)
            .ok_or_else(|| format!("a string is required, not a {}", value.type_name())),
        (AttrType::Number, value) => {
            to_number(&value)
                .map(Value::Number)
                .ok_or_else(|| match &value {
                    Value::String(s) => format!("a number is required, not \"{s}\""),
                    other => format!("a number is required, not a {}", other.type_name()),
                })
        }
        (AttrType::Bool, value) => to_bool(&value)
            .map(Value::Bool)
            .ok_or_else(|| match &value {
                Value::String(s) => format!("a bool is required, not \"{s}\""),
                other => format!("a bool is required, not a {}", other.type_name()),
            }),
        (AttrType::List(element), Value::List(items) | Value::Set(items)) => {
            elements(items, element).map(Value::List)
        }
        (AttrType::Set(element), Value::List(items) | Value::Set(items)) => {
            elements(items, element).map(into_set)
        }
        (AttrType::Tuple(types), Value::List(items) | Value::Set(items))
            if types.len() == items.len() =>
        {
            items
                .into_iter()
                .zip(types)
                .map(|(item, ty)| convert(item, ty))
                .collect::<Result<_, String>>()
                .map(Value::List)
        }
        (AttrType::Map(element), Value::Object(map)) => {
            let (keys, values): (Vec<String>, Vec<Value>) = map.into_iter().unzip();
            let values = elements(values, element)?;
            Ok(Value::Object(keys.into_iter().zip(values).collect()))
        }
        (AttrType::Object(attributes), Value::Object(map)) => convert_object(attributes, map),
        (ty, value) => Err(format!(
            "a {} is required, not a {}",
            kind(ty),
            value.type_name()
        )),
    }
}

/// A collection's elements converted to its element type; `any` gives them one common type.
fn elements(items: Vec<Value>, element: &AttrType) -> Result<Vec<Value>, String> {
    match element {
        AttrType::Dynamic => unify(items),
        element => items.into_iter().map(|v| convert(v, element)).collect(),
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

/// The elements of a collection given one type, as `list(any)`, `set(any)` and `map(any)`
/// (and `tolist`, `toset`, `tomap`) do: nulls and unknowns stay; primitives of one kind stay,
/// and strings mixed with numbers or bools make them all strings; lists and sets unify their
/// elements together (each set staying a set); objects with the same attributes unify
/// attribute by attribute, and objects with different attributes become maps of one element
/// type.
pub(crate) fn unify(items: Vec<Value>) -> Result<Vec<Value>, String> {
    let known: Vec<&Value> = items
        .iter()
        .filter(|v| !matches!(v, Value::Null | Value::Unknown))
        .collect();
    let kinds: BTreeSet<&str> = known
        .iter()
        .map(|v| match v {
            Value::Set(_) => "list",
            v => v.type_name(),
        })
        .collect();
    let no_common_type = || "the elements have no common type".to_string();
    match kinds.into_iter().collect::<Vec<_>>().as_slice() {
        [] | ["string"] | ["number"] | ["bool"] => Ok(items),
        [_, _] | [_, _, _] if known.iter().all(|v| v.to_text().is_some()) => {
            if !known.iter().any(|v| matches!(v, Value::String(_))) {
                return Err(no_common_type());
            }
            Ok(items
                .into_iter()
                .map(|v| v.to_text().map_or(v, Value::String))
                .collect())
        }
        ["list"] => unify_lists(items),
        ["object"] => unify_objects(items),
        _ => Err(no_common_type()),
    }
}

/// Lists and sets unified together: all their elements get one type.
fn unify_lists(items: Vec<Value>) -> Result<Vec<Value>, String> {
    let flat: Vec<Value> = items
        .iter()
        .filter_map(Value::elements)
        .flatten()
        .cloned()
        .collect();
    let mut flat = unify(flat)?.into_iter();
    Ok(items
        .into_iter()
        .map(|item| match item {
            Value::List(inner) => Value::List(flat.by_ref().take(inner.len()).collect()),
            Value::Set(inner) => into_set(flat.by_ref().take(inner.len()).collect()),
            item => item,
        })
        .collect())
}

/// Objects unified: attribute by attribute when all have the same attributes, else as maps
/// whose values all get one type.
fn unify_objects(items: Vec<Value>) -> Result<Vec<Value>, String> {
    let key_sets: BTreeSet<Vec<&String>> = items
        .iter()
        .filter_map(|v| match v {
            Value::Object(map) => Some(map.keys().collect()),
            _ => None,
        })
        .collect();
    let same_attributes = key_sets.len() == 1;
    let groups: Vec<Vec<(String, Value)>> = items
        .iter()
        .map(|v| match v {
            Value::Object(map) => map.clone().into_iter().collect(),
            _ => Vec::new(),
        })
        .collect();
    let mut unified: Vec<Vec<(String, Value)>> = groups.clone();
    if same_attributes {
        let width = groups.iter().map(Vec::len).max().unwrap_or(0);
        for column in 0..width {
            let cells: Vec<Value> = groups
                .iter()
                .filter_map(|g| g.get(column).map(|(_, v)| v.clone()))
                .collect();
            let mut cells = unify(cells)?.into_iter();
            for group in unified.iter_mut().filter(|g| g.len() > column) {
                group[column].1 = cells.next().unwrap_or(Value::Null);
            }
        }
    } else {
        let mut values =
            unify(groups.iter().flatten().map(|(_, v)| v.clone()).collect())?.into_iter();
        for cell in unified.iter_mut().flatten() {
            cell.1 = values.next().unwrap_or(Value::Null);
        }
    }
    Ok(items
        .into_iter()
        .zip(unified)
        .map(|(item, group)| match item {
            Value::Object(_) => Value::Object(group.into_iter().collect()),
            other => other,
        })
        .collect())
}

/// A value as a number: numbers, and strings holding a decimal number and nothing else.
pub(crate) fn to_number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(number) => Some(*number),
        Value::String(text) => text.parse().ok().filter(|number: &f64| number.is_finite()),
        _ => None,
    }
}

/// A value as a bool: bools, and the strings `"true"`, `"false"`, `"1"` and `"0"`.
pub(crate) fn to_bool(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(flag) => Some(*flag),
        Value::String(text) => match text.as_str() {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// The set of `items`: sorted and without duplicates, as Terraform orders a set's elements.
pub(crate) fn into_set(mut items: Vec<Value>) -> Value {
    items.sort_by(compare_values);
    items.dedup();
    Value::Set(items)
}

/// Set ordering: numbers by value, then strings, then everything else by its JSON text.
fn compare_values(left: &Value, right: &Value) -> std::cmp::Ordering {
    match (left, right) {
        (Value::Number(a), Value::Number(b)) => a.total_cmp(b),
        (Value::String(a), Value::String(b)) => a.cmp(b),
        _ => left.to_string().cmp(&right.to_string()),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::functions::{EvalScope, evaluate};

    fn value(text: &str) -> Value {
        evaluate(&text.parse().expect("parses"), &EvalScope::new(".")).expect("evaluates")
    }

    fn list(element: AttrType) -> AttrType {
        AttrType::List(Box::new(element))
    }

    /// The conversion table of Terraform's type constraints documentation ("Conversion of
    /// Primitive Types": `true` <-> `"true"`, `false` <-> `"false"`, `15` <-> `"15"`), with
    /// the answers of `terraform console` 1.11 for the edges the documentation leaves out.
    #[test]
    fn primitives_convert_as_terraform_converts_them() {
        let table: [(&str, AttrType, Option<&str>); 19] = [
            ("true", AttrType::String, Some("\"true\"")),
            ("\"true\"", AttrType::Bool, Some("true")),
            ("false", AttrType::String, Some("\"false\"")),
            ("\"false\"", AttrType::Bool, Some("false")),
            ("15", AttrType::String, Some("\"15\"")),
            ("\"15\"", AttrType::Number, Some("15")),
            ("1.5", AttrType::String, Some("\"1.5\"")),
            ("\"1e3\"", AttrType::Number, Some("1000")),
            ("\".5\"", AttrType::Number, Some("0.5")),
            ("\"1\"", AttrType::Bool, Some("true")),
            ("\"0\"", AttrType::Bool, Some("false")),
            ("null", AttrType::Number, Some("null")),
            ("\" 2\"", AttrType::Number, None),
            ("\"0x10\"", AttrType::Number, None),
            ("\"True\"", AttrType::Bool, None),
            ("\"no\"", AttrType::Bool, None),
            ("true", AttrType::Number, None),
            ("1", AttrType::Bool, None),
            ("[]", AttrType::String, None),
        ];
        for (given, ty, expected) in table {
            let converted = convert(value(given), &ty);
            match expected {
                Some(expected) => assert_eq!(converted, Ok(value(expected)), "{given} to {ty:?}"),
                None => assert!(converted.is_err(), "{given} to {ty:?}: {converted:?}"),
            }
        }
    }

    /// `list(any)`, `map(any)` and `set(any)` (what `tolist`, `tomap` and `toset` convert to)
    /// give the elements one type, as `terraform console` shows.
    #[test]
    fn collections_of_any_give_their_elements_one_type() {
        let any_list = list(AttrType::Dynamic);
        let unified = |given: &str, ty: &AttrType| convert(value(given), ty);
        assert_eq!(
            unified("[1, \"a\"]", &any_list),
            Ok(value("[\"1\", \"a\"]"))
        );
        assert_eq!(unified("[null, 1]", &any_list), Ok(value("[null, 1]")));
        assert!(unified("[true, 1]", &any_list).is_err());
        assert!(unified("[\"a\", {}]", &any_list).is_err());
        assert_eq!(
            unified("[[1], [\"a\"]]", &any_list),
            Ok(value("[[\"1\"], [\"a\"]]"))
        );
        // objects with different attributes become maps of one type; with the same
        // attributes, each attribute keeps its own type
        assert_eq!(
            unified("[{a = 1}, {b = \"x\"}]", &any_list),
            Ok(value("[{a = \"1\"}, {b = \"x\"}]"))
        );
        assert_eq!(
            unified("[{a = 1, b = \"x\"}, {a = 2, b = true}]", &any_list),
            Ok(value("[{a = 1, b = \"x\"}, {a = 2, b = \"true\"}]"))
        );
        let any_map = AttrType::Map(Box::new(AttrType::Dynamic));
        assert_eq!(
            unified("{a = 1, b = \"x\"}", &any_map),
            Ok(value("{a = \"1\", b = \"x\"}"))
        );
        assert!(unified("{a = [1], b = \"x\"}", &any_map).is_err());
        let any_set = AttrType::Set(Box::new(AttrType::Dynamic));
        assert_eq!(
            unified("[1, 2, \"1\"]", &any_set),
            Ok(Value::Set(vec!["1".into(), "2".into()]))
        );
        // sets in a list unify with each other and stay sets
        assert_eq!(
            unified("[toset([1]), toset([\"a\"])]", &any_list),
            Ok(Value::List(vec![
                Value::Set(vec!["1".into()]),
                Value::Set(vec!["a".into()])
            ]))
        );
    }

    #[test]
    fn typed_collections_convert_each_element_and_refuse_other_shapes() {
        assert_eq!(
            convert(value("[\"1\", 2]"), &list(AttrType::Number)),
            Ok(value("[1, 2]"))
        );
        assert!(convert(value("[\"x\"]"), &list(AttrType::Number)).is_err());
        // a set converts to a list of its elements in its order
        assert_eq!(
            convert(value("toset([\"b\", \"a\"])"), &list(AttrType::String)),
            Ok(Value::List(vec!["a".into(), "b".into()]))
        );
        assert!(convert(value("{a = 1}"), &list(AttrType::Number)).is_err());
        assert!(convert(value("[1]"), &AttrType::Map(Box::new(AttrType::String))).is_err());
    }
}
