//! Amazon EC2: instances, tags, subnets, VPCs, routes, launch templates and volumes
//! (security groups are in `sg.rs`, VPN gateways, DHCP options, VPC CIDR blocks and block
//! public access in `vpc.rs`).

use serde_json::{Value, json};

use super::super::ApiError;
use super::super::ctx::{ApiResult, Ctx, ec2_true};
use super::super::params::{self, items, list};
use super::{Handler, sg, vpc};

/// The handler of an EC2 write call.
pub fn handler(api: &str) -> Option<Handler> {
    Some(match api {
        "AuthorizeSecurityGroupIngress" => |c, p| sg::authorize(c, p, false),
        "AuthorizeSecurityGroupEgress" => |c, p| sg::authorize(c, p, true),
        "RevokeSecurityGroupIngress" => |c, p| sg::revoke(c, p, false),
        "RevokeSecurityGroupEgress" => |c, p| sg::revoke(c, p, true),
        "CreateSecurityGroup" => sg::create,
        "DeleteSecurityGroup" => sg::delete,
        "ModifyInstanceAttribute" => modify_instance_attribute,
        "StopInstances" => |c, p| instance_state(c, p, "stopped"),
        "StartInstances" => |c, p| instance_state(c, p, "running"),
        "CreateTags" => create_tags,
        "DeleteTags" => delete_tags,
        "ModifySubnetAttribute" => modify_subnet_attribute,
        "ModifyVpcAttribute" => modify_vpc_attribute,
        "CreateRoute" => create_route,
        "DeleteRoute" => delete_route,
        "ReplaceRoute" => replace_route,
        "ModifyLaunchTemplate" => modify_launch_template,
        "CreateLaunchTemplateVersion" => create_launch_template_version,
        "ModifyVolume" => modify_volume,
        _ => return vpc::handler(api),
    })
}

/// Tags of `tagSpecificationSet` items for `resource_type` (`security-group`, ...).
pub fn tag_specifications(params: &Value, resource_type: &str) -> Vec<(String, String)> {
    items(params, "tagSpecificationSet")
        .into_iter()
        .filter(|s| params::opt_string(s, "resourceType") == Some(resource_type))
        .flat_map(|s| params::tag_list(s.get("tags")))
        .collect()
}

/// The instance named by `instanceId`, or `InvalidInstanceID.NotFound`.
fn instance(ctx: &Ctx<'_>, id: &str) -> Result<usize, ApiError> {
    ctx.find("aws_instance", "id", id).ok_or_else(|| {
        ApiError::new(
            "InvalidInstanceID.NotFound",
            format!("The instance ID '{id}' does not exist"),
        )
    })
}

/// ModifyInstanceAttribute: one attribute per call. The instance type can change only while
/// the instance is stopped.
fn modify_instance_attribute(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let id = params::string(p, "instanceId")?;
    let at = instance(ctx, id)?;
    if let Some(kind) = p.get("instanceType").map(params::unwrap_value) {
        let kind = kind
            .as_str()
            .ok_or_else(|| params::missing("instanceType"))?;
        if ctx.attr_str(at, "instance_state") == "running" {
            return Err(ApiError::new(
                "IncorrectInstanceState",
                format!("The instance '{id}' is not in the 'stopped' state."),
            ));
        }
        ctx.set(at, "instance_type", json!(kind));
    } else if let Some(groups) = p.get("groupSet") {
        let ids: Vec<String> = list(Some(groups))
            .iter()
            .filter_map(|g| params::opt_string(g, "groupId").map(str::to_owned))
            .collect();
        if let Some(missing) = ids
            .iter()
            .find(|g| ctx.find("aws_security_group", "id", g).is_none())
        {
            return Err(sg::group_not_found(missing));
        }
        let mut sorted = ids;
        sorted.sort();
        ctx.set(at, "vpc_security_group_ids", json!(sorted));
    } else {
        let flags = [
            ("disableApiTermination", "disable_api_termination"),
            ("disableApiStop", "disable_api_stop"),
            ("ebsOptimized", "ebs_optimized"),
            ("sourceDestCheck", "source_dest_check"),
        ];
        let (param, key) = flags
            .iter()
            .find(|(param, _)| p.get(*param).is_some())
            .ok_or_else(|| {
                ApiError::new("InvalidParameterCombination", "No attributes specified.")
            })?;
        let value = params::opt_bool(p, param).ok_or_else(|| params::missing(param))?;
        ctx.set(at, key, json!(value));
    }
    Ok(ec2_true())
}

