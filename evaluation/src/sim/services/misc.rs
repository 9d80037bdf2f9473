//! The smaller services: SNS, SQS, KMS, Route 53, SSM Parameter Store, Secrets Manager, ECS
//! and ECR.

use serde_json::{Value, json};

use super::super::ApiError;
use super::super::ctx::{ApiResult, Ctx};
use super::super::params::{self, items, list};
use super::{Handler, Service};

/// The handler of a write call to one of these services.
pub fn handler(service: Service, api: &str) -> Option<Handler> {
    Some(match (service, api) {
        (Service::Sns, "SetTopicAttributes") => set_topic_attributes,
        (Service::Sns, "TagResource") => tag_topic,
        (Service::Sqs, "SetQueueAttributes") => set_queue_attributes,
        (Service::Sqs, "TagQueue") => tag_queue,
        (Service::Kms, "EnableKeyRotation") => |c, p| key_rotation(c, p, true),
        (Service::Kms, "DisableKeyRotation") => |c, p| key_rotation(c, p, false),
        (Service::Kms, "TagResource") => tag_key,
        (Service::Route53, "ChangeResourceRecordSets") => change_record_sets,
        (Service::Ssm, "PutParameter") => put_parameter,
        (Service::SecretsManager, "UpdateSecret") => update_secret,
        (Service::SecretsManager, "TagResource") => tag_secret,
        (Service::Ecs, "UpdateService") => update_service,
        (Service::Ecr, "PutImageScanningConfiguration") => put_image_scanning,
        (Service::Ecr, "PutImageTagMutability") => put_tag_mutability,
        _ => return None,
    })
}

fn topic(ctx: &Ctx<'_>, arn: &str) -> Result<usize, ApiError> {
    ctx.find("aws_sns_topic", "arn", arn)
        .ok_or_else(|| ApiError::new("NotFound", "Topic does not exist"))
}

/// SNS topic attributes and their Terraform attributes.
const TOPIC_ATTRIBUTES: [(&str, &str); 6] = [
    ("DisplayName", "display_name"),
    ("Policy", "policy"),
    ("DeliveryPolicy", "delivery_policy"),
    ("KmsMasterKeyId", "kms_master_key_id"),
    ("TracingConfig", "tracing_config"),
    ("SignatureVersion", "signature_version"),
];

/// SetTopicAttributes: one attribute per call.
fn set_topic_attributes(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = topic(ctx, params::string(p, "topicArn")?)?;
    let name = params::string(p, "attributeName")?;
    let value = params::opt_string(p, "attributeValue").unwrap_or_default();
    let (_, attr) = TOPIC_ATTRIBUTES
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| ApiError::new("InvalidParameter", "Invalid parameter: AttributeName"))?;
    let stored = match *attr {
        "signature_version" => params::as_int(&json!(value)).map_or(json!(value), |n| json!(n)),
        _ => json!(value),
    };
    ctx.set(at, attr, stored);
    Ok(Value::Null)
}

/// SNS TagResource.
fn tag_topic(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = topic(ctx, params::string(p, "resourceArn")?)?;
    ctx.add_tags(at, &params::tag_list(p.get("tags")));
    Ok(Value::Null)
}

fn queue(ctx: &Ctx<'_>, p: &Value) -> Result<usize, ApiError> {
    let url = params::string(p, "queueUrl")?;
    ctx.find("aws_sqs_queue", "url", url)
        .or_else(|| ctx.find("aws_sqs_queue", "id", url))
        .ok_or_else(|| {
            ApiError::new(
                "AWS.SimpleQueueService.NonExistentQueue",
                "The specified queue does not exist.",
            )
        })
}

/// SQS queue attributes: (name, Terraform attribute, numeric).
const QUEUE_ATTRIBUTES: [(&str, &str, bool); 10] = [
    ("VisibilityTimeout", "visibility_timeout_seconds", true),
    ("MessageRetentionPeriod", "message_retention_seconds", true),
    ("DelaySeconds", "delay_seconds", true),
    ("MaximumMessageSize", "max_message_size", true),
    (
        "ReceiveMessageWaitTimeSeconds",
        "receive_wait_time_seconds",
        true,
    ),
    (
        "KmsDataKeyReusePeriodSeconds",
        "kms_data_key_reuse_period_seconds",
        true,
    ),
    ("Policy", "policy", false),
    ("RedrivePolicy", "redrive_policy", false),
    ("KmsMasterKeyId", "kms_master_key_id", false),
    ("SqsManagedSseEnabled", "sqs_managed_sse_enabled", false),
];

