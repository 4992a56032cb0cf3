import { PublicKey as SolanaPublicKey, SystemProgram, TransactionMessage } from '@solana/web3.js';
import {
  singleAnswer, ChainRpcError, jsonBigInt,
  type BroadcastOutcome, type ChainEndpoint, type JsonRpcClient, type SenderCheck, type SenderLedger, type SignedTransaction, type TransactionState,
  type TransferInput, type TransferIntent, type TransferNode,
} from '@wcs/core';
import { SolanaSenderCheck } from './sender-check';
import { validateSolanaAddress } from './address';
import { solanaRpc, TRANSIENT_RPC_CODES, type SolanaRpcOptions } from './rpc';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from './scanner';
import { associatedTokenAddress, base58Encode, SOLANA_MAX_COMPUTE_UNITS, type SolanaTransferInput } from './transfer';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const U64_MAX = (1n << 64n) - 1n;
/** getSignatureStatuses takes at most 256 signatures per call. */
const STATUS_CHUNK = 256;
/** getMultipleAccounts takes at most 100 accounts per call. */
const ACCOUNTS_CHUNK = 100;
/** A block finalized (rooted) has at least 32 votes of lockout on top: reported with at least this many confirmations. */
const FINALIZED_CONFIRMATIONS = 32;
/** The size of an SPL Token account (Token program). */
const TOKEN_ACCOUNT_SIZE = 165;
/**
 * Token-2022: an associated token account is 165 bytes + the account type byte + the
 * ImmutableOwner extension (4-byte TLV header, no data) = 170, plus the account extensions the
 * mint's extensions require (TLV header + data).
 */
const TOKEN_2022_ACCOUNT_BASE = 170;
const TOKEN_2022_ACCOUNT_EXTENSIONS: Readonly<Record<string, number>> = {
  transferFeeConfig: 4 + 8, // TransferFeeAmount (withheld amount u64)
  nonTransferable: 4, // NonTransferableAccount
  transferHook: 4 + 1, // TransferHookAccount (transferring flag)
  pausableConfig: 4, // PausableAccount
};
/**
 * Simulation errors (data.err) that say "not now" rather than "never": account write locks,
 * block / account cost limits, cluster maintenance. The same bytes may be taken later.
 */
const TRY_LATER_ERRORS: ReadonlySet<string> = new Set([
  'AccountInUse', 'WouldExceedMaxBlockCostLimit', 'WouldExceedMaxAccountCostLimit', 'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataBlockLimit', 'WouldExceedAccountDataTotalLimit', 'ClusterMaintenance', 'ProgramExecutionTemporarilyRestricted',
]);
/** JSON-RPC codes of sendTransaction that are a verdict on the transaction itself: it does not verify (-32003) or decode / sanitize (-32602, -32013). */
const SEND_REJECTION_CODES: ReadonlySet<number> = new Set([-32003, -32602, -32013]);

export interface SolanaTransferNodeOptions extends SolanaRpcOptions {
  /** The chain's confirmations; a finalized transaction is reported with at least this many (and at least 32). */
  readonly confirmations?: number;
  /** Priority fee, micro-lamports per compute unit (none by default). With it, every input carries computeUnitPrice and a computeUnitLimit. */
  readonly computeUnitPrice?: bigint;
  /** Compute unit limits with a priority fee: SOL transfers (default 1000), token transfers (default 80000). */
  readonly computeUnitLimits?: { readonly native?: number; readonly token?: number };
}

/** One JSON-RPC answer of a batch. */
type RpcItem =
  | { readonly ok: true; readonly result: unknown }
  | { readonly ok: false; readonly code: number | null; readonly message: string; readonly data: unknown };

interface Call {
  readonly method: string;
  readonly params: unknown[];
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/** A base58 transaction signature (64 bytes). */
function isSignature(text: unknown): text is string {
  if (typeof text !== 'string' || !/^[1-9A-HJ-NP-Za-km-z]{64,88}$/.test(text)) return false;
  try {
    return Buffer.from(decodeBase58(text)).length === 64;
  } catch {
    return false;
  }
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
function decodeBase58(text: string): Uint8Array {
  let n = 0n;
  for (const c of text) {
    const d = BASE58.indexOf(c);
    if (d < 0) throw new TypeError('not base58');
    n = n * 58n + BigInt(d);
  }
  const hex = n === 0n ? '' : n.toString(16);
  const body = Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex');
  const zeros = text.length - text.replace(/^1+/, '').length;
  return Uint8Array.from(Buffer.concat([Buffer.alloc(zeros), body]));
}

/** A canonical Solana address, or TypeError naming the field. */
function address(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new TypeError(`Solana transfer node: ${what} must be a base58 address`);
  const v = validateSolanaAddress(value, null);
  if (!v.valid || v.normalized !== value) throw new TypeError(`Solana transfer node: ${what} is not a canonical Solana address${v.valid ? '' : ` (${v.reason})`}`);
  return value;
}

function limit(value: number | undefined, fallback: number, what: string): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 1 || v > SOLANA_MAX_COMPUTE_UNITS) throw new RangeError(`${what} must be an integer in 1..${SOLANA_MAX_COMPUTE_UNITS}`);
  return v;
}

