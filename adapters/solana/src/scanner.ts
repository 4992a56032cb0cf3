import {
  ChainRpcError, jsonBigInt as toBigInt,
  type AddressNature, type ChainEndpoint, type HistoryReadOptions, type HistoryScanner, type JsonRpcClient, type ObservedTransfer,
} from '@wcs/core';
import { validateSolanaAddress } from './address';
import { solanaRpc, type SolanaRpcOptions } from './rpc';

export const SYSTEM_PROGRAM_ID = '11111111111111111111111111111111';
export const TOKEN_PROGRAM_ID = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM_ID = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';

/**
 * `position` of an ObservedTransfer on Solana, unique within a transaction:
 * - native SOL in outer instruction i: i (a transaction holds far fewer than 1000 instructions);
 * - native SOL in inner instruction j of outer instruction i: (i + 1) * 1000 + j (the runtime
 *   caps the instruction trace at 64, so j < 1000);
 * - an SPL token deposit (net balance increase of one mint over the watched owner's token
 *   accounts): 1_000_000 + the account index of the first of those accounts whose balance rose;
 *   an outgoing SPL transfer (net decrease): 1_000_000 + the account index of the first of them
 *   whose balance fell.
 */
export const SOLANA_TOKEN_POSITION_BASE = 1_000_000;
export function solanaInnerPosition(outerIndex: number, innerIndex: number): number {
  return (outerIndex + 1) * 1000 + innerIndex;
}

