//! What nightly runs keep: each workspace's watermark (the last event handled), the pull
//! requests they opened with the lines each rule wrote, and what reviewers did with them.

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::{Store, StoreError, begin, now, sqlite};

/// The last events a workspace's nightly run handled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Watermark {
    /// The latest event time handled (RFC 3339).
    pub event_time: String,
    /// The ids of the events at that time.
    pub event_ids: Vec<String>,
}

/// A line a change request added, and the rules behind the edit that wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewLine {
    /// The file, relative to the repository.
    pub file: String,
    /// The line's text.
    pub text: String,
    /// The rule ids (`ec2:ModifyInstanceAttribute`) behind it.
    pub rules: Vec<String>,
}

/// Where a change request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReviewState {
    /// Waiting for a reviewer.
    Open,
    /// Merged.
    Merged,
    /// Closed without merging by a reviewer: a rejection.
    Closed,
    /// Closed after retrace itself said it proposes nothing any more: not a rejection.
    Withdrawn,
    /// The forge no longer knows it (deleted, or the repository moved): forgotten.
    Gone,
}

impl ReviewState {
    /// The state as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewState::Open => "open",
            ReviewState::Merged => "merged",
            ReviewState::Closed => "closed",
            ReviewState::Withdrawn => "withdrawn",
            ReviewState::Gone => "gone",
        }
    }

    fn parse(text: &str) -> ReviewState {
        match text {
            "merged" => ReviewState::Merged,
            "closed" => ReviewState::Closed,
            "withdrawn" => ReviewState::Withdrawn,
            "gone" => ReviewState::Gone,
            _ => ReviewState::Open,
        }
    }
}

/// A change a reviewer rejected (its request closed unmerged), by fingerprint: retrace does
/// not propose it again until the cloud changes that attribute again.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Rejection {
    /// The resource (its state address, else its type and id).
    pub resource: String,
    /// The attribute, block or `tags` the change was about (empty for a whole resource).
    pub attribute: String,
    /// The value proposed, as canonical JSON.
    pub value: String,
    /// The request that was closed.
    pub number: i64,
}

/// A pull or merge request a nightly run opened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Review {
    /// The row id.
    pub id: i64,
    /// The workspace it is for.
    pub workspace: String,
    /// `github` or `gitlab`.
    pub forge: String,
    /// The repository on the forge (`owner/name`, or a GitLab project path).
    pub repository: String,
    /// Its number on the forge.
    pub number: i64,
    /// Its web address.
    pub url: String,
    /// The branch it proposes.
    pub branch: String,
    /// The commit retrace last pushed to it.
    pub head: String,
    /// The lines retrace's commits added, with their rules.
    pub lines: Vec<ReviewLine>,
    /// Where it stands.
    pub state: ReviewState,
    /// The head at which a run said the request proposes nothing any more, if one did.
    pub obsolete_at: Option<String>,
}

/// What reviewers did with one rule's changes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RuleReview {
    /// The rule id.
    pub rule: String,
    /// Changes merged.
    pub merged: u64,
    /// Changes in requests closed without merging.
    pub rejected: u64,
    /// Lines a reviewer changed or removed before merging.
    pub corrected: u64,
}

/// How one review ended, for [`Store::settle_review`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settlement {
    /// Merged or closed.
    pub state: ReviewState,
    /// The lines a reviewer changed or removed before merging.
    pub corrected: Vec<ReviewLine>,
}

const REVIEW_COLUMNS: &str =
    "id, workspace, forge, repository, number, url, branch, head, lines, state, obsolete_at";

