//! Privacy: what is taken out of every text before it leaves the machine.
//!
//! Three kinds of secret are replaced by `[redacted]`: values the project knows are secret
//! (state attributes marked sensitive, or that the provider schema calls sensitive; the values
//! of variables declared `sensitive = true`), values under keys that name a secret (password,
//! secret, token, private key, credentials, ...) in a request, response or state object, and
//! values shaped like a secret wherever they appear (AWS access key ids, PEM blocks, long
//! base64 or token-like strings), the passwords of URLs and connection strings, and values
//! assigned to secret-named keys in text (`DB_PASS=...`, `password = "..."`). The agent sends
//! and writes nothing that has not passed through [`Redactor::messages`] (prompts, tool
//! results, differences, errors alike).

use super::client::{Message, Part};
use crate::terraform::config::Project;
use crate::terraform::state::{Instance, PathStep, State};
use knowledge::schema::ProviderSchema;
use regex::Regex;
use serde_json::Value;
use std::sync::LazyLock;

/// What a redacted value is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Secrets shorter than this are not searched for as known values (they would match
/// ordinary words); their key names and shapes still redact them.
const SHORTEST_KNOWN: usize = 6;

/// Value shapes that are secrets wherever they appear.
static SHAPES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        // PEM blocks (private keys, certificates), also with escaped line ends.
        r"-----BEGIN [A-Z0-9 ]+-----[\s\S]*?-----END [A-Z0-9 ]+-----",
        // AWS access key ids.
        r"\b(?:AKIA|ASIA|AROA|AIDA|ANPA|AGPA)[A-Z0-9]{16}\b",
        // GitHub, Slack and similar prefixed tokens.
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|xox[abprs]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,})",
        // JSON web tokens.
        r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
        // Stripe-style live and test keys.
        r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}",
    ]
    .iter()
    .map(|p| Regex::new(p).expect("a valid pattern"))
    .collect()
});

/// An assignment in text — `KEY=value` in an environment, `key = "value"` in HCL, `"key":
/// "value"` in JSON text — whose key names a secret.
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(["']?)([A-Za-z_][A-Za-z0-9_.\-]*)(["']?)(\s*[:=]\s*)("(?:[^"\\]|\\.)*"|'[^']*'|[^\s,;&"'{}\[\]]+)"#,
    )
    .expect("a valid pattern")
});

/// Long runs of base64 characters; kept as secrets only when they mix cases and digits.
static BASE64_RUN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9+/]{32,}={0,2}").expect("a valid pattern"));

/// Removes secrets from text and JSON.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Known secret values, longest first so a value containing another goes whole.
    known: Vec<String>,
}

impl Redactor {
    /// A redactor knowing the secrets of a project: the state's sensitive attributes (marked
    /// in the state or by the schema), every value under a secret-naming key in the state,
    /// and the values of sensitive variables.
    pub fn new(states: &[&State], project: Option<&Project>, schema: &ProviderSchema) -> Redactor {
        let mut known = Vec::new();
        for state in states {
            for instance in &state.instances {
                instance_secrets(instance, schema, &mut known);
            }
        }
        if let Some(project) = project {
            known.extend(sensitive_variable_values(project));
        }
        Redactor::with_known(known)
    }

    /// A redactor knowing exactly these secret values.
    pub fn with_known(mut known: Vec<String>) -> Redactor {
        known.retain(|s| s.len() >= SHORTEST_KNOWN);
        known.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        known.dedup();
        Redactor { known }
    }

