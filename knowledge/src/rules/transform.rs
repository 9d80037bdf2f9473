//! The closed set of value transforms a rule may apply to what it reads from a payload.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// How a value read from a CloudTrail payload becomes a Terraform attribute value.
///
/// Scalar transforms apply to each value when the path iterates an array; `list`, `set` and
/// `tag_map` apply to the whole collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transform {
    /// The value as it is.
    Raw,
    /// A string; numbers and booleans are written out.
    String,
    /// A whole number; numeric strings (SQS and SNS attributes) are parsed.
    Int,
    /// A number; numeric strings are parsed.
    Number,
    /// A boolean; `"true"`/`"false"` strings are parsed.
    Bool,
    /// A list: one value becomes a one-element list.
    List,
    /// A set: a list sorted and with duplicates removed.
    Set,
    /// Route 53 record values as a set, as the AWS provider keeps a record's `records`: a
    /// value in double quotes (a TXT or SPF value, the only types whose values Route 53
    /// keeps quoted) loses its outer pair, and only that (`"a" "b"`, a value split into
    /// strings of 255 characters, becomes `a" "b`).
    RecordValues,
    /// A JSON document held in a string (policies), percent-decoded first when IAM encoded it.
    Json,
    /// A lower-case string.
    Lower,
    /// An upper-case string.
    Upper,
    /// S3/DynamoDB-style status words: `Enabled`/`ENABLED` → true, `Disabled`/`Suspended` → false.
    EnabledBool,
    /// A resource name from an ARN (`arn:...:function:f` → `f`, `...:role/path/r` → `r`);
    /// a value that is not an ARN is kept.
    NameFromArn,
    /// Tags as a map: a list of `{key, value}` objects (any capitalisation) or a map.
    TagMap,
    /// The text after the last `/` (Route 53's `/hostedzone/Z123` → `Z123`).
    LastSegment,
    /// A DNS name in the one form Route 53 names compare in ([`crate::dns::canonical_name`]:
    /// `\052.Example.com.` → `*.example.com`), as the provider keeps a record's `name`.
    DnsName,
    /// A Route 53 record set's part of the provider's record id, after the zone:
    /// `NAME_TYPE`, and `_SETIDENTIFIER` after it for a routing policy's record, the name as
    /// `dns_name` gives it (`{name: "API.example.com.", type: "A", setIdentifier: "blue"}`
    /// → `api.example.com_A_blue`).
    RecordSetKey,
    /// The first of the values (e.g. the image of a `RunInstances` call's one instance set).
    First,
    /// Whether the path holds anything: `true` for any value (an empty XML element such as
    /// S3's `<EventBridgeConfiguration/>` counts), `false` when the payload lacks it.
    Present,
}

impl Transform {
    /// Whether the transform works on a whole collection rather than on each value.
    pub fn is_collection(self) -> bool {
        matches!(
            self,
            Self::List
                | Self::Set
                | Self::RecordValues
                | Self::TagMap
                | Self::First
                | Self::Present
        )
    }

    /// Applies the transform to the values a path selected; `iterated` says whether the path
    /// iterates (so the values form a list even when there is one).
    pub fn apply(self, values: Vec<Value>, iterated: bool) -> Result<Value, String> {
        if self.is_collection() {
            let whole = match (iterated, values.len()) {
                (false, 1) => values.into_iter().next().unwrap_or(Value::Null),
                _ => Value::Array(values),
            };
            return self.apply_one(whole);
        }
        if iterated {
            let mapped = values
                .into_iter()
                .map(|v| self.apply_one(v))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Value::Array(mapped));
        }
        self.apply_one(values.into_iter().next().unwrap_or(Value::Null))
    }

    /// Applies the transform to one value.
    pub fn apply_one(self, value: Value) -> Result<Value, String> {
        match self {
            Self::Raw => Ok(value),
            Self::String => to_string(&value).map(Value::String),
            Self::Int => to_int(&value),
            Self::Number => to_number(&value),
            Self::Bool => to_bool(&value),
            Self::List => Ok(to_list(value)),
            Self::Set => Ok(to_set(value)),
            Self::RecordValues => Ok(to_set(unquoted(to_list(value)))),
            Self::Json => to_json(&value),
            Self::Lower => to_string(&value).map(|s| Value::String(s.to_lowercase())),
            Self::Upper => to_string(&value).map(|s| Value::String(s.to_uppercase())),
            Self::EnabledBool => enabled_bool(&value),
            Self::NameFromArn => to_string(&value).map(|s| Value::String(name_from_arn(&s))),
            Self::TagMap => tag_map(value).map(Value::Object),
            Self::LastSegment => to_string(&value)
                .map(|s| Value::String(s.rsplit('/').next().unwrap_or_default().to_owned())),
            Self::DnsName => {
                to_string(&value).map(|s| Value::String(crate::dns::canonical_name(&s)))
            }
            Self::RecordSetKey => record_set_key(&value).map(Value::String),
            Self::Present => Ok(Value::Bool(true)),
            Self::First => match value {
                Value::Array(items) => Ok(items.into_iter().next().unwrap_or(Value::Null)),
                other => Ok(other),
            },
        }
    }
}

