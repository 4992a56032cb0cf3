import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { AdapterRegistry, ChainAdapter, JsonValue, KeyStore, TransactionState, TransferInput, TransferNode, AllocatedTransfer } from '@wcs/core';
import type { ChainView } from '../catalogue/catalogue';
import type { Logger } from '../config/logger';
import { raiseAlert } from '../deposits/scan-lease';
import type { TransferBuilder } from './builder';
import type { TransferKind, TransferStatus } from './model';
import type { TransferChange, TransferFailCode } from './owners';
import { change, COLUMNS, FROM, type TransferRow } from './rows';
import { signTransfer, statusAll } from './node-calls';
import type { TransferPipelineConfig } from './pipeline';

/** Transactions signed for one transfer at most (the first, fee bumps, re-signings after expiry). */
export const MAX_ATTEMPTS = 10;
/** Open transfers whose transactions are read per track step. */
const TRACK_CHUNK = 500;

type MinedState = Extract<TransactionState, { state: 'MINED' }>;

/** What the tracker needs of the pipeline: its owners' hooks and the outcomes it shares with the broadcast step. */
export interface TrackerHost {
  notify(t: Transaction, changes: readonly TransferChange[]): Promise<void>;
  failRefused(chain: ChainView, id: string, code: TransferFailCode, reason: string, from?: readonly TransferStatus[]): Promise<void>;
  storedInput(id: string, attempt: number): Promise<TransferInput | undefined>;
  markSentAll(sent: ReadonlyArray<{ id: string; attempt: number }>, t?: Transaction): Promise<void>;
  describe(t: Transaction, r: { id: string; kind: TransferKind }): Promise<{ readonly what: string; readonly alertKind: string; readonly details: Record<string, unknown> }>;
  /** Whether a transfer from `sender` may be signed again now: not held, and the chain check before signing agrees. */
  maySign(chain: ChainView, sender: string): Promise<boolean>;
}

/**
 * The pipeline's tracking side (docs/transfers.md): every open transfer's transactions in one
 * status read; mined ones advance (CONFIRMING, then SUCCESS / FAILED at the chain's
 * confirmations) with their owners' hooks in one transaction; a dropped one is re-sent, an
 * expired one crafted anew, a stuck one replaced at its sequence within the fee cap, else alerted.
 */
export class TransferTracker {
  /** (transfer, attempt) pairs a stuck alert was raised for (or found) by this process. */
  private readonly stuckAlerted = new Set<string>();

  constructor(
    private readonly sequelize: Sequelize,
    private readonly registry: AdapterRegistry,
    private readonly nodeOf: (chain: ChainView) => TransferNode,
    private readonly keyStore: () => KeyStore,
    private readonly config: TransferPipelineConfig,
    private readonly logger: Logger,
    private readonly builder: TransferBuilder,
    private readonly host: TrackerHost,
  ) {}

  /**
   * Follows broadcast transfers: the status of every transaction of every open transfer in one
   * read, then CONFIRMING when mined, SUCCESS / FAILED at the chain's confirmations, written for
   * all of them in one transaction; re-sends or replaces the unmined (one at a time: rare).
   */
  async track(chain: ChainView): Promise<number> {
    // every open transfer each step, a chunk at a time (oldest first): a long queue never leaves the newest a step behind
    let after = '0';
    let moved = 0;
    let tip: bigint | null = null;
    if (this.nodeOf(chain).tipHeight) {
      try {
        tip = await this.nodeOf(chain).tipHeight!();
      } catch (e) {
        this.logger.warn('tip height not read; every open transfer is read this step', { chain: chain.code, error: e });
      }
    }
    for (;;) {
      const chunk = await this.trackChunk(chain, after, tip);
      moved += chunk.moved;
      if (chunk.last === null) return moved;
      after = chunk.last;
    }
  }

