//! Collections, defaults and dialects, on projects written the way public modules write them:
//! `count` given as a string, provider `default_tags`, a security group whose rules are
//! separate resources, a `for_each` module over a root list, a deletion other resources read,
//! `count` instances deleted, a rule revoked whose CIDRs come from variables, and provider
//! defaults kept out of new code.
#![allow(clippy::unwrap_used)]

use crate::common;

use serde_json::{Value, json};

const PROVIDER: &str = "provider[\"registry.terraform.io/hashicorp/aws\"]";

/// A state resource with one instance per `(index key, attributes)`.
fn resource(module: Option<&str>, kind: &str, name: &str, instances: Vec<(Value, Value)>) -> Value {
    let instances: Vec<Value> = instances
        .into_iter()
        .map(|(key, attributes)| {
            let mut instance = json!({"schema_version": 0, "attributes": attributes});
            if !key.is_null() {
                instance["index_key"] = key;
            }
            instance
        })
        .collect();
    let mut r = json!({
        "mode": "managed", "type": kind, "name": name, "provider": PROVIDER,
        "instances": instances
    });
    if let Some(module) = module {
        r["module"] = json!(module);
    }
    r
}

fn state(resources: Vec<Value>) -> Value {
    json!({
        "version": 4, "terraform_version": "1.11.4", "serial": 1, "lineage": "collections",
        "outputs": {}, "resources": resources
    })
}

/// One CloudTrail record by alice from the console.
fn call(source: &str, name: &str, request: Value, response: Value) -> Value {
    json!({
        "eventVersion": "1.09",
        "userIdentity": {"type": "IAMUser", "principalId": "AIDAEXAMPLE",
                         "arn": "arn:aws:iam::123456789012:user/alice", "accountId": "123456789012",
                         "accessKeyId": "ASIAEXAMPLE", "userName": "alice"},
        "eventTime": "2026-11-20T09:05:00Z", "eventSource": source, "eventName": name,
        "awsRegion": "eu-west-1", "sourceIPAddress": "203.0.113.7", "userAgent": "AWS Internal",
        "sessionCredentialFromConsole": "true",
        "requestParameters": request, "responseElements": response,
        "requestID": format!("r-{name}"), "eventID": format!("e-{name}"), "readOnly": false,
        "eventType": "AwsApiCall", "managementEvent": true, "recipientAccountId": "123456789012"
    })
}

/// The project written to a temporary directory, reconciled against `records`: exit code and
/// the JSON report.
fn reconcile(files: &[(&str, &str)], state: &Value, records: Vec<Value>) -> (i32, Value) {
    let dir = project(files, state, records);
    reconcile_in(dir.path(), &[])
}

/// The files, the state and a trail of `records` in a temporary directory.
fn project(files: &[(&str, &str)], state: &Value, records: Vec<Value>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let state_file = dir.path().join("terraform.tfstate");
    std::fs::write(&state_file, state.to_string()).unwrap();
    let trail = dir.path().join("trail.json");
    std::fs::write(&trail, json!({"Records": records}).to_string()).unwrap();
    dir
}

/// `retrace reconcile` of the project, state and trail in `dir` (as [`reconcile`] writes
/// them), with `extra` arguments: exit code and the JSON report.
fn reconcile_in(dir: &std::path::Path, extra: &[&str]) -> (i32, Value) {
    let (project, state, trail) = (
        dir.to_str().unwrap().to_owned(),
        dir.join("terraform.tfstate"),
        dir.join("trail.json"),
    );
    let mut args = vec![
        "reconcile",
        "--project",
        &project,
        "--state",
        state.to_str().unwrap(),
        "--logs",
        trail.to_str().unwrap(),
        "--no-record",
        "--no-terraform",
        "--format",
        "json",
    ];
    args.extend(extra);
    let output = common::retrace(&args);
    (output.status.code().unwrap_or(-1), common::json(&output))
}

fn diff_of(doc: &Value) -> &str {
    doc["diff"].as_str().unwrap_or("")
}

const BUCKETS: &str = r#"provider "aws" {
  region = "eu-west-1"

  default_tags {
    tags = {
      Environment = "prod"
      Team        = "data"
    }
  }
}

resource "aws_s3_bucket" "logs" {
  bucket = "acme-logs"

  tags = {
    Name = "logs"
  }
}
"#;

fn bucket(name: &str, own: Value) -> Value {
    let mut all = json!({"Environment": "prod", "Team": "data"});
    for (k, v) in own.as_object().unwrap() {
        all[k] = v.clone();
    }
    resource(
        None,
        "aws_s3_bucket",
        name,
        vec![(
            Value::Null,
            json!({
                "id": format!("acme-{name}"), "bucket": format!("acme-{name}"),
                "arn": format!("arn:aws:s3:::acme-{name}"), "tags": own, "tags_all": all
            }),
        )],
    )
}

fn put_bucket_tagging(bucket: &str, tags: &[(&str, &str)]) -> Value {
    let tags: Vec<Value> = tags
        .iter()
        .map(|(k, v)| json!({"Key": k, "Value": v}))
        .collect();
    call(
        "s3.amazonaws.com",
        "PutBucketTagging",
        json!({"bucketName": bucket, "tagging": "", "Tagging": {"TagSet": {"Tag": tags}}}),
        Value::Null,
    )
}

#[test]
fn tags_the_provider_already_gives_are_not_copied_into_the_resource() {
    // the console sends the full set, the provider's default tags included
    let (code, doc) = reconcile(
        &[("main.tf", BUCKETS)],
        &state(vec![bucket("logs", json!({"Name": "logs"}))]),
        vec![put_bucket_tagging(
            "acme-logs",
            &[
                ("Name", "logs"),
                ("Environment", "prod"),
                ("Team", "data"),
                ("Owner", "ops"),
            ],
        )],
    );
    assert_eq!(code, 2, "{doc}");
    let diff = diff_of(&doc);
    assert!(diff.contains("+    Owner = \"ops\""), "{diff}");
    assert!(!diff.contains("+    Environment"), "{diff}");
    assert!(!diff.contains("+    Team"), "{diff}");
}