impl Store {
    /// The watermark of `workspace`, if a run has set one.
    pub fn watermark(&self, workspace: &str) -> Result<Option<Watermark>, StoreError> {
        self.conn
            .query_row(
                "SELECT event_time, event_ids FROM watermarks WHERE workspace = ?1",
                params![workspace],
                |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)),
            )
            .optional()
            .map_err(|e| self.sqlite("cannot read a watermark", e))?
            .map(|(event_time, ids)| {
                let event_ids = serde_json::from_str(&ids)
                    .map_err(|e| self.invalid(format!("watermark of {workspace}: {e}")))?;
                Ok(Watermark {
                    event_time,
                    event_ids,
                })
            })
            .transpose()
    }

    /// Sets the watermark of `workspace`.
    pub fn set_watermark(&mut self, workspace: &str, mark: &Watermark) -> Result<(), StoreError> {
        let ids = serde_json::to_string(&mark.event_ids)
            .map_err(|e| self.invalid(format!("watermark of {workspace}: {e}")))?;
        self.conn
            .execute(
                "INSERT INTO watermarks (workspace, event_time, event_ids, updated_at)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (workspace) DO UPDATE SET event_time = ?2, event_ids = ?3,
                 updated_at = ?4",
                params![workspace, mark.event_time, ids, now()],
            )
            .map_err(|e| self.sqlite("cannot set a watermark", e))?;
        Ok(())
    }

    /// Records a request a run opened or updated (by forge, repository and number): its head
    /// and the lines its commits added so far.
    pub fn save_review(&mut self, review: &Review) -> Result<i64, StoreError> {
        save(&self.conn, review, &now()).map_err(|e| self.sqlite("cannot record a review", e))
    }

    /// The open requests of `workspace`.
    pub fn open_reviews(&self, workspace: &str) -> Result<Vec<Review>, StoreError> {
        let sql = format!(
            "SELECT {REVIEW_COLUMNS} FROM reviews WHERE workspace = ?1 AND state = 'open' ORDER BY id"
        );
        let raw = self.query(&sql, params![workspace], "cannot read reviews", raw_review)?;
        raw.into_iter()
            .map(|(mut review, lines)| {
                review.lines = serde_json::from_str(&lines)
                    .map_err(|e| self.invalid(format!("review {}: {e}", review.id)))?;
                Ok(review)
            })
            .collect()
    }

    /// Records how review `id` ended, in one transaction: its state, and for every rule
    /// behind its lines a merge or a rejection, plus a correction for each line a reviewer
    /// changed. A review already settled is left as it is.
    pub fn settle_review(&mut self, id: i64, settlement: &Settlement) -> Result<(), StoreError> {
        let file = self.file.clone();
        let fail = |what: &str, e| sqlite(&file, what, e);
        let now = now();
        let tx = begin(&mut self.conn, &file)?;
        let (lines, state): (String, String) = tx
            .query_row(
                "SELECT lines, state FROM reviews WHERE id = ?1",
                params![id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .map_err(|_| StoreError::NotFound {
                file: file.clone(),
                what: "review",
                id,
            })?;
        if state != "open" {
            return Ok(());
        }
        let lines: Vec<ReviewLine> =
            serde_json::from_str(&lines).map_err(|e| StoreError::Invalid {
                file: file.clone(),
                message: format!("review {id}: {e}"),
            })?;
        let mut rules: Vec<&String> = lines.iter().flat_map(|l| &l.rules).collect();
        rules.sort();
        rules.dedup();
        let column = match settlement.state {
            ReviewState::Merged => Some("merged"),
            ReviewState::Closed => Some("rejected"),
            ReviewState::Withdrawn | ReviewState::Gone => None,
            ReviewState::Open => return Ok(()),
        };
        for rule in rules.into_iter().filter(|_| column.is_some()) {
            bump(&tx, rule, column.unwrap_or_default(), &now)
                .map_err(|e| fail("cannot count a review", e))?;
        }
        for line in &settlement.corrected {
            for rule in &line.rules {
                bump(&tx, rule, "corrected", &now).map_err(|e| fail("cannot count a review", e))?;
            }
        }
        tx.execute(
            "UPDATE reviews SET state = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, settlement.state.as_str(), now],
        )
        .map_err(|e| fail("cannot settle a review", e))?;
        tx.commit().map_err(|e| fail("cannot commit", e))
    }

    /// Notes that a run told the request (by forge, repository and number) it proposes
    /// nothing any more, at its head `head`.
    pub fn note_obsolete(
        &mut self,
        forge: &str,
        repository: &str,
        number: i64,
        head: &str,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE reviews SET obsolete_at = ?4, updated_at = ?5
                 WHERE forge = ?1 AND repository = ?2 AND number = ?3",
                params![forge, repository, number, head, now()],
            )
            .map_err(|e| self.sqlite("cannot note an obsolete review", e))?;
        Ok(())
    }

    /// What the branch of `workspace` holds, as the reconciler wrote it (opaque JSON), if a run
    /// kept it.
    pub fn ledger(&self, workspace: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row(
                "SELECT ledger FROM ledgers WHERE workspace = ?1",
                params![workspace],
                |row| row.get(0),
            )
            .optional()
            .map_err(|e| self.sqlite("cannot read a ledger", e))
    }

    /// Records one night of `workspace` in one transaction: the request opened or updated
    /// (when there is one), what its branch holds (`None`: nothing, the ledger is dropped)
    /// and the watermark.
    pub fn record_night(&mut self, night: &Night<'_>) -> Result<(), StoreError> {
        let file = self.file.clone();
        let fail = |what: &str, e| sqlite(&file, what, e);
        let now = now();
        let tx = begin(&mut self.conn, &file)?;
        if let Some(review) = night.review {
            save(&tx, review, &now).map_err(|e| fail("cannot record a review", e))?;
        }
        match night.ledger {
            Some(ledger) => tx.execute(
                "INSERT INTO ledgers (workspace, ledger, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (workspace) DO UPDATE SET ledger = ?2, updated_at = ?3",
                params![night.workspace, ledger, now],
            ),
            None => tx.execute(
                "DELETE FROM ledgers WHERE workspace = ?1",
                params![night.workspace],
            ),
        }
        .map_err(|e| fail("cannot keep a ledger", e))?;
        if let Some(mark) = night.mark {
            let ids = serde_json::to_string(&mark.event_ids).unwrap_or_else(|_| "[]".into());
            tx.execute(
                "INSERT INTO watermarks (workspace, event_time, event_ids, updated_at)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (workspace) DO UPDATE SET event_time = ?2, event_ids = ?3,
                 updated_at = ?4",
                params![night.workspace, mark.event_time, ids, now],
            )
            .map_err(|e| fail("cannot set a watermark", e))?;
        }
        tx.commit().map_err(|e| fail("cannot commit", e))
    }

    /// Remembers changes a reviewer rejected in `workspace`.
    pub fn remember_rejections(
        &mut self,
        workspace: &str,
        rejected: &[Rejection],
    ) -> Result<(), StoreError> {
        let file = self.file.clone();
        let fail = |what: &str, e| sqlite(&file, what, e);
        let now = now();
        let tx = begin(&mut self.conn, &file)?;
        for r in rejected {
            tx.execute(
                "INSERT INTO rejections (workspace, resource, attribute, value, number, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT DO UPDATE SET number = ?5, created_at = ?6",
                params![workspace, r.resource, r.attribute, r.value, r.number, now],
            )
            .map_err(|e| fail("cannot remember a rejection", e))?;
        }
        tx.commit().map_err(|e| fail("cannot commit", e))
    }

    /// The changes reviewers rejected in `workspace` that still stand.
    pub fn rejections(&self, workspace: &str) -> Result<Vec<Rejection>, StoreError> {
        self.query(
            "SELECT resource, attribute, value, number FROM rejections WHERE workspace = ?1
             ORDER BY resource, attribute, value",
            params![workspace],
            "cannot read rejections",
            |row| {
                Ok(Rejection {
                    resource: row.get(0)?,
                    attribute: row.get(1)?,
                    value: row.get(2)?,
                    number: row.get(3)?,
                })
            },
        )
    }

    /// Forgets the rejections of `resource`'s `attribute` in `workspace` for any value but
    /// `value`: the cloud changed that attribute again.
    pub fn forget_rejections(
        &mut self,
        workspace: &str,
        resource: &str,
        attribute: &str,
        value: &str,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "DELETE FROM rejections WHERE workspace = ?1 AND resource = ?2
                 AND attribute = ?3 AND value <> ?4",
                params![workspace, resource, attribute, value],
            )
            .map_err(|e| self.sqlite("cannot forget a rejection", e))?;
        Ok(())
    }

    /// What reviewers did with each rule's changes, by rule id.
    pub fn rule_reviews(&self) -> Result<Vec<RuleReview>, StoreError> {
        self.query(
            "SELECT rule, merged, rejected, corrected FROM rule_reviews ORDER BY rule",
            [],
            "cannot read review counts",
            |row| {
                Ok(RuleReview {
                    rule: row.get(0)?,
                    merged: row.get::<_, i64>(1)? as u64,
                    rejected: row.get::<_, i64>(2)? as u64,
                    corrected: row.get::<_, i64>(3)? as u64,
                })
            },
        )
    }
}

