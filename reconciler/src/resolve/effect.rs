//! What one out-of-band call did to one resource: what resolve makes of each call, and the unit
//! the intent builder groups and nets.

use chrono::{DateTime, Utc};
pub use knowledge::FlagLevel;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

use crate::terraform::state::Instance;

/// A resource as calls refer to it: its Terraform type and its cloud identity (an id, an ARN, a
/// name, or a composite natural key joined with `/`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ResourceKey {
    /// The Terraform resource type, e.g. `aws_security_group`.
    pub resource_type: String,
    /// The identity the call used, e.g. `sg-0abc`.
    pub identity: String,
}

impl fmt::Display for ResourceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.resource_type, self.identity)
    }
}

/// How risky the knowledge base rates an API: the rule files' own tiers.
pub use knowledge::rules::Risk;

/// A risk condition the knowledge base found in a change: why, and whether it holds the change
/// for a person or lets it be written with a warning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flag {
    /// Why the change is risky, e.g. "opens the security group to the whole internet".
    pub reason: String,
    /// `hold` or `warn`.
    pub level: FlagLevel,
}

/// The call behind an effect, as a reviewer sees it in the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// CloudTrail's `eventID`, or the id derived for a record without one.
    pub event_id: String,
    /// When the call was made.
    pub time: DateTime<Utc>,
    /// `eventSource`, e.g. `ec2.amazonaws.com`.
    pub event_source: String,
    /// The API, e.g. `AuthorizeSecurityGroupIngress`.
    pub api: String,
    /// Who, in words (`alice via AdminRole`).
    pub actor: String,
    /// The client (`console`, `aws-cli 2.15 ec2 authorize-security-group-ingress`, ...).
    pub client: String,
    /// A key that is equal for calls of one sign-in session (principal and access key).
    pub session: String,
    /// The region the call was made in.
    pub region: String,
    /// The account the call was made in, when the record says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
}

/// What a call did to a resource.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "change", rename_all = "kebab-case")]
pub enum Change {
    /// An attribute (dotted path through nested blocks, e.g. `versioning_configuration.status`)
    /// now has this value.
    Set {
        /// The attribute path.
        attribute: String,
        /// The new value, in Terraform's shape.
        value: Value,
    },
    /// Values joined or left a set attribute (EKS's enabled log types): the set is the state's,
    /// or what earlier calls made it, with these added and removed.
    Members {
        /// The attribute path.
        attribute: String,
        /// Values added.
        add: Vec<Value>,
        /// Values removed.
        remove: Vec<Value>,
    },
    /// A nested block (Terraform treats repeated blocks as sets) was added.
    AddBlock {
        /// The block type, e.g. `ingress`.
        block: String,
        /// The block's attributes.
        fields: Map<String, Value>,
    },
    /// A nested block with this content was removed.
    RemoveBlock {
        /// The block type.
        block: String,
        /// The block's attributes, as far as the call names them.
        fields: Map<String, Value>,
    },
    /// Tags were set or removed.
    Tags {
        /// Tags set to a value.
        set: BTreeMap<String, String>,
        /// Tag keys removed.
        remove: Vec<String>,
        /// Whether the call replaced the whole tag set (S3's PutBucketTagging does).
        replace: bool,
    },
    /// The resource was created with these attributes.
    Create {
        /// Attribute path → value, as the call gave them.
        attributes: Vec<(String, Value)>,
    },
    /// The resource was deleted.
    Delete,
}

/// One call's effect on one resource, resolved against the state.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Effect {
    /// The call.
    pub evidence: Evidence,
    /// The resource it touched.
    pub resource: ResourceKey,
    /// The state address when Terraform manages the resource.
    pub address: Option<String>,
    /// What it did.
    pub change: Change,
    /// The knowledge-base rule that explained the call, e.g. `ec2:ModifyInstanceAttribute`.
    pub rule: String,
    /// The rule's risk tier.
    pub risk: Risk,
    /// Why the rule considers this particular change risky (e.g. "opens the group to the
    /// whole internet"), with each flag's level; empty when nothing fired.
    pub flags: Vec<Flag>,
    /// The rule's plain-language fragment, e.g. "changed an instance attribute".
    pub summary: String,
    /// Identities the request refers to besides the resource (for causality edges).
    pub mentions: Vec<String>,
    /// Identities the response allocated (for causality edges).
    pub allocates: Vec<String>,
}

impl Effect {
    /// The same call's effect on another managed instance (a rule resource, a route, a policy
    /// or a tag held apart), with the change it made there.
    pub fn on_instance(&self, instance: &Instance, change: Change) -> Effect {
        Effect {
            resource: ResourceKey {
                resource_type: instance.resource_type.clone(),
                identity: instance
                    .string_attribute("id")
                    .unwrap_or_default()
                    .to_owned(),
            },
            address: Some(instance.address.clone()),
            change,
            ..self.clone()
        }
    }
}