export interface SolanaScannerOptions extends SolanaRpcOptions {
  /** Signatures asked for per getSignaturesForAddress page (1..1000, default 1000). */
  readonly signaturePageSize?: number;
  /** getTransaction requests per JSON-RPC batch (1: no batching; default 20). */
  readonly batchSize?: number;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A signature of the watched address or one of its token accounts, from getSignaturesForAddress. */
interface Listed {
  readonly signature: string;
  readonly slot: bigint;
  /** First-seen order; pages are newest first, so a higher number is older within a slot. */
  readonly seen: number;
}

/** An answer the scanner cannot read (RPC_ERROR, as this adapter always said). */
function badAnswer(method: string, why: string): ChainRpcError {
  return new ChainRpcError('RPC_ERROR', `Solana RPC ${method}: ${why}`, { method });
}

/**
 * The transfers into `address` that one jsonParsed getTransaction result shows (see README); with
 * `options.outgoing`, the transfers out of it too (`fromAddress` the address):
 * - native SOL: system `transfer` / `transferWithSeed` instructions (outer and inner) whose
 *   destination (IN) or source (OUT) is the address, one per instruction; a transfer from the
 *   address to itself is neither;
 * - SPL tokens: per mint, the net change over the token accounts the address owns (by the
 *   balances' `owner`): a rise is one IN transfer, a fall one OUT transfer. An OUT transfer's
 *   `toAddress` is the one other owner whose balance of the mint rose, or "" when none did (a
 *   burn) or several did (the fall is not split between them).
 */
export function solanaTransfersInTransaction(tx: unknown, address: string, signature?: string, options: HistoryReadOptions = {}): ObservedTransfer[] {
  const bad = (what: string): never => {
    throw badAnswer('getTransaction', `unreadable transaction${signature ? ` ${signature}` : ''}: ${what}`);
  };
  if (!isObject(tx)) return bad('not an object');
  const slot = toBigInt(tx.slot);
  if (slot === null || slot < 0n) return bad('no slot');
  const meta = tx.meta;
  if (!isObject(meta)) return bad('no status meta');
  const transaction = tx.transaction;
  if (!isObject(transaction) || !isObject(transaction.message)) return bad('not jsonParsed');
  const signatures = transaction.signatures;
  const txHash = Array.isArray(signatures) && typeof signatures[0] === 'string' ? signatures[0] : bad('no signature');
  if (signature !== undefined && txHash !== signature) bad('another transaction was returned');
  const message = transaction.message;
  const keys = Array.isArray(message.accountKeys)
    ? message.accountKeys.map((k) => (typeof k === 'string' ? k : isObject(k) && typeof k.pubkey === 'string' ? k.pubkey : null))
    : bad('no account keys');
  const feePayer = keys[0] ?? null;
  const succeeded = meta.err === null || meta.err === undefined;
  const outgoing = options.outgoing === true;
  const common = { txHash, toAddress: address, memo: null, blockHeight: slot, blockHash: slot.toString(), succeeded };
  const out: ObservedTransfer[] = [];

  const nativeTransfer = (ix: unknown, position: number) => {
    if (!isObject(ix) || ix.programId !== SYSTEM_PROGRAM_ID || !isObject(ix.parsed)) return;
    const { type, info } = ix.parsed;
    if ((type !== 'transfer' && type !== 'transferWithSeed') || !isObject(info)) return;
    const into = info.destination === address;
    const from = info.source === address;
    if (into === from || (from && !outgoing)) return; // not the address's, from the address to itself, or an outgoing one not asked for
    const lamports = toBigInt(info.lamports);
    if (lamports === null) return bad(`instruction ${position} has no lamports`);
    if (lamports <= 0n) return;
    if (into) {
      out.push({ ...common, position, fromAddress: typeof info.source === 'string' ? info.source : null, contract: null, amount: lamports });
    } else {
      if (typeof info.destination !== 'string') return bad(`instruction ${position} has no destination`);
      out.push({ ...common, position, fromAddress: address, toAddress: info.destination, contract: null, amount: lamports });
    }
  };

  const instructions = Array.isArray(message.instructions) ? message.instructions : bad('no instructions');
  instructions.forEach((ix, i) => nativeTransfer(ix, i));
  const inner = meta.innerInstructions;
  if (Array.isArray(inner)) {
    for (const group of inner) {
      if (!isObject(group) || typeof group.index !== 'number' || !Array.isArray(group.instructions)) return bad('malformed inner instructions');
      const outer = group.index;
      group.instructions.forEach((ix, j) => nativeTransfer(ix, solanaInnerPosition(outer, j)));
    }
  }

  // SPL tokens: net change per mint over the token accounts the watched address owns.
  interface MintDelta { pre: bigint; post: bigint; firstRise: number | null; others: Map<string, bigint> }
  const byMint = new Map<string, MintDelta>();
  const balances = (list: unknown, side: 'pre' | 'post') => {
    if (list === undefined || list === null) return;
    if (!Array.isArray(list)) return bad(`${side}TokenBalances is not a list`);
    for (const b of list) {
      if (!isObject(b) || typeof b.mint !== 'string' || typeof b.accountIndex !== 'number' || !isObject(b.uiTokenAmount)) return bad(`malformed ${side}TokenBalances`);
      const amount = toBigInt(b.uiTokenAmount.amount);
      if (amount === null || amount < 0n) return bad(`malformed ${side}TokenBalances amount`);
      const d = byMint.get(b.mint) ?? { pre: 0n, post: 0n, firstRise: null, others: new Map<string, bigint>() };
      byMint.set(b.mint, d);
      const signed = side === 'pre' ? -amount : amount;
      if (b.owner === address) {
        d[side] += amount;
      } else if (typeof b.owner === 'string') {
        d.others.set(b.owner, (d.others.get(b.owner) ?? 0n) + signed);
      }
    }
  };
  balances(meta.preTokenBalances, 'pre');
  balances(meta.postTokenBalances, 'post');
  for (const [mint, d] of byMint) {
    if (d.post === d.pre || (d.post < d.pre && !outgoing)) continue;
    // The account index: the first (lowest) of the owner's accounts of this mint whose balance rose (fell).
    const perAccount = new Map<number, bigint>();
    for (const [list, sign] of [[meta.preTokenBalances, -1n], [meta.postTokenBalances, 1n]] as const) {
      for (const b of (Array.isArray(list) ? list : []) as Json[]) {
        if (b.owner !== address || b.mint !== mint) continue;
        const idx = b.accountIndex as number;
        perAccount.set(idx, (perAccount.get(idx) ?? 0n) + sign * (toBigInt((b.uiTokenAmount as Json).amount) ?? 0n));
      }
    }
    if (d.post < d.pre) {
      const falling = [...perAccount].filter(([, delta]) => delta < 0n).map(([idx]) => idx).sort((a, b) => a - b);
      const receivers = [...d.others].filter(([, delta]) => delta > 0n).map(([owner]) => owner);
      out.push({
        ...common,
        position: SOLANA_TOKEN_POSITION_BASE + (falling[0] ?? 0),
        fromAddress: address,
        toAddress: receivers.length === 1 ? receivers[0]! : '',
        contract: mint,
        amount: d.pre - d.post,
      });
      continue;
    }
    const rising = [...perAccount].filter(([, delta]) => delta > 0n).map(([idx]) => idx).sort((a, b) => a - b);
    const senders = [...d.others].filter(([, delta]) => delta < 0n).map(([owner]) => owner);
    out.push({
      ...common,
      position: SOLANA_TOKEN_POSITION_BASE + (rising[0] ?? 0),
      fromAddress: senders.length === 1 ? senders[0]! : feePayer,
      contract: mint,
      amount: d.post - d.pre,
    });
  }
  return out.sort((a, b) => a.position - b.position);
}

/** How long an `EOA` answer of addressNatures is kept (an address can become a program-owned account). */
const EOA_NATURE_MS = 10 * 60_000;

/** One getMultipleAccounts entry as an address nature (see addressNatures). */
export function solanaAccountNature(account: unknown): AddressNature {
  if (account === null || account === undefined) return 'EOA';
  if (!isObject(account) || typeof account.owner !== 'string') throw badAnswer('getMultipleAccounts', 'an account has no owner');
  return account.owner === SYSTEM_PROGRAM_ID && account.executable !== true ? 'EOA' : 'CONTRACT';
}

class SolanaHistoryScanner implements HistoryScanner {
  readonly kind = 'history' as const;
  private readonly rpc: JsonRpcClient;
  private readonly pageSize: number;
  private readonly batchSize: number;

