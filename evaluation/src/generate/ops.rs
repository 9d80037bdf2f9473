//! Changes to monitoring, messaging, keys, DNS and configuration: CloudWatch alarms and log
//! groups, SNS, SQS, KMS, Route 53, SSM parameters and Secrets Manager.

use super::change::{Change, Kind, LOG_RETENTION_DAYS, flag, int, next_in, req, text};
use crate::sim::Request;
use reconciler::terraform::state::Instance;
use serde_json::{Map, Value, json};

/// The changes that apply to one instance.
pub fn changes(instance: &Instance, all: &[Instance]) -> Vec<Change> {
    match instance.resource_type.as_str() {
        "aws_cloudwatch_metric_alarm" => alarm(instance),
        "aws_cloudwatch_log_group" => log_group(instance).into_iter().collect(),
        "aws_sns_topic" => std::iter::once(topic(instance))
            .chain(encrypt_topic(instance, all))
            .collect(),
        "aws_sqs_queue" => queue(instance),
        "aws_kms_key" => kms(instance).into_iter().collect(),
        "aws_route53_record" => record(instance),
        "aws_secretsmanager_secret" => vec![secret(instance)],
        "aws_ssm_parameter" => parameter(instance).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// The PutMetricAlarm request that recreates an alarm as the state holds it, with
/// `threshold` in place of its own.
fn put_alarm(instance: &Instance, threshold: f64) -> Request {
    let mut p = Map::new();
    p.insert("alarmName".into(), json!(text(instance, "alarm_name")));
    let counts_and_actions = [
        ("period", "period"),
        ("evaluationPeriods", "evaluation_periods"),
        ("datapointsToAlarm", "datapoints_to_alarm"),
        ("alarmActions", "alarm_actions"),
        ("oKActions", "ok_actions"),
        ("insufficientDataActions", "insufficient_data_actions"),
    ];
    for (param, attr) in crate::sim::ALARM_FIELDS
        .iter()
        .chain(counts_and_actions.iter())
        .copied()
    {
        if let Some(v) = instance.attributes.get(attr).filter(|v| !v.is_null()) {
            p.insert(param.into(), v.clone());
        }
    }
    let dimensions: Vec<Value> = instance
        .attributes
        .get("dimensions")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| json!({"name": k, "value": v}))
                .collect()
        })
        .unwrap_or_default();
    p.insert("dimensions".into(), json!(dimensions));
    p.insert("threshold".into(), json!(threshold));
    req(
        "monitoring.amazonaws.com",
        "PutMetricAlarm",
        Value::Object(p),
    )
}

fn alarm(instance: &Instance) -> Vec<Change> {
    let name = text(instance, "alarm_name");
    let threshold = instance
        .attributes
        .get("threshold")
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    let new = if threshold >= 10.0 {
        (threshold * 1.25).round()
    } else {
        threshold + 5.0
    };
    vec![
        Change::modify(
            "alarm-threshold",
            instance,
            format!("changed the threshold of alarm {name} from {threshold} to {new}"),
            &["threshold"],
            vec![put_alarm(instance, new)],
        )
        .undo(vec![put_alarm(instance, threshold)]),
        Change::modify(
            "alarm-delete",
            instance,
            format!("deleted alarm {name}"),
            &[],
            vec![req(
                "monitoring.amazonaws.com",
                "DeleteAlarms",
                json!({"alarmNames": [name]}),
            )],
        )
        .undo(vec![put_alarm(instance, threshold)])
        .kind(Kind::Delete),
    ]
}

fn log_group(instance: &Instance) -> Option<Change> {
    let name = text(instance, "name");
    let days = int(instance, "retention_in_days").unwrap_or(0);
    let new = match days {
        0 => 365,
        d => next_in(&LOG_RETENTION_DAYS, d)?,
    };
    let call = |d: i64| {
        req(
            "logs.amazonaws.com",
            "PutRetentionPolicy",
            json!({"logGroupName": name, "retentionInDays": d}),
        )
    };
    let undo = match days {
        0 => req(
            "logs.amazonaws.com",
            "DeleteRetentionPolicy",
            json!({"logGroupName": name}),
        ),
        d => call(d),
    };
    Some(
        Change::modify(
            "logs-retention",
            instance,
            format!(
                "set retention of log group {name} to {new} days (was {})",
                if days == 0 {
                    "never expire".to_owned()
                } else {
                    days.to_string()
                }
            ),
            &["retention_in_days"],
            vec![call(new)],
        )
        .undo(vec![undo]),
    )
}

