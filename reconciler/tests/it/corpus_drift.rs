//! Drift on real public projects (`../shared/terraform-corpus`, read-only): each project is
//! copied to a scratch directory with a state of its deployed resources, one resource is
//! changed out of band by a console user, and `retrace reconcile --write` must absorb it with
//! a minimal patch that `terraform fmt -check` accepts (when terraform is installed) and the
//! plan check passes.
//!
//! The corpus ships states with data sources only; the deployed resources' state is made
//! here from the configuration as retrace loads it (each instance's known arguments, an id
//! in the form AWS gives it), as `terraform apply` of unchanged code would leave it.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use reconciler::patch::diff_size;
use reconciler::terraform::config::{LoadOptions, Project};
use reconciler::terraform::state::{IndexKey, Mode, State};
use serde_json::{Value, json};

/// A corpus project copied into a scratch directory, with its state of deployed resources.
struct Deployed {
    _scratch: tempfile::TempDir,
    root: PathBuf,
    state: PathBuf,
    var_files: Vec<PathBuf>,
    /// The deployed state's resources, to find ids by address.
    resources: Vec<(String, Value)>,
}

impl Deployed {
    /// The attributes of the deployed instance at `address`.
    fn attributes(&self, address: &str) -> &Value {
        &self
            .resources
            .iter()
            .find(|(a, _)| a == address)
            .unwrap_or_else(|| panic!("{address} is not deployed"))
            .1
    }
}

