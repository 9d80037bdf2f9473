//! Loading `fixtures/projects/provenance`: instance addresses, evaluated values, variables
//! by precedence, locals, outputs and use counts, all worked out by hand from the files; and
//! load errors and diagnostics on small projects written here.
#![allow(clippy::unwrap_used)]

use crate::{common, config_common};

use std::collections::BTreeMap;

use config_common::{project, text};
use reconciler::terraform::config::{LoadError, LoadOptions, Project, Provenance, VariableSource};
use reconciler::terraform::functions::Value;
use reconciler::terraform::state::{IndexKey, Mode, PathStep};
use serde_json::json;

fn value(json: serde_json::Value) -> Value {
    Value::from_json(&json)
}

#[test]
fn instances_have_terraform_addresses() {
    let project = project();
    let addresses: Vec<&str> = project.instances().map(|i| i.address.as_str()).collect();
    let mut sorted = addresses.clone();
    sorted.sort_unstable();
    let mut expected = vec![
        "aws_instance.web[0]",
        "aws_instance.web[1]",
        "aws_s3_bucket.b[\"assets\"]",
        "aws_s3_bucket.b[\"logs\"]",
        "aws_s3_bucket_versioning.b[\"assets\"]",
        "aws_s3_bucket_versioning.b[\"logs\"]",
        "aws_security_group.admin",
        "aws_iam_user.ops[\"alice\"]",
        "aws_iam_user.ops[\"bob\"]",
        "aws_sqs_queue.jobs[\"fast\"]",
        "aws_sqs_queue.jobs[\"slow\"]",
        "data.aws_caller_identity.current",
        "module.network.aws_vpc.this",
        "module.network.aws_subnet.private[\"a\"]",
        "module.network.aws_subnet.private[\"b\"]",
        "module.app.aws_instance.this",
        "module.app.aws_security_group.this",
        "module.app.module.dns.aws_route53_record.this[\"www\"]",
    ];
    expected.sort_unstable();
    assert_eq!(sorted, expected);

    let subnet = project
        .instance("module.network.aws_subnet.private[\"a\"]")
        .unwrap();
    assert_eq!(subnet.module.as_deref(), Some("module.network"));
    assert_eq!(subnet.index, Some(IndexKey::Str("a".into())));
    assert_eq!(
        (subnet.resource_type.as_str(), subnet.name.as_str()),
        ("aws_subnet", "private")
    );
    assert_eq!(subnet.file, ".terraform/modules/network/main.tf");
    let web = project.instance("aws_instance.web[1]").unwrap();
    assert_eq!(web.index, Some(IndexKey::Int(1)));
    assert_eq!(web.mode, Mode::Managed);
    assert!(
        text(&project, &web.file, &web.span).starts_with("resource \"aws_instance\" \"web\" {")
    );
    let data = project
        .instance("data.aws_caller_identity.current")
        .unwrap();
    assert_eq!(data.mode, Mode::Data);
}

