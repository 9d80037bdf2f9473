//! Security groups whose rules are written as separate `aws_security_group_rule` resources
//! (the legacy form many modules use): a rule added outside Terraform becomes one more such
//! resource, imported, never an inline `ingress`/`egress` block, which the provider's
//! documentation warns conflicts with separate rule resources.

use serde_json::{Map, Value};

use crate::intents::BlockDelta;
use crate::terraform::config::{Project, ResourceInstance};
use crate::terraform::functions::Value as Evaluated;
use crate::terraform::state::{Mode, StateIndex};

/// A new `aws_security_group_rule` for a rule added outside Terraform.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleResource {
    /// The file of the group's other rule resources.
    pub file: String,
    /// The new resource's name.
    pub name: String,
    /// Its import id, `sg-1_ingress_tcp_443_443_10.0.0.0/8` as the provider documents it.
    pub id: String,
    /// Its arguments, the group's id as a plain value (the planner makes it a reference).
    pub attributes: Map<String, Value>,
}

/// For a block added to `group` (an `aws_security_group` whose rules are separate resources),
/// the rule resource to write, or why none can be written; `None` when the group's rules are
/// not separate resources (an inline block is right then).
pub fn separate_rule(
    project: &Project,
    state: &StateIndex,
    group: &ResourceInstance,
    block: &BlockDelta,
) -> Option<Result<RuleResource, String>> {
    if group.resource_type != "aws_security_group"
        || !matches!(block.block.as_str(), "ingress" | "egress")
    {
        return None;
    }
    let Evaluated::Object(config) = &group.attributes else {
        return None;
    };
    let inline = ["ingress", "egress"]
        .iter()
        .any(|kind| match config.get(*kind) {
            Some(Evaluated::List(blocks)) => !blocks.is_empty(),
            Some(Evaluated::Unknown) => true,
            _ => false,
        });
    if inline {
        return None;
    }
    let group_id = state
        .instance(&group.address)?
        .attributes
        .get("id")?
        .as_str()?
        .to_owned();
    let rules: Vec<&str> = state
        .iter()
        .filter(|r| r.mode == Mode::Managed && r.resource_type == "aws_security_group_rule")
        .filter(|r| {
            r.attributes
                .get("security_group_id")
                .and_then(Value::as_str)
                == Some(&group_id)
        })
        .map(|r| r.address.as_str())
        .collect();
    let first = rules.first()?;
    Some(rule_resource(project, group, block, &group_id, first))
}

fn rule_resource(
    project: &Project,
    group: &ResourceInstance,
    block: &BlockDelta,
    group_id: &str,
    sibling: &str,
) -> Result<RuleResource, String> {
    let sibling = project
        .instance(sibling)
        .ok_or_else(|| format!("{sibling} is in the state but not in the configuration"))?;
    if sibling.module.is_some() || sibling.index.is_some() {
        return Err(format!(
            "the rules of {} are separate aws_security_group_rule resources made by {}; a new rule belongs in the collection or module input that makes them, which retrace does not extend yet (an inline `{}` block would conflict with them)",
            group.address, sibling.address, block.block
        ));
    }
    let mut attributes = Map::new();
    attributes.insert("type".to_owned(), Value::String(block.block.clone()));
    attributes.insert(
        "security_group_id".to_owned(),
        Value::String(group_id.to_owned()),
    );
    let mut sources = Vec::new();
    for (name, value) in &block.fields {
        match (name.as_str(), value) {
            ("security_groups", Value::Array(groups)) if groups.len() == 1 => {
                attributes.insert("source_security_group_id".to_owned(), groups[0].clone());
            }
            ("security_groups", Value::Array(groups)) if groups.is_empty() => {}
            ("security_groups", _) => {
                return Err(
                    "a rule resource takes one source security group; the rule names several"
                        .to_owned(),
                );
            }
            (_, Value::Null) => {}
            (_, Value::Array(items)) if items.is_empty() => {}
            _ => {
                attributes.insert(name.clone(), value.clone());
            }
        }
    }
    for source in ["cidr_blocks", "ipv6_cidr_blocks", "prefix_list_ids"] {
        if let Some(Value::Array(items)) = attributes.get(source) {
            sources.extend(items.iter().filter_map(|v| v.as_str().map(str::to_owned)));
        }
    }
    if let Some(Value::String(source)) = attributes.get("source_security_group_id") {
        sources.push(source.clone());
    }
    let text = |name: &str| match attributes.get(name) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    let (protocol, from, to) = (text("protocol"), text("from_port"), text("to_port"));
    if protocol.is_empty() || from.is_empty() || to.is_empty() || sources.is_empty() {
        return Err(
            "the added rule lacks a protocol, ports or a source; no rule resource can name it"
                .to_owned(),
        );
    }
    let id = format!(
        "{group_id}_{}_{protocol}_{from}_{to}_{}",
        block.block,
        sources.join("_")
    );
    Ok(RuleResource {
        file: sibling.file.clone(),
        name: free_name(
            project,
            &format!(
                "{}_{}_{}",
                group.name,
                block.block,
                from.replace('-', "all")
            ),
        ),
        id,
        attributes,
    })
}

/// `base`, or `base_2`, `base_3`... when the root module has a rule resource of that name.
fn free_name(project: &Project, base: &str) -> String {
    let taken = |name: &str| {
        project.instances().any(|i| {
            i.module.is_none() && i.resource_type == "aws_security_group_rule" && i.name == name
        })
    };
    (1..)
        .map(|n| {
            if n == 1 {
                base.to_owned()
            } else {
                format!("{base}_{n}")
            }
        })
        .find(|name| !taken(name))
        .unwrap_or_else(|| base.to_owned())
}