/// StopInstances / StartInstances: the `instance_state` the provider reads.
fn instance_state(ctx: &mut Ctx<'_>, p: &Value, target: &str) -> ApiResult {
    let mut changes = Vec::new();
    for item in items(p, "instancesSet") {
        let id = params::string(item, "instanceId")?;
        let at = instance(ctx, id)?;
        let previous = match ctx.attr_str(at, "instance_state").as_str() {
            "" => "running".to_owned(),
            s => s.to_owned(),
        };
        let (now, code) = match target {
            "stopped" => ("stopping", 64),
            _ => ("pending", 0),
        };
        ctx.set(at, "instance_state", json!(target));
        let previous_code = if previous == "running" { 16 } else { 80 };
        changes.push(json!({
            "instanceId": id,
            "currentState": {"code": code, "name": now},
            "previousState": {"code": previous_code, "name": previous},
        }));
    }
    Ok(json!({"instancesSet": {"items": changes}}))
}

/// Every EC2 resource type whose `id` is the EC2 resource id tags address.
const TAGGABLE: [&str; 23] = [
    "aws_instance",
    "aws_security_group",
    "aws_vpc",
    "aws_default_vpc",
    "aws_subnet",
    "aws_route_table",
    "aws_internet_gateway",
    "aws_nat_gateway",
    "aws_ebs_volume",
    "aws_launch_template",
    "aws_eip",
    "aws_network_interface",
    "aws_network_acl",
    "aws_vpc_endpoint",
    "aws_flow_log",
    "aws_vpn_gateway",
    "aws_customer_gateway",
    "aws_egress_only_internet_gateway",
    "aws_vpc_dhcp_options",
    "aws_default_security_group",
    "aws_default_route_table",
    "aws_default_network_acl",
    "aws_vpc_block_public_access_exclusion",
];

/// The resource of an EC2 id, or the not-found error EC2 gives for its kind.
fn ec2_resource(ctx: &Ctx<'_>, id: &str) -> Result<usize, ApiError> {
    if let Some(at) = ctx
        .find_any(&TAGGABLE, "id", id)
        .or_else(|| ctx.find("aws_placement_group", "placement_group_id", id))
    {
        return Ok(at);
    }
    let (code, noun) = match id.split('-').next().unwrap_or_default() {
        "i" => ("InvalidInstanceID.NotFound", "instance ID"),
        "sg" => ("InvalidGroup.NotFound", "security group"),
        "vpc" => ("InvalidVpcID.NotFound", "vpc ID"),
        "subnet" => ("InvalidSubnetID.NotFound", "subnet ID"),
        "rtb" => ("InvalidRouteTableID.NotFound", "route table ID"),
        "vol" => ("InvalidVolume.NotFound", "volume"),
        "lt" => ("InvalidLaunchTemplateId.NotFound", "launch template ID"),
        _ => ("InvalidID", "ID"),
    };
    Err(ApiError::new(
        code,
        format!("The {noun} '{id}' does not exist"),
    ))
}

/// The `resourcesSet` ids of a tagging call, all checked to exist.
fn tagged_resources(ctx: &Ctx<'_>, p: &Value) -> Result<Vec<usize>, ApiError> {
    let ids: Vec<&str> = items(p, "resourcesSet")
        .into_iter()
        .filter_map(|r| params::opt_string(r, "resourceId").or(r.as_str()))
        .collect();
    if ids.is_empty() {
        return Err(params::missing("resourcesSet"));
    }
    ids.into_iter().map(|id| ec2_resource(ctx, id)).collect()
}

/// CreateTags: adds or overwrites tags on every listed resource.
fn create_tags(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let targets = tagged_resources(ctx, p)?;
    let tags = params::tag_list(p.get("tagSet"));
    for at in targets {
        ctx.add_tags(at, &tags);
    }
    Ok(ec2_true())
}

