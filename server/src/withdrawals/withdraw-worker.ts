import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { formatUnits, type AdapterRegistry, type ChainAdapter, type JsonValue, type KeyStore, type SignedTransaction, type TransferInput, type TransferNode, type TransferRequest, type UnsignedTransfer } from '@wcs/core';
import { OutboxNotices, type NoticeTable } from '../callbacks/outbox';
import type { ChainView } from '../catalogue/catalogue';
import type { Logger } from '../config/logger';
import type { Worker } from '../workers/worker';
import { raiseAlert } from '../deposits/scan-lease';
import type { HotWallet, HotWalletLedger, HotWallets } from './hot-wallets';
import type { WithdrawStatus } from './withdraw-service';

/** Transactions signed for one order at most (the first, fee bumps, re-signings after expiry). */
const MAX_ATTEMPTS = 10;

const WITHDRAW_NOTICES: NoticeTable = { table: 'withdraw_notices', recordColumn: 'withdrawal_id', stateColumn: 'status', bizType: 'WITHDRAW' };

/** riskLevel values (docs/withdrawals.md). */
export type RiskLevel = 'LOW' | 'HIGH' | 'BLOCKED';
/** riskReason values (docs/withdrawals.md); null with LOW. */
export type RiskReason =
  | 'AMOUNT_OVER_APPROVAL_THRESHOLD'
  | 'PER_ORDER_LIMIT_EXCEEDED'
  | 'DAILY_LIMIT_EXCEEDED'
  | 'DESTINATION_BLOCKED'
  | 'DESTINATION_NOT_ALLOWED';

export interface WithdrawWorkerConfig {
  /** Steps of each payout chain this often. */
  readonly pollMs: number;
  /** A broadcast transaction still unmined after this long is replaced with a higher fee (sequence chains with a fee market). */
  readonly stuckMs: number;
  /** Each replacement raises the fee by this many percent (nodes want at least 10). */
  readonly bumpPercent: number;
  /** The highest fee per unit a replacement may pay, per chain code ("environment:CODE"); absent: no replacement. */
  readonly feeCaps: ReadonlyMap<string, bigint>;
}

interface OrderRow {
  id: string;
  application_id: number;
  app_order_no: string;
  chain_id: number;
  chain_token_id: number;
  hot_wallet_id: number;
  from_address: string;
  to_address: string;
  memo: string | null;
  amount: string;
  status: WithdrawStatus;
  callback_url: string | null;
  tx_hash: string | null;
  sequence: string | null;
  decimals: number;
  contract: string | null;
}

const ORDER_COLUMNS = `w.id::text AS id, w.application_id, w.app_order_no, w.chain_id, w.chain_token_id, w.hot_wallet_id, w.from_address, w.to_address,
  w.memo, w.amount::text AS amount, w.status, w.callback_url, w.tx_hash, w.sequence::text AS sequence, t.decimals, t.contract`;
const ORDER_FROM = 'withdrawals w JOIN chain_tokens t ON t.id = w.chain_token_id';
const ORDER_SELECT = `SELECT ${ORDER_COLUMNS} FROM ${ORDER_FROM}`;

/** The spec's `withdraw` event (txHash "" while the order has no transaction). */
export function withdrawEvent(o: OrderRow, status: WithdrawStatus, txHash: string | null): Record<string, unknown> {
  return {
    event: 'withdraw',
    id: Number(o.id),
    applicationId: o.application_id,
    appOrderNo: o.app_order_no,
    chainId: o.chain_id,
    chainTokenId: o.chain_token_id,
    toAddress: o.to_address,
    amount: formatUnits(BigInt(o.amount), o.decimals),
    txHash: txHash ?? '',
    status,
  };
}

class WithdrawNotices extends OutboxNotices {
  constructor() {
    super(WITHDRAW_NOTICES);
  }

  add(o: OrderRow, status: WithdrawStatus, txHash: string | null): void {
    this.addEvent(o.id, status, o.application_id, withdrawEvent(o, status, txHash), o.callback_url);
  }
}

