//! Extraction by the rules of CloudFront, Step Functions, EFS, Cognito, Kinesis, Firehose,
//! OpenSearch, AWS Config, EventBridge, ACM and API Gateway REST APIs, on payloads shaped as
//! CloudTrail records them: the API reference's request members in lowerCamelCase (REST path
//! parameters beside the body; CloudFront's XML body under its root element with lists as
//! `{quantity, items}`, as in AWS's sample UpdateDistribution record). Every expected value
//! was worked out by hand from the payload and the provider's attribute for each member.

use knowledge::{Kind, Missing, TagOp};
use serde_json::{Value, json};

use crate::common;
use common::{extract, flagged};

#[test]
fn cloudfront_distribution_update_create_and_tags() {
    let request = json!({
        "id": "EDFDVBD6EXAMPLE",
        "ifMatch": "E1RTLUR9YES76O",
        "distributionConfig": {
            "aliases": {"quantity": 2, "items": ["www.example.com", "example.com"]},
            "defaultRootObject": "index.html",
            "priceClass": "PriceClass_100",
            "isIPV6Enabled": true,
            "enabled": false,
            "webACLId": "",
            "comment": "HIDDEN_DUE_TO_SECURITY_REASONS",
            "viewerCertificate": {"minimumProtocolVersion": "TLSv1.2_2021", "sSLSupportMethod": "sni-only"},
            "defaultCacheBehavior": {"targetOriginId": "s3-site", "viewerProtocolPolicy": "allow-all",
                "allowedMethods": {"quantity": 2, "items": ["HEAD", "GET"]}}
        }
    });
    let x = extract(
        "cloudfront.amazonaws.com",
        "UpdateDistribution",
        request,
        Value::Null,
    );
    assert_eq!(x.kind, Kind::Update);
    assert_eq!(x.identities(), ["EDFDVBD6EXAMPLE"]);
    assert_eq!(x.value("enabled"), Some(&json!(false)));
    assert_eq!(
        x.value("aliases"),
        Some(&json!(["example.com", "www.example.com"]))
    );
    assert_eq!(
        x.value("default_cache_behavior.allowed_methods"),
        Some(&json!(["GET", "HEAD"]))
    );
    assert_eq!(
        x.value("viewer_certificate.ssl_support_method"),
        Some(&json!("sni-only"))
    );
    assert_eq!(x.value("comment"), None, "CloudTrail hides the comment");
    // Both flags test the state's current value (`replaces`): the extraction carries them.
    assert_eq!(
        flagged(&x),
        [
            "web_acl_id",
            "default_cache_behavior.viewer_protocol_policy"
        ]
    );

    let x = extract(
        "cloudfront.amazonaws.com",
        "CreateDistribution",
        json!({"distributionConfig": {"enabled": true, "priceClass": "PriceClass_All"}}),
        json!({"distribution": {"id": "E2NEW", "aRN": "arn:aws:cloudfront::111122223333:distribution/E2NEW"}}),
    );
    assert_eq!((x.kind, x.identities()), (Kind::Create, vec!["E2NEW"]));

    let x = extract(
        "cloudfront.amazonaws.com",
        "TagResource",
        json!({"resource": "arn:aws:cloudfront::111122223333:distribution/E2NEW",
               "tags": {"items": [{"key": "team", "value": "web"}]}}),
        Value::Null,
    );
    let tags = x.tags.expect("tags");
    assert_eq!(tags.op, TagOp::Merge);
    assert_eq!(tags.added.get("team").map(String::as_str), Some("web"));
}

#[test]
fn api_gateway_rest_methods_are_found_by_api_resource_and_method() {
    let x = extract(
        "apigateway.amazonaws.com",
        "UpdateMethod",
        json!({"restApiId": "a1b2c3", "resourceId": "r9", "httpMethod": "POST",
               "patchOperations": [{"op": "replace", "path": "/authorizationType", "value": "NONE"},
                                   {"op": "replace", "path": "/apiKeyRequired", "value": "false"}]}),
        Value::Null,
    );
    assert_eq!(x.rule_id, "apigateway:UpdateMethod");
    assert_eq!(x.identities(), ["a1b2c3/r9/POST"]);
    assert_eq!(x.value("authorization"), Some(&json!("NONE")));
    assert_eq!(x.value("api_key_required"), Some(&json!(false)));
    assert_eq!(flagged(&x), ["authorization", "api_key_required"]);

    let x = extract(
        "apigateway.amazonaws.com",
        "CreateDeployment",
        json!({"restApiId": "a1b2c3", "description": "release 42"}),
        json!({"id": "dep7", "createdDate": "Mar 1, 2025 10:00:00 AM"}),
    );
    assert_eq!((x.kind, x.identities()), (Kind::Create, vec!["dep7"]));
    assert_eq!(x.value("rest_api_id"), Some(&json!("a1b2c3")));

    let x = extract(
        "apigateway.amazonaws.com",
        "DeleteStage",
        json!({"restApiId": "a1b2c3", "stageName": "prod"}),
        Value::Null,
    );
    assert_eq!(
        (x.kind, x.rule_id.as_str()),
        (Kind::Delete, "apigateway:DeleteStage")
    );
    assert_eq!(x.identities(), ["a1b2c3/prod"]);
}

