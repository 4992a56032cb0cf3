import { expect } from 'chai';
import {
  canPay, canScan, craftTransfer, sequenceNode, utxoNode, withAmount,
  type AllocatedTransfer, type ChainAdapter, type ChainEndpoint, type DepositScanner, type ObservedTransfer, type PayingAdapter,
  type SignedTransaction, type TransactionState, type TransferInput, type TransferIntent, type TransferKey, type TransferNode, type UnsignedTransfer,
} from '../index';
import type { KeySignature } from '../keystore';
import type { BalanceAnswer, BalanceQuery } from '../balances';

/**
 * The chain half of the shared adapter suite (runAdapterConformance covers the plugin, addresses
 * and memos): deposit scanning, transfers and sweeps against a node, each through the contract's
 * types only. Every adapter package runs it against a local node (anvil, bcoin regtest, litesvm,
 * @ton/sandbox) or against recorded answers of a real node replayed by a local server, whose
 * fixtures say where each answer came from.
 *
 * The harness gives what only the chain's own test support can: a node, keys it funded, a deposit
 * it made (or one recorded), a way to make what was sent final. The suite asks the same questions
 * of every chain and needs nothing else of it.
 */
export interface ChainHarness {
  readonly adapter: ChainAdapter;
  /** Where the node's answers come from: 'anvil (local)', 'recorded rippled answers (src/fixtures/SOURCE.md)', ... */
  readonly node: string;
  /**
   * True on chains where another account may pay the fee and token accounts are closed (Solana:
   * `feePayer`, `closeTokenAccount`; the sweep uses them); elsewhere a request naming a fee payer,
   * or asking to close a token account, must be refused, never crafted without it.
   */
  readonly separateFeePayer?: boolean;
  /**
   * Chains whose accounts opt in to an asset with a trustline (Stellar): requests with `trustline`
   * open one (changeTrust). Elsewhere such a request is refused: the suite checks it.
   */
  readonly trustlines?: boolean;
  /**
   * Runs the balance section (a BalanceReader: adapter.createBalanceReader): the session must
   * then give a `balances` case. Required exactly for an adapter that has a reader (checked).
   */
  readonly balances?: boolean;
  /** Starts the node (or the replay of its recorded answers) with the keys funded and the deposit made. */
  start(): Promise<HarnessSession>;
}

export interface HarnessSession {
  readonly endpoint: ChainEndpoint;
  /** A deposit the scanner must find: absent only for an adapter without deposit scanning (the suite checks it has none). */
  readonly deposit?: DepositCase;
  /** A transfer out of a funded key: absent only for an adapter without withdrawals (checked). */
  readonly transfer?: TransferCase;
  /**
   * A whole native balance collected out of a deposit key into the hot wallet (HD chains, whose
   * deposits land on per-user keys). Memo chains take deposits on the shared hot address itself:
   * nothing to sweep, and the suite checks the adapter is a memo chain when this is absent.
   */
  readonly sweep?: SweepCase;
  /** Balances the reader must answer at the node's head as the session starts (harness flag `balances`). */
  readonly balances?: BalanceCase;
  /** Signs a payload with the key of `address` (a key the harness holds, as the KeyStore would). */
  sign(address: string, payload: Uint8Array): Promise<KeySignature>;
  /**
   * Makes what was broadcast final enough to read back as MINED with at least one confirmation
   * (mines blocks, advances the sandbox; a replay switches to its recorded "validated" answers).
   */
  settle(): Promise<void>;
  close(): Promise<void>;
}

export interface DepositCase {
  /** The watched address (canonical form). */
  readonly address: string;
  /** What the scanner must report for it (block fields are checked for presence, not values). */
  readonly expected: Pick<ObservedTransfer, 'txHash' | 'toAddress' | 'memo' | 'contract' | 'amount' | 'succeeded'>;
  /** Block chains: the height the deposit was mined at. */
  readonly height?: bigint;
  /** History chains: the most transactions read per call (default 100). */
  readonly limit?: number;
}

