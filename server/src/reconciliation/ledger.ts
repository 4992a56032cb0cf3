import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { AddressKind } from './plan';
import type { Candidate, ExplanationKind } from './explain';

/**
 * The ledger side of reconciliation (docs/reconciliation.md, "The ledger"): the custody addresses
 * of a chain, what the ledger expects each (address, token) to hold at a height, the addresses
 * touched since a time, and what may explain a difference. Each is one SQL statement per pass,
 * whatever the number of addresses. Addresses compare byte-wise (COLLATE "C").
 */

export interface CustodyAddress {
  readonly address: string;
  readonly applicationId: number;
  readonly kind: AddressKind;
  readonly externalUserId: string | null;
  /** The oldest comparison among the chain's active tokens; null when some token was never compared. */
  readonly reconciledAt: Date | null;
}

export interface ChainToken {
  readonly id: number;
  readonly symbol: string;
  readonly contract: string | null;
  readonly decimals: number;
}

/** The chain's active catalogue tokens, native coin first. */
export async function chainTokens(sequelize: Sequelize, chainId: number): Promise<ChainToken[]> {
  return sequelize.query<ChainToken>(
    'SELECT id, symbol, contract, decimals FROM chain_tokens WHERE chain_id = $1 AND active ORDER BY (contract IS NOT NULL), id',
    { bind: [chainId], type: QueryTypes.SELECT },
  );
}

const CUSTODY = `WITH c AS (
       SELECT a.address::text COLLATE "C" AS address, a.application_id, 'DEPOSIT' AS kind, a.external_user_id::text AS external_user_id
         FROM addresses a WHERE a.chain_id = $1 AND a.user_key_id IS NOT NULL
       UNION ALL SELECT d.address::text COLLATE "C", d.application_id, 'SHARED', NULL FROM deposit_accounts d WHERE d.chain_id = $1
       UNION ALL SELECT h.address::text COLLATE "C", h.application_id, 'HOT', NULL FROM hot_wallets h WHERE h.chain_id = $1
       UNION ALL SELECT f.address::text COLLATE "C", f.application_id, 'FEE', NULL FROM fee_wallets f WHERE f.chain_id = $1
     )`;

/**
 * Deposit addresses (HD), shared deposit accounts (memo chains), hot and fee wallets of every
 * application on the chain. `ages`: with each one's oldest comparison (what an incremental pass
 * chooses by); without (a full pass takes them all), reconciledAt is null.
 */
export async function custodyAddresses(sequelize: Sequelize, chainId: number, tokenCount: number, ages = true): Promise<CustodyAddress[]> {
  const rows = await sequelize.query<{ address: string; application_id: number; kind: AddressKind; external_user_id: string | null; reconciled_at: Date | null }>(
    ages ? `${CUSTODY}, b AS (
       SELECT address::text COLLATE "C" AS address, min(reconciled_at) AS oldest, count(*) AS n FROM reconcile_balances WHERE chain_id = $1 GROUP BY address
     )
     SELECT c.address, c.application_id, c.kind, c.external_user_id, CASE WHEN b.n >= $2 THEN b.oldest END AS reconciled_at
       FROM c LEFT JOIN b ON b.address = c.address ORDER BY c.address` : `${CUSTODY}
     SELECT c.address, c.application_id, c.kind, c.external_user_id, NULL::timestamptz AS reconciled_at FROM c ORDER BY c.address`,
    { bind: ages ? [chainId, tokenCount] : [chainId], type: QueryTypes.SELECT },
  );
  return rows.map((r) => ({ address: r.address, applicationId: r.application_id, kind: r.kind, externalUserId: r.external_user_id, reconciledAt: r.reconciled_at }));
}

