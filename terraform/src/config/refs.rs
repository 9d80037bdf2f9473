//! What expressions refer to, and how many resource arguments depend on each variable and
//! local.

use std::collections::{BTreeMap, BTreeSet};

use hcl::edit::expr::{Expression, TraversalOperator};
use hcl::edit::structure::{Block, Body};
use hcl::edit::visit::{Visit, visit_expr};

use super::files::ModuleDecls;
use super::loaded::{InstanceRecord, ModuleInstance, Named};
use super::model::Referrer;

/// A reference's root name and first attribute: `var.x` is `("var", Some("x"))`, a bare
/// `each` is `("each", None)`.
pub(super) type Reference = (String, Option<String>);

/// The references in `expr`, in order (for-expression variables included).
pub(super) fn references(expr: &Expression) -> Vec<Reference> {
    detailed(expr).into_iter().map(|(r, _)| r).collect()
}

/// The names of what `expr` refers to, as far as its first attribute (`local.a`,
/// `module.vpc`, `aws_instance.web`) or, for a data source, its second (`data.aws_ami.ubuntu`).
pub(super) fn reference_names(expr: &Expression) -> Vec<String> {
    detailed(expr)
        .into_iter()
        .filter_map(
            |((root, first), second)| match (root.as_str(), first, second) {
                ("data", Some(kind), Some(name)) => Some(format!("data.{kind}.{name}")),
                ("data", ..) => None,
                (_, first, _) => Some(format!("{root}.{}", first?)),
            },
        )
        .collect()
}

/// The expressions of a resource or data block's body that its value depends on: every
/// argument but `depends_on`, in nested and `dynamic` blocks too, leaving out the
/// `lifecycle`, `provisioner` and `connection` blocks.
pub(super) fn resource_expressions(body: &Body) -> Vec<&Expression> {
    const LEFT_OUT: [&str; 3] = ["lifecycle", "provisioner", "connection"];
    fn collect<'b>(body: &'b Body, out: &mut Vec<&'b Expression>) {
        let attributes = body.attributes().filter(|a| a.key.as_str() != "depends_on");
        out.extend(attributes.map(|a| &a.value));
        for block in body.blocks() {
            if !LEFT_OUT.contains(&block.ident.as_str()) {
                collect(&block.body, out);
            }
        }
    }
    let mut out = Vec::new();
    collect(body, &mut out);
    out
}

/// The references in `expr` as [`references`], each with its second attribute (`max` in
/// `var.asg.max`).
fn detailed(expr: &Expression) -> Vec<(Reference, Option<String>)> {
    let mut collector = Collector(Vec::new());
    collector.visit_expr(expr);
    collector.0
}

struct Collector(Vec<(Reference, Option<String>)>);

/// The name a traversal operator reads, when it is `.NAME`.
fn attr_name(op: &TraversalOperator) -> Option<String> {
    match op {
        TraversalOperator::GetAttr(attr) => Some(attr.as_str().to_string()),
        _ => None,
    }
}

impl Visit for Collector {
    fn visit_expr(&mut self, node: &Expression) {
        match node {
            Expression::Variable(name) => self.0.push(((name.as_str().to_string(), None), None)),
            Expression::Traversal(traversal) => match &traversal.expr {
                Expression::Variable(name) => {
                    let mut ops = traversal.operators.iter().map(|op| attr_name(op.value()));
                    let mut root = Some(name.as_str().to_string());
                    // `resource.TYPE.NAME` is the reference `TYPE.NAME`.
                    if name.as_str() == "resource" {
                        root = ops.next().flatten();
                    }
                    let first = ops.next().flatten();
                    let second = first.as_ref().and(ops.next().flatten());
                    if let Some(root) = root {
                        self.0.push(((root, first), second));
                    }
                    for operator in &traversal.operators {
                        self.visit_traversal_operator(operator);
                    }
                }
                _ => visit_expr(self, node),
            },
            _ => visit_expr(self, node),
        }
    }
}

/// The names bound around an expression: `each` and `count` of the enclosing resource or
/// module call, and the iterators of enclosing `dynamic` blocks, each with the expression it
/// comes from.
#[derive(Debug, Clone, Default)]
struct Bound<'a> {
    each: Option<&'a Expression>,
    count: Option<&'a Expression>,
    iterators: Vec<(String, &'a Expression)>,
}