#[test]
fn attributes_are_evaluated_with_count_each_locals_and_state() {
    let project = project();
    // instance_count = "2" in terraform.tfvars, converted to a number; count.index in the
    // Name; environment "prod" from prod.auto.tfvars (last in lexical order), owner from the
    // var file; the subnet id read from state through module.network's output.
    assert_eq!(
        project.instance("aws_instance.web[1]").unwrap().attributes,
        value(json!({
            "ami": "ami-0abc1234",
            "instance_type": "t3.micro",
            "subnet_id": "subnet-0aaa1111",
            "root_block_device": [{"volume_size": 20, "volume_type": "gp3"}],
            "tags": {"Project": "shop", "Environment": "prod", "Owner": "team-b", "Name": "shop-prod-web-1"}
        }))
    );
    // each.value of a map of objects; the bucket id comes from state for "logs" only.
    assert_eq!(
        project
            .instance("aws_s3_bucket_versioning.b[\"logs\"]")
            .unwrap()
            .attributes,
        value(
            json!({"bucket": "shop-prod-logs", "versioning_configuration": [{"status": "Enabled"}]})
        )
    );
    let assets = &project
        .instance("aws_s3_bucket_versioning.b[\"assets\"]")
        .unwrap()
        .attributes;
    let Value::Object(assets) = assets else {
        panic!("{assets:?}")
    };
    assert_eq!(assets["bucket"], Value::Unknown);
    assert_eq!(
        assets["versioning_configuration"],
        value(json!([{"status": "Suspended"}]))
    );
    // A dynamic block with an iterator over toset(var.admin_ports) = [22, 443] (tfvars.json),
    // then a static egress block.
    assert_eq!(
        project
            .instance("aws_security_group.admin")
            .unwrap()
            .attributes,
        value(json!({
            "name": "admin",
            "vpc_id": "vpc-0aaa1111",
            "ingress": [
                {"from_port": 22, "to_port": 22, "protocol": "tcp", "cidr_blocks": ["10.0.0.0/8"]},
                {"from_port": 443, "to_port": 443, "protocol": "tcp", "cidr_blocks": ["10.0.0.0/8"]}
            ],
            "egress": [{"from_port": 0, "to_port": 0, "protocol": "-1", "cidr_blocks": ["0.0.0.0/0"]}]
        }))
    );
    assert_eq!(
        project
            .instance("aws_iam_user.ops[\"bob\"]")
            .unwrap()
            .attributes,
        value(
            json!({"name": "bob", "tags": {"Project": "shop", "Environment": "prod", "Owner": "team-b"}})
        )
    );
    assert_eq!(
        project
            .instance("aws_sqs_queue.jobs[\"slow\"]")
            .unwrap()
            .attributes,
        value(json!({"name": "jobs-slow", "message_retention_seconds": 86400}))
    );
    // Module inputs evaluated in the caller: a local, a module output from state, a literal.
    assert_eq!(
        project
            .instance("module.network.aws_subnet.private[\"b\"]")
            .unwrap()
            .attributes,
        value(
            json!({"vpc_id": "vpc-0aaa1111", "cidr_block": "10.0.2.0/24", "tags": {"Name": "shop-prod-b"}})
        )
    );
    assert_eq!(
        project
            .instance("module.app.aws_instance.this")
            .unwrap()
            .attributes,
        value(json!({
            "ami": "ami-0def5678", "instance_type": "t3.small", "subnet_id": "subnet-0bbb2222",
            "monitoring": false, "tags": {"Name": "app"}
        }))
    );
    assert_eq!(
        project
            .instance("module.app.module.dns.aws_route53_record.this[\"www\"]")
            .unwrap()
            .attributes,
        value(
            json!({"zone_id": "Z0123456789", "name": "www", "type": "A", "ttl": 300, "records": ["10.0.2.10"]})
        )
    );
}

#[test]
fn variables_follow_terraform_precedence() {
    let project = project();
    let var = |name: &str| project.variable(None, name).unwrap();
    // default "dev" < terraform.tfvars "staging" < terraform.tfvars.json "qa" <
    // a.auto.tfvars "alpha" < prod.auto.tfvars "prod".
    let environment = var("environment");
    assert_eq!(environment.value, Value::String("prod".into()));
    let VariableSource::Tfvars { file, line, span } = &environment.source else {
        panic!("{:?}", environment.source)
    };
    assert_eq!((file.as_str(), *line), ("prod.auto.tfvars", 2));
    assert_eq!(text(&project, file, span), "\"prod\"");

    let instance_type = var("instance_type");
    let VariableSource::Default { file, span } = &instance_type.source else {
        panic!("{:?}", instance_type.source)
    };
    assert_eq!(file, "variables.tf");
    assert_eq!(text(&project, file, span), "\"t3.micro\"");

    let count = var("instance_count");
    assert_eq!(count.value, Value::Number(2.0));
    assert!(
        matches!(&count.source, VariableSource::Tfvars { file, line: 2, .. } if file == "terraform.tfvars")
    );

    // terraform.tfvars says team-a; the var file wins.
    let owner = var("owner");
    assert_eq!(owner.value, Value::String("team-b".into()));
    assert!(
        matches!(&owner.source, VariableSource::VarFile { file, line: 1, .. } if file == "extra.tfvars")
    );

    let ports = var("admin_ports");
    assert_eq!(ports.value, value(json!([22, 443])));
    let VariableSource::Tfvars { file, line, span } = &ports.source else {
        panic!("{:?}", ports.source)
    };
    assert_eq!((file.as_str(), *line), ("terraform.tfvars.json", 3));
    assert_eq!(text(&project, file, span), "[22, 443]");

    assert_eq!(var("region").value, Value::String("us-east-1".into()));
    assert_eq!(var("region").source, VariableSource::Cli);

    // optional(number, 30) fills the missing attribute.
    assert_eq!(
        var("buckets").value,
        value(
            json!({"logs": {"versioning": "Enabled", "expire": 30}, "assets": {"versioning": "Suspended", "expire": 90}})
        )
    );

    let child = project
        .variable(Some("module.app"), "instance_type")
        .unwrap();
    let VariableSource::ModuleArgument { file, span } = &child.source else {
        panic!("{:?}", child.source)
    };
    assert_eq!(
        (file.as_str(), text(&project, file, span)),
        ("main.tf", "\"t3.small\"")
    );
    let default = project.variable(Some("module.app"), "monitoring").unwrap();
    assert!(
        matches!(&default.source, VariableSource::Default { file, .. } if file == "modules/app/variables.tf")
    );
}

