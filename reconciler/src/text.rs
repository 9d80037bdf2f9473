//! Text from inputs made safe to show: CloudTrail fields (user agents, tag values, request
//! values) and file contents can hold terminal escape sequences, control characters and
//! invisible or direction-changing characters that would rewrite a terminal or hide what a
//! line really says. Text output escapes them; HCL strings written into the code escape them
//! too (see `terraform::quoted`); JSON output is left exact.

use serde_json::Value;
use std::borrow::Cow;
use std::fmt::Write as _;

#[cfg(test)]
pub(crate) use retrace_terraform::text::is_sentence;
pub use retrace_terraform::text::is_unsafe;

/// The longest value a text line shows in full; longer ones are cut with `…` (JSON output
/// always carries them whole).
pub const VALUE_WIDTH: usize = 60;

/// A value as a line of text shows it: strings quoted, other values as compact JSON, cut at
/// [`VALUE_WIDTH`] characters.
pub fn value(v: &Value) -> String {
    elide(&v.to_string(), VALUE_WIDTH)
}

/// `text` cut to at most `width` characters, ending in `…` when cut.
pub fn elide(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let kept: String = text.chars().take(width.saturating_sub(1)).collect();
    format!("{kept}…")
}

/// The text with every unsafe character written as `\u{…}`; unchanged (borrowed) when it
/// holds none.
pub fn escaped(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_controls_and_direction_overrides_are_written_out() {
        assert_eq!(
            escaped("\u{1b}[31mred\u{1b}[0m"),
            "\\u{1b}[31mred\\u{1b}[0m"
        );
        assert_eq!(
            escaped("a\u{202E}b\u{200B}c\u{7f}\u{85}"),
            "a\\u{202e}b\\u{200b}c\\u{7f}\\u{85}"
        );
        assert!(matches!(
            escaped("plain text, émigré\n\tok"),
            Cow::Borrowed(_)
        ));
    }
}

/// The password of a URL or connection string (`postgres://app:pass@db:5432/shop`).
static URL_PASSWORD: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r#"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/?#@"'\\]+:)([^\s@/"'\\]+)@"#)
        .expect("a valid pattern")
});

/// Text with the password of every URL or connection string in it (`postgres://app:pass@db`)
/// replaced by `[redacted]`, as an endpoint, a finding's identity or a prompt may show it.
pub fn without_password(text: &str) -> String {
    URL_PASSWORD
        .replace_all(text, "${1}[redacted]@")
        .into_owned()
}

/// What makes a value secret, when it holds one: the first key at any depth that names a
/// secret ([`is_secret_key`]) and holds text (not `true`/`false`, as a policy's
/// `aws:MultiFactorAuthPresent` does; a namespaced condition key is never one), or a password
/// in a URL or connection string (`postgres://app:pass@db`).
pub fn secret_in(value: &Value) -> Option<String> {
    match value {
        Value::Object(map) => map.iter().find_map(|(key, inner)| {
            let text = inner.as_str().is_some_and(|t| {
                !t.is_empty() && !t.eq_ignore_ascii_case("true") && !t.eq_ignore_ascii_case("false")
            });
            if text && !key.contains(':') && is_secret_key(key) {
                Some(key.clone())
            } else {
                secret_in(inner)
            }
        }),
        Value::Array(items) => items.iter().find_map(secret_in),
        Value::String(text) => {
            (without_password(text) != *text).then(|| "a password in a URL".to_owned())
        }
        _ => None,
    }
}

/// Words of a key name whose value is secret (`DB_PASS`, `MasterUserPassword`, `x-api-key`).
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pass",
    "pwd",
    "secret",
    "token",
    "credential",
    "credentials",
    "passphrase",
    "authorization",
    "auth",
    "dsn",
];

/// Runs of words naming a secret (compared without separators).
const SECRET_RUNS: &[&str] = &[
    "privatekey",
    "apikey",
    "accesskey",
    "secretkey",
    "sessionkey",
    "signingkey",
    "connectionstring",
    "connstr",
    "databaseurl",
];

