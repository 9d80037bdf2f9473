//! What every edit works on and how it is refused: the files, and [`EditError`].

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
