//! Amazon S3 bucket configuration. Since provider v4 each configuration is its own Terraform
//! resource keyed by bucket name (`aws_s3_bucket_versioning`, ...): a call changes that
//! resource when the state has one for the bucket and otherwise adds one, as an import would.
//! Bucket-level PUT and DELETE calls answer with no response elements.

use serde_json::{Value, json};

use super::super::ApiError;
use super::super::ctx::{ApiResult, Ctx};
use super::super::params::{self, list};
use super::Handler;

/// The handler of an S3 write call.
pub fn handler(api: &str) -> Option<Handler> {
    Some(match api {
        "PutBucketVersioning" => put_versioning,
        "PutBucketEncryption" => put_encryption,
        "DeleteBucketEncryption" => delete_encryption,
        "PutBucketTagging" => put_tagging,
        "DeleteBucketTagging" => delete_tagging,
        "PutBucketPolicy" => put_policy,
        "DeleteBucketPolicy" => |c, p| delete_config(c, p, "aws_s3_bucket_policy"),
        "PutPublicAccessBlock" => put_public_access_block,
        "DeletePublicAccessBlock" => {
            |c, p| delete_config(c, p, "aws_s3_bucket_public_access_block")
        }
        "PutBucketLogging" => put_logging,
        "PutBucketLifecycle" | "PutBucketLifecycleConfiguration" => put_lifecycle,
        "DeleteBucketLifecycle" => {
            |c, p| delete_config(c, p, "aws_s3_bucket_lifecycle_configuration")
        }
        _ => return None,
    })
}

/// The bucket of a request: its name and position, or `NoSuchBucket`.
pub(super) fn bucket(ctx: &Ctx<'_>, p: &Value) -> Result<(String, usize), ApiError> {
    let name = params::string(p, "bucketName")?;
    let at = ctx
        .find("aws_s3_bucket", "bucket", name)
        .ok_or_else(|| ApiError::new("NoSuchBucket", "The specified bucket does not exist"))?;
    Ok((name.to_owned(), at))
}

/// Sets `attributes` on the configuration resource of `resource_type` for `bucket`, adding
/// the resource when there is none.
pub(super) fn upsert(ctx: &mut Ctx<'_>, resource_type: &str, bucket: &str, attributes: Value) {
    let at = match ctx.find(resource_type, "bucket", bucket) {
        Some(at) => at,
        None => ctx.create(
            resource_type,
            json!({"id": bucket, "bucket": bucket, "expected_bucket_owner": ""}),
        ),
    };
    if let Value::Object(map) = attributes {
        for (k, v) in map {
            ctx.set(at, &k, v);
        }
    }
}

/// DeleteBucketPolicy, DeletePublicAccessBlock, DeleteBucketLifecycle: the configuration
/// resource disappears (S3 answers success even when there was none).
pub(super) fn delete_config(ctx: &mut Ctx<'_>, p: &Value, resource_type: &str) -> ApiResult {
    let (name, _) = bucket(ctx, p)?;
    let found = ctx.find_all(resource_type, &[("bucket", &name)]);
    ctx.remove_all(found);
    Ok(Value::Null)
}

/// PutBucketVersioning.
fn put_versioning(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, _) = bucket(ctx, p)?;
    let config = p
        .get("VersioningConfiguration")
        .ok_or_else(|| params::missing("VersioningConfiguration"))?;
    let status = params::string(config, "Status")?;
    if status != "Enabled" && status != "Suspended" {
        return Err(ApiError::new(
            "MalformedXML",
            "The XML you provided was not well-formed or did not validate against our published schema",
        ));
    }
    // GetBucketVersioning returns MFADelete only once it has been configured, so a request
    // without it leaves what a refresh reads unchanged.
    let previous = ctx
        .find("aws_s3_bucket_versioning", "bucket", &name)
        .and_then(|at| {
            ctx.attr(at, "versioning_configuration")[0]["mfa_delete"]
                .as_str()
                .map(str::to_owned)
        })
        .unwrap_or_default();
    let mfa_delete = params::opt_string(config, "MfaDelete").map_or(previous, str::to_owned);
    upsert(
        ctx,
        "aws_s3_bucket_versioning",
        &name,
        json!({"mfa": null, "versioning_configuration": [{"status": status, "mfa_delete": mfa_delete}]}),
    );
    Ok(Value::Null)
}

