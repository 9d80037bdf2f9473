//! Amazon EC2, the parts of a VPC beside its subnets and routes: virtual private gateways
//! and their route propagation, customer gateways, DHCP options, secondary CIDR blocks,
//! VPC block public access and placement groups.

use serde_json::{Value, json};

use super::super::ApiError;
use super::super::ctx::{ApiResult, Ctx, ec2_true};
use super::super::params;
use super::Handler;
use super::ec2::crc32;

/// The EC2 query API's XML namespace, kept in raw-request responses.
const XMLNS: &str = "http://ec2.amazonaws.com/doc/2016-11-15/";

/// The handler of one of these EC2 write calls.
pub fn handler(api: &str) -> Option<Handler> {
    Some(match api {
        "AttachVpnGateway" => attach_vpn_gateway,
        "DetachVpnGateway" => detach_vpn_gateway,
        "EnableVgwRoutePropagation" => enable_propagation,
        "DisableVgwRoutePropagation" => disable_propagation,
        "DeleteCustomerGateway" => delete_customer_gateway,
        "AssociateDhcpOptions" => associate_dhcp_options,
        "AssociateVpcCidrBlock" => associate_cidr_block,
        "DisassociateVpcCidrBlock" => disassociate_cidr_block,
        "ModifyVpcBlockPublicAccessOptions" => modify_block_public_access,
        "ModifyVpcBlockPublicAccessExclusion" => modify_exclusion,
        "DeleteVpcBlockPublicAccessExclusion" => delete_exclusion,
        "DeletePlacementGroup" => delete_placement_group,
        _ => return None,
    })
}

/// The instance of `resource_type` whose `key` is `value`, or AWS's `code` error for `noun`.
fn existing(
    ctx: &Ctx<'_>,
    resource_type: &str,
    key: &str,
    value: &str,
    code: &str,
    noun: &str,
) -> Result<usize, ApiError> {
    ctx.find(resource_type, key, value)
        .ok_or_else(|| ApiError::new(code, format!("The {noun} '{value}' does not exist")))
}

/// The VPC of `vpcId` (the project's or the Region's default one).
fn vpc(ctx: &Ctx<'_>, p: &Value) -> Result<usize, ApiError> {
    let id = params::string(p, "vpcId")?;
    ctx.find_any(&["aws_vpc", "aws_default_vpc"], "id", id)
        .ok_or_else(|| {
            ApiError::new(
                "InvalidVpcID.NotFound",
                format!("The vpc ID '{id}' does not exist"),
            )
        })
}

/// The virtual private gateway of `param`.
fn vpn_gateway(ctx: &Ctx<'_>, p: &Value, param: &str) -> Result<usize, ApiError> {
    let id = params::string(p, param)?;
    existing(
        ctx,
        "aws_vpn_gateway",
        "id",
        id,
        "InvalidVpnGatewayID.NotFound",
        "vpnGateway ID",
    )
}

/// AttachVpnGateway: a new attachment of the gateway to the VPC.
fn attach_vpn_gateway(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let gateway = ctx.attr_str(vpn_gateway(ctx, p, "vpnGatewayId")?, "id");
    let vpc_id = ctx.attr_str(vpc(ctx, p)?, "id");
    if !ctx
        .find_all(
            "aws_vpn_gateway_attachment",
            &[("vpn_gateway_id", &gateway)],
        )
        .is_empty()
    {
        return Err(ApiError::new(
            "VpnGatewayAttachmentLimitExceeded",
            format!("The VPN gateway '{gateway}' is already attached to a VPC."),
        ));
    }
    let hash = crc32(format!("{vpc_id}-{gateway}").as_bytes());
    ctx.create(
        "aws_vpn_gateway_attachment",
        json!({"id": format!("vpn-attachment-{hash:x}"), "vpc_id": vpc_id, "vpn_gateway_id": gateway}),
    );
    Ok(json!({"attachment": {"vpcId": vpc_id, "state": "attaching"}}))
}

/// DetachVpnGateway: the attachment of the gateway to the VPC ends.
fn detach_vpn_gateway(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let gateway = ctx.attr_str(vpn_gateway(ctx, p, "vpnGatewayId")?, "id");
    let vpc_id = params::string(p, "vpcId")?;
    let found = ctx.find_all(
        "aws_vpn_gateway_attachment",
        &[("vpn_gateway_id", &gateway), ("vpc_id", vpc_id)],
    );
    if found.is_empty() {
        return Err(ApiError::new(
            "InvalidVpnGatewayAttachment.NotFound",
            format!(
                "The attachment with vpn gateway ID '{gateway}' and vpc ID '{vpc_id}' does not exist"
            ),
        ));
    }
    ctx.remove_all(found);
    Ok(ec2_true())
}

