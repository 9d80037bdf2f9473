//! Elastic Load Balancing v2: target group health checks and attributes, load balancer
//! attributes, listeners, registered targets, listener certificates and tags.

use serde_json::{Value, json};

use super::super::ApiError;
use super::super::ctx::{ApiResult, Ctx};
use super::super::params::{self, list};
use super::Handler;

/// The handler of an ELBv2 write call.
pub fn handler(api: &str) -> Option<Handler> {
    Some(match api {
        "ModifyTargetGroup" => modify_target_group,
        "ModifyTargetGroupAttributes" => modify_target_group_attributes,
        "ModifyLoadBalancerAttributes" => modify_load_balancer_attributes,
        "ModifyListener" => modify_listener,
        "AddTags" => add_tags,
        "RemoveTags" => remove_tags,
        "RegisterTargets" => register_targets,
        "DeregisterTargets" => deregister_targets,
        "AddListenerCertificates" => add_listener_certificates,
        "RemoveListenerCertificates" => remove_listener_certificates,
        _ => return None,
    })
}

fn target_group(ctx: &Ctx<'_>, p: &Value) -> Result<usize, ApiError> {
    let arn = params::string(p, "targetGroupArn")?;
    ctx.find_any(&["aws_lb_target_group", "aws_alb_target_group"], "arn", arn)
        .ok_or_else(|| ApiError::new("TargetGroupNotFound", "One or more target groups not found"))
}

/// Health check request fields and their `health_check` attributes.
const HEALTH: [(&str, &str); 8] = [
    ("healthCheckEnabled", "enabled"),
    ("healthCheckPath", "path"),
    ("healthCheckPort", "port"),
    ("healthCheckProtocol", "protocol"),
    ("healthCheckIntervalSeconds", "interval"),
    ("healthCheckTimeoutSeconds", "timeout"),
    ("healthyThresholdCount", "healthy_threshold"),
    ("unhealthyThresholdCount", "unhealthy_threshold"),
];

/// ModifyTargetGroup: the health check.
fn modify_target_group(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = target_group(ctx, p)?;
    let mut check = ctx
        .attr(at, "health_check")
        .get(0)
        .cloned()
        .unwrap_or_else(|| json!({}));
    for (param, attr) in HEALTH {
        if let Some(v) = p.get(param) {
            check[attr] = v.clone();
        }
    }
    if let Some(code) = p.get("matcher").and_then(|m| m.get("httpCode")) {
        check["matcher"] = code.clone();
    }
    ctx.set(at, "health_check", json!([check]));
    Ok(json!({"targetGroups": [{
        "targetGroupArn": ctx.attr(at, "arn"),
        "targetGroupName": ctx.attr(at, "name"),
        "healthCheckPath": check.get("path"),
        "healthCheckIntervalSeconds": check.get("interval"),
        "healthyThresholdCount": check.get("healthy_threshold"),
        "unhealthyThresholdCount": check.get("unhealthy_threshold"),
    }]}))
}

/// The `(key, value)` pairs of an `attributes` list.
fn attributes(p: &Value) -> Vec<(String, String)> {
    params::tag_list(p.get("attributes"))
}

/// Sets a nested block field: `block[0].field`.
fn set_block(ctx: &mut Ctx<'_>, at: usize, block: &str, field: &str, value: Value) {
    let mut element = ctx
        .attr(at, block)
        .get(0)
        .cloned()
        .unwrap_or_else(|| json!({}));
    element[field] = value;
    ctx.set(at, block, json!([element]));
}

fn as_bool(text: &str) -> Value {
    json!(text == "true")
}

fn as_number(text: &str) -> Value {
    text.parse::<i64>()
        .map_or_else(|_| json!(text), |n| json!(n))
}

/// ModifyTargetGroupAttributes.
fn modify_target_group_attributes(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = target_group(ctx, p)?;
    let given = attributes(p);
    for (key, value) in &given {
        match key.as_str() {
            "deregistration_delay.timeout_seconds" => {
                ctx.set(at, "deregistration_delay", json!(value))
            }
            "deregistration_delay.connection_termination.enabled" => {
                ctx.set(at, "connection_termination", as_bool(value))
            }
            "slow_start.duration_seconds" => ctx.set(at, "slow_start", as_number(value)),
            "load_balancing.algorithm.type" => {
                ctx.set(at, "load_balancing_algorithm_type", json!(value))
            }
            "proxy_protocol_v2.enabled" => ctx.set(at, "proxy_protocol_v2", as_bool(value)),
            "preserve_client_ip.enabled" => ctx.set(at, "preserve_client_ip", json!(value)),
            "stickiness.enabled" => set_block(ctx, at, "stickiness", "enabled", as_bool(value)),
            "stickiness.type" => set_block(ctx, at, "stickiness", "type", json!(value)),
            "stickiness.lb_cookie.duration_seconds" => {
                set_block(ctx, at, "stickiness", "cookie_duration", as_number(value))
            }
            other => return Err(invalid_attribute(other)),
        }
    }
    Ok(
        json!({"attributes": given.iter().map(|(k, v)| json!({"key": k, "value": v})).collect::<Vec<_>>()}),
    )
}

