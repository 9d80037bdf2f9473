//! Evaluating one expression the way Terraform does, with values not known until apply
//! (the [`unknown`] marker) carried through: anything computed from an unknown is unknown.
//! Functions come from [`super::functions`]; `try` and `can` are evaluated here, lazily.

use super::functions::{contains_unknown, is_unknown, unknown};
use hcl::eval::{Context, Evaluate};
use hcl::expr::{
    BinaryOp, BinaryOperator, Conditional, ForExpr, FuncCall, Operation, TraversalOperator,
    UnaryOp, UnaryOperator,
};
use hcl::template::{Directive, Element};
use hcl::{Expression, Map, ObjectKey, Template, Value};

/// Why an expression has no value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(super) enum EvalError {
    /// A name nothing declares.
    #[error("unknown name {0}")]
    Undefined(String),
    /// An attribute or key the value lacks.
    #[error("no {0} in the value")]
    Missing(String),
    /// An operand or argument of the wrong type.
    #[error("{0}")]
    Type(String),
    /// A local or module that depends on itself.
    #[error("{0} depends on itself")]
    Cycle(String),
}

/// How many locals deep [`Evaluator::is_set`] looks.
pub(super) const SET_DEPTH: usize = 8;

/// The result of evaluating an expression.
pub(super) type Eval = Result<Value, EvalError>;

/// A reference's value as the scope resolves it.
pub(super) struct Resolved {
    /// The value.
    pub value: Value,
    /// How many of the traversal's operators the scope consumed.
    pub used: usize,
    /// Whether a missing attribute below it is unknown rather than an error (an object read
    /// from state, which may lack attributes).
    pub lenient: bool,
}

/// What names mean where an expression is evaluated.
pub(super) trait Scope {
    /// The value of the name `root` followed by `ops` (`local` with `.name`): the scope takes
    /// as many operators as name the object it resolves.
    fn resolve(&self, root: &str, ops: &[TraversalOperator]) -> Result<Resolved, EvalError>;

    /// Whether `root.name` (`local.NAME`, `var.NAME`) is written as a set: a local whose
    /// expression makes one (looked into at most `depth` more times), a variable of a set type.
    fn names_a_set(&self, root: &str, name: &str, depth: usize) -> bool;
}

/// The functions whose result is a set.
const SET_FUNCTIONS: [&str; 5] = [
    "toset",
    "setunion",
    "setintersection",
    "setsubtract",
    "setproduct",
];

/// An evaluator: the scope, the functions and the names bound by iterations (`each`,
/// `count`, a `for` expression's variables, a `dynamic` block's iterator).
#[derive(Clone)]
pub(super) struct Evaluator<'s> {
    scope: &'s dyn Scope,
    functions: &'s Context<'s>,
    bindings: Vec<(String, Value)>,
}

impl<'s> Evaluator<'s> {
    /// An evaluator with no bindings.
    pub fn new(scope: &'s dyn Scope, functions: &'s Context<'s>) -> Self {
        Self {
            scope,
            functions,
            bindings: Vec::new(),
        }
    }

    /// This evaluator with `name` bound to `value`.
    pub fn with(&self, name: &str, value: Value) -> Self {
        let mut out = self.clone();
        out.bindings.push((name.to_owned(), value));
        out
    }

