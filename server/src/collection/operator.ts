import { QueryTypes, UniqueConstraintError, type Sequelize, type Transaction } from 'sequelize';
import { WcsError, formatLocalDateTime, formatUnits, type AdapterRegistry, type Environment } from '@wcs/core';
import type { Catalogue, ChainView } from '../catalogue/catalogue';
import { AuditLog, type AuditActor } from '../operators/audit';
import { collectEvent, loadItems, type ItemRow } from './collect-events';
import { feeWalletReport } from './fee-wallets';
import { policyFromRow, policyView, resolvePolicy, type PolicyInput, type PolicyRow, type PolicyValues, type PolicyView } from './policy-input';

/**
 * What the operator's collection commands read and change (wcs collect …; docs/collection.md):
 * the policy list and its changes, the status report, the item list, an item's retry. The CLI
 * wires options and output around these; the console (console/pages/collection.ts) calls the
 * same functions. Every change is audited in its own transaction (docs/console.md, "Audit log").
 */

const OPEN_ITEM_STATUSES = ['PLANNED', 'TOPPING_UP', 'FUNDED', 'SWEEPING'] as const;
const ALERT_KINDS = ['FEE_WALLET_LOW', 'HOT_WALLET_LOW', 'COLLECTION_FAILED', 'COLLECTION_STUCK'] as const;
/** Skipped addresses listed per token by `wcs collect status` (the newest; the total is given). */
const SKIPS_SHOWN = 20;
const ALERTS_SHOWN = 100;

const fmtOr = (v: string | null, decimals: number) => (v === null ? null : formatUnits(BigInt(v), decimals));

/** A refusal by the collection commands (exit 1): its name is the stable part (`COLLECTION_ITEM_NOT_RETRYABLE`). */
export class CollectCommandError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

export interface AppRow {
  id: number;
  name: string;
  environment: Environment;
  status: string;
  enabled_chains: string[];
  settlement_mode: 'ON_CONFIRM' | 'PASS_THROUGH';
}

/** The application, or APPLICATION_NOT_FOUND naming the ones there are. */
export async function appOf(sequelize: Sequelize, id: number, t?: Transaction): Promise<AppRow> {
  const [a] = await sequelize.query<AppRow>(
    `SELECT id, name, environment, status, enabled_chains, settlement_mode FROM applications WHERE id = $1${t ? ' FOR UPDATE' : ''}`,
    { bind: [id], type: QueryTypes.SELECT, ...(t ? { transaction: t } : {}) },
  );
  if (a) return a;
  const ids = await sequelize.query<{ id: number }>('SELECT id FROM applications ORDER BY id LIMIT 21', { type: QueryTypes.SELECT });
  const list = ids.length === 0 ? 'there are none yet (wcs app create)' : `applications: ${ids.slice(0, 20).map((r) => r.id).join(', ')}${ids.length > 20 ? ', …' : ''}`;
  throw new WcsError('APPLICATION_NOT_FOUND', { message: `No application ${id}; ${list}` });
}

/** A chain of the catalogue enabled for the application (CHAIN_UNKNOWN / CHAIN_NOT_ENABLED naming the valid codes). */
export function chainOf(catalogue: Catalogue, app: AppRow, code: string): ChainView {
  const c = code.trim().toUpperCase();
  if (!catalogue.has(app.environment, c)) {
    throw new WcsError('CHAIN_UNKNOWN', {
      message: `Unknown chain code ${JSON.stringify(code)} in ${app.environment}; the catalogue has ${catalogue.chains(app.environment).map((x) => x.code).join(', ')}`,
      details: { chainCode: code },
    });
  }
  if (!app.enabled_chains.includes(c)) {
    throw new WcsError('CHAIN_NOT_ENABLED', {
      message: `${c} is not enabled for application ${app.id}; enabled: ${app.enabled_chains.join(', ') || '(none)'} (wcs app set-chains)`,
      details: { chainCode: c },
    });
  }
  return catalogue.chain(app.environment, c);
}

/** A token of the chain by symbol (any case) or chainTokenId; TOKEN_UNKNOWN naming the chain's tokens. */
export function tokenOf(chain: ChainView, symbol: string) {
  const choices = chain.tokens.map((t) => `${t.symbol} (#${t.id})`).join(', ');
  const byId = /^[0-9]{1,10}$/.test(symbol) ? chain.tokens.find((t) => t.id === Number(symbol)) : undefined;
  if (byId) return byId;
  const matches = chain.tokens.filter((t) => t.symbol.toUpperCase() === symbol.trim().toUpperCase());
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) throw new WcsError('TOKEN_UNKNOWN', { message: `${symbol} names ${matches.length} tokens on ${chain.code}: give the chainTokenId, one of ${matches.map((t) => t.id).join(', ')}` });
  throw new WcsError('TOKEN_UNKNOWN', { message: `No token ${JSON.stringify(symbol)} on ${chain.environment}:${chain.code}; its tokens: ${choices}` });
}

