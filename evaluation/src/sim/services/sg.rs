//! EC2 security groups and their rules. A group's inline rules live in the `ingress` and `egress`
//! lists of `aws_security_group`, one element per permission and description, with
//! `cidr_blocks`, `ipv6_cidr_blocks`, `prefix_list_ids`, `security_groups` and `self` holding
//! the peers. When a state manages a group's rules of one direction as separate resources
//! (`aws_vpc_security_group_ingress_rule` and its kin), those resources are the group's rules
//! too: a revoke removes the matching one, and a new rule becomes a resource of its own.

use serde_json::{Map, Value, json};

use super::super::ApiError;
use super::super::ctx::{ApiResult, Ctx, ec2_true};
use super::super::params::{self, items, list};

/// One peer of a rule.
#[derive(Debug, Clone, PartialEq)]
enum Peer {
    Cidr(String),
    Ipv6(String),
    PrefixList(String),
    Group(String),
}

impl Peer {
    /// The Terraform list the peer lives in.
    fn list_key(&self) -> &'static str {
        match self {
            Peer::Cidr(_) => "cidr_blocks",
            Peer::Ipv6(_) => "ipv6_cidr_blocks",
            Peer::PrefixList(_) => "prefix_list_ids",
            Peer::Group(_) => "security_groups",
        }
    }

    fn text(&self) -> &str {
        match self {
            Peer::Cidr(s) | Peer::Ipv6(s) | Peer::PrefixList(s) | Peer::Group(s) => s,
        }
    }
}

/// A permission as requested: protocol, ports, and peers with their descriptions.
#[derive(Debug, Clone)]
struct Permission {
    protocol: String,
    from: i64,
    to: i64,
    peers: Vec<(Peer, String)>,
}

/// `tcp`, `udp`, `icmp`, `icmpv6` or `-1`, from a name or protocol number.
fn protocol_name(raw: &str) -> String {
    match raw.to_ascii_lowercase().as_str() {
        "6" | "tcp" => "tcp".into(),
        "17" | "udp" => "udp".into(),
        "1" | "icmp" => "icmp".into(),
        "58" | "icmpv6" => "icmpv6".into(),
        "-1" | "all" => "-1".into(),
        other => other.into(),
    }
}

/// The permissions of a request: the `ipPermissions` items, or the older flat form
/// (`ipProtocol`, `fromPort`, `toPort`, `cidrIp`).
fn permissions(params: &Value) -> Result<Vec<Permission>, ApiError> {
    let mut out = Vec::new();
    for item in items(params, "ipPermissions") {
        out.push(permission(item)?);
    }
    if out.is_empty() && params.get("ipProtocol").is_some() {
        let mut flat = permission(params)?;
        if let Some(cidr) = params::opt_string(params, "cidrIp") {
            flat.peers
                .push((Peer::Cidr(cidr.to_owned()), String::new()));
        }
        if let Some(group) = params::opt_string(params, "sourceSecurityGroupName") {
            flat.peers
                .push((Peer::Group(group.to_owned()), String::new()));
        }
        out.push(flat);
    }
    if out.is_empty() || out.iter().any(|p| p.peers.is_empty()) {
        return Err(ApiError::new(
            "MissingParameter",
            "Either ipPermissions or (ipProtocol, fromPort, toPort and a source) must be specified",
        ));
    }
    Ok(out)
}

