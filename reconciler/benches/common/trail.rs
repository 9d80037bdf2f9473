//! A busy account's day of CloudTrail, generated deterministically: reads, failed calls,
//! Terraform's and AWS services' writes and a few out-of-band writes over several accounts
//! and regions, with duplicates and late deliveries, in real record shapes.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use flate2::Compression;
use flate2::write::GzEncoder;

/// A tiny deterministic generator (xorshift64*), so every run writes the same log.
pub struct Rng(u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True with probability `per_mille` / 1000.
    pub fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// `n` lowercase hex digits.
    pub fn hex(&mut self, out: &mut String, n: usize) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        for _ in 0..n {
            out.push(HEX[self.below(16) as usize] as char);
        }
    }

    /// `n` uppercase letters and digits, as in access key and principal ids.
    pub fn upper(&mut self, out: &mut String, n: usize) {
        const CHARS: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
        for _ in 0..n {
            out.push(CHARS[self.below(32) as usize] as char);
        }
    }

    pub fn uuid(&mut self, out: &mut String) {
        for (i, n) in [8, 4, 4, 4, 12].into_iter().enumerate() {
            if i > 0 {
                out.push('-');
            }
            self.hex(out, n);
        }
    }
}

/// What the generated log holds.
#[derive(Clone)]
pub struct GeneratedLog {
    /// The plain file.
    pub plain: PathBuf,
    /// The gzipped copy.
    pub gz: PathBuf,
    /// Its size.
    pub plain_bytes: u64,
    /// The gzipped size.
    pub gz_bytes: u64,
    /// What the records are.
    pub counts: Counts,
}

/// What a generated run of records holds.
#[derive(Clone, Default)]
pub struct Counts {
    /// Records written, duplicates included.
    pub records: u64,
    /// Records delivered twice.
    pub duplicates: u64,
    /// Records delivered out of time order.
    pub out_of_order: u64,
    /// Distinct out-of-band calls.
    pub out_of_band: u64,
    /// Extra copies of out-of-band records (jq selects them again; retrace drops them).
    pub out_of_band_duplicates: u64,
}

/// A service: event source, id field and prefix, reads and writes.
pub struct Service {
    source: &'static str,
    api: &'static str,
    id_key: &'static str,
    id_prefix: &'static str,
    resource_type: &'static str,
    reads: &'static [&'static str],
    writes: &'static [&'static str],
}

pub const SERVICES: &[Service] = &[
    Service {
        source: "ec2",
        api: "ec2#1.149.0",
        id_key: "instanceId",
        id_prefix: "i-0",
        resource_type: "AWS::EC2::Instance",
        reads: &[
            "DescribeInstances",
            "DescribeSecurityGroups",
            "DescribeVpcs",
            "DescribeSubnets",
            "DescribeVolumes",
            "DescribeNetworkInterfaces",
            "DescribeTags",
            "DescribeInstanceTypes",
        ],
        writes: &[
            "AuthorizeSecurityGroupIngress",
            "CreateTags",
            "RunInstances",
            "ModifyInstanceAttribute",
            "CreateSecurityGroup",
            "DeleteTags",
        ],
    },
    Service {
        source: "s3",
        api: "s3#1.51.4",
        id_key: "bucketName",
        id_prefix: "acme-data-",
        resource_type: "AWS::S3::Bucket",
        reads: &[
            "GetBucketPolicy",
            "GetBucketAcl",
            "ListBuckets",
            "GetBucketVersioning",
            "GetBucketTagging",
            "GetBucketEncryption",
        ],
        writes: &["PutBucketPolicy", "PutBucketVersioning", "PutBucketTagging"],
    },
    Service {
        source: "iam",
        api: "iam#1.31.2",
        id_key: "roleName",
        id_prefix: "app-role-",
        resource_type: "AWS::IAM::Role",
        reads: &[
            "GetRole",
            "ListRolePolicies",
            "GetPolicy",
            "ListAttachedRolePolicies",
            "GetPolicyVersion",
        ],
        writes: &["AttachRolePolicy", "PutRolePolicy", "CreateRole", "TagRole"],
    },
    Service {
        source: "lambda",
        api: "lambda#1.53.0",
        id_key: "functionName",
        id_prefix: "orders-handler-",
        resource_type: "AWS::Lambda::Function",
        reads: &[
            "GetFunction20150331v2",
            "ListFunctions20150331",
            "GetPolicy20150331v2",
        ],
        writes: &[
            "UpdateFunctionConfiguration20150331v2",
            "AddPermission20150331v2",
            "UpdateFunctionCode20150331v2",
        ],
    },
    Service {
        source: "rds",
        api: "rds#1.76.0",
        id_key: "dBInstanceIdentifier",
        id_prefix: "orders-db-",
        resource_type: "AWS::RDS::DBInstance",
        reads: &[
            "DescribeDBInstances",
            "DescribeDBSnapshots",
            "ListTagsForResource",
        ],
        writes: &["ModifyDBInstance", "AddTagsToResource"],
    },
    Service {
        source: "kms",
        api: "kms#1.29.2",
        id_key: "keyId",
        id_prefix: "arn:aws:kms:eu-west-1:111122223333:key/",
        resource_type: "AWS::KMS::Key",
        reads: &["Decrypt", "GenerateDataKey", "DescribeKey", "ListAliases"],
        writes: &["PutKeyPolicy", "EnableKeyRotation"],
    },
    Service {
        source: "logs",
        api: "cloudwatchlogs#1.35.0",
        id_key: "logGroupName",
        id_prefix: "/aws/lambda/orders-",
        resource_type: "AWS::Logs::LogGroup",
        reads: &[
            "DescribeLogGroups",
            "ListTagsLogGroup",
            "DescribeSubscriptionFilters",
        ],
        writes: &["PutRetentionPolicy", "CreateLogGroup"],
    },
    Service {
        source: "autoscaling",
        api: "autoscaling#1.40.0",
        id_key: "autoScalingGroupName",
        id_prefix: "web-asg-",
        resource_type: "AWS::AutoScaling::AutoScalingGroup",
        reads: &["DescribeAutoScalingGroups", "DescribeScalingActivities"],
        writes: &["UpdateAutoScalingGroup", "SetDesiredCapacity"],
    },
];

