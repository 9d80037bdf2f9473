//! The tool registry: names, descriptions, input schemas, typed inputs and dispatch.

use super::locate::{Located, Place, Step, Target, header, matches_all, span_of, step_text};
use super::ops::{self, Doc, Workspace};
use super::render::{self, BlockText};
use super::value::{Ordered, Value};
use super::{EditError, Files};
use hcl::edit::expr::Expression;
use hcl::edit::structure::Block;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use std::collections::BTreeMap;

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

const TOOLS: [Tool; 12] = [
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
}

fn set_attribute_spec() -> ToolSpec {
    ToolSpec {
        name: "set_attribute",
        description: "Set an attribute of a block (or of a nested block on `path`) to a JSON value, rendered as HCL; adds it when missing.",
        input_schema: object_schema(
            json!({"target": target_schema(), "name": {"type": "string"}, "value": {"description": "Any JSON value; a string written `${aws_vpc.main.id}` becomes that reference."}}),
            &["target", "name", "value"],
        ),
    }
}

fn set_attribute(json: &str, ws: &mut Workspace) -> Result<String, EditError> {
    let SetAttribute {
        target,
        name,
        value,
    } = input("set_attribute", json)?;
    check_identifier("set_attribute", &name)?;
    set_in_block(ws, &target, &name, &value)
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
    EditError::Impossible {
        file: place.file.clone(),
        address: place.address.clone(),
        path: place.path.clone(),
        message,
    }
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
    let mut schema = step_schema();
    schema["properties"]["target"] = target_schema();
    schema["required"] = json!(["target", "block"]);
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
    let mut schema = step_schema();
    schema["properties"]["target"] = target_schema();
    schema["properties"]["with"] = new_block_schema();
    schema["required"] = json!(["target", "block", "with"]);
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

// ---------------------------------------------------------------------------------------------
// set_tags

#[derive(Deserialize, Default, PartialEq)]
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
}

fn tags_name() -> String {
    "tags".to_owned()
}

fn set_tags_spec() -> ToolSpec {
    ToolSpec {
        name: "set_tags",
        description: "Merge (default) or replace a literal tags map: existing keys keep their order and comments, new keys are appended, `remove` keys are dropped. Refuses when the tags are an expression such as merge(...).",
        input_schema: object_schema(
            json!({
                "target": target_schema(),
                "attribute": {"type": "string", "description": "Defaults to tags; e.g. tags_all or default_tags' tags."},
                "tags": {"type": "object", "additionalProperties": {"type": "string"}},
                "mode": {"enum": ["merge", "replace"]},
                "remove": {"type": "array", "items": {"type": "string"}}
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
    let Some(attr) = loc.block.body.get_attribute(&attribute) else {
        let value = Value::Object(tags.0);
        let did = ops::set_attribute(&mut doc, &loc, &place, &attribute, &value)?;
        ws.save(doc)?;
        return Ok(changed(did, what));
    };
    let Expression::Object(object) = &attr.value else {
        return Err(not_literal(&place, &attribute, "object"));
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
    ws.save(doc)?;
    let kept = if keep_in_state {
        " (kept in state by a removed block)"
    } else {
        ""
    };
    Ok(format!("removed {address}{kept}"))
}

// ---------------------------------------------------------------------------------------------
// ignore_changes

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

#[cfg(test)]
mod tests {
    use super::*;

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
