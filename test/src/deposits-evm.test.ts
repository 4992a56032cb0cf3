/**
 * Deposit detection on a real EVM node (anvil, from npm @foundry-rs/anvil): native and ERC-20
 * deposits through the service's scanner worker, confirmations, several deposits in one block,
 * reorgs (anvil_reorg) at every depth below minConfirmations with the deposit dropped and with
 * it re-mined, a scanner restart in the middle of a catch-up, unknown tokens and the minimum,
 * several ERC-20 Transfer logs in one transaction,
 * and the RECHARGE callbacks checked by a receiver that verifies signatures from the spec.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { anvilRpc, deployErc20, mine, mintErc20, sendNative, setAutomine, startAnvil, transferErc20, waitForReceipt, type AnvilDevnet } from '@wcs/adapter-evm/devnet';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { Codes, expectError, expectOk, pollUntil } from './support/expect';
import { ADDRESS_CREATE, EVENT_FIELDS, RECHARGE_FIELDS, RECHARGE_GET, RECHARGE_LIST, type Recharge, type RechargeEvent } from './support/recharge-types';
import { tempDir } from './support/temp';

/** The test-network ETH chain of the built-in catalogue (Sepolia definition), scanned on anvil. */
const ETH_TEST_CHAIN_ID = 102;
const MIN_CONF = 3;
const TOKEN_ID = 10299;
/** A listed token whose every call emits several ERC-20 Transfer logs (batchEmitterInitCode). */
const MULTI_TOKEN_ID = 10298;
/** anvil's first dev account (unlocked: eth_sendTransaction signs for it). */
const DEV_ACCOUNT = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
/** keccak256("Transfer(address,address,uint256)"), the ERC-20 Transfer topic. */
const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const ETHER = 10n ** 18n;

