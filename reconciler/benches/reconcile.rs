//! `retrace reconcile` at account scale, printed as figures (not a timed test).
//!
//! Run with `cargo bench -p reconciler --bench reconcile [-- --records N] [--changes N]
//! [--resources N] [--core N] [--keep]`.
//!
//! Two workloads, each at 1x, 2x and 4x, against a generated project of `--resources`
//! resource blocks (SQS queues and security groups, one block each, over ten files) with its
//! state:
//! - a day: `--records` CloudTrail records (default 1,000,000) of a busy account (reads,
//!   failures, Terraform's and AWS services' writes, out-of-band writes on things this
//!   project does not manage, in three accounts and four regions), holding `--changes`
//!   (default 10,000) out-of-band changes to the project's resources by five people;
//! - one resource changed `--changes` times: a queue's visibility timeout and a group's
//!   ingress rules toggled back and forth, with no background;
//! - `--creations` (default 1,000) queues created out of band with the project's name prefix
//!   and common tags, so each is this workspace's and is imported: the edits pile up in one
//!   file;
//! - the bundled demo's day repeated `--days` times (default 1,000), a day apart, against the
//!   demo's own project and state: the same people changing the same few resources again and
//!   again (six intents a day), so intents pile up on one resource.
//!
//! `--only day|one-resource|creations|demo-days` runs one workload.
//!
//! The release `retrace` runs pinned to one core, with `--no-terraform --no-record`, three
//! times per size; each row shows the best wall and CPU time of the three (other load on a
//! shared machine only ever adds time), the highest peak resident memory, and the growth from
//! the previous size. The targets of issue 16 are checked at the end.

// The child's peak memory comes from `wait4`'s resource usage, which only `libc` offers and
// only through `unsafe` (see `common/measure.rs`).
#![allow(unsafe_code)]

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

// Each benchmark uses a part of the shared code.
#[allow(dead_code)]
mod common;

use common::measure::{Pin, Usage, best_of_codes};
use common::trail::{START_MS, write_records};

/// The project's account and region (the first of the background's).
const ACCOUNT: &str = "111122223333";
const REGION: &str = "eu-west-1";
/// The people making out-of-band changes.
const PEOPLE: [&str; 5] = ["alice", "bob", "carol", "dave", "erin"];
/// One in this many project resources is a security group; the rest are queues.
const GROUP_EVERY: usize = 5;

/// Targets: the day in under this many seconds of CPU on one core, under this peak, and
/// growth per doubling within this factor.
const TARGET_DAY_SECS: f64 = 10.0;
const TARGET_PEAK_MIB: f64 = 300.0;
const TARGET_GROWTH: f64 = 2.2;
/// Targets for the demo's day repeated 4,000 times (24,000 intents): seconds of CPU and peak.
const TARGET_DEMO_DAYS_SECS: f64 = 3.0;
const TARGET_DEMO_DAYS_PEAK_MIB: f64 = 400.0;
const TARGET_DEMO_DAYS: u64 = 4_000;

const MIB: f64 = 1024.0 * 1024.0;

/// Runs per size; the best times are reported.
const RUNS: usize = 3;

