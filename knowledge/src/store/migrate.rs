//! Versioned schema migrations, tracked in `PRAGMA user_version`; each runs in a transaction.

use rusqlite::Connection;

/// The migrations, in order; migration `i` brings the schema to version `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: rules with provenance and counters; reconciliations.
    "CREATE TABLE rules (
        id INTEGER PRIMARY KEY,
        rule_id TEXT NOT NULL,
        service TEXT NOT NULL,
        event_source TEXT NOT NULL,
        api TEXT NOT NULL,
        provenance TEXT NOT NULL CHECK (provenance IN ('shipped', 'learned', 'reviewed')),
        body TEXT NOT NULL,
        hash TEXT NOT NULL,
        successes INTEGER NOT NULL DEFAULT 0,
        failures INTEGER NOT NULL DEFAULT 0,
        consecutive_failures INTEGER NOT NULL DEFAULT 0,
        active INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
        evidence TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE UNIQUE INDEX rules_shipped_api ON rules (event_source, api) WHERE provenance = 'shipped';
    CREATE UNIQUE INDEX rules_learned_hash ON rules (hash) WHERE provenance <> 'shipped';
    CREATE TABLE reconciliations (
        id INTEGER PRIMARY KEY,
        fingerprint TEXT NOT NULL UNIQUE,
        signature TEXT NOT NULL,
        workspace TEXT NOT NULL,
        intents TEXT NOT NULL,
        patch TEXT NOT NULL,
        outcome TEXT NOT NULL CHECK (outcome IN ('passed', 'failed', 'flagged')),
        detail TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX reconciliations_signature ON reconciliations (signature);",
    // 2: nightly runs: each workspace's watermark, the pull requests opened, and what
    // reviewers did with each rule's changes.
    "CREATE TABLE watermarks (
        workspace TEXT PRIMARY KEY,
        event_time TEXT NOT NULL,
        event_ids TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE TABLE reviews (
        id INTEGER PRIMARY KEY,
        workspace TEXT NOT NULL,
        forge TEXT NOT NULL,
        repository TEXT NOT NULL,
        number INTEGER NOT NULL,
        url TEXT NOT NULL,
        branch TEXT NOT NULL,
        head TEXT NOT NULL,
        lines TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('open', 'merged', 'closed')),
        obsolete_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (forge, repository, number)
    );
    CREATE TABLE rule_reviews (
        rule TEXT PRIMARY KEY,
        merged INTEGER NOT NULL DEFAULT 0,
        rejected INTEGER NOT NULL DEFAULT 0,
        corrected INTEGER NOT NULL DEFAULT 0,
        updated_at TEXT NOT NULL
    );",
    // 3: rules a language-model agent found have their own provenance, and each
    // reconciliation keeps the tokens its agent spent.
    "CREATE TABLE rules_v3 (
        id INTEGER PRIMARY KEY,
        rule_id TEXT NOT NULL,
        service TEXT NOT NULL,
        event_source TEXT NOT NULL,
        api TEXT NOT NULL,
        provenance TEXT NOT NULL CHECK (provenance IN ('shipped', 'learned', 'agent', 'reviewed')),
        body TEXT NOT NULL,
        hash TEXT NOT NULL,
        successes INTEGER NOT NULL DEFAULT 0,
        failures INTEGER NOT NULL DEFAULT 0,
        consecutive_failures INTEGER NOT NULL DEFAULT 0,
        active INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
        evidence TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    INSERT INTO rules_v3 SELECT * FROM rules;
    DROP TABLE rules;
    ALTER TABLE rules_v3 RENAME TO rules;
    UPDATE rules SET provenance = 'agent'
        WHERE provenance = 'learned' AND json_extract(evidence, '$.agent') IS NOT NULL;
    CREATE UNIQUE INDEX rules_shipped_api ON rules (event_source, api) WHERE provenance = 'shipped';
    CREATE UNIQUE INDEX rules_learned_hash ON rules (hash) WHERE provenance <> 'shipped';
    ALTER TABLE reconciliations ADD COLUMN prompt_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE reconciliations ADD COLUMN completion_tokens INTEGER NOT NULL DEFAULT 0;",
    // 4: shipped rules keyed by id: two services may share an event source and event names
    // (API Gateway's REST and HTTP APIs), each rule reading the calls it `requires`.
    "DROP INDEX rules_shipped_api;
    CREATE UNIQUE INDEX rules_shipped_id ON rules (event_source, rule_id) WHERE provenance = 'shipped';",
    // 5: nightly requests as a state machine: a request retrace itself called obsolete and a
    // person then closed is `withdrawn` (no rejection), one the forge no longer knows is
    // `gone`; each workspace's branch keeps what it holds (the ledger the description is
    // rebuilt from); changes a reviewer rejected are remembered by fingerprint.
    "CREATE TABLE reviews_v5 (
        id INTEGER PRIMARY KEY,
        workspace TEXT NOT NULL,
        forge TEXT NOT NULL,
        repository TEXT NOT NULL,
        number INTEGER NOT NULL,
        url TEXT NOT NULL,
        branch TEXT NOT NULL,
        head TEXT NOT NULL,
        lines TEXT NOT NULL,
        state TEXT NOT NULL
            CHECK (state IN ('open', 'merged', 'closed', 'withdrawn', 'gone')),
        obsolete_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (forge, repository, number)
    );
    INSERT INTO reviews_v5 SELECT * FROM reviews;
    DROP TABLE reviews;
    ALTER TABLE reviews_v5 RENAME TO reviews;
    CREATE TABLE IF NOT EXISTS ledgers (
        workspace TEXT PRIMARY KEY,
        ledger TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS rejections (
        workspace TEXT NOT NULL,
        resource TEXT NOT NULL,
        attribute TEXT NOT NULL,
        value TEXT NOT NULL,
        number INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (workspace, resource, attribute, value)
    );",
];

/// The schema version this build writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// The database's schema version.
pub fn version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
}

/// Runs the migrations the database has not had, each in its own transaction together with
/// the version bump, so a crash leaves the database at one version or the next.
pub fn run(conn: &mut Connection, from: i64) -> rusqlite::Result<()> {
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(from.max(0) as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", index as i64 + 1)?;
        tx.commit()?;
    }
    Ok(())
}
