//! What a call handler works with: the resources, id allocation, the account, region and
//! time of the call, and the errors AWS answers with.

use chrono::{DateTime, Utc};
use rand::Rng;
use reconciler::terraform::state::{Instance, Mode};
use serde_json::{Map, Value, json};

use super::Cloud;

/// An error AWS answers a call with; recorded as `errorCode` and `errorMessage`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ApiError {
    /// `errorCode`, e.g. `InvalidPermission.Duplicate`.
    pub code: String,
    /// `errorMessage`.
    pub message: String,
}

impl ApiError {
    /// An error with its code and message.
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self {
            code: code.to_owned(),
            message: message.into(),
        }
    }
}

/// A handler's result: the response elements, or AWS's error.
pub type ApiResult = Result<Value, ApiError>;

/// The state a handler runs against.
pub struct Ctx<'a> {
    cloud: &'a mut Cloud,
    /// The region the call was made in.
    pub region: String,
    /// When the call was made.
    pub time: DateTime<Utc>,
    touched: Vec<String>,
}

impl<'a> Ctx<'a> {
    pub(super) fn new(cloud: &'a mut Cloud, region: String, time: DateTime<Utc>) -> Self {
        Self {
            cloud,
            region,
            time,
            touched: Vec::new(),
        }
    }

    pub(super) fn into_touched(self) -> Vec<String> {
        let mut touched = self.touched;
        touched.dedup();
        touched
    }

    /// The account id.
    pub fn account(&self) -> &str {
        &self.cloud.account_id
    }

    /// The position of the first instance of `resource_type` whose top-level `key` equals
    /// `value` (strings compared as given, numbers by their text).
    pub fn find(&self, resource_type: &str, key: &str, value: &str) -> Option<usize> {
        self.cloud.resources.iter().position(|i| {
            i.resource_type == resource_type
                && i.attributes.get(key).is_some_and(|v| same(v, value))
        })
    }

    /// Like [`Ctx::find`], for any of several types.
    pub fn find_any(&self, types: &[&str], key: &str, value: &str) -> Option<usize> {
        types.iter().find_map(|t| self.find(t, key, value))
    }

    /// Positions of all instances of `resource_type` matching every `(key, value)` pair.
    pub fn find_all(&self, resource_type: &str, pairs: &[(&str, &str)]) -> Vec<usize> {
        let matches = |i: &Instance| {
            i.resource_type == resource_type
                && pairs
                    .iter()
                    .all(|(k, v)| i.attributes.get(*k).is_some_and(|a| same(a, v)))
        };
        let resources = &self.cloud.resources;
        (0..resources.len())
            .filter(|n| matches(&resources[*n]))
            .collect()
    }

    /// Every resource.
    pub fn get_all(&self) -> &[Instance] {
        &self.cloud.resources
    }

    /// The instance at a position.
    pub fn get(&self, at: usize) -> &Instance {
        &self.cloud.resources[at]
    }

    /// A top-level attribute of the instance at `at` (`Null` when absent).
    pub fn attr(&self, at: usize, key: &str) -> Value {
        self.get(at)
            .attributes
            .get(key)
            .cloned()
            .unwrap_or(Value::Null)
    }

    /// A top-level string attribute, empty when absent.
    pub fn attr_str(&self, at: usize, key: &str) -> String {
        self.get(at)
            .attributes
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    }

    /// The attributes of the instance at `at`, for changing; marks it touched.
    pub fn attrs_mut(&mut self, at: usize) -> &mut Map<String, Value> {
        let instance = &mut self.cloud.resources[at];
        self.touched.push(instance.address.clone());
        if !instance.attributes.is_object() {
            instance.attributes = Value::Object(Map::new());
        }
        match &mut instance.attributes {
            Value::Object(map) => map,
            _ => unreachable!("attributes were just made an object"),
        }
    }

    /// Sets one top-level attribute.
    pub fn set(&mut self, at: usize, key: &str, value: Value) {
        self.attrs_mut(at).insert(key.to_owned(), value);
    }

    /// Adds an instance of `resource_type` under a new `unmanaged_<n>` address and returns
    /// its position.
    pub fn create(&mut self, resource_type: &str, attributes: Value) -> usize {
        self.cloud.created += 1;
        let name = format!("unmanaged_{}", self.cloud.created);
        let address = format!("{resource_type}.{name}");
        self.touched.push(address.clone());
        self.cloud.resources.push(Instance {
            address,
            module: None,
            mode: Mode::Managed,
            resource_type: resource_type.to_owned(),
            name,
            index: None,
            provider: "registry.terraform.io/hashicorp/aws".to_owned(),
            schema_version: 0,
            attributes,
            sensitive: Vec::new(),
            private: None,
            dependencies: Vec::new(),
            tainted: false,
            deposed: None,
        });
        self.cloud.resources.len() - 1
    }

    /// Removes the instance at `at`.
    pub fn remove(&mut self, at: usize) {
        let instance = self.cloud.resources.remove(at);
        self.touched.push(instance.address);
    }

    /// Removes every instance at the given positions.
    pub fn remove_all(&mut self, mut positions: Vec<usize>) {
        positions.sort_unstable();
        for at in positions.into_iter().rev() {
            self.remove(at);
        }
    }

    /// Merges tags into `tags` and `tags_all`.
    pub fn add_tags(&mut self, at: usize, tags: &[(String, String)]) {
        self.edit_tags(at, |map| {
            for (k, v) in tags {
                map.insert(k.clone(), Value::String(v.clone()));
            }
        });
    }