fn permission(item: &Value) -> Result<Permission, ApiError> {
    let protocol = item
        .get("ipProtocol")
        .map(|v| match v {
            Value::Number(n) => n.to_string(),
            other => other.as_str().unwrap_or_default().to_owned(),
        })
        .ok_or_else(|| params::missing("ipProtocol"))?;
    let protocol = protocol_name(&protocol);
    let all = protocol == "-1";
    let from = if all {
        0
    } else {
        params::opt_int(item, "fromPort").unwrap_or(0)
    };
    let to = if all {
        0
    } else {
        params::opt_int(item, "toPort").unwrap_or(from)
    };
    if !all && from > to && protocol != "icmp" {
        return Err(ApiError::new(
            "InvalidParameterValue",
            format!("Invalid TCP/UDP port range: from port {from} is greater than to port {to}"),
        ));
    }
    let mut peers = Vec::new();
    let described = |v: &Value| {
        params::opt_string(v, "description")
            .unwrap_or_default()
            .to_owned()
    };
    for r in list(item.get("ipRanges")) {
        if let Some(c) = params::opt_string(r, "cidrIp") {
            peers.push((Peer::Cidr(c.to_owned()), described(r)));
        }
    }
    for r in list(item.get("ipv6Ranges")) {
        if let Some(c) = params::opt_string(r, "cidrIpv6") {
            peers.push((Peer::Ipv6(c.to_owned()), described(r)));
        }
    }
    for r in list(item.get("prefixListIds")) {
        if let Some(p) = params::opt_string(r, "prefixListId") {
            peers.push((Peer::PrefixList(p.to_owned()), described(r)));
        }
    }
    for g in list(item.get("groups")) {
        if let Some(id) = params::opt_string(g, "groupId") {
            peers.push((Peer::Group(id.to_owned()), described(g)));
        }
    }
    Ok(Permission {
        protocol,
        from,
        to,
        peers,
    })
}

/// Whether a Terraform rule element holds `peer` for this protocol and port range.
fn rule_has(rule: &Value, perm: &Permission, peer: &Peer, own_group: &str) -> bool {
    let same_ports = rule.get("protocol").and_then(Value::as_str) == Some(&perm.protocol)
        && params::opt_int(rule, "from_port") == Some(perm.from)
        && params::opt_int(rule, "to_port") == Some(perm.to);
    if !same_ports {
        return false;
    }
    if let Peer::Group(id) = peer
        && id == own_group
    {
        return rule.get("self").and_then(Value::as_bool) == Some(true);
    }
    params::strings(rule.get(peer.list_key()))
        .iter()
        .any(|p| p == peer.text())
}

/// The rules of a direction (`ingress` / `egress`).
fn rules(ctx: &Ctx<'_>, at: usize, key: &str) -> Vec<Value> {
    ctx.attr(at, key).as_array().cloned().unwrap_or_default()
}

/// The security group named by `groupId`, or `InvalidGroup.NotFound`.
pub fn group(ctx: &Ctx<'_>, params: &Value) -> Result<usize, ApiError> {
    let id = params::opt_string(params, "groupId")
        .or_else(|| params::opt_string(params, "groupName"))
        .ok_or_else(|| params::missing("groupId"))?;
    ctx.find_any(
        &["aws_security_group", "aws_default_security_group"],
        "id",
        id,
    )
    .or_else(|| ctx.find("aws_security_group", "name", id))
    .ok_or_else(|| group_not_found(id))
}

/// `InvalidGroup.NotFound` for `id`.
pub fn group_not_found(id: &str) -> ApiError {
    ApiError::new(
        "InvalidGroup.NotFound",
        format!("The security group '{id}' does not exist"),
    )
}

/// A Terraform rule element for one permission and description.
fn rule_element(perm: &Permission, description: &str, peers: &[&Peer], own_group: &str) -> Value {
    let mut element = Map::new();
    for key in [
        "cidr_blocks",
        "ipv6_cidr_blocks",
        "prefix_list_ids",
        "security_groups",
    ] {
        let values: Vec<&str> = peers
            .iter()
            .filter(|p| p.list_key() == key && !matches!(p, Peer::Group(g) if g == own_group))
            .map(|p| p.text())
            .collect();
        element.insert(key.to_owned(), json!(values));
    }
    let is_self = peers
        .iter()
        .any(|p| matches!(p, Peer::Group(g) if g == own_group));
    element.insert("self".into(), json!(is_self));
    element.insert("description".into(), json!(description));
    element.insert("protocol".into(), json!(perm.protocol));
    element.insert("from_port".into(), json!(perm.from));
    element.insert("to_port".into(), json!(perm.to));
    Value::Object(element)
}

