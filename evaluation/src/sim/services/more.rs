//! Further write calls of the services modelled elsewhere, on their configuration resources:
//! Auto Scaling policies, DB subnet groups, ECR lifecycle policies, ECS cluster settings,
//! instance profiles and OIDC providers, KMS aliases, Lambda event source mappings and
//! permissions, listener rules, hosted zones, bucket ownership and website configurations,
//! SNS subscriptions, route table associations, network ACL entries, flow logs, Redshift
//! subnet groups, and tagging of these.

use serde_json::{Value, json};

use super::super::ApiError;
use super::super::ctx::{ApiResult, Ctx, ec2_true};
use super::super::params;
use super::{Handler, Service};

/// The handler of one of these calls.
pub fn handler(service: Service, api: &str) -> Option<Handler> {
    Some(match (service, api) {
        (Service::AutoScaling, "PutScalingPolicy") => put_scaling_policy,
        (Service::Rds, "ModifyDBSubnetGroup") => modify_db_subnet_group,
        (Service::Ecr, "PutLifecyclePolicy") => put_lifecycle_policy,
        (Service::Ecr, "DeleteLifecyclePolicy") => delete_lifecycle_policy,
        (Service::Ecr, "TagResource") => tag_repository,
        (Service::Ecs, "UpdateClusterSettings") => update_cluster_settings,
        (Service::Ecs, "TagResource") => tag_ecs,
        (Service::Iam, "TagInstanceProfile") => tag_instance_profile,
        (Service::Iam, "UpdateOpenIDConnectProviderThumbprint") => update_thumbprint,
        (Service::Iam, "TagOpenIDConnectProvider") => tag_oidc_provider,
        (Service::Kms, "DeleteAlias") => delete_alias,
        (Service::Lambda, "UpdateEventSourceMapping") => update_event_source_mapping,
        (Service::Lambda, "RemovePermission") => remove_permission,
        (Service::Elbv2, "ModifyRule") => modify_rule,
        (Service::Route53, "UpdateHostedZoneComment") => update_zone_comment,
        (Service::Route53, "ChangeTagsForResource") => change_zone_tags,
        (Service::S3, "PutBucketOwnershipControls") => put_ownership_controls,
        (Service::S3, "PutBucketWebsite") => put_website,
        (Service::S3, "DeleteBucketWebsite") => delete_website,
        (Service::Sns, "Unsubscribe") => unsubscribe,
        (Service::Ssm, "AddTagsToResource") => tag_parameter,
        (Service::Ec2, "DisassociateRouteTable") => disassociate_route_table,
        (Service::Ec2, "ReplaceNetworkAclEntry") => replace_acl_entry,
        (Service::Ec2, "DeleteNetworkAclEntry") => delete_acl_entry,
        (Service::Ec2, "DeleteFlowLogs") => delete_flow_logs,
        (Service::Redshift, "ModifyClusterSubnetGroup") => modify_redshift_subnet_group,
        (Service::Redshift, "CreateTags") => tag_redshift,
        _ => return None,
    })
}

/// The first instance of `resource_type` whose `key` is `value`, or AWS's `code` error.
fn found(
    ctx: &Ctx<'_>,
    resource_type: &str,
    key: &str,
    value: &str,
    code: &str,
    message: String,
) -> Result<usize, ApiError> {
    ctx.find(resource_type, key, value)
        .ok_or_else(|| ApiError::new(code, message))
}

/// PutScalingPolicy on an existing target tracking policy: its target and scale-in switch.
fn put_scaling_policy(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let group = params::string(p, "autoScalingGroupName")?;
    let name = params::string(p, "policyName")?;
    let at = ctx
        .find_all(
            "aws_autoscaling_policy",
            &[("autoscaling_group_name", group), ("name", name)],
        )
        .first()
        .copied()
        .ok_or_else(|| {
            ApiError::new(
                "ValidationError",
                format!("Creating policy {name} is not modelled"),
            )
        })?;
    let config = p
        .get("targetTrackingConfiguration")
        .ok_or_else(|| params::missing("targetTrackingConfiguration"))?;
    let mut tracking = ctx
        .attr(at, "target_tracking_configuration")
        .get(0)
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Some(target) = config.get("targetValue").and_then(params::as_float) {
        tracking["target_value"] = match target.fract() == 0.0 {
            true => json!(target as i64),
            false => json!(target),
        };
    }
    if let Some(off) = params::opt_bool(config, "disableScaleIn") {
        tracking["disable_scale_in"] = json!(off);
    }
    ctx.set(at, "target_tracking_configuration", json!([tracking]));
    Ok(json!({"policyARN": ctx.attr(at, "arn"), "alarms": []}))
}

