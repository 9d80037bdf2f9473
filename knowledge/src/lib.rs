//! retrace's knowledge of AWS and Terraform.
//!
//! - [`schema`] holds what the Terraform AWS provider accepts for each resource type: its
//!   attributes (type, required / optional / computed, sensitive) and nested blocks (nesting
//!   mode, item limits), loaded from a bundled data file or from the output of
//!   `terraform providers schema -json`.
//! - [`rules`] maps CloudTrail calls (event source and API) to the Terraform resource they
//!   change: how to find its identity, which request/response values set which attributes,
//!   the kind of change and its risk. The shipped rules live in `knowledge/rules/*.toml`
//!   (format in `knowledge/rules/README.md`); [`Rule::extract`] applies one to a call.
//! - [`catalog`] holds per resource type what every stage needs to know: natural keys,
//!   attributes automation owns, whether it only links two resources, and nested blocks the
//!   state may manage as separate resources (the `[[resource]]` tables of the rule files).
//! - [`coverage`] says how far the rules cover a resource type: which write APIs create,
//!   change, delete and tag it, and which parts it needs are missing.
//! - [`dns`] compares DNS names as Route 53 does (trailing dot, case, octal escapes).
//! - [`defaults`] holds the AWS provider's documented argument defaults for the types retrace
//!   creates (`data/provider-defaults.toml`), which new resource blocks leave out.
//! - [`importable`] names the resource types the AWS provider cannot import
//!   (`data/not-importable.toml`, probed from the real provider): an object of one created
//!   outside Terraform gets a resource block without an `import` block.
//! - [`signals`] names the calls flagged for a person whatever Terraform could hold: audit
//!   logging switched off, credentials created, resources shared outside the account, code
//!   changed, remote sessions (`knowledge/signals.toml`).
//! - [`access`] says whether a call only reads when its record does not: CloudTrail's
//!   documentation, else the IAM Service Authorization Reference's access levels.
//! - [`store`] is the SQLite knowledge base: rules with their provenance (shipped, learned,
//!   reviewed) and track record, and past reconciliations by trace signature.

#![forbid(unsafe_code)]

pub mod access;
pub mod catalog;
pub mod coverage;
pub mod defaults;
pub mod dns;
pub mod importable;
pub mod rules;
pub mod schema;
pub mod signals;
pub mod store;

pub use defaults::{Defaults, DefaultsError, ResourceDefaults};
pub use importable::{ImportableError, NotImportable};
pub use rules::{
    BlockChange, Extraction, FiredFlag, FlagLevel, Kind, Missing, Requires, Risk, Rule, RuleError,
    RuleSet, RuleSpec, TagChange, TagOp, Target, Transform,
};
pub use schema::{
    AttrType, Attribute, Block, Member, NestedAttributes, NestedBlock, NestingMode, Presence,
    ProviderSchema, ResourceSchema, SchemaError, stored_form,
};
pub use store::{
    Evidence, NewReconciliation, Outcome, Provenance, Reconciliation, RuleFilter, RuleRecord,
    Stats, Store, StoreError, trace_signature,
};
