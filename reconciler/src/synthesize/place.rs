//! Where to edit an attribute's value, from its provenance: at the source when the source
//! feeds only this value, at the use site otherwise (with a warning), or nowhere when no single
//! edit can change this instance alone.

use super::edit::{
    Container, EntryStep, Instance, SetAttribute, SetCollectionEntry, SetModuleArgument, SetTfvar,
    SetVariableDefault, Target, ThreadModuleInput, ToolCall, Value as EditValue,
};
use super::tags::{block_target, key_json, split_last_key};
use crate::terraform::config::{Collection, Project, Provenance, ResourceInstance, VariableSource};
use crate::terraform::state::{IndexKey, Mode, PathStep};
use knowledge::schema::{Member, ResourceSchema};
use serde_json::Value;

/// The place an attribute's new value is written.
#[derive(Debug, Clone, PartialEq)]
pub enum Place {
    /// The attribute itself, in the resource block (a literal there, or not set yet).
    UseSite {
        /// Why.
        why: String,
    },
    /// The attribute in the resource block, replacing an expression or a shared source.
    Override {
        /// Why.
        why: String,
        /// What the reviewer should know.
        warning: String,
    },
    /// A root variable's default.
    VariableDefault {
        /// The file declaring the variable.
        file: String,
        /// The variable.
        name: String,
        /// Why.
        why: String,
    },
    /// A tfvars entry.
    Tfvar {
        /// The tfvars file.
        file: String,
        /// The variable.
        name: String,
        /// Why.
        why: String,
    },
    /// A module call's argument.
    ModuleArgument {
        /// The file with the module call.
        file: String,
        /// The module call's name.
        module: String,
        /// The argument.
        argument: String,
        /// Why.
        why: String,
    },
    /// An entry of a literal `for_each` collection: the value at `path` inside the collection
    /// written in `file` (`container` is the edit tool's `in` object).
    CollectionEntry {
        /// The file holding the collection.
        file: String,
        /// Which collection: a variable's default, a tfvars assignment, a local or a block's
        /// `for_each`.
        container: Container,
        /// The path inside the collection: the instance key, then the steps into its value.
        path: Vec<PathStep>,
        /// Why.
        why: String,
    },
    /// The attribute for this instance alone, through a per-instance `lookup(...)` keyed by
    /// `each.key`/`count.index`: in the resource block, or (with `call`) in the argument of a
    /// module call with `for_each`/`count` whose input feeds only this attribute.
    PerInstance {
        /// The module call's argument, when the lookup goes there.
        call: Option<CallArgument>,
        /// This instance's key or index (of the block, or of the module call).
        key: IndexKey,
        /// Why.
        why: String,
        /// What the reviewer should know when the lookup overrides a shared source.
        warning: Option<String>,
    },
    /// A new input of the module, set for this module instance alone at the call.
    NewModuleInput {
        /// The input.
        input: NewInput,
        /// Why.
        why: String,
    },
    /// No edit changes this instance alone.
    Refuse {
        /// Why not.
        reason: String,
    },
}

/// A new input of a module called with `count`/`for_each`, carrying one resource argument's
/// value for one instance of the call (the `thread_module_input` edit tool).
#[derive(Debug, Clone, PartialEq)]
pub struct NewInput {
    /// The edit-tool target of the module call.
    pub call: Target,
    /// The edit-tool target of the resource block inside the module.
    pub resource: Target,
    /// The module's `variables.tf`, when it has one.
    pub variables_file: Option<String>,
    /// The new variable's name: `<type>_<argument>` (with the resource name when the module has
    /// several resources of the type).
    pub input: String,
    /// The call's instance key or index.
    pub key: IndexKey,
}

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

/// An argument of a module call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallArgument {
    /// The file with the module call.
    pub file: String,
    /// The module call's name.
    pub module: String,
    /// The argument.
    pub argument: String,
}