/// DeleteTags: removes the keys; a key given with a value is removed only when it matches.
fn delete_tags(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let targets = tagged_resources(ctx, p)?;
    for at in targets {
        let current = ctx.attr(at, "tags_all");
        let keys: Vec<String> = items(p, "tagSet")
            .into_iter()
            .filter_map(|t| {
                let key = params::opt_string(t, "key")?;
                match params::opt_string(t, "value") {
                    Some(v) if current.get(key).and_then(Value::as_str) != Some(v) => None,
                    _ => Some(key.to_owned()),
                }
            })
            .collect();
        ctx.remove_tags(at, &keys);
    }
    Ok(ec2_true())
}

/// ModifySubnetAttribute.
fn modify_subnet_attribute(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let id = params::string(p, "subnetId")?;
    let at = ctx
        .find_any(&["aws_subnet", "aws_default_subnet"], "id", id)
        .ok_or_else(|| {
            ApiError::new(
                "InvalidSubnetID.NotFound",
                format!("The subnet ID '{id}' does not exist"),
            )
        })?;
    let flags = [
        ("mapPublicIpOnLaunch", "map_public_ip_on_launch"),
        (
            "assignIpv6AddressOnCreation",
            "assign_ipv6_address_on_creation",
        ),
        ("enableDns64", "enable_dns64"),
    ];
    set_one_flag(ctx, at, p, &flags)?;
    Ok(ec2_true())
}

/// ModifyVpcAttribute: one attribute per call.
fn modify_vpc_attribute(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let id = params::string(p, "vpcId")?;
    let at = ctx
        .find_any(&["aws_vpc", "aws_default_vpc"], "id", id)
        .ok_or_else(|| {
            ApiError::new(
                "InvalidVpcID.NotFound",
                format!("The vpc ID '{id}' does not exist"),
            )
        })?;
    let flags = [
        ("enableDnsHostnames", "enable_dns_hostnames"),
        ("enableDnsSupport", "enable_dns_support"),
        (
            "enableNetworkAddressUsageMetrics",
            "enable_network_address_usage_metrics",
        ),
    ];
    set_one_flag(ctx, at, p, &flags)?;
    Ok(ec2_true())
}

/// Sets the one boolean attribute the request names.
fn set_one_flag(
    ctx: &mut Ctx<'_>,
    at: usize,
    p: &Value,
    flags: &[(&str, &str)],
) -> Result<(), ApiError> {
    let (param, key) = flags
        .iter()
        .find(|(param, _)| p.get(*param).is_some())
        .ok_or_else(|| ApiError::new("MissingParameter", "No attribute specified"))?;
    let value = params::opt_bool(p, param).ok_or_else(|| params::missing(param))?;
    ctx.set(at, key, json!(value));
    Ok(())
}

/// The route targets of CreateRoute and their Terraform attribute names.
const ROUTE_TARGETS: [(&str, &str); 8] = [
    ("gatewayId", "gateway_id"),
    ("natGatewayId", "nat_gateway_id"),
    ("instanceId", "instance_id"),
    ("networkInterfaceId", "network_interface_id"),
    ("vpcPeeringConnectionId", "vpc_peering_connection_id"),
    ("transitGatewayId", "transit_gateway_id"),
    ("vpcEndpointId", "vpc_endpoint_id"),
    ("egressOnlyInternetGatewayId", "egress_only_gateway_id"),
];

/// The destination of a route request: (parameter, attribute, value).
fn destination(p: &Value) -> Result<(&'static str, String), ApiError> {
    [
        ("destinationCidrBlock", "destination_cidr_block"),
        ("destinationIpv6CidrBlock", "destination_ipv6_cidr_block"),
        ("destinationPrefixListId", "destination_prefix_list_id"),
    ]
    .into_iter()
    .find_map(|(param, key)| params::opt_string(p, param).map(|v| (key, v.to_owned())))
    .ok_or_else(|| params::missing("destinationCidrBlock"))
}

