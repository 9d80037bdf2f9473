//! The fuzz targets' seed corpus (`fuzz/seed.sh`) replayed through the properties they check
//! (`reconciler::fuzzing`), so every test run checks what the fuzzers start from; `.ci/run`
//! then fuzzes each target briefly.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::repo;

/// Seeds the corpus into a temporary directory; returns it and each target's files.
fn seeded() -> (tempfile::TempDir, Vec<(String, Vec<PathBuf>)>) {
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new("bash")
        .arg(repo().join("fuzz/seed.sh"))
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(status.success(), "fuzz/seed.sh failed");
    let targets = ["framing", "state", "hcl_edit", "expression"]
        .into_iter()
        .map(|target| (target.to_owned(), files(&dir.path().join(target))))
        .collect();
    (dir, targets)
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    out.sort();
    out
}

#[test]
fn every_seed_of_every_fuzz_target_holds_its_property() {
    let (_dir, targets) = seeded();
    for (target, seeds) in targets {
        assert!(!seeds.is_empty(), "no seeds for {target}");
        let check: fn(&[u8]) = match target.as_str() {
            "framing" => reconciler::fuzzing::framing,
            "state" => reconciler::fuzzing::state,
            "hcl_edit" => reconciler::fuzzing::hcl_edit,
            "expression" => reconciler::fuzzing::expression,
            other => panic!("no property for the fuzz target {other}"),
        };
        for seed in seeds {
            let data = std::fs::read(&seed).unwrap();
            let outcome = std::panic::catch_unwind(|| check(&data));
            assert!(outcome.is_ok(), "{target}: {} fails", seed.display());
        }
    }
}
