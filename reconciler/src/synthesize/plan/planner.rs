//! The [`Planner`]: what it reads and keeps while planning, its entry point
//! ([`Planner::plan`], which sends each ruled part of an intent to the file handling it), and
//! the helpers every kind of step uses.

use super::model::{NotImported, Plan, Step, Unplanned};
use crate::intents::{BlockOp, Delta, Intent, Lifecycle};
use crate::policy::{Decision, Part, Ruling};
use crate::synthesize::edit::{
    AddCollectionEntry, AddImport, Container, Ordered, Step as EditStep, Target, ToolCall,
    Value as EditValue,
};
use crate::synthesize::idiom::Idiom;
use crate::synthesize::settled::InCode;
use crate::synthesize::tags::block_target;
use crate::terraform::config::{DefaultTags, Project, ResourceInstance, default_tags};
use crate::terraform::state::StateIndex;
use knowledge::NotImportable;
use knowledge::schema::{ProviderSchema, ResourceSchema};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

/// What the planner reads.
pub struct Planner<'a> {
    pub(super) project: &'a Project,
    pub(super) state: &'a StateIndex,
    pub(super) schema: &'a ProviderSchema,
    /// The file new resource blocks go to (relative to the project root).
    pub new_resources_file: String,
    /// Resources this plan creates, so other edits can refer to them.
    pub(super) created: RefCell<Created>,
    /// Nested blocks this plan adds: (instance address, dotted block path), so the block's
    /// other attributes are set inside it.
    pub(super) added_blocks: RefCell<Vec<(String, String)>>,
    /// What the configuration already holds.
    pub(super) in_code: InCode<'a>,
    /// What the project names, for new code in its idiom.
    pub(super) idiom: Idiom,
    /// The addresses the intent being planned deletes (and this plan removes).
    pub(super) deleting: RefCell<HashSet<String>>,
    /// The removal calls this plan made, so one module instance is removed once.
    pub(super) removals: RefCell<Vec<ToolCall>>,
    /// The list entries earlier steps of this plan removed: (file, collection, position as
    /// the code had it), so a later removal from the same list counts them out.
    pub(super) entries_removed: RefCell<Vec<(String, Container, u64)>>,
    /// The default provider's `default_tags`.
    pub(super) default_tags: Option<DefaultTags>,
    /// The created objects the intent being planned declares without an import block.
    pub(super) not_imported: RefCell<Vec<NotImported>>,
}

pub(super) type Outcome = Result<Step, String>;

/// The resources a plan creates: the address of each cloud id (the first one given), and
/// every address taken.
#[derive(Debug, Default)]
pub(super) struct Created {
    pub(super) by_id: HashMap<String, String>,
    pub(super) addresses: HashSet<String>,
}

impl Created {
    pub(super) fn add(&mut self, id: String, address: String) {
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
            entries_removed: RefCell::new(Vec::new()),
            not_imported: RefCell::new(Vec::new()),
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
                        .or_else(|| self.provider_settled(delta, &ruling.part))
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
                            None => self.block(delta, *index),
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
        plan.not_imported
            .extend(self.not_imported.borrow_mut().drain(..));
    }

