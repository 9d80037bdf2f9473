//! Running changes in a fresh simulated cloud as one session of one person or automation,
//! with the noise real trails carry, and collecting the records.

use super::change::Change;
use crate::sim::{Agent, Caller, Cloud, Identity, Request, SimError};
use chrono::{DateTime, Duration, Utc};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;
use std::collections::BTreeMap;

/// The role Terraform runs as in CI.
pub const TERRAFORM_ROLE: &str = "terraform-ci";
/// The role SSM Automation runbooks assume.
pub const AUTOMATION_ROLE: &str = "AutomationServiceRole";

/// People making hand edits, with what they use.
const HUMANS: [(&str, &str); 5] = [
    ("alice", "console"),
    ("bob", "cli"),
    ("carol@example.com", "sso"),
    ("deploy-script", "boto3"),
    ("dave@example.com", "sso-cli"),
];

/// A session in progress.
pub struct Session {
    /// The cloud calls run in.
    pub cloud: Cloud,
    /// The records so far.
    pub records: Vec<Value>,
    /// The session's random generator (noise choices; the cloud has its own).
    pub rng: ChaCha8Rng,
    /// Values from earlier responses, for `${key}` placeholders.
    found: BTreeMap<String, String>,
    /// Write calls that may set values the cloud already has, for Terraform's no-op applies.
    reasserts: Vec<Request>,
}

