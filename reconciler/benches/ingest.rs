//! Ingestion speed and memory of `retrace events`, printed as figures (not a timed test).
//!
//! Run with `cargo bench -p reconciler --bench ingest [-- --records N] [--no-jq] [--keep]
//! [--core N]`.
//!
//! The benchmark writes a large, realistic CloudTrail log (the S3 `{"Records":[...]}`
//! envelope, default 1,000,000 records of 1-2 KB) to a temporary directory, plain and
//! gzipped, then runs the release `retrace` binary over each file pinned to one core and
//! reports wall time, throughput and the child's peak resident memory. `jq` runs the same
//! out-of-band selection on the plain file for comparison. A second run at twice the size
//! shows that peak memory does not grow with the input.

// The child's peak memory comes from `wait4`'s resource usage, which only `libc` offers and
// only through `unsafe`. The workspace denies unsafe code; the library and binary forbid it
// at their crate roots, and this benchmark is the one exception.
#![allow(unsafe_code)]

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use flate2::Compression;
use flate2::write::GzEncoder;

/// The out-of-band selection in jq: successful, mutating, not Terraform, not an AWS service.
const JQ_FILTER: &str = r#".Records[] | select(.readOnly == false and .errorCode == null and ((.userAgent // "") | test("HashiCorp/1.0 Terraform/|terraform-provider-aws/") | not) and .userIdentity.type != "AWSService")"#;

/// Targets the figures are checked against.
const TARGET_MB_S: f64 = 200.0;
const TARGET_PEAK_MB: f64 = 200.0;
const TARGET_JQ_RATIO: f64 = 5.0;
/// Peak memory at twice the input may exceed the first size's by at most this fraction.
const TARGET_PEAK_GROWTH: f64 = 0.10;

/// Timed runs of retrace per file; the best wall time is reported.
const RETRACE_RUNS: usize = 3;

const MB: f64 = 1_000_000.0;

fn main() -> io::Result<()> {
    let options = Options::parse();
    let retrace = PathBuf::from(env!("CARGO_BIN_EXE_retrace"));
    let pin = Pin::detect(options.core);
    let jq = options.jq && succeeds(Command::new("jq").arg("--version"));
    println!("retrace: {}", retrace.display());
    match pin {
        Pin::Taskset(core) => println!("pinned to one core with `taskset -c {core}`"),
        Pin::None => println!("taskset not found: runs are NOT pinned to one core"),
    }
    if !jq {
        println!("jq comparison skipped (jq not found or --no-jq)");
    }
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("load average before the runs: {}", load.trim());
    }
    let mut results = Vec::new();
    for (step, records) in [options.records, options.records * 2]
        .into_iter()
        .enumerate()
    {
        let dir = tempfile::tempdir()?;
        let log = generate(dir.path(), records)?;
        // jq holds the whole document in memory (several times the file size), so it runs
        // on the first size only.
        let with_jq = jq && step == 0 && jq_fits_in_memory(log.plain_bytes);
        let result = measure_size(&retrace, pin, &log, dir.path(), with_jq)?;
        print_size(&result);
        results.push(result);
        if options.keep {
            println!("logs kept in {}", dir.keep().display());
        }
    }
    print_targets(&results, jq);
    Ok(())
}

/// Command-line options.
struct Options {
    records: u64,
    jq: bool,
    /// Keep the generated logs (to inspect or profile them) instead of deleting them.
    keep: bool,
    /// The core the measured programs are pinned to.
    core: u32,
}

impl Options {
    /// `--records N`, `--no-jq`, `--keep` and `--core N`; other arguments (cargo passes
    /// `--bench`) are ignored.
    fn parse() -> Self {
        let mut options = Self {
            records: 1_000_000,
            jq: true,
            keep: false,
            core: 0,
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--records" => {
                    let value = args.next().and_then(|v| v.replace('_', "").parse().ok());
                    options.records = value.expect("--records takes a number");
                }
                "--no-jq" => options.jq = false,
                "--keep" => options.keep = true,
                "--core" => {
                    let value = args.next().and_then(|v| v.parse().ok());
                    options.core = value.expect("--core takes a core number");
                }
                _ => {}
            }
        }
        options
    }
}

