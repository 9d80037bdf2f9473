//! The Terraform validator: the real `terraform` and the real AWS provider judge the patch.
//!
//! In a scratch copy of the patched project it writes the observed post-drift state as a local
//! state file, overrides the backend to that file, and — when no AWS credentials are configured
//! — tells each `provider "aws"` block to skip the credential and account checks (dummy keys go
//! in the child's environment only). The parts a person must decide (flagged or ignored) are
//! told to Terraform as `ignore_changes` on root resources, so a right patch plans clean.
//!
//! The working directory `terraform init` prepares is kept between runs under the cache
//! directory, keyed by what init reads (see [`workdir`]), so a warm check starts the provider
//! once: `terraform plan -refresh=false -json`, whose diagnostics are the validation's (a
//! configuration that is not valid fails the check with them). Only when the plan changes
//! something not excused whole does `terraform show -json` read the plan into the same
//! differences the built-in check reports: per touched resource, the attributes that still
//! differ; elsewhere, what the patch changed that no intent asked for.
//!
//! It is not run, with the reason, where no `terraform` (for an OpenTofu project, no `tofu`) is
//! on `PATH`, no AWS provider can be found, none meets the project's version constraints, or,
//! without credentials, the configuration reads AWS data sources (an offline plan cannot
//! answer them).

mod ui;
mod workdir;

use super::{Check, Difference, Scratch, ValidateError, Validation, Validator, scratch_copy_in};
use crate::terraform::state::{complete, tfstate_json};
use knowledge::ProviderSchema;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use ui::PlanStream;
use workdir::Workdir;

/// The AWS provider's path under a plugin directory, for Terraform and for OpenTofu.
const AWS_PROVIDERS: [&str; 2] = [
    "registry.terraform.io/hashicorp/aws",
    "registry.opentofu.org/hashicorp/aws",
];

/// The override file written into the scratch copy.
const OVERRIDE_FILE: &str = "retrace_validator_override.tf";

/// Runs the real `terraform plan` against the observed state.
#[derive(Debug, Default, Clone)]
pub struct TerraformPlan {
    /// A plugin directory given by the user (`[terraform] plugin_dir`).
    pub plugin_dir: Option<PathBuf>,
    /// The region for an implicit provider configuration (the project's first region).
    pub region: Option<String>,
    /// Where initialised working directories are kept between runs (`DIR/terraform/KEY`);
    /// `None`: a fresh one for every check.
    pub cache_dir: Option<PathBuf>,
    /// Whether to show a spinner naming the stage on standard error (only when it is a
    /// terminal).
    pub progress: bool,
    /// Held while a working directory is initialised, so a check waits for the preparation
    /// running beside it instead of initialising the same directory twice.
    initialising: Arc<Mutex<()>>,
}

/// An installed `terraform` or `tofu`: its name and the first line of its `version`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tool {
    /// The binary's name on `PATH`.
    pub name: &'static str,
    /// `Terraform v1.11.4`.
    pub version: String,
}

/// The named binary when it runs on this machine, looked for once per process.
fn installed(name: &'static str) -> Option<&'static Tool> {
    static FOUND: std::sync::OnceLock<[Option<Tool>; 2]> = std::sync::OnceLock::new();
    let found = FOUND.get_or_init(|| {
        ["terraform", "tofu"].map(|name| {
            let output = Command::new(name).arg("version").output().ok()?;
            output.status.success().then(|| Tool {
                name,
                version: String::from_utf8_lossy(&output.stdout)
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
            })
        })
    });
    found.iter().flatten().find(|tool| tool.name == name)
}

/// The `terraform` (or OpenTofu's `tofu`) binary on `PATH`, looked for once per process.
pub fn terraform_binary() -> Option<&'static str> {
    installed("terraform")
        .or_else(|| installed("tofu"))
        .map(|t| t.name)
}

/// Whether `terraform` runs on this machine.
pub fn terraform_present() -> bool {
    terraform_binary().is_some()
}

/// Whether the root module is written for OpenTofu (it has `.tofu` files, which Terraform
/// does not read).
fn is_opentofu(root: &Path) -> bool {
    std::fs::read_dir(root).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.ends_with(".tofu") || name.ends_with(".tofu.json")
        })
    })
}

/// The binary that judges the project: `tofu` for an OpenTofu project, otherwise `terraform`
/// (or `tofu` when it is the only one); the reason when none fits.
fn tool_for(root: &Path) -> Result<&'static Tool, String> {
    if is_opentofu(root) {
        return installed("tofu").ok_or_else(|| {
            "the project is written for OpenTofu (it has .tofu files, which terraform does not \
             read) and tofu is not on PATH"
                .to_owned()
        });
    }
    installed("terraform")
        .or_else(|| installed("tofu"))
        .ok_or_else(|| "neither terraform nor tofu is on PATH".to_owned())
}

