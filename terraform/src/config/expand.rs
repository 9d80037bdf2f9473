//! Expansion: `count` and `for_each` into instance keys, and block bodies (nested and
//! `dynamic` blocks included) into values shaped the way state holds them.

use std::collections::BTreeMap;

use hcl::edit::Span;
use hcl::edit::expr::Expression;
use hcl::edit::structure::{Block, Body};

use super::{Diagnostic, line_of};
use knowledge::schema::AttrType;

use crate::functions::{EvalScope, Value, convert, evaluate};
use crate::state::IndexKey;

/// Arguments of a resource or module block that are not part of its value.
const META_ARGUMENTS: [&str; 5] = ["count", "for_each", "provider", "providers", "depends_on"];

/// Blocks of a resource that are not part of its value.
const META_BLOCKS: [&str; 3] = ["lifecycle", "provisioner", "connection"];

/// Where an expression is, for diagnostics.
#[derive(Debug, Clone, Copy)]
pub(super) struct Place<'a> {
    /// The file.
    pub file: &'a str,
    /// The file's text.
    pub text: &'a str,
}

/// Evaluates an expression; a failure is recorded as a diagnostic about `subject` and gives
/// an unknown value.
pub(super) fn eval(
    expr: &Expression,
    scope: &EvalScope,
    place: Place,
    subject: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Value {
    match evaluate(&hcl::Expression::from(expr.clone()), scope) {
        Ok(value) => value,
        Err(error) => {
            diagnostics.push(Diagnostic {
                file: place.file.to_string(),
                line: line_of(place.text, expr.span().unwrap_or_default().start),
                subject: subject.to_string(),
                message: error.to_string(),
            });
            Value::Unknown
        }
    }
}

/// One instance of a block with `count` or `for_each`: its key and `each.value`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Key {
    /// The instance key, `None` without `count` and `for_each`.
    pub index: Option<IndexKey>,
    /// `each.value` under `for_each`.
    pub each_value: Option<Value>,
}

impl Key {
    /// `scope` with `count` or `each` bound for this instance.
    pub fn bind(&self, scope: &EvalScope) -> EvalScope {
        let scope = scope.clone();
        match (&self.index, &self.each_value) {
            (Some(IndexKey::Int(i)), _) => scope.with_binding(
                "count",
                Value::Object(BTreeMap::from([(
                    "index".to_string(),
                    Value::Number(*i as f64),
                )])),
            ),
            (Some(IndexKey::Str(key)), Some(value)) => scope.with_binding(
                "each",
                Value::Object(BTreeMap::from([
                    ("key".to_string(), Value::String(key.clone())),
                    ("value".to_string(), value.clone()),
                ])),
            ),
            _ => scope,
        }
    }
}

/// Why the instance keys of a block cannot be known.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum KeysError {
    /// `count` or `for_each` holds a value not known yet (the message says which).
    Unknown(String),
    /// `count` or `for_each` fails to evaluate or holds a value it cannot hold.
    Invalid(String),
}

impl std::fmt::Display for KeysError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeysError::Unknown(message) | KeysError::Invalid(message) => f.write_str(message),
        }
    }
}

/// The instance keys of a resource or module block, from its `count` or `for_each`; an
/// error says why they cannot be known.
pub(super) fn keys(body: &Body, scope: &EvalScope) -> Result<Vec<Key>, KeysError> {
    let value = |name: &str| {
        body.get_attribute(name)
            .map(|attr| evaluate(&hcl::Expression::from(attr.value.clone()), scope))
            .transpose()
            .map_err(|error| KeysError::Invalid(format!("{name}: {error}")))
    };
    if let Some(count) = value("count")? {
        return count_keys(count);
    }
    match value("for_each")? {
        Some(for_each) => for_each_keys(for_each),
        None => Ok(vec![Key {
            index: None,
            each_value: None,
        }]),
    }
}

