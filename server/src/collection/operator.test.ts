import { expect } from 'chai';
import { Client } from 'pg';
import { isWcsError } from '@wcs/core';
import { openStorage, type StorageHandle } from '../service';
import { TEST_ACTOR, createTestDatabase, testConfig, testLogger, type TestDatabase } from '../testing';
import type { AuditActor } from '../operators/audit';
import type { AdapterRegistry } from '@wcs/core';
import { TOKENS } from '../container';
import { CollectCommandError, CollectInputError, requestRun, setCollectionAddress, setPolicy } from './operator';
import { listItems, retryItem, retryRefusal } from './operator-items';
import { PolicyInputError } from './policy-input';

// default catalogue, test environment
const ETH_CHAIN = 102;
const USDC = 10202;

describe('collection operator functions: policy changes and retries audited in their transaction (real Postgres)', () => {
  let db: TestDatabase;
  let storage: StorageHandle;
  let pg: Client;
  let appId: number;
  const olga: AuditActor = { name: 'olga', role: 'operator', channel: 'console', source: '10.0.0.7' };
  const audit = async () => (await pg.query('SELECT actor, actor_role, channel, action, target, before, after FROM audit_log ORDER BY id')).rows;

  before(async () => {
    db = await createTestDatabase();
    storage = await openStorage(testConfig(db.url), testLogger());
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    appId = (await storage.applications.create(TEST_ACTOR, { name: 'collector', environment: 'test', chains: ['ETH', 'BTC'] })).id;
  });
  after(async () => {
    await pg?.end();
    await storage?.close();
    await db?.drop();
  });

  it('setPolicy: a new policy and a change each write one entry with before and after; a no-op and bad input write nothing', async () => {
    const sequelize = storage.database.sequelize;
    const start = (await audit()).length;
    const made = await setPolicy(sequelize, storage.catalogue, olga, { app: appId, chain: 'eth', token: 'usdc', threshold: '5', nativeValue: '3000', hotHigh: '100' });
    expect(made.view).to.include({ created: true, threshold: '5', hotHigh: '100', chainTokenId: USDC });
    let log = (await audit()).slice(start);
    expect(log).to.have.length(1);
    expect(log[0]).to.deep.include({ actor: 'olga', actor_role: 'operator', channel: 'console', action: 'collect.policy.set', target: `app:${appId}/token:${USDC}`, before: null });
    expect(log[0].after).to.include({ enabled: true, threshold: '5', maxFeePercent: '10', nativeValue: '3000', hotHigh: '100', hotLow: null });

    const changed = await setPolicy(sequelize, storage.catalogue, olga, { app: appId, chain: 'ETH', token: String(USDC), threshold: '7.25', disable: true });
    expect(changed.view.changed).to.deep.equal(['enabled', 'threshold']);
    log = (await audit()).slice(start);
    expect(log).to.have.length(2);
    expect(log[1].before).to.include({ enabled: true, threshold: '5' });
    expect(log[1].after).to.include({ enabled: false, threshold: '7.25', nativeValue: '3000' });

    // the same values again: nothing changed, nothing written (not even updated_at)
    const [{ updated_at: before }] = (await pg.query('SELECT updated_at FROM collection_policies WHERE application_id = $1 AND chain_token_id = $2', [appId, USDC])).rows;
    const same = await setPolicy(sequelize, storage.catalogue, olga, { app: appId, chain: 'ETH', token: 'USDC', threshold: '7.25', disable: true });
    expect(same.view).to.include({ created: false });
    expect(same.view.changed).to.deep.equal([]);
    expect((await audit()).slice(start)).to.have.length(2);
    expect((await pg.query('SELECT updated_at FROM collection_policies WHERE application_id = $1 AND chain_token_id = $2', [appId, USDC])).rows[0].updated_at).to.deep.equal(before);

    // bad input: refused, nothing written
    const rows = (await pg.query('SELECT * FROM collection_policies ORDER BY chain_token_id')).rows;
    const refusals: unknown[] = [];
    for (const req of [
      { app: appId, chain: 'ETH', token: 'USDC', threshold: '-1' },
      { app: appId, chain: 'ETH', token: 'USDC', hotLow: '200' },
      { app: 999_999, chain: 'ETH', token: 'USDC' },
      { app: appId, chain: 'DOGE', token: 'USDC' },
      { app: appId, chain: 'ETH', token: 'NOPE' },
    ]) {
      try {
        await setPolicy(sequelize, storage.catalogue, olga, req);
        refusals.push('accepted');
      } catch (e) {
        refusals.push(e instanceof PolicyInputError ? 'input' : isWcsError(e) ? e.errorName : String(e));
      }
    }
    expect(refusals).to.deep.equal(['input', 'input', 'APPLICATION_NOT_FOUND', 'CHAIN_UNKNOWN', 'TOKEN_UNKNOWN']);
    expect((await pg.query('SELECT * FROM collection_policies ORDER BY chain_token_id')).rows).to.deep.equal(rows);
    expect((await audit()).slice(start)).to.have.length(2);
  });

  it('retryItem: a FAILED sweep goes back to PLANNED with one entry; a refusal writes nothing; listItems pages by id, newest first', async () => {
    const sequelize = storage.database.sequelize;
    const [{ id: req }] = (await pg.query(`INSERT INTO collection_requests (application_id, chain_id, chain_token_id, trigger) VALUES ($1, $2, $3, 'MANUAL') RETURNING id`, [appId, ETH_CHAIN, USDC])).rows;
    const item = async (status: string, from: string, stage = 'HOT_GATHER') => Number((await pg.query(
      `INSERT INTO collection_items (request_id, application_id, chain_id, chain_token_id, stage, from_address_id, from_address, to_address, amount, status, failure_code, failure_message, finished_at)
       VALUES ($1, $2, $3, $4, $5, 1, $6, '0xhot', 25000000, $7::text, $8, $9, CASE WHEN $7::text IN ('FAILED','SUCCESS') THEN now() END) RETURNING id`,
      [req, appId, ETH_CHAIN, USDC, stage, from, status, status === 'FAILED' ? 'SWEEP_REVERTED' : null, status === 'FAILED' ? 'reverted' : null])).rows[0].id);
    const failed = await item('FAILED', '0xaaa');
    const done = await item('SUCCESS', '0xbbb');
    const cold = await item('FAILED', '0xhot', 'COLD_TRANSFER');
    const start = (await audit()).length;

    expect(retryRefusal(done, { status: 'SUCCESS', stage: 'HOT_GATHER' })).to.equal(`item ${done} is SUCCESS: only a FAILED item can be retried`);
    for (const id of [done, cold, 424242]) {
      const e = await retryItem(sequelize, olga, id).then(() => null, (x: unknown) => x);
      expect(e).to.be.instanceOf(CollectCommandError);
    }
    expect((await audit()).slice(start)).to.deep.equal([]);

    const out = await retryItem(sequelize, olga, failed);
    expect(out.item).to.include({ status: 'PLANNED', retryTimes: 1 });
    const log = (await audit()).slice(start);
    expect(log).to.have.length(1);
    expect(log[0]).to.deep.include({ actor: 'olga', action: 'collect.item.retry', target: `collection-item:${failed}` });
    expect(log[0].before).to.include({ status: 'FAILED', retryTimes: 0, failureCode: 'SWEEP_REVERTED', failureMessage: 'reverted' });
    expect(log[0].after).to.include({ status: 'PLANNED', retryTimes: 1, failureCode: null, keptTopUp: false });
    expect((await pg.query('SELECT status, retry_times, failure_code, finished_at FROM collection_items WHERE id = $1', [failed])).rows[0])
      .to.deep.equal({ status: 'PLANNED', retry_times: 1, failure_code: null, finished_at: null });

    const ids = (rows: Array<{ id: string }>) => rows.map((r) => Number(r.id));
    expect(ids(await listItems(sequelize, { limit: 2 }))).to.deep.equal([cold, done]);
    expect(ids(await listItems(sequelize, { limit: 2, before: done }))).to.deep.equal([failed]);
    expect(ids(await listItems(sequelize, { limit: 10, stage: 'COLD_TRANSFER' }))).to.deep.equal([cold]);
    expect(ids(await listItems(sequelize, { limit: 10, chain: 'eth', token: 'usdc', status: 'PLANNED' }))).to.deep.equal([failed]);
    expect(ids(await listItems(sequelize, { limit: 10, token: String(USDC), app: appId }))).to.deep.equal([cold, done, failed]);
    expect(ids(await listItems(sequelize, { limit: 10, chain: 'BTC' }))).to.deep.equal([]);
  });

  it('setCollectionAddress and requestRun: audited once per change; the same address again, a policy already due, and bad input write nothing', async () => {
    const sequelize = storage.database.sequelize;
    const registry = storage.container.resolve<AdapterRegistry>(TOKENS.AdapterRegistry);
    const start = (await audit()).length;
    const cold = '0x' + 'ab'.repeat(20);
    const set = await setCollectionAddress(sequelize, storage.catalogue, registry, olga, { app: appId, chain: 'ETH', kind: 'COLD', address: cold, memo: null });
    expect(set).to.include({ kind: 'COLD', previousAddress: null });
    const again = await setCollectionAddress(sequelize, storage.catalogue, registry, olga, { app: appId, chain: 'ETH', kind: 'COLD', address: cold, memo: null });
    expect(again.previousAddress).to.equal(set.address);
    const bad = await setCollectionAddress(sequelize, storage.catalogue, registry, olga, { app: appId, chain: 'ETH', kind: 'COLD', address: 'nope', memo: null }).then(() => null, (e: unknown) => e);
    expect(bad).to.be.instanceOf(CollectInputError);
    let log = (await audit()).slice(start);
    expect(log).to.have.length(1);
    expect(log[0]).to.deep.include({ action: 'collect.address.set', target: `app:${appId}/chain:ETH/COLD`, before: null, after: { address: set.address, memo: null } });

    // the USDC policy is disabled (first test): refused; enabled and already due: nothing to clear
    expect(await requestRun(sequelize, storage.catalogue, olga, { app: appId, chain: 'ETH', token: 'USDC' }).then(() => null, (e: unknown) => (e as Error).name)).to.equal('COLLECTION_POLICY_DISABLED');
    await setPolicy(sequelize, storage.catalogue, olga, { app: appId, chain: 'ETH', token: 'USDC', enable: true });
    const entries = (await audit()).length;
    await requestRun(sequelize, storage.catalogue, olga, { app: appId, chain: 'ETH', token: 'USDC' });
    expect(await audit()).to.have.length(entries);
    await pg.query(`UPDATE collection_policies SET last_run_at = '2026-01-02T03:04:05Z' WHERE application_id = $1 AND chain_token_id = $2`, [appId, USDC]);
    await requestRun(sequelize, storage.catalogue, olga, { app: appId, chain: 'ETH', token: 'USDC' });
    log = (await audit()).slice(entries);
    expect(log).to.have.length(1);
    expect(log[0]).to.deep.include({ action: 'collect.policy.run', target: `app:${appId}/token:${USDC}`, after: { lastRunTime: null, passStartedTime: null } });
    expect(log[0].before.lastRunTime).to.be.a('string');
    expect((await pg.query('SELECT last_run_at FROM collection_policies WHERE application_id = $1 AND chain_token_id = $2', [appId, USDC])).rows[0].last_run_at).to.equal(null);
  });
});
