//! Recording one reconciliation run as a whole: the reconciliation, the outcome of every rule
//! it used, and the rules it learned, in one transaction, so a crash leaves all of it or none.

use rusqlite::params;

use super::{
    AgentEvidence, Evidence, NewReconciliation, Provenance, Store, StoreError, begin,
    count_outcome, encode, insert_reconciliation, learn, now, sqlite,
};
use crate::rules::{Rule, validate};

/// Everything one run records.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    /// The reconciliation.
    pub reconciliation: NewReconciliation,
    /// For each stored rule the run used (by row id): whether its fix validated.
    pub outcomes: Vec<(i64, bool)>,
    /// Rules learned in the run; their evidence names the new reconciliation.
    pub learned: Vec<LearnedRule>,
}

/// A rule learned in a run.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnedRule {
    /// The rule.
    pub rule: Rule,
    /// The event ids of the calls it explained.
    pub event_ids: Vec<String>,
    /// The model and tokens, when an agent found it.
    pub agent: Option<AgentEvidence>,
}

/// What [`Store::record_run`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordedRun {
    /// The reconciliation's id (the run number reports show).
    pub reconciliation_id: i64,
    /// The row id of each learned rule, in the order given.
    pub learned: Vec<i64>,
    /// Learned rules this run's failures demoted.
    pub demoted: Vec<i64>,
}

