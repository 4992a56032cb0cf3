/**
 * Reconciliation on Solana (docs/reconciliation.md), through the service (history scan,
 * collection, pipeline in process) and `wcs reconcile` (separate processes, the schedule off),
 * every transaction executed by litesvm behind the JSON-RPC endpoint of support/solana-node.ts.
 * The balance reader asks getMultipleAccounts for base64 data slices (mint, owner, amount of a
 * token account); that endpoint answers jsonParsed only, so a relay in front of it answers those
 * calls from litesvm's account bytes (the same bytes) and passes every other call on.
 *
 * - SOL and an SPL token deposited to deposit addresses, the hot wallet funded by the operator
 *   (airdrop) before any pass: the first pass agrees, the hot wallet's SOL is its OPENING balance;
 * - the deposits swept to the hot wallet (native accounts emptied and removed, token accounts closed,
 *   their rent to the hot wallet, the hot wallet paying the fees and its own token account's rent):
 *   zero unexplained, the hot wallet's SOL and SPL agreeing to the unit with the ledger;
 * - lamports raised at a deposit address outside any transaction the scan reads (litesvm's
 *   setAccount): a suspicion at the first pass (the reader answers at the head only), a discrepancy
 *   at the second, alerted once, in `wcs reconcile report`; it cannot be assigned as a deposit
 *   (no block hash on Solana, no located block), so the operator books it; then agreed.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import type { LiteSVM } from 'litesvm';
import { Keypair, PublicKey, SystemProgram, Transaction, TransactionInstruction } from '@solana/web3.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_PROGRAM_ID, associatedTokenAddress } from '@wcs/adapter-solana';
import { startReplayServer, type ReplayServer } from '@wcs/core/testing';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testEnv, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { expectOk, pollUntil } from './support/expect';
import { waitForHotWallet } from './support/payouts';
import { cliJson, describeCli, runCli } from './support/processes';
import { ADDRESS_CREATE } from './support/recharge-types';
import { snapshot, solanaNode, svmAddress as addr, tokenAccount, type SolanaNode } from './support/solana-node';
import { tempDir } from './support/temp';

const CHAIN_ID = 105;
const SOL_TOKEN = 10500;
const SPL_TOKEN = 10599;
const SPL_DECIMALS = 6;
const CONFIRMATIONS = 1;
const LAMPORTS = 1_000_000_000n;
const UNIT = 10n ** BigInt(SPL_DECIMALS);
const HOT_FUNDING = 10n * LAMPORTS;

type Json = Record<string, unknown>;
interface Pass { id: number; height: string; exact: boolean; addresses: number; compared: number; unexplained: number; opened: number; openings: number; unreadTokens: unknown[] }
interface BalanceRow { address: string; address_kind: string; chain_token_id: number; ledger: string; on_chain: string; explained: string; unexplained: string; explanations: Array<{ kind: string; amount: string; ref: string }>; suspect_height: string | null }
interface RpcCall { id: unknown; method: string; params?: unknown[] }

/**
 * The relay: getMultipleAccounts with encoding base64 (and a dataSlice) answered from litesvm's
 * accounts at the node's current slot; everything else passed on to the node as it came.
 */
async function base64Relay(node: SolanaNode): Promise<ReplayServer> {
  const account = (key: string, slice: { offset: number; length: number } | undefined): Json | null => {
    const s = snapshot(node.svm, key);
    if (!s) return null;
    const data = slice ? s.data.subarray(slice.offset, slice.offset + slice.length) : s.data;
    return { executable: false, lamports: Number(s.lamports), owner: s.owner, rentEpoch: 0, space: s.data.length, data: [data.toString('base64'), 'base64'] };
  };
  const local = (c: RpcCall) => c.method === 'getMultipleAccounts' && (c.params?.[1] as { encoding?: string } | undefined)?.encoding === 'base64';
  const answer = (c: RpcCall) => {
    const [keys, cfg] = c.params as [string[], { dataSlice?: { offset: number; length: number }; minContextSlot?: number }];
    const slot = Number(node.slot());
    if (cfg.minContextSlot !== undefined && cfg.minContextSlot > slot) return { jsonrpc: '2.0', id: c.id, error: { code: -32016, message: 'Minimum context slot has not been reached' } };
    return { jsonrpc: '2.0', id: c.id, result: { context: { slot }, value: keys.map((k) => account(k, cfg.dataSlice)) } };
  };
  const forward = async (body: unknown): Promise<unknown> => {
    const r = await fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return r.json();
  };
  return startReplayServer(async (req) => {
    const body = JSON.parse(req.body) as RpcCall | RpcCall[];
    if (!Array.isArray(body)) return { body: JSON.stringify(local(body) ? answer(body) : await forward(body)) };
    const rest = body.filter((c) => !local(c));
    const passed = rest.length > 0 ? ((await forward(rest)) as Array<{ id: unknown }>) : [];
    return { body: JSON.stringify(body.map((c) => (local(c) ? answer(c) : passed.find((p) => p.id === c.id)))) };
  });
}

