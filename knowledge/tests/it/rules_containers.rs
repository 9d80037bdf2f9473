//! Extraction by the ECS, ECR, API Gateway v2 and ELBv2 attribute rules, on records shaped
//! like real CloudTrail: request members as the AWS API references name them, in the
//! lowerCamelCase CloudTrail logs. Every expected value was worked out by hand from the record
//! and the Terraform provider's documented attribute for each parameter.

use knowledge::{FlagLevel, Kind, Missing, Risk, RuleSet, TagOp};
use serde_json::{Value, json};

use crate::common;
use common::{extract, flagged};

fn sets(pairs: &[(&str, Value)]) -> Vec<(String, Value)> {
    pairs
        .iter()
        .map(|(name, value)| ((*name).to_owned(), value.clone()))
        .collect()
}

const ECS: &str = "ecs.amazonaws.com";
const ECR: &str = "ecr.amazonaws.com";
const ELB: &str = "elasticloadbalancing.amazonaws.com";
const APIGW: &str = "apigateway.amazonaws.com";

const SERVICE_ARN: &str = "arn:aws:ecs:eu-west-1:111122223333:service/prod/web";
const CLUSTER_ARN: &str = "arn:aws:ecs:eu-west-1:111122223333:cluster/prod";

#[test]
fn ecs_update_service_scales_and_redeploys() {
    let request = json!({
        "cluster": "prod",
        "service": "web",
        "desiredCount": 0,
        "taskDefinition": "web:42",
        "forceNewDeployment": false,
        "enableExecuteCommand": true,
        "healthCheckGracePeriodSeconds": 60,
        "deploymentConfiguration": {
            "maximumPercent": 200,
            "minimumHealthyPercent": 50,
            "deploymentCircuitBreaker": {"enable": true, "rollback": false}
        },
        "networkConfiguration": {"awsvpcConfiguration": {
            "subnets": ["subnet-b", "subnet-a"],
            "securityGroups": ["sg-1"],
            "assignPublicIp": "ENABLED"
        }}
    });
    let response = json!({"service": {
        "serviceArn": SERVICE_ARN, "serviceName": "web", "clusterArn": CLUSTER_ARN,
        "desiredCount": 0, "runningCount": 2
    }});
    let x = extract(ECS, "UpdateService", request, response);
    assert_eq!(x.rule_id, "ecs:UpdateService");
    assert_eq!(x.kind, Kind::Update);
    assert_eq!(x.identities(), vec![SERVICE_ARN]);
    assert_eq!(
        x.targets[0].resource_types.first().map(String::as_str),
        Some("aws_ecs_service")
    );
    assert_eq!(
        x.sets,
        sets(&[
            ("desired_count", json!(0)),
            ("task_definition", json!("web:42")),
            ("enable_execute_command", json!(true)),
            ("health_check_grace_period_seconds", json!(60)),
            ("deployment_maximum_percent", json!(200)),
            ("deployment_minimum_healthy_percent", json!(50)),
            ("deployment_circuit_breaker.enable", json!(true)),
            ("deployment_circuit_breaker.rollback", json!(false)),
            (
                "network_configuration.subnets",
                json!(["subnet-a", "subnet-b"])
            ),
            ("network_configuration.security_groups", json!(["sg-1"])),
            ("network_configuration.assign_public_ip", json!(true)),
        ])
    );
    assert_eq!(
        flagged(&x),
        vec![
            "desired_count",
            "task_definition",
            "enable_execute_command",
            "network_configuration.assign_public_ip",
            "network_configuration.security_groups",
        ]
    );
}

#[test]
fn ecs_update_service_scale_only_is_not_flagged() {
    let x = extract(
        ECS,
        "UpdateService",
        json!({"cluster": CLUSTER_ARN, "service": SERVICE_ARN, "desiredCount": 3}),
        json!({"service": {"serviceArn": SERVICE_ARN}}),
    );
    assert_eq!(x.sets, sets(&[("desired_count", json!(3))]));
    assert!(x.flags.is_empty(), "{:?}", x.flags);
}

