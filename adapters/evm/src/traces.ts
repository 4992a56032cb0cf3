import { ChainRpcError } from '@wcs/core';
import type { Json, Reader } from './node-json';

/**
 * Native coin that moves inside a transaction (internal transfers) and outside any transaction
 * (validator withdrawals), read from the node's answers: pure functions over the JSON the scanner
 * fetched, no I/O.
 *
 * Positions ((chain, txHash, position) identifies a deposit):
 * - the transaction's own value: -1 (the scanner's transaction path, not here);
 * - ERC-20 Transfer logs: their logIndex (>= 0);
 * - an internal transfer: -2 - k, k the ordinal (from 0) of its frame among the transaction's
 *   value-carrying frames in depth-first (pre-)order, the root frame (the transaction itself)
 *   excluded. Value-carrying: a CALL, CREATE, CREATE2 or SELFDESTRUCT frame with value > 0.
 *   Reverted frames count in k (they are skipped, not renumbered), so a position depends on the
 *   trace alone, not on the watched set or on which frames reverted; both tracers list frames in
 *   the same depth-first order, so both give the same positions;
 * - a validator withdrawal (EIP-4895): -1_000_000 - i, i its index in the block's `withdrawals`
 *   list; its txHash is the block's hash (there is no transaction).
 */

/** Which trace API a node serves for internal transfers, or why none is used. */
export type TraceMode = 'debug_traceBlockByNumber' | 'trace_block' | 'off' | 'unavailable';

/** The trace APIs, in the order they are tried. */
export const TRACE_METHODS = ['debug_traceBlockByNumber', 'trace_block'] as const;
export type TraceMethod = (typeof TRACE_METHODS)[number];

/** The JSON-RPC params that trace one block with a method. */
export function traceParams(method: TraceMethod, block: string): unknown[] {
  return method === 'debug_traceBlockByNumber' ? [block, { tracer: 'callTracer' }] : [block];
}

/** The position of the k-th value-carrying frame of a transaction (k from 0). */
export const internalPosition = (k: number): number => -2 - k;
/** Positions of validator withdrawals start here and go down: -1_000_000 - i. */
export const WITHDRAWAL_POSITION_BASE = -1_000_000;
/** The position of the i-th withdrawal of a block's list. */
export const withdrawalPosition = (i: number): number => WITHDRAWAL_POSITION_BASE - i;
/** One Gwei in wei: withdrawal amounts are in Gwei (EIP-4895). */
const GWEI = 10n ** 9n;

/** Native coin moved by a frame inside a transaction that succeeded, the frame and its callers too. */
export interface InternalTransfer {
  readonly txHash: string;
  /** The transaction's index in its block. */
  readonly txIndex: number;
  /** -2 - k (see the module comment). */
  readonly position: number;
  /** Lower-case addresses. */
  readonly from: string;
  readonly to: string;
  readonly value: bigint;
}

/** A validator withdrawal to an address (EIP-4895). */
export interface Withdrawal {
  /** Index in the block's list. */
  readonly index: number;
  /** Lower-case address. */
  readonly address: string;
  /** Wei (the node's Gwei times 10^9). */
  readonly amount: bigint;
}

/** Which transfers the caller wants (lower-case addresses): e.g. into a watched address or out of a sender. */
export type TransferFilter = (from: string, to: string) => boolean;

/** A frame as both tracers give it, before the filter. */
interface Frame {
  readonly kind: 'CALL' | 'CREATE' | 'SELFDESTRUCT' | 'OTHER';
  readonly from: string | null;
  readonly to: string | null;
  readonly value: bigint;
  /** The frame or one of its callers reverted. */
  readonly reverted: boolean;
}

/**
 * Internal transfers of one block from debug_traceBlockByNumber with the callTracer: one
 * `{ txHash?, result }` per transaction of the block, in order (geth before 1.11 omits txHash).
 * `txHashes` are the block's transactions as eth_getBlockByNumber gave them: a different count or
 * hash means the two answers are of different blocks (RPC_INCONSISTENT).
 */
