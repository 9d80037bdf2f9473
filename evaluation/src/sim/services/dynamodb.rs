//! Amazon DynamoDB tables: capacity and billing mode, TTL, point-in-time recovery, tags.

use serde_json::{Value, json};

use super::super::ApiError;
use super::super::ctx::{ApiResult, Ctx};
use super::super::params;
use super::Handler;

/// The handler of a DynamoDB write call.
pub fn handler(api: &str) -> Option<Handler> {
    Some(match api {
        "UpdateTable" => update_table,
        "UpdateTimeToLive" => update_ttl,
        "UpdateContinuousBackups" => update_continuous_backups,
        "TagResource" => tag_resource,
        "UntagResource" => untag_resource,
        _ => return None,
    })
}

fn not_found(name: &str) -> ApiError {
    ApiError::new(
        "ResourceNotFoundException",
        format!("Requested resource not found: Table: {name} not found"),
    )
}

/// The table of `tableName` (a name or ARN).
fn table(ctx: &Ctx<'_>, p: &Value, key: &str) -> Result<usize, ApiError> {
    let given = params::string(p, key)?;
    let name = given.rsplit_once(":table/").map_or(given, |(_, n)| n);
    ctx.find("aws_dynamodb_table", "name", name)
        .ok_or_else(|| not_found(name))
}

/// UpdateTable: billing mode and provisioned throughput. On-demand tables have no
/// provisioned capacity, which the provider reads as 0.
fn update_table(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = table(ctx, p, "tableName")?;
    let mode = params::opt_string(p, "billingMode")
        .map(str::to_owned)
        .unwrap_or_else(|| match ctx.attr_str(at, "billing_mode").as_str() {
            "" => "PROVISIONED".to_owned(),
            m => m.to_owned(),
        });
    let throughput = p.get("provisionedThroughput");
    if mode == "PROVISIONED"
        && throughput.is_none()
        && ctx.attr_str(at, "billing_mode") == "PAY_PER_REQUEST"
    {
        return Err(ApiError::new(
            "ValidationException",
            "One or more parameter values were invalid: ProvisionedThroughput must be specified when BillingMode is PROVISIONED",
        ));
    }
    if mode == "PAY_PER_REQUEST" && throughput.is_some() {
        return Err(ApiError::new(
            "ValidationException",
            "One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST",
        ));
    }
    ctx.set(at, "billing_mode", json!(mode));
    match (mode.as_str(), throughput) {
        ("PAY_PER_REQUEST", _) => {
            ctx.set(at, "read_capacity", json!(0));
            ctx.set(at, "write_capacity", json!(0));
        }
        (_, Some(t)) => {
            for (param, attr) in [
                ("readCapacityUnits", "read_capacity"),
                ("writeCapacityUnits", "write_capacity"),
            ] {
                if let Some(v) = params::opt_int(t, param) {
                    ctx.set(at, attr, json!(v));
                }
            }
        }
        _ => {}
    }
    Ok(json!({"tableDescription": {
        "tableName": ctx.attr(at, "name"),
        "tableArn": ctx.attr(at, "arn"),
        "tableStatus": "UPDATING",
        "billingModeSummary": {"billingMode": mode},
        "provisionedThroughput": {
            "readCapacityUnits": ctx.attr(at, "read_capacity"),
            "writeCapacityUnits": ctx.attr(at, "write_capacity"),
            "numberOfDecreasesToday": 0,
        },
    }}))
}

/// UpdateTimeToLive.
fn update_ttl(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = table(ctx, p, "tableName")?;
    let spec = p
        .get("timeToLiveSpecification")
        .ok_or_else(|| params::missing("timeToLiveSpecification"))?;
    let enabled = params::opt_bool(spec, "enabled").ok_or_else(|| params::missing("enabled"))?;
    let attribute = params::string(spec, "attributeName")?;
    let current = ctx.attr(at, "ttl");
    let now_enabled = current
        .get(0)
        .and_then(|t| t.get("enabled"))
        .and_then(Value::as_bool)
        == Some(true);
    if now_enabled == enabled {
        let state = if enabled { "enabled" } else { "disabled" };
        return Err(ApiError::new(
            "ValidationException",
            format!("TimeToLive is already {state}"),
        ));
    }
    let stored = if enabled { attribute } else { "" };
    ctx.set(
        at,
        "ttl",
        json!([{"enabled": enabled, "attribute_name": stored}]),
    );
    Ok(json!({"timeToLiveSpecification": {"enabled": enabled, "attributeName": attribute}}))
}

/// UpdateContinuousBackups: point-in-time recovery.
fn update_continuous_backups(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = table(ctx, p, "tableName")?;
    let spec = p
        .get("pointInTimeRecoverySpecification")
        .ok_or_else(|| params::missing("pointInTimeRecoverySpecification"))?;
    let enabled = params::opt_bool(spec, "pointInTimeRecoveryEnabled")
        .ok_or_else(|| params::missing("pointInTimeRecoveryEnabled"))?;
    let mut block = ctx
        .attr(at, "point_in_time_recovery")
        .get(0)
        .cloned()
        .unwrap_or_else(|| json!({}));
    block["enabled"] = json!(enabled);
    if let Some(days) = params::opt_int(spec, "recoveryPeriodInDays") {
        block["recovery_period_in_days"] = json!(days);
    }
    ctx.set(at, "point_in_time_recovery", json!([block]));
    let status = if enabled { "ENABLED" } else { "DISABLED" };
    Ok(json!({"continuousBackupsDescription": {
        "continuousBackupsStatus": "ENABLED",
        "pointInTimeRecoveryDescription": {"pointInTimeRecoveryStatus": status},
    }}))
}

/// TagResource.
fn tag_resource(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = table(ctx, p, "resourceArn")?;
    ctx.add_tags(at, &params::tag_list(p.get("tags")));
    Ok(Value::Null)
}

/// UntagResource.
fn untag_resource(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = table(ctx, p, "resourceArn")?;
    ctx.remove_tags(at, &params::strings(p.get("tagKeys")));
    Ok(Value::Null)
}
