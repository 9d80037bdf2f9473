//! End-to-end: `retrace reconcile` on `fixtures/intents`, one case per intent kind and per noise
//! pattern. Each case runs the binary with `--write` on a copy of the shared project, checks the
//! exit code and the lines worked out by hand in `fixtures/intents/README.md`, snapshots the
//! report (intents, edits, diff, validation; the validators' skip notes name temporary paths and
//! are left out), and checks the patched copy with `terraform fmt -check` when `terraform` is on
//! `PATH`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/intents")
}

/// What one run gave: exit code, the report without path-dependent lines, and the patched
/// project (kept alive with its directory).
struct Run {
    code: i32,
    report: String,
    project: tempfile::TempDir,
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read fixture project") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
    }
}

/// Runs `retrace reconcile --write` for a case on a fresh copy of the project.
fn reconcile(case: &str) -> Run {
    let base = fixtures();
    let project = tempfile::tempdir().expect("temp dir");
    copy_dir(&base.join("project"), project.path());
    let dir = base.join(case);
    let logs = if dir.join("trail").is_dir() {
        dir.join("trail")
    } else {
        dir.join("trail.json")
    };
    let state = base.join("project.tfstate");
    let output = Command::new(env!("CARGO_BIN_EXE_retrace"))
        // No retrace.toml is read: every setting is on the command line; the knowledge base
        // is left alone (tests/kb_cli.rs covers recording), never the user's.
        .current_dir(project.path())
        .args(["reconcile", "--project"])
        .arg(project.path())
        .arg("--state")
        .arg(&state)
        .arg("--logs")
        .arg(&logs)
        .args([
            "--since",
            "2026-11-21T00:00:00Z",
            "--until",
            "2026-11-22T00:00:00Z",
            "--region",
            "us-east-1",
            "--write",
            "--no-record",
            "--no-terraform",
        ])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let code = output.status.code().unwrap_or(-1);
    assert_ne!(code, 1, "{stderr}");
    Run {
        code,
        report: without_skipped_validators(&String::from_utf8_lossy(&output.stdout)),
        project,
    }
}

/// The report without the "Validators not run" section, whose reasons name the project's path,
/// and without the input section's source lines, which name the trail's.
fn without_skipped_validators(report: &str) -> String {
    let mut out = Vec::new();
    let mut skipping = false;
    for line in report.lines().filter(|l| !l.starts_with("  from files: ")) {
        if line == "Validators not run:" {
            skipping = true;
            continue;
        }
        if skipping && (line.is_empty() || !line.starts_with(' ')) {
            skipping = false;
        }
        if !skipping {
            out.push(line);
        }
    }
    out.join("\n")
}

impl Run {
    /// The patched copy of `file`.
    fn file(&self, file: &str) -> String {
        std::fs::read_to_string(self.project.path().join(file)).expect("read patched file")
    }

    /// Every line must be in the report.
    fn shows(&self, lines: &[&str]) {
        for line in lines {
            assert!(
                self.report.lines().any(|l| l == *line),
                "missing {line:?} in\n{}",
                self.report
            );
        }
    }

    /// `terraform fmt -check` on the patched copy, when terraform is installed.
    fn formatted(&self) {
        let Ok(output) = Command::new("terraform")
            .args(["fmt", "-check", "-diff"])
            .current_dir(self.project.path())
            .output()
        else {
            eprintln!("note: terraform is not on PATH; formatting not checked");
            return;
        };
        assert!(
            output.status.success(),
            "terraform fmt -check failed:\n{}",
            String::from_utf8_lossy(&output.stdout)
        );
    }
}

fn original(file: &str) -> String {
    std::fs::read_to_string(fixtures().join("project").join(file)).expect("read fixture")
}

// --- intent kinds -------------------------------------------------------------------------

#[test]
fn update_attribute_edits_the_variable_default_used_once() {
    let run = reconcile("update-attribute");
    assert_eq!(run.code, 2, "{}", run.report);
    assert_eq!(
        run.file("variables.tf"),
        original("variables.tf").replace("= \"t3.small\"", "= \"t3.medium\"")
    );
    assert_eq!(run.file("main.tf"), original("main.tf"));
    run.formatted();
    insta::assert_snapshot!(run.report);
}

#[test]
fn add_nested_block_appends_a_rule_after_the_last_of_its_kind() {
    let run = reconcile("add-block");
    assert_eq!(run.code, 2, "{}", run.report);
    run.shows(&[
        "+    from_port   = 22",
        "+    description = \"SSH from the VPC\"",
    ]);
    run.formatted();
    insta::assert_snapshot!(run.report);
}

#[test]
fn remove_nested_block_matches_a_revoke_without_its_description() {
    let run = reconcile("remove-block");
    assert_eq!(run.code, 2, "{}", run.report);
    run.shows(&["-    from_port   = 8080", "  plan-check: passed"]);
    assert!(!run.file("main.tf").contains("8080"));
    run.formatted();
    insta::assert_snapshot!(run.report);
}

