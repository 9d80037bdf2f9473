//! Amazon CloudWatch alarms and CloudWatch Logs log groups.

use serde_json::{Value, json};

use super::super::ApiError;
use super::super::ctx::{ApiResult, Ctx};
use super::super::params::{self, list};
use super::{Handler, Service};

/// The handler of a CloudWatch or CloudWatch Logs write call.
pub fn handler(service: Service, api: &str) -> Option<Handler> {
    Some(match (service, api) {
        (Service::CloudWatch, "PutMetricAlarm") => put_metric_alarm,
        (Service::CloudWatch, "DeleteAlarms") => delete_alarms,
        (Service::Logs, "PutRetentionPolicy") => put_retention_policy,
        (Service::Logs, "DeleteRetentionPolicy") => delete_retention_policy,
        (Service::Logs, "TagResource") => tag_log_group,
        (Service::Logs, "UntagResource") => untag_log_group,
        _ => return None,
    })
}

/// Alarm settings and their Terraform attributes.
pub const ALARM_FIELDS: [(&str, &str); 11] = [
    ("metricName", "metric_name"),
    ("namespace", "namespace"),
    ("statistic", "statistic"),
    ("extendedStatistic", "extended_statistic"),
    ("comparisonOperator", "comparison_operator"),
    ("alarmDescription", "alarm_description"),
    ("treatMissingData", "treat_missing_data"),
    ("unit", "unit"),
    ("thresholdMetricId", "threshold_metric_id"),
    (
        "evaluateLowSampleCountPercentile",
        "evaluate_low_sample_count_percentiles",
    ),
    ("actionsEnabled", "actions_enabled"),
];

/// PutMetricAlarm: creates the alarm, or replaces every setting of an existing one.
fn put_metric_alarm(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let name = params::string(p, "alarmName")?;
    let periods = params::int(p, "evaluationPeriods")?;
    let operator = params::string(p, "comparisonOperator")?;
    let mut alarm = json!({
        "id": name,
        "alarm_name": name,
        "arn": ctx.arn("cloudwatch", &format!("alarm:{name}")),
        "actions_enabled": true,
        "alarm_actions": params::strings(p.get("alarmActions")),
        "ok_actions": params::strings(p.get("oKActions").or(p.get("okActions"))),
        "insufficient_data_actions": params::strings(p.get("insufficientDataActions")),
        "alarm_description": "",
        "comparison_operator": operator,
        "datapoints_to_alarm": params::opt_int(p, "datapointsToAlarm").unwrap_or(0),
        "dimensions": dimensions(p),
        "evaluate_low_sample_count_percentiles": "",
        "evaluation_periods": periods,
        "extended_statistic": "",
        "metric_name": "",
        "metric_query": [],
        "namespace": "",
        "period": params::opt_int(p, "period").unwrap_or(0),
        "statistic": "",
        "threshold": p.get("threshold").and_then(params::as_float).unwrap_or(0.0),
        "threshold_metric_id": "",
        "treat_missing_data": "missing",
        "unit": "",
    });
    for (param, attr) in ALARM_FIELDS {
        if let Some(v) = p.get(param) {
            alarm[attr] = v.clone();
        }
    }
    match ctx.find("aws_cloudwatch_metric_alarm", "alarm_name", name) {
        Some(at) => {
            let tags = ctx.attr(at, "tags");
            let tags_all = ctx.attr(at, "tags_all");
            alarm["tags"] = tags;
            alarm["tags_all"] = tags_all;
            // every setting is replaced; attributes that are not settings (`region`) stay
            if let Value::Object(map) = alarm {
                ctx.attrs_mut(at).extend(map);
            }
        }
        None => {
            alarm["tags"] = Value::Null;
            alarm["tags_all"] = json!({});
            let at = ctx.create("aws_cloudwatch_metric_alarm", alarm);
            ctx.add_tags(at, &params::tag_list(p.get("tags")));
        }
    }
    Ok(Value::Null)
}

/// The alarm's dimensions as Terraform's map.
fn dimensions(p: &Value) -> Value {
    let map: serde_json::Map<String, Value> = list(p.get("dimensions"))
        .into_iter()
        .filter_map(|d| {
            Some((
                params::opt_string(d, "name")?.to_owned(),
                d.get("value")?.clone(),
            ))
        })
        .collect();
    Value::Object(map)
}

/// DeleteAlarms: every named alarm must exist.
fn delete_alarms(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let names = params::strings(p.get("alarmNames"));
    let mut found = Vec::new();
    for name in &names {
        match ctx.find("aws_cloudwatch_metric_alarm", "alarm_name", name) {
            Some(at) => found.push(at),
            None => {
                return Err(ApiError::new(
                    "ResourceNotFound",
                    format!("1 alarm(s) not found: [{name}]"),
                ));
            }
        }
    }
    ctx.remove_all(found);
    Ok(Value::Null)
}

/// The log group of `logGroupName`, or `ResourceNotFoundException`.
fn log_group(ctx: &Ctx<'_>, name: &str) -> Result<usize, ApiError> {
    ctx.find("aws_cloudwatch_log_group", "name", name)
        .ok_or_else(|| {
            ApiError::new(
                "ResourceNotFoundException",
                "The specified log group does not exist.",
            )
        })
}

/// The retention periods CloudWatch Logs accepts.
const RETENTION_DAYS: [i64; 22] = [
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922,
    3288, 3653,
];

/// PutRetentionPolicy.
fn put_retention_policy(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = log_group(ctx, params::string(p, "logGroupName")?)?;
    let days = params::int(p, "retentionInDays")?;
    if !RETENTION_DAYS.contains(&days) {
        return Err(ApiError::new(
            "InvalidParameterException",
            format!(
                "1 validation error detected: Value '{days}' at 'retentionInDays' failed to satisfy constraint: Member must satisfy enum value set: {RETENTION_DAYS:?}"
            ),
        ));
    }
    ctx.set(at, "retention_in_days", json!(days));
    Ok(Value::Null)
}

/// DeleteRetentionPolicy: logs are kept forever, which the provider reads as 0.
fn delete_retention_policy(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = log_group(ctx, params::string(p, "logGroupName")?)?;
    ctx.set(at, "retention_in_days", json!(0));
    Ok(Value::Null)
}

/// The log group of a `resourceArn` (`arn:...:log-group:<name>`, with or without `:*`).
fn log_group_by_arn(ctx: &Ctx<'_>, p: &Value) -> Result<usize, ApiError> {
    let arn = params::string(p, "resourceArn")?;
    let name = arn
        .split_once(":log-group:")
        .map_or(arn, |(_, n)| n.trim_end_matches(":*"));
    log_group(ctx, name)
}

/// TagResource (CloudWatch Logs).
fn tag_log_group(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = log_group_by_arn(ctx, p)?;
    ctx.add_tags(at, &params::tag_map(p.get("tags")));
    Ok(Value::Null)
}

/// UntagResource (CloudWatch Logs).
fn untag_log_group(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = log_group_by_arn(ctx, p)?;
    ctx.remove_tags(at, &params::strings(p.get("tagKeys")));
    Ok(Value::Null)
}
