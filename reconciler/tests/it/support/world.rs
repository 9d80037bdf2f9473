//! A world for `retrace nightly` runs: a bare repository as the remote holding the demo
//! project (once per workspace directory and account), the demo's state and trail copied
//! beside it, a loopback forge, and helpers to add CloudTrail events and to play the
//! reviewer with git.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use super::forge::{FakeForge, Kind};

/// The demo fixture.
pub const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/demo");
/// The demo's account.
pub const ACCOUNT: &str = "111122223333";
/// The token the forge is given.
pub const TOKEN: &str = "test-token-not-secret";
/// The demo's web security group and web server.
pub const GROUP: &str = "sg-0d4f8a2b6c1e39570";
/// The demo's web server.
pub const INSTANCE: &str = "i-0c3a5e7f9b1d24680";

/// Runs git in `dir`; panics with its message when it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
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
pub type Edit<'a> = &'a dyn Fn(&Path, Vec<u8>) -> Option<Vec<u8>>;

/// Copies a directory tree, each file through `edit`.
pub fn copy_dir(from: &Path, to: &Path, edit: Edit<'_>) {
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

/// The JSON report of a run.
pub fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "a JSON report ({e}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// One CloudTrail event to add to the trail, made by IAM user `user` with the AWS CLI.
pub struct Event<'a> {
    /// The account it is made in.
    pub account: &'a str,
    /// `2026-11-21T10:00:00Z`.
    pub time: &'a str,
    /// Its event id.
    pub id: &'a str,
    /// The IAM user.
    pub user: &'a str,
    /// The EC2 API.
    pub name: &'a str,
    /// Its request parameters.
    pub params: Value,
}

impl Event<'_> {
    /// `user` sets the web server's instance type.
    pub fn resize<'a>(account: &'a str, time: &'a str, id: &'a str, to: &str) -> Event<'a> {
        Event {
            account,
            time,
            id,
            user: "dave",
            name: "ModifyInstanceAttribute",
            params: json!({"instanceId": INSTANCE, "instanceType": {"value": to}}),
        }
    }

    /// `carol` tags the web security group.
    pub fn tag<'a>(
        account: &'a str,
        time: &'a str,
        id: &'a str,
        key: &str,
        value: &str,
    ) -> Event<'a> {
        Event {
            account,
            time,
            id,
            user: "carol",
            name: "CreateTags",
            params: json!({"resourcesSet": {"items": [{"resourceId": GROUP}]},
                           "tagSet": {"items": [{"key": key, "value": value}]}}),
        }
    }

    /// `erin` opens a port of the web security group to the internet (held for a person).
    pub fn open_port<'a>(account: &'a str, time: &'a str, id: &'a str, port: u16) -> Event<'a> {
        Event {
            account,
            time,
            id,
            user: "erin",
            name: "AuthorizeSecurityGroupIngress",
            params: json!({"groupId": GROUP, "ipPermissions": {}, "ipProtocol": "tcp",
                           "fromPort": port, "toPort": port, "cidrIp": "0.0.0.0/0"}),
        }
    }

    fn record(&self) -> Value {
        let account = self.account;
        let user = self.user;
        let mut response = json!({"requestId": self.id, "_return": true});
        if self.name == "AuthorizeSecurityGroupIngress" {
            let p = &self.params;
            response["securityGroupRuleSet"] = json!({"items": [{"groupOwnerId": account,
                "groupId": GROUP, "securityGroupRuleId": format!("sgr-{}", self.id),
                "isEgress": false, "ipProtocol": "tcp", "fromPort": p["fromPort"],
                "toPort": p["toPort"], "cidrIpv4": p["cidrIp"]}]});
        }
        json!({
            "eventVersion": "1.09",
            "userIdentity": {"type": "IAMUser", "principalId": format!("AIDA{}", user.to_uppercase()),
                "arn": format!("arn:aws:iam::{account}:user/{user}"), "accountId": account,
                "accessKeyId": "AKIAEXAMPLEEXAMPLE", "userName": user},
            "eventTime": self.time,
            "eventSource": "ec2.amazonaws.com",
            "eventName": self.name,
            "awsRegion": "us-east-1",
            "sourceIPAddress": "203.0.113.42",
            "userAgent": "aws-cli/2.22.35 md/command#ec2.x",
            "requestParameters": self.params,
            "responseElements": response,
            "requestID": self.id,
            "eventID": self.id,
            "readOnly": false,
            "eventType": "AwsApiCall",
            "managementEvent": true,
            "recipientAccountId": account,
            "eventCategory": "Management"
        })
    }
}

