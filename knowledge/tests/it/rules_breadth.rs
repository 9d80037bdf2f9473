//! Extraction by the rules of the services added for breadth (EKS, ElastiCache, Application
//! Auto Scaling, WAFv2, KMS grants, network ACL entries, S3 configurations), on request and
//! response payloads shaped as CloudTrail records them: the API reference's request shapes
//! with lowerCamelCase keys (REST path parameters beside the body for EKS, query parameters for
//! EC2 and ElastiCache). Every expected value was worked out by hand from the payload.

use knowledge::{FlagLevel, Kind, Missing, TagOp};
use serde_json::{Value, json};

use crate::common;
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

#[test]
fn a_kms_key_for_imported_material_is_an_external_key() {
    let request = json!({
        "origin": "EXTERNAL",
        "keyUsage": "ENCRYPT_DECRYPT",
        "keySpec": "SYMMETRIC_DEFAULT",
        "description": "byok",
        "tags": [{"tagKey": "team", "tagValue": "pay"}]
    });
    let response = json!({"keyMetadata": {"keyId": "0b7fd7dd-7d36-4a64-9d6a-6f1b2d4c9a10", "origin": "EXTERNAL"}});
    let x = extract("kms.amazonaws.com", "CreateKey", request, response);
    assert_eq!(x.rule_id, "kms:CreateKey:external");
    assert_eq!(x.resource_types, ["aws_kms_external_key"]);
    assert_eq!(x.identities(), ["0b7fd7dd-7d36-4a64-9d6a-6f1b2d4c9a10"]);
    assert_eq!(x.value("description"), Some(&json!("byok")));
    assert_eq!(x.value("tags"), Some(&json!({"team": "pay"})));

    let plain = json!({"keyUsage": "ENCRYPT_DECRYPT", "origin": "AWS_KMS"});
    let response = json!({"keyMetadata": {"keyId": "1b7fd7dd-7d36-4a64-9d6a-6f1b2d4c9a10"}});
    let x = extract("kms.amazonaws.com", "CreateKey", plain, response);
    assert_eq!(x.rule_id, "kms:CreateKey");
    assert_eq!(x.resource_types, ["aws_kms_key"]);
}

#[test]
fn a_replica_of_an_external_key_is_told_by_the_response_origin() {
    let request = json!({
        "keyId": "arn:aws:kms:us-east-1:111122223333:key/mrk-1234abcd",
        "replicaRegion": "eu-west-1"
    });
    let external = json!({"replicaKeyMetadata": {"keyId": "mrk-1234abcd", "origin": "EXTERNAL"}});
    let x = extract(
        "kms.amazonaws.com",
        "ReplicateKey",
        request.clone(),
        external,
    );
    assert_eq!(x.resource_types, ["aws_kms_replica_external_key"]);
    assert_eq!(
        x.value("primary_key_arn"),
        Some(&json!(
            "arn:aws:kms:us-east-1:111122223333:key/mrk-1234abcd"
        ))
    );
    let own = json!({"replicaKeyMetadata": {"keyId": "mrk-1234abcd", "origin": "AWS_KMS"}});
    let x = extract("kms.amazonaws.com", "ReplicateKey", request, own);
    assert_eq!(x.resource_types, ["aws_kms_replica_key"]);
}

#[test]
fn imported_key_material_is_hidden_and_its_expiry_read() {
    let request = json!({
        "keyId": "arn:aws:kms:us-east-1:111122223333:key/0b7fd7dd-7d36",
        "importToken": "HIDDEN",
        "encryptedKeyMaterial": "HIDDEN",
        "expirationModel": "KEY_MATERIAL_EXPIRES",
        "validTo": "Jun 1, 2027, 12:00:00 AM"
    });
    let x = extract(
        "kms.amazonaws.com",
        "ImportKeyMaterial",
        request,
        Value::Null,
    );
    assert_eq!(x.identities(), ["0b7fd7dd-7d36"]);
    assert_eq!(
        x.value("valid_to"),
        Some(&json!("Jun 1, 2027, 12:00:00 AM"))
    );
    assert_eq!(x.hidden, ["the imported key material"]);
}

