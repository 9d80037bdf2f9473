//! Where an attribute's value is written: the literal at the use site, a variable's default
//! or tfvars assignment, a local, a module argument, a `for_each` entry, or an expression too
//! complex to invert.

use std::ops::Range;

use hcl::edit::Span;
use hcl::edit::expr::{Expression, ObjectKey, TraversalOperator};
use hcl::edit::structure::Body;
use hcl::edit::template::Element;

use super::expand::{Place, nested};
use super::loaded::ModuleInstance;
use super::model::{VariableSource, line_of};
use super::project::Project;
use crate::functions::{EvalScope, Value, evaluate};
use crate::state::{IndexKey, PathStep};

/// Where the value of one attribute comes from. Spans are byte ranges into
/// [`Project::files`]; when the path goes into a literal object or list (a tag, a list
/// element, a map entry of a variable's default), the span is that of the entry.
#[derive(Debug, Clone, PartialEq)]
pub enum Provenance {
    /// A literal written at the use site.
    Literal {
        /// The file.
        file: String,
        /// The literal.
        span: Range<usize>,
    },
    /// Exactly `var.NAME` (or a path into it) of a variable not set by a module call.
    Variable {
        /// The module path, or `None` for the root.
        module: Option<String>,
        /// The variable's name.
        name: String,
        /// Where its value is written (the span narrowed to the entry `path` leads to).
        source: VariableSource,
        /// The steps into the variable's value (`max` for `var.asg.max`); empty for the whole.
        path: Vec<PathStep>,
    },
    /// Exactly `var.NAME` in a child module whose call sets the variable: the argument's
    /// expression, traced in the caller.
    ModuleInput {
        /// The module call's address, `module.app`.
        call: String,
        /// The argument (the variable's name).
        argument: String,
        /// The file of the module call.
        file: String,
        /// The argument's expression.
        span: Range<usize>,
        /// Where the argument's value comes from.
        inner: Box<Provenance>,
    },
    /// Exactly `local.NAME` (or a path into it).
    Local {
        /// The module path, or `None` for the root.
        module: Option<String>,
        /// The local's name.
        name: String,
        /// The file declaring it.
        file: String,
        /// The local's expression.
        span: Range<usize>,
        /// Where the local's value comes from.
        inner: Box<Provenance>,
    },
    /// `each.value` (or a `dynamic` block's iterator value, or a path into either) written as
    /// an entry of a literal `for_each` collection.
    ForEach {
        /// The instance key (or the element's key in a `dynamic` block).
        key: String,
        /// The file.
        file: String,
        /// The entry's value.
        span: Range<usize>,
        /// Where the collection is written.
        collection: Collection,
        /// The path to the value inside the collection: the key, then the steps after
        /// `each.value`.
        path: Vec<PathStep>,
    },
    /// An expression that cannot be traced to one place.
    Expression {
        /// The file.
        file: String,
        /// The expression.
        span: Range<usize>,
        /// Why it cannot be traced: a function call, an interpolation, a reference to another
        /// resource, ...
        reason: String,
        /// Where the variables and locals it reads whole (`var.NAME`, `local.NAME`) come from.
        reads: Vec<Provenance>,
    },
    /// The attribute is not set in the configuration.
    Absent {
        /// The file.
        file: String,
        /// The block (or literal object) where it would be added.
        span: Range<usize>,
    },
}

/// Where a literal `for_each` (or `dynamic`) collection is written.
#[derive(Debug, Clone, PartialEq)]
pub enum Collection {
    /// In the `for_each` argument itself, iterated by `iterator` (`each`, or a `dynamic`
    /// block's iterator).
    InPlace {
        /// The name the iteration binds.
        iterator: String,
    },
    /// `for_each = var.NAME`: the variable's default or tfvars assignment.
    Variable {
        /// The module path, or `None` for the root.
        module: Option<String>,
        /// The variable.
        name: String,
        /// Where its value is written (the span narrowed to the entry).
        source: VariableSource,
    },
    /// `for_each = local.NAME`, whose expression holds the literal entry.
    Local {
        /// The module path, or `None` for the root.
        module: Option<String>,
        /// The local.
        name: String,
        /// The file declaring it.
        file: String,
    },
}

/// A top-level block a value's provenance passes through: a variable's declaration, a
/// `.tfvars` entry, a `locals` block or a module call.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Written {
    /// The file, relative to the root.
    pub file: String,
    /// The block's kind as the file writes it: `variable`, `locals`, `module`, or `attribute`
    /// for a `.tfvars` entry.
    pub kind: &'static str,
    /// The variable's, the module call's or the entry's name; none for `locals`.
    pub label: Option<String>,
}

