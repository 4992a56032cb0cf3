/**
 * Deposits no transaction scan sees, on a real EVM node (anvil, which serves call traces): a
 * contract wallet (written here in Solidity, compiled with npm solc) pays a deposit address issued
 * by the API with a CALL carrying value. The service's scanner worker credits it from the block's
 * trace through the same states, confirmations, reorg handling and RECHARGE callbacks as any
 * deposit, the callbacks carrying the outer transaction's hash; a reorg of its block before its
 * confirmations credits nothing; with the chain's option traces "off" the scan does not see it
 * (reconciliation's part, docs/deposits.md). `wcs chains` says which trace API each EVM chain's
 * scanner uses.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { anvilRpc, mine, startAnvil, waitForReceipt, type AnvilDevnet } from '@wcs/adapter-evm/devnet';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testEnv, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { expectOk, pollUntil } from './support/expect';
import { cliJson, runCli } from './support/processes';
import { ADDRESS_CREATE, EVENT_FIELDS, RECHARGE_LIST, type Recharge, type RechargeEvent } from './support/recharge-types';
import { tempDir } from './support/temp';

/** The test-network ETH chain of the built-in catalogue (Sepolia definition), scanned on anvil. */
const ETH_TEST_CHAIN_ID = 102;
const MIN_CONF = 3;
/** anvil's first dev account (unlocked: eth_sendTransaction signs for it). */
const DEV_ACCOUNT = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const ETHER = 10n ** 18n;
/** The built-in test ETH entry (server/src/catalogue/default-catalogue.ts) with the option that turns traces off. */
const ETH_TRACES_OFF = {
  id: ETH_TEST_CHAIN_ID, code: 'ETH', name: 'Ethereum Sepolia', family: 'evm', environment: 'test', network: 'sepolia', nativeSymbol: 'ETH', decimals: 18,
  confirmations: MIN_CONF, evmChainId: 11155111, options: { traces: 'off' },
};

/** A contract wallet that forwards ETH with CALL, as smart-contract wallets and batch payout contracts pay. */
const WALLET_SOURCE = `// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;
contract Wallet {
  receive() external payable {}
  function pay(address payable to, uint256 amount) external {
    (bool ok, ) = to.call{value: amount}("");
    require(ok, "pay failed");
  }
}
`;

function compileWallet(): { bytecode: string; paySelector: string } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const solc = require('solc') as { compile(input: string): string };
  const out = JSON.parse(solc.compile(JSON.stringify({
    language: 'Solidity',
    sources: { 'Wallet.sol': { content: WALLET_SOURCE } },
    settings: { evmVersion: 'cancun', outputSelection: { '*': { Wallet: ['evm.bytecode.object', 'evm.methodIdentifiers'] } } },
  }))) as { errors?: Array<{ severity: string; formattedMessage: string }>; contracts: Record<string, Record<string, { evm: { bytecode: { object: string }; methodIdentifiers: Record<string, string> } }>> };
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const evm = out.contracts['Wallet.sol']!.Wallet!.evm;
  return { bytecode: `0x${evm.bytecode.object}`, paySelector: evm.methodIdentifiers['pay(address,uint256)']! };
}

