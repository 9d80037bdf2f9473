//! Loading: module instances evaluated from the root down.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use hcl::edit::Span;
use hcl::edit::expr::Expression;
use hcl::edit::structure::Body;
use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use super::expand::{Key, Place, body_value, eval, keys};
use super::files::{BlockDecl, ModuleDecls, installed_modules, join_rel, read_module};
use super::loaded::{CallSite, InstanceRecord, ModuleInstance, VarRecord};
use super::model::{
    ConfigError, Diagnostic, LoadOptions, ResourceInstance, VariableSource, line_of,
};
use super::project::Project;
use super::provider_data::derived;
use super::refs::references;
use super::types::parse_type;
use super::vars::{Assigned, root_assignments};
use crate::terraform::functions::{EvalScope, Value, convert, evaluate};
use crate::terraform::state::{IndexKey, Mode, State, instance_address};
use knowledge::schema::AttrType;

struct Loader<'a> {
    root: PathBuf,
    /// `terraform.workspace`.
    workspace: String,
    state: Option<&'a State>,
    installed: BTreeMap<String, String>,
    files: BTreeMap<String, String>,
    decls: Vec<ModuleDecls>,
    modules: Vec<ModuleInstance>,
    instances: Vec<InstanceRecord>,
    diagnostics: Vec<Diagnostic>,
    /// The `region` of each of the root's `provider "aws"` blocks, as far as its variables
    /// tell (see [`provider_data`](super::provider_data)).
    provider_regions: Vec<Value>,
}

/// Loads the configuration rooted at `dir`; see the module documentation.
pub(super) fn load(dir: &Path, options: &LoadOptions) -> Result<Project, ConfigError> {
    let mut loader = Loader {
        root: dir.to_path_buf(),
        workspace: workspace(dir),
        state: options.state,
        installed: installed_modules(dir)?,
        files: BTreeMap::new(),
        decls: Vec::new(),
        modules: Vec::new(),
        instances: Vec::new(),
        diagnostics: Vec::new(),
        provider_regions: Vec::new(),
    };
    let root = loader.decls_of("")?;
    let types = loader.decls[root]
        .variables
        .iter()
        .map(|v| (v.label(0).to_string(), variable_type(v)))
        .collect();
    let assigned = root_assignments(
        dir,
        options,
        &types,
        &mut loader.files,
        &mut loader.diagnostics,
    )?;
    loader.instantiate(root, None, String::new(), None, assigned)?;
    let uses = super::refs::count_uses(&loader.modules, &loader.decls, &loader.instances);
    loader.json_lines();
    let mut by_address = HashMap::new();
    for (at, record) in loader.instances.iter().enumerate() {
        by_address
            .entry(record.public.address.clone())
            .or_insert(at);
    }
    Ok(Project {
        root: loader.root,
        files: loader.files,
        modules: loader.modules,
        decls: loader.decls,
        instances: loader.instances,
        by_address,
        diagnostics: loader.diagnostics,
        uses,
    })
}

/// The selected workspace, as Terraform finds it: `TF_WORKSPACE`, else the name
/// `terraform workspace select` wrote to `.terraform/environment`, else `default`.
fn workspace(root: &Path) -> String {
    let selected = std::env::var("TF_WORKSPACE")
        .ok()
        .or_else(|| std::fs::read_to_string(root.join(".terraform/environment")).ok());
    selected
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "default".to_string())
}

/// Whether a variable declares `nullable = false`.
fn not_nullable(decl: &BlockDecl) -> bool {
    decl.block
        .body
        .get_attribute("nullable")
        .is_some_and(|attr| matches!(&attr.value, Expression::Bool(b) if !*b.value()))
}

fn variable_type(decl: &BlockDecl) -> AttrType {
    decl.block
        .body
        .get_attribute("type")
        .map_or(AttrType::Dynamic, |attr| {
            parse_type(&hcl::Expression::from(attr.value.clone()))
        })
}

