//! The deterministic planner: turns the absorbed parts of each intent into edit-tool calls,
//! through the same typed tool calls
//! ([`ToolCall`](crate::synthesize::edit::ToolCall)) a language-model agent makes.
//!
//! Where an attribute's value comes from decides where it is edited (`place::Place`, which
//! maps each place to its call): a variable used once is edited at its default or tfvars
//! entry, a module input at the call site, and a value shared with other resources, or
//! computed by an expression, is overridden at the use site with a warning. Ids of resources
//! Terraform manages are written as references (`vpc_id = aws_vpc.main.id`). Out-of-band
//! creations become a resource block plus an `import` block, deletions a removed resource
//! block, and ignored values an `ignore_changes` entry.
//!
//! The planner is split by concern, each file adding its methods to [`Planner`]: `model` (the
//! plan types), `planner` (the planner's state and entry point), `references` (ids written as
//! references), `conflicts` (what the provider decides: computed attributes and arguments it
//! refuses together), `attributes` (attributes and nested blocks), `tags` (tag changes) and
//! `lifecycle` (creations and deletions).

mod attributes;
mod conflicts;
mod lifecycle;
mod model;
mod planner;
mod references;
mod tags;

pub use model::{NotImported, Plan, Step, Unplanned};
pub use planner::Planner;
