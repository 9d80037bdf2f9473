//! Resources created and deleted outside Terraform: a new resource block plus an `import`
//! block, and the removal of a deleted instance from the code.

use super::attributes::{as_typed, new_block, non_empty, ordered};
use super::model::Step;
use super::planner::{NewEntry, Outcome, Planner, step, target};
use crate::intents::{BlockOp, Delta};
use crate::policy::Part;
use crate::synthesize::defaults::{drop_defaults, is_default};
use crate::synthesize::edit::{
    AddResource, FilterForEach, ImportResource, NewBlock, Ordered, RemoveCollectionEntry,
    RemoveResource, SetAttribute, SwitchOff, Target, ToolCall, Value as EditValue,
};
use crate::synthesize::idiom::order;
use crate::synthesize::place::{Removal, entry_path, joining, removal_of, split_blocks};
use crate::synthesize::tags::{block_target, key_json};
use crate::terraform::config::ResourceInstance;
use crate::terraform::state::Mode;
use knowledge::catalog::Catalog;
use knowledge::schema::{Member, ResourceSchema};
use serde_json::{Map, Value, json};

/// Nested blocks of a new resource, built from attribute paths: each block once, holding its
/// attributes and the blocks inside it, in the order first seen.
#[derive(Default)]
struct BlockTree {
    attributes: Map<String, Value>,
    blocks: Vec<(String, BlockTree)>,
}

impl BlockTree {
    /// Puts the attribute `name` inside the nested blocks `blocks` (outermost first).
    fn insert(&mut self, blocks: &[&str], name: String, value: Value) {
        let Some((first, rest)) = blocks.split_first() else {
            self.attributes.insert(name, value);
            return;
        };
        let index = match self.blocks.iter().position(|(b, _)| b == first) {
            Some(i) => i,
            None => {
                self.blocks
                    .push(((*first).to_owned(), BlockTree::default()));
                self.blocks.len() - 1
            }
        };
        self.blocks[index].1.insert(rest, name, value);
    }

    /// The blocks to write.
    fn into_blocks(self) -> Vec<NewBlock> {
        self.blocks
            .into_iter()
            .map(|(block, tree)| {
                let BlockTree { attributes, blocks } = tree;
                let inner = BlockTree {
                    attributes: Map::new(),
                    blocks,
                };
                new_block(
                    &block,
                    ordered(&Value::Object(attributes)),
                    inner.into_blocks(),
                )
            })
            .collect()
    }
}