/// The route table of `routeTableId`: an `aws_route_table`, or one known only as a VPC's
/// main route table (its routes then appear as `aws_route` instances).
fn route_table(ctx: &Ctx<'_>, id: &str) -> Result<Option<usize>, ApiError> {
    if let Some(at) = ctx.find_any(&["aws_route_table", "aws_default_route_table"], "id", id) {
        return Ok(Some(at));
    }
    let known = ctx
        .find_any(&["aws_vpc", "aws_default_vpc"], "main_route_table_id", id)
        .is_some()
        || !ctx
            .find_all("aws_route", &[("route_table_id", id)])
            .is_empty();
    match known {
        true => Ok(None),
        false => Err(ApiError::new(
            "InvalidRouteTableID.NotFound",
            format!("The routeTable ID '{id}' does not exist"),
        )),
    }
}

/// The Terraform `route` element of a route table for a CreateRoute request.
fn route_element(p: &Value, key: &str, dest: &str) -> Value {
    let mut element = json!({
        "carrier_gateway_id": "", "cidr_block": "", "core_network_arn": "",
        "destination_prefix_list_id": "", "egress_only_gateway_id": "", "gateway_id": "",
        "ipv6_cidr_block": "", "local_gateway_id": "", "nat_gateway_id": "",
        "network_interface_id": "", "transit_gateway_id": "", "vpc_endpoint_id": "",
        "vpc_peering_connection_id": "",
    });
    let dest_key = match key {
        "destination_cidr_block" => "cidr_block",
        "destination_ipv6_cidr_block" => "ipv6_cidr_block",
        other => other,
    };
    element[dest_key] = json!(dest);
    for (param, attr) in ROUTE_TARGETS {
        if let Some(v) = params::opt_string(p, param) {
            element[attr] = json!(v);
        }
    }
    element
}

/// Whether a route element or `aws_route` has this destination.
fn same_destination(route: &Value, key: &str, dest: &str) -> bool {
    let inline_key = match key {
        "destination_cidr_block" => "cidr_block",
        "destination_ipv6_cidr_block" => "ipv6_cidr_block",
        other => other,
    };
    [key, inline_key]
        .iter()
        .any(|k| route.get(*k).and_then(Value::as_str) == Some(dest))
}

/// CreateRoute.
fn create_route(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let table_id = params::string(p, "routeTableId")?;
    let (key, dest) = destination(p)?;
    if !ROUTE_TARGETS
        .iter()
        .any(|(param, _)| p.get(*param).is_some())
    {
        return Err(ApiError::new(
            "MissingParameter",
            "A route target must be specified.",
        ));
    }
    let exists_as_resource = !ctx
        .find_all("aws_route", &[("route_table_id", table_id), (key, &dest)])
        .is_empty();
    let table = route_table(ctx, table_id)?;
    let inline = table.map(|at| ctx.attr(at, "route")).unwrap_or(Value::Null);
    let exists_inline = list(Some(&inline))
        .iter()
        .any(|r| same_destination(r, key, &dest));
    if exists_as_resource || exists_inline {
        return Err(ApiError::new(
            "RouteAlreadyExists",
            format!("The route identified by {dest} already exists."),
        ));
    }
    let separate = !ctx
        .find_all("aws_route", &[("route_table_id", table_id)])
        .is_empty();
    match table {
        Some(at) if inline.is_array() && !separate => {
            let mut routes = inline.as_array().cloned().unwrap_or_default();
            routes.push(route_element(p, key, &dest));
            ctx.set(at, "route", Value::Array(routes));
        }
        _ => {
            let mut route = json!({
                "id": format!("r-{table_id}{}", crc32(dest.as_bytes())),
                "route_table_id": table_id,
                "origin": "CreateRoute",
                "state": "active",
            });
            route[key] = json!(dest);
            for (param, attr) in ROUTE_TARGETS {
                if let Some(v) = params::opt_string(p, param) {
                    route[attr] = json!(v);
                }
            }
            ctx.create("aws_route", route);
        }
    }
    Ok(ec2_true())
}

