//! A Terraform configuration loaded the way Terraform reads it, with every resource instance's
//! attributes evaluated and the provenance of each attribute value.
//!
//! [`Project::load`] reads every `.tf` file of the root module (`.tf.json` files are not read;
//! a diagnostic names any that are skipped), follows module calls into local directories
//! (`./` and `../` sources) and into modules `terraform init` downloaded (found through
//! `.terraform/modules/modules.json`), and evaluates, per module instance:
//!
//! - **variables**, in the root module with Terraform's precedence: default, then
//!   `terraform.tfvars`, `terraform.tfvars.json`, `*.auto.tfvars` and `*.auto.tfvars.json` in
//!   lexical order, the `var_files` in order, then the `-var` values; in a child module from the
//!   module call's arguments (evaluated in the caller's scope) or the default. Values are
//!   converted to the declared type where the conversion is simple (strings to numbers and
//!   booleans and back, element by element in collections, object attributes with `optional`
//!   defaults).
//! - **locals, module calls and resources** in dependency order; a cycle of locals is a
//!   [`LoadError::Cycle`].
//!   Dependencies are counted per local and per module call, not per output, so a module
//!   whose argument uses a local that uses another of its outputs is reported as a cycle
//!   although Terraform would accept it.
//! - **resources and data sources**, expanded by `count` and `for_each` into instance
//!   addresses as Terraform writes them, with nested blocks as lists of objects the way state
//!   holds them and `dynamic` blocks expanded in place. Nested blocks keep configuration order
//!   (Terraform orders set-typed blocks by hash in state).
//! - **outputs**, visible to the parent module as `module.NAME.OUTPUT`.
//!
//! References to resources are resolved from the given state by address; an instance the
//! state lacks is unknown, but for the arguments its configuration sets (Terraform knows
//! those at plan time). Resources are evaluated in dependency order with locals and module
//! calls.
//! An expression that fails to evaluate becomes [`Value::Unknown`] with a [`Diagnostic`];
//! only unreadable files, syntax errors, malformed `modules.json` or tfvars, duplicate
//! declarations and cycles fail the load.
//!
//! File names in results are relative to the root directory, with `/` separators (such as
//! `modules/app/main.tf`), the same keys as [`Project::files`]; spans are byte ranges into
//! those texts.

mod expand;
mod files;
mod json;
mod load;
mod loaded;
mod model;
mod project;
mod provenance;
mod provider_data;
mod providers;
mod refactor;
mod refs;
mod types;
mod vars;

use std::path::Path;

use super::state::PathStep;
use model::line_of;

pub use json::is_json;
pub use model::{
    Diagnostic, LoadError, LoadOptions, Local, ModuleCall, OutputValue, Referrer, ResourceInstance,
    Variable, VariableSource,
};
pub use project::Project;
pub use provenance::{Collection, Provenance, Written};
pub use providers::{DefaultTags, aws_regions, default_tags};
pub use refactor::{Import, Move, imports, project_imports, project_moves, project_removed};

impl Project {
    /// Loads the configuration whose root module is `dir`.
    pub fn load(dir: &Path, options: &LoadOptions) -> Result<Project, LoadError> {
        load::load(dir, options, None)
    }

    /// Loads the configuration whose root module is `dir`, a copy of this one's root in which
    /// only the files `changed` (paths relative to the root) differ: every other file's
    /// declarations are taken from this load instead of being read and parsed again. The
    /// result is what [`Project::load`] of `dir` gives.
    pub fn reload<'p>(
        &self,
        dir: &Path,
        options: &LoadOptions,
        changed: impl IntoIterator<Item = &'p str>,
    ) -> Result<Project, LoadError> {
        let changed = changed
            .into_iter()
            .map(|path| files::join_rel("", path))
            .collect();
        load::load(dir, options, Some((self, &changed)))
    }

    /// Where the value of the attribute at `path` of the instance `address` comes from;
    /// `None` when there is no such instance. See [`Provenance`].
    pub fn provenance(&self, address: &str, path: &[PathStep]) -> Option<Provenance> {
        let index = self
            .instances
            .iter()
            .position(|record| record.public.address == address)?;
        Some(provenance::of_instance(self, index, path))
    }

    /// Where the value at `path` of the module call that made module instance `module`
    /// (`module.users["alice"]`) comes from: `[for_each, "alice"]` traces the instance's key
    /// to the collection that holds it, across module boundaries to the root. `None` for the
    /// root or an unknown module instance.
    pub fn call_provenance(&self, module: &str, path: &[PathStep]) -> Option<Provenance> {
        provenance::of_call(self, self.module_index(Some(module))?, path)
    }
}