/** The audit target of a policy: `app:<id>/token:<chainTokenId>`. */
export const policyTarget = (applicationId: number, chainTokenId: number) => `app:${applicationId}/token:${chainTokenId}`;
/** The audit target of a collection item: `collection-item:<id>`. */
export const itemTarget = (id: number | string) => `collection-item:${id}`;

export interface PolicySetRequest extends PolicyInput {
  readonly app: number;
  /** Chain code (any case). */
  readonly chain: string;
  /** Token symbol (any case) or chainTokenId. */
  readonly token: string;
}

/**
 * `wcs collect policy set` and the console's policy form: creates or changes one token's policy
 * (options left out keep their value, or the default on a new policy). Bad input throws
 * (WcsError for the application, chain or token; PolicyInputError naming every option at
 * fault) and writes nothing; a change is audited (`collect.policy.set`, before and after) in
 * its transaction; a call that changes nothing writes nothing.
 */
export async function setPolicy(sequelize: Sequelize, catalogue: Catalogue, actor: AuditActor, o: PolicySetRequest) {
  const app = await appOf(sequelize, o.app);
  const chain = chainOf(catalogue, app, o.chain);
  const token = tokenOf(chain, o.token);
  const native = chain.tokens.find((t) => t.contract === null);
  const { created, values, changed, before } = await sequelize.transaction(async (t) => {
    const [row] = await sequelize.query<PolicyRow>(
      `SELECT enabled, threshold::text AS threshold, max_fee_bps, native_value::text AS native_value, on_confirmed, schedule_seconds, max_wait_seconds,
              hot_low::text AS hot_low, hot_target::text AS hot_target, hot_high::text AS hot_high
         FROM collection_policies WHERE application_id = $1 AND chain_token_id = $2 FOR UPDATE`,
      { bind: [app.id, token.id], type: QueryTypes.SELECT, transaction: t },
    );
    const existing = row ? policyFromRow(row) : null;
    // throws PolicyInputError before anything is written
    const resolved = resolvePolicy(o, { symbol: token.symbol, decimals: token.decimals, native: token.contract === null, nativeSymbol: native?.symbol ?? chain.nativeSymbol }, existing);
    const v = resolved.values;
    if (existing !== null && resolved.changed.length === 0) return { created: false, values: v, changed: resolved.changed, before: existing };
    const str = (x: bigint | null) => (x === null ? null : x.toString());
    await sequelize.query(
      `INSERT INTO collection_policies (application_id, chain_token_id, enabled, threshold, max_fee_bps, native_value, on_confirmed, schedule_seconds, max_wait_seconds,
                                        hot_low, hot_target, hot_high, updated_at)
       VALUES ($1, $2, $3, $4::numeric, $5, $6::numeric, $7, $8, $9, $10::numeric, $11::numeric, $12::numeric, now())
       ON CONFLICT (application_id, chain_token_id) DO UPDATE SET enabled = EXCLUDED.enabled, threshold = EXCLUDED.threshold, max_fee_bps = EXCLUDED.max_fee_bps,
              native_value = EXCLUDED.native_value, on_confirmed = EXCLUDED.on_confirmed, schedule_seconds = EXCLUDED.schedule_seconds,
              max_wait_seconds = EXCLUDED.max_wait_seconds, hot_low = EXCLUDED.hot_low, hot_target = EXCLUDED.hot_target, hot_high = EXCLUDED.hot_high, updated_at = now()`,
      {
        bind: [app.id, token.id, v.enabled, v.threshold.toString(), v.maxFeeBps, str(v.nativeValue), v.onConfirmed, v.scheduleSeconds, v.maxWaitSeconds,
          str(v.hotLow), str(v.hotTarget), str(v.hotHigh)],
        transaction: t,
      },
    );
    await new AuditLog(sequelize).record(t, actor, {
      action: 'collect.policy.set',
      target: policyTarget(app.id, token.id),
      before: existing === null ? null : policyAudit(existing, token.decimals),
      after: policyAudit(v, token.decimals),
    });
    return { created: existing === null, values: v, changed: resolved.changed, before: existing };
  });
  const [p] = await listPolicies(sequelize, app.id, token.id);
  const notes: string[] = [];
  if (token.contract !== null && values.nativeValue === null && values.enabled) {
    notes.push(`no --native-value: the cost guard cannot price ${token.symbol} sweeps' ${native?.symbol ?? chain.nativeSymbol} fees, so they are skipped until it is set`);
  }
  if (values.enabled && values.scheduleSeconds === null && !values.onConfirmed) notes.push('--on-confirmed false and no schedule: nothing triggers planning of this token');
  const fields = (x: PolicyValues | null): PolicyView | null => (x === null ? null : policyView(x, token.decimals));
  return {
    view: { ...p!, created, changed: changed.map((k) => (k === 'maxFeeBps' ? 'maxFeePercent' : k)), notes },
    log: { applicationId: app.id, chain: `${chain.environment}:${chain.code}`, chainTokenId: token.id, token: token.symbol, changed, before: fields(before), after: fields(values) },
  };
}

