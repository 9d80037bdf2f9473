//! The integration tests of `reconciler`, linked into one test binary (each file a module):
//! one link of the crate and its dependencies instead of one per file.

#![allow(clippy::unwrap_used, missing_docs)]

mod common;
mod config_common;
mod support;

mod accounting;
mod agent_cli;
mod agent_hostile;
mod api_sources;
mod architecture;
mod athena_source;
mod attack_trails;
mod check_config;
mod collections_cli;
mod config_dialects;
mod config_project;
mod config_provenance;
mod corpus;
mod corpus_drift;
mod events_cli;
mod explain_cli;
mod fixture_drift_cli;
mod fixture_projects;
mod functions_docs;
mod functions_eval;
mod functions_terraform;
mod fuzz_corpus;
mod hcl_edit;
mod hcl_props;
mod idiom_cli;
mod intents_cli;
mod kb_cli;
mod kb_coverage_cli;
mod nightly;
mod nightly_nights;
mod nightly_ten_nights;
mod patch_apply;
mod patch_diff;
mod provider_semantics_cli;
mod reconcile_cli;
mod route53_cli;
mod samples;
mod security_cli;
mod state_index;
mod terraform_check;
