//! Changes at the edge: HTTP APIs (API, stage, route, integration), hosted zones, bucket
//! website and ownership settings, and OIDC identity providers.

use super::change::{Change, Kind, XMLNS, block, int, req, s3, text};
use reconciler::terraform::state::Instance;
use serde_json::{Value, json};

/// The changes that apply to one instance.
pub fn changes(instance: &Instance) -> Vec<Change> {
    match instance.resource_type.as_str() {
        "aws_apigatewayv2_api" => api(instance),
        "aws_apigatewayv2_stage" => stage(instance),
        "aws_apigatewayv2_route" => route(instance),
        "aws_apigatewayv2_integration" => integration(instance).into_iter().collect(),
        "aws_route53_zone" => vec![zone_comment(instance)],
        "aws_s3_bucket_website_configuration" => website(instance),
        "aws_s3_bucket_ownership_controls" => ownership(instance).into_iter().collect(),
        "aws_iam_openid_connect_provider" => thumbprint(instance).into_iter().collect(),
        _ => Vec::new(),
    }
}

fn api_call(params: Value) -> crate::sim::Request {
    req("apigateway.amazonaws.com", "UpdateApi", params)
}

/// An API's description reworded; its CORS cache time doubled; and, risky, its CORS
/// origins opened to every site.
fn api(instance: &Instance) -> Vec<Change> {
    let id = text(instance, "id");
    let name = text(instance, "name");
    let description = text(instance, "description");
    let new = format!("{description} (owned by the platform team)");
    let mut out = vec![
        Change::modify(
            "api-description",
            instance,
            format!("reworded the description of HTTP API {name}"),
            &["description"],
            vec![api_call(json!({"apiId": id, "description": new}))],
        )
        .undo(vec![api_call(
            json!({"apiId": id, "description": description}),
        )]),
    ];
    let cors = block(instance, "cors_configuration");
    if let Some(age) = cors.get("max_age").and_then(Value::as_i64) {
        let new_age = if age >= 3600 { age / 2 } else { age * 2 };
        let call = |a: i64| api_call(json!({"apiId": id, "corsConfiguration": {"maxAge": a}}));
        out.push(
            Change::modify(
                "api-cors-max-age",
                instance,
                format!("set the CORS max age of HTTP API {name} to {new_age} s (was {age})"),
                &["cors_configuration.0.max_age"],
                vec![call(new_age)],
            )
            .undo(vec![call(age)]),
        );
    }
    if let Some(origins) = cors.get("allow_origins").and_then(Value::as_array)
        && !origins.iter().any(|o| o == "*")
    {
        let mut open: Vec<Value> = origins.clone();
        open.push(json!("*"));
        out.push(
            Change::modify(
                "api-cors-any-origin",
                instance,
                format!("allowed every web origin on HTTP API {name}"),
                &["cors_configuration.0.allow_origins"],
                vec![api_call(
                    json!({"apiId": id, "corsConfiguration": {"allowOrigins": open}}),
                )],
            )
            .risky(),
        );
    }
    out
}

/// A stage's default throttling doubled; and, risky, full request logging switched on.
fn stage(instance: &Instance) -> Vec<Change> {
    let api = text(instance, "api_id");
    let name = text(instance, "name");
    let settings = block(instance, "default_route_settings");
    let call = |s: Value| {
        req(
            "apigateway.amazonaws.com",
            "UpdateStage",
            json!({"apiId": api, "stageName": name, "defaultRouteSettings": s}),
        )
    };
    let mut out = Vec::new();
    let burst = settings
        .get("throttling_burst_limit")
        .and_then(Value::as_i64);
    let rate = settings
        .get("throttling_rate_limit")
        .and_then(Value::as_f64);
    if let (Some(burst), Some(rate)) = (burst, rate)
        && burst > 0
    {
        let whole = |r: f64| match r.fract() == 0.0 {
            true => json!(r as i64),
            false => json!(r),
        };
        out.push(
            Change::modify(
                "stage-throttling",
                instance,
                format!(
                    "doubled the throttling of stage {name} to {} burst, {} per second",
                    burst * 2,
                    rate * 2.0
                ),
                &[
                    "default_route_settings.0.throttling_burst_limit",
                    "default_route_settings.0.throttling_rate_limit",
                ],
                vec![call(
                    json!({"throttlingBurstLimit": burst * 2, "throttlingRateLimit": whole(rate * 2.0)}),
                )],
            )
            .undo(vec![call(
                json!({"throttlingBurstLimit": burst, "throttlingRateLimit": whole(rate)}),
            )]),
        );
    }
    if settings.get("data_trace_enabled") == Some(&json!(false)) {
        out.push(
            Change::modify(
                "stage-data-trace",
                instance,
                format!("turned on full request and response logging on stage {name}"),
                &["default_route_settings.0.data_trace_enabled"],
                vec![call(json!({"dataTraceEnabled": true}))],
            )
            .risky(),
        );
    }
    out
}

