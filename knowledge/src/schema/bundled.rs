//! The loader for the bundled compact data file (`retrace-provider-schema/1`).
//!
//! The format is described at the top of `tools/gen_schema.py`, which writes it: attributes
//! are `[flags, type]`, blocks are objects with `nesting_mode`, item limits, `attributes` and
//! `blocks`. Its `notes` and `curated` members are for people and are not loaded.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::model::{Attribute, Block, NestedAttributes, NestedBlock, Presence, ResourceSchema};
use super::{Place, ProviderSchema, SchemaError};

/// The format this loader reads.
const FORMAT: &str = "retrace-provider-schema/1";

#[derive(Deserialize)]
struct Bundle {
    format: String,
    provider: String,
    provider_version: String,
    resources: BTreeMap<String, CompactBlock>,
}

#[derive(Deserialize)]
struct CompactBlock {
    /// The provider's schema version (resources only).
    version: Option<u64>,
    nesting_mode: Option<String>,
    #[serde(default)]
    min_items: u64,
    #[serde(default)]
    max_items: u64,
    #[serde(default)]
    attributes: BTreeMap<String, CompactAttribute>,
    #[serde(default)]
    blocks: BTreeMap<String, CompactBlock>,
}

#[derive(Deserialize)]
struct CompactAttribute(String, CompactType);

#[derive(Deserialize)]
#[serde(untagged)]
enum CompactType {
    Nested(CompactNested),
    Cty(Value),
}

#[derive(Deserialize)]
struct CompactNested {
    nesting_mode: String,
    #[serde(default)]
    attributes: BTreeMap<String, CompactAttribute>,
}

/// Parses the data file's text.
pub(super) fn parse(text: &str, source_name: &str) -> Result<ProviderSchema, SchemaError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let bundle: Bundle = serde_path_to_error::deserialize(&mut deserializer)
        .map_err(|e| SchemaError::json(source_name, e))?;
    let root = Place::root(source_name, "resources");
    if bundle.format != FORMAT {
        let message = format!("format \"{}\" is not \"{FORMAT}\"", bundle.format);
        return Err(Place::root(source_name, "format").invalid(message));
    }
    let resources = bundle
        .resources
        .into_iter()
        .map(|(name, raw)| {
            let version = raw.version;
            let block = block(raw, &root.child(&name))?;
            Ok((name, ResourceSchema { version, block }))
        })
        .collect::<Result<_, SchemaError>>()?;
    Ok(ProviderSchema {
        provider: bundle.provider,
        provider_version: Some(bundle.provider_version),
        resources,
    })
}

fn block(raw: CompactBlock, place: &Place<'_>) -> Result<Block, SchemaError> {
    let attributes = attributes(raw.attributes, &place.child("attributes"))?;
    let blocks = raw
        .blocks
        .into_iter()
        .map(|(name, raw)| {
            Ok((
                name.clone(),
                nested_block(raw, &place.child("blocks").child(&name))?,
            ))
        })
        .collect::<Result<_, SchemaError>>()?;
    Ok(Block { attributes, blocks })
}

fn nested_block(mut raw: CompactBlock, place: &Place<'_>) -> Result<NestedBlock, SchemaError> {
    let mode = raw
        .nesting_mode
        .take()
        .ok_or_else(|| place.invalid("a nested block needs nesting_mode"))?;
    Ok(NestedBlock {
        nesting: place.nesting(&mode)?,
        min_items: raw.min_items,
        max_items: (raw.max_items > 0).then_some(raw.max_items),
        block: block(raw, place)?,
    })
}

fn attributes(
    raw: BTreeMap<String, CompactAttribute>,
    place: &Place<'_>,
) -> Result<BTreeMap<String, Attribute>, SchemaError> {
    raw.into_iter()
        .map(|(name, raw)| Ok((name.clone(), attribute(raw, &place.child(&name))?)))
        .collect()
}

fn attribute(
    CompactAttribute(flags, ty): CompactAttribute,
    place: &Place<'_>,
) -> Result<Attribute, SchemaError> {
    let (presence, sensitive, write_only) =
        parse_flags(&flags).ok_or_else(|| place.invalid(format!("unknown flags \"{flags}\"")))?;
    let mut attribute = match ty {
        CompactType::Cty(ty) => Attribute::from_type(place.cty(&ty)?, presence),
        CompactType::Nested(nested) => {
            let nested = NestedAttributes {
                nesting: place.nesting(&nested.nesting_mode)?,
                attributes: attributes(nested.attributes, &place.child("attributes"))?,
            };
            Attribute::from_nested(nested, presence)
        }
    };
    attribute.sensitive = sensitive;
    attribute.write_only = write_only;
    Ok(attribute)
}

