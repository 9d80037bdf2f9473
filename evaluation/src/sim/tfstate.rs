//! Writes a [`State`] back as a version 4 state file, so a simulated cloud can be handed to
//! anything that reads Terraform state.

use reconciler::terraform::state::{IndexKey, Mode, State};
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
            "sensitive_attributes": [],
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