    fn absorb(&self, delta: &Delta, part: &Part) -> Vec<Outcome> {
        match (delta.lifecycle, part) {
            (Lifecycle::Created, _) => self.creation(delta),
            (Lifecycle::Deleted, _) => self.delete(delta),
            (Lifecycle::Managed, Part::Attribute(path)) => vec![self.set(delta, path)],
            (Lifecycle::Managed, Part::Block { index, .. }) => self.block(delta, *index),
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
    pub(super) fn instance(&self, delta: &Delta) -> Result<&ResourceInstance, String> {
        let address = delta
            .address
            .as_deref()
            .ok_or("the resource is not in the state")?;
        self.project
            .instance(address)
            .ok_or_else(|| format!("{address} is in the state but not in the configuration"))
    }

    pub(super) fn resource_schema(&self, resource_type: &str) -> Option<&ResourceSchema> {
        self.schema.resource(resource_type)
    }
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

pub(super) fn step(
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

/// Where a list entry makes a new instance of an object that already exists in AWS: the
/// entry's file, collection and value, and the import of the instance (`id` to `address`,
/// written in `import_file`).
pub(super) struct NewEntry {
    pub(super) file: String,
    pub(super) container: Container,
    pub(super) value: EditValue,
    pub(super) import_file: String,
    pub(super) address: String,
    pub(super) id: String,
}

impl Planner<'_> {
    /// The two steps of a [`NewEntry`], for `part` of `delta`: the entry appended (`why`) and
    /// the instance it makes imported; the object's id is recorded as created at that address.
    /// When the provider cannot import the instance's type, the entry alone, with a warning
    /// that the next apply creates the object again.
    pub(super) fn entry_and_import(
        &self,
        delta: &Delta,
        part: Part,
        entry: NewEntry,
        why: String,
    ) -> Vec<Outcome> {
        let NewEntry {
            file,
            container,
            value,
            import_file,
            address,
            id,
        } = entry;
        self.created.borrow_mut().add(id.clone(), address.clone());
        let add = ToolCall::AddCollectionEntry(AddCollectionEntry {
            file,
            container,
            path: Vec::new(),
            value,
        });
        if let Some(warning) = self.not_importing(delta, &id, &address) {
            return vec![Ok(step(delta, part, add, why, true, Some(warning)))];
        }
        let imported = format!("{id} already exists in AWS, so {address} is imported");
        let import = ToolCall::AddImport(AddImport {
            file: import_file,
            to: address,
            id,
        });
        vec![
            Ok(step(delta, part.clone(), add, why, true, None)),
            Ok(step(delta, part, import, imported, true, None)),
        ]
    }

    /// When the AWS provider cannot import the type of the instance at `address`, records the
    /// object `id` as declared there without an import block and says in words what the next
    /// apply does; `None` when the type can be imported.
    pub(super) fn not_importing(&self, delta: &Delta, id: &str, address: &str) -> Option<String> {
        let resource_type = address_type(address)?;
        let list = NotImportable::bundled().ok()?;
        if list.importable(resource_type) {
            return None;
        }
        self.not_imported.borrow_mut().push(NotImported {
            id: id.to_owned(),
            address: address.to_owned(),
        });
        let calls: Vec<&str> = delta.rules.iter().map(String::as_str).collect();
        let again = match calls.as_slice() {
            [] => String::new(),
            calls => format!(", repeating the call that made it ({})", calls.join(", ")),
        };
        Some(format!(
            "no import block: the AWS provider cannot import {resource_type} (terraform plan stops with \"resource {resource_type} doesn't support import\"), so the next terraform apply creates {address} again{again}"
        ))
    }
}

/// The resource type of an instance address: `aws_lb_target_group_attachment` in
/// `module.lb.aws_lb_target_group_attachment.api["a"]`.
fn address_type(address: &str) -> Option<&str> {
    let resource = if let Some(keyed) = address.strip_suffix("\"]") {
        &keyed[..keyed.rfind("[\"")?]
    } else if let Some(keyed) = address.strip_suffix(']') {
        &keyed[..keyed.rfind('[')?]
    } else {
        address
    };
    let (head, _name) = resource.rsplit_once('.')?;
    Some(head.rsplit_once('.').map_or(head, |(_, kind)| kind))
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

/// The edit-tool target of an instance's block, with nested blocks by type.
pub(super) fn target(instance: &ResourceInstance, blocks: &[&str]) -> Target {
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::intents::{BlockDelta, BlockOp, Delta, Lifecycle, ResourceKey, Risk};
    use crate::policy::{Decision, Part, Ruling};
    use serde_json::json;
    use std::collections::{BTreeMap, BTreeSet};

    #[test]
    fn an_address_names_its_resource_type_past_modules_and_keys() {
        assert_eq!(address_type("aws_sqs_queue.jobs"), Some("aws_sqs_queue"));
        assert_eq!(
            address_type("module.lb[\"a.b\"].aws_lb_target_group_attachment.api[\"x.y\"]"),
            Some("aws_lb_target_group_attachment")
        );
        assert_eq!(
            address_type("module.web.aws_security_group_rule.ingress[2]"),
            Some("aws_security_group_rule")
        );
        assert_eq!(address_type("jobs"), None);
    }

    fn rule(op: BlockOp, port: u16) -> BlockDelta {
        let fields = json!({"from_port": port, "to_port": port, "protocol": "tcp"});
        BlockDelta {
            op,
            block: "ingress".to_owned(),
            fields: fields.as_object().cloned().unwrap_or_default(),
            flags: Vec::new(),
        }
    }

    pub(in crate::synthesize::plan) fn delta(blocks: Vec<BlockDelta>) -> Delta {
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
}
