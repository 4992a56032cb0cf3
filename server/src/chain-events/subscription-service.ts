import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { formatLocalDateTime, invalidParameter, servesChainEvents, WcsError, type AdapterRegistry, type Environment } from '@wcs/core';
import type { Catalogue, ChainView } from '../catalogue/catalogue';
import type { ScanStatus } from '../deposits/scan-worker';
import { trimDecimal } from './monitor';
import { AuditLog, type AuditActor } from '../operators/audit';
import type { SubscriptionDirection } from './matching';
import type { ChainSubscription } from '../contract/responses/chain-event';

/** Limits (docs/chain-events.md, "Limits"). */
export const SUBSCRIPTION_LIMITS = Object.freeze({
  addressesPerRequest: 1_000,
  addressesPerSubscription: 10_000,
  subscriptionsPerApplication: 100,
  addressesPerApplication: 100_000,
});

export const APP_SUBSCRIPTION_NO_RE = /^[A-Za-z0-9_.:-]{1,64}$/;
/** A positive decimal in token units: up to 60 integer digits and 18 decimals. */
export const MIN_AMOUNT_RE = /^(0|[1-9]\d{0,59})(\.\d{1,18})?$/;

export type SubscriptionStatus = 'ACTIVE' | 'PAUSED';

/** Who asks: an application (the signed API) or an operator naming one (the CLI). */
export interface SubscriptionCaller {
  readonly applicationId: number;
  readonly environment: Environment;
  readonly enabledChains: readonly string[];
  /** An operator acting for the application: the change is audited in its transaction (docs/console.md, "Audit log"). */
  readonly operator?: AuditActor;
}

const subscriptionTarget = (id: number | string) => `subscription:${id}`;

export interface SubscriptionInput {
  readonly appSubscriptionNo: string;
  readonly chainCode: string;
  readonly addresses: readonly string[];
  readonly direction: SubscriptionDirection;
  /** Token filter by catalogue id and by contract (their union); both null: every token. */
  readonly chainTokenIds: readonly number[] | null;
  readonly contractAddresses: readonly string[] | null;
  readonly minAmount: string | null;
}

export interface SubscriptionUpdate {
  readonly id: number;
  readonly direction?: SubscriptionDirection;
  /** Present: replaces the token filter (both null: every token). */
  readonly tokens?: { readonly chainTokenIds: readonly number[] | null; readonly contractAddresses: readonly string[] | null };
  /** Present: replaces the minimum (null: none). */
  readonly minAmount?: string | null;
  readonly status?: SubscriptionStatus;
  readonly addAddresses?: readonly string[];
  readonly removeAddresses?: readonly string[];
}

/** A subscription as the API returns it (docs/chain-events.md). */
export type SubscriptionView = ChainSubscription;

interface Row {
  id: string; app_subscription_no: string; application_id: number; chain_id: number; code: string; direction: SubscriptionDirection;
  chain_token_ids: number[] | null; min_amount: string | null; status: SubscriptionStatus; address_count: string; created_at: Date; updated_at: Date;
}

const SELECT = `SELECT s.id::text AS id, s.app_subscription_no, s.application_id, s.chain_id, c.code, s.direction, s.chain_token_ids, s.min_amount::text AS min_amount,
  s.status, (SELECT count(*) FROM chain_subscription_addresses a WHERE a.subscription_id = s.id)::text AS address_count, s.created_at, s.updated_at
  FROM chain_subscriptions s JOIN chains c ON c.id = s.chain_id`;

function view(r: Row, addresses?: string[]): SubscriptionView {
  return {
    id: Number(r.id), appSubscriptionNo: r.app_subscription_no, applicationId: r.application_id, chainId: r.chain_id, chainCode: r.code,
    direction: r.direction, chainTokenIds: r.chain_token_ids ? [...r.chain_token_ids].sort((a, b) => a - b) : null, minAmount: trimDecimal(r.min_amount),
    status: r.status, addressCount: Number(r.address_count), ...(addresses ? { addresses } : {}),
    createTime: formatLocalDateTime(r.created_at)!, updateTime: formatLocalDateTime(r.updated_at)!,
  };
}

