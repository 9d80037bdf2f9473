//! IAM roles, their policies and tags, managed policy versions, and user policy attachments.
//! Attachments are `aws_iam_role_policy_attachment` / `aws_iam_user_policy_attachment`
//! instances (and the role's computed `managed_policy_arns` when the state has it); inline
//! policies are `aws_iam_role_policy` instances (and the role's `inline_policy`).

use serde_json::{Value, json};

use super::super::ApiError;
use super::super::ctx::{ApiResult, Ctx};
use super::super::params;
use super::Handler;

/// The handler of an IAM write call.
pub fn handler(api: &str) -> Option<Handler> {
    Some(match api {
        "AttachRolePolicy" => attach_role_policy,
        "DetachRolePolicy" => detach_role_policy,
        "PutRolePolicy" => put_role_policy,
        "DeleteRolePolicy" => delete_role_policy,
        "UpdateAssumeRolePolicy" => update_assume_role_policy,
        "CreatePolicyVersion" => create_policy_version,
        "TagRole" => tag_role,
        "UpdateRole" => update_role,
        "UntagRole" => untag_role,
        "CreateRole" => create_role,
        "DeleteRole" => delete_role,
        "AttachUserPolicy" => attach_user_policy,
        _ => return None,
    })
}

fn no_such_entity(message: String) -> ApiError {
    ApiError::new("NoSuchEntityException", message)
}

/// The role of `roleName`, or `NoSuchEntity`.
fn role(ctx: &Ctx<'_>, p: &Value) -> Result<(String, usize), ApiError> {
    let name = params::string(p, "roleName")?;
    let at = ctx
        .find("aws_iam_role", "name", name)
        .ok_or_else(|| no_such_entity(format!("The role with name {name} cannot be found.")))?;
    Ok((name.to_owned(), at))
}

/// Checks that a policy ARN names an attachable policy: AWS-managed ones always exist,
/// customer-managed ones must be in the account.
fn policy_exists(ctx: &Ctx<'_>, arn: &str) -> Result<(), ApiError> {
    let aws_managed = arn.starts_with("arn:aws:iam::aws:policy/");
    if aws_managed || ctx.find("aws_iam_policy", "arn", arn).is_some() {
        return Ok(());
    }
    Err(no_such_entity(format!(
        "Policy {arn} does not exist or is not attachable."
    )))
}

/// A Terraform `PrefixedUniqueId`-style id: prefix, timestamp and counter.
fn unique_id(ctx: &Ctx<'_>, prefix: &str) -> String {
    format!("{prefix}{}000000000001", ctx.time.format("%Y%m%d%H%M%S"))
}

/// Adds or removes `arn` in the role's `managed_policy_arns`, when the state records it.
fn edit_managed_arns(ctx: &mut Ctx<'_>, at: usize, arn: &str, attach: bool) {
    let Some(current) = ctx.attr(at, "managed_policy_arns").as_array().cloned() else {
        return;
    };
    let mut arns: Vec<String> = current
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    arns.retain(|a| a != arn);
    if attach {
        arns.push(arn.to_owned());
    }
    arns.sort();
    ctx.set(at, "managed_policy_arns", json!(arns));
}

/// AttachRolePolicy (attaching twice succeeds and changes nothing).
fn attach_role_policy(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, at) = role(ctx, p)?;
    let arn = params::string(p, "policyArn")?;
    policy_exists(ctx, arn)?;
    let attached = ctx.find_all(
        "aws_iam_role_policy_attachment",
        &[("role", &name), ("policy_arn", arn)],
    );
    if attached.is_empty() {
        let id = unique_id(ctx, &format!("{name}-"));
        ctx.create(
            "aws_iam_role_policy_attachment",
            json!({"id": id, "role": name, "policy_arn": arn}),
        );
    }
    edit_managed_arns(ctx, at, arn, true);
    Ok(Value::Null)
}

/// DetachRolePolicy.
fn detach_role_policy(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, at) = role(ctx, p)?;
    let arn = params::string(p, "policyArn")?;
    let attached = ctx.find_all(
        "aws_iam_role_policy_attachment",
        &[("role", &name), ("policy_arn", arn)],
    );
    let in_role_list = params::strings(Some(&ctx.attr(at, "managed_policy_arns")))
        .iter()
        .any(|a| a == arn);
    if attached.is_empty() && !in_role_list {
        return Err(no_such_entity(format!("Policy {arn} was not found.")));
    }
    ctx.remove_all(attached);
    edit_managed_arns(ctx, at, arn, false);
    Ok(Value::Null)
}

