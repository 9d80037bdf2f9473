//! The cloud simulator against a small hand-written account (`tests/data/account.tfstate`):
//! per API family, the state after a call and the response elements, worked out from the
//! AWS API references and the Terraform provider's attribute shapes; every record is parsed
//! by `reconciler::ingest` and attributed.

use std::path::Path;
use std::sync::Arc;

use evaluation::sim::{Agent, Caller, Cloud, Identity, Outcome, Request, Settings};
use reconciler::attribute::{Attributor, Verdict};
use reconciler::ingest::client::ClientKind;
use reconciler::ingest::{Call, Origin};
use reconciler::terraform::state::State;
use serde_json::{Value, json};

const ACCOUNT: &str = "111122223333";
const WEB_SG: &str = "sg-0web0000000000001";

fn state() -> State {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/account.tfstate");
    State::read(&path).expect("test state reads")
}

fn cloud(seed: u64) -> Cloud {
    Cloud::from_state(
        &state(),
        &Settings {
            seed,
            ..Settings::default()
        },
    )
}

fn cli() -> Caller {
    Caller::user("alice", Agent::Cli)
}

/// Parses the record with the ingest parser and returns its verdict.
fn verdict(outcome: &Outcome) -> (Call, Verdict) {
    let text = outcome.record.to_string();
    let origin = Origin {
        source: Arc::from("sim"),
        index: 0,
        offset: None,
    };
    let call = Call::parse(text.as_bytes(), origin).expect("record parses");
    let verdict = Attributor::default().attribute(&call).verdict;
    (call, verdict)
}

/// Runs a call, checks the record parses and has the expected verdict, returns the outcome.
fn run(
    cloud: &mut Cloud,
    source: &str,
    name: &str,
    params: Value,
    caller: &Caller,
    expected: Verdict,
) -> Outcome {
    let outcome = cloud
        .execute(&Request::new(source, name, params), caller)
        .expect("call is simulated");
    let (_, got) = verdict(&outcome);
    assert_eq!(got, expected, "verdict of {name}: {}", outcome.record);
    outcome
}

/// A successful CLI call.
fn ok(cloud: &mut Cloud, source: &str, name: &str, params: Value) -> Outcome {
    let outcome = run(cloud, source, name, params, &cli(), Verdict::OutOfBand);
    assert!(
        outcome.error.is_none(),
        "{name} failed: {:?}",
        outcome.error
    );
    outcome
}

/// A failed CLI call: checks the code and that nothing changed.
fn fails(cloud: &mut Cloud, source: &str, name: &str, params: Value, code: &str) -> Outcome {
    let before = cloud.snapshot();
    let outcome = run(cloud, source, name, params, &cli(), Verdict::Failed);
    assert_eq!(outcome.error.as_ref().map(|e| e.code.as_str()), Some(code));
    assert_eq!(outcome.record["errorCode"], json!(code));
    assert_eq!(outcome.record["responseElements"], Value::Null);
    assert_eq!(
        cloud.snapshot().instances,
        before.instances,
        "{name} changed state"
    );
    outcome
}

/// The attributes of the instance of `resource_type` whose `key` is `value`.
fn attrs(cloud: &Cloud, resource_type: &str, key: &str, value: &str) -> Value {
    cloud
        .resources()
        .iter()
        .find(|i| i.resource_type == resource_type && i.attributes[key] == json!(value))
        .map(|i| i.attributes.clone())
        .unwrap_or(Value::Null)
}

fn count(cloud: &Cloud, resource_type: &str) -> usize {
    cloud
        .resources()
        .iter()
        .filter(|i| i.resource_type == resource_type)
        .count()
}

const EC2: &str = "ec2.amazonaws.com";

fn https_rule(port: i64, cidr: &str) -> Value {
    json!({"groupId": WEB_SG, "ipPermissions": {"items": [{"ipProtocol": "tcp", "fromPort": port, "toPort": port,
        "groups": {}, "ipRanges": {"items": [{"cidrIp": cidr}]}, "ipv6Ranges": {}, "prefixListIds": {}}]}})
}

#[test]
fn authorize_ingress_adds_an_ingress_element() {
    let mut c = cloud(1);
    let out = ok(
        &mut c,
        EC2,
        "AuthorizeSecurityGroupIngress",
        https_rule(22, "10.0.0.0/8"),
    );
    let sg = attrs(&c, "aws_security_group", "id", WEB_SG);
    let ingress = sg["ingress"].as_array().expect("ingress list");
    assert_eq!(ingress.len(), 2);
    assert_eq!(
        ingress[1],
        json!({"cidr_blocks": ["10.0.0.0/8"], "description": "", "from_port": 22, "ipv6_cidr_blocks": [],
               "prefix_list_ids": [], "protocol": "tcp", "security_groups": [], "self": false, "to_port": 22})
    );
    let response = &out.record["responseElements"];
    assert_eq!(response["_return"], json!(true));
    assert_eq!(response["requestId"], out.record["requestID"]);
    let rule = &response["securityGroupRuleSet"]["items"][0];
    assert_eq!(rule["cidrIpv4"], json!("10.0.0.0/8"));
    assert_eq!(rule["isEgress"], json!(false));
    assert_eq!(rule["groupOwnerId"], json!(ACCOUNT));
    let id = rule["securityGroupRuleId"].as_str().expect("rule id");
    assert!(id.starts_with("sgr-") && id.len() == 21, "{id}");
    assert_eq!(out.touched, vec!["aws_security_group.web".to_owned()]);
}

#[test]
fn duplicate_rules_and_unknown_groups_fail_without_change() {
    let mut c = cloud(1);
    let out = fails(
        &mut c,
        EC2,
        "AuthorizeSecurityGroupIngress",
        https_rule(443, "0.0.0.0/0"),
        "InvalidPermission.Duplicate",
    );
    assert!(
        out.error
            .expect("error")
            .message
            .contains("peer: 0.0.0.0/0, TCP, from port: 443, to port: 443")
    );
    let mut unknown = https_rule(80, "0.0.0.0/0");
    unknown["groupId"] = json!("sg-0000000000000dead");
    fails(
        &mut c,
        EC2,
        "AuthorizeSecurityGroupIngress",
        unknown,
        "InvalidGroup.NotFound",
    );
    fails(
        &mut c,
        EC2,
        "RevokeSecurityGroupIngress",
        https_rule(8080, "0.0.0.0/0"),
        "InvalidPermission.NotFound",
    );
}

#[test]
fn revoke_removes_the_rule_and_self_references_set_self() {
    let mut c = cloud(2);
    ok(
        &mut c,
        EC2,
        "RevokeSecurityGroupIngress",
        https_rule(443, "0.0.0.0/0"),
    );
    assert_eq!(
        attrs(&c, "aws_security_group", "id", WEB_SG)["ingress"],
        json!([])
    );
    let own = json!({"groupId": WEB_SG, "ipPermissions": {"items": [{"ipProtocol": "-1",
        "groups": {"items": [{"groupId": WEB_SG}]}, "ipRanges": {}, "ipv6Ranges": {}, "prefixListIds": {}}]}});
    ok(&mut c, EC2, "AuthorizeSecurityGroupEgress", own);
    let egress = attrs(&c, "aws_security_group", "id", WEB_SG)["egress"].clone();
    assert_eq!(egress[1]["self"], json!(true));
    assert_eq!(egress[1]["protocol"], json!("-1"));
    assert_eq!(egress[1]["security_groups"], json!([]));
}

