import {
  Address, Cell, SendMode, beginCell, internal, storeMessage, storeMessageRelaxed, type StateInit,
} from '@ton/core';
import { signVerify } from '@ton/crypto';
import { WalletContractV4 } from '@ton/ton';
import { requirePlainTransfer } from '@wcs/core';
import type {
  JsonValue, KeySignature, SignedTransaction, SequenceCrafter, SequenceTransferRequest, TransferInput, UnsignedTransfer,
} from '@wcs/core';
import { TonAddresses, canonicalJettonMaster } from './address';
import { isTonComment } from './memo';
import { commentCell, jettonTransferBody } from './messages';

/** Toncoin attached to a jetton transfer for the jetton wallets' gas; what is left comes back (excesses). */
export const DEFAULT_JETTON_GAS = 50_000_000n;
/** Toncoin forwarded with a jetton transfer so the recipient is notified (with the comment). */
export const DEFAULT_FORWARD_TON = 1n;
/** What a wallet v4 transfer costs at most in fees, nanotons (network fees are well below 0.01 TON). */
export const DEFAULT_FEE_RESERVE = 10_000_000n;
const UINT32_MAX = 4294967295n;
const COINS_MAX = (1n << 120n) - 1n;

/**
 * What craft() reads from the node (JSON, stored with the order):
 * - `validUntil`: decimal unix seconds; after it the wallet refuses the message, so its seqno can be
 *   used again (the time bound of the transfer).
 * - `deployed`: whether the hot wallet contract is active; when false (seqno 0) the message carries
 *   the wallet's state init and deploys it.
 * - `jettonWallet`: jetton transfers only: the hot wallet's jetton wallet of the master (raw or
 *   friendly form), as the master's get_wallet_address answered.
 * - `feeReserve`, `jettonGas`, `forwardTonAmount`: decimal nanotons (defaults above).
 */
export interface TonTransferInput {
  readonly validUntil: string;
  readonly deployed: boolean;
  readonly jettonWallet?: string;
  readonly feeReserve?: string;
  readonly jettonGas?: string;
  readonly forwardTonAmount?: string;
}

/** combine()'s state: the signing message and what the external message needs. */
interface TonTransferState {
  readonly signingMessage: string;
  readonly wallet: string;
  readonly publicKey: string;
  readonly deploy: boolean;
}

function fail(message: string): never {
  throw new TypeError(`TON transfer: ${message}`);
}

function decimal(input: TransferInput, name: string, max: bigint, fallback?: bigint): bigint {
  const v = Object.prototype.hasOwnProperty.call(input, name) ? input[name] : undefined;
  if (v === undefined || v === null) {
    if (fallback !== undefined) return fallback;
    fail(`input.${name} is required (decimal string)`);
  }
  if (typeof v !== 'string' || !/^(0|[1-9][0-9]{0,39})$/.test(v)) fail(`input.${name} must be a decimal string, got ${JSON.stringify(v)}`);
  const n = BigInt(v);
  if (n > max) throw new RangeError(`TON transfer: input.${name} must be at most ${max}`);
  return n;
}

export function walletOf(publicKey: Uint8Array): WalletContractV4 {
  return WalletContractV4.create({ workchain: 0, publicKey: Buffer.from(publicKey) });
}

/** The external message that carries a signed body to the wallet (with its state init when deploying). */
export function externalMessage(wallet: Address, init: StateInit | null, body: Cell): Cell {
  return beginCell().store(storeMessage({
    info: { type: 'external-in', dest: wallet, importFee: 0n },
    ...(init ? { init } : {}),
    body,
  })).endCell();
}

/**
 * Offline withdrawal crafting: one wallet v4R2 message from the hot wallet, seqno = the allocated
 * `request.sequence`, valid until `input.validUntil`, send mode 3 (fees paid separately, action
 * errors ignored: a message the wallet cannot pay is dropped, the seqno still used, and the
 * transfer reads as failed: no outgoing message).
 * - Toncoin: an internal message to the destination with the amount, bounceable as the destination
 *   was written (EQ… bounceable, UQ… / raw not), the memo as a text comment.
 * - Jettons (`contract` = the master): a TEP-74 transfer to the hot wallet's jetton wallet carrying
 *   `jettonGas` nanotons: amount, destination = the recipient's owner address, excesses back to the
 *   hot wallet, `forwardTonAmount` forwarded with the memo as the forward payload's comment.
 *
 * The payload to sign is the signing message's cell hash (32 bytes): ed25519 over it, which the
 * KeyStore does with an ed25519 payload. The transaction id (`txHash`) is the external message's
 * hash, known once signed.
 */
export class TonTransferCrafter implements SequenceCrafter {
  constructor(private readonly addresses: TonAddresses) {}

