//! Drift scenario generation: determinism, counts, the shape of every scenario (a drift that
//! changes the cloud, noise that does not, trails the ingest parser reads without a
//! malformed record), and the committed `scenarios/` matching a fresh generation.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use evaluation::generate::{self, DEFAULT_SEED, ProjectScenarios};
use evaluation::scenario::{self, Category};
use reconciler::attribute::{Attributor, Verdict};
use reconciler::ingest::files::read_file;
use reconciler::ingest::{Call, SourceItem};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn projects_dir() -> PathBuf {
    repo().join("fixtures/projects")
}

/// Every project's scenarios from the default seed, generated once for all tests.
fn suite() -> &'static Vec<ProjectScenarios> {
    static SUITE: OnceLock<Vec<ProjectScenarios>> = OnceLock::new();
    SUITE.get_or_init(|| {
        let names = generate::project_names(&projects_dir()).expect("projects listed");
        names
            .iter()
            .map(|n| {
                generate::generate_project(&projects_dir(), n, DEFAULT_SEED).expect("generates")
            })
            .collect()
    })
}

/// Every file under `dir`, by path relative to it, with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("readable dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).expect("inside").to_owned();
                out.insert(rel, std::fs::read(&path).expect("readable file"));
            }
        }
    }
    out
}

#[test]
fn the_same_seed_gives_byte_identical_files() {
    let one = tempfile::tempdir().expect("temp dir");
    let two = tempfile::tempdir().expect("temp dir");
    for out in [one.path(), two.path()] {
        let p = generate::generate_project(&projects_dir(), "static-site", DEFAULT_SEED)
            .expect("generates");
        generate::write_project(out, &p).expect("writes");
    }
    let (a, b) = (files(one.path()), files(two.path()));
    assert!(
        a.len() >= 60 * 3,
        "three files per scenario, got {}",
        a.len()
    );
    assert_eq!(a, b);
}

#[test]
fn another_seed_gives_other_trails() {
    let a = generate::generate_project(&projects_dir(), "static-site", DEFAULT_SEED)
        .expect("generates");
    let b = generate::generate_project(&projects_dir(), "static-site", DEFAULT_SEED + 1)
        .expect("generates");
    let trails = |p: &ProjectScenarios| -> Vec<String> {
        p.scenarios
            .iter()
            .map(|g| serde_json::to_string(&g.records).expect("json"))
            .collect()
    };
    assert_ne!(trails(&a), trails(&b));
}

#[test]
fn writing_replaces_what_was_there() {
    let out = tempfile::tempdir().expect("temp dir");
    let stale = out.path().join("static-site/static-site-console-999");
    std::fs::create_dir_all(&stale).expect("mkdir");
    std::fs::write(stale.join("scenario.json"), "{}").expect("write");
    let p = generate::generate_project(&projects_dir(), "static-site", DEFAULT_SEED)
        .expect("generates");
    generate::write_project(out.path(), &p).expect("writes");
    assert!(!stale.exists());
    let loaded = scenario::load_all(out.path()).expect("loads");
    assert_eq!(loaded.len(), p.scenarios.len());
}

#[test]
fn every_project_has_at_least_sixty_scenarios_and_the_suite_1000() {
    let counts = generate::counts(suite());
    assert_eq!(counts.len(), 8, "{counts:?}");
    let mut total = 0;
    for (project, row) in &counts {
        let n: usize = row.values().sum();
        assert!(n >= 60, "{project}: {n} scenarios");
        total += n;
    }
    assert!(total >= 1000, "{total} scenarios");
    let mut per_category: BTreeMap<Category, usize> = BTreeMap::new();
    for row in counts.values() {
        for (c, n) in row {
            *per_category.entry(*c).or_default() += n;
        }
    }
    for c in Category::ALL {
        assert!(
            per_category.get(&c).copied().unwrap_or(0) > 0,
            "no {c} scenario"
        );
    }
}

#[test]
fn ids_are_unique_and_shaped() {
    let mut seen = BTreeSet::new();
    for p in suite() {
        for g in &p.scenarios {
            let s = &g.scenario;
            let prefix = format!("{}-{}-", s.project, s.category.name());
            let number =
                s.id.strip_prefix(&prefix)
                    .unwrap_or_else(|| panic!("{}", s.id));
            assert!(
                number.len() == 3 && number.bytes().all(|b| b.is_ascii_digit()),
                "{}",
                s.id
            );
            assert!(seen.insert(s.id.clone()), "duplicate {}", s.id);
            assert!(
                !s.description.contains('\n') && !s.description.is_empty(),
                "{}",
                s.id
            );
        }
    }
}