describe('deposit detection on anvil (scanner worker, confirmations, reorgs, callbacks)', function () {
  this.timeout(240_000);
  let anvil: AnvilDevnet;
  let token: string;
  let otherToken: string;
  let multiToken: string;
  let db: TestDatabase;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  const receiver = new CallbackReceiver();
  let configFile: string;
  const addresses = new Map<string, string>();

  const serviceEnv = (extra: Record<string, string> = {}) => ({
    WCS_RPC_TEST_ETH: anvil.url,
    WCS_SCAN_POLL_MS: '50',
    WCS_CALLBACK_POLL_MS: '50',
    WCS_CALLBACK_ALLOW_PRIVATE: '1',
    WCS_CONFIG: configFile,
    ...extra,
  });
  let pool: Pool;
  /** Reads the database directly (the service may be stopped in between). */
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const tip = async () => BigInt(await anvilRpc<string>(anvil.url, 'eth_blockNumber'));
  const cursor = async () => {
    const r = (await q<{ height: string | null }>('SELECT height::text AS height FROM scan_cursors WHERE chain_id = $1', [ETH_TEST_CHAIN_ID]))[0];
    return r?.height ? BigInt(r.height) : -1n;
  };
  /** Waits until the scanner has read up to the node's tip. */
  const caughtUp = async () => {
    const t = await tip();
    const r = await pollUntil(cursor, (h) => h >= t, 30_000);
    expect(r.ok, `scanner at ${r.result}, tip ${t}`).to.equal(true);
  };
  const list = async (query: Record<string, string | number> = {}): Promise<Recharge[]> => {
    const qs = new URLSearchParams(Object.entries({ pageSize: 200, ...query }).map(([k, v]): [string, string] => [k, String(v)])).toString();
    return (expectOk(await client.get(`${RECHARGE_LIST}?${qs}`)) as { list: Recharge[] }).list;
  };
  const byTx = async (txHash: string): Promise<Recharge[]> => (await list()).filter((r) => r.txHash === txHash);
  const userAddress = async (user: string): Promise<string> => {
    let a = addresses.get(user);
    if (!a) {
      a = (expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'ETH', externalUserId: user })) as { address: string }).address;
      addresses.set(user, a);
    }
    return a;
  };
  const events = (id: number): RechargeEvent[] =>
    receiver.received.map((r) => JSON.parse(r.body.toString('utf8')) as RechargeEvent).filter((e) => e.event === 'recharge' && e.id === id);
  const waitStatus = async (txHash: string, status: string, timeoutMs = 30_000): Promise<Recharge> => {
    const r = await pollUntil(() => byTx(txHash), (rows) => rows.length === 1 && rows[0]!.txStatus === status, timeoutMs, 100);
    expect(r.ok, `${txHash}: ${JSON.stringify(r.result)}`).to.equal(true);
    return r.result[0]!;
  };
  const waitEvents = async (id: number, statuses: string[]) => {
    const r = await pollUntil(async () => events(id).map((e) => e.txStatus), (s) => statuses.every((x) => s.includes(x)), 30_000, 100);
    expect(r.ok, `callbacks of ${id}: ${r.result.join(',')}`).to.equal(true);
  };

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 }); // the catalogue's test ETH (Sepolia) id: the scanner checks it
    token = await deployErc20(anvil.url, { name: 'Test USD', symbol: 'TUSD' });
    otherToken = await deployErc20(anvil.url, { name: 'Not Listed', symbol: 'NOPE' });
    await mintErc20(anvil.url, token, '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', 1_000_000n * ETHER);
    await mintErc20(anvil.url, otherToken, '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', 1_000_000n * ETHER);
    const deployed = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [{ from: DEV_ACCOUNT, data: batchEmitterInitCode(3) }]);
    multiToken = (await waitForReceipt<{ contractAddress: string }>(anvil.url, deployed)).contractAddress;
    configFile = path.join(tempDir('wcs-dep-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({
      tokens: [
        { id: TOKEN_ID, chainCode: 'ETH', environment: 'test', symbol: 'TUSD', name: 'Test USD (anvil)', contract: token, decimals: 18, minDeposit: '1' },
        { id: MULTI_TOKEN_ID, chainCode: 'ETH', environment: 'test', symbol: 'MLOG', name: 'Batch Transfer emitter (anvil)', contract: multiToken, decimals: 6 },
      ],
    }));
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    svc = await WcsService.start(testConfig(db.url, serviceEnv()), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'deposits', environment: 'test', chains: ['ETH'] });
    await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'RECHARGE', receiver.url('/merchant/recharge'));
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    await caughtUp();
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await receiver.stop();
    await anvil?.stop();
  });

  it('support/chains says deposit detection is ENABLED on ETH (RPC configured) and NO_RPC elsewhere', async () => {
    const other = await svc.storage.applications.create(TEST_ACTOR, { name: 'chains', environment: 'test', chains: ['ETH', 'BTC'] });
    const c = new SigningClient(svc.url, { apiKey: other.apiKey, apiSecret: other.apiSecret });
    const chains = expectOk(await c.get('/api/v1/wallet/support/chains')) as Array<{ chainCode: string; depositDetection: string }>;
    expect(chains.map((x) => [x.chainCode, x.depositDetection])).to.deep.equal([['BTC', 'NO_RPC'], ['ETH', 'ENABLED']]);
  });

  it('a native deposit goes PENDING, CONFIRMED at minConfirmations, SETTLED (on-confirm), with one signed callback per state in the spec\'s shape', async () => {
    const to = await userAddress('alice');
    const txHash = await sendNative(anvil.url, to, 3n * ETHER / 2n);
    const pending = await waitStatus(txHash, 'PENDING');
    expect(pending).to.include({ chainCode: 'ETH', tokenSymbol: 'ETH', chainTokenId: ETH_TEST_CHAIN_ID * 100, amount: '1.5', address: to, externalUserId: 'alice', position: -1, minConfirmations: MIN_CONF });
    expect(pending.confirmations).to.equal(1);
    await mine(anvil.url, MIN_CONF - 1);
    const settled = await waitStatus(txHash, 'SETTLED');
    expect(settled.confirmations).to.be.at.least(MIN_CONF);
    await waitEvents(settled.id, ['PENDING', 'CONFIRMED', 'SETTLED']);
    const got = receiver.received.filter((r) => (JSON.parse(r.body.toString()) as RechargeEvent).id === settled.id);
    for (const r of got) {
      expect(verifyCallback(r, app.apiKey, app.apiSecret)).to.equal(null);
      expect(r.target).to.equal('/merchant/recharge');
      expect(Object.keys(JSON.parse(r.body.toString())).sort()).to.deep.equal(EVENT_FIELDS);
    }
    const evs = events(settled.id);
    expect(evs.map((e) => e.txStatus)).to.deep.equal(['PENDING', 'CONFIRMED', 'SETTLED']);
    expect(evs[0]).to.deep.include({ event: 'recharge', applicationId: app.id, chainId: ETH_TEST_CHAIN_ID, chainTokenId: ETH_TEST_CHAIN_ID * 100, address: to, amount: '1.5', txHash, confirmations: 1, minConfirmations: MIN_CONF });
    expect(evs[1]).to.deep.include({ confirmations: MIN_CONF, minConfirmations: MIN_CONF });
    expect(evs[2]).to.deep.include({ confirmations: -1, minConfirmations: -1, blockHeight: pending.blockHeight });
    const detail = expectOk(await client.get(`${RECHARGE_GET}?id=${settled.id}`)) as Recharge;
    expect(Object.keys(detail).sort()).to.deep.equal(RECHARGE_FIELDS);
    expect(detail).to.include({ id: settled.id, txStatus: 'SETTLED', chainCode: 'ETH', tokenSymbol: 'ETH', amount: '1.5' });
  });

  it('an ERC-20 deposit of a listed token is credited with the token\'s id and exact amount; unknown tokens and amounts under the minimum are not', async () => {
    const to = await userAddress('bob');
    const listed = await transferErc20(anvil.url, token, to, 250n * ETHER + ETHER / 2n);
    const unknown = await transferErc20(anvil.url, otherToken, to, 5n * ETHER);
    const dust = await transferErc20(anvil.url, token, to, ETHER / 2n); // minDeposit "1"
    await mine(anvil.url, MIN_CONF);
    const r = await waitStatus(listed, 'SETTLED');
    expect(r).to.include({ chainTokenId: TOKEN_ID, tokenSymbol: 'TUSD', amount: '250.5', address: to });
    expect(r.position).to.be.at.least(0);
    await caughtUp();
    expect(await byTx(unknown)).to.deep.equal([]);
    expect(await byTx(dust)).to.deep.equal([]);
  });

  it('several deposits in one block (native and token, several users) are each recorded once', async () => {
    const [a, b, c] = [await userAddress('carol'), await userAddress('dave'), await userAddress('erin')];
    await setAutomine(anvil.url, false);
    let hashes: string[];
    try {
      hashes = [
        await sendNative(anvil.url, a, ETHER),
        await sendNative(anvil.url, b, 2n * ETHER),
        await transferErc20(anvil.url, token, c, 7n * ETHER),
        await transferErc20(anvil.url, token, a, 8n * ETHER),
      ];
      await mine(anvil.url, 1);
    } finally {
      await setAutomine(anvil.url, true);
    }
    await mine(anvil.url, MIN_CONF);
    const rows = await Promise.all(hashes.map((h) => waitStatus(h, 'SETTLED')));
    expect(new Set(rows.map((r) => r.blockHeight)).size).to.equal(1);
    expect(rows.map((r) => r.amount)).to.deep.equal(['1', '2', '7', '8']);
    expect(rows.map((r) => r.externalUserId)).to.deep.equal(['carol', 'dave', 'erin', 'carol']);
  });

  it('several ERC-20 deposits in one transaction (three Transfer logs of a listed token, two users) are each recorded once, keyed by log index', async () => {
    const [a, b] = [await userAddress('gina'), await userAddress('hank')];
    const hash = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [{
      from: DEV_ACCOUNT, to: multiToken, data: batchCalldata([[a, 1_500_000n], [b, 2_000_001n], [a, 3n]]),
    }]);
    const receipt = await waitForReceipt<{ status: string; logs: Array<{ logIndex: string; topics: string[] }> }>(anvil.url, hash);
    expect(receipt.status).to.equal('0x1');
    expect(receipt.logs.map((l) => l.topics[0]), 'three ERC-20 Transfer logs').to.deep.equal(Array(3).fill(`0x${TRANSFER_TOPIC}`));
    await mine(anvil.url, MIN_CONF);
    const r = await pollUntil(() => byTx(hash), (rows) => rows.length === 3 && rows.every((x) => x.txStatus === 'SETTLED'), 30_000, 100);
    expect(r.ok, JSON.stringify(r.result)).to.equal(true);
    const rows = [...r.result].sort((x, y) => x.position - y.position);
    expect(rows.map((x) => x.position)).to.deep.equal(receipt.logs.map((l) => Number(l.logIndex)));
    expect(rows.map((x) => [x.externalUserId, x.address, x.amount, x.chainTokenId, x.tokenSymbol])).to.deep.equal([
      ['gina', a, '1.5', MULTI_TOKEN_ID, 'MLOG'],
      ['hank', b, '2.000001', MULTI_TOKEN_ID, 'MLOG'],
      ['gina', a, '0.000003', MULTI_TOKEN_ID, 'MLOG'],
    ]);
    for (const row of rows) {
      await waitEvents(row.id, ['PENDING', 'CONFIRMED', 'SETTLED']);
      const evs = events(row.id);
      expect(evs.map((e) => e.txStatus)).to.have.members(['PENDING', 'CONFIRMED', 'SETTLED']);
      expect(evs.every((e) => e.amount === row.amount && e.txHash === hash && e.chainTokenId === MULTI_TOKEN_ID)).to.equal(true);
    }
  });

  for (let depth = 1; depth < MIN_CONF; depth++) {
    it(`reorg of depth ${depth} dropping the deposit: never SETTLED, ends FAILED with a callback`, async () => {
      const to = await userAddress(`dropped-${depth}`);
      const txHash = await sendNative(anvil.url, to, ETHER / 10n);
      if (depth > 1) await mine(anvil.url, depth - 1); // the deposit's block is now `depth` deep
      const seen = await waitStatus(txHash, 'PENDING');
      expect(seen.confirmations).to.be.below(MIN_CONF);
      // replace the last `depth` blocks with as many blocks holding an unrelated transaction
      await anvilRpc(anvil.url, 'anvil_reorg', [depth, []]);
      // the node forgot the transaction? (anvil drops the replaced blocks' transactions)
      const after = await anvilRpc<unknown>(anvil.url, 'eth_getTransactionByHash', [txHash]);
      expect(after, 'anvil kept the dropped transaction').to.equal(null);
      // the scanner notices the reorg on its next poll; the deposit fails once dropAfterBlocks
      // (the chain's confirmations) have been mined after that
      const gone = await pollUntil(async () => {
        await mine(anvil.url, 1);
        return byTx(txHash);
      }, (rows) => rows[0]?.txStatus === 'FAILED', 30_000, 200);
      expect(gone.ok, JSON.stringify(gone.result)).to.equal(true);
      const failed = gone.result[0]!;
      expect(failed.blockHash).to.equal(null);
      await waitEvents(failed.id, ['PENDING', 'FAILED']);
      expect(events(failed.id).map((e) => e.txStatus)).to.deep.equal(['PENDING', 'FAILED']);
      const rows = await q<{ n: number }>('SELECT count(*)::int AS n FROM recharge_notices WHERE recharge_id = $1 AND tx_status IN ($2, $3)', [failed.id, 'CONFIRMED', 'SETTLED']);
      expect(rows[0]!.n).to.equal(0);
    });

    it(`reorg of depth ${depth} with the deposit mined again in a new block: one record, confirmations from the new block, SETTLED once`, async () => {
      const to = await userAddress(`remined-${depth}`);
      const txHash = await sendNative(anvil.url, to, ETHER / 5n, { fromPrivateKey: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' });
      const raw = await anvilRpc<string>(anvil.url, 'eth_getRawTransactionByHash', [txHash]);
      if (depth > 1) await mine(anvil.url, depth - 1);
      const before = await waitStatus(txHash, 'PENDING');
      // the replacement chain carries the very same signed transaction in its first block
      await anvilRpc(anvil.url, 'anvil_reorg', [depth, [[raw, 0]]]);
      const mined = await anvilRpc<{ blockHash: string; blockNumber: string } | null>(anvil.url, 'eth_getTransactionByHash', [txHash]);
      expect(mined?.blockHash, 'anvil re-mined the transaction').to.be.a('string');
      expect(mined!.blockHash).to.not.equal(before.blockHash);
      const moved = await pollUntil(() => byTx(txHash), (rows) => rows.length === 1 && rows[0]!.blockHash === mined!.blockHash, 30_000, 100);
      expect(moved.ok, JSON.stringify(moved.result)).to.equal(true);
      const again = moved.result[0]!;
      expect(again).to.include({ id: before.id, txStatus: 'PENDING', blockHeight: Number(BigInt(mined!.blockNumber)) });
      // counting from the new block: CONFIRMED/SETTLED only once it is minConfirmations deep
      const depthNow = Number((await tip()) - BigInt(mined!.blockNumber)) + 1;
      expect(again.confirmations).to.equal(depthNow);
      if (depthNow < MIN_CONF) await mine(anvil.url, MIN_CONF - depthNow);
      const settled = await waitStatus(txHash, 'SETTLED');
      expect(settled.id).to.equal(before.id);
      const all = (await list()).filter((r) => r.address === to);
      expect(all, JSON.stringify(all)).to.have.length(1);
      await waitEvents(settled.id, ['PENDING', 'CONFIRMED', 'SETTLED']);
      expect(events(settled.id).map((e) => e.txStatus)).to.deep.equal(['PENDING', 'CONFIRMED', 'SETTLED']);
    });
  }

  it('a reorg deeper than the safe depth that removes a SETTLED deposit\'s block: the record is left as it is and an operator alert is raised', async () => {
    const to = await userAddress('deep-reorg');
    const txHash = await sendNative(anvil.url, to, ETHER / 4n);
    await mine(anvil.url, MIN_CONF);
    const settled = await waitStatus(txHash, 'SETTLED');
    await caughtUp();
    const depth = Number((await tip()) - BigInt(settled.blockHeight!)) + 1; // back to just below its block
    await anvilRpc(anvil.url, 'anvil_reorg', [depth, []]);
    expect(await anvilRpc<unknown>(anvil.url, 'eth_getTransactionByHash', [txHash])).to.equal(null);
    const alert = await pollUntil(
      () => q<{ kind: string; details: { recharges: Array<{ id: string }> } }>(`SELECT kind, details FROM operator_alerts WHERE kind = 'REORG_CREDITED_DEPOSIT' ORDER BY id DESC LIMIT 1`),
      (rows) => rows.length === 1 && rows[0]!.details.recharges.some((r) => Number(r.id) === settled.id),
      30_000, 100,
    );
    expect(alert.ok, JSON.stringify(alert.result)).to.equal(true);
    await mine(anvil.url, MIN_CONF + 2);
    await caughtUp();
    const after = (await byTx(txHash))[0]!;
    expect(after).to.include({ id: settled.id, txStatus: 'SETTLED', blockHash: settled.blockHash });
    expect(events(settled.id).map((e) => e.txStatus)).to.deep.equal(['PENDING', 'CONFIRMED', 'SETTLED']);
  });

  it('a scanner restarted in the middle of a catch-up misses nothing and duplicates nothing', async () => {
    const targets: string[] = [];
    for (let i = 0; i < 12; i++) targets.push(await userAddress(`restart-${i}`));
    await svc.stop();
    // 12 deposits in 18 blocks while no scanner runs
    const expected: string[] = [];
    for (let i = 0; i < 12; i++) {
      expected.push(await sendNative(anvil.url, targets[i]!, ETHER / 100n + BigInt(i)));
      await mine(anvil.url, 1);
    }
    await mine(anvil.url, 6);
    // a scanner that reads 2 blocks per range, 1 range at a time: slow enough to stop midway
    svc = await WcsService.start(testConfig(db.url, serviceEnv({ WCS_SCAN_BATCH_BLOCKS: '2', WCS_SCAN_CONCURRENCY: '1', WCS_SCAN_POLL_MS: '200' })), testLogger(), { api: true, workers: true });
    const target = await tip();
    const start = await cursor();
    const mid = await pollUntil(cursor, (h) => h >= start + 6n, 30_000, 5);
    expect(mid.ok).to.equal(true);
    await svc.stop();
    const stoppedAt = await cursor();
    expect(stoppedAt < target, `stopped at ${stoppedAt}, tip ${target}`).to.equal(true);
    svc = await WcsService.start(testConfig(db.url, serviceEnv()), testLogger(), { api: true, workers: true });
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    await caughtUp();
    for (const h of expected) await waitStatus(h, 'SETTLED');
    const dups = await q('SELECT tx_hash, position, count(*)::int AS n FROM recharges GROUP BY 1, 2 HAVING count(*) > 1');
    expect(dups).to.deep.equal([]);
  });

  it('nothing is credited twice across the whole run: one record per transfer, one callback task per (record, txStatus)', async () => {
    const tasks = await q<{ biz_id: string; body: Buffer }>(`SELECT biz_id, body FROM callback_tasks WHERE biz_type = 'RECHARGE'`);
    const keys = tasks.map((t) => {
      const e = JSON.parse(Buffer.from(t.body).toString('utf8')) as RechargeEvent;
      return `${e.event}:${e.id}:${e.txStatus}`;
    });
    expect(new Set(keys).size).to.equal(keys.length);
    const orphans = await q(`SELECT id FROM recharges WHERE block_hash IS NULL AND tx_status = 'SETTLED'`);
    expect(orphans).to.deep.equal([]);
  });

  it('recharge/get and recharge/list: validation, scoping to the caller, filters', async () => {
    expectError(await client.get(`${RECHARGE_GET}?id=abc`), 400, Codes.INVALID_PARAMETER, 'id');
    expectError(await client.get(RECHARGE_GET), 400, Codes.INVALID_PARAMETER, 'id');
    expectError(await client.get(`${RECHARGE_GET}?id=1&x=1`), 400, Codes.INVALID_PARAMETER, 'x');
    const mine1 = (await list({ externalUserId: 'alice' }))[0]!;
    const stranger = await svc.storage.applications.create(TEST_ACTOR, { name: 'stranger', environment: 'test', chains: ['ETH'] });
    const other = new SigningClient(svc.url, { apiKey: stranger.apiKey, apiSecret: stranger.apiSecret });
    expectError(await other.get(`${RECHARGE_GET}?id=${mine1.id}`), 200, 1006001001);
    expect((expectOk(await other.get(RECHARGE_LIST)) as { total: number }).total).to.equal(0);
    const settled = await list({ txStatus: 'SETTLED', chainCode: 'ETH' });
    expect(settled.length).to.be.greaterThan(5);
    expect(settled.every((r) => r.txStatus === 'SETTLED')).to.equal(true);
    const failed = await list({ txStatus: 'FAILED' });
    expect(failed.length).to.be.at.least(MIN_CONF - 1);
    const byAddress = await list({ address: mine1.address });
    expect(byAddress.every((r) => r.address === mine1.address)).to.equal(true);
    expectError(await client.get(`${RECHARGE_LIST}?txStatus=DONE`), 400, Codes.INVALID_PARAMETER, 'txStatus');
    expectError(await client.get(`${RECHARGE_LIST}?startTime=2026-01-02T00:00:00&endTime=2026-01-01T00:00:00`), 400, Codes.INVALID_PARAMETER, 'endTime');
    expectError(await client.get(`${RECHARGE_LIST}?pageSize=201`), 400, Codes.INVALID_PARAMETER, 'pageSize');
    const future = await list({ startTime: '2999-01-01T00:00:00' });
    expect(future).to.deep.equal([]);
  });
});