  constructor(endpoint: ChainEndpoint, options: SolanaScannerOptions) {
    this.pageSize = options.signaturePageSize ?? 1000;
    if (!Number.isInteger(this.pageSize) || this.pageSize < 1 || this.pageSize > 1000) throw new TypeError('signaturePageSize must be an integer from 1 to 1000');
    this.batchSize = options.batchSize ?? 20;
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1 || this.batchSize > 100) throw new TypeError('batchSize must be an integer from 1 to 100');
    this.rpc = solanaRpc(endpoint, options, { maxBatch: this.batchSize });
  }

  private call(method: string, params: unknown[]): Promise<unknown> {
    return this.rpc.call(method, params);
  }

  /** One JSON-RPC batch of the same method (batchSize calls per request); results in request order, any node error thrown. */
  private batch(method: string, paramsList: unknown[][]): Promise<unknown[]> {
    return this.rpc.batchResults(paramsList.map((params) => ({ method, params })));
  }

  async tipHeight(): Promise<bigint> {
    const slot = toBigInt(await this.call('getSlot', [{ commitment: 'finalized' }]));
    if (slot === null || slot < 0n) throw badAnswer('getSlot', 'the slot is not a non-negative integer');
    return slot;
  }

  /** The watched owner's SPL token accounts (Token and Token-2022 programs). */
  private async tokenAccounts(owner: string): Promise<string[]> {
    const out: string[] = [];
    for (const programId of [TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID]) {
      const result = await this.call('getTokenAccountsByOwner', [owner, { programId }, { commitment: 'finalized', encoding: 'base64', dataSlice: { offset: 0, length: 0 } }]);
      const value = isObject(result) ? result.value : undefined;
      if (!Array.isArray(value)) throw badAnswer('getTokenAccountsByOwner', 'the answer has no account list');
      for (const v of value) {
        if (!isObject(v) || typeof v.pubkey !== 'string') throw badAnswer('getTokenAccountsByOwner', 'an account has no pubkey');
        out.push(v.pubkey);
      }
    }
    return out;
  }

  /**
   * The finalized signatures of `account` in slots above `after`, newest first, paging backwards
   * with `before` until a page reaches a slot at or below `after` or the start of the history.
   */
  private async signaturesAbove(account: string, after: bigint, into: Map<string, Listed>, counter: { n: number }): Promise<void> {
    let before: string | undefined;
    let ceiling: bigint | null = null;
    const page: Listed[] = [];
    for (;;) {
      const cfg: Json = { limit: this.pageSize, commitment: 'finalized' };
      if (before !== undefined) cfg.before = before;
      const result = await this.call('getSignaturesForAddress', [account, cfg]);
      if (!Array.isArray(result)) throw badAnswer('getSignaturesForAddress', 'the answer is not a list');
      let reached = false;
      for (const e of result) {
        const slot = isObject(e) ? toBigInt(e.slot) : null;
        if (!isObject(e) || typeof e.signature !== 'string' || slot === null) throw badAnswer('getSignaturesForAddress', 'malformed signature entry');
        if (slot <= after) { reached = true; break; }
        // Only finalized history is read; a node that lists anything else bounds what is used.
        if (e.confirmationStatus !== undefined && e.confirmationStatus !== null && e.confirmationStatus !== 'finalized') {
          ceiling = ceiling === null || slot < ceiling ? slot : ceiling;
          continue;
        }
        page.push({ signature: e.signature, slot, seen: counter.n++ });
      }
      if (reached || result.length < this.pageSize) break;
      const last = (result[result.length - 1] as Json).signature as string;
      if (last === before) throw badAnswer('getSignaturesForAddress', 'paging with before did not advance');
      before = last;
    }
    for (const e of page) {
      if (ceiling !== null && e.slot >= ceiling) continue;
      if (!into.has(e.signature)) into.set(e.signature, e);
    }
  }

