import { Address, Cell, beginCell, loadMessage, storeMessage, type Message, type Transaction } from '@ton/core';
import { sequenceVerdict } from '@wcs/core';
import type {
  BroadcastOutcome, ChainEndpoint, SenderCheck, SenderLedger, SignedTransaction, SequenceTransferNode, TransactionState, TransferInput, TransferIntent,
} from '@wcs/core';
import { TonApi, TonNodeRefusal, addressSlice, stackAddress, stackNum, type ApiTransaction } from './api';
import { TonAddresses, canonicalJettonMaster } from './address';
import { OP_JETTON_INTERNAL_TRANSFER, OP_JETTON_TRANSFER } from './messages';

export interface TonTransferNodeOptions {
  /** validUntil = now + this many seconds (default 300). */
  readonly txTimeoutSeconds?: number;
  /** The chain's confirmations (default 1). */
  readonly confirmations?: number;
  /** The local clock, ms since the epoch (default Date.now). */
  readonly now?: () => number;
  /** How many of the wallet's newest transactions status() looks through (default 200). */
  readonly statusDepth?: number;
  /**
   * Nanotons a sweep of the shared deposit account leaves there (sweepableBalance of Toncoin): what
   * pays its jetton sweeps (default DEFAULT_DEPOSIT_FLOAT; the chain option `depositFloat`).
   */
  readonly depositFloat?: bigint;
}

/** Toncoin a native sweep leaves in the shared deposit account by default: 0.1 TON, what its next jetton sweep attaches and pays with room to spare. */
export const DEFAULT_DEPOSIT_FLOAT = 100_000_000n;

/** The node's transfer input: TonTransferInput and the hot wallet it was read for. */
export type TonNodeTransferInput = {
  readonly validUntil: string;
  readonly deployed: boolean;
  readonly wallet: string;
  readonly jettonWallet?: string;
};

function messageHash(m: Message): string {
  return beginCell().store(storeMessage(m)).endCell().hash().toString('hex');
}

function opOf(m: Message): number | null {
  const s = m.body.beginParse();
  return s.remainingBits >= 32 ? s.preloadUint(32) : null;
}

/**
 * What the wallet paid for its own transaction, nanotons: the transaction's total fees (storage,
 * gas, the action phase's share of the forwarding fees) and, for each message it sent, the rest of
 * that message's forwarding fee, which the message carries to be collected on its way (a wallet's
 * balance falls by exactly the values sent plus this). Not in it: what a jetton transfer's attached
 * Toncoin pays further on (the jetton wallets' gas, a new jetton wallet's storage), which leaves as
 * part of the value sent and partly comes back as excess in a later transaction.
 */
export function walletFee(tx: Transaction): bigint {
  let fee = tx.totalFees.coins;
  for (const m of tx.outMessages.values()) if (m.info.type === 'internal') fee += m.info.forwardFee + m.info.ihrFee;
  return fee;
}

/** Whether a transaction failed: its compute or action phase failed, or the message bounced back. */
function failedReason(tx: Transaction): string | null {
  const d = tx.description;
  if (d.type !== 'generic') return `a ${d.type} transaction`;
  if (d.bouncePhase?.type === 'ok') return 'the message bounced';
  if (d.computePhase.type === 'vm' && !d.computePhase.success) return `exit code ${d.computePhase.exitCode}`;
  if (d.actionPhase && !d.actionPhase.success) return `action phase result ${d.actionPhase.resultCode}`;
  if (d.aborted && d.computePhase.type === 'vm') return 'aborted';
  return null;
}

/**
 * Withdrawal I/O over the node API (api.ts):
 * - transferInput: the hot wallet's state (deployed or not), validUntil = now + txTimeoutSeconds,
 *   and for a jetton the hot wallet's jetton wallet (master.get_wallet_address).
 * - nextSequence: the wallet's `seqno` get method (0 before it is deployed).
 * - balance: Toncoin: the account's balance; a jetton: its jetton wallet's get_wallet_data balance.
 * - broadcast: sendBocReturnHash; a refusal is REJECTED unless the message is already in the
 *   wallet's history (ALREADY_KNOWN).
 * - status: the wallet's transaction whose external message has this hash (its fee: walletFee), then the messages it
 *   sent, followed to their destinations: the transfer is MINED succeeded only when every hop
 *   took it (Toncoin: the destination did not bounce it; jettons: the hot jetton wallet and the
 *   recipient's jetton wallet both ran it). A hop not yet reached is PENDING. A wallet transaction
 *   that sent nothing (the message was dropped: send mode ignores errors) is failed.
 */
