//! Synthesis: turning intents into HCL edits. `edit` holds the format-preserving edit tools.

pub mod defaults;
pub use retrace_terraform::edit;
pub mod idiom;
pub mod nested;
pub mod place;
pub mod plan;
pub mod rules;
pub mod settled;
pub mod tags;
