//! Real public Terraform projects (`../shared/terraform-corpus`, read-only) as a new user runs
//! them: with an empty trail, `retrace reconcile` loads each and its plan check passes on the
//! unchanged code (exit 0, no collateral change). These use the layouts public examples use:
//! a root calling its repository through `../../`, `../../modules/...`, var files beside the
//! repository.

#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;

/// A corpus project as `corpus.json` lists it: name, root, state and var files (made
/// absolute: the listing gives them relative to the root, `--var-file` reads them from the
/// working directory as Terraform does).
struct Listed {
    name: String,
    root: String,
    state: String,
    var_files: Vec<String>,
}

/// Every project of the corpus.
fn listed(corpus: &Path) -> Vec<Listed> {
    let listing: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(corpus.join("corpus.json")).unwrap())
            .unwrap();
    let at = |entry: &serde_json::Value, key: &str| {
        corpus
            .join(entry[key].as_str().unwrap())
            .display()
            .to_string()
    };
    listing["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| Listed {
            name: entry["name"].as_str().unwrap().to_string(),
            root: at(entry, "root_module"),
            state: at(entry, "state"),
            var_files: (entry["var_files"].as_array().unwrap().iter())
                .map(|f| {
                    let root = corpus.join(entry["root_module"].as_str().unwrap());
                    root.join(f.as_str().unwrap()).display().to_string()
                })
                .collect(),
        })
        .collect()
}

#[test]
fn public_projects_load_and_check_clean_with_no_drift() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let empty = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(empty.path(), "[]").unwrap();
    let trail = empty.path().display().to_string();
    let projects = listed(&corpus);
    assert!(projects.len() >= 7, "the corpus lists its projects");
    for Listed {
        name,
        root,
        state,
        var_files,
    } in &projects
    {
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
        for file in var_files {
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
