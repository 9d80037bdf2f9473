//! The built-in, reconciliation-aware plan check.

use super::{Check, Difference, ValidateError, Validation, Validator};
use crate::intents::same_value;
use crate::terraform::config::{LoadOptions, Project, ResourceInstance};
use crate::terraform::functions::Value as Config;
use crate::terraform::state::{Instance, Mode};
use knowledge::stored_form;
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

/// Evaluates the patched configuration and compares it with the observed state: see the
/// module documentation of [`super`]. It holds the unpatched configuration, loaded once by
/// the run, to tell what the patch changed.
#[derive(Debug)]
pub struct PlanCheck<'a> {
    before: &'a Project,
}

impl<'a> PlanCheck<'a> {
    /// The check of patches to `before`, the configuration of the root a [`Check`] names,
    /// loaded with its var files and state.
    pub fn new(before: &'a Project) -> PlanCheck<'a> {
        PlanCheck { before }
    }
}

impl Validator for PlanCheck<'_> {
    fn name(&self) -> &'static str {
        "plan-check"
    }

    fn available(&self, _root: &Path) -> Result<(), String> {
        Ok(())
    }

    fn validate(&self, check: &Check) -> Result<Validation, ValidateError> {
        let load = |dir: &Path| {
            let options = LoadOptions {
                var_files: check.var_files.to_vec(),
                state: Some(check.state),
                ..LoadOptions::default()
            };
            let changed = check.changed.keys().map(String::as_str);
            self.before
                .reload(dir, &options, changed)
                .map_err(|e| ValidateError::Load(e.to_string()))
        };
        let after = check
            .sandbox
            .with_patch(check.outside, check.changed, load)?;
        let observed: BTreeMap<&str, &Instance> = check
            .observed
            .instances
            .iter()
            .filter(|i| i.mode == Mode::Managed && i.deposed.is_none())
            .map(|i| (i.address.as_str(), i))
            .collect();
        let mut differences = Vec::new();
        for address in check.touched {
            if excused(check, address, "") {
                continue;
            }
            let config = after.instance(address);
            let cloud = observed.get(address.as_str()).copied();
            compare_instance(check, address, config, cloud, &mut differences);
        }
        let collateral = collateral(check, self.before, &after);
        Ok(Validation {
            validator: self.name().to_owned(),
            passed: differences.is_empty() && collateral.is_empty(),
            differences,
            collateral,
            note: None,
        })
    }
}

fn excused(check: &Check, address: &str, attribute: &str) -> bool {
    check.excused.iter().any(|(a, attr)| {
        a == address
            && (attr.is_empty() || attribute == attr || attribute.starts_with(&format!("{attr}.")))
    })
}

fn compare_instance(
    check: &Check,
    address: &str,
    config: Option<&ResourceInstance>,
    cloud: Option<&Instance>,
    out: &mut Vec<Difference>,
) {
    match (config, cloud) {
        (None, None) => {}
        (Some(c), None) => out.push(Difference {
            address: address.to_owned(),
            attribute: String::new(),
            config: c.attributes.to_json().unwrap_or(Value::Null),
            observed: Value::Null,
        }),
        (None, Some(_)) => out.push(Difference {
            address: address.to_owned(),
            attribute: String::new(),
            config: Value::Null,
            observed: Value::String("exists".into()),
        }),
        (Some(c), Some(o)) => {
            let mut found = Vec::new();
            compare_object(&c.attributes, &o.attributes, "", &mut found);
            out.extend(
                found
                    .into_iter()
                    .filter(|(path, _, _)| !excused(check, address, path))
                    .filter(|(path, config, observed)| {
                        !same_value(&stored_form(&o.resource_type, path, config), observed)
                    })
                    .map(|(attribute, config, observed)| Difference {
                        address: address.to_owned(),
                        attribute,
                        config,
                        observed,
                    }),
            );
        }
    }
}

type Found = Vec<(String, Value, Value)>;

/// Compares configured arguments with observed attributes: every argument the configuration
/// sets must match; unset (null) and unknown arguments are skipped, as Terraform leaves
/// optional and computed values alone.
fn compare_object(config: &Config, observed: &Value, prefix: &str, out: &mut Found) {
    let Config::Object(map) = config else {
        return;
    };
    for (key, value) in map {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        let seen = observed.get(key).unwrap_or(&Value::Null);
        compare_value(value, seen, &path, out);
    }
}

