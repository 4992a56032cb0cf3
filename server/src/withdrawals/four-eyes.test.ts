import { expect } from 'chai';
import { Client } from 'pg';
import type { AdapterRegistry } from '@wcs/core';
import { TOKENS } from '../container';
import { cliActor, type AuditActor } from '../operators/audit';
import { openStorage, type StorageHandle } from '../service';
import { createTestDatabase, testConfig, testLogger, type TestDatabase } from '../testing';
import { fourEyesFor, holdingRuleTarget, lastHoldingRuleChange } from './four-eyes';
import { decideApproval } from './payout-intake';
import { RiskRules } from './risk-rules';

describe('four eyes on held withdrawals: who may decide (pure)', () => {
  it('an approval is refused to whoever last changed the holding rule; a rejection is not; nobody on record refuses nobody', () => {
    expect(fourEyesFor('APPROVE', 'ann', 'ann')).to.match(/ann last changed the rule that held this withdrawal: another approver must decide it/);
    expect(fourEyesFor('APPROVE', 'cli:root', 'cli:root'), 'the CLI after a CLI rule change by the same system user').to.be.a('string');
    expect(fourEyesFor('APPROVE', 'ann', 'olga')).to.equal(null);
    expect(fourEyesFor('APPROVE', 'ann', 'cli:ann'), 'a shell user is not a console operator').to.equal(null);
    expect(fourEyesFor('APPROVE', 'ann', null)).to.equal(null);
    expect(fourEyesFor('REJECT', 'ann', 'ann'), 'rejecting moves no money').to.equal(null);
  });

  it('the holding rule is named as RiskRules.setLimits audits it', () => {
    expect(holdingRuleTarget(7, 10200)).to.equal('app:7/token:10200');
  });
});

