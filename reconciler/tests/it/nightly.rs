//! `retrace nightly` end to end: a local bare repository as the remote, a loopback server
//! speaking GitHub's (or GitLab's) REST API, the bundled demo's project, state and trail.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use support::forge::{FakeForge, Kind};

const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/demo");
const ACCOUNT: &str = "111122223333";
const TOKEN: &str = "test-token-not-secret";

/// Runs git in `dir`; panics with its message when it fails.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// What to write for a copied file: its bytes, edited, or nothing to leave it out.
type Edit<'a> = &'a dyn Fn(&Path, Vec<u8>) -> Option<Vec<u8>>;

fn copy_dir(from: &Path, to: &Path, edit: Edit<'_>) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("readable") {
        let path = entry.expect("entry").path();
        let target = to.join(path.file_name().expect("name"));
        if path.is_dir() {
            copy_dir(&path, &target, edit);
        } else if let Some(bytes) = edit(&path, std::fs::read(&path).expect("read")) {
            std::fs::write(&target, bytes).expect("write");
        }
    }
}

/// A world for nightly runs: a bare remote holding the demo project under `projects`, the
/// demo's state and trail copied beside it, and a fake forge.
struct World {
    dir: tempfile::TempDir,
    forge: FakeForge,
}

impl World {
    /// The demo project is committed once per `(directory, account)`, its account id
    /// replaced by `account`.
    fn new(kind: Kind, projects: &[(&str, &str)]) -> World {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        git(
            root,
            &[
                "init",
                "--quiet",
                "--bare",
                "--initial-branch=main",
                "remote.git",
            ],
        );
        let seed = root.join("seed");
        std::fs::create_dir_all(&seed).expect("mkdir");
        git(&seed, &["init", "--quiet", "--initial-branch=main"]);
        for (project, account) in projects {
            copy_dir(
                &Path::new(DEMO).join("project"),
                &seed.join(project),
                &|_, b| {
                    Some(
                        String::from_utf8_lossy(&b)
                            .replace(ACCOUNT, account)
                            .into_bytes(),
                    )
                },
            );
        }
        git(&seed, &["add", "--all"]);
        git(
            &seed,
            &[
                "-c",
                "user.name=seed",
                "-c",
                "user.email=seed@example.com",
                "commit",
                "--quiet",
                "-m",
                "infrastructure",
            ],
        );
        git(&seed, &["remote", "add", "origin", "../remote.git"]);
        git(&seed, &["push", "--quiet", "origin", "main"]);
        copy_dir(
            &Path::new(DEMO).join("trail"),
            &root.join("trail"),
            &|_, b| Some(b),
        );
        std::fs::copy(
            Path::new(DEMO).join("terraform.tfstate"),
            root.join("state-a.tfstate"),
        )
        .expect("state");
        World {
            forge: FakeForge::start(kind, "127.0.0.1:0"),
            dir,
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Writes retrace.toml with `workspaces` (TOML `[[workspace]]` tables).
    fn config(&self, kind: &str, workspaces: &str) -> PathBuf {
        let root = self.root().display();
        let text = format!(
            r#"[knowledge]
store = "{root}/kb.sqlite"

[sources]
files = ["{root}/trail"]

[attribution]
iac_role_arns = ["arn:aws:iam::*:role/terraform-ci"]

[nightly]
first_window = "3650d"
author_name = "retrace bot"
author_email = "retrace@example.com"
labels = ["drift", "retrace"]

[nightly.forge]
kind = "{kind}"
api_url = "{url}"
token_env = "RETRACE_TEST_FORGE_TOKEN"

{workspaces}"#,
            url = self.forge.url
        );
        let path = self.root().join("retrace.toml");
        std::fs::write(&path, text).expect("config");
        path
    }

    fn nightly(&self, config: &Path, extra: &[&str]) -> Output {
        let out = Command::new(env!("CARGO_BIN_EXE_retrace"))
            .arg("--config")
            .arg(config)
            .args(["nightly", "--no-terraform"])
            .args(if extra.contains(&"--format") {
                &[][..]
            } else {
                &["--format", "json"][..]
            })
            .args(extra)
            .env("RETRACE_TEST_FORGE_TOKEN", TOKEN)
            .env_remove("RETRACE_KB")
            .output()
            .expect("retrace runs");
        assert!(
            out.status.code() != Some(1),
            "retrace nightly failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        out
    }

    /// The commits `branch` of the remote has beyond `main`.
    fn commits_beyond_main(&self, branch: &str) -> usize {
        let remote = self.root().join("remote.git");
        let range = format!("main..{branch}");
        git(&remote, &["rev-list", "--count", &range])
            .parse()
            .expect("a count")
    }

    /// Adds a log file with one console change: carol tags the web security group.
    fn carol_tags_the_group(&self) {
        let dir = self
            .root()
            .join("trail/AWSLogs/111122223333/CloudTrail/us-east-1/2026/11/20");
        let record = serde_json::json!({"Records": [{
            "eventVersion": "1.10",
            "userIdentity": {"type": "IAMUser", "principalId": "AIDACAROLEXAMPLE01",
                "arn": "arn:aws:iam::111122223333:user/carol", "accountId": ACCOUNT,
                "accessKeyId": "ASIACAROLEXAMPLE01", "userName": "carol",
                "sessionContext": {"attributes": {"creationDate": "2026-11-20T23:00:00Z", "mfaAuthenticated": "true"}}},
            "eventTime": "2026-11-20T23:10:00Z",
            "eventSource": "ec2.amazonaws.com",
            "eventName": "CreateTags",
            "awsRegion": "us-east-1",
            "sourceIPAddress": "203.0.113.24",
            "userAgent": "AWS Internal",
            "requestParameters": {"resourcesSet": {"items": [{"resourceId": "sg-0d4f8a2b6c1e39570"}]},
                "tagSet": {"items": [{"key": "CostCenter", "value": "cc-42"}]}},
            "responseElements": {"requestId": "5d0c8b4e-1f2a-4c3b-9d8e-7a6b5c4d3e2f", "_return": true},
            "requestID": "5d0c8b4e-1f2a-4c3b-9d8e-7a6b5c4d3e2f",
            "eventID": "8e1f7a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b",
            "readOnly": false,
            "eventType": "AwsApiCall",
            "managementEvent": true,
            "recipientAccountId": ACCOUNT,
            "eventCategory": "Management",
            "sessionCredentialFromConsole": "true"
        }]});
        std::fs::write(
            dir.join("111122223333_CloudTrail_us-east-1_20261120T2315Z_Carol0Tags0Sg01.json"),
            record.to_string(),
        )
        .expect("log file");
    }
}

/// The demo shop's workspace: account 111122223333, us-east-1, its state outside the
/// repository.
fn shop(world: &World) -> String {
    format!(
        "[[workspace]]\nname = \"shop\"\nrepository = \"remote.git\"\nproject = \"shop\"\nforge_repository = \"acme/infra\"\nstate = {{ file = \"{}\" }}\naccounts = [\"{ACCOUNT}\"]\nregions = [\"us-east-1\"]\n",
        world.root().join("state-a.tfstate").display()
    )
}

/// `retrace kb stats`'s review counts, one object per rule.
fn reviews_by_rule(config: &Path) -> Vec<Value> {
    let stats = Command::new(env!("CARGO_BIN_EXE_retrace"))
        .arg("--config")
        .arg(config)
        .args(["kb", "stats", "--format", "json"])
        .output()
        .expect("kb runs");
    let stats: Value = serde_json::from_slice(&stats.stdout).expect("json");
    stats["reviews_by_rule"]
        .as_array()
        .expect("reviews")
        .clone()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).expect("a JSON report")
}

/// The first run opens one pull request (a draft: bob's SSH rule waits for a person) with the
/// evidence; a second run with no new events changes nothing; new events update the same
/// request; a merge with a reviewer's edit reaches the knowledge base.
#[test]
fn a_nightly_run_opens_one_request_updates_it_and_learns_from_its_merge() {
    let world = World::new(Kind::Github, &[("shop", ACCOUNT)]);
    let config = world.config("github", &shop(&world));

    let first = world.nightly(&config, &[]);
    assert_eq!(first.status.code(), Some(3), "bob's SSH rule is held");
    let pulls = world.forge.pulls();
    assert_eq!(pulls.len(), 1);
    let pull = &pulls[0];
    assert_eq!(
        (pull.head.as_str(), pull.base.as_str()),
        ("retrace/shop", "main")
    );
    assert!(pull.draft, "something waits for a person");
    assert_eq!(pull.labels, ["drift", "retrace"]);
    for evidence in [
        "## For the reviewer",
        "- [ ] ",
        "alice",
        "bob",
        "## Validation",
        "```diff",
    ] {
        assert!(
            pull.body.contains(evidence),
            "{evidence} in:\n{}",
            pull.body
        );
    }
    assert!(
        world
            .forge
            .requests()
            .iter()
            .all(|r| r.token.as_deref() == Some(TOKEN))
    );
    assert_eq!(world.commits_beyond_main("retrace/shop"), 1);
    let remote = world.root().join("remote.git");
    let message = git(
        &remote,
        &["log", "-1", "--format=%an <%ae>%n%B", "retrace/shop"],
    );
    assert!(
        message.starts_with("retrace bot <retrace@example.com>"),
        "{message}"
    );
    assert!(message.contains("events: "), "{message}");

    let writes = world.forge.writes().len();
    let second = world.nightly(&config, &[]);
    let report = json(&second);
    assert_eq!(
        world.forge.writes().len(),
        writes,
        "no new request, no update"
    );
    assert_eq!(world.forge.pulls().len(), 1);
    assert_eq!(report["workspaces"][0]["commit"], Value::Null);
    assert_eq!(world.commits_beyond_main("retrace/shop"), 1);

    world.carol_tags_the_group();
    let third = world.nightly(&config, &[]);
    let report = json(&third);
    assert_eq!(report["workspaces"][0]["request"]["action"], "updated");
    assert_eq!(world.forge.pulls().len(), 1, "never a duplicate");
    assert_eq!(world.commits_beyond_main("retrace/shop"), 2);
    let updated = &world.forge.pulls()[0];
    assert!(updated.body.contains("carol"), "{}", updated.body);
    assert!(
        world
            .forge
            .writes()
            .iter()
            .any(|r| r.method == "PATCH" && r.url == "/repos/acme/infra/pulls/1")
    );

    // The reviewer merges, changing the value retrace wrote for carol's tag.
    let reviewer = world.root().join("reviewer");
    git(
        world.root(),
        &["clone", "--quiet", "remote.git", "reviewer"],
    );
    git(
        &reviewer,
        &[
            "merge",
            "--quiet",
            "--no-ff",
            "-m",
            "merge",
            "origin/retrace/shop",
        ],
    );
    let main_tf = reviewer.join("shop/main.tf");
    let text = std::fs::read_to_string(&main_tf).expect("main.tf");
    assert!(text.contains("\"cc-42\""), "{text}");
    std::fs::write(&main_tf, text.replace("\"cc-42\"", "\"CC-0042\"")).expect("edit");
    git(
        &reviewer,
        &[
            "-c",
            "user.name=rev",
            "-c",
            "user.email=rev@example.com",
            "commit",
            "--quiet",
            "-am",
            "cost centre as finance writes it",
        ],
    );
    git(&reviewer, &["push", "--quiet", "origin", "HEAD:main"]);
    let merged = git(&reviewer, &["rev-parse", "HEAD"]);
    world.forge.merge(1, &merged);

    let fourth = world.nightly(&config, &[]);
    let report = json(&fourth);
    assert_eq!(report["workspaces"][0]["reviewed"][0]["state"], "merged");
    assert_eq!(report["workspaces"][0]["reviewed"][0]["corrected"], 1);
    let reviews = reviews_by_rule(&config);
    let tags = reviews
        .iter()
        .find(|r| r["rule"] == "ec2:CreateTags")
        .expect("the tag rule's review");
    assert_eq!(
        (tags["merged"].as_u64(), tags["corrected"].as_u64()),
        (Some(1), Some(1))
    );
    assert!(
        reviews
            .iter()
            .all(|r| r["merged"] == 1 && r["rejected"] == 0),
        "{reviews:?}"
    );
}

/// When the base branch comes to hold what an open request proposes (someone made the same
/// change by hand), the next run says so on the request, once.
#[test]
fn an_obsolete_request_is_commented_on_once() {
    let world = World::new(Kind::Github, &[("shop", ACCOUNT)]);
    let config = world.config("github", &shop(&world));
    world.nightly(&config, &[]);
    let reviewer = world.root().join("reviewer");
    git(
        world.root(),
        &["clone", "--quiet", "remote.git", "reviewer"],
    );
    git(
        &reviewer,
        &["checkout", "--quiet", "origin/retrace/shop", "--", "shop"],
    );
    git(
        &reviewer,
        &[
            "-c",
            "user.name=rev",
            "-c",
            "user.email=rev@example.com",
            "commit",
            "--quiet",
            "-m",
            "the same fix, by hand",
        ],
    );
    git(&reviewer, &["push", "--quiet", "origin", "HEAD:main"]);
    let report = json(&world.nightly(&config, &[]));
    assert_eq!(report["workspaces"][0]["request"]["action"], "commented");
    let pull = &world.forge.pulls()[0];
    assert_eq!(pull.comments.len(), 1);
    assert!(
        pull.comments[0].contains("no longer needed"),
        "{}",
        pull.comments[0]
    );
    world.nightly(&config, &[]);
    assert_eq!(world.forge.pulls()[0].comments.len(), 1, "said once");
}

/// A request closed without merging counts as a rejection of its rules; a dry run opens,
/// pushes and records nothing.
#[test]
fn a_closed_request_is_a_rejection_and_a_dry_run_changes_nothing() {
    let world = World::new(Kind::Gitlab, &[("shop", ACCOUNT)]);
    let config = world.config("gitlab", &shop(&world));
    let dry = world.nightly(&config, &["--dry-run", "--format", "text"]);
    let text = String::from_utf8_lossy(&dry.stdout);
    assert!(text.contains("would open pull request"), "{text}");
    assert!(text.contains("--- description ---"), "{text}");
    assert!(world.forge.writes().is_empty());
    let remote = world.root().join("remote.git");
    assert!(git(&remote, &["branch", "--list", "retrace/shop"]).is_empty());

    world.nightly(&config, &[]);
    let pulls = world.forge.pulls();
    assert_eq!(pulls.len(), 1);
    assert!(pulls[0].title.starts_with("Draft: "), "{}", pulls[0].title);
    world.forge.close(1);
    let after = json(&world.nightly(&config, &[]));
    assert_eq!(after["workspaces"][0]["reviewed"][0]["state"], "closed");
    let reviews = reviews_by_rule(&config);
    assert!(!reviews.is_empty());
    assert!(
        reviews
            .iter()
            .all(|r| r["rejected"] == 1 && r["merged"] == 0),
        "{reviews:?}"
    );
}

/// Two workspaces in two accounts served from one trail: each request holds only its own
/// account's changes.
#[test]
fn two_workspaces_in_two_accounts_each_get_only_their_own_changes() {
    let other = "444455556666";
    let world = World::new(Kind::Github, &[("shop", ACCOUNT), ("shop-eu", other)]);
    let swap = |bytes: Vec<u8>| -> Vec<u8> {
        String::from_utf8_lossy(&bytes)
            .replace(ACCOUNT, other)
            .replace("\"eventID\":\"", "\"eventID\":\"eu-")
            .into_bytes()
    };
    let state = std::fs::read(world.root().join("state-a.tfstate")).expect("state");
    std::fs::write(world.root().join("state-b.tfstate"), swap(state)).expect("state b");
    copy_dir(
        &Path::new(DEMO).join("trail/AWSLogs/111122223333"),
        &world.root().join("trail/AWSLogs").join(other),
        &|path, bytes| {
            let plain = path.extension().is_some_and(|e| e == "json");
            plain.then(|| swap(bytes))
        },
    );
    let workspaces = format!(
        "{}\n[[workspace]]\nname = \"shop-eu\"\nrepository = \"remote.git\"\nproject = \"shop-eu\"\nforge_repository = \"acme/infra\"\nstate = {{ file = \"{}\" }}\naccounts = [\"{other}\"]\nregions = [\"us-east-1\"]\n",
        shop(&world),
        world.root().join("state-b.tfstate").display()
    );
    let config = world.config("github", &workspaces);
    let report = json(&world.nightly(&config, &[]));
    let pulls = world.forge.pulls();
    assert_eq!(pulls.len(), 2, "one request per workspace");
    let body = |branch: &str| {
        pulls
            .iter()
            .find(|p| p.head == branch)
            .map(|p| p.body.clone())
            .unwrap_or_else(|| panic!("a request from {branch}"))
    };
    let (a, b) = (body("retrace/shop"), body("retrace/shop-eu"));
    assert!(
        !a.contains(other),
        "shop's request names the other account:\n{a}"
    );
    assert!(
        !b.contains(ACCOUNT),
        "shop-eu's request names shop's account:\n{b}"
    );
    assert!(
        !a.contains("event `eu-"),
        "shop's request holds shop-eu's events"
    );
    assert!(
        b.contains("event `eu-"),
        "shop-eu's request holds its own events:\n{b}"
    );
    let calls: Vec<u64> = report["workspaces"]
        .as_array()
        .expect("workspaces")
        .iter()
        .map(|w| w["calls"].as_u64().expect("calls"))
        .collect();
    assert!(calls.iter().all(|&n| n > 0), "{calls:?}");
}

/// The description a reviewer reads, for the demo's day (reviewed by eye).
#[test]
fn the_pull_request_tells_the_evidence() {
    let world = World::new(Kind::Github, &[("shop", ACCOUNT)]);
    let config = world.config("github", &shop(&world));
    let dry = world.nightly(&config, &["--dry-run", "--since", "2026-11-20T00:00:00Z"]);
    let report = json(&dry);
    let body = report["workspaces"][0]["request"]["body"]
        .as_str()
        .expect("a description");
    insta::assert_snapshot!(body);
}