/// A bare remote, a trail, states and a forge in a temporary directory.
pub struct World {
    dir: tempfile::TempDir,
    /// The loopback forge.
    pub forge: FakeForge,
    /// The forge's kind.
    pub kind: Kind,
}

impl World {
    /// The demo project is committed once per `(directory, account)`, its account id
    /// replaced by `account`; each account gets the demo's state (`state-<dir>.tfstate`).
    pub fn new(kind: Kind, projects: &[(&str, &str)]) -> World {
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
        let state = std::fs::read(Path::new(DEMO).join("terraform.tfstate")).expect("state");
        for (project, account) in projects {
            let swap = |b: Vec<u8>| {
                String::from_utf8_lossy(&b)
                    .replace(ACCOUNT, account)
                    .into_bytes()
            };
            copy_dir(
                &Path::new(DEMO).join("project"),
                &seed.join(project),
                &|_, b| Some(swap(b)),
            );
            std::fs::write(
                root.join(format!("state-{project}.tfstate")),
                swap(state.clone()),
            )
            .expect("state");
        }
        std::fs::write(seed.join(".gitignore"), ".retrace\n").expect("gitignore");
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
        World {
            forge: FakeForge::start(kind, "127.0.0.1:0"),
            kind,
            dir,
        }
    }

    /// The world's directory.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The forge's kind as `retrace.toml` names it.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            Kind::Github => "github",
            Kind::Gitlab => "gitlab",
            Kind::Gitea => "gitea",
        }
    }

    /// A `[[workspace]]` for the project in directory `project` of account `account`.
    pub fn workspace(&self, project: &str, account: &str) -> String {
        format!(
            "[[workspace]]\nname = \"{project}\"\nrepository = \"remote.git\"\nproject = \"{project}\"\nforge_repository = \"acme/infra\"\nstate = {{ file = \"{}\" }}\naccounts = [\"{account}\"]\nregions = [\"us-east-1\"]\n",
            self.root()
                .join(format!("state-{project}.tfstate"))
                .display()
        )
    }

    /// Writes retrace.toml with `workspaces` (TOML `[[workspace]]` tables); the forge is
    /// retried at once (no waits in tests).
    pub fn config(&self, workspaces: &str) -> PathBuf {
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
max_wait_seconds = 0

{workspaces}"#,
            kind = self.kind_name(),
            url = self.forge.url
        );
        let path = self.root().join("retrace.toml");
        std::fs::write(&path, text).expect("config");
        path
    }

    /// Runs `retrace nightly` (JSON report unless `extra` names a format).
    pub fn run(&self, config: &Path, extra: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_retrace"))
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
            .expect("retrace runs")
    }

    /// Runs `retrace nightly` and fails the test when it exits 1.
    pub fn nightly(&self, config: &Path, extra: &[&str]) -> Output {
        let out = self.run(config, extra);
        assert!(
            out.status.code() != Some(1),
            "retrace nightly failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        out
    }

    /// `retrace kb stats` as JSON.
    pub fn stats(&self, config: &Path) -> Value {
        let out = Command::new(env!("CARGO_BIN_EXE_retrace"))
            .arg("--config")
            .arg(config)
            .args(["kb", "stats", "--format", "json"])
            .env_remove("RETRACE_KB")
            .output()
            .expect("kb runs");
        serde_json::from_slice(&out.stdout).expect("json")
    }

    /// `retrace kb stats`'s review counts, one object per rule.
    pub fn reviews_by_rule(&self, config: &Path) -> Vec<Value> {
        self.stats(config)["reviews_by_rule"]
            .as_array()
            .expect("reviews")
            .clone()
    }

    /// The bare remote.
    pub fn remote(&self) -> PathBuf {
        self.root().join("remote.git")
    }

    /// The commits `branch` of the remote has beyond `main`.
    pub fn commits_beyond_main(&self, branch: &str) -> usize {
        let range = format!("main..{branch}");
        git(&self.remote(), &["rev-list", "--count", &range])
            .parse()
            .expect("a count")
    }

    /// The diff of `branch` against `main` on the remote, as a reviewer sees it.
    pub fn branch_diff(&self, branch: &str) -> String {
        let range = format!("main...{branch}");
        git(&self.remote(), &["diff", &range])
    }

    /// Adds `event` to the trail, in a log file of its own.
    pub fn event(&self, event: &Event<'_>) {
        let day = &event.time[..10].replace('-', "/");
        let dir = self.root().join(format!(
            "trail/AWSLogs/{}/CloudTrail/us-east-1/{day}",
            event.account
        ));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let stamp: String = event
            .time
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect();
        let file = dir.join(format!(
            "{}_CloudTrail_us-east-1_{stamp}_{}.json",
            event.account, event.id
        ));
        let text = json!({"Records": [event.record()]}).to_string();
        std::fs::write(file, text).expect("log file");
    }

    /// A reviewer's up-to-date clone of the remote, on `main`.
    pub fn reviewer(&self) -> PathBuf {
        let dir = self.root().join("reviewer");
        if dir.exists() {
            git(&dir, &["fetch", "--quiet", "origin"]);
            git(
                &dir,
                &[
                    "checkout",
                    "--quiet",
                    "--force",
                    "-B",
                    "main",
                    "origin/main",
                ],
            );
        } else {
            git(self.root(), &["clone", "--quiet", "remote.git", "reviewer"]);
        }
        dir
    }

    /// The reviewer commits everything in their clone and pushes it to `to`; returns the
    /// commit.
    pub fn reviewer_push(&self, message: &str, to: &str) -> String {
        let dir = self.root().join("reviewer");
        git(&dir, &["add", "--all"]);
        git(
            &dir,
            &[
                "-c",
                "user.name=rev",
                "-c",
                "user.email=rev@example.com",
                "commit",
                "--quiet",
                "-m",
                message,
            ],
        );
        git(&dir, &["push", "--quiet", "origin", &format!("HEAD:{to}")]);
        git(&dir, &["rev-parse", "HEAD"])
    }

    /// The reviewer merges `branch` into main (a merge commit, after an edit when given:
    /// in `file`, on the one line holding `marker`, `from` replaced by `to`) and the forge
    /// marks request `number` merged as it.
    pub fn merge(&self, number: i64, branch: &str, edit: Option<(&str, &str, &str, &str)>) {
        let dir = self.reviewer();
        git(
            &dir,
            &[
                "merge",
                "--quiet",
                "--no-ff",
                "-m",
                "merge",
                &format!("origin/{branch}"),
            ],
        );
        if let Some((file, marker, from, to)) = edit {
            let path = dir.join(file);
            let text = std::fs::read_to_string(&path).expect("a file to edit");
            let hits: Vec<&str> = text
                .lines()
                .filter(|l| l.contains(marker) && l.contains(from))
                .collect();
            assert_eq!(
                hits.len(),
                1,
                "one line with {marker} and {from} in {file}:\n{text}"
            );
            let edited: String = text
                .split_inclusive('\n')
                .map(|l| {
                    if l.contains(marker) {
                        l.replace(from, to)
                    } else {
                        l.to_owned()
                    }
                })
                .collect();
            std::fs::write(&path, edited).expect("edit");
            git(&dir, &["add", "--all"]);
            git(
                &dir,
                &[
                    "-c",
                    "user.name=rev",
                    "-c",
                    "user.email=rev@example.com",
                    "commit",
                    "--quiet",
                    "-m",
                    "as the team writes it",
                ],
            );
        }
        git(&dir, &["push", "--quiet", "origin", "HEAD:main"]);
        let merged = git(&dir, &["rev-parse", "HEAD"]);
        self.forge.merge(number, &merged);
    }

    /// A file of the remote's `rev`, `None` when absent.
    pub fn show(&self, rev: &str, file: &str) -> Option<String> {
        let out = Command::new("git")
            .args(["show", &format!("{rev}:{file}")])
            .current_dir(self.remote())
            .output()
            .expect("git runs");
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }
}