/// jq 1.6 needs roughly nine times the document's size in memory; it is skipped when that
/// would not fit in the memory available now.
fn jq_fits_in_memory(document_bytes: u64) -> bool {
    let available_kib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        });
    let Some(available_kib) = available_kib else {
        return true;
    };
    let fits = document_bytes.saturating_mul(10) < available_kib * 1024;
    if !fits {
        println!(
            "jq skipped: it would need about {:.0} MB, {:.0} MB are available",
            document_bytes as f64 * 10.0 / MB,
            available_kib as f64 * 1024.0 / MB
        );
    }
    fits
}

fn succeeds(command: &mut Command) -> bool {
    command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

// ---------------------------------------------------------------------------------------
// Measuring a child process
// ---------------------------------------------------------------------------------------

/// How children are pinned to one core.
#[derive(Clone, Copy)]
enum Pin {
    /// With `taskset -c CORE`.
    Taskset(u32),
    None,
}

impl Pin {
    fn detect(core: u32) -> Self {
        let core_arg = core.to_string();
        if succeeds(Command::new("taskset").args(["-c", &core_arg, "true"])) {
            Self::Taskset(core)
        } else {
            Self::None
        }
    }

    /// A command running `program` with `args`, pinned when possible.
    fn command(self, program: &Path, args: &[&str]) -> Command {
        match self {
            Self::Taskset(core) => {
                let mut command = Command::new("taskset");
                command
                    .args(["-c", &core.to_string()])
                    .arg(program)
                    .args(args);
                command
            }
            Self::None => {
                let mut command = Command::new(program);
                command.args(args);
                command
            }
        }
    }
}

/// Wall time and peak memory of one child run.
#[derive(Clone, Copy)]
struct Usage {
    wall: Duration,
    /// User plus system CPU time: less sensitive than wall time to other load on the core.
    cpu: Duration,
    peak_rss_bytes: u64,
}

/// Runs `command` with stdout to `stdout`, waits with `wait4` and returns its usage.
fn run(mut command: Command, stdout: Stdio) -> io::Result<Usage> {
    let started = Instant::now();
    let child = command.stdout(stdout).stderr(Stdio::null()).spawn()?;
    let pid = libc::pid_t::try_from(child.id()).map_err(io::Error::other)?;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own unreaped child; `status` and `usage` are valid for writes.
    // The child is reaped here, so `child` is dropped without being waited on again.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = started.elapsed();
    drop(child);
    if reaped != pid {
        return Err(io::Error::last_os_error());
    }
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(io::Error::other(format!(
            "{command:?} failed: status {status}"
        )));
    }
    let seconds = |t: libc::timeval| {
        Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
    };
    Ok(Usage {
        wall,
        cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime),
        // Linux reports ru_maxrss in KiB.
        peak_rss_bytes: u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024,
    })
}

/// Best wall time and highest peak memory of `runs` runs.
fn best_of(runs: usize, mut make: impl FnMut() -> Command) -> io::Result<Usage> {
    let mut best: Option<Usage> = None;
    for _ in 0..runs {
        let usage = run(make(), Stdio::null())?;
        best = Some(match best {
            None => usage,
            Some(b) => Usage {
                wall: b.wall.min(usage.wall),
                cpu: b.cpu.min(usage.cpu),
                peak_rss_bytes: b.peak_rss_bytes.max(usage.peak_rss_bytes),
            },
        });
    }
    best.ok_or_else(|| io::Error::other("no runs"))
}

fn count_lines(path: &Path) -> io::Result<u64> {
    let mut reader = BufReader::with_capacity(1 << 20, File::open(path)?);
    let mut lines = 0;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            return Ok(lines);
        }
        lines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        let n = chunk.len();
        reader.consume(n);
    }
}

/// The figures of one tool over one file.
struct Row {
    label: &'static str,
    input_bytes: u64,
    plain_bytes: u64,
    usage: Usage,
}

impl Row {
    fn secs(&self) -> f64 {
        self.usage.wall.as_secs_f64()
    }
}

/// Everything measured at one input size.
struct SizeResult {
    log: GeneratedLog,
    rows: Vec<Row>,
    retrace_selected: u64,
    jq_selected: Option<u64>,
}

