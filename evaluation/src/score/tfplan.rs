//! The Terraform oracle's own runner of `terraform plan`, apart from the reconciler's
//! validator, so the judge shares no code with the system it judges.
//!
//! For each patched project it makes a scratch copy, writes the observed state there as a local
//! state file, and an override file that sets the backend to that file, tells every root
//! `provider "aws"` block to skip the credential and account checks (the plan never reaches
//! AWS: dummy keys go in the child's environment) and gives the parts a person must decide
//! (flagged or ignored) to Terraform as `ignore_changes`. Then `terraform plan -refresh=false
//! -json` (Terraform's machine-readable UI: its diagnostics and planned changes), and when the
//! plan changes something not excused whole, `terraform show -json` of the saved plan for the
//! changed attributes of each resource.
//!
//! Whether the provider can import a resource type is asked of Terraform too
//! ([`Terraform::importable`]): a plan of an `import` block for the type alone, every AWS
//! endpoint on a closed loopback port. The provider refuses a type it cannot import ("resource
//! TYPE doesn't support import") before any call; for another type the import goes on and
//! fails on the probe's id or at the closed port.
//!
//! The AWS provider comes from a plugin directory, offline (`terraform init -plugin-dir`):
//! `TF_PLUGIN_DIR`, Terraform's implied local mirror directories, or a directory under `/opt`.
//! `terraform init` runs once per fixture project; its working directory (`.terraform` and the
//! lock file) is linked into each later copy of that project, and a copy whose patch needs
//! another init (a new module) is initialised in place. Plans of projects with one AWS
//! provider configuration attach to one provider kept running ([`super::provider`]) when the
//! plugin directory holds a single version of it.

use super::provider::{self, Provider};
use reconciler::terraform::state::{Instance, State, tfstate_json};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

/// The AWS provider's path under a plugin directory, for Terraform and for OpenTofu.
const AWS_PROVIDERS: [&str; 2] = [
    "registry.terraform.io/hashicorp/aws",
    "registry.opentofu.org/hashicorp/aws",
];

/// The override file written into the copy.
const OVERRIDE_FILE: &str = "retrace_oracle_override.tf";

/// The dependency lock file `terraform init` writes.
const LOCK_FILE: &str = ".terraform.lock.hcl";

/// The saved plan.
const PLAN_FILE: &str = "oracle.tfplan";

/// The import probe's provider: dummy keys (from [`Terraform::run`]), no account or metadata
/// look-up, one attempt per call.
const PROBE_PROVIDER: &str = "terraform {\n  required_providers {\n    aws = { source = \"hashicorp/aws\" }\n  }\n}\n\nprovider \"aws\" {\n  region                      = \"us-east-1\"\n  skip_credentials_validation = true\n  skip_requesting_account_id  = true\n  skip_metadata_api_check     = true\n  skip_region_validation      = true\n  max_retries                 = 1\n}\n";

/// What a planned value reads as when Terraform knows it only after apply.
pub const UNKNOWN: &str = "(known after apply)";

/// Summaries of the diagnostics that ask for `terraform init` (again).
const NEEDS_INIT: [&str; 5] = [
    "Module not installed",
    "Module source has changed",
    "Required plugins are not installed",
    "Inconsistent dependency lock file",
    "Backend initialization required",
];

/// Words of a diagnostic raised because the offline plan had to call AWS.
const NEEDED_THE_CLOUD: [&str; 5] = [
    "no valid credential",
    "reading ",
    "dial tcp",
    "lookup ",
    "operation error",
];

/// `terraform` (or `tofu`) with the AWS provider, ready to plan patched projects.
#[derive(Debug)]
pub struct Terraform {
    /// `terraform` or `tofu`.
    binary: &'static str,
    /// The plugin directory holding the AWS provider.
    plugins: PathBuf,
    /// One initialised working directory per project (`PROJECT/.terraform`, its lock file).
    inits: tempfile::TempDir,
    /// The provider's executable, when plans may share one running provider.
    provider_binary: Option<PathBuf>,
    /// The running provider plans attach to; held for the whole of a plan, so no two plans
    /// configure it at once.
    provider: Mutex<Option<Provider>>,
}

/// One patched project to plan.
#[derive(Debug)]
pub struct Job<'a> {
    /// The fixture project it is a copy of: copies of one project share one `terraform init`.
    pub project: &'a str,
    /// The patched project.
    pub dir: &'a Path,
    /// The state Terraform plans against (written as the copy's local state).
    pub state: &'a State,
    /// The parts a person must decide: (address, top-level attribute; empty for the whole).
    pub excused: &'a [(String, String)],
    /// Objects the drift created whose type the provider cannot import: a planned create
    /// that makes one of them (each planned value known now equal to the object's) is what
    /// the patch must do, and not a change. Each stands for one create.
    pub creates: &'a [Instance],
}

/// What the plan said.
#[derive(Debug, Clone, PartialEq)]
pub enum Planned {
    /// Nothing to change outside the excused parts.
    Clean,
    /// The changes the plan makes, outside the excused parts (none when every change was
    /// excused by attribute).
    Changes(Vec<Change>),
    /// The configuration is not valid: Terraform's error diagnostics.
    Invalid(String),
}

/// One change a plan makes.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The instance address.
    pub address: String,
    /// The top-level attribute; empty when the whole resource is created, deleted or
    /// changed with no visible value.
    pub attribute: String,
    /// The planned value (from the code).
    pub planned: Value,
    /// The value in the state (from the cloud).
    pub current: Value,
}