/** A policy as the audit log holds it: the fields as `policy show` prints them. */
function policyAudit(v: PolicyValues, decimals: number): Record<string, unknown> {
  return { ...policyView(v, decimals) };
}

/**
 * `wcs collect run`: the next planning pass treats the token's policy as due now (its last run
 * and the pass under way cleared). Refused without an enabled policy (CollectCommandError).
 * Audited `collect.policy.run` (target as the policy's) in the change's transaction; a policy
 * already due writes nothing.
 */
export async function requestRun(sequelize: Sequelize, catalogue: Catalogue, actor: AuditActor, o: { app: number; chain: string; token: string }) {
  const app = await appOf(sequelize, o.app);
  const chain = chainOf(catalogue, app, o.chain);
  const token = tokenOf(chain, o.token);
  const policy = await sequelize.transaction(async (t) => {
    const [p] = await sequelize.query<{ enabled: boolean; schedule_seconds: number | null; last_run_at: Date | null; pass_started_at: Date | null }>(
      'SELECT enabled, schedule_seconds, last_run_at, pass_started_at FROM collection_policies WHERE application_id = $1 AND chain_token_id = $2 FOR UPDATE',
      { bind: [app.id, token.id], type: QueryTypes.SELECT, transaction: t },
    );
    if (!p) throw new CollectCommandError('COLLECTION_POLICY_NOT_FOUND', `application ${app.id} has no collection policy for ${token.symbol} on ${chain.code}: wcs collect policy set first`);
    if (!p.enabled) throw new CollectCommandError('COLLECTION_POLICY_DISABLED', `application ${app.id}'s ${chain.code} ${token.symbol} policy is disabled: wcs collect policy set --enable first`);
    if (p.last_run_at === null && p.pass_started_at === null) return p;
    await sequelize.query('UPDATE collection_policies SET last_run_at = NULL, pass_started_at = NULL WHERE application_id = $1 AND chain_token_id = $2', { bind: [app.id, token.id], transaction: t });
    await new AuditLog(sequelize).record(t, actor, {
      action: 'collect.policy.run',
      target: policyTarget(app.id, token.id),
      before: { lastRunTime: formatLocalDateTime(p.last_run_at), passStartedTime: formatLocalDateTime(p.pass_started_at) },
      after: { lastRunTime: null, passStartedTime: null },
    });
    return p;
  });
  return { app, chain, token, policy };
}

/** Bad input to a collection change (the CLI's usage error, exit 2): nothing was written. */
export class CollectInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CollectInputError';
  }
}

export const COLLECTION_ADDRESS_KINDS = ['COLD', 'MERCHANT'] as const;

/**
 * `wcs collect address set`: an application's COLD or MERCHANT address on a chain, checked by
 * the chain's adapter (network included) and stored in its canonical form; never an address the
 * service collects from. Audited `collect.address.set` (target `app:<id>/chain:<code>/<kind>`,
 * before and after) in the change's transaction; the address it already has writes nothing.
 */
