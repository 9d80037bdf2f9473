//! The knowledge store: migrations, shipped-rule sync, learning and demotion, reconciliations,
//! export/import, and consistency after a crash mid-write.

use std::path::Path;

use knowledge::RuleSet;
use knowledge::rules::{Kind, Paths, Risk, Rule, RuleSpec, ValueSource};
use knowledge::store::{
    AgentEvidence, Evidence, NewReconciliation, Outcome, Provenance, RuleFilter, Store, StoreError,
    trace_signature,
};

fn shipped() -> &'static RuleSet {
    RuleSet::bundled().expect("rules load")
}

/// A rule for an API no shipped rule covers (VPC endpoint policy changes).
fn learned_rule(api: &str) -> Rule {
    Rule {
        service: "ec2".into(),
        event_source: "ec2.amazonaws.com".into(),
        id_prefixes: Default::default(),
        spec: RuleSpec {
            api: api.into(),
            variant: None,
            requires: None,
            resource: Some("aws_vpc_endpoint".into()),
            resources: Vec::new(),
            kind: Kind::Update,
            risk: Risk::Medium,
            summary: "changed a VPC endpoint".into(),
            identity: vec![ValueSource {
                from: Default::default(),
                path: Paths::One("vpcEndpointId".into()),
                transform: None,
            }],
            separator: None,
            missing: None,
            sets: Vec::new(),
            blocks: Vec::new(),
            tags: None,
            flags: Vec::new(),
            delete_unless: None,
            delete_when: None,
            hidden: Vec::new(),
            hold: None,
        },
    }
}

fn evidence() -> Evidence {
    Evidence {
        reconciliation_id: 1,
        event_ids: vec!["e-1".into(), "e-2".into()],
        agent: None,
    }
}

fn reconciliation(signature: &str, outcome: Outcome) -> NewReconciliation {
    NewReconciliation {
        signature: signature.into(),
        workspace: "prod/network".into(),
        intents: r#"[{"kind":"update","resource":"aws_instance.web"}]"#.into(),
        patch: "--- a/main.tf\n+++ b/main.tf\n".into(),
        outcome,
        detail: "plan: no changes".into(),
        prompt_tokens: 1200,
        completion_tokens: 80,
    }
}

#[test]
fn migrates_from_empty_and_reopens() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("knowledge.db");
    {
        let mut store = Store::open(&path).expect("opens");
        assert_eq!(store.schema_version().expect("version"), 5);
        store.sync_shipped(shipped()).expect("sync");
    }
    let store = Store::open(&path).expect("reopens");
    assert_eq!(store.schema_version().expect("version"), 5);
    assert_eq!(store.active_rules().expect("rules").len(), shipped().len());
    let conn = rusqlite::Connection::open(&path).expect("raw open");
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .expect("mode");
    assert_eq!(mode, "wal");
}

#[test]
fn a_newer_schema_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("future.db");
    let conn = rusqlite::Connection::open(&path).expect("raw open");
    conn.pragma_update(None, "user_version", 99).expect("set");
    drop(conn);
    let err = Store::open(&path).expect_err("refused");
    assert!(matches!(err, StoreError::TooNew { found: 99, .. }));
    assert!(
        err.to_string().starts_with(&path.display().to_string()),
        "{err}"
    );
}

#[test]
fn sync_shipped_is_idempotent_and_retires_dropped_rules() {
    let mut store = Store::open_in_memory().expect("opens");
    let first = store.sync_shipped(shipped()).expect("sync");
    assert_eq!(first.inserted as usize, shipped().len());
    let stored = store.active_rules().expect("rules");
    for rule in shipped().iter() {
        assert_eq!(
            stored.iter().find(|r| r.id() == rule.id()),
            Some(rule),
            "{}",
            rule.id()
        );
    }
    let again = store.sync_shipped(shipped()).expect("sync");
    assert_eq!((again.inserted, again.updated, again.retired), (0, 0, 0));
    assert_eq!(again.unchanged as usize, shipped().len());

    let fewer = RuleSet::from_rules(shipped().iter().skip(1).cloned()).expect("set");
    let report = store.sync_shipped(&fewer).expect("sync");
    assert_eq!(report.retired, 1);
    assert_eq!(
        store.active_rules().expect("rules").len(),
        shipped().len() - 1
    );
    let report = store.sync_shipped(shipped()).expect("sync");
    assert_eq!(report.updated, 1, "the retired rule comes back");
}

