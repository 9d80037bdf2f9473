//! Export and import of learned and reviewed rules (and optionally reconciliations) as one
//! JSON document, so what one team's store learned can be shared. Import is transactional and
//! idempotent: everything is written or nothing, and entries already present are skipped.

use std::io::{Read, Write};

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::{
    Evidence, NewReconciliation, Provenance, RuleFilter, Store, StoreError, begin, encode,
    insert_reconciliation, sqlite,
};
use crate::rules::{Rule, validate};

/// The `format` value of an export document.
const FORMAT: &str = "retrace-knowledge";
/// The document version this build writes and reads.
const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    format: String,
    version: u32,
    rules: Vec<ExportedRule>,
    #[serde(default)]
    reconciliations: Vec<ExportedReconciliation>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExportedRule {
    provenance: Provenance,
    rule: Rule,
    successes: u64,
    failures: u64,
    consecutive_failures: u64,
    active: bool,
    #[serde(default)]
    evidence: Option<Evidence>,
    created_at: String,
    updated_at: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExportedReconciliation {
    #[serde(flatten)]
    data: NewReconciliation,
    created_at: String,
}

/// What [`Store::import`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Rules added.
    pub rules_added: u64,
    /// Rules already present (same content), skipped.
    pub rules_skipped: u64,
    /// Reconciliations added.
    pub reconciliations_added: u64,
    /// Reconciliations already present, skipped.
    pub reconciliations_skipped: u64,
}

impl Store {
    /// Writes the learned and reviewed rules, and with `reconciliations` every reconciliation,
    /// as a JSON document.
    pub fn export<W: Write>(&self, writer: W, reconciliations: bool) -> Result<(), StoreError> {
        let mut rules = Vec::new();
        for provenance in [Provenance::Learned, Provenance::Agent, Provenance::Reviewed] {
            let filter = RuleFilter {
                provenance: Some(provenance),
                ..RuleFilter::default()
            };
            rules.extend(self.list(&filter)?.into_iter().map(|r| ExportedRule {
                provenance: r.provenance,
                rule: r.rule,
                successes: r.successes,
                failures: r.failures,
                consecutive_failures: r.consecutive_failures,
                active: r.active,
                evidence: r.evidence,
                created_at: r.created_at,
                updated_at: r.updated_at,
            }));
        }
        let reconciliations = if reconciliations {
            self.query_reconciliations("ORDER BY id", params![])?
                .into_iter()
                .map(|r| ExportedReconciliation {
                    data: r.data,
                    created_at: r.created_at,
                })
                .collect()
        } else {
            Vec::new()
        };
        let document = Document {
            format: FORMAT.to_owned(),
            version: VERSION,
            rules,
            reconciliations,
        };
        serde_json::to_writer_pretty(writer, &document).map_err(|e| StoreError::Export {
            file: self.file.clone(),
            message: e.to_string(),
        })
    }

    /// Reads an export document into the store in one transaction. A bad entry rejects the
    /// whole document, naming the entry; rules and reconciliations already present are skipped.
    pub fn import<R: Read>(&mut self, reader: R) -> Result<ImportReport, StoreError> {
        let document = self.parse_document(reader)?;
        let file = self.file.clone();
        let fail = |what: &str, e| sqlite(&file, what, e);
        let tx = begin(&mut self.conn, &file)?;
        let mut report = ImportReport::default();
        for (index, entry) in document.rules.iter().enumerate() {
            let name = format!("rules[{index}] ({})", entry.rule.id());
            let import_error = |message: String| StoreError::Import {
                file: file.clone(),
                entry: name.clone(),
                message,
            };
            if entry.provenance == Provenance::Shipped {
                return Err(import_error(
                    "shipped rules come from the rule files, not from imports".into(),
                ));
            }
            validate(&entry.rule).map_err(import_error)?;
            let (body, hash) = encode(&entry.rule, &file)?;
            let evidence = entry
                .evidence
                .as_ref()
                .and_then(|e| serde_json::to_string(e).ok());
            let added = tx
                .execute(
                    "INSERT OR IGNORE INTO rules (rule_id, service, event_source, api,
                     provenance, body, hash, successes, failures, consecutive_failures, active,
                     evidence, created_at, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                    params![
                        entry.rule.id(),
                        entry.rule.service,
                        entry.rule.event_source,
                        entry.rule.api(),
                        entry.provenance.as_str(),
                        body,
                        hash,
                        entry.successes as i64,
                        entry.failures as i64,
                        entry.consecutive_failures as i64,
                        entry.active,
                        evidence,
                        entry.created_at,
                        entry.updated_at
                    ],
                )
                .map_err(|e| import_error(e.to_string()))?;
            if added == 1 {
                report.rules_added += 1;
            } else {
                report.rules_skipped += 1;
            }
        }
        for (index, entry) in document.reconciliations.iter().enumerate() {
            let (_, added) =
                insert_reconciliation(&tx, &entry.data, &entry.created_at).map_err(|e| {
                    StoreError::Import {
                        file: file.clone(),
                        entry: format!("reconciliations[{index}]"),
                        message: e.to_string(),
                    }
                })?;
            if added {
                report.reconciliations_added += 1;
            } else {
                report.reconciliations_skipped += 1;
            }
        }
        tx.commit().map_err(|e| fail("cannot commit", e))?;
        Ok(report)
    }

    fn parse_document<R: Read>(&self, reader: R) -> Result<Document, StoreError> {
        let mut deserializer = serde_json::Deserializer::from_reader(reader);
        let document: Document =
            serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
                let path = e.path().to_string();
                StoreError::Import {
                    file: self.file.clone(),
                    entry: if path == "." { "document".into() } else { path },
                    message: e.into_inner().to_string(),
                }
            })?;
        if document.format != FORMAT || document.version != VERSION {
            return Err(StoreError::Import {
                file: self.file.clone(),
                entry: "document".into(),
                message: format!(
                    "format \"{}\" version {} is not \"{FORMAT}\" version {VERSION}",
                    document.format, document.version
                ),
            });
        }
        Ok(document)
    }
}