/**
 * Withdrawal I/O against a Solana JSON-RPC endpoint, over the scanner's HTTP client (endpoint
 * headers and timeout, bounded retries, credentials kept out of messages; integers above 2^53
 * kept exact). Network faults and unusable answers throw ChainRpcError (messages name the
 * endpoint by scheme://host[:port] only); the node's verdicts on a transaction are returned. See README
 * "Withdrawal node".
 */
export class SolanaTransferNode implements TransferNode {
  private readonly rpc: JsonRpcClient;
  private readonly label: string;
  private readonly confirmations: number;
  private readonly computeUnitPrice: bigint | null;
  private readonly nativeLimit: number;
  private readonly tokenLimit: number;
  private readonly senders: SolanaSenderCheck;

  constructor(endpoint: ChainEndpoint, options: SolanaTransferNodeOptions = {}) {
    this.rpc = solanaRpc(endpoint, options, { redirect: 'error' });
    this.label = this.rpc.endpointName;
    const confirmations = options.confirmations ?? 1;
    if (!Number.isInteger(confirmations) || confirmations < 1) throw new RangeError('confirmations must be a positive integer');
    this.confirmations = Math.max(confirmations, FINALIZED_CONFIRMATIONS);
    const price = options.computeUnitPrice ?? null;
    if (price !== null && (typeof price !== 'bigint' || price < 0n || price > U64_MAX)) throw new RangeError('computeUnitPrice must be a bigint in 0..2^64-1 micro-lamports');
    this.computeUnitPrice = price;
    this.nativeLimit = limit(options.computeUnitLimits?.native, 1_000, 'computeUnitLimits.native');
    this.tokenLimit = limit(options.computeUnitLimits?.token, 80_000, 'computeUnitLimits.token');
    this.senders = new SolanaSenderCheck(async (calls, perCall) => (await this.batch(calls, true)).map((item, i) => {
      if (!perCall) return this.unwrap(item, calls[i]!.method);
      try {
        return this.unwrap(item, calls[i]!.method);
      } catch (e) {
        return asError(e);
      }
    }), this.label);
  }

  /**
   * The chain check before signing (sender-check.ts): the sender's recent signatures against the
   * transactions the database has; one the sender signed that the database does not know is AHEAD.
   */
  async senderCheck(sender: string, ledger: SenderLedger): Promise<SenderCheck> {
    return this.senders.check(address(sender, 'sender'), ledger);
  }

  /** senderCheck for many senders: their signatures in one batch, the database once, the unknown transactions in one batch. */
  async senderChecks(senders: readonly string[], ledger: SenderLedger): Promise<Array<SenderCheck | Error>> {
    return this.senders.checkMany(senders.map((s) => address(s, 'sender')), ledger);
  }

  // ------------------------------------------------------------------ transfer input

  /** What craft() needs for one request (see transferInputs). */
  async transferInput(request: TransferIntent): Promise<TransferInput> {
    return singleAnswer(this.transferInputs([request]));
  }

