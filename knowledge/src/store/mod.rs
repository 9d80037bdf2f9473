//! The knowledge store: a SQLite database of rules (shipped, learned from validated fixes,
//! reviewed) with their track record, and of past reconciliations by trace signature, so a
//! repeated drift can reuse a fix that passed validation.
//!
//! The database runs in WAL mode; its schema is versioned with `PRAGMA user_version` and
//! migrated on open; every write runs inside a transaction.

mod error;
mod exchange;
mod migrate;
mod review;
mod run;

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::rules::{Rule, RuleSet, validate};

pub use error::StoreError;
pub use exchange::ImportReport;
pub use review::{
    Night, Rejection, Review, ReviewLine, ReviewState, RuleReview, Settlement, Watermark,
};
pub use run::{LearnedRule, RecordedRun, RunRecord};

/// Where a stored rule came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provenance {
    /// Shipped with retrace in `knowledge/rules/`.
    Shipped,
    /// Learned from a validated fix for a call no rule covered.
    Learned,
    /// Found by the language-model agent and validated like a learned rule.
    Agent,
    /// A learned rule a person has reviewed.
    Reviewed,
}

impl Provenance {
    /// The name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Shipped => "shipped",
            Self::Learned => "learned",
            Self::Agent => "agent",
            Self::Reviewed => "reviewed",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "shipped" => Some(Self::Shipped),
            "learned" => Some(Self::Learned),
            "agent" => Some(Self::Agent),
            "reviewed" => Some(Self::Reviewed),
            _ => None,
        }
    }
}

/// How a reconciliation's patch fared in validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The plan check showed no remaining drift.
    Passed,
    /// The plan check failed or still showed drift.
    Failed,
    /// The change was flagged for a person instead of absorbed.
    Flagged,
}

impl Outcome {
    /// The name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Passed => "passed",
            Self::Failed => "failed",
            Self::Flagged => "flagged",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "passed" => Some(Self::Passed),
            "failed" => Some(Self::Failed),
            "flagged" => Some(Self::Flagged),
            _ => None,
        }
    }
}

/// Why a learned rule exists: the reconciliation whose validated fix it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    /// The reconciliation's id in the store it was learned in.
    pub reconciliation_id: i64,
    /// The CloudTrail event ids of the calls.
    pub event_ids: Vec<String>,
    /// When a language-model agent found the rule: the model and the tokens it took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentEvidence>,
}

/// The model that found a learned rule and the tokens the finding took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentEvidence {
    /// The model's name.
    pub model: String,
    /// Tokens of the prompts sent.
    pub prompt_tokens: u64,
    /// Tokens the model wrote.
    pub completion_tokens: u64,
}

/// A stored rule with its provenance and track record.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleRecord {
    /// The row id.
    pub id: i64,
    /// The rule.
    pub rule: Rule,
    /// Where it came from.
    pub provenance: Provenance,
    /// SHA-256 of the rule's JSON form.
    pub hash: String,
    /// Times a fix made with it passed validation.
    pub successes: u64,
    /// Times a fix made with it failed.
    pub failures: u64,
    /// Failures since the last success.
    pub consecutive_failures: u64,
    /// Whether it is used; learned rules are demoted (made inactive) after repeated failures.
    pub active: bool,
    /// For learned rules, what it was learned from.
    pub evidence: Option<Evidence>,
    /// When it was stored (RFC 3339).
    pub created_at: String,
    /// When it last changed (RFC 3339).
    pub updated_at: String,
}

/// A reconciliation to record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewReconciliation {
    /// The trace signature (see [`trace_signature`]).
    pub signature: String,
    /// The workspace or project it ran in.
    pub workspace: String,
    /// The intents, as JSON text.
    pub intents: String,
    /// The patch, as unified diff text.
    pub patch: String,
    /// The validation outcome.
    pub outcome: Outcome,
    /// The validation detail (plan output summary, flag reasons).
    pub detail: String,
    /// Prompt tokens the run's agent sent (0 when no agent ran).
    #[serde(default)]
    pub prompt_tokens: u64,
    /// Completion tokens the run's agent received.
    #[serde(default)]
    pub completion_tokens: u64,
}

