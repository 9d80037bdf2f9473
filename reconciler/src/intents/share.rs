//! One resource touched by several intents: its net change over all their calls, shared out
//! part by part to the intent whose call wrote that part last.
//!
//! Netting over every call keeps the cloud's final value right (a later revert by someone
//! else cancels an earlier change); sharing by last writer keeps each person's change under
//! that person's decision.

use super::delta::{BlockDelta, BlockOp, Delta, Lifecycle};
use crate::resolve::effect::{Change, Effect, Risk};
use std::collections::BTreeMap;

/// The parts of `delta` (the net change of the calls `on`, in time order, each with the
/// number of the intent that holds it) that each intent wrote last, keyed by intent; intents
/// left with nothing are absent.
pub(super) fn share(delta: &Delta, on: &[(usize, &Effect)]) -> BTreeMap<usize, Delta> {
    let mut shares: BTreeMap<usize, Delta> = BTreeMap::new();
    match delta.lifecycle {
        Lifecycle::Created | Lifecycle::Transient | Lifecycle::Deleted => {
            // The whole resource goes with the intent that made or removed it.
            if let Some((group, _)) = on.iter().rev().find(|(_, e)| lifecycle_call(e)) {
                shares.insert(*group, delta.clone());
            }
            return shares;
        }
        Lifecycle::Managed | Lifecycle::Unmanaged => {}
    }
    for (path, change) in &delta.attributes {
        if let Some(group) = last_writer(on, |c| sets(c, path)) {
            part(&mut shares, group, delta)
                .attributes
                .insert(path.clone(), change.clone());
        }
    }
    for block in &delta.blocks {
        if let Some(group) = last_writer(on, |c| writes_block(c, block)) {
            part(&mut shares, group, delta).blocks.push(block.clone());
        }
    }
    for (key, value) in &delta.tags_set {
        if let Some(group) = last_writer(on, |c| tags_set(c, key)) {
            part(&mut shares, group, delta)
                .tags_set
                .insert(key.clone(), value.clone());
        }
    }
    for key in &delta.tags_removed {
        if let Some(group) = last_writer(on, |c| tags_removed(c, key)) {
            part(&mut shares, group, delta)
                .tags_removed
                .insert(key.clone());
        }
    }
    shares.retain(|_, d| !d.is_empty());
    let mut risks: BTreeMap<usize, Risk> = BTreeMap::new();
    for (group, effect) in on {
        if let Some(share) = shares.get_mut(group) {
            describe_call(share, effect);
            let risk = risks.entry(*group).or_insert(effect.risk);
            *risk = (*risk).max(effect.risk);
        }
    }
    for (group, risk) in risks {
        if let Some(share) = shares.get_mut(&group) {
            share.risk = risk;
        }
    }
    shares
}

/// The share of `group`, started empty.
fn part<'a>(shares: &'a mut BTreeMap<usize, Delta>, group: usize, delta: &Delta) -> &'a mut Delta {
    shares.entry(group).or_insert_with(|| empty_like(delta))
}

/// Whether the call created or deleted the resource.
fn lifecycle_call(effect: &Effect) -> bool {
    matches!(effect.change, Change::Create { .. } | Change::Delete)
}

/// The intent of the last call for which `wrote` holds.
fn last_writer(on: &[(usize, &Effect)], wrote: impl Fn(&Change) -> bool) -> Option<usize> {
    on.iter()
        .rev()
        .find(|(_, e)| wrote(&e.change))
        .map(|(group, _)| *group)
}

fn sets(change: &Change, path: &str) -> bool {
    match change {
        Change::Set { attribute, .. } | Change::Members { attribute, .. } => attribute == path,
        Change::Create { attributes } => attributes.iter().any(|(p, _)| p == path),
        _ => false,
    }
}

fn writes_block(change: &Change, block: &BlockDelta) -> bool {
    match change {
        Change::AddBlock {
            block: name,
            fields,
        } => block.op == BlockOp::Added && *name == block.block && *fields == block.fields,
        Change::RemoveBlock {
            block: name,
            fields,
        } => block.op == BlockOp::Removed && *name == block.block && *fields == block.fields,
        _ => false,
    }
}

fn tags_set(change: &Change, key: &str) -> bool {
    matches!(change, Change::Tags { set, .. } if set.contains_key(key))
}

fn tags_removed(change: &Change, key: &str) -> bool {
    matches!(change, Change::Tags { set, remove, replace }
        if remove.iter().any(|k| k == key) || (*replace && !set.contains_key(key)))
}

/// A delta on the same resource with no parts and no calls.
fn empty_like(delta: &Delta) -> Delta {
    Delta {
        attributes: BTreeMap::new(),
        blocks: Vec::new(),
        tags_set: BTreeMap::new(),
        tags_removed: Default::default(),
        rules: Default::default(),
        flags: Vec::new(),
        evidence: Vec::new(),
        ..delta.clone()
    }
}

/// Adds one of the intent's own calls to its share's rules, flags and evidence.
fn describe_call(share: &mut Delta, effect: &Effect) {
    share.rules.insert(effect.rule.clone());
    share.evidence.push(effect.evidence.event_id.clone());
    for flag in &effect.flags {
        if !share.flags.contains(flag) {
            share.flags.push(flag.clone());
        }
    }
}
