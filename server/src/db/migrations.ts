import type { Sequelize, Transaction } from 'sequelize';

import { CHAIN_EVENTS_MIGRATION } from '../chain-events/schema';
import { CALLBACK_STORE_MIGRATION } from '../callbacks/schema';
import { COLLECTION_WAITS_MIGRATION, TRUSTLINE_TRANSFERS_MIGRATION } from '../collection/schema';
import { RECONCILIATION_MIGRATION, RECONCILIATION_NATIVE_READS_MIGRATION, RECONCILIATION_PASSES_MIGRATION, RECONCILIATION_REWRITES_MIGRATION } from '../reconciliation/schema';
import { MASTER_KEY_STATE_MIGRATION } from '../secrets/schema';
import { SENDER_HOLDS_MIGRATION } from '../transfers/schema';
import { KEY_INDEX_MARKS_MIGRATION } from '../addresses/schema';
import { DELEGATED_SWEEPS_MIGRATION } from '../collection/delegated-schema';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/**
 * Versioned, append-only migrations. Never edit a released one: add the next version.
 * All amounts are NUMERIC; all ids that merchants see are integers.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'applications, secrets, callbacks, catalogue, nonces',
    sql: `
CREATE TABLE applications (
  id            SERIAL PRIMARY KEY,
  name          VARCHAR(100) NOT NULL,
  environment   VARCHAR(8) NOT NULL CHECK (environment IN ('test','live')),
  api_key       VARCHAR(64) NOT NULL UNIQUE,
  status        VARCHAR(16) NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE','DISABLED')),
  enabled_chains TEXT[] NOT NULL DEFAULT '{}',
  created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE application_secrets (
  id             SERIAL PRIMARY KEY,
  application_id INTEGER NOT NULL REFERENCES applications(id),
  ciphertext     BYTEA NOT NULL,
  iv             BYTEA NOT NULL,
  auth_tag       BYTEA NOT NULL,
  key_id         VARCHAR(32) NOT NULL,
  created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  expires_at     TIMESTAMPTZ NULL
);
CREATE INDEX application_secrets_app ON application_secrets(application_id);

CREATE TABLE application_callbacks (
  application_id INTEGER NOT NULL REFERENCES applications(id),
  biz_type       VARCHAR(16) NOT NULL CHECK (biz_type IN ('RECHARGE','WITHDRAW','COLLECT','TRANSFER','CHAIN_EVENT')),
  url            VARCHAR(2048) NOT NULL,
  updated_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (application_id, biz_type)
);

CREATE TABLE chains (
  id            INTEGER PRIMARY KEY,
  code          VARCHAR(16) NOT NULL,
  name          VARCHAR(64) NOT NULL,
  family        VARCHAR(16) NOT NULL,
  environment   VARCHAR(8) NOT NULL CHECK (environment IN ('test','live')),
  network       VARCHAR(64) NOT NULL,
  curve         VARCHAR(16) NOT NULL,
  addressing    VARCHAR(8) NOT NULL CHECK (addressing IN ('hd','memo')),
  native_symbol VARCHAR(16) NOT NULL,
  decimals      INTEGER NOT NULL CHECK (decimals BETWEEN 0 AND 36),
  confirmations INTEGER NOT NULL CHECK (confirmations >= 0),
  evm_chain_id  BIGINT NULL,
  active        BOOLEAN NOT NULL DEFAULT true,
  updated_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE (code, environment)
);

CREATE TABLE chain_tokens (
  id            INTEGER PRIMARY KEY,
  chain_id      INTEGER NOT NULL REFERENCES chains(id),
  symbol        VARCHAR(16) NOT NULL,
  name          VARCHAR(64) NOT NULL,
  contract      VARCHAR(128) NULL,
  decimals      INTEGER NOT NULL CHECK (decimals BETWEEN 0 AND 36),
  active        BOOLEAN NOT NULL DEFAULT true,
  updated_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX chain_tokens_contract ON chain_tokens(chain_id, COALESCE(contract, ''));

CREATE TABLE api_nonces (
  api_key     VARCHAR(64) NOT NULL,
  nonce       VARCHAR(128) NOT NULL,
  expires_at  TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (api_key, nonce)
);
CREATE INDEX api_nonces_expiry ON api_nonces(expires_at);
`,
  },
  {
    version: 2,
    name: 'chain options, user keys, memo deposit accounts, addresses',
    sql: `
ALTER TABLE chains ADD COLUMN options JSONB NOT NULL DEFAULT '{}';

-- next key index per (application, key namespace, purpose); the row lock serialises allocation
CREATE TABLE key_counters (
  application_id INTEGER NOT NULL REFERENCES applications(id),
  namespace      VARCHAR(64) NOT NULL,
  purpose        VARCHAR(16) NOT NULL,
  next_index     BIGINT NOT NULL,
  PRIMARY KEY (application_id, namespace, purpose)
);

-- HD chains: a user's key in a namespace (all EVM chains share "evm"); an index is used once
CREATE TABLE user_keys (
  id               SERIAL PRIMARY KEY,
  application_id   INTEGER NOT NULL REFERENCES applications(id),
  namespace        VARCHAR(64) NOT NULL,
  external_user_id VARCHAR(64) NOT NULL,
  key_index        BIGINT NOT NULL CHECK (key_index >= 0 AND key_index < 2147483648),
  public_key       BYTEA NOT NULL,
  created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE (application_id, namespace, external_user_id),
  UNIQUE (application_id, namespace, key_index)
);

-- memo chains: the shared deposit address of an application on a chain, and its memo counter
CREATE TABLE deposit_accounts (
  id             SERIAL PRIMARY KEY,
  application_id INTEGER NOT NULL REFERENCES applications(id),
  chain_id       INTEGER NOT NULL REFERENCES chains(id),
  address        VARCHAR(128) NOT NULL,
  key_index      BIGINT NOT NULL,
  public_key     BYTEA NOT NULL,
  created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE (application_id, chain_id)
);
CREATE TABLE memo_counters (
  chain_id   INTEGER NOT NULL REFERENCES chains(id),
  address    VARCHAR(128) NOT NULL,
  next_index NUMERIC(20,0) NOT NULL,
  PRIMARY KEY (chain_id, address)
);

CREATE TABLE addresses (
  id               SERIAL PRIMARY KEY,
  application_id   INTEGER NOT NULL REFERENCES applications(id),
  chain_id         INTEGER NOT NULL REFERENCES chains(id),
  chain_code       VARCHAR(16) NOT NULL,
  external_user_id VARCHAR(64) NOT NULL,
  address          VARCHAR(128) NOT NULL,
  memo             VARCHAR(64) NULL,
  address_type     VARCHAR(16) NOT NULL DEFAULT 'USER',
  status           VARCHAR(16) NOT NULL DEFAULT 'ACTIVE',
  user_key_id      INTEGER NULL REFERENCES user_keys(id),
  deposit_account_id INTEGER NULL REFERENCES deposit_accounts(id),
  created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE (application_id, chain_id, external_user_id),
  CHECK ((user_key_id IS NULL) <> (deposit_account_id IS NULL))
);
-- an HD address belongs to one user; a (shared address, memo) pair to one user
CREATE UNIQUE INDEX addresses_hd_unique ON addresses (chain_id, address) WHERE memo IS NULL;
CREATE UNIQUE INDEX addresses_memo_unique ON addresses (chain_id, address, memo) WHERE memo IS NOT NULL;
CREATE INDEX addresses_by_user ON addresses (application_id, external_user_id);
`,
  },
  {
    version: 3,
    name: 'address and key index shapes for lookups and creates',
    sql: `
-- A prepared lookup by (application, namespace, user) must use the unique index on exactly
-- those columns. With (application, namespace, key_index) also leading with the same two
-- columns, a generic plan made while the table is small (a new database) may pick that one
-- and filter every key of the namespace. The key_index index now leads with key_index.
ALTER TABLE user_keys DROP CONSTRAINT user_keys_application_id_namespace_key_index_key;
CREATE UNIQUE INDEX user_keys_index_unique ON user_keys (key_index, application_id, namespace);
-- addresses: one unique index on (application, user, chain) serves the lookup by
-- (application, chain, user), the conflict target of creates, and list-by-user; the
-- separate listing index was one more index to write on every create.
ALTER TABLE addresses DROP CONSTRAINT addresses_application_id_chain_id_external_user_id_key;
ALTER TABLE addresses ADD CONSTRAINT addresses_app_user_chain_key UNIQUE (application_id, external_user_id, chain_id);
DROP INDEX addresses_by_user;
-- identifiers compare byte-wise (COLLATE "C"): exact, and cheaper in every index than a locale's rules
ALTER TABLE addresses ALTER COLUMN external_user_id TYPE VARCHAR(64) COLLATE "C",
                      ALTER COLUMN address TYPE VARCHAR(128) COLLATE "C",
                      ALTER COLUMN memo TYPE VARCHAR(64) COLLATE "C";
ALTER TABLE user_keys ALTER COLUMN external_user_id TYPE VARCHAR(64) COLLATE "C",
                      ALTER COLUMN namespace TYPE VARCHAR(64) COLLATE "C";
ALTER TABLE deposit_accounts ALTER COLUMN address TYPE VARCHAR(128) COLLATE "C";
ALTER TABLE memo_counters ALTER COLUMN address TYPE VARCHAR(128) COLLATE "C";
ALTER TABLE key_counters ALTER COLUMN namespace TYPE VARCHAR(64) COLLATE "C";
`,
  },
  {
    version: 4,
    name: 'callback outbox: tasks and attempts',
    sql: `
-- A task is written in the transaction of the business change that causes it (outbox).
-- url_source ORDER: the order's own callbackUrl, fixed; APPLICATION: the application's URL
-- for the bizType, looked up again at every attempt ('' while none is configured).
CREATE TABLE callback_tasks (
  id                    BIGSERIAL PRIMARY KEY,
  application_id        INTEGER NOT NULL REFERENCES applications(id),
  biz_type              VARCHAR(16) NOT NULL CHECK (biz_type IN ('RECHARGE','WITHDRAW','COLLECT','TRANSFER','CHAIN_EVENT')),
  biz_id                BIGINT NOT NULL,
  url                   VARCHAR(2048) NOT NULL,
  url_source            VARCHAR(16) NOT NULL CHECK (url_source IN ('ORDER','APPLICATION')),
  body                  BYTEA NOT NULL,
  status                VARCHAR(16) NOT NULL CHECK (status IN ('WAITING','PROCESSING','SUCCESS','FAILED')),
  retry_times           INTEGER NOT NULL DEFAULT 0,
  max_retry_times       INTEGER NOT NULL DEFAULT 10,
  attempts              INTEGER NOT NULL DEFAULT 0,
  next_retry_time       TIMESTAMPTZ NULL,
  due_at                TIMESTAMPTZ NULL,
  lease_owner           VARCHAR(64) NULL,
  lease_until           TIMESTAMPTZ NULL,
  last_response_summary VARCHAR(1100) NULL,
  last_error            VARCHAR(1100) NULL,
  -- scheme://host:port of url, lower-case: the unit of the per-endpoint delivery cap
  endpoint              VARCHAR(2048) COLLATE "C" NOT NULL DEFAULT '',
  created_at            TIMESTAMPTZ NOT NULL,
  updated_at            TIMESTAMPTZ NOT NULL
);
CREATE INDEX callback_tasks_due ON callback_tasks (due_at) WHERE status IN ('WAITING','FAILED') AND due_at IS NOT NULL;
CREATE INDEX callback_tasks_leased ON callback_tasks (lease_until) WHERE status = 'PROCESSING';
CREATE INDEX callback_tasks_by_app ON callback_tasks (application_id, created_at, id);
CREATE INDEX callback_tasks_by_biz ON callback_tasks (application_id, biz_type, biz_id);

CREATE TABLE callback_attempts (
  id                      BIGSERIAL PRIMARY KEY,
  callback_task_id        BIGINT NOT NULL REFERENCES callback_tasks(id),
  application_id          INTEGER NOT NULL REFERENCES applications(id),
  attempt_no              INTEGER NOT NULL,
  url                     VARCHAR(2048) NOT NULL,
  request_headers_summary JSONB NOT NULL,
  request_body_summary    VARCHAR(1100) NULL,
  request_body_length     INTEGER NOT NULL,
  request_body_sha256     CHAR(64) NOT NULL,
  response_status         INTEGER NULL,
  response_content_type   VARCHAR(256) NULL,
  response_body_summary   VARCHAR(1100) NULL,
  response_body_length    INTEGER NULL,
  response_body_sha256    CHAR(64) NULL,
  accepted                BOOLEAN NOT NULL,
  latency_ms              INTEGER NOT NULL,
  error_reason            VARCHAR(1100) NULL,
  next_retry_time         TIMESTAMPTZ NULL,
  created_at              TIMESTAMPTZ NOT NULL,
  UNIQUE (callback_task_id, attempt_no)
);
`,
  },
  {
    version: 5,
    name: 'custody key directory',
    sql: `
-- Key-per-ref backends (PKCS#11) generate one key per (namespace, purpose, application, index)
-- on the device; this records which device object (key_id, e.g. CKA_ID) serves which ref, and
-- its public key. Public facts only. application_id has no foreign key on purpose: the key
-- store's conformance suite uses refs of applications that have no row.
CREATE TABLE custody_keys (
  id             BIGSERIAL PRIMARY KEY,
  backend        VARCHAR(32) NOT NULL,
  namespace      TEXT COLLATE "C" NOT NULL,
  purpose        VARCHAR(16) NOT NULL CHECK (purpose IN ('deposit','hot','fee')),
  application_id INTEGER NOT NULL,
  key_index      BIGINT NOT NULL CHECK (key_index >= 0 AND key_index < 2147483648),
  curve          VARCHAR(16) NOT NULL,
  key_id         BYTEA NOT NULL,
  public_key     BYTEA NOT NULL,
  created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE (backend, namespace, purpose, application_id, key_index),
  UNIQUE (backend, key_id)
);
`,
  },
  {
    version: 6,
    name: 'deposit detection: scan cursors and leases, recent blocks, recharges, unattributed deposits, alerts',
    sql: `
-- how an application's deposits reach SETTLED (docs/deposits.md); PASS_THROUGH arrives with collection
ALTER TABLE applications ADD COLUMN settlement_mode VARCHAR(16) NOT NULL DEFAULT 'ON_CONFIRM'
  CHECK (settlement_mode IN ('ON_CONFIRM','PASS_THROUGH'));
-- per token: smallest credited deposit (base units) and its own confirmation count (NULL: the chain's)
ALTER TABLE chain_tokens ADD COLUMN min_deposit NUMERIC(78,0) NOT NULL DEFAULT 0 CHECK (min_deposit >= 0);
ALTER TABLE chain_tokens ADD COLUMN confirmations INTEGER NULL CHECK (confirmations >= 0);

-- one row per chain: where its scanner stands, and which worker process holds it (a lease)
CREATE TABLE scan_cursors (
  chain_id      INTEGER PRIMARY KEY REFERENCES chains(id),
  height        BIGINT NULL,
  hash          VARCHAR(128) NULL,
  tip_height    BIGINT NULL,
  lease_owner   VARCHAR(128) NULL,
  lease_until   TIMESTAMPTZ NULL,
  last_error    TEXT NULL,
  halted        TEXT NULL,
  updated_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- block chains: recent blocks with parent links, to find a fork point
CREATE TABLE scan_blocks (
  chain_id     INTEGER NOT NULL REFERENCES chains(id),
  height       BIGINT NOT NULL,
  hash         VARCHAR(128) NOT NULL,
  parent_hash  VARCHAR(128) NOT NULL,
  PRIMARY KEY (chain_id, height)
);

-- history chains: the opaque history cursor of each watched address
CREATE TABLE scan_history_cursors (
  chain_id   INTEGER NOT NULL REFERENCES chains(id),
  address    VARCHAR(128) NOT NULL,
  cursor     TEXT NULL,
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (chain_id, address)
);

-- one row per on-chain transfer credited to a user's address: (chain, txHash, position)
CREATE TABLE recharges (
  id                 BIGSERIAL PRIMARY KEY,
  application_id     INTEGER NOT NULL REFERENCES applications(id),
  chain_id           INTEGER NOT NULL REFERENCES chains(id),
  chain_token_id     INTEGER NOT NULL REFERENCES chain_tokens(id),
  address_id         INTEGER NOT NULL REFERENCES addresses(id),
  external_user_id   VARCHAR(64) NOT NULL,
  address            VARCHAR(128) NOT NULL,
  memo               VARCHAR(256) NULL,
  from_address       VARCHAR(128) NULL,
  tx_hash            VARCHAR(128) NOT NULL,
  position           INTEGER NOT NULL,
  amount             NUMERIC(78,0) NOT NULL CHECK (amount > 0),
  block_height       BIGINT NULL,
  block_hash         VARCHAR(128) NULL,
  orphaned_at_height BIGINT NULL,
  tx_status          VARCHAR(16) NOT NULL CHECK (tx_status IN ('PENDING','CONFIRMED','SETTLED','FAILED')),
  confirmations      INTEGER NOT NULL DEFAULT 0,
  min_confirmations  INTEGER NOT NULL,
  fail_reason        VARCHAR(256) NULL,
  confirmed_at       TIMESTAMPTZ NULL,
  settled_at         TIMESTAMPTZ NULL,
  failed_at          TIMESTAMPTZ NULL,
  created_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE (chain_id, tx_hash, position)
);
CREATE INDEX recharges_open ON recharges (chain_id, tx_status) WHERE tx_status IN ('PENDING','CONFIRMED');
CREATE INDEX recharges_app_time ON recharges (application_id, created_at, id);
CREATE INDEX recharges_app_user ON recharges (application_id, external_user_id);
CREATE INDEX recharges_app_address ON recharges (application_id, address);

-- one callback task per (recharge, txStatus): the merchant's de-duplication key
CREATE TABLE recharge_notices (
  recharge_id BIGINT NOT NULL REFERENCES recharges(id),
  tx_status   VARCHAR(16) NOT NULL,
  task_id     BIGINT NOT NULL,
  created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (recharge_id, tx_status)
);

-- memo chains: a deposit to a shared address whose memo names no user (credited to nobody)
CREATE TABLE unattributed_deposits (
  id             BIGSERIAL PRIMARY KEY,
  chain_id       INTEGER NOT NULL REFERENCES chains(id),
  chain_token_id INTEGER NOT NULL REFERENCES chain_tokens(id),
  address        VARCHAR(128) NOT NULL,
  memo           VARCHAR(256) NULL,
  from_address   VARCHAR(128) NULL,
  tx_hash        VARCHAR(128) NOT NULL,
  position       INTEGER NOT NULL,
  amount         NUMERIC(78,0) NOT NULL CHECK (amount > 0),
  block_height   BIGINT NOT NULL,
  block_hash     VARCHAR(128) NOT NULL,
  reason         VARCHAR(32) NOT NULL CHECK (reason IN ('MEMO_MISSING','MEMO_UNKNOWN')),
  recharge_id    BIGINT NULL REFERENCES recharges(id),
  assigned_at    TIMESTAMPTZ NULL,
  created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE (chain_id, tx_hash, position)
);

-- operator alerts (a reorg deeper than the safe depth touching a credited deposit, ...)
CREATE TABLE operator_alerts (
  id          BIGSERIAL PRIMARY KEY,
  chain_id    INTEGER NULL REFERENCES chains(id),
  kind        VARCHAR(32) NOT NULL,
  message     TEXT NOT NULL,
  details     JSONB NOT NULL DEFAULT '{}',
  created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
  acknowledged_at TIMESTAMPTZ NULL
);
`,
  },
  {
    version: 7,
    name: 'withdrawals: hot wallets and their balance ledger, orders, callbacks once per (order, status), risk rules, sequence allocators',
    sql: `
-- an application's hot wallet on a chain: its key (purpose 'hot' in the chain's key namespace) and address
CREATE TABLE hot_wallets (
  id             SERIAL PRIMARY KEY,
  application_id INTEGER NOT NULL REFERENCES applications(id),
  chain_id       INTEGER NOT NULL REFERENCES chains(id),
  key_namespace  VARCHAR(64) NOT NULL,
  key_index      INTEGER NOT NULL CHECK (key_index >= 0),
  address        VARCHAR(128) NOT NULL,
  created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE (application_id, chain_id)
);

-- the balance ledger (docs/withdrawals.md): what the node last said the hot wallet holds, and
-- what accepted orders hold back until a later observation reflects them
CREATE TABLE hot_wallet_balances (
  hot_wallet_id  INTEGER NOT NULL REFERENCES hot_wallets(id),
  chain_token_id INTEGER NOT NULL REFERENCES chain_tokens(id),
  on_chain       NUMERIC(78,0) NOT NULL DEFAULT 0 CHECK (on_chain >= 0),
  reserved       NUMERIC(78,0) NOT NULL DEFAULT 0 CHECK (reserved >= 0),
  observed_at    TIMESTAMPTZ NULL,
  PRIMARY KEY (hot_wallet_id, chain_token_id)
);

-- the most a transfer of a token costs in fees now (native base units), refreshed from the node
CREATE TABLE withdraw_fee_quotes (
  chain_id       INTEGER NOT NULL REFERENCES chains(id),
  chain_token_id INTEGER NOT NULL REFERENCES chain_tokens(id),
  max_fee        NUMERIC(78,0) NOT NULL CHECK (max_fee >= 0),
  observed_at    TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (chain_id, chain_token_id)
);

CREATE TABLE withdrawals (
  id              BIGSERIAL PRIMARY KEY,
  application_id  INTEGER NOT NULL REFERENCES applications(id),
  app_order_no    VARCHAR(64) NOT NULL,
  chain_id        INTEGER NOT NULL REFERENCES chains(id),
  chain_token_id  INTEGER NOT NULL REFERENCES chain_tokens(id),
  hot_wallet_id   INTEGER NOT NULL REFERENCES hot_wallets(id),
  from_address    VARCHAR(128) NOT NULL,
  to_address      VARCHAR(128) NOT NULL,
  memo            VARCHAR(256) NULL,
  amount          NUMERIC(78,0) NOT NULL CHECK (amount > 0),
  -- the order's fee in native base units: the estimate until mined, then the actual fee
  fee             NUMERIC(78,0) NOT NULL CHECK (fee >= 0),
  fee_final       BOOLEAN NOT NULL DEFAULT false,
  -- what acceptance reserved in the ledger (token amount; fee in the native coin)
  reserved_amount NUMERIC(78,0) NOT NULL CHECK (reserved_amount >= 0),
  reserved_fee    NUMERIC(78,0) NOT NULL CHECK (reserved_fee >= 0),
  released_at     TIMESTAMPTZ NULL,
  status          VARCHAR(16) NOT NULL CHECK (status IN ('PROCESSING','BROADCASTED','CONFIRMING','SUCCESS','FAILED')),
  approval        VARCHAR(16) NOT NULL DEFAULT 'NONE' CHECK (approval IN ('NONE','PENDING','APPROVED','REJECTED')),
  risk_level      VARCHAR(16) NULL,
  risk_reason     VARCHAR(256) NULL,
  fail_reason     VARCHAR(256) NULL,
  callback_url    VARCHAR(2048) NULL,
  remark          VARCHAR(200) NULL,
  sequence        NUMERIC(20,0) NULL,
  tx_hash         VARCHAR(128) NULL,
  block_height    BIGINT NULL,
  confirmations   INTEGER NOT NULL DEFAULT 0,
  signed_at       TIMESTAMPTZ NULL,
  broadcast_at    TIMESTAMPTZ NULL,
  finished_at     TIMESTAMPTZ NULL,
  created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE (application_id, app_order_no)
);
CREATE INDEX withdrawals_open ON withdrawals (chain_id, status, id) WHERE status IN ('PROCESSING','BROADCASTED','CONFIRMING');
CREATE INDEX withdrawals_app_time ON withdrawals (application_id, created_at, id);
CREATE INDEX withdrawals_unreleased ON withdrawals (hot_wallet_id) WHERE released_at IS NULL;

-- every transaction signed for an order: the first, and fee-bump replacements at the same sequence
-- (only one of them can be mined); stored before broadcast, so a crash re-sends the same bytes
CREATE TABLE withdraw_transactions (
  withdrawal_id BIGINT NOT NULL REFERENCES withdrawals(id),
  attempt       INTEGER NOT NULL CHECK (attempt >= 1),
  tx_hash       VARCHAR(128) NOT NULL,
  raw_tx        BYTEA NOT NULL,
  transfer_input JSONB NOT NULL,
  max_fee       NUMERIC(78,0) NOT NULL,
  created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  -- when a node last took it (first send or a re-send after it was dropped): the stuck clock
  sent_at       TIMESTAMPTZ NULL,
  PRIMARY KEY (withdrawal_id, attempt)
);
CREATE INDEX withdraw_transactions_hash ON withdraw_transactions (tx_hash);

-- one callback task per (order, status): the merchant's de-duplication key (appOrderNo, status)
CREATE TABLE withdraw_notices (
  withdrawal_id BIGINT NOT NULL REFERENCES withdrawals(id),
  status        VARCHAR(16) NOT NULL,
  task_id       BIGINT NOT NULL,
  created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (withdrawal_id, status)
);

-- risk rules per application (docs/withdrawals.md): limits per token, destination lists
CREATE TABLE withdraw_limits (
  application_id     INTEGER NOT NULL REFERENCES applications(id),
  chain_token_id     INTEGER NOT NULL REFERENCES chain_tokens(id),
  per_order_max      NUMERIC(78,0) NULL CHECK (per_order_max > 0),
  daily_max          NUMERIC(78,0) NULL CHECK (daily_max > 0),
  approval_threshold NUMERIC(78,0) NULL CHECK (approval_threshold > 0),
  PRIMARY KEY (application_id, chain_token_id)
);
CREATE TABLE withdraw_address_rules (
  application_id INTEGER NOT NULL REFERENCES applications(id),
  chain_id       INTEGER NOT NULL REFERENCES chains(id),
  address        VARCHAR(128) NOT NULL,
  kind           VARCHAR(8) NOT NULL CHECK (kind IN ('BLOCK','ALLOW')),
  created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (application_id, chain_id, kind, address)
);
ALTER TABLE applications ADD COLUMN withdraw_allowlist_only BOOLEAN NOT NULL DEFAULT false;

-- utxo chains: the hot wallets' unspent outputs as the node last listed them; an output is spent by
-- at most one order (spent_by), set in the transaction that signs that order
CREATE TABLE hot_wallet_utxos (
  hot_wallet_id INTEGER NOT NULL REFERENCES hot_wallets(id),
  tx_hash       VARCHAR(128) NOT NULL,
  vout          INTEGER NOT NULL CHECK (vout >= 0),
  amount        NUMERIC(78,0) NOT NULL CHECK (amount > 0),
  confirmations INTEGER NOT NULL CHECK (confirmations >= 0),
  spent_by      BIGINT NULL REFERENCES withdrawals(id),
  seen_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (hot_wallet_id, tx_hash, vout)
);

-- sequence chains: the next sequence / nonce to hand out per (chain, hot address)
CREATE TABLE sequence_allocators (
  chain_id      INTEGER NOT NULL REFERENCES chains(id),
  address       VARCHAR(128) NOT NULL,
  next_sequence NUMERIC(20,0) NOT NULL CHECK (next_sequence >= 0),
  updated_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (chain_id, address)
);
`,
  },
  {
    version: 8,
    name: 'rate limits: shared token buckets, per-application overrides',
    sql: `
-- one row per bucket (today: per API key); tokens are request counts, not money
CREATE TABLE api_rate_buckets (
  bucket      VARCHAR(80) PRIMARY KEY,
  tokens      DOUBLE PRECISION NOT NULL,
  refilled_at TIMESTAMPTZ NOT NULL,
  last_grant  INTEGER NOT NULL DEFAULT 0
);
-- an application's own limit (both set) instead of WCS_RATE_LIMIT_RPS / _BURST (both null)
ALTER TABLE applications
  ADD COLUMN rate_limit_rps   INTEGER NULL CHECK (rate_limit_rps BETWEEN 1 AND 1000000),
  ADD COLUMN rate_limit_burst INTEGER NULL CHECK (rate_limit_burst BETWEEN 1 AND 10000000),
  ADD CONSTRAINT applications_rate_limit_pair CHECK ((rate_limit_rps IS NULL) = (rate_limit_burst IS NULL));
`,
  },
  {
    version: 9,
    name: 'one transfer pipeline: every outgoing transaction (payout, sweep, top-up, cold transfer) and its signed attempts',
    sql: `
-- what is to be sent, from which key the KeyStore holds (docs/transfers.md). Owners (a withdrawal,
-- a collection item) create one when it may go; the pipeline signs, stores, sends and tracks it.
CREATE TABLE transfers (
  id              BIGSERIAL PRIMARY KEY,
  application_id  INTEGER NOT NULL REFERENCES applications(id),
  chain_id        INTEGER NOT NULL REFERENCES chains(id),
  chain_token_id  INTEGER NOT NULL REFERENCES chain_tokens(id),
  kind            VARCHAR(16) NOT NULL CHECK (kind IN ('PAYOUT','SWEEP','TOP_UP','COLD_TRANSFER')),
  key_purpose     VARCHAR(16) NOT NULL CHECK (key_purpose IN ('deposit','hot','fee')),
  key_namespace   VARCHAR(64) COLLATE "C" NOT NULL,
  key_index       BIGINT NOT NULL CHECK (key_index >= 0 AND key_index < 2147483648),
  from_address    VARCHAR(128) COLLATE "C" NOT NULL,
  to_address      VARCHAR(128) COLLATE "C" NOT NULL,
  memo            VARCHAR(256) NULL,
  amount          NUMERIC(78,0) NOT NULL CHECK (amount > 0),
  -- what the signed transaction moves: amount, or amount less the fee when the fee comes out of it
  sent_amount     NUMERIC(78,0) NULL CHECK (sent_amount > 0),
  -- the shape beyond (from, to, memo, token, amount): fixed inputs and their owners, a fee payer,
  -- fee out of the amount, token account closing, an exact fee (TransferOptions in transfers/model.ts)
  options         JSONB NOT NULL DEFAULT '{}',
  status          VARCHAR(16) NOT NULL CHECK (status IN ('READY','SIGNED','BROADCASTED','CONFIRMING','SUCCESS','FAILED')),
  sequence        NUMERIC(20,0) NULL,
  tx_hash         VARCHAR(128) NULL,
  -- native base units: the most it can cost until mined, then what it cost
  fee             NUMERIC(78,0) NULL CHECK (fee >= 0),
  fee_final       BOOLEAN NOT NULL DEFAULT false,
  block_height    BIGINT NULL,
  confirmations   INTEGER NOT NULL DEFAULT 0,
  fail_code       VARCHAR(32) NULL,
  fail_reason     VARCHAR(256) NULL,
  signed_at       TIMESTAMPTZ NULL,
  broadcast_at    TIMESTAMPTZ NULL,
  finished_at     TIMESTAMPTZ NULL,
  created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX transfers_open ON transfers (chain_id, status, id) WHERE status IN ('READY','SIGNED','BROADCASTED','CONFIRMING');

-- every transaction signed for a transfer: the first, fee-bump replacements at the same sequence,
-- re-signings of an expired one (only one of them can ever apply); stored before any send
CREATE TABLE transfer_attempts (
  transfer_id    BIGINT NOT NULL REFERENCES transfers(id),
  attempt        INTEGER NOT NULL CHECK (attempt >= 1),
  tx_hash        VARCHAR(128) NOT NULL,
  raw_tx         BYTEA NOT NULL,
  transfer_input JSONB NOT NULL,
  max_fee        NUMERIC(78,0) NOT NULL,
  created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  sent_at        TIMESTAMPTZ NULL,
  PRIMARY KEY (transfer_id, attempt)
);
CREATE INDEX transfer_attempts_hash ON transfer_attempts (tx_hash);

-- a withdrawal's payout transfer, made once risk and approval let it go
ALTER TABLE withdrawals ADD COLUMN transfer_id BIGINT NULL UNIQUE REFERENCES transfers(id);

-- existing orders (signed or not) become transfers with their attempts
INSERT INTO transfers (application_id, chain_id, chain_token_id, kind, key_purpose, key_namespace, key_index, from_address, to_address, memo, amount,
                       sent_amount, status, sequence, tx_hash, fee, fee_final, block_height, confirmations, fail_reason, signed_at, broadcast_at, finished_at, created_at, updated_at)
SELECT w.application_id, w.chain_id, w.chain_token_id, 'PAYOUT', 'hot', h.key_namespace, h.key_index, w.from_address, w.to_address, w.memo, w.amount, w.amount,
       CASE WHEN w.status = 'PROCESSING' THEN 'SIGNED' ELSE w.status END, w.sequence, w.tx_hash, w.fee, w.fee_final, w.block_height, w.confirmations, w.fail_reason,
       w.signed_at, w.broadcast_at, w.finished_at, w.created_at, w.updated_at
  FROM withdrawals w JOIN hot_wallets h ON h.id = w.hot_wallet_id WHERE w.signed_at IS NOT NULL ORDER BY w.id;
UPDATE withdrawals w SET transfer_id = t.id FROM transfers t
 WHERE w.signed_at IS NOT NULL AND t.kind = 'PAYOUT' AND t.chain_id = w.chain_id AND t.from_address = w.from_address AND t.created_at = w.created_at AND t.tx_hash IS NOT DISTINCT FROM w.tx_hash AND t.to_address = w.to_address;
INSERT INTO transfer_attempts (transfer_id, attempt, tx_hash, raw_tx, transfer_input, max_fee, created_at, sent_at)
SELECT w.transfer_id, x.attempt, x.tx_hash, x.raw_tx, x.transfer_input, x.max_fee, x.created_at, x.sent_at
  FROM withdraw_transactions x JOIN withdrawals w ON w.id = x.withdrawal_id WHERE w.transfer_id IS NOT NULL;
ALTER TABLE hot_wallet_utxos ADD COLUMN spent_by_transfer BIGINT NULL REFERENCES transfers(id);
UPDATE hot_wallet_utxos u SET spent_by_transfer = w.transfer_id FROM withdrawals w WHERE w.id = u.spent_by;
ALTER TABLE hot_wallet_utxos DROP COLUMN spent_by;
ALTER TABLE hot_wallet_utxos RENAME COLUMN spent_by_transfer TO spent_by;
DROP TABLE withdraw_transactions;
-- the payout attempts as they were read before (diagnostics and tests): a view over the pipeline's table
CREATE VIEW withdraw_transactions AS
SELECT w.id AS withdrawal_id, a.attempt, a.tx_hash, a.raw_tx, a.transfer_input, a.max_fee, a.created_at, a.sent_at
  FROM transfer_attempts a JOIN withdrawals w ON w.transfer_id = a.transfer_id;
`,
  },
  {
    version: 10,
    name: 'collection: policies, fee wallets, cold and merchant addresses, requests and items, collect callbacks',
    sql: `
-- per application and token (docs/collection.md); no row: that token is not collected
CREATE TABLE collection_policies (
  application_id     INTEGER NOT NULL REFERENCES applications(id),
  chain_token_id     INTEGER NOT NULL REFERENCES chain_tokens(id),
  enabled            BOOLEAN NOT NULL DEFAULT true,
  -- the least worth collecting from one address (base units)
  threshold          NUMERIC(78,0) NOT NULL CHECK (threshold >= 0),
  -- cost guard: the fee may be at most this share of the amount, basis points (1000 = 10 %)
  max_fee_bps        INTEGER NOT NULL CHECK (max_fee_bps BETWEEN 0 AND 10000),
  -- tokens: what one whole native coin is worth in this token's base units (the guard compares like with like)
  native_value       NUMERIC(78,0) NULL CHECK (native_value > 0),
  on_confirmed       BOOLEAN NOT NULL DEFAULT true,
  schedule_seconds   INTEGER NULL CHECK (schedule_seconds >= 10),
  -- pass-through: a deposit below the threshold is swept alone after this long (when the guard allows)
  max_wait_seconds   INTEGER NULL CHECK (max_wait_seconds >= 0),
  -- hot wallet watermarks (base units): above high the surplus goes cold down to target; below low an alert
  hot_low            NUMERIC(78,0) NULL CHECK (hot_low >= 0),
  hot_target         NUMERIC(78,0) NULL CHECK (hot_target >= 0),
  hot_high           NUMERIC(78,0) NULL CHECK (hot_high >= 0),
  -- the last scheduled pass that saw every address; the one under way began at pass_started_at
  last_run_at        TIMESTAMPTZ NULL,
  pass_started_at    TIMESTAMPTZ NULL,
  updated_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (application_id, chain_token_id),
  CHECK (hot_target IS NULL OR hot_high IS NULL OR hot_target <= hot_high),
  CHECK (hot_low IS NULL OR hot_target IS NULL OR hot_low <= hot_target)
);

-- an application's cold address per chain (COLD_TRANSFER target) and, in pass-through mode, the merchant's collection address
CREATE TABLE collection_addresses (
  application_id INTEGER NOT NULL REFERENCES applications(id),
  chain_id       INTEGER NOT NULL REFERENCES chains(id),
  kind           VARCHAR(16) NOT NULL CHECK (kind IN ('COLD','MERCHANT')),
  address        VARCHAR(128) COLLATE "C" NOT NULL,
  memo           VARCHAR(256) NULL,
  updated_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (application_id, chain_id, kind)
);

-- the fee wallet per (application, chain): its own key (purpose 'fee'), paying gas top-ups; its own ledger rows
CREATE TABLE fee_wallets (
  id             SERIAL PRIMARY KEY,
  application_id INTEGER NOT NULL REFERENCES applications(id),
  chain_id       INTEGER NOT NULL REFERENCES chains(id),
  key_namespace  VARCHAR(64) COLLATE "C" NOT NULL,
  key_index      INTEGER NOT NULL CHECK (key_index >= 0),
  address        VARCHAR(128) COLLATE "C" NOT NULL,
  -- what the node last said it holds (native base units); top-ups in flight are counted from transfers
  on_chain       NUMERIC(78,0) NULL CHECK (on_chain >= 0),
  observed_at    TIMESTAMPTZ NULL,
  created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE (application_id, chain_id)
);

-- one planning pass's items for an application and token (the spec's requestId)
CREATE TABLE collection_requests (
  id             BIGSERIAL PRIMARY KEY,
  application_id INTEGER NOT NULL REFERENCES applications(id),
  chain_id       INTEGER NOT NULL REFERENCES chains(id),
  chain_token_id INTEGER NOT NULL REFERENCES chain_tokens(id),
  trigger        VARCHAR(16) NOT NULL CHECK (trigger IN ('DEPOSIT','SCHEDULE','MANUAL','WATERMARK','MAX_WAIT')),
  created_at     TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE collection_items (
  id                BIGSERIAL PRIMARY KEY,
  request_id        BIGINT NOT NULL REFERENCES collection_requests(id),
  application_id    INTEGER NOT NULL REFERENCES applications(id),
  chain_id          INTEGER NOT NULL REFERENCES chains(id),
  chain_token_id    INTEGER NOT NULL REFERENCES chain_tokens(id),
  stage             VARCHAR(16) NOT NULL CHECK (stage IN ('HOT_GATHER','COLD_TRANSFER')),
  -- the USER address row; 0 for a shared deposit account or the hot wallet (no one user's address)
  from_address_id   INTEGER NOT NULL,
  from_address      VARCHAR(128) COLLATE "C" NOT NULL,
  to_address        VARCHAR(128) COLLATE "C" NOT NULL,
  to_memo           VARCHAR(256) NULL,
  -- planned: what the address held to collect; on success: what arrived
  amount            NUMERIC(78,0) NOT NULL CHECK (amount > 0),
  status            VARCHAR(16) NOT NULL CHECK (status IN ('PLANNED','TOPPING_UP','FUNDED','SWEEPING','SUCCESS','FAILED')),
  -- why a PLANNED item waits (a poor fee wallet, no merchant address, a fee above the funded price)
  waiting_reason    VARCHAR(256) NULL,
  -- the source key (namespace, index) and, utxo chains, the deposit outputs it spends
  source            JSONB NOT NULL DEFAULT '{}',
  failure_code      VARCHAR(32) NULL,
  failure_message   VARCHAR(256) NULL,
  retry_times       INTEGER NOT NULL DEFAULT 0,
  -- the most the sweep may pay per fee unit (EVM tokens: the price the top-up was measured at)
  fee_per_unit      NUMERIC(78,0) NULL,
  topup_transfer_id BIGINT NULL REFERENCES transfers(id),
  transfer_id       BIGINT NULL REFERENCES transfers(id),
  tx_hash           VARCHAR(128) NULL,
  gas_fee           NUMERIC(78,0) NULL,
  created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
  finished_at       TIMESTAMPTZ NULL,
  -- COLD_TRANSFER: when the hot wallet ledger released what the transfer reserved
  released_at       TIMESTAMPTZ NULL
);
CREATE INDEX collection_items_open ON collection_items (chain_id, status, id) WHERE status NOT IN ('SUCCESS','FAILED');
CREATE INDEX collection_items_transfer ON collection_items (transfer_id);
CREATE INDEX collection_items_topup ON collection_items (topup_transfer_id);
CREATE INDEX collection_items_app_time ON collection_items (application_id, created_at, id);
-- one open item per (address, token): a retry or a crash never plans a second sweep of the same funds
CREATE UNIQUE INDEX collection_items_one_open ON collection_items (chain_token_id, from_address, stage) WHERE status NOT IN ('SUCCESS','FAILED');

-- addresses the cost guard left alone: recorded with the reason, swept once they grew
CREATE TABLE collection_skips (
  application_id INTEGER NOT NULL REFERENCES applications(id),
  chain_token_id INTEGER NOT NULL REFERENCES chain_tokens(id),
  address        VARCHAR(128) COLLATE "C" NOT NULL,
  amount         NUMERIC(78,0) NOT NULL,
  fee            NUMERIC(78,0) NOT NULL,
  reason         VARCHAR(256) NOT NULL,
  skipped_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (chain_token_id, address)
);

-- each recharge knows the item that moved it
ALTER TABLE recharges ADD COLUMN collection_item_id BIGINT NULL REFERENCES collection_items(id);
CREATE INDEX recharges_uncollected ON recharges (chain_id, chain_token_id, address) WHERE collection_item_id IS NULL AND tx_status IN ('CONFIRMED','SETTLED');
-- an item's recharges (its collect event's relatedRechargeIds, pass-through settlement)
CREATE INDEX recharges_collection_item ON recharges (collection_item_id) WHERE collection_item_id IS NOT NULL;

-- one collect callback per (item, status)
CREATE TABLE collect_notices (
  item_id    BIGINT NOT NULL REFERENCES collection_items(id),
  status     VARCHAR(16) NOT NULL,
  task_id    BIGINT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (item_id, status)
);

-- hot wallets: sweeps mined but not yet final count as available only once final
ALTER TABLE hot_wallet_balances ADD COLUMN incoming NUMERIC(78,0) NOT NULL DEFAULT 0 CHECK (incoming >= 0);
`,
  },
  {
    version: 11,
    name: 'operators and the append-only audit log',
    sql: `
-- console operators (docs/console.md): made, reset and disabled with the CLI
CREATE TABLE operators (
  id               SERIAL PRIMARY KEY,
  username         VARCHAR(64) COLLATE "C" NOT NULL UNIQUE CHECK (username ~ '^[a-z][a-z0-9._-]{2,63}$'),
  role             VARCHAR(16) NOT NULL CHECK (role IN ('viewer','operator','approver','admin')),
  -- scrypt (operators/password.ts); a new or reset password must be changed at the next login
  password_hash    TEXT NOT NULL,
  must_change_password BOOLEAN NOT NULL DEFAULT true,
  -- the TOTP secret, sealed (AES-256-GCM under the master key, bound to the operator id)
  totp_ciphertext  BYTEA NULL,
  totp_iv          BYTEA NULL,
  totp_auth_tag    BYTEA NULL,
  totp_key_id      VARCHAR(16) NULL,
  -- the step of the last code accepted: a code is never accepted twice
  totp_last_step   BIGINT NULL,
  status           VARCHAR(16) NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE','DISABLED')),
  failed_logins    INTEGER NOT NULL DEFAULT 0,
  locked_until     TIMESTAMPTZ NULL,
  created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  -- approvers and admins always have a second factor
  CHECK (role IN ('viewer','operator') OR totp_ciphertext IS NOT NULL),
  CHECK ((totp_ciphertext IS NULL) = (totp_iv IS NULL) AND (totp_iv IS NULL) = (totp_auth_tag IS NULL) AND (totp_auth_tag IS NULL) = (totp_key_id IS NULL))
);

-- every change an operator makes, through the console or the CLI (docs/console.md); rows are
-- only ever added: updates, deletes and truncation are refused for every database role
CREATE TABLE audit_log (
  id          BIGSERIAL PRIMARY KEY,
  at          TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  -- an operator's username, or for the CLI the system user running it
  actor       VARCHAR(128) NOT NULL,
  -- the operator's role at the time; 'shell' for the CLI (whoever runs it holds the database)
  actor_role  VARCHAR(16) NOT NULL,
  channel     VARCHAR(8) NOT NULL CHECK (channel IN ('console','cli')),
  -- the client address (console) or the host name (CLI)
  source      VARCHAR(256) NULL,
  action      VARCHAR(64) NOT NULL,
  target      VARCHAR(128) NULL,
  before      JSONB NULL,
  after       JSONB NULL
);
CREATE INDEX audit_log_time ON audit_log (at, id);
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$f$;
CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
`,
  },
  {
    version: 12,
    name: 'operator sessions',
    sql: `
-- console sessions (docs/console.md): the cookie's token and the CSRF token are stored only as
-- SHA-256 hashes; a session ends at its idle or absolute timeout, at logout, or when its
-- operator is disabled or reset
CREATE TABLE operator_sessions (
  id            BIGSERIAL PRIMARY KEY,
  operator_id   INTEGER NOT NULL REFERENCES operators(id),
  token_hash    BYTEA NOT NULL UNIQUE,
  csrf_hash     BYTEA NOT NULL,
  source        VARCHAR(256) NULL,
  created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  last_seen_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
  expires_at    TIMESTAMPTZ NOT NULL,
  ended_at      TIMESTAMPTZ NULL
);
CREATE INDEX operator_sessions_open ON operator_sessions (operator_id) WHERE ended_at IS NULL;
`,
  },
  {
    version: 13,
    name: 'console listings by keyset',
    sql: `
-- the console lists callback tasks of every application newest first, by keyset on
-- (created_at, id) (docs/console.md, "Listings"); per application the listing uses
-- callback_tasks_by_app
CREATE INDEX callback_tasks_by_created ON callback_tasks (created_at, id);
-- the latest entry for a target and action: four eyes (who last changed the rule that held a
-- withdrawal), an alert's acknowledger, a collection item's history
CREATE INDEX audit_log_by_target ON audit_log (target, action, id);
`,
  },
  CHAIN_EVENTS_MIGRATION,
  CALLBACK_STORE_MIGRATION,
  COLLECTION_WAITS_MIGRATION,
  TRUSTLINE_TRANSFERS_MIGRATION,
  RECONCILIATION_MIGRATION,
  RECONCILIATION_PASSES_MIGRATION,
  RECONCILIATION_NATIVE_READS_MIGRATION,
  RECONCILIATION_REWRITES_MIGRATION,
  MASTER_KEY_STATE_MIGRATION,
  KEY_INDEX_MARKS_MIGRATION,
  SENDER_HOLDS_MIGRATION,
  DELEGATED_SWEEPS_MIGRATION,
];

const LOCK_KEY = 7_420_001; // advisory lock id for migrations

/** Applies pending migrations in order, all in one transaction under an advisory lock (all or none). Returns versions applied. */
export async function migrate(sequelize: Sequelize, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const applied: number[] = [];
  await sequelize.transaction(async (t: Transaction) => {
    await sequelize.query('SELECT pg_advisory_xact_lock(:k)', { replacements: { k: LOCK_KEY }, transaction: t });
    await sequelize.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
      { transaction: t },
    );
    const [rows] = await sequelize.query('SELECT version FROM schema_migrations', { transaction: t });
    const done = new Set((rows as Array<{ version: number }>).map((r) => Number(r.version)));
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue;
      await sequelize.query(m.sql, { transaction: t });
      await sequelize.query('INSERT INTO schema_migrations(version, name) VALUES (:v, :n)', {
        replacements: { v: m.version, n: m.name },
        transaction: t,
      });
      applied.push(m.version);
    }
  });
  return applied;
}

export async function pendingMigrations(sequelize: Sequelize): Promise<number[]> {
  const [rows] = await sequelize.query(
    `SELECT version FROM schema_migrations`,
  ).catch(() => [[] as unknown[]] as const);
  const done = new Set((rows as Array<{ version: number }>).map((r) => Number(r.version)));
  return MIGRATIONS.filter((m) => !done.has(m.version)).map((m) => m.version);
}
