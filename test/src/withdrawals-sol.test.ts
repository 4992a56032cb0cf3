/**
 * Solana withdrawals through the service (API and workers in process, software key store), paid
 * by the real Solana runtime: no validator installs here, so a local JSON-RPC endpoint answers the
 * adapter's transfer node from litesvm (the Solana runtime in process). What is real and what is
 * made, and why:
 * - sendTransaction executes the service's bytes in litesvm (signature checks, fees, the system
 *   program, the blockhash check); balances, rent and the blockhash come from litesvm.
 * - The answers' shapes are the adapter's recorded ones (adapters/solana/src/fixtures, SOURCE.md):
 *   getLatestBlockhash, getFeeForMessage, getBalance, getMinimumBalanceForRentExemption,
 *   getSignatureStatuses (finalized), getEpochInfo, getTransaction (the recorded 5QMfuq… answer
 *   with its signature, slot and fee replaced) and the recorded "Blockhash not found" error, with
 *   litesvm's values in them. Slots and block heights are the endpoint's own counters: litesvm has
 *   none, and the test moves them to make a blockhash expire.
 * - A dropped transaction (a node that answers its signature but never lands it, which nothing
 *   here can cause otherwise) is made by the endpoint on request.
 * The chain is the built-in Solana Devnet (test chain 105, 1 confirmation, native token 10500).
 */
import { expect } from 'chai';
import { Pool } from 'pg';
import { LiteSVM } from 'litesvm';
import { Keypair, VersionedTransaction } from '@solana/web3.js';
import { startReplayServer, type ReplayServer } from '@wcs/core/testing';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { expectOk, pollUntil } from './support/expect';
import { fixtureJson, SOLANA_FIXTURES } from './support/recorded-nodes';
import type { BatchResult, Withdraw, WithdrawEvent } from './support/payouts';

const BATCH = '/api/v1/wallet/withdraw/batch-create';
const GET = '/api/v1/wallet/withdraw/get';
const CHAIN_ID = 105;
const TOKEN_ID = 10500;
const FUNDING = 10_000_000_000n; // 10 SOL
const BLOCKHASH_VALIDITY = 150n;

type Address = Parameters<LiteSVM['getBalance']>[0];

/** A new system account: a fresh ed25519 public key. */
const freshAddress = (): string => Keypair.generate().publicKey.toBase58();

/** Base58 (Bitcoin alphabet), leading zero bytes as '1': how Solana writes signatures. */
function base58(bytes: Uint8Array): string {
  const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
  let n = BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
  let s = '';
  while (n > 0n) {
    s = ALPHABET[Number(n % 58n)] + s;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    s = `1${s}`;
  }
  return s;
}

interface SolanaNode extends ReplayServer {
  svm: LiteSVM;
  /** The next transaction sent is answered with its signature but never executed, nor is any re-send of it while its blockhash is valid. */
  dropNext(): void;
  /** litesvm's blockhash expires and the endpoint's block height moves past every blockhash handed out so far. */
  expire(): void;
  executed: Map<string, { slot: bigint; fee: bigint }>;
  dropped: Set<string>;
  sends: string[];
}