impl Provenance {
    /// The variables, `.tfvars` entries, `locals` blocks and module calls the value passes
    /// through on its way from where it is written to the attribute (the resource's own block
    /// is not among them).
    pub fn blocks(&self) -> Vec<Written> {
        let written = |file: &str, kind, label: Option<&str>| Written {
            file: file.to_owned(),
            kind,
            label: label.map(str::to_owned),
        };
        match self {
            Provenance::Literal { .. } | Provenance::Absent { .. } => Vec::new(),
            Provenance::Expression { reads, .. } => {
                reads.iter().flat_map(Provenance::blocks).collect()
            }
            Provenance::Variable {
                module,
                name,
                source,
                ..
            } => variable_blocks(module.as_deref(), name, source),
            Provenance::ModuleInput {
                call, file, inner, ..
            } => {
                let name = call.rsplit("module.").next().unwrap_or(call);
                let name = name.split('[').next().unwrap_or(name);
                let mut out = vec![written(file, "module", Some(name))];
                out.extend(inner.blocks());
                out
            }
            Provenance::Local { file, inner, .. } => {
                let mut out = vec![written(file, "locals", None)];
                out.extend(inner.blocks());
                out
            }
            Provenance::ForEach { collection, .. } => match collection {
                Collection::InPlace { .. } => Vec::new(),
                Collection::Variable {
                    module,
                    name,
                    source,
                } => variable_blocks(module.as_deref(), name, source),
                Collection::Local { file, .. } => vec![written(file, "locals", None)],
            },
        }
    }
}

/// Where variable `name` of `module` (`None` for the root) has its value written: its
/// declaration's default or its `.tfvars` entry; a root variable set nowhere (or on the
/// command line) is named with no file, as a `.tfvars` entry may give it a value.
fn variable_blocks(module: Option<&str>, name: &str, source: &VariableSource) -> Vec<Written> {
    let (file, kind) = match source {
        VariableSource::Default { file, .. } => (file.as_str(), "variable"),
        VariableSource::Tfvars { file, .. } | VariableSource::VarFile { file, .. } => {
            (file.as_str(), "attribute")
        }
        VariableSource::Unset | VariableSource::Cli if module.is_none() => ("", "variable"),
        _ => return Vec::new(),
    };
    vec![Written {
        file: file.to_owned(),
        kind,
        label: Some(name.to_owned()),
    }]
}

/// `var` or `local` when the expression is exactly `var.NAME` or `local.NAME`.
fn whole_reference(expr: &Expression) -> Option<&'static str> {
    let Expression::Traversal(traversal) = expr else {
        return None;
    };
    let Expression::Variable(root) = &traversal.expr else {
        return None;
    };
    let one_name = matches!(
        traversal
            .operators
            .iter()
            .map(|op| op.value())
            .collect::<Vec<_>>()
            .as_slice(),
        [TraversalOperator::GetAttr(_)]
    );
    match root.as_str() {
        "var" if one_name => Some("var"),
        "local" if one_name => Some("local"),
        _ => None,
    }
}

/// The file and span of a variable value the code writes (a default or a tfvars entry).
fn written_at(source: &VariableSource) -> Option<(String, Range<usize>)> {
    match source {
        VariableSource::Default { file, span }
        | VariableSource::Tfvars { file, span, .. }
        | VariableSource::VarFile { file, span, .. } => Some((file.clone(), span.clone())),
        _ => None,
    }
}

/// The name an object key stands for: an identifier or a literal string.
pub(super) fn key_name(key: &ObjectKey) -> Option<String> {
    match key {
        ObjectKey::Ident(ident) => Some(ident.as_str().to_string()),
        ObjectKey::Expression(Expression::String(s)) => Some(s.value().clone()),
        ObjectKey::Expression(_) => None,
    }
}

/// The element a `for_each` or `dynamic` iteration is at.
#[derive(Debug, Clone)]
struct Iterating {
    /// The name bound: `each`, or the dynamic block's iterator.
    name: String,
    /// The element's key as a path step into the collection.
    key: PathStep,
    /// The collection's expression.
    collection: Expression,
    /// The collection's file.
    file: String,
    /// How many iterations enclose the collection's expression.
    depth: usize,
}

/// Where an expression is being traced: module instance, file, scope and the iterations
/// around it.
#[derive(Clone)]
struct Ctx<'p> {
    project: &'p Project,
    module: usize,
    file: String,
    scope: EvalScope,
    iterating: Vec<Iterating>,
    /// How many computed expressions' reads this trace is inside ([`READ_DEPTH`] at most).
    reading: usize,
}

