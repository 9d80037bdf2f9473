//! Amazon API Gateway v2 (HTTP APIs). CloudTrail logs it under `apigateway.amazonaws.com`
//! with the path parameters (`apiId`, `stageName`, `routeId`, `integrationId`) and the body
//! members in lowerCamelCase; responses carry the updated object in the same casing.

use serde_json::{Map, Value, json};

use super::super::ApiError;
use super::super::ctx::{ApiResult, Ctx};
use super::super::params;
use super::Handler;

/// The handler of an API Gateway v2 write call.
pub fn handler(api: &str) -> Option<Handler> {
    Some(match api {
        "UpdateApi" => update_api,
        "UpdateStage" => update_stage,
        "UpdateRoute" => update_route,
        "UpdateIntegration" => update_integration,
        "DeleteRoute" => delete_route,
        "TagResource" => tag_resource,
        "UntagResource" => untag_resource,
        _ => return None,
    })
}

fn not_found(what: &str, id: &str) -> ApiError {
    ApiError::new(
        "NotFoundException",
        format!("Invalid {what} identifier specified {id}"),
    )
}

fn api_of(ctx: &Ctx<'_>, p: &Value) -> Result<(String, usize), ApiError> {
    let id = params::string(p, "apiId")?;
    let at = ctx
        .find("aws_apigatewayv2_api", "id", id)
        .ok_or_else(|| not_found("API", id))?;
    Ok((id.to_owned(), at))
}

/// A member of `p` under `param` copied to `attr` of `block` (when given).
fn copy(block: &mut Map<String, Value>, p: &Value, fields: &[(&str, &str)]) {
    for (param, attr) in fields {
        if let Some(v) = p.get(*param).filter(|v| !v.is_null()) {
            block.insert((*attr).to_owned(), v.clone());
        }
    }
}

/// UpdateApi: the description and the CORS configuration.
fn update_api(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (id, at) = api_of(ctx, p)?;
    if let Some(description) = params::opt_string(p, "description") {
        ctx.set(at, "description", json!(description));
    }
    if let Some(cors) = p.get("corsConfiguration") {
        let mut block = ctx
            .attr(at, "cors_configuration")
            .get(0)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        copy(
            &mut block,
            cors,
            &[
                ("allowCredentials", "allow_credentials"),
                ("maxAge", "max_age"),
            ],
        );
        for (param, attr) in [
            ("allowHeaders", "allow_headers"),
            ("allowMethods", "allow_methods"),
            ("allowOrigins", "allow_origins"),
            ("exposeHeaders", "expose_headers"),
        ] {
            if cors.get(param).is_some() {
                let mut items = params::strings(cors.get(param));
                items.sort();
                block.insert(attr.to_owned(), json!(items));
            }
        }
        ctx.set(at, "cors_configuration", json!([block]));
    }
    Ok(json!({
        "apiId": id,
        "name": ctx.attr(at, "name"),
        "description": ctx.attr(at, "description"),
        "protocolType": ctx.attr(at, "protocol_type"),
        "apiEndpoint": ctx.attr(at, "api_endpoint"),
        "createdDate": ctx.iso_time(),
    }))
}

/// UpdateStage: the default route settings, description and stage variables.
fn update_stage(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, at) = child(ctx, p, ("aws_apigatewayv2_stage", "name"), "stageName")?;
    if let Some(description) = params::opt_string(p, "description") {
        ctx.set(at, "description", json!(description));
    }
    if let Some(settings) = p.get("defaultRouteSettings") {
        let mut block = ctx
            .attr(at, "default_route_settings")
            .get(0)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        copy(
            &mut block,
            settings,
            &[
                ("throttlingBurstLimit", "throttling_burst_limit"),
                ("throttlingRateLimit", "throttling_rate_limit"),
                ("detailedMetricsEnabled", "detailed_metrics_enabled"),
                ("dataTraceEnabled", "data_trace_enabled"),
                ("loggingLevel", "logging_level"),
            ],
        );
        ctx.set(at, "default_route_settings", json!([block]));
    }
    Ok(json!({
        "stageName": name,
        "autoDeploy": ctx.attr(at, "auto_deploy"),
        "deploymentId": ctx.attr(at, "deployment_id"),
        "defaultRouteSettings": p.get("defaultRouteSettings").cloned().unwrap_or(Value::Null),
        "lastUpdatedDate": ctx.iso_time(),
    }))
}