  /** One chunk of open transfers after id `after`: moved as track() says; `last` is the chunk's last id when the chunk was full (more may follow). */
  private async trackChunk(chain: ChainView, after: string, tip: bigint | null): Promise<{ moved: number; last: string | null }> {
    const node = this.nodeOf(chain);
    const adapter = this.registry.forChain(chain);
    // status() gets the input each transaction was crafted on (the contract: the service always
    // passes it): expiring chains tell EXPIRED from UNKNOWN by it, others may follow the
    // transaction's messages with it (TON)
    const withInput = ", 'input', a.transfer_input";
    const rows = await this.sequelize.query<TransferRow & { txs: Array<{ attempt: number; tx_hash: string; sent_at: string; input?: TransferInput }> }>(
      `SELECT ${COLUMNS},
              (SELECT json_agg(json_build_object('attempt', a.attempt, 'tx_hash', a.tx_hash, 'sent_at', coalesce(a.sent_at, a.created_at)${withInput}) ORDER BY a.attempt DESC)
                 FROM transfer_attempts a WHERE a.transfer_id = x.id) AS txs
         FROM ${FROM} WHERE x.chain_id = $1 AND x.status IN ('BROADCASTED','CONFIRMING') AND x.id > $2::bigint ORDER BY x.id LIMIT ${TRACK_CHUNK}`,
      { bind: [chain.id, after], type: QueryTypes.SELECT },
    );
    if (rows.length === 0) return { moved: 0, last: null };
    const last = rows.length === TRACK_CHUNK ? rows[rows.length - 1]!.id : null;
    // mined in a block too recent to be final: the count follows the tip without a read; the
    // transaction is read again once it can be final, which also finds a reorg under it
    const mined: Array<{ r: TransferRow; hash: string; state: MinedState }> = [];
    const notDue = (r: TransferRow): bigint | null => {
      if (tip === null || r.status !== 'CONFIRMING' || r.block_height === null || r.tx_hash === null) return null;
      const confirmations = tip - BigInt(r.block_height) + 1n;
      return confirmations >= 1n && confirmations < BigInt(chain.confirmations) ? confirmations : null;
    };
    const toRead: typeof rows = [];
    for (const r of rows) {
      const confirmations = notDue(r);
      if (confirmations === null) toRead.push(r);
      else mined.push({ r, hash: r.tx_hash!, state: { state: 'MINED', blockHeight: BigInt(r.block_height!), blockHash: '', confirmations: Number(confirmations), succeeded: true, fee: null } });
    }
    const sent = toRead.flatMap((r) => r.txs);
    const hashes = sent.map((x) => x.tx_hash);
    const answers = await statusAll(node, hashes, sent.map((x) => x.input));
    const states = new Map(hashes.map((h, i) => [h, answers[i]!]));
    for (const r of toRead) {
      const seen = r.txs.map((x) => ({ x, s: states.get(x.tx_hash)! }));
      const hit = seen.find((e) => !(e.s instanceof Error) && e.s.state === 'MINED');
      if (hit) {
        mined.push({ r, hash: hit.x.tx_hash, state: hit.s as MinedState });
        continue;
      }
      const fault = seen.find((e) => e.s instanceof Error);
      if (fault) {
        this.logger.warn('transfer status not read; asked again next step', { chain: chain.code, id: r.id, error: fault.s });
        continue;
      }
      const state = (e: (typeof seen)[number]) => (e.s as TransactionState).state;
      try {
        if (seen.every((e) => state(e) === 'EXPIRED') && adapter.spendModel === 'expiring') {
          await this.expired(chain, r, r.txs.length);
          continue;
        }
        await this.unmined(chain, adapter, node, r, r.txs, seen.some((e) => state(e) === 'PENDING'));
      } catch (e) {
        this.logger.warn('transfer re-send failed; tried again next step', { chain: chain.code, id: r.id, error: e });
      }
    }
    return { moved: await this.advanceAll(chain, mined), last };
  }

  /** `expiring` chains: every transaction expired and none can land: crafted anew, or FAILED after MAX_ATTEMPTS. */
  private async expired(chain: ChainView, r: TransferRow, attempts: number): Promise<void> {
    if (attempts >= MAX_ATTEMPTS) {
      await this.host.failRefused(chain, r.id, 'EXPIRED', `the transaction expired ${attempts} times without landing (dropped and not replaceable)`, ['BROADCASTED']);
      return;
    }
    await this.resign(chain, r, null, attempts);
  }