/// SetQueueAttributes.
fn set_queue_attributes(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = queue(ctx, p)?;
    let given = p
        .get("attributes")
        .and_then(Value::as_object)
        .ok_or_else(|| params::missing("attributes"))?;
    for (name, value) in given {
        let (_, attr, numeric) = QUEUE_ATTRIBUTES
            .iter()
            .find(|(n, _, _)| n == name)
            .ok_or_else(|| {
                ApiError::new("InvalidAttributeName", format!("Unknown Attribute {name}."))
            })?;
        let stored = match (*numeric, *attr) {
            (true, _) => json!(params::as_int(value).ok_or_else(|| {
                ApiError::new(
                    "InvalidAttributeValue",
                    format!("Invalid value for the parameter {name}."),
                )
            })?),
            (false, "sqs_managed_sse_enabled") => json!(params::as_bool(value).unwrap_or(false)),
            _ => value.clone(),
        };
        ctx.set(at, attr, stored);
    }
    Ok(Value::Null)
}

/// TagQueue.
fn tag_queue(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = queue(ctx, p)?;
    ctx.add_tags(at, &params::tag_map(p.get("tags")));
    Ok(Value::Null)
}

/// The KMS key of a key id or ARN.
fn key(ctx: &Ctx<'_>, p: &Value) -> Result<usize, ApiError> {
    let given = params::string(p, "keyId")?;
    ctx.find("aws_kms_key", "key_id", given)
        .or_else(|| ctx.find("aws_kms_key", "arn", given))
        .or_else(|| ctx.find("aws_kms_key", "id", given))
        .ok_or_else(|| {
            let arn = if given.starts_with("arn:") {
                given.to_owned()
            } else {
                ctx.arn("kms", &format!("key/{given}"))
            };
            ApiError::new("NotFoundException", format!("Key '{arn}' does not exist"))
        })
}

/// EnableKeyRotation / DisableKeyRotation.
fn key_rotation(ctx: &mut Ctx<'_>, p: &Value, enable: bool) -> ApiResult {
    let at = key(ctx, p)?;
    ctx.set(at, "enable_key_rotation", json!(enable));
    if enable {
        let days = params::opt_int(p, "rotationPeriodInDays").unwrap_or(365);
        ctx.set(at, "rotation_period_in_days", json!(days));
    }
    Ok(Value::Null)
}

/// KMS TagResource.
fn tag_key(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = key(ctx, p)?;
    ctx.add_tags(at, &params::tag_list(p.get("tags")));
    Ok(Value::Null)
}