  /**
   * Inputs for many requests in two round trips. First batch: getLatestBlockhash (confirmed) and,
   * for token requests, getMultipleAccounts (jsonParsed, confirmed) of each mint and of the
   * destination owner's associated token account under both token programs (with
   * closeTokenAccount, of `from`'s too: its balance is the input's sourceTokenBalance). Nothing
   * reads `from`'s SOL: a sweep whose fee payer is another key works with `from` at 0. Second batch:
   * getFeeForMessage (the base fee of a one-signature message on that blockhash) and
   * getMinimumBalanceForRentExemption for each token account size to be created. The shared
   * reads failing throws; a request whose own reads fail (or whose mint is not a mint) gets its
   * Error. A malformed request throws TypeError before anything is sent.
   */
  async transferInputs(requests: readonly TransferIntent[]): Promise<Array<TransferInput | Error>> {
    const checked = requests.map((r, i) => this.checkRequest(r, i));
    if (checked.length === 0) return [];
    const accounts = [...new Set(checked.flatMap((c) => (c.mint === null ? [] : [c.mint, c.ataToken!, c.ataToken2022!, ...(c.source ? [c.source.token, c.source.token2022] : [])])))];
    const chunks: string[][] = [];
    for (let i = 0; i < accounts.length; i += ACCOUNTS_CHUNK) chunks.push(accounts.slice(i, i + ACCOUNTS_CHUNK));
    const first = await this.batch([
      { method: 'getLatestBlockhash', params: [{ commitment: 'confirmed' }] },
      ...chunks.map((keys) => ({ method: 'getMultipleAccounts', params: [keys, { encoding: 'jsonParsed', commitment: 'confirmed' }] })),
    ], true);
    const latest = this.value(this.unwrap(first[0]!, 'getLatestBlockhash'), 'getLatestBlockhash') as Json;
    const blockhash = latest.blockhash;
    const lastValid = jsonBigInt(latest.lastValidBlockHeight);
    if (typeof blockhash !== 'string' || !/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(blockhash) || lastValid === null || lastValid < 0n) {
      throw this.bad('getLatestBlockhash', 'no blockhash and lastValidBlockHeight');
    }
    // every account read, or the Error of its chunk
    const accountOf = new Map<string, Json | null | Error>();
    chunks.forEach((keys, c) => {
      let values: unknown[] | Error;
      try {
        const v = this.unwrap(first[1 + c]!, 'getMultipleAccounts');
        const list = isObject(v) ? v.value : undefined;
        if (!Array.isArray(list) || list.length !== keys.length) throw this.bad('getMultipleAccounts', `not ${keys.length} accounts`);
        values = list;
      } catch (e) {
        values = asError(e);
      }
      keys.forEach((k, i) => accountOf.set(k, values instanceof Error ? values : isObject(values[i]) ? (values[i] as Json) : null));
    });

    // token details per request, or its Error
    const details = checked.map((c): { program: string; decimals: number; exists: boolean; size: number; sourceBalance: bigint | null } | Error | null => {
      if (c.mint === null) return null;
      try {
        const mint = this.mintOf(c.mint, accountOf.get(c.mint)!);
        const ata = accountOf.get(mint.program === TOKEN_PROGRAM_ID ? c.ataToken! : c.ataToken2022!)!;
        if (ata instanceof Error) throw ata;
        // an account at the derived address that the token program owns; a pre-funded system account there is created over (CreateIdempotent)
        const exists = ata !== null && ata.owner === mint.program;
        let sourceBalance: bigint | null = null;
        if (c.source) {
          const source = accountOf.get(mint.program === TOKEN_PROGRAM_ID ? c.source.token : c.source.token2022)!;
          if (source instanceof Error) throw source;
          sourceBalance = this.tokenAmountOf(source, mint.program, c.mint, c.from);
        }
        return { program: mint.program, decimals: mint.decimals, exists, size: mint.accountSize, sourceBalance };
      } catch (e) {
        return asError(e);
      }
    });

    const sizes = [...new Set(details.flatMap((d) => (d !== null && !(d instanceof Error) && !d.exists ? [d.size] : [])))];
    const probe = this.feeProbe(checked[0]!.from, blockhash);
    const second = await this.batch([
      { method: 'getFeeForMessage', params: [probe, { commitment: 'confirmed' }] },
      ...sizes.map((size) => ({ method: 'getMinimumBalanceForRentExemption', params: [size, { commitment: 'confirmed' }] })),
    ], true);
    const fee = this.unwrap(second[0]!, 'getFeeForMessage');
    const feeValue = isObject(fee) ? fee.value : undefined;
    if (feeValue === null) {
      // the node does not know the blockhash it (or a sibling behind the same endpoint) just gave
      throw new ChainRpcError('RPC_UNAVAILABLE', `${this.label} does not know blockhash ${blockhash} yet; ask again`, { method: 'getFeeForMessage' });
    }
    const lamportsPerSignature = jsonBigInt(feeValue);
    if (lamportsPerSignature === null || lamportsPerSignature < 0n) throw this.bad('getFeeForMessage', 'no fee in lamports');
    const rentOf = new Map<number, bigint | Error>();
    sizes.forEach((size, i) => {
      try {
        const r = jsonBigInt(this.unwrap(second[1 + i]!, 'getMinimumBalanceForRentExemption'));
        if (r === null || r < 0n) throw this.bad('getMinimumBalanceForRentExemption', 'no amount of lamports');
        rentOf.set(size, r);
      } catch (e) {
        rentOf.set(size, asError(e));
      }
    });

    return checked.map((c, i): TransferInput | Error => {
      const d = details[i]!;
      if (d instanceof Error) return d;
      const base: { -readonly [K in keyof SolanaTransferInput]: SolanaTransferInput[K] } = {
        recentBlockhash: blockhash,
        lastValidBlockHeight: lastValid.toString(),
        lamportsPerSignature: lamportsPerSignature.toString(),
      };
      if (this.computeUnitPrice !== null) {
        base.computeUnitPrice = this.computeUnitPrice.toString();
        base.computeUnitLimit = d === null && c.memo === null ? this.nativeLimit : this.tokenLimit;
      }
      if (d === null) return { ...base };
      base.mintDecimals = d.decimals;
      base.tokenProgram = d.program;
      base.destinationTokenAccountExists = d.exists;
      if (d.sourceBalance !== null) base.sourceTokenBalance = d.sourceBalance.toString();
      if (!d.exists) {
        const rent = rentOf.get(d.size)!;
        if (rent instanceof Error) return rent;
        base.tokenAccountRent = rent.toString();
      }
      return { ...base };
    });
  }

  // ------------------------------------------------------------------ balance

