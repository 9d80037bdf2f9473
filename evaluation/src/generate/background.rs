//! The day of background activity every scenario's trail is embedded in, synthesised from
//! the scenario's seed when it is run (thousands of records are never stored):
//!
//! - Terraform's own CI runs: a refresh reading every managed resource, and on some runs an
//!   apply re-sending values the cloud already has (never on a resource the drift changed);
//! - read-only calls by people and automations, about managed resources and account-wide;
//! - AWS Config reading resources through its service-linked role;
//! - data events: objects read from managed buckets, managed functions invoked;
//! - calls in another region and another account, on resources of their own;
//! - refused calls: writes to managed resources denied to read-only roles, throttled reads;
//! - AWS service events (a KMS key's automatic rotation).
//!
//! Some records leave `readOnly` out, and some are written as event version 1.0 wrote them
//! (no `eventID`, `readOnly`, `resources` or `recipientAccountId`), as trails kept for years
//! and other exports hold them.
//!
//! None of it changes what a correct reconciliation is: every write to a managed resource is
//! Terraform's own re-assertion of the current value, and every other write is elsewhere.

use super::session::TERRAFORM_ROLE;
use crate::scenario::Background;
use crate::sim::{Agent, ApiError, Caller, Cloud, Foreign, Identity, Request, Settings};
use chrono::{DateTime, Duration, TimeZone, Utc};
use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reconciler::terraform::state::{Instance, Mode, State};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// Fewest and most background records in a day.
pub const VOLUME: (usize, usize) = (2_000, 10_000);

/// One background record in this many is written without `readOnly`: CloudTrail's record
/// format makes the field optional (and records before event version 1.01 never hold it), so
/// the reconciler must then tell reads from writes by itself.
const WITHOUT_READ_ONLY: u32 = 8;

/// One background record in this many is written as CloudTrail wrote records at event
/// version 1.0 ([`as_version_1_0`]), when its call could have been recorded then.
const VERSION_1_0: u32 = 16;

/// The fields a record has had since event version 1.0, from CloudTrail's record contents
/// reference: `eventID`, `requestID`, `readOnly` and `resources` came with 1.01; `eventType`,
/// `apiVersion` and `recipientAccountId` with 1.02; the others later still.
const VERSION_1_0_FIELDS: [&str; 13] = [
    "eventVersion",
    "eventTime",
    "userIdentity",
    "eventSource",
    "eventName",
    "awsRegion",
    "sourceIPAddress",
    "userAgent",
    "errorCode",
    "errorMessage",
    "requestParameters",
    "responseElements",
    "additionalEventData",
];

/// An account of the same organisation that is not the project's.
const OTHER_ACCOUNT: &str = "210987654321";

/// The background of a scenario made with `seed`: its own seed and volume.
pub fn plan(seed: u64) -> Background {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xbac6_9e0d_da75);
    Background {
        seed: rng.random(),
        records: rng.random_range(VOLUME.0..=VOLUME.1),
    }
}

/// The day's records around a trail over `base`; Terraform's applies leave the addresses in
/// `drifted` alone.
pub fn day(base: &State, background: &Background, drifted: &BTreeSet<String>) -> Vec<Value> {
    let mut day = Day::new(base, background.seed);
    day.terraform_runs(background.records, base, drifted);
    day.rotations();
    while day.records.len() < background.records {
        match day.rng.random_range(0..100) {
            0..45 => day.read(),
            45..75 => day.data_event(),
            75..83 => day.config_read(),
            83..92 => day.elsewhere(),
            _ => day.refused(base),
        }
    }
    day.records.truncate(background.records);
    leave_out_read_only(&mut day.records, background.seed);
    write_some_as_version_1_0(&mut day.records, background.seed);
    day.records
}

/// Writes one record in [`VERSION_1_0`] as version 1.0 did, drawn by a generator of its own;
/// only records whose call version 1.0 could have recorded ([`recordable_at_1_0`]) change.
fn write_some_as_version_1_0(records: &mut [Value], seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0001_0000);
    for record in records {
        if rng.random_ratio(1, VERSION_1_0) && recordable_at_1_0(record) {
            as_version_1_0(record);
        }
    }
}

