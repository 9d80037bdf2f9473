//! Resources attached to a key, a function, a secret, a table or a load balancer: KMS grants
//! and key descriptions (multi-Region replicas and imported-material keys included), Lambda
//! aliases and URLs, asynchronous invocation, provisioned concurrency, recursion and layer versions,
//! Secrets Manager rotation, Application Auto Scaling targets and policies, and WAFv2 web ACL
//! associations and tags.

use serde_json::{Value, json};

use super::super::ApiError;
use super::super::ctx::{ApiResult, Ctx};
use super::super::params;
use super::lambda::function;
use super::misc::secret;
use super::{Handler, Service};

/// The handler of one of these calls.
pub fn handler(service: Service, api: &str) -> Option<Handler> {
    Some(match (service, api) {
        (Service::Kms, "CreateGrant") => create_grant,
        (Service::Kms, "RevokeGrant" | "RetireGrant") => revoke_grant,
        (Service::Kms, "UpdateKeyDescription") => update_key_description,
        (Service::Lambda, "UpdateFunctionUrlConfig") => update_url,
        (Service::Lambda, "UpdateFunctionEventInvokeConfig") => update_event_invoke,
        (Service::Lambda, "PutProvisionedConcurrencyConfig") => put_provisioned,
        (Service::Lambda, "DeleteProvisionedConcurrencyConfig") => delete_provisioned,
        (Service::Lambda, "PutFunctionRecursionConfig") => put_recursion,
        (Service::Lambda, "DeleteLayerVersion") => delete_layer_version,
        (Service::Lambda, "UpdateAlias") => update_alias,
        (Service::SecretsManager, "RotateSecret") => rotate_secret,
        (Service::SecretsManager, "CancelRotateSecret") => cancel_rotation,
        (Service::ApplicationAutoScaling, "RegisterScalableTarget") => register_target,
        (Service::ApplicationAutoScaling, "PutScalingPolicy") => put_scaling_policy,
        (Service::ApplicationAutoScaling, "DeleteScalingPolicy") => delete_scaling_policy,
        (Service::Wafv2, "DisassociateWebACL") => disassociate_web_acl,
        (Service::Wafv2, "TagResource") => tag_web_acl,
        _ => return None,
    })
}

/// The KMS key types a key id or ARN can name.
const KEY_TYPES: [&str; 3] = ["aws_kms_key", "aws_kms_replica_key", "aws_kms_external_key"];

/// The key of `keyId` (id or ARN) in the call's region: a multi-Region key and its replicas
/// share their id, so the region tells them apart.
fn regional_key(ctx: &Ctx<'_>, p: &Value) -> Result<usize, ApiError> {
    let given = params::string(p, "keyId")?;
    let id = given.rsplit('/').next().unwrap_or(given);
    let region = format!(":{}:", ctx.region);
    KEY_TYPES
        .iter()
        .flat_map(|t| ctx.find_all(t, &[("id", id)]))
        .find(|at| ctx.attr_str(*at, "arn").contains(&region))
        .ok_or_else(|| {
            let arn = ctx.arn("kms", &format!("key/{id}"));
            ApiError::new("NotFoundException", format!("Key '{arn}' does not exist"))
        })
}

/// CreateGrant: a grant on a key of this region; the response carries its id and token.
fn create_grant(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let key = regional_key(ctx, p)?;
    let key_id = ctx.attr_str(key, "id");
    let operations = params::strings(p.get("operations"));
    if operations.is_empty() {
        return Err(params::missing("operations"));
    }
    let grant_id = ctx.hex(64);
    let token = ctx.hex(128);
    ctx.create(
        "aws_kms_grant",
        json!({
            "id": format!("{key_id}:{grant_id}"), "grant_id": grant_id, "grant_token": token,
            "key_id": params::string(p, "keyId")?, "grantee_principal": params::string(p, "granteePrincipal")?,
            "operations": operations, "name": params::opt_string(p, "name").unwrap_or_default(),
            "retiring_principal": params::opt_string(p, "retiringPrincipal").unwrap_or_default(),
            "retire_on_delete": false, "grant_creation_tokens": null, "constraints": [],
        }),
    );
    Ok(json!({"grantId": grant_id, "grantToken": token}))
}