/// AuthorizeSecurityGroupIngress / Egress.
pub fn authorize(ctx: &mut Ctx<'_>, params: &Value, egress: bool) -> ApiResult {
    let at = group(ctx, params)?;
    let group_id = ctx.attr_str(at, "id");
    let perms = permissions(params)?;
    let key = if egress { "egress" } else { "ingress" };
    let mut current = rules(ctx, at, key);
    let mut rule_set = Vec::new();
    for perm in &perms {
        for (peer, _) in &perm.peers {
            if let Peer::Group(id) = peer
                && ctx.find("aws_security_group", "id", id).is_none()
                && id != &group_id
            {
                return Err(group_not_found(id));
            }
            if current.iter().any(|r| rule_has(r, perm, peer, &group_id))
                || separate_rule(ctx, &group_id, egress, perm, peer).is_some()
            {
                return Err(duplicate(perm, peer));
            }
        }
        if has_separate_rules(ctx, &group_id, egress) {
            for (peer, description) in &perm.peers {
                let id = ctx.hex_id("sgr", 17);
                let item = rule_response(ctx, &group_id, &id, egress, perm, peer, description);
                create_separate_rule(ctx, &group_id, egress, &id, perm, peer, description);
                rule_set.push(item);
            }
            continue;
        }
        let mut descriptions: Vec<&str> = perm.peers.iter().map(|(_, d)| d.as_str()).collect();
        descriptions.dedup();
        for description in descriptions {
            let peers: Vec<&Peer> = perm
                .peers
                .iter()
                .filter(|(_, d)| d == description)
                .map(|(p, _)| p)
                .collect();
            current.push(rule_element(perm, description, &peers, &group_id));
        }
        for (peer, description) in &perm.peers {
            let id = ctx.hex_id("sgr", 17);
            rule_set.push(rule_response(
                ctx,
                &group_id,
                &id,
                egress,
                perm,
                peer,
                description,
            ));
        }
    }
    ctx.set(at, key, Value::Array(current));
    let mut response = ec2_true();
    response["securityGroupRuleSet"] = json!({"items": rule_set});
    Ok(response)
}

/// RevokeSecurityGroupIngress / Egress. A rule that does not exist fails the whole call in a
/// non-default VPC (`InvalidPermission.NotFound`); in a default VPC the call succeeds and
/// lists it under `unknownIpPermissionSet`.
pub fn revoke(ctx: &mut Ctx<'_>, params: &Value, egress: bool) -> ApiResult {
    let at = group(ctx, params)?;
    let group_id = ctx.attr_str(at, "id");
    let perms = permissions(params)?;
    let key = if egress { "egress" } else { "ingress" };
    let default_vpc = in_default_vpc(ctx, at);
    let mut current = rules(ctx, at, key);
    let mut unknown = Vec::new();
    for perm in &perms {
        for (peer, _) in &perm.peers {
            if let Some(at) = separate_rule(ctx, &group_id, egress, perm, peer) {
                ctx.remove(at);
                continue;
            }
            let Some(pos) = current
                .iter()
                .position(|r| rule_has(r, perm, peer, &group_id))
            else {
                if default_vpc {
                    unknown.push(unknown_permission(perm, peer));
                    continue;
                }
                return Err(ApiError::new(
                    "InvalidPermission.NotFound",
                    "The specified rule does not exist in this security group.",
                ));
            };
            remove_peer(&mut current[pos], peer, &group_id);
            if rule_is_empty(&current[pos]) {
                current.remove(pos);
            }
        }
    }
    let at = group(ctx, params)?;
    ctx.set(at, key, Value::Array(current));
    let mut response = ec2_true();
    if !unknown.is_empty() {
        response["unknownIpPermissionSet"] = json!({"items": unknown});
    }
    Ok(response)
}