/// Whether version 1.0 could have recorded the call and still said where it acted: an API
/// call on the management plane (service events and data events came with later versions)
/// made by a caller of the account it acted in, as without `recipientAccountId` and
/// `resources` the caller's account is all such a record names.
fn recordable_at_1_0(record: &Value) -> bool {
    record["eventType"] == "AwsApiCall"
        && record["eventCategory"] == "Management"
        && record["userIdentity"]["accountId"] == record["recipientAccountId"]
}

/// The record with only the fields version 1.0 had, and that version.
fn as_version_1_0(record: &mut Value) {
    if let Some(fields) = record.as_object_mut() {
        fields.retain(|key, _| VERSION_1_0_FIELDS.contains(&key.as_str()));
        fields.insert("eventVersion".to_owned(), json!("1.0"));
    }
}

/// Leaves `readOnly` out of one record in [`WITHOUT_READ_ONLY`], drawn by a generator of its
/// own so that the rest of the day stays what the seed makes it.
fn leave_out_read_only(records: &mut [Value], seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0ea0_1e55);
    for record in records {
        if rng.random_ratio(1, WITHOUT_READ_ONLY)
            && let Some(fields) = record.as_object_mut()
        {
            fields.remove("readOnly");
        }
    }
}

/// The trail's records and the day's, shuffled together as log files deliver them.
pub fn merge(trail: Vec<Value>, day: Vec<Value>, seed: u64) -> Vec<Value> {
    let mut all = trail;
    all.extend(day);
    shuffle(&mut all, seed);
    all
}

/// Writes the delivery file `{"Records":[...]}` of [`merge`]'s records to `out`, byte for
/// byte as serde_json writes it, and returns how many records it holds. Each record is
/// serialised and freed in the order it was made, while its parts still lie together in
/// memory; the texts are then shuffled as [`merge`] shuffles the records. (Serialising the
/// shuffled records and freeing them in that order spent most of its time on cache misses.)
pub fn write_merged(
    trail: Vec<Value>,
    day: Vec<Value>,
    seed: u64,
    out: &mut impl std::io::Write,
) -> std::io::Result<usize> {
    let mut text = Vec::new();
    let mut spans = Vec::with_capacity(trail.len() + day.len());
    for record in trail.into_iter().chain(day) {
        let start = text.len();
        serde_json::to_writer(&mut text, &record)?;
        spans.push(start..text.len());
    }
    shuffle(&mut spans, seed);
    out.write_all(b"{\"Records\":[")?;
    for (n, span) in spans.iter().enumerate() {
        if n > 0 {
            out.write_all(b",")?;
        }
        out.write_all(&text[span.clone()])?;
    }
    out.write_all(b"]}")?;
    Ok(spans.len())
}

/// The order log files deliver a day in: one shuffle drawn from `seed`, the same for any
/// items of the same number.
fn shuffle<T>(items: &mut [T], seed: u64) {
    items.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
}

/// A day in progress.
struct Day {
    cloud: Cloud,
    rng: ChaCha8Rng,
    start: DateTime<Utc>,
    records: Vec<Value>,
    managed: Vec<Instance>,
    /// The first call of each change the generators derive from the state, made once.
    writes: Option<Vec<Request>>,
}

impl Day {
    fn new(base: &State, seed: u64) -> Day {
        let start = Utc
            .with_ymd_and_hms(2026, 3, 2, 0, 0, 0)
            .single()
            .unwrap_or_default();
        let settings = Settings {
            seed,
            start,
            ..Settings::default()
        };
        Day {
            cloud: Cloud::from_state(base, &settings),
            rng: ChaCha8Rng::seed_from_u64(seed),
            start,
            records: Vec::new(),
            managed: base
                .instances
                .iter()
                .filter(|i| i.mode == Mode::Managed && i.deposed.is_none())
                .cloned()
                .collect(),
            writes: None,
        }
    }

