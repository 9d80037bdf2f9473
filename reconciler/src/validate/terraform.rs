//! The second validator: `terraform plan -detailed-exitcode` on a scratch copy of the patched
//! project, when Terraform, an initialised working directory and AWS credentials are there.

use super::{Check, ValidateError, Validation, Validator, scratch_copy};
use std::path::Path;
use std::process::Command;

/// Runs `terraform plan -detailed-exitcode`: exit 0 means the patched code matches the cloud.
#[derive(Debug, Default)]
pub struct TerraformPlan;

/// Whether `terraform` runs on this machine.
pub fn terraform_present() -> bool {
    Command::new("terraform")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn has_credentials() -> bool {
    let env = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    let shared = std::env::var_os("HOME")
        .map(|h| Path::new(&h).join(".aws/credentials"))
        .is_some_and(|p| p.is_file());
    env("AWS_ACCESS_KEY_ID") || env("AWS_PROFILE") || env("AWS_WEB_IDENTITY_TOKEN_FILE") || shared
}

impl Validator for TerraformPlan {
    fn name(&self) -> &'static str {
        "terraform-plan"
    }

    fn available(&self, root: &Path) -> Result<(), String> {
        if !terraform_present() {
            return Err("terraform is not on PATH".into());
        }
        if !root.join(".terraform/providers").is_dir() {
            return Err(format!(
                "{} is not initialised (run `terraform init`)",
                root.display()
            ));
        }
        if !has_credentials() {
            return Err("no AWS credentials in the environment or ~/.aws/credentials".into());
        }
        Ok(())
    }

    fn validate(&self, check: &Check) -> Result<Validation, ValidateError> {
        let scratch = scratch_copy(check)?;
        link_providers(check.root, scratch.path())?;
        let mut command = Command::new("terraform");
        command.current_dir(scratch.path()).args([
            "plan",
            "-detailed-exitcode",
            "-input=false",
            "-lock=false",
            "-no-color",
        ]);
        for file in check.var_files {
            command.arg(format!("-var-file={}", check.root.join(file).display()));
        }
        let output = command
            .output()
            .map_err(|e| ValidateError::Terraform(e.to_string()))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let summary = stdout
            .lines()
            .filter(|l| l.contains("will be") || l.contains("must be") || l.starts_with("Plan:"))
            .collect::<Vec<_>>()
            .join("\n");
        match output.status.code() {
            Some(0) => Ok(verdict(self, true, "no changes".into())),
            Some(2) => Ok(verdict(self, false, summary)),
            _ => Err(ValidateError::Terraform(
                String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            )),
        }
    }
}

fn verdict(v: &TerraformPlan, passed: bool, note: String) -> Validation {
    Validation {
        validator: v.name().to_owned(),
        passed,
        differences: Vec::new(),
        collateral: Vec::new(),
        note: Some(note),
    }
}

/// Points the scratch copy at the original's provider plugins instead of copying them.
fn link_providers(root: &Path, scratch: &Path) -> Result<(), ValidateError> {
    let from = root.join(".terraform/providers");
    let to = scratch.join(".terraform/providers");
    let fail = |source| ValidateError::Scratch {
        root: root.to_owned(),
        source,
    };
    std::fs::create_dir_all(scratch.join(".terraform")).map_err(fail)?;
    std::os::unix::fs::symlink(&from, &to).map_err(fail)
}