#[test]
fn learned_rule_is_used_then_demoted_after_two_failures_then_reviewed() {
    let mut store = Store::open_in_memory().expect("opens");
    store.sync_shipped(shipped()).expect("sync");
    let id = store
        .propose_learned(learned_rule("ModifyTransitGateway"), evidence())
        .expect("learned");
    assert_eq!(
        store
            .propose_learned(learned_rule("ModifyTransitGateway"), evidence())
            .expect("same rule"),
        id
    );
    let rules = store.active_rules().expect("rules");
    assert!(
        rules
            .find("ec2.amazonaws.com", "ModifyTransitGateway")
            .is_some()
    );

    let record = store.record_outcome(id, false).expect("outcome");
    assert!(record.active && record.consecutive_failures == 1);
    let record = store.record_outcome(id, true).expect("outcome");
    assert_eq!((record.successes, record.consecutive_failures), (1, 0));
    store.record_outcome(id, false).expect("outcome");
    let record = store.record_outcome(id, false).expect("outcome");
    assert!(!record.active, "two failures in a row demote");
    assert_eq!(record.failures, 3);
    let rules = store.active_rules().expect("rules");
    assert!(
        rules
            .find("ec2.amazonaws.com", "ModifyTransitGateway")
            .is_none()
    );

    let record = store.review(id).expect("review");
    assert_eq!(record.provenance, Provenance::Reviewed);
    assert!(record.active && record.consecutive_failures == 0);
    assert_eq!(record.evidence, Some(evidence()));
    assert!(
        store
            .active_rules()
            .expect("rules")
            .find("ec2.amazonaws.com", "ModifyTransitGateway")
            .is_some()
    );
    let err = store.review(id).expect_err("only learned rules");
    assert!(
        err.to_string().contains("is reviewed, not learned"),
        "{err}"
    );
}

#[test]
fn shipped_rules_are_not_demoted_and_win_over_learned_ones() {
    let mut store = Store::open_in_memory().expect("opens");
    store.sync_shipped(shipped()).expect("sync");
    let mut rival = learned_rule("ModifyInstanceAttribute");
    rival.spec.summary = "a learned rival".into();
    store.propose_learned(rival, evidence()).expect("learned");
    let rules = store.active_rules().expect("rules");
    let used = rules
        .find("ec2.amazonaws.com", "ModifyInstanceAttribute")
        .expect("rule");
    assert_eq!(used.spec.summary, "changed an instance attribute");

    let shipped_id = store
        .list(&RuleFilter {
            provenance: Some(Provenance::Shipped),
            service: Some("ec2".into()),
            active: None,
        })
        .expect("list")[0]
        .id;
    for _ in 0..3 {
        store.record_outcome(shipped_id, false).expect("outcome");
    }
    assert!(store.show(shipped_id).expect("show").active);
}

#[test]
fn demotion_threshold_is_configurable() {
    let mut store = Store::open_in_memory().expect("opens").with_demote_after(3);
    let id = store
        .propose_learned(learned_rule("ModifyTransitGateway"), evidence())
        .expect("learned");
    store.record_outcome(id, false).expect("outcome");
    assert!(store.record_outcome(id, false).expect("outcome").active);
    assert!(!store.record_outcome(id, false).expect("outcome").active);
}

#[test]
fn invalid_learned_rules_and_unknown_ids_are_errors() {
    let mut store = Store::open_in_memory().expect("opens");
    let mut bad = learned_rule("ModifyTransitGateway");
    bad.spec.kind = Kind::AddBlock;
    let err = store.propose_learned(bad, evidence()).expect_err("invalid");
    assert!(
        err.to_string()
            .starts_with(":memory:: learned rule ec2:ModifyTransitGateway: a [rule.block] table"),
        "{err}"
    );
    let err = store.record_outcome(42, true).expect_err("unknown");
    assert_eq!(err.to_string(), ":memory:: no rule with id 42");
    assert!(matches!(store.show(42), Err(StoreError::NotFound { .. })));
}