#[test]
fn ecs_update_service_needs_the_response_for_its_arn() {
    let rule = RuleSet::bundled()
        .expect("rules load")
        .find(ECS, "UpdateService")
        .expect("rule");
    let err = rule
        .extract(Some(&json!({"service": "web", "desiredCount": 1})), None)
        .expect_err("no identity without the response");
    assert!(err.to_string().contains("service.serviceArn"), "{err}");
}

#[test]
fn ecs_cluster_settings_pick_container_insights() {
    let request = json!({
        "cluster": "prod",
        "settings": [{"name": "containerInsights", "value": "disabled"}]
    });
    let response = json!({"cluster": {"clusterArn": CLUSTER_ARN, "clusterName": "prod"}});
    for api in ["UpdateClusterSettings", "UpdateCluster"] {
        let x = extract(ECS, api, request.clone(), response.clone());
        assert_eq!(x.identities(), vec![CLUSTER_ARN]);
        assert_eq!(
            x.sets,
            sets(&[
                ("setting.name", json!("containerInsights")),
                ("setting.value", json!("disabled")),
            ]),
            "{api}"
        );
        assert_eq!(flagged(&x), vec!["setting.value"], "{api}");
    }
}

#[test]
fn ecs_update_cluster_execute_command_logging() {
    let request = json!({
        "cluster": "prod",
        "configuration": {"executeCommandConfiguration": {
            "logging": "OVERRIDE",
            "logConfiguration": {
                "cloudWatchLogGroupName": "/ecs/exec",
                "cloudWatchEncryptionEnabled": true
            }
        }}
    });
    let x = extract(
        ECS,
        "UpdateCluster",
        request,
        json!({"cluster": {"clusterArn": CLUSTER_ARN}}),
    );
    assert_eq!(
        x.sets,
        sets(&[
            (
                "configuration.execute_command_configuration.logging",
                json!("OVERRIDE")
            ),
            (
                "configuration.execute_command_configuration.log_configuration.cloud_watch_log_group_name",
                json!("/ecs/exec")
            ),
            (
                "configuration.execute_command_configuration.log_configuration.cloud_watch_encryption_enabled",
                json!(true)
            ),
        ])
    );
    assert!(x.flags.is_empty());
}

#[test]
fn ecs_create_and_delete_service() {
    let request = json!({
        "cluster": "prod",
        "serviceName": "worker",
        "taskDefinition": "worker:1",
        "desiredCount": 2,
        "launchType": "FARGATE",
        "networkConfiguration": {"awsvpcConfiguration": {
            "subnets": ["subnet-a"], "assignPublicIp": "DISABLED"
        }},
        "tags": [{"key": "team", "value": "ops"}]
    });
    let arn = "arn:aws:ecs:eu-west-1:111122223333:service/prod/worker";
    let response = json!({"service": {"serviceArn": arn, "clusterArn": CLUSTER_ARN}});
    let x = extract(ECS, "CreateService", request, response.clone());
    assert_eq!(x.kind, Kind::Create);
    assert_eq!(x.identities(), vec![arn]);
    assert_eq!(
        x.sets,
        sets(&[
            ("name", json!("worker")),
            ("cluster", json!(CLUSTER_ARN)),
            ("task_definition", json!("worker:1")),
            ("desired_count", json!(2)),
            ("launch_type", json!("FARGATE")),
            ("network_configuration.subnets", json!(["subnet-a"])),
            ("network_configuration.assign_public_ip", json!(false)),
            ("tags", json!({"team": "ops"})),
        ])
    );
    assert!(x.flags.is_empty());

    let x = extract(
        ECS,
        "DeleteService",
        json!({"cluster": "prod", "service": "worker", "force": true}),
        response,
    );
    assert_eq!((x.kind, x.risk), (Kind::Delete, Risk::High));
    assert_eq!(x.identities(), vec![arn]);
}