/// RevokeGrant / RetireGrant by key and grant id.
fn revoke_grant(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let key = regional_key(ctx, p)?;
    let id = format!(
        "{}:{}",
        ctx.attr_str(key, "id"),
        params::string(p, "grantId")?
    );
    let at = ctx
        .find("aws_kms_grant", "id", &id)
        .ok_or_else(|| ApiError::new("NotFoundException", "Grant not found"))?;
    ctx.remove(at);
    Ok(Value::Null)
}

/// UpdateKeyDescription.
fn update_key_description(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = regional_key(ctx, p)?;
    let description = params::string(p, "description")?.to_owned();
    ctx.set(at, "description", json!(description));
    Ok(Value::Null)
}

/// The instance of `resource_type` for the function a request names, or
/// `ResourceNotFoundException`.
fn of_function(
    ctx: &Ctx<'_>,
    p: &Value,
    resource_type: &str,
    extra: &[(&str, &str)],
) -> Result<usize, ApiError> {
    let at = function(ctx, p, "functionName")?;
    let name = ctx.attr_str(at, "function_name");
    let mut pairs = vec![("function_name", name.as_str())];
    pairs.extend_from_slice(extra);
    ctx.find_all(resource_type, &pairs)
        .first()
        .copied()
        .ok_or_else(|| {
            ApiError::new(
                "ResourceNotFoundException",
                format!("The resource you requested does not exist. ({name})"),
            )
        })
}

/// UpdateFunctionUrlConfig: the auth type and invoke mode given.
fn update_url(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = of_function(ctx, p, "aws_lambda_function_url", &[])?;
    for (param, attr) in [
        ("authType", "authorization_type"),
        ("invokeMode", "invoke_mode"),
    ] {
        if let Some(v) = params::opt_string(p, param) {
            ctx.set(at, attr, json!(v));
        }
    }
    Ok(json!({
        "functionUrl": ctx.attr(at, "function_url"), "functionArn": ctx.attr(at, "function_arn"),
        "authType": ctx.attr(at, "authorization_type"), "invokeMode": ctx.attr(at, "invoke_mode"),
        "lastModifiedTime": ctx.iso_time(),
    }))
}

/// UpdateFunctionEventInvokeConfig: the settings the request gives.
fn update_event_invoke(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = of_function(ctx, p, "aws_lambda_function_event_invoke_config", &[])?;
    for (param, attr) in [
        ("maximumRetryAttempts", "maximum_retry_attempts"),
        ("maximumEventAgeInSeconds", "maximum_event_age_in_seconds"),
    ] {
        if let Some(v) = params::opt_int(p, param) {
            ctx.set(at, attr, json!(v));
        }
    }
    Ok(json!({"functionArn": ctx.attr(at, "function_name"), "lastModified": ctx.iso_time()}))
}

/// PutProvisionedConcurrencyConfig on an alias or version that has a configuration.
fn put_provisioned(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let qualifier = params::string(p, "qualifier")?;
    let at = of_function(
        ctx,
        p,
        "aws_lambda_provisioned_concurrency_config",
        &[("qualifier", qualifier)],
    )?;
    let n = params::int(p, "provisionedConcurrentExecutions")?;
    ctx.set(at, "provisioned_concurrent_executions", json!(n));
    Ok(
        json!({"requestedProvisionedConcurrentExecutions": n, "status": "IN_PROGRESS",
              "lastModified": ctx.iso_time()}),
    )
}

