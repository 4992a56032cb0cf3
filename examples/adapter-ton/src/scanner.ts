import { Address } from '@ton/core';
import type { ChainEndpoint, HistoryScanner, ObservedTransfer } from '@wcs/core';
import { TonApi, addressSlice, stackAddress, type ApiTransaction } from './api';
import { TonAddresses, jettonMasterForm } from './address';
import { bodyFacts, type BodyFacts } from './body';
import { OP_JETTON_EXCESSES, memoOfComment } from './messages';

/** Transactions read per getTransactions request. */
const PAGE = 256;
const CURSOR = /^(0|[1-9][0-9]{0,19}):([0-9a-f]{64})$/;

export function formatCursor(lt: bigint, hash: string): string {
  return `${lt}:${hash}`;
}

function parseCursor(cursor: string): { lt: bigint; hash: string } {
  const m = CURSOR.exec(cursor);
  if (!m) throw new TypeError(`TON scanner: cursor ${JSON.stringify(cursor)} is not "<lt>:<hash>"`);
  return { lt: BigInt(m[1]!), hash: m[2]! };
}

export interface TonScannerOptions {
  /** Longest walk back from the newest transaction to the cursor (default 100,000 transactions). */
  readonly maxWalk?: number;
  /**
   * Jetton wallets checked with their masters, "<wallet raw>><owner raw>" → the master or null (not
   * genuine): shared by the scanners of one adapter and endpoint (createTonAdapter), so a scanner
   * created again (a restart of the scan, a catch-up) does not ask the masters again. Default: the
   * scanner's own. At most 10,000 entries (then it starts over).
   */
  readonly jettonWallets?: Map<string, Address | null>;
}

const MAX_JETTON_WALLETS = 10_000;

/**
 * Deposit scanning of the shared deposit address from its transactions (an account-history
 * scanner: the cursor is "<lt>:<hash>" of the last transaction handled).
 *
 * The node lists transactions newest first, so the scanner walks back from the newest to the
 * cursor once and keeps what it read, oldest first, serving the next calls (a catch-up of many
 * transactions is one walk, not one per call).
 *
 * Each transaction's inbound internal message is one transfer (position 0):
 * - Toncoin: the message's value; memo = the trimmed text comment (op 0), null without one (an
 *   unattributed deposit). A message that bounced back (bounce phase ok: the account could not take
 *   it) is reported with succeeded false; bounced messages (returns of the account's own sends),
 *   jetton excesses and zero values are no deposits.
 * - Jettons: a transfer_notification from a jetton wallet whose owner is this address and that
 *   its master vouches for (get_wallet_data → master; master.get_wallet_address(owner) = sender):
 *   amount and sender from the notification, memo from its forward payload's comment, contract =
 *   the master (EQ… form). A notification from any other contract (anyone can send one) is ignored.
 *   A jetton deposit is seen only when the sender attached a forward_ton_amount (as exchanges ask).
 */
export class TonScanner implements HistoryScanner {
  readonly kind = 'history' as const;
  private readonly api: TonApi;
  private readonly maxWalk: number;
  /** Per address: transactions read after `cursor`, oldest first, not yet handed out. */
  private readonly pending = new Map<string, { cursor: string | null; txs: ApiTransaction[] }>();
  /** Jetton wallet (raw) → its verified master for an owner, or null when it is not a genuine one. */
  private readonly jettonWallets: Map<string, Address | null>;
  /** Sender (raw) → its service form. */
  private readonly senders = new Map<string, string>();

  constructor(endpoint: ChainEndpoint, private readonly addresses: TonAddresses, options: TonScannerOptions = {}) {
    this.api = new TonApi(endpoint);
    this.maxWalk = options.maxWalk ?? 100_000;
    this.jettonWallets = options.jettonWallets ?? new Map();
  }

  tipHeight(): Promise<bigint> {
    return this.api.masterchainSeqno();
  }

  async transfersSince(address: string, cursor: string | null, limit: number): Promise<{ transfers: ObservedTransfer[]; cursor: string | null }> {
    const parsed = this.addresses.parse(address);
    if (!parsed.ok) throw new TypeError(`TON scanner: ${address}: ${parsed.reason}`);
    const account = parsed.address;
    const after = cursor === null ? null : parseCursor(cursor);
    const max = Math.max(1, Math.floor(limit));
    let cached = this.pending.get(address);
    if (!cached || cached.cursor !== cursor || cached.txs.length === 0) {
      cached = { cursor, txs: await this.walk(account, after) };
      this.pending.set(address, cached);
    }
    const batch = cached.txs.slice(0, max);
    if (batch.length === 0) return { transfers: [], cursor };
    const transfers: ObservedTransfer[] = [];
    const accountRaw = account.toRawString();
    for (const t of batch) {
      const observed = await this.transferOf(account, accountRaw, address, t);
      if (observed) transfers.push(observed);
    }
    const last = batch[batch.length - 1]!;
    const next = formatCursor(last.lt, last.hash);
    this.pending.set(address, { cursor: next, txs: cached.txs.slice(batch.length) });
    return { transfers, cursor: next };
  }

