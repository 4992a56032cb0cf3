import type { Migration } from '../db/migrations';

/**
 * Migration 25: senders the chain check found the chain ahead of (docs/transfers.md, "The chain
 * check before signing"). A row is a hold: while `released_at` is null nothing new is signed for
 * (chain, address), across restarts, until an operator's recovery releases it
 * (transfers/sender-holds.ts: releaseSender). At most one open hold per sender; released ones stay
 * as the record of what was found and accepted (their evidence counts as known to later checks).
 */
export const SENDER_HOLDS_MIGRATION: Migration = {
  version: 25,
  name: 'transfers: senders held because the chain holds transactions the database does not know',
  sql: `
CREATE TABLE sender_holds (
  id           BIGSERIAL PRIMARY KEY,
  chain_id     INTEGER NOT NULL REFERENCES chains(id),
  address      VARCHAR(128) COLLATE "C" NOT NULL,
  -- the adapter's sentence and its typed evidence (sequence numbers, spent outputs, unknown transactions)
  summary      TEXT NOT NULL,
  evidence     JSONB NOT NULL,
  alert_id     BIGINT NULL REFERENCES operator_alerts(id),
  held_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
  released_at  TIMESTAMPTZ NULL,
  released_by  VARCHAR(128) NULL,
  release_note TEXT NULL
);
CREATE UNIQUE INDEX sender_holds_open ON sender_holds (chain_id, address) WHERE released_at IS NULL;
CREATE INDEX sender_holds_released ON sender_holds (chain_id, address) WHERE released_at IS NOT NULL;
`,
};
