//! Where a scenario's fix came from: the rules behind every change the run absorbed or left to
//! its automation, each traced to the shipped rules, a rule learned earlier in the run (a
//! knowledge store the samples share), the drift learner, or the model.

use knowledge::rules::RuleSet;
use reconciler::learn::Proposal;
use reconciler::policy::Decision;
use reconciler::reconcile::Outcome;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Who knew the rule a fix used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FixSource {
    /// A rule shipped with retrace (less those the run withheld).
    Shipped,
    /// A rule an earlier scenario of the run learned into the shared knowledge store.
    Earlier,
    /// A rule the drift learner found in this run, without the model.
    Learner,
    /// A rule the model proposed in this run.
    Model,
}

impl FixSource {
    /// Every source, in the order reports list them.
    pub const ALL: [FixSource; 4] = [
        FixSource::Shipped,
        FixSource::Earlier,
        FixSource::Learner,
        FixSource::Model,
    ];

    /// The source in words.
    pub fn words(self) -> &'static str {
        match self {
            FixSource::Shipped => "the shipped rules",
            FixSource::Earlier => "rules learned earlier in the run",
            FixSource::Learner => "the drift learner",
            FixSource::Model => "the model",
        }
    }
}

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
