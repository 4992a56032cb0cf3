import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type {
  AdapterRegistry, AllocatedTransfer, ChainAdapter, KeyStore, SignedTransaction, TransferInput, TransferNode, UnsignedTransfer,
} from '@wcs/core';
import type { ChainView } from '../catalogue/catalogue';
import type { Logger } from '../config/logger';
import type { Worker } from '../workers/worker';
import { raiseAlert } from '../deposits/scan-lease';
import type { TransferKind, TransferStatus } from './model';
import type { TransferChange, TransferFailCode, TransferOwner } from './owners';
import { TransferBuilder, sequenceOf, type CraftedTransfer } from './builder';
import { TransferTracker } from './tracker';
import { change, COLUMNS, FROM, type TransferRow } from './rows';
import { broadcastAll, signTransfer, transferInputs } from './node-calls';
import { spendStrategy, type Allocatable } from './spend-models';
import { SenderChainCheck } from './chain-check';

/** Transfers signed per round (and then broadcast together). */
const SIGN_CHUNK = 200;
const BROADCAST_CHUNK = 200;
/**
 * Which READY transfers a round signs first (then oldest first): gas top-ups, which other
 * transfers wait on (a token sweep is signed only once its top-up is final); then payouts, which
 * a merchant waits on; then sweeps and cold transfers.
 */
const SIGN_PRIORITY = `CASE x.kind WHEN 'TOP_UP' THEN 0 WHEN 'TRUSTLINE' THEN 0 WHEN 'PAYOUT' THEN 1 ELSE 2 END`;
/** Neither a signing round nor the broadcast step takes a transfer of a held sender (sender-holds.ts). */
const NOT_HELD = 'NOT EXISTS (SELECT 1 FROM sender_holds h WHERE h.chain_id = x.chain_id AND h.address = x.from_address AND h.released_at IS NULL)';

export interface TransferPipelineConfig {
  /** Steps of each chain this often. */
  readonly pollMs: number;
  /** A broadcast transaction still unmined after this long is replaced with a higher fee (sequence chains with a fee market). */
  readonly stuckMs: number;
  /** Each replacement raises the fee by this many percent (nodes want at least 10). */
  readonly bumpPercent: number;
  /** The highest fee per unit a replacement may pay, per chain code ("environment:CODE"); absent: no replacement. */
  readonly feeCaps: ReadonlyMap<string, bigint>;
  /** The chain check before signing (chain-check.ts; WCS_TRANSFER_CHAIN_CHECK, default on): false for benchmarks and diagnosis only. */
  readonly chainCheck?: boolean;
}

/** A signing round read before its transaction (TransferPipeline.readRound). */
interface SignRound {
  readonly adapter: ChainAdapter;
  readonly strategy: ReturnType<typeof spendStrategy>;
  readonly prepared: unknown;
  readonly ready: ReadonlyArray<Awaited<ReturnType<TransferBuilder['requestOf']>> & { readonly r: TransferRow; readonly input: TransferInput }>;
  /** Every transfer the round read (signable or not). */
  readonly ids: readonly string[];
  /** It read SIGN_CHUNK transfers: more may wait. */
  readonly full: boolean;
}

/** Work that decides what is sent (payout risk checks, sweep planning): run before each signing round of a chain. */
export interface TransferIntake {
  readonly name: string;
  /** True when it did something (more may wait: the round runs again at once). */
  step(chain: ChainView): Promise<boolean>;
}

/**
 * The one pipeline every outgoing transaction goes through (docs/transfers.md): payouts, sweeps,
 * gas top-ups and cold transfers. Per chain four loops run side by side: the intakes (payout risk
 * checks, sweep planning: what is to be sent), signing (one round: allocate by the chain's spend
 * model, craft, sign through the KeyStore, store the signed bytes), broadcasting (what is signed
 * and not yet taken by the node) and tracking (every open transfer's transactions in one status
 * read: CONFIRMING, SUCCESS / FAILED at the chain's confirmations; re-send a dropped one, re-sign
 * an expired one, replace a stuck one at its sequence). Each change and the owner's record (and
 * its callback) commit in one transaction.
 *
 * Exactly once: a transfer's signed transaction is stored before it is broadcast; after a crash or
 * a timeout the same bytes are sent again (the node answers ALREADY_KNOWN), and its status is read
 * by hash. A new transaction for a transfer is only a replacement at the same sequence, or one
 * crafted after every earlier one expired: never a second that could also apply.
 */
