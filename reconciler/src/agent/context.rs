//! What the model is told: the system text, and the task's first message in one of two
//! styles — `focused` (retrace's: the calls' parameters, the net change the observed cloud
//! shows on the resources they touched, the code that declares those resources, the type's
//! schema excerpt and the most similar rules) or `naive` (the baseline to compare with: the
//! whole raw CloudTrail records of the trail, every configuration file whole, and a
//! plan-like listing of every changed resource with all its attributes).

use super::redact::Redactor;
use crate::ingest::Call;
use crate::synthesize::plan::Unplanned;
use crate::terraform::config::Project;
use crate::terraform::state::{Instance, State};
use knowledge::rules::{Rule, RuleSet};
use knowledge::schema::ProviderSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::fmt::Write as _;

/// How the first message is built.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Style {
    /// retrace's context: net change, located code, schema excerpt, similar fixes.
    #[default]
    Focused,
    /// The baseline: raw records, whole files, a plan-like listing.
    Naive,
}

impl Style {
    /// The style's name as `[agent] context` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Focused => "focused",
            Self::Naive => "naive",
        }
    }
}

/// The most similar rules shown.
const SIMILAR: usize = 3;

/// The calls shown per task.
const CALLS_SHOWN: usize = 3;

/// The system text: the job, the rule format in brief, and how to finish.
pub fn system_prompt() -> String {
    "You explain AWS API calls that retrace (a tool that keeps Terraform code in step with \
out-of-band changes recorded by CloudTrail) has no rule for. A rule maps one CloudTrail \
(eventSource, eventName) to the Terraform resource type it changes and how: `identity` (request \
or response paths whose values name the resource: its id, ARN or natural key), `kind` (update, \
create, delete, tags, block_add, block_remove, ...), `set` (attribute = value read from a path, \
with an optional transform: string, int, number, bool, lower, upper, json, ...), `block`, `tags` \
(`op` merge|remove|replace and the `path` of the tags; `tags[]` for a list of Key/Value pairs). \
Paths are dotted, `from` is `request` (default) or `response`. Use the read-only tools to look \
at the code, state and schema, then call `propose_rule` with the rule as JSON: retrace plans the \
patch with it and checks the patched code against the observed cloud. When the check passes \
you are done. The edit tools and `check_plan` let you try edits on a scratch copy. Secrets are \
shown as [redacted]."
        .to_owned()
}

/// One task: the calls of one API no rule explains.
pub struct Task<'a> {
    /// `eventSource`.
    pub event_source: &'a str,
    /// The API.
    pub api: &'a str,
    /// Its calls, in time order.
    pub calls: Vec<&'a Call>,
    /// The managed addresses the calls touched.
    pub addresses: Vec<String>,
    /// The learned rule for the API, when it read no change from these calls: the rule
    /// proposed replaces it.
    pub current: Option<&'a Rule>,
    /// For a task to place a change: the parts of the intent the planner could not place
    /// (empty for a task to explain an API).
    pub place: Vec<Unplanned>,
}

impl Task<'_> {
    /// Whether the task is to place parts the planner could not, rather than explain an API.
    pub fn is_placement(&self) -> bool {
        !self.place.is_empty()
    }
}

/// What the context is built from.
pub struct Sources<'a> {
    /// Every out-of-band call of the run (the naive style shows them all).
    pub all_calls: &'a [Call],
    /// The state before the drift.
    pub state: &'a State,
    /// The observed cloud.
    pub observed: &'a State,
    /// The configuration.
    pub project: &'a Project,
    /// The schema.
    pub schema: &'a ProviderSchema,
    /// The rules the run has.
    pub rules: &'a RuleSet,
    /// The redactor every text passes through.
    pub redactor: &'a Redactor,
}

/// The first line of every task message, naming what to do and the API (a scripted model
/// keys on it).
pub fn task_line(task: &Task<'_>) -> String {
    task_line_for(task.is_placement(), task.api, task.event_source)
}

/// The task line of a task to explain an API, or (`place`) to place a change of it.
pub fn task_line_for(place: bool, api: &str, event_source: &str) -> String {
    let verb = if place {
        "place the change of"
    } else {
        "explain"
    };
    format!("Task: {verb} eventName {api} of {event_source}")
}

/// The task's first message in the given style, redacted.
pub fn first_message(style: Style, task: &Task<'_>, sources: &Sources<'_>) -> String {
    let text = match style {
        Style::Focused => focused(task, sources),
        Style::Naive => naive(task, sources),
    };
    sources.redactor.text(&text)
}

