//! Changes to compute, databases and load balancing: Auto Scaling, launch templates, Lambda,
//! ECS, ECR, RDS, DynamoDB and ELBv2.

use super::change::{Change, block, flag, int, next_in, next_size, req, text};
use crate::sim::Request;
use reconciler::terraform::state::Instance;
use serde_json::{Value, json};

/// The changes that apply to one instance.
pub fn changes(instance: &Instance) -> Vec<Change> {
    match instance.resource_type.as_str() {
        "aws_autoscaling_group" => autoscaling(instance),
        "aws_launch_template" => launch_template(instance).into_iter().collect(),
        "aws_lambda_function" => lambda(instance),
        "aws_ecs_service" => ecs_service(instance).into_iter().collect(),
        "aws_ecr_repository" => ecr(instance),
        "aws_db_instance" => rds(instance),
        "aws_dynamodb_table" => dynamodb(instance),
        "aws_lb" => load_balancer(instance),
        "aws_lb_target_group" => target_group(instance),
        _ => Vec::new(),
    }
}

fn autoscaling(instance: &Instance) -> Vec<Change> {
    let name = text(instance, "name");
    let (min, max, desired) = (
        int(instance, "min_size").unwrap_or(1),
        int(instance, "max_size").unwrap_or(1),
        int(instance, "desired_capacity").unwrap_or(1),
    );
    let call = |api: &str, p: Value| {
        let mut p = p;
        p["autoScalingGroupName"] = json!(name);
        req("autoscaling.amazonaws.com", api, p)
    };
    let restore = call(
        "UpdateAutoScalingGroup",
        json!({"minSize": min, "maxSize": max, "desiredCapacity": desired}),
    );
    vec![
        Change::modify(
            "asg-resize",
            instance,
            format!(
                "raised {name} to min {} / max {} / desired {}",
                min + 1,
                max + 2,
                desired + 1
            ),
            &["min_size", "max_size"],
            vec![call(
                "UpdateAutoScalingGroup",
                json!({"minSize": min + 1, "maxSize": max + 2, "desiredCapacity": desired + 1}),
            )],
        )
        .undo(vec![restore.clone()])
        .owned(&["desired_capacity"]),
        Change::modify(
            "asg-set-desired",
            instance,
            format!(
                "set the desired capacity of {name} to {}",
                (desired + 1).min(max)
            ),
            &[],
            vec![call(
                "SetDesiredCapacity",
                json!({"desiredCapacity": (desired + 1).min(max), "honorCooldown": false}),
            )],
        )
        .undo(vec![call(
            "SetDesiredCapacity",
            json!({"desiredCapacity": desired, "honorCooldown": false}),
        )])
        .owned(&["desired_capacity"]),
    ]
    .into_iter()
    .filter(|c| !(c.name == "asg-set-desired" && desired >= max))
    .collect()
}

/// A new template version with the next instance size, made the default.
fn launch_template(instance: &Instance) -> Option<Change> {
    let id = text(instance, "id");
    let size = next_size(text(instance, "instance_type"))?;
    let latest = int(instance, "latest_version").unwrap_or(1);
    let default = int(instance, "default_version").unwrap_or(1);
    let ec2 = "ec2.amazonaws.com";
    Some(Change::modify(
        "lt-resize",
        instance,
        format!("made a {size} version of launch template {id} the default"),
        &["instance_type", "default_version", "latest_version"],
        vec![
            req(
                ec2,
                "CreateLaunchTemplateVersion",
                json!({"CreateLaunchTemplateVersionRequest": {
                    "LaunchTemplateId": id, "SourceVersion": default.to_string(),
                    "LaunchTemplateData": {"InstanceType": size}}}),
            ),
            req(
                ec2,
                "ModifyLaunchTemplate",
                json!({"ModifyLaunchTemplateRequest": {
                    "LaunchTemplateId": id, "SetDefaultVersion": (latest + 1).to_string()}}),
            ),
        ],
    ))
}

fn lambda_call(api: &str, name: &str, p: Value) -> Request {
    let mut p = p;
    p["functionName"] = json!(name);
    req("lambda.amazonaws.com", api, p)
}

