//! A loaded project and what it answers without loading or tracing anything again.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use hcl::edit::Span as _;
use hcl::edit::structure::Body;

use super::files;
use super::json;
use super::loaded::{InstanceRecord, ModuleInstance, Named};
use super::model::{
    Diagnostic, Local, ModuleCall, OutputValue, Referrer, ResourceInstance, Variable,
};
use super::refs;
use crate::functions::Value;

/// A loaded configuration: see the documentation of `terraform::config`.
#[derive(Debug, Clone)]
pub struct Project {
    pub(super) root: PathBuf,
    pub(super) files: BTreeMap<String, String>,
    pub(super) modules: Vec<ModuleInstance>,
    pub(super) decls: Vec<files::ModuleDecls>,
    pub(super) instances: Vec<InstanceRecord>,
    /// Each instance's position in `instances`, by address.
    pub(super) by_address: HashMap<String, usize>,
    pub(super) diagnostics: Vec<Diagnostic>,
    pub(super) uses: BTreeMap<Named, usize>,
}

impl Project {
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
                    uses: self.uses_of(Named::var(index, name)),
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
                        uses: self.uses_of(Named::local(index, name)),
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

    /// How many resource instance arguments depend on the first-level field `field` of the
    /// object variable `name` (reading `var.NAME.FIELD`, or the whole variable): counted as
    /// for [`Variable::uses`], an argument reading both counted twice.
    pub fn variable_field_uses(&self, module: Option<&str>, name: &str, field: &str) -> usize {
        let Some(index) = self.module_index(module) else {
            return 0;
        };
        self.uses_of(Named::VarField(index, name.into(), field.into()))
            + self.uses_of(Named::VarWhole(index, name.into()))
    }

    /// The resource blocks (`aws_x.y`) and module calls (`module.z`) of the module at
    /// `module` whose `for_each` or `count` depends on `var.NAME` (`root` "var") or
    /// `local.NAME` (`root` "local"), directly or through locals.
    pub fn blocks_iterating(&self, module: Option<&str>, root: &str, name: &str) -> Vec<String> {
        let Some(index) = self.module_index(module) else {
            return Vec::new();
        };
        let named = match root {
            "var" => Named::var(index, name),
            _ => Named::local(index, name),
        };
        refs::iterating_blocks(&self.modules, &self.decls, index, &named)
    }

    /// What reads `var.NAME` (`root` "var") or `local.NAME` (`root` "local") in the module at
    /// `module`: each resource block (`aws_x.y`), module call (`module.z`) and output
    /// (`output.o`) with an expression that depends on it, directly or through locals; a
    /// resource's top-level `dynamic "b"` block is named apart (`aws_x.y/dynamic.b`).
    pub fn readers(&self, module: Option<&str>, root: &str, name: &str) -> Vec<String> {
        let Some(index) = self.module_index(module) else {
            return Vec::new();
        };
        let named = match root {
            "var" => Named::var(index, name),
            _ => Named::local(index, name),
        };
        refs::readers(&self.modules, &self.decls, index, &named)
    }

    /// The other blocks of the module instance `module` (`None`: the root) that refer to the
    /// resource block `kind.name` written in it: resource blocks (`aws_x.y`, `data.aws_x.y`),
    /// module calls (`module.m`), outputs (`output.o`) and locals (`local.l`).
    pub fn referring_to(&self, module: Option<&str>, kind: &str, name: &str) -> Vec<Referrer> {
        self.module_index(module).map_or_else(Vec::new, |index| {
            refs::referring_blocks(&self.modules, &self.decls, index, (kind, name), None)
        })
    }

    /// The blocks of the caller of module instance `module` that read its output `output`
    /// (or the whole module object), as [`Project::referring_to`] names them; empty for the
    /// root, which has no caller.
    pub fn reading_output(&self, module: &str, output: &str) -> Vec<Referrer> {
        let Some(call) = self.call_of(module) else {
            return Vec::new();
        };
        self.module_index(call.parent.as_deref())
            .map_or_else(Vec::new, |parent| {
                refs::referring_blocks(
                    &self.modules,
                    &self.decls,
                    parent,
                    ("module", &call.name),
                    Some(output),
                )
            })
    }

    /// Whether the resource block that made instance `address` writes its nested `name` blocks
    /// with a `dynamic "name"` block.
    pub fn writes_dynamic(&self, address: &str, name: &str) -> bool {
        self.resource_body(address).is_some_and(|body| {
            body.blocks().any(|b| {
                b.ident.as_str() == "dynamic"
                    && b.labels.first().is_some_and(|l| l.as_str() == name)
            })
        })
    }

    /// The body of the resource block that made instance `address`, as parsed from its file
    /// in [`Project::files`] (spans index that text).
    pub fn resource_body(&self, address: &str) -> Option<&Body> {
        self.body_of(address, false)
    }

    /// How many arguments of the block whose `for_each` made instance `address` read
    /// `each.value.FIELD` (or `each.value` whole): the resource block, or with `call` the
    /// module call that made the instance's module. `None` when there is no such block.
    pub fn each_field_reads(&self, address: &str, call: bool, field: &str) -> Option<usize> {
        Some(refs::each_field_reads(self.body_of(address, call)?, field))
    }

    /// The body of the resource block that made instance `address`, or with `call` of the
    /// module call that made the instance's module.
    fn body_of(&self, address: &str, call: bool) -> Option<&Body> {
        let record = self
            .instances
            .iter()
            .find(|r| r.public.address == address)?;
        let module = &self.modules[record.module];
        match (call, &module.call) {
            (false, _) => Some(&self.decls[module.decls].resources[record.decl].block.body),
            (true, Some(site)) => {
                let parent = &self.modules[site.parent];
                Some(&self.decls[parent.decls].calls[site.call].block.body)
            }
            (true, None) => None,
        }
    }

    /// The value of `expr` in the root module's scope (its variables and locals); unknown
    /// when it cannot be evaluated.
    pub fn evaluate_in_root(&self, expr: &hcl::Expression) -> Value {
        self.modules
            .iter()
            .find(|module| module.path.is_none())
            .and_then(|root| crate::functions::evaluate(expr, &root.scope).ok())
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

    pub(super) fn module_index(&self, module: Option<&str>) -> Option<usize> {
        self.modules
            .iter()
            .position(|m| m.path.as_deref() == module)
    }

    fn uses_of(&self, named: Named) -> usize {
        self.uses.get(&named).copied().unwrap_or(0)
    }
}