#[test]
fn a_new_value_of_a_default_tag_goes_on_default_tags_or_is_held() {
    let retag = |bucket: &str| {
        put_bucket_tagging(
            bucket,
            &[
                ("Name", "logs"),
                ("Environment", "prod"),
                ("Team", "platform"),
            ],
        )
    };
    // the only resource that gets Team from the provider: written on default_tags
    let (code, doc) = reconcile(
        &[("main.tf", BUCKETS)],
        &state(vec![bucket("logs", json!({"Name": "logs"}))]),
        vec![retag("acme-logs")],
    );
    assert_eq!(code, 2, "{doc}");
    let diff = diff_of(&doc);
    assert!(diff.contains("-      Team        = \"data\""), "{diff}");
    assert!(diff.contains("+      Team        = \"platform\""), "{diff}");
    assert!(!diff.contains("+    Team"), "{diff}");
    // a second bucket gets Team from the provider too and was not retagged: held, named
    let second = "resource \"aws_s3_bucket\" \"audit\" {\n  bucket = \"acme-audit\"\n}\n";
    let (code, doc) = reconcile(
        &[("main.tf", BUCKETS), ("audit.tf", second)],
        &state(vec![
            bucket("logs", json!({"Name": "logs"})),
            bucket("audit", json!({})),
        ]),
        vec![retag("acme-logs")],
    );
    assert_eq!(code, 3, "{doc}");
    assert_eq!(diff_of(&doc), "", "{doc}");
    let text = doc.to_string();
    assert!(text.contains("default_tags"), "{text}");
    assert!(text.contains("aws_s3_bucket.audit"), "{text}");
}

const LEGACY_GROUP: &str = r#"resource "aws_security_group" "web" {
  name   = "web"
  vpc_id = "vpc-0a1b2c3d"
}

resource "aws_security_group_rule" "https" {
  type              = "ingress"
  from_port         = 443
  to_port           = 443
  protocol          = "tcp"
  cidr_blocks       = ["10.0.0.0/16"]
  security_group_id = aws_security_group.web.id
}
"#;

#[test]
fn a_rule_added_to_a_group_with_separate_rule_resources_becomes_one_more() {
    let https = json!({"cidr_blocks": ["10.0.0.0/16"], "description": "", "from_port": 443,
        "ipv6_cidr_blocks": [], "prefix_list_ids": [], "protocol": "tcp", "security_groups": [],
        "self": false, "to_port": 443});
    let state = state(vec![
        resource(
            None,
            "aws_security_group",
            "web",
            vec![(
                Value::Null,
                json!({
                    "id": "sg-0123456789abcdef0", "name": "web", "vpc_id": "vpc-0a1b2c3d",
                    "description": "Managed by Terraform", "ingress": [https], "egress": [],
                    "tags": {}, "tags_all": {}
                }),
            )],
        ),
        resource(
            None,
            "aws_security_group_rule",
            "https",
            vec![(
                Value::Null,
                json!({
                    "id": "sgrule-1", "type": "ingress", "from_port": 443, "to_port": 443, "protocol": "tcp",
                    "cidr_blocks": ["10.0.0.0/16"], "security_group_id": "sg-0123456789abcdef0"
                }),
            )],
        ),
    ]);
    let authorize = call(
        "ec2.amazonaws.com",
        "AuthorizeSecurityGroupIngress",
        json!({"groupId": "sg-0123456789abcdef0", "ipPermissions": {"items": [{
            "ipProtocol": "tcp", "fromPort": 80, "toPort": 80, "groups": {},
            "ipRanges": {"items": [{"cidrIp": "10.0.0.0/16"}]}, "ipv6Ranges": {}, "prefixListIds": {}
        }]}}),
        json!({"_return": true}),
    );
    let (code, doc) = reconcile(&[("main.tf", LEGACY_GROUP)], &state, vec![authorize]);
    assert_eq!(code, 2, "{doc}");
    let diff = diff_of(&doc);
    assert!(
        !diff.contains("ingress {"),
        "no inline block beside rule resources: {diff}"
    );
    assert!(
        diff.contains("+resource \"aws_security_group_rule\" \"web_ingress_80\" {"),
        "{diff}"
    );
    assert!(
        diff.contains("+  security_group_id = aws_security_group.web.id"),
        "{diff}"
    );
    assert!(
        diff.contains("+  id = \"sg-0123456789abcdef0_ingress_tcp_80_80_10.0.0.0/16\""),
        "{diff}"
    );
}

const USERS_ROOT: &str = r#"variable "user_names" {
  description = "IAM users to create"
  type        = list(string)
  default     = ["neo", "trinity", "morpheus"]
}

module "users" {
  source   = "./modules/user"
  for_each = toset(var.user_names)

  name = each.value
}
"#;

const USER_MODULE: &str = r#"variable "name" {
  type = string
}

resource "aws_iam_user" "this" {
  name = var.name
}

output "arn" {
  value = aws_iam_user.this.arn
}
"#;

#[test]
fn a_user_of_a_for_each_module_deleted_drops_its_name_from_the_roots_list() {
    let delete = call(
        "iam.amazonaws.com",
        "DeleteUser",
        json!({"userName": "trinity"}),
        Value::Null,
    );
    let (code, doc) = reconcile(
        &[
            ("main.tf", USERS_ROOT),
            ("modules/user/main.tf", USER_MODULE),
        ],
        &users(&["neo", "trinity", "morpheus"]),
        vec![delete],
    );
    assert_eq!(code, 2, "{doc}");
    let diff = diff_of(&doc);
    assert!(
        diff.contains("+  default     = [\"neo\", \"morpheus\"]"),
        "{diff}"
    );
    assert!(
        !diff.contains("modules/user"),
        "the shared module is left alone: {diff}"
    );
}

