import { crypto as btcCrypto, Psbt, script as btcScript, Transaction } from 'bitcoinjs-lib';
import { requirePlainTransfer,
  ChainTransferError, type CraftResult, type JsonValue, type KeySignature, type SignedTransaction, type SpendableOutput, type TransferInput,
  type UnsignedTransfer, type UtxoCrafter, type UtxoPaymentRequest, type UtxoTransferRequest,
} from '@wcs/core';
import { BitcoinAddressCodec } from './address';
import { compressedKey, consolidationVsize, inputSigners, planConsolidation, P2WPKH_SCRIPT_LENGTH, type InputSigner } from './consolidate';
import { isLowS, splitSignature, verifyDigest } from './ecdsa';
import type { BitcoinNetwork } from './network';
import { planSpend, selectInputs, type InputSelection, type SelectionOptions } from './select';
import {
  addressScript, checkAmount, checkOutputs, dustThreshold, feeForVsize, invalid, p2wpkhScript,
  p2wpkhScriptCode, p2wpkhSpendWeight, parseFeeRate, sum, MAX_STANDARD_WEIGHT, RBF_SEQUENCE,
} from './spend';

// ---- The crafter ------------------------------------------------------------------------------

/**
 * Version tags of UnsignedTransfer.state: /1 when `from`'s key signs every input (a payout from
 * the hot wallet, a consolidation of `from`'s own outputs), /2 when some input is another key's
 * (SpendableOutput.owner): the key of each input.
 */
const STATE_FORMAT = 'wcs-btc-p2wpkh/1';
const STATE_FORMAT_KEYS = 'wcs-btc-p2wpkh/2';

/** UnsignedTransfer.state of this adapter (JSON). */
type CraftState = {
  /** BIP-174 PSBT (base64) of the unsigned transaction, each input with its witnessUtxo. */
  readonly psbt: string;
  /** Decimal satoshis. */
  readonly fee: string;
  /** The change output (vout 1), or null. */
  readonly change: { readonly vout: number; readonly amount: string } | null;
} & (
  /** The key (33 bytes, hex) every input is signed with. */
  | { readonly format: typeof STATE_FORMAT; readonly publicKey: string }
  /** The key (33 bytes, hex) of each input, in order. */
  | { readonly format: typeof STATE_FORMAT_KEYS; readonly keys: readonly string[] }
);

const KEY_HEX_RE = /^0[23][0-9a-f]{64}$/;
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

/** Txid (display order) → the input's hash field (internal byte order). */
function txidBytes(txid: string): Uint8Array {
  return Uint8Array.from(Buffer.from(txid, 'hex').reverse());
}

function readState(unsigned: UnsignedTransfer): CraftState {
  const s = unsigned?.state as { [k: string]: unknown } | null;
  const change = s?.['change'] as { vout?: unknown; amount?: unknown } | null | undefined;
  const keys = s?.['keys'];
  const ok = s !== null && typeof s === 'object' && !Array.isArray(s) && typeof s['psbt'] === 'string'
    && ((s['format'] === STATE_FORMAT && typeof s['publicKey'] === 'string' && KEY_HEX_RE.test(s['publicKey']))
      || (s['format'] === STATE_FORMAT_KEYS && Array.isArray(keys) && keys.length > 0 && keys.every((k) => typeof k === 'string' && KEY_HEX_RE.test(k))))
    && typeof s['fee'] === 'string' && /^\d+$/.test(s['fee'])
    && (change === null || (typeof change === 'object' && change.vout === 1 && typeof change.amount === 'string' && /^\d+$/.test(change.amount)));
  if (!ok) throw new ChainTransferError('INVALID_STATE', `the unsigned transfer's state is not a ${STATE_FORMAT} or ${STATE_FORMAT_KEYS} state made by craft()`);
  return s as unknown as CraftState;
}

