/**
 * Chain events and custody outflows on Solana through the service (API and workers in process,
 * software key store), every transaction executed by the Solana runtime (litesvm) behind a local
 * JSON-RPC endpoint (support/solana-node.ts says what it answers and how). No chain-event reading
 * of its own: the deposit scanner's history pass reads the monitored address too.
 * - A wallet the service does not own (the test holds its key), monitored both ways: SOL and the
 *   test's SPL token reach it before the subscription (never reported: it is watched from the
 *   chain's head when the scanner first sees it), then IN (SOL from the funder, tokens minted to
 *   it) and OUT (SOL and tokens it sends, and SOL to a program-owned account: CONTRACT), each
 *   sent once with exactly the spec's `chain_event` fields.
 * - TRANSFER: a deposit address made through the API, whose key the test derives from
 *   TEST_MNEMONIC (SLIP-10 ed25519, m/44'/501'/{application}'/{key index}', the adapter's
 *   deposit path), sends SOL and its tokens outside the service: one `transfer` callback, one
 *   UNEXPECTED_OUTFLOW alert and one record each.
 * Chain 105 (Solana Devnet) and its SPL token come from a WCS_CONFIG file, as in
 * collection-sol.test.ts.
 */
import { expect } from 'chai';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { mnemonicToSeedSync } from '@scure/bip39';
import { LiteSVM } from 'litesvm';
import { Keypair, PublicKey, SystemProgram, Transaction, TransactionInstruction } from '@solana/web3.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_PROGRAM_ID, associatedTokenAddress } from '@wcs/adapter-solana';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testLogger, TEST_ACTOR, TEST_MNEMONIC, type TestDatabase } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { expectOk, pollUntil, sleep } from './support/expect';
import { ADDRESS_CREATE } from './support/recharge-types';
import { solanaNode, svmAddress as addr, type SolanaNode } from './support/solana-node';
import { tempDir } from './support/temp';

const CHAIN_ID = 105;
const SOL_TOKEN = 10500;
const SPL_TOKEN = 10599;
const SPL_DECIMALS = 6;
const LAMPORTS = 1_000_000_000n;
const UNIT = 10n ** BigInt(SPL_DECIMALS);

const SUB = '/api/v1/wallet/chain-event/subscription';
const EVENTS = '/api/v1/wallet/chain-event';
const OUTFLOWS = '/api/v1/wallet/outflow';
const CHAIN_EVENT_FIELDS = ['event', 'id', 'subscriptionId', 'applicationId', 'chainId', 'chainTokenId', 'contractAddress', 'fromAddress', 'toAddress', 'amount',
  'txHash', 'blockHeight', 'directionMatched', 'addressNature'].sort();

interface ChainEventCallback {
  event: string; id: number; subscriptionId: number; applicationId: number; chainId: number; chainTokenId: number; contractAddress: string;
  fromAddress: string; toAddress: string; amount: string; txHash: string; blockHeight: number; directionMatched: 'IN' | 'OUT'; addressNature: 'EOA' | 'CONTRACT';
}

/** SLIP-10 ed25519 (hardened only), as the software key store derives deposit keys. */
function slip10(seed: Uint8Array, path: readonly number[]): Uint8Array {
  let i = crypto.createHmac('sha512', 'ed25519 seed').update(seed).digest();
  for (const n of path) {
    const data = Buffer.alloc(37);
    i.subarray(0, 32).copy(data, 1);
    data.writeUInt32BE((n | 0x80000000) >>> 0, 33);
    i = crypto.createHmac('sha512', i.subarray(32)).update(data).digest();
  }
  return i.subarray(0, 32);
}

