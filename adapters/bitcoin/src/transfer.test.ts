import { expect } from 'chai';
import { createHash, generateKeyPairSync, sign as nodeSign } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1';
import { address as btcAddress, crypto as btcCrypto, Psbt, Transaction } from 'bitcoinjs-lib';
import type { KeyRef, KeySignature, PublicKey, SpendableOutput, TransferInput, UnsignedTransfer, UtxoPaymentRequest, UtxoTransferRequest } from '@wcs/core';
import { rejected, startReplayServer, toHex, type ReplayServer } from '@wcs/core/testing';
import { startRegtest, type RegtestNode } from './regtest';
import { ChainRpcError, ChainTransferError, craftTransfer, paying } from '@wcs/core';
import {
  BitcoinTransferCrafter, BitcoinTransferNode, addressScript, btcToSats, classifyBroadcastRefusal, dustThreshold,
  feeForVsize, formatFeeRate, p2wpkhSpendVsize, p2wpkhSpendWeight, parseFeeRate, plugin, resolveNetwork, selectInputs, transferChange, verifyDigest,
} from './index';
import { BTC_MAINNET, BTC_REGTEST_RB } from './fixtures.test-helper';
import { TestKeyStore, randomPublicKey } from './keystore.test-helper';
import { bitcoinCrafter, bitcoinNode, crafted, untyped } from './spending.test-helper';

const adapter = plugin.create(BTC_REGTEST_RB);
const NETWORK = resolveNetwork(BTC_REGTEST_RB);
const crafter = bitcoinCrafter(adapter);
/** craft() of a request its inputs cover: the unsigned transfer. */
const craft = (req: UtxoTransferRequest, inp: TransferInput): UnsignedTransfer => crafted(crafter, req, inp);
const APP = 7;

const keys = new TestKeyStore();
const hotRef = (index: number): KeyRef => ({ applicationId: APP, spec: adapter.keySpec('hot'), purpose: 'hot', index });

interface Hot {
  readonly ref: KeyRef;
  readonly publicKey: PublicKey;
  readonly address: string;
}

async function hotWallet(index: number): Promise<Hot> {
  const ref = hotRef(index);
  const publicKey = await keys.getPublicKey(ref);
  return { ref, publicKey, address: adapter.address.addressFromPublicKey(publicKey) };
}

async function signAll(ref: KeyRef, unsigned: UnsignedTransfer): Promise<KeySignature[]> {
  const out: KeySignature[] = [];
  for (const p of unsigned.payloads) out.push(await keys.sign(ref, p));
  return out;
}

/** A P2WPKH address of our regtest chain for a fresh random key. */
const randomKey = randomPublicKey;
const p2wpkhAddress = () => adapter.address.addressFromPublicKey({ curve: 'secp256k1', bytes: randomKey() });
/** P2TR of an x-only key (the output key, untweaked: the node checks no more than the program's length). */
const p2trAddress = () => btcAddress.toBech32(randomKey().subarray(1), 1, NETWORK.hrp);
/** Legacy P2PKH in our regtest encoding (0x6f, as Bitcoin Core's regtest): the script is what the node sees. */
const p2pkhAddress = () => btcAddress.toBase58Check(btcCrypto.hash160(randomKey()), NETWORK.p2pkhVersion);
const p2shAddress = () => btcAddress.toBase58Check(btcCrypto.hash160(randomKey()), NETWORK.p2shVersion);
const p2wshAddress = () => btcAddress.toBech32(btcCrypto.sha256(randomKey()), 0, NETWORK.hrp);

const fakeTxid = (n: number) => createHash('sha256').update(`utxo ${n}`).digest('hex');
const utxo = (n: number, amount: bigint, vout = 0): SpendableOutput => ({ txHash: fakeTxid(n), vout, amount });

function request(hot: Hot, fields: Partial<UtxoPaymentRequest> & Pick<UtxoPaymentRequest, 'to' | 'amount' | 'inputs'>): UtxoPaymentRequest {
  return { from: hot.address, fromPublicKey: hot.publicKey, memo: null, contract: null, changeAddress: hot.address, ...fields };
}

const input = (feeRate: string): TransferInput => ({ feeRate, feeRateSource: 'test', confTarget: 3 });

function crafterError(fn: () => unknown): ChainTransferError {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(ChainTransferError);
    return e as ChainTransferError;
  }
  expect.fail('expected a ChainTransferError');
}

describe('bitcoin fee rates, sizes and dust', () => {
  it('reads sat/vB fee rates with up to 3 decimals exactly (sat/kvB) and writes them back', () => {
    expect(parseFeeRate('1')).to.equal(1000n);
    expect(parseFeeRate('2.5')).to.equal(2500n);
    expect(parseFeeRate('12.345')).to.equal(12_345n);
    expect(parseFeeRate('0.001')).to.equal(1n);
    for (const r of ['1', '2.5', '12.345', '0.001', '1000000']) expect(formatFeeRate(parseFeeRate(r))).to.equal(r);
    for (const bad of ['0', '0.000', '-1', '1.2345', '01', '1.', '.5', '1e3', ' 1', '', 1, null, '1000000000']) {
      expect(crafterError(() => parseFeeRate(bad)).errorName, JSON.stringify(bad)).to.equal('INVALID_REQUEST');
    }
  });

  it('sizes P2WPKH spends with 72-byte signatures: 68 vB per input, outputs by script', () => {
    // 10.5 vB of framing (version, counts, locktime, segwit marker) + 31 vB per P2WPKH output + 68 vB per input.
    expect(p2wpkhSpendVsize(1, [22])).to.equal(110);
    expect(p2wpkhSpendVsize(1, [22, 22])).to.equal(141);
    expect(p2wpkhSpendVsize(2, [22, 22])).to.equal(209);
    expect(p2wpkhSpendVsize(1, [34, 22])).to.equal(153); // P2TR / P2WSH payment
    expect(p2wpkhSpendVsize(1, [25, 22])).to.equal(144); // P2PKH payment
    // 253 inputs: the input count takes 3 bytes.
    expect(p2wpkhSpendVsize(253, [22]) - p2wpkhSpendVsize(252, [22])).to.equal(70);
    expect(feeForVsize(141, 1000n)).to.equal(141n);
    expect(feeForVsize(141, 1500n)).to.equal(212n); // 211.5 rounded up
  });

  it('has Bitcoin Core\'s dust thresholds at 3 sat/vB', () => {
    const script = (a: string) => addressScript(a, NETWORK);
    expect(dustThreshold(script(p2wpkhAddress()))).to.equal(294n);
    expect(dustThreshold(script(p2wshAddress()))).to.equal(330n);
    expect(dustThreshold(script(p2trAddress()))).to.equal(330n);
    expect(dustThreshold(script(p2shAddress()))).to.equal(540n);
    expect(dustThreshold(script(p2pkhAddress()))).to.equal(546n);
  });

  it('reads RPC BTC amounts as exact satoshis', () => {
    expect(btcToSats(0.1)).to.equal(10_000_000n);
    expect(btcToSats(20999999.9769)).to.equal(2_099_999_997_690_000n);
    expect(btcToSats(0.00000001)).to.equal(1n);
    expect(btcToSats(0)).to.equal(0n);
    for (const bad of [0.000000001, -1, NaN, '0.1', null, 21_000_001]) expect(btcToSats(bad), String(bad)).to.equal(null);
  });
});