impl Terraform {
    /// The binary on `PATH` and the plugin directory holding the AWS provider, or why there
    /// is none.
    pub fn find() -> Result<Terraform, String> {
        let binary = ["terraform", "tofu"]
            .into_iter()
            .find(|name| runs(name))
            .ok_or("neither terraform nor tofu is on PATH")?;
        let plugins = plugin_dirs()
            .into_iter()
            .find(|dir| AWS_PROVIDERS.iter().any(|p| dir.join(p).is_dir()))
            .ok_or(
                "no AWS provider found: name a plugin directory holding it with TF_PLUGIN_DIR",
            )?;
        let inits = tempfile::tempdir().map_err(|e| {
            format!("no temporary directory for terraform's working directories: {e}")
        })?;
        Ok(Terraform {
            binary,
            provider_binary: provider::binary(&plugins, &AWS_PROVIDERS),
            plugins,
            inits,
            provider: Mutex::new(None),
        })
    }

    /// Plans the job's project against its state; `Err` when Terraform could not judge.
    pub fn plan(&self, job: &Job<'_>) -> Result<Planned, String> {
        let lines = tf_lines(job.dir);
        if reads_aws_data_sources(&lines) {
            return Err(
                "terraform cannot judge this project: the configuration reads AWS data \
                        sources, which an offline plan cannot answer"
                    .into(),
            );
        }
        let scratch = tempfile::tempdir().map_err(|e| format!("no scratch directory: {e}"))?;
        let work = scratch.path();
        let shares = aws_configurations(&lines) <= 1;
        prepare(job, work).map_err(|e| format!("cannot prepare a scratch copy: {e}"))?;
        self.working_directory(job.project, work)?;
        let mut provider = self.provider.lock().unwrap_or_else(|e| e.into_inner());
        if shares {
            self.attach(&mut provider);
        } else {
            *provider = None;
        }
        let out = format!("-out={PLAN_FILE}");
        let mut output = self.attached(work, &plan_args(&out), &mut provider)?;
        let mut stream = Stream::read(&output.stdout);
        if stream.needs_init() {
            // The patch changed what init reads (a new module): this copy gets its own.
            std::fs::remove_file(work.join(".terraform")).map_err(|e| e.to_string())?;
            self.init(work)?;
            output = self.attached(work, &plan_args(&out), &mut provider)?;
            stream = Stream::read(&output.stdout);
        }
        match output.status.code() {
            Some(0) => Ok(Planned::Clean),
            Some(2) if stream.only_excused(job.excused) => Ok(Planned::Clean),
            Some(2) => {
                let shown = self.attached(work, &["show", "-json", PLAN_FILE], &mut provider)?;
                let plan: Value = serde_json::from_slice(&shown.stdout)
                    .map_err(|e| format!("{} show -json: {e}", self.binary))?;
                Ok(Planned::Changes(changes(&plan, job.excused, job.creates)))
            }
            _ => stream.invalid(self.binary).map(Planned::Invalid),
        }
    }

    /// Starts the shared provider when there is none running (nothing when the plugin
    /// directory does not allow one, or it fails to start: plans then start their own).
    fn attach(&self, provider: &mut Option<Provider>) {
        if provider.as_mut().is_some_and(Provider::running) {
            return;
        }
        *provider = None;
        let Some(binary) = &self.provider_binary else {
            return;
        };
        match Provider::start(binary, |command| {
            environment(command);
            command.current_dir(self.inits.path());
        }) {
            Ok(started) => *provider = Some(started),
            Err(why) => tracing::warn!("each plan starts its own AWS provider: {why}"),
        }
    }

    /// Runs the binary attached to `provider` when there is one; when the provider died
    /// during the command, the command runs again with a provider of its own.
    fn attached(
        &self,
        work: &Path,
        args: &[&str],
        provider: &mut Option<Provider>,
    ) -> Result<Output, String> {
        let Some(running) = provider.as_mut() else {
            return self.run(work, args);
        };
        let output = self.run_env(work, args, &[("TF_REATTACH_PROVIDERS", running.reattach())])?;
        if running.running() {
            return Ok(output);
        }
        *provider = None;
        self.run(work, args)
    }

    /// Gives the copy at `work` the project's initialised working directory, linked in
    /// (initialised in this copy and kept the first time).
    fn working_directory(&self, project: &str, work: &Path) -> Result<(), String> {
        let kept = self.inits.path().join(project);
        if !kept.is_dir() {
            self.init(work)?;
            keep(work, &kept)
                .map_err(|e| format!("cannot keep terraform's working directory: {e}"))?;
        }
        link(&kept, work).map_err(|e| format!("cannot link terraform's working directory: {e}"))
    }

    /// `terraform init` in `work`, the AWS provider from the plugin directory.
    fn init(&self, work: &Path) -> Result<(), String> {
        let plugin_dir = format!("-plugin-dir={}", self.plugins.display());
        let output = self.run(work, &["init", "-input=false", "-no-color", &plugin_dir])?;
        if output.status.success() {
            return Ok(());
        }
        Err(format!(
            "{} init failed: {}",
            self.binary,
            first_error(&output)
        ))
    }