#[test]
fn ecs_tags_by_arn_of_any_container_resource() {
    let task_definition = "arn:aws:ecs:eu-west-1:111122223333:task-definition/web:42";
    let x = extract(
        ECS,
        "TagResource",
        json!({"resourceArn": task_definition,
               "tags": [{"key": "owner", "value": "alice"}, {"key": "env", "value": "prod"}]}),
        Value::Null,
    );
    assert_eq!(x.identities(), vec![task_definition]);
    // Several types may hold the ARN; the reconciler finds the one whose `arn` it is.
    assert!(x.targets[0].resource_types.is_empty());
    assert_eq!(
        x.resource_types,
        vec![
            "aws_ecs_cluster",
            "aws_ecs_service",
            "aws_ecs_task_definition"
        ]
    );
    let tags = x.tags.expect("tags");
    assert_eq!(tags.op, TagOp::Merge);
    assert_eq!(
        tags.added.into_iter().collect::<Vec<_>>(),
        vec![
            ("env".to_owned(), "prod".to_owned()),
            ("owner".to_owned(), "alice".to_owned())
        ]
    );

    let x = extract(
        ECS,
        "UntagResource",
        json!({"resourceArn": CLUSTER_ARN, "tagKeys": ["owner"]}),
        Value::Null,
    );
    let tags = x.tags.expect("tags");
    assert_eq!(
        (tags.op, tags.removed),
        (TagOp::Remove, vec!["owner".to_owned()])
    );
}

#[test]
fn ecr_tag_mutability_and_scanning_flags() {
    let x = extract(
        ECR,
        "PutImageTagMutability",
        json!({"repositoryName": "web", "imageTagMutability": "MUTABLE"}),
        json!({"repositoryName": "web", "registryId": "111122223333", "imageTagMutability": "MUTABLE"}),
    );
    assert_eq!(x.identities(), vec!["web"]);
    assert_eq!(x.risk, Risk::Medium);
    assert_eq!(x.sets, sets(&[("image_tag_mutability", json!("MUTABLE"))]));
    assert_eq!(flagged(&x), vec!["image_tag_mutability"]);
    assert_eq!(x.flags[0].level, FlagLevel::Warn);

    let x = extract(
        ECR,
        "PutImageTagMutability",
        json!({"repositoryName": "web", "imageTagMutability": "IMMUTABLE"}),
        Value::Null,
    );
    assert!(x.flags.is_empty());

    let x = extract(
        ECR,
        "PutImageScanningConfiguration",
        json!({"repositoryName": "web", "imageScanningConfiguration": {"scanOnPush": false}}),
        Value::Null,
    );
    assert_eq!(
        x.sets,
        sets(&[("image_scanning_configuration.scan_on_push", json!(false))])
    );
    assert_eq!(
        flagged(&x),
        vec!["image_scanning_configuration.scan_on_push"]
    );
    assert_eq!(x.flags[0].level, FlagLevel::Warn);
}

#[test]
fn ecr_lifecycle_policy_is_a_json_document() {
    let text = r#"{"rules":[{"rulePriority":1,"selection":{"tagStatus":"untagged","countType":"sinceImagePushed","countUnit":"days","countNumber":14},"action":{"type":"expire"}}]}"#;
    let x = extract(
        ECR,
        "PutLifecyclePolicy",
        json!({"repositoryName": "web", "lifecyclePolicyText": text}),
        Value::Null,
    );
    assert_eq!(x.identities(), vec!["web"]);
    assert_eq!(
        x.targets[0].resource_types.first().map(String::as_str),
        Some("aws_ecr_lifecycle_policy")
    );
    assert_eq!(x.missing, Some(Missing::Create));
    assert_eq!(x.value("repository"), Some(&json!("web")));
    assert_eq!(
        x.value("policy"),
        Some(&json!({"rules": [{
            "rulePriority": 1,
            "selection": {"tagStatus": "untagged", "countType": "sinceImagePushed",
                          "countUnit": "days", "countNumber": 14},
            "action": {"type": "expire"}
        }]}))
    );

    let x = extract(
        ECR,
        "DeleteLifecyclePolicy",
        json!({"repositoryName": "web"}),
        Value::Null,
    );
    assert_eq!(x.kind, Kind::Delete);
    assert_eq!(x.identities(), vec!["web"]);
}