impl Planner<'_> {
    /// A resource created outside Terraform: a new key in the list of names a `for_each` block
    /// iterates when the object is one more like its instances, else a new resource block;
    /// imported either way.
    pub(super) fn creation(&self, delta: &Delta) -> Vec<Outcome> {
        self.joined(delta)
            .unwrap_or_else(|| vec![self.create(delta)])
    }

    /// The new name in a `for_each` block's list, and the import of the instance it makes.
    fn joined(&self, delta: &Delta) -> Option<Vec<Outcome>> {
        if !delta.blocks.is_empty() {
            return None;
        }
        let mut attributes: Map<String, Value> = delta
            .attributes
            .iter()
            .filter(|(path, _)| !path.contains('.'))
            .map(|(path, change)| (path.clone(), change.after.clone()))
            .collect();
        if !delta.tags_set.is_empty() {
            attributes.insert("tags".to_owned(), json!(delta.tags_set));
        }
        let joining = joining(self.project, &delta.resource.resource_type, &attributes)?;
        let entry = NewEntry {
            file: joining.file,
            container: joining.container,
            value: EditValue::String(joining.key),
            import_file: self.new_resources_file.clone(),
            address: joining.address,
            id: delta.resource.identity.clone(),
        };
        Some(self.entry_and_import(delta, Part::Resource, entry, joining.why))
    }

    /// A new resource block for a created object, with its import block; without one, and a
    /// warning, when the provider cannot import the type.
    pub(super) fn create(&self, delta: &Delta) -> Outcome {
        let resource_type = &delta.resource.resource_type;
        let schema = self
            .resource_schema(resource_type)
            .ok_or_else(|| format!("no provider schema for {resource_type}"))?;
        let (attributes, blocks) = self.new_body(schema, delta);
        let name = self.new_name(delta);
        let address = format!("{resource_type}.{name}");
        let id = delta.resource.identity.clone();
        self.created.borrow_mut().add(id.clone(), address.clone());
        let identity: Vec<String> = Catalog::bundled()
            .natural_keys(resource_type)
            .iter()
            .flatten()
            .cloned()
            .collect();
        let file = self.idiom.file_for(resource_type, &self.new_resources_file);
        let attributes = Ordered(
            order(attributes, &identity)
                .into_iter()
                .map(|(k, v)| (k, EditValue::from_json(&v)))
                .collect(),
        );
        let created = format!("{resource_type} {id} was created outside Terraform");
        let (call, why, warning) = match self.not_importing(delta, &id, &address) {
            Some(warning) => (
                ToolCall::AddResource(AddResource {
                    file,
                    resource_type: resource_type.clone(),
                    name,
                    attributes,
                    blocks,
                }),
                format!("{created}; declaring it keeps it managed"),
                Some(warning),
            ),
            None => (
                ToolCall::ImportResource(ImportResource {
                    file,
                    resource_type: resource_type.clone(),
                    name,
                    id,
                    attributes,
                    blocks,
                }),
                format!("{created}; importing it keeps it managed"),
                None,
            ),
        };
        Ok(Step {
            intent: String::new(),
            resource: address,
            part: Part::Resource,
            call,
            why,
            at_source: true,
            warning,
        })
    }

    /// The arguments of a new resource block: settable attributes the calls gave, ids of
    /// managed resources as references, attributes of nested blocks inside their blocks (one
    /// block holding every attribute the calls gave it: `versioning_configuration { status }`),
    /// leaving out those at the provider's documented default.
    fn new_body(
        &self,
        schema: &ResourceSchema,
        delta: &Delta,
    ) -> (Map<String, Value>, Vec<NewBlock>) {
        let mut attributes = Map::new();
        let mut nested = BlockTree::default();
        for (path, change) in &delta.attributes {
            let Some(Member::Attribute(a)) = schema.member(path) else {
                continue;
            };
            if !a.presence.is_settable() {
                continue;
            }
            let (blocks, name) = split_blocks(Some(schema), path);
            if name.contains('.') {
                continue; // a field inside an object-holding attribute: not written alone
            }
            let value = self.refer_root(&name, &as_typed(&a.ty, &change.after));
            if blocks.is_empty() {
                attributes.insert(name, value);
            } else if !is_default(&delta.resource.resource_type, path, &value) {
                nested.insert(&blocks, name, value);
            }
        }
        let mut blocks = nested.into_blocks();
        for b in delta.blocks.iter().filter(|b| b.op == BlockOp::Added) {
            let fields = Value::Object(non_empty(&b.fields));
            blocks.push(new_block(&b.block, ordered(&fields), Vec::new()));
        }
        for value in attributes.values_mut() {
            if let Some(written) = value.as_str().and_then(|s| self.idiom.string(s)) {
                *value = Value::String(written);
            }
        }
        drop_defaults(&delta.resource.resource_type, &mut attributes);
        let mut tags = match attributes.remove("tags") {
            Some(Value::Object(given)) => given,
            _ => Map::new(),
        };
        for (k, v) in &delta.tags_set {
            tags.insert(k.clone(), Value::String(v.clone()));
        }
        if let Some(tags) = self.idiom.tags(&tags) {
            attributes.insert("tags".to_owned(), tags);
        }
        (attributes, blocks)
    }

    /// A resource name from the Name tag, the name (a tag's key, for a type holding one tag)
    /// or the identity, unused in the root module.
    fn new_name(&self, delta: &Delta) -> String {
        let holds_a_tag = knowledge::catalog::Catalog::bundled()
            .entry(&delta.resource.resource_type)
            .is_some_and(|e| e.tag_of.is_some());
        let name_attribute = if holds_a_tag { "key" } else { "name" };
        let named = delta
            .attributes
            .get(name_attribute)
            .and_then(|a| a.after.as_str().map(str::to_owned));
        let base = delta
            .tags_set
            .get("Name")
            .cloned()
            .or(named)
            .unwrap_or_else(|| name_from_identity(&delta.resource));
        // A name on the project's prefix is named by the rest, as its siblings are.
        let base = match self.idiom.string(&base) {
            Some(written) => written.rsplit_once('}').map_or(base.clone(), |(_, rest)| {
                rest.trim_matches(['-', '_', '/', '.']).to_owned()
            }),
            None => base,
        };
        let mut name: String = base
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        name = name.trim_matches('_').to_owned();
        if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
            name = format!("imported_{name}");
        }
        let address = |n: &str| format!("{}.{n}", delta.resource.resource_type);
        let taken = |n: &str| {
            self.project.instances().any(|i| {
                i.module.is_none() && i.resource_type == delta.resource.resource_type && i.name == n
            }) || self.created.borrow().addresses.contains(&address(n))
        };
        let mut candidate = name.clone();
        let mut n = 2;
        while taken(&candidate) {
            candidate = format!("{name}_{n}");
            n += 1;
        }
        candidate
    }

    /// The removal of a deleted instance from the code; nothing when an earlier deletion of
    /// this plan made the same edit (the other resources of one module instance).
    pub(super) fn delete(&self, delta: &Delta) -> Vec<Outcome> {
        let mut outputs = Vec::new();
        let outcome = self.instance(delta).and_then(|instance| {
            let deleting = self.deleting.borrow();
            let removal = removal_of(self.project, instance, &|a| deleting.contains(a));
            if matches!(removal, Removal::Block) {
                outputs = self.outputs_going_with(instance)?;
            }
            self.removal_step(delta, instance, removal)
        });
        if let Ok(step) = &outcome {
            let mut made = self.removals.borrow_mut();
            if made.contains(&step.call) {
                return Vec::new();
            }
            made.push(step.call.clone());
        }
        let then = outputs.into_iter().map(|(target, name)| {
            Ok(step(
                delta,
                Part::Resource,
                ToolCall::RemoveResource(RemoveResource {
                    target,
                    keep_in_state: false,
                }),
                format!("output {name} reads only the removed resource and its module's caller does not read it, so it goes with it"),
                true,
                None,
            ))
        });
        std::iter::once(outcome).chain(then).collect()
    }

    /// The outputs of the instance's module that read its resource block, which go with the
    /// block (as targets, with their names): each must be an output of a called module that
    /// its caller does not read. Any other block referring to it (a resource, local or module
    /// call, or a root output, which is the project's interface) holds the removal, named:
    /// with the block gone the reference would not resolve. Blocks this plan removes too do
    /// not count.
    fn outputs_going_with(
        &self,
        instance: &ResourceInstance,
    ) -> Result<Vec<(Target, String)>, String> {
        let module = instance.module.as_deref();
        let referrers = self
            .project
            .referring_to(module, &instance.resource_type, &instance.name);
        let deleting = self.deleting.borrow();
        let removed_too = |block: &str| {
            let mut instances = self.project.instances().filter(|i| {
                i.module.as_deref() == module
                    && format!("{}.{}", i.resource_type, i.name) == block
                    && i.mode == Mode::Managed
            });
            instances
                .next()
                .is_some_and(|first| deleting.contains(&first.address))
                && instances.all(|i| deleting.contains(&i.address))
        };
        let mut outputs = Vec::new();
        let mut holding = Vec::new();
        for referrer in referrers {
            if removed_too(&referrer.block) {
                continue;
            }
            let output = referrer.block.strip_prefix("output.");
            match (module, output) {
                (Some(module), Some(name))
                    if self.project.reading_output(module, name).is_empty() =>
                {
                    outputs.push((
                        block_target(&referrer.file, "output", &[name]),
                        name.to_owned(),
                    ));
                }
                _ => holding.push(format!("{} ({})", referrer.block, referrer.file)),
            }
        }
        if holding.is_empty() {
            return Ok(outputs);
        }
        Err(format!(
            "{} was deleted outside Terraform, but {} {} it; with its block gone {} would refer to a resource the code no longer declares, so the deletion is for a person to make",
            instance.address,
            holding.join(", "),
            if holding.len() == 1 {
                "refers to"
            } else {
                "refer to"
            },
            if holding.len() == 1 {
                "that reference"
            } else {
                "those references"
            },
        ))
    }

    /// The edit-tool call of a removal.
    fn removal_step(
        &self,
        delta: &Delta,
        instance: &ResourceInstance,
        removal: Removal,
    ) -> Outcome {
        match removal {
            Removal::Block => Ok(step(
                delta,
                Part::Resource,
                ToolCall::RemoveResource(RemoveResource {
                    target: target(instance, &[]),
                    keep_in_state: false,
                }),
                format!("{} was deleted outside Terraform", instance.address),
                true,
                None,
            )),
            Removal::Entry {
                file,
                container,
                path,
                why,
                ..
            } => Ok(step(
                delta,
                Part::Resource,
                ToolCall::RemoveCollectionEntry(RemoveCollectionEntry {
                    file,
                    container,
                    path: entry_path(&path),
                }),
                format!("{} was deleted outside Terraform; {why}", instance.address),
                true,
                None,
            )),
            Removal::SwitchOff { input, why } => {
                let call = ToolCall::SwitchOff(SwitchOff {
                    call: input.call,
                    resource: input.resource,
                    input: input.input,
                    variables_file: input.variables_file,
                    instance: key_json(&input.key),
                });
                Ok(step(
                    delta,
                    Part::Resource,
                    call,
                    format!("{} was deleted outside Terraform; {why}", instance.address),
                    true,
                    None,
                ))
            }
            Removal::Filter { key, why } => Ok(step(
                delta,
                Part::Resource,
                ToolCall::FilterForEach(FilterForEach {
                    target: target(instance, &[]),
                    keys: vec![key],
                }),
                format!("{} was deleted outside Terraform; {why}", instance.address),
                true,
                None,
            )),
            Removal::LowerCount { count, why } => Ok(step(
                delta,
                Part::Resource,
                ToolCall::SetAttribute(SetAttribute {
                    target: target(instance, &[]),
                    name: "count".to_owned(),
                    value: EditValue::from_json(&count.into()),
                    instance: None,
                }),
                format!("{} was deleted outside Terraform; {why}", instance.address),
                true,
                None,
            )),
            Removal::Refuse { reason } => Err(reason),
        }
    }
}