fn topic(instance: &Instance) -> Change {
    let arn = text(instance, "arn");
    let name = text(instance, "name");
    let current = text(instance, "display_name");
    let new = if current == "Alerts" {
        "Ops alerts"
    } else {
        "Alerts"
    };
    let call = |v: &str| {
        req(
            "sns.amazonaws.com",
            "SetTopicAttributes",
            json!({"topicArn": arn, "attributeName": "DisplayName", "attributeValue": v}),
        )
    };
    Change::modify(
        "sns-display-name",
        instance,
        format!("set the display name of topic {name} to \"{new}\""),
        &["display_name"],
        vec![call(new)],
    )
    .undo(vec![call(current)])
}

/// AWSConfigRemediation-EncryptSNSTopic on a topic without a key: the project's customer
/// managed key, or the account's security baseline key by alias.
fn encrypt_topic(instance: &Instance, all: &[Instance]) -> Option<Change> {
    if !text(instance, "kms_master_key_id").is_empty() {
        return None;
    }
    let arn = text(instance, "arn");
    let mut parts = arn.split(':');
    let (region, account) = (parts.nth(3)?, parts.next()?);
    let key = all
        .iter()
        .find(|i| i.resource_type == "aws_kms_key")
        .map(|k| text(k, "arn").to_owned())
        .unwrap_or_else(|| format!("arn:aws:kms:{region}:{account}:alias/security-baseline"));
    let call = |v: &str| {
        req(
            "sns.amazonaws.com",
            "SetTopicAttributes",
            json!({"topicArn": arn, "attributeName": "KmsMasterKeyId", "attributeValue": v}),
        )
    };
    Some(
        Change::modify(
            "sns-encrypt",
            instance,
            format!("encrypted topic {} with {key}", text(instance, "name")),
            &["kms_master_key_id"],
            vec![call(&key)],
        )
        .undo(vec![call("")])
        .runbook("AWSConfigRemediation-EncryptSNSTopic"),
    )
}

fn queue(instance: &Instance) -> Vec<Change> {
    let url = text(instance, "url");
    let name = text(instance, "name");
    let call = |k: &str, v: i64| {
        req(
            "sqs.amazonaws.com",
            "SetQueueAttributes",
            json!({"queueUrl": url, "attributes": {k: v.to_string()}}),
        )
    };
    let mut out = Vec::new();
    let visibility = int(instance, "visibility_timeout_seconds").unwrap_or(30);
    let up = (visibility * 2).clamp(60, 43_200);
    out.push(
        Change::modify(
            "sqs-visibility",
            instance,
            format!("raised the visibility timeout of queue {name} from {visibility} to {up} s"),
            &["visibility_timeout_seconds"],
            vec![call("VisibilityTimeout", up)],
        )
        .undo(vec![call("VisibilityTimeout", visibility)]),
    );
    let retention = int(instance, "message_retention_seconds").unwrap_or(345_600);
    let new = if retention == 1_209_600 {
        345_600
    } else {
        1_209_600
    };
    out.push(
        Change::modify(
            "sqs-retention",
            instance,
            format!(
                "set message retention of queue {name} to {} days",
                new / 86_400
            ),
            &["message_retention_seconds"],
            vec![call("MessageRetentionPeriod", new)],
        )
        .undo(vec![call("MessageRetentionPeriod", retention)]),
    );
    out
}

fn kms(instance: &Instance) -> Option<Change> {
    if flag(instance, "enable_key_rotation") {
        return None;
    }
    let id = text(instance, "key_id");
    let call = |api: &str| req("kms.amazonaws.com", api, json!({"keyId": id}));
    Some(
        Change::modify(
            "kms-rotation",
            instance,
            format!("enabled automatic rotation of KMS key {id}"),
            &["enable_key_rotation"],
            vec![call("EnableKeyRotation")],
        )
        .undo(vec![call("DisableKeyRotation")])
        .runbook("AWSConfigRemediation-EnableKeyRotation"),
    )
}

