//! Where to edit an attribute's value, from its provenance: at the source when the source
//! feeds only this value, at the use site otherwise (with a warning), or nowhere when no single
//! edit can change this instance alone.

use crate::terraform::config::{Collection, Project, Provenance, ResourceInstance, VariableSource};
use crate::terraform::state::PathStep;
use serde_json::json;

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
    /// An entry of a literal `for_each` collection: the value at `path` inside the collection
    /// written in `file` (`container` is the edit tool's `in` object).
    CollectionEntry {
        /// The file holding the collection.
        file: String,
        /// Which collection: `{"kind": "variable_default" | "tfvar" | "local", "name": ...}` or
        /// `{"kind": "for_each", "target": ...}`.
        container: serde_json::Value,
        /// The path inside the collection: the instance key, then the steps into its value.
        path: Vec<PathStep>,
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
        Provenance::ForEach {
            key,
            file,
            collection,
            path,
            ..
        } => for_each_entry(instance, key, file, collection, path),
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
        Provenance::ForEach { key, .. } => Place::Refuse {
            reason: format!(
                "the value comes from entry {key:?} of the for_each of the call of module {module}; a module call's collection is not edited yet"
            ),
        },
        Provenance::Literal { .. } => Place::ModuleArgument {
            file: file.to_owned(),
            module: module.to_owned(),
            argument: argument.to_owned(),
            why: format!("the value is the literal argument {argument} of module {module}"),
        },
        other => from(project, instance, other, shared),
    }
}

/// The entry of a literal `for_each` collection the value comes from.
fn for_each_entry(
    instance: &ResourceInstance,
    key: &str,
    file: &str,
    collection: &Collection,
    path: &[PathStep],
) -> Place {
    // Each instance reads its own entry, so the edit changes this instance alone; another
    // resource iterating the same collection changes too only where it reads the same field.
    let entry = |file: &str, container: serde_json::Value, what: String| Place::CollectionEntry {
        file: file.to_owned(),
        container,
        path: path.to_vec(),
        why: format!("the value is entry {key:?} of {what}; edited at that entry"),
    };
    match collection {
        Collection::InPlace { iterator } if iterator == "each" && file == instance.file => entry(
            file,
            json!({"kind": "for_each", "target": {
                "file": instance.file,
                "block_type": "resource",
                "labels": [instance.resource_type, instance.name],
            }}),
            "the resource's for_each map".to_owned(),
        ),
        Collection::InPlace { iterator } => Place::Refuse {
            reason: format!(
                "the value comes from entry {key:?} of the collection `{iterator}` iterates in {file}; only a resource's own for_each map is edited"
            ),
        },
        Collection::Variable { name, source, .. } => {
            let (kind, place) = match source {
                VariableSource::Default { .. } => ("variable_default", "default"),
                _ => ("tfvar", "assignment"),
            };
            entry(
                file,
                json!({"kind": kind, "name": name}),
                format!("var.{name}'s {place} in {file}"),
            )
        }
        Collection::Local { name, .. } => entry(
            file,
            json!({"kind": "local", "name": name}),
            format!("local.{name} in {file}"),
        ),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terraform::functions::Value;
    use crate::terraform::state::{IndexKey, Mode};

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

    fn written(place: &Place) -> Option<(&str, &serde_json::Value)> {
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
        let place = for_each_entry(&queue(), "a", "main.tf", &each, &path());
        let (file, container) = written(&place).expect("an entry");
        assert_eq!(file, "main.tf");
        assert_eq!(container["kind"], "for_each");
        assert_eq!(container["target"]["labels"], json!(["aws_sqs_queue", "q"]));

        let tfvars = Collection::Variable {
            module: None,
            name: "queues".to_owned(),
            source: VariableSource::Tfvars {
                file: "terraform.tfvars".to_owned(),
                line: 3,
                span: 0..0,
            },
        };
        let place = for_each_entry(&queue(), "a", "terraform.tfvars", &tfvars, &path());
        assert_eq!(
            written(&place),
            Some((
                "terraform.tfvars",
                &json!({"kind": "tfvar", "name": "queues"})
            ))
        );

        let local = Collection::Local {
            module: None,
            name: "queues".to_owned(),
            file: "locals.tf".to_owned(),
        };
        let place = for_each_entry(&queue(), "a", "locals.tf", &local, &path());
        assert_eq!(
            written(&place),
            Some(("locals.tf", &json!({"kind": "local", "name": "queues"})))
        );
    }

    #[test]
    fn a_dynamic_blocks_collection_is_refused_with_the_reason() {
        let port = Collection::InPlace {
            iterator: "port".to_owned(),
        };
        let place = for_each_entry(&queue(), "22", "main.tf", &port, &path());
        assert!(
            matches!(&place, Place::Refuse { reason } if reason.contains("`port`")),
            "{place:?}"
        );
    }
}
