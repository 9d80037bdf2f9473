//! The rule model: what one rule says, as written in a rule file (and stored as JSON).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::transform::Transform;

/// The `resource` value that makes a rule find each target's type from its id prefix.
pub const BY_ID_PREFIX: &str = "by-id-prefix";

/// One rule: how one API call of one service changes Terraform-managed resources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// The service's short name, e.g. `ec2` (the rule file's name).
    pub service: String,
    /// CloudTrail's `eventSource`, e.g. `ec2.amazonaws.com`.
    pub event_source: String,
    /// Cloud id prefix → the resource types whose ids have it, for rules whose resource is
    /// `by-id-prefix` (a default VPC's id is a VPC's: `vpc-` names both types).
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "one_or_many"
    )]
    pub id_prefixes: BTreeMap<String, Vec<String>>,
    /// What the rule does with the call.
    pub spec: RuleSpec,
}

/// The body of a rule: one `[[rule]]` table of a rule file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// The API (CloudTrail `eventName`, Lambda's without its version suffix).
    pub api: String,
    /// Tells apart two rules of one service for one API (a KMS key created with external
    /// key material): the rule id becomes `service:Api:variant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// What a call must hold for the rule to read it: two services that share an event
    /// source and event names (API Gateway's REST APIs name `restApiId`, its HTTP APIs
    /// `apiId`) each give a path; a value makes it a condition (`origin` is `EXTERNAL`).
    /// Without it the rule reads any call of its API that no other rule claims.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires: Option<Requires>,
    /// The one resource type changed, or `by-id-prefix`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// Several resource types the call may change (any one of them may hold the identity).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    /// What kind of change the call makes.
    pub kind: Kind,
    /// How risky absorbing the change is.
    pub risk: Risk,
    /// A plain-language fragment for the intent's story, e.g. `changed an instance attribute`.
    pub summary: String,
    /// The parts of the resource's identity, joined by `separator` into a composite natural
    /// key. Iterating parts give several identities, zipped by position (a one-value part
    /// repeats).
    pub identity: Vec<ValueSource>,
    /// What joins identity parts (default `/`; Terraform's import ids use `:` or `_` for some
    /// types).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub separator: Option<String>,
    /// What to do when no state instance has the identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<Missing>,
    /// Attribute values the call sets.
    #[serde(default, rename = "set", skip_serializing_if = "Vec::is_empty")]
    pub sets: Vec<SetSpec>,
    /// For `add-block` / `remove-block`: the nested blocks added or removed, one table or,
    /// for a call that sets several kinds of block at once (S3's notification configuration
    /// holds queues, topics and functions), an array of tables.
    #[serde(
        default,
        rename = "block",
        deserialize_with = "one_or_more",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub blocks: Vec<BlockSpec>,
    /// For `tags`: the tag change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<TagSpec>,
    /// Conditions that make the change risky.
    #[serde(default, rename = "flag", skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<FlagSpec>,
    /// When the request has nothing at this path, the call removes the configuration rather
    /// than setting it (S3's `PutBucketLogging` without `LoggingEnabled` turns logging off):
    /// the change is a `delete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_unless: Option<Paths>,
    /// When every value at `path` equals `equals`, the call deletes the resource (Route 53's
    /// `ChangeResourceRecordSets` with only `DELETE` changes): the change is a `delete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_when: Option<When>,
    /// Values the call changes that CloudTrail does not record (Lambda's environment
    /// variables, a parameter's or a secret's value): when the request has the path, the
    /// change is reported for a person, and never written into the code.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hidden: Vec<HiddenSpec>,
    /// Every change the rule reads is held for a person, for this reason: a rule retrace
    /// learned from a security-relevant change (an admin policy) holds such changes rather
    /// than absorbing them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<String>,
}

/// A value a call changes that CloudTrail leaves out or redacts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HiddenSpec {
    /// Where the request shows that the value changed (`""`: every such call changes it).
    pub path: Paths,
    /// What the value is, in plain words: `environment variables`.
    pub what: String,
}

