//! The AWS provider run once for many plans. Started in its debug mode, the provider prints
//! a `TF_REATTACH_PROVIDERS` value; every `terraform` command given that value attaches to the
//! running provider instead of starting its own, which saves the second or so the provider
//! takes to start and build its schema each time.
//!
//! One provider serves one configuration at a time: Terraform configures it at the start of
//! each command, so commands that use it must not overlap, and a project with more than one
//! `provider "aws"` configuration (an alias) must not use it at all.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// What the provider prints before the value to give Terraform.
const REATTACH: &str = "TF_REATTACH_PROVIDERS='";

/// A running AWS provider that `terraform` commands attach to.
#[derive(Debug)]
pub struct Provider {
    child: Child,
    /// The value of `TF_REATTACH_PROVIDERS` that attaches to it.
    reattach: String,
}

impl Provider {
    /// Starts `binary` in its debug mode with the environment `configure` gives the command,
    /// and reads the value to attach with; `Err` says why it could not.
    pub fn start(binary: &Path, configure: impl Fn(&mut Command)) -> Result<Provider, String> {
        let mut command = Command::new(binary);
        command
            .arg("-debug")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            // Its debug mode logs every call unless told not to.
            .env("TF_LOG_PROVIDER", "ERROR")
            .env("TF_LOG_SDK", "ERROR")
            .env("TF_LOG_PROVIDER_AWS", "ERROR")
            // With a CA bundle the provider fails its second configuration in one process
            // ("unable to add custom RootCAs HTTPClient"); an offline plan makes no request.
            .env_remove("AWS_CA_BUNDLE");
        configure(&mut command);
        let mut child = command
            .spawn()
            .map_err(|e| format!("{} could not start: {e}", binary.display()))?;
        let stdout = child.stdout.take().ok_or("the provider has no output")?;
        let mut lines = BufReader::new(stdout).lines();
        let reattach = lines.by_ref().map_while(Result::ok).find_map(|line| {
            let start = line.find(REATTACH)? + REATTACH.len();
            line[start..].strip_suffix('\'').map(str::to_owned)
        });
        let Some(reattach) = reattach else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "{} printed no {REATTACH}...' line",
                binary.display()
            ));
        };
        // Whatever else it prints is read and dropped, so a full pipe never blocks it.
        std::thread::spawn(move || lines.for_each(drop));
        Ok(Provider { child, reattach })
    }

    /// The value of `TF_REATTACH_PROVIDERS` that attaches a command to this provider.
    pub fn reattach(&self) -> &str {
        &self.reattach
    }

    /// Whether it is still running.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The AWS provider's executable under a plugin directory (`ADDRESS/VERSION/OS_ARCH/
/// terraform-provider-aws_*`), when there is exactly one: with several versions, the one
/// `terraform init` picks is the one to run, and only Terraform knows which.
pub fn binary(plugins: &Path, addresses: &[&str]) -> Option<PathBuf> {
    let mut found = Vec::new();
    for address in addresses {
        for version in children(&plugins.join(address)) {
            for platform in children(&version) {
                found.extend(children(&platform).into_iter().filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("terraform-provider-aws"))
                }));
            }
        }
    }
    (found.len() == 1).then(|| found.remove(0))
}

/// The entries of a directory, none when it cannot be read.
fn children(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_one_provider_binary_is_found_and_two_versions_give_none() {
        let temp = tempfile::tempdir().expect("a temporary directory");
        let platform = temp
            .path()
            .join("registry.terraform.io/hashicorp/aws/5.100.0/linux_amd64");
        std::fs::create_dir_all(&platform).expect("dirs");
        std::fs::write(platform.join("terraform-provider-aws_v5.100.0_x5"), "").expect("write");
        std::fs::write(platform.join("LICENSE.txt"), "").expect("write");
        let addresses = ["registry.terraform.io/hashicorp/aws"];
        assert_eq!(
            binary(temp.path(), &addresses),
            Some(platform.join("terraform-provider-aws_v5.100.0_x5"))
        );
        let other = temp
            .path()
            .join("registry.terraform.io/hashicorp/aws/5.99.0/linux_amd64");
        std::fs::create_dir_all(&other).expect("dirs");
        std::fs::write(other.join("terraform-provider-aws_v5.99.0_x5"), "").expect("write");
        assert_eq!(binary(temp.path(), &addresses), None);
    }

    #[test]
    fn the_reattach_value_is_read_from_the_providers_output() {
        let temp = tempfile::tempdir().expect("a temporary directory");
        let script = temp.path().join("provider");
        std::fs::write(
            &script,
            "#!/bin/sh\necho 'Provider started. To attach Terraform CLI, set:'\n\
             echo \"\tTF_REATTACH_PROVIDERS='{\\\"pid\\\":$$}'\"\nexec sleep 30\n",
        )
        .expect("write");
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        let mut provider = Provider::start(&script, |_| {}).expect("started");
        assert!(
            provider.reattach().starts_with("{\"pid\":"),
            "{}",
            provider.reattach()
        );
        assert!(provider.running());
        drop(provider);
        let silent = temp.path().join("silent");
        std::fs::write(&silent, "#!/bin/sh\necho nothing\n").expect("write");
        std::fs::set_permissions(&silent, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        let error = Provider::start(&silent, |_| {}).expect_err("no reattach line");
        assert!(error.contains("printed no"), "{error}");
    }
}
