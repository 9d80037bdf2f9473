//! Format-preserving HCL edit tools, each callable by name with JSON input (for a language
//! model) or directly.
//!
//! How edits keep formatting: files are parsed with `hcl::edit` only to find things — blocks,
//! attributes, object items and their byte spans. An edit then replaces exactly one span of the
//! original text with newly written text ([`render`]), so every byte outside that span stays as it
//! was, comments included. New text uses the file's line ends (CRLF files stay CRLF) and two
//! spaces of indent per level; afterwards [`align`] re-aligns the `=` signs and trailing comments
//! of only the runs of lines the edit touched, by the same rules `terraform fmt` uses. Each result
//! is parsed again before it is returned. Edits that would need a guess — a block that is missing
//! or matched twice, tags that are an expression rather than a literal object — are refused with
//! an [`EditError`] naming file, block and path.

mod align;
mod filter;
mod instance;
mod locate;
mod ops;
mod outline;
mod render;
mod tags;
mod text;
mod tools;
mod value;
mod workspace;

pub use instance::Instance;
pub use locate::{Step, Target};
pub use tools::{
    AddBlock, Container, EntryStep, FilterForEach, IgnoreChanges, ImportResource, NewBlock,
    RemoveAttribute, RemoveBlock, RemoveCollectionEntry, RemoveResource, ReplaceBlock,
    SetAttribute, SetCollectionEntry, SetModuleArgument, SetTags, SetTfvar, SetVariableDefault,
    SwitchOff, TagMode, ThreadModuleInput, Tool, ToolCall, ToolResult, ToolSpec, UpdateBlock,
    run_tool, tool, tool_names, tools,
};
pub use value::{Ordered, Value};
pub use workspace::Workspace;

use std::collections::BTreeMap;

/// The files an edit may read and change: path → text.
pub type Files = BTreeMap<String, String>;

/// Why an edit was refused.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// No tool has this name.
    #[error("unknown edit tool `{0}`")]
    UnknownTool(String),
    /// The tool input does not fit its schema or holds an unusable value.
    #[error("invalid input for `{tool}`: {message}")]
    Input {
        /// The tool.
        tool: String,
        /// What is wrong.
        message: String,
    },
    /// The named file is not among the files.
    #[error("{file}: no such file")]
    NoFile {
        /// The file.
        file: String,
    },
    /// A file does not parse, so it cannot be edited safely.
    #[error("{file}: not valid HCL: {message}")]
    Parse {
        /// The file.
        file: String,
        /// The parser's message.
        message: String,
    },
    /// No block has the address (and nested path).
    #[error("{file}: no block {address}{path}")]
    NotFound {
        /// The file, or `*.tf` when all were searched.
        file: String,
        /// The top-level block address.
        address: String,
        /// The nested path, or empty.
        path: String,
    },
    /// More than one block has the address (and nested path).
    #[error("{file}: {count} blocks match {address}{path}; add to the match to pick one")]
    Ambiguous {
        /// The file, or several files joined by commas.
        file: String,
        /// The top-level block address.
        address: String,
        /// The nested path, or empty.
        path: String,
        /// How many blocks match.
        count: usize,
    },
    /// The block has no such attribute or object key.
    #[error("{file}: {address}{path}: no attribute `{name}`")]
    NoAttribute {
        /// The file.
        file: String,
        /// The top-level block address.
        address: String,
        /// The nested path, or empty.
        path: String,
        /// The attribute or key.
        name: String,
    },
    /// The attribute's value is an expression where the edit needs a literal.
    #[error("{file}: {address}{path}: `{name}` is not a literal {expected}; refusing to edit it")]
    NotLiteral {
        /// The file.
        file: String,
        /// The top-level block address.
        address: String,
        /// The nested path, or empty.
        path: String,
        /// The attribute.
        name: String,
        /// What the edit needs, such as `object` or `list`.
        expected: &'static str,
    },
    /// The edit cannot be made here.
    #[error("{file}: {address}{path}: {message}")]
    Impossible {
        /// The file.
        file: String,
        /// The top-level block address.
        address: String,
        /// The nested path, or empty.
        path: String,
        /// Why not.
        message: String,
    },
    /// A bug: the edit produced text that does not parse, or a parsed item had no position.
    #[error("{file}: internal error, edit refused: {message}")]
    Internal {
        /// The file.
        file: String,
        /// What went wrong.
        message: String,
    },
}