#[test]
fn revoking_an_unknown_rule_in_a_default_vpc_succeeds_and_reports_it() {
    let mut text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/account.tfstate"),
    )
    .expect("state");
    text = text.replace(
        "\"enable_dns_hostnames\": false,",
        "\"enable_dns_hostnames\": false, \"default\": true,",
    );
    let state = State::parse(text.as_bytes(), "default-vpc").expect("state");
    let mut c = Cloud::from_state(&state, &Settings::default());
    let out = ok(
        &mut c,
        EC2,
        "RevokeSecurityGroupIngress",
        https_rule(8080, "0.0.0.0/0"),
    );
    let unknown = &out.record["responseElements"]["unknownIpPermissionSet"]["items"][0];
    assert_eq!(
        unknown["ipRanges"],
        json!({"items": [{"cidrIp": "0.0.0.0/0"}]})
    );
    assert_eq!(unknown["fromPort"], json!(8080));
    assert_eq!(
        attrs(&c, "aws_security_group", "id", WEB_SG)["ingress"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

#[test]
fn security_groups_are_created_and_deleted() {
    let mut c = cloud(3);
    let out = ok(
        &mut c,
        EC2,
        "CreateSecurityGroup",
        json!({"groupName": "batch", "groupDescription": "batch jobs", "vpcId": "vpc-0aaa1111bbbb22220"}),
    );
    let id = out.record["responseElements"]["groupId"]
        .as_str()
        .expect("group id")
        .to_owned();
    assert!(id.starts_with("sg-") && id.len() == 20);
    let sg = attrs(&c, "aws_security_group", "id", &id);
    assert_eq!(sg["name"], json!("batch"));
    assert_eq!(sg["ingress"], json!([]));
    assert_eq!(sg["egress"][0]["cidr_blocks"], json!(["0.0.0.0/0"]));
    fails(
        &mut c,
        EC2,
        "CreateSecurityGroup",
        json!({"groupName": "batch", "groupDescription": "again", "vpcId": "vpc-0aaa1111bbbb22220"}),
        "InvalidGroup.Duplicate",
    );
    // the web group is used by an instance
    fails(
        &mut c,
        EC2,
        "DeleteSecurityGroup",
        json!({"groupId": WEB_SG}),
        "DependencyViolation",
    );
    ok(&mut c, EC2, "DeleteSecurityGroup", json!({"groupId": id}));
    assert_eq!(attrs(&c, "aws_security_group", "id", &id), Value::Null);
    let snapshot = c.snapshot();
    assert!(
        snapshot
            .instances
            .iter()
            .all(|i| i.attributes["id"] != json!(id))
    );
}

#[test]
fn instance_attributes_follow_ec2_rules() {
    let mut c = cloud(4);
    let resize =
        json!({"instanceId": "i-0app0000000000001", "instanceType": {"value": "t3.large"}});
    fails(
        &mut c,
        EC2,
        "ModifyInstanceAttribute",
        resize.clone(),
        "IncorrectInstanceState",
    );
    let stop = ok(
        &mut c,
        EC2,
        "StopInstances",
        json!({"instancesSet": {"items": [{"instanceId": "i-0app0000000000001"}]}}),
    );
    assert_eq!(
        stop.record["responseElements"]["instancesSet"]["items"][0]["currentState"]["name"],
        json!("stopping")
    );
    ok(&mut c, EC2, "ModifyInstanceAttribute", resize);
    ok(
        &mut c,
        EC2,
        "ModifyInstanceAttribute",
        json!({"instanceId": "i-0app0000000000001", "disableApiTermination": {"value": true}}),
    );
    ok(
        &mut c,
        EC2,
        "ModifyInstanceAttribute",
        json!({"instanceId": "i-0app0000000000001", "groupSet": {"items": [{"groupId": "sg-0db00000000000001"}, {"groupId": WEB_SG}]}}),
    );
    let i = attrs(&c, "aws_instance", "id", "i-0app0000000000001");
    assert_eq!(i["instance_type"], json!("t3.large"));
    assert_eq!(i["disable_api_termination"], json!(true));
    assert_eq!(
        i["vpc_security_group_ids"],
        json!(["sg-0db00000000000001", WEB_SG])
    );
    fails(
        &mut c,
        EC2,
        "ModifyInstanceAttribute",
        json!({"instanceId": "i-0nope", "ebsOptimized": {"value": true}}),
        "InvalidInstanceID.NotFound",
    );
}

#[test]
fn tags_change_tags_and_tags_all() {
    let mut c = cloud(5);
    ok(
        &mut c,
        EC2,
        "CreateTags",
        json!({"resourcesSet": {"items": [{"resourceId": "i-0app0000000000001"}]},
        "tagSet": {"items": [{"key": "Owner", "value": "ops"}]}}),
    );
    let i = attrs(&c, "aws_instance", "id", "i-0app0000000000001");
    assert_eq!(i["tags"], json!({"Name": "app", "Owner": "ops"}));
    assert_eq!(i["tags_all"], json!({"Name": "app", "Owner": "ops"}));
    // a value that does not match leaves the tag; a bare key removes it
    ok(
        &mut c,
        EC2,
        "DeleteTags",
        json!({"resourcesSet": {"items": [{"resourceId": "i-0app0000000000001"}]},
        "tagSet": {"items": [{"key": "Owner", "value": "other"}, {"key": "Name"}]}}),
    );
    let i = attrs(&c, "aws_instance", "id", "i-0app0000000000001");
    assert_eq!(i["tags_all"], json!({"Owner": "ops"}));
}

#[test]
fn subnets_vpcs_and_routes() {
    let mut c = cloud(6);
    ok(
        &mut c,
        EC2,
        "ModifySubnetAttribute",
        json!({"subnetId": "subnet-0aaa000000000001", "mapPublicIpOnLaunch": {"value": true}}),
    );
    ok(
        &mut c,
        EC2,
        "ModifyVpcAttribute",
        json!({"vpcId": "vpc-0aaa1111bbbb22220", "enableDnsHostnames": {"value": true}}),
    );
    assert_eq!(
        attrs(&c, "aws_subnet", "id", "subnet-0aaa000000000001")["map_public_ip_on_launch"],
        json!(true)
    );
    assert_eq!(
        attrs(&c, "aws_vpc", "id", "vpc-0aaa1111bbbb22220")["enable_dns_hostnames"],
        json!(true)
    );
    // the main route table is not in state: the route becomes an aws_route, id r-<rtb><crc32>
    ok(
        &mut c,
        EC2,
        "CreateRoute",
        json!({"routeTableId": "rtb-0main000000000001", "destinationCidrBlock": "0.0.0.0/0", "gatewayId": "igw-0abc"}),
    );
    let route = attrs(&c, "aws_route", "id", "r-rtb-0main0000000000011080289494");
    assert_eq!(route["gateway_id"], json!("igw-0abc"));
    assert_eq!(route["destination_cidr_block"], json!("0.0.0.0/0"));
    fails(
        &mut c,
        EC2,
        "CreateRoute",
        json!({"routeTableId": "rtb-0main000000000001", "destinationCidrBlock": "0.0.0.0/0", "gatewayId": "igw-0abc"}),
        "RouteAlreadyExists",
    );
    // a route table in state gets the route in its `route` list
    ok(
        &mut c,
        EC2,
        "CreateRoute",
        json!({"routeTableId": "rtb-0priv00000000001", "destinationCidrBlock": "10.1.0.0/16", "natGatewayId": "nat-0abc"}),
    );
    let table = attrs(&c, "aws_route_table", "id", "rtb-0priv00000000001");
    assert_eq!(table["route"][0]["cidr_block"], json!("10.1.0.0/16"));
    assert_eq!(table["route"][0]["nat_gateway_id"], json!("nat-0abc"));
    ok(
        &mut c,
        EC2,
        "DeleteRoute",
        json!({"routeTableId": "rtb-0priv00000000001", "destinationCidrBlock": "10.1.0.0/16"}),
    );
    assert_eq!(
        attrs(&c, "aws_route_table", "id", "rtb-0priv00000000001")["route"],
        json!([])
    );
    ok(
        &mut c,
        EC2,
        "DeleteRoute",
        json!({"routeTableId": "rtb-0main000000000001", "destinationCidrBlock": "0.0.0.0/0"}),
    );
    assert_eq!(count(&c, "aws_route"), 0);
    fails(
        &mut c,
        EC2,
        "DeleteRoute",
        json!({"routeTableId": "rtb-0main000000000001", "destinationCidrBlock": "0.0.0.0/0"}),
        "InvalidRoute.NotFound",
    );
}

#[test]
fn launch_templates_and_volumes() {
    let mut c = cloud(7);
    let out = ok(
        &mut c,
        EC2,
        "CreateLaunchTemplateVersion",
        json!({"CreateLaunchTemplateVersionRequest": {
        "LaunchTemplateId": "lt-0app0000000000001", "SourceVersion": "1", "LaunchTemplateData": {"InstanceType": "t3.small"}}}),
    );
    let version = &out.record["responseElements"]["CreateLaunchTemplateVersionResponse"]["launchTemplateVersion"];
    assert_eq!(version["versionNumber"], json!(2));
    assert_eq!(version["defaultVersion"], json!(false));
    let lt = attrs(&c, "aws_launch_template", "id", "lt-0app0000000000001");
    assert_eq!(
        (
            lt["latest_version"].clone(),
            lt["default_version"].clone(),
            lt["instance_type"].clone()
        ),
        (json!(2), json!(1), json!("t3.small"))
    );
    ok(
        &mut c,
        EC2,
        "ModifyLaunchTemplate",
        json!({"ModifyLaunchTemplateRequest": {"LaunchTemplateId": "lt-0app0000000000001", "SetDefaultVersion": "2"}}),
    );
    assert_eq!(
        attrs(&c, "aws_launch_template", "id", "lt-0app0000000000001")["default_version"],
        json!(2)
    );
    fails(
        &mut c,
        EC2,
        "ModifyLaunchTemplate",
        json!({"ModifyLaunchTemplateRequest": {"LaunchTemplateId": "lt-0app0000000000001", "SetDefaultVersion": "9"}}),
        "InvalidLaunchTemplateId.VersionNotFound",
    );
    ok(
        &mut c,
        EC2,
        "ModifyVolume",
        json!({"ModifyVolumeRequest": {"VolumeId": "vol-0data00000000001", "Size": 50, "Iops": 4000}}),
    );
    let v = attrs(&c, "aws_ebs_volume", "id", "vol-0data00000000001");
    assert_eq!(
        (v["size"].clone(), v["iops"].clone()),
        (json!(50), json!(4000))
    );
    fails(
        &mut c,
        EC2,
        "ModifyVolume",
        json!({"ModifyVolumeRequest": {"VolumeId": "vol-0data00000000001", "Size": 10}}),
        "InvalidParameterValue",
    );
}

const S3: &str = "s3.amazonaws.com";

fn s3(bucket: &str, key: &str, body: Value, marker: &str) -> Value {
    json!({"bucketName": bucket, "Host": format!("{bucket}.s3.amazonaws.com"), key: body, marker: ""})
}

#[test]
fn s3_configuration_resources() {
    let mut c = cloud(8);
    let xmlns = "http://s3.amazonaws.com/doc/2006-03-01/";
    let out = ok(
        &mut c,
        S3,
        "PutBucketVersioning",
        s3(
            "acme-assets",
            "VersioningConfiguration",
            json!({"Status": "Enabled", "xmlns": xmlns}),
            "versioning",
        ),
    );
    assert_eq!(out.record["responseElements"], Value::Null);
    assert_eq!(
        out.record["resources"][0]["ARN"],
        json!("arn:aws:s3:::acme-assets")
    );
    assert!(
        out.record["userAgent"]
            .as_str()
            .expect("agent")
            .starts_with("[aws-cli/2.15.30")
    );
    assert_eq!(
        attrs(&c, "aws_s3_bucket_versioning", "bucket", "acme-assets")["versioning_configuration"],
        // MFADelete was never configured, so GetBucketVersioning still leaves it out.
        json!([{"status": "Enabled", "mfa_delete": ""}])
    );
    // a bucket without a versioning resource gets one
    ok(
        &mut c,
        S3,
        "PutBucketVersioning",
        s3(
            "acme-logs",
            "VersioningConfiguration",
            json!({"Status": "Enabled", "xmlns": xmlns}),
            "versioning",
        ),
    );
    assert_eq!(count(&c, "aws_s3_bucket_versioning"), 2);
    ok(
        &mut c,
        S3,
        "PutBucketEncryption",
        s3(
            "acme-logs",
            "ServerSideEncryptionConfiguration",
            json!({"xmlns": xmlns,
        "Rule": {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "alias/logs"}, "BucketKeyEnabled": true}}),
            "encryption",
        ),
    );
    let sse = || {
        attrs(
            &c,
            "aws_s3_bucket_server_side_encryption_configuration",
            "bucket",
            "acme-logs",
        )["rule"][0]
            .clone()
    };
    assert_eq!(
        sse()["apply_server_side_encryption_by_default"],
        json!([{"sse_algorithm": "aws:kms", "kms_master_key_id": "alias/logs"}])
    );
    assert_eq!(sse()["bucket_key_enabled"], json!(true));
    ok(
        &mut c,
        S3,
        "DeleteBucketEncryption",
        json!({"bucketName": "acme-logs", "Host": "acme-logs.s3.amazonaws.com", "encryption": ""}),
    );
    let rule = attrs(
        &c,
        "aws_s3_bucket_server_side_encryption_configuration",
        "bucket",
        "acme-logs",
    )["rule"][0]
        .clone();
    assert_eq!(
        rule["apply_server_side_encryption_by_default"][0]["sse_algorithm"],
        json!("AES256")
    );
    ok(
        &mut c,
        S3,
        "PutBucketTagging",
        s3(
            "acme-assets",
            "Tagging",
            json!({"xmlns": xmlns, "TagSet": {"Tag": [{"Key": "Env", "Value": "dev"}, {"Key": "Cost", "Value": "42"}]}}),
            "tagging",
        ),
    );
    assert_eq!(
        attrs(&c, "aws_s3_bucket", "bucket", "acme-assets")["tags"],
        json!({"Env": "dev", "Cost": "42"})
    );
    ok(
        &mut c,
        S3,
        "DeleteBucketTagging",
        json!({"bucketName": "acme-assets", "Host": "acme-assets.s3.amazonaws.com", "tagging": ""}),
    );
    let b = attrs(&c, "aws_s3_bucket", "bucket", "acme-assets");
    assert_eq!(
        (b["tags"].clone(), b["tags_all"].clone()),
        (Value::Null, json!({}))
    );
    let policy = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": "arn:aws:s3:::acme-logs/*",
        "Condition": {"Bool": {"aws:SecureTransport": "false"}}}]});
    ok(
        &mut c,
        S3,
        "PutBucketPolicy",
        s3("acme-logs", "bucketPolicy", policy.clone(), "policy"),
    );
    let stored = attrs(&c, "aws_s3_bucket_policy", "bucket", "acme-logs")["policy"]
        .as_str()
        .map(|s| serde_json::from_str::<Value>(s).expect("json"));
    assert_eq!(stored, Some(policy));
    ok(
        &mut c,
        S3,
        "DeleteBucketPolicy",
        json!({"bucketName": "acme-logs", "Host": "acme-logs.s3.amazonaws.com", "policy": ""}),
    );
    assert_eq!(count(&c, "aws_s3_bucket_policy"), 0);
    ok(
        &mut c,
        S3,
        "PutPublicAccessBlock",
        s3(
            "acme-logs",
            "PublicAccessBlockConfiguration",
            json!({"xmlns": xmlns, "BlockPublicAcls": true,
        "IgnorePublicAcls": true, "BlockPublicPolicy": true, "RestrictPublicBuckets": false}),
            "publicAccessBlock",
        ),
    );
    let pab = attrs(
        &c,
        "aws_s3_bucket_public_access_block",
        "bucket",
        "acme-logs",
    );
    assert_eq!(
        (
            pab["block_public_policy"].clone(),
            pab["restrict_public_buckets"].clone()
        ),
        (json!(true), json!(false))
    );
    ok(
        &mut c,
        S3,
        "DeletePublicAccessBlock",
        json!({"bucketName": "acme-logs", "Host": "acme-logs.s3.amazonaws.com", "publicAccessBlock": ""}),
    );
    assert_eq!(count(&c, "aws_s3_bucket_public_access_block"), 0);
    ok(
        &mut c,
        S3,
        "PutBucketLogging",
        s3(
            "acme-assets",
            "BucketLoggingStatus",
            json!({"xmlns": xmlns, "LoggingEnabled": {"TargetBucket": "acme-logs", "TargetPrefix": "assets/"}}),
            "logging",
        ),
    );
    let log = attrs(&c, "aws_s3_bucket_logging", "bucket", "acme-assets");
    assert_eq!(
        (log["target_bucket"].clone(), log["target_prefix"].clone()),
        (json!("acme-logs"), json!("assets/"))
    );
    ok(
        &mut c,
        S3,
        "PutBucketLifecycle",
        s3(
            "acme-logs",
            "LifecycleConfiguration",
            json!({"xmlns": xmlns,
        "Rule": {"ID": "expire", "Status": "Enabled", "Filter": {"Prefix": "tmp/"}, "Expiration": {"Days": 30}}}),
            "lifecycle",
        ),
    );
    let rule = attrs(
        &c,
        "aws_s3_bucket_lifecycle_configuration",
        "bucket",
        "acme-logs",
    )["rule"][0]
        .clone();
    assert_eq!(
        (
            rule["id"].clone(),
            rule["expiration"][0]["days"].clone(),
            rule["filter"][0]["prefix"].clone()
        ),
        (json!("expire"), json!(30), json!("tmp/"))
    );
    fails(
        &mut c,
        S3,
        "PutBucketVersioning",
        s3(
            "nope",
            "VersioningConfiguration",
            json!({"Status": "Enabled"}),
            "versioning",
        ),
        "NoSuchBucket",
    );
}

const IAM: &str = "iam.amazonaws.com";

#[test]
fn iam_roles_and_policies() {
    let mut c = cloud(9);
    let read = format!("arn:aws:iam::{ACCOUNT}:policy/read");
    let out = ok(
        &mut c,
        IAM,
        "AttachRolePolicy",
        json!({"roleName": "app", "policyArn": read}),
    );
    assert_eq!(out.record["awsRegion"], json!("us-east-1"));
    assert_eq!(out.record["responseElements"], Value::Null);
    assert_eq!(
        attrs(&c, "aws_iam_role", "name", "app")["managed_policy_arns"],
        json!([read])
    );
    assert_eq!(
        attrs(&c, "aws_iam_role_policy_attachment", "policy_arn", &read)["role"],
        json!("app")
    );
    fails(
        &mut c,
        IAM,
        "AttachRolePolicy",
        json!({"roleName": "app", "policyArn": format!("arn:aws:iam::{ACCOUNT}:policy/missing")}),
        "NoSuchEntityException",
    );
    fails(
        &mut c,
        IAM,
        "DeleteRole",
        json!({"roleName": "app"}),
        "DeleteConflictException",
    );
    ok(
        &mut c,
        IAM,
        "DetachRolePolicy",
        json!({"roleName": "app", "policyArn": read}),
    );
    assert_eq!(count(&c, "aws_iam_role_policy_attachment"), 0);
    fails(
        &mut c,
        IAM,
        "DetachRolePolicy",
        json!({"roleName": "app", "policyArn": read}),
        "NoSuchEntityException",
    );
    let doc = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sqs:*","Resource":"*"}]}"#;
    ok(
        &mut c,
        IAM,
        "PutRolePolicy",
        json!({"roleName": "app", "policyName": "queues", "policyDocument": doc}),
    );
    assert_eq!(
        attrs(&c, "aws_iam_role_policy", "id", "app:queues")["policy"],
        json!(doc)
    );
    assert_eq!(
        attrs(&c, "aws_iam_role", "name", "app")["inline_policy"],
        json!([{"name": "queues", "policy": doc}])
    );
    ok(
        &mut c,
        IAM,
        "DeleteRolePolicy",
        json!({"roleName": "app", "policyName": "queues"}),
    );
    assert_eq!(count(&c, "aws_iam_role_policy"), 0);
    ok(
        &mut c,
        IAM,
        "UpdateAssumeRolePolicy",
        json!({"roleName": "app", "policyDocument": doc}),
    );
    assert_eq!(
        attrs(&c, "aws_iam_role", "name", "app")["assume_role_policy"],
        json!(doc)
    );
    let out = ok(
        &mut c,
        IAM,
        "CreatePolicyVersion",
        json!({"policyArn": read, "policyDocument": doc, "setAsDefault": true}),
    );
    assert_eq!(
        out.record["responseElements"]["policyVersion"]["versionId"],
        json!("v2")
    );
    assert_eq!(
        attrs(&c, "aws_iam_policy", "arn", &read)["policy"],
        json!(doc)
    );
    ok(
        &mut c,
        IAM,
        "TagRole",
        json!({"roleName": "app", "tags": [{"key": "Team", "value": "core"}]}),
    );
    assert_eq!(
        attrs(&c, "aws_iam_role", "name", "app")["tags_all"],
        json!({"Team": "core"})
    );
    ok(
        &mut c,
        IAM,
        "UntagRole",
        json!({"roleName": "app", "tagKeys": ["Team"]}),
    );
    assert_eq!(
        attrs(&c, "aws_iam_role", "name", "app")["tags"],
        Value::Null
    );
    let trust = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}"#;
    let out = ok(
        &mut c,
        IAM,
        "CreateRole",
        json!({"roleName": "fn", "assumeRolePolicyDocument": trust}),
    );
    let role = &out.record["responseElements"]["role"];
    assert_eq!(
        role["arn"],
        json!(format!("arn:aws:iam::{ACCOUNT}:role/fn"))
    );
    assert!(
        role["assumeRolePolicyDocument"]
            .as_str()
            .expect("doc")
            .starts_with("%7B%22Version%22%3A")
    );
    assert_eq!(
        attrs(&c, "aws_iam_role", "name", "fn")["unique_id"],
        role["roleId"]
    );
    fails(
        &mut c,
        IAM,
        "CreateRole",
        json!({"roleName": "fn", "assumeRolePolicyDocument": trust}),
        "EntityAlreadyExistsException",
    );
    ok(&mut c, IAM, "DeleteRole", json!({"roleName": "fn"}));
    assert_eq!(attrs(&c, "aws_iam_role", "name", "fn"), Value::Null);
    ok(
        &mut c,
        IAM,
        "AttachUserPolicy",
        json!({"userName": "ops", "policyArn": "arn:aws:iam::aws:policy/ReadOnlyAccess"}),
    );
    assert_eq!(
        attrs(&c, "aws_iam_user_policy_attachment", "user", "ops")["policy_arn"],
        json!("arn:aws:iam::aws:policy/ReadOnlyAccess")
    );
}

#[test]
fn lambda_rds_and_dynamodb() {
    let mut c = cloud(10);
    let out = ok(
        &mut c,
        "lambda.amazonaws.com",
        "UpdateFunctionConfiguration20150331v2",
        json!({"functionName": "worker", "memorySize": 512, "timeout": 30}),
    );
    assert_eq!(
        out.record["eventName"],
        json!("UpdateFunctionConfiguration20150331v2")
    );
    assert_eq!(out.record["responseElements"]["memorySize"], json!(512));
    let f = attrs(&c, "aws_lambda_function", "function_name", "worker");
    assert_eq!(
        (f["memory_size"].clone(), f["timeout"].clone()),
        (json!(512), json!(30))
    );
    // an unsuffixed name is recorded with the suffix CloudTrail writes
    let out = ok(
        &mut c,
        "lambda.amazonaws.com",
        "PutFunctionConcurrency",
        json!({"functionName": "worker", "reservedConcurrentExecutions": 10}),
    );
    assert_eq!(
        out.record["eventName"],
        json!("PutFunctionConcurrency20171031")
    );
    assert_eq!(
        out.record["responseElements"],
        json!({"reservedConcurrentExecutions": 10})
    );
    let arn = format!("arn:aws:lambda:eu-west-1:{ACCOUNT}:function:worker");
    ok(
        &mut c,
        "lambda.amazonaws.com",
        "TagResource20170331v2",
        json!({"resource": arn, "tags": {"Tier": "batch"}}),
    );
    assert_eq!(
        attrs(&c, "aws_lambda_function", "function_name", "worker")["tags"],
        json!({"Tier": "batch"})
    );
    fails(
        &mut c,
        "lambda.amazonaws.com",
        "UpdateFunctionConfiguration20150331v2",
        json!({"functionName": "gone", "timeout": 5}),
        "ResourceNotFoundException",
    );

    let rds = "rds.amazonaws.com";
    let out = ok(
        &mut c,
        rds,
        "ModifyDBInstance",
        json!({"dBInstanceIdentifier": "acme-db", "dBInstanceClass": "db.t3.large", "applyImmediately": false, "deletionProtection": true}),
    );
    assert_eq!(
        out.record["responseElements"]["pendingModifiedValues"],
        json!({"dBInstanceClass": "db.t3.large"})
    );
    let db = attrs(&c, "aws_db_instance", "identifier", "acme-db");
    assert_eq!(
        (
            db["instance_class"].clone(),
            db["deletion_protection"].clone()
        ),
        (json!("db.t3.micro"), json!(true))
    );
    ok(
        &mut c,
        rds,
        "ModifyDBInstance",
        json!({"dBInstanceIdentifier": "acme-db", "dBInstanceClass": "db.t3.large", "allocatedStorage": 50,
        "backupRetentionPeriod": 14, "multiAZ": true, "applyImmediately": true}),
    );
    let db = attrs(&c, "aws_db_instance", "identifier", "acme-db");
    assert_eq!(
        [
            &db["instance_class"],
            &db["allocated_storage"],
            &db["backup_retention_period"],
            &db["multi_az"]
        ],
        [&json!("db.t3.large"), &json!(50), &json!(14), &json!(true)]
    );
    ok(
        &mut c,
        rds,
        "AddTagsToResource",
        json!({"resourceName": format!("arn:aws:rds:eu-west-1:{ACCOUNT}:db:acme-db"), "tags": [{"key": "Backup", "value": "daily"}]}),
    );
    assert_eq!(
        attrs(&c, "aws_db_instance", "identifier", "acme-db")["tags"],
        json!({"Backup": "daily"})
    );
    fails(
        &mut c,
        rds,
        "ModifyDBInstance",
        json!({"dBInstanceIdentifier": "other", "applyImmediately": true}),
        "DBInstanceNotFound",
    );

    let ddb = "dynamodb.amazonaws.com";
    ok(
        &mut c,
        ddb,
        "UpdateTable",
        json!({"tableName": "orders", "billingMode": "PAY_PER_REQUEST"}),
    );
    let t = attrs(&c, "aws_dynamodb_table", "name", "orders");
    assert_eq!(
        [&t["billing_mode"], &t["read_capacity"]],
        [&json!("PAY_PER_REQUEST"), &json!(0)]
    );
    ok(
        &mut c,
        ddb,
        "UpdateTable",
        json!({"tableName": "orders", "billingMode": "PROVISIONED", "provisionedThroughput": {"readCapacityUnits": 10, "writeCapacityUnits": 4}}),
    );
    assert_eq!(
        attrs(&c, "aws_dynamodb_table", "name", "orders")["write_capacity"],
        json!(4)
    );
    ok(
        &mut c,
        ddb,
        "UpdateTimeToLive",
        json!({"tableName": "orders", "timeToLiveSpecification": {"enabled": true, "attributeName": "expires"}}),
    );
    assert_eq!(
        attrs(&c, "aws_dynamodb_table", "name", "orders")["ttl"],
        json!([{"enabled": true, "attribute_name": "expires"}])
    );
    fails(
        &mut c,
        ddb,
        "UpdateTimeToLive",
        json!({"tableName": "orders", "timeToLiveSpecification": {"enabled": true, "attributeName": "expires"}}),
        "ValidationException",
    );
    ok(
        &mut c,
        ddb,
        "UpdateContinuousBackups",
        json!({"tableName": "orders", "pointInTimeRecoverySpecification": {"pointInTimeRecoveryEnabled": true}}),
    );
    assert_eq!(
        attrs(&c, "aws_dynamodb_table", "name", "orders")["point_in_time_recovery"][0]["enabled"],
        json!(true)
    );
    ok(
        &mut c,
        ddb,
        "TagResource",
        json!({"resourceArn": format!("arn:aws:dynamodb:eu-west-1:{ACCOUNT}:table/orders"), "tags": [{"key": "Data", "value": "pii"}]}),
    );
    assert_eq!(
        attrs(&c, "aws_dynamodb_table", "name", "orders")["tags_all"],
        json!({"Data": "pii"})
    );
}

#[test]
fn load_balancing_and_auto_scaling() {
    let mut c = cloud(11);
    let elb = "elasticloadbalancing.amazonaws.com";
    let tg = format!(
        "arn:aws:elasticloadbalancing:eu-west-1:{ACCOUNT}:targetgroup/web/6d0ecf831eec9f09"
    );
    let lb = format!(
        "arn:aws:elasticloadbalancing:eu-west-1:{ACCOUNT}:loadbalancer/app/web/50dc6c495c0c9188"
    );
    ok(
        &mut c,
        elb,
        "ModifyTargetGroup",
        json!({"targetGroupArn": tg, "healthCheckPath": "/healthz", "healthCheckIntervalSeconds": 10, "matcher": {"httpCode": "200-299"}}),
    );
    let check = attrs(&c, "aws_lb_target_group", "arn", &tg)["health_check"][0].clone();
    assert_eq!(
        [
            &check["path"],
            &check["interval"],
            &check["matcher"],
            &check["timeout"]
        ],
        [&json!("/healthz"), &json!(10), &json!("200-299"), &json!(5)]
    );
    ok(
        &mut c,
        elb,
        "ModifyTargetGroupAttributes",
        json!({"targetGroupArn": tg, "attributes": [{"key": "deregistration_delay.timeout_seconds", "value": "30"}, {"key": "stickiness.enabled", "value": "true"}]}),
    );
    let t = attrs(&c, "aws_lb_target_group", "arn", &tg);
    assert_eq!(
        [&t["deregistration_delay"], &t["stickiness"][0]["enabled"]],
        [&json!("30"), &json!(true)]
    );
    ok(
        &mut c,
        elb,
        "ModifyLoadBalancerAttributes",
        json!({"loadBalancerArn": lb, "attributes": [{"key": "idle_timeout.timeout_seconds", "value": "120"}, {"key": "deletion_protection.enabled", "value": "true"}]}),
    );
    let l = attrs(&c, "aws_lb", "arn", &lb);
    assert_eq!(
        [&l["idle_timeout"], &l["enable_deletion_protection"]],
        [&json!(120), &json!(true)]
    );
    let listener = format!(
        "arn:aws:elasticloadbalancing:eu-west-1:{ACCOUNT}:listener/app/web/50dc6c495c0c9188/f2f7dc8efc522ab2"
    );
    ok(
        &mut c,
        elb,
        "ModifyListener",
        json!({"listenerArn": listener, "sslPolicy": "ELBSecurityPolicy-TLS13-1-2-2021-06", "defaultActions": [{"type": "forward", "targetGroupArn": tg}]}),
    );
    let li = attrs(&c, "aws_lb_listener", "arn", &listener);
    assert_eq!(
        [
            &li["ssl_policy"],
            &li["default_action"][0]["target_group_arn"]
        ],
        [&json!("ELBSecurityPolicy-TLS13-1-2-2021-06"), &json!(tg)]
    );
    ok(
        &mut c,
        elb,
        "AddTags",
        json!({"resourceArns": [lb], "tags": [{"key": "Env", "value": "prod"}]}),
    );
    assert_eq!(
        attrs(&c, "aws_lb", "arn", &lb)["tags"],
        json!({"Env": "prod"})
    );
    fails(
        &mut c,
        elb,
        "ModifyTargetGroup",
        json!({"targetGroupArn": "arn:aws:elasticloadbalancing:eu-west-1:1:targetgroup/x/1", "healthCheckPath": "/"}),
        "TargetGroupNotFound",
    );

    let asg = "autoscaling.amazonaws.com";
    ok(
        &mut c,
        asg,
        "UpdateAutoScalingGroup",
        json!({"autoScalingGroupName": "app", "minSize": 2, "maxSize": 6, "desiredCapacity": 3}),
    );
    let g = attrs(&c, "aws_autoscaling_group", "name", "app");
    assert_eq!(
        [&g["min_size"], &g["max_size"], &g["desired_capacity"]],
        [&json!(2), &json!(6), &json!(3)]
    );
    fails(
        &mut c,
        asg,
        "SetDesiredCapacity",
        json!({"autoScalingGroupName": "app", "desiredCapacity": 9}),
        "ValidationError",
    );
    // Auto Scaling acting on its own is the service's doing
    let by_service = run(
        &mut c,
        asg,
        "SetDesiredCapacity",
        json!({"autoScalingGroupName": "app", "desiredCapacity": 4}),
        &Caller::service("autoscaling.amazonaws.com"),
        Verdict::Service,
    );
    assert_eq!(
        by_service.record["userIdentity"],
        json!({"type": "AWSService", "invokedBy": "autoscaling.amazonaws.com"})
    );
    assert_eq!(
        attrs(&c, "aws_autoscaling_group", "name", "app")["desired_capacity"],
        json!(4)
    );
    ok(
        &mut c,
        asg,
        "CreateOrUpdateTags",
        json!({"tags": [{"resourceId": "app", "resourceType": "auto-scaling-group", "key": "Team", "value": "web", "propagateAtLaunch": true}]}),
    );
    assert_eq!(
        attrs(&c, "aws_autoscaling_group", "name", "app")["tag"],
        json!([{"key": "Team", "value": "web", "propagate_at_launch": true}])
    );
}

#[test]
fn messaging_monitoring_and_keys() {
    let mut c = cloud(12);
    let topic = format!("arn:aws:sns:eu-west-1:{ACCOUNT}:alerts");
    ok(
        &mut c,
        "sns.amazonaws.com",
        "SetTopicAttributes",
        json!({"topicArn": topic, "attributeName": "DisplayName", "attributeValue": "Alerts"}),
    );
    ok(
        &mut c,
        "sns.amazonaws.com",
        "TagResource",
        json!({"resourceArn": topic, "tags": [{"key": "Team", "value": "sre"}]}),
    );
    let t = attrs(&c, "aws_sns_topic", "arn", &topic);
    assert_eq!(
        [&t["display_name"], &t["tags"]],
        [&json!("Alerts"), &json!({"Team": "sre"})]
    );
    let queue = format!("https://sqs.eu-west-1.amazonaws.com/{ACCOUNT}/jobs");
    ok(
        &mut c,
        "sqs.amazonaws.com",
        "SetQueueAttributes",
        json!({"queueUrl": queue, "attributes": {"VisibilityTimeout": "120"}}),
    );
    ok(
        &mut c,
        "sqs.amazonaws.com",
        "TagQueue",
        json!({"queueUrl": queue, "tags": {"Team": "core"}}),
    );
    let q = attrs(&c, "aws_sqs_queue", "url", &queue);
    assert_eq!(
        [&q["visibility_timeout_seconds"], &q["tags"]],
        [&json!(120), &json!({"Team": "core"})]
    );
    fails(
        &mut c,
        "sqs.amazonaws.com",
        "SetQueueAttributes",
        json!({"queueUrl": "https://sqs.eu-west-1.amazonaws.com/1/none", "attributes": {"DelaySeconds": "5"}}),
        "AWS.SimpleQueueService.NonExistentQueue",
    );

    let cw = "monitoring.amazonaws.com";
    ok(
        &mut c,
        cw,
        "PutMetricAlarm",
        json!({"alarmName": "cpu-high", "metricName": "CPUUtilization", "namespace": "AWS/EC2", "statistic": "Average",
        "period": 60, "evaluationPeriods": 3, "threshold": 90.0, "comparisonOperator": "GreaterThanThreshold"}),
    );
    let a = attrs(&c, "aws_cloudwatch_metric_alarm", "alarm_name", "cpu-high");
    assert_eq!(
        [&a["threshold"], &a["period"], &a["evaluation_periods"]],
        [&json!(90.0), &json!(60), &json!(3)]
    );
    ok(
        &mut c,
        cw,
        "PutMetricAlarm",
        json!({"alarmName": "5xx", "metricName": "HTTPCode_Target_5XX_Count", "namespace": "AWS/ApplicationELB",
        "statistic": "Sum", "period": 60, "evaluationPeriods": 1, "threshold": 10, "comparisonOperator": "GreaterThanOrEqualToThreshold",
        "dimensions": [{"name": "LoadBalancer", "value": "app/web/50dc6c495c0c9188"}]}),
    );
    assert_eq!(
        attrs(&c, "aws_cloudwatch_metric_alarm", "alarm_name", "5xx")["dimensions"],
        json!({"LoadBalancer": "app/web/50dc6c495c0c9188"})
    );
    ok(
        &mut c,
        cw,
        "DeleteAlarms",
        json!({"alarmNames": ["cpu-high"]}),
    );
    assert_eq!(count(&c, "aws_cloudwatch_metric_alarm"), 1);
    fails(
        &mut c,
        cw,
        "DeleteAlarms",
        json!({"alarmNames": ["cpu-high"]}),
        "ResourceNotFound",
    );

    let logs = "logs.amazonaws.com";
    ok(
        &mut c,
        logs,
        "PutRetentionPolicy",
        json!({"logGroupName": "/app/web", "retentionInDays": 90}),
    );
    assert_eq!(
        attrs(&c, "aws_cloudwatch_log_group", "name", "/app/web")["retention_in_days"],
        json!(90)
    );
    fails(
        &mut c,
        logs,
        "PutRetentionPolicy",
        json!({"logGroupName": "/app/web", "retentionInDays": 10}),
        "InvalidParameterException",
    );
    ok(
        &mut c,
        logs,
        "DeleteRetentionPolicy",
        json!({"logGroupName": "/app/web"}),
    );
    assert_eq!(
        attrs(&c, "aws_cloudwatch_log_group", "name", "/app/web")["retention_in_days"],
        json!(0)
    );
    ok(
        &mut c,
        logs,
        "TagResource",
        json!({"resourceArn": format!("arn:aws:logs:eu-west-1:{ACCOUNT}:log-group:/app/web"), "tags": {"App": "web"}}),
    );
    assert_eq!(
        attrs(&c, "aws_cloudwatch_log_group", "name", "/app/web")["tags"],
        json!({"App": "web"})
    );

    let kms = "kms.amazonaws.com";
    let key = "1234abcd-12ab-34cd-56ef-1234567890ab";
    ok(&mut c, kms, "EnableKeyRotation", json!({"keyId": key}));
    assert_eq!(
        attrs(&c, "aws_kms_key", "key_id", key)["enable_key_rotation"],
        json!(true)
    );
    ok(
        &mut c,
        kms,
        "DisableKeyRotation",
        json!({"keyId": format!("arn:aws:kms:eu-west-1:{ACCOUNT}:key/{key}")}),
    );
    assert_eq!(
        attrs(&c, "aws_kms_key", "key_id", key)["enable_key_rotation"],
        json!(false)
    );
    ok(
        &mut c,
        kms,
        "TagResource",
        json!({"keyId": key, "tags": [{"tagKey": "Use", "tagValue": "logs"}]}),
    );
    assert_eq!(
        attrs(&c, "aws_kms_key", "key_id", key)["tags"],
        json!({"Use": "logs"})
    );
    fails(
        &mut c,
        kms,
        "EnableKeyRotation",
        json!({"keyId": "00000000-0000-0000-0000-000000000000"}),
        "NotFoundException",
    );
}

#[test]
fn dns_parameters_secrets_and_containers() {
    let mut c = cloud(13);
    let r53 = "route53.amazonaws.com";
    let change = |action: &str, name: &str, kind: &str, value: &str| {
        json!({"hostedZoneId": "Z0123456789ABCDEFGHIJ", "changeBatch": {"changes": [
        {"action": action, "resourceRecordSet": {"name": name, "type": kind, "tTL": 60, "resourceRecords": [{"value": value}]}}]}})
    };
    let out = ok(
        &mut c,
        r53,
        "ChangeResourceRecordSets",
        change("UPSERT", "www.example.com.", "A", "192.0.2.20"),
    );
    assert_eq!(
        out.record["responseElements"]["changeInfo"]["status"],
        json!("PENDING")
    );
    let www = attrs(
        &c,
        "aws_route53_record",
        "id",
        "Z0123456789ABCDEFGHIJ_www.example.com_A",
    );
    assert_eq!(
        [&www["records"], &www["ttl"]],
        [&json!(["192.0.2.20"]), &json!(60)]
    );
    ok(
        &mut c,
        r53,
        "ChangeResourceRecordSets",
        change("CREATE", "_verify.example.com", "TXT", "\"token\" \"more\""),
    );
    // Route 53 keeps a TXT value in quotes; the provider's `records` drops the outer pair.
    assert_eq!(
        attrs(&c, "aws_route53_record", "name", "_verify.example.com")["records"],
        json!(["token\" \"more"])
    );
    fails(
        &mut c,
        r53,
        "ChangeResourceRecordSets",
        change("CREATE", "www.example.com", "A", "192.0.2.30"),
        "InvalidChangeBatch",
    );
    ok(
        &mut c,
        r53,
        "ChangeResourceRecordSets",
        change("DELETE", "www.example.com", "A", "192.0.2.20"),
    );
    assert_eq!(count(&c, "aws_route53_record"), 1);

    let out = ok(
        &mut c,
        "ssm.amazonaws.com",
        "PutParameter",
        json!({"name": "/app/flag", "type": "String", "value": "on", "overwrite": true}),
    );
    assert_eq!(
        out.record["requestParameters"]["value"],
        json!("HIDDEN_DUE_TO_SECURITY_REASONS")
    );
    assert_eq!(
        out.record["responseElements"],
        json!({"version": 2, "tier": "Standard"})
    );
    let p = attrs(&c, "aws_ssm_parameter", "name", "/app/flag");
    assert_eq!([&p["value"], &p["version"]], [&json!("on"), &json!(2)]);
    fails(
        &mut c,
        "ssm.amazonaws.com",
        "PutParameter",
        json!({"name": "/app/flag", "type": "String", "value": "x"}),
        "ParameterAlreadyExists",
    );

    let sm = "secretsmanager.amazonaws.com";
    ok(
        &mut c,
        sm,
        "UpdateSecret",
        json!({"secretId": "db", "description": "database credentials"}),
    );
    ok(
        &mut c,
        sm,
        "TagResource",
        json!({"secretId": "db", "tags": [{"key": "Rotate", "value": "yes"}]}),
    );
    let s = attrs(&c, "aws_secretsmanager_secret", "name", "db");
    assert_eq!(
        [&s["description"], &s["tags"]],
        [&json!("database credentials"), &json!({"Rotate": "yes"})]
    );

    ok(
        &mut c,
        "ecs.amazonaws.com",
        "UpdateService",
        json!({"cluster": "main", "service": "api", "desiredCount": 5}),
    );
    assert_eq!(
        attrs(&c, "aws_ecs_service", "name", "api")["desired_count"],
        json!(5)
    );
    fails(
        &mut c,
        "ecs.amazonaws.com",
        "UpdateService",
        json!({"cluster": "other", "service": "api", "desiredCount": 1}),
        "ServiceNotFoundException",
    );
    let ecr = "ecr.amazonaws.com";
    ok(
        &mut c,
        ecr,
        "PutImageScanningConfiguration",
        json!({"repositoryName": "api", "imageScanningConfiguration": {"scanOnPush": true}}),
    );
    let out = ok(
        &mut c,
        ecr,
        "PutImageTagMutability",
        json!({"repositoryName": "api", "imageTagMutability": "IMMUTABLE"}),
    );
    assert_eq!(out.record["responseElements"]["registryId"], json!(ACCOUNT));
    let r = attrs(&c, "aws_ecr_repository", "name", "api");
    assert_eq!(
        [
            &r["image_tag_mutability"],
            &r["image_scanning_configuration"]
        ],
        [&json!("IMMUTABLE"), &json!([{"scan_on_push": true}])]
    );
}

#[test]
fn callers_are_recorded_and_attributed() {
    let mut c = cloud(14);
    let params = || https_rule(8443, "192.0.2.0/24");
    // console through SSO
    let out = run(
        &mut c,
        EC2,
        "AuthorizeSecurityGroupIngress",
        params(),
        &Caller::sso_console("dana@example.com", "AdministratorAccess"),
        Verdict::OutOfBand,
    );
    let (call, _) = verdict(&out);
    assert_eq!(call.client, ClientKind::Console);
    assert_eq!(out.record["sessionCredentialFromConsole"], json!("true"));
    let issuer = out.record["userIdentity"]["sessionContext"]["sessionIssuer"]["arn"]
        .as_str()
        .expect("issuer")
        .to_owned();
    assert!(issuer.starts_with(&format!("arn:aws:iam::{ACCOUNT}:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_AdministratorAccess_")), "{issuer}");
    // IAM's console agent is `AWS Internal`; with console credentials it is the console
    let out = run(
        &mut c,
        IAM,
        "TagRole",
        json!({"roleName": "app", "tags": [{"key": "a", "value": "b"}]}),
        &Caller::user("erin", Agent::Console),
        Verdict::OutOfBand,
    );
    assert_eq!(out.record["userAgent"], json!("AWS Internal"));
    assert_eq!(verdict(&out).0.client, ClientKind::Console);
    // CLI v2 with its command
    let out = run(
        &mut c,
        EC2,
        "RevokeSecurityGroupIngress",
        params(),
        &cli(),
        Verdict::OutOfBand,
    );
    assert!(
        matches!(verdict(&out).0.client, ClientKind::AwsCli { major: 2, command: Some(ref cmd), .. } if cmd == "ec2.revoke-security-group-ingress")
    );
    // boto3 from an assumed role
    let boto = Caller::new(
        Identity::AssumedRole {
            role: "ops".into(),
            session: "script".into(),
        },
        Agent::Boto3,
    );
    let out = run(
        &mut c,
        EC2,
        "AuthorizeSecurityGroupIngress",
        params(),
        &boto,
        Verdict::OutOfBand,
    );
    assert!(matches!(verdict(&out).0.client, ClientKind::Boto3 { .. }));
    // SSM Automation runbook
    let out = run(
        &mut c,
        EC2,
        "RevokeSecurityGroupIngress",
        params(),
        &Caller::automation("AutomationRole"),
        Verdict::OutOfBand,
    );
    assert_eq!(verdict(&out).0.client, ClientKind::SsmAutomation);
    assert_eq!(
        out.record["userIdentity"]["invokedBy"],
        json!("ssm.amazonaws.com")
    );
    assert_eq!(out.record["sourceIPAddress"], json!("ssm.amazonaws.com"));
    // Terraform
    let out = run(
        &mut c,
        EC2,
        "AuthorizeSecurityGroupIngress",
        params(),
        &Caller::terraform("terraform-ci"),
        Verdict::Terraform,
    );
    assert!(
        out.record["userAgent"]
            .as_str()
            .expect("agent")
            .ends_with("api/ec2#1.193.0 m/C,g")
    );
    // reads
    let before = c.snapshot();
    for _ in 0..5 {
        let read = c.noise_request();
        let out = run(
            &mut c,
            &read.event_source.clone(),
            &read.event_name.clone(),
            read.request_parameters.clone(),
            &cli(),
            Verdict::ReadOnly,
        );
        assert_eq!(out.record["readOnly"], json!(true));
    }
    assert_eq!(c.snapshot().instances, before.instances);
}

/// A fixed sequence of calls, for determinism.
fn sequence(seed: u64) -> Vec<Value> {
    let mut c = cloud(seed);
    let mut records = Vec::new();
    for port in [1000, 1001, 1001] {
        let out = c
            .execute(
                &Request::new(
                    EC2,
                    "AuthorizeSecurityGroupIngress",
                    https_rule(port, "0.0.0.0/0"),
                ),
                &cli(),
            )
            .expect("runs");
        records.push(out.record);
    }
    let out = c.execute(&Request::new(EC2, "CreateSecurityGroup", json!({"groupName": "x", "groupDescription": "x", "vpcId": "vpc-0aaa1111bbbb22220"})), &cli()).expect("runs");
    records.push(out.record);
    records
}

#[test]
fn same_seed_same_records() {
    assert_eq!(sequence(42), sequence(42));
    let (a, b) = (sequence(42), sequence(43));
    assert_ne!(a[0]["eventID"], b[0]["eventID"]);
    assert_ne!(
        a[3]["responseElements"]["groupId"],
        b[3]["responseElements"]["groupId"]
    );
}

#[test]
fn unsupported_calls_are_errors_of_the_simulator() {
    let mut c = cloud(15);
    assert!(
        c.execute(
            &Request::new("nope.amazonaws.com", "DoThing", json!({})),
            &cli()
        )
        .is_err()
    );
    assert!(
        c.execute(&Request::new(EC2, "RunInstances", json!({})), &cli())
            .is_err()
    );
}

#[test]
fn snapshot_round_trips_as_a_state_file() {
    let mut c = cloud(16);
    ok(
        &mut c,
        EC2,
        "CreateSecurityGroup",
        json!({"groupName": "batch", "groupDescription": "b", "vpcId": "vpc-0aaa1111bbbb22220"}),
    );
    let snapshot = c.snapshot();
    let text = evaluation::sim::tfstate_json(&snapshot).to_string();
    let back = State::parse(text.as_bytes(), "snapshot").expect("snapshot parses as state");
    assert_eq!(back.instances.len(), snapshot.instances.len());
    assert!(
        back.instances
            .iter()
            .any(|i| i.address == "aws_security_group.unmanaged_1")
    );
}

#[test]
fn fixture_projects_seed_the_simulator() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/projects");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!("note: {} is absent; skipping", dir.display());
        return;
    };
    let mut seeded = 0;
    for entry in entries.flatten() {
        let path = entry.path().join("terraform.tfstate");
        if !path.is_file() {
            continue;
        }
        let state = State::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut c = Cloud::from_state(&state, &Settings::default());
        let managed = state
            .instances
            .iter()
            .filter(|i| i.mode == reconciler::terraform::state::Mode::Managed)
            .count();
        assert_eq!(c.resources().len(), managed, "{}", path.display());
        let read = c.noise_request();
        let out = c.execute(&read, &cli()).expect("read runs");
        verdict(&out);
        seeded += 1;
    }
    println!("seeded from {seeded} fixture projects");
}

/// A cloud seeded from one of the fixture projects.
fn project_cloud(name: &str) -> Cloud {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/projects")
        .join(name)
        .join("terraform.tfstate");
    Cloud::from_state(
        &State::read(&path).expect("fixture state reads"),
        &Settings::default(),
    )
}

fn ssh_from(group: &str, cidr: &str) -> Value {
    json!({"groupId": group, "ipPermissions": {"items": [{"ipProtocol": "tcp", "fromPort": 22,
        "toPort": 22, "groups": {}, "ipRanges": {"items": [{"cidrIp": cidr}]},
        "ipv6Ranges": {}, "prefixListIds": {}}]}})
}

#[test]
fn rules_kept_as_separate_resources_are_revoked_and_added_as_resources() {
    let mut c = project_cloud("web3tier");
    let group = "sg-00c4ce524514a93a7";
    let revoked = ok(
        &mut c,
        EC2,
        "RevokeSecurityGroupIngress",
        ssh_from(group, "198.51.100.0/24"),
    );
    assert_eq!(
        revoked.touched,
        vec![
            "aws_vpc_security_group_ingress_rule.app_ssh[\"198.51.100.0/24\"]".to_owned(),
            "aws_security_group.app".to_owned()
        ]
    );
    assert!(
        c.resources()
            .iter()
            .all(|i| !i.address.contains("198.51.100.0/24"))
    );
    let added = ok(
        &mut c,
        EC2,
        "AuthorizeSecurityGroupIngress",
        ssh_from(group, "203.0.113.0/24"),
    );
    let id =
        added.record["responseElements"]["securityGroupRuleSet"]["items"][0]["securityGroupRuleId"]
            .as_str()
            .expect("rule id")
            .to_owned();
    let rule = attrs(&c, "aws_vpc_security_group_ingress_rule", "id", &id);
    assert_eq!(rule["security_group_id"], json!(group));
    assert_eq!(rule["cidr_ipv4"], json!("203.0.113.0/24"));
    assert_eq!(
        (rule["from_port"].clone(), rule["to_port"].clone()),
        (json!(22), json!(22))
    );
    assert_eq!(
        attrs(&c, "aws_security_group", "id", group)["ingress"],
        json!([])
    );
    let again = c
        .execute(
            &Request::new(
                EC2,
                "AuthorizeSecurityGroupIngress",
                ssh_from(group, "203.0.113.0/24"),
            ),
            &cli(),
        )
        .expect("modelled");
    assert_eq!(
        again.error.map(|e| e.code),
        Some("InvalidPermission.Duplicate".to_owned())
    );
}

#[test]
fn put_metric_alarm_on_an_existing_alarm_keeps_attributes_that_are_not_settings() {
    let mut c = project_cloud("web3tier");
    let arn = attrs(
        &c,
        "aws_cloudwatch_metric_alarm",
        "alarm_name",
        "shop-prod-alb-5xx",
    )["arn"]
        .clone();
    assert!(
        arn.as_str()
            .is_some_and(|a| a.starts_with("arn:aws:cloudwatch:"))
    );
    ok(
        &mut c,
        "monitoring.amazonaws.com",
        "PutMetricAlarm",
        json!({"alarmName": "shop-prod-alb-5xx", "metricName": "HTTPCode_ELB_5XX_Count",
            "namespace": "AWS/ApplicationELB", "statistic": "Sum", "period": 60, "evaluationPeriods": 2,
            "threshold": 50, "comparisonOperator": "GreaterThanThreshold",
            "dimensions": [{"name": "LoadBalancer", "value": "app/shop-prod-alb/40937ee3c9b3aa1f"}]}),
    );
    let alarm = attrs(
        &c,
        "aws_cloudwatch_metric_alarm",
        "alarm_name",
        "shop-prod-alb-5xx",
    );
    // the setting changed; `arn` is no setting and stays; an omitted setting gets
    // AWS's default (no description)
    assert_eq!(
        [
            &alarm["threshold"],
            &alarm["arn"],
            &alarm["alarm_description"]
        ],
        [&json!(50.0), &arn, &json!("")]
    );
    assert_eq!(count(&c, "aws_cloudwatch_metric_alarm"), 3);
}

#[test]
fn route53_names_match_without_the_final_dot_and_case() {
    let mut c = project_cloud("static-site");
    let before = count(&c, "aws_route53_record");
    // the state holds `_0047b21f6e11a20d716e4492e82879b5.www.brightlane.example`, as the
    // provider stores a record name (no final dot)
    ok(
        &mut c,
        "route53.amazonaws.com",
        "ChangeResourceRecordSets",
        json!({"hostedZoneId": "Z74KMFEJ77H4QIXAUL29W", "changeBatch": {"changes": [{"action": "UPSERT",
            "resourceRecordSet": {"name": "_0047B21F6E11A20D716E4492E82879B5.www.brightlane.example.", "type": "CNAME", "tTL": 300,
            "resourceRecords": [{"value": "_03112decb972a7fe8eef554620fab593.xlfgrmvvlj.acm-validations.aws."}]}}]}}),
    );
    assert_eq!(count(&c, "aws_route53_record"), before);
    let record = attrs(
        &c,
        "aws_route53_record",
        "name",
        "_0047b21f6e11a20d716e4492e82879b5.www.brightlane.example",
    );
    assert_eq!(record["ttl"], json!(300));
}

#[test]
fn update_role_sets_the_description_and_checks_the_session_duration() {
    let mut c = cloud(21);
    ok(
        &mut c,
        IAM,
        "UpdateRole",
        json!({"roleName": "app", "description": "app servers", "maxSessionDuration": 7200}),
    );
    let role = attrs(&c, "aws_iam_role", "name", "app");
    assert_eq!(
        [&role["description"], &role["max_session_duration"]],
        [&json!("app servers"), &json!(7200)]
    );
    fails(
        &mut c,
        IAM,
        "UpdateRole",
        json!({"roleName": "app", "maxSessionDuration": 60}),
        "ValidationError",
    );
    fails(
        &mut c,
        IAM,
        "UpdateRole",
        json!({"roleName": "nobody", "description": "x"}),
        "NoSuchEntityException",
    );
}

#[test]
fn revoking_a_rule_managed_as_its_own_resource_removes_that_resource() {
    let mut c = project_cloud("web3tier");
    let before = count(&c, "aws_vpc_security_group_ingress_rule");
    // aws_vpc_security_group_ingress_rule.app_ssh["198.51.100.0/24"]: TCP 22 into the app group
    ok(
        &mut c,
        EC2,
        "RevokeSecurityGroupIngress",
        json!({"groupId": "sg-00c4ce524514a93a7", "ipPermissions": {"items": [{"ipProtocol": "tcp",
            "fromPort": 22, "toPort": 22, "groups": {}, "ipRanges": {"items": [{"cidrIp": "198.51.100.0/24"}]},
            "ipv6Ranges": {}, "prefixListIds": {}}]}}),
    );
    assert_eq!(count(&c, "aws_vpc_security_group_ingress_rule"), before - 1);
    assert!(
        c.resources()
            .iter()
            .all(|i| i.attributes["cidr_ipv4"] != json!("198.51.100.0/24"))
    );
    // the other SSH rule stays, and revoking the same permission again fails
    assert_eq!(
        attrs(
            &c,
            "aws_vpc_security_group_ingress_rule",
            "cidr_ipv4",
            "192.0.2.64/26"
        )["from_port"],
        json!(22)
    );
    fails(
        &mut c,
        EC2,
        "RevokeSecurityGroupIngress",
        json!({"groupId": "sg-00c4ce524514a93a7", "ipPermissions": {"items": [{"ipProtocol": "tcp",
            "fromPort": 22, "toPort": 22, "groups": {}, "ipRanges": {"items": [{"cidrIp": "198.51.100.0/24"}]},
            "ipv6Ranges": {}, "prefixListIds": {}}]}}),
        "InvalidPermission.NotFound",
    );
}

#[test]
fn a_caller_session_is_kept_from_call_to_call() {
    let mut c = cloud(22);
    let mut runbook = Caller::automation("AutomationServiceRole");
    runbook.session = Some("0f8e1d2c-3b4a-4958-8677-a6b5c4d3e2f1".to_owned());
    let read = Request::new("iam.amazonaws.com", "GetRole", json!({"roleName": "app"}));
    let arns: Vec<Value> = (0..2)
        .map(|_| {
            c.execute(&read, &runbook).expect("read runs").record["userIdentity"]["arn"].clone()
        })
        .collect();
    assert_eq!(
        arns,
        vec![
            json!(format!(
                "arn:aws:sts::{ACCOUNT}:assumed-role/AutomationServiceRole/0f8e1d2c-3b4a-4958-8677-a6b5c4d3e2f1"
            ));
            2
        ]
    );
}

/// A cloud seeded from the network fixture project's state.
fn network_cloud() -> Cloud {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/projects/network/terraform.tfstate");
    let state = State::read(&path).expect("network state reads");
    Cloud::from_state(&state, &Settings::default())
}

/// A string attribute of the instance at `address`.
fn at(cloud: &Cloud, address: &str, key: &str) -> String {
    cloud
        .resources()
        .iter()
        .find(|i| i.address == address)
        .and_then(|i| i.attributes[key].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn routes_of_route_resources_and_vpn_gateways() {
    let mut c = network_cloud();
    let table = at(&c, "aws_route.private_onprem", "route_table_id");
    let vgw = at(&c, "aws_vpn_gateway.this", "id");
    let vpc = at(&c, "aws_vpc.this", "id");
    ok(
        &mut c,
        EC2,
        "ReplaceRoute",
        json!({"routeTableId": table, "destinationCidrBlock": "192.168.0.0/16", "transitGatewayId": "tgw-1"}),
    );
    assert_eq!(
        at(&c, "aws_route.private_onprem", "transit_gateway_id"),
        "tgw-1"
    );
    assert_eq!(at(&c, "aws_route.private_onprem", "gateway_id"), "");
    fails(
        &mut c,
        EC2,
        "ReplaceRoute",
        json!({"routeTableId": table, "destinationCidrBlock": "10.99.0.0/16", "gatewayId": vgw}),
        "InvalidParameterValue",
    );
    let routes = count(&c, "aws_route");
    ok(
        &mut c,
        EC2,
        "CreateRoute",
        json!({"routeTableId": table, "destinationCidrBlock": "172.16.0.0/12", "gatewayId": vgw}),
    );
    assert_eq!(
        count(&c, "aws_route"),
        routes + 1,
        "a table of aws_route resources gains one"
    );
    assert_eq!(
        attrs(&c, "aws_route", "destination_cidr_block", "172.16.0.0/12")["id"],
        json!(format!("r-{table}3337197873"))
    );
    ok(
        &mut c,
        EC2,
        "DisableVgwRoutePropagation",
        json!({"routeTableId": table, "gatewayId": vgw}),
    );
    assert_eq!(count(&c, "aws_vpn_gateway_route_propagation"), 0);
    ok(
        &mut c,
        EC2,
        "EnableVgwRoutePropagation",
        json!({"routeTableId": table, "gatewayId": vgw}),
    );
    assert_eq!(
        attrs(
            &c,
            "aws_vpn_gateway_route_propagation",
            "route_table_id",
            &table
        )["id"],
        json!(format!("{vgw}_{table}"))
    );
    let attachment = json!({"vpnGatewayId": vgw, "vpcId": vpc});
    fails(
        &mut c,
        EC2,
        "AttachVpnGateway",
        attachment.clone(),
        "VpnGatewayAttachmentLimitExceeded",
    );
    ok(&mut c, EC2, "DetachVpnGateway", attachment.clone());
    assert_eq!(count(&c, "aws_vpn_gateway_attachment"), 0);
    let attached = ok(&mut c, EC2, "AttachVpnGateway", attachment);
    assert_eq!(
        attached.record["responseElements"]["attachment"]["state"],
        json!("attaching")
    );
    assert_eq!(
        attrs(&c, "aws_vpn_gateway_attachment", "vpc_id", &vpc)["id"],
        json!(at(
            &network_cloud(),
            "aws_vpn_gateway_attachment.this",
            "id"
        )),
        "the provider's id: vpn-attachment- and the CRC-32 of vpc-vgw"
    );
}

#[test]
fn vpc_options_ranges_and_block_public_access() {
    let mut c = network_cloud();
    let vpc = at(&c, "aws_vpc.this", "id");
    ok(
        &mut c,
        EC2,
        "AssociateDhcpOptions",
        json!({"dhcpOptionsId": "default", "vpcId": vpc}),
    );
    assert_eq!(
        at(&c, "aws_vpc_dhcp_options_association.this", "id"),
        format!("default-{vpc}")
    );
    let assoc = at(&c, "aws_vpc_ipv4_cidr_block_association.this[0]", "id");
    fails(
        &mut c,
        EC2,
        "DisassociateVpcCidrBlock",
        json!({"associationId": assoc}),
        "InvalidCidrBlock.InUse",
    );
    let added = ok(
        &mut c,
        EC2,
        "AssociateVpcCidrBlock",
        json!({"vpcId": vpc, "cidrBlock": "10.62.0.0/16"}),
    );
    let id = added.record["responseElements"]["cidrBlockAssociation"]["associationId"].clone();
    assert_eq!(
        attrs(
            &c,
            "aws_vpc_ipv4_cidr_block_association",
            "cidr_block",
            "10.62.0.0/16"
        )["id"],
        id
    );
    ok(
        &mut c,
        EC2,
        "DisassociateVpcCidrBlock",
        json!({"associationId": id}),
    );
    assert_eq!(count(&c, "aws_vpc_ipv4_cidr_block_association"), 1);
    let off = ok(
        &mut c,
        EC2,
        "ModifyVpcBlockPublicAccessOptions",
        json!({"ModifyVpcBlockPublicAccessOptionsRequest": {"InternetGatewayBlockMode": "off"}}),
    );
    assert_eq!(
        off.record["responseElements"]["ModifyVpcBlockPublicAccessOptionsResponse"]["vpcBlockPublicAccessOptions"]
            ["awsRegion"],
        json!("sa-east-1")
    );
    assert_eq!(
        at(
            &c,
            "aws_vpc_block_public_access_options.this",
            "internet_gateway_block_mode"
        ),
        "off"
    );
    let exclusion = at(&c, "aws_vpc_block_public_access_exclusion.public[0]", "id");
    ok(
        &mut c,
        EC2,
        "ModifyVpcBlockPublicAccessExclusion",
        json!({"ModifyVpcBlockPublicAccessExclusionRequest": {"ExclusionId": exclusion, "InternetGatewayExclusionMode": "allow-egress"}}),
    );
    assert_eq!(
        attrs(
            &c,
            "aws_vpc_block_public_access_exclusion",
            "id",
            &exclusion
        )["internet_gateway_exclusion_mode"],
        json!("allow-egress")
    );
    ok(
        &mut c,
        EC2,
        "DeleteVpcBlockPublicAccessExclusion",
        json!({"DeleteVpcBlockPublicAccessExclusionRequest": {"ExclusionId": exclusion}}),
    );
    assert_eq!(count(&c, "aws_vpc_block_public_access_exclusion"), 1);
    let pg = at(&c, "aws_placement_group.analytics", "placement_group_id");
    ok(
        &mut c,
        EC2,
        "CreateTags",
        json!({"resourcesSet": {"items": [{"resourceId": pg}]}, "tagSet": {"items": [{"key": "Owner", "value": "hpc"}]}}),
    );
    assert_eq!(
        attrs(&c, "aws_placement_group", "placement_group_id", &pg)["tags"]["Owner"],
        json!("hpc")
    );
}

#[test]
fn default_group_redshift_targets_and_listener_certificates() {
    let mut c = network_cloud();
    let group = at(&c, "aws_default_security_group.this", "id");
    ok(
        &mut c,
        EC2,
        "RevokeSecurityGroupIngress",
        json!({"groupId": group, "ipPermissions": {"items": [{"ipProtocol": "-1",
            "groups": {"items": [{"groupId": group}]}, "ipRanges": {}, "ipv6Ranges": {}, "prefixListIds": {}}]}}),
    );
    assert_eq!(
        attrs(&c, "aws_default_security_group", "id", &group)["ingress"],
        json!([])
    );
    let redshift = "redshift.amazonaws.com";
    let subnets = attrs(
        &c,
        "aws_redshift_subnet_group",
        "name",
        "meridian-prod-redshift",
    )["subnet_ids"]
        .clone();
    ok(
        &mut c,
        redshift,
        "ModifyClusterSubnetGroup",
        json!({"clusterSubnetGroupName": "Meridian-Prod-Redshift", "description": "reviewed", "subnetIds": subnets}),
    );
    assert_eq!(
        attrs(
            &c,
            "aws_redshift_subnet_group",
            "name",
            "meridian-prod-redshift"
        )["description"],
        json!("reviewed")
    );
    let elb = "elasticloadbalancing.amazonaws.com";
    let tg = at(&c, "aws_lb_target_group.api", "arn");
    let target = |ip: &str| json!({"targetGroupArn": tg, "targets": [{"id": ip, "port": 8443, "availabilityZone": "all"}]});
    ok(&mut c, elb, "RegisterTargets", target("192.168.10.31"));
    assert_eq!(count(&c, "aws_lb_target_group_attachment"), 3);
    ok(&mut c, elb, "RegisterTargets", target("192.168.10.31"));
    assert_eq!(
        count(&c, "aws_lb_target_group_attachment"),
        3,
        "registering again changes nothing"
    );
    ok(&mut c, elb, "DeregisterTargets", target("192.168.10.21"));
    assert!(
        attrs(
            &c,
            "aws_lb_target_group_attachment",
            "target_id",
            "192.168.10.21"
        )
        .is_null()
    );
    let listener = at(&c, "aws_lb_listener.https", "arn");
    let cert = at(
        &c,
        "aws_lb_listener_certificate.extra[\"legacy\"]",
        "certificate_arn",
    );
    let certificates = json!({"listenerArn": listener, "certificates": [{"certificateArn": cert}]});
    ok(
        &mut c,
        elb,
        "RemoveListenerCertificates",
        certificates.clone(),
    );
    assert_eq!(count(&c, "aws_lb_listener_certificate"), 0);
    ok(&mut c, elb, "AddListenerCertificates", certificates);
    assert_eq!(
        attrs(&c, "aws_lb_listener_certificate", "certificate_arn", &cert)["id"],
        json!(format!("{listener}_{cert}"))
    );
}

#[test]
fn media_attachments_follow_their_calls() {
    let mut c = project_cloud("media");
    let bucket = "reelhouse-prod-media";
    let xmlns = "http://s3.amazonaws.com/doc/2006-03-01/";
    ok(
        &mut c,
        S3,
        "PutBucketAccelerateConfiguration",
        s3(
            bucket,
            "AccelerateConfiguration",
            json!({"xmlns": xmlns, "Status": "Suspended"}),
            "accelerate",
        ),
    );
    let accelerate = attrs(
        &c,
        "aws_s3_bucket_accelerate_configuration",
        "bucket",
        bucket,
    );
    assert_eq!(accelerate["status"], json!("Suspended"));
    fails(
        &mut c,
        S3,
        "PutObjectLockConfiguration",
        s3(
            "reelhouse-prod-media-replica",
            "ObjectLockConfiguration",
            json!({"xmlns": xmlns, "ObjectLockEnabled": "Enabled"}),
            "object-lock",
        ),
        "InvalidBucketState",
    );

    // A multi-Region key and its replica share their id: the region tells them apart.
    let key = "mrk-4d93b94fb6e16366386a521e6aa00509";
    let described = c
        .execute(
            &Request::new(
                "kms.amazonaws.com",
                "UpdateKeyDescription",
                json!({"keyId": key, "description": "replica, reviewed"}),
            )
            .in_region("ca-west-1"),
            &cli(),
        )
        .expect("modelled");
    assert_eq!(described.record["awsRegion"], json!("ca-west-1"));
    assert_eq!(
        attrs(&c, "aws_kms_replica_key", "id", key)["description"],
        json!("replica, reviewed")
    );
    assert_eq!(
        attrs(&c, "aws_kms_key", "id", key)["description"],
        json!("reelhouse-prod media encryption")
    );

    let warm = ok(
        &mut c,
        "lambda.amazonaws.com",
        "PutProvisionedConcurrencyConfig",
        json!({"functionName": "reelhouse-prod-transcode", "qualifier": "live",
            "provisionedConcurrentExecutions": 8}),
    );
    assert_eq!(
        warm.record["eventName"],
        json!("PutProvisionedConcurrencyConfig20190930")
    );
    assert_eq!(
        attrs(
            &c,
            "aws_lambda_provisioned_concurrency_config",
            "qualifier",
            "live"
        )["provisioned_concurrent_executions"],
        json!(8)
    );

    let grant = attrs(&c, "aws_kms_grant", "key_id", key)["grant_id"].clone();
    ok(
        &mut c,
        "kms.amazonaws.com",
        "RevokeGrant",
        json!({"keyId": key, "grantId": grant}),
    );
    assert_eq!(count(&c, "aws_kms_grant"), 0);

    let table = "table/reelhouse-prod-jobs";
    fails(
        &mut c,
        "application-autoscaling.amazonaws.com",
        "RegisterScalableTarget",
        json!({"serviceNamespace": "dynamodb", "resourceId": table,
            "scalableDimension": "dynamodb:table:ReadCapacityUnits", "minCapacity": 500}),
        "ValidationException",
    );
    let lb = attrs(&c, "aws_lb", "name", "reelhouse-prod-api")["arn"].clone();
    ok(
        &mut c,
        "wafv2.amazonaws.com",
        "DisassociateWebACL",
        json!({"resourceArn": lb}),
    );
    assert_eq!(count(&c, "aws_wafv2_web_acl_association"), 0);
}