export async function setCollectionAddress(sequelize: Sequelize, catalogue: Catalogue, registry: AdapterRegistry, actor: AuditActor,
  o: { app: number; chain: string; kind: string; address: string; memo: string | null }) {
  if (!(COLLECTION_ADDRESS_KINDS as readonly string[]).includes(o.kind)) throw new CollectInputError(`--kind: must be one of ${COLLECTION_ADDRESS_KINDS.join(', ')}`);
  const app = await appOf(sequelize, o.app);
  const chain = chainOf(catalogue, app, o.chain);
  const v = registry.forChain(chain).address.validate(o.address, o.memo);
  if (!v.valid) throw new CollectInputError(`--address: not a valid ${chain.code} (${chain.environment}, ${chain.network}) address: ${v.reason}`);
  // a target the service itself holds would move funds in a circle
  const own = await sequelize.query<{ what: string }>(
    `SELECT 'the application''s hot wallet' AS what FROM hot_wallets WHERE chain_id = $1 AND address = $2
     UNION ALL SELECT 'a fee wallet' FROM fee_wallets WHERE chain_id = $1 AND address = $2
     UNION ALL SELECT 'a deposit address of application ' || application_id FROM addresses WHERE chain_id = $1 AND address = $2
     UNION ALL SELECT 'the shared deposit account of application ' || application_id FROM deposit_accounts WHERE chain_id = $1 AND address = $2
     LIMIT 1`,
    { bind: [chain.id, v.normalized], type: QueryTypes.SELECT },
  );
  if (own[0]) throw new CollectInputError(`--address: ${v.normalized} is ${own[0].what} on ${chain.code}: a ${o.kind} target must be an address the service does not collect from`);
  const previous = await sequelize.transaction(async (t) => {
    const [old] = await sequelize.query<{ address: string; memo: string | null }>(
      'SELECT address, memo FROM collection_addresses WHERE application_id = $1 AND chain_id = $2 AND kind = $3 FOR UPDATE',
      { bind: [app.id, chain.id, o.kind], type: QueryTypes.SELECT, transaction: t },
    );
    if (old && old.address === v.normalized && old.memo === v.memo) return old;
    await sequelize.query(
      `INSERT INTO collection_addresses (application_id, chain_id, kind, address, memo, updated_at) VALUES ($1, $2, $3, $4, $5, now())
       ON CONFLICT (application_id, chain_id, kind) DO UPDATE SET address = EXCLUDED.address, memo = EXCLUDED.memo, updated_at = now()`,
      { bind: [app.id, chain.id, o.kind, v.normalized, v.memo], transaction: t },
    );
    await new AuditLog(sequelize).record(t, actor, {
      action: 'collect.address.set',
      target: `app:${app.id}/chain:${chain.code}/${o.kind}`,
      before: old ? { address: old.address, memo: old.memo } : null,
      after: { address: v.normalized, memo: v.memo },
    });
    return old ?? null;
  });
  return {
    applicationId: app.id, environment: chain.environment, chainCode: chain.code, kind: o.kind, address: v.normalized, memo: v.memo,
    previousAddress: previous?.address ?? null, previousMemo: previous?.memo ?? null,
  };
}

export interface PolicyListRow extends PolicyRow {
  application_id: number;
  chain_token_id: number;
  code: string;
  environment: Environment;
  symbol: string;
  decimals: number;
  last_run_at: Date | null;
  updated_at: Date;
}

export async function listPolicies(sequelize: Sequelize, applicationId: number | null, chainTokenId: number | null = null) {
  const rows = await sequelize.query<PolicyListRow>(
    `SELECT p.application_id, p.chain_token_id, c.code, c.environment, t.symbol, t.decimals, p.enabled, p.threshold::text AS threshold, p.max_fee_bps,
            p.native_value::text AS native_value, p.on_confirmed, p.schedule_seconds, p.max_wait_seconds, p.hot_low::text AS hot_low,
            p.hot_target::text AS hot_target, p.hot_high::text AS hot_high, p.last_run_at, p.updated_at
       FROM collection_policies p JOIN chain_tokens t ON t.id = p.chain_token_id JOIN chains c ON c.id = t.chain_id
      WHERE ($1::int IS NULL OR p.application_id = $1) AND ($2::int IS NULL OR p.chain_token_id = $2)
      ORDER BY p.application_id, c.id, t.id`,
    { bind: [applicationId, chainTokenId], type: QueryTypes.SELECT },
  );
  return rows.map((r) => ({
    applicationId: r.application_id,
    environment: r.environment,
    chainCode: r.code,
    chainTokenId: r.chain_token_id,
    token: r.symbol,
    decimals: r.decimals,
    ...policyView(policyFromRow(r), r.decimals),
    lastRunTime: formatLocalDateTime(r.last_run_at),
    updateTime: formatLocalDateTime(r.updated_at),
  }));
}

/** The fields of the collect event (collectEvent) the CLI reads, plus the token symbol and why a PLANNED item waits. */
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
  return { ...(collectEvent(i) as unknown as Omit<ItemView, 'token' | 'waitingReason'>), token: i.symbol, waitingReason: i.waiting_reason };
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
  const skips = await sequelize.query<{ application_id: number; chain_token_id: number; address: string; amount: string; fee: string; reason: string; skipped_at: Date; total: number }>(
    `SELECT * FROM (
       SELECT application_id, chain_token_id, address, amount::text AS amount, fee::text AS fee, reason, skipped_at,
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
          address: x.address, amount: formatUnits(BigInt(x.amount), k.decimals), fee: formatUnits(BigInt(x.fee), nativeDecimals), reason: x.reason, skippedTime: formatLocalDateTime(x.skipped_at),
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