/** Addresses touched since `since` (null: all of them are new to reconciliation), and those whose last comparison was not settled. */
export async function touchedAddresses(sequelize: Sequelize, chainId: number, since: Date | null): Promise<Set<string>> {
  const rows = await sequelize.query<{ address: string }>(
    `SELECT address::text AS address FROM reconcile_touches WHERE chain_id = $1
     UNION SELECT address FROM recharges WHERE chain_id = $1 AND updated_at >= $2
     UNION SELECT address FROM unattributed_deposits WHERE chain_id = $1 AND created_at >= $2
     UNION SELECT from_address FROM transfers WHERE chain_id = $1 AND updated_at >= $2
     UNION SELECT to_address FROM transfers WHERE chain_id = $1 AND updated_at >= $2
     UNION SELECT options->'feePayer'->>'address' FROM transfers WHERE chain_id = $1 AND updated_at >= $2 AND options->'feePayer' IS NOT NULL
     UNION SELECT from_address FROM custody_outflows WHERE chain_id = $1 AND created_at >= $2
     UNION SELECT i.from_address FROM collection_items i WHERE i.chain_id = $1 AND i.sweep_mode = 'DELEGATED' AND i.updated_at >= $2
     UNION SELECT i.to_address FROM collection_items i WHERE i.chain_id = $1 AND i.sweep_mode = 'DELEGATED' AND i.updated_at >= $2 AND i.to_address <> ''
     UNION SELECT address FROM reconcile_balances WHERE chain_id = $1 AND (difference <> 0 OR suspect_height IS NOT NULL)`,
    { bind: [chainId, (since ?? new Date(0)).toISOString()], type: QueryTypes.SELECT },
  );
  return new Set(rows.map((r) => r.address).filter((a) => a !== null));
}

/** One ledger question: what (address, token) should hold at height. */
export interface LedgerQuery {
  readonly address: string;
  readonly tokenId: number;
  readonly height: bigint;
}

/** The statuses whose transfers are in a block (CONFIRMING: mined, not final yet; a reorg is the scan's and the tracker's to undo). */
const MINED = `('CONFIRMING','SUCCESS')`;

/**
 * The ledger's entries of the chain as a CTE `e(address, token, amount, height)`, for a statement
 * whose parameter `chain` is the chain's id and `native` its native token's: see ledgerAt.
 */
export const ledgerEntries = (chain: string, native: string): string => `e(address, token, amount, height) AS (
       SELECT address::text COLLATE "C", chain_token_id, amount, height FROM reconcile_adjustments WHERE chain_id = ${chain}
       UNION ALL
       SELECT address::text COLLATE "C", chain_token_id, amount, block_height FROM recharges WHERE chain_id = ${chain} AND tx_status <> 'FAILED' AND block_hash IS NOT NULL
       UNION ALL
       SELECT address::text COLLATE "C", chain_token_id, amount, block_height FROM unattributed_deposits WHERE chain_id = ${chain} AND recharge_id IS NULL
       UNION ALL
       SELECT x.to_address::text COLLATE "C", x.chain_token_id, coalesce(x.sent_amount, x.amount), x.block_height FROM transfers x
        WHERE x.chain_id = ${chain} AND x.status IN ${MINED} AND x.block_height IS NOT NULL AND x.kind <> 'TRUSTLINE'
          AND NOT EXISTS (SELECT 1 FROM recharges r WHERE r.chain_id = ${chain} AND r.tx_hash = x.tx_hash AND r.address = x.to_address)
       UNION ALL
       SELECT x.from_address::text COLLATE "C", x.chain_token_id, -coalesce(x.sent_amount, x.amount), x.block_height FROM transfers x
        WHERE x.chain_id = ${chain} AND x.status IN ${MINED} AND x.block_height IS NOT NULL AND x.kind <> 'TRUSTLINE' AND x.options->'inputs' IS NULL
       UNION ALL
       SELECT (i->'owner'->>'address') COLLATE "C", x.chain_token_id, -((i->>'amount')::numeric), x.block_height
         FROM transfers x CROSS JOIN LATERAL jsonb_array_elements(x.options->'inputs') i
        WHERE x.chain_id = ${chain} AND x.status IN ${MINED} AND x.block_height IS NOT NULL AND x.options->'inputs' IS NOT NULL
       UNION ALL
       SELECT coalesce(x.options->'feePayer'->>'address', x.from_address::text) COLLATE "C", ${native}::int, -x.fee, x.block_height FROM transfers x
        WHERE x.chain_id = ${chain} AND x.status IN ('CONFIRMING','SUCCESS','FAILED') AND x.block_height IS NOT NULL AND x.fee > 0 AND x.options->'inputs' IS NULL
       UNION ALL
       SELECT from_address::text COLLATE "C", chain_token_id, -amount, block_height FROM custody_outflows WHERE chain_id = ${chain}
       UNION ALL
       -- delegated sweeps: a batch transaction moves each item's token from its address to its collector (the amount its forwarder reported)
       SELECT i.from_address::text COLLATE "C", i.chain_token_id, -i.amount, x.block_height FROM collection_items i JOIN transfers x ON x.id = i.transfer_id
        WHERE x.chain_id = ${chain} AND x.kind = 'SWEEP_BATCH' AND x.status IN ${MINED} AND x.block_height IS NOT NULL AND i.status = 'SUCCESS'
       UNION ALL
       SELECT i.to_address::text COLLATE "C", i.chain_token_id, i.amount, x.block_height FROM collection_items i JOIN transfers x ON x.id = i.transfer_id
        WHERE x.chain_id = ${chain} AND x.kind = 'SWEEP_BATCH' AND x.status IN ${MINED} AND x.block_height IS NOT NULL AND i.status = 'SUCCESS'
     )`;