  /** A transfer none of whose transactions is mined: re-send a dropped one, sign an expired one again, replace a stuck one. */
  private async unmined(chain: ChainView, adapter: ChainAdapter, node: TransferNode, r: TransferRow, txs: ReadonlyArray<{ attempt: number; tx_hash: string; sent_at: string }>, pending: boolean): Promise<void> {
    const newest = txs[0]!;
    if (!pending) {
      // unknown to the node (dropped, or the node restarted): the same bytes again
      const [stored] = await this.sequelize.query<{ raw_tx: Buffer }>('SELECT raw_tx FROM transfer_attempts WHERE transfer_id = $1 AND attempt = $2', {
        bind: [r.id, newest.attempt], type: QueryTypes.SELECT,
      });
      const outcome = await node.broadcast({ txHash: newest.tx_hash, raw: new Uint8Array(stored!.raw_tx) });
      if (outcome.outcome !== 'REJECTED') {
        await this.host.markSentAll([{ id: r.id, attempt: newest.attempt }]);
        return;
      }
      this.logger.warn('re-broadcast refused', { chain: chain.code, id: r.id, reason: outcome.reason });
      // sequence chains: a transaction unknown to the node that it now refuses has expired (XRP
      // LastLedgerSequence, Stellar time bounds) and can never apply: the sequence is still unused,
      // so the transfer is crafted again on a fresh input at the same sequence.
      if (adapter.spendModel === 'sequence' && txs.length < MAX_ATTEMPTS) await this.resign(chain, r, null, txs.length);
      return;
    }
    const age = Date.now() - new Date(newest.sent_at).getTime();
    if (age <= this.config.stuckMs || this.stuckAlerted.has(`${r.id}/${newest.attempt}`)) return;
    let why: string;
    const cap = this.config.feeCaps.get(`${chain.environment}:${chain.code}`);
    const crafter = adapter.spendModel === 'sequence' ? adapter.transfers : undefined;
    if (!crafter?.bumpFee) {
      return; // no fee market to bid in: it waits for the chain
    } else if (r.options?.feeFromAmount || r.options?.exactFee) {
      why = 'its fee is fixed by what it moves (a whole balance, or a measured top-up): a replacement would need more than the address holds';
    } else if (cap === undefined) {
      why = `no fee cap is set for replacements (WCS_WITHDRAW_FEE_CAP_${chain.environment.toUpperCase()}_${chain.code})`;
    } else if (txs.length >= MAX_ATTEMPTS) {
      why = `${txs.length} transactions are signed for it, the most allowed`;
    } else {
      const input = await this.host.storedInput(r.id, newest.attempt);
      if (input === undefined) throw new Error(`transfer ${r.id}: attempt ${newest.attempt} has no stored transfer input`);
      const bumped = crafter.bumpFee(input, this.config.bumpPercent, cap);
      if (bumped !== null) {
        await this.resign(chain, r, bumped, txs.length);
        return;
      }
      why = `its fees are at the cap of ${cap} per unit`;
    }
    await this.stuckAlert(chain, r, newest, age, why);
  }

  /** One stuck alert per (transfer, transaction) that stays unmined past the stuck time and cannot be replaced. */
  private async stuckAlert(chain: ChainView, r: TransferRow, tx: { attempt: number; tx_hash: string }, age: number, why: string): Promise<void> {
    const raised = await this.sequelize.transaction(async (t) => {
      const owner = await this.host.describe(t, r);
      const seen = await this.sequelize.query(
        `SELECT 1 FROM operator_alerts WHERE kind = $4 AND chain_id = $1 AND details->>'transfer' = $2 AND details->>'txHash' = $3 LIMIT 1`,
        { bind: [chain.id, r.id, tx.tx_hash, owner.alertKind], type: QueryTypes.SELECT, transaction: t },
      );
      if (seen.length > 0) return false;
      await raiseAlert(this.sequelize, t, chain.id, owner.alertKind,
        `${chain.code}: ${owner.what}'s transaction ${tx.tx_hash} is unmined ${Math.round(age / 1000)} s after it was sent and is not replaced: ${why}; it stays BROADCASTED until it is mined`,
        { ...owner.details, transfer: r.id, txHash: tx.tx_hash, attempt: tx.attempt, reason: why });
      return true;
    });
    this.stuckAlerted.add(`${r.id}/${tx.attempt}`);
    if (raised) this.logger.warn('transfer stuck and not replaced', { chain: chain.code, id: r.id, kind: r.kind, txHash: tx.tx_hash, reason: why });
  }

  /** The mined transfers' new state in one UPDATE (only rows that changed, only while still in the state read) and the owners' hooks, in one transaction. */
  private async advanceAll(chain: ChainView, mined: ReadonlyArray<{ r: TransferRow; hash: string; state: MinedState }>): Promise<number> {
    const changes = mined.flatMap(({ r, hash, state: s }) => {
      let status: TransferStatus = r.status;
      const events: TransferStatus[] = [];
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
      if (status === r.status && hash === r.tx_hash && r.block_height === s.blockHeight.toString() && r.confirmations === confirmations) return [];
      const failed = status === 'FAILED';
      return [{
        r, final, c: change(r, status, events, {
          txHash: hash, fee: s.fee?.toString() ?? r.fee, feeFinal: s.fee !== null && final, blockHeight: s.blockHeight.toString(), confirmations,
          failCode: failed ? 'REVERTED' : null, failReason: failed ? 'the transaction failed on chain (reverted)' : null,
          ...(s.logs ? { logs: s.logs } : {}),
        }),
      }];
    });
    if (changes.length === 0) return 0;
    return this.sequelize.transaction(async (t) => {
      const done = await this.sequelize.query<{ id: string }>(
        `UPDATE transfers x SET status = u.status, tx_hash = u.hash, block_height = u.height::bigint, confirmations = u.conf,
                fee = coalesce(u.fee::numeric, x.fee), fee_final = u.fee_final, fail_code = u.code, fail_reason = u.reason,
                finished_at = CASE WHEN u.final THEN now() ELSE x.finished_at END, updated_at = now()
           FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::boolean[], $8::text[], $9::boolean[], $10::text[], $11::text[])
                AS u(id, was, status, hash, conf, fee, final, height, fee_final, code, reason)
          WHERE x.id = u.id AND x.status = u.was
          RETURNING x.id::text AS id`,
        {
          bind: [
            changes.map((c) => c.r.id), changes.map((c) => c.r.status), changes.map((c) => c.c.status), changes.map((c) => c.c.txHash), changes.map((c) => c.c.confirmations),
            changes.map((c) => c.c.fee), changes.map((c) => c.final), changes.map((c) => c.c.blockHeight), changes.map((c) => c.c.feeFinal),
            changes.map((c) => c.c.failCode), changes.map((c) => c.c.failReason),
          ],
          type: QueryTypes.SELECT,
          transaction: t,
        },
      );
      const ids = new Set(done.map((d) => d.id));
      const applied = changes.filter((c) => ids.has(c.r.id));
      await this.host.notify(t, applied.map((c) => c.c));
      return applied.filter((c) => c.c.status !== c.r.status || c.final).length;
    });
  }

