//! Findings: out-of-band calls that no intent absorbs, kept so that nothing is silent — a
//! security signal, a call no rule explains, a value CloudTrail does not record, or a call that
//! changes nothing Terraform configures — each with the resources it touched and how close
//! they are to the project.

use chrono::{DateTime, Utc};
use knowledge::signals::Category;
use serde::Serialize;
use serde_json::Value;

use super::effect::Risk;
use super::scope::{Origin, Scope};
use crate::ingest::Call;
use crate::terraform::state::{Mode, StateIndex};

/// What kind of finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// A security signal fired: flagged for a person, never absorbed.
    Security,
    /// No rule explains the call, or its rule could not read it.
    Unexplained,
    /// The call changed a value CloudTrail does not record.
    HiddenValue,
    /// The call changes nothing Terraform configures (an instance started or stopped).
    Operational,
    /// The call created a resource no workspace's ownership rules claim: not imported.
    Unowned,
}

impl FindingKind {
    /// The kind in plain words, for section titles.
    pub fn label(self) -> &'static str {
        match self {
            Self::Security => "Security findings",
            Self::Unexplained => "Unexplained changes",
            Self::HiddenValue => "Changes CloudTrail does not show",
            Self::Operational => "Operational calls (nothing Terraform configures)",
            Self::Unowned => "Created outside any workspace (not imported)",
        }
    }
}

/// How close a finding is to the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reach {
    /// It touched a resource the project manages.
    Managed,
    /// It happened in the project's accounts and regions, on nothing the project manages.
    Account,
    /// It happened in another account or region.
    Elsewhere,
}

/// A resource a call named: the state address when the project manages it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Touched {
    /// The identity the call used (an id, a name, an ARN).
    pub identity: String,
    /// The managed instance's address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
}

/// A call that no intent absorbs, with why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The kind.
    pub kind: FindingKind,
    /// CloudTrail's `eventID`.
    pub event_id: String,
    /// When the call was made.
    pub time: DateTime<Utc>,
    /// `eventSource`.
    pub event_source: String,
    /// The API.
    pub api: String,
    /// Who made it.
    pub actor: String,
    /// The account it was made in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// The region it was made in.
    pub region: String,
    /// How close it is to the project.
    pub reach: Reach,
    /// The resources it named, managed ones first.
    pub resources: Vec<Touched>,
    /// For a security finding: the kind of harm.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<Category>,
    /// How risky, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub risk: Option<Risk>,
    /// Why, in plain words.
    pub reason: String,
}

impl Finding {
    /// A finding about a call, with the resources it touched; the reach follows from them
    /// and the scope.
    pub fn new(
        kind: FindingKind,
        call: &Call,
        resources: Vec<Touched>,
        scope: &Scope,
        reason: String,
    ) -> Finding {
        let origin = origin(call);
        let reach = if resources.iter().any(|t| t.address.is_some()) {
            Reach::Managed
        } else if scope.contains(&origin) {
            Reach::Account
        } else {
            Reach::Elsewhere
        };
        Finding {
            kind,
            event_id: call.event_id.clone(),
            time: call.event_time,
            event_source: call.event_source.clone(),
            api: call.api_name().to_owned(),
            actor: call.identity.actor(),
            account: call.account_id().map(str::to_owned),
            region: call.aws_region.clone(),
            reach,
            resources,
            category: None,
            risk: None,
            reason,
        }
    }

    /// Whether the finding leaves drift for a person: anything but an operational call or a
    /// creation outside any workspace, in the project's accounts and regions or on its
    /// resources.
    pub fn needs_person(&self) -> bool {
        !matches!(self.kind, FindingKind::Operational | FindingKind::Unowned)
            && self.reach != Reach::Elsewhere
    }
}

/// The account, region and globality of a call.
pub fn origin(call: &Call) -> Origin<'_> {
    Origin {
        account: call.account_id(),
        region: &call.aws_region,
        global: super::scope::is_global(&call.event_source),
    }
}

/// The resources a call names, found without a rule: identifier-like values of its request,
/// response and `resources[]` looked up in the state (id, ARN, natural key) among the
/// instances the scope admits. Managed matches come first; the request's other identifiers
/// follow unmatched so the report can still name what was touched.
pub fn touched(call: &Call, index: &StateIndex, scope: &Scope) -> Vec<Touched> {
    let request = call.request_parameters.json();
    let response = call.response_elements.json();
    touched_in(call, request.as_ref(), response.as_ref(), index, scope)
}

