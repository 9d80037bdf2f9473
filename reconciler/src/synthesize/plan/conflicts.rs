//! What the provider decides about an attribute rather than the code: an attribute only the
//! provider sets is never written, and an argument the provider refuses beside one the code
//! sets (the catalog's conflicts: `default_version` beside `update_default_version`) is not
//! written either: it needs no edit when the code's argument already keeps it at the changed
//! value (`update_default_version = true` makes the latest version the default) or when the
//! provider reads it from AWS beside that argument (`access_control_policy` beside a canned
//! `acl`), and is held with the reason otherwise.

use super::planner::Planner;
use crate::intents::{Delta, Lifecycle, lookup, same_value};
use crate::policy::Part;
use crate::synthesize::settled::Settled;
use crate::terraform::config::ResourceInstance;
use crate::terraform::functions::Value as Evaluated;
use knowledge::catalog::{Catalog, Conflict};
use serde_json::Value;

impl Planner<'_> {
    /// Why a managed attribute needs no edit: the provider computes it, or the argument it
    /// conflicts with keeps it at the value the change gives.
    pub(super) fn provider_settled(&self, delta: &Delta, part: &Part) -> Option<Settled> {
        let Part::Attribute(path) = part else {
            return None;
        };
        if delta.lifecycle != Lifecycle::Managed {
            return None;
        }
        let resource_type = &delta.resource.resource_type;
        let reason = if self.schema.is_computed_only(resource_type, path) {
            format!("{path} is computed by the provider: nothing to write")
        } else if let Some(set) = self.read_beside(delta, path) {
            format!(
                "the provider reads {path} from AWS where the code sets {set} instead: nothing to write of its own"
            )
        } else {
            let instance = self.instance(delta).ok()?;
            let want = &delta.attributes.get(path)?.after;
            let kept = Catalog::bundled()
                .conflicts(resource_type, path)
                .into_iter()
                .find_map(|c| self.kept_at(delta, instance, c, path))?;
            if !same_value(&kept.value, want) {
                return None;
            }
            format!(
                "the code sets {} = true, which keeps {path} at {} ({}): nothing to write",
                kept.by, kept.follows, kept.value
            )
        };
        Some(Settled {
            reason,
            imported_as: None,
        })
    }

    /// Why an attribute of an instance cannot be written: the code sets an argument the
    /// provider refuses beside it (what that argument keeps it at, when it does).
    pub(super) fn conflicting(
        &self,
        delta: &Delta,
        instance: &ResourceInstance,
        path: &str,
    ) -> Option<String> {
        let conflict = Catalog::bundled()
            .conflicts(&instance.resource_type, path)
            .into_iter()
            .find(|c| configured(instance, other(c, path)).is_some_and(is_given))?;
        let set = other(conflict, path);
        let kept = match self.kept_at(delta, instance, conflict, path) {
            Some(k) => format!(
                "; {set} = true keeps {path} at {} ({}), which the change moved away from",
                k.follows, k.value
            ),
            None => String::new(),
        };
        Some(format!(
            "the provider refuses {path} beside {set}, which the code sets{kept}: decide by hand which of the two the code keeps"
        ))
    }

    /// The argument the code sets in place of `path`, when the provider reads `path` from
    /// AWS beside it (a conflict's `computed`) and the code leaves `path` unset.
    fn read_beside(&self, delta: &Delta, path: &str) -> Option<&'static str> {
        let instance = self.instance(delta).ok()?;
        let is_set = |name: &str| configured(instance, name).is_some_and(is_given);
        if is_set(path) {
            return None;
        }
        Catalog::bundled()
            .conflicts(&instance.resource_type, path)
            .into_iter()
            .find(|c| c.computed && c.attribute == path && is_set(&c.with))
            .map(|c| c.with.as_str())
    }

    /// The value a conflict's `follows` attribute keeps `path` at, when `path` is the
    /// conflict's `attribute`, the code sets `with` to true and the value is known (the
    /// change's own, else the state's).
    fn kept_at<'c>(
        &self,
        delta: &Delta,
        instance: &ResourceInstance,
        conflict: &'c Conflict,
        path: &str,
    ) -> Option<Kept<'c>> {
        let follows = conflict.follows.as_deref()?;
        if conflict.attribute != path {
            return None;
        }
        if configured(instance, &conflict.with) != Some(&Evaluated::Bool(true)) {
            return None;
        }
        let value = match delta.attributes.get(follows) {
            Some(change) => change.after.clone(),
            None => {
                let address = delta.address.as_deref()?;
                let state = self.state.instance(address)?;
                lookup(&state.attributes, follows)?.clone()
            }
        };
        Some(Kept {
            by: &conflict.with,
            follows,
            value,
        })
    }
}

