//! `retrace nightly` night after night: one regression test for each defect of issue 31
//! (an update that told only the latest night, held-only nights that never reached the
//! forge, rejected changes coming back, skewed learning, partial forge failures, the overlap
//! re-listing handled changes, a conflicting base, a person's commit discarded, concurrent
//! runs, a shared watermark, a deleted request), driven through the binary with a bare
//! remote and the loopback forge. The ten-night run of both forges is in
//! `nightly_ten_nights.rs`.

use crate::support;

use std::path::PathBuf;

use serde_json::Value;
use support::forge::{Failure, Kind, Pull};
use support::world::{ACCOUNT, Event, World, git, json};

const OTHER: &str = "444455556666";

/// A world whose trail holds none of the demo's events: each test adds its own.
fn quiet(kind: Kind) -> (World, PathBuf) {
    let world = World::new(kind, &[("shop", ACCOUNT)]);
    std::fs::remove_dir_all(world.root().join("trail/AWSLogs")).expect("empty trail");
    std::fs::create_dir_all(world.root().join("trail/AWSLogs")).expect("mkdir");
    let config = world.config(&world.workspace("shop", ACCOUNT));
    (world, config)
}

/// The only request of the branch `retrace/shop`.
fn the_pull(world: &World) -> Pull {
    let pulls: Vec<Pull> = world
        .forge
        .pulls()
        .into_iter()
        .filter(|p| p.head == "retrace/shop" && p.state == "open")
        .collect();
    assert_eq!(pulls.len(), 1, "one open request: {pulls:?}");
    pulls[0].clone()
}

fn workspace<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["workspaces"]
        .as_array()
        .expect("workspaces")
        .iter()
        .find(|w| w["workspace"] == name)
        .unwrap_or_else(|| panic!("{name} in {report}"))
}

/// The event ids a night's reconciliation read for a workspace.
fn read_ids(report: &Value, name: &str) -> Vec<String> {
    let mut ids: Vec<String> = workspace(report, name)["outcome"]["intents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|d| {
            d["intent"]["evidence"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|e| e["event_id"].as_str().expect("an id").to_owned())
        .collect();
    ids.sort();
    ids
}

fn rule<'a>(reviews: &'a [Value], id: &str) -> &'a Value {
    reviews
        .iter()
        .find(|r| r["rule"] == id)
        .unwrap_or_else(|| panic!("{id} in {reviews:?}"))
}

fn counts(r: &Value) -> (u64, u64, u64) {
    let n = |k: &str| r[k].as_u64().expect("a count");
    (n("merged"), n("rejected"), n("corrected"))
}

