//! Ids and ARNs of managed resources written as references (`vpc_id = aws_vpc.main.id`)
//! rather than literals.

use super::planner::Planner;
use crate::terraform::config::ResourceInstance;
use serde_json::Value;

impl Planner<'_> {
    /// The value of `attribute` with ids and ARNs of managed resources in the instance's module
    /// written as references (an object's keys name its own attributes).
    pub(super) fn refer(
        &self,
        instance: &ResourceInstance,
        attribute: &str,
        value: &Value,
    ) -> Value {
        self.refer_in(instance.module.as_deref(), attribute, value)
    }

    pub(super) fn refer_root(&self, attribute: &str, value: &Value) -> Value {
        self.refer_in(None, attribute, value)
    }

    fn refer_in(&self, module: Option<&str>, attribute: &str, value: &Value) -> Value {
        match value {
            Value::String(s) => self
                .reference(module, attribute, s)
                .map_or_else(|| value.clone(), Value::String),
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|v| self.refer_in(module, attribute, v))
                    .collect(),
            ),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.refer_in(module, k, v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// `${address.id}` when exactly one managed instance in `module` has this id (or ARN), or,
    /// when several do, exactly one whose type the attribute names (`role` → `aws_iam_role`).
    fn reference(&self, module: Option<&str>, attribute: &str, text: &str) -> Option<String> {
        if text.len() < 5 {
            return None;
        }
        if module.is_none()
            && let Some(address) = self.created.borrow().by_id.get(text)
        {
            return Some(format!("${{{address}.id}}"));
        }
        // An ARN argument refers to `.arn` where a type's id is its ARN too (a target group).
        let keys = if attribute.ends_with("_arn") || attribute.ends_with("_arns") {
            ["arn", "id"]
        } else {
            ["id", "arn"]
        };
        let hits: Vec<(String, &str)> = self
            .state
            .lookup(None, text)
            .into_iter()
            .filter_map(|i| {
                let local = local_address(&i.address, module)?;
                keys.into_iter()
                    .find(|k| i.string_attribute(k) == Some(text))
                    .map(|k| (format!("${{{local}.{k}}}"), i.resource_type.as_str()))
            })
            .collect();
        match hits.as_slice() {
            [(one, _)] => Some(one.clone()),
            [] => None,
            many => {
                let stem = type_stem(attribute);
                let mut named = many
                    .iter()
                    .filter(|(_, kind)| !stem.is_empty() && kind.ends_with(&format!("_{stem}")));
                let first = named.next()?;
                named.next().is_none().then(|| first.0.clone())
            }
        }
    }
}

/// The resource kind an attribute names: `role` → `role`, `vpc_id` → `vpc`,
/// `policy_arn` → `policy`.
fn type_stem(attribute: &str) -> &str {
    ["_ids", "_id", "_arns", "_arn", "_names", "_name"]
        .iter()
        .find_map(|suffix| attribute.strip_suffix(suffix))
        .unwrap_or(attribute)
}

/// The address relative to `module`, when the instance is a managed resource in it.
fn local_address<'s>(address: &'s str, module: Option<&str>) -> Option<&'s str> {
    let rest = match module {
        Some(m) => address.strip_prefix(m)?.strip_prefix('.')?,
        None => address,
    };
    (!rest.starts_with("module.") && !rest.starts_with("data.")).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_name_the_type_they_refer_to() {
        assert_eq!(type_stem("role"), "role");
        assert_eq!(type_stem("vpc_id"), "vpc");
        assert_eq!(type_stem("vpc_security_group_ids"), "vpc_security_group");
        assert_eq!(type_stem("policy_arn"), "policy");
    }
}