/// Tokens a language model counted for a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Tokens of the prompts sent.
    pub prompt: u64,
    /// Tokens the model wrote.
    pub completion: u64,
}

/// A recorded reconciliation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reconciliation {
    /// The row id.
    pub id: i64,
    /// What was recorded.
    pub data: NewReconciliation,
    /// When (RFC 3339).
    pub created_at: String,
}

/// Which rules [`Store::list`] returns; unset fields match everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleFilter {
    /// Only this provenance.
    pub provenance: Option<Provenance>,
    /// Only this service, e.g. `ec2`.
    pub service: Option<String>,
    /// Only active (true) or inactive (false) rules.
    pub active: Option<bool>,
}

/// Counts over the store.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Rules by provenance name.
    pub rules_by_provenance: BTreeMap<String, u64>,
    /// Rules by service.
    pub rules_by_service: BTreeMap<String, u64>,
    /// Inactive (demoted or retired) rules.
    pub inactive_rules: u64,
    /// Reconciliations by outcome name.
    pub reconciliations_by_outcome: BTreeMap<String, u64>,
    /// Successes over successes plus failures of all rules; `None` before any outcome.
    pub rule_success_rate: Option<f64>,
    /// Prompt tokens the agent spent over every recorded reconciliation.
    pub prompt_tokens: u64,
    /// Completion tokens over every recorded reconciliation.
    pub completion_tokens: u64,
}

/// What [`Store::sync_shipped`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// New shipped rules stored.
    pub inserted: u64,
    /// Shipped rules whose content changed.
    pub updated: u64,
    /// Shipped rules already up to date.
    pub unchanged: u64,
    /// Stored shipped rules no longer shipped, made inactive.
    pub retired: u64,
}

/// Failures in a row after which a learned rule is demoted, unless configured otherwise.
pub const DEFAULT_DEMOTE_AFTER: u64 = 2;

/// The knowledge store.
pub struct Store {
    conn: Connection,
    file: String,
    demote_after: u64,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("file", &self.file).finish()
    }
}

const RULE_COLUMNS: &str = "id, body, provenance, hash, successes, failures, \
    consecutive_failures, active, evidence, created_at, updated_at";
const RECONCILIATION_COLUMNS: &str =
    "id, signature, workspace, intents, patch, outcome, detail, created_at, prompt_tokens,
     completion_tokens";

