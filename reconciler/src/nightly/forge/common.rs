//! The steps GitHub's and GitLab's clients take alike (the `forge` feature): adopting a
//! request an earlier attempt opened, bringing one up to date, reading an answer's request.

use serde_json::Value;

use super::model::{Fate, Forge, ForgeError, Opened, Proposal};

/// What `create` does when opening failed with `error`: a 422 or 409 (the forge refuses a
/// second request for the branch) brings the open request from the branch to the proposal;
/// anything else, or no open request, is the error.
pub(super) async fn adopt_after<F: Forge + ?Sized>(
    forge: &F,
    error: ForgeError,
    proposal: &Proposal,
) -> Result<Opened, ForgeError> {
    if !matches!(
        error,
        ForgeError::Status {
            status: 422 | 409,
            ..
        }
    ) {
        return Err(error);
    }
    match forge.find_open(&proposal.branch).await? {
        Some(existing) => forge.update(&existing, proposal).await,
        None => Err(error),
    }
}

/// An update of a request to a proposal: the title as the forge shows it and the labels the
/// request lacks.
pub(super) struct Edit<'a> {
    current: &'a Opened,
    proposal: &'a Proposal,
    /// The title to set.
    pub title: String,
    /// The proposal's labels the request does not have.
    pub missing: Vec<String>,
}

impl<'a> Edit<'a> {
    /// Bringing `current` to `proposal`, titled `title`.
    pub fn new(current: &'a Opened, proposal: &'a Proposal, title: String) -> Self {
        let missing = proposal
            .labels
            .iter()
            .filter(|l| !current.labels.contains(l))
            .cloned()
            .collect();
        Edit {
            current,
            proposal,
            title,
            missing,
        }
    }

    /// Whether the title, the description or the labels must be sent.
    pub fn sends_text(&self) -> bool {
        self.current.title != self.title
            || self.current.body != self.proposal.body
            || !self.missing.is_empty()
    }

    /// Whether the draft state must be changed.
    pub fn sends_draft(&self) -> bool {
        self.current.draft != self.proposal.draft
    }

    /// The request once updated.
    pub fn done(self) -> Opened {
        let mut labels = self.current.labels.clone();
        labels.extend(self.missing);
        Opened {
            title: self.title,
            body: self.proposal.body.clone(),
            draft: self.proposal.draft,
            labels,
            ..self.current.clone()
        }
    }
}

impl Opened {
    /// Request `number` once the forge no longer knows it.
    pub(super) fn gone(number: i64) -> Opened {
        Opened {
            number,
            url: String::new(),
            title: String::new(),
            body: String::new(),
            draft: false,
            labels: Vec::new(),
            node_id: None,
            fate: Fate::Gone,
        }
    }
}

/// The names a forge gives a request's number, web address and description in its answers.
pub(super) struct Keys {
    /// The number's key (GitHub `number`, GitLab `iid`).
    pub number: &'static str,
    /// The web address's key.
    pub url: &'static str,
    /// The description's key.
    pub body: &'static str,
}

/// The request in answer `value`, named by `keys`, whose fate the forge's own reading gave.
pub(super) fn opened(
    what: &str,
    value: &Value,
    keys: &Keys,
    fate: Fate,
) -> Result<Opened, ForgeError> {
    let labels = value
        .get("labels")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|l| l.get("name").unwrap_or(l).as_str().map(str::to_owned))
        .collect();
    Ok(Opened {
        number: value
            .get(keys.number)
            .and_then(Value::as_i64)
            .ok_or_else(|| reply(what, format!("no `{}`", keys.number)))?,
        url: text(value, keys.url).unwrap_or_default(),
        title: text(value, "title").unwrap_or_default(),
        body: text(value, keys.body).unwrap_or_default(),
        draft: value.get("draft").and_then(Value::as_bool).unwrap_or(false),
        labels,
        node_id: text(value, "node_id"),
        fate,
    })
}

/// The first request of a list answer, if any.
pub(super) fn first(what: &str, answer: Value) -> Result<Option<Value>, ForgeError> {
    let list: Vec<Value> =
        serde_json::from_value(answer).map_err(|e| reply(what, e.to_string()))?;
    Ok(list.into_iter().next())
}

/// The text at `key` of an answer.
pub(super) fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// An answer that did not have the expected shape.
pub(super) fn reply(what: &str, message: String) -> ForgeError {
    ForgeError::Reply {
        what: what.to_owned(),
        message,
    }
}
