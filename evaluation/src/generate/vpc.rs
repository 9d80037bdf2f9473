//! Changes to the parts of a VPC terraform-aws-modules/vpc manages beside subnets and route
//! tables: routes as resources of their own, the VPC's default security group, virtual
//! private and customer gateways, DHCP options, secondary CIDR blocks, VPC block public
//! access, placement groups, Redshift subnet groups, and a load balancer's registered
//! targets and extra certificates. Every change here starts from an instance of one of
//! these types, so projects without them get none.

use super::change::{Change, Kind, req, reworded, text};
use super::network::{item_of, permission, sg_call, vpc_cidr};
use crate::sim::Request;
use reconciler::terraform::state::Instance;
use serde_json::{Value, json};

const EC2: &str = "ec2.amazonaws.com";
const ELB: &str = "elasticloadbalancing.amazonaws.com";

/// The changes that apply to one instance.
pub fn changes(instance: &Instance, all: &[Instance]) -> Vec<Change> {
    match instance.resource_type.as_str() {
        "aws_route" => route(instance),
        "aws_default_security_group" => default_security_group(instance, all),
        "aws_vpn_gateway_attachment" => vec![vpn_detach(instance)],
        "aws_vpn_gateway_route_propagation" => propagation(instance, all),
        "aws_customer_gateway" => vec![delete(
            "cgw-delete",
            instance,
            "customer gateway",
            ec2(
                "DeleteCustomerGateway",
                json!({"customerGatewayId": text(instance, "id")}),
            ),
        )],
        "aws_vpc_dhcp_options_association" => vec![dhcp_default(instance)],
        "aws_vpc_ipv4_cidr_block_association" => cidr_add(instance).into_iter().collect(),
        "aws_vpc_block_public_access_options" => block_public_access(instance),
        "aws_vpc_block_public_access_exclusion" => exclusion(instance),
        "aws_placement_group" => vec![delete(
            "placement-group-delete",
            instance,
            "placement group",
            ec2(
                "DeletePlacementGroup",
                json!({"groupName": text(instance, "name")}),
            ),
        )],
        "aws_redshift_subnet_group" => vec![redshift_subnets(instance)],
        "aws_lb_target_group_attachment" => target(instance),
        "aws_lb_listener_certificate" => vec![listener_certificate(instance)],
        _ => Vec::new(),
    }
}

fn ec2(name: &str, params: Value) -> Request {
    req(EC2, name, params)
}

/// The deletion of `instance` (a `noun`) by one call.
fn delete(name: &'static str, instance: &Instance, noun: &str, call: Request) -> Change {
    Change::modify(
        name,
        instance,
        format!("deleted {noun} {}", text(instance, "id")),
        &[],
        vec![call],
    )
    .kind(Kind::Delete)
}

/// The destination of a route resource: its request parameter and value.
fn destination(instance: &Instance) -> Option<(&'static str, &str)> {
    [
        ("destination_cidr_block", "destinationCidrBlock"),
        ("destination_ipv6_cidr_block", "destinationIpv6CidrBlock"),
    ]
    .into_iter()
    .find_map(|(attr, param)| {
        let v = text(instance, attr);
        (!v.is_empty()).then_some((param, v))
    })
}

/// The target of a route resource: its request parameter and value.
fn target_of(instance: &Instance) -> Option<(&'static str, &str)> {
    [
        ("gateway_id", "gatewayId"),
        ("egress_only_gateway_id", "egressOnlyInternetGatewayId"),
        ("nat_gateway_id", "natGatewayId"),
        ("transit_gateway_id", "transitGatewayId"),
    ]
    .into_iter()
    .find_map(|(attr, param)| {
        let v = text(instance, attr);
        (!v.is_empty()).then_some((param, v))
    })
}

/// A route call on the route's table and destination, with a target when given.
fn route_call(name: &str, instance: &Instance, target: Option<(&str, &str)>) -> Option<Request> {
    let (dest_param, dest) = destination(instance)?;
    let mut params = json!({"routeTableId": text(instance, "route_table_id"), dest_param: dest});
    if let Some((param, value)) = target {
        params[param] = json!(value);
    }
    Some(ec2(name, params))
}

/// A route resource deleted; a route through a virtual private gateway moved to a transit
/// gateway; and, beside it, a new route to another on-premises range through the same gateway.
fn route(instance: &Instance) -> Vec<Change> {
    let Some(target) = target_of(instance) else {
        return Vec::new();
    };
    let (Some(delete_call), Some(create_call)) = (
        route_call("DeleteRoute", instance, None),
        route_call("CreateRoute", instance, Some(target)),
    ) else {
        return Vec::new();
    };
    let (_, dest) = destination(instance).unwrap_or_default();
    let table = text(instance, "route_table_id");
    let mut out = vec![
        Change::modify(
            "route-resource-delete",
            instance,
            format!("deleted the route to {dest} from {table}"),
            &[],
            vec![delete_call],
        )
        .undo(vec![create_call])
        .kind(Kind::Delete),
    ];
    if target.1.starts_with("vgw-") {
        out.extend(vgw_route_changes(instance, table, dest, target));
    }
    out
}