fn compare_value(config: &Config, observed: &Value, path: &str, out: &mut Found) {
    if matches!(config, Config::Null) || config.contains_unknown() {
        return;
    }
    match config {
        Config::List(items) | Config::Set(items)
            if items.iter().any(|i| matches!(i, Config::Object(_))) =>
        {
            if !blocks_match(items, observed) {
                out.push((
                    path.to_owned(),
                    config.to_json().unwrap_or(Value::Null),
                    observed.clone(),
                ));
            }
        }
        _ => {
            let json = config.to_json().unwrap_or(Value::Null);
            if !(same_value(&json, observed) || (is_empty(&json) && observed.is_null())) {
                out.push((path.to_owned(), json, observed.clone()));
            }
        }
    }
}

fn is_empty(v: &Value) -> bool {
    v.as_array().is_some_and(Vec::is_empty) || v.as_object().is_some_and(|m| m.is_empty())
}

/// Nested blocks match when there are as many as observed and each configured block matches a
/// distinct observed one on the arguments it sets (blocks are sets to Terraform).
fn blocks_match(items: &[Config], observed: &Value) -> bool {
    let seen: &[Value] = observed.as_array().map_or(&[], Vec::as_slice);
    if seen.len() != items.len() {
        return false;
    }
    let mut used = vec![false; seen.len()];
    items.iter().all(|item| {
        let hit = seen.iter().enumerate().position(|(i, o)| {
            if used[i] {
                return false;
            }
            let mut found = Vec::new();
            compare_object(item, o, "", &mut found);
            found.is_empty()
        });
        hit.map(|i| used[i] = true).is_some()
    })
}

/// Instances whose evaluated arguments the patch changed although no intent touched them.
/// An instance's arguments as JSON without null members: Terraform treats an argument set to
/// null exactly as one left out.
fn unset_nulls(attributes: &crate::terraform::functions::Value) -> Value {
    fn strip(v: Value) -> Value {
        match v {
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k, strip(v)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.into_iter().map(strip).collect()),
            other => other,
        }
    }
    strip(attributes.to_json().unwrap_or(Value::Null))
}

/// The instance `old` is in the patched configuration: at its address, or at `[0]` when the
/// block gained `count` (Terraform moves a no-key instance to index 0, and the planner writes
/// the `moved` block saying so).
fn moved_to<'p>(after: &'p Project, old: &ResourceInstance) -> Option<&'p ResourceInstance> {
    after.instance(&old.address).or_else(|| match old.index {
        None => after.instance(&format!("{}[0]", old.address)),
        Some(_) => None,
    })
}

fn collateral(check: &Check, before: &Project, after: &Project) -> Vec<Difference> {
    let touched: HashSet<&str> = check.touched.iter().map(String::as_str).collect();
    let touched = |a: &str| touched.contains(a);
    let mut out = Vec::new();
    for old in before.instances().filter(|i| !touched(&i.address)) {
        let new = moved_to(after, old);
        let (config, observed) = match new {
            None => (Value::Null, old.attributes.to_json().unwrap_or(Value::Null)),
            Some(new) if unset_nulls(&new.attributes) != unset_nulls(&old.attributes) => (
                new.attributes.to_json().unwrap_or(Value::Null),
                old.attributes.to_json().unwrap_or(Value::Null),
            ),
            Some(_) => continue,
        };
        out.push(Difference {
            address: old.address.clone(),
            attribute: String::new(),
            config,
            observed,
        });
    }
    for new in after.instances() {
        let moved_from = new
            .address
            .strip_suffix("[0]")
            .is_some_and(|old| before.instance(old).is_some() && after.instance(old).is_none());
        if !touched(&new.address) && before.instance(&new.address).is_none() && !moved_from {
            out.push(Difference {
                address: new.address.clone(),
                attribute: String::new(),
                config: new.attributes.to_json().unwrap_or(Value::Null),
                observed: Value::Null,
            });
        }
    }
    out
}
