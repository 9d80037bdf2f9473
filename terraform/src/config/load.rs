//! Loading: module instances evaluated from the root down.

mod unknowns;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use hcl::edit::Span;
use hcl::edit::expr::Expression;
use hcl::edit::structure::Body;
use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use super::expand::{DYNAMIC_UNKNOWN, Key, KeysError, Place, body_value, eval, keys};
use super::files::{BlockDecl, Earlier, ModuleDecls, installed_modules, join_rel, read_module};
use super::loaded::{CallSite, InstanceRecord, ModuleInstance, VarRecord};
use super::model::{Diagnostic, LoadError, LoadOptions, ResourceInstance, VariableSource, line_of};
use super::project::Project;
use super::provider_data::derived;
use super::refs::{reference_names, resource_expressions};
use super::types::parse_type;
use super::vars::{Assigned, root_assignments};
use crate::functions::{EvalScope, Value, convert, evaluate};
use crate::state::{IndexKey, Mode, State, instance_address};
use knowledge::schema::AttrType;
use unknowns::Cause;

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
    /// The state's resource instances of each module instance being evaluated, innermost
    /// last (see [`Loader::state_resources`]).
    stored: Vec<StateInstances>,
    /// The module calls whose module is not installed, by path (`module.vpc.module.tags`).
    not_installed: BTreeSet<String>,
    /// An earlier load of the same configuration and the files changed since: what is
    /// unchanged is taken from it instead of being read and parsed again.
    earlier: Option<(&'a Project, &'a BTreeSet<String>)>,
}

/// A module instance's resource instances in the state, by address within the module.
type StateInstances = BTreeMap<String, Vec<(Option<IndexKey>, Value)>>;

