//! Completes instances to the provider schema's shape, as the provider itself stores them, so
//! a real `terraform plan` of an unchanged configuration finds nothing to change.
//!
//! Instances made from API calls (a resource created out of band) carry only what the calls
//! said. Terraform stores every attribute of the type: unset ones as null, unset list and set
//! blocks as empty lists, and it marks every attribute the schema calls sensitive (a missing
//! mark is itself a planned change). Values already present are never touched.

use super::{Instance, Mode, PathStep, State};
use knowledge::schema::{Block, NestingMode, ProviderSchema};
use serde_json::{Map, Value};

/// Completes every managed instance whose type the schema covers.
pub fn complete(state: &mut State, schema: &ProviderSchema) {
    for instance in &mut state.instances {
        if instance.mode == Mode::Managed {
            complete_instance(instance, schema);
        }
    }
}

/// Fills the missing attributes and sensitive marks of one instance, and its schema version
/// when it has none.
fn complete_instance(instance: &mut Instance, schema: &ProviderSchema) {
    let Some(resource) = schema.resource(&instance.resource_type) else {
        return;
    };
    if let Value::Object(attributes) = &mut instance.attributes {
        fill(attributes, &resource.block);
    }
    if instance.schema_version == 0 {
        instance.schema_version = resource.version.unwrap_or(0);
    }
    for (name, attribute) in &resource.block.attributes {
        let path = vec![PathStep::Key(name.clone())];
        if attribute.sensitive && !instance.sensitive.contains(&path) {
            instance.sensitive.push(path);
        }
    }
}

/// Adds the block's missing attributes (null) and nested blocks (an empty list, or null for a
/// single block), and completes the items of nested blocks present.
fn fill(object: &mut Map<String, Value>, block: &Block) {
    for name in block.attributes.keys() {
        object.entry(name.clone()).or_insert(Value::Null);
    }
    for (name, nested) in &block.blocks {
        let value = object.entry(name.clone()).or_insert_with(|| {
            if nested.nesting == NestingMode::Single {
                Value::Null
            } else {
                Value::Array(Vec::new())
            }
        });
        match value {
            Value::Array(items) => items
                .iter_mut()
                .filter_map(Value::as_object_mut)
                .for_each(|item| fill(item, &nested.block)),
            Value::Object(item) => fill(item, &nested.block),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state(resource_type: &str, attributes: Value) -> State {
        let text = json!({"version": 4, "resources": [{"mode": "managed", "type": resource_type,
            "name": "x", "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
            "instances": [{"schema_version": 0, "attributes": attributes}]}]});
        State::parse(text.to_string().as_bytes(), "test.tfstate").expect("a state")
    }

    #[test]
    fn a_created_instance_gets_every_attribute_block_mark_and_version() {
        let schema = ProviderSchema::bundled().expect("bundled schema");
        let mut observed = state("aws_db_instance", json!({"id": "db-1", "engine": "mysql"}));
        complete(&mut observed, schema);
        let instance = &observed.instances[0];
        // Present values are kept; the rest of the 5.100 schema is there as null or [].
        assert_eq!(instance.attributes["engine"], "mysql");
        assert_eq!(instance.attributes["password"], Value::Null);
        assert_eq!(instance.attributes["blue_green_update"], json!([]));
        assert!(
            instance.attributes.get("region").is_none(),
            "5.x has no region"
        );
        // aws_db_instance is at schema version 2 in provider 5.100.
        assert_eq!(instance.schema_version, 2);
        // password and password_wo are both sensitive in the provider's schema.
        for name in ["password", "password_wo"] {
            assert!(
                instance
                    .sensitive
                    .contains(&vec![PathStep::Key(name.to_owned())]),
                "{name} marked"
            );
        }
    }

    #[test]
    fn items_of_present_blocks_are_completed_and_unknown_types_left_alone() {
        let schema = ProviderSchema::bundled().expect("bundled schema");
        let mut observed = state(
            "aws_s3_bucket_versioning",
            json!({"bucket": "b", "versioning_configuration": [{"status": "Enabled"}]}),
        );
        complete(&mut observed, schema);
        assert_eq!(
            observed.instances[0].attributes["versioning_configuration"],
            json!([{"status": "Enabled", "mfa_delete": null}])
        );
        let mut other = state("aws_made_up", json!({"id": "1"}));
        complete(&mut other, schema);
        assert_eq!(other.instances[0].attributes, json!({"id": "1"}));
    }
}