/// How deep the reads of computed expressions are followed (locals that read locals that
/// read variables...); a cycle, which Terraform refuses, stops here too.
const READ_DEPTH: usize = 4;

/// The provenance of the attribute at `path` of instance number `index`.
pub(super) fn of_instance(project: &Project, index: usize, path: &[PathStep]) -> Provenance {
    let record = &project.instances[index];
    let module = &project.modules[record.module];
    let decl = &project.decls[module.decls].resources[record.decl];
    let first = match path.first() {
        Some(PathStep::Key(name)) => decl.file_of(name),
        _ => &decl.file,
    };
    let mut ctx = Ctx {
        project,
        module: record.module,
        file: first.to_string(),
        scope: record.key.bind(&module.scope),
        iterating: Vec::new(),
        reading: 0,
    };
    if let (Some(IndexKey::Str(key)), Some(for_each)) =
        (&record.key.index, decl.block.body.get_attribute("for_each"))
    {
        ctx.iterating.push(Iterating {
            name: "each".to_string(),
            key: PathStep::Key(key.clone()),
            collection: for_each.value.clone(),
            file: decl.file.clone(),
            depth: 0,
        });
    }
    ctx.block(&decl.block.body, decl.span(), path, true)
}

/// The provenance of the argument at `path` of the module call that made module instance
/// number `module` (`for_each` and its key, to trace where that instance comes from).
pub(super) fn of_call(project: &Project, module: usize, path: &[PathStep]) -> Option<Provenance> {
    let site = project.modules[module].call.as_ref()?;
    let parent = &project.modules[site.parent];
    let decl = &project.decls[parent.decls].calls[site.call];
    let ctx = Ctx {
        project,
        module: site.parent,
        file: decl.file.clone(),
        scope: parent.scope.clone(),
        iterating: Vec::new(),
        reading: 0,
    };
    Some(ctx.block(&decl.block.body, decl.span(), path, true))
}

