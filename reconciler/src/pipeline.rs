//! Runs ingest and attribution over a set of sources: every call is filtered, attributed,
//! de-duplicated and put in time order; bad records and failed inputs are kept as findings.

use std::sync::Arc;

use futures::StreamExt;

use crate::attribute::{Attributor, Verdict};
use crate::ingest::order::{Collector, DEFAULT_RUN_KEYS, Holding, Ordered};
use crate::ingest::{BadRecord, Call, Filter, Pushdown, Source, SourceError, SourceItem};

/// Detailed bad-record findings kept per run; beyond this only the count grows.
pub const MAX_BAD_RECORDS: usize = 1000;

/// What a run looks at and keeps.
pub struct Request {
    /// The window, accounts and regions.
    pub filter: Filter,
    /// The verdicts whose calls are returned; calls of every verdict are counted.
    pub keep: Vec<Verdict>,
    /// Keys held in memory before spilling (see [`crate::ingest::order`]).
    pub run_keys: usize,
    /// Where the kept calls wait to be read back in order: spooled for a caller that
    /// streams them out (`retrace events`, which prints each record's text), in memory for
    /// one that holds them all afterwards (a reconciliation).
    pub holding: Holding,
}

impl Request {
    /// A request returning the calls of the given verdicts (none when empty: counts only).
    pub fn new(filter: Filter, keep: Vec<Verdict>) -> Self {
        Self {
            filter,
            keep,
            run_keys: DEFAULT_RUN_KEYS,
            holding: Holding::Spool,
        }
    }

    /// Whether sources may leave out read-only, failed and Terraform calls: only when the
    /// caller wants out-of-band calls alone.
    fn pushdown(&self, attributor: &Attributor) -> Pushdown {
        Pushdown {
            filter: self.filter.clone(),
            writes_only: self.keep == [Verdict::OutOfBand],
            // With a run token required, a Terraform call may be out of band: keep them.
            drop_terraform: self.keep == [Verdict::OutOfBand] && !attributor.requires_run_token(),
            attribution: Some(Arc::new(attributor.clone())),
            drop_records: self.holding == Holding::Memory { records: false },
        }
    }
}

/// What a run read, for the report's input section.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct InputSummary {
    /// The sources, described.
    pub sources: Vec<String>,
    /// Records the sources gave (malformed ones included, duplicates counted each time).
    pub records: u64,
    /// Records inside the window, accounts and regions asked for.
    pub in_window: u64,
    /// Records outside them.
    pub filtered_out: u64,
    /// Deliveries of an event already read (same `eventID`), dropped.
    pub duplicates: u64,
    /// Malformed records skipped.
    pub skipped: u64,
    /// The first of them, each with its file, index, offset and reason.
    pub skipped_records: Vec<SkippedRecord>,
    /// The earliest event time inside the window.
    pub first: Option<chrono::DateTime<chrono::Utc>>,
    /// The latest event time inside the window.
    pub last: Option<chrono::DateTime<chrono::Utc>>,
}

/// A malformed record, as the input section lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SkippedRecord {
    /// The file or API page.
    pub source: String,
    /// The record's index in it.
    pub index: u64,
    /// The byte offset, for files.
    pub offset: Option<u64>,
    /// Why it was skipped.
    pub reason: String,
}

impl InputSummary {
    /// Notes an event time inside the window.
    fn saw(&mut self, time: chrono::DateTime<chrono::Utc>) {
        self.in_window += 1;
        self.first = Some(self.first.map_or(time, |f| f.min(time)));
        self.last = Some(self.last.map_or(time, |l| l.max(time)));
    }
}

/// What was found besides calls: skipped records, filtered calls, failed inputs.
#[derive(Debug, Default)]
pub struct Findings {
    /// Records skipped as malformed (at most [`MAX_BAD_RECORDS`] in detail).
    pub bad_records: Vec<BadRecord>,
    /// How many records were skipped in all.
    pub bad_record_count: u64,
    /// Calls outside the filter's window, accounts or regions.
    pub filtered_out: u64,
    /// Inputs that failed as a whole.
    pub errors: Vec<SourceError>,
    /// What was read, so far.
    pub input: InputSummary,
}

