//! Ten nights of `retrace nightly` with two workspaces in two accounts, on the GitHub, the
//! GitLab and the Gitea flavour of the loopback forge, with scripted events and reviewer actions in
//! between: merge, close, edit-then-merge, a push to the branch, the base moving with and
//! without a conflict, a deleted request, a 502 after a create and a storm of 429s. After
//! every night the requests are checked against the branches and against what the script
//! did; every expectation below was worked out by hand from the script.

use crate::support;

use std::collections::BTreeMap;

use serde_json::Value;
use support::forge::{Failure, Kind, Pull};
use support::world::{ACCOUNT, Event, World, git, json};

const OTHER: &str = "444455556666";
const A: &str = "shop";
const B: &str = "shop-eu";

/// What one night expects of a workspace: the events it reads (in id order), and, when a
/// request is open after it, the events its description tells, its live changes and the
/// held items (ports) it shows.
struct Expect {
    read: &'static [&'static str],
    open: Option<Open>,
}

struct Open {
    told: &'static [&'static str],
    live: usize,
    held: &'static [&'static str],
}

fn open(told: &'static [&'static str], live: usize, held: &'static [&'static str]) -> Option<Open> {
    Some(Open { told, live, held })
}

/// The open request of a workspace's branch, at most one.
fn open_request(world: &World, name: &str) -> Option<Pull> {
    let branch = format!("retrace/{name}");
    let open: Vec<Pull> = world
        .forge
        .pulls()
        .into_iter()
        .filter(|p| p.head == branch && p.state == "open")
        .collect();
    assert!(
        open.len() <= 1,
        "one open request per workspace at most: {open:?}"
    );
    open.into_iter().next()
}

fn read_ids(report: &Value, name: &str) -> Vec<String> {
    let w = report["workspaces"]
        .as_array()
        .expect("workspaces")
        .iter()
        .find(|w| w["workspace"] == name)
        .expect("the workspace");
    assert!(w["error"].is_null(), "{name}: {}", w["error"]);
    let mut ids: Vec<String> = w["outcome"]["intents"]
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

/// The diff in a description's patch section.
fn told_diff(body: &str) -> String {
    let Some(start) = body.find("<summary>The diff of the branch against the base</summary>\n\n")
    else {
        return String::new();
    };
    let rest = &body[start..];
    let fence_start = rest.find("```").expect("a fence");
    let rest = &rest[fence_start..];
    let fence: String = rest.chars().take_while(|c| *c == '`').collect();
    let content = &rest[fence.len() + "diff\n".len()..];
    let end = content
        .find(&format!("\n{fence}\n"))
        .expect("a closing fence");
    content[..end].to_owned()
}

/// Checks a workspace after a night.
fn check(world: &World, name: &str, night: usize, report: &Value, expect: &Expect) {
    let read = read_ids(report, name);
    assert_eq!(read, expect.read, "night {night}, {name}: the events read");
    let pull = open_request(world, name);
    let Some(want) = &expect.open else {
        assert!(
            pull.is_none(),
            "night {night}, {name}: no open request: {pull:?}"
        );
        return;
    };
    let pull = pull.unwrap_or_else(|| panic!("night {night}, {name}: an open request"));
    let body = &pull.body;
    for label in ["drift", "retrace"] {
        assert!(
            pull.labels.iter().any(|l| l == label),
            "night {night}, {name}: labels {:?}",
            pull.labels
        );
    }
    let unticked = body.contains("- [ ] ");
    assert_eq!(
        pull.draft, unticked,
        "night {night}, {name}: draft while an item waits:\n{body}"
    );
    let title = format!("retrace: {} out-of-band change(s) in {name}", want.live);
    let title = match (world.kind, unticked) {
        (Kind::Gitlab, true) => format!("Draft: {title}"),
        (Kind::Gitea, true) => format!("WIP: {title}"),
        _ => title,
    };
    assert_eq!(pull.title, title, "night {night}, {name}");
    let diff = world.branch_diff(&format!("retrace/{name}"));
    assert_eq!(
        told_diff(body).trim_end(),
        diff.trim_end(),
        "night {night}, {name}: the diff told"
    );
    for id in want.told {
        assert_eq!(
            body.matches(&format!("event `{id}`")).count(),
            1,
            "night {night}, {name}: {id} told once:\n{body}"
        );
    }
    assert_eq!(
        body.matches("event `").count(),
        want.told.len(),
        "night {night}, {name}: only these:\n{body}"
    );
    for port in want.held {
        let item = body
            .lines()
            .find(|l| l.starts_with("- [") && l.contains(&format!("tcp {port} from 0.0.0.0/0")));
        assert!(
            item.is_some(),
            "night {night}, {name}: port {port} in the checklist:\n{body}"
        );
    }
    // The change the reviewer rejected on night 3 never comes back.
    if name == A && night >= 3 {
        assert!(
            !diff.contains("+instance_type = \"t3.large\""),
            "night {night}: rejected change back:\n{diff}"
        );
    }
}

/// `kb stats` review counts: rule -> (merged, rejected, corrected).
fn review_counts(world: &World, config: &std::path::Path) -> BTreeMap<String, (u64, u64, u64)> {
    world
        .reviews_by_rule(config)
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_u64().expect("a count");
            (
                r["rule"].as_str().expect("a rule").to_owned(),
                (n("merged"), n("rejected"), n("corrected")),
            )
        })
        .collect()
}