fn route(ctx: &Ctx<'_>, p: &Value) -> Result<(String, usize), ApiError> {
    child(ctx, p, ("aws_apigatewayv2_route", "id"), "routeId")
}

/// The API's resource of `kind` whose `key` attribute is the request's `param`: its key and
/// position.
fn child(
    ctx: &Ctx<'_>,
    p: &Value,
    (kind, key): (&str, &str),
    param: &str,
) -> Result<(String, usize), ApiError> {
    let (api, _) = api_of(ctx, p)?;
    let value = params::string(p, param)?;
    let at = ctx
        .find_all(kind, &[("api_id", &api), (key, value)])
        .first()
        .copied()
        .ok_or_else(|| {
            let what = kind.trim_start_matches("aws_apigatewayv2_");
            not_found(what, value)
        })?;
    Ok((value.to_owned(), at))
}

/// UpdateRoute: authorization and API key requirement.
fn update_route(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (id, at) = route(ctx, p)?;
    if let Some(kind) = params::opt_string(p, "authorizationType") {
        if !["NONE", "AWS_IAM", "CUSTOM", "JWT"].contains(&kind) {
            return Err(ApiError::new(
                "BadRequestException",
                "Invalid authorization type specified",
            ));
        }
        ctx.set(at, "authorization_type", json!(kind));
    }
    if let Some(required) = params::opt_bool(p, "apiKeyRequired") {
        ctx.set(at, "api_key_required", json!(required));
    }
    Ok(json!({
        "routeId": id,
        "routeKey": ctx.attr(at, "route_key"),
        "authorizationType": ctx.attr(at, "authorization_type"),
        "apiKeyRequired": ctx.attr(at, "api_key_required"),
        "target": ctx.attr(at, "target"),
    }))
}

/// DeleteRoute.
fn delete_route(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (_, at) = route(ctx, p)?;
    ctx.remove(at);
    Ok(Value::Null)
}

/// UpdateIntegration: the timeout (50 ms to 30 s for HTTP APIs) and description.
fn update_integration(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (id, at) = child(
        ctx,
        p,
        ("aws_apigatewayv2_integration", "id"),
        "integrationId",
    )?;
    if let Some(timeout) = params::opt_int(p, "timeoutInMillis") {
        if !(50..=30_000).contains(&timeout) {
            return Err(ApiError::new(
                "BadRequestException",
                "Timeout must be between 50 milliseconds and 30 seconds.",
            ));
        }
        ctx.set(at, "timeout_milliseconds", json!(timeout));
    }
    if let Some(description) = params::opt_string(p, "description") {
        ctx.set(at, "description", json!(description));
    }
    Ok(json!({
        "integrationId": id,
        "integrationType": ctx.attr(at, "integration_type"),
        "integrationUri": ctx.attr(at, "integration_uri"),
        "timeoutInMillis": ctx.attr(at, "timeout_milliseconds"),
        "payloadFormatVersion": ctx.attr(at, "payload_format_version"),
    }))
}

/// The API or stage an ARN names.
fn tagged(ctx: &Ctx<'_>, p: &Value) -> Result<usize, ApiError> {
    let arn = params::string(p, "resourceArn")?;
    ctx.find_any(
        &["aws_apigatewayv2_api", "aws_apigatewayv2_stage"],
        "arn",
        arn,
    )
    .ok_or_else(|| ApiError::new("NotFoundException", format!("Invalid resource {arn}")))
}

/// TagResource: tags as a map.
fn tag_resource(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = tagged(ctx, p)?;
    ctx.add_tags(at, &params::tag_map(p.get("tags")));
    Ok(Value::Null)
}

/// UntagResource.
fn untag_resource(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = tagged(ctx, p)?;
    ctx.remove_tags(at, &params::strings(p.get("tagKeys")));
    Ok(Value::Null)
}