/// Rules a state manages as resources of their own: the current rule types (one peer each)
/// and the older `aws_security_group_rule` (a `type` of `ingress` or `egress`).
const RULE_TYPES: [&str; 3] = [
    "aws_vpc_security_group_ingress_rule",
    "aws_vpc_security_group_egress_rule",
    "aws_security_group_rule",
];

/// Positions of the separate rule resources of a group in one direction.
fn separate_rules(ctx: &Ctx<'_>, group_id: &str, egress: bool) -> Vec<usize> {
    let direction = if egress { "egress" } else { "ingress" };
    (0..ctx.get_all().len())
        .filter(|&at| {
            let instance = ctx.get(at);
            let kind = instance.resource_type.as_str();
            RULE_TYPES.contains(&kind)
                && ctx.attr_str(at, "security_group_id") == group_id
                && (kind.ends_with(&format!("_{direction}_rule"))
                    || (kind == "aws_security_group_rule" && ctx.attr_str(at, "type") == direction))
        })
        .collect()
}

/// Whether the group's rules of this direction exist as separate resources: new rules then
/// show up in a refresh as rule objects of their own, not in the group's inline list.
fn has_separate_rules(ctx: &Ctx<'_>, group_id: &str, egress: bool) -> bool {
    !separate_rules(ctx, group_id, egress).is_empty()
}

/// The separate rule resource that allows `peer` for this permission.
fn separate_rule(
    ctx: &Ctx<'_>,
    group_id: &str,
    egress: bool,
    perm: &Permission,
    peer: &Peer,
) -> Option<usize> {
    separate_rules(ctx, group_id, egress)
        .into_iter()
        .find(|&at| separate_rule_has(ctx, at, perm, peer))
}

fn separate_rule_has(ctx: &Ctx<'_>, at: usize, perm: &Permission, peer: &Peer) -> bool {
    let legacy = ctx.get(at).resource_type == "aws_security_group_rule";
    let protocol_key = if legacy { "protocol" } else { "ip_protocol" };
    let protocol = protocol_name(&ctx.attr_str(at, protocol_key));
    if protocol != perm.protocol {
        return false;
    }
    let port = |key: &str| params::opt_int(&ctx.get(at).attributes, key);
    if protocol != "-1"
        && (port("from_port") != Some(perm.from) || port("to_port") != Some(perm.to))
    {
        return false;
    }
    let keys: [&str; 4] = if legacy {
        [
            "cidr_blocks",
            "ipv6_cidr_blocks",
            "prefix_list_ids",
            "source_security_group_id",
        ]
    } else {
        [
            "cidr_ipv4",
            "cidr_ipv6",
            "prefix_list_id",
            "referenced_security_group_id",
        ]
    };
    let key = match peer {
        Peer::Cidr(_) => keys[0],
        Peer::Ipv6(_) => keys[1],
        Peer::PrefixList(_) => keys[2],
        Peer::Group(_) => keys[3],
    };
    let values = match ctx.attr(at, key) {
        Value::String(one) => vec![one],
        other => params::strings(Some(&other)),
    };
    values.iter().any(|v| v == peer.text())
}

/// A new `aws_vpc_security_group_*_rule` for one peer, as a refresh after an import reads it.
fn create_separate_rule(
    ctx: &mut Ctx<'_>,
    group_id: &str,
    egress: bool,
    rule_id: &str,
    perm: &Permission,
    peer: &Peer,
    description: &str,
) {
    let all = perm.protocol == "-1";
    let mut attributes = json!({
        "id": rule_id,
        "security_group_rule_id": rule_id,
        "arn": ctx.arn("ec2", &format!("security-group-rule/{rule_id}")),
        "security_group_id": group_id,
        "ip_protocol": perm.protocol,
        "from_port": if all { Value::Null } else { json!(perm.from) },
        "to_port": if all { Value::Null } else { json!(perm.to) },
        "cidr_ipv4": Value::Null,
        "cidr_ipv6": Value::Null,
        "prefix_list_id": Value::Null,
        "referenced_security_group_id": Value::Null,
        "description": if description.is_empty() { Value::Null } else { json!(description) },
        "tags": Value::Null,
        "tags_all": {},
    });
    let key = match peer {
        Peer::Cidr(_) => "cidr_ipv4",
        Peer::Ipv6(_) => "cidr_ipv6",
        Peer::PrefixList(_) => "prefix_list_id",
        Peer::Group(_) => "referenced_security_group_id",
    };
    attributes[key] = json!(peer.text());
    let kind = if egress {
        "aws_vpc_security_group_egress_rule"
    } else {
        "aws_vpc_security_group_ingress_rule"
    };
    ctx.create(kind, attributes);
}

