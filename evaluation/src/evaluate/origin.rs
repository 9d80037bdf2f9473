//! Where the code writes a value: followed from the attribute's expression in its block
//! through literal objects and lists, locals and module arguments, to a literal, a variable, a
//! `for_each` entry or an expression that cannot be followed.

use super::files::{Module, Sources, attribute};
use super::{Instance, Place};
use hcl::expr::TraversalOperator;
use hcl::{Body, Expression, ObjectKey};
use reconciler::terraform::state::{Mode, PathStep};

/// What a value's expression is, followed as far as it goes.
#[derive(Debug, Clone, PartialEq)]
enum Origin {
    /// A literal.
    Literal,
    /// Exactly a variable (or a path into it) no module call sets.
    Variable,
    /// `each.value` (or a `dynamic` iterator's value) of a collection written as a literal.
    ForEach,
    /// Exactly a local or a module argument, whose own expression is the inner origin.
    Forwarded(Box<Origin>),
    /// Any other expression.
    Expression,
    /// Not written at all.
    Absent,
}

impl Origin {
    /// Whether the value is written away from the use site: a variable, a `for_each` entry,
    /// or a local or module argument that is not itself an expression or absent.
    fn indirect(&self) -> bool {
        match self {
            Origin::Variable | Origin::ForEach => true,
            Origin::Forwarded(inner) => !matches!(**inner, Origin::Expression | Origin::Absent),
            _ => false,
        }
    }
}

/// Whether the value at `path` of `instance` is written indirectly (see [`Origin::indirect`]).
pub(super) fn indirect(sources: &Sources, instance: &Instance, path: &[PathStep]) -> bool {
    let Some(module) = sources.modules.get(&instance.place.dir) else {
        return false;
    };
    let data = instance.mode == Mode::Data;
    let Some(decl) = module.resource(data, &instance.resource_type, &instance.name) else {
        return false;
    };
    let ctx = Ctx {
        sources,
        module,
        place: &instance.place,
        depth: instance.place.calls.len(),
        each: attribute(&decl.body, "for_each"),
        iterator: None,
    };
    ctx.in_body(&decl.body, path).indirect()
}

/// Where an expression is written: its module instance and what `each` and a `dynamic`
/// iterator iterate there.
#[derive(Clone)]
struct Ctx<'a> {
    sources: &'a Sources,
    module: &'a Module,
    place: &'a Place,
    /// How many of the place's calls lead here (fewer in a caller).
    depth: usize,
    /// The `for_each` of the block being evaluated.
    each: Option<Expression>,
    /// A `dynamic` block's iterator name and its `for_each`.
    iterator: Option<(String, Expression)>,
}

impl<'a> Ctx<'a> {
    /// The origin of the value at `path` in a block body: an argument, or a field of a
    /// nested block.
    fn in_body(&self, body: &Body, path: &[PathStep]) -> Origin {
        let Some((PathStep::Key(name), rest)) = path.split_first() else {
            return Origin::Expression;
        };
        if let Some(expr) = attribute(body, name) {
            return self.of(&expr, rest);
        }
        let statics: Vec<&hcl::Block> = body.blocks().filter(|b| b.identifier() == name).collect();
        let dynamics: Vec<&hcl::Block> = body
            .blocks()
            .filter(|b| {
                b.identifier() == "dynamic"
                    && b.labels().first().is_some_and(|l| l.as_str() == name)
            })
            .collect();
        let (index, rest) = match rest.split_first() {
            Some((PathStep::Index(n), rest)) => (*n as usize, rest),
            _ => return Origin::Expression,
        };
        match (statics.as_slice(), dynamics.as_slice()) {
            ([], []) => Origin::Absent,
            (blocks, []) => blocks
                .get(index)
                .map_or(Origin::Absent, |b| self.in_body(b.body(), rest)),
            ([], [dynamic]) => self.in_dynamic(dynamic, name, rest),
            _ => Origin::Expression,
        }
    }

    /// The origin of a field of a block a `dynamic` block makes.
    fn in_dynamic(&self, dynamic: &hcl::Block, name: &str, rest: &[PathStep]) -> Origin {
        let body = dynamic.body();
        let Some(content) = body.blocks().find(|b| b.identifier() == "content") else {
            return Origin::Absent;
        };
        let iterator = match attribute(body, "iterator") {
            Some(Expression::Variable(v)) => v.to_string(),
            _ => name.to_owned(),
        };
        let Some(collection) = attribute(body, "for_each") else {
            return Origin::Expression;
        };
        let inner = Ctx {
            iterator: Some((iterator, collection)),
            ..self.clone()
        };
        inner.in_body(content.body(), rest)
    }

    /// The origin of the value at `path` inside the value of `expr`.
    fn of(&self, expr: &Expression, path: &[PathStep]) -> Origin {
        match (expr, path.split_first()) {
            (Expression::Parenthesis(inner), _) => self.of(inner, path),
            (Expression::Object(object), Some((PathStep::Key(key), rest))) => object
                .iter()
                .find(|(k, _)| key_name(k).as_deref() == Some(key.as_str()))
                .map_or(Origin::Absent, |(_, v)| self.of(v, rest)),
            (Expression::Array(items), Some((PathStep::Index(n), rest))) => items
                .get(*n as usize)
                .map_or(Origin::Absent, |v| self.of(v, rest)),
            (Expression::Traversal(t), _) => match &t.expr {
                Expression::Variable(root) => match steps(&t.operators) {
                    Some(steps) => self.reference(root.as_str(), &steps, path),
                    None => Origin::Expression,
                },
                _ => Origin::Expression,
            },
            (e, _) if literal(e) => Origin::Literal,
            _ => Origin::Expression,
        }
    }

