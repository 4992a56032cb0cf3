import { createHash } from 'node:crypto';
import {
  SerialBuffer, createInitialTypes, createTransactionTypes, getTypesFromAbi, type Type,
} from 'eosjs/dist/eosjs-serialize';
import { KeyType, signatureToString } from 'eosjs/dist/eosjs-numeric';
import { Signature } from 'eosjs/dist/eosjs-key-conversions';
import { requirePlainTransfer } from '@wcs/core';
import type {
  ExpiringCrafter, ExpiringTransferRequest, JsonValue, KeySignature, SignedTransaction, TransferInput, UnsignedTransfer,
} from '@wcs/core';
import { checkK1PublicKey, eosPublicKeyToString } from './keys';
import { isEosMemo } from './memo';
import { isEosAccountName } from './name';
import { EOS_NATIVE_CONTRACT, EOS_NATIVE_SYMBOL } from './scanner';

/** Precision of the system token (EOS on mainnet and Jungle 4). */
export const EOS_NATIVE_PRECISION = 4;
/** Largest asset amount an Antelope chain takes: 2^62 - 1 base units. */
export const EOS_MAX_ASSET_AMOUNT = (1n << 62n) - 1n;
/**
 * Digests crafted per transfer when the chain requires canonical signatures: variant i expires i
 * seconds before the input's expiration. About half of all low-S signatures are canonical in the
 * chain's sense, so 16 variants all fail with probability about 2^-16; combine() then asks for a
 * new craft (a fresh reference block gives fresh digests).
 */
export const EOS_SIGNATURE_VARIANTS = 16;

/**
 * What craft() reads from the node (JSON, stored with the order).
 *
 * - `chainId`: 64 hex, get_info's chain_id.
 * - `referenceBlockId`: 64 hex, the id of a recent (ideally irreversible) block: ref_block_num
 *   and ref_block_prefix (TaPoS) come from it.
 * - `expiration`: "YYYY-MM-DDTHH:MM:SS" UTC (a fraction, if any, must be zero): after it the
 *   transaction can never be included; at most one hour after the head block time.
 * - `account`: the hot wallet's account name (EOS accounts are created on chain, not derived
 *   from keys), the transfer's `from` and actor; must equal `request.from`.
 * - `permission` (optional, default "active"): the account's permission the hot key satisfies.
 * - `precision`: the token's precision (decimals in its symbol); for EOS itself 4 if left out.
 * - `requireCanonicalSignature` (optional, default true): whether the chain still refuses
 *   non-canonical signatures (Antelope before the ALLOW_NON_CANONICAL_SIGNATURES protocol
 *   feature). When true, craft() returns EOS_SIGNATURE_VARIANTS payloads (see there); when
 *   false, one, and the transaction id is known at craft time.
 */
export interface EosTransferInput {
  readonly chainId: string;
  readonly referenceBlockId: string;
  readonly expiration: string;
  readonly account: string;
  readonly permission?: string;
  readonly precision?: number;
  readonly requireCanonicalSignature?: boolean;
}

interface EosVariant {
  /** Hex of the serialized transaction. */
  readonly packedTrx: string;
}

/** The adapter-private state combine() reads. */
interface EosTransferState {
  readonly chainId: string;
  /** The hot key, PUB_K1_… */
  readonly publicKey: string;
  readonly requireCanonical: boolean;
  /** One per payload, in order. */
  readonly variants: readonly EosVariant[];
}

/** The standard token contract's transfer action (eosio.token and every token built from it). */
const TOKEN_ABI = {
  version: 'eosio::abi/1.1',
  types: [],
  structs: [{
    name: 'transfer', base: '',
    fields: [{ name: 'from', type: 'name' }, { name: 'to', type: 'name' }, { name: 'quantity', type: 'asset' }, { name: 'memo', type: 'string' }],
  }],
  actions: [], tables: [], ricardian_clauses: [], error_messages: [], abi_extensions: [], variants: [],
};