impl Session {
    /// A session on `cloud` with choices seeded by `seed`.
    pub fn new(cloud: Cloud, seed: u64) -> Session {
        Session {
            cloud,
            records: Vec::new(),
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_5e55_1011),
            found: BTreeMap::new(),
            reasserts: Vec::new(),
        }
    }

    /// The same session, with write calls Terraform's apply may re-send.
    pub fn with_reasserts(mut self, reasserts: Vec<Request>) -> Session {
        self.reasserts = reasserts;
        self
    }

    /// A person and how they are described: `alice (console)`.
    pub fn human(&mut self) -> (Caller, String) {
        let (name, how) = HUMANS[self.rng.random_range(0..HUMANS.len())];
        match how {
            "console" => (
                Caller::user(name, Agent::Console),
                format!("{name} (console)"),
            ),
            "cli" => (Caller::user(name, Agent::Cli), format!("{name} (CLI)")),
            "boto3" => (Caller::user(name, Agent::Boto3), format!("{name} (boto3)")),
            "sso" => (
                Caller::sso_console(name, "AdministratorAccess"),
                format!("{name} via SSO AdministratorAccess (console)"),
            ),
            _ => (
                Caller::new(
                    Identity::Sso {
                        permission_set: "PowerUserAccess".to_owned(),
                        user: name.to_owned(),
                    },
                    Agent::Cli,
                ),
                format!("{name} via SSO PowerUserAccess (CLI)"),
            ),
        }
    }

    /// A new SSM Automation execution id (a UUID).
    pub fn execution_id(&mut self) -> String {
        let hex: String = (0..32)
            .map(|_| char::from(b"0123456789abcdef"[self.rng.random_range(0..16)]))
            .collect();
        format!(
            "{}-{}-{}-{}-{}",
            &hex[0..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..32]
        )
    }

    /// Runs one call, placeholders filled; returns the error code AWS answered with.
    pub fn call(&mut self, request: &Request, caller: &Caller) -> Result<Option<String>, SimError> {
        let request = self.filled(request);
        let outcome = self.cloud.execute(&request, caller)?;
        collect(&outcome.record["responseElements"], &mut self.found, 0);
        self.records.push(outcome.record);
        Ok(outcome.error.map(|e| e.code))
    }

    /// Runs every call of a change; fails when one is refused.
    pub fn apply(&mut self, change: &Change, caller: &Caller) -> Result<(), String> {
        for request in &change.calls {
            match self.call(request, caller) {
                Ok(None) => {}
                Ok(Some(code)) => return Err(format!("{} refused: {code}", request.event_name)),
                Err(e) => return Err(e.to_string()),
            }
        }
        Ok(())
    }

    /// Runs calls that put a change back; fails when one is refused.
    pub fn undo(&mut self, change: &Change, caller: &Caller) -> Result<(), String> {
        let undo = Change {
            calls: change.undo.clone(),
            ..change.clone()
        };
        self.apply(&undo, caller)
    }

    /// `n` read calls by `caller`.
    pub fn reads(&mut self, caller: &Caller, n: usize) -> Result<(), SimError> {
        for _ in 0..n {
            let request = self.cloud.noise_request();
            self.call(&request, caller)?;
        }
        Ok(())
    }

    /// A read call by `caller` about the instance at `address`, or about any resource when
    /// the simulator has no read call for its type.
    pub fn look_at(&mut self, address: &str, caller: &Caller) -> Result<(), SimError> {
        let request = self
            .cloud
            .read_request(address)
            .unwrap_or_else(|| self.cloud.noise_request());
        self.call(&request, caller)?;
        Ok(())
    }

    /// Terraform's refresh by the CI role: a few read calls with its user agent.
    pub fn terraform_refresh(&mut self) -> Result<(), SimError> {
        let n = self.rng.random_range(1..=3);
        self.reads(&Caller::terraform(TERRAFORM_ROLE), n)
    }

    /// Terraform's apply by the CI role re-sending a value the cloud already has: a write
    /// call from the pool that, tried on a copy of the cloud, succeeds and changes nothing.
    /// Returns whether one was found among three tries.
    pub fn terraform_apply(&mut self) -> Result<bool, SimError> {
        let terraform = Caller::terraform(TERRAFORM_ROLE);
        for _ in 0..3 {
            if self.reasserts.is_empty() {
                return Ok(false);
            }
            let request = self.reasserts[self.rng.random_range(0..self.reasserts.len())].clone();
            let mut trial = self.cloud.clone();
            let outcome = trial.execute(&request, &terraform)?;
            if outcome.error.is_none() && trial.resources() == self.cloud.resources() {
                self.call(&request, &terraform)?;
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// A read call by `caller` in another region.
    pub fn other_region(&mut self, caller: &Caller) -> Result<(), SimError> {
        let region = match self.cloud.region() {
            "us-west-2" => "eu-west-1",
            _ => "us-west-2",
        };
        let mut elsewhere = caller.clone();
        elsewhere.region = Some(region.to_owned());
        let request = Request::new(
            "ec2.amazonaws.com",
            "DescribeInstances",
            serde_json::json!({"instancesSet": {}, "filterSet": {}}),
        );
        self.call(&request, &elsewhere)?;
        Ok(())
    }

    /// A refused attempt at the change's first call (the identifier mistyped), when the
    /// simulator refuses it; returns the error code.
    pub fn failed_attempt(&mut self, change: &Change, caller: &Caller) -> Option<String> {
        let first = change.calls.first()?;
        let wrong = mistyped(&self.filled(first))?;
        let mut trial = self.cloud.clone();
        let refused = trial
            .execute(&wrong, caller)
            .ok()
            .and_then(|o| o.error)
            .is_some();
        if !refused {
            return None;
        }
        self.call(&wrong, caller).ok().flatten()
    }

    /// The time of the last record.
    pub fn last_time(&self) -> Option<DateTime<Utc>> {
        let text = self.records.last()?["eventTime"].as_str()?;
        DateTime::parse_from_rfc3339(text)
            .ok()
            .map(|t| t.with_timezone(&Utc))
    }

    /// `caller`, acting `minutes` after the last record.
    pub fn later(&self, caller: &Caller, minutes: i64) -> Caller {
        let mut later = caller.clone();
        later.time = self.last_time().map(|t| t + Duration::minutes(minutes));
        later
    }

    /// The records in shuffled order, as log files deliver them.
    pub fn shuffled_records(&mut self) -> Vec<Value> {
        let mut records = std::mem::take(&mut self.records);
        records.shuffle(&mut self.rng);
        records
    }

    fn filled(&self, request: &Request) -> Request {
        let mut request = request.clone();
        fill(&mut request.request_parameters, &self.found);
        request
    }
}

/// Records string leaves of a response by key (two levels deep), for placeholders.
fn collect(value: &Value, found: &mut BTreeMap<String, String>, depth: usize) {
    let Some(map) = value.as_object() else { return };
    for (k, v) in map {
        match v {
            Value::String(s) => {
                found.insert(k.clone(), s.clone());
            }
            Value::Object(_) if depth < 2 => collect(v, found, depth + 1),
            _ => {}
        }
    }
}

/// Replaces `${key}` strings by values found in earlier responses.
fn fill(value: &mut Value, found: &BTreeMap<String, String>) {
    match value {
        Value::String(s) => {
            if let Some(key) = s.strip_prefix("${").and_then(|r| r.strip_suffix('}'))
                && let Some(v) = found.get(key)
            {
                *s = v.clone();
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| fill(v, found)),
        Value::Object(map) => map.values_mut().for_each(|v| fill(v, found)),
        _ => {}
    }
}

/// Parameters that name the resource a call acts on.
const IDENTIFIERS: [&str; 21] = [
    "groupId",
    "subnetId",
    "vpcId",
    "routeTableId",
    "bucketName",
    "roleName",
    "functionName",
    "dBInstanceIdentifier",
    "tableName",
    "logGroupName",
    "queueUrl",
    "topicArn",
    "keyId",
    "autoScalingGroupName",
    "targetGroupArn",
    "loadBalancerArn",
    "repositoryName",
    "service",
    "hostedZoneId",
    "policyArn",
    "secretId",
];

/// The request with its identifier mistyped (its last letter or digit changed).
pub fn mistyped(request: &Request) -> Option<Request> {
    let params = request.request_parameters.as_object()?;
    let key = IDENTIFIERS
        .iter()
        .find(|k| params.get(**k).is_some_and(Value::is_string))?;
    let value = params.get(*key)?.as_str()?;
    let wrong = typo(value)?;
    let mut request = request.clone();
    request.request_parameters[*key] = Value::String(wrong.clone());
    if *key == "bucketName" {
        request.request_parameters["Host"] = Value::String(format!("{wrong}.s3.amazonaws.com"));
    }
    Some(request)
}

/// The text with its last letter or digit replaced by the next one.
fn typo(text: &str) -> Option<String> {
    let at = text.rfind(|c: char| c.is_ascii_alphanumeric())?;
    let c = text[at..].chars().next()?;
    let next = match c {
        '9' => '0',
        'z' => 'a',
        'Z' => 'A',
        c => char::from(c as u8 + 1),
    };
    Some(format!("{}{next}{}", &text[..at], &text[at + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typos_change_the_last_letter_or_digit() {
        assert_eq!(typo("sg-0abc9").as_deref(), Some("sg-0abc0"));
        assert_eq!(typo("orders-table").as_deref(), Some("orders-tablf"));
        assert_eq!(typo("/"), None);
    }

    #[test]
    fn placeholders_take_earlier_responses() {
        let mut found = BTreeMap::new();
        collect(&json!({"_return": true, "groupId": "sg-1"}), &mut found, 0);
        let mut params = json!({"groupId": "${groupId}", "x": ["${missing}"]});
        fill(&mut params, &found);
        assert_eq!(params, json!({"groupId": "sg-1", "x": ["${missing}"]}));
    }

    #[test]
    fn mistyped_buckets_change_their_host_too() {
        let r = Request::new(
            "s3.amazonaws.com",
            "PutBucketVersioning",
            json!({"bucketName": "logs", "Host": "logs.s3.amazonaws.com"}),
        );
        let wrong = mistyped(&r).expect("a bucket name has a letter to change");
        assert_eq!(wrong.request_parameters["bucketName"], "logt");
        assert_eq!(wrong.request_parameters["Host"], "logt.s3.amazonaws.com");
    }
}