/**
 * The ledger's balance of each (address, token) at its height, in order, in base units:
 * adjustments + deposits recorded in a block (not FAILED) + unattributed memo deposits
 * + transfers in (not also recorded as a deposit) - transfers out - their fees (paid by the
 * transfer's fee payer, else its sender; utxo consolidations: each input's owner loses the input)
 * - custody outflows; each counted when its block height is at most the question's height.
 */
export async function ledgerAt(sequelize: Sequelize, chainId: number, nativeTokenId: number, queries: readonly LedgerQuery[], transaction?: Transaction): Promise<bigint[]> {
  if (queries.length === 0) return [];
  const rows = await sequelize.query<{ n: string; ledger: string }>(
    `WITH q AS (
       SELECT u.address COLLATE "C" AS address, u.token, u.height, u.n FROM unnest($2::text[], $3::int[], $4::bigint[]) WITH ORDINALITY AS u(address, token, height, n)
     ), ${ledgerEntries('$1', '$5')}
     SELECT q.n::text AS n, coalesce(sum(e.amount) FILTER (WHERE e.height <= q.height), 0)::text AS ledger
       FROM q LEFT JOIN e ON e.address = q.address AND e.token = q.token
      GROUP BY q.n ORDER BY q.n`,
    {
      bind: [chainId, queries.map((x) => x.address), queries.map((x) => x.tokenId), queries.map((x) => x.height.toString()), nativeTokenId],
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return rows.map((r) => BigInt(r.ledger));
}

/** What may explain a difference of one (address, token): mandatory parts and optional candidates. */
export interface Candidates {
  readonly mandatory: Array<{ kind: ExplanationKind; ref: string; amount: bigint }>;
  readonly optional: Candidate[];
  /** The transfers in flight touching it (ids), for a discrepancy's `known`. */
  readonly inFlight: string[];
}

interface TransferCandidateRow {
  id: string;
  chain_token_id: number;
  from_address: string;
  to_address: string;
  fee_payer: string | null;
  sent: string;
  fee: string | null;
  fee_final: boolean;
  status: string;
  kind: string;
  inputs: Array<{ amount: string; owner: { address: string } }> | null;
  after_read: boolean;
}

/**
 * The candidates of every (address, token) of a pass, keyed `${address}/${tokenId}`. `height`:
 * the read point the ledger is complete to; `answered`: the height the node's answers are at (the
 * same for exact reads; above it for head-only readers, whose answers may include what was mined
 * in between).
 */
export async function candidatesOf(
  sequelize: Sequelize, chainId: number, nativeTokenId: number, addresses: readonly string[], height: bigint, answered: bigint, transaction?: Transaction,
): Promise<Map<string, Candidates>> {
  const out = new Map<string, Candidates>();
  const at = (address: string, tokenId: number): Candidates => {
    const k = `${address}/${tokenId}`;
    let c = out.get(k);
    if (!c) out.set(k, (c = { mandatory: [], optional: [], inFlight: [] }));
    return c;
  };
  if (addresses.length === 0) return out;
  const bind = [chainId, addresses, height.toString(), answered.toString()];
  const transfers = await sequelize.query<TransferCandidateRow>(
    `WITH s AS (SELECT unnest($2::text[]) COLLATE "C" AS address)
     SELECT x.id::text AS id, x.chain_token_id, x.from_address, x.to_address, x.options->'feePayer'->>'address' AS fee_payer,
            coalesce(x.sent_amount, x.amount)::text AS sent, x.fee::text AS fee, x.fee_final, x.status, x.kind, x.options->'inputs' AS inputs,
            (x.block_height IS NOT NULL) AS after_read
       FROM transfers x
      WHERE x.chain_id = $1
        AND (x.status IN ('SIGNED','BROADCASTED') OR (x.status IN ('CONFIRMING','SUCCESS','FAILED') AND x.block_height > $3::bigint AND x.block_height <= $4::bigint))
        AND (x.from_address IN (SELECT address FROM s) OR x.to_address IN (SELECT address FROM s)
             OR (x.options->'feePayer'->>'address') COLLATE "C" IN (SELECT address FROM s) OR x.options->'inputs' IS NOT NULL)`,
    { bind, type: QueryTypes.SELECT, transaction },
  );
  const wanted = new Set(addresses);
  for (const x of transfers) {
    const kind: ExplanationKind = x.after_read ? 'TRANSFER_AFTER_READ' : 'TRANSFER_IN_FLIGHT';
    const ref = `transfer:${x.id}`;
    const effects = transferEffects(x, nativeTokenId);
    for (const [key, range] of effects) {
      const [address, token] = splitKey(key);
      if (!wanted.has(address)) continue;
      const c = at(address, token);
      c.optional.push({ kind, ref, min: range.min, max: range.max });
      if (!c.inFlight.includes(x.id)) c.inFlight.push(x.id);
    }
  }
  // delegated sweeps in flight (or mined after the read, or mined with their items' outcomes not written yet): each item may move its amount
  const batched = await sequelize.query<{ id: string; item: string; chain_token_id: number; from_address: string; to_address: string; amount: string; after_read: boolean }>(
    `WITH s AS (SELECT unnest($2::text[]) COLLATE "C" AS address)
     SELECT x.id::text AS id, i.id::text AS item, i.chain_token_id, i.from_address, i.to_address, i.amount::text AS amount, (x.block_height IS NOT NULL) AS after_read
       FROM collection_items i JOIN transfers x ON x.id = i.transfer_id
      WHERE x.chain_id = $1 AND x.kind = 'SWEEP_BATCH' AND i.status IN ('SWEEPING','SUCCESS')
        AND (x.status IN ('SIGNED','BROADCASTED') OR (x.status IN ('CONFIRMING','SUCCESS') AND (i.status = 'SWEEPING' OR (x.block_height > $3::bigint AND x.block_height <= $4::bigint))))
        AND (i.from_address IN (SELECT address FROM s) OR i.to_address IN (SELECT address FROM s))`,
    { bind, type: QueryTypes.SELECT, transaction },
  );
  for (const b of batched) {
    const kind: ExplanationKind = b.after_read ? 'TRANSFER_AFTER_READ' : 'TRANSFER_IN_FLIGHT';
    const amount = BigInt(b.amount);
    for (const [address, sign] of [[b.from_address, -1n], [b.to_address, 1n]] as const) {
      if (!wanted.has(address)) continue;
      const c = at(address, b.chain_token_id);
      c.optional.push({ kind, ref: `transfer:${b.id}#item:${b.item}`, min: sign * amount, max: sign * amount });
      if (!c.inFlight.includes(b.id)) c.inFlight.push(b.id);
    }
  }
  const deposits = await sequelize.query<{ ref: string; address: string; chain_token_id: number; amount: string; kind: ExplanationKind }>(
    `WITH s AS (SELECT unnest($2::text[]) COLLATE "C" AS address)
     SELECT 'recharge:' || r.id AS ref, r.address, r.chain_token_id, r.amount::text AS amount,
            CASE WHEN r.block_hash IS NULL THEN 'DEPOSIT_PENDING' ELSE 'DEPOSIT_AFTER_READ' END AS kind
       FROM recharges r
      WHERE r.chain_id = $1 AND r.address COLLATE "C" IN (SELECT address FROM s) AND r.tx_status <> 'FAILED'
        AND (r.block_hash IS NULL OR (r.block_height > $3::bigint AND r.block_height <= $4::bigint))
     UNION ALL
     SELECT 'unattributed:' || u.id, u.address, u.chain_token_id, u.amount::text, 'DEPOSIT_AFTER_READ'
       FROM unattributed_deposits u
      WHERE u.chain_id = $1 AND u.address COLLATE "C" IN (SELECT address FROM s) AND u.recharge_id IS NULL AND u.block_height > $3::bigint AND u.block_height <= $4::bigint
     UNION ALL
     SELECT 'outflow:' || o.id, o.from_address, o.chain_token_id, (-o.amount)::text, 'OUTFLOW_AFTER_READ'
       FROM custody_outflows o
      WHERE o.chain_id = $1 AND o.from_address IN (SELECT address FROM s) AND o.block_height > $3::bigint AND o.block_height <= $4::bigint
     UNION ALL
     SELECT 'tx:' || i.tx_hash || '#' || i.position, i.address, i.chain_token_id, i.amount::text,
            CASE WHEN i.block_height <= $3::bigint THEN 'DEPOSIT_IGNORED' ELSE 'DEPOSIT_AFTER_READ' END
       FROM ignored_deposits i
      WHERE i.chain_id = $1 AND i.address IN (SELECT address FROM s) AND i.block_height <= $4::bigint`,
    { bind, type: QueryTypes.SELECT, transaction },
  );
  for (const d of deposits) {
    const c = at(d.address, d.chain_token_id);
    const amount = BigInt(d.amount);
    if (d.kind === 'DEPOSIT_IGNORED') c.mandatory.push({ kind: d.kind, ref: d.ref, amount });
    else c.optional.push({ kind: d.kind, ref: d.ref, min: amount, max: amount });
  }
  return out;
}

const key = (address: string, token: number) => `${address}\u0000${token}`;
const splitKey = (k: string): [string, number] => {
  const i = k.lastIndexOf('\u0000');
  return [k.slice(0, i), Number(k.slice(i + 1))];
};

/**
 * What one transfer not yet in the ledger would change, per (address, token), as a range: token
 * movements exactly; the native fee exactly once final, else anywhere from nothing to its ceiling.
 */
export function transferEffects(
  x: Pick<TransferCandidateRow, 'chain_token_id' | 'from_address' | 'to_address' | 'fee_payer' | 'sent' | 'fee' | 'fee_final' | 'status' | 'kind' | 'inputs'>,
  nativeTokenId: number,
): Map<string, { min: bigint; max: bigint }> {
  const m = new Map<string, { min: bigint; max: bigint }>();
  const add = (address: string, token: number, min: bigint, max: bigint) => {
    const k = key(address, token);
    const o = m.get(k) ?? { min: 0n, max: 0n };
    m.set(k, { min: o.min + min, max: o.max + max });
  };
  const moves = x.kind !== 'TRUSTLINE' && x.status !== 'FAILED';
  const sent = BigInt(x.sent);
  if (x.inputs && x.inputs.length > 0) {
    // a consolidation: every input leaves its owner; the fee is inside them
    if (moves) {
      for (const i of x.inputs) add(i.owner.address, x.chain_token_id, -BigInt(i.amount), -BigInt(i.amount));
      add(x.to_address, x.chain_token_id, sent, sent);
    }
    return m;
  }
  if (moves) {
    add(x.from_address, x.chain_token_id, -sent, -sent);
    add(x.to_address, x.chain_token_id, sent, sent);
  }
  const fee = x.fee === null ? 0n : BigInt(x.fee);
  if (fee > 0n) add(x.fee_payer ?? x.from_address, nativeTokenId, -fee, x.fee_final ? -fee : 0n);
  return m;
}