const ASSOCIATIONS: &str = r#"resource "aws_route_table_association" "public" {
  count = 2

  subnet_id      = "subnet-0${count.index}"
  route_table_id = "rtb-0a"
}
"#;

/// Two `count` associations, `rtbassoc-0` and `rtbassoc-1`, one disassociated out of band.
fn disassociated(index: usize) -> (i32, Value) {
    let instances = (0..2)
        .map(|i| {
            (
                json!(i),
                json!({"id": format!("rtbassoc-{i}"), "subnet_id": format!("subnet-0{i}"),
                       "route_table_id": "rtb-0a", "gateway_id": ""}),
            )
        })
        .collect();
    let state = state(vec![resource(
        None,
        "aws_route_table_association",
        "public",
        instances,
    )]);
    let disassociate = call(
        "ec2.amazonaws.com",
        "DisassociateRouteTable",
        json!({"associationId": format!("rtbassoc-{index}")}),
        json!({"_return": true}),
    );
    reconcile(&[("main.tf", ASSOCIATIONS)], &state, vec![disassociate])
}

#[test]
fn the_last_instance_of_a_count_written_as_a_number_goes_by_lowering_it() {
    let (code, doc) = disassociated(1);
    assert_eq!(code, 2, "{doc}");
    let diff = diff_of(&doc);
    assert!(diff.contains("-  count = 2\n+  count = 1\n"), "{diff}");
}

#[test]
fn an_earlier_instance_of_a_count_is_held_with_the_instances_it_would_renumber() {
    let (code, doc) = disassociated(0);
    assert_eq!(code, 3, "{doc}");
    assert_eq!(diff_of(&doc), "", "{doc}");
    let text = doc.to_string();
    assert!(
        text.contains("would renumber aws_route_table_association.public[1] after it"),
        "{doc}"
    );
}

const GROUP_FROM_VARIABLES: &str = r#"variable "vpc_cidr" {
  default = "10.60.0.0/16"
}

variable "office_cidr" {
  default = "192.168.0.0/16"
}

resource "aws_security_group" "lb" {
  name   = "lb"
  vpc_id = "vpc-0a1b2c3d"

  ingress {
    description = "HTTPS from the VPC and the office"
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = [var.vpc_cidr, var.office_cidr]
  }

  ingress {
    from_port   = 80
    to_port     = 80
    protocol    = "tcp"
    cidr_blocks = [var.vpc_cidr]
  }
}
"#;

#[test]
fn a_revoked_rule_whose_cidrs_come_from_variables_leaves_the_code() {
    let rule = |port: i64, description: &str, cidrs: Value| {
        json!({"cidr_blocks": cidrs, "description": description, "from_port": port,
            "ipv6_cidr_blocks": [], "prefix_list_ids": [], "protocol": "tcp",
            "security_groups": [], "self": false, "to_port": port})
    };
    let https = rule(
        443,
        "HTTPS from the VPC and the office",
        json!(["10.60.0.0/16", "192.168.0.0/16"]),
    );
    let http = rule(80, "", json!(["10.60.0.0/16"]));
    let state = state(vec![resource(
        None,
        "aws_security_group",
        "lb",
        vec![(
            Value::Null,
            json!({
                "id": "sg-0123456789abcdef0", "name": "lb", "vpc_id": "vpc-0a1b2c3d",
                "description": "Managed by Terraform", "ingress": [https, http], "egress": [],
                "tags": {}, "tags_all": {}
            }),
        )],
    )]);
    let revoke = call(
        "ec2.amazonaws.com",
        "RevokeSecurityGroupIngress",
        json!({"groupId": "sg-0123456789abcdef0", "ipPermissions": {"items": [{
            "ipProtocol": "tcp", "fromPort": 443, "toPort": 443, "groups": {},
            "ipRanges": {"items": [{"cidrIp": "10.60.0.0/16", "description": "HTTPS from the VPC and the office"},
                                   {"cidrIp": "192.168.0.0/16", "description": "HTTPS from the VPC and the office"}]},
            "ipv6Ranges": {}, "prefixListIds": {}
        }]}}),
        json!({"_return": true}),
    );
    let (code, doc) = reconcile(&[("main.tf", GROUP_FROM_VARIABLES)], &state, vec![revoke]);
    assert_eq!(code, 2, "{doc}");
    let diff = diff_of(&doc);
    assert!(
        diff.contains("-    cidr_blocks = [var.vpc_cidr, var.office_cidr]"),
        "{diff}"
    );
    assert!(!diff.contains("-    from_port   = 80"), "{diff}");
}

/// The default security group's rules from a list of maps, read with `lookup` as public VPC
/// modules read them; `extra` is added after the resource.
fn default_group(extra: &str) -> String {
    format!(
        r#"variable "default_security_group_ingress" {{
  description = "Rules of the default security group."
  type        = list(map(string))
  default = [
    {{ protocol = "tcp", from_port = "80", to_port = "80", cidr_blocks = "10.2.0.0/16" }},
    {{ protocol = "tcp", from_port = "443", to_port = "443", cidr_blocks = "10.0.0.0/8" }},
    {{ protocol = "tcp", from_port = "22", to_port = "22", cidr_blocks = "10.1.0.0/16" }},
  ]
}}

resource "aws_default_security_group" "this" {{
  vpc_id = "vpc-0a1b2c3d"

  dynamic "ingress" {{
    for_each = var.default_security_group_ingress
    content {{
      self        = lookup(ingress.value, "self", null)
      cidr_blocks = compact(split(",", lookup(ingress.value, "cidr_blocks", "")))
      from_port   = lookup(ingress.value, "from_port", 0)
      to_port     = lookup(ingress.value, "to_port", 0)
      protocol    = lookup(ingress.value, "protocol", "-1")
    }}
  }}
}}
{extra}"#
    )
}