describe('verifyDigest (secp256k1 ECDSA)', () => {
  it('agrees with @noble/curves on valid and altered signatures', () => {
    for (let i = 0; i < 12; i++) {
      const priv = secp256k1.utils.randomPrivateKey();
      const pub = secp256k1.getPublicKey(priv, true);
      const digest = createHash('sha256').update(`message ${i}`).digest();
      const sig = secp256k1.sign(digest, priv, { lowS: true }).toCompactRawBytes();
      expect(verifyDigest(digest, sig, pub)).to.equal(true);
      expect(verifyDigest(digest, sig, secp256k1.getPublicKey(priv, false)), 'uncompressed key').to.equal(true);
      const other = Uint8Array.from(digest);
      other[31] ^= 1;
      expect(verifyDigest(other, sig, pub)).to.equal(secp256k1.verify(sig, other, pub));
      expect(verifyDigest(other, sig, pub)).to.equal(false);
      const badR = Uint8Array.from(sig);
      badR[5] ^= 0x10;
      expect(verifyDigest(digest, badR, pub)).to.equal(false);
      const badS = Uint8Array.from(sig);
      badS[40] ^= 0x01;
      expect(verifyDigest(digest, badS, pub)).to.equal(false);
      expect(verifyDigest(digest, sig, secp256k1.getPublicKey(secp256k1.utils.randomPrivateKey(), true))).to.equal(false);
    }
  });

  it('verifies OpenSSL\'s signatures (node:crypto, high S included)', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
    const jwk = publicKey.export({ format: 'jwk' });
    const pub = Uint8Array.from(Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]));
    for (let i = 0; i < 8; i++) {
      const msg = Buffer.from(`openssl ${i}`);
      const sig = nodeSign('sha256', msg, { key: privateKey, dsaEncoding: 'ieee-p1363' });
      expect(verifyDigest(createHash('sha256').update(msg).digest(), sig, pub)).to.equal(true);
    }
  });

  it('is false, never throws, for malformed input', () => {
    const priv = secp256k1.utils.randomPrivateKey();
    const pub = secp256k1.getPublicKey(priv, true);
    const digest = new Uint8Array(32).fill(7);
    const sig = secp256k1.sign(digest, priv, { lowS: true }).toCompactRawBytes();
    const n = Buffer.from('fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141', 'hex');
    expect(verifyDigest(digest, new Uint8Array(64), pub)).to.equal(false);
    expect(verifyDigest(digest, Uint8Array.from([...n, ...sig.subarray(32)]), pub)).to.equal(false);
    expect(verifyDigest(digest, sig.subarray(0, 63), pub)).to.equal(false);
    expect(verifyDigest(digest.subarray(1), sig, pub)).to.equal(false);
    const offCurve = Uint8Array.from(pub);
    offCurve[32] ^= 1;
    expect(verifyDigest(digest, sig, new Uint8Array(33))).to.equal(false);
    expect(() => verifyDigest(digest, sig, offCurve)).to.not.throw();
  });
});