/// A record name without its final dot, lower case, as the provider stores it.
fn record_name(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// ChangeResourceRecordSets: all changes of the batch succeed or none do.
fn change_record_sets(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let zone = params::string(p, "hostedZoneId")?
        .trim_start_matches("/hostedzone/")
        .to_owned();
    let known_zone = ctx.find("aws_route53_zone", "zone_id", &zone).is_some()
        || !ctx
            .find_all("aws_route53_record", &[("zone_id", &zone)])
            .is_empty();
    if !known_zone {
        return Err(ApiError::new(
            "NoSuchHostedZone",
            format!("No hosted zone found with ID: {zone}"),
        ));
    }
    let changes = p
        .get("changeBatch")
        .map(|b| items(b, "changes"))
        .unwrap_or_default();
    if changes.is_empty() {
        return Err(params::missing("changeBatch.changes"));
    }
    for change in changes {
        apply_change(ctx, &zone, change)?;
    }
    let id = ctx.upper(21);
    Ok(
        json!({"changeInfo": {"id": format!("/change/C{id}"), "status": "PENDING", "submittedAt": ctx.java_time()}}),
    )
}

fn apply_change(ctx: &mut Ctx<'_>, zone: &str, change: &Value) -> Result<(), ApiError> {
    let action = params::string(change, "action")?;
    let set = change
        .get("resourceRecordSet")
        .ok_or_else(|| params::missing("resourceRecordSet"))?;
    let name = record_name(params::string(set, "name")?);
    let kind = params::string(set, "type")?;
    // names compare as Route 53 does: without the final dot, case-insensitively
    let existing = ctx.find_all("aws_route53_record", &[("zone_id", zone), ("type", kind)]);
    let existing: Vec<usize> = existing
        .into_iter()
        .filter(|&at| record_name(&ctx.attr_str(at, "name")) == name)
        .collect();
    let described = format!("[name='{name}.', type='{kind}']");
    match (action, existing.first()) {
        ("CREATE", Some(_)) => Err(ApiError::new(
            "InvalidChangeBatch",
            format!("[Tried to create resource record set {described} but it already exists]"),
        )),
        ("DELETE", None) => Err(ApiError::new(
            "InvalidChangeBatch",
            format!("[Tried to delete resource record set {described} but it was not found]"),
        )),
        ("DELETE", Some(_)) => {
            ctx.remove_all(existing);
            Ok(())
        }
        ("CREATE" | "UPSERT", found) => {
            let records: Vec<Value> = list(set.get("resourceRecords"))
                .into_iter()
                .filter_map(|r| r.get("value").cloned())
                .map(|value| as_provider_reads(kind, value))
                .collect();
            let attributes = json!({
                "id": format!("{zone}_{name}_{kind}"),
                "zone_id": zone,
                "name": name,
                "fqdn": name,
                "type": kind,
                "ttl": params::opt_int(set, "tTL"),
                "records": records,
                "alias": [],
                "allow_overwrite": null,
                "set_identifier": "",
                "health_check_id": "",
                "multivalue_answer_routing_policy": false,
            });
            match found {
                Some(&at) => {
                    for key in ["ttl", "records"] {
                        ctx.set(at, key, attributes[key].clone());
                    }
                }
                None => {
                    ctx.create("aws_route53_record", attributes);
                }
            }
            Ok(())
        }
        (other, _) => Err(ApiError::new(
            "InvalidInput",
            format!("Invalid change action {other}"),
        )),
    }
}

/// A record value as the AWS provider reads it into `records`: Route 53 keeps a TXT or SPF
/// value in double quotes, and the provider drops the first and last of them (a value split
/// into strings, `"a" "b"`, keeps its inner quotes: `a" "b`).
fn as_provider_reads(kind: &str, value: Value) -> Value {
    match value {
        Value::String(text)
            if matches!(kind, "TXT" | "SPF")
                && text.len() >= 2
                && text.starts_with('"')
                && text.ends_with('"') =>
        {
            Value::String(text[1..text.len() - 1].to_owned())
        }
        other => other,
    }
}

/// PutParameter: a new parameter, or with `overwrite` a new version of an existing one.
fn put_parameter(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let name = params::string(p, "name")?;
    let value = params::string(p, "value")?;
    let overwrite = params::opt_bool(p, "overwrite").unwrap_or(false);
    let tier = params::opt_string(p, "tier").unwrap_or("Standard");
    let (at, version) = match ctx.find("aws_ssm_parameter", "name", name) {
        Some(_) if !overwrite => {
            return Err(ApiError::new(
                "ParameterAlreadyExists",
                "The parameter already exists. To overwrite this value, set the overwrite option in the request to true.",
            ));
        }
        Some(at) => (
            at,
            params::as_int(&ctx.attr(at, "version")).unwrap_or(1) + 1,
        ),
        None => {
            let kind = params::opt_string(p, "type").unwrap_or("String");
            let arn = ctx.arn(
                "ssm",
                &format!("parameter/{}", name.trim_start_matches('/')),
            );
            let at = ctx.create(
                "aws_ssm_parameter",
                json!({"id": name, "name": name, "arn": arn, "type": kind, "tier": tier, "data_type": "text",
                       "description": "", "key_id": "", "allowed_pattern": "", "insecure_value": null,
                       "tags": null, "tags_all": {}}),
            );
            (at, 1)
        }
    };
    let secure = params::opt_string(p, "type")
        .map_or(ctx.attr_str(at, "type") == "SecureString", |t| {
            t == "SecureString"
        });
    ctx.set(at, "value", json!(value));
    if !secure && !ctx.attr(at, "insecure_value").is_null() {
        ctx.set(at, "insecure_value", json!(value));
    }
    if let Some(kind) = params::opt_string(p, "type") {
        ctx.set(at, "type", json!(kind));
    }
    if let Some(description) = params::opt_string(p, "description") {
        ctx.set(at, "description", json!(description));
    }
    ctx.set(at, "version", json!(version));
    Ok(json!({"version": version, "tier": tier}))
}

pub(super) fn secret(ctx: &Ctx<'_>, p: &Value) -> Result<usize, ApiError> {
    let given = params::string(p, "secretId")?;
    ctx.find("aws_secretsmanager_secret", "arn", given)
        .or_else(|| ctx.find("aws_secretsmanager_secret", "name", given))
        .ok_or_else(|| {
            ApiError::new(
                "ResourceNotFoundException",
                "Secrets Manager can't find the specified secret.",
            )
        })
}

/// UpdateSecret: description and key; a new value makes a new current version.
fn update_secret(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = secret(ctx, p)?;
    let arn = ctx.attr_str(at, "arn");
    if let Some(description) = params::opt_string(p, "description") {
        ctx.set(at, "description", json!(description));
    }
    if let Some(key) = params::opt_string(p, "kmsKeyId") {
        ctx.set(at, "kms_key_id", json!(key));
    }
    let mut response = json!({"aRN": arn, "name": ctx.attr(at, "name")});
    if let Some(value) = params::opt_string(p, "secretString") {
        let version_id = ctx.uuid();
        let attributes = json!({
            "id": format!("{arn}|{version_id}"), "arn": arn, "secret_id": arn,
            "secret_string": value, "secret_binary": "", "version_id": version_id,
            "version_stages": ["AWSCURRENT"],
        });
        match ctx.find("aws_secretsmanager_secret_version", "secret_id", &arn) {
            Some(v) => {
                for key in ["id", "secret_string", "version_id", "version_stages"] {
                    ctx.set(v, key, attributes[key].clone());
                }
            }
            None => {
                ctx.create("aws_secretsmanager_secret_version", attributes);
            }
        }
        response["versionId"] = json!(version_id);
    }
    Ok(response)
}

/// Secrets Manager TagResource.
fn tag_secret(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = secret(ctx, p)?;
    ctx.add_tags(at, &params::tag_list(p.get("tags")));
    Ok(Value::Null)
}

/// UpdateService: the desired count (and a task definition when given).
fn update_service(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let service = params::string(p, "service")?;
    let name = service.rsplit('/').next().unwrap_or(service);
    let cluster = params::opt_string(p, "cluster").unwrap_or("default");
    let cluster_name = cluster.rsplit('/').next().unwrap_or(cluster);
    let at = ctx
        .find_all("aws_ecs_service", &[("name", name)])
        .into_iter()
        .find(|&at| ctx.attr_str(at, "cluster").rsplit('/').next() == Some(cluster_name))
        .ok_or_else(|| ApiError::new("ServiceNotFoundException", "Service not found."))?;
    if let Some(count) = params::opt_int(p, "desiredCount") {
        ctx.set(at, "desired_count", json!(count));
    }
    if let Some(task) = params::opt_string(p, "taskDefinition") {
        ctx.set(at, "task_definition", json!(task));
    }
    Ok(json!({"service": {
        "serviceArn": ctx.attr(at, "id"),
        "serviceName": name,
        "clusterArn": ctx.attr(at, "cluster"),
        "desiredCount": ctx.attr(at, "desired_count"),
        "taskDefinition": ctx.attr(at, "task_definition"),
        "status": "ACTIVE",
    }}))
}

fn repository(ctx: &Ctx<'_>, p: &Value) -> Result<(String, usize), ApiError> {
    let name = params::string(p, "repositoryName")?;
    let at = ctx
        .find("aws_ecr_repository", "name", name)
        .ok_or_else(|| {
            ApiError::new(
                "RepositoryNotFoundException",
                format!(
                    "The repository with name '{name}' does not exist in the registry with id '{}'",
                    ctx.account()
                ),
            )
        })?;
    Ok((name.to_owned(), at))
}

/// PutImageScanningConfiguration.
fn put_image_scanning(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, at) = repository(ctx, p)?;
    let config = p
        .get("imageScanningConfiguration")
        .ok_or_else(|| params::missing("imageScanningConfiguration"))?;
    let scan = params::opt_bool(config, "scanOnPush").unwrap_or(false);
    ctx.set(
        at,
        "image_scanning_configuration",
        json!([{"scan_on_push": scan}]),
    );
    Ok(
        json!({"registryId": ctx.account(), "repositoryName": name, "imageScanningConfiguration": {"scanOnPush": scan}}),
    )
}

/// PutImageTagMutability.
fn put_tag_mutability(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, at) = repository(ctx, p)?;
    let mutability = params::string(p, "imageTagMutability")?;
    if mutability != "MUTABLE" && mutability != "IMMUTABLE" {
        return Err(ApiError::new(
            "InvalidParameterException",
            "Invalid parameter at 'imageTagMutability' failed to satisfy constraint: 'Member must satisfy enum value set: [MUTABLE, IMMUTABLE]'",
        ));
    }
    ctx.set(at, "image_tag_mutability", json!(mutability));
    Ok(
        json!({"registryId": ctx.account(), "repositoryName": name, "imageTagMutability": mutability}),
    )
}