fn invalid_attribute(key: &str) -> ApiError {
    ApiError::new(
        "InvalidConfigurationRequest",
        format!("Attribute key '{key}' is not recognized"),
    )
}

/// ModifyLoadBalancerAttributes.
fn modify_load_balancer_attributes(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let arn = params::string(p, "loadBalancerArn")?;
    let at = ctx
        .find_any(&["aws_lb", "aws_alb"], "arn", arn)
        .ok_or_else(|| {
            ApiError::new(
                "LoadBalancerNotFound",
                format!("Load balancer '{arn}' not found"),
            )
        })?;
    let given = attributes(p);
    for (key, value) in &given {
        match key.as_str() {
            "idle_timeout.timeout_seconds" => ctx.set(at, "idle_timeout", as_number(value)),
            "deletion_protection.enabled" => {
                ctx.set(at, "enable_deletion_protection", as_bool(value))
            }
            "routing.http2.enabled" => ctx.set(at, "enable_http2", as_bool(value)),
            "routing.http.drop_invalid_header_fields.enabled" => {
                ctx.set(at, "drop_invalid_header_fields", as_bool(value))
            }
            "load_balancing.cross_zone.enabled" => {
                ctx.set(at, "enable_cross_zone_load_balancing", as_bool(value))
            }
            "access_logs.s3.enabled" => {
                set_block(ctx, at, "access_logs", "enabled", as_bool(value))
            }
            "access_logs.s3.bucket" => set_block(ctx, at, "access_logs", "bucket", json!(value)),
            "access_logs.s3.prefix" => set_block(ctx, at, "access_logs", "prefix", json!(value)),
            "routing.http.desync_mitigation_mode" => {
                ctx.set(at, "desync_mitigation_mode", json!(value))
            }
            "waf.fail_open.enabled" => ctx.set(at, "enable_waf_fail_open", as_bool(value)),
            other => return Err(invalid_attribute(other)),
        }
    }
    Ok(
        json!({"attributes": given.iter().map(|(k, v)| json!({"key": k, "value": v})).collect::<Vec<_>>()}),
    )
}

/// ModifyListener: port, protocol, TLS policy, certificate and default actions.
fn modify_listener(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let arn = params::string(p, "listenerArn")?;
    let at = ctx
        .find_any(&["aws_lb_listener", "aws_alb_listener"], "arn", arn)
        .ok_or_else(|| ApiError::new("ListenerNotFound", "One or more listeners not found"))?;
    for (param, attr) in [
        ("port", "port"),
        ("protocol", "protocol"),
        ("sslPolicy", "ssl_policy"),
    ] {
        if let Some(v) = p.get(param) {
            ctx.set(at, attr, v.clone());
        }
    }
    if let Some(cert) = list(p.get("certificates"))
        .first()
        .and_then(|c| c.get("certificateArn"))
    {
        ctx.set(at, "certificate_arn", cert.clone());
    }
    let actions: Vec<Value> = list(p.get("defaultActions"))
        .into_iter()
        .enumerate()
        .map(|(n, a)| default_action(a, n))
        .collect();
    if !actions.is_empty() {
        ctx.set(at, "default_action", json!(actions));
    }
    Ok(json!({"listeners": [{
        "listenerArn": arn,
        "loadBalancerArn": ctx.attr(at, "load_balancer_arn"),
        "port": ctx.attr(at, "port"),
        "protocol": ctx.attr(at, "protocol"),
        "defaultActions": p.get("defaultActions").cloned().unwrap_or(json!([])),
    }]}))
}

/// One `default_action` element in Terraform's shape.
fn default_action(action: &Value, n: usize) -> Value {
    let redirect = action.get("redirectConfig").map(|r| {
        json!([{
            "host": r.get("host").cloned().unwrap_or(json!("#{host}")),
            "path": r.get("path").cloned().unwrap_or(json!("/#{path}")),
            "port": r.get("port").cloned().unwrap_or(json!("#{port}")),
            "protocol": r.get("protocol").cloned().unwrap_or(json!("#{protocol}")),
            "query": r.get("query").cloned().unwrap_or(json!("#{query}")),
            "status_code": r.get("statusCode"),
        }])
    });
    let fixed = action.get("fixedResponseConfig").map(|f| {
        json!([{
            "content_type": f.get("contentType"),
            "message_body": f.get("messageBody").cloned().unwrap_or(json!("")),
            "status_code": f.get("statusCode"),
        }])
    });
    json!({
        "type": action.get("type"),
        "order": action.get("order").cloned().unwrap_or(json!(n + 1)),
        "target_group_arn": action.get("targetGroupArn").cloned().unwrap_or(json!("")),
        "redirect": redirect.unwrap_or(json!([])),
        "fixed_response": fixed.unwrap_or(json!([])),
        "forward": [],
        "authenticate_cognito": [],
        "authenticate_oidc": [],
    })
}