let types: { transaction: Type; transfer: Type } | undefined;
function eosTypes(): { transaction: Type; transfer: Type } {
  if (!types) {
    const transaction = getTypesFromAbi(createTransactionTypes()).get('transaction'); // resolves the field types, as eosjs' Api does
    const transfer = getTypesFromAbi(createInitialTypes(), TOKEN_ABI as never).get('transfer');
    if (!transaction || !transfer) throw new Error('eosjs has no transaction / transfer type');
    types = { transaction, transfer };
  }
  return types;
}

function serialize(type: Type, value: unknown): Uint8Array {
  const buffer = new SerialBuffer({ textEncoder: new TextEncoder(), textDecoder: new TextDecoder() });
  type.serialize(buffer, value);
  return buffer.asUint8Array();
}

/** The token contract's transfer action data, serialized. */
export function eosTransferActionData(from: string, to: string, quantity: string, memo: string): Uint8Array {
  return serialize(eosTypes().transfer, { from, to, quantity, memo });
}

/** "<amount> <SYMBOL>" with exactly `precision` decimals: the asset text Antelope parses. */
export function formatEosQuantity(amount: bigint, precision: number, symbol: string): string {
  const digits = amount.toString().padStart(precision + 1, '0');
  const whole = digits.slice(0, digits.length - precision);
  return precision === 0 ? `${whole} ${symbol}` : `${whole}.${digits.slice(digits.length - precision)} ${symbol}`;
}

