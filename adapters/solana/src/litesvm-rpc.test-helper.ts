/**
 * Test-only (loaded by *.test.ts, never by index.ts): a Solana JSON-RPC endpoint whose answers come
 * from litesvm (the real runtime, in process), for the transfer node and the history scanner.
 *
 * sendTransaction executes the bytes (a failure is answered as a preflight failure, -32002 with
 * data.err); each executed transaction takes the next slot and is `confirmed` (statuses, balances,
 * getTransaction at confirmed) until finalize(), which makes everything executed `finalized` (what
 * getSlot, getSignaturesForAddress and getTransaction at finalized see). meta.fee is measured as
 * the lamports the transaction's accounts lost in all. Test-made: getFeeForMessage answers 5000
 * per signature of the message (litesvm's fee per signature; it has no such call); slots are a
 * counter; system-program transfers are the only instructions jsonParsed parses, there are no
 * inner instructions and no token balances; getTokenAccountsByOwner lists nothing (litesvm has no
 * owner index: an endpoint for SOL-only ledgers). getMultipleAccounts answers the runtime's
 * accounts now (base64, dataSlice honoured) at the finalized slot, -32016 below minContextSlot.
 * Other methods: -32601.
 */
import { LiteSVM } from 'litesvm';
import { Message, VersionedTransaction } from '@solana/web3.js';
import { startReplayServer, type ReplayServer, type SeenRequest } from '@wcs/core/testing';
import { SYSTEM_PROGRAM_ID } from './scanner';
import { base58Encode } from './transfer';

type Json = Record<string, any>;
type Address = Parameters<LiteSVM['getBalance']>[0];
const addr = (s: string): Address => s as Address;

/** One JSON-RPC call as the endpoint reads it. */
export interface RpcCall {
  readonly id: number;
  readonly method: string;
  readonly params: any[];
}

/**
 * litesvm takes @solana/kit's transaction shape: the message bytes and the signatures by signer,
 * in the message's signer order (kit encodes them in the record's order).
 */
export function sendRaw(svm: LiteSVM, raw: Uint8Array) {
  const tx = VersionedTransaction.deserialize(raw);
  const n = tx.message.header.numRequiredSignatures;
  const signatures = Object.fromEntries(tx.message.staticAccountKeys.slice(0, n).map((k, i) => [k.toBase58(), tx.signatures[i]!]));
  return svm.sendTransaction({ messageBytes: tx.message.serialize(), signatures } as unknown as Parameters<LiteSVM['sendTransaction']>[0]);
}

interface Executed {
  readonly signature: string;
  readonly slot: number;
  readonly tx: VersionedTransaction;
  readonly keys: readonly string[];
  readonly pre: readonly bigint[];
  readonly post: readonly bigint[];
  finalized: boolean;
}

const result = (value: unknown, c: RpcCall): Json => ({ jsonrpc: '2.0', result: value, id: c.id });
const failure = (error: Json, c: RpcCall): Json => ({ jsonrpc: '2.0', error, id: c.id });

export class LitesvmRpc {
  /** The slot of the last transaction executed (or of the start). */
  private slot = 1000;
  private finalizedSlot = 1000;
  private readonly executed = new Map<string, Executed>();

  constructor(readonly svm: LiteSVM) {}

  lamportsOf(address: string): bigint {
    return this.svm.getBalance(addr(address)) ?? 0n;
  }

  /** Everything executed so far becomes finalized. */
  finalize(): void {
    for (const e of this.executed.values()) e.finalized = true;
    this.finalizedSlot = this.slot;
  }

  /** Executes raw transaction bytes as sendTransaction does: the signature, or the runtime's failure as a node error. */
  send(raw: Uint8Array): { signature: string } | { error: Json } {
    const tx = VersionedTransaction.deserialize(raw);
    const keys = tx.message.staticAccountKeys.map((k) => k.toBase58());
    const pre = keys.map((k) => this.lamportsOf(k));
    const out = sendRaw(this.svm, raw);
    if (out.constructor.name !== 'TransactionMetadata') {
      const err = (out as { err(): unknown }).err();
      return { error: { code: -32002, message: `Transaction simulation failed: ${String(out)}`.slice(0, 300), data: { err: String(err) } } };
    }
    this.slot += 1;
    const signature = base58Encode(tx.signatures[0]!);
    this.executed.set(signature, { signature, slot: this.slot, tx, keys, pre, post: keys.map((k) => this.lamportsOf(k)), finalized: false });
    return { signature };
  }