fn measure_size(
    retrace: &Path,
    pin: Pin,
    log: &GeneratedLog,
    dir: &Path,
    with_jq: bool,
) -> io::Result<SizeResult> {
    let retrace_args = |file: &Path| -> Vec<String> {
        let file = file.display().to_string();
        [
            "events",
            "--logs",
            &file,
            "--only",
            "out-of-band",
            "--format",
            "ndjson",
        ]
        .map(str::to_owned)
        .to_vec()
    };
    let mut rows = Vec::new();
    for (label, file, bytes) in [
        ("retrace .json", &log.plain, log.plain_bytes),
        ("retrace .json.gz", &log.gz, log.gz_bytes),
    ] {
        eprintln!("running retrace on {} ...", file.display());
        let args = retrace_args(file);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let usage = best_of(RETRACE_RUNS, || pin.command(retrace, &args))?;
        rows.push(Row {
            label,
            input_bytes: bytes,
            plain_bytes: log.plain_bytes,
            usage,
        });
    }
    // An untimed run writes retrace's selection to a file to count it.
    let selection = dir.join("retrace-out.ndjson");
    let args = retrace_args(&log.plain);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run(
        pin.command(retrace, &args),
        File::create(&selection)?.into(),
    )?;
    let retrace_selected = count_lines(&selection)?;
    let mut jq_selected = None;
    if with_jq {
        eprintln!("running jq on {} (slow) ...", log.plain.display());
        // jq's timed run writes its (small) selection to a file, which is then counted.
        let out = dir.join("jq-out.ndjson");
        let plain = log.plain.display().to_string();
        let usage = run(
            pin.command(Path::new("jq"), &["-c", JQ_FILTER, &plain]),
            File::create(&out)?.into(),
        )?;
        jq_selected = Some(count_lines(&out)?);
        rows.push(Row {
            label: "jq .json",
            input_bytes: log.plain_bytes,
            plain_bytes: log.plain_bytes,
            usage,
        });
    }
    Ok(SizeResult {
        log: log.clone(),
        rows,
        retrace_selected,
        jq_selected,
    })
}

// ---------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------

fn print_size(result: &SizeResult) {
    let log = &result.log;
    println!();
    println!(
        "input: {} records ({} duplicated eventIDs, {} out of time order), {:.0} MB plain, {:.0} MB gzipped, {:.2} KB/record",
        log.records,
        log.duplicates,
        log.out_of_order,
        log.plain_bytes as f64 / MB,
        log.gz_bytes as f64 / MB,
        log.plain_bytes as f64 / log.records as f64 / 1000.0,
    );
    println!(
        "(retrace: best of {RETRACE_RUNS} runs, output to /dev/null; jq: one run, output to a file)"
    );
    println!(
        "{:<18} {:>8} {:>8} {:>11} {:>14} {:>10} {:>9}",
        "tool / file", "wall s", "cpu s", "input MB/s", "uncompr. MB/s", "records/s", "peak MB"
    );
    for row in &result.rows {
        println!(
            "{:<18} {:>8.2} {:>8.2} {:>11.1} {:>14.1} {:>10.0} {:>9.1}",
            row.label,
            row.secs(),
            row.usage.cpu.as_secs_f64(),
            row.input_bytes as f64 / MB / row.secs(),
            row.plain_bytes as f64 / MB / row.secs(),
            log.records as f64 / row.secs(),
            row.usage.peak_rss_bytes as f64 / MB,
        );
    }
    println!(
        "selected as out of band: retrace {} (counted in an extra untimed run; expected {} distinct)",
        result.retrace_selected, log.out_of_band
    );
    if let Some(jq) = result.jq_selected {
        println!(
            "                         jq      {} (expected {} = {} + {} duplicated records jq does not drop)",
            jq,
            log.out_of_band + log.out_of_band_duplicates,
            log.out_of_band,
            log.out_of_band_duplicates
        );
    }
}

/// The higher peak memory of retrace's two runs (plain and gzipped) at one size.
fn retrace_peak_mb(result: &SizeResult) -> f64 {
    let peak = result.rows[..2]
        .iter()
        .map(|r| r.usage.peak_rss_bytes)
        .max()
        .unwrap_or(0);
    peak as f64 / MB
}