pub const ACCOUNTS: [&str; 3] = ["111122223333", "444455556666", "777788889999"];
pub const REGIONS: [&str; 4] = ["eu-west-1", "us-east-1", "eu-central-1", "us-west-2"];
pub const USERS: [&str; 5] = ["alice", "bob", "carol", "deploy-bot", "ops-admin"];
pub const APP_ROLES: [&str; 4] = [
    "orders-service",
    "AWSReservedSSO_AdminAccess_0a1b2c3d4e5f6a7b",
    "AWSReservedSSO_ReadOnly_9f8e7d6c5b4a3921",
    "monitoring-exporter",
];

pub const TERRAFORM_AGENT: &str = "APN/1.0 HashiCorp/1.0 Terraform/1.7.5 (+https://www.terraform.io) terraform-provider-aws/5.40.0 (+https://registry.terraform.io/providers/hashicorp/aws) aws-sdk-go-v2/1.25.2 os/linux lang/go#1.22.1 md/GOOS#linux md/GOARCH#amd64 api/";
pub const SDK_AGENTS: [&str; 3] = [
    "aws-sdk-go-v2/1.24.0 os/linux lang/go#1.21.5 md/GOOS#linux md/GOARCH#amd64 api/",
    "aws-sdk-java/2.20.162 Linux/5.10.199-190.747.amzn2.x86_64 OpenJDK_64-Bit_Server_VM/17.0.9+8-LTS Java/17.0.9 vendor/Amazon.com_Inc. io/sync http/Apache cfg/retry-mode/legacy api/",
    "Boto3/1.34.11 md/Botocore#1.34.11 ua/2.0 os/linux#6.2.0 md/arch#x86_64 lang/python#3.11.6 md/pyimpl#CPython cfg/retry-mode#legacy Botocore/1.34.11 api/",
];
pub const CLI_AGENT: &str = "aws-cli/2.15.30 md/awscrt#0.19.19 ua/2.0 os/linux#6.5.0-1016-aws md/arch#x86_64 lang/python#3.11.8 md/pyimpl#CPython cfg/retry-mode#standard md/installer#exe md/distrib#ubuntu.22 md/prompt#off md/command#";

/// Who makes a call and with what.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Actor {
    Terraform,
    App,
    Console,
    Cli,
    Boto3,
    AwsService,
}

/// What kind of call a record is, in the proportions of a busy account.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Read,
    Failed,
    TerraformWrite,
    ServiceWrite,
    OutOfBandWrite,
}

impl Shape {
    pub fn draw(rng: &mut Rng) -> Self {
        match rng.below(1000) {
            0..780 => Self::Read,
            780..830 => Self::Failed,
            830..935 => Self::TerraformWrite,
            935..970 => Self::ServiceWrite,
            _ => Self::OutOfBandWrite,
        }
    }
}

