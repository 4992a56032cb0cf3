import type { Migration } from '../db/migrations';

/**
 * Migration 14: chain event subscriptions and their events, unexpected custody outflows
 * (TRANSFER), and the opt-in RECHARGE_CREDITED callback (docs/chain-events.md).
 */
export const CHAIN_EVENTS_MIGRATION: Migration = {
  version: 14,
  name: 'chain events: subscriptions, monitored addresses, chain events, custody outflows, recharge_credited',
  sql: `
-- a merchant's subscription to transfers of addresses on one chain (any address, not only ours)
CREATE TABLE chain_subscriptions (
  id                  BIGSERIAL PRIMARY KEY,
  application_id      INTEGER NOT NULL REFERENCES applications(id),
  chain_id            INTEGER NOT NULL REFERENCES chains(id),
  -- the merchant's reference: create is idempotent on (application, reference) among live subscriptions
  app_subscription_no VARCHAR(64) COLLATE "C" NOT NULL,
  direction           VARCHAR(8) NOT NULL CHECK (direction IN ('IN','OUT','BOTH')),
  -- token filter: NULL for every token of the chain's catalogue
  chain_token_ids     INTEGER[] NULL,
  -- the least amount reported, in token units (a decimal, compared per token at its decimals)
  min_amount          NUMERIC(78,18) NULL CHECK (min_amount > 0),
  status              VARCHAR(8) NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE','PAUSED','DELETED')),
  created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
  deleted_at          TIMESTAMPTZ NULL
);
CREATE UNIQUE INDEX chain_subscriptions_ref ON chain_subscriptions (application_id, app_subscription_no) WHERE status <> 'DELETED';
CREATE INDEX chain_subscriptions_by_app ON chain_subscriptions (application_id, id);

CREATE TABLE chain_subscription_addresses (
  subscription_id BIGINT NOT NULL REFERENCES chain_subscriptions(id),
  chain_id        INTEGER NOT NULL REFERENCES chains(id),
  address         VARCHAR(128) COLLATE "C" NOT NULL,
  PRIMARY KEY (subscription_id, address)
);
CREATE INDEX chain_subscription_addresses_by_chain ON chain_subscription_addresses (chain_id);

-- bumped in the transaction of every change to a chain's subscriptions: scanners reload their
-- monitored addresses when it moves (one row read per scan step)
CREATE TABLE chain_monitor_versions (
  chain_id INTEGER PRIMARY KEY REFERENCES chains(id),
  version  BIGINT NOT NULL DEFAULT 0
);

-- one per (subscription, transfer, direction, monitored address); sent once confirmed
CREATE TABLE chain_events (
  id                BIGSERIAL PRIMARY KEY,
  application_id    INTEGER NOT NULL REFERENCES applications(id),
  subscription_id   BIGINT NOT NULL REFERENCES chain_subscriptions(id),
  chain_id          INTEGER NOT NULL REFERENCES chains(id),
  chain_token_id    INTEGER NOT NULL REFERENCES chain_tokens(id),
  direction         VARCHAR(3) NOT NULL CHECK (direction IN ('IN','OUT')),
  monitored_address VARCHAR(128) COLLATE "C" NOT NULL,
  from_address      VARCHAR(128) COLLATE "C" NOT NULL,
  to_address        VARCHAR(128) COLLATE "C" NOT NULL,
  amount            NUMERIC(78,0) NOT NULL CHECK (amount > 0),
  tx_hash           VARCHAR(128) COLLATE "C" NOT NULL,
  position          INTEGER NOT NULL,
  block_height      BIGINT NOT NULL,
  block_hash        VARCHAR(128) NOT NULL,
  address_nature    VARCHAR(8) NOT NULL CHECK (address_nature IN ('EOA','CONTRACT')),
  -- PENDING until the confirmations are reached (then CONFIRMED, with its callback);
  -- DROPPED when a reorg removed its block first (nothing was sent)
  status            VARCHAR(9) NOT NULL CHECK (status IN ('PENDING','CONFIRMED','DROPPED')),
  min_confirmations INTEGER NOT NULL,
  created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
  confirmed_at      TIMESTAMPTZ NULL,
  updated_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE (subscription_id, tx_hash, position, direction, monitored_address)
);
CREATE INDEX chain_events_pending ON chain_events (chain_id, block_height) WHERE status = 'PENDING';
CREATE INDEX chain_events_by_app ON chain_events (application_id, id);

-- an outgoing transfer from one of an application's custody addresses that the service did not sign
CREATE TABLE custody_outflows (
  id               BIGSERIAL PRIMARY KEY,
  application_id   INTEGER NOT NULL REFERENCES applications(id),
  chain_id         INTEGER NOT NULL REFERENCES chains(id),
  chain_token_id   INTEGER NOT NULL REFERENCES chain_tokens(id),
  address_kind     VARCHAR(8) NOT NULL CHECK (address_kind IN ('DEPOSIT','HOT','FEE')),
  from_address     VARCHAR(128) COLLATE "C" NOT NULL,
  external_user_id VARCHAR(64) NULL,
  to_address       VARCHAR(128) COLLATE "C" NOT NULL,
  amount           NUMERIC(78,0) NOT NULL CHECK (amount > 0),
  tx_hash          VARCHAR(128) COLLATE "C" NOT NULL,
  position         INTEGER NOT NULL,
  block_height     BIGINT NOT NULL,
  block_hash       VARCHAR(128) NOT NULL,
  created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE (chain_id, tx_hash, position, from_address)
);
CREATE INDEX custody_outflows_by_app ON custody_outflows (application_id, id);

-- RECHARGE_CREDITED: an application opts in to one recharge_credited callback per deposit
ALTER TABLE applications ADD COLUMN recharge_credited BOOLEAN NOT NULL DEFAULT false;
`,
};
