//! Extraction by the rules of the services added for breadth (EKS, ElastiCache, Application
//! Auto Scaling, WAFv2, KMS grants, network ACL entries, S3 configurations), on request and
//! response payloads shaped as CloudTrail records them: the API reference's request shapes
//! with lowerCamelCase keys (REST path parameters beside the body for EKS, query parameters for
//! EC2 and ElastiCache). Every expected value was worked out by hand from the payload.

use knowledge::{FlagLevel, Kind, Missing, TagOp};
use serde_json::{Value, json};

mod common;
use common::extract;

#[test]
fn eks_create_cluster_reads_the_vpc_config() {
    let request = json!({
        "name": "prod",
        "version": "1.31",
        "roleArn": "arn:aws:iam::111122223333:role/eks-cluster",
        "resourcesVpcConfig": {
            "subnetIds": ["subnet-0b2", "subnet-0a1"],
            "securityGroupIds": ["sg-0c3"],
            "endpointPublicAccess": true,
            "endpointPrivateAccess": false
        },
        "tags": {"team": "platform"},
        "clientRequestToken": "6b5c1f6e-1111-2222-3333-444455556666"
    });
    let x = extract("eks.amazonaws.com", "CreateCluster", request, Value::Null);
    assert_eq!(x.kind, Kind::Create);
    assert_eq!(x.identities(), ["prod"]);
    assert_eq!(x.value("version"), Some(&json!("1.31")));
    assert_eq!(
        x.value("vpc_config.subnet_ids"),
        Some(&json!(["subnet-0a1", "subnet-0b2"]))
    );
    assert_eq!(
        x.value("vpc_config.endpoint_public_access"),
        Some(&json!(true))
    );
    assert_eq!(x.value("tags"), Some(&json!({"team": "platform"})));
    assert_eq!(x.value("vpc_config.public_access_cidrs"), None);
}

#[test]
fn eks_endpoint_opened_to_the_internet_is_held() {
    let request = json!({
        "name": "prod",
        "resourcesVpcConfig": {"endpointPublicAccess": true, "publicAccessCidrs": ["0.0.0.0/0"]}
    });
    let x = extract(
        "eks.amazonaws.com",
        "UpdateClusterConfig",
        request,
        Value::Null,
    );
    assert_eq!(x.identities(), ["prod"]);
    assert_eq!(
        x.value("vpc_config.public_access_cidrs"),
        Some(&json!(["0.0.0.0/0"]))
    );
    assert_eq!(x.flags.len(), 1);
    assert_eq!(x.flags[0].level, FlagLevel::Hold);

    let narrow =
        json!({"name": "prod", "resourcesVpcConfig": {"publicAccessCidrs": ["203.0.113.0/24"]}});
    let x = extract(
        "eks.amazonaws.com",
        "UpdateClusterConfig",
        narrow,
        Value::Null,
    );
    assert!(x.flags.is_empty());
}

#[test]
fn eks_node_group_and_tags_use_terraform_ids() {
    let request = json!({
        "clusterName": "prod", "nodegroupName": "general",
        "scalingConfig": {"minSize": 2, "maxSize": 6, "desiredSize": 3}
    });
    let x = extract(
        "eks.amazonaws.com",
        "UpdateNodegroupConfig",
        request,
        Value::Null,
    );
    assert_eq!(x.identities(), ["prod:general"]);
    assert_eq!(x.value("scaling_config.max_size"), Some(&json!(6)));

    let request = json!({
        "resourceArn": "arn:aws:eks:eu-west-1:111122223333:cluster/prod",
        "tags": {"cost-centre": "42"}
    });
    let x = extract("eks.amazonaws.com", "TagResource", request, Value::Null);
    assert_eq!(
        x.identities(),
        ["arn:aws:eks:eu-west-1:111122223333:cluster/prod"]
    );
    let tags = x.tags.expect("tags");
    assert_eq!(tags.op, TagOp::Merge);
}

#[test]
fn elasticache_replication_group_is_found_by_its_lower_case_id() {
    let request = json!({
        "replicationGroupId": "Sessions",
        "replicationGroupDescription": "user sessions",
        "cacheNodeType": "cache.t4g.small",
        "engine": "redis",
        "numCacheClusters": 2,
        "automaticFailoverEnabled": true,
        "transitEncryptionEnabled": true,
        "cacheSubnetGroupName": "cache-private"
    });
    let x = extract(
        "elasticache.amazonaws.com",
        "CreateReplicationGroup",
        request,
        Value::Null,
    );
    assert_eq!(
        x.identities(),
        ["sessions"],
        "ElastiCache stores ids in lower case"
    );
    assert_eq!(x.value("num_cache_clusters"), Some(&json!(2)));
    assert_eq!(x.value("subnet_group_name"), Some(&json!("cache-private")));

    let off = json!({"replicationGroupId": "sessions", "transitEncryptionEnabled": false});
    let x = extract(
        "elasticache.amazonaws.com",
        "ModifyReplicationGroup",
        off,
        Value::Null,
    );
    assert_eq!(x.flags.len(), 1);
    assert_eq!(x.flags[0].field, "transit_encryption_enabled");
}

