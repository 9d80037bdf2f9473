//! The verdicts a call can get, and the first checks, which read only a record's first
//! fields: a failed call changed nothing, a data event is not configuration, a read changed
//! nothing. Sources use them to settle records early; [`crate::attribute`] runs them first
//! and then judges identities and clients.

use serde::{Deserialize, Serialize};

use super::record::{Basics, api_name, read_only_by_documentation};

/// The attribution of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The call only read.
    ReadOnly,
    /// The call failed, so it changed nothing.
    Failed,
    /// Terraform (or OpenTofu) made the call, judged by its user agent.
    Terraform,
    /// The identity configured as the pipeline's Terraform principal made the call.
    IacPrincipal,
    /// Terraform made the call and its user agent carries the configured run token.
    RunToken,
    /// Another infrastructure-as-code tool made the call (CloudFormation, Pulumi, CDK).
    OtherIac,
    /// AWS made the call itself (Auto Scaling, a service-linked role, a service event).
    Service,
    /// A data-plane event (object reads and writes, function invocations).
    DataEvent,
    /// A change made outside the code: the candidates for reconciliation.
    OutOfBand,
}

impl Verdict {
    /// Every verdict, in report order.
    pub const ALL: [Verdict; 9] = [
        Verdict::OutOfBand,
        Verdict::Terraform,
        Verdict::IacPrincipal,
        Verdict::RunToken,
        Verdict::OtherIac,
        Verdict::Service,
        Verdict::ReadOnly,
        Verdict::Failed,
        Verdict::DataEvent,
    ];

    /// The kebab-case name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::Failed => "failed",
            Self::Terraform => "terraform",
            Self::IacPrincipal => "iac-principal",
            Self::RunToken => "run-token",
            Self::OtherIac => "other-iac",
            Self::Service => "service",
            Self::DataEvent => "data-event",
            Self::OutOfBand => "out-of-band",
        }
    }

    /// A compact number for storage.
    pub fn code(self) -> u8 {
        Self::ALL
            .iter()
            .position(|v| *v == self)
            .map_or(0, |p| p as u8)
    }

    /// The verdict for a [`Verdict::code`].
    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.get(usize::from(code)).copied()
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Verdict {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|v| v.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|v| v.name()).collect();
                format!(
                    "unknown verdict `{s}`; expected one of {}",
                    names.join(", ")
                )
            })
    }
}

/// A verdict with the reason for it, in words a reviewer can check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attribution {
    /// The verdict.
    pub verdict: Verdict,
    /// Why.
    pub reason: String,
}

impl Attribution {
    /// A verdict with its reason.
    pub fn new(verdict: Verdict, reason: impl Into<String>) -> Self {
        Self {
            verdict,
            reason: reason.into(),
        }
    }
}

/// The verdict of the first checks, which read only a call's [`Basics`]: failed, data event,
/// read-only. `None` when the later checks (identity, user agent) must decide.
pub fn settled_verdict(basics: &Basics<'_>) -> Option<Verdict> {
    EarlyVerdict::of(basics).map(|settled| settled.verdict)
}

/// A verdict settled by the first checks, with the words of its reason when they are fixed.
pub(crate) struct EarlyVerdict {
    /// The verdict.
    verdict: Verdict,
    /// The fixed words of its reason, when they are fixed.
    reason: Option<&'static str>,
}

impl EarlyVerdict {
    fn new(verdict: Verdict, reason: Option<&'static str>) -> Option<Self> {
        Some(Self { verdict, reason })
    }

    /// The first checks' verdict, when they settle the call.
    pub(crate) fn of(call: &Basics<'_>) -> Option<Self> {
        if call.error_code.is_some() {
            return Self::new(Verdict::Failed, None);
        }
        match call.event_category {
            Some("Data") => {
                return Self::new(
                    Verdict::DataEvent,
                    Some(
                        "data event: acts on data (objects, items, invocations), not on configuration",
                    ),
                );
            }
            Some("NetworkActivity") => {
                return Self::new(
                    Verdict::DataEvent,
                    Some(
                        "network activity event: a request through a VPC endpoint, not a configuration change",
                    ),
                );
            }
            Some("Insight") => {
                return Self::new(
                    Verdict::Service,
                    Some("CloudTrail Insights event written by AWS"),
                );
            }
            _ if call.management_event == Some(false) && call.event_type == "AwsApiCall" => {
                return Self::new(Verdict::DataEvent, Some("not a management event"));
            }
            _ => {}
        }
        if call.read_only || call.event_type == "AwsConsoleSignIn" {
            return Self::new(Verdict::ReadOnly, None);
        }
        None
    }

    /// The attribution, its reason written out.
    pub(crate) fn attribution(self, call: &Basics<'_>) -> Attribution {
        let reason = match (self.reason, call.error_code) {
            (Some(reason), _) => reason.to_owned(),
            (None, Some(code)) => format!("failed with {code}, so nothing changed"),
            (None, None) => read_only_reason(call),
        };
        Attribution::new(self.verdict, reason)
    }
}

fn read_only_reason(call: &Basics<'_>) -> String {
    match (call.event_type, call.read_only_derived) {
        ("AwsConsoleSignIn", _) => "console sign-in: changes no resource".to_owned(),
        (_, true) => format!(
            "{} only reads (no readOnly field; {})",
            api_name(call.event_name),
            read_only_by_documentation(call.event_source, call.event_name).describe()
        ),
        (_, false) => format!("{} only reads (readOnly: true)", api_name(call.event_name)),
    }
}