impl<'a> Bound<'a> {
    /// The `each` and `count` of a resource or module block's body.
    fn of_block(body: &'a Body) -> Bound<'a> {
        Bound {
            each: body.get_attribute("for_each").map(|a| &a.value),
            count: body.get_attribute("count").map(|a| &a.value),
            iterators: Vec::new(),
        }
    }
}

/// Counts, for every variable and local, the pairs of a resource instance and an argument
/// of it whose expression depends on the name.
pub(super) fn count_uses(
    modules: &[ModuleInstance],
    decls: &[ModuleDecls],
    instances: &[InstanceRecord],
) -> BTreeMap<Named, usize> {
    let graph = Graph { modules, decls };
    let mut uses = BTreeMap::new();
    for record in instances {
        let module = &modules[record.module];
        let body = &decls[module.decls].resources[record.decl].block.body;
        let bound = Bound::of_block(body);
        let mut sites = Vec::new();
        argument_sites(body, &bound, &mut sites);
        for (expr, bound) in sites {
            let mut names = BTreeSet::new();
            graph.close(record.module, expr, &bound, &mut names);
            for name in names {
                *uses.entry(name).or_insert(0) += 1;
            }
        }
    }
    uses
}

/// Every argument expression of a block body with the names bound around it, nested and
/// `dynamic` blocks included.
fn argument_sites<'a>(body: &'a Body, bound: &Bound<'a>, sites: &mut Sites<'a>) {
    attribute_sites(body, bound, sites);
    for block in body.blocks() {
        block_sites(block, bound, sites);
    }
}

/// Argument expressions with the names bound around them.
type Sites<'a> = Vec<(&'a Expression, Bound<'a>)>;

/// The argument expressions of a body's own attributes (not its blocks').
fn attribute_sites<'a>(body: &'a Body, bound: &Bound<'a>, sites: &mut Sites<'a>) {
    for attr in body.attributes() {
        if !matches!(attr.key.as_str(), "provider" | "depends_on") {
            sites.push((&attr.value, bound.clone()));
        }
    }
}

/// The argument expressions of one nested block: a `dynamic` block's `for_each` and its
/// `content` with the iterator bound.
fn block_sites<'a>(block: &'a Block, bound: &Bound<'a>, sites: &mut Sites<'a>) {
    match block.ident.as_str() {
        "lifecycle" | "provisioner" | "connection" => {}
        "dynamic" => {
            let Some(for_each) = block.body.get_attribute("for_each") else {
                return;
            };
            sites.push((&for_each.value, bound.clone()));
            let iterator = super::expand::iterator_name(block);
            let mut inner = bound.clone();
            inner.iterators.push((iterator, &for_each.value));
            for content in block
                .body
                .blocks()
                .filter(|b| b.ident.as_str() == "content")
            {
                argument_sites(&content.body, &inner, sites);
            }
        }
        _ => argument_sites(&block.body, bound, sites),
    }
}

/// What reads `named` in module instance `module`: each resource block, module call and
/// output with an expression that depends on it, each once in declaration order. A resource's
/// top-level `dynamic "NAME"` block is named apart, `aws_x.y/dynamic.NAME`, so a reader of the
/// collection that block iterates can tell it from the rest of the resource.
pub(super) fn readers(
    modules: &[ModuleInstance],
    decls: &[ModuleDecls],
    module: usize,
    named: &Named,
) -> Vec<String> {
    let graph = Graph { modules, decls };
    let declared = &decls[modules[module].decls];
    let reads = |sites: Sites| {
        sites.iter().any(|(expr, bound)| {
            let mut names = BTreeSet::new();
            graph.close(module, expr, bound, &mut names);
            names.contains(named)
        })
    };
    let mut out: Vec<String> = Vec::new();
    let mut add = |name: String| {
        if !out.contains(&name) {
            out.push(name);
        }
    };
    for decl in &declared.resources {
        let address = decl.address();
        let body = &decl.block.body;
        let bound = Bound::of_block(body);
        let mut own = Vec::new();
        attribute_sites(body, &bound, &mut own);
        if reads(own) {
            add(address.clone());
        }
        for block in body.blocks() {
            let mut sites = Vec::new();
            block_sites(block, &bound, &mut sites);
            if reads(sites) {
                add(match (block.ident.as_str(), block.labels.first()) {
                    ("dynamic", Some(label)) => format!("{address}/dynamic.{}", label.as_str()),
                    _ => address.clone(),
                });
            }
        }
    }
    for decl in &declared.calls {
        let mut sites = Vec::new();
        argument_sites(
            &decl.block.body,
            &Bound::of_block(&decl.block.body),
            &mut sites,
        );
        if reads(sites) {
            add(format!("module.{}", decl.label(0)));
        }
    }
    for decl in &declared.outputs {
        let mut sites = Vec::new();
        attribute_sites(&decl.block.body, &Bound::default(), &mut sites);
        if reads(sites) {
            add(format!("output.{}", decl.label(0)));
        }
    }
    out
}

