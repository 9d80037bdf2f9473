//! Where a resource created outside Terraform joins the code as one more instance of a
//! `for_each` block (a resource's, or a module call's that makes one resource): a new key in
//! the list of names the block iterates, when the new object differs from an existing
//! instance's only in the argument that key sets.

use super::removal::{Removal, removal_of};
use crate::synthesize::defaults::is_default;
use crate::synthesize::edit::Container;
use crate::synthesize::settled::is_empty;
use crate::synthesize::tags::split_last_key;
use crate::terraform::config::{Project, ResourceInstance};
use crate::terraform::state::{IndexKey, Mode};
use crate::terraform::values::same_value;
use serde_json::{Map, Value};

/// A new key for a collection of names a `for_each` block iterates.
#[derive(Debug, Clone, PartialEq)]
pub struct Joining {
    /// The file holding the collection.
    pub file: String,
    /// Where the collection is written there.
    pub container: Container,
    /// The new key.
    pub key: String,
    /// The address of the instance the key makes.
    pub address: String,
    /// Why, in words.
    pub why: String,
}

/// The key a new `resource_type` object with `attributes` (its top-level arguments as the
/// creating calls set them) takes in the list of names an existing block iterates, if one
/// block's instances differ only by the argument their key sets and only that block iterates
/// the list.
pub fn joining(
    project: &Project,
    resource_type: &str,
    attributes: &Map<String, Value>,
) -> Option<Joining> {
    project
        .instances()
        .filter(|i| i.mode == Mode::Managed && i.resource_type == resource_type)
        .find_map(|instance| join_beside(project, instance, attributes))
}

/// The new key beside `instance`, when it is keyed by a name (its own or its module
/// instance's) that one of its arguments holds, and every other argument is the new
/// object's.
fn join_beside(
    project: &Project,
    instance: &ResourceInstance,
    attributes: &Map<String, Value>,
) -> Option<Joining> {
    let (key, module) = name_key(project, instance)?;
    let Value::Object(config) = instance.attributes.to_json()? else {
        return None;
    };
    let named: Vec<&String> = config
        .iter()
        .filter(|(_, v)| v.as_str() == Some(key.as_str()))
        .map(|(name, _)| name)
        .collect();
    let [argument] = named[..] else {
        return None;
    };
    let new_key = attributes.get(argument)?.as_str()?.to_owned();
    let kind = &instance.resource_type;
    let others = |from: &Map<String, Value>, to: &Map<String, Value>| {
        from.iter()
            .filter(|(name, value)| *name != argument && !is_empty(value))
            .all(|(name, value)| match to.get(name) {
                Some(other) => same_value(value, other),
                None => is_default(kind, name, value),
            })
    };
    if !others(&config, attributes) || !others(attributes, &config) {
        return None;
    }
    let Removal::Entry {
        file, container, ..
    } = removal_of(project, instance, &|_| true)
    else {
        return None;
    };
    if !names(project, &file, &container) {
        return None;
    }
    let address = new_address(instance, module.as_deref(), &key, &new_key)?;
    let what = module.map_or_else(|| instance.address.clone(), |m| m.to_owned());
    Some(Joining {
        why: format!(
            "{} {new_key} was created outside Terraform like {what}, whose block makes one instance per name in a list only it iterates, with the name as its `{argument}`: the name joins that list",
            instance.resource_type
        ),
        file,
        container,
        key: new_key,
        address,
    })
}

/// The name that keys the instance: its own `for_each` key, or its module instance's when
/// that module instance makes this one resource alone; with the module instance's path.
fn name_key(project: &Project, instance: &ResourceInstance) -> Option<(String, Option<String>)> {
    match (&instance.index, instance.module.as_deref()) {
        (Some(IndexKey::Str(key)), module) if !module.is_some_and(|m| m.contains('[')) => {
            Some((key.clone(), None))
        }
        (None, Some(module)) => {
            let (_, Some(IndexKey::Str(key))) = split_last_key(module) else {
                return None;
            };
            let inside = format!("{module}.");
            let alone = project
                .instances()
                .filter(|i| i.mode == Mode::Managed)
                .filter(|i| {
                    i.module.as_deref() == Some(module)
                        || i.module.as_deref().is_some_and(|m| m.starts_with(&inside))
                })
                .count()
                == 1;
            alone.then(|| (key, Some(module.to_owned())))
        }
        _ => None,
    }
}

