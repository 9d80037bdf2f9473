//! retrace: keeps Terraform code true to the AWS cloud it describes, by reading the changes
//! people made outside Terraform from CloudTrail and proposing the code that absorbs them.
//!
//! The pipeline stages are modules: [`ingest`] reads and normalises calls, [`attribute`]
//! decides which calls are out of band, [`pipeline`] runs the two over any set of sources,
//! and [`report`] prints the result.

#![forbid(unsafe_code)]

pub mod attribute;
pub mod config;
pub mod ingest;
pub mod intents;
pub mod learn;
pub mod patch;
pub mod pipeline;
pub mod policy;
pub mod reconcile;
pub mod record;
pub mod report;
pub mod resolve;
pub mod run;
pub mod synthesize;
pub mod terraform;
pub mod text;
pub mod validate;
