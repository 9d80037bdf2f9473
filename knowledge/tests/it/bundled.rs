//! Checks the bundled AWS provider schema: its coverage, its shape, and facts confirmed by hand
//! against the provider's documentation and source, not read back from the generated file.

use knowledge::{AttrType, Block, Member, NestingMode, Presence, ProviderSchema};

fn schema() -> &'static ProviderSchema {
    ProviderSchema::bundled().expect("the bundled data loads")
}

fn presence(resource: &str, path: &str) -> Presence {
    schema()
        .attribute(resource, path)
        .unwrap_or_else(|| panic!("{resource}.{path} missing"))
        .presence
}

/// The resource types the reconciler must know.
const REQUIRED_TYPES: &[&str] = &[
    "aws_instance",
    "aws_security_group",
    "aws_security_group_rule",
    "aws_vpc_security_group_ingress_rule",
    "aws_vpc_security_group_egress_rule",
    "aws_vpc",
    "aws_subnet",
    "aws_route_table",
    "aws_route",
    "aws_route_table_association",
    "aws_internet_gateway",
    "aws_nat_gateway",
    "aws_eip",
    "aws_ebs_volume",
    "aws_volume_attachment",
    "aws_launch_template",
    "aws_s3_bucket",
    "aws_s3_bucket_versioning",
    "aws_s3_bucket_server_side_encryption_configuration",
    "aws_s3_bucket_policy",
    "aws_s3_bucket_public_access_block",
    "aws_s3_bucket_lifecycle_configuration",
    "aws_s3_bucket_logging",
    "aws_s3_bucket_ownership_controls",
    "aws_iam_role",
    "aws_iam_policy",
    "aws_iam_role_policy",
    "aws_iam_role_policy_attachment",
    "aws_iam_user",
    "aws_iam_user_policy_attachment",
    "aws_iam_instance_profile",
    "aws_iam_group",
    "aws_lambda_function",
    "aws_lambda_permission",
    "aws_lambda_event_source_mapping",
    "aws_db_instance",
    "aws_db_subnet_group",
    "aws_db_parameter_group",
    "aws_rds_cluster",
    "aws_dynamodb_table",
    "aws_lb",
    "aws_lb_target_group",
    "aws_lb_listener",
    "aws_lb_listener_rule",
    "aws_lb_target_group_attachment",
    "aws_autoscaling_group",
    "aws_autoscaling_policy",
    "aws_sns_topic",
    "aws_sns_topic_subscription",
    "aws_sqs_queue",
    "aws_sqs_queue_policy",
    "aws_cloudwatch_metric_alarm",
    "aws_cloudwatch_log_group",
    "aws_kms_key",
    "aws_kms_alias",
    "aws_route53_zone",
    "aws_route53_record",
    "aws_secretsmanager_secret",
    "aws_secretsmanager_secret_version",
    "aws_ssm_parameter",
    "aws_ecs_cluster",
    "aws_ecs_service",
    "aws_ecs_task_definition",
    "aws_ecr_repository",
    "aws_cloudfront_distribution",
    "aws_api_gateway_rest_api",
    "aws_apigatewayv2_api",
    "aws_acm_certificate",
    "aws_elasticache_cluster",
    "aws_efs_file_system",
];

#[test]
fn covers_the_common_resource_types() {
    let schema = schema();
    assert!(schema.resource_types().count() >= 60);
    let missing: Vec<_> = REQUIRED_TYPES
        .iter()
        .filter(|t| schema.resource(t).is_none())
        .collect();
    assert!(missing.is_empty(), "missing: {missing:?}");
    assert_eq!(schema.provider(), "registry.terraform.io/hashicorp/aws");
    assert_eq!(schema.provider_version(), Some("5.100.0"));
}

fn check_block(block: &Block, path: &str, problems: &mut Vec<String>) {
    for (name, nested) in &block.blocks {
        let here = format!("{path}.{name}");
        if nested.nesting == NestingMode::Single
            && (nested.min_items, nested.max_items) != (0, None)
        {
            problems.push(format!("{here}: single block with item limits"));
        }
        if nested
            .max_items
            .is_some_and(|max| max < nested.min_items.max(1))
        {
            problems.push(format!("{here}: max_items below min_items"));
        }
        check_block(&nested.block, &here, problems);
    }
    for (name, attribute) in &block.attributes {
        if attribute.write_only && attribute.presence == Presence::Computed {
            problems.push(format!("{path}.{name}: write-only yet computed"));
        }
    }
}