fn print_targets(results: &[SizeResult], jq: bool) {
    println!();
    println!("{:<58} {:>12} {:>8}", "target", "measured", "");
    let verdict = |ok: bool| if ok { "ok" } else { "MISSED" };
    for result in results {
        let plain = &result.rows[0];
        let speed = plain.input_bytes as f64 / MB / plain.secs();
        println!(
            "{:<58} {:>12} {:>8}",
            format!(
                "plain JSON >= {TARGET_MB_S} MB/s on one core ({} records)",
                result.log.records
            ),
            format!("{speed:.1}"),
            verdict(speed >= TARGET_MB_S)
        );
    }
    for result in results {
        let peak = retrace_peak_mb(result);
        println!(
            "{:<58} {:>12} {:>8}",
            format!(
                "peak memory < {TARGET_PEAK_MB} MB ({} records)",
                result.log.records
            ),
            format!("{peak:.1} MB"),
            verdict(peak < TARGET_PEAK_MB)
        );
    }
    if let [small, large] = results {
        let growth = retrace_peak_mb(large) / retrace_peak_mb(small) - 1.0;
        println!(
            "{:<58} {:>12} {:>8}",
            format!(
                "peak memory flat from {} to {} records (< +{:.0}%)",
                small.log.records,
                large.log.records,
                TARGET_PEAK_GROWTH * 100.0
            ),
            format!("{:+.1}%", growth * 100.0),
            verdict(growth < TARGET_PEAK_GROWTH)
        );
    }
    for result in results {
        let expected = result.log.out_of_band;
        println!(
            "{:<58} {:>12} {:>8}",
            format!(
                "retrace selects the expected records ({} records)",
                result.log.records
            ),
            result.retrace_selected,
            verdict(result.retrace_selected == expected)
        );
    }
    if !jq {
        println!("{:<58} {:>12} {:>8}", "speed vs jq", "-", "skipped");
        return;
    }
    let first = &results[0];
    if let (Some(jq_row), Some(jq_selected)) = (first.rows.get(2), first.jq_selected) {
        let ratio = jq_row.secs() / first.rows[0].secs();
        println!(
            "{:<58} {:>12} {:>8}",
            format!(">= {TARGET_JQ_RATIO}x faster than jq (plain JSON)"),
            format!("{ratio:.1}x"),
            verdict(ratio >= TARGET_JQ_RATIO)
        );
        let same = jq_selected == first.retrace_selected + first.log.out_of_band_duplicates;
        println!(
            "{:<58} {:>12} {:>8}",
            "jq and retrace select the same records (jq keeps dups)",
            format!("{jq_selected}"),
            verdict(same)
        );
    }
}

// ---------------------------------------------------------------------------------------
// Generating a realistic log
// ---------------------------------------------------------------------------------------

/// A tiny deterministic generator (xorshift64*), so every run writes the same log.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True with probability `per_mille` / 1000.
    fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// `n` lowercase hex digits.
    fn hex(&mut self, out: &mut String, n: usize) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        for _ in 0..n {
            out.push(HEX[self.below(16) as usize] as char);
        }
    }

    /// `n` uppercase letters and digits, as in access key and principal ids.
    fn upper(&mut self, out: &mut String, n: usize) {
        const CHARS: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
        for _ in 0..n {
            out.push(CHARS[self.below(32) as usize] as char);
        }
    }

    fn uuid(&mut self, out: &mut String) {
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
struct GeneratedLog {
    plain: PathBuf,
    gz: PathBuf,
    plain_bytes: u64,
    gz_bytes: u64,
    records: u64,
    duplicates: u64,
    out_of_order: u64,
    /// Distinct out-of-band calls.
    out_of_band: u64,
    /// Extra copies of out-of-band records (jq selects them again; retrace drops them).
    out_of_band_duplicates: u64,
}

/// A service: event source, id field and prefix, reads and writes.
struct Service {
    source: &'static str,
    api: &'static str,
    id_key: &'static str,
    id_prefix: &'static str,
    resource_type: &'static str,
    reads: &'static [&'static str],
    writes: &'static [&'static str],
}

