/**
 * Benchmark: BTC consolidation size on a bcoin regtest node. How many virtual bytes the
 * consolidations the adapter crafts take, and how many it charges the fee for, against the least
 * any transaction with the same inputs and output can take. One run, one figure per transaction:
 *
 * - 50 deposit keys (random secp256k1 private keys held in memory by this script, @noble/curves;
 *   not the service's key store) and their P2WPKH regtest addresses ("rb1q…"), funded by the
 *   node's wallet with one or two outputs each (two sendmany transactions: every key, then every
 *   other key), mined.
 * - Their outputs (as BitcoinTransferNode.unspentOutputs lists them) consolidated in chunks of at
 *   most BENCH_CONSOLIDATION_MAX_INPUTS inputs (default 200) to one hot P2WPKH address: each chunk
 *   crafted by BitcoinTransferCrafter.craft (subtractFee, each input with its owner, the fee rate
 *   of BitcoinTransferNode.transferInput), each payload signed by its owner's key, combined,
 *   broadcast through BitcoinTransferNode, then mined.
 * - Per mined transaction: its actual vsize (the raw transaction the node returns, decoded:
 *   ⌈weight / 4⌉), the vsize charged (consolidationVsize, what maxFee pays for) and the baseline,
 *   the minimum vsize of a transaction with those inputs and one P2WPKH output, every signature at
 *   the shortest size standard signers produce (71 bytes with the sighash byte; see minVsize).
 *   Goal: actual / minimum and charged / minimum at most 1.02x. Checked: fee paid (inputs −
 *   output) = maxFee, the status() fee too, one output to the hot address, every input its
 *   owner's key.
 *
 *   npm run bench:consolidation              (from the repository root)
 *   BENCH_CONSOLIDATION_MAX_INPUTS=20 node bench/dist/consolidation.js
 */
import { secp256k1 } from '@noble/curves/secp256k1';
import { Transaction } from 'bitcoinjs-lib';
import { paying, type ChainDefinition, type KeySignature, type PublicKey, type SpendableOutput, type UtxoConsolidationRequest } from '@wcs/core';
import { addressScript, BitcoinTransferCrafter, BitcoinTransferNode, consolidationVsize, plugin, resolveNetwork } from '@wcs/adapter-bitcoin';
import { startRegtest } from '@wcs/adapter-bitcoin/regtest';
import { CleanupStack, runMain } from './lib/processes';
import { fmtInt, machineInfo, machineLine, out, printFailures, progress, table, writeResults } from './lib/report';
import { boolEnv, intEnv } from './lib/settings';

const GOAL_RATIO = 1.02;
const KEYS = 50;
/** A regtest chain like the bcoin test node's (bech32 hrp "rb"). */
const CHAIN: ChainDefinition = {
  id: 901, code: 'BTC', name: 'Bitcoin Regtest (bcoin)', family: 'bitcoin', environment: 'test', network: 'regtest', curve: 'secp256k1', addressing: 'hd',
  nativeSymbol: 'BTC', decimals: 8, confirmations: 1, evmChainId: null, options: { bech32Hrp: 'rb' },
};

/** Bytes of a Bitcoin CompactSize integer. */
const varintLen = (n: number) => (n < 0xfd ? 1 : n <= 0xffff ? 3 : 5);

/**
 * The physical limit: weight and vsize of a transaction spending n P2WPKH inputs to one P2WPKH
 * output, every signature `sigLen` bytes with the sighash byte (71: a DER signature with 32-byte r
 * and s, the shortest standard signers make; Bitcoin Core grinds r to be low so its signatures
 * are 71 bytes, signers without that grinding make 72 bytes half of the time):
 *
 *   non-witness bytes = 4 version + varint(n) + 41·n (outpoint 36, empty scriptSig 1, sequence 4)
 *                       + 1 output count + 31 output (value 8, script length 1, script 22) + 4 locktime
 *   witness bytes     = 2 marker and flag + n·(1 item count + 1 + sigLen + 1 + 33 key)
 *   weight            = 4 × non-witness + witness;  vsize = ⌈weight / 4⌉
 *
 * With sigLen 71 and n ≤ 252: weight = 166 + 271·n, vsize = ⌈(166 + 271·n) / 4⌉. (A signature is
 * 70 bytes or less about once in 256, so a real transaction can be a weight unit or so below it.)
 */
function minWeight(n: number, sigLen = 71): number {
  const base = 4 + varintLen(n) + 41 * n + 1 + 31 + 4;
  const witness = 2 + n * (1 + 1 + sigLen + 1 + 33);
  return 4 * base + witness;
}
const minVsize = (n: number) => Math.ceil(minWeight(n) / 4);