#[test]
fn step_functions_update_keeps_the_definition_out() {
    let x = extract(
        "states.amazonaws.com",
        "UpdateStateMachine",
        json!({"stateMachineArn": "arn:aws:states:eu-west-1:111122223333:stateMachine:orders",
               "definition": "HIDDEN_DUE_TO_SECURITY_REASONS",
               "loggingConfiguration": {"level": "OFF", "includeExecutionData": false}}),
        Value::Null,
    );
    assert_eq!(
        x.identities(),
        ["arn:aws:states:eu-west-1:111122223333:stateMachine:orders"]
    );
    assert_eq!(x.value("logging_configuration.level"), Some(&json!("OFF")));
    assert_eq!(x.hidden, ["the state machine's definition"]);
    assert_eq!(flagged(&x), ["logging_configuration.level"]);

    let x = extract(
        "states.amazonaws.com",
        "CreateActivity",
        json!({"name": "approve", "tags": [{"key": "team", "value": "ops"}]}),
        json!({"activityArn": "arn:aws:states:eu-west-1:111122223333:activity:approve"}),
    );
    assert_eq!(x.kind, Kind::Create);
    assert_eq!(x.value("tags"), Some(&json!({"team": "ops"})));
}

#[test]
fn efs_policies_and_mount_targets() {
    let x = extract(
        "elasticfilesystem.amazonaws.com",
        "PutBackupPolicy",
        json!({"fileSystemId": "fs-0a1", "backupPolicy": {"status": "DISABLED"}}),
        Value::Null,
    );
    assert_eq!(x.missing, Some(Missing::Create));
    assert_eq!(x.identities(), ["fs-0a1"]);
    assert_eq!(x.value("backup_policy.status"), Some(&json!("DISABLED")));
    assert_eq!(flagged(&x), ["backup_policy.status"]);

    let x = extract(
        "elasticfilesystem.amazonaws.com",
        "PutLifecycleConfiguration",
        json!({"fileSystemId": "fs-0a1", "lifecyclePolicies": [
            {"transitionToIA": "AFTER_30_DAYS"}, {"transitionToPrimaryStorageClass": "AFTER_1_ACCESS"}]}),
        Value::Null,
    );
    assert_eq!(
        x.value("lifecycle_policy.transition_to_ia"),
        Some(&json!("AFTER_30_DAYS"))
    );
    assert_eq!(
        x.value("lifecycle_policy.transition_to_primary_storage_class"),
        Some(&json!("AFTER_1_ACCESS"))
    );

    let x = extract(
        "elasticfilesystem.amazonaws.com",
        "ModifyMountTargetSecurityGroups",
        json!({"mountTargetId": "fsmt-0b2", "securityGroups": ["sg-2", "sg-1"]}),
        Value::Null,
    );
    assert_eq!(x.value("security_groups"), Some(&json!(["sg-1", "sg-2"])));

    let x = extract(
        "elasticfilesystem.amazonaws.com",
        "UntagResource",
        json!({"resourceId": "fsap-0c3", "tagKeys": ["old"]}),
        Value::Null,
    );
    assert_eq!(x.tags.expect("tags").removed, ["old"]);
}

#[test]
fn cognito_pools_opened_are_flagged() {
    let x = extract(
        "cognito-idp.amazonaws.com",
        "UpdateUserPool",
        json!({"userPoolId": "eu-west-1_AbC123", "mfaConfiguration": "OFF",
               "adminCreateUserConfig": {"allowAdminCreateUserOnly": false},
               "policies": {"passwordPolicy": {"minimumLength": 8}}}),
        Value::Null,
    );
    assert_eq!(x.identities(), ["eu-west-1_AbC123"]);
    assert_eq!(x.value("password_policy.minimum_length"), Some(&json!(8)));
    assert_eq!(
        flagged(&x),
        [
            "mfa_configuration",
            "admin_create_user_config.allow_admin_create_user_only"
        ]
    );

    let x = extract(
        "cognito-identity.amazonaws.com",
        "UpdateIdentityPool",
        json!({"identityPoolId": "eu-west-1:1111-2222", "identityPoolName": "app",
               "allowUnauthenticatedIdentities": true}),
        Value::Null,
    );
    assert_eq!(x.identities(), ["eu-west-1:1111-2222"]);
    assert_eq!(flagged(&x), ["allow_unauthenticated_identities"]);
}

