//! Record: after a run, the knowledge base remembers it — the trace signature, the intents
//! with their decisions, the patch, the validation outcome, each used rule's success or
//! failure and the rules learned — all in one transaction of the store.
//!
//! [`Knowledge`] is the store seen from a run: it syncs the shipped rules into the store,
//! gives the rules to use (shipped plus active learned and reviewed ones), and records the
//! outcome.

use crate::learn::Proposal;
use crate::policy::Decision;
use crate::reconcile::{Decided, Outcome};
use crate::resolve::Finding;
use knowledge::rules::{Rule, RuleSet};
use knowledge::store::{
    self, LearnedRule, NewReconciliation, RuleRecord, RunRecord, Store, StoreError,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The record stage could not run.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The store failed (its message names the database file).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The shipped rules did not load.
    #[error(transparent)]
    Rules(#[from] knowledge::rules::RuleError),
    /// The store's folder could not be created.
    #[error("cannot create {}: {source}", dir.display())]
    Folder {
        /// The folder.
        dir: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The intents could not be encoded.
    #[error("cannot encode the intents: {0}")]
    Encode(#[from] serde_json::Error),
}

/// The store location used when neither `--kb` nor `[knowledge] store` names one:
/// `$XDG_DATA_HOME/retrace/knowledge.sqlite`, else `~/.local/share/retrace/knowledge.sqlite`.
pub fn default_store_path() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        })?;
    Some(data.join("retrace").join("knowledge.sqlite"))
}

/// A past reconciliation with the same trace signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SeenBefore {
    /// Its run number (reconciliation id).
    pub run: i64,
    /// Its validation outcome.
    pub outcome: store::Outcome,
    /// When it was recorded.
    pub at: String,
}

/// What the record stage did, for the report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Recorded {
    /// The store file.
    pub store: String,
    /// This run's number (reconciliation id).
    pub run: i64,
    /// The trace signature.
    pub signature: String,
    /// The most recent earlier run with the same signature that validated, else the most
    /// recent one.
    pub seen_before: Option<SeenBefore>,
    /// Rule id (`service:Api`) → whether its fix validated, for every stored rule used.
    pub rule_outcomes: BTreeMap<String, bool>,
    /// Rules learned: (row id, rule id).
    pub learned: Vec<(i64, String)>,
    /// Learned rules demoted by this run's failures: (row id, rule id).
    pub demoted: Vec<(i64, String)>,
}

/// The knowledge store as a run uses it.
pub struct Knowledge {
    store: Store,
    used: Vec<RuleRecord>,
    rules: RuleSet,
}

impl Knowledge {
    /// Opens (creating it and its folder if needed) the store at `path`, syncs the shipped
    /// rules into it and reads the active rules.
    pub fn open(path: &Path, demote_after: Option<u64>) -> Result<Self, RecordError> {
        Self::open_with(path, demote_after, RuleSet::bundled()?)
    }