#[test]
fn uses_count_dependent_resource_arguments() {
    let project = project();
    let uses = |module: Option<&str>, name: &str| project.variable(module, name).unwrap().uses;
    // web[0] and web[1] instance_type.
    assert_eq!(uses(None, "instance_type"), 2);
    // Through local.name_prefix: web[0..1].tags, b["logs"|"assets"].bucket,
    // module.network's vpc tags and subnet a/b tags (7); through local.common_tags:
    // web[0..1].tags (already counted) and ops["alice"|"bob"].tags (2).
    assert_eq!(uses(None, "environment"), 9);
    // local.ports feeds the admin group's dynamic for_each, from_port and to_port; module.app's
    // ports feeds the same three in its group.
    assert_eq!(uses(None, "admin_ports"), 6);
    assert_eq!(uses(None, "region"), 0);
    assert_eq!(uses(Some("module.app"), "instance_type"), 1);
    let local = |name: &str| project.local(None, name).unwrap();
    assert_eq!(local("ami").uses, 2);
    assert_eq!(local("name_prefix").uses, 7);
    assert_eq!(
        local("name_prefix").value,
        Value::String("shop-prod".into())
    );
    assert_eq!(
        text(&project, "locals.tf", &local("ami").span),
        "\"ami-0abc1234\""
    );
}

#[test]
fn outputs_are_evaluated_and_visible_to_the_parent() {
    let project = project();
    let outputs: BTreeMap<(Option<String>, String), Value> = project
        .outputs()
        .into_iter()
        .map(|o| ((o.module, o.name), o.value))
        .collect();
    let get =
        |module: Option<&str>, name: &str| &outputs[&(module.map(String::from), name.to_string())];
    assert_eq!(
        get(Some("module.network"), "subnet_ids"),
        &value(json!({"a": "subnet-0aaa1111", "b": "subnet-0bbb2222"}))
    );
    assert_eq!(
        get(None, "subnet_a"),
        &Value::String("subnet-0aaa1111".into())
    );
    assert_eq!(
        get(None, "app_instance_id"),
        &Value::String("i-0app000000000000".into())
    );
    assert_eq!(get(None, "account"), &Value::String("123456789012".into()));
    // count = 2 but the state holds only web[0]: the splat has an unknown second element.
    assert_eq!(
        get(None, "web_ids"),
        &Value::List(vec![
            Value::String("i-0web0000000000000".into()),
            Value::Unknown
        ])
    );
    assert!(
        project.diagnostics().is_empty(),
        "{:?}",
        project.diagnostics()
    );
}

