//! Changes to platform services: EKS clusters, node groups, add-ons and access entries,
//! ElastiCache replication and subnet groups, network ACL rules and VPC flow logs.

use super::change::{Change, Kind, block, int, next_size, req, reworded, text};
use crate::sim::Request;
use reconciler::terraform::state::Instance;
use serde_json::{Value, json};

/// The changes that apply to one instance.
pub fn changes(instance: &Instance) -> Vec<Change> {
    match instance.resource_type.as_str() {
        "aws_eks_cluster" => cluster(instance),
        "aws_eks_node_group" => node_group(instance).into_iter().collect(),
        "aws_eks_addon" => addon(instance),
        "aws_eks_access_entry" => access_entry(instance),
        "aws_elasticache_replication_group" => cache(instance),
        "aws_elasticache_subnet_group" => vec![cache_subnets(instance)],
        "aws_network_acl_rule" => acl_rule(instance),
        "aws_flow_log" => vec![
            Change::modify(
                "flow-log-delete",
                instance,
                format!("deleted flow log {}", text(instance, "id")),
                &[],
                vec![req(
                    "ec2.amazonaws.com",
                    "DeleteFlowLogs",
                    json!({"DeleteFlowLogsRequest": {"FlowLogId": {"content": text(instance, "id"), "tag": 1}}}),
                )],
            )
            .kind(Kind::Delete)
            // Logging removed: retrace holds it for a person (a security signal fires).
            .risky(),
        ],
        _ => Vec::new(),
    }
}

fn eks(name: &str, params: Value) -> Request {
    req("eks.amazonaws.com", name, params)
}

/// The next Kubernetes minor version (`1.30` → `1.31`).
fn next_minor(version: &str) -> Option<String> {
    let (major, minor) = version.split_once('.')?;
    Some(format!("{major}.{}", minor.parse::<u32>().ok()? + 1))
}

/// A cluster upgraded one minor version; more control plane log types; and, risky, its API
/// endpoint opened to the internet.
fn cluster(instance: &Instance) -> Vec<Change> {
    let name = text(instance, "name");
    let mut out = Vec::new();
    if let Some(next) = next_minor(text(instance, "version")) {
        out.push(Change::modify(
            "eks-upgrade",
            instance,
            format!("upgraded EKS cluster {name} to Kubernetes {next}"),
            &["version"],
            vec![eks(
                "UpdateClusterVersion",
                json!({"name": name, "version": next}),
            )],
        ));
    }
    let logged: Vec<&str> = instance
        .attributes
        .get("enabled_cluster_log_types")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let missing: Vec<&str> = [
        "api",
        "audit",
        "authenticator",
        "controllerManager",
        "scheduler",
    ]
    .into_iter()
    .filter(|t| !logged.contains(t))
    .collect();
    if !missing.is_empty() {
        let logging = |enabled: bool| {
            eks(
                "UpdateClusterConfig",
                json!({"logging": {"clusterLogging": [{"enabled": enabled, "types": missing}]}, "name": name}),
            )
        };
        out.push(
            Change::modify(
                "eks-logging",
                instance,
                format!(
                    "turned on {} logs of EKS cluster {name}",
                    missing.join(", ")
                ),
                &["enabled_cluster_log_types"],
                vec![logging(true)],
            )
            .undo(vec![logging(false)]),
        );
    }
    let vpc = block(instance, "vpc_config");
    if vpc["endpoint_public_access"] == false {
        out.push(
            Change::modify(
                "eks-public-endpoint",
                instance,
                format!("opened the API endpoint of EKS cluster {name} to the internet"),
                &["vpc_config"],
                vec![eks(
                    "UpdateClusterConfig",
                    json!({"name": name, "resourcesVpcConfig": {"endpointPublicAccess": true, "publicAccessCidrs": ["0.0.0.0/0"]}}),
                )],
            )
            .risky(),
        );
    }
    out
}

/// A node group allowed two more nodes.
fn node_group(instance: &Instance) -> Option<Change> {
    let scaling = block(instance, "scaling_config");
    let max = scaling.get("max_size")?.as_i64()?;
    let (cluster, name) = (
        text(instance, "cluster_name"),
        text(instance, "node_group_name"),
    );
    let call = |m: i64| {
        eks(
            "UpdateNodegroupConfig",
            json!({"clusterName": cluster, "nodegroupName": name, "scalingConfig": {"maxSize": m}}),
        )
    };
    Some(
        Change::modify(
            "eks-nodegroup-max",
            instance,
            format!(
                "raised the maximum size of node group {name} to {}",
                max + 2
            ),
            &["scaling_config.0.max_size"],
            vec![call(max + 2)],
        )
        .undo(vec![call(max)]),
    )
}

/// The next build of an add-on version (`v1.18.3-eksbuild.1` → `v1.18.3-eksbuild.2`).
fn next_build(version: &str) -> Option<String> {
    let (base, build) = version.rsplit_once("-eksbuild.")?;
    Some(format!(
        "{base}-eksbuild.{}",
        build.parse::<u32>().ok()? + 1
    ))
}