/// Writes `records` records (duplicates included) as `cloudtrail.json` and `.json.gz`.
pub fn generate(dir: &Path, records: u64) -> io::Result<GeneratedLog> {
    let started = Instant::now();
    eprintln!("generating {records} records in {} ...", dir.display());
    let plain = dir.join("cloudtrail.json");
    let mut out = BufWriter::with_capacity(1 << 20, File::create(&plain)?);
    out.write_all(b"{\"Records\":[")?;
    let counts = write_records(&mut out, records, START_MS)?;
    let mut log = GeneratedLog {
        plain: plain.clone(),
        gz: dir.join("cloudtrail.json.gz"),
        plain_bytes: 0,
        gz_bytes: 0,
        counts,
    };
    out.write_all(b"]}")?;
    out.into_inner()
        .map_err(io::IntoInnerError::into_error)?
        .sync_all()?;
    log.plain_bytes = std::fs::metadata(&plain)?.len();
    gzip(&plain, &log.gz)?;
    log.gz_bytes = std::fs::metadata(&log.gz)?.len();
    eprintln!("generated in {:.1} s", started.elapsed().as_secs_f64());
    Ok(log)
}

/// When the generated day starts (2024-04-24 23:06:40 UTC), in milliseconds.
pub const START_MS: i64 = 1_714_000_000_000;

/// Milliseconds between two generated records.
pub const STEP_MS: i64 = 90;

/// Writes `records` comma-separated records of a busy account's day from `start_ms` (no
/// envelope); returns what they hold: duplicates, late deliveries and out-of-band calls.
pub fn write_records(out: &mut impl Write, records: u64, start_ms: i64) -> io::Result<Counts> {
    write_seeded_records(out, records, start_ms, records)
}

/// [`write_records`] with its own seed, so several files of one size hold different records.
pub fn write_seeded_records(
    out: &mut impl Write,
    records: u64,
    start_ms: i64,
    seed: u64,
) -> io::Result<Counts> {
    let mut log = Counts {
        records,
        ..Counts::default()
    };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ seed);
    let mut record = String::with_capacity(4096);
    let mut kept = (String::new(), false);
    for i in 0..log.records {
        if i > 0 {
            out.write_all(b",")?;
        }
        // About one record in 2,500 is delivered twice (overlapping exports).
        if i > 0 && rng.chance(1) && rng.chance(400) && !kept.0.is_empty() {
            out.write_all(kept.0.as_bytes())?;
            log.duplicates += 1;
            log.out_of_band_duplicates += u64::from(kept.1);
            continue;
        }
        // One record every 90 ms; one in 20 is delivered late or early by up to 10 minutes.
        let mut time = start_ms + i as i64 * STEP_MS;
        if rng.chance(50) {
            time += rng.below(1_200_000) as i64 - 600_000;
            log.out_of_order += 1;
        }
        record.clear();
        let shape = Shape::draw(&mut rng);
        write_record(&mut record, &mut rng, shape, time);
        let out_of_band = shape == Shape::OutOfBandWrite;
        log.out_of_band += u64::from(out_of_band);
        if rng.chance(20) {
            kept = (record.clone(), out_of_band);
        }
        out.write_all(record.as_bytes())?;
    }
    Ok(log)
}

/// Compresses `from` into `to` at flate2's fast level, streaming. The file is synced, so
/// writing it back does not compete with the measured runs.
pub fn gzip(from: &Path, to: &Path) -> io::Result<()> {
    let mut input = BufReader::with_capacity(1 << 20, File::open(from)?);
    let output = BufWriter::with_capacity(1 << 20, File::create(to)?);
    let mut encoder = GzEncoder::new(output, Compression::fast());
    io::copy(&mut input, &mut encoder)?;
    let output = encoder.finish()?;
    output
        .into_inner()
        .map_err(io::IntoInnerError::into_error)?
        .sync_all()
}