#[test]
fn files_cover_every_module_and_tfvars_file() {
    let project = project();
    for name in [
        "main.tf",
        "modules/app/main.tf",
        "modules/dns/main.tf",
        ".terraform/modules/network/main.tf",
        "terraform.tfvars",
        "terraform.tfvars.json",
        "a.auto.tfvars",
        "prod.auto.tfvars",
        "extra.tfvars",
    ] {
        let on_disk = std::fs::read_to_string(config_common::dir().join(name)).unwrap();
        assert_eq!(project.files()[name], on_disk, "{name}");
    }
}

fn load(dir: &tempfile::TempDir) -> Result<Project, LoadError> {
    Project::load(dir.path(), &LoadOptions::default())
}

#[test]
fn a_cycle_between_locals_is_an_error_naming_file_and_line() {
    let dir = common::scratch(&[(
        "main.tf",
        "locals {\n  a = local.b\n  b = \"${local.a}x\"\n}\n",
    )]);
    let error = load(&dir).unwrap_err();
    let LoadError::Cycle { file, line, names } = &error else {
        panic!("{error}")
    };
    assert_eq!((file.as_str(), *line), ("main.tf", 2));
    assert_eq!(names, &["local.a", "local.b", "local.a"]);
    assert_eq!(
        error.to_string(),
        "main.tf:2: cycle: local.a -> local.b -> local.a"
    );
}

/// Terraform orders by output, not by module call: `module.cluster` reads the role's ARN
/// while `module.role` reads the cluster's OIDC issuer, as the EKS module and its IRSA roles
/// do. Neither output depends on itself, so this loads with every value known.
#[test]
fn modules_may_read_each_others_outputs_when_no_output_depends_on_itself() {
    let dir = common::scratch(&[
        (
            "main.tf",
            "module \"cluster\" {\n  source   = \"./cluster\"\n  role_arn = module.role.arn\n}\n\nmodule \"role\" {\n  source = \"./role\"\n  issuer = module.cluster.issuer\n}\n",
        ),
        (
            "cluster/main.tf",
            "variable \"role_arn\" {}\n\nresource \"aws_eks_cluster\" \"this\" {\n  name     = \"c\"\n  role_arn = var.role_arn\n}\n\noutput \"issuer\" {\n  value = \"oidc.eks/c\"\n}\n",
        ),
        (
            "role/main.tf",
            "variable \"issuer\" {}\n\nresource \"aws_iam_role\" \"this\" {\n  name               = \"irsa\"\n  assume_role_policy = var.issuer\n}\n\noutput \"arn\" {\n  value = \"arn:aws:iam::1:role/irsa\"\n}\n",
        ),
    ]);
    let project = load(&dir).unwrap();
    let cluster = project
        .instance("module.cluster.aws_eks_cluster.this")
        .unwrap();
    assert_eq!(
        cluster.attributes,
        value(json!({"name": "c", "role_arn": "arn:aws:iam::1:role/irsa"}))
    );
    let role = project.instance("module.role.aws_iam_role.this").unwrap();
    assert_eq!(
        role.attributes,
        value(json!({"name": "irsa", "assume_role_policy": "oidc.eks/c"}))
    );
    assert_eq!(
        project.instances().count(),
        2,
        "one instance each, not one per pass"
    );
    assert_eq!(
        project.diagnostics(),
        &[],
        "no diagnostic left from an early pass"
    );
}

/// Terraform's documentation ("Disallowing Null Input Values"): with `nullable = false` and
/// a default, a module argument of `null` takes the default; a nullable variable keeps the
/// null.
#[test]
fn a_null_argument_to_a_variable_that_is_not_nullable_takes_its_default() {
    let dir = common::scratch(&[
        (
            "main.tf",
            "module \"queue\" {\n  source  = \"./queue\"\n  retain  = null\n  timeout = null\n}\n",
        ),
        (
            "queue/main.tf",
            "variable \"retain\" {\n  type     = number\n  default  = 345600\n  nullable = false\n}\n\nvariable \"timeout\" {\n  type    = number\n  default = 30\n}\n\nresource \"aws_sqs_queue\" \"this\" {\n  message_retention_seconds  = var.retain\n  visibility_timeout_seconds = var.timeout\n}\n",
        ),
    ]);
    let project = load(&dir).unwrap();
    let queue = project.instance("module.queue.aws_sqs_queue.this").unwrap();
    assert_eq!(
        queue.attributes,
        value(json!({"message_retention_seconds": 345600, "visibility_timeout_seconds": null}))
    );
    assert_eq!(project.diagnostics(), &[]);
}

