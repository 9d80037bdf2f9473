//! Provenance of attribute values in `fixtures/projects/provenance`, each worked out by hand
//! from the files: spans are checked by the text they cover, lines by counting.
#![allow(clippy::unwrap_used)]

use crate::config_common;

use config_common::{path, project, text};
use reconciler::terraform::config::{Collection, LoadOptions, Project, Provenance, VariableSource};
use reconciler::terraform::state::PathStep;

/// The provenance of `address`'s attribute at `steps` (dot-separated).
fn of(project: &Project, address: &str, steps: &str) -> Provenance {
    project.provenance(address, &path(steps)).unwrap()
}

/// The file and covered text of a literal.
fn literal(project: &Project, provenance: &Provenance) -> (String, String) {
    let Provenance::Literal { file, span } = provenance else {
        panic!("{provenance:?}")
    };
    (file.clone(), text(project, file, span).to_string())
}

fn key_step(key: &str) -> PathStep {
    PathStep::Key(key.to_owned())
}

fn pair(file: &str, text: &str) -> (String, String) {
    (file.to_string(), text.to_string())
}

#[test]
fn literals_at_the_use_site() {
    let project = project();
    let volume = of(
        &project,
        "aws_instance.web[0]",
        "root_block_device.0.volume_size",
    );
    assert_eq!(literal(&project, &volume), pair("main.tf", "20"));
    // Inside a dynamic block's content, and a list element of a static block.
    let protocol = of(&project, "aws_security_group.admin", "ingress.1.protocol");
    assert_eq!(literal(&project, &protocol), pair("main.tf", "\"tcp\""));
    let cidr = of(
        &project,
        "aws_security_group.admin",
        "egress.0.cidr_blocks.0",
    );
    assert_eq!(literal(&project, &cidr), pair("main.tf", "\"0.0.0.0/0\""));
}

#[test]
fn variables_point_at_their_default_or_assignment() {
    let project = project();
    let Provenance::Variable {
        module,
        name,
        source,
        ..
    } = of(&project, "aws_instance.web[1]", "instance_type")
    else {
        panic!()
    };
    assert_eq!((module, name.as_str()), (None, "instance_type"));
    let VariableSource::Default { file, span } = source else {
        panic!("{source:?}")
    };
    assert_eq!(
        (file.as_str(), text(&project, &file, &span)),
        ("variables.tf", "\"t3.micro\"")
    );

    // each.value.versioning of for_each = var.buckets: the entry inside the default, as a
    // for_each entry whose collection is the variable, at path ["logs", "versioning"].
    let status = of(
        &project,
        "aws_s3_bucket_versioning.b[\"logs\"]",
        "versioning_configuration.0.status",
    );
    let Provenance::ForEach {
        key,
        file,
        span,
        collection:
            Collection::Variable {
                module: None,
                name,
                source: VariableSource::Default { .. },
            },
        path,
    } = status
    else {
        panic!("{status:?}")
    };
    assert_eq!((key.as_str(), name.as_str()), ("logs", "buckets"));
    assert_eq!(path, [key_step("logs"), key_step("versioning")]);
    assert_eq!(text(&project, &file, &span), "\"Enabled\"");

    // lookup(each.value, "expire", 0) reads the entry's `expire` when it has one: "assets"
    // writes `expire = 90` in the default.
    let expire = of(&project, "aws_s3_bucket.b[\"assets\"]", "tags.Expire");
    let Provenance::ForEach {
        key,
        file,
        span,
        path,
        ..
    } = expire
    else {
        panic!("{expire:?}")
    };
    assert_eq!(key, "assets");
    assert_eq!(path, [key_step("assets"), key_step("expire")]);
    assert_eq!(
        (file.as_str(), text(&project, &file, &span)),
        ("variables.tf", "90")
    );
    // try(each.value.lock, "none"): the type has no `lock`, so the value is try's default,
    // which no entry holds.
    let lock = of(&project, "aws_s3_bucket.b[\"assets\"]", "tags.Lock");
    assert!(
        matches!(&lock, Provenance::Expression { reason, .. } if reason == "the result of try()"),
        "{lock:?}"
    );

    // A path into a local's object that reads a variable set in the var file.
    let owner = of(&project, "aws_iam_user.ops[\"bob\"]", "tags.Owner");
    let Provenance::Local {
        name,
        file,
        span,
        inner,
        ..
    } = owner
    else {
        panic!("{owner:?}")
    };
    assert_eq!((name.as_str(), file.as_str()), ("common_tags", "locals.tf"));
    assert!(text(&project, &file, &span).starts_with('{'));
    let Provenance::Variable {
        name,
        source: VariableSource::VarFile { file, line, span },
        ..
    } = *inner
    else {
        panic!("{inner:?}")
    };
    assert_eq!(
        (name.as_str(), file.as_str(), line),
        ("owner", "extra.tfvars", 1)
    );
    assert_eq!(text(&project, &file, &span), "\"team-b\"");
}