    /// Removes tag keys from `tags` and `tags_all`.
    pub fn remove_tags(&mut self, at: usize, keys: &[String]) {
        self.edit_tags(at, |map| {
            for k in keys {
                map.remove(k);
            }
        });
    }

    /// Replaces the whole tag set.
    pub fn replace_tags(&mut self, at: usize, tags: &[(String, String)]) {
        self.edit_tags(at, |map| {
            map.clear();
            for (k, v) in tags {
                map.insert(k.clone(), Value::String(v.clone()));
            }
        });
    }

    /// Applies `edit` to the tag map and writes it to `tags_all` and `tags` (which Terraform
    /// reads back as `null` when no tags remain).
    fn edit_tags(&mut self, at: usize, edit: impl Fn(&mut Map<String, Value>)) {
        let attrs = self.attrs_mut(at);
        let mut map = attrs
            .get("tags_all")
            .or_else(|| attrs.get("tags"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        edit(&mut map);
        let tags = match map.is_empty() {
            true => Value::Null,
            false => Value::Object(map.clone()),
        };
        attrs.insert("tags".to_owned(), tags);
        attrs.insert("tags_all".to_owned(), Value::Object(map));
    }

    /// `prefix-` and `len` random lowercase hex digits: `sg-0a1b...`.
    pub fn hex_id(&mut self, prefix: &str, len: usize) -> String {
        format!("{prefix}-{}", self.hex(len))
    }

    /// `len` random lowercase hex digits.
    pub fn hex(&mut self, len: usize) -> String {
        random_chars(&mut self.cloud.rng, b"0123456789abcdef", len)
    }

    /// `len` random uppercase letters and digits, the alphabet of IAM unique ids.
    pub fn upper(&mut self, len: usize) -> String {
        random_chars(&mut self.cloud.rng, UPPER_ALNUM, len)
    }

    /// A random UUID in its text form.
    pub fn uuid(&mut self) -> String {
        uuid(&mut self.cloud.rng)
    }

    /// The next version of an IAM managed policy (the first version is `v1`).
    pub fn next_policy_version(&mut self, arn: &str) -> u32 {
        let version = self
            .cloud
            .policy_versions
            .entry(arn.to_owned())
            .or_insert(1);
        *version += 1;
        *version
    }

    /// A regional ARN in this account: `arn:aws:<service>:<region>:<account>:<resource>`.
    pub fn arn(&self, service: &str, resource: &str) -> String {
        format!(
            "arn:aws:{service}:{}:{}:{resource}",
            self.region, self.cloud.account_id
        )
    }

    /// The call time as AWS writes it in ISO 8601 responses.
    pub fn iso_time(&self) -> String {
        self.time.format("%Y-%m-%dT%H:%M:%SZ").to_string()
    }

    /// The call time as CloudTrail writes Java dates in IAM and Route 53 responses:
    /// `Mar 2, 2026 9:00:05 AM`.
    pub fn java_time(&self) -> String {
        self.time.format("%b %-d, %Y %-I:%M:%S %p").to_string()
    }
}

/// Uppercase letters and digits.
pub const UPPER_ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// `len` characters drawn from `alphabet`.
pub fn random_chars(rng: &mut impl Rng, alphabet: &[u8], len: usize) -> String {
    (0..len)
        .map(|_| char::from(alphabet[rng.random_range(0..alphabet.len())]))
        .collect()
}

/// A version 4 UUID from `rng`: the 32 hex digits of 16 random bytes, grouped 8-4-4-4-12,
/// with the version digit `4` and the variant digit (`8`, `9`, `a` or `b`) in their places.
/// Written digit by digit: every simulated record holds several, so it must be cheap.
pub fn uuid(rng: &mut impl Rng) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes: [u8; 16] = rng.random();
    let mut out = String::with_capacity(36);
    for digit in 0..32 {
        if matches!(digit, 8 | 12 | 16 | 20) {
            out.push('-');
        }
        let byte = bytes[digit / 2];
        let nibble = if digit % 2 == 0 {
            byte >> 4
        } else {
            byte & 0xf
        };
        out.push(char::from(match digit {
            12 => b'4',
            16 => b"89ab"[usize::from(bytes[8] & 3)],
            _ => HEX[usize::from(nibble)],
        }));
    }
    out
}

/// Whether an attribute value equals `text` (a string as is, a number or bool by its text).
fn same(value: &Value, text: &str) -> bool {
    match value {
        Value::String(s) => s == text,
        Value::Number(n) => n.to_string() == text,
        Value::Bool(b) => b.to_string() == text,
        _ => false,
    }
}

/// The `{"_return": true, "requestId": ...}` answer of EC2 calls that return only success;
/// the request id is filled in when the record is written.
pub fn ec2_true() -> Value {
    json!({"_return": true})
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn a_uuid_is_the_bytes_in_hex_with_version_and_variant_digits() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..1_000 {
            let mut copy = rng.clone();
            let bytes: [u8; 16] = copy.random();
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            let variant = ["8", "9", "a", "b"][usize::from(bytes[8] & 3)];
            let expected = format!(
                "{}-{}-4{}-{variant}{}-{}",
                &hex[0..8],
                &hex[8..12],
                &hex[13..16],
                &hex[17..20],
                &hex[20..32]
            );
            assert_eq!(uuid(&mut rng), expected);
        }
    }
}
