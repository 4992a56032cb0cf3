import type { Migration } from '../db/migrations';

/**
 * Reconciliation (docs/reconciliation.md): per chain, every custody (address, token) compared
 * with the node at one fixed point per pass; every difference explained or recorded as a
 * discrepancy with an operator alert.
 *
 * - reconcile_passes: one pass of one chain (the point it read at, what it covered, found).
 * - reconcile_balances: the latest comparison of each custody (address, token): the ledger's
 *   expectation, the node's answer, the difference (on_chain - ledger, signed), the part of it
 *   that is explained and how (explanations: [{ kind, amount, ref }]), the rest unexplained.
 * - reconcile_touches: addresses something happened to since their last comparison (a deposit,
 *   a transfer, an outflow): a pass takes them first; every address is still compared at least
 *   once per full cycle.
 * - reconcile_adjustments: ledger entries no scan records (an operator's funding of a hot wallet,
 *   an opening balance, a discrepancy an operator booked): part of the ledger from then on.
 * - reconcile_discrepancies: an unexplained difference: amount, the point it was found at, the
 *   block it was located to (binary search on historical balances where the node serves them),
 *   what the service knows about it, and how it was settled.
 */
export const RECONCILIATION_MIGRATION: Migration = {
  version: 18,
  name: 'reconciliation: passes, per-address comparisons, touches, ledger adjustments, discrepancies',
  sql: `
CREATE TABLE reconcile_passes (
  id          BIGSERIAL PRIMARY KEY,
  chain_id    INTEGER NOT NULL REFERENCES chains(id),
  trigger     VARCHAR(16) NOT NULL CHECK (trigger IN ('SCHEDULE','MANUAL')),
  -- FULL: every custody address; INCREMENTAL: the touched ones and the next slice of the cycle
  scope       VARCHAR(16) NOT NULL CHECK (scope IN ('FULL','INCREMENTAL')),
  height      BIGINT NULL,
  block_hash  VARCHAR(128) NULL,
  compared    INTEGER NOT NULL DEFAULT 0,
  unexplained INTEGER NOT NULL DEFAULT 0,
  error       TEXT NULL,
  started_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
  finished_at TIMESTAMPTZ NULL
);
CREATE INDEX reconcile_passes_by_chain ON reconcile_passes (chain_id, id);

CREATE TABLE reconcile_balances (
  chain_id         INTEGER NOT NULL REFERENCES chains(id),
  chain_token_id   INTEGER NOT NULL REFERENCES chain_tokens(id),
  address          VARCHAR(128) COLLATE "C" NOT NULL,
  application_id   INTEGER NOT NULL REFERENCES applications(id),
  address_kind     VARCHAR(8) NOT NULL CHECK (address_kind IN ('DEPOSIT','SHARED','HOT','FEE')),
  external_user_id VARCHAR(64) NULL,
  ledger           NUMERIC(78,0) NOT NULL,
  on_chain         NUMERIC(78,0) NOT NULL,
  difference       NUMERIC(78,0) NOT NULL,
  explained        NUMERIC(78,0) NOT NULL DEFAULT 0,
  unexplained      NUMERIC(78,0) NOT NULL DEFAULT 0,
  explanations     JSONB NOT NULL DEFAULT '[]',
  height           BIGINT NOT NULL,
  block_hash       VARCHAR(128) NULL,
  pass_id          BIGINT NULL REFERENCES reconcile_passes(id),
  reconciled_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (chain_id, chain_token_id, address)
);
CREATE INDEX reconcile_balances_by_app ON reconcile_balances (application_id, chain_id, chain_token_id);
CREATE INDEX reconcile_balances_oldest ON reconcile_balances (chain_id, reconciled_at);
CREATE INDEX reconcile_balances_unexplained ON reconcile_balances (chain_id) WHERE unexplained <> 0;

CREATE TABLE reconcile_touches (
  chain_id   INTEGER NOT NULL REFERENCES chains(id),
  address    VARCHAR(128) COLLATE "C" NOT NULL,
  touched_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (chain_id, address)
);

CREATE TABLE reconcile_discrepancies (
  id               BIGSERIAL PRIMARY KEY,
  application_id   INTEGER NOT NULL REFERENCES applications(id),
  chain_id         INTEGER NOT NULL REFERENCES chains(id),
  chain_token_id   INTEGER NOT NULL REFERENCES chain_tokens(id),
  address          VARCHAR(128) COLLATE "C" NOT NULL,
  address_kind     VARCHAR(8) NOT NULL CHECK (address_kind IN ('DEPOSIT','SHARED','HOT','FEE')),
  external_user_id VARCHAR(64) NULL,
  -- signed: positive when the chain holds more than the ledger
  amount           NUMERIC(78,0) NOT NULL CHECK (amount <> 0),
  height           BIGINT NOT NULL,
  block_hash       VARCHAR(128) NULL,
  -- the block the change was located to (null: not located, the node has no history)
  located_height   BIGINT NULL,
  located_hash     VARCHAR(128) NULL,
  -- what the service knows about it (outflow records, transfers in flight, the located block's transactions)
  known            JSONB NOT NULL DEFAULT '{}',
  status           VARCHAR(16) NOT NULL CHECK (status IN ('OPEN','CREDITED','BOOKED','EXPLAINED')),
  resolution       TEXT NULL,
  recharge_id      BIGINT NULL REFERENCES recharges(id),
  alert_id         BIGINT NULL REFERENCES operator_alerts(id),
  created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  resolved_at      TIMESTAMPTZ NULL,
  resolved_by      VARCHAR(128) NULL
);
CREATE INDEX reconcile_discrepancies_open ON reconcile_discrepancies (chain_id, chain_token_id, address) WHERE status = 'OPEN';
CREATE INDEX reconcile_discrepancies_by_app ON reconcile_discrepancies (application_id, id);

CREATE TABLE reconcile_adjustments (
  id               BIGSERIAL PRIMARY KEY,
  application_id   INTEGER NOT NULL REFERENCES applications(id),
  chain_id         INTEGER NOT NULL REFERENCES chains(id),
  chain_token_id   INTEGER NOT NULL REFERENCES chain_tokens(id),
  address          VARCHAR(128) COLLATE "C" NOT NULL,
  amount           NUMERIC(78,0) NOT NULL CHECK (amount <> 0),
  kind             VARCHAR(16) NOT NULL CHECK (kind IN ('OPENING','FUNDING','BOOKED')),
  height           BIGINT NOT NULL,
  discrepancy_id   BIGINT NULL REFERENCES reconcile_discrepancies(id),
  note             TEXT NULL,
  created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  created_by       VARCHAR(128) NULL
);
CREATE INDEX reconcile_adjustments_by_address ON reconcile_adjustments (chain_id, chain_token_id, address);
`,
};

