import { createHash } from 'node:crypto';
import { encode, encodeForSigning, hashes, verifyKeypairSignature, type Payment } from 'xrpl';
import { requirePlainTransfer } from '@wcs/core';
import type {
  JsonValue, KeySignature, SequenceCrafter, SequenceTransferRequest, SignedTransaction, TransferInput, UnsignedTransfer,
} from '@wcs/core';
import { validateXrpAddress, xrpAddressFromPublicKey } from './address';
import { isDestinationTag } from './memo';

/** All the XRP there is: 100 billion XRP in drops. A Payment amount is at most this. */
export const MAX_XRP_DROPS = 100_000_000_000_000_000n;
/** Largest uint32 (Sequence, LastLedgerSequence). */
const UINT32_MAX = 4294967295;
/** Networks up to this id must not carry NetworkID; networks above it must (rippled). */
export const XRP_LEGACY_NETWORK_ID_MAX = 1024;

/**
 * The sequence of the service's fee quote: it crafts a transfer to the hot wallet itself with
 * sequence 0 only to read maxFee. craft() accepts that shape (a self-payment is allowed only
 * with it); combine() refuses it, so it can never be signed and sent.
 */
export const FEE_QUOTE_SEQUENCE = 0n;

/** secp256k1 group order and half of it (XRPL requires fully canonical, low-S signatures). */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = N >> 1n;

/**
 * What craft() reads from the node (JSON, stored with the order).
 *
 * - `fee`: decimal drops, the transaction cost to offer (from the server's fee levels); it is also
 *   `maxFee`: XRPL charges exactly the Fee field.
 * - `lastLedgerSequence`: integer, the last validated ledger in which the transaction may be
 *   included (the current validated ledger + a margin, e.g. 20): after it the transaction can
 *   never apply, so the same sequence can be reused safely.
 * - `networkId` (optional): only for networks whose id is above 1024 (sidechains); mainnet (0),
 *   testnet (1) and devnet (2) must not carry it.
 */
export interface XrpTransferInput {
  readonly fee: string;
  readonly lastLedgerSequence: number;
  readonly networkId?: number;
}

/** The adapter-private state combine() reads: the transaction JSON as signed, without the signature. */
interface XrpTransferState {
  readonly tx: { readonly [field: string]: string | number };
}

function fail(message: string): never {
  throw new TypeError(`XRP transfer: ${message}`);
}

function field(input: TransferInput, name: string): JsonValue | undefined {
  return Object.prototype.hasOwnProperty.call(input, name) ? input[name] : undefined;
}

function uint32Field(input: TransferInput, name: string, optional = false): number | undefined {
  const v = field(input, name);
  if (v === undefined || v === null) {
    if (optional) return undefined;
    fail(`input.${name} is required (integer)`);
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > UINT32_MAX) fail(`input.${name} must be an integer in 0..${UINT32_MAX}, got ${JSON.stringify(v)}`);
  return v;
}

/** SHA-512Half: the first 32 bytes of SHA-512, XRPL's hash. */
function sha512Half(data: Uint8Array): Uint8Array {
  return Uint8Array.from(createHash('sha512').update(data).digest().subarray(0, 32));
}

function toBig(b: Uint8Array): bigint {
  return BigInt('0x' + (Buffer.from(b).toString('hex') || '0'));
}

/** A non-negative integer as a DER INTEGER body: minimal, with a 00 when the high bit is set. */
function derInteger(value: Uint8Array): Buffer {
  let i = 0;
  while (i < value.length - 1 && value[i] === 0) i++;
  const body = Buffer.from(value.subarray(i));
  return body[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), body]) : body;
}

/** r || s (64 bytes) as the DER ECDSA-Sig-Value XRPL carries in TxnSignature. */
export function derSignature(compact: Uint8Array): Uint8Array {
  if (compact.length !== 64) throw new TypeError('a compact secp256k1 signature is 64 bytes');
  const r = derInteger(compact.subarray(0, 32));
  const s = derInteger(compact.subarray(32));
  const body = Buffer.concat([Buffer.from([0x02, r.length]), r, Buffer.from([0x02, s.length]), s]);
  return Uint8Array.from(Buffer.concat([Buffer.from([0x30, body.length]), body]));
}

/**
 * Offline withdrawal crafting for the XRP Ledger: a Payment of XRP (drops) from the hot wallet's
 * classic address, Sequence = the allocated sequence, Fee and LastLedgerSequence from the input,
 * DestinationTag from the memo. Only native XRP: the catalogue lists no XRP tokens and the scanner
 * does not credit issued currencies, so a request with a contract is refused.
 *
 * The payload is the signing hash: SHA-512Half of the "STX\0"-prefixed signing encoding (with
 * SigningPubKey, without TxnSignature). The transaction id hashes the signed blob, so `txHash`
 * is null until combine().
 */
export class XrpTransferCrafter implements SequenceCrafter {
  constructor(private readonly testNetwork: boolean) {}

