//! Changes to the resources attached to a bucket, a key, a function, a secret, a table or a
//! load balancer: S3 bucket configurations kept as their own resources (acceleration,
//! requester pays, CORS, Intelligent-Tiering, Object Lock, replication, analytics, inventory,
//! request metrics), object legal holds, directory buckets, KMS grants and the descriptions of
//! replica and imported-material keys, Lambda URLs, asynchronous invocation, provisioned
//! concurrency, recursion, aliases and layers, secret rotation, and Application Auto Scaling. Each
//! generator fires on its own resource type only, so the projects without these types keep
//! their scenarios.

use super::change::{Change, Kind, XMLNS, block, int, req, s3, text};
use crate::sim::Request;
use reconciler::terraform::state::Instance;
use serde_json::{Value, json};

/// The changes that apply to one instance; `all` is every managed instance of the state.
pub fn changes(instance: &Instance, all: &[Instance]) -> Vec<Change> {
    match instance.resource_type.as_str() {
        "aws_s3_bucket_accelerate_configuration" => toggle(instance, ACCELERATE),
        "aws_s3_bucket_request_payment_configuration" => toggle(instance, REQUEST_PAYMENT),
        "aws_s3_bucket_cors_configuration" => vec![bucket_delete(
            instance,
            "DeleteBucketCors",
            "cors",
            "s3-cors-delete",
            "CORS rules",
        )],
        "aws_s3_bucket_replication_configuration" => vec![bucket_delete(
            instance,
            "DeleteBucketReplication",
            "replication",
            "s3-replication-delete",
            "replication",
        )],
        "aws_s3_bucket_intelligent_tiering_configuration" => tiering(instance),
        "aws_s3_bucket_object_lock_configuration" => object_lock(instance),
        "aws_s3_bucket_inventory" => inventory(instance),
        "aws_s3_bucket_analytics_configuration" => vec![named_delete(
            instance,
            "DeleteBucketAnalyticsConfiguration",
            "analytics",
            "s3-analytics-delete",
        )],
        "aws_s3_bucket_metric" => metric(instance, all),
        "aws_s3_object" => legal_hold(instance, all),
        "aws_s3_directory_bucket" => vec![directory_bucket_delete(instance)],
        "aws_kms_grant" => grant(instance),
        "aws_kms_replica_key" | "aws_kms_external_key" => key_description(instance),
        "aws_lambda_function_event_invoke_config" => event_invoke(instance),
        "aws_lambda_function_url" => function_url(instance),
        "aws_lambda_provisioned_concurrency_config" => provisioned(instance),
        "aws_lambda_function_recursion_config" => recursion(instance),
        "aws_lambda_layer_version" => vec![layer_delete(instance)],
        "aws_lambda_alias" => vec![alias_description(instance)],
        "aws_secretsmanager_secret_rotation" => rotation(instance),
        "aws_appautoscaling_target" => scalable_target(instance),
        "aws_appautoscaling_policy" => scaling_policy(instance),
        _ => Vec::new(),
    }
}