/// One night of a workspace, for [`Store::record_night`].
#[derive(Debug, Clone, Copy)]
pub struct Night<'a> {
    /// The workspace.
    pub workspace: &'a str,
    /// The request opened or updated, if any.
    pub review: Option<&'a Review>,
    /// What its branch holds (opaque JSON); `None` drops what was kept.
    pub ledger: Option<&'a str>,
    /// The new watermark, if it moves.
    pub mark: Option<&'a Watermark>,
}

/// Inserts or updates a review (by forge, repository and number); returns its id.
fn save(conn: &rusqlite::Connection, review: &Review, now: &str) -> rusqlite::Result<i64> {
    let lines = serde_json::to_string(&review.lines).unwrap_or_else(|_| "[]".into());
    conn.query_row(
        "INSERT INTO reviews (workspace, forge, repository, number, url, branch, head,
             lines, state, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)
         ON CONFLICT (forge, repository, number) DO UPDATE SET head = ?7, lines = ?8,
             state = ?9, url = ?5, updated_at = ?10
         RETURNING id",
        params![
            review.workspace,
            review.forge,
            review.repository,
            review.number,
            review.url,
            review.branch,
            review.head,
            lines,
            review.state.as_str(),
            now
        ],
        |row| row.get(0),
    )
}

/// A review row with its lines still as JSON text.
fn raw_review(row: &rusqlite::Row<'_>) -> rusqlite::Result<(Review, String)> {
    let review = Review {
        id: row.get(0)?,
        workspace: row.get(1)?,
        forge: row.get(2)?,
        repository: row.get(3)?,
        number: row.get(4)?,
        url: row.get(5)?,
        branch: row.get(6)?,
        head: row.get(7)?,
        lines: Vec::new(),
        state: ReviewState::parse(&row.get::<_, String>(9)?),
        obsolete_at: row.get(10)?,
    };
    Ok((review, row.get(8)?))
}

