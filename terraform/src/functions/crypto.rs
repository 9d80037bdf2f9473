//! Crypto functions: `bcrypt`, `rsadecrypt`, `uuidv5`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rsa::pkcs1::DecodeRsaPrivateKey;
use rsa::pkcs8::DecodePrivateKey;
use sha1::Digest;

use super::{Builtin, Call, EvalError, Value};

/// The crypto functions.
pub(super) const FUNCTIONS: &[Builtin] = &[
    Builtin::between("bcrypt", 1, Some(2), bcrypt),
    Builtin::fixed("rsadecrypt", 2, rsadecrypt),
    Builtin::fixed("uuidv5", 2, uuidv5),
];

/// The namespaces RFC 4122 assigns, by the keywords `uuidv5` accepts for them.
const NAMESPACES: [(&str, &str); 4] = [
    ("dns", "6ba7b810-9dad-11d1-80b4-00c04fd430c8"),
    ("url", "6ba7b811-9dad-11d1-80b4-00c04fd430c8"),
    ("oid", "6ba7b812-9dad-11d1-80b4-00c04fd430c8"),
    ("x500", "6ba7b814-9dad-11d1-80b4-00c04fd430c8"),
];

/// A bcrypt hash has a random salt, so its value differs on every run: unknown, once the
/// arguments are checked as Go's bcrypt checks them (a cost below 4 means the default, 10).
fn bcrypt(call: &Call) -> Result<Value, EvalError> {
    let password = call.string(0)?;
    if password.len() > 72 {
        return Err(call.error("bcrypt: password length exceeds 72 bytes"));
    }
    if call.args.len() > 1 {
        let cost = call.integer(1)?;
        if cost > 31 {
            return Err(call.error(format!(
                "crypto/bcrypt: cost {cost} is outside allowed range (4,31)"
            )));
        }
    }
    Ok(Value::Unknown)
}

/// Decrypts base64 PKCS #1 v1.5 ciphertext with a PEM RSA private key (PKCS #1 or PKCS #8,
/// not encrypted).
fn rsadecrypt(call: &Call) -> Result<Value, EvalError> {
    let (ciphertext, pem) = (call.string(0)?, call.string(1)?);
    let bytes = STANDARD.decode(&ciphertext).map_err(|_| {
        call.error(format!(
            "failed to decode input \"{ciphertext}\": cipher text must be base64-encoded"
        ))
    })?;
    let key = rsa::PrivateKey::from_pkcs1_pem(&pem)
        .or_else(|_| rsa::PrivateKey::from_pkcs8_pem(&pem))
        .map_err(|error| call.error(format!("invalid private key: {error}")))?;
    let plain = key
        .decrypt(rsa::Pkcs1v15Encrypt, &bytes)
        .map_err(|error| call.error(format!("failed to decrypt: {error}")))?;
    String::from_utf8(plain)
        .map(Value::String)
        .map_err(|_| call.error("the decrypted bytes are not valid UTF-8"))
}

/// A name-based (version 5, SHA-1) UUID of the name in the namespace, given as a keyword of
/// [`NAMESPACES`] or as a UUID.
fn uuidv5(call: &Call) -> Result<Value, EvalError> {
    let (namespace, name) = (call.string(0)?, call.string(1)?);
    let known = NAMESPACES.iter().find(|(keyword, _)| *keyword == namespace);
    let id = known.map_or(namespace.as_str(), |(_, id)| id);
    let namespace_bytes = parse_uuid(id)
        .ok_or_else(|| call.error(format!("uuidv5() doesn't support namespace {namespace}")))?;
    let mut hasher = sha1::Sha1::new();
    hasher.update(namespace_bytes);
    hasher.update(name.as_bytes());
    let digest = hasher.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    bytes[6] = (bytes[6] & 0x0f) | 0x50;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    Ok(Value::String(format_uuid(&bytes)))
}

/// The bytes of a UUID written with or without hyphens, in braces or after `urn:uuid:`.
fn parse_uuid(text: &str) -> Option<[u8; 16]> {
    let lower = text.to_ascii_lowercase();
    let bare = lower
        .strip_prefix("urn:uuid:")
        .or_else(|| {
            lower
                .strip_prefix('{')
                .and_then(|rest| rest.strip_suffix('}'))
        })
        .unwrap_or(&lower);
    let hex: String = match bare.len() {
        36 => {
            let hyphens = [8, 13, 18, 23]
                .iter()
                .all(|&at| bare.as_bytes()[at] == b'-');
            hyphens.then(|| bare.replace('-', ""))?
        }
        32 => bare.to_string(),
        _ => return None,
    };
    if !hex.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return None;
    }
    let mut bytes = [0u8; 16];
    for (index, byte) in bytes.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(index * 2..index * 2 + 2)?, 16).ok()?;
    }
    Some(bytes)
}

fn format_uuid(bytes: &[u8; 16]) -> String {
    let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}