export class TransferPipeline implements Worker {
  readonly name = 'transfers';
  private running = false;
  private loops: Array<Promise<void>> = [];
  /** Each waiting loop's wake-up, by loop (chain id / what). */
  private readonly waiting = new Map<string, () => void>();
  private readonly builder: TransferBuilder;
  private readonly tracker: TransferTracker;
  private readonly owners = new Map<TransferKind, TransferOwner>();
  /** The chain check before signing: held senders are not signed for (docs/transfers.md). */
  readonly chainCheck: SenderChainCheck;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly registry: AdapterRegistry,
    private readonly chains: () => ChainView[],
    private readonly nodeOf: (chain: ChainView) => TransferNode,
    private readonly keyStore: () => KeyStore,
    private readonly config: TransferPipelineConfig,
    private readonly logger: Logger,
    owners: readonly TransferOwner[],
    private readonly intakes: readonly TransferIntake[] = [],
  ) {
    for (const o of owners) for (const k of o.kinds) this.owners.set(k, o);
    this.chainCheck = new SenderChainCheck(sequelize, logger, config.chainCheck ?? true);
    this.builder = new TransferBuilder(keyStore);
    this.tracker = new TransferTracker(sequelize, registry, nodeOf, keyStore, config, logger, this.builder, this);
  }

  async start(): Promise<void> {
    this.running = true;
    // what a restore lost shows before anything is signed (bounded: a node that does not answer is checked again each round)
    await this.chainCheck.atStartAll(this.chains(), this.nodeOf);
    for (const chain of this.chains()) {
      // what to send is decided while the last decisions are signed, and the signed bytes go out
      // while the next round is signed: each loop waits on the node or the database while the others work
      this.loops.push(this.loop(chain, 'intake', () => this.intakeStep(chain)));
      this.loops.push(this.loop(chain, 'sign', () => this.signStep(chain)));
      this.loops.push(this.loop(chain, 'broadcast', async () => (await this.broadcastSigned(chain)) > 0));
      // a transfer that ended may let its owner go on (a confirmed top-up funds a sweep): the intakes look at once
      this.loops.push(this.loop(chain, 'track', async () => {
        if ((await this.track(chain)) > 0) this.wakeLoop(chain, 'intake');
        return false;
      }));
    }
  }

  /** Loops woken while they were busy: they go again at once instead of waiting. */
  private readonly kicked = new Set<string>();

  /** Ends a loop's wait now; one that is busy goes again as soon as it is done. */
  private wakeLoop(chain: ChainView, what: string): void {
    const key = `${chain.id}/${what}`;
    const waiter = this.waiting.get(key);
    if (waiter) waiter();
    else this.kicked.add(key);
  }

  async stop(): Promise<void> {
    this.running = false;
    for (const w of [...this.waiting.values()]) w();
    await Promise.all(this.loops);
    this.loops = [];
  }

  /** Runs `body` until stopped: at once again when it says more is waiting, else after pollMs or a wake-up. */
  private async loop(chain: ChainView, what: string, body: () => Promise<boolean>): Promise<void> {
    const key = `${chain.id}/${what}`;
    while (this.running) {
      let again = false;
      try {
        again = await body();
      } catch (e) {
        this.logger.error(`transfer ${what} step failed`, { chain: chain.code, error: e });
      }
      if (!this.running) break;
      if (this.kicked.delete(key) || again) continue;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          if (this.waiting.get(key) === done) this.waiting.delete(key);
          resolve();
        };
        const timer = setTimeout(done, this.config.pollMs);
        this.waiting.set(key, done);
      });
    }
  }

  /** The intakes (what is to be sent); true when one did something (the signing loop is woken). */
  async intakeStep(chain: ChainView): Promise<boolean> {
    let busy = false;
    for (const intake of this.intakes) {
      try {
        if (await intake.step(chain)) busy = true;
      } catch (e) {
        this.logger.error(`${intake.name} step failed`, { chain: chain.code, error: e });
      }
    }
    if (busy) this.wakeLoop(chain, 'sign');
    return busy;
  }

  /** One signing round (its broadcast is the broadcast loop's); true when it signed something. */
  async signStep(chain: ChainView): Promise<boolean> {
    const signed = await this.signReady(chain);
    if (signed > 0) this.wakeLoop(chain, 'broadcast');
    return signed > 0;
  }

  /** The owners' hooks for these changes, in the transaction that made them. */
  async notify(t: Transaction, changes: readonly TransferChange[]): Promise<void> {
    const byOwner = new Map<TransferOwner, TransferChange[]>();
    for (const c of changes) {
      const owner = this.owners.get(c.kind);
      if (!owner) throw new Error(`no owner for ${c.kind} transfers`);
      byOwner.set(owner, [...(byOwner.get(owner) ?? []), c]);
    }
    for (const [owner, list] of byOwner) await owner.onChange(t, list);
  }

  // ------------------------------------------------------------------ sign

  /** Rounds whose reads are under way, by chain: taken by the next signReady. */
  private readonly readAhead = new Map<number, Promise<SignRound | null>>();

  /**
   * What a signing round needs before its transaction: the next READY transfers (SIGN_PRIORITY,
   * then oldest first; not those in `skip`, a round being signed now), their requests, and the
   * node's inputs and the spend model's reads for all of them in one go. Reads only.
   */
  private async readRound(chain: ChainView, skip: readonly string[]): Promise<SignRound | null> {
    const adapter = this.registry.forChain(chain);
    const node = this.nodeOf(chain);
    const rows = await this.sequelize.query<TransferRow>(
      `SELECT ${COLUMNS} FROM ${FROM} WHERE x.chain_id = $1 AND x.status = 'READY' AND x.id <> ALL($2::bigint[]) AND ${NOT_HELD}
        ORDER BY ${SIGN_PRIORITY}, x.id LIMIT ${SIGN_CHUNK}`,
      { bind: [chain.id, skip], type: QueryTypes.SELECT },
    );
    if (rows.length === 0) return null;
    const built = await Promise.all(rows.map(async (r) => ({ r, ...(await this.builder.requestOf(adapter, r)) })));
    const strategy = spendStrategy(this.sequelize, chain, adapter);
    const [blocked, inputs, prepared] = await Promise.all([
      this.chainCheck.blocked(chain, node, rows.map((r) => r.from_address), true),
      transferInputs(node, built.map((x) => this.builder.inputRequest(x.r, x.base))),
      strategy.prepare(node, built.map((x) => ({ id: x.r.id, applicationId: x.r.application_id, fromAddress: x.r.from_address, fixedInputs: x.fixedInputs }))),
    ]);
    const ready = built.flatMap((x, i) => {
      if (blocked.has(x.r.from_address)) return [];
      const input = inputs[i]!;
      if (input instanceof Error) {
        this.logger.warn('transfer not signed yet: the node gives no input for it', { chain: chain.code, id: x.r.id, kind: x.r.kind, error: input });
        return [];
      }
      return [{ ...x, input: this.builder.shapeInput(adapter, x.r, input) }];
    });
    return { adapter, strategy, prepared, ready, ids: rows.map((r) => r.id), full: rows.length === SIGN_CHUNK };
  }

  /**
   * Signs the next READY transfers of the chain (SIGN_PRIORITY, then oldest first): the node's inputs for all in one
   * read, then one transaction that locks them, allocates by the spend model, signs each through
   * the KeyStore and stores the signed bytes. One the crafter refuses ends FAILED (CRAFT_REFUSED);
   * one the node gives no input for, or whose inputs are not confirmed yet, waits.
   */
  async signReady(chain: ChainView): Promise<number> {
    // a round read ahead while the last one was signed, else read now
    const ahead = this.readAhead.get(chain.id);
    this.readAhead.delete(chain.id);
    const round = (ahead ? await ahead : null) ?? (await this.readRound(chain, []));
    if (round === null) return 0;
    // a full round: more is waiting, so the next round's node reads run while this one is signed and stored
    if (round.full) this.readAhead.set(chain.id, this.readRound(chain, round.ids).catch((e: unknown) => {
      this.logger.warn('reading the next signing round ahead failed; read again when it is due', { chain: chain.code, error: e });
      return null;
    }));
    const { adapter, strategy, prepared, ready } = round;
    const allocatable = (x: (typeof ready)[number]): Allocatable => ({ id: x.r.id, applicationId: x.r.application_id, fromAddress: x.r.from_address, fixedInputs: x.fixedInputs });
    if (ready.length === 0) return 0;
    const keyStore = this.keyStore();
    return this.sequelize.transaction(async (t) => {
      const locked = await this.sequelize.query<{ id: string }>(
        `SELECT id::text AS id FROM transfers x WHERE id = ANY($1::bigint[]) AND status = 'READY' AND ${NOT_HELD} ORDER BY id FOR UPDATE OF x SKIP LOCKED`,
        { bind: [ready.map((x) => x.r.id)], type: QueryTypes.SELECT, transaction: t },
      );
      const lockedIds = new Set(locked.map((l) => l.id));
      const todo = ready.filter((x) => lockedIds.has(x.r.id));
      const allocation = await strategy.begin(t, prepared, todo.map(allocatable));
      const signed: Array<{ r: TransferRow; transfer: AllocatedTransfer; unsigned: UnsignedTransfer; tx: SignedTransaction; input: TransferInput; sent: bigint }> = [];
      const refused: Array<{ r: TransferRow; reason: string }> = [];
      for (const x of todo) {
        let made: CraftedTransfer;
        try {
          const transfer = allocation.allocate(allocatable(x), x.base, x.input);
          if (transfer === null) continue; // not enough confirmed outputs yet: next round
          made = this.builder.craft(adapter, x.r, transfer, x.input);
        } catch (e) {
          refused.push({ r: x.r, reason: `the transfer cannot be made on ${chain.code}: ${e instanceof Error ? e.message : String(e)}` });
          continue;
        }
        if (!made.ok) {
          // the hot wallet's confirmed outputs fall short: next round; a consolidation's own inputs falling short never heals
          if (x.fixedInputs === null) continue;
          refused.push({ r: x.r, reason: `the transfer cannot be made on ${chain.code}: its inputs fall ${made.shortfall} short of the amount and fee` });
          continue;
        }
        const tx = await signTransfer(adapter, keyStore, x.keys, x.r.from_address, made.unsigned);
        signed.push({ r: x.r, transfer: made.transfer, unsigned: made.unsigned, tx, input: x.input, sent: made.sent });
        allocation.taken(allocatable(x), made.transfer);
      }
      if (signed.length > 0) {
        await this.sequelize.query(
          `UPDATE transfers x SET status = 'SIGNED', sequence = u.seq::numeric, tx_hash = u.hash, fee = u.fee::numeric, sent_amount = u.sent::numeric, signed_at = now(), updated_at = now()
             FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(id, seq, hash, fee, sent) WHERE x.id = u.id`,
          {
            bind: [signed.map((s) => s.r.id), signed.map((s) => sequenceOf(s.transfer)?.toString() ?? null), signed.map((s) => s.tx.txHash), signed.map((s) => s.unsigned.maxFee.toString()), signed.map((s) => s.sent.toString())],
            transaction: t,
          },
        );
        await this.sequelize.query(
          `INSERT INTO transfer_attempts (transfer_id, attempt, tx_hash, raw_tx, transfer_input, max_fee)
           SELECT u.id, 1, u.hash, decode(u.raw, 'hex'), u.input::jsonb, u.fee::numeric FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(id, hash, raw, input, fee)`,
          {
            bind: [signed.map((s) => s.r.id), signed.map((s) => s.tx.txHash), signed.map((s) => Buffer.from(s.tx.raw).toString('hex')), signed.map((s) => JSON.stringify(s.input)), signed.map((s) => s.unsigned.maxFee.toString())],
            transaction: t,
          },
        );
        await allocation.commit(t);
        await this.notify(t, signed.map((s) => change(s.r, 'SIGNED', ['SIGNED'], {
          txHash: s.tx.txHash, sequence: sequenceOf(s.transfer)?.toString() ?? null, fee: s.unsigned.maxFee.toString(), sentAmount: s.sent.toString(),
        })));
      }
      if (refused.length > 0) await this.failUnsigned(t, refused);
      for (const f of refused) this.logger.warn('transfer refused', { chain: chain.code, id: f.r.id, kind: f.r.kind, reason: f.reason });
      return signed.length;
    });
  }

  /** Transfers that hold no sequence or input (refused before either was given): FAILED, CRAFT_REFUSED. */
  private async failUnsigned(t: Transaction, failed: ReadonlyArray<{ r: TransferRow; reason: string }>): Promise<void> {
    const done = await this.sequelize.query<{ id: string }>(
      `UPDATE transfers x SET status = 'FAILED', fail_code = 'CRAFT_REFUSED', fail_reason = u.reason, finished_at = now(), updated_at = now()
         FROM unnest($1::bigint[], $2::text[]) AS u(id, reason) WHERE x.id = u.id AND x.status = 'READY' RETURNING x.id::text AS id`,
      { bind: [failed.map((f) => f.r.id), failed.map((f) => f.reason.slice(0, 256))], type: QueryTypes.SELECT, transaction: t },
    );
    const ids = new Set(done.map((d) => d.id));
    await this.notify(t, failed.filter((f) => ids.has(f.r.id)).map((f) => change(f.r, 'FAILED', ['FAILED'], { failCode: 'CRAFT_REFUSED', failReason: f.reason.slice(0, 256) })));
  }

  // ------------------------------------------------------------------ broadcast

  /**
   * Sends the signed, not yet taken transactions (the round just signed; again after a crash: the
   * node knows them), in one round trip where the node allows, then moves the transfers the node
   * took to BROADCASTED in one transaction. A refusal for now leaves its transfer for the next step.
   */
  async broadcastSigned(chain: ChainView): Promise<number> {
    const node = this.nodeOf(chain);
    const rows = await this.sequelize.query<TransferRow & { raw_tx: Buffer; attempt: number; sent_hash: string }>(
      `SELECT ${COLUMNS}, a.raw_tx, a.tx_hash AS sent_hash, a.attempt FROM ${FROM}
         JOIN transfer_attempts a ON a.transfer_id = x.id AND a.attempt = (SELECT max(attempt) FROM transfer_attempts b WHERE b.transfer_id = x.id)
        WHERE x.chain_id = $1 AND x.status = 'SIGNED' AND ${NOT_HELD} ORDER BY x.sequence NULLS LAST, x.id LIMIT ${BROADCAST_CHUNK}`,
      { bind: [chain.id], type: QueryTypes.SELECT },
    );
    if (rows.length === 0) return 0;
    const outcomes = await broadcastAll(node, rows.map((r) => ({ txHash: r.sent_hash, raw: new Uint8Array(r.raw_tx) })));
    const taken: typeof rows = [];
    for (const [i, r] of rows.entries()) {
      const outcome = outcomes[i]!;
      if (outcome instanceof Error) {
        this.logger.warn('broadcast failed; sent again next step', { chain: chain.code, id: r.id, kind: r.kind, error: outcome });
        continue;
      }
      if (outcome.outcome === 'REJECTED') {
        // refused: unless the node has it anyway (sent before a crash and already mined), the transfer fails
        const seen = await node.status(r.sent_hash, await this.storedInput(r.id, r.attempt));
        if (seen.state === 'UNKNOWN') {
          await this.failRefused(chain, r.id, 'NODE_REJECTED', `the node refused the transaction: ${outcome.reason}`);
          continue;
        }
      }
      taken.push(r);
    }
    if (taken.length === 0) return 0;
    return this.sequelize.transaction(async (t) => {
      const moved = await this.sequelize.query<{ id: string }>(
        `UPDATE transfers SET status = 'BROADCASTED', broadcast_at = now(), updated_at = now() WHERE id = ANY($1::bigint[]) AND status = 'SIGNED' RETURNING id::text AS id`,
        { bind: [taken.map((r) => r.id)], type: QueryTypes.SELECT, transaction: t },
      );
      await this.markSentAll(taken.map((r) => ({ id: r.id, attempt: r.attempt })), t);
      const ids = new Set(moved.map((m) => m.id));
      await this.notify(t, taken.filter((r) => ids.has(r.id)).map((r) => change(r, 'BROADCASTED', ['BROADCASTED'], { txHash: r.sent_hash })));
      return moved.length;
    });
  }

  async storedInput(id: string, attempt: number): Promise<TransferInput | undefined> {
    const [a] = await this.sequelize.query<{ input: TransferInput }>('SELECT transfer_input AS input FROM transfer_attempts WHERE transfer_id = $1 AND attempt = $2', {
      bind: [id, attempt], type: QueryTypes.SELECT,
    });
    return a?.input;
  }

  /**
   * Ends a transfer FAILED (from `from`, SIGNED unless given) and tells its owner; a sequence it
   * held is handed out again when nothing came after it, else SEQUENCE_GAP is raised.
   */
  async failRefused(chain: ChainView, id: string, code: TransferFailCode, reason: string, from: readonly TransferStatus[] = ['SIGNED']): Promise<void> {
    await this.sequelize.transaction(async (t) => {
      const [r] = await this.sequelize.query<TransferRow>(`SELECT ${COLUMNS} FROM ${FROM} WHERE x.id = $1 FOR UPDATE OF x`, { bind: [id], type: QueryTypes.SELECT, transaction: t });
      if (!r || !from.includes(r.status)) return;
      await this.sequelize.query(
        `UPDATE transfers SET status = 'FAILED', fail_code = $2, fail_reason = $3, finished_at = now(), updated_at = now() WHERE id = $1`,
        { bind: [id, code, reason.slice(0, 256)], transaction: t },
      );
      if (r.sequence !== null) {
        const [rolled] = await this.sequelize.query<{ n: number }>(
          `WITH r AS (UPDATE sequence_allocators SET next_sequence = $3::numeric, updated_at = now()
                       WHERE chain_id = $1 AND address = $2 AND next_sequence = $3::numeric + 1 RETURNING 1) SELECT count(*)::int AS n FROM r`,
          { bind: [chain.id, r.from_address, r.sequence], type: QueryTypes.SELECT, transaction: t },
        );
        if (rolled!.n === 0) {
          const owner = await this.owners.get(r.kind)!.describe(t, id);
          await raiseAlert(this.sequelize, t, chain.id, 'SEQUENCE_GAP',
            `${chain.code}: ${owner.what} was refused at sequence ${r.sequence} of ${r.from_address} and later sequences are already signed; the next transactions wait until the gap is filled`,
            { ...owner.details, transfer: id, sequence: r.sequence, address: r.from_address });
        }
      }
      await this.notify(t, [change(r, 'FAILED', ['FAILED'], { failCode: code, failReason: reason.slice(0, 256) })]);
    });
    this.logger.warn('transfer refused', { chain: chain.code, id, code, reason });
  }

  // ------------------------------------------------------------------ track

  /** Follows broadcast transfers (TransferTracker): CONFIRMING, SUCCESS / FAILED; re-sends, re-signs, replaces. */
  async track(chain: ChainView): Promise<number> {
    return this.tracker.track(chain);
  }

  /** Whether a transfer from `sender` may be signed again now (not held, and the chain check agrees). */
  async maySign(chain: ChainView, sender: string): Promise<boolean> {
    return !(await this.chainCheck.blocked(chain, this.nodeOf(chain), [sender])).has(sender);
  }

  /** The alert details of a transfer, from its owner (stuck transactions, sequence gaps). */
  async describe(t: Transaction, r: { id: string; kind: TransferKind }) {
    return this.owners.get(r.kind)!.describe(t, r.id);
  }

  /** A node took these transactions now: the stuck clock starts again. */
  async markSentAll(sent: ReadonlyArray<{ id: string; attempt: number }>, t?: Transaction): Promise<void> {
    await this.sequelize.query(
      `UPDATE transfer_attempts a SET sent_at = now() FROM unnest($1::bigint[], $2::int[]) AS u(id, attempt) WHERE a.transfer_id = u.id AND a.attempt = u.attempt`,
      { bind: [sent.map((s) => s.id), sent.map((s) => s.attempt)], transaction: t },
    );
  }
}
