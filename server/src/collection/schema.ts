import type { Migration } from '../db/migrations';

/**
 * Collection waits that hold nothing back (docs/collection.md, "Why an address is not planned"):
 * a skip row is either the cost guard's or the threshold's verdict (`holds`: the address is
 * looked at again only on a new deposit, the schedule or its max wait) or a wait the planner
 * looks at again on every pass (a sweep it cannot price, a balance it cannot read, a deposit
 * still pending on a chain whose sweep closes the account). `since` is when the address began
 * waiting for that kind of reason, so a wait that lasts is alerted once (`alerted_at`).
 */
export const COLLECTION_WAITS_MIGRATION: Migration = {
  version: 16,
  name: 'collection: waits beside skips, since when, alerted once',
  sql: `
ALTER TABLE collection_skips ADD COLUMN holds BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE collection_skips ADD COLUMN since TIMESTAMPTZ NOT NULL DEFAULT now();
ALTER TABLE collection_skips ADD COLUMN alerted_at TIMESTAMPTZ NULL;
-- null: not priced (a threshold skip, a wait before pricing)
ALTER TABLE collection_skips ALTER COLUMN fee DROP NOT NULL;
`,
};

/**
 * Stellar trustlines (docs/collection.md, "Stellar trustlines"): a TRUSTLINE transfer opens the
 * hot wallet's trustline to an asset (changeTrust) through the transfer pipeline, at most one open
 * per (chain, hot wallet, token).
 */
export const TRUSTLINE_TRANSFERS_MIGRATION: Migration = {
  version: 17,
  name: 'transfers: TRUSTLINE, one open per hot wallet and token',
  sql: `
ALTER TABLE transfers DROP CONSTRAINT transfers_kind_check;
ALTER TABLE transfers ADD CONSTRAINT transfers_kind_check CHECK (kind IN ('PAYOUT','SWEEP','TOP_UP','COLD_TRANSFER','TRUSTLINE'));
CREATE UNIQUE INDEX transfers_one_open_trustline ON transfers (chain_id, from_address, chain_token_id) WHERE kind = 'TRUSTLINE' AND status NOT IN ('SUCCESS','FAILED');
`,
};
