//! Amazon EKS and ElastiCache: cluster, node group, add-on and access entry updates; cache
//! replication group and subnet group changes. Updates that AWS runs in the background
//! (versions, scaling) are applied at once, as a later refresh would read them.

use serde_json::{Value, json};

use super::super::ApiError;
use super::super::ctx::{ApiResult, Ctx};
use super::super::params;
use super::{Handler, Service};

/// The handler of an EKS or ElastiCache write call.
pub fn handler(service: Service, api: &str) -> Option<Handler> {
    Some(match (service, api) {
        (Service::Eks, "UpdateClusterVersion") => update_cluster_version,
        (Service::Eks, "UpdateClusterConfig") => update_cluster_config,
        (Service::Eks, "UpdateNodegroupConfig") => update_nodegroup_config,
        (Service::Eks, "UpdateAddon") => update_addon,
        (Service::Eks, "DeleteAddon") => delete_addon,
        (Service::Eks, "UpdateAccessEntry") => update_access_entry,
        (Service::Eks, "DeleteAccessEntry") => delete_access_entry,
        (Service::Eks, "TagResource") => tag_eks,
        (Service::ElastiCache, "ModifyReplicationGroup") => modify_replication_group,
        (Service::ElastiCache, "ModifyCacheSubnetGroup") => modify_cache_subnet_group,
        (Service::ElastiCache, "AddTagsToResource") => tag_cache,
        _ => return None,
    })
}

fn eks_not_found(what: &str, name: &str) -> ApiError {
    ApiError::new(
        "ResourceNotFoundException",
        format!("No {what} found for name: {name}."),
    )
}

fn cluster(ctx: &Ctx<'_>, name: &str) -> Result<usize, ApiError> {
    ctx.find("aws_eks_cluster", "name", name)
        .ok_or_else(|| eks_not_found("cluster", name))
}

/// The `update` object EKS answers update calls with.
fn update(ctx: &mut Ctx<'_>, kind: &str, params: Value) -> Value {
    json!({"update": {
        "id": ctx.uuid(), "status": "InProgress", "type": kind, "params": params,
        "createdAt": ctx.iso_time(), "errors": [],
    }})
}

/// UpdateClusterVersion: one minor version up at a time.
fn update_cluster_version(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = cluster(ctx, params::string(p, "name")?)?;
    let version = params::string(p, "version")?;
    let current = ctx.attr_str(at, "version");
    let minor = |v: &str| v.split_once('.').and_then(|(_, m)| m.parse::<u32>().ok());
    if minor(version) != minor(&current).map(|m| m + 1) {
        return Err(ApiError::new(
            "InvalidParameterException",
            format!("Unsupported Kubernetes minor version update from {current} to {version}"),
        ));
    }
    ctx.set(at, "version", json!(version));
    Ok(update(
        ctx,
        "VersionUpdate",
        json!([{"type": "Version", "value": version}, {"type": "PlatformVersion", "value": "eks.1"}]),
    ))
}

/// UpdateClusterConfig: control plane logging or endpoint access.
fn update_cluster_config(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = cluster(ctx, params::string(p, "name")?)?;
    if let Some(logging) = p.pointer("/logging/clusterLogging") {
        let mut types: Vec<String> =
            params::strings(ctx.get(at).attributes.get("enabled_cluster_log_types"));
        for entry in params::list(Some(logging)) {
            let enabled = params::opt_bool(entry, "enabled").unwrap_or(false);
            for t in params::strings(entry.get("types")) {
                types.retain(|x| *x != t);
                if enabled {
                    types.push(t);
                }
            }
        }
        types.sort();
        ctx.set(at, "enabled_cluster_log_types", json!(types));
        return Ok(update(
            ctx,
            "LoggingUpdate",
            json!([{"type": "ClusterLogging", "value": logging.to_string()}]),
        ));
    }
    let config = p
        .get("resourcesVpcConfig")
        .ok_or_else(|| params::missing("resourcesVpcConfig"))?;
    let mut vpc = ctx
        .attr(at, "vpc_config")
        .get(0)
        .cloned()
        .unwrap_or_default();
    for (param, attr) in [
        ("endpointPublicAccess", "endpoint_public_access"),
        ("endpointPrivateAccess", "endpoint_private_access"),
    ] {
        if let Some(v) = params::opt_bool(config, param) {
            vpc[attr] = json!(v);
        }
    }
    if config.get("publicAccessCidrs").is_some() {
        vpc["public_access_cidrs"] = json!(params::strings(config.get("publicAccessCidrs")));
    }
    if vpc["endpoint_public_access"] == false && vpc["endpoint_private_access"] == false {
        return Err(ApiError::new(
            "InvalidParameterException",
            "Cluster must have either public or private API server endpoint access enabled.",
        ));
    }
    ctx.set(at, "vpc_config", json!([vpc]));
    Ok(update(ctx, "EndpointAccessUpdate", json!([])))
}

