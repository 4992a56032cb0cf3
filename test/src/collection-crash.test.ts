/**
 * Collection exactly once across a crash: the service's workers run in a child process
 * (`wcs start --workers-only`) that is killed with SIGKILL at a precise point and started again.
 * The node is a real anvil mining on a clock (startBlockClock), reached through a JSON-RPC relay
 * that can hold the eth_sendRawTransaction requests carrying sweeps (support/rpc-relay.ts).
 *
 * - Between top-up and sweep: the clock is paused when the fee wallet is funded, so the gas
 *   top-ups are signed and broadcast but cannot confirm; the workers are killed with every top-up
 *   BROADCASTED and no sweep signed. After the restart (and the clock resumed) each address was
 *   topped up exactly once, counted from the blocks (the fee wallet's transactions to it), and
 *   swept exactly once; every token unit reached the hot wallet.
 * - Between sign and broadcast: the relay holds the send of the sweeps (the node never gets them)
 *   or passes it on and withholds the answer (the node has them, the worker never hears); the
 *   workers are killed with the sweeps SIGNED. After the restart the stored bytes are what is on
 *   chain: one transaction per sweep, its hash and raw bytes those of the stored attempt.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { anvilRpc, deployErc20, erc20Balance, mine, mintErc20, sendNative, startAnvil, startBlockClock, type AnvilDevnet, type BlockClock } from '@wcs/adapter-evm/devnet';
import type { CreatedApplication } from '@wcs/server';
import { WcsService } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { waitForHotWallet } from './support/payouts';
import { expectOk, pollUntil, sleep } from './support/expect';
import { WcsProcess } from './support/processes';
import { kill9 as kill9Workers, minedSince as minedSinceOn, spawnWorkers } from './support/crash-harness';
import { ADDRESS_CREATE } from './support/recharge-types';
import { RpcRelay, type RelayHoldMode } from './support/rpc-relay';
import { tempDir } from './support/temp';

const ETH_CHAIN = 102;
const ETH_TOKEN_ID = 10200;
const TOKEN_ID = 10299;
const ETHER = 10n ** 18n;

interface Item { id: string; from_address: string; chain_token_id: number; status: string; topup_transfer_id: string | null; transfer_id: string | null; amount: string; waiting_reason: string | null }

describe('collection: kill -9 of the workers between top-up and sweep, and between signing and broadcast (one top-up, one sweep per address)', function () {
  this.timeout(300_000);
  let anvil: AnvilDevnet;
  let clock: BlockClock;
  let relay: RpcRelay;
  let relayUrl: string;
  let token: string;
  let configFile: string;
  let db: TestDatabase;
  let api: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let pool: Pool;
  let workers: WcsProcess | null = null;
  let hot: string;
  let users = 0;
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const lower = (a: string) => a.toLowerCase();
  const newAddress = async () => (expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'ETH', externalUserId: `crash-${++users}` })) as { address: string }).address;
  const balance = (a: string) => anvilRpc<string>(anvil.url, 'eth_getBalance', [a, 'latest']).then(BigInt);
  const nonce = (a: string) => anvilRpc<string>(anvil.url, 'eth_getTransactionCount', [a, 'latest']).then(BigInt);
  const height = () => anvilRpc<string>(anvil.url, 'eth_blockNumber').then(BigInt);
  const itemsAt = (addresses: readonly string[]) => q<Item>(
    `SELECT id::text AS id, from_address, chain_token_id, status, topup_transfer_id::text AS topup_transfer_id, transfer_id::text AS transfer_id, amount::text AS amount, waiting_reason
       FROM collection_items WHERE application_id = $1 AND lower(from_address) = ANY($2::text[]) ORDER BY id`, [app.id, addresses.map(lower)]);
  const minedSince = (from: bigint) => minedSinceOn(anvil.url, from);
  const startWorkers = async () => {
    workers = await spawnWorkers(db.url, {
      WCS_RPC_TEST_ETH: relayUrl, WCS_CONFIG: configFile, WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '200',
      WCS_COLLECT_PLAN_MS: '300', WCS_RPC_TIMEOUT_MS: '60000',
    });
  };
  const kill9 = async () => {
    await kill9Workers(workers!);
    workers = null;
  };
  const settled = async (addresses: readonly string[]) => {
    const r = await pollUntil(() => itemsAt(addresses), (rows) => rows.length === addresses.length && rows.every((i) => i.status === 'SUCCESS' || i.status === 'FAILED'), 120_000, 200);
    expect(r.ok, `items: ${JSON.stringify(r.result.filter((i) => i.status !== 'SUCCESS'))}\n${workers?.describe() ?? ''}`).to.equal(true);
    expect(r.result.map((i) => i.status), 'all SUCCESS').to.deep.equal(addresses.map(() => 'SUCCESS'));
    return r.result;
  };
  /** Token deposits at fresh addresses, all mined in one block (so they are planned, topped up and swept together). */
  const depositsInOneBlock = async (n: number, kind: 'token' | 'native', base: bigint) => {
    const addresses: string[] = [];
    for (let i = 0; i < n; i++) addresses.push(await newAddress());
    const amounts = addresses.map((_a, i) => base + BigInt(i));
    await clock.pause();
    try {
      for (const [i, a] of addresses.entries()) {
        if (kind === 'token') await mintErc20(anvil.url, token, a, amounts[i]!);
        else await sendNative(anvil.url, a, amounts[i]!);
      }
      await mine(anvil.url, 1);
    } finally {
      clock.resume();
    }
    return { addresses, amounts };
  };

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    clock = await startBlockClock(anvil.url, 100); // several sends of one sender at once: see startBlockClock
    relay = new RpcRelay(anvil.url);
    relayUrl = await relay.start();
    token = await deployErc20(anvil.url, { name: 'Test USD', symbol: 'TUSD' });
    configFile = path.join(tempDir('wcs-collect-crash-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({ tokens: [{ id: TOKEN_ID, chainCode: 'ETH', environment: 'test', symbol: 'TUSD', name: 'Test USD (anvil)', contract: token, decimals: 18 }] }));
    await prepareTestKeystore();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 3 });
    api = await WcsService.start(testConfig(db.url, { WCS_CONFIG: configFile }), testLogger(), { api: true, workers: false });
    app = await api.storage.applications.create(TEST_ACTOR, { name: 'collect-crash', environment: 'test', chains: ['ETH'] });
    client = new SigningClient(api.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    await startWorkers();
    hot = await waitForHotWallet(q, app.id, ETH_CHAIN, 30_000);
    // fee quotes exist once the hot wallet holds what they quote (a token quote estimates a transfer of it)
    await sendNative(anvil.url, hot, 10n * ETHER);
    await mintErc20(anvil.url, token, hot, 1000n * ETHER);
    const quotes = await pollUntil(() => q<{ n: number }>('SELECT count(*)::int AS n FROM withdraw_fee_quotes WHERE chain_id = $1 AND chain_token_id = ANY($2::int[])', [ETH_CHAIN, [ETH_TOKEN_ID, TOKEN_ID]]), (r) => r[0]!.n === 2, 60_000, 200);
    expect(quotes.ok, 'fee quotes').to.equal(true);
    for (const [tokenId, nativeValue, threshold] of [[TOKEN_ID, (3000n * ETHER).toString(), ETHER.toString()], [ETH_TOKEN_ID, null, (ETHER / 1000n).toString()]] as const) {
      await q(`INSERT INTO collection_policies (application_id, chain_token_id, threshold, max_fee_bps, native_value, on_confirmed, schedule_seconds)
               VALUES ($1, $2, $3::numeric, 1000, $4::numeric, true, NULL)`, [app.id, tokenId, threshold, nativeValue]);
    }
  });

  after(async () => {
    await workers?.stop('SIGKILL');
    await api?.stop();
    await pool?.end();
    await db?.drop();
    await relay?.stop();
    await clock?.stop().catch(() => undefined);
    await anvil?.stop();
  });

  it('killed with every gas top-up broadcast and unconfirmed, before any sweep is signed: after a restart each address is topped up once and swept once, every token unit at the hot wallet', async () => {
    const N = 4;
    const addresses: string[] = [];
    for (let i = 0; i < N; i++) addresses.push(await newAddress());
    const amounts = addresses.map((_a, i) => 5n * ETHER + BigInt(i));
    const hotBefore = await erc20Balance(anvil.url, token, hot);
    for (const [i, a] of addresses.entries()) await mintErc20(anvil.url, token, a, amounts[i]!);
    // the fee wallet is empty: every item is planned and waits for it
    const waiting = await pollUntil(() => itemsAt(addresses), (rows) => rows.length === N && rows.every((i) => i.status === 'PLANNED' && (i.waiting_reason ?? '').includes('fee wallet')), 60_000, 100);
    expect(waiting.ok, `items waiting for the fee wallet: ${JSON.stringify(waiting.result)}`).to.equal(true);
    const [fee] = await q<{ address: string }>('SELECT address FROM fee_wallets WHERE application_id = $1 AND chain_id = $2', [app.id, ETH_CHAIN]);
    const feeAddress = fee!.address;
    expect(await nonce(feeAddress)).to.equal(0n);

    // fund the fee wallet in one block, then no more blocks: the top-ups are signed and sent, none can confirm
    await clock.pause();
    const from = await height();
    await sendNative(anvil.url, feeAddress, ETHER);
    await mine(anvil.url, 1);
    const broadcast = await pollUntil(
      () => q<{ status: string; tx_hash: string; to_address: string }>(`SELECT x.status, x.tx_hash, x.to_address FROM transfers x JOIN collection_items i ON i.topup_transfer_id = x.id WHERE i.id = ANY($1::bigint[])`, [waiting.result.map((i) => i.id)]),
      (rows) => rows.length === N && rows.every((r) => r.status === 'BROADCASTED'), 60_000, 50);
    expect(broadcast.ok, `top-ups BROADCASTED: ${JSON.stringify(broadcast.result)}`).to.equal(true);
    const atCrash = await itemsAt(addresses);
    expect(atCrash.map((i) => i.status), 'every item TOPPING_UP').to.deep.equal(addresses.map(() => 'TOPPING_UP'));
    expect(atCrash.every((i) => i.transfer_id === null), 'no sweep made').to.equal(true);
    expect((await q(`SELECT 1 FROM transfers WHERE kind = 'SWEEP' AND application_id = $1 AND lower(from_address) = ANY($2::text[])`, [app.id, addresses.map(lower)])).length, 'no sweep transfer').to.equal(0);
    for (const t of broadcast.result) {
      const tx = await anvilRpc<{ blockNumber: string | null } | null>(anvil.url, 'eth_getTransactionByHash', [t.tx_hash]);
      expect(tx, 'the node holds the top-up').to.not.equal(null);
      expect(tx!.blockNumber, 'unmined').to.equal(null);
    }
    await kill9();
    clock.resume();
    await startWorkers();

    await settled(addresses);
    // on chain: one top-up per address from the fee wallet, one sweep from each address, nothing else
    const txs = await minedSince(from);
    const fromFee = txs.filter((t) => lower(t.from) === lower(feeAddress));
    for (const a of addresses) {
      expect(fromFee.filter((t) => lower(t.to ?? '') === lower(a)).length, `top-ups of ${a} on chain`).to.equal(1);
      const swept = txs.filter((t) => lower(t.from) === lower(a));
      expect(swept.length, `sweeps from ${a} on chain`).to.equal(1);
      expect(lower(swept[0]!.to ?? '')).to.equal(lower(token));
      expect(await nonce(a), `${a} sent one transaction ever`).to.equal(1n);
      expect(await erc20Balance(anvil.url, token, a)).to.equal(0n);
    }
    expect(fromFee.length, 'the fee wallet sent only the top-ups').to.equal(N);
    expect(await nonce(feeAddress)).to.equal(BigInt(N));
    // the database agrees: one top-up and one sweep per item, one signed transaction each, the one mined
    const rows = await q<{ kind: string; tx_hash: string; attempts: string[]; status: string }>(
      `SELECT x.kind, x.tx_hash, x.status, (SELECT array_agg(a.tx_hash ORDER BY a.attempt) FROM transfer_attempts a WHERE a.transfer_id = x.id) AS attempts
         FROM transfers x JOIN collection_items i ON x.id IN (i.topup_transfer_id, i.transfer_id) WHERE i.id = ANY($1::bigint[])`, [atCrash.map((i) => i.id)]);
    expect(rows.filter((r) => r.kind === 'TOP_UP').length).to.equal(N);
    expect(rows.filter((r) => r.kind === 'SWEEP').length).to.equal(N);
    const mined = new Set(txs.map((t) => lower(t.hash)));
    for (const r of rows) {
      expect(r.status).to.equal('SUCCESS');
      expect(r.attempts, `${r.kind} signed once`).to.deep.equal([r.tx_hash]);
      expect(mined.has(lower(r.tx_hash)), `${r.kind} ${r.tx_hash} on chain`).to.equal(true);
    }
    expect(await erc20Balance(anvil.url, token, hot), 'every token unit at the hot wallet').to.equal(hotBefore + amounts.reduce((s, v) => s + v, 0n));
  });

  /**
   * Sweeps through a crash between signing and broadcast: the relay holds (mode) the sends that
   * carry sweeps; once the worker has signed them and begun to send, it is killed; after a restart
   * the sweeps on chain are the stored transactions, byte for byte, one per address.
   */
  const sweepsThroughCrash = async (mode: RelayHoldMode, kind: 'token' | 'native', n: number) => {
    const hotBefore = kind === 'token' ? await erc20Balance(anvil.url, token, hot) : await balance(hot);
    const sweepHashes = async (hashes: readonly string[]) => (await q(
      `SELECT 1 FROM transfer_attempts a JOIN transfers x ON x.id = a.transfer_id WHERE x.kind = 'SWEEP' AND lower(a.tx_hash) = ANY($1::text[])`, [hashes.map(lower)])).length > 0;
    relay.mode = mode;
    relay.hold = sweepHashes;
    const heldBefore = relay.held.length;
    const from = await height();
    const { addresses, amounts } = await depositsInOneBlock(n, kind, kind === 'token' ? 3n * ETHER : ETHER / 10n);
    if (kind === 'token') {
      // run on its own, the fee wallet is still empty: fund it once the items wait for it
      const next = await pollUntil(() => itemsAt(addresses), (rows) => rows.length === n && rows.every((i) => i.topup_transfer_id !== null || (i.waiting_reason ?? '').includes('fee wallet')), 60_000, 100);
      expect(next.ok, `items topped up or waiting for the fee wallet: ${JSON.stringify(next.result)}`).to.equal(true);
      if (next.result.some((i) => i.topup_transfer_id === null)) {
        const [fee] = await q<{ address: string }>('SELECT address FROM fee_wallets WHERE application_id = $1 AND chain_id = $2', [app.id, ETH_CHAIN]);
        await sendNative(anvil.url, fee!.address, ETHER);
      }
    }
    const reached = await pollUntil(async () => relay.held.length - heldBefore, (k) => k >= 1, 90_000, 50);
    expect(reached.ok, `the worker signed the sweeps and began to send: ${JSON.stringify(await itemsAt(addresses))}`).to.equal(true);
    await sleep(500); // the pay loop waits on the held send: nothing else is signed or sent meanwhile
    const held = relay.held.slice(heldBefore);
    expect(held.length, 'one held send').to.equal(1);
    const stored = await q<{ id: string; status: string; tx_hash: string; raw: string; attempts: number; from_address: string }>(
      `SELECT x.id::text AS id, x.status, a.tx_hash, encode(a.raw_tx, 'hex') AS raw, (SELECT count(*)::int FROM transfer_attempts b WHERE b.transfer_id = x.id) AS attempts, x.from_address
         FROM transfers x JOIN transfer_attempts a ON a.transfer_id = x.id WHERE x.kind = 'SWEEP' AND lower(x.from_address) = ANY($1::text[]) ORDER BY x.id`, [addresses.map(lower)]);
    expect(stored.length, 'every sweep signed in the round that is held').to.equal(n);
    expect(stored.map((s) => [s.status, s.attempts]), 'SIGNED, one transaction each').to.deep.equal(stored.map(() => ['SIGNED', 1]));
    expect([...held[0]!.hashes].map(lower).sort(), 'the held send carries the stored transactions').to.deep.equal(stored.map((s) => lower(s.tx_hash)).sort());
    expect((await itemsAt(addresses)).map((i) => i.status)).to.deep.equal(addresses.map(() => 'SWEEPING'));
    for (const s of stored) {
      if (mode === 'hold-send') {
        expect(await anvilRpc(anvil.url, 'eth_getTransactionByHash', [s.tx_hash]), 'the node never got it').to.equal(null);
      } else {
        const onNode = await pollUntil(() => anvilRpc(anvil.url, 'eth_getTransactionByHash', [s.tx_hash]), (tx) => tx !== null, 10_000, 50);
        expect(onNode.ok, 'the node has it').to.equal(true);
      }
    }
    await kill9();
    relay.hold = null;
    relay.dropHeld();
    if (mode === 'hold-send') for (const a of addresses) expect(await nonce(a), `${a} sent nothing yet`).to.equal(0n);
    await startWorkers();

    await settled(addresses);
    const txs = await minedSince(from);
    for (const s of stored) {
      const sent = txs.filter((t) => lower(t.from) === lower(s.from_address));
      expect(sent.map((t) => lower(t.hash)), `one transaction from ${s.from_address}: the stored one`).to.deep.equal([lower(s.tx_hash)]);
      expect(await nonce(s.from_address)).to.equal(1n);
      const raw = await anvilRpc<string>(anvil.url, 'eth_getRawTransactionByHash', [s.tx_hash]);
      expect(raw.replace(/^0x/, '').toLowerCase(), 'the stored bytes were sent').to.equal(s.raw.toLowerCase());
      const [after] = await q<{ status: string; tx_hash: string; attempts: string[] }>(
        `SELECT x.status, x.tx_hash, (SELECT array_agg(a.tx_hash ORDER BY a.attempt) FROM transfer_attempts a WHERE a.transfer_id = x.id) AS attempts FROM transfers x WHERE x.id = $1`, [s.id]);
      expect(after).to.deep.equal({ status: 'SUCCESS', tx_hash: s.tx_hash, attempts: [s.tx_hash] });
    }
    if (kind === 'token') {
      for (const a of addresses) expect(await erc20Balance(anvil.url, token, a)).to.equal(0n);
      expect(await erc20Balance(anvil.url, token, hot), 'every token unit at the hot wallet').to.equal(hotBefore + amounts.reduce((s, v) => s + v, 0n));
    } else {
      for (const a of addresses) expect(await balance(a), `${a} emptied`).to.equal(0n);
      const [sent] = await q<{ total: string }>(`SELECT sum(sent_amount)::text AS total FROM transfers WHERE kind = 'SWEEP' AND id = ANY($1::bigint[])`, [stored.map((s) => s.id)]);
      const [feeSum] = await q<{ total: string }>(`SELECT sum(fee)::text AS total FROM transfers WHERE kind = 'SWEEP' AND id = ANY($1::bigint[])`, [stored.map((s) => s.id)]);
      expect(BigInt(sent!.total) + BigInt(feeSum!.total), 'sent + fee = what the addresses held').to.equal(amounts.reduce((s, v) => s + v, 0n));
      expect(await balance(hot), 'what was sent arrived at the hot wallet').to.equal(hotBefore + BigInt(sent!.total));
    }
  };

  it('ERC-20 sweeps: killed after signing, while the send is in flight (the node never got them): after a restart the stored transactions are sent, one per address', async () => {
    await sweepsThroughCrash('hold-send', 'token', 3);
  });

  it('ERC-20 sweeps: killed after the node took them but before the worker heard back: after a restart they are recognised, not signed again', async () => {
    await sweepsThroughCrash('send-then-hang', 'token', 3);
  });

  it('native sweeps: killed after signing, before the node got them: after a restart the stored transactions are sent, the addresses emptied exactly', async () => {
    await sweepsThroughCrash('hold-send', 'native', 3);
  });
});