/// DeleteProvisionedConcurrencyConfig.
fn delete_provisioned(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let qualifier = params::string(p, "qualifier")?;
    let at = of_function(
        ctx,
        p,
        "aws_lambda_provisioned_concurrency_config",
        &[("qualifier", qualifier)],
    )?;
    ctx.remove(at);
    Ok(Value::Null)
}

/// PutFunctionRecursionConfig: `Allow` or `Terminate`.
fn put_recursion(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let loop_ = params::string(p, "recursiveLoop")?.to_owned();
    if loop_ != "Allow" && loop_ != "Terminate" {
        return Err(ApiError::new(
            "ValidationException",
            format!("Value '{loop_}' at 'recursiveLoop' failed to satisfy constraint"),
        ));
    }
    let at = of_function(ctx, p, "aws_lambda_function_recursion_config", &[])?;
    ctx.set(at, "recursive_loop", json!(loop_));
    Ok(json!({"recursiveLoop": loop_}))
}

/// DeleteLayerVersion: succeeds whether or not the version exists, as Lambda does.
fn delete_layer_version(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let layer = params::string(p, "layerName")?;
    let version = params::int(p, "versionNumber")?.to_string();
    let layer_arn = if layer.starts_with("arn:") {
        layer.to_owned()
    } else {
        ctx.arn("lambda", &format!("layer:{layer}"))
    };
    let found = ctx.find_all(
        "aws_lambda_layer_version",
        &[("layer_arn", &layer_arn), ("version", &version)],
    );
    ctx.remove_all(found);
    Ok(Value::Null)
}

/// UpdateAlias: the version and description given.
fn update_alias(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let name = params::string(p, "name")?.to_owned();
    let at = of_function(ctx, p, "aws_lambda_alias", &[("name", &name)])?;
    for (param, attr) in [
        ("functionVersion", "function_version"),
        ("description", "description"),
    ] {
        if let Some(v) = params::opt_string(p, param) {
            ctx.set(at, attr, json!(v));
        }
    }
    Ok(json!({"aliasArn": ctx.attr(at, "arn"), "name": name,
              "functionVersion": ctx.attr(at, "function_version"), "description": ctx.attr(at, "description")}))
}

/// RotateSecret: with rules, sets (or replaces) the rotation and rotates.
fn rotate_secret(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = secret(ctx, p)?;
    let arn = ctx.attr_str(at, "arn");
    let rotation = match ctx.find("aws_secretsmanager_secret_rotation", "secret_id", &arn) {
        Some(r) => r,
        None => ctx.create(
            "aws_secretsmanager_secret_rotation",
            json!({"id": arn, "secret_id": arn, "rotate_immediately": true, "rotation_rules": []}),
        ),
    };
    if let Some(lambda) = params::opt_string(p, "rotationLambdaARN") {
        ctx.set(rotation, "rotation_lambda_arn", json!(lambda));
    }
    if let Some(rules) = p.get("rotationRules") {
        ctx.set(
            rotation,
            "rotation_rules",
            json!([{
                "automatically_after_days": params::opt_int(rules, "automaticallyAfterDays"),
                "duration": params::opt_string(rules, "duration").unwrap_or_default(),
                "schedule_expression": params::opt_string(rules, "scheduleExpression").unwrap_or_default(),
            }]),
        );
    }
    ctx.set(rotation, "rotation_enabled", json!(true));
    let version = ctx.uuid();
    Ok(json!({"aRN": arn, "name": ctx.attr(at, "name"), "versionId": version}))
}

/// CancelRotateSecret: rotation off, so the provider no longer finds a rotation.
fn cancel_rotation(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = secret(ctx, p)?;
    let arn = ctx.attr_str(at, "arn");
    let found = ctx.find_all("aws_secretsmanager_secret_rotation", &[("secret_id", &arn)]);
    ctx.remove_all(found);
    Ok(json!({"aRN": arn, "name": ctx.attr(at, "name")}))
}

