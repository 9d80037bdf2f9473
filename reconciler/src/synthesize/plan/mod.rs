//! The deterministic planner (being split into files by concern).

mod attributes;

pub use attributes::{Plan, Planner, Step, Unplanned};