/// ModifyDBSubnetGroup: the description and the subnets.
fn modify_db_subnet_group(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let name = params::string(p, "dBSubnetGroupName")?;
    let at = found(
        ctx,
        "aws_db_subnet_group",
        "name",
        name,
        "DBSubnetGroupNotFoundFault",
        format!("DB subnet group '{name}' not found."),
    )?;
    if let Some(description) = params::opt_string(p, "dBSubnetGroupDescription") {
        ctx.set(at, "description", json!(description));
    }
    let mut subnets = params::strings(p.get("subnetIds"));
    if subnets.is_empty() {
        return Err(params::missing("subnetIds"));
    }
    subnets.sort();
    ctx.set(at, "subnet_ids", json!(subnets));
    Ok(json!({"dBSubnetGroup": {
        "dBSubnetGroupName": name,
        "dBSubnetGroupDescription": ctx.attr(at, "description"),
        "vpcId": ctx.attr(at, "vpc_id"),
        "subnetGroupStatus": "Complete",
        "dBSubnetGroupArn": ctx.attr(at, "arn"),
    }}))
}

/// The Redshift subnet group named by `clusterSubnetGroupName` (AWS keeps names in lower case).
fn redshift_subnet_group(ctx: &Ctx<'_>, name: &str) -> Result<usize, ApiError> {
    let name = name.to_lowercase();
    found(
        ctx,
        "aws_redshift_subnet_group",
        "name",
        &name,
        "ClusterSubnetGroupNotFoundFault",
        format!("Cluster subnet group {name} not found."),
    )
}

/// ModifyClusterSubnetGroup: the subnets (required) and the description.
fn modify_redshift_subnet_group(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = redshift_subnet_group(ctx, params::string(p, "clusterSubnetGroupName")?)?;
    if let Some(description) = params::opt_string(p, "description") {
        ctx.set(at, "description", json!(description));
    }
    let mut subnets = params::strings(p.get("subnetIds"));
    if subnets.is_empty() {
        return Err(params::missing("subnetIds"));
    }
    subnets.sort();
    ctx.set(at, "subnet_ids", json!(subnets));
    let listed: Vec<Value> = subnets
        .iter()
        .map(|s| json!({"subnetIdentifier": s, "subnetStatus": "Active"}))
        .collect();
    Ok(json!({
        "clusterSubnetGroupName": ctx.attr(at, "name"),
        "description": ctx.attr(at, "description"),
        "subnetGroupStatus": "Complete",
        "subnets": listed,
        "tags": [],
    }))
}

/// Redshift CreateTags on a subnet group, named by its ARN.
fn tag_redshift(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let arn = params::string(p, "resourceName")?;
    let at = found(
        ctx,
        "aws_redshift_subnet_group",
        "arn",
        arn,
        "ResourceNotFoundFault",
        format!("The resource {arn} could not be found."),
    )?;
    ctx.add_tags(at, &params::tag_list(p.get("tags")));
    Ok(Value::Null)
}

fn ecr_repository(ctx: &Ctx<'_>, name: &str) -> Result<usize, ApiError> {
    found(
        ctx,
        "aws_ecr_repository",
        "name",
        name,
        "RepositoryNotFoundException",
        format!(
            "The repository with name '{name}' does not exist in the registry with id '{}'",
            ctx.account()
        ),
    )
}

/// PutLifecyclePolicy: the policy text as given (ECR keeps it as sent).
fn put_lifecycle_policy(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let name = params::string(p, "repositoryName")?;
    ecr_repository(ctx, name)?;
    let text = params::string(p, "lifecyclePolicyText")?;
    let policy: Value = serde_json::from_str(text).map_err(|_| {
        ApiError::new(
            "InvalidParameterException",
            "Invalid parameter at 'LifecyclePolicyText' failed to satisfy constraint: 'Lifecycle policy validation failure'",
        )
    })?;
    let stored = crate::sim::canonical_json(&policy);
    let registry = ctx.account().to_owned();
    match ctx.find("aws_ecr_lifecycle_policy", "repository", name) {
        Some(at) => ctx.set(at, "policy", json!(stored)),
        None => {
            ctx.create(
                "aws_ecr_lifecycle_policy",
                json!({"id": name, "repository": name, "registry_id": registry, "policy": stored}),
            );
        }
    }
    Ok(json!({"registryId": registry, "repositoryName": name, "lifecyclePolicyText": text}))
}

