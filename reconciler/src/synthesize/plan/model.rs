//! What the planner produces: a [`Plan`] of [`Step`]s (one edit-tool call each, with why), and
//! the parts it made no edit for ([`Unplanned`]).

use crate::policy::Part;
use crate::synthesize::edit::ToolCall;
use serde::Serialize;

/// One edit-tool call and why it was chosen.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// The intent it serves.
    pub intent: String,
    /// The resource address (or type and identity for a new resource).
    pub resource: String,
    /// The part of the delta it reconciles.
    pub part: Part,
    /// The edit-tool call (`tool` and `input` in JSON).
    #[serde(flatten)]
    pub call: ToolCall,
    /// Why this place was edited, in words.
    pub why: String,
    /// Whether the edit is at the value's source (a variable, tfvars entry, module argument or
    /// the literal itself) rather than an override of an expression at the use site.
    pub at_source: bool,
    /// A caution for the reviewer, e.g. that a shared value was overridden at one use site.
    pub warning: Option<String>,
}

/// A part of an intent the planner made no edit for, with the reason: it could not (see
/// [`Plan::unplanned`]) or the code already holds it (see [`Plan::settled`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unplanned {
    /// The intent.
    pub intent: String,
    /// The resource.
    pub resource: String,
    /// The part.
    pub part: Part,
    /// Why not.
    pub reason: String,
}

/// The planner's result for a set of intents.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Plan {
    /// Edit-tool calls, in order.
    pub steps: Vec<Step>,
    /// Parts that could not be planned.
    pub unplanned: Vec<Unplanned>,
    /// Parts the code already holds (an import block for a created id, a value already
    /// written): nothing to do, as on a second run over the same trail.
    pub settled: Vec<Unplanned>,
    /// Parts the planner could not place that edits from elsewhere (the agent's) placed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placed: Vec<Unplanned>,
    /// Objects created outside Terraform that the patch declares without an `import` block,
    /// because the AWS provider cannot import their type: the next apply creates them again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_imported: Vec<NotImported>,
}

/// An object created outside Terraform, declared by the patch with no `import` block (the
/// provider cannot import its type).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotImported {
    /// The cloud object's id.
    pub id: String,
    /// The instance address the patch declares it at.
    pub address: String,
}
