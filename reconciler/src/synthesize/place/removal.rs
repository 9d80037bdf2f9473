//! How an instance deleted outside Terraform leaves the code: its block, its key in the
//! collection only its block iterates, a lowered count, a switch or filter, or a refusal.

use super::input::new_input;
use super::instances::{in_several_module_instances, resource_block, same_block};
use super::model::{NewInput, VarHome};
use crate::synthesize::edit::{Container, Target};
use crate::synthesize::tags::{block_target, split_last_key};
use crate::terraform::config::{Project, Provenance, ResourceInstance, VariableSource};
use crate::terraform::state::{IndexKey, Mode, PathStep};

/// How an instance deleted outside Terraform is removed from the code.
#[derive(Debug, Clone, PartialEq)]
pub enum Removal {
    /// Its resource block goes: the block has this instance alone.
    Block,
    /// Its key goes from the literal collection the block's `for_each` iterates.
    Entry {
        /// The file holding the collection.
        file: String,
        /// Which collection, as for
        /// [`Place::CollectionEntry`](super::Place::CollectionEntry).
        container: Container,
        /// The key (or set element) to remove.
        path: Vec<PathStep>,
        /// The module instance whose key this is, when the whole module instance goes.
        module: Option<String>,
        /// Why.
        why: String,
    },
    /// A new boolean module input switches the block off for this module instance alone.
    SwitchOff {
        /// The input (`create_<type>`).
        input: NewInput,
        /// Why.
        why: String,
    },
    /// Its key is filtered out of the block's `for_each`, whose collection cannot lose the key
    /// alone (other blocks iterate it, or it is computed).
    Filter {
        /// The key to drop.
        key: String,
        /// Why.
        why: String,
    },
    /// It is the last instance of a `count` written as a number, which is lowered.
    LowerCount {
        /// The new count.
        count: i64,
        /// Why.
        why: String,
    },
    /// No edit removes this instance alone.
    Refuse {
        /// Why not.
        reason: String,
    },
}

/// How to remove `instance` from the code without removing any other instance: its block, its
/// key in the collection only its block iterates, or else a filter on its block's `for_each`.
///
/// An instance that is all there is of a `for_each` module instance (or whose module instance's
/// other resources are `deleted` too) is removed by dropping the module instance's key.
pub fn removal_of(
    project: &Project,
    instance: &ResourceInstance,
    deleted: &dyn Fn(&str) -> bool,
) -> Removal {
    if let Some(removal) = module_key_removal(project, instance, deleted) {
        return removal;
    }
    if let Removal::Refuse { reason } = direct_removal(project, instance)
        && in_several_module_instances(instance)
        && !referenced_in_module(project, instance)
        && let Ok(mut input) = new_input(project, instance, "")
    {
        input.input = format!("create_{}", input.input.trim_end_matches('_'));
        return Removal::SwitchOff {
            why: format!(
                "{reason}; a new module input `{}` switches it off for this instance alone",
                input.input
            ),
            input,
        };
    }
    match (direct_removal(project, instance), &instance.index) {
        (Removal::Refuse { reason }, Some(IndexKey::Str(key)))
            if !project
                .instances()
                .any(|i| same_block(i, instance) && i.module != instance.module) =>
        {
            Removal::Filter {
                key: key.clone(),
                why: format!("{reason}; so the key is filtered out of the block's for_each"),
            }
        }
        (removal, _) => removal,
    }
}

/// Whether another block of the instance's module refers to the resource, which `count` would
/// turn into a list.
fn referenced_in_module(project: &Project, instance: &ResourceInstance) -> bool {
    let dir = instance.file.rsplit_once('/').map_or("", |(d, _)| d);
    let reference = format!("{}.{}", instance.resource_type, instance.name);
    project
        .files()
        .iter()
        .filter(|(path, _)| {
            path.rsplit_once('/').map_or("", |(d, _)| d) == dir && path.ends_with(".tf")
        })
        .any(|(_, text)| {
            text.match_indices(&reference).any(|(at, _)| {
                let after = &text[at + reference.len()..];
                let before = text[..at].chars().next_back();
                !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '"')
                    && after.starts_with(['.', '[', ' ', ',', ')', ']', '\n'])
            })
        })
}

