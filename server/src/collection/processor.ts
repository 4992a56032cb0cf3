import { QueryTypes, type Sequelize } from 'sequelize';
import type { AdapterRegistry, ChainAdapter, KeyStore, Receivability, TransferInput, TransferNode } from '@wcs/core';
import type { ChainView } from '../catalogue/catalogue';
import type { Logger } from '../config/logger';
import { hotKeyRef, type HotWallets } from '../withdrawals/hot-wallets';
import { createTransfers, type NewTransfer, type StoredKey, type TransferOptions } from '../transfers/model';
import { asError } from '../transfers/node-calls';
import { lastTrustline, openTrustline, receiveStep } from './trustlines';
import { FeeWallets } from './fee-wallets';
import { DelegatedSweeper } from './delegated';
import { TopUpSweeper } from './topup-sweeps';
import { ITEM_CHUNK, type ItemRow, type Launch } from './processor-items';

/** utxo consolidations: at most this many deposit outputs per transaction (peers: 200–250). */
export const MAX_CONSOLIDATION_INPUTS = 200;

/** What bounds utxo consolidations (docs/collection.md): WCS_COLLECT_MAX_INPUTS (default MAX_CONSOLIDATION_INPUTS) and WCS_COLLECT_MAX_FEE_RATE_<ENV>_<CODE>. */
export interface ConsolidationLimits {
  /** At most this many deposit outputs per transaction (an address with more goes alone). */
  readonly maxInputs: number;
  /** "environment:CODE" → no consolidation is launched while the node's fee rate is above this, in thousandths of a base unit per fee unit (Bitcoin: sat/kvB). */
  readonly maxFeeRates: ReadonlyMap<string, bigint>;
}

/** A decimal rate with at most 3 decimals (Bitcoin's feeRate, sat/vB) in thousandths (sat/kvB); null when it is not one. */
function milliRate(text: unknown): bigint | null {
  const m = typeof text === 'string' ? /^(\d{1,30})(?:\.(\d{1,3}))?$/.exec(text) : null;
  return m ? BigInt(m[1]!) * 1000n + BigInt((m[2] ?? '').padEnd(3, '0')) : null;
}

/** Thousandths as decimal text ("2500" → "2.5"). */
function formatMilli(milli: bigint): string {
  const frac = (milli % 1000n).toString().padStart(3, '0').replace(/0+$/, '');
  return frac ? `${milli / 1000n}.${frac}` : `${milli / 1000n}`;
}


/**
 * Turns PLANNED (and FUNDED) HOT_GATHER items into transfers through the one pipeline, per chain
 * family (docs/collection.md):
 * - EVM native: the whole sweepable balance less the exact fee (tip = max fee), nothing left;
 * - EVM token: a gas top-up from the fee wallet of only what the sweep needs beyond the gas at the
 *   address, confirmed before the sweep (the owner marks the item FUNDED), then the token sweep
 *   paying at most the price the top-up was measured at; a fee wallet too poor: the item waits, alerted;
 * - Solana: the hot wallet pays the fee; token accounts are closed, their rent to the hot wallet;
 * - memo chains: the shared deposit account's spendable balance (above its reserve) moves;
 * - utxo: the planned items' deposit outputs in transactions of at most `limits.maxInputs`
 *   inputs, the fee out of the amount, no change; none while the fee rate is above the chain's ceiling.
 * Pass-through applications send to the merchant's collection address, else to the hot wallet.
 * Each item's state and its transfer are written in one transaction, so a crash or a retry never
 * makes a second top-up or sweep for it.
 */