/**
 * Chain event subscriptions: create (idempotent on appSubscriptionNo), get, list, update,
 * delete. Every query is scoped to the caller's application; another application's
 * subscription is "not found". A change bumps the chain's monitor version in its transaction,
 * so every scanner reloads its monitored addresses at its next step.
 */
export class SubscriptionService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly catalogue: Catalogue,
    private readonly registry: AdapterRegistry,
    /** Whether the chain's deposits are scanned here (the scanner matches subscriptions). */
    private readonly scanStatusOf: (chain: ChainView) => ScanStatus,
  ) {}

  /** Per chain id: whether its adapter's scanner serves chain events (a block scanner, or a history scanner with head cursors). */
  private readonly servesEvents = new Map<number, boolean>();

  /**
   * Whether the chain's scanner can match subscriptions. Read from a scanner the adapter makes
   * for a placeholder endpoint: making one reads nothing from any node, and what it can do does
   * not depend on the endpoint.
   */
  private scannerServesEvents(chain: ChainView): boolean {
    let known = this.servesEvents.get(chain.id);
    if (known === undefined) {
      const make = this.registry.forChain(chain).createScanner;
      known = make !== undefined && servesChainEvents(make({ url: 'http://127.0.0.1:9/' }));
      this.servesEvents.set(chain.id, known);
    }
    return known;
  }

  /** The chain, if the caller may monitor it: enabled for the application, scanned here by a scanner that serves chain events. */
  private monitorableChain(caller: SubscriptionCaller, chainCode: string): ChainView {
    const chain = this.catalogue.chain(caller.environment, chainCode);
    if (!caller.enabledChains.includes(chainCode)) {
      throw new WcsError('CHAIN_NOT_ENABLED', { message: `Chain ${chainCode} is not enabled for this application`, details: { chainCode } });
    }
    const status = this.scanStatusOf(chain);
    if (status !== 'ENABLED') {
      throw new WcsError('CHAIN_EVENTS_UNSUPPORTED', {
        message: status === 'NO_RPC' ? `Chain ${chainCode} is not scanned by this service (no RPC endpoint is configured)` : `Chain ${chainCode} has no scanner in its adapter`,
        details: { chainCode },
      });
    }
    if (!this.scannerServesEvents(chain)) {
      throw new WcsError('CHAIN_EVENTS_UNSUPPORTED', {
        message: `Chain events are not available on ${chainCode}: its adapter's history scanner reads neither outgoing transfers nor from the chain's head (docs/chain-events.md, "Chains")`,
        details: { chainCode },
      });
    }
    return chain;
  }

  /** Canonical forms of addresses (AddressCodec.validate), de-duplicated, in order; the first invalid one is an error naming it. */
  private canonical(chain: ChainView, addresses: readonly string[], field: string): string[] {
    const codec = this.registry.forChain(chain).address;
    const out = new Set<string>();
    addresses.forEach((a, i) => {
      const v = codec.validate(a);
      if (!v.valid) {
        throw new WcsError('SUBSCRIPTION_ADDRESS_INVALID', { message: `${field}[${i}] is not a valid ${chain.code} address: ${v.reason}`, details: { field: `${field}[${i}]`, address: a } });
      }
      out.add(v.normalized);
    });
    return [...out];
  }

  /** The token filter as catalogue ids of the chain (sorted), or null for every token. */
  private tokenFilter(chain: ChainView, ids: readonly number[] | null, contracts: readonly string[] | null): number[] | null {
    if (ids === null && contracts === null) return null;
    const out = new Set<number>();
    for (const id of ids ?? []) {
      if (!chain.tokens.some((t) => t.id === id)) throw new WcsError('TOKEN_UNKNOWN', { message: `chainTokenId ${id} is not a token of ${chain.code}`, details: { chainTokenId: id } });
      out.add(id);
    }
    const evm = chain.family === 'evm';
    for (const c of contracts ?? []) {
      const t = chain.tokens.find((x) => x.contract !== null && (evm ? x.contract.toLowerCase() === c.toLowerCase() : x.contract === c));
      if (!t) throw new WcsError('TOKEN_UNKNOWN', { message: `contract ${c} is not a token of ${chain.code} in the catalogue`, details: { contractAddress: c } });
      out.add(t.id);
    }
    return [...out].sort((a, b) => a - b);
  }

  async create(caller: SubscriptionCaller, input: SubscriptionInput): Promise<SubscriptionView & { created: boolean }> {
    const chain = this.monitorableChain(caller, input.chainCode);
    const addresses = this.canonical(chain, input.addresses, 'addresses');
    const tokenIds = this.tokenFilter(chain, input.chainTokenIds, input.contractAddresses);
    const minAmount = normalizedMin(input.minAmount);
    if (addresses.length > SUBSCRIPTION_LIMITS.addressesPerSubscription) throw limit(`a subscription monitors at most ${SUBSCRIPTION_LIMITS.addressesPerSubscription} addresses`);
    return this.sequelize.transaction(async (t) => {
      await this.lockApplication(t, caller.applicationId);
      const [existing] = await this.sequelize.query<Row>(`${SELECT} WHERE s.application_id = $1 AND s.app_subscription_no = $2 AND s.status <> 'DELETED'`, {
        bind: [caller.applicationId, input.appSubscriptionNo], type: QueryTypes.SELECT, transaction: t,
      });
      if (existing) {
        const had = await this.addressesOf(t, existing.id);
        const same = existing.chain_id === chain.id && existing.direction === input.direction && trimDecimal(existing.min_amount) === minAmount
          && JSON.stringify(existing.chain_token_ids ? [...existing.chain_token_ids].sort((a, b) => a - b) : null) === JSON.stringify(tokenIds)
          && had.length === addresses.length && [...addresses].sort().every((a, i) => a === had[i]);
        if (!same) {
          throw new WcsError('CHAIN_SUBSCRIPTION_CONFLICT', {
            message: `appSubscriptionNo ${input.appSubscriptionNo} is already used by subscription ${existing.id} with other settings; it is unchanged (subscription/get?id=${existing.id} shows it)`,
            details: { appSubscriptionNo: input.appSubscriptionNo, id: Number(existing.id) },
          });
        }
        return { ...view(existing, had), created: false };
      }
      await this.checkApplicationLimits(t, caller.applicationId, 1, addresses.length);
      const [row] = await this.sequelize.query<{ id: string }>(
        `INSERT INTO chain_subscriptions (application_id, chain_id, app_subscription_no, direction, chain_token_ids, min_amount)
         VALUES ($1, $2, $3, $4, $5::int[], $6::numeric) RETURNING id::text AS id`,
        { bind: [caller.applicationId, chain.id, input.appSubscriptionNo, input.direction, tokenIds, minAmount], type: QueryTypes.SELECT, transaction: t },
      );
      await this.addAddresses(t, row!.id, chain.id, addresses);
      await bumpMonitor(this.sequelize, t, chain.id);
      const made = await this.load(t, caller.applicationId, Number(row!.id), true);
      if (caller.operator) {
        await new AuditLog(this.sequelize).record(t, caller.operator, { action: 'subscription.create', target: subscriptionTarget(made.id), before: null, after: { ...auditShape(made), applicationId: caller.applicationId } });
      }
      return { ...made, created: true };
    });
  }

  async get(applicationId: number, id: number): Promise<SubscriptionView> {
    return this.sequelize.transaction((t) => this.load(t, applicationId, id, true));
  }

  async list(applicationId: number, f: { chainCode?: string; status?: SubscriptionStatus; pageNo: number; pageSize: number }): Promise<{ list: SubscriptionView[]; total: number }> {
    const where = `s.application_id = $1 AND s.status <> 'DELETED' AND ($2::text IS NULL OR c.code = $2) AND ($3::text IS NULL OR s.status = $3)`;
    const bind = [applicationId, f.chainCode ?? null, f.status ?? null];
    const [count] = await this.sequelize.query<{ n: string }>(`SELECT count(*) AS n FROM chain_subscriptions s JOIN chains c ON c.id = s.chain_id WHERE ${where}`, { bind, type: QueryTypes.SELECT });
    const rows = await this.sequelize.query<Row>(`${SELECT} WHERE ${where} ORDER BY s.id DESC LIMIT $4 OFFSET $5`, {
      bind: [...bind, f.pageSize, (f.pageNo - 1) * f.pageSize], type: QueryTypes.SELECT,
    });
    return { list: rows.map((r) => view(r)), total: Number(count!.n) };
  }

  async update(caller: SubscriptionCaller, u: SubscriptionUpdate): Promise<SubscriptionView> {
    return this.sequelize.transaction(async (t) => {
      await this.lockApplication(t, caller.applicationId);
      const current = await this.load(t, caller.applicationId, u.id, false);
      const chain = this.catalogue.chain(caller.environment, current.chainCode);
      const add = u.addAddresses ? this.canonical(chain, u.addAddresses, 'addAddresses') : [];
      const remove = u.removeAddresses ? this.canonical(chain, u.removeAddresses, 'removeAddresses') : [];
      const tokenIds = u.tokens ? this.tokenFilter(chain, u.tokens.chainTokenIds, u.tokens.contractAddresses) : undefined;
      const minAmount = u.minAmount === undefined ? undefined : normalizedMin(u.minAmount);
      if (remove.length > 0) {
        await this.sequelize.query('DELETE FROM chain_subscription_addresses WHERE subscription_id = $1 AND address = ANY($2::text[])', { bind: [u.id, remove], transaction: t });
      }
      if (add.length > 0) {
        const [n] = await this.sequelize.query<{ n: string }>(
          'SELECT count(*) AS n FROM unnest($2::text[]) AS x(a) WHERE NOT EXISTS (SELECT 1 FROM chain_subscription_addresses WHERE subscription_id = $1 AND address = x.a)',
          { bind: [u.id, add], type: QueryTypes.SELECT, transaction: t },
        );
        await this.checkApplicationLimits(t, caller.applicationId, 0, Number(n!.n));
        await this.addAddresses(t, String(u.id), chain.id, add);
      }
      const [count] = await this.sequelize.query<{ n: string }>('SELECT count(*) AS n FROM chain_subscription_addresses WHERE subscription_id = $1', {
        bind: [u.id], type: QueryTypes.SELECT, transaction: t,
      });
      const n = Number(count!.n);
      if (n === 0) throw invalidParameter('removeAddresses', 'would leave the subscription without addresses; delete the subscription instead');
      if (n > SUBSCRIPTION_LIMITS.addressesPerSubscription) throw limit(`a subscription monitors at most ${SUBSCRIPTION_LIMITS.addressesPerSubscription} addresses`);
      await this.sequelize.query(
        `UPDATE chain_subscriptions SET direction = coalesce($2, direction),
                chain_token_ids = CASE WHEN $3::boolean THEN $4::int[] ELSE chain_token_ids END,
                min_amount = CASE WHEN $5::boolean THEN $6::numeric ELSE min_amount END,
                status = coalesce($7, status), updated_at = now()
          WHERE id = $1`,
        { bind: [u.id, u.direction ?? null, tokenIds !== undefined, tokenIds ?? null, minAmount !== undefined, minAmount ?? null, u.status ?? null], transaction: t },
      );
      await bumpMonitor(this.sequelize, t, chain.id);
      const after = await this.load(t, caller.applicationId, u.id, true);
      if (caller.operator) {
        await new AuditLog(this.sequelize).record(t, caller.operator, { action: 'subscription.update', target: subscriptionTarget(u.id), before: auditShape(current), after: auditShape(after) });
      }
      return after;
    });
  }

  /** Ends a subscription: no event is matched or sent for it from the scanners' next step (its recorded events stay listable). */
  async delete(applicationId: number, id: number, operator?: AuditActor): Promise<{ id: number; status: 'DELETED' }> {
    return this.sequelize.transaction(async (t) => {
      await this.lockApplication(t, applicationId);
      const current = await this.load(t, applicationId, id, false);
      await this.sequelize.query(`UPDATE chain_subscriptions SET status = 'DELETED', deleted_at = now(), updated_at = now() WHERE id = $1`, { bind: [id], transaction: t });
      await bumpMonitor(this.sequelize, t, current.chainId);
      if (operator) await new AuditLog(this.sequelize).record(t, operator, { action: 'subscription.delete', target: subscriptionTarget(id), before: auditShape(current), after: { status: 'DELETED' } });
      return { id, status: 'DELETED' as const };
    });
  }

  private async load(t: Transaction, applicationId: number, id: number, withAddresses: boolean): Promise<SubscriptionView> {
    const [row] = await this.sequelize.query<Row>(`${SELECT} WHERE s.id = $1 AND s.application_id = $2 AND s.status <> 'DELETED' FOR UPDATE OF s`, {
      bind: [id, applicationId], type: QueryTypes.SELECT, transaction: t,
    });
    if (!row) throw new WcsError('CHAIN_SUBSCRIPTION_NOT_FOUND', { details: { id } });
    return view(row, withAddresses ? await this.addressesOf(t, row.id) : undefined);
  }

  private async addressesOf(t: Transaction, id: string): Promise<string[]> {
    const rows = await this.sequelize.query<{ address: string }>('SELECT address FROM chain_subscription_addresses WHERE subscription_id = $1 ORDER BY address', {
      bind: [id], type: QueryTypes.SELECT, transaction: t,
    });
    return rows.map((r) => r.address);
  }

  private async addAddresses(t: Transaction, id: string, chainId: number, addresses: readonly string[]): Promise<void> {
    await this.sequelize.query(
      `INSERT INTO chain_subscription_addresses (subscription_id, chain_id, address) SELECT $1, $2, a FROM unnest($3::text[]) AS x(a) ON CONFLICT DO NOTHING`,
      { bind: [id, chainId, addresses], transaction: t },
    );
  }

  /** One change at a time per application: the limits and the appSubscriptionNo check see every committed change. */
  private async lockApplication(t: Transaction, applicationId: number): Promise<void> {
    await this.sequelize.query("SELECT pg_advisory_xact_lock(hashtext('chain_subscriptions'), $1)", { bind: [applicationId], transaction: t });
  }

  private async checkApplicationLimits(t: Transaction, applicationId: number, moreSubscriptions: number, moreAddresses: number): Promise<void> {
    const [row] = await this.sequelize.query<{ subs: string; addrs: string }>(
      `SELECT (SELECT count(*) FROM chain_subscriptions WHERE application_id = $1 AND status <> 'DELETED')::text AS subs,
              (SELECT count(*) FROM chain_subscription_addresses a JOIN chain_subscriptions s ON s.id = a.subscription_id
                WHERE s.application_id = $1 AND s.status <> 'DELETED')::text AS addrs`,
      { bind: [applicationId], type: QueryTypes.SELECT, transaction: t },
    );
    if (Number(row!.subs) + moreSubscriptions > SUBSCRIPTION_LIMITS.subscriptionsPerApplication) {
      throw limit(`an application has at most ${SUBSCRIPTION_LIMITS.subscriptionsPerApplication} subscriptions (delete one first)`);
    }
    if (Number(row!.addrs) + moreAddresses > SUBSCRIPTION_LIMITS.addressesPerApplication) {
      throw limit(`an application monitors at most ${SUBSCRIPTION_LIMITS.addressesPerApplication} addresses across its subscriptions`);
    }
  }
}

