import PQueue from 'p-queue';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import {
  formatUnits, type AdapterRegistry, type BroadcastOutcome, type ChainAdapter, type JsonValue, type KeyStore, type PublicKey, type SignedTransaction, type SpendableOutput,
  type TransactionState, type TransferInput, type TransferNode, type TransferRequest, type UnsignedTransfer,
} from '@wcs/core';
import { OutboxNotices, type NoticeTable } from '../callbacks/outbox';
import type { ChainView } from '../catalogue/catalogue';
import type { Logger } from '../config/logger';
import type { Worker } from '../workers/worker';
import { raiseAlert } from '../deposits/scan-lease';
import type { HotWallet, HotWalletLedger, HotWallets } from './hot-wallets';
import type { WithdrawStatus } from './withdraw-service';
import { decideRisk } from './risk-decision';

/** Transactions signed for one order at most (the first, fee bumps, re-signings after expiry). */
const MAX_ATTEMPTS = 10;
/** Orders signed per transaction (and then broadcast together) by one pay step. */
const SIGN_CHUNK = 50;
/** Orders risk-checked per step; signed or broadcast but unfinished orders looked at per step. */
const RISK_CHUNK = 200;
const BROADCAST_CHUNK = 200;
const TRACK_CHUNK = 500;
/** Parallel requests to a node without the set-based TransferNode forms. */
const NODE_CONCURRENCY = 8;

type MinedState = Extract<TransactionState, { state: 'MINED' }>;