/// The kind of change a call makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Attributes of an existing resource change.
    Update,
    /// Nested blocks are added (e.g. security group ingress rules).
    AddBlock,
    /// Nested blocks are removed.
    RemoveBlock,
    /// Tags are added, removed or replaced.
    Tags,
    /// A resource is created.
    Create,
    /// A resource is deleted.
    Delete,
    /// A link resource is created (an attachment or association).
    Associate,
    /// A link resource is removed.
    Disassociate,
    /// Nothing Terraform configures changes (an instance started, stopped or rebooted): the
    /// call is accounted for and named in the report, and needs no patch.
    Operational,
}

impl Kind {
    /// The name used in rule files.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Update => "update",
            Self::AddBlock => "add-block",
            Self::RemoveBlock => "remove-block",
            Self::Tags => "tags",
            Self::Create => "create",
            Self::Delete => "delete",
            Self::Associate => "associate",
            Self::Disassociate => "disassociate",
            Self::Operational => "operational",
        }
    }
}

/// How risky absorbing a change into code is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Risk {
    /// Cosmetic or easily reverted (tags, descriptions, retention).
    Low,
    /// Changes behaviour (sizes, settings, routing).
    Medium,
    /// Changes who can reach or do what (network exposure, permissions, encryption, deletion).
    High,
}

impl std::fmt::Display for Risk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::High => "high",
        })
    }
}

/// What to do when no state instance has the rule's identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Missing {
    /// Treat the call as an out-of-band creation of the resource (e.g. `aws_s3_bucket_versioning`,
    /// a separate resource whose configuration call also creates it).
    Create,
}

/// A rule's condition on the calls it reads: a value at a path of the request (or response),
/// optionally equal to a given value. Written as a path alone, or as a table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Requires {
    /// `request` (default) or `response`.
    #[serde(default, skip_serializing_if = "is_request")]
    pub from: Payload,
    /// The path that must hold a value.
    pub path: String,
    /// The value the first value at the path must equal, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<Value>,
}

fn is_request(from: &Payload) -> bool {
    *from == Payload::Request
}

impl<'de> Deserialize<'de> for Requires {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Table {
            #[serde(default)]
            from: Payload,
            path: String,
            #[serde(default)]
            equals: Option<Value>,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Path(String),
            Table(Table),
        }
        Ok(match Written::deserialize(deserializer)? {
            Written::Path(path) => Requires {
                from: Payload::Request,
                path,
                equals: None,
            },
            Written::Table(t) => Requires {
                from: t.from,
                path: t.path,
                equals: t.equals,
            },
        })
    }
}

/// Which payload of the record a path reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Payload {
    /// `requestParameters`.
    #[default]
    Request,
    /// `responseElements`.
    Response,
}

impl std::fmt::Display for Payload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Payload::Request => "request",
            Payload::Response => "response",
        })
    }
}

/// One path, or alternatives tried in order (the first that finds a value wins).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Paths {
    /// A single path.
    One(String),
    /// Alternatives, e.g. `["ipPermissions.items[]", ""]` for the nested and the flat form.
    Any(Vec<String>),
}

impl Paths {
    /// The paths, in the order they are tried.
    pub fn as_slice(&self) -> &[String] {
        match self {
            Self::One(p) => std::slice::from_ref(p),
            Self::Any(ps) => ps,
        }
    }
}

/// Where a value comes from: a payload and path(s), with an optional transform.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValueSource {
    /// `request` (default) or `response`.
    #[serde(default)]
    pub from: Payload,
    /// The path(s) to read.
    pub path: Paths,
    /// How to turn what was read into the value (default: kept as it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transform: Option<Transform>,
}

/// One attribute the call sets: from a path, or a constant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetSpec {
    /// The Terraform attribute path, e.g. `instance_type` or `versioning_configuration.status`.
    pub attribute: String,
    /// `request` (default) or `response`.
    #[serde(default)]
    pub from: Payload,
    /// The path(s) to read; exactly one of `path` and `value` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<Paths>,
    /// A constant value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// How to turn what was read into the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transform: Option<Transform>,
    /// Only when another request value equals something (SNS's `SetTopicAttributes` names
    /// the attribute it sets in `attributeName`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<When>,
    /// When the call adds values to or removes them from a set attribute rather than giving
    /// the whole set (EKS's `UpdateClusterConfig` names the log types it turns on or off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub members: Option<Members>,
    /// Read once per element of the array at this path, one value per target, for a call
    /// that changes several resources each with its own values (`RegisterTargets` names each
    /// target's id, port and zone): `path` is read inside the element, and the i-th element's
    /// value goes to the i-th target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub each: Option<Paths>,
}