    /// As [`Knowledge::open`], with `shipped` as the shipped rules (the bundled ones less any
    /// withheld): a shipped rule not among them is made inactive in the store.
    pub fn open_with(
        path: &Path,
        demote_after: Option<u64>,
        shipped: &RuleSet,
    ) -> Result<Self, RecordError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| RecordError::Folder {
                dir: dir.to_owned(),
                source,
            })?;
        }
        let mut store = Store::open(path)?;
        if let Some(n) = demote_after {
            store = store.with_demote_after(n);
        }
        Self::from_store_with(store, shipped)
    }

    /// Uses an open store: syncs the shipped rules and reads the active ones.
    pub fn from_store(store: Store) -> Result<Self, RecordError> {
        Self::from_store_with(store, RuleSet::bundled()?)
    }

    /// As [`Knowledge::from_store`], with `shipped` as the shipped rules.
    pub fn from_store_with(mut store: Store, shipped: &RuleSet) -> Result<Self, RecordError> {
        store.sync_shipped(shipped)?;
        let used = store.active_records()?;
        let rules = store.active_rules()?;
        Ok(Self { store, used, rules })
    }

    /// The rules a run uses: shipped, then reviewed and learned ones for APIs no shipped
    /// rule covers.
    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }

    /// The store, to read what it keeps besides rules.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The store, to keep what nightly runs need (watermarks, requests and their reviews).
    pub fn store_mut(&mut self) -> &mut Store {
        &mut self.store
    }

    /// The store, for commands that work on it directly.
    pub fn into_store(self) -> Store {
        self.store
    }

    /// Whether the run uses this rule as one the store learned (from the drift or by the
    /// agent), not a shipped or reviewed one.
    pub fn is_learned(&self, rule: &Rule) -> bool {
        self.used.iter().any(|r| {
            matches!(
                r.provenance,
                store::Provenance::Learned | store::Provenance::Agent
            ) && &r.rule == rule
        })
    }

    /// Whether a stored learned rule with exactly this content was rejected or demoted, so it
    /// must not be learned again.
    pub fn retired(&self, rule: &Rule) -> Result<bool, RecordError> {
        let filter = store::RuleFilter {
            active: Some(false),
            ..store::RuleFilter::default()
        };
        Ok(self
            .store
            .list(&filter)?
            .iter()
            .any(|r| r.provenance != store::Provenance::Shipped && &r.rule == rule))
    }

    /// Records the run in one transaction: the reconciliation with the agent's `tokens`, the
    /// outcome of each stored rule it used, and the rules it learned.
    pub fn record(
        &mut self,
        outcome: &Outcome,
        workspace: &str,
        learned: &[Proposal],
        tokens: store::Tokens,
    ) -> Result<Recorded, RecordError> {
        let signature = signature(outcome);
        let seen_before = self.seen_before(&signature)?;
        let by_rule_id: BTreeMap<String, i64> =
            self.used.iter().map(|r| (r.rule.id(), r.id)).collect();
        let rule_outcomes: BTreeMap<String, bool> = rule_outcomes(outcome)
            .into_iter()
            .filter(|(rule, _)| by_rule_id.contains_key(rule))
            .collect();
        let run = RunRecord {
            reconciliation: NewReconciliation {
                signature: signature.clone(),
                workspace: workspace.to_owned(),
                intents: serde_json::to_string(&outcome.intents)?,
                patch: outcome.diff.clone(),
                outcome: store_outcome(outcome),
                detail: detail(outcome),
                prompt_tokens: tokens.prompt,
                completion_tokens: tokens.completion,
            },
            outcomes: rule_outcomes
                .iter()
                .map(|(rule, ok)| (by_rule_id[rule], *ok))
                .collect(),
            learned: learned
                .iter()
                .map(|p| LearnedRule {
                    rule: p.rule.clone(),
                    event_ids: p.event_ids.clone(),
                    agent: p.agent.clone(),
                })
                .collect(),
        };
        let done = self.store.record_run(&run)?;
        tracing::info!(run = done.reconciliation_id, store = %self.store.file(), "run recorded");
        let name_of = |id: i64| -> String {
            self.used
                .iter()
                .find(|r| r.id == id)
                .map(|r| r.rule.id())
                .unwrap_or_default()
        };
        Ok(Recorded {
            store: self.store.file().to_owned(),
            run: done.reconciliation_id,
            signature,
            seen_before,
            rule_outcomes,
            learned: done
                .learned
                .iter()
                .zip(learned)
                .map(|(id, p)| (*id, p.rule.id()))
                .collect(),
            demoted: done.demoted.iter().map(|&id| (id, name_of(id))).collect(),
        })
    }

    fn seen_before(&self, signature: &str) -> Result<Option<SeenBefore>, RecordError> {
        let past = self.store.find_by_signature(signature)?;
        let best = past
            .iter()
            .find(|r| r.data.outcome == store::Outcome::Passed)
            .or(past.first());
        Ok(best.map(|r| SeenBefore {
            run: r.id,
            outcome: r.data.outcome,
            at: r.created_at.clone(),
        }))
    }
}

/// The trace signature of a run: each call's (eventSource, API, resource identity), the
/// identity being that of every resource its intent's net change touched, or empty for a call
/// no rule explained or whose change cancelled out.
pub fn signature(outcome: &Outcome) -> String {
    let mut tuples: Vec<(String, String, String)> = Vec::new();
    for d in &outcome.intents {
        for call in &d.intent.evidence {
            let mut touched: Vec<&str> = d
                .intent
                .deltas
                .iter()
                .filter(|delta| delta.evidence.contains(&call.event_id))
                .map(|delta| delta.resource.identity.as_str())
                .collect();
            if touched.is_empty() {
                touched.push("");
            }
            for identity in touched {
                tuples.push((call.event_source.clone(), call.api.clone(), identity.into()));
            }
        }
    }
    for f in &outcome.findings {
        let identity = f
            .resources
            .first()
            .map(|t| t.identity.clone())
            .unwrap_or_default();
        tuples.push((f.event_source.clone(), f.api.clone(), identity));
    }
    store::trace_signature(
        tuples
            .iter()
            .map(|(s, a, i)| (s.as_str(), a.as_str(), i.as_str())),
    )
}

