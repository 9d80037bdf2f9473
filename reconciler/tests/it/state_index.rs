//! Reading Terraform state in both formats and finding instances by cloud identity.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use reconciler::terraform::state::{
    IndexKey, Instance, Mode, PathStep, State, StateError, StateFormat, StateIndex,
};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/state")
        .join(name)
}

fn tfstate() -> StateIndex {
    StateIndex::new(State::read(&fixture("terraform.tfstate")).unwrap())
}

fn show_json() -> StateIndex {
    StateIndex::new(State::read(&fixture("show.json")).unwrap())
}

fn addresses(found: Vec<&Instance>) -> Vec<&str> {
    found.into_iter().map(|i| i.address.as_str()).collect()
}

fn key(name: &str) -> PathStep {
    PathStep::Key(name.to_string())
}

/// (resource type filter, identity, expected addresses), for both formats.
const LOOKUPS: &[(Option<&str>, &str, &[&str])] = &[
    (None, "vpc-0a1b2c3d4e5f60718", &["aws_vpc.main"]),
    (None, "sg-0123456789abcdef0", &["aws_security_group.web"]),
    (
        Some("aws_security_group"),
        "vpc-0a1b2c3d4e5f60718/web",
        &["aws_security_group.web"],
    ),
    (None, "i-0aa11bb22cc33dd44", &["aws_instance.web[0]"]),
    (
        None,
        "arn:aws:ec2:eu-west-1:123456789012:instance/i-0ee55ff66aa77bb88",
        &["aws_instance.web[1]"],
    ),
    (None, "acme-prod-logs", &["aws_s3_bucket.logs"]),
    (
        None,
        "arn:aws:s3:::acme-prod-logs-replica",
        &["aws_s3_bucket.replica"],
    ),
    (Some("aws_iam_role"), "acme-app", &["aws_iam_role.app"]),
    (None, "AROAEXAMPLEROLEID0001", &["aws_iam_role.app"]),
    (
        None,
        "arn:aws:iam::123456789012:policy/acme-app-read",
        &["aws_iam_policy.read"],
    ),
    (
        Some("aws_lambda_function"),
        "acme-worker",
        &["aws_lambda_function.worker"],
    ),
    (
        Some("aws_db_instance"),
        "acme-prod",
        &["aws_db_instance.main"],
    ),
    (
        None,
        "db-ABCDEFGHIJKLMNOPQRSTUVWXY",
        &["aws_db_instance.main"],
    ),
    (
        None,
        "subnet-0b0b0b0b0b0b0b0b2",
        &["module.net.aws_subnet.private[\"b\"]"],
    ),
    (
        None,
        "https://sqs.eu-west-1.amazonaws.com/123456789012/acme-jobs-1",
        &["module.app[1].aws_sqs_queue.jobs"],
    ),
    (
        Some("aws_sqs_queue"),
        "acme-jobs-0",
        &["module.app[0].aws_sqs_queue.jobs"],
    ),
    (
        Some("aws_cloudwatch_log_group"),
        "/acme/app-1",
        &["module.app[1].aws_cloudwatch_log_group.this"],
    ),
    (
        None,
        "arn:aws:sns:eu-west-1:123456789012:acme-alarms",
        &["module.app[0].module.alerts.aws_sns_topic.alarms"],
    ),
    (
        Some("aws_sns_topic"),
        "acme-alarms",
        &["module.app[0].module.alerts.aws_sns_topic.alarms"],
    ),
    (
        Some("aws_ssm_parameter"),
        "/acme/alerts/webhook",
        &["module.app[0].module.alerts.aws_ssm_parameter.webhook"],
    ),
    (None, "123456789012", &["data.aws_caller_identity.current"]),
    (None, "2851119427", &["data.aws_iam_policy_document.assume"]),
    // Names are only keys of their own type, and a type filter excludes the others.
    (Some("aws_s3_bucket"), "acme-app", &[]),
    (Some("aws_iam_role"), "sg-0123456789abcdef0", &[]),
    (None, "no-such-thing", &[]),
    (None, "", &[]),
];

