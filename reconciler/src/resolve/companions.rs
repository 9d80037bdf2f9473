//! Arguments the code manages through a resource of their own.
//!
//! A queue's or a topic's policy can be written on the queue (`policy` of `aws_sqs_queue`) or
//! as a resource of its own (`aws_sqs_queue_policy`); the provider documentation warns against
//! setting both. AWS has one call for either (`SetQueueAttributes` with `Policy`), so when the
//! state holds the companion resource for the parent a call changed, the change belongs to
//! that resource: its argument set, or, when the call cleared the argument, its deletion.

use super::effect::{Change, Effect};
use crate::terraform::state::{Instance, Mode, StateIndex};
use knowledge::catalog::{Catalog, Companion};
use serde_json::Value;

/// The effects with argument changes on managed parents moved onto the companion resources
/// the state holds for them.
pub(super) fn as_companions(effects: Vec<Effect>, state: &StateIndex) -> Vec<Effect> {
    super::rewrite(effects, |effect| {
        on_companion(effect, state).map(|e| vec![e])
    })
}

/// The effect on the companion resource, or `None` when the effect sets no argument a
/// companion of its managed parent holds.
fn on_companion(effect: &Effect, state: &StateIndex) -> Option<Effect> {
    let Change::Set { attribute, value } = &effect.change else {
        return None;
    };
    let companion = Catalog::bundled().companion(&effect.resource.resource_type, attribute)?;
    let parent = state.instance(effect.address.as_deref()?)?;
    let held = holder(state, companion, parent.string_attribute("id")?)?;
    let change = if is_cleared(value) {
        Change::Delete
    } else {
        effect.change.clone()
    };
    Some(effect.on_instance(held, change))
}

/// The managed companion resource naming the parent by its id.
fn holder<'s>(
    state: &'s StateIndex,
    companion: &Companion,
    parent_id: &str,
) -> Option<&'s Instance> {
    state
        .iter()
        .filter(|i| i.mode == Mode::Managed && i.deposed.is_none())
        .filter(|i| i.resource_type == companion.resource)
        .find(|i| i.string_attribute(&companion.parent) == Some(parent_id))
}

/// Whether a value removes the argument.
fn is_cleared(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::testing::{effect, index, resource};
    use serde_json::json;

    const URL: &str = "https://sqs.eu-west-1.amazonaws.com/123456789012/jobs";

    fn policy_set(value: Value) -> Effect {
        let change = Change::Set {
            attribute: "policy".into(),
            value,
        };
        let queue = ("aws_sqs_queue", URL);
        effect(
            "SetQueueAttributes",
            queue,
            Some("aws_sqs_queue.jobs"),
            change,
        )
    }

    fn queue() -> Value {
        resource(
            "aws_sqs_queue",
            "jobs",
            json!({"id": URL, "url": URL, "name": "jobs"}),
        )
    }

    #[test]
    fn a_policy_the_code_holds_apart_is_set_on_its_resource() {
        let state = index(json!([
            queue(),
            resource(
                "aws_sqs_queue_policy",
                "jobs",
                json!({"id": URL, "queue_url": URL})
            ),
        ]));
        let document = json!({"Version": "2012-10-17", "Statement": []});
        let effects = as_companions(vec![policy_set(document.clone())], &state);
        assert_eq!(effects.len(), 1);
        assert_eq!(
            effects[0].address.as_deref(),
            Some("aws_sqs_queue_policy.jobs")
        );
        assert_eq!(effects[0].resource.resource_type, "aws_sqs_queue_policy");
        assert_eq!(
            effects[0].change,
            Change::Set {
                attribute: "policy".into(),
                value: document
            }
        );
        let cleared = as_companions(vec![policy_set(Value::Null)], &state);
        assert_eq!(cleared[0].change, Change::Delete);
        assert_eq!(
            cleared[0].address.as_deref(),
            Some("aws_sqs_queue_policy.jobs")
        );
    }

    #[test]
    fn a_policy_of_a_queue_without_a_policy_resource_stays_on_the_queue() {
        let other = "https://sqs.eu-west-1.amazonaws.com/123456789012/other";
        let state = index(json!([
            queue(),
            resource(
                "aws_sqs_queue_policy",
                "other",
                json!({"id": other, "queue_url": other})
            ),
        ]));
        let effect = policy_set(json!({"Version": "2012-10-17"}));
        assert_eq!(as_companions(vec![effect.clone()], &state), [effect]);
    }
}
