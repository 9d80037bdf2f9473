//! Tags written as an expression rather than a literal map, and tags of one instance of a
//! block with `count` or `for_each`: the shapes `set_tags` writes beyond a plain literal.
//!
//! - A shared map (`tags = local.common_tags`) is never edited where it is declared, which
//!   would change every resource using it: the use site becomes
//!   `merge(local.common_tags, { Owner = "x" })`, and a removed key is filtered out with
//!   `{ for k, v in local.common_tags : k => v if k != "Owner" }`.
//! - One instance of a block with `count`/`for_each` gets its own tags through a trailing
//!   `lookup({ worker = { Backup = "daily" } }, each.key, {})` argument of `merge(...)`
//!   (`count.index` and `"0"` keys for `count`): the other instances look up nothing and keep
//!   their tags. A later edit of another instance adds its entry to the same map.

use super::EditError;
use super::instance::{self, Instance, instance_map, is_call};
use super::locate::{Located, Place, span_of};
use super::ops::{self, Doc};
use super::render;
use super::text::indent_at;
use super::value::Value;
use hcl::edit::expr::Expression;

/// `lookup({ key = { tags } }, each.key, {})`, its first line starting at `indent`.
fn lookup_text(instance: &Instance, tags: &[(String, Value)], indent: &str) -> String {
    instance::lookup_text(instance, &Value::Object(tags.to_vec()), "{}", indent)
}

/// `{ for k, v in EXPR : k => v if k != "A" }` (or `!contains(["A", "B"], k)`).
pub(super) fn without_text(expr: &str, remove: &[String]) -> String {
    let condition = match remove {
        [one] => format!("k != {}", render::quoted(one)),
        many => {
            let keys: Vec<String> = many.iter().map(|k| render::quoted(k)).collect();
            format!("!contains([{}], k)", keys.join(", "))
        }
    };
    format!("{{ for k, v in {expr} : k => v if {condition} }}")
}

/// Sets `tags` and drops `remove` on a single-instance block whose tags are an expression the
/// literal edits cannot reach (`local.common_tags`, `var.tags`, a `merge(...)` supplying a
/// removed key from another argument): the expression is kept and wrapped.
pub fn wrap(
    doc: &mut Doc,
    expr: &Expression,
    place: &Place,
    tags: &[(String, Value)],
    remove: &[String],
) -> Result<bool, EditError> {
    if tags.is_empty() && remove.is_empty() {
        return Ok(false);
    }
    let span = span_of(expr, place)?;
    let indent = indent_at(&doc.text, span.start).to_owned();
    let mut text = doc.text[span.clone()].to_owned();
    if !remove.is_empty() {
        text = without_text(&text, remove);
    }
    if !tags.is_empty() {
        let added = render::value(&Value::Object(tags.to_vec()), &indent);
        text = format!("merge({text}, {added})");
    }
    doc.splice(span, &text);
    Ok(true)
}

/// Sets `tags` on one instance of a block with `count`/`for_each`, leaving the others' tags as
/// they are: in this instance's entry of a trailing `lookup(...)` of `merge(...)` when there is
/// one, else in a new `lookup(...)` appended to the merge, or wrapping the expression in one.
/// Removing a key from one instance alone is refused: no argument of `merge` can take a key
/// away, and a filter that depends on the instance is more than a reviewer should have to read.
pub fn set_for_instance(
    doc: &mut Doc,
    expr: &Expression,
    place: &Place,
    instance: &Instance,
    tags: &[(String, Value)],
    remove: &[String],
) -> Result<bool, EditError> {
    if let Some(key) = remove.first() {
        return Err(impossible(
            place,
            format!(
                "removing tag `{key}` from the instance {} alone needs a filter that depends on the instance; left to a person",
                render::quoted(&instance.map_key())
            ),
        ));
    }
    if tags.is_empty() {
        return Ok(false);
    }
    let Expression::FuncCall(call) = expr else {
        return wrap_lookup(doc, expr, place, instance, tags);
    };
    if !is_call(call, "merge") {
        return wrap_lookup(doc, expr, place, instance, tags);
    }
    let Some(last) = call.args.iter().last() else {
        return wrap_lookup(doc, expr, place, instance, tags);
    };
    if let Some(map) = instance_map(&doc.text, last, instance, place)? {
        let key = instance.map_key();
        return match instance::entry(map, instance) {
            Some(Expression::Object(object)) => ops::merge_object(doc, object, place, tags, &[]),
            Some(_) => Err(impossible(
                place,
                format!(
                    "the entry {} of the tags lookup map is not a literal map",
                    render::quoted(&key)
                ),
            )),
            None => {
                let entry = [(key, Value::Object(tags.to_vec()))];
                ops::merge_object(doc, map, place, &entry, &[])
            }
        };
    }
    let end = span_of(last, place)?.end;
    let indent = indent_at(&doc.text, end).to_owned();
    let text = lookup_text(instance, tags, &indent);
    doc.splice(end..end, &format!(", {text}"));
    Ok(true)
}

/// Adds `tags = lookup({ key = { ... } }, each.key, {})` to a block without tags: the other
/// instances look up an empty map, which the provider treats as no tags.
pub fn add_for_instance(
    doc: &mut Doc,
    loc: &Located,
    attribute: &str,
    instance: &Instance,
    tags: &[(String, Value)],
) -> Result<bool, EditError> {
    if tags.is_empty() {
        return Ok(false);
    }
    let text = lookup_text(instance, tags, &loc.inner_indent());
    ops::insert_attribute(doc, loc, &format!("{attribute} = {text}"));
    Ok(true)
}

/// `merge(EXPR, lookup(...))`.
fn wrap_lookup(
    doc: &mut Doc,
    expr: &Expression,
    place: &Place,
    instance: &Instance,
    tags: &[(String, Value)],
) -> Result<bool, EditError> {
    let span = span_of(expr, place)?;
    let indent = indent_at(&doc.text, span.start).to_owned();
    let text = format!(
        "merge({}, {})",
        &doc.text[span.clone()],
        lookup_text(instance, tags, &indent)
    );
    doc.splice(span, &text);
    Ok(true)
}

fn impossible(place: &Place, message: String) -> EditError {
    place.impossible(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removals_are_filters_over_the_expression() {
        assert_eq!(
            without_text("local.tags", &["Owner".to_owned()]),
            "{ for k, v in local.tags : k => v if k != \"Owner\" }"
        );
        assert_eq!(
            without_text("local.tags", &["A".to_owned(), "B".to_owned()]),
            "{ for k, v in local.tags : k => v if !contains([\"A\", \"B\"], k) }"
        );
    }
}