/// Defect 1: an update rewrote the description with the latest night only. The second
/// night's description tells every intent the branch holds, keeps the held SSH rule, counts
/// only live changes in its title, shows the diff of the whole branch against the base
/// with repository paths, and on GitLab keeps `Draft:` (and says "merge request").
#[test]
fn an_update_tells_the_whole_branch_not_the_latest_night() {
    let world = World::new(Kind::Gitlab, &[("shop", ACCOUNT)]);
    let config = world.config(&world.workspace("shop", ACCOUNT));
    world.nightly(&config, &[]);
    let first = the_pull(&world);
    // The demo's day: I1 alice's rule edit, I2 bob's resize, I3 the bucket, I5 bob's SSH
    // rule (held) and I6 the capacity ignored with `ignore_changes` are live; I4's queue
    // changes cancelled out.
    assert_eq!(
        first.title,
        "Draft: retrace: 5 out-of-band change(s) in shop"
    );
    world.event(&Event::tag(
        ACCOUNT,
        "2026-11-20T23:10:00Z",
        "tag-1",
        "CostCenter",
        "cc-42",
    ));
    let text = world.nightly(&config, &["--format", "text"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("updated merge request #1"), "{text}");
    let pull = the_pull(&world);
    assert_eq!(
        pull.title,
        "Draft: retrace: 6 out-of-band change(s) in shop"
    );
    assert!(pull.draft);
    for held in [
        "### I1:",
        "### I4:",
        "### I5:",
        "### I7:",
        "tcp 22 from 0.0.0.0/0",
        "`tag-1`",
    ] {
        assert!(pull.body.contains(held), "{held} in:\n{}", pull.body);
    }
    assert!(pull.body.contains("- [ ] I5 (bob)"), "{}", pull.body);
    assert!(
        pull.body.contains("This merge request holds"),
        "{}",
        pull.body
    );
    // The diff is the branch against the base, with the paths of the repository.
    assert!(
        pull.body.contains("+++ b/shop/terraform.tfvars"),
        "{}",
        pull.body
    );
    assert!(
        pull.body.contains("+instance_type = \"t3.large\""),
        "{}",
        pull.body
    );
    assert!(pull.body.contains("CostCenter"), "{}", pull.body);
    assert!(pull.body.contains(&world.branch_diff("retrace/shop")));
}

/// Defect 2: a night with only a held change reached no forge. It opens a draft request
/// with an empty commit carrying the evidence; the next night with nothing new still exits 3;
/// ticking the item makes the request ready, and a new held item makes it a draft again.
#[test]
fn a_held_only_night_opens_a_draft_and_a_new_held_item_makes_it_a_draft_again() {
    let (world, config) = quiet(Kind::Github);
    world.event(&Event::open_port(
        ACCOUNT,
        "2026-11-21T02:00:00Z",
        "port-22",
        22,
    ));
    let first = world.nightly(&config, &[]);
    assert_eq!(first.status.code(), Some(3));
    let pull = the_pull(&world);
    assert!(pull.draft);
    assert!(
        pull.body
            .contains("- [ ] I1 (erin): the new ingress rule tcp 22 from 0.0.0.0/0"),
        "{}",
        pull.body
    );
    assert_eq!(world.commits_beyond_main("retrace/shop"), 1);
    assert!(
        world.branch_diff("retrace/shop").is_empty(),
        "an empty commit"
    );
    let message = git(
        &world.remote(),
        &["log", "-1", "--format=%B", "retrace/shop"],
    );
    assert!(message.contains("port-22"), "{message}");

    let writes = world.forge.writes().len();
    let quiet_night = world.nightly(&config, &[]);
    assert_eq!(
        quiet_night.status.code(),
        Some(3),
        "the held item is unresolved"
    );
    assert_eq!(world.forge.writes().len(), writes, "nothing to change");

    world.forge.tick_all(pull.number);
    let ticked = json(&world.nightly(&config, &[]));
    assert_eq!(workspace(&ticked, "shop")["request"]["action"], "repaired");
    assert!(!the_pull(&world).draft, "dealt with: ready for review");
    assert!(the_pull(&world).body.contains("- [x] I1 (erin)"));

    world.event(&Event::open_port(
        ACCOUNT,
        "2026-11-21T05:00:00Z",
        "port-3389",
        3389,
    ));
    let held = world.nightly(&config, &[]);
    assert_eq!(held.status.code(), Some(3));
    let pull = the_pull(&world);
    assert!(pull.draft, "a new held item makes it a draft");
    assert!(
        pull.body
            .contains("- [ ] I2 (erin): the new ingress rule tcp 3389"),
        "{}",
        pull.body
    );
    assert!(pull.body.contains("- [x] I1 (erin)"), "{}", pull.body);
    assert!(
        world.forge.writes().iter().any(|r| r.url == "/graphql"
            && r.body["query"]
                .as_str()
                .is_some_and(|q| q.contains("convertPullRequestToDraft"))),
        "made a draft through GraphQL"
    );
}

/// Defect 3: a request closed unmerged came back. Its change is not proposed again, even
/// when the same value is set again, and the next request says what was left out; another
/// value is proposed.
#[test]
fn a_rejected_change_is_not_proposed_again_until_the_cloud_changes_it() {
    let (world, config) = quiet(Kind::Github);
    world.event(&Event::resize(
        ACCOUNT,
        "2026-11-21T02:00:00Z",
        "resize-1",
        "t3.large",
    ));
    world.nightly(&config, &[]);
    world.forge.close(the_pull(&world).number);
    let after = world.nightly(&config, &[]);
    assert_eq!(
        workspace(&json(&after), "shop")["reviewed"][0]["state"],
        "closed"
    );
    assert_eq!(world.forge.pulls().len(), 1, "nothing reopened");

    world.event(&Event::resize(
        ACCOUNT,
        "2026-11-21T04:00:00Z",
        "resize-2",
        "t3.large",
    ));
    world.event(&Event::tag(
        ACCOUNT,
        "2026-11-21T04:30:00Z",
        "tag-1",
        "Team",
        "web",
    ));
    world.nightly(&config, &[]);
    let pull = the_pull(&world);
    assert!(!world.branch_diff("retrace/shop").contains("t3.large"));
    assert!(
        pull.body.contains("## Left out: rejected by a reviewer"),
        "{}",
        pull.body
    );
    assert!(
        pull.body.contains(
            "instance\\_type = \"t3.large\" on aws\\_instance.web: a reviewer closed request \\#1"
        ),
        "{}",
        pull.body
    );
    assert!(pull.title.contains(" 1 out-of-band"), "{}", pull.title);

    world.event(&Event::resize(
        ACCOUNT,
        "2026-11-21T06:00:00Z",
        "resize-3",
        "t3.xlarge",
    ));
    world.nightly(&config, &[]);
    assert!(
        world
            .branch_diff("retrace/shop")
            .contains("+instance_type = \"t3.xlarge\"")
    );
}

/// Defect 4: learning was skewed. retrace replacing its own earlier line is no reviewer's
/// correction, and closing a request retrace called obsolete is no rejection.
#[test]
fn learning_counts_only_what_a_reviewer_did() {
    let (world, config) = quiet(Kind::Github);
    world.event(&Event::resize(
        ACCOUNT,
        "2026-11-21T02:00:00Z",
        "resize-1",
        "t3.large",
    ));
    world.nightly(&config, &[]);
    world.event(&Event::resize(
        ACCOUNT,
        "2026-11-21T04:00:00Z",
        "resize-2",
        "t3.xlarge",
    ));
    world.nightly(&config, &[]);
    world.merge(the_pull(&world).number, "retrace/shop", None);
    world.nightly(&config, &[]);
    let reviews = world.reviews_by_rule(&config);
    assert_eq!(
        counts(rule(&reviews, "ec2:ModifyInstanceAttribute")),
        (1, 0, 0)
    );

    // The base comes to hold what the next request proposes; retrace says so; a person
    // closes it.
    world.event(&Event::tag(
        ACCOUNT,
        "2026-11-21T06:00:00Z",
        "tag-1",
        "Team",
        "web",
    ));
    world.nightly(&config, &[]);
    let pull = the_pull(&world);
    let reviewer = world.reviewer();
    git(
        &reviewer,
        &["checkout", "--quiet", "origin/retrace/shop", "--", "shop"],
    );
    world.reviewer_push("the same tag, by hand", "main");
    let report = json(&world.nightly(&config, &[]));
    assert_eq!(workspace(&report, "shop")["request"]["action"], "commented");
    world.forge.close(pull.number);
    let report = json(&world.nightly(&config, &[]));
    assert_eq!(
        workspace(&report, "shop")["reviewed"][0]["state"],
        "withdrawn"
    );
    let reviews = world.reviews_by_rule(&config);
    assert!(reviews.iter().all(|r| r["rejected"] == 0), "{reviews:?}");
}

/// Defect 5: partial forge failures. A create answered 502 after the forge made the request
/// adopts it; an update failing after the push is made the next night; a closed port is
/// told as "connection refused".
#[test]
fn partial_forge_failures_are_repaired() {
    let (world, config) = quiet(Kind::Github);
    world.forge.fail(Failure {
        method: "POST".into(),
        path: "/repos/acme/infra/pulls".into(),
        status: 502,
        times: 1,
        after: true,
    });
    world.event(&Event::resize(
        ACCOUNT,
        "2026-11-21T02:00:00Z",
        "resize-1",
        "t3.large",
    ));
    let report = json(&world.nightly(&config, &[]));
    assert_eq!(workspace(&report, "shop")["request"]["number"], 1);
    let pull = the_pull(&world);
    assert_eq!(pull.labels, ["drift", "retrace"]);

    world.forge.fail(Failure {
        method: "PATCH".into(),
        path: "/repos/acme/infra/pulls/1".into(),
        status: 500,
        times: 4,
        after: false,
    });
    world.event(&Event::tag(
        ACCOUNT,
        "2026-11-21T04:00:00Z",
        "tag-1",
        "Team",
        "web",
    ));
    let failed = world.run(&config, &[]);
    assert_eq!(failed.status.code(), Some(1));
    let error = workspace(&json(&failed), "shop")["error"]
        .as_str()
        .expect("an error")
        .to_owned();
    assert!(
        error.contains("answered 500 4 times in a row (retries exhausted)"),
        "{error}"
    );
    assert!(
        !the_pull(&world).body.contains("tag-1"),
        "the update failed"
    );
    let next = json(&world.nightly(&config, &[]));
    assert_eq!(workspace(&next, "shop")["request"]["action"], "repaired");
    assert!(the_pull(&world).body.contains("tag-1"));

    world.merge(1, "retrace/shop", None);
    world.nightly(&config, &[]);
    let reviews = world.reviews_by_rule(&config);
    assert_eq!(
        counts(rule(&reviews, "ec2:ModifyInstanceAttribute")),
        (1, 0, 0)
    );

    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = closed.local_addr().expect("address").port();
    drop(closed);
    let text = std::fs::read_to_string(&config).expect("config");
    std::fs::write(
        &config,
        text.replace(&world.forge.url, &format!("http://127.0.0.1:{port}")),
    )
    .expect("config");
    let refused = world.run(&config, &[]);
    let error = workspace(&json(&refused), "shop")["error"]
        .as_str()
        .expect("an error")
        .to_owned();
    assert!(error.contains("connection refused"), "{error}");
}

/// Defect 6: the overlap re-listed changes handled the night before.
#[test]
fn the_overlap_does_not_list_handled_changes_again() {
    let (world, config) = quiet(Kind::Github);
    world.event(&Event::resize(
        ACCOUNT,
        "2026-11-21T02:00:00Z",
        "resize-1",
        "t3.large",
    ));
    world.nightly(&config, &[]);
    world.event(&Event::tag(
        ACCOUNT,
        "2026-11-21T02:05:00Z",
        "tag-1",
        "Team",
        "web",
    ));
    let report = json(&world.nightly(&config, &[]));
    assert_eq!(read_ids(&report, "shop"), ["tag-1"]);
    let message = git(
        &world.remote(),
        &["log", "-1", "--format=%B", "retrace/shop"],
    );
    assert!(!message.contains("resize-1"), "{message}");
    let body = the_pull(&world).body;
    assert_eq!(body.matches("event `resize-1`").count(), 1, "{body}");
    assert_eq!(body.matches("event `tag-1`").count(), 1, "{body}");
}

/// Defect 7: a base that moved with a conflicting change went unnoticed. The branch is
/// rebuilt from the base with everything its request holds, and the request says so.
#[test]
fn a_conflicting_base_rebuilds_the_branch_and_says_so() {
    let (world, config) = quiet(Kind::Github);
    world.event(&Event::resize(
        ACCOUNT,
        "2026-11-21T02:00:00Z",
        "resize-1",
        "t3.large",
    ));
    world.nightly(&config, &[]);
    let reviewer = world.reviewer();
    std::fs::write(reviewer.join("NOTES.md"), "unrelated\n").expect("notes");
    world.reviewer_push("notes", "main");
    world.event(&Event::tag(
        ACCOUNT,
        "2026-11-21T04:00:00Z",
        "tag-1",
        "Team",
        "web",
    ));
    world.nightly(&config, &[]);
    assert_eq!(
        world.commits_beyond_main("retrace/shop"),
        2,
        "a plain move: continued"
    );
    assert!(the_pull(&world).comments.is_empty());

    let reviewer = world.reviewer();
    let tfvars = reviewer.join("shop/terraform.tfvars");
    let text = std::fs::read_to_string(&tfvars).expect("tfvars");
    std::fs::write(&tfvars, text.replace("\"t3.medium\"", "\"t3.small\"")).expect("edit");
    world.reviewer_push("back to small", "main");
    world.event(&Event::tag(
        ACCOUNT,
        "2026-11-21T06:00:00Z",
        "tag-2",
        "Owner",
        "ops",
    ));
    let report = json(&world.nightly(&config, &[]));
    let notes = workspace(&report, "shop")["notes"].to_string();
    assert!(notes.contains("conflicting change"), "{notes}");
    let remote = world.remote();
    git(
        &remote,
        &["merge-tree", "--write-tree", "main", "retrace/shop"],
    );
    let diff = world.branch_diff("retrace/shop");
    assert!(diff.contains("-instance_type = \"t3.small\""), "{diff}");
    assert!(diff.contains("+instance_type = \"t3.large\""), "{diff}");
    assert!(diff.contains("Owner") && diff.contains("Team"), "{diff}");
    let pull = the_pull(&world);
    assert_eq!(pull.comments.len(), 1);
    assert!(
        pull.comments[0].contains("rebuilt this branch from `main`"),
        "{}",
        pull.comments[0]
    );
    for id in ["resize-1", "tag-1", "tag-2"] {
        assert!(pull.body.contains(id), "{id} in {}", pull.body);
    }
}

/// Defect 8: with no request open, the branch was force-pushed over a person's commit.
#[test]
fn a_persons_commit_on_the_branch_is_never_replaced() {
    let (world, config) = quiet(Kind::Github);
    world.event(&Event::resize(
        ACCOUNT,
        "2026-11-21T02:00:00Z",
        "resize-1",
        "t3.large",
    ));
    world.nightly(&config, &[]);
    let reviewer = world.reviewer();
    git(
        &reviewer,
        &["checkout", "--quiet", "-B", "work", "origin/retrace/shop"],
    );
    std::fs::write(reviewer.join("shop/notes.md"), "why\n").expect("notes");
    let theirs = world.reviewer_push("a colleague's note", "retrace/shop");
    world.forge.close(the_pull(&world).number);
    world.event(&Event::tag(
        ACCOUNT,
        "2026-11-21T04:00:00Z",
        "tag-1",
        "Team",
        "web",
    ));
    let out = world.run(&config, &[]);
    assert_eq!(out.status.code(), Some(1));
    let error = workspace(&json(&out), "shop")["error"]
        .as_str()
        .expect("an error")
        .to_owned();
    assert!(
        error.contains("holds commits retrace did not make"),
        "{error}"
    );
    assert!(error.contains("a colleague's note"), "{error}");
    assert_eq!(git(&world.remote(), &["rev-parse", "retrace/shop"]), theirs);
}

/// Defect 9: concurrent runs. A second run on the same store stops at once with a clear
/// message; a workspace whose patch fails to write is not recorded, and its events are
/// read again by the next run.
#[test]
fn one_run_per_store_and_an_unwritten_patch_is_not_recorded() {
    let (world, config) = quiet(Kind::Github);
    let held = reconciler::nightly::lock::RunLock::acquire(&world.root().join("kb.sqlite"))
        .expect("the test holds the lock");
    let out = world.run(&config, &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("another `retrace nightly` is running"),
        "{stderr}"
    );
    drop(held);

    world.event(&Event::resize(
        ACCOUNT,
        "2026-11-21T02:00:00Z",
        "resize-1",
        "t3.large",
    ));
    world.nightly(&config, &[]);
    let recorded = world.stats(&config)["reconciliations_by_outcome"].clone();
    let staging = world.root().join(".retrace/checkouts/shop/shop/.retrace");
    std::fs::write(&staging, "in the way").expect("a file where the patch stages");
    world.event(&Event::tag(
        ACCOUNT,
        "2026-11-21T04:00:00Z",
        "tag-1",
        "Team",
        "web",
    ));
    let out = world.run(&config, &[]);
    assert_eq!(out.status.code(), Some(1));
    let error = workspace(&json(&out), "shop")["error"]
        .as_str()
        .expect("an error")
        .to_owned();
    assert!(error.contains("writing the patch"), "{error}");
    assert_eq!(world.stats(&config)["reconciliations_by_outcome"], recorded);
    std::fs::remove_file(&staging).expect("cleared");
    let report = json(&world.nightly(&config, &[]));
    assert_eq!(read_ids(&report, "shop"), ["tag-1"]);
}

/// Defect 10: the watermark was shared. An event of one workspace arriving after another
/// workspace's later events is still read.
#[test]
fn each_workspace_keeps_its_own_watermark() {
    let world = World::new(Kind::Github, &[("shop", ACCOUNT), ("shop-eu", OTHER)]);
    std::fs::remove_dir_all(world.root().join("trail/AWSLogs")).expect("empty trail");
    let workspaces = format!(
        "{}\n{}",
        world.workspace("shop", ACCOUNT),
        world.workspace("shop-eu", OTHER)
    );
    let config = world.config(&workspaces);
    world.event(&Event::resize(
        ACCOUNT,
        "2026-11-21T08:00:00Z",
        "shop-1",
        "t3.large",
    ));
    world.event(&Event::resize(
        OTHER,
        "2026-11-21T20:00:00Z",
        "eu-1",
        "t3.large",
    ));
    world.nightly(&config, &[]);
    // Delivered late: made after shop's last event, before shop-eu's.
    world.event(&Event::tag(
        ACCOUNT,
        "2026-11-21T12:00:00Z",
        "shop-late",
        "Team",
        "web",
    ));
    let report = json(&world.nightly(&config, &[]));
    assert_eq!(read_ids(&report, "shop"), ["shop-late"]);
    assert!(read_ids(&report, "shop-eu").is_empty());
    assert!(the_pull(&world).body.contains("shop-late"));
}

/// Defect 11: a request the forge no longer knows blocked its workspace every night. It is
/// forgotten and what its branch holds is proposed in a new request.
#[test]
fn a_deleted_request_is_forgotten_and_its_branch_proposed_again() {
    let (world, config) = quiet(Kind::Github);
    world.event(&Event::resize(
        ACCOUNT,
        "2026-11-21T02:00:00Z",
        "resize-1",
        "t3.large",
    ));
    world.nightly(&config, &[]);
    world.forge.delete(1);
    let report = json(&world.nightly(&config, &[]));
    let shop = workspace(&report, "shop");
    assert_eq!(shop["reviewed"][0]["state"], "gone");
    assert_eq!(shop["request"]["action"], "opened");
    let pull = the_pull(&world);
    assert_eq!(pull.number, 2);
    assert!(pull.body.contains("resize-1"), "{}", pull.body);
    let again = world.nightly(&config, &[]);
    assert_eq!(again.status.code(), Some(0), "nothing new, nothing waits");
}
