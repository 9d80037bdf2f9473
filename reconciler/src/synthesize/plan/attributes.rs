//! Attributes and nested blocks of managed resources: a value written at its place, a nested
//! block added, removed or replaced, a security group rule written as its own resource, and
//! an `ignore_changes` entry for an ignored value.

use super::planner::{NewEntry, Outcome, Planner, step, target};
use crate::intents::{BlockOp, Delta, same_value};
use crate::policy::Part;
use crate::synthesize::edit::{
    AddBlock, AddCollectionEntry, Container, IgnoreChanges, ImportResource, Instance, NewBlock,
    Ordered, RemoveBlock, RemoveCollectionEntry, SetCollectionEntry, Step as EditStep, Target,
    ToolCall, UpdateBlock, Value as EditValue, selector_text,
};
use crate::synthesize::idiom::order;
use crate::synthesize::nested::block_match;
use crate::synthesize::place::{
    Place, Written, entry_path, for_each_entry, in_one_module, place_of, resource_block,
    set_attribute, shared_by_instances, split_blocks,
};
use crate::synthesize::rules::{NewRule, RuleEntry, RuleResource, separate_rule};
use crate::synthesize::settled::{Settled, blocks, holds, is_empty};
use crate::synthesize::tags::key_json;
use crate::terraform::config::{Collection, Provenance, ResourceInstance};
use crate::terraform::state::{IndexKey, PathStep};
use knowledge::schema::{AttrType, Member};
use serde_json::{Map, Value};

