import type { Migration } from '../db/migrations';

/**
 * Migration 22: which master key new secrets are sealed with (docs/deployment.md, "Rotating the
 * master key"). One row. `sealing_key_id` is null until the first rotation: every process then
 * seals with its WCS_MASTER_KEY. `wcs secrets rotate-master-key` sets it to the id of
 * WCS_MASTER_KEY_NEXT before it re-seals anything; from that commit on, every process that holds
 * that key seals with it, and one that does not refuses to seal (it would write a value the new
 * key cannot open). A sealing transaction reads the row FOR SHARE, so the command's switch waits
 * for those in flight: whatever they sealed under the old key is committed, and found, before the
 * command starts re-sealing.
 */
export const MASTER_KEY_STATE_MIGRATION: Migration = {
  version: 22,
  name: 'master key rotation state',
  sql: `
CREATE TABLE master_key_state (
  id                   SMALLINT PRIMARY KEY CHECK (id = 1),
  -- the key id new secrets are sealed with; null: each process's WCS_MASTER_KEY
  sealing_key_id       VARCHAR(16) NULL,
  rotation_started_at  TIMESTAMPTZ NULL,
  -- set when a rotation has re-sealed every secret; null while one runs (or was interrupted)
  rotation_finished_at TIMESTAMPTZ NULL,
  updated_at           TIMESTAMPTZ NOT NULL DEFAULT now()
);
INSERT INTO master_key_state (id) VALUES (1);
`,
};