#[test]
fn ecr_create_repository_and_tags() {
    let x = extract(
        ECR,
        "CreateRepository",
        json!({
            "repositoryName": "api",
            "imageTagMutability": "IMMUTABLE",
            "imageScanningConfiguration": {"scanOnPush": true},
            "encryptionConfiguration": {"encryptionType": "KMS"},
            "tags": [{"Key": "team", "Value": "core"}]
        }),
        Value::Null,
    );
    assert_eq!(
        x.sets,
        sets(&[
            ("name", json!("api")),
            ("image_tag_mutability", json!("IMMUTABLE")),
            ("image_scanning_configuration.scan_on_push", json!(true)),
            ("encryption_configuration.encryption_type", json!("KMS")),
            ("tags", json!({"team": "core"})),
        ])
    );

    let arn = "arn:aws:ecr:eu-west-1:111122223333:repository/api";
    let x = extract(
        ECR,
        "TagResource",
        json!({"resourceArn": arn, "tags": [{"Key": "env", "Value": "dev"}]}),
        Value::Null,
    );
    assert_eq!(x.identities(), vec![arn]);
    let tags = x.tags.expect("tags");
    assert_eq!(tags.added.get("env").map(String::as_str), Some("dev"));
}

const LB_ARN: &str =
    "arn:aws:elasticloadbalancing:eu-west-1:111122223333:loadbalancer/app/web/50dc6c495c0c9188";

#[test]
fn elb_load_balancer_attributes_by_key() {
    let request = json!({
        "loadBalancerArn": LB_ARN,
        "attributes": [
            {"key": "idle_timeout.timeout_seconds", "value": "120"},
            {"key": "deletion_protection.enabled", "value": "false"},
            {"key": "routing.http2.enabled", "value": "true"},
            {"key": "access_logs.s3.enabled", "value": "false"},
            {"key": "access_logs.s3.bucket", "value": ""},
            {"key": "routing.http.drop_invalid_header_fields.enabled", "value": "true"}
        ]
    });
    let x = extract(
        ELB,
        "ModifyLoadBalancerAttributes",
        request.clone(),
        json!({"attributes": request["attributes"].clone()}),
    );
    assert_eq!(x.identities(), vec![LB_ARN]);
    assert_eq!(
        x.targets[0].resource_types.first().map(String::as_str),
        Some("aws_lb")
    );
    // Rule order, not record order; keys the record lacks are left out.
    assert_eq!(
        x.sets,
        sets(&[
            ("idle_timeout", json!(120)),
            ("enable_deletion_protection", json!(false)),
            ("enable_http2", json!(true)),
            ("drop_invalid_header_fields", json!(true)),
            ("access_logs.enabled", json!(false)),
            ("access_logs.bucket", json!("")),
        ])
    );
    assert_eq!(
        flagged(&x),
        vec!["enable_deletion_protection", "access_logs.enabled"]
    );
}

#[test]
fn elb_attributes_turning_protection_on_are_not_flagged() {
    let x = extract(
        ELB,
        "ModifyLoadBalancerAttributes",
        json!({"loadBalancerArn": LB_ARN, "attributes": [
            {"key": "deletion_protection.enabled", "value": "true"},
            {"key": "access_logs.s3.enabled", "value": "true"},
            {"key": "access_logs.s3.bucket", "value": "lb-logs"},
            {"key": "access_logs.s3.prefix", "value": "web"}
        ]}),
        Value::Null,
    );
    assert_eq!(
        x.sets,
        sets(&[
            ("enable_deletion_protection", json!(true)),
            ("access_logs.enabled", json!(true)),
            ("access_logs.bucket", json!("lb-logs")),
            ("access_logs.prefix", json!("web")),
        ])
    );
    assert!(x.flags.is_empty());
}