fn record_call(
    zone: &str,
    action: &str,
    name: &str,
    kind: &str,
    ttl: i64,
    values: &[Value],
) -> Request {
    let records: Vec<Value> = values.iter().map(|v| json!({"value": v})).collect();
    req(
        "route53.amazonaws.com",
        "ChangeResourceRecordSets",
        json!({"hostedZoneId": zone,
        "changeBatch": {"changes": [{"action": action, "resourceRecordSet":
            {"name": name, "type": kind, "tTL": ttl, "resourceRecords": records}}]}}),
    )
}

fn record(instance: &Instance) -> Vec<Change> {
    let zone = text(instance, "zone_id");
    let name = text(instance, "name");
    let kind = text(instance, "type");
    let values = instance
        .attributes
        .get("records")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let Some(ttl) = int(instance, "ttl").filter(|_| !values.is_empty()) else {
        return Vec::new();
    };
    let new = if ttl == 60 { 300 } else { 60 };
    vec![
        Change::modify(
            "r53-ttl",
            instance,
            format!("changed the TTL of {name} {kind} from {ttl} to {new}"),
            &["ttl"],
            vec![record_call(zone, "UPSERT", name, kind, new, &values)],
        )
        .undo(vec![record_call(zone, "UPSERT", name, kind, ttl, &values)]),
        Change::modify(
            "r53-delete",
            instance,
            format!("deleted the {kind} record {name}"),
            &[],
            vec![record_call(zone, "DELETE", name, kind, ttl, &values)],
        )
        .undo(vec![record_call(zone, "CREATE", name, kind, ttl, &values)])
        .kind(Kind::Delete),
    ]
}

fn secret(instance: &Instance) -> Change {
    let id = text(instance, "arn");
    let name = text(instance, "name");
    let current = text(instance, "description");
    let new = format!(
        "{} (rotated manually)",
        if current.is_empty() { name } else { current }
    );
    let call = |d: &str| {
        req(
            "secretsmanager.amazonaws.com",
            "UpdateSecret",
            json!({"secretId": id, "description": d}),
        )
    };
    Change::modify(
        "secret-description",
        instance,
        format!("changed the description of secret {name}"),
        &["description"],
        vec![call(&new)],
    )
    .undo(vec![call(current)])
}

/// A new value for a plain String parameter: log levels step up, flags flip, numbers double.
fn parameter(instance: &Instance) -> Option<Change> {
    if text(instance, "type") != "String" {
        return None;
    }
    let name = text(instance, "name");
    let value = text(instance, "value");
    let new = match value {
        "DEBUG" => "INFO".to_owned(),
        "INFO" => "DEBUG".to_owned(),
        "WARN" | "WARNING" | "ERROR" => "INFO".to_owned(),
        "true" => "false".to_owned(),
        "false" => "true".to_owned(),
        "on" => "off".to_owned(),
        "off" => "on".to_owned(),
        v => v.parse::<i64>().ok().map(|n| (n * 2).max(1).to_string())?,
    };
    let call = |v: &str| {
        req(
            "ssm.amazonaws.com",
            "PutParameter",
            json!({"name": name, "type": "String", "value": v, "overwrite": true}),
        )
    };
    Some(
        Change::modify(
            "ssm-parameter-value",
            instance,
            format!("set parameter {name} to {new} (was {value})"),
            &["value"],
            vec![call(&new)],
        )
        .undo(vec![call(value)]),
    )
}

