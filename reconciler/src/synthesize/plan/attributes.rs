//! The deterministic planner: turns the absorbed parts of each intent into edit-tool calls,
//! through the same typed tool calls ([`ToolCall`]) a language-model agent makes.
//!
//! Where an attribute's value comes from decides where it is edited (`place::Place`, which
//! maps each place to its call): a variable used once is edited at its default or tfvars entry, a module input at the call site, and a
//! value shared with other resources, or computed by an expression, is overridden at the use
//! site with a warning. Ids of resources Terraform manages are written as references
//! (`vpc_id = aws_vpc.main.id`). Out-of-band creations become a resource block plus an
//! `import` block, deletions a removed resource block, and ignored values an
//! `ignore_changes` entry.

use crate::intents::{BlockOp, Delta, Intent, Lifecycle};
use crate::policy::{Decision, Part, Ruling};
use crate::synthesize::defaults::drop_defaults;
use crate::synthesize::edit::{
    AddBlock, FilterForEach, IgnoreChanges, ImportResource, Instance, NewBlock, Ordered,
    RemoveBlock, RemoveCollectionEntry, RemoveResource, SetAttribute, SetTags, Step as EditStep,
    SwitchOff, TagMode, Target, ToolCall, UpdateBlock, Value as EditValue, selector_text,
};
use crate::synthesize::idiom::{Idiom, order};
use crate::synthesize::nested::block_match;
use crate::synthesize::place::{
    Removal, Written, entry_path, new_input, place_of, removal_of, same_block, set_attribute,
    shared_by_instances, split_blocks, thread_input,
};
use crate::synthesize::rules::{RuleResource, separate_rule};
use crate::synthesize::settled::{InCode, Settled};
use crate::synthesize::tags::{TagSite, block_target, key_json, site};
use crate::terraform::config::{DefaultTags, Project, ResourceInstance, default_tags};
use crate::terraform::state::{Mode, StateIndex};
use crate::terraform::values::string_map;
use knowledge::catalog::Catalog;
use knowledge::schema::{AttrType, Member, ProviderSchema, ResourceSchema};
use serde::Serialize;
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};

/// One edit-tool call and why it was chosen.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// The intent it serves.
    pub intent: String,
    /// The resource address (or type and identity for a new resource).
    pub resource: String,
    /// The part of the delta it reconciles.
    pub part: Part,
    /// The edit-tool call (`tool` and `input` in JSON).
    #[serde(flatten)]
    pub call: ToolCall,
    /// Why this place was edited, in words.
    pub why: String,
    /// Whether the edit is at the value's source (a variable, tfvars entry, module argument or
    /// the literal itself) rather than an override of an expression at the use site.
    pub at_source: bool,
    /// A caution for the reviewer, e.g. that a shared value was overridden at one use site.
    pub warning: Option<String>,
}

/// A part of an intent the planner made no edit for, with the reason: it could not (see
/// [`Plan::unplanned`]) or the code already holds it (see [`Plan::settled`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unplanned {
    /// The intent.
    pub intent: String,
    /// The resource.
    pub resource: String,
    /// The part.
    pub part: Part,
    /// Why not.
    pub reason: String,
}

/// The planner's result for a set of intents.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Plan {
    /// Edit-tool calls, in order.
    pub steps: Vec<Step>,
    /// Parts that could not be planned.
    pub unplanned: Vec<Unplanned>,
    /// Parts the code already holds (an import block for a created id, a value already
    /// written): nothing to do, as on a second run over the same trail.
    pub settled: Vec<Unplanned>,
    /// Parts the planner could not place that edits from elsewhere (the agent's) placed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placed: Vec<Unplanned>,
}

/// What the planner reads.
pub struct Planner<'a> {
    project: &'a Project,
    state: &'a StateIndex,
    schema: &'a ProviderSchema,
    /// The file new resource blocks go to (relative to the project root).
    pub new_resources_file: String,
    /// Resources this plan creates, so other edits can refer to them.
    created: RefCell<Created>,
    /// Nested blocks this plan adds: (instance address, dotted block path), so the block's
    /// other attributes are set inside it.
    added_blocks: RefCell<Vec<(String, String)>>,
    /// What the configuration already holds.
    in_code: InCode<'a>,
    /// What the project names, for new code in its idiom.
    idiom: Idiom,
    /// The addresses the intent being planned deletes (and this plan removes).
    deleting: RefCell<HashSet<String>>,
    /// The removal calls this plan made, so one module instance is removed once.
    removals: RefCell<Vec<ToolCall>>,
    /// The default provider's `default_tags`.
    default_tags: Option<DefaultTags>,
}