impl Planner<'_> {
    pub(super) fn set(&self, delta: &Delta, path: &str) -> Outcome {
        let instance = self.instance(delta)?;
        if let Some(reason) = self.conflicting(delta, instance, path) {
            return Err(reason);
        }
        let change = &delta.attributes[path];
        let schema = self.resource_schema(&instance.resource_type);
        let attribute = schema.and_then(|s| s.member(path)).and_then(|m| match m {
            Member::Attribute(a) => Some(a),
            _ => None,
        });
        let is_set = attribute.is_some_and(|a| matches!(a.ty, AttrType::Set(_)));
        let kept = if is_set {
            in_old_order(change.before.as_ref(), &change.after)
        } else {
            attribute.map_or_else(|| change.after.clone(), |a| as_typed(&a.ty, &change.after))
        };
        let value = &kept;
        let (blocks, name) = split_blocks(schema, path);
        if present_depth(&instance.attributes.to_json(), &blocks) < blocks.len() {
            return self.add_nested(delta, instance, &blocks, &name, value);
        }
        let place = place_of(self.project, instance, &blocks, &name);
        let ty = attribute.map_or_else(|| "any".to_owned(), |a| a.ty.to_string());
        let edit = place.edit(Written {
            target: target(instance, &blocks),
            name: &name,
            value,
            referred: &self.refer(instance, &name, value),
            ty: &ty,
        })?;
        Ok(step(
            delta,
            Part::Attribute(path.to_owned()),
            edit.call,
            edit.why,
            edit.at_source,
            edit.warning,
        ))
    }

    /// Adds a nested block the configuration does not have yet, holding the attribute; an
    /// attribute of a block an earlier step of this plan added is set inside that block (so
    /// `ttl.attribute_name` and `ttl.enabled` make one `ttl` block, not two). Refused when the
    /// resource block has several instances (the block would be added to every one of them)
    /// or when the block is written as a `dynamic` block that gives this instance none.
    fn add_nested(
        &self,
        delta: &Delta,
        instance: &ResourceInstance,
        blocks: &[&str],
        name: &str,
        value: &Value,
    ) -> Outcome {
        let config = instance.attributes.to_json();
        let present = present_depth(&config, blocks).max(self.added_depth(instance, blocks));
        let (outer, inner) = blocks.split_at(present);
        let part = Part::Attribute(format!("{}.{name}", blocks.join(".")));
        let value = self.refer(instance, name, value);
        let Some((first, deeper)) = inner.split_first() else {
            return Ok(step(
                delta,
                part,
                set_attribute(self.added_target(instance, blocks), name, &value, None),
                format!(
                    "the `{}` block was added by an earlier step",
                    blocks.join(".")
                ),
                true,
                None,
            ));
        };
        let alone = match shared_by_instances(self.project, instance) {
            None => None,
            Some(n) => Some(self.instance_alone(instance, n, first, outer)?),
        };
        let dynamic = outer.is_empty()
            && (written_but_empty(&config, first)
                || self.project.writes_dynamic(&instance.address, first));
        if dynamic {
            let unmade = |why: String| {
                format!(
                    "{} writes its `{first}` blocks with a `dynamic` block that gives this instance none; {why}",
                    instance.address
                )
            };
            if !deeper.is_empty() {
                return Err(unmade("its collection would have to change".to_owned()));
            }
            let (call, why) = self
                .entry_like_siblings(delta, instance, first, name, &value)
                .map_err(unmade)?;
            return Ok(step(delta, part, call, why, true, None));
        }
        let mut body = new_block(
            deeper.last().unwrap_or(first),
            Ordered(vec![(name.to_owned(), EditValue::from_json(&value))]),
            Vec::new(),
        );
        if let Some((_, middle)) = deeper.split_last() {
            for block in middle.iter().rev() {
                body = new_block(block, Ordered::default(), vec![body]);
            }
            body = new_block(first, Ordered::default(), vec![body]);
        }
        self.added_blocks
            .borrow_mut()
            .push((instance.address.clone(), blocks.join(".")));
        let why = match &alone {
            None => format!("the configuration has no `{first}` block yet"),
            Some(_) => format!(
                "the configuration has no `{first}` block yet; {} is one of several instances of one block, so a `dynamic` block gives it to this instance alone",
                instance.address
            ),
        };
        Ok(step(
            delta,
            part,
            ToolCall::AddBlock(AddBlock {
                target: target(instance, outer),
                block: body,
                instance: alone,
            }),
            why,
            true,
            None,
        ))
    }

    /// The edit that gives this instance the nested block `first` (holding `name` = `value`)
    /// that a `dynamic` block gives the block's other instances from a field of their entry
    /// in the `for_each` collection: learnt from a sibling instance that has the block, whose
    /// argument traces to its own entry (`tables["idempotency"].ttl_attribute`), and made at
    /// this instance's entry. An argument the content writes as a literal needs no edit of
    /// its own when the siblings hold the value wanted: its step is the traced argument's
    /// edit again, which then finds it made.
    fn entry_like_siblings(
        &self,
        delta: &Delta,
        instance: &ResourceInstance,
        first: &str,
        name: &str,
        value: &Value,
    ) -> Result<(ToolCall, String), String> {
        let Some(IndexKey::Str(own)) = &instance.index else {
            return Err("it is not an instance of a for_each".to_owned());
        };
        let siblings = self.project.instances().filter(|i| {
            i.module == instance.module
                && i.resource_type == instance.resource_type
                && i.name == instance.name
                && i.address != instance.address
        });
        for sibling in siblings {
            let Some(IndexKey::Str(theirs)) = &sibling.index else {
                continue;
            };
            let traced = |argument: &str| {
                let found = self.entry_of(&sibling.address, first, 0, argument)?;
                let mut path = found.path;
                (path.first() == Some(&PathStep::Key(theirs.clone()))).then(|| {
                    path[0] = PathStep::Key(own.clone());
                    (found.file, found.collection, path)
                })
            };
            let entry =
                |file: String, collection: Collection, path: Vec<PathStep>, value: &Value| {
                    match for_each_entry(
                        own,
                        &file,
                        &collection,
                        &path,
                        &resource_block(instance),
                        "the resource",
                    ) {
                        Place::CollectionEntry {
                            file,
                            container,
                            path,
                            ..
                        } => Some(ToolCall::SetCollectionEntry(SetCollectionEntry {
                            file,
                            container,
                            path: entry_path(&path),
                            value: EditValue::from_json(value),
                        })),
                        _ => None,
                    }
                };
            if let Some((file, collection, path)) = traced(name)
                && let Some(call) = entry(file, collection, path, value)
            {
                let why = format!(
                    "the `dynamic \"{first}\"` block makes {}'s `{first}` from its entry, as it does for {}; the entry of {own} is set so it makes one",
                    instance.address, sibling.address
                );
                return Ok((call, why));
            }
            let configured = sibling.attributes.to_json().unwrap_or(Value::Null);
            let Some(block) = blocks(&configured, first).into_iter().next() else {
                continue;
            };
            if !block.get(name).is_some_and(|have| same_value(have, value)) {
                continue;
            }
            // A literal of the content: the block comes with the traced argument's entry.
            for argument in block.keys() {
                let wanted = delta.attributes.get(&format!("{first}.{argument}"));
                if let (Some(wanted), Some((file, collection, path))) = (wanted, traced(argument))
                    && let Some(call) = entry(file, collection, path, &wanted.after)
                {
                    let why = format!(
                        "the `dynamic \"{first}\"` block writes `{name}` as {value} for every block it makes; the entry that makes {}'s `{first}` is its `{argument}`",
                        instance.address
                    );
                    return Ok((call, why));
                }
            }
        }
        Err("no other instance has the block made from a field of its entry".to_owned())
    }

    /// The nested block `blocks` an earlier step of this plan added, as a target: for one of
    /// several instances of a block, the `content` of the `dynamic` block that gives it to this
    /// instance alone.
    fn added_target(&self, instance: &ResourceInstance, blocks: &[&str]) -> Target {
        let (Some(_), Some(key), Some((first, rest))) = (
            shared_by_instances(self.project, instance),
            &instance.index,
            blocks.split_first(),
        ) else {
            return target(instance, blocks);
        };
        let mut added = target(instance, &[]);
        let selector = EditValue::String(selector_text(&key_json(key)));
        added.path = vec![
            EditStep {
                block: "dynamic".to_owned(),
                labels: vec![(*first).to_owned()],
                matches: Ordered(vec![("for_each".to_owned(), selector)]),
            },
            EditStep {
                block: "content".to_owned(),
                labels: Vec::new(),
                matches: Ordered::default(),
            },
        ];
        added.path.extend(target(instance, rest).path);
        added
    }

    /// The instance a nested block added to one of `n` instances of a block is given to alone
    /// (by a `dynamic` block selecting its key): refused inside a nested block (`outer`), and
    /// for a block written in a module used several times, which has no key of its own.
    fn instance_alone(
        &self,
        instance: &ResourceInstance,
        n: usize,
        first: &str,
        outer: &[&str],
    ) -> Result<Instance, String> {
        let refuse = || {
            format!(
                "{} is one of {n} instances of one block; a `{first}` block added to it would be added to all of them",
                instance.address
            )
        };
        match &instance.index {
            Some(key) if in_one_module(self.project, instance) && outer.is_empty() => {
                Ok(key_json(key))
            }
            _ => Err(refuse()),
        }
    }

    /// How many of the nested blocks `blocks` (each inside the one before) earlier steps of
    /// this plan added to the instance.
    fn added_depth(&self, instance: &ResourceInstance, blocks: &[&str]) -> usize {
        let added = self.added_blocks.borrow();
        (1..=blocks.len())
            .rev()
            .find(|&depth| {
                let prefix = blocks[..depth].join(".");
                added.iter().any(|(a, b)| {
                    *a == instance.address && (*b == prefix || b.starts_with(&format!("{prefix}.")))
                })
            })
            .unwrap_or(0)
    }

    pub(super) fn block(&self, delta: &Delta, index: usize) -> Vec<Outcome> {
        match self.new_rule(delta, index) {
            Some(Ok(NewRule::Entry(entry))) => self.rule_entry(delta, index, entry),
            Some(Ok(NewRule::Resource(rule))) => vec![self.rule_resource(delta, index, rule)],
            Some(Err(reason)) => vec![Err(reason)],
            None => vec![self.nested_block(delta, index)],
        }
    }

    /// The rule to write for a block added to a security group whose rules are separate
    /// resources; `None` for any other block change.
    fn new_rule(&self, delta: &Delta, index: usize) -> Option<Result<NewRule, String>> {
        let instance = self.instance(delta).ok()?;
        let b = delta.blocks.get(index)?;
        if b.op != BlockOp::Added {
            return None;
        }
        separate_rule(self.project, self.state, instance, b)
    }

    /// A nested block added or removed: written in the resource block, or in the collection
    /// its `dynamic` block iterates.
    fn nested_block(&self, delta: &Delta, index: usize) -> Outcome {
        let instance = self.instance(delta)?;
        let b = delta.blocks.get(index).ok_or("no such block change")?;
        let block = &b.block;
        let fields = Value::Object(non_empty(&b.fields));
        let part = Part::Block {
            block: block.clone(),
            index,
        };
        let (call, why) = match b.op {
            BlockOp::Added => {
                let beside = match self.project.writes_dynamic(&instance.address, block) {
                    false => String::new(),
                    true => match self.dynamic_addition(instance, block, &fields) {
                        Ok(entry) => return Ok(step(delta, part, entry.0, entry.1, true, None)),
                        Err(reason) => format!(
                            "; written beside the `dynamic \"{block}\"` block, since {reason}"
                        ),
                    },
                };
                (
                    ToolCall::AddBlock(AddBlock {
                        target: target(instance, &[]),
                        block: new_block(
                            block,
                            ordered(&self.refer(instance, "", &fields)),
                            Vec::new(),
                        ),
                        instance: None,
                    }),
                    format!("a nested `{block}` block was added outside Terraform{beside}"),
                )
            }
            BlockOp::Removed if self.project.writes_dynamic(&instance.address, block) => {
                self.dynamic_removal(instance, block, &fields)?
            }
            BlockOp::Removed => (
                ToolCall::RemoveBlock(RemoveBlock {
                    target: target(instance, &[]),
                    block: block.clone(),
                    labels: Vec::new(),
                    matches: fields
                        .as_object()
                        .and_then(|f| block_match(self.project, instance, block, f))
                        .unwrap_or_else(|| ordered(&fields)),
                }),
                format!("a nested `{block}` block was removed outside Terraform"),
            ),
        };
        Ok(step(delta, part, call, why, true, None))
    }

    /// The removal of a nested block a `dynamic` block writes: the entry of the collection
    /// it iterates that made the block, when that collection is a root variable's value or a
    /// root local the code writes as a literal and no other expression reads. A list entry's
    /// position counts out the entries earlier steps of this plan removed from that list.
    fn dynamic_removal(
        &self,
        instance: &ResourceInstance,
        block: &str,
        fields: &Value,
    ) -> Result<(ToolCall, String), String> {
        let refuse = |why: &str| {
            format!(
                "{} writes its `{block}` blocks with a `dynamic` block; {why}",
                instance.address
            )
        };
        let configured = instance.attributes.to_json().unwrap_or(Value::Null);
        let evaluated = blocks(&configured, block);
        let holding: Vec<usize> = (0..evaluated.len())
            .filter(|i| fields.as_object().is_some_and(|f| holds(evaluated[*i], f)))
            .collect();
        let [index] = holding[..] else {
            return Err(refuse(&format!(
                "the removed block is {} of the blocks it makes, not one",
                holding.len()
            )));
        };
        let traced = evaluated[index]
            .keys()
            .find_map(|field| self.entry_of(&instance.address, block, index as u64, field));
        let Some(EntryOf {
            key,
            file,
            collection,
            path,
        }) = traced
        else {
            return Err(refuse(
                "its content reads no entry of a collection the code writes, so the entry that made this block is for a person to find",
            ));
        };
        let what = self
            .iterated_alone(instance, block, &collection)
            .map_err(|why| refuse(&why))?;
        let entry = for_each_entry(
            &key,
            &file,
            &collection,
            &path[..1],
            &resource_block(instance),
            "the resource",
        );
        let Place::CollectionEntry {
            file,
            container,
            path,
            ..
        } = entry
        else {
            return Err(refuse(
                "its entry is not written where an edit can remove it",
            ));
        };
        let path = self.unshifted(&file, &container, path);
        let call = ToolCall::RemoveCollectionEntry(RemoveCollectionEntry {
            file: file.clone(),
            container,
            path: entry_path(&path),
        });
        let why = format!(
            "a nested `{block}` block was removed outside Terraform; it is made by entry {key} of {what} in {file}, which only its `dynamic` block reads, so the entry goes"
        );
        Ok((call, why))
    }

    /// The entry of a `for_each` collection that the argument `argument` of the `index`th
    /// `block` block of `address` reads, when its provenance traces to one.
    fn entry_of(&self, address: &str, block: &str, index: u64, argument: &str) -> Option<EntryOf> {
        let steps = [
            PathStep::Key(block.to_owned()),
            PathStep::Index(index),
            PathStep::Key(argument.to_owned()),
        ];
        match self.project.provenance(address, &steps)? {
            Provenance::ForEach {
                key,
                file,
                collection,
                path,
                ..
            } => Some(EntryOf {
                key,
                file,
                collection,
                path,
            }),
            _ => None,
        }
    }

    /// The root variable or local (`var.rules`) a `dynamic "block"` block of the instance
    /// iterates, when no other block, call or output reads it; otherwise why not.
    fn iterated_alone(
        &self,
        instance: &ResourceInstance,
        block: &str,
        collection: &Collection,
    ) -> Result<String, String> {
        let (root, name) = match collection {
            Collection::Variable {
                module: None, name, ..
            } => ("var", name),
            Collection::Local {
                module: None, name, ..
            } => ("local", name),
            _ => {
                return Err(
                    "it iterates a collection written in the block itself or in a module, which is for a person to edit"
                        .to_owned(),
                );
            }
        };
        let what = format!("{root}.{name}");
        let this = format!(
            "{}.{}/dynamic.{block}",
            instance.resource_type, instance.name
        );
        let others: Vec<String> = self
            .project
            .readers(None, root, name)
            .into_iter()
            .filter(|reader| *reader != this)
            .collect();
        match others.as_slice() {
            [] => Ok(what),
            _ => Err(format!(
                "{what} is also read by {}, which would change too",
                others.join(", ")
            )),
        }
    }

    /// The entry a nested block added outside Terraform takes in the root list a `dynamic`
    /// block writes the block type from, when only that block reads the list and each argument
    /// of its content reads a field of the entry or holds the value the new block has: the
    /// arguments are learnt from the first block the list makes, and the new entry's fields
    /// are written in that entry's types (a number as a string in a list of string maps).
    fn dynamic_addition(
        &self,
        instance: &ResourceInstance,
        block: &str,
        fields: &Value,
    ) -> Result<(ToolCall, String), String> {
        let configured = instance.attributes.to_json().unwrap_or(Value::Null);
        let Some(first) = blocks(&configured, block).into_iter().next() else {
            return Err("it makes no block yet to learn its entries' fields from".to_owned());
        };
        let new = fields.as_object().cloned().unwrap_or_default();
        if let Some(extra) = new.keys().find(|k| !first.contains_key(*k)) {
            return Err(format!("its content does not write `{extra}`"));
        }
        let mut entry = Map::new();
        let mut traced = None;
        for (argument, have) in first {
            let found = self.entry_of(&instance.address, block, 0, argument);
            match (found, new.get(argument)) {
                (
                    Some(EntryOf {
                        key,
                        file,
                        collection,
                        path,
                    }),
                    want,
                ) => {
                    let (Some(PathStep::Index(_)), Some(PathStep::Key(field)), None) =
                        (path.first(), path.get(1), path.get(2))
                    else {
                        return Err(format!(
                            "its `{argument}` is not one field of an entry of a list"
                        ));
                    };
                    let value = want.cloned().unwrap_or_else(|| empty_like(have));
                    entry.insert(field.clone(), value);
                    traced = Some((key, file, collection, path));
                }
                (_, Some(want)) if same_value(have, want) => {}
                (_, None) if is_empty(have) => {}
                _ => {
                    return Err(format!(
                        "its `{argument}` does not come from the entry and differs from the new block's"
                    ));
                }
            }
        }
        let Some((key, file, collection, path)) = traced else {
            return Err("its content reads no field of the entries".to_owned());
        };
        let what = self.iterated_alone(instance, block, &collection)?;
        let typed = self.typed_like_entries(&collection, entry);
        let Place::CollectionEntry {
            file, container, ..
        } = for_each_entry(
            &key,
            &file,
            &collection,
            &path[..1],
            &resource_block(instance),
            "the resource",
        )
        else {
            return Err(format!("{what} is not written where an edit can add to it"));
        };
        let call = ToolCall::AddCollectionEntry(AddCollectionEntry {
            file: file.clone(),
            container,
            path: Vec::new(),
            value: EditValue::from_json(&Value::Object(typed)),
        });
        let why = format!(
            "a nested `{block}` block was added outside Terraform; the `dynamic` block that writes them iterates {what} in {file}, which only it reads, so the block is a new entry there"
        );
        Ok((call, why))
    }

    /// `entry`'s fields in the types the collection's first entry gives them: a number or
    /// bool as a string where that entry has a string (a list of string maps).
    fn typed_like_entries(
        &self,
        collection: &Collection,
        entry: Map<String, Value>,
    ) -> Map<String, Value> {
        let value = match collection {
            Collection::Variable { name, .. } => self.project.variable(None, name).map(|v| v.value),
            Collection::Local { name, .. } => self.project.local(None, name).map(|l| l.value),
            Collection::InPlace { .. } => None,
        };
        let first = value
            .and_then(|v| v.to_json())
            .and_then(|v| v.get(0).cloned())
            .unwrap_or(Value::Null);
        entry
            .into_iter()
            .map(|(field, value)| {
                let stringly = first.get(&field).is_some_and(Value::is_string);
                let value = match value {
                    Value::Number(n) if stringly => Value::String(n.to_string()),
                    Value::Bool(b) if stringly => Value::String(b.to_string()),
                    other => other,
                };
                (field, value)
            })
            .collect()
    }

    /// `path` into a list with the entries earlier steps of this plan removed from the same
    /// list (`file`, `container`) before its position counted out; recorded for later steps.
    fn unshifted(&self, file: &str, container: &Container, path: Vec<PathStep>) -> Vec<PathStep> {
        let Some(&PathStep::Index(position)) = path.first() else {
            return path;
        };
        let mut removed = self.entries_removed.borrow_mut();
        let before = removed
            .iter()
            .filter(|(f, c, p)| f == file && c == container && *p < position)
            .count() as u64;
        removed.push((file.to_owned(), container.clone(), position));
        vec![PathStep::Index(position - before)]
    }

    /// A rule added to a security group whose rules are separate resources, when an `import`
    /// block already brings its rule resource in (a second run over the same calls).
    pub(super) fn rule_settled(&self, delta: &Delta, part: &Part) -> Option<Settled> {
        let Part::Block { index, .. } = part else {
            return None;
        };
        let block = delta
            .blocks
            .get(*index)
            .filter(|b| b.op == BlockOp::Added)?;
        let instance = self.instance(delta).ok()?;
        let rule = separate_rule(self.project, self.state, instance, block)?.ok()?;
        let address = self.in_code.imported_into(rule.id())?;
        Some(Settled {
            reason: format!("already in the code: an import block brings this rule into {address}"),
            imported_as: None,
        })
    }

    /// A rule added to a security group whose rules are separate resources: one more
    /// `aws_security_group_rule` beside them, imported.
    fn rule_resource(&self, delta: &Delta, index: usize, rule: RuleResource) -> Outcome {
        let address = format!("aws_security_group_rule.{}", rule.name);
        self.created
            .borrow_mut()
            .add(rule.id.clone(), address.clone());
        let attributes = order(rule.attributes, &["type".to_owned()])
            .into_iter()
            .map(|(k, v)| {
                let v = self.refer_root(&k, &v);
                (k, EditValue::from_json(&v))
            })
            .collect();
        let why = format!(
            "a rule was added outside Terraform to a security group whose rules are separate aws_security_group_rule resources; written as one more, {address}, and imported"
        );
        let part = Part::Block {
            block: delta.blocks[index].block.clone(),
            index,
        };
        let call = ToolCall::ImportResource(ImportResource {
            file: rule.file,
            resource_type: "aws_security_group_rule".to_owned(),
            name: rule.name,
            id: rule.id,
            attributes: Ordered(attributes),
            blocks: Vec::new(),
        });
        Ok(step(delta, part, call, why, true, None))
    }

    /// A rule added to a security group whose rules a module (or the root) makes by `count`
    /// from a list: one more entry in that list, where the code writes it, and an import block
    /// for the rule instance the entry makes.
    fn rule_entry(&self, delta: &Delta, index: usize, entry: RuleEntry) -> Vec<Outcome> {
        let why = format!(
            "a rule was added outside Terraform to a security group whose rules are separate aws_security_group_rule resources made from {}; written as one more entry there, which makes {}",
            entry.list, entry.address
        );
        let part = Part::Block {
            block: delta.blocks[index].block.clone(),
            index,
        };
        let new = NewEntry {
            file: entry.file,
            container: entry.container,
            value: EditValue::from_json(&Value::Object(entry.value.into_iter().collect())),
            import_file: entry.import_file,
            address: entry.address,
            id: entry.id,
        };
        self.entry_and_import(delta, part, new, why)
    }

    /// A block removed and another of its type added: the old block is edited in place to hold
    /// the new one's attributes, and the comment lines above it, which described it, go.
    pub(super) fn replace_block(&self, delta: &Delta, removed: usize, added: usize) -> Outcome {
        let instance = self.instance(delta)?;
        let (old, new) = match (delta.blocks.get(removed), delta.blocks.get(added)) {
            (Some(old), Some(new)) => (old, new),
            _ => return Err("no such block change".to_owned()),
        };
        let fields = Value::Object(non_empty(&new.fields));
        Ok(step(
            delta,
            Part::Block {
                block: old.block.clone(),
                index: removed,
            },
            ToolCall::UpdateBlock(UpdateBlock {
                target: target(instance, &[]),
                block: old.block.clone(),
                labels: Vec::new(),
                matches: ordered(&Value::Object(non_empty(&old.fields))),
                attributes: ordered(&self.refer(instance, "", &fields)),
                drop_comments: true,
            }),
            format!(
                "a nested `{}` block was replaced outside Terraform (changes {} and {}); edited in place",
                old.block,
                removed + 1,
                added + 1
            ),
            true,
            None,
        ))
    }

    pub(super) fn ignore(&self, delta: &Delta, part: &Part) -> Outcome {
        let instance = self.instance(delta)?;
        if *part == Part::Resource {
            return Err("a whole resource cannot be ignored".to_owned());
        }
        let attribute = part
            .attribute()
            .split('.')
            .next()
            .unwrap_or_default()
            .to_owned();
        Ok(step(
            delta,
            part.clone(),
            ToolCall::IgnoreChanges(IgnoreChanges {
                target: target(instance, &[]),
                attributes: vec![attribute.clone()],
            }),
            format!("`{attribute}` is owned by automation; Terraform should stop chasing it"),
            true,
            None,
        ))
    }
}