/// For each rule behind an absorbed change: whether every change it explained validated (no
/// validator found a difference on the resource, and every edit for it was made). Rules whose
/// changes were all flagged or ignored were not put to the test and are left out.
pub fn rule_outcomes(outcome: &Outcome) -> BTreeMap<String, bool> {
    let mut out: BTreeMap<String, bool> = BTreeMap::new();
    for d in &outcome.intents {
        for (delta, rulings) in d.intent.deltas.iter().zip(&d.rulings) {
            if !rulings.iter().any(|r| r.decision == Decision::Absorb) {
                continue;
            }
            let ok = validated(outcome, d, delta.address.as_deref());
            for rule in &delta.rules {
                let entry = out.entry(rule.clone()).or_insert(true);
                *entry = *entry && ok;
            }
        }
    }
    out
}

/// Per rule used in an outcome, whether it explained its calls soundly: every change it read
/// was either absorbed and validated, or held for a person (flagged or ignored by policy). A
/// rule that holds or flags is as learnable as one that absorbs; a rule whose absorbed change
/// did not validate is not.
pub fn rule_explains(outcome: &Outcome) -> BTreeMap<String, bool> {
    let mut out: BTreeMap<String, bool> = BTreeMap::new();
    for d in &outcome.intents {
        for (delta, rulings) in d.intent.deltas.iter().zip(&d.rulings) {
            let absorbed = rulings.iter().any(|r| r.decision == Decision::Absorb);
            let ok = !absorbed || validated(outcome, d, delta.address.as_deref());
            for rule in &delta.rules {
                let entry = out.entry(rule.clone()).or_insert(true);
                *entry = *entry && ok;
            }
        }
    }
    out
}

/// Whether the change to `address` validated; a change without an address (a creation)
/// validated when every validator passed and nothing in its intent was left unplanned.
fn validated(outcome: &Outcome, decided: &Decided, address: Option<&str>) -> bool {
    let Some(address) = address else {
        let unplanned = outcome
            .plan
            .unplanned
            .iter()
            .any(|u| u.intent == decided.intent.id);
        return !unplanned && outcome.validations.iter().all(|v| v.passed);
    };
    let differs = outcome
        .validations
        .iter()
        .flat_map(|v| v.differences.iter().chain(&v.collateral))
        .any(|d| d.address == address);
    let unplanned = outcome.plan.unplanned.iter().any(|u| u.resource == address);
    !differs && !unplanned
}

/// The store's outcome for a run: failed when a validator failed, flagged when a change or a
/// finding was left for a person, passed otherwise.
fn store_outcome(outcome: &Outcome) -> store::Outcome {
    let flagged = outcome
        .intents
        .iter()
        .flat_map(|d| d.rulings.iter().flatten())
        .any(|r| r.decision == Decision::Flag)
        || outcome.findings.iter().any(Finding::needs_person);
    if outcome.validations.iter().any(|v| !v.passed) {
        store::Outcome::Failed
    } else if flagged {
        store::Outcome::Flagged
    } else {
        store::Outcome::Passed
    }
}

/// One line per validator, with the differences it found.
fn detail(outcome: &Outcome) -> String {
    let mut lines: Vec<String> = outcome
        .validations
        .iter()
        .map(|v| {
            let verdict = if v.passed { "passed" } else { "failed" };
            let found = v.differences.len() + v.collateral.len();
            format!("{}: {verdict} ({found} difference(s))", v.validator)
        })
        .collect();
    lines.extend(
        outcome
            .skipped_validators
            .iter()
            .map(|(name, why)| format!("{name}: not run ({why})")),
    );
    lines.join("\n")
}

