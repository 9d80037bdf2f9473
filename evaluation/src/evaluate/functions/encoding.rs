//! Encoding and hashing functions: JSON, base64, URL query escaping, MD5, SHA-256.

use super::{Value, arg, number_text, number_value, sorted_map, string_arg};
use base64::Engine;
use sha2::Digest;
use std::fmt::Write;

/// `jsonencode(value)`: the value as compact JSON, map keys sorted, numbers without a needless
/// ".0", and `<`, `>`, `&`, U+2028 and U+2029 escaped as `\u...`, as Terraform writes them.
pub(super) fn jsonencode(args: &[Value]) -> Result<Value, String> {
    Ok(Value::from(json(arg(args, 0))))
}

/// `value` in JSON as `jsonencode` writes it.
pub(super) fn json(value: &Value) -> String {
    let mut json = String::new();
    write_json(value, &mut json);
    json
}

/// Appends `value` to `json` in JSON.
fn write_json(value: &Value, json: &mut String) {
    match value {
        Value::Null => json.push_str("null"),
        Value::Bool(flag) => json.push_str(if *flag { "true" } else { "false" }),
        Value::Number(number) => json.push_str(&number_text(number)),
        Value::String(text) => json.push_str(&json_string(text)),
        Value::Array(items) => {
            json.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    json.push(',');
                }
                write_json(item, json);
            }
            json.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by_key(|(key, _)| *key);
            json.push('{');
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    json.push(',');
                }
                json.push_str(&json_string(key));
                json.push(':');
                write_json(item, json);
            }
            json.push('}');
        }
    }
}

/// `text` as a JSON string, escaped as Terraform escapes it.
fn json_string(text: &str) -> String {
    quote(text, true)
}

/// `text` in double quotes with JSON's escapes; with `escape_html`, also `<`, `>`, `&`,
/// U+2028 and U+2029.
pub(super) fn quote(text: &str, escape_html: bool) -> String {
    let mut json = String::from('"');
    for c in text.chars() {
        match c {
            '"' => json.push_str("\\\""),
            '\\' => json.push_str("\\\\"),
            '\n' => json.push_str("\\n"),
            '\r' => json.push_str("\\r"),
            '\t' => json.push_str("\\t"),
            '\u{8}' => json.push_str("\\b"),
            '\u{c}' => json.push_str("\\f"),
            c if c < ' ' || (escape_html && "<>&\u{2028}\u{2029}".contains(c)) => {
                let _ = write!(json, "\\u{:04x}", u32::from(c));
            }
            other => json.push(other),
        }
    }
    json.push('"');
    json
}

/// `jsondecode(string)`: the value the JSON text describes.
pub(super) fn jsondecode(args: &[Value]) -> Result<Value, String> {
    let json: serde_json::Value = serde_json::from_str(&string_arg(args, 0)?)
        .map_err(|err| format!("invalid JSON: {err}"))?;
    from_json(json)
}

/// A JSON value as an HCL value.
fn from_json(json: serde_json::Value) -> Result<Value, String> {
    Ok(match json {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(flag) => Value::Bool(flag),
        serde_json::Value::Number(number) => match (number.as_u64(), number.as_i64()) {
            (Some(whole), _) => Value::from(whole),
            (None, Some(whole)) => Value::from(whole),
            _ => number_value(number.as_f64().unwrap_or(f64::NAN))?,
        },
        serde_json::Value::String(text) => Value::String(text),
        serde_json::Value::Array(items) => {
            Value::Array(items.into_iter().map(from_json).collect::<Result<_, _>>()?)
        }
        serde_json::Value::Object(map) => sorted_map(
            map.into_iter()
                .map(|(key, item)| Ok((key, from_json(item)?)))
                .collect::<Result<Vec<_>, String>>()?,
        ),
    })
}

/// `bytes` in standard base64 with padding.
pub(super) fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// `bytes` in lower-case hexadecimal.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut hex, byte| {
        let _ = write!(hex, "{byte:02x}");
        hex
    })
}

/// The MD5 digest of `bytes` in hexadecimal.
pub(super) fn md5_hex(bytes: &[u8]) -> String {
    hex(&md5::Md5::digest(bytes))
}

/// The SHA-256 digest of `bytes` in hexadecimal.
pub(super) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&sha2::Sha256::digest(bytes))
}

/// The SHA-256 digest of `bytes` in base64.
pub(super) fn sha256_base64(bytes: &[u8]) -> String {
    base64(&sha2::Sha256::digest(bytes))
}

/// `base64encode(string)`: the string's UTF-8 bytes in base64.
pub(super) fn base64encode(args: &[Value]) -> Result<Value, String> {
    Ok(Value::from(base64(string_arg(args, 0)?.as_bytes())))
}

