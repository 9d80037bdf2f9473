//! `terraform show -json` output for a state, format version 1.x.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::{
    IndexKey, Instance, Mode, Output, PathStep, State, StateError, StateFormat, decode,
    sorted_paths,
};

#[derive(Deserialize)]
struct RawShow {
    terraform_version: Option<String>,
    /// Absent when the state is empty.
    values: Option<RawValues>,
}

#[derive(Deserialize)]
struct RawValues {
    #[serde(default)]
    outputs: BTreeMap<String, Output>,
    #[serde(default)]
    root_module: RawModule,
}

#[derive(Default, Deserialize)]
struct RawModule {
    /// Absent for the root module.
    address: Option<String>,
    #[serde(default)]
    resources: Vec<RawResource>,
    #[serde(default)]
    child_modules: Vec<RawModule>,
}

#[derive(Deserialize)]
struct RawResource {
    address: String,
    mode: Mode,
    #[serde(rename = "type")]
    resource_type: String,
    name: String,
    index: Option<IndexKey>,
    provider_name: String,
    #[serde(default)]
    schema_version: u64,
    #[serde(default)]
    values: Value,
    #[serde(default)]
    sensitive_values: Value,
    #[serde(default)]
    depends_on: Vec<String>,
    #[serde(default)]
    tainted: bool,
    deposed_key: Option<String>,
}

/// Parses `terraform show -json` output whose format version is already checked.
pub(super) fn parse(bytes: &[u8], origin: &str) -> Result<State, StateError> {
    let raw: RawShow = decode(bytes, origin)?;
    let (outputs, instances) = match raw.values {
        Some(values) => {
            let mut instances = Vec::new();
            collect_instances(values.root_module, &mut instances);
            (values.outputs, instances)
        }
        None => (BTreeMap::new(), Vec::new()),
    };
    Ok(State {
        origin: origin.to_string(),
        format: StateFormat::ShowJson,
        terraform_version: raw.terraform_version,
        serial: None,
        lineage: None,
        outputs,
        instances,
    })
}

/// Appends a module's instances, then its child modules' in order.
fn collect_instances(module: RawModule, out: &mut Vec<Instance>) {
    for resource in module.resources {
        out.push(instance(resource, module.address.clone()));
    }
    for child in module.child_modules {
        collect_instances(child, out);
    }
}

fn instance(raw: RawResource, module: Option<String>) -> Instance {
    let mut sensitive = Vec::new();
    sensitive_paths(&raw.sensitive_values, &mut Vec::new(), &mut sensitive);
    let attributes = match raw.values {
        Value::Null => Value::Object(serde_json::Map::new()),
        values => values,
    };
    Instance {
        address: raw.address,
        module,
        mode: raw.mode,
        resource_type: raw.resource_type,
        name: raw.name,
        index: raw.index,
        provider: raw.provider_name,
        schema_version: raw.schema_version,
        attributes,
        sensitive: sorted_paths(sensitive),
        private: None,
        dependencies: raw.depends_on,
        tainted: raw.tainted,
        deposed: raw.deposed_key,
    }
}

/// Turns the `sensitive_values` tree (`true` at each sensitive value, objects and arrays
/// mirroring the values around them) into the list of sensitive paths.
fn sensitive_paths(tree: &Value, prefix: &mut Vec<PathStep>, out: &mut Vec<Vec<PathStep>>) {
    match tree {
        Value::Bool(true) => out.push(prefix.clone()),
        Value::Object(fields) => {
            for (key, subtree) in fields {
                prefix.push(PathStep::Key(key.clone()));
                sensitive_paths(subtree, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) => {
            for (position, subtree) in (0u64..).zip(items) {
                prefix.push(PathStep::Index(position));
                sensitive_paths(subtree, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}