/// A bucket setting with two values: the S3 call, its body's root and subresource, the
/// attribute and the two values.
struct Toggle {
    name: &'static str,
    api: &'static str,
    root: &'static str,
    field: &'static str,
    marker: &'static str,
    attribute: &'static str,
    values: [&'static str; 2],
    what: &'static str,
}

const ACCELERATE: Toggle = Toggle {
    name: "s3-accelerate",
    api: "PutBucketAccelerateConfiguration",
    root: "AccelerateConfiguration",
    field: "Status",
    marker: "accelerate",
    attribute: "status",
    values: ["Enabled", "Suspended"],
    what: "transfer acceleration",
};

const REQUEST_PAYMENT: Toggle = Toggle {
    name: "s3-requester-pays",
    api: "PutBucketRequestPayment",
    root: "RequestPaymentConfiguration",
    field: "Payer",
    marker: "requestPayment",
    attribute: "payer",
    values: ["BucketOwner", "Requester"],
    what: "the payer of requests",
};

/// The setting switched to its other value, and back as the undo.
fn toggle(instance: &Instance, t: Toggle) -> Vec<Change> {
    let bucket = text(instance, "bucket");
    let current = text(instance, t.attribute);
    let Some(other) = t.values.iter().find(|v| **v != current) else {
        return Vec::new();
    };
    let call = |v: &str| {
        s3(
            t.api,
            bucket,
            t.root,
            json!({"xmlns": XMLNS, t.field: v}),
            t.marker,
        )
    };
    vec![
        Change::modify(
            t.name,
            instance,
            format!("set {} of bucket {bucket} to {other}", t.what),
            &[t.attribute],
            vec![call(other)],
        )
        .undo(vec![call(current)]),
    ]
}

/// A bucket configuration deleted by its S3 `Delete...` call.
fn bucket_delete(
    instance: &Instance,
    api: &str,
    marker: &str,
    name: &'static str,
    what: &str,
) -> Change {
    let bucket = text(instance, "bucket");
    Change::modify(
        name,
        instance,
        format!("deleted the {what} of bucket {bucket}"),
        &[],
        vec![s3(api, bucket, "", Value::Null, marker)],
    )
    .kind(Kind::Delete)
}

/// An S3 request on the configuration `id` of a bucket.
fn with_id(mut request: Request, id: &str) -> Request {
    request.request_parameters["id"] = json!(id);
    request
}

/// A configuration with an id (`bucket:name`) deleted.
fn named_delete(instance: &Instance, api: &str, marker: &str, name: &'static str) -> Change {
    let (bucket, id) = (text(instance, "bucket"), text(instance, "name"));
    Change::modify(
        name,
        instance,
        format!("deleted the {marker} configuration {id} of bucket {bucket}"),
        &[],
        vec![with_id(s3(api, bucket, "", Value::Null, marker), id)],
    )
    .kind(Kind::Delete)
}

/// An Intelligent-Tiering configuration switched off (the whole configuration is sent).
fn tiering(instance: &Instance) -> Vec<Change> {
    let (bucket, id) = (text(instance, "bucket"), text(instance, "name"));
    if text(instance, "status") != "Enabled" {
        return Vec::new();
    }
    let tiers: Vec<Value> = instance.attributes["tiering"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| json!({"Days": t["days"], "AccessTier": t["access_tier"]}))
                .collect()
        })
        .unwrap_or_default();
    let prefix = block(instance, "filter")["prefix"].clone();
    let call = |status: &str| {
        let body = json!({"xmlns": XMLNS, "Id": id, "Status": status,
            "Filter": {"Prefix": prefix}, "Tiering": tiers});
        with_id(
            s3(
                "PutBucketIntelligentTieringConfiguration",
                bucket,
                "IntelligentTieringConfiguration",
                body,
                "intelligent-tiering",
            ),
            id,
        )
    };
    vec![
        Change::modify(
            "s3-tiering-off",
            instance,
            format!("turned off Intelligent-Tiering configuration {id} of bucket {bucket}"),
            &["status"],
            vec![call("Disabled")],
        )
        .undo(vec![call("Enabled")]),
    ]
}

/// The default retention of a bucket's Object Lock doubled.
fn object_lock(instance: &Instance) -> Vec<Change> {
    let bucket = text(instance, "bucket");
    let retention = &block(instance, "rule")["default_retention"][0];
    let (Some(mode), Some(days)) = (
        retention["mode"].as_str(),
        retention["days"].as_i64().filter(|d| *d > 0),
    ) else {
        return Vec::new();
    };
    let call = |d: i64| {
        s3(
            "PutObjectLockConfiguration",
            bucket,
            "ObjectLockConfiguration",
            json!({"xmlns": XMLNS, "ObjectLockEnabled": "Enabled",
                "Rule": {"DefaultRetention": {"Mode": mode, "Days": d}}}),
            "object-lock",
        )
    };
    vec![
        Change::modify(
            "s3-object-lock-days",
            instance,
            format!(
                "kept new objects of bucket {bucket} for {} days ({mode})",
                days * 2
            ),
            &["rule.0.default_retention.0.days"],
            vec![call(days * 2)],
        )
        .undo(vec![call(days)]),
    ]
}