/// The removal that edits the block or its collection directly.
fn direct_removal(project: &Project, instance: &ResourceInstance) -> Removal {
    let refuse = |reason: String| Removal::Refuse { reason };
    let others = project
        .instances()
        .filter(|i| same_block(i, instance) && i.module != instance.module);
    if let Some(other) = others.map(|i| i.module.clone().unwrap_or_default()).next() {
        return refuse(format!(
            "{} is declared in a module that {other} instantiates too; removing its block would remove it there as well",
            instance.address
        ));
    }
    let key = match &instance.index {
        None => return Removal::Block,
        Some(IndexKey::Int(n)) => return count_removal(project, instance, *n),
        Some(IndexKey::Str(key)) => key,
    };
    let steps = [
        PathStep::Key("for_each".to_owned()),
        PathStep::Key(key.clone()),
    ];
    let Some(provenance) = project.provenance(&instance.address, &steps) else {
        return refuse(format!("{} is not in the configuration", instance.address));
    };
    let iterated = Iterated {
        target: resource_block(instance),
        module: instance.module.clone(),
        block: format!("{}.{}", instance.resource_type, instance.name),
        several: in_several_module_instances(instance),
        address: instance.address.clone(),
    };
    key_removal(project, provenance, key, &iterated)
}

/// How instance `n` of a `count` resource leaves the code alone. Terraform names `count`
/// instances by position, so only the last one can go, by lowering a count written as a
/// number; a count that reads variables or locals is left to a person, with the other blocks
/// those drive (lowering `length(var.azs)` also removes the last subnet).
fn count_removal(project: &Project, instance: &ResourceInstance, n: i64) -> Removal {
    let address = &instance.address;
    let later: Vec<&str> = project
        .instances()
        .filter(|i| same_block(i, instance) && i.module == instance.module)
        .filter(|i| matches!(i.index, Some(IndexKey::Int(m)) if m > n))
        .map(|i| i.address.as_str())
        .collect();
    if !later.is_empty() {
        return Removal::Refuse {
            reason: format!(
                "{address} is instance {n} of a resource with count; removing it alone would renumber {} after it, which Terraform would then replace",
                later.join(", ")
            ),
        };
    }
    let steps = [PathStep::Key("count".to_owned())];
    if let Some(Provenance::Literal { .. }) = project.provenance(address, &steps) {
        return Removal::LowerCount {
            count: n,
            why: format!("{address} is the last instance of its count, which is lowered to {n}"),
        };
    }
    let drivers = count_drivers(project, instance);
    let reason = match drivers.iter().find(|(_, others)| !others.is_empty()) {
        Some((name, others)) => format!(
            "{address} is the last instance of a count that comes from {name}, which also drives {}; lowering it would remove their last instances as well",
            others.join(", ")
        ),
        None => match drivers.first() {
            Some((name, _)) => format!(
                "{address} is the last instance of a count that comes from {name}; what {name} should hold is for a person to decide"
            ),
            None => {
                format!("{address} is the last instance of a count that is not written as a number")
            }
        },
    };
    Removal::Refuse { reason }
}

/// The variables and locals (`var.azs`) the `count` of the instance's block reads, each with
/// the other blocks of its module whose `count` or `for_each` reads it too.
fn count_drivers(project: &Project, instance: &ResourceInstance) -> Vec<(String, Vec<String>)> {
    let module = instance.module.as_deref();
    let block = format!("{}.{}", instance.resource_type, instance.name);
    let variables = project
        .variables()
        .into_iter()
        .map(|v| ("var", v.module, v.name));
    let locals = project
        .locals()
        .into_iter()
        .map(|l| ("local", l.module, l.name));
    variables
        .chain(locals)
        .filter(|(_, m, _)| m.as_deref() == module)
        .filter_map(|(root, _, name)| {
            let blocks = project.blocks_iterating(module, root, &name);
            blocks.contains(&block).then(|| {
                let others = blocks.into_iter().filter(|b| *b != block).collect();
                (format!("{root}.{name}"), others)
            })
        })
        .collect()
}