describe('decideApproval with four eyes, typed refusals, and the audit (real Postgres)', () => {
  const ETH_TEST = 102;
  const ETH = 10200;
  let db: TestDatabase;
  let storage: StorageHandle;
  let pg: Client;
  let appId: number;
  let hotId: number;
  const operator = (name: string, role: string): AuditActor => ({ name, role, channel: 'console', source: '127.0.0.1' });
  const olga = operator('olga', 'operator');
  const ann = operator('ann', 'approver');
  const olgaApprover = operator('olga', 'approver');
  const rules = () => new RiskRules(storage.database.sequelize, storage.catalogue, storage.container.resolve<AdapterRegistry>(TOKENS.AdapterRegistry));
  const held = async (appOrderNo: string): Promise<number> => {
    const r = await pg.query<{ id: string }>(
      `INSERT INTO withdrawals (application_id, app_order_no, chain_id, chain_token_id, hot_wallet_id, from_address, to_address, amount, fee, reserved_amount, reserved_fee,
                                status, approval, risk_level, risk_reason)
       VALUES ($1, $2, $3, $4, $5, '0x00000000000000000000000000000000000000aa', '0x00000000000000000000000000000000000000bb', 3000000000000000000, 21000, 3000000000000000000, 21000,
               'PROCESSING', 'PENDING', 'HIGH', 'AMOUNT_OVER_APPROVAL_THRESHOLD') RETURNING id`,
      [appId, appOrderNo, ETH_TEST, ETH, hotId],
    );
    return Number(r.rows[0]!.id);
  };
  const order = async (id: number) => (await pg.query<{ approval: string; status: string; fail_reason: string | null }>('SELECT approval, status, fail_reason FROM withdrawals WHERE id = $1', [id])).rows[0]!;
  const decisions = async () => (await pg.query<{ actor: string; action: string; target: string; after: Record<string, unknown> }>(
    `SELECT actor, action, target, after FROM audit_log WHERE action IN ('withdraw.approve', 'withdraw.reject') ORDER BY id`)).rows;
  const limitEntries = async () => Number((await pg.query<{ n: string }>(`SELECT count(*) AS n FROM audit_log WHERE action = 'withdraw.limits.set'`)).rows[0]!.n);

  before(async () => {
    db = await createTestDatabase();
    storage = await openStorage(testConfig(db.url), testLogger());
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    appId = (await storage.applications.create(cliActor(), { name: 'four eyes', environment: 'test', chains: ['ETH'] })).id;
    hotId = (await pg.query<{ id: number }>(`INSERT INTO hot_wallets (application_id, chain_id, key_namespace, key_index, address) VALUES ($1, $2, 'evm', 0, '0x00000000000000000000000000000000000000aa') RETURNING id`, [appId, ETH_TEST])).rows[0]!.id;
  });
  after(async () => {
    await pg?.end();
    await storage?.close();
    await db?.drop();
  });

  it('the operator who set the threshold cannot approve what it holds (nothing changed, nothing audited); another approver can; the changer may reject', async () => {
    await rules().setLimits(olga, appId, ETH, { perOrderMax: null, dailyMax: null, approvalThreshold: '2' });
    expect(await lastHoldingRuleChange(storage.database.sequelize, appId, ETH)).to.include({ actor: 'olga', actorRole: 'operator', channel: 'console' });
    const a = await held('held-a');
    const b = await held('held-b');

    const refused = await decideApproval(storage.database.sequelize, olgaApprover, a, true, 'mine');
    expect(refused).to.deep.equal({ ok: false, code: 'FOUR_EYES_REQUIRED', message: `withdrawal ${a}: olga last changed the rule that held this withdrawal: another approver must decide it` });
    expect(await order(a)).to.deep.equal({ approval: 'PENDING', status: 'PROCESSING', fail_reason: null });
    expect(await decisions()).to.deep.equal([]);

    expect(await decideApproval(storage.database.sequelize, ann, a, true, 'checked with the merchant')).to.deep.equal({ ok: true, approval: 'APPROVED' });
    expect(await order(a)).to.include({ approval: 'APPROVED', status: 'PROCESSING' });
    expect(await decideApproval(storage.database.sequelize, olgaApprover, b, false, 'not today')).to.deep.equal({ ok: true, approval: 'REJECTED' });
    expect(await order(b)).to.deep.equal({ approval: 'REJECTED', status: 'FAILED', fail_reason: 'rejected by the operator: not today' });
    expect(await decisions()).to.deep.equal([
      { actor: 'ann', action: 'withdraw.approve', target: `withdrawal:${a}`, after: { approval: 'APPROVED', status: 'PROCESSING', note: 'checked with the merchant' } },
      { actor: 'olga', action: 'withdraw.reject', target: `withdrawal:${b}`, after: { approval: 'REJECTED', status: 'FAILED', note: 'not today' } },
    ]);
  });

  it('unknown and already decided orders are typed refusals that change nothing', async () => {
    const before = (await decisions()).length;
    expect(await decideApproval(storage.database.sequelize, ann, 987654, true, null)).to.deep.equal({ ok: false, code: 'WITHDRAWAL_NOT_FOUND', message: 'withdrawal 987654 not found' });
    const [{ id }] = (await pg.query<{ id: string }>(`SELECT id FROM withdrawals WHERE app_order_no = 'held-b'`)).rows as [{ id: string }];
    const again = await decideApproval(storage.database.sequelize, ann, Number(id), true, null);
    expect(again).to.deep.include({ ok: false, code: 'WITHDRAWAL_NOT_PENDING' });
    expect(await order(Number(id))).to.include({ approval: 'REJECTED', status: 'FAILED' });
    expect((await decisions()).length).to.equal(before);
  });

  it('the latest change decides: after another operator changes the rule, its earlier changer may approve; the CLI is refused after its own system user changed it', async () => {
    await rules().setLimits(operator('oscar', 'operator'), appId, ETH, { perOrderMax: null, dailyMax: null, approvalThreshold: '2.5' });
    const c = await held('held-c');
    expect(await decideApproval(storage.database.sequelize, olgaApprover, c, true, null)).to.deep.equal({ ok: true, approval: 'APPROVED' });

    await rules().setLimits(cliActor(), appId, ETH, { perOrderMax: null, dailyMax: null, approvalThreshold: '2' });
    const d = await held('held-d');
    const r = await decideApproval(storage.database.sequelize, cliActor(), d, true, null);
    expect(r).to.deep.include({ ok: false, code: 'FOUR_EYES_REQUIRED' });
    expect(await order(d)).to.include({ approval: 'PENDING' });
    expect(await decideApproval(storage.database.sequelize, ann, d, true, null)).to.deep.equal({ ok: true, approval: 'APPROVED' });
  });

  it('the latest of many changes decides (audit ids compared as numbers: 10 after 9)', async () => {
    for (let i = 0; i < 12; i++) await rules().setLimits(operator(i % 2 ? 'oscar' : 'olga', 'operator'), appId, ETH, { perOrderMax: null, dailyMax: null, approvalThreshold: `2.${i + 1}` });
    await rules().setLimits(operator('ann', 'operator'), appId, ETH, { perOrderMax: null, dailyMax: null, approvalThreshold: '2' });
    const last = await lastHoldingRuleChange(storage.database.sequelize, appId, ETH);
    expect(Number(last!.auditId)).to.be.greaterThan(20);
    expect(last!.actor).to.equal('ann');
    const e = await held('held-e');
    expect(await decideApproval(storage.database.sequelize, ann, e, true, null)).to.deep.include({ ok: false, code: 'FOUR_EYES_REQUIRED' });
    await rules().setLimits(cliActor(), appId, ETH, { perOrderMax: null, dailyMax: null, approvalThreshold: '2.01' });
    expect(await decideApproval(storage.database.sequelize, ann, e, true, null)).to.deep.equal({ ok: true, approval: 'APPROVED' });
    await rules().setLimits(cliActor(), appId, ETH, { perOrderMax: null, dailyMax: null, approvalThreshold: '2' });
  });

  it('setting a token\'s limits to what they are changes nothing and writes no entry (so does not make its author the last changer)', async () => {
    const n = await limitEntries();
    await rules().setLimits(ann, appId, ETH, { perOrderMax: null, dailyMax: null, approvalThreshold: '2' });
    expect(await limitEntries()).to.equal(n);
    expect((await lastHoldingRuleChange(storage.database.sequelize, appId, ETH))!.actor).to.equal(cliActor().name);
    await rules().setLimits(olga, appId, ETH, { perOrderMax: null, dailyMax: null, approvalThreshold: null });
    expect(await limitEntries()).to.equal(n + 1);
    await rules().setLimits(olga, appId, ETH, { perOrderMax: null, dailyMax: null, approvalThreshold: null });
    expect(await limitEntries(), 'removing limits that are not there').to.equal(n + 1);
  });
});