/// An inventory written daily instead of weekly (the whole configuration is sent).
fn inventory(instance: &Instance) -> Vec<Change> {
    let (bucket, id) = (text(instance, "bucket"), text(instance, "name"));
    let frequency = block(instance, "schedule")["frequency"]
        .as_str()
        .unwrap_or_default();
    if frequency != "Weekly" {
        return Vec::new();
    }
    let destination = &block(instance, "destination")["bucket"][0];
    let fields = instance.attributes["optional_fields"].clone();
    let call = |f: &str| {
        let body = json!({"xmlns": XMLNS, "Id": id, "IsEnabled": instance.attributes["enabled"],
            "IncludedObjectVersions": text(instance, "included_object_versions"),
            "Destination": {"S3BucketDestination": {"Format": destination["format"],
                "Bucket": destination["bucket_arn"], "Prefix": destination["prefix"]}},
            "Schedule": {"Frequency": f}, "OptionalFields": {"Field": fields}});
        with_id(
            s3(
                "PutBucketInventoryConfiguration",
                bucket,
                "InventoryConfiguration",
                body,
                "inventory",
            ),
            id,
        )
    };
    vec![
        Change::modify(
            "s3-inventory-daily",
            instance,
            format!("made inventory {id} of bucket {bucket} daily"),
            &["schedule.0.frequency"],
            vec![call("Daily")],
        )
        .undo(vec![call(frequency)]),
    ]
}

/// A request metrics configuration deleted; and, from a bucket's first one, a new
/// configuration for the whole bucket.
fn metric(instance: &Instance, all: &[Instance]) -> Vec<Change> {
    let (bucket, id) = (text(instance, "bucket"), text(instance, "name"));
    let mut out = vec![named_delete(
        instance,
        "DeleteBucketMetricsConfiguration",
        "metrics",
        "s3-metrics-delete",
    )];
    let first = all
        .iter()
        .find(|i| i.resource_type == instance.resource_type && text(i, "bucket") == bucket);
    if first.is_some_and(|f| f.address == instance.address) {
        let new = "EntireBucket";
        let call = with_id(
            s3(
                "PutBucketMetricsConfiguration",
                bucket,
                "MetricsConfiguration",
                json!({"xmlns": XMLNS, "Id": new}),
                "metrics",
            ),
            new,
        );
        out.push(
            Change::modify(
                "s3-metrics-create",
                instance,
                format!("added request metrics {new} for all of bucket {bucket} (beside {id})"),
                &[],
                vec![call],
            )
            .kind(Kind::Create),
        );
    }
    out
}

/// An object's legal hold turned on, or (risky) lifted, in a bucket with Object Lock.
fn legal_hold(instance: &Instance, all: &[Instance]) -> Vec<Change> {
    let (bucket, key) = (text(instance, "bucket"), text(instance, "key"));
    let locked = all.iter().any(|i| {
        i.resource_type == "aws_s3_bucket"
            && text(i, "bucket") == bucket
            && i.attributes.get("object_lock_enabled") == Some(&json!(true))
    });
    if !locked {
        return Vec::new();
    }
    let current = text(instance, "object_lock_legal_hold_status");
    let call = |status: &str| {
        let mut r = s3(
            "PutObjectLegalHold",
            bucket,
            "LegalHold",
            json!({"xmlns": XMLNS, "Status": status}),
            "legal-hold",
        );
        r.request_parameters["key"] = json!(key);
        r
    };
    let paths = &["object_lock_legal_hold_status"];
    let change = if current == "ON" {
        Change::modify(
            "s3-legal-hold-lift",
            instance,
            format!("lifted the legal hold on s3://{bucket}/{key}"),
            paths,
            vec![call("OFF")],
        )
        .risky()
    } else {
        Change::modify(
            "s3-legal-hold",
            instance,
            format!("put s3://{bucket}/{key} under legal hold"),
            paths,
            vec![call("ON")],
        )
    };
    let previous = if current.is_empty() { "OFF" } else { current };
    vec![change.undo(vec![call(previous)])]
}

