import { PublicKey as SolanaPublicKey } from '@solana/web3.js';
import {
  ChainRpcError,
  type BalanceAnswer, type BalanceHistory, type BalancePoint, type BalanceQuery, type BalanceReader, type ChainEndpoint, type JsonRpcCall, type JsonRpcClient, type JsonRpcOutcome,
} from '@wcs/core';
import { validateSolanaAddress } from './address';
import { solanaRpc, type SolanaRpcOptions } from './rpc';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from './scanner';
import { associatedTokenAddress } from './transfer';

/** getMultipleAccounts takes at most 100 accounts per call. */
export const MAX_ACCOUNTS_PER_CALL = 100;
/** A token account's mint (0..32), owner (32..64) and amount (64..72): all the reader asks of each account. */
const TOKEN_SLICE = { offset: 0, length: 72 };

export interface SolanaBalanceReaderOptions extends SolanaRpcOptions {
  /** Reads of one balancesAt tried again when the node answered its calls at different slots (default 5); then RPC_INCONSISTENT. */
  readonly consistencyAttempts?: number;
  /** getMultipleAccounts calls per HTTP request (default 20). */
  readonly batchSize?: number;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A query checked: the account read, and what it must be. */
interface Target {
  /** The account whose lamports (native) or token amount is the answer. */
  readonly account: string;
  readonly owner: string;
  /** The mint, null for native SOL. */
  readonly mint: string | null;
}

/**
 * Balances of Solana addresses (reconciliation) at commitment `finalized`: native lamports of the
 * address's account, and for a token (contract: its mint) the amount in the address's associated
 * token account for that mint (under the mint's program: Token or Token-2022). An account that
 * does not exist (never funded, closed; a token account never created) is NO_ACCOUNT.
 *
 * Reads are getMultipleAccounts of up to 100 accounts (only the 72 bytes of a token account that
 * matter: mint, owner, amount), several to an HTTP request, all with minContextSlot = `at`.
 * history 'head': a Solana node answers account state at its latest bank for a commitment, never
 * at a past slot. The answer names the slot it was read at (context.slot, >= at); the calls of one
 * balancesAt must all be answered at the same slot, else they are asked again
 * (consistencyAttempts), so the answers are of one slot. Mints are read once per reader (their
 * program never changes).
 */
export class SolanaBalanceReader implements BalanceReader {
  readonly history: BalanceHistory = { kind: 'head' };
  private readonly rpc: JsonRpcClient;
  private readonly attempts: number;
  private readonly batchSize: number;
  /** Mint → its token program. */
  private readonly programs = new Map<string, string>();

  constructor(endpoint: ChainEndpoint, options: SolanaBalanceReaderOptions = {}) {
    this.rpc = solanaRpc(endpoint, options);
    this.attempts = Math.max(1, options.consistencyAttempts ?? 5);
    this.batchSize = options.batchSize ?? 20;
    if (!Number.isSafeInteger(this.batchSize) || this.batchSize < 1) throw new TypeError(`batchSize must be a positive integer, got ${String(this.batchSize)}`);
  }

  /** The node's finalized slot (no hash: blockHash null). */
  async head(): Promise<BalancePoint> {
    const slot = await this.rpc.call('getSlot', [{ commitment: 'finalized' }]);
    if (typeof slot !== 'number' || !Number.isSafeInteger(slot) || slot < 0) throw this.bad('getSlot', 'a slot number');
    return { height: BigInt(slot), blockHash: null };
  }

  async balancesAt(queries: readonly BalanceQuery[], at: BalancePoint): Promise<{ readonly at: BalancePoint; readonly answers: readonly BalanceAnswer[] }> {
    const checked = checkQueries(queries);
    if (!at || typeof at.height !== 'bigint' || at.height < 0n || at.height > BigInt(Number.MAX_SAFE_INTEGER)) throw new TypeError('balancesAt: at.height must be a slot (a non-negative bigint)');
    if (checked.length === 0) return { at, answers: [] };
    await this.learnMints([...new Set(checked.flatMap((q) => (q.contract === null ? [] : [q.contract])))], at);
    const targets = checked.map((q): Target => (q.contract === null
      ? { account: q.address, owner: q.address, mint: null }
      : { account: associatedTokenAddress(q.address, q.contract, this.programs.get(q.contract)!), owner: q.address, mint: q.contract }));
    const accounts = [...new Set(targets.map((t) => t.account))];
    let slots: number[] = [];
    for (let attempt = 1; attempt <= this.attempts; attempt++) {
      const read = await this.accounts(accounts, at, TOKEN_SLICE);
      slots = [...new Set(read.slots)];
      if (slots.length === 1) {
        return { at: { height: BigInt(slots[0]!), blockHash: null }, answers: targets.map((t) => this.answer(t, read.values.get(t.account)!)) };
      }
    }
    throw new ChainRpcError('RPC_INCONSISTENT', `${this.rpc.endpointName}: getMultipleAccounts answered at different slots (${slots.join(', ')}) in ${this.attempts} attempts: read fewer accounts at a time`);
  }