    /// The origin of the value at `path` inside `root.steps...`.
    fn reference(&self, root: &str, steps: &[PathStep], path: &[PathStep]) -> Origin {
        let Some((PathStep::Key(name), after)) = steps.split_first() else {
            return Origin::Expression;
        };
        let mut below = after.to_vec();
        below.extend_from_slice(path);
        match root {
            "var" => self.variable(name, &below),
            "local" => match self.module.locals.get(name.as_str()) {
                Some(expr) => {
                    let inner = Ctx {
                        each: None,
                        iterator: None,
                        ..self.clone()
                    };
                    Origin::Forwarded(Box::new(inner.of(expr, &below)))
                }
                None => Origin::Expression,
            },
            "each" if name == "value" => self.entry(self.each.as_ref()),
            _ => match &self.iterator {
                Some((iterator, collection)) if iterator == root && name == "value" => {
                    self.entry(Some(collection))
                }
                _ => Origin::Expression,
            },
        }
    }

    /// `var.NAME`: the call's argument when a module call sets it, else the variable.
    fn variable(&self, name: &str, path: &[PathStep]) -> Origin {
        let Some(caller) = self.caller() else {
            return Origin::Variable;
        };
        let (_, call_name, _) = &self.place.calls[self.depth - 1];
        let Some(call) = caller.module.calls.get(call_name) else {
            return Origin::Expression;
        };
        match attribute(&call.body, name) {
            Some(argument) => {
                let inner = Ctx {
                    each: attribute(&call.body, "for_each"),
                    ..caller
                };
                Origin::Forwarded(Box::new(inner.of(&argument, path)))
            }
            None => Origin::Variable,
        }
    }

    /// The context of the module call that made this module instance; `None` in the root.
    fn caller(&self) -> Option<Ctx<'a>> {
        let (dir, _, _) = self.place.calls.get(self.depth.checked_sub(1)?)?;
        Some(Ctx {
            sources: self.sources,
            module: self.sources.modules.get(dir)?,
            place: self.place,
            depth: self.depth - 1,
            each: None,
            iterator: None,
        })
    }

    /// An entry of the iterated collection: a `for_each` entry when the collection is
    /// written as a literal (in place, or as a variable or a local holding one).
    fn entry(&self, collection: Option<&Expression>) -> Origin {
        let written = match collection {
            Some(Expression::Object(_) | Expression::Array(_)) => true,
            Some(Expression::Traversal(t)) => match (&t.expr, steps(&t.operators).as_deref()) {
                (Expression::Variable(root), Some([PathStep::Key(name)])) => match root.as_str() {
                    "var" => self.variable(name, &[]) == Origin::Variable,
                    "local" => matches!(
                        self.module.locals.get(name.as_str()),
                        Some(Expression::Object(_) | Expression::Array(_))
                    ),
                    _ => false,
                },
                _ => false,
            },
            _ => false,
        };
        if written {
            Origin::ForEach
        } else {
            Origin::Expression
        }
    }
}

/// An object key's name, when written as a name or a plain string.
fn key_name(key: &ObjectKey) -> Option<String> {
    match key {
        ObjectKey::Identifier(id) => Some(id.to_string()),
        ObjectKey::Expression(Expression::String(s)) => Some(s.clone()),
        ObjectKey::Expression(Expression::Variable(v)) => Some(v.to_string()),
        _ => None,
    }
}

/// Traversal operators as path steps, when each is an attribute or a literal index.
fn steps(ops: &[TraversalOperator]) -> Option<Vec<PathStep>> {
    ops.iter()
        .map(|op| match op {
            TraversalOperator::GetAttr(name) => Some(PathStep::Key(name.to_string())),
            TraversalOperator::LegacyIndex(n) => Some(PathStep::Index(*n)),
            TraversalOperator::Index(Expression::Number(n)) => n.as_u64().map(PathStep::Index),
            TraversalOperator::Index(Expression::String(s)) => Some(PathStep::Key(s.clone())),
            _ => None,
        })
        .collect()
}

/// Whether an expression is a literal: no reference, call or operation anywhere in it.
fn literal(expr: &Expression) -> bool {
    match expr {
        Expression::Null | Expression::Bool(_) | Expression::Number(_) | Expression::String(_) => {
            true
        }
        Expression::Array(items) => items.iter().all(literal),
        Expression::Object(object) => object.values().all(literal),
        Expression::TemplateExpr(t) => hcl::Template::from_expr(t).is_ok_and(|t| {
            t.elements()
                .iter()
                .all(|e| matches!(e, hcl::template::Element::Literal(_)))
        }),
        Expression::Parenthesis(inner) => literal(inner),
        _ => false,
    }
}
