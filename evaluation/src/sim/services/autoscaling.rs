//! EC2 Auto Scaling groups: size and tags.

use serde_json::{Value, json};

use super::super::ApiError;
use super::super::ctx::{ApiResult, Ctx};
use super::super::params::{self, items};
use super::Handler;

/// The handler of an Auto Scaling write call.
pub fn handler(api: &str) -> Option<Handler> {
    Some(match api {
        "UpdateAutoScalingGroup" => update_group,
        "SetDesiredCapacity" => set_desired_capacity,
        "CreateOrUpdateTags" => create_or_update_tags,
        _ => return None,
    })
}

fn group(ctx: &Ctx<'_>, name: &str) -> Result<usize, ApiError> {
    ctx.find("aws_autoscaling_group", "name", name)
        .ok_or_else(|| {
            ApiError::new(
                "ValidationError",
                format!("AutoScalingGroup name not found - AutoScalingGroup '{name}' not found"),
            )
        })
}

fn size(ctx: &Ctx<'_>, at: usize, key: &str) -> i64 {
    params::as_int(&ctx.attr(at, key)).unwrap_or(0)
}

/// UpdateAutoScalingGroup: minimum, maximum and desired size, which must stay ordered.
fn update_group(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let name = params::string(p, "autoScalingGroupName")?;
    let at = group(ctx, name)?;
    let min = params::opt_int(p, "minSize").unwrap_or(size(ctx, at, "min_size"));
    let max = params::opt_int(p, "maxSize").unwrap_or(size(ctx, at, "max_size"));
    let desired =
        params::opt_int(p, "desiredCapacity").unwrap_or(size(ctx, at, "desired_capacity"));
    if min > max {
        return Err(ApiError::new(
            "ValidationError",
            format!("Max bound, {max}, must be greater than or equal to min bound, {min}"),
        ));
    }
    if desired < min || desired > max {
        return Err(ApiError::new(
            "ValidationError",
            format!(
                "Desired capacity:{desired} must be between the specified min size:{min} and max size:{max}"
            ),
        ));
    }
    ctx.set(at, "min_size", json!(min));
    ctx.set(at, "max_size", json!(max));
    ctx.set(at, "desired_capacity", json!(desired));
    for (param, attr) in [
        ("healthCheckGracePeriod", "health_check_grace_period"),
        ("defaultCooldown", "default_cooldown"),
    ] {
        if let Some(v) = params::opt_int(p, param) {
            ctx.set(at, attr, json!(v));
        }
    }
    Ok(Value::Null)
}

/// SetDesiredCapacity.
fn set_desired_capacity(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let name = params::string(p, "autoScalingGroupName")?;
    let at = group(ctx, name)?;
    let desired = params::int(p, "desiredCapacity")?;
    let (min, max) = (size(ctx, at, "min_size"), size(ctx, at, "max_size"));
    if desired > max {
        return Err(ApiError::new(
            "ValidationError",
            format!(
                "New SetDesiredCapacity value {desired} is above max value {max} for the AutoScalingGroup."
            ),
        ));
    }
    if desired < min {
        return Err(ApiError::new(
            "ValidationError",
            format!(
                "New SetDesiredCapacity value {desired} is below min value {min} for the AutoScalingGroup."
            ),
        ));
    }
    ctx.set(at, "desired_capacity", json!(desired));
    Ok(Value::Null)
}

/// CreateOrUpdateTags: the group's `tag` set.
fn create_or_update_tags(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let tags = items(p, "tags");
    if tags.is_empty() {
        return Err(params::missing("tags"));
    }
    for tag in tags {
        let name = params::string(tag, "resourceId")?;
        let at = group(ctx, name)?;
        let key = params::string(tag, "key")?;
        let value = params::opt_string(tag, "value").unwrap_or_default();
        let propagate = params::opt_bool(tag, "propagateAtLaunch").unwrap_or(false);
        let mut set: Vec<Value> = ctx.attr(at, "tag").as_array().cloned().unwrap_or_default();
        set.retain(|t| t.get("key").and_then(Value::as_str) != Some(key));
        set.push(json!({"key": key, "value": value, "propagate_at_launch": propagate}));
        set.sort_by(|a, b| a["key"].as_str().cmp(&b["key"].as_str()));
        ctx.set(at, "tag", json!(set));
    }
    Ok(Value::Null)
}