/// DeleteLifecyclePolicy.
fn delete_lifecycle_policy(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let name = params::string(p, "repositoryName")?;
    ecr_repository(ctx, name)?;
    let at = found(
        ctx,
        "aws_ecr_lifecycle_policy",
        "repository",
        name,
        "LifecyclePolicyNotFoundException",
        format!(
            "Lifecycle policy does not exist for the repository with name '{name}' in the registry with id '{}'",
            ctx.account()
        ),
    )?;
    let text = ctx.attr(at, "policy");
    ctx.remove(at);
    Ok(
        json!({"registryId": ctx.account(), "repositoryName": name, "lifecyclePolicyText": text, "lastEvaluatedAt": ctx.iso_time()}),
    )
}

/// ECR TagResource.
fn tag_repository(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let arn = params::string(p, "resourceArn")?;
    let name = arn.split_once(":repository/").map_or(arn, |(_, n)| n);
    let at = ecr_repository(ctx, name)?;
    ctx.add_tags(at, &params::tag_list(p.get("tags")));
    Ok(Value::Null)
}

fn ecs_cluster(ctx: &Ctx<'_>, given: &str) -> Result<usize, ApiError> {
    let name = given.rsplit('/').next().unwrap_or(given);
    ctx.find("aws_ecs_cluster", "name", name)
        .ok_or_else(|| ApiError::new("ClusterNotFoundException", "Cluster not found."))
}

/// UpdateClusterSettings: Container Insights.
fn update_cluster_settings(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = ecs_cluster(ctx, params::string(p, "cluster")?)?;
    let mut settings: Vec<Value> = ctx
        .attr(at, "setting")
        .as_array()
        .cloned()
        .unwrap_or_default();
    for given in params::list(p.get("settings")) {
        let name = params::string(given, "name")?;
        if name != "containerInsights" {
            return Err(ApiError::new(
                "InvalidParameterException",
                "The specified setting name is not valid.",
            ));
        }
        let value = params::string(given, "value")?;
        settings.retain(|s| s["name"] != name);
        settings.push(json!({"name": name, "value": value}));
    }
    ctx.set(at, "setting", json!(settings));
    Ok(json!({"cluster": {
        "clusterArn": ctx.attr(at, "arn"),
        "clusterName": ctx.attr(at, "name"),
        "status": "ACTIVE",
        "settings": settings,
    }}))
}

/// ECS TagResource: clusters and services by ARN.
fn tag_ecs(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let arn = params::string(p, "resourceArn")?;
    let at = ctx
        .find_any(
            &[
                "aws_ecs_cluster",
                "aws_ecs_service",
                "aws_ecs_task_definition",
            ],
            "arn",
            arn,
        )
        .or_else(|| ctx.find("aws_ecs_service", "id", arn))
        .ok_or_else(|| {
            ApiError::new(
                "InvalidParameterException",
                "The specified resource is not found.",
            )
        })?;
    ctx.add_tags(at, &params::tag_list(p.get("tags")));
    Ok(Value::Null)
}

/// TagInstanceProfile.
fn tag_instance_profile(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let name = params::string(p, "instanceProfileName")?;
    let at = found(
        ctx,
        "aws_iam_instance_profile",
        "name",
        name,
        "NoSuchEntity",
        format!("Instance Profile {name} cannot be found."),
    )?;
    ctx.add_tags(at, &params::tag_list(p.get("tags")));
    Ok(Value::Null)
}

fn oidc_provider(ctx: &Ctx<'_>, p: &Value) -> Result<usize, ApiError> {
    let arn = params::string(p, "openIDConnectProviderArn")?;
    found(
        ctx,
        "aws_iam_openid_connect_provider",
        "arn",
        arn,
        "NoSuchEntity",
        format!("OpenIDConnect Provider not found for arn {arn}"),
    )
}

/// UpdateOpenIDConnectProviderThumbprint: replaces the whole list.
fn update_thumbprint(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = oidc_provider(ctx, p)?;
    let thumbprints = params::strings(p.get("thumbprintList"));
    if thumbprints.is_empty() || thumbprints.iter().any(|t| t.len() != 40) {
        return Err(ApiError::new(
            "ValidationError",
            "Thumbprints must be 40 hexadecimal characters.",
        ));
    }
    ctx.set(at, "thumbprint_list", json!(thumbprints));
    Ok(Value::Null)
}

