import { QueryTypes, UniqueConstraintError, type Sequelize } from 'sequelize';
import { formatLocalDateTime, formatUnits, type Environment } from '@wcs/core';
import { AuditLog, type AuditActor } from '../operators/audit';
import { collectRecord, loadItems, type ItemRow } from './collect-events';
import { feeWalletReport } from './fee-wallets';
import { CollectCommandError, itemTarget } from './operator';

/**
 * Collection items for the operator (wcs collect items|status|retry; the console's Collection
 * pages): the status report, the item list by keyset, an item's retry (audited). Policies,
 * addresses and runs are in operator.ts.
 */

const OPEN_ITEM_STATUSES = ['PLANNED', 'TOPPING_UP', 'FUNDED', 'SWEEPING'] as const;
const ALERT_KINDS = ['FEE_WALLET_LOW', 'HOT_WALLET_LOW', 'COLLECTION_FAILED', 'COLLECTION_STUCK', 'COLLECTION_WAITING', 'TRUSTLINE_FAILED'] as const;
/** Skipped addresses listed per token by `wcs collect status` (the newest; the total is given). */
const SKIPS_SHOWN = 20;
const ALERTS_SHOWN = 100;

const fmtOr = (v: string | null, decimals: number) => (v === null ? null : formatUnits(BigInt(v), decimals));

export interface ItemView {
  readonly itemId: number;
  readonly requestId: number;
  readonly applicationId: number;
  readonly stage: string;
  readonly status: string;
  readonly amount: string;
  readonly fromAddress: string;
  readonly toAddress: string;
  readonly txHash: string | null;
  readonly gasFee: string | null;
  readonly gasFeeCurrency: string | null;
  readonly retryTimes: number;
  readonly failureReasonCode: string | null;
  readonly failureReasonMessage: string | null;
  readonly token: string;
  readonly waitingReason: string | null;
}

export function itemView(i: ItemRow): ItemView {
  return { ...collectRecord(i), token: i.symbol, waitingReason: i.waiting_reason };
}