    /// A moment of the day.
    fn moment(&mut self) -> DateTime<Utc> {
        self.start + Duration::seconds(self.rng.random_range(0..86_400))
    }

    /// `caller` at a moment of the day.
    fn at(&mut self, mut caller: Caller) -> Caller {
        caller.time = Some(self.moment());
        caller
    }

    fn run(&mut self, request: &Request, caller: &Caller) {
        if let Ok(outcome) = self.cloud.execute(request, caller) {
            self.records.push(outcome.record);
        }
    }

    /// CI runs of Terraform: each refreshes every managed resource it can read, one run in
    /// two applies, re-sending a few values the cloud already has.
    fn terraform_runs(&mut self, volume: usize, base: &State, drifted: &BTreeSet<String>) {
        let runs = (volume / 700).clamp(2, 12);
        let reasserts = reasserts(base, drifted);
        for run in 0..runs {
            let mut at = self.moment();
            let mut terraform = Caller::terraform(TERRAFORM_ROLE);
            let addresses: Vec<String> = self.managed.iter().map(|i| i.address.clone()).collect();
            for address in addresses {
                let Some(read) = self.cloud.read_request(&address) else {
                    continue;
                };
                at += Duration::seconds(self.rng.random_range(0..=2));
                terraform.time = Some(at);
                self.run(&read, &terraform);
            }
            if run % 2 == 1 {
                for _ in 0..self.rng.random_range(1..=3) {
                    at += Duration::seconds(self.rng.random_range(1..=20));
                    terraform.time = Some(at);
                    self.reassert(&reasserts, &terraform);
                }
            }
        }
    }

    /// One write from `pool` that, tried on a copy of the cloud, succeeds and changes nothing.
    fn reassert(&mut self, pool: &[Request], terraform: &Caller) {
        let Some(request) = pool.choose(&mut self.rng) else {
            return;
        };
        let mut trial = self.cloud.clone();
        let quiet = trial
            .execute(request, terraform)
            .is_ok_and(|o| o.error.is_none() && trial.resources() == self.cloud.resources());
        if quiet {
            self.run(request, terraform);
        }
    }

    /// A read by a person or an automation: about a managed resource, or account-wide.
    fn read(&mut self) {
        let caller = self.reader();
        let request = match self.rng.random_bool(0.6) {
            true => self.cloud.noise_request(),
            false => ACCOUNT_READS
                .choose(&mut self.rng)
                .map(|(source, name, params)| Request::new(source, name, params()))
                .unwrap_or_else(|| self.cloud.noise_request()),
        };
        let caller = self.at(caller);
        self.run(&request, &caller);
    }

    /// Someone who reads during the day.
    fn reader(&mut self) -> Caller {
        let role = |role: &str, session: &str, agent| {
            Caller::new(
                Identity::AssumedRole {
                    role: role.to_owned(),
                    session: session.to_owned(),
                },
                agent,
            )
        };
        match self.rng.random_range(0..7) {
            0 => Caller::user("alice", Agent::Console),
            1 => Caller::user("bob", Agent::Cli),
            2 => Caller::sso_console("carol@example.com", "AdministratorAccess"),
            3 => Caller::sso_console("erin@example.com", "ReadOnlyAccess"),
            4 => role("datadog-integration", "DatadogAWSIntegration", Agent::Boto3),
            5 => role("cost-report", "cost-report-lambda", Agent::Boto3),
            _ => role("security-audit", "prowler", Agent::Cli),
        }
    }

    /// AWS Config describing a managed resource through its service-linked role.
    fn config_read(&mut self) {
        let request = self.cloud.noise_request();
        let caller = self.at(Caller::service("config.amazonaws.com"));
        if let Ok(outcome) = self.cloud.execute(&request, &caller) {
            let mut record = outcome.record;
            let time = record["eventTime"].clone();
            record["userIdentity"] = service_linked(self.cloud.account_id(), &time);
            self.records.push(record);
        }
    }