  /**
   * Native (null contract): getBalance (confirmed) less the rent-exempt minimum of a 0-byte
   * account (getMinimumBalanceForRentExemption(0)), never below 0: the hot wallet pays the fees
   * and must stay rent-exempt (the runtime refuses a transaction that leaves it between 0 and
   * that minimum), so that much is not spendable. (A deposit account swept with another key as
   * fee payer may send all of getBalance and end at 0: sweepableBalance; this reading, the hot
   * wallet's, withholds the minimum all the same.) SPL token (contract = the mint):
   * getMultipleAccounts (jsonParsed, confirmed) of the mint and of the owner's associated token
   * account under both token programs; the balance of the one under the mint's program (the
   * account the crafter transfers from), 0 when it does not exist or is frozen.
   */
  async balance(owner: string, contract: string | null): Promise<bigint> {
    const a = address(owner, 'address');
    if (contract === null) {
      const [bal, rent] = await this.batch([
        { method: 'getBalance', params: [a, { commitment: 'confirmed' }] },
        { method: 'getMinimumBalanceForRentExemption', params: [0, { commitment: 'confirmed' }] },
      ], true);
      const lamports = jsonBigInt(this.value(this.unwrap(bal!, 'getBalance'), 'getBalance', true));
      if (lamports === null || lamports < 0n) throw this.bad('getBalance', 'no amount of lamports');
      const minimum = jsonBigInt(this.unwrap(rent!, 'getMinimumBalanceForRentExemption'));
      if (minimum === null || minimum < 0n) throw this.bad('getMinimumBalanceForRentExemption', 'no amount of lamports');
      return lamports > minimum ? lamports - minimum : 0n;
    }
    const mintAddress = address(contract, 'contract');
    const ataToken = associatedTokenAddress(a, mintAddress, TOKEN_PROGRAM_ID);
    const ataToken2022 = associatedTokenAddress(a, mintAddress, TOKEN_2022_PROGRAM_ID);
    const [answer] = await this.batch([{ method: 'getMultipleAccounts', params: [[mintAddress, ataToken, ataToken2022], { encoding: 'jsonParsed', commitment: 'confirmed' }] }], true);
    const list = this.value(this.unwrap(answer!, 'getMultipleAccounts'), 'getMultipleAccounts', true);
    if (!Array.isArray(list) || list.length !== 3) throw this.bad('getMultipleAccounts', 'not 3 accounts');
    const mint = this.mintOf(mintAddress, isObject(list[0]) ? list[0] : null);
    const ata = list[mint.program === TOKEN_PROGRAM_ID ? 1 : 2];
    return this.tokenAmountOf(isObject(ata) ? ata : null, mint.program, mintAddress, a);
  }

  /**
   * What a sweep of `owner` paid by another account (the hot wallet as fee payer) may move.
   * Native: all of getBalance (confirmed), the rent-exempt minimum included: the account is not
   * the fee payer, so the runtime lets it end at 0 lamports (it is removed); what `balance`
   * withholds is the fee payer's minimum. SPL token: `balance` (the whole token amount of the
   * owner's associated account, which a closing sweep must move entirely).
   */
  async sweepableBalance(owner: string, contract: string | null): Promise<bigint> {
    const a = address(owner, 'address');
    if (contract !== null) return this.balance(a, contract);
    const [bal] = await this.batch([{ method: 'getBalance', params: [a, { commitment: 'confirmed' }] }], true);
    const lamports = jsonBigInt(this.value(this.unwrap(bal!, 'getBalance'), 'getBalance', true));
    if (lamports === null || lamports < 0n) throw this.bad('getBalance', 'no amount of lamports');
    return lamports;
  }

  /**
   * The token amount of an owner's associated token account (jsonParsed) under the mint's
   * program: 0 when there is none (or the program does not own the address) or it is frozen
   * (nothing can move out of it); RPC_ERROR when the account there is not that owner's account
   * of that mint.
   */
  private tokenAmountOf(account: Json | null, program: string, mint: string, owner: string): bigint {
    if (account === null || account.owner !== program) return 0n;
    const parsed = isObject(account.data) && isObject(account.data.parsed) ? account.data.parsed : null;
    const info = parsed && isObject(parsed.info) ? parsed.info : null;
    if (!info || parsed!.type !== 'account' || info.mint !== mint || info.owner !== owner || !isObject(info.tokenAmount)) {
      throw this.bad('getMultipleAccounts', `no token account of ${mint} for ${owner} at its associated address`);
    }
    const amount = info.tokenAmount.amount;
    if (typeof amount !== 'string' || !/^(0|[1-9][0-9]{0,19})$/.test(amount) || BigInt(amount) > U64_MAX) throw this.bad('getMultipleAccounts', 'a token amount that is not a u64 decimal string');
    return info.state === 'frozen' ? 0n : BigInt(amount);
  }

  // ------------------------------------------------------------------ broadcast

  async broadcast(tx: SignedTransaction): Promise<BroadcastOutcome> {
    return singleAnswer(this.broadcastMany([tx]));
  }

