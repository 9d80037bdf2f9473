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
        "outputs": state.outputs.iter().map(|(k, o)| {
            let value_type = o.value_type.clone().unwrap_or_else(|| type_of(&o.value));
            (k.clone(), json!({"value": o.value, "type": value_type, "sensitive": o.sensitive}))
        }).collect::<serde_json::Map<_, _>>(),
        "resources": resources,
        "check_results": null,
    })
}

/// The type of a value as a state file writes it, inferred from the value (JSON does not tell
/// a list from a tuple or a map from an object; the structural types hold any value).
fn type_of(value: &Value) -> Value {
    match value {
        Value::String(_) => json!("string"),
        Value::Number(_) => json!("number"),
        Value::Bool(_) => json!("bool"),
        Value::Array(items) => json!(["tuple", items.iter().map(type_of).collect::<Vec<_>>()]),
        Value::Object(fields) => json!([
            "object",
            fields
                .iter()
                .map(|(k, v)| (k.clone(), type_of(v)))
                .collect::<serde_json::Map<_, _>>()
        ]),
        Value::Null => json!("string"),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_keep_their_type_or_get_one_from_the_value() {
        let text = json!({"version": 4, "outputs": {
            "ids": {"value": ["a"], "type": ["list", "string"]},
            "name": {"value": "web"},
            "tags": {"value": {"a": 1, "b": [true]}}
        }, "resources": []});
        let state = State::parse(text.to_string().as_bytes(), "test.tfstate").expect("a state");
        let written = tfstate_json(&state);
        assert_eq!(written["outputs"]["ids"]["type"], json!(["list", "string"]));
        assert_eq!(written["outputs"]["name"]["type"], json!("string"));
        assert_eq!(
            written["outputs"]["tags"]["type"],
            json!(["object", {"a": "number", "b": ["tuple", ["bool"]]}])
        );
    }
}