impl Ctx<'_> {
    fn expression(&self, span: Range<usize>, reason: impl Into<String>) -> Provenance {
        Provenance::Expression {
            file: self.file.clone(),
            span,
            reason: reason.into(),
            reads: Vec::new(),
        }
    }

    /// A computed expression, with where the variables and locals it reads come from.
    fn computed(&self, expr: &Expression, reason: impl Into<String>) -> Provenance {
        let span = expr.span().unwrap_or_default();
        let mut reads = Vec::new();
        if self.reading < READ_DEPTH {
            let mut inner = self.clone();
            inner.reading += 1;
            for (root, name) in super::refs::references(expr) {
                let (Some(name), false) = (name, self.iterating.iter().any(|it| it.name == root))
                else {
                    continue;
                };
                match root.as_str() {
                    "var" => reads.push(inner.variable(self.module, &name, &[])),
                    "local" => reads.push(inner.local(&name, &[])),
                    _ => {}
                }
            }
        }
        Provenance::Expression {
            file: self.file.clone(),
            span,
            reason: reason.into(),
            reads,
        }
    }

    fn module(&self) -> &ModuleInstance {
        &self.project.modules[self.module]
    }

    /// Follows `steps` from a block body: an argument, or a nested block by position.
    fn block(&self, body: &Body, span: Range<usize>, steps: &[PathStep], top: bool) -> Provenance {
        let Some((PathStep::Key(name), rest)) = steps.split_first() else {
            return self.expression(span, "a path into a block must start with a name");
        };
        if let Some(attr) = body.get_attribute(name) {
            return self.resolve(&attr.value, rest);
        }
        let text = self
            .project
            .files
            .get(&self.file)
            .map_or("", String::as_str);
        let place = Place {
            file: &self.file,
            text,
        };
        let blocks: Vec<_> = nested(body, &self.scope, (top, ""), place, &mut Vec::new())
            .into_iter()
            .filter(|b| b.kind == *name)
            .collect();
        let absent = Provenance::Absent {
            file: self.file.clone(),
            span: span.clone(),
        };
        match rest.split_first() {
            _ if blocks.is_empty() => absent,
            Some((PathStep::Index(position), after)) => {
                let Some(block) = usize::try_from(*position).ok().and_then(|p| blocks.get(p))
                else {
                    return absent;
                };
                let mut inner = self.clone();
                inner.scope = block.scope(&self.scope);
                if let (Some(it), Some(for_each)) =
                    (&block.iteration, block.block.body.get_attribute("for_each"))
                {
                    inner.iterating.push(Iterating {
                        name: it.name.clone(),
                        // a set's element is its own key: a string or number by its text, an
                        // object by its JSON, which no literal entry is found by
                        key: match &it.key {
                            Value::Number(n) if !it.in_set => PathStep::Index(*n as u64),
                            other => {
                                PathStep::Key(other.to_text().unwrap_or_else(|| other.to_string()))
                            }
                        },
                        collection: for_each.value.clone(),
                        file: self.file.clone(),
                        depth: self.iterating.len(),
                    });
                }
                let content_span = block.content.span().unwrap_or(span);
                inner.block(block.body, content_span, after, false)
            }
            _ => self.expression(span, format!("nested `{name}` blocks need a position")),
        }
    }

    /// Follows `steps` into an expression.
    fn resolve(&self, expr: &Expression, steps: &[PathStep]) -> Provenance {
        let span = expr.span().unwrap_or_default();
        match expr {
            Expression::Parenthesis(inner) => self.resolve(inner.inner(), steps),
            Expression::Null(_)
            | Expression::Bool(_)
            | Expression::Number(_)
            | Expression::String(_) => match steps {
                [] => self.literal(span),
                _ => self.expression(span, "a path into a primitive value"),
            },
            Expression::Array(items) => match steps.split_first() {
                None if is_literal(expr) => self.literal(span),
                None => self.computed(expr, "a list holding expressions"),
                Some((step, rest)) => match element(items.iter(), step) {
                    Some(item) => self.resolve(item, rest),
                    None => self.expression(span, format!("no element {}", step_text(step))),
                },
            },
            Expression::Object(object) => match steps.split_first() {
                None if is_literal(expr) => self.literal(span),
                None => self.computed(expr, "an object holding expressions"),
                Some((PathStep::Key(key), rest)) => {
                    let entry = object
                        .iter()
                        .find(|(k, _)| key_name(k).as_deref() == Some(key.as_str()));
                    match entry {
                        Some((_, value)) => self.resolve(value.expr(), rest),
                        None => Provenance::Absent {
                            file: self.file.clone(),
                            span,
                        },
                    }
                }
                Some((step, _)) => self.expression(span, format!("no element {}", step_text(step))),
            },
            Expression::StringTemplate(template) => {
                match template.iter().collect::<Vec<_>>().as_slice() {
                    [Element::Interpolation(only)] => self.resolve(&only.expr, steps),
                    _ => self.computed(expr, "a string template"),
                }
            }
            Expression::HeredocTemplate(_) => self.computed(expr, "a heredoc template"),
            Expression::Variable(name) => self.reference(name.as_str(), &[], steps, span),
            Expression::Traversal(traversal) => match &traversal.expr {
                Expression::Variable(name) => {
                    let operators: Vec<&TraversalOperator> =
                        traversal.operators.iter().map(|op| op.value()).collect();
                    self.reference(name.as_str(), &operators, steps, span)
                }
                _ => self.expression(span, "a traversal of a computed value"),
            },
            Expression::FuncCall(call) => {
                let name = call.name.name.as_str();
                match (
                    name,
                    call.args.iter().collect::<Vec<_>>().as_slice(),
                    steps.first(),
                ) {
                    ("toset", [only], Some(PathStep::Key(_))) => self.resolve(only, steps),
                    ("lookup", [map, key, ..], _) => match self.present_key(map, key) {
                        Some(key) => {
                            let path: Vec<PathStep> = std::iter::once(PathStep::Key(key))
                                .chain(steps.iter().cloned())
                                .collect();
                            self.resolve(map, &path)
                        }
                        None => self.computed(expr, "the default of lookup()"),
                    },
                    ("try", [first, ..], _) if self.evaluates(first) => self.resolve(first, steps),
                    _ => self.computed(expr, format!("the result of {name}()")),
                }
            }
            Expression::Conditional(conditional) => {
                // The value is the taken branch's, as far as the condition is known, when that
                // branch reads it from elsewhere; a literal branch is changed by flipping the
                // condition, which is no edit at the literal.
                let condition = hcl::Expression::from(conditional.cond_expr.clone());
                let taken = match evaluate(&condition, &self.scope) {
                    Ok(Value::Bool(true)) => self.resolve(&conditional.true_expr, steps),
                    Ok(Value::Bool(false)) => self.resolve(&conditional.false_expr, steps),
                    _ => return self.computed(expr, "a conditional expression"),
                };
                match taken {
                    Provenance::Literal { .. } => self.computed(expr, "a conditional expression"),
                    traced => traced,
                }
            }
            Expression::UnaryOp(_) | Expression::BinaryOp(_) => {
                self.computed(expr, "an operator expression")
            }
            Expression::ForExpr(_) => self.computed(expr, "a for expression"),
        }
    }

    /// The key `lookup(map, key, ...)` reads when the map holds it (its value is then the
    /// map's entry); `None` when the lookup falls back to its default or cannot be evaluated.
    fn present_key(&self, map: &Expression, key: &Expression) -> Option<String> {
        let key = match evaluate(&hcl::Expression::from(key.clone()), &self.scope).ok()? {
            Value::String(key) => key,
            _ => return None,
        };
        match evaluate(&hcl::Expression::from(map.clone()), &self.scope).ok()? {
            Value::Object(entries) if entries.contains_key(&key) => Some(key),
            _ => None,
        }
    }

    /// Whether an expression evaluates without an error: `try` takes its first such argument.
    fn evaluates(&self, expr: &Expression) -> bool {
        evaluate(&hcl::Expression::from(expr.clone()), &self.scope).is_ok()
    }

    fn literal(&self, span: Range<usize>) -> Provenance {
        Provenance::Literal {
            file: self.file.clone(),
            span,
        }
    }

    /// Follows a reference `root.operators...` and then `steps`.
    fn reference(
        &self,
        root: &str,
        operators: &[&TraversalOperator],
        steps: &[PathStep],
        span: Range<usize>,
    ) -> Provenance {
        let mut path = Vec::with_capacity(operators.len() + steps.len());
        for operator in operators {
            match self.step(operator) {
                Some(step) => path.push(step),
                None => return self.expression(span, "an index or splat that cannot be followed"),
            }
        }
        path.extend_from_slice(steps);
        let (first, rest) = match path.split_first() {
            Some((PathStep::Key(first), rest)) => (first.as_str(), rest),
            _ => ("", &[][..]),
        };
        if let Some(depth) = self.iterating.iter().rposition(|it| it.name == root) {
            return match first {
                "value" => self.iteration_value(depth, rest),
                _ => self.expression(span, format!("{root}.{first}: the iteration's key")),
            };
        }
        match root {
            "var" if !first.is_empty() => self.variable(self.module, first, rest),
            "local" if !first.is_empty() => self.local(first, rest),
            "count" => self.expression(span, "count.index: the instance's position"),
            "module" => self.expression(span, format!("an output of module.{first}")),
            "path" | "terraform" | "self" => self.expression(span, format!("{root}.{first}")),
            "data" => self.expression(span, format!("refers to a data source: data.{first}")),
            _ => self.expression(span, format!("refers to a resource: {root}.{first}")),
        }
    }

    /// A traversal operator as a path step, evaluating an index expression if needed.
    fn step(&self, operator: &TraversalOperator) -> Option<PathStep> {
        match operator {
            TraversalOperator::GetAttr(name) => Some(PathStep::Key(name.as_str().to_string())),
            TraversalOperator::LegacyIndex(index) => Some(PathStep::Index(*index.value())),
            TraversalOperator::Index(expr) => {
                match evaluate(&hcl::Expression::from(expr.clone()), &self.scope).ok()? {
                    Value::Number(n) if n >= 0.0 && n.fract() == 0.0 => {
                        Some(PathStep::Index(n as u64))
                    }
                    Value::String(key) => Some(PathStep::Key(key)),
                    _ => None,
                }
            }
            TraversalOperator::AttrSplat(_) | TraversalOperator::FullSplat(_) => None,
        }
    }

    /// `each.value` or a dynamic iterator's value: the collection's entry for the key.
    fn iteration_value(&self, depth: usize, steps: &[PathStep]) -> Provenance {
        let it = &self.iterating[depth];
        let mut outer = self.clone();
        outer.iterating.truncate(it.depth);
        outer.file = it.file.clone();
        let mut path = vec![it.key.clone()];
        path.extend_from_slice(steps);
        let found = outer.resolve(&it.collection, &path);
        let through = whole_reference(&it.collection);
        let entry =
            |file: String, span: Range<usize>, collection: Collection| Provenance::ForEach {
                key: step_text(&it.key),
                file,
                span,
                collection,
                path: path.clone(),
            };
        match found {
            Provenance::Literal { file, span } => entry(
                file,
                span,
                Collection::InPlace {
                    iterator: it.name.clone(),
                },
            ),
            Provenance::Variable {
                module,
                name,
                source,
                path: inner_path,
            } if through == Some("var") => match written_at(&source) {
                Some((file, span)) => entry(
                    file,
                    span,
                    Collection::Variable {
                        module,
                        name,
                        source,
                    },
                ),
                None => Provenance::Variable {
                    module,
                    name,
                    source,
                    path: inner_path,
                },
            },
            Provenance::Local {
                module,
                name,
                file,
                span,
                inner,
            } if through == Some("local") => match *inner {
                Provenance::Literal {
                    file: at,
                    span: value,
                } => entry(at, value, Collection::Local { module, name, file }),
                inner => Provenance::Local {
                    module,
                    name,
                    file,
                    span,
                    inner: Box::new(inner),
                },
            },
            other => other,
        }
    }

    /// `var.NAME` in module instance `module`, then `steps`.
    fn variable(&self, module: usize, name: &str, steps: &[PathStep]) -> Provenance {
        let instance = &self.project.modules[module];
        let Some(record) = instance.variables.get(name) else {
            return self.expression(0..0, format!("var.{name} is not declared"));
        };
        if let (Some(call), Some(argument)) = (&instance.call, &record.expr)
            && let VariableSource::ModuleArgument { file, span } = &record.source
        {
            let parent = &self.project.modules[call.parent];
            let block = &self.project.decls[parent.decls].calls[call.call].block;
            let mut caller = Ctx {
                project: self.project,
                module: call.parent,
                file: file.clone(),
                scope: call.key.bind(&parent.scope),
                iterating: Vec::new(),
                reading: self.reading,
            };
            if let (Some(IndexKey::Str(key)), Some(for_each)) =
                (&call.key.index, block.body.get_attribute("for_each"))
            {
                caller.iterating.push(Iterating {
                    name: "each".to_string(),
                    key: PathStep::Key(key.clone()),
                    collection: for_each.value.clone(),
                    file: file.clone(),
                    depth: 0,
                });
            }
            return Provenance::ModuleInput {
                call: instance.path.clone().unwrap_or_default(),
                argument: name.to_string(),
                file: file.clone(),
                span: span.clone(),
                inner: Box::new(caller.resolve(argument, steps)),
            };
        }
        Provenance::Variable {
            module: instance.path.clone(),
            name: name.to_string(),
            source: self.narrowed(&record.source, record.expr.as_ref(), steps),
            path: steps.to_vec(),
        }
    }

    /// A variable's source with its span narrowed to the entry `steps` lead to, where the
    /// value is written as a literal object or list.
    fn narrowed(
        &self,
        source: &VariableSource,
        expr: Option<&Expression>,
        steps: &[PathStep],
    ) -> VariableSource {
        let Some(span) = expr.map(|e| narrow(e, steps)) else {
            return source.clone();
        };
        let line = |file: &str| {
            line_of(
                self.project.files.get(file).map_or("", String::as_str),
                span.start,
            )
        };
        match source {
            VariableSource::Default { file, .. } => VariableSource::Default {
                file: file.clone(),
                span,
            },
            VariableSource::Tfvars { file, .. } => VariableSource::Tfvars {
                file: file.clone(),
                line: line(file),
                span,
            },
            VariableSource::VarFile { file, .. } => VariableSource::VarFile {
                file: file.clone(),
                line: line(file),
                span,
            },
            other => other.clone(),
        }
    }

    /// `local.NAME`, then `steps`.
    fn local(&self, name: &str, steps: &[PathStep]) -> Provenance {
        let decls = &self.project.decls[self.module().decls];
        let Some(decl) = decls.local(name) else {
            return self.expression(0..0, format!("local.{name} is not declared"));
        };
        let inner = Ctx {
            file: decl.file.clone(),
            iterating: Vec::new(),
            ..self.clone()
        };
        Provenance::Local {
            module: self.module().path.clone(),
            name: name.to_string(),
            file: decl.file.clone(),
            span: decl.attr.value.span().unwrap_or_default(),
            inner: Box::new(inner.resolve(&decl.attr.value, steps)),
        }
    }
}