    /// An object read from a managed bucket, or a managed function invoked.
    fn data_event(&mut self) {
        let buckets = self.texts("aws_s3_bucket", "bucket");
        let functions = self.texts("aws_lambda_function", "arn");
        let account = self.cloud.account_id().to_owned();
        let region = self.cloud.region().to_owned();
        let pick_function = !functions.is_empty() && (buckets.is_empty() || self.rng.random());
        let (event, caller) = if pick_function {
            let arn = functions.choose(&mut self.rng).cloned().unwrap_or_default();
            let mut invoke = Foreign::call(
                "lambda.amazonaws.com",
                "Invoke",
                json!({"functionName": arn}),
                Value::Null,
            );
            invoke.category = "Data";
            invoke.read_only = false;
            invoke.resources =
                vec![json!({"accountId": account, "type": "AWS::Lambda::Function", "ARN": arn})];
            let via = [
                "apigateway.amazonaws.com",
                "events.amazonaws.com",
                "sqs.amazonaws.com",
            ];
            let service = via.choose(&mut self.rng).copied().unwrap_or(via[0]);
            (invoke, Caller::service(service))
        } else if let Some(bucket) = buckets.choose(&mut self.rng).cloned() {
            let key = format!(
                "data/{:04}/part-{:05}.json",
                self.rng.random_range(2020..2027),
                self.rng.random_range(0..99_999)
            );
            let mut get = Foreign::call(
                "s3.amazonaws.com",
                "GetObject",
                json!({"bucketName": bucket, "Host": format!("{bucket}.s3.{region}.amazonaws.com"), "key": key}),
                Value::Null,
            );
            get.category = "Data";
            get.resources = vec![
                json!({"type": "AWS::S3::Object", "ARN": format!("arn:aws:s3:::{bucket}/{key}")}),
                json!({"accountId": account, "type": "AWS::S3::Bucket", "ARN": format!("arn:aws:s3:::{bucket}")}),
            ];
            get.details = Some(
                json!({"SignatureVersion": "SigV4", "CipherSuite": "TLS_AES_128_GCM_SHA256",
                "bytesTransferredIn": 0, "AuthenticationMethod": "AuthHeader",
                "bytesTransferredOut": self.rng.random_range(200..2_000_000)}),
            );
            let reader = Identity::AssumedRole {
                role: "app-task-role".to_owned(),
                session: "app".to_owned(),
            };
            (get, Caller::new(reader, Agent::Boto3))
        } else {
            return self.read();
        };
        let caller = self.at(caller);
        let record = self.cloud.foreign(&event, &caller);
        self.records.push(record);
    }

    /// A call in another region or another account, on resources of its own.
    fn elsewhere(&mut self) {
        let suffix: String = (0..17)
            .map(|_| char::from(b"0123456789abcdef"[self.rng.random_range(0..16)]))
            .collect();
        let mut call = match self.rng.random_range(0..4) {
            0 => Foreign::call(
                "ec2.amazonaws.com",
                "CreateTags",
                json!({"resourcesSet": {"items": [{"resourceId": format!("i-{suffix}")}]},
                       "tagSet": {"items": [{"key": "Owner", "value": "platform"}]}}),
                json!({"_return": true}),
            ),
            1 => Foreign::call(
                "logs.amazonaws.com",
                "PutRetentionPolicy",
                json!({"logGroupName": format!("/aws/lambda/staging-{}", &suffix[..8]), "retentionInDays": 30}),
                Value::Null,
            ),
            2 => Foreign::call(
                "ec2.amazonaws.com",
                "DescribeInstances",
                json!({"instancesSet": {}, "filterSet": {}}),
                Value::Null,
            ),
            _ => Foreign::call("sqs.amazonaws.com", "ListQueues", Value::Null, Value::Null),
        };
        let mut caller = self.reader();
        if self.rng.random_bool(0.5) {
            call.account = Some(OTHER_ACCOUNT.to_owned());
        } else {
            let region = match self.cloud.region() {
                "eu-west-1" => "eu-central-1",
                _ => "eu-west-1",
            };
            caller.region = Some(region.to_owned());
        }
        let caller = self.at(caller);
        let record = self.cloud.foreign(&call, &caller);
        self.records.push(record);
    }

