//! The steps the forges' clients take alike (the `forge` feature): adopting a request an
//! earlier attempt opened, bringing one up to date, reading an answer's request, and the pull
//! request calls GitHub and Gitea share (Gitea's API follows GitHub's).

use reqwest::Method;
use serde_json::{Value, json};

use super::model::{Fate, Forge, ForgeError, Opened, Proposal, reply};
use super::rest::Rest;

/// A forge whose pull requests live at `/repos/OWNER/NAME/pulls/N` and take comments as
/// issues do (GitHub, Gitea): what the shared steps below need of it.
pub(super) trait Pulls: Forge {
    /// Its REST client.
    fn rest(&self) -> &Rest;
    /// Reads a pull request from an answer (`what` names the request for errors).
    fn pull(what: &str, value: &Value) -> Result<Opened, ForgeError>;
    /// Adds `labels` to pull request `number`.
    fn label(
        &self,
        number: i64,
        labels: &[String],
    ) -> impl Future<Output = Result<(), ForgeError>> + Send;

    /// The repository's path in the API.
    fn repo(&self) -> String {
        format!("/repos/{}", self.rest().repository())
    }
}

/// Opens a pull request with `body` (adopting the open one when the forge refuses a second),
/// then labels it.
pub(super) async fn create_pull<F: Pulls>(
    forge: &F,
    proposal: &Proposal,
    body: Value,
) -> Result<Opened, ForgeError> {
    let what = format!("opening a pull request from {}", proposal.branch);
    let path = format!("{}/pulls", forge.repo());
    let opened = match forge
        .rest()
        .send(&what, Method::POST, &path, &[], Some(body))
        .await
    {
        Ok(answer) => F::pull(&what, &answer)?,
        Err(e) => return adopt_after(forge, e, proposal).await,
    };
    forge.label(opened.number, &proposal.labels).await?;
    Ok(opened)
}

/// Sends pull request `current` the title and description of `proposal` when they differ, with
/// the labels it lacks; the edit, for what else the forge sets.
pub(super) async fn update_pull<'a, F: Pulls>(
    forge: &F,
    current: &'a Opened,
    proposal: &'a Proposal,
) -> Result<Edit<'a>, ForgeError> {
    let number = current.number;
    let edit = Edit::new(current, proposal, forge.title(proposal));
    if edit.sends_text() {
        let what = format!("updating pull request {number}");
        let path = format!("{}/pulls/{number}", forge.repo());
        let body = json!({"title": edit.title, "body": proposal.body});
        forge
            .rest()
            .send(&what, Method::PATCH, &path, &[], Some(body))
            .await?;
        forge.label(number, &edit.missing).await?;
    }
    Ok(edit)
}

/// Comments `text` on pull request `number`.
pub(super) async fn comment_pull<F: Pulls>(
    forge: &F,
    number: i64,
    text: &str,
) -> Result<(), ForgeError> {
    let what = format!("commenting on pull request {number}");
    let path = format!("{}/issues/{number}/comments", forge.repo());
    forge
        .rest()
        .post(&what, &path, json!({ "body": text }))
        .await
}

/// Reads pull request `number`; [`Opened::gone`] when the forge no longer has it.
pub(super) async fn read_pull<F: Pulls>(forge: &F, number: i64) -> Result<Opened, ForgeError> {
    let what = format!("reading pull request {number}");
    let path = format!("{}/pulls/{number}", forge.repo());
    match forge
        .rest()
        .get_unless_gone(&what, &path, &forge.repo())
        .await?
    {
        Some(answer) => F::pull(&what, &answer),
        None => Ok(Opened::gone(number)),
    }
}

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
    first_where(what, answer, |_| true)
}

/// The first request of a list answer that `keep` keeps, if any.
pub(super) fn first_where(
    what: &str,
    answer: Value,
    keep: impl Fn(&Value) -> bool,
) -> Result<Option<Value>, ForgeError> {
    let list: Vec<Value> =
        serde_json::from_value(answer).map_err(|e| reply(what, e.to_string()))?;
    Ok(list.into_iter().find(|request| keep(request)))
}

/// The text at `key` of an answer.
pub(super) fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}