/// Copies the corpus project `name` and writes the state of its deployed resources.
fn deploy(corpus: &Path, name: &str) -> Deployed {
    let listing: Value =
        serde_json::from_str(&std::fs::read_to_string(corpus.join("corpus.json")).unwrap())
            .unwrap();
    let entry = listing["projects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap();
    let scratch = tempfile::tempdir().unwrap();
    common::copy_dir(&corpus.join(name), &scratch.path().join(name));
    let root = scratch.path().join(entry["root_module"].as_str().unwrap());
    let data_path = corpus.join(entry["state"].as_str().unwrap());
    let var_files: Vec<PathBuf> = (entry["var_files"].as_array().unwrap().iter())
        .map(|f| root.join(f.as_str().unwrap()))
        .collect();
    let raw: Value = serde_json::from_str(&std::fs::read_to_string(&data_path).unwrap()).unwrap();
    let state_path = scratch.path().join("deployed.tfstate");
    std::fs::copy(&data_path, &state_path).unwrap();
    // Values that read other resources' ids (a bucket named after a random_pet) are known
    // once those are deployed: a few rounds reach the state apply would leave.
    let mut deployed = Vec::new();
    for _ in 0..3 {
        let state = State::read(&state_path).unwrap();
        let options = LoadOptions {
            var_files: var_files.clone(),
            vars: Vec::new(),
            state: Some(&state),
        };
        let project = Project::load(&root, &options).unwrap();
        let (written, instances) = deployed_state(&project, &raw);
        std::fs::write(&state_path, serde_json::to_string_pretty(&written).unwrap()).unwrap();
        deployed = instances;
    }
    Deployed {
        _scratch: scratch,
        root,
        state: state_path,
        var_files,
        resources: deployed,
    }
}

/// The state `terraform apply` of the loaded configuration would leave: the corpus state's
/// data sources and each managed instance with its known arguments and an id; with the
/// instances' attributes by address.
fn deployed_state(project: &Project, data: &Value) -> (Value, Vec<(String, Value)>) {
    let mut resources: Vec<Value> = data["resources"].as_array().cloned().unwrap_or_default();
    resources.retain(|r| r["mode"] == "data");
    let mut deployed = Vec::new();
    for instance in project.instances().filter(|i| i.mode == Mode::Managed) {
        let mut attributes = known(&instance.attributes).unwrap_or_else(|| json!({}));
        let id = id_for(&instance.resource_type, &instance.address, &attributes);
        attributes["id"] = Value::String(id);
        deployed.push((instance.address.clone(), attributes.clone()));
        let mut object = json!({"schema_version": 0, "attributes": attributes});
        match &instance.index {
            Some(IndexKey::Int(i)) => object["index_key"] = json!(i),
            Some(IndexKey::Str(k)) => object["index_key"] = json!(k),
            None => {}
        }
        let module = instance.module.clone().map_or(Value::Null, Value::String);
        let same = |r: &&mut Value| {
            r["module"] == module
                && r["type"] == instance.resource_type.as_str()
                && r["name"] == instance.name.as_str()
                && r["mode"] == "managed"
        };
        match resources.iter_mut().find(same) {
            Some(resource) => resource["instances"].as_array_mut().unwrap().push(object),
            None => {
                let mut entry = json!({
                    "mode": "managed",
                    "type": instance.resource_type,
                    "name": instance.name,
                    "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
                    "instances": [object]
                });
                if !module.is_null() {
                    entry["module"] = module;
                }
                resources.push(entry);
            }
        }
    }
    let state = json!({
        "version": 4,
        "terraform_version": "1.11.4",
        "serial": 1,
        "lineage": "corpus-drift",
        "outputs": {},
        "resources": resources,
    });
    (state, deployed)
}

/// The known part of a value as JSON: unknown object attributes left out (as values
/// computed at apply time, which the test does not need); `None` for an unknown.
fn known(value: &reconciler::terraform::functions::Value) -> Option<Value> {
    use reconciler::terraform::functions::Value as V;
    match value {
        V::Object(map) => Some(Value::Object(
            map.iter()
                .filter_map(|(k, v)| Some((k.clone(), known(v)?)))
                .collect(),
        )),
        V::List(items) => items
            .iter()
            .map(known)
            .collect::<Option<Vec<_>>>()
            .map(Value::Array),
        other => other.to_json(),
    }
}

/// An id in the form AWS gives the resource type, stable for the address.
fn id_for(resource_type: &str, address: &str, attributes: &Value) -> String {
    let named = ["bucket", "name"]
        .iter()
        .find_map(|key| attributes[key].as_str().map(str::to_string));
    let hex = format!("{:017x}", fnv(address) & 0x1_ffff_ffff_ffff_ffff);
    match resource_type {
        "aws_s3_bucket" => named.unwrap_or_else(|| format!("bucket-{hex}")),
        "aws_vpc" => format!("vpc-{hex}"),
        "aws_subnet" => format!("subnet-{hex}"),
        "aws_security_group" => format!("sg-{hex}"),
        // The provider keeps an ECS cluster's and service's ARN as their id.
        "aws_ecs_cluster" => format!(
            "arn:aws:ecs:eu-west-1:123456789012:cluster/{}",
            named.unwrap_or(hex)
        ),
        "aws_ecs_service" => format!(
            "arn:aws:ecs:eu-west-1:123456789012:service/{}/{}",
            attributes["cluster"]
                .as_str()
                .and_then(|c| c.rsplit('/').next())
                .unwrap_or("default"),
            named.unwrap_or(hex)
        ),
        _ => named.unwrap_or(hex),
    }
}

/// FNV-1a, for stable ids.
fn fnv(text: &str) -> u128 {
    text.bytes()
        .fold(0x6c62272e07bb014262b821756295c58d, |hash, byte| {
            (hash ^ u128::from(byte)).wrapping_mul(0x0000000001000000000000000000013B)
        })
}

/// A CloudTrail record of a console user's call.
fn console_call(source: &str, name: &str, region: &str, request: Value) -> Value {
    json!({
        "eventVersion": "1.09",
        "userIdentity": {
            "type": "IAMUser",
            "principalId": "AIDAEXAMPLEALICE0001",
            "arn": "arn:aws:iam::123456789012:user/alice",
            "accountId": "123456789012",
            "accessKeyId": "ASIAEXAMPLEALICE0001",
            "userName": "alice",
            "sessionContext": {"attributes": {"creationDate": "2026-11-20T09:00:00Z", "mfaAuthenticated": "true"}}
        },
        "eventTime": "2026-11-20T09:05:00Z",
        "eventSource": source,
        "eventName": name,
        "awsRegion": region,
        "sourceIPAddress": "203.0.113.7",
        "userAgent": "AWS Internal",
        "requestParameters": request,
        "responseElements": null,
        "requestID": "0f6c1d2e-aaaa-4bbb-8ccc-000000000001",
        "eventID": format!("corpus-drift-{name}"),
        "readOnly": false,
        "eventType": "AwsApiCall",
        "managementEvent": true,
        "recipientAccountId": "123456789012",
        "sessionCredentialFromConsole": "true"
    })
}

/// What one reconciliation of a drift produced.
struct Reconciled {
    code: Option<i32>,
    report: Value,
    stderr: String,
}

/// Runs `retrace reconcile --write` on the deployed copy with the records as the trail.
fn reconcile(deployed: &Deployed, records: Vec<Value>, extra: &[&str]) -> Reconciled {
    let trail = deployed.root.join("../drift-trail.json");
    std::fs::write(&trail, json!({"Records": records}).to_string()).unwrap();
    let mut args: Vec<String> = [
        "reconcile",
        "--project",
        deployed.root.to_str().unwrap(),
        "--state",
        deployed.state.to_str().unwrap(),
        "--logs",
        trail.to_str().unwrap(),
        "--no-record",
        "--no-terraform",
        "--write",
        "--format",
        "json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for file in &deployed.var_files {
        args.push("--var-file".into());
        args.push(file.display().to_string());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = common::retrace(&args);
    Reconciled {
        code: output.status.code(),
        report: serde_json::from_slice(&output.stdout).unwrap_or(Value::Null),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// `terraform fmt -check` on every directory the patch wrote, when terraform is installed.
fn fmt_clean(deployed: &Deployed, report: &Value) {
    let Ok(version) = Command::new("terraform").arg("version").output() else {
        eprintln!("terraform not on PATH; fmt check skipped");
        return;
    };
    assert!(version.status.success());
    let diff = report["diff"].as_str().unwrap_or("");
    for file in diff.lines().filter_map(|l| l.strip_prefix("+++ ")) {
        let file = file.trim_start_matches("b/");
        if file.ends_with(".json") {
            continue; // terraform fmt reads native syntax only
        }
        let path = deployed.root.join(file);
        let output = Command::new("terraform")
            .args(["fmt", "-check", "-diff"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{file} is not as terraform fmt writes it:\n{}",
            String::from_utf8_lossy(&output.stdout)
        );
    }
}

/// Checks a reconciliation that patched: exit 2, the plan check passed, at most `most`
/// lines changed, fmt-clean.
fn patched(deployed: &Deployed, result: &Reconciled, most: usize) {
    assert_eq!(
        result.code,
        Some(2),
        "{}\n{}",
        result.stderr,
        serde_json::to_string_pretty(&result.report).unwrap()
    );
    let check = &result.report["validations"][0];
    assert_eq!(check["validator"], "plan-check");
    assert_eq!(check["passed"], true, "{check}");
    let (added, removed) = diff_size(result.report["diff"].as_str().unwrap_or(""));
    assert!(
        added + removed <= most && added > 0,
        "a minimal patch: +{added} -{removed}\n{}",
        result.report["diff"]
    );
    fmt_clean(deployed, &result.report);
}

#[test]
fn tam_s3_bucket_complete_absorbs_a_tag_added_in_the_console() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let deployed = deploy(&corpus, "tam-s3-bucket-complete");
    let bucket = deployed.attributes("module.s3_bucket.aws_s3_bucket.this[0]");
    let name = bucket["id"].as_str().unwrap().to_string();
    let mut tags: Vec<Value> = bucket["tags"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| json!({"key": k, "value": v}))
        .collect();
    tags.push(json!({"key": "CostCenter", "value": "cc-1234"}));
    let record = console_call(
        "s3.amazonaws.com",
        "PutBucketTagging",
        "eu-west-1",
        json!({"bucketName": name, "Tagging": {"TagSet": {"Tag": tags}}, "tagging": ""}),
    );
    let result = reconcile(&deployed, vec![record], &[]);
    patched(&deployed, &result, 4);
}

/// The `ec2:CreateTags` record of a console user tagging `id`.
fn create_tags(id: &str, key: &str, value: &str) -> Value {
    console_call(
        "ec2.amazonaws.com",
        "CreateTags",
        "eu-west-1",
        json!({
            "resourcesSet": {"items": [{"resourceId": id}]},
            "tagSet": {"items": [{"key": key, "value": value}]}
        }),
    )
}

#[test]
fn tam_vpc_complete_absorbs_a_tag_added_to_the_vpc() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let deployed = deploy(&corpus, "tam-vpc-complete");
    let vpc = deployed.attributes("module.vpc.aws_vpc.this[0]");
    let record = create_tags(vpc["id"].as_str().unwrap(), "CostCenter", "cc-1234");
    let result = reconcile(&deployed, vec![record], &[]);
    patched(&deployed, &result, 4);
}

#[test]
fn tam_security_group_complete_absorbs_a_tag_and_leaves_a_shared_module_alone() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let deployed = deploy(&corpus, "tam-security-group-complete");
    let group = deployed.attributes("module.complete_sg.aws_security_group.this_name_prefix[0]");
    let record = create_tags(group["id"].as_str().unwrap(), "CostCenter", "cc-1234");
    let result = reconcile(&deployed, vec![record], &[]);
    patched(&deployed, &result, 4);

    // main_sg's rules come from `ingress_rules`, a list of the module's predefined rule
    // names: which name a new rule takes is for a person, so it is held, with that reason,
    // and not written as an inline block (the group's id, `local.this_sg_id`, is known from
    // the state).
    let (_, result) = authorize_8443(&corpus, "main_sg");
    assert_eq!(result.code, Some(3), "{}", result.stderr);
    assert_eq!(result.report["diff"], "");
    let unplanned = &result.report["plan"]["unplanned"][0]["reason"];
    assert!(
        unplanned.as_str().unwrap().contains(
            "module.main_sg.aws_security_group_rule.ingress_rules[0] is made from var.ingress_rules, whose entries are not objects but values like \"https-443-tcp\""
        ),
        "{unplanned}"
    );

    // ipv4_ipv6_example spells its rules out in `ingress_with_cidr_blocks`: the rule is one
    // more entry there, written like the one before it, and its rule resource is imported.
    let (deployed, result) = authorize_8443(&corpus, "ipv4_ipv6_example");
    let diff = result.report["diff"].as_str().unwrap_or("");
    assert!(
        diff.contains(
            "       cidr_blocks = \"0.0.0.0/0\"\n     },\n+    {\n+      from_port   = 8443\n+      to_port     = 8443\n+      protocol    = \"tcp\"\n+      description = \"\"\n+      cidr_blocks = \"10.10.0.0/16\"\n+    },\n   ]"
        ),
        "{diff}"
    );
    assert!(
        diff.contains(
            "+import {\n+  to = module.ipv4_ipv6_example.aws_security_group_rule.ingress_with_cidr_blocks[1]\n+  id = \""
        ),
        "{diff}"
    );
    assert_eq!(result.report["plan"]["unplanned"], json!([]));
    fmt_clean(&deployed, &result.report);
}

/// What the reconciliation of tcp 8443 from 10.10.0.0/16 authorized in the console on the
/// security group of module `module` of the security group example makes of it.
fn authorize_8443(corpus: &Path, module: &str) -> (Deployed, Reconciled) {
    let deployed = deploy(corpus, "tam-security-group-complete");
    let group = deployed.attributes(&format!(
        "module.{module}.aws_security_group.this_name_prefix[0]"
    ));
    let record = console_call(
        "ec2.amazonaws.com",
        "AuthorizeSecurityGroupIngress",
        "eu-west-1",
        json!({
            "groupId": group["id"],
            "ipPermissions": {"items": [{
                "ipProtocol": "tcp", "fromPort": 8443, "toPort": 8443,
                "groups": {}, "ipRanges": {"items": [{"cidrIp": "10.10.0.0/16"}]},
                "ipv6Ranges": {}, "prefixListIds": {}
            }]}
        }),
    );
    let result = reconcile(&deployed, vec![record], &[]);
    (deployed, result)
}

/// The service module ignores `desired_count` (autoscaling owns it): a console scale-out is
/// already accounted for by the code, so nothing is patched and the run exits 0.
#[test]
fn tam_ecs_fargate_settles_a_scale_out_the_module_ignores() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let deployed = deploy(&corpus, "tam-ecs-fargate");
    let service = deployed.attributes("module.ecs_service.aws_ecs_service.this[0]");
    let mut record = console_call(
        "ecs.amazonaws.com",
        "UpdateService",
        "eu-west-1",
        json!({"cluster": service["cluster"], "service": service["name"], "desiredCount": 3}),
    );
    record["responseElements"] = json!({"service": {
        "serviceArn": service["id"],
        "serviceName": service["name"],
        "clusterArn": service["cluster"],
        "desiredCount": 3
    }});
    let result = reconcile(&deployed, vec![record], &[]);
    assert_eq!(result.code, Some(0), "{}", result.report);
    let settled = &result.report["plan"]["settled"][0];
    assert_eq!(settled["part"]["name"], "desired_count", "{settled}");
    assert!(
        settled["reason"]
            .as_str()
            .unwrap()
            .contains("ignore_changes"),
        "{settled}"
    );
    assert_eq!(result.report["diff"], "");
}

/// The cluster module writes its log group's tags `merge(var.tags,
/// var.cloudwatch_log_group_tags)`: a tag added to the log group goes to that input of the
/// example's module call.
#[test]
fn tam_ecs_fargate_absorbs_a_log_group_tag_through_its_own_input() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let deployed = deploy(&corpus, "tam-ecs-fargate");
    let group = deployed.attributes("module.ecs_cluster.aws_cloudwatch_log_group.this[0]");
    let name = group["name"].as_str().unwrap();
    let record = console_call(
        "logs.amazonaws.com",
        "TagResource",
        "eu-west-1",
        json!({
            "resourceArn": format!("arn:aws:logs:eu-west-1:123456789012:log-group:{name}"),
            "tags": {"CostCenter": "cc-1234"}
        }),
    );
    let result = reconcile(&deployed, vec![record], &[]);
    patched(&deployed, &result, 4);
    let diff = result.report["diff"].as_str().unwrap();
    assert!(diff.contains("+  cloudwatch_log_group_tags = {"), "{diff}");
}

