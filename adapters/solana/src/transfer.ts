import { createPublicKey, verify as verifySignature } from 'node:crypto';
import {
  ComputeBudgetProgram, PublicKey as SolanaPublicKey, SystemProgram, TransactionInstruction, TransactionMessage,
} from '@solana/web3.js';
import type {
  JsonValue, KeySignature, SignedTransaction, TransferCrafter, TransferInput, TransferRequest, UnsignedTransfer,
} from '@wcs/core';
import { validateSolanaAddress } from './address';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from './scanner';

export const ASSOCIATED_TOKEN_PROGRAM_ID = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
export const MEMO_PROGRAM_ID = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';
/** Largest serialized transaction the cluster takes (IPv6 MTU minus headers). */
export const SOLANA_MAX_TRANSACTION_BYTES = 1232;
/** Most compute units one transaction may request. */
export const SOLANA_MAX_COMPUTE_UNITS = 1_400_000;
/** A withdrawal memo (Memo program v2 data), UTF-8 bytes. */
export const SOLANA_MAX_MEMO_BYTES = 256;

const U64_MAX = (1n << 64n) - 1n;
const MICRO_LAMPORTS = 1_000_000n;

/**
 * What craft() reads from the node (JSON, stored with the order). Amounts are decimal strings.
 *
 * - `recentBlockhash`: base58, from getLatestBlockhash; the transaction expires with it.
 * - `lastValidBlockHeight`: decimal, from the same call: the last block height at which the
 *   transaction can land (kept in the state for the node side; not part of the message).
 * - `lamportsPerSignature`: decimal, the base fee per signature (5000 on every cluster today).
 * - `computeUnitPrice` (optional): decimal micro-lamports per compute unit (priority fee); when
 *   given, `computeUnitLimit` (integer 1..1 400 000) is required and both ComputeBudget
 *   instructions are added.
 * SPL tokens (request.contract = the mint):
 * - `mintDecimals`: integer 0..255, the mint's decimals (TransferChecked checks it on chain).
 * - `tokenProgram` (optional): the mint's owner program, Token (default) or Token-2022.
 * - `destinationTokenAccountExists`: boolean, whether the destination owner's associated token
 *   account exists; when false it is created (CreateIdempotent, paid by the hot wallet) and
 *   `tokenAccountRent` (decimal lamports, the rent-exempt minimum of that account) is required.
 * - `allowOwnerOffCurve` (optional, default false): allow a destination that is not an ed25519
 *   point (a program derived address) as the owner of the destination token account.
 */
export interface SolanaTransferInput {
  readonly recentBlockhash: string;
  readonly lastValidBlockHeight: string;
  readonly lamportsPerSignature: string;
  readonly computeUnitPrice?: string;
  readonly computeUnitLimit?: number;
  readonly mintDecimals?: number;
  readonly tokenProgram?: string;
  readonly destinationTokenAccountExists?: boolean;
  readonly tokenAccountRent?: string;
  readonly allowOwnerOffCurve?: boolean;
}

/** The adapter-private state combine() reads. */
interface SolanaTransferState {
  readonly message: string; // base64 of the serialized message
  readonly signer: string; // base58 of the fee payer and only signer
  readonly lastValidBlockHeight: string;
}

// ---- small readers of request and input ----

function fail(message: string): never {
  throw new TypeError(`Solana transfer: ${message}`);
}

function field(input: TransferInput, name: string): JsonValue | undefined {
  return Object.prototype.hasOwnProperty.call(input, name) ? input[name] : undefined;
}

/** A decimal string (no sign, no leading zeros) in [min, max]. */
function decimalField(input: TransferInput, name: string, min: bigint, max: bigint, optional = false): bigint | undefined {
  const v = field(input, name);
  if (v === undefined || v === null) {
    if (optional) return undefined;
    fail(`input.${name} is required (decimal string)`);
  }
  if (typeof v !== 'string' || !/^(0|[1-9][0-9]{0,39})$/.test(v)) fail(`input.${name} must be a decimal string, got ${JSON.stringify(v)}`);
  const n = BigInt(v);
  if (n < min || n > max) throw new RangeError(`Solana transfer: input.${name} must be in ${min}..${max}, got ${v}`);
  return n;
}

