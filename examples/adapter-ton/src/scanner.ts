import { Address, beginCell, contractAddress, type Cell } from '@ton/core';
import { mapLimit, type ChainEndpoint, type HistoryScanner, type ObservedTransfer } from '@wcs/core';
import { TonApi, addressSlice, stackAddress, type ApiTransaction } from './api';
import { TonAddresses, jettonMasterForm } from './address';
import { bodyFacts, type BodyFacts } from './body';
import { OP_JETTON_EXCESSES, memoOfComment, type JettonNotification } from './messages';

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
  /**
   * Whether a jetton wallet of known code (the TEP-74 reference wallet, see JETTON_WALLET_CODE) is
   * checked from the code and data cells of the wallet and its master (getAddressInformation: the
   * master's wallet address for the owner computed from its StateInit) instead of running their
   * get methods (default true). A wallet or master of any other code is asked its get methods.
   */
  readonly readJettonCode?: boolean;
}

const MAX_JETTON_WALLETS = 10_000;
/** Distinct jetton wallets checked at once (a batch's, before its transfers are read). */
const JETTON_CHECKS = 4;

/**
 * The TEP-74 reference jetton wallet's code (token-contract ft/jetton-wallet.fc), by cell hash:
 * storage balance:Coins owner:MsgAddress master:MsgAddress wallet_code:^Cell.
 */
const JETTON_WALLET_CODE = Buffer.from('a760d629d5343e76d045017d9dc216fc8a307a8377815feb2b0a5c490e733486', 'hex');
/**
 * The TEP-74 discoverable jetton minter's code (token-contract ft/jetton-minter-discoverable.fc,
 * the minter most jettons were deployed with), by cell hash: storage total_supply:Coins
 * admin:MsgAddress content:^Cell wallet_code:^Cell; get_wallet_address(owner) is the basechain
 * address of StateInit(wallet_code, (0, owner, master, wallet_code)), and nothing changes the
 * wallet code it keeps.
 */
const JETTON_MINTER_CODE = Buffer.from('0571976c63ec1b7550230a2609dbedb36e1b64ef8d022a16b34ea57063185b2f', 'hex');