#[test]
fn a_security_group_rule_resource_changed_in_place() {
    let request = json!({"ModifySecurityGroupRulesRequest": {
        "GroupId": "sg-0a1b",
        "SecurityGroupRule": {
            "SecurityGroupRuleId": "sgr-0123456789abcdef0",
            "SecurityGroupRule": {
                "IpProtocol": "tcp", "FromPort": "22", "ToPort": "22",
                "CidrIpv4": "0.0.0.0/0", "Description": "ssh"
            },
            "tag": 1
        }
    }});
    let x = extract(
        "ec2.amazonaws.com",
        "ModifySecurityGroupRules",
        request,
        json!({"ModifySecurityGroupRulesResponse": {"return": true}}),
    );
    assert_eq!(x.identities(), ["sgr-0123456789abcdef0"]);
    assert_eq!(x.value("from_port"), Some(&json!(22)));
    assert_eq!(x.value("to_port"), Some(&json!(22)));
    assert_eq!(x.value("ip_protocol"), Some(&json!("tcp")));
    assert_eq!(x.value("cidr_ipv4"), Some(&json!("0.0.0.0/0")));
    assert_eq!(x.value("description"), Some(&json!("ssh")));
    assert!(x.value("cidr_ipv6").is_none());
    assert_eq!(common::flagged(&x), ["cidr_ipv4"]);
}

#[test]
fn tags_on_a_security_group_rule_or_default_vpc_name_both_possible_types() {
    let request = json!({
        "resourcesSet": {"items": [{"resourceId": "sgr-0abc"}, {"resourceId": "vpc-0def"}]},
        "tagSet": {"items": [{"key": "team", "value": "net"}]}
    });
    let x = extract("ec2.amazonaws.com", "CreateTags", request, Value::Null);
    let types: Vec<&[String]> = x
        .targets
        .iter()
        .map(|t| t.resource_types.as_slice())
        .collect();
    assert_eq!(
        types,
        [
            &[
                "aws_vpc_security_group_ingress_rule".to_owned(),
                "aws_vpc_security_group_egress_rule".to_owned()
            ][..],
            &["aws_vpc".to_owned(), "aws_default_vpc".to_owned()][..],
        ]
    );
}

#[test]
fn a_directory_bucket_is_created_under_its_own_event_source() {
    let request = json!({
        "bucketName": "logs--usw2-az1--x-s3",
        "CreateBucketConfiguration": {
            "Location": {"Type": "AvailabilityZone", "Name": "usw2-az1"},
            "Bucket": {"DataRedundancy": "SingleAvailabilityZone", "Type": "Directory"}
        }
    });
    let x = extract(
        "s3express.amazonaws.com",
        "CreateBucket",
        request,
        Value::Null,
    );
    assert_eq!(x.resource_types, ["aws_s3_directory_bucket"]);
    assert_eq!(x.identities(), ["logs--usw2-az1--x-s3"]);
    assert_eq!(x.value("location.name"), Some(&json!("usw2-az1")));
    assert_eq!(
        x.value("data_redundancy"),
        Some(&json!("SingleAvailabilityZone"))
    );
}

#[test]
fn an_instance_of_a_cluster_is_told_by_its_cluster_identifier() {
    let request = json!({
        "dBInstanceIdentifier": "orders-2",
        "dBClusterIdentifier": "orders",
        "dBInstanceClass": "db.r6g.large",
        "engine": "aurora-postgresql",
        "promotionTier": 1,
        "publiclyAccessible": true
    });
    let x = extract(
        "rds.amazonaws.com",
        "CreateDBInstance",
        request,
        Value::Null,
    );
    assert_eq!(x.rule_id, "rds:CreateDBInstance:cluster");
    assert_eq!(x.resource_types, ["aws_rds_cluster_instance"]);
    assert_eq!(x.value("cluster_identifier"), Some(&json!("orders")));
    assert_eq!(x.value("promotion_tier"), Some(&json!(1)));
    assert_eq!(common::flagged(&x), ["publicly_accessible"]);

    // RDS logs the DBInstance it returns: a member of a cluster names the cluster there.
    let modify = json!({"dBInstanceIdentifier": "orders-2", "dBInstanceClass": "db.r6g.xlarge", "applyImmediately": true});
    let member = json!({"dBInstanceIdentifier": "orders-2", "dBClusterIdentifier": "orders", "dBInstanceClass": "db.r6g.large"});
    let x = extract(
        "rds.amazonaws.com",
        "ModifyDBInstance",
        modify.clone(),
        member.clone(),
    );
    assert_eq!(x.resource_types, ["aws_rds_cluster_instance"]);
    assert_eq!(x.value("instance_class"), Some(&json!("db.r6g.xlarge")));
    let alone = json!({"dBInstanceIdentifier": "orders-2", "dBInstanceClass": "db.r6g.large"});
    let x = extract("rds.amazonaws.com", "ModifyDBInstance", modify, alone);
    assert_eq!(x.resource_types, ["aws_db_instance"]);

    let delete = json!({"dBInstanceIdentifier": "orders-2", "skipFinalSnapshot": true});
    let x = extract("rds.amazonaws.com", "DeleteDBInstance", delete, member);
    assert_eq!(x.rule_id, "rds:DeleteDBInstance:cluster");
}

