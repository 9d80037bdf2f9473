//! The Terraform oracle: the real `terraform` and AWS provider judge a patched project.
//!
//! The patched scratch copy is planned with `-refresh=false` against the simulator's post-drift
//! state, as `terraform plan` would see the cloud once the patch's imports are done: every
//! managed instance of the pre-drift state with its post-drift attributes (deleted ones gone),
//! plus each resource the drift created at the address the patch imports it to, all completed
//! to the provider schema's shape. A scenario passes when the plan changes no resource, apart
//! from the parts the scenario expects to be flagged or ignored (the cloud keeps a change the
//! code rightly does not absorb, so the plan would revert it). A deleted instance the scenario
//! expects held is created again by the plan; a value of another resource that this makes
//! unknown until apply (a certificate validation listing the recreated record's name) is the
//! cost of restoring it, not a change of the patch, and is excused too.

use super::{Evidence, refreshed, with_imports};
use crate::scenario::Expect;
use reconciler::terraform::state::{State, complete};
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
                let all: Vec<&Difference> = validation
                    .differences
                    .iter()
                    .chain(&validation.collateral)
                    .collect();
                let restored = restored_resources(e);
                let changes: Vec<String> = all
                    .iter()
                    .filter(|d| !restoring(d, e.pre, &restored))
                    .map(|d| describe(d))
                    .collect();
                let passed = validation.passed || (!all.is_empty() && changes.is_empty());
                let error =
                    (!passed && changes.is_empty()).then(|| validation.note.unwrap_or_default());
                TerraformVerdict {
                    passed,
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

/// What Terraform prints for a value it knows only after apply, as the plan is read.
const UNKNOWN: &str = "(known after apply)";

/// The resources (`aws_route53_record.cert`) of the deleted instances the scenario expects
/// held: the plan creates them again.
fn restored_resources(e: &Evidence) -> Vec<String> {
    let deleted = |address: &str| e.post.instances.iter().all(|i| i.address != address);
    e.expect
        .flag
        .iter()
        .filter(|t| t.attribute.is_empty() && deleted(&t.address))
        .filter_map(|t| e.pre.instances.iter().find(|i| i.address == t.address))
        .map(|i| i.resource_address())
        .collect()
}

/// Whether a planned change only follows from restoring a held instance: a value known only
/// after apply, on an instance whose state lists a restored resource among its dependencies.
fn restoring(d: &Difference, pre: &State, restored: &[String]) -> bool {
    d.config.as_str() == Some(UNKNOWN)
        && pre
            .instances
            .iter()
            .find(|i| i.address == d.address)
            .is_some_and(|i| i.dependencies.iter().any(|r| restored.contains(r)))
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
    fn only_unknowns_on_readers_of_a_restored_resource_follow_from_restoring_it() {
        let pre = State::parse(
            br#"{"version":4,"terraform_version":"1.11.4","serial":1,"lineage":"l","resources":[
              {"mode":"managed","type":"aws_acm_certificate_validation","name":"site","provider":"provider[\"registry.terraform.io/hashicorp/aws\"]",
               "instances":[{"schema_version":0,"attributes":{"id":"v"},"dependencies":["aws_route53_record.cert"]}]},
              {"mode":"managed","type":"aws_lb","name":"web","provider":"provider[\"registry.terraform.io/hashicorp/aws\"]",
               "instances":[{"schema_version":0,"attributes":{"id":"lb"}}]}]}"#,
            "test",
        )
        .expect("state");
        let restored = vec!["aws_route53_record.cert".to_owned()];
        let change = |address: &str, config: serde_json::Value| Difference {
            address: address.into(),
            attribute: "validation_record_fqdns".into(),
            config,
            observed: serde_json::json!(["_x.a.example"]),
        };
        let unknown = serde_json::json!(UNKNOWN);
        assert!(restoring(
            &change("aws_acm_certificate_validation.site", unknown.clone()),
            &pre,
            &restored
        ));
        // a known new value is a change of the patch, not of the restoring
        let known = serde_json::json!(["_y.b.example"]);
        assert!(!restoring(
            &change("aws_acm_certificate_validation.site", known),
            &pre,
            &restored
        ));
        // an unknown on a resource that does not depend on the restored one
        assert!(!restoring(
            &change("aws_lb.web", unknown.clone()),
            &pre,
            &restored
        ));
        assert!(!restoring(
            &change("aws_acm_certificate_validation.site", unknown),
            &pre,
            &[]
        ));
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