fn main() -> io::Result<()> {
    let options = Options::parse();
    let retrace = PathBuf::from(env!("CARGO_BIN_EXE_retrace"));
    let pin = Pin::detect(options.core);
    println!("retrace: {}", retrace.display());
    match pin {
        Pin::Taskset(core) => println!("pinned to one core with `taskset -c {core}`"),
        Pin::None => println!("taskset not found: runs are NOT pinned to one core"),
    }
    println!("each row: the best times of {RUNS} runs, the highest peak memory");
    let dir = tempfile::tempdir()?;
    let project = write_project(dir.path(), options.resources)?;
    let mut checks = Vec::new();
    for workload in Workload::ALL {
        if options.only.is_some_and(|only| only != workload.name()) {
            continue;
        }
        println!("\n{}", workload.title(&options));
        println!(
            "{:>6} {:>10} {:>9} {:>8} {:>8} {:>9} {:>8} {:>6}",
            "scale", "records", "changes", "wall s", "cpu s", "peak MiB", "growth", "exit"
        );
        let mut rows: Vec<Usage> = Vec::new();
        for scale in [1_u64, 2, 4] {
            let trail = dir
                .path()
                .join(format!("{}-{scale}x.json", workload.name()));
            let (records, changes) = workload.write(&trail, &options, scale)?;
            let target = match workload {
                Workload::DemoDays => demo_days::target(dir.path())?,
                _ => Target::of(&project),
            };
            let (usage, code) = measure(&retrace, pin, &target, &trail)?;
            let growth = rows
                .last()
                .map(|previous| usage.cpu.as_secs_f64() / previous.cpu.as_secs_f64().max(1e-3));
            println!(
                "{:>5}x {records:>10} {changes:>9} {:>8.2} {:>8.2} {:>9.1} {:>8} {code:>6}",
                scale,
                usage.wall.as_secs_f64(),
                usage.cpu.as_secs_f64(),
                usage.peak_rss_bytes as f64 / MIB,
                growth.map_or("-".to_owned(), |g| format!("{g:.2}x")),
            );
            rows.push(usage);
            if !options.keep {
                std::fs::remove_file(&trail)?;
            }
        }
        checks.extend(workload.checks(&rows));
    }
    println!("\ntargets:");
    for (what, ok) in &checks {
        println!("  [{}] {what}", if *ok { "met" } else { "MISSED" });
    }
    if options.keep {
        println!("project and trails kept in {}", dir.keep().display());
    }
    Ok(())
}

/// Command-line options.
struct Options {
    records: u64,
    changes: u64,
    resources: usize,
    creations: u64,
    days: u64,
    core: u32,
    keep: bool,
    only: Option<&'static str>,
}

impl Options {
    /// The options; other arguments (cargo passes `--bench`) are ignored.
    fn parse() -> Self {
        let mut options = Self {
            records: 1_000_000,
            changes: 10_000,
            resources: 1_000,
            creations: 1_000,
            days: 1_000,
            core: 0,
            keep: false,
            only: None,
        };
        let mut args = std::env::args().skip(1);
        let number = |value: Option<String>, flag: &str| -> u64 {
            value
                .and_then(|v| v.replace('_', "").parse().ok())
                .unwrap_or_else(|| panic!("{flag} takes a number"))
        };
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--records" => options.records = number(args.next(), "--records"),
                "--changes" => options.changes = number(args.next(), "--changes"),
                "--resources" => options.resources = number(args.next(), "--resources") as usize,
                "--core" => options.core = number(args.next(), "--core") as u32,
                "--creations" => options.creations = number(args.next(), "--creations"),
                "--days" => options.days = number(args.next(), "--days"),
                "--keep" => options.keep = true,
                "--only" => {
                    let name = args.next().unwrap_or_default();
                    let workload = Workload::ALL.into_iter().find(|w| w.name() == name);
                    options.only = Some(
                        workload
                            .unwrap_or_else(|| {
                                panic!("--only takes day, one-resource, creations or demo-days")
                            })
                            .name(),
                    );
                }
                _ => {}
            }
        }
        options
    }
}

/// What a trail holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Workload {
    /// A busy day with changes spread over the project's resources.
    Day,
    /// Many changes to one queue and one group.
    OneResource,
    /// Many owned queues created out of band, each imported.
    Creations,
    /// The demo's day repeated, a day apart.
    DemoDays,
}

impl Workload {
    const ALL: [Workload; 4] = [
        Self::Day,
        Self::OneResource,
        Self::Creations,
        Self::DemoDays,
    ];