/// A splat over a resource or module call with `count = 0` is an empty list, and a block
/// whose `for_each` is empty is an empty map (Terraform's documentation on splat
/// expressions and on referring to instances).
#[test]
fn blocks_with_no_instances_are_empty_collections() {
    let dir = common::scratch(&[
        (
            "main.tf",
            "module \"replica\" {\n  count  = 0\n  source = \"./bucket\"\n}\n\nresource \"aws_s3_bucket\" \"extra\" {\n  count = 0\n}\n\nresource \"aws_sqs_queue\" \"q\" {\n  for_each = {}\n}\n\nresource \"aws_s3_bucket\" \"main\" {\n  bucket = join(\",\", concat(module.replica[*].arn, aws_s3_bucket.extra[*].arn, keys(aws_sqs_queue.q)))\n}\n",
        ),
        (
            "bucket/main.tf",
            "output \"arn\" {\n  value = \"arn:aws:s3:::replica\"\n}\n",
        ),
    ]);
    let project = load(&dir).unwrap();
    let main = project.instance("aws_s3_bucket.main").unwrap();
    assert_eq!(main.attributes, value(json!({"bucket": ""})));
    assert_eq!(project.diagnostics(), &[]);
}

/// Terraform's documentation ("Override Files"): `override.tf` replaces `ami` of the block
/// in `example.tf` and keeps `instance_type`; the overridden argument is traced to the
/// override file, where an edit must land.
#[test]
fn override_files_merge_argument_by_argument() {
    let dir = common::scratch(&[
        (
            "example.tf",
            "resource \"aws_instance\" \"web\" {\n  instance_type = \"t2.micro\"\n  ami           = \"ami-408c7f28\"\n\n  ebs_block_device {\n    device_name = \"/dev/sdb\"\n  }\n}\n\nlocals {\n  env = \"dev\"\n}\n",
        ),
        (
            "override.tf",
            "resource \"aws_instance\" \"web\" {\n  ami = \"foo\"\n\n  ebs_block_device {\n    device_name = \"/dev/sdc\"\n  }\n}\n",
        ),
        ("env_override.tf", "locals {\n  env = \"prod\"\n}\n"),
    ]);
    let project = load(&dir).unwrap();
    let web = project.instance("aws_instance.web").unwrap();
    assert_eq!(
        web.attributes,
        value(json!({
            "instance_type": "t2.micro",
            "ami": "foo",
            "ebs_block_device": [{"device_name": "/dev/sdc"}]
        }))
    );
    assert_eq!(
        project.local(None, "env").map(|l| l.value),
        Some(Value::String("prod".into()))
    );
    let ami = project.provenance("aws_instance.web", &[PathStep::Key("ami".into())]);
    let Some(Provenance::Literal { file, span }) = ami else {
        panic!("{ami:?}")
    };
    assert_eq!(file, "override.tf");
    assert_eq!(&project.files()["override.tf"][span], "\"foo\"");
}

#[test]
fn an_override_of_nothing_is_an_error_naming_the_place() {
    let dir = common::scratch(&[
        ("main.tf", "locals {}\n"),
        (
            "override.tf",
            "\nresource \"aws_instance\" \"web\" {\n  ami = \"foo\"\n}\n",
        ),
    ]);
    let error = load(&dir).unwrap_err();
    assert_eq!(
        error.to_string(),
        "override.tf:2: override of resource aws_instance.web, which is not declared"
    );
}