export class TonTransferNode implements SequenceTransferNode {
  private readonly api: TonApi;
  private readonly timeoutSeconds: bigint;
  private readonly confirmations: number;
  private readonly now: () => number;
  private readonly statusDepth: number;
  private readonly depositFloat: bigint;

  constructor(endpoint: ChainEndpoint, private readonly addresses: TonAddresses, options: TonTransferNodeOptions = {}) {
    this.api = new TonApi(endpoint);
    this.timeoutSeconds = BigInt(options.txTimeoutSeconds ?? 300);
    this.confirmations = Math.max(1, options.confirmations ?? 1);
    this.now = options.now ?? Date.now;
    this.statusDepth = options.statusDepth ?? 200;
    this.depositFloat = options.depositFloat ?? DEFAULT_DEPOSIT_FLOAT;
    if (this.depositFloat < 0n) throw new RangeError('TON depositFloat must not be negative');
  }

  private address(text: string, what: string): Address {
    const p = this.addresses.parse(text);
    if (!p.ok) throw new TypeError(`TON ${what}: ${p.reason}`);
    return p.address;
  }

  async transferInput(request: TransferIntent): Promise<TonNodeTransferInput> {
    const wallet = this.address(request.from, 'from');
    const account = await this.api.account(wallet);
    const validUntil = BigInt(Math.floor(this.now() / 1000)) + this.timeoutSeconds;
    const base = { validUntil: validUntil.toString(), deployed: account.state === 'active', wallet: request.from };
    if (request.contract === null) return base;
    const jettonWallet = await this.jettonWalletOf(request.contract, wallet);
    return { ...base, jettonWallet: jettonWallet.toRawString() };
  }

  private async jettonWalletOf(contract: string, owner: Address): Promise<Address> {
    const master = Address.parse(canonicalJettonMaster(contract));
    const r = await this.api.runGetMethod(master, 'get_wallet_address', [addressSlice(owner)]);
    if (r.exitCode !== 0) throw new Error(`TON get_wallet_address of ${contract}: exit code ${r.exitCode} (not a jetton master?)`);
    return stackAddress(r.stack[0], 'get_wallet_address');
  }

  async nextSequence(address: string): Promise<bigint> {
    const wallet = this.address(address, 'address');
    const account = await this.api.account(wallet);
    if (account.state !== 'active') return 0n;
    const r = await this.api.runGetMethod(wallet, 'seqno');
    if (r.exitCode !== 0) throw new Error(`TON seqno of ${address}: exit code ${r.exitCode}`);
    return stackNum(r.stack[0], 'seqno');
  }

  /**
   * The chain check before signing (docs/transfers.md): the wallet's seqno (nextSequence: 0 before
   * it is deployed) against the database's next sequence, read after it; a wallet the database has
   * signed nothing from is compared with 0. AHEAD when the seqno is past it: the wallet sent
   * messages the database does not know. The node API shows applied transactions only: a message
   * still in flight shows once applied.
   */
  async senderCheck(sender: string, ledger: SenderLedger): Promise<SenderCheck> {
    const chainNext = await this.nextSequence(sender);
    const known = (await ledger.nextSequences([sender])).get(sender) ?? null;
    return sequenceVerdict(sender, known, chainNext, null, 0n)!;
  }

  async balance(address: string, contract: string | null): Promise<bigint> {
    const owner = this.address(address, 'address');
    if (contract === null) return (await this.api.account(owner)).balance;
    const jw = await this.jettonWalletOf(contract, owner);
    const account = await this.api.account(jw);
    if (account.state !== 'active') return 0n;
    const r = await this.api.runGetMethod(jw, 'get_wallet_data');
    if (r.exitCode !== 0) throw new Error(`TON get_wallet_data of ${jw.toString()}: exit code ${r.exitCode}`);
    return stackNum(r.stack[0], 'get_wallet_data balance');
  }

  /**
   * What a collection sweep of an account may move: a jetton's whole balance; of Toncoin, what is
   * above the deposit float. The shared deposit account pays every sweep's fee itself, and a jetton
   * sweep attaches Toncoin for the jetton wallets (jettonGas): a Toncoin sweep of everything would
   * leave the account unable to sweep its jettons (their transfer dropped for want of Toncoin).
   */
  async sweepableBalance(address: string, contract: string | null): Promise<bigint> {
    const b = await this.balance(address, contract);
    if (contract !== null) return b;
    return b > this.depositFloat ? b - this.depositFloat : 0n;
  }