/**
 * Init code of a contract whose every call emits `n` ERC-20 Transfer logs from the caller:
 * Transfer(caller, to_i, amount_i) with (to_i, amount_i) the i-th pair of 32-byte words of the
 * calldata (batchCalldata). Hand-assembled EVM bytecode: no compiler needed. Listed as a token,
 * it stands for a batch-payout contract paying several deposit addresses in one transaction.
 */
function batchEmitterInitCode(n: number): string {
  const push1 = (v: number) => '60' + v.toString(16).padStart(2, '0');
  let runtime = '';
  for (let i = 0; i < n; i++) {
    runtime += push1(64 * i + 32) + '35' + push1(0) + '52'; // CALLDATALOAD amount, MSTORE at 0
    runtime += push1(64 * i) + '35' + '33' + '7f' + TRANSFER_TOPIC + push1(32) + push1(0) + 'a3'; // to, CALLER, topic0, size, offset, LOG3
  }
  runtime += '00'; // STOP
  const len = (runtime.length / 2).toString(16).padStart(4, '0');
  // PUSH2 len, DUP1, PUSH2 13 (the runtime's offset), PUSH1 0, CODECOPY, PUSH1 0, RETURN
  return '0x61' + len + '80' + '61000d' + '6000' + '39' + '6000' + 'f3' + runtime;
}

function batchCalldata(pairs: ReadonlyArray<readonly [string, bigint]>): string {
  return '0x' + pairs.map(([to, amount]) => to.slice(2).toLowerCase().padStart(64, '0') + amount.toString(16).padStart(64, '0')).join('');
}
