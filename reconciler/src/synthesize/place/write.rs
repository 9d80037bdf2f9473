//! How a value is written at its place: the edit-tool call for a [`Place`], and the calls the
//! planner builds the same way.

use super::model::{NewInput, Place};
use crate::synthesize::edit::{
    EntryStep, Instance, SetAttribute, SetCollectionEntry, SetModuleArgument, SetTfvar,
    SetVariableDefault, Target, ThreadModuleInput, ToolCall, Value as EditValue,
};
use crate::synthesize::tags::{block_target, key_json};
use crate::terraform::state::PathStep;
use serde_json::Value;

/// What the planner writes at a place: the attribute of the resource block (its `target`,
/// with the nested blocks on its path), its name and value, the value with managed ids written
/// as references (for writing inside the resource's own module), and its type.
pub struct Written<'a> {
    /// The resource block, down to the block holding the attribute.
    pub target: Target,
    /// The attribute.
    pub name: &'a str,
    /// Its new value.
    pub value: &'a Value,
    /// The value with managed ids as references.
    pub referred: &'a Value,
    /// Its Terraform type, as HCL (`map(string)`), for a new module input.
    pub ty: &'a str,
}

/// The edit at a place: the tool call, why, whether it is at the value's source, and what the
/// reviewer should know.
pub struct Edit {
    /// The call.
    pub call: ToolCall,
    /// Why this place.
    pub why: String,
    /// Whether the edit is at the value's source rather than an override at the use site.
    pub at_source: bool,
    /// A caution for the reviewer.
    pub warning: Option<String>,
}

impl Place {
    /// The edit that writes the value here, or why none does.
    pub fn edit(self, written: Written<'_>) -> Result<Edit, String> {
        let Written {
            target,
            name,
            value,
            referred,
            ty,
        } = written;
        let at = |call: ToolCall, why: String| Edit {
            call,
            why,
            at_source: true,
            warning: None,
        };
        let value_of = || EditValue::from_json(value);
        Ok(match self {
            Place::UseSite { why } => at(set_attribute(target, name, referred, None), why),
            Place::Override { why, warning } => Edit {
                call: set_attribute(target, name, referred, None),
                why,
                at_source: false,
                warning: Some(warning),
            },
            Place::VariableDefault { file, name, why } => at(
                ToolCall::SetVariableDefault(SetVariableDefault {
                    file: Some(file),
                    name,
                    value: value_of(),
                }),
                why,
            ),
            Place::Tfvar { file, name, why } => at(
                ToolCall::SetTfvar(SetTfvar {
                    file,
                    name,
                    value: value_of(),
                }),
                why,
            ),
            Place::ModuleArgument {
                file,
                module,
                argument,
                why,
            } => at(
                ToolCall::SetModuleArgument(SetModuleArgument {
                    file: Some(file),
                    module,
                    name: argument,
                    value: value_of(),
                }),
                why,
            ),
            Place::CollectionEntry {
                file,
                container,
                path,
                why,
            } => at(
                ToolCall::SetCollectionEntry(SetCollectionEntry {
                    file,
                    container,
                    path: entry_path(&path),
                    value: value_of(),
                }),
                why,
            ),
            Place::PerInstance {
                call,
                key,
                why,
                warning,
            } => {
                let instance = Some(key_json(&key));
                let call = match call {
                    Some(c) => {
                        let module = block_target(&c.file, "module", &[&c.module]);
                        set_attribute(module, &c.argument, value, instance)
                    }
                    None => set_attribute(target, name, referred, instance),
                };
                Edit {
                    call,
                    why,
                    at_source: warning.is_none(),
                    warning,
                }
            }
            Place::NewModuleInput { input, why } => at(
                ToolCall::ThreadModuleInput(thread_input(&input, name, ty, false, value)),
                why,
            ),
            Place::Refuse { reason } => return Err(reason),
        })
    }
}

/// A `set_attribute` call.
pub fn set_attribute(
    target: Target,
    name: &str,
    value: &Value,
    instance: Option<Instance>,
) -> ToolCall {
    ToolCall::SetAttribute(SetAttribute {
        target,
        name: name.to_owned(),
        value: EditValue::from_json(value),
        instance,
    })
}

/// The `thread_module_input` call that gives this instance of the module its own value.
pub fn thread_input(
    input: &NewInput,
    attribute: &str,
    ty: &str,
    merge: bool,
    value: &Value,
) -> ThreadModuleInput {
    ThreadModuleInput {
        call: input.call.clone(),
        resource: input.resource.clone(),
        attribute: attribute.to_owned(),
        input: input.input.clone(),
        ty: ty.to_owned(),
        merge,
        variables_file: input.variables_file.clone(),
        instance: key_json(&input.key),
        value: EditValue::from_json(value),
    }
}

/// A state path as the steps of a collection entry.
pub fn entry_path(path: &[PathStep]) -> Vec<EntryStep> {
    path.iter()
        .map(|step| match step {
            PathStep::Key(k) => EntryStep::Key(k.clone()),
            PathStep::Index(i) => EntryStep::Index(usize::try_from(*i).unwrap_or(usize::MAX)),
        })
        .collect()
}
