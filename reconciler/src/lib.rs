//! retrace: keeps Terraform code true to the AWS cloud it describes, by reading the changes
//! people made outside Terraform from CloudTrail and proposing the code that absorbs them.
//!
//! Modules, in the order a run passes through them (no module imports a later one):
//! - [`text`]: text from inputs made safe to show, and values shortened for a line;
//! - [`terraform`]: the Terraform model: configuration with provenance, state, functions,
//!   Terraform's value equality (the `retrace-terraform` crate, re-exported);
//! - [`ingest`]: reading CloudTrail records from files and AWS APIs into [`ingest::Call`]s,
//!   with the first checks that settle a record from its first fields;
//! - [`attribute`]: one verdict per call: out of band, or why not;
//! - [`pipeline`]: the sources read, filtered, attributed, deduplicated and put in time order;
//! - [`resolve`]: rules applied to calls: effects on resources and findings;
//! - [`intents`]: effects grouped into intents with their net change;
//! - [`ownership`]: which out-of-band creations belong to this workspace;
//! - [`policy`]: absorb, flag or ignore, per part of a change;
//! - [`synthesize`]: the planner and the edit tools that write the patch;
//! - [`patch`]: the patch as a diff, applied all or nothing;
//! - [`validate`]: the built-in plan check and the real `terraform plan`;
//! - [`reconcile`]: resolve to validate as one call;
//! - [`learn`]: rules proposed for calls no rule explains;
//! - [`vet`]: retrace's own checks of a rule it did not ship (risk, flags, hidden values);
//! - [`record`]: the knowledge base as a run sees it;
//! - [`agent`]: a language model with tools for the calls no rule explains, bounded, private
//!   and validated;
//! - [`run`]: gather, reconcile, learn and re-check, record: the call every front end shares;
//! - [`report`]: text and JSON for people and programs;
//! - [`config`]: the settings of `retrace.toml`;
//! - [`nightly`]: every workspace reconciled from one read of the events, with a pull request
//!   each and the reviewers' verdicts learned;
//! - [`fuzzing`]: the properties the fuzz targets check, replayed over the seed corpus by the
//!   tests.

#![forbid(unsafe_code)]

pub mod agent;
pub mod attribute;
pub mod config;
pub mod fuzzing;
pub mod ingest;
pub mod intents;
pub mod learn;
pub mod nightly;
pub mod ownership;
pub mod patch;
pub mod pipeline;
pub mod policy;
pub mod reconcile;
pub mod record;
pub mod report;
pub mod resolve;
pub mod run;
pub mod synthesize;
pub use retrace_terraform as terraform;
pub mod text;
pub mod validate;
pub mod vet;