export async function collectionStatus(sequelize: Sequelize, applicationId: number | null) {
  const keys = await sequelize.query<{
    application_id: number; chain_token_id: number; code: string; environment: Environment; symbol: string; decimals: number; native_symbol: string | null;
    native_decimals: number | null; enabled: boolean | null; settlement_mode: string;
  }>(
    `SELECT k.application_id, k.chain_token_id, c.code, c.environment, t.symbol, t.decimals, n.symbol AS native_symbol, n.decimals AS native_decimals, p.enabled, a.settlement_mode
       FROM (SELECT application_id, chain_token_id FROM collection_policies UNION SELECT application_id, chain_token_id FROM collection_items
             UNION SELECT application_id, chain_token_id FROM collection_skips) k
       JOIN applications a ON a.id = k.application_id
       JOIN chain_tokens t ON t.id = k.chain_token_id JOIN chains c ON c.id = t.chain_id
       LEFT JOIN chain_tokens n ON n.chain_id = c.id AND n.contract IS NULL
       LEFT JOIN collection_policies p ON p.application_id = k.application_id AND p.chain_token_id = k.chain_token_id
      WHERE $1::int IS NULL OR k.application_id = $1
      ORDER BY k.application_id, c.id, t.id`,
    { bind: [applicationId], type: QueryTypes.SELECT },
  );
  const counts = await sequelize.query<{ application_id: number; chain_token_id: number; status: string; n: number }>(
    `SELECT application_id, chain_token_id, status, count(*)::int AS n FROM collection_items
      WHERE status <> 'SUCCESS' AND ($1::int IS NULL OR application_id = $1) GROUP BY 1, 2, 3`,
    { bind: [applicationId], type: QueryTypes.SELECT },
  );
  const waiting = await sequelize.query<{ application_id: number; chain_token_id: number; reason: string; n: number }>(
    `SELECT application_id, chain_token_id, waiting_reason AS reason, count(*)::int AS n FROM collection_items
      WHERE status IN ('PLANNED','FUNDED') AND waiting_reason IS NOT NULL AND ($1::int IS NULL OR application_id = $1) GROUP BY 1, 2, 3 ORDER BY 4 DESC, 3`,
    { bind: [applicationId], type: QueryTypes.SELECT },
  );
  const skips = await sequelize.query<{ application_id: number; chain_token_id: number; address: string; amount: string; fee: string | null; reason: string; skipped_at: Date; holds: boolean; since: Date; total: number }>(
    `SELECT * FROM (
       SELECT application_id, chain_token_id, address, amount::text AS amount, fee::text AS fee, reason, skipped_at, holds, since,
              count(*) OVER (PARTITION BY application_id, chain_token_id)::int AS total,
              row_number() OVER (PARTITION BY application_id, chain_token_id ORDER BY skipped_at DESC, address) AS rn
         FROM collection_skips WHERE $1::int IS NULL OR application_id = $1
     ) s WHERE rn <= ${SKIPS_SHOWN} ORDER BY application_id, chain_token_id, rn`,
    { bind: [applicationId], type: QueryTypes.SELECT },
  );
  const feeWallets = await feeWalletReport(sequelize, applicationId);
  const alerts = await sequelize.query<{ id: string; kind: string; environment: Environment | null; code: string | null; message: string; details: Record<string, unknown>; created_at: Date; application_id: number | null }>(
    `SELECT * FROM (
       SELECT o.id::text AS id, o.kind, c.environment, c.code, o.message, o.details, o.created_at,
              coalesce(CASE WHEN o.details->>'applicationId' ~ '^[0-9]{1,9}$' THEN (o.details->>'applicationId')::int END,
                       (SELECT i.application_id FROM collection_items i WHERE i.id = CASE WHEN o.details->>'item' ~ '^[0-9]{1,18}$' THEN (o.details->>'item')::bigint END)) AS application_id
         FROM operator_alerts o LEFT JOIN chains c ON c.id = o.chain_id
        WHERE o.kind = ANY($2::text[]) AND o.acknowledged_at IS NULL
     ) a WHERE $1::int IS NULL OR a.application_id = $1 ORDER BY a.id::bigint DESC LIMIT ${ALERTS_SHOWN}`,
    { bind: [applicationId, [...ALERT_KINDS]], type: QueryTypes.SELECT },
  );
  const same = (a: { application_id: number; chain_token_id: number }, k: { application_id: number; chain_token_id: number }) =>
    a.application_id === k.application_id && a.chain_token_id === k.chain_token_id;
  return {
    tokens: keys.map((k) => {
      const mine = counts.filter((c) => same(c, k));
      const fw = feeWallets.find((f) => f.application_id === k.application_id && f.environment === k.environment && f.code === k.code);
      const mySkips = skips.filter((x) => same(x, k));
      const nativeDecimals = k.native_decimals ?? 0;
      return {
        applicationId: k.application_id,
        environment: k.environment,
        chainCode: k.code,
        chainTokenId: k.chain_token_id,
        token: k.symbol,
        nativeSymbol: k.native_symbol,
        settlementMode: k.settlement_mode,
        policy: k.enabled === null ? 'no policy' : k.enabled ? 'enabled' : 'disabled',
        open: Object.fromEntries(OPEN_ITEM_STATUSES.map((st) => [st, mine.find((c) => c.status === st)?.n ?? 0])) as Record<(typeof OPEN_ITEM_STATUSES)[number], number>,
        failed: mine.find((c) => c.status === 'FAILED')?.n ?? 0,
        waiting: waiting.filter((w) => same(w, k)).map((w) => ({ reason: w.reason, items: w.n })),
        skippedTotal: mySkips[0]?.total ?? 0,
        skipped: mySkips.map((x) => ({
          address: x.address, amount: formatUnits(BigInt(x.amount), k.decimals), fee: x.fee === null ? null : formatUnits(BigInt(x.fee), nativeDecimals), reason: x.reason, skippedTime: formatLocalDateTime(x.skipped_at),
          // SKIP: held back until a new deposit, the schedule or the max wait; WAIT: looked at again every pass, alerted once it lasts
          kind: x.holds ? 'SKIP' as const : 'WAIT' as const, sinceTime: formatLocalDateTime(x.since),
        })),
        feeWallet: fw ? { address: fw.address, balance: fmtOr(fw.on_chain, fw.decimals), symbol: fw.symbol, observedTime: formatLocalDateTime(fw.observed_at) } : null,
      };
    }),
    alerts: alerts.map((a) => ({
      id: Number(a.id), kind: a.kind, applicationId: a.application_id, environment: a.environment, chainCode: a.code, message: a.message, details: a.details,
      createdTime: formatLocalDateTime(a.created_at),
    })),
  };
}