/// The node group, add-on or access entry of a cluster: its position.
fn member(
    ctx: &Ctx<'_>,
    resource_type: &str,
    key: &str,
    p: &Value,
    param: &str,
) -> Result<usize, ApiError> {
    let cluster_name = params::string(p, "clusterName")?;
    cluster(ctx, cluster_name)?;
    let name = params::string(p, param)?;
    ctx.find_all(
        resource_type,
        &[("cluster_name", cluster_name), (key, name)],
    )
    .first()
    .copied()
    .ok_or_else(|| eks_not_found(param.trim_end_matches("Name").trim_end_matches("Arn"), name))
}

/// UpdateNodegroupConfig: scaling limits (min ≤ desired ≤ max).
fn update_nodegroup_config(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = member(
        ctx,
        "aws_eks_node_group",
        "node_group_name",
        p,
        "nodegroupName",
    )?;
    let Some(given) = p.get("scalingConfig") else {
        return Err(params::missing("scalingConfig"));
    };
    let mut scaling = ctx
        .attr(at, "scaling_config")
        .get(0)
        .cloned()
        .unwrap_or_default();
    for (param, attr) in [
        ("minSize", "min_size"),
        ("maxSize", "max_size"),
        ("desiredSize", "desired_size"),
    ] {
        if let Some(v) = params::opt_int(given, param) {
            scaling[attr] = json!(v);
        }
    }
    let size = |k: &str| scaling[k].as_i64().unwrap_or(0);
    if size("min_size") > size("desired_size") || size("desired_size") > size("max_size") {
        return Err(ApiError::new(
            "InvalidParameterException",
            "Minimum capacity cannot be greater than desired size, and desired size cannot exceed maximum capacity",
        ));
    }
    ctx.set(at, "scaling_config", json!([scaling]));
    Ok(update(ctx, "ConfigUpdate", json!([])))
}

/// UpdateAddon: the version.
fn update_addon(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = member(ctx, "aws_eks_addon", "addon_name", p, "addonName")?;
    if let Some(version) = params::opt_string(p, "addonVersion") {
        ctx.set(at, "addon_version", json!(version));
        let now = ctx.iso_time();
        ctx.set(at, "modified_at", json!(now));
    }
    Ok(update(ctx, "AddonUpdate", json!([])))
}

/// DeleteAddon.
fn delete_addon(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = member(ctx, "aws_eks_addon", "addon_name", p, "addonName")?;
    let name = ctx.attr(at, "addon_name");
    ctx.remove(at);
    Ok(json!({"addon": {"addonName": name, "status": "DELETING"}}))
}

/// UpdateAccessEntry: Kubernetes groups (EKS refuses `system:` groups).
fn update_access_entry(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = member(
        ctx,
        "aws_eks_access_entry",
        "principal_arn",
        p,
        "principalArn",
    )?;
    if p.get("kubernetesGroups").is_some() {
        let mut groups = params::strings(p.get("kubernetesGroups"));
        if groups.iter().any(|g| g.starts_with("system:")) {
            return Err(ApiError::new(
                "InvalidParameterException",
                "The kubernetes group name system:masters is invalid, it cannot start with system:",
            ));
        }
        groups.sort();
        ctx.set(at, "kubernetes_groups", json!(groups));
        let now = ctx.iso_time();
        ctx.set(at, "modified_at", json!(now));
    }
    Ok(json!({"accessEntry": {
        "principalArn": ctx.attr(at, "principal_arn"),
        "kubernetesGroups": ctx.attr(at, "kubernetes_groups"),
        "accessEntryArn": ctx.attr(at, "access_entry_arn"),
        "type": ctx.attr(at, "type"),
    }}))
}