/// A set's new elements with those it had before first, in their old order, so an edit of a
/// set written as a list only appends (sets have no order; the code's order is the author's).
fn in_old_order(before: Option<&Value>, after: &Value) -> Value {
    let (Some(Value::Array(old)), Value::Array(new)) = (before, after) else {
        return after.clone();
    };
    let kept = old.iter().filter(|v| new.contains(v));
    let added = new.iter().filter(|v| !old.contains(v));
    Value::Array(kept.chain(added).cloned().collect())
}

/// A value in the shape its attribute's type needs: a JSON document given as an object or
/// list (a policy a rule parsed) becomes the JSON string a `string` attribute holds, which the
/// edit tools write as `jsonencode(...)`.
pub(super) fn as_typed(ty: &AttrType, value: &Value) -> Value {
    match (ty, value) {
        (AttrType::String, Value::Object(_) | Value::Array(_)) => Value::String(value.to_string()),
        _ => value.clone(),
    }
}

/// How many of the nested blocks `blocks` (each inside the one before) the configuration has.
fn present_depth(config: &Option<Value>, blocks: &[&str]) -> usize {
    let mut here = config.clone();
    for (depth, block) in blocks.iter().enumerate() {
        if !has_block(&here, block) {
            return depth;
        }
        here = here
            .as_ref()
            .and_then(|c| c.get(*block))
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .cloned();
    }
    blocks.len()
}