/// A local or a module call, as a node of the evaluation order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    Local(usize),
    Call(usize),
}

/// One step of a module's evaluation order.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// A node that nothing it refers to refers back to.
    One(Node),
    /// Nodes that refer to each other through module outputs, evaluated until settled.
    Settle(Vec<Node>),
}

impl Loader<'_> {
    /// The index of the declarations of the module directory `rel`, reading it if new.
    fn decls_of(&mut self, rel: &str) -> Result<usize, ConfigError> {
        if let Some(index) = self.decls.iter().position(|d| d.rel == rel) {
            return Ok(index);
        }
        let decls = read_module(&self.root, rel, &mut self.files)?;
        self.decls.push(decls);
        Ok(self.decls.len() - 1)
    }

    /// Puts each diagnostic in a JSON configuration file on the JSON's own line.
    fn json_lines(&mut self) {
        for diagnostic in &mut self.diagnostics {
            let native = self.decls.iter().find_map(|d| d.json.get(&diagnostic.file));
            if let Some(native) = native {
                diagnostic.line = native.json_line(diagnostic.line);
            }
        }
    }

    fn text(&self, file: &str) -> &str {
        self.files.get(file).map_or("", String::as_str)
    }

    fn diagnose(&mut self, file: &str, at: usize, subject: String, message: String) {
        let line = line_of(self.text(file), at);
        self.diagnostics.push(Diagnostic {
            file: file.to_string(),
            line,
            subject,
            message,
        });
    }

    /// Evaluates one module instance and, recursively, the modules it calls.
    fn instantiate(
        &mut self,
        decls: usize,
        path: Option<String>,
        key: String,
        call: Option<CallSite>,
        inputs: BTreeMap<String, Assigned>,
    ) -> Result<usize, ConfigError> {
        let variables = self.variables(decls, &path, inputs);
        let mut scope = EvalScope::new(&self.root)
            .in_module(&self.decls[decls].rel)
            .with_binding(
                "terraform",
                Value::Object(BTreeMap::from([(
                    "workspace".to_string(),
                    Value::String(self.workspace.clone()),
                )])),
            )
            .with_binding("module", Value::Object(BTreeMap::new()));
        for (name, record) in &variables {
            scope = scope.with_variable(name.clone(), record.value.clone());
        }
        if path.is_none() {
            self.provider_regions = self.aws_provider_regions(decls, &scope);
        }
        for (address, instances) in self.state_resources(path.as_deref(), decls) {
            scope = scope.with_resource(address, collect_instances(instances));
        }
        let index = self.modules.len();
        self.modules.push(ModuleInstance {
            path: path.clone(),
            decls,
            call,
            scope,
            variables,
            locals: BTreeMap::new(),
            outputs: BTreeMap::new(),
        });
        let mut module_values = BTreeMap::new();
        for step in self.order(decls)? {
            match step {
                Step::One(node) => self.evaluate_node(index, node, &key, &mut module_values)?,
                Step::Settle(members) => {
                    self.settle(index, &members, &key, &mut module_values)?;
                }
            }
        }
        self.bind_empty_blocks(index);
        self.expand_resources(index);
        self.add_planned_instances(index);
        self.evaluate_outputs(index);
        Ok(index)
    }

    /// The variables of a module instance: assigned values (tfvars or module arguments)
    /// over defaults, converted to their types.
    fn variables(
        &mut self,
        decls: usize,
        path: &Option<String>,
        mut inputs: BTreeMap<String, Assigned>,
    ) -> BTreeMap<String, VarRecord> {
        let mut out = BTreeMap::new();
        let declared = self.decls[decls].variables.clone();
        for decl in &declared {
            let name = decl.label(0).to_string();
            let subject = match path {
                Some(path) => format!("{path}.var.{name}"),
                None => format!("var.{name}"),
            };
            let default = decl.block.body.get_attribute("default");
            // `nullable = false`: a null argument takes the default (Terraform's
            // documentation, "Disallowing Null Input Values").
            let given = inputs
                .remove(&name)
                .filter(|assigned| !(assigned.value == Value::Null && not_nullable(decl)));
            let (value, source, expr) = match (given, default) {
                (Some(assigned), _) => (assigned.value, assigned.source, assigned.expr),
                (None, Some(default)) => {
                    let value = evaluate(
                        &hcl::Expression::from(default.value.clone()),
                        &EvalScope::new(&self.root),
                    )
                    .unwrap_or(Value::Unknown);
                    let source = VariableSource::Default {
                        file: decl.file_of("default").to_string(),
                        span: default.value.span().unwrap_or_default(),
                    };
                    (value, source, Some(default.value.clone()))
                }
                (None, None) => {
                    let message = "no value given and no default".to_string();
                    self.diagnose(&decl.file, decl.span().start, subject.clone(), message);
                    (Value::Unknown, VariableSource::Unset, None)
                }
            };
            let value = match convert(value.clone(), &variable_type(decl)) {
                Ok(converted) => converted,
                Err(message) => {
                    self.diagnose(&decl.file, decl.span().start, subject, message);
                    value
                }
            };
            out.insert(
                name,
                VarRecord {
                    value,
                    source,
                    expr,
                },
            );
        }
        for (name, assigned) in inputs {
            if let VariableSource::ModuleArgument { file, span } = assigned.source {
                let subject = path.clone().unwrap_or_default();
                let message = format!("argument `{name}` is not a variable of the module");
                self.diagnose(&file, span.start, subject, message);
            }
        }
        out
    }

    /// The `region` of each `provider "aws"` block of the root module `decls`, evaluated with
    /// the root's variables (unknown when it reads anything else).
    fn aws_provider_regions(&self, decls: usize, scope: &EvalScope) -> Vec<Value> {
        self.decls[decls]
            .providers
            .iter()
            .filter(|p| p.label(0) == "aws")
            .map(|p| match p.block.body.get_attribute("region") {
                Some(region) => {
                    let place = Place {
                        file: &p.file,
                        text: self.text(&p.file),
                    };
                    eval(&region.value, scope, place, "", &mut Vec::new())
                }
                None => Value::Unknown,
            })
            .collect()
    }

    /// The state's resource instances in the module at `path` (declared by `decls`), by
    /// resource address within the module; a data source the provider answers from its own
    /// settings ([`provider_data`](super::provider_data)) and the state lacks is derived.
    fn state_resources(
        &self,
        path: Option<&str>,
        decls: usize,
    ) -> BTreeMap<String, Vec<(Option<IndexKey>, Value)>> {
        let mut grouped: BTreeMap<String, Vec<(Option<IndexKey>, Value)>> = BTreeMap::new();
        let instances = self.state.map_or(&[][..], |s| s.instances.as_slice());
        for instance in instances {
            if instance.module.as_deref() != path || instance.deposed.is_some() {
                continue;
            }
            let prefix = if instance.mode == Mode::Data {
                "data."
            } else {
                ""
            };
            let address = format!("{prefix}{}.{}", instance.resource_type, instance.name);
            let value = Value::from_json(&instance.attributes);
            grouped
                .entry(address)
                .or_default()
                .push((instance.index.clone(), value));
        }
        for decl in &self.decls[decls].resources {
            let address = block_address(decl);
            if decl.block.ident.as_str() != "data" || grouped.contains_key(&address) {
                continue;
            }
            let body = &decl.block.body;
            let sets_arguments = body.attributes().any(|a| a.key.as_str() != "provider")
                || body.blocks().next().is_some();
            let derived = derived(decl.label(0), sets_arguments, &self.provider_regions);
            if let Some(value) = derived {
                grouped.insert(address, vec![(None, value)]);
            }
        }
        grouped
    }

    /// Gives the module's scope `[]` or `{}` for each resource and data block that has no
    /// instance (see [`none_value`]), for the resources that refer to it.
    fn bind_empty_blocks(&mut self, module: usize) {
        let scope = self.modules[module].scope.clone();
        let empty: Vec<(String, Value)> = self.decls[self.modules[module].decls]
            .resources
            .iter()
            .map(|decl| (block_address(decl), none_value(&decl.block.body, &scope)))
            .filter(|(_, value)| *value != Value::Unknown)
            .collect();
        let instance = &mut self.modules[module];
        instance.scope = instance.scope.clone().with_resources(empty);
    }

    /// Gives the module's scope every instance the configuration declares, unknown where the
    /// state lacks it, so outputs see `aws_instance.web[*]` with as many elements as `count`
    /// makes. (Locals and module arguments, evaluated earlier, see the state's instances.)
    fn add_planned_instances(&mut self, module: usize) {
        let path = self.modules[module].path.clone();
        let decls = self.modules[module].decls;
        let mut stored = self.state_resources(path.as_deref(), decls);
        let mut planned: BTreeMap<String, Vec<(Option<IndexKey>, Value)>> = BTreeMap::new();
        for record in self.instances.iter().filter(|r| r.module == module) {
            let public = &record.public;
            let prefix = if public.mode == Mode::Data {
                "data."
            } else {
                ""
            };
            let address = format!("{prefix}{}.{}", public.resource_type, public.name);
            let value = stored
                .get_mut(&address)
                .and_then(|instances| {
                    let at = instances.iter().position(|(key, _)| *key == public.index)?;
                    Some(instances.swap_remove(at).1)
                })
                .unwrap_or(Value::Unknown);
            planned
                .entry(address)
                .or_default()
                .push((public.index.clone(), value));
        }
        // A block with no instance is `[]` under `count = 0`, `{}` under an empty `for_each`,
        // and unknown when its instances could not be known.
        let scope = self.modules[module].scope.clone();
        let mut values: BTreeMap<String, Value> = BTreeMap::new();
        for decl in &self.decls[decls].resources {
            let address = block_address(decl);
            let value = match planned.remove(&address) {
                Some(instances) => collect_instances(instances),
                None => none_value(&decl.block.body, &scope),
            };
            values.insert(address, value);
        }
        let instance = &mut self.modules[module];
        instance.scope = instance.scope.clone().with_resources(values);
    }

    /// Locals and module calls of a module in an order where each comes after what it
    /// refers to. Module calls that refer to each other's outputs form a group evaluated
    /// until settled: Terraform orders by output, so calls may read each other when no
    /// output depends on itself. A circle of locals alone is an error, as in Terraform.
    fn order(&self, decls: usize) -> Result<Vec<Step>, ConfigError> {
        let module = &self.decls[decls];
        let nodes: Vec<(Node, String)> = (module.locals.iter().enumerate())
            .map(|(i, l)| (Node::Local(i), format!("local.{}", l.name)))
            .chain(
                module
                    .calls
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (Node::Call(i), format!("module.{}", c.label(0)))),
            )
            .collect();
        let edges: Vec<Vec<usize>> = nodes
            .iter()
            .map(|(node, _)| {
                let exprs: Vec<&Expression> = match *node {
                    Node::Local(i) => vec![&module.locals[i].attr.value],
                    Node::Call(i) => module.calls[i]
                        .block
                        .body
                        .attributes()
                        .map(|a| &a.value)
                        .collect(),
                };
                let mut targets: Vec<usize> = exprs
                    .into_iter()
                    .flat_map(references)
                    .filter_map(|(root, attr)| {
                        let name = format!("{root}.{}", attr?);
                        nodes.iter().position(|(_, n)| *n == name)
                    })
                    .collect();
                targets.sort_unstable();
                targets.dedup();
                targets
            })
            .collect();
        let mut graph = DiGraph::<(), ()>::with_capacity(nodes.len(), 0);
        for _ in &nodes {
            graph.add_node(());
        }
        for (from, targets) in edges.iter().enumerate() {
            for &to in targets {
                graph.add_edge(NodeIndex::new(from), NodeIndex::new(to), ());
            }
        }
        // Tarjan's components come in post-order: what a node refers to comes first.
        let mut steps = Vec::new();
        for component in tarjan_scc(&graph) {
            let mut members: Vec<usize> = component.iter().map(|n| n.index()).collect();
            members.sort_unstable();
            let looped = members.len() > 1 || edges[members[0]].contains(&members[0]);
            if !looped {
                steps.push(Step::One(nodes[members[0]].0));
            } else if members.iter().any(|&i| matches!(nodes[i].0, Node::Call(_))) {
                steps.push(Step::Settle(members.iter().map(|&i| nodes[i].0).collect()));
            } else {
                return Err(self.cycle(decls, &nodes, &edges, &members));
            }
        }
        Ok(steps)
    }

    /// The error for a circle among `members`, naming them in the order they refer to each
    /// other, from the first declared.
    fn cycle(
        &self,
        decls: usize,
        nodes: &[(Node, String)],
        edges: &[Vec<usize>],
        members: &[usize],
    ) -> ConfigError {
        let inside: Vec<Vec<usize>> = edges
            .iter()
            .map(|targets| {
                let kept = targets.iter().filter(|t| members.contains(t));
                kept.copied().collect()
            })
            .collect();
        let mut state = vec![0u8; nodes.len()];
        let mut stack = Vec::new();
        let mut order = Vec::new();
        let cycle = visit(members[0], &inside, &mut state, &mut stack, &mut order)
            .err()
            .unwrap_or_else(|| members.to_vec());
        let names = cycle.iter().map(|&i| nodes[i].1.clone()).collect();
        self.cycle_error(decls, nodes[cycle[0]].0, names)
    }

    /// A cycle error placed at the declaration of `first`.
    fn cycle_error(&self, decls: usize, first: Node, names: Vec<String>) -> ConfigError {
        let module = &self.decls[decls];
        let (file, at) = match first {
            Node::Local(i) => (
                &module.locals[i].file,
                module.locals[i].attr.span().unwrap_or_default().start,
            ),
            Node::Call(i) => (&module.calls[i].file, module.calls[i].span().start),
        };
        ConfigError::Cycle {
            file: file.clone(),
            line: line_of(self.text(file), at),
            names,
        }
    }

    /// Evaluates one local or module call of a module instance.
    fn evaluate_node(
        &mut self,
        module: usize,
        node: Node,
        key: &str,
        module_values: &mut BTreeMap<String, Value>,
    ) -> Result<(), ConfigError> {
        match node {
            Node::Local(local) => self.evaluate_local(module, local),
            Node::Call(call) => {
                let (name, value) = self.evaluate_call(module, call, key)?;
                module_values.insert(name, value);
                let instance = &mut self.modules[module];
                instance.scope = instance
                    .scope
                    .clone()
                    .with_binding("module", Value::Object(module_values.clone()));
            }
        }
        Ok(())
    }

    /// Evaluates module calls (and locals) that read each other's outputs, pass after pass,
    /// each pass seeing the values of the one before, until a pass changes nothing. Only the
    /// last pass's instances and diagnostics are kept. No settling within the pass limit
    /// means an output depends on itself: the cycle Terraform reports.
    fn settle(
        &mut self,
        module: usize,
        members: &[Node],
        key: &str,
        module_values: &mut BTreeMap<String, Value>,
    ) -> Result<(), ConfigError> {
        const PASSES: usize = 16;
        let mut previous = None;
        for _ in 0..PASSES {
            let mark = (
                self.modules.len(),
                self.instances.len(),
                self.diagnostics.len(),
            );
            for &node in members {
                self.evaluate_node(module, node, key, module_values)?;
            }
            let values = self.values_of(module, members, module_values);
            if previous.as_ref() == Some(&values) {
                return Ok(());
            }
            previous = Some(values);
            self.modules.truncate(mark.0);
            self.instances.truncate(mark.1);
            self.diagnostics.truncate(mark.2);
        }
        let decls = self.modules[module].decls;
        let names = members.iter().map(|&n| self.node_name(decls, n)).collect();
        Err(self.cycle_error(decls, members[0], names))
    }

    /// The values the members of a group have now, in their order.
    fn values_of(
        &self,
        module: usize,
        members: &[Node],
        module_values: &BTreeMap<String, Value>,
    ) -> Vec<Value> {
        let decls = &self.decls[self.modules[module].decls];
        members
            .iter()
            .map(|&node| match node {
                Node::Local(i) => self.modules[module].locals.get(&decls.locals[i].name),
                Node::Call(i) => module_values.get(decls.calls[i].label(0)),
            })
            .map(|value| value.cloned().unwrap_or(Value::Unknown))
            .collect()
    }

    /// `local.NAME` or `module.NAME`.
    fn node_name(&self, decls: usize, node: Node) -> String {
        match node {
            Node::Local(i) => format!("local.{}", self.decls[decls].locals[i].name),
            Node::Call(i) => format!("module.{}", self.decls[decls].calls[i].label(0)),
        }
    }

    fn evaluate_local(&mut self, module: usize, local: usize) {
        let decl = self.decls[self.modules[module].decls].locals[local].clone();
        let subject = prefixed(&self.modules[module].path, &format!("local.{}", decl.name));
        let place = Place {
            file: &decl.file,
            text: self.files.get(&decl.file).map_or("", String::as_str),
        };
        let value = eval(
            &decl.attr.value,
            &self.modules[module].scope,
            place,
            &subject,
            &mut self.diagnostics,
        );
        let instance = &mut self.modules[module];
        instance.scope = instance
            .scope
            .clone()
            .with_local(decl.name.clone(), value.clone());
        instance.locals.insert(decl.name, value);
    }

    /// Evaluates a module call: each of its instances in turn. Returns the call's name and
    /// the value `module.NAME` has in the caller.
    fn evaluate_call(
        &mut self,
        parent: usize,
        call: usize,
        parent_key: &str,
    ) -> Result<(String, Value), ConfigError> {
        let decl = self.decls[self.modules[parent].decls].calls[call].clone();
        let name = decl.label(0).to_string();
        let call_path = prefixed(&self.modules[parent].path, &format!("module.{name}"));
        let key = if parent_key.is_empty() {
            name.clone()
        } else {
            format!("{parent_key}.{name}")
        };
        let caller_rel = self.decls[self.modules[parent].decls].rel.clone();
        let Some(rel) = self.module_dir(&decl, &key, &caller_rel) else {
            let message = "module source not found; run `terraform init`".to_string();
            self.diagnose(&decl.file, decl.span().start, call_path, message);
            return Ok((name, Value::Unknown));
        };
        let child_decls = self.decls_of(&rel)?;
        let scope = self.modules[parent].scope.clone();
        let instance_keys = match keys(&decl.block.body, &scope) {
            Ok(keys) => keys,
            Err(message) => {
                self.diagnose(&decl.file, decl.span().start, call_path, message);
                return Ok((name, Value::Unknown));
            }
        };
        let mut instances = Vec::new();
        for instance_key in instance_keys {
            let path = match &instance_key.index {
                Some(index) => format!("{call_path}{index}"),
                None => call_path.clone(),
            };
            let inputs = self.arguments(&decl, &instance_key.bind(&scope), &path);
            let site = CallSite {
                parent,
                call,
                key: instance_key.clone(),
            };
            let child =
                self.instantiate(child_decls, Some(path), key.clone(), Some(site), inputs)?;
            let outputs = Value::Object(self.modules[child].outputs.clone());
            instances.push((instance_key.index, outputs));
        }
        let value = match instances.is_empty() {
            true => none_value(&decl.block.body, &scope),
            false => collect_instances(instances),
        };
        Ok((name, value))
    }

    /// The directory of a called module: relative to the caller for a local source, else
    /// where `terraform init` installed it.
    fn module_dir(&self, decl: &BlockDecl, key: &str, caller_rel: &str) -> Option<String> {
        let source = match decl.block.body.get_attribute("source").map(|a| &a.value) {
            Some(Expression::String(source)) => source.value().clone(),
            _ => return None,
        };
        if source.starts_with("./") || source.starts_with("../") {
            Some(join_rel(caller_rel, &source))
        } else {
            self.installed.get(key).cloned()
        }
    }

    /// A module call's arguments evaluated in the caller's scope.
    fn arguments(
        &mut self,
        decl: &BlockDecl,
        scope: &EvalScope,
        path: &str,
    ) -> BTreeMap<String, Assigned> {
        const NOT_INPUTS: [&str; 6] = [
            "source",
            "version",
            "count",
            "for_each",
            "providers",
            "depends_on",
        ];
        decl.block
            .body
            .attributes()
            .filter(|attr| !NOT_INPUTS.contains(&attr.key.as_str()))
            .map(|attr| {
                let file = decl.file_of(attr.key.as_str());
                let place = Place {
                    file,
                    text: self.files.get(file).map_or("", String::as_str),
                };
                let subject = format!("{path}.{}", attr.key.as_str());
                let value = eval(&attr.value, scope, place, &subject, &mut self.diagnostics);
                let assigned = Assigned {
                    value,
                    source: VariableSource::ModuleArgument {
                        file: file.to_string(),
                        span: attr.value.span().unwrap_or_default(),
                    },
                    expr: Some(attr.value.clone()),
                };
                (attr.key.as_str().to_string(), assigned)
            })
            .collect()
    }

    /// Expands every resource and data block of a module instance into instances.
    fn expand_resources(&mut self, module: usize) {
        let decls = self.modules[module].decls;
        let path = self.modules[module].path.clone();
        for (index, decl) in self.decls[decls].resources.clone().iter().enumerate() {
            let mode = match decl.block.ident.as_str() {
                "data" => Mode::Data,
                _ => Mode::Managed,
            };
            let (resource_type, name) = (decl.label(0).to_string(), decl.label(1).to_string());
            let address = instance_address(path.as_deref(), mode, &resource_type, &name, None);
            let scope = self.modules[module].scope.clone();
            let instance_keys = match keys(&decl.block.body, &scope) {
                Ok(keys) => keys,
                Err(message) => {
                    let message = format!("{message}; no instances");
                    self.diagnose(&decl.file, decl.span().start, address, message);
                    continue;
                }
            };
            for key in instance_keys {
                let address = address_of(path.as_deref(), mode, &resource_type, &name, &key);
                let attributes =
                    self.body_value(&decl.block.body, &key.bind(&scope), decl, &address);
                let public = ResourceInstance {
                    address,
                    module: path.clone(),
                    mode,
                    resource_type: resource_type.clone(),
                    name: name.clone(),
                    index: key.index.clone(),
                    attributes,
                    file: decl.file.clone(),
                    span: decl.span(),
                };
                self.instances.push(InstanceRecord {
                    public,
                    module,
                    decl: index,
                    key,
                });
            }
        }
    }

    fn body_value(
        &mut self,
        body: &Body,
        scope: &EvalScope,
        decl: &BlockDecl,
        subject: &str,
    ) -> Value {
        let place = Place {
            file: &decl.file,
            text: self.files.get(&decl.file).map_or("", String::as_str),
        };
        body_value(body, scope, true, place, subject, &mut self.diagnostics)
    }

    fn evaluate_outputs(&mut self, module: usize) {
        let decls = self.modules[module].decls;
        for decl in self.decls[decls].outputs.clone() {
            let name = decl.label(0).to_string();
            let Some(value) = decl.block.body.get_attribute("value") else {
                continue;
            };
            let subject = prefixed(&self.modules[module].path, &format!("output.{name}"));
            let place = Place {
                file: &decl.file,
                text: self.files.get(&decl.file).map_or("", String::as_str),
            };
            let value = eval(
                &value.value,
                &self.modules[module].scope,
                place,
                &subject,
                &mut self.diagnostics,
            );
            self.modules[module].outputs.insert(name, value);
        }
    }
}