fn lambda(instance: &Instance) -> Vec<Change> {
    let name = text(instance, "function_name");
    let mut out = Vec::new();
    let memory = int(instance, "memory_size").unwrap_or(128);
    if let Some(up) = next_in(&[128, 256, 512, 1024, 1536, 2048, 3008], memory) {
        out.push(
            Change::modify(
                "lambda-memory",
                instance,
                format!("raised {name} memory from {memory} to {up} MB"),
                &["memory_size"],
                vec![lambda_call(
                    "UpdateFunctionConfiguration",
                    name,
                    json!({"memorySize": up}),
                )],
            )
            .undo(vec![lambda_call(
                "UpdateFunctionConfiguration",
                name,
                json!({"memorySize": memory}),
            )]),
        );
    }
    let timeout = int(instance, "timeout").unwrap_or(3);
    if let Some(up) = next_in(&[10, 30, 60, 120, 300, 900], timeout) {
        out.push(
            Change::modify(
                "lambda-timeout",
                instance,
                format!("raised {name} timeout from {timeout} to {up} s"),
                &["timeout"],
                vec![lambda_call(
                    "UpdateFunctionConfiguration",
                    name,
                    json!({"timeout": up}),
                )],
            )
            .undo(vec![lambda_call(
                "UpdateFunctionConfiguration",
                name,
                json!({"timeout": timeout}),
            )]),
        );
    }
    let reserved = int(instance, "reserved_concurrent_executions").unwrap_or(-1);
    let cap = if reserved < 0 { 50 } else { reserved * 2 };
    out.push(
        Change::modify(
            "lambda-concurrency",
            instance,
            format!("reserved {cap} concurrent executions for {name}"),
            &["reserved_concurrent_executions"],
            vec![lambda_call(
                "PutFunctionConcurrency",
                name,
                json!({"reservedConcurrentExecutions": cap}),
            )],
        )
        .undo(vec![match reserved < 0 {
            true => lambda_call("DeleteFunctionConcurrency", name, json!({})),
            false => lambda_call(
                "PutFunctionConcurrency",
                name,
                json!({"reservedConcurrentExecutions": reserved}),
            ),
        }]),
    );
    out.extend(runtime_upgrade(instance, name));
    let description = text(instance, "description");
    let new = format!(
        "{} (owner: orders team)",
        if description.is_empty() {
            name
        } else {
            description
        }
    );
    out.push(
        Change::modify(
            "lambda-description",
            instance,
            format!("changed the description of {name}"),
            &["description"],
            vec![lambda_call(
                "UpdateFunctionConfiguration",
                name,
                json!({"description": new}),
            )],
        )
        .undo(vec![lambda_call(
            "UpdateFunctionConfiguration",
            name,
            json!({"description": description}),
        )]),
    );
    let variables = block(instance, "environment")["variables"].clone();
    if let Some(vars) = variables
        .as_object()
        .filter(|v| !v.contains_key("LOG_LEVEL"))
    {
        let mut more = vars.clone();
        more.insert("LOG_LEVEL".to_owned(), json!("DEBUG"));
        out.push(
            Change::modify(
                "lambda-env",
                instance,
                format!("set LOG_LEVEL=DEBUG in the environment of {name}"),
                &["environment"],
                vec![lambda_call(
                    "UpdateFunctionConfiguration",
                    name,
                    json!({"environment": {"variables": more}}),
                )],
            )
            .undo(vec![lambda_call(
                "UpdateFunctionConfiguration",
                name,
                json!({"environment": {"variables": vars}}),
            )]),
        );
    }
    out
}

/// Lambda runtimes in release order, per language.
const RUNTIMES: [&[&str]; 3] = [
    &[
        "python3.9",
        "python3.10",
        "python3.11",
        "python3.12",
        "python3.13",
    ],
    &["nodejs16.x", "nodejs18.x", "nodejs20.x", "nodejs22.x"],
    &["java11", "java17", "java21"],
];