/// DeleteRoute.
fn delete_route(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let table_id = params::string(p, "routeTableId")?;
    let (key, dest) = destination(p)?;
    let table = route_table(ctx, table_id)?;
    let resources = ctx.find_all("aws_route", &[("route_table_id", table_id), (key, &dest)]);
    if !resources.is_empty() {
        ctx.remove_all(resources);
        return Ok(ec2_true());
    }
    if let Some(at) = table {
        let mut routes = ctx
            .attr(at, "route")
            .as_array()
            .cloned()
            .unwrap_or_default();
        let before = routes.len();
        routes.retain(|r| !same_destination(r, key, &dest));
        if routes.len() < before {
            ctx.set(at, "route", Value::Array(routes));
            return Ok(ec2_true());
        }
    }
    Err(ApiError::new(
        "InvalidRoute.NotFound",
        format!("no route with destination-cidr-block {dest} in route table {table_id}"),
    ))
}

/// ReplaceRoute: the route for the destination gets the request's target in place of its
/// old one, on an `aws_route` or an inline route alike.
fn replace_route(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let table_id = params::string(p, "routeTableId")?;
    let (key, dest) = destination(p)?;
    let table = route_table(ctx, table_id)?;
    if let Some(at) = ctx
        .find_all("aws_route", &[("route_table_id", table_id), (key, &dest)])
        .first()
        .copied()
    {
        for (param, attr) in ROUTE_TARGETS {
            let target = params::opt_string(p, param).unwrap_or_default();
            ctx.set(at, attr, json!(target));
        }
        return Ok(ec2_true());
    }
    let routes = table.map(|at| ctx.attr(at, "route")).unwrap_or(Value::Null);
    let mut routes = routes.as_array().cloned().unwrap_or_default();
    let Some(n) = routes.iter().position(|r| same_destination(r, key, &dest)) else {
        return Err(ApiError::new(
            "InvalidParameterValue",
            format!(
                "There is no route defined for '{dest}' in the route table. Please use AddRoute instead."
            ),
        ));
    };
    routes[n] = route_element(p, key, &dest);
    if let Some(at) = table {
        ctx.set(at, "route", Value::Array(routes));
    }
    Ok(ec2_true())
}

/// CRC-32 (IEEE), the hash Terraform's `aws_route` ids are made of.
pub(super) fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for b in bytes {
        crc ^= u32::from(*b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// The launch-template request wrapped as CloudTrail logs it
/// (`{"CreateLaunchTemplateVersionRequest": {...}}`), or the bare form.
fn unwrap_request<'a>(p: &'a Value, wrapper: &str) -> &'a Value {
    p.get(wrapper).unwrap_or(p)
}

/// The launch template of a request, by id or name.
fn launch_template(ctx: &Ctx<'_>, p: &Value) -> Result<usize, ApiError> {
    if let Some(id) = params::opt_string(p, "LaunchTemplateId") {
        return ctx.find("aws_launch_template", "id", id).ok_or_else(|| {
            ApiError::new(
                "InvalidLaunchTemplateId.NotFound",
                format!("The specified launch template, with template ID {id}, does not exist."),
            )
        });
    }
    let name = params::string(p, "LaunchTemplateName")?;
    ctx.find("aws_launch_template", "name", name)
        .ok_or_else(|| {
            ApiError::new(
                "InvalidLaunchTemplateName.NotFoundException",
                format!(
                    "The specified launch template, with template name {name}, does not exist."
                ),
            )
        })
}

/// ModifyLaunchTemplate: sets the default version.
fn modify_launch_template(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let p = unwrap_request(p, "ModifyLaunchTemplateRequest");
    let at = launch_template(ctx, p)?;
    let latest = params::as_int(&ctx.attr(at, "latest_version")).unwrap_or(1);
    if let Some(version) = p.get("SetDefaultVersion") {
        let version = match version.as_str() {
            Some("$Latest") => latest,
            _ => params::as_int(version).ok_or_else(|| params::missing("SetDefaultVersion"))?,
        };
        if version < 1 || version > latest {
            return Err(ApiError::new(
                "InvalidLaunchTemplateId.VersionNotFound",
                format!("Could not find launch template version {version}"),
            ));
        }
        ctx.set(at, "default_version", json!(version));
    }
    let template = template_summary(ctx, at);
    Ok(json!({"ModifyLaunchTemplateResponse": {
        "xmlns": "http://ec2.amazonaws.com/doc/2016-11-15/",
        "launchTemplate": template,
    }}))
}

