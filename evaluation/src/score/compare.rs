//! Comparing attribute values with Terraform's shapes in mind, written for the scorer alone
//! (independent of the reconciler's plan check, which is under test).
//!
//! State files and evaluated configuration disagree in form where Terraform sees no change:
//! a number may be written as a string, an unset optional value is `null` in configuration
//! but `""`, `0`, `false`, `[]` or `{}` in a state written by the provider, sets come in any
//! order, nested blocks are lists of objects whose unset fields the state fills in, and JSON
//! documents (IAM policies) are equal when they parse to the same value.

use knowledge::schema::{AttrType, Member, Presence, ResourceSchema, stored_form};
use serde_json::Value;

/// What is compared with what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Configuration against a state value: an attribute the code leaves unset agrees with
    /// whatever the provider computed for it (optional-computed and computed attributes).
    CodeToCloud,
    /// Configuration against configuration (before and after a patch), or state against state.
    Same,
}

/// The schema of the resource type whose values are compared, when known.
#[derive(Debug, Clone, Copy)]
pub struct Shape<'a> {
    /// The resource type.
    pub resource_type: &'a str,
    /// The resource type's schema.
    pub schema: Option<&'a ResourceSchema>,
    /// The kind of comparison.
    pub side: Side,
}

impl Shape<'_> {
    /// Whether `a` (code, or the earlier value) and `b` (cloud, or the later value) agree at
    /// the attribute path `path` (dotted, blocks and lists add no segment for their items).
    pub fn agree(&self, path: &str, a: &Value, b: &Value) -> bool {
        if is_zero(a) && is_zero(b) {
            return true;
        }
        if a.is_null() && self.provider_fills(path) {
            return true;
        }
        match (a, b) {
            (Value::Null, _) | (_, Value::Null) => false,
            (Value::Object(x), Value::Object(y)) => {
                let keys = x.keys().chain(y.keys().filter(|k| !x.contains_key(*k)));
                keys.into_iter().all(|k| {
                    let sub = join(path, k);
                    self.agree(
                        &sub,
                        x.get(k).unwrap_or(&Value::Null),
                        y.get(k).unwrap_or(&Value::Null),
                    )
                })
            }
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                if self.unordered(path) {
                    self.match_unordered(path, x, y)
                } else {
                    x.iter().zip(y).all(|(p, q)| self.agree(path, p, q))
                }
            }
            (Value::Array(_), Value::Array(_)) => false,
            _ if self.side == Side::CodeToCloud => {
                same_scalar(&stored_form(self.resource_type, path, a), b)
            }
            _ => same_scalar(a, b),
        }
    }

    /// Where `a` and `b` first disagree, for a reason a reviewer can read: descends into
    /// objects, and into lists compared in order, to the first differing member; `None` when
    /// they agree.
    pub fn difference<'v>(
        &self,
        path: &str,
        a: &'v Value,
        b: &'v Value,
    ) -> Option<(String, &'v Value, &'v Value)> {
        if self.agree(path, a, b) {
            return None;
        }
        let deeper = match (a, b) {
            (Value::Object(x), Value::Object(y)) => x
                .keys()
                .chain(y.keys().filter(|k| !x.contains_key(*k)))
                .find_map(|k| {
                    self.difference(
                        &join(path, k),
                        x.get(k).unwrap_or(&Value::Null),
                        y.get(k).unwrap_or(&Value::Null),
                    )
                }),
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() && !self.unordered(path) => x
                .iter()
                .zip(y)
                .find_map(|(p, q)| self.difference(path, p, q)),
            _ => None,
        };
        Some(deeper.unwrap_or((path.to_owned(), a, b)))
    }

    /// Pairs each item of `x` with a distinct item of `y` that agrees with it.
    fn match_unordered(&self, path: &str, x: &[Value], y: &[Value]) -> bool {
        let mut used = vec![false; y.len()];
        x.iter().all(|item| {
            let hit = (0..y.len()).find(|&i| !used[i] && self.agree(path, item, &y[i]));
            hit.map(|i| used[i] = true).is_some()
        })
    }

    /// Whether items at `path` are a set (a set-nested block or a set-typed attribute), or
    /// nested blocks whose schema is unknown.
    fn unordered(&self, path: &str) -> bool {
        let Some(schema) = self.schema else {
            return false;
        };
        if schema.is_set_block(path) {
            return true;
        }
        matches!(schema.attribute(path), Some(a) if matches!(a.ty, AttrType::Set(_)))
    }

    /// Whether the provider decides the value when the code leaves it unset.
    fn provider_fills(&self, path: &str) -> bool {
        if self.side != Side::CodeToCloud {
            return false;
        }
        matches!(
            self.schema.and_then(|s| s.member(path)),
            Some(Member::Attribute(a)) if matches!(a.presence, Presence::Computed | Presence::OptionalComputed)
        )
    }
}