const WITHDRAW_NOTICES: NoticeTable = { table: 'withdraw_notices', recordColumn: 'withdrawal_id', stateColumn: 'status', bizType: 'WITHDRAW' };

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
 * then signing (sequences allocated, or inputs chosen, in the same transaction that stores the
 * signed bytes), broadcast, and tracking to SUCCESS or FAILED, with one `withdraw` callback per
 * (order, status) written in the transaction of the change (docs/withdrawals.md).
 *
 * Set-based: each step handles a chunk of orders with a fixed number of statements and node round
 * trips (the node's batched forms where it has them), not a sequence per order. Per chain two
 * loops run side by side: paying (risk, sign a chunk, broadcast it; again at once while orders
 * wait) and tracking (every broadcast order's transactions in one status read).
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
  /** Hot wallet public keys (a wallet's key never changes: its address is recorded and checked). */
  private readonly publicKeys = new Map<number, PublicKey>();
  /** (order, attempt) pairs a WITHDRAWAL_STUCK alert was raised for (or found) by this worker. */
  private readonly stuckAlerted = new Set<string>();

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
    for (const chain of this.ledger.payoutChains()) {
      this.loops.push(this.loop(chain, 'pay', () => this.payStep(chain)));
      this.loops.push(this.loop(chain, 'track', async () => (await this.track(chain), false)));
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    for (const w of this.wake.splice(0)) w();
    await Promise.all(this.loops);
    this.loops = [];
  }

  /** Runs `body` until stopped: at once again when it says more is waiting, else after pollMs. */
  private async loop(chain: ChainView, what: string, body: () => Promise<boolean>): Promise<void> {
    while (this.running) {
      let again = false;
      try {
        again = await body();
      } catch (e) {
        this.logger.error(`withdrawal ${what} step failed`, { chain: chain.code, error: e });
      }
      if (!this.running) break;
      if (again) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, this.config.pollMs);
        const wake = this.wake;
        function done() {
          clearTimeout(timer);
          const i = wake.indexOf(done);
          if (i >= 0) wake.splice(i, 1);
          resolve();
        }
        this.wake.push(done);
      });
    }
  }

  /** Risk, one chunk signed, the signed broadcast; true when it did something (orders may wait: go again). */
  async payStep(chain: ChainView): Promise<boolean> {
    const assessed = await this.assessRisk(chain);
    const signed = await this.signReady(chain);
    await this.broadcastSigned(chain);
    return assessed > 0 || signed > 0;
  }

  // ------------------------------------------------------------------ risk

  /** Evaluates new orders in id order: limits, destination lists, approval threshold; one UPDATE for all. */
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
          ORDER BY w.id LIMIT ${RISK_CHUNK} FOR UPDATE OF w SKIP LOCKED`,
        { bind: [chain.id], type: QueryTypes.SELECT, transaction: t },
      );
      if (rows.length === 0) return 0;
      const notices = new WithdrawNotices();
      const usedToday = new Map<string, bigint>();
      const verdicts: Array<{ id: string; level: string; reason: string | null; fail: string | null }> = [];
      for (const o of rows) {
        const key = `${o.application_id}/${o.chain_token_id}`;
        const used = usedToday.get(key) ?? BigInt(o.used_today);
        const amount = BigInt(o.amount);
        const big = (v: string | null) => (v === null ? null : BigInt(v));
        const v = decideRisk({
          amount, decimals: o.decimals, usedToday: used,
          perOrderMax: big(o.per_order_max), dailyMax: big(o.daily_max), approvalThreshold: big(o.approval_threshold),
          destinationBlocked: o.blocked, destinationAllowed: o.allowed, allowlistOnly: o.allowlist_only,
        });
        const fail = v.level === 'BLOCKED' ? v.message : null;
        if (fail === null) usedToday.set(key, used + amount);
        verdicts.push({ id: o.id, level: v.level, reason: v.reason, fail });
        if (fail !== null) notices.add(o, 'FAILED', null);
        if (v.level !== 'LOW') this.logger.info('withdrawal risk', { id: o.id, chain: chain.code, riskLevel: v.level, riskReason: v.reason });
      }
      await this.sequelize.query(
        `UPDATE withdrawals w SET risk_level = v.level, risk_reason = v.reason, approval = CASE WHEN v.level = 'HIGH' THEN 'PENDING' ELSE w.approval END,
                status = CASE WHEN v.fail IS NULL THEN w.status ELSE 'FAILED' END, fail_reason = v.fail, finished_at = CASE WHEN v.fail IS NULL THEN NULL ELSE now() END,
                updated_at = now()
           FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) AS v(id, level, reason, fail)
          WHERE w.id = v.id`,
        { bind: [verdicts.map((v) => v.id), verdicts.map((v) => v.level), verdicts.map((v) => v.reason), verdicts.map((v) => v.fail)], transaction: t },
      );
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

  /**
   * Signs the next chunk of orders that passed risk (and approval), oldest first: the node's
   * inputs for all of them in one read, then one transaction that locks them, allocates each
   * hot wallet's sequences (or chooses its inputs) once, signs every order through the KeyStore
   * and stores the signed bytes with a fixed number of statements. An order the chain's crafter
   * refuses (e.g. a dust amount) ends FAILED with the crafter's reason; one the node cannot give
   * an input for now waits for the next step. Returns the number of orders signed.
   */
  async signReady(chain: ChainView): Promise<number> {
    const adapter = this.registry.forChain(chain);
    const node = this.ledger.node(chain);
    const rows = await this.sequelize.query<OrderRow>(
      `${ORDER_SELECT}
        WHERE w.chain_id = $1 AND w.status = 'PROCESSING' AND w.risk_level IS NOT NULL AND w.approval IN ('NONE','APPROVED') AND w.signed_at IS NULL
        ORDER BY w.id LIMIT ${SIGN_CHUNK}`,
      { bind: [chain.id], type: QueryTypes.SELECT },
    );
    if (rows.length === 0) return 0;
    const keyStore = this.keyStore();
    const orders = await Promise.all(rows.map(async (o) => {
      const wallet = await this.wallets.ensure(o.application_id, chain);
      const fromPublicKey = await this.publicKey(keyStore, wallet);
      const base = { from: wallet.address, fromPublicKey, to: o.to_address, memo: o.memo, contract: o.contract, amount: BigInt(o.amount) };
      return { o, wallet, base };
    }));
    const senders = [...new Map(orders.map((x) => [x.wallet.id, x.wallet])).values()];
    const [inputs, floors] = await Promise.all([
      transferInputs(node, orders.map((x) => x.base)),
      adapter.spendModel === 'sequence'
        ? Promise.all(senders.map(async (w) => [w.id, await node.nextSequence!(w.address)] as const)).then((e) => new Map(e))
        : Promise.resolve(new Map<number, bigint>()),
    ]);
    const ready = orders.flatMap((x, i) => {
      const input = inputs[i]!;
      if (input instanceof Error) {
        this.logger.warn('withdrawal not signed yet: the node gives no input for it', { chain: chain.code, id: x.o.id, error: input });
        return [];
      }
      return [{ ...x, input }];
    });
    if (ready.length === 0) return 0;

    return this.sequelize.transaction(async (t) => {
      const locked = await this.sequelize.query<{ id: string }>(
        `SELECT id::text AS id FROM withdrawals WHERE id = ANY($1::bigint[]) AND status = 'PROCESSING' AND signed_at IS NULL ORDER BY id FOR UPDATE SKIP LOCKED`,
        { bind: [ready.map((x) => x.o.id)], type: QueryTypes.SELECT, transaction: t },
      );
      const lockedIds = new Set(locked.map((r) => r.id));
      const todo = ready.filter((x) => lockedIds.has(x.o.id));
      const wallets = [...new Map(todo.map((x) => [x.wallet.id, x.wallet])).values()];
      const nextSequence = new Map<number, bigint>();
      const claimed = new Map<number, bigint>();
      const pools = new Map<number, SpendableOutput[]>();
      for (const w of wallets) {
        if (adapter.spendModel === 'sequence') {
          const first = await this.claimSequences(t, chain, w.address, floors.get(w.id)!);
          nextSequence.set(w.id, first);
          claimed.set(w.id, first);
        }
        if (adapter.spendModel === 'utxo') pools.set(w.id, await this.unspentPool(t, w.id));
      }
      const signed: Array<{ id: string; request: TransferRequest; unsigned: UnsignedTransfer; tx: SignedTransaction; input: TransferInput; walletId: number }> = [];
      const refused: Array<{ o: OrderRow; reason: string }> = [];
      for (const { o, wallet, base, input } of todo) {
        let request: TransferRequest = base;
        let unsigned: UnsignedTransfer;
        try {
          if (adapter.spendModel === 'sequence') request = { ...base, sequence: nextSequence.get(wallet.id)! };
          if (adapter.spendModel === 'utxo') {
            const picked = pickInputs(adapter, pools.get(wallet.id)!, { ...base, changeAddress: wallet.address }, input);
            if (picked === null) continue; // not enough confirmed outputs yet: the ledger said otherwise; try again later
            request = { ...base, inputs: picked, changeAddress: wallet.address };
          }
          unsigned = adapter.transfers!.craft(request, input);
        } catch (e) {
          refused.push({ o, reason: `the transfer cannot be made on ${chain.code}: ${e instanceof Error ? e.message : String(e)}` });
          continue;
        }
        const tx = await signTransfer(adapter, keyStore, wallet, unsigned);
        signed.push({ id: o.id, request, unsigned, tx, input, walletId: wallet.id });
        if (request.sequence !== undefined) nextSequence.set(wallet.id, request.sequence + 1n);
      }
      if (signed.length > 0) {
        await this.sequelize.query(
          `UPDATE withdrawals w SET sequence = u.seq::numeric, tx_hash = u.hash, fee = u.fee::numeric, signed_at = now(), updated_at = now()
             FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) AS u(id, seq, hash, fee) WHERE w.id = u.id`,
          { bind: [signed.map((x) => x.id), signed.map((x) => x.request.sequence?.toString() ?? null), signed.map((x) => x.tx.txHash), signed.map((x) => x.unsigned.maxFee.toString())], transaction: t },
        );
        await this.sequelize.query(
          `INSERT INTO withdraw_transactions (withdrawal_id, attempt, tx_hash, raw_tx, transfer_input, max_fee)
           SELECT u.id, 1, u.hash, decode(u.raw, 'hex'), u.input::jsonb, u.fee::numeric FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(id, hash, raw, input, fee)`,
          {
            bind: [signed.map((x) => x.id), signed.map((x) => x.tx.txHash), signed.map((x) => Buffer.from(x.tx.raw).toString('hex')), signed.map((x) => JSON.stringify(x.input)), signed.map((x) => x.unsigned.maxFee.toString())],
            transaction: t,
          },
        );
        const spent = signed.flatMap((x) => (x.request.inputs ?? []).map((i) => ({ wallet: x.walletId, order: x.id, tx: i.txHash, vout: i.vout })));
        if (spent.length > 0) {
          await this.sequelize.query(
            `UPDATE hot_wallet_utxos SET spent_by = u.order_id FROM unnest($1::int[], $2::bigint[], $3::text[], $4::int[]) AS u(wallet, order_id, tx, vout)
              WHERE hot_wallet_utxos.hot_wallet_id = u.wallet AND hot_wallet_utxos.tx_hash = u.tx AND hot_wallet_utxos.vout = u.vout`,
            { bind: [spent.map((x) => x.wallet), spent.map((x) => x.order), spent.map((x) => x.tx), spent.map((x) => x.vout)], transaction: t },
          );
        }
        const moved = wallets.filter((w) => nextSequence.get(w.id) !== claimed.get(w.id));
        if (moved.length > 0) {
          // sequences are consumed only with the signed orders that hold them: this commits with them
          await this.sequelize.query(
            `UPDATE sequence_allocators a SET next_sequence = u.next::numeric, updated_at = now() FROM unnest($2::text[], $3::text[]) AS u(address, next)
              WHERE a.chain_id = $1 AND a.address = u.address`,
            { bind: [chain.id, moved.map((w) => w.address), moved.map((w) => nextSequence.get(w.id)!.toString())], transaction: t },
          );
        }
      }
      if (refused.length > 0) await this.failOrders(t, refused);
      for (const r of refused) this.logger.warn('withdrawal refused', { chain: chain.code, id: r.o.id, reason: r.reason });
      return signed.length;
    });
  }

  private async publicKey(keyStore: KeyStore, wallet: HotWallet): Promise<PublicKey> {
    let k = this.publicKeys.get(wallet.id);
    if (!k) {
      k = await keyStore.getPublicKey(wallet.ref);
      this.publicKeys.set(wallet.id, k);
    }
    return k;
  }

  /**
   * Locks (chain, hot address)'s allocator row for the rest of the transaction and returns the
   * first sequence to hand out: the stored next value, or the node's when it is ahead (the
   * account sent from elsewhere). No gaps: the caller stores the next value with the signed
   * orders that consumed the sequences, in the same transaction.
   */
  private async claimSequences(t: Transaction, chain: ChainView, address: string, floor: bigint): Promise<bigint> {
    const [row] = await this.sequelize.query<{ next: string }>(
      `INSERT INTO sequence_allocators (chain_id, address, next_sequence) VALUES ($1, $2, $3::numeric)
       ON CONFLICT (chain_id, address) DO UPDATE SET next_sequence = GREATEST(sequence_allocators.next_sequence, EXCLUDED.next_sequence)
       RETURNING next_sequence::text AS next`,
      { bind: [chain.id, address, floor.toString()], type: QueryTypes.SELECT, transaction: t },
    );
    return BigInt(row!.next);
  }

  /** utxo chains: the hot wallet's confirmed, unspent outputs, largest first, locked for the transaction. */
  private async unspentPool(t: Transaction, hotWalletId: number): Promise<SpendableOutput[]> {
    // the wallet row first, as the ledger's output sync does: the two never lock outputs in opposite orders
    await this.sequelize.query('SELECT id FROM hot_wallets WHERE id = $1 FOR NO KEY UPDATE', { bind: [hotWalletId], transaction: t });
    const rows = await this.sequelize.query<{ tx_hash: string; vout: number; amount: string }>(
      `SELECT tx_hash, vout, amount::text AS amount FROM hot_wallet_utxos
        WHERE hot_wallet_id = $1 AND spent_by IS NULL AND confirmations >= 1 ORDER BY amount DESC, tx_hash, vout FOR UPDATE`,
      { bind: [hotWalletId], type: QueryTypes.SELECT, transaction: t },
    );
    return rows.map((r) => ({ txHash: r.tx_hash, vout: r.vout, amount: BigInt(r.amount) }));
  }

  /** Orders that hold no sequence or input (refused before either was given): FAILED with their callback. */
  private async failOrders(t: Transaction, failed: ReadonlyArray<{ o: OrderRow; reason: string }>): Promise<void> {
    const done = await this.sequelize.query<{ id: string }>(
      `UPDATE withdrawals w SET status = 'FAILED', fail_reason = u.reason, finished_at = now(), updated_at = now()
         FROM unnest($1::bigint[], $2::text[]) AS u(id, reason) WHERE w.id = u.id AND w.status = 'PROCESSING' RETURNING w.id::text AS id`,
      { bind: [failed.map((f) => f.o.id), failed.map((f) => f.reason.slice(0, 256))], type: QueryTypes.SELECT, transaction: t },
    );
    const ids = new Set(done.map((d) => d.id));
    const notices = new WithdrawNotices();
    for (const f of failed) if (ids.has(f.o.id)) notices.add(f.o, 'FAILED', null);
    await notices.flush(this.sequelize, t);
  }

  // ------------------------------------------------------------------ broadcast

  /**
   * Sends the signed, not yet broadcast transactions (the chunk just signed; again after a crash:
   * the node knows them), in one round trip where the node allows, then moves the orders the node
   * took to BROADCASTED in one transaction. A refusal for now leaves its order for the next step.
   */
  async broadcastSigned(chain: ChainView): Promise<number> {
    const node = this.ledger.node(chain);
    const rows = await this.sequelize.query<OrderRow & { raw_tx: Buffer; attempt: number; sent_hash: string }>(
      `SELECT ${ORDER_COLUMNS}, x.raw_tx, x.tx_hash AS sent_hash, x.attempt FROM ${ORDER_FROM}
         JOIN withdraw_transactions x ON x.withdrawal_id = w.id AND x.attempt = (SELECT max(attempt) FROM withdraw_transactions y WHERE y.withdrawal_id = w.id)
        WHERE w.chain_id = $1 AND w.status = 'PROCESSING' AND w.signed_at IS NOT NULL ORDER BY w.sequence NULLS LAST, w.id LIMIT ${BROADCAST_CHUNK}`,
      { bind: [chain.id], type: QueryTypes.SELECT },
    );
    if (rows.length === 0) return 0;
    const outcomes = await broadcastAll(node, rows.map((r) => ({ txHash: r.sent_hash, raw: new Uint8Array(r.raw_tx) })));
    const taken: typeof rows = [];
    for (const [i, r] of rows.entries()) {
      const outcome = outcomes[i]!;
      if (outcome instanceof Error) {
        this.logger.warn('broadcast failed; sent again next step', { chain: chain.code, id: r.id, error: outcome });
        continue;
      }
      if (outcome.outcome === 'REJECTED') {
        // refused: unless the node has it anyway (sent before a crash and already mined), the order fails
        const seen = await node.status(r.sent_hash);
        if (seen.state === 'UNKNOWN') {
          await this.failRefused(chain, r.id, `the node refused the transaction: ${outcome.reason}`);
          continue;
        }
      }
      taken.push(r);
    }
    if (taken.length === 0) return 0;
    return this.sequelize.transaction(async (t) => {
      const moved = await this.sequelize.query<{ id: string }>(
        `UPDATE withdrawals SET status = 'BROADCASTED', broadcast_at = now(), updated_at = now() WHERE id = ANY($1::bigint[]) AND status = 'PROCESSING' RETURNING id::text AS id`,
        { bind: [taken.map((r) => r.id)], type: QueryTypes.SELECT, transaction: t },
      );
      await this.markSentAll(taken.map((r) => ({ id: r.id, attempt: r.attempt })), t);
      const ids = new Set(moved.map((m) => m.id));
      const notices = new WithdrawNotices();
      for (const r of taken) if (ids.has(r.id)) notices.add(r, 'BROADCASTED', r.sent_hash);
      await notices.flush(this.sequelize, t);
      return moved.length;
    });
  }

  /** Ends an order FAILED (from `from`, PROCESSING unless given) with its callback; a sequence it held is handed out again when nothing came after it. */
  private async failRefused(chain: ChainView, id: string, reason: string, from: readonly WithdrawStatus[] = ['PROCESSING']): Promise<void> {
    await this.sequelize.transaction(async (t) => {
      const [o] = await this.sequelize.query<OrderRow>(`${ORDER_SELECT} WHERE w.id = $1 FOR UPDATE OF w`, { bind: [id], type: QueryTypes.SELECT, transaction: t });
      if (!o || !from.includes(o.status)) return;
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

  /**
   * Follows broadcast orders: the status of every transaction of every open order in one read,
   * then CONFIRMING when mined, SUCCESS / FAILED at the chain's confirmations, written for all
   * of them in one transaction; re-sends or replaces the unmined (one at a time: rare).
   */
  async track(chain: ChainView): Promise<number> {
    const node = this.ledger.node(chain);
    const adapter = this.registry.forChain(chain);
    // expiring chains tell EXPIRED from UNKNOWN by the input a transaction was crafted on
    const withInput = adapter.spendModel === 'expiring' ? ", 'input', x.transfer_input" : '';
    const rows = await this.sequelize.query<OrderRow & { block_height: string | null; confirmations: number; txs: Array<{ attempt: number; tx_hash: string; sent_at: string; input?: TransferInput }> }>(
      `SELECT ${ORDER_COLUMNS}, w.block_height::text AS block_height, w.confirmations,
              (SELECT json_agg(json_build_object('attempt', x.attempt, 'tx_hash', x.tx_hash, 'sent_at', coalesce(x.sent_at, x.created_at)${withInput}) ORDER BY x.attempt DESC)
                 FROM withdraw_transactions x WHERE x.withdrawal_id = w.id) AS txs
         FROM ${ORDER_FROM} WHERE w.chain_id = $1 AND w.status IN ('BROADCASTED','CONFIRMING') ORDER BY w.id LIMIT ${TRACK_CHUNK}`,
      { bind: [chain.id], type: QueryTypes.SELECT },
    );
    if (rows.length === 0) return 0;
    const sent = rows.flatMap((r) => r.txs);
    const hashes = sent.map((x) => x.tx_hash);
    const answers = await statusAll(node, hashes, sent.map((x) => x.input));
    const states = new Map(hashes.map((h, i) => [h, answers[i]!]));
    const mined: Array<{ o: (typeof rows)[number]; hash: string; state: MinedState }> = [];
    for (const r of rows) {
      const seen = r.txs.map((x) => ({ x, s: states.get(x.tx_hash)! }));
      const hit = seen.find((e) => !(e.s instanceof Error) && e.s.state === 'MINED');
      if (hit) {
        mined.push({ o: r, hash: hit.x.tx_hash, state: hit.s as MinedState });
        continue;
      }
      const fault = seen.find((e) => e.s instanceof Error);
      if (fault) {
        this.logger.warn('withdrawal status not read; asked again next step', { chain: chain.code, id: r.id, error: fault.s });
        continue;
      }
      const state = (e: (typeof seen)[number]) => (e.s as TransactionState).state;
      try {
        if (seen.every((e) => state(e) === 'EXPIRED') && adapter.spendModel === 'expiring') {
          await this.expired(chain, r, r.txs.length);
          continue;
        }
        await this.unmined(chain, adapter, node, r.id, r.txs, seen.some((e) => state(e) === 'PENDING'));
      } catch (e) {
        this.logger.warn('withdrawal re-send failed; tried again next step', { chain: chain.code, id: r.id, error: e });
      }
    }
    return this.advanceAll(chain, mined);
  }

  /**
   * `expiring` chains: every transaction of the order is past its validity and in no block, so
   * none can ever land: the transfer is crafted anew on a fresh input (the order is still paid at
   * most once); after MAX_ATTEMPTS such transactions the order ends FAILED.
   */
  private async expired(chain: ChainView, o: OrderRow, attempts: number): Promise<void> {
    if (attempts >= MAX_ATTEMPTS) {
      await this.failRefused(chain, o.id, `the transaction expired ${attempts} times without landing (dropped and not replaceable)`, ['BROADCASTED']);
      return;
    }
    const known = await this.requestOf(chain, o.id);
    await this.resign(chain, o.id, await this.ledger.node(chain).transferInput(known.request), known, attempts);
  }

  /** An order none of whose transactions is mined: re-send a dropped one, sign an expired one again, replace a stuck one. */
  private async unmined(chain: ChainView, adapter: ChainAdapter, node: TransferNode, id: string, txs: ReadonlyArray<{ attempt: number; tx_hash: string; sent_at: string }>, pending: boolean): Promise<void> {
    const newest = txs[0]!;
    if (!pending) {
      // unknown to the node (dropped, or the node restarted): the same bytes again
      const [stored] = await this.sequelize.query<{ raw_tx: Buffer }>('SELECT raw_tx FROM withdraw_transactions WHERE withdrawal_id = $1 AND attempt = $2', {
        bind: [id, newest.attempt], type: QueryTypes.SELECT,
      });
      const outcome = await node.broadcast({ txHash: newest.tx_hash, raw: new Uint8Array(stored!.raw_tx) });
      if (outcome.outcome !== 'REJECTED') {
        await this.markSentAll([{ id, attempt: newest.attempt }]);
        return;
      }
      this.logger.warn('re-broadcast refused', { chain: chain.code, id, reason: outcome.reason });
      // sequence chains: a transaction unknown to the node that it now refuses has expired
      // (XRP LastLedgerSequence, Stellar time bounds) and can never apply: the order's sequence
      // is still unused, so it is crafted again on a fresh input at the same sequence (at most
      // one transaction per sequence can apply). Elsewhere the refusal stands: the operator looks.
      if (adapter.spendModel === 'sequence' && txs.length < MAX_ATTEMPTS) {
        const known = await this.requestOf(chain, id);
        await this.resign(chain, id, await node.transferInput(known.request), known, txs.length);
      }
      return;
    }
    const age = Date.now() - new Date(newest.sent_at).getTime();
    // already alerted as stuck and not replaceable: nothing to decide again (no reads each step)
    if (age <= this.config.stuckMs || !adapter.transfers?.bumpFee || this.stuckAlerted.has(`${id}/${newest.attempt}`)) return;
    // stuck on a chain with a fee market: replaced with higher fees while the cap and the attempts allow, else an operator looks
    const cap = this.config.feeCaps.get(`${chain.environment}:${chain.code}`);
    let why: string;
    if (cap === undefined) {
      why = `no fee cap is set for replacements (WCS_WITHDRAW_FEE_CAP_${chain.environment.toUpperCase()}_${chain.code})`;
    } else if (txs.length >= MAX_ATTEMPTS) {
      why = `${txs.length} transactions are signed for it, the most allowed`;
    } else {
      const [stored] = await this.sequelize.query<{ input: TransferInput }>('SELECT transfer_input AS input FROM withdraw_transactions WHERE withdrawal_id = $1 AND attempt = $2', {
        bind: [id, newest.attempt], type: QueryTypes.SELECT,
      });
      const bumped = adapter.transfers.bumpFee(stored!.input, this.config.bumpPercent, cap);
      if (bumped !== null) {
        await this.resign(chain, id, bumped, undefined, txs.length);
        return;
      }
      why = `its fees are at the cap of ${cap} per unit`;
    }
    await this.stuckAlert(chain, id, newest, age, why);
  }

  /**
   * One WITHDRAWAL_STUCK operator alert per (order, transaction) that stays unmined past the
   * stuck time and cannot be replaced: the order waits BROADCASTED until it is mined, or until an
   * operator raises the cap or looks at the node.
   */
  private async stuckAlert(chain: ChainView, id: string, tx: { attempt: number; tx_hash: string }, age: number, why: string): Promise<void> {
    const raised = await this.sequelize.transaction(async (t) => {
      const seen = await this.sequelize.query(
        `SELECT 1 FROM operator_alerts WHERE kind = 'WITHDRAWAL_STUCK' AND chain_id = $1 AND details->>'withdrawal' = $2 AND details->>'txHash' = $3 LIMIT 1`,
        { bind: [chain.id, id, tx.tx_hash], type: QueryTypes.SELECT, transaction: t },
      );
      if (seen.length > 0) return false;
      await raiseAlert(this.sequelize, t, chain.id, 'WITHDRAWAL_STUCK',
        `${chain.code}: withdrawal ${id}'s transaction ${tx.tx_hash} is unmined ${Math.round(age / 1000)} s after it was sent and is not replaced: ${why}; the order stays BROADCASTED until it is mined`,
        { withdrawal: id, txHash: tx.tx_hash, attempt: tx.attempt, reason: why });
      return true;
    });
    this.stuckAlerted.add(`${id}/${tx.attempt}`);
    if (raised) this.logger.warn('withdrawal stuck and not replaced', { chain: chain.code, id, txHash: tx.tx_hash, reason: why });
  }

  /**
   * The mined orders' new state in one UPDATE (only rows whose state, transaction, height or
   * confirmations changed, and only while the order is still in the state read) and their
   * callbacks in one flush, in one transaction.
   */
  private async advanceAll(chain: ChainView, mined: ReadonlyArray<{ o: OrderRow & { block_height: string | null; confirmations: number }; hash: string; state: MinedState }>): Promise<number> {
    const changes = mined.flatMap(({ o, hash, state: s }) => {
      let status: WithdrawStatus = o.status;
      const events: WithdrawStatus[] = [];
      if (status === 'BROADCASTED') {
        status = 'CONFIRMING';
        events.push('CONFIRMING');
      }
      const final = s.confirmations >= chain.confirmations;
      if (final) {
        status = s.succeeded ? 'SUCCESS' : 'FAILED';
        events.push(status);
      }
      const confirmations = Math.min(s.confirmations, 2_147_483_647);
      if (status === o.status && hash === o.tx_hash && o.block_height === s.blockHeight.toString() && o.confirmations === confirmations) return [];
      return [{ o, hash, s, status, final, confirmations, events }];
    });
    if (changes.length === 0) return 0;
    return this.sequelize.transaction(async (t) => {
      const done = await this.sequelize.query<{ id: string }>(
        `UPDATE withdrawals w SET status = u.status, tx_hash = u.hash, block_height = u.height::numeric, confirmations = u.conf,
                fee = CASE WHEN u.fee IS NULL THEN w.fee ELSE u.fee::numeric END, fee_final = (u.fee IS NOT NULL AND u.final),
                fail_reason = CASE WHEN u.status = 'FAILED' THEN 'the transaction failed on chain (reverted)' ELSE w.fail_reason END,
                finished_at = CASE WHEN u.final THEN now() ELSE w.finished_at END, updated_at = now()
           FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::boolean[], $8::text[]) AS u(id, was, status, hash, conf, fee, final, height)
          WHERE w.id = u.id AND w.status = u.was
          RETURNING w.id::text AS id`,
        {
          bind: [
            changes.map((c) => c.o.id), changes.map((c) => c.o.status), changes.map((c) => c.status), changes.map((c) => c.hash), changes.map((c) => c.confirmations),
            changes.map((c) => c.s.fee?.toString() ?? null), changes.map((c) => c.final), changes.map((c) => c.s.blockHeight.toString()),
          ],
          type: QueryTypes.SELECT,
          transaction: t,
        },
      );
      const ids = new Set(done.map((d) => d.id));
      const notices = new WithdrawNotices();
      for (const c of changes) if (ids.has(c.o.id)) for (const e of c.events) notices.add({ ...c.o, tx_hash: c.hash }, e, c.hash);
      await notices.flush(this.sequelize, t);
      return changes.filter((c) => ids.has(c.o.id) && (c.status !== c.o.status || c.final)).length;
    });
  }

  /** The order's transfer request at its allocated sequence (sequence chains), and its hot wallet. */
  private async requestOf(chain: ChainView, id: string): Promise<{ request: TransferRequest; wallet: HotWallet }> {
    const [o] = await this.sequelize.query<OrderRow>(`${ORDER_SELECT} WHERE w.id = $1`, { bind: [id], type: QueryTypes.SELECT });
    if (!o) throw new Error(`withdrawal ${id} not found`);
    const model = this.registry.forChain(chain).spendModel;
    if (model === 'sequence' && o.sequence === null) throw new Error(`withdrawal ${id} has no sequence to sign again at`);
    if (model === 'utxo') throw new Error(`withdrawal ${id}: utxo transfers are not signed again`);
    const wallet = await this.wallets.ensure(o.application_id, chain);
    const fromPublicKey = await this.publicKey(this.keyStore(), wallet);
    const request: TransferRequest = { from: wallet.address, fromPublicKey, to: o.to_address, memo: o.memo, contract: o.contract, amount: BigInt(o.amount) };
    return { wallet, request: o.sequence === null ? request : { ...request, sequence: BigInt(o.sequence) } };
  }

  /**
   * A new transaction for the order at its same sequence, on `input` (fees raised for a stuck
   * one, or fresh for an expired one): stored as the next attempt, then sent. Only one
   * transaction per sequence can ever apply, so the order is still paid at most once.
   */
  private async resign(chain: ChainView, id: string, input: TransferInput, known: { request: TransferRequest; wallet: HotWallet } | undefined, attempts: number): Promise<void> {
    const adapter = this.registry.forChain(chain);
    const { request, wallet } = known ?? (await this.requestOf(chain, id));
    const unsigned = adapter.transfers!.craft(request, input);
    const tx = await signTransfer(adapter, this.keyStore(), wallet, unsigned);
    const stored = await this.sequelize.transaction(async (t) => {
      // only on the transactions this decision was made on: another worker may have signed again meanwhile
      const [o] = await this.sequelize.query<{ status: string; attempts: number }>(
        `SELECT w.status, (SELECT count(*)::int FROM withdraw_transactions x WHERE x.withdrawal_id = w.id) AS attempts FROM withdrawals w WHERE w.id = $1 FOR UPDATE`,
        { bind: [id], type: QueryTypes.SELECT, transaction: t },
      );
      if (!o || (o.status !== 'BROADCASTED' && o.status !== 'CONFIRMING') || o.attempts !== attempts) return false;
      await this.sequelize.query(
        `INSERT INTO withdraw_transactions (withdrawal_id, attempt, tx_hash, raw_tx, transfer_input, max_fee)
         SELECT $1, coalesce(max(attempt), 0) + 1, $2, $3, $4::jsonb, $5::numeric FROM withdraw_transactions WHERE withdrawal_id = $1`,
        { bind: [id, tx.txHash, Buffer.from(tx.raw), JSON.stringify(input as JsonValue), unsigned.maxFee.toString()], transaction: t },
      );
      await this.sequelize.query('UPDATE withdrawals SET fee = GREATEST(fee, $2::numeric), updated_at = now() WHERE id = $1', { bind: [id, unsigned.maxFee.toString()], transaction: t });
      return true;
    });
    if (!stored) return;
    const outcome = await this.ledger.node(chain).broadcast(tx);
    if (outcome.outcome !== 'REJECTED') {
      await this.sequelize.query('UPDATE withdraw_transactions SET sent_at = now() WHERE withdrawal_id = $1 AND tx_hash = $2', { bind: [id, tx.txHash] });
    }
    this.logger.warn('withdrawal signed again at its sequence', { chain: chain.code, id, txHash: tx.txHash, outcome: outcome.outcome });
  }

  /** A node took these transactions now: the stuck clock starts again. */
  private async markSentAll(sent: ReadonlyArray<{ id: string; attempt: number }>, t?: Transaction): Promise<void> {
    await this.sequelize.query(
      `UPDATE withdraw_transactions x SET sent_at = now() FROM unnest($1::bigint[], $2::int[]) AS u(id, attempt) WHERE x.withdrawal_id = u.id AND x.attempt = u.attempt`,
      { bind: [sent.map((s) => s.id), sent.map((s) => s.attempt)], transaction: t },
    );
  }
}