/// Whether an expression is a literal: no references, calls or interpolations.
fn is_literal(expr: &Expression) -> bool {
    match expr {
        Expression::Null(_) | Expression::Bool(_) | Expression::Number(_) => true,
        Expression::String(_) => true,
        Expression::Array(items) => items.iter().all(is_literal),
        Expression::Object(object) => object
            .iter()
            .all(|(k, v)| key_name(k).is_some() && is_literal(v.expr())),
        Expression::Parenthesis(inner) => is_literal(inner.inner()),
        _ => false,
    }
}

/// The element of a list a step selects: by position, or (for a set) by value.
fn element<'e>(
    mut items: impl Iterator<Item = &'e Expression>,
    step: &PathStep,
) -> Option<&'e Expression> {
    match step {
        PathStep::Index(i) => items.nth(usize::try_from(*i).ok()?),
        PathStep::Key(key) => items.find(|item| match item {
            Expression::String(s) => s.value() == key,
            Expression::Number(n) => n.value().to_string() == *key,
            _ => false,
        }),
    }
}

/// The span of the entry `steps` lead to inside literal objects and lists, or of the
/// deepest expression reached.
fn narrow(expr: &Expression, steps: &[PathStep]) -> Range<usize> {
    let span = expr.span().unwrap_or_default();
    let Some((step, rest)) = steps.split_first() else {
        return span;
    };
    let next = match (expr, step) {
        (Expression::Object(object), PathStep::Key(key)) => object
            .iter()
            .find(|(k, _)| key_name(k).as_deref() == Some(key.as_str()))
            .map(|(_, v)| v.expr()),
        (Expression::Array(items), step) => element(items.iter(), step),
        (Expression::Parenthesis(inner), _) => return narrow(inner.inner(), steps),
        _ => None,
    };
    next.map_or(span, |next| narrow(next, rest))
}