fn template_summary(ctx: &Ctx<'_>, at: usize) -> Value {
    json!({
        "launchTemplateId": ctx.attr(at, "id"),
        "launchTemplateName": ctx.attr(at, "name"),
        "defaultVersionNumber": ctx.attr(at, "default_version"),
        "latestVersionNumber": ctx.attr(at, "latest_version"),
    })
}

/// Launch template data fields and their Terraform attributes.
const TEMPLATE_FIELDS: [(&str, &str); 6] = [
    ("InstanceType", "instance_type"),
    ("ImageId", "image_id"),
    ("KeyName", "key_name"),
    ("EbsOptimized", "ebs_optimized"),
    ("DisableApiTermination", "disable_api_termination"),
    (
        "InstanceInitiatedShutdownBehavior",
        "instance_initiated_shutdown_behavior",
    ),
];

/// CreateLaunchTemplateVersion: a new latest version; the provider reads the latest version's
/// data, so its fields change in state, while `default_version` stays unless the template
/// updates it by default.
fn create_launch_template_version(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let p = unwrap_request(p, "CreateLaunchTemplateVersionRequest");
    let at = launch_template(ctx, p)?;
    let data = p
        .get("LaunchTemplateData")
        .ok_or_else(|| params::missing("LaunchTemplateData"))?;
    let version = params::as_int(&ctx.attr(at, "latest_version")).unwrap_or(1) + 1;
    for (field, attr) in TEMPLATE_FIELDS {
        if let Some(value) = data.get(field) {
            ctx.set(at, attr, value.clone());
        }
    }
    let groups = params::strings(data.get("SecurityGroupId"));
    if !groups.is_empty() {
        ctx.set(at, "vpc_security_group_ids", json!(groups));
    }
    if data.get("UserData").is_some() {
        ctx.set(at, "user_data", data["UserData"].clone());
    }
    ctx.set(at, "latest_version", json!(version));
    if ctx.attr(at, "update_default_version") == json!(true) {
        ctx.set(at, "default_version", json!(version));
    }
    let created = json!({
        "launchTemplateId": ctx.attr(at, "id"),
        "launchTemplateName": ctx.attr(at, "name"),
        "versionNumber": version,
        "versionDescription": params::opt_string(p, "VersionDescription").unwrap_or_default(),
        "createTime": ctx.iso_time(),
        "defaultVersion": ctx.attr(at, "default_version") == json!(version),
        "launchTemplateData": data,
    });
    Ok(json!({"CreateLaunchTemplateVersionResponse": {
        "xmlns": "http://ec2.amazonaws.com/doc/2016-11-15/",
        "launchTemplateVersion": created,
    }}))
}

/// ModifyVolume: size (grow only), type, IOPS and throughput.
fn modify_volume(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let p = unwrap_request(p, "ModifyVolumeRequest");
    let id = params::string(p, "VolumeId")?;
    let at = ctx.find("aws_ebs_volume", "id", id).ok_or_else(|| {
        ApiError::new(
            "InvalidVolume.NotFound",
            format!("The volume '{id}' does not exist."),
        )
    })?;
    let old_size = params::as_int(&ctx.attr(at, "size")).unwrap_or(0);
    if let Some(size) = params::opt_int(p, "Size") {
        if size < old_size {
            return Err(ApiError::new(
                "InvalidParameterValue",
                format!("New size cannot be smaller than existing size of {old_size} GiB"),
            ));
        }
        ctx.set(at, "size", json!(size));
    }
    if let Some(kind) = params::opt_string(p, "VolumeType") {
        ctx.set(at, "type", json!(kind));
    }
    for (param, attr) in [("Iops", "iops"), ("Throughput", "throughput")] {
        if let Some(v) = params::opt_int(p, param) {
            ctx.set(at, attr, json!(v));
        }
    }
    let modification = json!({
        "volumeId": id,
        "modificationState": "modifying",
        "targetSize": ctx.attr(at, "size"),
        "targetVolumeType": ctx.attr(at, "type"),
        "originalSize": old_size,
        "progress": 0,
        "startTime": ctx.iso_time(),
    });
    Ok(json!({"ModifyVolumeResponse": {
        "xmlns": "http://ec2.amazonaws.com/doc/2016-11-15/",
        "volumeModification": modification,
    }}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_matches_the_standard_check_value() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }
}
