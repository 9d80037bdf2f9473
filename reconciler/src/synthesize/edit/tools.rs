//! The tool registry: names, descriptions, input schemas, typed inputs and dispatch.

use super::filter;
use super::instance::{self, Instance};
use super::locate::{
    Located, Place, Step, Target, header, literal, matches_all, span_of, step_text,
};
use super::module_input;
use super::ops::{self, Doc, Workspace};
use super::render::{self, BlockText};
use super::tags;
use super::value::{Ordered, Value};
use super::{EditError, Files};
use hcl::edit::Span;
use hcl::edit::expr::{Expression, FuncCall};
use hcl::edit::structure::Block;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use std::collections::BTreeMap;
use std::ops::Range;

/// A tool's name, what it does and the JSON schema of its input.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ToolSpec {
    /// The name `run_tool` takes.
    pub name: &'static str,
    /// What the tool does, for the model choosing it.
    pub description: &'static str,
    /// The JSON schema of the input object.
    pub input_schema: serde_json::Value,
}

/// What a tool changed: the new text of each changed file, and a one-line summary.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ToolResult {
    /// Path → new text, only for files whose text changed.
    pub files: BTreeMap<String, String>,
    /// What was done, or why nothing needed doing.
    pub summary: String,
}

type Run = fn(&str, &mut Workspace) -> Result<String, EditError>;

struct Tool {
    spec: fn() -> ToolSpec,
    run: Run,
}

const TOOLS: [Tool; 18] = [
    Tool {
        spec: set_attribute_spec,
        run: set_attribute,
    },
    Tool {
        spec: remove_attribute_spec,
        run: remove_attribute,
    },
    Tool {
        spec: add_block_spec,
        run: add_block,
    },
    Tool {
        spec: remove_block_spec,
        run: remove_block,
    },
    Tool {
        spec: replace_block_spec,
        run: replace_block,
    },
    Tool {
        spec: update_block_spec,
        run: update_block,
    },
    Tool {
        spec: set_tags_spec,
        run: set_tags,
    },
    Tool {
        spec: import_resource_spec,
        run: import_resource,
    },
    Tool {
        spec: remove_resource_spec,
        run: remove_resource,
    },
    Tool {
        spec: filter_for_each_spec,
        run: filter_for_each,
    },
    Tool {
        spec: thread_module_input_spec,
        run: thread_module_input,
    },
    Tool {
        spec: switch_off_in_module_instance_spec,
        run: switch_off_in_module_instance,
    },
    Tool {
        spec: ignore_changes_spec,
        run: ignore_changes,
    },
    Tool {
        spec: set_variable_default_spec,
        run: set_variable_default,
    },
    Tool {
        spec: set_tfvar_spec,
        run: set_tfvar,
    },
    Tool {
        spec: set_module_argument_spec,
        run: set_module_argument,
    },
    Tool {
        spec: set_collection_entry_spec,
        run: set_collection_entry,
    },
    Tool {
        spec: remove_collection_entry_spec,
        run: remove_collection_entry,
    },
];

/// Every edit tool's specification.
pub fn tools() -> Vec<ToolSpec> {
    TOOLS.iter().map(|t| (t.spec)()).collect()
}

/// Runs the tool `name` on `input_json` over `files`; files are not changed, the result holds
/// the new texts.
pub fn run_tool(name: &str, input_json: &str, files: &Files) -> Result<ToolResult, EditError> {
    let tool = TOOLS
        .iter()
        .find(|t| (t.spec)().name == name)
        .ok_or_else(|| EditError::UnknownTool(name.to_owned()))?;
    let mut workspace = Workspace::new(files);
    let summary = (tool.run)(input_json, &mut workspace)?;
    Ok(ToolResult {
        files: workspace.into_changed(),
        summary,
    })
}

fn input<T: DeserializeOwned>(tool: &str, json: &str) -> Result<T, EditError> {
    serde_json::from_str(json).map_err(|e| bad_input(tool, e.to_string()))
}

fn bad_input(tool: &str, message: impl Into<String>) -> EditError {
    EditError::Input {
        tool: tool.to_owned(),
        message: message.into(),
    }
}

fn check_identifier(tool: &str, name: &str) -> Result<(), EditError> {
    if render::is_identifier(name) {
        Ok(())
    } else {
        Err(bad_input(
            tool,
            format!("`{name}` is not an HCL identifier"),
        ))
    }
}

fn changed(did: bool, what: String) -> String {
    if did {
        what
    } else {
        format!("no change: {what} already")
    }
}

fn found(doc: &Doc, target: &Target) -> Result<(Located, Place), EditError> {
    Ok((doc.locate(target)?, doc.place(target)))
}

// ---------------------------------------------------------------------------------------------
// Schemas

fn target_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "description": "A block: top-level type and labels, then nested blocks to descend into.",
        "properties": {
            "file": {"type": "string", "description": "File to edit; omit to search every .tf file."},
            "block_type": {"type": "string", "description": "resource, data, module, variable, ..."},
            "labels": {"type": "array", "items": {"type": "string"}, "description": "e.g. [\"aws_instance\", \"web\"]"},
            "path": {"type": "array", "items": step_schema(), "description": "Nested blocks, outermost first."}
        },
        "required": ["block_type", "labels"],
        "additionalProperties": false
    })
}

fn step_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "block": {"type": "string", "description": "Nested block type, e.g. ingress, dynamic, content."},
            "labels": {"type": "array", "items": {"type": "string"}},
            "match": {"type": "object", "description": "Attribute values the block must have (blocks are sets, matched by content)."}
        },
        "required": ["block"],
        "additionalProperties": false
    })
}

fn new_block_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "description": "A block to write: type, labels, attributes (JSON values) and nested blocks of the same shape.",
        "properties": {
            "block": {"type": "string"},
            "labels": {"type": "array", "items": {"type": "string"}},
            "attributes": {"type": "object"},
            "blocks": {"type": "array", "items": {"type": "object"}}
        },
        "required": ["block"],
        "additionalProperties": false
    })
}

/// The schema of a tool acting on one nested block of a target: the step's fields, the target
/// and `extra` properties.
fn instance_schema() -> serde_json::Value {
    json!({"type": ["string", "integer"], "description": "each.key (string) or count.index (integer) of the one instance to change."})
}

fn nested_schema(extra: serde_json::Value, required: &[&str]) -> serde_json::Value {
    let mut schema = step_schema();
    schema["properties"]["target"] = target_schema();
    if let (Some(properties), serde_json::Value::Object(extra)) =
        (schema["properties"].as_object_mut(), extra)
    {
        properties.extend(extra);
    }
    schema["required"] = json!(required);
    schema
}

fn object_schema(properties: serde_json::Value, required: &[&str]) -> serde_json::Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

// ---------------------------------------------------------------------------------------------
// New blocks

/// A block to write, as a tool input.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewBlock {
    block: String,
    #[serde(default)]
    labels: Vec<String>,
    #[serde(default)]
    attributes: Ordered,
    #[serde(default)]
    blocks: Vec<NewBlock>,
}

impl NewBlock {
    fn check(&self, tool: &str) -> Result<(), EditError> {
        check_identifier(tool, &self.block)?;
        for (name, _) in &self.attributes.0 {
            check_identifier(tool, name)?;
        }
        self.blocks.iter().try_for_each(|b| b.check(tool))
    }