/// Versioning of the Cloud Posse bucket is written in the repository's root module
/// (`status = local.versioning_enabled ? "Enabled" : "Suspended"`), outside the example's
/// root: reported and left out by default, made (with a caution) under
/// --allow-shared-module-edits.
#[test]
fn cloudposse_s3_bucket_edits_its_shared_module_only_when_allowed() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let deployed = deploy(&corpus, "cloudposse-s3-bucket-complete");
    let bucket = deployed.attributes("module.s3_bucket.aws_s3_bucket.default[0]");
    let record = console_call(
        "s3.amazonaws.com",
        "PutBucketVersioning",
        "us-east-2",
        json!({
            "bucketName": bucket["id"],
            "VersioningConfiguration": {"Status": "Enabled"},
            "versioning": ""
        }),
    );
    let result = reconcile(&deployed, vec![record.clone()], &[]);
    assert_eq!(result.code, Some(3), "{}", result.report);
    assert_eq!(result.report["diff"], "");
    let reason = result.report["plan"]["unplanned"][0]["reason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("--allow-shared-module-edits"), "{reason}");

    let result = reconcile(&deployed, vec![record], &["--allow-shared-module-edits"]);
    patched(&deployed, &result, 2);
    let step = &result.report["plan"]["steps"][0];
    assert!(
        step["warning"]
            .as_str()
            .unwrap()
            .contains("edits ../../main.tf, a module outside this root"),
        "{step}"
    );
    let shared = std::fs::read_to_string(deployed.root.join("../../main.tf")).unwrap();
    assert!(
        shared.contains("status = \"Enabled\""),
        "written in the shared module"
    );
}