fn number(world: &World, name: &str) -> i64 {
    open_request(world, name).expect("an open request").number
}

fn ten_nights(kind: Kind) {
    let world = World::new(kind, &[(A, ACCOUNT), (B, OTHER)]);
    std::fs::remove_dir_all(world.root().join("trail/AWSLogs")).expect("empty trail");
    let config = world.config(&format!(
        "{}\n{}",
        world.workspace(A, ACCOUNT),
        world.workspace(B, OTHER)
    ));
    let tags = "ec2:CreateTags";
    let resize = "ec2:ModifyInstanceAttribute";
    let mut night = 0;
    let mut run = |expect_a: Expect, expect_b: Expect| {
        night += 1;
        let out = world.nightly(&config, &[]);
        let report = json(&out);
        check(&world, A, night, &report, &expect_a);
        check(&world, B, night, &report, &expect_b);
    };

    // Night 1: a resize in A, a tag in B; both requests open, ready.
    world.event(&Event::resize(
        ACCOUNT,
        "2026-11-21T02:00:00Z",
        "e1",
        "t3.large",
    ));
    world.event(&Event::tag(
        OTHER,
        "2026-11-21T02:00:00Z",
        "e2",
        "CostCenter",
        "blue",
    ));
    run(
        Expect {
            read: &["e1"],
            open: open(&["e1"], 1, &[]),
        },
        Expect {
            read: &["e2"],
            open: open(&["e2"], 1, &[]),
        },
    );

    // Night 2: B's request merged; a held SSH rule in A makes its request a draft.
    world.merge(number(&world, B), "retrace/shop-eu", None);
    world.event(&Event::open_port(ACCOUNT, "2026-11-21T04:00:00Z", "e3", 22));
    run(
        Expect {
            read: &["e3"],
            open: open(&["e1", "e3"], 2, &["22"]),
        },
        Expect {
            read: &[],
            open: None,
        },
    );
    assert_eq!(review_counts(&world, &config).get(tags), Some(&(1, 0, 0)));

    // Night 3: A's request closed unmerged; the same resize again is left out; a tag is new.
    world.forge.close(number(&world, A));
    world.event(&Event::resize(
        ACCOUNT,
        "2026-11-21T06:00:00Z",
        "e4",
        "t3.large",
    ));
    world.event(&Event::tag(
        ACCOUNT,
        "2026-11-21T06:30:00Z",
        "e5",
        "Team",
        "web",
    ));
    run(
        Expect {
            read: &["e4", "e5"],
            open: open(&["e4", "e5"], 1, &[]),
        },
        Expect {
            read: &[],
            open: None,
        },
    );
    assert_eq!(review_counts(&world, &config).get(resize), Some(&(0, 1, 0)));
    assert!(
        open_request(&world, A)
            .expect("open")
            .body
            .contains("## Left out: rejected by a reviewer")
    );

    // Night 4: a colleague pushes to A's branch, then a new resize; B's create is answered
    // 502 after the forge made it.
    let reviewer = world.reviewer();
    git(
        &reviewer,
        &["checkout", "--quiet", "-B", "work", "origin/retrace/shop"],
    );
    std::fs::write(reviewer.join("shop/NOTES.md"), "sized for the sale\n").expect("notes");
    let colleague = world.reviewer_push("a colleague's note", "retrace/shop");
    world.event(&Event::resize(
        ACCOUNT,
        "2026-11-21T08:00:00Z",
        "e6",
        "t3.xlarge",
    ));
    let create = match kind {
        Kind::Github | Kind::Gitea => "/repos/acme/infra/pulls",
        Kind::Gitlab => "/merge_requests",
    };
    world.forge.fail(Failure {
        method: "POST".into(),
        path: create.into(),
        status: 502,
        times: 1,
        after: true,
    });
    world.event(&Event::tag(
        OTHER,
        "2026-11-21T08:00:00Z",
        "e7",
        "CostCenter",
        "green",
    ));
    run(
        Expect {
            read: &["e6"],
            open: open(&["e4", "e5", "e6"], 2, &[]),
        },
        Expect {
            read: &["e7"],
            open: open(&["e7"], 1, &[]),
        },
    );
    git(
        &world.remote(),
        &["merge-base", "--is-ancestor", &colleague, "retrace/shop"],
    );

    // Night 5: the base moves without a conflict, under a storm of 429s; nothing new.
    let reviewer = world.reviewer();
    std::fs::write(reviewer.join("README.md"), "infra\n").expect("readme");
    world.reviewer_push("readme", "main");
    world.forge.fail(Failure {
        method: "GET".into(),
        path: "/".into(),
        status: 429,
        times: 3,
        after: false,
    });
    let writes = world.forge.writes().len();
    run(
        Expect {
            read: &[],
            open: open(&["e4", "e5", "e6"], 2, &[]),
        },
        Expect {
            read: &[],
            open: open(&["e7"], 1, &[]),
        },
    );
    assert_eq!(
        world.forge.writes().len(),
        writes,
        "nothing to change on either request"
    );

    // Night 6: A's request merged after the reviewer edits the tag; B's request deleted;
    // a new resize in A.
    world.merge(
        number(&world, A),
        "retrace/shop",
        Some(("shop/main.tf", "Team = ", "\"web\"", "\"Web\"")),
    );
    world.forge.delete(number(&world, B));
    world.event(&Event::resize(
        ACCOUNT,
        "2026-11-21T12:00:00Z",
        "e8",
        "t3.2xlarge",
    ));
    run(
        Expect {
            read: &["e8"],
            open: open(&["e8"], 1, &[]),
        },
        Expect {
            read: &[],
            open: open(&["e7"], 1, &[]),
        },
    );
    let counts = review_counts(&world, &config);
    assert_eq!(counts.get(tags), Some(&(2, 0, 1)));
    assert_eq!(counts.get(resize), Some(&(1, 1, 0)));

    // Night 7: the base moves with a change that conflicts with A's branch: rebuilt.
    let reviewer = world.reviewer();
    let tfvars = reviewer.join("shop/terraform.tfvars");
    let text = std::fs::read_to_string(&tfvars).expect("tfvars");
    std::fs::write(&tfvars, text.replace("\"t3.xlarge\"", "\"t3.small\"")).expect("edit");
    world.reviewer_push("smaller", "main");
    world.event(&Event::tag(
        ACCOUNT,
        "2026-11-21T14:00:00Z",
        "e9",
        "Owner",
        "ops",
    ));
    run(
        Expect {
            read: &["e8", "e9"],
            open: open(&["e8", "e9"], 2, &[]),
        },
        Expect {
            read: &[],
            open: open(&["e7"], 1, &[]),
        },
    );
    assert_eq!(
        open_request(&world, A).expect("open").comments.len(),
        1,
        "the rebuild is told"
    );

    // Night 8: a held RDP rule in B makes its ready request a draft.
    world.event(&Event::open_port(
        OTHER,
        "2026-11-21T16:00:00Z",
        "e10",
        3389,
    ));
    run(
        Expect {
            read: &[],
            open: open(&["e8", "e9"], 2, &[]),
        },
        Expect {
            read: &["e10"],
            open: open(&["e7", "e10"], 2, &["3389"]),
        },
    );

    // Night 9: the reviewer ticks B's item: ready again.
    world.forge.tick_all(number(&world, B));
    run(
        Expect {
            read: &[],
            open: open(&["e8", "e9"], 2, &[]),
        },
        Expect {
            read: &[],
            open: open(&["e7", "e10"], 2, &["3389"]),
        },
    );

    // Night 10: both merged.
    world.merge(number(&world, A), "retrace/shop", None);
    world.merge(number(&world, B), "retrace/shop-eu", None);
    run(
        Expect {
            read: &[],
            open: None,
        },
        Expect {
            read: &[],
            open: None,
        },
    );
    let counts = review_counts(&world, &config);
    assert_eq!(counts.get(tags), Some(&(4, 0, 1)));
    assert_eq!(counts.get(resize), Some(&(2, 1, 0)));
    assert_eq!(counts.len(), 2, "{counts:?}");
}

#[test]
fn ten_nights_on_github() {
    ten_nights(Kind::Github);
}

#[test]
fn ten_nights_on_gitlab() {
    ten_nights(Kind::Gitlab);
}

#[test]
fn ten_nights_on_gitea() {
    ten_nights(Kind::Gitea);
}