#[test]
fn lookups_find_the_managing_address_in_both_formats() {
    for index in [tfstate(), show_json()] {
        for (resource_type, identity, expected) in LOOKUPS {
            let found = addresses(index.lookup(*resource_type, identity));
            assert_eq!(
                found,
                *expected,
                "{} lookup({resource_type:?}, {identity:?})",
                index.state().origin
            );
        }
    }
}

#[test]
fn without_a_type_every_match_is_found_managed_first() {
    let text = br#"{"version": 4, "resources": [
        {"mode": "data", "type": "aws_vpc", "name": "seen", "provider": "p",
         "instances": [{"attributes": {"id": "vpc-1"}}]},
        {"mode": "managed", "type": "aws_sqs_queue", "name": "q", "provider": "p",
         "instances": [{"attributes": {"id": "https://sqs/acme", "name": "acme"}}]},
        {"mode": "managed", "type": "aws_s3_bucket", "name": "b", "provider": "p",
         "instances": [{"attributes": {"id": "acme", "bucket": "acme"}}]},
        {"mode": "managed", "type": "aws_vpc", "name": "main", "provider": "p",
         "instances": [{"attributes": {"id": "vpc-1"}}]}]}"#;
    let index = StateIndex::new(State::parse(text, "inline").unwrap());
    assert_eq!(
        addresses(index.lookup(None, "acme")),
        ["aws_sqs_queue.q", "aws_s3_bucket.b"]
    );
    assert_eq!(
        addresses(index.lookup(Some("aws_s3_bucket"), "acme")),
        ["aws_s3_bucket.b"]
    );
    assert_eq!(
        addresses(index.lookup(None, "vpc-1")),
        ["aws_vpc.main", "data.aws_vpc.seen"]
    );
}

#[test]
fn addresses_carry_modules_and_keys() {
    let index = tfstate();
    let subnet = index
        .instance("module.net.aws_subnet.private[\"a\"]")
        .unwrap();
    assert_eq!(subnet.module.as_deref(), Some("module.net"));
    assert_eq!(subnet.index, Some(IndexKey::Str("a".into())));
    let web = index.instance("aws_instance.web[1]").unwrap();
    assert_eq!(web.index, Some(IndexKey::Int(1)));
    assert!(web.tainted);
    let data = index
        .instance("data.aws_iam_policy_document.assume")
        .unwrap();
    assert_eq!(data.mode, Mode::Data);
    let nested = index
        .instance("module.app[0].module.alerts.aws_sns_topic.alarms")
        .unwrap();
    assert_eq!(
        nested.module.as_deref(),
        Some("module.app[0].module.alerts")
    );
    assert!(index.instance("aws_instance.web").is_none());
    assert_eq!(index.iter().count(), 20);
}

#[test]
fn providers_are_source_addresses_even_when_aliased() {
    let index = tfstate();
    let replica = index.instance("aws_s3_bucket.replica").unwrap();
    assert_eq!(replica.provider, "registry.terraform.io/hashicorp/aws");
}

#[test]
fn sensitive_values_stay_marked() {
    for index in [tfstate(), show_json()] {
        let db = index.instance("aws_db_instance.main").unwrap();
        assert!(db.is_sensitive(&[key("password")]));
        assert!(!db.is_sensitive(&[key("username")]));
        let worker = index.instance("aws_lambda_function.worker").unwrap();
        let token = [
            key("environment"),
            PathStep::Index(0),
            key("variables"),
            key("API_TOKEN"),
        ];
        assert!(worker.is_sensitive(&token));
        assert!(!worker.is_sensitive(&token[..3]));
        let state = index.state();
        assert!(state.outputs["db_password"].sensitive);
        assert!(!state.outputs["vpc_id"].sensitive);
    }
}