  /**
   * sendTransaction (base64, preflight at confirmed, the blockhash's commitment) for each
   * transaction in one JSON-RPC batch; Solana has no sequences, so the order does not matter.
   * ACCEPTED: the node answered the transaction's signature. ALREADY_KNOWN: "already been
   * processed", or a refusal while getSignatureStatuses finds the signature. REJECTED (the node's
   * reason): a simulation failure (insufficient funds, account and instruction errors), a
   * signature that does not verify, bytes the node cannot decode, when the signature is not
   * found. Thrown per transaction: RPC_TRY_LATER for "not now" (Blockhash not found: the
   * blockhash may be newer than this node's view; node behind or unhealthy; rate limited;
   * account in use, cost limits); RPC_ERROR for another signature or an unknown node error.
   */
  async broadcastMany(txs: readonly SignedTransaction[]): Promise<Array<BroadcastOutcome | Error>> {
    const hashes = txs.map((tx) => {
      if (!tx || !(tx.raw instanceof Uint8Array) || tx.raw.length < 1 + 64 + 3) throw new TypeError('broadcast: tx.raw must be a signed Solana transaction');
      const count = tx.raw[0]!;
      if (count < 1 || count > 127) throw new TypeError('broadcast: tx.raw does not start with a signature count');
      const signature = base58Encode(tx.raw.subarray(1, 65));
      if (tx.txHash !== signature) throw new TypeError(`broadcast: tx.txHash ${String(tx.txHash)} is not the first signature of tx.raw (${signature})`);
      return signature;
    });
    if (txs.length === 0) return [];
    let sent: RpcItem[];
    try {
      sent = await this.batch(txs.map((tx) => ({
        method: 'sendTransaction',
        params: [Buffer.from(tx.raw).toString('base64'), { encoding: 'base64', skipPreflight: false, preflightCommitment: 'confirmed' }],
      })), false);
    } catch (e) {
      // rate limited: the node refused to take them now
      if (e instanceof ChainRpcError && e.errorName === 'RPC_UNAVAILABLE' && e.responseStatus === 429) {
        throw new ChainRpcError('RPC_TRY_LATER', `${this.label} is rate limiting (HTTP 429); broadcast the same transactions again later`, { method: 'sendTransaction', responseStatus: 429, attempts: e.attempts, cause: e });
      }
      throw e;
    }
    const out: Array<BroadcastOutcome | Error | 'ASK'> = sent.map((s, i) => this.sendOutcome(s, hashes[i]!));
    const ask = out.flatMap((o, i) => (o === 'ASK' ? [i] : []));
    if (ask.length > 0) {
      let found: Array<boolean | Error>;
      try {
        const seen = await this.signatureStatuses(ask.map((i) => hashes[i]!));
        found = seen.map((s) => (s instanceof Error ? s : s.entry !== null));
      } catch (e) {
        found = ask.map(() => asError(e));
      }
      ask.forEach((i, k) => {
        const f = found[k]!;
        const s = sent[i] as Extract<RpcItem, { ok: false }>;
        if (f instanceof Error) out[i] = f;
        else if (f) out[i] = { outcome: 'ALREADY_KNOWN', txHash: hashes[i]! };
        else if (this.simulationError(s) === 'BlockhashNotFound' || /blockhash not found/i.test(s.message)) out[i] = this.tryLater(hashes[i]!, s);
        else out[i] = { outcome: 'REJECTED', reason: this.reason(s) };
      });
    }
    return out as Array<BroadcastOutcome | Error>;
  }

  /** One sendTransaction answer: an outcome, an Error, or 'ASK' when getSignatureStatuses decides. */
  private sendOutcome(s: RpcItem, txHash: string): BroadcastOutcome | Error | 'ASK' {
    if (s.ok) {
      if (s.result !== txHash) return this.bad('sendTransaction', `signature ${String(s.result).slice(0, 90)}, not the transaction's ${txHash}`);
      return { outcome: 'ACCEPTED', txHash };
    }
    const err = this.simulationError(s);
    if (err === 'AlreadyProcessed' || /already been processed/i.test(s.message)) return { outcome: 'ALREADY_KNOWN', txHash };
    if (s.code !== null && TRANSIENT_RPC_CODES.has(s.code)) return this.tryLater(txHash, s);
    if (s.code === 429 || /rate limit|too many requests/i.test(s.message)) return this.tryLater(txHash, s);
    if (err !== null && TRY_LATER_ERRORS.has(err)) return this.tryLater(txHash, s);
    // Blockhash not found: expired, or newer than this node's view; the status decides between known and "not now"
    if (err === 'BlockhashNotFound' || /blockhash not found/i.test(s.message)) return 'ASK';
    // a preflight failure: nothing was forwarded; unless an earlier send of the same bytes landed, a verdict
    if (s.code === -32002) return 'ASK';
    if (s.code !== null && SEND_REJECTION_CODES.has(s.code)) return { outcome: 'REJECTED', reason: this.reason(s) };
    return new ChainRpcError('RPC_ERROR', `${this.label} answered node error ${s.code ?? '?'}: ${this.rpc.redact(s.message).slice(0, 200)}`, { method: 'sendTransaction', rpcCode: s.code });
  }

  /** The simulation's TransactionError name (data.err: "BlockhashNotFound", {"InstructionError": …} → "InstructionError"), or null. */
  private simulationError(s: Extract<RpcItem, { ok: false }>): string | null {
    const err = isObject(s.data) ? s.data.err : undefined;
    if (typeof err === 'string') return err;
    if (isObject(err)) return Object.keys(err)[0] ?? null;
    return null;
  }

  private reason(s: Extract<RpcItem, { ok: false }>): string {
    const err = isObject(s.data) && s.data.err !== undefined && s.data.err !== null ? ` (${JSON.stringify(s.data.err)})` : '';
    return `${this.rpc.redact(s.message).replace(/[\u0000-\u001f]/g, ' ').slice(0, 200)}${err.slice(0, 120)}`;
  }

