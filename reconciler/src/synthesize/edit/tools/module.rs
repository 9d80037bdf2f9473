//! Module-input tools: `set_variable_default`, `set_tfvar`, `set_module_argument`,
//! `thread_module_input` and `switch_off_in_module_instance`.

use super::*;

/// The input of `set_variable_default`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetVariableDefault {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The file declaring the variable; every `.tf` file is searched when absent.
    pub file: Option<String>,
    /// The variable.
    pub name: String,
    /// The new default.
    pub value: Value,
}

pub(super) fn set_variable_default(
    input: SetVariableDefault,
    ws: &mut Workspace,
) -> Result<String, EditError> {
    let SetVariableDefault { file, name, value } = input;
    let target = Target {
        file,
        block_type: "variable".to_owned(),
        labels: vec![name],
        path: Vec::new(),
    };
    set_in_block(ws, &target, "default", &value)
}

/// The input of `set_tfvar`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetTfvar {
    /// The `.tfvars` file.
    pub file: String,
    /// The variable.
    pub name: String,
    /// Its new value.
    pub value: Value,
}

pub(super) fn set_tfvar(input: SetTfvar, ws: &mut Workspace) -> Result<String, EditError> {
    let SetTfvar { file, name, value } = input;
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

/// The input of `set_module_argument`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetModuleArgument {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The file holding the module call; every `.tf` file is searched when absent.
    pub file: Option<String>,
    /// The module call's name.
    pub module: String,
    /// The argument.
    pub name: String,
    /// Its new value.
    pub value: Value,
}

pub(super) fn set_module_argument(
    input: SetModuleArgument,
    ws: &mut Workspace,
) -> Result<String, EditError> {
    let SetModuleArgument {
        file,
        module,
        name,
        value,
    } = input;
    check_identifier("set_module_argument", &name)?;
    let target = Target {
        file,
        block_type: "module".to_owned(),
        labels: vec![module],
        path: Vec::new(),
    };
    set_in_block(ws, &target, &name, &value)
}

pub(super) fn thread_module_input(
    input: module_input::ThreadModuleInput,
    ws: &mut Workspace,
) -> Result<String, EditError> {
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

pub(super) fn switch_off_in_module_instance(
    input: module_input::SwitchOff,
    ws: &mut Workspace,
) -> Result<String, EditError> {
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