    /// Whether the AWS provider can import `resource_type`: see the module documentation.
    /// `Err` when the probe ends neither way.
    pub fn importable(&self, resource_type: &str) -> Result<bool, String> {
        if resource_type.is_empty()
            || !resource_type
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(format!("`{resource_type}` is not a resource type"));
        }
        let dir = self.inits.path().join("import-probe");
        let io = |e: std::io::Error| format!("cannot prepare the import probe: {e}");
        if !dir.join(".terraform").is_dir() {
            std::fs::create_dir_all(&dir).map_err(io)?;
            std::fs::write(dir.join("provider.tf"), PROBE_PROVIDER).map_err(io)?;
            self.init(&dir)?;
        }
        let import = format!("import {{\n  to = {resource_type}.probe\n  id = \"probe\"\n}}\n");
        std::fs::write(dir.join("main.tf"), import).map_err(io)?;
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(io)?;
        let endpoint = format!("http://{closed}");
        let args = [
            "plan",
            "-input=false",
            "-no-color",
            "-refresh=false",
            "-lock=false",
            "-generate-config-out=generated.tf",
        ];
        let output = self.run_env(&dir, &args, &[("AWS_ENDPOINT_URL", &endpoint)]);
        let _ = std::fs::remove_file(dir.join("generated.tf"));
        let output = output?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        if text.contains(&format!("resource {resource_type} doesn't support import")) {
            Ok(false)
        } else if text.contains(&format!("{resource_type}.probe: Preparing import")) {
            Ok(true)
        } else {
            Err(format!(
                "the import probe of {resource_type} ended neither way: {}",
                first_error(&output)
            ))
        }
    }

    /// Runs the binary in `work` with no prompts and none of the caller's extra arguments.
    fn run(&self, work: &Path, args: &[&str]) -> Result<Output, String> {
        self.run_env(work, args, &[])
    }

    /// [`Terraform::run`] with more environment variables (`TF_REATTACH_PROVIDERS` attaches
    /// it to a running provider).
    fn run_env(&self, work: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<Output, String> {
        let mut command = Command::new(self.binary);
        command
            .current_dir(work)
            .args(args)
            .env("TF_IN_AUTOMATION", "1")
            .env("TF_INPUT", "0")
            .env_remove("TF_CLI_ARGS")
            .env_remove("TF_CLI_ARGS_plan")
            .env_remove("TF_CLI_ARGS_init")
            .env_remove("TF_DATA_DIR")
            .env_remove("TF_REATTACH_PROVIDERS");
        environment(&mut command);
        command
            .envs(env.iter().copied())
            .output()
            .map_err(|e| format!("{} could not start: {e}", self.binary))
    }
}

/// The arguments of `terraform plan -refresh=false -json`, saved where `out` says
/// (`-out=FILE`).
fn plan_args(out: &str) -> [&str; 7] {
    [
        "plan",
        "-refresh=false",
        "-detailed-exitcode",
        "-input=false",
        "-lock=false",
        "-json",
        out,
    ]
}

/// What the provider reads from its environment: dummy AWS keys (the plan never reaches
/// AWS), no instance metadata, no profile, and a region when the caller sets none.
fn environment(command: &mut Command) {
    command
        .env("AWS_ACCESS_KEY_ID", "retrace-oracle")
        .env("AWS_SECRET_ACCESS_KEY", "retrace-oracle")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env_remove("AWS_PROFILE")
        .env_remove("AWS_SESSION_TOKEN");
    if std::env::var_os("AWS_REGION").is_none() && std::env::var_os("AWS_DEFAULT_REGION").is_none()
    {
        command.env("AWS_REGION", "us-east-1");
    }
}

/// Whether `name version` runs.
fn runs(name: &str) -> bool {
    Command::new(name)
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The directories that may hold the provider, in the order they are tried: `TF_PLUGIN_DIR`,
/// Terraform's implied local mirror directories, and the directories under `/opt`.
fn plugin_dirs() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::env::var_os("TF_PLUGIN_DIR")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from) {
        out.push(home.join(".terraform.d/plugins"));
        out.push(home.join(".local/share/terraform/plugins"));
    }
    out.push("/usr/local/share/terraform/plugins".into());
    out.push("/usr/share/terraform/plugins".into());
    if let Ok(entries) = std::fs::read_dir("/opt") {
        let mut under_opt: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        under_opt.sort();
        out.extend(under_opt);
    }
    out
}

/// Whether a `.tf` file of the project declares an AWS data source (an offline plan cannot
/// read it).
fn reads_aws_data_sources(lines: &[String]) -> bool {
    lines.iter().any(|l| l.starts_with("data \"aws_"))
}

/// How many `provider "aws"` blocks the project's `.tf` files hold.
fn aws_configurations(lines: &[String]) -> usize {
    lines
        .iter()
        .filter(|l| l.starts_with("provider \"aws\""))
        .count()
}