/**
 * utxo chains: the inputs of one order from `pool`; they leave the pool. The adapter's own
 * selection when it has one (Bitcoin: branch-and-bound for a changeless spend, else largest
 * first; tested in the adapter), else outputs from the front of `pool` (largest first) until the
 * crafter says they cover amount and fee. Null when the pool cannot cover it (the order waits for
 * more confirmed outputs); a refusal of the order itself (not its inputs) throws.
 */
function pickInputs(adapter: ChainAdapter, pool: SpendableOutput[], request: TransferRequest, input: TransferInput): SpendableOutput[] | null {
  const crafter = adapter.transfers!;
  if (crafter.selectInputs) {
    const selection = crafter.selectInputs(pool, request, input);
    if (!selection.ok) return null;
    const chosen = new Set(selection.inputs.map((o) => `${o.txHash}:${o.vout}`));
    const picked = pool.filter((o) => chosen.has(`${o.txHash}:${o.vout}`));
    if (picked.length !== chosen.size) throw new Error(`${adapter.chain.code}: the input selection returned outputs that are not in the pool`);
    for (let i = pool.length - 1; i >= 0; i--) if (chosen.has(`${pool[i]!.txHash}:${pool[i]!.vout}`)) pool.splice(i, 1);
    // craft() gets them in the order the adapter chose
    return [...selection.inputs];
  }
  for (let n = 1; n <= pool.length; n++) {
    const picked = pool.slice(0, n);
    try {
      // the crafter says whether these inputs cover amount and fee (INSUFFICIENT_INPUTS when they do not)
      crafter.craft({ ...request, inputs: picked }, input);
    } catch (e) {
      if ((e as { code?: unknown }).code === 'INSUFFICIENT_INPUTS') continue;
      throw e;
    }
    pool.splice(0, n);
    return picked;
  }
  return null;
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/** The node's set-based forms where it has them, else the single calls (NODE_CONCURRENCY at a time). */
async function transferInputs(node: TransferNode, requests: ReadonlyArray<Omit<TransferRequest, 'sequence' | 'inputs' | 'changeAddress'>>): Promise<Array<TransferInput | Error>> {
  if (node.transferInputs) return node.transferInputs(requests);
  const queue = new PQueue({ concurrency: NODE_CONCURRENCY });
  return Promise.all(requests.map((r) => queue.add(() => node.transferInput(r).catch(asError))));
}

async function statusAll(node: TransferNode, hashes: readonly string[], inputs: ReadonlyArray<TransferInput | undefined>): Promise<Array<TransactionState | Error>> {
  if (hashes.length === 0) return [];
  if (node.statusMany) return node.statusMany(hashes, inputs);
  const queue = new PQueue({ concurrency: NODE_CONCURRENCY });
  return Promise.all(hashes.map((h, i) => queue.add(() => node.status(h, inputs[i]).catch(asError))));
}

/** Without broadcastMany: one at a time, in the order given (sequence order), as such nodes want them. */
async function broadcastAll(node: TransferNode, txs: readonly SignedTransaction[]): Promise<Array<BroadcastOutcome | Error>> {
  if (node.broadcastMany) return node.broadcastMany(txs);
  const out: Array<BroadcastOutcome | Error> = [];
  for (const tx of txs) out.push(await node.broadcast(tx).catch(asError));
  return out;
}

/** Only the KeyStore signs: each payload the adapter crafted, then the adapter combines. */
async function signTransfer(adapter: ChainAdapter, keyStore: KeyStore, wallet: HotWallet, unsigned: UnsignedTransfer): Promise<SignedTransaction> {
  const signatures = [];
  for (const p of unsigned.payloads) signatures.push(await keyStore.sign(wallet.ref, p));
  return adapter.transfers!.combine(unsigned, signatures);
}