/// OpenTofu reads `.tofu` files, and one takes the place of the `.tf` file of the same
/// name; Terraform projects (no `.tofu` file) are read as before.
#[test]
fn tofu_files_take_the_place_of_their_tf_namesakes() {
    let dir = common::scratch(&[
        ("main.tf", "locals {\n  tool = \"terraform\"\n}\n"),
        ("main.tofu", "locals {\n  tool = \"opentofu\"\n}\n"),
        ("extra.tf", "locals {\n  shared = true\n}\n"),
    ]);
    let project = load(&dir).unwrap();
    assert_eq!(
        project.local(None, "tool").map(|l| l.value),
        Some(Value::String("opentofu".into()))
    );
    assert_eq!(
        project.local(None, "shared").map(|l| l.value),
        Some(Value::Bool(true))
    );
    assert!(!project.files().contains_key("main.tf"));
}

/// JSON configuration is read beside native files, line numbers kept.
#[test]
fn json_configuration_files_are_read() {
    let dir = common::scratch(&[(
        "main.tf.json",
        "{\n  \"variable\": {\"n\": {\"type\": \"number\", \"default\": 2}},\n  \"resource\": {\n    \"aws_sqs_queue\": {\n      \"q\": {\n        \"count\": \"${var.n}\",\n        \"name\": \"jobs-${count.index}\",\n        \"delay_seconds\": \"${nosuch(1)}\"\n      }\n    }\n  }\n}\n",
    )]);
    let project = load(&dir).unwrap();
    let second = project.instance("aws_sqs_queue.q[1]").unwrap();
    assert_eq!(
        second.attributes,
        Value::Object(BTreeMap::from([
            ("name".to_string(), Value::String("jobs-1".into())),
            ("delay_seconds".to_string(), Value::Unknown),
        ]))
    );
    let diagnostic = &project.diagnostics()[0];
    assert_eq!(
        (diagnostic.file.as_str(), diagnostic.line),
        ("main.tf.json", 8)
    );
}

/// Terraform's documentation ("References to Named Values", filesystem and workspace
/// info): `path.module` is the module's directory relative to the working directory,
/// `path.root` is `.`, files are read from the working directory, and
/// `terraform.workspace` is the workspace `terraform workspace select` chose.
#[test]
fn paths_and_the_workspace_are_what_terraform_gives() {
    let dir = common::scratch(&[
        (
            "main.tf",
            "module \"fn\" {\n  source = \"./modules/fn\"\n}\n\nresource \"aws_s3_bucket\" \"b\" {\n  bucket = \"logs-${terraform.workspace}\"\n}\n",
        ),
        (
            "modules/fn/main.tf",
            "resource \"aws_lambda_function\" \"this\" {\n  filename = \"${path.module}/lambda.zip\"\n  handler  = trimspace(file(\"${path.module}/handler.txt\"))\n  role     = path.root\n}\n",
        ),
        ("modules/fn/handler.txt", "index.handler\n"),
        (".terraform/environment", "staging"),
    ]);
    let project = load(&dir).unwrap();
    assert_eq!(
        project
            .instance("module.fn.aws_lambda_function.this")
            .unwrap()
            .attributes,
        value(json!({
            "filename": "modules/fn/lambda.zip",
            "handler": "index.handler",
            "role": "."
        }))
    );
    assert_eq!(
        project.instance("aws_s3_bucket.b").unwrap().attributes,
        value(json!({"bucket": "logs-staging"}))
    );
}

#[test]
fn syntax_errors_and_bad_arguments_name_the_place() {
    let dir = common::scratch(&[
        ("ok.tf", "locals {}\n"),
        ("bad.tf", "resource \"a_b\" \"c\" {\n  x = \n}\n"),
    ]);
    let error = load(&dir).unwrap_err();
    assert!(
        matches!(&error, LoadError::Parse { file, line: 2, .. } if file == "bad.tf"),
        "{error}"
    );

    let dir = common::scratch(&[
        ("a.tf", "variable \"x\" {}\n"),
        ("b.tf", "\nvariable \"x\" {}\n"),
    ]);
    let error = load(&dir).unwrap_err();
    assert!(
        matches!(&error, LoadError::Invalid { file, line: 2, .. } if file == "b.tf"),
        "{error}"
    );

    let dir = common::scratch(&[("main.tf", "variable \"x\" {}\n")]);
    let options = LoadOptions {
        vars: vec!["x".into()],
        ..LoadOptions::default()
    };
    let error = Project::load(dir.path(), &options).unwrap_err();
    assert!(matches!(error, LoadError::CliVar { .. }), "{error}");
}