    fn name(self) -> &'static str {
        match self {
            Self::Day => "day",
            Self::OneResource => "one-resource",
            Self::Creations => "creations",
            Self::DemoDays => "demo-days",
        }
    }

    fn title(self, options: &Options) -> String {
        match self {
            Self::Day => format!(
                "a day: {} records holding {} out-of-band changes over {} resources (1x)",
                options.records, options.changes, options.resources
            ),
            Self::OneResource => format!(
                "one queue and one group changed {} times in all (1x), no background",
                options.changes
            ),
            Self::Creations => format!(
                "{} queues created out of band in this workspace (1x), no background",
                options.creations
            ),
            Self::DemoDays => format!(
                "the demo's day repeated {} times (1x), against the demo's project",
                options.days
            ),
        }
    }

    /// Writes the trail at `scale`; returns its records and out-of-band changes.
    fn write(self, path: &Path, options: &Options, scale: u64) -> io::Result<(u64, u64)> {
        let changes = options.changes * scale;
        let (background, resources) = match self {
            Self::Day => (
                (options.records * scale).saturating_sub(changes),
                options.resources,
            ),
            // The first queue and the first group.
            Self::OneResource => (0, GROUP_EVERY + 1),
            Self::Creations => return write_creations(path, options.creations * scale),
            Self::DemoDays => return demo_days::write(path, options.days * scale),
        };
        let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
        out.write_all(b"{\"Records\":[")?;
        write_records(&mut out, background, START_MS)?;
        let span_ms = (background.max(changes) as i64) * common::trail::STEP_MS;
        write_changes(&mut out, background > 0, changes, resources, span_ms)?;
        out.write_all(b"]}")?;
        out.flush()?;
        Ok((background + changes, changes))
    }

    /// The targets this workload's rows meet or miss.
    fn checks(self, rows: &[Usage]) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        if self == Self::Day
            && let Some(first) = rows.first()
        {
            let secs = first.cpu.as_secs_f64();
            out.push((
                format!("the day at 1x in under {TARGET_DAY_SECS} s of CPU: {secs:.2} s"),
                secs < TARGET_DAY_SECS,
            ));
        }
        if self == Self::DemoDays
            && let Some(last) = rows.last()
        {
            let (secs, peak) = (last.cpu.as_secs_f64(), last.peak_rss_bytes as f64 / MIB);
            out.push((
                format!("demo-days at 4x ({TARGET_DEMO_DAYS} days at the default) in under {TARGET_DEMO_DAYS_SECS} s of CPU: {secs:.2} s"),
                secs < TARGET_DEMO_DAYS_SECS,
            ));
            out.push((
                format!(
                    "demo-days at 4x: peak under {TARGET_DEMO_DAYS_PEAK_MIB} MiB: {peak:.1} MiB"
                ),
                peak < TARGET_DEMO_DAYS_PEAK_MIB,
            ));
        }
        if let Some(first) = rows.first() {
            let peak = first.peak_rss_bytes as f64 / MIB;
            out.push((
                format!(
                    "{} at 1x: peak under {TARGET_PEAK_MIB} MiB: {peak:.1} MiB",
                    self.name()
                ),
                peak < TARGET_PEAK_MIB,
            ));
        }
        for pair in rows.windows(2) {
            let growth = pair[1].cpu.as_secs_f64() / pair[0].cpu.as_secs_f64().max(1e-3);
            out.push((
                format!(
                    "{}: growth per doubling within {TARGET_GROWTH}x: {growth:.2}x",
                    self.name()
                ),
                growth <= TARGET_GROWTH,
            ));
        }
        out
    }
}

/// What a trail is reconciled against: a project, its state and a configuration file.
struct Target {
    dir: String,
    state: String,
    config: Option<String>,
}

impl Target {
    /// The generated project, with no configuration file.
    fn of(project: &Project) -> Self {
        Self {
            dir: project.dir.display().to_string(),
            state: project.state.display().to_string(),
            config: None,
        }
    }
}

/// Runs `retrace reconcile` over the trail; exit codes 0, 2 and 3 are results.
fn measure(retrace: &Path, pin: Pin, target: &Target, trail: &Path) -> io::Result<(Usage, i32)> {
    let (dir, state, trail) = (&target.dir, &target.state, trail.display().to_string());
    let mut args: Vec<&str> = Vec::new();
    if let Some(config) = &target.config {
        args.extend(["--config", config]);
    }
    args.extend([
        "reconcile",
        "--project",
        dir.as_str(),
        "--state",
        state.as_str(),
        "--logs",
        trail.as_str(),
        "--no-terraform",
        "--no-record",
        "--format",
        "json",
    ]);
    eprintln!("running retrace reconcile on {trail} ...");
    best_of_codes(RUNS, &[0, 2, 3], || pin.command(retrace, &args))
}

