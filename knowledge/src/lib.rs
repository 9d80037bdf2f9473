//! retrace's knowledge of AWS and Terraform.
//!
//! [`schema`] holds what the Terraform AWS provider accepts for each resource type: its
//! attributes (type, required / optional / computed, sensitive) and nested blocks (nesting
//! mode, item limits), loaded from a bundled data file or from the output of
//! `terraform providers schema -json`.

#![forbid(unsafe_code)]

pub mod rules;
pub mod schema;

pub use schema::{
    AttrType, Attribute, Block, Member, NestedAttributes, NestedBlock, NestingMode, Presence,
    ProviderSchema, ResourceSchema, SchemaError,
};
