//! Tagging calls for the types `tags::tag_request` leaves to this module: the EC2 network
//! resources (the VPC's default ones, gateways, DHCP options, placement groups and block
//! public access exclusions included), API Gateway, ECS, ECR, IAM instance profiles and OIDC
//! providers, DB and Redshift subnet groups, hosted zones, SSM parameters, listeners, and the
//! platform services.

use super::change::{req, text};
use crate::sim::Request;
use reconciler::terraform::state::Instance;
use serde_json::json;

/// The call that adds the tag `key=value` to `instance`, for the types this module knows.
pub fn tag_request(instance: &Instance, key: &str, value: &str) -> Option<Request> {
    let arn = text(instance, "arn");
    let pair = json!([{"key": key, "value": value}]);
    let map = json!({key: value});
    let request = match instance.resource_type.as_str() {
        "aws_eip"
        | "aws_internet_gateway"
        | "aws_nat_gateway"
        | "aws_network_acl"
        | "aws_vpc_endpoint"
        | "aws_flow_log"
        | "aws_vpn_gateway"
        | "aws_customer_gateway"
        | "aws_egress_only_internet_gateway"
        | "aws_vpc_dhcp_options"
        | "aws_default_vpc"
        | "aws_default_security_group"
        | "aws_default_route_table"
        | "aws_default_network_acl"
        | "aws_vpc_block_public_access_exclusion" => ec2_tags(text(instance, "id"), key, value),
        "aws_placement_group" => ec2_tags(text(instance, "placement_group_id"), key, value),
        "aws_redshift_subnet_group" => req(
            "redshift.amazonaws.com",
            "CreateTags",
            json!({"resourceName": arn, "tags": pair}),
        ),
        "aws_apigatewayv2_api" | "aws_apigatewayv2_stage" => req(
            "apigateway.amazonaws.com",
            "TagResource",
            json!({"resourceArn": arn, "tags": map}),
        ),
        "aws_ecs_cluster" | "aws_ecs_service" | "aws_ecs_task_definition" => req(
            "ecs.amazonaws.com",
            "TagResource",
            json!({"resourceArn": ecs_arn(instance), "tags": pair}),
        ),
        "aws_ecr_repository" => req(
            "ecr.amazonaws.com",
            "TagResource",
            json!({"resourceArn": arn, "tags": pair}),
        ),
        "aws_iam_instance_profile" => req(
            "iam.amazonaws.com",
            "TagInstanceProfile",
            json!({"instanceProfileName": text(instance, "name"), "tags": pair}),
        ),
        "aws_iam_openid_connect_provider" => req(
            "iam.amazonaws.com",
            "TagOpenIDConnectProvider",
            json!({"openIDConnectProviderArn": arn, "tags": pair}),
        ),
        "aws_db_subnet_group" | "aws_rds_cluster" | "aws_db_parameter_group" => req(
            "rds.amazonaws.com",
            "AddTagsToResource",
            json!({"resourceName": arn, "tags": pair}),
        ),
        "aws_route53_zone" => req(
            "route53.amazonaws.com",
            "ChangeTagsForResource",
            json!({"resourceType": "hostedzone", "resourceId": text(instance, "zone_id"), "addTags": pair}),
        ),
        "aws_ssm_parameter" => req(
            "ssm.amazonaws.com",
            "AddTagsToResource",
            json!({"resourceType": "Parameter", "resourceId": text(instance, "name"), "tags": pair}),
        ),
        "aws_lb_listener" => req(
            "elasticloadbalancing.amazonaws.com",
            "AddTags",
            json!({"resourceArns": [arn], "tags": pair}),
        ),
        "aws_eks_cluster" | "aws_eks_node_group" | "aws_eks_addon" | "aws_eks_access_entry" => {
            let arn = match instance.resource_type.as_str() {
                "aws_eks_access_entry" => text(instance, "access_entry_arn"),
                _ => arn,
            };
            req(
                "eks.amazonaws.com",
                "TagResource",
                json!({"resourceArn": arn, "tags": map}),
            )
        }
        "aws_elasticache_replication_group" | "aws_elasticache_subnet_group" => req(
            "elasticache.amazonaws.com",
            "AddTagsToResource",
            json!({"resourceName": arn, "tags": pair}),
        ),
        "aws_wafv2_web_acl" | "aws_wafv2_ip_set" => req(
            "wafv2.amazonaws.com",
            "TagResource",
            json!({"resourceARN": arn, "tags": [{"key": key, "value": value}]}),
        ),
        _ => return None,
    };
    Some(request)
}

/// EC2's CreateTags of `key=value` on the resource `id`.
fn ec2_tags(id: &str, key: &str, value: &str) -> Request {
    req(
        "ec2.amazonaws.com",
        "CreateTags",
        json!({
        "resourcesSet": {"items": [{"resourceId": id}]},
        "tagSet": {"items": [{"key": key, "value": value}]}}),
    )
}

/// The ARN ECS names a resource by: a service's is its `id`, the others keep theirs in `arn`.
fn ecs_arn(instance: &Instance) -> &str {
    match text(instance, "arn") {
        "" => text(instance, "id"),
        arn => arn,
    }
}