/// The report lines for what the record stage did.
pub fn report_lines(recorded: &Recorded) -> Vec<String> {
    let mut lines = vec![format!(
        "recorded as run #{} in {}",
        recorded.run, recorded.store
    )];
    if let Some(seen) = &recorded.seen_before {
        let how = match seen.outcome {
            store::Outcome::Passed => "validated",
            store::Outcome::Failed => "failed validation",
            store::Outcome::Flagged => "flagged",
        };
        lines.push(format!(
            "seen before: run #{}, {how} ({})",
            seen.run, seen.at
        ));
    }
    for (id, rule) in &recorded.learned {
        lines.push(format!(
            "learned rule #{id} {rule}: explained a call without a rule and validated"
        ));
    }
    for (rule, ok) in &recorded.rule_outcomes {
        let verdict = if *ok { "success" } else { "failure" };
        lines.push(format!("rule {rule}: {verdict}"));
    }
    for (id, rule) in &recorded.demoted {
        lines.push(format!(
            "demoted learned rule #{id} {rule} after repeated failures (review it with `retrace kb review {id} --accept`)"
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intents::{Delta, Evidence, Intent, IntentKind, Lifecycle, ResourceKey, Risk};
    use crate::patch::ChangeSet;
    use crate::policy::{Part, Ruling};
    use crate::reconcile::Status;
    use crate::resolve::{Finding, FindingKind, Reach};
    use crate::synthesize::plan::{Plan, Unplanned};
    use crate::validate::{Difference, Validation};
    use serde_json::json;

    fn call(event_id: &str, api: &str) -> Evidence {
        Evidence {
            event_id: event_id.into(),
            time: chrono::DateTime::UNIX_EPOCH,
            event_source: "ec2.amazonaws.com".into(),
            api: api.into(),
            actor: "alice".into(),
            client: "console".into(),
            session: "s".into(),
            region: "us-east-1".into(),
            account: None,
        }
    }

    fn delta(address: &str, identity: &str, rule: &str, events: &[&str]) -> Delta {
        Delta {
            resource: ResourceKey {
                resource_type: "aws_instance".into(),
                identity: identity.into(),
            },
            address: Some(address.into()),
            lifecycle: Lifecycle::Managed,
            attributes: Default::default(),
            blocks: Vec::new(),
            tags_set: Default::default(),
            tags_removed: Default::default(),
            rules: [rule.to_owned()].into(),
            risk: Risk::Medium,
            flags: Vec::new(),
            evidence: events.iter().map(|e| (*e).to_owned()).collect(),
        }
    }

    fn decided(id: &str, calls: Vec<Evidence>, deltas: Vec<(Delta, Decision)>) -> Decided {
        let rulings = deltas
            .iter()
            .map(|(_, decision)| {
                vec![Ruling {
                    part: Part::Attribute("instance_type".into()),
                    decision: *decision,
                    reason: "test".into(),
                    warning: None,
                }]
            })
            .collect();
        Decided {
            intent: Intent {
                id: id.into(),
                kind: IntentKind::Update,
                actor: "alice".into(),
                clients: vec!["console".into()],
                start: chrono::DateTime::UNIX_EPOCH,
                end: chrono::DateTime::UNIX_EPOCH,
                evidence: calls,
                deltas: deltas.into_iter().map(|(d, _)| d).collect(),
                links: Vec::new(),
                story: String::new(),
            },
            rulings,
        }
    }

    fn outcome(intents: Vec<Decided>, differences: Vec<Difference>) -> Outcome {
        Outcome {
            status: Status::Patched,
            intents,
            scope: Default::default(),
            findings: Vec::new(),
            plan: Plan::default(),
            changes: ChangeSet::new(),
            diff: String::new(),
            validations: vec![Validation {
                validator: "plan-check".into(),
                passed: differences.is_empty(),
                differences,
                collateral: Vec::new(),
                note: None,
            }],
            skipped_validators: Vec::new(),
            repair_rounds: 0,
            accounting: Default::default(),
        }
    }

    fn two_resources() -> Vec<Decided> {
        vec![decided(
            "I1",
            vec![
                call("e1", "ModifyInstanceAttribute"),
                call("e2", "CreateTags"),
            ],
            vec![
                (
                    delta(
                        "aws_instance.a",
                        "i-a",
                        "ec2:ModifyInstanceAttribute",
                        &["e1"],
                    ),
                    Decision::Absorb,
                ),
                (
                    delta("aws_instance.b", "i-b", "ec2:CreateTags", &["e2"]),
                    Decision::Flag,
                ),
            ],
        )]
    }

    #[test]
    fn rules_succeed_when_their_resources_validate_and_flagged_ones_are_not_counted() {
        let passed = outcome(two_resources(), Vec::new());
        assert_eq!(
            rule_outcomes(&passed),
            BTreeMap::from([("ec2:ModifyInstanceAttribute".to_owned(), true)])
        );
        assert_eq!(store_outcome(&passed), store::Outcome::Flagged);
        let difference = Difference {
            address: "aws_instance.a".into(),
            attribute: "instance_type".into(),
            config: json!("t3.large"),
            observed: json!("t3.small"),
        };
        let failed = outcome(two_resources(), vec![difference.clone()]);
        assert_eq!(
            rule_outcomes(&failed),
            BTreeMap::from([("ec2:ModifyInstanceAttribute".to_owned(), false)])
        );
        assert_eq!(store_outcome(&failed), store::Outcome::Failed);
        // The flagged rule explained its call: it is learnable, and the failed one is not.
        assert_eq!(
            rule_explains(&failed),
            BTreeMap::from([
                ("ec2:CreateTags".to_owned(), true),
                ("ec2:ModifyInstanceAttribute".to_owned(), false)
            ])
        );
        // A difference on another resource does not count against the rule.
        let elsewhere = Difference {
            address: "aws_instance.c".into(),
            ..difference
        };
        let other = outcome(two_resources(), vec![elsewhere]);
        assert!(rule_outcomes(&other)["ec2:ModifyInstanceAttribute"]);
    }

    #[test]
    fn an_edit_the_planner_could_not_make_is_a_failure() {
        let mut unplanned = outcome(two_resources(), Vec::new());
        unplanned.plan.unplanned.push(Unplanned {
            intent: "I1".into(),
            resource: "aws_instance.a".into(),
            part: Part::Attribute("instance_type".into()),
            reason: "computed".into(),
        });
        assert!(!rule_outcomes(&unplanned)["ec2:ModifyInstanceAttribute"]);
    }

    #[test]
    fn signatures_ignore_event_ids_and_order_but_not_resources() {
        let base = signature(&outcome(two_resources(), Vec::new()));
        let mut reordered = two_resources();
        reordered[0].intent.evidence.reverse();
        for d in &mut reordered[0].intent.evidence {
            d.event_id = format!("new-{}", d.event_id);
        }
        for d in &mut reordered[0].intent.deltas {
            d.evidence = d.evidence.iter().map(|e| format!("new-{e}")).collect();
        }
        assert_eq!(signature(&outcome(reordered, Vec::new())), base);
        let mut other = two_resources();
        other[0].intent.deltas[0].resource.identity = "i-z".into();
        assert_ne!(signature(&outcome(other, Vec::new())), base);
        let mut with_unexplained = outcome(two_resources(), Vec::new());
        with_unexplained.findings.push(Finding {
            kind: FindingKind::Unexplained,
            event_id: "e9".into(),
            time: chrono::DateTime::UNIX_EPOCH,
            event_source: "sns.amazonaws.com".into(),
            api: "SetSubscriptionAttributes".into(),
            actor: "alice".into(),
            account: None,
            region: "us-east-1".into(),
            reach: Reach::Account,
            resources: Vec::new(),
            category: None,
            risk: None,
            reason: "no rule".into(),
        });
        assert_ne!(signature(&with_unexplained), base);
    }

    #[test]
    fn the_default_store_lives_under_xdg_data_home_or_home() {
        // Read only: the test checks the rule against whatever this process has.
        let path = default_store_path();
        match (std::env::var_os("XDG_DATA_HOME"), std::env::var_os("HOME")) {
            (Some(xdg), _) if !xdg.is_empty() => {
                assert_eq!(
                    path,
                    Some(PathBuf::from(xdg).join("retrace/knowledge.sqlite"))
                );
            }
            (_, Some(home)) if !home.is_empty() => {
                assert_eq!(
                    path,
                    Some(PathBuf::from(home).join(".local/share/retrace/knowledge.sqlite"))
                );
            }
            _ => assert_eq!(path, None),
        }
    }

    #[test]
    fn opening_syncs_the_shipped_rules_and_uses_them() {
        let store = Store::open_in_memory().expect("store");
        let knowledge = Knowledge::from_store(store).expect("knowledge");
        let shipped = RuleSet::bundled().expect("bundled");
        assert_eq!(knowledge.rules().len(), shipped.len());
        assert!(
            knowledge
                .rules()
                .find("ec2.amazonaws.com", "ModifyInstanceAttribute")
                .is_some()
        );
    }
}
