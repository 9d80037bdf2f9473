//! The benchmark's fixture projects (`fixtures/projects/`): each configuration, loaded with its
//! state, has exactly the state's resource instances, and every argument it sets evaluates to
//! the value the state holds. The hand-worked values of `fixtures/projects/expectations.json`
//! are checked against the evaluated configuration, and its cross-references against the state.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use knowledge::{AttrType, Member, NestingMode, ProviderSchema, ResourceSchema};
use reconciler::terraform::config::{LoadOptions, Project};
use reconciler::terraform::functions::Value;
use reconciler::terraform::state::{Mode, State};

const PROJECTS: [&str; 8] = [
    "web3tier",
    "serverless",
    "datalake",
    "static-site",
    "containers",
    "platform",
    "network",
    "media",
];

fn projects_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/projects")
}

fn load(name: &str) -> (Project, State) {
    let dir = projects_dir().join(name);
    let state = State::read(&dir.join("terraform.tfstate")).expect("state reads");
    let options = LoadOptions {
        state: Some(&state),
        ..LoadOptions::default()
    };
    let project = Project::load(&dir, &options).expect("configuration loads");
    assert!(
        project.diagnostics().is_empty(),
        "{name}: {:?}",
        project.diagnostics()
    );
    (project, state)
}

fn schema(resource_type: &str) -> &'static ResourceSchema {
    ProviderSchema::bundled()
        .expect("bundled schema")
        .resource(resource_type)
        .unwrap_or_else(|| panic!("{resource_type} is not in the bundled schema"))
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// Scalars equal as Terraform would convert them for the attribute (numbers written as
/// strings and the reverse).
fn scalar_eq(config: &Value, state: &Value) -> bool {
    match (config, state) {
        (Value::Number(a), Value::Number(b)) => (a - b).abs() < 1e-9,
        (Value::Number(a), Value::String(b)) | (Value::String(b), Value::Number(a)) => {
            b.parse::<f64>().is_ok_and(|b| (a - b).abs() < 1e-9)
        }
        (Value::Bool(a), Value::String(b)) | (Value::String(b), Value::Bool(a)) => {
            b == if *a { "true" } else { "false" }
        }
        _ => config == state,
    }
}

/// Whether `config` (configured, possibly partial) agrees with `state`, with no errors.
fn agrees(schema: &ResourceSchema, path: &str, config: &Value, state: &Value) -> bool {
    let mut errors = Vec::new();
    compare(schema, path, config, state, "", &mut errors);
    errors.is_empty()
}

/// Each configured item matches a different state item, in any order.
fn unordered(schema: &ResourceSchema, path: &str, config: &[Value], state: &[Value]) -> bool {
    if config.len() != state.len() {
        return false;
    }
    let mut used = vec![false; state.len()];
    config.iter().all(|item| {
        let found = (0..state.len()).find(|&i| !used[i] && agrees(schema, path, item, &state[i]));
        found.map(|i| used[i] = true).is_some()
    })
}