async function solanaNode(): Promise<SolanaNode> {
  const svm = new LiteSVM();
  const recordedTx = fixtureJson<{ result: { meta: Record<string, unknown>; slot: number; transaction: { signatures: string[] } } }>(SOLANA_FIXTURES, 'getTransaction.5QMfuq.sol.json').result;
  const blockhashNotFound = fixtureJson<{ error: unknown }>(SOLANA_FIXTURES, 'sendTransaction.blockhash-not-found.json').error;
  const state = { slot: 5000n, height: 4900n, dropNext: false };
  const validity = new Map<string, bigint>(); // blockhash -> last valid block height
  const executed = new Map<string, { slot: bigint; fee: bigint }>();
  const dropped = new Set<string>();
  const sends: string[] = [];
  const ctx = () => ({ slot: Number(state.slot) });

  const answer = (method: string, params: unknown[]): { result: unknown } | { error: unknown } => {
    switch (method) {
      case 'getLatestBlockhash': {
        const blockhash = svm.latestBlockhash();
        if (!validity.has(blockhash)) validity.set(blockhash, state.height + BLOCKHASH_VALIDITY);
        return { result: { context: ctx(), value: { blockhash, lastValidBlockHeight: Number(validity.get(blockhash)!) } } };
      }
      case 'getFeeForMessage': return { result: { context: ctx(), value: 5000 } };
      case 'getMinimumBalanceForRentExemption': return { result: Number(svm.minimumBalanceForRentExemption(BigInt(params[0] as number))) };
      case 'getBalance': return { result: { context: ctx(), value: Number(svm.getBalance(params[0] as Address) ?? 0n) } };
      case 'getMultipleAccounts': return { result: { context: ctx(), value: (params[0] as string[]).map(() => null) } };
      case 'getEpochInfo': return { result: { absoluteSlot: Number(state.slot), blockHeight: Number(state.height), epoch: 27, slotIndex: 2790, slotsInEpoch: 8192, transactionCount: executed.size } };
      case 'getSlot': return { result: Number(state.slot) };
      case 'getSignaturesForAddress': return { result: [] };
      case 'getSignatureStatuses': {
        const value = (params[0] as string[]).map((sig) => {
          const x = executed.get(sig);
          return x ? { slot: Number(x.slot), confirmations: null, err: null, status: { Ok: null }, confirmationStatus: 'finalized' } : null;
        });
        return { result: { context: ctx(), value } };
      }
      case 'getTransaction': {
        const sig = params[0] as string;
        const x = executed.get(sig);
        if (!x) return { result: null };
        return { result: { ...recordedTx, slot: Number(x.slot), meta: { ...recordedTx.meta, fee: Number(x.fee) }, transaction: { ...recordedTx.transaction, signatures: [sig] } } };
      }
      case 'sendTransaction': {
        const raw = Buffer.from(params[0] as string, 'base64');
        const tx = VersionedTransaction.deserialize(raw);
        const sig = freshSig(tx);
        sends.push(sig);
        const lastValid = validity.get(tx.message.recentBlockhash);
        const valid = lastValid !== undefined && state.height <= lastValid;
        if (executed.has(sig)) return { error: fixtureJson<{ code: number; message: string; data: unknown }>(SOLANA_FIXTURES, 'sendTransaction.already-processed.error.json') };
        if (!valid) return { error: blockhashNotFound };
        if (state.dropNext || dropped.has(sig)) {
          state.dropNext = false;
          dropped.add(sig);
          return { result: sig };
        }
        const signer = tx.message.staticAccountKeys[0]!.toBase58();
        const before = svm.getBalance(signer as Address) ?? 0n;
        const out = svm.sendTransaction({ messageBytes: tx.message.serialize(), signatures: { [signer]: tx.signatures[0]! } } as unknown as Parameters<LiteSVM['sendTransaction']>[0]);
        if (out.constructor.name !== 'TransactionMetadata') return { error: { code: -32002, message: `Transaction simulation failed: ${String(out)}` } };
        state.slot += 1n;
        state.height += 1n;
        const spent = before - (svm.getBalance(signer as Address) ?? 0n);
        executed.set(sig, { slot: state.slot, fee: spent - transferredLamports(tx) });
        return { result: sig };
      }
      default: return { error: { code: -32601, message: `Method not found: ${method}` } };
    }
  };

  const server = await startReplayServer((req) => {
    const body = JSON.parse(req.body) as Array<{ id: unknown; method: string; params?: unknown[] }> | { id: unknown; method: string; params?: unknown[] };
    const one = (c: { id: unknown; method: string; params?: unknown[] }) => ({ jsonrpc: '2.0', id: c.id, ...answer(c.method, c.params ?? []) });
    return { body: JSON.stringify(Array.isArray(body) ? body.map(one) : one(body)) };
  });
  return Object.assign(server, {
    svm, executed, dropped, sends,
    dropNext: () => {
      state.dropNext = true;
    },
    expire: () => {
      svm.expireBlockhash();
      state.height += BLOCKHASH_VALIDITY + 10n;
      state.slot += BLOCKHASH_VALIDITY + 10n;
    },
  });
}

