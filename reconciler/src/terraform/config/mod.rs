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
//! - **locals and module calls** in dependency order; a cycle is a [`ConfigError::Cycle`].
//!   Dependencies are counted per local and per module call, not per output, so a module
//!   whose argument uses a local that uses another of its outputs is reported as a cycle
//!   although Terraform would accept it.
//! - **resources and data sources**, expanded by `count` and `for_each` into instance
//!   addresses as Terraform writes them, with nested blocks as lists of objects the way state
//!   holds them and `dynamic` blocks expanded in place. Nested blocks keep configuration order
//!   (Terraform orders set-typed blocks by hash in state).
//! - **outputs**, visible to the parent module as `module.NAME.OUTPUT`.
//!
//! References to resources are resolved from the given state by address (unknown without one).
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
mod provenance;
mod providers;
mod refactor;
mod refs;
mod types;
mod vars;

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};

use hcl::edit::Span as _;

use super::functions::Value;
use super::state::{IndexKey, Mode, PathStep, State};

pub use json::is_json;
pub use provenance::{Collection, Provenance};
pub use providers::{DefaultTags, aws_regions, default_tags};
pub use refactor::{Import, Move, imports, project_imports, project_moves, project_removed};

/// What to load besides the directory's own files.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions<'a> {
    /// `-var-file` arguments, in command-line order (relative to the root directory or
    /// absolute).
    pub var_files: Vec<PathBuf>,
    /// `-var` arguments as written on the command line, `NAME=VALUE`, in order.
    pub vars: Vec<String>,
    /// State to resolve references to resources from.
    pub state: Option<&'a State>,
}

/// Why a configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A file or directory could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The path.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// A file is not valid HCL.
    #[error("{file}:{line}:{column}: {message}")]
    Parse {
        /// The file.
        file: String,
        /// The line, from 1.
        line: usize,
        /// The column, from 1.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// A file is readable but not a valid configuration (a duplicate declaration, a
    /// malformed `modules.json` or tfvars JSON file).
    #[error("{file}:{line}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// The line, from 1.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Locals or module calls that depend on each other in a circle.
    #[error("{file}:{line}: cycle: {}", names.join(" -> "))]
    Cycle {
        /// The file declaring the first member.
        file: String,
        /// Its line.
        line: usize,
        /// The members, `local.a -> local.b -> local.a`.
        names: Vec<String>,
    },
    /// A `-var` argument without `=`.
    #[error("-var \"{text}\": expected NAME=VALUE")]
    CliVar {
        /// The argument.
        text: String,
    },
}

/// Something that could not be evaluated or resolved; the load goes on without it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Diagnostic {
    /// The file.
    pub file: String,
    /// The line, from 1.
    pub line: usize,
    /// What it concerns: `aws_instance.web[0].tags`, `local.name`, `module.net`.
    pub subject: String,
    /// What went wrong.
    pub message: String,
}

/// One resource or data source instance of the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceInstance {
    /// The full address, `module.net.aws_subnet.private["a"]`.
    pub address: String,
    /// The module path (`module.app.module.dns`), or `None` in the root module.
    pub module: Option<String>,
    /// Managed resource or data source.
    pub mode: Mode,
    /// The resource type.
    pub resource_type: String,
    /// The resource name.
    pub name: String,
    /// The `count` or `for_each` key.
    pub index: Option<IndexKey>,
    /// The evaluated arguments and nested blocks (lists of objects), an object; meta-arguments
    /// (`count`, `for_each`, `provider`, `depends_on`, `lifecycle`, provisioners) left out.
    pub attributes: Value,
    /// The file declaring the block.
    pub file: String,
    /// The span of the block.
    pub span: Range<usize>,
}

/// Where a variable's value came from.
#[derive(Debug, Clone, PartialEq)]
pub enum VariableSource {
    /// The declaration's `default`.
    Default {
        /// The file.
        file: String,
        /// The default's expression.
        span: Range<usize>,
    },
    /// `terraform.tfvars`, `terraform.tfvars.json` or an `*.auto.tfvars` file.
    Tfvars {
        /// The file.
        file: String,
        /// The line of the assignment, from 1.
        line: usize,
        /// The value's expression.
        span: Range<usize>,
    },
    /// A `-var-file`.
    VarFile {
        /// The file, as given (relative to the root when inside it).
        file: String,
        /// The line of the assignment, from 1.
        line: usize,
        /// The value's expression.
        span: Range<usize>,
    },
    /// A `-var` argument.
    Cli,
    /// A child module's variable set by the module call's argument.
    ModuleArgument {
        /// The file of the module call.
        file: String,
        /// The argument's expression.
        span: Range<usize>,
    },
    /// No value anywhere (Terraform would ask for one); the value is unknown.
    Unset,
}

