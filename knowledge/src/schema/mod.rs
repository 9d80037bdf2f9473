//! Provider schema knowledge for the Terraform AWS provider.
//!
//! Two loaders fill the same types. [`ProviderSchema::bundled`] reads the data file shipped in
//! this crate (`data/aws-provider-schema.json`, made by `tools/gen_schema.py`); it covers the
//! common resource types. [`ProviderSchema::from_terraform_json`] reads the output of
//! `terraform providers schema -json` for whatever provider version a user has installed.
//!
//! Paths are dotted names through nested blocks and object-holding attributes, e.g.
//! `ingress.from_port` or `root_block_device.volume_size`.

mod bundled;
mod cty;
mod error;
mod model;
mod stored;
mod terraform;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::OnceLock;

pub use cty::AttrType;
pub use error::SchemaError;
pub use model::{
    Attribute, Block, Member, NestedAttributes, NestedBlock, NestingMode, Presence, ResourceSchema,
};
pub use stored::stored_form;

/// The bundled data file, embedded at build time.
const BUNDLED_JSON: &str = include_str!("../../data/aws-provider-schema.json");
/// How errors name the bundled data file.
const BUNDLED_NAME: &str = "knowledge/data/aws-provider-schema.json";
/// How errors name a schema stream read without a file name.
const STREAM_NAME: &str = "terraform providers schema -json output";

/// The resource schemas of one provider, by resource type.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderSchema {
    provider: String,
    provider_version: Option<String>,
    resources: BTreeMap<String, ResourceSchema>,
}

impl ProviderSchema {
    /// The schema bundled with this crate, parsed on first use and shared afterwards.
    pub fn bundled() -> Result<&'static ProviderSchema, SchemaError> {
        static BUNDLED: OnceLock<Result<ProviderSchema, SchemaError>> = OnceLock::new();
        BUNDLED
            .get_or_init(|| bundled::parse(BUNDLED_JSON, BUNDLED_NAME))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Reads the AWS provider's resource schemas from `terraform providers schema -json` output.
    pub fn from_terraform_json<R: Read>(reader: R) -> Result<Self, SchemaError> {
        terraform::parse(BufReader::new(reader), STREAM_NAME)
    }

    /// Like [`ProviderSchema::from_terraform_json`], reading a file and naming it in errors.
    pub fn from_terraform_json_file(path: &Path) -> Result<Self, SchemaError> {
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| SchemaError::Read {
            source_name: name.clone(),
            message: e.to_string(),
        })?;
        terraform::parse(BufReader::new(file), &name)
    }

    /// The provider's source address, e.g. `registry.terraform.io/hashicorp/aws`.
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// The provider version the schema describes, when the source says.
    pub fn provider_version(&self) -> Option<&str> {
        self.provider_version.as_deref()
    }

    /// The resource types known, in name order.
    pub fn resource_types(&self) -> impl Iterator<Item = &str> {
        self.resources.keys().map(String::as_str)
    }

    /// The schema of one resource type, e.g. `aws_instance`.
    pub fn resource(&self, resource_type: &str) -> Option<&ResourceSchema> {
        self.resources.get(resource_type)
    }

    /// The attribute at a dotted path in a resource type, e.g. (`aws_security_group`,
    /// `ingress.from_port`); `None` for an unknown type or path, or a path naming a block.
    pub fn attribute(&self, resource_type: &str, path: &str) -> Option<&Attribute> {
        self.resource(resource_type)?.attribute(path)
    }

    /// Whether the path names repeated blocks whose order does not matter (see
    /// [`ResourceSchema::is_set_block`]); false for unknown types and paths.
    pub fn is_set_block(&self, resource_type: &str, path: &str) -> bool {
        self.resource(resource_type)
            .is_some_and(|r| r.is_set_block(path))
    }

    /// Whether the path names an attribute only the provider sets.
    pub fn is_computed_only(&self, resource_type: &str, path: &str) -> bool {
        self.presence(resource_type, path) == Some(Presence::Computed)
    }

    /// Whether the path names an attribute the configuration may set and the provider fills
    /// in when it does not.
    pub fn is_optional_computed(&self, resource_type: &str, path: &str) -> bool {
        self.presence(resource_type, path) == Some(Presence::OptionalComputed)
    }

    fn presence(&self, resource_type: &str, path: &str) -> Option<Presence> {
        self.attribute(resource_type, path).map(|a| a.presence)
    }
}

/// Where a loader is in its source, for errors that name the field.
struct Place<'a> {
    source_name: &'a str,
    field: String,
}

impl<'a> Place<'a> {
    fn root(source_name: &'a str, field: &str) -> Self {
        Self {
            source_name,
            field: field.to_owned(),
        }
    }

    fn child(&self, part: &str) -> Self {
        Self {
            source_name: self.source_name,
            field: format!("{}.{part}", self.field),
        }
    }

    fn invalid(&self, message: impl Into<String>) -> SchemaError {
        SchemaError::Invalid {
            source_name: self.source_name.to_owned(),
            field: self.field.clone(),
            message: message.into(),
        }
    }

    fn nesting(&self, name: &str) -> Result<NestingMode, SchemaError> {
        NestingMode::parse(name).ok_or_else(|| {
            self.child("nesting_mode")
                .invalid(format!("unknown nesting mode \"{name}\""))
        })
    }

    fn cty(&self, value: &serde_json::Value) -> Result<AttrType, SchemaError> {
        AttrType::from_json(value).map_err(|message| self.child("type").invalid(message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_parses_once_and_is_shared() {
        let first = ProviderSchema::bundled().expect("bundled data loads");
        let second = ProviderSchema::bundled().expect("bundled data loads");
        assert!(std::ptr::eq(first, second));
        assert_eq!(first.provider(), "registry.terraform.io/hashicorp/aws");
        assert!(first.provider_version().is_some());
    }

    #[test]
    fn lookups_on_unknown_types_are_empty() {
        let schema = ProviderSchema::bundled().expect("bundled data loads");
        assert!(schema.resource("aws_nothing").is_none());
        assert!(schema.attribute("aws_nothing", "id").is_none());
        assert!(!schema.is_set_block("aws_nothing", "ingress"));
        assert!(!schema.is_computed_only("aws_nothing", "arn"));
        assert!(!schema.is_optional_computed("aws_nothing", "id"));
    }

    #[test]
    fn missing_file_is_named() {
        let err = ProviderSchema::from_terraform_json_file(Path::new("/nonexistent/schema.json"))
            .expect_err("rejected");
        assert!(
            err.to_string()
                .starts_with("/nonexistent/schema.json: cannot read"),
            "{err}"
        );
    }

    #[test]
    fn place_names_source_and_field() {
        let place = Place::root("schema.json", "resource_schemas").child("aws_vpc");
        let err = place.invalid("bad");
        assert_eq!(
            err.to_string(),
            "schema.json: resource_schemas.aws_vpc: bad"
        );
        let err = place.nesting("bag").expect_err("rejected");
        assert!(
            err.to_string()
                .contains("aws_vpc.nesting_mode: unknown nesting mode \"bag\""),
            "{err}"
        );
    }
}
