import type { Migration } from '../db/migrations';

/**
 * Migration 23: what lets the deposit allocator survive a database restore (docs/deployment.md,
 * "Key-index marks").
 *
 * `database_lineage`: one row, a random id made when the migration runs. A dump and restore (or a
 * base backup) of this database keeps it; another database (a new installation, a drill's scratch
 * copy made from scratch, a test database) gets its own. The key store keeps its key-index marks
 * per lineage, so one key store serving two databases keeps their marks apart.
 *
 * `key_counters.marked`: the key store's mark as this database last knew it (written after each
 * raise). A key store's mark above it means the database lost that raise: it was restored (or the
 * process died between the two writes, then the check is merely cautious).
 *
 * `key_index_gaps`: windows of deposit key indices a restore lost. At start the key store's mark
 * of an (application, namespace) was above the one the database knew: indices [from_index,
 * to_index), from above the highest user key the database holds up to the mark, may have been
 * handed out after the backup was taken. The counter was moved to to_index (never handed out
 * again); each window's addresses are then looked up on chain once (checked_at), and each one
 * with history is an operator alert. No foreign key: the application itself may be missing from
 * the restored copy (application_known false), its id then handed out again.
 */
export const KEY_INDEX_MARKS_MIGRATION: Migration = {
  version: 23,
  name: 'database lineage and key-index gaps',
  sql: `
CREATE TABLE database_lineage (
  id         SMALLINT PRIMARY KEY CHECK (id = 1),
  lineage    VARCHAR(64) NOT NULL CHECK (lineage ~ '^[A-Za-z0-9_-]{1,64}$'),
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
INSERT INTO database_lineage (id, lineage) VALUES (1, md5(random()::text || random()::text || clock_timestamp()::text || pg_backend_pid()::text));

ALTER TABLE key_counters ADD COLUMN marked BIGINT NOT NULL DEFAULT 0;

CREATE TABLE key_index_gaps (
  id                BIGSERIAL PRIMARY KEY,
  application_id    INTEGER NOT NULL,
  namespace         VARCHAR(64) COLLATE "C" NOT NULL,
  from_index        BIGINT NOT NULL,
  to_index          BIGINT NOT NULL,
  application_known BOOLEAN NOT NULL,
  detected_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  -- set once every address of the window was looked up on every chain that could be asked
  checked_at        TIMESTAMPTZ NULL,
  -- addresses found with on-chain history (each one alerted)
  with_history      INTEGER NULL,
  -- chains of the namespace that could not be asked (no RPC endpoint, no balance reads)
  unchecked_chains  TEXT NULL,
  last_error        TEXT NULL,
  CHECK (0 <= from_index AND from_index < to_index AND to_index <= 2147483648),
  UNIQUE (application_id, namespace, from_index)
);
CREATE INDEX key_index_gaps_unchecked ON key_index_gaps (id) WHERE checked_at IS NULL;
`,
};
