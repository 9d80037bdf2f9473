//! Reading `requestParameters` as CloudTrail logs them: EC2's `{"items": [...]}` wrappers,
//! XML-derived S3 bodies where a one-element list is a plain object, and numbers or booleans
//! that some services log as strings.

use serde_json::Value;

use super::ctx::ApiError;

/// The elements of a list-valued parameter: `{"items": [..]}`, a JSON array, a single object
/// (XML bodies with one element), or nothing.
pub fn items<'a>(params: &'a Value, key: &str) -> Vec<&'a Value> {
    list(params.get(key))
}

/// The elements of a list-shaped value (see [`items`]).
pub fn list(value: Option<&Value>) -> Vec<&Value> {
    match value {
        Some(Value::Array(a)) => a.iter().collect(),
        Some(Value::Object(o)) if o.contains_key("items") => list(o.get("items")),
        Some(Value::Object(o)) if o.is_empty() => Vec::new(),
        Some(v @ Value::Object(_)) => vec![v],
        Some(v @ (Value::String(_) | Value::Number(_))) => vec![v],
        _ => Vec::new(),
    }
}

/// A required string parameter, or AWS's `MissingParameter` error.
pub fn string<'a>(params: &'a Value, key: &str) -> Result<&'a str, ApiError> {
    opt_string(params, key).ok_or_else(|| missing(key))
}

/// An optional string parameter.
pub fn opt_string<'a>(params: &'a Value, key: &str) -> Option<&'a str> {
    params.get(key).and_then(Value::as_str)
}

/// An optional integer parameter, given as a number or a numeric string, or inside EC2's
/// `{"value": ..}` wrapper.
pub fn opt_int(params: &Value, key: &str) -> Option<i64> {
    as_int(unwrap_value(params.get(key)?))
}

/// A required integer parameter.
pub fn int(params: &Value, key: &str) -> Result<i64, ApiError> {
    opt_int(params, key).ok_or_else(|| missing(key))
}

/// An optional boolean parameter, given as a bool or `"true"`/`"false"`, possibly inside
/// EC2's `{"value": ..}` wrapper.
pub fn opt_bool(params: &Value, key: &str) -> Option<bool> {
    as_bool(unwrap_value(params.get(key)?))
}

/// EC2's `{"value": x}` attribute wrapper, removed.
pub fn unwrap_value(value: &Value) -> &Value {
    value.get("value").unwrap_or(value)
}

/// A number or numeric string as an integer.
pub fn as_int(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A number or numeric string as a float.
pub fn as_float(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A bool or `"true"`/`"false"`.
pub fn as_bool(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Tags given as a list of `{key, value}` objects, with the key names a service uses
/// (`key`/`value`, `Key`/`Value`, `tagKey`/`tagValue`).
pub fn tag_list(value: Option<&Value>) -> Vec<(String, String)> {
    list(value)
        .into_iter()
        .filter_map(|t| {
            let key = ["key", "Key", "tagKey", "TagKey"]
                .iter()
                .find_map(|k| t.get(*k).and_then(Value::as_str))?;
            let value = ["value", "Value", "tagValue", "TagValue"]
                .iter()
                .find_map(|k| t.get(*k).and_then(Value::as_str))
                .unwrap_or_default();
            Some((key.to_owned(), value.to_owned()))
        })
        .collect()
}

/// Tags given as a JSON object of key to value.
pub fn tag_map(value: Option<&Value>) -> Vec<(String, String)> {
    value
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// Strings of a list-shaped parameter.
pub fn strings(value: Option<&Value>) -> Vec<String> {
    list(value)
        .into_iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// The `MissingParameter` error AWS returns for an absent required parameter.
pub fn missing(key: &str) -> ApiError {
    ApiError::new(
        "MissingParameter",
        format!("The request must contain the parameter {key}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lists_in_every_shape() {
        let p = json!({"a": {"items": [1, 2]}, "b": [3], "c": {"x": 1}, "d": {}});
        assert_eq!(items(&p, "a").len(), 2);
        assert_eq!(items(&p, "b").len(), 1);
        assert_eq!(items(&p, "c"), vec![&json!({"x": 1})]);
        assert!(items(&p, "d").is_empty());
        assert!(items(&p, "e").is_empty());
    }

    #[test]
    fn wrapped_and_string_scalars() {
        let p = json!({"t": {"value": "true"}, "n": "42", "m": {"value": 7}});
        assert_eq!(opt_bool(&p, "t"), Some(true));
        assert_eq!(opt_int(&p, "n"), Some(42));
        assert_eq!(opt_int(&p, "m"), Some(7));
    }

    #[test]
    fn tags_in_each_service_spelling() {
        let v = json!([{"key": "a", "value": "1"}, {"TagKey": "b", "TagValue": "2"}]);
        assert_eq!(
            tag_list(Some(&v)),
            vec![("a".into(), "1".into()), ("b".into(), "2".into())]
        );
    }
}