#[test]
fn tags_go_into_the_literal_map_of_merge() {
    let run = reconcile("tags");
    assert_eq!(run.code, 2, "{}", run.report);
    run.shows(&[
        "   tags = merge(local.common_tags, {",
        "+    Name  = \"ledger-app\"",
        "+    Owner = \"payments-team\"",
    ]);
    run.formatted();
    insta::assert_snapshot!(run.report);
}

#[test]
fn created_group_is_imported_and_the_instance_refers_to_it() {
    let run = reconcile("create-with-dependencies");
    assert_eq!(run.code, 2, "{}", run.report);
    run.shows(&[
        "+resource \"aws_security_group\" \"ledger_admin\" {",
        "+  to = aws_security_group.ledger_admin",
        "+  id = \"sg-05e4d3c2b1a098765\"",
        "+  vpc_security_group_ids = [aws_security_group.app.id, aws_security_group.ledger_admin.id]",
    ]);
    run.formatted();
    insta::assert_snapshot!(run.report);
}

#[test]
fn deleted_resource_block_is_removed() {
    let run = reconcile("delete-resource");
    assert_eq!(run.code, 2, "{}", run.report);
    assert!(!run.file("main.tf").contains("aws_cloudwatch_log_group"));
    run.formatted();
    insta::assert_snapshot!(run.report);
}

#[test]
fn attach_imports_an_attachment_and_detach_removes_the_managed_one() {
    let run = reconcile("associate");
    assert_eq!(run.code, 2, "{}", run.report);
    run.shows(&[
        "-resource \"aws_iam_role_policy_attachment\" \"app_ssm\" {",
        "+  id = \"ledger-app/arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy\"",
        "+  role       = aws_iam_role.app.id",
    ]);
    run.formatted();
    insta::assert_snapshot!(run.report);
}

#[test]
fn for_each_value_is_edited_at_its_entry_in_the_variable_default() {
    let run = reconcile("for-each-entry");
    assert_eq!(run.code, 2, "{}", run.report);
    assert_eq!(
        run.file("variables.tf"),
        original("variables.tf").replace("visibility_timeout = 300", "visibility_timeout = 600")
    );
    run.formatted();
    insta::assert_snapshot!(run.report);
}

// --- noise patterns -----------------------------------------------------------------------

#[test]
fn describe_noise_leaves_one_change() {
    let run = reconcile("describe-noise");
    assert_eq!(run.code, 2, "{}", run.report);
    run.shows(&["+  disable_api_termination = true"]);
    assert!(!run.report.contains("Describe"), "{}", run.report);
    run.formatted();
    insta::assert_snapshot!(run.report);
}

#[test]
fn failed_attempt_is_dropped_and_the_retry_absorbed() {
    let run = reconcile("failed-retry");
    assert_eq!(run.code, 2, "{}", run.report);
    run.shows(&["+    cidr_blocks = [\"10.20.0.0/16\"]"]);
    assert!(!run.report.contains("10.20.0.0/33"), "{}", run.report);
    run.formatted();
    insta::assert_snapshot!(run.report);
}

#[test]
fn change_undone_minutes_later_needs_no_patch() {
    let run = reconcile("undone");
    assert_eq!(run.code, 0, "{}", run.report);
    assert!(!run.report.contains("diff --git"), "{}", run.report);
    assert_eq!(run.file("variables.tf"), original("variables.tf"));
    insta::assert_snapshot!(run.report);
}

#[test]
fn console_edit_of_inbound_rules_edits_the_rule_in_place() {
    let run = reconcile("edit-inbound-rules");
    assert_eq!(run.code, 2, "{}", run.report);
    run.shows(&[
        "-  # The office's egress range (NET-77).",
        "-    description = \"HTTPS from the office\"",
        "+    description = \"HTTPS from the new office\"",
        "+    cidr_blocks = [\"203.0.113.0/24\"]",
        "  plan-check: passed",
    ]);
    // In place: the 443 rule still comes before the 8080 rule.
    let main = run.file("main.tf");
    let new_rule = main.find("203.0.113.0/24").expect("new rule");
    assert!(new_rule < main.find("8080").expect("8080 rule"));
    run.formatted();
    insta::assert_snapshot!(run.report);
}

#[test]
fn records_out_of_order_across_files_net_in_time_order() {
    let run = reconcile("out-of-order");
    assert_eq!(run.code, 2, "{}", run.report);
    run.shows(&[
        "+  default     = \"t3.large\"",
        "+    Owner = \"payments-team\"",
    ]);
    insta::assert_snapshot!(run.report);
}

#[test]
fn terraform_apply_interleaved_is_dropped() {
    let run = reconcile("terraform-interleaved");
    assert_eq!(run.code, 2, "{}", run.report);
    run.shows(&["+  retention_in_days = 30"]);
    assert!(!run.report.contains("terraform/"), "{}", run.report);
    insta::assert_snapshot!(run.report);
}

#[test]
fn other_regions_data_events_and_service_calls_are_dropped() {
    let run = reconcile("dropped");
    assert_eq!(run.code, 0, "{}", run.report);
    run.shows(&["No out-of-band changes."]);
    assert_eq!(run.file("main.tf"), original("main.tf"));
    insta::assert_snapshot!(run.report);
}
