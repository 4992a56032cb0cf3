import { QueryTypes, Transaction, type Sequelize } from 'sequelize';
import type { BalanceAnswer, BalancePoint, BalanceQuery, BalanceReader, ChainAdapter, ChainDefinition, ChainEndpoint } from '@wcs/core';
import type { Logger } from '../config/logger';
import { explainDifference, type Explained } from './explain';
import { candidatesOf, chainTokens, custodyAddresses, ledgerAt, touchedAddresses, type Candidates, type ChainToken, type CustodyAddress } from './ledger';
import { locateChanges, type LocateItem } from './locate';
import { outcomeOf, readPoint, recordedComparison, searchFloor, selectAddresses, sliceSize, type Outcome, type PriorState } from './plan';
import { addAdjustments, passLedger, recordAgreeing, closeDiscrepancy, openDiscrepancy, recordOutflow, saveComparisons, unrecordedOutflows, updateDiscrepancy, type AdjustmentRow, type Comparison, type NewDiscrepancy } from './records';
import type { ReconcileLease } from './lease';
import { bookNativeChanges } from './native-reads';
import { streamReads, unreadableTokens } from './pass-reads';

/** WCS_RECONCILE_* (docs/reconciliation.md, "Settings"). */
export interface ReconcileSettings {
  /** Seconds between a chain's scheduled passes; 0: no scheduled passes. */
  readonly intervalSeconds: number;
  /** Every custody address is compared at least once per this many seconds. */
  readonly cycleSeconds: number;
  /** Balance queries handed to the reader per call (it batches them further: JSON-RPC batches, Multicall3). */
  readonly readChunk: number;
  /** Where the chain's balance reader runs: 'thread', a worker thread of its own (ThreadedBalanceReader); 'inline', the pass's thread. */
  readonly reader: 'thread' | 'inline';
}

export interface PassSummary {
  readonly id: number;
  readonly chainId: number;
  readonly chainCode: string;
  readonly trigger: 'SCHEDULE' | 'MANUAL';
  readonly scope: 'FULL' | 'INCREMENTAL';
  readonly height: string;
  readonly blockHash: string | null;
  /** Read at the point the ledger is complete to (false: at the node's head; differences confirmed by a later pass). */
  readonly exact: boolean;
  readonly addresses: number;
  /** Catalogue tokens the node could not read at the point (no contract there): not compared this pass, alerted once. */
  readonly unreadTokens: ReadonlyArray<{ readonly chainTokenId: number; readonly symbol: string; readonly reason: string }>;
  readonly compared: number;
  readonly unexplained: number;
  readonly opened: number;
  readonly openings: number;
  readonly outflowsRecorded: number;
  readonly durationMs: number;
}

/** Wall-clock time per step of a pass (ms), for its log line: lap(name) ends the step that began at the previous lap. */
function laps(): ((name: string) => void) & { all(): Record<string, number> } {
  const ms: Record<string, number> = {};
  let mark = performance.now();
  const lap = (name: string) => {
    const now = performance.now();
    ms[name] = Math.round(((ms[name] ?? 0) + now - mark) * 10) / 10;
    mark = now;
  };
  return Object.assign(lap, { all: () => ({ ...ms }) });
}

/** The ledger's side of pairs: ledgers in their order, candidates and prior states by `${address}/${tokenId}`. */
interface LedgerSide {
  readonly ledgers: readonly bigint[];
  readonly cands: ReadonlyMap<string, Candidates>;
  readonly priors: ReadonlyMap<string, PriorState>;
}

interface Row {
  readonly c: CustodyAddress;
  readonly token: ChainToken;
  readonly query: BalanceQuery;
  onChain: bigint;
  ledger: bigint;
  result: Explained;
  outcome: Outcome;
  prior: PriorState;
  inFlight: readonly string[];
}

