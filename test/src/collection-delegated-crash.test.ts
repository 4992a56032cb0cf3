/**
 * Delegated sweeps (EIP-7702) exactly once across a crash between signing and broadcast: the
 * workers run in a child process (`wcs start --workers-only`) behind a JSON-RPC relay that holds
 * the eth_sendRawTransaction carrying a SWEEP_BATCH (support/rpc-relay.ts), either never passing
 * it on ('hold-send') or passing it on and withholding the answer ('send-then-hang'). The workers
 * are killed with SIGKILL once the batch is SIGNED (its transfer_attempts row holds the raw bytes)
 * and started again. Then, for each mode, with 10 ERC-20 and 4 native deposit addresses in one
 * batch: the fee wallet sent exactly one transaction to the batch sweeper for that transfer, its
 * hash and raw bytes those of the stored attempt; every address was swept once (its tokens or
 * wei at the hot wallet once, its item SUCCESS once, one `collect` SUCCESS callback); each
 * address's authorization is in exactly one batch, and each address's nonce moved by one (the
 * authorization applied once).
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { anvilRpc, deployErc20, erc20Balance, mine, mintErc20, sendNative, startAnvil, startBlockClock, type AnvilDevnet, type BlockClock } from '@wcs/adapter-evm/devnet';
import { batchSweeperDeployment, forwarderDeployment } from '@wcs/adapter-evm';
import type { CreatedApplication } from '@wcs/server';
import { WcsService } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver } from './support/callback-receiver';
import { authorityOf, delegationCode, type RpcAuthorization } from './support/eip7702';
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
const TOKEN_ADDRESSES = 10;
const NATIVE_ADDRESSES = 4;

interface Item { id: string; from_address: string; chain_token_id: number; status: string; transfer_id: string | null; topup_transfer_id: string | null; tx_hash: string | null; amount: string }
interface StoredBatch { id: string; status: string; tx_hash: string; raw: string; attempts: number; from_address: string; to_address: string }

describe('delegated sweeps (EIP-7702): kill -9 of the workers between signing and broadcast of a batch (one batch on chain, each address swept once)', function () {
  this.timeout(180_000);
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
  let fee: string;
  let users = 0;
  const receiver = new CallbackReceiver();
  const sweeper = batchSweeperDeployment().address;
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const lower = (a: string) => a.toLowerCase();
  const newAddress = async () => (expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'ETH', externalUserId: `dcrash-${++users}` })) as { address: string }).address;
  const balance = (a: string) => anvilRpc<string>(anvil.url, 'eth_getBalance', [a, 'latest']).then(BigInt);
  const nonce = (a: string) => anvilRpc<string>(anvil.url, 'eth_getTransactionCount', [a, 'latest']).then(BigInt);
  const height = () => anvilRpc<string>(anvil.url, 'eth_blockNumber').then(BigInt);
  const itemsAt = (addresses: readonly string[]) => q<Item>(
    `SELECT id::text AS id, from_address, chain_token_id, status, transfer_id::text AS transfer_id, topup_transfer_id::text AS topup_transfer_id, tx_hash, amount::text AS amount
       FROM collection_items WHERE application_id = $1 AND lower(from_address) = ANY($2::text[]) ORDER BY id`, [app.id, addresses.map(lower)]);
  const minedSince = (from: bigint) => minedSinceOn(anvil.url, from);
  const startWorkers = async () => {
    workers = await spawnWorkers(db.url, {
      WCS_RPC_TEST_ETH: relayUrl, WCS_CONFIG: configFile, WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '200',
      WCS_COLLECT_PLAN_MS: '300', WCS_RPC_TIMEOUT_MS: '60000', WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1',
    });
  };
  const kill9 = async () => {
    await kill9Workers(workers!);
    workers = null;
  };
  const settled = async (addresses: readonly string[]) => {
    const r = await pollUntil(() => itemsAt(addresses), (rows) => rows.length === addresses.length && rows.every((i) => i.status === 'SUCCESS' || i.status === 'FAILED'), 60_000, 200);
    expect(r.ok, `items: ${JSON.stringify(r.result.filter((i) => i.status !== 'SUCCESS'))}\n${workers?.describe() ?? ''}`).to.equal(true);
    expect(r.result.map((i) => i.status), 'all SUCCESS').to.deep.equal(addresses.map(() => 'SUCCESS'));
    return r.result;
  };
  /** Deposits at fresh addresses (tokens, then wei), all mined in one block, so they are planned and batched together. */
  const depositsInOneBlock = async () => {
    const tokens: string[] = [];
    const natives: string[] = [];
    for (let i = 0; i < TOKEN_ADDRESSES; i++) tokens.push(await newAddress());
    for (let i = 0; i < NATIVE_ADDRESSES; i++) natives.push(await newAddress());
    const tokenAmounts = tokens.map((_a, i) => 3n * ETHER + BigInt(i));
    const nativeAmounts = natives.map((_a, i) => ETHER / 10n + BigInt(i));
    await clock.pause();
    try {
      for (const [i, a] of tokens.entries()) await mintErc20(anvil.url, token, a, tokenAmounts[i]!);
      for (const [i, a] of natives.entries()) await sendNative(anvil.url, a, nativeAmounts[i]!);
      await mine(anvil.url, 1);
    } finally {
      clock.resume();
    }
    return { tokens, natives, tokenAmounts, nativeAmounts };
  };

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    clock = await startBlockClock(anvil.url, 100);
    relay = new RpcRelay(anvil.url);
    relayUrl = await relay.start();
    token = await deployErc20(anvil.url, { name: 'Test USD', symbol: 'TUSD' });
    configFile = path.join(tempDir('wcs-delegated-crash-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({ tokens: [{ id: TOKEN_ID, chainCode: 'ETH', environment: 'test', symbol: 'TUSD', name: 'Test USD (anvil)', contract: token, decimals: 18 }] }));
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 3 });
    api = await WcsService.start(testConfig(db.url, { WCS_CONFIG: configFile }), testLogger(), { api: true, workers: false });
    app = await api.storage.applications.create(TEST_ACTOR, { name: 'delegated-crash', environment: 'test', chains: ['ETH'] });
    await api.storage.applications.setCallback(TEST_ACTOR, app.id, 'COLLECT', receiver.url(`/collect/${app.id}`));
    client = new SigningClient(api.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    await startWorkers();
    hot = await waitForHotWallet(q, app.id, ETH_CHAIN, 30_000);
    const fw = await pollUntil(() => q<{ address: string }>('SELECT address FROM fee_wallets WHERE application_id = $1 AND chain_id = $2', [app.id, ETH_CHAIN]), (r) => r.length === 1, 30_000, 100);
    expect(fw.ok, 'the fee wallet exists').to.equal(true);
    fee = fw.result[0]!.address;
    // the fee wallet pays the deployments and every batch; the deposit addresses are never funded with gas
    await sendNative(anvil.url, fee, 10n * ETHER);
    for (const [tokenId, nativeValue, threshold] of [[TOKEN_ID, (3000n * ETHER).toString(), ETHER.toString()], [ETH_TOKEN_ID, null, (ETHER / 1000n).toString()]] as const) {
      await q(`INSERT INTO collection_policies (application_id, chain_token_id, threshold, max_fee_bps, native_value, on_confirmed, schedule_seconds, sweep_mode)
               VALUES ($1, $2, $3::numeric, 1000, $4::numeric, true, NULL, 'DELEGATED')`, [app.id, tokenId, threshold, nativeValue]);
    }
  });

  after(async () => {
    await workers?.stop('SIGKILL');
    await api?.stop();
    await pool?.end();
    await db?.drop();
    await receiver.stop();
    await relay?.stop();
    await clock?.stop().catch(() => undefined);
    await anvil?.stop();
  });

  /**
   * One batch through a crash between signing and broadcast: the relay holds (mode) the send of
   * the SWEEP_BATCH; once the worker signed it and began to send, it is killed; after a restart
   * the batch on chain is the stored transaction, byte for byte, and every address is swept once.
   */
  const batchThroughCrash = async (mode: RelayHoldMode) => {
    const hotTokenBefore = await erc20Balance(anvil.url, token, hot);
    const hotNativeBefore = await balance(hot);
    const isBatch = async (hashes: readonly string[]) => (await q(
      `SELECT 1 FROM transfer_attempts a JOIN transfers x ON x.id = a.transfer_id WHERE x.kind = 'SWEEP_BATCH' AND lower(a.tx_hash) = ANY($1::text[])`, [hashes.map(lower)])).length > 0;
    relay.mode = mode;
    relay.hold = isBatch;
    const heldBefore = relay.held.length;
    const from = await height();
    const { tokens, natives, tokenAmounts, nativeAmounts } = await depositsInOneBlock();
    const addresses = [...tokens, ...natives];

    const reached = await pollUntil(async () => relay.held.length - heldBefore, (k) => k >= 1, 60_000, 50);
    expect(reached.ok, `the worker signed the batch and began to send: ${JSON.stringify(await itemsAt(addresses))}\n${workers?.describe() ?? ''}`).to.equal(true);
    await sleep(500); // the pay loop waits on the held send: nothing else is signed or sent meanwhile
    const held = relay.held.slice(heldBefore);
    expect(held.length, 'one held send').to.equal(1);
    const atCrash = await itemsAt(addresses);
    expect(atCrash.length, 'an item per address').to.equal(addresses.length);
    const batchIds = [...new Set(atCrash.map((i) => i.transfer_id))];
    expect(batchIds.length, `every item in one batch: ${JSON.stringify(atCrash)}`).to.equal(1);
    expect(batchIds[0], 'the batch transfer').to.not.equal(null);
    expect(atCrash.map((i) => i.status), 'every item SWEEPING').to.deep.equal(addresses.map(() => 'SWEEPING'));
    expect(atCrash.every((i) => i.topup_transfer_id === null), 'no top-up').to.equal(true);
    const [stored] = await q<StoredBatch>(
      `SELECT x.id::text AS id, x.status, a.tx_hash, encode(a.raw_tx, 'hex') AS raw, (SELECT count(*)::int FROM transfer_attempts b WHERE b.transfer_id = x.id) AS attempts, x.from_address, x.to_address
         FROM transfers x JOIN transfer_attempts a ON a.transfer_id = x.id WHERE x.id = $1`, [batchIds[0]]);
    expect(stored, 'the batch has its signed attempt').to.not.equal(undefined);
    expect([stored!.status, stored!.attempts], 'SIGNED, one transaction').to.deep.equal(['SIGNED', 1]);
    expect(lower(stored!.from_address)).to.equal(lower(fee));
    expect(lower(stored!.to_address)).to.equal(lower(sweeper));
    expect([...held[0]!.hashes].map(lower), 'the held send carries the stored transaction').to.deep.equal([lower(stored!.tx_hash)]);
    const [opts] = await q<{ authorities: string[] }>(
      `SELECT coalesce(array_agg(lower(a->>'authority')), '{}') AS authorities FROM transfers x CROSS JOIN LATERAL jsonb_array_elements(x.options->'call'->'authorizations') a WHERE x.id = $1`, [stored!.id]);
    expect([...opts!.authorities].sort(), 'an authorization per address in the batch').to.deep.equal(addresses.map(lower).sort());
    if (mode === 'hold-send') {
      expect(await anvilRpc(anvil.url, 'eth_getTransactionByHash', [stored!.tx_hash]), 'the node never got it').to.equal(null);
    } else {
      const onNode = await pollUntil(() => anvilRpc(anvil.url, 'eth_getTransactionByHash', [stored!.tx_hash]), (tx) => tx !== null, 10_000, 50);
      expect(onNode.ok, 'the node has it').to.equal(true);
    }
    await kill9();
    relay.hold = null;
    relay.dropHeld();
    if (mode === 'hold-send') for (const a of addresses) expect(await nonce(a), `${a}: no authorization applied yet`).to.equal(0n);
    await startWorkers();

    const done = await settled(addresses);
    // on chain: exactly one transaction of the fee wallet to the batch sweeper since the deposits, the stored one
    const txs = await minedSince(from);
    const batches = txs.filter((t) => lower(t.from) === lower(fee) && lower(t.to ?? '') === lower(sweeper));
    expect(batches.map((t) => lower(t.hash)), 'one batch on chain: the stored one').to.deep.equal([lower(stored!.tx_hash)]);
    const raw = await anvilRpc<string>(anvil.url, 'eth_getRawTransactionByHash', [stored!.tx_hash]);
    expect(raw.replace(/^0x/, '').toLowerCase(), 'the stored bytes were sent').to.equal(stored!.raw.toLowerCase());
    for (const a of addresses) expect(txs.filter((t) => lower(t.from) === lower(a)).length, `${a} sent nothing itself`).to.equal(0);
    const [after] = await q<{ status: string; tx_hash: string; attempts: string[] }>(
      `SELECT x.status, x.tx_hash, (SELECT array_agg(a.tx_hash ORDER BY a.attempt) FROM transfer_attempts a WHERE a.transfer_id = x.id) AS attempts FROM transfers x WHERE x.id = $1`, [stored!.id]);
    expect(after).to.deep.equal({ status: 'SUCCESS', tx_hash: stored!.tx_hash, attempts: [stored!.tx_hash] });
    const receipt = await anvilRpc<{ status: string }>(anvil.url, 'eth_getTransactionReceipt', [stored!.tx_hash]);
    expect(receipt.status).to.equal('0x1');
    // each authorization on chain once, signed by its deposit address, each applied once (nonce 0 → 1), each address delegated to the forwarder
    const tx = await anvilRpc<{ authorizationList?: RpcAuthorization[] }>(anvil.url, 'eth_getTransactionByHash', [stored!.tx_hash]);
    expect((tx.authorizationList ?? []).map(authorityOf).sort(), 'the authorities of the mined batch').to.deep.equal(addresses.map(lower).sort());
    const forwarder = forwarderDeployment(hot).address;
    for (const a of addresses) {
      expect(await nonce(a), `${a}: its authorization applied once`).to.equal(1n);
      expect(await anvilRpc<string>(anvil.url, 'eth_getCode', [a, 'latest']), a).to.equal(delegationCode(forwarder));
    }
    const auths = await q<{ authority: string; n: number }>(
      `SELECT lower(a->>'authority') AS authority, count(*)::int AS n FROM transfers x CROSS JOIN LATERAL jsonb_array_elements(x.options->'call'->'authorizations') a
        WHERE x.application_id = $1 AND x.kind = 'SWEEP_BATCH' AND lower(a->>'authority') = ANY($2::text[]) GROUP BY 1`, [app.id, addresses.map(lower)]);
    expect(auths.length, 'every address authorized').to.equal(addresses.length);
    expect(auths.filter((r) => r.n !== 1), 'each authorization in exactly one batch (of any status)').to.deep.equal([]);
    // each item SUCCESS once, in the one batch, with the batch's hash; tokens and wei at the hot wallet once
    expect(done.every((i) => i.transfer_id === stored!.id && lower(i.tx_hash ?? '') === lower(stored!.tx_hash)), 'every item ended by the stored batch').to.equal(true);
    for (const [i, a] of tokens.entries()) {
      expect(await erc20Balance(anvil.url, token, a), `${a} emptied`).to.equal(0n);
      expect(done.find((x) => lower(x.from_address) === lower(a))!.amount, `${a}: the item's amount`).to.equal(tokenAmounts[i]!.toString());
    }
    for (const [i, a] of natives.entries()) {
      expect(await balance(a), `${a} emptied`).to.equal(0n);
      expect(done.find((x) => lower(x.from_address) === lower(a))!.amount, `${a}: the item's amount (the whole balance: the fee wallet pays the gas)`).to.equal(nativeAmounts[i]!.toString());
    }
    expect(await erc20Balance(anvil.url, token, hot) - hotTokenBefore, 'every token unit at the hot wallet, once').to.equal(tokenAmounts.reduce((s, v) => s + v, 0n));
    expect(await balance(hot) - hotNativeBefore, 'every wei at the hot wallet, once').to.equal(nativeAmounts.reduce((s, v) => s + v, 0n));
    const kinds = (await q<{ kind: string }>(`SELECT DISTINCT kind FROM transfers WHERE application_id = $1 ORDER BY kind`, [app.id])).map((k) => k.kind);
    expect(kinds, 'no top-up, no single sweep').to.deep.equal(['DEPLOY', 'SWEEP_BATCH']);
    // one notice (its status 'SUCCESS/<retry>') and one COLLECT task per item, and nothing else for them; delivered once
    const ids = done.map((i) => i.id).sort((a, b) => Number(BigInt(a) - BigInt(b)));
    const notices = await q<{ item_id: string; statuses: string[]; tasks: number }>(
      `SELECT n.item_id::text AS item_id, array_agg(n.status ORDER BY n.status) AS statuses,
              (SELECT count(*)::int FROM callback_tasks t WHERE t.biz_type = 'COLLECT' AND t.biz_id = n.item_id) AS tasks
         FROM collect_notices n WHERE n.item_id = ANY($1::bigint[]) GROUP BY n.item_id ORDER BY n.item_id`, [ids]);
    expect(notices.map((n) => [n.item_id, n.statuses, n.tasks]), 'one SUCCESS notice and one task per item').to.deep.equal(ids.map((id) => [id, ['SUCCESS/0'], 1]));
    const delivered = await pollUntil(async () => receiver.received.filter((r) => r.target.startsWith(`/collect/${app.id}`)).map((r) => JSON.parse(r.body.toString('utf8')) as { id: number; status: string; txHash: string }),
      (e) => ids.every((id) => e.some((x) => String(x.id) === id && x.status === 'SUCCESS')), 30_000, 100);
    expect(delivered.ok, 'a SUCCESS callback per item delivered').to.equal(true);
    for (const id of ids) {
      const got = delivered.result.filter((x) => String(x.id) === id && x.status === 'SUCCESS');
      expect(got.length, `item ${id}: one SUCCESS callback`).to.equal(1);
      expect(lower(got[0]!.txHash)).to.equal(lower(stored!.tx_hash));
    }
  };

  it(`${TOKEN_ADDRESSES} ERC-20 + ${NATIVE_ADDRESSES} native addresses: killed with the batch signed, its send in flight (the node never got it): after a restart the stored batch is sent, each address swept once`, async () => {
    await batchThroughCrash('hold-send');
  });

  it(`${TOKEN_ADDRESSES} ERC-20 + ${NATIVE_ADDRESSES} native addresses: killed after the node took the batch but before the worker heard back: after a restart it is recognised, not signed again`, async () => {
    await batchThroughCrash('send-then-hang');
  });
});
