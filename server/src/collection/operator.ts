import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { WcsError, canPay, formatLocalDateTime, type AdapterRegistry, type ChainDefinition, type ChainEndpoint, type Environment } from '@wcs/core';
import type { Catalogue, ChainView } from '../catalogue/catalogue';
import { AuditLog, type AuditActor } from '../operators/audit';
import { policyFromRow, policyView, resolvePolicy, type PolicyInput, type PolicyRow, type PolicyValues, type PolicyView } from './policy-input';

/**
 * What the operator's collection commands read and change (wcs collect …; docs/collection.md):
 * the policy list and its changes, collection addresses, runs (items, the status report and
 * retries are in operator-items.ts). The CLI
 * wires options and output around these; the console (console/pages/collection.ts) calls the
 * same functions. Every change is audited in its own transaction (docs/console.md, "Audit log").
 */

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
              hot_low::text AS hot_low, hot_target::text AS hot_target, hot_high::text AS hot_high, sweep_mode
         FROM collection_policies WHERE application_id = $1 AND chain_token_id = $2 FOR UPDATE`,
      { bind: [app.id, token.id], type: QueryTypes.SELECT, transaction: t },
    );
    const existing = row ? policyFromRow(row) : null;
    // throws PolicyInputError before anything is written
    const resolved = resolvePolicy(o, { symbol: token.symbol, decimals: token.decimals, native: token.contract === null, nativeSymbol: native?.symbol ?? chain.nativeSymbol, delegable: chain.family === 'evm', chainCode: chain.code }, existing);
    const v = resolved.values;
    if (existing !== null && resolved.changed.length === 0) return { created: false, values: v, changed: resolved.changed, before: existing };
    const str = (x: bigint | null) => (x === null ? null : x.toString());
    await sequelize.query(
      `INSERT INTO collection_policies (application_id, chain_token_id, enabled, threshold, max_fee_bps, native_value, on_confirmed, schedule_seconds, max_wait_seconds,
                                        hot_low, hot_target, hot_high, sweep_mode, updated_at)
       VALUES ($1, $2, $3, $4::numeric, $5, $6::numeric, $7, $8, $9, $10::numeric, $11::numeric, $12::numeric, $13, now())
       ON CONFLICT (application_id, chain_token_id) DO UPDATE SET enabled = EXCLUDED.enabled, threshold = EXCLUDED.threshold, max_fee_bps = EXCLUDED.max_fee_bps,
              native_value = EXCLUDED.native_value, on_confirmed = EXCLUDED.on_confirmed, schedule_seconds = EXCLUDED.schedule_seconds,
              max_wait_seconds = EXCLUDED.max_wait_seconds, hot_low = EXCLUDED.hot_low, hot_target = EXCLUDED.hot_target, hot_high = EXCLUDED.hot_high, sweep_mode = EXCLUDED.sweep_mode, updated_at = now()`,
      {
        bind: [app.id, token.id, v.enabled, v.threshold.toString(), v.maxFeeBps, str(v.nativeValue), v.onConfirmed, v.scheduleSeconds, v.maxWaitSeconds,
          str(v.hotLow), str(v.hotTarget), str(v.hotHigh), v.sweepMode],
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
  o: { app: number; chain: string; kind: string; address: string; memo: string | null }, endpoints: ReadonlyMap<string, ChainEndpoint> = new Map()) {
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
  const refusal = await receiveRefusal(sequelize, registry, endpoints, chain, app.id, v.normalized);
  if (refusal !== null) throw new CollectInputError(`--address: ${refusal}`);
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

/**
 * On chains where an account must opt in to a token before it can receive it (the node's
 * `receivable`: Stellar trustlines), why `address` cannot be a COLD or MERCHANT target of the
 * application: an active token of the chain the application has an enabled collection policy for that the address
 * cannot receive now (no account, no trustline, not authorized), or a node that cannot be asked.
 * Null when it can receive all of them, when the chain has no such rule, or when no RPC endpoint
 * is configured for the chain (nothing can be swept there either; the item would wait, named).
 */
export async function receiveRefusal(sequelize: Sequelize, registry: AdapterRegistry, endpoints: ReadonlyMap<string, ChainEndpoint>, chain: ChainDefinition, applicationId: number, address: string): Promise<string | null> {
  const adapter = registry.forChain(chain);
  const endpoint = endpoints.get(`${chain.environment}:${chain.code}`);
  if (!canPay(adapter) || endpoint === undefined) return null;
  const node = adapter.createTransferNode(endpoint);
  if (!node.receivable) return null;
  const tokens = await sequelize.query<{ symbol: string; contract: string }>(
    `SELECT t.symbol, t.contract FROM collection_policies p JOIN chain_tokens t ON t.id = p.chain_token_id
      WHERE p.application_id = $1 AND t.chain_id = $2 AND t.contract IS NOT NULL AND p.enabled AND t.active ORDER BY t.id`,
    { bind: [applicationId, chain.id], type: QueryTypes.SELECT },
  );
  for (const t of tokens) {
    let can;
    try {
      can = await node.receivable(address, t.contract);
    } catch (e) {
      return `whether ${address} can receive ${t.symbol} could not be checked on ${chain.code} (${e instanceof Error ? e.message : String(e)}); nothing was changed, try again`;
    }
    if (!can.ok) return `${address} cannot receive ${t.symbol} (${t.contract}) on ${chain.code}: ${can.reason}: ${can.message}. Its owner must open it first (on Stellar a trustline to the asset), else every transfer there would fail`;
  }
  return null;
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
            p.hot_target::text AS hot_target, p.hot_high::text AS hot_high, p.sweep_mode, p.last_run_at, p.updated_at
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
