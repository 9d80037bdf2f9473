//! Changes to the configuration resources around compute, containers, messaging and the
//! network: scaling policies, DB subnet groups, ECR lifecycle policies, ECS cluster settings,
//! Lambda event source mappings and permissions, listeners and their rules, KMS aliases,
//! SNS subscriptions and route table associations.

use super::change::{Change, Kind, block, int, req, text};
use crate::sim::Request;
use reconciler::terraform::state::Instance;
use serde_json::{Value, json};

/// The changes that apply to one instance.
pub fn changes(instance: &Instance, all: &[Instance]) -> Vec<Change> {
    let one = |c: Option<Change>| c.into_iter().collect::<Vec<_>>();
    match instance.resource_type.as_str() {
        "aws_autoscaling_policy" => one(scaling_target(instance)),
        "aws_db_subnet_group" => vec![subnet_group(instance)],
        "aws_ecr_lifecycle_policy" => lifecycle_policy(instance),
        "aws_ecs_cluster" => one(container_insights(instance)),
        "aws_lambda_event_source_mapping" => one(batch_size(instance)),
        "aws_lambda_permission" => vec![remove_permission(instance)],
        "aws_lb_listener" => one(listener_port(instance)),
        "aws_lb_listener_rule" => one(rule_target(instance, all)),
        "aws_kms_alias" => vec![delete(
            instance,
            "kms-alias-delete",
            format!("deleted KMS alias {}", text(instance, "name")),
            req(
                "kms.amazonaws.com",
                "DeleteAlias",
                json!({"aliasName": text(instance, "name")}),
            ),
        )],
        "aws_sns_topic_subscription" => one(unsubscribe(instance)),
        "aws_route_table_association" => vec![delete(
            instance,
            "route-table-disassociate",
            format!(
                "disassociated route table {} from {}",
                text(instance, "route_table_id"),
                text(instance, "subnet_id")
            ),
            req(
                "ec2.amazonaws.com",
                "DisassociateRouteTable",
                json!({"associationId": text(instance, "id")}),
            ),
        )],
        _ => Vec::new(),
    }
}

/// A deletion of `instance` by one call.
fn delete(instance: &Instance, name: &'static str, what: String, call: Request) -> Change {
    Change::modify(name, instance, what, &[], vec![call]).kind(Kind::Delete)
}

/// A number as AWS answers it: whole values without a fraction.
fn number(value: f64) -> Value {
    match value.fract() == 0.0 {
        true => json!(value as i64),
        false => json!(value),
    }
}

/// A target tracking policy's target moved by ten points (down when it is above 80).
fn scaling_target(instance: &Instance) -> Option<Change> {
    if text(instance, "policy_type") != "TargetTrackingScaling" {
        return None;
    }
    let tracking = block(instance, "target_tracking_configuration");
    let metric = tracking
        .pointer("/predefined_metric_specification/0/predefined_metric_type")?
        .as_str()?;
    let current = tracking.get("target_value")?.as_f64()?;
    let new = if current > 80.0 {
        current - 10.0
    } else {
        current + 10.0
    };
    let call = |target: f64| {
        req(
            "autoscaling.amazonaws.com",
            "PutScalingPolicy",
            json!({
                "autoScalingGroupName": text(instance, "autoscaling_group_name"),
                "policyName": text(instance, "name"),
                "policyType": "TargetTrackingScaling",
                "targetTrackingConfiguration": {
                    "predefinedMetricSpecification": {"predefinedMetricType": metric},
                    "targetValue": number(target),
                    "disableScaleIn": tracking.get("disable_scale_in").cloned().unwrap_or(json!(false)),
                },
            }),
        )
    };
    Some(
        Change::modify(
            "scaling-target",
            instance,
            format!(
                "moved the target of scaling policy {} from {current} to {new}",
                text(instance, "name")
            ),
            &["target_tracking_configuration.0.target_value"],
            vec![call(new)],
        )
        .undo(vec![call(current)]),
    )
}

/// A DB subnet group's description reworded.
fn subnet_group(instance: &Instance) -> Change {
    let name = text(instance, "name");
    let current = text(instance, "description");
    let new = format!("{current} (reviewed by the DBA team)");
    let subnets = instance.attributes.get("subnet_ids").cloned();
    let call = |d: &str| {
        req(
            "rds.amazonaws.com",
            "ModifyDBSubnetGroup",
            json!({"dBSubnetGroupName": name, "dBSubnetGroupDescription": d, "subnetIds": subnets}),
        )
    };
    Change::modify(
        "db-subnet-group-description",
        instance,
        format!("reworded the description of DB subnet group {name}"),
        &["description"],
        vec![call(&new)],
    )
    .undo(vec![call(current)])
}

