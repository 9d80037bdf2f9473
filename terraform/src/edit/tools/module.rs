//! Module-input tools: `set_variable_default`, `set_tfvar` and `set_module_argument`.

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

impl Tool for SetVariableDefault {
    const NAME: &'static str = "set_variable_default";
    const DESCRIPTION: &'static str = "Set the default of `variable \"NAME\"`, adding it after the variable's other attributes when missing.";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        let SetVariableDefault { file, name, value } = self;
        let target = Target {
            file,
            block_type: "variable".to_owned(),
            labels: vec![name],
            path: Vec::new(),
        };
        set_in_block(ws, &target, "default", &value)
    }
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

impl Tool for SetTfvar {
    const NAME: &'static str = "set_tfvar";
    const DESCRIPTION: &'static str =
        "Set `NAME = value` in a .tfvars file, appending it when missing.";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        let SetTfvar { file, name, value } = self;
        check_identifier(Self::NAME, &name)?;
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

impl Tool for SetModuleArgument {
    const NAME: &'static str = "set_module_argument";
    const DESCRIPTION: &'static str =
        "Set an argument of `module \"NAME\"` to a JSON value, adding it when missing.";

    fn apply(self, ws: &mut Workspace) -> Result<String, EditError> {
        let SetModuleArgument {
            file,
            module,
            name,
            value,
        } = self;
        check_identifier(Self::NAME, &name)?;
        let target = Target {
            file,
            block_type: "module".to_owned(),
            labels: vec![module],
            path: Vec::new(),
        };
        set_in_block(ws, &target, &name, &value)
    }
}
