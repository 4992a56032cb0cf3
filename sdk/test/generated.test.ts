/**
 * src/generated/api.ts is what scripts/generate.mjs makes of server/openapi.json today, and the
 * client covers every operation of the document with a retry class.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROUTES } from '../src/client';
import { OPERATIONS, type FeedPage, type FeedEvent, type OperationTypes, type WebhookEvent } from '../src/generated/api';
import type { EventFeedItem, EventFeedPage } from '../src/feed';
import { ErrorCode } from '../src/errors';
import { REPO_ROOT, SDK_ROOT } from './helpers';

const GENERATOR = path.join(SDK_ROOT, 'scripts', 'generate.mjs');
const GENERATED = path.join(SDK_ROOT, 'src', 'generated', 'api.ts');

// compile-time: the feed's hand-written types and the generated ones are the same shapes
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const feedItemSame: Same<EventFeedItem, FeedEvent> = true;
const feedPageSame: Same<EventFeedPage, FeedPage> = true;
const payloadIsWebhookEvent: Same<FeedEvent['payload'], WebhookEvent> = true;
const feedDataIsPage: Same<OperationTypes['listEvents']['data'], FeedPage> = true;

describe('generated types and operation coverage', () => {
  it('src/generated/api.ts is up to date with server/openapi.json', function () {
    this.timeout(30_000);
    const r = spawnSync(process.execPath, [GENERATOR, '--stdout'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    expect(r.status, r.stderr).to.equal(0);
    const committed = fs.readFileSync(GENERATED, 'utf8');
    if (r.stdout !== committed) {
      const a = r.stdout.split('\n');
      const b = committed.split('\n');
      const line = a.findIndex((l, i) => l !== b[i]);
      expect.fail(`sdk/src/generated/api.ts is out of date with server/openapi.json (first difference at line ${line + 1}): run \`npm run generate\` in sdk/ and commit the result`);
    }
    expect(feedItemSame && feedPageSame && payloadIsWebhookEvent && feedDataIsPage).to.equal(true);
  });

  it('the generator is deterministic and its --check mode agrees', function () {
    this.timeout(30_000);
    const a = spawnSync(process.execPath, [GENERATOR, '--stdout'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const b = spawnSync(process.execPath, [GENERATOR, '--stdout'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    expect(a.stdout).to.equal(b.stdout);
    expect(spawnSync(process.execPath, [GENERATOR, '--check']).status).to.equal(0);
  });

  it('the client has a method for every operation of the document (method and path), each with a retry class', () => {
    const doc = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'server', 'openapi.json'), 'utf8')) as { paths: Record<string, Record<string, { operationId: string }>> };
    const documented = Object.entries(doc.paths).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`)).sort();
    const routes = Object.values(ROUTES).map((r) => `${r.method} ${r.path}`).sort();
    expect(routes).to.deep.equal(documented);
    expect(documented.length).to.be.at.least(27);
    for (const [name, r] of Object.entries(ROUTES)) {
      expect(['read', 'idempotent', 'unsafe'], name).to.include(r.retry);
      const op = (OPERATIONS as Record<string, { method: string; path: string; signed: boolean; envelope: boolean }>)[name];
      expect(op, `${name} is an operationId of the document`).to.not.equal(undefined);
      expect({ method: r.method, path: r.path, signed: r.signed, envelope: r.envelope }).to.deep.equal({ method: op!.method, path: op!.path, signed: op!.signed, envelope: op!.envelope });
      if (r.method === 'GET') expect(r.retry, name).to.equal('read');
    }
    // exactly the writes the docs make idempotent by a key are retried
    const idempotent = Object.values(ROUTES).filter((r) => r.retry === 'idempotent').map((r) => r.operation).sort();
    expect(idempotent).to.deep.equal(['batchCreateAddresses', 'batchCreateWithdraw', 'createAddress', 'createChainSubscription', 'createWithdraw']);
    expect(Object.values(ROUTES).filter((r) => r.retry === 'unsafe').map((r) => r.operation).sort()).to.deep.equal(['deleteChainSubscription', 'resendCallback', 'updateChainSubscription']);
  });

  it('ErrorCode holds every code of docs/errors.md with the same name', () => {
    const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'errors.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| (\d{10}) \| ([A-Z0-9_]+) \|/gm)].map((m) => [m[2]!, Number(m[1])] as const);
    expect(rows.length).to.be.greaterThan(40);
    for (const [name, code] of rows) expect((ErrorCode as Record<string, number>)[name], name).to.equal(code);
  });
});