/// The next runtime release of the same language.
fn runtime_upgrade(instance: &Instance, name: &str) -> Option<Change> {
    let runtime = text(instance, "runtime");
    let next = RUNTIMES.iter().find_map(|family| {
        let at = family.iter().position(|r| *r == runtime)?;
        family.get(at + 1).copied()
    })?;
    Some(
        Change::modify(
            "lambda-runtime",
            instance,
            format!("upgraded {name} from {runtime} to {next}"),
            &["runtime"],
            vec![lambda_call(
                "UpdateFunctionConfiguration",
                name,
                json!({"runtime": next}),
            )],
        )
        .undo(vec![lambda_call(
            "UpdateFunctionConfiguration",
            name,
            json!({"runtime": runtime}),
        )]),
    )
}

fn ecs_service(instance: &Instance) -> Option<Change> {
    let name = text(instance, "name");
    let cluster = text(instance, "cluster");
    let count = int(instance, "desired_count")?;
    let call = |n: i64| {
        req(
            "ecs.amazonaws.com",
            "UpdateService",
            json!({"cluster": cluster, "service": name, "desiredCount": n}),
        )
    };
    Some(
        Change::modify(
            "ecs-scale",
            instance,
            format!(
                "scaled ECS service {name} from {count} to {} tasks",
                count + 2
            ),
            &[],
            vec![call(count + 2)],
        )
        .undo(vec![call(count)])
        .owned(&["desired_count"]),
    )
}

fn ecr(instance: &Instance) -> Vec<Change> {
    let name = text(instance, "name");
    let ecr = "ecr.amazonaws.com";
    let mut out = Vec::new();
    let scan = block(instance, "image_scanning_configuration")["scan_on_push"] == json!(true);
    let scan_call = |on: bool| {
        req(
            ecr,
            "PutImageScanningConfiguration",
            json!({"repositoryName": name,
            "imageScanningConfiguration": {"scanOnPush": on}}),
        )
    };
    out.push(
        Change::modify(
            "ecr-scan-on-push",
            instance,
            format!(
                "turned scan on push {} for repository {name}",
                if scan { "off" } else { "on" }
            ),
            &["image_scanning_configuration"],
            vec![scan_call(!scan)],
        )
        .undo(vec![scan_call(scan)]),
    );
    let mutability = text(instance, "image_tag_mutability");
    let other = if mutability == "IMMUTABLE" {
        "MUTABLE"
    } else {
        "IMMUTABLE"
    };
    let tag_call = |m: &str| {
        req(
            ecr,
            "PutImageTagMutability",
            json!({"repositoryName": name, "imageTagMutability": m}),
        )
    };
    out.push(
        Change::modify(
            "ecr-tag-mutability",
            instance,
            format!("made tags of repository {name} {other}"),
            &["image_tag_mutability"],
            vec![tag_call(other)],
        )
        .undo(vec![tag_call(mutability)]),
    );
    out
}

fn rds_call(id: &str, p: Value) -> Request {
    let mut p = p;
    p["dBInstanceIdentifier"] = json!(id);
    p["applyImmediately"] = json!(true);
    req("rds.amazonaws.com", "ModifyDBInstance", p)
}