/// Words that make a key name a thing about a secret, not the secret (`SecretArn`,
/// `tokenType`, `passwordLength`), when they end it.
const ABOUT_WORDS: &[&str] = &[
    "arn",
    "id",
    "ids",
    "name",
    "type",
    "ttl",
    "expiry",
    "rotation",
    "version",
    "length",
    "count",
    "enabled",
    "policy",
    "reset",
    "required",
    "age",
    "prevention",
    "mode",
];

/// Words before `key` that make it no secret (`PartitionKey`, `KmsKey`, `S3Key`, tag keys).
const PLAIN_KEYS: &[&str] = &[
    "kms",
    "partition",
    "sort",
    "hash",
    "range",
    "object",
    "s3",
    "public",
    "tag",
    "routing",
    "cache",
    "primary",
    "foreign",
    "idempotency",
    "group",
    "attribute",
    "condition",
    "sse",
    "encryption",
    "context",
    "dedup",
    "deduplication",
    "message",
    "ssh",
    "pair",
];

/// The lower-case words of a key name, split at `_`, `-`, `.`, spaces and camel case
/// (`DB_PASS` → `db`, `pass`; `MasterUserPassword` → `master`, `user`, `password`).
pub fn key_words(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in key.chars() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// Whether a key names a secret (`MasterUserPassword`, `client_secret`, `x-api-key`,
/// `DB_PASS`, `STRIPE_KEY`), but not a thing about one (`KmsKeyId`, `SecretArn`,
/// `secretName`, `tokenType`) nor a key that is no secret (`PartitionKey`, a tag's `Key`).
pub fn is_secret_key(key: &str) -> bool {
    let words = key_words(key);
    let Some(last) = words.last() else {
        return false;
    };
    if ABOUT_WORDS.contains(&last.as_str()) {
        return false;
    }
    let flat: String = words.concat();
    if words.iter().any(|w| SECRET_WORDS.contains(&w.as_str()))
        || SECRET_RUNS.iter().any(|r| flat.contains(r))
    {
        return true;
    }
    // `STRIPE_KEY`, `signing_key`: a key named for what it unlocks.
    last == "key" && words.len() >= 2 && !PLAIN_KEYS.contains(&words[words.len() - 2].as_str())
}

#[cfg(test)]
mod secret_key_tests {
    use super::*;

    #[test]
    fn key_names_split_into_words() {
        assert_eq!(key_words("DB_PASS"), ["db", "pass"]);
        assert_eq!(
            key_words("MasterUserPassword"),
            ["master", "user", "password"]
        );
        assert_eq!(key_words("x-api-key"), ["x", "api", "key"]);
    }

    #[test]
    fn secrets_are_found_in_values_at_any_depth() {
        let environment = serde_json::json!({"variables": {
            "LOG_LEVEL": "debug", "DB_PASS": "hunter2", "SIGNING_KEY_ID": "k1"}});
        assert_eq!(secret_in(&environment).as_deref(), Some("DB_PASS"));
        let url = serde_json::json!([{"ENDPOINT": "postgres://app:pw@db:5432/x"}]);
        assert_eq!(secret_in(&url).as_deref(), Some("a password in a URL"));
        for plain in [
            serde_json::json!({"variables": {"LOG_LEVEL": "debug", "DB_PASS": ""}}),
            serde_json::json!({"Condition": {"Bool": {"aws:MultiFactorAuthPresent": "true"}}}),
            serde_json::json!({"access_token_validity": 60, "auth_flow": "false"}),
            serde_json::json!({"secretArn": "arn:aws:secretsmanager:us-east-1:1:secret:x"}),
            serde_json::json!("https://example.com/path"),
            serde_json::json!(30),
        ] {
            assert_eq!(secret_in(&plain), None, "{plain}");
        }
    }

    #[test]
    fn secret_keys_of_environment_maps_are_found() {
        for secret in [
            "DB_PASS",
            "STRIPE_KEY",
            "signing_key",
            "GITHUB_TOKEN",
            "db_pwd",
            "SENTRY_DSN",
        ] {
            assert!(is_secret_key(secret), "{secret}");
        }
        for plain in [
            "Key",
            "PartitionKey",
            "KmsKeyId",
            "kms_key",
            "bypass",
            "TAG_KEY",
            "passwordLength",
        ] {
            assert!(!is_secret_key(plain), "{plain}");
        }
    }
}
