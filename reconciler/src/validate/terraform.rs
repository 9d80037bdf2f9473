//! The Terraform validator: the real `terraform` and the real AWS provider judge the patch.
//!
//! In a scratch copy of the patched project it writes the observed post-drift state as a local
//! state file, overrides the backend to that file, and — when no AWS credentials are configured
//! — tells each `provider "aws"` block to skip the credential and account checks (dummy keys go
//! in the child's environment only). It initialises from the project's own `.terraform`
//! providers or from a plugin directory, runs `terraform validate -json`, then
//! `terraform plan -refresh=false -detailed-exitcode`, and reads `terraform show -json` of the
//! plan into the same differences the built-in check reports: per touched resource, the
//! attributes that still differ; elsewhere, what the patch changed that no intent asked for.
//!
//! It is skipped, with the reason, where no `terraform` (or `tofu`) is on `PATH`, no AWS
//! provider can be found, none meets the project's version constraints, or, without
//! credentials, the configuration reads AWS data sources (an offline plan cannot answer them).

use super::{Check, Difference, ValidateError, Validation, Validator, scratch_copy};
use crate::terraform::state::{complete, tfstate_json};
use knowledge::ProviderSchema;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The provider source address the validator needs.
const AWS_PROVIDER: &str = "registry.terraform.io/hashicorp/aws";

/// The override file written into the scratch copy.
const OVERRIDE_FILE: &str = "retrace_validator_override.tf";

/// Runs the real `terraform plan` against the observed state.
#[derive(Debug, Default, Clone)]
pub struct TerraformPlan {
    /// A plugin directory given by the user (`[terraform] plugin_dir`).
    pub plugin_dir: Option<PathBuf>,
    /// The region for an implicit provider configuration (the project's first region).
    pub region: Option<String>,
}

/// The `terraform` (or OpenTofu's `tofu`) binary on `PATH`, looked for once per process.
pub fn terraform_binary() -> Option<&'static str> {
    static FOUND: std::sync::OnceLock<Option<&'static str>> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        ["terraform", "tofu"].into_iter().find(|bin| {
            Command::new(bin)
                .arg("version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
    })
}

/// Whether `terraform` runs on this machine.
pub fn terraform_present() -> bool {
    terraform_binary().is_some()
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
    /// A plugin directory holding `registry.terraform.io/hashicorp/aws`.
    PluginDir(PathBuf),
}

impl TerraformPlan {
    /// The provider plugins to use: the project's initialised ones, else the first plugin
    /// directory holding the AWS provider among the configured one, `TF_PLUGIN_DIR`,
    /// Terraform's implied local mirror directories, and directories under `/opt`.
    fn providers(&self, root: &Path) -> Option<Providers> {
        let initialised = root.join(".terraform/providers");
        if initialised.join(AWS_PROVIDER).is_dir() {
            return Some(Providers::Initialised(initialised));
        }
        plugin_dir_candidates(self.plugin_dir.as_deref())
            .into_iter()
            .find(|dir| dir.join(AWS_PROVIDER).is_dir())
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
        if path.is_dir() && name != ".git" && name != "providers" {
            return reads_aws_data_sources(&path);
        }
        path.extension().is_some_and(|e| e == "tf")
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
        if terraform_binary().is_none() {
            return Err("neither terraform nor tofu is on PATH".into());
        }
        if !has_credentials() && reads_aws_data_sources(root) {
            return Err(
                "the configuration reads AWS data sources, which a plan without AWS credentials \
                 cannot answer"
                    .into(),
            );
        }
        Ok(())
    }