impl Store {
    /// Opens (creating if needed) the store at a path, in WAL mode, migrating its schema.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let file = path.display().to_string();
        let conn = Connection::open(path).map_err(|e| sqlite(&file, "cannot open", e))?;
        Self::setup(conn, file)
    }

    /// An empty store in memory (for tests and dry runs).
    pub fn open_in_memory() -> Result<Self, StoreError> {
        let file = ":memory:".to_owned();
        let conn = Connection::open_in_memory().map_err(|e| sqlite(&file, "cannot open", e))?;
        Self::setup(conn, file)
    }

    fn setup(mut conn: Connection, file: String) -> Result<Self, StoreError> {
        let fail = |what: &str, e| sqlite(&file, what, e);
        conn.query_row("PRAGMA journal_mode = WAL", [], |row| {
            row.get::<_, String>(0)
        })
        .map_err(|e| match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::NotADatabase) => fail(
                "not a retrace knowledge base (an SQLite database was expected)",
                e,
            ),
            _ => fail("cannot set WAL mode", e),
        })?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(|e| fail("cannot set busy timeout", e))?;
        let found = migrate::version(&conn).map_err(|e| fail("cannot read schema version", e))?;
        if found > migrate::VERSION {
            return Err(StoreError::TooNew {
                file,
                found,
                known: migrate::VERSION,
            });
        }
        migrate::run(&mut conn, found).map_err(|e| fail("migration failed", e))?;
        Ok(Self {
            conn,
            file,
            demote_after: DEFAULT_DEMOTE_AFTER,
        })
    }

    /// Sets how many failures in a row demote a learned rule (at least 1).
    pub fn with_demote_after(mut self, failures: u64) -> Self {
        self.demote_after = failures.max(1);
        self
    }

    /// The database file, as errors name it.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        migrate::version(&self.conn).map_err(|e| self.sqlite("cannot read schema version", e))
    }

    fn sqlite(&self, what: &str, e: rusqlite::Error) -> StoreError {
        sqlite(&self.file, what, e)
    }

    /// Stores the shipped rules: new ones inserted, changed ones (by content hash) updated and
    /// re-activated, ones no longer shipped made inactive. Running it twice changes nothing.
    pub fn sync_shipped(&mut self, rules: &RuleSet) -> Result<SyncReport, StoreError> {
        let file = self.file.clone();
        let fail = |what: &str, e| sqlite(&file, what, e);
        let now = now();
        let tx = begin(&mut self.conn, &file)?;
        let mut report = SyncReport::default();
        let mut shipped_ids = Vec::new();
        for rule in rules.iter() {
            let (body, hash) = encode(rule, &file)?;
            let existing: Option<(i64, String, bool)> = tx
                .query_row(
                    "SELECT id, hash, active FROM rules
                     WHERE provenance = 'shipped' AND event_source = ?1 AND rule_id = ?2",
                    params![rule.event_source, rule.id()],
                    |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
                )
                .optional()
                .map_err(|e| fail("cannot read shipped rules", e))?;
            let id = match existing {
                Some((id, old, true)) if old == hash => {
                    report.unchanged += 1;
                    id
                }
                Some((id, _, _)) => {
                    tx.execute(
                        "UPDATE rules SET body = ?1, hash = ?2, rule_id = ?3, service = ?4,
                         active = 1, updated_at = ?5 WHERE id = ?6",
                        params![body, hash, rule.id(), rule.service, now, id],
                    )
                    .map_err(|e| fail("cannot update a shipped rule", e))?;
                    report.updated += 1;
                    id
                }
                None => {
                    insert_rule(&tx, rule, &body, &hash, Provenance::Shipped, None, &now)
                        .map_err(|e| fail("cannot insert a shipped rule", e))?;
                    report.inserted += 1;
                    tx.last_insert_rowid()
                }
            };
            shipped_ids.push(id);
        }
        let ids = serde_json::to_string(&shipped_ids).unwrap_or_else(|_| "[]".to_owned());
        report.retired = tx
            .execute(
                "UPDATE rules SET active = 0, updated_at = ?1
                 WHERE provenance = 'shipped' AND active = 1
                 AND id NOT IN (SELECT value FROM json_each(?2))",
                params![now, ids],
            )
            .map_err(|e| fail("cannot retire shipped rules", e))? as u64;
        tx.commit().map_err(|e| fail("cannot commit", e))?;
        Ok(report)
    }

    /// The rules in use: active shipped rules, then reviewed, then learned ones; a rule for an
    /// API that an earlier kind already covers is left out, so a learned rule never overrides
    /// a shipped one.
    pub fn active_rules(&self) -> Result<RuleSet, StoreError> {
        let chosen = self.active_records()?.into_iter().map(|r| r.rule);
        RuleSet::from_rules(chosen).map_err(|e| self.invalid(e.to_string()))
    }

    /// The stored records behind [`Store::active_rules`], in the same order, so a run can
    /// count each rule's outcome against its row.
    pub fn active_records(&self) -> Result<Vec<RuleRecord>, StoreError> {
        let records = self.query_rules(
            "WHERE active = 1 ORDER BY CASE provenance WHEN 'shipped' THEN 0
             WHEN 'reviewed' THEN 1 ELSE 2 END, id",
            params![],
        )?;
        let mut seen = std::collections::HashSet::new();
        Ok(records
            .into_iter()
            .filter(|r| {
                seen.insert((
                    r.rule.event_source.clone(),
                    r.rule.api().to_owned(),
                    serde_json::to_string(&r.rule.spec.requires).unwrap_or_default(),
                ))
            })
            .collect())
    }

    /// Records a reconciliation; returns its id.
    pub fn record_reconciliation(&mut self, new: &NewReconciliation) -> Result<i64, StoreError> {
        let file = self.file.clone();
        let tx = begin(&mut self.conn, &file)?;
        let (id, _) = insert_reconciliation(&tx, new, &now())
            .map_err(|e| sqlite(&file, "cannot record a reconciliation", e))?;
        tx.commit().map_err(|e| sqlite(&file, "cannot commit", e))?;
        Ok(id)
    }

    /// Past reconciliations with a trace signature, newest first.
    pub fn find_by_signature(&self, signature: &str) -> Result<Vec<Reconciliation>, StoreError> {
        self.query_reconciliations(
            "WHERE signature = ?1 ORDER BY created_at DESC, id DESC",
            params![signature],
        )
    }

    /// One reconciliation by id.
    pub fn reconciliation(&self, id: i64) -> Result<Reconciliation, StoreError> {
        self.query_reconciliations("WHERE id = ?1", params![id])?
            .pop()
            .ok_or_else(|| self.not_found("reconciliation", id))
    }

    /// Stores a rule learned from a validated fix for a call that had no rule; it is active
    /// at once (but never overrides a shipped rule). Proposing the same rule again returns
    /// the existing id.
    pub fn propose_learned(&mut self, rule: Rule, evidence: Evidence) -> Result<i64, StoreError> {
        validate(&rule).map_err(|m| self.invalid(format!("learned rule {}: {m}", rule.id())))?;
        let (body, hash) = encode(&rule, &self.file)?;
        let file = self.file.clone();
        let fail = |what: &str, e| sqlite(&file, what, e);
        let tx = begin(&mut self.conn, &file)?;
        let id = learn(&tx, &rule, &body, &hash, &evidence, &now())
            .map_err(|e| fail("cannot store a learned rule", e))?;
        tx.commit().map_err(|e| fail("cannot commit", e))?;
        Ok(id)
    }

    /// Counts a use of a rule. A learned rule that fails the configured number of times in a
    /// row (default 2) is demoted: made inactive until a person reviews it.
    pub fn record_outcome(&mut self, id: i64, success: bool) -> Result<RuleRecord, StoreError> {
        let demote_after = self.demote_after as i64;
        self.write_rule(id, |tx, now| {
            count_outcome(tx, id, success, demote_after, now)
        })
    }

    /// Marks a learned rule reviewed: it becomes active again with its failure streak cleared.
    pub fn review(&mut self, id: i64) -> Result<RuleRecord, StoreError> {
        let record = self.show(id)?;
        if !matches!(record.provenance, Provenance::Learned | Provenance::Agent) {
            return Err(self.invalid(format!(
                "rule {id} ({}) is {}, not learned or found by the agent",
                record.rule.id(),
                record.provenance.as_str()
            )));
        }
        self.write_rule(id, |tx, now| {
            tx.execute(
                "UPDATE rules SET provenance = 'reviewed', active = 1, consecutive_failures = 0,
                 updated_at = ?1 WHERE id = ?2",
                params![now, id],
            )
            .map(|_| ())
        })
    }

    /// Runs one rule update in a transaction and returns the rule as it is afterwards.
    fn write_rule(
        &mut self,
        id: i64,
        update: impl FnOnce(&rusqlite::Transaction<'_>, &str) -> rusqlite::Result<()>,
    ) -> Result<RuleRecord, StoreError> {
        let file = self.file.clone();
        let fail = |what: &str, e| sqlite(&file, what, e);
        let tx = begin(&mut self.conn, &file)?;
        let exists: Option<i64> = tx
            .query_row("SELECT id FROM rules WHERE id = ?1", params![id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| fail("cannot read rules", e))?;
        if exists.is_none() {
            return Err(StoreError::NotFound {
                file,
                what: "rule",
                id,
            });
        }
        update(&tx, &now()).map_err(|e| fail("cannot update a rule", e))?;
        tx.commit().map_err(|e| fail("cannot commit", e))?;
        self.show(id)
    }

    /// Stored rules matching a filter, by id.
    pub fn list(&self, filter: &RuleFilter) -> Result<Vec<RuleRecord>, StoreError> {
        self.query_rules(
            "WHERE (?1 IS NULL OR provenance = ?1) AND (?2 IS NULL OR service = ?2)
             AND (?3 IS NULL OR active = ?3) ORDER BY id",
            params![
                filter.provenance.map(Provenance::as_str),
                filter.service,
                filter.active
            ],
        )
    }

    /// One stored rule by id.
    pub fn show(&self, id: i64) -> Result<RuleRecord, StoreError> {
        self.query_rules("WHERE id = ?1", params![id])?
            .pop()
            .ok_or_else(|| self.not_found("rule", id))
    }

    /// Counts by provenance, service and outcome, and the rules' success rate.
    pub fn stats(&self) -> Result<Stats, StoreError> {
        let count_by = |sql: &str| -> Result<BTreeMap<String, u64>, StoreError> {
            let rows = self.query(sql, [], "cannot count", |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
            })?;
            Ok(rows.into_iter().map(|(k, n)| (k, n as u64)).collect())
        };
        let (successes, failures, inactive): (i64, i64, i64) = self
            .conn
            .query_row(
                "SELECT COALESCE(SUM(successes), 0), COALESCE(SUM(failures), 0),
                 COALESCE(SUM(1 - active), 0) FROM rules",
                [],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .map_err(|e| self.sqlite("cannot count", e))?;
        let (prompt_tokens, completion_tokens): (i64, i64) = self
            .conn
            .query_row(
                "SELECT COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0)
                 FROM reconciliations",
                [],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .map_err(|e| self.sqlite("cannot count", e))?;
        let uses = successes + failures;
        Ok(Stats {
            rules_by_provenance: count_by(
                "SELECT provenance, COUNT(*) FROM rules GROUP BY provenance",
            )?,
            rules_by_service: count_by("SELECT service, COUNT(*) FROM rules GROUP BY service")?,
            inactive_rules: inactive as u64,
            reconciliations_by_outcome: count_by(
                "SELECT outcome, COUNT(*) FROM reconciliations GROUP BY outcome",
            )?,
            rule_success_rate: (uses > 0).then(|| successes as f64 / uses as f64),
            prompt_tokens: prompt_tokens.max(0) as u64,
            completion_tokens: completion_tokens.max(0) as u64,
        })
    }

    /// Runs a query and maps its rows; `what` describes it in errors.
    fn query<T>(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
        what: &str,
        map: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, StoreError> {
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.sqlite(what, e))?;
        let rows = stmt
            .query_map(params, map)
            .map_err(|e| self.sqlite(what, e))?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.sqlite(what, e))
    }

    fn query_rules(
        &self,
        clause: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<RuleRecord>, StoreError> {
        let sql = format!("SELECT {RULE_COLUMNS} FROM rules {clause}");
        self.query(&sql, params, "cannot read rules", raw_rule)?
            .into_iter()
            .map(|raw| self.decode_rule(raw))
            .collect()
    }

    fn decode_rule(&self, raw: RawRule) -> Result<RuleRecord, StoreError> {
        let bad = |what: &str| self.invalid(format!("rule {}: bad stored {what}", raw.id));
        let rule: Rule = serde_json::from_str(&raw.body).map_err(|_| bad("body"))?;
        let evidence = match &raw.evidence {
            Some(text) => Some(serde_json::from_str(text).map_err(|_| bad("evidence"))?),
            None => None,
        };
        Ok(RuleRecord {
            id: raw.id,
            rule,
            provenance: Provenance::parse(&raw.provenance).ok_or_else(|| bad("provenance"))?,
            hash: raw.hash,
            successes: raw.successes as u64,
            failures: raw.failures as u64,
            consecutive_failures: raw.consecutive_failures as u64,
            active: raw.active,
            evidence,
            created_at: raw.created_at,
            updated_at: raw.updated_at,
        })
    }

    fn query_reconciliations(
        &self,
        clause: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<Reconciliation>, StoreError> {
        let sql = format!("SELECT {RECONCILIATION_COLUMNS} FROM reconciliations {clause}");
        let rows = self.query(&sql, params, "cannot read reconciliations", |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, String>(5)?,
                [
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                    row.get(6)?,
                ],
                row.get::<_, String>(7)?,
                [row.get::<_, i64>(8)?, row.get::<_, i64>(9)?],
            ))
        })?;
        rows.into_iter()
            .map(
                |(
                    id,
                    outcome,
                    [signature, workspace, intents, patch, detail],
                    created_at,
                    tokens,
                )| {
                    let outcome = Outcome::parse(&outcome).ok_or_else(|| {
                        self.invalid(format!(
                            "reconciliation {id}: bad stored outcome \"{outcome}\""
                        ))
                    })?;
                    Ok(Reconciliation {
                        id,
                        data: NewReconciliation {
                            signature,
                            workspace,
                            intents,
                            patch,
                            outcome,
                            detail,
                            prompt_tokens: tokens[0].max(0) as u64,
                            completion_tokens: tokens[1].max(0) as u64,
                        },
                        created_at,
                    })
                },
            )
            .collect()
    }

    fn invalid(&self, message: String) -> StoreError {
        StoreError::Invalid {
            file: self.file.clone(),
            message,
        }
    }

    fn not_found(&self, what: &'static str, id: i64) -> StoreError {
        StoreError::NotFound {
            file: self.file.clone(),
            what,
            id,
        }
    }
}