#[test]
fn locals_are_followed_to_their_expression() {
    let project = project();
    let ami = of(&project, "aws_instance.web[1]", "ami");
    let Provenance::Local {
        module: None,
        name,
        file,
        span,
        inner,
    } = ami
    else {
        panic!("{ami:?}")
    };
    assert_eq!((name.as_str(), file.as_str()), ("ami", "locals.tf"));
    assert_eq!(text(&project, &file, &span), "\"ami-0abc1234\"");
    assert_eq!(
        literal(&project, &inner),
        pair("locals.tf", "\"ami-0abc1234\"")
    );
    // The dynamic block iterates the local `ports = toset(var.admin_ports)`, the set of
    // [22, 443] (terraform.tfvars.json): block 1 is the element 443, written on line 3.
    let Provenance::Local { name, inner, .. } =
        of(&project, "aws_security_group.admin", "ingress.1.from_port")
    else {
        panic!()
    };
    assert_eq!(name, "ports");
    let Provenance::Variable {
        name,
        source: VariableSource::Tfvars { file, line, span },
        ..
    } = *inner
    else {
        panic!("{inner:?}")
    };
    assert_eq!(
        (name.as_str(), file.as_str(), line),
        ("admin_ports", "terraform.tfvars.json", 3)
    );
    assert_eq!(text(&project, &file, &span), "443");
}

#[test]
fn for_each_entries_of_a_literal_map() {
    let project = project();
    let retention = of(
        &project,
        "aws_sqs_queue.jobs[\"slow\"]",
        "message_retention_seconds",
    );
    let Provenance::ForEach {
        key,
        file,
        span,
        collection,
        path,
    } = retention
    else {
        panic!("{retention:?}")
    };
    assert_eq!(
        collection,
        Collection::InPlace {
            iterator: "each".to_owned()
        }
    );
    assert_eq!(path, [key_step("slow"), key_step("retention")]);
    assert_eq!((key.as_str(), file.as_str()), ("slow", "main.tf"));
    assert_eq!(text(&project, &file, &span), "86400");
    // The line of "slow = { retention = 86400 }" in main.tf.
    assert_eq!(
        project.files()["main.tf"][..span.start]
            .matches('\n')
            .count()
            + 1,
        72
    );
}

#[test]
fn module_inputs_are_traced_into_the_caller() {
    let project = project();
    let instance_type = of(&project, "module.app.aws_instance.this", "instance_type");
    let Provenance::ModuleInput {
        call,
        argument,
        file,
        span,
        inner,
    } = instance_type
    else {
        panic!("{instance_type:?}")
    };
    assert_eq!(
        (call.as_str(), argument.as_str(), file.as_str()),
        ("module.app", "instance_type", "main.tf")
    );
    assert_eq!(text(&project, &file, &span), "\"t3.small\"");
    assert_eq!(literal(&project, &inner), pair("main.tf", "\"t3.small\""));

    // each.value in a registry module, for_each = var.subnets, set by the root's var.subnets
    // from prod.auto.tfvars (line 6: `b = "10.0.2.0/24"`).
    let cidr = of(
        &project,
        "module.network.aws_subnet.private[\"b\"]",
        "cidr_block",
    );
    let Provenance::ModuleInput {
        call,
        argument,
        inner,
        ..
    } = cidr
    else {
        panic!("{cidr:?}")
    };
    assert_eq!(
        (call.as_str(), argument.as_str()),
        ("module.network", "subnets")
    );
    let Provenance::Variable {
        module: None,
        name,
        source: VariableSource::Tfvars { file, line, span },
        ..
    } = *inner
    else {
        panic!("{inner:?}")
    };
    assert_eq!(
        (name.as_str(), file.as_str(), line),
        ("subnets", "prod.auto.tfvars", 6)
    );
    assert_eq!(text(&project, &file, &span), "\"10.0.2.0/24\"");

    // Two module levels down, into an element of a list built around each.value.
    let record = of(
        &project,
        "module.app.module.dns.aws_route53_record.this[\"www\"]",
        "records.0",
    );
    let Provenance::ModuleInput {
        call, file, inner, ..
    } = record
    else {
        panic!("{record:?}")
    };
    assert_eq!(
        (call.as_str(), file.as_str()),
        ("module.app.module.dns", "modules/app/main.tf")
    );
    assert_eq!(
        literal(&project, &inner),
        pair("modules/app/main.tf", "\"10.0.2.10\"")
    );

    // A dynamic block over a module variable, element 1 of [22, 443] in terraform.tfvars.json.
    let port = of(
        &project,
        "module.app.aws_security_group.this",
        "ingress.1.to_port",
    );
    let Provenance::ModuleInput { inner, .. } = port else {
        panic!("{port:?}")
    };
    let Provenance::Variable {
        source: VariableSource::Tfvars { file, line, span },
        ..
    } = *inner
    else {
        panic!("{inner:?}")
    };
    assert_eq!((file.as_str(), line), ("terraform.tfvars.json", 3));
    assert_eq!(text(&project, &file, &span), "443");

    // A child variable the call does not set: its default.
    let monitoring = of(&project, "module.app.aws_instance.this", "monitoring");
    let Provenance::Variable {
        module,
        source: VariableSource::Default { file, span },
        ..
    } = monitoring
    else {
        panic!("{monitoring:?}")
    };
    assert_eq!(module.as_deref(), Some("module.app"));
    assert_eq!(
        (file.as_str(), text(&project, &file, &span)),
        ("modules/app/variables.tf", "false")
    );
}