/// The Terraform `rule` of a server-side encryption configuration.
fn encryption_rule(algorithm: &str, key: &str, bucket_key: bool) -> Value {
    json!([{
        "apply_server_side_encryption_by_default": [{"sse_algorithm": algorithm, "kms_master_key_id": key}],
        "bucket_key_enabled": bucket_key,
    }])
}

/// PutBucketEncryption.
fn put_encryption(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, _) = bucket(ctx, p)?;
    let config = p
        .get("ServerSideEncryptionConfiguration")
        .ok_or_else(|| params::missing("ServerSideEncryptionConfiguration"))?;
    let rule = list(config.get("Rule"))
        .into_iter()
        .next()
        .ok_or_else(|| params::missing("Rule"))?;
    let default = rule
        .get("ApplyServerSideEncryptionByDefault")
        .unwrap_or(&Value::Null);
    let algorithm = params::string(default, "SSEAlgorithm")?;
    let key = params::opt_string(default, "KMSMasterKeyID").unwrap_or_default();
    let bucket_key = params::opt_bool(rule, "BucketKeyEnabled").unwrap_or(false);
    upsert(
        ctx,
        "aws_s3_bucket_server_side_encryption_configuration",
        &name,
        json!({"rule": encryption_rule(algorithm, key, bucket_key)}),
    );
    Ok(Value::Null)
}

/// DeleteBucketEncryption: S3 falls back to its default, SSE-S3 (`AES256`), which the
/// provider then reads.
fn delete_encryption(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, _) = bucket(ctx, p)?;
    upsert(
        ctx,
        "aws_s3_bucket_server_side_encryption_configuration",
        &name,
        json!({"rule": encryption_rule("AES256", "", false)}),
    );
    Ok(Value::Null)
}

/// PutBucketTagging: replaces the bucket's whole tag set.
fn put_tagging(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (_, at) = bucket(ctx, p)?;
    let tagging = p.get("Tagging").ok_or_else(|| params::missing("Tagging"))?;
    let tags = params::tag_list(tagging.get("TagSet").and_then(|s| s.get("Tag")));
    ctx.replace_tags(at, &tags);
    Ok(Value::Null)
}

/// DeleteBucketTagging.
fn delete_tagging(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (_, at) = bucket(ctx, p)?;
    ctx.replace_tags(at, &[]);
    Ok(Value::Null)
}

/// PutBucketPolicy: CloudTrail logs the policy document as an object under `bucketPolicy`.
fn put_policy(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, _) = bucket(ctx, p)?;
    let policy = p
        .get("bucketPolicy")
        .ok_or_else(|| params::missing("bucketPolicy"))?;
    let text = match policy {
        Value::String(s) => s.clone(),
        other => super::super::canonical_json(other),
    };
    if serde_json::from_str::<Value>(&text).is_err() {
        return Err(ApiError::new(
            "MalformedPolicy",
            "Policies must be valid JSON and the first byte must be '{'",
        ));
    }
    upsert(ctx, "aws_s3_bucket_policy", &name, json!({"policy": text}));
    Ok(Value::Null)
}

/// PutPublicAccessBlock.
fn put_public_access_block(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, _) = bucket(ctx, p)?;
    let config = p
        .get("PublicAccessBlockConfiguration")
        .ok_or_else(|| params::missing("PublicAccessBlockConfiguration"))?;
    let flag = |k: &str| json!(params::opt_bool(config, k).unwrap_or(false));
    upsert(
        ctx,
        "aws_s3_bucket_public_access_block",
        &name,
        json!({
            "block_public_acls": flag("BlockPublicAcls"),
            "block_public_policy": flag("BlockPublicPolicy"),
            "ignore_public_acls": flag("IgnorePublicAcls"),
            "restrict_public_buckets": flag("RestrictPublicBuckets"),
        }),
    );
    Ok(Value::Null)
}