/// A stable signature of a trace: SHA-256 over the sorted, de-duplicated
/// (eventSource, eventName, resource identity) tuples, so the same drift made again (in any
/// order) has the same signature.
pub fn trace_signature<'a>(calls: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>) -> String {
    let mut tuples: Vec<_> = calls.into_iter().collect();
    tuples.sort_unstable();
    tuples.dedup();
    let mut hasher = Sha256::new();
    for (source, name, identity) in tuples {
        // Unit and record separators cannot occur in the fields.
        hasher.update(format!("{source}\u{1f}{name}\u{1f}{identity}\u{1e}").as_bytes());
    }
    hex(&hasher.finalize())
}

struct RawRule {
    id: i64,
    body: String,
    provenance: String,
    hash: String,
    successes: i64,
    failures: i64,
    consecutive_failures: i64,
    active: bool,
    evidence: Option<String>,
    created_at: String,
    updated_at: String,
}

fn raw_rule(row: &Row<'_>) -> rusqlite::Result<RawRule> {
    Ok(RawRule {
        id: row.get(0)?,
        body: row.get(1)?,
        provenance: row.get(2)?,
        hash: row.get(3)?,
        successes: row.get(4)?,
        failures: row.get(5)?,
        consecutive_failures: row.get(6)?,
        active: row.get(7)?,
        evidence: row.get(8)?,
        created_at: row.get(9)?,
        updated_at: row.get(10)?,
    })
}