/// Compares a configured value with the state's at schema path `path` (names without
/// indexes); `at` is the path with indexes, for messages.
fn compare(
    schema: &ResourceSchema,
    path: &str,
    config: &Value,
    state: &Value,
    at: &str,
    errors: &mut Vec<String>,
) {
    let member = if path.is_empty() {
        None
    } else {
        schema.member(path)
    };
    match (config, member) {
        (Value::Null, _) => {}
        (Value::Unknown, _) => errors.push(format!("{at}: did not evaluate")),
        (Value::List(items), Some(Member::Block(block))) => {
            if items.is_empty() {
                return; // a dynamic block that produced nothing; the provider may fill it
            }
            compare_items(
                schema,
                path,
                items,
                state,
                block.nesting == NestingMode::Set,
                at,
                errors,
            );
        }
        (Value::List(items), Some(Member::Attribute(attribute))) => match &attribute.ty {
            AttrType::Set(_) => match state {
                Value::List(got) if unordered(schema, path, items, got) => {}
                _ => errors.push(format!("{at}: set {config:?} but state has {state:?}")),
            },
            _ if attribute.nested.is_some() => {
                compare_items(schema, path, items, state, false, at, errors);
            }
            _ => compare_items(schema, path, items, state, false, at, errors),
        },
        (Value::Object(fields), Some(Member::Attribute(attribute)))
            if matches!(attribute.ty, AttrType::Map(_)) =>
        {
            let Value::Object(got) = state else {
                errors.push(format!("{at}: map but state has {state:?}"));
                return;
            };
            let keys: BTreeSet<_> = fields.keys().collect();
            if keys != got.keys().collect() || fields.iter().any(|(k, v)| !scalar_eq(v, &got[k])) {
                errors.push(format!("{at}: {config:?} but state has {state:?}"));
            }
        }
        (Value::Object(fields), _) => {
            let Value::Object(got) = state else {
                errors.push(format!("{at}: object but state has {state:?}"));
                return;
            };
            for (name, value) in fields {
                match got.get(name) {
                    Some(s) => {
                        compare(schema, &join(path, name), value, s, &join(at, name), errors)
                    }
                    None => errors.push(format!("{at}: state has no {name}")),
                }
            }
        }
        (Value::List(items), None) => compare_items(schema, path, items, state, false, at, errors),
        _ => {
            if !scalar_eq(config, state) {
                errors.push(format!(
                    "{at}: configured {config:?} but state has {state:?}"
                ));
            }
        }
    }
}

fn compare_items(
    schema: &ResourceSchema,
    path: &str,
    items: &[Value],
    state: &Value,
    any_order: bool,
    at: &str,
    errors: &mut Vec<String>,
) {
    let Value::List(got) = state else {
        errors.push(format!("{at}: list but state has {state:?}"));
        return;
    };
    if any_order {
        if !unordered(schema, path, items, got) {
            errors.push(format!("{at}: {items:?} matches no arrangement of {got:?}"));
        }
        return;
    }
    if items.len() != got.len() {
        errors.push(format!(
            "{at}: {} items configured, {} in state",
            items.len(),
            got.len()
        ));
        return;
    }
    for (i, (item, s)) in items.iter().zip(got).enumerate() {
        compare(schema, path, item, s, &format!("{at}[{i}]"), errors);
    }
}

fn managed_addresses<'a>(addresses: impl Iterator<Item = (&'a str, Mode)>) -> BTreeSet<String> {
    addresses
        .filter(|(_, mode)| *mode == Mode::Managed)
        .map(|(address, _)| address.to_string())
        .collect()
}

/// The configured attributes as the provider stores them (a record name without its final
/// dot), where the provider normalizes a value before storing it.
fn stored_forms(resource_type: &str, configured: &Value) -> Value {
    let Value::Object(fields) = configured else {
        return configured.clone();
    };
    let stored = fields.iter().map(|(name, value)| {
        let normalized = value
            .to_json()
            .map(|json| Value::from_json(&knowledge::stored_form(resource_type, name, &json)));
        (name.clone(), normalized.unwrap_or_else(|| value.clone()))
    });
    Value::Object(stored.collect())
}

fn check_project(name: &str) {
    let (project, state) = load(name);
    let configured = managed_addresses(project.instances().map(|i| (i.address.as_str(), i.mode)));
    let stored = managed_addresses(state.instances.iter().map(|i| (i.address.as_str(), i.mode)));
    assert_eq!(configured, stored, "{name}: instance addresses differ");
    assert!(
        configured.len() >= 25,
        "{name}: only {} instances",
        configured.len()
    );

    let mut errors = Vec::new();
    for instance in project.instances().filter(|i| i.mode == Mode::Managed) {
        let stored = state
            .instances
            .iter()
            .find(|s| s.address == instance.address)
            .expect("address sets are equal");
        let schema = schema(&instance.resource_type);
        let stored = Value::from_json(&stored.attributes);
        compare(
            schema,
            "",
            &stored_forms(&instance.resource_type, &instance.attributes),
            &stored,
            &instance.address,
            &mut errors,
        );
    }
    assert!(
        errors.is_empty(),
        "{name}: configuration and state disagree:\n{}",
        errors.join("\n")
    );
}

