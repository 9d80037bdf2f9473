//! The benchmark's own Terraform evaluator, independent of the product's: it loads a root
//! module the way Terraform reads it and gives every resource instance's evaluated
//! attributes, for the judges and the scenario generator.
//!
//! [`Project::load`] reads every `.tf` file of the root directory, `terraform.tfvars` and the
//! `*.auto.tfvars` files (in lexical order, later assignments winning over earlier ones and
//! over defaults), and follows module calls into local directories (`./`, `../`) and into the
//! directories `terraform init` recorded in `.terraform/modules/modules.json`. Per module
//! instance it evaluates variables (converted to their declared types, `optional` object
//! attributes taking their defaults), locals and module calls on demand, in whatever order
//! they reference each other, and expands resources and data sources by `count` and
//! `for_each`, with nested blocks as lists of objects and `dynamic` blocks in place.
//!
//! References to resources and data sources read the given state. An instance the state
//! lacks is planned, as `terraform plan` sees it: the arguments its configuration sets are
//! known, its other attributes unknown (the [`functions::unknown`] marker); an attribute the
//! state's object lacks is unknown too, and so is everything computed from an unknown. An
//! argument that fails to evaluate is unknown as well; only unreadable or unparsable files, a
//! name declared twice in a module and values that depend on themselves fail a load.
//!
//! File names are relative to the root with `/` separators (`modules/app/main.tf`), the keys
//! of [`Project::files`]; spans are byte ranges of the blocks in those texts.

mod blocks;
mod expr;
mod files;
pub mod functions;
mod module;
mod origin;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
mod types;

use hcl::Value;
use reconciler::terraform::state::{IndexKey, Mode, PathStep, State};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Why a configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A file or directory could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file does not parse.
    #[error("{file}: {message}")]
    Parse {
        /// The file, relative to the root.
        file: String,
        /// The parser's message.
        message: String,
    },
    /// A name is declared twice in one module.
    #[error("{file}: {what} is declared twice")]
    Duplicate {
        /// The file of the second declaration, relative to the root.
        file: String,
        /// What is declared (`resource aws_s3_bucket.logs`, `local.name`).
        what: String,
    },
    /// Values depend on themselves, as Terraform refuses.
    #[error("cycle: {}", .0.join(", "))]
    Cycle(Vec<String>),
    /// The root module has nothing to evaluate.
    #[error("{0}")]
    Root(String),
}

/// Where a module instance sits: its path and directory, and the calls leading to it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Place {
    /// The module path (`module.app.module.dns`), `None` for the root.
    module: Option<String>,
    /// The module's directory, relative to the root.
    dir: String,
    /// The calls from the root: each caller's directory, the call's name and the instance
    /// key.
    calls: Vec<(String, String, Option<IndexKey>)>,
}

impl Place {
    /// The place of instance `key` of the call `name` made here, into `dir`.
    fn child(&self, name: &str, dir: &str, key: &Option<IndexKey>) -> Place {
        let step = format!("module.{name}{}", module::key_suffix(key));
        let mut calls = self.calls.clone();
        calls.push((self.dir.clone(), name.to_owned(), key.clone()));
        Place {
            module: Some(match &self.module {
                Some(m) => format!("{m}.{step}"),
                None => step,
            }),
            dir: dir.to_owned(),
            calls,
        }
    }
}

/// One resource or data source instance of the configuration, evaluated.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    /// The full address, `module.net.aws_subnet.private["a"]`.
    pub address: String,
    /// The module path (`module.app.module.dns`), `None` in the root module.
    pub module: Option<String>,
    /// Managed resource or data source.
    pub mode: Mode,
    /// The resource type.
    pub resource_type: String,
    /// The resource name.
    pub name: String,
    /// The `count` or `for_each` key.
    pub index: Option<IndexKey>,
    /// The evaluated arguments and nested blocks (lists of objects), an object, without
    /// meta-arguments; unknown parts hold the [`functions::unknown`] marker.
    pub attributes: Value,
    /// The file declaring the block, relative to the root.
    pub file: String,
    /// The byte range of the block in the file.
    pub span: Range<usize>,
    /// Where its module instance sits.
    pub(crate) place: Place,
}

impl Instance {
    /// The value of a top-level attribute as JSON: null when the code does not set it,
    /// `None` when it is not known until apply.
    pub fn value(&self, attribute: &str) -> Option<serde_json::Value> {
        match &self.attributes {
            Value::Object(map) => map
                .get(attribute)
                .map_or(Some(serde_json::Value::Null), module::to_json),
            _ => Some(serde_json::Value::Null),
        }
    }

    /// The whole object as JSON; `None` when any part is not known until apply.
    pub fn json(&self) -> Option<serde_json::Value> {
        module::to_json(&self.attributes)
    }
}

/// A configuration loaded and evaluated against a state.
#[derive(Debug)]
pub struct Project {
    sources: files::Sources,
    instances: Vec<Instance>,
    by_address: BTreeMap<String, usize>,
}

impl Project {
    /// Loads the configuration whose root module is `dir`, references to resources read
    /// from `state`.
    pub fn load(dir: &Path, state: &State) -> Result<Project, LoadError> {
        let sources = files::read(dir)?;
        let instances = evaluate(&sources, state)?;
        let by_address = instances
            .iter()
            .enumerate()
            .map(|(n, i)| (i.address.clone(), n))
            .collect();
        Ok(Project {
            sources,
            instances,
            by_address,
        })
    }

    /// Every resource and data source instance.
    pub fn instances(&self) -> impl Iterator<Item = &Instance> {
        self.instances.iter()
    }

    /// The instance at `address`.
    pub fn instance(&self, address: &str) -> Option<&Instance> {
        self.by_address.get(address).map(|n| &self.instances[*n])
    }

    /// Every file read (`.tf` files and variable files), by path relative to the root.
    pub fn files(&self) -> &BTreeMap<String, String> {
        &self.sources.files
    }

    /// Whether the code writes the value at `path` of instance `address` away from the
    /// resource block: exactly a variable, a `for_each` entry of a collection written as a
    /// literal, or a local or module argument that is itself written so or as a literal.
    /// False for a literal in the block, any other expression, an unset attribute or an
    /// unknown instance.
    pub fn written_indirectly(&self, address: &str, path: &[PathStep]) -> bool {
        self.instance(address)
            .is_some_and(|i| origin::indirect(&self.sources, i, path))
    }
}

/// Every instance of the configuration.
fn evaluate(sources: &files::Sources, state: &State) -> Result<Vec<Instance>, LoadError> {
    let mut functions = hcl::eval::Context::new();
    functions::declare(&mut functions);
    let world = module::World {
        sources,
        state: state
            .instances
            .iter()
            .filter(|i| i.deposed.is_none())
            .map(|i| (i.address.as_str(), i))
            .collect(),
        functions,
        cycles: Default::default(),
    };
    let root = module::Frame::root(&world).map_err(|e| LoadError::Root(e.to_string()))?;
    let instances = root.instances();
    let cycles = world.cycles.take();
    if cycles.is_empty() {
        Ok(instances)
    } else {
        Err(LoadError::Cycle(cycles.into_iter().collect()))
    }
}