fn insert_rule(
    tx: &rusqlite::Transaction<'_>,
    rule: &Rule,
    body: &str,
    hash: &str,
    provenance: Provenance,
    evidence: Option<&Evidence>,
    now: &str,
) -> rusqlite::Result<usize> {
    let evidence = evidence.and_then(|e| serde_json::to_string(e).ok());
    tx.execute(
        "INSERT INTO rules (rule_id, service, event_source, api, provenance, body, hash,
         evidence, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)",
        params![
            rule.id(),
            rule.service,
            rule.event_source,
            rule.api(),
            provenance.as_str(),
            body,
            hash,
            evidence,
            now
        ],
    )
}

/// Stores a learned rule unless the same rule (by hash) is already stored as learned or
/// reviewed, making the learned rules it supersedes inactive; returns its id.
fn learn(
    tx: &rusqlite::Transaction<'_>,
    rule: &Rule,
    body: &str,
    hash: &str,
    evidence: &Evidence,
    now: &str,
) -> rusqlite::Result<i64> {
    let existing: Option<i64> = tx
        .query_row(
            "SELECT id FROM rules WHERE hash = ?1 AND provenance <> 'shipped'",
            params![hash],
            |row| row.get(0),
        )
        .optional()?;
    if let Some(id) = existing {
        return Ok(id);
    }
    let provenance = if evidence.agent.is_some() {
        Provenance::Agent
    } else {
        Provenance::Learned
    };
    // A rule learned for an API supersedes the learned ones before it (it was learned because
    // they read no change from a call); a reviewed rule stays, a person chose it.
    tx.execute(
        "UPDATE rules SET active = 0, updated_at = ?1 WHERE active = 1
         AND provenance IN ('learned', 'agent') AND event_source = ?2 AND api = ?3",
        params![now, rule.event_source, rule.api()],
    )?;
    insert_rule(tx, rule, body, hash, provenance, Some(evidence), now)?;
    Ok(tx.last_insert_rowid())
}