/// The lines of the project's `.tf` files (its modules' too), leading blanks trimmed, read
/// once per plan for the checks above.
fn tf_lines(dir: &Path) -> Vec<String> {
    tf_files(dir)
        .into_iter()
        .flat_map(|path| {
            std::fs::read_to_string(path)
                .unwrap_or_default()
                .lines()
                .map(|l| l.trim_start().to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The `.tf` files under `dir`, `.terraform` left out.
fn tf_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if entry.file_name() != ".terraform" {
                out.extend(tf_files(&path));
            }
        } else if path.extension().is_some_and(|e| e == "tf") {
            out.push(path);
        }
    }
    out
}

/// Copies the project into `work` and writes the state and the override file there.
fn prepare(job: &Job<'_>, work: &Path) -> std::io::Result<()> {
    crate::files::copy_project(job.dir, work)?;
    let mut state = tfstate_json(job.state);
    // Terraform refuses a state written by a newer version than its own; the content is the
    // same for any 1.x.
    state["terraform_version"] = Value::String("1.5.0".into());
    std::fs::write(work.join("terraform.tfstate"), state.to_string())?;
    let blocks = root_blocks(work);
    let text = format!(
        "{}{}",
        offline_settings(&blocks),
        ignore_excused(&blocks, job.excused)
    );
    std::fs::write(work.join(OVERRIDE_FILE), text)
}

/// The blocks of the root module's primary `.tf` files (override files left out), in file
/// name order.
fn root_blocks(dir: &Path) -> Vec<hcl::Block> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    let primary = |p: &PathBuf| {
        let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned());
        p.extension().is_some_and(|e| e == "tf")
            && stem.is_some_and(|s| s != "override" && !s.ends_with("_override"))
    };
    paths
        .iter()
        .filter(|p| primary(p))
        .filter_map(|p| hcl::parse(&std::fs::read_to_string(p).ok()?).ok())
        .flat_map(|body| body.into_blocks())
        .collect()
}

/// The backend set to the local state file, and each root `provider "aws"` block (by its
/// alias) told to skip the checks that call AWS.
fn offline_settings(blocks: &[hcl::Block]) -> String {
    let mut text = String::from(
        "terraform {\n  backend \"local\" {\n    path = \"terraform.tfstate\"\n  }\n}\n",
    );
    let mut aliases: Vec<Option<String>> = Vec::new();
    for block in blocks.iter().filter(|b| {
        b.identifier() == "provider" && b.labels().first().is_some_and(|l| l.as_str() == "aws")
    }) {
        let alias = block
            .body()
            .attributes()
            .find(|a| a.key() == "alias")
            .and_then(|a| match a.expr() {
                hcl::Expression::String(s) => Some(s.clone()),
                _ => None,
            });
        if !aliases.contains(&alias) {
            aliases.push(alias);
        }
    }
    for alias in aliases {
        text.push_str("\nprovider \"aws\" {\n");
        if let Some(alias) = alias {
            text.push_str(&format!("  alias = \"{alias}\"\n"));
        }
        text.push_str(
            "  skip_credentials_validation = true\n  skip_requesting_account_id = true\n  \
             skip_metadata_api_check = true\n}\n",
        );
    }
    text
}

/// `ignore_changes` for the excused parts of root resources written once (an address with no
/// instance key: `ignore_changes` holds for every instance of a block) whose block sets none
/// of its own; the other excused parts are left out when the plan is read.
fn ignore_excused(blocks: &[hcl::Block], excused: &[(String, String)]) -> String {
    let plain = |s: &str| {
        !s.is_empty()
            && !s.starts_with(|c: char| c.is_ascii_digit())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    let mut ignored: BTreeMap<(&str, &str), Vec<&str>> = BTreeMap::new();
    for (address, attribute) in excused {
        let Some((kind, name)) = address.split_once('.') else {
            continue;
        };
        if kind != "module"
            && kind != "data"
            && plain(name)
            && (attribute.is_empty() || plain(attribute))
        {
            ignored.entry((kind, name)).or_default().push(attribute);
        }
    }
    let mut text = String::new();
    for ((kind, name), mut attributes) in ignored {
        let block = blocks.iter().find(|b| {
            b.identifier() == "resource" && b.labels().iter().map(|l| l.as_str()).eq([kind, name])
        });
        let sets_its_own = |b: &hcl::Block| {
            b.body()
                .blocks()
                .filter(|l| l.identifier() == "lifecycle")
                .any(|l| l.body().attributes().any(|a| a.key() == "ignore_changes"))
        };
        if block.is_none_or(sets_its_own) {
            continue;
        }
        let list = if attributes.contains(&"") {
            "all".to_owned()
        } else {
            attributes.sort_unstable();
            attributes.dedup();
            format!("[{}]", attributes.join(", "))
        };
        text.push_str(&format!(
            "\nresource \"{kind}\" \"{name}\" {{\n  lifecycle {{\n    ignore_changes = {list}\n  }}\n}}\n"
        ));
    }
    text
}

/// Moves the copy's `.terraform` and lock file to `kept`.
fn keep(work: &Path, kept: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(kept)?;
    std::fs::rename(work.join(".terraform"), kept.join(".terraform"))?;
    if work.join(LOCK_FILE).is_file() {
        std::fs::copy(work.join(LOCK_FILE), kept.join(LOCK_FILE))?;
    }
    Ok(())
}

/// Links the kept `.terraform` into the copy and gives it the kept lock file when it has none.
fn link(kept: &Path, work: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(kept.join(".terraform"), work.join(".terraform"))?;
    if !work.join(LOCK_FILE).exists() && kept.join(LOCK_FILE).is_file() {
        std::fs::copy(kept.join(LOCK_FILE), work.join(LOCK_FILE))?;
    }
    Ok(())
}

/// The first `Error:` paragraph of a command's output, or its last lines.
fn first_error(output: &Output) -> String {
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    );
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.trim_start_matches(['│', '╷', '╵', ' ']).trim())
        .filter(|l| !l.is_empty())
        .collect();
    let picked: Vec<&str> = match lines.iter().position(|l| l.starts_with("Error:")) {
        Some(at) => lines[at..].iter().take(4).copied().collect(),
        None => lines.iter().rev().take(3).rev().copied().collect(),
    };
    picked.join(" ")
}