/// Rules 80 and 22 of [`default_group`] revoked in one call.
fn default_rules_revoked(files: &[(&str, &str)]) -> (i32, Value) {
    let rule = |port: i64, cidr: &str| {
        json!({"cidr_blocks": [cidr], "description": "", "from_port": port,
            "ipv6_cidr_blocks": [], "prefix_list_ids": [], "protocol": "tcp",
            "security_groups": [], "self": false, "to_port": port})
    };
    let state = state(vec![resource(
        None,
        "aws_default_security_group",
        "this",
        vec![(
            Value::Null,
            json!({
                "id": "sg-0fedcba987654321", "name": "default", "vpc_id": "vpc-0a1b2c3d",
                "ingress": [rule(80, "10.2.0.0/16"), rule(443, "10.0.0.0/8"), rule(22, "10.1.0.0/16")],
                "egress": [], "tags": {}, "tags_all": {}
            }),
        )],
    )]);
    let permission = |port: i64, cidr: &str| {
        json!({"ipProtocol": "tcp", "fromPort": port, "toPort": port, "groups": {},
            "ipRanges": {"items": [{"cidrIp": cidr}]}, "ipv6Ranges": {}, "prefixListIds": {}})
    };
    let revoke = call(
        "ec2.amazonaws.com",
        "RevokeSecurityGroupIngress",
        json!({"groupId": "sg-0fedcba987654321", "ipPermissions": {"items": [
            permission(80, "10.2.0.0/16"), permission(22, "10.1.0.0/16")
        ]}}),
        json!({"_return": true}),
    );
    reconcile(files, &state, vec![revoke])
}

#[test]
fn rules_revoked_from_a_dynamic_block_leave_the_list_it_iterates() {
    let main = default_group("");
    let (code, doc) = default_rules_revoked(&[("main.tf", &main)]);
    assert_eq!(code, 2, "{doc}");
    let diff = diff_of(&doc);
    // Entries 0 and 2 go (the second removal counts out the first); 443 stays.
    assert!(
        diff.contains(r#"-    { protocol = "tcp", from_port = "80""#),
        "{diff}"
    );
    assert!(
        diff.contains(r#"-    { protocol = "tcp", from_port = "22""#),
        "{diff}"
    );
    assert!(
        !diff.contains(r#"-    { protocol = "tcp", from_port = "443""#),
        "{diff}"
    );
    let changed = diff
        .lines()
        .filter(|l| l.starts_with(['-', '+']) && !l.starts_with("---") && !l.starts_with("+++"))
        .count();
    assert_eq!(changed, 2, "{diff}");
}

#[test]
fn rules_revoked_from_a_dynamic_block_are_held_when_another_block_reads_the_list() {
    let output = r#"
output "default_ingress" {
  value = var.default_security_group_ingress
}
"#;
    let main = default_group(output);
    let (code, doc) = default_rules_revoked(&[("main.tf", &main)]);
    assert_eq!(code, 3, "{doc}");
    assert_eq!(diff_of(&doc), "", "{doc}");
    let text = doc.to_string();
    assert!(
        text.contains("writes its `ingress` blocks with a `dynamic` block; var.default_security_group_ingress is also read by output.default_ingress, which would change too"),
        "{text}"
    );
}

/// A group whose `ingress` blocks come from a root list of objects the content reads field by
/// field; the list is written in `terraform.tfvars`.
const GROUP_FROM_A_LIST: &str = r#"variable "ingress_rules" {
  description = "Ingress rules of the web group."
  type = list(object({
    port        = number
    cidr_blocks = list(string)
  }))
}

resource "aws_security_group" "web" {
  name   = "web"
  vpc_id = "vpc-0a1b2c3d"

  dynamic "ingress" {
    for_each = var.ingress_rules
    content {
      protocol    = "tcp"
      from_port   = ingress.value.port
      to_port     = ingress.value.port
      cidr_blocks = ingress.value.cidr_blocks
    }
  }
}
"#;

const RULES_TFVARS: &str = r#"ingress_rules = [
  { port = 443, cidr_blocks = ["10.0.0.0/8"] },
]
"#;

/// `AuthorizeSecurityGroupIngress` of tcp `port` from `cidr` on [`GROUP_FROM_A_LIST`]'s group.
fn rule_authorized(protocol: &str, port: i64, cidr: &str) -> (i32, Value, String) {
    let rule = json!({"cidr_blocks": ["10.0.0.0/8"], "description": "", "from_port": 443,
        "ipv6_cidr_blocks": [], "prefix_list_ids": [], "protocol": "tcp",
        "security_groups": [], "self": false, "to_port": 443});
    let state = state(vec![resource(
        None,
        "aws_security_group",
        "web",
        vec![(
            Value::Null,
            json!({
                "id": "sg-0aaaabbbbccccdddd", "name": "web", "vpc_id": "vpc-0a1b2c3d",
                "description": "Managed by Terraform", "ingress": [rule], "egress": [],
                "tags": {}, "tags_all": {}
            }),
        )],
    )]);
    let authorize = call(
        "ec2.amazonaws.com",
        "AuthorizeSecurityGroupIngress",
        json!({"groupId": "sg-0aaaabbbbccccdddd", "ipPermissions": {"items": [{
            "ipProtocol": protocol, "fromPort": port, "toPort": port, "groups": {},
            "ipRanges": {"items": [{"cidrIp": cidr}]}, "ipv6Ranges": {}, "prefixListIds": {}
        }]}}),
        json!({"_return": true, "securityGroupRuleSet": {"items": [{
            "groupId": "sg-0aaaabbbbccccdddd", "securityGroupRuleId": "sgr-0123456789abcdef0",
            "isEgress": false, "ipProtocol": protocol, "fromPort": port, "toPort": port,
            "cidrIpv4": cidr
        }]}}),
    );
    let (code, doc) = reconcile(
        &[
            ("main.tf", GROUP_FROM_A_LIST),
            ("terraform.tfvars", RULES_TFVARS),
        ],
        &state,
        vec![authorize],
    );
    let diff = diff_of(&doc).to_owned();
    (code, doc, diff)
}

#[test]
fn a_rule_added_to_a_group_whose_rules_come_from_a_list_is_a_new_entry() {
    let (code, doc, diff) = rule_authorized("tcp", 8443, "10.3.0.0/16");
    assert_eq!(code, 2, "{doc}");
    assert!(
        diff.contains(
            "   { port = 443, cidr_blocks = [\"10.0.0.0/8\"] },\n+  { port = 8443, cidr_blocks = [\"10.3.0.0/16\"] },\n ]"
        ),
        "{diff}"
    );
    assert!(!diff.contains("main.tf"), "{diff}");
}

#[test]
fn a_rule_the_dynamic_content_cannot_write_goes_beside_it_with_the_reason() {
    // UDP: the content writes `protocol = "tcp"` for every entry.
    let (code, doc, diff) = rule_authorized("udp", 53, "10.3.0.0/16");
    assert_eq!(code, 2, "{doc}");
    assert!(diff.contains("+  ingress {"), "{diff}");
    assert!(!diff.contains("terraform.tfvars"), "{diff}");
    assert!(
        doc.to_string().contains(
            "written beside the `dynamic \\\"ingress\\\"` block, since its `protocol` does not come from the entry and differs from the new block's"
        ),
        "{doc}"
    );
}

/// A key module with an alias, as public KMS modules write it: outputs for both.
const KEY_MODULE: &str = r#"resource "aws_kms_key" "this" {
  description = "Data key"
}