/// Splits flags such as `"oc"` or `"osw"` into presence, sensitive and write-only.
fn parse_flags(flags: &str) -> Option<(Presence, bool, bool)> {
    let letters = flags.trim_end_matches(['s', 'w']);
    let presence = match letters {
        "r" => Presence::Required,
        "o" => Presence::Optional,
        "c" => Presence::Computed,
        "oc" => Presence::OptionalComputed,
        _ => return None,
    };
    match &flags[letters.len()..] {
        "" => Some((presence, false, false)),
        "s" => Some((presence, true, false)),
        "w" => Some((presence, false, true)),
        "sw" => Some((presence, true, true)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::NestingMode;
    use serde_json::json;

    fn load(resources: Value) -> Result<ProviderSchema, SchemaError> {
        let document = json!({
            "format": FORMAT,
            "provider": "registry.terraform.io/hashicorp/aws",
            "provider_version": "6.0.0",
            "notes": ["ignored"],
            "resources": resources
        });
        parse(&document.to_string(), "bundle.json")
    }

    #[test]
    fn flags_cover_presence_sensitive_and_write_only() {
        assert_eq!(parse_flags("r"), Some((Presence::Required, false, false)));
        assert_eq!(
            parse_flags("oc"),
            Some((Presence::OptionalComputed, false, false))
        );
        assert_eq!(parse_flags("cs"), Some((Presence::Computed, true, false)));
        assert_eq!(parse_flags("osw"), Some((Presence::Optional, true, true)));
        for bad in ["", "x", "ro", "ows", "oss", "s"] {
            assert_eq!(parse_flags(bad), None, "{bad}");
        }
    }

    #[test]
    fn reads_attributes_blocks_and_nested_attributes() {
        let schema = load(json!({
            "aws_thing": {
                "version": 2,
                "attributes": {
                    "arn": ["c", "string"],
                    "rule": ["oc", {"nesting_mode": "set", "attributes": {"port": ["r", "number"]}}]
                },
                "blocks": {
                    "disk": {"nesting_mode": "list", "min_items": 1, "max_items": 1,
                             "attributes": {"size": ["o", "number"]}}
                }
            }
        }))
        .expect("accepted");
        assert_eq!(schema.provider_version(), Some("6.0.0"));
        assert_eq!(
            schema.resource("aws_thing").and_then(|r| r.version),
            Some(2)
        );
        assert!(schema.is_computed_only("aws_thing", "arn"));
        assert!(schema.is_set_block("aws_thing", "rule"));
        assert_eq!(
            schema
                .attribute("aws_thing", "rule.port")
                .map(|a| a.presence),
            Some(Presence::Required)
        );
        let Some(crate::schema::Member::Block(disk)) =
            schema.resource("aws_thing").and_then(|r| r.member("disk"))
        else {
            panic!("no disk block")
        };
        assert_eq!(
            (disk.nesting, disk.min_items, disk.max_items),
            (NestingMode::List, 1, Some(1))
        );
    }

    #[test]
    fn errors_name_the_field() {
        let err = load(json!({"aws_thing": {"attributes": {"arn": ["q", "string"]}}}))
            .expect_err("rejected");
        assert_eq!(
            err.to_string(),
            "bundle.json: resources.aws_thing.attributes.arn: unknown flags \"q\""
        );
        let err = load(json!({"aws_thing": {"blocks": {"disk": {}}}})).expect_err("rejected");
        assert!(
            err.to_string()
                .contains("resources.aws_thing.blocks.disk: a nested block needs"),
            "{err}"
        );
        let err = load(json!({"aws_thing": {"attributes": {"arn": ["c", {"a": 1}]}}}))
            .expect_err("rejected");
        assert!(
            err.to_string().contains("attributes.arn.type: a type is"),
            "{err}"
        );
    }

    #[test]
    fn rejects_another_format() {
        let err = parse(
            r#"{"format":"x","provider":"p","provider_version":"1","resources":{}}"#,
            "b.json",
        );
        assert!(
            err.expect_err("rejected")
                .to_string()
                .starts_with("b.json: format: format \"x\"")
        );
    }
}