/// The instances of `count`: its value converted to a number, as Terraform converts it (so
/// `count = "2"` is two instances), which must be a whole number and not negative.
fn count_keys(count: Value) -> Result<Vec<Key>, KeysError> {
    let invalid = |message: String| Err(KeysError::Invalid(message));
    let n = match convert(count, &AttrType::Number) {
        Ok(Value::Number(n)) => n,
        Ok(Value::Unknown) => {
            return Err(KeysError::Unknown(
                "count is not known until apply".to_string(),
            ));
        }
        Ok(_) => return invalid("count must not be null".to_string()),
        Err(message) => return invalid(format!("count: {message}")),
    };
    if n < 0.0 || n.fract() != 0.0 {
        return invalid(format!(
            "count must be a whole number of zero or more, not {n}"
        ));
    }
    Ok((0..n as i64)
        .map(|i| Key {
            index: Some(IndexKey::Int(i)),
            each_value: None,
        })
        .collect())
}

/// The instances of `for_each`: a map's keys, or a set's strings (numbers and bools in a
/// set are refused, as Terraform refuses them; null elements too).
fn for_each_keys(for_each: Value) -> Result<Vec<Key>, KeysError> {
    use KeysError::{Invalid, Unknown};
    let key = |k: String, v: Value| Key {
        index: Some(IndexKey::Str(k)),
        each_value: Some(v),
    };
    match for_each {
        Value::Object(map) => Ok(map.into_iter().map(|(k, v)| key(k, v)).collect()),
        Value::List(items) | Value::Set(items) => items
            .into_iter()
            .map(|item| match item {
                Value::String(s) => Ok(key(s.clone(), Value::String(s))),
                Value::Unknown => Err(Unknown(
                    "for_each has keys not known until apply".to_string(),
                )),
                Value::Null => Err(Invalid("for_each must not contain null".to_string())),
                other => Err(Invalid(format!(
                    "for_each set elements must be strings, not {other}"
                ))),
            })
            .collect(),
        Value::Unknown => Err(Unknown("for_each is not known until apply".to_string())),
        Value::Null => Err(Invalid("for_each must not be null".to_string())),
        other => Err(Invalid(format!(
            "for_each must be a map or a set of strings, not a {}",
            other.type_name()
        ))),
    }
}

/// The name a `dynamic` block's content uses for the current element: its `iterator`
/// argument, or else its label.
pub(super) fn iterator_name(block: &Block) -> String {
    let explicit = block
        .body
        .get_attribute("iterator")
        .and_then(|attr| match &attr.value {
            Expression::Variable(name) => Some(name.as_str().to_string()),
            _ => None,
        });
    explicit.unwrap_or_else(|| block.labels.first().map_or("", |l| l.as_str()).to_string())
}

/// One nested block of a body after `dynamic` blocks are expanded.
#[derive(Debug, Clone)]
pub(super) struct Nested<'b> {
    /// The block type, `ingress`.
    pub kind: String,
    /// The block written in the file: a plain nested block, or a `dynamic` block.
    pub block: &'b Block,
    /// The block the values come from: the block itself, or the dynamic block's `content`.
    pub content: &'b Block,
    /// The body of `content`.
    pub body: &'b Body,
    /// For a `dynamic` block: the iterator's name, key and value.
    pub iteration: Option<Iteration>,
}

/// The current element of a `dynamic` block.
#[derive(Debug, Clone)]
pub(super) struct Iteration {
    /// The iterator's name.
    pub name: String,
    /// The element's key: a map key, a list position, or a set's element itself.
    pub key: Value,
    /// The element.
    pub value: Value,
    /// Whether the collection is a set, whose elements are their own keys.
    pub in_set: bool,
}

impl Nested<'_> {
    /// `scope` with the iterator bound, for a `dynamic` block's element.
    pub fn scope(&self, scope: &EvalScope) -> EvalScope {
        match &self.iteration {
            Some(it) => scope.clone().with_binding(
                it.name.clone(),
                Value::Object(BTreeMap::from([
                    ("key".to_string(), it.key.clone()),
                    ("value".to_string(), it.value.clone()),
                ])),
            ),
            None => scope.clone(),
        }
    }
}