/**
 * Migration 19 (docs/reconciliation.md): what the passes need beyond migration 18's records.
 *
 * - reconcile_chains: one row per chain, the lease that lets one process at a time run its passes.
 * - reconcile_balances.agreed_height: the last read point at which the address and token had no
 *   unexplained difference (where a later discrepancy's binary search starts).
 * - reconcile_balances.suspect_height: nodes that answer only at their head: the read point an
 *   unexplained difference was first seen at; it becomes a discrepancy only when a later pass,
 *   after the deposit scan passed that point, still sees it.
 * - reconcile_adjustments: kind OUTFLOW_FEE (the native fee an unexpected outflow's transaction
 *   took from the custody address, read from the node) and `ref` (the outflow's transaction), one
 *   per (address, token, kind, ref).
 * - reconcile_discrepancies.outflow_id: the custody outflow (TRANSFER) an EXPLAINED discrepancy
 *   records, one per outflow; at most one OPEN discrepancy per (chain, token, address).
 * - ignored_deposits: transfers to deposit addresses the scan saw and did not credit (below the
 *   token's minimum): the chain holds them, the ledger does not; they explain that difference.
 */
export const RECONCILIATION_PASSES_MIGRATION: Migration = {
  version: 19,
  name: 'reconciliation: chain leases, agreed and suspect heights, outflow fees, ignored deposits',
  sql: `
CREATE TABLE reconcile_chains (
  chain_id    INTEGER PRIMARY KEY REFERENCES chains(id),
  lease_owner VARCHAR(128) NULL,
  lease_until TIMESTAMPTZ NULL
);

ALTER TABLE reconcile_balances ADD COLUMN agreed_height BIGINT NULL;
ALTER TABLE reconcile_balances ADD COLUMN suspect_height BIGINT NULL;

ALTER TABLE reconcile_adjustments ADD COLUMN ref VARCHAR(160) NULL;
ALTER TABLE reconcile_adjustments DROP CONSTRAINT reconcile_adjustments_kind_check;
ALTER TABLE reconcile_adjustments ADD CONSTRAINT reconcile_adjustments_kind_check CHECK (kind IN ('OPENING','FUNDING','BOOKED','OUTFLOW_FEE'));
CREATE UNIQUE INDEX reconcile_adjustments_ref ON reconcile_adjustments (chain_id, chain_token_id, address, kind, ref) WHERE ref IS NOT NULL;

ALTER TABLE reconcile_discrepancies ADD COLUMN outflow_id BIGINT NULL REFERENCES custody_outflows(id);
CREATE UNIQUE INDEX reconcile_discrepancies_outflow ON reconcile_discrepancies (outflow_id) WHERE outflow_id IS NOT NULL;
CREATE UNIQUE INDEX reconcile_discrepancies_one_open ON reconcile_discrepancies (chain_id, chain_token_id, address) WHERE status = 'OPEN';

CREATE TABLE ignored_deposits (
  chain_id       INTEGER NOT NULL REFERENCES chains(id),
  chain_token_id INTEGER NOT NULL REFERENCES chain_tokens(id),
  address        VARCHAR(128) COLLATE "C" NOT NULL,
  tx_hash        VARCHAR(128) NOT NULL,
  position       INTEGER NOT NULL,
  amount         NUMERIC(78,0) NOT NULL CHECK (amount > 0),
  block_height   BIGINT NOT NULL,
  block_hash     VARCHAR(128) NOT NULL,
  reason         VARCHAR(32) NOT NULL CHECK (reason IN ('BELOW_MINIMUM')),
  created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (chain_id, tx_hash, position)
);
CREATE INDEX ignored_deposits_by_address ON ignored_deposits (chain_id, address);
`,
};