#[test]
fn expressions_too_complex_to_invert_give_a_reason() {
    let project = project();
    let reason = |address: &str, steps: &str| match of(&project, address, steps) {
        Provenance::Expression {
            file, span, reason, ..
        } => (text(&project, &file, &span).to_string(), reason),
        other => panic!("{other:?}"),
    };
    let (text, why) = reason("aws_instance.web[0]", "tags");
    assert!(text.starts_with("merge(local.common_tags"), "{text}");
    assert_eq!(why, "the result of merge()");
    let (text, why) = reason("aws_instance.web[0]", "subnet_id");
    assert_eq!(
        (text.as_str(), why.as_str()),
        (
            "module.network.subnet_ids[\"a\"]",
            "an output of module.network"
        )
    );
    let (text, why) = reason("aws_s3_bucket_versioning.b[\"logs\"]", "bucket");
    assert_eq!(text, "aws_s3_bucket.b[each.key].id");
    assert_eq!(why, "refers to a resource: aws_s3_bucket.b");
    let (text, _) = reason("aws_iam_user.ops[\"bob\"]", "name");
    assert_eq!(text, "each.key");
    let (text, _) = reason("aws_s3_bucket.b[\"logs\"]", "bucket");
    assert_eq!(text, "\"${local.name_prefix}-${each.key}\"");
}

#[test]
fn absent_attributes_point_at_the_block_to_add_them_to() {
    let project = project();
    let Provenance::Absent { file, span } = of(&project, "aws_instance.web[0]", "monitoring")
    else {
        panic!()
    };
    assert!(text(&project, &file, &span).starts_with("resource \"aws_instance\" \"web\" {"));
    let Provenance::Absent { file, span } =
        of(&project, "aws_instance.web[0]", "root_block_device.0.iops")
    else {
        panic!()
    };
    assert!(text(&project, &file, &span).starts_with("root_block_device {"));
    let Provenance::Absent { file, span } = of(
        &project,
        "aws_security_group.admin",
        "ingress.0.description",
    ) else {
        panic!()
    };
    assert!(text(&project, &file, &span).starts_with("content {"));
    // A tag the literal map lacks: the map.
    let Provenance::Absent { file, span } =
        of(&project, "module.network.aws_vpc.this", "tags.Owner")
    else {
        panic!()
    };
    assert_eq!(text(&project, &file, &span), "{\n    Name = var.name\n  }");
    assert!(
        project
            .provenance("aws_instance.nothing", &path("ami"))
            .is_none()
    );
}

#[test]
fn spans_index_the_original_text_of_a_crlf_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = "resource \"aws_sqs_queue\" \"orders\" {\r\n  name = \"orders\"\r\n\r\n  tags = {\r\n    Team = \"orders\"\r\n  }\r\n}\r\n";
    std::fs::write(dir.path().join("main.tf"), text).unwrap();
    let project = Project::load(dir.path(), &LoadOptions::default()).unwrap();
    let Provenance::Literal { span, .. } = project
        .provenance("aws_sqs_queue.orders", &path("tags.Team"))
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(&text[span], "\"orders\"");
}