fn to_string(value: &Value) -> Result<String, String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        other => Err(format!("expected a string, found {other}")),
    }
}

fn to_int(value: &Value) -> Result<Value, String> {
    let parsed = match value {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    };
    parsed
        .map(Value::from)
        .ok_or_else(|| format!("expected a whole number, found {value}"))
}

fn to_number(value: &Value) -> Result<Value, String> {
    match value {
        Value::Number(_) => Ok(value.clone()),
        Value::String(s) => serde_json::from_str::<serde_json::Number>(s.trim())
            .map(Value::Number)
            .map_err(|_| format!("expected a number, found {value}")),
        other => Err(format!("expected a number, found {other}")),
    }
}

fn to_bool(value: &Value) -> Result<Value, String> {
    match value {
        Value::Bool(_) => Ok(value.clone()),
        Value::String(s) if s.eq_ignore_ascii_case("true") => Ok(Value::Bool(true)),
        Value::String(s) if s.eq_ignore_ascii_case("false") => Ok(Value::Bool(false)),
        other => Err(format!("expected a boolean, found {other}")),
    }
}

fn to_list(value: Value) -> Value {
    match value {
        Value::Array(_) => value,
        Value::Null => Value::Array(Vec::new()),
        other => Value::Array(vec![other]),
    }
}

fn to_set(value: Value) -> Value {
    let Value::Array(mut items) = to_list(value) else {
        return Value::Array(Vec::new());
    };
    items.sort_by_key(|v| v.to_string());
    items.dedup();
    Value::Array(items)
}

fn record_set_key(set: &Value) -> Result<String, String> {
    let field = |name: &str| {
        set.get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let name = field("name").ok_or("a record set without a name")?;
    let record_type = field("type").ok_or("a record set without a type")?;
    let key = format!("{}_{record_type}", crate::dns::canonical_name(name));
    Ok(match field("setIdentifier") {
        Some(set_identifier) => format!("{key}_{set_identifier}"),
        None => key,
    })
}

/// The values with the outer pair of double quotes of each quoted string removed.
fn unquoted(values: Value) -> Value {
    let Value::Array(items) = values else {
        return values;
    };
    let strip = |item: Value| match item {
        Value::String(text) if text.len() >= 2 && text.starts_with('"') && text.ends_with('"') => {
            Value::String(text[1..text.len() - 1].to_owned())
        }
        other => other,
    };
    Value::Array(items.into_iter().map(strip).collect())
}

fn to_json(value: &Value) -> Result<Value, String> {
    let Value::String(text) = value else {
        // Already structured (some services log the document as an object).
        return Ok(value.clone());
    };
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        // An empty document removes it (SQS's `Policy` set to "" removes the queue policy).
        return Ok(Value::Null);
    }
    let decoded = if trimmed.starts_with('%') || !trimmed.starts_with(['{', '[']) {
        percent_decode(text)?
    } else {
        text.clone()
    };
    serde_json::from_str(&decoded).map_err(|e| format!("not a JSON document: {e}"))
}

/// Decodes `%XX` escapes (and `+` as space, as form encoding writes it).
fn percent_decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = text
                    .get(i + 1..i + 3)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| format!("bad percent escape at byte {i}"))?;
                out.push(hex);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| "percent-decoded text is not UTF-8".to_owned())
}

fn enabled_bool(value: &Value) -> Result<Value, String> {
    match value {
        Value::Bool(_) => Ok(value.clone()),
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "enabled" | "enable" | "on" | "true" => Ok(Value::Bool(true)),
            "disabled" | "disable" | "suspended" | "off" | "false" => Ok(Value::Bool(false)),
            _ => Err(format!(
                "expected Enabled or Disabled/Suspended, found \"{s}\""
            )),
        },
        other => Err(format!("expected a status word, found {other}")),
    }
}