  async broadcast(tx: SignedTransaction): Promise<BroadcastOutcome> {
    if (!tx || !(tx.raw instanceof Uint8Array) || tx.raw.length === 0) throw new TypeError('broadcast: tx.raw must be the external message BOC');
    let message: Message;
    try {
      message = loadMessage(Cell.fromBoc(Buffer.from(tx.raw))[0]!.beginParse());
    } catch (e) {
      throw new TypeError(`broadcast: raw is not a TON message (${(e as Error).message})`);
    }
    if (message.info.type !== 'external-in') throw new TypeError('broadcast: raw is not an external message');
    const hash = messageHash(message);
    if (tx.txHash !== hash) throw new TypeError(`broadcast: tx.txHash ${tx.txHash} is not the hash of tx.raw (${hash})`);
    try {
      await this.api.sendBoc(Buffer.from(tx.raw));
      return { outcome: 'ACCEPTED', txHash: hash };
    } catch (e) {
      if (!(e instanceof TonNodeRefusal)) throw e;
      // a re-send of a message the wallet already took (its seqno has moved on)
      if (await this.findWalletTransaction(message.info.dest, hash)) return { outcome: 'ALREADY_KNOWN', txHash: hash };
      return { outcome: 'REJECTED', reason: e.reason };
    }
  }

  async tipHeight(): Promise<bigint> {
    return this.api.masterchainSeqno();
  }

  async status(txHash: string, input?: TransferInput): Promise<TransactionState> {
    if (typeof txHash !== 'string' || !/^[0-9a-fA-F]{64}$/.test(txHash)) throw new TypeError('status: txHash must be 64 hex digits');
    const walletText = input && typeof input.wallet === 'string' ? input.wallet : null;
    if (walletText === null) throw new TypeError('status: the transfer input (with its wallet) is required on TON');
    const wallet = this.address(walletText, 'wallet');
    const found = await this.findWalletTransaction(wallet, txHash.toLowerCase());
    if (!found) return { state: 'UNKNOWN' };
    const tip = await this.api.masterchainSeqno();
    const confirmations = Math.max(this.confirmations, Number(tip - found.mcBlockSeqno + 1n));
    const mined = { state: 'MINED' as const, blockHeight: found.mcBlockSeqno, blockHash: String(found.mcBlockSeqno), confirmations, fee: walletFee(found.tx) };
    if (failedReason(found.tx) !== null) return { ...mined, succeeded: false };
    const out = [...found.tx.outMessages.values()].filter((m) => m.info.type === 'internal');
    if (out.length === 0) return { ...mined, succeeded: false };
    for (const m of out) {
      const outcome = await this.follow(m, 0);
      if (outcome === 'pending') return { state: 'PENDING' };
      if (outcome === 'failed') return { ...mined, succeeded: false };
    }
    return { ...mined, succeeded: true };
  }

  /** Follows an internal message to the transaction that took it: jetton transfers one hop further. */
  private async follow(m: Message, depth: number): Promise<'ok' | 'failed' | 'pending'> {
    if (m.info.type !== 'internal') return 'ok';
    const dest = m.info.dest;
    const hash = messageHash(m);
    const page = await this.api.transactions(dest, this.statusDepth, null, m.info.createdLt);
    const t = page.find((x) => x.tx.inMessage && messageHash(x.tx.inMessage) === hash);
    if (!t) return 'pending';
    if (failedReason(t.tx) !== null) return 'failed';
    const op = opOf(m);
    if (depth === 0 && op === OP_JETTON_TRANSFER) {
      const next = [...t.tx.outMessages.values()].filter((x) => x.info.type === 'internal' && opOf(x) === OP_JETTON_INTERNAL_TRANSFER);
      if (next.length === 0) return 'failed';
      for (const n of next) {
        const r = await this.follow(n, depth + 1);
        if (r !== 'ok') return r;
      }
    }
    return 'ok';
  }

  private async findWalletTransaction(wallet: Address, hash: string): Promise<ApiTransaction | null> {
    const page = await this.api.transactions(wallet, this.statusDepth);
    return page.find((t) => t.tx.inMessage?.info.type === 'external-in' && messageHash(t.tx.inMessage) === hash) ?? null;
  }
}