#[test]
fn elb_target_group_attributes_by_key() {
    let arn =
        "arn:aws:elasticloadbalancing:eu-west-1:111122223333:targetgroup/web/73e2d6bc24d8a067";
    let x = extract(
        ELB,
        "ModifyTargetGroupAttributes",
        json!({"targetGroupArn": arn, "attributes": [
            {"key": "deregistration_delay.timeout_seconds", "value": "30"},
            {"key": "stickiness.enabled", "value": "true"},
            {"key": "stickiness.type", "value": "app_cookie"},
            {"key": "stickiness.app_cookie.cookie_name", "value": "SESSION"},
            {"key": "stickiness.app_cookie.duration_seconds", "value": "3600"},
            {"key": "slow_start.duration_seconds", "value": "45"}
        ]}),
        Value::Null,
    );
    assert_eq!(x.identities(), vec![arn]);
    assert_eq!(
        x.sets,
        sets(&[
            // The provider holds the delay as a string.
            ("deregistration_delay", json!("30")),
            ("slow_start", json!(45)),
            ("stickiness.enabled", json!(true)),
            ("stickiness.type", json!("app_cookie")),
            // The app cookie's duration has no attribute: cookie_duration is lb_cookie's.
            ("stickiness.cookie_name", json!("SESSION")),
        ])
    );
    let x = extract(
        ELB,
        "ModifyTargetGroupAttributes",
        json!({"targetGroupArn": arn, "attributes": [
            {"key": "stickiness.type", "value": "lb_cookie"},
            {"key": "stickiness.lb_cookie.duration_seconds", "value": "86400"}
        ]}),
        Value::Null,
    );
    assert_eq!(
        x.sets,
        sets(&[
            ("stickiness.type", json!("lb_cookie")),
            ("stickiness.cookie_duration", json!(86400)),
        ])
    );
}

#[test]
fn apigatewayv2_stage_throttling_and_access_logs() {
    let x = extract(
        APIGW,
        "UpdateStage",
        json!({
            "apiId": "a1b2c3",
            "stageName": "$default",
            "autoDeploy": true,
            "accessLogSettings": {
                "destinationArn": "arn:aws:logs:eu-west-1:111122223333:log-group:api-access",
                "format": "$context.requestId"
            },
            "defaultRouteSettings": {
                "throttlingBurstLimit": 50,
                "throttlingRateLimit": 25.5,
                "dataTraceEnabled": true
            }
        }),
        Value::Null,
    );
    assert_eq!(x.identities(), vec!["$default"]);
    assert_eq!(
        x.targets[0].resource_types.first().map(String::as_str),
        Some("aws_apigatewayv2_stage")
    );
    assert_eq!(
        x.sets,
        sets(&[
            ("auto_deploy", json!(true)),
            (
                "access_log_settings.destination_arn",
                json!("arn:aws:logs:eu-west-1:111122223333:log-group:api-access")
            ),
            ("access_log_settings.format", json!("$context.requestId")),
            ("default_route_settings.throttling_burst_limit", json!(50)),
            ("default_route_settings.throttling_rate_limit", json!(25.5)),
            ("default_route_settings.data_trace_enabled", json!(true)),
        ])
    );
    assert_eq!(
        flagged(&x),
        vec!["default_route_settings.data_trace_enabled"]
    );
}