/// The gateway and route table ids of a propagation call, both checked to exist.
fn propagation(ctx: &Ctx<'_>, p: &Value) -> Result<(String, String), ApiError> {
    let gateway = ctx.attr_str(vpn_gateway(ctx, p, "gatewayId")?, "id");
    let table = params::string(p, "routeTableId")?;
    ctx.find_any(&["aws_route_table", "aws_default_route_table"], "id", table)
        .ok_or_else(|| {
            ApiError::new(
                "InvalidRouteTableID.NotFound",
                format!("The routeTable ID '{table}' does not exist"),
            )
        })?;
    Ok((gateway, table.to_owned()))
}

/// The propagations of a gateway to a route table.
fn propagations(ctx: &Ctx<'_>, gateway: &str, table: &str) -> Vec<usize> {
    ctx.find_all(
        "aws_vpn_gateway_route_propagation",
        &[("vpn_gateway_id", gateway), ("route_table_id", table)],
    )
}

/// EnableVgwRoutePropagation: the gateway's routes propagate to the table (again a success
/// when they already do).
fn enable_propagation(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (gateway, table) = propagation(ctx, p)?;
    if propagations(ctx, &gateway, &table).is_empty() {
        ctx.create(
            "aws_vpn_gateway_route_propagation",
            json!({"id": format!("{gateway}_{table}"), "vpn_gateway_id": gateway, "route_table_id": table}),
        );
    }
    Ok(ec2_true())
}

/// DisableVgwRoutePropagation.
fn disable_propagation(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let (gateway, table) = propagation(ctx, p)?;
    let found = propagations(ctx, &gateway, &table);
    ctx.remove_all(found);
    Ok(ec2_true())
}

/// DeleteCustomerGateway.
fn delete_customer_gateway(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let id = params::string(p, "customerGatewayId")?;
    let at = existing(
        ctx,
        "aws_customer_gateway",
        "id",
        id,
        "InvalidCustomerGatewayID.NotFound",
        "customerGateway ID",
    )?;
    ctx.remove(at);
    Ok(ec2_true())
}

/// AssociateDhcpOptions: the VPC's DHCP options set (`default` for AWS's own), which its
/// association records (the VPC's own `dhcp_options_id` is read back as of its creation).
fn associate_dhcp_options(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let options = params::string(p, "dhcpOptionsId")?;
    if options != "default" {
        existing(
            ctx,
            "aws_vpc_dhcp_options",
            "id",
            options,
            "InvalidDhcpOptionID.NotFound",
            "dhcpOption ID",
        )?;
    }
    let vpc_id = ctx.attr_str(vpc(ctx, p)?, "id");
    for assoc in ctx.find_all("aws_vpc_dhcp_options_association", &[("vpc_id", &vpc_id)]) {
        ctx.set(assoc, "dhcp_options_id", json!(options));
        ctx.set(assoc, "id", json!(format!("{options}-{vpc_id}")));
    }
    Ok(ec2_true())
}

/// The `cidrBlockAssociation` element of a response.
fn cidr_association(id: &str, cidr: &str, state: &str) -> Value {
    json!({"associationId": id, "cidrBlock": cidr, "cidrBlockState": {"state": state}})
}

/// AssociateVpcCidrBlock (IPv4): a new secondary range of the VPC.
fn associate_cidr_block(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let cidr = params::string(p, "cidrBlock")?.to_owned();
    let vpc_id = ctx.attr_str(vpc(ctx, p)?, "id");
    let taken = ctx
        .find_all("aws_vpc", &[("id", &vpc_id), ("cidr_block", &cidr)])
        .len()
        + ctx
            .find_all(
                "aws_vpc_ipv4_cidr_block_association",
                &[("vpc_id", &vpc_id), ("cidr_block", &cidr)],
            )
            .len();
    if taken > 0 {
        return Err(ApiError::new(
            "InvalidVpc.Range",
            format!("The CIDR '{cidr}' conflicts with another subnet"),
        ));
    }
    let id = ctx.hex_id("vpc-cidr-assoc", 17);
    ctx.create(
        "aws_vpc_ipv4_cidr_block_association",
        json!({"id": id, "vpc_id": vpc_id, "cidr_block": cidr}),
    );
    Ok(
        json!({"vpcId": vpc_id, "cidrBlockAssociation": cidr_association(&id, &cidr, "associating")}),
    )
}

/// DisassociateVpcCidrBlock: refused while a subnet of the VPC uses the range.
fn disassociate_cidr_block(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let id = params::string(p, "associationId")?;
    let at = existing(
        ctx,
        "aws_vpc_ipv4_cidr_block_association",
        "id",
        id,
        "InvalidVpcCidrBlockAssociationID.NotFound",
        "association ID",
    )?;
    let (vpc_id, cidr) = (ctx.attr_str(at, "vpc_id"), ctx.attr_str(at, "cidr_block"));
    let used = ctx.get_all().iter().any(|i| {
        i.resource_type == "aws_subnet"
            && i.string_attribute("vpc_id") == Some(vpc_id.as_str())
            && i.string_attribute("cidr_block")
                .is_some_and(|c| inside(c, &cidr))
    });
    if used {
        return Err(ApiError::new(
            "InvalidCidrBlock.InUse",
            format!("The vpc CIDR block {cidr} is in use by subnets and cannot be disassociated."),
        ));
    }
    ctx.remove(at);
    Ok(
        json!({"vpcId": vpc_id, "cidrBlockAssociation": cidr_association(id, &cidr, "disassociating")}),
    )
}

