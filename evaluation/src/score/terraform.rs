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
//!
//! Terraform itself says which types the provider cannot import (`Terraform::importable`,
//! asked once per type and oracle). An `import` block for such a type is left to the plan, as
//! the state lacks its object, and the plan stops there as a real one does ("resource TYPE
//! doesn't support import"); an object of such a type the drift created is what a planned
//! create may make (written without an import, the next apply creates it).

use super::checks::{Evidence, with_imports};
use super::refreshed;
use super::tfplan::{Change, Job, Planned, Terraform, UNKNOWN};
use crate::scenario::Expect;
use reconciler::terraform::state::{Instance, Mode, State, complete};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
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
/// deterministic planner writes the same patch in every sample). Copies of one project share
/// one `terraform init` for the oracle's life.
#[derive(Debug)]
pub struct TerraformOracle {
    terraform: Terraform,
    judged: HashMap<(String, String), TerraformVerdict>,
    /// Whether the provider can import each type asked about.
    importable: HashMap<String, bool>,
}

impl TerraformOracle {
    /// An oracle, or why Terraform cannot judge here (no `terraform` or `tofu` on `PATH`, no
    /// plugin directory holding the AWS provider). What each project needs besides (a
    /// provider meeting its constraints, no data sources to read offline) is checked per
    /// plan, and reported in that verdict.
    pub fn new() -> Result<TerraformOracle, String> {
        Ok(TerraformOracle {
            terraform: Terraform::find()?,
            judged: HashMap::new(),
            importable: HashMap::new(),
        })
    }

    /// Judges the patched copy in `dir` of `project` for scenario `id`; `diff` identifies
    /// the patch.
    pub fn judge(
        &mut self,
        id: &str,
        project: &str,
        diff: &str,
        dir: &Path,
        e: &Evidence,
    ) -> TerraformVerdict {
        let key = (id.to_owned(), diff.to_owned());
        if let Some(verdict) = self.judged.get(&key) {
            return verdict.clone();
        }
        let verdict = self.plan_once(project, dir, e);
        self.judged.insert(key, verdict.clone());
        verdict
    }

    fn plan_once(&mut self, project: &str, dir: &Path, e: &Evidence) -> TerraformVerdict {
        let patched = match &e.patched {
            Ok(patched) => patched,
            Err(error) => return failed(format!("the patched code does not load: {error}")),
        };
        let before = refreshed(e.pre, e.post);
        let mut observed = with_imports(patched, &before, e.post);
        let (imported, creates) = match self.unimportable(&before, &observed, e.pre, e.post) {
            Ok(found) => found,
            Err(error) => return failed(error),
        };
        observed
            .instances
            .retain(|i| !imported.contains(&i.address));
        complete(&mut observed, e.schema);
        let excused = excused(e.expect);
        let job = Job {
            project,
            dir,
            state: &observed,
            excused: &excused,
            creates: &creates,
        };
        match self.terraform.plan(&job) {
            Ok(Planned::Clean) => TerraformVerdict {
                passed: true,
                changes: Vec::new(),
                error: None,
            },
            Ok(Planned::Changes(all)) => {
                let restored = restored_resources(e);
                let changes: Vec<String> = all
                    .iter()
                    .filter(|c| !restoring(c, e.pre, &restored))
                    .map(describe)
                    .collect();
                TerraformVerdict {
                    passed: changes.is_empty(),
                    changes,
                    error: None,
                }
            }
            Ok(Planned::Invalid(problems)) => failed(problems),
            Err(error) => failed(error),
        }
    }

    /// Of a type the provider cannot import: the addresses `imported` gave objects at (an
    /// import block's, which Terraform must then import itself) and the objects the drift
    /// created (`post` beside `pre`).
    fn unimportable(
        &mut self,
        before: &State,
        imported: &State,
        pre: &State,
        post: &State,
    ) -> Result<(Vec<String>, Vec<Instance>), String> {
        let new = |state: &State, old: &State| -> Vec<Instance> {
            state
                .instances
                .iter()
                .filter(|i| i.mode == Mode::Managed)
                .filter(|i| old.instances.iter().all(|o| o.address != i.address))
                .cloned()
                .collect()
        };
        let mut refused = Vec::new();
        for instance in new(imported, before) {
            if !self.importable(&instance.resource_type)? {
                refused.push(instance.address);
            }
        }
        let mut creates = Vec::new();
        for instance in new(post, pre) {
            if !self.importable(&instance.resource_type)? {
                creates.push(instance);
            }
        }
        Ok((refused, creates))
    }

    /// Whether the provider can import a type, asked of Terraform once per type.
    fn importable(&mut self, resource_type: &str) -> Result<bool, String> {
        if let Some(known) = self.importable.get(resource_type) {
            return Ok(*known);
        }
        let answer = self.terraform.importable(resource_type)?;
        self.importable.insert(resource_type.to_owned(), answer);
        Ok(answer)
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
fn restoring(c: &Change, pre: &State, restored: &[String]) -> bool {
    c.planned.as_str() == Some(UNKNOWN)
        && pre
            .instances
            .iter()
            .find(|i| i.address == c.address)
            .is_some_and(|i| i.dependencies.iter().any(|r| restored.contains(r)))
}

/// One planned change in plain words.
fn describe(c: &Change) -> String {
    let place = if c.attribute.is_empty() {
        c.address.clone()
    } else {
        format!("{} {}", c.address, c.attribute)
    };
    format!("{place}: code {}, cloud {}", c.planned, c.current)
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
        let change = |address: &str, planned: serde_json::Value| Change {
            address: address.into(),
            attribute: "validation_record_fqdns".into(),
            planned,
            current: serde_json::json!(["_x.a.example"]),
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
        let d = Change {
            address: "aws_lb.web".into(),
            attribute: "idle_timeout".into(),
            planned: serde_json::json!(60),
            current: serde_json::json!(120),
        };
        assert_eq!(describe(&d), "aws_lb.web idle_timeout: code 60, cloud 120");
    }
}
