//! Amazon S3 bucket configurations beyond the common ones (transfer acceleration, requester
//! pays, CORS, Intelligent-Tiering, Object Lock, replication, analytics, inventory, request
//! metrics, ACLs), object legal holds, and S3 Express directory buckets. Configurations keyed
//! by an id (`?intelligent-tiering&id=`) are Terraform resources with the id `bucket:name`.

use serde_json::{Value, json};

use super::super::ApiError;
use super::super::ctx::{ApiResult, Ctx};
use super::super::params::{self, list};
use super::Handler;
use super::s3::{bucket, delete_config, upsert};

/// The handler of one of these S3 calls.
pub fn handler(api: &str) -> Option<Handler> {
    Some(match api {
        "PutBucketAccelerateConfiguration" => put_accelerate,
        "PutBucketRequestPayment" => put_request_payment,
        "DeleteBucketCors" => |c, p| delete_config(c, p, "aws_s3_bucket_cors_configuration"),
        "DeleteBucketReplication" => {
            |c, p| delete_config(c, p, "aws_s3_bucket_replication_configuration")
        }
        "PutObjectLockConfiguration" => put_object_lock,
        "PutBucketIntelligentTieringConfiguration" => put_tiering,
        "PutBucketInventoryConfiguration" => put_inventory,
        "PutBucketMetricsConfiguration" => put_metrics,
        "DeleteBucketMetricsConfiguration" => |c, p| delete_named(c, p, "aws_s3_bucket_metric"),
        "DeleteBucketAnalyticsConfiguration" => {
            |c, p| delete_named(c, p, "aws_s3_bucket_analytics_configuration")
        }
        "PutBucketAcl" => put_acl,
        "PutObjectLegalHold" => put_legal_hold,
        _ => return None,
    })
}

/// The handler of an S3 Express (directory bucket) call.
pub fn express_handler(api: &str) -> Option<Handler> {
    Some(match api {
        "DeleteBucket" => delete_directory_bucket,
        _ => return None,
    })
}

/// S3's answer to a body that does not match its schema.
fn malformed() -> ApiError {
    ApiError::new(
        "MalformedXML",
        "The XML you provided was not well-formed or did not validate against our published schema",
    )
}

/// The body under `root`, or `MissingParameter`.
fn body<'a>(p: &'a Value, root: &str) -> Result<&'a Value, ApiError> {
    p.get(root).ok_or_else(|| params::missing(root))
}

/// PutBucketAccelerateConfiguration.
fn put_accelerate(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, _) = bucket(ctx, p)?;
    let status = params::string(body(p, "AccelerateConfiguration")?, "Status")?;
    if status != "Enabled" && status != "Suspended" {
        return Err(malformed());
    }
    let attributes = json!({"status": status});
    upsert(
        ctx,
        "aws_s3_bucket_accelerate_configuration",
        &name,
        attributes,
    );
    Ok(Value::Null)
}

/// PutBucketRequestPayment.
fn put_request_payment(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, _) = bucket(ctx, p)?;
    let payer = params::string(body(p, "RequestPaymentConfiguration")?, "Payer")?;
    if payer != "BucketOwner" && payer != "Requester" {
        return Err(malformed());
    }
    let attributes = json!({"payer": payer});
    upsert(
        ctx,
        "aws_s3_bucket_request_payment_configuration",
        &name,
        attributes,
    );
    Ok(Value::Null)
}

/// PutObjectLockConfiguration: only on a bucket created with Object Lock.
fn put_object_lock(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, at) = bucket(ctx, p)?;
    if ctx.attr(at, "object_lock_enabled") != json!(true) {
        return Err(ApiError::new(
            "InvalidBucketState",
            "Object Lock configuration cannot be enabled on existing buckets",
        ));
    }
    let config = body(p, "ObjectLockConfiguration")?;
    let retention = config
        .get("Rule")
        .and_then(|r| r.get("DefaultRetention"))
        .map(|d| {
            json!([{"default_retention": [{
                "mode": params::opt_string(d, "Mode").unwrap_or_default(),
                "days": params::opt_int(d, "Days").unwrap_or(0),
                "years": params::opt_int(d, "Years").unwrap_or(0),
            }]}])
        });
    let attributes = json!({
        "object_lock_enabled": params::opt_string(config, "ObjectLockEnabled").unwrap_or("Enabled"),
        "rule": retention.unwrap_or_else(|| json!([])),
    });
    upsert(
        ctx,
        "aws_s3_bucket_object_lock_configuration",
        &name,
        attributes,
    );
    Ok(Value::Null)
}