/// Whether AWS credentials are configured for this process.
fn has_credentials() -> bool {
    let env = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    let shared = std::env::var_os("HOME")
        .map(|h| Path::new(&h).join(".aws/credentials"))
        .is_some_and(|p| p.is_file());
    env("AWS_ACCESS_KEY_ID") || env("AWS_PROFILE") || env("AWS_WEB_IDENTITY_TOKEN_FILE") || shared
}

/// Where the AWS provider comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Providers {
    /// The project's own initialised `.terraform/providers`.
    Initialised(PathBuf),
    /// A plugin directory holding the AWS provider.
    PluginDir(PathBuf),
}

impl Providers {
    /// The directory the provider comes from.
    fn dir(&self) -> &Path {
        match self {
            Providers::Initialised(dir) | Providers::PluginDir(dir) => dir,
        }
    }
}

/// Whether a providers directory holds the AWS provider.
fn holds_aws(dir: &Path) -> bool {
    AWS_PROVIDERS.iter().any(|p| dir.join(p).is_dir())
}

impl TerraformPlan {
    /// A validator with these settings.
    pub fn new(plugin_dir: Option<PathBuf>, region: Option<String>) -> TerraformPlan {
        TerraformPlan {
            plugin_dir,
            region,
            ..TerraformPlan::default()
        }
    }

    /// The provider plugins to use: the project's initialised ones, else the first plugin
    /// directory holding the AWS provider among the configured one, `TF_PLUGIN_DIR`,
    /// Terraform's implied local mirror directories, and directories under `/opt`.
    fn providers(&self, root: &Path) -> Option<Providers> {
        let initialised = root.join(".terraform/providers");
        if holds_aws(&initialised) {
            let absolute = initialised.canonicalize().unwrap_or(initialised);
            return Some(Providers::Initialised(absolute));
        }
        plugin_dir_candidates(self.plugin_dir.as_deref())
            .into_iter()
            .find(|dir| holds_aws(dir))
            .map(Providers::PluginDir)
    }
}

/// The directories that may hold provider plugins, in the order they are tried.
fn plugin_dir_candidates(configured: Option<&Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = configured.map(Path::to_owned).into_iter().collect();
    out.extend(std::env::var_os("TF_PLUGIN_DIR").map(PathBuf::from));
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from) {
        out.push(home.join(".terraform.d/plugins"));
        out.push(home.join(".local/share/terraform/plugins"));
    }
    out.push(PathBuf::from("/usr/local/share/terraform/plugins"));
    out.push(PathBuf::from("/usr/share/terraform/plugins"));
    if let Ok(entries) = std::fs::read_dir("/opt") {
        let mut under_opt: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        under_opt.sort();
        out.extend(under_opt);
    }
    out
}

/// Whether any `.tf` file under `root` declares an AWS data source.
fn reads_aws_data_sources(root: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(root) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() && name != ".git" && name != ".retrace" && name != "providers" {
            return reads_aws_data_sources(&path);
        }
        path.extension().is_some_and(|e| e == "tf" || e == "tofu")
            && std::fs::read_to_string(&path).is_ok_and(|text| {
                text.lines()
                    .any(|l| l.trim_start().starts_with("data \"aws_"))
            })
    })
}

