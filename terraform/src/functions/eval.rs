//! The expression walker: references, operators, conditionals, `for`, templates and calls.

use std::collections::BTreeMap;

use hcl::expr::{
    BinaryOp, BinaryOperator, Conditional, ForExpr, FuncCall, ObjectKey, Operation, TemplateExpr,
    Traversal, TraversalOperator, UnaryOperator,
};
use hcl::template::{Directive, Element, Strip};
use hcl::{Expression, Template};

use super::convert::{to_bool, to_number};
use super::{Call, EvalError, EvalScope, Unknowns, Value};

/// Evaluates `expr` in `scope`; see the module documentation for unknowns, `try` and `can`.
pub fn evaluate(expr: &Expression, scope: &EvalScope) -> Result<Value, EvalError> {
    Evaluator {
        scope,
        bound: Vec::new(),
    }
    .eval(expr)
}

/// Renders a parsed template in `scope`, as `templatefile` does.
pub(crate) fn render_template(template: &Template, scope: &EvalScope) -> Result<Value, EvalError> {
    Evaluator {
        scope,
        bound: Vec::new(),
    }
    .template(template)
}

struct Evaluator<'a> {
    scope: &'a EvalScope,
    /// Names bound by enclosing `for` expressions and directives, innermost last.
    bound: Vec<(String, Value)>,
}

