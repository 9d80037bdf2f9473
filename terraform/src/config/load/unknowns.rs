//! Why a block's `count` or `for_each` is not known: each unknown reference it makes is
//! followed through locals, module arguments, module outputs and resource arguments to what
//! leaves it unknown. Terraform reads data sources at plan time, and a module `terraform
//! init` has not installed or a variable with no value is reported on its own, so only what
//! apply alone gives makes "not known until apply" true.

use std::collections::BTreeSet;

use hcl::edit::expr::{Expression, TraversalOperator};
use hcl::edit::visit::{Visit, visit_expr};

use super::{Loader, prefixed};
use crate::config::model::VariableSource;
use crate::functions::{EvalScope, evaluate};
use crate::state::Mode;

/// What leaves a value unknown before apply.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Cause {
    /// A module call whose module is not installed (its path, `module.vpc.module.tags`).
    NotInstalled(String),
    /// A variable with no value.
    NoValue,
    /// A data source the state does not hold (its address).
    Unread(String),
    /// An attribute only apply sets, or something not followed.
    Apply,
}

/// The references in an expression: bare names and traversals from a name.
#[derive(Default)]
struct Collector(Vec<Expression>);

impl Visit for Collector {
    fn visit_expr(&mut self, node: &Expression) {
        match node {
            Expression::Variable(_) => self.0.push(node.clone()),
            Expression::Traversal(traversal)
                if matches!(traversal.expr, Expression::Variable(_)) =>
            {
                self.0.push(node.clone());
                for operator in &traversal.operators {
                    self.visit_traversal_operator(operator);
                }
            }
            _ => visit_expr(self, node),
        }
    }
}

/// A reference's root name and the names of the `.NAME` attributes it reads next (up to
/// the first index or splat).
fn path_of(reference: &Expression) -> (String, Vec<String>) {
    match reference {
        Expression::Variable(name) => (name.as_str().to_string(), Vec::new()),
        Expression::Traversal(traversal) => {
            let root = match &traversal.expr {
                Expression::Variable(name) => name.as_str().to_string(),
                _ => String::new(),
            };
            let names = (traversal.operators.iter())
                .map_while(|op| match op.value() {
                    TraversalOperator::GetAttr(name) => Some(name.as_str().to_string()),
                    _ => None,
                })
                .collect();
            (root, names)
        }
        _ => (String::new(), Vec::new()),
    }
}

/// The attribute a resource reference reads after the resource's address and an optional
/// instance key or splat (`name` in `aws_iam_user.this[*].name`).
fn resource_attribute(reference: &Expression, depth: usize) -> Option<String> {
    let Expression::Traversal(traversal) = reference else {
        return None;
    };
    let mut rest = traversal.operators.iter().skip(depth).map(|op| op.value());
    match rest.next()? {
        TraversalOperator::GetAttr(name) => Some(name.as_str().to_string()),
        TraversalOperator::Index(_)
        | TraversalOperator::LegacyIndex(_)
        | TraversalOperator::AttrSplat(_)
        | TraversalOperator::FullSplat(_) => match rest.next()? {
            TraversalOperator::GetAttr(name) => Some(name.as_str().to_string()),
            _ => None,
        },
    }
}