impl Validator for TerraformPlan {
    fn name(&self) -> &'static str {
        "terraform-plan"
    }

    fn available(&self, root: &Path) -> Result<(), String> {
        // The file system first: no process is started when no provider is at hand.
        if self.providers(root).is_none() {
            return Err(
                "no AWS provider found: run `terraform init` in the project, or name a plugin \
                 directory with [terraform] plugin_dir or TF_PLUGIN_DIR"
                    .into(),
            );
        }
        tool_for(root)?;
        if !has_credentials() && reads_aws_data_sources(root) {
            return Err(
                "the configuration reads AWS data sources, which a plan without AWS credentials \
                 cannot answer"
                    .into(),
            );
        }
        Ok(())
    }

    fn prepare(&self, root: &Path, outside: &[String]) {
        let Some(cache) = self.cache() else { return };
        let (Ok(tool), Some(providers)) = (tool_for(root), self.providers(root)) else {
            return;
        };
        let prepared =
            scratch_copy_in(root, outside, &BTreeMap::new(), Some(&cache)).and_then(|scratch| {
                let run = self.runner(tool, scratch.path());
                ready_for_init(&run.dir, run.offline).map_err(|source| ValidateError::Scratch {
                    root: root.to_owned(),
                    source,
                })?;
                self.workdir(&run, &providers, &cache)
            });
        if let Err(error) = prepared {
            tracing::debug!(%error, "preparing terraform's working directory ahead failed");
        }
    }

    fn validate(&self, check: &Check) -> Result<Validation, ValidateError> {
        let tool = tool_for(check.root).map_err(ValidateError::Unavailable)?;
        let providers = self
            .providers(check.root)
            .ok_or_else(|| ValidateError::Unavailable("no AWS provider found".into()))?;
        let mut planned = self.plan_once(check, tool, &providers)?;
        if planned.stream.needs_init() && planned.workdir.cached_entry() {
            // Something init reads changed without changing the key: initialise afresh.
            planned.workdir.discard();
            planned = self.plan_once(check, tool, &providers)?;
        }
        let Planned {
            run,
            output,
            stream,
            _scratch,
            ..
        } = planned;
        match output.status.code() {
            Some(0) => Ok(self.verdict(true, Vec::new(), Vec::new(), "no changes".into())),
            Some(2) if stream.only_excused(check) => {
                Ok(self.verdict(true, Vec::new(), Vec::new(), EXCUSED_ONLY.into()))
            }
            Some(2) => {
                let shown = run.command(
                    "reading the plan",
                    &["show".into(), "-json".into(), "retrace.tfplan".into()],
                )?;
                let plan: Value = serde_json::from_slice(&shown.stdout).map_err(|e| {
                    ValidateError::Unavailable(format!("{} show -json: {e}", tool.name))
                })?;
                let (differences, collateral) = summarize(&plan, check);
                let passed = differences.is_empty() && collateral.is_empty();
                let note = if passed {
                    EXCUSED_ONLY.into()
                } else {
                    format!(
                        "{} difference(s) on the changed resources, {} elsewhere",
                        differences.len(),
                        collateral.len()
                    )
                };
                Ok(self.verdict(passed, differences, collateral, note))
            }
            _ => match stream.invalid(tool.name) {
                Ok(problems) => Ok(self.verdict(false, Vec::new(), Vec::new(), problems)),
                Err(reason) => Err(ValidateError::Unavailable(reason)),
            },
        }
    }
}

/// The note of a plan whose changes all lie where a person decides.
const EXCUSED_ONLY: &str = "changes only where a person must decide (flagged or ignored parts)";

/// One plan of the patched copy: the copy (kept until the plan is read), the runner, the
/// working directory and what the plan printed.
struct Planned {
    _scratch: Scratch,
    run: Runner,
    workdir: Workdir,
    output: Output,
    stream: PlanStream,
}

impl TerraformPlan {
    /// The cache directory's `terraform` folder, created when missing; `None` without one.
    fn cache(&self) -> Option<PathBuf> {
        let dir = self.cache_dir.as_ref()?.join("terraform");
        match std::fs::create_dir_all(&dir) {
            Ok(()) => Some(dir),
            Err(error) => {
                tracing::warn!(%error, dir = %dir.display(), "no cache for terraform's working directory");
                None
            }
        }
    }

    /// A runner in the copy at `dir`.
    fn runner(&self, tool: &Tool, dir: &Path) -> Runner {
        Runner {
            binary: tool.name,
            version: tool.version.clone(),
            dir: dir.to_owned(),
            offline: !has_credentials(),
            region: self.region.clone(),
            progress: self.progress,
        }
    }

    /// Copies the patched project, writes the observed state and the override, readies the
    /// working directory and plans.
    fn plan_once(
        &self,
        check: &Check,
        tool: &Tool,
        providers: &Providers,
    ) -> Result<Planned, ValidateError> {
        let cache = self.cache();
        let scratch = scratch_copy_in(check.root, check.outside, check.changed, cache.as_deref())?;
        let run = self.runner(tool, scratch.path());
        prepare(check, &run.dir, run.offline)?;
        let workdir = match &cache {
            Some(cache) => self.workdir(&run, providers, cache)?,
            None => Workdir::init_in_place(&run, providers)?,
        };
        let output = run.plan(check)?;
        let stream = PlanStream::read(&output.stdout);
        Ok(Planned {
            _scratch: scratch,
            run,
            workdir,
            output,
            stream,
        })
    }

    /// The initialised working directory for the copy `run` works in, from the cache or
    /// initialised now (one at a time in this process), linked into the copy.
    fn workdir(
        &self,
        run: &Runner,
        providers: &Providers,
        cache: &Path,
    ) -> Result<Workdir, ValidateError> {
        let _one_at_a_time = self
            .initialising
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let tool = Tool {
            name: run.binary,
            version: run.version.clone(),
        };
        let key = workdir::key(&run.dir, &tool, providers.dir());
        Workdir::cached(cache, &key, run, providers)
    }