/// A directory bucket deleted (S3 Express's own endpoint).
fn directory_bucket_delete(instance: &Instance) -> Change {
    let bucket = text(instance, "bucket");
    let region = text(instance, "arn").split(':').nth(3).unwrap_or_default();
    Change::modify(
        "s3express-delete",
        instance,
        format!("deleted directory bucket {bucket}"),
        &[],
        vec![req(
            "s3express.amazonaws.com",
            "DeleteBucket",
            json!({"bucketName": bucket, "Host": format!("s3express-control.{region}.amazonaws.com")}),
        )],
    )
    .kind(Kind::Delete)
}

fn kms(name: &str, params: Value) -> Request {
    req("kms.amazonaws.com", name, params)
}

/// A grant revoked; and a second grant on the same key for the same grantee, to encrypt.
fn grant(instance: &Instance) -> Vec<Change> {
    let key = text(instance, "key_id");
    let grant_id = text(instance, "grant_id");
    let grantee = text(instance, "grantee_principal");
    let name = text(instance, "name");
    vec![
        Change::modify(
            "kms-grant-revoke",
            instance,
            format!("revoked grant {name} on key {key}"),
            &[],
            vec![kms(
                "RevokeGrant",
                json!({"keyId": key, "grantId": grant_id}),
            )],
        )
        .kind(Kind::Delete),
        Change::modify(
            "kms-grant-create",
            instance,
            format!("let {grantee} encrypt with key {key}"),
            &[],
            vec![kms(
                "CreateGrant",
                json!({"keyId": key, "granteePrincipal": grantee,
                    "operations": ["Encrypt", "GenerateDataKey"], "name": format!("{name}-encrypt")}),
            )],
        )
        .kind(Kind::Create),
    ]
}

/// A replica or imported-material key's description reworded, in the key's own region.
fn key_description(instance: &Instance) -> Vec<Change> {
    let arn = text(instance, "arn");
    let region = arn.split(':').nth(3).unwrap_or_default();
    let current = text(instance, "description");
    let new = format!("{current} (reviewed)");
    let call = |d: &str| {
        kms(
            "UpdateKeyDescription",
            json!({"keyId": arn, "description": d}),
        )
        .in_region(region)
    };
    vec![
        Change::modify(
            "kms-key-description",
            instance,
            format!("reworded the description of key {arn}"),
            &["description"],
            vec![call(&new)],
        )
        .undo(vec![call(current)]),
    ]
}

fn lambda(name: &str, params: Value) -> Request {
    req("lambda.amazonaws.com", name, params)
}

/// A function's asynchronous invocations no longer retried.
fn event_invoke(instance: &Instance) -> Vec<Change> {
    let function = text(instance, "function_name");
    let Some(retries) = int(instance, "maximum_retry_attempts").filter(|r| *r > 0) else {
        return Vec::new();
    };
    let call = |n: i64| {
        lambda(
            "UpdateFunctionEventInvokeConfig",
            json!({"functionName": function, "maximumRetryAttempts": n}),
        )
    };
    vec![
        Change::modify(
            "lambda-async-retries",
            instance,
            format!("stopped retrying failed asynchronous invocations of {function}"),
            &["maximum_retry_attempts"],
            vec![call(0)],
        )
        .undo(vec![call(retries)]),
    ]
}