const SERVICES: &[Service] = &[
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

const ACCOUNTS: [&str; 3] = ["111122223333", "444455556666", "777788889999"];
const REGIONS: [&str; 4] = ["eu-west-1", "us-east-1", "eu-central-1", "us-west-2"];
const USERS: [&str; 5] = ["alice", "bob", "carol", "deploy-bot", "ops-admin"];
const APP_ROLES: [&str; 4] = [
    "orders-service",
    "AWSReservedSSO_AdminAccess_0a1b2c3d4e5f6a7b",
    "AWSReservedSSO_ReadOnly_9f8e7d6c5b4a3921",
    "monitoring-exporter",
];

const TERRAFORM_AGENT: &str = "APN/1.0 HashiCorp/1.0 Terraform/1.7.5 (+https://www.terraform.io) terraform-provider-aws/5.40.0 (+https://registry.terraform.io/providers/hashicorp/aws) aws-sdk-go-v2/1.25.2 os/linux lang/go#1.22.1 md/GOOS#linux md/GOARCH#amd64 api/";
const SDK_AGENTS: [&str; 3] = [
    "aws-sdk-go-v2/1.24.0 os/linux lang/go#1.21.5 md/GOOS#linux md/GOARCH#amd64 api/",
    "aws-sdk-java/2.20.162 Linux/5.10.199-190.747.amzn2.x86_64 OpenJDK_64-Bit_Server_VM/17.0.9+8-LTS Java/17.0.9 vendor/Amazon.com_Inc. io/sync http/Apache cfg/retry-mode/legacy api/",
    "Boto3/1.34.11 md/Botocore#1.34.11 ua/2.0 os/linux#6.2.0 md/arch#x86_64 lang/python#3.11.6 md/pyimpl#CPython cfg/retry-mode#legacy Botocore/1.34.11 api/",
];
const CLI_AGENT: &str = "aws-cli/2.15.30 md/awscrt#0.19.19 ua/2.0 os/linux#6.5.0-1016-aws md/arch#x86_64 lang/python#3.11.8 md/pyimpl#CPython cfg/retry-mode#standard md/installer#exe md/distrib#ubuntu.22 md/prompt#off md/command#";

/// Who makes a call and with what.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Actor {
    Terraform,
    App,
    Console,
    Cli,
    Boto3,
    AwsService,
}

/// What kind of call a record is, in the proportions of a busy account.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Read,
    Failed,
    TerraformWrite,
    ServiceWrite,
    OutOfBandWrite,
}

impl Shape {
    fn draw(rng: &mut Rng) -> Self {
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
fn generate(dir: &Path, records: u64) -> io::Result<GeneratedLog> {
    let started = Instant::now();
    eprintln!("generating {records} records in {} ...", dir.display());
    let plain = dir.join("cloudtrail.json");
    let mut out = BufWriter::with_capacity(1 << 20, File::create(&plain)?);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ records);
    let mut log = GeneratedLog {
        plain: plain.clone(),
        gz: dir.join("cloudtrail.json.gz"),
        plain_bytes: 0,
        gz_bytes: 0,
        records,
        duplicates: 0,
        out_of_order: 0,
        out_of_band: 0,
        out_of_band_duplicates: 0,
    };
    let mut record = String::with_capacity(4096);
    let mut kept = (String::new(), false);
    out.write_all(b"{\"Records\":[")?;
    let start_ms: i64 = 1_714_000_000_000;
    for i in 0..records {
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
        let mut time = start_ms + i as i64 * 90;
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

/// Compresses `from` into `to` at flate2's fast level, streaming. The file is synced, so
/// writing it back does not compete with the measured runs.
fn gzip(from: &Path, to: &Path) -> io::Result<()> {
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
fn write_record(r: &mut String, rng: &mut Rng, shape: Shape, time_ms: i64) {
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

fn write_identity(r: &mut String, rng: &mut Rng, actor: Actor, account: &str) {
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

fn write_agent(r: &mut String, rng: &mut Rng, actor: Actor, service: &Service, event_name: &str) {
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
fn kebab(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().filter(char::is_ascii_alphabetic).enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

fn write_id(r: &mut String, rng: &mut Rng, service: &Service) {
    r.push_str(service.id_prefix);
    rng.hex(r, 12);
}

/// Request parameters: an identifier, then filters or settings of varying size.
fn write_parameters(r: &mut String, rng: &mut Rng, service: &Service, write: bool) {
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
fn write_response(r: &mut String, rng: &mut Rng, service: &Service) {
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