  /** The finalized slot: reading from it returns what happens after this call. */
  async headCursor(address: string): Promise<string> {
    if (!validateSolanaAddress(address).valid) throw new TypeError('not a Solana address');
    return (await this.tipHeight()).toString();
  }

  /**
   * A counterparty's nature from getMultipleAccounts (finalized; no data read): an account that
   * does not exist, or that the system program owns and is not executable, is `EOA` (a key holds
   * it); any other (a program, a program-owned account such as a PDA or a token account) is
   * `CONTRACT`. `CONTRACT` answers are kept (an owner program changes only by closing and
   * re-creating the account); `EOA` answers for 10 minutes.
   */
  async addressNatures(addresses: readonly string[]): Promise<readonly AddressNature[]> {
    const now = Date.now();
    const wanted = [...new Set(addresses.filter((a) => {
      const c = this.natures.get(a);
      return !c || (c.nature === 'EOA' && now - c.at > EOA_NATURE_MS);
    }))].filter((a) => validateSolanaAddress(a).valid);
    for (let i = 0; i < wanted.length; i += 100) {
      const part = wanted.slice(i, i + 100);
      const result = await this.call('getMultipleAccounts', [part, { commitment: 'finalized', encoding: 'base64', dataSlice: { offset: 0, length: 0 } }]);
      const value = isObject(result) ? result.value : undefined;
      if (!Array.isArray(value) || value.length !== part.length) throw badAnswer('getMultipleAccounts', 'the answer has no account per address');
      value.forEach((v, k) => this.remember(part[k]!, solanaAccountNature(v), now));
    }
    return addresses.map((a) => this.natures.get(a)?.nature ?? 'EOA');
  }

  private readonly natures = new Map<string, { nature: AddressNature; at: number }>();

  private remember(address: string, nature: AddressNature, at: number): void {
    if (this.natures.size >= 100_000) this.natures.clear();
    this.natures.set(address, { nature, at });
  }

  async transfersSince(address: string, cursor: string | null, limit: number, options: HistoryReadOptions = {}): Promise<{ transfers: readonly ObservedTransfer[]; cursor: string | null }> {
    if (!validateSolanaAddress(address).valid) throw new TypeError('not a Solana address');
    if (cursor !== null && !/^\d{1,20}$/.test(cursor)) throw new TypeError('a Solana scan cursor is a slot number');
    if (!Number.isInteger(limit) || limit < 1) throw new TypeError('limit must be a positive integer');
    const after = cursor === null ? -1n : BigInt(cursor);

    // SPL tokens arrive at token accounts, whose transactions need not name the owner.
    const accounts = [address, ...(await this.tokenAccounts(address))];
    const listed = new Map<string, Listed>();
    const counter = { n: 0 };
    for (const account of accounts) await this.signaturesAbove(account, after, listed, counter);
    if (listed.size === 0) return { transfers: [], cursor };

    // Oldest first; whole slots only, so the cursor (the last slot read) never splits a slot.
    const ordered = [...listed.values()].sort((a, b) => (a.slot === b.slot ? b.seen - a.seen : a.slot < b.slot ? -1 : 1));
    const chosen: Listed[] = [];
    for (const e of ordered) {
      if (chosen.length >= limit && e.slot !== chosen[chosen.length - 1]!.slot) break;
      chosen.push(e);
    }

    const transfers: ObservedTransfer[] = [];
    for (let i = 0; i < chosen.length; i += this.batchSize) {
      const part = chosen.slice(i, i + this.batchSize);
      const results = await this.batch('getTransaction', part.map((e) => [e.signature, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0, commitment: 'finalized' }]));
      results.forEach((tx, k) => {
        const e = part[k]!;
        if (tx === null || tx === undefined) {
          throw badAnswer('getTransaction', `finalized transaction ${e.signature} was listed but not returned (pruned history?)`);
        }
        transfers.push(...solanaTransfersInTransaction(tx, address, e.signature, options));
      });
    }
    return { transfers, cursor: chosen[chosen.length - 1]!.slot.toString() };
  }
}

/**
 * A history scanner over a Solana JSON-RPC endpoint, finalized commitment throughout. The cursor
 * is the last slot read for the address (decimal text). See README "Deposit scanning".
 */
export function createSolanaScanner(endpoint: ChainEndpoint, options: SolanaScannerOptions = {}): HistoryScanner {
  return new SolanaHistoryScanner(endpoint, options);
}