/// [`touched`] with the call's request and response already parsed.
pub fn touched_in(
    call: &Call,
    request: Option<&serde_json::Value>,
    response: Option<&serde_json::Value>,
    index: &StateIndex,
    scope: &Scope,
) -> Vec<Touched> {
    let origin = origin(call);
    let mut named: Vec<String> = Vec::new();
    if let Some(request) = request {
        identifiers(request, None, &mut named);
    }
    let asked = named.len();
    if let Some(response) = response {
        identifiers(response, None, &mut named);
    }
    named.extend(call.resources.iter().filter_map(|r| r.arn.clone()));
    let mut managed: Vec<Touched> = Vec::new();
    let mut other: Vec<Touched> = Vec::new();
    for (n, identity) in named.iter().enumerate() {
        let found = index
            .lookup(None, identity)
            .into_iter()
            .find(|i| i.mode == Mode::Managed && scope.admits(i, &origin));
        match found {
            Some(instance) => push(&mut managed, identity, Some(instance.address.clone())),
            None if n < asked => push(&mut other, identity, None),
            None => {}
        }
    }
    other.retain(|o| !managed.iter().any(|m| m.identity == o.identity));
    managed.extend(other);
    managed
}

/// Adds a touched resource unless the list names it already (by address when managed).
fn push(list: &mut Vec<Touched>, identity: &str, address: Option<String>) {
    let seen = list.iter().any(|t| match (&address, &t.address) {
        (Some(a), Some(b)) => a == b,
        _ => t.identity == identity,
    });
    if !seen {
        list.push(Touched {
            identity: identity.to_owned(),
            address,
        });
    }
}

/// Keys that wrap a list or value without naming it (EC2's `items`/`item`, XML's `content`).
const WRAPPERS: &[&str] = &["items", "item", "content", "member", "members"];

/// Identifier-like strings in a payload: ARNs and AWS ids (`i-0abc…`) anywhere, and values
/// under keys that name a
/// thing (`…Id`, `…Ids`, `…Name`, `…Arn`, `…Identifier`, `…Url`, `bucket`), leaving out
/// request bookkeeping (request ids, client tokens) and redaction markers.
fn identifiers(value: &Value, key: Option<&str>, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let named = if WRAPPERS.contains(&k.as_str()) {
                    key
                } else {
                    Some(k.as_str())
                };
                identifiers(v, named, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| identifiers(v, key, out)),
        Value::String(s)
            if plausible(s)
                && (super::looks_like_id(s) || key.is_some_and(names_a_thing))
                && !out.contains(s) =>
        {
            // A connection string names a thing, but its password is no part of the name.
            out.push(crate::text::without_password(s));
        }
        _ => {}
    }
}

/// Whether a key's values name a resource.
fn names_a_thing(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    let bookkeeping = ["request", "token", "client", "owner", "account", "version"];
    // Keys whose values name no resource: EC2's launch-permission `userId` is an account,
    // a policy statement's id and an attribute's name are labels.
    let labels = ["userid", "statementid", "sid", "attributename"];
    if bookkeeping.iter().any(|b| key.contains(b)) || labels.contains(&key.as_str()) {
        return false;
    }
    let suffixes = [
        "id",
        "ids",
        "name",
        "names",
        "arn",
        "arns",
        "identifier",
        "identifiers",
        "url",
        "urls",
    ];
    key == "bucket" || suffixes.iter().any(|s| key.ends_with(s))
}

/// A string that could be an identifier: short, one line, not a redaction marker.
fn plausible(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 512
        && !s.contains(char::is_whitespace)
        && s != "HIDDEN_DUE_TO_SECURITY_REASONS"
        && s != "<sensitiveDataRemoved>"
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn identifiers_come_from_naming_keys_through_wrappers_and_arns_anywhere() {
        let payload = json!({
            "DeleteFlowLogsRequest": {"FlowLogId": {"content": "fl-0e17aa62a21d4bbfe", "tag": 1}},
            "instancesSet": {"items": [{"instanceId": "i-1"}, {"instanceId": "i-2"}]},
            "requestId": "96d51d7f-c18d-45b9-8315-9aa0fde21e88",
            "clientToken": "abc",
            "ownerId": "111122223333",
            "destination": "arn:aws:s3:::logs",
            "userName": "HIDDEN_DUE_TO_SECURITY_REASONS",
            "description": "my-bucket"
        });
        let mut out = Vec::new();
        identifiers(&payload, None, &mut out);
        out.sort();
        assert_eq!(
            out,
            ["arn:aws:s3:::logs", "fl-0e17aa62a21d4bbfe", "i-1", "i-2"]
        );
    }
}