impl Evaluator<'_> {
    fn eval(&mut self, expr: &Expression) -> Result<Value, EvalError> {
        match expr {
            Expression::Null => Ok(Value::Null),
            Expression::Bool(flag) => Ok(Value::Bool(*flag)),
            Expression::Number(number) => Ok(Value::Number(number.as_f64().unwrap_or(f64::NAN))),
            Expression::String(text) => Ok(Value::String(text.clone())),
            Expression::Array(items) => items
                .iter()
                .map(|item| self.eval(item))
                .collect::<Result<_, _>>()
                .map(Value::List),
            Expression::Object(object) => self.object(object),
            Expression::TemplateExpr(template) => self.template_expr(template),
            Expression::Variable(name) => self.traverse_root(name.as_str(), &[]),
            Expression::Traversal(traversal) => self.traversal(traversal),
            Expression::FuncCall(call) => self.call(call),
            Expression::Parenthesis(inner) => self.eval(inner),
            Expression::Conditional(conditional) => self.conditional(conditional),
            Expression::Operation(operation) => self.operation(operation),
            Expression::ForExpr(for_expr) => self.for_expr(for_expr),
            other => Err(EvalError::Unsupported(format!("\"{other}\""))),
        }
    }

    fn object(&mut self, object: &hcl::Object<ObjectKey, Expression>) -> Result<Value, EvalError> {
        let mut map = BTreeMap::new();
        for (key, value) in object {
            let key = match key {
                ObjectKey::Identifier(name) => name.to_string(),
                ObjectKey::Expression(expr) => match self.eval(expr)? {
                    Value::Unknown => return Ok(Value::Unknown),
                    key => key.to_text().ok_or(EvalError::Type {
                        expected: "string key",
                        found: key.type_name(),
                    })?,
                },
                other => return Err(EvalError::Unsupported(format!("object key \"{other}\""))),
            };
            map.insert(key, self.eval(value)?);
        }
        Ok(Value::Object(map))
    }

    fn bound(&self, name: &str) -> Option<&Value> {
        let local = self
            .bound
            .iter()
            .rev()
            .find(|(bound, _)| bound == name)
            .map(|(_, value)| value);
        local.or_else(|| self.scope.bindings.get(name))
    }

    fn traversal(&mut self, traversal: &Traversal) -> Result<Value, EvalError> {
        match &traversal.expr {
            Expression::Variable(name) => self.traverse_root(name.as_str(), &traversal.operators),
            expr => {
                let value = self.eval(expr)?;
                self.apply(value, &traversal.operators, false)
            }
        }
    }

    /// Resolves a reference starting at the name `root` and applies the remaining operators.
    fn traverse_root(
        &mut self,
        root: &str,
        operators: &[TraversalOperator],
    ) -> Result<Value, EvalError> {
        if let Some(value) = self.bound(root) {
            let value = value.clone();
            return self.apply(value, operators, false);
        }
        let attr = |index: usize| match operators.get(index) {
            Some(TraversalOperator::GetAttr(name)) => Some(name.as_str()),
            _ => None,
        };
        let reference = |depth: usize| {
            let names: Option<Vec<&str>> = (0..depth).map(attr).collect();
            names.map(|names| format!("{root}.{}", names.join(".")))
        };
        match root {
            "var" | "local" => {
                let name = attr(0).ok_or_else(|| EvalError::UnknownReference(root.to_string()))?;
                let table = if root == "var" {
                    &self.scope.variables
                } else {
                    &self.scope.locals
                };
                let value = table
                    .get(name)
                    .cloned()
                    .ok_or_else(|| EvalError::UnknownReference(format!("{root}.{name}")))?;
                self.apply(value, &operators[1..], false)
            }
            // Terraform's values: `path.module` relative to the working directory, `path.root`
            // the root module's (`.`), `path.cwd` the working directory itself.
            "path" => match attr(0) {
                Some(which @ ("module" | "root" | "cwd")) => {
                    let text = match which {
                        "module" => self.scope.module.clone(),
                        "root" => ".".to_owned(),
                        _ => std::path::absolute(&self.scope.root)
                            .unwrap_or_else(|_| self.scope.root.clone())
                            .display()
                            .to_string(),
                    };
                    self.apply(Value::String(text), &operators[1..], false)
                }
                _ => Err(EvalError::UnknownReference(
                    reference(1).unwrap_or_else(|| root.to_string()),
                )),
            },
            "data" => self.resource(reference(2), operators, 2),
            // `resource.TYPE.NAME`: the explicit form of a managed resource reference.
            "resource" => {
                let address = (0..2).map(attr).collect::<Option<Vec<&str>>>();
                self.resource(address.map(|names| names.join(".")), operators, 2)
            }
            _ if root.contains('_') => self.resource(reference(1), operators, 1),
            _ => Err(EvalError::UnknownReference(root.to_string())),
        }
    }

    /// A resource reference: unknown when the scope lacks the resource or anything under it.
    fn resource(
        &mut self,
        address: Option<String>,
        operators: &[TraversalOperator],
        depth: usize,
    ) -> Result<Value, EvalError> {
        let address = address.ok_or_else(|| {
            EvalError::Unsupported("a resource reference needs a type and a name".to_string())
        })?;
        let operators = &operators[depth..];
        let planned = self.scope.planned.get(&address);
        match (planned, self.scope.resources.get(&address)) {
            (Some(value), _) if names_argument(operators) => {
                self.apply(value.clone(), operators, true)
            }
            (_, Some(value)) => self.apply(value.clone(), operators, true),
            _ => Ok(Value::Unknown),
        }
    }

    /// Applies traversal operators; `lenient` turns missing keys and indexes into unknowns, as
    /// for resource attributes that the state does not hold yet.
    fn apply(
        &mut self,
        mut value: Value,
        operators: &[TraversalOperator],
        lenient: bool,
    ) -> Result<Value, EvalError> {
        let mut rest = operators;
        while let Some((operator, tail)) = rest.split_first() {
            rest = tail;
            value = match operator {
                TraversalOperator::GetAttr(name) => lookup_key(value, name.as_str(), lenient)?,
                TraversalOperator::LegacyIndex(index) => {
                    lookup_index(value, Value::Number(*index as f64), lenient)?
                }
                TraversalOperator::Index(expr) => {
                    let index = self.eval(expr)?;
                    lookup_index(value, index, lenient)?
                }
                TraversalOperator::AttrSplat | TraversalOperator::FullSplat => {
                    let take = match operator {
                        TraversalOperator::AttrSplat => rest
                            .iter()
                            .take_while(|op| matches!(op, TraversalOperator::GetAttr(_)))
                            .count(),
                        _ => rest.len(),
                    };
                    let (each, after) = rest.split_at(take);
                    rest = after;
                    self.splat(value, each, lenient)?
                }
            };
        }
        Ok(value)
    }

    fn splat(
        &mut self,
        value: Value,
        operators: &[TraversalOperator],
        lenient: bool,
    ) -> Result<Value, EvalError> {
        match value {
            Value::Unknown => Ok(Value::Unknown),
            Value::Null => Ok(Value::List(Vec::new())),
            Value::List(items) | Value::Set(items) => items
                .into_iter()
                .map(|item| self.apply(item, operators, lenient))
                .collect::<Result<_, _>>()
                .map(Value::List),
            single => Ok(Value::List(vec![self.apply(single, operators, lenient)?])),
        }
    }

    fn call(&mut self, call: &FuncCall) -> Result<Value, EvalError> {
        // `core::NAME` is the namespaced spelling of a built-in function (Terraform 1.8+); the
        // built-in provider's functions are in the table by their namespaced names.
        let qualified;
        let name = match call.name.namespace.as_slice() {
            [] => call.name.name.as_str(),
            [only] if only.as_str() == "core" => call.name.name.as_str(),
            _ => {
                qualified = call.name.to_string();
                if !qualified.starts_with(super::provider::NAMESPACE) {
                    return Err(EvalError::UnknownFunction(qualified));
                }
                qualified.as_str()
            }
        };
        match name {
            "try" => return self.try_each(&call.args),
            "can" => return self.can(&call.args),
            "issensitive" => return self.issensitive(&call.args),
            "templatestring" => direct_reference(call.args.first())?,
            _ => {}
        }
        let builtin = *self
            .scope
            .functions
            .get(name)
            .ok_or_else(|| EvalError::UnknownFunction(name.to_string()))?;
        let mut args = call
            .args
            .iter()
            .map(|arg| self.eval(arg))
            .collect::<Result<Vec<_>, _>>()?;
        if call.expand_final {
            match args.pop() {
                Some(Value::List(items) | Value::Set(items)) => args.extend(items),
                Some(Value::Unknown) => return Ok(Value::Unknown),
                Some(other) => {
                    return Err(EvalError::Type {
                        expected: "list to expand with `...`",
                        found: other.type_name(),
                    });
                }
                None => {}
            }
        }
        let call = Call {
            name,
            args,
            scope: self.scope,
        };
        let count = call.args.len();
        if count < builtin.min_args || builtin.max_args.is_some_and(|max| count > max) {
            return Err(call.error(format!("wrong number of arguments ({count})")));
        }
        let unknown = match builtin.unknowns {
            Unknowns::Deep => call.args.iter().any(Value::contains_unknown),
            Unknowns::Shallow => call.args.contains(&Value::Unknown),
        };
        if unknown {
            Ok(Value::Unknown)
        } else {
            (builtin.run)(&call)
        }
    }

    /// `try`: the first argument that evaluates without error; later ones are not evaluated.
    fn try_each(&mut self, args: &[Expression]) -> Result<Value, EvalError> {
        let mut last_error = None;
        for arg in args {
            match self.eval(arg) {
                Ok(value) => return Ok(value),
                Err(error) => last_error = Some(error),
            }
        }
        Err(EvalError::Function {
            function: "try".to_string(),
            message: last_error.map_or_else(
                || "at least one argument is required".to_string(),
                |error| format!("no argument succeeded; last error: {error}"),
            ),
        })
    }

    /// `can`: whether its one argument evaluates without error (unknown if it is unknown).
    fn can(&mut self, args: &[Expression]) -> Result<Value, EvalError> {
        let [arg] = args else {
            return Err(EvalError::Function {
                function: "can".to_string(),
                message: "exactly one argument is required".to_string(),
            });
        };
        Ok(match self.eval(arg) {
            Ok(value) if value.contains_unknown() => Value::Unknown,
            Ok(_) => Value::Bool(true),
            Err(_) => Value::Bool(false),
        })
    }

    /// `issensitive`: this evaluator does not track sensitive marks, so the answer comes from
    /// the argument's form: true for a `sensitive(...)` call, false for a `nonsensitive(...)`
    /// call, a literal or a list or object constructor (whose elements' marks do not mark it),
    /// and unknown for anything else (a variable may be declared sensitive).
    fn issensitive(&mut self, args: &[Expression]) -> Result<Value, EvalError> {
        let [arg] = args else {
            return Err(EvalError::Function {
                function: "issensitive".to_string(),
                message: "exactly one argument is required".to_string(),
            });
        };
        self.eval(arg)?;
        Ok(sensitivity(arg).map_or(Value::Unknown, Value::Bool))
    }

    fn conditional(&mut self, conditional: &Conditional) -> Result<Value, EvalError> {
        match self.condition(&conditional.cond_expr)? {
            None => Ok(Value::Unknown),
            Some(true) => self.eval(&conditional.true_expr),
            Some(false) => self.eval(&conditional.false_expr),
        }
    }

    /// A boolean condition; `None` when it is unknown.
    fn condition(&mut self, expr: &Expression) -> Result<Option<bool>, EvalError> {
        match self.eval(expr)? {
            Value::Unknown => Ok(None),
            value => to_bool(&value).map(Some).ok_or(EvalError::Type {
                expected: "bool",
                found: value.type_name(),
            }),
        }
    }

    fn operation(&mut self, operation: &Operation) -> Result<Value, EvalError> {
        match operation {
            Operation::Unary(unary) => match (unary.operator, self.eval(&unary.expr)?) {
                (_, Value::Unknown) => Ok(Value::Unknown),
                (UnaryOperator::Neg, value) => Ok(Value::Number(-number_operand(&value)?)),
                (UnaryOperator::Not, value) => Ok(Value::Bool(!bool_operand(&value)?)),
            },
            Operation::Binary(binary) => self.binary(binary),
        }
    }

    fn binary(&mut self, binary: &BinaryOp) -> Result<Value, EvalError> {
        let left = self.eval(&binary.lhs_expr)?;
        let right = self.eval(&binary.rhs_expr)?;
        if left == Value::Unknown || right == Value::Unknown {
            return Ok(Value::Unknown);
        }
        binary_operation(binary.operator, &left, &right)
    }

    fn for_expr(&mut self, for_expr: &ForExpr) -> Result<Value, EvalError> {
        let Some(entries) = for_entries(self.eval(&for_expr.collection_expr)?)? else {
            return Ok(Value::Unknown);
        };
        let mut values = Vec::new();
        let mut keyed = Vec::new();
        for (key, value) in entries {
            let depth = self.bound.len();
            if let Some(key_var) = &for_expr.key_var {
                self.bound.push((key_var.to_string(), key));
            }
            self.bound.push((for_expr.value_var.to_string(), value));
            let item = self.for_item(for_expr);
            self.bound.truncate(depth);
            match item? {
                ForItem::Skip => {}
                ForItem::Unknown => return Ok(Value::Unknown),
                ForItem::Value(value) => values.push(value),
                ForItem::Entry(key, value) => keyed.push((key, value)),
            }
        }
        match for_expr.key_expr {
            None => Ok(Value::List(values)),
            Some(_) if for_expr.grouping => Ok(group_entries(keyed)),
            Some(_) => unique_entries(keyed),
        }
    }

    fn for_item(&mut self, for_expr: &ForExpr) -> Result<ForItem, EvalError> {
        if let Some(cond) = &for_expr.cond_expr {
            match self.condition(cond)? {
                None => return Ok(ForItem::Unknown),
                Some(false) => return Ok(ForItem::Skip),
                Some(true) => {}
            }
        }
        let value = self.eval(&for_expr.value_expr)?;
        let Some(key_expr) = &for_expr.key_expr else {
            return Ok(ForItem::Value(value));
        };
        match self.eval(key_expr)? {
            Value::Unknown => Ok(ForItem::Unknown),
            key => {
                let key = key.to_text().ok_or(EvalError::Type {
                    expected: "string key",
                    found: key.type_name(),
                })?;
                Ok(ForItem::Entry(key, value))
            }
        }
    }

    fn template_expr(&mut self, expr: &TemplateExpr) -> Result<Value, EvalError> {
        let template = Template::from_expr(expr).map_err(|error| EvalError::Parse {
            what: "template".to_string(),
            message: error.to_string(),
        })?;
        self.template(&template)
    }

    fn template(&mut self, template: &Template) -> Result<Value, EvalError> {
        // HCL: a template that is one interpolation and nothing else is that value,
        // unconverted (`count = "${var.n}"` is a number).
        if let [Element::Interpolation(only)] = template.elements() {
            return self.eval(&only.expr);
        }
        let mut out = String::new();
        let known = self.render(template, (Strip::None, Strip::None), &mut out)?;
        Ok(if known {
            Value::String(out)
        } else {
            Value::Unknown
        })
    }

    /// Appends the rendering of `template` to `out`; false when some part is unknown.
    /// `outer` holds the strip markers just before and just after the template.
    fn render(
        &mut self,
        template: &Template,
        outer: (Strip, Strip),
        out: &mut String,
    ) -> Result<bool, EvalError> {
        let elements = template.elements();
        let mut known = true;
        for (index, element) in elements.iter().enumerate() {
            match element {
                Element::Literal(text) => {
                    let before = index
                        .checked_sub(1)
                        .map_or(outer.0, |i| element_strip(&elements[i]));
                    let after = elements.get(index + 1).map_or(outer.1, element_strip);
                    out.push_str(strip_literal(text, before.strip_end(), after.strip_start()));
                }
                Element::Interpolation(interpolation) => match self.eval(&interpolation.expr)? {
                    Value::Unknown => known = false,
                    value => out.push_str(&interpolated_text(&value)?),
                },
                Element::Directive(directive) => known &= self.directive(directive, out)?,
            }
        }
        Ok(known)
    }

    fn directive(&mut self, directive: &Directive, out: &mut String) -> Result<bool, EvalError> {
        match directive {
            Directive::If(dir) => match self.condition(&dir.cond_expr)? {
                None => Ok(false),
                Some(true) => {
                    let end = if dir.false_template.is_some() {
                        dir.else_strip
                    } else {
                        dir.endif_strip
                    };
                    self.render(&dir.true_template, (dir.if_strip, end), out)
                }
                Some(false) => match &dir.false_template {
                    Some(template) => self.render(template, (dir.else_strip, dir.endif_strip), out),
                    None => Ok(true),
                },
            },
            Directive::For(dir) => {
                let Some(entries) = for_entries(self.eval(&dir.collection_expr)?)? else {
                    return Ok(false);
                };
                let mut known = true;
                for (key, value) in entries {
                    let depth = self.bound.len();
                    if let Some(key_var) = &dir.key_var {
                        self.bound.push((key_var.to_string(), key));
                    }
                    self.bound.push((dir.value_var.to_string(), value));
                    let rendered =
                        self.render(&dir.template, (dir.for_strip, dir.endfor_strip), out);
                    self.bound.truncate(depth);
                    known &= rendered?;
                }
                Ok(known)
            }
        }
    }
}

