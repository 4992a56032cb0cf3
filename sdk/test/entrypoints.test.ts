/**
 * The published entry points: ESM and CJS both importable by package name (spawning node on a
 * tiny .mjs and .cjs file), the `node` condition using node:crypto, the universal entry point
 * working on WebCrypto alone (as on an edge runtime), and the package.json `exports` map.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SDK_ROOT, SECRET, callbackHeaders } from './helpers';

function runNode(file: string, source: string, args: string[] = []): { status: number | null; stdout: string; stderr: string } {
  // inside the package, so that `@wcs/sdk` resolves by its own name (package self-reference)
  const dir = fs.mkdtempSync(path.join(SDK_ROOT, 'dist', 'entry-'));
  try {
    const f = path.join(dir, file);
    fs.writeFileSync(f, source);
    const r = spawnSync(process.execPath, [...args, f], { encoding: 'utf8', cwd: dir });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const body = '{"event":"test","applicationId":1,"bizType":"RECHARGE","message":"m","createTime":"2026-11-22T06:45:52"}';
const headers = JSON.stringify(callbackHeaders(body, { path: '/cb' }));

const PROBE = `
  const sdk = SDK;
  const names = ['WcsClient', 'WebhookVerifier', 'expressWebhook', 'fetchWebhookHandler', 'captureRawBody', 'dedupeKey', 'InMemorySeenSet', 'InMemoryReplayStore', 'WcsApiError', 'ErrorCode', 'OPERATIONS', 'WEBHOOK_EVENTS', 'EventFeedIterator', 'signRequest'];
  const missing = names.filter((n) => sdk[n] === undefined);
  const v = new sdk.WebhookVerifier({ apiSecret: ${JSON.stringify(SECRET)} });
  v.verify({ body: ${JSON.stringify(body)}, headers: ${headers}, path: '/cb' }).then((r) => {
    console.log(JSON.stringify({ missing, backend: sdk.cryptoBackend(), verifier: v.cryptoBackend, ok: r.ok, event: r.ok ? r.event.event : r.reason }));
  });
`;

describe('entry points (ESM and CJS, node and WebCrypto)', function () {
  this.timeout(30_000);

  it('ESM: import from "@wcs/sdk" gets the node build (node:crypto)', () => {
    const r = runNode('probe.mjs', `import * as SDK from '@wcs/sdk';\n${PROBE}`);
    expect(r.status, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout)).to.deep.equal({ missing: [], backend: 'node', verifier: 'node', ok: true, event: 'test' });
  });

  it('CJS: require("@wcs/sdk") gets the node build (node:crypto)', () => {
    const r = runNode('probe.cjs', `const SDK = require('@wcs/sdk');\n${PROBE}`);
    expect(r.status, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout)).to.deep.equal({ missing: [], backend: 'node', verifier: 'node', ok: true, event: 'test' });
  });

  it('ESM and CJS builds are the same API', () => {
    const esm = runNode('keys.mjs', `import * as SDK from '@wcs/sdk'; console.log(JSON.stringify(Object.keys(SDK).filter((k) => k !== 'default').sort()));`);
    const cjs = runNode('keys.cjs', `console.log(JSON.stringify(Object.keys(require('@wcs/sdk')).sort()));`);
    expect(esm.status, esm.stderr).to.equal(0);
    expect(JSON.parse(esm.stdout)).to.deep.equal(JSON.parse(cjs.stdout));
  });

  it('without the node condition and without node:crypto (an edge runtime), WebCrypto does the work', () => {
    // the universal ESM entry, in a process where process.getBuiltinModule is gone (edge runtimes have no node:crypto)
    const src = `delete process.getBuiltinModule;\nconst SDK = await import(${JSON.stringify(path.join(SDK_ROOT, 'dist', 'esm', 'index.js'))});\n${PROBE}`;
    const r = runNode('edge.mjs', src);
    expect(r.status, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout)).to.deep.equal({ missing: [], backend: 'webcrypto', verifier: 'webcrypto', ok: true, event: 'test' });
    // the universal CJS entry likewise
    const c = runNode('edge.cjs', `delete process.getBuiltinModule;\nconst SDK = require(${JSON.stringify(path.join(SDK_ROOT, 'dist', 'cjs', 'index.js'))});\n${PROBE}`);
    expect(c.status, c.stderr).to.equal(0);
    expect(JSON.parse(c.stdout).backend).to.equal('webcrypto');
    // the universal entry on Node >= 20.16 still finds node:crypto by itself
    const n = runNode('universal.mjs', `const SDK = await import(${JSON.stringify(path.join(SDK_ROOT, 'dist', 'esm', 'index.js'))});\n${PROBE}`);
    expect(JSON.parse(n.stdout).backend).to.equal(typeof (process as { getBuiltinModule?: unknown }).getBuiltinModule === 'function' ? 'node' : 'webcrypto');
  });

  it('the universal build never imports node: modules statically (bundlers for edge runtimes would fail)', () => {
    for (const dir of ['esm', 'cjs']) {
      const files = fs.readdirSync(path.join(SDK_ROOT, 'dist', dir), { recursive: true }) as string[];
      for (const f of files.filter((x) => x.endsWith('.js') && x !== 'node.js')) {
        const text = fs.readFileSync(path.join(SDK_ROOT, 'dist', dir, f), 'utf8');
        expect(text, `${dir}/${f}`).to.not.match(/(from\s+|require\()['"](node:)?(crypto|http|https|fs|stream|buffer)['"]/);
      }
    }
  });

  it('package.json: exports with types, import and require (and node); files; engines; no runtime dependencies', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(SDK_ROOT, 'package.json'), 'utf8')) as Record<string, any>;
    expect(pkg.name).to.equal('@wcs/sdk');
    expect(pkg.engines.node).to.equal('>=20');
    expect(pkg.dependencies ?? {}).to.deep.equal({});
    const dot = pkg.exports['.'];
    for (const c of [dot.import, dot.require, dot.node.import, dot.node.require]) {
      expect(fs.existsSync(path.join(SDK_ROOT, c.types)), c.types).to.equal(true);
      expect(fs.existsSync(path.join(SDK_ROOT, c.default)), c.default).to.equal(true);
    }
    expect(JSON.parse(fs.readFileSync(path.join(SDK_ROOT, 'dist', 'esm', 'package.json'), 'utf8')).type).to.equal('module');
    expect(pkg.files).to.include.members(['dist/cjs', 'dist/esm']);
  });

  it('the declarations stand alone: a consumer type-checks against them without @types/node or express types', function () {
    this.timeout(60_000);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-sdk-types-'));
    try {
      fs.writeFileSync(path.join(dir, 'use.ts'), [
        `import { WcsClient, WebhookVerifier, fetchWebhookHandler, dedupeKey, type WebhookEvent } from ${JSON.stringify(path.join(SDK_ROOT, 'dist', 'esm', 'index.js'))};`,
        `const c = new WcsClient({ baseUrl: 'https://x', apiKey: 'k', apiSecret: 's' });`,
        `export async function f(e: WebhookEvent) { const a = await c.addresses.create({ chainCode: 'ETH', externalUserId: 'u' }); if (e.event === 'withdraw') return e.appOrderNo + a.address + dedupeKey(e); return new WebhookVerifier({ apiSecret: 's' }); }`,
        `export const POST = fetchWebhookHandler({ apiSecret: 's', onEvent: (e) => { if (e.event === 'recharge') { const s: string = e.amount; void s; } } });`,
      ].join('\n'));
      fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
        compilerOptions: { noEmit: true, strict: true, target: 'ES2022', module: 'ES2022', moduleResolution: 'bundler', lib: ['ES2022', 'DOM'], types: [], skipLibCheck: false, typeRoots: [] },
        files: ['use.ts'],
      }));
      const tsc = require.resolve('typescript/bin/tsc');
      const r = spawnSync(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.json')], { encoding: 'utf8' });
      expect(r.status, r.stdout + r.stderr).to.equal(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