/// How an instance deleted outside Terraform is removed from the code.
#[derive(Debug, Clone, PartialEq)]
pub enum Removal {
    /// Its resource block goes: the block has this instance alone.
    Block,
    /// Its key goes from the literal collection the block's `for_each` iterates.
    Entry {
        /// The file holding the collection.
        file: String,
        /// Which collection, as for [`Place::CollectionEntry`].
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
            blocks.iter().any(|b| *b == it.block)
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

/// The path to attribute `name` inside the nested `blocks` of an instance (the first of each
/// block), as [`Project::provenance`] takes it.
pub fn attribute_steps(blocks: &[&str], name: &str) -> Vec<PathStep> {
    blocks
        .iter()
        .flat_map(|block| [PathStep::Key((*block).to_owned()), PathStep::Index(0)])
        .chain([PathStep::Key(name.to_owned())])
        .collect()
}

/// Splits `a.b.c` into the nested blocks (`a`, `b`) and the attribute (`c`), by the schema.
pub fn split_blocks<'p>(schema: Option<&ResourceSchema>, path: &'p str) -> (Vec<&'p str>, String) {
    let parts: Vec<&str> = path.split('.').collect();
    let mut blocks = Vec::new();
    for i in 0..parts.len().saturating_sub(1) {
        let prefix = parts[..=i].join(".");
        match schema.and_then(|s| s.member(&prefix)) {
            Some(Member::Block(_)) => blocks.push(parts[i]),
            _ => break,
        }
    }
    let name = parts[blocks.len()..].join(".");
    (blocks, name)
}

/// The place for the attribute `name` inside the nested `blocks` of an instance.
pub fn place_of(
    project: &Project,
    instance: &ResourceInstance,
    blocks: &[&str],
    name: &str,
) -> Place {
    let steps = attribute_steps(blocks, name);
    let Some(provenance) = project.provenance(&instance.address, &steps) else {
        return Place::Refuse {
            reason: format!("{} is not in the configuration", instance.address),
        };
    };
    if blocks.is_empty()
        && in_several_module_instances(instance)
        && reaches_module_by_no_own_input(project, instance, &provenance)
        && let Ok(input) = new_input(project, instance, name)
    {
        return Place::NewModuleInput {
            why: format!(
                "{} is written in a module used several times and no input carries its {name} alone; a new module input `{}` carries this instance's value",
                instance.address, input.input
            ),
            input,
        };
    }
    let shared = shared_by_instances(project, instance);
    from(project, instance, &provenance, shared)
}

/// Whether the value is set inside the module (or not at all), or comes through an input the
/// module uses for other arguments too: no argument of the call changes it alone.
fn reaches_module_by_no_own_input(
    project: &Project,
    instance: &ResourceInstance,
    provenance: &Provenance,
) -> bool {
    match provenance {
        Provenance::Absent { .. }
        | Provenance::Literal { .. }
        | Provenance::Local { .. }
        | Provenance::Expression { .. } => true,
        Provenance::ModuleInput { argument, .. } => project
            .variable(instance.module.as_deref(), argument)
            .is_some_and(|v| v.uses > 1),
        _ => false,
    }
}

/// How many instances the resource block has, when more than one: its own `count` or
/// `for_each` instances, in every instance of its module (a module called with `count` or
/// `for_each`, or by several calls, shares one block among all of them).
pub(super) fn shared_by_instances(project: &Project, instance: &ResourceInstance) -> Option<usize> {
    let n = project
        .instances()
        .filter(|i| same_block(i, instance))
        .count();
    (n > 1).then_some(n)
}

fn from(
    project: &Project,
    instance: &ResourceInstance,
    p: &Provenance,
    shared: Option<usize>,
) -> Place {
    match p {
        Provenance::Absent { .. } => match shared {
            None => Place::UseSite {
                why: "the attribute is not set in the configuration yet".into(),
            },
            Some(n) => per_instance(project, instance, n, "not set in the block", false),
        },
        Provenance::Literal { file, .. } => match shared {
            None => Place::UseSite {
                why: format!("the value is written literally in {file}"),
            },
            Some(n) => per_instance(project, instance, n, "a literal", false),
        },
        Provenance::Variable {
            module,
            name,
            source,
            path,
        } => {
            let uses = match path.first() {
                Some(PathStep::Key(field)) => {
                    project.variable_field_uses(module.as_deref(), name, field)
                }
                _ => project
                    .variable(module.as_deref(), name)
                    .map_or(0, |v| v.uses),
            };
            variable(project, instance, name, source, path, uses, shared)
        }
        Provenance::ModuleInput {
            call,
            argument,
            file,
            inner,
            ..
        } => module_input(project, instance, call, argument, file, inner, shared),
        Provenance::Local { module, name, .. } => {
            let uses = project.local(module.as_deref(), name).map_or(0, |l| l.uses);
            override_or_refuse(
                project,
                instance,
                shared,
                format!(
                    "the value comes from local.{name}, which {uses} arguments use; the override keeps the local for them"
                ),
            )
        }
        Provenance::ForEach {
            key,
            file,
            collection,
            path,
            ..
        } => match (
            entry_field_shared(project, instance, false, key, path),
            collection,
        ) {
            (Some(reason), _) => match shared {
                Some(n) => per_instance(project, instance, n, &reason, true),
                None => Place::Refuse { reason },
            },
            (_, Collection::Variable { module: None, .. }) => for_each_entry(
                key,
                file,
                collection,
                path,
                &resource_block(instance),
                "the resource",
            ),
            _ if in_several_module_instances(instance) => Place::Refuse {
                reason: format!(
                    "the value comes from entry \"{key}\" of a collection written in a module that has several instances ({}); editing it would change them all",
                    instance.module.as_deref().unwrap_or_default()
                ),
            },
            _ => for_each_entry(
                key,
                file,
                collection,
                path,
                &resource_block(instance),
                "the resource",
            ),
        },
        Provenance::Expression { reason, .. } => override_or_refuse(
            project,
            instance,
            shared,
            format!("the value was computed by an expression ({reason}); the override replaces it"),
        ),
    }
}

fn variable(
    project: &Project,
    instance: &ResourceInstance,
    name: &str,
    source: &VariableSource,
    path: &[PathStep],
    uses: usize,
    shared: Option<usize>,
) -> Place {
    let read = match path.first() {
        Some(PathStep::Key(field)) => format!("var.{name}.{field}"),
        _ => format!("var.{name}"),
    };
    if uses > 1 || shared.is_some() {
        return override_or_refuse(
            project,
            instance,
            shared,
            format!("{read} is used by {uses} arguments; changing it would change them all"),
        );
    }
    let why = |place: &str| format!("{read} feeds only this argument; edited at its {place}");
    let (file, home, place) = match source {
        VariableSource::Default { file, .. } => (file, VarHome::Default, why("default")),
        VariableSource::Tfvars { file, line, .. } | VariableSource::VarFile { file, line, .. } => (
            file,
            VarHome::Tfvar,
            why(&format!("entry in {file} line {line}")),
        ),
        VariableSource::Cli => {
            return override_or_refuse(
                project,
                instance,
                shared,
                format!("var.{name} is given on the command line (-var)"),
            );
        }
        VariableSource::ModuleArgument { .. } | VariableSource::Unset => {
            return override_or_refuse(
                project,
                instance,
                shared,
                format!("var.{name} has no value the code sets"),
            );
        }
    };
    let (file, name) = (file.clone(), name.to_owned());
    match (path.is_empty(), home) {
        // A path into the variable edits that entry alone, never the whole value.
        (false, _) => Place::CollectionEntry {
            file,
            container: home.container(&name),
            path: path.to_vec(),
            why: place,
        },
        (true, VarHome::Default) => Place::VariableDefault {
            file,
            name,
            why: place,
        },
        (true, _) => Place::Tfvar {
            file,
            name,
            why: place,
        },
    }
}

fn module_input(
    project: &Project,
    instance: &ResourceInstance,
    call: &str,
    argument: &str,
    file: &str,
    inner: &Provenance,
    shared: Option<usize>,
) -> Place {
    let module_path = instance.module.as_deref();
    let uses = project
        .variable(module_path, argument)
        .map_or(0, |v| v.uses);
    if uses > 1 {
        return override_or_refuse(
            project,
            instance,
            shared,
            format!("the module input {argument} is used by {uses} arguments in the module"),
        );
    }
    let (caller, last) = call.rsplit_once(".module.").unwrap_or(("", call));
    let last = last.trim_start_matches("module.");
    let (module, key) = last.split_once('[').unwrap_or((last, ""));
    // The caller's own file is shared when the caller is one of several module instances.
    let caller_shared = caller.contains('[');
    let site = CallArgument {
        file: file.to_owned(),
        module: module.to_owned(),
        argument: argument.to_owned(),
    };
    let call_key = split_last_key(call).1.filter(|_| !caller_shared);
    // This module instance's own value, looked up by the call's `each.key`/`count.index`.
    let at_call = |what: String, overrides: bool| match &call_key {
        Some(key) => Place::PerInstance {
            call: Some(site.clone()),
            key: key.clone(),
            why: format!(
                "{what}; var.{argument} feeds only this argument in the module, so {call} gets its own value at the call's argument, looked up by {}",
                iterator_of(key)
            ),
            warning: overrides.then(|| format!("{what}; overridden for {call} alone")),
        },
        None => Place::Refuse {
            reason: format!("{what}; a value for {call} alone needs a per-instance entry"),
        },
    };
    match inner {
        Provenance::ForEach {
            key,
            file: at,
            collection,
            path,
            ..
        } => match (
            entry_field_shared(project, instance, true, key, path),
            collection,
        ) {
            (Some(reason), _) => at_call(reason, true),
            (_, Collection::InPlace { .. } | Collection::Local { .. }) if caller_shared => {
                Place::Refuse {
                    reason: format!(
                        "the value comes from entry \"{key}\" of the for_each of module {module}, written in a module that has several instances"
                    ),
                }
            }
            _ => {
                let call_block = block_target(file, "module", &[module]);
                for_each_entry(
                    key,
                    at,
                    collection,
                    path,
                    &call_block,
                    &format!("module {module}"),
                )
            }
        },
        Provenance::Literal { .. } if !key.is_empty() || caller_shared => at_call(
            format!(
                "the value is the literal argument {argument} of module {module}, which every instance of the module call shares"
            ),
            false,
        ),
        Provenance::Literal { .. } => Place::ModuleArgument {
            file: file.to_owned(),
            module: module.to_owned(),
            argument: argument.to_owned(),
            why: format!("the value is the literal argument {argument} of module {module}"),
        },
        _ if call_key.is_some() => at_call(
            format!(
                "the value is argument {argument} of module {module}, which every instance of the module call shares"
            ),
            true,
        ),
        other => from(project, instance, other, shared),
    }
}

/// The entry of a literal `for_each` collection the value comes from; `block` is the edit
/// tool's target of the block whose `for_each` iterates it, named `what` in messages.
fn for_each_entry(
    key: &str,
    file: &str,
    collection: &Collection,
    path: &[PathStep],
    block: &Target,
    what: &str,
) -> Place {
    // Each instance reads its own entry, so the edit changes this instance alone; another
    // resource iterating the same collection changes too only where it reads the same field.
    let entry = |file: &str, container: Container, what: String| Place::CollectionEntry {
        file: file.to_owned(),
        container,
        path: path.to_vec(),
        why: format!("the value is entry \"{key}\" of {what}; edited at that entry"),
    };
    match collection {
        Collection::InPlace { iterator }
            if iterator == "each" && block.file.as_deref() == Some(file) =>
        {
            entry(
                file,
                Container::ForEach {
                    target: block.clone(),
                },
                format!("the for_each map of {what}"),
            )
        }
        Collection::InPlace { iterator } => Place::Refuse {
            reason: format!(
                "the value comes from entry \"{key}\" of the collection `{iterator}` iterates in {file}; only a block's own for_each map is edited"
            ),
        },
        Collection::Variable { name, source, .. } => {
            let (home, place) = match source {
                VariableSource::Default { .. } => (VarHome::Default, "default"),
                _ => (VarHome::Tfvar, "assignment"),
            };
            entry(
                file,
                home.container(name),
                format!("var.{name}'s {place} in {file}"),
            )
        }
        Collection::Local { name, .. } => entry(
            file,
            Container::Local { name: name.clone() },
            format!("local.{name} in {file}"),
        ),
    }
}

/// Why the field of a `for_each` entry cannot be edited for this value alone: the block
/// iterating the collection (the resource's, or with `call` its module call) reads the field
/// in more than one argument.
fn entry_field_shared(
    project: &Project,
    instance: &ResourceInstance,
    call: bool,
    key: &str,
    path: &[PathStep],
) -> Option<String> {
    let Some(PathStep::Key(field)) = path.get(1) else {
        return None;
    };
    let reads = project.each_field_reads(&instance.address, call, field)?;
    (reads > 1).then(|| {
        format!(
            "each.value.{field} of entry \"{key}\" feeds {reads} arguments of the block iterating it; editing the entry would change them all"
        )
    })
}

/// Whether the instance's module is one of several instances of a module call.
fn in_several_module_instances(instance: &ResourceInstance) -> bool {
    instance.module.as_deref().is_some_and(|m| m.contains('['))
}

/// The edit tool's target of an instance's resource block.
fn resource_block(instance: &ResourceInstance) -> Target {
    block_target(
        &instance.file,
        "resource",
        &[&instance.resource_type, &instance.name],
    )
}

/// Where a variable's value is written: its default or a tfvars assignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum VarHome {
    /// `variable "NAME" { default = ... }`.
    Default,
    /// `NAME = ...` in a .tfvars file.
    Tfvar,
}