  /**
   * Each (transaction, address)'s lamport change (postBalances - preBalances of the address's index
   * among the message's account keys, then meta.loadedAddresses writable and readonly), from
   * getTransaction at `finalized`, several to an HTTP request; 0n for an address the transaction
   * does not list; null when the node returns no finalized transaction of that signature.
   */
  async nativeChanges(items: ReadonlyArray<{ readonly txHash: string; readonly address: string }>): Promise<ReadonlyArray<bigint | null>> {
    if (!Array.isArray(items)) throw new TypeError('nativeChanges: items must be an array');
    const checked = items.map((it, i) => {
      if (!it || typeof it !== 'object' || typeof it.txHash !== 'string' || !/^[1-9A-HJ-NP-Za-km-z]{64,88}$/.test(it.txHash)) throw new TypeError(`nativeChanges: item ${i}: txHash must be a base58 signature`);
      const v = validateSolanaAddress(it.address, null);
      if (!v.valid) throw new TypeError(`nativeChanges: item ${i} address: ${v.reason}`);
      return { txHash: it.txHash, address: v.normalized };
    });
    if (checked.length === 0) return [];
    const sigs = [...new Set(checked.map((c) => c.txHash))];
    const outcomes = await this.rpc.batch(
      sigs.map((sig) => ({ method: 'getTransaction', params: [sig, { commitment: 'finalized', encoding: 'json', maxSupportedTransactionVersion: 0 }] })),
      { maxBatch: this.batchSize },
    );
    const txs = new Map<string, { keys: string[]; pre: unknown[]; post: unknown[] } | null>();
    outcomes.forEach((o: JsonRpcOutcome, i) => {
      const v = this.rpc.unwrap(o, 'getTransaction') as unknown;
      if (v === null) return void txs.set(sigs[i]!, null);
      const meta = isObject(v) && isObject(v.meta) ? v.meta : null;
      const message = isObject(v) && isObject(v.transaction) && isObject(v.transaction.message) ? v.transaction.message : null;
      const loaded = meta && isObject(meta.loadedAddresses) ? meta.loadedAddresses : {};
      const keys = [...(Array.isArray(message?.accountKeys) ? message.accountKeys : []), ...(Array.isArray(loaded.writable) ? loaded.writable : []), ...(Array.isArray(loaded.readonly) ? loaded.readonly : [])]
        .map((k: unknown) => (typeof k === 'string' ? k : isObject(k) && typeof k.pubkey === 'string' ? k.pubkey : null));
      if (!meta || !Array.isArray(meta.preBalances) || !Array.isArray(meta.postBalances) || keys.length === 0 || keys.some((k) => k === null)
        || meta.preBalances.length !== keys.length || meta.postBalances.length !== keys.length) {
        throw this.bad('getTransaction', `a transaction with account keys and pre/post balances for each (${sigs[i]})`);
      }
      txs.set(sigs[i]!, { keys: keys as string[], pre: meta.preBalances, post: meta.postBalances });
    });
    return checked.map((c) => {
      const tx = txs.get(c.txHash)!;
      if (tx === null) return null;
      const k = tx.keys.indexOf(c.address);
      if (k < 0) return 0n;
      const pre = tx.pre[k];
      const post = tx.post[k];
      if (typeof pre !== 'number' || typeof post !== 'number' || !Number.isSafeInteger(pre) || !Number.isSafeInteger(post) || pre < 0 || post < 0) {
        throw this.bad('getTransaction', `exact lamport balances of ${c.address} in ${c.txHash}`);
      }
      return BigInt(post) - BigInt(pre);
    });
  }

  // ---- internals ----

  /** The token program of every mint not known yet (one read); a mint that does not exist or is no SPL mint is RPC_BAD_RESPONSE. */
  private async learnMints(mints: readonly string[], at: BalancePoint): Promise<void> {
    const unknown = mints.filter((m) => !this.programs.has(m));
    if (unknown.length === 0) return;
    const read = await this.accounts(unknown, at, { offset: 0, length: 0 });
    for (const mint of unknown) {
      const account = read.values.get(mint);
      if (!account) throw this.bad('getMultipleAccounts', `an account at mint ${mint} (no such mint)`);
      if (account.owner !== TOKEN_PROGRAM_ID && account.owner !== TOKEN_2022_PROGRAM_ID) throw this.bad('getMultipleAccounts', `an SPL token mint at ${mint} (owned by ${String(account.owner)})`);
      this.programs.set(mint, account.owner);
    }
  }

