import { expect } from 'chai';
import { isWcsError } from '@wcs/core';
import { openStorage, type StorageHandle } from '../service';
import { createTestDatabase, testConfig, testLogger, TEST_ACTOR, type TestDatabase } from '../testing';
import { AuditLog } from '../operators/audit';
import { setSettlementMode, settlementMode, settlementModes } from './settlement';

async function refused(p: Promise<unknown>, name: string): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(isWcsError(e), String(e)).to.equal(true);
    expect((e as { errorName: string }).errorName).to.equal(name);
    return (e as Error).message;
  }
  return expect.fail('expected a refusal');
}

describe('settlement mode: setSettlementMode (wcs collect settlement and the console)', () => {
  let db: TestDatabase;
  let storage: StorageHandle;
  before(async () => {
    db = await createTestDatabase();
    storage = await openStorage(testConfig(db.url), testLogger());
  });
  after(async () => {
    await storage.close();
    await db.drop();
  });

  const sequelize = () => storage.database.sequelize;
  const entries = () => new AuditLog(sequelize()).list({ limit: 100, action: 'app.settlement.set' });

  it('refuses an unknown mode or application, writing nothing', async () => {
    const a = await storage.applications.create(TEST_ACTOR, { name: 'S0', environment: 'test', chains: ['ETH'] });
    expect(await refused(setSettlementMode(sequelize(), TEST_ACTOR, a.id, 'LATER'), 'INVALID_PARAMETER')).to.include('ON_CONFIRM, PASS_THROUGH');
    expect(await refused(setSettlementMode(sequelize(), TEST_ACTOR, 99999, 'PASS_THROUGH'), 'APPLICATION_NOT_FOUND')).to.match(/No application 99999; applications: \d+/);
    expect(await settlementMode(sequelize(), a.id)).to.equal('ON_CONFIRM');
    expect(await entries()).to.deep.equal([]);
  });

  it('PASS_THROUGH: changes the mode, audits before and after, and notes the missing MERCHANT addresses and the enabled policies; the same mode again writes no entry', async () => {
    const a = await storage.applications.create(TEST_ACTOR, { name: 'S1', environment: 'test', chains: ['ETH', 'BTC', 'SOL'] });
    await sequelize().query(`INSERT INTO collection_addresses (application_id, chain_id, kind, address) SELECT $1, id, 'MERCHANT', 'merchant-eth' FROM chains WHERE environment = 'test' AND code = 'ETH'`, { bind: [a.id] });
    const r = await setSettlementMode(sequelize(), TEST_ACTOR, a.id, 'PASS_THROUGH');
    expect(r).to.deep.equal({
      applicationId: a.id, settlementMode: 'PASS_THROUGH', previousSettlementMode: 'ON_CONFIRM',
      notes: [
        'no MERCHANT address on BTC, SOL: sweeps there wait (wcs collect address set --kind MERCHANT)',
        'deposits settle only once collected: tokens without an enabled policy stay CONFIRMED (enabled policies: none)',
      ],
    });
    expect(await settlementMode(sequelize(), a.id)).to.equal('PASS_THROUGH');
    expect((await settlementModes(sequelize())).get(a.id)).to.equal('PASS_THROUGH');
    const [e] = await entries();
    expect(e).to.deep.include({ actor: 'test', action: 'app.settlement.set', target: `app:${a.id}`, before: { settlementMode: 'ON_CONFIRM' }, after: { settlementMode: 'PASS_THROUGH' } });

    const again = await setSettlementMode(sequelize(), TEST_ACTOR, a.id, 'PASS_THROUGH');
    expect(again.previousSettlementMode).to.equal('PASS_THROUGH');
    expect((await entries()).length).to.equal(1);
  });

  it('back to ON_CONFIRM: audited; no CONFIRMED deposits waiting, no notes', async () => {
    const a = await storage.applications.create(TEST_ACTOR, { name: 'S2', environment: 'test', chains: ['ETH'] });
    await setSettlementMode(sequelize(), TEST_ACTOR, a.id, 'PASS_THROUGH');
    const r = await setSettlementMode(sequelize(), TEST_ACTOR, a.id, 'ON_CONFIRM');
    expect(r).to.deep.equal({ applicationId: a.id, settlementMode: 'ON_CONFIRM', previousSettlementMode: 'PASS_THROUGH', notes: [] });
    expect((await entries())[0]).to.deep.include({ target: `app:${a.id}`, before: { settlementMode: 'PASS_THROUGH' }, after: { settlementMode: 'ON_CONFIRM' } });
  });
});