/// What `plan -json` printed: its error diagnostics and planned changes.
#[derive(Debug, Default, PartialEq)]
struct Stream {
    /// Each error as `file:line: summary detail`.
    errors: Vec<String>,
    /// (instance address, action) of each planned change.
    changes: Vec<(String, String)>,
}

impl Stream {
    /// Reads the JSON lines of the output; other lines are skipped.
    fn read(stdout: &[u8]) -> Stream {
        let mut out = Stream::default();
        for line in String::from_utf8_lossy(stdout).lines() {
            let Ok(message) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            match message["type"].as_str() {
                Some("diagnostic") if message["diagnostic"]["severity"] == "error" => {
                    out.errors.push(diagnostic(&message["diagnostic"]));
                }
                Some("planned_change") => {
                    let change = &message["change"];
                    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
                    out.changes
                        .push((text(&change["resource"]["addr"]), text(&change["action"])));
                }
                _ => {}
            }
        }
        out
    }

    /// Whether Terraform asked for `terraform init`.
    fn needs_init(&self) -> bool {
        self.errors
            .iter()
            .any(|e| NEEDS_INIT.iter().any(|m| e.contains(m)))
    }

    /// Whether every planned change changes nothing (a read, a move, an import of what the
    /// state holds) or lies on an instance excused whole.
    fn only_excused(&self, excused: &[(String, String)]) -> bool {
        self.changes.iter().all(|(address, action)| {
            matches!(action.as_str(), "noop" | "read" | "move" | "import")
                || excused
                    .iter()
                    .any(|(a, attribute)| a == address && attribute.is_empty())
        })
    }

    /// A failed plan: the diagnostics when the configuration is not valid, `Err` when the plan
    /// could not judge (it needed the cloud, or said nothing).
    fn invalid(&self, binary: &str) -> Result<String, String> {
        let all = self.errors.join("; ");
        if self.errors.is_empty() {
            Err(format!("{binary} plan failed without a diagnostic"))
        } else if NEEDED_THE_CLOUD.iter().any(|m| all.contains(m)) {
            Err(format!("the plan needed the cloud: {all}"))
        } else {
            Ok(format!("{binary} plan: {all}"))
        }
    }
}

/// One diagnostic as `file:line: summary detail`.
fn diagnostic(d: &Value) -> String {
    let at = d["range"]["filename"].as_str().map_or(String::new(), |f| {
        format!("{f}:{}: ", d["range"]["start"]["line"])
    });
    let text = |k: &str| d[k].as_str().unwrap_or_default().to_owned();
    format!("{at}{} {}", text("summary"), text("detail"))
        .trim()
        .to_owned()
}

/// The changes of a saved plan (`show -json`'s `resource_changes`), leaving out the no-ops,
/// reads, the excused parts and the creates that make one of `creates` each.
fn changes(plan: &Value, excused: &[(String, String)], creates: &[Instance]) -> Vec<Change> {
    let mut out = Vec::new();
    let mut to_make: Vec<&Instance> = creates.iter().collect();
    for change in plan["resource_changes"].as_array().into_iter().flatten() {
        let actions = &change["change"]["actions"];
        if *actions == serde_json::json!(["no-op"]) || *actions == serde_json::json!(["read"]) {
            continue;
        }
        if *actions == serde_json::json!(["create"])
            && let Some(at) = to_make.iter().position(|object| makes(change, object))
        {
            to_make.remove(at);
            continue;
        }
        let address = change["address"].as_str().unwrap_or_default();
        let excuses = |attribute: &str| excused.iter().any(|(a, x)| a == address && x == attribute);
        if excuses("") {
            continue;
        }
        let mut changed = attributes(&change["change"]);
        if changed.is_empty() {
            // Equal values with other sensitivity marks or private data: still a change.
            let words: Vec<&str> = actions
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let what = format!("{} with no visible value change", words.join(", "));
            changed.push((String::new(), Value::String(what), Value::Null));
        }
        out.extend(
            changed
                .into_iter()
                .filter(|(attribute, _, _)| {
                    !excuses(attribute.split('.').next().unwrap_or_default())
                })
                .map(|(attribute, planned, current)| Change {
                    address: address.to_owned(),
                    attribute,
                    planned,
                    current,
                }),
        );
    }
    out
}