type Outcome = Result<Step, String>;

/// The resources a plan creates: the address of each cloud id (the first one given), and
/// every address taken.
#[derive(Debug, Default)]
struct Created {
    by_id: HashMap<String, String>,
    addresses: HashSet<String>,
}

impl Created {
    fn add(&mut self, id: String, address: String) {
        self.addresses.insert(address.clone());
        self.by_id.entry(id).or_insert(address);
    }
}

impl<'a> Planner<'a> {
    /// A planner over a loaded project, its state and the provider schema.
    pub fn new(project: &'a Project, state: &'a StateIndex, schema: &'a ProviderSchema) -> Self {
        let new_resources_file = if project.files().contains_key("main.tf") {
            "main.tf"
        } else {
            project
                .files()
                .keys()
                .find(|f| !f.contains('/') && f.ends_with(".tf"))
                .map_or("main.tf", String::as_str)
        }
        .to_owned();
        Self {
            project,
            state,
            schema,
            new_resources_file,
            created: RefCell::new(Created::default()),
            added_blocks: RefCell::new(Vec::new()),
            in_code: InCode::new(project),
            idiom: Idiom::new(project, state),
            default_tags: default_tags(project),
            deleting: RefCell::new(HashSet::new()),
            removals: RefCell::new(Vec::new()),
        }
    }

    /// Plans every part of the intent whose ruling is absorb (edits) or ignore on a managed
    /// resource (an `ignore_changes` entry); flagged parts get no edit.
    ///
    /// Resources the intent creates are planned first, so edits elsewhere in the intent refer to
    /// them (`aws_security_group.admin.id`) rather than repeat their ids. A nested block removed
    /// and another of the same type added later (a revoke plus an authorize) is edited in place.
    pub fn plan(&self, intent: &Intent, all_rulings: &[Vec<Ruling>], plan: &mut Plan) {
        *self.deleting.borrow_mut() = intent
            .deltas
            .iter()
            .zip(all_rulings)
            .filter(|(d, rulings)| {
                d.lifecycle == Lifecycle::Deleted
                    && rulings.iter().any(|r| r.decision == Decision::Absorb)
            })
            .filter_map(|(d, _)| d.address.clone())
            .collect();
        let mut order: Vec<usize> = (0..intent.deltas.len()).collect();
        order.sort_by_key(|&i| intent.deltas[i].lifecycle != Lifecycle::Created);
        for i in order {
            let (delta, rulings) = (&intent.deltas[i], &all_rulings[i]);
            let pairs = replacements(delta, rulings);
            for ruling in rulings {
                if ruling.decision == Decision::Absorb
                    && let Some(settled) = self
                        .in_code
                        .settled(delta, &ruling.part)
                        .or_else(|| self.rule_settled(delta, &ruling.part))
                        .or_else(|| self.tags_settled(delta, &ruling.part))
                {
                    if let Some(address) = settled.imported_as {
                        let id = delta.resource.identity.clone();
                        self.created.borrow_mut().add(id, address);
                    }
                    plan.settled.push(Unplanned {
                        intent: intent.id.clone(),
                        resource: label(delta),
                        part: ruling.part.clone(),
                        reason: settled.reason,
                    });
                    continue;
                }
                let outcomes = match (ruling.decision, &ruling.part) {
                    (Decision::Flag | Decision::Rejected, _) => continue,
                    (Decision::Ignore, _) if delta.lifecycle != Lifecycle::Managed => continue,
                    (Decision::Ignore, _) => vec![self.ignore(delta, &ruling.part)],
                    (Decision::Absorb, Part::Block { index, .. })
                        if delta.lifecycle == Lifecycle::Managed =>
                    {
                        match pairs.iter().find(|(r, a)| r == index || a == index) {
                            Some((removed, added)) if removed == index => {
                                vec![self.replace_block(delta, *removed, *added)]
                            }
                            Some(_) => continue,
                            None => vec![self.block(delta, *index)],
                        }
                    }
                    (Decision::Absorb, Part::Tags) if delta.lifecycle == Lifecycle::Managed => {
                        self.tags(intent, all_rulings, i)
                    }
                    (Decision::Absorb, _) => self.absorb(delta, &ruling.part),
                };
                for outcome in outcomes {
                    match outcome {
                        Ok(mut step) => {
                            step.intent.clone_from(&intent.id);
                            step.warning = warning(ruling, step.warning.take());
                            plan.steps.push(step);
                        }
                        Err(reason) => plan.unplanned.push(Unplanned {
                            intent: intent.id.clone(),
                            resource: label(delta),
                            part: ruling.part.clone(),
                            reason,
                        }),
                    }
                }
            }
        }
    }

