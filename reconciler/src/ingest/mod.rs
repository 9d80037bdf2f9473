//! Stage 1, ingest: read CloudTrail records from files, a trail's S3 bucket or AWS APIs and
//! normalise them into [`record::Call`]s, then order them and drop duplicates.

pub mod athena;
#[cfg(feature = "aws")]
pub mod aws;
pub mod client;
pub mod files;
pub mod filter;
pub mod framing;
pub mod identity;
pub mod lake;
pub mod lookup;
pub mod order;
pub mod query;
pub mod record;
pub mod s3;
pub mod source;
pub mod sources;
pub mod verdict;

pub use filter::{Filter, Pushdown};
pub use record::{Call, Origin};
pub use source::{BadRecord, CallStream, CountedRecord, Source, SourceError, SourceItem};
pub use sources::SourcesConfig;
