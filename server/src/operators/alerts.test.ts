import { expect } from 'chai';
import { Client } from 'pg';
import { Sequelize } from 'sequelize';
import { migrate } from '../db/migrations';
import { createTestDatabase, type TestDatabase } from '../testing';
import { Alerts } from './alerts';

describe('operator alerts: list and acknowledge, audited (real Postgres)', () => {
  let db: TestDatabase;
  let sequelize: Sequelize;
  let pg: Client;

  before(async () => {
    db = await createTestDatabase();
    sequelize = new Sequelize(db.url, { dialect: 'postgres', logging: false });
    await migrate(sequelize);
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    for (const k of ['DEEP_REORG', 'FEE_WALLET_LOW', 'COLLECTION_FAILED']) await pg.query(`INSERT INTO operator_alerts (kind, message, details) VALUES ($1, $2, '{"n": 1}')`, [k, `${k} happened`]);
  });
  after(async () => {
    await pg?.end();
    await sequelize?.close();
    await db?.drop();
  });

  it('lists open alerts newest first; acknowledging one writes the time and the audit entry once; a second acknowledgement and an unknown id are refused', async () => {
    const alerts = new Alerts(sequelize);
    const open = await alerts.list({ open: true, limit: 10 });
    expect(open.map((a) => a.kind)).to.deep.equal(['COLLECTION_FAILED', 'FEE_WALLET_LOW', 'DEEP_REORG']);
    const actor = { name: 'olga', role: 'operator', channel: 'console' as const, source: '10.1.1.1' };
    const r = await alerts.acknowledge(actor, open[1]!.id);
    expect(r.ok && r.alert.acknowledgedBy).to.equal('olga');
    expect(r.ok && r.alert.acknowledgedAt).to.be.instanceOf(Date);
    expect(await alerts.acknowledge(actor, open[1]!.id)).to.deep.equal({ ok: false, reason: 'ALREADY_ACKNOWLEDGED' });
    expect(await alerts.acknowledge(actor, '999999')).to.deep.equal({ ok: false, reason: 'NOT_FOUND' });
    expect(await alerts.acknowledge(actor, 'x; DROP TABLE')).to.deep.equal({ ok: false, reason: 'NOT_FOUND' });
    expect((await alerts.list({ open: true, limit: 10 })).map((a) => a.kind)).to.deep.equal(['COLLECTION_FAILED', 'DEEP_REORG']);
    expect((await alerts.list({ open: false, limit: 10 })).length).to.equal(3);
    expect((await alerts.list({ open: false, limit: 1, before: open[0]!.id })).map((a) => a.kind)).to.deep.equal(['FEE_WALLET_LOW']);
    const log = (await pg.query(`SELECT actor, action, target, before, after FROM audit_log`)).rows;
    expect(log).to.deep.equal([{ actor: 'olga', action: 'alert.acknowledge', target: `alert:${open[1]!.id}`, before: { kind: 'FEE_WALLET_LOW', acknowledged: false }, after: { kind: 'FEE_WALLET_LOW', acknowledged: true } }]);
  });
});
