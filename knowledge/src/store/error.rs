//! Errors of the knowledge store; each names the database file.

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite reported an error.
    #[error("{file}: {message}")]
    Sqlite {
        /// The database file (`:memory:` for an in-memory store).
        file: String,
        /// SQLite's message, with what was being done.
        message: String,
    },
    /// The database was written by a newer retrace.
    #[error("{file}: schema version {found} is newer than this retrace knows ({known})")]
    TooNew {
        /// The database file.
        file: String,
        /// The version found.
        found: i64,
        /// The newest version this build knows.
        known: i64,
    },
    /// No rule or reconciliation has the id.
    #[error("{file}: no {what} with id {id}")]
    NotFound {
        /// The database file.
        file: String,
        /// `rule` or `reconciliation`.
        what: &'static str,
        /// The id asked for.
        id: i64,
    },
    /// The operation does not apply (e.g. reviewing a shipped rule, or an invalid learned rule).
    #[error("{file}: {message}")]
    Invalid {
        /// The database file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// An export document could not be imported; nothing was written.
    #[error("{file}: import: {entry}: {message}")]
    Import {
        /// The database file.
        file: String,
        /// The entry at fault, e.g. `rules[2] (ec2:CreateTags)` or `document`.
        entry: String,
        /// What is wrong.
        message: String,
    },
    /// Writing an export failed.
    #[error("{file}: export: {message}")]
    Export {
        /// The database file.
        file: String,
        /// The I/O or encoding error.
        message: String,
    },
}