/// A name for a new resource from its identity: the last part of an ARN or path (`role/app` →
/// `app`), or, when that holds no letter (a route's `rtb-1_10.0.0.0/16`), the type's short
/// name and the identity's last `_` part (`route_10_0_0_0_16`).
fn name_from_identity(resource: &crate::resolve::effect::ResourceKey) -> String {
    let id = &resource.identity;
    let last = id.rsplit([':', '/']).next().unwrap_or(id);
    if last.chars().any(|c| c.is_ascii_alphabetic()) {
        return last.to_owned();
    }
    let short = resource
        .resource_type
        .strip_prefix("aws_")
        .unwrap_or(&resource.resource_type);
    let tail = id.rsplit('_').next().unwrap_or(id);
    format!("{short}_{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn attributes_of_nested_blocks_are_written_inside_one_block_each() {
        let mut tree = BlockTree::default();
        tree.insert(
            &["versioning_configuration"],
            "status".to_owned(),
            json!("Enabled"),
        );
        tree.insert(
            &["rule", "apply_server_side_encryption_by_default"],
            "sse_algorithm".to_owned(),
            json!("AES256"),
        );
        tree.insert(&["rule"], "bucket_key_enabled".to_owned(), json!(false));
        tree.insert(
            &["versioning_configuration"],
            "mfa_delete".to_owned(),
            json!("Disabled"),
        );
        assert_eq!(
            serde_json::to_value(tree.into_blocks()).unwrap_or_default(),
            json!([
                {"block": "versioning_configuration", "attributes": {"status": "Enabled", "mfa_delete": "Disabled"}},
                {"block": "rule", "attributes": {"bucket_key_enabled": false}, "blocks": [
                    {"block": "apply_server_side_encryption_by_default", "attributes": {"sse_algorithm": "AES256"}}
                ]}
            ])
        );
    }
}