#[test]
fn reconciliations_are_found_by_signature() {
    let mut store = Store::open_in_memory().expect("opens");
    let calls = [
        ("ec2.amazonaws.com", "ModifyInstanceAttribute", "i-1"),
        ("ec2.amazonaws.com", "CreateTags", "i-1"),
    ];
    let signature = trace_signature(calls);
    let reversed = trace_signature([calls[1], calls[0], calls[1]]);
    assert_eq!(signature, reversed, "order and repeats do not matter");
    assert_ne!(signature, trace_signature([calls[0]]));
    assert_eq!(signature.len(), 64);

    let failed = store
        .record_reconciliation(&reconciliation(&signature, Outcome::Failed))
        .expect("record");
    let passed = store
        .record_reconciliation(&reconciliation(&signature, Outcome::Passed))
        .expect("record");
    store
        .record_reconciliation(&reconciliation("other", Outcome::Flagged))
        .expect("record");
    let found = store.find_by_signature(&signature).expect("find");
    assert_eq!(
        found.iter().map(|r| r.id).collect::<Vec<_>>(),
        vec![passed, failed]
    );
    assert_eq!(found[0].data.outcome, Outcome::Passed);
    assert_eq!(
        store.reconciliation(failed).expect("one").data.workspace,
        "prod/network"
    );

    let stats = store.stats().expect("stats");
    assert_eq!(stats.reconciliations_by_outcome.get("passed"), Some(&1));
    assert_eq!(stats.reconciliations_by_outcome.get("flagged"), Some(&1));
    let kept = store.reconciliation(passed).expect("one").data;
    assert_eq!((kept.prompt_tokens, kept.completion_tokens), (1200, 80));
    assert_eq!((stats.prompt_tokens, stats.completion_tokens), (3600, 240));
}

fn agent_evidence() -> Evidence {
    Evidence {
        agent: Some(AgentEvidence {
            model: "gpt-test".into(),
            prompt_tokens: 2100,
            completion_tokens: 140,
        }),
        ..evidence()
    }
}

#[test]
fn a_rule_the_agent_found_has_its_own_provenance_and_is_demoted_and_reviewed_like_learned_ones() {
    let mut store = Store::open_in_memory().expect("opens");
    store.sync_shipped(shipped()).expect("sync");
    let id = store
        .propose_learned(learned_rule("ModifyTransitGateway"), agent_evidence())
        .expect("stored");
    let record = store.show(id).expect("show");
    assert_eq!(record.provenance, Provenance::Agent);
    assert_eq!(record.evidence, Some(agent_evidence()));
    assert_eq!(
        store
            .stats()
            .expect("stats")
            .rules_by_provenance
            .get("agent"),
        Some(&1)
    );
    store.record_outcome(id, false).expect("outcome");
    assert!(!store.record_outcome(id, false).expect("outcome").active);
    let reviewed = store.review(id).expect("review");
    assert_eq!(reviewed.provenance, Provenance::Reviewed);
    let rejected = store.reject(id).expect("reject");
    assert_eq!(rejected.provenance, Provenance::Agent, "its origin is kept");
    assert!(!rejected.active);
}

/// The version 2 schema as earlier releases wrote it, with one learned rule found by the
/// agent, migrates: the rule becomes `agent`, reconciliations gain zero token counts.
#[test]
fn a_version_2_store_migrates_agent_rules_and_token_columns() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("old.db");
    {
        let mut store = Store::open(&path).expect("opens");
        store
            .propose_learned(learned_rule("ModifyTransitGateway"), agent_evidence())
            .expect("stored");
        store
            .propose_learned(learned_rule("ModifyVpcEndpoint"), evidence())
            .expect("stored");
        store
            .record_reconciliation(&reconciliation("sig", Outcome::Passed))
            .expect("record");
    }
    let conn = rusqlite::Connection::open(&path).expect("raw open");
    conn.execute_batch(
        "UPDATE rules SET provenance = 'learned';
         ALTER TABLE reconciliations DROP COLUMN prompt_tokens;
         ALTER TABLE reconciliations DROP COLUMN completion_tokens;
         PRAGMA user_version = 2;",
    )
    .expect("back to version 2");
    drop(conn);
    let store = Store::open(&path).expect("migrates");
    assert_eq!(store.schema_version().expect("version"), 5);
    let stats = store.stats().expect("stats");
    assert_eq!(stats.rules_by_provenance.get("agent"), Some(&1));
    assert_eq!(stats.rules_by_provenance.get("learned"), Some(&1));
    assert_eq!((stats.prompt_tokens, stats.completion_tokens), (0, 0));
    assert_eq!(store.find_by_signature("sig").expect("find").len(), 1);
}