/// A function URL switched to response streaming.
fn function_url(instance: &Instance) -> Vec<Change> {
    let function = text(instance, "function_name");
    let current = match text(instance, "invoke_mode") {
        "" => "BUFFERED",
        mode => mode,
    };
    let other = if current == "BUFFERED" {
        "RESPONSE_STREAM"
    } else {
        "BUFFERED"
    };
    let call = |mode: &str| {
        lambda(
            "UpdateFunctionUrlConfig",
            json!({"functionName": function, "invokeMode": mode}),
        )
    };
    vec![
        Change::modify(
            "lambda-url-invoke-mode",
            instance,
            format!("set the invoke mode of {function}'s URL to {other}"),
            &["invoke_mode"],
            vec![call(other)],
        )
        .undo(vec![call(current)]),
    ]
}

/// Provisioned concurrency doubled; and removed.
fn provisioned(instance: &Instance) -> Vec<Change> {
    let (function, qualifier) = (text(instance, "function_name"), text(instance, "qualifier"));
    let Some(n) = int(instance, "provisioned_concurrent_executions") else {
        return Vec::new();
    };
    let call = |n: i64| {
        lambda(
            "PutProvisionedConcurrencyConfig",
            json!({"functionName": function, "qualifier": qualifier, "provisionedConcurrentExecutions": n}),
        )
    };
    vec![
        Change::modify(
            "lambda-provisioned-concurrency",
            instance,
            format!(
                "kept {} instances of {function}:{qualifier} warm (was {n})",
                n * 2
            ),
            &["provisioned_concurrent_executions"],
            vec![call(n * 2)],
        )
        .undo(vec![call(n)]),
        Change::modify(
            "lambda-provisioned-concurrency-delete",
            instance,
            format!("removed the provisioned concurrency of {function}:{qualifier}"),
            &[],
            vec![lambda(
                "DeleteProvisionedConcurrencyConfig",
                json!({"functionName": function, "qualifier": qualifier}),
            )],
        )
        .kind(Kind::Delete),
    ]
}

/// A function's recursive loop detection switched.
fn recursion(instance: &Instance) -> Vec<Change> {
    let function = text(instance, "function_name");
    let current = text(instance, "recursive_loop");
    let other = if current == "Allow" {
        "Terminate"
    } else {
        "Allow"
    };
    let call = |v: &str| {
        lambda(
            "PutFunctionRecursionConfig",
            json!({"functionName": function, "recursiveLoop": v}),
        )
    };
    vec![
        Change::modify(
            "lambda-recursion",
            instance,
            format!("set recursive loop detection of {function} to {other}"),
            &["recursive_loop"],
            vec![call(other)],
        )
        .undo(vec![call(current)]),
    ]
}

/// An alias's description reworded.
fn alias_description(instance: &Instance) -> Change {
    let (function, name) = (text(instance, "function_name"), text(instance, "name"));
    let current = text(instance, "description");
    let call = |d: &str| {
        lambda(
            "UpdateAlias",
            json!({"functionName": function, "name": name, "description": d}),
        )
    };
    Change::modify(
        "lambda-alias-description",
        instance,
        format!("described alias {name} of {function}"),
        &["description"],
        vec![call(&format!("{name} traffic of {function}"))],
    )
    .undo(vec![call(current)])
}

/// A layer version deleted.
fn layer_delete(instance: &Instance) -> Change {
    let (layer, version) = (text(instance, "layer_name"), text(instance, "version"));
    Change::modify(
        "lambda-layer-delete",
        instance,
        format!("deleted version {version} of layer {layer}"),
        &[],
        vec![lambda(
            "DeleteLayerVersion",
            json!({"layerName": layer, "versionNumber": version.parse::<i64>().unwrap_or(1)}),
        )],
    )
    .kind(Kind::Delete)
}

fn secrets(name: &str, params: Value) -> Request {
    req("secretsmanager.amazonaws.com", name, params)
}