/// Nested blocks the provider leaves alone when the configuration writes none, although the
/// schema cannot say so (a block has no computed flag): the provider's documentation of
/// `aws_iam_role` says of `inline_policy` that if no blocks are configured, Terraform will not
/// manage any inline policies in this resource (they are managed as `aws_iam_role_policy`).
const UNMANAGED_WHEN_ABSENT: [(&str, &str); 1] = [("aws_iam_role", "inline_policy")];

/// Whether code that writes nothing for this top-level attribute leaves it to the cloud.
pub fn unmanaged_when_absent(resource_type: &str, name: &str) -> bool {
    UNMANAGED_WHEN_ABSENT.contains(&(resource_type, name))
}

/// Whether the top-level attribute `name` is one the configuration may set (any nested block,
/// or an attribute that is not computed-only). Unknown types count every attribute but `id`.
pub fn settable(schema: Option<&ResourceSchema>, name: &str) -> bool {
    match schema {
        None => name != "id",
        Some(s) => match s.member(name) {
            Some(Member::Block(_)) => true,
            Some(Member::Attribute(a)) => a.presence.is_settable(),
            None => false,
        },
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// The values an unset optional attribute takes in a provider-written state.
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
    }
}

/// Scalars equal as Terraform converts them: numbers and their decimal strings, booleans and
/// `"true"`/`"false"`, and strings holding JSON documents that parse to the same value.
fn same_scalar(a: &Value, b: &Value) -> bool {
    if a == b {
        return true;
    }
    match (a, b) {
        (Value::Number(x), Value::String(s)) | (Value::String(s), Value::Number(x)) => {
            s.trim().parse::<f64>().ok() == x.as_f64()
        }
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Bool(x), Value::String(s)) | (Value::String(s), Value::Bool(x)) => {
            s == if *x { "true" } else { "false" }
        }
        (Value::String(x), Value::String(y)) => same_document(x, y),
        _ => false,
    }
}

/// Two strings holding JSON objects or arrays that parse to equal values.
fn same_document(x: &str, y: &str) -> bool {
    let doc = |s: &str| {
        let t = s.trim_start();
        if t.starts_with('{') || t.starts_with('[') {
            serde_json::from_str::<Value>(s).ok()
        } else {
            None
        }
    };
    match (doc(x), doc(y)) {
        (Some(p), Some(q)) => p == q,
        _ => false,
    }
}