  /**
   * A new transaction for the transfer: at its same sequence on `input` (fees raised for a stuck
   * one), or on a fresh input (null: an expired one), stored as the next attempt, then sent.
   * Only one of a transfer's transactions can ever apply, so it is still made at most once.
   */
  private async resign(chain: ChainView, r: TransferRow, input: TransferInput | null, attempts: number): Promise<void> {
    const adapter = this.registry.forChain(chain);
    if (adapter.spendModel === 'utxo') throw new Error(`transfer ${r.id}: utxo transfers are not signed again`);
    if (!(await this.host.maySign(chain, r.from_address))) return; // held: nothing new is signed for the sender (docs/transfers.md)
    const { base, keys } = await this.builder.requestOf(adapter, r);
    let transfer: AllocatedTransfer;
    if (adapter.spendModel === 'sequence') {
      if (r.sequence === null) throw new Error(`transfer ${r.id} has no sequence to sign again at`);
      transfer = { spendModel: 'sequence', request: { ...base, sequence: BigInt(r.sequence) } };
    } else {
      transfer = { spendModel: 'expiring', request: base };
    }
    const fresh = input ?? this.builder.shapeInput(adapter, r, await this.nodeOf(chain).transferInput(this.builder.inputRequest(r, base)));
    const made = this.builder.craft(adapter, r, transfer, fresh);
    if (!made.ok) throw new Error(`transfer ${r.id}: a ${adapter.spendModel} crafter answered INSUFFICIENT_INPUTS`);
    const tx = await signTransfer(adapter, this.keyStore(), keys, r.from_address, made.unsigned);
    const stored = await this.sequelize.transaction(async (t) => {
      // only on the transactions this decision was made on: another worker may have signed again meanwhile
      const [o] = await this.sequelize.query<{ status: string; attempts: number }>(
        `SELECT x.status, (SELECT count(*)::int FROM transfer_attempts a WHERE a.transfer_id = x.id) AS attempts FROM transfers x WHERE x.id = $1 FOR UPDATE`,
        { bind: [r.id], type: QueryTypes.SELECT, transaction: t },
      );
      if (!o || (o.status !== 'BROADCASTED' && o.status !== 'CONFIRMING') || o.attempts !== attempts) return false;
      await this.sequelize.query(
        `INSERT INTO transfer_attempts (transfer_id, attempt, tx_hash, raw_tx, transfer_input, max_fee)
         SELECT $1, coalesce(max(attempt), 0) + 1, $2, $3, $4::jsonb, $5::numeric FROM transfer_attempts WHERE transfer_id = $1`,
        { bind: [r.id, tx.txHash, Buffer.from(tx.raw), JSON.stringify(fresh as JsonValue), made.unsigned.maxFee.toString()], transaction: t },
      );
      const [u] = await this.sequelize.query<{ fee: string }>(
        'UPDATE transfers SET fee = GREATEST(fee, $2::numeric), sent_amount = $3::numeric, updated_at = now() WHERE id = $1 RETURNING fee::text AS fee',
        { bind: [r.id, made.unsigned.maxFee.toString(), made.sent.toString()], type: QueryTypes.SELECT, transaction: t },
      );
      await this.host.notify(t, [change(r, r.status, [], { fee: u!.fee, sentAmount: made.sent.toString() })]);
      return true;
    });
    if (!stored) return;
    const outcome = await this.nodeOf(chain).broadcast(tx);
    if (outcome.outcome !== 'REJECTED') {
      await this.sequelize.query('UPDATE transfer_attempts SET sent_at = now() WHERE transfer_id = $1 AND tx_hash = $2', { bind: [r.id, tx.txHash] });
    }
    this.logger.warn('transfer signed again', { chain: chain.code, id: r.id, kind: r.kind, txHash: tx.txHash, outcome: outcome.outcome });
  }
}