    /// A refused call: a write to a managed resource denied to a read-only role, or a read
    /// throttled.
    fn refused(&mut self, base: &State) {
        let writes = self.writes.take().unwrap_or_else(|| refusable(base));
        let throttled = writes.is_empty() || self.rng.random_bool(0.3);
        let (request, caller) = match throttled {
            true => (self.cloud.noise_request(), self.reader()),
            false => (
                writes
                    .choose(&mut self.rng)
                    .cloned()
                    .unwrap_or_else(|| self.cloud.noise_request()),
                Caller::sso_console("erin@example.com", "ReadOnlyAccess"),
            ),
        };
        self.writes = Some(writes);
        let error = match (throttled, request.event_source.as_str()) {
            (true, _) => ApiError::new("ThrottlingException", "Rate exceeded"),
            (false, "ec2.amazonaws.com") => ApiError::new(
                "Client.UnauthorizedOperation",
                "You are not authorized to perform this operation.",
            ),
            (false, source) => ApiError::new(
                "AccessDenied",
                format!(
                    "User: arn:aws:sts::{}:assumed-role/AWSReservedSSO_ReadOnlyAccess/erin@example.com \
                     is not authorized to perform: {}:{} because no identity-based policy allows the action",
                    self.cloud.account_id(),
                    source.trim_end_matches(".amazonaws.com"),
                    request.event_name
                ),
            ),
        };
        let caller = self.at(caller);
        if let Ok(record) = self.cloud.refused(&request, &caller, &error) {
            self.records.push(record);
        }
    }

    /// Automatic rotations of managed KMS keys that rotate: AWS service events.
    fn rotations(&mut self) {
        let keys: Vec<(String, String)> = self
            .managed
            .iter()
            .filter(|i| i.resource_type == "aws_kms_key")
            .filter(|i| i.attributes["enable_key_rotation"] == json!(true))
            .filter_map(|i| {
                Some((
                    i.string_attribute("arn")?.to_owned(),
                    i.string_attribute("key_id")?.to_owned(),
                ))
            })
            .collect();
        for (arn, key_id) in keys {
            if !self.rng.random_bool(0.5) {
                continue;
            }
            let mut event =
                Foreign::call("kms.amazonaws.com", "RotateKey", Value::Null, Value::Null);
            event.event_type = "AwsServiceEvent";
            event.read_only = false;
            event.resources = vec![
                json!({"accountId": self.cloud.account_id(), "type": "AWS::KMS::Key", "ARN": arn}),
            ];
            event.details = Some(json!({"rotationType": "AUTOMATIC", "keyId": key_id}));
            let caller = self.at(Caller::service("kms.amazonaws.com"));
            let record = self.cloud.foreign(&event, &caller);
            self.records.push(record);
        }
    }

    /// A text attribute of every managed instance of a type.
    fn texts(&self, resource_type: &str, attribute: &str) -> Vec<String> {
        self.managed
            .iter()
            .filter(|i| i.resource_type == resource_type)
            .filter_map(|i| i.string_attribute(attribute).map(str::to_owned))
            .collect()
    }
}

/// Writes a read-only role may try on managed resources: the first call of each change the
/// generators derive from the state.
fn refusable(base: &State) -> Vec<Request> {
    super::all_changes(base)
        .into_iter()
        .filter_map(|c| c.calls.first().cloned())
        .filter(|r| !r.request_parameters.to_string().contains("${"))
        .collect()
}