fn focused(task: &Task<'_>, s: &Sources<'_>) -> String {
    let mut out = task_line(task);
    if task.is_placement() {
        out.push_str("\n\nThe rule explains these calls, but the planner could not write these parts of their change into the code:\n");
        for part in &task.place {
            let what = match part.part.attribute() {
                "" => "the resource".to_owned(),
                name => name.to_owned(),
            };
            let _ = writeln!(out, "- {} {what}: {}", part.resource, part.reason);
        }
        out.push_str("Edit the scratch copy with `edit`, check it with `check_plan`, and keep it with `submit_edits`.\n");
    }
    out.push_str("\n\nCalls (request and response parameters):\n");
    for call in task.calls.iter().take(CALLS_SHOWN) {
        let line = json!({
            "eventName": call.api_name(),
            "request": call.request_parameters.json().map(|v| s.redactor.json(&v)),
            "response": call.response_elements.json().map(|v| s.redactor.json(&v)),
        });
        let _ = writeln!(out, "{line}");
    }
    if task.calls.len() > CALLS_SHOWN {
        let _ = writeln!(
            out,
            "({} more calls of this API)",
            task.calls.len() - CALLS_SHOWN
        );
    }
    for address in &task.addresses {
        let _ = write!(out, "\nNet change the observed cloud shows on {address}:\n");
        let before = s.state.instances.iter().find(|i| &i.address == address);
        let after = s.observed.instances.iter().find(|i| &i.address == address);
        out.push_str(&net_change(before, after, s.redactor));
        if let Some(code) = located_code(s.project, address) {
            let _ = write!(out, "Code ({}):\n{}\n", code.0, code.1);
        }
        if let Some(code) = task
            .is_placement()
            .then(|| module_call_code(s.project, address))
            .flatten()
        {
            let _ = write!(out, "Module call ({}):\n{}\n", code.0, code.1);
        }
        if let Some(kind) = after.or(before).map(|i| i.resource_type.as_str()) {
            let _ = writeln!(
                out,
                "Schema of {kind} (settable): {}",
                schema_excerpt(s.schema, kind)
            );
        }
    }
    if let Some(rule) = task.current {
        let _ = write!(
            out,
            "\nThe learned rule for this API read no change from these calls; the rule you propose replaces it:\n{}\n",
            rule_json(rule)
        );
    }
    let similar = similar_rules(s.rules, task.event_source, task.api, SIMILAR);
    if !similar.is_empty() {
        out.push_str("\nSimilar rules:\n");
        for rule in similar {
            let _ = writeln!(out, "{}", rule_json(rule));
        }
    }
    out
}