/// An add-on updated to its next build, and an add-on removed.
fn addon(instance: &Instance) -> Vec<Change> {
    let (cluster, name) = (text(instance, "cluster_name"), text(instance, "addon_name"));
    let current = text(instance, "addon_version");
    let mut out = vec![
        Change::modify(
            "eks-addon-delete",
            instance,
            format!("removed add-on {name} from cluster {cluster}"),
            &[],
            vec![eks(
                "DeleteAddon",
                json!({"clusterName": cluster, "addonName": name}),
            )],
        )
        .kind(Kind::Delete),
    ];
    if let Some(next) = next_build(current) {
        let call = |v: &str| {
            eks(
                "UpdateAddon",
                json!({"clusterName": cluster, "addonName": name, "addonVersion": v, "resolveConflicts": "OVERWRITE"}),
            )
        };
        out.push(Change::modify(
            "eks-addon-version",
            instance,
            format!("updated add-on {name} to {next}"),
            &["addon_version"],
            vec![call(&next)],
        ));
    }
    out
}

/// An access entry put in a read-only Kubernetes group, and an access entry removed.
fn access_entry(instance: &Instance) -> Vec<Change> {
    let (cluster, principal) = (
        text(instance, "cluster_name"),
        text(instance, "principal_arn"),
    );
    let groups: Vec<Value> = instance
        .attributes
        .get("kubernetes_groups")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut out = vec![
        Change::modify(
            "eks-access-delete",
            instance,
            format!("removed the cluster access of {principal}"),
            &[],
            vec![eks(
                "DeleteAccessEntry",
                json!({"clusterName": cluster, "principalArn": principal}),
            )],
        )
        .kind(Kind::Delete),
    ];
    if !groups.iter().any(|g| g == "view-only") {
        let mut more = groups.clone();
        more.push(json!("view-only"));
        let call = |g: &[Value]| {
            eks(
                "UpdateAccessEntry",
                json!({"clusterName": cluster, "principalArn": principal, "kubernetesGroups": g}),
            )
        };
        out.push(Change::modify(
            "eks-access-groups",
            instance,
            format!("added {principal} to Kubernetes group view-only"),
            &["kubernetes_groups"],
            vec![call(&more)],
        ));
    }
    out
}

fn modify_cache(id: &str, params: Value) -> Request {
    let mut p = json!({"replicationGroupId": id, "applyImmediately": true});
    if let (Some(map), Value::Object(extra)) = (p.as_object_mut(), params) {
        map.extend(extra);
    }
    req("elasticache.amazonaws.com", "ModifyReplicationGroup", p)
}

/// A cache's snapshot retention doubled and its nodes one size up.
fn cache(instance: &Instance) -> Vec<Change> {
    let id = text(instance, "replication_group_id");
    let mut out = Vec::new();
    if let Some(days) = int(instance, "snapshot_retention_limit").filter(|d| *d > 0) {
        let new = (days * 2).min(35);
        let call = |d: i64| modify_cache(id, json!({"snapshotRetentionLimit": d}));
        out.push(
            Change::modify(
                "cache-snapshots",
                instance,
                format!("kept {new} days of snapshots of cache {id} (was {days})"),
                &["snapshot_retention_limit"],
                vec![call(new)],
            )
            .undo(vec![call(days)]),
        );
    }
    let current = text(instance, "node_type");
    if let Some(next) = next_size(current) {
        let call = |t: &str| modify_cache(id, json!({"cacheNodeType": t}));
        out.push(
            Change::modify(
                "cache-node-type",
                instance,
                format!("resized cache {id} to {next}"),
                &["node_type"],
                vec![call(&next)],
            )
            .undo(vec![call(current)]),
        );
    }
    out
}

/// A cache subnet group's description reworded.
fn cache_subnets(instance: &Instance) -> Change {
    let name = text(instance, "name");
    let subnets = instance.attributes.get("subnet_ids").cloned();
    reworded(
        "cache-subnet-description",
        "cache subnet group",
        instance,
        |d| {
            req(
                "elasticache.amazonaws.com",
                "ModifyCacheSubnetGroup",
                json!({"cacheSubnetGroupName": name, "cacheSubnetGroupDescription": d, "subnetIds": subnets}),
            )
        },
    )
}

/// A network ACL entry narrowed to the upper half of its port range, or (for an entry
/// without ports) removed.
fn acl_rule(instance: &Instance) -> Vec<Change> {
    let acl = text(instance, "network_acl_id");
    let number = int(instance, "rule_number").unwrap_or(0);
    let egress = instance
        .attributes
        .get("egress")
        .cloned()
        .unwrap_or(json!(false));
    let from = int(instance, "from_port");
    let to = int(instance, "to_port");
    let (Some(from), Some(to)) = (from, to) else {
        return vec![
            Change::modify(
                "nacl-entry-delete",
                instance,
                format!("deleted entry {number} of network ACL {acl}"),
                &[],
                vec![req(
                    "ec2.amazonaws.com",
                    "DeleteNetworkAclEntry",
                    json!({"networkAclId": acl, "ruleNumber": number, "egress": egress}),
                )],
            )
            .kind(Kind::Delete),
        ];
    };
    let low = from + (to - from) / 2;
    let call = |f: i64| {
        req(
            "ec2.amazonaws.com",
            "ReplaceNetworkAclEntry",
            json!({"networkAclId": acl, "ruleNumber": number, "egress": egress,
                "aclProtocol": text(instance, "protocol"), "ruleAction": text(instance, "rule_action"),
                "cidrBlock": text(instance, "cidr_block"), "portRange": {"from": f, "to": to}}),
        )
    };
    vec![
        Change::modify(
            "nacl-entry-ports",
            instance,
            format!("narrowed entry {number} of network ACL {acl} to ports {low}-{to}"),
            &["from_port"],
            vec![call(low)],
        )
        .undo(vec![call(from)]),
    ]
}