/// Writes Terraform may re-send: the calls that put each derived change back, on resources
/// the drift leaves alone.
fn reasserts(base: &State, drifted: &BTreeSet<String>) -> Vec<Request> {
    super::all_changes(base)
        .into_iter()
        .filter(|c| !drifted.contains(&c.address))
        .filter_map(|c| c.undo.first().cloned())
        .filter(|r| !r.request_parameters.to_string().contains("${"))
        .collect()
}

/// Account-wide reads the console and scripts make.
type Params = fn() -> Value;
const ACCOUNT_READS: [(&str, &str, Params); 10] = [
    (
        "ec2.amazonaws.com",
        "DescribeInstances",
        || json!({"instancesSet": {}, "filterSet": {}}),
    ),
    (
        "ec2.amazonaws.com",
        "DescribeSecurityGroups",
        || json!({"securityGroupSet": {}, "securityGroupIdSet": {}, "filterSet": {}}),
    ),
    (
        "ec2.amazonaws.com",
        "DescribeVpcs",
        || json!({"vpcSet": {}, "filterSet": {}}),
    ),
    (
        "s3.amazonaws.com",
        "ListBuckets",
        || json!({"Host": "s3.amazonaws.com"}),
    ),
    ("iam.amazonaws.com", "ListRoles", || Value::Null),
    ("lambda.amazonaws.com", "ListFunctions20150331", || {
        Value::Null
    }),
    ("rds.amazonaws.com", "DescribeDBInstances", || Value::Null),
    ("logs.amazonaws.com", "DescribeLogGroups", || Value::Null),
    ("kms.amazonaws.com", "ListKeys", || Value::Null),
    ("sts.amazonaws.com", "GetCallerIdentity", || Value::Null),
];

