//! Printing results for people (`text`) and programs (`json`, `ndjson`).

pub mod agent;
pub mod events;
pub mod explain;
pub mod load;
pub mod reconcile;
pub mod words;

use serde::{Deserialize, Serialize};

/// Output format of a command that prints results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Aligned columns and a summary, for a terminal.
    #[default]
    Text,
    /// One JSON document.
    Json,
    /// One JSON object per line (the summary goes to standard error).
    Ndjson,
}
