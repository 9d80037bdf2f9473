//! The Terraform oracle: the real `terraform` and AWS provider judge a patched project.
//!
//! The patched scratch copy is planned with `-refresh=false` against the simulator's post-drift
//! state, as `terraform plan` would see the cloud once the patch's imports are done: every
//! managed instance of the pre-drift state with its post-drift attributes (deleted ones gone),
//! plus each resource the drift created at the address the patch imports it to, all completed
//! to the provider schema's shape. A scenario passes when the plan changes no resource, apart
//! from the parts the scenario expects to be flagged or ignored (the cloud keeps a change the
//! code rightly does not absorb, so the plan would revert it).

use super::{Evidence, refreshed, with_imports};
use crate::scenario::Expect;
use reconciler::terraform::state::complete;
use reconciler::validate::{
    Check, Difference, Sandbox, TerraformPlan, Validator, terraform_binary,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Terraform's verdict on one patched project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TerraformVerdict {
    /// Whether the plan changes nothing outside the expected flags.
    pub passed: bool,
    /// Each planned change, `address attribute: code X, cloud Y`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<String>,
    /// Why Terraform gave no verdict (init, validate or plan failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Plans patched projects; a patch already judged for a scenario is not planned again (the
/// deterministic planner writes the same patch in every sample). Terraform's initialised
/// working directories are kept for the oracle's life, so projects that need the same
/// providers and modules share one `terraform init`.
#[derive(Debug)]
pub struct TerraformOracle {
    plan: TerraformPlan,
    judged: HashMap<(String, String), TerraformVerdict>,
    /// Where the working directories are kept (removed with the oracle).
    _cache: tempfile::TempDir,
}

impl TerraformOracle {
    /// An oracle, or why Terraform cannot judge here (no `terraform` or `tofu` on `PATH`).
    /// What each project needs besides (an AWS provider meeting its constraints, no data
    /// sources to read offline) is checked per plan, and reported in that verdict.
    pub fn new() -> Result<TerraformOracle, String> {
        terraform_binary().ok_or("neither terraform nor tofu is on PATH")?;
        let cache = tempfile::tempdir().map_err(|e| {
            format!("no temporary directory for terraform's working directories: {e}")
        })?;
        let mut plan = TerraformPlan::default();
        plan.cache_dir = Some(cache.path().to_owned());
        Ok(TerraformOracle {
            plan,
            judged: HashMap::new(),
            _cache: cache,
        })
    }

    /// Judges the patched project in `dir` for scenario `id`; `diff` identifies the patch.
    pub fn judge(&mut self, id: &str, diff: &str, dir: &Path, e: &Evidence) -> TerraformVerdict {
        let key = (id.to_owned(), diff.to_owned());
        if let Some(verdict) = self.judged.get(&key) {
            return verdict.clone();
        }
        let verdict = self.plan_once(dir, e);
        self.judged.insert(key, verdict.clone());
        verdict
    }

    fn plan_once(&self, dir: &Path, e: &Evidence) -> TerraformVerdict {
        if let Err(why) = self.plan.available(dir) {
            return failed(format!("terraform cannot judge this project: {why}"));
        }
        let mut observed = match &e.patched {
            Ok(project) => with_imports(project, &refreshed(e.pre, e.post), e.post),
            Err(error) => return failed(format!("the patched code does not load: {error}")),
        };
        complete(&mut observed, e.schema);
        let excused = excused(e.expect);
        let changed = BTreeMap::new();
        // The Terraform judge works in a copy of its own; the built-in check's is never made.
        let sandbox = Sandbox::new(dir);
        let check = Check {
            root: dir,
            sandbox: &sandbox,
            // The fixture projects read nothing outside their directory.
            outside: &[],
            changed: &changed,
            var_files: &[],
            state: e.pre,
            observed: &observed,
            touched: &[],
            excused: &excused,
        };
        match self.plan.validate(&check) {
            Ok(validation) => {
                let changes: Vec<String> = validation
                    .differences
                    .iter()
                    .chain(&validation.collateral)
                    .map(describe)
                    .collect();
                let error = (!validation.passed && changes.is_empty())
                    .then(|| validation.note.unwrap_or_default());
                TerraformVerdict {
                    passed: validation.passed,
                    changes,
                    error,
                }
            }
            Err(error) => failed(error.to_string()),
        }
    }
}

/// A verdict for a plan that could not run.
fn failed(error: String) -> TerraformVerdict {
    TerraformVerdict {
        passed: false,
        changes: Vec::new(),
        error: Some(error),
    }
}

/// The parts the scenario expects the cloud to keep while the code does not follow.
fn excused(expect: &Expect) -> Vec<(String, String)> {
    expect
        .flag
        .iter()
        .chain(&expect.ignore)
        .map(|t| (t.address.clone(), t.attribute.clone()))
        .collect()
}

/// One planned change in plain words.
fn describe(d: &Difference) -> String {
    let place = if d.attribute.is_empty() {
        d.address.clone()
    } else {
        format!("{} {}", d.address, d.attribute)
    };
    format!("{place}: code {}, cloud {}", d.config, d.observed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Target;

    #[test]
    fn expected_flags_and_ignores_are_excused_whole_or_by_attribute() {
        let expect = Expect {
            patch: true,
            flag: vec![Target {
                address: "aws_security_group.web".into(),
                attribute: "ingress".into(),
            }],
            ignore: vec![Target {
                address: "aws_autoscaling_group.web".into(),
                attribute: String::new(),
            }],
            ..Expect::default()
        };
        assert_eq!(
            excused(&expect),
            vec![
                ("aws_security_group.web".into(), "ingress".into()),
                ("aws_autoscaling_group.web".into(), String::new()),
            ]
        );
    }

    #[test]
    fn a_change_reads_as_address_attribute_code_and_cloud() {
        let d = Difference {
            address: "aws_lb.web".into(),
            attribute: "idle_timeout".into(),
            config: serde_json::json!(60),
            observed: serde_json::json!(120),
        };
        assert_eq!(describe(&d), "aws_lb.web idle_timeout: code 60, cloud 120");
    }
}
