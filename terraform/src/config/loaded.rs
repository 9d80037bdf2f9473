//! What loading records of each module instance and resource instance, for tracing values
//! and counting uses afterwards.

use std::collections::BTreeMap;

use hcl::edit::expr::Expression;

use super::expand::Key;
use super::model::{ResourceInstance, VariableSource};
use crate::functions::{EvalScope, Value};

/// One instance of a module: the root, or one per call (and per key of its `count` or
/// `for_each`).
#[derive(Debug, Clone)]
pub(super) struct ModuleInstance {
    /// `module.a["x"].module.b`, or `None` for the root.
    pub path: Option<String>,
    /// Index of its declarations.
    pub decls: usize,
    /// The call that made it, `None` for the root.
    pub call: Option<CallSite>,
    /// Its scope once locals and module calls are evaluated (no `each` or `count`).
    pub scope: EvalScope,
    /// Its variables.
    pub variables: BTreeMap<String, VarRecord>,
    /// Its locals' values.
    pub locals: BTreeMap<String, Value>,
    /// Its outputs' values.
    pub outputs: BTreeMap<String, Value>,
}

/// The module call that made a module instance.
#[derive(Debug, Clone)]
pub(super) struct CallSite {
    /// The calling module instance.
    pub parent: usize,
    /// The index of the call among the parent's module blocks.
    pub call: usize,
    /// The instance key of the call.
    pub key: Key,
}

/// A variable's value and where it came from.
#[derive(Debug, Clone)]
pub(super) struct VarRecord {
    /// The value after type conversion.
    pub value: Value,
    /// Where it came from.
    pub source: VariableSource,
    /// The expression the value was written as (a default or tfvars value), if any.
    pub expr: Option<Expression>,
}

/// A resource instance and what is needed to trace its attributes.
#[derive(Debug, Clone)]
pub(super) struct InstanceRecord {
    /// What the project shows.
    pub public: ResourceInstance,
    /// The module instance.
    pub module: usize,
    /// The index of the block among the module's resources.
    pub decl: usize,
    /// The instance key.
    pub key: Key,
}

/// A variable or local of one module instance (by index).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Named {
    /// `var.NAME`.
    Var(usize, String),
    /// `local.NAME`.
    Local(usize, String),
    /// `var.NAME.FIELD`: a first-level field of an object variable.
    VarField(usize, String, String),
    /// `var.NAME` read whole (or by an index the count cannot follow), so every field.
    VarWhole(usize, String),
}

impl Named {
    /// A variable.
    pub fn var(module: usize, name: &str) -> Named {
        Named::Var(module, name.to_string())
    }

    /// A local.
    pub fn local(module: usize, name: &str) -> Named {
        Named::Local(module, name.to_string())
    }
}