#[test]
fn kinesis_and_firehose_streams() {
    let x = extract(
        "kinesis.amazonaws.com",
        "IncreaseStreamRetentionPeriod",
        json!({"streamName": "clicks", "retentionPeriodHours": 48}),
        Value::Null,
    );
    assert_eq!(
        (x.identities(), x.value("retention_period")),
        (vec!["clicks"], Some(&json!(48)))
    );

    let x = extract(
        "kinesis.amazonaws.com",
        "StopStreamEncryption",
        json!({"streamARN": "arn:aws:kinesis:eu-west-1:111122223333:stream/clicks",
               "encryptionType": "KMS", "keyId": "alias/aws/kinesis"}),
        Value::Null,
    );
    assert_eq!(
        x.identities(),
        ["arn:aws:kinesis:eu-west-1:111122223333:stream/clicks"]
    );
    assert_eq!(x.value("encryption_type"), Some(&json!("NONE")));
    assert_eq!(flagged(&x), ["encryption_type"]);

    let x = extract(
        "firehose.amazonaws.com",
        "TagDeliveryStream",
        json!({"deliveryStreamName": "logs", "tags": [{"key": "env", "value": "prod"}]}),
        Value::Null,
    );
    assert_eq!(x.identities(), ["logs"]);
    assert_eq!(
        x.tags.expect("tags").added.get("env").map(String::as_str),
        Some("prod")
    );
}

#[test]
fn opensearch_config_events_and_acm() {
    let x = extract(
        "es.amazonaws.com",
        "UpdateDomainConfig",
        json!({"domainName": "search", "clusterConfig": {"instanceCount": 3},
               "domainEndpointOptions": {"enforceHTTPS": false}}),
        Value::Null,
    );
    assert_eq!(x.identities(), ["search"]);
    assert_eq!(x.value("cluster_config.instance_count"), Some(&json!(3)));
    assert_eq!(flagged(&x), ["domain_endpoint_options.enforce_https"]);

    let x = extract(
        "config.amazonaws.com",
        "StopConfigurationRecorder",
        json!({"configurationRecorderName": "default"}),
        Value::Null,
    );
    assert_eq!(
        (x.identities(), x.value("is_enabled")),
        (vec!["default"], Some(&json!(false)))
    );

    let x = extract(
        "config.amazonaws.com",
        "PutDeliveryChannel",
        json!({"deliveryChannel": {"name": "default", "s3BucketName": "other-bucket"}}),
        Value::Null,
    );
    assert_eq!(x.missing, Some(Missing::Create));
    assert_eq!(x.value("s3_bucket_name"), Some(&json!("other-bucket")));

    let x = extract(
        "events.amazonaws.com",
        "RemoveTargets",
        json!({"rule": "nightly", "ids": ["lambda", "queue"]}),
        Value::Null,
    );
    assert_eq!(
        (x.kind, x.identities()),
        (Kind::Delete, vec!["nightly/lambda", "nightly/queue"])
    );

    let x = extract(
        "acm.amazonaws.com",
        "RemoveTagsFromCertificate",
        json!({"certificateArn": "arn:aws:acm:eu-west-1:111122223333:certificate/abc",
               "tags": [{"key": "owner", "value": "web"}]}),
        Value::Null,
    );
    assert_eq!(x.tags.expect("tags").removed, ["owner"]);
}

#[test]
fn s3_object_writes_and_legal_holds() {
    let x = extract(
        "s3.amazonaws.com",
        "PutObject",
        json!({"bucketName": "site-assets", "key": "index.html", "Host": "site-assets.s3.amazonaws.com"}),
        Value::Null,
    );
    assert_eq!(x.missing, Some(Missing::Create));
    assert_eq!(x.identities(), ["site-assets/index.html"]);
    assert_eq!(x.hidden, ["the object's content"]);

    let x = extract(
        "s3.amazonaws.com",
        "PutObjectLegalHold",
        json!({"bucketName": "records", "key": "2024/ledger.csv", "legal-hold": "",
               "LegalHold": {"Status": "OFF", "xmlns": "http://s3.amazonaws.com/doc/2006-03-01/"}}),
        Value::Null,
    );
    assert_eq!(
        x.value("object_lock_legal_hold_status"),
        Some(&json!("OFF"))
    );
    assert_eq!(flagged(&x), ["object_lock_legal_hold_status"]);

    let x = extract(
        "s3.amazonaws.com",
        "PutObjectTagging",
        json!({"bucketName": "records", "key": "a.csv", "tagging": "",
               "Tagging": {"TagSet": {"Tag": {"Key": "class", "Value": "public"}}}}),
        Value::Null,
    );
    let tags = x.tags.expect("tags");
    assert_eq!(
        (tags.op, x.targets[0].identity.as_str()),
        (TagOp::Replace, "a.csv")
    );
    assert_eq!(tags.added.get("class").map(String::as_str), Some("public"));
}