function integerField(input: TransferInput, name: string, min: number, max: number, optional = false): number | undefined {
  const v = field(input, name);
  if (v === undefined || v === null) {
    if (optional) return undefined;
    fail(`input.${name} is required (integer)`);
  }
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) fail(`input.${name} must be an integer, got ${JSON.stringify(v)}`);
  if (v < min || v > max) throw new RangeError(`Solana transfer: input.${name} must be in ${min}..${max}, got ${v}`);
  return v;
}

function booleanField(input: TransferInput, name: string, optional = false): boolean | undefined {
  const v = field(input, name);
  if (v === undefined || v === null) {
    if (optional) return undefined;
    fail(`input.${name} is required (boolean)`);
  }
  if (typeof v !== 'boolean') fail(`input.${name} must be a boolean, got ${JSON.stringify(v)}`);
  return v;
}

/** A base58 32-byte key in canonical form. */
function keyOf(text: unknown, what: string): SolanaPublicKey {
  if (typeof text !== 'string' || !/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(text)) fail(`${what} is not a base58 key`);
  let key: SolanaPublicKey;
  try {
    key = new SolanaPublicKey(text);
  } catch {
    fail(`${what} is not a 32-byte base58 key`);
  }
  if (key.toBase58() !== text) fail(`${what} is not in canonical base58`);
  return key;
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Base58 (Bitcoin alphabet) of bytes: a transaction signature as Solana names it. */
export function base58Encode(bytes: Uint8Array): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = '';
  while (n > 0n) {
    out = BASE58[Number(n % 58n)]! + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = '1' + out;
  }
  return out;
}

/** The associated token account of (owner, mint) under a token program. */
export function associatedTokenAddress(owner: string, mint: string, tokenProgram: string = TOKEN_PROGRAM_ID): string {
  const [address] = SolanaPublicKey.findProgramAddressSync(
    [new SolanaPublicKey(owner).toBytes(), new SolanaPublicKey(tokenProgram).toBytes(), new SolanaPublicKey(mint).toBytes()],
    new SolanaPublicKey(ASSOCIATED_TOKEN_PROGRAM_ID),
  );
  return address.toBase58();
}

function u64le(value: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(value);
  return b;
}

/** SPL Token TransferChecked (instruction 12): amount u64 LE, decimals u8. */
function transferCheckedInstruction(source: SolanaPublicKey, mint: SolanaPublicKey, destination: SolanaPublicKey, owner: SolanaPublicKey, amount: bigint, decimals: number, tokenProgram: SolanaPublicKey): TransactionInstruction {
  return new TransactionInstruction({
    programId: tokenProgram,
    keys: [
      { pubkey: source, isSigner: false, isWritable: true },
      { pubkey: mint, isSigner: false, isWritable: false },
      { pubkey: destination, isSigner: false, isWritable: true },
      { pubkey: owner, isSigner: true, isWritable: false },
    ],
    data: Buffer.concat([Buffer.from([12]), u64le(amount), Buffer.from([decimals])]),
  });
}