#[test]
fn both_formats_hold_the_same_instances() {
    let (tfstate, show) = (tfstate(), show_json());
    assert_eq!(tfstate.state().format, StateFormat::Tfstate);
    assert_eq!(show.state().format, StateFormat::ShowJson);
    assert_eq!(tfstate.iter().count(), show.iter().count());
    for from_file in tfstate.iter() {
        let from_show = show.instance(&from_file.address).unwrap();
        // `private` is the one field `terraform show -json` leaves out.
        let without_private = Instance {
            private: None,
            ..from_file.clone()
        };
        assert_eq!(&without_private, from_show, "{}", from_file.address);
    }
    assert_eq!(tfstate.state().outputs, show.state().outputs);
}

#[test]
fn state_file_metadata_is_kept() {
    let state = tfstate().state().clone();
    assert_eq!(state.terraform_version.as_deref(), Some("1.11.4"));
    assert_eq!(state.serial, Some(42));
    assert_eq!(
        state.lineage.as_deref(),
        Some("3f2b7c1e-5d4a-4e8b-9c6f-0a1b2c3d4e5f")
    );
    let group = tfstate()
        .instance("aws_security_group.web")
        .unwrap()
        .clone();
    assert!(group.private.is_some());
    assert_eq!(group.dependencies, ["aws_vpc.main"]);
}

#[test]
fn a_version_3_state_is_refused_naming_file_and_version() {
    let error = State::read(&fixture("v3.tfstate")).unwrap_err();
    assert!(
        matches!(error, StateError::UnsupportedVersion { .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains("v3.tfstate"), "{message}");
    assert!(message.contains("version 3"), "{message}");
}

#[test]
fn a_truncated_state_is_refused_naming_the_file() {
    let error = State::read(&fixture("corrupt.tfstate")).unwrap_err();
    let message = error.to_string();
    assert!(message.contains("corrupt.tfstate"), "{message}");
    assert!(message.contains("EOF"), "{message}");
}

#[test]
fn a_missing_file_is_named() {
    let error = State::read(&fixture("absent.tfstate")).unwrap_err();
    assert!(error.to_string().contains("absent.tfstate"), "{error}");
}

#[test]
fn a_mistyped_field_is_named_by_its_json_path() {
    let text = br#"{"version": 4, "resources": [
        {"mode": "managed", "type": "aws_vpc", "name": "a", "provider": "p", "instances": []},
        {"mode": "managed", "type": "aws_vpc", "name": "b", "provider": "p",
         "instances": [{"index_key": true, "attributes": {}}]}]}"#;
    let message = State::parse(text, "bad.tfstate").unwrap_err().to_string();
    assert!(message.starts_with("bad.tfstate: "), "{message}");
    assert!(
        message.contains("resources[1].instances[0].index_key"),
        "{message}"
    );

    let text = br#"{"version": 4, "resources": [{"mode": "ephemeral", "type": "t", "name": "n", "provider": "p"}]}"#;
    let message = State::parse(text, "mode.tfstate").unwrap_err().to_string();
    assert!(message.contains("resources[0].mode"), "{message}");
}