/// The generated project: its root directory and state file.
struct Project {
    dir: PathBuf,
    state: PathBuf,
}

/// The name of project resource `i`: queues `bench-q0001`, groups `bench-sg0005`.
fn resource_name(i: usize) -> String {
    if i.is_multiple_of(GROUP_EVERY) {
        format!("bench-sg{i:04}")
    } else {
        format!("bench-q{i:04}")
    }
}

fn queue_url(name: &str) -> String {
    format!("https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{name}")
}

fn group_id(i: usize) -> String {
    format!("sg-0{i:016x}")
}

/// Writes `resources` resource blocks over ten files and a state holding them.
fn write_project(dir: &Path, resources: usize) -> io::Result<Project> {
    let root = dir.join("project");
    std::fs::create_dir_all(&root)?;
    std::fs::write(
        root.join("main.tf"),
        format!(
            "provider \"aws\" {{\n  region = \"{REGION}\"\n}}\n\nlocals {{\n  common_tags = {{\n    Project = \"bench\"\n  }}\n}}\n"
        ),
    )?;
    let mut files = vec![String::new(); 10];
    let mut instances = Vec::new();
    for i in 0..resources {
        let name = resource_name(i);
        let text = &mut files[i % 10];
        if i.is_multiple_of(GROUP_EVERY) {
            let _ = write!(
                text,
                "resource \"aws_security_group\" \"{name}\" {{\n  name   = \"{name}\"\n  vpc_id = \"vpc-0a1b2c3d4e5f60718\"\n\n  ingress {{\n    from_port   = 443\n    to_port     = 443\n    protocol    = \"tcp\"\n    cidr_blocks = [\"10.0.0.0/16\"]\n  }}\n\n  tags = local.common_tags\n}}\n\n"
            );
            instances.push(group_state(i, &name));
        } else {
            let _ = write!(
                text,
                "resource \"aws_sqs_queue\" \"{name}\" {{\n  name                       = \"{name}\"\n  visibility_timeout_seconds = 30\n\n  tags = local.common_tags\n}}\n\n"
            );
            instances.push(queue_state(&name));
        }
    }
    for (n, text) in files.iter().enumerate() {
        std::fs::write(root.join(format!("resources_{n}.tf")), text)?;
    }
    let state = dir.join("terraform.tfstate");
    let doc = serde_json::json!({
        "version": 4,
        "terraform_version": "1.11.4",
        "serial": 1,
        "lineage": "bench",
        "outputs": {},
        "resources": instances,
    });
    std::fs::write(&state, serde_json::to_vec(&doc).map_err(io::Error::other)?)?;
    Ok(Project { dir: root, state })
}

fn queue_state(name: &str) -> serde_json::Value {
    let url = queue_url(name);
    serde_json::json!({
        "mode": "managed", "type": "aws_sqs_queue", "name": name,
        "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
        "instances": [{"schema_version": 0, "attributes": {
            "id": url, "url": url, "name": name,
            "arn": format!("arn:aws:sqs:{REGION}:{ACCOUNT}:{name}"),
            "visibility_timeout_seconds": 30, "tags": {"Project": "bench"},
            "tags_all": {"Project": "bench"}
        }}]
    })
}

fn group_state(i: usize, name: &str) -> serde_json::Value {
    let id = group_id(i);
    serde_json::json!({
        "mode": "managed", "type": "aws_security_group", "name": name,
        "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
        "instances": [{"schema_version": 1, "attributes": {
            "id": id, "name": name, "vpc_id": "vpc-0a1b2c3d4e5f60718",
            "arn": format!("arn:aws:ec2:{REGION}:{ACCOUNT}:security-group/{id}"),
            "ingress": [{"from_port": 443, "to_port": 443, "protocol": "tcp",
                "cidr_blocks": ["10.0.0.0/16"], "ipv6_cidr_blocks": [], "prefix_list_ids": [],
                "security_groups": [], "self": false, "description": ""}],
            "egress": [], "tags": {"Project": "bench"}, "tags_all": {"Project": "bench"}
        }}]
    })
}