resource "aws_kms_alias" "this" {
  name          = "alias/data"
  target_key_id = aws_kms_key.this.key_id
}

output "key_arn" {
  value = aws_kms_key.this.arn
}

output "alias_name" {
  value = aws_kms_alias.this.name
}
"#;

/// The alias of [`KEY_MODULE`] deleted out of band, the root written as `root`.
fn alias_deleted(root: &str) -> (i32, Value) {
    let key_arn = "arn:aws:kms:eu-west-1:123456789012:key/0b1c2d3e-aaaa-bbbb-cccc-1234567890ab";
    let state = state(vec![
        resource(
            Some("module.kms"),
            "aws_kms_key",
            "this",
            vec![(
                Value::Null,
                json!({"id": "0b1c2d3e-aaaa-bbbb-cccc-1234567890ab", "key_id": "0b1c2d3e-aaaa-bbbb-cccc-1234567890ab",
                       "arn": key_arn, "description": "Data key", "tags": {}, "tags_all": {}}),
            )],
        ),
        resource(
            Some("module.kms"),
            "aws_kms_alias",
            "this",
            vec![(
                Value::Null,
                json!({"id": "alias/data", "name": "alias/data",
                       "arn": "arn:aws:kms:eu-west-1:123456789012:alias/data",
                       "target_key_id": "0b1c2d3e-aaaa-bbbb-cccc-1234567890ab"}),
            )],
        ),
    ]);
    let delete = call(
        "kms.amazonaws.com",
        "DeleteAlias",
        json!({"aliasName": "alias/data"}),
        Value::Null,
    );
    reconcile(
        &[("main.tf", root), ("modules/kms/main.tf", KEY_MODULE)],
        &state,
        vec![delete],
    )
}

#[test]
fn a_deleted_resource_takes_the_module_output_no_caller_reads_with_it() {
    let root = "module \"kms\" {\n  source = \"./modules/kms\"\n}\n\noutput \"key\" {\n  value = module.kms.key_arn\n}\n";
    let (code, doc) = alias_deleted(root);
    assert_eq!(code, 2, "{doc}");
    let diff = diff_of(&doc);
    assert!(
        diff.contains("-resource \"aws_kms_alias\" \"this\" {"),
        "{diff}"
    );
    assert!(diff.contains("-output \"alias_name\" {"), "{diff}");
    assert!(!diff.contains("-output \"key_arn\""), "{diff}");
}

#[test]
fn a_deleted_resource_whose_output_the_caller_reads_is_held_with_the_reference_named() {
    let root = "module \"kms\" {\n  source = \"./modules/kms\"\n}\n\noutput \"alias\" {\n  value = module.kms.alias_name\n}\n";
    let (code, doc) = alias_deleted(root);
    assert_eq!(code, 3, "{doc}");
    assert_eq!(diff_of(&doc), "", "{doc}");
    let text = doc.to_string();
    assert!(
        text.contains("module.kms.aws_kms_alias.this was deleted outside Terraform, but output.alias_name (modules/kms/main.tf) refers to it"),
        "{text}"
    );
}

#[test]
fn count_given_as_a_string_is_converted_as_terraform_converts_it() {
    let dir = tempfile::tempdir().unwrap();
    let main = r#"variable "replicas" {
  default = "2"
}

resource "aws_sqs_queue" "worker" {
  count = var.replicas
  name  = "worker-${count.index}"
}

resource "aws_sqs_queue" "spare" {
  count = "1"
  name  = "spare"
}
"#;
    std::fs::write(dir.path().join("main.tf"), main).unwrap();
    let output = common::retrace(&[
        "check-config",
        "--project",
        dir.path().to_str().unwrap(),
        "--format",
        "json",
    ]);
    let doc = common::json(&output);
    assert_eq!(output.status.code(), Some(0), "{doc}");
}

