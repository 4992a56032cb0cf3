/**
 * The events feed, GET /api/v1/wallet/events (docs/events-feed.md), end to end on a real service
 * and real Postgres, read through a signing client written from the spec:
 * - gap-free and duplicate-free under writers in several OS processes whose transactions commit
 *   out of id order, while a reader follows the feed; rolled-back events never appear;
 * - each event is the webhook's body, with the task's id, bizType and bizId;
 * - cursors: another application's is refused, malformed ones and bad limits too;
 * - retention: pruning removes settled events and their attempts, keeps queued ones, and a
 *   cursor before the horizon is EVENT_CURSOR_EXPIRED.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import type { Sequelize } from 'sequelize';
import { CallbackDispatcher, enqueueCallback, EventFeed, TOKENS, type CallbackConfig, type CreatedApplication } from '@wcs/server';
import { startTestService, TEST_ACTOR, type TestService } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver } from './support/callback-receiver';
import { expectError, expectOk, sleep } from './support/expect';

const EVENTS = '/api/v1/wallet/events';
const Code = { INVALID_PARAMETER: 1000001003, EVENT_CURSOR_INVALID: 1005002001, EVENT_CURSOR_FOREIGN: 1005002002, EVENT_CURSOR_EXPIRED: 1005002003 } as const;
const WRITER = path.join(__dirname, 'support', 'feed-writer.js');

interface FeedEvent { id: number; cursor: string; bizType: string; bizId: number; createTime: string; payload: Record<string, unknown> }
interface FeedPage { list: FeedEvent[]; nextCursor: string; hasMore: boolean }

describe('events feed (GET /api/v1/wallet/events): real service, writers in several processes', function () {
  let svc: TestService;
  let sequelize: Sequelize;
  let app: CreatedApplication;
  let other: CreatedApplication;
  let client: SigningClient;
  let otherClient: SigningClient;

  before(async function () {
    svc = await startTestService({ workers: false });
    sequelize = svc.service.storage.database.sequelize;
    app = await svc.createApp({ chains: ['ETH'] });
    other = await svc.createApp({ chains: ['ETH'] });
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    otherClient = new SigningClient(svc.url, { apiKey: other.apiKey, apiSecret: other.apiSecret });
  });

  after(async function () {
    await svc?.stop();
  });

  /**
   * One page, as a merchant's follower reads it: a 429 (the per-key rate limit: a follower polling
   * an empty page while the writers hold their transactions open asks for more than the default
   * 100 per second) is waited out for its Retry-After seconds and asked again.
   */
  const page = async (c: SigningClient, after: string | null, limit = 500): Promise<FeedPage> => {
    for (;;) {
      const r = await c.get(`${EVENTS}?${after === null ? '' : `after=${after}&`}limit=${limit}`);
      if (r.status === 429) {
        const wait = Number(r.headers['retry-after'] ?? '1');
        await sleep(1000 * (Number.isFinite(wait) && wait > 0 ? wait : 1));
        continue;
      }
      return expectOk(r) as FeedPage;
    }
  };

  function runWriter(applicationId: number, writer: number, events: number): Promise<{ writer: number; committed: number[]; rolledBack: number[] }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [WRITER], {
        env: { ...process.env, FEED_DB_URL: svc.db.url, FEED_APP_ID: String(applicationId), FEED_WRITER: String(writer), FEED_EVENTS: String(events) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim())) : reject(new Error(`writer ${writer} exited ${code}: ${err}`))));
    });
  }

  it('no gap and no duplicate over 10,000 events committed by 4 processes while a reader follows the feed; rolled-back events never appear', async function () {
    this.timeout(300_000);
    const WRITERS = 4;
    const PER_WRITER = 2_500;
    let writing = true;
    const writers = Promise.all(Array.from({ length: WRITERS }, (_, w) => runWriter(app.id, w + 1, PER_WRITER))).finally(() => (writing = false));

    const read: FeedEvent[] = [];
    let cursor: string | null = null;
    let maxIdRead = 0;
    /** Events read after an event with a higher id: an id-ordered feed would have skipped them. */
    let overtaken = 0;
    let pages = 0;
    for (;;) {
      const done = !writing;
      const p = await page(client, cursor);
      pages++;
      for (const e of p.list) {
        if (e.id < maxIdRead) overtaken++;
        maxIdRead = Math.max(maxIdRead, e.id);
      }
      read.push(...p.list);
      expect(p.nextCursor, 'nextCursor is the last event\'s cursor, or the position asked for').to.equal(p.list.length > 0 ? p.list[p.list.length - 1]!.cursor : cursor ?? p.nextCursor);
      cursor = p.nextCursor;
      // the writers had finished before this read began, and it listed everything: done
      if (done && !p.hasMore && p.list.length === 0) break;
      if (p.list.length === 0) await sleep(10);
    }
    const results = await writers;

    const ids = read.map((e) => e.id);
    expect(new Set(ids).size, 'no event listed twice').to.equal(ids.length);
    const seen = new Set(read.map((e) => `${e.payload.writer}/${e.payload.seq}`));
    const committed = results.flatMap((r) => r.committed.map((s) => `${r.writer}/${s}`));
    expect(committed).to.have.length(WRITERS * PER_WRITER);
    expect(read.length, 'every committed event listed, nothing else').to.equal(committed.length);
    expect(committed.filter((k) => !seen.has(k)), 'committed events missing from the feed').to.deep.equal([]);
    expect(read.filter((e) => e.payload.rolledBack !== false), 'rolled-back events listed').to.deep.equal([]);
    expect(results.reduce((n, r) => n + r.rolledBack.length, 0), 'some transactions were rolled back').to.be.greaterThan(0);
    // each writer commits one transaction after another: its events are listed in its order
    for (let w = 1; w <= WRITERS; w++) {
      const seqs = read.filter((e) => e.payload.writer === w).map((e) => Number(e.payload.seq));
      expect(seqs, `writer ${w} in commit order`).to.deep.equal([...seqs].sort((a, b) => a - b));
    }
    // the test has teeth: commits came out of id order while the reader followed, so a feed in id order would have gaps
    expect(overtaken, 'events committed out of id order while the reader followed (the writers must interleave)').to.be.greaterThan(0);
    expect(pages).to.be.greaterThan(20);
    // the other application sees none of them
    expect((await page(otherClient, null)).list).to.deep.equal([]);
  });

  it('an event is its webhook body, with the task listing\'s id, bizType and bizId; limit pages it; cursors of other applications and bad input are refused', async function () {
    const a = await svc.createApp({ chains: ['ETH'] });
    const c = new SigningClient(svc.url, { apiKey: a.apiKey, apiSecret: a.apiSecret });
    const payloads = [{ event: 'recharge', id: 1, n: '1.50' }, { event: 'withdraw', appOrderNo: 'o-1', status: 'BROADCASTED' }, { event: 'collect', id: 3 }];
    const taskIds: number[] = [];
    await sequelize.transaction(async (t) => {
      for (const [i, payload] of payloads.entries()) taskIds.push((await enqueueCallback(sequelize, t, { applicationId: a.id, bizType: (['RECHARGE', 'WITHDRAW', 'COLLECT'] as const)[i]!, bizId: 10 + i, payload })).id);
    });
    const all = await page(c, null);
    expect(all.hasMore).to.equal(false);
    expect(all.list.map((e) => ({ id: e.id, bizType: e.bizType, bizId: e.bizId, payload: e.payload }))).to.deep.equal([
      { id: taskIds[0], bizType: 'RECHARGE', bizId: 10, payload: payloads[0] },
      { id: taskIds[1], bizType: 'WITHDRAW', bizId: 11, payload: payloads[1] },
      { id: taskIds[2], bizType: 'COLLECT', bizId: 12, payload: payloads[2] },
    ]);
    for (const e of all.list) expect(e.createTime).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
    const listed = expectOk(await c.get('/api/v1/wallet/callback/tasks')) as { list: Array<{ id: number }> };
    expect(listed.list.map((t) => t.id).sort()).to.deep.equal([...taskIds].sort());

    // one at a time, from each event's cursor
    const one = await page(c, null, 1);
    expect(one).to.deep.include({ hasMore: true, nextCursor: one.list[0]!.cursor });
    const two = await page(c, one.nextCursor, 1);
    expect(two.list.map((e) => e.id)).to.deep.equal([taskIds[1]]);
    const rest = await page(c, two.nextCursor, 5);
    expect(rest.list.map((e) => e.id)).to.deep.equal([taskIds[2]]);
    expect(rest.hasMore).to.equal(false);
    const empty = await page(c, rest.nextCursor, 5);
    expect(empty).to.deep.equal({ list: [], nextCursor: rest.nextCursor, hasMore: false });

    // another application's cursor is refused, whatever it points at; nothing of a is shown to b
    expectError(await client.get(`${EVENTS}?after=${one.nextCursor}`), 200, Code.EVENT_CURSOR_FOREIGN, 'another application');
    for (const bad of ['nope', 'ZTEuMS4yLjM=', 'x'.repeat(97), encodeURIComponent('e1.1.2.3')]) {
      expectError(await c.get(`${EVENTS}?after=${bad}`), bad.length > 96 ? 400 : 200, bad.length > 96 ? Code.INVALID_PARAMETER : Code.EVENT_CURSOR_INVALID);
    }
    for (const q of ['limit=0', 'limit=501', 'limit=x', 'limit=1&limit=2', 'after=', 'cursor=abc']) {
      expectError(await c.get(`${EVENTS}?${q}`), 400, Code.INVALID_PARAMETER);
    }
    expectError(await c.post(EVENTS, {}), 405, 1000002002);
  });

  it('retention: settled events and their attempts are removed, queued ones kept; a cursor before the horizon is EVENT_CURSOR_EXPIRED', async function () {
    const a = await svc.createApp({ chains: ['ETH'] });
    const c = new SigningClient(svc.url, { apiKey: a.apiKey, apiSecret: a.apiSecret });
    const receiver = await new CallbackReceiver().start();
    try {
      await svc.service.storage.applications.setCallback(TEST_ACTOR, a.id, 'RECHARGE', receiver.url('/ok'));
      await svc.service.storage.applications.setCallback(TEST_ACTOR, a.id, 'WITHDRAW', 'http://127.0.0.1:1/down');
      const ids: number[] = [];
      await sequelize.transaction(async (t) => {
        for (let i = 0; i < 3; i++) ids.push((await enqueueCallback(sequelize, t, { applicationId: a.id, bizType: 'RECHARGE', bizId: i + 1, payload: { event: 'recharge', i } })).id);
        ids.push((await enqueueCallback(sequelize, t, { applicationId: a.id, bizType: 'WITHDRAW', bizId: 9, payload: { event: 'withdraw', i: 9 } })).id);
      });
      const cont = svc.service.storage.container;
      type Args = ConstructorParameters<typeof CallbackDispatcher>;
      const config: CallbackConfig = { ...svc.service.config.callbacks, timeoutMs: 2000 };
      const d = new CallbackDispatcher(cont.resolve<Args[0]>(TOKENS.Database), cont.resolve<Args[1]>(TOKENS.CredentialStore), config, svc.service.logger);
      expect(await d.runOnce()).to.equal(4);
      await d.stop();
      const before = await page(c, null);
      expect(before.list.map((e) => e.id)).to.deep.equal(ids);
      const attempts = async () => Number(((await sequelize.query('SELECT count(*)::int AS n FROM callback_attempts WHERE application_id = $1', { bind: [a.id], plain: true })) as { n: number }).n);
      expect(await attempts()).to.equal(4);

      // retention of "everything older than a second from now": the three delivered events go; the one waiting for its retry stays
      const feed = cont.resolve<EventFeed>(TOKENS.EventFeed);
      let removed = 0;
      for (let n = -1; n !== 0; removed += n) n = await feed.prune(new Date(Date.now() + 1000), 500);
      expect(removed).to.be.at.least(3);
      const after = await page(c, null);
      expect(after.list.map((e) => e.id)).to.deep.equal([ids[3]]);
      expect(await attempts()).to.equal(1);
      // a cursor at or past the last removed event still works; one before it may have missed events: refused, with where to resume
      expect((await page(c, before.list[2]!.cursor)).list.map((e) => e.id)).to.deep.equal([ids[3]]);
      const msg = expectError(await c.get(`${EVENTS}?after=${before.list[0]!.cursor}`), 200, Code.EVENT_CURSOR_EXPIRED);
      expect(msg).to.match(/retention/);
      expectError(await c.get(`${EVENTS}?after=${before.list[1]!.cursor}`), 200, Code.EVENT_CURSOR_EXPIRED);
      // starting over (no cursor) lists what is retained
      expect((await page(c, null)).list.map((e) => e.id)).to.deep.equal([ids[3]]);
    } finally {
      await receiver.stop();
    }
  });
});