/// A value for a failure reason: compact JSON, `null` written as "nothing".
pub fn show(v: Option<&Value>) -> String {
    match v {
        None => "(known only after apply)".to_owned(),
        Some(Value::Null) => "nothing".to_owned(),
        Some(v) => {
            let text = v.to_string();
            if text.len() > 120 {
                format!("{}…", &text[..text.floor_char_boundary(117)])
            } else {
                text
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use knowledge::schema::ProviderSchema;
    use serde_json::json;

    fn shape(resource_type: &'static str, side: Side) -> Shape<'static> {
        let schema = ProviderSchema::bundled().unwrap().resource(resource_type);
        assert!(schema.is_some(), "{resource_type} is in the bundled schema");
        Shape {
            resource_type,
            schema,
            side,
        }
    }

    #[test]
    fn a_record_name_agrees_with_its_stored_form_from_code_only() {
        let code = json!("_A1.www.example.com.");
        let cloud = json!("_a1.www.example.com");
        assert!(shape("aws_route53_record", Side::CodeToCloud).agree("name", &code, &cloud));
        assert!(!shape("aws_route53_record", Side::Same).agree("name", &code, &cloud));
        assert!(!shape("aws_route53_record", Side::CodeToCloud).agree(
            "set_identifier",
            &code,
            &cloud
        ));
    }

    #[test]
    fn numbers_and_their_strings_agree() {
        let s = shape("aws_sqs_queue", Side::CodeToCloud);
        assert!(s.agree("delay_seconds", &json!(30), &json!("30")));
        assert!(s.agree("delay_seconds", &json!(30.0), &json!(30)));
        assert!(!s.agree("delay_seconds", &json!(0), &json!(30)));
        assert!(!s.agree("delay_seconds", &json!("31"), &json!(30)));
    }

    #[test]
    fn unset_agrees_with_zero_values_only() {
        let s = shape("aws_sqs_queue", Side::CodeToCloud);
        assert!(s.agree("delay_seconds", &Value::Null, &json!(0)));
        assert!(s.agree("tags", &Value::Null, &json!({})));
        assert!(s.agree("fifo_queue", &Value::Null, &json!(false)));
        assert!(!s.agree("delay_seconds", &Value::Null, &json!(30)));
    }

    #[test]
    fn unset_computed_attributes_agree_with_the_cloud_only_from_code() {
        // `arn` is computed and `tags_all` optional-computed: the provider fills them in.
        let code = shape("aws_sqs_queue", Side::CodeToCloud);
        assert!(code.agree("arn", &Value::Null, &json!("arn:aws:sqs:us-east-1:1:q")));
        assert!(code.agree("tags_all", &Value::Null, &json!({"Team": "a"})));
        let same = shape("aws_sqs_queue", Side::Same);
        assert!(!same.agree("tags_all", &Value::Null, &json!({"Team": "a"})));
    }

    #[test]
    fn sets_ignore_order_and_lists_do_not() {
        let s = shape("aws_security_group", Side::Same);
        let a = json!([{"from_port": 22, "cidr_blocks": ["10.0.0.0/8"]}, {"from_port": 443, "cidr_blocks": []}]);
        let b = json!([{"from_port": 443, "cidr_blocks": []}, {"from_port": 22, "cidr_blocks": ["10.0.0.0/8"]}]);
        assert!(s.agree("ingress", &a, &b));
        let c = json!([{"from_port": 443}, {"from_port": 443}]);
        assert!(!s.agree("ingress", &a, &c));
        // `subnets` of a load balancer is a set of strings.
        let lb = shape("aws_lb", Side::Same);
        assert!(lb.agree("subnets", &json!(["a", "b"]), &json!(["b", "a"])));
        // A launch template's block device mappings are an ordered list.
        let lt = shape("aws_launch_template", Side::Same);
        let x = json!([{"device_name": "/dev/a"}, {"device_name": "/dev/b"}]);
        let y = json!([{"device_name": "/dev/b"}, {"device_name": "/dev/a"}]);
        assert!(!lt.agree("block_device_mappings", &x, &y));
    }

    #[test]
    fn nested_blocks_compare_field_by_field() {
        // The state fills in the block's unset optional fields with zero values.
        let s = shape("aws_security_group", Side::CodeToCloud);
        let code = json!([{"from_port": 22, "to_port": 22, "protocol": "tcp", "cidr_blocks": ["10.0.0.0/8"]}]);
        let cloud = json!([{"from_port": 22, "to_port": 22, "protocol": "tcp", "cidr_blocks": ["10.0.0.0/8"],
            "description": "", "ipv6_cidr_blocks": [], "prefix_list_ids": [], "security_groups": [], "self": false}]);
        assert!(s.agree("ingress", &code, &cloud));
        let opened = json!([{"from_port": 22, "to_port": 22, "protocol": "tcp", "cidr_blocks": ["0.0.0.0/0"],
            "description": "", "ipv6_cidr_blocks": [], "prefix_list_ids": [], "security_groups": [], "self": false}]);
        assert!(!s.agree("ingress", &code, &opened));
    }

    #[test]
    fn json_documents_compare_parsed() {
        let s = shape("aws_iam_role", Side::CodeToCloud);
        let code = json!(r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow"}]}"#);
        let cloud = json!(
            "{\n  \"Statement\": [ {\"Effect\": \"Allow\"} ],\n  \"Version\": \"2012-10-17\"\n}"
        );
        assert!(s.agree("assume_role_policy", &code, &cloud));
        let other = json!(r#"{"Version":"2012-10-17","Statement":[{"Effect":"Deny"}]}"#);
        assert!(!s.agree("assume_role_policy", &code, &other));
    }

    #[test]
    fn the_first_difference_is_named_by_its_path() {
        let s = shape("aws_sqs_queue", Side::CodeToCloud);
        let code = json!({"Team": "a", "Env": "prod"});
        let cloud = json!({"Team": "a", "Env": "prod", "Backup": "daily"});
        let (path, a, b) = s.difference("tags", &code, &cloud).unwrap();
        assert_eq!(
            (path.as_str(), a, b),
            ("tags.Backup", &Value::Null, &json!("daily"))
        );
        assert!(s.difference("tags", &code, &code).is_none());
        // Lists of different lengths differ as a whole.
        let (path, _, _) = s.difference("x", &json!([1]), &json!([1, 2])).unwrap();
        assert_eq!(path, "x");
    }

    #[test]
    fn booleans_and_their_strings_agree() {
        let s = shape("aws_sqs_queue", Side::Same);
        assert!(s.agree("fifo_queue", &json!(true), &json!("true")));
        assert!(!s.agree("fifo_queue", &json!(true), &json!("false")));
    }

    #[test]
    fn settable_follows_the_schema() {
        let schema = ProviderSchema::bundled().unwrap().resource("aws_sqs_queue");
        assert!(settable(schema, "delay_seconds"));
        assert!(!settable(schema, "arn"));
        assert!(settable(None, "anything"));
        assert!(!settable(None, "id"));
    }
}