fn rds(instance: &Instance) -> Vec<Change> {
    let id = text(instance, "identifier");
    let mut out = Vec::new();
    let class = text(instance, "instance_class");
    if let Some(up) = next_size(class) {
        out.push(
            Change::modify(
                "rds-resize",
                instance,
                format!("resized DB instance {id} from {class} to {up}"),
                &["instance_class"],
                vec![rds_call(id, json!({"dBInstanceClass": up}))],
            )
            .undo(vec![rds_call(id, json!({"dBInstanceClass": class}))]),
        );
    }
    if let Some(storage) = int(instance, "allocated_storage") {
        let more = storage + (storage / 2).max(10);
        out.push(Change::modify(
            "rds-storage",
            instance,
            format!("grew the storage of DB instance {id} from {storage} to {more} GiB"),
            &["allocated_storage"],
            vec![rds_call(id, json!({"allocatedStorage": more}))],
        ));
    }
    let retention = int(instance, "backup_retention_period").unwrap_or(0);
    if let Some(up) = next_in(&[7, 14, 35], retention) {
        let change = Change::modify(
            "rds-backup-retention",
            instance,
            format!("raised backup retention of {id} from {retention} to {up} days"),
            &["backup_retention_period"],
            vec![rds_call(id, json!({"backupRetentionPeriod": up}))],
        )
        .undo(vec![rds_call(
            id,
            json!({"backupRetentionPeriod": retention}),
        )]);
        out.push(match retention {
            0 => change.runbook("AWSConfigRemediation-EnableRDSInstanceBackup"),
            _ => change,
        });
    }
    for (param, attr, name, runbook) in [
        (
            "deletionProtection",
            "deletion_protection",
            "rds-deletion-protection",
            "AWSConfigRemediation-EnableRDSInstanceDeletionProtection",
        ),
        (
            "copyTagsToSnapshot",
            "copy_tags_to_snapshot",
            "rds-copy-tags",
            "AWSConfigRemediation-EnableCopyTagsToSnapshotOnRDSDBInstance",
        ),
    ] {
        if flag(instance, attr) {
            continue;
        }
        out.push(
            Change::modify(
                name,
                instance,
                format!("enabled {param} on DB instance {id}"),
                &[attr],
                vec![rds_call(id, json!({param: true}))],
            )
            .undo(vec![rds_call(id, json!({param: false}))])
            .runbook(runbook),
        );
    }
    if !flag(instance, "multi_az") {
        out.push(
            Change::modify(
                "rds-multi-az",
                instance,
                format!("converted DB instance {id} to Multi-AZ"),
                &["multi_az"],
                vec![rds_call(id, json!({"multiAZ": true}))],
            )
            .undo(vec![rds_call(id, json!({"multiAZ": false}))])
            .runbook("AWSConfigRemediation-EnableMultiAZOnRDSInstance"),
        );
    }
    out
}

fn dynamodb(instance: &Instance) -> Vec<Change> {
    let table = text(instance, "name");
    let ddb = "dynamodb.amazonaws.com";
    let mut out = Vec::new();
    let pitr = block(instance, "point_in_time_recovery")["enabled"] == json!(true);
    let pitr_call = |on: bool| {
        req(
            ddb,
            "UpdateContinuousBackups",
            json!({"tableName": table,
            "pointInTimeRecoverySpecification": {"pointInTimeRecoveryEnabled": on}}),
        )
    };
    let change = Change::modify(
        "ddb-pitr",
        instance,
        format!(
            "{} point-in-time recovery on table {table}",
            if pitr { "disabled" } else { "enabled" }
        ),
        &["point_in_time_recovery"],
        vec![pitr_call(!pitr)],
    )
    .undo(vec![pitr_call(pitr)]);
    out.push(match pitr {
        true => change,
        false => change.runbook("AWSConfigRemediation-EnablePITRForDynamoDbTable"),
    });
    if text(instance, "billing_mode") == "PAY_PER_REQUEST" {
        out.push(Change::modify(
            "ddb-provisioned",
            instance,
            format!("switched table {table} to provisioned capacity 5/5"),
            &["billing_mode", "read_capacity", "write_capacity"],
            vec![req(
                ddb,
                "UpdateTable",
                json!({"tableName": table, "billingMode": "PROVISIONED",
                    "provisionedThroughput": {"readCapacityUnits": 5, "writeCapacityUnits": 5}}),
            )],
        ));
    }
    let ttl = block(instance, "ttl");
    if ttl["enabled"] != json!(true) {
        let attribute = "expires_at";
        out.push(Change::modify(
            "ddb-ttl",
            instance,
            format!("enabled TTL on {attribute} for table {table}"),
            &["ttl"],
            vec![req(
                ddb,
                "UpdateTimeToLive",
                json!({"tableName": table,
                    "timeToLiveSpecification": {"enabled": true, "attributeName": attribute}}),
            )],
        ));
    }
    out
}

fn lb_attributes(api: &str, key: &str, arn: &str, attrs: Vec<(&str, String)>) -> Request {
    let list: Vec<Value> = attrs
        .into_iter()
        .map(|(k, v)| json!({"key": k, "value": v}))
        .collect();
    req(
        "elasticloadbalancing.amazonaws.com",
        api,
        json!({key: arn, "attributes": list}),
    )
}

