//! Where retrace's fix came from: the rules behind every change the run absorbed or left to
//! its automation, each traced to its [`FixSource`].

use crate::score::fix_source::FixSource;
use knowledge::rules::RuleSet;
use reconciler::learn::Proposal;
use reconciler::policy::Decision;
use reconciler::reconcile::Outcome;
use std::collections::BTreeSet;

/// The sources of the rules behind the changes `outcome` absorbed or left to their automation:
/// a rule `learned` in this run is the model's when the agent found it and the learner's
/// otherwise; else a rule of `shipped` (the rules the run started from) is shipped; any other
/// came from the knowledge store, learned earlier.
pub fn of(outcome: &Outcome, learned: &[Proposal], shipped: &RuleSet) -> BTreeSet<FixSource> {
    let shipped_ids: BTreeSet<String> = shipped.iter().map(|r| r.id()).collect();
    let source = |id: &str| match learned.iter().find(|p| p.rule.id() == id) {
        Some(p) if p.agent.is_some() => FixSource::Model,
        Some(_) => FixSource::Learner,
        None if shipped_ids.contains(id) => FixSource::Shipped,
        None => FixSource::Earlier,
    };
    outcome
        .intents
        .iter()
        .flat_map(|d| d.intent.deltas.iter().zip(&d.rulings))
        .filter(|(_, rulings)| {
            rulings
                .iter()
                .any(|r| matches!(r.decision, Decision::Absorb | Decision::Ignore))
        })
        .flat_map(|(delta, _)| &delta.rules)
        .map(|id| source(id))
        .collect()
}
