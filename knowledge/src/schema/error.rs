//! Errors of the schema loaders; each names the source and, where it can, the field.

/// Why a provider schema could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// The source could not be read.
    #[error("{source_name}: cannot read: {message}")]
    Read {
        /// The file (or a description of the stream) being read.
        source_name: String,
        /// The I/O error.
        message: String,
    },
    /// The source is not JSON of the expected shape.
    #[error("{source_name}: at {field} (line {line}, column {column}): {message}")]
    Json {
        /// The file (or a description of the stream) being read.
        source_name: String,
        /// The JSON path of the offending value, e.g. `provider_schemas.x.resource_schemas`.
        field: String,
        /// The line of the error, from 1.
        line: usize,
        /// The column of the error, from 1.
        column: usize,
        /// What the JSON parser reported.
        message: String,
    },
    /// The document's `format_version` has a major version other than 1.
    #[error("{source_name}: format_version \"{version}\" is not supported (only 1.x is)")]
    FormatVersion {
        /// The file (or a description of the stream) being read.
        source_name: String,
        /// The version found.
        version: String,
    },
    /// The document has no schema for the AWS provider.
    #[error("{source_name}: no provider_schemas entry for hashicorp/aws (found: {found})")]
    MissingProvider {
        /// The file (or a description of the stream) being read.
        source_name: String,
        /// The provider addresses the document does have, comma-separated.
        found: String,
    },
    /// A value parsed as JSON but makes no sense as a schema.
    #[error("{source_name}: {field}: {message}")]
    Invalid {
        /// The file (or a description of the stream) being read.
        source_name: String,
        /// The path of the offending field, e.g. `resource_schemas.aws_vpc.block.attributes.arn`.
        field: String,
        /// What is wrong with it.
        message: String,
    },
}

impl SchemaError {
    /// A JSON error from `serde_path_to_error`, with the path of the field it happened at.
    pub(crate) fn json(
        source_name: &str,
        error: serde_path_to_error::Error<serde_json::Error>,
    ) -> Self {
        let field = error.path().to_string();
        let inner = error.into_inner();
        Self::Json {
            source_name: source_name.to_owned(),
            field,
            line: inner.line(),
            column: inner.column(),
            message: inner.to_string(),
        }
    }
}