/// The resource name in an ARN; other text is returned as it is.
///
/// `type:name[:qualifier]` resources give `name` (Lambda functions, log groups), `type/.../name`
/// resources the last segment (IAM), and bare resources themselves (S3, SNS, SQS).
pub fn name_from_arn(text: &str) -> String {
    let mut parts = text.splitn(6, ':');
    let (Some("arn"), Some(resource)) = (parts.next(), parts.nth(4)) else {
        return text.to_owned();
    };
    let colon = resource.find(':');
    let slash = resource.find('/');
    match (colon, slash) {
        (Some(c), s) if s.is_none_or(|s| c < s) => {
            let rest = &resource[c + 1..];
            rest.split(':').next().unwrap_or(rest).to_owned()
        }
        (_, Some(_)) => resource.rsplit('/').next().unwrap_or(resource).to_owned(),
        _ => resource.to_owned(),
    }
}

fn tag_map(value: Value) -> Result<Map<String, Value>, String> {
    match value {
        Value::Object(map) if !is_tag_entry(&map) => Ok(map),
        Value::Object(map) => tag_map(Value::Array(vec![Value::Object(map)])),
        Value::Array(items) => items.iter().map(tag_pair).collect(),
        Value::Null => Ok(Map::new()),
        other => Err(format!("expected tags, found {other}")),
    }
}

/// The names a tag's key and value go by: EC2, IAM and most services write `key`/`value`,
/// S3 and Route 53 `Key`/`Value`, KMS `TagKey`/`TagValue` (`tagKey`/`tagValue` in CloudTrail);
/// CloudWatch dimensions are `{name, value}` lists made into maps the same way.
const KEY_NAMES: [&str; 6] = ["key", "Key", "tagKey", "TagKey", "name", "Name"];
const VALUE_NAMES: [&str; 6] = ["value", "Value", "tagValue", "TagValue", "value", "Value"];

fn is_tag_entry(map: &Map<String, Value>) -> bool {
    KEY_NAMES.iter().any(|k| map.contains_key(*k))
}