/// New DNS records in each hosted zone and a new alarm on each alarmable resource.
pub fn creations(all: &[Instance]) -> Vec<Change> {
    let mut out: Vec<Change> = all
        .iter()
        .filter(|i| i.resource_type == "aws_route53_zone")
        .map(|zone| {
            let id = text(zone, "zone_id");
            let domain = text(zone, "name").trim_end_matches('.');
            let name = format!("status.{domain}");
            Change::modify(
                "r53-create",
                zone,
                format!("created CNAME {name} in zone {id}"),
                &[],
                vec![record_call(
                    id,
                    "CREATE",
                    &name,
                    "CNAME",
                    300,
                    &[json!("status.example-statuspage.io")],
                )],
            )
            .kind(Kind::Create)
        })
        .collect();
    out.extend(
        all.iter()
            .filter(|i| i.resource_type == "aws_route53_zone")
            .map(|zone| {
                let id = text(zone, "zone_id");
                let domain = text(zone, "name").trim_end_matches('.');
                let value = json!(
                    "\"google-site-verification=rXOxyZounnZasA8Z7oaD3c14JdjS9aKSWvsR1EbUSIQ\""
                );
                Change::modify(
                    "r53-create-txt",
                    zone,
                    format!("created a TXT verification record for {domain} in zone {id}"),
                    &[],
                    vec![record_call(
                        id,
                        "CREATE",
                        &format!("_verify.{domain}"),
                        "TXT",
                        300,
                        &[value],
                    )],
                )
                .kind(Kind::Create)
            }),
    );
    out.extend(all.iter().filter_map(new_alarm));
    out.extend(
        all.iter()
            .filter(|i| i.resource_type == "aws_ssm_parameter")
            .take(1)
            .filter_map(new_parameter),
    );
    out
}

/// A new String parameter beside an existing one. CloudTrail never records a parameter's
/// value, so the creation is held for a person: the AWS provider needs one of `value`,
/// `insecure_value` or `value_wo` to plan it.
fn new_parameter(instance: &Instance) -> Option<Change> {
    let name = text(instance, "name");
    let (path, _) = name.rsplit_once('/')?;
    let new = format!("{path}/maintenance-mode");
    Some(
        Change::modify(
            "ssm-create-parameter",
            instance,
            format!("created parameter {new}"),
            &[],
            vec![req(
                "ssm.amazonaws.com",
                "PutParameter",
                json!({"name": new, "type": "String", "value": "off"}),
            )],
        )
        .kind(Kind::Create)
        .hides_values(),
    )
}

/// An alarm on a resource, in the metric its service publishes.
fn new_alarm(instance: &Instance) -> Option<Change> {
    let (namespace, metric, dimension, value, threshold) = match instance.resource_type.as_str() {
        "aws_lambda_function" => (
            "AWS/Lambda",
            "Errors",
            "FunctionName",
            text(instance, "function_name"),
            5.0,
        ),
        "aws_db_instance" => (
            "AWS/RDS",
            "FreeStorageSpace",
            "DBInstanceIdentifier",
            text(instance, "identifier"),
            2e9,
        ),
        "aws_sqs_queue" => (
            "AWS/SQS",
            "ApproximateAgeOfOldestMessage",
            "QueueName",
            text(instance, "name"),
            900.0,
        ),
        "aws_dynamodb_table" => (
            "AWS/DynamoDB",
            "ThrottledRequests",
            "TableName",
            text(instance, "name"),
            10.0,
        ),
        "aws_ecs_service" => (
            "AWS/ECS",
            "CPUUtilization",
            "ServiceName",
            text(instance, "name"),
            85.0,
        ),
        _ => return None,
    };
    let operator = if metric == "FreeStorageSpace" {
        "LessThanThreshold"
    } else {
        "GreaterThanThreshold"
    };
    if value.is_empty() {
        return None;
    }
    let short = value.rsplit('/').nth(1).unwrap_or(value);
    let name = format!("{short}-{}", metric.to_lowercase());
    Some(
        Change::modify("alarm-create", instance, format!("created alarm {name} on {metric}"), &[],
            vec![req("monitoring.amazonaws.com", "PutMetricAlarm", json!({"alarmName": name, "metricName": metric,
                "namespace": namespace, "statistic": "Maximum", "period": 300, "evaluationPeriods": 2,
                "threshold": threshold, "comparisonOperator": operator,
                "dimensions": [{"name": dimension, "value": value}]}))])
        .kind(Kind::Create),
    )
}