/// Writes `changes` out-of-band records (after a comma when `after` holds records) spread
/// over `span_ms`: each a person's change to one of the first `resources` resources, a new
/// visibility timeout for a queue, a port opened or closed again on a group.
fn write_changes(
    out: &mut impl Write,
    after: bool,
    changes: u64,
    resources: usize,
    span_ms: i64,
) -> io::Result<()> {
    let step = (span_ms / changes.max(1) as i64).max(1);
    let mut open: std::collections::HashSet<(usize, u64)> = std::collections::HashSet::new();
    let mut record = String::with_capacity(2048);
    for n in 0..changes {
        if after || n > 0 {
            out.write_all(b",")?;
        }
        let target = (n as usize * 7919) % resources;
        let person = PEOPLE[(n % PEOPLE.len() as u64) as usize];
        let time = START_MS + n as i64 * step;
        record.clear();
        if target.is_multiple_of(GROUP_EVERY) {
            let port = 8000 + n % 50;
            let opened = open.insert((target, port));
            if !opened {
                open.remove(&(target, port));
            }
            group_change(
                &mut record,
                n,
                person,
                time,
                &group_id(target),
                port,
                opened,
            );
        } else {
            let name = resource_name(target);
            queue_change(
                &mut record,
                n,
                person,
                time,
                &queue_url(&name),
                31 + n % 900,
            );
        }
        out.write_all(record.as_bytes())?;
    }
    Ok(())
}

/// Writes a trail of `count` queues created out of band, named with the project's prefix and
/// carrying its common tags; returns its records and changes.
fn write_creations(path: &Path, count: u64) -> io::Result<(u64, u64)> {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    out.write_all(b"{\"Records\":[")?;
    let mut record = String::with_capacity(2048);
    for n in 0..count {
        if n > 0 {
            out.write_all(b",")?;
        }
        let name = format!("bench-new{n:05}");
        let person = PEOPLE[(n % PEOPLE.len() as u64) as usize];
        record.clear();
        let time = START_MS + n as i64 * 60_000;
        head(
            &mut record,
            n,
            person,
            time,
            "sqs.amazonaws.com",
            "CreateQueue",
        );
        let _ = write!(
            record,
            r#""requestParameters":{{"queueName":"{name}","tags":{{"Project":"bench"}}}},"responseElements":{{"queueUrl":"{}"}}}}"#,
            queue_url(&name)
        );
        out.write_all(record.as_bytes())?;
    }
    out.write_all(b"]}")?;
    out.flush()?;
    Ok((count, count))
}

/// The fields every change record shares: version, an IAM user's identity, time, source.
fn head(r: &mut String, n: u64, person: &str, time_ms: i64, source: &str, event: &str) {
    let time = chrono::DateTime::from_timestamp_millis(time_ms).unwrap_or_default();
    let _ = write!(
        r,
        r#"{{"eventVersion":"1.11","userIdentity":{{"type":"IAMUser","principalId":"AIDABENCH{person}","arn":"arn:aws:iam::{ACCOUNT}:user/{person}","accountId":"{ACCOUNT}","accessKeyId":"AKIABENCH{person}","userName":"{person}"}},"eventTime":"{}","eventSource":"{source}","eventName":"{event}","awsRegion":"{REGION}","sourceIPAddress":"198.51.100.7","userAgent":"aws-cli/2.15.30 md/command#bench","requestID":"bench-{n}","eventID":"00000000-0000-4000-8000-{n:012}","readOnly":false,"eventType":"AwsApiCall","managementEvent":true,"recipientAccountId":"{ACCOUNT}","eventCategory":"Management","#,
        time.format("%Y-%m-%dT%H:%M:%SZ")
    );
}