#[test]
fn stats_count_by_provenance_and_service() {
    let mut store = Store::open_in_memory().expect("opens");
    store.sync_shipped(shipped()).expect("sync");
    let id = store
        .propose_learned(learned_rule("ModifyTransitGateway"), evidence())
        .expect("learned");
    store.record_outcome(id, true).expect("outcome");
    store.record_outcome(id, true).expect("outcome");
    store.record_outcome(id, true).expect("outcome");
    store.record_outcome(id, false).expect("outcome");
    let stats = store.stats().expect("stats");
    assert_eq!(
        stats.rules_by_provenance.get("shipped"),
        Some(&(shipped().len() as u64))
    );
    assert_eq!(stats.rules_by_provenance.get("learned"), Some(&1));
    let ec2 = shipped().iter().filter(|r| r.service == "ec2").count() as u64;
    assert_eq!(stats.rules_by_service.get("ec2"), Some(&(ec2 + 1)));
    assert_eq!(stats.rule_success_rate, Some(0.75));
    assert_eq!(stats.inactive_rules, 0);
}

#[test]
fn export_then_import_round_trips_and_is_idempotent() {
    let mut source = Store::open_in_memory().expect("opens");
    source.sync_shipped(shipped()).expect("sync");
    let learned = source
        .propose_learned(learned_rule("ModifyTransitGateway"), evidence())
        .expect("learned");
    let reviewed = source
        .propose_learned(
            learned_rule("ModifyTransitGatewayServiceConfiguration"),
            evidence(),
        )
        .expect("learned");
    source.review(reviewed).expect("review");
    source.record_outcome(learned, false).expect("outcome");
    source
        .record_reconciliation(&reconciliation("sig", Outcome::Passed))
        .expect("record");
    let mut document = Vec::new();
    source.export(&mut document, true).expect("export");

    let mut target = Store::open_in_memory().expect("opens");
    let report = target.import(document.as_slice()).expect("import");
    assert_eq!((report.rules_added, report.reconciliations_added), (2, 1));
    let again = target.import(document.as_slice()).expect("import again");
    assert_eq!((again.rules_added, again.rules_skipped), (0, 2));
    assert_eq!(
        (again.reconciliations_added, again.reconciliations_skipped),
        (0, 1)
    );

    let strip = |store: &Store| {
        store
            .list(&RuleFilter::default())
            .expect("list")
            .into_iter()
            .filter(|r| r.provenance != Provenance::Shipped)
            .map(|mut r| {
                r.id = 0;
                r
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&source), strip(&target));
    let moved = target.find_by_signature("sig").expect("find");
    assert_eq!(moved.len(), 1);
    assert_eq!(moved[0].data, reconciliation("sig", Outcome::Passed));
    assert_eq!(
        moved[0].created_at,
        source.find_by_signature("sig").expect("find")[0].created_at
    );
}

#[test]
fn bad_import_names_the_entry_and_writes_nothing() {
    let mut source = Store::open_in_memory().expect("opens");
    source
        .propose_learned(learned_rule("ModifyTransitGateway"), evidence())
        .expect("learned");
    source
        .propose_learned(learned_rule("DeleteVpcEndpoints"), evidence())
        .expect("learned");
    let mut document = Vec::new();
    source.export(&mut document, false).expect("export");
    let mut json: serde_json::Value = serde_json::from_slice(&document).expect("json");

    let mut bad_kind = json.clone();
    bad_kind["rules"][1]["rule"]["spec"]["kind"] = "zap".into();
    let mut target = Store::open_in_memory().expect("opens");
    let err = target
        .import(bad_kind.to_string().as_bytes())
        .expect_err("rejected");
    assert!(
        err.to_string().contains("import: rules[1].rule.spec.kind:"),
        "{err}"
    );

    // Valid JSON, but the second rule breaks a rule invariant: the first must not be written.
    json["rules"][1]["rule"]["spec"]["kind"] = "add-block".into();
    let err = target
        .import(json.to_string().as_bytes())
        .expect_err("rejected");
    assert!(
        err.to_string()
            .contains("import: rules[1] (ec2:DeleteVpcEndpoints): a [rule.block] table"),
        "{err}"
    );
    assert!(
        target
            .list(&RuleFilter::default())
            .expect("list")
            .is_empty()
    );

    json["rules"][1]["provenance"] = "shipped".into();
    json["rules"][1]["rule"]["spec"]["kind"] = "update".into();
    let err = target
        .import(json.to_string().as_bytes())
        .expect_err("rejected");
    assert!(
        err.to_string()
            .contains("shipped rules come from the rule files"),
        "{err}"
    );

    let err = target
        .import(&b"{\"format\": \"other\", \"version\": 1, \"rules\": []}"[..])
        .expect_err("rejected");
    assert!(
        err.to_string()
            .contains("import: document: format \"other\""),
        "{err}"
    );
}

/// Run as a child process by `a_crash_mid_write_leaves_the_store_consistent`: starts writing
/// to the store and dies before committing.
#[test]
fn crash_child() {
    let Some(path) = std::env::var_os("RETRACE_STORE_CRASH") else {
        return;
    };
    let mut conn = rusqlite::Connection::open(Path::new(&path)).expect("open");
    let tx = conn.transaction().expect("begin");
    tx.execute(
        "INSERT INTO reconciliations (fingerprint, signature, workspace, intents, patch,
         outcome, detail, created_at) VALUES ('f', 's', 'w', '[]', '', 'passed', '', 'now')",
        [],
    )
    .expect("insert");
    tx.execute("UPDATE rules SET successes = successes + 100", [])
        .expect("update");
    std::process::abort();
}