describe('BitcoinTransferCrafter (offline)', () => {
  let hot: Hot;
  before(async () => {
    hot = await hotWallet(0);
  });

  it('is the adapter\'s crafter, with a transfer node, for the utxo spend model; core\'s craftTransfer dispatches a utxo transfer to it', () => {
    expect(adapter.spendModel).to.equal('utxo');
    expect(adapter.transfers).to.be.instanceOf(BitcoinTransferCrafter);
    const payingAdapter = paying(adapter);
    expect(payingAdapter.createTransferNode({ url: 'http://127.0.0.1:1' })).to.be.instanceOf(BitcoinTransferNode);
    const req = request(hot, { to: p2wpkhAddress(), amount: 10_000n, inputs: [utxo(6, 20_000n)] });
    const direct = crafter.craft(req, input('1'));
    expect(direct.ok).to.equal(true);
    expect(craftTransfer(payingAdapter, { spendModel: 'utxo', request: req }, input('1'))).to.deep.equal(direct);
    const short = { ...req, inputs: [utxo(6, 10_050n)] };
    expect(craftTransfer(payingAdapter, { spendModel: 'utxo', request: short }, input('1'))).to.deep.equal({ ok: false, reason: 'INSUFFICIENT_INPUTS', shortfall: 60n });
    expect(() => craftTransfer(payingAdapter, { spendModel: 'sequence', request: { ...req, sequence: 0n } }, input('1'))).to.throw(TypeError, /utxo chain/);
  });

  it('crafts deterministically: same request and input, same payloads, txid and state', () => {
    const req = request(hot, { to: p2wpkhAddress(), amount: 30_000n, inputs: [utxo(1, 50_000n), utxo(2, 20_000n, 3)] });
    const a = craft(req, input('2.5'));
    const b = craft({ ...req, inputs: req.inputs.map((o) => ({ ...o })) }, input('2.5'));
    expect(a.payloads.map(toHex)).to.deep.equal(b.payloads.map(toHex));
    expect(a.txHash).to.equal(b.txHash);
    expect(a.maxFee).to.equal(b.maxFee);
    expect(JSON.stringify(a.state)).to.equal(JSON.stringify(b.state));
    expect(JSON.parse(JSON.stringify(a.state)), 'state is plain JSON').to.deep.equal(a.state);
    expect(craft(req, input('2.6')).txHash, 'another fee rate, another transaction').to.not.equal(a.txHash);
  });

  it('builds version 2, locktime 0, RBF inputs in order, payment at vout 0 and change at vout 1; txHash is the signed txid', async () => {
    const to = p2trAddress();
    const req = request(hot, { to, amount: 30_000n, inputs: [utxo(1, 50_000n), utxo(2, 20_000n, 3)] });
    const unsigned = craft(req, input('2.5'));
    // 2 inputs, P2TR payment + P2WPKH change: 11 + 43 + 31 + 2 × 68 = 221 vB at 2.5 sat/vB = 552.5 → 553.
    expect(unsigned.maxFee).to.equal(553n);
    const psbt = Psbt.fromBase64((unsigned.state as { psbt: string }).psbt);
    expect(psbt.version).to.equal(2);
    expect(psbt.locktime).to.equal(0);
    expect(psbt.txInputs.map((i) => [Buffer.from(i.hash).reverse().toString('hex'), i.index, i.sequence])).to.deep.equal([
      [fakeTxid(1), 0, 0xfffffffd],
      [fakeTxid(2), 3, 0xfffffffd],
    ]);
    expect(psbt.txOutputs.map((o) => [toHex(o.script), o.value])).to.deep.equal([
      [toHex(addressScript(to, NETWORK)), 30_000n],
      [toHex(addressScript(hot.address, NETWORK)), 70_000n - 30_000n - 553n],
    ]);
    expect(transferChange(unsigned)).to.deep.equal({ txHash: unsigned.txHash, vout: 1, amount: 70_000n - 30_000n - 553n });

    const signed = crafter.combine(unsigned, await signAll(hot.ref, unsigned));
    const tx = Transaction.fromBuffer(signed.raw);
    expect(signed.txHash).to.equal(unsigned.txHash);
    expect(tx.getId()).to.equal(unsigned.txHash);
    // The fee paid for 72-byte signatures: the real weight is less by what each signature is shorter.
    const shorter = tx.ins.reduce((n, x) => n + 72 - x.witness[0]!.length, 0);
    expect(tx.weight()).to.equal(p2wpkhSpendWeight(2, [34, 22]) - shorter);
    expect(tx.virtualSize()).to.be.at.most(221);
    for (const [i, w] of tx.ins.map((x) => x.witness).entries()) {
      expect(w.length, `witness ${i}`).to.equal(2);
      expect(toHex(w[1]!)).to.equal(toHex(hot.publicKey.bytes));
      expect(w[0]![w[0]!.length - 1], 'SIGHASH_ALL').to.equal(1);
    }
  });

  it('asks for the BIP-143 digest of each input, the one bitcoinjs-lib\'s PSBT signer signs', async () => {
    const req = request(hot, { to: p2pkhAddress(), amount: 10_000n, inputs: [utxo(3, 15_000n), utxo(4, 9_000n, 1)] });
    const unsigned = craft(req, input('1'));
    const psbt = Psbt.fromBase64((unsigned.state as { psbt: string }).psbt);
    const seen: string[] = [];
    const signer = {
      publicKey: hot.publicKey.bytes,
      sign: (hash: Uint8Array) => {
        seen.push(toHex(hash));
        return new Uint8Array(64).fill(1);
      },
    };
    psbt.signAllInputs(signer);
    expect(seen).to.deep.equal(unsigned.payloads.map(toHex));
  });

  it('gives a change below its dust threshold to the fee', () => {
    // 1 input, P2WPKH payment and change at 1 sat/vB: 110 vB without change, 141 with; change dust 294.
    const amount = 10_000n;
    const folded = craft(request(hot, { to: p2wpkhAddress(), amount, inputs: [utxo(5, amount + 141n + 293n)] }), input('1'));
    expect(folded.maxFee).to.equal(141n + 293n);
    expect(transferChange(folded)).to.equal(null);
    expect(Psbt.fromBase64((folded.state as { psbt: string }).psbt).txOutputs).to.have.length(1);
    const kept = craft(request(hot, { to: p2wpkhAddress(), amount, inputs: [utxo(5, amount + 141n + 294n)] }), input('1'));
    expect(kept.maxFee).to.equal(141n);
    expect(transferChange(kept)?.amount).to.equal(294n);
  });

  it('answers inputs that do not cover amount + fee with the typed INSUFFICIENT_INPUTS result and the shortfall, never a throw', () => {
    const to = p2wpkhAddress();
    // 1 input, P2WPKH payment, no change at 1 sat/vB: 110 vB.
    expect(crafter.craft(request(hot, { to, amount: 10_000n, inputs: [utxo(6, 10_050n)] }), input('1')))
      .to.deep.equal({ ok: false, reason: 'INSUFFICIENT_INPUTS', shortfall: 10_000n + 110n - 10_050n });
    // At 2 sat/vB the same transaction's fee is 220.
    expect(crafter.craft(request(hot, { to, amount: 10_000n, inputs: [utxo(6, 10_050n)] }), input('2')))
      .to.deep.equal({ ok: false, reason: 'INSUFFICIENT_INPUTS', shortfall: 10_000n + 220n - 10_050n });
    // One satoshi short.
    expect(crafter.craft(request(hot, { to, amount: 10_000n, inputs: [utxo(6, 10_109n)] }), input('1')))
      .to.deep.equal({ ok: false, reason: 'INSUFFICIENT_INPUTS', shortfall: 1n });
    // Exactly covered: no change, fee = 110.
    const exact = craft(request(hot, { to, amount: 10_000n, inputs: [utxo(6, 10_110n)] }), input('1'));
    expect(exact.maxFee).to.equal(110n);
  });

  it('refuses what it cannot craft: memo, contract, a fee payer, a token account to close, another key\'s from, foreign or bad addresses, bad inputs or fee rate, dust payments', async () => {
    const other = await hotWallet(1);
    const to = p2wpkhAddress();
    const ok = request(hot, { to, amount: 10_000n, inputs: [utxo(7, 50_000n)] });
    const cases: Array<[string, UtxoTransferRequest, TransferInput, string]> = [
      ['memo', { ...ok, memo: '1' }, input('1'), 'INVALID_REQUEST'],
      ['contract', { ...ok, contract: 'USDT' }, input('1'), 'INVALID_REQUEST'],
      ['from another key', { ...ok, from: other.address }, input('1'), 'INVALID_REQUEST'],
      ['mainnet destination', { ...ok, to: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu' }, input('1'), 'INVALID_REQUEST'],
      ['no change address', untyped({ ...ok, changeAddress: undefined }), input('1'), 'INVALID_REQUEST'],
      ['a change address not a string', untyped({ ...ok, changeAddress: 42 }), input('1'), 'INVALID_REQUEST'],
      ['subtractFee not a boolean', untyped({ ...ok, subtractFee: 'no' }), input('1'), 'INVALID_REQUEST'],
      ['bad change address', { ...ok, changeAddress: 'rb1qqqq' }, input('1'), 'INVALID_REQUEST'],
      ['no inputs', { ...ok, inputs: [] }, input('1'), 'INVALID_REQUEST'],
      ['the same output twice', { ...ok, inputs: [utxo(7, 50_000n), utxo(7, 50_000n)] }, input('1'), 'INVALID_REQUEST'],
      ['an upper-case txid', { ...ok, inputs: [{ ...utxo(7, 50_000n), txHash: fakeTxid(7).toUpperCase() }] }, input('1'), 'INVALID_REQUEST'],
      ['a number amount', { ...ok, inputs: [{ ...utxo(7, 0n), amount: 5 as unknown as bigint }] }, input('1'), 'INVALID_REQUEST'],
      ['zero amount', { ...ok, amount: 0n }, input('1'), 'INVALID_REQUEST'],
      ['no fee rate', ok, {}, 'INVALID_REQUEST'],
      ['a numeric fee rate', ok, { feeRate: 1 }, 'INVALID_REQUEST'],
      ['dust to P2WPKH', { ...ok, amount: 293n }, input('1'), 'AMOUNT_BELOW_DUST'],
      ['dust to P2PKH', { ...ok, to: p2pkhAddress(), amount: 545n }, input('1'), 'AMOUNT_BELOW_DUST'],
      ['a fee payer', { ...ok, feePayer: { address: other.address, publicKey: other.publicKey } }, input('1'), 'INVALID_REQUEST'],
      ['closing a token account', { ...ok, closeTokenAccount: true }, input('1'), 'INVALID_REQUEST'],
    ];
    for (const [what, req, inp, code] of cases) {
      expect(crafterError(() => crafter.craft(req, inp)).errorName, what).to.equal(code);
    }
    expect(craft({ ...ok, amount: 294n }, input('1')).maxFee, 'dust threshold itself is fine').to.equal(141n);
  });

  it('combine refuses a wrong signature: another key, another digest, high S, too few; and an altered unsigned transfer', async () => {
    const other = await hotWallet(1);
    const unsigned = craft(request(hot, { to: p2wpkhAddress(), amount: 20_000n, inputs: [utxo(8, 15_000n), utxo(9, 15_000n)] }), input('1'));
    const good = await signAll(hot.ref, unsigned);
    expect(crafter.combine(unsigned, good).txHash).to.equal(unsigned.txHash);

    const byOther = [good[0]!, await keys.sign(other.ref, unsigned.payloads[1]!)];
    const e1 = crafterError(() => crafter.combine(unsigned, byOther));
    expect([e1.errorName, e1.inputIndex]).to.deep.equal(['INVALID_SIGNATURE', 1]);
    const swapped = [good[1]!, good[0]!];
    expect(crafterError(() => crafter.combine(unsigned, swapped)).errorName).to.equal('INVALID_SIGNATURE');
    // The same signature with s → n − s: valid ECDSA, refused as high S.
    const n = BigInt('0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');
    const s = BigInt(`0x${toHex(good[0]!.bytes.subarray(32))}`);
    const high = Uint8Array.from([...good[0]!.bytes.subarray(0, 32), ...Buffer.from((n - s).toString(16).padStart(64, '0'), 'hex')]);
    const e2 = crafterError(() => crafter.combine(unsigned, [{ ...good[0]!, bytes: high }, good[1]!]));
    expect(e2.errorName).to.equal('INVALID_SIGNATURE');
    expect(e2.message).to.match(/low-S/);
    expect(crafterError(() => crafter.combine(unsigned, [good[0]!])).errorName).to.equal('INVALID_SIGNATURE');
    expect(crafterError(() => crafter.combine(unsigned, [{ ...good[0]!, curve: 'ed25519' }, good[1]!])).errorName).to.equal('INVALID_SIGNATURE');

    // Altered unsigned transfers: payloads, txHash, state.
    const otherPayload = { ...unsigned, payloads: [unsigned.payloads[1]!, unsigned.payloads[0]!] };
    expect(crafterError(() => crafter.combine(otherPayload, good)).errorName).to.equal('INVALID_STATE');
    expect(crafterError(() => crafter.combine({ ...unsigned, txHash: fakeTxid(0) }, good)).errorName).to.equal('INVALID_STATE');
    expect(crafterError(() => crafter.combine({ ...unsigned, state: { nope: true } }, good)).errorName).to.equal('INVALID_STATE');
    const otherKey = { ...(unsigned.state as Record<string, unknown>), publicKey: toHex(other.publicKey.bytes) };
    expect(crafterError(() => crafter.combine({ ...unsigned, state: otherKey as never }, good)).errorName).to.equal('INVALID_STATE');
  });
});

describe('selectInputs', () => {
  /** What craft() computes for a selection (the same rule). */
  async function craftedPlan(inputs: readonly SpendableOutput[], amount: bigint, feeRate: string): Promise<{ fee: bigint; change: bigint | null }> {
    const hot = await hotWallet(0);
    const unsigned = craft(request(hot, { to: p2wpkhAddress(), amount, inputs }), input(feeRate));
    return { fee: unsigned.maxFee, change: transferChange(unsigned)?.amount ?? null };
  }

  it('prefers a changeless set (branch-and-bound) when it costs no more than largest-first with its change', () => {
    // 1 sat/vB: fee without change 110 (1 input), 178 (2 inputs); with change 141, 209; spending a change later 68.
    const exact = selectInputs([utxo(1, 90_000n), utxo(2, 10_110n), utxo(3, 50_000n)], 10_000n, '1');
    expect(exact).to.deep.include({ ok: true, fee: 110n, change: null, method: 'branch-and-bound' });
    expect(exact.ok && exact.inputs).to.deep.equal([utxo(2, 10_110n)]);
    // Two outputs, 22 sat above amount + fee: cost 200 against 9 000 + 6 000 with change, 209 + 68.
    const pair = selectInputs([utxo(1, 9_000n), utxo(2, 6_000n), utxo(3, 4_200n)], 10_000n, '1');
    expect(pair).to.deep.include({ ok: true, fee: 200n, change: null, method: 'branch-and-bound' });
    expect(pair.ok && pair.inputs.map((o) => o.amount)).to.deep.equal([6_000n, 4_200n]);
    // The same pair costs 300 next to a large output that pays 141 + 68 with change: largest-first.
    const large = selectInputs([utxo(1, 90_000n), utxo(2, 6_000n), utxo(3, 4_300n)], 10_000n, '1');
    expect(large).to.deep.include({ ok: true, fee: 141n, change: 90_000n - 10_000n - 141n, method: 'largest-first' });
    expect(large.ok && large.inputs).to.deep.equal([utxo(1, 90_000n)]);
    // Many small outputs could avoid change, at a far higher fee than one input and change.
    const many = Array.from({ length: 40 }, (_, i) => utxo(10 + i, 1_000n + BigInt(i)));
    const r = selectInputs([utxo(1, 50_000n), ...many], 20_000n, '5');
    expect(r).to.deep.include({ ok: true, method: 'largest-first', fee: 705n });
  });

  it('reports the shortfall exactly: one more output worth shortfall + its input fee covers it, one satoshi less does not', () => {
    const available = [utxo(1, 4_000n), utxo(2, 3_000n), utxo(3, 50n) /* worth less than its 68 sat input fee: never chosen */];
    const r = selectInputs(available, 10_000n, '1');
    // Both worthwhile outputs, no change: 10 000 + 178 − 7 000.
    expect(r).to.deep.equal({ ok: false, shortfall: 3_178n });
    const covered = selectInputs([...available, utxo(4, 3_178n + 68n)], 10_000n, '1');
    expect(covered).to.deep.include({ ok: true, change: null, fee: 246n });
    expect(covered.ok && covered.inputs.map((o) => o.amount)).to.deep.equal([4_000n, 3_246n, 3_000n]);
    expect(selectInputs([...available, utxo(4, 3_178n + 67n)], 10_000n, '1')).to.deep.equal({ ok: false, shortfall: 1n });
    // Nothing worthwhile: what a single output would need.
    expect(selectInputs([utxo(3, 50n)], 10_000n, '1')).to.deep.equal({ ok: false, shortfall: 10_110n });
    expect(selectInputs([], 10_000n, '2')).to.deep.equal({ ok: false, shortfall: 10_220n });
    // maxInputs bounds the set the shortfall is computed over.
    expect(selectInputs(available, 10_000n, '1', { maxInputs: 1 })).to.deep.equal({ ok: false, shortfall: 10_000n + 110n - 4_000n });
  });

  it('never picks an output twice, refuses duplicates, is deterministic, and agrees with craft() (random wallets)', async () => {
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    expect(crafterError(() => selectInputs([utxo(1, 5_000n), utxo(1, 5_000n)], 1_000n, '1')).errorName).to.equal('INVALID_REQUEST');
    let bnb = 0;
    let largest = 0;
    let short = 0;
    for (let round = 0; round < 60; round++) {
      const count = 1 + rand(25);
      const available = Array.from({ length: count }, (_, i) => utxo(round * 100 + (i % 7), BigInt(200 + rand(5) * rand(40_000)), i));
      const amount = BigInt(1_000 + rand(150_000));
      const feeRate = ['1', '2.5', '7', '13.337'][rand(4)]!;
      const r = selectInputs(available, amount, feeRate);
      const shuffled = [...available].reverse();
      expect(selectInputs(shuffled, amount, feeRate), 'order of available does not matter').to.deep.equal(r);
      if (!r.ok) {
        short++;
        expect(r.shortfall > 0n).to.equal(true);
        continue;
      }
      if (r.method === 'branch-and-bound') bnb++;
      else largest++;
      const keys = r.inputs.map((o) => `${o.txHash}:${o.vout}`);
      expect(new Set(keys).size, 'no output twice').to.equal(keys.length);
      for (const o of r.inputs) expect(available).to.deep.include(o);
      expect(await craftedPlan(r.inputs, amount, feeRate)).to.deep.equal({ fee: r.fee, change: r.change });
    }
    expect(bnb, 'some changeless selections').to.be.greaterThan(0);
    expect(largest, 'some largest-first selections').to.be.greaterThan(0);
    expect(short, 'some shortfalls').to.be.greaterThan(0);
  });

  it('sizes for the request\'s addresses through the crafter', () => {
    const available = [utxo(1, 100_000n)];
    const viaCrafter = crafter.selectInputs(available, { to: p2pkhAddress(), amount: 10_000n, changeAddress: p2wpkhAddress() }, input('1'));
    expect(viaCrafter).to.deep.include({ ok: true, fee: 144n, change: 100_000n - 10_000n - 144n });
  });
});

describe('bitcoin withdrawals on a bcoin regtest node', function () {
  this.timeout(60_000);
  let node: RegtestNode;
  let transfers: BitcoinTransferNode;
  let hot: Hot;
  /** The hot wallet's outputs, as the service would track them. */
  let wallet: SpendableOutput[] = [];

  before(async function () {
    this.timeout(120_000);
    node = await startRegtest();
    transfers = bitcoinNode(adapter, { url: node.url });
    hot = await hotWallet(3);
    for (const sats of [200_000n, 150_000n, 80_000n, 60_000n, 30_000n, 20_000n]) {
      const txid = await node.send(hot.address, sats);
      wallet.push({ txHash: txid, vout: await voutPaying(txid, hot.address, sats), amount: sats });
    }
    await node.mine(1);
  });

  after(async () => {
    await node?.stop();
  });

  /** The vout of txid that pays sats to address (read from the raw transaction). */
  async function voutPaying(txid: string, address: string, sats: bigint): Promise<number> {
    const tx = Transaction.fromHex(await node.rpc<string>('getrawtransaction', [txid, false]));
    const script = toHex(addressScript(address, NETWORK));
    const vout = tx.outs.findIndex((o) => toHex(o.script) === script && o.value === sats);
    expect(vout).to.be.at.least(0);
    return vout;
  }

  /** An unspent output as the node reports it (gettxout): exact satoshis and script. */
  async function nodeOutput(txid: string, vout: number): Promise<{ sats: bigint; script: string } | null> {
    const o = await node.rpc<{ value: number; scriptPubKey: { hex: string } } | null>('gettxout', [txid, vout, true]);
    return o === null ? null : { sats: btcToSats(o.value)!, script: o.scriptPubKey.hex };
  }

  function take(...amounts: bigint[]): SpendableOutput[] {
    return amounts.map((a) => {
      const i = wallet.findIndex((o) => o.amount === a);
      expect(i, `a wallet output of ${a}`).to.be.at.least(0);
      return wallet.splice(i, 1)[0]!;
    });
  }

  /** transferInput → craft → KeyStore.sign → combine → broadcast, as the service does. */
  async function withdraw(to: string, amount: bigint, inputs: readonly SpendableOutput[]) {
    const req = request(hot, { to, amount, inputs });
    const inp = await transfers.transferInput(req);
    const unsigned = craft(req, inp);
    const signed = crafter.combine(unsigned, await signAll(hot.ref, unsigned));
    const outcome = await transfers.broadcast(signed);
    return { req, inp, unsigned, signed, outcome };
  }

  it('reads the fee rate: regtest has no estimate, so the 1 sat/vB fallback (at least the node\'s minimum)', async () => {
    const inp = await transfers.transferInput({ from: hot.address, fromPublicKey: hot.publicKey, to: p2wpkhAddress(), memo: null, contract: null, amount: 1_000n });
    expect(inp).to.deep.equal({ feeRate: '1', feeRateSource: 'fallback', confTarget: 3 });
    const noFallback = new BitcoinTransferNode(NETWORK, { url: node.url }, { fallbackFeeRate: null });
    const e = await rejected(noFallback.transferInput({ from: hot.address, fromPublicKey: hot.publicKey, to: p2wpkhAddress(), memo: null, contract: null, amount: 1_000n }), ChainRpcError);
    expect(e.message).to.match(/no fee estimate/);
    const raised = new BitcoinTransferNode(NETWORK, { url: node.url }, { minFeeRate: '2.5' });
    expect((await raised.transferInput({ from: hot.address, fromPublicKey: hot.publicKey, to: p2wpkhAddress(), memo: null, contract: null, amount: 1_000n })).feeRate).to.equal('2.5');
  });

  it('refuses a node of another network', async () => {
    const mainnet = bitcoinNode(plugin.create(BTC_MAINNET), { url: node.url });
    const e = await rejected(mainnet.status(fakeTxid(1)), ChainRpcError);
    expect(e.message).to.match(/the node is on chain "regtest", this chain is mainnet/);
    expect(e.message).to.not.contain(node.apiKey);
  });

  it('reports the hot wallet\'s confirmed balance and unspent outputs (bcoin address index)', async () => {
    const listed = await transfers.listUnspent(hot.address);
    expect(listed.map(({ txHash, vout, amount }) => ({ txHash, vout, amount })).sort((a, b) => (a.txHash < b.txHash ? -1 : 1)))
      .to.deep.equal([...wallet].sort((a, b) => (a.txHash < b.txHash ? -1 : 1)));
    expect(listed.every((u) => u.height !== null && !u.coinbase)).to.equal(true);
    expect(await transfers.balance(hot.address, null)).to.equal(540_000n);
    await rejected(transfers.balance(hot.address, 'USDT'), ChainTransferError);
  });

  it('unspentOutputs (the core\'s UtxoTransferNode method): the listed outputs with their confirmations, a mempool output at 0, none a mempool transaction spends', async () => {
    const key = (o: SpendableOutput) => `${o.txHash}:${o.vout}:${o.amount}`;
    const tip = BigInt(await node.rpc<number>('getblockcount'));
    const before = await transfers.unspentOutputs(hot.address);
    expect(before.map(key).sort()).to.deep.equal(wallet.map(key).sort());
    // funded in one block, the tip
    expect(before.map((u) => u.confirmations)).to.deep.equal(wallet.map(() => 1));
    await node.mine(2);
    expect((await transfers.unspentOutputs(hot.address)).every((u) => u.confirmations === 3)).to.equal(true);
    // a withdrawal in the mempool: its input is no longer listed (bcoin), its change is, at 0 confirmations
    const w = await withdraw(p2wpkhAddress(), 7_000n, take(200_000n));
    expect(w.outcome.outcome).to.equal('ACCEPTED');
    const change = transferChange(w.unsigned)!;
    const pending = await transfers.unspentOutputs(hot.address);
    expect(pending.map(key).sort()).to.deep.equal([...wallet, change].map(key).sort());
    expect(pending.find((u) => u.txHash === change.txHash)).to.deep.equal({ ...change, confirmations: 0 });
    expect(pending.filter((u) => u.txHash !== change.txHash).every((u) => u.confirmations === 3)).to.equal(true);
    await node.mine(1);
    expect((await transfers.unspentOutputs(hot.address)).find((u) => u.txHash === change.txHash)).to.deep.equal({ ...change, confirmations: 1 });
    expect(BigInt(await node.rpc<number>('getblockcount'))).to.equal(tip + 3n);
    // the tests below pay from these amounts: a fresh 200 000 output back in place of the one spent
    const txid = await node.send(hot.address, 200_000n);
    wallet.push(change, { txHash: txid, vout: await voutPaying(txid, hot.address, 200_000n), amount: 200_000n });
    await node.mine(1);
    await rejected(transfers.unspentOutputs('tb1qcr8te4kr609gcawutmrza0j4xv80jy8zmfp6l0'), ChainTransferError);
  });

  it('pays a P2WPKH destination: exact amount received, exact change back, fee = the difference = maxFee; UNKNOWN → PENDING → MINED', async () => {
    const to = await node.newAddress();
    const inputs = take(200_000n);
    const req = request(hot, { to, amount: 123_456n, inputs });
    const unsigned = craft(req, await transfers.transferInput(req));
    expect(await transfers.status(unsigned.txHash!)).to.deep.equal({ state: 'UNKNOWN' });
    const signed = crafter.combine(unsigned, await signAll(hot.ref, unsigned));
    expect(await transfers.broadcast(signed)).to.deep.equal({ outcome: 'ACCEPTED', txHash: unsigned.txHash });
    expect(await transfers.status(signed.txHash)).to.deep.equal({ state: 'PENDING' });

    const [block] = await node.mine(1);
    const mined = await transfers.status(signed.txHash);
    expect(mined).to.deep.include({ state: 'MINED', blockHash: block, confirmations: 1, succeeded: true, fee: unsigned.maxFee });
    expect(await nodeOutput(signed.txHash, 0)).to.deep.equal({ sats: 123_456n, script: toHex(addressScript(to, NETWORK)) });
    const change = transferChange(unsigned)!;
    expect(await nodeOutput(signed.txHash, 1)).to.deep.equal({ sats: change.amount, script: toHex(addressScript(hot.address, NETWORK)) });
    expect(200_000n - 123_456n - change.amount).to.equal(unsigned.maxFee);
    // 1 input, 2 P2WPKH outputs at 1 sat/vB.
    expect(unsigned.maxFee).to.equal(141n);
    const wallet0 = await node.walletRpc<number>('getreceivedbyaddress', [to, 0]);
    expect(btcToSats(wallet0), 'the node wallet received it').to.equal(123_456n);
    await node.mine(2);
    expect(await transfers.status(signed.txHash)).to.deep.include({ state: 'MINED', confirmations: 3 });
    wallet.push(change);
  });

  it('pays P2TR and P2PKH destinations, two inputs in one transaction, and spends the change of a previous withdrawal', async () => {
    const p2tr = p2trAddress();
    const first = await withdraw(p2tr, 170_000n, take(150_000n, 80_000n));
    expect(first.outcome.outcome).to.equal('ACCEPTED');
    expect(first.unsigned.payloads).to.have.length(2);
    // 2 inputs, P2TR payment + P2WPKH change: 11 + 43 + 31 + 136 = 221 vB.
    expect(first.unsigned.maxFee).to.equal(221n);
    const change = transferChange(first.unsigned)!;
    expect(change.amount).to.equal(230_000n - 170_000n - 221n);

    // The change, still unconfirmed, pays a P2PKH address.
    const p2pkh = p2pkhAddress();
    const second = await withdraw(p2pkh, 40_000n, [change]);
    expect(second.outcome.outcome).to.equal('ACCEPTED');
    await node.mine(1);
    for (const [w, to, amount] of [[first, p2tr, 170_000n], [second, p2pkh, 40_000n]] as const) {
      const state = await transfers.status(w.signed.txHash);
      expect(state).to.deep.include({ state: 'MINED', confirmations: 1, fee: w.unsigned.maxFee });
      expect(await nodeOutput(w.signed.txHash, 0)).to.deep.equal({ sats: amount, script: toHex(addressScript(to, NETWORK)) });
    }
    wallet.push(transferChange(second.unsigned)!);
  });

  it('gives dust change to the fee: one output, fee = the difference', async () => {
    // 60 000 in, P2WPKH payment: no change if 60 000 − amount − 141 < 294.
    const amount = 60_000n - 141n - 200n;
    const w = await withdraw(await node.newAddress(), amount, take(60_000n));
    expect(w.outcome.outcome).to.equal('ACCEPTED');
    expect(transferChange(w.unsigned)).to.equal(null);
    expect(w.unsigned.maxFee).to.equal(341n);
    await node.mine(1);
    expect(await transfers.status(w.signed.txHash)).to.deep.include({ state: 'MINED', fee: 341n });
    expect(Transaction.fromBuffer(w.signed.raw).outs).to.have.length(1);
    expect(await nodeOutput(w.signed.txHash, 0)).to.deep.include({ sats: amount });
  });

  it('answers inputs that do not cover the withdrawal with INSUFFICIENT_INPUTS and the shortfall; selectInputs over the tracked outputs agrees', async () => {
    const req = request(hot, { to: p2wpkhAddress(), amount: 30_000n, inputs: [wallet.find((o) => o.amount === 30_000n)!] });
    expect(crafter.craft(req, input('1'))).to.deep.equal({ ok: false, reason: 'INSUFFICIENT_INPUTS', shortfall: 110n });
    const total = wallet.reduce((s, o) => s + o.amount, 0n);
    const tooMuch = selectInputs(wallet, total, '1');
    expect(tooMuch).to.deep.equal({ ok: false, shortfall: feeForVsize(p2wpkhSpendVsize(wallet.length, [22]), 1000n) });
  });

  it('answers ALREADY_KNOWN to a second broadcast, in the mempool and once mined', async () => {
    const w = await withdraw(p2wpkhAddress(), 5_000n, take(20_000n));
    expect(w.outcome).to.deep.equal({ outcome: 'ACCEPTED', txHash: w.signed.txHash });
    expect(await transfers.broadcast(w.signed)).to.deep.equal({ outcome: 'ALREADY_KNOWN', txHash: w.signed.txHash });
    await node.mine(1);
    expect(await transfers.broadcast(w.signed)).to.deep.equal({ outcome: 'ALREADY_KNOWN', txHash: w.signed.txHash });
    wallet.push(transferChange(w.unsigned)!);
  });

  it('answers REJECTED to a transaction spending an output already spent', async () => {
    const [spent] = take(30_000n);
    const w = await withdraw(p2wpkhAddress(), 10_000n, [spent!]);
    expect(w.outcome.outcome).to.equal('ACCEPTED');
    await node.mine(1);
    // Another transaction (another destination) from the same output.
    const again = await withdraw(p2wpkhAddress(), 10_000n, [spent!]);
    expect(again.signed.txHash).to.not.equal(w.signed.txHash);
    expect(again.outcome.outcome).to.equal('REJECTED');
    expect(again.outcome.outcome === 'REJECTED' && again.outcome.reason).to.match(/bad-txns-inputs-missingorspent/);
    expect(await transfers.status(again.signed.txHash)).to.deep.equal({ state: 'UNKNOWN' });
    wallet.push(transferChange(w.unsigned)!);
  });

  it('leaves the node\'s view of the hot wallet equal to the outputs the service tracked', async () => {
    await node.mine(1);
    const listed = await transfers.listUnspent(hot.address);
    const key = (o: SpendableOutput) => `${o.txHash}:${o.vout}:${o.amount}`;
    expect(listed.map(key).sort()).to.deep.equal(wallet.map(key).sort());
    expect(await transfers.balance(hot.address, null)).to.equal(wallet.reduce((s, o) => s + o.amount, 0n));
  });
});

describe('BitcoinTransferNode against Bitcoin Core answers (recorded shapes)', () => {
  type Answer = { result: unknown } | { error: { code: number; message: string } };
  let server: ReplayServer;
  let answers: Record<string, (params: unknown[]) => Answer>;
  const mainnet = resolveNetwork(BTC_MAINNET);

  before(async () => {
    server = await startReplayServer((req) => {
      const body = JSON.parse(req.body) as { id: number; method: string; params: unknown[] } | Array<{ id: number; method: string; params: unknown[] }>;
      const one = (c: { id: number; method: string; params: unknown[] }) => {
        const a = answers[c.method]?.(c.params) ?? { error: { code: -32601, message: 'Method not found' } };
        return { id: c.id, result: 'result' in a ? a.result : null, error: 'error' in a ? a.error : null };
      };
      if (Array.isArray(body)) return { body: body.map(one) };
      const r = one(body);
      // Bitcoin Core answers a single call's error with HTTP 500 (404 for an unknown method).
      return { status: r.error ? (r.error.code === -32601 ? 404 : 500) : 200, body: r };
    });
  });
  after(async () => server?.close());
  beforeEach(() => {
    answers = { getblockchaininfo: () => ({ result: { chain: 'main', blocks: 900_000 } }) };
  });

  const mainnetNode = (options = {}) => new BitcoinTransferNode(mainnet, { url: server.url }, { attempts: 1, ...options });

  async function signedMainnet() {
    const key = randomKey();
    const codec = bitcoinCrafter(plugin.create(BTC_MAINNET));
    const from = plugin.create(BTC_MAINNET).address.addressFromPublicKey({ curve: 'secp256k1', bytes: key });
    const unsigned = crafted(codec, { from, fromPublicKey: { curve: 'secp256k1', bytes: key }, to: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', memo: null, contract: null, amount: 10_000n, inputs: [utxo(1, 50_000n)], changeAddress: from }, input('3'));
    // Not a valid signature: the mock node does not check; the classification is what is tested.
    const tx = Transaction.fromBuffer(Psbt.fromBase64((unsigned.state as { psbt: string }).psbt).data.getTransaction());
    return { txHash: unsigned.txHash!, raw: tx.toBuffer() };
  }

  it('reads estimatesmartfee exactly, raised to the mempool minimum; no estimate and no fallback (mainnet) throws', async () => {
    answers.estimatesmartfee = () => ({ result: { feerate: 0.00012345, blocks: 3 } });
    answers.getmempoolinfo = () => ({ result: { mempoolminfee: 0.00001, minrelaytxfee: 0.00001 } });
    const req = { from: 'x', fromPublicKey: { curve: 'secp256k1' as const, bytes: new Uint8Array(33) }, to: 'y', memo: null, contract: null, amount: 1n };
    expect(await mainnetNode().transferInput(req)).to.deep.equal({ feeRate: '12.345', feeRateSource: 'estimatesmartfee', confTarget: 3 });
    answers.getmempoolinfo = () => ({ result: { mempoolminfee: 0.0002, minrelaytxfee: 0.00001 } });
    expect(await mainnetNode().transferInput(req)).to.deep.include({ feeRate: '20', feeRateSource: 'minimum' });
    answers.estimatesmartfee = () => ({ result: { errors: ['Insufficient data or no feerate found'], blocks: 3 } });
    expect((await rejected(mainnetNode().transferInput(req), ChainRpcError)).message).to.match(/no fee estimate for 3 blocks/);
    expect(await mainnetNode({ fallbackFeeRate: '4' }).transferInput(req)).to.deep.include({ feeRate: '20', feeRateSource: 'minimum' });
    expect(await mainnetNode({ fallbackFeeRate: '40' }).transferInput(req)).to.deep.include({ feeRate: '40', feeRateSource: 'fallback' });
  });

  it('maps sendrawtransaction refusals: already in chain → ALREADY_KNOWN, policy and spent inputs → REJECTED with the node\'s reason, others thrown', async () => {
    const tx = await signedMainnet();
    answers.getrawtransaction = () => ({ error: { code: -5, message: 'No such mempool or blockchain transaction. Use gettransaction for wallet transactions.' } });
    const refusals: Array<[number, string, string]> = [
      [-27, 'Transaction outputs already in utxo set', 'ALREADY_KNOWN'],
      [-27, 'Transaction already in block chain', 'ALREADY_KNOWN'],
      [-26, 'txn-already-in-mempool', 'ALREADY_KNOWN'],
      [-25, 'bad-txns-inputs-missingorspent', 'REJECTED'],
      [-26, 'min relay fee not met, 100 < 141', 'REJECTED'],
      [-26, 'insufficient fee, rejecting replacement', 'REJECTED'],
      [-26, 'txn-mempool-conflict', 'REJECTED'],
      [-26, 'dust', 'REJECTED'],
      [-26, 'mandatory-script-verify-flag-failed (Signature must be zero for failed CHECK(MULTI)SIG operation)', 'REJECTED'],
      [-25, 'Fee exceeds maximum configured by user (e.g. -maxtxfee, maxfeerate)', 'REJECTED'],
      [-22, 'TX decode failed', 'REJECTED'],
    ];
    for (const [code, message, outcome] of refusals) {
      answers.sendrawtransaction = () => ({ error: { code, message } });
      const r = await mainnetNode().broadcast(tx);
      expect(r.outcome, message).to.equal(outcome);
      if (r.outcome === 'REJECTED') expect(r.reason).to.equal(message);
      if (r.outcome === 'ALREADY_KNOWN') expect(r.txHash).to.equal(tx.txHash);
    }
    answers.sendrawtransaction = () => ({ error: { code: -28, message: 'Loading block index…' } });
    expect((await rejected(mainnetNode().broadcast(tx), ChainRpcError)).rpcCode).to.equal(-28);
    expect(classifyBroadcastRefusal(-1, 'already have transaction')).to.equal('ALREADY_KNOWN');
    expect(classifyBroadcastRefusal(-1, 'something else')).to.equal(null);

    // Accepted: bitcoind holds it in its mempool from then on.
    let sent = false;
    answers.sendrawtransaction = () => {
      sent = true;
      return { result: tx.txHash };
    };
    answers.getrawtransaction = () => (sent ? { result: { txid: tx.txHash, hex: toHex(tx.raw) } } : { error: { code: -5, message: 'No such mempool or blockchain transaction' } });
    expect(await mainnetNode().broadcast(tx)).to.deep.equal({ outcome: 'ACCEPTED', txHash: tx.txHash });
    // Already in the mempool: not sent again.
    sent = false;
    answers.getrawtransaction = () => ({ result: { txid: tx.txHash, hex: toHex(tx.raw) } });
    expect(await mainnetNode().broadcast(tx)).to.deep.equal({ outcome: 'ALREADY_KNOWN', txHash: tx.txHash });
    expect(sent).to.equal(false);
    await rejected(mainnetNode().broadcast({ ...tx, txHash: fakeTxid(9) }), TypeError);
  });

  it('throws for a node answering success without holding the transaction nor refusing it', async () => {
    const tx = await signedMainnet();
    answers.getrawtransaction = () => ({ error: { code: -5, message: 'No such mempool or blockchain transaction' } });
    answers.sendrawtransaction = () => ({ result: tx.txHash });
    answers.gettxout = () => ({ result: { value: 0.0005, confirmations: 10 } });
    const e = await rejected(mainnetNode({ acceptTimeoutMs: 50 }).broadcast(tx), ChainRpcError);
    expect(e.message).to.match(/does not hold it after 50 ms/);
  });

  it('reads scantxoutset exactly and counts only mature coinbase outputs in the balance', async () => {
    const address = 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu';
    const script = toHex(addressScript(address, mainnet));
    answers.scantxoutset = (params) => {
      expect(params).to.deep.equal(['start', [`addr(${address})`]]);
      return {
        result: {
          success: true, height: 900_000, total_amount: 20999999.9769 + 0.1 + 6.25,
          unspents: [
            { txid: fakeTxid(1), vout: 0, scriptPubKey: script, amount: 20999999.9769, coinbase: false, height: 800_000 },
            { txid: fakeTxid(2), vout: 5, scriptPubKey: script, amount: 0.1, coinbase: false, height: 899_999 },
            { txid: fakeTxid(3), vout: 0, scriptPubKey: script, amount: 6.25, coinbase: true, height: 899_950 },
            { txid: fakeTxid(4), vout: 0, scriptPubKey: script, amount: 3.125, coinbase: true, height: 899_901 },
          ],
        },
      };
    };
    answers.getblockcount = () => ({ result: 900_000 });
    const node = mainnetNode();
    expect(await node.listUnspent(address)).to.deep.equal([
      { txHash: fakeTxid(1), vout: 0, amount: 2_099_999_997_690_000n, height: 800_000n, coinbase: false },
      { txHash: fakeTxid(2), vout: 5, amount: 10_000_000n, height: 899_999n, coinbase: false },
      { txHash: fakeTxid(3), vout: 0, amount: 625_000_000n, height: 899_950n, coinbase: true },
      { txHash: fakeTxid(4), vout: 0, amount: 312_500_000n, height: 899_901n, coinbase: true },
    ]);
    // The coinbase at 899 950 has 51 confirmations (immature); the one at 899 901 has 100.
    expect(await node.balance(address, null)).to.equal(2_099_999_997_690_000n + 10_000_000n + 312_500_000n);
    await rejected(node.listUnspent('tb1qcr8te4kr609gcawutmrza0j4xv80jy8zmfp6l0'), ChainTransferError);
  });

  it('unspentOutputs: confirmations from the block count read after the scan, immature coinbase outputs left out', async () => {
    const address = 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu';
    const script = toHex(addressScript(address, mainnet));
    let calls: string[] = [];
    answers.scantxoutset = () => {
      calls.push('scantxoutset');
      return {
        result: {
          success: true, height: 900_000, total_amount: 0,
          unspents: [
            { txid: fakeTxid(1), vout: 0, scriptPubKey: script, amount: 0.5, coinbase: false, height: 800_000 },
            { txid: fakeTxid(2), vout: 5, scriptPubKey: script, amount: 0.00000546, coinbase: false, height: 900_001 },
            { txid: fakeTxid(3), vout: 0, scriptPubKey: script, amount: 6.25, coinbase: true, height: 899_903 },
            { txid: fakeTxid(4), vout: 1, scriptPubKey: script, amount: 3.125, coinbase: true, height: 899_902 },
          ],
        },
      };
    };
    // a block arrived after the scan: 900 001 is the tip
    answers.getblockcount = () => {
      calls.push('getblockcount');
      return { result: 900_001 };
    };
    const node = mainnetNode();
    expect(await node.unspentOutputs(address)).to.deep.equal([
      { txHash: fakeTxid(1), vout: 0, amount: 50_000_000n, confirmations: 100_002 },
      { txHash: fakeTxid(2), vout: 5, amount: 546n, confirmations: 1 },
      // the coinbase at 899 903 has 99 confirmations: left out; the one at 899 902 has 100
      { txHash: fakeTxid(4), vout: 1, amount: 312_500_000n, confirmations: 100 },
    ]);
    expect(calls).to.deep.equal(['scantxoutset', 'getblockcount']);
    // the tip went back below an output's block between the two reads (a reorg): still counted as in a block
    answers.getblockcount = () => ({ result: 900_000 });
    expect((await node.unspentOutputs(address)).find((u) => u.txHash === fakeTxid(2))).to.deep.equal({ txHash: fakeTxid(2), vout: 5, amount: 546n, confirmations: 1 });
    // nothing listed: no block count needed
    calls = [];
    answers.scantxoutset = () => {
      calls.push('scantxoutset');
      return { result: { success: true, height: 900_000, total_amount: 0, unspents: [] } };
    };
    expect(await node.unspentOutputs(address)).to.deep.equal([]);
    expect(calls).to.deep.equal(['scantxoutset']);
    answers.scantxoutset = () => ({ result: { success: true, height: 900_000, total_amount: 0.5, unspents: [{ txid: fakeTxid(1), vout: 0, scriptPubKey: script, amount: 0.5, coinbase: false, height: 800_000 }] } });
    answers.getblockcount = () => ({ result: 'tip' });
    expect((await rejected(node.unspentOutputs(address), ChainRpcError)).message).to.match(/getblockcount/);
  });

  it('status: MINED with confirmations and the fee from the inputs\' transactions; a node without txindex is an error, not UNKNOWN', async () => {
    const parent = new Transaction();
    parent.version = 2;
    parent.addInput(Buffer.from(fakeTxid(5), 'hex'), 0, 0xffffffff);
    parent.addOutput(addressScript('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', mainnet), 50_000n);
    const child = new Transaction();
    child.version = 2;
    child.addInput(Buffer.from(parent.getId(), 'hex').reverse(), 0, 0xfffffffd);
    child.addOutput(addressScript('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', mainnet), 49_000n);
    const block = fakeTxid(77);
    answers.getrawtransaction = (params) => {
      if (params[0] === child.getId()) return { result: { txid: child.getId(), hex: child.toHex(), blockhash: block } };
      if (params[0] === parent.getId()) return { result: parent.toHex() };
      return { error: { code: -5, message: 'No such mempool or blockchain transaction. Use -txindex or provide a block hash to enable blockchain transaction queries.' } };
    };
    answers.getblockheader = () => ({ result: { hash: block, height: 899_990, confirmations: 11 } });
    answers.getblockhash = () => ({ result: block });
    expect(await mainnetNode().status(child.getId())).to.deep.equal({ state: 'MINED', blockHeight: 899_990n, blockHash: block, confirmations: 11, succeeded: true, fee: 1_000n });
    // Off the best chain.
    answers.getblockhash = () => ({ result: fakeTxid(78) });
    expect(await mainnetNode().status(child.getId())).to.deep.equal({ state: 'UNKNOWN' });
    // bitcoind without -txindex.
    expect((await rejected(mainnetNode().status(fakeTxid(6)), ChainRpcError)).message).to.match(/needs a transaction index/);
  });
});