/// DeleteAccessEntry.
fn delete_access_entry(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let at = member(
        ctx,
        "aws_eks_access_entry",
        "principal_arn",
        p,
        "principalArn",
    )?;
    ctx.remove(at);
    Ok(Value::Null)
}

/// EKS TagResource: tags as a map, on anything EKS names by ARN.
fn tag_eks(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let arn = params::string(p, "resourceArn")?;
    let at = ctx
        .find_any(
            &["aws_eks_cluster", "aws_eks_node_group", "aws_eks_addon"],
            "arn",
            arn,
        )
        .or_else(|| ctx.find("aws_eks_access_entry", "access_entry_arn", arn))
        .ok_or_else(|| ApiError::new("NotFoundException", format!("Resource {arn} not found")))?;
    ctx.add_tags(at, &params::tag_map(p.get("tags")));
    Ok(Value::Null)
}

/// ModifyReplicationGroup: node type, snapshot retention and description.
fn modify_replication_group(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let id = params::string(p, "replicationGroupId")?.to_lowercase();
    let at = ctx
        .find(
            "aws_elasticache_replication_group",
            "replication_group_id",
            &id,
        )
        .ok_or_else(|| {
            ApiError::new(
                "ReplicationGroupNotFoundFault",
                format!("Replication group {id} not found."),
            )
        })?;
    if let Some(days) = params::opt_int(p, "snapshotRetentionLimit") {
        ctx.set(at, "snapshot_retention_limit", json!(days));
    }
    if let Some(kind) = params::opt_string(p, "cacheNodeType") {
        ctx.set(at, "node_type", json!(kind));
    }
    if let Some(description) = params::opt_string(p, "replicationGroupDescription") {
        ctx.set(at, "description", json!(description));
    }
    Ok(json!({"replicationGroup": {
        "replicationGroupId": id,
        "description": ctx.attr(at, "description"),
        "status": "modifying",
        "cacheNodeType": ctx.attr(at, "node_type"),
        "snapshotRetentionLimit": ctx.attr(at, "snapshot_retention_limit"),
        "aRN": ctx.attr(at, "arn"),
    }}))
}

/// ModifyCacheSubnetGroup: the description and subnets.
fn modify_cache_subnet_group(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let name = params::string(p, "cacheSubnetGroupName")?.to_lowercase();
    let at = ctx
        .find("aws_elasticache_subnet_group", "name", &name)
        .ok_or_else(|| {
            ApiError::new(
                "CacheSubnetGroupNotFoundFault",
                format!("Cache subnet group {name} not found."),
            )
        })?;
    if let Some(description) = params::opt_string(p, "cacheSubnetGroupDescription") {
        ctx.set(at, "description", json!(description));
    }
    if p.get("subnetIds").is_some() {
        let mut subnets = params::strings(p.get("subnetIds"));
        subnets.sort();
        ctx.set(at, "subnet_ids", json!(subnets));
    }
    Ok(json!({"cacheSubnetGroup": {
        "cacheSubnetGroupName": name,
        "cacheSubnetGroupDescription": ctx.attr(at, "description"),
        "vpcId": ctx.attr(at, "vpc_id"),
        "aRN": ctx.attr(at, "arn"),
    }}))
}

/// ElastiCache AddTagsToResource.
fn tag_cache(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let arn = params::string(p, "resourceName")?;
    let types = [
        "aws_elasticache_replication_group",
        "aws_elasticache_subnet_group",
    ];
    let at = ctx.find_any(&types, "arn", arn).ok_or_else(|| {
        ApiError::new(
            "InvalidARN",
            format!("{arn} is not a valid ElastiCache resource"),
        )
    })?;
    ctx.add_tags(at, &params::tag_list(p.get("tags")));
    Ok(json!({"tagList": ctx.attr(at, "tags_all")}))
}