  craft(request: SequenceTransferRequest, input: TransferInput): UnsignedTransfer {
    const key = request.fromPublicKey;
    if (key?.curve !== 'ed25519' || !(key.bytes instanceof Uint8Array) || key.bytes.length !== 32) fail('fromPublicKey must be a 32-byte ed25519 key');
    const wallet = walletOf(key.bytes);
    if (this.addresses.addressFromPublicKey(key) !== request.from) fail('from is not the wallet v4 address of fromPublicKey');
    requirePlainTransfer(request, 'TON');
    const target = this.addresses.parse(request.to);
    if (!target.ok) fail(`to: ${target.reason}`);
    if (this.addresses.format(target.address, target.bounceable) !== request.to) fail('to is not in canonical form');
    if (request.memo !== null && request.memo !== undefined && !isTonComment(request.memo)) fail('memo is not a TON text comment');
    if (typeof request.amount !== 'bigint' || request.amount <= 0n || request.amount > COINS_MAX) throw new RangeError('TON transfer: amount must be a bigint in 1..2^120-1 base units');
    const seqno = request.sequence;
    if (typeof seqno !== 'bigint' || seqno < 0n || seqno > UINT32_MAX) throw new RangeError('TON transfer: request.sequence (the wallet seqno) must be a bigint in 0..2^32-1');
    const validUntil = decimal(input, 'validUntil', UINT32_MAX);
    if (validUntil === 0n) fail('input.validUntil must be set');
    const deployed = input.deployed;
    if (typeof deployed !== 'boolean') fail('input.deployed is required (boolean)');
    const feeReserve = decimal(input, 'feeReserve', COINS_MAX, DEFAULT_FEE_RESERVE);

    let message;
    let maxFee = feeReserve;
    if (request.contract === null) {
      message = internal({
        to: target.address, value: request.amount, bounce: target.bounceable,
        ...(request.memo ? { body: commentCell(request.memo) } : {}),
      });
    } else {
      canonicalJettonMaster(request.contract);
      const jw = input.jettonWallet;
      if (typeof jw !== 'string') fail('input.jettonWallet (the hot wallet\'s jetton wallet) is required for a jetton transfer');
      let jettonWallet: Address;
      try {
        jettonWallet = Address.parse(jw);
      } catch {
        fail(`input.jettonWallet is not an address: ${JSON.stringify(jw)}`);
      }
      const jettonGas = decimal(input, 'jettonGas', COINS_MAX, DEFAULT_JETTON_GAS);
      const forwardTonAmount = decimal(input, 'forwardTonAmount', COINS_MAX, DEFAULT_FORWARD_TON);
      if (jettonGas <= forwardTonAmount) fail('input.jettonGas must be more than input.forwardTonAmount');
      maxFee += jettonGas;
      message = internal({
        to: jettonWallet, value: jettonGas, bounce: true,
        body: jettonTransferBody({
          queryId: seqno, amount: request.amount, destination: target.address, responseDestination: wallet.address,
          forwardTonAmount, comment: request.memo ?? null,
        }),
      });
    }
    const signingMessage = beginCell()
      .storeUint(wallet.walletId, 32)
      .storeUint(validUntil, 32)
      .storeUint(seqno, 32)
      .storeUint(0, 8) // op: simple send
      .storeUint(SendMode.PAY_GAS_SEPARATELY | SendMode.IGNORE_ERRORS, 8)
      .storeRef(beginCell().store(storeMessageRelaxed(message)))
      .endCell();
    const state: TonTransferState = {
      signingMessage: signingMessage.toBoc().toString('base64'),
      wallet: wallet.address.toRawString(),
      publicKey: Buffer.from(key.bytes).toString('hex'),
      deploy: !deployed,
    };
    return { payloads: [Uint8Array.from(signingMessage.hash())], maxFee, txHash: null, state: state as unknown as JsonValue };
  }

  combine(unsigned: UnsignedTransfer, signatures: readonly KeySignature[]): SignedTransaction {
    const state = unsigned.state as unknown as TonTransferState;
    if (!state || typeof state.signingMessage !== 'string' || typeof state.publicKey !== 'string') fail('not a TON unsigned transfer');
    if (signatures.length !== 1) fail(`one signature expected, got ${signatures.length}`);
    const sig = signatures[0]!;
    if (sig.curve !== 'ed25519' || sig.bytes.length !== 64) fail('an ed25519 signature (64 bytes) is expected');
    const signingMessage = Cell.fromBase64(state.signingMessage);
    const publicKey = Buffer.from(state.publicKey, 'hex');
    if (!signVerify(signingMessage.hash(), Buffer.from(sig.bytes), publicKey)) fail('the signature does not verify against the hot wallet key');
    const wallet = walletOf(publicKey);
    if (wallet.address.toRawString() !== state.wallet) fail('state.wallet is not the wallet of state.publicKey');
    const body = beginCell().storeBuffer(Buffer.from(sig.bytes)).storeSlice(signingMessage.beginParse()).endCell();
    const ext = externalMessage(wallet.address, state.deploy ? wallet.init : null, body);
    return { txHash: ext.hash().toString('hex'), raw: Uint8Array.from(ext.toBoc()) };
  }
}