/// The two changes of a route through a virtual private gateway.
fn vgw_route_changes(
    instance: &Instance,
    table: &str,
    dest: &str,
    target: (&str, &str),
) -> Vec<Change> {
    let tgw = format!("tgw-{}", table.trim_start_matches("rtb-"));
    let replace = |t: (&str, &str)| route_call("ReplaceRoute", instance, Some(t));
    let extra = "172.16.0.0/12";
    let add = |name: &str, with_target: bool| {
        let mut params = json!({"routeTableId": table, "destinationCidrBlock": extra});
        if with_target {
            params[target.0] = json!(target.1);
        }
        ec2(name, params)
    };
    let mut out = Vec::new();
    if let (Some(to_tgw), Some(back)) = (replace(("transitGatewayId", &tgw)), replace(target)) {
        out.push(
            Change::modify(
                "route-retarget",
                instance,
                format!(
                    "moved the route to {dest} in {table} from {} to {tgw}",
                    target.1
                ),
                &["gateway_id", "transit_gateway_id"],
                vec![to_tgw],
            )
            .undo(vec![back]),
        );
    }
    out.push(
        Change::modify(
            "route-resource-add",
            instance,
            format!("added a route to {extra} via {} in {table}", target.1),
            &[],
            vec![add("CreateRoute", true)],
        )
        .undo(vec![add("DeleteRoute", false)])
        .kind(Kind::Create),
    );
    out
}

/// HTTPS from the VPC allowed in the VPC's default security group, and, risky, SSH from
/// anywhere.
fn default_security_group(instance: &Instance, all: &[Instance]) -> Vec<Change> {
    let id = text(instance, "id");
    let open = |port: i64, cidr: &str| {
        let item = permission(port, cidr, "");
        (
            vec![sg_call(
                "AuthorizeSecurityGroupIngress",
                id,
                vec![item.clone()],
            )],
            vec![sg_call("RevokeSecurityGroupIngress", id, vec![item])],
        )
    };
    let cidr = vpc_cidr(instance, all);
    let (allow, revoke) = open(443, &cidr);
    let (world, close) = open(22, "0.0.0.0/0");
    vec![
        Change::modify(
            "default-sg-allow",
            instance,
            format!("allowed TCP 443 from {cidr} in the default security group {id}"),
            &["ingress"],
            allow,
        )
        .undo(revoke),
        Change::modify(
            "default-sg-open-world",
            instance,
            format!("opened SSH to the internet in the default security group {id}"),
            &["ingress"],
            world,
        )
        .undo(close)
        .risky(),
    ]
}

/// AWSConfigRemediation-RemoveVPCDefaultSecurityGroupRules: every ingress and egress rule of
/// a VPC's default security group revoked (its `aws:executeAwsApi` steps).
pub fn remove_default_rules(instance: &Instance) -> Option<Change> {
    let id = text(instance, "id");
    let items = |key: &str| -> Vec<Value> {
        let rules = instance.attributes.get(key).and_then(Value::as_array);
        rules
            .into_iter()
            .flatten()
            .filter_map(|rule| {
                let mut rule = rule.clone();
                if rule["self"] == true {
                    rule["security_groups"] = json!([id]);
                }
                item_of(&rule)
            })
            .collect()
    };
    let (ingress, egress) = (items("ingress"), items("egress"));
    if ingress.is_empty() && egress.is_empty() {
        return None;
    }
    let calls = |verb: &str| -> Vec<Request> {
        [("Ingress", &ingress), ("Egress", &egress)]
            .into_iter()
            .filter(|(_, items)| !items.is_empty())
            .map(|(way, items)| sg_call(&format!("{verb}SecurityGroup{way}"), id, items.clone()))
            .collect()
    };
    Some(
        Change::modify(
            "default-sg-remove-rules",
            instance,
            format!("removed every rule of the default security group {id}"),
            &["ingress", "egress"],
            calls("Revoke"),
        )
        .undo(calls("Authorize"))
        .runbook("AWSConfigRemediation-RemoveVPCDefaultSecurityGroupRules"),
    )
}

/// A virtual private gateway detached from its VPC.
fn vpn_detach(instance: &Instance) -> Change {
    let call = |name: &str| {
        ec2(
            name,
            json!({"vpnGatewayId": text(instance, "vpn_gateway_id"), "vpcId": text(instance, "vpc_id")}),
        )
    };
    Change::modify(
        "vgw-detach",
        instance,
        format!(
            "detached {} from {}",
            text(instance, "vpn_gateway_id"),
            text(instance, "vpc_id")
        ),
        &[],
        vec![call("DetachVpnGateway")],
    )
    .undo(vec![call("AttachVpnGateway")])
    .kind(Kind::Delete)
}

