import PQueue from 'p-queue';
import { paying } from '@wcs/core';
import type { BroadcastOutcome, ChainAdapter, KeyRef, KeyStore, SignedTransaction, TransactionState, TransferInput, TransferIntent, TransferNode, UnsignedTransfer } from '@wcs/core';

/** Parallel requests to a node without the set-based TransferNode forms. */
const NODE_CONCURRENCY = 8;

export function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/** The node's set-based forms where it has them, else the single calls (NODE_CONCURRENCY at a time). */
export async function transferInputs(node: TransferNode, requests: readonly TransferIntent[]): Promise<Array<TransferInput | Error>> {
  if (requests.length === 0) return [];
  if (node.transferInputs) return node.transferInputs(requests);
  const queue = new PQueue({ concurrency: NODE_CONCURRENCY });
  return Promise.all(requests.map((r) => queue.add(() => node.transferInput(r).catch(asError))));
}

export async function statusAll(node: TransferNode, hashes: readonly string[], inputs: ReadonlyArray<TransferInput | undefined>): Promise<Array<TransactionState | Error>> {
  if (hashes.length === 0) return [];
  if (node.statusMany) return node.statusMany(hashes, inputs);
  const queue = new PQueue({ concurrency: NODE_CONCURRENCY });
  return Promise.all(hashes.map((h, i) => queue.add(() => node.status(h, inputs[i]).catch(asError))));
}

/** Without broadcastMany: one at a time, in the order given (sequence order), as such nodes want them. */
export async function broadcastAll(node: TransferNode, txs: readonly SignedTransaction[]): Promise<Array<BroadcastOutcome | Error>> {
  if (txs.length === 0) return [];
  if (node.broadcastMany) return node.broadcastMany(txs);
  const out: Array<BroadcastOutcome | Error> = [];
  for (const tx of txs) out.push(await node.broadcast(tx).catch(asError));
  return out;
}

/**
 * Only the KeyStore signs: each payload the adapter crafted, by the key of the address the
 * adapter names for it (`signers`; absent: all by `from`), then the adapter combines.
 */
export async function signTransfer(adapter: ChainAdapter, keyStore: KeyStore, keys: ReadonlyMap<string, KeyRef>, from: string, unsigned: UnsignedTransfer): Promise<SignedTransaction> {
  const signatures = [];
  for (const [i, p] of unsigned.payloads.entries()) {
    const signer = unsigned.signers?.[i] ?? from;
    const ref = keys.get(signer);
    if (!ref) throw new Error(`${adapter.chain.code}: payload ${i} is to be signed by ${signer}, a key this transfer does not hold`);
    signatures.push(await keyStore.sign(ref, p));
  }
  return paying(adapter).transfers.combine(unsigned, signatures);
}

/** Balances of many (address, contract) pairs: the node's set-based form where it has one, else the single calls (NODE_CONCURRENCY at a time). */
export async function balancesAll(node: TransferNode, pairs: ReadonlyArray<{ readonly address: string; readonly contract: string | null }>): Promise<Array<bigint | Error>> {
  if (pairs.length === 0) return [];
  if (node.balances) return node.balances(pairs);
  const queue = new PQueue({ concurrency: NODE_CONCURRENCY });
  return Promise.all(pairs.map((p) => queue.add(() => node.balance(p.address, p.contract).catch(asError))));
}