/// A secret rotated every other period; and its rotation turned off.
fn rotation(instance: &Instance) -> Vec<Change> {
    let secret = text(instance, "secret_id");
    let lambda_arn = text(instance, "rotation_lambda_arn");
    let mut out = vec![
        Change::modify(
            "secret-rotation-cancel",
            instance,
            format!("turned off the rotation of secret {secret}"),
            &[],
            vec![secrets("CancelRotateSecret", json!({"secretId": secret}))],
        )
        .kind(Kind::Delete),
    ];
    if let Some(days) = block(instance, "rotation_rules")["automatically_after_days"].as_i64() {
        let call = |d: i64| {
            secrets(
                "RotateSecret",
                json!({"secretId": secret, "rotationLambdaARN": lambda_arn,
                    "rotationRules": {"automaticallyAfterDays": d}, "rotateImmediately": false}),
            )
        };
        out.push(
            Change::modify(
                "secret-rotation-days",
                instance,
                format!(
                    "rotated secret {secret} every {} days (was {days})",
                    days * 2
                ),
                &["rotation_rules.0.automatically_after_days"],
                vec![call(days * 2)],
            )
            .undo(vec![call(days)]),
        );
    }
    out
}

fn scaling(name: &str, params: Value) -> Request {
    req("application-autoscaling.amazonaws.com", name, params)
}

/// A scalable target allowed twice its maximum capacity.
fn scalable_target(instance: &Instance) -> Vec<Change> {
    let Some(max) = int(instance, "max_capacity") else {
        return Vec::new();
    };
    let (namespace, resource, dimension) = (
        text(instance, "service_namespace"),
        text(instance, "resource_id"),
        text(instance, "scalable_dimension"),
    );
    let call = |m: i64| {
        scaling(
            "RegisterScalableTarget",
            json!({"serviceNamespace": namespace, "resourceId": resource,
                "scalableDimension": dimension, "maxCapacity": m}),
        )
    };
    vec![
        Change::modify(
            "appautoscaling-max",
            instance,
            format!("let {resource} scale {dimension} up to {}", max * 2),
            &["max_capacity"],
            vec![call(max * 2)],
        )
        .undo(vec![call(max)]),
    ]
}

/// A target tracking policy aiming lower; and a policy deleted.
fn scaling_policy(instance: &Instance) -> Vec<Change> {
    let name = text(instance, "name");
    let identity = json!({"policyName": name,
        "serviceNamespace": text(instance, "service_namespace"),
        "resourceId": text(instance, "resource_id"),
        "scalableDimension": text(instance, "scalable_dimension")});
    let mut out = vec![
        Change::modify(
            "appautoscaling-policy-delete",
            instance,
            format!("deleted scaling policy {name}"),
            &[],
            vec![scaling("DeleteScalingPolicy", identity.clone())],
        )
        .kind(Kind::Delete),
    ];
    let tracking = block(instance, "target_tracking_scaling_policy_configuration");
    let metric = tracking["predefined_metric_specification"][0]["predefined_metric_type"].clone();
    if let Some(target) = tracking["target_value"].as_f64().filter(|t| *t > 20.0) {
        let call = |v: f64| {
            let mut p = identity.clone();
            p["policyType"] = json!("TargetTrackingScaling");
            p["targetTrackingScalingPolicyConfiguration"] = json!({"targetValue": v,
                "predefinedMetricSpecification": {"predefinedMetricType": metric}});
            scaling("PutScalingPolicy", p)
        };
        out.push(
            Change::modify(
                "appautoscaling-target-value",
                instance,
                format!(
                    "made policy {name} aim at {} instead of {target}",
                    target - 20.0
                ),
                &["target_tracking_scaling_policy_configuration.0.target_value"],
                vec![call(target - 20.0)],
            )
            .undo(vec![call(target)]),
        );
    }
    out
}
