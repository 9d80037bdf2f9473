//! What a system under test did, in the shape the checks read: the files it changed and the
//! decisions it reports. Any system can give this (`run --system` reads the decisions from
//! the JSON file the system writes; the files from its patched project copy); retrace's own
//! outcome is translated by the contender ([`crate::contender`]). The checks read no decision
//! of the product's but through this shape.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One file the system changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    /// Its path (relative to the project, or as the system names it).
    pub path: PathBuf,
    /// Its new text; `None` when the system deleted it.
    pub new: Option<String>,
}

/// What the system reports, as the decisions file holds it. Every field may be absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decisions {
    /// Things reported for a person rather than written into code.
    #[serde(default)]
    pub findings: Vec<Reported>,
    /// What the system decided about each part of each change it saw.
    #[serde(default)]
    pub decisions: Vec<Ruled>,
    /// The event ids of out-of-band writes the system itself says it left with no fate (in
    /// no intent and no finding); a system that does not account for its input reports none.
    #[serde(default)]
    pub unaccounted: Vec<String>,
}

/// The kinds of finding the checks look for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReportedKind {
    /// A call no rule or model explains, on a resource.
    Unexplained,
    /// A security event (a foreign principal trusted, a resource opened to everyone).
    Security,
    /// A resource created outside any workspace: reported, not imported.
    Unowned,
    /// Anything else (the checks ignore it).
    #[serde(other)]
    Other,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reported {
    /// Its kind.
    pub kind: ReportedKind,
    /// The call it is about, `eventSource:eventName` (`iam.amazonaws.com:UpdateAssumeRolePolicy`).
    #[serde(default)]
    pub event: String,
    /// The resources it names.
    #[serde(default)]
    pub resources: Vec<Named>,
}

/// A resource a finding names: its address in the code when managed, and its cloud identity
/// (id, name or ARN).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Named {
    /// `aws_iam_role.app`, when the code manages it.
    #[serde(default)]
    pub address: Option<String>,
    /// The id, name or ARN.
    #[serde(default)]
    pub identity: String,
}

/// The decision about one part of one resource's change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ruled {
    /// The instance address, when the code manages the resource.
    #[serde(default)]
    pub address: Option<String>,
    /// The resource type, `aws_security_group`.
    #[serde(default)]
    pub resource_type: String,
    /// The cloud identity (id, name or ARN).
    #[serde(default)]
    pub identity: String,
    /// The top-level attribute (`ingress`, `tags`, `timeouts.create`); empty for the whole
    /// resource.
    #[serde(default)]
    pub attribute: String,
    /// `absorb` (written into code), `flag` (left to a person), `ignore` (left to its
    /// automation through `ignore_changes`).
    pub decision: Verdict,
}

/// A decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Written into code.
    Absorb,
    /// Left to a person.
    Flag,
    /// Left to its automation.
    Ignore,
}

/// The files and decisions of one run of a system.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// The files it changed.
    pub changed: Vec<ChangedFile>,
    /// What it reported and decided.
    pub decisions: Decisions,
}
