//! Where to edit an attribute's value, from its provenance: at the source when the source
//! feeds only this value, at the use site otherwise (with a warning), or nowhere when no single
//! edit can change this instance alone.

use crate::terraform::config::{Project, Provenance, ResourceInstance, VariableSource};
use crate::terraform::state::PathStep;

/// The place an attribute's new value is written.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// No edit changes this instance alone.
    Refuse {
        /// Why not.
        reason: String,
    },
}

/// The place for the attribute `name` inside the nested `blocks` of an instance.
pub fn place_of(
    project: &Project,
    instance: &ResourceInstance,
    blocks: &[&str],
    name: &str,
) -> Place {
    let mut steps: Vec<PathStep> = Vec::new();
    for block in blocks {
        steps.push(PathStep::Key((*block).to_owned()));
        steps.push(PathStep::Index(0));
    }
    steps.push(PathStep::Key(name.to_owned()));
    let Some(provenance) = project.provenance(&instance.address, &steps) else {
        return Place::Refuse {
            reason: format!("{} is not in the configuration", instance.address),
        };
    };
    let shared = shared_by_instances(project, instance);
    from(project, instance, &provenance, shared)
}

/// How many instances the resource block has, when more than one.
fn shared_by_instances(project: &Project, instance: &ResourceInstance) -> Option<usize> {
    let n = project
        .instances()
        .filter(|i| {
            i.module == instance.module
                && i.resource_type == instance.resource_type
                && i.name == instance.name
                && i.mode == instance.mode
        })
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
        Provenance::Absent { .. } => Place::UseSite {
            why: "the attribute is not set in the configuration yet".into(),
        },
        Provenance::Literal { file, .. } => match shared {
            None => Place::UseSite {
                why: format!("the value is written literally in {file}"),
            },
            Some(n) => per_instance(instance, n, "a literal"),
        },
        Provenance::Variable {
            module,
            name,
            source,
        } => {
            let uses = project
                .variable(module.as_deref(), name)
                .map_or(0, |v| v.uses);
            variable(instance, name, source, uses, shared)
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
                instance,
                shared,
                format!(
                    "the value comes from local.{name}, which {uses} arguments use; the override keeps the local for them"
                ),
            )
        }
        Provenance::ForEach { key, file, .. } => Place::Refuse {
            reason: format!(
                "the value comes from the for_each entry {key:?} in {file}; that entry must change, and no edit tool rewrites a single entry yet"
            ),
        },
        Provenance::Expression { reason, .. } => override_or_refuse(
            instance,
            shared,
            format!("the value was computed by an expression ({reason}); the override replaces it"),
        ),
    }
}

fn variable(
    instance: &ResourceInstance,
    name: &str,
    source: &VariableSource,
    uses: usize,
    shared: Option<usize>,
) -> Place {
    if uses > 1 || shared.is_some() {
        return override_or_refuse(
            instance,
            shared,
            format!("var.{name} is used by {uses} arguments; changing it would change them all"),
        );
    }
    let why = |place: &str| format!("var.{name} feeds only this argument; edited at its {place}");
    match source {
        VariableSource::Default { file, .. } => Place::VariableDefault {
            file: file.clone(),
            name: name.to_owned(),
            why: why("default"),
        },
        VariableSource::Tfvars { file, line, .. } | VariableSource::VarFile { file, line, .. } => {
            Place::Tfvar {
                file: file.clone(),
                name: name.to_owned(),
                why: why(&format!("entry in {file} line {line}")),
            }
        }
        VariableSource::Cli => override_or_refuse(
            instance,
            shared,
            format!("var.{name} is given on the command line (-var)"),
        ),
        VariableSource::ModuleArgument { .. } | VariableSource::Unset => override_or_refuse(
            instance,
            shared,
            format!("var.{name} has no value the code sets"),
        ),
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
            instance,
            shared,
            format!("the module input {argument} is used by {uses} arguments in the module"),
        );
    }
    let module = call.rsplit("module.").next().unwrap_or(call);
    let module = module
        .split('[')
        .next()
        .unwrap_or(module)
        .trim_end_matches('.');
    match inner {
        Provenance::Literal { .. } => Place::ModuleArgument {
            file: file.to_owned(),
            module: module.to_owned(),
            argument: argument.to_owned(),
            why: format!("the value is the literal argument {argument} of module {module}"),
        },
        other => from(project, instance, other, shared),
    }
}

fn override_or_refuse(instance: &ResourceInstance, shared: Option<usize>, what: String) -> Place {
    match shared {
        Some(n) => per_instance(instance, n, &what),
        None => Place::Override {
            why: what.clone(),
            warning: format!("{what}; overridden at the use site in {}", instance.address),
        },
    }
}

fn per_instance(instance: &ResourceInstance, n: usize, what: &str) -> Place {
    Place::Refuse {
        reason: format!(
            "{} is one of {n} instances of one block and its value is {what}; a value for this instance alone needs a per-instance map",
            instance.address
        ),
    }
}