#[test]
fn show_json_of_an_unknown_major_version_is_refused() {
    let error = State::parse(br#"{"format_version": "2.0"}"#, "show.json").unwrap_err();
    assert!(matches!(error, StateError::UnsupportedFormatVersion { .. }));
    assert!(error.to_string().contains("show.json"), "{error}");
    assert!(error.to_string().contains("2.0"), "{error}");
    assert!(State::parse(br#"{"format_version": "1.2"}"#, "show.json").is_ok());
}

#[test]
fn json_that_is_not_state_is_refused() {
    let error = State::parse(br#"{"resources": []}"#, "other.json").unwrap_err();
    assert!(
        matches!(error, StateError::UnknownFormat { .. }),
        "{error:?}"
    );
    let error = State::parse(b"[1, 2]", "list.json").unwrap_err();
    assert!(error.to_string().starts_with("list.json: "), "{error}");
    let error = State::parse(br#"{"version": 4} trailing"#, "trail.json").unwrap_err();
    assert!(error.to_string().starts_with("trail.json: "), "{error}");
}

#[test]
fn text_that_is_not_json_is_named_as_such_with_the_position() {
    let error = State::parse(b"not json", "terraform.tfstate").unwrap_err();
    assert!(matches!(error, StateError::NotJson { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "terraform.tfstate: not a Terraform state: expected a JSON document \
         (expected ident at line 1 column 2)"
    );
    let error = State::parse(br#"{"version": 4, "resources": "x"}"#, "s.tfstate").unwrap_err();
    let text = error.to_string();
    assert!(
        text.starts_with("s.tfstate: not a Terraform state as expected: at `resources`: "),
        "{text}"
    );
}

#[test]
fn an_empty_show_json_state_has_no_instances() {
    let state = State::parse(br#"{"format_version": "1.0"}"#, "empty.json").unwrap();
    assert!(state.instances.is_empty());
}

#[test]
fn for_each_keys_are_quoted_as_terraform_prints_them() {
    let text = br#"{"version": 4, "resources": [{"mode": "managed", "type": "aws_ssm_parameter",
        "name": "p", "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
        "instances": [{"index_key": "a \"b\" ${c}", "attributes": {"name": "/x"}}]}]}"#;
    let state = State::parse(text, "keys.tfstate").unwrap();
    assert_eq!(
        state.instances[0].address,
        r#"aws_ssm_parameter.p["a \"b\" $${c}"]"#
    );
}

/// `terraform state pull` against a local state file needs no providers. Skipped with a note
/// when `terraform` is not installed.
#[test]
fn terraform_state_pull_reads_a_local_state() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("terraform.tfstate"),
        dir.path().join("terraform.tfstate"),
    )
    .unwrap();
    match State::pull(dir.path()) {
        Err(StateError::TerraformMissing) => eprintln!("note: terraform not on PATH; skipped"),
        Err(error) => panic!("{error}"),
        Ok(state) => {
            assert_eq!(
                state,
                State {
                    origin: state.origin.clone(),
                    ..State::read(&fixture("terraform.tfstate")).unwrap()
                }
            );
        }
    }
}

/// `terraform show -json` needs the providers' schemas, which cannot be downloaded here, so
/// this runs it on the fixture only where it works, and otherwise prints a note.
#[test]
fn terraform_show_json_agrees_with_the_state_file_where_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("terraform.tfstate"),
        dir.path().join("terraform.tfstate"),
    )
    .unwrap();
    let output = std::process::Command::new("terraform")
        .args(["show", "-json", "terraform.tfstate"])
        .current_dir(dir.path())
        .output();
    let output = match output {
        Ok(output) if output.status.success() => output,
        Ok(_) => {
            return eprintln!("note: terraform show -json needs provider schemas here; skipped");
        }
        Err(_) => return eprintln!("note: terraform not on PATH; skipped"),
    };
    let shown = StateIndex::new(State::parse(&output.stdout, "terraform show -json").unwrap());
    for instance in tfstate().iter() {
        assert!(
            shown.instance(&instance.address).is_some(),
            "{}",
            instance.address
        );
    }
}

#[test]
fn a_natural_key_may_hold_numbers_and_booleans() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("terraform.tfstate");
    std::fs::write(
        &path,
        r#"{"version": 4, "terraform_version": "1.11.0", "serial": 1, "lineage": "x",
            "outputs": {}, "resources": [{"mode": "managed", "type": "aws_network_acl_rule",
            "name": "ssh", "provider": "provider[\"registry.terraform.io/hashicorp/aws\"]",
            "instances": [{"schema_version": 0, "attributes": {"id": "nacl-1234567890",
            "network_acl_id": "acl-0f1e", "rule_number": 110, "egress": false,
            "protocol": "6", "rule_action": "allow", "cidr_block": "10.0.0.0/8"}}]}]}"#,
    )
    .unwrap();
    let index = StateIndex::new(State::read(&path).unwrap());
    assert_eq!(
        addresses(index.lookup(Some("aws_network_acl_rule"), "acl-0f1e/110/false")),
        ["aws_network_acl_rule.ssh"]
    );
    assert!(index.lookup(None, "acl-0f1e/110/true").is_empty());
}