fn naive(task: &Task<'_>, s: &Sources<'_>) -> String {
    let mut out = task_line(task);
    out.push_str("\n\nCloudTrail records:\n");
    for call in s.all_calls {
        let record = match call.raw() {
            Some(raw) => serde_json::from_str::<Value>(raw).unwrap_or(Value::Null),
            None => json!({
                "eventTime": call.event_time.to_rfc3339(),
                "eventSource": call.event_source,
                "eventName": call.event_name,
                "requestParameters": call.request_parameters.json(),
                "responseElements": call.response_elements.json(),
            }),
        };
        let record = s.redactor.json(&record);
        let _ = writeln!(out, "{record}");
    }
    out.push_str("\nConfiguration files:\n");
    for (path, text) in s.project.files() {
        let _ = write!(out, "--- {path}\n{text}\n");
    }
    out.push_str("\nterraform plan -refresh-only:\n");
    for after in &s.observed.instances {
        let before = s
            .state
            .instances
            .iter()
            .find(|i| i.address == after.address);
        if before.map(|b| &b.attributes) != Some(&after.attributes) {
            let _ = write!(
                out,
                "  # {} has changed\n{}\n",
                after.address,
                pretty(&after.attributes)
            );
        }
    }
    out
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// The attributes that differ between two versions of an instance, one per line.
pub fn net_change(
    before: Option<&Instance>,
    after: Option<&Instance>,
    redactor: &Redactor,
) -> String {
    match (before, after) {
        (None, None) => "  (not in the state nor the observed cloud)\n".to_owned(),
        (None, Some(_)) => "  created out of band\n".to_owned(),
        (Some(_), None) => "  deleted out of band\n".to_owned(),
        (Some(b), Some(a)) => {
            let mut out = String::new();
            let empty = serde_json::Map::new();
            let old = b.attributes.as_object().unwrap_or(&empty);
            let new = a.attributes.as_object().unwrap_or(&empty);
            for (name, value) in new {
                let was = old.get(name).unwrap_or(&Value::Null);
                if was != value {
                    let (was, value) = (redactor.json(was), redactor.json(value));
                    let _ = writeln!(out, "  {name}: {was} -> {value}");
                }
            }
            if out.is_empty() {
                out.push_str("  nothing\n");
            }
            out
        }
    }
}

/// The file and text of the block that declares an address.
pub fn located_code(project: &Project, address: &str) -> Option<(String, String)> {
    let instance = project.instance(address)?;
    let text = project.files().get(&instance.file)?;
    let span = text.get(instance.span.clone())?;
    let line = text[..instance.span.start].lines().count() + 1;
    Some((format!("{}:{line}", instance.file), span.to_owned()))
}

/// The file and text of the `module` block that calls the module an address is in.
pub fn module_call_code(project: &Project, address: &str) -> Option<(String, String)> {
    let module = project.instance(address)?.module.clone()?;
    let call = project.call_of(&module)?;
    let text = project.files().get(&call.file)?;
    let line = text[..call.span.start].lines().count() + 1;
    Some((
        format!("{}:{line}", call.file),
        text.get(call.span)?.to_owned(),
    ))
}

/// A type's settable attributes, `name:type` each, comma-separated.
pub fn schema_excerpt(schema: &ProviderSchema, resource_type: &str) -> String {
    let Some(resource) = schema.resource(resource_type) else {
        return "(not in the bundled schema)".to_owned();
    };
    resource
        .block
        .attributes
        .iter()
        .filter(|(_, a)| a.presence.is_settable())
        .map(|(name, a)| format!("{name}:{}", a.ty))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A rule as compact JSON (its `[[rule]]` table's content, with the service and source).
pub fn rule_json(rule: &Rule) -> String {
    serde_json::to_string(rule).unwrap_or_default()
}

/// Up to `n` rules most like an API, by the words of the API names they share — the verb
/// weighing most — and the event source (`TagPolicy` is like `TagRole` and `TagUser` before
/// `AttachRolePolicy`).
pub fn similar_rules<'r>(
    rules: &'r RuleSet,
    event_source: &str,
    api: &str,
    n: usize,
) -> Vec<&'r Rule> {
    let words = camel_words(api);
    let mut scored: Vec<(usize, &Rule)> = rules
        .iter()
        .filter(|r| r.spec.api != api || r.event_source != event_source)
        .map(|r| {
            let theirs = camel_words(&r.spec.api);
            let verb = usize::from(theirs.first().is_some_and(|v| words.first() == Some(v)));
            let shared = theirs.iter().filter(|w| words.contains(w)).count();
            let same_source = usize::from(r.event_source == event_source);
            (verb * 2 + shared + same_source, r)
        })
        .filter(|(score, _)| *score >= 3)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.id().cmp(&b.1.id())));
    scored.into_iter().take(n).map(|(_, r)| r).collect()
}

/// `PutBucketTagging` → `put`, `bucket`, `tagging`.
fn camel_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    for c in name.chars() {
        if (c.is_uppercase() || !c.is_alphabetic()) && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        if c.is_alphabetic() {
            current.extend(c.to_lowercase());
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_names_split_into_words() {
        assert_eq!(
            camel_words("PutBucketTagging"),
            ["put", "bucket", "tagging"]
        );
        assert_eq!(
            camel_words("UpdateFunctionConfiguration20150331v2"),
            ["update", "function", "configuration", "v"]
        );
    }

    #[test]
    fn similar_rules_share_words_and_source() {
        let rules = RuleSet::bundled().expect("rules");
        let similar = similar_rules(rules, "iam.amazonaws.com", "TagPolicy", 3);
        let ids: Vec<String> = similar.iter().map(|r| r.id()).collect();
        // The IAM tagging rules (TagRole, TagUser, TagInstanceProfile, ...) share the verb and
        // the source: 2 + 1 + 1; AttachRolePolicy shares a noun and the source only: 1 + 1,
        // below the bar.
        assert_eq!(ids.len(), 3, "{ids:?}");
        assert!(ids.iter().all(|id| id.starts_with("iam:Tag")), "{ids:?}");
        assert!(
            !ids.iter().any(|id| id.starts_with("iam:Attach")),
            "{ids:?}"
        );
    }
}