#[test]
fn a_failing_expression_costs_only_its_attribute() {
    let dir = common::scratch(&[(
        "main.tf",
        "variable \"n\" {\n  type = number\n}\n\nresource \"aws_sqs_queue\" \"q\" {\n  name  = nosuchfunction(1)\n  delay = var.n\n  tags  = { A = \"b\" }\n}\n\nmodule \"gone\" {\n  source = \"acme/gone/aws\"\n}\n",
    )]);
    let options = LoadOptions {
        vars: vec!["n=5".into()],
        ..LoadOptions::default()
    };
    let project = Project::load(dir.path(), &options).unwrap();
    assert_eq!(
        project.instance("aws_sqs_queue.q").unwrap().attributes,
        Value::Object(BTreeMap::from([
            ("name".to_string(), Value::Unknown),
            ("delay".to_string(), Value::Number(5.0)),
            ("tags".to_string(), value(json!({"A": "b"}))),
        ]))
    );
    let diagnostics = project.diagnostics();
    assert_eq!(diagnostics.len(), 2, "{diagnostics:?}");
    assert_eq!(
        (diagnostics[0].subject.as_str(), diagnostics[0].line),
        ("module.gone", 11)
    );
    assert_eq!(
        (diagnostics[1].subject.as_str(), diagnostics[1].line),
        ("aws_sqs_queue.q.name", 6)
    );
    assert!(
        diagnostics[1].message.contains("nosuchfunction"),
        "{diagnostics:?}"
    );
}

#[test]
fn count_and_for_each_on_module_calls_make_keyed_module_paths() {
    let dir = common::scratch(&[
        (
            "main.tf",
            "module \"m\" {\n  source   = \"./m\"\n  for_each = toset([\"x\", \"y\"])\n  name     = each.key\n}\n\nmodule \"n\" {\n  source = \"./m\"\n  count  = 2\n  name   = \"n${count.index}\"\n}\n\noutput \"names\" {\n  value = [module.m[\"y\"].name, module.n[1].name]\n}\n",
        ),
        (
            "m/main.tf",
            "variable \"name\" {}\n\nresource \"aws_sns_topic\" \"t\" {\n  name = var.name\n}\n\noutput \"name\" {\n  value = aws_sns_topic.t.name\n}\n",
        ),
    ]);
    let project = load(&dir).unwrap();
    let addresses: Vec<&str> = project.instances().map(|i| i.address.as_str()).collect();
    assert_eq!(
        addresses,
        [
            "module.m[\"x\"].aws_sns_topic.t",
            "module.m[\"y\"].aws_sns_topic.t",
            "module.n[0].aws_sns_topic.t",
            "module.n[1].aws_sns_topic.t",
        ]
    );
    assert_eq!(
        project
            .instance("module.n[1].aws_sns_topic.t")
            .unwrap()
            .attributes,
        value(json!({"name": "n1"}))
    );
    // No state, but the topics' names are set in their configuration: Terraform knows them
    // at plan time (`name = "y"` in the plan).
    let names = project
        .outputs()
        .into_iter()
        .find(|o| o.name == "names")
        .unwrap();
    assert_eq!(
        names.value,
        Value::List(vec![Value::String("y".into()), Value::String("n1".into())])
    );
}

#[test]
fn the_fixture_is_formatted_as_terraform_fmt_writes_it() {
    let dir = config_common::dir();
    for sub in [".", ".terraform/modules/network"] {
        let run = std::process::Command::new("terraform")
            .args(["fmt", "-check", "-recursive", sub])
            .current_dir(&dir)
            .output();
        match run {
            Ok(output) => assert!(
                output.status.success(),
                "terraform fmt -check {sub}: {}",
                String::from_utf8_lossy(&output.stdout)
            ),
            Err(_) => {
                println!("note: terraform is not on PATH; fmt check skipped");
                return;
            }
        }
    }
}

#[test]
fn a_dynamic_block_left_out_names_the_instance_it_belongs_to() {
    let module = r#"resource "aws_sqs_queue" "dlq" {
  name = "dlq"
}