/// One `{key, value}` object (or `{Key, Value}`), the value defaulting to empty.
fn tag_pair(item: &Value) -> Result<(String, Value), String> {
    let field = |names: [&str; 6]| names.iter().find_map(|n| item.get(*n));
    let key = field(KEY_NAMES)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("tag without a key: {item}"))?;
    let value = field(VALUE_NAMES)
        .cloned()
        .unwrap_or_else(|| Value::String(String::new()));
    Ok((key.to_owned(), value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(t: Transform, v: Value) -> Result<Value, String> {
        t.apply(vec![v], false)
    }

    #[test]
    fn scalars() {
        assert_eq!(one(Transform::String, json!(5)), Ok(json!("5")));
        assert_eq!(one(Transform::Int, json!("30")), Ok(json!(30)));
        assert!(one(Transform::Int, json!("3.5")).is_err());
        assert_eq!(one(Transform::Number, json!("2.5")), Ok(json!(2.5)));
        assert_eq!(one(Transform::Bool, json!("TRUE")), Ok(json!(true)));
        assert!(one(Transform::Bool, json!(1)).is_err());
        assert_eq!(one(Transform::Lower, json!("GP3")), Ok(json!("gp3")));
        assert_eq!(one(Transform::Upper, json!("tcp")), Ok(json!("TCP")));
        assert_eq!(one(Transform::Raw, json!({"a": 1})), Ok(json!({"a": 1})));
        assert!(one(Transform::String, json!({"a": 1})).is_err());
    }

    #[test]
    fn status_words() {
        assert_eq!(
            one(Transform::EnabledBool, json!("Enabled")),
            Ok(json!(true))
        );
        assert_eq!(
            one(Transform::EnabledBool, json!("Suspended")),
            Ok(json!(false))
        );
        assert_eq!(
            one(Transform::EnabledBool, json!("DISABLED")),
            Ok(json!(false))
        );
        assert!(one(Transform::EnabledBool, json!("maybe")).is_err());
    }

    #[test]
    fn collections() {
        assert_eq!(one(Transform::List, json!("a")), Ok(json!(["a"])));
        assert_eq!(
            Transform::Set.apply(vec![json!("b"), json!("a"), json!("b")], true),
            Ok(json!(["a", "b"]))
        );
        assert_eq!(
            Transform::List.apply(vec![json!("x")], true),
            Ok(json!(["x"]))
        );
        assert_eq!(
            Transform::First.apply(vec![json!("m"), json!("n")], true),
            Ok(json!("m"))
        );
        assert_eq!(
            Transform::Lower.apply(vec![json!("A"), json!("B")], true),
            Ok(json!(["a", "b"]))
        );
    }

    #[test]
    fn json_documents_plain_and_percent_encoded() {
        let plain = json!("{\"Version\": \"2012-10-17\"}");
        assert_eq!(
            one(Transform::Json, plain),
            Ok(json!({"Version": "2012-10-17"}))
        );
        let encoded = json!("%7B%22Version%22%3A%20%222012-10-17%22%7D");
        assert_eq!(
            one(Transform::Json, encoded),
            Ok(json!({"Version": "2012-10-17"}))
        );
        assert!(one(Transform::Json, json!("%7Bnot json")).is_err());
        assert!(one(Transform::Json, json!("%ZZ")).is_err());
    }

    #[test]
    fn arn_names() {
        assert_eq!(
            name_from_arn("arn:aws:lambda:us-east-1:123456789012:function:my-fn"),
            "my-fn"
        );
        assert_eq!(
            name_from_arn("arn:aws:iam::123456789012:role/service/app"),
            "app"
        );
        assert_eq!(
            name_from_arn("arn:aws:sns:us-east-1:123456789012:alerts"),
            "alerts"
        );
        assert_eq!(name_from_arn("my-fn"), "my-fn");
        assert_eq!(name_from_arn("arn:aws:s3:::bucket"), "bucket");
        assert_eq!(name_from_arn("arn:aws:lambda:r:1:function:f:live"), "f");
        assert_eq!(
            one(
                Transform::NameFromArn,
                json!("arn:aws:logs:r:1:log-group:/app/x:*")
            ),
            Ok(json!("/app/x"))
        );
    }

    #[test]
    fn last_segments() {
        assert_eq!(
            one(Transform::LastSegment, json!("/hostedzone/Z123")),
            Ok(json!("Z123"))
        );
        assert_eq!(one(Transform::LastSegment, json!("Z9")), Ok(json!("Z9")));
    }

    #[test]
    fn dns_names_lose_the_trailing_dot() {
        assert_eq!(
            one(Transform::DnsName, json!("www.example.com.")),
            Ok(json!("www.example.com"))
        );
        assert_eq!(
            one(Transform::DnsName, json!("\\052.WWW.example.com.")),
            Ok(json!("*.www.example.com"))
        );
        assert_eq!(
            one(Transform::DnsName, json!("a.example")),
            Ok(json!("a.example"))
        );
    }

    #[test]
    fn record_set_keys_name_the_record_as_the_provider_id_does() {
        assert_eq!(
            one(
                Transform::RecordSetKey,
                json!({"name": "API.example.com.", "type": "A", "setIdentifier": "blue"})
            ),
            Ok(json!("api.example.com_A_blue"))
        );
        assert_eq!(
            one(
                Transform::RecordSetKey,
                json!({"name": "_x1.example.com", "type": "CNAME", "tTL": 60})
            ),
            Ok(json!("_x1.example.com_CNAME"))
        );
        assert!(one(Transform::RecordSetKey, json!({"type": "A"})).is_err());
    }

    #[test]
    fn record_values_lose_the_quotes_route53_keeps_around_a_txt_value() {
        let values = vec![
            json!("\"v=spf1 include:_spf.example.net -all\""),
            json!("\"k=rsa; p=first255\" \"rest\""),
            json!("10 mx1.example.net."),
            json!("0 issue \"amazon.com\""),
        ];
        assert_eq!(
            Transform::RecordValues.apply(values, true),
            Ok(json!([
                "0 issue \"amazon.com\"",
                "10 mx1.example.net.",
                "k=rsa; p=first255\" \"rest",
                "v=spf1 include:_spf.example.net -all"
            ]))
        );
        assert_eq!(
            Transform::RecordValues.apply(vec![json!("\"a\"")], false),
            Ok(json!(["a"]))
        );
        // A lone quote is no pair (the provider strips only a first and a last character).
        assert_eq!(
            Transform::RecordValues.apply(vec![json!("\"")], false),
            Ok(json!(["\""]))
        );
    }

    #[test]
    fn tag_maps() {
        let list = json!([{"key": "a", "value": "1"}, {"Key": "b", "Value": "2"}]);
        assert_eq!(
            one(Transform::TagMap, list),
            Ok(json!({"a": "1", "b": "2"}))
        );
        assert_eq!(
            one(Transform::TagMap, json!({"Key": "solo", "Value": "x"})),
            Ok(json!({"solo": "x"}))
        );
        assert_eq!(
            one(Transform::TagMap, json!({"a": "1"})),
            Ok(json!({"a": "1"}))
        );
        assert!(one(Transform::TagMap, json!([{"value": "1"}])).is_err());
        assert_eq!(
            one(Transform::TagMap, json!([{"tagKey": "k", "tagValue": "v"}])),
            Ok(json!({"k": "v"}))
        );
    }
}
