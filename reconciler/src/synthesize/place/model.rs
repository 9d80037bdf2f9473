//! The places a value can be written (`Place`, with the module-call argument and the new
//! module input it may name) and where a variable's value lives (`VarHome`).

use crate::synthesize::edit::{Container, Target};
use crate::terraform::state::{IndexKey, PathStep};

/// The place an attribute's new value is written.
#[derive(Debug, Clone, PartialEq)]
pub enum Place {
    /// The attribute itself, in the resource block (a literal there, or not set yet).
    UseSite {
        /// Why.
        why: String,
    },
    /// The attribute in the resource block, replacing an expression or a shared source.
    Override {
        /// Why.
        why: String,
        /// What the reviewer should know.
        warning: String,
    },
    /// A root variable's default.
    VariableDefault {
        /// The file declaring the variable.
        file: String,
        /// The variable.
        name: String,
        /// Why.
        why: String,
    },
    /// A tfvars entry.
    Tfvar {
        /// The tfvars file.
        file: String,
        /// The variable.
        name: String,
        /// Why.
        why: String,
    },
    /// A module call's argument.
    ModuleArgument {
        /// The file with the module call.
        file: String,
        /// The module call's name.
        module: String,
        /// The argument.
        argument: String,
        /// Why.
        why: String,
    },
    /// An entry of a literal `for_each` collection: the value at `path` inside the collection
    /// written in `file` (`container` is the edit tool's `in` object).
    CollectionEntry {
        /// The file holding the collection.
        file: String,
        /// Which collection: a variable's default, a tfvars assignment, a local or a block's
        /// `for_each`.
        container: Container,
        /// The path inside the collection: the instance key, then the steps into its value.
        path: Vec<PathStep>,
        /// Why.
        why: String,
    },
    /// The attribute for this instance alone, through a per-instance `lookup(...)` keyed by
    /// `each.key`/`count.index`: in the resource block, or (with `call`) in the argument of a
    /// module call with `for_each`/`count` whose input feeds only this attribute.
    PerInstance {
        /// The module call's argument, when the lookup goes there.
        call: Option<CallArgument>,
        /// This instance's key or index (of the block, or of the module call).
        key: IndexKey,
        /// Why.
        why: String,
        /// What the reviewer should know when the lookup overrides a shared source.
        warning: Option<String>,
    },
    /// A new input of the module, set for this module instance alone at the call.
    NewModuleInput {
        /// The input.
        input: NewInput,
        /// Why.
        why: String,
    },
    /// No edit changes this instance alone.
    Refuse {
        /// Why not.
        reason: String,
    },
}

/// A new input of a module called with `count`/`for_each`, carrying one resource argument's
/// value for one instance of the call (the `thread_module_input` edit tool).
#[derive(Debug, Clone, PartialEq)]
pub struct NewInput {
    /// The edit-tool target of the module call.
    pub call: Target,
    /// The edit-tool target of the resource block inside the module.
    pub resource: Target,
    /// The module's `variables.tf`, when it has one.
    pub variables_file: Option<String>,
    /// The new variable's name: `<type>_<argument>` (with the resource name when the module has
    /// several resources of the type).
    pub input: String,
    /// The call's instance key or index.
    pub key: IndexKey,
}

/// An argument of a module call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallArgument {
    /// The file with the module call.
    pub file: String,
    /// The module call's name.
    pub module: String,
    /// The argument.
    pub argument: String,
}

/// Where a variable's value is written: its default or a tfvars assignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum VarHome {
    /// `variable "NAME" { default = ... }`.
    Default,
    /// `NAME = ...` in a .tfvars file.
    Tfvar,
}

impl VarHome {
    /// The collection variable `name` holds there.
    pub(super) fn container(self, name: &str) -> Container {
        let name = name.to_owned();
        match self {
            VarHome::Default => Container::VariableDefault { name },
            VarHome::Tfvar => Container::Tfvar { name },
        }
    }
}