/// `base64decode(string)`: the UTF-8 text a base64 string encodes.
pub(super) fn base64decode(args: &[Value]) -> Result<Value, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(string_arg(args, 0)?)
        .map_err(|err| format!("invalid base64: {err}"))?;
    String::from_utf8(bytes)
        .map(Value::from)
        .map_err(|_| "the decoded bytes are not valid UTF-8".to_owned())
}

/// `md5(string)`: the MD5 digest of the string, in hexadecimal.
pub(super) fn md5(args: &[Value]) -> Result<Value, String> {
    Ok(Value::from(md5_hex(string_arg(args, 0)?.as_bytes())))
}

/// `sha256(string)`: the SHA-256 digest of the string, in hexadecimal.
pub(super) fn sha256(args: &[Value]) -> Result<Value, String> {
    Ok(Value::from(sha256_hex(string_arg(args, 0)?.as_bytes())))
}

/// `base64sha256(string)`: the SHA-256 digest of the string, in base64.
pub(super) fn base64sha256(args: &[Value]) -> Result<Value, String> {
    Ok(Value::from(sha256_base64(string_arg(args, 0)?.as_bytes())))
}

/// `urlencode(string)`: the string escaped for a URL's query: letters, digits and `-_.~`
/// kept, spaces as `+`, other bytes as `%XX`.
pub(super) fn urlencode(args: &[Value]) -> Result<Value, String> {
    let mut encoded = String::new();
    for byte in string_arg(args, 0)?.bytes() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                encoded.push(char::from(byte));
            }
            b' ' => encoded.push('+'),
            other => {
                let _ = write!(encoded, "%{other:02X}");
            }
        }
    }
    Ok(Value::from(encoded))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{check, check_text, check_unknown, fails};

    #[test]
    fn jsonencode_writes_terraform_json() {
        // Documentation: jsonencode({"hello"="world"}) is {"hello":"world"}; "<", ">" and "&"
        // are escaped as \u003c, \u003e and \u0026.
        check_text(r#"jsonencode({"hello" = "world"})"#, r#"{"hello":"world"}"#);
        check_text(
            r#"jsonencode({b = [1, 2.5, true, null], a = "x"})"#,
            r#"{"a":"x","b":[1,2.5,true,null]}"#,
        );
        check_text(r#"jsonencode("<a & b>")"#, r#""\u003ca \u0026 b\u003e""#);
        check_text(r#"jsonencode("q\"\\\n\t")"#, r#""q\"\\\n\t""#);
        check_text("jsonencode(3.0)", "3");
        check_text("jsonencode([])", "[]");
        check_unknown(r#"jsonencode({a = u})"#);
    }

    #[test]
    fn jsondecode_reads_json() {
        // Documentation: jsondecode("{\"hello\": \"world\"}") is {hello = "world"},
        // jsondecode("true") is true.
        check(
            r#"jsondecode("{\"hello\": \"world\"}")"#,
            r#"{hello = "world"}"#,
        );
        check(r#"jsondecode("true")"#, "true");
        check(
            r#"jsondecode("[1, -2, 2.5, null, {\"a\": []}]")"#,
            r#"[1, -2, 2.5, null, {a = []}]"#,
        );
        fails(r#"jsondecode("{")"#, "invalid JSON");
        check_unknown("jsondecode(u)");
    }

    #[test]
    fn base64_and_digests() {
        // Documentation: base64encode("Hello World") is "SGVsbG8gV29ybGQ="; md5("hello
        // world") is "5eb63bbbe01eeed093cb22bb8f5acdc3"; sha256("hello world") is
        // "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9";
        // base64sha256("hello world") is "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=".
        check_text(r#"base64encode("Hello World")"#, "SGVsbG8gV29ybGQ=");
        check_text(r#"base64decode("SGVsbG8gV29ybGQ=")"#, "Hello World");
        fails(r#"base64decode("!!")"#, "invalid base64");
        fails(r#"base64decode("/w==")"#, "not valid UTF-8");
        check_text(r#"md5("hello world")"#, "5eb63bbbe01eeed093cb22bb8f5acdc3");
        check_text(
            r#"sha256("hello world")"#,
            "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9",
        );
        check_text(
            r#"base64sha256("hello world")"#,
            "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=",
        );
        check_unknown("md5(u)");
    }

    #[test]
    fn urlencode_escapes_for_a_query() {
        // Documentation: urlencode("Hello World!") is "Hello+World%21", urlencode("☃") is
        // "%E2%98%83", urlencode("foo:bar@localhost?foo=bar&bar=baz") is
        // "foo%3Abar%40localhost%3Ffoo%3Dbar%26bar%3Dbaz".
        check_text(r#"urlencode("Hello World!")"#, "Hello+World%21");
        check_text(r#"urlencode("☃")"#, "%E2%98%83");
        check_text(
            r#"urlencode("foo:bar@localhost?foo=bar&bar=baz")"#,
            "foo%3Abar%40localhost%3Ffoo%3Dbar%26bar%3Dbaz",
        );
        check_unknown("urlencode(u)");
    }
}