/// Sets `attributes` on the configuration `id` of `bucket` (Terraform id `bucket:id`),
/// adding it when there is none.
fn upsert_named(ctx: &mut Ctx<'_>, resource_type: &str, bucket: &str, id: &str, attributes: Value) {
    let at = match ctx
        .find_all(resource_type, &[("bucket", bucket), ("name", id)])
        .first()
    {
        Some(&at) => at,
        None => ctx.create(
            resource_type,
            json!({"id": format!("{bucket}:{id}"), "bucket": bucket, "name": id}),
        ),
    };
    if let Value::Object(map) = attributes {
        for (k, v) in map {
            ctx.set(at, &k, v);
        }
    }
}

/// DeleteBucketMetricsConfiguration, DeleteBucketAnalyticsConfiguration: the configuration
/// `id`, or `NoSuchConfiguration`.
fn delete_named(ctx: &mut Ctx<'_>, p: &Value, resource_type: &str) -> ApiResult {
    let (name, _) = bucket(ctx, p)?;
    let id = params::string(p, "id")?;
    let found = ctx.find_all(resource_type, &[("bucket", &name), ("name", id)]);
    if found.is_empty() {
        return Err(ApiError::new(
            "NoSuchConfiguration",
            "The specified configuration does not exist.",
        ));
    }
    ctx.remove_all(found);
    Ok(Value::Null)
}

/// A `Filter` with a prefix in Terraform's shape (`prefix` and `tags`), empty when absent.
fn prefix_filter(config: &Value, extra: Value) -> Value {
    match config.get("Filter") {
        Some(filter) => {
            let mut block = json!({"prefix": params::opt_string(filter, "Prefix").unwrap_or_default(), "tags": {}});
            if let (Some(map), Value::Object(more)) = (block.as_object_mut(), extra) {
                map.extend(more);
            }
            json!([block])
        }
        None => json!([]),
    }
}

/// PutBucketIntelligentTieringConfiguration: replaces the configuration `id`.
fn put_tiering(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, _) = bucket(ctx, p)?;
    let id = params::string(p, "id")?;
    let config = body(p, "IntelligentTieringConfiguration")?;
    let tiering: Vec<Value> = list(config.get("Tiering"))
        .into_iter()
        .map(|t| {
            Ok(json!({"access_tier": params::string(t, "AccessTier")?, "days": params::int(t, "Days")?}))
        })
        .collect::<Result<_, ApiError>>()?;
    if tiering.is_empty() {
        return Err(malformed());
    }
    let attributes = json!({
        "status": params::string(config, "Status")?,
        "filter": prefix_filter(config, json!({})),
        "tiering": tiering,
    });
    upsert_named(
        ctx,
        "aws_s3_bucket_intelligent_tiering_configuration",
        &name,
        id,
        attributes,
    );
    Ok(Value::Null)
}

/// PutBucketInventoryConfiguration: replaces the configuration `id`.
fn put_inventory(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, _) = bucket(ctx, p)?;
    let id = params::string(p, "id")?;
    let config = body(p, "InventoryConfiguration")?;
    let destination = config
        .get("Destination")
        .and_then(|d| d.get("S3BucketDestination"))
        .ok_or_else(|| params::missing("Destination"))?;
    let schedule = config
        .get("Schedule")
        .ok_or_else(|| params::missing("Schedule"))?;
    let fields = params::strings(config.get("OptionalFields").and_then(|f| f.get("Field")));
    let attributes = json!({
        "enabled": params::opt_bool(config, "IsEnabled").unwrap_or(false),
        "included_object_versions": params::string(config, "IncludedObjectVersions")?,
        "optional_fields": fields,
        "schedule": [{"frequency": params::string(schedule, "Frequency")?}],
        "filter": config.get("Filter").map_or_else(|| json!([]), |f| json!([{"prefix": params::opt_string(f, "Prefix").unwrap_or_default()}])),
        "destination": [{"bucket": [{
            "bucket_arn": params::string(destination, "Bucket")?,
            "format": params::string(destination, "Format")?,
            "prefix": params::opt_string(destination, "Prefix").unwrap_or_default(),
            "account_id": params::opt_string(destination, "AccountId").unwrap_or_default(),
            "encryption": [],
        }]}],
    });
    upsert_named(ctx, "aws_s3_bucket_inventory", &name, id, attributes);
    Ok(Value::Null)
}