  craft(request: SequenceTransferRequest, input: TransferInput): UnsignedTransfer {
    requirePlainTransfer(request, 'the XRP Ledger');
    const key = request.fromPublicKey;
    if (key?.curve !== 'secp256k1') fail('fromPublicKey must be a secp256k1 key');
    let account: string;
    try {
      account = xrpAddressFromPublicKey(key);
    } catch (e) {
      fail(`fromPublicKey: ${(e as Error).message}`);
    }
    if (account !== request.from) fail('from is not the classic address of fromPublicKey');
    const target = validateXrpAddress(request.to, request.memo, this.testNetwork);
    if (!target.valid) fail(`to: ${target.reason}`);
    if (target.normalized !== request.to) fail('to must be a classic address (an X-address is split into address and tag before crafting)');
    if (request.contract !== null) fail('only XRP is supported: the catalogue lists no issued currencies for XRP');
    if (request.memo !== null && !isDestinationTag(request.memo)) fail('memo must be a destination tag (decimal 0..4294967295)');
    if (typeof request.amount !== 'bigint' || request.amount <= 0n || request.amount > MAX_XRP_DROPS) {
      throw new RangeError(`XRP transfer: amount must be a bigint in 1..${MAX_XRP_DROPS} drops`);
    }
    const sequence = request.sequence;
    if (typeof sequence !== 'bigint' || sequence < 0n || sequence > BigInt(UINT32_MAX)) {
      throw new RangeError('XRP transfer: request.sequence (the allocated account sequence; 0 for a fee quote) must be a bigint in 0..4294967295');
    }
    // Sequence 0 is the service's fee quote (a transfer to the hot wallet itself, never signed):
    // no account has sequence 0, and combine() refuses it.
    if (request.to === account && sequence !== FEE_QUOTE_SEQUENCE) fail('a payment to the hot wallet itself is refused by the ledger (temREDUNDANT)');
    const feeText = field(input, 'fee');
    if (typeof feeText !== 'string' || !/^(0|[1-9][0-9]{0,17})$/.test(feeText)) fail('input.fee must be decimal drops');
    const fee = BigInt(feeText);
    if (fee < 1n || fee > MAX_XRP_DROPS) throw new RangeError(`XRP transfer: input.fee must be in 1..${MAX_XRP_DROPS} drops`);
    const lastLedgerSequence = uint32Field(input, 'lastLedgerSequence')!;
    if (lastLedgerSequence < 1) throw new RangeError('XRP transfer: input.lastLedgerSequence must be at least 1');
    const networkId = uint32Field(input, 'networkId', true);
    if (networkId !== undefined && networkId <= XRP_LEGACY_NETWORK_ID_MAX) {
      fail(`input.networkId is only for networks above ${XRP_LEGACY_NETWORK_ID_MAX}; leave it out for mainnet, testnet and devnet`);
    }

    const tx: Payment = {
      TransactionType: 'Payment',
      Flags: 0,
      Account: account,
      Destination: request.to,
      Amount: request.amount.toString(),
      Fee: fee.toString(),
      Sequence: Number(sequence),
      LastLedgerSequence: lastLedgerSequence,
      SigningPubKey: Buffer.from(key.bytes).toString('hex').toUpperCase(),
    };
    if (request.memo !== null) tx.DestinationTag = Number(request.memo);
    if (networkId !== undefined) tx.NetworkID = networkId;

    const payload = sha512Half(Buffer.from(encodeForSigning(tx), 'hex'));
    const state: XrpTransferState = { tx: { ...tx } as unknown as XrpTransferState['tx'] };
    return { payloads: [payload], maxFee: fee, txHash: null, state: { ...state } };
  }

  combine(unsigned: UnsignedTransfer, signatures: readonly KeySignature[]): SignedTransaction {
    const state = unsigned.state as unknown as XrpTransferState;
    if (typeof state !== 'object' || state === null || typeof state.tx !== 'object' || state.tx === null) fail('not an XRP unsigned transfer');
    const tx = { ...state.tx } as unknown as Payment;
    if (tx.TransactionType !== 'Payment' || typeof tx.SigningPubKey !== 'string' || 'TxnSignature' in tx) fail('not an XRP unsigned transfer');
    if (tx.Sequence === Number(FEE_QUOTE_SEQUENCE)) fail('a fee quote (sequence 0) is never signed');
    const signingData = encodeForSigning(tx);
    const payload = sha512Half(Buffer.from(signingData, 'hex'));
    if (unsigned.payloads.length !== 1 || Buffer.compare(Buffer.from(unsigned.payloads[0]!), Buffer.from(payload)) !== 0) {
      fail('the payload is not the signing hash of the state\'s transaction');
    }
    if (signatures.length !== 1) fail(`one signature expected, got ${signatures.length}`);
    const sig = signatures[0]!;
    if (sig.curve !== 'secp256k1' || sig.bytes.length !== 64) fail('the signature must be a 64-byte secp256k1 r || s');
    const r = toBig(sig.bytes.subarray(0, 32));
    const s = toBig(sig.bytes.subarray(32));
    if (r === 0n || r >= N || s === 0n || s >= N) fail('the signature is not a valid r || s');
    if (s > HALF_N) fail('the signature is not low-S: the ledger takes fully canonical signatures only');
    const der = Buffer.from(derSignature(sig.bytes)).toString('hex').toUpperCase();
    // ripple-keypairs verifies over SHA-512Half(signing data): the very digest that was signed
    if (!verifyKeypairSignature(signingData, der, tx.SigningPubKey)) {
      throw new Error('XRP transfer: the signature does not verify for the hot wallet key and this transaction');
    }
    const blob = encode({ ...tx, TxnSignature: der });
    return { txHash: hashes.hashSignedTx(blob), raw: Uint8Array.from(Buffer.from(blob, 'hex')) };
  }
}