const NOTHING_EXPLAINED: Explained = Object.freeze({ explained: 0n, unexplained: 0n, explanations: Object.freeze([]) as unknown as Explained['explanations'] });
const AGREED: Outcome = Object.freeze({ kind: 'AGREE', close: null });
const NOT_COMPARED: PriorState = Object.freeze({ compared: false, agreedHeight: null, suspectHeight: null, open: null });
const NONE_IN_FLIGHT: readonly string[] = Object.freeze([]);

/**
 * One reconciliation pass of one chain (docs/reconciliation.md, "A pass"): read point, outflows
 * recorded, addresses chosen, balances read in the reader's batches, the ledger in one query, every
 * difference explained or recorded, the results in one transaction. The caller holds the lease.
 */
export class ReconcilePass {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly chain: ChainDefinition,
    private readonly adapter: ChainAdapter,
    private readonly endpoint: ChainEndpoint,
    private readonly reader: BalanceReader,
    private readonly lease: ReconcileLease,
    private readonly settings: ReconcileSettings,
    private readonly logger: Logger,
  ) {}

  async run(trigger: 'SCHEDULE' | 'MANUAL', scope: 'FULL' | 'INCREMENTAL'): Promise<PassSummary> {
    const started = Date.now();
    const [prev] = await this.sequelize.query<{ started_at: Date }>(
      'SELECT started_at FROM reconcile_passes WHERE chain_id = $1 AND finished_at IS NOT NULL AND error IS NULL ORDER BY id DESC LIMIT 1',
      { bind: [this.chain.id], type: QueryTypes.SELECT },
    );
    const [pass] = await this.sequelize.query<{ id: string; started_at: Date }>(
      'INSERT INTO reconcile_passes (chain_id, trigger, scope) VALUES ($1, $2, $3) RETURNING id::text AS id, started_at',
      { bind: [this.chain.id, trigger, scope], type: QueryTypes.SELECT },
    );
    try {
      return await this.steps(pass!.id, pass!.started_at, prev?.started_at ?? null, trigger, scope, started);
    } catch (e) {
      await this.sequelize.query('UPDATE reconcile_passes SET error = $2, finished_at = now() WHERE id = $1', {
        bind: [pass!.id, String((e as Error)?.message ?? e).slice(0, 2000)],
      }).catch(() => undefined);
      throw e;
    }
  }

  private async steps(passId: string, passStart: Date, since: Date | null, trigger: 'SCHEDULE' | 'MANUAL', scope: 'FULL' | 'INCREMENTAL', started: number): Promise<PassSummary> {
    const lap = laps();
    // the node's head, the scan's cursor, the catalogue, the custody addresses (a full pass needs no
    // ages) and the touched ones at once
    const tokensP = chainTokens(this.sequelize, this.chain.id);
    const custodyP = tokensP.then((t) => custodyAddresses(this.sequelize, this.chain.id, t.length, scope === 'INCREMENTAL'));
    const touchedP = scope === 'FULL' ? Promise.resolve(new Set<string>()) : touchedAddresses(this.sequelize, this.chain.id, since);
    custodyP.catch(() => undefined); // awaited below
    touchedP.catch(() => undefined);
    const [head, [cur], tokens] = await Promise.all([
      this.reader.head(),
      this.sequelize.query<{ height: string | null; hash: string | null }>('SELECT height::text AS height, hash FROM scan_cursors WHERE chain_id = $1', {
        bind: [this.chain.id], type: QueryTypes.SELECT,
      }),
      tokensP,
    ]);
    lap('head');
    const history = this.reader.history;
    const scanHeight = cur?.height != null ? BigInt(cur.height) : null;
    const { point, exact } = readPoint(head, { height: scanHeight, hash: cur?.hash ?? null }, history);
    const native = tokens.find((t) => t.contract === null);
    if (!native) throw new Error(`${this.chain.code}: the catalogue has no active native token`);
    // outflows and native changes are recorded while the addresses are chosen, the tokens probed
    // and the first chunks read: the pass's ledger (below, in its transaction) waits for them
    const outflowsP = (async () => {
      const n = await this.recordOutflows(native.id, point.height);
      // native coin service transactions moved beyond their records (Solana token-account rent), read once final
      await bookNativeChanges(this.sequelize, this.reader, this.chain.id, native.id, point.height);
      return n;
    })();
    outflowsP.catch(() => undefined); // awaited in the transaction
    const [custody, touched] = await Promise.all([custodyP, touchedP]);
    const chosen = new Set(selectAddresses(custody, touched, scope, sliceSize(custody.length, this.settings.intervalSeconds || 300, this.settings.cycleSeconds)));
    const picked = custody.filter((c) => chosen.has(c.address));
    const unread = picked.length > 0 ? await unreadableTokens(this.sequelize, this.reader, this.chain, this.logger, tokens, picked[0]!.address, point) : [];
    lap('point');

    const readable = tokens.filter((t) => !unread.some((u) => u.token.id === t.id));
    // a row starts as agreeing with nothing known (shared frozen values, replaced when the row is explained)
    const rows: Row[] = picked.flatMap((c) => readable.map((token): Row => ({
      c, token, query: { address: c.address, contract: token.contract }, onChain: 0n, ledger: 0n, result: NOTHING_EXPLAINED, outcome: AGREED, prior: NOT_COMPARED, inFlight: NONE_IN_FLIGHT,
    })));
    lap('select');

    // Readers that answer at the point (every history but 'head') stream: each chunk of answers is
    // compared and written while the next chunks are read; the pairs that agree with the ledger are
    // recorded by the database in one statement, the others explained here. A head-only reader's
    // answers are compared once all are in, at the highest point answered.
    const pinned = history.kind !== 'head';
    const chunks: Row[][] = [];
    // the last chunk small: what is recorded after the last answer is only its pairs
    const last = Math.min(rows.length, Math.max(1, Math.ceil(this.settings.readChunk / 10)));
    for (let i = 0; i < rows.length - last; i += this.settings.readChunk) chunks.push(rows.slice(i, Math.min(i + this.settings.readChunk, rows.length - last)));
    if (rows.length > 0) chunks.push(rows.slice(rows.length - last));
    let at = point;
    let readHeight = point.height;
    let opened = 0;
    let openings = 0;
    let compared = 0;
    let unexplainedCount = 0;
    let outflowsRecorded = 0;
    const reads = streamReads(this.reader, chunks.map((c) => c.map((r) => r.query)), point);
    const answeredAt = pinned ? Promise.resolve(point) : Promise.all(reads).then((rs) => rs.reduce((m, r) => (r.at.height > m.height ? r.at : m), point));
    answeredAt.catch(() => undefined); // awaited in the transaction
    await this.sequelize.transaction(async (t) => {
      at = await answeredAt;
      readHeight = exact ? point.height : at.height;
      const blockHash = exact ? point.blockHash : at.blockHash;
      const record = { chainId: this.chain.id, passId, pointHeight: point.height, readHeight, blockHash };
      // the chosen addresses' touches up to the pass's start are consumed (while the first chunk is read)
      await this.sequelize.query('DELETE FROM reconcile_touches WHERE chain_id = $1 AND address = ANY($2::text[]) AND touched_at <= $3', {
        bind: [this.chain.id, picked.map((c) => c.address), passStart.toISOString()], transaction: t,
      });
      outflowsRecorded = await outflowsP;
      await passLedger(this.sequelize, t, this.chain.id, native.id, point.height);
      for (let i = 0; i < chunks.length; i++) {
        const read = await reads[i]!;
        if (pinned && read.at.height !== point.height) throw new Error(`${this.chain.code}: the balance reader answered at ${read.at.height}, not at the point ${point.height} it was asked`);
        const chunk = chunks[i]!;
        chunk.forEach((r, j) => { const a = read.answers[j]!; r.onChain = a.kind === 'AMOUNT' ? a.amount : 0n; });
        compared += chunk.length;
        // the pairs that agree are recorded by the database as they are; the others are explained here
        const rest = await recordAgreeing(this.sequelize, t, record, chunk.map((r) => ({
          address: r.c.address, tokenId: r.token.id, onChain: r.onChain, applicationId: r.c.applicationId, kind: r.c.kind, externalUserId: r.c.externalUserId,
        })));
        if (rest.length === 0) continue;
        const slow = rest.map((j) => chunk[j]!);
        const side = await this.ledgerSide(slow, native.id, point, at);
        const comparisons = rest.map((j, k) => this.compare(chunk[j]!, k, read.answers[j]!, side, { height: readHeight, exact, scanHeight }));
        unexplainedCount += comparisons.filter((c) => c.unexplained !== 0n).length;
        await saveComparisons(this.sequelize, t, this.chain.id, passId, readHeight, blockHash, comparisons);
      }
      lap('read, compare, save');

      const located = exact ? await this.locate(rows.filter((r) => r.outcome.kind === 'OPEN'), native.id, history, head.height, point.height) : new Map<string, bigint | null>();
      const hashes = await this.blockHashes([...located.values()].filter((h): h is bigint => h !== null));
      const held = this.lease.held(); // asked while the outcomes are written, before the pass is
      held.catch(() => undefined);
      const adjustments: AdjustmentRow[] = [];
      for (const r of rows) {
        const o = r.outcome;
        if (o.kind === 'AGREE' && o.close === null) continue;
        const unexplained = r.result.unexplained;
        const disc = (): NewDiscrepancy => {
          const h = located.get(`${r.c.address}/${r.token.id}`) ?? null;
          return {
            applicationId: r.c.applicationId, chainId: this.chain.id, chainCode: this.chain.code, tokenId: r.token.id, symbol: r.token.symbol, decimals: r.token.decimals,
            address: r.c.address, kind: r.c.kind, externalUserId: r.c.externalUserId, amount: unexplained, height: readHeight, blockHash,
            locatedHeight: h, locatedHash: h === null ? null : hashes.get(h) ?? null,
            known: {
              readPoint: { height: readHeight.toString(), blockHash, exact }, ledger: r.ledger.toString(), onChain: r.onChain.toString(),
              explained: r.result.explanations, transfersInFlight: r.inFlight, passId: Number(passId),
              ...(h !== null ? { located: { height: h.toString(), blockHash: hashes.get(h) ?? null } } : {}),
            },
          };
        };
        if (o.kind === 'AGREE') {
          if (o.close) await closeDiscrepancy(this.sequelize, t, o.close, readHeight, r.result.explanations);
        } else if (o.kind === 'OPENING') {
          adjustments.push({
            applicationId: r.c.applicationId, chainId: this.chain.id, tokenId: r.token.id, address: r.c.address, amount: unexplained, kind: 'OPENING',
            height: readHeight, discrepancyId: null, note: `opening balance of the ${r.c.kind} address at its first reconciliation`, ref: null, createdBy: 'reconciliation',
          });
          openings++;
        } else if (o.kind === 'OPEN') {
          await openDiscrepancy(this.sequelize, t, disc());
          opened++;
        } else if (o.kind === 'UPDATE') {
          await updateDiscrepancy(this.sequelize, t, o.id, disc());
        }
      }
      await addAdjustments(this.sequelize, t, adjustments);
      if (!(await held)) throw new Error(`${this.chain.code}: the reconciliation lease was lost during the pass`);
      await this.sequelize.query(
        'UPDATE reconcile_passes SET height = $2, block_hash = $3, compared = $4, unexplained = $5, finished_at = now() WHERE id = $1',
        { bind: [passId, readHeight.toString(), blockHash, compared, unexplainedCount], transaction: t },
      );
      lap('outcomes');
    });
    lap('commit');
    const summary: PassSummary = {
      id: Number(passId), chainId: this.chain.id, chainCode: this.chain.code, trigger, scope, height: readHeight.toString(), blockHash: exact ? point.blockHash : at.blockHash,
      exact, addresses: picked.length, unreadTokens: unread.map((u) => ({ chainTokenId: u.token.id, symbol: u.token.symbol, reason: u.reason })), compared, unexplained: unexplainedCount, opened, openings, outflowsRecorded,
      durationMs: Date.now() - started,
    };
    if (opened > 0) this.logger.warn('reconciliation found unexplained differences', { chain: this.chain.code, pass: summary.id, opened, height: summary.height });
    else this.logger.info('reconciliation pass', { chain: this.chain.code, pass: summary.id, compared: summary.compared, unexplained: summary.unexplained, height: summary.height, stepsMs: lap.all() });
    return summary;
  }

  /** One (address, token): its answer and the ledger's side compared, its outcome decided (kept on the row), its record. */
  private compare(r: Row, index: number, answer: BalanceAnswer, side: LedgerSide, read: { readonly height: bigint; readonly exact: boolean; readonly scanHeight: bigint | null }): Comparison {
    r.onChain = answer.kind === 'AMOUNT' ? answer.amount : 0n;
    r.ledger = side.ledgers[index]!;
    const key = `${r.c.address}/${r.token.id}`;
    const c = side.cands.get(key);
    r.result = explainDifference(r.onChain - r.ledger, c?.mandatory ?? [], c?.optional ?? []);
    r.inFlight = c?.inFlight ?? [];
    r.prior = side.priors.get(key) ?? r.prior;
    r.outcome = outcomeOf(r.c.kind, r.result.unexplained, r.prior, read);
    const rec = recordedComparison(r.outcome, { onChain: r.onChain, ledger: r.ledger, unexplained: r.result.unexplained, prior: r.prior }, read.height);
    return {
      address: r.c.address, applicationId: r.c.applicationId, kind: r.c.kind, externalUserId: r.c.externalUserId, tokenId: r.token.id, ledger: rec.ledger, onChain: r.onChain,
      explained: rec.explained, unexplained: rec.unexplained, explanations: r.result.explanations, agreedHeight: rec.agreedHeight, suspectHeight: rec.suspectHeight,
    };
  }

  /**
   * The ledger's side of pairs that did not simply agree, in one snapshot (a REPEATABLE READ
   * transaction): the ledger at the point, the candidates for what happened after it up to the
   * height the answers are at, the prior states.
   */
  private ledgerSide(rows: readonly Row[], nativeId: number, point: BalancePoint, at: BalancePoint): Promise<LedgerSide> {
    const addresses = [...new Set(rows.map((r) => r.c.address))];
    return this.sequelize.transaction({ isolationLevel: Transaction.ISOLATION_LEVELS.REPEATABLE_READ }, async (t) => ({
      ledgers: await ledgerAt(this.sequelize, this.chain.id, nativeId, rows.map((r) => ({ address: r.c.address, tokenId: r.token.id, height: point.height })), t),
      cands: await candidatesOf(this.sequelize, this.chain.id, nativeId, addresses, point.height, at.height, t),
      priors: await this.priors(addresses, t),
    }));
  }

  private async priors(addresses: readonly string[], transaction: Transaction): Promise<Map<string, PriorState>> {
    const rows = await this.sequelize.query<{ address: string; chain_token_id: number; agreed_height: string | null; suspect_height: string | null; compared: boolean; open_id: string | null; open_amount: string | null }>(
      `WITH s AS (SELECT unnest($2::text[]) COLLATE "C" AS address),
       b AS (SELECT address, chain_token_id, agreed_height, suspect_height FROM reconcile_balances WHERE chain_id = $1 AND address IN (SELECT address FROM s)),
       d AS (SELECT address, chain_token_id, id, amount FROM reconcile_discrepancies WHERE chain_id = $1 AND status = 'OPEN' AND address IN (SELECT address FROM s))
       SELECT coalesce(b.address, d.address) AS address, coalesce(b.chain_token_id, d.chain_token_id) AS chain_token_id, b.agreed_height::text AS agreed_height,
              b.suspect_height::text AS suspect_height, (b.address IS NOT NULL) AS compared, d.id::text AS open_id, d.amount::text AS open_amount
         FROM b FULL JOIN d ON d.address = b.address AND d.chain_token_id = b.chain_token_id`,
      { bind: [this.chain.id, addresses], type: QueryTypes.SELECT, transaction },
    );
    return new Map(rows.map((r) => [`${r.address}/${r.chain_token_id}`, {
      compared: r.compared, agreedHeight: r.agreed_height === null ? null : BigInt(r.agreed_height), suspectHeight: r.suspect_height === null ? null : BigInt(r.suspect_height),
      open: r.open_id === null ? null : { id: r.open_id, amount: BigInt(r.open_amount!) },
    }]));
  }

  /** New discrepancies' blocks, where the node keeps history. */
  private async locate(rows: readonly Row[], nativeId: number, history: BalanceReader['history'], head: bigint, at: bigint): Promise<Map<string, bigint | null>> {
    const items: LocateItem[] = rows.flatMap((r) => {
      const floor = searchFloor(history, r.prior.agreedHeight, head, at);
      return floor === null ? [] : [{ key: `${r.c.address}/${r.token.id}`, query: r.query, tokenId: r.token.id, floor, top: at, differenceAtTop: r.onChain - r.ledger }];
    });
    return locateChanges(this.reader, (q) => ledgerAt(this.sequelize, this.chain.id, nativeId, q), items);
  }

  /** The hashes of located blocks: the deposit scan's recent blocks, else the node's. */
  private async blockHashes(heights: readonly bigint[]): Promise<Map<bigint, string>> {
    const out = new Map<bigint, string>();
    if (heights.length === 0) return out;
    const rows = await this.sequelize.query<{ height: string; hash: string }>('SELECT height::text AS height, hash FROM scan_blocks WHERE chain_id = $1 AND height = ANY($2::bigint[])', {
      bind: [this.chain.id, heights.map((h) => h.toString())], type: QueryTypes.SELECT,
    });
    for (const r of rows) out.set(BigInt(r.height), r.hash);
    const missing = heights.filter((h) => !out.has(h));
    if (missing.length > 0 && this.adapter.createScanner) {
      const scanner = this.adapter.createScanner(this.endpoint);
      if (scanner.kind === 'blocks') {
        for (const h of missing) {
          const b = await scanner.blockAt(h).catch(() => null);
          if (b) out.set(h, b.hash);
        }
      }
    }
    return out;
  }

  /**
   * Custody outflows at or below the read point get their EXPLAINED record and, on chains where
   * the sender pays its own fee (not utxo, not Solana), the fee read from the node.
   */
  private async recordOutflows(nativeTokenId: number, height: bigint): Promise<number> {
    const outflows = await unrecordedOutflows(this.sequelize, this.chain.id, height);
    if (outflows.length === 0) return 0;
    const senderPays = this.adapter.spendModel !== 'utxo' && this.chain.family !== 'solana';
    const node = senderPays && this.adapter.createTransferNode ? this.adapter.createTransferNode(this.endpoint) : null;
    const fees = new Map<string, bigint | null>();
    for (const o of outflows) {
      if (!node || fees.has(o.tx_hash)) continue;
      const s = await node.status(o.tx_hash).catch(() => null);
      fees.set(o.tx_hash, s && s.state === 'MINED' ? s.fee : null);
    }
    await this.sequelize.transaction(async (t) => {
      for (const o of outflows) await recordOutflow(this.sequelize, t, this.chain.id, nativeTokenId, o, fees.get(o.tx_hash) ?? null);
    });
    return outflows.length;
  }
}
