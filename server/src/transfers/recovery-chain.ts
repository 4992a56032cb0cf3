import { JsonRpcClient, type ChainEndpoint, type Outpoint } from '@wcs/core';
import { bitcoinRpc, btcToSats } from '@wcs/adapter-bitcoin';
import type { SenderPlan } from './recovery';

// ---------------------------------------------------------------------------------------------
// What the recovery records of a chain's transaction beyond the plan (recovery-apply.ts), read
// from the node before the recording transaction (node calls are never made under row locks).

/** One transaction of a plan as the node gives it. */
export interface ChainTxDetail {
  /** The raw transaction (what a re-send after a reorg sends again); null where it is not read. */
  readonly raw: Buffer | null;
  /** EVM: the most it can cost (gas × fee cap, as a signing records); Bitcoin: its fee (inputs − outputs). Null: not read. */
  readonly fee: bigint | null;
  /** Utxo chains: the outputs it spends (the ledger marks them spent); empty elsewhere. */
  readonly spends: readonly Outpoint[];
}

const TXID_RE = /^[0-9a-f]{64}$/;

/**
 * The plan's transactions as the node gives them: EVM (the matched ones): the raw bytes
 * (eth_getRawTransactionByHash) and gas × fee cap; Bitcoin (matched and unmatched on chain):
 * the raw bytes and spent outputs (getrawtransaction, verbose), and for the matched ones the fee
 * (the spent outputs' values, read from their transactions, less the outputs). Other chains, or
 * no endpoint: nothing (the attempt is recorded without bytes).
 */
export async function readChainTxs(plan: SenderPlan, endpoints: ReadonlyMap<string, ChainEndpoint>): Promise<Map<string, ChainTxDetail>> {
  const out = new Map<string, ChainTxDetail>();
  const endpoint = endpoints.get(`${plan.chain.environment}:${plan.chain.code}`);
  if (!endpoint) return out;
  if (plan.chain.family === 'evm') {
    const rpc = new JsonRpcClient(endpoint);
    for (const m of plan.matched) {
      const h = m.tx.txHash;
      const raw = await rpc.call<string | null>('eth_getRawTransactionByHash', [h]);
      const tx = await rpc.call<{ gas: string; gasPrice?: string; maxFeePerGas?: string } | null>('eth_getTransactionByHash', [h]);
      if (!raw || !tx) continue;
      out.set(h, { raw: Buffer.from(raw.replace(/^0x/, ''), 'hex'), fee: BigInt(tx.gas) * BigInt(tx.maxFeePerGas ?? tx.gasPrice ?? '0x0'), spends: [] });
    }
  } else if (plan.chain.family === 'bitcoin') {
    const rpc = bitcoinRpc(endpoint);
    const matched = new Set(plan.matched.map((m) => m.tx.txHash));
    for (const h of [...matched, ...plan.unmatchedOnChain.map((t) => t.txHash)]) {
      const tx = await verboseTx(rpc, h);
      out.set(h, { raw: Buffer.from(tx.hex, 'hex'), fee: matched.has(h) ? await bitcoinFee(rpc, tx) : null, spends: tx.spends });
    }
  }
  return out;
}

interface VerboseTx { readonly hex: string; readonly spends: readonly Outpoint[]; readonly outputs: readonly bigint[] }

/** getrawtransaction <txid> true (bitcoind and bcoin): its hex, the outputs it spends, its outputs' values. */
async function verboseTx(rpc: JsonRpcClient, txid: string): Promise<VerboseTx> {
  const t = await rpc.call<{ hex?: unknown; vin?: unknown; vout?: unknown } | null>('getrawtransaction', [txid, true]);
  const bad = () => new Error(`getrawtransaction ${txid}: the node's answer is not a verbose transaction`);
  if (t === null || typeof t !== 'object' || typeof t.hex !== 'string' || !Array.isArray(t.vin) || !Array.isArray(t.vout)) throw bad();
  const spends: Outpoint[] = [];
  for (const i of t.vin as Array<{ txid?: unknown; vout?: unknown }>) {
    if (typeof i?.txid !== 'string' || !TXID_RE.test(i.txid) || !Number.isInteger(i.vout)) throw bad(); // a coinbase is never the sender's
    spends.push({ txHash: i.txid, vout: i.vout as number });
  }
  const outputs = (t.vout as Array<{ value?: unknown }>).map((o) => {
    const sats = btcToSats(o?.value);
    if (sats === null) throw bad();
    return sats;
  });
  return { hex: t.hex, spends, outputs };
}

/** The spent outputs' values (from their own transactions) less the transaction's outputs. */
async function bitcoinFee(rpc: JsonRpcClient, tx: VerboseTx): Promise<bigint> {
  const prevs = new Map<string, VerboseTx>();
  for (const s of tx.spends) if (!prevs.has(s.txHash)) prevs.set(s.txHash, await verboseTx(rpc, s.txHash));
  let fee = 0n;
  for (const s of tx.spends) {
    const v = prevs.get(s.txHash)!.outputs[s.vout];
    if (v === undefined) throw new Error(`getrawtransaction ${s.txHash}: no output ${s.vout}`);
    fee += v;
  }
  for (const v of tx.outputs) fee -= v;
  return fee;
}