/**
 * Pays out accepted orders, per chain with an RPC endpoint and an adapter that can: risk checks,
 * then signing (sequence allocated, or inputs chosen, in the same transaction that stores the
 * signed bytes), broadcast, and tracking to SUCCESS or FAILED, with one `withdraw` callback per
 * (order, status) written in the transaction of the change (docs/withdrawals.md).
 *
 * Exactly once: an order's signed transaction is stored before it is broadcast; after a crash or
 * a timeout the same bytes are sent again (the node answers ALREADY_KNOWN), and its status is
 * read by hash. A new transaction for an order is only ever a fee-bump replacement at the same
 * sequence, of which at most one can be mined.
 */
export class WithdrawWorker implements Worker {
  readonly name = 'withdrawals';
  private running = false;
  private loops: Array<Promise<void>> = [];
  private wake: Array<() => void> = [];

  constructor(
    private readonly sequelize: Sequelize,
    private readonly registry: AdapterRegistry,
    private readonly ledger: HotWalletLedger,
    private readonly wallets: HotWallets,
    private readonly keyStore: () => KeyStore,
    private readonly config: WithdrawWorkerConfig,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.running = true;
    for (const chain of this.ledger.payoutChains()) this.loops.push(this.loop(chain));
  }

  async stop(): Promise<void> {
    this.running = false;
    for (const w of this.wake.splice(0)) w();
    await Promise.all(this.loops);
    this.loops = [];
  }