#[test]
fn api_gateway_rest_and_http_stage_updates_are_told_apart() {
    // Both API versions log UpdateStage under one event source: a REST call names
    // `restApiId` and sends JSON Patch operations, an HTTP API call names `apiId`.
    let v1 = json!({"restApiId": "r1", "stageName": "prod",
                    "patchOperations": [{"op": "replace", "path": "/tracingEnabled", "value": "true"}]});
    let x = extract(APIGW, "UpdateStage", v1, Value::Null);
    assert_eq!(x.rule_id, "apigateway:UpdateStage");
    assert_eq!(x.identities(), vec!["r1/prod"]);
    assert_eq!(x.sets, sets(&[("xray_tracing_enabled", json!(true))]));
    let v2 = json!({"apiId": "a1", "stageName": "prod", "autoDeploy": false});
    let x = extract(APIGW, "UpdateStage", v2, Value::Null);
    assert_eq!(x.rule_id, "apigatewayv2:UpdateStage");
    assert_eq!(x.identities(), vec!["prod"]);
    assert_eq!(x.sets, sets(&[("auto_deploy", json!(false))]));
    let neither = json!({"stageName": "prod"});
    assert!(
        RuleSet::bundled()
            .expect("rules load")
            .find_for(APIGW, "UpdateStage", Some(&neither), None)
            .is_none()
    );
}

#[test]
fn apigatewayv2_api_cors_and_route_auth() {
    let x = extract(
        APIGW,
        "UpdateApi",
        json!({"apiId": "a1b2c3", "description": "public api", "corsConfiguration": {
            "allowOrigins": ["https://b.example", "*"],
            "allowMethods": ["GET", "POST"],
            "maxAge": 300
        }}),
        Value::Null,
    );
    assert_eq!(x.identities(), vec!["a1b2c3"]);
    assert_eq!(
        x.sets,
        sets(&[
            ("description", json!("public api")),
            ("cors_configuration.allow_methods", json!(["GET", "POST"])),
            (
                "cors_configuration.allow_origins",
                json!(["*", "https://b.example"])
            ),
            ("cors_configuration.max_age", json!(300)),
        ])
    );
    assert_eq!(flagged(&x), vec!["cors_configuration.allow_origins"]);

    let x = extract(
        APIGW,
        "UpdateRoute",
        json!({"apiId": "a1b2c3", "routeId": "r9x", "authorizationType": "NONE"}),
        Value::Null,
    );
    assert_eq!(x.identities(), vec!["r9x"]);
    assert_eq!(x.sets, sets(&[("authorization_type", json!("NONE"))]));
    assert_eq!(flagged(&x), vec!["authorization_type"]);
}

#[test]
fn apigatewayv2_integration_timeout() {
    let x = extract(
        APIGW,
        "UpdateIntegration",
        json!({"apiId": "a1b2c3", "integrationId": "i7k", "timeoutInMillis": 15000}),
        Value::Null,
    );
    assert_eq!(x.identities(), vec!["i7k"]);
    assert_eq!(
        x.targets[0].resource_types.first().map(String::as_str),
        Some("aws_apigatewayv2_integration")
    );
    assert_eq!(x.sets, sets(&[("timeout_milliseconds", json!(15000))]));
    assert!(x.flags.is_empty());
}

#[test]
fn apigatewayv2_tags_by_arn() {
    let arn = "arn:aws:apigateway:eu-west-1::/apis/a1b2c3";
    let x = extract(
        APIGW,
        "TagResource",
        json!({"resourceArn": arn, "tags": {"env": "prod"}}),
        Value::Null,
    );
    assert_eq!(x.identities(), vec![arn]);
    let tags = x.tags.expect("tags");
    assert_eq!(tags.added.get("env").map(String::as_str), Some("prod"));
    let x = extract(
        APIGW,
        "UntagResource",
        json!({"resourceArn": arn, "tagKeys": ["env", "team"]}),
        Value::Null,
    );
    assert_eq!(
        x.tags.expect("tags").removed,
        vec!["env".to_owned(), "team".to_owned()]
    );
}
