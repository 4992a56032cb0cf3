/**
 * Withdrawals signed by the PKCS#11 key store (a SoftHSM2 token, the same backend a security team
 * swaps in for an HSM) on a real EVM node (anvil): the hot wallet's key is generated on the token
 * and recorded in custody_keys (purpose hot); a native and an ERC-20 withdrawal are signed there
 * (SoftHSM gives high-S signatures about half the time: the key store normalises them), mined
 * from the hot address, and arrive exactly.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { anvilRpc, deployErc20, erc20Balance, mintErc20, sendNative, startAnvil, startBlockClock, type AnvilDevnet, type BlockClock } from '@wcs/adapter-evm/devnet';
import type { CreatedApplication } from '@wcs/server';
import { startTestService, type TestService } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { freshEvmAddress, settleOnAnvil, waitForFunded, waitForHotWallet } from './support/payouts';
import { expectOk, pollUntil } from './support/expect';
import { createTestToken, type TestToken } from './support/softhsm';
import { tempDir } from './support/temp';

const CREATE = '/api/v1/wallet/withdraw/create';
const ETH_TEST_CHAIN_ID = 102;
const ETH_TOKEN_ID = 10200;
const TOKEN_ID = 10299;
const ETHER = 10n ** 18n;

describe('withdrawals signed by the PKCS#11 key store (SoftHSM2) on anvil', function () {
  this.timeout(240_000);
  let anvil: AnvilDevnet;
  let clock: BlockClock;
  let token: string;
  let hsm: TestToken;
  let svc: TestService;
  let app: CreatedApplication;
  let client: SigningClient;
  let hot: string;
  const q = async <R>(sql: string, bind: unknown[] = []) => (await svc.service.storage.database.sequelize.query(sql, { bind }))[0] as R[];
  const fresh = freshEvmAddress;
  const settle = (id: number) => settleOnAnvil<{ status: string; txHash: string | null; fromAddress: string }>(client, anvil.url, id);

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    clock = await startBlockClock(anvil.url, 100); // the worker's batched sends: see startBlockClock
    token = await deployErc20(anvil.url, { name: 'Test USD', symbol: 'TUSD' });
    const config = path.join(tempDir('wcs-wd-hsm-'), 'config.json');
    fs.writeFileSync(config, JSON.stringify({ tokens: [{ id: TOKEN_ID, chainCode: 'ETH', environment: 'test', symbol: 'TUSD', name: 'Test USD (anvil)', contract: token, decimals: 18 }] }));
    hsm = createTestToken();
    const { SOFTHSM2_CONF: _conf, ...tokenEnv } = hsm.env;
    svc = await startTestService({
      env: {
        ...tokenEnv, WCS_KEYSTORE_BACKEND: 'pkcs11', WCS_RPC_TEST_ETH: anvil.url, WCS_CONFIG: config,
        WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '500',
      },
    });
    app = await svc.createApp({ chains: ['ETH'] });
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    hot = await waitForHotWallet(q, app.id, ETH_TEST_CHAIN_ID);
    await sendNative(anvil.url, hot, 50n * ETHER);
    await mintErc20(anvil.url, token, hot, 1000n * ETHER);
    await waitForFunded(q, app.id, [ETH_TOKEN_ID, TOKEN_ID]);
    await pollUntil(() => q('SELECT 1 FROM withdraw_fee_quotes WHERE chain_id = $1 AND chain_token_id = $2', [ETH_TEST_CHAIN_ID, TOKEN_ID]), (rows) => rows.length === 1, 30_000, 100);
  });

  after(async () => {
    await svc?.stop();
    await clock?.stop();
    await anvil?.stop();
  });

  it('the hot key is generated on the token and recorded as purpose hot', async () => {
    const keys = await q<{ purpose: string; backend: string; namespace: string; application_id: number }>(
      `SELECT purpose, backend, namespace, application_id FROM custody_keys WHERE purpose = 'hot'`);
    expect(keys).to.deep.equal([{ purpose: 'hot', backend: 'pkcs11', namespace: 'evm', application_id: app.id }]);
  });

  it('a native and an ERC-20 withdrawal are signed in the HSM, sent from the hot address, and arrive exactly', async () => {
    const toNative = fresh();
    const toToken = fresh();
    const a = expectOk(await client.post(CREATE, { appOrderNo: 'hsm-native', chainCode: 'ETH', chainTokenId: ETH_TOKEN_ID, toAddress: toNative, amount: '0.75' })) as { id: number };
    const b = expectOk(await client.post(CREATE, { appOrderNo: 'hsm-token', chainCode: 'ETH', chainTokenId: TOKEN_ID, toAddress: toToken, amount: '12.000000000000000001' })) as { id: number };
    for (const [id, check] of [
      [a.id, async () => expect(BigInt(await anvilRpc<string>(anvil.url, 'eth_getBalance', [toNative, 'latest']))).to.equal(3n * ETHER / 4n)],
      [b.id, async () => expect(await erc20Balance(anvil.url, token, toToken)).to.equal(12n * ETHER + 1n)],
    ] as const) {
      const done = await settle(id);
      const tx = await anvilRpc<{ from: string }>(anvil.url, 'eth_getTransactionByHash', [done.txHash]);
      expect(tx.from.toLowerCase()).to.equal(hot.toLowerCase());
      expect(done.fromAddress).to.equal(hot);
      await check();
    }
  });
});