/**
 * Migration 20 (docs/reconciliation.md, "Per chain"): native coin a service transaction moved that
 * no transfer record holds (Solana: the rent of a token account the transaction created, paid by
 * its fee payer, or closed, refunded to it), read from the node once the transaction is final.
 *
 * - reconcile_adjustments: kind ACCOUNT_RENT (the part of the fee payer's lamport change beyond
 *   the transfer's recorded fee; ref: the transaction).
 * - reconcile_native_reads: every (transaction, address) read, also those whose change was the
 *   recorded one exactly (no adjustment), so each is read once.
 */
export const RECONCILIATION_NATIVE_READS_MIGRATION: Migration = {
  version: 20,
  name: 'reconciliation: account rent moved by service transactions (ACCOUNT_RENT), native reads',
  sql: `
ALTER TABLE reconcile_adjustments DROP CONSTRAINT reconcile_adjustments_kind_check;
ALTER TABLE reconcile_adjustments ADD CONSTRAINT reconcile_adjustments_kind_check CHECK (kind IN ('OPENING','FUNDING','BOOKED','OUTFLOW_FEE','ACCOUNT_RENT'));

CREATE TABLE reconcile_native_reads (
  chain_id     INTEGER NOT NULL REFERENCES chains(id),
  tx_hash      VARCHAR(128) NOT NULL,
  address      VARCHAR(128) COLLATE "C" NOT NULL,
  transfer_id  BIGINT NOT NULL REFERENCES transfers(id),
  change       NUMERIC(78,0) NOT NULL,
  read_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (chain_id, tx_hash, address)
);
`,
};

/**
 * Migration 21: a pass rewrites every comparison it makes (reconcile_balances: height, pass,
 * time, amounts). Those rewrites stay on their heap page, without an entry in every index per row,
 * when no indexed column changes and the page has room:
 *
 * - reconcile_balances_oldest (chain_id, reconciled_at) is dropped: reconciled_at changes at every
 *   comparison, and every reader of it aggregates a chain's rows anyway (the cycle's oldest per
 *   address, the status's oldest per chain, the metrics).
 * - reconcile_balances keeps half of each page free (fillfactor 50) for the next pass's versions.
 * - reconcile_balances.pass_id no longer has a foreign key: its check ran once per rewritten row
 *   (a third of a pass's write time). The pass that writes a comparison is the one that made it:
 *   its row exists before (inserted when it starts) and is updated in the same transaction, and
 *   passes are never deleted.
 */
export const RECONCILIATION_REWRITES_MIGRATION: Migration = {
  version: 21,
  name: 'reconciliation: comparisons rewritten in place (no index on reconciled_at, fillfactor 50, no foreign key on pass_id)',
  sql: `
DROP INDEX reconcile_balances_oldest;
ALTER TABLE reconcile_balances SET (fillfactor = 50);
ALTER TABLE reconcile_balances DROP CONSTRAINT reconcile_balances_pass_id_fkey;
`,
};
