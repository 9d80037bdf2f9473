//! The integration tests of `evaluation`, linked into one test binary (each file a module):
//! one link of the crate and its dependencies instead of one per file.

#![allow(clippy::unwrap_used, missing_docs)]

mod agent_eval;
mod benchmark_release;
mod evaluator;
mod generate;
mod independence;
mod score;
mod sim;