    fn validate(&self, check: &Check) -> Result<Validation, ValidateError> {
        let binary = terraform_binary()
            .ok_or_else(|| ValidateError::Unavailable("terraform is not on PATH".into()))?;
        let providers = self
            .providers(check.root)
            .ok_or_else(|| ValidateError::Unavailable("no AWS provider found".into()))?;
        let scratch = scratch_copy(check)?;
        let dir = scratch.path();
        let offline = !has_credentials();
        prepare(check, dir, &providers, offline)?;
        let run = Runner {
            binary,
            dir,
            offline,
            region: self.region.as_deref(),
        };
        run.init(&providers)?;
        if let Some(problems) = run.validate()? {
            return Ok(self.verdict(false, Vec::new(), Vec::new(), problems));
        }
        let mut plan = vec![
            "plan",
            "-refresh=false",
            "-detailed-exitcode",
            "-input=false",
            "-lock=false",
            "-no-color",
            "-out=retrace.tfplan",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
        plan.extend(
            check
                .var_files
                .iter()
                .map(|f| format!("-var-file={}", check.root.join(f).display())),
        );
        let output = run.command(&plan)?;
        match output.status.code() {
            Some(0) => Ok(self.verdict(true, Vec::new(), Vec::new(), "no changes".into())),
            Some(2) => {
                let shown =
                    run.command(&["show".into(), "-json".into(), "retrace.tfplan".into()])?;
                let plan: Value = serde_json::from_slice(&shown.stdout)
                    .map_err(|e| ValidateError::Terraform(format!("terraform show -json: {e}")))?;
                let (differences, collateral) = summarize(&plan, check);
                let passed = differences.is_empty() && collateral.is_empty();
                let note = if passed {
                    "changes only where a person must decide (flagged or ignored parts)".into()
                } else {
                    format!(
                        "{} difference(s) on the changed resources, {} elsewhere",
                        differences.len(),
                        collateral.len()
                    )
                };
                Ok(self.verdict(passed, differences, collateral, note))
            }
            _ => Err(plan_error(&output)),
        }
    }
}

impl TerraformPlan {
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

/// Writes the observed state and the override file into the scratch copy, and points it at the
/// original's initialised providers when there are some.
fn prepare(
    check: &Check,
    dir: &Path,
    providers: &Providers,
    offline: bool,
) -> Result<(), ValidateError> {
    let fail = |source| ValidateError::Scratch {
        root: check.root.to_owned(),
        source,
    };
    // Created resources carry only what the calls said; the provider stores every attribute
    // and sensitivity mark of the type, and a plan sees any difference as a change.
    let mut observed = check.observed.clone();
    if let Ok(schema) = ProviderSchema::bundled() {
        complete(&mut observed, schema);
    }
    let mut state = tfstate_json(&observed);
    // A state written by a newer Terraform than the one here is refused; the content is the
    // same for any 1.x.
    state["terraform_version"] = Value::String("1.5.0".into());
    std::fs::write(dir.join("terraform.tfstate"), state.to_string()).map_err(fail)?;
    let _ = std::fs::remove_file(dir.join(".terraform/terraform.tfstate"));
    std::fs::write(dir.join(OVERRIDE_FILE), override_text(dir, offline)).map_err(fail)?;
    if let Providers::Initialised(from) = providers {
        let to = dir.join(".terraform/providers");
        std::fs::create_dir_all(dir.join(".terraform")).map_err(fail)?;
        std::os::unix::fs::symlink(from, to).map_err(fail)?;
    }
    Ok(())
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

/// The aliases of the root module's `provider "aws"` blocks (`None` for the default one).
fn aws_provider_aliases(dir: &Path) -> Vec<Option<String>> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "tf") && !p.ends_with(OVERRIDE_FILE))
    {
        let Ok(body) = std::fs::read_to_string(path).map(|t| hcl::parse(&t)) else {
            continue;
        };
        let Ok(body) = body else { continue };
        for block in body.blocks().filter(|b| {
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
    }
    out
}

/// Runs `terraform` commands in the scratch copy.
struct Runner<'a> {
    binary: &'a str,
    dir: &'a Path,
    offline: bool,
    region: Option<&'a str>,
}

impl Runner<'_> {
    /// Runs one command with the child environment: dummy keys and a region when offline, no
    /// colour, no prompts.
    fn command(&self, args: &[String]) -> Result<Output, ValidateError> {
        let mut command = Command::new(self.binary);
        command
            .current_dir(self.dir)
            .args(args)
            .env("TF_IN_AUTOMATION", "1")
            .env("TF_INPUT", "0")
            .env_remove("TF_CLI_ARGS")
            .env_remove("TF_CLI_ARGS_plan");
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
                command.env("AWS_REGION", self.region.unwrap_or("us-east-1"));
            }
        }
        tracing::debug!(?args, dir = %self.dir.display(), "running terraform");
        command
            .output()
            .map_err(|e| ValidateError::Terraform(format!("{} could not start: {e}", self.binary)))
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
        let output = self.command(&args)?;
        if output.status.success() {
            return Ok(());
        }
        Err(ValidateError::Unavailable(format!(
            "terraform init failed: {}",
            first_error(&output)
        )))
    }

    /// `terraform validate -json`: the problems in plain words when the configuration is not
    /// valid.
    fn validate(&self) -> Result<Option<String>, ValidateError> {
        let output = self.command(&["validate".into(), "-json".into(), "-no-color".into()])?;
        let doc: Value = serde_json::from_slice(&output.stdout)
            .map_err(|e| ValidateError::Terraform(format!("terraform validate -json: {e}")))?;
        if doc["valid"] == Value::Bool(true) {
            return Ok(None);
        }
        let problems: Vec<String> = doc["diagnostics"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["severity"] == "error")
            .map(|d| {
                let at = d["range"]["filename"].as_str().map_or(String::new(), |f| {
                    format!("{f}:{}: ", d["range"]["start"]["line"])
                });
                format!(
                    "{at}{} {}",
                    d["summary"].as_str().unwrap_or_default(),
                    d["detail"].as_str().unwrap_or_default()
                )
                .trim()
                .to_owned()
            })
            .collect();
        Ok(Some(format!("terraform validate: {}", problems.join("; "))))
    }
}

/// A failed plan: unavailable when the failure is the offline set-up's (a data source or an
/// API the plan had to call), otherwise Terraform's error.
fn plan_error(output: &Output) -> ValidateError {
    let message = first_error(output);
    let offline = [
        "no valid credential",
        "reading ",
        "dial tcp",
        "lookup ",
        "operation error",
    ];
    if offline.iter().any(|m| message.contains(m)) {
        ValidateError::Unavailable(format!("the plan needed the cloud: {message}"))
    } else {
        ValidateError::Terraform(message)
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
/// change (config side: the planned value, observed side: the state's); on any other resource,
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
        let mut changed = changed_attributes(&change["change"]);
        if changed.is_empty() {
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
    use serde_json::json;
    use std::collections::BTreeMap;

    fn empty_state() -> State {
        State::parse(
            br#"{"version":4,"terraform_version":"1.11.4","serial":1,"lineage":"x","outputs":{},"resources":[]}"#,
            "test",
        )
        .unwrap()
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
        let check = Check {
            outside: &[],
            root: Path::new("/nonexistent"),
            changed: &changed,
            var_files: &[],
            state: &state,
            observed: &state,
            touched: &touched,
            excused: &excused,
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
}