#[test]
fn a_new_queue_leaves_out_arguments_at_the_providers_defaults() {
    let tags = json!({"Env": "prod", "Project": "shop"});
    let create = call(
        "sqs.amazonaws.com",
        "CreateQueue",
        json!({"queueName": "shop-prod-reports", "tags": tags,
               "attributes": {"VisibilityTimeout": "30", "DelaySeconds": "5"}}),
        json!({"queueUrl": "https://sqs.eu-west-1.amazonaws.com/123456789012/shop-prod-reports"}),
    );
    let block = |name: &str| {
        format!(
            "resource \"aws_sqs_queue\" \"{name}\" {{\n  name = \"shop-prod-{name}\"\n\n  tags = {{\n    Env     = \"prod\"\n    Project = \"shop\"\n  }}\n}}\n"
        )
    };
    let main = format!("{}\n{}", block("orders"), block("payments"));
    let queue = |name: &str| {
        let url = format!("https://sqs.eu-west-1.amazonaws.com/123456789012/shop-prod-{name}");
        resource(
            None,
            "aws_sqs_queue",
            name,
            vec![(
                Value::Null,
                json!({
                    "id": url, "url": url, "name": format!("shop-prod-{name}"),
                    "arn": format!("arn:aws:sqs:eu-west-1:123456789012:shop-prod-{name}"),
                    "tags": tags, "tags_all": tags
                }),
            )],
        )
    };
    let state = state(vec![queue("orders"), queue("payments")]);
    let (code, doc) = reconcile(&[("main.tf", &main)], &state, vec![create]);
    assert_eq!(code, 2, "{doc}");
    let diff = diff_of(&doc);
    assert!(diff.contains("+  delay_seconds = 5"), "{diff}");
    assert!(!diff.contains("visibility_timeout_seconds"), "{diff}");
}

#[test]
fn a_new_service_leaves_out_top_level_and_nested_arguments_at_the_providers_defaults() {
    let cluster = "arn:aws:ecs:eu-west-1:123456789012:cluster/shop";
    let service_arn =
        |name: &str| format!("arn:aws:ecs:eu-west-1:123456789012:service/shop/{name}");
    let create = call(
        "ecs.amazonaws.com",
        "CreateService",
        json!({"serviceName": "worker", "cluster": "shop", "taskDefinition": "worker:3",
               "desiredCount": 2, "launchType": "FARGATE", "schedulingStrategy": "REPLICA",
               "networkConfiguration": {"awsvpcConfiguration": {
                   "subnets": ["subnet-0a1b2c3d"], "assignPublicIp": "DISABLED"}},
               "tags": [{"key": "Project", "value": "shop"}]}),
        json!({"service": {"serviceArn": service_arn("worker"), "clusterArn": cluster}}),
    );
    let main = "resource \"aws_ecs_service\" \"api\" {\n  name            = \"api\"\n  cluster         = \"arn:aws:ecs:eu-west-1:123456789012:cluster/shop\"\n  task_definition = \"api:7\"\n  desired_count   = 2\n  launch_type     = \"FARGATE\"\n\n  network_configuration {\n    subnets = [\"subnet-0a1b2c3d\"]\n  }\n\n  tags = {\n    Project = \"shop\"\n  }\n}\n";
    let api = resource(
        None,
        "aws_ecs_service",
        "api",
        vec![(
            Value::Null,
            json!({
                "id": service_arn("api"), "name": "api", "cluster": cluster,
                "task_definition": "api:7", "desired_count": 2, "launch_type": "FARGATE",
                "scheduling_strategy": "REPLICA",
                "network_configuration": [{"subnets": ["subnet-0a1b2c3d"],
                                           "security_groups": [], "assign_public_ip": false}],
                "tags": {"Project": "shop"}, "tags_all": {"Project": "shop"}
            }),
        )],
    );
    let shop = resource(
        None,
        "aws_ecs_cluster",
        "shop",
        vec![(
            Value::Null,
            json!({"id": cluster, "arn": cluster, "name": "shop",
                   "tags": {"Project": "shop"}, "tags_all": {"Project": "shop"}}),
        )],
    );
    let main = format!(
        "resource \"aws_ecs_cluster\" \"shop\" {{\n  name = \"shop\"\n\n  tags = {{\n    Project = \"shop\"\n  }}\n}}\n\n{main}"
    );
    let (code, doc) = reconcile(&[("main.tf", &main)], &state(vec![shop, api]), vec![create]);
    assert_eq!(code, 2, "{doc}");
    let diff = diff_of(&doc);
    assert!(diff.contains("name            = \"worker\""), "{diff}");
    assert!(diff.contains("subnets = [\"subnet-0a1b2c3d\"]"), "{diff}");
    assert!(!diff.contains("scheduling_strategy"), "{diff}");
    assert!(!diff.contains("assign_public_ip"), "{diff}");
}

/// A security group module in the style of the public ones: its rules are separate
/// `aws_security_group_rule` resources, one per entry of a list of string maps its caller
/// passes, read with `lookup()` by `count.index`, CIDRs comma-separated.
const RULE_LIST_MODULE: &str = r#"variable "name" {
  type = string
}

variable "vpc_id" {
  type = string
}

variable "create" {
  type    = bool
  default = true
}

variable "ingress_with_cidr_blocks" {
  description = "Ingress rules: from_port, to_port, protocol, description and comma-separated cidr_blocks"
  type        = list(map(string))
  default     = []
}

variable "ingress_cidr_blocks" {
  type    = list(string)
  default = []
}

resource "aws_security_group" "this" {
  count = var.create ? 1 : 0

  name   = var.name
  vpc_id = var.vpc_id
}