export class CollectionProcessor {
  private readonly topUps: TopUpSweeper;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly registry: AdapterRegistry,
    private readonly nodeOf: (chain: ChainView) => TransferNode,
    private readonly wallets: HotWallets,
    private readonly feeWallets: FeeWallets,
    private readonly keyStore: () => KeyStore,
    private readonly logger: Logger,
    private readonly limits: ConsolidationLimits = { maxInputs: MAX_CONSOLIDATION_INPUTS, maxFeeRates: new Map() },
    private readonly delegated: DelegatedSweeper = new DelegatedSweeper(sequelize, feeWallets, keyStore, logger),
  ) {
    this.topUps = new TopUpSweeper(nodeOf, feeWallets, keyStore, logger, {
      launch: (list) => this.launch(list),
      wait: (list) => this.wait(list),
      depositKey: (adapter, item) => this.depositKey(adapter, item),
      sweep: (chain, item, key, to, amount, options) => this.sweep(chain, item, key, to, null, amount, options),
    });
  }

  /** Whether `address` can receive `contract` on the chain now (the node's `receivable`); null where the chain has no such rule. */
  async receivability(chain: ChainView, address: string, contract: string): Promise<Receivability | Error | null> {
    const node = this.nodeOf(chain);
    if (!node.receivable) return null;
    return node.receivable(address, contract).catch(asError);
  }

  /** Fee wallets made for applications that have none, and their readings for the operator (each planning pass). */
  async refreshFeeWallets(chain: ChainView): Promise<void> {
    try {
      await this.feeWallets.ensureAll(chain);
      await this.feeWallets.refresh(chain);
    } catch (e) {
      this.logger.warn('fee wallets not made or not read', { chain: chain.code, error: e });
    }
  }

  async step(chain: ChainView): Promise<number> {
    // Three queues, each its own chunk, oldest-touched first: FUNDED items (their top-up is final:
    // only the sweep is left), token items (two transactions to go: their top-ups first), the rest.
    // Items that wait go to the back of their own queue and never hold up the other two.
    const select = (where: string) => `(SELECT i.id::text AS id, i.application_id, i.chain_token_id, i.from_address, i.amount::text AS amount, i.status, i.source, i.fee_per_unit::text AS fee_per_unit, i.sweep_mode,
              t.contract, a.settlement_mode, m.address AS merchant_address, m.memo AS merchant_memo
         FROM collection_items i JOIN chain_tokens t ON t.id = i.chain_token_id JOIN applications a ON a.id = i.application_id
         LEFT JOIN collection_addresses m ON m.application_id = i.application_id AND m.chain_id = i.chain_id AND m.kind = 'MERCHANT'
        WHERE i.chain_id = $1 AND i.stage = 'HOT_GATHER' AND ${where} ORDER BY i.updated_at, i.id LIMIT ${ITEM_CHUNK})`;
    const items = await this.sequelize.query<ItemRow>(
      [select(`i.status = 'FUNDED'`), select(`i.status = 'PLANNED' AND t.contract IS NOT NULL`), select(`i.status = 'PLANNED' AND t.contract IS NULL`)].join(' UNION ALL '),
      { bind: [chain.id], type: QueryTypes.SELECT },
    );
    if (items.length === 0) return 0;
    const adapter = this.registry.forChain(chain);
    const ready: Array<{ item: ItemRow; to: string; memo: string | null }> = [];
    const waiting: Array<{ id: string; reason: string }> = [];
    for (const item of items) {
      if (item.settlement_mode === 'PASS_THROUGH') {
        if (item.merchant_address === null) {
          waiting.push({ id: item.id, reason: `pass-through: no merchant collection address on ${chain.code} (wcs collect address set --kind MERCHANT)` });
          continue;
        }
        ready.push({ item, to: item.merchant_address, memo: item.merchant_memo });
        continue;
      }
      const hot = await this.wallets.ensure(item.application_id, chain);
      ready.push({ item, to: hot.address, memo: null });
    }
    await this.wait(waiting);
    if (ready.length === 0) return 0;
    if (adapter.spendModel === 'utxo') return this.consolidate(chain, adapter, ready);
    if (adapter.spendModel === 'sequence' && adapter.addressing === 'hd') {
      const delegated = ready.filter((r) => r.item.sweep_mode === 'DELEGATED');
      const topup = ready.filter((r) => r.item.sweep_mode !== 'DELEGATED');
      return (delegated.length > 0 ? await this.sweepDelegated(chain, adapter, delegated) : 0) + (topup.length > 0 ? await this.topUps.sweep(chain, adapter, topup) : 0);
    }
    return this.direct(chain, adapter, ready);
  }

  /**
   * EVM items of DELEGATED policies (collection/delegated.ts): batches of delegated addresses, one
   * SWEEP_BATCH transfer each, launched like a consolidation (all its items or none). Where the
   * chain's flag is off or its node does not run EIP-7702, they take the top-up path.
   */
  private async sweepDelegated(chain: ChainView, adapter: ChainAdapter, ready: ReadonlyArray<{ item: ItemRow; to: string; memo: string | null }>): Promise<number> {
    const node = this.nodeOf(chain);
    // a chain whose catalogue flag is off or whose node does not run EIP-7702 keeps the top-up path (said once in the log)
    if ((await this.delegated.unsupported(chain, adapter, node)) !== null) return this.topUps.sweep(chain, adapter, ready);
    const byId = new Map(ready.map((r) => [r.item.id, r.item]));
    const { made, waiting } = await this.delegated.step(chain, adapter, node, ready, (items, transfer) =>
      this.launch(items.map(({ item, to }) => ({ item: byId.get(item.id)!, to, status: 'SWEEPING' as const, transfer })), true));
    await this.wait(waiting);
    return made;
  }

  /** Items that cannot go yet: their reason, and to the back of the queue (items are taken oldest-touched first, so waiting ones never starve the others). */
  private async wait(waiting: ReadonlyArray<{ id: string; reason: string }>): Promise<void> {
    if (waiting.length === 0) return;
    await this.sequelize.query(
      `UPDATE collection_items i SET waiting_reason = u.reason, updated_at = now() FROM unnest($1::bigint[], $2::text[]) AS u(id, reason)
        WHERE i.id = u.id`,
      { bind: [waiting.map((w) => w.id), waiting.map((w) => w.reason.slice(0, 256))] },
    );
  }

  private depositKey(adapter: ChainAdapter, item: ItemRow): StoredKey {
    const spec = adapter.keySpec('deposit');
    return { purpose: 'deposit', namespace: spec.namespace, index: item.source.key?.index ?? 0, address: item.from_address };
  }

  /** Items → their transfers, in one transaction per batch, only while the item is still in the state read. */
  private async launch(list: readonly Launch[], shared = false): Promise<number> {
    if (list.length === 0) return 0;
    return this.sequelize.transaction(async (t) => {
      const locked = await this.sequelize.query<{ id: string }>(
        `SELECT id::text AS id FROM collection_items WHERE id = ANY($1::bigint[]) AND status IN ('PLANNED','FUNDED') ORDER BY collection_items.id FOR UPDATE SKIP LOCKED`,
        { bind: [list.map((x) => x.item.id)], type: QueryTypes.SELECT, transaction: t },
      );
      const ok = new Set(locked.map((l) => l.id));
      const todo = shared ? (ok.size === list.length ? list : []) : list.filter((x) => ok.has(x.item.id));
      if (todo.length === 0) return 0;
      const transfers = shared ? [todo[0]!.transfer] : todo.map((x) => x.transfer);
      const ids = await createTransfers(this.sequelize, t, transfers);
      const idOf = (i: number) => (shared ? ids[0]! : ids[i]!);
      await this.sequelize.query(
        `UPDATE collection_items i SET status = u.status, to_address = u.to_address, waiting_reason = NULL, fee_per_unit = coalesce(u.fpu::numeric, i.fee_per_unit),
                source = CASE WHEN u.gl IS NULL THEN i.source ELSE i.source || jsonb_build_object('gasLimit', u.gl) END,
                topup_transfer_id = CASE WHEN u.status = 'TOPPING_UP' THEN u.transfer ELSE i.topup_transfer_id END,
                transfer_id = CASE WHEN u.status = 'SWEEPING' THEN u.transfer ELSE i.transfer_id END, updated_at = now()
           FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[]) AS u(id, status, to_address, transfer, fpu, gl) WHERE i.id = u.id`,
        { bind: [todo.map((x) => x.item.id), todo.map((x) => x.status), todo.map((x) => x.to), todo.map((_x, i) => idOf(i)), todo.map((x) => x.feePerUnit?.toString() ?? null), todo.map((x) => x.gasLimit?.toString() ?? null)], transaction: t },
      );
      return todo.length;
    });
  }

  private sweep(chain: ChainView, item: ItemRow, key: StoredKey, to: string, memo: string | null, amount: bigint, options: TransferOptions): NewTransfer {
    return { applicationId: item.application_id, chainId: chain.id, chainTokenId: item.chain_token_id, kind: 'SWEEP', key, to, memo, amount, options };
  }

  /** Solana and memo chains: one transfer per item, no top-up. */
  private async direct(chain: ChainView, adapter: ChainAdapter, all: ReadonlyArray<{ item: ItemRow; to: string; memo: string | null }>): Promise<number> {
    const ready = await this.receivers(chain, adapter, all);
    const launches = await Promise.all(ready.map(async ({ item, to, memo }) => {
      const key = this.depositKey(adapter, item);
      const native = item.contract === null;
      let options: TransferOptions;
      if (adapter.spendModel === 'expiring' && adapter.addressing === 'hd') {
        // Solana: the hot wallet pays; the deposit address is emptied (native) or its token account closed
        const hot = await this.wallets.ensure(item.application_id, chain);
        const ref = hotKeyRef(item.application_id, adapter);
        options = { feePayer: { purpose: 'hot', namespace: ref.spec.namespace, index: ref.index, address: hot.address }, ...(native ? {} : { closeTokenAccount: true }) };
      } else {
        options = native ? { feeFromAmount: true } : {};
      }
      return { item, to, status: 'SWEEPING' as const, transfer: this.sweep(chain, item, key, to, memo, BigInt(item.amount), options) };
    }));
    return this.launch(launches);
  }

  /**
   * Chains where an account must opt in to a token before it can receive it (the node's
   * `receivable`: Stellar trustlines): the token items whose destination can receive now; the
   * others wait, named (trustlines.receiveStep): the hot wallet's own trustline is opened by a
   * TRUSTLINE transfer from the hot key, a merchant address's is the merchant's to open. One
   * reading per (destination, token) and step; a reading that fails holds those items a step.
   */
  private async receivers(chain: ChainView, adapter: ChainAdapter, ready: ReadonlyArray<{ item: ItemRow; to: string; memo: string | null }>) {
    const node = this.nodeOf(chain);
    const receivable = node.receivable?.bind(node);
    if (!receivable) return ready;
    const tokens = ready.flatMap((r) => (r.item.contract === null ? [] : [{ ...r, contract: r.item.contract }]));
    if (tokens.length === 0) return ready;
    const readings = new Map<string, Promise<Receivability | Error>>();
    const reading = (to: string, contract: string) => {
      const k = `${to}/${contract}`;
      if (!readings.has(k)) readings.set(k, receivable(to, contract).catch(asError));
      return readings.get(k)!;
    };
    const go = new Set<string>();
    const waiting: Array<{ id: string; reason: string }> = [];
    const opened = new Set<string>();
    for (const r of tokens) {
      const { contract } = r;
      const can = await reading(r.to, contract);
      if (can instanceof Error) {
        waiting.push({ id: r.item.id, reason: `whether ${r.to} can receive ${contract} could not be read from the node (tried again next step): ${can.message}` });
        continue;
      }
      const destination = r.item.settlement_mode === 'PASS_THROUGH' ? 'MERCHANT' as const : 'HOT' as const;
      const hot = destination === 'HOT' ? await this.wallets.ensure(r.item.application_id, chain) : null;
      const last = hot ? await lastTrustline(this.sequelize, null, chain.id, hot.address, r.item.chain_token_id) : { state: 'NONE' as const };
      const step = receiveStep({ destination, to: r.to, contract, can, last });
      if (step.kind === 'GO') {
        go.add(r.item.id);
        continue;
      }
      waiting.push({ id: r.item.id, reason: step.reason });
      if (step.kind === 'OPEN_TRUSTLINE' && hot && !opened.has(`${hot.address}/${r.item.chain_token_id}`)) {
        opened.add(`${hot.address}/${r.item.chain_token_id}`);
        const ref = hotKeyRef(r.item.application_id, adapter);
        const id = await openTrustline(this.sequelize, {
          applicationId: r.item.application_id, chainId: chain.id, tokenId: r.item.chain_token_id, contract, to: hot.address,
          hot: { purpose: 'hot', namespace: ref.spec.namespace, index: ref.index, address: hot.address }, items: [r.item.id],
        });
        if (id !== null) {
          // the item's reason naming the transfer was written with it (openTrustline): wait() writes the same
          const named = receiveStep({ destination, to: r.to, contract, can, last: { state: 'OPEN', id } });
          if (named.kind === 'WAIT') waiting[waiting.length - 1] = { id: r.item.id, reason: named.reason };
        }
        if (id !== null) this.logger.info('collection: opening the hot wallet\'s trustline before the first sweep of the token', { chain: chain.code, applicationId: r.item.application_id, token: contract, transfer: id });
      }
    }
    await this.wait(waiting);
    return ready.filter((r) => r.item.contract === null || go.has(r.item.id));
  }

  /**
   * utxo: the items' deposit outputs in consolidations of at most `limits.maxInputs` inputs, the
   * fee out of the amount. With a fee-rate ceiling for the chain, nothing is launched while the
   * node's rate is above it (or cannot be read): the items wait, the reason naming rate and ceiling.
   */
  private async consolidate(chain: ChainView, adapter: ChainAdapter, ready: ReadonlyArray<{ item: ItemRow; to: string; memo: string | null }>): Promise<number> {
    const held = await this.feeRateHold(chain, adapter, ready[0]!);
    if (held !== null) {
      await this.wait(ready.map((r) => ({ id: r.item.id, reason: held })));
      return 0;
    }
    let made = 0;
    const byTarget = new Map<string, Array<{ item: ItemRow; to: string }>>();
    for (const r of ready) byTarget.set(`${r.item.application_id}/${r.to}`, [...(byTarget.get(`${r.item.application_id}/${r.to}`) ?? []), r]);
    for (const list of byTarget.values()) {
      let batch: Array<{ item: ItemRow; to: string }> = [];
      let inputs = 0;
      const flush = async () => {
        if (batch.length === 0) return;
        const first = batch[0]!;
        const all = batch.flatMap(({ item }) => (item.source.utxos ?? []).map((u) => ({ ...u, owner: this.depositKey(adapter, item) })));
        const total = all.reduce((s, u) => s + BigInt(u.amount), 0n);
        const transfer = this.sweep(chain, first.item, this.depositKey(adapter, first.item), first.to, null, total, { inputs: all, subtractFee: true });
        made += await this.launch(batch.map((b) => ({ item: b.item, to: b.to, status: 'SWEEPING' as const, transfer })), true);
        batch = [];
        inputs = 0;
      };
      for (const b of list) {
        const n = b.item.source.utxos?.length ?? 0;
        if (inputs + n > this.limits.maxInputs) await flush();
        batch.push(b);
        inputs += n;
      }
      await flush();
    }
    return made;
  }

  /**
   * The fee-rate ceiling of utxo chains (WCS_COLLECT_MAX_FEE_RATE_<ENV>_<CODE>): null when none is
   * set or the node's current rate is at most it; else why consolidations wait. The rate is the
   * node's transfer input for one representative consolidation, read in Bitcoin's input format
   * (`feeRate`, sat/vB as decimal text): the utxo family's only adapter today.
   */
  private async feeRateHold(chain: ChainView, adapter: ChainAdapter, r: { item: ItemRow; to: string }): Promise<string | null> {
    const name = `WCS_COLLECT_MAX_FEE_RATE_${chain.environment.toUpperCase()}_${chain.code}`;
    const ceiling = this.limits.maxFeeRates.get(`${chain.environment}:${chain.code}`);
    if (ceiling === undefined) return null;
    let input: TransferInput;
    try {
      const key = this.depositKey(adapter, r.item);
      const fromPublicKey = await this.keyStore().getPublicKey({ applicationId: r.item.application_id, spec: adapter.keySpec('deposit'), purpose: 'deposit', index: key.index });
      input = await this.nodeOf(chain).transferInput({ from: r.item.from_address, fromPublicKey, to: r.to, memo: null, contract: r.item.contract, amount: BigInt(r.item.amount) });
    } catch (e) {
      this.logger.warn('collection: fee rate not read; consolidations wait, read again next step', { chain: chain.code, error: e });
      return `the fee rate could not be read (${e instanceof Error ? e.message : String(e)}) to compare with the ceiling ${formatMilli(ceiling)} sat/vB (${name})`;
    }
    const rate = milliRate(input.feeRate);
    if (rate === null) return `the node's transfer input has no feeRate (sat/vB) to compare with the ceiling ${formatMilli(ceiling)} sat/vB (${name})`;
    if (rate <= ceiling) return null;
    return `the fee rate ${formatMilli(rate)} sat/vB is above the ceiling ${formatMilli(ceiling)} sat/vB (${name}): consolidations wait`;
  }


}