/// Whether the group belongs to the account's default VPC.
fn in_default_vpc(ctx: &Ctx<'_>, at: usize) -> bool {
    let vpc = ctx.attr_str(at, "vpc_id");
    ctx.find("aws_default_vpc", "id", &vpc).is_some()
        || ctx
            .find("aws_vpc", "id", &vpc)
            .is_some_and(|v| ctx.attr(v, "default") == json!(true))
}

/// A permission EC2 could not find, in the request's shape.
fn unknown_permission(perm: &Permission, peer: &Peer) -> Value {
    let mut item = json!({
        "ipProtocol": perm.protocol, "fromPort": perm.from, "toPort": perm.to,
        "groups": {}, "ipRanges": {}, "ipv6Ranges": {}, "prefixListIds": {},
    });
    let (list_key, entry) = match peer {
        Peer::Cidr(c) => ("ipRanges", json!({"cidrIp": c})),
        Peer::Ipv6(c) => ("ipv6Ranges", json!({"cidrIpv6": c})),
        Peer::PrefixList(p) => ("prefixListIds", json!({"prefixListId": p})),
        Peer::Group(g) => ("groups", json!({"groupId": g})),
    };
    item[list_key] = json!({"items": [entry]});
    item
}

fn remove_peer(rule: &mut Value, peer: &Peer, own_group: &str) {
    if matches!(peer, Peer::Group(g) if g == own_group) {
        rule["self"] = json!(false);
        return;
    }
    if let Some(values) = rule.get_mut(peer.list_key()).and_then(Value::as_array_mut) {
        values.retain(|v| v.as_str() != Some(peer.text()));
    }
}

fn rule_is_empty(rule: &Value) -> bool {
    let lists_empty = [
        "cidr_blocks",
        "ipv6_cidr_blocks",
        "prefix_list_ids",
        "security_groups",
    ]
    .iter()
    .all(|k| params::strings(rule.get(*k)).is_empty());
    lists_empty && rule.get("self").and_then(Value::as_bool) != Some(true)
}

/// `InvalidPermission.Duplicate`, worded as EC2 words it.
fn duplicate(perm: &Permission, peer: &Peer) -> ApiError {
    let protocol = match perm.protocol.as_str() {
        "-1" => "ALL".to_owned(),
        p => p.to_ascii_uppercase(),
    };
    ApiError::new(
        "InvalidPermission.Duplicate",
        format!(
            "the specified rule \"peer: {}, {protocol}, from port: {}, to port: {}, ALLOW\" already exists",
            peer.text(),
            perm.from,
            perm.to
        ),
    )
}

/// One `securityGroupRuleSet` item of the response.
fn rule_response(
    ctx: &Ctx<'_>,
    group_id: &str,
    rule_id: &str,
    egress: bool,
    perm: &Permission,
    peer: &Peer,
    description: &str,
) -> Value {
    let mut item = json!({
        "groupOwnerId": ctx.account(),
        "groupId": group_id,
        "securityGroupRuleId": rule_id,
        "isEgress": egress,
        "ipProtocol": perm.protocol,
        "fromPort": if perm.protocol == "-1" { -1 } else { perm.from },
        "toPort": if perm.protocol == "-1" { -1 } else { perm.to },
    });
    let (key, value) = match peer {
        Peer::Cidr(c) => ("cidrIpv4", json!(c)),
        Peer::Ipv6(c) => ("cidrIpv6", json!(c)),
        Peer::PrefixList(p) => ("prefixListId", json!(p)),
        Peer::Group(g) => (
            "referencedGroupInfo",
            json!({"groupId": g, "userId": ctx.account()}),
        ),
    };
    item[key] = value;
    if !description.is_empty() {
        item["description"] = json!(description);
    }
    item
}