resource "aws_security_group_rule" "ingress_with_cidr_blocks" {
  count = var.create ? length(var.ingress_with_cidr_blocks) : 0

  security_group_id = aws_security_group.this[0].id
  type              = "ingress"

  cidr_blocks = compact(split(",", lookup(var.ingress_with_cidr_blocks[count.index], "cidr_blocks", join(",", var.ingress_cidr_blocks))))
  description = lookup(var.ingress_with_cidr_blocks[count.index], "description", "Ingress Rule")
  from_port   = lookup(var.ingress_with_cidr_blocks[count.index], "from_port")
  to_port     = lookup(var.ingress_with_cidr_blocks[count.index], "to_port")
  protocol    = lookup(var.ingress_with_cidr_blocks[count.index], "protocol")
}
"#;

const RULE_LIST_ROOT: &str = r#"module "web_sg" {
  source = "./modules/sg"

  name   = "web"
  vpc_id = "vpc-0a1b2c3d"

  ingress_with_cidr_blocks = [
    {
      from_port   = 443
      to_port     = 443
      protocol    = "tcp"
      description = "HTTPS"
      cidr_blocks = "10.0.0.0/16,10.1.0.0/16"
    },
  ]
}
"#;

/// `rule` authorized on the group of [`RULE_LIST_MODULE`] called by `root`.
fn module_rule_authorized(root: &str, rule: Value) -> (i32, Value, String) {
    module_rule_authorized_with(root, None, rule)
}

/// [`module_rule_authorized`] with a `terraform.tfvars`.
fn module_rule_authorized_with(
    root: &str,
    tfvars: Option<&str>,
    rule: Value,
) -> (i32, Value, String) {
    let dir = module_rule_project(root, tfvars, rule);
    let (code, doc) = reconcile_in(dir.path(), &[]);
    let diff = diff_of(&doc).to_owned();
    (code, doc, diff)
}

/// The project of [`module_rule_authorized_with`] in a temporary directory.
fn module_rule_project(root: &str, tfvars: Option<&str>, rule: Value) -> tempfile::TempDir {
    let https = json!({"cidr_blocks": ["10.0.0.0/16", "10.1.0.0/16"], "description": "HTTPS",
        "from_port": 443, "ipv6_cidr_blocks": [], "prefix_list_ids": [], "protocol": "tcp",
        "security_groups": [], "self": false, "to_port": 443});
    let state = state(vec![
        resource(
            Some("module.web_sg"),
            "aws_security_group",
            "this",
            vec![(
                json!(0),
                json!({
                    "id": "sg-0bbbbccccddddeeee", "name": "web", "vpc_id": "vpc-0a1b2c3d",
                    "description": "Managed by Terraform", "ingress": [https], "egress": [],
                    "tags": {}, "tags_all": {}
                }),
            )],
        ),
        resource(
            Some("module.web_sg"),
            "aws_security_group_rule",
            "ingress_with_cidr_blocks",
            vec![(
                json!(0),
                json!({
                    "id": "sgrule-2", "type": "ingress", "from_port": 443, "to_port": 443,
                    "protocol": "tcp", "cidr_blocks": ["10.0.0.0/16", "10.1.0.0/16"],
                    "description": "HTTPS", "ipv6_cidr_blocks": [], "prefix_list_ids": [],
                    "self": false, "security_group_id": "sg-0bbbbccccddddeeee",
                    "security_group_rule_id": "sgr-0aaa"
                }),
            )],
        ),
    ]);
    let authorize = call(
        "ec2.amazonaws.com",
        "AuthorizeSecurityGroupIngress",
        json!({"groupId": "sg-0bbbbccccddddeeee", "ipPermissions": {"items": [rule]}}),
        json!({"_return": true}),
    );
    let mut files = vec![("main.tf", root), ("modules/sg/main.tf", RULE_LIST_MODULE)];
    files.extend(tfvars.map(|text| ("terraform.tfvars", text)));
    project(&files, &state, vec![authorize])
}

#[test]
fn a_rule_added_to_a_module_whose_rules_come_from_its_callers_list_is_a_new_entry_there() {
    let rule = json!({"ipProtocol": "tcp", "fromPort": 8443, "toPort": 8443, "groups": {},
        "ipRanges": {"items": [{"cidrIp": "10.2.0.0/16", "description": "Admin"}]},
        "ipv6Ranges": {}, "prefixListIds": {}});
    let (code, doc, diff) = module_rule_authorized(RULE_LIST_ROOT, rule);
    assert_eq!(code, 2, "{doc}");
    // The entry is written like the one before it: the same fields in the same order, the
    // CIDRs comma-separated as the module splits them.
    assert!(
        diff.contains(
            "     },\n+    {\n+      from_port   = 8443\n+      to_port     = 8443\n+      protocol    = \"tcp\"\n+      description = \"Admin\"\n+      cidr_blocks = \"10.2.0.0/16\"\n+    },\n   ]"
        ),
        "{diff}"
    );
    assert!(
        !diff.contains("modules/sg"),
        "the shared module is not edited: {diff}"
    );
}

/// The 8443 rule of the test above, from `10.2.0.0/16`, described "Admin".
fn admin_rule() -> Value {
    json!({"ipProtocol": "tcp", "fromPort": 8443, "toPort": 8443, "groups": {},
        "ipRanges": {"items": [{"cidrIp": "10.2.0.0/16", "description": "Admin"}]},
        "ipv6Ranges": {}, "prefixListIds": {}})
}

#[test]
fn a_rule_added_to_a_module_fed_from_a_tfvars_list_is_a_new_entry_in_the_tfvars() {
    let root = r#"variable "web_ingress" {
  type = list(map(string))
}

module "web_sg" {
  source = "./modules/sg"

