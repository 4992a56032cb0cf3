import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { address as btcAddress, crypto as btcCrypto, Psbt, Transaction } from 'bitcoinjs-lib';
import type { KeyRef, KeySignature, PublicKey, SpendableOutput, TransferInput, UnsignedTransfer, UtxoConsolidationRequest, UtxoPaymentRequest, UtxoTransferRequest } from '@wcs/core';
import { toHex } from '@wcs/core/testing';
import { startRegtest, type RegtestNode } from './regtest';
import { ChainTransferError } from '@wcs/core';
import {
  BitcoinTransferNode, addressScript, consolidationVsize, dustThreshold, feeForVsize, maxConsolidationInputs,
  p2wpkhSpendWeight, parseFeeRate, plugin, resolveNetwork, transferChange, MAX_STANDARD_WEIGHT, P2WPKH_SCRIPT_LENGTH,
} from './index';
import { BTC_MAINNET, BTC_REGTEST_RB } from './fixtures.test-helper';
import { TestKeyStore } from './keystore.test-helper';
import { bitcoinCrafter, bitcoinNode, crafted, untyped } from './spending.test-helper';

const adapter = plugin.create(BTC_REGTEST_RB);
const NETWORK = resolveNetwork(BTC_REGTEST_RB);
const crafter = bitcoinCrafter(adapter);
/** craft() of a request its inputs cover: the unsigned transfer. */
const craft = (req: UtxoTransferRequest, inp: TransferInput): UnsignedTransfer => crafted(crafter, req, inp);
const keys = new TestKeyStore();
const APP = 7;

interface Wallet {
  readonly ref: KeyRef;
  readonly publicKey: PublicKey;
  readonly address: string;
}

async function wallet(purpose: 'deposit' | 'hot', index: number): Promise<Wallet> {
  const ref: KeyRef = { applicationId: APP, spec: adapter.keySpec(purpose), purpose, index };
  const publicKey = await keys.getPublicKey(ref);
  return { ref, publicKey, address: adapter.address.addressFromPublicKey(publicKey) };
}

const owner = (w: Wallet) => ({ address: w.address, publicKey: w.publicKey });
const fakeTxid = (n: number) => createHash('sha256').update(`consolidated ${n}`).digest('hex');
const utxo = (n: number, amount: bigint, of?: Wallet): SpendableOutput => ({ txHash: fakeTxid(n), vout: n % 3, amount, ...(of ? { owner: owner(of) } : {}) });
const input = (feeRate: string): TransferInput => ({ feeRate, feeRateSource: 'test', confTarget: 3 });
const total = (outputs: readonly SpendableOutput[]) => outputs.reduce((s, o) => s + o.amount, 0n);

/** A consolidation from `from` of `inputs` (their whole sum) to `to`. */
function consolidation(from: Wallet, to: string, inputs: readonly SpendableOutput[], fields: Partial<UtxoConsolidationRequest> = {}): UtxoConsolidationRequest {
  return { from: from.address, fromPublicKey: from.publicKey, to, memo: null, contract: null, amount: total(inputs), inputs, subtractFee: true, ...fields };
}

/** Each payload signed by the key of its signer (the address craft() names for it). */
async function signEach(unsigned: UnsignedTransfer, wallets: readonly Wallet[]): Promise<KeySignature[]> {
  const byAddress = new Map(wallets.map((w) => [w.address, w]));
  const out: KeySignature[] = [];
  for (const [i, p] of unsigned.payloads.entries()) {
    const signer = unsigned.signers?.[i];
    const w = signer === undefined ? undefined : byAddress.get(signer);
    expect(w, `a wallet for signer ${i} (${signer})`).to.not.equal(undefined);
    out.push(await keys.sign(w!.ref, p));
  }
  return out;
}

function crafterError(fn: () => unknown): ChainTransferError {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(ChainTransferError);
    return e as ChainTransferError;
  }
  expect.fail('expected a ChainTransferError');
}

