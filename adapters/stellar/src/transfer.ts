import type * as StellarSdk from '@stellar/stellar-sdk';
import { requireSenderPays,
  formatUnits, type ChainDefinition, type JsonValue, type KeySignature, type SignedTransaction,
  type SequenceCrafter, type SequenceTransferRequest, type TransferInput, type UnsignedTransfer,
} from '@wcs/core';
import { withdrawalMemoType } from './memo';
import { StrKey } from './strkey';
import { validateStellarAddress } from './address';

// The SDK's entry without the Horizon / RPC clients, typed through the root entry (see strkey.ts).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const sdk = require('@stellar/stellar-sdk/minimal') as Pick<
  typeof StellarSdk, 'Account' | 'Asset' | 'Keypair' | 'Memo' | 'Networks' | 'Operation' | 'Transaction' | 'TransactionBuilder'
>;

/** Stellar amounts: int64 stroops, 7 decimals, for XLM and every credit asset. */
const DECIMALS = 7;
const INT64_MAX = (1n << 63n) - 1n;
const UINT32_MAX = 4294967295n;
const UINT64_MAX = (1n << 64n) - 1n;

/**
 * The sequence of the service's fee quote: it crafts a transfer to the hot wallet itself with
 * sequence 0 only to read maxFee. craft() accepts that shape (a transfer to the hot wallet itself
 * is allowed only with it); combine() refuses it, so it can never be signed and sent.
 */
export const FEE_QUOTE_SEQUENCE = 0n;

/** The network passphrase of a catalogue network name (pubnet, testnet, futurenet), or null. */
export function stellarNetworkPassphrase(network: string): string | null {
  switch (network) {
    case 'pubnet':
    case 'public':
    case 'mainnet':
      return sdk.Networks.PUBLIC;
    case 'testnet':
      return sdk.Networks.TESTNET;
    case 'futurenet':
      return sdk.Networks.FUTURENET;
    default:
      return null;
  }
}

/** A chain's passphrase: `options.networkPassphrase` when set, else from its network name. */
export function stellarChainPassphrase(chain: ChainDefinition): string | null {
  return chain.options?.networkPassphrase ?? stellarNetworkPassphrase(chain.network);
}

/**
 * What craft() reads from the node (JSON, stored with the order).
 *
 * - `baseFee`: decimal stroops per operation the hot wallet offers (Horizon fee_stats or the
 *   ledger's base fee); the transaction has one operation, so it is also the transaction's fee
 *   field and `maxFee` (the network charges at most that, less when the surge price is lower).
 * - `minTime`, `maxTime`: decimal unix seconds, the time bounds; `maxTime` must be set (> 0):
 *   after it the transaction can never apply, so its sequence can be reused safely.
 * - `destinationExists`: boolean, whether the destination account exists. When false, XLM is
 *   sent with CreateAccount (the amount must cover the minimum balance, two base reserves); a
 *   credit asset cannot be sent to a missing account (it has no trustline).
 */
export interface StellarTransferInput {
  readonly baseFee: string;
  readonly minTime?: string;
  readonly maxTime: string;
  readonly destinationExists: boolean;
}

/** The adapter-private state combine() reads. */
interface StellarTransferState {
  /** base64 XDR of the unsigned TransactionEnvelope (v1). */
  readonly envelope: string;
  readonly networkPassphrase: string;
  /** The hot wallet (G…), the one signer. */
  readonly signer: string;
}

function fail(message: string): never {
  throw new TypeError(`Stellar transfer: ${message}`);
}

function field(input: TransferInput, name: string): JsonValue | undefined {
  return Object.prototype.hasOwnProperty.call(input, name) ? input[name] : undefined;
}

function decimalField(input: TransferInput, name: string, min: bigint, max: bigint, fallback?: bigint): bigint {
  const v = field(input, name);
  if (v === undefined || v === null) {
    if (fallback !== undefined) return fallback;
    fail(`input.${name} is required (decimal string)`);
  }
  if (typeof v !== 'string' || !/^(0|[1-9][0-9]{0,19})$/.test(v)) fail(`input.${name} must be a decimal string, got ${JSON.stringify(v)}`);
  const n = BigInt(v);
  if (n < min || n > max) throw new RangeError(`Stellar transfer: input.${name} must be in ${min}..${max}, got ${v}`);
  return n;
}