  private tryLater(txHash: string, s: Extract<RpcItem, { ok: false }>): ChainRpcError {
    return new ChainRpcError('RPC_TRY_LATER', `${this.label} did not take ${txHash} now (${this.reason(s)}); broadcast the same transaction again later`, { method: 'sendTransaction', rpcCode: s.code });
  }

  // ------------------------------------------------------------------ status

  async status(txHash: string, input?: TransferInput): Promise<TransactionState> {
    return singleAnswer(this.statusMany([txHash], [input]));
  }

  /**
   * getSignatureStatuses (searchTransactionHistory, up to 256 signatures per call) and, when an
   * input is given, getEpochInfo at finalized, in one batch; then getTransaction (confirmed)
   * of the mined ones for the fee, in a second batch.
   * - processed → PENDING; confirmed → MINED with 1 confirmation; finalized → MINED with the
   *   chain's confirmations (at least 32). blockHeight = the slot, blockHash = the slot in decimal
   *   (as the scanner reports deposits), succeeded = err null, fee = meta.fee (null when the node
   *   has no record of the transaction yet).
   * - no status: EXPIRED when the finalized block height is above the input's
   *   lastValidBlockHeight and the status answer was read at a slot no older than that finalized
   *   slot; otherwise (or without an input) UNKNOWN.
   */
  async statusMany(txHashes: readonly string[], inputs?: ReadonlyArray<TransferInput | undefined>): Promise<Array<TransactionState | Error>> {
    txHashes.forEach((h) => {
      if (!isSignature(h)) throw new TypeError(`status: ${JSON.stringify(String(h).slice(0, 100))} is not a base58 transaction signature`);
    });
    if (txHashes.length === 0) return [];
    const lastValid = txHashes.map((_, i): bigint | null | Error => {
      const input = inputs?.[i];
      if (input === undefined || input === null) return null;
      const v = isObject(input) ? input.lastValidBlockHeight : undefined;
      if (typeof v !== 'string' || !/^(0|[1-9][0-9]{0,19})$/.test(v)) return new TypeError('status: input.lastValidBlockHeight is not a decimal block height');
      return BigInt(v);
    });
    const needEpoch = lastValid.some((v) => typeof v === 'bigint');
    const seen = await this.signatureStatuses(txHashes, needEpoch);
    const epoch = seen.epoch;

    const states: Array<TransactionState | Error> = seen.map((s, i) => {
      if (s instanceof Error) return s;
      const lv = lastValid[i]!;
      if (s.entry === null) {
        if (lv instanceof Error) return lv;
        if (lv === null) return { state: 'UNKNOWN' };
        if (epoch instanceof Error) return epoch;
        const expired = epoch !== null && epoch.height > lv && s.contextSlot !== null && s.contextSlot >= epoch.slot;
        return { state: expired ? 'EXPIRED' : 'UNKNOWN' };
      }
      return this.stateOf(s.entry, txHashes[i]!);
    });

    const mined = states.flatMap((s, i) => (!(s instanceof Error) && s.state === 'MINED' ? [i] : []));
    if (mined.length > 0) {
      let answers: RpcItem[] | Error;
      try {
        answers = await this.batch(mined.map((i) => ({
          method: 'getTransaction',
          params: [txHashes[i]!, { encoding: 'json', commitment: 'confirmed', maxSupportedTransactionVersion: 0 }],
        })), true);
      } catch (e) {
        answers = asError(e);
      }
      mined.forEach((i, k) => {
        try {
          if (answers instanceof Error) throw answers;
          const fee = this.feeOf(this.unwrap(answers[k]!, 'getTransaction'), txHashes[i]!);
          states[i] = { ...(states[i] as Extract<TransactionState, { state: 'MINED' }>), fee };
        } catch (e) {
          states[i] = asError(e);
        }
      });
    }
    return states;
  }

  /** A getSignatureStatuses entry as a state (MINED's fee filled in later). */
  private stateOf(entry: Json, txHash: string): TransactionState | Error {
    const slot = jsonBigInt(entry.slot);
    if (slot === null || slot < 0n) return this.bad('getSignatureStatuses', `a status without a slot for ${txHash}`);
    const level = entry.confirmationStatus;
    // nodes before confirmationStatus: confirmations null means rooted (finalized)
    const finalized = level === 'finalized' || ((level === undefined || level === null) && entry.confirmations === null);
    const confirmed = level === 'confirmed';
    if (!finalized && !confirmed) {
      if (level !== 'processed' && level !== undefined && level !== null) return this.bad('getSignatureStatuses', `confirmationStatus ${JSON.stringify(level).slice(0, 40)} for ${txHash}`);
      return { state: 'PENDING' };
    }
    return {
      state: 'MINED',
      blockHeight: slot,
      blockHash: slot.toString(),
      confirmations: finalized ? this.confirmations : 1,
      succeeded: entry.err === null || entry.err === undefined,
      fee: null,
    };
  }

