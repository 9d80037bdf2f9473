//! Encoding and hash functions: `jsonencode`, `jsondecode`, `base64*`, `sha*`, `md5`, ...

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::Digest;

use super::{Builtin, Call, EvalError, Value};

/// The encoding and hash functions.
pub(super) const FUNCTIONS: &[Builtin] = &[
    Builtin::fixed("base64decode", 1, base64decode),
    Builtin::fixed("base64encode", 1, base64encode),
    Builtin::fixed("base64sha256", 1, base64sha256),
    Builtin::fixed("base64sha512", 1, base64sha512),
    Builtin::fixed("jsondecode", 1, jsondecode),
    Builtin::fixed("jsonencode", 1, jsonencode),
    Builtin::fixed("md5", 1, md5),
    Builtin::fixed("sha1", 1, sha1),
    Builtin::fixed("sha256", 1, sha256),
    Builtin::fixed("sha512", 1, sha512),
    Builtin::fixed("urlencode", 1, urlencode),
];

/// A known value's JSON text as `jsonencode` writes it: compact, keys sorted, and `<`, `>`,
/// `&`, U+2028 and U+2029 escaped. `None` for a value containing an unknown.
pub(super) fn json_text(value: &Value) -> Option<String> {
    let text = value.to_json()?.to_string();
    Some(
        text.replace('<', "\\u003c")
            .replace('>', "\\u003e")
            .replace('&', "\\u0026")
            .replace('\u{2028}', "\\u2028")
            .replace('\u{2029}', "\\u2029"),
    )
}

fn jsonencode(call: &Call) -> Result<Value, EvalError> {
    json_text(call.arg(0)?)
        .map(Value::String)
        .ok_or_else(|| call.error("cannot encode an unknown value"))
}

fn jsondecode(call: &Call) -> Result<Value, EvalError> {
    let text = call.string(0)?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|error| call.error(format!("invalid JSON: {error}")))?;
    Ok(Value::from_json(&json))
}

fn base64encode(call: &Call) -> Result<Value, EvalError> {
    Ok(Value::String(STANDARD.encode(call.string(0)?)))
}

fn base64decode(call: &Call) -> Result<Value, EvalError> {
    let bytes = STANDARD
        .decode(call.string(0)?)
        .map_err(|error| call.error(format!("invalid base64: {error}")))?;
    String::from_utf8(bytes)
        .map(Value::String)
        .map_err(|_| call.error("the decoded bytes are not valid UTF-8"))
}

fn urlencode(call: &Call) -> Result<Value, EvalError> {
    let mut out = String::new();
    for byte in call.string(0)?.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(char::from(byte))
            }
            b' ' => out.push('+'),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    Ok(Value::String(out))
}

/// The digest of argument 0's UTF-8 bytes.
fn digest<D: Digest>(call: &Call) -> Result<Vec<u8>, EvalError> {
    Ok(D::digest(call.string(0)?.as_bytes()).to_vec())
}

fn hex(bytes: &[u8]) -> Value {
    Value::String(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

fn md5(call: &Call) -> Result<Value, EvalError> {
    digest::<md5::Md5>(call).map(|bytes| hex(&bytes))
}

fn sha1(call: &Call) -> Result<Value, EvalError> {
    digest::<sha1::Sha1>(call).map(|bytes| hex(&bytes))
}

fn sha256(call: &Call) -> Result<Value, EvalError> {
    digest::<sha2::Sha256>(call).map(|bytes| hex(&bytes))
}

fn sha512(call: &Call) -> Result<Value, EvalError> {
    digest::<sha2::Sha512>(call).map(|bytes| hex(&bytes))
}

fn base64sha256(call: &Call) -> Result<Value, EvalError> {
    digest::<sha2::Sha256>(call).map(|bytes| Value::String(STANDARD.encode(bytes)))
}

fn base64sha512(call: &Call) -> Result<Value, EvalError> {
    digest::<sha2::Sha512>(call).map(|bytes| Value::String(STANDARD.encode(bytes)))
}
