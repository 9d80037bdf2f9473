//! Secrets taken out of everything before it leaves the machine for a model: the values the
//! state marks sensitive or the provider schema declares sensitive, the values of variables
//! declared `sensitive = true`, values under keys that name a secret (password, secret,
//! token, private key, credentials), and text shaped like a secret (AWS access key ids, PEM
//! blocks, bearer tokens).

use std::sync::LazyLock;

use knowledge::schema::ProviderSchema;
use regex::Regex;
use serde_json::Value;

use crate::terraform::state::{Instance, PathStep, State};

/// What stands in for a secret.
pub const REDACTED: &str = "[redacted]";

/// The shortest known secret replaced wherever it appears: shorter values (`true`, `1`) would
/// blank out ordinary text.
const SHORTEST: usize = 6;

/// Text shaped like a secret, whatever its key.
static SHAPES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"\b(?:AKIA|ASIA|AROA|AIDA)[A-Z0-9]{16}\b",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
        r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{16,}",
        r"\b(?:ghp|gho|ghs|github_pat|glpat|xox[abp])[-_A-Za-z0-9]{16,}",
    ]
    .iter()
    .filter_map(|pattern| Regex::new(pattern).ok())
    .collect()
});

/// Key names whose values are secrets.
static SECRET_KEY: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(password|passwd|secret|token|private_?key|credential|api_?key|auth_?string|session_?key|access_?key_?secret)",
    )
    .ok()
});

/// Takes secrets out of text and JSON.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Known secret values, longest first.
    secrets: Vec<String>,
}

impl Redactor {
    /// A redactor that knows the secrets of `state` (paths it marks sensitive, attributes the
    /// schema declares sensitive) and the `sensitive_values` given (such as the values of
    /// variables declared sensitive).
    pub fn new(
        state: &State,
        schema: &ProviderSchema,
        sensitive_values: impl IntoIterator<Item = String>,
    ) -> Redactor {
        let mut secrets: Vec<String> = sensitive_values.into_iter().collect();
        for instance in &state.instances {
            collect_sensitive(instance, schema, &mut secrets);
        }
        secrets.retain(|s| s.len() >= SHORTEST);
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Redactor { secrets }
    }

    /// `text` with every known secret and every secret-shaped piece replaced.
    pub fn text(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), REDACTED);
            }
        }
        for shape in SHAPES.iter() {
            out = shape.replace_all(&out, REDACTED).into_owned();
        }
        out
    }

    /// `value` with secrets replaced: whole values under keys that name a secret, and
    /// secrets inside every string.
    pub fn json(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.text(s)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.json(v)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, v)| {
                        let hidden = names_secret(key) && !v.is_null() && !v.is_boolean();
                        let v = if hidden {
                            Value::String(REDACTED.to_owned())
                        } else {
                            self.json(v)
                        };
                        (key.clone(), v)
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// Whether a key names a secret (`masterUserPassword`, `SecretString`, `private_key`).
fn names_secret(key: &str) -> bool {
    SECRET_KEY.as_ref().is_some_and(|r| r.is_match(key))
}

/// The string values of `instance` that are sensitive: under a path the state marks, or a
/// top-level attribute the provider schema declares sensitive.
fn collect_sensitive(instance: &Instance, schema: &ProviderSchema, out: &mut Vec<String>) {
    let declared = schema.resource(&instance.resource_type);
    let Some(attributes) = instance.attributes.as_object() else {
        return;
    };
    for (name, value) in attributes {
        let path = vec![PathStep::Key(name.clone())];
        let by_schema = declared
            .and_then(|r| r.block.attributes.get(name))
            .is_some_and(|a| a.sensitive);
        walk(instance, value, path, by_schema, out);
    }
}

/// Collects the string leaves under `value` (at `path`) that are sensitive.
fn walk(
    instance: &Instance,
    value: &Value,
    path: Vec<PathStep>,
    marked: bool,
    out: &mut Vec<String>,
) {
    let marked = marked || instance.is_sensitive(&path);
    match value {
        Value::String(s) if marked => out.push(s.clone()),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let mut next = path.clone();
                next.push(PathStep::Index(i as u64));
                walk(instance, item, next, marked, out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                let mut next = path.clone();
                next.push(PathStep::Key(key.clone()));
                walk(instance, item, next, marked, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state() -> State {
        let doc = json!({"version": 4, "terraform_version": "1.11.4", "serial": 1, "lineage": "l",
            "outputs": {}, "resources": [
            {"mode": "managed", "type": "aws_db_instance", "name": "main",
             "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
             "instances": [{"schema_version": 2, "attributes": {"id": "db-1",
                "identifier": "shop", "password": "correct-horse-battery", "username": "admin"},
                "sensitive_attributes": []}]},
            {"mode": "managed", "type": "aws_ssm_parameter", "name": "api",
             "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
             "instances": [{"schema_version": 0, "attributes": {"id": "/shop/api",
                "name": "/shop/api", "value": "sk-live-0123456789abcdef"},
                "sensitive_attributes": [[{"type": "get_attr", "value": "value"}]]}]}]});
        State::parse(doc.to_string().as_bytes(), "test").expect("state")
    }

    fn redactor() -> Redactor {
        let schema = ProviderSchema::bundled().expect("schema");
        Redactor::new(&state(), schema, ["hunter2-from-tfvars".to_owned()])
    }

    #[test]
    fn state_secrets_and_sensitive_variables_are_taken_out() {
        let r = redactor();
        let text = "password correct-horse-battery, value sk-live-0123456789abcdef, var hunter2-from-tfvars, name shop";
        let out = r.text(text);
        assert_eq!(
            out,
            "password [redacted], value [redacted], var [redacted], name shop"
        );
    }

    #[test]
    fn secret_shapes_and_secret_keys_are_taken_out_of_json() {
        let r = redactor();
        let request = json!({"dBInstanceIdentifier": "shop", "masterUserPassword": "anything-at-all",
            "manageMasterUserPassword": true,
            "tags": [{"key": "owner", "value": "AKIAIOSFODNN7EXAMPLE"}],
            "note": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----"});
        let out = r.json(&request);
        assert_eq!(out["dBInstanceIdentifier"], "shop");
        assert_eq!(out["masterUserPassword"], REDACTED);
        assert_eq!(out["manageMasterUserPassword"], true);
        assert_eq!(out["tags"][0]["value"], REDACTED);
        assert_eq!(out["note"], REDACTED);
    }
}