impl VarHome {
    /// The collection variable `name` holds there.
    fn container(self, name: &str) -> Container {
        let name = name.to_owned();
        match self {
            VarHome::Default => Container::VariableDefault { name },
            VarHome::Tfvar => Container::Tfvar { name },
        }
    }
}

fn override_or_refuse(
    project: &Project,
    instance: &ResourceInstance,
    shared: Option<usize>,
    what: String,
) -> Place {
    match shared {
        Some(n) => per_instance(project, instance, n, &what, true),
        None => Place::Override {
            why: what.clone(),
            warning: format!("{what}; overridden at the use site in {}", instance.address),
        },
    }
}

/// The value of one of the `n` instances of a block, written for it alone: a lookup by the
/// block's own `each.key`/`count.index`. A block shared by several instances of a module has
/// no iterator naming the module instance; that needs a new module input.
fn per_instance(
    project: &Project,
    instance: &ResourceInstance,
    n: usize,
    what: &str,
    overrides: bool,
) -> Place {
    let one_module = project
        .instances()
        .filter(|i| same_block(i, instance))
        .all(|i| i.module == instance.module);
    match &instance.index {
        Some(key) if one_module => {
            let iterator = iterator_of(key);
            Place::PerInstance {
                call: None,
                key: key.clone(),
                why: format!(
                    "{} is one of {n} instances of one block ({what}); this instance's own value is looked up by {iterator}",
                    instance.address
                ),
                warning: overrides.then(|| {
                    format!(
                        "{what}; overridden for {} alone by a lookup on {iterator}",
                        instance.address
                    )
                }),
            }
        }
        _ => Place::Refuse {
            reason: format!(
                "{} is one of {n} instances of one block written in a module used several times ({what}); a value for this module instance alone needs a new module input",
                instance.address
            ),
        },
    }
}

