//! The git-style diff of a change set, checked by snapshot and, when git is installed, by
//! `git apply` in a scratch repository.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

use reconciler::patch::{ChangeSet, Colour, PatchError};

const MAIN_OLD: &str = r#"terraform {
  required_version = ">= 1.6"
}

resource "aws_s3_bucket" "logs" {
  bucket = "acme-prod-logs"
}

resource "aws_s3_bucket_versioning" "logs" {
  bucket = aws_s3_bucket.logs.id
  versioning_configuration {
    status = "Suspended"
  }
}

resource "aws_s3_bucket_public_access_block" "logs" {
  bucket                  = aws_s3_bucket.logs.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_sqs_queue" "jobs" {
  name                       = "acme-jobs"
  visibility_timeout_seconds = 30
  message_retention_seconds  = 345600
  delay_seconds              = 0
}
"#;

const MAIN_NEW: &str = r#"terraform {
  required_version = ">= 1.6"
}

resource "aws_s3_bucket" "logs" {
  bucket = "acme-prod-logs"
}

resource "aws_s3_bucket_versioning" "logs" {
  bucket = aws_s3_bucket.logs.id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_public_access_block" "logs" {
  bucket                  = aws_s3_bucket.logs.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_sqs_queue" "jobs" {
  name                       = "acme-jobs"
  visibility_timeout_seconds = 60
  message_retention_seconds  = 345600
  delay_seconds              = 0
}
"#;

/// Four files: one edited in two places, one losing its final newline, one new, one deleted,
/// one whose name holds a space; and one unchanged, which the diff leaves out.
fn multi_file() -> ChangeSet {
    let mut changes = ChangeSet::new();
    changes
        .insert("main.tf", Some(MAIN_OLD.into()), Some(MAIN_NEW.into()))
        .unwrap();
    changes
        .insert(
            "modules/app/variables.tf",
            Some("variable \"name\" {}\nvariable \"size\" {}\n".into()),
            Some("variable \"name\" {}\nvariable \"size\" {\n  default = 2\n}".into()),
        )
        .unwrap();
    changes
        .insert(
            "outputs.tf",
            None,
            Some("output \"queue_url\" {\n  value = aws_sqs_queue.jobs.url\n}\n".into()),
        )
        .unwrap();
    changes
        .insert("legacy.tf", Some("# unused\nlocals {}\n".into()), None)
        .unwrap();
    changes
        .insert(
            "docs/read me.md",
            Some("Old notes\n".into()),
            Some("New notes\n".into()),
        )
        .unwrap();
    changes
        .insert(
            "same.tf",
            Some("locals {}\n".into()),
            Some("locals {}\n".into()),
        )
        .unwrap();
    changes
}

fn crlf() -> ChangeSet {
    let mut changes = ChangeSet::new();
    changes
        .insert(
            "windows.tf",
            Some("locals {\r\n  a = 1\r\n  b = 2\r\n}\r\n".into()),
            Some("locals {\r\n  a = 1\r\n  b = 3\r\n}\r\n".into()),
        )
        .unwrap();
    changes
        .insert(
            "no-newline.tf",
            Some("locals {}\r\n# end".into()),
            Some("locals {}\r\n# the end".into()),
        )
        .unwrap();
    changes
}

/// A file whose name git has to quote.
fn odd_name() -> ChangeSet {
    let mut changes = ChangeSet::new();
    changes
        .insert("say \"hi\".tf", Some("a\n".into()), Some("b\n".into()))
        .unwrap();
    changes
}

#[test]
fn names_with_quotes_are_quoted_like_git() {
    let diff = odd_name().diff(Colour::Plain);
    let first = diff.lines().next().unwrap();
    assert_eq!(first, r#"diff --git "a/say \"hi\".tf" "b/say \"hi\".tf""#);
}

/// Shows carriage returns and escape characters, which snapshots would otherwise hide.
fn visible(text: &str) -> String {
    text.replace('\r', "␍").replace('\x1b', "␛")
}

#[test]
fn multi_file_diff() {
    insta::assert_snapshot!(multi_file().diff(Colour::Plain));
}

#[test]
fn crlf_diff() {
    let diff = crlf().diff(Colour::Plain);
    assert!(diff.contains("-  b = 2\r\n+  b = 3\r\n"), "{diff:?}");
    insta::assert_snapshot!(visible(&diff));
}

#[test]
fn coloured_diff() {
    let mut changes = ChangeSet::new();
    changes
        .insert(
            "a.tf",
            Some("x = 1\ny = 2\n".into()),
            Some("x = 1\ny = 3\n".into()),
        )
        .unwrap();
    insta::assert_snapshot!(visible(&changes.diff(Colour::Ansi)));
}

#[test]
fn empty_files_have_headers_but_no_hunks() {
    let mut changes = ChangeSet::new();
    changes
        .insert("empty.tf", None, Some(String::new()))
        .unwrap();
    let diff = changes.diff(Colour::Plain);
    assert_eq!(
        diff,
        "diff --git a/empty.tf b/empty.tf\nnew file mode 100644\n"
    );
}

#[test]
fn nothing_changed_is_an_empty_diff() {
    let mut changes = ChangeSet::new();
    assert!(changes.is_empty());
    changes
        .insert("a.tf", Some("x\n".into()), Some("x\n".into()))
        .unwrap();
    assert!(changes.is_empty());
    assert_eq!(changes.diff(Colour::Plain), "");
}

#[test]
fn paths_must_stay_under_the_root() {
    let mut changes = ChangeSet::new();
    for path in ["/etc/passwd", "../outside.tf", "a/../../b.tf", ""] {
        let error = changes.insert(path, None, Some("x".into())).unwrap_err();
        assert!(matches!(error, PatchError::BadPath { .. }), "{path}");
    }
}

#[test]
fn diffs_apply_with_git() {
    if Command::new("git").arg("--version").output().is_err() {
        eprintln!("note: git not on PATH; skipped");
        return;
    }
    for changes in [multi_file(), crlf(), odd_name()] {
        let repo = tempfile::tempdir().unwrap();
        git(repo.path(), &["init", "--quiet"]);
        git(repo.path(), &["config", "core.autocrlf", "false"]);
        for (path, change) in changes.changed() {
            if let Some(old) = &change.old {
                write(&repo.path().join(path), old);
            }
        }
        write(
            &repo.path().join("change.patch"),
            &changes.diff(Colour::Plain),
        );
        git(repo.path(), &["apply", "--check", "change.patch"]);
        git(repo.path(), &["apply", "change.patch"]);
        for (path, change) in changes.changed() {
            let after = std::fs::read_to_string(repo.path().join(path)).ok();
            assert_eq!(after, change.new, "{}", path.display());
        }
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}