/// Writes one record with CloudTrail's field order.
pub fn write_record(r: &mut String, rng: &mut Rng, shape: Shape, time_ms: i64) {
    let service = rng.pick(SERVICES);
    let account = *rng.pick(&ACCOUNTS);
    let region = *rng.pick(&REGIONS);
    let actor = match shape {
        Shape::TerraformWrite => Actor::Terraform,
        Shape::ServiceWrite => Actor::AwsService,
        Shape::OutOfBandWrite => *rng.pick(&[Actor::Console, Actor::Cli, Actor::Boto3]),
        Shape::Read | Shape::Failed => *rng.pick(&[
            Actor::App,
            Actor::App,
            Actor::App,
            Actor::Terraform,
            Actor::Console,
            Actor::Cli,
        ]),
    };
    let write = shape != Shape::Read;
    let event_name = if write {
        *rng.pick(service.writes)
    } else {
        *rng.pick(service.reads)
    };
    let version = rng.pick(&["1.08", "1.09", "1.10", "1.11"]);
    let _ = write!(r, r#"{{"eventVersion":"{version}","userIdentity":"#);
    write_identity(r, rng, actor, account);
    let time = chrono::DateTime::from_timestamp_millis(time_ms).unwrap_or_default();
    let _ = write!(
        r,
        r#","eventTime":"{}","eventSource":"{}.amazonaws.com","eventName":"{event_name}","awsRegion":"{region}","sourceIPAddress":"#,
        time.format("%Y-%m-%dT%H:%M:%SZ"),
        service.source,
    );
    if actor == Actor::AwsService {
        let _ = write!(r, r#""{}.amazonaws.com""#, service.source);
    } else {
        let _ = write!(
            r,
            r#""{}.{}.{}.{}""#,
            rng.below(223) + 1,
            rng.below(256),
            rng.below(256),
            rng.below(256)
        );
    }
    r.push_str(r#","userAgent":""#);
    write_agent(r, rng, actor, service, event_name);
    r.push('"');
    if shape == Shape::Failed {
        let (code, message) = rng.pick(&[
            ("AccessDenied", "User is not authorized to perform this operation because no identity-based policy allows it"),
            ("Client.InvalidPermission.Duplicate", "the specified rule already exists"),
            ("ThrottlingException", "Rate exceeded"),
        ]);
        let _ = write!(r, r#","errorCode":"{code}","errorMessage":"{message}""#);
    }
    r.push_str(r#","requestParameters":"#);
    write_parameters(r, rng, service, write);
    r.push_str(r#","responseElements":"#);
    if write && shape != Shape::Failed {
        write_response(r, rng, service);
    } else {
        r.push_str("null");
    }
    r.push_str(r#","requestID":""#);
    rng.uuid(r);
    r.push_str(r#"","eventID":""#);
    rng.uuid(r);
    let _ = write!(r, r#"","readOnly":{}"#, !write);
    if rng.chance(300) {
        let _ = write!(
            r,
            r#","resources":[{{"accountId":"{account}","type":"{}","ARN":"arn:aws:{}:{region}:{account}:{}"#,
            service.resource_type, service.source, service.id_prefix
        );
        rng.hex(r, 12);
        r.push_str(r#""}]"#);
    }
    let event_type = if actor == Actor::AwsService && rng.chance(300) {
        "AwsServiceEvent"
    } else {
        "AwsApiCall"
    };
    let _ = write!(
        r,
        r#","eventType":"{event_type}","managementEvent":true,"recipientAccountId":"{account}","eventCategory":"Management""#
    );
    if actor == Actor::Console {
        r.push_str(r#","sessionCredentialFromConsole":"true""#);
    }
    let _ = write!(
        r,
        r#","tlsDetails":{{"tlsVersion":"TLSv1.3","cipherSuite":"TLS_AES_128_GCM_SHA256","clientProvidedHostHeader":"{}.{region}.amazonaws.com"}}}}"#,
        service.source
    );
}

pub fn write_identity(r: &mut String, rng: &mut Rng, actor: Actor, account: &str) {
    if actor == Actor::AwsService {
        let service = rng.pick(&[
            "autoscaling.amazonaws.com",
            "cloudformation.amazonaws.com",
            "elasticloadbalancing.amazonaws.com",
        ]);
        let _ = write!(r, r#"{{"type":"AWSService","invokedBy":"{service}"}}"#);
        return;
    }
    let iam_user = matches!(actor, Actor::Cli | Actor::Boto3) && rng.chance(500);
    if iam_user {
        let user = rng.pick(&USERS);
        r.push_str(r#"{"type":"IAMUser","principalId":"AIDA"#);
        rng.upper(r, 17);
        let _ = write!(
            r,
            r#"","arn":"arn:aws:iam::{account}:user/{user}","accountId":"{account}","accessKeyId":"AKIA"#
        );
        rng.upper(r, 16);
        let _ = write!(r, r#"","userName":"{user}"}}"#);
        return;
    }
    let (role, session) = match actor {
        Actor::Terraform => (
            "terraform-ci",
            format!("gha-terraform-{}", rng.below(100_000)),
        ),
        Actor::App => ("orders-service", format!("i-0{:015x}", rng.below(1 << 60))),
        _ => {
            let role = *rng.pick(&APP_ROLES[1..]);
            (role, format!("{}@example.com", rng.pick(&USERS)))
        }
    };
    let mut role_id = String::new();
    rng.upper(&mut role_id, 17);
    let _ = write!(
        r,
        r#"{{"type":"AssumedRole","principalId":"AROA{role_id}:{session}","arn":"arn:aws:sts::{account}:assumed-role/{role}/{session}","accountId":"{account}","accessKeyId":"ASIA"#
    );
    rng.upper(r, 16);
    let _ = write!(
        r,
        r#"","sessionContext":{{"sessionIssuer":{{"type":"Role","principalId":"AROA{role_id}","arn":"arn:aws:iam::{account}:role/{role}","accountId":"{account}","userName":"{role}"}},"webIdFederationData":{{}},"attributes":{{"creationDate":"2024-04-25T08:{:02}:{:02}Z","mfaAuthenticated":"{}"}}}}}}"#,
        rng.below(60),
        rng.below(60),
        actor == Actor::Console
    );
}

pub fn write_agent(
    r: &mut String,
    rng: &mut Rng,
    actor: Actor,
    service: &Service,
    event_name: &str,
) {
    match actor {
        Actor::Terraform => {
            r.push_str(TERRAFORM_AGENT);
            r.push_str(service.api);
        }
        Actor::App => {
            let agent = rng.pick::<&str>(&SDK_AGENTS);
            r.push_str(agent);
            r.push_str(service.api);
        }
        Actor::Boto3 => {
            r.push_str(SDK_AGENTS[2]);
            r.push_str(service.api);
        }
        Actor::Console => {
            if rng.chance(300) {
                r.push_str("AWS Internal");
            } else {
                let _ = write!(r, "console.{}.amazonaws.com", service.source);
            }
        }
        Actor::Cli => {
            r.push_str(CLI_AGENT);
            let _ = write!(r, "{}.{}", service.source, kebab(event_name));
        }
        Actor::AwsService => {
            let _ = write!(r, "{}.amazonaws.com", service.source);
        }
    }
}

/// `DescribeInstances` as the CLI names it: `describe-instances`.
pub fn kebab(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().filter(char::is_ascii_alphabetic).enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

pub fn write_id(r: &mut String, rng: &mut Rng, service: &Service) {
    r.push_str(service.id_prefix);
    rng.hex(r, 12);
}

/// Request parameters: an identifier, then filters or settings of varying size.
pub fn write_parameters(r: &mut String, rng: &mut Rng, service: &Service, write: bool) {
    let _ = write!(r, r#"{{"{}":""#, service.id_key);
    write_id(r, rng, service);
    r.push('"');
    let filters = rng.below(7);
    if filters > 0 {
        r.push_str(r#","filterSet":{"items":["#);
        for i in 0..filters {
            if i > 0 {
                r.push(',');
            }
            let key = rng.pick(&["tag:Name", "vpc-id", "instance-state-name", "tag:team"]);
            let _ = write!(r, r#"{{"name":"{key}","valueSet":{{"items":[{{"value":""#);
            rng.hex(r, 8);
            r.push_str(r#""}]}}"#);
        }
        r.push_str("]}");
    }
    if write {
        let tags = rng.below(5);
        r.push_str(r#","tagSpecificationSet":{"items":[{"resourceType":"instance","tags":["#);
        for i in 0..tags {
            if i > 0 {
                r.push(',');
            }
            let key = rng.pick(&["Name", "team", "cost-center", "environment"]);
            let _ = write!(r, r#"{{"key":"{key}","value":"v-"#);
            rng.hex(r, 6);
            r.push_str(r#""}"#);
        }
        r.push_str("]}]}");
        if rng.chance(300) {
            r.push_str(r#","description":"Managed rule: allow HTTPS from the corporate network \"office\"""#);
        }
    } else {
        let _ = write!(r, r#","maxResults":{}"#, 100 * (1 + rng.below(10)));
    }
    r.push('}');
}

/// Response elements of a write: the request id and the changed items.
pub fn write_response(r: &mut String, rng: &mut Rng, service: &Service) {
    r.push_str(r#"{"requestId":""#);
    rng.uuid(r);
    r.push_str(r#"","_return":true,"itemSet":{"items":["#);
    let items = 1 + rng.below(4);
    for i in 0..items {
        if i > 0 {
            r.push(',');
        }
        let _ = write!(r, r#"{{"{}":""#, service.id_key);
        write_id(r, rng, service);
        let _ = write!(
            r,
            r#"","state":{{"code":{},"name":"pending"}},"ownerId":"111122223333"}}"#,
            rng.below(64)
        );
    }
    r.push_str("]}}");
}
