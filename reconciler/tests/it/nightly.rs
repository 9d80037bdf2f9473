//! `retrace nightly` end to end: a local bare repository as the remote, a loopback server
//! speaking GitHub's (or GitLab's, or Gitea's) REST API, the bundled demo's project, state and
//! trail.

use crate::support;

use std::path::Path;

use serde_json::Value;
use support::forge::{Kind, Recorded};
use support::world::{ACCOUNT, DEMO, Event, TOKEN, World, copy_dir, git, json};

/// Carol tags the web security group on the evening of the demo's day.
fn carol_tags_the_group(world: &World) {
    world.event(&Event::tag(
        ACCOUNT,
        "2026-11-20T23:10:00Z",
        "8e1f7a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b",
        "CostCenter",
        "cc-42",
    ));
}

/// The first run opens one pull request (a draft: bob's SSH rule waits for a person) with the
/// evidence; a second run with no new events changes nothing; new events update the same
/// request; a merge with a reviewer's edit reaches the knowledge base.
#[test]
fn a_nightly_run_opens_one_request_updates_it_and_learns_from_its_merge() {
    let world = World::new(Kind::Github, &[("shop", ACCOUNT)]);
    let config = world.config(&world.workspace("shop", ACCOUNT));

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
    let remote = world.remote();
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

    carol_tags_the_group(&world);
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
    let reviews = world.reviews_by_rule(&config);
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
    let config = world.config(&world.workspace("shop", ACCOUNT));
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
    let config = world.config(&world.workspace("shop", ACCOUNT));
    let dry = world.nightly(&config, &["--dry-run", "--format", "text"]);
    let text = String::from_utf8_lossy(&dry.stdout);
    assert!(text.contains("would open merge request"), "{text}");
    assert!(text.contains("--- description ---"), "{text}");
    assert!(world.forge.writes().is_empty());
    assert!(git(&world.remote(), &["branch", "--list", "retrace/shop"]).is_empty());

    world.nightly(&config, &[]);
    let pulls = world.forge.pulls();
    assert_eq!(pulls.len(), 1);
    assert!(pulls[0].title.starts_with("Draft: "), "{}", pulls[0].title);
    world.forge.close(1);
    let after = json(&world.nightly(&config, &[]));
    assert_eq!(after["workspaces"][0]["reviewed"][0]["state"], "closed");
    let reviews = world.reviews_by_rule(&config);
    assert!(!reviews.is_empty());
    assert!(
        reviews
            .iter()
            .all(|r| r["rejected"] == 1 && r["merged"] == 0),
        "{reviews:?}"
    );
}

/// On Gitea (or Forgejo): the first run opens one pull request, a draft by its `WIP:` title,
/// with the labels, created in the repository since it has none; new events update the same
/// request; a merge is read as merged and counted.
#[test]
fn on_gitea_a_request_is_opened_updated_and_read_as_merged() {
    let world = World::new(Kind::Gitea, &[("shop", ACCOUNT)]);
    let config = world.config(&world.workspace("shop", ACCOUNT));

    let first = world.nightly(&config, &[]);
    assert_eq!(first.status.code(), Some(3), "bob's SSH rule is held");
    let pulls = world.forge.pulls();
    assert_eq!(pulls.len(), 1);
    let pull = &pulls[0];
    assert_eq!(
        (pull.head.as_str(), pull.base.as_str()),
        ("retrace/shop", "main")
    );
    // The demo's six intents less alice's queue change that cancelled out (see the snapshot
    // of `the_pull_request_tells_the_evidence`).
    assert_eq!(pull.title, "WIP: retrace: 5 out-of-band change(s) in shop");
    assert!(pull.draft);
    assert_eq!(pull.labels, ["drift", "retrace"]);
    let writes: Vec<(String, String)> = world
        .forge
        .writes()
        .into_iter()
        .map(|r| (r.method, r.url))
        .collect();
    let write = |method: &str, url: &str| (method.to_owned(), url.to_owned());
    assert_eq!(
        writes,
        [
            write("POST", "/repos/acme/infra/pulls"),
            write("POST", "/repos/acme/infra/labels"),
            write("POST", "/repos/acme/infra/labels"),
            write("POST", "/repos/acme/infra/issues/1/labels"),
        ]
    );
    let requests = world.forge.requests();
    assert!(requests.iter().all(|r| r.token.as_deref() == Some(TOKEN)));
    // The loopback Gitea answers one item a page: `retrace` is looked for past `drift`.
    let labels_page_2 = |r: &&Recorded| {
        r.method == "GET"
            && r.url.starts_with("/repos/acme/infra/labels?")
            && r.url.contains("page=2")
    };
    assert!(requests.iter().any(|r| labels_page_2(&r)), "{requests:?}");

    carol_tags_the_group(&world);
    let second = json(&world.nightly(&config, &[]));
    assert_eq!(second["workspaces"][0]["request"]["action"], "updated");
    let pulls = world.forge.pulls();
    assert_eq!(pulls.len(), 1, "never a duplicate");
    assert!(pulls[0].body.contains("carol"), "{}", pulls[0].body);
    assert_eq!(
        pulls[0].title, "WIP: retrace: 6 out-of-band change(s) in shop",
        "carol's tag is one more"
    );
    assert!(
        world
            .forge
            .writes()
            .iter()
            .any(|r| r.method == "PATCH" && r.url == "/repos/acme/infra/pulls/1")
    );

    world.forge.tick_all(1);
    world.merge(1, "retrace/shop", None);
    let third = json(&world.nightly(&config, &[]));
    assert_eq!(third["workspaces"][0]["reviewed"][0]["state"], "merged");
    let reviews = world.reviews_by_rule(&config);
    assert!(!reviews.is_empty());
    assert!(
        reviews
            .iter()
            .all(|r| r["merged"] == 1 && r["rejected"] == 0),
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
    copy_dir(
        &Path::new(DEMO).join("trail/AWSLogs/111122223333"),
        &world.root().join("trail/AWSLogs").join(other),
        &|path, bytes| {
            let plain = path.extension().is_some_and(|e| e == "json");
            plain.then(|| swap(bytes))
        },
    );
    let workspaces = format!(
        "{}\n{}",
        world.workspace("shop", ACCOUNT),
        world.workspace("shop-eu", other)
    );
    let config = world.config(&workspaces);
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
    let config = world.config(&world.workspace("shop", ACCOUNT));
    let dry = world.nightly(&config, &["--dry-run", "--since", "2026-11-20T00:00:00Z"]);
    let report = json(&dry);
    let body = report["workspaces"][0]["request"]["body"]
        .as_str()
        .expect("a description");
    insta::assert_snapshot!(body);
}