#[test]
fn drifts_change_the_cloud_and_noise_does_not() {
    for p in suite() {
        for g in &p.scenarios {
            let s = &g.scenario;
            // Calls on nothing a state holds: the long tail and account-level security events.
            let outside = !s.expect.unexplained.is_empty() || !s.expect.security.is_empty();
            match s.category {
                Category::NoiseOnly => {
                    assert!(g.delta.is_empty(), "{}", s.id);
                    assert!(!s.expect.patch, "{}", s.id);
                }
                _ if outside => {
                    assert!(g.delta.is_empty(), "{}", s.id);
                    assert!(!s.expect.patch, "{}", s.id);
                    assert_eq!(
                        s.category == Category::LongTail,
                        !s.expect.unexplained.is_empty(),
                        "{}",
                        s.id
                    );
                }
                _ => {
                    assert!(!g.delta.is_empty(), "{}", s.id);
                    // Only creations outside any workspace leave nothing to patch.
                    let only_unowned = g.delta.removed.is_empty()
                        && g.delta.upserts.len() == s.expect.unowned.len();
                    assert_eq!(s.expect.patch, !only_unowned, "{}", s.id);
                }
            }
            // A deletion no edit makes cleanly is held: the flag names the removed instance.
            let held = !s.expect.flag.is_empty()
                && s.expect
                    .flag
                    .iter()
                    .all(|t| t.attribute.is_empty() && g.delta.removed.contains(&t.address));
            // A parameter created out of band is held: CloudTrail never records its value,
            // and the provider plans no parameter without one.
            let created_held = !s.expect.flag.is_empty()
                && s.expect.flag.iter().all(|t| {
                    t.attribute.is_empty()
                        && t.address.starts_with("aws_ssm_parameter.")
                        && g.delta
                            .upserts
                            .iter()
                            .any(|u| u.address == t.address && u.name.starts_with("unmanaged_"))
                });
            let flags = match s.category {
                Category::PolicyGated => true,
                Category::Security => s.expect.security.is_empty(),
                Category::MultiActor => s.generator == "multi-actor/flag-and-absorb",
                Category::Deletion => held,
                Category::Creation => {
                    assert_eq!(created_held, s.touches == ["aws_ssm_parameter"], "{}", s.id);
                    created_held
                }
                _ => false,
            };
            assert_eq!(flags, !s.expect.flag.is_empty(), "{}", s.id);
            assert!(s.background.is_some(), "{}: no background day", s.id);
            assert!(!s.touches.is_empty(), "{}: touches nothing", s.id);
            match s.category {
                Category::Creation => assert!(
                    g.delta
                        .upserts
                        .iter()
                        .any(|u| u.name.starts_with("unmanaged_")),
                    "{} creates nothing",
                    s.id
                ),
                Category::Deletion => assert!(
                    g.delta
                        .upserts
                        .iter()
                        .all(|u| !u.name.starts_with("unmanaged_")),
                    "{} creates something",
                    s.id
                ),
                _ => {}
            }
        }
    }
}

/// Reads a trail with the ingest file source: the calls, and how many records were skipped.
fn ingest(path: &Path) -> (Vec<Call>, usize) {
    let mut calls = Vec::new();
    let mut skipped = 0;
    read_file(path, None, &mut |item| {
        match item {
            Ok(SourceItem::Call(call)) => calls.push(*call),
            Ok(SourceItem::Skipped(_)) => skipped += 1,
            Ok(SourceItem::Settled(_)) => panic!("read_file settles no record"),
            Err(e) => panic!("{}: {e}", path.display()),
        }
        true
    });
    (calls, skipped)
}

#[test]
fn every_trail_parses_and_holds_an_out_of_band_call_unless_it_is_pure_noise() {
    let out = tempfile::tempdir().expect("temp dir");
    let attributor = Attributor::default();
    for p in suite() {
        generate::write_project(out.path(), p).expect("writes");
        for g in &p.scenarios {
            let s = &g.scenario;
            let trail = out.path().join(&s.project).join(&s.id).join("trail.json");
            let (calls, skipped) = ingest(&trail);
            assert_eq!(skipped, 0, "{}: malformed records", s.id);
            assert_eq!(calls.len(), g.records.len(), "{}", s.id);
            let verdicts: Vec<Verdict> = calls
                .iter()
                .map(|c| attributor.attribute(c).verdict)
                .collect();
            let out_of_band = verdicts
                .iter()
                .filter(|v| **v == Verdict::OutOfBand)
                .count();
            let pure = [
                "noise-only/read-only",
                "noise-only/terraform-only",
                "noise-only/failed-only",
            ];
            match pure.contains(&s.generator.as_str()) {
                true => assert_eq!(out_of_band, 0, "{}: {verdicts:?}", s.id),
                false => assert!(out_of_band > 0, "{}: {verdicts:?}", s.id),
            }
        }
    }
}