describe('reconciliation on Solana (litesvm): SOL and an SPL token on deposit addresses and the hot wallet, deposits and sweeps to zero unexplained, lamports raised outside any transfer found', function () {
  this.timeout(300_000);
  let node: SolanaNode;
  let relay: ReplayServer;
  let db: TestDatabase;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let pool: Pool;
  let env: Record<string, string>;
  let hot = '';
  const funder = Keypair.generate();
  const mint = Keypair.generate().publicKey.toBase58();
  const dep: Record<string, string> = {};
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const lamports = (a: string): bigint => node.svm.getBalance(addr(a)) ?? 0n;
  const tokens = (owner: string, m = mint): bigint => tokenAccount(snapshot(node.svm, associatedTokenAddress(owner, m)))?.amount ?? 0n;
  /** The catalogue's other SOL token (Devnet USDC): its mint created in litesvm so that every active token is read. */
  let usdc = { id: 0, mint: '' };
  const newAddress = async (user: string) => (expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'SOL', externalUserId: user })) as { address: string }).address;
  const wcs = async (args: string[], exit = 0) => {
    const r = await runCli([...args, '--json'], env, 300_000);
    expect(r.code, describeCli(args, r)).to.equal(exit);
    return cliJson(args, r);
  };
  const run = async (): Promise<Pass> => {
    const passes = (await wcs(['reconcile', 'run', '--chain', 'SOL', '--full'])) as Pass[];
    expect(passes).to.have.length(1);
    expect(passes[0]!.unreadTokens, 'the SPL token is read').to.deep.equal([]);
    return passes[0]!;
  };
  const balances = async (): Promise<Map<string, BalanceRow>> => new Map((await q<BalanceRow>(
    `SELECT address, address_kind, chain_token_id, ledger::text AS ledger, on_chain::text AS on_chain, explained::text AS explained, unexplained::text AS unexplained,
            explanations, suspect_height::text AS suspect_height FROM reconcile_balances WHERE chain_id = $1`, [CHAIN_ID])).map((r) => [`${r.address}/${r.chain_token_id}`, r]));
  const alerts = () => q<{ id: string; details: Record<string, unknown> }>(`SELECT id::text AS id, details FROM operator_alerts WHERE kind = 'RECONCILE_DISCREPANCY' ORDER BY id`);
  /** Every compared (address, token): the chain as the test reads litesvm, and nothing unexplained. */
  const agreesWithChain = async () => {
    const b = await balances();
    expect(b.size, 'every custody address with every catalogue token').to.equal((Object.keys(dep).length + 1) * 3);
    for (const r of b.values()) {
      const truth = r.chain_token_id === SOL_TOKEN ? lamports(r.address) : tokens(r.address, r.chain_token_id === SPL_TOKEN ? mint : usdc.mint);
      expect(r.on_chain, `${r.address_kind} ${r.address} ${r.chain_token_id}: the pass read what litesvm holds`).to.equal(truth.toString());
      expect(r.unexplained, `${r.address_kind} ${r.address} ${r.chain_token_id}: ${JSON.stringify(r)}`).to.equal('0');
    }
    return b;
  };
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
  const setPolicy = (tokenId: number, threshold: bigint, nativeValue: bigint | null) => q(
    `INSERT INTO collection_policies (application_id, chain_token_id, threshold, max_fee_bps, native_value, on_confirmed, schedule_seconds)
     VALUES ($1, $2, $3::numeric, 1000, $4::numeric, true, NULL)`, [app.id, tokenId, threshold.toString(), nativeValue?.toString() ?? null]);

  before(async function () {
    this.timeout(90_000);
    node = await solanaNode();
    relay = await base64Relay(node);
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
    const configFile = path.join(tempDir('wcs-reconcile-sol-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({
      chains: [{ id: CHAIN_ID, code: 'SOL', name: 'Solana Devnet', family: 'solana', environment: 'test', network: 'devnet', nativeSymbol: 'SOL', decimals: 9, confirmations: CONFIRMATIONS, evmChainId: null }],
      tokens: [{ id: SPL_TOKEN, chainCode: 'SOL', environment: 'test', symbol: 'TSPL', name: 'Test SPL (litesvm)', contract: mint, decimals: SPL_DECIMALS, minDeposit: '0.5' }],
    }));
    await prepareTestKeystore();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 3 });
    const vars = {
      WCS_RPC_TEST_SOL: relay.url, WCS_CONFIG: configFile, WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '200', WCS_COLLECT_PLAN_MS: '300',
      WCS_RECONCILE_INTERVAL_SECONDS: '0', WCS_RATE_LIMIT_RPS: '0',
    };
    env = { ...process.env, ...testEnv(db.url, vars) } as Record<string, string>;
    svc = await WcsService.start(testConfig(db.url, vars), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'reconcile-sol', environment: 'test', chains: ['SOL'] });
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    hot = await waitForHotWallet(q, app.id, CHAIN_ID, 30_000);
    const [other] = await q<{ id: number; contract: string; decimals: number }>('SELECT id, contract, decimals FROM chain_tokens WHERE chain_id = $1 AND active AND contract IS NOT NULL AND id <> $2', [CHAIN_ID, SPL_TOKEN]);
    usdc = { id: other!.id, mint: other!.contract };
    const usdcData = Buffer.alloc(82);
    usdcData[44] = other!.decimals;
    usdcData[45] = 1;
    node.svm.setAccount({
      address: addr(usdc.mint), data: usdcData, executable: false, lamports: node.svm.minimumBalanceForRentExemption(82n), programAddress: addr(TOKEN_PROGRAM_ID), space: 82n,
    } as unknown as Parameters<LiteSVM['setAccount']>[0]);
    // the operator funds the hot wallet from outside the service
    node.svm.airdrop(addr(hot), HOT_FUNDING as never);
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await relay?.close();
    await node?.close();
  });

  it('SOL and SPL deposits and the funded hot wallet: the first pass agrees with what litesvm holds, the hot wallet\'s SOL booked as its OPENING balance', async () => {
    for (const u of ['sol-a', 'sol-b', 'spl-a', 'spl-b']) dep[u] = await newAddress(u);
    fund([solIx(dep['sol-a']!, 50_000_000n)]);
    fund([solIx(dep['sol-b']!, 73_000_001n), solIx(dep['sol-b']!, 1_000_000_007n)]);
    fund(mintIxs(dep['spl-a']!, 25n * UNIT));
    fund(mintIxs(dep['spl-b']!, 40n * UNIT + 1n));
    fund(mintIxs(dep['spl-b']!, 3n * UNIT));
    node.advance(CONFIRMATIONS);
    const credited = await pollUntil(() => q<{ tx_status: string }>('SELECT tx_status FROM recharges WHERE application_id = $1', [app.id]),
      (rows) => rows.length === 6 && rows.every((r) => r.tx_status === 'SETTLED'), 60_000, 100);
    expect(credited.ok, `deposits settled: ${JSON.stringify(credited.result)}`).to.equal(true);

    const p = await run();
    expect(p.exact, 'a Solana node answers at its head only').to.equal(false);
    expect(p).to.include({ addresses: 5, compared: 15, unexplained: 0, opened: 0, openings: 1 });
    const b = await agreesWithChain();
    expect(b.get(`${dep['sol-b']}/${SOL_TOKEN}`)).to.include({ ledger: '1073000008', explained: '0' });
    expect(b.get(`${dep['spl-b']}/${SPL_TOKEN}`)).to.include({ ledger: (43n * UNIT + 1n).toString() });
    expect(b.get(`${dep['spl-b']}/${SOL_TOKEN}`), 'an SPL deposit address holds no SOL (its token account holds the rent)').to.include({ ledger: '0', on_chain: '0' });
    expect(b.get(`${hot}/${SPL_TOKEN}`), 'the hot wallet has no token account yet').to.include({ ledger: '0', on_chain: '0' });
    expect(await q<{ address: string; amount: string; chain_token_id: number }>(`SELECT address, amount::text AS amount, chain_token_id FROM reconcile_adjustments WHERE kind = 'OPENING'`))
      .to.deep.equal([{ address: hot, amount: HOT_FUNDING.toString(), chain_token_id: SOL_TOKEN }]);
    expect(await alerts()).to.deep.equal([]);
  });

  it('the deposits swept to the hot wallet (token accounts closed, their rent to the hot wallet): zero unexplained, the hot wallet agreeing to the unit', async () => {
    await setPolicy(SOL_TOKEN, LAMPORTS / 100n, null);
    await setPolicy(SPL_TOKEN, UNIT, 100n * UNIT);
    const done = await pollUntil(() => q<{ status: string; from_address: string }>(`SELECT status, from_address FROM collection_items WHERE application_id = $1`, [app.id]),
      (rows) => rows.length === 4 && rows.every((i) => i.status === 'SUCCESS' || i.status === 'FAILED'), 90_000, 200);
    expect(done.ok, JSON.stringify(done.result)).to.equal(true);
    expect(done.result.map((i) => i.status)).to.deep.equal(['SUCCESS', 'SUCCESS', 'SUCCESS', 'SUCCESS']);
    const moving = await pollUntil(() => q(`SELECT id FROM transfers WHERE application_id = $1 AND status NOT IN ('SUCCESS','FAILED')`, [app.id]), (rows) => rows.length === 0, 30_000, 100);
    expect(moving.ok, 'every transfer final').to.equal(true);
    for (const u of ['spl-a', 'spl-b']) expect(snapshot(node.svm, associatedTokenAddress(dep[u]!, mint)), `${u}'s token account closed`).to.equal(null);
    expect(tokens(hot)).to.equal(68n * UNIT + 1n);

    const p = await run();
    const b = await agreesWithChain();
    expect(p).to.include({ compared: 15, unexplained: 0, opened: 0, openings: 0 });
    for (const u of Object.keys(dep)) for (const t of [SOL_TOKEN, SPL_TOKEN, usdc.id]) expect(b.get(`${dep[u]}/${t}`), `${u} ${t}`).to.include({ ledger: '0', on_chain: '0', explained: '0' });
    expect(b.get(`${hot}/${SPL_TOKEN}`)).to.include({ ledger: (68n * UNIT + 1n).toString(), explained: '0' });
    expect(b.get(`${hot}/${SOL_TOKEN}`)).to.include({ ledger: lamports(hot).toString(), explained: '0' });
    // two token accounts closed, their rent refunded to the hot wallet, one token account (its own) created by the first: one rent read from the node and booked
    const rent = node.svm.minimumBalanceForRentExemption(165n);
    const reads = await q<{ address: string; change: string }>('SELECT address, change::text AS change FROM reconcile_native_reads WHERE chain_id = $1', [CHAIN_ID]);
    expect(reads.map((r) => r.address), 'each token sweep\'s fee payer read once').to.deep.equal([hot, hot]);
    const rents = await q<{ address: string; amount: string; ref: string }>(`SELECT address, amount::text AS amount, ref FROM reconcile_adjustments WHERE kind = 'ACCOUNT_RENT'`);
    expect(rents.map((r) => [r.address, r.amount])).to.deep.equal([[hot, rent.toString()]]);
    expect(node.executed.get(rents[0]!.ref), 'a transaction the node executed').to.not.equal(undefined);
    expect(await q(`SELECT id FROM reconcile_discrepancies`)).to.deep.equal([]);
    expect(await alerts()).to.deep.equal([]);
  });

  it('lamports raised at a deposit address outside any transaction: a suspicion, then a discrepancy alerted once and reported; not assignable (no block), booked by the operator', async () => {
    const raised = 123_456_789n;
    const target = dep['sol-a']!;
    expect(snapshot(node.svm, target), 'the swept account is gone').to.equal(null);
    node.svm.setAccount({ address: addr(target), data: new Uint8Array(0), executable: false, lamports: raised, programAddress: addr(SystemProgram.programId.toBase58()), space: 0n } as unknown as Parameters<LiteSVM['setAccount']>[0]);
    node.advance(1);
    const first = await run();
    expect(first, 'read at the head: a suspicion first').to.include({ unexplained: 1, opened: 0 });
    const suspect = (await balances()).get(`${target}/${SOL_TOKEN}`)!;
    expect(suspect).to.include({ on_chain: raised.toString(), ledger: '0', unexplained: raised.toString() });
    expect(suspect.suspect_height).to.not.equal(null);
    expect(await alerts()).to.deep.equal([]);

    node.advance(1);
    const second = await run();
    expect(second).to.include({ unexplained: 1, opened: 1 });
    const [d] = await q<{ id: string; status: string; amount: string; address: string; address_kind: string; located_height: string | null; alert_id: string }>(
      `SELECT id::text AS id, status, amount::text AS amount, address, address_kind, located_height::text AS located_height, alert_id::text AS alert_id FROM reconcile_discrepancies`);
    expect(d).to.include({ status: 'OPEN', amount: raised.toString(), address: target, address_kind: 'DEPOSIT', located_height: null });
    const [a] = await alerts();
    expect(a!.id).to.equal(d!.alert_id);
    expect(a!.details).to.include({ address: target, amount: raised.toString(), addressKind: 'DEPOSIT' });
    const report = await wcs(['reconcile', 'report', '--chain', 'SOL']);
    expect(report.discrepancies.map((x: { id: number }) => x.id)).to.deep.equal([Number(d!.id)]);
    const sol = report.balances.find((x: { chainTokenId: number; applicationId: number }) => x.chainTokenId === SOL_TOKEN && x.applicationId === app.id);
    expect(sol.unexplained).to.equal('0.123456789');
    // the next pass keeps it: no second discrepancy, no second alert
    expect(await run()).to.include({ opened: 0 });
    expect(await alerts()).to.have.length(1);

    // no block hash on Solana and no located block (head-only reads): it cannot be credited as a deposit at a block; refused, nothing changed
    const refused = await wcs(['reconcile', 'assign', d!.id], 1);
    expect(refused.error.name).to.equal('RECONCILE_NOT_ASSIGNABLE');
    expect(await q('SELECT id FROM recharges WHERE address = $1 AND tx_status <> \'SETTLED\'', [target])).to.deep.equal([]);
    expect((await q<{ status: string }>('SELECT status FROM reconcile_discrepancies WHERE id = $1', [d!.id]))[0]!.status).to.equal('OPEN');
    // the operator books it into the ledger instead
    const booked = await wcs(['reconcile', 'book', d!.id, '--note', 'lamports raised outside any transaction (test)']);
    expect(booked).to.include({ discrepancyId: Number(d!.id), adjustment: 'BOOKED', amount: '0.123456789', token: 'SOL' });
    const last = await run();
    expect(last).to.include({ unexplained: 0, opened: 0 });
    expect((await balances()).get(`${target}/${SOL_TOKEN}`)).to.include({ ledger: raised.toString(), on_chain: raised.toString(), unexplained: '0' });
    expect((await q<{ status: string }>('SELECT status FROM reconcile_discrepancies WHERE id = $1', [d!.id]))[0]!.status).to.equal('BOOKED');
  });

  it('a token deposit below the minimum (0.5 TSPL) is not credited; the history scan keeps it, and the pass explains it as DEPOSIT_IGNORED', async () => {
    const dust = await newAddress('spl-dust');
    const tx = fund(mintIxs(dust, UNIT / 4n));
    node.advance(CONFIRMATIONS);
    const kept = await pollUntil(() => q<{ tx_hash: string; amount: string; chain_token_id: number; reason: string }>(
      'SELECT tx_hash, amount::text AS amount, chain_token_id, reason FROM ignored_deposits WHERE address = $1', [dust]), (rows) => rows.length === 1, 60_000, 100);
    expect(kept.result, 'kept by the history scan').to.deep.equal([{ tx_hash: tx, amount: (UNIT / 4n).toString(), chain_token_id: SPL_TOKEN, reason: 'BELOW_MINIMUM' }]);
    expect(await q('SELECT id FROM recharges WHERE address = $1', [dust]), 'not credited').to.deep.equal([]);
    node.advance(1);
    await run();
    const p = await run();
    expect(p).to.include({ unexplained: 0, opened: 0 });
    const row = (await balances()).get(`${dust}/${SPL_TOKEN}`)!;
    expect(row).to.include({ ledger: '0', on_chain: (UNIT / 4n).toString(), unexplained: '0', explained: (UNIT / 4n).toString() });
  });
});