/// The top-level attributes one planned change alters, as (name, planned, current); a
/// creation or deletion is one entry for the whole resource. Unknown planned values read as
/// [`UNKNOWN`], sensitive ones as `(sensitive)`.
fn attributes(change: &Value) -> Vec<(String, Value, Value)> {
    let (before, after) = match (change["before"].as_object(), change["after"].as_object()) {
        (None, Some(_)) => return vec![(String::new(), "(created)".into(), Value::Null)],
        (Some(_), None) => return vec![(String::new(), Value::Null, "(deleted)".into())],
        (before, after) => (
            before.cloned().unwrap_or_default(),
            after.cloned().unwrap_or_default(),
        ),
    };
    let unknown = change["after_unknown"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut names: Vec<&String> = before.keys().chain(after.keys()).collect();
    names.sort();
    names.dedup();
    let masked = |value: Value, marks: &str, name: &str| match change[marks].get(name) {
        Some(m) if marked(m) => Value::String("(sensitive)".into()),
        _ => value,
    };
    names
        .into_iter()
        .filter_map(|name| {
            let current = before.get(name).cloned().unwrap_or(Value::Null);
            let planned = match unknown.get(name) {
                Some(Value::Bool(true)) => Value::String(UNKNOWN.into()),
                _ => after.get(name).cloned().unwrap_or(Value::Null),
            };
            (planned != current).then(|| {
                (
                    name.clone(),
                    masked(planned, "after_sensitive", name),
                    masked(current, "before_sensitive", name),
                )
            })
        })
        .collect()
}

/// Whether a planned create (`resource_changes` entry) makes the cloud object: of its type,
/// every planned value known now (not null, not marked unknown anywhere inside) equal to the
/// object's, an empty value standing for an absent one.
fn makes(change: &Value, object: &Instance) -> bool {
    let empty = |v: Option<&Value>| match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Array(items)) => items.is_empty(),
        Some(Value::Object(map)) => map.is_empty(),
        Some(_) => false,
    };
    let Some(after) = change["change"]["after"].as_object() else {
        return false;
    };
    let unknown = &change["change"]["after_unknown"];
    change["type"].as_str() == Some(object.resource_type.as_str())
        && after.iter().all(|(name, planned)| {
            let cloud = object.attributes.get(name);
            planned.is_null()
                || unknown.get(name).is_some_and(marked)
                || Some(planned) == cloud
                || (empty(Some(planned)) && empty(cloud))
        })
}