/// The expression naming the current instance of a block indexed by `key`.
fn iterator_of(key: &IndexKey) -> &'static str {
    match key {
        IndexKey::Int(_) => "count.index",
        IndexKey::Str(_) => "each.key",
    }
}

/// Whether two instances come from the same block of configuration.
pub(super) fn same_block(a: &ResourceInstance, b: &ResourceInstance) -> bool {
    a.file == b.file && a.resource_type == b.resource_type && a.name == b.name && a.mode == b.mode
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terraform::functions::Value;
    use crate::terraform::state::Mode;

    fn queue() -> ResourceInstance {
        ResourceInstance {
            address: "aws_sqs_queue.q[\"a\"]".to_owned(),
            module: None,
            mode: Mode::Managed,
            resource_type: "aws_sqs_queue".to_owned(),
            name: "q".to_owned(),
            index: Some(IndexKey::Str("a".to_owned())),
            attributes: Value::Null,
            file: "main.tf".to_owned(),
            span: 0..0,
        }
    }

    fn path() -> Vec<PathStep> {
        vec![
            PathStep::Key("a".to_owned()),
            PathStep::Key("timeout".to_owned()),
        ]
    }

    fn written(place: &Place) -> Option<(&str, &Container)> {
        match place {
            Place::CollectionEntry {
                file, container, ..
            } => Some((file.as_str(), container)),
            _ => None,
        }
    }

    #[test]
    fn for_each_entries_are_edited_where_the_collection_is_written() {
        let each = Collection::InPlace {
            iterator: "each".to_owned(),
        };
        let place = for_each_entry(
            "a",
            "main.tf",
            &each,
            &path(),
            &resource_block(&queue()),
            "the resource",
        );
        let (file, container) = written(&place).expect("an entry");
        assert_eq!(file, "main.tf");
        let Container::ForEach { target } = container else {
            panic!("{container:?}");
        };
        assert_eq!(target.labels, ["aws_sqs_queue", "q"]);

        let tfvars = Collection::Variable {
            module: None,
            name: "queues".to_owned(),
            source: VariableSource::Tfvars {
                file: "terraform.tfvars".to_owned(),
                line: 3,
                span: 0..0,
            },
        };
        let place = for_each_entry(
            "a",
            "terraform.tfvars",
            &tfvars,
            &path(),
            &resource_block(&queue()),
            "the resource",
        );
        assert_eq!(
            written(&place),
            Some((
                "terraform.tfvars",
                &Container::Tfvar {
                    name: "queues".into()
                }
            ))
        );

        let local = Collection::Local {
            module: None,
            name: "queues".to_owned(),
            file: "locals.tf".to_owned(),
        };
        let place = for_each_entry(
            "a",
            "locals.tf",
            &local,
            &path(),
            &resource_block(&queue()),
            "the resource",
        );
        assert_eq!(
            written(&place),
            Some((
                "locals.tf",
                &Container::Local {
                    name: "queues".into()
                }
            ))
        );
    }

    /// A project with an object variable, a for_each resource over a tfvars map, a module
    /// called with for_each over another, and a literal set.
    fn project() -> Project {
        let temp = tempfile::tempdir().expect("a temporary directory");
        let dir = temp.path().to_path_buf();
        let files = [
            (
                "main.tf",
                r#"variable "asg" {}
variable "queues" {}
variable "functions" {}
variable "retention" {}
variable "services" {}

resource "aws_ecr_repository" "svc" {
  for_each = var.services
  name     = each.key
}

resource "aws_cloudwatch_log_group" "svc" {
  for_each = var.services
  name     = each.key
}

resource "aws_autoscaling_group" "web" {
  min_size = var.asg.min
  max_size = var.asg.max
}

resource "aws_autoscaling_group" "batch" {
  min_size = var.asg.min
}

resource "aws_sqs_queue" "q" {
  for_each                   = var.queues
  visibility_timeout_seconds = each.value.timeout
}

resource "aws_sns_topic" "t" {
  for_each = toset(["x", "y"])
  name     = each.key
}

variable "azs" {}

resource "aws_subnet" "a" {
  count = length(var.azs)
}

resource "aws_route_table_association" "a" {
  count     = length(var.azs)
  subnet_id = aws_subnet.a[count.index].id
}

resource "aws_eip" "nat" {
  count = 2
}

module "fn" {
  source    = "./modules/fn"
  for_each  = var.functions
  timeout   = each.value.timeout
  retention = var.retention
}
"#,
            ),
            (
                "terraform.tfvars",
                "asg = { min = 1, max = 3 }\nqueues = {\n  a = { timeout = 30 }\n  b = { timeout = 60 }\n}\nfunctions = {\n  f = { timeout = 10 }\n  g = { timeout = 20 }\n}\nretention = 30\nservices = {\n  api = {}\n  web = {}\n}\nazs = [\"a\", \"b\", \"c\"]\n",
            ),
            (
                "modules/fn/main.tf",
                "variable \"timeout\" {}\nvariable \"retention\" {}\n\nresource \"aws_lambda_function\" \"this\" {\n  timeout     = var.timeout\n  memory_size = 128\n}\n\nresource \"aws_cloudwatch_log_group\" \"this\" {\n  retention_in_days = var.retention\n}\n",
            ),
        ];
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("a directory");
            std::fs::write(path, text).expect("written");
        }
        Project::load(&dir, &Default::default()).expect("loads")
    }

    fn place(project: &Project, address: &str, name: &str) -> Place {
        let instance = project.instance(address).expect("an instance");
        place_of(project, instance, &[], name)
    }

    fn entry(
        file: &str,
        home: VarHome,
        name: &str,
        path: &[&str],
    ) -> (String, Container, Vec<PathStep>) {
        (
            file.to_owned(),
            home.container(name),
            path.iter()
                .map(|k| PathStep::Key((*k).to_owned()))
                .collect(),
        )
    }

    fn as_entry(place: Place) -> Option<(String, Container, Vec<PathStep>)> {
        match place {
            Place::CollectionEntry {
                file,
                container,
                path,
                ..
            } => Some((file, container, path)),
            _ => None,
        }
    }

    #[test]
    fn a_field_of_an_object_variable_is_edited_when_only_this_argument_reads_it() {
        let project = project();
        // var.asg.max feeds web's max_size alone: its field in the tfvars object.
        assert_eq!(
            as_entry(place(&project, "aws_autoscaling_group.web", "max_size")),
            Some(entry("terraform.tfvars", VarHome::Tfvar, "asg", &["max"]))
        );
        // var.asg.min feeds two arguments: overridden at the use site, never set whole.
        let min = place(&project, "aws_autoscaling_group.web", "min_size");
        assert!(
            matches!(&min, Place::Override { why, .. } if why.contains("var.asg.min is used by 2")),
            "{min:?}"
        );
    }

    #[test]
    fn values_in_a_module_called_with_for_each_are_edited_in_the_callers_entry() {
        let project = project();
        assert_eq!(
            as_entry(place(
                &project,
                "module.fn[\"g\"].aws_lambda_function.this",
                "timeout"
            )),
            Some(entry(
                "terraform.tfvars",
                VarHome::Tfvar,
                "functions",
                &["g", "timeout"]
            ))
        );
        // var.retention feeds both instances through the call's argument: this instance's
        // own value is looked up there by each.key.
        let retention = place(
            &project,
            "module.fn[\"g\"].aws_cloudwatch_log_group.this",
            "retention_in_days",
        );
        let Place::PerInstance {
            call: Some(call),
            key,
            warning: Some(_),
            ..
        } = retention
        else {
            panic!("{retention:?}");
        };
        assert_eq!(
            (
                call.file.as_str(),
                call.module.as_str(),
                call.argument.as_str()
            ),
            ("main.tf", "fn", "retention")
        );
        assert_eq!(key, IndexKey::Str("g".to_owned()));
        // A literal inside the module, or an argument the module does not set, gets a new
        // module input set for this instance at the call.
        for (address, name, input) in [
            (
                "module.fn[\"g\"].aws_lambda_function.this",
                "memory_size",
                "lambda_function_memory_size",
            ),
            (
                "module.fn[\"g\"].aws_lambda_function.this",
                "description",
                "lambda_function_description",
            ),
        ] {
            let got = place(&project, address, name);
            let Place::NewModuleInput { input: new, .. } = &got else {
                panic!("{name}: {got:?}");
            };
            assert_eq!(new.input, input);
            assert_eq!(new.key, IndexKey::Str("g".to_owned()));
            assert_eq!(new.call.labels, ["fn"]);
            assert_eq!(new.resource.file.as_deref(), Some("modules/fn/main.tf"));
            assert_eq!(new.variables_file, None);
        }
    }

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

    #[test]
    fn a_dynamic_blocks_collection_is_refused_with_the_reason() {
        let port = Collection::InPlace {
            iterator: "port".to_owned(),
        };
        let place = for_each_entry(
            "22",
            "main.tf",
            &port,
            &path(),
            &resource_block(&queue()),
            "the resource",
        );
        assert!(
            matches!(&place, Place::Refuse { reason } if reason.contains("`port`")),
            "{place:?}"
        );
    }
}