impl Findings {
    /// Counts a call outside the window, accounts or regions.
    fn outside(&mut self) {
        self.filtered_out += 1;
        self.input.filtered_out += 1;
    }

    fn bad(&mut self, bad: BadRecord) {
        tracing::warn!(
            record = %crate::text::escaped(&bad.origin.to_string()),
            reason = %crate::text::escaped(&bad.reason),
            "skipped a malformed record"
        );
        self.bad_record_count += 1;
        self.input.skipped += 1;
        if self.bad_records.len() < MAX_BAD_RECORDS {
            self.bad_records.push(bad);
        }
    }
}

/// The result of a run before the ordered calls are read.
pub struct Gathered {
    /// Kept calls in time order, with the counts.
    pub calls: Ordered,
    /// Skipped records, filtered calls and failed inputs.
    pub findings: Findings,
    /// Whether a source left out read-only, failed or Terraform calls server-side, so the
    /// counts of those verdicts cover only what was returned.
    pub pushed_down: bool,
}

impl Gathered {
    /// The kept calls read back in time order, duplicates removed.
    pub fn into_calls(self) -> Result<Vec<Call>, PipelineError> {
        Ok(self.into_calls_and_input()?.0)
    }

    /// The kept calls in time order, and what was read (its duplicates known once every
    /// call has been read back).
    pub fn into_calls_and_input(self) -> Result<(Vec<Call>, InputSummary), PipelineError> {
        let (calls, counts) = self.calls.into_calls()?;
        let mut input = self.findings.input;
        input.duplicates = counts.duplicates;
        input.skipped_records = self
            .findings
            .bad_records
            .iter()
            .map(|bad| SkippedRecord {
                source: bad.origin.source.to_string(),
                index: bad.origin.index,
                offset: bad.origin.offset,
                reason: bad.reason.clone(),
            })
            .collect();
        Ok((calls, input))
    }
}

/// A run failed for a reason outside any one input.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The temporary spool or run files could not be written or read.
    #[error("temporary storage failed: {0}")]
    Spool(#[from] std::io::Error),
    /// No record fell inside the window: an all-clear nobody should trust.
    #[error(
        "no CloudTrail record inside {window} was read from {sources} ({records} record(s) read, {outside} outside the window, accounts or regions, {malformed} malformed): check the sources and the window, or pass --allow-empty"
    )]
    NothingRead {
        /// The window, in words.
        window: String,
        /// The sources, described.
        sources: String,
        /// Records read.
        records: u64,
        /// Records outside the window, accounts or regions.
        outside: u64,
        /// Malformed records.
        malformed: u64,
    },
}

/// Refuses a run in which no record fell inside the filter's window.
pub fn require_records(input: &InputSummary, filter: &Filter) -> Result<(), PipelineError> {
    if input.in_window > 0 {
        return Ok(());
    }
    Err(PipelineError::NothingRead {
        window: filter.window(),
        sources: input.sources.join("; "),
        records: input.records,
        outside: input.filtered_out,
        malformed: input.skipped,
    })
}