  /** getMultipleAccounts (base64, the slice given, finalized, minContextSlot at) of the accounts, by 100, in batches. */
  private async accounts(accounts: readonly string[], at: BalancePoint, dataSlice: { offset: number; length: number }): Promise<{ values: Map<string, Json | null>; slots: number[] }> {
    const calls: JsonRpcCall[] = [];
    for (let i = 0; i < accounts.length; i += MAX_ACCOUNTS_PER_CALL) {
      calls.push({
        method: 'getMultipleAccounts',
        params: [accounts.slice(i, i + MAX_ACCOUNTS_PER_CALL), { commitment: 'finalized', encoding: 'base64', dataSlice, minContextSlot: Number(at.height) }],
      });
    }
    const outcomes = await this.rpc.batch(calls, { maxBatch: this.batchSize });
    const values = new Map<string, Json | null>();
    const slots: number[] = [];
    outcomes.forEach((o: JsonRpcOutcome, c) => {
      const v = this.rpc.unwrap(o, 'getMultipleAccounts') as unknown;
      const keys = (calls[c]!.params as [string[]])[0];
      const slot = isObject(v) && isObject(v.context) ? v.context.slot : undefined;
      const list = isObject(v) ? v.value : undefined;
      if (typeof slot !== 'number' || !Number.isSafeInteger(slot) || !Array.isArray(list) || list.length !== keys.length) {
        throw this.bad('getMultipleAccounts', `{ context: { slot }, value: [${keys.length} accounts] }`);
      }
      slots.push(slot);
      keys.forEach((k, i) => {
        const a = list[i] as unknown;
        if (a !== null && !(isObject(a) && typeof a.lamports === 'number' && typeof a.owner === 'string')) throw this.bad('getMultipleAccounts', `an account or null for ${k}`);
        values.set(k, a as Json | null);
      });
    });
    return { values, slots };
  }

  private answer(t: Target, account: Json | null): BalanceAnswer {
    if (account === null) return { kind: 'NO_ACCOUNT' };
    if (t.mint === null) {
      const lamports = account.lamports as number;
      if (!Number.isSafeInteger(lamports) || lamports < 0) throw this.bad('getMultipleAccounts', `lamports of ${t.account} as an exact integer`);
      return { kind: 'AMOUNT', amount: BigInt(lamports) };
    }
    const data = Array.isArray(account.data) && typeof account.data[0] === 'string' && account.data[1] === 'base64' ? Buffer.from(account.data[0], 'base64') : null;
    if (data === null || data.length < 72) throw this.bad('getMultipleAccounts', `72 base64 bytes of token account ${t.account}`);
    if (account.owner !== this.programs.get(t.mint)) throw this.bad('getMultipleAccounts', `token account ${t.account} owned by the mint's program`);
    const mint = new SolanaPublicKey(data.subarray(0, 32)).toBase58();
    const owner = new SolanaPublicKey(data.subarray(32, 64)).toBase58();
    if (mint !== t.mint || owner !== t.owner) throw this.bad('getMultipleAccounts', `token account ${t.account} of mint ${t.mint} and owner ${t.owner} (it holds ${mint} for ${owner})`);
    return { kind: 'AMOUNT', amount: data.readBigUInt64LE(64) };
  }

  private bad(method: string, expected: string): ChainRpcError {
    return new ChainRpcError('RPC_BAD_RESPONSE', `${this.rpc.endpointName}: ${method}: the answer is not ${expected}`, { method });
  }
}

function checkQueries(queries: readonly BalanceQuery[]): Array<{ address: string; contract: string | null }> {
  if (!Array.isArray(queries)) throw new TypeError('balancesAt: queries must be an array');
  const check = (a: unknown, what: string): string => {
    const v = validateSolanaAddress(a as string, null);
    if (!v.valid) throw new TypeError(`balancesAt: ${what}: ${v.reason}`);
    return v.normalized;
  };
  return queries.map((q, i) => {
    if (!q || typeof q !== 'object') throw new TypeError(`balancesAt: query ${i} is not an object`);
    return { address: check(q.address, `query ${i} address`), contract: q.contract === null ? null : check(q.contract, `query ${i} contract (mint)`) };
  });
}