/// A variable of one module instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    /// The module path, or `None` in the root module.
    pub module: Option<String>,
    /// The variable's name.
    pub name: String,
    /// The value after type conversion.
    pub value: Value,
    /// Where the value came from.
    pub source: VariableSource,
    /// How many resource instance arguments depend on it, directly or through locals, module
    /// arguments, `count`, `for_each` and `dynamic` blocks; see [`Project::variables`].
    pub uses: usize,
}

/// A local value of one module instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Local {
    /// The module path, or `None` in the root module.
    pub module: Option<String>,
    /// The local's name.
    pub name: String,
    /// The evaluated value.
    pub value: Value,
    /// The file declaring it.
    pub file: String,
    /// The span of its expression.
    pub span: Range<usize>,
    /// How many resource instance arguments depend on it (as for [`Variable::uses`]).
    pub uses: usize,
}

/// An output value of one module instance.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputValue {
    /// The module path, or `None` in the root module.
    pub module: Option<String>,
    /// The output's name.
    pub name: String,
    /// The evaluated value.
    pub value: Value,
}

/// The `module` block behind a module instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleCall {
    /// The file holding the block.
    pub file: String,
    /// The block's label.
    pub name: String,
    /// The module instance the block is written in (`None`: the root).
    pub parent: Option<String>,
    /// Whether the block has `count` or `for_each`.
    pub repeated: bool,
    /// The block's byte range in its file.
    pub span: std::ops::Range<usize>,
}

/// A loaded configuration: see the module documentation.
#[derive(Debug, Clone)]
pub struct Project {
    root: PathBuf,
    files: BTreeMap<String, String>,
    modules: Vec<load::ModuleInstance>,
    decls: Vec<files::ModuleDecls>,
    instances: Vec<load::InstanceRecord>,
    /// Each instance's position in `instances`, by address.
    by_address: HashMap<String, usize>,
    diagnostics: Vec<Diagnostic>,
    uses: BTreeMap<refs::Named, usize>,
}

impl Project {
    /// Loads the configuration whose root module is `dir`.
    pub fn load(dir: &Path, options: &LoadOptions) -> Result<Project, ConfigError> {
        load::load(dir, options)
    }

    /// The root module's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Every resource and data source instance, module by module in load order.
    pub fn instances(&self) -> impl Iterator<Item = &ResourceInstance> {
        self.instances.iter().map(|record| &record.public)
    }

    /// The text of `path` as it is on disk: a JSON configuration file's JSON, else the text
    /// in [`Project::files`].
    pub fn source(&self, path: &str) -> Option<&str> {
        match self.decls.iter().find_map(|d| d.json.get(path)) {
            Some(native) => Some(&native.source),
            None => self.files.get(path).map(String::as_str),
        }
    }

    /// For a JSON configuration file, its JSON with the change that made `new` of its
    /// translation written in, or why that change cannot be written there; `None` for any
    /// other file.
    pub fn json_edit(&self, path: &str, new: &str) -> Option<Result<String, String>> {
        let native = self.decls.iter().find_map(|d| d.json.get(path))?;
        Some(json::rewrite(&native.source, &native.text, new))
    }

    /// The path of every module instance, `None` for the root, in load order.
    pub fn module_paths(&self) -> impl Iterator<Item = Option<&str>> {
        self.modules.iter().map(|module| module.path.as_deref())
    }

    /// The instance with this address.
    pub fn instance(&self, address: &str) -> Option<&ResourceInstance> {
        self.by_address
            .get(address)
            .map(|&at| &self.instances[at].public)
    }

    /// The variables of every module instance. `uses` counts pairs of a resource instance
    /// and one of its arguments (nested block arguments, `count`, `for_each` and a `dynamic`
    /// block's `for_each` included) whose expression depends on the variable.
    pub fn variables(&self) -> Vec<Variable> {
        self.modules
            .iter()
            .enumerate()
            .flat_map(|(index, module)| {
                module.variables.iter().map(move |(name, record)| Variable {
                    module: module.path.clone(),
                    name: name.clone(),
                    value: record.value.clone(),
                    source: record.source.clone(),
                    uses: self.uses_of(refs::Named::var(index, name)),
                })
            })
            .collect()
    }

    /// The variable `name` of the module at `module` (`None` for the root).
    pub fn variable(&self, module: Option<&str>, name: &str) -> Option<Variable> {
        self.variables()
            .into_iter()
            .find(|v| v.module.as_deref() == module && v.name == name)
    }

