//! `retrace check-config`: what retrace sees of a project, each construct it could not
//! evaluate named by file and line; and `--var-file` read from the working directory, as
//! Terraform reads `-var-file`.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

/// Runs `retrace` in `dir`.
fn retrace_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retrace"))
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

/// A project with a call to a function Terraform does not have, on line 3 of main.tf, and
/// a variable set by a var file.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("infra")).unwrap();
    std::fs::write(
        dir.path().join("infra/main.tf"),
        "variable \"env\" {}\n\nlocals {\n  broken = nosuch(\"x\")\n}\n\nresource \"aws_sqs_queue\" \"q\" {\n  name = \"${var.env}-jobs\"\n}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("prod.tfvars"), "env = \"prod\"\n").unwrap();
    dir
}

#[test]
fn constructs_that_cannot_be_evaluated_are_listed_with_file_and_line() {
    let dir = project();
    let output = retrace_in(
        dir.path(),
        &[
            "check-config",
            "--project",
            "infra",
            "--var-file",
            "prod.tfvars",
        ],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "{stdout}");
    assert!(stdout.contains("1 resource instances"), "{stdout}");
    assert!(
        stdout.contains("main.tf:4  local.broken: "),
        "the local on line 4 is named: {stdout}"
    );
    assert!(stdout.contains("nosuch"), "{stdout}");

    let output = retrace_in(
        dir.path(),
        &[
            "check-config",
            "--project",
            "infra",
            "--var-file",
            "prod.tfvars",
            "--format",
            "json",
        ],
    );
    let doc = common::json(&output);
    assert_eq!(doc["resources"], 1);
    let diagnostics = doc["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{doc}");
    assert_eq!(diagnostics[0]["file"], "main.tf");
    assert_eq!(diagnostics[0]["line"], 4);
    assert_eq!(diagnostics[0]["subject"], "local.broken");
}

#[test]
fn a_var_file_is_read_from_the_working_directory() {
    let dir = project();
    // From the directory holding the var file: found.
    let output = retrace_in(
        dir.path(),
        &[
            "check-config",
            "--project",
            "infra",
            "--var-file",
            "prod.tfvars",
            "--format",
            "json",
        ],
    );
    let doc = common::json(&output);
    let unset = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["subject"] == "var.env");
    assert!(!unset, "var.env is set by prod.tfvars: {doc}");
    // From the project directory, the same relative path names a file that is not there.
    let output = retrace_in(
        &dir.path().join("infra"),
        &[
            "check-config",
            "--project",
            ".",
            "--var-file",
            "prod.tfvars",
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("prod.tfvars"), "{stderr}");
}

#[test]
fn a_project_that_does_not_load_is_an_error_naming_the_place() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("main.tf"),
        "resource \"a\" \"b\" {\n  x = \n}\n",
    )
    .unwrap();
    let output = retrace_in(dir.path(), &["check-config", "--project", "."]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("main.tf:2"), "{stderr}");
}

#[test]
fn every_corpus_project_is_evaluated_in_full() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let listing: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(corpus.join("corpus.json")).unwrap())
            .unwrap();
    for entry in listing["projects"].as_array().unwrap() {
        let name = entry["name"].as_str().unwrap();
        let root = corpus.join(entry["root_module"].as_str().unwrap());
        let state = corpus.join(entry["state"].as_str().unwrap());
        let mut args = vec![
            "check-config".to_string(),
            "--project".to_string(),
            root.display().to_string(),
            "--state".to_string(),
            state.display().to_string(),
            "--format".to_string(),
            "json".to_string(),
        ];
        for file in entry["var_files"].as_array().unwrap() {
            args.push("--var-file".to_string());
            args.push(root.join(file.as_str().unwrap()).display().to_string());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = common::retrace(&args);
        let doc = common::json(&output);
        let expected = EXPECTED.iter().find(|(n, _)| *n == name).map_or(0, |e| e.1);
        let found = doc["diagnostics"].as_array().unwrap();
        assert_eq!(found.len(), expected, "{name}: {doc}");
        assert!(doc["resources"].as_u64().unwrap() > 0, "{name}: {doc}");
    }
}

/// Diagnostics an expert accepts: values Terraform itself only knows at apply time.
/// learn-eks-cluster: the IRSA role's trust statements iterate over the EKS cluster's OIDC
/// issuer, which exists only once the cluster does.
const EXPECTED: &[(&str, usize)] = &[("learn-eks-cluster", 1)];