/**
 * The change output of a crafted transfer, as the service records it in its UTXO table once the
 * transaction is broadcast (txid known before signing), or null when craft() made no change.
 */
export function transferChange(unsigned: UnsignedTransfer): SpendableOutput | null {
  const state = readState(unsigned);
  if (state.change === null) return null;
  if (typeof unsigned.txHash !== 'string') throw new ChainTransferError('INVALID_STATE', 'the unsigned transfer has no txHash');
  return { txHash: unsigned.txHash, vout: state.change.vout, amount: BigInt(state.change.amount) };
}

/**
 * Offline withdrawal crafting for P2WPKH wallets (BIP-84 keys: the hot wallet's, deposit keys').
 *
 * craft(): a version-2 transaction, locktime 0, spending `request.inputs` in the given order (all
 * P2WPKH outputs: of `request.fromPublicKey`, or of the input's `owner` key when it has one; each
 * input signalling BIP-125 RBF with sequence 0xfffffffd). fee = input.feeRate (sat/vB, 3 decimals
 * at most) × the virtual size with 72-byte signatures, rounded up; maxFee = that fee. Returns
 * `{ ok: true, unsigned }`, or `{ ok: false, reason: 'INSUFFICIENT_INPUTS', shortfall }` when the
 * inputs of a payment do not cover amount + fee (the expected outcome: the service waits for more
 * confirmed outputs); every other refusal is a thrown ChainTransferError (spend.ts).
 * - A payment (UtxoPaymentRequest): `amount` to `to` at vout 0 and the change, when it is at least
 *   its dust threshold, to `changeAddress` at vout 1 (else it goes to the fee).
 * - A consolidation (UtxoConsolidationRequest, `subtractFee: true`): `amount` must be the sum of
 *   the inputs; one output, to `to`, of amount − fee (consolidationVsize); no change (a
 *   `changeAddress` is refused). A payment below the destination's dust threshold is refused
 *   with DUST_AFTER_FEE.
 * payloads: the BIP-143 SIGHASH_ALL digest of each input (it commits to the input's amount: a
 * wrong amount in the request makes the signature invalid on chain, never a different fee).
 * signers: the address whose key signs each payload (the input's owner, else `from`).
 * txHash: the txid, which segwit makes independent of the signatures. state: the PSBT (base64),
 * the key (or each input's key), the fee and the change output. Same request and input → same bytes.
 *
 * combine(): checks the payloads are those of the PSBT, each signature (r || s, low S) against
 * its digest and its input's key, writes DER signature + SIGHASH_ALL and the key into each
 * witness, and returns the raw transaction and its txid (the one craft() announced).
 */
export class BitcoinTransferCrafter implements UtxoCrafter {
  private readonly codec: BitcoinAddressCodec;

  constructor(private readonly network: BitcoinNetwork) {
    this.codec = new BitcoinAddressCodec(network);
  }

  /** The output script of a withdrawal destination or change address of this network; throws INVALID_REQUEST when invalid. */
  scriptOf(address: string, field = 'address'): Uint8Array {
    const v = this.codec.validate(address, null);
    if (!v.valid) throw invalid(`${field}: ${v.reason}`);
    return addressScript(v.normalized, this.network);
  }

  /**
   * UtxoCrafter.selectInputs: selectInputs() for a payment's destination and change address (their
   * script sizes and the change's dust threshold), at the transfer input's fee rate. Its result is
   * core's InputSelectionResult, with the fee, change and method of the selection besides.
   */
  selectInputs(available: readonly SpendableOutput[], request: Pick<UtxoPaymentRequest, 'to' | 'amount' | 'changeAddress'>, input: TransferInput, options: Omit<SelectionOptions, 'paymentScript' | 'changeScript'> = {}): InputSelection {
    if (typeof request.changeAddress !== 'string') throw invalid('changeAddress is required');
    return selectInputs(available, request.amount, input['feeRate'] as string, {
      ...options,
      paymentScript: this.scriptOf(request.to, 'to'),
      changeScript: this.scriptOf(request.changeAddress, 'changeAddress'),
    });
  }