impl Store {
    /// Records a run in one transaction: the reconciliation, each used rule's success or
    /// failure (demoting learned rules that fail too often in a row), and the learned rules
    /// with evidence naming the reconciliation. An invalid learned rule or an unknown rule id
    /// writes nothing.
    pub fn record_run(&mut self, run: &RunRecord) -> Result<RecordedRun, StoreError> {
        let mut encoded = Vec::new();
        for learned in &run.learned {
            let rule = &learned.rule;
            validate(rule).map_err(|m| self.invalid(format!("learned rule {}: {m}", rule.id())))?;
            let (body, hash) = encode(rule, &self.file)?;
            encoded.push((learned, body, hash));
        }
        let demote_after = self.demote_after as i64;
        let file = self.file.clone();
        let fail = |what: &str, e| sqlite(&file, what, e);
        let now = now();
        let tx = begin(&mut self.conn, &file)?;
        let (reconciliation_id, _) = insert_reconciliation(&tx, &run.reconciliation, &now)
            .map_err(|e| fail("cannot record a reconciliation", e))?;
        let mut recorded = RecordedRun {
            reconciliation_id,
            ..RecordedRun::default()
        };
        let active = |tx: &rusqlite::Transaction<'_>, id: i64| -> Result<bool, StoreError> {
            tx.query_row(
                "SELECT active FROM rules WHERE id = ?1",
                params![id],
                |row| row.get(0),
            )
            .map_err(|_| StoreError::NotFound {
                file: file.clone(),
                what: "rule",
                id,
            })
        };
        for &(id, success) in &run.outcomes {
            let before = active(&tx, id)?;
            count_outcome(&tx, id, success, demote_after, &now)
                .map_err(|e| fail("cannot count a rule outcome", e))?;
            if before && !active(&tx, id)? {
                recorded.demoted.push(id);
            }
        }
        for (learned, body, hash) in &encoded {
            let evidence = Evidence {
                reconciliation_id,
                event_ids: learned.event_ids.clone(),
                agent: learned.agent.clone(),
            };
            let id = learn(&tx, &learned.rule, body, hash, &evidence, &now)
                .map_err(|e| fail("cannot store a learned rule", e))?;
            recorded.learned.push(id);
        }
        tx.commit().map_err(|e| fail("cannot commit", e))?;
        Ok(recorded)
    }

    /// Rejects a learned (or reviewed) rule: it is made inactive and stays so until accepted
    /// with [`Store::review`]; a run never proposes it again.
    pub fn reject(&mut self, id: i64) -> Result<super::RuleRecord, StoreError> {
        let record = self.show(id)?;
        if record.provenance == Provenance::Shipped {
            return Err(self.invalid(format!(
                "rule {id} ({}) is shipped: change its rule file instead",
                record.rule.id()
            )));
        }
        self.write_rule(id, |tx, now| {
            tx.execute(
                "UPDATE rules SET provenance = CASE WHEN json_extract(evidence, '$.agent')
                 IS NOT NULL THEN 'agent' ELSE 'learned' END, active = 0, updated_at = ?1
                 WHERE id = ?2",
                params![now, id],
            )
            .map(|_| ())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Kind, Paths, Risk, RuleSpec, ValueSource};
    use crate::store::{Outcome, RuleFilter};

    fn rule(api: &str) -> Rule {
        Rule {
            service: "sns".into(),
            event_source: "sns.amazonaws.com".into(),
            id_prefixes: Default::default(),
            spec: RuleSpec {
                api: api.into(),
                variant: None,
                requires: None,
                resource: Some("aws_sns_topic_subscription".into()),
                resources: Vec::new(),
                kind: Kind::Update,
                risk: Risk::Medium,
                summary: "changed a subscription".into(),
                identity: vec![ValueSource {
                    from: Default::default(),
                    path: Paths::One("subscriptionArn".into()),
                    transform: None,
                }],
                separator: None,
                missing: None,
                sets: Vec::new(),
                blocks: Vec::new(),
                tags: None,
                flags: Vec::new(),
                delete_unless: None,
                delete_when: None,
                hidden: Vec::new(),
                hold: None,
            },
        }
    }

    fn run(outcomes: Vec<(i64, bool)>, learned: Vec<(Rule, Vec<String>)>) -> RunRecord {
        let learned = learned
            .into_iter()
            .map(|(rule, event_ids)| LearnedRule {
                rule,
                event_ids,
                agent: None,
            })
            .collect();
        RunRecord {
            reconciliation: NewReconciliation {
                signature: "sig".into(),
                workspace: "w".into(),
                intents: "[]".into(),
                patch: String::new(),
                outcome: Outcome::Passed,
                detail: format!("{outcomes:?}"),
                prompt_tokens: 0,
                completion_tokens: 0,
            },
            outcomes,
            learned,
        }
    }

    fn learned_ids(store: &Store) -> Vec<i64> {
        let filter = RuleFilter {
            provenance: Some(Provenance::Learned),
            ..RuleFilter::default()
        };
        store
            .list(&filter)
            .expect("list")
            .iter()
            .map(|r| r.id)
            .collect()
    }

    #[test]
    fn a_run_records_its_learned_rule_with_evidence_naming_it() {
        let mut store = Store::open_in_memory().expect("store");
        let done = store
            .record_run(&run(vec![], vec![(rule("A"), vec!["e1".into()])]))
            .expect("record");
        assert_eq!(done.learned.len(), 1);
        let record = store.show(done.learned[0]).expect("show");
        let evidence = record.evidence.expect("evidence");
        assert_eq!(evidence.reconciliation_id, done.reconciliation_id);
        assert_eq!(evidence.event_ids, ["e1"]);
        assert!(record.active);
    }

    #[test]
    fn failures_counted_by_runs_demote_a_learned_rule() {
        let mut store = Store::open_in_memory().expect("store");
        let id = store
            .record_run(&run(vec![], vec![(rule("A"), vec!["e1".into()])]))
            .expect("learn")
            .learned[0];
        let first = store
            .record_run(&run(vec![(id, true)], vec![]))
            .expect("ok");
        assert!(first.demoted.is_empty());
        let second = store
            .record_run(&run(vec![(id, false)], vec![]))
            .expect("1");
        assert!(second.demoted.is_empty());
        let third = store
            .record_run(&run(vec![(id, false)], vec![]))
            .expect("2");
        assert_eq!(third.demoted, [id]);
        let record = store.show(id).expect("show");
        assert_eq!((record.successes, record.failures), (1, 2));
        assert!(!record.active);
        assert!(store.active_rules().expect("rules").is_empty());
    }

    #[test]
    fn an_unknown_rule_id_writes_nothing() {
        let mut store = Store::open_in_memory().expect("store");
        let error = store
            .record_run(&run(vec![(999, true)], vec![(rule("A"), vec![])]))
            .expect_err("unknown id");
        assert!(
            matches!(error, StoreError::NotFound { id: 999, .. }),
            "{error}"
        );
        assert!(learned_ids(&store).is_empty());
        assert!(store.find_by_signature("sig").expect("find").is_empty());
    }

    #[test]
    fn rejected_rules_are_inactive_until_accepted_and_shipped_ones_refuse() {
        let mut store = Store::open_in_memory().expect("store");
        let id = store
            .record_run(&run(vec![], vec![(rule("A"), vec![])]))
            .expect("learn")
            .learned[0];
        assert!(!store.reject(id).expect("reject").active);
        assert!(store.active_rules().expect("rules").is_empty());
        let accepted = store.review(id).expect("accept");
        assert!(accepted.active);
        assert_eq!(accepted.provenance, Provenance::Reviewed);
        store
            .sync_shipped(crate::rules::RuleSet::bundled().expect("bundled"))
            .expect("sync");
        let filter = RuleFilter {
            provenance: Some(Provenance::Shipped),
            ..RuleFilter::default()
        };
        let shipped = store.list(&filter).expect("list")[0].id;
        assert!(matches!(
            store.reject(shipped),
            Err(StoreError::Invalid { .. })
        ));
    }
}