/** Moves the chain's monitor version in the change's transaction: scanners reload at their next step. */
export async function bumpMonitor(sequelize: Sequelize, t: Transaction, chainId: number): Promise<void> {
  await sequelize.query(
    `INSERT INTO chain_monitor_versions (chain_id, version) VALUES ($1, 1) ON CONFLICT (chain_id) DO UPDATE SET version = chain_monitor_versions.version + 1`,
    { bind: [chainId], transaction: t },
  );
}

/** What an audit entry records of a subscription: its settings and address count (not every address). */
function auditShape(v: SubscriptionView): Record<string, unknown> {
  return { appSubscriptionNo: v.appSubscriptionNo, chainCode: v.chainCode, direction: v.direction, chainTokenIds: v.chainTokenIds, minAmount: v.minAmount, status: v.status, addressCount: v.addressCount };
}

function limit(message: string): WcsError {
  return new WcsError('CHAIN_SUBSCRIPTION_LIMIT', { message: `${message} (docs/chain-events.md, "Limits")` });
}

/** "1.50" → "1.5"; "0" or "0.0" is not a minimum (refused by the route; here: none). */
function normalizedMin(v: string | null): string | null {
  if (v === null) return null;
  const t = trimDecimal(v);
  return t === '0' ? null : t;
}