#[test]
fn a_scalable_target_registered_out_of_band_is_a_creation_when_missing() {
    let request = json!({
        "serviceNamespace": "ecs",
        "resourceId": "service/prod/web",
        "scalableDimension": "ecs:service:DesiredCount",
        "minCapacity": 2,
        "maxCapacity": 10
    });
    let x = extract(
        "application-autoscaling.amazonaws.com",
        "RegisterScalableTarget",
        request,
        Value::Null,
    );
    assert_eq!(x.missing, Some(Missing::Create));
    assert_eq!(
        x.identities(),
        ["ecs/ecs:service:DesiredCount/service/prod/web"]
    );
    assert_eq!(x.value("max_capacity"), Some(&json!(10)));
}

#[test]
fn waf_association_identity_is_terraforms_comma_joined_id() {
    let request = json!({
        "webACLArn": "arn:aws:wafv2:eu-west-1:111122223333:regional/webacl/edge/1a2b",
        "resourceArn": "arn:aws:elasticloadbalancing:eu-west-1:111122223333:loadbalancer/app/web/9f8e"
    });
    let x = extract(
        "wafv2.amazonaws.com",
        "AssociateWebACL",
        request,
        Value::Null,
    );
    assert_eq!(x.kind, Kind::Associate);
    assert_eq!(
        x.identities(),
        [
            "arn:aws:wafv2:eu-west-1:111122223333:regional/webacl/edge/1a2b,arn:aws:elasticloadbalancing:eu-west-1:111122223333:loadbalancer/app/web/9f8e"
        ]
    );
}

#[test]
fn kms_grant_identity_joins_the_key_id_and_the_grant_id() {
    let request = json!({
        "keyId": "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab",
        "granteePrincipal": "arn:aws:iam::111122223333:role/app",
        "operations": ["Encrypt", "Decrypt", "Decrypt"]
    });
    let response = json!({"grantId": "0c237476b39f8bc44e45212e08498fbe3151305030726c0590dd8d3e9f3d6a60", "grantToken": "AQpAM2..."});
    let x = extract("kms.amazonaws.com", "CreateGrant", request, response);
    assert_eq!(
        x.identities(),
        [
            "1234abcd-12ab-34cd-56ef-1234567890ab:0c237476b39f8bc44e45212e08498fbe3151305030726c0590dd8d3e9f3d6a60"
        ]
    );
    assert_eq!(x.value("operations"), Some(&json!(["Decrypt", "Encrypt"])));
}

#[test]
fn network_acl_entry_reads_the_query_api_shape() {
    let request = json!({
        "networkAclId": "acl-0f1e",
        "ruleNumber": 110,
        "egress": false,
        "ruleAction": "allow",
        "aclProtocol": "6",
        "cidrBlock": "0.0.0.0/0",
        "portRange": {"from": 22, "to": 22}
    });
    let x = extract(
        "ec2.amazonaws.com",
        "CreateNetworkAclEntry",
        request,
        json!({"_return": true}),
    );
    assert_eq!(x.identities(), ["acl-0f1e/110/false"]);
    assert_eq!(x.value("protocol"), Some(&json!("6")));
    assert_eq!(x.value("from_port"), Some(&json!(22)));
    assert_eq!(x.value("egress"), Some(&json!(false)));
    assert_eq!(x.flags.len(), 1);
    assert_eq!(x.flags[0].level, FlagLevel::Warn);
}

#[test]
fn s3_inventory_is_keyed_by_bucket_and_configuration_id() {
    let request = json!({
        "bucketName": "logs-archive",
        "Host": "logs-archive.s3.eu-west-1.amazonaws.com",
        "inventory": "",
        "id": "weekly",
        "InventoryConfiguration": {
            "xmlns": "http://s3.amazonaws.com/doc/2006-03-01/",
            "Id": "weekly",
            "IsEnabled": "true",
            "IncludedObjectVersions": "Current",
            "Schedule": {"Frequency": "Weekly"}
        }
    });
    let x = extract(
        "s3.amazonaws.com",
        "PutBucketInventoryConfiguration",
        request,
        Value::Null,
    );
    assert_eq!(x.identities(), ["logs-archive:weekly"]);
    assert_eq!(x.missing, Some(Missing::Create));
    assert_eq!(x.value("enabled"), Some(&json!(true)));
    assert_eq!(x.value("schedule.frequency"), Some(&json!("Weekly")));
}