/// A propagation call of the gateway to a route table.
fn propagation_call(name: &str, gateway: &str, table: &str) -> Request {
    ec2(name, json!({"routeTableId": table, "gatewayId": gateway}))
}

/// Route propagation turned off, and turned on for the VPC's other route tables.
fn propagation(instance: &Instance, all: &[Instance]) -> Vec<Change> {
    let (gateway, table) = (
        text(instance, "vpn_gateway_id"),
        text(instance, "route_table_id"),
    );
    let mut out = vec![
        Change::modify(
            "vgw-propagation-off",
            instance,
            format!("turned off route propagation from {gateway} to {table}"),
            &[],
            vec![propagation_call(
                "DisableVgwRoutePropagation",
                gateway,
                table,
            )],
        )
        .undo(vec![propagation_call(
            "EnableVgwRoutePropagation",
            gateway,
            table,
        )])
        .kind(Kind::Delete),
    ];
    let vpc = all
        .iter()
        .find(|i| i.resource_type == "aws_route_table" && text(i, "id") == table)
        .map(|t| text(t, "vpc_id"));
    let others = all.iter().filter(|i| {
        i.resource_type == "aws_route_table"
            && Some(text(i, "vpc_id")) == vpc
            && text(i, "id") != table
    });
    for other in others {
        let other = text(other, "id");
        out.push(
            Change::modify(
                "vgw-propagation-on",
                instance,
                format!("turned on route propagation from {gateway} to {other}"),
                &[],
                vec![propagation_call(
                    "EnableVgwRoutePropagation",
                    gateway,
                    other,
                )],
            )
            .undo(vec![propagation_call(
                "DisableVgwRoutePropagation",
                gateway,
                other,
            )])
            .kind(Kind::Create),
        );
    }
    out
}

/// A VPC put back on AWS's default DHCP options: the association (whose id is the options'
/// and the VPC's) now names `default`.
fn dhcp_default(instance: &Instance) -> Change {
    let vpc = text(instance, "vpc_id");
    let call = |options: &str| {
        ec2(
            "AssociateDhcpOptions",
            json!({"dhcpOptionsId": options, "vpcId": vpc}),
        )
    };
    Change::modify(
        "dhcp-options-default",
        instance,
        format!("put {vpc} back on the default DHCP options"),
        &["dhcp_options_id", "id"],
        vec![call("default")],
    )
    .undo(vec![call(text(instance, "dhcp_options_id"))])
}

/// The IPv4 range after `cidr` of the same size (`10.61.0.0/16` → `10.62.0.0/16`).
fn next_range(cidr: &str) -> Option<String> {
    let (ip, len) = cidr.split_once('/')?;
    let ip: std::net::Ipv4Addr = ip.parse().ok()?;
    let len: u32 = len.parse().ok()?;
    let size = 1u32.checked_shl(32 - len)?;
    let next = std::net::Ipv4Addr::from(u32::from(ip).checked_add(size)?);
    Some(format!("{next}/{len}"))
}

/// Another secondary range added to the VPC of a secondary range.
fn cidr_add(instance: &Instance) -> Option<Change> {
    let vpc = text(instance, "vpc_id");
    let cidr = next_range(text(instance, "cidr_block"))?;
    Some(
        Change::modify(
            "vpc-cidr-add",
            instance,
            format!("added the range {cidr} to {vpc}"),
            &[],
            vec![ec2(
                "AssociateVpcCidrBlock",
                json!({"vpcId": vpc, "cidrBlock": cidr, "amazonProvidedIpv6CidrBlock": false}),
            )],
        )
        .kind(Kind::Create),
    )
}

/// A raw-request EC2 call, as CloudTrail logs the newer APIs.
fn raw(name: &str, params: Value) -> Request {
    ec2(name, json!({format!("{name}Request"): params}))
}

/// The Region's block public access mode set to `mode`.
fn block_mode(mode: &str) -> Request {
    raw(
        "ModifyVpcBlockPublicAccessOptions",
        json!({"InternetGatewayBlockMode": mode}),
    )
}

/// The Region's block on internet traffic made bidirectional.
fn block_public_access(instance: &Instance) -> Vec<Change> {
    let current = text(instance, "internet_gateway_block_mode");
    if current == "block-bidirectional" {
        return Vec::new();
    }
    vec![
        Change::modify(
            "vpc-bpa-bidirectional",
            instance,
            "blocked internet traffic to and from the Region's VPCs both ways".to_owned(),
            &["internet_gateway_block_mode"],
            vec![block_mode("block-bidirectional")],
        )
        .undo(vec![block_mode(current)]),
    ]
}

