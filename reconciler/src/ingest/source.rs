//! The seam every CloudTrail source implements: an async stream of calls.

use std::path::PathBuf;
use std::pin::Pin;

use chrono::{DateTime, Utc};
use futures::Stream;
use serde::Serialize;

use super::verdict::Verdict;

use super::filter::{Filter, Pushdown};
use super::record::{Call, Origin};

/// What a source yields: a parsed call, or a record it had to skip.
#[derive(Debug)]
pub enum SourceItem {
    /// A record that parsed.
    Call(Box<Call>),
    /// A record that parsed and that the pushdown let the source settle without making a
    /// call of it: only counted.
    Settled(CountedRecord),
    /// A record that did not, with the reason; the source goes on after it.
    Skipped(BadRecord),
}

/// A record whose verdict its first fields ([`super::verdict::settled_verdict`]) or the
/// pushdown's attribution settle when the pushdown says the pipeline keeps no call of that
/// verdict (`writes_only`): what the pipeline needs to count it, filter it and drop its
/// duplicates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountedRecord {
    /// When the request completed.
    pub event_time: DateTime<Utc>,
    /// The event id's [`super::order::event_id_hash`].
    pub event_id_hash: u64,
    /// The verdict.
    pub verdict: Verdict,
    /// Whether the call is inside the pushdown's filter (the run's window, accounts and
    /// regions).
    pub in_filter: bool,
}

impl CountedRecord {
    /// The record at `event_time` with `event_id`, made in `account` and `region`, settled
    /// with `verdict` and checked against `filter`.
    pub fn new(
        verdict: Verdict,
        event_time: DateTime<Utc>,
        event_id: &str,
        (account, region): (Option<&str>, &str),
        filter: &Filter,
    ) -> Self {
        Self {
            event_time,
            event_id_hash: super::order::event_id_hash(event_id),
            verdict,
            in_filter: filter.matches_parts(event_time, account, region),
        }
    }
}

/// A malformed record: where it was and why it was skipped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BadRecord {
    /// The file or API page and the record's index and offset.
    pub origin: Origin,
    /// Why it could not be read.
    pub reason: String,
}

impl std::fmt::Display for BadRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.origin, self.reason)
    }
}

/// A failure that stops a whole input (a file or an API source), not just one record.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// A file or directory could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A file stopped being readable part-way (e.g. a truncated gzip stream); the records
    /// before `offset` were delivered.
    #[error("{path} is cut off or corrupt at byte {offset}: {source}")]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Decompressed bytes read before the failure.
        offset: u64,
        /// The decoder's or reader's error.
        #[source]
        source: std::io::Error,
    },
    /// An AWS API call failed for good (after retries).
    #[error("{source_name}: {message}")]
    Api {
        /// Which source, e.g. `lookup-events:eu-west-1`.
        source_name: String,
        /// What the API said.
        message: String,
    },
}

/// One item of a source's stream.
pub type SourceResult = Result<SourceItem, SourceError>;

/// The stream a source returns.
pub type CallStream = Pin<Box<dyn Stream<Item = SourceResult> + Send>>;

/// A place CloudTrail records come from. Implementations stream records in any order; the
/// pipeline orders and de-duplicates them.
pub trait Source: Send + Sync {
    /// A short description for logs and reports, e.g. `files: logs/ (3 files)`.
    fn describe(&self) -> String;

    /// Streams the calls. `pushdown` says what the caller will drop anyway, so a source may
    /// skip it cheaply (a directory outside the time window, a server-side filter); a source
    /// that cannot filter simply returns everything.
    fn calls(&self, pushdown: &Pushdown) -> CallStream;

    /// Whether this source applies `Pushdown::writes_only` itself (a server-side filter), so
    /// the counts of the verdicts it leaves out are incomplete.
    fn filters_at_source(&self) -> bool {
        false
    }
}