/** What the item list filters on; null: any. */
export interface ItemFilter {
  readonly app?: number | null;
  readonly status?: string | null;
  readonly stage?: string | null;
  /** Chain code (any environment). */
  readonly chain?: string | null;
  /** chainTokenId, or a token symbol (any case). */
  readonly token?: string | null;
  /** Keyset: only items with a smaller id. */
  readonly before?: number | null;
  readonly limit: number;
}

/** Collection items, newest first (`wcs collect items`, the console's item list: keyset paging by id). */
export async function listItems(sequelize: Sequelize, f: ItemFilter): Promise<ItemRow[]> {
  const token = f.token ?? null;
  const tokenId = token !== null && /^[0-9]{1,10}$/.test(token) ? Number(token) : null;
  const symbol = token !== null && tokenId === null ? token.trim().toUpperCase() : null;
  const rows = await loadItems(sequelize, null,
    `i.id IN (SELECT x.id FROM collection_items x
               WHERE ($1::int IS NULL OR x.application_id = $1) AND ($2::text IS NULL OR x.status = $2) AND ($3::text IS NULL OR x.stage = $3)
                 AND ($5::text IS NULL OR x.chain_id IN (SELECT c.id FROM chains c WHERE c.code = $5))
                 AND ($6::int IS NULL OR x.chain_token_id = $6)
                 AND ($7::text IS NULL OR x.chain_token_id IN (SELECT t.id FROM chain_tokens t WHERE upper(t.symbol) = $7))
                 AND ($8::bigint IS NULL OR x.id < $8)
               ORDER BY x.id DESC LIMIT $4)`,
    [f.app ?? null, f.status ?? null, f.stage ?? null, f.limit, f.chain ? f.chain.trim().toUpperCase() : null, tokenId, symbol, f.before ?? null]);
  return rows.reverse();
}

/**
 * Why an item cannot be retried (null: it can, as far as the item itself goes; another open
 * item on the same address is checked in the retry's transaction). Only a FAILED HOT_GATHER
 * item is retried; a cold transfer is made anew by the watermark check.
 */
export function retryRefusal(id: number | string, i: { status: string; stage: string }): string | null {
  if (i.status !== 'FAILED') return `item ${id} is ${i.status}: only a FAILED item can be retried`;
  if (i.stage !== 'HOT_GATHER') return `item ${id} is a ${i.stage}: cold transfers are not retried; the watermark check makes a new one while the hot wallet stays above its high watermark`;
  return null;
}

/**
 * `wcs collect retry` and the console's Retry: one transaction, the item locked, checked, moved
 * back to PLANNED and the change audited (`collect.item.retry`, before and after). A refusal
 * (CollectCommandError) writes nothing.
 */