    fn absorb(&self, delta: &Delta, part: &Part) -> Vec<Outcome> {
        match (delta.lifecycle, part) {
            (Lifecycle::Created, _) => vec![self.create(delta)],
            (Lifecycle::Deleted, _) => self.delete(delta),
            (Lifecycle::Managed, Part::Attribute(path)) => vec![self.set(delta, path)],
            (Lifecycle::Managed, Part::Block { index, .. }) => vec![self.block(delta, *index)],
            (Lifecycle::Unmanaged, _) => vec![Err(
                "nothing to write: the resource is not managed by this project".to_owned(),
            )],
            (Lifecycle::Transient, _) => vec![Err(
                "nothing to write: the resource was created and deleted again".to_owned(),
            )],
            (Lifecycle::Managed, Part::Resource | Part::Tags) => vec![Err(
                "nothing to write for this part of a managed resource".to_owned(),
            )],
        }
    }

    /// The configuration instance behind a managed delta.
    fn instance(&self, delta: &Delta) -> Result<&ResourceInstance, String> {
        let address = delta
            .address
            .as_deref()
            .ok_or("the resource is not in the state")?;
        self.project
            .instance(address)
            .ok_or_else(|| format!("{address} is in the state but not in the configuration"))
    }

    fn resource_schema(&self, resource_type: &str) -> Option<&ResourceSchema> {
        self.schema.resource(resource_type)
    }

