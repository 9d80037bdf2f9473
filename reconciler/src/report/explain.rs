//! `retrace explain EVENT_ID`: for one call, its verdict and why, and for an out-of-band
//! write the intent or finding it ended in and why; as text or JSON.

use super::{reconcile::finding_line, words};
use crate::attribute::{Attribution, Verdict};
use crate::ingest::Call;
use crate::intents::describe;
use crate::reconcile::Outcome;
use crate::resolve::Finding;
use serde::Serialize;
use std::fmt::Write;

/// What became of one call.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    /// The event id.
    pub event_id: String,
    /// When it was made.
    pub time: chrono::DateTime<chrono::Utc>,
    /// The API, e.g. `PutBucketVersioning`.
    pub api: String,
    /// The event source.
    pub event_source: String,
    /// Who made it.
    pub actor: String,
    /// Through what.
    pub client: String,
    /// Its verdict.
    pub verdict: Verdict,
    /// Why.
    pub reason: String,
    /// Where it ended, for an out-of-band write.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fate: Option<Fate>,
}

/// Where an out-of-band write ended in the report.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "in", rename_all = "kebab-case")]
pub enum Fate {
    /// Part of an intent.
    Intent {
        /// The intent's id, e.g. `I2`.
        id: String,
        /// Its story.
        story: String,
        /// The intent's net changes this call took part in, each with its decisions.
        changes: Vec<ExplainedChange>,
        /// The edits planned for the intent.
        edits: Vec<String>,
    },
    /// A finding.
    Finding {
        /// The finding.
        finding: Finding,
    },
    /// Neither: a bug of retrace.
    Unaccounted,
}

/// One net change of an intent and the decisions on it.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainedChange {
    /// The change in words.
    pub change: String,
    /// Each decision in words.
    pub decisions: Vec<String>,
}

impl Explanation {
    /// The explanation of `call`, attributed as `attribution`, with the reconciliation of the
    /// out-of-band calls (`None` when the call is not out of band).
    pub fn new(call: &Call, attribution: &Attribution, outcome: Option<&Outcome>) -> Self {
        Self {
            event_id: call.event_id.clone(),
            time: call.event_time,
            api: call.api_name().to_owned(),
            event_source: call.event_source.clone(),
            actor: call.identity.actor(),
            client: call.client.label(),
            verdict: attribution.verdict,
            reason: attribution.reason.clone(),
            fate: outcome.map(|o| fate(&call.event_id, o)),
        }
    }

    /// The explanation in words.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} {} at {} by {} ({})",
            self.api,
            self.event_id,
            self.time.format("%Y-%m-%d %H:%M:%S"),
            self.actor,
            self.client
        );
        let _ = writeln!(out, "Verdict: {}: {}", self.verdict, self.reason);
        match &self.fate {
            None => {
                let _ = writeln!(
                    out,
                    "Not reconciled: only out-of-band writes are grouped into intents."
                );
            }
            Some(Fate::Intent {
                id,
                story,
                changes,
                edits,
            }) => {
                let _ = writeln!(out, "Ended in intent {id}: {story}");
                if changes.is_empty() {
                    let _ = writeln!(out, "  it leaves no net change of its own");
                }
                for change in changes {
                    let _ = writeln!(out, "  * {}", change.change);
                    for decision in &change.decisions {
                        let _ = writeln!(out, "    {decision}");
                    }
                }
                for edit in edits {
                    let _ = writeln!(out, "  edit: {edit}");
                }
            }
            Some(Fate::Finding { finding }) => {
                let _ = writeln!(
                    out,
                    "Ended as a finding ({}): {}",
                    finding.kind.label(),
                    finding_line(finding)
                );
            }
            Some(Fate::Unaccounted) => {
                let _ = writeln!(
                    out,
                    "BUG: this out-of-band write is in no intent and no finding; please report it"
                );
            }
        }
        out
    }
}

/// Where the out-of-band write `event_id` ended in `outcome`.
fn fate(event_id: &str, outcome: &Outcome) -> Fate {
    let decided = outcome
        .intents
        .iter()
        .find(|d| d.intent.evidence.iter().any(|e| e.event_id == event_id));
    if let Some(d) = decided {
        let changes = d
            .intent
            .deltas
            .iter()
            .zip(&d.rulings)
            .filter(|(delta, _)| delta.evidence.iter().any(|e| e == event_id))
            .map(|(delta, rulings)| ExplainedChange {
                change: describe(delta),
                decisions: rulings
                    .iter()
                    .map(|r| {
                        format!(
                            "{} {}: {}",
                            words::decision(r.decision),
                            words::part(&r.part, Some(delta)),
                            r.reason
                        )
                    })
                    .collect(),
            })
            .collect();
        let edits = outcome
            .plan
            .steps
            .iter()
            .filter(|s| s.intent == d.intent.id)
            .map(|s| format!("{} on {}: {}", s.call.name(), s.resource, s.why))
            .collect();
        return Fate::Intent {
            id: d.intent.id.clone(),
            story: d.intent.story.clone(),
            changes,
            edits,
        };
    }
    match outcome.findings.iter().find(|f| f.event_id == event_id) {
        Some(finding) => Fate::Finding {
            finding: finding.clone(),
        },
        None => Fate::Unaccounted,
    }
}