/// The Application Auto Scaling instance of `resource_type` a request names by namespace,
/// resource and (for targets) dimension or (for policies) policy name.
fn scaling(ctx: &Ctx<'_>, p: &Value, resource_type: &str, key: (&str, &str)) -> Option<usize> {
    let namespace = params::opt_string(p, "serviceNamespace")?;
    let resource = params::opt_string(p, "resourceId")?;
    let value = params::opt_string(p, key.1)?;
    ctx.find_all(
        resource_type,
        &[
            ("service_namespace", namespace),
            ("resource_id", resource),
            (key.0, value),
        ],
    )
    .first()
    .copied()
}

/// Application Auto Scaling's answer for an unknown target or policy.
fn scaling_not_found(what: &str) -> ApiError {
    ApiError::new(
        "ObjectNotFoundException",
        format!("No {what} found for the given resource"),
    )
}

/// RegisterScalableTarget on a registered target: the capacities given.
fn register_target(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = scaling(
        ctx,
        p,
        "aws_appautoscaling_target",
        ("scalable_dimension", "scalableDimension"),
    )
    .ok_or_else(|| scaling_not_found("scalable target"))?;
    let min = params::opt_int(p, "minCapacity")
        .unwrap_or_else(|| ctx.attr(at, "min_capacity").as_i64().unwrap_or(0));
    let max = params::opt_int(p, "maxCapacity")
        .unwrap_or_else(|| ctx.attr(at, "max_capacity").as_i64().unwrap_or(0));
    if min > max {
        return Err(ApiError::new(
            "ValidationException",
            "Minimum capacity cannot be greater than maximum capacity",
        ));
    }
    ctx.set(at, "min_capacity", json!(min));
    ctx.set(at, "max_capacity", json!(max));
    Ok(json!({"scalableTargetARN": ctx.attr(at, "arn")}))
}

/// PutScalingPolicy on an existing target tracking policy: its target value.
fn put_scaling_policy(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = scaling(ctx, p, "aws_appautoscaling_policy", ("name", "policyName"))
        .ok_or_else(|| scaling_not_found("scaling policy"))?;
    let config = p
        .get("targetTrackingScalingPolicyConfiguration")
        .ok_or_else(|| params::missing("targetTrackingScalingPolicyConfiguration"))?;
    let target = config
        .get("targetValue")
        .and_then(params::as_float)
        .ok_or_else(|| params::missing("targetValue"))?;
    let mut tracking = ctx.attr(at, "target_tracking_scaling_policy_configuration");
    tracking[0]["target_value"] = json!(target);
    ctx.set(at, "target_tracking_scaling_policy_configuration", tracking);
    Ok(json!({"policyARN": ctx.attr(at, "arn"), "alarms": []}))
}

/// DeleteScalingPolicy.
fn delete_scaling_policy(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = scaling(ctx, p, "aws_appautoscaling_policy", ("name", "policyName"))
        .ok_or_else(|| scaling_not_found("scaling policy"))?;
    ctx.remove(at);
    Ok(Value::Null)
}

/// DisassociateWebACL: the resource's association goes (none is no error).
fn disassociate_web_acl(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let resource = params::string(p, "resourceArn")?.to_owned();
    let found = ctx.find_all(
        "aws_wafv2_web_acl_association",
        &[("resource_arn", &resource)],
    );
    ctx.remove_all(found);
    Ok(Value::Null)
}

/// WAFv2 TagResource on a web ACL.
fn tag_web_acl(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let arn = params::string(p, "resourceARN")?;
    let at = ctx.find("aws_wafv2_web_acl", "arn", arn).ok_or_else(|| {
        ApiError::new(
            "WAFNonexistentItemException",
            "AWS WAF couldn’t perform the operation because your resource doesn’t exist.",
        )
    })?;
    ctx.add_tags(at, &params::tag_list(p.get("tags")));
    Ok(Value::Null)
}
