//! The value model of the evaluator: Terraform's values plus an explicit unknown.

use std::collections::BTreeMap;
use std::fmt;

/// A Terraform value as seen by the evaluator.
///
/// Lists and tuples are both `List`; a set is a `Set`, whose elements are in Terraform's
/// order for sets, each once (see `toset`); maps and objects are both `Object`, whose keys are
/// sorted as Terraform shows them. `Unknown` stands for a value that is only known after apply.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Known only after apply (a computed attribute, `timestamp()`, `uuid()`, ...).
    Unknown,
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A number (Terraform's numbers are arbitrary precision; `f64` is close enough here).
    Number(f64),
    /// A string.
    String(String),
    /// A list or tuple.
    List(Vec<Value>),
    /// A set: each element once, strings in lexical order and numbers by value, as Terraform
    /// orders them. Iterating one (`for`, `for_each`, `dynamic`) gives each element as its own
    /// key, and its elements have no index.
    Set(Vec<Value>),
    /// A map or object.
    Object(BTreeMap<String, Value>),
}

impl Value {
    /// The elements of a list, tuple or set, in order; `None` for any other value.
    pub fn elements(&self) -> Option<&[Value]> {
        match self {
            Value::List(items) | Value::Set(items) => Some(items),
            _ => None,
        }
    }

    /// The key and value of each element, as `for` expressions and `dynamic` blocks iterate
    /// over a collection: a list's positions, a map's keys, a set's elements themselves (a
    /// set's key is its value); `None` for a value that is not a collection.
    pub fn entries(&self) -> Option<Vec<(Value, Value)>> {
        Some(match self {
            Value::List(items) => items
                .iter()
                .enumerate()
                .map(|(index, item)| (Value::Number(index as f64), item.clone()))
                .collect(),
            Value::Set(items) => items
                .iter()
                .map(|item| (item.clone(), item.clone()))
                .collect(),
            Value::Object(map) => map
                .iter()
                .map(|(key, value)| (Value::String(key.clone()), value.clone()))
                .collect(),
            _ => return None,
        })
    }

    /// Whether this value or anything inside it is unknown.
    pub fn contains_unknown(&self) -> bool {
        match self {
            Value::Unknown => true,
            Value::List(items) | Value::Set(items) => items.iter().any(Value::contains_unknown),
            Value::Object(map) => map.values().any(Value::contains_unknown),
            _ => false,
        }
    }

    /// The Terraform name of this value's type, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Unknown => "unknown",
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::List(_) => "list",
            Value::Set(_) => "set",
            Value::Object(_) => "object",
        }
    }

    /// The value as a string the way template interpolation and `tostring` convert it:
    /// strings, numbers and booleans only.
    pub fn to_text(&self) -> Option<String> {
        match self {
            Value::String(text) => Some(text.clone()),
            Value::Number(number) => Some(format_number(*number)),
            Value::Bool(flag) => Some(flag.to_string()),
            _ => None,
        }
    }

    /// The JSON form of a known value; `None` when it contains an unknown.
    pub fn to_json(&self) -> Option<serde_json::Value> {
        Some(match self {
            Value::Unknown => return None,
            Value::Null => serde_json::Value::Null,
            Value::Bool(flag) => serde_json::Value::Bool(*flag),
            Value::Number(number) => json_number(*number),
            Value::String(text) => serde_json::Value::String(text.clone()),
            Value::List(items) | Value::Set(items) => {
                serde_json::Value::Array(items.iter().map(Value::to_json).collect::<Option<_>>()?)
            }
            Value::Object(map) => serde_json::Value::Object(
                map.iter()
                    .map(|(key, value)| Some((key.clone(), value.to_json()?)))
                    .collect::<Option<_>>()?,
            ),
        })
    }

    /// The value of a JSON document.
    pub fn from_json(json: &serde_json::Value) -> Value {
        match json {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(flag) => Value::Bool(*flag),
            serde_json::Value::Number(number) => Value::Number(number.as_f64().unwrap_or(f64::NAN)),
            serde_json::Value::String(text) => Value::String(text.clone()),
            serde_json::Value::Array(items) => {
                Value::List(items.iter().map(Value::from_json).collect())
            }
            serde_json::Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, value)| (key.clone(), Value::from_json(value)))
                    .collect(),
            ),
        }
    }
}

impl From<&hcl::Value> for Value {
    fn from(value: &hcl::Value) -> Self {
        match value {
            hcl::Value::Null => Value::Null,
            hcl::Value::Bool(flag) => Value::Bool(*flag),
            hcl::Value::Number(number) => Value::Number(number.as_f64().unwrap_or(f64::NAN)),
            hcl::Value::String(text) => Value::String(text.clone()),
            hcl::Value::Array(items) => Value::List(items.iter().map(Value::from).collect()),
            hcl::Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, value)| (key.clone(), Value::from(value)))
                    .collect(),
            ),
        }
    }
}

impl From<&str> for Value {
    fn from(text: &str) -> Self {
        Value::String(text.to_string())
    }
}

impl From<String> for Value {
    fn from(text: String) -> Self {
        Value::String(text)
    }
}

impl From<f64> for Value {
    fn from(number: f64) -> Self {
        Value::Number(number)
    }
}

impl From<bool> for Value {
    fn from(flag: bool) -> Self {
        Value::Bool(flag)
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(items: Vec<T>) -> Self {
        Value::List(items.into_iter().map(Into::into).collect())
    }
}

impl fmt::Display for Value {
    /// Known values print as their JSON; unknown prints as `(known after apply)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_json() {
            Some(json) => write!(f, "{json}"),
            None => f.write_str("(known after apply)"),
        }
    }
}

/// Whole numbers print without a fractional part, as Terraform shows them.
pub(crate) fn format_number(number: f64) -> String {
    if number.fract() == 0.0 && number.abs() < 1e15 {
        format!("{}", number as i64)
    } else {
        format!("{number}")
    }
}

fn json_number(number: f64) -> serde_json::Value {
    if number.fract() == 0.0 && number.abs() < 1e15 {
        serde_json::Value::from(number as i64)
    } else {
        serde_json::Number::from_f64(number)
            .map_or(serde_json::Value::Null, serde_json::Value::Number)
    }
}