/// Whether IPv4 range `inner` lies inside `outer`.
fn inside(inner: &str, outer: &str) -> bool {
    let parse = |c: &str| -> Option<(u32, u32)> {
        let (ip, len) = c.split_once('/')?;
        let ip: std::net::Ipv4Addr = ip.parse().ok()?;
        Some((u32::from(ip), len.parse().ok()?))
    };
    match (parse(inner), parse(outer)) {
        (Some((a, la)), Some((b, lb))) if la >= lb && lb <= 32 => {
            let mask = u32::MAX.checked_shl(32 - lb).unwrap_or(0);
            a & mask == b & mask
        }
        _ => false,
    }
}

/// A raw-request call's parameters (`{"<Api>Request": {...}}`), or the bare form.
fn raw<'a>(p: &'a Value, api: &str) -> &'a Value {
    p.get(format!("{api}Request")).unwrap_or(p)
}

/// A raw-request call's response.
fn raw_response(api: &str, key: &str, body: Value) -> Value {
    json!({format!("{api}Response"): {"xmlns": XMLNS, key: body}})
}

/// ModifyVpcBlockPublicAccessOptions: the Region's internet gateway block mode.
fn modify_block_public_access(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    const API: &str = "ModifyVpcBlockPublicAccessOptions";
    let mode = params::string(raw(p, API), "InternetGatewayBlockMode")?;
    let (region, account) = (ctx.region.clone(), ctx.account().to_owned());
    let at = match ctx.find("aws_vpc_block_public_access_options", "aws_region", &region) {
        Some(at) => at,
        None => ctx.create(
            "aws_vpc_block_public_access_options",
            json!({"id": region, "aws_region": region, "aws_account_id": account}),
        ),
    };
    ctx.set(at, "internet_gateway_block_mode", json!(mode));
    let options = json!({
        "awsAccountId": account, "awsRegion": region, "state": "update-in-progress",
        "internetGatewayBlockMode": mode, "lastUpdateTimestamp": ctx.iso_time(),
        "managedBy": "account", "exclusionsAllowed": "allowed",
    });
    Ok(raw_response(API, "vpcBlockPublicAccessOptions", options))
}

/// The exclusion of a raw request's `ExclusionId`.
fn exclusion(ctx: &Ctx<'_>, p: &Value) -> Result<usize, ApiError> {
    let id = params::string(p, "ExclusionId")?;
    existing(
        ctx,
        "aws_vpc_block_public_access_exclusion",
        "id",
        id,
        "InvalidVpcBlockPublicAccessExclusionId.NotFound",
        "exclusion",
    )
}

/// An exclusion as a response describes it.
fn exclusion_element(ctx: &Ctx<'_>, at: usize, state: &str) -> Value {
    json!({
        "exclusionId": ctx.attr(at, "id"), "resourceArn": ctx.attr(at, "resource_arn"),
        "internetGatewayExclusionMode": ctx.attr(at, "internet_gateway_exclusion_mode"),
        "state": state, "lastUpdateTimestamp": ctx.iso_time(),
    })
}

/// ModifyVpcBlockPublicAccessExclusion: an exclusion's mode.
fn modify_exclusion(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    const API: &str = "ModifyVpcBlockPublicAccessExclusion";
    let request = raw(p, API);
    let at = exclusion(ctx, request)?;
    let mode = params::string(request, "InternetGatewayExclusionMode")?;
    ctx.set(at, "internet_gateway_exclusion_mode", json!(mode));
    let element = exclusion_element(ctx, at, "update-in-progress");
    Ok(raw_response(API, "vpcBlockPublicAccessExclusion", element))
}

/// DeleteVpcBlockPublicAccessExclusion.
fn delete_exclusion(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    const API: &str = "DeleteVpcBlockPublicAccessExclusion";
    let at = exclusion(ctx, raw(p, API))?;
    let element = exclusion_element(ctx, at, "delete-in-progress");
    ctx.remove(at);
    Ok(raw_response(API, "vpcBlockPublicAccessExclusion", element))
}

/// DeletePlacementGroup.
fn delete_placement_group(ctx: &mut Ctx<'_>, p: &Value) -> ApiResult {
    let name = params::string(p, "groupName")?;
    let at = existing(
        ctx,
        "aws_placement_group",
        "name",
        name,
        "InvalidPlacementGroup.Unknown",
        "Placement Group",
    )?;
    ctx.remove(at);
    Ok(ec2_true())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_inside_ranges() {
        assert!(inside("10.61.1.0/24", "10.61.0.0/16"));
        assert!(!inside("10.60.1.0/24", "10.61.0.0/16"));
        assert!(!inside("10.61.0.0/16", "10.61.0.0/24"));
    }
}