export interface TransferCase {
  /** A funded key the harness signs for. */
  readonly from: TransferKey;
  readonly to: string;
  readonly memo: string | null;
  /** Null: the native coin. */
  readonly contract: null | string;
  readonly amount: bigint;
  /**
   * Whether the node is a real one (local): balances move, a re-broadcast is answered by the node.
   * A replay of recorded answers checks the transaction offline instead (`verify`).
   */
  readonly live: boolean;
  /**
   * Checks the signed bytes independently of the adapter (a chain library's decoder), returning
   * the fields it reads: the suite compares them with the request.
   */
  verify?(signed: SignedTransaction): { from: string; to: string; amount: bigint; memo?: string | null };
  /** The destination's balance as the chain reports it, read independently (live nodes). */
  balanceOf?(address: string, contract: string | null): Promise<bigint>;
}

export interface BalanceCase {
  /**
   * Queries and the answer each must get at the head, in this order (read before any transfer of
   * the session): at least one AMOUNT above zero and one of the chain's "nothing" (AMOUNT 0 where
   * accounts always exist, EVM and bitcoin; NO_ACCOUNT where an account or token account must be
   * created first).
   */
  readonly expected: ReadonlyArray<{ readonly query: BalanceQuery; readonly answer: BalanceAnswer }>;
  /** A string that is no address of this chain: refused with a TypeError before any node call. */
  readonly badAddress: string;
}

export interface SweepCase {
  /** A deposit key holding native coin only, which the harness signs for. */
  readonly from: TransferKey;
  /** The hot wallet: destination, and (chains with a fee payer, Solana) the payer. */
  readonly hot: TransferKey;
  /** What the deposit address may keep after the sweep (0 on every chain here). */
  readonly residual: bigint;
}


/** The node as its spend model's node, and the transfer allocated from it. */
async function allocate(adapter: PayingAdapter, node: TransferNode, intent: TransferIntent, changeAddress: string): Promise<AllocatedTransfer> {
  switch (adapter.spendModel) {
    case 'sequence':
      return { spendModel: 'sequence', request: { ...intent, sequence: await sequenceNode(adapter, node).nextSequence(intent.from) } };
    case 'utxo': {
      const outputs = (await utxoNode(adapter, node).unspentOutputs(intent.from)).filter((o) => o.confirmations >= 1);
      expect(outputs.length, 'the funded key has confirmed outputs').to.be.greaterThan(0);
      return { spendModel: 'utxo', request: { ...intent, inputs: outputs.map(({ confirmations: _, ...o }) => o), changeAddress } };
    }
    case 'expiring':
      return { spendModel: 'expiring', request: intent };
  }
}

function crafted(adapter: PayingAdapter, t: AllocatedTransfer, input: TransferInput): UnsignedTransfer {
  const made = craftTransfer(adapter, t, input);
  if (!made.ok) throw new Error(`the inputs fall ${made.shortfall} short`);
  return made.unsigned;
}

async function signAll(session: HarnessSession, from: string, unsigned: UnsignedTransfer): Promise<KeySignature[]> {
  const signers = unsigned.signers ?? unsigned.payloads.map(() => from);
  expect(signers.length, 'one signer per payload').to.equal(unsigned.payloads.length);
  const out: KeySignature[] = [];
  for (let i = 0; i < unsigned.payloads.length; i++) out.push(await session.sign(signers[i] as string, unsigned.payloads[i] as Uint8Array));
  return out;
}

