//! Arguments equal to the AWS provider's documented defaults, kept out of new resource blocks:
//! a careful engineer does not write `visibility_timeout_seconds = 30` on a new queue, and
//! leaving it out plans the same. The provider schema carries no defaults; the table is
//! knowledge's [`knowledge::Defaults`] (`knowledge/data/provider-defaults.toml`), read from
//! the hashicorp/aws 5.100.0 argument references for the types retrace creates.

use knowledge::Defaults;
use serde_json::{Map, Value};

/// Whether `value` is the documented default of the argument at `path` (a dotted path for an
/// argument of a nested block) of a `resource_type` block, numbers and strings compared as
/// Terraform converts them. The table is compiled in and a knowledge test loads it, so a
/// table that does not load cannot ship; were it to, nothing would count as a default.
pub fn is_default(resource_type: &str, path: &str, value: &Value) -> bool {
    Defaults::bundled()
        .ok()
        .and_then(|table| table.default_of(resource_type, path))
        .is_some_and(|default| crate::terraform::values::same_value(value, default))
}

/// Drops from a new `resource_type` block's arguments those equal to the provider's documented
/// default (numbers and strings compared as Terraform converts them).
pub fn drop_defaults(resource_type: &str, attributes: &mut Map<String, Value>) {
    attributes.retain(|name, value| !is_default(resource_type, name, value));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn documented_defaults_are_left_out_and_other_values_kept() {
        let mut queue = json!({
            "name": "jobs",
            "visibility_timeout_seconds": 30,
            "message_retention_seconds": "345600",
            "delay_seconds": 5,
            "fifo_queue": false
        })
        .as_object()
        .cloned()
        .expect("an object");
        drop_defaults("aws_sqs_queue", &mut queue);
        assert_eq!(
            Value::Object(queue),
            json!({"name": "jobs", "delay_seconds": 5})
        );
        let mut other = json!({"path": "/"})
            .as_object()
            .cloned()
            .expect("an object");
        drop_defaults("aws_iam_access_key", &mut other);
        assert_eq!(
            other.len(),
            1,
            "types without a table entry keep everything"
        );
    }
}