  /**
   * The fee craft() charges a consolidation (`subtractFee`) of `inputCount` P2WPKH inputs to `to`
   * (default: a P2WPKH address) at the transfer input's fee rate: ⌈feeRate × consolidationVsize⌉,
   * the `maxFee` craft() then announces. Pure. Each input adds 68 vB × the rate
   * (P2WPKH_INPUT_VBYTES): an output worth no more than that costs more to collect than it brings.
   */
  consolidationFee(inputCount: number, input: TransferInput, to?: string): bigint {
    if (!Number.isInteger(inputCount) || inputCount < 1) throw new RangeError('inputCount must be a positive integer');
    if (input === null || typeof input !== 'object') throw invalid('the transfer input must be an object with feeRate');
    const scriptLength = to === undefined ? P2WPKH_SCRIPT_LENGTH : this.scriptOf(to, 'to').length;
    return feeForVsize(consolidationVsize(inputCount, scriptLength), parseFeeRate(input['feeRate']));
  }

  craft(request: UtxoTransferRequest, input: TransferInput): CraftResult {
    if (request.memo !== null) throw invalid('bitcoin transfers carry no memo (memo must be null)');
    if (request.contract !== null) throw invalid('bitcoin transfers are native BTC only (contract must be null)');
    requirePlainTransfer(request, 'bitcoin');
    // The request's type says `subtractFee` is true, false or absent; a caller in plain JS may send anything.
    if (request.subtractFee !== undefined && typeof request.subtractFee !== 'boolean') throw invalid('subtractFee must be a boolean');
    checkAmount(request.amount);
    const publicKey = compressedKey(request.fromPublicKey, 'fromPublicKey');
    let own: string;
    try {
      own = this.codec.addressFromPublicKey({ curve: 'secp256k1', bytes: publicKey });
    } catch (e) {
      throw invalid(`fromPublicKey: ${(e as Error).message}`, e);
    }
    if (request.from !== own) throw invalid(`from ${JSON.stringify(request.from)} is not the P2WPKH address of fromPublicKey (${own})`);
    const toScript = this.scriptOf(request.to, 'to');
    // A payment's change script; null for a consolidation, which makes no change: a changeAddress
    // sent with one (the type forbids it; a plain JS caller may) is refused, not ignored.
    let changeScript: Uint8Array | null = null;
    if (request.subtractFee === true) {
      if (request.changeAddress !== undefined) throw invalid('a consolidation (subtractFee) makes no change: changeAddress must be absent');
    } else {
      if (typeof request.changeAddress !== 'string') throw invalid('changeAddress is required');
      changeScript = this.scriptOf(request.changeAddress, 'changeAddress');
    }
    const inputs = request.inputs;
    if (!Array.isArray(inputs) || inputs.length === 0) throw invalid('inputs: at least one output to spend');
    checkOutputs(inputs, 'inputs');
    const signers = inputSigners(inputs, { address: own, publicKey }, this.codec);
    if (input === null || typeof input !== 'object') throw invalid('the transfer input must be an object with feeRate');
    const satPerKvB = parseFeeRate(input['feeRate']);
    const total = sum(inputs);

    let fee: bigint;
    let payment: bigint;
    let change: { readonly script: Uint8Array; readonly amount: bigint } | null = null;
    if (changeScript === null) {
      ({ fee, payment } = planConsolidation(total, inputs.length, request.amount, satPerKvB, toScript));
    } else {
      const dust = dustThreshold(toScript);
      if (request.amount < dust) {
        throw new ChainTransferError('AMOUNT_BELOW_DUST', `amount ${request.amount} sat is below the dust threshold of the destination's output type (${dust} sat)`);
      }
      const planned = planSpend(total, inputs.length, request.amount, satPerKvB, {
        paymentScriptLength: toScript.length,
        changeScriptLength: changeScript.length,
        changeDust: dustThreshold(changeScript),
      });
      // The expected outcome of a payment whose inputs fall short: returned, never thrown.
      if (!planned.ok) return { ok: false, reason: 'INSUFFICIENT_INPUTS', shortfall: planned.shortfall };
      fee = planned.plan.fee;
      payment = request.amount;
      if (planned.plan.change !== null) change = { script: changeScript, amount: planned.plan.change };
    }
    const weight = p2wpkhSpendWeight(inputs.length, change === null ? [toScript.length] : [toScript.length, change.script.length]);
    if (weight > MAX_STANDARD_WEIGHT) throw invalid(`${inputs.length} inputs make a transaction of ${weight} weight units, above the standard ${MAX_STANDARD_WEIGHT}`);

    const scripts = new Map<InputSigner, { prevScript: Uint8Array; scriptCode: Uint8Array }>();
    const scriptsOf = (signer: InputSigner) => {
      let s = scripts.get(signer);
      if (!s) {
        const keyHash = btcCrypto.hash160(signer.publicKey);
        s = { prevScript: p2wpkhScript(keyHash), scriptCode: p2wpkhScriptCode(keyHash) };
        scripts.set(signer, s);
      }
      return s;
    };
    const tx = new Transaction();
    tx.version = 2;
    tx.locktime = 0;
    const psbt = new Psbt();
    psbt.setVersion(2);
    psbt.setLocktime(0);
    inputs.forEach((o, i) => {
      tx.addInput(txidBytes(o.txHash), o.vout, RBF_SEQUENCE);
      psbt.addInput({ hash: o.txHash, index: o.vout, sequence: RBF_SEQUENCE, witnessUtxo: { script: scriptsOf(signers[i]!).prevScript, value: o.amount } });
    });
    tx.addOutput(toScript, payment);
    psbt.addOutput({ script: toScript, value: payment });
    if (change !== null) {
      tx.addOutput(change.script, change.amount);
      psbt.addOutput({ script: change.script, value: change.amount });
    }
    const payloads = inputs.map((o, i) => tx.hashForWitnessV0(i, scriptsOf(signers[i]!).scriptCode, o.amount, Transaction.SIGHASH_ALL));
    const common = { psbt: psbt.toBase64(), fee: fee.toString(), change: change === null ? null : { vout: 1, amount: change.amount.toString() } };
    const state: CraftState = signers.every((s) => s.address === own)
      ? { format: STATE_FORMAT, psbt: common.psbt, publicKey: hex(publicKey), fee: common.fee, change: common.change }
      : { format: STATE_FORMAT_KEYS, psbt: common.psbt, keys: signers.map((s) => hex(s.publicKey)), fee: common.fee, change: common.change };
    return { ok: true, unsigned: { payloads, maxFee: fee, txHash: tx.getId(), state: state as unknown as JsonValue, signers: signers.map((s) => s.address) } };
  }