/// AWS Config's service-linked role session, as its calls record it.
fn service_linked(account: &str, time: &Value) -> Value {
    let role = "AWSServiceRoleForConfig";
    let role_id = "AROAZQ3DN7TUFVCQNTQ5L";
    json!({
        "type": "AssumedRole",
        "principalId": format!("{role_id}:AWSConfig-Describe"),
        "arn": format!("arn:aws:sts::{account}:assumed-role/{role}/AWSConfig-Describe"),
        "accountId": account,
        "accessKeyId": "ASIAZQ3DN7TUHRCFGLNC",
        "sessionContext": {
            "sessionIssuer": {
                "type": "Role",
                "principalId": role_id,
                "arn": format!("arn:aws:iam::{account}:role/aws-service-role/config.amazonaws.com/{role}"),
                "accountId": account,
                "userName": role,
            },
            "webIdFederationData": {},
            "attributes": {"creationDate": time, "mfaAuthenticated": "false"},
        },
        "invokedBy": "config.amazonaws.com",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the simulator's own read list makes the record's call a read.
    fn simulated_read(record: &Value) -> bool {
        let source = record["eventSource"].as_str().unwrap_or_default();
        let name = record["eventName"].as_str().unwrap_or_default();
        crate::sim::reads::is_read(source, name)
    }

    fn state() -> State {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/projects/serverless/terraform.tfstate");
        State::read(&path).expect("the fixture state reads")
    }

    #[test]
    fn a_day_has_its_volume_and_is_the_same_from_the_same_seed() {
        let base = state();
        let background = Background {
            seed: 7,
            records: 2_500,
        };
        let one = day(&base, &background, &BTreeSet::new());
        assert_eq!(one.len(), 2_500);
        assert_eq!(one, day(&base, &background, &BTreeSet::new()));
        let kinds = |pred: &dyn Fn(&Value) -> bool| one.iter().filter(|r| pred(r)).count();
        assert!(kinds(&|r| r["eventCategory"] == "Data") > 100);
        assert!(kinds(&|r| r["errorCode"].is_string()) > 20);
        assert!(kinds(&|r| r["recipientAccountId"] == OTHER_ACCOUNT) > 20);
        // About one record in eight leaves `readOnly` out, reads and writes alike (besides
        // those written as version 1.0, which never had it).
        let without = |read: bool| {
            kinds(&|r| {
                r.get("readOnly").is_none()
                    && r["eventVersion"] != "1.0"
                    && simulated_read(r) == read
            })
        };
        assert!((230..=400).contains(&(without(true) + without(false))));
        assert!(
            without(true) > 50 && without(false) > 20,
            "{} {}",
            without(true),
            without(false)
        );
        assert!(
            kinds(&|r| r["userAgent"]
                .as_str()
                .is_some_and(|a| a.contains("Terraform/")))
                > 10
        );
    }

    #[test]
    fn some_records_are_written_as_version_1_0_did() {
        let base = state();
        let background = Background {
            seed: 7,
            records: 2_500,
        };
        let one = day(&base, &background, &BTreeSet::new());
        let old: Vec<&Value> = one.iter().filter(|r| r["eventVersion"] == "1.0").collect();
        // One in sixteen of the records version 1.0 could hold (most of the day).
        assert!((60..=160).contains(&old.len()), "{}", old.len());
        for record in &old {
            let fields = record.as_object().expect("a record is an object");
            assert!(
                fields
                    .keys()
                    .all(|k| VERSION_1_0_FIELDS.contains(&k.as_str())),
                "{record}"
            );
            assert!(record["userIdentity"]["accountId"].is_string(), "{record}");
        }
        let writes = old.iter().filter(|r| !simulated_read(r)).count();
        assert!(writes > 5, "{writes} writes among {} records", old.len());
        assert!(
            old.iter()
                .any(|r| r["userIdentity"]["accountId"] == OTHER_ACCOUNT)
        );
    }

    #[test]
    fn the_day_leaves_the_cloud_as_it_was_on_the_project() {
        let base = state();
        let background = Background {
            seed: 11,
            records: 3_000,
        };
        let mut replay = Day::new(&base, 11);
        let records = day(&base, &background, &BTreeSet::new());
        // Every write by someone other than Terraform is refused, elsewhere, or data.
        // A version 1.0 record names its account only as its caller's.
        let account = |r: &Value| {
            let recipient = &r["recipientAccountId"];
            match recipient.is_null() {
                true => r["userIdentity"]["accountId"].clone(),
                false => recipient.clone(),
            }
        };
        let absent_or = |field: &Value, value: &str| field.is_null() || field == value;
        for r in &records {
            let ours =
                account(r) == replay.cloud.account_id() && r["awsRegion"] == replay.cloud.region();
            let terraform = r["userAgent"]
                .as_str()
                .is_some_and(|a| a.contains("Terraform/"));
            let plain_write = !simulated_read(r)
                && r["errorCode"].is_null()
                && absent_or(&r["eventCategory"], "Management")
                && absent_or(&r["eventType"], "AwsApiCall");
            assert!(
                !(ours && plain_write && !terraform),
                "an out-of-band write: {r}"
            );
        }
        replay.terraform_runs(3_000, &base, &BTreeSet::new());
        assert_eq!(
            replay.cloud.resources(),
            Cloud::from_state(&base, &Settings::default()).resources()
        );
    }

    #[test]
    fn the_merged_delivery_file_is_the_merged_records_as_serde_json_writes_them() {
        let base = state();
        let background = Background {
            seed: 7,
            records: 400,
        };
        let day = day(&base, &background, &BTreeSet::new());
        let trail = vec![
            json!({"eventName": "PutBucketVersioning", "n": 1}),
            json!({"n": 2}),
        ];
        let expected =
            serde_json::to_vec(&json!({"Records": merge(trail.clone(), day.clone(), 11)}))
                .expect("serialised");
        let mut written = Vec::new();
        let count = write_merged(trail, day, 11, &mut written).expect("written");
        assert_eq!(count, 402);
        assert!(written == expected, "the delivery files differ");
    }

    #[test]
    fn plans_stay_within_the_volume() {
        for seed in 0..20 {
            let p = plan(seed);
            assert!((VOLUME.0..=VOLUME.1).contains(&p.records));
        }
    }
}
