//! The tags tool: `set_tags`.

use super::*;

/// How `set_tags` treats the tags already written.
#[derive(Debug, Deserialize, Serialize, JsonSchema, Default, PartialEq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum TagMode {
    /// Keep the other tags.
    #[default]
    Merge,
    /// Write exactly the given tags.
    Replace,
}

/// The input of `set_tags`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetTags {
    /// The block holding the tags.
    pub target: Target,
    #[serde(default = "tags_name")]
    /// The tags attribute (`tags` unless given).
    pub attribute: String,
    #[serde(default, skip_serializing_if = "Ordered::is_empty")]
    /// Tags to set.
    pub tags: Ordered,
    #[serde(default)]
    /// `merge` into the existing map (default) or `replace` it.
    pub mode: TagMode,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    /// Tag keys to drop.
    pub remove: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `each.key` (a string) or `count.index` (a number) of the one instance to change.
    pub instance: Option<Instance>,
}

pub(super) fn tags_name() -> String {
    "tags".to_owned()
}

impl Tool for SetTags {
    const NAME: &'static str = "set_tags";
    const DESCRIPTION: &'static str = "Merge (default) or replace a literal tags map: existing keys keep their order and comments, new keys are appended, `remove` keys are dropped. Tags written merge(local.x, { ... }) are merged into the last argument when it is a literal map (else a new one is appended); another expression such as local.common_tags is kept and wrapped: merge(local.common_tags, { ... }), removed keys filtered out with a for expression. With `instance` (the each.key string or count.index number of one instance of a block with for_each/count) only that instance's tags change, through a trailing lookup({ key = { ... } }, each.key, {}) argument of merge(...).";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        let SetTags {
            target,
            attribute,
            tags,
            mode,
            mut remove,
            instance,
        } = self;
        let mut doc = ws.open_block(&target)?;
        let (loc, place) = found(&doc, &target)?;
        let what = format!(
            "{} `{attribute}` of {}{}",
            if mode == TagMode::Merge {
                "merged"
            } else {
                "replaced"
            },
            place.address,
            place.path
        );
        if let Some(instance) = &instance {
            if mode == TagMode::Replace {
                return Err(bad_input(
                    Self::NAME,
                    "`instance` edits merge into one instance's tags; `replace` is not available",
                ));
            }
            let Some(attr) = loc.block.body.get_attribute(&attribute) else {
                let did = tags::add_for_instance(&mut doc, &loc, &attribute, instance, &tags.0)?;
                ws.save(doc)?;
                return Ok(changed(did, what));
            };
            let did =
                tags::set_for_instance(&mut doc, &attr.value, &place, instance, &tags.0, &remove)?;
            ws.save(doc)?;
            return Ok(changed(did, what));
        }
        let Some(attr) = loc.block.body.get_attribute(&attribute) else {
            let value = Value::Object(tags.0);
            let did = ops::set_attribute(&mut doc, &loc, &place, &attribute, &value)?;
            ws.save(doc)?;
            return Ok(changed(did, what));
        };
        let object = match &attr.value {
            Expression::Object(object) => object,
            Expression::FuncCall(call) if is_merge(call) && !removes_from_others(call, &remove) => {
                let did =
                    merge_call_tags(&mut doc, call, &place, &attribute, &tags, mode, &remove)?;
                ws.save(doc)?;
                return Ok(changed(did, what));
            }
            other if mode == TagMode::Merge => {
                let did = tags::wrap(&mut doc, other, &place, &tags.0, &remove)?;
                ws.save(doc)?;
                return Ok(changed(did, what));
            }
            _ => return Err(not_literal(&place, &attribute, "object")),
        };
        if mode == TagMode::Replace {
            let keep: Vec<&String> = tags.0.iter().map(|(k, _)| k).collect();
            remove.extend(
                object
                    .iter()
                    .filter_map(|(k, _)| super::super::locate::key_name(k))
                    .filter(|k| !keep.contains(&k)),
            );
        }
        let did = ops::merge_object(&mut doc, object, &place, &tags.0, &remove)?;
        ws.save(doc)?;
        Ok(changed(did, what))
    }
}

/// Whether the call is Terraform's built-in `merge(...)`.
pub(super) fn is_merge(call: &FuncCall) -> bool {
    instance::is_call(call, "merge")
}

/// Whether a key to remove is not in the literal map ending the `merge(...)`, so that only a
/// filter over the whole expression can remove it.
pub(super) fn removes_from_others(call: &FuncCall, remove: &[String]) -> bool {
    let have: Vec<String> = match call.args.iter().last() {
        Some(Expression::Object(object)) => object
            .iter()
            .filter_map(|(k, _)| super::super::locate::key_name(k))
            .collect(),
        _ => Vec::new(),
    };
    remove.iter().any(|k| !have.contains(k))
}

/// Tags written as `merge(local.common_tags, { ... })`: the keys are set in the last argument
/// when it is a literal object (later arguments win in `merge`, so that is the only place a key
/// is sure to take effect), or in a new literal object appended as the last argument. Keys are
/// removed only from that literal (the caller wraps the call in a filter for other keys).
pub(super) fn merge_call_tags(
    doc: &mut Doc,
    call: &FuncCall,
    place: &Place,
    attribute: &str,
    tags: &Ordered,
    mode: TagMode,
    remove: &[String],
) -> Result<bool, EditError> {
    if mode == TagMode::Replace {
        return Err(impossible(
            place,
            format!(
                "`{attribute}` is a merge(...) of several maps; replacing the whole set needs a person"
            ),
        ));
    }
    let last = call.args.iter().last();
    if let Some(Expression::Object(object)) = last {
        return ops::merge_object(doc, object, place, &tags.0, remove);
    }
    if tags.0.is_empty() {
        return Ok(false);
    }
    let Some(last) = last else {
        return Err(impossible(place, "merge() has no arguments".to_owned()));
    };
    let end = span_of(last, place)?.end;
    let indent = super::super::text::indent_at(&doc.text, end).to_owned();
    let text = render::value(&Value::Object(tags.0.clone()), &indent);
    doc.splice(end..end, &format!(", {text}"));
    Ok(true)
}

pub(super) fn not_literal(place: &Place, name: &str, expected: &'static str) -> EditError {
    EditError::NotLiteral {
        file: place.file.clone(),
        address: place.address.clone(),
        path: place.path.clone(),
        name: name.to_owned(),
        expected,
    }
}