/// The diagnostic for a `dynamic` block whose `for_each` is not known: what is not known,
/// then what becomes of the blocks.
pub(super) const DYNAMIC_UNKNOWN: (&str, &str) = (
    "for_each is not known until apply",
    "; the blocks are left out",
);

/// The nested blocks of `body` in file order, `dynamic` blocks expanded; `top` leaves out a
/// resource's meta blocks. A `dynamic` block whose `for_each` cannot be evaluated is left
/// out with a diagnostic naming `owner`, what the body belongs to (`module.a.aws_s3_bucket.b`).
pub(super) fn nested<'b>(
    body: &'b Body,
    scope: &EvalScope,
    (top, owner): (bool, &str),
    place: Place,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Nested<'b>> {
    let mut out = Vec::new();
    for block in body.blocks() {
        let kind = block.ident.as_str();
        if top && META_BLOCKS.contains(&kind) {
            continue;
        }
        if kind != "dynamic" {
            out.push(Nested {
                kind: kind.to_string(),
                block,
                content: block,
                body: &block.body,
                iteration: None,
            });
            continue;
        }
        let label = block.labels.first().map_or("", |l| l.as_str()).to_string();
        let (Some(for_each), Some(content)) = (
            block.body.get_attribute("for_each"),
            block.body.blocks().find(|b| b.ident.as_str() == "content"),
        ) else {
            continue;
        };
        let subject = format!("{owner} dynamic \"{label}\"")
            .trim_start()
            .to_owned();
        let collection = eval(&for_each.value, scope, place, &subject, diagnostics);
        let in_set = matches!(collection, Value::Set(_));
        let elements = collection.entries().unwrap_or_else(|| {
            diagnostics.push(Diagnostic {
                file: place.file.to_string(),
                line: line_of(place.text, block.span().unwrap_or_default().start),
                subject,
                message: match collection {
                    Value::Unknown => format!("{}{}", DYNAMIC_UNKNOWN.0, DYNAMIC_UNKNOWN.1),
                    other => format!("for_each is {other}, not a collection; block left out"),
                },
            });
            Vec::new()
        });
        let name = iterator_name(block);
        out.extend(elements.into_iter().map(|(key, value)| Nested {
            kind: label.clone(),
            block,
            content,
            body: &content.body,
            iteration: Some(Iteration {
                name: name.clone(),
                key,
                value,
                in_set,
            }),
        }));
    }
    out
}