#[test]
fn a_crash_mid_write_leaves_the_store_consistent() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("knowledge.db");
    {
        let mut store = Store::open(&path).expect("opens");
        store.sync_shipped(shipped()).expect("sync");
        store
            .record_reconciliation(&reconciliation("sig", Outcome::Passed))
            .expect("record");
    }
    let status = std::process::Command::new(std::env::current_exe().expect("test binary"))
        // The test's name inside the one integration test binary (`tests/it/store.rs`).
        .args([
            "--exact",
            "store::crash_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("RETRACE_STORE_CRASH", &path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("child runs");
    assert!(!status.success(), "the child aborts mid-transaction");

    let mut store = Store::open(&path).expect("reopens after the crash");
    assert_eq!(store.find_by_signature("s").expect("find").len(), 0);
    assert_eq!(store.find_by_signature("sig").expect("find").len(), 1);
    assert_eq!(store.stats().expect("stats").rule_success_rate, None);
    let conn = rusqlite::Connection::open(&path).expect("raw open");
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("check");
    assert_eq!(check, "ok");
    store
        .record_reconciliation(&reconciliation("after", Outcome::Passed))
        .expect("still writable");
}

#[test]
fn a_dropped_transaction_writes_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("knowledge.db");
    drop(Store::open(&path).expect("creates"));
    {
        let mut conn = rusqlite::Connection::open(&path).expect("raw open");
        let tx = conn.transaction().expect("begin");
        tx.execute(
            "INSERT INTO reconciliations (fingerprint, signature, workspace, intents, patch,
             outcome, detail, created_at) VALUES ('f', 's', 'w', '[]', '', 'passed', '', 'now')",
            [],
        )
        .expect("insert");
        // Dropped without commit: rolled back.
    }
    let store = Store::open(&path).expect("reopens");
    assert!(store.find_by_signature("s").expect("find").is_empty());
}

#[test]
fn an_unopenable_path_is_named() {
    let err = Store::open(Path::new("/nonexistent-dir/knowledge.db")).expect_err("fails");
    assert!(
        err.to_string()
            .starts_with("/nonexistent-dir/knowledge.db: cannot open"),
        "{err}"
    );
}

#[test]
fn a_file_that_is_not_a_database_is_named_in_plain_words() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("kb.sqlite");
    std::fs::write(
        &path,
        "not a database, just text that is long enough to look like a page",
    )
    .expect("write");
    let error = match Store::open(&path) {
        Ok(_) => panic!("a text file opened as a store"),
        Err(error) => error.to_string(),
    };
    assert!(error.starts_with(&path.display().to_string()), "{error}");
    assert!(error.contains("not a retrace knowledge base"), "{error}");
}

#[test]
fn a_rule_learned_for_an_api_supersedes_the_learned_one_before_it() {
    let mut store = Store::open_in_memory().expect("opens");
    let first = store
        .propose_learned(learned_rule("ModifyTransitGateway"), evidence())
        .expect("stored");
    let mut wider = learned_rule("ModifyTransitGateway");
    wider.spec.summary = "changed a transit gateway's options".into();
    let second = store
        .propose_learned(wider.clone(), agent_evidence())
        .expect("stored");
    assert_ne!(first, second);
    assert!(!store.show(first).expect("show").active, "superseded");
    let rules = store.active_rules().expect("rules");
    let used = rules
        .find("ec2.amazonaws.com", "ModifyTransitGateway")
        .expect("a rule");
    assert_eq!(used, &wider);
    let other = store
        .propose_learned(learned_rule("ModifyVpcEndpoint"), evidence())
        .expect("stored");
    assert!(
        store.show(second).expect("show").active,
        "another API leaves it be"
    );
    assert!(store.show(other).expect("show").active);
}
