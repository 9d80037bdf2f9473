//! Security signals: calls that are flagged for a person whatever Terraform could hold,
//! because they switch off or narrow audit logging, create or reset credentials, share a
//! resource outside the account, change code or boot-time behaviour, open a remote session on
//! an instance, take the account out of its organisation, or open a paid service to use.
//!
//! The shipped list is `knowledge/signals.toml` (format in its header). A signal names the
//! event source and APIs, a category, a risk and a plain reason; optional conditions on the
//! request or response narrow it (an AMI's launch permission given to an account the project
//! does not know, a detector disabled rather than enabled). [`SignalSet::fired`] tests a call.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::rules::{JsonPath, Paths, Payload, Risk, Transform, normalize_api};

/// The shipped signal file, by the name errors use.
const BUNDLED: (&str, &str) = ("knowledge/signals.toml", include_str!("../signals.toml"));

/// What kind of harm a signal is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// Audit logging or threat detection switched off or narrowed.
    AuditLogging,
    /// Credentials created, reactivated or reset, or multi-factor authentication removed.
    Credentials,
    /// A resource shared outside the account or made public, or a trust widened.
    Sharing,
    /// Code or boot-time behaviour changed (user data, function code, layers).
    Code,
    /// A command or session run on an instance, or a key pushed to it.
    RemoteAccess,
    /// Keys disabled or scheduled for deletion.
    DataProtection,
    /// The account's place in its organisation or its guardrails changed.
    Organization,
    /// A paid service opened to use at the account's expense (third-party models enabled).
    ServiceHijacking,
}

impl Category {
    /// The category in plain words.
    pub fn label(self) -> &'static str {
        match self {
            Self::AuditLogging => "audit logging",
            Self::Credentials => "credentials",
            Self::Sharing => "sharing outside the account",
            Self::Code => "code change",
            Self::RemoteAccess => "remote access",
            Self::DataProtection => "data protection",
            Self::Organization => "organisation",
            Self::ServiceHijacking => "service hijacking",
        }
    }
}

/// A condition on a call's request or response; every condition of a signal must hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    /// Dotted path(s) into the payload (the first that finds a value wins).
    pub path: Paths,
    /// `response` to read `responseElements` (default: `request`).
    #[serde(default)]
    pub from: Payload,
    /// Applied to each value first (`json` for a policy document held in a string).
    #[serde(default)]
    pub transform: Option<Transform>,
    /// Tests only the statements of a policy document with this `Effect`.
    #[serde(default)]
    pub effect: Option<String>,
    /// Tests only the values under this key anywhere inside the value (`Principal`).
    #[serde(default)]
    pub key: Option<String>,
    /// Holds when a value is there.
    #[serde(default)]
    pub present: Option<bool>,
    /// Holds when a value equals this.
    #[serde(default)]
    pub equals: Option<Value>,
    /// Holds when a string inside a value contains this text.
    #[serde(default)]
    pub contains: Option<String>,
    /// Holds when a value grants something outside the known accounts: a wildcard (`*`), the
    /// group `all`, or an account id that is neither the call's account nor a known one.
    #[serde(default)]
    pub grants_outside: Option<bool>,
}

/// One signal as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signal {
    /// CloudTrail's `eventSource`.
    pub event_source: String,
    /// The APIs (Lambda's without the version suffix).
    pub apis: Vec<String>,
    /// The kind of harm.
    pub category: Category,
    /// How risky.
    pub risk: Risk,
    /// Why it matters, in plain words.
    pub reason: String,
    /// Conditions that must all hold (none: the call alone fires it).
    #[serde(default)]
    pub when: Vec<Condition>,
}

/// A signal that fired on a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fired {
    /// The kind of harm.
    pub category: Category,
    /// How risky.
    pub risk: Risk,
    /// Why it matters.
    pub reason: String,
}

/// A signal file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignalError {
    /// The file is not valid.
    #[error("{file}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// What is wrong, with the line when known.
        message: String,
    },
}

/// The signals, checked in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SignalSet {
    signals: Vec<Signal>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SignalFile {
    #[serde(default)]
    signal: Vec<Signal>,
}

