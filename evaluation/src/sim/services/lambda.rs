//! AWS Lambda function configuration, concurrency and tags.

use serde_json::{Value, json};

use super::super::ApiError;
use super::super::ctx::{ApiResult, Ctx};
use super::super::params;
use super::Handler;

/// The handler of a Lambda write call (by API name, version suffix removed).
pub fn handler(api: &str) -> Option<Handler> {
    Some(match api {
        "UpdateFunctionConfiguration" => update_function_configuration,
        "PutFunctionConcurrency" => put_function_concurrency,
        "DeleteFunctionConcurrency" => delete_function_concurrency,
        "TagResource" => tag_resource,
        "UntagResource" => untag_resource,
        _ => return None,
    })
}

/// The function of a name, ARN or partial ARN, or `ResourceNotFoundException`.
pub(super) fn function(ctx: &Ctx<'_>, p: &Value, key: &str) -> Result<usize, ApiError> {
    let given = params::string(p, key)?;
    let name = match given.split_once(":function:") {
        Some((_, rest)) => rest.split(':').next().unwrap_or(rest),
        None => given,
    };
    ctx.find("aws_lambda_function", "function_name", name)
        .or_else(|| ctx.find("aws_lambda_function", "arn", given))
        .ok_or_else(|| {
            let arn = ctx.arn("lambda", &format!("function:{name}"));
            ApiError::new(
                "ResourceNotFoundException",
                format!("Function not found: {arn}"),
            )
        })
}

/// Scalar settings and their Terraform attributes.
const SCALARS: [(&str, &str); 6] = [
    ("memorySize", "memory_size"),
    ("timeout", "timeout"),
    ("handler", "handler"),
    ("runtime", "runtime"),
    ("description", "description"),
    ("role", "role"),
];

/// UpdateFunctionConfiguration: changes only what the request gives.
fn update_function_configuration(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = function(ctx, p, "functionName")?;
    if let Some(memory) = params::opt_int(p, "memorySize")
        && !(128..=10240).contains(&memory)
    {
        return Err(ApiError::new(
            "InvalidParameterValueException",
            format!(
                "1 validation error detected: Value '{memory}' at 'memorySize' failed to satisfy constraint: Member must have value between 128 and 10240"
            ),
        ));
    }
    for (param, attr) in SCALARS {
        if let Some(v) = p.get(param) {
            ctx.set(at, attr, v.clone());
        }
    }
    if let Some(env) = p.get("environment") {
        let variables = env.get("variables").cloned().unwrap_or_else(|| json!({}));
        let block = match variables.as_object().is_some_and(|m| m.is_empty()) {
            true => json!([]),
            false => json!([{"variables": variables}]),
        };
        ctx.set(at, "environment", block);
    }
    if let Some(layers) = p.get("layers") {
        ctx.set(at, "layers", layers.clone());
    }
    if let Some(mode) = p.get("tracingConfig").and_then(|t| t.get("mode")) {
        ctx.set(at, "tracing_config", json!([{"mode": mode}]));
    }
    if let Some(size) = p.get("ephemeralStorage").and_then(|e| e.get("size")) {
        ctx.set(at, "ephemeral_storage", json!([{"size": size}]));
    }
    let modified = ctx.time.format("%Y-%m-%dT%H:%M:%S%.3f+0000").to_string();
    ctx.set(at, "last_modified", json!(modified));
    let revision = ctx.uuid();
    Ok(configuration(ctx, at, &revision))
}

/// The function configuration Lambda answers with.
fn configuration(ctx: &Ctx<'_>, at: usize, revision: &str) -> Value {
    let name = ctx.attr(at, "function_name");
    let variables = ctx
        .attr(at, "environment")
        .get(0)
        .and_then(|e| e.get("variables"))
        .cloned();
    json!({
        "functionName": name,
        "functionArn": ctx.attr(at, "arn"),
        "runtime": ctx.attr(at, "runtime"),
        "role": ctx.attr(at, "role"),
        "handler": ctx.attr(at, "handler"),
        "codeSize": ctx.attr(at, "source_code_size"),
        "description": ctx.attr(at, "description"),
        "timeout": ctx.attr(at, "timeout"),
        "memorySize": ctx.attr(at, "memory_size"),
        "lastModified": ctx.attr(at, "last_modified"),
        "codeSha256": ctx.attr(at, "source_code_hash"),
        "version": "$LATEST",
        "environment": match variables { Some(v) => json!({"variables": v}), None => json!({}) },
        "tracingConfig": {"mode": ctx.attr(at, "tracing_config").get(0).and_then(|t| t.get("mode")).cloned().unwrap_or(json!("PassThrough"))},
        "revisionId": revision,
        "state": "Active",
        "lastUpdateStatus": "InProgress",
        "lastUpdateStatusReason": "The function is being created.",
        "lastUpdateStatusReasonCode": "Creating",
        "packageType": "Zip",
        "architectures": ["x86_64"],
        "ephemeralStorage": {"size": ctx.attr(at, "ephemeral_storage").get(0).and_then(|e| e.get("size")).cloned().unwrap_or(json!(512))},
        "snapStart": {"applyOn": "None", "optimizationStatus": "Off"},
        "loggingConfig": {"logFormat": "Text", "logGroup": format!("/aws/lambda/{}", name.as_str().unwrap_or_default())},
    })
}

/// PutFunctionConcurrency.
fn put_function_concurrency(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = function(ctx, p, "functionName")?;
    let reserved = params::int(p, "reservedConcurrentExecutions")?;
    if reserved < 0 {
        return Err(ApiError::new(
            "InvalidParameterValueException",
            "ReservedConcurrentExecutions must be non-negative",
        ));
    }
    ctx.set(at, "reserved_concurrent_executions", json!(reserved));
    Ok(json!({"reservedConcurrentExecutions": reserved}))
}

/// DeleteFunctionConcurrency: back to unreserved (`-1` in state).
fn delete_function_concurrency(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = function(ctx, p, "functionName")?;
    ctx.set(at, "reserved_concurrent_executions", json!(-1));
    Ok(Value::Null)
}

/// TagResource.
fn tag_resource(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = function(ctx, p, "resource")?;
    ctx.add_tags(at, &params::tag_map(p.get("tags")));
    Ok(Value::Null)
}

/// UntagResource.
fn untag_resource(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = function(ctx, p, "resource")?;
    ctx.remove_tags(at, &params::strings(p.get("tagKeys")));
    Ok(Value::Null)
}