  private async loop(chain: ChainView): Promise<void> {
    while (this.running) {
      try {
        await this.step(chain);
      } catch (e) {
        this.logger.error('withdrawal step failed', { chain: chain.code, error: e });
      }
      if (!this.running) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, this.config.pollMs);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.wake.push(done);
      });
    }
  }

  /** One pass: risk, sign, broadcast, track. Each order is its own transaction. */
  async step(chain: ChainView): Promise<void> {
    await this.assessRisk(chain);
    await this.signReady(chain);
    await this.broadcastSigned(chain);
    await this.track(chain);
  }

  // ------------------------------------------------------------------ risk

  /** Evaluates new orders in id order: limits, destination lists, approval threshold. */
  async assessRisk(chain: ChainView): Promise<number> {
    return this.sequelize.transaction(async (t) => {
      const rows = await this.sequelize.query<OrderRow & {
        per_order_max: string | null; daily_max: string | null; approval_threshold: string | null; allowlist_only: boolean; blocked: boolean; allowed: boolean; used_today: string;
      }>(
        `SELECT ${ORDER_COLUMNS}, x.* FROM ${ORDER_FROM}
           JOIN applications a ON a.id = w.application_id
           LEFT JOIN withdraw_limits l ON l.application_id = w.application_id AND l.chain_token_id = w.chain_token_id
           CROSS JOIN LATERAL (SELECT l.per_order_max::text AS per_order_max, l.daily_max::text AS daily_max, l.approval_threshold::text AS approval_threshold,
                                      a.withdraw_allowlist_only AS allowlist_only,
                                      EXISTS (SELECT 1 FROM withdraw_address_rules r WHERE r.application_id = w.application_id AND r.chain_id = w.chain_id AND r.kind = 'BLOCK' AND r.address = w.to_address) AS blocked,
                                      EXISTS (SELECT 1 FROM withdraw_address_rules r WHERE r.application_id = w.application_id AND r.chain_id = w.chain_id AND r.kind = 'ALLOW' AND r.address = w.to_address) AS allowed,
                                      (SELECT coalesce(sum(d.amount), 0)::text FROM withdrawals d
                                        WHERE d.application_id = w.application_id AND d.chain_token_id = w.chain_token_id AND d.risk_level IS NOT NULL
                                          AND d.status <> 'FAILED' AND d.created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC') AS used_today) x
          WHERE w.chain_id = $1 AND w.status = 'PROCESSING' AND w.risk_level IS NULL
          ORDER BY w.id LIMIT 200 FOR UPDATE OF w SKIP LOCKED`,
        { bind: [chain.id], type: QueryTypes.SELECT, transaction: t },
      );
      const notices = new WithdrawNotices();
      const usedToday = new Map<string, bigint>();
      for (const o of rows) {
        const key = `${o.application_id}/${o.chain_token_id}`;
        const used = usedToday.get(key) ?? BigInt(o.used_today);
        const amount = BigInt(o.amount);
        let level: RiskLevel = 'LOW';
        let reason: RiskReason | null = null;
        let fail: string | null = null;
        const fmt = (v: string) => formatUnits(BigInt(v), o.decimals);
        if (o.blocked) {
          [level, reason, fail] = ['BLOCKED', 'DESTINATION_BLOCKED', 'risk: the destination is on the application\'s blocklist'];
        } else if (o.allowlist_only && !o.allowed) {
          [level, reason, fail] = ['BLOCKED', 'DESTINATION_NOT_ALLOWED', 'risk: the application only pays out to allowlisted destinations and this one is not on it'];
        } else if (o.per_order_max !== null && amount > BigInt(o.per_order_max)) {
          [level, reason, fail] = ['BLOCKED', 'PER_ORDER_LIMIT_EXCEEDED', `risk: the amount is above the per-order limit of ${fmt(o.per_order_max)}`];
        } else if (o.daily_max !== null && used + amount > BigInt(o.daily_max)) {
          [level, reason, fail] = ['BLOCKED', 'DAILY_LIMIT_EXCEEDED', `risk: ${fmt((used + amount).toString())} today would exceed the daily limit of ${fmt(o.daily_max)}`];
        } else if (o.approval_threshold !== null && amount > BigInt(o.approval_threshold)) {
          [level, reason] = ['HIGH', 'AMOUNT_OVER_APPROVAL_THRESHOLD'];
        }
        if (fail === null) usedToday.set(key, used + amount);
        await this.sequelize.query(
          `UPDATE withdrawals SET risk_level = $2::text, risk_reason = $3::text, approval = CASE WHEN $2::text = 'HIGH' THEN 'PENDING' ELSE approval END,
                  status = CASE WHEN $4::text IS NULL THEN status ELSE 'FAILED' END, fail_reason = $4::text, finished_at = CASE WHEN $4::text IS NULL THEN NULL ELSE now() END,
                  updated_at = now()
            WHERE id = $1`,
          { bind: [o.id, level, reason, fail], transaction: t },
        );
        if (fail !== null) notices.add(o, 'FAILED', null);
        if (level !== 'LOW') this.logger.info('withdrawal risk', { id: o.id, chain: chain.code, riskLevel: level, riskReason: reason });
      }
      await notices.flush(this.sequelize, t);
      return rows.length;
    });
  }

  /** Operator decision on an order waiting for approval (wcs withdraw approve|reject). */
  static async decide(sequelize: Sequelize, id: number, approve: boolean, note: string | null): Promise<'APPROVED' | 'REJECTED'> {
    return sequelize.transaction(async (t) => {
      const [o] = await sequelize.query<OrderRow & { approval: string }>(`SELECT ${ORDER_COLUMNS}, w.approval FROM ${ORDER_FROM} WHERE w.id = $1 FOR UPDATE OF w`, {
        bind: [String(id)], type: QueryTypes.SELECT, transaction: t,
      });
      if (!o) throw new Error(`withdrawal ${id} not found`);
      if (o.approval !== 'PENDING' || o.status !== 'PROCESSING') throw new Error(`withdrawal ${id} is not waiting for approval (approval ${o.approval}, status ${o.status})`);
      if (approve) {
        await sequelize.query(`UPDATE withdrawals SET approval = 'APPROVED', updated_at = now() WHERE id = $1`, { bind: [String(id)], transaction: t });
        return 'APPROVED';
      }
      const reason = `rejected by the operator${note ? `: ${note}` : ''}`.slice(0, 256);
      await sequelize.query(`UPDATE withdrawals SET approval = 'REJECTED', status = 'FAILED', fail_reason = $2, finished_at = now(), updated_at = now() WHERE id = $1`, {
        bind: [String(id), reason], transaction: t,
      });
      const notices = new WithdrawNotices();
      notices.add(o, 'FAILED', null);
      await notices.flush(sequelize, t);
      return 'REJECTED';
    });
  }

  // ------------------------------------------------------------------ sign

  /** Signs the orders that passed risk (and approval), oldest first, one at a time per chain. */
  async signReady(chain: ChainView): Promise<number> {
    const ready = await this.sequelize.query<{ id: string }>(
      `SELECT w.id::text AS id FROM withdrawals w
        WHERE w.chain_id = $1 AND w.status = 'PROCESSING' AND w.risk_level IS NOT NULL AND w.approval IN ('NONE','APPROVED') AND w.signed_at IS NULL
        ORDER BY w.id LIMIT 100`,
      { bind: [chain.id], type: QueryTypes.SELECT },
    );
    let signed = 0;
    for (const { id } of ready) {
      if (!this.running && this.loops.length > 0) break;
      if (await this.signOne(chain, id)) signed++;
    }
    return signed;
  }

  /** Signs one order; an order its chain's crafter refuses (e.g. a dust amount) ends FAILED with the crafter's reason. */
  private async signOne(chain: ChainView, id: string): Promise<boolean> {
    try {
      return await this.signOneOrThrow(chain, id);
    } catch (e) {
      if (!(e instanceof Uncraftable)) throw e;
      await this.failRefused(chain, id, `the transfer cannot be made on ${chain.code}: ${e.message}`);
      return false;
    }
  }

  private async signOneOrThrow(chain: ChainView, id: string): Promise<boolean> {
    const adapter = this.registry.forChain(chain);
    const node = this.ledger.node(chain);
    const [o] = await this.sequelize.query<OrderRow>(`${ORDER_SELECT} WHERE w.id = $1`, { bind: [id], type: QueryTypes.SELECT });
    if (!o) return false;
    const wallet = await this.wallets.ensure(o.application_id, chain);
    const keyStore = this.keyStore();
    const fromPublicKey = await keyStore.getPublicKey(wallet.ref);
    const base = { from: wallet.address, fromPublicKey, to: o.to_address, memo: o.memo, contract: o.contract, amount: BigInt(o.amount) };
    const input = await node.transferInput(base);
    const floor = adapter.spendModel === 'sequence' ? await node.nextSequence!(wallet.address) : null;
    return this.sequelize.transaction(async (t) => {
      const [still] = await this.sequelize.query<{ signed_at: Date | null; status: string }>('SELECT signed_at, status FROM withdrawals WHERE id = $1 FOR UPDATE', {
        bind: [id], type: QueryTypes.SELECT, transaction: t,
      });
      if (!still || still.signed_at !== null || still.status !== 'PROCESSING') return false;
      let request: TransferRequest = base;
      if (adapter.spendModel === 'sequence') request = { ...base, sequence: await this.allocateSequence(t, chain, wallet.address, floor!) };
      if (adapter.spendModel === 'utxo') {
        const picked = await this.pickInputs(t, adapter, wallet.id, { ...base, changeAddress: wallet.address }, input);
        if (picked === null) return false; // not enough confirmed outputs yet: the ledger said otherwise; try again later
        request = { ...base, inputs: picked, changeAddress: wallet.address };
      }
      let unsigned;
      try {
        unsigned = adapter.transfers!.craft(request, input);
      } catch (e) {
        throw new Uncraftable(e);
      }
      const tx = await signTransfer(adapter, keyStore, wallet, unsigned);
      await this.sequelize.query(
        `UPDATE withdrawals SET sequence = $2, tx_hash = $3, fee = $4::numeric, signed_at = now(), updated_at = now() WHERE id = $1`,
        { bind: [id, request.sequence?.toString() ?? null, tx.txHash, unsigned.maxFee.toString()], transaction: t },
      );
      await this.sequelize.query(
        `INSERT INTO withdraw_transactions (withdrawal_id, attempt, tx_hash, raw_tx, transfer_input, max_fee) VALUES ($1, 1, $2, $3, $4::jsonb, $5::numeric)`,
        { bind: [id, tx.txHash, Buffer.from(tx.raw), JSON.stringify(input), unsigned.maxFee.toString()], transaction: t },
      );
      if (request.inputs) {
        await this.sequelize.query(
          `UPDATE hot_wallet_utxos SET spent_by = $2 FROM unnest($3::text[], $4::int[]) AS u(tx, vout)
            WHERE hot_wallet_utxos.hot_wallet_id = $1 AND hot_wallet_utxos.tx_hash = u.tx AND hot_wallet_utxos.vout = u.vout`,
          { bind: [wallet.id, id, request.inputs.map((i) => i.txHash), request.inputs.map((i) => i.vout)], transaction: t },
        );
      }
      return true;
    });
  }

  /**
   * The next sequence of (chain, hot address), under the allocator row's lock: the stored next
   * value, or the node's when it is ahead (the account sent from elsewhere). No gaps: a sequence
   * is only consumed when the transaction that stores its signed order commits.
   */
  private async allocateSequence(t: Transaction, chain: ChainView, address: string, floor: bigint): Promise<bigint> {
    await this.sequelize.query(
      `INSERT INTO sequence_allocators (chain_id, address, next_sequence) VALUES ($1, $2, $3::numeric) ON CONFLICT (chain_id, address) DO NOTHING`,
      { bind: [chain.id, address, floor.toString()], transaction: t },
    );
    const [row] = await this.sequelize.query<{ next: string }>(
      'SELECT next_sequence::text AS next FROM sequence_allocators WHERE chain_id = $1 AND address = $2 FOR UPDATE',
      { bind: [chain.id, address], type: QueryTypes.SELECT, transaction: t },
    );
    const stored = BigInt(row!.next);
    const seq = stored > floor ? stored : floor;
    await this.sequelize.query('UPDATE sequence_allocators SET next_sequence = $3::numeric, updated_at = now() WHERE chain_id = $1 AND address = $2', {
      bind: [chain.id, address, (seq + 1n).toString()], transaction: t,
    });
    return seq;
  }

  /** utxo chains: confirmed, unspent outputs of the hot wallet, largest first, enough for amount and fee. */
  private async pickInputs(t: Transaction, adapter: ChainAdapter, hotWalletId: number, request: TransferRequest, input: TransferInput) {
    // the wallet row first, as the ledger's output sync does: the two never lock outputs in opposite orders
    await this.sequelize.query('SELECT id FROM hot_wallets WHERE id = $1 FOR NO KEY UPDATE', { bind: [hotWalletId], transaction: t });
    const rows = await this.sequelize.query<{ tx_hash: string; vout: number; amount: string }>(
      `SELECT tx_hash, vout, amount::text AS amount FROM hot_wallet_utxos
        WHERE hot_wallet_id = $1 AND spent_by IS NULL AND confirmations >= 1 ORDER BY amount DESC, tx_hash, vout FOR UPDATE`,
      { bind: [hotWalletId], type: QueryTypes.SELECT, transaction: t },
    );
    const picked: Array<{ txHash: string; vout: number; amount: bigint }> = [];
    for (const r of rows) {
      picked.push({ txHash: r.tx_hash, vout: r.vout, amount: BigInt(r.amount) });
      try {
        // the crafter says whether these inputs cover amount and fee (INSUFFICIENT_INPUTS when they do not)
        adapter.transfers!.craft({ ...request, inputs: picked }, input);
        return picked;
      } catch (e) {
        if ((e as { code?: unknown }).code === 'INSUFFICIENT_INPUTS') continue;
        throw new Uncraftable(e);
      }
    }
    return null;
  }

  // ------------------------------------------------------------------ broadcast

  /** Sends signed, not yet broadcast transactions (again after a crash: the node knows them). */
  async broadcastSigned(chain: ChainView): Promise<number> {
    const node = this.ledger.node(chain);
    const rows = await this.sequelize.query<{ id: string; raw_tx: Buffer; tx_hash: string; attempt: number }>(
      `SELECT w.id::text AS id, x.raw_tx, x.tx_hash, x.attempt FROM withdrawals w
         JOIN withdraw_transactions x ON x.withdrawal_id = w.id AND x.attempt = (SELECT max(attempt) FROM withdraw_transactions y WHERE y.withdrawal_id = w.id)
        WHERE w.chain_id = $1 AND w.status = 'PROCESSING' AND w.signed_at IS NOT NULL ORDER BY w.sequence NULLS LAST, w.id LIMIT 200`,
      { bind: [chain.id], type: QueryTypes.SELECT },
    );
    let sent = 0;
    for (const r of rows) {
      const outcome = await node.broadcast({ txHash: r.tx_hash, raw: new Uint8Array(r.raw_tx) });
      if (outcome.outcome === 'REJECTED') {
        // refused: unless the node has it anyway (sent before a crash and already mined), the order fails
        const seen = await node.status(r.tx_hash);
        if (seen.state === 'UNKNOWN') {
          await this.failRefused(chain, r.id, `the node refused the transaction: ${outcome.reason}`);
          continue;
        }
      }
      await this.sequelize.transaction(async (t) => {
        const [o] = await this.sequelize.query<OrderRow>(`${ORDER_SELECT} WHERE w.id = $1 FOR UPDATE OF w`, { bind: [r.id], type: QueryTypes.SELECT, transaction: t });
        if (!o || o.status !== 'PROCESSING') return;
        await this.sequelize.query(`UPDATE withdrawals SET status = 'BROADCASTED', broadcast_at = now(), updated_at = now() WHERE id = $1`, { bind: [r.id], transaction: t });
        await this.markSent(r.id, r.attempt, t);
        const notices = new WithdrawNotices();
        notices.add(o, 'BROADCASTED', r.tx_hash);
        await notices.flush(this.sequelize, t);
      });
      sent++;
    }
    return sent;
  }

  private async failRefused(chain: ChainView, id: string, reason: string): Promise<void> {
    await this.sequelize.transaction(async (t) => {
      const [o] = await this.sequelize.query<OrderRow>(`${ORDER_SELECT} WHERE w.id = $1 FOR UPDATE OF w`, { bind: [id], type: QueryTypes.SELECT, transaction: t });
      if (!o || o.status !== 'PROCESSING') return;
      await this.sequelize.query(
        `UPDATE withdrawals SET status = 'FAILED', fail_reason = $2, finished_at = now(), updated_at = now() WHERE id = $1`,
        { bind: [id, reason.slice(0, 256)], transaction: t },
      );
      if (o.sequence !== null) {
        // the sequence it held is unused now: hand it out again if nothing came after it, else the operator must fill the gap
        const [rolled] = await this.sequelize.query<{ n: number }>(
          `WITH r AS (UPDATE sequence_allocators SET next_sequence = $3::numeric, updated_at = now()
                       WHERE chain_id = $1 AND address = $2 AND next_sequence = $3::numeric + 1 RETURNING 1) SELECT count(*)::int AS n FROM r`,
          { bind: [chain.id, o.from_address, o.sequence], type: QueryTypes.SELECT, transaction: t },
        );
        if (rolled!.n === 0) {
          await raiseAlert(this.sequelize, t, chain.id, 'SEQUENCE_GAP',
            `${chain.code}: withdrawal ${id} was refused at sequence ${o.sequence} of ${o.from_address} and later sequences are already signed; the next transactions wait until the gap is filled`,
            { withdrawal: id, sequence: o.sequence, address: o.from_address });
        }
      }
      const notices = new WithdrawNotices();
      notices.add(o, 'FAILED', o.tx_hash);
      await notices.flush(this.sequelize, t);
    });
    this.logger.warn('withdrawal refused', { chain: chain.code, id, reason });
  }

  // ------------------------------------------------------------------ track

  /** Follows broadcast orders: CONFIRMING when mined, SUCCESS / FAILED at the chain's confirmations; re-sends or replaces the unmined. */
  async track(chain: ChainView): Promise<number> {
    const node = this.ledger.node(chain);
    const adapter = this.registry.forChain(chain);
    const rows = await this.sequelize.query<{ id: string; status: WithdrawStatus; broadcast_at: Date; txs: Array<{ attempt: number; tx_hash: string; raw: string; input: TransferInput; sent_at: string }> }>(
      `SELECT w.id::text AS id, w.status, w.broadcast_at,
              (SELECT json_agg(json_build_object('attempt', x.attempt, 'tx_hash', x.tx_hash, 'raw', encode(x.raw_tx, 'hex'), 'input', x.transfer_input,
                                                 'sent_at', coalesce(x.sent_at, x.created_at)) ORDER BY x.attempt DESC)
                 FROM withdraw_transactions x WHERE x.withdrawal_id = w.id) AS txs
         FROM withdrawals w WHERE w.chain_id = $1 AND w.status IN ('BROADCASTED','CONFIRMING') ORDER BY w.id LIMIT 500`,
      { bind: [chain.id], type: QueryTypes.SELECT },
    );
    let moved = 0;
    for (const r of rows) {
      let mined: { hash: string; state: Extract<Awaited<ReturnType<TransferNode['status']>>, { state: 'MINED' }> } | null = null;
      let pending = false;
      for (const x of r.txs) {
        const s = await node.status(x.tx_hash);
        if (s.state === 'MINED') {
          mined = { hash: x.tx_hash, state: s };
          break;
        }
        if (s.state === 'PENDING') pending = true;
      }
      if (mined) {
        if (await this.advance(chain, r.id, mined.hash, mined.state)) moved++;
        continue;
      }
      const newest = r.txs[0]!;
      if (!pending) {
        // unknown to the node (dropped, or the node restarted): the same bytes again
        const outcome = await node.broadcast({ txHash: newest.tx_hash, raw: Buffer.from(newest.raw, 'hex') });
        if (outcome.outcome !== 'REJECTED') {
          await this.markSent(r.id, newest.attempt);
          continue;
        }
        this.logger.warn('re-broadcast refused', { chain: chain.code, id: r.id, reason: outcome.reason });
        // sequence chains: a transaction unknown to the node that it now refuses has expired
        // (XRP LastLedgerSequence, Stellar time bounds) and can never apply: the order's sequence
        // is still unused, so it is crafted again on a fresh input at the same sequence (at most
        // one transaction per sequence can apply). Elsewhere the refusal stands: the operator looks.
        if (adapter.spendModel === 'sequence' && r.txs.length < MAX_ATTEMPTS) {
          const known = await this.requestOf(chain, r.id);
          await this.resign(chain, r.id, await node.transferInput(known.request), known);
        }
        continue;
      }
      const age = Date.now() - new Date(newest.sent_at).getTime();
      const cap = this.config.feeCaps.get(`${chain.environment}:${chain.code}`);
      if (age > this.config.stuckMs && cap !== undefined && adapter.transfers?.bumpFee && r.txs.length < MAX_ATTEMPTS) {
        const bumped = adapter.transfers.bumpFee(newest.input, this.config.bumpPercent, cap);
        if (bumped !== null) await this.resign(chain, r.id, bumped);
      }
    }
    return moved;
  }

  private async advance(chain: ChainView, id: string, hash: string, s: { blockHeight: bigint; confirmations: number; succeeded: boolean; fee: bigint | null }): Promise<boolean> {
    return this.sequelize.transaction(async (t) => {
      const [o] = await this.sequelize.query<OrderRow>(`${ORDER_SELECT} WHERE w.id = $1 FOR UPDATE OF w`, { bind: [id], type: QueryTypes.SELECT, transaction: t });
      if (!o || (o.status !== 'BROADCASTED' && o.status !== 'CONFIRMING')) return false;
      const notices = new WithdrawNotices();
      let status: WithdrawStatus = o.status;
      if (status === 'BROADCASTED') {
        status = 'CONFIRMING';
        notices.add({ ...o, tx_hash: hash }, 'CONFIRMING', hash);
      }
      const final = s.confirmations >= chain.confirmations;
      if (final) {
        status = s.succeeded ? 'SUCCESS' : 'FAILED';
        notices.add({ ...o, tx_hash: hash }, status, hash);
      }
      await this.sequelize.query(
        `UPDATE withdrawals SET status = $2::text, tx_hash = $3, block_height = $4, confirmations = $5,
                fee = CASE WHEN $6::text IS NULL THEN fee ELSE $6::numeric END, fee_final = ($6::text IS NOT NULL AND $7::boolean),
                fail_reason = CASE WHEN $2::text = 'FAILED' THEN 'the transaction failed on chain (reverted)' ELSE fail_reason END,
                finished_at = CASE WHEN $7::boolean THEN now() ELSE finished_at END, updated_at = now()
          WHERE id = $1`,
        { bind: [id, status, hash, s.blockHeight.toString(), Math.min(s.confirmations, 2_147_483_647), s.fee?.toString() ?? null, final], transaction: t },
      );
      await notices.flush(this.sequelize, t);
      return status !== o.status || final;
    });
  }

  /** The order's transfer request at its allocated sequence (sequence chains), and its hot wallet. */
  private async requestOf(chain: ChainView, id: string): Promise<{ request: TransferRequest; wallet: HotWallet }> {
    const [o] = await this.sequelize.query<OrderRow>(`${ORDER_SELECT} WHERE w.id = $1`, { bind: [id], type: QueryTypes.SELECT });
    if (!o || o.sequence === null) throw new Error(`withdrawal ${id} has no sequence to sign again at`);
    const wallet = await this.wallets.ensure(o.application_id, chain);
    const fromPublicKey = await this.keyStore().getPublicKey(wallet.ref);
    return { wallet, request: { from: wallet.address, fromPublicKey, to: o.to_address, memo: o.memo, contract: o.contract, amount: BigInt(o.amount), sequence: BigInt(o.sequence) } };
  }

  /**
   * A new transaction for the order at its same sequence, on `input` (fees raised for a stuck
   * one, or fresh for an expired one): stored as the next attempt, then sent. Only one
   * transaction per sequence can ever apply, so the order is still paid at most once.
   */
  private async resign(chain: ChainView, id: string, input: TransferInput, known?: { request: TransferRequest; wallet: HotWallet }): Promise<void> {
    const adapter = this.registry.forChain(chain);
    const { request, wallet } = known ?? (await this.requestOf(chain, id));
    const unsigned = adapter.transfers!.craft(request, input);
    const tx = await signTransfer(adapter, this.keyStore(), wallet, unsigned);
    await this.sequelize.transaction(async (t) => {
      await this.sequelize.query(
        `INSERT INTO withdraw_transactions (withdrawal_id, attempt, tx_hash, raw_tx, transfer_input, max_fee)
         SELECT $1, coalesce(max(attempt), 0) + 1, $2, $3, $4::jsonb, $5::numeric FROM withdraw_transactions WHERE withdrawal_id = $1`,
        { bind: [id, tx.txHash, Buffer.from(tx.raw), JSON.stringify(input as JsonValue), unsigned.maxFee.toString()], transaction: t },
      );
      await this.sequelize.query('UPDATE withdrawals SET fee = GREATEST(fee, $2::numeric), updated_at = now() WHERE id = $1', { bind: [id, unsigned.maxFee.toString()], transaction: t });
    });
    const outcome = await this.ledger.node(chain).broadcast(tx);
    if (outcome.outcome !== 'REJECTED') {
      await this.sequelize.query('UPDATE withdraw_transactions SET sent_at = now() WHERE withdrawal_id = $1 AND tx_hash = $2', { bind: [id, tx.txHash] });
    }
    this.logger.warn('withdrawal signed again at its sequence', { chain: chain.code, id, txHash: tx.txHash, outcome: outcome.outcome });
  }

  /** A node took this transaction now: the stuck clock starts again. */
  private async markSent(id: string, attempt: number, t?: Transaction): Promise<void> {
    await this.sequelize.query('UPDATE withdraw_transactions SET sent_at = now() WHERE withdrawal_id = $1 AND attempt = $2', { bind: [id, attempt], transaction: t });
  }
}

/** The chain's crafter refused the order itself (not its inputs): it can never be paid as it is. */
class Uncraftable extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'Uncraftable';
  }
}

/** Only the KeyStore signs: each payload the adapter crafted, then the adapter combines. */
async function signTransfer(adapter: ChainAdapter, keyStore: KeyStore, wallet: HotWallet, unsigned: UnsignedTransfer): Promise<SignedTransaction> {
  const signatures = [];
  for (const p of unsigned.payloads) signatures.push(await keyStore.sign(wallet.ref, p));
  return adapter.transfers!.combine(unsigned, signatures);
}