  name                     = "web"
  vpc_id                   = "vpc-0a1b2c3d"
  ingress_with_cidr_blocks = var.web_ingress
}
"#;
    let tfvars = r#"web_ingress = [
  { from_port = 443, to_port = 443, protocol = "tcp", description = "HTTPS", cidr_blocks = "10.0.0.0/16,10.1.0.0/16" },
]
"#;
    let (code, doc, diff) = module_rule_authorized_with(root, Some(tfvars), admin_rule());
    assert_eq!(code, 2, "{doc}");
    assert!(
        diff.contains(
            "+  { from_port = 8443, to_port = 8443, protocol = \"tcp\", description = \"Admin\", cidr_blocks = \"10.2.0.0/16\" },"
        ),
        "{diff}"
    );
    assert!(
        diff.contains("+  to = module.web_sg.aws_security_group_rule.ingress_with_cidr_blocks[1]"),
        "{diff}"
    );
}

#[test]
fn a_rule_the_modules_list_cannot_hold_is_held_with_the_reason() {
    // Entries naming a predefined rule by `rule`, as public security group modules allow:
    // retrace cannot tell which name a new rule would have.
    let named = RULE_LIST_ROOT.replace(
        "      from_port   = 443\n      to_port     = 443\n      protocol    = \"tcp\"\n",
        "      rule        = \"https-443-tcp\"\n",
    );
    let (code, doc, diff) = module_rule_authorized(&named, admin_rule());
    assert_eq!(code, 3, "{doc}");
    assert!(diff.is_empty(), "{diff}");
    let reason = doc["plan"]["unplanned"][0]["reason"].as_str().unwrap_or("");
    assert!(
        reason.contains("an inline `ingress` block would conflict with them")
            && reason.contains("is made from entries with `rule`"),
        "{reason}"
    );

    // A rule from another security group: the module writes no source group from this list.
    let from_a_group = json!({"ipProtocol": "tcp", "fromPort": 5432, "toPort": 5432,
        "groups": {"items": [{"groupId": "sg-0cccc1111dddd2222"}]}, "ipRanges": {},
        "ipv6Ranges": {}, "prefixListIds": {}});
    let (code, doc, _) = module_rule_authorized(RULE_LIST_ROOT, from_a_group);
    assert_eq!(code, 3, "{doc}");
    let reason = doc["plan"]["unplanned"][0]["reason"].as_str().unwrap_or("");
    assert!(
        reason.contains("writes `source_security_group_id` without its entry"),
        "{reason}"
    );
}

#[test]
fn a_second_night_over_the_same_rule_finds_it_in_the_modules_list() {
    let dir = module_rule_project(RULE_LIST_ROOT, None, admin_rule());
    let (code, doc) = reconcile_in(dir.path(), &["--write"]);
    assert_eq!(code, 2, "{doc}");
    let (code, doc) = reconcile_in(dir.path(), &[]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(diff_of(&doc), "", "{doc}");
    assert_eq!(
        doc["plan"]["settled"][0]["reason"],
        "already in the code: an import block brings this rule into module.web_sg.aws_security_group_rule.ingress_with_cidr_blocks[1]"
    );
}

/// [`USERS_ROOT`] with the names prefixed, the account's naming scheme.
fn users_root() -> String {
    USERS_ROOT.replace(
        "[\"neo\", \"trinity\", \"morpheus\"]",
        "[\"matrix-neo\", \"matrix-trinity\", \"matrix-morpheus\"]",
    )
}

/// A state with one user per name, each made by `module.users["NAME"]`.
fn users(names: &[&str]) -> Value {
    let users = names
        .iter()
        .map(|name| {
            resource(Some(&format!("module.users[\"{name}\"]")), "aws_iam_user", "this", vec![(Value::Null, json!({
                "id": name, "name": name, "path": "/", "arn": format!("arn:aws:iam::123456789012:user/{name}"),
                "tags": {}, "tags_all": {}
            }))])
        })
        .collect();
    state(users)
}

/// The three users of [`users_root`] in the state.
fn three_users() -> Value {
    users(&["matrix-neo", "matrix-trinity", "matrix-morpheus"])
}

/// `CreateUser` of `name` with `request` fields beside its name.
fn user_created(name: &str, mut request: Value) -> Value {
    request["userName"] = json!(name);
    call(
        "iam.amazonaws.com",
        "CreateUser",
        request,
        json!({"user": {"userName": name, "path": "/", "userId": "AIDASMITH",
            "arn": format!("arn:aws:iam::123456789012:user/{name}"),
            "createDate": "Nov 20, 2026 9:05:00 AM"}}),
    )
}

#[test]
fn a_user_created_like_the_for_each_modules_users_joins_the_roots_list() {
    let root = users_root();
    let files = [
        ("main.tf", root.as_str()),
        ("modules/user/main.tf", USER_MODULE),
    ];
    let create = user_created("matrix-smith", json!({}));
    let (code, doc) = reconcile(&files, &three_users(), vec![create]);
    assert_eq!(code, 2, "{doc}");
    let diff = diff_of(&doc);
    assert!(
        diff.contains(
            "+  default     = [\"matrix-neo\", \"matrix-trinity\", \"matrix-morpheus\", \"matrix-smith\"]"
        ),
        "{diff}"
    );
    assert!(
        diff.contains(
            "+import {\n+  to = module.users[\"matrix-smith\"].aws_iam_user.this\n+  id = \"matrix-smith\"\n+}"
        ),
        "{diff}"
    );
    assert!(!diff.contains("resource \"aws_iam_user\""), "{diff}");
    assert!(!diff.contains("modules/user"), "{diff}");
    // The plan check evaluated the new instance against the user the call created.
    assert_eq!(doc["validations"][0]["passed"], true, "{doc}");

    // A user the module's block would not make as it is (another path) is a block of its own.
    let create = user_created("matrix-smith", json!({"path": "/ops/"}));
    let (code, doc) = reconcile(&files, &three_users(), vec![create]);
    assert_eq!(code, 2, "{doc}");
    let diff = diff_of(&doc);
    assert!(diff.contains("+resource \"aws_iam_user\""), "{diff}");
    assert!(!diff.contains("default "), "{diff}");
}
