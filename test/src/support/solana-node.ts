/**
 * A Solana JSON-RPC endpoint answered from litesvm (the Solana runtime, in process), with the SPL
 * token history the deposit scanner reads, shared by the collection, chain-event and reconciliation
 * tests on Solana. What is real and what is made:
 * - Transactions are executed by litesvm (every signature checked). Account reads (getBalance,
 *   getMultipleAccounts jsonParsed or base64, getTokenAccountsByOwner) are decoded from its
 *   account bytes.
 * - The history (getSignaturesForAddress, getTransaction) is the endpoint's record of what it
 *   executed: account keys, balances and SPL token balances read from litesvm before and after;
 *   fee = the lamports the transaction's accounts lost in all. System transfers are given parsed
 *   (what the scanner reads), other instructions raw; no inner instructions.
 * - Slots are the endpoint's counter (one per executed transaction, or moved by the test); the
 *   finalized tip follows the newest slot unless the test holds it.
 * - getFeeForMessage answers 5000 per signature (litesvm's fee; it has no such call).
 */
import { LiteSVM } from 'litesvm';
import { Message, PublicKey, VersionedTransaction } from '@solana/web3.js';
import { TOKEN_PROGRAM_ID, base58Encode } from '@wcs/adapter-solana';
import { formatUnits } from '@wcs/core';
import { startReplayServer, type ReplayServer } from '@wcs/core/testing';

export type SvmAddress = Parameters<LiteSVM['getBalance']>[0];
type Json = Record<string, unknown>;
export const svmAddress = (s: string): SvmAddress => s as SvmAddress;
const addr = svmAddress;
const SYSTEM = '11111111111111111111111111111111';

export interface Snapshot { lamports: bigint; owner: string; data: Buffer }
export interface Executed { slot: bigint; fee: bigint; keys: string[]; signers: number; writable: boolean[]; message: VersionedTransaction['message']; signatures: string[]; pre: Array<Snapshot | null>; post: Array<Snapshot | null> }

export interface SolanaNode extends ReplayServer {
  svm: LiteSVM;
  executed: Map<string, Executed>;
  /** Executes signed bytes as sendTransaction does; the signature or the runtime's refusal. */
  execute(raw: Uint8Array): { sig: string } | { error: string };
  slot(): bigint;
  /** Moves the slot counter (and an unheld tip) on by n empty slots. */
  advance(n: number): void;
  /** The finalized tip stays at `slot` until released. */
  holdTip(slot: bigint): void;
  releaseTip(): void;
}

export function snapshot(svm: LiteSVM, key: string): Snapshot | null {
  const a = svm.getAccount(addr(key)) as unknown as { exists: boolean; lamports: bigint; programAddress: unknown; data: Uint8Array };
  if (!a.exists) return null;
  return { lamports: BigInt(a.lamports), owner: String(a.programAddress), data: Buffer.from(a.data) };
}

/** An SPL Token account's (mint, owner, amount), or null. */
export function tokenAccount(s: Snapshot | null): { mint: string; owner: string; amount: bigint } | null {
  if (!s || s.owner !== TOKEN_PROGRAM_ID || s.data.length !== 165) return null;
  return { mint: new PublicKey(s.data.subarray(0, 32)).toBase58(), owner: new PublicKey(s.data.subarray(32, 64)).toBase58(), amount: s.data.readBigUInt64LE(64) };
}

