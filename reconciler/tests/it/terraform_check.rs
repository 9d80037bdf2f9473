//! End-to-end: the real Terraform check keeps its initialised working directory beside the
//! knowledge base and reuses it on the next run; an OpenTofu project without `tofu` gets the
//! check reported as not run, never a failed run; a linked module directory, inside the
//! project or out of it, reconciles; a linked file is never written through or replaced.

use crate::common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The demo's report as JSON, recording into `kb`; exit 3 (the SSH rule is flagged).
fn demo(kb: &Path) -> serde_json::Value {
    let kb = kb.to_str().expect("utf-8");
    let output = common::retrace(&["--kb", kb, "demo", "--format", "json"]);
    assert_eq!(
        output.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    common::json(&output)
}

/// The terraform-plan verdict, or `None` with a notice when it did not run here (no
/// terraform or provider; under `CI=true` with terraform installed, a failure).
fn terraform_verdict(doc: &serde_json::Value) -> Option<serde_json::Value> {
    let ran = doc["validations"]
        .as_array()
        .expect("validations")
        .iter()
        .find(|v| v["validator"] == "terraform-plan")
        .cloned();
    if ran.is_none() {
        let skipped = doc["skipped_validators"].to_string();
        let present = reconciler::validate::terraform_present();
        assert!(
            !(present && std::env::var("CI").is_ok_and(|v| v == "true")),
            "terraform is installed but its validator did not run: {skipped}"
        );
        eprintln!("notice: skipping: the Terraform check did not run here: {skipped}");
    }
    ran
}

/// The cache entries under `DIR/terraform` (the temporary copies start with a dot).
fn entries(cache: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(cache.join("terraform"))
        .map(|dir| {
            dir.flatten()
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

#[test]
fn a_second_run_reuses_the_initialised_working_directory() {
    let place = tempfile::tempdir().expect("temp dir");
    let kb = place.path().join("knowledge.sqlite");
    let Some(first) = terraform_verdict(&demo(&kb)) else {
        return;
    };
    assert_eq!(first["passed"], true, "{first}");
    let made = entries(place.path());
    assert_eq!(
        made.len(),
        1,
        "one working directory for the demo: {made:?}"
    );
    let dot = made[0].join(".terraform");
    let before = std::fs::metadata(&dot).expect("the cached .terraform");
    assert!(dot.join("providers").is_dir(), "{}", dot.display());
    // Nothing of the run's scratch copy is left behind.
    let all = std::fs::read_dir(place.path().join("terraform"))
        .expect("cache")
        .count();
    assert_eq!(
        all,
        1,
        "{:?}",
        std::fs::read_dir(place.path().join("terraform"))
            .unwrap()
            .collect::<Vec<_>>()
    );

    let second = terraform_verdict(&demo(&kb)).expect("ran the first time");
    assert_eq!(second["passed"], true, "{second}");
    assert_eq!(entries(place.path()), made);
    let after = std::fs::metadata(&dot).expect("still there");
    // The same directory, not one removed and made again.
    assert_eq!((after.ino(), after.mtime()), (before.ino(), before.mtime()));
}

/// A copy of the bundled demo in a temporary directory: (its place, its retrace.toml).
fn demo_copy() -> (tempfile::TempDir, PathBuf) {
    let place = tempfile::tempdir().expect("temp dir");
    common::copy_dir(&common::repo().join("fixtures/demo"), place.path());
    let config = place.path().join("retrace.toml");
    (place, config)
}

/// `retrace reconcile` of a demo copy, recording into a throwaway knowledge base.
fn reconcile(place: &Path, config: &Path, extra: &[&str]) -> std::process::Output {
    let kb = place.join("kb/knowledge.sqlite");
    let mut args = vec![
        "--kb",
        kb.to_str().expect("utf-8"),
        "--config",
        config.to_str().expect("utf-8"),
        "reconcile",
        "--format",
        "json",
    ];
    args.extend(extra);
    common::retrace(&args)
}

#[test]
fn an_opentofu_project_without_tofu_reports_the_check_as_not_run() {
    let tofu = std::process::Command::new("tofu").arg("version").output();
    if tofu.is_ok_and(|o| o.status.success()) {
        eprintln!("notice: skipping: tofu is installed here");
        return;
    }
    let (place, config) = demo_copy();
    let project = place.path().join("project");
    std::fs::rename(project.join("main.tf"), project.join("main.tofu")).expect("rename");
    let output = reconcile(place.path(), &config, &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // As the demo: patched, with the SSH rule flagged; a report, not an error.
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    let doc = common::json(&output);
    let skipped = doc["skipped_validators"].to_string();
    assert!(skipped.contains("terraform-plan"), "{skipped}");
    assert!(
        skipped.contains("OpenTofu") && skipped.contains("tofu is not on PATH"),
        "{skipped}"
    );
    let built_in = &doc["validations"][0];
    assert_eq!(built_in["validator"], "plan-check");
    assert_eq!(built_in["passed"], true, "{built_in}");
}

#[test]
fn a_linked_module_directory_reconciles() {
    let (place, config) = demo_copy();
    let project = place.path().join("project");
    // A module kept in one place and linked from where the root calls it.
    let shared = project.join("shared/alarms");
    std::fs::create_dir_all(&shared).expect("mkdir");
    std::fs::write(
        shared.join("main.tf"),
        "variable \"queue_name\" {\n  type = string\n}\n\noutput \"name\" {\n  value = var.queue_name\n}\n",
    )
    .expect("write");
    std::fs::create_dir_all(project.join("modules")).expect("mkdir");
    std::os::unix::fs::symlink("../shared/alarms", project.join("modules/alarms")).expect("link");
    let mut main = std::fs::read_to_string(project.join("main.tf")).expect("main.tf");
    main.push_str("\nmodule \"alarms\" {\n  source     = \"./modules/alarms\"\n  queue_name = \"orders\"\n}\n");
    std::fs::write(project.join("main.tf"), main).expect("write");
    let output = reconcile(place.path(), &config, &["--no-terraform"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    let doc = common::json(&output);
    assert_eq!(
        doc["validations"][0]["passed"], true,
        "{}",
        doc["validations"]
    );

    // A link leaving the project (a module shared by several roots) is followed too, as
    // Terraform follows it.
    let outside = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        outside.path().join("main.tf"),
        "variable \"queue_name\" {}\n",
    )
    .expect("write");
    std::fs::remove_file(project.join("modules/alarms")).expect("unlink");
    std::os::unix::fs::symlink(outside.path(), project.join("modules/alarms")).expect("link");
    let output = reconcile(place.path(), &config, &["--no-terraform"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    let doc = common::json(&output);
    assert_eq!(
        doc["validations"][0]["passed"], true,
        "{}",
        doc["validations"]
    );
}

#[test]
fn a_linked_file_is_never_replaced_and_its_changes_are_left_to_a_person() {
    let (place, config) = demo_copy();
    let project = place.path().join("project");
    // main.tf kept elsewhere and linked into the root, as some teams share a file.
    let kept = place.path().join("kept-main.tf");
    std::fs::rename(project.join("main.tf"), &kept).expect("move");
    std::os::unix::fs::symlink(&kept, project.join("main.tf")).expect("link");
    let before = std::fs::read_to_string(&kept).expect("main.tf");
    let output = reconcile(place.path(), &config, &["--no-terraform", "--write"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    let doc = common::json(&output);
    let unplanned = doc["plan"]["unplanned"].as_array().expect("unplanned");
    let linked: Vec<&serde_json::Value> = unplanned
        .iter()
        .filter(|u| {
            u["reason"]
                .as_str()
                .is_some_and(|r| r.contains("main.tf is a symbolic link"))
        })
        .collect();
    // The demo absorbs four changes written in main.tf: the web group's ingress, the
    // autoscaling group's desired capacity, the bucket's tags and its versioning.
    assert_eq!(linked.len(), 4, "{unplanned:#?}");
    let steps = doc["plan"]["steps"].as_array().expect("steps");
    assert!(
        steps
            .iter()
            .all(|s| s["input"]["target"]["file"] != "main.tf"),
        "{steps:#?}"
    );
    // The variable's new value is still written, in terraform.tfvars.
    let tfvars = std::fs::read_to_string(project.join("terraform.tfvars")).expect("tfvars");
    assert!(tfvars.contains("instance_type = \"t3.large\""), "{tfvars}");
    let link = std::fs::symlink_metadata(project.join("main.tf")).expect("main.tf");
    assert!(link.file_type().is_symlink(), "the link was replaced");
    assert_eq!(std::fs::read_to_string(&kept).expect("kept"), before);
}