enum ForItem {
    Skip,
    Unknown,
    Value(Value),
    Entry(String, Value),
}

/// The object of a grouping `for` (`...`): each key maps to the list of its values.
fn group_entries(entries: Vec<(String, Value)>) -> Value {
    let mut groups: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for (key, value) in entries {
        groups.entry(key).or_default().push(value);
    }
    Value::Object(
        groups
            .into_iter()
            .map(|(key, group)| (key, Value::List(group)))
            .collect(),
    )
}

/// The object of a `for` with a key expression, where keys must be unique.
fn unique_entries(entries: Vec<(String, Value)>) -> Result<Value, EvalError> {
    let mut map = BTreeMap::new();
    for (key, value) in entries {
        if map.insert(key.clone(), value).is_some() {
            return Err(EvalError::Operation(format!(
                "duplicate key `{key}` in for expression; use `...` to group"
            )));
        }
    }
    Ok(Value::Object(map))
}

/// The key/value pairs a `for` iterates over (see [`Value::entries`]); `None` when the
/// collection is unknown.
fn for_entries(collection: Value) -> Result<Option<Vec<(Value, Value)>>, EvalError> {
    match collection {
        Value::Unknown => Ok(None),
        other => other.entries().map(Some).ok_or(EvalError::Type {
            expected: "list or map to iterate",
            found: other.type_name(),
        }),
    }
}