    /// The locals of every module instance.
    pub fn locals(&self) -> Vec<Local> {
        self.modules
            .iter()
            .enumerate()
            .flat_map(|(index, module)| {
                let decls = &self.decls[module.decls];
                module.locals.iter().filter_map(move |(name, value)| {
                    let decl = decls.local(name)?;
                    Some(Local {
                        module: module.path.clone(),
                        name: name.clone(),
                        value: value.clone(),
                        file: decl.file.clone(),
                        span: decl.attr.value.span().unwrap_or_default(),
                        uses: self.uses_of(refs::Named::local(index, name)),
                    })
                })
            })
            .collect()
    }

    /// The local `name` of the module at `module` (`None` for the root).
    pub fn local(&self, module: Option<&str>, name: &str) -> Option<Local> {
        self.locals()
            .into_iter()
            .find(|l| l.module.as_deref() == module && l.name == name)
    }

    /// The outputs of every module instance.
    pub fn outputs(&self) -> Vec<OutputValue> {
        self.modules
            .iter()
            .flat_map(|module| {
                module.outputs.iter().map(|(name, value)| OutputValue {
                    module: module.path.clone(),
                    name: name.clone(),
                    value: value.clone(),
                })
            })
            .collect()
    }

    /// What could not be evaluated or resolved.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Every file read (`.tf`, tfvars and var files), by name relative to the root: the
    /// texts an edit tool's `Files` is made of.
    pub fn files(&self) -> &BTreeMap<String, String> {
        &self.files
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

    /// How many resource instance arguments depend on the first-level field `field` of the
    /// object variable `name` (reading `var.NAME.FIELD`, or the whole variable): counted as
    /// for [`Variable::uses`], an argument reading both counted twice.
    pub fn variable_field_uses(&self, module: Option<&str>, name: &str, field: &str) -> usize {
        let Some(index) = self.module_index(module) else {
            return 0;
        };
        self.uses_of(refs::Named::VarField(index, name.into(), field.into()))
            + self.uses_of(refs::Named::VarWhole(index, name.into()))
    }

    /// The resource blocks (`aws_x.y`) and module calls (`module.z`) of the module at
    /// `module` whose `for_each` or `count` depends on `var.NAME` (`root` "var") or
    /// `local.NAME` (`root` "local"), directly or through locals.
    pub fn blocks_iterating(&self, module: Option<&str>, root: &str, name: &str) -> Vec<String> {
        let Some(index) = self.module_index(module) else {
            return Vec::new();
        };
        let named = match root {
            "var" => refs::Named::var(index, name),
            _ => refs::Named::local(index, name),
        };
        refs::iterating_blocks(&self.modules, &self.decls, index, &named)
    }

    /// How many arguments of the block whose `for_each` made instance `address` read
    /// `each.value.FIELD` (or `each.value` whole): the resource block, or with `call` the
    /// module call that made the instance's module. `None` when there is no such block.
    pub fn each_field_reads(&self, address: &str, call: bool, field: &str) -> Option<usize> {
        let record = self
            .instances
            .iter()
            .find(|r| r.public.address == address)?;
        let module = &self.modules[record.module];
        let body = match (call, &module.call) {
            (false, _) => &self.decls[module.decls].resources[record.decl].block.body,
            (true, Some(site)) => {
                let parent = &self.modules[site.parent];
                &self.decls[parent.decls].calls[site.call].block.body
            }
            (true, None) => return None,
        };
        Some(refs::each_field_reads(body, field))
    }

    /// The value of `expr` in the root module's scope (its variables and locals); unknown
    /// when it cannot be evaluated.
    pub fn evaluate_in_root(&self, expr: &hcl::Expression) -> Value {
        self.modules
            .iter()
            .find(|module| module.path.is_none())
            .and_then(|root| super::functions::evaluate(expr, &root.scope).ok())
            .unwrap_or(Value::Unknown)
    }

    /// The `module` block that made the module instance `module` (`module.a["x"]`): its file
    /// and label, and whether that block has `count` or `for_each`.
    pub fn call_of(&self, module: &str) -> Option<ModuleCall> {
        let instance = &self.modules[self.module_index(Some(module))?];
        let site = instance.call.as_ref()?;
        let parent = &self.modules[site.parent];
        let decl = self.decls[parent.decls].calls.get(site.call)?;
        let repeated = ["count", "for_each"]
            .iter()
            .any(|meta| decl.block.body.get_attribute(meta).is_some());
        Some(ModuleCall {
            file: decl.file.clone(),
            name: decl.label(0).to_owned(),
            parent: parent.path.clone(),
            repeated,
            span: decl.span(),
        })
    }

    fn module_index(&self, module: Option<&str>) -> Option<usize> {
        self.modules
            .iter()
            .position(|m| m.path.as_deref() == module)
    }

    fn uses_of(&self, named: refs::Named) -> usize {
        self.uses.get(&named).copied().unwrap_or(0)
    }
}

/// The line (from 1) of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text.get(..at)
        .map_or(1, |head| head.matches('\n').count() + 1)
}