const freshSig = (tx: VersionedTransaction): string => base58(tx.signatures[0]!);

/** The lamports a system transfer in the transaction moves (its instruction data: u32 2, u64 lamports). */
function transferredLamports(tx: VersionedTransaction): bigint {
  const keys = tx.message.staticAccountKeys;
  let sum = 0n;
  for (const ix of tx.message.compiledInstructions) {
    if (keys[ix.programIdIndex]!.toBase58() !== '11111111111111111111111111111111') continue;
    const data = Buffer.from(ix.data);
    if (data.readUInt32LE(0) === 2) sum += data.readBigUInt64LE(4);
  }
  return sum;
}

describe('Solana withdrawals through the service, executed by the Solana runtime (litesvm behind a JSON-RPC endpoint): payout, a dropped transaction crafted anew once its blockhash expired', function () {
  this.timeout(120_000);
  let node: SolanaNode;
  let db: TestDatabase;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let pool: Pool;
  let hot = '';
  const receiver = new CallbackReceiver();

  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const batch = async (items: unknown[]): Promise<BatchResult> => expectOk(await client.post(BATCH, { items })) as BatchResult;
  const get = async (id: number): Promise<Withdraw> => expectOk(await client.get(`${GET}?id=${id}`)) as Withdraw;
  const balance = (a: string): bigint => node.svm.getBalance(a as Address) ?? 0n;
  const events = (id: number) => receiver.received.map((x) => JSON.parse(x.body.toString('utf8')) as WithdrawEvent).filter((e) => e.id === id);
  const stored = async (id: number) => q<{ attempt: number; tx_hash: string }>('SELECT attempt, tx_hash FROM withdraw_transactions WHERE withdrawal_id = $1 ORDER BY attempt', [id]);

  before(async function () {
    this.timeout(60_000);
    node = await solanaNode();
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    svc = await WcsService.start(testConfig(db.url, {
      WCS_RPC_TEST_SOL: node.url, WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1',
      WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '500',
    }), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'sol-payouts', environment: 'test', chains: ['SOL'] });
    await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'WITHDRAW', receiver.url('/merchant/withdraw'));
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    const w = await pollUntil(() => q<{ address: string }>('SELECT address FROM hot_wallets WHERE application_id = $1 AND chain_id = $2', [app.id, CHAIN_ID]), (rows) => rows.length === 1, 30_000, 50);
    expect(w.ok, 'the ledger made the hot wallet').to.equal(true);
    hot = w.result[0]!.address;
    node.svm.airdrop(hot as Address, FUNDING as never);
    const rent = node.svm.minimumBalanceForRentExemption(0n);
    const funded = await pollUntil(() => q<{ on_chain: string }>('SELECT on_chain::text AS on_chain FROM hot_wallet_balances WHERE chain_token_id = $1', [TOKEN_ID]), (rows) => rows[0]?.on_chain === (FUNDING - rent).toString(), 30_000, 50);
    expect(funded.ok, `the ledger read the funding less the rent-exempt minimum: ${JSON.stringify(funded.result)}`).to.equal(true);
    const quote = await pollUntil(() => q<{ max_fee: string }>('SELECT max_fee::text AS max_fee FROM withdraw_fee_quotes WHERE chain_token_id = $1', [TOKEN_ID]), (rows) => rows.length === 1, 30_000, 50);
    expect(quote.result).to.deep.equal([{ max_fee: '5000' }]);
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await receiver.stop();
    await node?.close();
  });

  it('pays SOL: the runtime moves the exact amount, the record\'s fee is the executed fee, BROADCASTED, CONFIRMING, SUCCESS callbacks verified', async () => {
    const to = freshAddress();
    const r = await batch([{ appOrderNo: 'sol-1', chainCode: 'SOL', chainTokenId: TOKEN_ID, toAddress: to, amount: '0.05' }]);
    expect(r.items[0], JSON.stringify(r.items[0])).to.include({ success: true });
    const order = r.items[0]!.withdraw!;
    expect(order).to.include({ fromAddress: hot, toAddress: to, amount: '0.05', fee: '0.000005', status: 'PROCESSING' });
    const done = await pollUntil(() => get(order.id), (w) => w.status === 'SUCCESS' || w.status === 'FAILED', 30_000, 50);
    expect(done.result, JSON.stringify(done.result)).to.include({ status: 'SUCCESS', fee: '0.000005' });
    expect(balance(to)).to.equal(50_000_000n);
    expect(balance(hot)).to.equal(FUNDING - 50_000_000n - 5000n);
    const txs = await stored(order.id);
    expect(txs.map((t) => t.tx_hash)).to.deep.equal([done.result.txHash]);
    expect(node.executed.get(done.result.txHash!)).to.deep.include({ fee: 5000n });
    const ev = await pollUntil(async () => events(order.id), (e) => e.length >= 3, 20_000, 50);
    expect(ev.result.map((e) => e.status)).to.deep.equal(['BROADCASTED', 'CONFIRMING', 'SUCCESS']);
    for (const e of ev.result) expect(e).to.include({ event: 'withdraw', appOrderNo: 'sol-1', amount: '0.05', txHash: done.result.txHash });
    for (const req of receiver.received) expect(verifyCallback(req, app.apiKey, app.apiSecret)).to.equal(null);
  });

  it('a transaction the node answers but never lands is sent again unchanged while its blockhash is valid, and crafted anew only once it expired: paid exactly once', async () => {
    const to = freshAddress();
    const hotBefore = balance(hot);
    node.dropNext();
    const r = await batch([{ appOrderNo: 'sol-2', chainCode: 'SOL', chainTokenId: TOKEN_ID, toAddress: to, amount: '0.07' }]);
    const order = r.items[0]!.withdraw!;
    const broadcast = await pollUntil(() => get(order.id), (w) => w.status === 'BROADCASTED', 20_000, 50);
    expect(broadcast.result.status).to.equal('BROADCASTED');
    const first = broadcast.result.txHash!;
    expect(node.dropped.has(first)).to.equal(true);
    // while the blockhash is valid: re-sent as it was, never crafted anew
    const resent = await pollUntil(async () => node.sends.filter((s) => s === first).length, (n) => n >= 3, 20_000, 50);
    expect(resent.ok, 'the dropped transaction is sent again').to.equal(true);
    expect(await stored(order.id), 'no second transaction while the first can still land').to.have.length(1);
    expect((await get(order.id)).status).to.equal('BROADCASTED');
    expect(balance(to)).to.equal(0n);

    node.expire();
    const done = await pollUntil(() => get(order.id), (w) => w.status === 'SUCCESS' || w.status === 'FAILED', 30_000, 50);
    expect(done.result, JSON.stringify(done.result)).to.include({ status: 'SUCCESS' });
    const txs = await stored(order.id);
    expect(txs.map((t) => t.attempt)).to.deep.equal([1, 2]);
    expect(txs[0]!.tx_hash).to.equal(first);
    expect(done.result.txHash).to.equal(txs[1]!.tx_hash);
    expect(node.executed.has(first), 'the expired transaction never landed').to.equal(false);
    expect(node.executed.has(txs[1]!.tx_hash)).to.equal(true);
    expect(balance(to), 'paid exactly once').to.equal(70_000_000n);
    expect(balance(hot)).to.equal(hotBefore - 70_000_000n - 5000n);
    const ev = await pollUntil(async () => events(order.id), (e) => e.length >= 3, 20_000, 50);
    expect(ev.result.map((e) => [e.status, e.txHash])).to.deep.equal([['BROADCASTED', first], ['CONFIRMING', done.result.txHash], ['SUCCESS', done.result.txHash]]);
  });
});
