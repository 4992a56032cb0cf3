import { expect } from 'chai';
import { DEDUPE_FIELDS, dedupeKey, dedupeTuple, handleOnce } from '../src/dedupe';
import { InMemorySeenSet, InMemoryReplayStore, TtlSet } from '../src/webhooks/stores';
import { WEBHOOK_EVENTS, type WebhookEvent } from '../src/api';
import { REPO_ROOT, webhookExamples } from './helpers';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ev = (event: string) => webhookExamples().find((e) => e.event === event)!.body as unknown as WebhookEvent;

describe('dedupe keys (docs/callbacks.md "Events and bizTypes", spec for recharge and withdraw)', () => {
  it('every event the service sends has a documented key (the test event none)', () => {
    expect(Object.keys(DEDUPE_FIELDS).sort()).to.deep.equal([...WEBHOOK_EVENTS].sort());
  });

  it('the keys are exactly the documented tuples, for every event type', () => {
    const r = ev('recharge') as Extract<WebhookEvent, { event: 'recharge' }>;
    expect(dedupeTuple(r)).to.deep.equal(['recharge', r.id, r.txStatus]);
    expect(dedupeKey(r)).to.equal(`recharge:${r.id}:${r.txStatus}`);
    const rc = ev('recharge_credited') as Extract<WebhookEvent, { event: 'recharge_credited' }>;
    expect(dedupeTuple(rc)).to.deep.equal(['recharge_credited', rc.id]);
    expect(dedupeKey(rc)).to.equal(`recharge_credited:${rc.id}`);
    const w = ev('withdraw') as Extract<WebhookEvent, { event: 'withdraw' }>;
    expect(dedupeTuple(w)).to.deep.equal([w.appOrderNo, w.status]);
    expect(dedupeKey(w)).to.equal(`withdraw:${w.appOrderNo}:${w.status}`);
    const c = ev('collect') as Extract<WebhookEvent, { event: 'collect' }>;
    expect(dedupeTuple(c)).to.deep.equal([c.itemId, c.status]);
    expect(dedupeKey(c)).to.equal(`collect:${c.itemId}:${c.status}`);
    const ce = ev('chain_event') as Extract<WebhookEvent, { event: 'chain_event' }>;
    expect(dedupeTuple(ce)).to.deep.equal(['chain_event', ce.id]);
    expect(dedupeKey(ce)).to.equal(`chain_event:${ce.id}`);
    const t = ev('transfer') as Extract<WebhookEvent, { event: 'transfer' }>;
    expect(dedupeTuple(t)).to.deep.equal(['transfer', t.id]);
    expect(dedupeKey(t)).to.equal(`transfer:${t.id}`);
    expect(dedupeTuple(ev('test'))).to.equal(null);
    expect(dedupeKey(ev('test'))).to.equal(null);
  });

  it('states of one record get different keys; the same state delivered again the same key; types never collide', () => {
    const r = ev('recharge') as Extract<WebhookEvent, { event: 'recharge' }>;
    expect(dedupeKey({ ...r, txStatus: 'SETTLED' })).to.not.equal(dedupeKey({ ...r, txStatus: 'CONFIRMED' }));
    expect(dedupeKey({ ...r })).to.equal(dedupeKey(JSON.parse(JSON.stringify(r)) as WebhookEvent));
    // a withdraw's appOrderNo "5" and a collect item 5 with the same status
    const w = { ...(ev('withdraw') as Extract<WebhookEvent, { event: 'withdraw' }>), appOrderNo: '5', status: 'FAILED' as const };
    const c = { ...(ev('collect') as Extract<WebhookEvent, { event: 'collect' }>), itemId: 5, status: 'FAILED' as const };
    expect(dedupeKey(w)).to.not.equal(dedupeKey(c));
    // the recharge_credited voucher and the SETTLED recharge of the same deposit are two events
    expect(dedupeKey(ev('recharge_credited'))).to.not.equal(dedupeKey({ ...r, txStatus: 'SETTLED' }));
    // an appOrderNo with ':' stays unambiguous: the status is last and has none
    expect(dedupeKey({ ...w, appOrderNo: 'a:FAILED', status: 'SUCCESS' })).to.not.equal(dedupeKey({ ...w, appOrderNo: 'a', status: 'FAILED' }));
  });

  it('the documentation states the same keys (docs/callbacks.md table)', () => {
    const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'callbacks.md'), 'utf8');
    for (const [event, fields] of Object.entries(DEDUPE_FIELDS)) {
      if (fields.length === 0) continue;
      const row = doc.split('\n').find((l) => l.includes(`| \`${event}\` |`));
      expect(row, event).to.be.a('string');
      expect(row, event).to.include(`(${fields.map((f) => `\`${f}\``).join(', ')})`);
    }
  });

  it('handleOnce runs a handler once per key, records the key only after success', async () => {
    const seen = new InMemorySeenSet();
    const r = ev('recharge');
    let n = 0;
    const fail = async () => {
      n++;
      throw new Error('x');
    };
    let e: unknown;
    await handleOnce(seen, r, fail).catch((x: unknown) => (e = x));
    expect(String(e)).to.match(/x/);
    expect(await handleOnce(seen, r, () => void n++)).to.equal(true);
    expect(await handleOnce(seen, r, () => void n++)).to.equal(false);
    expect(n).to.equal(2);
    expect(await handleOnce(seen, ev('test'), () => void n++)).to.equal(true);
    expect(await handleOnce(seen, ev('test'), () => void n++)).to.equal(true);
  });
});

describe('in-memory stores', () => {
  it('TtlSet: entries expire; the oldest go first beyond maxEntries', () => {
    let now = 1000;
    const s = new TtlSet({ now: () => now, maxEntries: 3 });
    expect(s.add('a', 2000)).to.equal(true);
    expect(s.add('a', 2000)).to.equal(false);
    expect(s.has('a')).to.equal(true);
    now = 2000;
    expect(s.has('a')).to.equal(false);
    expect(s.add('a', 3000)).to.equal(true);
    s.add('b', 9000);
    s.add('c', 9000);
    s.add('d', 9000);
    expect(s.size).to.equal(3);
    expect(s.has('a')).to.equal(false);
    expect(s.has('d')).to.equal(true);
  });

  it('InMemorySeenSet: remembered for ttlMs (default longer than the retry schedule)', () => {
    let now = 0;
    const s = new InMemorySeenSet({ now: () => now, ttlMs: 100 });
    expect(s.addIfNew('k')).to.equal(true);
    expect(s.addIfNew('k')).to.equal(false);
    now = 100;
    expect(s.has('k')).to.equal(false);
    let t = 0;
    const d = new InMemorySeenSet({ now: () => t });
    d.add('x');
    t = 17 * 3600_000;
    expect(d.has('x')).to.equal(true);
  });

  it('InMemoryReplayStore: a nonce once until its expiry', () => {
    let now = 0;
    const s = new InMemoryReplayStore({ now: () => now });
    expect(s.remember('n', 10)).to.equal(true);
    expect(s.remember('n', 10)).to.equal(false);
    now = 10;
    expect(s.remember('n', 20)).to.equal(true);
  });
});
