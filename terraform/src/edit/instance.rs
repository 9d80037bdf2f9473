//! One instance of a block with `count` or `for_each`: its own value through a per-instance
//! `lookup(...)` keyed by `each.key` (or `count.index`), so the other instances keep theirs.
//!
//! An argument `X` becomes `lookup({ worker = NEW }, each.key, X)`; an argument the block does
//! not set becomes `lookup({ worker = NEW }, each.key, null)` (null leaves it unset, as before,
//! for the others). A later edit of another instance adds its entry to the same map. A nested
//! block for one instance is a `dynamic` block whose `for_each` selects its key.

use super::EditError;
use super::locate::{Located, Place, key_name, same_value, span_of};
use super::ops::{self, Doc};
use super::render::{self, BlockText};
use super::text::indent_at;
use super::value::Value;
use hcl::edit::expr::{Expression, FuncCall, Object};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The instance of a block with `count` (an index) or `for_each` (a key) whose value alone
/// changes.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Instance {
    /// `count.index`.
    Index(u64),
    /// `each.key`.
    Key(String),
}

impl Instance {
    /// The expression naming the current instance inside the block.
    pub fn iterator(&self) -> &'static str {
        match self {
            Instance::Index(_) => "count.index",
            Instance::Key(_) => "each.key",
        }
    }

    /// The instance as messages name it: `each.key "audit"`, `count.index "2"`.
    pub fn named(&self) -> String {
        format!("{} {}", self.iterator(), render::quoted(&self.map_key()))
    }

    /// The key of this instance's entry in the lookup map (indexes as strings, as `lookup`
    /// converts `count.index`).
    pub fn map_key(&self) -> String {
        match self {
            Instance::Index(n) => n.to_string(),
            Instance::Key(k) => k.clone(),
        }
    }
}

/// Whether the call is Terraform's built-in `name(...)`.
pub fn is_call(call: &FuncCall, name: &str) -> bool {
    !call.name.is_namespaced() && call.name.name.as_str() == name
}

/// `lookup({ key = VALUE }, each.key, DEFAULT)`, its first line starting at `indent`.
pub fn lookup_text(instance: &Instance, value: &Value, default: &str, indent: &str) -> String {
    let map = Value::Object(vec![(instance.map_key(), value.clone())]);
    format!(
        "lookup({}, {}, {default})",
        render::value(&map, indent),
        instance.iterator()
    )
}

/// The literal map of `lookup(MAP, <iterator>, ...)` when `expr` is such a per-instance lookup
/// for this kind of instance.
pub fn instance_map<'e>(
    text: &str,
    expr: &'e Expression,
    instance: &Instance,
    place: &Place,
) -> Result<Option<&'e Object>, EditError> {
    let Expression::FuncCall(call) = expr else {
        return Ok(None);
    };
    let args: Vec<&Expression> = call.args.iter().collect();
    let [Expression::Object(map), key, _default] = args.as_slice() else {
        return Ok(None);
    };
    let key_text = &text[span_of(*key, place)?];
    Ok((is_call(call, "lookup") && key_text.trim() == instance.iterator()).then_some(map))
}

/// The value of this instance's entry in a per-instance lookup map.
pub fn entry<'o>(map: &'o Object, instance: &Instance) -> Option<&'o Expression> {
    let key = instance.map_key();
    map.iter()
        .find(|(k, _)| key_name(k).as_deref() == Some(key.as_str()))
        .map(|(_, v)| v.expr())
}

/// Sets argument `name` of the located block for `instance` alone: in its entry of an existing
/// per-instance lookup, else by wrapping the current expression in a new one (or, when the
/// argument is not set, one whose default is `unset`: `null`, or `{}` for a map merged
/// elsewhere). False when the entry already holds `value`.
pub fn set_attribute(
    doc: &mut Doc,
    loc: &Located,
    place: &Place,
    name: &str,
    instance: &Instance,
    value: &Value,
    unset: &str,
) -> Result<bool, EditError> {
    let Some(attr) = loc.block.body.get_attribute(name) else {
        let text = lookup_text(instance, value, unset, &loc.inner_indent());
        ops::insert_attribute(doc, loc, &format!("{} = {text}", render::key(name)));
        return Ok(true);
    };
    if let Some(map) = instance_map(&doc.text, &attr.value, instance, place)? {
        let entry = [(instance.map_key(), value.clone())];
        return ops::merge_object(doc, map, place, &entry, &[]);
    }
    let span = span_of(&attr.value, place)?;
    let indent = indent_at(&doc.text, span.start).to_owned();
    let text = lookup_text(instance, value, &doc.text[span.clone()], &indent);
    doc.splice(span, &text);
    Ok(true)
}

/// `contains([KEY], <iterator>) ? [1] : []`: the `for_each` of a `dynamic` block that gives
/// this instance alone one block.
pub fn selector_text(instance: &Instance) -> String {
    let key = match instance {
        Instance::Index(n) => n.to_string(),
        Instance::Key(k) => render::quoted(k),
    };
    format!("contains([{key}], {}) ? [1] : []", instance.iterator())
}

/// Adds the nested block `block` (its type, attributes and nested blocks) to the located block
/// for `instance` alone: a `dynamic` block whose `for_each` is [`selector_text`] and whose
/// `content` is the block. Refused when the block has such a `dynamic` block for this instance
/// already.
pub fn add_block(
    doc: &mut Doc,
    loc: &Located,
    place: &Place,
    block: &BlockText,
    instance: &Instance,
) -> Result<(), EditError> {
    let selector = selector_text(instance);
    let present = loc
        .block
        .body
        .blocks()
        .filter(|b| b.has_ident("dynamic") && b.has_exact_labels(&[block.kind]))
        .filter_map(|b| b.body.get_attribute("for_each"))
        .any(|a| same_value(&doc.text, &a.value, &Value::String(selector.clone())));
    if present {
        return Err(place.impossible(format!(
            "a `dynamic \"{}\"` block for {} is there already",
            block.kind,
            instance.named()
        )));
    }
    let indent = loc.inner_indent();
    let inner = format!("{indent}  ");
    let content = BlockText {
        kind: "content",
        labels: &[],
        attributes: block.attributes,
        blocks: block.blocks.clone(),
    };
    let text = format!(
        "dynamic {} {{\n{inner}for_each = {selector}\n{inner}{}\n{indent}}}",
        render::quoted(block.kind),
        render::block(&content, &inner),
    );
    ops::insert_block(doc, loc, "dynamic", &text);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_are_looked_up_by_their_key_or_index() {
        let tags = Value::Object(vec![(
            "Backup".to_owned(),
            Value::String("daily".to_owned()),
        )]);
        assert_eq!(
            lookup_text(&Instance::Key("worker".to_owned()), &tags, "{}", "  "),
            "lookup({\n    worker = {\n      Backup = \"daily\"\n    }\n  }, each.key, {})"
        );
        assert_eq!(
            lookup_text(&Instance::Index(1), &Value::Bool(false), "true", ""),
            "lookup({\n  \"1\" = false\n}, count.index, true)"
        );
    }
}
