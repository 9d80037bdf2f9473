//! Properties of the HCL edit tools: fixtures round-trip through the parser byte for byte, and
//! random sequences of edits always give text that parses and leaves other blocks untouched.

use hcl::edit::Span;
use proptest::prelude::*;
use reconciler::synthesize::edit::{EditError, Files, run_tool};
use reconciler::terraform::source::round_trip;
use serde_json::json;
use std::path::{Path, PathBuf};

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

fn hcl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            hcl_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "tf" || e == "tfvars") {
            out.push(path);
        }
    }
}

#[test]
fn every_fixture_round_trips_byte_for_byte() {
    let mut paths = Vec::new();
    hcl_files(&fixtures_root(), &mut paths);
    assert!(!paths.is_empty());
    assert!(paths.iter().any(|p| p.ends_with("hcl/crlf.tf")));
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("read");
        let printed = round_trip(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(printed, text, "{} does not round-trip", path.display());
    }
}

/// The texts of the top-level blocks other than the ones the random edits target.
fn untouched_blocks(text: &str) -> Vec<String> {
    let body = hcl::edit::parser::parse_body(text).expect("parses");
    body.blocks()
        .filter(|b| {
            !(b.has_exact_labels(&["aws_instance", "web"])
                || b.has_exact_labels(&["aws_security_group", "web"]))
        })
        .filter_map(|b| b.span().map(|s| text[s].to_owned()))
        .collect()
}

fn an_edit() -> impl Strategy<Value = (&'static str, serde_json::Value)> {
    let web =
        json!({"file": "main.tf", "block_type": "resource", "labels": ["aws_instance", "web"]});
    let sg = json!({"file": "main.tf", "block_type": "resource", "labels": ["aws_security_group", "web"]});
    let text = "[a-zA-Z0-9 ${}%\"\\\\é/_.-]{0,12}";
    let key = prop::sample::select(vec![
        "Name",
        "Environment",
        "Owner",
        "CostCenter",
        "kubernetes.io/role",
    ]);
    let port = prop::sample::select(vec![80, 443, 8443]);
    let (w1, w2, w3, w4, w5, w6) = (
        web.clone(),
        web.clone(),
        web.clone(),
        web.clone(),
        web.clone(),
        web,
    );
    let (s1, s2) = (sg.clone(), sg);
    prop_oneof![
        text.prop_map(move |v| ("set_attribute", json!({"target": w1, "name": "instance_type", "value": v}))),
        (key.clone(), text).prop_map(move |(k, v)| ("set_tags", json!({"target": w2, "tags": {k: v}}))),
        key.prop_map(move |k| ("set_tags", json!({"target": w3, "remove": [k]}))),
        port.clone().prop_map(move |p| ("add_block", json!({"target": s1, "block": {"block": "ingress", "attributes": {"from_port": p, "to_port": p, "protocol": "tcp"}}}))),
        port.prop_map(move |p| ("remove_block", json!({"target": s2, "block": "ingress", "match": {"from_port": p}}))),
        Just(("ignore_changes", json!({"target": w4, "attributes": ["tags"]}))),
        Just(("remove_attribute", json!({"target": w5, "name": "monitoring"}))),
        (0u32..5000).prop_map(move |n| {
            let mut target = w6.clone();
            target["path"] = json!([{"block": "root_block_device"}]);
            ("set_attribute", json!({"target": target, "name": "volume_size", "value": n}))
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_edits_parse_and_leave_other_blocks_alone(edits in prop::collection::vec(an_edit(), 1..8)) {
        let original = std::fs::read_to_string(fixtures_root().join("hcl/main.tf")).expect("read");
        let before = untouched_blocks(&original);
        let mut files = Files::new();
        files.insert("main.tf".to_owned(), original);
        for (tool, input) in edits {
            match run_tool(tool, &input.to_string(), &files) {
                Ok(result) => files.extend(result.files),
                Err(e @ EditError::Internal { .. }) => panic!("{tool}: {e}"),
                Err(_) => {}
            }
            let text = &files["main.tf"];
            prop_assert!(hcl::edit::parser::parse_body(text).is_ok(), "does not parse:\n{}", text);
            prop_assert_eq!(&untouched_blocks(text), &before);
        }
    }
}