/// TagOpenIDConnectProvider.
fn tag_oidc_provider(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = oidc_provider(ctx, p)?;
    ctx.add_tags(at, &params::tag_list(p.get("tags")));
    Ok(Value::Null)
}

/// KMS DeleteAlias.
fn delete_alias(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let name = params::string(p, "aliasName")?;
    let arn = ctx.arn("kms", name);
    let at = found(
        ctx,
        "aws_kms_alias",
        "name",
        name,
        "NotFoundException",
        format!("Alias {arn} is not found."),
    )?;
    ctx.remove(at);
    Ok(Value::Null)
}

/// UpdateEventSourceMapping: batch size, batching window and the on/off switch.
fn update_event_source_mapping(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let uuid = params::string(p, "uUID")?;
    let at = found(
        ctx,
        "aws_lambda_event_source_mapping",
        "uuid",
        uuid,
        "ResourceNotFoundException",
        format!(
            "The resource you requested does not exist. (Service: Lambda, Status Code: 404, Request ID: {uuid})"
        ),
    )?;
    for (param, attr) in [
        ("batchSize", "batch_size"),
        (
            "maximumBatchingWindowInSeconds",
            "maximum_batching_window_in_seconds",
        ),
    ] {
        if let Some(v) = params::opt_int(p, param) {
            ctx.set(at, attr, json!(v));
        }
    }
    if let Some(enabled) = params::opt_bool(p, "enabled") {
        ctx.set(at, "enabled", json!(enabled));
        let state = if enabled { "Enabled" } else { "Disabled" };
        ctx.set(at, "state", json!(state));
    }
    let modified = ctx.iso_time();
    ctx.set(at, "last_modified", json!(modified));
    Ok(json!({
        "uUID": uuid,
        "batchSize": ctx.attr(at, "batch_size"),
        "maximumBatchingWindowInSeconds": ctx.attr(at, "maximum_batching_window_in_seconds"),
        "eventSourceArn": ctx.attr(at, "event_source_arn"),
        "functionArn": ctx.attr(at, "function_arn"),
        "lastModified": modified,
        "state": "Updating",
        "stateTransitionReason": "USER_INITIATED",
    }))
}

/// RemovePermission: the statement leaves the function's resource policy.
fn remove_permission(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let given = params::string(p, "functionName")?;
    let name = given
        .split_once(":function:")
        .map_or(given, |(_, n)| n.split(':').next().unwrap_or(n));
    let statement = params::string(p, "statementId")?;
    let at = ctx
        .find_all(
            "aws_lambda_permission",
            &[("function_name", name), ("statement_id", statement)],
        )
        .first()
        .copied()
        .ok_or_else(|| {
            ApiError::new(
                "ResourceNotFoundException",
                "The resource you requested does not exist.",
            )
        })?;
    ctx.remove(at);
    Ok(Value::Null)
}

/// ModifyRule: a forward action to another target group.
fn modify_rule(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let arn = params::string(p, "ruleArn")?;
    let at = found(
        ctx,
        "aws_lb_listener_rule",
        "arn",
        arn,
        "RuleNotFound",
        "One or more rules not found".to_owned(),
    )?;
    let actions = params::list(p.get("actions"));
    let [action] = actions.as_slice() else {
        return Err(ApiError::new(
            "ValidationError",
            "Exactly one action is modelled",
        ));
    };
    let target = params::string(action, "targetGroupArn")?;
    if ctx.find("aws_lb_target_group", "arn", target).is_none() {
        return Err(ApiError::new(
            "TargetGroupNotFound",
            "One or more target groups not found",
        ));
    }
    let mut stored = ctx.attr(at, "action").get(0).cloned().unwrap_or_default();
    stored["type"] = json!("forward");
    stored["target_group_arn"] = json!(target);
    ctx.set(at, "action", json!([stored]));
    Ok(json!({"rules": [{
        "ruleArn": arn,
        "priority": ctx.attr(at, "priority").to_string(),
        "actions": [{"type": "forward", "targetGroupArn": target}],
        "isDefault": false,
    }]}))
}

fn zone(ctx: &Ctx<'_>, id: &str) -> Result<usize, ApiError> {
    let id = id.trim_start_matches("/hostedzone/");
    found(
        ctx,
        "aws_route53_zone",
        "zone_id",
        id,
        "NoSuchHostedZone",
        format!("No hosted zone found with ID: {id}"),
    )
}