    /// Whether `expr` makes a set (`toset(...)`, a local holding one, a variable of a set
    /// type), whose elements Terraform iterates with the element as key. Values do not say:
    /// sets are lists here.
    pub fn is_set(&self, expr: &Expression, depth: usize) -> bool {
        match expr {
            Expression::FuncCall(call) => SET_FUNCTIONS.contains(&call.name.name.as_str()),
            Expression::Parenthesis(inner) => self.is_set(inner, depth),
            Expression::Traversal(t) => match (&t.expr, t.operators.as_slice()) {
                (Expression::Variable(root), [TraversalOperator::GetAttr(name)]) if depth > 0 => {
                    self.scope
                        .names_a_set(root.as_str(), name.as_str(), depth - 1)
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// The key and value of each element of the collection `expr` evaluates to (`value`).
    fn elements(&self, expr: &Expression, value: &Value) -> Result<Vec<(Value, Value)>, EvalError> {
        entries(value, self.is_set(expr, SET_DEPTH))
    }

    /// The value of `expr`.
    pub fn eval(&self, expr: &Expression) -> Eval {
        match expr {
            Expression::Array(items) => items.iter().map(|e| self.eval(e)).collect(),
            Expression::Object(object) => self.object(object),
            Expression::TemplateExpr(template) => {
                let template =
                    Template::from_expr(template).map_err(|e| EvalError::Type(e.to_string()))?;
                self.template(&template)
            }
            Expression::Variable(name) => self.variable(name.as_str(), &[]),
            Expression::Traversal(traversal) => {
                self.traversal(&traversal.expr, &traversal.operators)
            }
            Expression::FuncCall(call) => self.call(call),
            Expression::Parenthesis(inner) => self.eval(inner),
            Expression::Conditional(conditional) => self.conditional(conditional),
            Expression::Operation(operation) => self.operation(operation),
            Expression::ForExpr(for_expr) => self.for_expr(for_expr),
            literal => Ok(Value::from(literal.clone())),
        }
    }

    fn object(&self, object: &hcl::Object<ObjectKey, Expression>) -> Eval {
        let mut out = Map::new();
        for (key, value) in object {
            let key = match key {
                ObjectKey::Identifier(id) => id.to_string(),
                ObjectKey::Expression(e) => match self.eval(e)? {
                    k if is_unknown(&k) => return Ok(unknown()),
                    k => string_of(&k)?,
                },
                other => return Err(EvalError::Type(format!("unsupported key {other:?}"))),
            };
            out.insert(key, self.eval(value)?);
        }
        Ok(Value::Object(out))
    }

    fn template(&self, template: &Template) -> Eval {
        let mut out = String::new();
        for element in template.elements() {
            match element {
                Element::Literal(text) => out.push_str(text),
                Element::Interpolation(i) => match self.eval(&i.expr)? {
                    v if is_unknown(&v) => return Ok(unknown()),
                    v => out.push_str(&string_of(&v)?),
                },
                Element::Directive(directive) => match self.directive(directive)? {
                    v if is_unknown(&v) => return Ok(unknown()),
                    v => out.push_str(&string_of(&v)?),
                },
            }
        }
        Ok(Value::String(out))
    }

    fn directive(&self, directive: &Directive) -> Eval {
        match directive {
            Directive::If(d) => match truth(&self.eval(&d.cond_expr)?)? {
                None => Ok(unknown()),
                Some(true) => self.template(&d.true_template),
                Some(false) => match &d.false_template {
                    Some(t) => self.template(t),
                    None => Ok(Value::String(String::new())),
                },
            },
            Directive::For(d) => {
                let collection = self.eval(&d.collection_expr)?;
                let mut out = String::new();
                for (key, value) in self.elements(&d.collection_expr, &collection)? {
                    let mut inner = self.with(d.value_var.as_str(), value);
                    if let Some(k) = &d.key_var {
                        inner = inner.with(k.as_str(), key);
                    }
                    match inner.template(&d.template)? {
                        v if is_unknown(&v) => return Ok(unknown()),
                        v => out.push_str(&string_of(&v)?),
                    }
                }
                Ok(Value::String(out))
            }
        }
    }

    fn variable(&self, name: &str, ops: &[TraversalOperator]) -> Eval {
        if let Some((_, value)) = self.bindings.iter().rev().find(|(n, _)| n == name) {
            return self.apply(value.clone(), ops, false);
        }
        let resolved = self.scope.resolve(name, ops)?;
        self.apply(
            resolved.value,
            &ops[resolved.used.min(ops.len())..],
            resolved.lenient,
        )
    }

    fn traversal(&self, base: &Expression, ops: &[TraversalOperator]) -> Eval {
        match base {
            Expression::Variable(name) => self.variable(name.as_str(), ops),
            other => {
                let value = self.eval(other)?;
                self.apply(value, ops, false)
            }
        }
    }

    /// Applies traversal operators to a value.
    fn apply(&self, value: Value, ops: &[TraversalOperator], lenient: bool) -> Eval {
        let Some((op, rest)) = ops.split_first() else {
            return Ok(value);
        };
        if is_unknown(&value) {
            return Ok(unknown());
        }
        match op {
            TraversalOperator::AttrSplat | TraversalOperator::FullSplat => {
                let items = match value {
                    Value::Null => Vec::new(),
                    Value::Array(items) => items,
                    one => vec![one],
                };
                items
                    .into_iter()
                    .map(|item| self.apply(item, rest, lenient))
                    .collect()
            }
            TraversalOperator::GetAttr(name) => {
                let next = member(value, &Value::String(name.to_string()), lenient)?;
                self.apply(next, rest, lenient)
            }
            TraversalOperator::Index(index) => {
                let key = self.eval(index)?;
                if is_unknown(&key) {
                    return Ok(unknown());
                }
                let next = member(value, &key, lenient)?;
                self.apply(next, rest, lenient)
            }
            TraversalOperator::LegacyIndex(n) => {
                let next = member(value, &Value::from(*n), lenient)?;
                self.apply(next, rest, lenient)
            }
        }
    }

    fn call(&self, call: &FuncCall) -> Eval {
        match call.name.name.as_str() {
            "try" => self.attempt(&call.args),
            "can" => match call.args.as_slice() {
                [arg] => match self.eval(arg) {
                    Ok(v) if contains_unknown(&v) => Ok(unknown()),
                    Ok(_) => Ok(Value::Bool(true)),
                    Err(_) => Ok(Value::Bool(false)),
                },
                _ => Err(EvalError::Type("can takes one argument".to_owned())),
            },
            _ => {
                let mut args = call
                    .args
                    .iter()
                    .map(|a| self.eval(a))
                    .collect::<Result<Vec<_>, _>>()?;
                if call.expand_final {
                    match args.pop() {
                        Some(Value::Array(items)) => args.extend(items),
                        Some(v) if is_unknown(&v) => return Ok(unknown()),
                        _ => return Err(EvalError::Type("cannot expand a non-list".to_owned())),
                    }
                }
                // An unknown argument makes the result unknown; the functions themselves
                // decide about unknowns inside an argument (`length([unknown])` is 1).
                if args.iter().any(is_unknown) {
                    return Ok(unknown());
                }
                let literal = FuncCall {
                    name: call.name.clone(),
                    args: args.into_iter().map(Expression::from).collect(),
                    expand_final: false,
                };
                literal
                    .evaluate(self.functions)
                    .map_err(|e| EvalError::Type(e.to_string()))
            }
        }
    }

    /// `try(a, b, ...)`: the first argument that evaluates without error; unknown when that
    /// one is not wholly known (it might still fail).
    fn attempt(&self, args: &[Expression]) -> Eval {
        let mut last = EvalError::Type("try needs an argument".to_owned());
        for arg in args {
            match self.eval(arg) {
                Ok(v) if contains_unknown(&v) => return Ok(unknown()),
                Ok(v) => return Ok(v),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    fn conditional(&self, c: &Conditional) -> Eval {
        match truth(&self.eval(&c.cond_expr)?)? {
            None => Ok(unknown()),
            Some(true) => self.eval(&c.true_expr),
            Some(false) => self.eval(&c.false_expr),
        }
    }

    fn operation(&self, operation: &Operation) -> Eval {
        let literal = match operation {
            Operation::Unary(op) => {
                let value = self.eval(&op.expr)?;
                if is_unknown(&value) {
                    return Ok(unknown());
                }
                let value = match op.operator {
                    UnaryOperator::Neg => as_number(value),
                    UnaryOperator::Not => as_bool(value),
                };
                Operation::Unary(UnaryOp::new(op.operator, value))
            }
            Operation::Binary(op) => {
                let (lhs, rhs) = (self.eval(&op.lhs_expr)?, self.eval(&op.rhs_expr)?);
                if contains_unknown(&lhs) || contains_unknown(&rhs) {
                    return Ok(unknown());
                }
                let convert: fn(Value) -> Value = match op.operator {
                    BinaryOperator::Eq | BinaryOperator::NotEq => |v| v,
                    BinaryOperator::And | BinaryOperator::Or => as_bool,
                    _ => as_number,
                };
                Operation::Binary(BinaryOp::new(convert(lhs), op.operator, convert(rhs)))
            }
        };
        let value = Expression::from(literal)
            .evaluate(self.functions)
            .map_err(|e| EvalError::Type(e.to_string()))?;
        Ok(whole_numbers(value))
    }

    fn for_expr(&self, f: &ForExpr) -> Eval {
        let collection = self.eval(&f.collection_expr)?;
        if is_unknown(&collection) {
            return Ok(unknown());
        }
        let mut list = Vec::new();
        let mut object: Map<String, Value> = Map::new();
        for (key, value) in self.elements(&f.collection_expr, &collection)? {
            let mut inner = self.with(f.value_var.as_str(), value);
            if let Some(k) = &f.key_var {
                inner = inner.with(k.as_str(), key);
            }
            if let Some(cond) = &f.cond_expr {
                match truth(&inner.eval(cond)?)? {
                    None => return Ok(unknown()),
                    Some(false) => continue,
                    Some(true) => {}
                }
            }
            let value = inner.eval(&f.value_expr)?;
            let Some(key_expr) = &f.key_expr else {
                list.push(value);
                continue;
            };
            let key = inner.eval(key_expr)?;
            if is_unknown(&key) {
                return Ok(unknown());
            }
            let key = string_of(&key)?;
            if f.grouping {
                let group = object
                    .entry(key)
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(items) = group {
                    items.push(value);
                }
            } else if object.insert(key.clone(), value).is_some() {
                return Err(EvalError::Type(format!(
                    "duplicate key {key} in a for expression"
                )));
            }
        }
        Ok(match f.key_expr {
            Some(_) => Value::Object(object),
            None => Value::Array(list),
        })
    }
}

/// The key and value of each element of a collection: a map's keys (in order), a list's
/// indexes, a set's elements themselves.
pub(super) fn entries(collection: &Value, set: bool) -> Result<Vec<(Value, Value)>, EvalError> {
    match collection {
        Value::Array(items) if set => Ok(items.iter().map(|v| (v.clone(), v.clone())).collect()),
        Value::Array(items) => Ok(items
            .iter()
            .enumerate()
            .map(|(n, v)| (Value::from(n), v.clone()))
            .collect()),
        Value::Object(map) => {
            let mut pairs: Vec<(&String, &Value)> = map.iter().collect();
            pairs.sort_by(|a, b| a.0.cmp(b.0));
            Ok(pairs
                .into_iter()
                .map(|(k, v)| (Value::String(k.clone()), v.clone()))
                .collect())
        }
        other => Err(EvalError::Type(format!("cannot iterate over {other}"))),
    }
}

/// A member of a collection: an object's attribute or a list's element.
fn member(value: Value, key: &Value, lenient: bool) -> Eval {
    let missing = || {
        if lenient {
            Ok(unknown())
        } else {
            Err(EvalError::Missing(key.to_string()))
        }
    };
    match value {
        Value::Object(mut map) => {
            let key = string_of(key)?;
            map.swap_remove(&key).map_or_else(missing, Ok)
        }
        Value::Array(mut items) => {
            let n = match as_number(key.clone()) {
                Value::Number(n) => n.as_u64(),
                _ => None,
            };
            match n {
                Some(n) if (n as usize) < items.len() => Ok(items.swap_remove(n as usize)),
                _ => Err(EvalError::Missing(key.to_string())),
            }
        }
        other => Err(EvalError::Type(format!("cannot take {key} of {other}"))),
    }
}

/// A value as a string in a template or a key: numbers and booleans convert.
pub(super) fn string_of(value: &Value) -> Result<String, EvalError> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        other => Err(EvalError::Type(format!("{other} is not a string"))),
    }
}

/// A condition's truth; `None` when unknown.
fn truth(value: &Value) -> Result<Option<bool>, EvalError> {
    if is_unknown(value) {
        return Ok(None);
    }
    match as_bool(value.clone()) {
        Value::Bool(b) => Ok(Some(b)),
        other => Err(EvalError::Type(format!("{other} is not a boolean"))),
    }
}

/// A string holding a number as that number; anything else as it is.
pub(super) fn as_number(value: Value) -> Value {
    match &value {
        Value::String(s) => s
            .parse::<i64>()
            .map(Value::from)
            .or_else(|_| s.parse::<f64>().map(Value::from))
            .unwrap_or(value),
        _ => value,
    }
}

/// `"true"` and `"false"` as booleans; anything else as it is.
pub(super) fn as_bool(value: Value) -> Value {
    match value.as_str() {
        Some("true") => Value::Bool(true),
        Some("false") => Value::Bool(false),
        _ => value,
    }
}

/// A number without a fractional part as an integer (`4 / 2` is `2`).
fn whole_numbers(value: Value) -> Value {
    match &value {
        Value::Number(n) if n.is_f64() => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9e15 => Value::from(f as i64),
            _ => value,
        },
        _ => value,
    }
}
