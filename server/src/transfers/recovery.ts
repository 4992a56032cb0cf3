import { QueryTypes, type Sequelize } from 'sequelize';
import { canPay, JsonRpcClient, scanning, sequenceNode, type AdapterRegistry, type BlockScanner, type ChainAdapter, type ChainEndpoint, type ObservedTransfer } from '@wcs/core';
import type { ChainView } from '../catalogue/catalogue';
import { listHolds, type SenderHold } from './sender-holds';
import { firstHeightAbove, groupTransactions, matchRecovery, outputsStart, type ChainTransaction, type Intent } from './recovery-match';

// ---------------------------------------------------------------------------------------------
// The recovery after a database restore (docs/transfers.md, "Recovery"; docs/deployment.md): for
// each held sender, the chain's transactions from it that the restored database does not know,
// matched to the restored transfers not on chain yet. This file reads (the plan); recovery-apply.ts
// records a plan.

/** Blocks read per scanRange call. */
const RANGE_BLOCKS = 500n;
/** Blocks read below the default start (a reorg, a transaction the cursor had just passed). */
const START_MARGIN = 12n;
/** History pages read per sender at most (100 transactions each). */
const HISTORY_PAGES = 200;
const HISTORY_PAGE_SIZE = 100;

/** A refusal of `wcs recover transfers` (exit 1): its name is the stable part (docs/errors.md). */
export class RecoveryCommandError extends Error {
  constructor(name: 'RECOVER_SENDER_NOT_HELD' | 'RECOVER_CHAIN_UNAVAILABLE' | 'RECOVER_NO_START_HEIGHT' | 'RECOVER_UNMATCHED_ON_CHAIN' | 'RECOVER_INCOMPLETE', message: string) {
    super(message);
    this.name = name;
  }
}

/** A restored transfer not on chain yet, with what the operator needs to recognise it. */
export interface RecoveryIntent extends Intent {
  readonly kind: string;
  readonly status: string;
  readonly applicationId: number;
  readonly chainTokenId: number;
  readonly symbol: string;
  readonly decimals: number;
  /** The withdrawal behind a PAYOUT (null for sweeps, top-ups, cold transfers). */
  readonly withdrawalId: string | null;
  readonly appOrderNo: string | null;
  readonly createdAt: Date;
}

/** What the chain shows for one token of the catalogue (the operator's listing). */
export interface TokenLabel {
  readonly chainTokenId: number | null;
  readonly symbol: string;
  readonly decimals: number;
}

/** The plan for one held sender. */
export interface SenderPlan {
  readonly hold: SenderHold;
  readonly chain: ChainView;
  /** What was read: a block range, or an address history from a cursor. */
  readonly window: { readonly kind: 'blocks'; readonly from: string; readonly to: string } | { readonly kind: 'history'; readonly cursor: string | null; readonly pages: number };
  readonly matched: ReadonlyArray<{ readonly intent: RecoveryIntent; readonly tx: ChainTransaction; readonly sentAmount: bigint }>;
  readonly unmatchedOnChain: readonly ChainTransaction[];
  readonly unmatchedInDatabase: readonly RecoveryIntent[];
  /** The hold's evidence names transactions the read did not reach (history chains): the plan is incomplete, not released. */
  readonly notReached: readonly string[];
  /** The application whose key the sender is (for UNMATCHED_ON_CHAIN: whose merchant may resubmit). */
  readonly owner: { readonly applicationId: number; readonly name: string } | null;
  /** Token labels by contract ('' for the native coin). */
  readonly tokens: ReadonlyMap<string, TokenLabel>;
}

export interface PlanOptions {
  readonly chains: readonly ChainView[];
  /** Only this sender (canonical form). */
  readonly sender?: string;
  /** Block chains: read from this height instead of the default. */
  readonly fromHeight?: bigint;
}

