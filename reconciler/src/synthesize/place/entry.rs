//! An entry of a literal `for_each` collection as the place of a value: where the collection
//! is written, and whether the entry's field feeds this value alone.

use super::model::{Place, VarHome};
use crate::synthesize::edit::{Container, Target};
use crate::terraform::config::{Collection, Project, ResourceInstance, VariableSource};
use crate::terraform::state::PathStep;

/// The entry of a literal `for_each` collection the value comes from; `block` is the edit
/// tool's target of the block whose `for_each` iterates it, named `what` in messages.
pub fn for_each_entry(
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
pub(super) fn entry_field_shared(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthesize::place::instances::resource_block;
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