/** Associated Token Account program CreateIdempotent (instruction 1): succeeds when the account exists. */
function createAtaIdempotentInstruction(payer: SolanaPublicKey, ata: SolanaPublicKey, owner: SolanaPublicKey, mint: SolanaPublicKey, tokenProgram: SolanaPublicKey): TransactionInstruction {
  return new TransactionInstruction({
    programId: new SolanaPublicKey(ASSOCIATED_TOKEN_PROGRAM_ID),
    keys: [
      { pubkey: payer, isSigner: true, isWritable: true },
      { pubkey: ata, isSigner: false, isWritable: true },
      { pubkey: owner, isSigner: false, isWritable: false },
      { pubkey: mint, isSigner: false, isWritable: false },
      { pubkey: SystemProgram.programId, isSigner: false, isWritable: false },
      { pubkey: tokenProgram, isSigner: false, isWritable: false },
    ],
    data: Buffer.from([1]),
  });
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

function memoInstruction(memo: string, signer: SolanaPublicKey): TransactionInstruction {
  if (memo.length === 0 || CONTROL.test(memo) || /\p{Cs}/u.test(memo) || Buffer.byteLength(memo, 'utf8') > SOLANA_MAX_MEMO_BYTES) {
    fail(`a memo is 1 to ${SOLANA_MAX_MEMO_BYTES} bytes of UTF-8 without control characters`);
  }
  return new TransactionInstruction({
    programId: new SolanaPublicKey(MEMO_PROGRAM_ID),
    keys: [{ pubkey: signer, isSigner: true, isWritable: false }],
    data: Buffer.from(memo, 'utf8'),
  });
}

function checkRequest(request: TransferRequest): { from: SolanaPublicKey; to: SolanaPublicKey } {
  if (request.fromPublicKey?.curve !== 'ed25519' || request.fromPublicKey.bytes?.length !== 32) fail('fromPublicKey must be a 32-byte ed25519 key');
  const from = new SolanaPublicKey(request.fromPublicKey.bytes);
  if (from.toBase58() !== request.from) fail('from is not the address of fromPublicKey');
  const target = validateSolanaAddress(request.to, null);
  if (!target.valid || target.normalized !== request.to) fail(`to is not a canonical Solana address${target.valid ? '' : `: ${target.reason}`}`);
  if (typeof request.amount !== 'bigint' || request.amount <= 0n || request.amount > U64_MAX) {
    throw new RangeError('Solana transfer: amount must be a bigint in 1..2^64-1 base units');
  }
  return { from, to: new SolanaPublicKey(request.to) };
}

/**
 * Offline withdrawal crafting for Solana: one legacy message, the hot wallet is the fee payer and
 * the only signer. Native SOL is a System Program transfer; an SPL token (contract = the mint) is
 * TransferChecked from the hot wallet's associated token account to the destination owner's,
 * preceded by CreateIdempotent when the input says that account is missing.
 *
 * The payload is the serialized message (ed25519 signs the message itself); the transaction id
 * is the signature, so `txHash` is null until combine().
 */
export class SolanaTransferCrafter implements TransferCrafter {
  craft(request: TransferRequest, input: TransferInput): UnsignedTransfer {
    const { from, to } = checkRequest(request);
    const recentBlockhash = keyOf(field(input, 'recentBlockhash'), 'input.recentBlockhash').toBase58();
    const lastValidBlockHeight = decimalField(input, 'lastValidBlockHeight', 0n, U64_MAX)!;
    const lamportsPerSignature = decimalField(input, 'lamportsPerSignature', 0n, 1_000_000_000n)!;
    const cuPrice = decimalField(input, 'computeUnitPrice', 0n, U64_MAX, true);
    const cuLimit = integerField(input, 'computeUnitLimit', 1, SOLANA_MAX_COMPUTE_UNITS, true);
    if ((cuPrice === undefined) !== (cuLimit === undefined)) fail('input.computeUnitPrice and input.computeUnitLimit go together');

    const instructions: TransactionInstruction[] = [];
    let maxFee = lamportsPerSignature; // one signature
    if (cuPrice !== undefined && cuLimit !== undefined) {
      instructions.push(ComputeBudgetProgram.setComputeUnitLimit({ units: cuLimit }));
      instructions.push(ComputeBudgetProgram.setComputeUnitPrice({ microLamports: cuPrice }));
      maxFee += (cuPrice * BigInt(cuLimit) + MICRO_LAMPORTS - 1n) / MICRO_LAMPORTS;
    }

    if (request.contract === null) {
      instructions.push(SystemProgram.transfer({ fromPubkey: from, toPubkey: to, lamports: request.amount }));
    } else {
      const mint = keyOf(request.contract, 'contract (the mint)');
      const decimals = integerField(input, 'mintDecimals', 0, 255)!;
      const tokenProgramText = (field(input, 'tokenProgram') ?? TOKEN_PROGRAM_ID) as string;
      if (tokenProgramText !== TOKEN_PROGRAM_ID && tokenProgramText !== TOKEN_2022_PROGRAM_ID) {
        fail(`input.tokenProgram must be ${TOKEN_PROGRAM_ID} or ${TOKEN_2022_PROGRAM_ID}`);
      }
      const tokenProgram = new SolanaPublicKey(tokenProgramText);
      if (!SolanaPublicKey.isOnCurve(to.toBytes()) && booleanField(input, 'allowOwnerOffCurve', true) !== true) {
        fail('the destination is not an ed25519 key (a program derived address): its token account is created only with input.allowOwnerOffCurve');
      }
      const exists = booleanField(input, 'destinationTokenAccountExists')!;
      const source = new SolanaPublicKey(associatedTokenAddress(request.from, request.contract, tokenProgramText));
      const destination = new SolanaPublicKey(associatedTokenAddress(request.to, request.contract, tokenProgramText));
      if (destination.equals(source)) fail('the destination token account is the hot wallet\'s own');
      if (!exists) {
        maxFee += decimalField(input, 'tokenAccountRent', 0n, 1_000_000_000_000n)!;
        instructions.push(createAtaIdempotentInstruction(from, destination, to, mint, tokenProgram));
      }
      instructions.push(transferCheckedInstruction(source, mint, destination, from, request.amount, decimals, tokenProgram));
    }
    if (request.memo !== null && request.memo !== undefined) instructions.push(memoInstruction(request.memo, from));

    const message = new TransactionMessage({ payerKey: from, recentBlockhash, instructions }).compileToLegacyMessage();
    const bytes = message.serialize();
    if (message.header.numRequiredSignatures !== 1) fail('the message must have exactly one signer');
    if (bytes.length + 65 > SOLANA_MAX_TRANSACTION_BYTES) fail(`the transaction would be ${bytes.length + 65} bytes, over ${SOLANA_MAX_TRANSACTION_BYTES}`);
    const state: SolanaTransferState = {
      message: Buffer.from(bytes).toString('base64'),
      signer: from.toBase58(),
      lastValidBlockHeight: lastValidBlockHeight.toString(),
    };
    return { payloads: [Uint8Array.from(bytes)], maxFee, txHash: null, state: { ...state } };
  }

  combine(unsigned: UnsignedTransfer, signatures: readonly KeySignature[]): SignedTransaction {
    const state = unsigned.state as unknown as SolanaTransferState;
    if (typeof state !== 'object' || state === null || typeof state.message !== 'string' || typeof state.signer !== 'string') fail('not a Solana unsigned transfer');
    const message = Buffer.from(state.message, 'base64');
    if (unsigned.payloads.length !== 1 || Buffer.compare(Buffer.from(unsigned.payloads[0]!), message) !== 0) fail('the payload is not the state\'s message');
    if (signatures.length !== 1) fail(`one signature expected, got ${signatures.length}`);
    const sig = signatures[0]!;
    if (sig.curve !== 'ed25519' || sig.bytes.length !== 64) fail('the signature must be a 64-byte ed25519 signature');
    const signer = keyOf(state.signer, 'state.signer');
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(signer.toBytes()).toString('base64url') }, format: 'jwk' });
    if (!verifySignature(null, message, key, Buffer.from(sig.bytes))) {
      throw new Error('Solana transfer: the signature does not verify for the hot wallet key and this message');
    }
    // wire format: compact-u16 signature count (1) || signature || message
    const raw = new Uint8Array(1 + 64 + message.length);
    raw[0] = 1;
    raw.set(sig.bytes, 1);
    raw.set(message, 65);
    return { txHash: base58Encode(sig.bytes), raw };
  }
}
