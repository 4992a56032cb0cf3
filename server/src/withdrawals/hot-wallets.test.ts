import { expect } from 'chai';
import { QueryTypes } from 'sequelize';
import type { AdapterRegistry, TransferNode } from '@wcs/core';
import { sendNative, startAnvil, type AnvilDevnet } from '@wcs/adapter-evm/devnet';
import { startTestService, testLogger, type TestService } from '../testing';
import { TOKENS } from '../container';
import type { KeyStoreSupervisor } from '../custody/keystore-supervisor';
import type { ChainView } from '../catalogue/catalogue';
import { HotWalletLedger, HotWallets } from './hot-wallets';

/**
 * The balance ledger on real Postgres and a real anvil. The one stand-in: a node wrapper that
 * holds a balance answer until the test lets it go, to make a slow reading finish after a newer
 * one (the interleaving of two worker processes, which cannot be caused reliably otherwise).
 */
describe('hot wallet ledger: a slow reading never overwrites a newer one (real Postgres, anvil)', function () {
  this.timeout(120_000);
  let anvil: AnvilDevnet;
  let svc: TestService;

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    svc = await startTestService({ env: { WCS_RPC_TEST_ETH: anvil.url, WCS_HOT_WALLET_REFRESH_MS: '3600000' }, workers: false });
  });
  after(async () => {
    await svc?.stop();
    await anvil?.stop();
  });

  it('a reading that began before the stored one is dropped: the ledger keeps the newer balance', async () => {
    const app = await svc.createApp({ chains: ['ETH'] });
    const c = svc.service.storage.container;
    const registry = c.resolve<AdapterRegistry>(TOKENS.AdapterRegistry);
    const store = c.resolve<KeyStoreSupervisor>(TOKENS.KeyStoreSupervisor).store;
    const sequelize = svc.service.storage.database.sequelize;
    const endpoints = svc.service.config.deposits.endpoints;
    const wallets = new HotWallets(sequelize, registry, store);

    let reached!: () => void;
    const atGate = new Promise<void>((r) => (reached = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    class SlowLedger extends HotWalletLedger {
      override node(chain: ChainView): TransferNode {
        const real = super.node(chain);
        const slow = Object.create(real) as TransferNode;
        // the balance is read now, answered only when the test says so
        slow.balance = async (address, contract) => {
          const v = await real.balance(address, contract);
          reached();
          await gate;
          return v;
        };
        return slow;
      }
    }
    const slow = new SlowLedger(sequelize, svc.service.storage.catalogue, registry, endpoints, wallets, store, testLogger());
    const fast = new HotWalletLedger(sequelize, svc.service.storage.catalogue, registry, endpoints, wallets, store, testLogger());
    const eth = fast.payoutChains().find((ch) => ch.code === 'ETH')!;
    const hot = await wallets.ensure(app.id, eth);
    const native = eth.tokens.find((t) => t.contract === null)!;

    const slowRefresh = slow.refresh(app.id, eth); // reads 0 and waits
    await atGate;
    await sendNative(anvil.url, hot.address, 10n ** 18n); // the hot wallet is funded meanwhile (automine)
    await fast.refresh(app.id, eth); // a newer reading: 1 ETH
    const read = async () =>
      (await sequelize.query<{ on_chain: string }>('SELECT on_chain::text AS on_chain FROM hot_wallet_balances WHERE hot_wallet_id = $1 AND chain_token_id = $2', {
        bind: [hot.id, native.id], type: QueryTypes.SELECT,
      }))[0]!.on_chain;
    expect(await read()).to.equal('1000000000000000000');
    release();
    await slowRefresh; // its reading of 0 began first: dropped
    expect(await read()).to.equal('1000000000000000000');
  });
});