export async function solanaNode(): Promise<SolanaNode> {
  const svm = new LiteSVM();
  const state = { slot: 7000n, held: null as bigint | null };
  const executed = new Map<string, Executed>();
  const order: string[] = [];
  const tip = () => state.held ?? state.slot;
  const ctx = () => ({ slot: Number(state.slot) });

  /** An account as getMultipleAccounts / getTokenAccountsByOwner (jsonParsed) give it. */
  const parsed = (key: string): Json | null => {
    const s = snapshot(svm, key);
    if (!s) return null;
    const common = { executable: false, lamports: Number(s.lamports), owner: s.owner, rentEpoch: 0, space: s.data.length };
    if (s.owner !== TOKEN_PROGRAM_ID) return { ...common, data: [s.data.toString('base64'), 'base64'] };
    if (s.data.length === 82) {
      return { ...common, data: { program: 'spl-token', space: 82, parsed: { type: 'mint', info: { decimals: s.data[44], isInitialized: s.data[45] === 1, supply: s.data.readBigUInt64LE(36).toString(), mintAuthority: null, freezeAuthority: null } } } };
    }
    const t = tokenAccount(s)!;
    const decimals = snapshot(svm, t.mint)?.data[44] ?? 0;
    return {
      ...common,
      data: { program: 'spl-token', space: 165, parsed: { type: 'account', info: { isNative: false, mint: t.mint, owner: t.owner, state: s.data[108] === 2 ? 'frozen' : 'initialized', tokenAmount: { amount: t.amount.toString(), decimals, uiAmountString: formatUnits(t.amount, decimals) } } } },
    };
  };

  const tokenBalances = (x: Executed, side: 'pre' | 'post') => x.keys.flatMap((_k, i) => {
    const t = tokenAccount(x[side][i]!);
    if (!t) return [];
    const decimals = snapshot(svm, t.mint)?.data[44] ?? 0;
    return [{ accountIndex: i, mint: t.mint, owner: t.owner, programId: TOKEN_PROGRAM_ID, uiTokenAmount: { amount: t.amount.toString(), decimals, uiAmount: null, uiAmountString: formatUnits(t.amount, decimals) } }];
  });

  /** getTransaction (json or jsonParsed): System transfers parsed, other instructions raw. */
  const transaction = (sig: string): Json | null => {
    const x = executed.get(sig);
    if (!x) return null;
    const instructions = x.message.compiledInstructions.map((ix) => {
      const programId = x.keys[ix.programIdIndex]!;
      const data = Buffer.from(ix.data);
      if (programId === SYSTEM && data.length === 12 && data.readUInt32LE(0) === 2) {
        return { program: 'system', programId, parsed: { type: 'transfer', info: { source: x.keys[ix.accountKeyIndexes[0]!], destination: x.keys[ix.accountKeyIndexes[1]!], lamports: Number(data.readBigUInt64LE(4)) } }, stackHeight: null };
      }
      return { programId, accounts: ix.accountKeyIndexes.map((i) => x.keys[i]), data: base58Encode(data), stackHeight: null };
    });
    return {
      slot: Number(x.slot), blockTime: null, version: 'legacy',
      meta: {
        err: null, status: { Ok: null }, fee: Number(x.fee), innerInstructions: [], logMessages: [],
        preBalances: x.pre.map((s) => Number(s?.lamports ?? 0n)), postBalances: x.post.map((s) => Number(s?.lamports ?? 0n)),
        preTokenBalances: tokenBalances(x, 'pre'), postTokenBalances: tokenBalances(x, 'post'),
      },
      transaction: {
        signatures: x.signatures,
        message: {
          accountKeys: x.keys.map((pubkey, i) => ({ pubkey, signer: i < x.signers, writable: x.writable[i], source: 'transaction' })),
          instructions, recentBlockhash: x.message.recentBlockhash,
        },
      },
    };
  };

  const execute = (raw: Uint8Array): { sig: string } | { error: string } => {
    const tx = VersionedTransaction.deserialize(raw);
    const sig = base58Encode(tx.signatures[0]!);
    if (executed.has(sig)) return { error: 'already processed' };
    const keys = tx.message.staticAccountKeys.map((k) => k.toBase58());
    const n = tx.message.header.numRequiredSignatures;
    const pre = keys.map((k) => snapshot(svm, k));
    const signatures = Object.fromEntries(keys.slice(0, n).map((k, i) => [k, tx.signatures[i]!]));
    const out = svm.sendTransaction({ messageBytes: tx.message.serialize(), signatures } as unknown as Parameters<LiteSVM['sendTransaction']>[0]);
    if (out.constructor.name !== 'TransactionMetadata') return { error: String(out) };
    const post = keys.map((k) => snapshot(svm, k));
    state.slot += 1n;
    const lost = pre.reduce((s, a) => s + (a?.lamports ?? 0n), 0n) - post.reduce((s, a) => s + (a?.lamports ?? 0n), 0n);
    const msg = tx.message as Message;
    executed.set(sig, {
      slot: state.slot, fee: lost, keys, signers: n, writable: keys.map((_k, i) => msg.isAccountWritable(i)), message: tx.message,
      signatures: tx.signatures.map((s) => base58Encode(s)), pre, post,
    });
    order.push(sig);
    return { sig };
  };

  const answer = (method: string, params: unknown[]): { result: unknown } | { error: unknown } => {
    switch (method) {
      case 'getLatestBlockhash': return { result: { context: ctx(), value: { blockhash: svm.latestBlockhash(), lastValidBlockHeight: Number(state.slot + 150n) } } };
      case 'getFeeForMessage': return { result: { context: ctx(), value: 5000 * Message.from(Buffer.from(params[0] as string, 'base64')).header.numRequiredSignatures } };
      case 'getMinimumBalanceForRentExemption': return { result: Number(svm.minimumBalanceForRentExemption(BigInt(params[0] as number))) };
      case 'getBalance': return { result: { context: ctx(), value: Number(svm.getBalance(addr(params[0] as string)) ?? 0n) } };
      case 'getMultipleAccounts': return { result: { context: ctx(), value: (params[0] as string[]).map(parsed) } };
      case 'getEpochInfo': return { result: { absoluteSlot: Number(state.slot), blockHeight: Number(state.slot), epoch: 0, slotIndex: Number(state.slot), slotsInEpoch: 432000 } };
      case 'getSlot': return { result: Number(tip()) };
      case 'getTokenAccountsByOwner': {
        const [owner, filter] = params as [string, { programId?: string }];
        // the owner's token accounts: every token account any executed transaction touched that it owns now
        const seen = new Set<string>();
        for (const x of executed.values()) for (const k of x.keys) seen.add(k);
        const value = filter.programId !== TOKEN_PROGRAM_ID ? [] : [...seen].filter((k) => tokenAccount(snapshot(svm, k))?.owner === owner).map((pubkey) => ({ pubkey, account: parsed(pubkey) }));
        return { result: { context: ctx(), value } };
      }
      case 'getSignaturesForAddress': {
        const [account, cfg] = params as [string, { limit?: number; before?: string }];
        let list = order.filter((s) => executed.get(s)!.slot <= tip() && executed.get(s)!.keys.includes(account)).reverse();
        if (cfg.before) list = list.slice(list.indexOf(cfg.before) + 1);
        return { result: list.slice(0, cfg.limit ?? 1000).map((signature) => ({ signature, slot: Number(executed.get(signature)!.slot), err: null, memo: null, blockTime: null, confirmationStatus: 'finalized' })) };
      }
      case 'getSignatureStatuses': {
        const value = (params[0] as string[]).map((sig) => {
          const x = executed.get(sig);
          return x ? { slot: Number(x.slot), confirmations: null, err: null, status: { Ok: null }, confirmationStatus: 'finalized' } : null;
        });
        return { result: { context: ctx(), value } };
      }
      case 'getTransaction': return { result: transaction(params[0] as string) };
      case 'sendTransaction': {
        const out = execute(Buffer.from(params[0] as string, 'base64'));
        if ('sig' in out) return { result: out.sig };
        if (out.error === 'already processed') return { error: { code: -32002, message: 'Transaction simulation failed: This transaction has already been processed', data: { err: 'AlreadyProcessed' } } };
        return { error: { code: -32002, message: `Transaction simulation failed: ${out.error}`.slice(0, 300), data: { err: out.error.slice(0, 100) } } };
      }
      default: return { error: { code: -32601, message: `Method not found: ${method}` } };
    }
  };

  const server = await startReplayServer((req) => {
    const body = JSON.parse(req.body) as Array<{ id: unknown; method: string; params?: unknown[] }> | { id: unknown; method: string; params?: unknown[] };
    const one = (c: { id: unknown; method: string; params?: unknown[] }) => ({ jsonrpc: '2.0', id: c.id, ...answer(c.method, c.params ?? []) });
    return { body: JSON.stringify(Array.isArray(body) ? body.map(one) : one(body)) };
  });
  return Object.assign(server, {
    svm, executed, execute,
    slot: () => state.slot,
    advance: (n: number) => {
      state.slot += BigInt(n);
    },
    holdTip: (slot: bigint) => {
      state.held = slot;
    },
    releaseTip: () => {
      state.held = null;
    },
  });
}