#[test]
fn bucket_notifications_read_each_kind_of_destination() {
    let request = json!({
        "bucketName": "media-uploads",
        "notification": "",
        "NotificationConfiguration": {
            "xmlns": "http://s3.amazonaws.com/doc/2006-03-01/",
            "QueueConfiguration": {
                "Id": "thumbnails",
                "Queue": "arn:aws:sqs:eu-west-1:123456789012:thumbnails",
                "Event": ["s3:ObjectCreated:Put", "s3:ObjectCreated:Post"],
                "Filter": {"S3Key": {"FilterRule": [
                    {"Name": "prefix", "Value": "uploads/"},
                    {"Name": "suffix", "Value": ".jpg"}
                ]}}
            },
            "CloudFunctionConfiguration": [
                {"Id": "scan", "CloudFunction": "arn:aws:lambda:eu-west-1:123456789012:function:scan",
                 "Event": "s3:ObjectCreated:*"},
                {"Id": "purge", "CloudFunction": "arn:aws:lambda:eu-west-1:123456789012:function:purge",
                 "Event": "s3:ObjectRemoved:*",
                 "Filter": {"S3Key": {"FilterRule": {"Name": "Prefix", "Value": "tmp/"}}}}
            ]
        }
    });
    let x = extract(
        "s3.amazonaws.com",
        "PutBucketNotification",
        request,
        Value::Null,
    );
    assert_eq!(x.resource_types, ["aws_s3_bucket_notification"]);
    assert_eq!(x.kind, knowledge::Kind::AddBlock);
    assert_eq!(x.value("eventbridge"), Some(&json!(false)));
    let names: Vec<(&str, usize)> = x
        .blocks
        .iter()
        .map(|b| (b.name.as_str(), b.items.len()))
        .collect();
    assert_eq!(names, [("queue", 1), ("topic", 0), ("lambda_function", 2)]);
    let queue = &x.blocks[0].items[0];
    assert_eq!(
        queue["queue_arn"],
        json!("arn:aws:sqs:eu-west-1:123456789012:thumbnails")
    );
    assert_eq!(
        queue["events"],
        json!(["s3:ObjectCreated:Post", "s3:ObjectCreated:Put"])
    );
    assert_eq!(queue["filter_prefix"], json!("uploads/"));
    assert_eq!(queue["filter_suffix"], json!(".jpg"));
    let purge = &x.blocks[2].items[1];
    assert_eq!(purge["events"], json!(["s3:ObjectRemoved:*"]));
    assert_eq!(
        purge["filter_prefix"],
        json!("tmp/"),
        "S3 takes the rule name in either case"
    );
    assert!(x.blocks.iter().all(|b| b.key.as_deref() == Some("id")));
}

#[test]
fn an_empty_notification_configuration_removes_it_and_eventbridge_alone_keeps_it() {
    let empty = json!({"bucketName": "media-uploads", "notification": "",
        "NotificationConfiguration": {"xmlns": "http://s3.amazonaws.com/doc/2006-03-01/"}});
    let x = extract(
        "s3.amazonaws.com",
        "PutBucketNotification",
        empty,
        Value::Null,
    );
    assert_eq!(x.kind, knowledge::Kind::Delete);
    let eventbridge = json!({"bucketName": "media-uploads", "notification": "",
        "NotificationConfiguration": {"EventBridgeConfiguration": ""}});
    let x = extract(
        "s3.amazonaws.com",
        "PutBucketNotification",
        eventbridge,
        Value::Null,
    );
    assert_eq!(x.kind, knowledge::Kind::AddBlock);
    assert_eq!(x.value("eventbridge"), Some(&json!(true)));
}

#[test]
fn eks_logging_names_the_types_it_turns_on_and_off() {
    let request = json!({"name": "ledger", "logging": {"clusterLogging": [
        {"types": ["scheduler", "controllerManager"], "enabled": true},
        {"types": ["audit"], "enabled": false}
    ]}});
    let x = extract(
        "eks.amazonaws.com",
        "UpdateClusterConfig",
        request,
        Value::Null,
    );
    let members: Vec<(&str, knowledge::rules::Members, &[Value])> = x
        .members
        .iter()
        .map(|m| (m.attribute.as_str(), m.op, m.values.as_slice()))
        .collect();
    assert_eq!(
        members,
        [
            (
                "enabled_cluster_log_types",
                knowledge::rules::Members::Add,
                &[json!("controllerManager"), json!("scheduler")][..]
            ),
            (
                "enabled_cluster_log_types",
                knowledge::rules::Members::Remove,
                &[json!("audit")][..]
            ),
        ]
    );
    assert!(
        x.value("enabled_cluster_log_types").is_none(),
        "not a whole set"
    );
}
