//! Attribute types: Terraform's cty types, read from their JSON form (`"string"`,
//! `["list", "string"]`, `["object", {"a": "number"}]`, ...).

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

/// The type of an attribute value, as Terraform's type system (cty) names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttrType {
    /// `string`.
    String,
    /// `number`.
    Number,
    /// `bool`.
    Bool,
    /// `dynamic`: any type, decided by the value.
    Dynamic,
    /// `list(T)`: an ordered sequence.
    List(Box<AttrType>),
    /// `set(T)`: an unordered collection without duplicates.
    Set(Box<AttrType>),
    /// `map(T)`: string keys to values of one type.
    Map(Box<AttrType>),
    /// `object({...})`: named fields, each with its own type.
    Object(BTreeMap<String, AttrType>),
    /// `tuple([...])`: a fixed sequence of types.
    Tuple(Vec<AttrType>),
    /// An object field a value may leave out, with the default Terraform fills in:
    /// `optional(T, default)` in a variable's type constraint (cty's optional attributes).
    Optional(Box<AttrType>, Option<Value>),
}

impl AttrType {
    /// Reads a type from its JSON form; the error says what was wrong, for the caller to place.
    pub fn from_json(value: &Value) -> Result<Self, String> {
        match value {
            Value::String(name) => primitive(name),
            Value::Array(parts) => compound(parts),
            other => Err(format!("a type is a string or an array, not {other}")),
        }
    }

    /// The element type of a list, set or map; `None` for every other type.
    pub fn element(&self) -> Option<&AttrType> {
        match self {
            Self::List(inner) | Self::Set(inner) | Self::Map(inner) => Some(inner),
            _ => None,
        }
    }
}

fn primitive(name: &str) -> Result<AttrType, String> {
    match name {
        "string" => Ok(AttrType::String),
        "number" => Ok(AttrType::Number),
        "bool" => Ok(AttrType::Bool),
        "dynamic" => Ok(AttrType::Dynamic),
        other => Err(format!("unknown primitive type \"{other}\"")),
    }
}

fn compound(parts: &[Value]) -> Result<AttrType, String> {
    let (Some(Value::String(kind)), Some(arg)) = (parts.first(), parts.get(1)) else {
        return Err("a compound type is [kind, argument]".to_owned());
    };
    let boxed = || AttrType::from_json(arg).map(Box::new);
    match kind.as_str() {
        "list" => Ok(AttrType::List(boxed()?)),
        "set" => Ok(AttrType::Set(boxed()?)),
        "map" => Ok(AttrType::Map(boxed()?)),
        // A third element lists optional fields (type constraints); providers do not use it.
        "object" => object(arg, parts.get(2)),
        "tuple" => tuple(arg),
        other => Err(format!("unknown compound type \"{other}\"")),
    }
}

fn object(fields: &Value, optional: Option<&Value>) -> Result<AttrType, String> {
    let Value::Object(fields) = fields else {
        return Err("an object type's fields are a JSON object".to_owned());
    };
    let optional: Vec<&str> = optional
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    fields
        .iter()
        .map(|(name, ty)| {
            let ty = AttrType::from_json(ty).map_err(|e| format!("field \"{name}\": {e}"))?;
            let ty = if optional.contains(&name.as_str()) {
                AttrType::Optional(Box::new(ty), None)
            } else {
                ty
            };
            Ok((name.clone(), ty))
        })
        .collect::<Result<_, String>>()
        .map(AttrType::Object)
}

fn tuple(elements: &Value) -> Result<AttrType, String> {
    let Value::Array(elements) = elements else {
        return Err("a tuple type's elements are a JSON array".to_owned());
    };
    elements
        .iter()
        .map(AttrType::from_json)
        .collect::<Result<_, _>>()
        .map(AttrType::Tuple)
}

impl fmt::Display for AttrType {
    /// Writes the type as Terraform's type constraint syntax, e.g. `list(string)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::String => f.write_str("string"),
            Self::Number => f.write_str("number"),
            Self::Bool => f.write_str("bool"),
            Self::Dynamic => f.write_str("any"),
            Self::List(inner) => write!(f, "list({inner})"),
            Self::Set(inner) => write!(f, "set({inner})"),
            Self::Map(inner) => write!(f, "map({inner})"),
            Self::Object(fields) => {
                f.write_str("object({")?;
                for (i, (name, ty)) in fields.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}{name} = {ty}")?;
                }
                f.write_str("})")
            }
            Self::Tuple(elements) => {
                f.write_str("tuple([")?;
                for (i, ty) in elements.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}{ty}")?;
                }
                f.write_str("])")
            }
            Self::Optional(inner, None) => write!(f, "optional({inner})"),
            Self::Optional(inner, Some(default)) => write!(f, "optional({inner}, {default})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(value: Value) -> AttrType {
        AttrType::from_json(&value).expect("accepted")
    }

    #[test]
    fn reads_primitives_and_collections() {
        assert_eq!(parse(json!("string")), AttrType::String);
        assert_eq!(parse(json!("dynamic")), AttrType::Dynamic);
        assert_eq!(parse(json!(["set", "number"])).to_string(), "set(number)");
        assert_eq!(
            parse(json!(["map", ["list", "bool"]])).to_string(),
            "map(list(bool))"
        );
    }

    #[test]
    fn reads_objects_and_tuples() {
        let ty =
            parse(json!(["list", ["object", {"to_port": "number", "cidr": ["list", "string"]}]]));
        assert_eq!(
            ty.to_string(),
            "list(object({cidr = list(string), to_port = number}))"
        );
        assert_eq!(
            parse(json!(["tuple", ["string", "bool"]])).to_string(),
            "tuple([string, bool])"
        );
        let with_optional = parse(json!(["object", {"a": "string"}, ["a"]]));
        assert_eq!(with_optional.to_string(), "object({a = optional(string)})");
    }

    #[test]
    fn element_of_collections_only() {
        assert_eq!(
            parse(json!(["list", "string"])).element(),
            Some(&AttrType::String)
        );
        assert_eq!(parse(json!("string")).element(), None);
    }

    #[test]
    fn rejects_malformed_types() {
        for bad in [
            json!("text"),
            json!(["list"]),
            json!(["vector", "string"]),
            json!(3),
            json!(["object", []]),
        ] {
            assert!(AttrType::from_json(&bad).is_err(), "{bad} accepted");
        }
        let err =
            AttrType::from_json(&json!(["object", {"port": "integer"}])).expect_err("rejected");
        assert!(err.contains("\"port\""), "{err}");
    }
}