impl SignalSet {
    /// The shipped signals, parsed on first use.
    pub fn bundled() -> Result<&'static SignalSet, SignalError> {
        static SET: OnceLock<Result<SignalSet, SignalError>> = OnceLock::new();
        SET.get_or_init(|| Self::parse(BUNDLED.0, BUNDLED.1))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Parses a signal file; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<SignalSet, SignalError> {
        let invalid = |message: String| SignalError::Invalid {
            file: file.to_owned(),
            message,
        };
        let parsed: SignalFile = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map_or(1, |s| text[..s.start].matches('\n').count() + 1);
            invalid(format!("line {line}: {}", e.message().trim()))
        })?;
        for signal in &parsed.signal {
            check(signal).map_err(|m| {
                invalid(format!(
                    "{} {}: {m}",
                    signal.event_source,
                    signal.apis.join(", ")
                ))
            })?;
        }
        Ok(SignalSet {
            signals: parsed.signal,
        })
    }

    /// Every signal.
    pub fn iter(&self) -> impl Iterator<Item = &Signal> {
        self.signals.iter()
    }

    /// The signals a call fires, without repeats. `known_accounts` are the accounts a grant
    /// may name without firing `grants_outside` (the call's own account always may).
    pub fn fired(&self, call: &CallView<'_>, known_accounts: &[String]) -> Vec<Fired> {
        let api = normalize_api(call.api);
        let mut out: Vec<Fired> = Vec::new();
        for signal in &self.signals {
            let matches = signal.event_source == call.event_source
                && signal.apis.iter().any(|a| a == api)
                && signal.when.iter().all(|c| holds(c, call, known_accounts));
            if !matches {
                continue;
            }
            let fired = Fired {
                category: signal.category,
                risk: signal.risk,
                reason: signal.reason.clone(),
            };
            if !out.contains(&fired) {
                out.push(fired);
            }
        }
        out
    }
}

/// What a signal reads of a call.
#[derive(Debug, Clone, Copy)]
pub struct CallView<'a> {
    /// `eventSource`.
    pub event_source: &'a str,
    /// `eventName`.
    pub api: &'a str,
    /// `recipientAccountId`, when known.
    pub account: Option<&'a str>,
    /// `requestParameters`.
    pub request: Option<&'a Value>,
    /// `responseElements`.
    pub response: Option<&'a Value>,
}

fn check(signal: &Signal) -> Result<(), String> {
    if signal.apis.is_empty() || signal.reason.trim().is_empty() {
        return Err("`apis` and `reason` must not be empty".into());
    }
    for condition in &signal.when {
        for path in condition.path.as_slice() {
            JsonPath::parse(path)?;
        }
        let tests = [
            condition.present.is_some(),
            condition.equals.is_some(),
            condition.contains.is_some(),
            condition.grants_outside.is_some(),
        ];
        if tests.iter().filter(|t| **t).count() != 1 {
            return Err(
                "a condition needs exactly one of `present`, `equals`, `contains`, `grants_outside`"
                    .into(),
            );
        }
    }
    Ok(())
}

/// Whether one condition holds for a call.
fn holds(condition: &Condition, call: &CallView<'_>, known: &[String]) -> bool {
    let values = values(condition, call);
    if condition.present == Some(true) {
        return values.iter().any(|v| !is_empty(v));
    }
    if condition.present == Some(false) {
        return values.iter().all(is_empty);
    }
    if let Some(expected) = &condition.equals {
        return values.iter().any(|v| v == expected);
    }
    if let Some(text) = &condition.contains {
        return values
            .iter()
            .any(|v| strings(v).iter().any(|s| s.contains(text.as_str())));
    }
    if condition.grants_outside == Some(true) {
        return values
            .iter()
            .any(|v| grants_outside(v, call.account, known));
    }
    false
}

/// The values a condition tests: selected, transformed, narrowed to `effect` statements and
/// `key` values.
fn values(condition: &Condition, call: &CallView<'_>) -> Vec<Value> {
    let root = match condition.from {
        Payload::Response => call.response,
        Payload::Request => call.request,
    };
    let Some(root) = root else {
        return Vec::new();
    };
    let selected = condition
        .path
        .as_slice()
        .iter()
        .filter_map(|p| JsonPath::parse(p).ok())
        .map(|p| p.select(root))
        .find(|found| !found.is_empty())
        .unwrap_or_default();
    selected
        .into_iter()
        .filter_map(|v| match condition.transform {
            Some(t) => t.apply_one(v.clone()).ok(),
            None => Some(v.clone()),
        })
        .flat_map(|v| match &condition.effect {
            Some(effect) => statements_with_effect(&v, effect),
            None => vec![v],
        })
        .flat_map(|v| match &condition.key {
            Some(key) => under_key(&v, key),
            None => vec![v],
        })
        .collect()
}

