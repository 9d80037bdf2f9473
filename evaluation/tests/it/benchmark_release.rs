//! The benchmark as a research instrument, end to end through the binary: the frozen dataset
//! (export, manifest, Python loader, scoring the export) and another system scored through
//! `run --system`. Two scenarios with the smallest background days keep it fast.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const NOISE: &str = "platform-noise-only-029";
const DRIFT: &str = "serverless-multi-resource-046";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn eval(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retrace-eval"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("retrace-eval runs")
}

fn results(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap()
}

fn passed(results: &Value, id: &str) -> bool {
    let scenarios = results["scenarios"].as_array().unwrap();
    let found = scenarios.iter().find(|s| s["id"] == id).unwrap();
    found["passed"].as_bool().unwrap()
}

#[test]
fn an_exported_dataset_is_checked_loaded_and_scored_with_its_version() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("dataset");
    let data_arg = data.to_str().unwrap();
    let out = eval(&[
        "dataset",
        "--out",
        data_arg,
        "--scenario",
        NOISE,
        "--scenario",
        DRIFT,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let manifest_bytes = std::fs::read(data.join("MANIFEST.json")).unwrap();
    let manifest: Value = serde_json::from_slice(&manifest_bytes).unwrap();
    assert_eq!(manifest["scenarios"], 2);
    let files = manifest["files"].as_object().unwrap();
    for file in [
        "DATASHEET.md",
        "index.jsonl",
        "load.py",
        "projects/platform/terraform.tfstate",
        "scenarios/serverless/serverless-multi-resource-046/trail.jsonl.gz",
        "scenarios/platform/platform-noise-only-029/post.tfstate",
    ] {
        assert!(files.contains_key(file), "the manifest lists {file}");
    }
    // Each trail holds the scenario's records and its whole background day.
    let scenario: Value = serde_json::from_slice(
        &std::fs::read(
            root()
                .join("scenarios/platform")
                .join(NOISE)
                .join("scenario.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let own: Value = serde_json::from_slice(
        &std::fs::read(
            root()
                .join("scenarios/platform")
                .join(NOISE)
                .join("trail.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let expected = scenario["background"]["records"].as_u64().unwrap()
        + own["Records"].as_array().unwrap().len() as u64;
    let index = std::fs::read_to_string(data.join("index.jsonl")).unwrap();
    let line: Value = serde_json::from_str(index.lines().next().unwrap()).unwrap();
    assert_eq!(line["id"], NOISE);
    assert_eq!(line["records"].as_u64(), Some(expected));

    if Command::new("python3").arg("--version").output().is_ok() {
        let loaded = Command::new("python3")
            .arg(data.join("load.py"))
            .arg(&data)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&loaded.stdout);
        assert!(
            loaded.status.success(),
            "{said}{}",
            String::from_utf8_lossy(&loaded.stderr)
        );
        assert!(
            said.contains("2 scenarios") && said.contains("every checksum matches"),
            "{said}"
        );
    } else {
        eprintln!("notice: python3 is absent; the loader is not exercised");
    }

    let scored = tmp.path().join("scored");
    let out = eval(&[
        "run",
        "--dataset",
        data_arg,
        "--n",
        "1",
        "--k",
        "1",
        "--out",
        scored.to_str().unwrap(),
        "--check-baseline",
        "evaluation/baseline.json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = results(&scored);
    assert!(passed(&r, NOISE) && passed(&r, DRIFT));
    assert_eq!(r["dataset"]["version"], manifest["version"]);
    let digest = {
        use sha2::{Digest, Sha256};
        Sha256::digest(&manifest_bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    assert_eq!(r["dataset"]["manifest_sha256"], digest.as_str());
    assert_eq!(r["scenarios"][0]["records"].as_u64(), Some(expected));

    // An altered file is refused, named.
    let post = data
        .join("scenarios/platform")
        .join(NOISE)
        .join("post.tfstate");
    let mut text = std::fs::read_to_string(&post).unwrap();
    text.push(' ');
    std::fs::write(&post, text).unwrap();
    let out = eval(&[
        "run",
        "--dataset",
        data_arg,
        "--n",
        "1",
        "--k",
        "1",
        "--out",
        scored.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("platform-noise-only-029/post.tfstate") && stderr.contains("SHA-256"),
        "{stderr}"
    );
}

#[test]
fn another_system_is_scored_by_the_same_judges() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("nothing");
    // A system that changes nothing: right where nothing happened, wrong where drift did.
    let out = eval(&[
        "run",
        "--n",
        "1",
        "--k",
        "1",
        "--scenario",
        NOISE,
        "--scenario",
        DRIFT,
        "--system",
        "true",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = results(&out_dir);
    assert!(passed(&r, NOISE));
    assert!(!passed(&r, DRIFT));
    assert_eq!(r["planner"], "the system `true`");
    assert_eq!(r["noise_only"]["failed"], 0);
    assert_eq!(r["headline"]["scenarios"], 1);

    // A system that writes a file where nothing changed is a false positive.
    let out_dir = tmp.path().join("touch");
    let out = eval(&[
        "run",
        "--n",
        "1",
        "--k",
        "1",
        "--scenario",
        NOISE,
        "--out",
        out_dir.to_str().unwrap(),
        "--system",
        r#"test -f "$RETRACE_TRAIL" && test -f "$RETRACE_OBSERVED" && touch "$RETRACE_PROJECT/extra.tf""#,
    ]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = results(&out_dir);
    assert_eq!(r["noise_only"]["failed"], 1);
    let reasons = r["scenarios"][0]["reasons"].to_string();
    assert!(
        reasons.contains("extra.tf: changed, but nothing out of band changed the cloud"),
        "{reasons}"
    );
}

#[test]
fn several_systems_are_compared_in_one_table() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("compared");
    let touch = r#"test "$RETRACE_SCENARIO" != platform-noise-only-029 || touch "$RETRACE_PROJECT/extra.tf""#;
    let out = eval(&[
        "run",
        "--n",
        "1",
        "--k",
        "1",
        "--scenario",
        NOISE,
        "--scenario",
        DRIFT,
        "--system",
        "true",
        "--system",
        touch,
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Each system's whole results, as one --system writes them.
    let first = results(&out_dir.join("system-1"));
    assert_eq!(first["planner"], "the system `true`");
    let second = results(&out_dir.join("system-2"));
    assert_eq!(second["planner"], format!("the system `{touch}`"));
    assert!(!passed(&second, NOISE));

    let compared = results(&out_dir);
    let systems = compared["systems"].as_array().unwrap();
    assert_eq!(systems.len(), 2);
    assert_eq!(systems[0]["system"], "true");
    assert_eq!(systems[1]["system"], touch);
    assert_eq!(systems[1]["judge"], "built-in checks");
    assert_eq!(systems[1]["results"], "system-2");
    for (system, false_positives) in systems.iter().zip([0, 1]) {
        assert_eq!(system["headline"]["scenarios"], 1);
        assert_eq!(system["headline"]["passed"], 0);
        assert_eq!(system["noise_only"]["failed"], false_positives);
    }

    // A column per system naming it (a table's bars escaped) and its judge; the Wilson
    // intervals of 0 and 1 of 1 scenario are 0-0.793 and 0.207-1.
    let md = std::fs::read_to_string(out_dir.join("results.md")).unwrap();
    assert_eq!(md, stdout);
    let escaped = touch.replace('|', "\\|");
    assert!(
        md.contains(&format!(
            "| | `true`, judged by built-in checks | `{escaped}`, judged by built-in checks |\n"
        )),
        "{md}"
    );
    for row in [
        "| **pass@1, something to do** | 0.000 (0.000-0.793), 0 of 1 | 0.000 (0.000-0.793), 0 of 1 |",
        "| **false-positive rate, noise-only** | 0.000 (0.000-0.793), 0 of 1 | 1.000 (0.207-1.000), 1 of 1 |",
        "| multi-resource | 0.000 (0.000-0.793), 0 of 1 | 0.000 (0.000-0.793), 0 of 1 |",
    ] {
        assert!(md.contains(row), "{row}\n{md}");
    }
    assert!(!md.contains("| noise-only |"), "{md}");

    // A baseline is one system's.
    let out = eval(&[
        "run",
        "--scenario",
        NOISE,
        "--system",
        "true",
        "--system",
        "true",
        "--check-baseline",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("a baseline is one system's"), "{stderr}");
}