/** "CODE:ISSUER" (the catalogue's form) as an Asset. */
function creditAsset(contract: string): StellarSdk.Asset {
  const m = /^([A-Za-z0-9]{1,12}):(G[A-Z2-7]{55})$/.exec(contract);
  if (!m || !StrKey.isValidEd25519PublicKey(m[2]!)) fail(`contract must be "CODE:ISSUER" (1 to 12 letters or digits, a G… issuer), got ${JSON.stringify(contract)}`);
  return new sdk.Asset(m[1]!, m[2]!);
}

/**
 * Offline withdrawal crafting for Stellar: one operation from the hot wallet (the transaction's
 * source and only signer), sequence number = the allocated `request.sequence`, fee and time
 * bounds from the input, and the memo as MEMO_ID when it is canonical decimal uint64, MEMO_TEXT
 * otherwise (the rule of `withdrawalMemoType`). XLM goes by Payment, or by CreateAccount when the
 * input says the destination does not exist; a credit asset ("CODE:ISSUER") by Payment.
 * A request with `trustline` opens the sender's own trustline to its asset instead
 * (ChangeTrust, the default limit: the largest), sent to itself with no memo; its amount moves nothing. Muxed
 * (M…) destinations are paid as such (they carry no memo).
 *
 * The payload is the transaction hash, SHA-256 of the signature base (network id, envelope type,
 * transaction). Stellar's signature is ed25519 over that 32-byte hash taken as the MESSAGE, which
 * is what KeyStore.sign does with an ed25519 payload: it signs the bytes it is given. The hash
 * does not depend on the signature, so `txHash` is known at craft time (lower-case hex, as
 * Horizon writes it).
 */
export class StellarTransferCrafter implements SequenceCrafter {
  constructor(private readonly networkPassphrase: string) {
    if (typeof networkPassphrase !== 'string' || networkPassphrase.length === 0) throw new TypeError('a Stellar network passphrase is required');
  }