interface Key { priv: Uint8Array; publicKey: PublicKey; address: string }

interface TxFigure {
  txid: string;
  inputs: number;
  keys: number;
  sig72: number;
  sig71: number;
  sigShorter: number;
  actualWeight: number;
  actualVsize: number;
  chargedVsize: number;
  minVsize: number;
  actualOverMin: number;
  chargedOverMin: number;
  chargedOverActual: number;
  inputSats: string;
  outputSats: string;
  feePaid: string;
  maxFee: string;
  feeRate: string;
}

async function main(): Promise<number> {
  const maxInputs = intEnv('BENCH_CONSOLIDATION_MAX_INPUTS', 200, 1, 1469);
  const enforce = boolEnv('BENCH_ENFORCE_GOAL');
  const machine = machineInfo();
  const cleanup = new CleanupStack();
  const failures: string[] = [];
  const adapter = paying(plugin.create(CHAIN));
  const network = resolveNetwork(CHAIN);
  const crafter = adapter.transfers;
  if (!(crafter instanceof BitcoinTransferCrafter)) throw new Error(`${CHAIN.code}: the adapter's crafter is not a BitcoinTransferCrafter`);
  try {
    out(`BTC consolidation size on a bcoin regtest node: ${KEYS} deposit keys (in memory, @noble/curves), their outputs consolidated to one hot P2WPKH address, at most ${maxInputs} inputs a transaction`);
    out(machineLine(machine));
    progress('starting the bcoin regtest node (432 blocks to its wallet: segwit active)');
    const node = await startRegtest();
    cleanup.push('stop the regtest node', () => node.stop());
    const transfers = adapter.createTransferNode({ url: node.url });
    if (!(transfers instanceof BitcoinTransferNode)) throw new Error(`${CHAIN.code}: the adapter's transfer node is not a BitcoinTransferNode`);

    const newKey = (): Key => {
      const priv = secp256k1.utils.randomPrivateKey();
      const publicKey: PublicKey = { curve: 'secp256k1', bytes: secp256k1.getPublicKey(priv, true) };
      return { priv, publicKey, address: adapter.address.addressFromPublicKey(publicKey) };
    };
    const deposits = Array.from({ length: KEYS }, newKey);
    const hot = newKey();
    const byAddress = new Map(deposits.map((k) => [k.address, k]));

    progress(`funding ${KEYS} deposit addresses (sendmany: every key, then every other key), mining`);
    const first = deposits.map((k, i) => ({ address: k.address, sats: 100_000n + 1_000n * BigInt(i) }));
    const second = deposits.filter((_k, i) => i % 2 === 0).map((k, i) => ({ address: k.address, sats: 30_000n + 7n * BigInt(i) }));
    await node.sendMany(first);
    await node.sendMany(second);
    await node.mine(1);

    const all: SpendableOutput[] = [];
    for (const k of deposits) {
      const listed = await transfers.unspentOutputs(k.address);
      for (const { txHash, vout, amount } of listed) all.push({ txHash, vout, amount, owner: { address: k.address, publicKey: k.publicKey } });
    }
    const expected = first.length + second.length;
    if (all.length !== expected) failures.push(`unspentOutputs listed ${all.length} deposit outputs, ${expected} were sent`);
    out(`${fmtInt(all.length)} deposit outputs (${first.length} keys with one, ${second.length} with two), hot address ${hot.address}`);

    // ------------------------------------------------------------ craft, sign, broadcast
    const chunks: SpendableOutput[][] = [];
    for (let i = 0; i < all.length; i += maxInputs) chunks.push(all.slice(i, i + maxInputs));
    progress(`crafting, signing and broadcasting ${chunks.length} consolidation(s)`);
    const sent: Array<{ txHash: string; maxFee: bigint; inputs: SpendableOutput[]; feeRate: string }> = [];
    for (const inputs of chunks) {
      const fromKey = byAddress.get(inputs[0]!.owner!.address)!;
      const amount = inputs.reduce((s, o) => s + o.amount, 0n);
      const req: UtxoConsolidationRequest = { from: fromKey.address, fromPublicKey: fromKey.publicKey, to: hot.address, memo: null, contract: null, amount, inputs, subtractFee: true };
      const input = await transfers.transferInput(req);
      const crafted = crafter.craft(req, input);
      // A consolidation's amount is the sum of its inputs: a shortfall here is a bug, not a result to report.
      if (!crafted.ok) throw new Error(`craft of a consolidation of ${inputs.length} inputs (${amount} sat) answered ${crafted.reason}: ${crafted.shortfall} sat short`);
      const unsigned = crafted.unsigned;
      if (unsigned.maxFee !== crafter.consolidationFee(inputs.length, input)) failures.push(`${unsigned.txHash}: maxFee ${unsigned.maxFee} is not consolidationFee(${inputs.length}) ${crafter.consolidationFee(inputs.length, input)}`);
      const sigs: KeySignature[] = unsigned.payloads.map((payload, i) => {
        const signer = byAddress.get(unsigned.signers![i]!);
        if (!signer) throw new Error(`no key for signer ${i} (${unsigned.signers![i]})`);
        const sig = secp256k1.sign(payload, signer.priv, { lowS: true });
        return { curve: 'secp256k1', bytes: sig.toCompactRawBytes(), recovery: sig.recovery };
      });
      const signed = crafter.combine(unsigned, sigs);
      const outcome = await transfers.broadcast(signed);
      if (outcome.outcome !== 'ACCEPTED') throw new Error(`broadcast of ${signed.txHash} (${inputs.length} inputs): ${JSON.stringify(outcome)}`);
      sent.push({ txHash: signed.txHash, maxFee: unsigned.maxFee, inputs, feeRate: String(input['feeRate']) });
    }
    const [block] = await node.mine(1);

    // ------------------------------------------------------------ measure the mined transactions
    const hotScript = Buffer.from(addressScript(hot.address, network)).toString('hex');
    const figures: TxFigure[] = [];
    for (const s of sent) {
      const v = await node.rpc<{ hex: string; blockhash: string | null }>('getrawtransaction', [s.txHash, 1]);
      if (v.blockhash !== block) failures.push(`${s.txHash}: in block ${v.blockhash}, not the one mined (${block})`);
      const st = await transfers.status(s.txHash);
      if (st.state !== 'MINED' || !st.succeeded || st.fee !== s.maxFee) failures.push(`${s.txHash}: status ${JSON.stringify(st, (_k, x) => (typeof x === 'bigint' ? x.toString() : x))}, expected MINED with fee ${s.maxFee}`);
      const tx = Transaction.fromHex(v.hex);
      if (tx.getId() !== s.txHash) failures.push(`${s.txHash}: the node returned ${tx.getId()}`);
      const n = tx.ins.length;
      if (n !== s.inputs.length) failures.push(`${s.txHash}: ${n} inputs, ${s.inputs.length} crafted`);
      if (tx.outs.length !== 1 || Buffer.from(tx.outs[0]!.script).toString('hex') !== hotScript) failures.push(`${s.txHash}: outputs are not one to the hot address`);
      const inSats = s.inputs.reduce((a, o) => a + o.amount, 0n);
      const outSats = tx.outs.reduce((a, o) => a + BigInt(o.value), 0n);
      const feePaid = inSats - outSats;
      if (feePaid !== s.maxFee) failures.push(`${s.txHash}: fee paid ${feePaid} (inputs − output) ≠ maxFee ${s.maxFee}`);
      tx.ins.forEach((x, i) => {
        const owner = s.inputs[i]!.owner!;
        if (Buffer.from(x.witness[1] ?? []).toString('hex') !== Buffer.from(owner.publicKey.bytes).toString('hex')) failures.push(`${s.txHash} input ${i}: witness key is not its owner's`);
      });
      const sigLens = tx.ins.map((x) => x.witness[0]!.length);
      const weight = tx.weight();
      const actual = Math.ceil(weight / 4);
      if (actual !== tx.virtualSize()) failures.push(`${s.txHash}: ⌈weight/4⌉ ${actual} ≠ bitcoinjs virtualSize ${tx.virtualSize()}`);
      const charged = consolidationVsize(n);
      const min = minVsize(n);
      // The crafter's own account of the real size: worst case less a weight unit per byte a signature is under 72.
      const shorter = sigLens.reduce((a, l) => a + 72 - l, 0);
      const worstWeight = (n <= 252 ? 166 : 174) + 272 * n;
      if (weight !== worstWeight - shorter) failures.push(`${s.txHash}: weight ${weight} ≠ worst case − ${shorter}`);
      figures.push({
        txid: s.txHash, inputs: n, keys: new Set(s.inputs.map((o) => o.owner!.address)).size,
        sig72: sigLens.filter((l) => l === 72).length, sig71: sigLens.filter((l) => l === 71).length, sigShorter: sigLens.filter((l) => l < 71).length,
        actualWeight: weight, actualVsize: actual, chargedVsize: charged, minVsize: min,
        actualOverMin: actual / min, chargedOverMin: charged / min, chargedOverActual: charged / actual,
        inputSats: inSats.toString(), outputSats: outSats.toString(), feePaid: feePaid.toString(), maxFee: s.maxFee.toString(), feeRate: s.feeRate,
      });
    }
    for (const k of deposits) {
      const left = await transfers.unspentOutputs(k.address);
      if (left.length) failures.push(`${k.address}: ${left.length} outputs left after the consolidation`);
    }

    // ------------------------------------------------------------ report
    const tot = (f: (x: TxFigure) => number) => figures.reduce((a, x) => a + f(x), 0);
    const sumActual = tot((x) => x.actualVsize);
    const sumCharged = tot((x) => x.chargedVsize);
    const sumMin = tot((x) => x.minVsize);
    const worstActual = Math.max(...figures.map((x) => x.actualOverMin));
    const worstCharged = Math.max(...figures.map((x) => x.chargedOverMin));
    out('');
    out(`per transaction (mined in block ${block}; fee rate ${figures[0]?.feeRate ?? '-'} sat/vB from transferInput, the regtest fallback):`);
    out('  minimum = the same inputs and one P2WPKH output, every signature 71 bytes with the sighash byte: ⌈(166 + 271·n) / 4⌉ vB for n ≤ 252');
    out('  charged = consolidationVsize(n), every signature at 72 bytes: 42 + 68·n vB (n ≤ 252), what maxFee pays for');
    out(table(
      ['tx', 'inputs', 'keys', 'sigs 72/71/<71 B', 'actual vB', 'charged vB', 'minimum vB', 'actual/min', 'charged/min', 'fee paid', '= maxFee'],
      figures.map((x) => [
        x.txid.slice(0, 12), String(x.inputs), String(x.keys), `${x.sig72}/${x.sig71}/${x.sigShorter}`, fmtInt(x.actualVsize), fmtInt(x.chargedVsize), fmtInt(x.minVsize),
        `${x.actualOverMin.toFixed(4)}x`, `${x.chargedOverMin.toFixed(4)}x`, `${fmtInt(Number(x.feePaid))} sat`, x.feePaid === x.maxFee ? 'yes' : 'NO',
      ]).concat([[
        'all', String(tot((x) => x.inputs)), String(KEYS), `${tot((x) => x.sig72)}/${tot((x) => x.sig71)}/${tot((x) => x.sigShorter)}`, fmtInt(sumActual), fmtInt(sumCharged), fmtInt(sumMin),
        `${(sumActual / sumMin).toFixed(4)}x`, `${(sumCharged / sumMin).toFixed(4)}x`, `${fmtInt(tot((x) => Number(x.feePaid)))} sat`, figures.every((x) => x.feePaid === x.maxFee) ? 'yes' : 'NO',
      ]]),
      [false, true, true, true, true, true, true, true, true, true, false],
    ));
    out(`baseline (the physical limit, same run): ${fmtInt(sumMin)} vB for these ${figures.length} transaction(s) = 1.0000x`);
    out('');
    const met = worstActual <= GOAL_RATIO && worstCharged <= GOAL_RATIO;
    out(`goal vsize <= ${GOAL_RATIO}x the minimum: actual worst ${worstActual.toFixed(4)}x, charged worst ${worstCharged.toFixed(4)}x (all: ${(sumActual / sumMin).toFixed(4)}x, ${(sumCharged / sumMin).toFixed(4)}x), ${met ? 'met' : 'not met'}`);
    printFailures(out, failures);
    const resultsFile = writeResults('consolidation.json', {
      benchmark: 'consolidation', date: new Date().toISOString(), machine,
      settings: { keys: KEYS, outputs: all.length, maxInputs, keySource: 'random private keys in memory (@noble/curves secp256k1)', signatures: '@noble/curves RFC 6979, low S, no low-R grinding' },
      formulas: {
        minimum: 'ceil((4*(4 + varint(n) + 41n + 1 + 31 + 4) + 2 + n*(1 + 1+71 + 1+33)) / 4) = ceil((166 + 271n)/4) for n <= 252',
        charged: 'consolidationVsize(n) = 42 + 68n (n <= 252), 44 + 68n above',
      },
      transactions: figures,
      totals: { actualVsize: sumActual, chargedVsize: sumCharged, minVsize: sumMin, actualOverMin: sumActual / sumMin, chargedOverMin: sumCharged / sumMin },
      goal: { ratio: GOAL_RATIO, worstActualOverMin: worstActual, worstChargedOverMin: worstCharged, met },
      correctness: { ok: failures.length === 0, failures },
    });
    out(`results: ${resultsFile}`);
    if (failures.length) return 1;
    if (enforce && !met) return 1;
    return 0;
  } finally {
    await cleanup.run();
  }
}

runMain(main);