    fn verdict(
        &self,
        passed: bool,
        differences: Vec<Difference>,
        collateral: Vec<Difference>,
        note: String,
    ) -> Validation {
        Validation {
            validator: self.name().to_owned(),
            passed,
            differences,
            collateral,
            note: Some(note),
        }
    }
}

/// Writes the observed state and the override file (with the excused parts ignored) into the
/// scratch copy.
fn prepare(check: &Check, dir: &Path, offline: bool) -> Result<(), ValidateError> {
    let fail = |source| ValidateError::Scratch {
        root: check.root.to_owned(),
        source,
    };
    // Created resources carry only what the calls said; the provider stores every attribute
    // and sensitivity mark of the type, and a plan sees any difference as a change.
    // An object the patch declares without an import is not in the state: the plan creates it.
    let mut observed = check.observed.clone();
    observed
        .instances
        .retain(|i| !check.creates.contains(&i.address));
    if let Ok(schema) = ProviderSchema::bundled() {
        complete(&mut observed, schema);
    }
    let mut state = tfstate_json(&observed);
    // A state written by a newer Terraform than the one here is refused; the content is the
    // same for any 1.x.
    state["terraform_version"] = Value::String("1.5.0".into());
    std::fs::write(dir.join("terraform.tfstate"), state.to_string()).map_err(fail)?;
    ready_for_init(dir, offline).map_err(fail)?;
    let ignored = ignore_excused(dir, check.excused);
    if !ignored.is_empty() {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join(OVERRIDE_FILE))
            .map_err(fail)?;
        std::io::Write::write_all(&mut file, ignored.as_bytes()).map_err(fail)?;
    }
    Ok(())
}

/// Writes the override file (backend and provider settings) into the scratch copy and drops
/// the project's record of its own backend, as `terraform init` must see them.
fn ready_for_init(dir: &Path, offline: bool) -> std::io::Result<()> {
    let _ = std::fs::remove_file(dir.join(".terraform/terraform.tfstate"));
    std::fs::write(dir.join(OVERRIDE_FILE), override_text(dir, offline))
}

/// The override file: the backend set to the local observed state, and for an offline run
/// each root `provider "aws"` block (by alias) told to skip the credential and account checks.
fn override_text(dir: &Path, offline: bool) -> String {
    let mut text = String::from(
        "terraform {\n  backend \"local\" {\n    path = \"terraform.tfstate\"\n  }\n}\n",
    );
    if offline {
        for alias in aws_provider_aliases(dir) {
            text.push_str("\nprovider \"aws\" {\n");
            if let Some(alias) = alias {
                text.push_str(&format!("  alias                       = \"{alias}\"\n"));
            }
            text.push_str(
                "  skip_credentials_validation = true\n  skip_requesting_account_id  = true\n  \
                 skip_metadata_api_check     = true\n}\n",
            );
        }
    }
    text
}

/// The blocks of the root module's primary configuration files (`.tf` and `.tofu`, override
/// files left out), in file name order.
fn root_blocks(dir: &Path) -> Vec<hcl::Block> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    let primary = |p: &PathBuf| {
        let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned());
        p.extension().is_some_and(|e| e == "tf" || e == "tofu")
            && stem.is_some_and(|s| s != "override" && !s.ends_with("_override"))
    };
    paths
        .iter()
        .filter(|p| primary(p))
        .filter_map(|p| hcl::parse(&std::fs::read_to_string(p).ok()?).ok())
        .flat_map(|body| body.into_blocks())
        .collect()
}

/// The aliases of the root module's `provider "aws"` blocks (`None` for the default one).
fn aws_provider_aliases(dir: &Path) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for block in root_blocks(dir).iter().filter(|b| {
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
        if !out.contains(&alias) {
            out.push(alias);
        }
    }
    out
}