/// Depth-first post-order visit for a topological order; a cycle is returned as the list of
/// its members.
fn visit(
    node: usize,
    edges: &[Vec<usize>],
    state: &mut [u8],
    stack: &mut Vec<usize>,
    order: &mut Vec<usize>,
) -> Result<(), Vec<usize>> {
    match state[node] {
        2 => return Ok(()),
        1 => {
            let from = stack.iter().position(|&n| n == node).unwrap_or(0);
            let mut cycle = stack[from..].to_vec();
            cycle.push(node);
            return Err(cycle);
        }
        _ => {}
    }
    state[node] = 1;
    stack.push(node);
    for &next in &edges[node] {
        visit(next, edges, state, stack, order)?;
    }
    stack.pop();
    state[node] = 2;
    order.push(node);
    Ok(())
}

/// `TYPE.NAME` or `data.TYPE.NAME` of a resource or data block, within its module.
fn block_address(decl: &BlockDecl) -> String {
    let prefix = match decl.block.ident.as_str() {
        "data" => "data.",
        _ => "",
    };
    format!("{prefix}{}.{}", decl.label(0), decl.label(1))
}

/// What a resource or module block with no instance is to its references: `[]` under
/// `count = 0`, `{}` under an empty `for_each`, unknown when its instances cannot be known.
fn none_value(body: &Body, scope: &EvalScope) -> Value {
    let repeated = ["count", "for_each"]
        .iter()
        .any(|name| body.get_attribute(name).is_some());
    if !repeated {
        return Value::Unknown;
    }
    match keys(body, scope) {
        Ok(found) if found.is_empty() && body.get_attribute("count").is_some() => {
            Value::List(Vec::new())
        }
        Ok(found) if found.is_empty() => Value::Object(BTreeMap::new()),
        _ => Value::Unknown,
    }
}

