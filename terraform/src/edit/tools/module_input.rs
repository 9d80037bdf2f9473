//! A value for one instance of a module called with `count`/`for_each`, for one resource
//! inside it, when no existing input carries it alone: the module gets a new input variable,
//! the resource argument reads it, and the call sets it for that instance only.
//!
//! - The module declares `variable "NAME"` (default `{}` for a map merged over the argument,
//!   `null` otherwise), in its `variables.tf` when it has one.
//! - The resource argument `X` becomes `merge(X, var.NAME)` (a map, such as tags) or
//!   `var.NAME == null ? X : var.NAME`; an argument not set yet becomes `var.NAME`.
//! - The module call gets `NAME = lookup({ key = VALUE }, each.key, {} | null)`, or the entry
//!   in that lookup when an earlier edit wrote it: the other instances keep what they had.

use super::super::locate::top_blocks;
use super::instance::is_call;
use super::*;

/// The input of the `thread_module_input` tool.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadModuleInput {
    /// The `module` block calling the module.
    pub call: Target,
    /// The resource block inside the module (its `file` is the module's file).
    pub resource: Target,
    /// The resource argument.
    pub attribute: String,
    /// The new input variable's name.
    pub input: String,
    /// Its type constraint, as HCL (`map(string)`, `number`).
    #[serde(rename = "type")]
    pub ty: String,
    /// Whether the input is a map merged over the argument (tags), rather than replacing it.
    #[serde(default)]
    pub merge: bool,
    /// The module file to declare the variable in; the resource's file when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables_file: Option<String>,
    /// The module call's instance whose value this is.
    pub instance: Instance,
    /// The value for that instance.
    pub value: Value,
}

impl ThreadModuleInput {
    /// The value the other instances pass: nothing to merge, or null (the argument keeps its
    /// old value, or stays unset).
    fn neutral(&self) -> &'static str {
        if self.merge { "{}" } else { "null" }
    }
}

impl Tool for ThreadModuleInput {
    const NAME: &'static str = "thread_module_input";
    const DESCRIPTION: &'static str = "Give one instance of a module called with for_each/count its own value for an argument of a resource inside the module, when no module input carries that argument alone: declares variable `input` in the module (default {} with merge, else null), makes the argument read it (merge(X, var.input), or var.input == null ? X : var.input, or var.input when unset) and sets it at the call for that instance alone: input = lookup({ key = value }, each.key, {} | null).";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        for name in [&self.attribute, &self.input] {
            check_identifier(Self::NAME, name)?;
        }
        if self.resource.file.is_none() {
            return Err(bad_input(
                Self::NAME,
                "`resource` must name the module file holding the resource",
            ));
        }
        let did = thread(ws, &self)?;
        Ok(changed(
            did,
            format!(
                "`{}` of {} set for {} {} alone through module input `{}`",
                self.attribute,
                self.resource.address(),
                self.instance.iterator(),
                render::quoted(&self.instance.map_key()),
                self.input
            ),
        ))
    }
}

/// Runs the three edits; false when all three were in place already.
fn thread(ws: &mut Workspace, input: &ThreadModuleInput) -> Result<bool, EditError> {
    let declared = declare(ws, input)?;
    let read = read_in_resource(ws, input)?;
    let set = set_at_call(
        ws,
        &input.call,
        &input.input,
        &input.instance,
        &input.value,
        input.neutral(),
    )?;
    Ok(declared || read || set)
}

/// Sets the module call's argument `name` to `value` for `instance` alone (`unset` for the
/// others when the argument is new).
fn set_at_call(
    ws: &mut Workspace,
    call: &Target,
    name: &str,
    instance: &Instance,
    value: &Value,
    unset: &str,
) -> Result<bool, EditError> {
    let mut doc = ws.open_for(call)?;
    let loc = doc.locate(call)?;
    let place = doc.place(call);
    let set = instance::set_attribute(&mut doc, &loc, &place, name, instance, value, unset)?;
    ws.save(doc)?;
    Ok(set)
}

/// Declares `variable "NAME"` in the module unless its file already does.
fn declare(ws: &mut Workspace, input: &ThreadModuleInput) -> Result<bool, EditError> {
    let file = declaring_file(&input.resource, input.variables_file.as_deref());
    let what = if input.merge {
        "merged over its other tags"
    } else {
        "replacing its value in the module"
    };
    let description = format!(
        "{} of {} for one instance of this module, {what}; set per instance by the caller",
        input.attribute,
        input.resource.labels.join(".")
    );
    declare_variable(
        ws,
        file,
        &input.input,
        &description,
        &input.ty,
        input.neutral(),
    )
}

/// The module file a new variable is declared in: `variables_file`, else the resource's file.
fn declaring_file<'a>(resource: &'a Target, variables_file: Option<&'a str>) -> &'a str {
    variables_file.unwrap_or_else(|| resource.file.as_deref().unwrap_or_default())
}

/// Appends `variable "NAME" { description, type, default }` to `file` unless it declares it.
fn declare_variable(
    ws: &mut Workspace,
    file: &str,
    name: &str,
    description: &str,
    ty: &str,
    default: &str,
) -> Result<bool, EditError> {
    let mut doc = ws.open(file)?;
    let body = doc.parse()?;
    if !top_blocks(&body, "variable", &[name.to_owned()]).is_empty() {
        return Ok(false);
    }
    let block = format!(
        "variable {} {{\n  description = {}\n  type        = {ty}\n  default     = {default}\n}}",
        render::quoted(name),
        render::quoted(description),
    );
    ops::append_blocks(&mut doc, &[block]);
    ws.save(doc)?;
    Ok(true)
}