/// The resource blocks (`aws_x.y`, `data.aws_x.y`) and module calls (`module.z`) of module
/// instance `module` whose `for_each` or `count` depends on `named`.
pub(super) fn iterating_blocks(
    modules: &[ModuleInstance],
    decls: &[ModuleDecls],
    module: usize,
    named: &Named,
) -> Vec<String> {
    let graph = Graph { modules, decls };
    let declared = &decls[modules[module].decls];
    let resources = declared.resources.iter().map(|d| d.address());
    let calls = declared
        .calls
        .iter()
        .map(|d| format!("module.{}", d.label(0)));
    let blocks = declared.resources.iter().chain(&declared.calls);
    resources
        .chain(calls)
        .zip(blocks)
        .filter(|(_, decl)| {
            ["for_each", "count"].iter().any(|arg| {
                decl.block.body.get_attribute(arg).is_some_and(|attr| {
                    let mut names = BTreeSet::new();
                    graph.close(module, &attr.value, &Bound::default(), &mut names);
                    names.contains(named)
                })
            })
        })
        .map(|(address, _)| address)
        .collect()
}

/// The blocks of module instance `module` whose expressions refer to `target` directly: a
/// resource (`aws_x.y`), or `module.NAME.OUTPUT` (`("module", NAME)` with `output`): each
/// resource block other than the target (`aws_x.z`, `data.aws_x.z`), module call
/// (`module.m`), output (`output.o`) and local (`local.l`), in declaration order. A reference
/// to the whole module object counts as one to every output.
pub(super) fn referring_blocks(
    modules: &[ModuleInstance],
    decls: &[ModuleDecls],
    module: usize,
    target: (&str, &str),
    output: Option<&str>,
) -> Vec<Referrer> {
    let declared = &decls[modules[module].decls];
    let refers = |sites: Sites| {
        sites.iter().any(|(expr, _)| {
            detailed(expr).iter().any(|((root, attr), second)| {
                root == target.0
                    && attr.as_deref() == Some(target.1)
                    && (output.is_none() || second.is_none() || second.as_deref() == output)
            })
        })
    };
    let own = format!("{}.{}", target.0, target.1);
    let mut out = Vec::new();
    for decl in &declared.resources {
        let address = decl.address();
        let mut sites = Vec::new();
        argument_sites(
            &decl.block.body,
            &Bound::of_block(&decl.block.body),
            &mut sites,
        );
        sites.extend(ordering_sites(&decl.block.body));
        if address != own && refers(sites) {
            out.push(Referrer {
                block: address,
                file: decl.file.clone(),
            });
        }
    }
    let named = [(&declared.calls, "module"), (&declared.outputs, "output")];
    for (list, kind) in named {
        for decl in list {
            let mut sites = Vec::new();
            argument_sites(
                &decl.block.body,
                &Bound::of_block(&decl.block.body),
                &mut sites,
            );
            sites.extend(ordering_sites(&decl.block.body));
            if refers(sites) {
                out.push(Referrer {
                    block: format!("{kind}.{}", decl.label(0)),
                    file: decl.file.clone(),
                });
            }
        }
    }
    for local in &declared.locals {
        if refers(vec![(&local.attr.value, Bound::default())]) {
            out.push(Referrer {
                block: format!("local.{}", local.name),
                file: local.file.clone(),
            });
        }
    }
    out
}

/// A block's `depends_on`, which names resources as references do (and which
/// [`argument_sites`] leaves out, as it carries no value).
fn ordering_sites(body: &Body) -> Sites<'_> {
    body.get_attribute("depends_on")
        .map(|attr| (&attr.value, Bound::default()))
        .into_iter()
        .collect()
}