const sha256 = (...parts: Uint8Array[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

/** What the chain signs: sha256(chain id || serialized transaction || sha256 of the context-free data, zeros when there is none). */
export function eosSigningDigest(chainId: Uint8Array, packedTrx: Uint8Array): Uint8Array {
  return Uint8Array.from(sha256(chainId, packedTrx, new Uint8Array(32)));
}

/**
 * Whether a compact signature (recovery byte || r || s) is canonical as Antelope's fc checks it:
 * r and s each below 2^255 and not below 2^247 (their DER forms are exactly 32 bytes).
 */
export function isCanonicalEosSignature(rs: Uint8Array): boolean {
  if (rs.length !== 64) return false;
  const r0 = rs[0]!, r1 = rs[1]!, s0 = rs[32]!, s1 = rs[33]!;
  return !(r0 & 0x80) && !(r0 === 0 && !(r1 & 0x80)) && !(s0 & 0x80) && !(s0 === 0 && !(s1 & 0x80));
}

function fail(message: string): never {
  throw new TypeError(`EOS transfer: ${message}`);
}

function field(input: TransferInput, name: string): JsonValue | undefined {
  return Object.prototype.hasOwnProperty.call(input, name) ? input[name] : undefined;
}

function hex32(input: TransferInput, name: string): Buffer {
  const v = field(input, name);
  if (typeof v !== 'string' || !/^[0-9a-f]{64}$/.test(v)) fail(`input.${name} must be 64 lower-case hex digits`);
  return Buffer.from(v, 'hex');
}

/** Seconds since the epoch of "YYYY-MM-DDTHH:MM:SS" (UTC; ".000" and "Z" allowed). */
function expirationSeconds(input: TransferInput): number {
  const v = field(input, 'expiration');
  const m = typeof v === 'string' ? /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.0{1,3})?Z?$/.exec(v) : null;
  if (!m) fail('input.expiration must be "YYYY-MM-DDTHH:MM:SS" (UTC, whole seconds)');
  const ms = Date.parse(`${m[1]}Z`);
  if (!Number.isFinite(ms) || new Date(ms).toISOString().slice(0, 19) !== m[1]) fail(`input.expiration is not a date: ${JSON.stringify(v)}`);
  const seconds = ms / 1000;
  if (seconds < EOS_SIGNATURE_VARIANTS || seconds > 0xffffffff) throw new RangeError('EOS transfer: input.expiration is out of the uint32 seconds range');
  return seconds;
}

/** The contract account and symbol of a request: null → eosio.token EOS; else "account:SYMBOL". */
export function tokenOf(contract: string | null): { account: string; symbol: string } {
  if (contract === null) return { account: EOS_NATIVE_CONTRACT, symbol: EOS_NATIVE_SYMBOL };
  const m = /^([a-z1-5.]{1,12}):([A-Z]{1,7})$/.exec(contract);
  if (!m || !isEosAccountName(m[1]!)) fail(`contract must be "account:SYMBOL" (the catalogue's form, e.g. tethertether:USDT), got ${JSON.stringify(contract)}`);
  return { account: m[1]!, symbol: m[2]! };
}

/**
 * Offline withdrawal crafting for EOS (Antelope): one `transfer` action of the token's contract
 * (eosio.token for EOS, else the contract of "account:SYMBOL"), from the hot account to
 * `request.to`, quantity in the token's precision and symbol, memo = `request.memo` or "", the
 * hot account's permission as the only authorization; TaPoS from the input's reference block,
 * expiration from the input, no CPU / NET limits, no delay. EOS has no transaction fee (the hot
 * account's staked or rented CPU / NET pays), so `maxFee` is 0.
 *
 * Payloads are digests: sha256(chain id || serialized transaction || 32 zero bytes). combine()
 * writes the SIG_K1_ signature (recovery id + 31, r, s) after recovering the hot key from it,
 * and returns the push_transaction body; the transaction id is sha256(serialized transaction).
 *
 * Canonical signatures: the chain's fc library refuses a K1 signature whose r or s is not
 * "canonical" (see isCanonicalEosSignature): about half of all signatures. Signers loop with a
 * fresh nonce until one is; KeyStore.sign is deterministic (RFC 6979) and has no nonce to vary,
 * so craft() varies the digest instead: EOS_SIGNATURE_VARIANTS transactions that differ only in
 * expiration (1 second apart), one payload each; combine() keeps the first whose signature is
 * canonical. Which one is known only then, so `txHash` is null at craft time.
 */
export class EosTransferCrafter implements ExpiringCrafter {
  craft(request: ExpiringTransferRequest, input: TransferInput): UnsignedTransfer {
    requirePlainTransfer(request, 'EOS');
    const key = request.fromPublicKey;
    if (key?.curve !== 'secp256k1') fail('fromPublicKey must be a secp256k1 key');
    let publicKey: string;
    try {
      checkK1PublicKey(key);
      publicKey = eosPublicKeyToString(key);
    } catch (e) {
      fail(`fromPublicKey: ${(e as Error).message}`);
    }
    const account = field(input, 'account');
    if (typeof account !== 'string' || !isEosAccountName(account)) fail('input.account must be the hot wallet\'s account name');
    if (request.from !== account) fail(`from (${request.from}) is not input.account (${account})`);
    const permission = field(input, 'permission') ?? 'active';
    if (typeof permission !== 'string' || !isEosAccountName(permission)) fail('input.permission must be a permission name');
    if (typeof request.to !== 'string' || !isEosAccountName(request.to) || request.to === 'eosio.null') fail('to must be an EOS account name (not eosio.null)');
    if (request.to === account) fail('a transfer to the hot account itself is refused by the token contract');
    const memo = request.memo ?? '';
    if (request.memo !== null && !isEosMemo(request.memo)) fail('memo must be 1 to 256 bytes of UTF-8 without control characters');
    if (typeof request.amount !== 'bigint' || request.amount <= 0n || request.amount > EOS_MAX_ASSET_AMOUNT) {
      throw new RangeError(`EOS transfer: amount must be a bigint in 1..${EOS_MAX_ASSET_AMOUNT} base units`);
    }
    const token = tokenOf(request.contract);
    const precisionValue = field(input, 'precision') ?? (request.contract === null ? EOS_NATIVE_PRECISION : undefined);
    if (precisionValue === undefined) fail('input.precision (the token\'s decimals) is required for a token');
    if (typeof precisionValue !== 'number' || !Number.isInteger(precisionValue) || precisionValue < 0 || precisionValue > 18) fail('input.precision must be an integer in 0..18');
    const chainId = hex32(input, 'chainId');
    const refBlock = hex32(input, 'referenceBlockId');
    const expiration = expirationSeconds(input);
    const requireCanonical = field(input, 'requireCanonicalSignature') ?? true;
    if (typeof requireCanonical !== 'boolean') fail('input.requireCanonicalSignature must be a boolean');

    const quantity = formatEosQuantity(request.amount, precisionValue, token.symbol);
    const data = Buffer.from(eosTransferActionData(account, request.to, quantity, memo)).toString('hex');
    const count = requireCanonical ? EOS_SIGNATURE_VARIANTS : 1;
    const variants: EosVariant[] = [];
    const payloads: Uint8Array[] = [];
    for (let i = 0; i < count; i++) {
      const packed = serialize(eosTypes().transaction, {
        expiration: new Date((expiration - i) * 1000).toISOString().slice(0, 19),
        ref_block_num: refBlock.readUInt16BE(2), // the low 16 bits of the block number (its first 4 bytes, big-endian)
        ref_block_prefix: refBlock.readUInt32LE(8),
        max_net_usage_words: 0,
        max_cpu_usage_ms: 0,
        delay_sec: 0,
        context_free_actions: [],
        actions: [{ account: token.account, name: 'transfer', authorization: [{ actor: account, permission }], data }],
        transaction_extensions: [],
      });
      variants.push({ packedTrx: Buffer.from(packed).toString('hex') });
      payloads.push(eosSigningDigest(chainId, packed));
    }
    const state: EosTransferState = { chainId: chainId.toString('hex'), publicKey, requireCanonical, variants };
    const txHash = count === 1 ? sha256(Buffer.from(variants[0]!.packedTrx, 'hex')).toString('hex') : null;
    return { payloads, maxFee: 0n, txHash, state: JSON.parse(JSON.stringify(state)) as JsonValue };
  }

  combine(unsigned: UnsignedTransfer, signatures: readonly KeySignature[]): SignedTransaction {
    const state = unsigned.state as unknown as EosTransferState;
    if (typeof state !== 'object' || state === null || !Array.isArray(state.variants) || typeof state.chainId !== 'string' || typeof state.publicKey !== 'string') {
      fail('not an EOS unsigned transfer');
    }
    if (state.variants.length === 0 || unsigned.payloads.length !== state.variants.length) fail('the payloads do not match the state');
    if (signatures.length !== state.variants.length) fail(`${state.variants.length} signatures expected (one per payload), got ${signatures.length}`);
    const chainId = Buffer.from(state.chainId, 'hex');
    // Signatures are checked in order up to the first canonical one (the one used); the rest are
    // not needed. A signature that does not recover the hot key is a signer fault: refused.
    let chosen: { packedTrx: string; signature: string } | null = null;
    for (let i = 0; i < state.variants.length && chosen === null; i++) {
      const packed = Buffer.from(state.variants[i]!.packedTrx, 'hex');
      const digest = eosSigningDigest(chainId, packed);
      if (Buffer.compare(Buffer.from(unsigned.payloads[i]!), Buffer.from(digest)) !== 0) fail(`payload ${i} is not the digest of the state's transaction`);
      const sig = signatures[i]!;
      if (sig.curve !== 'secp256k1' || sig.bytes.length !== 64 || (sig.recovery !== 0 && sig.recovery !== 1)) {
        fail('each signature must be a 64-byte secp256k1 r || s with recovery id 0 or 1');
      }
      // compact form: 27 + 4 (compressed key) + recovery id, then r, s
      const text = signatureToString({ type: KeyType.k1, data: Uint8Array.from([31 + sig.recovery, ...sig.bytes]) });
      const recovered = Signature.fromString(text).recover(Buffer.from(digest), false).toString();
      if (recovered !== state.publicKey) {
        throw new Error(`EOS transfer: signature ${i} does not recover the hot wallet key for this transaction`);
      }
      if (!state.requireCanonical || isCanonicalEosSignature(sig.bytes)) chosen = { packedTrx: state.variants[i]!.packedTrx, signature: text };
    }
    if (chosen === null) {
      throw new Error(`EOS transfer: none of the ${state.variants.length} signatures is canonical; craft again from a fresh input (another reference block gives other digests)`);
    }
    const { packedTrx, signature } = chosen;
    // the push_transaction / send_transaction body (keys in wallet-core's order)
    const body = JSON.stringify({ compression: 'none', packed_context_free_data: '', packed_trx: packedTrx, signatures: [signature] });
    return { txHash: sha256(Buffer.from(packedTrx, 'hex')).toString('hex'), raw: Uint8Array.from(Buffer.from(body, 'utf8')) };
  }
}