  /** meta.fee of a getTransaction answer for txHash, exact; null when the node returns no transaction. */
  private feeOf(result: unknown, txHash: string): bigint | null {
    if (result === null) return null;
    if (!isObject(result) || !isObject(result.transaction) || !isObject(result.meta)) throw this.bad('getTransaction', `no transaction with meta for ${txHash}`);
    const sigs = result.transaction.signatures;
    if (!Array.isArray(sigs) || sigs[0] !== txHash) throw this.bad('getTransaction', `another transaction (${String(Array.isArray(sigs) ? sigs[0] : sigs).slice(0, 90)}) for ${txHash}`);
    const fee = jsonBigInt(result.meta.fee);
    if (fee === null || fee < 0n) throw this.bad('getTransaction', `no meta.fee for ${txHash}`);
    return fee;
  }

  /**
   * getSignatureStatuses of the signatures (chunks of 256) and, when asked, getEpochInfo
   * (finalized) in one batch: per signature its entry (or null) and the slot the answer was
   * read at, or its chunk's Error; `epoch` is the finalized slot and block height (null when not
   * asked, an Error when that read failed).
   */
  private async signatureStatuses(signatures: readonly string[], withEpoch = false): Promise<Array<{ entry: Json | null; contextSlot: bigint | null } | Error> & { epoch: { slot: bigint; height: bigint } | Error | null }> {
    const chunks: string[][] = [];
    for (let i = 0; i < signatures.length; i += STATUS_CHUNK) chunks.push(signatures.slice(i, i + STATUS_CHUNK));
    const calls: Call[] = chunks.map((c) => ({ method: 'getSignatureStatuses', params: [c, { searchTransactionHistory: true }] }));
    if (withEpoch) calls.push({ method: 'getEpochInfo', params: [{ commitment: 'finalized' }] });
    const answers = await this.batch(calls, true);
    let epoch: { slot: bigint; height: bigint } | Error | null = null;
    if (withEpoch) {
      try {
        const e = this.unwrap(answers[chunks.length]!, 'getEpochInfo');
        const slot = isObject(e) ? jsonBigInt(e.absoluteSlot) : null;
        const height = isObject(e) ? jsonBigInt(e.blockHeight) : null;
        if (slot === null || height === null || slot < 0n || height < 0n) throw this.bad('getEpochInfo', 'no absoluteSlot and blockHeight');
        epoch = { slot, height };
      } catch (e) {
        epoch = asError(e);
      }
    }
    const out: Array<{ entry: Json | null; contextSlot: bigint | null } | Error> = [];
    chunks.forEach((chunk, c) => {
      try {
        const r = this.unwrap(answers[c]!, 'getSignatureStatuses');
        const list = isObject(r) ? r.value : undefined;
        if (!Array.isArray(list) || list.length !== chunk.length) throw this.bad('getSignatureStatuses', `not ${chunk.length} statuses`);
        const contextSlot = isObject(r) && isObject(r.context) ? jsonBigInt(r.context.slot) : null;
        for (const e of list) {
          if (e !== null && !isObject(e)) throw this.bad('getSignatureStatuses', 'a status that is neither an object nor null');
          out.push({ entry: e as Json | null, contextSlot });
        }
      } catch (e) {
        for (let k = 0; k < chunk.length; k++) out.push(asError(e));
      }
    });
    return Object.assign(out, { epoch });
  }

  // ------------------------------------------------------------------ internals

  private checkRequest(r: TransferIntent, i: number) {
    const what = (f: string) => `request ${i} ${f}`;
    if (!isObject(r)) throw new TypeError(`Solana transfer node: request ${i} is not an object`);
    const from = address(r.from, what('from'));
    if (r.fromPublicKey?.curve !== 'ed25519' || !(r.fromPublicKey.bytes instanceof Uint8Array) || r.fromPublicKey.bytes.length !== 32
      || new SolanaPublicKey(r.fromPublicKey.bytes).toBase58() !== from) {
      throw new TypeError(`Solana transfer node: ${what('fromPublicKey')} must be the 32-byte ed25519 key of from`);
    }
    const to = address(r.to, what('to'));
    if (typeof r.amount !== 'bigint' || r.amount <= 0n || r.amount > U64_MAX) throw new TypeError(`Solana transfer node: ${what('amount')} must be a bigint in 1..2^64-1`);
    if (r.memo !== null && typeof r.memo !== 'string') throw new TypeError(`Solana transfer node: ${what('memo')} must be a string or null`);
    const mint = r.contract === null || r.contract === undefined ? null : address(r.contract, what('contract'));
    if (r.feePayer !== undefined && r.feePayer !== null) {
      const payer = address(r.feePayer.address, what('feePayer.address'));
      const key = r.feePayer.publicKey;
      if (key?.curve !== 'ed25519' || !(key.bytes instanceof Uint8Array) || key.bytes.length !== 32 || new SolanaPublicKey(key.bytes).toBase58() !== payer) {
        throw new TypeError(`Solana transfer node: ${what('feePayer.publicKey')} must be the 32-byte ed25519 key of feePayer.address`);
      }
    }
    if (r.closeTokenAccount !== undefined && r.closeTokenAccount !== null && typeof r.closeTokenAccount !== 'boolean') throw new TypeError(`Solana transfer node: ${what('closeTokenAccount')} must be a boolean`);
    const close = r.closeTokenAccount === true;
    if (close && mint === null) throw new TypeError(`Solana transfer node: ${what('closeTokenAccount')} is for token transfers (a contract)`);
    return {
      from,
      memo: r.memo,
      mint,
      ataToken: mint === null ? null : associatedTokenAddress(to, mint, TOKEN_PROGRAM_ID),
      ataToken2022: mint === null ? null : associatedTokenAddress(to, mint, TOKEN_2022_PROGRAM_ID),
      // closing from's token account: its balance is read (the crafter closes it only emptied)
      source: close && mint !== null ? { token: associatedTokenAddress(from, mint, TOKEN_PROGRAM_ID), token2022: associatedTokenAddress(from, mint, TOKEN_2022_PROGRAM_ID) } : null,
    };
  }