fn has_block(config: &Option<Value>, block: &str) -> bool {
    config
        .as_ref()
        .and_then(|c| c.get(block))
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
}

/// A block to write.
pub(super) fn new_block(block: &str, attributes: Ordered, blocks: Vec<NewBlock>) -> NewBlock {
    NewBlock {
        block: block.to_owned(),
        labels: Vec::new(),
        attributes,
        blocks,
    }
}

/// A JSON object's entries in order (anything else gives none).
pub(super) fn ordered(value: &Value) -> Ordered {
    match EditValue::from_json(value) {
        EditValue::Object(entries) => Ordered(entries),
        _ => Ordered::default(),
    }
}

/// Whether the configuration writes the block (a `dynamic` block) but it gives no item.
fn written_but_empty(config: &Option<Value>, block: &str) -> bool {
    config
        .as_ref()
        .and_then(|c| c.get(block))
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
}

/// A block's fields without nulls and empty lists, which the configuration leaves out.
pub(super) fn non_empty(fields: &Map<String, Value>) -> Map<String, Value> {
    fields
        .iter()
        .filter(|(_, v)| !matches!(v, Value::Null) && v.as_array().is_none_or(|a| !a.is_empty()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The entry of a `for_each` collection a value comes from (see [`Provenance::ForEach`]).
struct EntryOf {
    /// The entry's key (a list position as text).
    key: String,
    /// The file the collection is written in.
    file: String,
    /// Where the collection is written.
    collection: Collection,
    /// The path to the value inside the collection: the key, then the steps after it.
    path: Vec<PathStep>,
}

/// The value the cloud gives an unset argument of the same kind as `like`: false, an empty
/// list, map or string, or null.
fn empty_like(like: &Value) -> Value {
    match like {
        Value::Bool(_) => Value::Bool(false),
        Value::Array(_) => Value::Array(Vec::new()),
        Value::Object(_) => Value::Object(Map::new()),
        Value::String(_) => Value::String(String::new()),
        Value::Number(_) | Value::Null => Value::Null,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::intents::{Delta, Intent};
    use crate::policy::{Decision, Part, Ruling};
    use crate::synthesize::plan::model::Plan;
    use crate::synthesize::plan::planner::tests::delta;
    use crate::terraform::config::Project;
    use crate::terraform::state::StateIndex;
    use knowledge::schema::ProviderSchema;
    use serde_json::json;
    use std::collections::BTreeMap;

    pub(in crate::synthesize::plan) fn project(main_tf: &str) -> Project {
        let temp = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(temp.path().join("main.tf"), main_tf).expect("written");
        Project::load(temp.path(), &Default::default()).expect("loads")
    }

    fn empty_state() -> StateIndex {
        StateIndex::new(crate::terraform::state::State {
            origin: "test".to_owned(),
            format: crate::terraform::state::StateFormat::Tfstate,
            terraform_version: None,
            serial: None,
            lineage: None,
            outputs: BTreeMap::new(),
            instances: Vec::new(),
        })
    }

    fn table_delta(address: &str) -> Delta {
        let mut d = delta(Vec::new());
        d.resource.resource_type = "aws_dynamodb_table".to_owned();
        d.address = Some(address.to_owned());
        for (path, value) in [
            ("ttl.attribute_name", json!("expires_at")),
            ("ttl.enabled", json!(true)),
        ] {
            d.attributes.insert(
                path.to_owned(),
                crate::intents::AttributeDelta {
                    before: None,
                    after: value,
                    flags: Vec::new(),
                },
            );
        }
        d
    }

    /// The plan of every attribute and nested block of a delta, each absorbed, over an empty
    /// state.
    pub(in crate::synthesize::plan) fn plan_attributes(project: &Project, d: &Delta) -> Plan {
        let state = empty_state();
        let schema = ProviderSchema::bundled().expect("bundled schema");
        let planner = Planner::new(project, &state, schema);
        let attributes = d
            .attributes
            .keys()
            .map(|path| Part::Attribute(path.clone()));
        let blocks = d.blocks.iter().enumerate().map(|(index, b)| Part::Block {
            block: b.block.clone(),
            index,
        });
        let rulings: Vec<Ruling> = attributes
            .chain(blocks)
            .map(|part| Ruling {
                part,
                decision: Decision::Absorb,
                reason: String::new(),
                warning: None,
            })
            .collect();
        let intent = Intent {
            id: "I1".to_owned(),
            kind: crate::intents::IntentKind::Update,
            actor: String::new(),
            clients: Vec::new(),
            start: chrono::DateTime::UNIX_EPOCH,
            end: chrono::DateTime::UNIX_EPOCH,
            evidence: Vec::new(),
            deltas: vec![d.clone()],
            links: Vec::new(),
            story: String::new(),
        };
        let mut plan = Plan::default();
        planner.plan(&intent, &[rulings], &mut plan);
        plan
    }

    #[test]
    fn a_missing_nested_block_is_added_once_with_all_its_attributes() {
        let p = project("resource \"aws_dynamodb_table\" \"t\" {\n  name = \"t\"\n}\n");
        let plan = plan_attributes(&p, &table_delta("aws_dynamodb_table.t"));
        assert!(plan.unplanned.is_empty(), "{:?}", plan.unplanned);
        let tools: Vec<&str> = plan.steps.iter().map(|s| s.call.name()).collect();
        assert_eq!(tools, ["add_block", "set_attribute"]);
        let second = serde_json::to_value(&plan.steps[1].call).unwrap_or_default();
        assert_eq!(second["input"]["target"]["path"], json!([{"block": "ttl"}]));
        assert_eq!(second["input"]["name"], json!("enabled"));
    }

    /// `main` as a plan's edits leave it.
    fn applied(main: &str, plan: &Plan) -> String {
        let mut files = crate::synthesize::edit::Files::new();
        files.insert("main.tf".to_owned(), main.to_owned());
        for step in &plan.steps {
            let call = serde_json::to_value(&step.call).unwrap_or_default();
            let input = call["input"].to_string();
            let done = crate::synthesize::edit::run_tool(step.call.name(), &input, &files)
                .unwrap_or_else(|e| panic!("{input}: {e}"));
            files.extend(done.files);
        }
        files["main.tf"].clone()
    }

    #[test]
    fn a_nested_block_added_to_one_instance_of_a_shared_block_selects_its_key() {
        let main = "resource \"aws_dynamodb_table\" \"t\" {\n  for_each = toset([\"a\", \"b\"])\n  name     = each.key\n}\n";
        let p = project(main);
        let plan = plan_attributes(&p, &table_delta("aws_dynamodb_table.t[\"a\"]"));
        assert!(plan.unplanned.is_empty(), "{:?}", plan.unplanned);
        assert_eq!(
            applied(main, &plan),
            "resource \"aws_dynamodb_table\" \"t\" {\n  for_each = toset([\"a\", \"b\"])\n  name     = each.key\n\n  dynamic \"ttl\" {\n    for_each = contains([\"a\"], each.key) ? [1] : []\n    content {\n      attribute_name = \"expires_at\"\n      enabled        = true\n    }\n  }\n}\n"
        );
    }

    #[test]
    fn a_nested_block_is_not_added_inside_a_block_the_code_writes_as_dynamic() {
        let p = project(
            "resource \"aws_dynamodb_table\" \"t\" {\n  for_each = toset([\"a\", \"b\"])\n  name     = each.key\n\n  dynamic \"ttl\" {\n    for_each = each.key == \"b\" ? [1] : []\n    content {\n      attribute_name = \"expires\"\n    }\n  }\n}\n",
        );
        let plan = plan_attributes(&p, &table_delta("aws_dynamodb_table.t[\"a\"]"));
        assert!(plan.steps.is_empty(), "{:?}", plan.steps);
        assert_eq!(plan.unplanned.len(), 2);
        assert!(
            plan.unplanned[0].reason.contains(
                "writes its `ttl` blocks with a `dynamic` block that gives this instance none"
            ),
            "{:?}",
            plan.unplanned
        );
    }

    /// A rule removed from a group whose `dynamic` block iterates a `set(number)` variable:
    /// the set is [22, 443] whatever order its default is written in, so the removed rule 22
    /// is the default's element 22, not its first element.
    #[test]
    fn a_block_removed_from_a_dynamic_block_over_a_set_removes_its_element() {
        let main = "variable \"ports\" {\n  type    = set(number)\n  default = [443, 22]\n}\n\nresource \"aws_security_group\" \"g\" {\n  dynamic \"ingress\" {\n    for_each = var.ports\n    content {\n      from_port = ingress.value\n      to_port   = ingress.value\n      protocol  = \"tcp\"\n    }\n  }\n}\n";
        let fields = json!({"from_port": 22, "to_port": 22, "protocol": "tcp"});
        let removed = crate::intents::BlockDelta {
            op: crate::intents::BlockOp::Removed,
            block: "ingress".to_owned(),
            fields: fields.as_object().cloned().unwrap_or_default(),
            flags: Vec::new(),
        };
        let plan = plan_attributes(&project(main), &delta(vec![removed]));
        assert!(plan.unplanned.is_empty(), "{:?}", plan.unplanned);
        assert_eq!(applied(main, &plan), main.replace("[443, 22]", "[443]"));
    }

    #[test]
    fn set_elements_keep_their_old_order() {
        let before = json!(["sg-b", "sg-a", "sg-gone"]);
        let after = json!(["sg-a", "sg-new", "sg-b"]);
        assert_eq!(
            in_old_order(Some(&before), &after),
            json!(["sg-b", "sg-a", "sg-new"])
        );
        assert_eq!(in_old_order(None, &after), after);
    }
}