/** Reads the recovery plan of held senders (nothing is written). */
export class TransferRecovery {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly registry: AdapterRegistry,
    private readonly endpoints: ReadonlyMap<string, ChainEndpoint>,
  ) {}

  /** The open holds the options name; a named sender not held is RECOVER_SENDER_NOT_HELD. */
  async holds(o: PlanOptions): Promise<SenderHold[]> {
    const ids = new Set(o.chains.map((c) => c.id));
    const holds = (await listHolds(this.sequelize, { open: true })).filter((h) => ids.has(h.chainId) && (o.sender === undefined || h.address === o.sender));
    if (o.sender !== undefined && holds.length === 0) {
      throw new RecoveryCommandError('RECOVER_SENDER_NOT_HELD', `${o.sender} is not held${o.chains.length === 1 ? ` on ${o.chains[0]!.code}` : ''} (wcs transfers holds lists the held senders)`);
    }
    return holds.reverse(); // oldest first
  }

  async plan(o: PlanOptions): Promise<SenderPlan[]> {
    const out: SenderPlan[] = [];
    for (const hold of await this.holds(o)) out.push(await this.planOne(hold, o.chains.find((c) => c.id === hold.chainId)!, o.fromHeight));
    return out;
  }

  async planOne(hold: SenderHold, chain: ChainView, fromHeight?: bigint): Promise<SenderPlan> {
    const adapter = this.registry.forChain(chain);
    const endpoint = this.endpoints.get(`${chain.environment}:${chain.code}`);
    if (!endpoint || !adapter.createScanner) {
      throw new RecoveryCommandError('RECOVER_CHAIN_UNAVAILABLE', `${chain.code}: the chain's transactions cannot be read here: it needs an RPC endpoint (WCS_RPC_${chain.environment.toUpperCase()}_${chain.code}) and an adapter with a scanner`);
    }
    const scanner = scanning(adapter).createScanner(endpoint);
    const sender = hold.address;
    let observed: ObservedTransfer[] = [];
    let window: SenderPlan['window'];
    if (scanner.kind === 'blocks') {
      const tip = await scanner.tipHeight();
      const from = fromHeight ?? (await this.sequenceStart(adapter, endpoint, hold, tip)) ?? (await this.outputsStart(chain, scanner, hold)) ?? (await this.defaultStart(chain, sender));
      const senders = new Set([sender]);
      const watched = new Set<string>();
      for (let h = from; h <= tip; h += RANGE_BLOCKS) {
        const to = h + RANGE_BLOCKS - 1n < tip ? h + RANGE_BLOCKS - 1n : tip;
        observed.push(...(await scanner.scanRange(h, to, watched, { senders })).transfers);
      }
      window = { kind: 'blocks', from: from.toString(), to: tip.toString() };
    } else {
      const [stored] = await this.sequelize.query<{ cursor: string | null }>('SELECT cursor FROM scan_history_cursors WHERE chain_id = $1 AND address = $2', {
        bind: [chain.id, sender], type: QueryTypes.SELECT,
      });
      const start = stored?.cursor ?? null;
      let cursor = start;
      let pages = 0;
      while (pages < HISTORY_PAGES) {
        const page = await scanner.transfersSince(sender, cursor, HISTORY_PAGE_SIZE, { outgoing: true });
        pages++;
        observed.push(...page.transfers);
        if (page.cursor === cursor || page.transfers.length === 0) break;
        cursor = page.cursor;
      }
      window = { kind: 'history', cursor: start, pages };
    }
    observed = observed.filter((t) => t.fromAddress === sender);
    const known = await this.known(chain.id, [...new Set(observed.map((t) => t.txHash))]);
    const unknown = observed.filter((t) => !known.has(t.txHash));
    const sequences = await this.sequencesOf(chain, endpoint, [...new Set(unknown.map((t) => t.txHash))]);
    const txs = groupTransactions(unknown, sender, sequences);
    const intents = await this.intents(chain.id, sender);
    const canon = (a: string) => {
      const v = adapter.address.validate(a);
      return v.valid ? v.normalized : a;
    };
    const m = matchRecovery(txs, intents, canon);
    const seen = new Set(observed.map((t) => t.txHash));
    const evidence = hold.evidence.kind === 'UNKNOWN_TRANSACTIONS' && Array.isArray(hold.evidence.transactions) ? (hold.evidence.transactions as string[]) : [];
    return {
      hold, chain, window, matched: m.matched, unmatchedOnChain: m.unmatchedOnChain, unmatchedInDatabase: m.unmatchedInDatabase,
      notReached: evidence.filter((h) => !seen.has(h) && !known.has(h)), owner: await this.ownerOf(chain.id, sender),
      tokens: new Map(chain.tokens.map((t) => [t.contract ?? '', { chainTokenId: t.id, symbol: t.symbol, decimals: t.decimals }] as const)),
    };
  }

  /**
   * Sequence chains whose node reads an account's sequence at a past block (EVM): the block of the
   * first transaction past the sequence the database knew when it held the sender (the hold's
   * evidence), found by binary search. Exact wherever the lost window lies, even once the scanner
   * has read on past it. Null (the default start instead) when the node cannot say (pruned state)
   * or the hold's evidence is not a sequence.
   */
  private async sequenceStart(adapter: ChainAdapter, endpoint: ChainEndpoint, hold: SenderHold, tip: bigint): Promise<bigint | null> {
    if (adapter.spendModel !== 'sequence' || hold.evidence.kind !== 'SEQUENCE' || !canPay(adapter)) return null;
    const node = sequenceNode(adapter, adapter.createTransferNode(endpoint));
    const sequenceAt = node.sequenceAt?.bind(node);
    if (!sequenceAt) return null;
    const databaseNext = hold.evidence.databaseNext;
    const known = typeof databaseNext === 'string' && /^\d+$/.test(databaseNext) ? BigInt(databaseNext) : 0n;
    try {
      return await firstHeightAbove((h) => sequenceAt(hold.address, h), known, 0n, tip);
    } catch {
      return null; // a node without the old blocks' state: the default start
    }
  }

  /**
   * Utxo chains whose hold shows outputs the database believed unspent (SPENT_OUTPUTS): the lowest
   * block of those outputs, less the margin (recovery-match.ts outputsStart). Each output's block
   * as the database records the transaction that made it (a transfer of the service, a deposit),
   * else as the node says (lookupTransaction: a funding from outside). Null (the default start)
   * when the evidence is not outputs or one output's block cannot be told.
   */
  private async outputsStart(chain: ChainView, scanner: BlockScanner, hold: SenderHold): Promise<bigint | null> {
    const outputs = hold.evidence.kind === 'SPENT_OUTPUTS' && Array.isArray(hold.evidence.outputs) ? (hold.evidence.outputs as Array<{ txHash?: unknown }>) : [];
    const hashes = [...new Set(outputs.map((o) => o?.txHash))];
    if (hashes.length === 0 || !hashes.every((h): h is string => typeof h === 'string')) return null;
    const rows = await this.sequelize.query<{ h: string; height: string }>(
      `SELECT h, min(height)::text AS height FROM (
         SELECT tx_hash AS h, block_height AS height FROM transfers WHERE chain_id = $1 AND tx_hash = ANY($2::text[]) AND block_height IS NOT NULL
         UNION ALL SELECT tx_hash, block_height FROM recharges WHERE chain_id = $1 AND tx_hash = ANY($2::text[]) AND block_height IS NOT NULL
       ) k GROUP BY h`,
      { bind: [chain.id, hashes], type: QueryTypes.SELECT },
    );
    const recorded = new Map(rows.map((r) => [r.h, BigInt(r.height)] as const));
    const heights: Array<bigint | null> = [];
    for (const h of hashes) {
      let height = recorded.get(h) ?? null;
      if (height === null) {
        const found = await scanner.lookupTransaction(h);
        height = found.state === 'MINED' ? found.blockHeight : null;
      }
      heights.push(height);
    }
    return outputsStart(heights, START_MARGIN);
  }

  /**
   * Block chains' default start: the lower of the restored scan cursor and the block of the
   * sender's newest transaction the database knows, less a margin. Neither known: the operator
   * says where (RECOVER_NO_START_HEIGHT).
   */
  private async defaultStart(chain: ChainView, sender: string): Promise<bigint> {
    const [r] = await this.sequelize.query<{ cursor: string | null; newest: string | null }>(
      `SELECT (SELECT height::text FROM scan_cursors WHERE chain_id = $1) AS cursor,
              (SELECT max(block_height)::text FROM transfers WHERE chain_id = $1 AND from_address = $2 AND block_height IS NOT NULL) AS newest`,
      { bind: [chain.id, sender], type: QueryTypes.SELECT },
    );
    const heights = [r?.cursor, r?.newest].filter((v): v is string => v !== null && v !== undefined).map((v) => BigInt(v));
    if (heights.length === 0) {
      throw new RecoveryCommandError('RECOVER_NO_START_HEIGHT', `${chain.code}: the restored database has no scan cursor and no mined transaction from ${sender}: say where the lost window starts with --from-height`);
    }
    const low = heights.reduce((a, b) => (b < a ? b : a)) - START_MARGIN;
    return low < 0n ? 0n : low;
  }

  /** Which of these hashes the database knows (a transfer's or one of its attempts'). */
  private async known(chainId: number, hashes: readonly string[]): Promise<Set<string>> {
    if (hashes.length === 0) return new Set();
    const rows = await this.sequelize.query<{ h: string }>(
      `SELECT x.tx_hash AS h FROM transfers x WHERE x.chain_id = $1 AND x.tx_hash = ANY($2::text[])
       UNION SELECT a.tx_hash FROM transfer_attempts a JOIN transfers x ON x.id = a.transfer_id WHERE x.chain_id = $1 AND a.tx_hash = ANY($2::text[])`,
      { bind: [chainId, [...hashes]], type: QueryTypes.SELECT },
    );
    return new Set(rows.map((r) => r.h));
  }

  /** EVM: each transaction's nonce (other chains: none read here; the block orders them). */
  private async sequencesOf(chain: ChainView, endpoint: ChainEndpoint, hashes: readonly string[]): Promise<Map<string, bigint>> {
    const out = new Map<string, bigint>();
    if (chain.family !== 'evm' || hashes.length === 0) return out;
    const rpc = new JsonRpcClient(endpoint);
    for (const h of hashes) {
      const tx = await rpc.call<{ nonce: string } | null>('eth_getTransactionByHash', [h]);
      if (tx) out.set(h, BigInt(tx.nonce));
    }
    return out;
  }

  /** The sender's transfers not on chain yet (READY, SIGNED), oldest first. */
  private async intents(chainId: number, sender: string): Promise<RecoveryIntent[]> {
    const rows = await this.sequelize.query<{
      id: string; kind: string; status: string; application_id: number; chain_token_id: number; symbol: string; decimals: number; contract: string | null;
      to_address: string; memo: string | null; amount: string; options: { feeFromAmount?: boolean; subtractFee?: boolean }; withdrawal_id: string | null; app_order_no: string | null; created_at: Date;
    }>(
      `SELECT x.id::text AS id, x.kind, x.status, x.application_id, x.chain_token_id, t.symbol, t.decimals, t.contract, x.to_address, x.memo, x.amount::text AS amount, x.options,
              w.id::text AS withdrawal_id, w.app_order_no, x.created_at
         FROM transfers x JOIN chain_tokens t ON t.id = x.chain_token_id LEFT JOIN withdrawals w ON w.transfer_id = x.id
        WHERE x.chain_id = $1 AND x.from_address = $2 AND x.status IN ('READY','SIGNED') ORDER BY x.id`,
      { bind: [chainId, sender], type: QueryTypes.SELECT },
    );
    return rows.map((r) => ({
      transferId: r.id, kind: r.kind, status: r.status, applicationId: r.application_id, chainTokenId: r.chain_token_id, symbol: r.symbol, decimals: r.decimals,
      to: r.to_address, contract: r.contract, amount: BigInt(r.amount), memo: r.memo, feeFromAmount: Boolean(r.options?.feeFromAmount || r.options?.subtractFee),
      withdrawalId: r.withdrawal_id, appOrderNo: r.app_order_no, createdAt: r.created_at,
    }));
  }

  /** The application whose hot, fee or deposit key the sender is. */
  private async ownerOf(chainId: number, sender: string): Promise<SenderPlan['owner']> {
    const [r] = await this.sequelize.query<{ id: number; name: string }>(
      `SELECT a.id, a.name FROM applications a WHERE a.id = (
         SELECT application_id FROM hot_wallets WHERE chain_id = $1 AND address = $2
         UNION ALL SELECT application_id FROM transfers WHERE chain_id = $1 AND from_address = $2
         LIMIT 1)`,
      { bind: [chainId, sender], type: QueryTypes.SELECT },
    );
    return r ? { applicationId: r.id, name: r.name } : null;
  }
}
