//! How an instance's block is shared: by the instances of its own `count`/`for_each`, by
//! several instances of its module, and the edit tool's target of the block.

use crate::synthesize::edit::Target;
use crate::synthesize::tags::block_target;
use crate::terraform::config::{Project, ResourceInstance};

/// How many instances the resource block has, when more than one: its own `count` or
/// `for_each` instances, in every instance of its module (a module called with `count` or
/// `for_each`, or by several calls, shares one block among all of them).
pub(in crate::synthesize) fn shared_by_instances(
    project: &Project,
    instance: &ResourceInstance,
) -> Option<usize> {
    let n = project
        .instances()
        .filter(|i| same_block(i, instance))
        .count();
    (n > 1).then_some(n)
}

/// Whether the instance's module is one of several instances of a module call.
pub(super) fn in_several_module_instances(instance: &ResourceInstance) -> bool {
    instance.module.as_deref().is_some_and(|m| m.contains('['))
}

/// The edit tool's target of an instance's resource block.
pub fn resource_block(instance: &ResourceInstance) -> Target {
    block_target(
        &instance.file,
        "resource",
        &[&instance.resource_type, &instance.name],
    )
}

/// Whether every instance of the instance's block is in its own module instance: the block's
/// `count`/`for_each` key names it alone (no module used several times repeats the block).
pub(in crate::synthesize) fn in_one_module(project: &Project, instance: &ResourceInstance) -> bool {
    project
        .instances()
        .filter(|i| same_block(i, instance))
        .all(|i| i.module == instance.module)
}

/// Whether two instances come from the same block of configuration.
pub(in crate::synthesize) fn same_block(a: &ResourceInstance, b: &ResourceInstance) -> bool {
    a.file == b.file && a.resource_type == b.resource_type && a.name == b.name && a.mode == b.mode
}