  /** The mint's program, decimals and the size of a new associated token account, from its jsonParsed account. */
  private mintOf(mint: string, account: Json | null | Error): { program: string; decimals: number; accountSize: number } {
    if (account instanceof Error) throw account;
    if (account === null) throw this.bad('getMultipleAccounts', `${this.label}: mint ${mint} does not exist`);
    const program = account.owner;
    const parsed = isObject(account.data) && isObject(account.data.parsed) ? account.data.parsed : null;
    const info = parsed && isObject(parsed.info) ? parsed.info : null;
    if ((program !== TOKEN_PROGRAM_ID && program !== TOKEN_2022_PROGRAM_ID) || !info || parsed!.type !== 'mint') {
      throw this.bad('getMultipleAccounts', `${this.label}: ${mint} is not an SPL token mint`);
    }
    const decimals = info.decimals;
    if (!Number.isInteger(decimals) || (decimals as number) < 0 || (decimals as number) > 255 || info.isInitialized !== true) {
      throw this.bad('getMultipleAccounts', `mint ${mint} without decimals or not initialized`);
    }
    let accountSize = TOKEN_ACCOUNT_SIZE;
    if (program === TOKEN_2022_PROGRAM_ID) {
      accountSize = TOKEN_2022_ACCOUNT_BASE;
      const extensions = Array.isArray(info.extensions) ? info.extensions : [];
      for (const e of extensions) {
        const name = isObject(e) ? e.extension : undefined;
        if (typeof name === 'string' && Object.prototype.hasOwnProperty.call(TOKEN_2022_ACCOUNT_EXTENSIONS, name)) accountSize += TOKEN_2022_ACCOUNT_EXTENSIONS[name]!;
      }
    }
    return { program, decimals: decimals as number, accountSize };
  }

  /** A one-signature legacy message on `blockhash` (a zero-lamport self transfer), base64: what getFeeForMessage prices. */
  private feeProbe(payer: string, blockhash: string): string {
    const key = new SolanaPublicKey(payer);
    const message = new TransactionMessage({
      payerKey: key,
      recentBlockhash: blockhash,
      instructions: [SystemProgram.transfer({ fromPubkey: key, toPubkey: key, lamports: 0 })],
    }).compileToLegacyMessage();
    return Buffer.from(message.serialize()).toString('base64');
  }

  /** result.value of an RpcResponse (context + value). */
  private value(result: unknown, method: string, allowScalar = false): unknown {
    if (!isObject(result) || !('value' in result)) throw this.bad(method, 'no context and value');
    const v = result.value;
    if (!allowScalar && !isObject(v)) throw this.bad(method, 'no value');
    return v;
  }

  /** The result of one answer, or the node's error thrown (RPC_UNAVAILABLE for the transient codes). */
  private unwrap(item: RpcItem, method: string): unknown {
    if (item.ok) return item.result;
    const name = item.code !== null && TRANSIENT_RPC_CODES.has(item.code) ? 'RPC_UNAVAILABLE' : 'RPC_ERROR';
    throw new ChainRpcError(name, `${this.label} answered node error ${item.code ?? '?'}: ${this.rpc.redact(item.message).slice(0, 200)}`, { method, rpcCode: item.code });
  }

  private bad(method: string, why: string): ChainRpcError {
    return new ChainRpcError('RPC_ERROR', `${this.label} answered ${why}`, { method });
  }

  /**
   * One JSON-RPC request (one call) or batch (several), answers in call order, through the kit's
   * client: network errors, timeouts, HTTP 408/429/5xx are retried (then RPC_UNAVAILABLE); with
   * `retryTransient`, so are calls answered with a transient node error (reads only: a send is
   * never repeated for that), and one still transient after the attempts fails the batch
   * (RPC_UNAVAILABLE). Other HTTP errors and unreadable answers throw. Node errors are returned per call.
   */
  private async batch(calls: readonly Call[], retryTransient: boolean): Promise<RpcItem[]> {
    const outcomes = await this.rpc.batch(calls, { retryItems: retryTransient });
    const unavailable = outcomes.find((o) => !o.ok && o.error.errorName === 'RPC_UNAVAILABLE');
    if (unavailable && !unavailable.ok) throw unavailable.error;
    return outcomes.map((o): RpcItem => (o.ok ? { ok: true, result: o.result } : { ok: false, code: o.rpc.code, message: o.rpc.message, data: o.rpc.data }));
  }
}