/// Override blocks telling Terraform to leave the excused parts alone (`ignore_changes`), so a
/// patch that is right plans no change there. Only for resources of the root module written
/// once (no `count` or `for_each` key: `ignore_changes` holds for every instance of a block)
/// whose block is in a primary file and sets no `ignore_changes` of its own; other excused
/// parts are left out of the plan's changes when it is read.
fn ignore_excused(dir: &Path, excused: &[(String, String)]) -> String {
    let blocks = root_blocks(dir);
    let mut ignored: BTreeMap<(&str, &str), Vec<&str>> = BTreeMap::new();
    for (address, attribute) in excused {
        let Some((kind, name)) = address.split_once('.') else {
            continue;
        };
        let plain = |s: &str| {
            !s.is_empty()
                && !s.starts_with(|c: char| c.is_ascii_digit())
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        if kind == "module" || kind == "data" || !plain(name) {
            continue;
        }
        if !(attribute.is_empty() || plain(attribute)) {
            continue;
        }
        ignored.entry((kind, name)).or_default().push(attribute);
    }
    let mut text = String::new();
    for ((kind, name), attributes) in ignored {
        let block = blocks.iter().find(|b| {
            b.identifier() == "resource" && b.labels().iter().map(|l| l.as_str()).eq([kind, name])
        });
        let sets_its_own = block.is_some_and(|b| {
            b.body()
                .blocks()
                .filter(|l| l.identifier() == "lifecycle")
                .any(|l| l.body().attributes().any(|a| a.key() == "ignore_changes"))
        });
        if block.is_none() || sets_its_own {
            continue;
        }
        let list = if attributes.contains(&"") {
            "all".to_owned()
        } else {
            let mut names = attributes;
            names.sort_unstable();
            names.dedup();
            format!("[{}]", names.join(", "))
        };
        text.push_str(&format!(
            "\nresource \"{kind}\" \"{name}\" {{\n  lifecycle {{\n    ignore_changes = {list}\n  }}\n}}\n"
        ));
    }
    text
}

/// Runs `terraform` commands in the scratch copy.
struct Runner {
    /// `terraform` or `tofu`.
    binary: &'static str,
    /// The first line of its `version`.
    version: String,
    /// The scratch copy's root.
    dir: PathBuf,
    /// Whether no AWS credentials are configured (dummy keys go in the child's environment).
    offline: bool,
    /// The region for an implicit provider configuration.
    region: Option<String>,
    /// Whether to show a spinner.
    progress: bool,
}

impl Runner {
    /// Runs one command with the child environment: dummy keys and a region when offline, no
    /// colour, no prompts; `stage` names it on the spinner.
    fn command(&self, stage: &str, args: &[String]) -> Result<Output, ValidateError> {
        let mut command = Command::new(self.binary);
        command
            .current_dir(&self.dir)
            .args(args)
            .env("TF_IN_AUTOMATION", "1")
            .env("TF_INPUT", "0")
            .env_remove("TF_CLI_ARGS")
            .env_remove("TF_CLI_ARGS_plan")
            .env_remove("TF_CLI_ARGS_init")
            .env_remove("TF_DATA_DIR");
        if self.offline {
            command
                .env("AWS_ACCESS_KEY_ID", "retrace-offline")
                .env("AWS_SECRET_ACCESS_KEY", "retrace-offline")
                .env("AWS_EC2_METADATA_DISABLED", "true")
                .env_remove("AWS_PROFILE")
                .env_remove("AWS_SESSION_TOKEN");
            if std::env::var_os("AWS_REGION").is_none()
                && std::env::var_os("AWS_DEFAULT_REGION").is_none()
            {
                command.env("AWS_REGION", self.region.as_deref().unwrap_or("us-east-1"));
            }
        }
        tracing::debug!(?args, dir = %self.dir.display(), "running {}", self.binary);
        let spinner = self
            .progress
            .then(|| ui::spinner(&format!("{} {}: {stage}", self.binary, args[0])))
            .flatten();
        let output = command.output().map_err(|e| {
            ValidateError::Unavailable(format!("{} could not start: {e}", self.binary))
        });
        if let Some(spinner) = spinner {
            spinner.finish_and_clear();
        }
        output
    }

    /// `terraform init`, from the plugin directory when there is one. A provider that does
    /// not meet the version constraints, or cannot be found, makes the validator unavailable.
    fn init(&self, providers: &Providers) -> Result<(), ValidateError> {
        let mut args: Vec<String> = ["init", "-input=false", "-no-color"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        if let Providers::PluginDir(dir) = providers {
            args.push(format!("-plugin-dir={}", dir.display()));
        }
        let output = self.command("installing the provider", &args)?;
        if output.status.success() {
            return Ok(());
        }
        Err(ValidateError::Unavailable(format!(
            "{} init failed: {}",
            self.binary,
            first_error(&output)
        )))
    }

    /// `terraform plan -refresh=false -json` of the patched copy into `retrace.tfplan`: the
    /// one step that starts the provider on a warm run.
    fn plan(&self, check: &Check) -> Result<Output, ValidateError> {
        let mut args: Vec<String> = [
            "plan",
            "-refresh=false",
            "-detailed-exitcode",
            "-input=false",
            "-lock=false",
            "-json",
            "-out=retrace.tfplan",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect();
        args.extend(
            check
                .var_files
                .iter()
                .map(|f| format!("-var-file={}", check.root.join(f).display())),
        );
        self.command("checking the patch with the real provider", &args)
    }
}

/// The first `Error:` paragraph of Terraform's output, or its last lines.
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
    let start = lines.iter().position(|l| l.starts_with("Error:"));
    let picked: Vec<&str> = match start {
        Some(at) => lines[at..].iter().take(4).copied().collect(),
        None => lines.iter().rev().take(3).rev().copied().collect(),
    };
    picked.join(" ")
}

/// The plan's changes as differences: on a touched resource, the attributes the plan would
/// change (config side: the planned value, observed side: the state's), and for a create the
/// check expects, the values it would set other than the object's; on any other resource,
/// collateral. Excused parts (flagged or ignored on purpose) and no-op changes (imports of a
/// resource already in the observed state, moves) are left out; sensitive values are masked.
fn summarize(plan: &Value, check: &Check) -> (Vec<Difference>, Vec<Difference>) {
    let mut differences = Vec::new();
    let mut collateral = Vec::new();
    for change in plan["resource_changes"].as_array().into_iter().flatten() {
        let actions = &change["change"]["actions"];
        if *actions == serde_json::json!(["no-op"]) || *actions == serde_json::json!(["read"]) {
            continue;
        }
        let address = change["address"].as_str().unwrap_or_default().to_owned();
        let whole_excused = check
            .excused
            .iter()
            .any(|(a, attribute)| *a == address && attribute.is_empty());
        if whole_excused {
            continue;
        }
        let expected = expected_create(change, check);
        let mut changed = match expected {
            Some(object) => create_differences(&change["change"], object),
            None => changed_attributes(&change["change"]),
        };
        if changed.is_empty() && expected.is_none() {
            // An update whose values are all equal changes sensitivity marks or private data:
            // still a planned change.
            changed.push((
                String::new(),
                Value::String(format!(
                    "{} with no visible value change",
                    actions_text(actions)
                )),
                Value::Null,
            ));
        }
        let diffs: Vec<Difference> = changed
            .into_iter()
            .filter(|(attribute, _, _)| {
                let top = attribute.split('.').next().unwrap_or_default();
                !check
                    .excused
                    .iter()
                    .any(|(a, excused)| *a == address && excused == top)
            })
            .map(|(attribute, config, observed)| Difference {
                address: address.clone(),
                attribute,
                config,
                observed,
            })
            .collect();
        if check.touched.contains(&address) {
            differences.extend(diffs);
        } else {
            collateral.extend(diffs);
        }
    }
    (differences, collateral)
}

/// The observed object a planned create is expected to make: at an address the patch
/// declares without an import.
fn expected_create<'c>(change: &Value, check: &Check<'c>) -> Option<&'c Value> {
    let address = change["address"].as_str()?;
    if change["change"]["actions"] != serde_json::json!(["create"])
        || !check.creates.iter().any(|a| a == address)
    {
        return None;
    }
    check
        .observed
        .instances
        .iter()
        .find(|i| i.address == address)
        .map(|i| &i.attributes)
}