  combine(unsigned: UnsignedTransfer, signatures: readonly KeySignature[]): SignedTransaction {
    const state = readState(unsigned);
    let psbt: Psbt;
    let tx: Transaction;
    try {
      psbt = Psbt.fromBase64(state.psbt);
      tx = Transaction.fromBuffer(psbt.data.getTransaction());
    } catch (e) {
      throw new ChainTransferError('INVALID_STATE', `the unsigned transfer's PSBT does not decode (${(e as Error).message})`, { cause: e });
    }
    if (tx.getId() !== unsigned.txHash) throw new ChainTransferError('INVALID_STATE', 'the unsigned transfer\'s txHash is not the txid of its PSBT');
    const n = psbt.inputCount;
    if (!Array.isArray(unsigned.payloads) || unsigned.payloads.length !== n) throw new ChainTransferError('INVALID_STATE', `the unsigned transfer has ${unsigned.payloads?.length} payloads for ${n} inputs`);
    const keys = state.format === STATE_FORMAT ? new Array<string>(n).fill(state.publicKey) : state.keys;
    if (keys.length !== n) throw new ChainTransferError('INVALID_STATE', `the unsigned transfer's state has ${keys.length} keys for ${n} inputs`);
    if (unsigned.signers !== undefined) {
      if (!Array.isArray(unsigned.signers) || unsigned.signers.length !== n) throw new ChainTransferError('INVALID_STATE', `the unsigned transfer names ${unsigned.signers?.length} signers for ${n} inputs`);
      keys.forEach((k, i) => {
        let address: string | null;
        try {
          address = this.codec.addressFromPublicKey({ curve: 'secp256k1', bytes: Uint8Array.from(Buffer.from(k, 'hex')) });
        } catch {
          address = null;
        }
        if (unsigned.signers![i] !== address) {
          throw new ChainTransferError('INVALID_STATE', `signer ${i} (${unsigned.signers![i]}) is not the address of input ${i}'s key ${k}`, { inputIndex: i });
        }
      });
    }
    if (!Array.isArray(signatures) || signatures.length !== n) throw new ChainTransferError('INVALID_SIGNATURE', `${n} signatures are needed (one per input), got ${signatures?.length}`);

    for (let i = 0; i < n; i++) {
      const publicKey = Uint8Array.from(Buffer.from(keys[i]!, 'hex'));
      const keyHash = btcCrypto.hash160(publicKey);
      const utxo = psbt.data.inputs[i]?.witnessUtxo;
      if (!utxo || !sameBytes(utxo.script, p2wpkhScript(keyHash))) throw new ChainTransferError('INVALID_STATE', `input ${i} of the PSBT is not a P2WPKH output of the state's key ${keys[i]}`, { inputIndex: i });
      const digest = tx.hashForWitnessV0(i, p2wpkhScriptCode(keyHash), utxo.value, Transaction.SIGHASH_ALL);
      const payload = unsigned.payloads[i];
      if (!(payload instanceof Uint8Array) || !sameBytes(payload, digest)) {
        throw new ChainTransferError('INVALID_STATE', `payload ${i} is not the BIP-143 digest of input ${i} of the PSBT`, { inputIndex: i });
      }
      const sig = signatures[i];
      const what = `signature ${i}`;
      if (!sig || sig.curve !== 'secp256k1' || !(sig.bytes instanceof Uint8Array) || sig.bytes.length !== 64) {
        throw new ChainTransferError('INVALID_SIGNATURE', `${what} is not a 64-byte secp256k1 r || s signature`, { inputIndex: i });
      }
      const { s } = splitSignature(sig.bytes);
      if (!isLowS(s)) throw new ChainTransferError('INVALID_SIGNATURE', `${what} is not low-S (the KeyStore contract; nodes refuse high S, BIP-146)`, { inputIndex: i });
      if (!verifyDigest(digest, sig.bytes, publicKey)) {
        throw new ChainTransferError('INVALID_SIGNATURE', `${what} does not verify against input ${i}'s digest and its key ${keys[i]}`, { inputIndex: i });
      }
      psbt.updateInput(i, { partialSig: [{ pubkey: publicKey, signature: btcScript.signature.encode(sig.bytes, Transaction.SIGHASH_ALL) }] });
    }
    psbt.finalizeAllInputs();
    // The fee was checked at craft(); bitcoinjs-lib's own cap (5000 sat/vB) is not this adapter's policy.
    const signed = psbt.extractTransaction(true);
    const txHash = signed.getId();
    if (txHash !== unsigned.txHash) throw new ChainTransferError('INVALID_STATE', `the signed transaction's txid ${txHash} is not ${unsigned.txHash}`);
    return { txHash, raw: signed.toBuffer() };
  }
}
