//! What every forge shares: the [`Forge`] trait the nightly job talks to, the requests it
//! proposes and reads back, how a request stands, and why talking to the forge failed.

use futures::future::BoxFuture;

/// Why talking to the forge failed.
#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    /// The token's environment variable is not set.
    #[error("no token: set the environment variable {0} to a token that may open pull requests")]
    NoToken(String),
    /// The forge has no public API and the configuration names none.
    #[error(
        "no API URL for {0} (it has no public default): set [nightly.forge] api_url to its API's base URL"
    )]
    NoApiUrl(&'static str),
    /// The forge could not be reached, or its answer not read.
    #[error(
        "{what}: cannot reach the forge at {api} ({reason}); check [nightly.forge] api_url and that the forge is up, then run again"
    )]
    Unreachable {
        /// What was being done.
        what: String,
        /// The API's base URL.
        api: String,
        /// Why, in words (`connection refused`, `timed out`).
        reason: String,
    },
    /// The forge kept answering with a rate limit or a server error.
    #[error(
        "{what}: the forge answered {status} {attempts} times in a row (retries exhausted): {message}; run again later"
    )]
    Exhausted {
        /// What was being done.
        what: String,
        /// The last HTTP status.
        status: u16,
        /// How many times the request was sent.
        attempts: u32,
        /// The forge's last message.
        message: String,
    },
    /// The forge answered with an error status.
    #[error("{what}: the forge answered {status}: {message}")]
    Status {
        /// What was being done.
        what: String,
        /// The HTTP status.
        status: u16,
        /// The forge's message.
        message: String,
    },
    /// The answer did not have the expected shape.
    #[error("{what}: unexpected answer: {message}")]
    Reply {
        /// What was being done.
        what: String,
        /// What was wrong.
        message: String,
    },
    /// `[nightly.forge]` names a forge in a build without the `forge` feature.
    #[error(
        "cannot reach the forge for {0}: this build of retrace has no forge client (the `forge` feature)"
    )]
    NoForge(String),
}

/// A request to open or update.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    /// The title.
    pub title: String,
    /// The description, in Markdown.
    pub body: String,
    /// The branch with the changes.
    pub branch: String,
    /// The branch they go into.
    pub base: String,
    /// Labels to put on it.
    pub labels: Vec<String>,
    /// Whether it is opened as a draft (something waits for a person).
    pub draft: bool,
}

/// A request as the forge holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// Its number (GitLab: the project-level `iid`).
    pub number: i64,
    /// Its web address.
    pub url: String,
    /// Its title as the forge shows it (GitLab: with any `Draft:` prefix; Gitea: `WIP:`).
    pub title: String,
    /// Its description.
    pub body: String,
    /// Whether it is a draft.
    pub draft: bool,
    /// Its labels.
    pub labels: Vec<String>,
    /// GitHub's GraphQL id, to make it a draft or ready.
    pub node_id: Option<String>,
    /// How it stands.
    pub fate: Fate,
}

/// How a request stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    /// Still open.
    Open,
    /// Merged, as this commit when the forge says.
    Merged(Option<String>),
    /// Closed without merging.
    Closed,
    /// The forge does not know it (404): deleted, or the repository moved.
    Gone,
}

/// A forge and one repository on it: what the nightly job does with its requests. One
/// implementation per kind of forge; [`super::open`] picks it from the configuration.
pub trait Forge: Send + Sync {
    /// What the forge calls a request: `pull request` or `merge request`.
    fn noun(&self) -> &'static str;

    /// The forge's name in the knowledge base: `github`, `gitlab` or `gitea`.
    fn name(&self) -> &'static str;

    /// The repository on the forge.
    fn repository(&self) -> &str;

    /// The title the forge shows for `proposal` (GitLab marks a draft by a `Draft:` prefix,
    /// Gitea by `WIP:`).
    fn title(&self, proposal: &Proposal) -> String;

    /// The open request from `branch`, if there is one.
    fn find_open<'a>(&'a self, branch: &'a str) -> Answer<'a, Option<Opened>>;

    /// Opens a request, with its labels. When the forge refuses a second request for the
    /// branch (an earlier attempt opened it before its answer was lost), brings that one
    /// to the proposal instead.
    fn create<'a>(&'a self, proposal: &'a Proposal) -> Answer<'a, Opened>;

    /// Brings request `current` to the proposal: title, description, missing labels and
    /// draft state, sending only what differs. Returns the request as it now stands.
    fn update<'a>(&'a self, current: &'a Opened, proposal: &'a Proposal) -> Answer<'a, Opened>;

    /// Comments on request `number`.
    fn comment<'a>(&'a self, number: i64, text: &'a str) -> Answer<'a, ()>;

    /// Request `number` as the forge holds it; its fate is [`Fate::Gone`] when the forge
    /// answers 404 while the repository itself can be read.
    fn read(&self, number: i64) -> Answer<'_, Opened>;
}

/// What a forge's request comes to, once the forge has answered.
pub type Answer<'a, T> = BoxFuture<'a, Result<T, ForgeError>>;

/// An answer that did not have the expected shape.
pub(super) fn reply(what: &str, message: String) -> ForgeError {
    ForgeError::Reply {
        what: what.to_owned(),
        message,
    }
}