/// A route made to require IAM authorization, and a route deleted.
fn route(instance: &Instance) -> Vec<Change> {
    let api = text(instance, "api_id");
    let id = text(instance, "id");
    let key = text(instance, "route_key");
    let current = text(instance, "authorization_type");
    let update = |kind: &str| {
        req(
            "apigateway.amazonaws.com",
            "UpdateRoute",
            json!({"apiId": api, "routeId": id, "authorizationType": kind}),
        )
    };
    let mut out = vec![
        Change::modify(
            "route-delete",
            instance,
            format!("deleted route {key}"),
            &[],
            vec![req(
                "apigateway.amazonaws.com",
                "DeleteRoute",
                json!({"apiId": api, "routeId": id}),
            )],
        )
        .kind(Kind::Delete),
    ];
    if current == "NONE" {
        out.push(
            Change::modify(
                "route-iam-auth",
                instance,
                format!("made route {key} require IAM authorization"),
                &["authorization_type"],
                vec![update("AWS_IAM")],
            )
            .undo(vec![update(current)]),
        );
    }
    out
}

/// An integration's timeout raised towards (or lowered from) the 30 s limit.
fn integration(instance: &Instance) -> Option<Change> {
    let current = int(instance, "timeout_milliseconds")?;
    let new = if current >= 29_000 { 15_000 } else { 29_000 };
    let (api, id) = (text(instance, "api_id"), text(instance, "id"));
    let call = |t: i64| {
        req(
            "apigateway.amazonaws.com",
            "UpdateIntegration",
            json!({"apiId": api, "integrationId": id, "timeoutInMillis": t}),
        )
    };
    Some(
        Change::modify(
            "integration-timeout",
            instance,
            format!("set an API integration's timeout to {new} ms (was {current})"),
            &["timeout_milliseconds"],
            vec![call(new)],
        )
        .undo(vec![call(current)]),
    )
}

/// A hosted zone's comment reworded.
fn zone_comment(instance: &Instance) -> Change {
    let id = text(instance, "zone_id");
    let current = text(instance, "comment");
    let new = format!("{current} - do not delete")
        .trim_start_matches(" - ")
        .to_owned();
    let call = |c: &str| {
        req(
            "route53.amazonaws.com",
            "UpdateHostedZoneComment",
            json!({"id": id, "comment": c}),
        )
    };
    Change::modify(
        "zone-comment",
        instance,
        format!(
            "changed the comment of hosted zone {}",
            text(instance, "name")
        ),
        &["comment"],
        vec![call(&new)],
    )
    .undo(vec![call(current)])
}

fn put_website(bucket: &str, index: &str, error: Option<&str>) -> crate::sim::Request {
    let mut config = json!({"xmlns": XMLNS, "IndexDocument": {"Suffix": index}});
    if let Some(key) = error {
        config["ErrorDocument"] = json!({"Key": key});
    }
    s3(
        "PutBucketWebsite",
        bucket,
        "WebsiteConfiguration",
        config,
        "website",
    )
}

/// A website's error page changed, and the website configuration removed.
fn website(instance: &Instance) -> Vec<Change> {
    let bucket = text(instance, "bucket");
    let mut out = vec![
        Change::modify(
            "website-delete",
            instance,
            format!("turned off static website hosting on bucket {bucket}"),
            &[],
            vec![s3(
                "DeleteBucketWebsite",
                bucket,
                "",
                json!(null),
                "website",
            )],
        )
        .kind(Kind::Delete),
    ];
    let index = block(instance, "index_document")["suffix"].as_str();
    let error = block(instance, "error_document")["key"].as_str();
    if let Some(index) = index {
        let new = if error == Some("error.html") {
            "404.html"
        } else {
            "error.html"
        };
        out.push(
            Change::modify(
                "website-error-page",
                instance,
                format!("made {new} the error page of the website on bucket {bucket}"),
                &["error_document"],
                vec![put_website(bucket, index, Some(new))],
            )
            .undo(vec![put_website(bucket, index, error)]),
        );
    }
    out
}

/// Object ownership moved between enforced and preferred bucket ownership.
fn ownership(instance: &Instance) -> Option<Change> {
    let bucket = text(instance, "bucket");
    let current = block(instance, "rule")["object_ownership"].as_str()?;
    let new = if current == "BucketOwnerEnforced" {
        "BucketOwnerPreferred"
    } else {
        "BucketOwnerEnforced"
    };
    let call = |o: &str| {
        s3(
            "PutBucketOwnershipControls",
            bucket,
            "OwnershipControls",
            json!({"xmlns": XMLNS, "Rule": {"ObjectOwnership": o}}),
            "ownershipControls",
        )
    };
    Some(
        Change::modify(
            "bucket-ownership",
            instance,
            format!("set object ownership of bucket {bucket} to {new}"),
            &["rule"],
            vec![call(new)],
        )
        .undo(vec![call(current)]),
    )
}

/// A second thumbprint trusted for an OIDC provider (a certificate rotation by hand).
fn thumbprint(instance: &Instance) -> Option<Change> {
    const ROTATED: &str = "1c58a3a8518e8759bf075b76b750d4f2df264fcd";
    let current: Vec<Value> = instance
        .attributes
        .get("thumbprint_list")?
        .as_array()?
        .clone();
    if current.iter().any(|t| t == ROTATED) {
        return None;
    }
    let mut new = current.clone();
    new.push(json!(ROTATED));
    let arn = text(instance, "arn");
    let call = |list: &[Value]| {
        req(
            "iam.amazonaws.com",
            "UpdateOpenIDConnectProviderThumbprint",
            json!({"openIDConnectProviderArn": arn, "thumbprintList": list}),
        )
    };
    Some(
        Change::modify(
            "oidc-thumbprint",
            instance,
            format!(
                "added a thumbprint to OIDC provider {}",
                text(instance, "url")
            ),
            &["thumbprint_list"],
            vec![call(&new)],
        )
        .undo(vec![call(&current)]),
    )
}