/// The strip markers of an element as seen by its neighbours: start strips the literal before
/// it, end strips the literal after it.
fn element_strip(element: &Element) -> Strip {
    match element {
        Element::Literal(_) => Strip::None,
        Element::Interpolation(interpolation) => interpolation.strip,
        Element::Directive(directive) => match directive.as_ref() {
            Directive::If(dir) => {
                Strip::from((dir.if_strip.strip_start(), dir.endif_strip.strip_end()))
            }
            Directive::For(dir) => {
                Strip::from((dir.for_strip.strip_start(), dir.endfor_strip.strip_end()))
            }
        },
    }
}

/// A literal with whitespace trimmed at its start and end as `~` markers ask.
fn strip_literal(text: &str, trim_start: bool, trim_end: bool) -> &str {
    let text = if trim_start { text.trim_start() } else { text };
    if trim_end { text.trim_end() } else { text }
}

fn interpolated_text(value: &Value) -> Result<String, EvalError> {
    value.to_text().ok_or(EvalError::Type {
        expected: "string, number or bool in a template",
        found: value.type_name(),
    })
}

/// Whether the operators after a resource's address read an argument of its instances
/// (`.name`, `[0].name`, `["a"].name`, `[*].name`) rather than whole instances.
fn names_argument(operators: &[TraversalOperator]) -> bool {
    matches!(
        operators,
        [TraversalOperator::GetAttr(_), ..]
            | [
                TraversalOperator::Index(_)
                    | TraversalOperator::LegacyIndex(_)
                    | TraversalOperator::AttrSplat
                    | TraversalOperator::FullSplat,
                TraversalOperator::GetAttr(_),
                ..,
            ]
    )
}