/// PutBucketLogging: an empty `BucketLoggingStatus` turns logging off.
fn put_logging(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, _) = bucket(ctx, p)?;
    let status = p
        .get("BucketLoggingStatus")
        .ok_or_else(|| params::missing("BucketLoggingStatus"))?;
    let Some(enabled) = status.get("LoggingEnabled") else {
        let found = ctx.find_all("aws_s3_bucket_logging", &[("bucket", &name)]);
        ctx.remove_all(found);
        return Ok(Value::Null);
    };
    let target = params::string(enabled, "TargetBucket")?;
    if ctx.find("aws_s3_bucket", "bucket", target).is_none() {
        return Err(ApiError::new(
            "InvalidTargetBucketForLogging",
            "The target bucket for logging does not exist",
        ));
    }
    upsert(
        ctx,
        "aws_s3_bucket_logging",
        &name,
        json!({
            "target_bucket": target,
            "target_prefix": params::opt_string(enabled, "TargetPrefix").unwrap_or_default(),
            "target_grant": [],
            "target_object_key_format": [],
        }),
    );
    Ok(Value::Null)
}

/// PutBucketLifecycle (the lifecycle configuration API): replaces every rule.
fn put_lifecycle(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, _) = bucket(ctx, p)?;
    let config = p
        .get("LifecycleConfiguration")
        .ok_or_else(|| params::missing("LifecycleConfiguration"))?;
    let rules: Vec<Value> = list(config.get("Rule"))
        .into_iter()
        .map(lifecycle_rule)
        .collect();
    if rules.is_empty() {
        return Err(ApiError::new(
            "MalformedXML",
            "The XML you provided was not well-formed or did not validate against our published schema",
        ));
    }
    upsert(
        ctx,
        "aws_s3_bucket_lifecycle_configuration",
        &name,
        json!({"rule": rules, "transition_default_minimum_object_size": "all_storage_classes_128K"}),
    );
    Ok(Value::Null)
}

/// One lifecycle rule in Terraform's shape.
fn lifecycle_rule(rule: &Value) -> Value {
    let days = |v: Option<&Value>, key: &str| v.and_then(|v| params::opt_int(v, key));
    let expiration = rule.get("Expiration").map(|e| {
        json!([{"days": days(Some(e), "Days"), "date": params::opt_string(e, "Date"),
                "expired_object_delete_marker": params::opt_bool(e, "ExpiredObjectDeleteMarker").unwrap_or(false)}])
    });
    let transitions: Vec<Value> = list(rule.get("Transition"))
        .into_iter()
        .map(|t| {
            json!({"days": days(Some(t), "Days"), "date": params::opt_string(t, "Date"),
                        "storage_class": params::opt_string(t, "StorageClass").unwrap_or_default()})
        })
        .collect();
    let noncurrent = rule.get("NoncurrentVersionExpiration").map(|n| {
        json!([{"noncurrent_days": days(Some(n), "NoncurrentDays"),
                "newer_noncurrent_versions": params::opt_int(n, "NewerNoncurrentVersions")}])
    });
    let abort = rule
        .get("AbortIncompleteMultipartUpload")
        .map(|a| json!([{"days_after_initiation": days(Some(a), "DaysAfterInitiation")}]));
    let prefix = rule
        .get("Filter")
        .and_then(|f| params::opt_string(f, "Prefix"))
        .or_else(|| params::opt_string(rule, "Prefix"))
        .unwrap_or_default();
    json!({
        "id": params::opt_string(rule, "ID").unwrap_or_default(),
        "status": params::opt_string(rule, "Status").unwrap_or("Enabled"),
        "filter": [{"prefix": prefix, "and": [], "tag": [], "object_size_greater_than": null, "object_size_less_than": null}],
        "prefix": "",
        "expiration": expiration.unwrap_or_else(|| json!([])),
        "transition": transitions,
        "noncurrent_version_expiration": noncurrent.unwrap_or_else(|| json!([])),
        "noncurrent_version_transition": [],
        "abort_incomplete_multipart_upload": abort.unwrap_or_else(|| json!([])),
    })
}