/// Reads every source, attributes each call and collects the result.
pub async fn gather(
    sources: &[Box<dyn Source>],
    attributor: &Attributor,
    request: &Request,
) -> Result<Gathered, PipelineError> {
    let keep = request.keep.clone();
    let mut collector = Collector::new(
        move |v| keep.contains(&v),
        request.holding,
        request.run_keys,
    )?;
    let pushdown = request.pushdown(attributor);
    let mut findings = Findings::default();
    for source in sources {
        tracing::info!(source = %source.describe(), "reading");
        findings.input.sources.push(source.describe());
        let mut stream = source.calls(&pushdown);
        while let Some(item) = stream.next().await {
            if item.is_ok() {
                findings.input.records += 1;
            }
            match item {
                Ok(SourceItem::Call(call)) if request.filter.matches(&call) => {
                    findings.input.saw(call.event_time);
                    let attribution = attributor.attribute(&call);
                    collector.push(*call, attribution)?;
                }
                Ok(SourceItem::Call(_)) => findings.outside(),
                Ok(SourceItem::Settled(settled)) if settled.in_filter => {
                    findings.input.saw(settled.event_time);
                    collector.count(&settled)?;
                }
                Ok(SourceItem::Settled(_)) => findings.outside(),
                Ok(SourceItem::Skipped(bad)) => findings.bad(bad),
                Err(error) => {
                    tracing::error!(%error, "input failed");
                    findings.errors.push(error);
                }
            }
        }
    }
    Ok(Gathered {
        calls: collector.finish()?,
        findings,
        pushed_down: pushdown.writes_only && sources.iter().any(|s| s.filters_at_source()),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use futures::StreamExt;

    use super::*;
    use crate::attribute::AttributionConfig;
    use crate::ingest::CallStream;

    /// A source with no records that remembers what it was asked to leave out.
    #[derive(Default)]
    struct Recording(Arc<Mutex<Option<Pushdown>>>);

    impl Source for Recording {
        fn describe(&self) -> String {
            "recording".into()
        }

        fn calls(&self, pushdown: &Pushdown) -> CallStream {
            *self.0.lock().expect("not poisoned") = Some(pushdown.clone());
            futures::stream::empty().boxed()
        }
    }

    async fn pushdown_for(keep: Vec<Verdict>, run_token: Option<&str>) -> Pushdown {
        let seen = Arc::new(Mutex::new(None));
        let sources: Vec<Box<dyn Source>> = vec![Box::new(Recording(seen.clone()))];
        let config = AttributionConfig {
            run_token: run_token.map(str::to_owned),
            ..Default::default()
        };
        let attributor = Attributor::new(&config).expect("valid config");
        gather(
            &sources,
            &attributor,
            &Request::new(Filter::default(), keep),
        )
        .await
        .expect("runs");
        seen.lock()
            .expect("not poisoned")
            .take()
            .expect("source was read")
    }

    #[tokio::test]
    async fn only_out_of_band_lets_sources_filter() {
        let all = pushdown_for(Verdict::ALL.to_vec(), None).await;
        assert!(!all.writes_only && !all.drop_terraform);
        let oob = pushdown_for(vec![Verdict::OutOfBand], None).await;
        assert!(oob.writes_only && oob.drop_terraform);
    }

    /// A trail whose records the file source settles when only out-of-band calls are kept:
    /// read-only (one twice, one outside the region filter), failed, data, and one read-only
    /// record whose `userIdentity` is malformed, which must still be reported.
    const TRAIL: &str = r#"{"Records":[
{"eventID":"r1","eventTime":"2024-05-01T10:00:00Z","eventSource":"ec2.amazonaws.com","eventName":"DescribeVpcs","awsRegion":"eu-west-1","readOnly":true},
{"eventID":"r1","eventTime":"2024-05-01T10:00:00Z","eventSource":"ec2.amazonaws.com","eventName":"DescribeVpcs","awsRegion":"eu-west-1","readOnly":true},
{"eventID":"r2","eventTime":"2024-05-01T10:00:01Z","eventSource":"ec2.amazonaws.com","eventName":"DescribeVpcs","awsRegion":"us-east-1","readOnly":true},
{"eventID":"r3","eventTime":"2024-05-01T10:00:02Z","eventSource":"ec2.amazonaws.com","eventName":"GetConsoleOutput","awsRegion":"eu-west-1"},
{"eventID":"f1","eventTime":"2024-05-01T10:00:03Z","eventSource":"ec2.amazonaws.com","eventName":"CreateTags","awsRegion":"eu-west-1","readOnly":false,"errorCode":"AccessDenied"},
{"eventID":"d1","eventTime":"2024-05-01T10:00:04Z","eventSource":"s3.amazonaws.com","eventName":"PutObject","awsRegion":"eu-west-1","readOnly":false,"eventCategory":"Data"},
{"eventID":"w1","eventTime":"2024-05-01T10:00:05Z","eventSource":"ec2.amazonaws.com","eventName":"CreateTags","awsRegion":"eu-west-1","readOnly":false,"userAgent":"console.ec2.amazonaws.com","userIdentity":{"type":"IAMUser","userName":"alice","accountId":"111122223333"}},
{"eventID":"x1","eventTime":"2024-05-01T10:00:06Z","eventSource":"ec2.amazonaws.com","eventName":"DescribeVpcs","awsRegion":"eu-west-1","readOnly":true,"userIdentity":{"type":"AssumedRole","sessionContext":{"sessionIssuer":5}}}
]}"#;

    async fn gather_trail(keep: Vec<Verdict>) -> Gathered {
        gather_held(keep, Holding::Spool).await
    }

    async fn gather_held(keep: Vec<Verdict>, holding: Holding) -> Gathered {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("trail.json");
        std::fs::write(&path, TRAIL).expect("trail written");
        let sources: Vec<Box<dyn Source>> =
            vec![Box::new(crate::ingest::files::FileSource::new(vec![path]))];
        let filter = Filter {
            regions: vec!["eu-west-1".into()],
            ..Filter::default()
        };
        gather(
            &sources,
            &Attributor::default(),
            &Request {
                holding,
                ..Request::new(filter, keep)
            },
        )
        .await
        .expect("runs")
    }

    #[tokio::test]
    async fn calls_held_in_memory_come_back_as_spooled_ones_without_their_records() {
        let keep = || Verdict::ALL.to_vec();
        let spooled = gather_held(keep(), Holding::Spool).await;
        let held = gather_held(keep(), Holding::Memory { records: false }).await;
        let (spooled, spooled_input) = spooled.into_calls_and_input().expect("read back");
        let (held, held_input) = held.into_calls_and_input().expect("read back");
        let ids =
            |calls: &[Call]| -> Vec<String> { calls.iter().map(|c| c.event_id.clone()).collect() };
        assert_eq!(ids(&held), ["r1", "r3", "f1", "d1", "w1"]);
        assert_eq!(ids(&held), ids(&spooled));
        assert_eq!(held_input.duplicates, 1);
        assert_eq!(spooled_input.duplicates, 1);
        assert!(spooled.iter().all(|c| c.raw().is_some()));
        assert!(held.iter().all(|c| c.raw().is_none()));
    }

    #[tokio::test]
    async fn settled_records_count_as_full_calls_do() {
        let settled = gather_trail(vec![Verdict::OutOfBand]).await;
        let full = gather_trail(Verdict::ALL.to_vec()).await;
        let (settled_findings, full_findings) = (&settled.findings, &full.findings);
        assert_eq!(settled_findings.bad_record_count, 1);
        let where_and_why = |findings: &Findings| -> Vec<(u64, Option<u64>, String)> {
            let bad = findings.bad_records.iter();
            bad.map(|b| (b.origin.index, b.origin.offset, b.reason.clone()))
                .collect()
        };
        assert_eq!(
            where_and_why(settled_findings),
            where_and_why(full_findings)
        );
        assert_eq!(settled_findings.bad_records[0].origin.index, 7);
        assert_eq!(settled_findings.filtered_out, 1);
        assert_eq!(full_findings.filtered_out, 1);
        let settled_calls = settled.calls;
        let full_counts = full.calls.drain_counts().expect("counts");
        let settled_counts = settled_calls.drain_counts().expect("counts");
        assert_eq!(settled_counts, full_counts);
        let count = |v| settled_counts.by_verdict.get(&v).copied();
        assert_eq!(count(Verdict::ReadOnly), Some(2));
        assert_eq!(count(Verdict::Failed), Some(1));
        assert_eq!(count(Verdict::DataEvent), Some(1));
        assert_eq!(count(Verdict::OutOfBand), Some(1));
        assert_eq!(settled_counts.duplicates, 1);
    }

    #[tokio::test]
    async fn a_required_run_token_keeps_terraform_calls() {
        let oob = pushdown_for(vec![Verdict::OutOfBand], Some("run/1")).await;
        assert!(oob.writes_only);
        assert!(!oob.drop_terraform);
    }
}