/// The value of a block body: its arguments, and its nested blocks as lists of objects by
/// type. `top` leaves out meta-arguments and meta blocks; `subject` names it in diagnostics.
pub(super) fn body_value(
    body: &Body,
    scope: &EvalScope,
    top: bool,
    place: Place,
    subject: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Value {
    let mut map = BTreeMap::new();
    for attr in body.attributes() {
        let name = attr.key.as_str();
        if top && META_ARGUMENTS.contains(&name) {
            continue;
        }
        let subject = format!("{subject}.{name}");
        let value = eval(&attr.value, scope, place, &subject, diagnostics);
        map.insert(name.to_string(), value);
    }
    let mut positions: BTreeMap<String, usize> = BTreeMap::new();
    for block in nested(body, scope, (top, subject), place, diagnostics) {
        let position = positions.entry(block.kind.clone()).or_insert(0);
        let subject = format!("{subject}.{}[{position}]", block.kind);
        *position += 1;
        let value = body_value(
            block.body,
            &block.scope(scope),
            false,
            place,
            &subject,
            diagnostics,
        );
        match map
            .entry(block.kind.clone())
            .or_insert_with(|| Value::List(Vec::new()))
        {
            Value::List(items) => items.push(value),
            _ => diagnostics.push(Diagnostic {
                file: place.file.to_string(),
                line: line_of(place.text, block.block.span().unwrap_or_default().start),
                subject: subject.clone(),
                message: format!("both an argument and a block are called {}", block.kind),
            }),
        }
    }
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_of(body: &str) -> Result<Vec<Option<IndexKey>>, String> {
        let body = hcl::edit::parser::parse_body(body).expect("parses");
        let scope = EvalScope::new(".").with_variable("n", Value::Unknown);
        let keys = keys(&body, &scope).map_err(|e| e.to_string())?;
        Ok(keys.into_iter().map(|k| k.index).collect())
    }

    #[test]
    fn count_and_for_each_give_instance_keys() {
        assert_eq!(keys_of("a = 1\n"), Ok(vec![None]));
        assert_eq!(
            keys_of("count = 2\n"),
            Ok(vec![Some(IndexKey::Int(0)), Some(IndexKey::Int(1))])
        );
        assert_eq!(keys_of("count = 0\n"), Ok(vec![]));
        // Terraform converts a string holding a number to the number `count` needs.
        assert_eq!(
            keys_of("count = \"2\"\n"),
            Ok(vec![Some(IndexKey::Int(0)), Some(IndexKey::Int(1))])
        );
        assert_eq!(
            keys_of("for_each = toset([\"b\", \"a\", \"b\"])\n"),
            Ok(vec![
                Some(IndexKey::Str("a".into())),
                Some(IndexKey::Str("b".into()))
            ])
        );
        assert_eq!(
            keys_of("for_each = { x = 1 }\n"),
            Ok(vec![Some(IndexKey::Str("x".into()))])
        );
    }

    #[test]
    fn keys_that_cannot_be_known_are_errors() {
        assert!(keys_of("count = var.n\n").is_err_and(|e| e.contains("not known")));
        assert!(keys_of("count = 1.5\n").is_err());
        assert!(keys_of("count = -1\n").is_err());
        assert!(keys_of("count = null\n").is_err_and(|e| e.contains("null")));
        assert!(keys_of("count = true\n").is_err());
        assert!(keys_of("count = \"two\"\n").is_err());
        assert!(keys_of("for_each = null\n").is_err_and(|e| e.contains("null")));
        assert!(keys_of("for_each = [1, 2]\n").is_err_and(|e| e.contains("strings")));
        assert!(keys_of("for_each = \"x\"\n").is_err());
    }

    /// The value of a resource body written as `text`, and the diagnostics.
    fn body_of(text: &str) -> (Value, Vec<Diagnostic>) {
        let body = hcl::edit::parser::parse_body(text).expect("parses");
        let place = Place { file: "t.tf", text };
        let mut diagnostics = Vec::new();
        let value = body_value(
            &body,
            &EvalScope::new("."),
            true,
            place,
            "x",
            &mut diagnostics,
        );
        (value, diagnostics)
    }

    #[test]
    fn dynamic_blocks_expand_in_place_with_their_iterator() {
        let text = "a {\n  n = 0\n}\ndynamic \"a\" {\n  for_each = [1, 2]\n  iterator = it\n  content {\n    n = it.value * 10\n    k = it.key\n  }\n}\nb {}\n";
        let (value, diagnostics) = body_of(text);
        let expected = serde_json::json!({
            "a": [{"n": 0}, {"n": 10, "k": 0}, {"n": 20, "k": 1}],
            "b": [{}]
        });
        assert_eq!(value, Value::from_json(&expected));
        assert!(diagnostics.is_empty());
    }

    /// Terraform's documentation of dynamic blocks: over a set, the iterator's key is the
    /// same as its value; the blocks come in the set's order (numbers by value).
    #[test]
    fn a_dynamic_block_over_a_set_has_each_element_as_its_key() {
        let text = "dynamic \"ingress\" {\n  for_each = toset([443, 22, 80])\n  content {\n    k = ingress.key\n    v = ingress.value\n  }\n}\n";
        let (value, diagnostics) = body_of(text);
        let expected = serde_json::json!({
            "ingress": [{"k": 22, "v": 22}, {"k": 80, "v": 80}, {"k": 443, "v": 443}]
        });
        assert_eq!(value, Value::from_json(&expected));
        assert!(diagnostics.is_empty());
    }
}