/** A jetton notification waiting for its wallet's check. */
interface PendingJetton {
  readonly t: ApiTransaction;
  readonly wallet: string;
  readonly notification: JettonNotification;
}

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
 *   its master vouches for (get_wallet_data → master; master.get_wallet_address(owner) = sender; for
 *   the reference jetton code, the same read from the wallet's and the master's cells, see readJettonCode):
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
  private readonly readJettonCode: boolean;
  /** Jetton master (raw) → the wallet code of a discoverable minter, or null for any other account. */
  private readonly masterCode = new Map<string, Promise<Cell | null>>();

  constructor(endpoint: ChainEndpoint, private readonly addresses: TonAddresses, options: TonScannerOptions = {}) {
    this.api = new TonApi(endpoint);
    this.maxWalk = options.maxWalk ?? 100_000;
    this.jettonWallets = options.jettonWallets ?? new Map();
    this.readJettonCode = options.readJettonCode ?? true;
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
    const accountRaw = account.toRawString();
    const read: Array<ObservedTransfer | PendingJetton | null> = [];
    // jetton wallet (raw) → its master, or null: the batch's wallets not checked yet are checked each once, a few at a time
    const masters = new Map<string, Address | null>();
    const unchecked = new Set<string>();
    for (const t of batch) {
      const r = this.transferOf(account, accountRaw, address, t);
      read.push(r);
      if (r === null || !('notification' in r) || masters.has(r.wallet)) continue;
      const known = this.jettonWallets.get(`${r.wallet}>${accountRaw}`);
      if (known === undefined) unchecked.add(r.wallet);
      else masters.set(r.wallet, known);
    }
    if (unchecked.size > 0) {
      const wallets = [...unchecked];
      const verified = await mapLimit(wallets, JETTON_CHECKS, (w) => this.verifiedMaster(Address.parseRaw(w), account));
      wallets.forEach((w, i) => masters.set(w, verified[i]!));
    }
    const transfers: ObservedTransfer[] = [];
    for (const r of read) {
      if (r === null) continue;
      if (!('notification' in r)) {
        transfers.push(r);
        continue;
      }
      const master = masters.get(r.wallet);
      if (!master) continue;
      transfers.push(this.jettonTransfer(address, r, master));
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

  /** A transaction's transfer: a jetton notification waits for its wallet's check. */
  private transferOf(account: Address, accountRaw: string, address: string, t: ApiTransaction): ObservedTransfer | PendingJetton | null {
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
      if (notification) return notification.amount > 0n ? { t, wallet: msg.source, notification } : null;
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

  private jettonTransfer(address: string, { t, notification }: PendingJetton, master: Address): ObservedTransfer {
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
    let verified = this.readJettonCode ? await this.masterFromCode(jettonWallet, owner) : undefined;
    if (verified === undefined) verified = await this.masterFromGetMethods(jettonWallet, owner);
    if (this.jettonWallets.size >= MAX_JETTON_WALLETS) this.jettonWallets.clear();
    this.jettonWallets.set(key, verified);
    return verified;
  }

  /** The wallet's master as its get methods and its master's say (get_wallet_data, get_wallet_address), else null. */
  private async masterFromGetMethods(jettonWallet: Address, owner: Address): Promise<Address | null> {
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
    return verified;
  }

  /**
   * The wallet's master read from the cells, for the reference jetton wallet code: the wallet's
   * data names owner and master, and the master's wallet address for owner (computed from a
   * discoverable minter's wallet code, else its get_wallet_address) must be this wallet. undefined:
   * another code, which its get methods decide.
   */
  private async masterFromCode(jettonWallet: Address, owner: Address): Promise<Address | null | undefined> {
    const wallet = await this.api.accountCode(jettonWallet);
    // a contract that sent a message and has no code now: no jetton wallet (its get methods could not run either)
    if (wallet.state !== 'active' || !wallet.code || !wallet.data) return null;
    if (!wallet.code.hash().equals(JETTON_WALLET_CODE)) return undefined;
    let walletOwner: Address;
    let master: Address;
    try {
      const s = wallet.data.beginParse();
      s.loadCoins();
      walletOwner = s.loadAddress();
      master = s.loadAddress();
    } catch {
      return undefined;
    }
    if (!walletOwner.equals(owner)) return null;
    const walletCode = await this.minterWalletCode(master);
    if (walletCode === null) {
      const r = await this.api.runGetMethod(master, 'get_wallet_address', [addressSlice(owner)]);
      return r.exitCode === 0 && stackAddress(r.stack[0], 'get_wallet_address').equals(jettonWallet) ? master : null;
    }
    const expected = contractAddress(0, { code: walletCode, data: beginCell().storeCoins(0).storeAddress(owner).storeAddress(master).storeRef(walletCode).endCell() });
    return expected.equals(jettonWallet) ? master : null;
  }

  /** The wallet code a discoverable minter keeps, read once per master; null for any other account. */
  private minterWalletCode(master: Address): Promise<Cell | null> {
    const key = master.toRawString();
    let code = this.masterCode.get(key);
    if (!code) {
      if (this.masterCode.size >= MAX_JETTON_WALLETS) this.masterCode.clear();
      code = this.api.accountCode(master).then((m) => {
        if (m.state !== 'active' || !m.code || !m.data || !m.code.hash().equals(JETTON_MINTER_CODE)) return null;
        try {
          const s = m.data.beginParse();
          s.loadCoins();
          s.loadAddressAny();
          s.loadRef();
          return s.loadRef();
        } catch {
          return null;
        }
      });
      // a failed read is not remembered
      code.catch(() => this.masterCode.delete(key));
      this.masterCode.set(key, code);
    }
    return code;
  }
}