/// An ECR lifecycle policy keeping twice as many images, and its deletion.
fn lifecycle_policy(instance: &Instance) -> Vec<Change> {
    let repository = text(instance, "repository");
    let mut out = vec![delete(
        instance,
        "ecr-lifecycle-delete",
        format!("deleted the lifecycle policy of repository {repository}"),
        req(
            "ecr.amazonaws.com",
            "DeleteLifecyclePolicy",
            json!({"repositoryName": repository}),
        ),
    )];
    let Ok(mut policy) = serde_json::from_str::<Value>(text(instance, "policy")) else {
        return out;
    };
    let kept = policy["rules"].as_array_mut().and_then(|rules| {
        rules
            .iter_mut()
            .find(|r| r["selection"]["countType"] == "imageCountMoreThan")
    });
    let Some(rule) = kept else { return out };
    let Some(count) = rule["selection"]["countNumber"].as_i64() else {
        return out;
    };
    rule["selection"]["countNumber"] = json!(count * 2);
    let call = |text: String| {
        req(
            "ecr.amazonaws.com",
            "PutLifecyclePolicy",
            json!({"repositoryName": repository, "lifecyclePolicyText": text}),
        )
    };
    out.push(
        Change::modify(
            "ecr-lifecycle-keep",
            instance,
            format!(
                "made repository {repository} keep {} images instead of {count}",
                count * 2
            ),
            &["policy"],
            vec![call(crate::sim::canonical_json(&policy))],
        )
        .undo(vec![call(text(instance, "policy").to_owned())]),
    );
    out
}

/// Container Insights switched on or off.
fn container_insights(instance: &Instance) -> Option<Change> {
    let settings = instance.attributes.get("setting")?.as_array()?;
    let current = settings
        .iter()
        .find(|s| s["name"] == "containerInsights")
        .and_then(|s| s["value"].as_str())
        .unwrap_or("disabled");
    let new = if current == "disabled" {
        "enabled"
    } else {
        "disabled"
    };
    let name = text(instance, "name");
    let call = |v: &str| {
        req(
            "ecs.amazonaws.com",
            "UpdateClusterSettings",
            json!({"cluster": name, "settings": [{"name": "containerInsights", "value": v}]}),
        )
    };
    Some(
        Change::modify(
            "ecs-container-insights",
            instance,
            format!("set Container Insights of cluster {name} to {new}"),
            &["setting"],
            vec![call(new)],
        )
        .undo(vec![call(current)]),
    )
}

/// An event source mapping's batch size doubled (SQS allows up to 10,000 with a window).
fn batch_size(instance: &Instance) -> Option<Change> {
    let current = int(instance, "batch_size")?;
    let windowed = int(instance, "maximum_batching_window_in_seconds").unwrap_or(0) > 0;
    let limit = if windowed { 10_000 } else { 10 };
    let new = (current * 2).min(limit);
    if new == current {
        return None;
    }
    let uuid = text(instance, "uuid");
    let call = |n: i64| {
        req(
            "lambda.amazonaws.com",
            "UpdateEventSourceMapping",
            json!({"uUID": uuid, "batchSize": n}),
        )
    };
    Some(
        Change::modify(
            "esm-batch-size",
            instance,
            format!(
                "raised the batch size of the event source mapping of {} from {current} to {new}",
                text(instance, "function_name")
            ),
            &["batch_size"],
            vec![call(new)],
        )
        .undo(vec![call(current)]),
    )
}

/// A statement removed from a function's resource policy.
fn remove_permission(instance: &Instance) -> Change {
    let function = text(instance, "function_name");
    let statement = text(instance, "statement_id");
    delete(
        instance,
        "lambda-remove-permission",
        format!("removed permission {statement} from function {function}"),
        req(
            "lambda.amazonaws.com",
            "RemovePermission",
            json!({"functionName": function, "statementId": statement}),
        ),
    )
}

/// An HTTP listener moved from port 80 to 8080 (or back).
fn listener_port(instance: &Instance) -> Option<Change> {
    if text(instance, "protocol") != "HTTP" {
        return None;
    }
    let current = int(instance, "port")?;
    let new = if current == 8080 { 80 } else { 8080 };
    let arn = text(instance, "arn");
    let call = |port: i64| {
        req(
            "elasticloadbalancing.amazonaws.com",
            "ModifyListener",
            json!({"listenerArn": arn, "port": port}),
        )
    };
    Some(
        Change::modify(
            "listener-port",
            instance,
            format!("moved a listener from port {current} to {new}"),
            &["port"],
            vec![call(new)],
        )
        .undo(vec![call(current)]),
    )
}

/// A forwarding listener rule pointed at another target group of the account.
fn rule_target(instance: &Instance, all: &[Instance]) -> Option<Change> {
    let action = block(instance, "action");
    if action["type"] != "forward" {
        return None;
    }
    let current = action["target_group_arn"].as_str()?;
    let other = all
        .iter()
        .filter(|i| i.resource_type == "aws_lb_target_group")
        .map(|i| text(i, "arn"))
        .find(|arn| !arn.is_empty() && *arn != current)?;
    let arn = text(instance, "arn");
    let call = |target: &str| {
        req(
            "elasticloadbalancing.amazonaws.com",
            "ModifyRule",
            json!({"ruleArn": arn, "actions": [{"type": "forward", "targetGroupArn": target}]}),
        )
    };
    Some(
        Change::modify(
            "listener-rule-target",
            instance,
            format!("sent a listener rule's traffic to {other}"),
            &["action"],
            vec![call(other)],
        )
        .undo(vec![call(current)]),
    )
}

/// An SNS subscription removed (pending email confirmations have no ARN to remove by).
fn unsubscribe(instance: &Instance) -> Option<Change> {
    if instance.attributes.get("pending_confirmation") == Some(&json!(true)) {
        return None;
    }
    Some(delete(
        instance,
        "sns-unsubscribe",
        format!(
            "unsubscribed {} from {}",
            text(instance, "endpoint"),
            text(instance, "topic_arn")
        ),
        req(
            "sns.amazonaws.com",
            "Unsubscribe",
            json!({"subscriptionArn": text(instance, "arn")}),
        ),
    ))
}