/// The Region's block on internet traffic to VPCs turned off: a security event.
pub fn block_public_access_off(instance: &Instance) -> Option<Change> {
    let current = text(instance, "internet_gateway_block_mode");
    (current != "off").then(|| {
        Change::modify(
            "vpc-bpa-off",
            instance,
            "turned off VPC block public access in the Region".to_owned(),
            &["internet_gateway_block_mode"],
            vec![block_mode("off")],
        )
        .undo(vec![block_mode(current)])
    })
}

/// An exclusion narrowed to outbound traffic, and an exclusion removed.
fn exclusion(instance: &Instance) -> Vec<Change> {
    let id = text(instance, "id");
    let current = text(instance, "internet_gateway_exclusion_mode");
    let modify = |mode: &str| {
        raw(
            "ModifyVpcBlockPublicAccessExclusion",
            json!({"ExclusionId": id, "InternetGatewayExclusionMode": mode}),
        )
    };
    let mut out = vec![delete(
        "vpc-bpa-exclusion-delete",
        instance,
        "block public access exclusion",
        raw(
            "DeleteVpcBlockPublicAccessExclusion",
            json!({"ExclusionId": id}),
        ),
    )];
    if current != "allow-egress" {
        out.push(
            Change::modify(
                "vpc-bpa-exclusion-egress",
                instance,
                format!("let only outbound traffic past block public access for {id}"),
                &["internet_gateway_exclusion_mode"],
                vec![modify("allow-egress")],
            )
            .undo(vec![modify(current)]),
        );
    }
    out
}

/// A Redshift subnet group's description reworded.
fn redshift_subnets(instance: &Instance) -> Change {
    let name = text(instance, "name");
    let subnets = instance.attributes.get("subnet_ids").cloned();
    reworded(
        "redshift-subnet-description",
        "Redshift subnet group",
        instance,
        |d| {
            req(
                "redshift.amazonaws.com",
                "ModifyClusterSubnetGroup",
                json!({"clusterSubnetGroupName": name, "description": d, "subnetIds": subnets}),
            )
        },
    )
}

/// A target call on the attachment's target group.
fn target_call(name: &str, instance: &Instance, id: &str) -> Request {
    let mut target = json!({"id": id});
    for (attr, key) in [("port", "port"), ("availability_zone", "availabilityZone")] {
        if let Some(v) = instance.attributes.get(attr).filter(|v| !v.is_null()) {
            target[key] = v.clone();
        }
    }
    req(
        ELB,
        name,
        json!({"targetGroupArn": text(instance, "target_group_arn"), "targets": [target]}),
    )
}

/// The IPv4 address ten above `ip`, for a server next to a registered one.
fn neighbour(ip: &str) -> Option<String> {
    let ip: std::net::Ipv4Addr = ip.parse().ok()?;
    Some(std::net::Ipv4Addr::from(u32::from(ip).checked_add(10)?).to_string())
}

/// A target deregistered, and a server beside it registered.
fn target(instance: &Instance) -> Vec<Change> {
    let id = text(instance, "target_id");
    let mut out = vec![
        Change::modify(
            "lb-target-deregister",
            instance,
            format!("deregistered {id} from its target group"),
            &[],
            vec![target_call("DeregisterTargets", instance, id)],
        )
        .undo(vec![target_call("RegisterTargets", instance, id)])
        .kind(Kind::Delete),
    ];
    if let Some(next) = neighbour(id) {
        out.push(
            Change::modify(
                "lb-target-register",
                instance,
                format!("registered {next} with the target group of {id}"),
                &[],
                vec![target_call("RegisterTargets", instance, &next)],
            )
            .undo(vec![target_call("DeregisterTargets", instance, &next)])
            .kind(Kind::Create),
        );
    }
    out
}

/// An extra certificate taken off its listener.
fn listener_certificate(instance: &Instance) -> Change {
    let call = |name: &str| {
        req(
            ELB,
            name,
            json!({"listenerArn": text(instance, "listener_arn"),
                   "certificates": [{"certificateArn": text(instance, "certificate_arn")}]}),
        )
    };
    Change::modify(
        "listener-certificate-remove",
        instance,
        format!(
            "took certificate {} off its listener",
            text(instance, "certificate_arn")
        ),
        &[],
        vec![call("RemoveListenerCertificates")],
    )
    .undo(vec![call("AddListenerCertificates")])
    .kind(Kind::Delete)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_ranges_follow() {
        assert_eq!(next_range("10.61.0.0/16").as_deref(), Some("10.62.0.0/16"));
        assert_eq!(next_range("10.0.255.0/24").as_deref(), Some("10.1.0.0/24"));
        assert_eq!(neighbour("192.168.10.21").as_deref(), Some("192.168.10.31"));
    }
}
