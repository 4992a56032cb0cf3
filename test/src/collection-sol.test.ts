/**
 * Solana collection through the service (API and workers in process, software key store), every
 * transaction executed by the real Solana runtime: no validator installs here, so a local
 * JSON-RPC endpoint answers the service from litesvm (the runtime in process), as in
 * withdrawals-sol.test.ts. What is real and what is made, and why:
 * - Funding is real: the test's funder sends SOL (System transfer) and mints an SPL token it
 *   created (CreateIdempotent of the owner's associated account, paid by the funder, and MintTo) to
 *   deposit addresses made through the API. The service's scanner finds them through the endpoint
 *   and the service's sweeps are executed by litesvm (every signature checked).
 * - Account reads (getBalance, getMultipleAccounts jsonParsed, getTokenAccountsByOwner) are
 *   decoded from litesvm's account bytes. The history (getSignaturesForAddress, getTransaction)
 *   is the endpoint's record of what it executed: account keys, balances and token balances
 *   before and after, read from litesvm around the execution; fee = the lamports the
 *   transaction's accounts lost in all (what the runtime charged). Instructions are given parsed
 *   only for System transfers (what the scanner reads), others in the raw form.
 * - Slots are the endpoint's counter (one per executed transaction, or moved by the test); the
 *   finalized tip follows the newest slot unless the test holds it. Chain 105 (Solana Devnet) is
 *   redefined in WCS_CONFIG with 3 confirmations instead of 1, so a deposit can be seen PENDING.
 * - getFeeForMessage answers 5000 per signature (litesvm's fee; it has no such call).
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { LiteSVM } from 'litesvm';
import { Keypair, PublicKey, SystemProgram, Transaction, TransactionInstruction } from '@solana/web3.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_PROGRAM_ID, associatedTokenAddress } from '@wcs/adapter-solana';
import { formatUnits } from '@wcs/core';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { expectOk, pollUntil, sleep } from './support/expect';
import { waitForHotWallet } from './support/payouts';
import { ADDRESS_CREATE } from './support/recharge-types';
import { tempDir } from './support/temp';
import { snapshot, solanaNode, svmAddress, tokenAccount, type SolanaNode } from './support/solana-node';

const CHAIN_ID = 105;
const SOL_TOKEN = 10500;
const SPL_TOKEN = 10599;
const SPL_DECIMALS = 6;
const CONFIRMATIONS = 3;
const LAMPORTS = 1_000_000_000n;
const UNIT = 10n ** BigInt(SPL_DECIMALS);
const HOT_FUNDING = 10n * LAMPORTS;
const COLLECT_FIELDS = [
  'amount', 'applicationId', 'chainId', 'chainTokenId', 'createdTime', 'event', 'failureReasonCode', 'failureReasonMessage', 'finishedTime', 'fromAddress', 'fromAddressId',
  'gasFee', 'gasFeeCurrency', 'gasFunding', 'id', 'itemId', 'relatedRechargeIds', 'requestId', 'retryTimes', 'stage', 'status', 'toAddress', 'txHash',
];
const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

type Json = Record<string, unknown>;
const addr = svmAddress;

interface CollectEvent {
  event: string; id: number; requestId: number; itemId: number; applicationId: number; chainId: number; chainTokenId: number; stage: string | null; fromAddressId: number;
  fromAddress: string; toAddress: string; amount: string; txHash: string | null; status: string; failureReasonCode: string | null; failureReasonMessage: string | null;
  retryTimes: number; gasFee: string | null; gasFeeCurrency: string | null; relatedRechargeIds: number[]; createdTime: string; finishedTime: string; gasFunding: unknown;
}

interface ItemRow { id: string; from_address: string; from_address_id: string; chain_token_id: number; status: string; stage: string; amount: string; gas_fee: string | null; tx_hash: string | null; failure_code: string | null; to_address: string; transfer_id: string | null }

describe('collection on Solana (litesvm behind a JSON-RPC endpoint): native deposit accounts emptied and removed, SPL token accounts closed, the hot wallet paying; PENDING deposits hold a sweep back', function () {
  this.timeout(180_000);
  let node: SolanaNode;
  let db: TestDatabase;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let pool: Pool;
  let hot = '';
  const funder = Keypair.generate();
  const mint = Keypair.generate().publicKey.toBase58();
  const receiver = new CallbackReceiver();
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const lamports = (a: string): bigint => node.svm.getBalance(addr(a)) ?? 0n;
  const tokens = (owner: string): bigint | null => tokenAccount(snapshot(node.svm, associatedTokenAddress(owner, mint)))?.amount ?? null;
  const newAddress = async (user: string) => (expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'SOL', externalUserId: user })) as { address: string }).address;
  const collectEvents = (): CollectEvent[] => receiver.received.filter((r) => r.target.startsWith('/collect')).map((r) => JSON.parse(r.body.toString('utf8')) as CollectEvent);
  const items = () => q<ItemRow>(
    `SELECT id::text AS id, from_address, from_address_id::text AS from_address_id, chain_token_id, status, stage, amount::text AS amount, gas_fee::text AS gas_fee, tx_hash,
            failure_code, to_address, transfer_id::text AS transfer_id FROM collection_items WHERE application_id = $1 ORDER BY id`, [app.id]);
  const setPolicy = (tokenId: number, threshold: bigint, nativeValue: bigint | null) => q(
    `INSERT INTO collection_policies (application_id, chain_token_id, threshold, max_fee_bps, native_value, on_confirmed, schedule_seconds)
     VALUES ($1, $2, $3::numeric, 1000, $4::numeric, true, NULL)
     ON CONFLICT (application_id, chain_token_id) DO UPDATE SET threshold = EXCLUDED.threshold, native_value = EXCLUDED.native_value, updated_at = now()`, [app.id, tokenId, threshold.toString(), nativeValue?.toString() ?? null]);
  const recharges = (address: string) => q<{ id: string; tx_status: string; amount: string; collection_item_id: string | null }>(
    'SELECT id::text AS id, tx_status, amount::text AS amount, collection_item_id::text AS collection_item_id FROM recharges WHERE address = $1 ORDER BY id', [address]);

  /** The funder's transaction, executed; its signature. */
  const fund = (instructions: TransactionInstruction[]): string => {
    const tx = new Transaction({ feePayer: funder.publicKey, recentBlockhash: node.svm.latestBlockhash() }).add(...instructions);
    tx.sign(funder);
    const out = node.execute(tx.serialize());
    if ('error' in out) throw new Error(`funding refused: ${out.error}`);
    return out.sig;
  };
  const solIx = (to: string, amount: bigint) => SystemProgram.transfer({ fromPubkey: funder.publicKey, toPubkey: new PublicKey(to), lamports: amount });
  /** CreateIdempotent of the owner's associated account (the funder pays its rent) and MintTo. */
  const mintIxs = (owner: string, amount: bigint): TransactionInstruction[] => {
    const ata = associatedTokenAddress(owner, mint);
    const data = Buffer.alloc(9);
    data[0] = 7; // MintTo
    data.writeBigUInt64LE(amount, 1);
    return [
      new TransactionInstruction({
        programId: new PublicKey(ASSOCIATED_TOKEN_PROGRAM_ID),
        keys: [
          { pubkey: funder.publicKey, isSigner: true, isWritable: true }, { pubkey: new PublicKey(ata), isSigner: false, isWritable: true },
          { pubkey: new PublicKey(owner), isSigner: false, isWritable: false }, { pubkey: new PublicKey(mint), isSigner: false, isWritable: false },
          { pubkey: SystemProgram.programId, isSigner: false, isWritable: false }, { pubkey: new PublicKey(TOKEN_PROGRAM_ID), isSigner: false, isWritable: false },
        ],
        data: Buffer.from([1]),
      }),
      new TransactionInstruction({
        programId: new PublicKey(TOKEN_PROGRAM_ID),
        keys: [{ pubkey: new PublicKey(mint), isSigner: false, isWritable: true }, { pubkey: new PublicKey(ata), isSigner: false, isWritable: true }, { pubkey: funder.publicKey, isSigner: true, isWritable: false }],
        data,
      }),
    ];
  };
  /** Waits until every recharge at the addresses is in one of the states. */
  const rechargesAre = async (addresses: string[], n: number, states: string[]) => {
    const r = await pollUntil(() => q<{ address: string; tx_status: string }>('SELECT address, tx_status FROM recharges WHERE address = ANY($1::text[])', [addresses]),
      (rows) => rows.length === n && rows.every((x) => states.includes(x.tx_status)), 60_000, 100);
    expect(r.ok, `recharges ${states.join('/')}: ${JSON.stringify(r.result)}`).to.equal(true);
  };

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
    const configFile = path.join(tempDir('wcs-collect-sol-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({
      chains: [{ id: CHAIN_ID, code: 'SOL', name: 'Solana Devnet', family: 'solana', environment: 'test', network: 'devnet', nativeSymbol: 'SOL', decimals: 9, confirmations: CONFIRMATIONS, evmChainId: null }],
      tokens: [{ id: SPL_TOKEN, chainCode: 'SOL', environment: 'test', symbol: 'TSPL', name: 'Test SPL (litesvm)', contract: mint, decimals: SPL_DECIMALS }],
    }));
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 3 });
    svc = await WcsService.start(testConfig(db.url, {
      WCS_RPC_TEST_SOL: node.url, WCS_CONFIG: configFile, WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1',
      WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '200', WCS_COLLECT_PLAN_MS: '300',
    }), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'collect-sol', environment: 'test', chains: ['SOL'] });
    await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'COLLECT', receiver.url('/collect'));
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    hot = await waitForHotWallet(q, app.id, CHAIN_ID, 30_000);
    node.svm.airdrop(addr(hot), HOT_FUNDING as never);
    const quotes = await pollUntil(() => q<{ chain_token_id: number; max_fee: string }>('SELECT chain_token_id, max_fee::text AS max_fee FROM withdraw_fee_quotes WHERE chain_token_id = ANY($1::int[]) ORDER BY chain_token_id', [[SOL_TOKEN, SPL_TOKEN]]), (r) => r.length === 2, 30_000, 100);
    expect(quotes.ok, 'fee quotes of SOL and the SPL token').to.equal(true);
    // a SOL payout: one signature; an SPL payout to a new account: one signature and that account's rent
    expect(quotes.result).to.deep.equal([{ chain_token_id: SOL_TOKEN, max_fee: '5000' }, { chain_token_id: SPL_TOKEN, max_fee: (5000n + node.svm.minimumBalanceForRentExemption(165n)).toString() }]);
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await receiver.stop();
    await node?.close();
  });

  const nativeAddrs: string[] = [];
  const splAddrs: string[] = [];
  const nativeAmounts = [50_000_000n, 73_000_001n, 1_000_000_007n];
  const splAmounts = [25n * UNIT, 40n * UNIT + 1n, 1234n * UNIT + 567n];
  let hotBefore = 0n;
  const sourceRents: bigint[] = [];

  it('an SPL mint the hot wallet never held: the sweep is priced with the rent of the hot wallet\'s token account it will create (a deposit too small to pay it is skipped with that fee)', async () => {
    expect(snapshot(node.svm, associatedTokenAddress(hot, mint)), 'the hot wallet has no token account of the mint').to.equal(null);
    const small = await newAddress('spl-small');
    // 100 TSPL per SOL, at most 10 %: the rent (~0.002 SOL = ~0.2 TSPL) makes a 1 TSPL sweep uneconomic; the signatures alone (0.00001 SOL) would not
    await setPolicy(SPL_TOKEN, UNIT, 100n * UNIT);
    fund(mintIxs(small, UNIT));
    node.advance(CONFIRMATIONS - 1);
    await rechargesAre([small], 1, ['CONFIRMED', 'SETTLED']);
    const rent = node.svm.minimumBalanceForRentExemption(165n);
    const skip = await pollUntil(() => q<{ fee: string | null; reason: string; holds: boolean }>('SELECT fee::text AS fee, reason, holds FROM collection_skips WHERE address = $1', [small]), (r) => r.length === 1, 30_000, 100);
    expect(skip.result[0], 'skipped').to.not.equal(undefined);
    expect(skip.result[0]!.holds).to.equal(true);
    expect(skip.result[0]!.reason).to.match(/^uneconomic: the fee/);
    const fee = BigInt(skip.result[0]!.fee!);
    // the sweep's price: its signatures (and any priority fee) plus the rent of the token account it creates at the hot wallet
    expect(fee >= rent + 10_000n && fee - rent < 1_000_000n, `priced ${fee} lamports with a rent of ${rent}`).to.equal(true);
    expect((await items()).filter((i) => i.from_address === small)).to.deep.equal([]);
  });

  it('SOL and SPL deposits found by the scanner, swept to the hot wallet: every SUCCESS; native accounts at 0 (removed), token accounts closed with their rent to the hot wallet, no SOL ever sent to a deposit address', async () => {
    for (let i = 0; i < nativeAmounts.length; i++) nativeAddrs.push(await newAddress(`sol-${i}`));
    for (let i = 0; i < splAmounts.length; i++) splAddrs.push(await newAddress(`spl-${i}`));
    await setPolicy(SOL_TOKEN, LAMPORTS / 100n, null);
    // 100 TSPL per SOL: an SPL sweep's fee (two signatures, and the hot wallet's token account rent once) is well under 10 % of 25 TSPL
    await setPolicy(SPL_TOKEN, UNIT, 100n * UNIT);
    hotBefore = lamports(hot);
    nativeAddrs.forEach((a, i) => fund([solIx(a, nativeAmounts[i]!)]));
    splAddrs.forEach((a, i) => fund(mintIxs(a, splAmounts[i]!)));
    for (const a of splAddrs) sourceRents.push(lamports(associatedTokenAddress(a, mint)));
    expect(sourceRents.every((r) => r === node.svm.minimumBalanceForRentExemption(165n))).to.equal(true);
    for (const a of splAddrs) expect(lamports(a), 'an SPL deposit address holds no SOL').to.equal(0n);
    node.advance(CONFIRMATIONS - 1);
    await rechargesAre([...nativeAddrs, ...splAddrs], 6, ['CONFIRMED', 'SETTLED']);

    const done = await pollUntil(items, (rows) => rows.length === 6 && rows.every((i) => i.status === 'SUCCESS' || i.status === 'FAILED'), 60_000, 200);
    expect(done.ok, JSON.stringify(done.result)).to.equal(true);
    expect(done.result.filter((i) => i.status !== 'SUCCESS'), 'all SUCCESS').to.deep.equal([]);
    expect(done.result.every((i) => i.to_address === hot && i.stage === 'HOT_GATHER')).to.equal(true);

    // native: the whole balance (rent-exempt minimum included) arrived; the deposit accounts are gone
    for (const [i, a] of nativeAddrs.entries()) {
      const item = done.result.find((x) => x.from_address === a)!;
      expect(item.chain_token_id).to.equal(SOL_TOKEN);
      expect(BigInt(item.amount), `${a}: the item moved every lamport`).to.equal(nativeAmounts[i]!);
      expect(lamports(a), a).to.equal(0n);
      expect(snapshot(node.svm, a), `${a} removed`).to.equal(null);
    }
    // SPL: every unit at the hot wallet's associated account; each source account closed
    expect(tokens(hot)).to.equal(splAmounts.reduce((s, v) => s + v, 0n));
    for (const [i, a] of splAddrs.entries()) {
      const item = done.result.find((x) => x.from_address === a)!;
      expect(item.chain_token_id).to.equal(SPL_TOKEN);
      expect(BigInt(item.amount)).to.equal(splAmounts[i]!);
      expect(snapshot(node.svm, associatedTokenAddress(a, mint)), `${a}'s token account closed`).to.equal(null);
      expect(lamports(a), `${a} never held SOL`).to.equal(0n);
    }
    // nothing was ever sent to a deposit address: no top-ups, no transfer to one
    expect(await q(`SELECT id FROM transfers WHERE kind = 'TOP_UP' OR to_address = ANY($1::text[])`, [[...nativeAddrs, ...splAddrs]])).to.deep.equal([]);
    for (const x of node.executed.values()) {
      if (x.keys[0] === funder.publicKey.toBase58()) continue;
      expect(x.keys[0], 'every service transaction is paid by the hot wallet').to.equal(hot);
    }

    // fees: what the runtime charged, recorded on the transfer and the item
    const sweeps = await q<{ id: string; tx_hash: string; fee: string; fee_final: boolean; amount: string; sent_amount: string; from_address: string; options: Json }>(
      `SELECT id::text AS id, tx_hash, fee::text AS fee, fee_final, amount::text AS amount, sent_amount::text AS sent_amount, from_address, options FROM transfers WHERE kind = 'SWEEP' AND application_id = $1`, [app.id]);
    expect(sweeps.length).to.equal(6);
    let fees = 0n;
    for (const s of sweeps) {
      const x = node.executed.get(s.tx_hash)!;
      expect(x, `${s.tx_hash} executed`).to.not.equal(undefined);
      expect(x.signatures.length, 'two signatures: the hot wallet (fee payer) and the deposit key').to.equal(2);
      expect(BigInt(s.fee), `transfer ${s.id}: the recorded fee is what the runtime charged`).to.equal(x.fee);
      expect(x.fee).to.equal(10_000n);
      expect(s.fee_final).to.equal(true);
      expect(s.sent_amount).to.equal(s.amount);
      expect(s.options.feePayer, 'the hot wallet pays').to.deep.include({ purpose: 'hot', address: hot });
      const item = done.result.find((i) => i.transfer_id === s.id)!;
      expect(item.gas_fee).to.equal(s.fee);
      expect(s.options.closeTokenAccount ?? false, 'token sweeps close the account').to.equal(item.chain_token_id === SPL_TOKEN);
      expect(item.tx_hash).to.equal(s.tx_hash);
      fees += x.fee;
    }
    // the hot wallet: + every native lamport + each closed account's rent − the fees − the rent of its own token account (created by the first SPL sweep)
    const hotAtaRent = lamports(associatedTokenAddress(hot, mint));
    expect(hotAtaRent).to.equal(node.svm.minimumBalanceForRentExemption(165n));
    expect(lamports(hot)).to.equal(hotBefore + nativeAmounts.reduce((s, v) => s + v, 0n) + sourceRents.reduce((s, v) => s + v, 0n) - fees - hotAtaRent);
    // each recharge knows its item (but the 1 TSPL the guard skipped in the test before)
    const linked = await q<{ address: string }>('SELECT address FROM recharges WHERE application_id = $1 AND collection_item_id IS NULL', [app.id]);
    expect(linked.length).to.equal(1);
    expect((await q<{ n: number }>('SELECT count(*)::int AS n FROM collection_skips WHERE address = $1 AND holds', [linked[0]!.address]))[0]!.n, 'the skipped one').to.equal(1);
  });

  it('collect callbacks: one SUCCESS per item, signed, every field (gasFunding null, gasFeeCurrency SOL, gasFee the runtime\'s fee)', async () => {
    const all = await items();
    const r = await pollUntil(async () => collectEvents(), (e) => e.length >= all.length, 30_000, 100);
    expect(r.result.length, 'one callback per item').to.equal(all.length);
    for (const got of receiver.received.filter((x) => x.target.startsWith('/collect'))) expect(verifyCallback(got, app.apiKey, app.apiSecret, got.at)).to.equal(null);
    const rc = await q<{ id: string; collection_item_id: string }>('SELECT id::text AS id, collection_item_id::text AS collection_item_id FROM recharges WHERE application_id = $1', [app.id]);
    const addressIds = await q<{ id: string; address: string }>('SELECT id::text AS id, address FROM addresses WHERE application_id = $1', [app.id]);
    for (const e of r.result) {
      expect(Object.keys(e).sort()).to.deep.equal(COLLECT_FIELDS);
      const item = all.find((i) => i.id === String(e.id))!;
      const native = item.chain_token_id === SOL_TOKEN;
      const i = native ? nativeAddrs.indexOf(item.from_address) : splAddrs.indexOf(item.from_address);
      expect(i).to.be.greaterThanOrEqual(0);
      const [request] = await q<{ request_id: string }>('SELECT request_id::text AS request_id FROM collection_items WHERE id = $1', [item.id]);
      expect(e).to.deep.include({
        event: 'collect', id: Number(item.id), itemId: Number(item.id), requestId: Number(request!.request_id), applicationId: app.id, chainId: CHAIN_ID, chainTokenId: item.chain_token_id,
        stage: 'HOT_GATHER', fromAddressId: Number(addressIds.find((a) => a.address === item.from_address)!.id), fromAddress: item.from_address, toAddress: hot,
        amount: native ? formatUnits(nativeAmounts[i]!, 9) : formatUnits(splAmounts[i]!, SPL_DECIMALS),
        txHash: item.tx_hash, status: 'SUCCESS', failureReasonCode: null, failureReasonMessage: null, retryTimes: 0,
        gasFee: formatUnits(node.executed.get(item.tx_hash!)!.fee, 9), gasFeeCurrency: 'SOL', gasFunding: null,
      });
      expect(e.gasFee).to.equal('0.00001');
      expect(e.txHash).to.match(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
      expect(e.createdTime).to.match(LOCAL_TIME);
      expect(e.finishedTime).to.match(LOCAL_TIME);
      expect(e.relatedRechargeIds).to.deep.equal(rc.filter((x) => x.collection_item_id === item.id).map((x) => Number(x.id)).sort((a, b) => a - b));
      expect(e.relatedRechargeIds.length).to.equal(1);
    }
  });

  it('a deposit still PENDING holds the address back (a closing sweep must move the whole balance); once it is confirmed both deposits leave in one sweep', async () => {
    const sol = await newAddress('sol-pending');
    const spl = await newAddress('spl-pending');
    const before = (await items()).length;
    // one funding transaction per round: the first deposits at slot s1, the second ones at s1 + 1
    node.holdTip(node.slot());
    const first = fund([solIx(sol, 60_000_000n), ...mintIxs(spl, 30n * UNIT)]);
    // the second native deposit is below the rent-exempt minimum: left behind by a sweep of the first alone, the runtime would refuse the sweep
    const second = fund([solIx(sol, 1_000n), ...mintIxs(spl, 5n * UNIT + 3n)]);
    const s1 = node.executed.get(first)!.slot;
    expect(node.executed.get(second)!.slot).to.equal(s1 + 1n);
    // all four seen, none confirmed (2 and 1 of 3 confirmations)
    node.holdTip(s1 + 1n);
    await rechargesAre([sol, spl], 4, ['PENDING']);
    // the first deposits confirmed (3), the second ones not (2)
    node.holdTip(s1 + 2n);
    const mixed = await pollUntil(async () => [...(await recharges(sol)), ...(await recharges(spl))].map((r) => r.tx_status), (s) => s.filter((x) => x === 'PENDING').length === 2 && s.filter((x) => x !== 'PENDING').length === 2, 30_000, 100);
    expect(mixed.ok, `first deposits confirmed, second ones pending: ${JSON.stringify(mixed.result)}`).to.equal(true);
    // planning passes every 300 ms: for 3 s none plans either address; each is recorded as a WAIT (not a
    // skip that would hold it back until the next deposit) with its reason, for wcs collect status
    await sleep(3_000);
    expect((await recharges(sol)).map((r) => r.tx_status), 'still pending').to.include('PENDING');
    expect((await items()).filter((i) => i.from_address === sol || i.from_address === spl), 'no item while a deposit is pending').to.deep.equal([]);
    const waits = await q<{ address: string; holds: boolean; reason: string }>('SELECT address, holds, reason FROM collection_skips WHERE address = ANY($1::text[]) ORDER BY address', [[sol, spl]]);
    expect(waits.map((w) => w.address).sort()).to.deep.equal([sol, spl].sort());
    for (const w of waits) {
      expect(w.holds, `${w.address} waits, it is not skipped`).to.equal(false);
      expect(w.reason).to.match(/still pending: the sweep moves the whole balance at the address \(Solana: and closes the account\)/);
    }

    node.releaseTip();
    node.advance(CONFIRMATIONS);
    const done = await pollUntil(items, (rows) => rows.length === before + 2 && rows.slice(before).every((i) => i.status === 'SUCCESS' || i.status === 'FAILED'), 60_000, 200);
    expect(done.ok, JSON.stringify(done.result.slice(before))).to.equal(true);
    const solItem = done.result.find((i) => i.from_address === sol)!;
    const splItem = done.result.find((i) => i.from_address === spl)!;
    expect([solItem.status, splItem.status]).to.deep.equal(['SUCCESS', 'SUCCESS']);
    expect(BigInt(solItem.amount)).to.equal(60_001_000n);
    expect(BigInt(splItem.amount)).to.equal(35n * UNIT + 3n);
    expect(snapshot(node.svm, sol), 'the native deposit account removed').to.equal(null);
    expect(snapshot(node.svm, associatedTokenAddress(spl, mint)), 'the token account closed').to.equal(null);
    for (const a of [sol, spl]) expect((await recharges(a)).every((r) => r.collection_item_id === done.result.find((i) => i.from_address === a)!.id), `${a}: both deposits linked to the one item`).to.equal(true);
    const ev = await pollUntil(async () => collectEvents().filter((e) => e.id === Number(splItem.id)), (e) => e.length === 1, 30_000, 100);
    expect(ev.result[0]).to.deep.include({ status: 'SUCCESS', amount: '35.000003', gasFunding: null, gasFeeCurrency: 'SOL' });
    expect(ev.result[0]!.relatedRechargeIds).to.have.length(2);
    expect(await q('SELECT address FROM collection_skips WHERE address = ANY($1::text[])', [[sol, spl]]), 'the waits end with the plan').to.deep.equal([]);
  });
});