/// What a call does to the members of a set attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Members {
    /// The values join the set.
    Add,
    /// The values leave the set.
    Remove,
}

/// A condition on the payload for one `set`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct When {
    /// `request` (default) or `response`.
    #[serde(default)]
    pub from: Payload,
    /// The path to compare.
    pub path: String,
    /// The value it must have.
    pub equals: Value,
}

/// The nested blocks an `add-block` / `remove-block` call adds or removes, one per element.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockSpec {
    /// The block (or set-of-objects attribute) name, e.g. `ingress`.
    pub name: String,
    /// `request` (default) or `response`.
    #[serde(default)]
    pub from: Payload,
    /// The path(s) of the elements; the first alternative that finds any wins. `""` is the
    /// payload itself (EC2's flat single-rule form).
    pub each: Paths,
    /// Block field → path(s) inside one element (or a table with `path` and `transform`).
    pub fields: BTreeMap<String, FieldSpec>,
    /// When set, the call replaces the whole set of blocks (S3's `PutBucketLifecycle`): its
    /// blocks are matched to the state's by this field, so only the net change is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// How a block field is read from an element.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FieldSpec {
    /// Path(s) read as they are (an iterating path gives a list).
    Path(Paths),
    /// Path(s) with a transform.
    Transformed {
        /// The path(s) to read.
        path: Paths,
        /// The transform.
        transform: Transform,
    },
}

impl FieldSpec {
    /// The paths and transform.
    pub fn parts(&self) -> (&Paths, Option<Transform>) {
        match self {
            Self::Path(p) => (p, None),
            Self::Transformed { path, transform } => (path, Some(*transform)),
        }
    }
}

/// What a `tags` call does to the `tags` attribute.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TagSpec {
    /// `merge`, `remove` or `replace`.
    pub op: TagOp,
    /// `request` (default) or `response`.
    #[serde(default)]
    pub from: Payload,
    /// Where the tags are: a list of `{key, value}` / `{Key, Value}` objects, a map, or (for
    /// `remove`) a list of keys.
    pub path: Paths,
}

/// A tag operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TagOp {
    /// Add or overwrite the given tags.
    Merge,
    /// Remove the given keys.
    Remove,
    /// Replace all tags with the given ones (S3's PutBucketTagging).
    Replace,
}

/// A condition that makes a change risky: the policy flags it instead of absorbing it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlagSpec {
    /// A `set` attribute or a block field of the rule.
    pub field: String,
    /// Fires when the value is, holds (in a list) or contains (in a string or a document's
    /// strings) this value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<Value>,
    /// Fires when the value equals this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<Value>,
    /// Fires when the value (or a string inside it) ends with this text, e.g. `/0` for a CIDR
    /// that spans every address whatever its base address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends_with: Option<String>,
    /// Fires whenever the field is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub present: Option<bool>,
    /// Fires when the call leaves the field out (S3's `PutBucketLogging` without a target
    /// bucket turns logging off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absent: Option<bool>,
    /// Tests only the values under this key anywhere inside a document (a policy's
    /// `Action`), rather than the whole value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Tests only the statements of a policy document whose `Effect` is this (`Allow`): a
    /// wildcard principal or action in a `Deny` statement narrows access rather than widening
    /// it (a bucket policy denying every principal's non-TLS requests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<String>,
    /// Fires only when the resource's current value of the field holds this text, so the call
    /// moves away from it (`aws:kms` replaced by SSE-S3's `AES256`). A resource the state does
    /// not hold yet (an out-of-band creation) has no current value and does not fire. The
    /// reconciler tests it against the state (`FiredFlag::fires_against`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<String>,
    /// Why it is risky, in plain language.
    pub reason: String,
    /// What a fired flag does to the change (default `hold`).
    #[serde(default, skip_serializing_if = "FlagLevel::is_hold")]
    pub level: FlagLevel,
}