/// Makes the resource argument read `var.NAME`, unless it does already.
fn read_in_resource(ws: &mut Workspace, input: &ThreadModuleInput) -> Result<bool, EditError> {
    let mut doc = ws.open_for(&input.resource)?;
    let loc = doc.locate(&input.resource)?;
    let place = doc.place(&input.resource);
    let reference = format!("var.{}", input.input);
    let Some(attr) = loc.block.body.get_attribute(&input.attribute) else {
        insert(&mut doc, &loc, &input.attribute, &reference);
        ws.save(doc)?;
        return Ok(true);
    };
    let span = span_of(&attr.value, &place)?;
    let old = doc.text[span.clone()].to_owned();
    if old.contains(&reference) {
        return Ok(false);
    }
    match (&attr.value, input.merge) {
        (Expression::FuncCall(call), true) if is_call(call, "merge") => {
            let Some(last) = call.args.iter().last() else {
                return Err(place.impossible("merge() has no arguments".to_owned()));
            };
            let end = span_of(last, &place)?.end;
            doc.splice(end..end, &format!(", {reference}"));
        }
        (_, true) => doc.splice(span, &format!("merge({old}, {reference})")),
        (_, false) => doc.splice(span, &format!("{reference} == null ? {old} : {reference}")),
    }
    ws.save(doc)?;
    Ok(true)
}

fn insert(doc: &mut Doc, loc: &Located, name: &str, reference: &str) {
    ops::insert_attribute(doc, loc, &format!("{} = {reference}", render::key(name)));
}

/// The input of the `switch_off_in_module_instance` tool.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwitchOff {
    /// The `module` block calling the module.
    pub call: Target,
    /// The resource block inside the module (its `file` is the module's file).
    pub resource: Target,
    /// The new boolean input's name.
    pub input: String,
    /// The module file to declare the variable in; the resource's file when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables_file: Option<String>,
    /// The module call's instance that no longer has the resource.
    pub instance: Instance,
}

impl Tool for SwitchOff {
    const NAME: &'static str = "switch_off_in_module_instance";
    const DESCRIPTION: &'static str = "Remove a resource from one instance of a module called with for_each/count, keeping it in the others: declares a bool variable `input` (default true) in the module, adds `count = var.input ? 1 : 0` to the resource with a `moved` block from its old address to [0] (so the other instances keep their objects), and sets input = lookup({ key = false }, each.key, true) at the call.";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        check_identifier(Self::NAME, &self.input)?;
        if self.resource.file.is_none() {
            return Err(bad_input(
                Self::NAME,
                "`resource` must name the module file holding the resource",
            ));
        }
        let did = switch_off(ws, &self)?;
        Ok(changed(
            did,
            format!(
                "{} switched off for {} {} through module input `{}`",
                self.resource.address(),
                self.instance.iterator(),
                render::quoted(&self.instance.map_key()),
                self.input
            ),
        ))
    }
}

/// Removes a resource from one instance of a module called with `count`/`for_each`: a boolean
/// input (default true), `count = var.NAME ? 1 : 0` on the resource with a `moved` block from
/// its old address to `[0]` (so the other instances keep their objects), and `NAME = false`
/// for that instance at the call.
fn switch_off(ws: &mut Workspace, input: &SwitchOff) -> Result<bool, EditError> {
    let file = declaring_file(&input.resource, input.variables_file.as_deref());
    let description = format!(
        "Whether this instance of the module has {}; set per instance by the caller",
        input.resource.labels.join(".")
    );
    let declared = declare_variable(ws, file, &input.input, &description, "bool", "true")?;
    let counted = add_count(ws, input)?;
    let set = set_at_call(
        ws,
        &input.call,
        &input.input,
        &input.instance,
        &Value::Bool(false),
        "true",
    )?;
    Ok(declared || counted || set)
}

/// `count = var.NAME ? 1 : 0` first in the resource block, and the `moved` block after it;
/// refused when the block already has `count` or `for_each`.
fn add_count(ws: &mut Workspace, input: &SwitchOff) -> Result<bool, EditError> {
    let mut doc = ws.open_for(&input.resource)?;
    let loc = doc.locate(&input.resource)?;
    let place = doc.place(&input.resource);
    let condition = format!("var.{} ? 1 : 0", input.input);
    if let Some(count) = loc.block.body.get_attribute("count") {
        let current = &doc.text[span_of(&count.value, &place)?];
        if current == condition {
            return Ok(false);
        }
    }
    if ["count", "for_each"]
        .iter()
        .any(|meta| loc.block.body.get_attribute(meta).is_some())
    {
        return Err(place.impossible("the block already has count or for_each".to_owned()));
    }
    let at = loc.first_line_end(&doc.text);
    let inner = loc.inner_indent();
    doc.splice(at..at, &format!("\n{inner}count = {condition}\n"));
    let address = input.resource.labels.join(".");
    let moved = format!("moved {{\n  from = {address}\n  to   = {address}[0]\n}}");
    ops::append_blocks(&mut doc, &[moved]);
    ws.save(doc)?;
    Ok(true)
}
