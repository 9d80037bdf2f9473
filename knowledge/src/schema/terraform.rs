//! The loader for `terraform providers schema -json` output (format_version 1.x).
//!
//! Only the AWS provider's `resource_schemas` are kept; unknown members are ignored, as the
//! format asks of readers of later 1.x versions.

use std::collections::BTreeMap;
use std::io::Read;

use serde::Deserialize;
use serde_json::Value;

use super::model::{Attribute, Block, NestedAttributes, NestedBlock, Presence, ResourceSchema};
use super::{Place, ProviderSchema, SchemaError};

/// Provider addresses end with this; the registry host differs (Terraform, OpenTofu, mirrors).
const AWS_SUFFIX: &str = "/hashicorp/aws";

#[derive(Deserialize)]
struct Document {
    format_version: String,
    #[serde(default)]
    provider_schemas: BTreeMap<String, ProviderEntry>,
}

#[derive(Deserialize)]
struct ProviderEntry {
    #[serde(default)]
    resource_schemas: BTreeMap<String, RawSchema>,
}

#[derive(Deserialize)]
struct RawSchema {
    version: Option<u64>,
    block: RawBlock,
}

#[derive(Deserialize)]
struct RawBlock {
    #[serde(default)]
    attributes: BTreeMap<String, RawAttribute>,
    #[serde(default)]
    block_types: BTreeMap<String, RawBlockType>,
}

#[derive(Deserialize)]
struct RawAttribute {
    #[serde(rename = "type")]
    ty: Option<Value>,
    nested_type: Option<RawNestedType>,
    description: Option<String>,
    #[serde(default)]
    required: bool,
    #[serde(default)]
    optional: bool,
    #[serde(default)]
    computed: bool,
    #[serde(default)]
    sensitive: bool,
    #[serde(default)]
    write_only: bool,
}

#[derive(Deserialize)]
struct RawNestedType {
    #[serde(default)]
    attributes: BTreeMap<String, RawAttribute>,
    nesting_mode: String,
}

#[derive(Deserialize)]
struct RawBlockType {
    nesting_mode: String,
    block: RawBlock,
    #[serde(default)]
    min_items: u64,
    #[serde(default)]
    max_items: u64,
}

/// Reads a whole document and converts the AWS provider's resource schemas.
pub(super) fn parse<R: Read>(reader: R, source_name: &str) -> Result<ProviderSchema, SchemaError> {
    let mut deserializer = serde_json::Deserializer::from_reader(reader);
    let document: Document = serde_path_to_error::deserialize(&mut deserializer)
        .map_err(|e| SchemaError::json(source_name, e))?;
    if document.format_version.split('.').next() != Some("1") {
        return Err(SchemaError::FormatVersion {
            source_name: source_name.to_owned(),
            version: document.format_version,
        });
    }
    let (provider, entry) = aws_entry(document.provider_schemas, source_name)?;
    let place = Place::root(
        source_name,
        &format!("provider_schemas[\"{provider}\"].resource_schemas"),
    );
    let resources = entry
        .resource_schemas
        .into_iter()
        .map(|(name, raw)| Ok((name.clone(), resource(raw, &place.child(&name))?)))
        .collect::<Result<_, SchemaError>>()?;
    Ok(ProviderSchema {
        provider,
        provider_version: None,
        resources,
    })
}

fn aws_entry(
    providers: BTreeMap<String, ProviderEntry>,
    source_name: &str,
) -> Result<(String, ProviderEntry), SchemaError> {
    let found = providers.keys().cloned().collect::<Vec<_>>().join(", ");
    providers
        .into_iter()
        .find(|(address, _)| address.ends_with(AWS_SUFFIX))
        .ok_or_else(|| SchemaError::MissingProvider {
            source_name: source_name.to_owned(),
            found,
        })
}

fn resource(raw: RawSchema, place: &Place<'_>) -> Result<ResourceSchema, SchemaError> {
    Ok(ResourceSchema {
        version: raw.version,
        block: block(raw.block, &place.child("block"))?,
    })
}

fn block(raw: RawBlock, place: &Place<'_>) -> Result<Block, SchemaError> {
    let attributes = attributes(raw.attributes, &place.child("attributes"))?;
    let blocks = raw
        .block_types
        .into_iter()
        .map(|(name, raw)| {
            Ok((
                name.clone(),
                block_type(raw, &place.child("block_types").child(&name))?,
            ))
        })
        .collect::<Result<_, SchemaError>>()?;
    Ok(Block { attributes, blocks })
}

fn block_type(raw: RawBlockType, place: &Place<'_>) -> Result<NestedBlock, SchemaError> {
    Ok(NestedBlock {
        nesting: place.nesting(&raw.nesting_mode)?,
        min_items: raw.min_items,
        max_items: (raw.max_items > 0).then_some(raw.max_items),
        block: block(raw.block, &place.child("block"))?,
    })
}

fn attributes(
    raw: BTreeMap<String, RawAttribute>,
    place: &Place<'_>,
) -> Result<BTreeMap<String, Attribute>, SchemaError> {
    raw.into_iter()
        .map(|(name, raw)| Ok((name.clone(), attribute(raw, &place.child(&name))?)))
        .collect()
}

