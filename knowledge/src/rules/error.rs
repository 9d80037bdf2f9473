//! Errors of rule loading and extraction; each names the file or the rule.

/// Why rules could not be loaded, or a rule could not be applied to a record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// A rule file or directory could not be read.
    #[error("{file}: cannot read: {message}")]
    Read {
        /// The file or directory.
        file: String,
        /// The I/O error.
        message: String,
    },
    /// A rule file is not valid TOML of the rule format (unknown key, kind, risk, transform...).
    #[error("{file}:{line}: {}{message}", rule_prefix(.rule))]
    Parse {
        /// The file.
        file: String,
        /// The line, from 1.
        line: usize,
        /// The rule's api when the error is inside a `[[rule]]` table.
        rule: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A rule is well-formed TOML but does not make sense (e.g. `add-block` without a block).
    #[error("{file}:{line}: rule {rule}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// The line of the rule's table, from 1.
        line: usize,
        /// The rule's id.
        rule: String,
        /// What is wrong.
        message: String,
    },
    /// Two rules cover the same event source and API.
    #[error("{file}: rule {rule} is defined twice (also in {other})")]
    Duplicate {
        /// Where the second definition is.
        file: String,
        /// The rule's id.
        rule: String,
        /// Where the first definition is.
        other: String,
    },
    /// The record lacks a value the rule needs to identify the resource.
    #[error("rule {rule}: no identity at {payload} path \"{path}\"")]
    MissingIdentity {
        /// The rule's id.
        rule: String,
        /// `request` or `response`.
        payload: String,
        /// The path(s) tried.
        path: String,
    },
    /// A value in the record does not fit the rule's transform.
    #[error("rule {rule}: {field}: {message}")]
    Value {
        /// The rule's id.
        rule: String,
        /// The attribute, block field or identity part.
        field: String,
        /// What is wrong.
        message: String,
    },
}

fn rule_prefix(rule: &Option<String>) -> String {
    rule.as_ref()
        .map(|r| format!("rule {r}: "))
        .unwrap_or_default()
}
