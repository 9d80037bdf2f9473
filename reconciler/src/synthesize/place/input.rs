//! A new input of a module called with `count`/`for_each`, giving one instance of the call
//! its own value of a resource argument.

use super::instances::resource_block;
use super::model::NewInput;
use crate::synthesize::tags::{block_target, split_last_key};
use crate::terraform::config::{Project, ResourceInstance};

/// The new module input that gives `instance` its own `attribute`, when its block is in a
/// module called once with `count`/`for_each` and has no index of its own.
pub fn new_input(
    project: &Project,
    instance: &ResourceInstance,
    attribute: &str,
) -> Result<NewInput, String> {
    let module = instance.module.as_deref().unwrap_or_default();
    let (_, key) = split_last_key(module);
    let call = project.call_of(module);
    let (Some(key), Some(call), None) = (key, call, &instance.index) else {
        return Err(format!(
            "{} is not the only instance of its block in one instance of a module call",
            instance.address
        ));
    };
    if !call.repeated || call.parent.as_deref().is_some_and(|p| p.contains('[')) {
        return Err(format!(
            "{}: the call of {module} is itself in a module with several instances",
            instance.address
        ));
    }
    let stem = instance
        .resource_type
        .split_once('_')
        .map_or(instance.resource_type.as_str(), |(_, rest)| rest);
    let others = project.instances().any(|i| {
        i.module == instance.module
            && i.resource_type == instance.resource_type
            && i.name != instance.name
    });
    let input = match others {
        true => format!("{stem}_{}_{attribute}", instance.name),
        false => format!("{stem}_{attribute}"),
    };
    let dir = instance.file.rsplit_once('/').map_or("", |(d, _)| d);
    let variables = if dir.is_empty() {
        "variables.tf".to_owned()
    } else {
        format!("{dir}/variables.tf")
    };
    Ok(NewInput {
        call: block_target(&call.file, "module", &[&call.name]),
        resource: resource_block(instance),
        variables_file: project
            .files()
            .contains_key(&variables)
            .then_some(variables),
        input,
        key,
    })
}