fn attribute(raw: RawAttribute, place: &Place<'_>) -> Result<Attribute, SchemaError> {
    let presence =
        Presence::from_flags(raw.required, raw.optional, raw.computed).ok_or_else(|| {
            place.invalid("flags must be required alone, or optional and/or computed")
        })?;
    let mut attribute = match (raw.ty, raw.nested_type) {
        (Some(ty), None) => Attribute::from_type(place.cty(&ty)?, presence),
        (None, Some(nested)) => Attribute::from_nested(nested_type(nested, place)?, presence),
        _ => return Err(place.invalid("an attribute has exactly one of type and nested_type")),
    };
    attribute.sensitive = raw.sensitive;
    attribute.write_only = raw.write_only;
    attribute.description = raw.description;
    Ok(attribute)
}

fn nested_type(raw: RawNestedType, place: &Place<'_>) -> Result<NestedAttributes, SchemaError> {
    let place = place.child("nested_type");
    Ok(NestedAttributes {
        nesting: place.nesting(&raw.nesting_mode)?,
        attributes: attributes(raw.attributes, &place.child("attributes"))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::NestingMode;
    use serde_json::json;

    fn load(document: Value) -> Result<ProviderSchema, SchemaError> {
        parse(document.to_string().as_bytes(), "test.json")
    }

    fn with_resource(block: Value) -> Value {
        json!({
            "format_version": "1.0",
            "provider_schemas": {
                "registry.terraform.io/hashicorp/aws": {
                    "resource_schemas": {"aws_thing": {"version": 2, "block": block}}
                }
            }
        })
    }

    #[test]
    fn reads_nested_type_attributes_with_their_flags() {
        let schema = load(with_resource(json!({
            "attributes": {
                "rule": {
                    "nested_type": {
                        "nesting_mode": "list",
                        "attributes": {"port": {"type": "number", "required": true}}
                    },
                    "optional": true
                }
            }
        })))
        .expect("accepted");
        let rule = schema.attribute("aws_thing", "rule").expect("accepted");
        assert_eq!(rule.ty.to_string(), "list(object({port = number}))");
        assert_eq!(
            rule.nested.as_ref().map(|n| n.nesting),
            Some(NestingMode::List)
        );
        assert_eq!(
            schema
                .attribute("aws_thing", "rule.port")
                .map(|a| a.presence),
            Some(Presence::Required)
        );
        assert_eq!(
            schema.resource("aws_thing").and_then(|r| r.version),
            Some(2)
        );
    }

    #[test]
    fn accepts_other_registry_hosts_and_later_minor_versions() {
        let document = json!({
            "format_version": "1.7",
            "provider_schemas": {"registry.opentofu.org/hashicorp/aws": {"resource_schemas": {}}}
        });
        assert_eq!(
            load(document).expect("accepted").provider(),
            "registry.opentofu.org/hashicorp/aws"
        );
    }

    #[test]
    fn rejects_other_major_versions() {
        let err =
            load(json!({"format_version": "2.0", "provider_schemas": {}})).expect_err("rejected");
        assert!(matches!(err, SchemaError::FormatVersion { .. }), "{err}");
    }

    #[test]
    fn missing_provider_lists_what_is_there() {
        let document = json!({
            "format_version": "1.0",
            "provider_schemas": {"registry.terraform.io/hashicorp/google": {}}
        });
        let err = load(document).expect_err("rejected").to_string();
        assert!(
            err.contains("found: registry.terraform.io/hashicorp/google"),
            "{err}"
        );
    }

    #[test]
    fn bad_flags_and_types_name_the_field() {
        let err = load(with_resource(
            json!({"attributes": {"arn": {"type": "string"}}}),
        ))
        .expect_err("rejected");
        let field = "provider_schemas[\"registry.terraform.io/hashicorp/aws\"].resource_schemas.aws_thing.block.attributes.arn";
        assert!(
            err.to_string()
                .starts_with(&format!("test.json: {field}: flags")),
            "{err}"
        );
        let err = load(with_resource(
            json!({"attributes": {"arn": {"type": "text", "computed": true}}}),
        ))
        .expect_err("rejected");
        assert!(
            err.to_string()
                .contains("attributes.arn.type: unknown primitive type"),
            "{err}"
        );
        let err = load(with_resource(
            json!({"attributes": {"arn": {"computed": true}}}),
        ))
        .expect_err("rejected");
        assert!(
            err.to_string()
                .contains("exactly one of type and nested_type"),
            "{err}"
        );
    }

    #[test]
    fn bad_nesting_mode_names_the_block() {
        let block = json!({"block_types": {"rule": {"nesting_mode": "bag", "block": {}}}});
        let err = load(with_resource(block))
            .expect_err("rejected")
            .to_string();
        assert!(
            err.contains("block.block_types.rule.nesting_mode: unknown nesting mode"),
            "{err}"
        );
    }

    #[test]
    fn shape_errors_carry_the_json_path() {
        let err = load(with_resource(
            json!({"attributes": {"arn": {"type": "string", "computed": "yes"}}}),
        ))
        .expect_err("rejected");
        let SchemaError::Json { field, line, .. } = &err else {
            panic!("{err}")
        };
        assert!(
            field.ends_with("aws_thing.block.attributes.arn.computed"),
            "{field}"
        );
        assert_eq!(*line, 1);
    }

    #[test]
    fn zero_max_items_means_unlimited() {
        let block =
            json!({"block_types": {"rule": {"nesting_mode": "set", "block": {}, "min_items": 1}}});
        let schema = load(with_resource(block)).expect("accepted");
        let Some(crate::schema::Member::Block(rule)) =
            schema.resource("aws_thing").and_then(|r| r.member("rule"))
        else {
            panic!("no block")
        };
        assert_eq!(
            (rule.min_items, rule.max_items, rule.nesting),
            (1, None, NestingMode::Set)
        );
    }
}
