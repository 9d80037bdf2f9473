//! Arguments equal to the AWS provider's documented defaults, kept out of new resource blocks:
//! a careful engineer does not write `visibility_timeout_seconds = 30` on a new queue, and
//! leaving it out plans the same. The provider schema carries no defaults, so the table below
//! is taken from the argument references of the hashicorp/aws 5.x documentation ("Defaults
//! to ..."), for the resource types retrace imports most.

use serde_json::{Map, Value, json};

/// (resource type, argument, documented default).
fn table() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        ("aws_sqs_queue", "delay_seconds", json!(0)),
        ("aws_sqs_queue", "max_message_size", json!(262144)),
        ("aws_sqs_queue", "message_retention_seconds", json!(345600)),
        ("aws_sqs_queue", "receive_wait_time_seconds", json!(0)),
        ("aws_sqs_queue", "visibility_timeout_seconds", json!(30)),
        ("aws_sqs_queue", "fifo_queue", json!(false)),
        ("aws_sqs_queue", "content_based_deduplication", json!(false)),
        ("aws_sns_topic", "fifo_topic", json!(false)),
        ("aws_sns_topic", "content_based_deduplication", json!(false)),
        ("aws_iam_role", "path", json!("/")),
        ("aws_iam_role", "max_session_duration", json!(3600)),
        ("aws_iam_role", "force_detach_policies", json!(false)),
        ("aws_iam_user", "path", json!("/")),
        ("aws_iam_user", "force_destroy", json!(false)),
        ("aws_iam_group", "path", json!("/")),
        ("aws_iam_policy", "path", json!("/")),
        ("aws_iam_instance_profile", "path", json!("/")),
        ("aws_s3_bucket", "force_destroy", json!(false)),
        ("aws_s3_bucket", "object_lock_enabled", json!(false)),
        ("aws_cloudwatch_log_group", "retention_in_days", json!(0)),
        ("aws_cloudwatch_log_group", "skip_destroy", json!(false)),
        (
            "aws_cloudwatch_log_group",
            "log_group_class",
            json!("STANDARD"),
        ),
        ("aws_lambda_function", "memory_size", json!(128)),
        ("aws_lambda_function", "timeout", json!(3)),
        ("aws_lambda_function", "publish", json!(false)),
        ("aws_lambda_function", "package_type", json!("Zip")),
        (
            "aws_ecr_repository",
            "image_tag_mutability",
            json!("MUTABLE"),
        ),
        ("aws_ecr_repository", "force_delete", json!(false)),
        ("aws_kms_key", "is_enabled", json!(true)),
        ("aws_kms_key", "enable_key_rotation", json!(false)),
        ("aws_kms_key", "key_usage", json!("ENCRYPT_DECRYPT")),
        (
            "aws_kms_key",
            "customer_master_key_spec",
            json!("SYMMETRIC_DEFAULT"),
        ),
        (
            "aws_kms_key",
            "bypass_policy_lockout_safety_check",
            json!(false),
        ),
        (
            "aws_secretsmanager_secret",
            "recovery_window_in_days",
            json!(30),
        ),
        (
            "aws_secretsmanager_secret",
            "force_overwrite_replica_secret",
            json!(false),
        ),
        (
            "aws_security_group",
            "description",
            json!("Managed by Terraform"),
        ),
        ("aws_security_group", "revoke_rules_on_delete", json!(false)),
        ("aws_ssm_parameter", "tier", json!("Standard")),
        (
            "aws_cloudwatch_metric_alarm",
            "actions_enabled",
            json!(true),
        ),
        (
            "aws_cloudwatch_metric_alarm",
            "treat_missing_data",
            json!("missing"),
        ),
        ("aws_dynamodb_table", "billing_mode", json!("PROVISIONED")),
    ]
}

/// Drops from a new `resource_type` block's arguments those equal to the provider's documented
/// default (numbers and strings compared as Terraform converts them).
pub fn drop_defaults(resource_type: &str, attributes: &mut Map<String, Value>) {
    for (kind, name, default) in table() {
        if kind == resource_type
            && attributes
                .get(name)
                .is_some_and(|v| crate::terraform::values::same_value(v, &default))
        {
            attributes.remove(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
