//! Changes to networking: security groups and their rules, subnets, VPCs and route tables.

use super::change::{Change, Kind, int, req, text};
use reconciler::terraform::state::Instance;
use serde_json::{Value, json};

const EC2: &str = "ec2.amazonaws.com";

/// The changes that apply to one instance.
pub fn changes(instance: &Instance, all: &[Instance]) -> Vec<Change> {
    match instance.resource_type.as_str() {
        "aws_security_group" => security_group(instance, all),
        "aws_subnet" => subnet(instance),
        "aws_vpc" | "aws_default_vpc" => vpc(instance),
        "aws_route_table" => route_table(instance),
        "aws_vpc_security_group_ingress_rule"
        | "aws_vpc_security_group_egress_rule"
        | "aws_security_group_rule" => rule_resource(instance).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// One `ipPermissions` item for a TCP port from one IPv4 or IPv6 range.
pub(super) fn permission(port: i64, cidr: &str, description: &str) -> Value {
    let mut range = match cidr.contains(':') {
        true => json!({"cidrIpv6": cidr}),
        false => json!({"cidrIp": cidr}),
    };
    if !description.is_empty() {
        range["description"] = json!(description);
    }
    let (v4, v6) = match cidr.contains(':') {
        true => (json!({}), json!({"items": [range]})),
        false => (json!({"items": [range]}), json!({})),
    };
    json!({"ipProtocol": "tcp", "fromPort": port, "toPort": port, "groups": {},
           "ipRanges": v4, "ipv6Ranges": v6, "prefixListIds": {}})
}

/// A security group call on `group` with these `ipPermissions` items.
pub(super) fn sg_call(name: &str, group: &str, items: Vec<Value>) -> crate::sim::Request {
    req(
        EC2,
        name,
        json!({"groupId": group, "ipPermissions": {"items": items}}),
    )
}

/// The ingress elements of a group.
fn ingress(instance: &Instance) -> Vec<Value> {
    instance
        .attributes
        .get("ingress")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// The group's ingress rules Terraform manages as resources of their own, as Terraform
/// rule elements (`protocol`, `from_port`, `to_port`).
fn separate_ingress(instance: &Instance, all: &[Instance]) -> Vec<Value> {
    let id = text(instance, "id");
    all.iter()
        .filter(|i| text(i, "security_group_id") == id)
        .filter(|i| {
            i.resource_type == "aws_vpc_security_group_ingress_rule"
                || (i.resource_type == "aws_security_group_rule" && text(i, "type") == "ingress")
        })
        .map(|i| {
            let protocol = i
                .attributes
                .get("ip_protocol")
                .or_else(|| i.attributes.get("protocol"));
            json!({"protocol": protocol, "from_port": i.attributes.get("from_port"),
                   "to_port": i.attributes.get("to_port")})
        })
        .collect()
}

/// Whether some ingress element already covers TCP `port`.
fn port_open(instance: &Instance, port: i64) -> bool {
    ingress(instance).iter().any(|r| {
        let from = r.get("from_port").and_then(Value::as_i64).unwrap_or(-1);
        let to = r.get("to_port").and_then(Value::as_i64).unwrap_or(-1);
        r["protocol"] == "-1" || (from <= port && port <= to)
    })
}

/// The CIDR block of the group's VPC, or a private range.
pub(super) fn vpc_cidr(instance: &Instance, all: &[Instance]) -> String {
    let vpc = text(instance, "vpc_id");
    all.iter()
        .find(|i| i.resource_type == "aws_vpc" && text(i, "id") == vpc)
        .map(|v| text(v, "cidr_block").to_owned())
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "10.0.0.0/8".to_owned())
}

fn security_group(instance: &Instance, all: &[Instance]) -> Vec<Change> {
    let id = text(instance, "id").to_owned();
    let mut out = Vec::new();
    let cidr = vpc_cidr(instance, all);
    // A group whose rules are resources of their own gains a new rule resource, not an
    // inline rule: the change creates something.
    let separate = separate_ingress(instance, all);
    let kind = match separate.is_empty() {
        true => Kind::Modify,
        false => Kind::Create,
    };
    let covered = |port: i64| {
        port_open(instance, port)
            || separate.iter().any(|r| {
                let from = r["from_port"].as_i64().unwrap_or(-1);
                let to = r["to_port"].as_i64().unwrap_or(-1);
                r["protocol"] == "-1" || (from <= port && port <= to)
            })
    };
    if let Some(port) = [443, 8443, 9090, 5432, 6379]
        .into_iter()
        .find(|p| !covered(*p))
    {
        let item = permission(port, &cidr, "internal access");
        out.push(
            Change::modify(
                "sg-open-port",
                instance,
                format!("opened TCP {port} from {cidr} on {id}"),
                &["ingress"],
                vec![sg_call(
                    "AuthorizeSecurityGroupIngress",
                    &id,
                    vec![item.clone()],
                )],
            )
            .undo(vec![sg_call("RevokeSecurityGroupIngress", &id, vec![item])])
            .kind(kind),
        );
    }
    for (port, cidr, label) in [
        (22, "0.0.0.0/0", "SSH"),
        (3389, "0.0.0.0/0", "RDP"),
        (22, "::/0", "SSH"),
    ] {
        if covered(port) {
            continue;
        }
        let item = permission(port, cidr, "");
        out.push(
            Change::modify(
                "sg-open-world",
                instance,
                format!("opened {label} (TCP {port}) to {cidr} on {id}"),
                &["ingress"],
                vec![sg_call(
                    "AuthorizeSecurityGroupIngress",
                    &id,
                    vec![item.clone()],
                )],
            )
            .undo(vec![sg_call("RevokeSecurityGroupIngress", &id, vec![item])])
            .kind(kind)
            .risky(),
        );
    }
    out.extend(restrict_unrestricted(instance, &id));
    out.extend(revoke_rules(instance, &id));
    out
}

/// The `ipPermissions` item that matches a Terraform rule element exactly.
pub(super) fn item_of(rule: &Value) -> Option<Value> {
    let protocol = rule.get("protocol")?.as_str()?;
    let strings = |k: &str| -> Vec<String> {
        rule.get(k)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let v4: Vec<Value> = strings("cidr_blocks")
        .into_iter()
        .map(|c| json!({"cidrIp": c}))
        .collect();
    let v6: Vec<Value> = strings("ipv6_cidr_blocks")
        .into_iter()
        .map(|c| json!({"cidrIpv6": c}))
        .collect();
    let groups: Vec<Value> = strings("security_groups")
        .into_iter()
        .map(|g| json!({"groupId": g}))
        .collect();
    if v4.is_empty() && v6.is_empty() && groups.is_empty() {
        return None;
    }
    let wrap = |v: Vec<Value>| match v.is_empty() {
        true => json!({}),
        false => json!({"items": v}),
    };
    Some(
        json!({"ipProtocol": protocol, "fromPort": rule["from_port"], "toPort": rule["to_port"],
        "groups": wrap(groups), "ipRanges": wrap(v4), "ipv6Ranges": wrap(v6), "prefixListIds": {}}),
    )
}

/// AWSConfigRemediation-RemoveUnrestrictedSourceIngressRules (and, for port 22,
/// AWS-DisableIncomingSSHOnPort22): revoke ingress open to 0.0.0.0/0 or ::/0.
fn restrict_unrestricted(instance: &Instance, id: &str) -> Option<Change> {
    let open: Vec<Value> = ingress(instance)
        .iter()
        .filter_map(|r| {
            let world = |k: &str, any: &str| {
                r.get(k)
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().any(|c| c == any))
            };
            let v4 = world("cidr_blocks", "0.0.0.0/0");
            let v6 = world("ipv6_cidr_blocks", "::/0");
            let from = r.get("from_port").and_then(Value::as_i64)?;
            let mut item = json!({"ipProtocol": r["protocol"], "fromPort": from, "toPort": r["to_port"],
                "groups": {}, "ipRanges": {}, "ipv6Ranges": {}, "prefixListIds": {}});
            if v4 {
                item["ipRanges"] = json!({"items": [{"cidrIp": "0.0.0.0/0"}]});
            }
            if v6 {
                item["ipv6Ranges"] = json!({"items": [{"cidrIpv6": "::/0"}]});
            }
            (v4 || v6).then_some(item)
        })
        .collect();
    if open.is_empty() {
        return None;
    }
    let ssh_only = open
        .iter()
        .all(|i| i["fromPort"] == 22 && i["toPort"] == 22);
    let runbook = match ssh_only {
        true => "AWS-DisableIncomingSSHOnPort22",
        false => "AWSConfigRemediation-RemoveUnrestrictedSourceIngressRules",
    };
    Some(
        Change::modify(
            "sg-restrict-unrestricted",
            instance,
            format!("removed ingress open to the internet from {id}"),
            &["ingress"],
            vec![sg_call("RevokeSecurityGroupIngress", id, open.clone())],
        )
        .undo(vec![sg_call("AuthorizeSecurityGroupIngress", id, open)])
        .runbook(runbook),
    )
}

/// Revoking one existing inline ingress rule.
fn revoke_rules(instance: &Instance, id: &str) -> Vec<Change> {
    ingress(instance)
        .iter()
        .enumerate()
        .filter_map(|(n, rule)| {
            let item = item_of(rule)?;
            let from = rule.get("from_port").and_then(Value::as_i64).unwrap_or(0);
            Some(
                Change::modify(
                    "sg-revoke-rule",
                    instance,
                    format!("revoked ingress rule {n} (port {from}) from {id}"),
                    &["ingress"],
                    vec![sg_call(
                        "RevokeSecurityGroupIngress",
                        id,
                        vec![item.clone()],
                    )],
                )
                .undo(vec![sg_call(
                    "AuthorizeSecurityGroupIngress",
                    id,
                    vec![item],
                )])
                .kind(Kind::Delete),
            )
        })
        .collect()
}

/// Whether a rule managed as its own resource is an egress rule.
fn is_egress(instance: &Instance) -> bool {
    instance.resource_type == "aws_vpc_security_group_egress_rule"
        || text(instance, "type") == "egress"
}

/// The `ipPermissions` item of a rule managed as its own resource, when it has exactly one
/// peer.
fn rule_resource_item(instance: &Instance) -> Option<Value> {
    let a = &instance.attributes;
    let text = |k: &str| a.get(k).and_then(Value::as_str).filter(|v| !v.is_empty());
    let one = |k: &str| match a.get(k).and_then(Value::as_array).map(Vec::as_slice) {
        Some([v]) => v.as_str(),
        _ => None,
    };
    let (protocol, ranges, v6, groups) = match instance.resource_type.as_str() {
        "aws_vpc_security_group_ingress_rule" | "aws_vpc_security_group_egress_rule" => (
            text("ip_protocol")?,
            text("cidr_ipv4"),
            text("cidr_ipv6"),
            text("referenced_security_group_id"),
        ),
        _ if matches!(text("type"), Some("ingress" | "egress")) => (
            text("protocol")?,
            one("cidr_blocks"),
            one("ipv6_cidr_blocks"),
            text("source_security_group_id"),
        ),
        _ => return None,
    };
    let wrap = |v: Option<Value>| v.map_or(json!({}), |v| json!({"items": [v]}));
    let item = json!({"ipProtocol": protocol, "fromPort": a.get("from_port"), "toPort": a.get("to_port"),
        "groups": wrap(groups.map(|g| json!({"groupId": g}))),
        "ipRanges": wrap(ranges.map(|c| json!({"cidrIp": c}))),
        "ipv6Ranges": wrap(v6.map(|c| json!({"cidrIpv6": c}))),
        "prefixListIds": {}});
    let peers = [ranges, v6, groups].iter().filter(|p| p.is_some()).count();
    (peers == 1).then_some(item)
}

/// Revoking a rule Terraform manages as its own resource.
fn rule_resource(instance: &Instance) -> Option<Change> {
    let item = rule_resource_item(instance)?;
    let group = text(instance, "security_group_id");
    let from = int(instance, "from_port").unwrap_or(0);
    let (call, direction) = match is_egress(instance) {
        true => ("RevokeSecurityGroupEgress", "egress"),
        false => ("RevokeSecurityGroupIngress", "ingress"),
    };
    Some(
        Change::modify(
            "sg-revoke-rule-resource",
            instance,
            format!("revoked the {direction} rule for port {from} from {group}"),
            &[],
            vec![sg_call(call, group, vec![item])],
        )
        .kind(Kind::Delete),
    )
}

/// AWSConfigRemediation-DisableSubnetAutoAssignPublicIP on public subnets.
fn subnet(instance: &Instance) -> Vec<Change> {
    if instance.attributes.get("map_public_ip_on_launch") != Some(&json!(true)) {
        return Vec::new();
    }
    let id = text(instance, "id");
    let call = |on: bool| {
        req(
            EC2,
            "ModifySubnetAttribute",
            json!({"subnetId": id, "mapPublicIpOnLaunch": {"value": on}}),
        )
    };
    vec![
        Change::modify(
            "subnet-disable-public-ip",
            instance,
            format!("turned off auto-assign public IPv4 on {id}"),
            &["map_public_ip_on_launch"],
            vec![call(false)],
        )
        .undo(vec![call(true)])
        .runbook("AWSConfigRemediation-DisableSubnetAutoAssignPublicIP"),
    ]
}

fn vpc(instance: &Instance) -> Vec<Change> {
    let id = text(instance, "id");
    let mut out = Vec::new();
    for (param, attr) in [
        ("enableDnsHostnames", "enable_dns_hostnames"),
        ("enableDnsSupport", "enable_dns_support"),
    ] {
        let current = instance.attributes.get(attr) == Some(&json!(true));
        let call = |on: bool| {
            req(
                EC2,
                "ModifyVpcAttribute",
                json!({"vpcId": id, param: {"value": on}}),
            )
        };
        let verb = if current { "disabled" } else { "enabled" };
        out.push(
            Change::modify(
                "vpc-dns-attribute",
                instance,
                format!("{verb} {param} on {id}"),
                &[attr],
                vec![call(!current)],
            )
            .undo(vec![call(current)]),
        );
    }
    out
}

/// The request target of a route element, `("natGatewayId", "nat-...")`.
fn route_target(route: &Value) -> Option<(&'static str, String)> {
    [
        ("gateway_id", "gatewayId"),
        ("nat_gateway_id", "natGatewayId"),
        ("transit_gateway_id", "transitGatewayId"),
        ("vpc_peering_connection_id", "vpcPeeringConnectionId"),
        ("network_interface_id", "networkInterfaceId"),
    ]
    .into_iter()
    .find_map(|(attr, param)| {
        let v = route.get(attr)?.as_str()?;
        (!v.is_empty()).then(|| (param, v.to_owned()))
    })
}

fn route_table(instance: &Instance) -> Vec<Change> {
    let id = text(instance, "id").to_owned();
    let routes = instance
        .attributes
        .get("route")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    for route in &routes {
        let Some(dest) = route.get("cidr_block").and_then(Value::as_str) else {
            continue;
        };
        let Some((param, target)) = route_target(route) else {
            continue;
        };
        let delete = req(
            EC2,
            "DeleteRoute",
            json!({"routeTableId": id, "destinationCidrBlock": dest}),
        );
        let create = req(
            EC2,
            "CreateRoute",
            json!({"routeTableId": id, "destinationCidrBlock": dest, param: target}),
        );
        out.push(
            Change::modify(
                "route-delete",
                instance,
                format!("deleted the route to {dest} from {id}"),
                &["route"],
                vec![delete],
            )
            .undo(vec![create])
            .kind(Kind::Delete),
        );
        if dest == "0.0.0.0/0" {
            let extra = "192.168.0.0/16";
            let add = |name: &str| {
                let mut p = json!({"routeTableId": id, "destinationCidrBlock": extra});
                if name == "CreateRoute" {
                    p[param] = json!(target);
                }
                req(EC2, name, p)
            };
            out.push(
                Change::modify(
                    "route-add",
                    instance,
                    format!("added a route to {extra} via {target} in {id}"),
                    &["route"],
                    vec![add("CreateRoute")],
                )
                .undo(vec![add("DeleteRoute")]),
            );
        }
    }
    out
}

/// A new security group with one ingress rule, in each VPC.
pub fn creations(all: &[Instance]) -> Vec<Change> {
    all.iter()
        .filter(|i| i.resource_type == "aws_vpc")
        .map(|vpc| {
            let vpc_id = text(vpc, "id");
            let cidr = text(vpc, "cidr_block");
            let name = format!("bastion-{}", &vpc_id[vpc_id.len().saturating_sub(4)..]);
            let rule = permission(22, cidr, "bastion SSH");
            let create = req(
                EC2,
                "CreateSecurityGroup",
                json!({"groupName": name, "groupDescription": "bastion access", "vpcId": vpc_id}),
            );
            Change::modify(
                "sg-create",
                vpc,
                format!("created security group {name} in {vpc_id} allowing SSH from {cidr}"),
                &[],
                vec![
                    create,
                    sg_call("AuthorizeSecurityGroupIngress", "${groupId}", vec![rule]),
                ],
            )
            .kind(Kind::Create)
        })
        .collect()
}