/// A policy document parameter, checked to be JSON.
fn document<'a>(p: &'a Value, key: &str) -> Result<&'a str, ApiError> {
    let doc = params::string(p, key)?;
    if serde_json::from_str::<Value>(doc).is_err() {
        return Err(ApiError::new(
            "MalformedPolicyDocumentException",
            "This policy contains invalid Json",
        ));
    }
    Ok(doc)
}

/// Sets (or with `None` removes) an inline policy in the role's `inline_policy`, when the
/// state records it.
fn edit_inline_list(ctx: &mut Ctx<'_>, at: usize, policy: &str, document: Option<&str>) {
    let Some(mut current) = ctx.attr(at, "inline_policy").as_array().cloned() else {
        return;
    };
    current.retain(|e| e.get("name").and_then(Value::as_str) != Some(policy));
    if let Some(document) = document {
        current.push(json!({"name": policy, "policy": document}));
    }
    ctx.set(at, "inline_policy", Value::Array(current));
}

/// PutRolePolicy: creates or replaces an inline policy.
fn put_role_policy(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, at) = role(ctx, p)?;
    let policy = params::string(p, "policyName")?;
    let doc = document(p, "policyDocument")?;
    match ctx
        .find_all("aws_iam_role_policy", &[("role", &name), ("name", policy)])
        .first()
    {
        Some(&existing) => ctx.set(existing, "policy", json!(doc)),
        None => {
            ctx.create(
                "aws_iam_role_policy",
                json!({"id": format!("{name}:{policy}"), "name": policy, "name_prefix": "", "policy": doc, "role": name}),
            );
        }
    }
    edit_inline_list(ctx, at, policy, Some(doc));
    Ok(Value::Null)
}

/// DeleteRolePolicy.
fn delete_role_policy(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, at) = role(ctx, p)?;
    let policy = params::string(p, "policyName")?;
    let found = ctx.find_all("aws_iam_role_policy", &[("role", &name), ("name", policy)]);
    let inline = ctx.attr(at, "inline_policy");
    let in_list = params::list(Some(&inline))
        .iter()
        .any(|e| e.get("name").and_then(Value::as_str) == Some(policy));
    if found.is_empty() && !in_list {
        return Err(no_such_entity(format!(
            "The role policy with name {policy} cannot be found."
        )));
    }
    ctx.remove_all(found);
    edit_inline_list(ctx, at, policy, None);
    Ok(Value::Null)
}

/// UpdateAssumeRolePolicy.
fn update_assume_role_policy(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (_, at) = role(ctx, p)?;
    let doc = document(p, "policyDocument")?;
    ctx.set(at, "assume_role_policy", json!(doc));
    Ok(Value::Null)
}

/// CreatePolicyVersion: up to five versions; with `setAsDefault` the new document becomes
/// the policy's `policy`.
fn create_policy_version(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let arn = params::string(p, "policyArn")?;
    let at = ctx.find("aws_iam_policy", "arn", arn).ok_or_else(|| {
        no_such_entity(format!("Policy {arn} does not exist or is not attachable."))
    })?;
    let doc = document(p, "policyDocument")?;
    let version = ctx.next_policy_version(arn);
    if version > 5 {
        return Err(ApiError::new(
            "LimitExceededException",
            "A managed policy can have up to 5 versions. Before you create a new version, you must delete an existing version.",
        ));
    }
    let default = params::opt_bool(p, "setAsDefault").unwrap_or(false);
    if default {
        ctx.set(at, "policy", json!(doc));
    }
    Ok(json!({"policyVersion": {
        "versionId": format!("v{version}"),
        "isDefaultVersion": default,
        "createDate": ctx.java_time(),
    }}))
}

/// TagRole.
fn tag_role(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (_, at) = role(ctx, p)?;
    ctx.add_tags(at, &params::tag_list(p.get("tags")));
    Ok(Value::Null)
}