/// The HashiCorp EKS tutorial: the VPC module (a registry module `terraform init`
/// installed) has a per-resource `vpc_tags` input, so a tag added to the VPC lands on the
/// module call in the tutorial's own main.tf, never in `.terraform/modules`.
#[test]
fn learn_eks_cluster_absorbs_a_vpc_tag_through_the_module_input() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let deployed = deploy(&corpus, "learn-eks-cluster");
    let vpc = deployed.attributes("module.vpc.aws_vpc.this[0]");
    let mut record = create_tags(vpc["id"].as_str().unwrap(), "CostCenter", "cc-1234");
    record["awsRegion"] = json!("us-east-2");
    let result = reconcile(&deployed, vec![record], &[]);
    patched(&deployed, &result, 4);
    let diff = result.report["diff"].as_str().unwrap();
    assert!(diff.starts_with("diff --git a/main.tf b/main.tf"), "{diff}");
    assert!(diff.contains("+  vpc_tags = {"), "{diff}");
}

/// The aws-ia module is written in JSON syntax: a tag on one of its endpoints is written into
/// `main_generated.tf.json` (outside the example's root, so only with shared-module edits
/// allowed), in place, the file's JSON layout kept.
#[test]
fn aws_ia_vpc_endpoints_writes_a_change_into_json() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let deployed = deploy(&corpus, "aws-ia-vpc-endpoints-minimal");
    let endpoint = deployed.attributes("module.my_endpoints.aws_vpc_endpoint.sts_interface[0]");
    let record = create_tags(endpoint["id"].as_str().unwrap(), "CostCenter", "cc-1234");
    let result = reconcile(&deployed, vec![record.clone()], &[]);
    assert_eq!(result.code, Some(3), "{}", result.report);
    assert_eq!(result.report["diff"], "");

    let before =
        std::fs::read_to_string(deployed.root.join("../../main_generated.tf.json")).unwrap();
    let result = reconcile(&deployed, vec![record], &["--allow-shared-module-edits"]);
    patched(&deployed, &result, 4);
    let diff = result.report["diff"].as_str().unwrap();
    assert!(
        diff.starts_with("diff --git a/../../main_generated.tf.json"),
        "{diff}"
    );
    let after =
        std::fs::read_to_string(deployed.root.join("../../main_generated.tf.json")).unwrap();
    let parsed: Value = serde_json::from_str(&after).unwrap();
    let tags = &parsed["resource"]["aws_vpc_endpoint"]["sts_interface"]["tags"];
    assert!(tags.as_str().unwrap().contains("CostCenter"), "{tags}");
    // Every line but the one edited is as it was.
    let changed = before
        .lines()
        .zip(after.lines())
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(changed, 1, "{diff}");
    assert_eq!(before.lines().count(), after.lines().count());

    // Its security group is written in the module's native main.tf: with shared-module edits
    // allowed, a tag on it is written there.
    let deployed = deploy(&corpus, "aws-ia-vpc-endpoints-minimal");
    let group = deployed.attributes("module.my_endpoints.aws_security_group.endpoints[0]");
    let record = create_tags(group["id"].as_str().unwrap(), "CostCenter", "cc-1234");
    let result = reconcile(&deployed, vec![record], &["--allow-shared-module-edits"]);
    patched(&deployed, &result, 4);
    let diff = result.report["diff"].as_str().unwrap();
    assert!(diff.starts_with("diff --git a/../../main.tf"), "{diff}");
}