/// The load balancers, target groups and listeners of `resourceArns`.
fn tagged(ctx: &Ctx<'_>, p: &Value) -> Result<Vec<usize>, ApiError> {
    let types = [
        "aws_lb",
        "aws_alb",
        "aws_lb_target_group",
        "aws_alb_target_group",
        "aws_lb_listener",
        "aws_alb_listener",
    ];
    params::strings(p.get("resourceArns"))
        .iter()
        .map(|arn| {
            ctx.find_any(&types, "arn", arn).ok_or_else(|| {
                ApiError::new(
                    "LoadBalancerNotFound",
                    format!("Load balancer '{arn}' not found"),
                )
            })
        })
        .collect()
}

/// AddTags.
fn add_tags(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let tags = params::tag_list(p.get("tags"));
    for at in tagged(ctx, p)? {
        ctx.add_tags(at, &tags);
    }
    Ok(Value::Null)
}

/// RemoveTags.
fn remove_tags(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let keys = params::strings(p.get("tagKeys"));
    for at in tagged(ctx, p)? {
        ctx.remove_tags(at, &keys);
    }
    Ok(Value::Null)
}

/// The registrations of `target` with the target group, as attachments.
fn registrations(ctx: &Ctx<'_>, group: &str, target: &Value) -> Result<Vec<usize>, ApiError> {
    let id = params::string(target, "id")?;
    let mut pairs = vec![("target_group_arn", group), ("target_id", id)];
    let port = params::opt_int(target, "port").map(|p| p.to_string());
    if let Some(port) = &port {
        pairs.push(("port", port));
    }
    Ok(ctx.find_all("aws_lb_target_group_attachment", &pairs))
}

/// RegisterTargets: each target not yet registered becomes an attachment.
fn register_targets(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let group = ctx.attr_str(target_group(ctx, p)?, "arn");
    for target in list(p.get("targets")) {
        if !registrations(ctx, &group, target)?.is_empty() {
            continue;
        }
        let stamp = format!(
            "{}{:04}",
            ctx.time.format("%Y%m%d%H%M%S"),
            ctx.time.timestamp_subsec_micros() / 100
        );
        let counter = ctx.hex(8);
        ctx.create(
            "aws_lb_target_group_attachment",
            json!({
                "id": format!("{group}-{stamp}{counter}"),
                "target_group_arn": group,
                "target_id": target.get("id"),
                "port": target.get("port"),
                "availability_zone": target.get("availabilityZone"),
            }),
        );
    }
    Ok(Value::Null)
}

/// DeregisterTargets.
fn deregister_targets(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let group = ctx.attr_str(target_group(ctx, p)?, "arn");
    let mut found = Vec::new();
    for target in list(p.get("targets")) {
        found.extend(registrations(ctx, &group, target)?);
    }
    ctx.remove_all(found);
    Ok(Value::Null)
}

/// The listener of `listenerArn` and the certificate ARNs of a certificates call.
fn listener_certificates(ctx: &Ctx<'_>, p: &Value) -> Result<(String, Vec<String>), ApiError> {
    let arn = params::string(p, "listenerArn")?;
    ctx.find("aws_lb_listener", "arn", arn)
        .ok_or_else(|| ApiError::new("ListenerNotFound", "One or more listeners not found"))?;
    let certificates = list(p.get("certificates"))
        .into_iter()
        .filter_map(|c| params::opt_string(c, "certificateArn").map(str::to_owned))
        .collect();
    Ok((arn.to_owned(), certificates))
}

/// AddListenerCertificates: each certificate the listener does not serve yet.
fn add_listener_certificates(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (listener, certificates) = listener_certificates(ctx, p)?;
    for cert in &certificates {
        let pairs = [
            ("listener_arn", listener.as_str()),
            ("certificate_arn", cert),
        ];
        if ctx
            .find_all("aws_lb_listener_certificate", &pairs)
            .is_empty()
        {
            ctx.create(
                "aws_lb_listener_certificate",
                json!({"id": format!("{listener}_{cert}"), "listener_arn": listener, "certificate_arn": cert}),
            );
        }
    }
    let listed: Vec<Value> = certificates
        .iter()
        .map(|c| json!({"certificateArn": c, "isDefault": false}))
        .collect();
    Ok(json!({"certificates": listed}))
}

/// RemoveListenerCertificates.
fn remove_listener_certificates(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (listener, certificates) = listener_certificates(ctx, p)?;
    let mut found = Vec::new();
    for cert in &certificates {
        let pairs = [
            ("listener_arn", listener.as_str()),
            ("certificate_arn", cert),
        ];
        found.extend(ctx.find_all("aws_lb_listener_certificate", &pairs));
    }
    ctx.remove_all(found);
    Ok(Value::Null)
}
