import type { Migration } from '../db/migrations';

/**
 * Migration 26: delegated sweeps (docs/collection.md, "Delegated sweeps").
 * - collection_policies.sweep_mode: TOPUP (a gas top-up, then the deposit address's own sweep) or
 *   DELEGATED (EIP-7702: the address delegates to the service's forwarder; batches of addresses
 *   swept by one transaction of the fee wallet). collection_items.sweep_mode: the mode its
 *   policy had when the item was planned (a later change never half-switches an item).
 * - transfers: kinds SWEEP_BATCH and DEPLOY, contract calls that move no value of their own
 *   (amount 0 is theirs only).
 * - evm_contracts: the service's contracts per chain (forwarders per collector, the batch
 *   sweeper), with the DEPLOY transfer that deploys each: at most one open deployment per
 *   contract.
 * - delegation_blocks: deposit addresses found delegated to code that is not the service's
 *   forwarder (or holding contract code): their sweeps stop while the block is open.
 */
export const DELEGATED_SWEEPS_MIGRATION: Migration = {
  version: 26,
  name: 'collection: delegated sweeps (EIP-7702), batch and deploy transfers, the service\'s contracts, blocked addresses',
  sql: `
ALTER TABLE collection_policies ADD COLUMN sweep_mode VARCHAR(16) NOT NULL DEFAULT 'TOPUP' CHECK (sweep_mode IN ('TOPUP','DELEGATED'));
ALTER TABLE collection_items ADD COLUMN sweep_mode VARCHAR(16) NOT NULL DEFAULT 'TOPUP' CHECK (sweep_mode IN ('TOPUP','DELEGATED'));
ALTER TABLE transfers DROP CONSTRAINT transfers_kind_check;
ALTER TABLE transfers ADD CONSTRAINT transfers_kind_check CHECK (kind IN ('PAYOUT','SWEEP','TOP_UP','COLD_TRANSFER','TRUSTLINE','SWEEP_BATCH','DEPLOY'));
ALTER TABLE transfers DROP CONSTRAINT transfers_amount_check;
ALTER TABLE transfers ADD CONSTRAINT transfers_amount_check CHECK (amount > 0 OR (amount = 0 AND kind IN ('SWEEP_BATCH','DEPLOY')));
ALTER TABLE transfers DROP CONSTRAINT transfers_sent_amount_check;
ALTER TABLE transfers ADD CONSTRAINT transfers_sent_amount_check CHECK (sent_amount > 0 OR (sent_amount = 0 AND kind IN ('SWEEP_BATCH','DEPLOY')));
CREATE TABLE evm_contracts (
  chain_id     INTEGER NOT NULL REFERENCES chains(id),
  address      VARCHAR(64) COLLATE "C" NOT NULL,
  role         VARCHAR(16) NOT NULL CHECK (role IN ('FORWARDER','BATCH_SWEEPER')),
  -- forwarders: the one address its code sends to
  collector    VARCHAR(64) COLLATE "C" NULL,
  -- the open or last DEPLOY transfer (null: found deployed on chain)
  transfer_id  BIGINT NULL REFERENCES transfers(id),
  deployed_at  TIMESTAMPTZ NULL,
  created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (chain_id, address),
  CHECK ((role = 'FORWARDER') = (collector IS NOT NULL))
);
CREATE TABLE delegation_blocks (
  id             BIGSERIAL PRIMARY KEY,
  application_id INTEGER NOT NULL REFERENCES applications(id),
  chain_id       INTEGER NOT NULL REFERENCES chains(id),
  address        VARCHAR(64) COLLATE "C" NOT NULL,
  -- DELEGATED (to another delegate) or CONTRACT
  found          VARCHAR(16) NOT NULL CHECK (found IN ('DELEGATED','CONTRACT')),
  delegate       VARCHAR(64) NULL,
  alert_id       BIGINT NULL REFERENCES operator_alerts(id),
  found_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  released_at    TIMESTAMPTZ NULL,
  released_by    VARCHAR(128) NULL
);
CREATE UNIQUE INDEX delegation_blocks_open ON delegation_blocks (chain_id, address) WHERE released_at IS NULL;
`,
};