/// Where an expected create sets a value other than the object's: the attributes whose
/// planned value is known now (not null, not known only after apply) and differs.
fn create_differences(change: &Value, object: &Value) -> Vec<(String, Value, Value)> {
    let mut as_update = change.clone();
    as_update["before"] = object.clone();
    changed_attributes(&as_update)
        .into_iter()
        .filter(|(_, planned, _)| {
            !planned.is_null() && planned.as_str() != Some("(known after apply)")
        })
        .collect()
}

/// The planned actions as words: `update`, `delete, create`.
fn actions_text(actions: &Value) -> String {
    let words: Vec<&str> = actions
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    words.join(", ")
}

/// The top-level attributes a planned change alters: (name, planned, current). A create or a
/// delete is one entry for the whole resource. Unknown planned values read as
/// `(known after apply)`; sensitive ones as `(sensitive)`.
fn changed_attributes(change: &Value) -> Vec<(String, Value, Value)> {
    let empty = Map::new();
    let before = change["before"].as_object();
    let after = change["after"].as_object();
    match (before, after) {
        (None, Some(_)) => vec![(
            String::new(),
            Value::String("(created)".into()),
            Value::Null,
        )],
        (Some(_), None) => vec![(
            String::new(),
            Value::Null,
            Value::String("(deleted)".into()),
        )],
        (before, after) => {
            let (before, after) = (before.unwrap_or(&empty), after.unwrap_or(&empty));
            let unknown = change["after_unknown"].as_object().unwrap_or(&empty);
            let mut names: Vec<&String> = before.keys().chain(after.keys()).collect();
            names.sort();
            names.dedup();
            names
                .into_iter()
                .filter_map(|name| {
                    let is_unknown = unknown.get(name).is_some_and(|u| *u == Value::Bool(true));
                    let old = before.get(name).cloned().unwrap_or(Value::Null);
                    let new = if is_unknown {
                        Value::String("(known after apply)".into())
                    } else {
                        after.get(name).cloned().unwrap_or(Value::Null)
                    };
                    if old == new {
                        return None;
                    }
                    let sensitive =
                        |side: &str| change[side].get(name).is_some_and(marks_sensitive);
                    let mask = |v: Value, side: &str| {
                        if sensitive(side) {
                            Value::String("(sensitive)".into())
                        } else {
                            v
                        }
                    };
                    Some((
                        name.clone(),
                        mask(new, "after_sensitive"),
                        mask(old, "before_sensitive"),
                    ))
                })
                .collect()
        }
    }
}