/// CreateSecurityGroup: a new group with AWS's default allow-all egress rule.
pub fn create(ctx: &mut Ctx<'_>, params: &Value) -> ApiResult {
    let name = params::string(params, "groupName")?;
    let description = params::string(params, "groupDescription")?;
    let vpc_id = match params::opt_string(params, "vpcId") {
        Some(v) => v.to_owned(),
        None => default_vpc(ctx)?,
    };
    if ctx.find("aws_vpc", "id", &vpc_id).is_none()
        && ctx.find("aws_default_vpc", "id", &vpc_id).is_none()
    {
        return Err(ApiError::new(
            "InvalidVpcID.NotFound",
            format!("The vpc ID '{vpc_id}' does not exist"),
        ));
    }
    let taken = !ctx
        .find_all("aws_security_group", &[("name", name), ("vpc_id", &vpc_id)])
        .is_empty();
    if taken {
        return Err(ApiError::new(
            "InvalidGroup.Duplicate",
            format!("The security group '{name}' already exists for VPC '{vpc_id}'"),
        ));
    }
    let id = ctx.hex_id("sg", 17);
    let arn = ctx.arn("ec2", &format!("security-group/{id}"));
    let tags = super::ec2::tag_specifications(params, "security-group");
    let at = ctx.create(
        "aws_security_group",
        json!({
            "arn": arn,
            "description": description,
            "egress": [{
                "cidr_blocks": ["0.0.0.0/0"], "description": "", "from_port": 0,
                "ipv6_cidr_blocks": [], "prefix_list_ids": [], "protocol": "-1",
                "security_groups": [], "self": false, "to_port": 0
            }],
            "id": id,
            "ingress": [],
            "name": name,
            "name_prefix": "",
            "owner_id": ctx.account(),
            "revoke_rules_on_delete": false,
            "tags": null,
            "tags_all": {},
            "timeouts": null,
            "vpc_id": vpc_id,
        }),
    );
    ctx.add_tags(at, &tags);
    let mut response = ec2_true();
    response["groupId"] = json!(id);
    response["securityGroupArn"] = json!(arn);
    Ok(response)
}

/// The account's default VPC, for groups created without `vpcId`.
fn default_vpc(ctx: &Ctx<'_>) -> Result<String, ApiError> {
    ctx.find("aws_default_vpc", "default", "true")
        .or_else(|| ctx.find("aws_vpc", "default", "true"))
        .map(|at| ctx.attr_str(at, "id"))
        .ok_or_else(|| ApiError::new("VPCIdNotSpecified", "No default VPC for this user"))
}

/// DeleteSecurityGroup: refused while an instance, or another group's rule, uses the group.
pub fn delete(ctx: &mut Ctx<'_>, params: &Value) -> ApiResult {
    let at = group(ctx, params)?;
    let id = ctx.attr_str(at, "id");
    let in_use = ctx.get_all().iter().any(|i| {
        let uses = |key: &str| params::strings(i.attributes.get(key)).contains(&id);
        let referenced = ["ingress", "egress"].iter().any(|k| {
            i.attributes.get("id").and_then(Value::as_str) != Some(id.as_str())
                && list(i.attributes.get(*k))
                    .iter()
                    .any(|r| params::strings(r.get("security_groups")).contains(&id))
        });
        uses("vpc_security_group_ids")
            || uses("security_groups") && i.resource_type != "aws_security_group"
            || referenced
    });
    if in_use {
        return Err(ApiError::new(
            "DependencyViolation",
            format!("resource {id} has a dependent object"),
        ));
    }
    ctx.remove(at);
    let mut response = ec2_true();
    response["groupId"] = json!(id);
    Ok(response)
}
