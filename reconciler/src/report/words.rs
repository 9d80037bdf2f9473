//! Plain words for the text report: decisions, the part of a change each decision is about,
//! validator differences (values shortened by `crate::text`) and the run's status.

use crate::intents::{BlockOp, Delta, IntentKind, Lifecycle, block_words};
use crate::policy::{Decision, Part};
use crate::reconcile::{Outcome, Status};
use crate::text::{VALUE_WIDTH, elide, value};
use crate::validate::Difference;
use serde_json::Value;

/// What an intent changed, in words: `nested blocks changed`, `attributes changed`, ...
pub fn kind(kind: IntentKind) -> &'static str {
    match kind {
        IntentKind::Create => "resources created",
        IntentKind::Delete => "resources deleted",
        IntentKind::Associate => "links between resources changed",
        IntentKind::NestedBlock => "nested blocks changed",
        IntentKind::Update => "attributes changed",
        IntentKind::Tags => "tags changed",
        IntentKind::Unmanaged => "resources outside this project changed",
        IntentKind::NoNetChange => "no net change",
    }
}

/// The verb of a decision.
pub fn decision(decision: Decision) -> &'static str {
    match decision {
        Decision::Absorb => "absorb",
        Decision::Flag => "hold for a person",
        Decision::Ignore => "ignore",
        Decision::Rejected => "leave out",
    }
}

/// The part of a delta a decision is about, e.g. `the new ingress rule tcp 443 from
/// 10.0.0.0/16` or `instance_type = "t3.large"`; without the delta, the part's name only.
pub fn part(part: &Part, delta: Option<&Delta>) -> String {
    match part {
        Part::Resource => match delta {
            Some(d) if d.lifecycle == Lifecycle::Created => format!(
                "the new {} {}",
                d.resource.resource_type, d.resource.identity
            ),
            Some(d) if d.lifecycle == Lifecycle::Deleted => match &d.address {
                Some(address) => format!("the deletion of {address}"),
                None => format!("the deletion of {}", d.resource),
            },
            _ => "the resource".to_owned(),
        },
        Part::Attribute(name) => match delta.and_then(|d| d.attributes.get(name)) {
            Some(change) => format!("{name} = {}", value(&change.after)),
            None => name.clone(),
        },
        Part::Block { block, index } => match delta.and_then(|d| d.blocks.get(*index)) {
            Some(b) if b.op == BlockOp::Added => {
                format!("the new {}", block_words(&b.block, &b.fields))
            }
            Some(b) => format!("the removal of the {}", block_words(&b.block, &b.fields)),
            None => format!("a {block} block"),
        },
        Part::Tags => match delta {
            Some(d) => format!("the tags ({})", tag_words(d)),
            None => "the tags".to_owned(),
        },
    }
}

/// Tags set and removed: `CostCenter=marketing, -Owner`.
fn tag_words(d: &Delta) -> String {
    let set = d.tags_set.iter().map(|(k, v)| format!("{k}={v}"));
    let removed = d.tags_removed.iter().map(|k| format!("-{k}"));
    elide(
        &set.chain(removed).collect::<Vec<_>>().join(", "),
        VALUE_WIDTH,
    )
}

/// One validator difference on a line: `address attribute: code X, cloud Y`, or what is
/// missing where.
pub fn difference(d: &Difference) -> String {
    if d.attribute.is_empty() {
        return match (&d.config, &d.observed) {
            (Value::String(note), Value::Null) => format!("{}: {note}", d.address),
            (_, Value::Null) => format!("{}: in the code, not in the cloud", d.address),
            (Value::Null, _) => format!("{}: in the cloud, not in the code", d.address),
            _ => format!("{}: differs", d.address),
        };
    }
    format!(
        "{} {}: code {}, cloud {}",
        d.address,
        d.attribute,
        value(&d.config),
        value(&d.observed)
    )
}

/// The status line: what the run ended with and its exit code.
pub fn status(status: Status) -> String {
    let what = match status {
        Status::NoDrift => "nothing to do",
        Status::Patched => "drift patched",
        Status::Partial => {
            "drift not all absorbed: what is held, not reconciled or unexplained needs a person"
        }
    };
    format!("{what} (exit {})", status.exit_code())
}

/// The status line of a run: [`status`], and for a patch that a validator asked for did not
/// check, which one and why, so "patched" never reads as more checked than it was.
pub fn outcome_status(outcome: &Outcome) -> String {
    let line = status(outcome.status);
    if outcome.status != Status::Patched || outcome.skipped_validators.is_empty() {
        return line;
    }
    let unchecked: Vec<String> = outcome
        .skipped_validators
        .iter()
        .map(|(name, why)| format!("{name} did not check the patch ({why})"))
        .collect();
    format!(
        "{line}, checked by the built-in check only: {}",
        unchecked.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_patch_a_validator_did_not_check_says_so_in_the_status() {
        let mut outcome = Outcome::empty();
        outcome.status = Status::Patched;
        assert_eq!(outcome_status(&outcome), "drift patched (exit 2)");
        outcome.skipped_validators = vec![(
            "terraform".to_owned(),
            "the plan needed the cloud".to_owned(),
        )];
        assert_eq!(
            outcome_status(&outcome),
            "drift patched (exit 2), checked by the built-in check only: terraform did not \
             check the patch (the plan needed the cloud)"
        );
        outcome.status = Status::Partial;
        assert!(!outcome_status(&outcome).contains("terraform"));
    }

    #[test]
    fn long_values_are_cut_on_a_character_boundary() {
        assert_eq!(elide("short", 10), "short");
        assert_eq!(elide("ééééééééééé", 5), "éééé…");
        let policy =
            json!({"Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]});
        let shown = value(&policy);
        assert_eq!(shown.chars().count(), VALUE_WIDTH);
        assert!(shown.ends_with('…'));
    }

    #[test]
    fn differences_name_the_attribute_or_what_is_missing() {
        let at = |attribute: &str, config: Value, observed: Value| Difference {
            address: "aws_instance.web".into(),
            attribute: attribute.into(),
            config,
            observed,
        };
        assert_eq!(
            difference(&at("instance_type", json!("t3.large"), json!("t3.medium"))),
            "aws_instance.web instance_type: code \"t3.large\", cloud \"t3.medium\""
        );
        assert_eq!(
            difference(&at("", json!({"ami": "ami-1"}), Value::Null)),
            "aws_instance.web: in the code, not in the cloud"
        );
        assert_eq!(
            difference(&at("", Value::Null, json!("exists"))),
            "aws_instance.web: in the cloud, not in the code"
        );
    }
}