/// PutBucketMetricsConfiguration: replaces the configuration `id` (no filter: the whole
/// bucket).
fn put_metrics(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, _) = bucket(ctx, p)?;
    let id = params::string(p, "id")?;
    let config = body(p, "MetricsConfiguration")?;
    let attributes = json!({"filter": prefix_filter(config, json!({"access_point": ""}))});
    upsert_named(ctx, "aws_s3_bucket_metric", &name, id, attributes);
    Ok(Value::Null)
}

/// The grant of a canned ACL's group, if it names one.
fn canned_group_grant(acl: &str) -> Option<Value> {
    let (group, permission) = match acl {
        "public-read" => ("AllUsers", "READ"),
        "public-read-write" => ("AllUsers", "WRITE"),
        "authenticated-read" => ("AuthenticatedUsers", "READ"),
        _ => return None,
    };
    Some(json!({"permission": permission, "grantee": [{
        "type": "Group", "uri": format!("http://acs.amazonaws.com/groups/global/{group}"),
        "id": "", "email_address": "", "display_name": "",
    }]}))
}

/// PutBucketAcl with a canned ACL (`x-amz-acl`): the owner keeps full control and the
/// canned ACL's group gets its grant. The provider reads the grants back into
/// `access_control_policy`; `acl` stays what its id holds.
fn put_acl(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, _) = bucket(ctx, p)?;
    let acl = params::strings(p.get("x-amz-acl"))
        .into_iter()
        .next()
        .ok_or_else(|| params::missing("x-amz-acl"))?;
    let at = ctx
        .find("aws_s3_bucket_acl", "bucket", &name)
        .ok_or_else(|| {
            ApiError::new(
                "AccessControlListNotSupported",
                "The bucket does not allow ACLs",
            )
        })?;
    let mut policy = ctx.attr(at, "access_control_policy");
    let Some(grants) = policy
        .get_mut(0)
        .and_then(|p| p.get_mut("grant"))
        .and_then(Value::as_array_mut)
    else {
        return Err(params::missing("access_control_policy"));
    };
    grants.retain(|g| g["grantee"][0]["type"] == "CanonicalUser");
    grants.extend(canned_group_grant(&acl));
    ctx.set(at, "access_control_policy", policy);
    Ok(Value::Null)
}

/// PutObjectLegalHold: only in a bucket with Object Lock.
fn put_legal_hold(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, at) = bucket(ctx, p)?;
    if ctx.attr(at, "object_lock_enabled") != json!(true) {
        return Err(ApiError::new(
            "InvalidRequest",
            "Bucket is missing Object Lock Configuration",
        ));
    }
    let key = params::string(p, "key")?;
    let status = params::string(body(p, "LegalHold")?, "Status")?;
    let object = ctx
        .find_all("aws_s3_object", &[("bucket", &name), ("key", key)])
        .first()
        .copied()
        .ok_or_else(|| ApiError::new("NoSuchKey", "The specified key does not exist."))?;
    ctx.set(object, "object_lock_legal_hold_status", json!(status));
    Ok(Value::Null)
}

/// S3 Express DeleteBucket: the directory bucket goes.
fn delete_directory_bucket(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let name = params::string(p, "bucketName")?;
    let at = ctx
        .find("aws_s3_directory_bucket", "bucket", name)
        .ok_or_else(|| ApiError::new("NoSuchBucket", "The specified bucket does not exist"))?;
    ctx.remove(at);
    Ok(Value::Null)
}