/// The comparison is not vacuous: a state value changed behind the configuration's back is
/// reported at its attribute.
#[test]
fn a_changed_state_value_is_reported() {
    let (project, state) = load("web3tier");
    let address = "aws_launch_template.app";
    let instance = project.instance(address).expect("configured");
    let stored = state
        .instances
        .iter()
        .find(|i| i.address == address)
        .expect("stored");
    let mut attributes = Value::from_json(&stored.attributes);
    if let Value::Object(fields) = &mut attributes {
        fields.insert("instance_type".into(), Value::String("t3.small".into()));
    }
    let mut errors = Vec::new();
    compare(
        schema("aws_launch_template"),
        "",
        &instance.attributes,
        &attributes,
        address,
        &mut errors,
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("instance_type"), "{errors:?}");
}

#[test]
fn web3tier_configuration_matches_state() {
    check_project("web3tier");
}

#[test]
fn serverless_configuration_matches_state() {
    check_project("serverless");
}

#[test]
fn datalake_configuration_matches_state() {
    check_project("datalake");
}

#[test]
fn static_site_configuration_matches_state() {
    check_project("static-site");
}

#[test]
fn containers_configuration_matches_state() {
    check_project("containers");
}

#[test]
fn platform_configuration_matches_state() {
    check_project("platform");
}

#[test]
fn network_configuration_matches_state() {
    check_project("network");
}

#[test]
fn media_configuration_matches_state() {
    check_project("media");
}

/// The value at a dotted path of attribute names and list indexes.
fn at_path<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(value, |v, step| match v {
        Value::List(items) => items.get(step.parse::<usize>().ok()?),
        Value::Object(fields) => fields.get(step),
        _ => None,
    })
}

/// The schema path (names only) of a dotted path with indexes.
fn schema_path(path: &str) -> String {
    let names: Vec<_> = path
        .split('.')
        .filter(|s| s.parse::<usize>().is_err())
        .collect();
    names.join(".")
}

#[test]
fn hand_worked_expectations_hold_in_the_configuration() {
    let text = std::fs::read_to_string(projects_dir().join("expectations.json")).expect("reads");
    let all: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let mut errors = Vec::new();
    for name in PROJECTS {
        let (project, state) = load(name);
        let expected = &all[name];
        let config_value = |address: &str, path: &str| {
            let instance = project.instance(address)?;
            at_path(&instance.attributes, path).map(|v| (instance.resource_type.clone(), v.clone()))
        };
        for e in expected["values"].as_array().expect("values") {
            let (address, path) = (
                e["address"].as_str().expect("address"),
                e["attribute"].as_str().expect("attribute"),
            );
            let want = Value::from_json(&e["value"]);
            match config_value(address, path) {
                Some((rtype, got)) => {
                    let mut found = Vec::new();
                    compare(
                        schema(&rtype),
                        &schema_path(path),
                        &got,
                        &want,
                        address,
                        &mut found,
                    );
                    if !found.is_empty() {
                        errors.push(format!(
                            "{name}: {address}.{path} evaluates to {got:?}, expected {want:?}"
                        ));
                    }
                }
                // A dynamic block that produces nothing writes no block at all.
                None if want == Value::List(Vec::new()) && project.instance(address).is_some() => {}
                None => errors.push(format!("{name}: {address}.{path} is not configured")),
            }
        }
        for e in expected["same_as"].as_array().expect("same_as") {
            let (address, path) = (
                e["address"].as_str().expect("address"),
                e["attribute"].as_str().expect("attribute"),
            );
            let other = state
                .instances
                .iter()
                .find(|i| i.address == e["other"].as_str().expect("other"))
                .and_then(|i| {
                    let attributes = Value::from_json(&i.attributes);
                    at_path(
                        &attributes,
                        e["other_attribute"].as_str().expect("other_attribute"),
                    )
                    .cloned()
                });
            let got = config_value(address, path).map(|(_, v)| v);
            if got.is_none() || got != other {
                errors.push(format!(
                    "{name}: {address}.{path} evaluates to {got:?}, but {} is {other:?}",
                    e["other"]
                ));
            }
        }
        for address in expected["absent"].as_array().expect("absent") {
            let address = address.as_str().expect("address");
            if project.instance(address).is_some() {
                errors.push(format!("{name}: {address} should not be configured"));
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}
