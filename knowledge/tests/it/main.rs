//! The integration tests of `knowledge`, linked into one test binary (each file a module):
//! one link of the crate and its dependencies instead of one per file.

#![allow(clippy::unwrap_used, missing_docs)]

mod common;

mod bundled;
mod catalog;
mod coverage;
mod defaults;
mod importable;
mod rules_breadth;
mod rules_bundled;
mod rules_containers;
mod rules_extract;
mod rules_replace;
mod rules_services;
mod store;
mod terraform_json;