/// Adds one to `column` of `rule`'s review counts.
fn bump(
    tx: &rusqlite::Transaction<'_>,
    rule: &str,
    column: &str,
    now: &str,
) -> rusqlite::Result<()> {
    let sql = format!(
        "INSERT INTO rule_reviews (rule, {column}, updated_at) VALUES (?1, 1, ?2)
         ON CONFLICT (rule) DO UPDATE SET {column} = {column} + 1, updated_at = ?2"
    );
    tx.execute(&sql, params![rule, now]).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(number: i64) -> Review {
        Review {
            id: 0,
            workspace: "shop".into(),
            forge: "github".into(),
            repository: "acme/infra".into(),
            number,
            url: format!("https://github.example/acme/infra/pull/{number}"),
            branch: "retrace/shop".into(),
            head: "abc".into(),
            lines: vec![
                ReviewLine {
                    file: "main.tf".into(),
                    text: "  instance_type = \"t3.large\"".into(),
                    rules: vec!["ec2:ModifyInstanceAttribute".into()],
                },
                ReviewLine {
                    file: "main.tf".into(),
                    text: "    Team = \"web\"".into(),
                    rules: vec!["ec2:CreateTags".into()],
                },
            ],
            state: ReviewState::Open,
            obsolete_at: None,
        }
    }

    #[test]
    fn a_watermark_is_kept_per_workspace() {
        let mut store = Store::open_in_memory().expect("store");
        assert_eq!(store.watermark("shop").expect("reads"), None);
        let mark = Watermark {
            event_time: "2026-11-24T10:00:00Z".into(),
            event_ids: vec!["e1".into(), "e2".into()],
        };
        store.set_watermark("shop", &mark).expect("sets");
        let later = Watermark {
            event_time: "2026-11-25T10:00:00Z".into(),
            event_ids: vec!["e3".into()],
        };
        store.set_watermark("shop", &later).expect("sets");
        assert_eq!(store.watermark("shop").expect("reads"), Some(later));
        assert_eq!(store.watermark("other").expect("reads"), None);
    }

    #[test]
    fn saving_a_review_again_updates_it() {
        let mut store = Store::open_in_memory().expect("store");
        let first = store.save_review(&review(7)).expect("saves");
        let mut again = review(7);
        again.head = "def".into();
        assert_eq!(store.save_review(&again).expect("saves"), first);
        let open = store.open_reviews("shop").expect("reads");
        assert_eq!(open.len(), 1);
        assert_eq!(open[0].head, "def");
        assert_eq!(open[0].lines, review(7).lines);
        store
            .note_obsolete("github", "acme/infra", 7, "def")
            .expect("notes");
        let open = store.open_reviews("shop").expect("reads");
        assert_eq!(open[0].obsolete_at.as_deref(), Some("def"));
    }

    #[test]
    fn merges_rejections_and_corrections_are_counted_per_rule() {
        let mut store = Store::open_in_memory().expect("store");
        let merged = store.save_review(&review(1)).expect("saves");
        let closed = store.save_review(&review(2)).expect("saves");
        let corrected = vec![review(1).lines[1].clone()];
        let merge = Settlement {
            state: ReviewState::Merged,
            corrected,
        };
        store.settle_review(merged, &merge).expect("settles");
        // Settling twice counts once.
        store.settle_review(merged, &merge).expect("settles");
        let close = Settlement {
            state: ReviewState::Closed,
            corrected: Vec::new(),
        };
        store.settle_review(closed, &close).expect("settles");
        let counts = store.rule_reviews().expect("reads");
        let by = |rule: &str| counts.iter().find(|c| c.rule == rule).cloned().expect(rule);
        assert_eq!(
            (
                by("ec2:CreateTags").merged,
                by("ec2:CreateTags").rejected,
                by("ec2:CreateTags").corrected
            ),
            (1, 1, 1)
        );
        let modify = by("ec2:ModifyInstanceAttribute");
        assert_eq!(
            (modify.merged, modify.rejected, modify.corrected),
            (1, 1, 0)
        );
        assert!(store.open_reviews("shop").expect("reads").is_empty());
    }

    #[test]
    fn a_withdrawn_or_gone_request_counts_for_no_rule() {
        let mut store = Store::open_in_memory().expect("store");
        for (number, state) in [(1, ReviewState::Withdrawn), (2, ReviewState::Gone)] {
            let id = store.save_review(&review(number)).expect("saves");
            let settlement = Settlement {
                state,
                corrected: Vec::new(),
            };
            store.settle_review(id, &settlement).expect("settles");
        }
        assert!(store.rule_reviews().expect("reads").is_empty());
        assert!(store.open_reviews("shop").expect("reads").is_empty());
    }

    #[test]
    fn a_rejection_stands_until_the_attribute_takes_another_value() {
        let mut store = Store::open_in_memory().expect("store");
        let rejected = Rejection {
            resource: "aws_instance.web".into(),
            attribute: "instance_type".into(),
            value: "\"t3.large\"".into(),
            number: 4,
        };
        store
            .remember_rejections("shop", std::slice::from_ref(&rejected))
            .expect("rejects");
        store
            .forget_rejections("shop", "aws_instance.web", "instance_type", "\"t3.large\"")
            .expect("forgets");
        assert_eq!(store.rejections("shop").expect("reads"), [rejected]);
        assert!(store.rejections("other").expect("reads").is_empty());
        store
            .forget_rejections("shop", "aws_instance.web", "instance_type", "\"t3.xlarge\"")
            .expect("forgets");
        assert!(store.rejections("shop").expect("reads").is_empty());
    }

    #[test]
    fn a_night_is_recorded_whole_and_its_ledger_dropped_when_empty() {
        let mut store = Store::open_in_memory().expect("store");
        let mark = Watermark {
            event_time: "2026-11-24T10:00:00Z".into(),
            event_ids: vec!["e1".into()],
        };
        let open = review(3);
        let night = Night {
            workspace: "shop",
            review: Some(&open),
            ledger: Some("{\"entries\":[]}"),
            mark: Some(&mark),
        };
        store.record_night(&night).expect("records");
        assert_eq!(store.watermark("shop").expect("reads"), Some(mark));
        assert_eq!(store.open_reviews("shop").expect("reads").len(), 1);
        assert_eq!(
            store.ledger("shop").expect("reads").as_deref(),
            Some("{\"entries\":[]}")
        );
        let empty = Night {
            workspace: "shop",
            review: None,
            ledger: None,
            mark: None,
        };
        store.record_night(&empty).expect("records");
        assert_eq!(store.ledger("shop").expect("reads"), None);
    }
}