fn lookup_key(value: Value, key: &str, lenient: bool) -> Result<Value, EvalError> {
    match value {
        Value::Unknown => Ok(Value::Unknown),
        Value::Object(mut map) => match map.remove(key) {
            Some(found) => Ok(found),
            None if lenient => Ok(Value::Unknown),
            None => Err(EvalError::NoSuchKey(key.to_string())),
        },
        other => Err(EvalError::Type {
            expected: "object",
            found: other.type_name(),
        }),
    }
}

fn lookup_index(value: Value, index: Value, lenient: bool) -> Result<Value, EvalError> {
    match (value, index) {
        (Value::Unknown, _) | (_, Value::Unknown) => Ok(Value::Unknown),
        (Value::List(mut items), index) => {
            let len = items.len();
            let position =
                to_number(&index).filter(|n| n.fract() == 0.0 && *n >= 0.0 && (*n as usize) < len);
            match position {
                Some(n) => Ok(items.swap_remove(n as usize)),
                None if lenient => Ok(Value::Unknown),
                None => Err(EvalError::Index {
                    index: index.to_string(),
                    len,
                }),
            }
        }
        (Value::Set(_), _) => Err(EvalError::Operation(
            "a set's elements have no index or key to select with".to_string(),
        )),
        (map @ Value::Object(_), key) => {
            let key = key.to_text().ok_or(EvalError::Type {
                expected: "string key",
                found: key.type_name(),
            })?;
            lookup_key(map, &key, lenient)
        }
        (other, _) => Err(EvalError::Type {
            expected: "list or map",
            found: other.type_name(),
        }),
    }
}