    /// The text with every known secret and secret-shaped value replaced.
    pub fn text(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.known {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), REDACTED);
            }
            // The same value as it appears inside a JSON string.
            let escaped = Value::String(secret.clone()).to_string();
            let inner = &escaped[1..escaped.len() - 1];
            if inner != secret && out.contains(inner) {
                out = out.replace(inner, REDACTED);
            }
        }
        for shape in SHAPES.iter() {
            out = shape.replace_all(&out, REDACTED).into_owned();
        }
        out = url(&out);
        out = ASSIGNMENT
            .replace_all(&out, |c: &regex::Captures<'_>| {
                let value = &c[5];
                if is_secret_key(&c[2]) && !value.contains(REDACTED) && !is_reference(value) {
                    let quote = if value.starts_with('\'') { "'" } else { "\"" };
                    let quoted = value.starts_with(['"', '\'']);
                    let shown = if quoted {
                        format!("{quote}{REDACTED}{quote}")
                    } else {
                        REDACTED.to_owned()
                    };
                    format!("{}{}{}{}{shown}", &c[1], &c[2], &c[3], &c[4])
                } else {
                    c[0].to_owned()
                }
            })
            .into_owned();
        BASE64_RUN
            .replace_all(&out, |c: &regex::Captures<'_>| {
                let run = &c[0];
                if looks_random(run) {
                    REDACTED.to_owned()
                } else {
                    run.to_owned()
                }
            })
            .into_owned()
    }

    /// A JSON value with secret-named keys' values replaced, then every string redacted as
    /// text.
    pub fn json(&self, value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let v = if is_secret_key(k) && !v.is_null() {
                            Value::String(REDACTED.to_owned())
                        } else {
                            self.json(v)
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.json(v)).collect()),
            Value::String(s) => Value::String(self.text(s)),
            other => other.clone(),
        }
    }
}

pub use crate::text::is_secret_key;

impl Redactor {
    /// A conversation as it may leave the machine: every text, tool input and tool result
    /// redacted. The agent sends and writes nothing else.
    pub fn messages(&self, messages: &[Message]) -> Vec<Message> {
        messages
            .iter()
            .map(|m| Message {
                role: m.role,
                parts: m.parts.iter().map(|p| self.part(p)).collect(),
            })
            .collect()
    }

    fn part(&self, part: &Part) -> Part {
        match part {
            Part::Text { text } => Part::Text {
                text: self.text(text),
            },
            // Ids and tool names pair calls with results and are the endpoint's own words.
            Part::ToolUse { id, name, input } => Part::ToolUse {
                id: id.clone(),
                name: name.clone(),
                input: self.json(input),
            },
            Part::ToolResult { id, content } => Part::ToolResult {
                id: id.clone(),
                content: self.text(content),
            },
        }
    }
}

/// Whether an assigned value is a reference in code (`var.db_password`), not a value.
fn is_reference(value: &str) -> bool {
    [
        "var.", "local.", "module.", "data.", "each.", "aws_", "random_",
    ]
    .iter()
    .any(|p| value.starts_with(p))
}

pub use crate::text::without_password as url;

/// Whether a base64-looking run mixes upper and lower case with digits or base64's `+` and
/// `/`, as keys and tokens do and words, ids and hex digests do not.
fn looks_random(run: &str) -> bool {
    let upper = run.chars().filter(char::is_ascii_uppercase).count();
    let lower = run.chars().filter(char::is_ascii_lowercase).count();
    let digits = run.chars().filter(char::is_ascii_digit).count();
    let symbols = run.contains('+') || run.contains('/');
    upper >= 4 && lower >= 4 && (digits >= 3 || symbols)
}

/// An instance's secret values: its sensitive paths, the schema's sensitive attributes,
/// and values under secret-naming keys.
fn instance_secrets(instance: &Instance, schema: &ProviderSchema, out: &mut Vec<String>) {
    for path in &instance.sensitive {
        if let Some(value) = at_path(&instance.attributes, path) {
            strings_in(value, out);
        }
    }
    if let Some(fields) = instance.attributes.as_object() {
        for (name, value) in fields {
            let sensitive = schema
                .attribute(&instance.resource_type, name)
                .is_some_and(|a| a.sensitive);
            if sensitive || is_secret_key(name) {
                strings_in(value, out);
            }
        }
    }
}

fn at_path<'a>(value: &'a Value, path: &[PathStep]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, step| match step {
        PathStep::Key(k) => v.get(k),
        PathStep::Index(i) => v.get(*i as usize),
    })
}

fn strings_in(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) if !s.is_empty() => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings_in(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings_in(v, out)),
        _ => {}
    }
}