  /** One call's answer (a JSON-RPC response object). */
  answer(c: RpcCall): Json {
    const slot = this.slot;
    switch (c.method) {
      case 'getLatestBlockhash': return result({ context: { slot }, value: { blockhash: this.svm.latestBlockhash(), lastValidBlockHeight: slot + 150 } }, c);
      case 'getFeeForMessage': return result({ context: { slot }, value: 5000 * Message.from(Buffer.from(c.params[0], 'base64')).header.numRequiredSignatures }, c);
      case 'getMinimumBalanceForRentExemption': return result(Number(this.svm.minimumBalanceForRentExemption(BigInt(c.params[0]))), c);
      case 'getBalance': return result({ context: { slot }, value: Number(this.lamportsOf(c.params[0])) }, c);
      case 'getEpochInfo': return result({ absoluteSlot: slot, blockHeight: slot, epoch: 0, slotIndex: slot, slotsInEpoch: 432000 }, c);
      case 'getSlot': return result(c.params[0]?.commitment === 'finalized' ? this.finalizedSlot : slot, c);
      case 'sendTransaction': {
        const sent = this.send(Buffer.from(c.params[0], 'base64'));
        return 'error' in sent ? failure(sent.error, c) : result(sent.signature, c);
      }
      case 'getSignatureStatuses': return result({ context: { slot }, value: (c.params[0] as string[]).map((sig) => {
        const x = this.executed.get(sig);
        return x ? { slot: x.slot, confirmations: x.finalized ? null : 1, err: null, status: { Ok: null }, confirmationStatus: x.finalized ? 'finalized' : 'confirmed' } : null;
      }) }, c);
      case 'getTransaction': {
        const x = this.executed.get(c.params[0]);
        const visible = x && (x.finalized || c.params[1]?.commitment !== 'finalized');
        return result(visible ? this.transaction(x, c.params[1]?.encoding === 'jsonParsed') : null, c);
      }
      case 'getSignaturesForAddress': {
        const [address, cfg = {}] = c.params as [string, Json | undefined];
        let list = [...this.executed.values()]
          .filter((x) => x.keys.includes(address) && (x.finalized || cfg.commitment !== 'finalized'))
          .sort((a, b) => b.slot - a.slot);
        if (cfg.before) list = list.slice(list.findIndex((x) => x.signature === cfg.before) + 1);
        if (cfg.until) { const u = list.findIndex((x) => x.signature === cfg.until); if (u >= 0) list = list.slice(0, u); }
        return result(list.slice(0, cfg.limit ?? 1000).map((x) => ({
          signature: x.signature, slot: x.slot, err: null, memo: null, blockTime: null, confirmationStatus: x.finalized ? 'finalized' : 'confirmed',
        })), c);
      }
      case 'getTokenAccountsByOwner': return result({ context: { slot }, value: [] }, c);
      case 'getMultipleAccounts': return this.multipleAccounts(c);
      default: return failure({ code: -32601, message: `Method not found: ${c.method}` }, c);
    }
  }

  /** getMultipleAccounts (base64 only): the runtime's accounts, context.slot the finalized slot. */
  private multipleAccounts(c: RpcCall): Json {
    const [keys, cfg = {}] = c.params as [string[], Json | undefined];
    const slot = this.finalizedSlot;
    if (typeof cfg.minContextSlot === 'number' && cfg.minContextSlot > slot) return failure({ code: -32016, message: 'Minimum context slot has not been reached', data: { contextSlot: slot } }, c);
    if (cfg.encoding !== 'base64') return failure({ code: -32602, message: 'this test endpoint answers getMultipleAccounts in base64 only' }, c);
    return result({ context: { slot }, value: keys.map((k) => {
      const a = this.svm.getAccount(addr(k));
      if (!a.exists) return null;
      let data = Buffer.from(a.data);
      if (cfg.dataSlice) data = data.subarray(cfg.dataSlice.offset, cfg.dataSlice.offset + cfg.dataSlice.length);
      return { lamports: Number(a.lamports), owner: String(a.programAddress), executable: a.executable, rentEpoch: 0, space: a.data.length, data: [data.toString('base64'), 'base64'] };
    }) }, c);
  }

  /** A getTransaction result (encoding json, or jsonParsed with system transfers parsed). */
  private transaction(x: Executed, parsed: boolean): Json {
    const m = x.tx.message;
    const n = m.header.numRequiredSignatures;
    const fee = x.pre.reduce((s, v) => s + v, 0n) - x.post.reduce((s, v) => s + v, 0n);
    const instructions = m.compiledInstructions.map((ix) => {
      if (!parsed) return { programIdIndex: ix.programIdIndex, accounts: ix.accountKeyIndexes, data: base58Encode(ix.data) };
      const programId = x.keys[ix.programIdIndex]!;
      const accounts = ix.accountKeyIndexes.map((i) => x.keys[i]!);
      const data = Buffer.from(ix.data);
      if (programId === SYSTEM_PROGRAM_ID && data.length === 12 && data.readUInt32LE(0) === 2) {
        return { program: 'system', programId, parsed: { type: 'transfer', info: { source: accounts[0], destination: accounts[1], lamports: Number(data.readBigUInt64LE(4)) } }, stackHeight: null };
      }
      return { programId, accounts, data: base58Encode(data), stackHeight: null };
    });
    const accountKeys = parsed
      ? x.keys.map((pubkey, i) => ({ pubkey, signer: i < n, writable: m.isAccountWritable(i), source: 'transaction' }))
      : x.keys;
    return {
      slot: x.slot, blockTime: null,
      meta: {
        err: null, status: { Ok: null }, fee: Number(fee), preBalances: x.pre.map(Number), postBalances: x.post.map(Number),
        innerInstructions: [], preTokenBalances: [], postTokenBalances: [], logMessages: [],
      },
      transaction: { signatures: x.tx.signatures.map((s) => base58Encode(s)), message: { accountKeys, recentBlockhash: m.recentBlockhash, instructions } },
      version: 'legacy',
    };
  }
}

/** The endpoint served over HTTP (single calls and batches). */
export function serveLitesvmRpc(rpc: LitesvmRpc): Promise<ReplayServer> {
  return startReplayServer((req: SeenRequest) => {
    const body = JSON.parse(req.body) as RpcCall | RpcCall[];
    return { body: JSON.stringify(Array.isArray(body) ? body.map((c) => rpc.answer(c)) : rpc.answer(body)) };
  });
}