/// The address of the instance the new key makes: the block's own key, or its module
/// instance's, replaced.
fn new_address(
    instance: &ResourceInstance,
    module: Option<&str>,
    key: &str,
    new_key: &str,
) -> Option<String> {
    let quoted = |k: &str| serde_json::to_string(k).ok();
    let (old, new) = (
        format!("[{}]", quoted(key)?),
        format!("[{}]", quoted(new_key)?),
    );
    match module {
        Some(module) => {
            let (call, _) = split_last_key(module);
            let rest = instance.address.strip_prefix(module)?;
            Some(format!("{call}{new}{rest}"))
        }
        None => Some(format!("{}{new}", instance.address.strip_suffix(&old)?)),
    }
}

/// Whether the collection written at `container` in `file` is a list of names (strings), to
/// which a new name is appended.
fn names(project: &Project, file: &str, container: &Container) -> bool {
    let value = match container {
        Container::VariableDefault { name } | Container::Tfvar { name } => project
            .variables()
            .into_iter()
            .find(|v| &v.name == name && v.source.file() == Some(file))
            .map(|v| v.value),
        Container::Local { name } => project
            .locals()
            .into_iter()
            .find(|l| &l.name == name && l.file == file)
            .map(|l| l.value),
        Container::ForEach { .. } | Container::Argument { .. } => None,
    };
    match value.and_then(|v| v.to_json()) {
        Some(Value::Array(items)) => items.iter().all(Value::is_string),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn project() -> (tempfile::TempDir, Project) {
        let temp = tempfile::tempdir().expect("a temporary directory");
        let text = r#"variable "names" {
  type    = list(string)
  default = ["app-a", "app-b"]
}

resource "aws_sqs_queue" "q" {
  for_each                   = toset(var.names)
  name                       = each.key
  visibility_timeout_seconds = 60
}

output "queues" {
  value = var.names
}
"#;
        std::fs::write(temp.path().join("main.tf"), text).expect("written");
        let project = Project::load(temp.path(), &Default::default()).expect("loads");
        (temp, project)
    }

    fn queue(fields: Value) -> Map<String, Value> {
        fields.as_object().cloned().expect("an object")
    }

    #[test]
    fn a_new_object_like_the_instances_joins_their_list_of_names() {
        let (_temp, project) = project();
        let like = queue(json!({"name": "app-c", "visibility_timeout_seconds": 60}));
        let joining = joining(&project, "aws_sqs_queue", &like).expect("joins");
        assert_eq!(joining.key, "app-c");
        assert_eq!(joining.address, "aws_sqs_queue.q[\"app-c\"]");
        assert_eq!(
            (joining.file.as_str(), &joining.container),
            (
                "main.tf",
                &Container::VariableDefault {
                    name: "names".to_owned()
                }
            )
        );
        // The provider's default for an argument the block leaves out is the same object.
        let defaults =
            queue(json!({"name": "app-c", "visibility_timeout_seconds": 60, "delay_seconds": 0}));
        assert!(joining_is_some(&project, &defaults));
    }

    fn joining_is_some(project: &Project, attributes: &Map<String, Value>) -> bool {
        joining(project, "aws_sqs_queue", attributes).is_some()
    }

    #[test]
    fn an_object_the_block_would_not_make_stays_apart() {
        let (_temp, project) = project();
        for attributes in [
            json!({"name": "app-c", "visibility_timeout_seconds": 30}),
            json!({"name": "app-c", "visibility_timeout_seconds": 60, "delay_seconds": 5}),
            json!({"visibility_timeout_seconds": 60}),
        ] {
            assert!(
                !joining_is_some(&project, &queue(attributes.clone())),
                "{attributes}"
            );
        }
    }
}