export function callTracerTransfers(read: Reader, answer: unknown, txHashes: readonly string[], what: string, keep: TransferFilter): InternalTransfer[] {
  if (!Array.isArray(answer)) throw read.bad(`${what} is not a list`);
  if (answer.length !== txHashes.length) {
    throw inconsistent(read, `${what} traced ${answer.length} transactions; the block has ${txHashes.length}`);
  }
  const out: InternalTransfer[] = [];
  answer.forEach((raw, txIndex) => {
    const item = read.object(raw, `${what} item ${txIndex}`);
    const txHash = txHashes[txIndex]!;
    if (item.txHash !== undefined && item.txHash !== null && read.hash(item, 'txHash', `${what} item ${txIndex}`) !== txHash) {
      throw inconsistent(read, `${what} item ${txIndex} is transaction ${String(item.txHash)}, the block's is ${txHash}`);
    }
    if (item.error !== undefined && item.error !== null) throw read.bad(`${what}: transaction ${txHash} could not be traced: ${String(item.error).slice(0, 200)}`);
    const root = read.object(item.result, `${what} result of ${txHash}`);
    const frames: Frame[] = [];
    walkCallFrame(read, root, false, frames, `${what} ${txHash}`, 0);
    collect(frames.slice(1), txHash, txIndex, keep, out);
  });
  return out;
}

/** callTracer frames in depth-first pre-order; `reverted` inherited from the callers. */
function walkCallFrame(read: Reader, frame: Json, callerReverted: boolean, out: Frame[], what: string, depth: number): void {
  if (depth > 1100) throw read.bad(`${what}: call frames nested deeper than the EVM allows`); // 1024 call depth
  const type = typeof frame.type === 'string' ? frame.type.toUpperCase() : '';
  const reverted = callerReverted || (frame.error !== undefined && frame.error !== null);
  const kind = type === 'CALL' ? 'CALL' : type === 'CREATE' || type === 'CREATE2' ? 'CREATE' : type === 'SELFDESTRUCT' ? 'SELFDESTRUCT' : 'OTHER';
  const value = kind !== 'OTHER' && frame.value !== undefined && frame.value !== null ? read.quantity(frame, 'value', what) : 0n;
  // addresses are read only where coin moved; a failed CREATE may have no `to` (no contract was made)
  const moved = value > 0n;
  out.push({ kind, from: moved ? read.address(frame, 'from', what) : null, to: moved ? read.address(frame, 'to', what) : null, value, reverted });
  const calls = frame.calls;
  if (calls === undefined || calls === null) return;
  if (!Array.isArray(calls)) throw read.bad(`${what}: calls is not a list`);
  for (const c of calls) walkCallFrame(read, read.object(c, `${what} call`), reverted, out, what, depth + 1);
}

/**
 * Internal transfers of one block from parity-style trace_block: a flat list of traces, each
 * with its transactionHash, transactionPosition and traceAddress (the path from the root frame),
 * in depth-first pre-order per transaction. Traces of another block hash (the block changed
 * between the two reads) are RPC_INCONSISTENT; block rewards (no transaction) are ignored.
 */
export function parityTransfers(read: Reader, answer: unknown, blockHash: string, txHashes: readonly string[], what: string, keep: TransferFilter): InternalTransfer[] {
  if (!Array.isArray(answer)) throw read.bad(`${what} is not a list`);
  const byTx = new Map<number, { readonly hash: string; readonly frames: Frame[]; readonly reverted: Set<string> }>();
  for (const raw of answer) {
    const t = read.object(raw, `${what} item`);
    if (t.transactionHash === null || t.transactionHash === undefined) continue; // a block or uncle reward
    if (read.hash(t, 'blockHash', what) !== blockHash) throw inconsistent(read, `${what} has a trace of block ${String(t.blockHash)}, not ${blockHash}`);
    const txHash = read.hash(t, 'transactionHash', what);
    const txIndex = positionOf(read, t, what);
    if (txHashes[txIndex] !== txHash) throw inconsistent(read, `${what}: transaction ${txHash} at position ${txIndex}; the block has ${txHashes[txIndex] ?? 'none'} there`);
    const path = traceAddress(read, t, what);
    let tx = byTx.get(txIndex);
    if (!tx) byTx.set(txIndex, (tx = { hash: txHash, frames: [], reverted: new Set() }));
    const key = path.join(',');
    let reverted = t.error !== undefined && t.error !== null;
    for (let n = 0; !reverted && n < path.length; n++) reverted = tx.reverted.has(path.slice(0, n).join(','));
    if (reverted) tx.reverted.add(key);
    tx.frames.push({ ...parityFrame(read, t, what), reverted });
    if (path.length === 0 && tx.frames.length !== 1) throw read.bad(`${what}: transaction ${txHash} has its root trace after others`);
  }
  const out: InternalTransfer[] = [];
  for (const [txIndex, tx] of [...byTx].sort((a, b) => a[0] - b[0])) collect(tx.frames.slice(1), tx.hash, txIndex, keep, out);
  return out;
}