/// Values of the instances of one resource or module call as its references see them: the
/// single object, a list by `count` index, or a map by `for_each` key (see [`none_value`]
/// for a block with no instance).
fn collect_instances(instances: Vec<(Option<IndexKey>, Value)>) -> Value {
    match instances.first().map(|(key, _)| key) {
        Some(None) => instances
            .into_iter()
            .next()
            .map_or(Value::Unknown, |(_, v)| v),
        Some(Some(IndexKey::Int(_))) => {
            let len = instances
                .iter()
                .filter_map(|(key, _)| match key {
                    Some(IndexKey::Int(i)) => usize::try_from(*i).ok(),
                    _ => None,
                })
                .max()
                .map_or(0, |max| max + 1);
            let mut list = vec![Value::Unknown; len];
            for (key, value) in instances {
                if let Some(IndexKey::Int(i)) = key
                    && let Some(slot) = usize::try_from(i).ok().and_then(|i| list.get_mut(i))
                {
                    *slot = value;
                }
            }
            Value::List(list)
        }
        Some(Some(IndexKey::Str(_))) => Value::Object(
            instances
                .into_iter()
                .filter_map(|(key, value)| match key {
                    Some(IndexKey::Str(k)) => Some((k, value)),
                    _ => None,
                })
                .collect(),
        ),
        None => Value::Unknown,
    }
}

/// `path.rest`, or `rest` in the root module.
fn prefixed(path: &Option<String>, rest: &str) -> String {
    match path {
        Some(path) => format!("{path}.{rest}"),
        None => rest.to_string(),
    }
}

fn address_of(module: Option<&str>, mode: Mode, kind: &str, name: &str, key: &Key) -> String {
    instance_address(module, mode, kind, name, key.index.as_ref())
}
