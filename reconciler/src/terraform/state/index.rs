//! Finding the resource instance that manages a cloud object, by the object's id, ARN or
//! natural key.

use std::collections::HashMap;

use super::{Instance, State};

/// Joins the values of a natural key of several attributes, in [`NATURAL_KEYS`] order.
pub const KEY_SEPARATOR: &str = "/";

/// Attributes that name a cloud object, per resource type, besides `id` and `arn`, which are
/// indexed for every type. Each entry is one key; a key of several attributes matches their
/// values joined by [`KEY_SEPARATOR`]: a security group is found by `vpc-0a1/web`.
pub const NATURAL_KEYS: &[(&str, &[&[&str]])] = &[
    ("aws_autoscaling_group", &[&["name"]]),
    ("aws_cloudtrail", &[&["name"]]),
    ("aws_cloudwatch_log_group", &[&["name"]]),
    ("aws_db_instance", &[&["identifier"], &["resource_id"]]),
    (
        "aws_db_snapshot",
        &[&["db_snapshot_identifier"], &["db_snapshot_arn"]],
    ),
    ("aws_dynamodb_table", &[&["name"]]),
    ("aws_iam_policy", &[&["name"]]),
    (
        "aws_iam_group_policy_attachment",
        &[&["group", "policy_arn"]],
    ),
    ("aws_iam_role", &[&["name"], &["unique_id"]]),
    // The provider gives attachments a generated id; AWS and imports name them by both ends.
    ("aws_iam_role_policy_attachment", &[&["role", "policy_arn"]]),
    ("aws_iam_user", &[&["name"], &["unique_id"]]),
    ("aws_iam_user_login_profile", &[&["user"]]),
    ("aws_iam_user_policy_attachment", &[&["user", "policy_arn"]]),
    ("aws_kms_alias", &[&["name"]]),
    ("aws_kms_key", &[&["key_id"]]),
    ("aws_lambda_function", &[&["function_name"]]),
    ("aws_lb", &[&["name"]]),
    ("aws_route53_zone", &[&["zone_id"]]),
    ("aws_s3_bucket", &[&["bucket"]]),
    ("aws_secretsmanager_secret", &[&["name"]]),
    ("aws_security_group", &[&["vpc_id", "name"]]),
    ("aws_sns_topic", &[&["name"]]),
    ("aws_sqs_queue", &[&["url"], &["name"]]),
    ("aws_ssm_parameter", &[&["name"]]),
];

/// The keys indexed for every resource type.
const UNIVERSAL_KEYS: &[&[&str]] = &[&["id"], &["arn"]];

/// State with lookups by address and by cloud identity.
#[derive(Debug, Clone)]
pub struct StateIndex {
    state: State,
    by_address: HashMap<String, usize>,
    by_identity: HashMap<String, Vec<usize>>,
}

impl StateIndex {
    /// Indexes every instance of `state`.
    pub fn new(state: State) -> StateIndex {
        let mut by_address = HashMap::new();
        let mut by_identity: HashMap<String, Vec<usize>> = HashMap::new();
        for (position, instance) in state.instances.iter().enumerate() {
            if instance.deposed.is_none() {
                by_address.insert(instance.address.clone(), position);
            }
            for identity in identities(instance) {
                by_identity.entry(identity).or_default().push(position);
            }
        }
        StateIndex {
            state,
            by_address,
            by_identity,
        }
    }

    /// The indexed state.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The instances whose id, ARN or natural key is `identity`, only of `resource_type` when
    /// given: managed resources first, then data sources, each in state order.
    pub fn lookup(&self, resource_type: Option<&str>, identity: &str) -> Vec<&Instance> {
        let mut found: Vec<&Instance> = self
            .by_identity
            .get(identity)
            .into_iter()
            .flatten()
            .map(|&position| &self.state.instances[position])
            .filter(|instance| resource_type.is_none_or(|t| instance.resource_type == t))
            .collect();
        found.sort_by_key(|instance| instance.mode);
        found
    }

    /// The current (not deposed) instance at `address`, such as `aws_instance.web[0]`.
    pub fn instance(&self, address: &str) -> Option<&Instance> {
        self.by_address
            .get(address)
            .map(|&position| &self.state.instances[position])
    }

    /// Every instance, in state order.
    pub fn iter(&self) -> impl Iterator<Item = &Instance> {
        self.state.instances.iter()
    }
}

/// The distinct identities an instance is found by.
fn identities(instance: &Instance) -> Vec<String> {
    let natural = NATURAL_KEYS
        .iter()
        .filter(|(resource_type, _)| *resource_type == instance.resource_type)
        .flat_map(|(_, keys)| keys.iter());
    let mut found: Vec<String> = UNIVERSAL_KEYS
        .iter()
        .chain(natural)
        .filter_map(|key| key_value(instance, key))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The value of a key, when every attribute in it is a non-empty string.
fn key_value(instance: &Instance, attributes: &[&str]) -> Option<String> {
    let parts = attributes
        .iter()
        .map(|name| instance.string_attribute(name))
        .collect::<Option<Vec<_>>>()?;
    Some(parts.join(KEY_SEPARATOR))
}