/// UpdateHostedZoneComment.
fn update_zone_comment(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = zone(ctx, params::string(p, "id")?)?;
    let comment = params::opt_string(p, "comment").unwrap_or_default();
    ctx.set(at, "comment", json!(comment));
    Ok(json!({"hostedZone": {
        "id": format!("/hostedzone/{}", ctx.attr_str(at, "zone_id")),
        "name": format!("{}.", ctx.attr_str(at, "name")),
        "config": {"comment": comment, "privateZone": false},
    }}))
}

/// ChangeTagsForResource on a hosted zone.
fn change_zone_tags(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    if params::opt_string(p, "resourceType") != Some("hostedzone") {
        return Err(ApiError::new(
            "InvalidInput",
            "Only hosted zones are modelled",
        ));
    }
    let at = zone(ctx, params::string(p, "resourceId")?)?;
    ctx.add_tags(at, &params::tag_list(p.get("addTags")));
    ctx.remove_tags(at, &params::strings(p.get("removeTagKeys")));
    Ok(Value::Null)
}

/// The bucket named by an S3 request, checked to exist.
fn bucket<'a>(ctx: &Ctx<'_>, p: &'a Value) -> Result<&'a str, ApiError> {
    let name = params::string(p, "bucketName")?;
    ctx.find("aws_s3_bucket", "bucket", name)
        .map(|_| name)
        .ok_or_else(|| ApiError::new("NoSuchBucket", "The specified bucket does not exist"))
}

/// Sets attributes of the bucket's configuration resource of `resource_type`, adding one
/// when there is none.
fn bucket_config(ctx: &mut Ctx<'_>, resource_type: &str, name: &str, attributes: Value) {
    let at = match ctx.find(resource_type, "bucket", name) {
        Some(at) => at,
        None => ctx.create(
            resource_type,
            json!({"id": name, "bucket": name, "expected_bucket_owner": ""}),
        ),
    };
    if let Value::Object(map) = attributes {
        for (k, v) in map {
            ctx.set(at, &k, v);
        }
    }
}

/// PutBucketOwnershipControls.
fn put_ownership_controls(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let name = bucket(ctx, p)?;
    let rule = p
        .pointer("/OwnershipControls/Rule")
        .ok_or_else(|| params::missing("OwnershipControls"))?;
    let rule = params::list(Some(rule)).first().copied().unwrap_or(rule);
    let ownership = params::string(rule, "ObjectOwnership")?;
    if ![
        "BucketOwnerEnforced",
        "BucketOwnerPreferred",
        "ObjectWriter",
    ]
    .contains(&ownership)
    {
        return Err(ApiError::new(
            "MalformedXML",
            "The XML you provided was not well-formed or did not validate against our published schema",
        ));
    }
    bucket_config(
        ctx,
        "aws_s3_bucket_ownership_controls",
        name,
        json!({"rule": [{"object_ownership": ownership}]}),
    );
    Ok(Value::Null)
}

/// PutBucketWebsite: index and error documents (the website endpoint stays as it is).
fn put_website(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let name = bucket(ctx, p)?.to_owned();
    let config = p
        .get("WebsiteConfiguration")
        .ok_or_else(|| params::missing("WebsiteConfiguration"))?;
    let suffix = config
        .pointer("/IndexDocument/Suffix")
        .and_then(Value::as_str)
        .ok_or_else(|| params::missing("IndexDocument"))?;
    let error = config.pointer("/ErrorDocument/Key").and_then(Value::as_str);
    let region = ctx.region.clone();
    let mut attributes = json!({
        "index_document": [{"suffix": suffix}],
        "error_document": error.map_or(json!([]), |k| json!([{"key": k}])),
    });
    if ctx
        .find("aws_s3_bucket_website_configuration", "bucket", &name)
        .is_none()
    {
        attributes["website_domain"] = json!(format!("s3-website-{region}.amazonaws.com"));
        attributes["website_endpoint"] = json!(format!("{name}.s3-website-{region}.amazonaws.com"));
    }
    bucket_config(
        ctx,
        "aws_s3_bucket_website_configuration",
        &name,
        attributes,
    );
    Ok(Value::Null)
}