/// How many arguments of a resource or module block (nested and `dynamic` blocks included)
/// read `each.value.FIELD`, or `each.value` whole or by an index (which may read the field).
pub(super) fn each_field_reads(body: &Body, field: &str) -> usize {
    let mut sites = Vec::new();
    argument_sites(body, &Bound::default(), &mut sites);
    sites
        .iter()
        .filter(|(expr, _)| {
            detailed(expr).iter().any(|((root, first), second)| {
                root == "each"
                    && first.as_deref() == Some("value")
                    && second.as_deref().is_none_or(|s| s == field)
            })
        })
        .count()
}

struct Graph<'a> {
    modules: &'a [ModuleInstance],
    decls: &'a [ModuleDecls],
}

impl Graph<'_> {
    /// Adds every variable and local `expr` depends on in module instance `module`.
    fn close(&self, module: usize, expr: &Expression, bound: &Bound, names: &mut BTreeSet<Named>) {
        for ((root, attr), second) in detailed(expr) {
            if let Some((_, from)) = bound.iterators.iter().rev().find(|(n, _)| *n == root) {
                let outer = Bound {
                    iterators: Vec::new(),
                    ..bound.clone()
                };
                self.close(module, from, &outer, names);
                continue;
            }
            match (root.as_str(), attr) {
                ("var", Some(name)) => {
                    names.insert(match second {
                        Some(field) => Named::VarField(module, name.clone(), field),
                        None => Named::VarWhole(module, name.clone()),
                    });
                    self.close_var(module, &name, names);
                }
                ("local", Some(name)) if names.insert(Named::Local(module, name.clone())) => {
                    let decls = &self.decls[self.modules[module].decls];
                    if let Some(local) = decls.local(&name) {
                        self.close(module, &local.attr.value, &Bound::default(), names);
                    }
                }
                ("each", _) => {
                    if let Some(from) = bound.each {
                        self.close(module, from, &Bound::default(), names);
                    }
                }
                ("count", _) => {
                    if let Some(from) = bound.count {
                        self.close(module, from, &Bound::default(), names);
                    }
                }
                _ => {}
            }
        }
    }

    /// Adds a variable and, in a child module, what the module call's argument depends on.
    fn close_var(&self, module: usize, name: &str, names: &mut BTreeSet<Named>) {
        if !names.insert(Named::var(module, name)) {
            return;
        }
        let Some(call) = &self.modules[module].call else {
            return;
        };
        let parent = &self.modules[call.parent];
        let block = &self.decls[parent.decls].calls[call.call].block;
        if let Some(argument) = block.body.get_attribute(name) {
            let bound = Bound::of_block(&block.body);
            self.close(call.parent, &argument.value, &bound, names);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(text: &str) -> Vec<Reference> {
        references(&hcl::edit::parser::parse_expr(text).expect("parses"))
    }

    fn named(root: &str, attr: &str) -> Reference {
        (root.to_string(), Some(attr.to_string()))
    }

    #[test]
    fn reference_names_reach_a_data_source_s_name() {
        let names =
            |text: &str| reference_names(&hcl::edit::parser::parse_expr(text).expect("parses"));
        assert_eq!(
            names("concat(data.aws_subnets.all.ids, [module.vpc.id, aws_vpc.main[0].id], local.x)"),
            vec![
                "data.aws_subnets.all",
                "module.vpc",
                "aws_vpc.main",
                "local.x"
            ]
        );
        assert_eq!(names("data.aws_region"), Vec::<String>::new());
    }

    #[test]
    fn a_resource_s_expressions_leave_out_its_meta_blocks() {
        let body = hcl::edit::parser::parse_body(
            "count = local.n\nname = var.a\ndepends_on = [aws_x.y]\ningress {\n  from = var.b\n}\nlifecycle {\n  ignore_changes = [tags]\n}\n",
        )
        .expect("parses");
        let names: Vec<String> = resource_expressions(&body)
            .into_iter()
            .flat_map(reference_names)
            .collect();
        assert_eq!(names, vec!["local.n", "var.a", "var.b"]);
    }

    #[test]
    fn references_are_found_in_calls_templates_and_indexes() {
        assert_eq!(
            refs("merge(local.tags, { Name = \"${var.name}-${each.key}\" })"),
            vec![
                named("local", "tags"),
                named("var", "name"),
                named("each", "key")
            ]
        );
        assert_eq!(
            refs("aws_subnet.x[var.index].id"),
            vec![named("aws_subnet", "x"), named("var", "index")]
        );
        assert_eq!(refs("count"), vec![("count".to_string(), None)]);
        assert_eq!(
            refs("resource.aws_subnet.x[0].id"),
            vec![named("aws_subnet", "x")]
        );
    }
}