/// The block whose `for_each` makes an instance: a resource block or a module call.
struct Iterated {
    /// The block, as the edit tools name it (its `for_each` is a container).
    target: Target,
    /// The module instance the block is written in, `None` for the root.
    module: Option<String>,
    /// `aws_x.y` or `module.z`, as [`Project::blocks_iterating`] names it.
    block: String,
    /// Whether the module it is written in has several instances.
    several: bool,
    /// The address of the instance removed, for messages.
    address: String,
}

/// The removal of key `key` from the collection the block's `for_each` comes from
/// (`provenance`): the entry of a literal `for_each`, of a variable's default or tfvars
/// assignment (followed through module inputs to the root), or of a literal local, when only
/// this block iterates it.
fn key_removal(project: &Project, provenance: Provenance, key: &str, it: &Iterated) -> Removal {
    let refuse = |reason: String| Removal::Refuse { reason };
    let address = &it.address;
    let block = &it.block;
    let entry = |file: &str, container: Container, what: String| Removal::Entry {
        file: file.to_owned(),
        container,
        path: vec![PathStep::Key(key.to_owned())],
        module: None,
        why: format!("\"{key}\" is removed from {what}, which only {block} iterates"),
    };
    let alone = |module: Option<&str>, root: &str, name: &str| -> Result<(), String> {
        let blocks = project.blocks_iterating(module, root, name);
        let others: Vec<&String> = blocks.iter().filter(|b| *b != block).collect();
        match others.as_slice() {
            [] => Ok(()),
            _ => Err(format!(
                "{address}: {root}.{name} also drives {}; removing key \"{key}\" from it would delete their instances as well",
                others
                    .iter()
                    .map(|b| b.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    };
    match provenance {
        Provenance::Literal { file, .. } if !it.several => entry(
            &file,
            Container::ForEach {
                target: it.target.clone(),
            },
            format!("the for_each of {block}"),
        ),
        Provenance::Variable {
            module,
            name,
            source,
            ..
        } => {
            let (file, home) = match &source {
                VariableSource::Default { file, .. } => (file, VarHome::Default),
                VariableSource::Tfvars { file, .. } | VariableSource::VarFile { file, .. } => {
                    (file, VarHome::Tfvar)
                }
                _ => {
                    return refuse(format!(
                        "{address}: var.{name} has no value the code writes"
                    ));
                }
            };
            if module.as_deref().is_some_and(|m| m.contains('[')) && home == VarHome::Default {
                return refuse(format!(
                    "{address}: var.{name}'s default is shared by every instance of {}",
                    module.unwrap_or_default()
                ));
            }
            match alone(module.as_deref(), "var", &name) {
                Ok(()) => entry(file, home.container(&name), format!("var.{name} in {file}")),
                Err(reason) => refuse(reason),
            }
        }
        Provenance::ModuleInput { call, inner, .. } => {
            // `for_each = var.x` in a module whose call passes the collection: the key is
            // removed where the caller writes it, if only this block iterates it there.
            let through = Iterated {
                target: it.target.clone(),
                module: parent_of(&call),
                block: block.clone(),
                several: it.several,
                address: address.clone(),
            };
            match *inner {
                inner @ (Provenance::Variable { .. } | Provenance::ModuleInput { .. }) => {
                    match iterated_only_here(project, &call, it) {
                        Ok(()) => key_removal(project, inner, key, &through),
                        Err(reason) => refuse(reason),
                    }
                }
                other => refuse(format!(
                    "{address}: its for_each comes from an argument of {call} that is {}",
                    what_is(&other)
                )),
            }
        }
        Provenance::Local { name, inner, .. }
            if matches!(*inner, Provenance::Literal { .. }) && !it.several =>
        {
            let Provenance::Literal { file, .. } = *inner else {
                return refuse(format!("{address}: local.{name} is not a literal"));
            };
            match alone(it.module.as_deref(), "local", &name) {
                Ok(()) => entry(
                    &file,
                    Container::Local { name: name.clone() },
                    format!("local.{name} in {file}"),
                ),
                Err(reason) => refuse(reason),
            }
        }
        Provenance::Literal { .. } => refuse(format!(
            "{address}: its for_each collection is written in a module that has several instances"
        )),
        Provenance::Local { name, inner, .. } => refuse(match *inner {
            Provenance::Expression { reason, .. } => format!(
                "{address}: its for_each is local.{name}, computed by an expression ({reason}), so no literal entry \"{key}\" can be removed"
            ),
            _ => format!(
                "{address}: its for_each is local.{name}, written in a module that has several instances or not as a literal"
            ),
        }),
        Provenance::ForEach { .. } => refuse(format!(
            "{address}: its for_each comes from another iteration's entry"
        )),
        Provenance::Expression { reason, .. } => refuse(format!(
            "{address}: its for_each is computed ({reason}), so no literal entry \"{key}\" can be removed"
        )),
        Provenance::Absent { .. } => refuse(format!(
            "{address}: no literal entry \"{key}\" found in its for_each"
        )),
    }
}

/// The module instance holding the module call `call` (`module.a.module.b` → `module.a`).
fn parent_of(call: &str) -> Option<String> {
    call.rfind(".module.").map(|at| call[..at].to_owned())
}

/// Inside the module made by `call`, whether the block `it` is the only one iterating the
/// variable its `for_each` reads (so the caller's collection feeds only its instances).
fn iterated_only_here(project: &Project, call: &str, it: &Iterated) -> Result<(), String> {
    let variable = project
        .variables()
        .into_iter()
        .filter(|v| v.module.as_deref() == Some(call))
        .find(|v| {
            let blocks = project.blocks_iterating(Some(call), "var", &v.name);
            blocks.contains(&it.block)
        });
    let Some(variable) = variable else {
        return Err(format!(
            "{}: the module variable its for_each reads was not found",
            it.address
        ));
    };
    let blocks = project.blocks_iterating(Some(call), "var", &variable.name);
    let others: Vec<&String> = blocks.iter().filter(|b| **b != it.block).collect();
    match others.as_slice() {
        [] => Ok(()),
        _ => Err(format!(
            "{}: var.{} of {call} also drives {}; removing the key would delete their instances as well",
            it.address,
            variable.name,
            others
                .iter()
                .map(|b| b.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// A provenance in words, for refusals.
fn what_is(provenance: &Provenance) -> String {
    match provenance {
        Provenance::Literal { .. } => "a literal in a module with several instances".to_owned(),
        Provenance::Local { name, .. } => format!("local.{name}"),
        Provenance::ForEach { .. } => "another iteration's entry".to_owned(),
        Provenance::Expression { reason, .. } => format!("computed ({reason})"),
        Provenance::Absent { .. } => "not written".to_owned(),
        Provenance::Variable { name, .. } => format!("var.{name}"),
        Provenance::ModuleInput { argument, .. } => format!("the input {argument}"),
    }
}

/// The removal of a whole module instance made by a `for_each` module call
/// (`module.users["alice"]`) when `instance` is its only managed resource or every other one
/// is deleted too (`deleted`): the key is dropped from the collection the call's `for_each`
/// comes from, traced to the root (a literal, a variable's default or tfvars entry, or the
/// caller's module input). `None` when that is not the case or no such edit exists.
fn module_key_removal(
    project: &Project,
    instance: &ResourceInstance,
    deleted: &dyn Fn(&str) -> bool,
) -> Option<Removal> {
    let module = instance.module.as_deref()?;
    let (_, Some(IndexKey::Str(key))) = split_last_key(module) else {
        return None;
    };
    let inside = format!("{module}.");
    let whole = project
        .instances()
        .filter(|i| i.mode == Mode::Managed)
        .filter(|i| {
            i.module.as_deref() == Some(module)
                || i.module.as_deref().is_some_and(|m| m.starts_with(&inside))
        })
        .all(|i| i.address == instance.address || deleted(&i.address));
    if !whole {
        return None;
    }
    let call = project.call_of(module)?;
    let steps = [
        PathStep::Key("for_each".to_owned()),
        PathStep::Key(key.clone()),
    ];
    let provenance = project.call_provenance(module, &steps)?;
    let iterated = Iterated {
        target: block_target(&call.file, "module", &[call.name.as_str()]),
        module: call.parent.clone(),
        block: format!("module.{}", call.name),
        several: call.parent.as_deref().is_some_and(|p| p.contains('[')),
        address: module.to_owned(),
    };
    match key_removal(project, provenance, &key, &iterated) {
        Removal::Entry {
            file,
            container,
            path,
            why,
            ..
        } => Some(Removal::Entry {
            file,
            container,
            path,
            module: Some(module.to_owned()),
            why: format!("{why}; the module instance {module} goes with it"),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthesize::place::site::tests::{entry, project};

    #[test]
    fn a_deleted_instance_loses_its_key_when_its_block_alone_iterates_the_collection() {
        let project = project();
        let removal = |address: &str| {
            removal_of(
                &project,
                project.instance(address).expect("an instance"),
                &|_| false,
            )
        };
        let Removal::Entry {
            file,
            container,
            path,
            ..
        } = removal("aws_sqs_queue.q[\"b\"]")
        else {
            panic!("{:?}", removal("aws_sqs_queue.q[\"b\"]"));
        };
        assert_eq!(
            (file, container, path),
            entry("terraform.tfvars", VarHome::Tfvar, "queues", &["b"])
        );
        let Removal::Entry {
            file,
            container,
            path,
            ..
        } = removal("aws_sns_topic.t[\"x\"]")
        else {
            panic!("{:?}", removal("aws_sns_topic.t[\"x\"]"));
        };
        assert_eq!(file, "main.tf");
        assert!(
            matches!(container, Container::ForEach { .. }),
            "{container:?}"
        );
        assert_eq!(path, vec![PathStep::Key("x".to_owned())]);
        // The block is shared by both instances of module.fn: a new boolean input switches it
        // off for "f" alone.
        let switched = removal("module.fn[\"f\"].aws_lambda_function.this");
        let Removal::SwitchOff { input, .. } = &switched else {
            panic!("{switched:?}");
        };
        assert_eq!(input.input, "create_lambda_function");
        assert_eq!(input.key, IndexKey::Str("f".to_owned()));
        assert_eq!(removal("aws_autoscaling_group.batch"), Removal::Block);
        // var.services drives two blocks: removing "api" would delete the log group too, so
        // the repository's own for_each filters the key out.
        let shared = removal("aws_ecr_repository.svc[\"api\"]");
        assert!(
            matches!(&shared, Removal::Filter { key, why } if key == "api" && why.contains("also drives aws_cloudwatch_log_group.svc")),
            "{shared:?}"
        );
    }

    #[test]
    fn only_the_last_instance_of_a_count_written_as_a_number_is_removed() {
        let project = project();
        let removal = |address: &str| {
            let instance = project.instance(address).expect("an instance");
            removal_of(&project, instance, &|_| false)
        };
        assert!(
            matches!(
                removal("aws_eip.nat[1]"),
                Removal::LowerCount { count: 1, .. }
            ),
            "{:?}",
            removal("aws_eip.nat[1]")
        );
        let first = removal("aws_eip.nat[0]");
        assert!(
            matches!(&first, Removal::Refuse { reason } if reason.contains("would renumber aws_eip.nat[1] after it")),
            "{first:?}"
        );
        // length(var.azs) also makes the subnets: lowering it would remove the last one too.
        let last = removal("aws_route_table_association.a[2]");
        assert!(
            matches!(&last, Removal::Refuse { reason } if reason.contains("comes from var.azs, which also drives aws_subnet.a;")),
            "{last:?}"
        );
    }
}