/// What a fired flag does to the change it fired on.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum FlagLevel {
    /// The change is held for a person and not written into the code: it widens who can reach
    /// or do what, or removes encryption or logging.
    #[default]
    Hold,
    /// The change is written into the code with a warning for the reviewer: a hygiene or
    /// resilience downgrade (versioning suspended, point-in-time recovery off).
    Warn,
    /// The change is held whatever the policy says, and so is the rest of its intent: a
    /// security signal fired on the call (audit logging off, a credential created, a resource
    /// shared outside the account; see `knowledge/signals.toml`).
    Security,
    /// The change cannot be written into the code as it was made, so the whole resource is
    /// held whatever the policy says: it was created with a value CloudTrail does not record
    /// (a parameter's value, a function's code), and code without it would not describe it.
    Unwritable,
}

impl FlagLevel {
    /// Whether this is the default, `hold`.
    pub fn is_hold(&self) -> bool {
        *self == Self::Hold
    }
}

impl Rule {
    /// The rule's id, `service:Api`, e.g. `ec2:ModifyInstanceAttribute`.
    pub fn id(&self) -> String {
        match &self.spec.variant {
            Some(variant) => format!("{}:{}:{variant}", self.service, self.spec.api),
            None => format!("{}:{}", self.service, self.spec.api),
        }
    }

    /// The API name.
    pub fn api(&self) -> &str {
        &self.spec.api
    }

    /// The kind of change.
    pub fn kind(&self) -> Kind {
        self.spec.kind
    }

    /// The risk tier.
    pub fn risk(&self) -> Risk {
        self.spec.risk
    }

    /// The resource types the rule may change: its `resource` or `resources`, or for a
    /// `by-id-prefix` rule every type in its prefix table.
    pub fn resource_types(&self) -> Vec<&str> {
        match self.spec.resource.as_deref() {
            Some(BY_ID_PREFIX) => {
                let mut types: Vec<&str> = self
                    .id_prefixes
                    .values()
                    .flatten()
                    .map(String::as_str)
                    .collect();
                types.sort_unstable();
                types.dedup();
                types
            }
            Some(one) => vec![one],
            None => self.spec.resources.iter().map(String::as_str).collect(),
        }
    }

    /// Whether the rule finds each target's type from its id prefix.
    pub fn by_id_prefix(&self) -> bool {
        self.spec.resource.as_deref() == Some(BY_ID_PREFIX)
    }

    /// The types a cloud id may name, by the longest matching prefix (none when no prefix
    /// matches).
    pub fn id_prefix_types(&self, id: &str) -> &[String] {
        prefix_types(&self.id_prefixes, id)
    }
}

/// The types for a cloud id by the longest matching prefix in a table.
pub(crate) fn prefix_types<'a>(table: &'a BTreeMap<String, Vec<String>>, id: &str) -> &'a [String] {
    table
        .iter()
        .filter(|(prefix, _)| id.starts_with(prefix.as_str()))
        .max_by_key(|(prefix, _)| prefix.len())
        .map_or(&[], |(_, types)| types.as_slice())
}

/// One table or an array of them.
fn one_or_more<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written<T> {
        One(T),
        Many(Vec<T>),
    }
    Ok(match Written::deserialize(deserializer)? {
        Written::One(one) => vec![one],
        Written::Many(many) => many,
    })
}

/// A prefix table whose values are one type or a list of types.
pub(crate) fn one_or_many<'de, D>(
    deserializer: D,
) -> Result<BTreeMap<String, Vec<String>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Types {
        One(String),
        Many(Vec<String>),
    }
    let table = BTreeMap::<String, Types>::deserialize(deserializer)?;
    Ok(table
        .into_iter()
        .map(|(prefix, types)| match types {
            Types::One(one) => (prefix, vec![one]),
            Types::Many(many) => (prefix, many),
        })
        .collect())
}