/// DeleteBucketWebsite: the configuration goes (S3 answers success when there was none).
fn delete_website(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let name = bucket(ctx, p)?.to_owned();
    let found = ctx.find_all("aws_s3_bucket_website_configuration", &[("bucket", &name)]);
    ctx.remove_all(found);
    Ok(Value::Null)
}

/// Unsubscribe.
fn unsubscribe(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let arn = params::string(p, "subscriptionArn")?;
    let at = found(
        ctx,
        "aws_sns_topic_subscription",
        "arn",
        arn,
        "NotFound",
        "Subscription does not exist".to_owned(),
    )?;
    ctx.remove(at);
    Ok(Value::Null)
}

/// SSM AddTagsToResource on a parameter.
fn tag_parameter(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    if params::opt_string(p, "resourceType") != Some("Parameter") {
        return Err(ApiError::new(
            "InvalidResourceType",
            "Only parameters are modelled",
        ));
    }
    let name = params::string(p, "resourceId")?;
    let at = found(
        ctx,
        "aws_ssm_parameter",
        "name",
        name,
        "InvalidResourceId",
        "The resource ID is not valid. Verify that you entered the correct ID and try again."
            .to_owned(),
    )?;
    ctx.add_tags(at, &params::tag_list(p.get("tags")));
    Ok(Value::Null)
}

/// DisassociateRouteTable: the subnet falls back to the main route table.
fn disassociate_route_table(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let id = params::string(p, "associationId")?;
    let at = found(
        ctx,
        "aws_route_table_association",
        "id",
        id,
        "InvalidAssociationID.NotFound",
        format!("The association ID '{id}' does not exist"),
    )?;
    ctx.remove(at);
    Ok(ec2_true())
}

/// The network ACL rule resource a request names by ACL, number and direction.
fn acl_entry(ctx: &Ctx<'_>, p: &Value) -> Result<usize, ApiError> {
    let acl = params::string(p, "networkAclId")?;
    let number = params::int(p, "ruleNumber")?.to_string();
    let egress = params::opt_bool(p, "egress").unwrap_or(false).to_string();
    ctx.find_all(
        "aws_network_acl_rule",
        &[
            ("network_acl_id", acl),
            ("rule_number", &number),
            ("egress", &egress),
        ],
    )
    .first()
    .copied()
    .ok_or_else(|| {
        ApiError::new(
            "InvalidNetworkAclEntry.NotFound",
            format!("The network acl entry identified by {number} could not be found."),
        )
    })
}

/// ReplaceNetworkAclEntry: protocol, action, CIDR and ports.
fn replace_acl_entry(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = acl_entry(ctx, p)?;
    let protocol = params::string(p, "aclProtocol")?;
    ctx.set(at, "protocol", json!(protocol));
    ctx.set(at, "rule_action", json!(params::string(p, "ruleAction")?));
    if let Some(cidr) = params::opt_string(p, "cidrBlock") {
        ctx.set(at, "cidr_block", json!(cidr));
    }
    let ports = p.get("portRange");
    let port = |k: &str| ports.and_then(|r| params::opt_int(r, k));
    match (protocol, port("from"), port("to")) {
        ("-1", _, _) => {
            ctx.set(at, "from_port", Value::Null);
            ctx.set(at, "to_port", Value::Null);
        }
        (_, Some(from), Some(to)) => {
            ctx.set(at, "from_port", json!(from));
            ctx.set(at, "to_port", json!(to));
        }
        _ => return Err(params::missing("portRange")),
    }
    Ok(ec2_true())
}

/// DeleteNetworkAclEntry.
fn delete_acl_entry(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = acl_entry(ctx, p)?;
    ctx.remove(at);
    Ok(ec2_true())
}

/// DeleteFlowLogs, as CloudTrail logs the request (`DeleteFlowLogsRequest`).
fn delete_flow_logs(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let request = p.get("DeleteFlowLogsRequest").unwrap_or(p);
    let id = request
        .pointer("/FlowLogId/content")
        .and_then(Value::as_str)
        .ok_or_else(|| params::missing("FlowLogId"))?;
    let at = found(
        ctx,
        "aws_flow_log",
        "id",
        id,
        "InvalidFlowLogId.NotFound",
        format!("These flow log ids in the input list are not found: [TotalCount: 1] {id}"),
    )?;
    ctx.remove(at);
    Ok(
        json!({"DeleteFlowLogsResponse": {"xmlns": "http://ec2.amazonaws.com/doc/2016-11-15/", "unsuccessful": "", "requestId": ctx.uuid()}}),
    )
}