/// A policy document's statements whose `Effect` is `effect`.
fn statements_with_effect(document: &Value, effect: &str) -> Vec<Value> {
    let statements = match document.get("Statement") {
        Some(Value::Array(items)) => items.clone(),
        Some(one @ Value::Object(_)) => vec![one.clone()],
        _ => Vec::new(),
    };
    statements
        .into_iter()
        .filter(|s| s.get("Effect").and_then(Value::as_str) == Some(effect))
        .collect()
}

/// Every value under `key` anywhere inside `value`.
fn under_key(value: &Value, key: &str) -> Vec<Value> {
    let mut out = Vec::new();
    collect_key(value, key, &mut out);
    out
}

fn collect_key(value: &Value, key: &str, out: &mut Vec<Value>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k == key {
                    out.push(v.clone());
                } else {
                    collect_key(v, key, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_key(v, key, out)),
        _ => {}
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

/// Every string inside a value.
fn strings(value: &Value) -> Vec<&str> {
    match value {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().flat_map(strings).collect(),
        Value::Object(map) => map.values().flat_map(strings).collect(),
        _ => Vec::new(),
    }
}

/// Whether a grant reaches beyond the known accounts: a wildcard, the group `all`, or an
/// account id (bare or inside an ARN) that is not the call's account nor a known one.
pub fn grants_outside(value: &Value, own: Option<&str>, known: &[String]) -> bool {
    strings(value).into_iter().any(|s| {
        let s = s.trim();
        s == "*"
            || s.eq_ignore_ascii_case("all")
            || account_ids(s)
                .into_iter()
                .any(|id| Some(id) != own && !known.iter().any(|k| k == id))
    })
}

/// The 12-digit account ids in a text: runs of exactly twelve digits.
pub fn account_ids(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut start = None;
    for (i, b) in bytes.iter().enumerate().chain([(bytes.len(), &b' ')]) {
        match (b.is_ascii_digit() && i < bytes.len(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                if i - s == 12 {
                    out.push(&text[s..i]);
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn view<'a>(source: &'a str, api: &'a str, request: &'a Value) -> CallView<'a> {
        CallView {
            event_source: source,
            api,
            account: Some("111122223333"),
            request: Some(request),
            response: None,
        }
    }

    #[test]
    fn the_shipped_signals_load() {
        let set = SignalSet::bundled().expect("signals.toml loads");
        assert!(set.iter().count() > 40);
    }

    #[test]
    fn account_ids_are_runs_of_exactly_twelve_digits() {
        assert_eq!(
            account_ids("arn:aws:iam::193672423079:root"),
            ["193672423079"]
        );
        assert_eq!(account_ids("846424999548"), ["846424999548"]);
        assert!(account_ids("1234567890123").is_empty());
        assert!(account_ids("12345678901").is_empty());
    }

    #[test]
    fn a_grant_to_the_own_account_or_a_known_one_stays_inside() {
        let known = vec!["444455556666".to_owned()];
        let own = Some("111122223333");
        assert!(!grants_outside(
            &json!("arn:aws:iam::111122223333:root"),
            own,
            &known
        ));
        assert!(!grants_outside(
            &json!({"userId": "444455556666"}),
            own,
            &known
        ));
        assert!(grants_outside(
            &json!({"userId": "846424999548"}),
            own,
            &known
        ));
        assert!(grants_outside(&json!({"group": "all"}), own, &known));
        assert!(grants_outside(&json!("*"), own, &known));
        assert!(!grants_outside(
            &json!({"Service": "ec2.amazonaws.com"}),
            own,
            &known
        ));
    }

    #[test]
    fn an_ami_shared_with_a_foreign_account_fires_and_one_kept_private_does_not() {
        let set = SignalSet::bundled().unwrap();
        let shared = json!({"attributeType": "launchPermission", "imageId": "ami-1",
            "launchPermission": {"add": {"items": [{"userId": "846424999548"}]}}});
        let fired = set.fired(
            &view("ec2.amazonaws.com", "ModifyImageAttribute", &shared),
            &[],
        );
        assert_eq!(fired.len(), 1);
        assert_eq!(fired[0].category, Category::Sharing);
        let removed = json!({"attributeType": "launchPermission", "imageId": "ami-1",
            "launchPermission": {"remove": {"items": [{"userId": "846424999548"}]}}});
        assert!(
            set.fired(
                &view("ec2.amazonaws.com", "ModifyImageAttribute", &removed),
                &[]
            )
            .is_empty()
        );
    }

    #[test]
    fn a_trust_policy_naming_an_unknown_account_fires_on_its_principal_only() {
        let set = SignalSet::bundled().unwrap();
        let document = |principal: &str| {
            json!({"roleName": "app", "policyDocument": json!({"Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Principal": {"AWS": principal},
                "Action": "sts:AssumeRole", "Resource": "arn:aws:iam::999999999999:role/x"}]})
                .to_string()})
        };
        let foreign = document("arn:aws:iam::193672423079:root");
        let own = document("arn:aws:iam::111122223333:root");
        let call = |r| view("iam.amazonaws.com", "UpdateAssumeRolePolicy", r);
        assert_eq!(set.fired(&call(&foreign), &[]).len(), 1);
        assert!(set.fired(&call(&own), &[]).is_empty());
    }

    #[test]
    fn lambda_versioned_names_match_and_conditions_narrow() {
        let set = SignalSet::bundled().unwrap();
        let layers = json!({"functionName": "f", "layers": ["arn:aws:lambda:r:1:layer:x:1"]});
        let memory = json!({"functionName": "f", "memorySize": 256});
        let api = "UpdateFunctionConfiguration20150331v2";
        assert_eq!(
            set.fired(&view("lambda.amazonaws.com", api, &layers), &[])
                .len(),
            1
        );
        assert!(
            set.fired(&view("lambda.amazonaws.com", api, &memory), &[])
                .is_empty()
        );
    }

    #[test]
    fn a_condition_needs_one_test() {
        let text = r#"
[[signal]]
event_source = "x.amazonaws.com"
apis = ["Y"]
category = "code"
risk = "high"
reason = "r"
when = [{ path = "a" }]
"#;
        let error = SignalSet::parse("s.toml", text).unwrap_err().to_string();
        assert!(error.starts_with("s.toml: "), "{error}");
        assert!(error.contains("exactly one"), "{error}");
    }

    /// The categories the signals fire for `request` of `api` at `source`.
    fn fires(source: &str, api: &str, request: Value) -> Vec<Category> {
        let set = SignalSet::bundled().unwrap();
        set.fired(&view(source, api, &request), &[])
            .into_iter()
            .map(|f| f.category)
            .collect()
    }

    #[test]
    fn third_party_model_access_enabled_in_bedrock_fires() {
        let hijacking = vec![Category::ServiceHijacking];
        // CloudTrail records the model id of CreateFoundationModelAgreement, not its offer token.
        let agreement = json!({"modelId": "anthropic.claude-3-haiku-20240307-v1:0"});
        assert_eq!(
            fires(
                "bedrock.amazonaws.com",
                "CreateFoundationModelAgreement",
                agreement.clone()
            ),
            hijacking
        );
        // PutUseCaseForModelAccess's form is a blob: its record carries no parameters.
        assert_eq!(
            fires(
                "bedrock.amazonaws.com",
                "PutUseCaseForModelAccess",
                Value::Null
            ),
            hijacking
        );
        // Withdrawing an agreement closes access rather than opening it.
        assert!(
            fires(
                "bedrock.amazonaws.com",
                "DeleteFoundationModelAgreement",
                agreement
            )
            .is_empty()
        );
    }

    #[test]
    fn logging_switched_off_in_the_wider_services_fires() {
        let audit = vec![Category::AuditLogging];
        // Bedrock's DeleteModelInvocationLoggingConfiguration takes no parameters.
        let bedrock = fires(
            "bedrock.amazonaws.com",
            "DeleteModelInvocationLoggingConfiguration",
            Value::Null,
        );
        assert_eq!(bedrock, audit);
        let stream = json!({"resourceArn": "arn:aws:rds:us-east-1:111122223333:cluster:db", "applyImmediately": true});
        assert_eq!(
            fires("rds.amazonaws.com", "StopActivityStream", stream),
            audit
        );
        // S3 server access logging: an empty BucketLoggingStatus turns it off.
        let off = json!({"bucketName": "b", "logging": "",
            "BucketLoggingStatus": {"xmlns": "http://s3.amazonaws.com/doc/2006-03-01/"}});
        assert_eq!(fires("s3.amazonaws.com", "PutBucketLogging", off), audit);
        let on = json!({"bucketName": "b", "logging": "", "BucketLoggingStatus": {
            "LoggingEnabled": {"TargetBucket": "logs", "TargetPrefix": "b/"}}});
        assert!(fires("s3.amazonaws.com", "PutBucketLogging", on).is_empty());
        let exports = json!({"dBInstanceIdentifier": "db",
            "cloudwatchLogsExportConfiguration": {"disableLogTypes": ["audit"]}});
        assert_eq!(
            fires("rds.amazonaws.com", "ModifyDBInstance", exports),
            audit
        );
        assert_eq!(
            fires(
                "redshift.amazonaws.com",
                "DisableLogging",
                json!({"clusterIdentifier": "c"})
            ),
            audit
        );
        let alarms = json!({"alarmNames": ["high-5xx"]});
        assert_eq!(
            fires("monitoring.amazonaws.com", "DisableAlarmActions", alarms),
            audit
        );
        let filter = json!({"logGroupName": "/app", "filterName": "to-siem"});
        assert_eq!(
            fires("logs.amazonaws.com", "DeleteSubscriptionFilter", filter),
            audit
        );
    }

    #[test]
    fn public_exposure_in_the_wider_services_fires() {
        let sharing = vec![Category::Sharing];
        let public = json!({"projectArn": "arn:aws:codebuild:us-east-1:111122223333:project/p",
            "projectVisibility": "PUBLIC_READ"});
        assert_eq!(
            fires("codebuild.amazonaws.com", "UpdateProjectVisibility", public),
            sharing
        );
        let private = json!({"projectArn": "arn:aws:codebuild:us-east-1:111122223333:project/p",
            "projectVisibility": "PRIVATE"});
        assert!(
            fires(
                "codebuild.amazonaws.com",
                "UpdateProjectVisibility",
                private
            )
            .is_empty()
        );
        for api in [
            "ModifyDBInstance",
            "CreateDBInstance",
            "ModifyDBCluster",
            "CreateDBCluster",
        ] {
            let open = json!({"dBInstanceIdentifier": "db", "publiclyAccessible": true});
            assert_eq!(fires("rds.amazonaws.com", api, open), sharing, "{api}");
            let closed = json!({"dBInstanceIdentifier": "db", "publiclyAccessible": false});
            assert!(fires("rds.amazonaws.com", api, closed).is_empty(), "{api}");
        }
        let block = |policy: bool| {
            json!({"bucketName": "b", "publicAccessBlock": "", "PublicAccessBlockConfiguration": {
                "BlockPublicAcls": true, "IgnorePublicAcls": true,
                "BlockPublicPolicy": policy, "RestrictPublicBuckets": true}})
        };
        assert_eq!(
            fires(
                "s3.amazonaws.com",
                "PutBucketPublicAccessBlock",
                block(false)
            ),
            sharing
        );
        assert!(
            fires(
                "s3.amazonaws.com",
                "PutBucketPublicAccessBlock",
                block(true)
            )
            .is_empty()
        );
        let document =
            json!({"name": "runbook", "permissionType": "Share", "accountIdsToAdd": ["All"]});
        assert_eq!(
            fires("ssm.amazonaws.com", "ModifyDocumentPermission", document),
            sharing
        );
        let table = json!({"resourceArn": "arn:aws:dynamodb:us-east-1:111122223333:table/t",
            "policy": "{\"Statement\":[{\"Effect\":\"Allow\",\"Principal\":\"*\",\"Action\":\"dynamodb:GetItem\"}]}"});
        assert_eq!(
            fires("dynamodb.amazonaws.com", "PutResourcePolicy", table),
            sharing
        );
        let imds = json!({"instanceId": "i-1", "httpTokens": "optional"});
        assert_eq!(
            fires("ec2.amazonaws.com", "ModifyInstanceMetadataOptions", imds),
            vec![Category::DataProtection]
        );
    }
}