describe('bitcoin consolidation sizes and fees', () => {
  it('consolidationVsize: 42 + 68·n vB to a P2WPKH output (44 + 68·n from 253 inputs), the worst-case size p2wpkhSpendVsize gives', () => {
    expect(P2WPKH_SCRIPT_LENGTH).to.equal(22);
    expect(consolidationVsize(1)).to.equal(110);
    expect(consolidationVsize(5)).to.equal(382);
    for (let n = 1; n <= 1469; n++) {
      expect(consolidationVsize(n), `${n} inputs`).to.equal((n <= 252 ? 42 : 44) + 68 * n);
      expect(p2wpkhSpendWeight(n, [22]), `${n} inputs`).to.equal((n <= 252 ? 166 : 174) + 272 * n);
    }
    // A P2TR / P2WSH destination: 12 bytes more of script, 12 vB.
    expect(consolidationVsize(5, 34)).to.equal(382 + 12);
    for (const bad of [0, -1, 1.5, NaN]) expect(() => consolidationVsize(bad), String(bad)).to.throw(RangeError);
    expect(() => consolidationVsize(1, 0)).to.throw(RangeError);
  });

  it('maxConsolidationInputs: the most inputs within the standard weight (1469 to a P2WPKH output)', () => {
    for (const len of [22, 34, 25, 23]) {
      const n = maxConsolidationInputs(len);
      expect(p2wpkhSpendWeight(n, [len])).to.be.at.most(MAX_STANDARD_WEIGHT);
      expect(p2wpkhSpendWeight(n + 1, [len])).to.be.above(MAX_STANDARD_WEIGHT);
    }
    expect(maxConsolidationInputs()).to.equal(1469);
  });

  it('crafter.consolidationFee: ⌈feeRate × consolidationVsize⌉ for the destination\'s script, the maxFee craft() announces', async () => {
    const from = await wallet('deposit', 0);
    const hot = await wallet('hot', 0);
    expect(crafter.consolidationFee(5, input('1'))).to.equal(382n);
    expect(crafter.consolidationFee(5, input('2.5'))).to.equal(955n);
    // 382 × 1.001 = 382.382, rounded up.
    expect(crafter.consolidationFee(5, input('1.001'))).to.equal(383n);
    expect(crafter.consolidationFee(5, input('1'), hot.address)).to.equal(382n);
    expect(crafter.consolidationFee(5, input('1'), btcAddress.toBech32(hot.publicKey.bytes.subarray(1), 1, NETWORK.hrp)), 'P2TR').to.equal(394n);
    expect(crafterError(() => crafter.consolidationFee(5, input('1'), 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu')).errorName).to.equal('INVALID_REQUEST');
    expect(crafterError(() => crafter.consolidationFee(5, { feeRate: 1 })).errorName).to.equal('INVALID_REQUEST');
    expect(() => crafter.consolidationFee(0, input('1'))).to.throw(RangeError);
    for (const rate of ['1', '2.5', '7.123', '40']) {
      for (const n of [1, 2, 5, 17]) {
        const inputs = Array.from({ length: n }, (_, i) => utxo(i, 100_000n));
        expect(craft(consolidation(from, hot.address, inputs), input(rate)).maxFee, `${n} inputs at ${rate}`).to.equal(crafter.consolidationFee(n, input(rate)));
      }
    }
  });
});

describe('BitcoinTransferCrafter: consolidations (subtractFee, input owners)', () => {
  let deposits: Wallet[];
  let hot: Wallet;
  before(async () => {
    deposits = await Promise.all([0, 1, 2, 3, 4].map((i) => wallet('deposit', i)));
    hot = await wallet('hot', 0);
  });

  it('spends every input to one output of sum − fee, fee = rate × vsize exactly, no change; signers in payload order', async () => {
    const [d0, d1, d2, d3, d4] = deposits as [Wallet, Wallet, Wallet, Wallet, Wallet];
    // Input 0 has no owner: from's (d0). The others are the deposit keys', d2 twice, out of order.
    const inputs = [utxo(1, 50_000n), utxo(2, 12_345n, d2), utxo(3, 7_777n, d1), utxo(4, 100_000n, d4), utxo(5, 3_000n, d3), utxo(6, 999n, d2)];
    const sum = total(inputs);
    const unsigned = craft(consolidation(d0, hot.address, inputs), input('3'));
    // 6 inputs: 42 + 6 × 68 = 450 vB at 3 sat/vB.
    expect(consolidationVsize(6)).to.equal(450);
    expect(unsigned.maxFee).to.equal(1_350n);
    expect(unsigned.signers).to.deep.equal([d0.address, d2.address, d1.address, d4.address, d3.address, d2.address]);
    expect(unsigned.payloads).to.have.length(6);
    expect(transferChange(unsigned)).to.equal(null);
    const psbt = Psbt.fromBase64((unsigned.state as { psbt: string }).psbt);
    expect(psbt.txOutputs.map((o) => [toHex(o.script), o.value])).to.deep.equal([[toHex(addressScript(hot.address, NETWORK)), sum - 1_350n]]);
    // Each input is the P2WPKH output of its signer's key.
    expect(psbt.data.inputs.map((i) => toHex(i.witnessUtxo!.script))).to.deep.equal(unsigned.signers!.map((a) => toHex(addressScript(a, NETWORK))));
    expect(psbt.txInputs.map((i) => [Buffer.from(i.hash).reverse().toString('hex'), i.index, i.sequence])).to.deep.equal(inputs.map((o) => [o.txHash, o.vout, 0xfffffffd]));

    const signed = crafter.combine(unsigned, await signEach(unsigned, [...deposits, hot]));
    expect(signed.txHash).to.equal(unsigned.txHash);
    const tx = Transaction.fromBuffer(signed.raw);
    expect(tx.getId()).to.equal(unsigned.txHash);
    expect(tx.outs.map((o) => o.value)).to.deep.equal([sum - unsigned.maxFee]);
    for (const [i, x] of tx.ins.entries()) {
      const key = deposits.find((d) => d.address === unsigned.signers![i])!.publicKey.bytes;
      expect(toHex(x.witness[1]!), `witness key ${i}`).to.equal(toHex(key));
      expect(x.witness[0]!.length, `signature ${i}: 71 or 72 bytes with the sighash byte`).to.be.within(70, 72);
    }
    // The real size is the worst case less a weight unit per byte each signature is shorter than 72.
    const shorter = tx.ins.reduce((n, x) => n + 72 - x.witness[0]!.length, 0);
    expect(tx.weight()).to.equal(p2wpkhSpendWeight(6, [22]) - shorter);
    expect(tx.virtualSize()).to.be.at.most(450);
    expect(450 / tx.virtualSize()).to.be.at.most(1.02);
  });

  it('is deterministic, and the fee is ⌈rate × vsize⌉ at any rate', async () => {
    const [d0, d1] = deposits as [Wallet, Wallet];
    const inputs = [utxo(1, 40_000n, d1), utxo(2, 40_000n)];
    const req = consolidation(d0, hot.address, inputs);
    const a = craft(req, input('2.5'));
    const b = craft({ ...req, inputs: inputs.map((o) => ({ ...o })) }, input('2.5'));
    expect([a.txHash, a.payloads.map(toHex), JSON.stringify(a.state)]).to.deep.equal([b.txHash, b.payloads.map(toHex), JSON.stringify(b.state)]);
    // 2 inputs: 178 vB.
    for (const [rate, fee] of [['1', 178n], ['2.5', 445n], ['1.001', 179n], ['0.5', 89n], ['13.337', 2_374n]] as const) {
      const u = craft(req, input(rate));
      expect(u.maxFee, rate).to.equal(fee);
      expect(u.maxFee).to.equal(feeForVsize(178, parseFeeRate(rate)));
      expect(Psbt.fromBase64((u.state as { psbt: string }).psbt).txOutputs[0]!.value).to.equal(80_000n - fee);
    }
  });

  it('consolidates from\'s own outputs the same way (every signer from; no changeAddress needed)', async () => {
    const [d0] = deposits as [Wallet];
    const inputs = [utxo(1, 20_000n), utxo(2, 30_000n, d0)];
    const unsigned = craft(consolidation(d0, hot.address, inputs, { changeAddress: undefined }), input('1'));
    expect(unsigned.signers).to.deep.equal([d0.address, d0.address]);
    expect(unsigned.maxFee).to.equal(178n);
    expect((unsigned.state as { format: string }).format).to.equal('wcs-btc-p2wpkh/1');
    const tx = Transaction.fromBuffer(crafter.combine(unsigned, await signEach(unsigned, deposits)).raw);
    expect(tx.outs.map((o) => o.value)).to.deep.equal([50_000n - 178n]);
  });

  it('refuses an amount other than the sum of the inputs', async () => {
    const [d0, d1] = deposits as [Wallet, Wallet];
    const inputs = [utxo(1, 40_000n, d1), utxo(2, 40_000n)];
    for (const amount of [79_999n, 80_001n, 40_000n]) {
      const e = crafterError(() => crafter.craft(consolidation(d0, hot.address, inputs, { amount }), input('1')));
      expect(e.errorName, String(amount)).to.equal('INVALID_REQUEST');
      expect(e.message).to.match(/must be the sum of the inputs \(80000 sat\)/);
    }
  });

  it('refuses a payment below the destination\'s dust threshold after the fee: DUST_AFTER_FEE with the fee', async () => {
    const [d0, d1] = deposits as [Wallet, Wallet];
    // 2 inputs at 2 sat/vB: fee 356; P2WPKH dust 294.
    const fee = 356n;
    const dust = dustThreshold(addressScript(hot.address, NETWORK));
    expect(dust).to.equal(294n);
    for (const sum of [fee + dust - 1n, fee, fee - 1n, 2n]) {
      const inputs = [utxo(1, sum - sum / 2n, d1), utxo(2, sum / 2n)];
      const e = crafterError(() => crafter.craft(consolidation(d0, hot.address, inputs), input('2')));
      expect(e.errorName, String(sum)).to.equal('DUST_AFTER_FEE');
      expect(e.fee).to.equal(fee);
      expect(e.message).to.match(/uneconomic/);
    }
    const inputs = [utxo(1, 325n, d1), utxo(2, 325n)];
    const ok = craft(consolidation(d0, hot.address, inputs), input('2'));
    expect(Psbt.fromBase64((ok.state as { psbt: string }).psbt).txOutputs[0]!.value, 'the dust threshold itself is paid').to.equal(dust);
    // A P2PKH destination has a higher threshold (546).
    const p2pkh = btcAddress.toBase58Check(btcCrypto.hash160(d1.publicKey.bytes), NETWORK.p2pkhVersion);
    // 2 inputs to a 25-byte script: 181 vB at 1 sat/vB; 700 − 181 = 519 < 546.
    expect(crafterError(() => crafter.craft(consolidation(d0, p2pkh, [utxo(1, 300n, d1), utxo(2, 400n)]), input('1'))).errorName).to.equal('DUST_AFTER_FEE');
    expect(craft(consolidation(d0, p2pkh, [utxo(1, 327n, d1), utxo(2, 400n)]), input('1')).maxFee).to.equal(181n);
  });

  it('refuses an owner whose address is not the P2WPKH address of its key on this network', async () => {
    const [d0, d1, d2] = deposits as [Wallet, Wallet, Wallet];
    const mainnetOfD1 = plugin.create(BTC_MAINNET).address.addressFromPublicKey(d1.publicKey);
    const bcrtOfD1 = plugin.create({ ...BTC_REGTEST_RB, options: {} }).address.addressFromPublicKey(d1.publicKey);
    const bad: Array<[string, unknown]> = [
      ['another key\'s address', { address: d2.address, publicKey: d1.publicKey }],
      ['another network\'s address of the key', { address: mainnetOfD1, publicKey: d1.publicKey }],
      ['another regtest hrp', { address: bcrtOfD1, publicKey: d1.publicKey }],
      ['upper case', { address: d1.address.toUpperCase(), publicKey: d1.publicKey }],
      ['no address', { publicKey: d1.publicKey }],
      ['an uncompressed key', { address: d1.address, publicKey: { curve: 'secp256k1', bytes: new Uint8Array(65).fill(4) } }],
      ['an ed25519 key', { address: d1.address, publicKey: { curve: 'ed25519', bytes: new Uint8Array(32) } }],
      ['a key off the curve', { address: d1.address, publicKey: { curve: 'secp256k1', bytes: Uint8Array.from([2, ...new Uint8Array(32).fill(0xff)]) } }],
      ['not an object', 'rb1q'],
    ];
    for (const [what, o] of bad) {
      const inputs = [utxo(1, 40_000n), { ...utxo(2, 40_000n), owner: o } as SpendableOutput];
      const e = crafterError(() => crafter.craft(consolidation(d0, hot.address, inputs), input('1')));
      expect(e.errorName, what).to.equal('INVALID_REQUEST');
      expect(e.message, what).to.match(/^inputs\[1\]\.owner/);
    }
    const e = crafterError(() => crafter.craft(consolidation(d0, hot.address, [utxo(1, 40_000n), { ...utxo(2, 40_000n), owner: { address: d2.address, publicKey: d1.publicKey } }]), input('1')));
    expect(e.message).to.equal(`inputs[1].owner: address "${d2.address}" is not the P2WPKH address of its public key (${d1.address})`);
  });

  it('refuses other malformed consolidations: a non-boolean subtractFee, a change address, too many inputs, an invalid destination', async () => {
    const [d0, d1] = deposits as [Wallet, Wallet];
    const inputs = [utxo(1, 40_000n, d1), utxo(2, 40_000n)];
    const cases: Array<[string, UtxoTransferRequest]> = [
      ['subtractFee "yes"', untyped({ ...consolidation(d0, hot.address, inputs), subtractFee: 'yes' })],
      ['a change address (a consolidation makes no change)', untyped({ ...consolidation(d0, hot.address, inputs), changeAddress: hot.address })],
      ['a mainnet destination', consolidation(d0, 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', inputs)],
      ['from another key', consolidation(d0, hot.address, inputs, { from: d1.address })],
      ['the same output twice', consolidation(d0, hot.address, [utxo(1, 40_000n, d1), utxo(1, 40_000n)])],
      ['no inputs', consolidation(d0, hot.address, [])],
    ];
    for (const [what, req] of cases) expect(crafterError(() => crafter.craft(req, input('1'))).errorName, what).to.equal('INVALID_REQUEST');
    const many = Array.from({ length: 1470 }, (_, i) => ({ txHash: fakeTxid(1000 + i), vout: 0, amount: 10_000n }));
    const e = crafterError(() => crafter.craft(consolidation(d0, hot.address, many), input('1')));
    expect(e.errorName).to.equal('INVALID_REQUEST');
    expect(e.message).to.match(/above the standard 400000 \(at most 1469 inputs\)/);
  });

  it('a payout with change may spend owners\' outputs too: signers per input, the change to changeAddress', async () => {
    const [d0, d1] = deposits as [Wallet, Wallet];
    const to = (await wallet('hot', 1)).address;
    const req: UtxoPaymentRequest = {
      from: hot.address, fromPublicKey: hot.publicKey, to, memo: null, contract: null, amount: 30_000n,
      inputs: [utxo(1, 20_000n, d0), utxo(2, 20_000n), utxo(3, 20_000n, d1)], changeAddress: hot.address,
    };
    const unsigned = craft(req, input('1'));
    expect(unsigned.signers).to.deep.equal([d0.address, hot.address, d1.address]);
    // 3 inputs, 2 P2WPKH outputs: 11 + 62 + 204 = 277 vB.
    expect(unsigned.maxFee).to.equal(277n);
    expect(transferChange(unsigned)).to.deep.equal({ txHash: unsigned.txHash, vout: 1, amount: 60_000n - 30_000n - 277n });
    const tx = Transaction.fromBuffer(crafter.combine(unsigned, await signEach(unsigned, [...deposits, hot])).raw);
    expect(tx.outs.map((o) => o.value)).to.deep.equal([30_000n, 60_000n - 30_000n - 277n]);
  });

  it('combine checks each signature against its own input\'s key, and refuses altered signers or keys', async () => {
    const [d0, d1, d2] = deposits as [Wallet, Wallet, Wallet];
    const unsigned = craft(consolidation(d0, hot.address, [utxo(1, 40_000n, d1), utxo(2, 40_000n), utxo(3, 40_000n, d2)]), input('1'));
    const good = await signEach(unsigned, deposits);
    expect(crafter.combine(unsigned, good).txHash).to.equal(unsigned.txHash);

    // from's key (d0) signing d1's input: a valid signature, by the wrong key.
    const byFrom = [await keys.sign(d0.ref, unsigned.payloads[0]!), good[1]!, good[2]!];
    const e1 = crafterError(() => crafter.combine(unsigned, byFrom));
    expect([e1.errorName, e1.inputIndex]).to.deep.equal(['INVALID_SIGNATURE', 0]);
    expect(e1.message).to.contain(toHex(d1.publicKey.bytes));
    const swapped = [good[2]!, good[1]!, good[0]!];
    expect(crafterError(() => crafter.combine(unsigned, swapped)).errorName).to.equal('INVALID_SIGNATURE');

    const otherSigners = { ...unsigned, signers: [d2.address, d0.address, d1.address] };
    const e2 = crafterError(() => crafter.combine(otherSigners, good));
    expect([e2.errorName, e2.inputIndex]).to.deep.equal(['INVALID_STATE', 0]);
    expect(crafterError(() => crafter.combine({ ...unsigned, signers: [d1.address] }, good)).errorName).to.equal('INVALID_STATE');
    // Without signers (an older caller) combine still checks the keys of the state.
    const { signers: _signers, ...bare } = unsigned;
    expect(crafter.combine(bare, good).txHash).to.equal(unsigned.txHash);
    const state = unsigned.state as { keys: string[] };
    expect(state.keys).to.deep.equal([d1, d0, d2].map((w) => toHex(w.publicKey.bytes)));
    const otherKeys = { ...state, keys: [toHex(d2.publicKey.bytes), state.keys[1], state.keys[2]] };
    expect(crafterError(() => crafter.combine({ ...bare, state: otherKeys as never }, good)).errorName).to.equal('INVALID_STATE');
    expect(crafterError(() => crafter.combine({ ...bare, state: { ...state, keys: state.keys.slice(0, 2) } as never }, good)).errorName).to.equal('INVALID_STATE');
    expect(crafterError(() => crafter.combine({ ...bare, state: { ...state, keys: ['02zz', ...state.keys.slice(1)] } as never }, good)).errorName).to.equal('INVALID_STATE');
  });
});

describe('bitcoin consolidation on a bcoin regtest node', function () {
  this.timeout(60_000);
  let node: RegtestNode;
  let transfers: BitcoinTransferNode;

  before(async function () {
    this.timeout(120_000);
    node = await startRegtest();
    transfers = bitcoinNode(adapter, { url: node.url });
  });

  after(async () => {
    await node?.stop();
  });

  it('spends outputs of 5 deposit keys in one transaction to a sixth address: sum − fee received, fee = maxFee, vsize within the fee\'s', async () => {
    const deposits = await Promise.all([10, 11, 12, 13, 14].map((i) => wallet('deposit', i)));
    const hot = await wallet('hot', 2);
    expect(new Set(deposits.map((d) => toHex(d.publicKey.bytes))).size, '5 different keys').to.equal(5);
    const amounts = [50_000n, 12_345n, 7_777n, 100_000n, 3_000n];
    for (const [i, d] of deposits.entries()) await node.send(d.address, amounts[i]!);
    await node.mine(1);

    // The deposit outputs as the node lists them; each spent by its own key.
    const inputs: SpendableOutput[] = [];
    for (const d of deposits) {
      const listed = await transfers.unspentOutputs(d.address);
      expect(listed, d.address).to.have.length(1);
      const { txHash, vout, amount } = listed[0]!;
      inputs.push({ txHash, vout, amount, owner: owner(d) });
    }
    expect(inputs.map((o) => o.amount)).to.deep.equal(amounts);
    const sum = total(inputs);
    // The first deposit is `from`; its input carries its owner explicitly all the same.
    const req = consolidation(deposits[0]!, hot.address, inputs);
    const inp = await transfers.transferInput(req);
    expect(inp['feeRate'], 'regtest: the 1 sat/vB fallback').to.equal('1');
    const unsigned = craft(req, inp);
    expect(unsigned.signers).to.deep.equal(deposits.map((d) => d.address));
    expect(unsigned.maxFee).to.equal(crafter.consolidationFee(5, inp));
    expect(unsigned.maxFee).to.equal(feeForVsize(consolidationVsize(5), 1000n));

    const signed = crafter.combine(unsigned, await signEach(unsigned, deposits));
    expect(await transfers.broadcast(signed)).to.deep.equal({ outcome: 'ACCEPTED', txHash: unsigned.txHash });
    expect(await transfers.status(signed.txHash)).to.deep.equal({ state: 'PENDING' });
    const [block] = await node.mine(1);
    expect(await transfers.status(signed.txHash)).to.deep.include({ state: 'MINED', blockHash: block, confirmations: 1, succeeded: true, fee: unsigned.maxFee });

    // The mined transaction, as the node has it.
    const mined = Transaction.fromHex(await node.rpc<string>('getrawtransaction', [signed.txHash, false]));
    expect(mined.getId()).to.equal(unsigned.txHash);
    expect(mined.ins).to.have.length(5);
    expect(mined.outs).to.have.length(1);
    expect(toHex(mined.outs[0]!.script)).to.equal(toHex(addressScript(hot.address, NETWORK)));
    expect(mined.outs[0]!.value).to.equal(sum - unsigned.maxFee);
    expect(sum - mined.outs[0]!.value, 'fee paid = inputs − output').to.equal(unsigned.maxFee);
    for (const [i, x] of mined.ins.entries()) expect(toHex(btcCrypto.hash160(x.witness[1]!))).to.equal(toHex(btcCrypto.hash160(deposits[i]!.publicKey.bytes)));
    const charged = consolidationVsize(5);
    const actual = mined.virtualSize();
    expect(actual).to.be.at.most(charged);
    expect(charged / actual).to.be.at.most(1.02);
    const shorter = mined.ins.reduce((n, x) => n + 72 - x.witness[0]!.length, 0);
    expect(mined.weight()).to.equal(p2wpkhSpendWeight(5, [22]) - shorter);

    // The deposit addresses are empty, the hot address holds the one output.
    for (const d of deposits) expect(await transfers.unspentOutputs(d.address), d.address).to.deep.equal([]);
    expect(await transfers.unspentOutputs(hot.address)).to.deep.equal([{ txHash: signed.txHash, vout: 0, amount: sum - unsigned.maxFee, confirmations: 1 }]);
  });
});