/// The value an argument keeps another at.
struct Kept<'c> {
    /// The argument the code sets to true: `update_default_version`.
    by: &'c str,
    /// The computed attribute followed: `latest_version`.
    follows: &'c str,
    /// Its value after the change.
    value: Value,
}

/// The evaluated value of a top-level argument of an instance's configuration.
fn configured<'i>(instance: &'i ResourceInstance, name: &str) -> Option<&'i Evaluated> {
    match &instance.attributes {
        Evaluated::Object(map) => map.get(name),
        _ => None,
    }
}

/// Whether a configured value is given: not null, and for a nested block not empty.
fn is_given(value: &Evaluated) -> bool {
    match value {
        Evaluated::Null => false,
        Evaluated::List(items) | Evaluated::Set(items) => !items.is_empty(),
        _ => true,
    }
}

/// The conflict's argument other than `path`.
fn other<'c>(conflict: &'c Conflict, path: &str) -> &'c str {
    if conflict.attribute == path {
        &conflict.with
    } else {
        &conflict.attribute
    }
}

#[cfg(test)]
mod tests {
    use crate::intents::AttributeDelta;
    use crate::synthesize::plan::attributes::tests::{plan_attributes, project};
    use crate::synthesize::plan::planner::tests::delta;
    use serde_json::{Value, json};

    const TEMPLATE: &str = "resource \"aws_launch_template\" \"app\" {\n  name                   = \"app\"\n  update_default_version = true\n}\n";

    /// A launch template's delta making `default` the default version, the latest `latest`.
    fn made_default(default: u64, latest: u64) -> crate::intents::Delta {
        let mut d = delta(Vec::new());
        d.resource.resource_type = "aws_launch_template".to_owned();
        d.address = Some("aws_launch_template.app".to_owned());
        for (path, value) in [("default_version", default), ("latest_version", latest)] {
            d.attributes.insert(
                path.to_owned(),
                AttributeDelta {
                    before: Some(json!(1)),
                    after: Value::from(value),
                    flags: Vec::new(),
                },
            );
        }
        d
    }

    #[test]
    fn the_latest_version_made_the_default_is_kept_by_update_default_version() {
        let plan = plan_attributes(&project(TEMPLATE), &made_default(3, 3));
        assert!(plan.steps.is_empty(), "{:?}", plan.steps);
        assert!(plan.unplanned.is_empty(), "{:?}", plan.unplanned);
        let reasons: Vec<&str> = plan.settled.iter().map(|s| s.reason.as_str()).collect();
        assert_eq!(
            reasons,
            [
                "the code sets update_default_version = true, which keeps default_version at latest_version (3): nothing to write",
                "latest_version is computed by the provider: nothing to write",
            ]
        );
    }

    #[test]
    fn an_older_default_beside_update_default_version_is_held() {
        let plan = plan_attributes(&project(TEMPLATE), &made_default(2, 3));
        assert!(plan.steps.is_empty(), "{:?}", plan.steps);
        let reasons: Vec<&str> = plan.unplanned.iter().map(|u| u.reason.as_str()).collect();
        assert_eq!(
            reasons,
            [
                "the provider refuses default_version beside update_default_version, which the code sets; update_default_version = true keeps default_version at latest_version (3), which the change moved away from: decide by hand which of the two the code keeps"
            ]
        );
    }

    #[test]
    fn without_the_conflicting_argument_the_default_version_is_written() {
        let plan = plan_attributes(
            &project("resource \"aws_launch_template\" \"app\" {\n  name = \"app\"\n}\n"),
            &made_default(2, 3),
        );
        assert!(plan.unplanned.is_empty(), "{:?}", plan.unplanned);
        let written: Vec<Value> = plan
            .steps
            .iter()
            .map(|s| serde_json::to_value(&s.call).unwrap_or_default()["input"]["name"].clone())
            .collect();
        assert_eq!(written, [json!("default_version")]);
    }
}
