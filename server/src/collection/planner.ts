import PQueue from 'p-queue';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { AdapterRegistry, TransferNode } from '@wcs/core';
import type { HotWallets } from '../withdrawals/hot-wallets';
import { raiseAlert } from '../deposits/scan-lease';
import type { ChainView } from '../catalogue/catalogue';
import type { Logger } from '../config/logger';
import { asError, balancesAll } from '../transfers/node-calls';
import { planVerdict, sweepable, type SweepPrice } from './decisions';
import type { SweepPricer } from './sweep-quote';

/** Candidate addresses looked at per planning pass of a chain. */
const PLAN_CHUNK = 500;
const NODE_CONCURRENCY = 8;
/** Addresses of one (application, token) tried for a sweep's price in a pass before the rest of them wait with the last reason. */
const PRICE_TRIES = 3;

interface Candidate {
  application_id: number;
  chain_token_id: number;
  address_id: number;
  address: string;
  key_namespace: string;
  key_index: number;
  contract: string | null;
  recharge_ids: string[];
  pending: string;
  oldest_wait: number | null;
  threshold: string;
  max_fee_bps: number;
  native_value: string | null;
  max_wait_seconds: number | null;
  settlement_mode: 'ON_CONFIRM' | 'PASS_THROUGH';
  merchant_address: string | null;
  merchant_memo: string | null;
  trigger: 'DEPOSIT' | 'SCHEDULE' | 'MAX_WAIT';
  /** utxo chains: the chain's fee quote (a payout's, from made-up inputs), priced per input. */
  quote: string | null;
  utxos: Array<{ txHash: string; vout: number; amount: string }> | null;
  /** The policy's sweep mode (EVM: TOPUP or DELEGATED; the item keeps it). */
  sweep_mode: 'TOPUP' | 'DELEGATED';
}

/**
 * HOT_GATHER planning (docs/collection.md): which deposit addresses are collected now. A
 * candidate is an address with confirmed, uncollected deposits of a token whose application has
 * an enabled policy — at once when a deposit reached CONFIRMED (trigger on), or when the
 * schedule is due; an address the guard or the threshold left alone is looked at again only
 * once a new deposit arrived, the schedule came round, or its maximum wait passed. For each: the
 * node's balance less unconfirmed deposits (utxo chains: its confirmed deposit outputs), the
 * threshold, the cost guard on the fee quote; then in one transaction a request, one item per
 * address, each recharge linked to its item, and skips recorded with their reason.
 */