function parityFrame(read: Reader, t: Json, what: string): Omit<Frame, 'reverted'> {
  const action = read.object(t.action, `${what} action`);
  switch (t.type) {
    case 'call': {
      const callType = typeof action.callType === 'string' ? action.callType.toLowerCase() : '';
      if (callType !== 'call') return { kind: 'OTHER', from: null, to: null, value: 0n }; // delegatecall, staticcall, callcode
      return { kind: 'CALL', from: read.address(action, 'from', what), to: read.address(action, 'to', what), value: read.quantity(action, 'value', what) };
    }
    case 'create': {
      const result = t.result === null || t.result === undefined ? null : read.object(t.result, `${what} result`);
      return { kind: 'CREATE', from: read.address(action, 'from', what), to: result === null ? null : read.address(result, 'address', what), value: read.quantity(action, 'value', what) };
    }
    case 'suicide':
    case 'selfdestruct':
      return { kind: 'SELFDESTRUCT', from: read.address(action, 'address', what), to: read.address(action, 'refundAddress', what), value: read.quantity(action, 'balance', what) };
    default:
      return { kind: 'OTHER', from: null, to: null, value: 0n };
  }
}

function positionOf(read: Reader, t: Json, what: string): number {
  const p = t.transactionPosition;
  if (typeof p === 'number' && Number.isSafeInteger(p) && p >= 0) return p;
  if (typeof p === 'string') return Number(read.quantity(t, 'transactionPosition', what));
  throw read.bad(`${what}.transactionPosition is not a transaction index`);
}

function traceAddress(read: Reader, t: Json, what: string): number[] {
  const a = t.traceAddress;
  if (!Array.isArray(a) || !a.every((x) => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0)) throw read.bad(`${what}.traceAddress is not a list of indices`);
  return a as number[];
}

/** Numbers the value-carrying frames (the root already dropped) and keeps those that moved coin and pass the filter. */
function collect(frames: readonly Frame[], txHash: string, txIndex: number, keep: TransferFilter, out: InternalTransfer[]): void {
  let k = 0;
  for (const f of frames) {
    if (f.kind === 'OTHER' || f.value <= 0n) continue;
    const position = internalPosition(k++);
    // reverted: the coin never moved; no `to`: a creation that made nothing; from = to: no balance changed
    if (f.reverted || f.to === null || f.from === null || f.from === f.to) continue;
    if (keep(f.from, f.to)) out.push({ txHash, txIndex, position, from: f.from, to: f.to, value: f.value });
  }
}

/**
 * The validator withdrawals (EIP-4895) of a block to the addresses `keep` accepts: the block's
 * `withdrawals` list, each `{ index, validatorIndex, address, amount }` with the amount in Gwei
 * (execution-apis, schemas/withdrawal.yaml). No list (a chain or block before Shanghai): none.
 */
export function blockWithdrawals(read: Reader, block: Json, what: string, keep: (address: string) => boolean): Withdrawal[] {
  const list = block.withdrawals;
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw read.bad(`${what}.withdrawals is not a list`);
  const out: Withdrawal[] = [];
  list.forEach((raw, index) => {
    const w = read.object(raw, `${what} withdrawal ${index}`);
    const address = read.address(w, 'address', `${what} withdrawal ${index}`);
    if (address === null) throw read.bad(`${what} withdrawal ${index} has no address`);
    if (!keep(address)) return;
    const amount = read.quantity(w, 'amount', `${what} withdrawal ${index}`) * GWEI;
    if (amount > 0n) out.push({ index, address, amount });
  });
  return out;
}

function inconsistent(read: Reader, why: string): ChainRpcError {
  const bad = read.bad(why);
  return new ChainRpcError('RPC_INCONSISTENT', `${bad.message} (the chain changed during the read)`);
}
