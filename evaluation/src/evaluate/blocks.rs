//! A block's body as an object: its arguments evaluated, its nested blocks as lists of
//! objects (`dynamic` blocks expanded in place), meta-arguments left out.

use super::expr::{Evaluator, SET_DEPTH, entries};
use super::files::attribute;
use super::functions::{contains_unknown, is_unknown, unknown};
use super::module::object;
use hcl::{Block, Body, Expression, Map, Structure, Value};

/// The meta-arguments of a resource block, which are not the resource's attributes.
const META_ARGUMENTS: [&str; 4] = ["count", "for_each", "provider", "depends_on"];

/// The meta-blocks of a resource block.
const META_BLOCKS: [&str; 3] = ["lifecycle", "provisioner", "connection"];

/// The object a body evaluates to; `top` for a resource block's own body, whose
/// meta-arguments are left out. An argument that fails to evaluate is unknown.
pub(super) fn attributes(ev: &Evaluator, body: &Body, top: bool) -> Value {
    let mut out = Map::new();
    for structure in body.iter() {
        match structure {
            Structure::Attribute(a) if top && META_ARGUMENTS.contains(&a.key()) => {}
            Structure::Attribute(a) => {
                let value = ev.eval(a.expr()).unwrap_or_else(|_| unknown());
                out.insert(a.key().to_owned(), value);
            }
            Structure::Block(b) if top && META_BLOCKS.contains(&b.identifier()) => {}
            Structure::Block(b) if b.identifier() == "dynamic" => {
                let Some(label) = b.labels().first() else {
                    continue;
                };
                let items = dynamic(ev, b, label.as_str());
                append(&mut out, label.as_str(), items);
            }
            Structure::Block(b) => {
                let item = attributes(ev, b.body(), false);
                append(&mut out, b.identifier(), Value::Array(vec![item]));
            }
        }
    }
    Value::Object(out)
}

/// Adds blocks to the list of their type; unknown blocks make the list unknown. No blocks
/// (a `dynamic` block over an empty collection) leave the type unset.
fn append(out: &mut Map<String, Value>, name: &str, items: Value) {
    if items.as_array().is_some_and(Vec::is_empty) {
        return;
    }
    let list = out
        .entry(name.to_owned())
        .or_insert_with(|| Value::Array(Vec::new()));
    match (list, items) {
        (Value::Array(list), Value::Array(items)) => list.extend(items),
        (list, _) => *list = unknown(),
    }
}

/// The blocks a `dynamic` block makes: its `content` once per element of `for_each`, with
/// the iterator (`iterator`, or the block type's name) bound to the element's key and value.
fn dynamic(ev: &Evaluator, block: &Block, name: &str) -> Value {
    let body = block.body();
    let Some(expr) = attribute(body, "for_each") else {
        return unknown();
    };
    let Ok(collection) = ev.eval(&expr) else {
        return unknown();
    };
    if is_unknown(&collection) || contains_unknown(&collection) && !collection.is_array() {
        return unknown();
    }
    let iterator = match attribute(body, "iterator") {
        Some(Expression::Variable(v)) => v.to_string(),
        _ => name.to_owned(),
    };
    let Some(content) = body.blocks().find(|b| b.identifier() == "content") else {
        return unknown();
    };
    let Ok(pairs) = entries(&collection, ev.is_set(&expr, SET_DEPTH)) else {
        return unknown();
    };
    pairs
        .into_iter()
        .map(|(key, value)| {
            let inner = ev.with(&iterator, object([("key", key), ("value", value)]));
            attributes(&inner, content.body(), false)
        })
        .collect()
}
