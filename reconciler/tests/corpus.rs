//! Real public Terraform projects (`../shared/terraform-corpus`, read-only) as a new user runs
//! them: with an empty trail, `retrace reconcile` loads each and its plan check passes on the
//! unchanged code (exit 0, no collateral change). These use the layouts public examples use:
//! a root calling its repository through `../../`, `../../modules/...`, var files beside the
//! repository.

#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;

/// The corpus projects that load today, with their var files (relative to the root, as the
/// corpus README gives them).
const LOADING: &[(&str, &[&str])] = &[
    (
        "aws-ia-vpc-endpoints-minimal",
        &["../../retrace-corpus.tfvars"],
    ),
    ("tam-ecs-fargate", &[]),
    ("tam-s3-bucket-complete", &[]),
    ("tam-security-group-complete", &[]),
    ("tam-vpc-complete", &[]),
];

fn project(corpus: &Path, name: &str) -> (String, String) {
    let listing: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(corpus.join("corpus.json")).unwrap())
            .unwrap();
    let entry = listing["projects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("{name} is not in corpus.json"));
    let at = |key: &str| {
        corpus
            .join(entry[key].as_str().unwrap())
            .display()
            .to_string()
    };
    (at("root_module"), at("state"))
}

#[test]
fn public_projects_load_and_check_clean_with_no_drift() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let empty = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(empty.path(), "[]").unwrap();
    let trail = empty.path().display().to_string();
    for (name, var_files) in LOADING {
        let (root, state) = project(&corpus, name);
        let mut args = vec![
            "reconcile",
            "--project",
            &root,
            "--state",
            &state,
            "--logs",
            &trail,
            "--allow-empty",
            "--no-record",
            "--no-terraform",
            "--format",
            "json",
        ];
        for file in *var_files {
            args.extend(["--var-file", file]);
        }
        let output = common::retrace(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{name}: {stderr}");
        let doc = common::json(&output);
        let check = &doc["validations"][0];
        assert_eq!(check["validator"], "plan-check", "{name}");
        assert_eq!(check["passed"], true, "{name}: {check}");
        assert_eq!(check["collateral"], serde_json::json!([]), "{name}");
    }
}