/// UpdateRole: the description and the maximum session duration (1 to 12 hours).
fn update_role(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (_, at) = role(ctx, p)?;
    if let Some(seconds) = params::opt_int(p, "maxSessionDuration") {
        if !(3600..=43_200).contains(&seconds) {
            return Err(ApiError::new(
                "ValidationError",
                format!(
                    "1 validation error detected: Value '{seconds}' at 'maxSessionDuration' failed to satisfy constraint: Member must have value between 3600 and 43200"
                ),
            ));
        }
        ctx.set(at, "max_session_duration", json!(seconds));
    }
    if let Some(description) = params::opt_string(p, "description") {
        ctx.set(at, "description", json!(description));
    }
    Ok(Value::Null)
}

/// UntagRole.
fn untag_role(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (_, at) = role(ctx, p)?;
    ctx.remove_tags(at, &params::strings(p.get("tagKeys")));
    Ok(Value::Null)
}

/// Percent-encodes a policy document the way IAM returns it in responses.
fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// CreateRole.
fn create_role(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let name = params::string(p, "roleName")?;
    let doc = document(p, "assumeRolePolicyDocument")?;
    if ctx.find("aws_iam_role", "name", name).is_some() {
        return Err(ApiError::new(
            "EntityAlreadyExistsException",
            format!("Role with name {name} already exists."),
        ));
    }
    let path = params::opt_string(p, "path").unwrap_or("/");
    let arn = format!("arn:aws:iam::{}:role{path}{name}", ctx.account());
    let role_id = format!("AROA{}", ctx.upper(17));
    let tags = params::tag_list(p.get("tags"));
    let at = ctx.create(
        "aws_iam_role",
        json!({
            "arn": arn,
            "assume_role_policy": doc,
            "create_date": ctx.iso_time(),
            "description": params::opt_string(p, "description").unwrap_or_default(),
            "force_detach_policies": false,
            "id": name,
            "inline_policy": [],
            "managed_policy_arns": [],
            "max_session_duration": params::opt_int(p, "maxSessionDuration").unwrap_or(3600),
            "name": name,
            "name_prefix": "",
            "path": path,
            "permissions_boundary": params::opt_string(p, "permissionsBoundary").unwrap_or_default(),
            "tags": null,
            "tags_all": {},
            "unique_id": role_id,
        }),
    );
    ctx.add_tags(at, &tags);
    Ok(json!({"role": {
        "path": path,
        "roleName": name,
        "roleId": role_id,
        "arn": arn,
        "createDate": ctx.java_time(),
        "assumeRolePolicyDocument": url_encode(doc),
    }}))
}

/// DeleteRole: refused while policies are attached or inline policies remain.
fn delete_role(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (name, at) = role(ctx, p)?;
    let attached = !ctx
        .find_all("aws_iam_role_policy_attachment", &[("role", &name)])
        .is_empty()
        || !params::strings(Some(&ctx.attr(at, "managed_policy_arns"))).is_empty();
    if attached {
        return Err(ApiError::new(
            "DeleteConflictException",
            "Cannot delete entity, must detach all policies first.",
        ));
    }
    let inline = !ctx
        .find_all("aws_iam_role_policy", &[("role", &name)])
        .is_empty()
        || !params::list(Some(&ctx.attr(at, "inline_policy"))).is_empty();
    if inline {
        return Err(ApiError::new(
            "DeleteConflictException",
            "Cannot delete entity, must delete policies first.",
        ));
    }
    ctx.remove(at);
    Ok(Value::Null)
}

/// AttachUserPolicy.
fn attach_user_policy(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let user = params::string(p, "userName")?;
    if ctx.find("aws_iam_user", "name", user).is_none() {
        return Err(no_such_entity(format!(
            "The user with name {user} cannot be found."
        )));
    }
    let arn = params::string(p, "policyArn")?;
    policy_exists(ctx, arn)?;
    if ctx
        .find_all(
            "aws_iam_user_policy_attachment",
            &[("user", user), ("policy_arn", arn)],
        )
        .is_empty()
    {
        let id = unique_id(ctx, &format!("{user}-"));
        ctx.create(
            "aws_iam_user_policy_attachment",
            json!({"id": id, "user": user, "policy_arn": arn}),
        );
    }
    Ok(Value::Null)
}