fn queue_change(r: &mut String, n: u64, person: &str, time: i64, url: &str, timeout: u64) {
    head(
        r,
        n,
        person,
        time,
        "sqs.amazonaws.com",
        "SetQueueAttributes",
    );
    let _ = write!(
        r,
        r#""requestParameters":{{"queueUrl":"{url}","attributes":{{"VisibilityTimeout":"{timeout}"}}}},"responseElements":null}}"#
    );
}

fn group_change(
    r: &mut String,
    n: u64,
    person: &str,
    time: i64,
    group: &str,
    port: u64,
    open: bool,
) {
    let event = if open {
        "AuthorizeSecurityGroupIngress"
    } else {
        "RevokeSecurityGroupIngress"
    };
    head(r, n, person, time, "ec2.amazonaws.com", event);
    let _ = write!(
        r,
        r#""requestParameters":{{"groupId":"{group}","ipPermissions":{{"items":[{{"ipProtocol":"tcp","fromPort":{port},"toPort":{port},"ipRanges":{{"items":[{{"cidrIp":"10.1.0.0/16"}}]}}}}]}}}},"responseElements":{{"_return":true}}}}"#
    );
}

/// The demo's day repeated: its records copied once a day apart, with fresh event ids.
mod demo_days {
    use super::Target;
    use flate2::read::GzDecoder;
    use serde_json::Value;
    use std::fs::File;
    use std::io::{self, BufWriter, Read, Write};
    use std::path::{Path, PathBuf};

    /// The bundled demo, beside this crate.
    fn demo() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/demo")
    }

    /// The demo's project and state, and a configuration naming its pipeline's role and
    /// region (the demo's own one also fixes the day, which the repeats leave).
    pub fn target(dir: &Path) -> io::Result<Target> {
        let config = dir.join("demo-days.toml");
        std::fs::write(
            &config,
            "[filter]\nregions = [\"us-east-1\"]\n\n[attribution]\niac_role_arns = [\"arn:aws:iam::*:role/terraform-ci\"]\n",
        )?;
        Ok(Target {
            dir: demo().join("project").display().to_string(),
            state: demo().join("terraform.tfstate").display().to_string(),
            config: Some(config.display().to_string()),
        })
    }

    /// Writes the demo's day `days` times; returns the records and the days.
    pub fn write(path: &Path, days: u64) -> io::Result<(u64, u64)> {
        let records = records()?;
        let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
        out.write_all(b"{\"Records\":[")?;
        let mut written = 0_u64;
        for day in 0..days {
            for record in &records {
                if written > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut out, &shifted(record, day)?)?;
                written += 1;
            }
        }
        out.write_all(b"]}")?;
        out.flush()?;
        Ok((written, days))
    }

    /// The record moved `day` days later, its event id made unique to the day.
    fn shifted(record: &Value, day: u64) -> io::Result<Value> {
        let mut record = record.clone();
        let time = record["eventTime"]
            .as_str()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .ok_or_else(|| io::Error::other("a demo record has no eventTime"))?;
        let moved = time + chrono::Duration::days(day as i64);
        record["eventTime"] = Value::from(moved.format("%Y-%m-%dT%H:%M:%SZ").to_string());
        if let Some(id) = record["eventID"].as_str() {
            record["eventID"] = Value::from(format!("{id}-{day}"));
        }
        Ok(record)
    }

    /// Every record of the demo's trail files.
    fn records() -> io::Result<Vec<Value>> {
        let mut files = Vec::new();
        collect(&demo().join("trail"), &mut files)?;
        files.sort();
        let mut records = Vec::new();
        for file in files {
            let mut text = String::new();
            let reader = File::open(&file)?;
            if file.extension().is_some_and(|e| e == "gz") {
                GzDecoder::new(reader).read_to_string(&mut text)?;
            } else {
                io::BufReader::new(reader).read_to_string(&mut text)?;
            }
            let doc: Value = serde_json::from_str(&text)?;
            if let Some(list) = doc["Records"].as_array() {
                records.extend(list.iter().cloned());
            }
        }
        Ok(records)
    }

    fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                collect(&path, out)?;
            } else {
                out.push(path);
            }
        }
        Ok(())
    }
}