  craft(request: SequenceTransferRequest, input: TransferInput): UnsignedTransfer {
    requireSenderPays(request, 'Stellar');
    const key = request.fromPublicKey;
    if (key?.curve !== 'ed25519' || key.bytes?.length !== 32) fail('fromPublicKey must be a 32-byte ed25519 key');
    const source = StrKey.encodeEd25519PublicKey(Buffer.from(key.bytes));
    if (source !== request.from) fail('from is not the G… address of fromPublicKey');
    const target = validateStellarAddress(request.to, request.memo);
    if (!target.valid) fail(`to: ${target.reason}`);
    if (target.normalized !== request.to) fail('to is not in canonical form');
    const muxed = request.to.startsWith('M');
    const destinationAccount = muxed ? StrKey.encodeEd25519PublicKey(StrKey.decodeMed25519PublicKey(request.to).subarray(0, 32)) : request.to;
    if (typeof request.amount !== 'bigint' || request.amount <= 0n || request.amount > INT64_MAX) {
      throw new RangeError('Stellar transfer: amount must be a bigint in 1..2^63-1 stroops');
    }
    const sequence = request.sequence;
    if (typeof sequence !== 'bigint' || sequence < 0n || sequence > INT64_MAX) {
      throw new RangeError('Stellar transfer: request.sequence (the allocated sequence number; 0 for a fee quote) must be a bigint in 0..2^63-1');
    }
    // Sequence 0 is the service's fee quote (a transfer to the hot wallet itself, never signed):
    // no account's next sequence is 0, and combine() refuses it.
    if (destinationAccount === source && sequence !== FEE_QUOTE_SEQUENCE && request.trustline !== true) fail('the destination is the hot wallet itself');
    const baseFee = decimalField(input, 'baseFee', 100n, UINT32_MAX); // 100 stroops: the network minimum
    const minTime = decimalField(input, 'minTime', 0n, UINT64_MAX, 0n);
    const maxTime = decimalField(input, 'maxTime', 1n, UINT64_MAX);
    if (maxTime <= minTime) throw new RangeError('Stellar transfer: input.maxTime must be after input.minTime');
    const exists = field(input, 'destinationExists');
    if (typeof exists !== 'boolean') fail('input.destinationExists is required (boolean)');

    const amount = formatUnits(request.amount, DECIMALS);
    let operation: StellarSdk.xdr.Operation;
    if (request.trustline === true) {
      // the hot wallet opens its own trustline: changeTrust of the asset, the limit the largest there is (the SDK's default)
      if (request.contract === null) fail('a trustline is opened to a credit asset ("CODE:ISSUER"), not to XLM');
      if (destinationAccount !== source || muxed) fail('a trustline is opened by the account for itself: to must be from');
      if (request.memo !== null) fail('a trustline carries no memo');
      operation = sdk.Operation.changeTrust({ asset: creditAsset(request.contract) });
    } else if (request.contract === null) {
      if (exists) {
        operation = sdk.Operation.payment({ destination: request.to, asset: sdk.Asset.native(), amount });
      } else {
        if (muxed) fail('CreateAccount takes a G… account, not a muxed M… address: the account must exist first');
        operation = sdk.Operation.createAccount({ destination: request.to, startingBalance: amount });
      }
    } else {
      const asset = creditAsset(request.contract);
      if (!exists) fail('the destination account does not exist: it cannot hold a credit asset (no trustline)');
      operation = sdk.Operation.payment({ destination: request.to, asset, amount });
    }

    let memo: StellarSdk.Memo = sdk.Memo.none();
    if (request.memo !== null) {
      const type = withdrawalMemoType(request.memo);
      if (type === 'id') memo = sdk.Memo.id(request.memo);
      else if (type === 'text') memo = sdk.Memo.text(request.memo);
      else fail('memo must be a MEMO_ID (decimal uint64) or a MEMO_TEXT (1 to 28 UTF-8 bytes)');
    }

    // TransactionBuilder writes sequence = the account's + 1
    const account = new sdk.Account(source, (sequence - 1n).toString());
    const tx = new sdk.TransactionBuilder(account, {
      fee: baseFee.toString(),
      networkPassphrase: this.networkPassphrase,
      timebounds: { minTime: minTime.toString(), maxTime: maxTime.toString() },
      memo,
    }).addOperation(operation).build();
    if (tx.sequence !== sequence.toString() || BigInt(tx.fee) !== baseFee) fail('the SDK built another sequence or fee than asked');
    const hash = tx.hash();
    const state: StellarTransferState = {
      envelope: tx.toEnvelope().toXDR('base64'),
      networkPassphrase: this.networkPassphrase,
      signer: source,
    };
    return { payloads: [Uint8Array.from(hash)], maxFee: baseFee, txHash: hash.toString('hex'), state: { ...state } };
  }

  combine(unsigned: UnsignedTransfer, signatures: readonly KeySignature[]): SignedTransaction {
    const state = unsigned.state as unknown as StellarTransferState;
    if (typeof state !== 'object' || state === null || typeof state.envelope !== 'string' || typeof state.signer !== 'string') fail('not a Stellar unsigned transfer');
    if (state.networkPassphrase !== this.networkPassphrase) fail('the transfer was crafted for another network');
    const tx = sdk.TransactionBuilder.fromXDR(state.envelope, state.networkPassphrase);
    if (!(tx instanceof sdk.Transaction) || tx.signatures.length !== 0) fail('the state is not an unsigned transaction');
    if (tx.sequence === FEE_QUOTE_SEQUENCE.toString()) fail('a fee quote (sequence 0) is never signed');
    const hash = tx.hash();
    if (unsigned.payloads.length !== 1 || Buffer.compare(Buffer.from(unsigned.payloads[0]!), hash) !== 0) fail('the payload is not the hash of the state\'s transaction');
    if (signatures.length !== 1) fail(`one signature expected, got ${signatures.length}`);
    const sig = signatures[0]!;
    if (sig.curve !== 'ed25519' || sig.bytes.length !== 64) fail('the signature must be a 64-byte ed25519 signature');
    const keypair = sdk.Keypair.fromPublicKey(state.signer);
    if (!keypair.verify(hash, Buffer.from(sig.bytes))) {
      throw new Error('Stellar transfer: the signature does not verify for the hot wallet key and this transaction');
    }
    // a DecoratedSignature: hint (the last 4 bytes of the public key) and the signature
    tx.addSignature(state.signer, Buffer.from(sig.bytes).toString('base64'));
    return { txHash: hash.toString('hex'), raw: Uint8Array.from(tx.toEnvelope().toXDR()) };
  }
}
