/** The ledger table; also made again by store/ledger.ts if someone dropped it. */
export const LEDGER_SCHEMA = `
  CREATE TABLE IF NOT EXISTS ledger (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at INTEGER NOT NULL,
    source TEXT NOT NULL,
    host TEXT,
    session TEXT,
    mode TEXT NOT NULL,
    decision TEXT NOT NULL,
    forced INTEGER NOT NULL DEFAULT 0,
    command TEXT,
    checks TEXT NOT NULL DEFAULT '[]',
    receipts TEXT NOT NULL DEFAULT '[]',
    latency_ms INTEGER
  );
  CREATE INDEX IF NOT EXISTS ledger_by_time ON ledger (at);
`;

/**
 * Schema versions, in order; PRAGMA user_version holds how many have been
 * applied. Append only: a released migration is never edited.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE receipts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL UNIQUE,
    check_name TEXT NOT NULL,
    definition TEXT NOT NULL,
    definition_digest TEXT NOT NULL,
    context TEXT NOT NULL,
    context_digest TEXT NOT NULL,
    manifest_digest TEXT NOT NULL,
    input_count INTEGER NOT NULL,
    result TEXT NOT NULL CHECK (result IN ('PASS', 'FAIL')),
    exit_code INTEGER,
    signal TEXT,
    started_at INTEGER NOT NULL,
    finished_at INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    log_path TEXT NOT NULL,
    reuse_eligible INTEGER NOT NULL CHECK (reuse_eligible IN (0, 1)),
    reasons TEXT NOT NULL
  );
  CREATE INDEX receipts_by_check ON receipts (check_name, seq);
  CREATE TRIGGER receipts_are_immutable BEFORE UPDATE ON receipts
    BEGIN SELECT RAISE(ABORT, 'receipts are immutable'); END;
  CREATE TRIGGER receipts_are_kept BEFORE DELETE ON receipts
    BEGIN SELECT RAISE(ABORT, 'receipts are kept'); END;
  CREATE TABLE manifests (
    digest TEXT PRIMARY KEY,
    entries BLOB NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE stat_cache (
    path TEXT PRIMARY KEY,
    identity TEXT NOT NULL,
    digest TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) WITHOUT ROWID;
  `,
  // The key for environment digests moves out of the database (to the user's config dir), so a
  // copied state.db cannot be tested against a dictionary. Receipts are not touched.
  `
  DELETE FROM meta WHERE key = 'env_key';
  `,
  // Receipts say how their evidence was gathered (core/receipt.ts's ReceiptEvidence). Every
  // receipt before this one was declared. A traced receipt's entries sit in manifests too,
  // under their own digest.
  `
  ALTER TABLE receipts ADD COLUMN evidence TEXT NOT NULL DEFAULT '{"mode":"declared","notes":[]}';
  `,
  // The ledger: one row per decision vouch made for an agent or a run (store/ledger.ts,
  // docs/hooks.md "The ledger"). Rows are statistics, never evidence: they are pruned by age and
  // count, unlike receipts, and nothing decides from them.
  LEDGER_SCHEMA,
  // A declared manifest may be stored as its lines (core/manifest.ts entryLine), not as JSON
  // entries: no table changes, but a vouch before this one could not read such a manifest, so it
  // keeps this store aside as a newer one's rather than fail on it.
  `
  SELECT 1;
  `,
  // Manifests move to a table with rowids. In a WITHOUT ROWID table the whole row is the b-tree's
  // key, so every comparison on the way to a digest read that row's entries in full: a store of
  // 400 manifests of 10,000 files took 5 to 50 ms to find one, on every run. SQLite advises rows
  // under a twentieth of a page there (https://www.sqlite.org/withoutrowid.html, section 4). Here
  // the digest's own index finds it, and the entries are read only when asked for.
  `
  CREATE TABLE manifests_by_rowid (
    digest TEXT PRIMARY KEY,
    entries BLOB NOT NULL
  );
  INSERT INTO manifests_by_rowid (digest, entries) SELECT digest, entries FROM manifests;
  DROP TABLE manifests;
  ALTER TABLE manifests_by_rowid RENAME TO manifests;
  `,
];