  /** Every transaction of account after `after`, oldest first. */
  private async walk(account: Address, after: { lt: bigint; hash: string } | null): Promise<ApiTransaction[]> {
    const newestFirst: ApiTransaction[] = [];
    let from: { lt: bigint; hash: string } | null = null;
    for (;;) {
      const page = await this.api.transactions(account, PAGE, from, after?.lt ?? null);
      for (const t of page) {
        if (after && t.lt <= after.lt) break;
        newestFirst.push(t);
      }
      if (page.length < PAGE) break;
      const oldest = page[page.length - 1]!;
      if (oldest.prev.lt === 0n || (after && oldest.prev.lt <= after.lt)) break;
      if (newestFirst.length >= this.maxWalk) throw new Error(`TON scanner: more than ${this.maxWalk} transactions after the cursor of ${account.toString()}`);
      from = oldest.prev;
    }
    if (after && newestFirst.length > 0) {
      // the cursor's own transaction must be the one before the oldest read: else the node forgot it (pruned history) or it is another chain
      const oldest = newestFirst[newestFirst.length - 1]!;
      if (oldest.prev.lt !== after.lt || oldest.prev.hash !== after.hash) {
        throw new Error(`TON scanner: the transaction before ${oldest.lt}:${oldest.hash} is not the cursor's ${after.lt}:${after.hash}`);
      }
    }
    return newestFirst.reverse();
  }

  private async transferOf(account: Address, accountRaw: string, address: string, t: ApiTransaction): Promise<ObservedTransfer | null> {
    const msg = t.inMsg;
    if (!msg || msg.source === null) return null;
    if (msg.destination !== accountRaw) throw new Error(`TON scanner: transaction ${t.lt}:${t.hash} listed for ${account.toRawString()} took a message to ${msg.destination}`);
    if (msg.bounced) return null;
    let comment = msg.text;
    if (msg.body !== null) {
      // not a comment: the body is read (a jetton notification, excesses, anything else)
      let facts: BodyFacts;
      try {
        facts = bodyFacts(msg.body);
      } catch (e) {
        throw new Error(`TON scanner: the body of transaction ${t.lt}:${t.hash} is not a BOC (${(e as Error).message})`);
      }
      const notification = facts.notification;
      if (notification) {
        const master = await this.verifiedMaster(Address.parseRaw(msg.source), account);
        if (!master) return null;
        if (notification.amount <= 0n) return null;
        // object literals written out: a spread of a shared base costs ~15 µs a transfer in V8 here
        return {
          txHash: t.hash, position: 0, toAddress: address, blockHeight: t.mcBlockSeqno, blockHash: String(t.mcBlockSeqno),
          fromAddress: notification.sender ? this.addresses.format(notification.sender, false) : null,
          memo: memoOfComment(notification.comment),
          contract: jettonMasterForm(master),
          amount: notification.amount,
          succeeded: true,
        };
      }
      if (facts.op === OP_JETTON_EXCESSES) return null;
      comment = facts.comment;
    }
    const value = msg.value;
    if (value <= 0n) return null;
    return {
      txHash: t.hash, position: 0, toAddress: address, blockHeight: t.mcBlockSeqno, blockHash: String(t.mcBlockSeqno),
      fromAddress: this.sourceForm(msg.source),
      memo: memoOfComment(comment),
      contract: null,
      amount: value,
      // a bounce phase (ordinary transactions only) that sent the value back
      succeeded: t.description.bounce !== 'ok',
    };
  }

  /** A sender's service form (non-bounceable), remembered: deposits come from few senders. */
  private sourceForm(raw: string): string {
    let form = this.senders.get(raw);
    if (form === undefined) {
      if (this.senders.size >= 10_000) this.senders.clear();
      form = this.addresses.format(Address.parseRaw(raw), false);
      this.senders.set(raw, form);
    }
    return form;
  }

  /** The master of jettonWallet when it is a genuine jetton wallet of owner, else null. */
  private async verifiedMaster(jettonWallet: Address, owner: Address): Promise<Address | null> {
    const key = `${jettonWallet.toRawString()}>${owner.toRawString()}`;
    if (this.jettonWallets.has(key)) return this.jettonWallets.get(key)!;
    let verified: Address | null = null;
    const data = await this.api.runGetMethod(jettonWallet, 'get_wallet_data');
    if (data.exitCode === 0 && data.stack.length >= 3) {
      const walletOwner = stackAddress(data.stack[1], 'get_wallet_data owner');
      const master = stackAddress(data.stack[2], 'get_wallet_data master');
      if (walletOwner.equals(owner)) {
        const r = await this.api.runGetMethod(master, 'get_wallet_address', [addressSlice(owner)]);
        if (r.exitCode === 0 && stackAddress(r.stack[0], 'get_wallet_address').equals(jettonWallet)) verified = master;
      }
    }
    if (this.jettonWallets.size >= MAX_JETTON_WALLETS) this.jettonWallets.clear();
    this.jettonWallets.set(key, verified);
    return verified;
  }
}