/// Whether a mark (of sensitivity, or of a value unknown until apply) marks anything inside
/// (`true` somewhere).
fn marked(marks: &Value) -> bool {
    match marks {
        Value::Bool(b) => *b,
        Value::Array(items) => items.iter().any(marked),
        Value::Object(map) => map.values().any(marked),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn excused(parts: &[(&str, &str)]) -> Vec<(String, String)> {
        parts
            .iter()
            .map(|(a, x)| (a.to_string(), x.to_string()))
            .collect()
    }

    #[test]
    fn a_saved_plan_reads_as_changes_outside_the_excused_parts() {
        let plan = json!({"resource_changes": [
            {"address": "aws_s3_bucket.same", "change": {"actions": ["no-op"], "before": {"a": 1}, "after": {"a": 1}}},
            {"address": "data.aws_iam_policy_document.p", "change": {"actions": ["read"], "before": null, "after": {}}},
            {"address": "aws_sqs_queue.new", "change": {"actions": ["create"], "before": null, "after": {"name": "q"}}},
            {"address": "aws_sqs_queue.old", "change": {"actions": ["delete"], "before": {"name": "o"}, "after": null}},
            {"address": "aws_lb.web", "change": {"actions": ["update"],
                "before": {"idle_timeout": 120, "arn": "a", "name": "web", "secret": "x"},
                "after": {"idle_timeout": 60, "arn": null, "name": "web", "secret": "y"},
                "after_unknown": {"arn": true},
                "before_sensitive": {"secret": true}, "after_sensitive": {"secret": true}}},
            {"address": "aws_db_instance.db", "change": {"actions": ["update"], "before": {"password": "p"}, "after": {"password": "p"}}},
            {"address": "aws_security_group.web", "change": {"actions": ["update"],
                "before": {"ingress": [1], "description": "a"}, "after": {"ingress": [2], "description": "b"}}},
            {"address": "aws_autoscaling_group.web", "change": {"actions": ["update"], "before": {"desired_capacity": 2}, "after": {"desired_capacity": 3}}}
        ]});
        let excused = excused(&[
            ("aws_security_group.web", "ingress"),
            ("aws_autoscaling_group.web", ""),
        ]);
        let change = |address: &str, attribute: &str, planned: Value, current: Value| Change {
            address: address.into(),
            attribute: attribute.into(),
            planned,
            current,
        };
        assert_eq!(
            changes(&plan, &excused, &[]),
            vec![
                change("aws_sqs_queue.new", "", json!("(created)"), Value::Null),
                change("aws_sqs_queue.old", "", Value::Null, json!("(deleted)")),
                change("aws_lb.web", "arn", json!(UNKNOWN), json!("a")),
                change("aws_lb.web", "idle_timeout", json!(60), json!(120)),
                change(
                    "aws_lb.web",
                    "secret",
                    json!("(sensitive)"),
                    json!("(sensitive)")
                ),
                change(
                    "aws_db_instance.db",
                    "",
                    json!("update with no visible value change"),
                    Value::Null
                ),
                change(
                    "aws_security_group.web",
                    "description",
                    json!("b"),
                    json!("a")
                ),
            ]
        );
    }

    #[test]
    fn the_override_skips_aws_checks_per_alias_and_ignores_excused_parts_of_plain_root_blocks() {
        let blocks = hcl::parse(
            r#"
provider "aws" { region = "eu-west-1" }
provider "aws" {
  alias  = "replica"
  region = "us-east-1"
}
provider "random" {}
resource "aws_security_group" "web" {}
resource "aws_sqs_queue" "jobs" {}
resource "aws_lb" "web" {
  lifecycle { ignore_changes = [tags] }
}
"#,
        )
        .expect("parses")
        .into_blocks()
        .collect::<Vec<_>>();
        let settings = offline_settings(&blocks);
        assert!(settings.starts_with("terraform {\n  backend \"local\""));
        assert_eq!(
            settings
                .matches("skip_credentials_validation = true")
                .count(),
            2
        );
        assert!(settings.contains("alias = \"replica\""));

        let excused = excused(&[
            ("aws_security_group.web", "ingress"),
            ("aws_security_group.web", "egress"),
            ("aws_security_group.web", "ingress"),
            ("aws_sqs_queue.jobs", ""),
            ("aws_sqs_queue.jobs", "delay_seconds"),
            // sets its own ignore_changes
            ("aws_lb.web", "tags"),
            // an instance key, a module's resource, a block not in the root: left to reading
            ("aws_instance.app[0]", "instance_type"),
            ("module.net.aws_vpc.main", "cidr_block"),
            ("aws_autoscaling_group.web", ""),
        ]);
        assert_eq!(
            ignore_excused(&blocks, &excused),
            "\nresource \"aws_security_group\" \"web\" {\n  lifecycle {\n    ignore_changes = [egress, ingress]\n  }\n}\n\
             \nresource \"aws_sqs_queue\" \"jobs\" {\n  lifecycle {\n    ignore_changes = all\n  }\n}\n"
        );
    }

    #[test]
    fn the_plan_stream_gives_errors_changes_and_whether_init_is_needed() {
        let stream = Stream::read(
            br#"{"type":"version","terraform":"1.11.4"}
{"type":"diagnostic","diagnostic":{"severity":"error","summary":"Unsupported argument","detail":"An argument named \"nam\" is not expected here.","range":{"filename":"main.tf","start":{"line":3}}}}
{"type":"diagnostic","diagnostic":{"severity":"warning","summary":"Deprecated","detail":"x"}}
not json
{"type":"planned_change","change":{"resource":{"addr":"aws_sqs_queue.q"},"action":"update"}}
{"type":"planned_change","change":{"resource":{"addr":"aws_vpc.main"},"action":"import"}}
"#,
        );
        assert_eq!(
            stream.errors,
            vec!["main.tf:3: Unsupported argument An argument named \"nam\" is not expected here."]
        );
        assert!(!stream.needs_init());
        assert_eq!(
            stream.invalid("terraform"),
            Ok(
                "terraform plan: main.tf:3: Unsupported argument An argument named \"nam\" is not expected here."
                    .into()
            )
        );
        assert!(!stream.only_excused(&[]));
        assert!(stream.only_excused(&excused(&[("aws_sqs_queue.q", "")])));
        assert!(!stream.only_excused(&excused(&[("aws_sqs_queue.q", "delay_seconds")])));

        let init = Stream::read(
            br#"{"type":"diagnostic","diagnostic":{"severity":"error","summary":"Module not installed","detail":"Run terraform init."}}"#,
        );
        assert!(init.needs_init());
        let cloud = Stream::read(
            br#"{"type":"diagnostic","diagnostic":{"severity":"error","summary":"reading EC2 AMIs","detail":"operation error EC2"}}"#,
        );
        assert_eq!(
            cloud.invalid("terraform"),
            Err("the plan needed the cloud: reading EC2 AMIs operation error EC2".into())
        );
        assert_eq!(
            Stream::default().invalid("tofu"),
            Err("tofu plan failed without a diagnostic".into())
        );
    }

    #[test]
    fn data_sources_are_found_in_modules_too() {
        let temp = tempfile::tempdir().expect("a temporary directory");
        std::fs::create_dir_all(temp.path().join("modules/m")).expect("dirs");
        std::fs::write(
            temp.path().join("main.tf"),
            "resource \"aws_vpc\" \"v\" {}\n",
        )
        .expect("write");
        assert!(!reads_aws_data_sources(&tf_lines(temp.path())));
        std::fs::write(
            temp.path().join("modules/m/main.tf"),
            "  data \"aws_caller_identity\" \"me\" {}\n",
        )
        .expect("write");
        assert!(reads_aws_data_sources(&tf_lines(temp.path())));
    }

    #[test]
    fn aws_provider_configurations_are_counted_in_modules_too() {
        let temp = tempfile::tempdir().expect("a temporary directory");
        std::fs::create_dir_all(temp.path().join("modules/m/.terraform")).expect("dirs");
        std::fs::write(
            temp.path().join("versions.tf"),
            "provider \"aws\" {\n  region = \"eu-west-1\"\n}\nprovider \"awscc\" {}\n",
        )
        .expect("write");
        std::fs::write(
            temp.path().join("modules/m/.terraform/x.tf"),
            "provider \"aws\" {}\n",
        )
        .expect("write");
        assert_eq!(aws_configurations(&tf_lines(temp.path())), 1);
        std::fs::write(
            temp.path().join("modules/m/main.tf"),
            "  provider \"aws\" {\n    alias = \"replica\"\n  }\n",
        )
        .expect("write");
        assert_eq!(aws_configurations(&tf_lines(temp.path())), 2);
    }

    /// Worked out by hand: of three planned attachments, the first makes the created object
    /// (the id is known only after apply, the zone unset on both sides), the second sets
    /// another port, and the third would make the object the first already made.
    #[test]
    fn a_create_that_makes_a_created_object_is_no_change() {
        let state = State::parse(
            json!({"version": 4, "terraform_version": "1.11.4", "serial": 1, "lineage": "l",
                "resources": [{"mode": "managed", "type": "aws_lb_target_group_attachment",
                    "name": "t", "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
                    "instances": [{"schema_version": 0, "attributes": {"id": "tg-1",
                        "target_group_arn": "tg", "target_id": "10.0.1.15", "port": 9443,
                        "availability_zone": ""}}]}]})
            .to_string()
            .as_bytes(),
            "test",
        )
        .expect("state");
        let create = |name: &str, port: u64| {
            json!({"address": name, "type": "aws_lb_target_group_attachment",
                "change": {"actions": ["create"], "before": null,
                    "after": {"id": null, "target_group_arn": "tg", "target_id": "10.0.1.15",
                              "port": port, "availability_zone": null},
                    "after_unknown": {"id": true}}})
        };
        let plan = json!({"resource_changes": [
            create("aws_lb_target_group_attachment.a", 9443),
            create("aws_lb_target_group_attachment.b", 80),
            create("aws_lb_target_group_attachment.c", 9443)
        ]});
        let made = |address: &str| Change {
            address: address.into(),
            attribute: String::new(),
            planned: json!("(created)"),
            current: Value::Null,
        };
        assert_eq!(
            changes(&plan, &[], &state.instances),
            vec![
                made("aws_lb_target_group_attachment.b"),
                made("aws_lb_target_group_attachment.c")
            ]
        );
        assert_eq!(changes(&plan, &[], &[]).len(), 3);
    }

    /// The real Terraform says the provider cannot import a target group attachment ("resource
    /// aws_lb_target_group_attachment doesn't support import") and can import a queue.
    #[test]
    fn terraform_says_which_types_the_provider_can_import() {
        let terraform = match Terraform::find() {
            Ok(terraform) => terraform,
            Err(why) if std::env::var("CI").as_deref() != Ok("true") => {
                eprintln!("skipped: {why}");
                return;
            }
            Err(why) => panic!("{why}"),
        };
        assert_eq!(
            terraform.importable("aws_lb_target_group_attachment"),
            Ok(false)
        );
        assert_eq!(terraform.importable("aws_sqs_queue"), Ok(true));
        assert!(terraform.importable("aws_x\"}").is_err());
    }

    /// A queue whose code says `delay_seconds = 5` while the cloud has 0, planned by the real
    /// Terraform: the change, then excused (the second copy reuses the first one's init), then
    /// with a new module call (which needs an init of its own).
    #[test]
    fn terraform_plans_a_project_against_a_state() {
        let terraform = match Terraform::find() {
            Ok(terraform) => terraform,
            Err(why) if std::env::var("CI").as_deref() != Ok("true") => {
                eprintln!("skipped: {why}");
                return;
            }
            Err(why) => panic!("{why}"),
        };
        let temp = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(
            temp.path().join("main.tf"),
            r#"terraform {
  required_providers {
    aws = { source = "hashicorp/aws" }
  }
}
provider "aws" { region = "eu-west-1" }
resource "aws_sqs_queue" "jobs" {
  name          = "jobs"
  delay_seconds = 5
}
"#,
        )
        .expect("write");
        let url = "https://sqs.eu-west-1.amazonaws.com/111122223333/jobs";
        let mut state = State::parse(
            json!({"version": 4, "terraform_version": "1.11.4", "serial": 1, "lineage": "l",
                "resources": [{"mode": "managed", "type": "aws_sqs_queue", "name": "jobs",
                    "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
                    "instances": [{"schema_version": 0, "attributes": {
                        "id": url, "url": url, "name": "jobs", "name_prefix": "",
                        "arn": "arn:aws:sqs:eu-west-1:111122223333:jobs",
                        "delay_seconds": 0, "fifo_queue": false,
                        "content_based_deduplication": false, "deduplication_scope": "",
                        "fifo_throughput_limit": "", "kms_data_key_reuse_period_seconds": 300,
                        "max_message_size": 262144, "message_retention_seconds": 345600,
                        "receive_wait_time_seconds": 0, "visibility_timeout_seconds": 30,
                        "policy": "", "redrive_policy": "", "redrive_allow_policy": "",
                        "sqs_managed_sse_enabled": true, "tags_all": {}}}]}]})
            .to_string()
            .as_bytes(),
            "test",
        )
        .expect("state");
        let schema = knowledge::schema::ProviderSchema::bundled().expect("schema");
        reconciler::terraform::state::complete(&mut state, schema);
        let job = |excused| Job {
            project: "queue",
            dir: temp.path(),
            state: &state,
            excused,
            creates: &[],
        };
        let planned = terraform.plan(&job(&[])).expect("planned");
        if terraform.provider_binary.is_some() {
            let mut provider = terraform.provider.lock().expect("the provider's lock");
            assert!(
                provider.as_mut().is_some_and(Provider::running),
                "the plan left its provider running for the next"
            );
        }
        let Planned::Changes(changes) = planned else {
            panic!("{planned:?}");
        };
        assert_eq!(
            changes,
            vec![Change {
                address: "aws_sqs_queue.jobs".into(),
                attribute: "delay_seconds".into(),
                planned: json!(5),
                current: json!(0),
            }]
        );
        let delay = excused(&[("aws_sqs_queue.jobs", "delay_seconds")]);
        assert_eq!(terraform.plan(&job(&delay)), Ok(Planned::Clean));
        // A patch that calls a new module needs its own init.
        std::fs::create_dir_all(temp.path().join("modules/extra")).expect("dirs");
        std::fs::write(
            temp.path().join("modules/extra/main.tf"),
            "variable \"x\" {\n  default = 1\n}\n",
        )
        .expect("write");
        let mut main = std::fs::read_to_string(temp.path().join("main.tf")).expect("read");
        main.push_str("module \"extra\" {\n  source = \"./modules/extra\"\n}\n");
        std::fs::write(temp.path().join("main.tf"), main).expect("write");
        assert_eq!(terraform.plan(&job(&delay)), Ok(Planned::Clean));
    }
}
