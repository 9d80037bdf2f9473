//! How the provider stores a configured value, where that differs from the value written.
//!
//! Some provider arguments have a state function: the provider stores a normalized form of
//! the configured value and compares the configuration through the same function, so the two
//! forms never show as a change in `terraform plan`. Comparing configuration with state must
//! do the same, or it reports differences Terraform does not see.

use serde_json::Value;

/// A normalization the provider applies before storing a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Normal {
    /// A DNS name: lower case, without the final dot.
    DnsName,
}

/// The arguments with a state function, by resource type and attribute path. From the AWS
/// provider's source: `aws_route53_record.name` and `aws_route53_zone.name` are stored
/// without the trailing dot and in lower case (`www.Example.com.` → `www.example.com`).
const STORED: &[(&str, &str, Normal)] = &[
    ("aws_route53_record", "name", Normal::DnsName),
    ("aws_route53_zone", "name", Normal::DnsName),
];

/// The value the provider stores for `value` configured at `path` of `resource_type`; the
/// value itself where the argument has no state function.
pub fn stored_form(resource_type: &str, path: &str, value: &Value) -> Value {
    let normal = STORED
        .iter()
        .find(|(t, p, _)| *t == resource_type && *p == path)
        .map(|(_, _, n)| *n);
    match (normal, value) {
        (Some(Normal::DnsName), Value::String(name)) => {
            Value::String(name.trim_end_matches('.').to_ascii_lowercase())
        }
        _ => value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn record_names_are_stored_without_the_final_dot_in_lower_case() {
        assert_eq!(
            stored_form("aws_route53_record", "name", &json!("_A1.www.Example.com.")),
            json!("_a1.www.example.com")
        );
        assert_eq!(
            stored_form("aws_route53_zone", "name", &json!("example.com.")),
            json!("example.com")
        );
        // Other arguments, and other types, are stored as written.
        assert_eq!(
            stored_form("aws_route53_record", "type", &json!("CNAME.")),
            json!("CNAME.")
        );
        assert_eq!(
            stored_form("aws_s3_bucket", "name", &json!("A.")),
            json!("A.")
        );
    }
}
