//! The model of a Terraform project: state, configuration, expression evaluation with
//! Terraform's built-in functions, and provenance of attribute values.

pub mod functions;
pub mod state;