fn load_balancer(instance: &Instance) -> Vec<Change> {
    let arn = text(instance, "arn");
    let name = text(instance, "name");
    let call = |k: &str, v: String| {
        lb_attributes(
            "ModifyLoadBalancerAttributes",
            "loadBalancerArn",
            arn,
            vec![(k, v)],
        )
    };
    let mut out = Vec::new();
    let idle = int(instance, "idle_timeout").unwrap_or(60);
    let up = next_in(&[60, 120, 300, 600], idle).unwrap_or(idle / 2);
    out.push(
        Change::modify(
            "lb-idle-timeout",
            instance,
            format!("changed idle timeout of {name} from {idle} to {up} s"),
            &["idle_timeout"],
            vec![call("idle_timeout.timeout_seconds", up.to_string())],
        )
        .undo(vec![call("idle_timeout.timeout_seconds", idle.to_string())]),
    );
    if text(instance, "load_balancer_type") == "application" {
        out.extend(application_lb(instance, name, &call));
    }
    if !flag(instance, "enable_deletion_protection") {
        out.push(
            Change::modify(
                "lb-deletion-protection",
                instance,
                format!("enabled deletion protection on {name}"),
                &["enable_deletion_protection"],
                vec![call("deletion_protection.enabled", "true".into())],
            )
            .undo(vec![call("deletion_protection.enabled", "false".into())])
            .runbook("AWSConfigRemediation-EnableELBDeletionProtection"),
        );
    }
    out
}

/// Runbooks for Application Load Balancers: dropping invalid header fields, and the desync
/// mitigation mode one step stricter.
fn application_lb(
    instance: &Instance,
    name: &str,
    call: &dyn Fn(&str, String) -> Request,
) -> Vec<Change> {
    let mut out = Vec::new();
    if !flag(instance, "drop_invalid_header_fields") {
        let key = "routing.http.drop_invalid_header_fields.enabled";
        out.push(
            Change::modify(
                "alb-drop-invalid-headers",
                instance,
                format!("set {name} to drop invalid header fields"),
                &["drop_invalid_header_fields"],
                vec![call(key, "true".into())],
            )
            .undo(vec![call(key, "false".into())])
            .runbook("AWSConfigRemediation-DropInvalidHeadersForALB"),
        );
    }
    let mode = text(instance, "desync_mitigation_mode");
    let stricter = match mode {
        "monitor" => Some("defensive"),
        "defensive" | "" => Some("strictest"),
        _ => None,
    };
    if let Some(stricter) = stricter {
        let key = "routing.http.desync_mitigation_mode";
        let previous = if mode.is_empty() { "defensive" } else { mode };
        out.push(
            Change::modify(
                "alb-desync-mode",
                instance,
                format!("set the desync mitigation mode of {name} to {stricter}"),
                &["desync_mitigation_mode"],
                vec![call(key, stricter.into())],
            )
            .undo(vec![call(key, previous.into())])
            .runbook("AWS-UpdateALBDesyncMitigationMode"),
        );
    }
    out
}

fn target_group(instance: &Instance) -> Vec<Change> {
    let arn = text(instance, "arn");
    let name = text(instance, "name");
    let mut out = Vec::new();
    let delay = int(instance, "deregistration_delay").unwrap_or(300);
    let lower = if delay > 30 { 30 } else { 120 };
    let call = |v: i64| {
        lb_attributes(
            "ModifyTargetGroupAttributes",
            "targetGroupArn",
            arn,
            vec![("deregistration_delay.timeout_seconds", v.to_string())],
        )
    };
    out.push(
        Change::modify(
            "tg-deregistration-delay",
            instance,
            format!("changed deregistration delay of {name} from {delay} to {lower} s"),
            &["deregistration_delay"],
            vec![call(lower)],
        )
        .undo(vec![call(delay)]),
    );
    let health = block(instance, "health_check");
    if let Some(path) = health["path"].as_str() {
        let new = if path == "/healthz" {
            "/health"
        } else {
            "/healthz"
        };
        let hc = |p: &str| {
            req(
                "elasticloadbalancing.amazonaws.com",
                "ModifyTargetGroup",
                json!({"targetGroupArn": arn, "healthCheckPath": p}),
            )
        };
        out.push(
            Change::modify(
                "tg-health-path",
                instance,
                format!("changed the health check path of {name} from {path} to {new}"),
                &["health_check"],
                vec![hc(new)],
            )
            .undo(vec![hc(path)]),
        );
    }
    out
}