/// Counts one use of a rule; a learned (or agent-found) rule reaching `demote_after` failures in a row is
/// made inactive.
fn count_outcome(
    tx: &rusqlite::Transaction<'_>,
    id: i64,
    success: bool,
    demote_after: i64,
    now: &str,
) -> rusqlite::Result<()> {
    if success {
        tx.execute(
            "UPDATE rules SET successes = successes + 1, consecutive_failures = 0,
             updated_at = ?1 WHERE id = ?2",
            params![now, id],
        )?;
    } else {
        tx.execute(
            "UPDATE rules SET failures = failures + 1,
             consecutive_failures = consecutive_failures + 1,
             active = CASE WHEN provenance IN ('learned', 'agent')
                            AND consecutive_failures + 1 >= ?1 THEN 0 ELSE active END,
             updated_at = ?2 WHERE id = ?3",
            params![demote_after, now, id],
        )?;
    }
    Ok(())
}

/// Inserts a reconciliation unless an identical one (same fingerprint) exists; returns its id
/// and whether it was added.
fn insert_reconciliation(
    tx: &rusqlite::Transaction<'_>,
    new: &NewReconciliation,
    created_at: &str,
) -> rusqlite::Result<(i64, bool)> {
    let fingerprint = fingerprint(new, created_at);
    let added = tx.execute(
        "INSERT OR IGNORE INTO reconciliations (fingerprint, signature, workspace, intents,
         patch, outcome, detail, created_at, prompt_tokens, completion_tokens)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            fingerprint,
            new.signature,
            new.workspace,
            new.intents,
            new.patch,
            new.outcome.as_str(),
            new.detail,
            created_at,
            new.prompt_tokens as i64,
            new.completion_tokens as i64
        ],
    )?;
    let id = tx.query_row(
        "SELECT id FROM reconciliations WHERE fingerprint = ?1",
        params![fingerprint],
        |row| row.get(0),
    )?;
    Ok((id, added == 1))
}