export class CollectionPlanner {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly registry: AdapterRegistry,
    private readonly nodeOf: (chain: ChainView) => TransferNode,
    private readonly wallets: HotWallets,
    private readonly pricer: SweepPricer,
    private readonly logger: Logger,
    /** A wait (not a skip) that lasts this long raises COLLECTION_WAITING (WCS_COLLECT_WAIT_ALERT_SECONDS). */
    private readonly waitAlertSeconds = 900,
  ) {}

  async plan(chain: ChainView): Promise<number> {
    const adapter = this.registry.forChain(chain);
    const hd = adapter.addressing === 'hd';
    const utxo = adapter.spendModel === 'utxo';
    // HD chains: the user's address and key; memo chains: the shared deposit account (key index of deposit_accounts)
    const source = hd
      ? `JOIN addresses a ON a.id = r.address_id JOIN user_keys k ON k.id = a.user_key_id`
      : `JOIN deposit_accounts a ON a.application_id = r.application_id AND a.chain_id = r.chain_id`;
    const addressId = hd ? 'a.id' : '0';
    const keyCols = hd ? 'k.namespace AS key_namespace, k.key_index::int AS key_index' : `'' AS key_namespace, a.key_index::int AS key_index`;
    // a scheduled pass under way keeps its start; a due schedule without one starts one now (skips
    // written from then on belong to this pass and are not looked at again in it)
    await this.sequelize.query(
      `UPDATE collection_policies p SET pass_started_at = clock_timestamp() FROM chain_tokens t
        WHERE t.id = p.chain_token_id AND t.chain_id = $1 AND p.enabled AND p.schedule_seconds IS NOT NULL
          AND (p.last_run_at IS NULL OR p.last_run_at <= now() - make_interval(secs => p.schedule_seconds))
          AND (p.pass_started_at IS NULL OR p.pass_started_at <= coalesce(p.last_run_at, '-infinity'::timestamptz))`,
      { bind: [chain.id] },
    );
    const candidates = await this.sequelize.query<Candidate>(
      `WITH due AS (
         SELECT p.*, (p.schedule_seconds IS NOT NULL AND (p.last_run_at IS NULL OR p.last_run_at <= now() - make_interval(secs => p.schedule_seconds))) AS scheduled
           FROM collection_policies p JOIN chain_tokens t ON t.id = p.chain_token_id JOIN applications ap ON ap.id = p.application_id
          WHERE t.chain_id = $1 AND p.enabled AND ap.status = 'ACTIVE'
       )
       SELECT r.application_id, r.chain_token_id, ${addressId} AS address_id, a.address, ${keyCols}, t.contract,
              array_agg(r.id::text ORDER BY r.id) AS recharge_ids,
              (SELECT coalesce(sum(q.amount), 0)::text FROM recharges q WHERE q.chain_id = $1 AND q.chain_token_id = r.chain_token_id AND q.address = a.address AND q.tx_status = 'PENDING') AS pending,
              extract(epoch FROM now() - min(r.confirmed_at))::int AS oldest_wait,
              d.threshold::text AS threshold, d.max_fee_bps, d.native_value::text AS native_value, d.max_wait_seconds, d.sweep_mode, ap.settlement_mode, m.address AS merchant_address, m.memo AS merchant_memo,
              CASE WHEN d.scheduled THEN 'SCHEDULE' WHEN d.max_wait_seconds IS NOT NULL AND min(r.confirmed_at) <= now() - make_interval(secs => d.max_wait_seconds) AND s.skipped_at IS NOT NULL AND max(r.created_at) <= s.skipped_at THEN 'MAX_WAIT' ELSE 'DEPOSIT' END AS trigger,
              (SELECT q.max_fee::text FROM withdraw_fee_quotes q WHERE q.chain_id = $1 AND q.chain_token_id = r.chain_token_id) AS quote,
              ${utxo ? `json_agg(json_build_object('txHash', r.tx_hash, 'vout', r.position, 'amount', r.amount::text) ORDER BY r.id)` : 'NULL'} AS utxos
         FROM recharges r ${source}
         JOIN due d ON d.application_id = r.application_id AND d.chain_token_id = r.chain_token_id
         JOIN applications ap ON ap.id = r.application_id
         JOIN chain_tokens t ON t.id = r.chain_token_id
         LEFT JOIN collection_addresses m ON m.application_id = r.application_id AND m.chain_id = r.chain_id AND m.kind = 'MERCHANT'
         -- a skip holds the address back; a wait (holds false) is looked at again every pass
         LEFT JOIN collection_skips s ON s.chain_token_id = r.chain_token_id AND s.address = a.address AND s.holds
        WHERE r.chain_id = $1 AND r.collection_item_id IS NULL AND r.tx_status IN ('CONFIRMED','SETTLED')
          AND NOT EXISTS (SELECT 1 FROM collection_items i WHERE i.chain_id = $1 AND i.from_address = a.address AND i.stage = 'HOT_GATHER' AND i.status NOT IN ('SUCCESS','FAILED'))
        GROUP BY r.application_id, r.chain_token_id, ${hd ? 'a.id, k.namespace, k.key_index' : 'a.key_index'}, a.address, t.contract, d.threshold, d.max_fee_bps, d.native_value, d.sweep_mode,
                 d.max_wait_seconds, d.scheduled, d.on_confirmed, d.pass_started_at, ap.settlement_mode, m.address, m.memo, s.skipped_at
       HAVING (d.on_confirmed AND (s.skipped_at IS NULL OR max(r.created_at) > s.skipped_at))
           -- a wait is looked at again on every pass, whatever the policy's triggers
           OR EXISTS (SELECT 1 FROM collection_skips w WHERE w.chain_token_id = r.chain_token_id AND w.address = a.address AND NOT w.holds)
           -- a scheduled pass looks at each address once: one skipped since the schedule came due is not looked at again in it
           OR (d.scheduled AND (s.skipped_at IS NULL OR s.skipped_at < d.pass_started_at))
           OR (d.max_wait_seconds IS NOT NULL AND s.skipped_at IS NOT NULL AND s.skipped_at < min(r.confirmed_at) + make_interval(secs => d.max_wait_seconds)
               AND min(r.confirmed_at) <= now() - make_interval(secs => d.max_wait_seconds))
        ORDER BY min(r.id) LIMIT ${PLAN_CHUNK}`,
      { bind: [chain.id], type: QueryTypes.SELECT },
    );
    if (candidates.length === 0) return this.markRun(chain);
    const node = this.nodeOf(chain);
    const queue = new PQueue({ concurrency: NODE_CONCURRENCY });
    const native = chain.tokens.find((t) => t.contract === null);
    const nativeDecimals = native?.decimals ?? 0;
    // Solana (expiring, HD; the processor's direct()): the hot wallet pays, the deposit account is
    // emptied and closed, so a sweep moves its whole balance: an address with a deposit still
    // PENDING waits, unread, with a wait recorded (not a skip: it is looked at again every pass, so
    // the deposit's confirmation plans it)
    const closesAccount = adapter.spendModel === 'expiring' && hd;
    // EVM delegated sweeps move the address's whole balance of the token (the forwarder knows no
    // other amount): an address with a deposit still PENDING waits the same way
    const delegated = (c: Candidate) => c.sweep_mode === 'DELEGATED' && adapter.spendModel === 'sequence' && hd;
    const closing = candidates.map((c) => (closesAccount || delegated(c)) && BigInt(c.pending) > 0n);
    // one set-based read where the node has one (EVM: a JSON-RPC batch); a sweep-specific reading where it has that (Solana: every lamport)
    const toRead = candidates.filter((c, i) => !closing[i] && c.utxos === null);
    const sweepableOf = node.sweepableBalance?.bind(node);
    const read = sweepableOf
      ? await Promise.all(toRead.map((c) => queue.add(() => sweepableOf(c.address, c.contract).catch(asError))))
      : await balancesAll(node, toRead.map((c) => ({ address: c.address, contract: c.contract })));
    const readOf = new Map(toRead.map((c, i) => [c, read[i]!]));
    // utxo: exactly its confirmed deposit outputs; others: what a sweep may move less unconfirmed deposits
    const amountOf = (c: Candidate, i: number): bigint | Error => {
      if (closing[i]) return 0n;
      if (c.utxos !== null) return c.utxos.reduce((s, u) => s + BigInt(u.amount), 0n);
      const balance = readOf.get(c) ?? new Error('not read');
      return balance instanceof Error ? balance : sweepable(balance, BigInt(c.pending));
    };
    const looked = candidates.map((c, i) => ({ c, amount: amountOf(c, i), price: null as SweepPrice | null }));
    const verdict = (x: (typeof looked)[number]) => planVerdict({
      closesAccount: closesAccount || delegated(x.c), pending: BigInt(x.c.pending), amount: x.amount, threshold: BigInt(x.c.threshold), oldestWaitSeconds: x.c.oldest_wait,
      maxWaitSeconds: x.c.settlement_mode === 'PASS_THROUGH' ? x.c.max_wait_seconds : null, price: x.price, token: x.c.contract !== null,
      maxFeeBps: x.c.max_fee_bps, nativeValue: x.c.native_value === null ? null : BigInt(x.c.native_value), nativeDecimals,
    });
    await this.price(chain, adapter, looked.filter((x) => verdict(x).kind === 'PRICE'));
    const plans: Array<{ c: Candidate; amount: bigint }> = [];
    const skips: Array<{ c: Candidate; amount: bigint; fee: bigint | null; reason: string; holds: boolean }> = [];
    for (const x of looked) {
      const v = verdict(x);
      const amount = x.amount instanceof Error ? 0n : x.amount;
      const fee = x.price?.ok ? x.price.fee : null;
      if (v.kind === 'PLAN') plans.push({ c: v.trigger === 'MAX_WAIT' ? { ...x.c, trigger: 'MAX_WAIT' } : x.c, amount });
      else if (v.kind === 'SKIP' || v.kind === 'WAIT') skips.push({ c: x.c, amount, fee, reason: v.reason, holds: v.kind === 'SKIP' });
      else throw new Error(`collection planner: ${x.c.address} was not priced`);
      if (v.kind === 'WAIT' && x.amount instanceof Error) this.logger.warn('collection: balance not read; looked at again next pass', { chain: chain.code, address: x.c.address, error: x.amount });
    }
    const made = await this.record(chain, plans, skips);
    await this.alertLongWaits(chain);
    // a full chunk: more may be due; the schedule is marked run only once a pass saw them all
    if (candidates.length < PLAN_CHUNK) await this.markRun(chain);
    return made;
  }

  /**
   * Prices the sweeps of addresses worth collecting (docs/collection.md, "Pricing a sweep"): utxo
   * chains per input from the chain's fee quote; the others by the sweep itself, crafted out of an
   * address that holds the funds (SweepPricer), once per (application, token, destination) and pass:
   * up to PRICE_TRIES of its addresses are tried, and the rest take the first price found (or the
   * last reason none was).
   */
  private async price(chain: ChainView, adapter: ReturnType<AdapterRegistry['forChain']>, list: Array<{ c: Candidate; amount: bigint | Error; price: SweepPrice | null }>): Promise<void> {
    const groups = new Map<string, { to: string | Error; memo: string | null; members: typeof list }>();
    for (const x of list) {
      const c = x.c;
      if (c.utxos !== null) {
        // a consolidation's fee is shared by its inputs: half a two-input payout's fee per input
        x.price = c.quote === null
          ? { ok: false, reason: `no fee quote for ${chain.code} yet (the hot wallet ledger reads one every WCS_HOT_WALLET_REFRESH_MS)` }
          : { ok: true, fee: (BigInt(c.quote) * BigInt(c.utxos.length)) / 2n };
        continue;
      }
      // a pass-through application without a merchant address is priced to the hot wallet; its item waits for the address (the processor says so)
      const merchant = c.settlement_mode === 'PASS_THROUGH' ? c.merchant_address : null;
      const k = `${c.application_id}/${c.chain_token_id}/${c.sweep_mode}/${merchant === null ? 'hot' : `m:${merchant}`}`;
      let g = groups.get(k);
      if (!g) {
        const to = merchant ?? await this.wallets.ensure(c.application_id, chain).then((h) => h.address, asError);
        g = { to, memo: merchant === null ? null : c.merchant_memo, members: [] };
        groups.set(k, g);
      }
      g.members.push(x);
    }
    const queue = new PQueue({ concurrency: NODE_CONCURRENCY });
    await Promise.all([...groups.values()].map((g) => queue.add(async () => {
      let found: SweepPrice = { ok: false, reason: 'no address to price the sweep from' };
      let tries = 0;
      for (const x of g.members) {
        if (found.ok || tries >= PRICE_TRIES) break;
        if (g.to instanceof Error) {
          found = { ok: false, reason: `no destination: ${g.to.message}` };
          break;
        }
        const amount = x.amount;
        if (amount instanceof Error) continue; // never asked for: an unread balance waits before pricing
        tries++;
        found = await this.pricer.quote(chain, adapter, { applicationId: x.c.application_id, from: x.c.address, keyIndex: x.c.key_index, contract: x.c.contract, amount, to: g.to, memo: g.memo, delegated: x.c.sweep_mode === 'DELEGATED' });
        x.price = found;
      }
      for (const x of g.members) if (x.price === null || !x.price.ok) x.price = found.ok ? found : (x.price ?? found);
    })));
  }

  /**
   * Waits that have lasted WCS_COLLECT_WAIT_ALERT_SECONDS: one COLLECTION_WAITING alert per
   * (application, token) naming how many addresses wait and why (the first reason), each wait
   * alerted once (its `alerted_at`); a wait whose reason changes kind starts again.
   */
  private async alertLongWaits(chain: ChainView): Promise<void> {
    await this.sequelize.transaction(async (t) => {
      const due = await this.sequelize.query<{ application_id: number; chain_token_id: number; symbol: string; n: number; reason: string; since: Date; addresses: string[] }>(
        `WITH marked AS (
           UPDATE collection_skips s SET alerted_at = now() FROM chain_tokens t
            WHERE t.id = s.chain_token_id AND t.chain_id = $1 AND NOT s.holds AND s.alerted_at IS NULL AND s.since <= now() - make_interval(secs => $2)
           RETURNING s.application_id, s.chain_token_id, t.symbol, s.address, s.reason, s.since
         )
         SELECT application_id, chain_token_id, min(symbol) AS symbol, count(*)::int AS n, (array_agg(reason ORDER BY since, address))[1] AS reason, min(since) AS since,
                (array_agg(address ORDER BY since, address))[1:5] AS addresses
           FROM marked GROUP BY application_id, chain_token_id ORDER BY application_id, chain_token_id`,
        { bind: [chain.id, this.waitAlertSeconds], type: QueryTypes.SELECT, transaction: t },
      );
      for (const d of due) {
        await raiseAlert(this.sequelize, t, chain.id, 'COLLECTION_WAITING',
          `${chain.code}: ${d.n} address(es) of application ${d.application_id} with confirmed ${d.symbol} deposits have waited over ${this.waitAlertSeconds} s to be collected: ${d.reason}`,
          { applicationId: d.application_id, chainTokenId: d.chain_token_id, addresses: d.addresses, count: d.n, reason: d.reason, since: d.since.toISOString() });
      }
      if (due.length > 0) this.logger.warn('collection: addresses waiting too long (alerted)', { chain: chain.code, tokens: due.map((d) => d.symbol) });
    });
  }

  /** Every due schedule of the chain's policies has had its pass. */
  private async markRun(chain: ChainView): Promise<number> {
    await this.sequelize.query(
      `UPDATE collection_policies p SET last_run_at = now() FROM chain_tokens t
        WHERE t.id = p.chain_token_id AND t.chain_id = $1 AND p.schedule_seconds IS NOT NULL
          AND (p.last_run_at IS NULL OR p.last_run_at <= now() - make_interval(secs => p.schedule_seconds))`,
      { bind: [chain.id] },
    );
    return 0;
  }

  /** One transaction: a request per (application, token, trigger), an item per address, its recharges linked (only those still unlinked), skips. */
  private async record(chain: ChainView, plans: ReadonlyArray<{ c: Candidate; amount: bigint }>, skips: ReadonlyArray<{ c: Candidate; amount: bigint; fee: bigint | null; reason: string; holds: boolean }>): Promise<number> {
    return this.sequelize.transaction(async (t) => {
      if (skips.length > 0) {
        await this.sequelize.query(
          // a wait keeps its start (and its alert) while it stays a wait of the same kind of reason (the text before the first colon)
          `INSERT INTO collection_skips (application_id, chain_token_id, address, amount, fee, reason, skipped_at, holds, since)
           SELECT u.app, u.token, u.address, u.amount::numeric, u.fee::numeric, u.reason, now(), u.holds, now()
             FROM unnest($1::int[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::boolean[]) AS u(app, token, address, amount, fee, reason, holds)
           ON CONFLICT (chain_token_id, address) DO UPDATE SET amount = EXCLUDED.amount, fee = EXCLUDED.fee, reason = EXCLUDED.reason, skipped_at = EXCLUDED.skipped_at, holds = EXCLUDED.holds,
             since = CASE WHEN NOT collection_skips.holds AND NOT EXCLUDED.holds AND split_part(collection_skips.reason, ':', 1) = split_part(EXCLUDED.reason, ':', 1) THEN collection_skips.since ELSE EXCLUDED.since END,
             alerted_at = CASE WHEN NOT collection_skips.holds AND NOT EXCLUDED.holds AND split_part(collection_skips.reason, ':', 1) = split_part(EXCLUDED.reason, ':', 1) THEN collection_skips.alerted_at ELSE NULL END`,
          { bind: [skips.map((s) => s.c.application_id), skips.map((s) => s.c.chain_token_id), skips.map((s) => s.c.address), skips.map((s) => s.amount.toString()), skips.map((s) => s.fee?.toString() ?? null), skips.map((s) => s.reason.slice(0, 256)), skips.map((s) => s.holds)], transaction: t },
        );
      }
      let made = 0;
      const groups = new Map<string, Array<{ c: Candidate; amount: bigint }>>();
      for (const p of plans) {
        const k = `${p.c.application_id}/${p.c.chain_token_id}/${p.c.trigger}`;
        groups.set(k, [...(groups.get(k) ?? []), p]);
      }
      for (const list of groups.values()) {
        const first = list[0]!.c;
        const [req] = await this.sequelize.query<{ id: string }>(
          'INSERT INTO collection_requests (application_id, chain_id, chain_token_id, trigger) VALUES ($1, $2, $3, $4) RETURNING id::text AS id',
          { bind: [first.application_id, chain.id, first.chain_token_id, first.trigger], type: QueryTypes.SELECT, transaction: t },
        );
        const items = await this.sequelize.query<{ id: string; address: string }>(
          `INSERT INTO collection_items (request_id, application_id, chain_id, chain_token_id, stage, from_address_id, from_address, to_address, amount, status, source, sweep_mode)
           SELECT $1, $2, $3, $4, 'HOT_GATHER', u.address_id, u.address, '', u.amount::numeric, 'PLANNED', u.source::jsonb, $9
             FROM unnest($5::int[], $6::text[], $7::text[], $8::text[]) WITH ORDINALITY AS u(address_id, address, amount, source, n) ORDER BY u.n
           ON CONFLICT DO NOTHING
           RETURNING id::text AS id, from_address AS address`,
          {
            bind: [req!.id, first.application_id, chain.id, first.chain_token_id, list.map((p) => p.c.address_id), list.map((p) => p.c.address), list.map((p) => p.amount.toString()),
              list.map((p) => JSON.stringify({ key: { namespace: p.c.key_namespace, index: p.c.key_index }, utxos: p.c.utxos })), first.sweep_mode],
            type: QueryTypes.SELECT,
            transaction: t,
          },
        );
        const byAddress = new Map(items.map((i) => [i.address, i.id]));
        const links = list.filter((p) => byAddress.has(p.c.address)).flatMap((p) => p.c.recharge_ids.map((r) => ({ r, item: byAddress.get(p.c.address)! })));
        await this.sequelize.query(
          `UPDATE recharges r SET collection_item_id = u.item FROM unnest($1::bigint[], $2::bigint[]) AS u(id, item) WHERE r.id = u.id AND r.collection_item_id IS NULL`,
          { bind: [links.map((l) => l.r), links.map((l) => l.item)], transaction: t },
        );
        await this.sequelize.query('DELETE FROM collection_skips WHERE chain_token_id = $1 AND address = ANY($2::text[])', { bind: [first.chain_token_id, items.map((i) => i.address)], transaction: t });
        made += items.length;
      }
      return made;
    });
  }
}