/// The values of the variables a module declares `sensitive = true`, in every module
/// instance.
fn sensitive_variable_values(project: &Project) -> Vec<String> {
    let mut names = Vec::new();
    for text in project.files().values() {
        let Ok(body) = crate::terraform::syntax::parse_body(text) else {
            continue;
        };
        for block in body.get_blocks("variable") {
            let sensitive = block.body.get_attribute("sensitive").is_some_and(
                |a| matches!(&a.value, hcl::edit::expr::Expression::Bool(b) if *b.value()),
            );
            if let (true, Some(label)) = (sensitive, block.labels.first()) {
                names.push(label.as_str().to_owned());
            }
        }
    }
    let mut out = Vec::new();
    for variable in project.variables() {
        if names.contains(&variable.name) {
            strings_in(&variable.value.to_json().unwrap_or(Value::Null), &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_shapes_are_redacted_anywhere() {
        let r = Redactor::default();
        let text = "key AKIAIOSFODNN7EXAMPLE and -----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY----- end";
        assert_eq!(r.text(text), "key [redacted] and [redacted] end");
        let token = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        assert_eq!(r.text(&format!("s={token}")), "s=[redacted]");
    }

    #[test]
    fn ordinary_values_survive() {
        let r = Redactor::default();
        for kept in [
            "arn:aws:iam::123456789012:role/shop-prod-api",
            "sg-0123456789abcdef0",
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "https://sqs.eu-west-1.amazonaws.com/123456789012/orders",
            "RawMessageDelivery",
        ] {
            assert_eq!(r.text(kept), kept);
        }
    }

    #[test]
    fn secret_keys_are_told_from_keys_about_secrets() {
        for secret in [
            "MasterUserPassword",
            "client_secret",
            "x-api-key",
            "SecretString",
            "authToken",
        ] {
            assert!(is_secret_key(secret), "{secret}");
        }
        for about in [
            "secretArn",
            "SecretId",
            "kmsKeyId",
            "tokenType",
            "name",
            "secretName",
        ] {
            assert!(!is_secret_key(about), "{about}");
        }
    }

    #[test]
    fn json_values_under_secret_keys_and_known_values_go() {
        let r = Redactor::with_known(vec!["hunter2-but-longer".into(), "abc".into()]);
        let value = json!({
            "dbInstanceIdentifier": "orders",
            "masterUserPassword": "Sup3r",
            "note": "set to hunter2-but-longer today",
            "tiny": "abc"
        });
        assert_eq!(
            r.json(&value),
            json!({
                "dbInstanceIdentifier": "orders",
                "masterUserPassword": REDACTED,
                "note": "set to [redacted] today",
                "tiny": "abc"
            })
        );
    }

    #[test]
    fn urls_environments_and_assignments_lose_their_secrets() {
        let r = Redactor::default();
        assert_eq!(
            r.text("DATABASE=postgres://app:hunter2x@db.internal:5432/shop"),
            "DATABASE=postgres://app:[redacted]@db.internal:5432/shop"
        );
        assert_eq!(
            r.text("DB_PASS=s3cr3tvalue MODE=fast"),
            "DB_PASS=[redacted] MODE=fast"
        );
        assert_eq!(
            r.text("  db_password = \"Tr0ub4dor\"\n  name = \"shop\""),
            "  db_password = \"[redacted]\"\n  name = \"shop\""
        );
        assert_eq!(
            r.text("password = var.db_password"),
            "password = var.db_password"
        );
        let env = json!({"Environment": {"Variables": {"DB_PASS": "x1", "STRIPE_KEY": "sk_live_abcdefghijkl", "REGION": "eu-west-1"}}});
        assert_eq!(
            r.json(&env),
            json!({"Environment": {"Variables": {"DB_PASS": REDACTED, "STRIPE_KEY": REDACTED, "REGION": "eu-west-1"}}})
        );
        assert_eq!(r.text("key sk_live_abcdefghijkl1"), "key [redacted]");
        assert_eq!(
            url("https://u:p4ss@example.com/v1"),
            "https://u:[redacted]@example.com/v1"
        );
    }

    #[test]
    fn known_values_are_found_inside_json_text_too() {
        let r = Redactor::with_known(vec!["line one\nline \"two\"".into()]);
        let body = json!({"content": "x line one\nline \"two\" y"}).to_string();
        assert!(!r.text(&body).contains("line \\\"two"), "{}", r.text(&body));
    }
}