fn fingerprint(new: &NewReconciliation, created_at: &str) -> String {
    let mut hasher = Sha256::new();
    for part in [
        new.signature.as_str(),
        &new.workspace,
        &new.intents,
        &new.patch,
        new.outcome.as_str(),
        &new.detail,
        created_at,
    ] {
        hasher.update(part.len().to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hex(&hasher.finalize())
}

/// A rule's JSON body and its SHA-256.
fn encode(rule: &Rule, file: &str) -> Result<(String, String), StoreError> {
    let body = serde_json::to_string(rule).map_err(|e| StoreError::Invalid {
        file: file.to_owned(),
        message: format!("rule {} cannot be encoded: {e}", rule.id()),
    })?;
    let hash = hex(&Sha256::digest(body.as_bytes()));
    Ok((body, hash))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// Begins a transaction; dropping it without commit rolls it back.
fn begin<'c>(
    conn: &'c mut Connection,
    file: &str,
) -> Result<rusqlite::Transaction<'c>, StoreError> {
    conn.transaction()
        .map_err(|e| sqlite(file, "cannot begin", e))
}

fn sqlite(file: &str, what: &str, e: rusqlite::Error) -> StoreError {
    StoreError::Sqlite {
        file: file.to_owned(),
        message: format!("{what}: {e}"),
    }
}