/// The vpc module writes its routes as `aws_route` resources: a route added in the console to
/// one of its route tables becomes a new `aws_route` imported by the provider's import id
/// (`<table>_<destination>`), not a `route` block on the table (the provider warns against
/// mixing the two).
#[test]
fn tam_vpc_complete_adds_a_route_as_an_aws_route_resource() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let deployed = deploy(&corpus, "tam-vpc-complete");
    let table = deployed.attributes("module.vpc.aws_route_table.public[0]");
    let table_id = table["id"].as_str().unwrap();
    let record = console_call(
        "ec2.amazonaws.com",
        "CreateRoute",
        "eu-west-1",
        json!({
            "routeTableId": table_id,
            "destinationCidrBlock": "10.99.0.0/16",
            "vpcPeeringConnectionId": "pcx-0a1b2c3d4e5f60718"
        }),
    );
    let result = reconcile(&deployed, vec![record], &[]);
    patched(&deployed, &result, 12);
    let diff = result.report["diff"].as_str().unwrap();
    assert!(diff.contains("+resource \"aws_route\""), "{diff}");
    assert!(
        diff.contains(&format!("id = \"{table_id}_10.99.0.0/16\"")),
        "{diff}"
    );
    assert!(
        diff.contains("destination_cidr_block    = \"10.99.0.0/16\""),
        "{diff}"
    );
    assert!(!diff.contains("route {"), "{diff}");
}

/// `ReplaceRoute` on a route the module holds as an `aws_route`: the change of that route's
/// target, written where the module sets it (a shared module, so only when allowed).
#[test]
fn tam_vpc_complete_replaces_a_route_target_on_its_aws_route() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let deployed = deploy(&corpus, "tam-vpc-complete");
    let table = deployed.attributes("module.vpc.aws_route_table.public[0]");
    let record = console_call(
        "ec2.amazonaws.com",
        "ReplaceRoute",
        "eu-west-1",
        json!({
            "routeTableId": table["id"],
            "destinationCidrBlock": "0.0.0.0/0",
            "gatewayId": "igw-0fedcba9876543210"
        }),
    );
    let result = reconcile(&deployed, vec![record], &[]);
    let intents = result.report["intents"].to_string();
    assert!(
        intents.contains("module.vpc.aws_route.public_internet_gateway[0]"),
        "{}",
        serde_json::to_string_pretty(&result.report).unwrap()
    );
    assert!(!intents.contains("\"route\""), "{intents}");
}