/// Loads the configuration rooted at `dir`; see the module documentation. With `earlier`, a
/// load of the same configuration and the root-relative files changed since, only those
/// files are read and parsed again.
pub(super) fn load<'a>(
    dir: &Path,
    options: &LoadOptions<'a>,
    earlier: Option<(&'a Project, &'a BTreeSet<String>)>,
) -> Result<Project, LoadError> {
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
        stored: Vec::new(),
        not_installed: BTreeSet::new(),
        earlier,
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

/// A local, a module call or a resource (or data) block, as a node of the evaluation order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    Local(usize),
    Call(usize),
    Resource(usize),
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
    fn decls_of(&mut self, rel: &str) -> Result<usize, LoadError> {
        if let Some(index) = self.decls.iter().position(|d| d.rel == rel) {
            return Ok(index);
        }
        let earlier = self.earlier.and_then(|(project, changed)| {
            let decls = project.decls.iter().find(|d| d.rel == rel)?;
            Some(Earlier {
                decls,
                files: &project.files,
                changed,
            })
        });
        let decls = read_module(&self.root, rel, &mut self.files, earlier)?;
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
    ) -> Result<usize, LoadError> {
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
        let stored = self.state_resources(path.as_deref(), decls);
        for (address, instances) in &stored {
            scope = scope.with_resource(address.clone(), collect_instances(instances.clone()));
        }
        self.stored.push(stored);
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
        self.stored.pop();
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
    /// the root's variables and the locals it reads (unknown when it reads anything else).
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
                    let seen = &mut BTreeSet::new();
                    let scope = self.with_locals_read(decls, &region.value, scope.clone(), seen);
                    eval(&region.value, &scope, place, "", &mut Vec::new())
                }
                None => Value::Unknown,
            })
            .collect()
    }

    /// `scope` with each local of `decls` that `expr` reads, directly or through other
    /// locals, evaluated there (`region = local.region`); a local that reads anything but
    /// variables and such locals comes out unknown. `seen` stops circles.
    fn with_locals_read(
        &self,
        decls: usize,
        expr: &Expression,
        mut scope: EvalScope,
        seen: &mut BTreeSet<String>,
    ) -> EvalScope {
        for name in reference_names(expr) {
            let Some(local) =
                (name.strip_prefix("local.")).and_then(|name| self.decls[decls].local(name))
            else {
                continue;
            };
            if !seen.insert(local.name.clone()) {
                continue;
            }
            scope = self.with_locals_read(decls, &local.attr.value, scope, seen);
            let place = Place {
                file: &local.file,
                text: self.text(&local.file),
            };
            let value = eval(&local.attr.value, &scope, place, "", &mut Vec::new());
            scope = scope.with_local(local.name.clone(), value);
        }
        scope
    }

    /// The state's resource instances in the module at `path` (declared by `decls`), by
    /// resource address within the module; a data source the provider answers from its own
    /// settings ([`provider_data`](super::provider_data)) and the state lacks is derived.
    fn state_resources(&self, path: Option<&str>, decls: usize) -> StateInstances {
        let mut grouped = StateInstances::new();
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
            let address = decl.address();
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

    /// Locals, module calls and resources of a module in an order where each comes after
    /// what it refers to. Module calls that refer to each other's outputs form a group
    /// evaluated until settled: Terraform orders by output, so calls may read each other
    /// when no output depends on itself; a resource in such a circle settles with them. A
    /// circle of locals alone is an error, as in Terraform.
    fn order(&self, decls: usize) -> Result<Vec<Step>, LoadError> {
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
            .chain(
                (module.resources.iter().enumerate())
                    .map(|(i, r)| (Node::Resource(i), r.address())),
            )
            .collect();
        let position: HashMap<&str, usize> = (nodes.iter().enumerate())
            .map(|(i, (_, name))| (name.as_str(), i))
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
                    Node::Resource(i) => resource_expressions(&module.resources[i].block.body),
                };
                let mut targets: Vec<usize> = exprs
                    .into_iter()
                    .flat_map(reference_names)
                    .filter_map(|name| position.get(name.as_str()).copied())
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
            } else if members
                .iter()
                .any(|&i| !matches!(nodes[i].0, Node::Local(_)))
            {
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
    ) -> LoadError {
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
    fn cycle_error(&self, decls: usize, first: Node, names: Vec<String>) -> LoadError {
        let module = &self.decls[decls];
        let (file, at) = match first {
            Node::Local(i) => (
                &module.locals[i].file,
                module.locals[i].attr.span().unwrap_or_default().start,
            ),
            Node::Call(i) => (&module.calls[i].file, module.calls[i].span().start),
            Node::Resource(i) => (&module.resources[i].file, module.resources[i].span().start),
        };
        LoadError::Cycle {
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
    ) -> Result<(), LoadError> {
        match node {
            Node::Local(local) => self.evaluate_local(module, local),
            Node::Resource(resource) => self.expand_resource(module, resource),
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
    ) -> Result<(), LoadError> {
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
                Node::Local(i) => self.modules[module]
                    .locals
                    .get(&decls.locals[i].name)
                    .cloned(),
                Node::Call(i) => module_values.get(decls.calls[i].label(0)).cloned(),
                Node::Resource(i) => Some(Value::List(
                    (self.instances.iter())
                        .filter(|r| r.module == module && r.decl == i)
                        .map(|r| r.public.attributes.clone())
                        .collect(),
                )),
            })
            .map(|value| value.unwrap_or(Value::Unknown))
            .collect()
    }

    /// `local.NAME` or `module.NAME`.
    fn node_name(&self, decls: usize, node: Node) -> String {
        match node {
            Node::Local(i) => format!("local.{}", self.decls[decls].locals[i].name),
            Node::Call(i) => format!("module.{}", self.decls[decls].calls[i].label(0)),
            Node::Resource(i) => self.decls[decls].resources[i].address(),
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
    ) -> Result<(String, Value), LoadError> {
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
            let message = not_installed(&decl);
            self.diagnose(&decl.file, decl.span().start, call_path.clone(), message);
            self.not_installed.insert(call_path);
            return Ok((name, Value::Unknown));
        };
        let child_decls = self.decls_of(&rel)?;
        let scope = self.modules[parent].scope.clone();
        let instance_keys = match keys(&decl.block.body, &scope) {
            Ok(keys) => keys,
            Err(error) => {
                if let Some(message) = self.keys_message(parent, &decl, error, "") {
                    self.diagnose(&decl.file, decl.span().start, call_path, message);
                }
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

    /// What to report when a block's instance keys cannot be known (`None`: nothing, as it
    /// follows only from a module that is not installed or a variable with no value, both
    /// reported), `tail` appended. Keys not known because they read data sources the state
    /// does not hold are not "until apply": Terraform reads those at plan time.
    fn keys_message(
        &self,
        module: usize,
        decl: &BlockDecl,
        error: KeysError,
        tail: &str,
    ) -> Option<String> {
        let message = match error {
            KeysError::Unknown(message) => message,
            invalid => return Some(format!("{invalid}{tail}")),
        };
        let body = &decl.block.body;
        let (argument, attr) = match body.get_attribute("count") {
            Some(attr) => ("count", attr),
            None => ("for_each", body.get_attribute("for_each")?),
        };
        let scope = &self.modules[module].scope;
        self.unknown_message(module, (argument, &attr.value), scope, &message, tail)
    }

    /// What to report when `argument` (`count`, `for_each`), written `expr`, is not known in
    /// `scope`: `message` and `tail` when apply decides it; that it reads data sources the
    /// state does not hold, which Terraform reads at plan time; `None` when it follows only
    /// from a module that is not installed or a variable with no value, both reported.
    fn unknown_message(
        &self,
        module: usize,
        (argument, expr): (&str, &Expression),
        scope: &EvalScope,
        message: &str,
        tail: &str,
    ) -> Option<String> {
        let causes = self.causes(module, expr, scope);
        if causes.is_empty() || causes.contains(&Cause::Apply) {
            return Some(format!("{message}{tail}"));
        }
        let unread: Vec<&str> = (causes.iter())
            .filter_map(|cause| match cause {
                Cause::Unread(address) => Some(address.as_str()),
                _ => None,
            })
            .collect();
        if unread.is_empty() {
            return None;
        }
        Some(format!(
            "{argument} reads {}, which Terraform reads from AWS at plan time; retrace has no \
             state for it (pass --state from a run that read it){tail}",
            unread.join(", ")
        ))
    }

    /// Rewords, as [`Self::keys_message`] does for `count`, the diagnostics from `before` on
    /// about a `dynamic` block of `body` (in `decl`'s file) whose `for_each` is not known.
    fn explain_dynamic_blocks(
        &mut self,
        module: usize,
        (body, scope): (&Body, &EvalScope),
        decl: &BlockDecl,
        before: usize,
    ) {
        let added = self.diagnostics.split_off(before);
        let text = self.files.get(&decl.file).map_or("", String::as_str);
        let unknown = format!("{}{}", DYNAMIC_UNKNOWN.0, DYNAMIC_UNKNOWN.1);
        let mut kept = Vec::new();
        for mut diagnostic in added {
            let for_each = (diagnostic.message == unknown)
                .then(|| dynamic_for_each_at(body, text, diagnostic.line))
                .flatten();
            if let Some(for_each) = for_each {
                let (message, tail) = DYNAMIC_UNKNOWN;
                match self.unknown_message(module, ("for_each", for_each), scope, message, tail) {
                    Some(message) => diagnostic.message = message,
                    None => continue,
                }
            }
            kept.push(diagnostic);
        }
        self.diagnostics.extend(kept);
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

    /// Expands one resource or data block of a module instance into instances, and gives
    /// the module's scope what references to it read (see [`Loader::bind_resource`]).
    fn expand_resource(&mut self, module: usize, index: usize) {
        let decls = self.modules[module].decls;
        let path = self.modules[module].path.clone();
        let decl = self.decls[decls].resources[index].clone();
        let mode = match decl.block.ident.as_str() {
            "data" => Mode::Data,
            _ => Mode::Managed,
        };
        let (resource_type, name) = (decl.label(0).to_string(), decl.label(1).to_string());
        let address = instance_address(path.as_deref(), mode, &resource_type, &name, None);
        let scope = self.modules[module].scope.clone();
        let instance_keys = match keys(&decl.block.body, &scope) {
            Ok(keys) => keys,
            Err(error) => {
                if let Some(message) = self.keys_message(module, &decl, error, "; no instances") {
                    self.diagnose(&decl.file, decl.span().start, address, message);
                }
                self.bind_resource(module, &decl, None);
                return;
            }
        };
        let mut made = Vec::new();
        for key in instance_keys {
            let address = address_of(path.as_deref(), mode, &resource_type, &name, &key);
            let bound = key.bind(&scope);
            let attributes = self.body_value(module, (&decl.block.body, &bound), &decl, &address);
            made.push((key.index.clone(), attributes.clone()));
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
        self.bind_resource(module, &decl, Some(made));
    }

    /// Gives the module's scope the resource's instances, `made` with their configured
    /// values (`None` when they could not be known): each instance's state where the state
    /// holds it, else unknown, so `aws_instance.web[*]` has as many elements as `count`
    /// makes (`[]` under `count = 0`, `{}` under an empty `for_each`); and, for the
    /// instances the state lacks, the arguments their configuration sets, which Terraform
    /// knows at plan time (see [`EvalScope::with_planned`]).
    fn bind_resource(
        &mut self,
        module: usize,
        decl: &BlockDecl,
        made: Option<Vec<(Option<IndexKey>, Value)>>,
    ) {
        let address = decl.address();
        let stored = self.stored.last().and_then(|s| s.get(&address));
        let in_state = |index: &Option<IndexKey>| {
            stored.and_then(|s| {
                s.iter()
                    .find(|(key, _)| key == index)
                    .map(|(_, v)| v.clone())
            })
        };
        let (known, configured) = match made {
            None => (Value::Unknown, Value::Unknown),
            Some(made) if made.is_empty() => {
                let none = match decl.block.body.get_attribute("count") {
                    Some(_) => Value::List(Vec::new()),
                    None => Value::Object(BTreeMap::new()),
                };
                (none.clone(), none)
            }
            Some(made) => {
                let (mut known, mut configured) = (Vec::new(), Vec::new());
                for (index, attributes) in made {
                    let state = in_state(&index);
                    known.push((index.clone(), state.clone().unwrap_or(Value::Unknown)));
                    configured.push((index, state.unwrap_or_else(|| nulls_unknown(attributes))));
                }
                (collect_instances(known), collect_instances(configured))
            }
        };
        let instance = &mut self.modules[module];
        instance.scope = (instance.scope.clone())
            .with_resource(address.clone(), known)
            .with_planned(address, configured);
    }

    /// The value of a resource or data source instance's body, in module instance `module`.
    fn body_value(
        &mut self,
        module: usize,
        (body, scope): (&Body, &EvalScope),
        decl: &BlockDecl,
        subject: &str,
    ) -> Value {
        let place = Place {
            file: &decl.file,
            text: self.files.get(&decl.file).map_or("", String::as_str),
        };
        let before = self.diagnostics.len();
        let value = body_value(body, scope, true, place, subject, &mut self.diagnostics);
        self.explain_dynamic_blocks(module, (body, scope), decl, before);
        value
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

/// A planned instance's configured value as its references see it: an argument left null
/// is unset, which the provider may fill in at apply (an optional and computed attribute,
/// such as a launch template's `default_version`), so it is unknown, as any left out.
fn nulls_unknown(value: Value) -> Value {
    match value {
        Value::Null => Value::Unknown,
        Value::List(items) => Value::List(items.into_iter().map(nulls_unknown).collect()),
        Value::Set(items) => Value::Set(items.into_iter().map(nulls_unknown).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, nulls_unknown(v)))
                .collect(),
        ),
        other => other,
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

/// The diagnostic for a module call whose module is not where `terraform init` puts it.
fn not_installed(decl: &BlockDecl) -> String {
    match decl.block.body.get_attribute("source").map(|a| &a.value) {
        Some(Expression::String(source)) => format!(
            "module \"{}\" is not installed (`terraform init` installs it); what reads its \
             outputs is not evaluated",
            source.value()
        ),
        _ => "module source is not a literal string; the module is not read".to_string(),
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

/// The `for_each` of the `dynamic` block of `body`, at any depth, that starts on `line` of
/// `text`.
fn dynamic_for_each_at<'b>(body: &'b Body, text: &str, line: usize) -> Option<&'b Expression> {
    body.blocks().find_map(|block| {
        let starts_here = block.span().is_some_and(|s| line_of(text, s.start) == line);
        match (block.ident.as_str(), starts_here) {
            ("dynamic", true) => block.body.get_attribute("for_each").map(|a| &a.value),
            _ => dynamic_for_each_at(&block.body, text, line),
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::{LoadOptions, Project};
    use std::path::Path;

    fn write(dir: &Path, path: &str, text: &str) {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    const MAIN: &str = r#"
module "queue" {
  source = "./modules/queue"
  name   = "jobs"
}

resource "aws_s3_bucket" "logs" {
  bucket = "logs-${local.suffix}"
}
"#;
    const LOCALS: &str = "locals {\n  suffix = \"eu\"\n}\n";
    const QUEUE: &str = r#"
variable "name" {}

resource "aws_sqs_queue" "this" {
  name                       = var.name
  visibility_timeout_seconds = 30
}
"#;

    fn project(dir: &Path) {
        write(dir, "main.tf", MAIN);
        write(dir, "locals.tf", LOCALS);
        write(dir, "modules/queue/main.tf", QUEUE);
    }

    fn attribute(project: &Project, address: &str, name: &str) -> String {
        let instance = project.instance(address).expect("instance");
        instance.attributes.to_json().unwrap()[name].to_string()
    }

    #[test]
    fn a_reload_reads_the_changed_files_and_keeps_the_others_from_the_earlier_load() {
        let before = tempfile::tempdir().unwrap();
        project(before.path());
        let earlier = Project::load(before.path(), &LoadOptions::default()).unwrap();
        let after = tempfile::tempdir().unwrap();
        project(after.path());
        // The patch: the module's timeout and the local.
        write(
            after.path(),
            "modules/queue/main.tf",
            &QUEUE.replace("= 30", "= 60"),
        );
        write(after.path(), "locals.tf", &LOCALS.replace("eu", "us"));
        let changed = ["modules/queue/main.tf", "./locals.tf"];
        let reloaded = earlier
            .reload(after.path(), &LoadOptions::default(), changed)
            .unwrap();
        let fresh = Project::load(after.path(), &LoadOptions::default()).unwrap();
        assert_eq!(
            reloaded.instances().collect::<Vec<_>>(),
            fresh.instances().collect::<Vec<_>>()
        );
        assert_eq!(reloaded.files(), fresh.files());
        let queue = "module.queue.aws_sqs_queue.this";
        assert_eq!(
            attribute(&reloaded, queue, "visibility_timeout_seconds"),
            "60"
        );
        assert_eq!(
            attribute(&reloaded, "aws_s3_bucket.logs", "bucket"),
            "\"logs-us\""
        );
    }

    #[test]
    fn a_reload_does_not_read_a_file_it_is_not_told_changed() {
        let dir = tempfile::tempdir().unwrap();
        project(dir.path());
        let earlier = Project::load(dir.path(), &LoadOptions::default()).unwrap();
        write(dir.path(), "main.tf", &MAIN.replace("logs-", "audit-"));
        let reloaded = earlier
            .reload(dir.path(), &LoadOptions::default(), [])
            .unwrap();
        assert_eq!(
            attribute(&reloaded, "aws_s3_bucket.logs", "bucket"),
            "\"logs-eu\""
        );
        let fresh = Project::load(dir.path(), &LoadOptions::default()).unwrap();
        assert_eq!(
            attribute(&fresh, "aws_s3_bucket.logs", "bucket"),
            "\"audit-eu\""
        );
    }
}