/// Whether a `before_sensitive` / `after_sensitive` entry marks anything inside as sensitive
/// (`true` somewhere; an empty object or `false` marks nothing).
fn marks_sensitive(marks: &Value) -> bool {
    match marks {
        Value::Bool(b) => *b,
        Value::Array(items) => items.iter().any(marks_sensitive),
        Value::Object(map) => map.values().any(marks_sensitive),
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::terraform::state::State;
    use crate::validate::Sandbox;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn empty_state() -> State {
        State::parse(
            br#"{"version":4,"terraform_version":"1.11.4","serial":1,"lineage":"x","outputs":{},"resources":[]}"#,
            "test",
        )
        .unwrap()
    }

    /// Worked out by hand: the provider cannot import target group attachments, so the plan
    /// creates the one the patch declares; it sets the target the cloud has (the id known
    /// only after apply is no difference), and a second one sets another port.
    #[test]
    fn an_expected_create_differs_only_where_it_sets_another_value() {
        let attachment = |name: &str, port: u64| {
            json!({"mode": "managed", "type": "aws_lb_target_group_attachment", "name": name,
                "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
                "instances": [{"schema_version": 0, "attributes": {
                    "id": format!("tg-{name}"), "target_group_arn": "tg", "target_id": "10.0.1.15",
                    "port": port}}]})
        };
        let state = json!({"version": 4, "terraform_version": "1.11.4", "serial": 1,
            "lineage": "x", "outputs": {}, "resources": [attachment("a", 9443), attachment("b", 80)]});
        let observed = State::parse(state.to_string().as_bytes(), "test").unwrap();
        let create = |name: &str| {
            json!({"address": format!("aws_lb_target_group_attachment.{name}"),
                "type": "aws_lb_target_group_attachment",
                "change": {"actions": ["create"], "before": null,
                    "after": {"target_group_arn": "tg", "target_id": "10.0.1.15", "port": 9443,
                              "availability_zone": null},
                    "after_unknown": {"id": true}}})
        };
        let plan = json!({"resource_changes": [create("a"), create("b")]});
        let creates = vec![
            "aws_lb_target_group_attachment.a".to_owned(),
            "aws_lb_target_group_attachment.b".to_owned(),
        ];
        let changed = BTreeMap::new();
        let sandbox = Sandbox::new(Path::new("/nonexistent"));
        let check = Check {
            root: Path::new("/nonexistent"),
            sandbox: &sandbox,
            outside: &[],
            changed: &changed,
            var_files: &[],
            state: &observed,
            observed: &observed,
            touched: &creates,
            excused: &[],
            creates: &creates,
        };
        let (differences, collateral) = summarize(&plan, &check);
        assert_eq!(
            differences,
            vec![Difference {
                address: "aws_lb_target_group_attachment.b".into(),
                attribute: "port".into(),
                config: json!(9443),
                observed: json!(80),
            }]
        );
        assert!(collateral.is_empty());
        let unexpected = Check {
            creates: &[],
            ..check
        };
        let (differences, _) = summarize(&plan, &unexpected);
        assert_eq!(differences.len(), 2, "{differences:?}");
        assert!(differences.iter().all(|d| d.config == json!("(created)")));
    }

    #[test]
    fn a_plan_is_read_into_differences_collateral_and_excused_parts() {
        // A plan as `terraform show -json` prints it (format 1.2), worked out by hand: the
        // touched instance still differs on instance_type, an untouched queue would change,
        // the flagged ingress of the group is excused, an import of a resource already in
        // state is a no-op, and a password is masked.
        let plan = json!({"format_version": "1.2", "resource_changes": [
            {"address": "aws_instance.web", "change": {"actions": ["update"],
                "before": {"instance_type": "t3.large", "ami": "ami-1"},
                "after": {"instance_type": "t3.medium", "ami": "ami-1"},
                "after_unknown": {}, "before_sensitive": {}, "after_sensitive": {}}},
            {"address": "aws_sqs_queue.jobs", "change": {"actions": ["update"],
                "before": {"delay_seconds": 0, "tags": {"a": "1"}},
                "after": {"delay_seconds": 5, "tags": {"a": "1"}},
                "after_unknown": {"tags": {}}, "before_sensitive": {"tags": {}},
                "after_sensitive": {"tags": {}}}},
            {"address": "aws_security_group.web", "change": {"actions": ["update"],
                "before": {"ingress": [1]}, "after": {"ingress": [1, 2]},
                "after_unknown": {}, "before_sensitive": {}, "after_sensitive": {}}},
            {"address": "aws_sqs_queue.new", "change": {"actions": ["no-op"],
                "importing": {"id": "q"}, "before": {}, "after": {}}},
            {"address": "aws_db_instance.main", "change": {"actions": ["update"],
                "before": {"password": "old"}, "after": {"password": "new"},
                "after_unknown": {}, "before_sensitive": {"password": true},
                "after_sensitive": {"password": true}}},
            {"address": "aws_ssm_parameter.config", "change": {"actions": ["update"],
                "before": {"value": "v"}, "after": {"value": "v"},
                "after_unknown": {}, "before_sensitive": {},
                "after_sensitive": {"value": true}}}
        ]});
        let state = empty_state();
        let touched = vec![
            "aws_instance.web".to_owned(),
            "aws_security_group.web".to_owned(),
        ];
        let excused = vec![("aws_security_group.web".to_owned(), "ingress".to_owned())];
        let changed = BTreeMap::new();
        let sandbox = Sandbox::new(Path::new("/nonexistent"));
        let check = Check {
            outside: &[],
            root: Path::new("/nonexistent"),
            sandbox: &sandbox,
            changed: &changed,
            var_files: &[],
            state: &state,
            observed: &state,
            touched: &touched,
            excused: &excused,
            creates: &[],
        };
        let (differences, collateral) = summarize(&plan, &check);
        assert_eq!(
            differences,
            [Difference {
                address: "aws_instance.web".into(),
                attribute: "instance_type".into(),
                config: json!("t3.medium"),
                observed: json!("t3.large"),
            }]
        );
        assert_eq!(
            collateral,
            [
                Difference {
                    address: "aws_sqs_queue.jobs".into(),
                    attribute: "delay_seconds".into(),
                    config: json!(5),
                    observed: json!(0),
                },
                Difference {
                    address: "aws_db_instance.main".into(),
                    attribute: "password".into(),
                    config: json!("(sensitive)"),
                    observed: json!("(sensitive)"),
                },
                // Only the sensitivity mark changes: still a planned update.
                Difference {
                    address: "aws_ssm_parameter.config".into(),
                    attribute: String::new(),
                    config: json!("update with no visible value change"),
                    observed: Value::Null,
                },
            ]
        );
    }

    #[test]
    fn the_override_skips_credential_checks_per_provider_alias() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("main.tf"),
            "provider \"aws\" {\n  region = \"eu-west-1\"\n}\n\nprovider \"aws\" {\n  alias  = \"us\"\n  region = \"us-east-1\"\n}\n",
        )
        .unwrap();
        let text = override_text(dir.path(), true);
        assert_eq!(text.matches("provider \"aws\"").count(), 2);
        assert!(text.contains("alias                       = \"us\""));
        assert!(text.contains("backend \"local\""));
        assert!(!override_text(dir.path(), false).contains("provider"));
    }

    #[test]
    fn excused_parts_of_root_resources_written_once_are_ignored_by_terraform() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("main.tf"),
            "resource \"aws_security_group\" \"web\" {\n  name = \"web\"\n}\n\n\
             resource \"aws_autoscaling_group\" \"web\" {\n  max_size = 2\n}\n\n\
             resource \"aws_sqs_queue\" \"jobs\" {\n  count = 2\n}\n\n\
             resource \"aws_instance\" \"app\" {\n  lifecycle {\n    ignore_changes = [tags]\n  }\n}\n",
        )
        .unwrap();
        let excused: Vec<(String, String)> = [
            ("aws_security_group.web", "ingress"),
            ("aws_security_group.web", "egress"),
            ("aws_autoscaling_group.web", ""),
            // Each instance of a counted block: ignore_changes would hold for its siblings.
            ("aws_sqs_queue.jobs[0]", "delay_seconds"),
            // A block with an ignore_changes of its own, which an override would replace.
            ("aws_instance.app", "instance_type"),
            // No such block in the root module, and a module's resource.
            ("aws_s3_bucket.gone", "tags"),
            ("module.net.aws_vpc.main", "tags"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .collect();
        assert_eq!(
            ignore_excused(dir.path(), &excused),
            "\nresource \"aws_autoscaling_group\" \"web\" {\n  lifecycle {\n    ignore_changes = all\n  }\n}\n\
             \nresource \"aws_security_group\" \"web\" {\n  lifecycle {\n    ignore_changes = [egress, ingress]\n  }\n}\n"
        );
    }
}
