//! State files, format version 4: what `terraform.tfstate` holds and `terraform state pull`
//! prints.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::{
    IndexKey, Instance, Mode, Output, PathStep, State, StateError, StateFormat, decode,
    instance_address, sorted_paths,
};

#[derive(Deserialize)]
struct RawState {
    terraform_version: Option<String>,
    serial: Option<u64>,
    lineage: Option<String>,
    #[serde(default)]
    outputs: BTreeMap<String, Output>,
    #[serde(default)]
    resources: Vec<RawResource>,
}

#[derive(Deserialize)]
struct RawResource {
    module: Option<String>,
    mode: Mode,
    #[serde(rename = "type")]
    resource_type: String,
    name: String,
    provider: String,
    #[serde(default)]
    instances: Vec<RawInstance>,
}

#[derive(Deserialize)]
struct RawInstance {
    index_key: Option<IndexKey>,
    status: Option<String>,
    deposed: Option<String>,
    #[serde(default)]
    schema_version: u64,
    attributes: Option<Value>,
    /// Attributes of a resource not rewritten since Terraform 0.11, as flat strings.
    attributes_flat: Option<BTreeMap<String, String>>,
    #[serde(default)]
    sensitive_attributes: Vec<Vec<CtyStep>>,
    private: Option<String>,
    #[serde(default)]
    dependencies: Vec<String>,
}

/// A step of a sensitive attribute path, as cty writes it.
#[derive(Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
enum CtyStep {
    GetAttr(String),
    Index(CtyKey),
}

/// The typed key of a cty index step: `{"value": 0, "type": "number"}`.
#[derive(Deserialize)]
struct CtyKey {
    value: CtyIndex,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum CtyIndex {
    Position(u64),
    Key(String),
}

/// Parses a state file already known to be version 4.
pub(super) fn parse(bytes: &[u8], origin: &str) -> Result<State, StateError> {
    let raw: RawState = decode(bytes, origin)?;
    let instances = raw
        .resources
        .into_iter()
        .flat_map(resource_instances)
        .collect();
    Ok(State {
        origin: origin.to_string(),
        format: StateFormat::Tfstate,
        terraform_version: raw.terraform_version,
        serial: raw.serial,
        lineage: raw.lineage,
        outputs: raw.outputs,
        instances,
    })
}

fn resource_instances(resource: RawResource) -> impl Iterator<Item = Instance> {
    let provider = provider_source(&resource.provider).to_string();
    resource.instances.into_iter().map(move |raw| Instance {
        address: instance_address(
            resource.module.as_deref(),
            resource.mode,
            &resource.resource_type,
            &resource.name,
            raw.index_key.as_ref(),
        ),
        module: resource.module.clone(),
        mode: resource.mode,
        resource_type: resource.resource_type.clone(),
        name: resource.name.clone(),
        index: raw.index_key,
        provider: provider.clone(),
        schema_version: raw.schema_version,
        attributes: attributes(raw.attributes, raw.attributes_flat),
        sensitive: sorted_paths(raw.sensitive_attributes.into_iter().map(path).collect()),
        private: raw.private,
        dependencies: raw.dependencies,
        tainted: raw.status.as_deref() == Some("tainted"),
        deposed: raw.deposed,
    })
}

/// `registry.terraform.io/hashicorp/aws` out of `module.x.provider["registry.terraform.io/hashicorp/aws"].alias`.
fn provider_source(provider: &str) -> &str {
    provider
        .split_once("provider[\"")
        .and_then(|(_, rest)| rest.split_once("\"]"))
        .map_or(provider, |(source, _)| source)
}

fn attributes(nested: Option<Value>, flat: Option<BTreeMap<String, String>>) -> Value {
    match (nested, flat) {
        (Some(nested), _) => nested,
        (None, Some(flat)) => flat
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect(),
        (None, None) => Value::Object(serde_json::Map::new()),
    }
}

fn path(steps: Vec<CtyStep>) -> Vec<PathStep> {
    steps
        .into_iter()
        .map(|step| match step {
            CtyStep::GetAttr(name)
            | CtyStep::Index(CtyKey {
                value: CtyIndex::Key(name),
            }) => PathStep::Key(name),
            CtyStep::Index(CtyKey {
                value: CtyIndex::Position(n),
            }) => PathStep::Index(n),
        })
        .collect()
}