impl Loader<'_> {
    /// What leaves `expr`, evaluated in `scope` of module instance `module`, unknown.
    pub(super) fn causes(
        &self,
        module: usize,
        expr: &Expression,
        scope: &EvalScope,
    ) -> BTreeSet<Cause> {
        let mut out = BTreeSet::new();
        self.trace(module, expr, scope, &mut BTreeSet::new(), &mut out);
        out
    }

    /// Adds to `out` the causes of each unknown reference in `expr`; `seen` stops circles.
    fn trace(
        &self,
        module: usize,
        expr: &Expression,
        scope: &EvalScope,
        seen: &mut BTreeSet<(usize, String)>,
        out: &mut BTreeSet<Cause>,
    ) {
        let mut collector = Collector::default();
        collector.visit_expr(expr);
        for reference in collector.0 {
            match evaluate(&hcl::Expression::from(reference.clone()), scope) {
                Ok(value) if value.contains_unknown() => {}
                _ => continue,
            }
            if seen.insert((module, reference.to_string())) {
                self.trace_reference(module, &reference, seen, out);
            }
        }
    }

    /// Adds the causes of one unknown reference.
    fn trace_reference(
        &self,
        module: usize,
        reference: &Expression,
        seen: &mut BTreeSet<(usize, String)>,
        out: &mut BTreeSet<Cause>,
    ) {
        let (root, names) = path_of(reference);
        let decls = &self.decls[self.modules[module].decls];
        let first = names.first().map(String::as_str);
        match (root.as_str(), first) {
            ("local", Some(name)) => match decls.local(name) {
                Some(local) => {
                    let scope = self.modules[module].scope.clone();
                    self.trace(module, &local.attr.value, &scope, seen, out);
                }
                None => {
                    out.insert(Cause::Apply);
                }
            },
            ("var", Some(name)) => self.trace_variable(module, name, seen, out),
            ("module", Some(name)) => {
                self.trace_output(module, name, names.get(1).map(String::as_str), seen, out)
            }
            ("data", Some(kind)) => match names.get(1) {
                Some(name) => {
                    let address = format!("data.{kind}.{name}");
                    self.trace_resource(module, &address, reference, seen, out);
                }
                None => {
                    out.insert(Cause::Apply);
                }
            },
            ("resource", Some(kind)) => match names.get(1) {
                Some(name) => {
                    let address = format!("{kind}.{name}");
                    self.trace_resource(module, &address, reference, seen, out);
                }
                None => {
                    out.insert(Cause::Apply);
                }
            },
            (kind, Some(name)) if kind.contains('_') => {
                let address = format!("{kind}.{name}");
                self.trace_resource(module, &address, reference, seen, out);
            }
            _ => {
                out.insert(Cause::Apply);
            }
        }
    }

    /// A variable: the argument of the call that made the module instance, or no value.
    fn trace_variable(
        &self,
        module: usize,
        name: &str,
        seen: &mut BTreeSet<(usize, String)>,
        out: &mut BTreeSet<Cause>,
    ) {
        let instance = &self.modules[module];
        let record = instance.variables.get(name);
        if record.is_none_or(|r| r.source == VariableSource::Unset) {
            out.insert(Cause::NoValue);
            return;
        }
        let argument = instance.call.as_ref().and_then(|site| {
            let parent = &self.modules[site.parent];
            let call = &self.decls[parent.decls].calls[site.call];
            let attr = call.block.body.get_attribute(name)?;
            Some((
                site.parent,
                attr.value.clone(),
                site.key.bind(&parent.scope),
            ))
        });
        match argument {
            Some((parent, expr, scope)) => self.trace(parent, &expr, &scope, seen, out),
            None => {
                out.insert(Cause::Apply);
            }
        }
    }

    /// `module.NAME` or `module.NAME.OUTPUT`: a call not installed, its instances' outputs,
    /// or its `count` or `for_each` when its instances are not known.
    fn trace_output(
        &self,
        module: usize,
        call_name: &str,
        output: Option<&str>,
        seen: &mut BTreeSet<(usize, String)>,
        out: &mut BTreeSet<Cause>,
    ) {
        let path = prefixed(&self.modules[module].path, &format!("module.{call_name}"));
        if self.not_installed.contains(&path) {
            out.insert(Cause::NotInstalled(path));
            return;
        }
        let decls = &self.decls[self.modules[module].decls];
        let Some(call) = decls.calls.iter().position(|c| c.label(0) == call_name) else {
            out.insert(Cause::Apply);
            return;
        };
        let children: Vec<usize> = (0..self.modules.len())
            .filter(|&i| {
                (self.modules[i].call.as_ref())
                    .is_some_and(|s| s.parent == module && s.call == call)
            })
            .collect();
        if children.is_empty() {
            let body = &decls.calls[call].block.body;
            let repeat = body
                .get_attribute("count")
                .or(body.get_attribute("for_each"));
            let scope = self.modules[module].scope.clone();
            match repeat {
                Some(attr) => self.trace(module, &attr.value, &scope, seen, out),
                None => {
                    out.insert(Cause::Apply);
                }
            }
            return;
        }
        for child in children {
            let child_decls = &self.decls[self.modules[child].decls];
            let scope = self.modules[child].scope.clone();
            let outputs = child_decls.outputs.iter();
            for decl in outputs.filter(|o| output.is_none_or(|name| o.label(0) == name)) {
                if let Some(value) = decl.block.body.get_attribute("value") {
                    self.trace(child, &value.value, &scope, seen, out);
                }
            }
        }
    }

    /// A resource or data source (`address` within the module): a data source the state
    /// does not hold, its `count` or `for_each` when not known, the configured argument the
    /// reference reads, or an attribute only apply sets.
    fn trace_resource(
        &self,
        module: usize,
        address: &str,
        reference: &Expression,
        seen: &mut BTreeSet<(usize, String)>,
        out: &mut BTreeSet<Cause>,
    ) {
        let decls = &self.decls[self.modules[module].decls];
        let Some(decl) = decls.resources.iter().find(|r| r.address() == address) else {
            return;
        };
        let data = address.starts_with("data.");
        let path = self.modules[module].path.clone();
        if data && !self.in_state(path.as_deref(), decl.label(0), decl.label(1)) {
            out.insert(Cause::Unread(prefixed(&path, address)));
            return;
        }
        let body = &decl.block.body;
        let scope = &self.modules[module].scope;
        let repeat = body
            .get_attribute("count")
            .or(body.get_attribute("for_each"));
        if let Some(repeat) = repeat {
            let keys = evaluate(&hcl::Expression::from(repeat.value.clone()), scope);
            if keys.is_ok_and(|keys| keys.contains_unknown()) {
                self.trace(module, &repeat.value, scope, seen, out);
                return;
            }
        }
        let skip = match path_of(reference).0.as_str() {
            "data" | "resource" => 2,
            _ => 1,
        };
        let configured =
            resource_attribute(reference, skip).and_then(|name| body.get_attribute(&name));
        let scope = &self.modules[module].scope;
        match configured {
            Some(attr) => self.trace(module, &attr.value, scope, seen, out),
            None => {
                out.insert(Cause::Apply);
            }
        }
    }

    /// Whether the state holds an instance of the data source `TYPE.NAME` in the module at
    /// `path`.
    fn in_state(&self, path: Option<&str>, kind: &str, name: &str) -> bool {
        let instances = self.state.map_or(&[][..], |s| s.instances.as_slice());
        instances.iter().any(|i| {
            i.mode == Mode::Data
                && i.module.as_deref() == path
                && i.resource_type == kind
                && i.name == name
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{LoadOptions, Project};

    /// The messages of loading a root module made of `main`.
    fn messages(main: &str) -> Vec<String> {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("main.tf"), main).expect("writes");
        let project = Project::load(dir.path(), &LoadOptions::default()).expect("loads");
        let diagnostics = project.diagnostics().iter();
        diagnostics
            .map(|d| format!("{}: {}", d.subject, d.message))
            .collect()
    }

    #[test]
    fn keys_from_a_data_source_without_state_are_read_at_plan_time() {
        let found = messages(
            "data \"aws_vpcs\" \"all\" {}\n\nlocals {\n  ids = data.aws_vpcs.all.ids\n}\n\nresource \"aws_vpc_dhcp_options_association\" \"a\" {\n  for_each        = toset(local.ids)\n  vpc_id          = each.value\n  dhcp_options_id = \"dopt-1\"\n}\n",
        );
        assert_eq!(
            found,
            vec![
                "aws_vpc_dhcp_options_association.a: for_each reads data.aws_vpcs.all, which \
                 Terraform reads from AWS at plan time; retrace has no state for it (pass \
                 --state from a run that read it); no instances"
            ]
        );
    }

    #[test]
    fn keys_that_follow_only_from_a_module_not_installed_are_not_repeated() {
        let found = messages(
            "module \"label\" {\n  source = \"cloudposse/label/null\"\n}\n\nlocals {\n  names = [module.label.id]\n}\n\nresource \"aws_sqs_queue\" \"q\" {\n  count = module.label.enabled ? 1 : 0\n}\n\nresource \"aws_sqs_queue\" \"named\" {\n  for_each = toset(local.names)\n  name     = each.value\n}\n",
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("module.label: module \"cloudposse/label/null\" is not installed"),
            "{found:?}"
        );
    }

    #[test]
    fn keys_from_an_attribute_apply_sets_stay_until_apply() {
        let found = messages(
            "data \"aws_vpcs\" \"all\" {}\n\nresource \"aws_sqs_queue\" \"q\" {\n  name = \"q\"\n}\n\nresource \"aws_sqs_queue_policy\" \"p\" {\n  count     = length(concat(data.aws_vpcs.all.ids, [aws_sqs_queue.q.arn]))\n  queue_url = \"u\"\n  policy    = \"{}\"\n}\n",
        );
        assert_eq!(
            found,
            vec!["aws_sqs_queue_policy.p: count is not known until apply; no instances"]
        );
    }
}