export async function retryItem(sequelize: Sequelize, actor: AuditActor, id: number) {
  try {
    return await sequelize.transaction(async (t) => {
      const [i] = await sequelize.query<{
        id: string; stage: string; status: string; chain_token_id: number; from_address: string; failure_code: string | null; failure_message: string | null; retry_times: number;
        transfer_id: string | null; tx_hash: string | null; topup_transfer_id: string | null; topup_status: string | null;
      }>(
        `SELECT i.id::text AS id, i.stage, i.status, i.chain_token_id, i.from_address, i.failure_code, i.failure_message, i.retry_times, i.transfer_id::text AS transfer_id, i.tx_hash,
                i.topup_transfer_id::text AS topup_transfer_id, (SELECT x.status FROM transfers x WHERE x.id = i.topup_transfer_id) AS topup_status
           FROM collection_items i WHERE i.id = $1 FOR UPDATE OF i`,
        { bind: [id], type: QueryTypes.SELECT, transaction: t },
      );
      if (!i) throw new CollectCommandError('COLLECTION_ITEM_NOT_FOUND', `no collection item ${id}`);
      const refusal = retryRefusal(id, i);
      if (refusal !== null) throw new CollectCommandError('COLLECTION_ITEM_NOT_RETRYABLE', refusal);
      const [open] = await sequelize.query<{ id: string; status: string }>(
        `SELECT id::text AS id, status FROM collection_items WHERE chain_token_id = $1 AND from_address = $2 AND stage = $3 AND id <> $4 AND status NOT IN ('SUCCESS','FAILED') LIMIT 1`,
        { bind: [i.chain_token_id, i.from_address, i.stage, id], type: QueryTypes.SELECT, transaction: t },
      );
      if (open) {
        throw new CollectCommandError('COLLECTION_ITEM_NOT_RETRYABLE',
          `item ${open.id} (${open.status}) is already collecting ${i.from_address}: retry item ${id} once it has ended`);
      }
      const keepTopUp = i.topup_transfer_id !== null && i.topup_status === 'SUCCESS';
      await sequelize.query(
        `UPDATE collection_items SET status = 'PLANNED', retry_times = retry_times + 1, failure_code = NULL, failure_message = NULL, waiting_reason = NULL,
                transfer_id = NULL, tx_hash = NULL, gas_fee = NULL, finished_at = NULL,
                topup_transfer_id = CASE WHEN $2::boolean THEN topup_transfer_id END, fee_per_unit = CASE WHEN $2::boolean THEN fee_per_unit END, updated_at = now()
          WHERE id = $1`,
        { bind: [id, keepTopUp], transaction: t },
      );
      const [row] = await loadItems(sequelize, t, 'i.id = $1', [id]);
      await new AuditLog(sequelize).record(t, actor, {
        action: 'collect.item.retry',
        target: itemTarget(id),
        before: {
          status: i.status, stage: i.stage, retryTimes: i.retry_times, failureCode: i.failure_code, failureMessage: i.failure_message,
          transferId: i.transfer_id, txHash: i.tx_hash, topUpTransferId: i.topup_transfer_id, topUpStatus: i.topup_status,
        },
        after: {
          status: row!.status, stage: row!.stage, retryTimes: row!.retry_times, failureCode: null, failureMessage: null,
          transferId: null, txHash: null, topUpTransferId: keepTopUp ? i.topup_transfer_id : null, keptTopUp: keepTopUp,
        },
      });
      return {
        item: itemView(row!),
        previous: {
          failureCode: i.failure_code, failureMessage: i.failure_message, transferId: i.transfer_id, txHash: i.tx_hash, topUpTransferId: i.topup_transfer_id,
          topUpStatus: i.topup_status, keptTopUp: keepTopUp,
        },
      };
    });
  } catch (e) {
    // the one-open-item index (another worker planned the address meanwhile)
    if (e instanceof UniqueConstraintError) throw new CollectCommandError('COLLECTION_ITEM_NOT_RETRYABLE', `another item is already collecting that address: retry item ${id} once it has ended`);
    throw e;
  }
}