    fn text(&self) -> BlockText<'_> {
        BlockText {
            kind: &self.block,
            labels: &self.labels,
            attributes: &self.attributes.0,
            blocks: self.blocks.iter().map(NewBlock::text).collect(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// set_attribute, remove_attribute

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetAttribute {
    target: Target,
    name: String,
    value: Value,
    #[serde(default)]
    instance: Option<Instance>,
}

fn set_attribute_spec() -> ToolSpec {
    ToolSpec {
        name: "set_attribute",
        description: "Set an attribute of a block (or of a nested block on `path`) to a JSON value, rendered as HCL; adds it when missing. With `instance` (the each.key string or count.index number of one instance of a block with for_each/count) only that instance's value changes: the attribute becomes lookup({ key = value }, each.key, <its old expression, or null when unset>), or gets the entry in such a lookup it already is.",
        input_schema: object_schema(
            json!({"target": target_schema(), "name": {"type": "string"}, "value": {"description": "Any JSON value; a string written `${aws_vpc.main.id}` becomes that reference."}, "instance": instance_schema()}),
            &["target", "name", "value"],
        ),
    }
}

fn set_attribute(json: &str, ws: &mut Workspace) -> Result<String, EditError> {
    let SetAttribute {
        target,
        name,
        value,
        instance,
    } = input("set_attribute", json)?;
    check_identifier("set_attribute", &name)?;
    match instance {
        Some(instance) => set_for_instance(ws, &target, &name, &instance, &value),
        None => set_in_block(ws, &target, &name, &value),
    }
}

fn set_for_instance(
    ws: &mut Workspace,
    target: &Target,
    name: &str,
    instance: &Instance,
    value: &Value,
) -> Result<String, EditError> {
    let mut doc = ws.open_for(target)?;
    let (loc, place) = found(&doc, target)?;
    let did = instance::set_attribute(&mut doc, &loc, &place, name, instance, value, "null")?;
    ws.save(doc)?;
    Ok(changed(
        did,
        format!(
            "set `{name}` in {}{} for {} {} alone",
            place.address,
            place.path,
            instance.iterator(),
            render::quoted(&instance.map_key())
        ),
    ))
}

fn set_in_block(
    ws: &mut Workspace,
    target: &Target,
    name: &str,
    value: &Value,
) -> Result<String, EditError> {
    let mut doc = ws.open_for(target)?;
    let (loc, place) = found(&doc, target)?;
    let did = ops::set_attribute(&mut doc, &loc, &place, name, value)?;
    ws.save(doc)?;
    Ok(changed(
        did,
        format!("set `{name}` in {}{}", place.address, place.path),
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RemoveAttribute {
    target: Target,
    name: String,
}

fn remove_attribute_spec() -> ToolSpec {
    ToolSpec {
        name: "remove_attribute",
        description: "Remove an attribute from a block (or nested block); refuses when it is absent.",
        input_schema: object_schema(
            json!({"target": target_schema(), "name": {"type": "string"}}),
            &["target", "name"],
        ),
    }
}

fn remove_attribute(json: &str, ws: &mut Workspace) -> Result<String, EditError> {
    let RemoveAttribute { target, name } = input("remove_attribute", json)?;
    let mut doc = ws.open_for(&target)?;
    let (loc, place) = found(&doc, &target)?;
    let attr = loc
        .block
        .body
        .get_attribute(&name)
        .ok_or_else(|| no_attribute(&place, &name))?;
    let span = span_of(attr, &place)?;
    ops::remove_structure(&mut doc, Some(&loc), &span, false);
    ws.save(doc)?;
    Ok(format!(
        "removed `{name}` from {}{}",
        place.address, place.path
    ))
}

fn no_attribute(place: &Place, name: &str) -> EditError {
    EditError::NoAttribute {
        file: place.file.clone(),
        address: place.address.clone(),
        path: place.path.clone(),
        name: name.to_owned(),
    }
}

// ---------------------------------------------------------------------------------------------
// add_block, remove_block, replace_block

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AddBlock {
    target: Target,
    block: NewBlock,
}

fn add_block_spec() -> ToolSpec {
    ToolSpec {
        name: "add_block",
        description: "Add a nested block (e.g. an ingress rule) inside a block, after the last block of its type; refuses when an identical block exists.",
        input_schema: object_schema(
            json!({"target": target_schema(), "block": new_block_schema()}),
            &["target", "block"],
        ),
    }
}

fn add_block(json: &str, ws: &mut Workspace) -> Result<String, EditError> {
    let AddBlock { target, block } = input("add_block", json)?;
    block.check("add_block")?;
    let mut doc = ws.open_for(&target)?;
    let (loc, place) = found(&doc, &target)?;
    let duplicate = loc.block.body.blocks().any(|b| {
        b.has_ident(&block.block)
            && b.has_exact_labels(&block.labels)
            && b.body.attributes().count() == block.attributes.0.len()
            && b.body.blocks().next().is_none()
            && block.blocks.is_empty()
            && matches_all(&doc.text, &b.body, &block.attributes)
    });
    if duplicate {
        return Err(impossible(
            &place,
            format!("an identical `{}` block already exists", block.block),
        ));
    }
    let text = render::block(&block.text(), &loc.inner_indent());
    ops::insert_block(&mut doc, &loc, &block.block, &text);
    ws.save(doc)?;
    Ok(format!(
        "added a `{}` block to {}{}",
        block.block, place.address, place.path
    ))
}

fn impossible(place: &Place, message: String) -> EditError {
    place.impossible(message)
}

/// The nested block picked by type, labels and match inside a located block.
fn pick<'b>(
    parent: &'b Located,
    text: &str,
    step: &Step,
    place: &Place,
) -> Result<&'b Block, EditError> {
    let found = parent
        .block
        .body
        .blocks()
        .filter(|b| b.has_ident(&step.block) && b.has_exact_labels(&step.labels))
        .filter(|b| matches_all(text, &b.body, &step.matches))
        .collect();
    super::locate::single(found, &place.nested(&step_text(step)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RemoveBlock {
    target: Target,
    block: String,
    #[serde(default)]
    labels: Vec<String>,
    #[serde(default, rename = "match")]
    matches: Ordered,
}

fn remove_block_spec() -> ToolSpec {
    let schema = nested_schema(json!({}), &["target", "block"]);
    ToolSpec {
        name: "remove_block",
        description: "Remove the one nested block of a type whose attributes match `match` (with the comment lines right above it); refuses when none or several match.",
        input_schema: schema,
    }
}

fn remove_block(json: &str, ws: &mut Workspace) -> Result<String, EditError> {
    let RemoveBlock {
        target,
        block,
        labels,
        matches,
    } = input("remove_block", json)?;
    let step = Step {
        block,
        labels,
        matches,
    };
    let mut doc = ws.open_for(&target)?;
    let (loc, place) = found(&doc, &target)?;
    let span = span_of(pick(&loc, &doc.text, &step, &place)?, &place)?;
    ops::remove_structure(&mut doc, Some(&loc), &span, true);
    ws.save(doc)?;
    Ok(format!(
        "removed {} from {}{}",
        step_text(&step),
        place.address,
        place.path
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplaceBlock {
    target: Target,
    block: String,
    #[serde(default)]
    labels: Vec<String>,
    #[serde(default, rename = "match")]
    matches: Ordered,
    with: NewBlock,
}

fn replace_block_spec() -> ToolSpec {
    let schema = nested_schema(
        json!({"with": new_block_schema()}),
        &["target", "block", "with"],
    );
    ToolSpec {
        name: "replace_block",
        description: "Replace the one nested block of a type whose attributes match `match` by a new block, keeping the comments above it.",
        input_schema: schema,
    }
}

fn replace_block(json: &str, ws: &mut Workspace) -> Result<String, EditError> {
    let ReplaceBlock {
        target,
        block,
        labels,
        matches,
        with,
    } = input("replace_block", json)?;
    let step = Step {
        block,
        labels,
        matches,
    };
    with.check("replace_block")?;
    let mut doc = ws.open_for(&target)?;
    let (loc, place) = found(&doc, &target)?;
    let span = span_of(pick(&loc, &doc.text, &step, &place)?, &place)?;
    let text = render::block(&with.text(), &loc.inner_indent());
    ops::replace_lines(&mut doc, &span, false, &text);
    ws.save(doc)?;
    Ok(format!(
        "replaced {} in {}{}",
        step_text(&step),
        place.address,
        place.path
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateBlock {
    target: Target,
    block: String,
    #[serde(default)]
    labels: Vec<String>,
    #[serde(default, rename = "match")]
    matches: Ordered,
    attributes: Ordered,
    #[serde(default)]
    drop_comments: bool,
}

fn update_block_spec() -> ToolSpec {
    let schema = nested_schema(
        json!({
            "attributes": {"type": "object", "description": "The block's attributes after the change (JSON values)."},
            "drop_comments": {"type": "boolean", "description": "Also remove the comment lines right above the block, which described the old content."}
        }),
        &["target", "block", "attributes"],
    );
    ToolSpec {
        name: "update_block",
        description: "Edit the one nested block of a type whose attributes match `match` in place, so it holds exactly `attributes`: changed values are rewritten where they stand, missing ones added, others removed (unset-like values such as false or [] are left). Use it for a rule replaced by another (a revoke plus an authorize).",
        input_schema: schema,
    }
}

fn update_block(json: &str, ws: &mut Workspace) -> Result<String, EditError> {
    let UpdateBlock {
        target,
        block,
        labels,
        matches,
        attributes,
        drop_comments,
    } = input("update_block", json)?;
    for (name, _) in &attributes.0 {
        check_identifier("update_block", name)?;
    }
    let step = Step {
        block,
        labels,
        matches,
    };
    let mut doc = ws.open_for(&target)?;
    let (parent, place) = found(&doc, &target)?;
    let chosen = pick(&parent, &doc.text, &step, &place)?;
    let span = span_of(chosen, &place)?;
    let position = same_kind(&parent, &step)
        .position(|b| b.span() == Some(span.clone()))
        .unwrap_or_default();
    let stale: Vec<String> = chosen
        .body
        .attributes()
        .filter(|a| !attributes.0.iter().any(|(k, _)| k == a.key.as_str()))
        .filter(|a| !literal(&a.value).is_some_and(|v| is_unset_like(&v)))
        .map(|a| a.key.as_str().to_owned())
        .collect();
    let mut did = false;
    let with = super::text::whole_lines(&doc.text, &span, true);
    let without = super::text::whole_lines(&doc.text, &span, false);
    if drop_comments && with.start < without.start {
        doc.splice(with.start..without.start, "");
        did = true;
    }
    for (name, value) in &attributes.0 {
        let (loc, here) = nth_block(&doc, &target, &step, position)?;
        did |= ops::set_attribute(&mut doc, &loc, &here, name, value)?;
    }
    for name in &stale {
        let (loc, here) = nth_block(&doc, &target, &step, position)?;
        let attr = loc
            .block
            .body
            .get_attribute(name)
            .ok_or_else(|| no_attribute(&here, name))?;
        let attr_span = span_of(attr, &here)?;
        ops::remove_structure(&mut doc, Some(&loc), &attr_span, false);
        did = true;
    }
    ws.save(doc)?;
    Ok(changed(
        did,
        format!(
            "updated {} in {}{}",
            step_text(&step),
            place.address,
            place.path
        ),
    ))
}

/// The nested blocks of the step's type and labels, in order.
fn same_kind<'b>(parent: &'b Located, step: &'b Step) -> impl Iterator<Item = &'b Block> {
    parent
        .block
        .body
        .blocks()
        .filter(|b| b.has_ident(&step.block) && b.has_exact_labels(&step.labels))
}

/// The `position`-th nested block of the step's type, located afresh in the current text.
fn nth_block(
    doc: &Doc,
    target: &Target,
    step: &Step,
    position: usize,
) -> Result<(Located, Place), EditError> {
    let (parent, place) = found(doc, target)?;
    let here = place.nested(&step.block);
    let block = same_kind(&parent, step)
        .nth(position)
        .ok_or_else(|| EditError::Internal {
            file: place.file.clone(),
            message: format!("the `{}` block moved while it was edited", step.block),
        })?;
    Ok((super::locate::located(&doc.text, block, &here)?, here))
}

/// Values an optional attribute has when it is not set: left alone when the new block omits them.
fn is_unset_like(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => true,
        Value::String(s) => s.is_empty(),
        Value::List(items) => items.is_empty(),
        Value::Object(entries) => entries.is_empty(),
        Value::Number(_) | Value::Bool(true) => false,
    }
}

// ---------------------------------------------------------------------------------------------
// set_tags

#[derive(Deserialize, Default, PartialEq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum TagMode {
    #[default]
    Merge,
    Replace,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetTags {
    target: Target,
    #[serde(default = "tags_name")]
    attribute: String,
    #[serde(default)]
    tags: Ordered,
    #[serde(default)]
    mode: TagMode,
    #[serde(default)]
    remove: Vec<String>,
    #[serde(default)]
    instance: Option<Instance>,
}

fn tags_name() -> String {
    "tags".to_owned()
}

fn set_tags_spec() -> ToolSpec {
    ToolSpec {
        name: "set_tags",
        description: "Merge (default) or replace a literal tags map: existing keys keep their order and comments, new keys are appended, `remove` keys are dropped. Tags written merge(local.x, { ... }) are merged into the last argument when it is a literal map (else a new one is appended); another expression such as local.common_tags is kept and wrapped: merge(local.common_tags, { ... }), removed keys filtered out with a for expression. With `instance` (the each.key string or count.index number of one instance of a block with for_each/count) only that instance's tags change, through a trailing lookup({ key = { ... } }, each.key, {}) argument of merge(...).",
        input_schema: object_schema(
            json!({
                "target": target_schema(),
                "attribute": {"type": "string", "description": "Defaults to tags; e.g. tags_all or default_tags' tags."},
                "tags": {"type": "object", "additionalProperties": {"type": "string"}},
                "mode": {"enum": ["merge", "replace"]},
                "remove": {"type": "array", "items": {"type": "string"}},
                "instance": instance_schema()
            }),
            &["target"],
        ),
    }
}

fn set_tags(json: &str, ws: &mut Workspace) -> Result<String, EditError> {
    let SetTags {
        target,
        attribute,
        tags,
        mode,
        mut remove,
        instance,
    } = input("set_tags", json)?;
    let mut doc = ws.open_for(&target)?;
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
                "set_tags",
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
            let did = merge_call_tags(&mut doc, call, &place, &attribute, &tags, mode, &remove)?;
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
                .filter_map(|(k, _)| super::locate::key_name(k))
                .filter(|k| !keep.contains(&k)),
        );
    }
    let did = ops::merge_object(&mut doc, object, &place, &tags.0, &remove)?;
    ws.save(doc)?;
    Ok(changed(did, what))
}

/// Whether the call is Terraform's built-in `merge(...)`.
fn is_merge(call: &FuncCall) -> bool {
    instance::is_call(call, "merge")
}

/// Whether a key to remove is not in the literal map ending the `merge(...)`, so that only a
/// filter over the whole expression can remove it.
fn removes_from_others(call: &FuncCall, remove: &[String]) -> bool {
    let have: Vec<String> = match call.args.iter().last() {
        Some(Expression::Object(object)) => object
            .iter()
            .filter_map(|(k, _)| super::locate::key_name(k))
            .collect(),
        _ => Vec::new(),
    };
    remove.iter().any(|k| !have.contains(k))
}

/// Tags written as `merge(local.common_tags, { ... })`: the keys are set in the last argument
/// when it is a literal object (later arguments win in `merge`, so that is the only place a key
/// is sure to take effect), or in a new literal object appended as the last argument. Keys are
/// removed only from that literal (the caller wraps the call in a filter for other keys).
fn merge_call_tags(
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
    let indent = super::text::indent_at(&doc.text, end).to_owned();
    let text = render::value(&Value::Object(tags.0.clone()), &indent);
    doc.splice(end..end, &format!(", {text}"));
    Ok(true)
}

fn not_literal(place: &Place, name: &str, expected: &'static str) -> EditError {
    EditError::NotLiteral {
        file: place.file.clone(),
        address: place.address.clone(),
        path: place.path.clone(),
        name: name.to_owned(),
        expected,
    }
}

// ---------------------------------------------------------------------------------------------
// import_resource, remove_resource

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ImportResource {
    file: String,
    resource_type: String,
    name: String,
    id: String,
    #[serde(default)]
    attributes: Ordered,
    #[serde(default)]
    blocks: Vec<NewBlock>,
}

fn import_resource_spec() -> ToolSpec {
    ToolSpec {
        name: "import_resource",
        description: "Append a resource block and an `import { to = TYPE.NAME  id = \"...\" }` block to a file, for a resource created outside Terraform.",
        input_schema: object_schema(
            json!({
                "file": {"type": "string"},
                "resource_type": {"type": "string"},
                "name": {"type": "string"},
                "id": {"type": "string", "description": "The provider's import ID."},
                "attributes": {"type": "object"},
                "blocks": {"type": "array", "items": new_block_schema()}
            }),
            &["file", "resource_type", "name", "id"],
        ),
    }
}

fn import_resource(json: &str, ws: &mut Workspace) -> Result<String, EditError> {
    let ImportResource {
        file,
        resource_type,
        name,
        id,
        attributes,
        blocks,
    } = input("import_resource", json)?;
    let tool = "import_resource";
    check_identifier(tool, &resource_type)?;
    check_identifier(tool, &name)?;
    let labels = [resource_type.clone(), name.clone()];
    let resource = NewBlock {
        block: "resource".to_owned(),
        labels: labels.to_vec(),
        attributes,
        blocks,
    };
    resource.check(tool)?;
    let mut doc = ws.open(&file)?;
    if !super::locate::top_blocks(&doc.parse()?, "resource", &labels).is_empty() {
        let place = Place {
            file,
            address: header("resource", &labels),
            path: String::new(),
        };
        return Err(impossible(&place, "the resource already exists".to_owned()));
    }
    let import = format!(
        "import {{\n  to = {resource_type}.{name}\n  id = {}\n}}",
        render::quoted(&id)
    );
    ops::append_blocks(&mut doc, &[render::block(&resource.text(), ""), import]);
    ws.save(doc)?;
    Ok(format!(
        "added resource {resource_type}.{name} and its import block to {file}"
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RemoveResource {
    target: Target,
    #[serde(default)]
    keep_in_state: bool,
}

fn remove_resource_spec() -> ToolSpec {
    ToolSpec {
        name: "remove_resource",
        description: "Remove a resource or module block (with the comment lines right above it). With keep_in_state, leave `removed { from = ADDR  lifecycle { destroy = false } }` so Terraform forgets it without destroying it.",
        input_schema: object_schema(
            json!({"target": target_schema(), "keep_in_state": {"type": "boolean"}}),
            &["target"],
        ),
    }
}

fn remove_resource(json: &str, ws: &mut Workspace) -> Result<String, EditError> {
    let RemoveResource {
        target,
        keep_in_state,
    } = input("remove_resource", json)?;
    let mut doc = ws.open_for(&target)?;
    let (loc, place) = found(&doc, &target)?;
    let address = match (
        target.block_type.as_str(),
        target.labels.as_slice(),
        target.path.is_empty(),
    ) {
        ("resource", [kind, name], true) => format!("{kind}.{name}"),
        ("module", [name], true) => format!("module.{name}"),
        _ => {
            return Err(impossible(
                &place,
                "only a top-level resource or module block can be removed".to_owned(),
            ));
        }
    };
    let span = span_of(&loc.block, &place)?;
    if keep_in_state {
        let removed = format!(
            "removed {{\n  from = {address}\n\n  lifecycle {{\n    destroy = false\n  }}\n}}"
        );
        ops::replace_lines(&mut doc, &span, true, &removed);
    } else {
        ops::remove_structure(&mut doc, None, &span, true);
    }
    let dir = parent_dir(&doc.path).to_owned();
    ws.save(doc)?;
    let pointers = remove_pointers(ws, &dir, &address)?;
    let kept = if keep_in_state {
        " (kept in state by a removed block)"
    } else {
        ""
    };
    let dangling = match pointers {
        0 => String::new(),
        n => format!(" and {n} import or moved block(s) that pointed at it"),
    };
    Ok(format!("removed {address}{kept}{dangling}"))
}

/// The directory of a project-relative path (empty for the root).
fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// Removes, from the `.tf` files of `dir`, the `import` and `moved` blocks whose `to` is
/// `address` or one of its instances: they would dangle once the resource block is gone.
fn remove_pointers(ws: &mut Workspace, dir: &str, address: &str) -> Result<usize, EditError> {
    let mut removed = 0;
    let paths: Vec<String> = ws
        .paths()
        .filter(|p| p.ends_with(".tf") && parent_dir(p) == dir)
        .map(str::to_owned)
        .collect();
    for path in paths {
        let mut doc = ws.open(&path)?;
        while let Some(span) = pointer_at(&doc, address)? {
            ops::remove_structure(&mut doc, None, &span, true);
            removed += 1;
        }
        ws.save(doc)?;
    }
    Ok(removed)
}

/// The span of the first `import` or `moved` block of a file whose `to` is `address` or one of
/// its instances.
fn pointer_at(doc: &Doc, address: &str) -> Result<Option<Range<usize>>, EditError> {
    let body = doc.parse()?;
    let to_text = |block: &Block| -> Option<String> {
        let to = block.body.get_attribute("to")?;
        let span = to.value.span()?;
        Some(
            doc.text[span]
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect(),
        )
    };
    let found = body
        .blocks()
        .filter(|b| b.has_ident("import") || b.has_ident("moved"))
        .find(|b| {
            to_text(b).is_some_and(|to| {
                to == address || to.strip_prefix(address).is_some_and(|r| r.starts_with('['))
            })
        });
    Ok(found.and_then(|b| b.span()))
}

// ---------------------------------------------------------------------------------------------
// ignore_changes

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FilterForEach {
    target: Target,
    keys: Vec<String>,
}

fn filter_for_each_spec() -> ToolSpec {
    ToolSpec {
        name: "filter_for_each",
        description: "Drop instance keys from a block's for_each without editing the collection it iterates (which other blocks may share): for_each = { for k, v in EXPR : k => v if k != \"key\" }, or setsubtract(toset(...), [\"key\"]) for a set; a filter written this way before gets the keys added.",
        input_schema: object_schema(
            json!({"target": target_schema(), "keys": {"type": "array", "items": {"type": "string"}, "minItems": 1}}),
            &["target", "keys"],
        ),
    }
}

fn filter_for_each(json: &str, ws: &mut Workspace) -> Result<String, EditError> {
    let FilterForEach { target, keys } = input("filter_for_each", json)?;
    if keys.is_empty() {
        return Err(bad_input("filter_for_each", "`keys` is empty"));
    }
    let mut doc = ws.open_for(&target)?;
    let (loc, place) = found(&doc, &target)?;
    let Some(attr) = loc.block.body.get_attribute("for_each") else {
        return Err(no_attribute(&place, "for_each"));
    };
    let did = filter::drop_keys(&mut doc, &attr.value, &place, &keys)?;
    ws.save(doc)?;
    Ok(changed(
        did,
        format!(
            "dropped {} from the for_each of {}",
            keys.iter()
                .map(|k| render::quoted(k))
                .collect::<Vec<_>>()
                .join(", "),
            place.address
        ),
    ))
}

fn thread_module_input_spec() -> ToolSpec {
    ToolSpec {
        name: "thread_module_input",
        description: "Give one instance of a module called with for_each/count its own value for an argument of a resource inside the module, when no module input carries that argument alone: declares variable `input` in the module (default {} with merge, else null), makes the argument read it (merge(X, var.input), or var.input == null ? X : var.input, or var.input when unset) and sets it at the call for that instance alone: input = lookup({ key = value }, each.key, {} | null).",
        input_schema: object_schema(
            json!({
                "call": target_schema(),
                "resource": target_schema(),
                "attribute": {"type": "string"},
                "input": {"type": "string"},
                "type": {"type": "string", "description": "The variable's type constraint as HCL, e.g. map(string) or number."},
                "merge": {"type": "boolean", "description": "A map merged over the argument (tags) rather than replacing it."},
                "variables_file": {"type": "string", "description": "The module file to declare the variable in; the resource's file when absent."},
                "instance": instance_schema(),
                "value": {"description": "The value for that instance."}
            }),
            &[
                "call",
                "resource",
                "attribute",
                "input",
                "type",
                "instance",
                "value",
            ],
        ),
    }
}

fn thread_module_input(json: &str, ws: &mut Workspace) -> Result<String, EditError> {
    let input: module_input::ThreadModuleInput = input("thread_module_input", json)?;
    for name in [&input.attribute, &input.input] {
        check_identifier("thread_module_input", name)?;
    }
    if input.resource.file.is_none() {
        return Err(bad_input(
            "thread_module_input",
            "`resource` must name the module file holding the resource",
        ));
    }
    let did = module_input::thread(ws, &input)?;
    Ok(changed(
        did,
        format!(
            "`{}` of {} set for {} {} alone through module input `{}`",
            input.attribute,
            input.resource.address(),
            input.instance.iterator(),
            render::quoted(&input.instance.map_key()),
            input.input
        ),
    ))
}

fn switch_off_in_module_instance_spec() -> ToolSpec {
    ToolSpec {
        name: "switch_off_in_module_instance",
        description: "Remove a resource from one instance of a module called with for_each/count, keeping it in the others: declares a bool variable `input` (default true) in the module, adds `count = var.input ? 1 : 0` to the resource with a `moved` block from its old address to [0] (so the other instances keep their objects), and sets input = lookup({ key = false }, each.key, true) at the call.",
        input_schema: object_schema(
            json!({
                "call": target_schema(),
                "resource": target_schema(),
                "input": {"type": "string"},
                "variables_file": {"type": "string", "description": "The module file to declare the variable in; the resource's file when absent."},
                "instance": instance_schema()
            }),
            &["call", "resource", "input", "instance"],
        ),
    }
}

fn switch_off_in_module_instance(json: &str, ws: &mut Workspace) -> Result<String, EditError> {
    let input: module_input::SwitchOff = input("switch_off_in_module_instance", json)?;
    check_identifier("switch_off_in_module_instance", &input.input)?;
    if input.resource.file.is_none() {
        return Err(bad_input(
            "switch_off_in_module_instance",
            "`resource` must name the module file holding the resource",
        ));
    }
    let did = module_input::switch_off(ws, &input)?;
    Ok(changed(
        did,
        format!(
            "{} switched off for {} {} through module input `{}`",
            input.resource.address(),
            input.instance.iterator(),
            render::quoted(&input.instance.map_key()),
            input.input
        ),
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IgnoreChanges {
    target: Target,
    attributes: Vec<String>,
}

fn ignore_changes_spec() -> ToolSpec {
    ToolSpec {
        name: "ignore_changes",
        description: "Add attribute references (e.g. tags, tags[\"Owner\"]) to lifecycle.ignore_changes, creating the lifecycle block or attribute when missing and skipping ones already listed.",
        input_schema: object_schema(
            json!({"target": target_schema(), "attributes": {"type": "array", "items": {"type": "string"}, "minItems": 1}}),
            &["target", "attributes"],
        ),
    }
}

fn ignore_changes(json: &str, ws: &mut Workspace) -> Result<String, EditError> {
    let IgnoreChanges { target, attributes } = input("ignore_changes", json)?;
    for reference in &attributes {
        let parsed = hcl::edit::parser::parse_expr(reference);
        if !matches!(
            parsed,
            Ok(Expression::Variable(_) | Expression::Traversal(_))
        ) {
            return Err(bad_input(
                "ignore_changes",
                format!("`{reference}` is not an attribute reference"),
            ));
        }
    }
    let mut doc = ws.open_for(&target)?;
    let (loc, place) = found(&doc, &target)?;
    let what = format!("ignore_changes of {}{}", place.address, place.path);
    let lifecycle = Step {
        block: "lifecycle".to_owned(),
        labels: Vec::new(),
        matches: Ordered::default(),
    };
    let list = format!("[{}]", attributes.join(", "));
    if loc.block.body.get_blocks("lifecycle").next().is_none() {
        let text = format!(
            "lifecycle {{\n{0}  ignore_changes = {list}\n{0}}}",
            loc.inner_indent()
        );
        ops::insert_block(&mut doc, &loc, "lifecycle", &text);
        ws.save(doc)?;
        return Ok(format!("added {what}"));
    }
    let inner = super::locate::located(
        &doc.text,
        pick(&loc, &doc.text, &lifecycle, &place)?,
        &place,
    )?;
    let place = place.nested("lifecycle");
    let did = match inner
        .block
        .body
        .get_attribute("ignore_changes")
        .map(|a| &a.value)
    {
        None => {
            ops::insert_attribute(&mut doc, &inner, &format!("ignore_changes = {list}"));
            true
        }
        Some(Expression::Variable(v)) if v.as_str() == "all" => false,
        Some(Expression::Array(array)) => {
            ops::append_to_list(&mut doc, array, &place, &attributes)?
        }
        Some(_) => return Err(not_literal(&place, "ignore_changes", "list")),
    };
    ws.save(doc)?;
    Ok(changed(did, format!("extended {what}")))
}

// ---------------------------------------------------------------------------------------------
// set_variable_default, set_tfvar, set_module_argument

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetVariableDefault {
    #[serde(default)]
    file: Option<String>,
    name: String,
    value: Value,
}

fn set_variable_default_spec() -> ToolSpec {
    ToolSpec {
        name: "set_variable_default",
        description: "Set the default of `variable \"NAME\"`, adding it after the variable's other attributes when missing.",
        input_schema: object_schema(
            json!({"file": {"type": "string"}, "name": {"type": "string"}, "value": {"description": "Any JSON value; a string written `${aws_vpc.main.id}` becomes that reference."}}),
            &["name", "value"],
        ),
    }
}

fn set_variable_default(json: &str, ws: &mut Workspace) -> Result<String, EditError> {
    let SetVariableDefault { file, name, value } = input("set_variable_default", json)?;
    let target = Target {
        file,
        block_type: "variable".to_owned(),
        labels: vec![name],
        path: Vec::new(),
    };
    set_in_block(ws, &target, "default", &value)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetTfvar {
    file: String,
    name: String,
    value: Value,
}

fn set_tfvar_spec() -> ToolSpec {
    ToolSpec {
        name: "set_tfvar",
        description: "Set `NAME = value` in a .tfvars file, appending it when missing.",
        input_schema: object_schema(
            json!({"file": {"type": "string"}, "name": {"type": "string"}, "value": {"description": "Any JSON value; a string written `${aws_vpc.main.id}` becomes that reference."}}),
            &["file", "name", "value"],
        ),
    }
}

fn set_tfvar(json: &str, ws: &mut Workspace) -> Result<String, EditError> {
    let SetTfvar { file, name, value } = input("set_tfvar", json)?;
    check_identifier("set_tfvar", &name)?;
    let mut doc = ws.open(&file)?;
    let place = Place {
        file: file.clone(),
        address: "(top level)".to_owned(),
        path: String::new(),
    };
    let did = ops::set_top_attribute(&mut doc, &place, &name, &value)?;
    ws.save(doc)?;
    Ok(changed(did, format!("set `{name}` in {file}")))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetModuleArgument {
    #[serde(default)]
    file: Option<String>,
    module: String,
    name: String,
    value: Value,
}

fn set_module_argument_spec() -> ToolSpec {
    ToolSpec {
        name: "set_module_argument",
        description: "Set an argument of `module \"NAME\"` to a JSON value, adding it when missing.",
        input_schema: object_schema(
            json!({"file": {"type": "string"}, "module": {"type": "string"}, "name": {"type": "string"}, "value": {"description": "Any JSON value; a string written `${aws_vpc.main.id}` becomes that reference."}}),
            &["module", "name", "value"],
        ),
    }
}

fn set_module_argument(json: &str, ws: &mut Workspace) -> Result<String, EditError> {
    let SetModuleArgument {
        file,
        module,
        name,
        value,
    } = input("set_module_argument", json)?;
    check_identifier("set_module_argument", &name)?;
    let target = Target {
        file,
        block_type: "module".to_owned(),
        labels: vec![module],
        path: Vec::new(),
    };
    set_in_block(ws, &target, &name, &value)
}

// ---------------------------------------------------------------------------------------------
// set_collection_entry

/// The literal collection an entry is edited in.
#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum Container {
    /// `variable "NAME" { default = ... }`.
    VariableDefault { name: String },
    /// `NAME = ...` in a .tfvars file.
    Tfvar { name: String },
    /// `NAME = ...` in a `locals` block.
    Local { name: String },
    /// The `for_each` argument of a block.
    ForEach { target: Target },
}

/// One step into a collection: an object key or a list position.
#[derive(Deserialize)]
#[serde(untagged)]
enum EntryStep {
    Key(String),
    Index(usize),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetCollectionEntry {
    file: String,
    #[serde(rename = "in")]
    container: Container,
    path: Vec<EntryStep>,
    value: Value,
}

fn set_collection_entry_spec() -> ToolSpec {
    ToolSpec {
        name: "set_collection_entry",
        description: "Set the value at `path` (object keys and list positions) inside a literal map or list: a variable's default, a .tfvars assignment, a local, or a block's for_each. The last key is added to its object when missing; refuses when the path meets an expression.",
        input_schema: object_schema(
            json!({
                "file": {"type": "string"},
                "in": {"type": "object", "description": "{\"kind\": \"variable_default\" | \"tfvar\" | \"local\", \"name\": NAME} or {\"kind\": \"for_each\", \"target\": TARGET}", "properties": {"kind": {"enum": ["variable_default", "tfvar", "local", "for_each"]}, "name": {"type": "string"}, "target": target_schema()}, "required": ["kind"]},
                "path": {"type": "array", "items": {"type": ["string", "integer"]}, "minItems": 1},
                "value": {"description": "Any JSON value; a string written `${aws_vpc.main.id}` becomes that reference."}
            }),
            &["file", "in", "path", "value"],
        ),
    }
}

fn set_collection_entry(json: &str, ws: &mut Workspace) -> Result<String, EditError> {
    let SetCollectionEntry {
        file,
        container,
        path,
        value,
    } = input("set_collection_entry", json)?;
    let mut doc = ws.open(&file)?;
    let body = doc.parse()?;
    let (root, place) = collection_root(&doc, &body, &file, &container)?;
    let Some((last, inner)) = path.split_last() else {
        return Err(bad_input("set_collection_entry", "the path is empty"));
    };
    let mut expr = root;
    let mut here = place.clone();
    for step in inner {
        here = here.nested(&entry_text(step));
        expr =
            entry(expr, step).ok_or_else(|| impossible(&here, "no such literal entry".into()))?;
    }
    let what = format!("set {}{} in {file}", place.address, path_text(&path));
    let did = match (expr, last) {
        (Expression::Object(object), EntryStep::Key(key)) => {
            let found = object
                .iter()
                .find(|(k, _)| super::locate::key_name(k).as_deref() == Some(key.as_str()));
            match found {
                Some((_, item)) => splice_value(&mut doc, item.expr(), &here, &value)?,
                None => {
                    let tags = [(key.clone(), value.clone())];
                    ops::merge_object(&mut doc, object, &here, &tags, &[])?
                }
            }
        }
        (Expression::Array(list), EntryStep::Index(i)) => match list.iter().nth(*i) {
            Some(item) => splice_value(&mut doc, item, &here, &value)?,
            None => return Err(impossible(&here, format!("the list has no element {i}"))),
        },
        _ => {
            return Err(impossible(
                &here,
                format!("{} is not in a literal map or list", entry_text(last)),
            ));
        }
    };
    ws.save(doc)?;
    Ok(changed(did, what))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RemoveCollectionEntry {
    file: String,
    #[serde(rename = "in")]
    container: Container,
    path: Vec<EntryStep>,
}

fn remove_collection_entry_spec() -> ToolSpec {
    ToolSpec {
        name: "remove_collection_entry",
        description: "Remove the entry at `path` (object keys, list positions, or a set's string element) from a literal map or list: a variable's default, a .tfvars assignment, a local, or a block's for_each (`toset([...])` included). Refuses when the path meets an expression or the entry is missing.",
        input_schema: object_schema(
            json!({
                "file": {"type": "string"},
                "in": {"type": "object", "description": "as for set_collection_entry", "properties": {"kind": {"enum": ["variable_default", "tfvar", "local", "for_each"]}, "name": {"type": "string"}, "target": target_schema()}, "required": ["kind"]},
                "path": {"type": "array", "items": {"type": ["string", "integer"]}, "minItems": 1}
            }),
            &["file", "in", "path"],
        ),
    }
}

fn remove_collection_entry(json: &str, ws: &mut Workspace) -> Result<String, EditError> {
    let RemoveCollectionEntry {
        file,
        container,
        path,
    } = input("remove_collection_entry", json)?;
    let mut doc = ws.open(&file)?;
    let body = doc.parse()?;
    let (root, place) = collection_root(&doc, &body, &file, &container)?;
    let Some((last, inner)) = path.split_last() else {
        return Err(bad_input("remove_collection_entry", "the path is empty"));
    };
    let mut expr = unwrap_toset(root);
    let mut here = place.clone();
    for step in inner {
        here = here.nested(&entry_text(step));
        expr = entry(expr, step)
            .map(unwrap_toset)
            .ok_or_else(|| impossible(&here, "no such literal entry".into()))?;
    }
    let what = format!("removed {}{} in {file}", place.address, path_text(&path));
    let missing = || impossible(&here, format!("no entry {}", entry_text(last)));
    match (expr, last) {
        (Expression::Object(object), EntryStep::Key(key)) => {
            if entry(expr, last).is_none() {
                return Err(missing());
            }
            ops::merge_object(&mut doc, object, &here, &[], std::slice::from_ref(key))?;
        }
        (Expression::Array(list), step) => {
            let position = match step {
                EntryStep::Index(i) => (*i < list.len()).then_some(*i),
                EntryStep::Key(key) => list
                    .iter()
                    .position(|item| matches!(item, Expression::String(s) if s.value() == key)),
            };
            let items: Vec<&Expression> = list.iter().collect();
            let range = position
                .map(|i| element_removal(&doc.text, &items, i, &here))
                .transpose()?
                .ok_or_else(missing)?;
            doc.splice(range, "");
        }
        _ => return Err(missing()),
    }
    ws.save(doc)?;
    Ok(what)
}

/// The argument of a `toset(...)` call, or the expression itself.
fn unwrap_toset(expr: &Expression) -> &Expression {
    match expr {
        Expression::FuncCall(call)
            if call.name.name.as_str() == "toset" && call.args.len() == 1 =>
        {
            call.args.iter().next().map_or(expr, unwrap_toset)
        }
        Expression::Parenthesis(inner) => unwrap_toset(inner.inner()),
        _ => expr,
    }
}

/// The text to delete to remove element `i` of a list: its whole line (with its comma) when
/// it stands alone on it, otherwise the element with the separator after it (before it, for
/// the last element).
fn element_removal(
    text: &str,
    items: &[&Expression],
    i: usize,
    place: &Place,
) -> Result<Range<usize>, EditError> {
    let span = span_of(items[i], place)?;
    let rest = &text[span.end..];
    let comma = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    let end = if rest[comma..].starts_with(',') {
        span.end + comma + 1
    } else {
        span.end
    };
    let line_start = super::text::line_start(text, span.start);
    let line_end = super::text::line_end(text, end);
    if text[line_start..span.start].trim().is_empty() && text[end..line_end].trim().is_empty() {
        let lines = super::text::whole_lines(text, &(span.start..end), false);
        return Ok(super::text::removal(text, lines));
    }
    match (
        items.get(i + 1),
        i.checked_sub(1).and_then(|p| items.get(p)),
    ) {
        (Some(next), _) => Ok(span.start..span_of(*next, place)?.start),
        (None, Some(previous)) => Ok(span_of(*previous, place)?.end..end),
        (None, None) => Ok(span.start..end),
    }
}

/// The expression holding the collection, and its place for messages.
fn collection_root<'b>(
    doc: &Doc,
    body: &'b hcl::edit::structure::Body,
    file: &str,
    container: &Container,
) -> Result<(&'b Expression, Place), EditError> {
    let top = |address: String| Place {
        file: file.to_owned(),
        address,
        path: String::new(),
    };
    let (attr, place) = match container {
        Container::VariableDefault { name } => {
            let place = top(header("variable", std::slice::from_ref(name)));
            let blocks = super::locate::top_blocks(body, "variable", std::slice::from_ref(name));
            let block = super::locate::single(blocks, &place)?;
            (block.body.get_attribute("default"), place.nested("default"))
        }
        Container::Tfvar { name } => (body.get_attribute(name), top(name.clone())),
        Container::Local { name } => {
            let found: Vec<_> = body
                .blocks()
                .filter(|b| b.has_ident("locals"))
                .filter_map(|b| b.body.get_attribute(name))
                .collect();
            (found.first().copied(), top(format!("local.{name}")))
        }
        Container::ForEach { target } => {
            let place = doc.place(target);
            let blocks = super::locate::top_blocks(body, &target.block_type, &target.labels);
            let block = super::locate::single(blocks, &place)?;
            (
                block.body.get_attribute("for_each"),
                place.nested("for_each"),
            )
        }
    };
    let attr = attr.ok_or_else(|| impossible(&place, "not set in this file".to_owned()))?;
    Ok((&attr.value, place))
}

/// The element a step leads to in a literal object or list.
fn entry<'e>(expr: &'e Expression, step: &EntryStep) -> Option<&'e Expression> {
    match (expr, step) {
        (Expression::Object(object), EntryStep::Key(key)) => object
            .iter()
            .find(|(k, _)| super::locate::key_name(k).as_deref() == Some(key.as_str()))
            .map(|(_, v)| v.expr()),
        (Expression::Array(list), EntryStep::Index(i)) => list.iter().nth(*i),
        (Expression::Parenthesis(inner), _) => entry(inner.inner(), step),
        _ => None,
    }
}

/// Replaces a value where it stands; false when it already has this value.
fn splice_value(
    doc: &mut Doc,
    expr: &Expression,
    place: &Place,
    value: &Value,
) -> Result<bool, EditError> {
    if super::locate::same_value(&doc.text, expr, value) && literal(expr).is_some() {
        return Ok(false);
    }
    let span = span_of(expr, place)?;
    let indent = super::text::indent_at(&doc.text, span.start).to_owned();
    doc.splice(span, &render::value(value, &indent));
    Ok(true)
}

fn entry_text(step: &EntryStep) -> String {
    match step {
        EntryStep::Key(k) => format!("[{}]", render::quoted(k)),
        EntryStep::Index(i) => format!("[{i}]"),
    }
}

fn path_text(path: &[EntryStep]) -> String {
    path.iter().map(entry_text).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(
        tool: &str,
        input: serde_json::Value,
        file: &str,
        text: &str,
    ) -> Result<String, EditError> {
        let files = Files::from([(file.to_owned(), text.to_owned())]);
        let result = run_tool(tool, &input.to_string(), &files)?;
        Ok(result
            .files
            .get(file)
            .cloned()
            .unwrap_or_else(|| text.to_owned()))
    }

    fn bucket() -> serde_json::Value {
        json!({"block_type": "resource", "labels": ["aws_s3_bucket", "b"]})
    }

    #[test]
    fn merge_without_a_trailing_literal_map_gets_one() {
        let text =
            "resource \"aws_s3_bucket\" \"b\" {\n  bucket = \"b\"\n  tags   = merge(var.tags)\n}\n";
        let out = run(
            "set_tags",
            json!({"target": bucket(), "tags": {"Owner": "ops"}}),
            "main.tf",
            text,
        );
        assert_eq!(
            out.ok().as_deref(),
            Some(
                "resource \"aws_s3_bucket\" \"b\" {\n  bucket = \"b\"\n  tags = merge(var.tags, {\n    Owner = \"ops\"\n  })\n}\n"
            )
        );
    }

    #[test]
    fn merge_filters_out_a_key_another_argument_supplies() {
        let text =
            "resource \"aws_s3_bucket\" \"b\" {\n  tags = merge(local.tags, { Name = \"b\" })\n}\n";
        let input = json!({"target": bucket(), "remove": ["Team"]});
        assert_eq!(
            run("set_tags", input, "main.tf", text).ok().as_deref(),
            Some(
                "resource \"aws_s3_bucket\" \"b\" {\n  tags = { for k, v in merge(local.tags, { Name = \"b\" }) : k => v if k != \"Team\" }\n}\n"
            )
        );
        let input = json!({"target": bucket(), "remove": ["Name"]});
        assert_eq!(
            run("set_tags", input, "main.tf", text).ok().as_deref(),
            Some("resource \"aws_s3_bucket\" \"b\" {\n  tags = merge(local.tags, {})\n}\n")
        );
    }

    #[test]
    fn collection_entries_in_tfvars_and_for_each() {
        let tfvars = "queues = {\n  a = { timeout = 30 }\n  b = {\n    timeout = 60\n  }\n}\n";
        let input = json!({"file": "x.tfvars", "in": {"kind": "tfvar", "name": "queues"}, "path": ["a", "timeout"], "value": 45});
        assert_eq!(
            run("set_collection_entry", input, "x.tfvars", tfvars)
                .ok()
                .as_deref(),
            Some("queues = {\n  a = { timeout = 45 }\n  b = {\n    timeout = 60\n  }\n}\n")
        );
        // A key the entry lacks is added to it.
        let input = json!({"file": "x.tfvars", "in": {"kind": "tfvar", "name": "queues"}, "path": ["b", "delay"], "value": 5});
        assert_eq!(
            run("set_collection_entry", input, "x.tfvars", tfvars)
                .ok()
                .as_deref(),
            Some(
                "queues = {\n  a = { timeout = 30 }\n  b = {\n    timeout = 60\n    delay   = 5\n  }\n}\n"
            )
        );
        let main = "resource \"aws_sqs_queue\" \"q\" {\n  for_each = {\n    a = 30\n  }\n  visibility_timeout_seconds = each.value\n}\n";
        let target = json!({"block_type": "resource", "labels": ["aws_sqs_queue", "q"]});
        let input = json!({"file": "main.tf", "in": {"kind": "for_each", "target": target}, "path": ["a"], "value": 90});
        assert_eq!(
            run("set_collection_entry", input, "main.tf", main)
                .ok()
                .as_deref(),
            Some(main.replace("a = 30", "a = 90").as_str())
        );
        // An entry that is an expression is refused.
        let input = json!({"file": "x.tfvars", "in": {"kind": "tfvar", "name": "other"}, "path": ["a"], "value": 1});
        assert!(run("set_collection_entry", input, "x.tfvars", tfvars).is_err());
    }

    #[test]
    fn for_each_keys_are_filtered_out_and_later_keys_join_the_filter() {
        let block = |for_each: &str| {
            format!(
                "resource \"aws_sqs_queue\" \"q\" {{\n  for_each = {for_each}\n  name     = each.key\n}}\n"
            )
        };
        let drop = |text: &str, key: &str| {
            let target = json!({"block_type": "resource", "labels": ["aws_sqs_queue", "q"]});
            run(
                "filter_for_each",
                json!({"target": target, "keys": [key]}),
                "main.tf",
                text,
            )
            .unwrap_or_else(|e| panic!("{e}"))
        };
        let once = drop(&block("var.queues"), "a");
        assert_eq!(
            once,
            block("{ for k, v in var.queues : k => v if k != \"a\" }")
        );
        assert_eq!(
            drop(&once, "b"),
            block("{ for k, v in var.queues : k => v if !contains([\"a\", \"b\"], k) }")
        );
        assert_eq!(
            drop(&once, "a"),
            once,
            "a key dropped before is not added twice"
        );
        // A set built with toset loses the key with setsubtract, then keeps one list.
        let set = drop(&block("toset(var.names)"), "a");
        assert_eq!(set, block("setsubtract(toset(var.names), [\"a\"])"));
        assert_eq!(
            drop(&set, "b"),
            block("setsubtract(toset(var.names), [\"a\", \"b\"])")
        );
        // The block's own for expression gets the test in its condition.
        let own = block("{ for q in var.list : q.name => q if q.enabled }");
        assert_eq!(
            drop(&own, "a"),
            block("{ for q in var.list : q.name => q if q.enabled && q.name != \"a\" }")
        );
        let bare = block("{ for q in var.list : q.name => q }");
        assert_eq!(
            drop(&bare, "a"),
            block("{ for q in var.list : q.name => q if q.name != \"a\" }")
        );
        let target = json!({"block_type": "resource", "labels": ["aws_sqs_queue", "q"]});
        let without = "resource \"aws_sqs_queue\" \"q\" {\n  name = \"x\"\n}\n";
        assert!(
            run(
                "filter_for_each",
                json!({"target": target, "keys": ["a"]}),
                "main.tf",
                without
            )
            .is_err()
        );
    }

    #[test]
    fn a_new_module_input_carries_one_instances_value() {
        let main = "module \"fn\" {\n  source   = \"./modules/fn\"\n  for_each = var.functions\n\n  name = each.key\n  tags = local.tags\n}\n";
        let module = "variable \"tags\" {}\n\nresource \"aws_iam_role\" \"this\" {\n  name = \"x\"\n  tags = var.tags\n}\n\nresource \"aws_lambda_function\" \"this\" {\n  memory_size = 128\n}\n";
        let files = Files::from([
            ("main.tf".to_owned(), main.to_owned()),
            ("modules/fn/main.tf".to_owned(), module.to_owned()),
        ]);
        let call = json!({"file": "main.tf", "block_type": "module", "labels": ["fn"]});
        let thread = |files: &Files,
                      labels: [&str; 2],
                      attribute: &str,
                      input: &str,
                      ty: &str,
                      merge: bool,
                      key: &str,
                      value: serde_json::Value| {
            let resource =
                json!({"file": "modules/fn/main.tf", "block_type": "resource", "labels": labels});
            let input = json!({"call": call, "resource": resource, "attribute": attribute, "input": input, "type": ty, "merge": merge, "instance": key, "value": value});
            let result = run_tool("thread_module_input", &input.to_string(), files)
                .unwrap_or_else(|e| panic!("{e}"));
            let mut next = files.clone();
            next.extend(result.files);
            next
        };
        let once = thread(
            &files,
            ["aws_iam_role", "this"],
            "tags",
            "iam_role_tags",
            "map(string)",
            true,
            "a",
            json!({"Owner": "x"}),
        );
        let twice = thread(
            &once,
            ["aws_iam_role", "this"],
            "tags",
            "iam_role_tags",
            "map(string)",
            true,
            "b",
            json!({"Owner": "y"}),
        );
        let sized = thread(
            &twice,
            ["aws_lambda_function", "this"],
            "memory_size",
            "lambda_function_memory_size",
            "number",
            false,
            "b",
            json!(512),
        );
        // A new one-line-started argument joins the arguments before the first multi-line one.
        assert_eq!(
            sized["main.tf"],
            "module \"fn\" {\n  source   = \"./modules/fn\"\n  for_each = var.functions\n\n  name = each.key\n  tags = local.tags\n  lambda_function_memory_size = lookup({\n    b = 512\n  }, each.key, null)\n  iam_role_tags = lookup({\n    a = {\n      Owner = \"x\"\n    }\n    b = {\n      Owner = \"y\"\n    }\n  }, each.key, {})\n}\n"
        );
        let module = &sized["modules/fn/main.tf"];
        assert!(
            module.contains("  tags = merge(var.tags, var.iam_role_tags)\n"),
            "{module}"
        );
        assert!(
            module.contains("  memory_size = var.lambda_function_memory_size == null ? 128 : var.lambda_function_memory_size\n"),
            "{module}"
        );
        // Each variable is declared once, with a neutral default.
        assert_eq!(
            module.matches("variable \"iam_role_tags\" {").count(),
            1,
            "{module}"
        );
        assert!(
            module.contains("  type        = map(string)\n  default     = {}\n}"),
            "{module}"
        );
        assert!(
            module.contains("  type        = number\n  default     = null\n}"),
            "{module}"
        );
        // Threading the same value again changes nothing.
        let again = thread(
            &sized,
            ["aws_lambda_function", "this"],
            "memory_size",
            "lambda_function_memory_size",
            "number",
            false,
            "b",
            json!(512),
        );
        assert_eq!(again, sized);
    }

    #[test]
    fn a_resource_is_switched_off_for_one_module_instance() {
        let main = "module \"fn\" {\n  source   = \"./modules/fn\"\n  for_each = var.functions\n\n  name = each.key\n}\n";
        let module = "resource \"aws_iam_role_policy\" \"this\" {\n  name = \"x\"\n}\n";
        let files = Files::from([
            ("main.tf".to_owned(), main.to_owned()),
            ("modules/fn/main.tf".to_owned(), module.to_owned()),
        ]);
        let input = json!({
            "call": {"file": "main.tf", "block_type": "module", "labels": ["fn"]},
            "resource": {"file": "modules/fn/main.tf", "block_type": "resource", "labels": ["aws_iam_role_policy", "this"]},
            "input": "create_iam_role_policy",
            "instance": "a",
        });
        let result = run_tool("switch_off_in_module_instance", &input.to_string(), &files)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            result.files["modules/fn/main.tf"],
            "resource \"aws_iam_role_policy\" \"this\" {\n  count = var.create_iam_role_policy ? 1 : 0\n\n  name = \"x\"\n}\n\nvariable \"create_iam_role_policy\" {\n  description = \"Whether this instance of the module has aws_iam_role_policy.this; set per instance by the caller\"\n  type        = bool\n  default     = true\n}\n\nmoved {\n  from = aws_iam_role_policy.this\n  to   = aws_iam_role_policy.this[0]\n}\n"
        );
        assert_eq!(
            result.files["main.tf"],
            "module \"fn\" {\n  source   = \"./modules/fn\"\n  for_each = var.functions\n\n  name = each.key\n  create_iam_role_policy = lookup({\n    a = false\n  }, each.key, true)\n}\n"
        );
        // A second instance joins the lookup; the count and the variable stay as they are.
        let mut next = files.clone();
        next.extend(result.files);
        let input = json!({
            "call": {"file": "main.tf", "block_type": "module", "labels": ["fn"]},
            "resource": {"file": "modules/fn/main.tf", "block_type": "resource", "labels": ["aws_iam_role_policy", "this"]},
            "input": "create_iam_role_policy",
            "instance": "b",
        });
        let again = run_tool("switch_off_in_module_instance", &input.to_string(), &next)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(again.files.keys().collect::<Vec<_>>(), vec!["main.tf"]);
        assert!(again.files["main.tf"].contains("    a = false\n    b = false\n"));
    }

    #[test]
    fn collection_entries_are_removed_from_maps_and_sets() {
        let remove = |file: &str, text: &str, container: serde_json::Value, key: &str| {
            let input = json!({"file": file, "in": container, "path": [key]});
            run("remove_collection_entry", input, file, text)
        };
        let tfvars = "queues = {\n  a = { timeout = 30 }\n  b = {\n    timeout = 60\n  }\n}\n";
        let queues = json!({"kind": "tfvar", "name": "queues"});
        assert_eq!(
            remove("x.tfvars", tfvars, queues.clone(), "b")
                .ok()
                .as_deref(),
            Some("queues = {\n  a = { timeout = 30 }\n}\n")
        );
        assert_eq!(
            remove("x.tfvars", tfvars, queues.clone(), "a")
                .ok()
                .as_deref(),
            Some("queues = {\n  b = {\n    timeout = 60\n  }\n}\n")
        );
        // A missing key is refused rather than ignored.
        assert!(remove("x.tfvars", tfvars, queues, "c").is_err());

        let main = "resource \"aws_sns_topic\" \"t\" {\n  for_each = toset([\"x\", \"y\", \"z\"])\n  name     = each.key\n}\n";
        let topics = json!({"kind": "for_each", "target": {"block_type": "resource", "labels": ["aws_sns_topic", "t"]}});
        assert_eq!(
            remove("main.tf", main, topics.clone(), "y").ok().as_deref(),
            Some(main.replace("\"x\", \"y\", \"z\"", "\"x\", \"z\"").as_str())
        );
        assert_eq!(
            remove("main.tf", main, topics, "z").ok().as_deref(),
            Some(main.replace("\"x\", \"y\", \"z\"", "\"x\", \"y\"").as_str())
        );

        let list = "names = [\n  \"x\",\n  \"y\",\n]\n";
        let names = json!({"kind": "tfvar", "name": "names"});
        assert_eq!(
            remove("x.tfvars", list, names, "x").ok().as_deref(),
            Some("names = [\n  \"y\",\n]\n")
        );
    }

    #[test]
    fn update_block_drops_stale_attributes_and_keeps_unset_ones() {
        let text = "resource \"aws_security_group\" \"g\" {\n  ingress {\n    from_port       = 80\n    to_port         = 80\n    protocol        = \"tcp\"\n    security_groups = [\"sg-1\"]\n    self            = false\n  }\n}\n";
        let input = json!({
            "target": {"block_type": "resource", "labels": ["aws_security_group", "g"]},
            "block": "ingress",
            "match": {"from_port": 80},
            "attributes": {"from_port": 80, "to_port": 80, "protocol": "tcp", "cidr_blocks": ["10.0.0.0/8"]}
        });
        assert_eq!(
            run("update_block", input, "main.tf", text).ok().as_deref(),
            Some(
                "resource \"aws_security_group\" \"g\" {\n  ingress {\n    from_port   = 80\n    to_port     = 80\n    protocol    = \"tcp\"\n    self        = false\n    cidr_blocks = [\"10.0.0.0/8\"]\n  }\n}\n"
            )
        );
    }

    #[test]
    fn new_arguments_join_the_leading_run_except_in_variables() {
        let main = "resource \"aws_sqs_queue\" \"q\" {\n  for_each = var.q\n\n  name = \"q\"\n\n  policy = jsonencode({\n    a = 1\n  })\n}\n";
        let target = json!({"block_type": "resource", "labels": ["aws_sqs_queue", "q"]});
        let input = json!({"target": target, "name": "delay_seconds", "value": 5});
        assert_eq!(
            run("set_attribute", input, "main.tf", main).ok().as_deref(),
            Some(
                "resource \"aws_sqs_queue\" \"q\" {\n  for_each = var.q\n\n  name          = \"q\"\n  delay_seconds = 5\n\n  policy = jsonencode({\n    a = 1\n  })\n}\n"
            )
        );
        let vars = "variable \"q\" {\n  description = \"Queues.\"\n  type = map(object({\n    t = number\n  }))\n}\n";
        let input = json!({"name": "q", "value": {}});
        assert_eq!(
            run("set_variable_default", input, "variables.tf", vars)
                .ok()
                .as_deref(),
            Some(
                "variable \"q\" {\n  description = \"Queues.\"\n  type = map(object({\n    t = number\n  }))\n  default = {}\n}\n"
            )
        );
    }

    #[test]
    fn every_tool_has_a_unique_name_and_an_object_schema() {
        let specs = tools();
        let mut names: Vec<&str> = specs.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), specs.len());
        assert!(specs.iter().all(|s| s.input_schema["type"] == "object"));
    }
}
