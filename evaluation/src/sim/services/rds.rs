//! Amazon RDS instances: ModifyDBInstance and tags.

use serde_json::{Map, Value, json};

use super::super::ApiError;
use super::super::ctx::{ApiResult, Ctx};
use super::super::params;
use super::Handler;

/// The handler of an RDS write call.
pub fn handler(api: &str) -> Option<Handler> {
    Some(match api {
        "ModifyDBInstance" => modify_db_instance,
        "AddTagsToResource" => add_tags,
        "RemoveTagsFromResource" => remove_tags,
        _ => return None,
    })
}

/// Settings applied at once only with `applyImmediately` (otherwise they wait for the
/// maintenance window and show as pending), and their Terraform attributes.
const DEFERRABLE: [(&str, &str, &str); 4] = [
    ("dBInstanceClass", "instance_class", "dBInstanceClass"),
    ("allocatedStorage", "allocated_storage", "allocatedStorage"),
    ("multiAZ", "multi_az", "multiAZ"),
    (
        "backupRetentionPeriod",
        "backup_retention_period",
        "backupRetentionPeriod",
    ),
];

/// Settings that always apply at once.
const IMMEDIATE: [(&str, &str); 3] = [
    ("deletionProtection", "deletion_protection"),
    ("copyTagsToSnapshot", "copy_tags_to_snapshot"),
    ("autoMinorVersionUpgrade", "auto_minor_version_upgrade"),
];

/// ModifyDBInstance.
fn modify_db_instance(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let id = params::string(p, "dBInstanceIdentifier")?;
    let at = ctx
        .find("aws_db_instance", "identifier", id)
        .ok_or_else(|| {
            ApiError::new("DBInstanceNotFound", format!("DBInstance {id} not found."))
        })?;
    let storage = params::as_int(&ctx.attr(at, "allocated_storage")).unwrap_or(0);
    if let Some(requested) = params::opt_int(p, "allocatedStorage")
        && requested < storage
    {
        return Err(ApiError::new(
            "InvalidParameterCombination",
            "Invalid storage size for engine name and storage type: can't decrease allocated storage",
        ));
    }
    let immediately = params::opt_bool(p, "applyImmediately").unwrap_or(false);
    let mut pending = Map::new();
    for (param, attr, pending_key) in DEFERRABLE {
        let Some(value) = p.get(param) else { continue };
        if immediately {
            ctx.set(at, attr, value.clone());
        } else {
            pending.insert(pending_key.to_owned(), value.clone());
        }
    }
    for (param, attr) in IMMEDIATE {
        if let Some(value) = params::opt_bool(p, param) {
            ctx.set(at, attr, json!(value));
        }
    }
    Ok(json!({
        "dBInstanceIdentifier": id,
        "dBInstanceArn": ctx.attr(at, "arn"),
        "dBInstanceClass": ctx.attr(at, "instance_class"),
        "engine": ctx.attr(at, "engine"),
        "engineVersion": ctx.attr(at, "engine_version"),
        "dBInstanceStatus": if immediately { "modifying" } else { "available" },
        "allocatedStorage": ctx.attr(at, "allocated_storage"),
        "multiAZ": ctx.attr(at, "multi_az"),
        "backupRetentionPeriod": ctx.attr(at, "backup_retention_period"),
        "deletionProtection": ctx.attr(at, "deletion_protection"),
        "dbiResourceId": ctx.attr(at, "resource_id"),
        "pendingModifiedValues": pending,
    }))
}

/// The DB instance, subnet group or cluster of an ARN, or `DBInstanceNotFound`.
fn by_arn(ctx: &Ctx<'_>, p: &Value) -> Result<usize, ApiError> {
    let arn = params::string(p, "resourceName")?;
    let types = ["aws_db_instance", "aws_db_subnet_group", "aws_rds_cluster"];
    ctx.find_any(&types, "arn", arn).ok_or_else(|| {
        let id = arn.rsplit(':').next().unwrap_or(arn);
        ApiError::new("DBInstanceNotFound", format!("DBInstance {id} not found."))
    })
}

/// AddTagsToResource.
fn add_tags(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = by_arn(ctx, p)?;
    ctx.add_tags(at, &params::tag_list(p.get("tags")));
    Ok(Value::Null)
}

/// RemoveTagsFromResource.
fn remove_tags(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = by_arn(ctx, p)?;
    ctx.remove_tags(at, &params::strings(p.get("tagKeys")));
    Ok(Value::Null)
}