#[test]
fn every_resource_is_well_formed() {
    let schema = schema();
    let mut problems = Vec::new();
    for name in schema.resource_types() {
        let resource = schema.resource(name).expect("listed type");
        if resource.block.attributes.is_empty() {
            problems.push(format!("{name}: no attributes"));
        }
        check_block(&resource.block, name, &mut problems);
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

// The facts below were checked by hand against the provider's documentation
// (website/docs/r/*.html.markdown in hashicorp/terraform-provider-aws) or its schema source.

/// Docs, aws_security_group: "ingress ... This argument is processed in attribute-as-blocks
/// mode", with from_port, to_port and protocol listed as (Required); egress has the same.
#[test]
fn security_group_ingress_is_a_set_of_rules_with_required_ports_and_protocol() {
    let schema = schema();
    for rules in ["ingress", "egress"] {
        assert!(schema.is_set_block("aws_security_group", rules), "{rules}");
        for field in ["from_port", "to_port", "protocol"] {
            assert_eq!(
                presence("aws_security_group", &format!("{rules}.{field}")),
                Presence::Required
            );
        }
        assert_eq!(
            presence("aws_security_group", &format!("{rules}.description")),
            Presence::Optional
        );
    }
    let from_port = schema
        .attribute("aws_security_group", "ingress.from_port")
        .expect("from_port");
    assert_eq!(from_port.ty, AttrType::Number);
}

/// Docs, aws_security_group_rule: from_port, protocol and security_group_id are (Required).
#[test]
fn security_group_rule_requires_port_protocol_and_group() {
    for field in ["from_port", "protocol", "security_group_id"] {
        assert_eq!(
            presence("aws_security_group_rule", field),
            Presence::Required,
            "{field}"
        );
    }
}

/// Docs, aws_instance: "instance_type - (Optional) Instance type to use for the instance.
/// Required unless launch_template is specified".
#[test]
fn instance_type_is_optional() {
    assert!(presence("aws_instance", "instance_type").is_settable());
    assert_ne!(
        presence("aws_instance", "instance_type"),
        Presence::Required
    );
}

/// Docs, aws_s3_bucket, Attribute Reference: "arn - ARN of the bucket".
#[test]
fn s3_bucket_arn_is_computed() {
    assert!(schema().is_computed_only("aws_s3_bucket", "arn"));
}

/// Provider source, internal/service/rds/instance.go: password is Optional and Sensitive.
#[test]
fn db_instance_password_is_sensitive() {
    let password = schema()
        .attribute("aws_db_instance", "password")
        .expect("password");
    assert!(password.sensitive);
    assert_eq!(password.presence, Presence::Optional);
    assert!(
        !schema()
            .attribute("aws_db_instance", "username")
            .expect("username")
            .sensitive
    );
}

/// Docs, aws_iam_role: "assume_role_policy - (Required) Policy that grants an entity permission
/// to assume the role."
#[test]
fn iam_role_assume_role_policy_is_required() {
    assert_eq!(
        presence("aws_iam_role", "assume_role_policy"),
        Presence::Required
    );
}

/// Provider source, internal/service/autoscaling/group.go: desired_capacity is Optional and
/// Computed, default_cooldown too, while desired_capacity_type is Optional only.
#[test]
fn autoscaling_group_desired_capacity_is_optional_computed() {
    assert!(schema().is_optional_computed("aws_autoscaling_group", "desired_capacity"));
    assert!(schema().is_optional_computed("aws_autoscaling_group", "default_cooldown"));
    assert_eq!(
        presence("aws_autoscaling_group", "desired_capacity_type"),
        Presence::Optional
    );
}

/// Docs, aws_instance: ebs_block_device, "when accessing this as an attribute reference, it is a
/// set of objects", has device_name (Required); root_block_device is "Configuration block".
#[test]
fn instance_block_devices() {
    let schema = schema();
    assert!(schema.is_set_block("aws_instance", "ebs_block_device"));
    assert_eq!(
        presence("aws_instance", "ebs_block_device.device_name"),
        Presence::Required
    );
    let Some(Member::Block(root)) = schema
        .resource("aws_instance")
        .and_then(|r| r.member("root_block_device"))
    else {
        panic!("root_block_device is not a block")
    };
    assert_eq!((root.nesting, root.max_items), (NestingMode::List, Some(1)));
}
