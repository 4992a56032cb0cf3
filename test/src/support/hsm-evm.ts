/**
 * The service with the PKCS#11 key store on a fresh SoftHSM2 token, on anvil (a block every
 * 100 ms) with an ERC-20 listed as test ETH's token 10299: what the collection tests signed by
 * the token (collection-hsm, collection-delegated-hsm) start from. Nothing is funded here.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { deployErc20, startAnvil, startBlockClock, type AnvilDevnet, type BlockClock } from '@wcs/adapter-evm/devnet';
import { startTestService, type TestService } from '@wcs/server/testing';
import { createTestToken, type TestToken } from './softhsm';
import { tempDir } from './temp';

export const HSM_TOKEN_ID = 10299;

export interface HsmEvm {
  readonly anvil: AnvilDevnet;
  readonly clock: BlockClock;
  /** The ERC-20's address. */
  readonly token: string;
  readonly hsm: TestToken;
  readonly svc: TestService;
  stop(): Promise<void>;
}

export async function startHsmEvm(label: string, chainId = 11155111): Promise<HsmEvm> {
  const anvil = await startAnvil({ chainId });
  const clock = await startBlockClock(anvil.url, 100);
  const token = await deployErc20(anvil.url, { name: 'Test USD', symbol: 'TUSD' });
  const config = path.join(tempDir(`wcs-${label}-`), 'config.json');
  fs.writeFileSync(config, JSON.stringify({ tokens: [{ id: HSM_TOKEN_ID, chainCode: 'ETH', environment: 'test', symbol: 'TUSD', name: 'Test USD (anvil)', contract: token, decimals: 18 }] }));
  const hsm = createTestToken();
  const { SOFTHSM2_CONF: _conf, ...tokenEnv } = hsm.env;
  const svc = await startTestService({
    env: {
      ...tokenEnv, WCS_KEYSTORE_BACKEND: 'pkcs11', WCS_RPC_TEST_ETH: anvil.url, WCS_CONFIG: config,
      WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '200', WCS_COLLECT_PLAN_MS: '300',
    },
  });
  return {
    anvil, clock, token, hsm, svc,
    async stop() {
      await svc.stop();
      await clock.stop();
      await anvil.stop();
    },
  };
}