resource "aws_lambda_function" "f" {
  function_name = "f"
  role          = "r"

  dynamic "dead_letter_config" {
    for_each = aws_sqs_queue.dlq.arn == null ? [] : [true]
    content {
      target_arn = aws_sqs_queue.dlq.arn
    }
  }
}
"#;
    let dir = common::scratch(&[
        (
            "main.tf",
            "module \"a\" {\n  source = \"./m\"\n}\n\nmodule \"b\" {\n  source = \"./m\"\n}\n",
        ),
        ("m/main.tf", module),
    ]);
    let project = load(&dir).unwrap();
    // The queue's ARN is known only after apply, as Terraform's plan also says: one
    // diagnostic per module instance, each naming its own.
    let subjects: Vec<&str> = project
        .diagnostics()
        .iter()
        .map(|d| d.subject.as_str())
        .collect();
    assert_eq!(
        subjects,
        [
            "module.a.aws_lambda_function.f dynamic \"dead_letter_config\"",
            "module.b.aws_lambda_function.f dynamic \"dead_letter_config\"",
        ]
    );
}

/// The AWS provider answers `aws_partition` and `aws_region` from its own region at plan time,
/// offline too (its documentation: the partition and the region "in which the provider is
/// working"): a `terraform plan -refresh=false` of this root with no state plans the bucket's
/// ARN and the `logging_config` block.
const PROVIDER_DATA: &str = r#"variable "region" {
  default = "eu-west-1"
}

provider "aws" {
  region = var.region
}

data "aws_partition" "current" {}

data "aws_region" "current" {}

locals {
  arn = "arn:${data.aws_partition.current.partition}:s3:::logs-${data.aws_region.current.name}"
}

resource "aws_lambda_function" "f" {
  function_name = "f"
  role          = "r"
  description   = local.arn

  dynamic "logging_config" {
    for_each = data.aws_partition.current.partition == "aws" ? [true] : []
    content {
      log_format = "Text"
    }
  }
}
"#;

/// The evaluated arguments of `aws_lambda_function.f` in a root of `main`, and the subjects
/// of the load's diagnostics.
fn function_of(main: &str) -> (BTreeMap<String, Value>, Vec<String>) {
    let dir = common::scratch(&[("main.tf", main)]);
    let project = load(&dir).unwrap();
    let function = project.instance("aws_lambda_function.f").unwrap();
    let Value::Object(attributes) = &function.attributes else {
        panic!("{:?}", function.attributes);
    };
    let subjects = project
        .diagnostics()
        .iter()
        .map(|d| d.subject.clone())
        .collect();
    (attributes.clone(), subjects)
}

#[test]
fn the_partition_and_region_come_from_the_provider_when_the_state_has_none() {
    let (attributes, diagnostics) = function_of(PROVIDER_DATA);
    assert_eq!(diagnostics, Vec::<String>::new());
    assert_eq!(
        attributes["description"],
        Value::String("arn:aws:s3:::logs-eu-west-1".into())
    );
    assert!(
        matches!(&attributes["logging_config"], Value::List(blocks) if blocks.len() == 1),
        "{attributes:?}"
    );
    // China's partition from a China region.
    let (attributes, _) = function_of(&PROVIDER_DATA.replace("eu-west-1", "cn-north-1"));
    assert_eq!(
        attributes["description"],
        Value::String("arn:aws-cn:s3:::logs-cn-north-1".into())
    );
    assert!(
        attributes
            .get("logging_config")
            .is_none_or(|v| matches!(v, Value::List(blocks) if blocks.is_empty())),
        "{attributes:?}"
    );
}

#[test]
fn without_a_known_provider_region_the_partition_stays_unknown() {
    // No region in the configuration (it would come from the environment at plan time).
    let (attributes, diagnostics) =
        function_of(&PROVIDER_DATA.replace("  region = var.region\n", ""));
    assert_eq!(attributes["description"], Value::Unknown);
    assert_eq!(
        diagnostics,
        ["aws_lambda_function.f dynamic \"logging_config\""]
    );
}
