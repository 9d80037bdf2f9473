//! Writes a [`State`] back as a version 4 state file, so an observed or simulated cloud can be
//! handed to anything that reads Terraform state (`terraform plan -refresh=false`).

use super::{IndexKey, Mode, PathStep, State};
use serde_json::{Value, json};

/// The state as a version 4 state file document. Instances of one resource stay together
/// under one `resources` entry, in the order the resources first appear.
pub fn tfstate_json(state: &State) -> Value {
    let mut resources: Vec<Value> = Vec::new();
    let mut keys: Vec<(Option<String>, Mode, String, String)> = Vec::new();
    for instance in &state.instances {
        let key = (
            instance.module.clone(),
            instance.mode,
            instance.resource_type.clone(),
            instance.name.clone(),
        );
        let at = match keys.iter().position(|k| *k == key) {
            Some(at) => at,
            None => {
                keys.push(key);
                let mut resource = json!({
                    "mode": if instance.mode == Mode::Data { "data" } else { "managed" },
                    "type": instance.resource_type,
                    "name": instance.name,
                    "provider": format!("provider[\"{}\"]", instance.provider),
                    "instances": [],
                });
                if let Some(module) = &instance.module {
                    resource["module"] = json!(module);
                }
                resources.push(resource);
                resources.len() - 1
            }
        };
        let mut object = json!({
            "schema_version": instance.schema_version,
            "attributes": instance.attributes,
            "sensitive_attributes": instance.sensitive.iter().map(|p| sensitive_path(p)).collect::<Vec<_>>(),
            "dependencies": instance.dependencies,
        });
        match &instance.index {
            Some(IndexKey::Int(n)) => object["index_key"] = json!(n),
            Some(IndexKey::Str(s)) => object["index_key"] = json!(s),
            None => {}
        }
        if let Some(private) = &instance.private {
            object["private"] = json!(private);
        }
        if let Some(array) = resources[at]["instances"].as_array_mut() {
            array.push(object);
        }
    }
    json!({
        "version": 4,
        "terraform_version": state.terraform_version.clone().unwrap_or_else(|| "1.9.8".to_owned()),
        "serial": state.serial.unwrap_or(1),
        "lineage": state.lineage.clone().unwrap_or_default(),
        "outputs": state.outputs.iter().map(|(k, o)| (k.clone(), json!({"value": o.value, "sensitive": o.sensitive}))).collect::<serde_json::Map<_, _>>(),
        "resources": resources,
        "check_results": null,
    })
}

/// A sensitive attribute path as a state file writes it: `get_attr` steps for names (a map key
/// reads as a name too, since the model does not tell them apart), `index` steps for positions.
fn sensitive_path(path: &[PathStep]) -> Value {
    let steps: Vec<Value> = path
        .iter()
        .map(|step| match step {
            PathStep::Key(name) => json!({"type": "get_attr", "value": name}),
            PathStep::Index(n) => json!({"type": "index", "value": {"value": n, "type": "number"}}),
        })
        .collect();
    Value::Array(steps)
}