describe('chain events and TRANSFER on Solana (litesvm behind a JSON-RPC endpoint): a wallet the service does not own, watched from now, SOL and SPL both ways; a deposit account spent outside the service', function () {
  this.timeout(180_000);
  let node: SolanaNode;
  let db: TestDatabase;
  let pool: Pool;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  const funder = Keypair.generate();
  const mint = Keypair.generate().publicKey.toBase58();
  const receiver = new CallbackReceiver();
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];

  /** A transaction of the test, signed by `signers` (the first pays), executed; its signature and slot. */
  const exec = (instructions: TransactionInstruction[], signers: Keypair[]): { sig: string; slot: number } => {
    const tx = new Transaction({ feePayer: signers[0]!.publicKey, recentBlockhash: node.svm.latestBlockhash() }).add(...instructions);
    tx.sign(...signers);
    const out = node.execute(tx.serialize());
    if ('error' in out) throw new Error(`refused: ${out.error}`);
    return { sig: out.sig, slot: Number(node.executed.get(out.sig)!.slot) };
  };
  const sol = (from: Keypair, to: string, lamports: bigint) => SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: new PublicKey(to), lamports });
  /** CreateIdempotent of the owner's associated token account, paid by `payer`. */
  const createAta = (payer: Keypair, owner: string) => new TransactionInstruction({
    programId: new PublicKey(ASSOCIATED_TOKEN_PROGRAM_ID),
    keys: [
      { pubkey: payer.publicKey, isSigner: true, isWritable: true }, { pubkey: new PublicKey(associatedTokenAddress(owner, mint)), isSigner: false, isWritable: true },
      { pubkey: new PublicKey(owner), isSigner: false, isWritable: false }, { pubkey: new PublicKey(mint), isSigner: false, isWritable: false },
      { pubkey: SystemProgram.programId, isSigner: false, isWritable: false }, { pubkey: new PublicKey(TOKEN_PROGRAM_ID), isSigner: false, isWritable: false },
    ],
    data: Buffer.from([1]),
  });
  /** The funder (mint authority) mints to the owner's associated account, created first. */
  const mintTo = (owner: string, amount: bigint): TransactionInstruction[] => {
    const data = Buffer.alloc(9);
    data[0] = 7; // MintTo
    data.writeBigUInt64LE(amount, 1);
    return [createAta(funder, owner), new TransactionInstruction({
      programId: new PublicKey(TOKEN_PROGRAM_ID),
      keys: [{ pubkey: new PublicKey(mint), isSigner: false, isWritable: true }, { pubkey: new PublicKey(associatedTokenAddress(owner, mint)), isSigner: false, isWritable: true }, { pubkey: funder.publicKey, isSigner: true, isWritable: false }],
      data,
    })];
  };
  /** Token Transfer from the owner's associated account to `to`'s (created first, paid by the owner). */
  const sendTokens = (owner: Keypair, to: string, amount: bigint): TransactionInstruction[] => {
    const data = Buffer.alloc(9);
    data[0] = 3; // Transfer
    data.writeBigUInt64LE(amount, 1);
    return [createAta(owner, to), new TransactionInstruction({
      programId: new PublicKey(TOKEN_PROGRAM_ID),
      keys: [
        { pubkey: new PublicKey(associatedTokenAddress(owner.publicKey.toBase58(), mint)), isSigner: false, isWritable: true },
        { pubkey: new PublicKey(associatedTokenAddress(to, mint)), isSigner: false, isWritable: true },
        { pubkey: owner.publicKey, isSigner: true, isWritable: false },
      ],
      data,
    })];
  };
  const subscribe = async (body: Record<string, unknown>) => expectOk(await client.post(`${SUB}/create`, body)) as { id: number; addresses: string[] };
  /** Waits until the scanner holds a cursor for the address (it reads it from then on). */
  const watched = async (address: string) => {
    const r = await pollUntil(() => q('SELECT cursor FROM scan_history_cursors WHERE chain_id = $1 AND address = $2', [CHAIN_ID, address]), (rows) => rows.length === 1, 30_000, 50);
    expect(r.ok, `the scanner reads ${address}`).to.equal(true);
  };
  const eventsOf = (subId: number): ChainEventCallback[] => receiver.received
    .filter((r) => r.target === `/merchant/${app.id}/chain-event`)
    .map((r) => JSON.parse(r.body.toString('utf8')) as ChainEventCallback)
    .filter((e) => e.subscriptionId === subId);

  before(async function () {
    this.timeout(90_000);
    node = await solanaNode();
    node.svm.airdrop(addr(funder.publicKey.toBase58()), (1000n * LAMPORTS) as never);
    // the test's SPL mint (Token program, 6 decimals), the funder its mint authority
    const mintData = Buffer.alloc(82);
    mintData.writeUInt32LE(1, 0);
    funder.publicKey.toBuffer().copy(mintData, 4);
    mintData[44] = SPL_DECIMALS;
    mintData[45] = 1;
    node.svm.setAccount({
      address: addr(mint), data: mintData, executable: false, lamports: node.svm.minimumBalanceForRentExemption(82n), programAddress: addr(TOKEN_PROGRAM_ID), space: 82n,
    } as unknown as Parameters<LiteSVM['setAccount']>[0]);
    const configFile = path.join(tempDir('wcs-cev-sol-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({
      chains: [{ id: CHAIN_ID, code: 'SOL', name: 'Solana Devnet', family: 'solana', environment: 'test', network: 'devnet', nativeSymbol: 'SOL', decimals: 9, confirmations: 3, evmChainId: null }],
      tokens: [{ id: SPL_TOKEN, chainCode: 'SOL', environment: 'test', symbol: 'TSPL', name: 'Test SPL (litesvm)', contract: mint, decimals: SPL_DECIMALS }],
    }));
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    svc = await WcsService.start(testConfig(db.url, {
      WCS_RPC_TEST_SOL: node.url, WCS_CONFIG: configFile, WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1', WCS_SCAN_POLL_MS: '100',
    }), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'sol-watcher', environment: 'test', chains: ['SOL'] });
    await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'CHAIN_EVENT', receiver.url(`/merchant/${app.id}/chain-event`));
    await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'TRANSFER', receiver.url(`/merchant/${app.id}/transfer`));
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await receiver.stop();
    await node?.close();
  });

  it('a wallet the service does not own, monitored both ways from now: nothing before the subscription; IN (SOL, minted tokens) and OUT (SOL, tokens, SOL to a program-owned account: CONTRACT), once each, every field of the spec', async () => {
    const m = Keypair.generate();
    const M = m.publicKey.toBase58();
    // before the subscription: SOL and tokens reach it
    const early = [exec([sol(funder, M, 2n * LAMPORTS)], [funder]), exec(mintTo(M, 3n * UNIT), [funder])];
    const sub = await subscribe({ appSubscriptionNo: 'sol-both', chainCode: 'SOL', addresses: [M] });
    expect(sub.addresses).to.deep.equal([M]);
    await watched(M);
    const F = funder.publicKey.toBase58();
    const x = Keypair.generate().publicKey.toBase58();
    const in1 = exec([sol(funder, M, LAMPORTS / 2n)], [funder]);
    const in2 = exec(mintTo(M, 7n * UNIT + 1n), [funder]);
    const out1 = exec([sol(m, x, LAMPORTS / 4n)], [m]);
    const out2 = exec(sendTokens(m, x, 2n * UNIT), [m]);
    const out3 = exec([sol(m, mint, 1000n)], [m]); // the mint account: owned by the Token program

    const r = await pollUntil(async () => eventsOf(sub.id), (l) => l.length >= 5, 60_000, 100);
    expect(r.ok, `5 chain events: ${JSON.stringify(r.result)}`).to.equal(true);
    await sleep(1000);
    const got = eventsOf(sub.id);
    expect(got, 'one callback per event').to.have.length(5);
    for (const e of got) expect(Object.keys(e).sort()).to.deep.equal(CHAIN_EVENT_FIELDS);
    for (const cb of receiver.received.filter((c) => c.target === `/merchant/${app.id}/chain-event`)) expect(verifyCallback(cb, app.apiKey, app.apiSecret)).to.equal(null);
    const common = { event: 'chain_event', subscriptionId: sub.id, applicationId: app.id, chainId: CHAIN_ID };
    const bySig = new Map(got.map((e) => [e.txHash, e]));
    const expectEvent = (t: { sig: string; slot: number }, fields: Partial<ChainEventCallback>) => {
      const e = bySig.get(t.sig);
      expect(e, t.sig).to.not.equal(undefined);
      expect(e).to.deep.equal({ ...common, id: e!.id, txHash: t.sig, blockHeight: t.slot, ...fields });
    };
    expectEvent(in1, { chainTokenId: SOL_TOKEN, contractAddress: '', fromAddress: F, toAddress: M, amount: '0.5', directionMatched: 'IN', addressNature: 'EOA' });
    // minted tokens have no sending owner: the sender is the transaction's fee payer
    expectEvent(in2, { chainTokenId: SPL_TOKEN, contractAddress: mint, fromAddress: F, toAddress: M, amount: '7.000001', directionMatched: 'IN', addressNature: 'EOA' });
    expectEvent(out1, { chainTokenId: SOL_TOKEN, contractAddress: '', fromAddress: M, toAddress: x, amount: '0.25', directionMatched: 'OUT', addressNature: 'EOA' });
    expectEvent(out2, { chainTokenId: SPL_TOKEN, contractAddress: mint, fromAddress: M, toAddress: x, amount: '2', directionMatched: 'OUT', addressNature: 'EOA' });
    expectEvent(out3, { chainTokenId: SOL_TOKEN, contractAddress: '', fromAddress: M, toAddress: mint, amount: '0.000001', directionMatched: 'OUT', addressNature: 'CONTRACT' });
    for (const t of early) expect(bySig.has(t.sig), `${t.sig}: before the subscription`).to.equal(false);

    // the records: CONFIRMED at once (final history), minConfirmations 1, the monitored address; nothing before the subscription
    const list = expectOk(await client.get(`${EVENTS}/list?subscriptionId=${sub.id}&pageSize=50`)) as { total: number; list: Array<Record<string, unknown>> };
    expect(list.total).to.equal(5);
    expect(list.list.every((e) => e.status === 'CONFIRMED' && e.minConfirmations === 1 && e.monitoredAddress === M && e.chainCode === 'SOL')).to.equal(true);
    expect(list.list.map((e) => e.tokenSymbol).sort()).to.deep.equal(['SOL', 'SOL', 'SOL', 'TSPL', 'TSPL']);
    // a monitored address is no custody address: no outflow
    expect((await q<{ n: number }>('SELECT count(*)::int AS n FROM custody_outflows'))[0]!.n).to.equal(0);
  });

  it('TRANSFER: a deposit account\'s key (derived by the test from TEST_MNEMONIC) spends SOL and tokens outside the service: one transfer callback, one UNEXPECTED_OUTFLOW alert and one record each; its deposits credited, nothing for the outflows', async () => {
    const owner = await svc.storage.applications.create(TEST_ACTOR, { name: 'sol-custody', environment: 'test', chains: ['SOL'] });
    await svc.storage.applications.setCallback(TEST_ACTOR, owner.id, 'TRANSFER', receiver.url(`/merchant/${owner.id}/transfer`));
    const c = new SigningClient(svc.url, { apiKey: owner.apiKey, apiSecret: owner.apiSecret });
    const D = (expectOk(await c.post(ADDRESS_CREATE, { chainCode: 'SOL', externalUserId: 'leaky' })) as { address: string }).address;
    const [row] = await q<{ key_index: string }>('SELECT k.key_index::text AS key_index FROM addresses a JOIN user_keys k ON k.id = a.user_key_id WHERE a.address = $1', [D]);
    // the key the service holds for it: the adapter's deposit path, account = application, the address's key index
    const d = Keypair.fromSeed(slip10(mnemonicToSeedSync(TEST_MNEMONIC), [44, 501, owner.id, Number(row!.key_index)]));
    expect(d.publicKey.toBase58()).to.equal(D);
    const funded = [exec([sol(funder, D, LAMPORTS)], [funder]), exec(mintTo(D, 5n * UNIT), [funder])];
    const credited = await pollUntil(() => q<{ tx_hash: string }>('SELECT tx_hash FROM recharges WHERE address = $1', [D]), (rows) => rows.length === 2, 30_000, 100);
    expect(credited.result.map((x) => x.tx_hash).sort()).to.deep.equal(funded.map((f) => f.sig).sort());
    const transfers = () => receiver.received.filter((r) => r.target === `/merchant/${owner.id}/transfer`);
    expect(transfers(), 'deposits are no outflows').to.deep.equal([]);

    const thief = Keypair.generate().publicKey.toBase58();
    const s1 = exec([sol(d, thief, (3n * LAMPORTS) / 10n)], [d]);
    const s2 = exec(sendTokens(d, thief, 5n * UNIT), [d]);
    const got = await pollUntil(async () => transfers(), (l) => l.length >= 2, 60_000, 100);
    expect(got.ok, `two transfer callbacks: ${got.result.length}`).to.equal(true);
    await sleep(1000);
    expect(transfers()).to.have.length(2);
    for (const cb of transfers()) expect(verifyCallback(cb, owner.apiKey, owner.apiSecret)).to.equal(null);
    const evs = transfers().map((cb) => JSON.parse(cb.body.toString('utf8')) as { id: number; txHash: string });
    const common = { event: 'transfer', applicationId: owner.id, chainId: CHAIN_ID, addressKind: 'DEPOSIT', fromAddress: D, externalUserId: 'leaky', toAddress: thief };
    const e1 = evs.find((e) => e.txHash === s1.sig)!;
    const e2 = evs.find((e) => e.txHash === s2.sig)!;
    expect(e1).to.deep.equal({ ...common, id: e1.id, chainTokenId: SOL_TOKEN, contractAddress: '', amount: '0.3', txHash: s1.sig, blockHeight: s1.slot });
    expect(e2).to.deep.equal({ ...common, id: e2.id, chainTokenId: SPL_TOKEN, contractAddress: mint, amount: '5', txHash: s2.sig, blockHeight: s2.slot });
    const alerts = await q<{ details: { outflowId: number; fromAddress: string; txHash: string; addressKind: string } }>(`SELECT details FROM operator_alerts WHERE kind = 'UNEXPECTED_OUTFLOW' ORDER BY id`);
    expect(alerts.map((a) => [a.details.outflowId, a.details.fromAddress, a.details.txHash, a.details.addressKind])).to.deep.equal([[e1.id, D, s1.sig, 'DEPOSIT'], [e2.id, D, s2.sig, 'DEPOSIT']]);
    expect(expectOk(await c.get(`${OUTFLOWS}/get?id=${e2.id}`))).to.include({ addressKind: 'DEPOSIT', txHash: s2.sig, amount: '5', fromAddress: D, toAddress: thief, tokenSymbol: 'TSPL' });
    expect((await q<{ n: number }>('SELECT count(*)::int AS n FROM custody_outflows'))[0]!.n).to.equal(2);
    // nothing credited for the outflows; the watcher application saw none of it
    expect((await q<{ n: number }>('SELECT count(*)::int AS n FROM recharges WHERE application_id = $1', [owner.id]))[0]!.n).to.equal(2);
    expect(receiver.received.filter((r) => r.target === `/merchant/${app.id}/transfer`)).to.deep.equal([]);
  });
});