fn number_operand(value: &Value) -> Result<f64, EvalError> {
    to_number(value).ok_or(EvalError::Type {
        expected: "number",
        found: value.type_name(),
    })
}

fn bool_operand(value: &Value) -> Result<bool, EvalError> {
    to_bool(value).ok_or(EvalError::Type {
        expected: "bool",
        found: value.type_name(),
    })
}

fn binary_operation(
    operator: BinaryOperator,
    left: &Value,
    right: &Value,
) -> Result<Value, EvalError> {
    use BinaryOperator as Op;
    let value = match operator {
        Op::Eq => Value::Bool(left == right),
        Op::NotEq => Value::Bool(left != right),
        Op::And => Value::Bool(bool_operand(left)? && bool_operand(right)?),
        Op::Or => Value::Bool(bool_operand(left)? || bool_operand(right)?),
        _ => return arithmetic(operator, number_operand(left)?, number_operand(right)?),
    };
    Ok(value)
}

fn arithmetic(operator: BinaryOperator, a: f64, b: f64) -> Result<Value, EvalError> {
    use BinaryOperator as Op;
    let value = match operator {
        Op::Less => Value::Bool(a < b),
        Op::LessEq => Value::Bool(a <= b),
        Op::Greater => Value::Bool(a > b),
        Op::GreaterEq => Value::Bool(a >= b),
        Op::Plus => Value::Number(a + b),
        Op::Minus => Value::Number(a - b),
        Op::Mul => Value::Number(a * b),
        Op::Div | Op::Mod if b == 0.0 => {
            return Err(EvalError::Operation("division by zero".to_string()));
        }
        Op::Div => Value::Number(a / b),
        Op::Mod => Value::Number(a % b),
        other => return Err(EvalError::Unsupported(format!("operator \"{other}\""))),
    };
    Ok(value)
}

/// Whether `expr`'s value is marked sensitive, when its form alone tells.
fn sensitivity(expr: &Expression) -> Option<bool> {
    match expr {
        Expression::FuncCall(call) => match call.name.name.as_str() {
            "sensitive" => Some(true),
            "nonsensitive" => Some(false),
            _ => None,
        },
        Expression::Parenthesis(inner) => sensitivity(inner),
        Expression::Null
        | Expression::Bool(_)
        | Expression::Number(_)
        | Expression::String(_)
        | Expression::Array(_)
        | Expression::Object(_) => Some(false),
        _ => None,
    }
}