/// A path step as written in an address: `"a"` or `0`, without brackets.
fn step_text(step: &PathStep) -> String {
    match step {
        PathStep::Key(key) => key.clone(),
        PathStep::Index(i) => i.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrowing_follows_literal_objects_and_lists_as_far_as_they_go() {
        let text = "{ a = [\"x\", { b = 1 }], c = var.d }";
        let expr = hcl::edit::parser::parse_expr(text).expect("parses");
        let at = |steps: &[PathStep]| &text[narrow(&expr, steps)];
        let key = |k: &str| PathStep::Key(k.to_string());
        assert_eq!(at(&[key("a"), PathStep::Index(1), key("b")]), "1");
        assert_eq!(at(&[key("a"), key("x")]), "\"x\"");
        assert_eq!(at(&[key("c"), key("e")]), "var.d");
        assert_eq!(at(&[key("z")]), text);
    }

    /// A project of one `main.tf`.
    fn project(main: &str) -> super::super::Project {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(dir.path().join("main.tf"), main).expect("written");
        super::super::Project::load(dir.path(), &Default::default()).expect("loads")
    }

    const RULES: &str = r#"
variable "rules" {
  type = list(map(string))
  default = [
    { port = "443", cidr = "10.0.0.0/8" },
    { port = "22" },
  ]
}

resource "aws_security_group" "web" {
  dynamic "ingress" {
    for_each = var.rules
    content {
      from_port   = lookup(ingress.value, "port", 0)
      to_port     = try(ingress.value.port, 0)
      protocol    = "tcp"
      cidr_blocks = [try(ingress.value.cidr, "0.0.0.0/0")]
    }
  }
}

output "rules" {
  value = length(var.rules)
}
"#;

    #[test]
    fn lookup_and_try_are_followed_to_the_entry_they_read_and_not_to_their_default() {
        let project = project(RULES);
        let key = |k: &str| PathStep::Key(k.to_string());
        let at = |position: u64, field: &str, more: &[PathStep]| {
            let mut path = vec![key("ingress"), PathStep::Index(position), key(field)];
            path.extend_from_slice(more);
            project.provenance("aws_security_group.web", &path)
        };
        let entry = |found: Option<Provenance>| match found {
            Some(Provenance::ForEach { key, path, .. }) => Some((key, path)),
            _ => None,
        };
        // `lookup(ingress.value, "port", 0)` and `try(ingress.value.port, 0)` read entry 1's
        // `port`.
        let port = Some(("1".to_owned(), vec![PathStep::Index(1), key("port")]));
        assert_eq!(entry(at(1, "from_port", &[])), port);
        assert_eq!(entry(at(1, "to_port", &[])), port);
        // Entry 0 has a `cidr`, entry 1 has none: its value is try's default.
        assert_eq!(
            entry(at(0, "cidr_blocks", &[PathStep::Index(0)])),
            Some(("0".to_owned(), vec![PathStep::Index(0), key("cidr")]))
        );
        assert!(matches!(
            at(1, "cidr_blocks", &[PathStep::Index(0)]),
            Some(Provenance::Expression { .. })
        ));
    }

    #[test]
    fn a_conditional_is_followed_into_the_branch_its_condition_takes() {
        let project = project(
            r#"
variable "named" {
  default = true
}

variable "name" {
  default = "orders"
}

resource "aws_sqs_queue" "q" {
  name                       = var.named ? var.name : null
  visibility_timeout_seconds = var.named ? null : 30
  delay_seconds              = timestamp() == "" ? 1 : 2
}
"#,
        );
        let at = |argument: &str| {
            project.provenance("aws_sqs_queue.q", &[PathStep::Key(argument.to_owned())])
        };
        assert!(
            matches!(at("name"), Some(Provenance::Variable { ref name, .. }) if name == "name"),
            "{:?}",
            at("name")
        );
        // A literal branch, and a condition known only after apply: the conditional itself.
        for argument in ["visibility_timeout_seconds", "delay_seconds"] {
            assert!(
                matches!(
                    at(argument),
                    Some(Provenance::Expression { ref reason, .. }) if reason == "a conditional expression"
                ),
                "{argument}: {:?}",
                at(argument)
            );
        }
    }

    #[test]
    fn the_blocks_referring_to_a_resource_are_named_with_their_files() {
        let project = project(
            r#"
resource "aws_kms_key" "k" {}

resource "aws_s3_bucket" "b" {
  bucket     = "logs"
  depends_on = [aws_kms_key.k]
}

resource "aws_s3_bucket_server_side_encryption_configuration" "b" {
  bucket = aws_s3_bucket.b.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = "aws:kms"
      kms_master_key_id = aws_kms_key.k.arn
    }
  }
}

locals {
  key = aws_kms_key.k.id
}

output "key" {
  value = local.key
}
"#,
        );
        let blocks = |found: Vec<super::super::Referrer>| -> Vec<String> {
            found
                .into_iter()
                .map(|r| format!("{} {}", r.block, r.file))
                .collect()
        };
        // Direct references and `depends_on`: the output reads the local, not the key.
        assert_eq!(
            blocks(project.referring_to(None, "aws_kms_key", "k")),
            [
                "aws_s3_bucket.b main.tf",
                "aws_s3_bucket_server_side_encryption_configuration.b main.tf",
                "local.key main.tf"
            ]
        );
        assert!(
            project
                .referring_to(
                    None,
                    "aws_s3_bucket_server_side_encryption_configuration",
                    "b"
                )
                .is_empty()
        );
        // The root has no caller to read its outputs.
        assert!(project.reading_output("module.none", "key").is_empty());
    }

    /// Where `aws_security_group.web`'s first `ingress` block's `from_port` comes from.
    fn first_ingress_port(project: &Project) -> Option<Provenance> {
        let path = [
            PathStep::Key("ingress".into()),
            PathStep::Index(0),
            PathStep::Key("from_port".into()),
        ];
        project.provenance("aws_security_group.web", &path)
    }

    /// A dynamic block over a set: the first block is the set's first element (22, not the
    /// 443 written first), traced to where that element is written.
    #[test]
    fn a_dynamic_block_over_a_set_is_traced_to_the_element_it_holds() {
        let text = "resource \"aws_security_group\" \"web\" {\n  dynamic \"ingress\" {\n    for_each = toset([443, 22])\n    content {\n      from_port = ingress.value\n    }\n  }\n}\n";
        match first_ingress_port(&project(text)) {
            Some(Provenance::ForEach { key, span, .. }) => {
                assert_eq!((key.as_str(), &text[span]), ("22", "22"));
            }
            other => panic!("{other:?}"),
        }
    }

    /// A set of objects is ordered by value, not as its default is written: its block 0 is
    /// the element {port = 22}, not the default's entry 0 ({port = 443}), so the entry is
    /// named by the element itself (its JSON), never by a position.
    #[test]
    fn a_dynamic_block_over_a_set_of_objects_is_traced_by_its_element() {
        let text = "variable \"rules\" {\n  type    = set(object({ port = number }))\n  default = [{ port = 443 }, { port = 22 }]\n}\n\nresource \"aws_security_group\" \"web\" {\n  dynamic \"ingress\" {\n    for_each = var.rules\n    content {\n      from_port = ingress.value.port\n    }\n  }\n}\n";
        match first_ingress_port(&project(text)) {
            Some(Provenance::ForEach { key, path, .. }) => {
                assert_eq!(key, r#"{"port":22}"#);
                assert_eq!(
                    path,
                    [PathStep::Key(key.clone()), PathStep::Key("port".into())]
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn readers_name_a_dynamic_block_apart_from_its_resource() {
        let project = project(RULES);
        assert_eq!(
            project.readers(None, "var", "rules"),
            vec!["aws_security_group.web/dynamic.ingress", "output.rules"]
        );
        assert!(project.readers(None, "var", "missing").is_empty());
    }
}