#[test]
fn policy_gated_and_automation_owned_targets_name_real_changes() {
    for p in suite() {
        for g in &p.scenarios {
            let changed: BTreeSet<&str> = g
                .delta
                .upserts
                .iter()
                .map(|u| u.address.as_str())
                .chain(g.delta.removed.iter().map(String::as_str))
                .collect();
            for t in g
                .scenario
                .expect
                .flag
                .iter()
                .chain(&g.scenario.expect.ignore)
            {
                assert!(
                    changed.contains(t.address.as_str()),
                    "{}: {t:?}",
                    g.scenario.id
                );
            }
        }
    }
}

#[test]
fn the_committed_scenarios_match_a_fresh_generation() {
    let committed = repo().join("scenarios");
    let out = tempfile::tempdir().expect("temp dir");
    for p in suite() {
        generate::write_project(out.path(), p).expect("writes");
    }
    let fresh = files(out.path());
    let mut stored = files(&committed);
    stored.retain(|path, _| path.components().count() > 1);
    let fresh_names: BTreeSet<&PathBuf> = fresh.keys().collect();
    let stored_names: BTreeSet<&PathBuf> = stored.keys().collect();
    assert_eq!(
        fresh_names, stored_names,
        "scenarios/ is stale: run `retrace-eval generate` and commit"
    );
    for (path, bytes) in &fresh {
        assert!(
            stored[path] == *bytes,
            "scenarios/{} is stale: run `retrace-eval generate`",
            path.display()
        );
    }
}

/// Types in a fixture state with shipped rules that no scenario changes, and why.
const KNOWN_GAPS: [(&str, &str); 4] = [
    ("aws_acm_certificate", "the simulator has no ACM API yet"),
    (
        "aws_cloudfront_distribution",
        "the simulator has no CloudFront API yet",
    ),
    (
        "aws_cloudfront_origin_access_control",
        "the simulator has no CloudFront API yet",
    ),
    (
        "aws_s3_object",
        "the simulator does not model S3 object data events",
    ),
];

#[test]
fn every_type_with_rules_in_a_fixture_state_appears_in_scenarios() {
    let rules =
        knowledge::rules::RuleSet::load_dir(&repo().join("knowledge/rules")).expect("rules load");
    let ruled: BTreeSet<&str> = rules.iter().flat_map(|r| r.resource_types()).collect();
    let covered = generate::coverage::coverage(suite()).types;
    assert!(covered.len() >= 60, "{} types: {covered:?}", covered.len());
    let mut missing = BTreeSet::new();
    for p in suite() {
        for i in &p.base.instances {
            let t = i.resource_type.as_str();
            let gap = KNOWN_GAPS.iter().any(|(g, _)| *g == t);
            if i.mode == reconciler::terraform::state::Mode::Managed
                && ruled.contains(t)
                && !covered.contains(t)
                && !gap
            {
                missing.insert(t.to_owned());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "types with rules never changed in a scenario: {missing:?}"
    );
}

/// Types of the top-100 ranking the rules cover that no fixture project declares yet, with
/// why: the rest of the covered top 100 must each be changed by some scenario.
const NOT_IN_A_FIXTURE: &[(&str, &str)] = &[
    (
        "aws_kms_replica_external_key",
        "no fixture replicates a key with imported material",
    ),
    (
        "aws_ec2_tag",
        "no fixture tags a resource it does not manage",
    ),
    (
        "aws_eks_access_policy_association",
        "the platform project has access entries without policies",
    ),
    (
        "aws_eks_fargate_profile",
        "the platform project runs node groups, not Fargate",
    ),
];

#[test]
fn every_covered_type_of_the_top_100_appears_in_scenarios() {
    let rules = knowledge::rules::RuleSet::bundled().expect("rules load");
    let catalog = knowledge::catalog::Catalog::bundled();
    let schema = knowledge::schema::ProviderSchema::bundled().expect("schema loads");
    let ranking = knowledge::coverage::bundled_ranking().expect("ranking loads");
    let changed = generate::coverage::coverage(suite()).types;
    let missing: Vec<&str> = ranking
        .iter()
        .take(100)
        .map(|r| r.resource_type.as_str())
        .filter(|t| knowledge::coverage::coverage(t, rules, catalog, schema).is_covered())
        .filter(|t| !changed.contains(*t))
        .filter(|t| !NOT_IN_A_FIXTURE.iter().any(|(g, _)| g == t))
        .collect();
    assert!(
        missing.is_empty(),
        "covered, but in no scenario: {missing:?}"
    );
    for (gap, why) in NOT_IN_A_FIXTURE {
        assert!(
            !changed.contains(*gap),
            "{gap} ({why}) appears now: drop it from the list"
        );
    }
}

#[test]
fn every_scenario_names_its_family() {
    for g in suite().iter().flat_map(|p| &p.scenarios) {
        let family = g.scenario.family.as_str();
        assert!(
            evaluation::family::ALL.contains(&family),
            "{}: family {family:?}",
            g.scenario.id
        );
    }
}