function jsonRoundTrip(input: TransferInput): TransferInput {
  return JSON.parse(JSON.stringify(input)) as TransferInput;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** A signer of one key: a payload in, the KeyStore's signature of it out. */
export type PayloadSigner = (payload: Uint8Array) => KeySignature | Promise<KeySignature>;

/**
 * A harness's `sign` over the keys it holds, by address: an address it holds no key for is an
 * error (the suite asked for a signature the transfer's signers do not name).
 */
export function signersByAddress(signers: Iterable<readonly [string, PayloadSigner]>): HarnessSession['sign'] {
  const byAddress = new Map(signers);
  return async (address, payload) => {
    const signer = byAddress.get(address);
    if (!signer) throw new Error(`no test key for ${address}`);
    return signer(payload);
  };
}

async function until(what: string, read: () => Promise<TransactionState>, settle: () => Promise<void>): Promise<TransactionState> {
  let seen: TransactionState = { state: 'UNKNOWN' };
  for (let i = 0; i < 20; i++) {
    seen = await read();
    if (seen.state === 'MINED' && seen.confirmations >= 1) return seen;
    await settle();
  }
  throw new Error(`${what}: not MINED after 20 settles (last ${JSON.stringify(seen, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))})`);
}

/**
 * Deposit scanning, transfers and sweeps of one chain, in one describe block: each session is
 * started before and closed after it.
 */
export function runChainConformance(harness: ChainHarness): void {
  const { adapter } = harness;
  describe(`chain conformance: ${adapter.chain.code} (${adapter.spendModel}, ${adapter.addressing}) on ${harness.node}`, function () {
    this.timeout(120_000);
    let session: HarnessSession;
    before(async () => {
      session = await harness.start();
    });
    after(async () => {
      await session?.close();
    });

    it('has the cases its capabilities call for', () => {
      expect(session.deposit !== undefined, 'a deposit case exactly when the adapter scans').to.equal(canScan(adapter));
      expect(session.transfer !== undefined, 'a transfer case exactly when the adapter pays out').to.equal(canPay(adapter));
      expect(session.sweep !== undefined, 'a sweep case exactly on a paying HD chain (a memo chain takes deposits on the shared hot address)').to.equal(canPay(adapter) && adapter.addressing === 'hd');
      if (adapter.spendModel === 'sequence' && canPay(adapter)) expect(sequenceNode(adapter, adapter.createTransferNode(session.endpoint)).nextSequence).to.be.a('function');
      if (adapter.spendModel === 'utxo' && canPay(adapter)) expect(utxoNode(adapter, adapter.createTransferNode(session.endpoint)).unspentOutputs).to.be.a('function');
    });

    it('runs the balance section exactly when the adapter has a BalanceReader (harness flag `balances`, with a balance case)', () => {
      expect(harness.balances === true, 'the harness flag `balances` exactly when the adapter builds a BalanceReader').to.equal(typeof adapter.createBalanceReader === 'function');
      expect(session.balances !== undefined, 'a balance case exactly with the harness flag `balances`').to.equal(harness.balances === true);
    });

    // first, while the balances are as the session started
    if (harness.balances === true) describe('balance reads (reconciliation)', () => {
      /** Where nothing listens: a reader that made a node call would fail with a ChainRpcError, not answer. */
      const NOWHERE: ChainEndpoint = { url: 'http://127.0.0.1:9/' };
      const show = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));

      it('reads many balances at one point, in the order asked: amounts exact, and the chain\'s "nothing" (0 or NO_ACCOUNT) as such', async () => {
        const b = session.balances!;
        const answers = b.expected.map((e) => e.answer);
        expect(answers.some((a) => a.kind === 'AMOUNT' && a.amount > 0n), 'the case has a positive balance').to.equal(true);
        expect(answers.some((a) => a.kind === 'NO_ACCOUNT' || a.amount === 0n), 'the case has an empty one').to.equal(true);
        const reader = adapter.createBalanceReader!(session.endpoint);
        const head = await reader.head();
        expect(typeof head.height).to.equal('bigint');
        const history = reader.history;
        expect(['archive', 'recent', 'head']).to.include(history.kind);
        if (history.kind === 'recent') expect(typeof history.depth).to.equal('bigint');
        const read = await reader.balancesAt(b.expected.map((e) => e.query), head);
        expect(show(read.answers)).to.equal(show(answers));
        for (const a of read.answers) if (a.kind === 'AMOUNT') expect(typeof a.amount).to.equal('bigint');
        if (reader.history.kind === 'head') expect(read.at.height >= head.height, `read at ${read.at.height}, not below ${head.height}`).to.equal(true);
        else expect(show(read.at)).to.equal(show(head));
        const reversed = await reader.balancesAt([...b.expected].reverse().map((e) => e.query), head);
        expect(show(reversed.answers), 'the order asked is the order answered').to.equal(show([...answers].reverse()));
      });

      it('answers an empty query list with no answers, without a node call', async () => {
        const at = { height: 1n, blockHash: null };
        const read = await adapter.createBalanceReader!(NOWHERE).balancesAt([], at);
        expect(read.answers).to.deep.equal([]);
      });

      it('refuses a malformed address with a TypeError, without a node call', async () => {
        const reader = adapter.createBalanceReader!(NOWHERE);
        const e = await reader.balancesAt([{ address: session.balances!.badAddress, contract: null }], { height: 1n, blockHash: null }).then(() => null, (x: unknown) => x);
        expect(e, 'a TypeError').to.be.instanceOf(TypeError);
      });
    });

    // each part only for an adapter with the capability (the first test checks the cases match them)
    if (canScan(adapter)) describe('deposit scanning', () => {
      let scanner: DepositScanner;
      before(() => {
        if (!session.deposit) throw new Error('a scanning adapter needs a deposit case');
        scanner = adapter.createScanner(session.endpoint);
      });

      const matches = (t: ObservedTransfer): boolean => t.txHash === session.deposit?.expected.txHash && t.toAddress === session.deposit.address;
      const expectDeposit = (found: readonly ObservedTransfer[]): ObservedTransfer => {
        const d = session.deposit;
        if (!d) throw new Error('no deposit case');
        const mine = found.filter(matches);
        expect(mine.length, `the deposit ${d.expected.txHash} is reported once`).to.equal(1);
        const t = mine[0] as ObservedTransfer;
        expect({ txHash: t.txHash, toAddress: t.toAddress, memo: t.memo, contract: t.contract, amount: t.amount, succeeded: t.succeeded }).to.deep.equal(d.expected);
        expect(typeof t.amount).to.equal('bigint');
        expect(Number.isInteger(t.position)).to.equal(true);
        expect(t.blockHash).to.be.a('string').and.not.equal('');
        return t;
      };

      it('finds the deposit with its amount, token and memo, the same again on a re-scan (nothing duplicated); block chains look it up MINED in its block', async () => {
        const d = session.deposit;
        if (!d) throw new Error('no deposit case');
        const watched = new Set([d.address]);
        if (scanner.kind === 'blocks') {
          if (d.height === undefined) throw new Error('a block chain deposit case names its height');
          const tip = await scanner.tipHeight();
          expect(tip >= d.height, `tip ${tip} is at or above the deposit's height ${d.height}`).to.equal(true);
          const first = await scanner.scanRange(d.height, d.height, watched);
          const t = expectDeposit(first.transfers);
          expect(t.blockHeight).to.equal(d.height);
          expect(first.blocks.map((b) => b.height)).to.deep.equal([d.height]);
          expect(first.blocks[0]?.hash).to.equal(t.blockHash);
          const again = await scanner.scanRange(d.height, d.height, new Set(watched));
          expect(again.transfers.map((x) => `${x.txHash}/${x.position}`)).to.deep.equal(first.transfers.map((x) => `${x.txHash}/${x.position}`));
          // looked up again (a deposit whose block left the chain): MINED in its block; an unknown hash UNKNOWN; no block above the tip
          expect(await scanner.lookupTransaction(d.expected.txHash)).to.deep.include({ state: 'MINED', blockHeight: d.height, blockHash: t.blockHash });
          const last = d.expected.txHash.slice(-1);
          expect(await scanner.lookupTransaction(d.expected.txHash.slice(0, -1) + (last === '0' ? '1' : '0'))).to.deep.equal({ state: 'UNKNOWN' });
          expect(await scanner.blockAt(tip + 1000n)).to.equal(null);
          // the same block for an address nobody paid: the block, no transfer
          const none = await scanner.scanRange(d.height, d.height, new Set(['an address nobody paid']));
          expect([none.blocks.length, none.transfers.filter(matches)]).to.deep.equal([1, []]);
        } else {
          const page = await scanner.transfersSince(d.address, null, d.limit ?? 100);
          expectDeposit(page.transfers);
          let cursor = page.cursor;
          // read on to the end: nothing already read comes back
          for (let i = 0; i < 50; i++) {
            const next = await scanner.transfersSince(d.address, cursor, d.limit ?? 100);
            expect(next.transfers.filter(matches), 'the deposit is not read again after its cursor').to.deep.equal([]);
            if (next.cursor === cursor || next.transfers.length === 0) break;
            cursor = next.cursor;
          }
          expect(await scanner.tipHeight() >= 0n).to.equal(true);
        }
      });
    });

    if (canPay(adapter)) describe('transfers', () => {
      const payer: PayingAdapter = adapter;
      let node: TransferNode;
      before(() => {
        node = payer.createTransferNode(session.endpoint);
      });

      let signed: SignedTransaction;
      let input: TransferInput;
      let unsigned: UnsignedTransfer;
      let allocated: AllocatedTransfer;
      let toBefore: bigint | null = null;

      it('crafts deterministically from a stored input, combines the signatures the key store gives, and refuses a signature of another payload', async () => {
        const c = session.transfer;
        if (!c) throw new Error('no transfer case');
        const intent: TransferIntent = { from: c.from.address, fromPublicKey: c.from.publicKey, to: c.to, memo: c.memo, contract: c.contract, amount: c.amount };
        input = await node.transferInput(intent);
        expect(jsonRoundTrip(input), 'the input is JSON: it is stored with the order').to.deep.equal(input);
        allocated = await allocate(payer, node, intent, c.from.address);
        unsigned = crafted(payer, allocated, input);
        const again = crafted(payer, allocated, jsonRoundTrip(input));
        expect(again.payloads.map(hex), 're-crafting from the stored input gives the same payloads').to.deep.equal(unsigned.payloads.map(hex));
        expect(again.state).to.deep.equal(unsigned.state);
        expect(unsigned.maxFee >= 0n, 'maxFee is base units (0 where resources, not fees, pay: EOS)').to.equal(true);
        const signatures = await signAll(session, c.from.address, unsigned);
        signed = payer.transfers.combine(unsigned, signatures);
        if (unsigned.txHash !== null) expect(signed.txHash, 'the hash known before signing is the signed one').to.equal(unsigned.txHash);
        expect(signed.raw.length).to.be.greaterThan(0);
        // a signature the key made over something else is never combined into a transaction
        const other = await session.sign(c.from.address, Uint8Array.from(unsigned.payloads[0] as Uint8Array, (b, i) => (i === 0 ? b ^ 1 : b)));
        expect(() => payer.transfers.combine(unsigned, [other, ...signatures.slice(1)]), 'combine checks each signature against its payload and key').to.throw();
        if (c.verify) {
          const seen = c.verify(signed);
          expect({ from: seen.from, to: seen.to, amount: seen.amount }).to.deep.equal({ from: c.from.address, to: c.to, amount: c.amount });
          if (seen.memo !== undefined) expect(seen.memo).to.equal(c.memo);
        }
        if (c.live && c.balanceOf) toBefore = await c.balanceOf(c.to, c.contract);
      });

      it('broadcasts it once: the node accepts it by its hash, and a re-broadcast of the same bytes is not an error', async () => {
        const c = session.transfer;
        if (!c || !signed) throw new Error('no signed transfer');
        const sent = await node.broadcast(signed);
        expect(sent).to.deep.equal({ outcome: 'ACCEPTED', txHash: signed.txHash });
        if (c.live) {
          const again = await node.broadcast(signed);
          expect(again.outcome, `a re-broadcast answered ${JSON.stringify(again)}`).to.be.oneOf(['ACCEPTED', 'ALREADY_KNOWN']);
          if (again.outcome !== 'REJECTED') expect(again.txHash).to.equal(signed.txHash);
        }
      });

      it('reads it MINED and succeeded once final, at a fee within maxFee, the amount at the destination', async () => {
        const c = session.transfer;
        if (!c || !signed) throw new Error('no signed transfer');
        const mined = await until(`transfer ${signed.txHash}`, () => node.status(signed.txHash, input), () => session.settle());
        if (mined.state !== 'MINED') throw new Error('unreachable');
        expect(mined.succeeded).to.equal(true);
        if (mined.fee !== null) expect(mined.fee >= 0n && mined.fee <= unsigned.maxFee, `fee ${mined.fee} within maxFee ${unsigned.maxFee}`).to.equal(true);
        if (c.live && c.balanceOf && toBefore !== null) expect(await c.balanceOf(c.to, c.contract)).to.equal(toBefore + c.amount);
      });

      if (harness.separateFeePayer !== true) it('refuses a fee payer where the sender pays its own fee (it is never dropped silently)', () => {
        const c = session.transfer;
        if (!c || !signed) throw new Error('no crafted transfer');
        const withPayer = { ...allocated, request: { ...allocated.request, feePayer: c.from } } as AllocatedTransfer;
        expect(() => craftTransfer(payer, withPayer, input)).to.throw(/fee payer/);
        const closing = { ...allocated, request: { ...allocated.request, closeTokenAccount: true } } as AllocatedTransfer;
        expect(() => craftTransfer(payer, closing, input)).to.throw(/token account/);
      });

      if (harness.trustlines !== true) it('refuses a request to open a trustline on a chain without trustlines (never crafted as a payment)', () => {
        const c = session.transfer;
        if (!c || !signed) throw new Error('no crafted transfer');
        const trust = { ...allocated, request: { ...allocated.request, trustline: true } } as AllocatedTransfer;
        expect(() => craftTransfer(payer, trust, input)).to.throw(/trustline/);
      });

      it('knows nothing of a transaction that was signed but never sent', async () => {
        const c = session.transfer;
        if (!c) throw new Error('no transfer case');
        const intent: TransferIntent = { from: c.from.address, fromPublicKey: c.from.publicKey, to: c.to, memo: c.memo, contract: c.contract, amount: c.amount };
        const fresh = await node.transferInput(intent);
        const t = withAmount(await allocate(payer, node, intent, c.from.address), c.amount + 1n);
        const made = craftTransfer(payer, t, fresh);
        if (!made.ok) return; // utxo: the outputs left cannot pay it; nothing was signed
        const tx = payer.transfers.combine(made.unsigned, await signAll(session, c.from.address, made.unsigned));
        expect(tx.txHash).to.not.equal(signed.txHash);
        expect((await node.status(tx.txHash, fresh)).state).to.be.oneOf(['UNKNOWN', 'EXPIRED']);
      });

      // only a utxo crafter is handed inputs
      if (adapter.spendModel === 'utxo') it('utxo chains: inputs that cannot pay amount and fee are the typed INSUFFICIENT_INPUTS result, with the shortfall', async () => {
        const c = session.transfer;
        if (!c || allocated.spendModel !== 'utxo') throw new Error('no utxo transfer case');
        const total = allocated.request.inputs.reduce((s, o) => s + o.amount, 0n);
        const short = craftTransfer(payer, withAmount(allocated, total), input);
        expect(short.ok).to.equal(false);
        if (!short.ok) expect(short.shortfall > 0n, `shortfall ${short.shortfall}`).to.equal(true);
      });
    });

    // memo chains: deposits land on the shared hot address, nothing to sweep
    if (canPay(adapter) && adapter.addressing === 'hd') describe('sweeps', () => {
      const payer: PayingAdapter = adapter;
      let node: TransferNode;
      before(() => {
        node = payer.createTransferNode(session.endpoint);
      });

      it("moves a deposit key's whole native balance to the hot wallet, leaving only the chain's residual", async () => {
        const s = session.sweep;
        if (!s) throw new Error('no sweep case');
        const swept = node.sweepableBalance ? await node.sweepableBalance(s.from.address, null) : await node.balance(s.from.address, null);
        expect(swept > 0n, 'the deposit key holds something to sweep').to.equal(true);
        const hotBefore = await node.balance(s.hot.address, null);
        const intent: TransferIntent = { from: s.from.address, fromPublicKey: s.from.publicKey, to: s.hot.address, memo: null, contract: null, amount: swept };
        let t: AllocatedTransfer;
        let input: TransferInput;
        let moved: bigint;
        if (payer.spendModel === 'utxo') {
          // a consolidation: every confirmed output, the fee out of their sum, no change
          const outputs = (await utxoNode(payer, node).unspentOutputs(s.from.address)).filter((o) => o.confirmations >= 1);
          const total = outputs.reduce((sum, o) => sum + o.amount, 0n);
          input = await node.transferInput({ ...intent, amount: total });
          t = { spendModel: 'utxo', request: { ...intent, amount: total, inputs: outputs.map(({ confirmations: _, ...o }) => o), subtractFee: true } };
          moved = total - crafted(payer, t, input).maxFee;
        } else if (payer.spendModel === 'expiring' && adapter.curve === 'ed25519' && node.sweepableBalance) {
          // another account pays the fee (Solana): every lamport of the deposit key moves
          const withPayer = { ...intent, feePayer: s.hot };
          input = await node.transferInput(withPayer);
          t = { spendModel: 'expiring', request: withPayer };
          moved = swept;
        } else {
          // the fee out of the balance, charged exactly (EVM under EIP-1559: exactFee)
          const raw = await node.transferInput({ ...intent, amount: 1n });
          input = payer.spendModel === 'sequence' && payer.transfers.exactFee ? payer.transfers.exactFee(raw, null) : raw;
          const unit = await allocate(payer, node, { ...intent, amount: 1n }, s.from.address);
          const fee = payer.spendModel === 'sequence' && payer.transfers.maxFeeOf ? payer.transfers.maxFeeOf(intent, input) : crafted(payer, unit, input).maxFee;
          expect(swept > fee, `the balance ${swept} is above the fee ${fee}`).to.equal(true);
          t = withAmount(unit, swept - fee);
          moved = swept - fee;
        }
        const unsigned = crafted(payer, t, input);
        const tx = payer.transfers.combine(unsigned, await signAll(session, s.from.address, unsigned));
        expect(await node.broadcast(tx)).to.deep.equal({ outcome: 'ACCEPTED', txHash: tx.txHash });
        const mined = await until(`sweep ${tx.txHash}`, () => node.status(tx.txHash, input), () => session.settle());
        expect(mined).to.deep.include({ state: 'MINED', succeeded: true });
        expect(await node.balance(s.from.address, null), 'what the deposit key keeps').to.equal(s.residual);
        const hotAfter = await node.balance(s.hot.address, null);
        // the hot wallet gains what moved (less its own fee when it paid one as the fee payer)
        const feePaidByHot = t.spendModel === 'expiring' && t.request.feePayer ? unsigned.maxFee : 0n;
        expect(hotAfter - hotBefore >= moved - feePaidByHot && hotAfter - hotBefore <= moved, `the hot wallet gained ${hotAfter - hotBefore} of ${moved}`).to.equal(true);
      });
    });
  });
}