describe('internal transfers credited from call traces on anvil (contract wallet, confirmations, reorg, traces off, wcs chains)', function () {
  this.timeout(240_000);
  let anvil: AnvilDevnet;
  let db: TestDatabase;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let pool: Pool;
  let wallet: string;
  let paySelector: string;
  let configOn: string;
  let configOff: string;
  const receiver = new CallbackReceiver();

  const serviceEnv = (configFile: string) => ({
    WCS_RPC_TEST_ETH: anvil.url,
    WCS_SCAN_POLL_MS: '50',
    WCS_CALLBACK_POLL_MS: '50',
    WCS_CALLBACK_ALLOW_PRIVATE: '1',
    WCS_CONFIG: configFile,
  });
  const start = async (configFile: string) => {
    svc = await WcsService.start(testConfig(db.url, serviceEnv(configFile)), testLogger(), { api: true, workers: true });
  };
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const tip = async () => BigInt(await anvilRpc<string>(anvil.url, 'eth_blockNumber'));
  const cursor = async () => {
    const r = (await q<{ height: string | null }>('SELECT height::text AS height FROM scan_cursors WHERE chain_id = $1', [ETH_TEST_CHAIN_ID]))[0];
    return r?.height ? BigInt(r.height) : -1n;
  };
  const caughtUp = async () => {
    const t = await tip();
    const r = await pollUntil(cursor, (h) => h >= t, 30_000);
    expect(r.ok, `scanner at ${r.result}, tip ${t}`).to.equal(true);
  };
  const byTx = async (txHash: string): Promise<Recharge[]> =>
    (expectOk(await client.get(`${RECHARGE_LIST}?pageSize=200`)) as { list: Recharge[] }).list.filter((r) => r.txHash === txHash);
  const userAddress = async (user: string): Promise<string> =>
    (expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'ETH', externalUserId: user })) as { address: string }).address;
  const events = (id: number): RechargeEvent[] =>
    receiver.received.map((r) => JSON.parse(r.body.toString('utf8')) as RechargeEvent).filter((e) => e.event === 'recharge' && e.id === id);
  const waitStatus = async (txHash: string, status: string): Promise<Recharge> => {
    const r = await pollUntil(() => byTx(txHash), (rows) => rows.length === 1 && rows[0]!.txStatus === status, 30_000, 100);
    expect(r.ok, `${txHash}: ${JSON.stringify(r.result)}`).to.equal(true);
    return r.result[0]!;
  };
  /** The wallet pays `to` with an internal transfer; resolves with the outer transaction's hash once mined. */
  const walletPays = async (to: string, amount: bigint): Promise<string> => {
    const data = `0x${paySelector}${to.slice(2).toLowerCase().padStart(64, '0')}${amount.toString(16).padStart(64, '0')}`;
    const hash = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [{ from: DEV_ACCOUNT, to: wallet, data, gas: '0x30000' }]);
    const r = await waitForReceipt<{ status: string }>(anvil.url, hash);
    expect(r.status, 'the wallet paid').to.equal('0x1');
    return hash;
  };
  const chainsJson = async (configFile: string) => {
    const env = { ...process.env, ...testEnv(db.url), WCS_RPC_TEST_ETH: anvil.url, WCS_CONFIG: configFile };
    const args = ['chains', '--env', 'test', '--json'];
    return cliJson(args, await runCli(args, env)) as Array<{ code: string; deposits: string; traces: string | null }>;
  };

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 }); // the catalogue's test ETH (Sepolia) id: the scanner checks it
    const compiled = compileWallet();
    paySelector = compiled.paySelector;
    const deployed = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [{ from: DEV_ACCOUNT, data: compiled.bytecode }]);
    wallet = (await waitForReceipt<{ contractAddress: string }>(anvil.url, deployed)).contractAddress;
    await anvilRpc(anvil.url, 'eth_sendTransaction', [{ from: DEV_ACCOUNT, to: wallet, value: `0x${(100n * ETHER).toString(16)}` }]);
    const dir = tempDir('wcs-dep-int-');
    configOn = path.join(dir, 'config.json');
    configOff = path.join(dir, 'config-traces-off.json');
    fs.writeFileSync(configOn, JSON.stringify({}));
    fs.writeFileSync(configOff, JSON.stringify({ chains: [ETH_TRACES_OFF] }));
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    await start(configOn);
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'internal', environment: 'test', chains: ['ETH'] });
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

  it('wcs chains says the ETH scanner reads internal transfers from debug_traceBlockByNumber (anvil serves it), and nothing for chains not scanned', async () => {
    const chains = await chainsJson(configOn);
    const eth = chains.find((c) => c.code === 'ETH')!;
    expect(eth).to.include({ deposits: 'ENABLED', traces: 'debug_traceBlockByNumber' });
    expect(chains.find((c) => c.code === 'BTC')).to.include({ deposits: 'NO_RPC', traces: null });
  });

  it('a contract wallet\'s CALL with value to a deposit address: PENDING, CONFIRMED, SETTLED with signed callbacks carrying the outer transaction\'s hash', async () => {
    const to = await userAddress('carol');
    const txHash = await walletPays(to, 5n * ETHER / 4n);
    const pending = await waitStatus(txHash, 'PENDING');
    expect(pending).to.include({ chainCode: 'ETH', tokenSymbol: 'ETH', amount: '1.25', address: to, externalUserId: 'carol', position: -2, minConfirmations: MIN_CONF, txHash });
    expect(pending.fromAddress?.toLowerCase()).to.equal(wallet.toLowerCase());
    expect(pending.confirmations).to.equal(1);
    await mine(anvil.url, MIN_CONF - 1);
    const settled = await waitStatus(txHash, 'SETTLED');
    const r = await pollUntil(async () => events(settled.id).map((e) => e.txStatus), (s) => s.length >= 3, 30_000, 100);
    expect(r.result).to.deep.equal(['PENDING', 'CONFIRMED', 'SETTLED']);
    for (const e of events(settled.id)) expect(e).to.include({ txHash, amount: '1.25', address: to, chainId: ETH_TEST_CHAIN_ID });
    for (const got of receiver.received.filter((x) => (JSON.parse(x.body.toString()) as RechargeEvent).id === settled.id)) {
      expect(verifyCallback(got, app.apiKey, app.apiSecret)).to.equal(null);
      expect(Object.keys(JSON.parse(got.body.toString())).sort()).to.deep.equal(EVENT_FIELDS);
    }
    expect((await byTx(txHash)).length, 'one record for the transaction').to.equal(1);
  });

  it('a reorg that removes the block before its confirmations credits nothing: FAILED, never a CONFIRMED or SETTLED callback', async () => {
    const to = await userAddress('dave');
    const txHash = await walletPays(to, ETHER / 10n);
    const seen = await waitStatus(txHash, 'PENDING');
    expect(seen.position).to.equal(-2);
    await anvilRpc(anvil.url, 'anvil_reorg', [1, []]);
    expect(await anvilRpc<unknown>(anvil.url, 'eth_getTransactionByHash', [txHash]), 'anvil dropped the transaction').to.equal(null);
    const gone = await pollUntil(async () => {
      await mine(anvil.url, 1);
      return byTx(txHash);
    }, (rows) => rows[0]?.txStatus === 'FAILED', 30_000, 200);
    expect(gone.ok, JSON.stringify(gone.result)).to.equal(true);
    const failed = gone.result[0]!;
    const r = await pollUntil(async () => events(failed.id).map((e) => e.txStatus), (s) => s.includes('FAILED'), 30_000, 100);
    expect(r.result).to.deep.equal(['PENDING', 'FAILED']);
    const rows = await q<{ n: number }>('SELECT count(*)::int AS n FROM recharge_notices WHERE recharge_id = $1 AND tx_status IN ($2, $3)', [failed.id, 'CONFIRMED', 'SETTLED']);
    expect(rows[0]!.n).to.equal(0);
  });

  it('with the chain option traces "off", the scan does not credit the same payment (a direct transfer still is), and wcs chains says off', async () => {
    await svc.stop();
    await start(configOff);
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    const to = await userAddress('erin');
    const internal = await walletPays(to, ETHER / 5n);
    const direct = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [{ from: DEV_ACCOUNT, to, value: `0x${(ETHER / 8n).toString(16)}` }]);
    await waitForReceipt(anvil.url, direct);
    await mine(anvil.url, MIN_CONF);
    await waitStatus(direct, 'SETTLED');
    await caughtUp();
    expect(await byTx(internal), 'not seen by the scan with traces off').to.deep.equal([]);
    expect(BigInt(await anvilRpc<string>(anvil.url, 'eth_getBalance', [to, 'latest'])), 'yet the address holds both').to.equal(ETHER / 5n + ETHER / 8n);
    expect((await chainsJson(configOff)).find((c) => c.code === 'ETH')).to.include({ traces: 'off' });
  });
});