/// `templatestring` takes its template only from a direct reference (`local.t`,
/// `data.x.y.body`), never a literal or other expression, as Terraform requires.
fn direct_reference(template: Option<&Expression>) -> Result<(), EvalError> {
    match template {
        Some(Expression::Variable(_)) | None => Ok(()),
        Some(Expression::Traversal(traversal))
            if matches!(traversal.expr, Expression::Variable(_)) =>
        {
            Ok(())
        }
        Some(_) => Err(EvalError::Function {
            function: "templatestring".to_string(),
            message: "invalid template expression: must be a direct reference to a single \
                      string from elsewhere, containing valid Terraform template syntax"
                .to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::super::evaluate_str;
    use super::*;

    /// Two planned users (`count = 2`) whose configuration sets `name`, the state holding
    /// neither.
    fn planned_users() -> EvalScope {
        let user = |name: &str| {
            Value::Object(BTreeMap::from([(
                "name".to_string(),
                Value::String(name.to_string()),
            )]))
        };
        EvalScope::new(".")
            .with_resource(
                "aws_iam_user.this",
                Value::List(vec![Value::Unknown, Value::Unknown]),
            )
            .with_planned(
                "aws_iam_user.this",
                Value::List(vec![user("alice"), user("bob")]),
            )
    }

    fn eval(source: &str) -> Value {
        evaluate_str(source, &planned_users()).expect("evaluates")
    }

    #[test]
    fn a_planned_resource_s_configured_arguments_are_known() {
        let names = Value::List(vec![
            Value::String("alice".to_string()),
            Value::String("bob".to_string()),
        ]);
        assert_eq!(eval("aws_iam_user.this[*].name"), names);
        assert_eq!(eval("aws_iam_user.this.*.name"), names);
        assert_eq!(
            eval("aws_iam_user.this[1].name"),
            Value::String("bob".into())
        );
    }

    #[test]
    fn what_the_configuration_leaves_out_and_whole_instances_stay_unknown() {
        assert_eq!(eval("aws_iam_user.this[0].arn"), Value::Unknown);
        assert_eq!(
            eval("aws_iam_user.this[*].arn"),
            Value::List(vec![Value::Unknown, Value::Unknown])
        );
        assert_eq!(eval("aws_iam_user.this[0]"), Value::Unknown);
        assert_eq!(eval("length(aws_iam_user.this)"), Value::Number(2.0));
    }

    /// Terraform's documentation: iterating a set gives each element as its key ("for a set,
    /// the key and value are the same"), in the set's order: numbers by value, strings
    /// lexically, each once. A list's keys are its positions.
    #[test]
    fn a_set_s_elements_are_their_own_keys_in_order() {
        assert_eq!(
            eval("[for k, v in toset([443, 22, 80]) : [k, v]]"),
            eval("[[22, 22], [80, 80], [443, 443]]")
        );
        assert_eq!(
            eval("{ for k, v in toset([\"b\", \"a\", \"b\"]) : k => v }"),
            eval("{ a = \"a\", b = \"b\" }")
        );
        assert_eq!(eval("[for k, v in [\"b\", \"a\"] : k]"), eval("[0, 1]"));
        assert_eq!(
            eval("\"%{ for k, v in toset([\"b\", \"a\"]) }${k}=${v};%{ endfor }\""),
            Value::String("a=a;b=b;".into())
        );
    }

    /// A set has a length and members, converts to a list in its order, and has no index:
    /// Terraform refuses `toset(["a"])[0]` ("Elements of a set are identified only by their
    /// value").
    #[test]
    fn a_set_has_a_length_and_members_but_no_index() {
        assert_eq!(
            eval("length(toset([\"a\", \"b\", \"a\"]))"),
            Value::Number(2.0)
        );
        assert_eq!(eval("contains(toset([22, 80]), 80)"), Value::Bool(true));
        assert_eq!(
            eval("tolist(toset([\"b\", \"a\"]))"),
            Value::List(vec!["a".into(), "b".into()])
        );
        assert_eq!(
            eval("tolist(toset([\"b\", \"a\"]))[0]"),
            Value::String("a".into())
        );
        assert_eq!(eval("can(toset([\"a\"])[0])"), Value::Bool(false));
        assert_eq!(eval("can(tolist(toset([1])))"), Value::Bool(true));
    }
}