    fn set(&self, delta: &Delta, path: &str) -> Outcome {
        let instance = self.instance(delta)?;
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
            return Err(format!(
                "{} writes its `{first}` blocks with a `dynamic` block that gives this instance none; its collection would have to change",
                instance.address
            ));
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
        let one_module = self
            .project
            .instances()
            .filter(|i| same_block(i, instance))
            .all(|i| i.module == instance.module);
        match &instance.index {
            Some(key) if one_module && outer.is_empty() => Ok(key_json(key)),
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

    fn block(&self, delta: &Delta, index: usize) -> Outcome {
        let instance = self.instance(delta)?;
        let b = delta.blocks.get(index).ok_or("no such block change")?;
        let block = &b.block;
        if b.op == BlockOp::Added
            && let Some(rule) = separate_rule(self.project, self.state, instance, b)
        {
            return self.rule_resource(delta, index, rule?);
        }
        let fields = Value::Object(non_empty(&b.fields));
        let (call, why) = match b.op {
            BlockOp::Added => (
                ToolCall::AddBlock(AddBlock {
                    target: target(instance, &[]),
                    block: new_block(
                        block,
                        ordered(&self.refer(instance, "", &fields)),
                        Vec::new(),
                    ),
                    instance: None,
                }),
                format!("a nested `{block}` block was added outside Terraform"),
            ),
            BlockOp::Removed => (
                ToolCall::RemoveBlock(RemoveBlock {
                    target: target(instance, &[]),
                    block: block.clone(),
                    labels: Vec::new(),
                    matches: block_match(self.project, instance, block, &fields)
                        .unwrap_or_else(|| ordered(&fields)),
                }),
                format!("a nested `{block}` block was removed outside Terraform"),
            ),
        };
        let part = Part::Block {
            block: block.clone(),
            index,
        };
        Ok(step(delta, part, call, why, true, None))
    }

    /// Tag changes the provider's `default_tags` already hold, every one of them (a second
    /// run after the change was written on `default_tags`).
    fn tags_settled(&self, delta: &Delta, part: &Part) -> Option<Settled> {
        if *part != Part::Tags || delta.lifecycle != Lifecycle::Managed {
            return None;
        }
        let (own, changed) = self.split_tags(delta);
        let nothing_left =
            own.tags_set.is_empty() && own.tags_removed.is_empty() && changed.is_empty();
        nothing_left.then(|| Settled {
            reason: "the provider's default_tags already give these tags".to_owned(),
            imported_as: None,
        })
    }

    /// A rule added to a security group whose rules are separate resources, when an `import`
    /// block already brings its rule resource in (a second run over the same calls).
    fn rule_settled(&self, delta: &Delta, part: &Part) -> Option<Settled> {
        let Part::Block { index, .. } = part else {
            return None;
        };
        let block = delta
            .blocks
            .get(*index)
            .filter(|b| b.op == BlockOp::Added)?;
        let instance = self.instance(delta).ok()?;
        let rule = separate_rule(self.project, self.state, instance, block)?.ok()?;
        let address = self.in_code.imported_into(&rule.id)?;
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

    /// A block removed and another of its type added: the old block is edited in place to hold
    /// the new one's attributes, and the comment lines above it, which described it, go.
    fn replace_block(&self, delta: &Delta, removed: usize, added: usize) -> Outcome {
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

    /// The tag changes of delta `i`, at its [`TagSite`]. When the site stands for several
    /// instances, only this one's tags change, unless the intent gives every one of them the
    /// same change: then the first of them writes it once for all and the others add nothing.
    fn tags(&self, intent: &Intent, rulings: &[Vec<Ruling>], i: usize) -> Vec<Outcome> {
        let (own, defaults) = self.split_tags(&intent.deltas[i]);
        let mut outcomes = self.default_tags(intent, rulings, i, &defaults);
        if !own.tags_set.is_empty() || !own.tags_removed.is_empty() {
            outcomes.extend(self.own_tags(intent, rulings, i, &own));
        }
        outcomes
    }

    /// The tag changes of a resource's own `tags` (delta `i` with the default tags split off).
    fn own_tags(
        &self,
        intent: &Intent,
        rulings: &[Vec<Ruling>],
        i: usize,
        delta: &Delta,
    ) -> Vec<Outcome> {
        let mut site = match self
            .instance(delta)
            .and_then(|inst| site(self.project, inst))
        {
            Ok(site) => site,
            Err(reason) => return vec![self.tags_by_new_input(delta, reason)],
        };
        if site.instance.is_some() {
            let same: Vec<usize> = (0..intent.deltas.len())
                .filter(|&j| self.same_tag_change(intent, rulings, i, j, &site))
                .collect();
            let covered = site.sharers.iter().all(|address| {
                same.iter()
                    .any(|&j| intent.deltas[j].address.as_deref() == Some(address.as_str()))
            });
            if covered {
                if same.first() != Some(&i) {
                    return Vec::new();
                }
                site.instance = None;
                site.why = format!(
                    "all {} instances got the same tags outside Terraform; written once for all",
                    site.sharers.len()
                );
            }
        }
        let call = ToolCall::SetTags(SetTags {
            target: site.target,
            attribute: site.attribute,
            tags: tag_map(delta),
            mode: TagMode::Merge,
            remove: delta.tags_removed.iter().cloned().collect(),
            instance: site.instance,
        });
        vec![Ok(step(delta, Part::Tags, call, site.why, true, None))]
    }

    /// Delta `delta` with the tags the provider's `default_tags` give split off: a tag set to
    /// the value the provider already gives is not written (an override of it in the
    /// resource's own tags is removed instead, so the default shows through); a tag the
    /// resource has only from the provider, set to another value, is returned apart, for
    /// [`Planner::default_tags`].
    fn split_tags(&self, delta: &Delta) -> (Delta, BTreeMap<String, String>) {
        let mut own = delta.clone();
        let mut changed = BTreeMap::new();
        let state = delta
            .address
            .as_deref()
            .and_then(|a| self.state.instance(a));
        let (Some(defaults), Some(state)) = (&self.default_tags, state) else {
            return (own, changed);
        };
        if !default_provider(&state.provider) {
            return (own, changed);
        }
        let written = string_map(state.attributes.get("tags"));
        for (key, value) in &delta.tags_set {
            match (written.get(key), defaults.tags.get(key)) {
                (None, Some(default)) if default == value => {}
                (Some(_), Some(default)) if default == value => {
                    own.tags_removed.insert(key.clone());
                }
                (None, Some(_)) => {
                    changed.insert(key.clone(), value.clone());
                }
                _ => continue,
            }
            own.tags_set.remove(key);
        }
        (own, changed)
    }

    /// A new value of a tag the resource has from the provider's `default_tags` (`changed`,
    /// from [`Planner::split_tags`]): written on `default_tags` when every resource that has
    /// the tag from there got the same value in this intent (by the first of them), else held,
    /// since every one of them would change with it.
    fn default_tags(
        &self,
        intent: &Intent,
        rulings: &[Vec<Ruling>],
        i: usize,
        changed: &BTreeMap<String, String>,
    ) -> Vec<Outcome> {
        let Some(defaults) = &self.default_tags else {
            return Vec::new();
        };
        let delta = &intent.deltas[i];
        let mut outcomes = Vec::new();
        let mut written = Vec::new();
        for (key, value) in changed {
            let sharers: Vec<&str> = self
                .state
                .iter()
                .filter(|s| s.mode == Mode::Managed && default_provider(&s.provider))
                .filter(|s| {
                    string_map(s.attributes.get("tags_all")).contains_key(key)
                        && !string_map(s.attributes.get("tags")).contains_key(key)
                })
                .map(|s| s.address.as_str())
                .collect();
            let same: Vec<usize> = (0..intent.deltas.len())
                .filter(|&j| {
                    rulings[j]
                        .iter()
                        .any(|r| r.decision == Decision::Absorb && r.part == Part::Tags)
                        && self.split_tags(&intent.deltas[j]).1.get(key) == Some(value)
                })
                .collect();
            let missed: Vec<&str> = sharers
                .iter()
                .copied()
                .filter(|address| {
                    !same
                        .iter()
                        .any(|&j| intent.deltas[j].address.as_deref() == Some(*address))
                })
                .collect();
            let old = defaults.tags.get(key).map_or("", String::as_str);
            if !missed.is_empty() || !defaults.alone_in_file {
                let why = if missed.is_empty() {
                    format!("{} holds several `provider \"aws\"` blocks", defaults.file)
                } else {
                    format!(
                        "writing it there would change it on {} other resources too ({})",
                        missed.len(),
                        missed
                            .iter()
                            .take(3)
                            .copied()
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                outcomes.push(Err(format!(
                    "tag `{key}` comes from the provider's default_tags (\"{old}\"), and was set to \"{value}\" outside Terraform; {why}, so the change is held"
                )));
            } else if same.first() == Some(&i) {
                written.push((key.clone(), EditValue::String(value.clone())));
            }
        }
        if !written.is_empty() {
            let mut target = block_target(&defaults.file, "provider", &["aws"]);
            target.path.push(EditStep {
                block: "default_tags".to_owned(),
                labels: Vec::new(),
                matches: Ordered::default(),
            });
            let call = ToolCall::SetTags(SetTags {
                target,
                attribute: "tags".to_owned(),
                tags: Ordered(written),
                mode: TagMode::Merge,
                remove: Vec::new(),
                instance: None,
            });
            let why = "every resource that gets these tags from the provider's default_tags got the same new value outside Terraform; written on default_tags".to_owned();
            outcomes.push(Ok(step(delta, Part::Tags, call, why, true, None)));
        }
        outcomes
    }

    /// Tags added to one instance of a module called with `count`/`for_each` whose tags input
    /// feeds other resources too: a new module input merged over this resource's tags. Removing
    /// a tag this way is impossible (merge only adds), so `reason` stands then.
    fn tags_by_new_input(&self, delta: &Delta, reason: String) -> Outcome {
        let instance = self.instance(delta)?;
        let input = match new_input(self.project, instance, "tags") {
            Ok(input) if delta.tags_removed.is_empty() => input,
            _ => return Err(reason),
        };
        let tags: Map<String, Value> = delta
            .tags_set
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let why = format!(
            "{reason}; the new module input `{}` is merged over this resource's tags and set for this instance alone",
            input.input
        );
        Ok(step(
            delta,
            Part::Tags,
            ToolCall::ThreadModuleInput(thread_input(
                &input,
                "tags",
                "map(string)",
                true,
                &Value::Object(tags),
            )),
            why,
            true,
            None,
        ))
    }

    /// Whether delta `j` of the intent makes the same absorbed tag change as delta `i`, at the
    /// same site.
    fn same_tag_change(
        &self,
        intent: &Intent,
        rulings: &[Vec<Ruling>],
        i: usize,
        j: usize,
        site_i: &TagSite,
    ) -> bool {
        let (a, b) = (
            self.split_tags(&intent.deltas[i]).0,
            self.split_tags(&intent.deltas[j]).0,
        );
        let (a, b) = (&a, &b);
        let absorbed = rulings[j]
            .iter()
            .any(|r| r.decision == Decision::Absorb && r.part == Part::Tags);
        if !absorbed
            || b.lifecycle != Lifecycle::Managed
            || a.tags_set != b.tags_set
            || a.tags_removed != b.tags_removed
        {
            return false;
        }
        self.instance(b)
            .and_then(|inst| site(self.project, inst))
            .is_ok_and(|s| s.target == site_i.target && s.attribute == site_i.attribute)
    }

    fn ignore(&self, delta: &Delta, part: &Part) -> Outcome {
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

    fn create(&self, delta: &Delta) -> Outcome {
        let resource_type = &delta.resource.resource_type;
        let schema = self
            .resource_schema(resource_type)
            .ok_or_else(|| format!("no provider schema for {resource_type}"))?;
        let (attributes, blocks) = self.new_body(schema, delta);
        let name = self.new_name(delta);
        self.created.borrow_mut().add(
            delta.resource.identity.clone(),
            format!("{resource_type}.{name}"),
        );
        let identity: Vec<String> = Catalog::bundled()
            .natural_keys(resource_type)
            .iter()
            .flatten()
            .cloned()
            .collect();
        Ok(Step {
            intent: String::new(),
            resource: format!("{resource_type}.{name}"),
            part: Part::Resource,
            call: ToolCall::ImportResource(ImportResource {
                file: self.idiom.file_for(resource_type, &self.new_resources_file),
                resource_type: resource_type.clone(),
                name: name.clone(),
                id: delta.resource.identity.clone(),
                attributes: Ordered(
                    order(attributes, &identity)
                        .into_iter()
                        .map(|(k, v)| (k, EditValue::from_json(&v)))
                        .collect(),
                ),
                blocks,
            }),
            why: format!(
                "{} {} was created outside Terraform; importing it keeps it managed",
                resource_type, delta.resource.identity
            ),
            at_source: true,
            warning: None,
        })
    }

    /// The arguments of a new resource block: settable attributes the calls gave, ids of
    /// managed resources as references, attributes of nested blocks inside their blocks (one
    /// block holding every attribute the calls gave it: `versioning_configuration { status }`).
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
            } else {
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
    fn delete(&self, delta: &Delta) -> Vec<Outcome> {
        let outcome = self.instance(delta).and_then(|instance| {
            let deleting = self.deleting.borrow();
            let removal = removal_of(self.project, instance, &|a| deleting.contains(a));
            self.removal_step(delta, instance, removal)
        });
        if let Ok(step) = &outcome {
            let mut made = self.removals.borrow_mut();
            if made.contains(&step.call) {
                return Vec::new();
            }
            made.push(step.call.clone());
        }
        vec![outcome]
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

    /// The value of `attribute` with ids and ARNs of managed resources in the instance's module
    /// written as references (an object's keys name its own attributes).
    fn refer(&self, instance: &ResourceInstance, attribute: &str, value: &Value) -> Value {
        self.refer_in(instance.module.as_deref(), attribute, value)
    }

    fn refer_root(&self, attribute: &str, value: &Value) -> Value {
        self.refer_in(None, attribute, value)
    }

    fn refer_in(&self, module: Option<&str>, attribute: &str, value: &Value) -> Value {
        match value {
            Value::String(s) => self
                .reference(module, attribute, s)
                .map_or_else(|| value.clone(), Value::String),
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|v| self.refer_in(module, attribute, v))
                    .collect(),
            ),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.refer_in(module, k, v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// `${address.id}` when exactly one managed instance in `module` has this id (or ARN), or,
    /// when several do, exactly one whose type the attribute names (`role` → `aws_iam_role`).
    fn reference(&self, module: Option<&str>, attribute: &str, text: &str) -> Option<String> {
        if text.len() < 5 {
            return None;
        }
        if module.is_none()
            && let Some(address) = self.created.borrow().by_id.get(text)
        {
            return Some(format!("${{{address}.id}}"));
        }
        let hits: Vec<(String, &str)> = self
            .state
            .lookup(None, text)
            .into_iter()
            .filter_map(|i| {
                let local = local_address(&i.address, module)?;
                ["id", "arn"]
                    .into_iter()
                    .find(|k| i.string_attribute(k) == Some(text))
                    .map(|k| (format!("${{{local}.{k}}}"), i.resource_type.as_str()))
            })
            .collect();
        match hits.as_slice() {
            [(one, _)] => Some(one.clone()),
            [] => None,
            many => {
                let stem = type_stem(attribute);
                let mut named = many
                    .iter()
                    .filter(|(_, kind)| !stem.is_empty() && kind.ends_with(&format!("_{stem}")));
                let first = named.next()?;
                named.next().is_none().then(|| first.0.clone())
            }
        }
    }
}

/// The resource kind an attribute names: `role` → `role`, `vpc_id` → `vpc`,
/// `policy_arn` → `policy`.
fn type_stem(attribute: &str) -> &str {
    ["_ids", "_id", "_arns", "_arn", "_names", "_name"]
        .iter()
        .find_map(|suffix| attribute.strip_suffix(suffix))
        .unwrap_or(attribute)
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

/// Pairs (removed, added) of absorbed block changes of one type, each removal with the first
/// later addition not yet paired: together they replace one block.
fn replacements(delta: &Delta, rulings: &[Ruling]) -> Vec<(usize, usize)> {
    let absorbed = |i: usize| {
        rulings.iter().any(|r| {
            r.decision == Decision::Absorb
                && matches!(&r.part, Part::Block { index, .. } if *index == i)
        })
    };
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for (r, old) in delta.blocks.iter().enumerate() {
        if old.op != BlockOp::Removed || !absorbed(r) {
            continue;
        }
        let added = delta
            .blocks
            .iter()
            .enumerate()
            .skip(r + 1)
            .find(|(a, new)| {
                new.op == BlockOp::Added
                    && new.block == old.block
                    && absorbed(*a)
                    && !pairs.iter().any(|(_, taken)| taken == a)
            });
        if let Some((a, _)) = added {
            pairs.push((r, a));
        }
    }
    pairs
}

/// The address relative to `module`, when the instance is a managed resource in it.
fn local_address<'s>(address: &'s str, module: Option<&str>) -> Option<&'s str> {
    let rest = match module {
        Some(m) => address.strip_prefix(m)?.strip_prefix('.')?,
        None => address,
    };
    (!rest.starts_with("module.") && !rest.starts_with("data.")).then_some(rest)
}

fn step(
    delta: &Delta,
    part: Part,
    call: ToolCall,
    why: String,
    at_source: bool,
    warning: Option<String>,
) -> Step {
    Step {
        intent: String::new(),
        resource: label(delta),
        part,
        call,
        why,
        at_source,
        warning,
    }
}

/// A step's warning: the ruling's (the knowledge base's `warn` flags) first, then the step's
/// own (an override at the use site).
fn warning(ruling: &Ruling, own: Option<String>) -> Option<String> {
    let all: Vec<String> = ruling.warning.iter().cloned().chain(own).collect();
    (!all.is_empty()).then(|| all.join("; "))
}

fn label(delta: &Delta) -> String {
    delta
        .address
        .clone()
        .unwrap_or_else(|| delta.resource.to_string())
}

/// A value in the shape its attribute's type needs: a JSON document given as an object or
/// list (a policy a rule parsed) becomes the JSON string a `string` attribute holds, which the
/// edit tools write as `jsonencode(...)`.
fn as_typed(ty: &AttrType, value: &Value) -> Value {
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

/// The edit-tool target of an instance's block, with nested blocks by type.
fn target(instance: &ResourceInstance, blocks: &[&str]) -> Target {
    let mut target = block_target(
        &instance.file,
        "resource",
        &[&instance.resource_type, &instance.name],
    );
    target.path = blocks
        .iter()
        .map(|b| EditStep {
            block: (*b).to_owned(),
            labels: Vec::new(),
            matches: Ordered::default(),
        })
        .collect();
    target
}

/// A block to write.
fn new_block(block: &str, attributes: Ordered, blocks: Vec<NewBlock>) -> NewBlock {
    NewBlock {
        block: block.to_owned(),
        labels: Vec::new(),
        attributes,
        blocks,
    }
}

/// A JSON object's entries in order (anything else gives none).
fn ordered(value: &Value) -> Ordered {
    match EditValue::from_json(value) {
        EditValue::Object(entries) => Ordered(entries),
        _ => Ordered::default(),
    }
}

/// The directory of a file relative to the root (`""` for the root module's files).
/// Whether a state instance's provider is the AWS provider (the state index keeps its source
/// address only, so an aliased configuration of it counts too).
fn default_provider(provider: &str) -> bool {
    provider.ends_with("hashicorp/aws")
}

/// The tags a delta sets.
fn tag_map(delta: &Delta) -> Ordered {
    Ordered(
        delta
            .tags_set
            .iter()
            .map(|(k, v)| (k.clone(), EditValue::String(v.clone())))
            .collect(),
    )
}

/// Whether the configuration writes the block (a `dynamic` block) but it gives no item.
fn written_but_empty(config: &Option<Value>, block: &str) -> bool {
    config
        .as_ref()
        .and_then(|c| c.get(block))
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
}

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

/// A block's fields without nulls and empty lists, which the configuration leaves out.
fn non_empty(fields: &Map<String, Value>) -> Map<String, Value> {
    fields
        .iter()
        .filter(|(_, v)| !matches!(v, Value::Null) && v.as_array().is_none_or(|a| !a.is_empty()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
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
    use crate::intents::{BlockDelta, ResourceKey, Risk};
    use serde_json::json;
    use std::collections::{BTreeMap, BTreeSet};

    fn rule(op: BlockOp, port: u16) -> BlockDelta {
        let fields = json!({"from_port": port, "to_port": port, "protocol": "tcp"});
        BlockDelta {
            op,
            block: "ingress".to_owned(),
            fields: fields.as_object().cloned().unwrap_or_default(),
            flags: Vec::new(),
        }
    }

    fn delta(blocks: Vec<BlockDelta>) -> Delta {
        Delta {
            resource: ResourceKey {
                resource_type: "aws_security_group".to_owned(),
                identity: "sg-1".to_owned(),
            },
            address: Some("aws_security_group.g".to_owned()),
            lifecycle: Lifecycle::Managed,
            attributes: BTreeMap::new(),
            blocks,
            tags_set: BTreeMap::new(),
            tags_removed: BTreeSet::new(),
            rules: BTreeSet::new(),
            risk: Risk::Low,
            flags: Vec::new(),
            evidence: Vec::new(),
        }
    }

    fn ruling(index: usize, decision: Decision) -> Ruling {
        Ruling {
            part: Part::Block {
                block: "ingress".to_owned(),
                index,
            },
            decision,
            reason: String::new(),
            warning: None,
        }
    }

    #[test]
    fn a_removal_pairs_with_the_next_absorbed_addition_of_its_type() {
        // Revoke 80, authorize 443 (flagged), authorize 8443, revoke 22.
        let d = delta(vec![
            rule(BlockOp::Removed, 80),
            rule(BlockOp::Added, 443),
            rule(BlockOp::Added, 8443),
            rule(BlockOp::Removed, 22),
        ]);
        let rulings = [
            ruling(0, Decision::Absorb),
            ruling(1, Decision::Flag),
            ruling(2, Decision::Absorb),
            ruling(3, Decision::Absorb),
        ];
        assert_eq!(replacements(&d, &rulings), [(0, 2)]);
        // Flagged removals are not replaced.
        let rulings = [
            ruling(0, Decision::Flag),
            ruling(1, Decision::Absorb),
            ruling(2, Decision::Absorb),
            ruling(3, Decision::Absorb),
        ];
        assert!(replacements(&d, &rulings).is_empty());
    }

    #[test]
    fn attributes_name_the_type_they_refer_to() {
        assert_eq!(type_stem("role"), "role");
        assert_eq!(type_stem("vpc_id"), "vpc");
        assert_eq!(type_stem("vpc_security_group_ids"), "vpc_security_group");
        assert_eq!(type_stem("policy_arn"), "policy");
    }

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

    #[test]
    fn a_rulings_warning_comes_before_the_steps_own() {
        let mut r = ruling(0, Decision::Absorb);
        let own = || Some("overridden at the use site".to_owned());
        assert_eq!(warning(&r, None), None);
        assert_eq!(warning(&r, own()), own());
        r.warning = Some("suspends versioning".to_owned());
        assert_eq!(warning(&r, None).as_deref(), Some("suspends versioning"));
        assert_eq!(
            warning(&r, own()).as_deref(),
            Some("suspends versioning; overridden at the use site")
        );
    }

    fn project(main_tf: &str) -> Project {
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

    fn plan_attributes(project: &Project, d: &Delta) -> Plan {
        let state = empty_state();
        let schema = ProviderSchema::bundled().expect("bundled schema");
        let planner = Planner::new(project, &state, schema);
        let rulings: Vec<Ruling> = d
            .attributes
            .keys()
            .map(|path| Ruling {
                part: Part::Attribute(path.clone()),
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

    #[test]
    fn a_nested_block_added_to_one_instance_of_a_shared_block_selects_its_key() {
        let main = "resource \"aws_dynamodb_table\" \"t\" {\n  for_each = toset([\"a\", \"b\"])\n  name     = each.key\n}\n";
        let p = project(main);
        let plan = plan_attributes(&p, &table_delta("aws_dynamodb_table.t[\"a\"]"));
        assert!(plan.unplanned.is_empty(), "{:?}", plan.unplanned);
        let mut files = crate::synthesize::edit::Files::new();
        files.insert("main.tf".to_owned(), main.to_owned());
        for step in &plan.steps {
            let call = serde_json::to_value(&step.call).unwrap_or_default();
            let input = call["input"].to_string();
            let done = crate::synthesize::edit::run_tool(step.call.name(), &input, &files)
                .unwrap_or_else(|e| panic!("{input}: {e}"));
            files.extend(done.files);
        }
        assert_eq!(
            files["main.tf"],
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
