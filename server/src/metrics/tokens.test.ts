import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { testLogger } from '../testing';
import { bearerMatches, MetricsServer } from './server';
import { MetricsTokens, tokenDigest } from './tokens';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('metrics: token rotation (current and previous token, token files read again)', function () {
  this.timeout(30_000);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-mtok-'));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const A = 'token-a-0123456789abcdef';
  const B = 'token-b-0123456789abcdef';
  const C = 'token-c-0123456789abcdef';
  const render = async () => ({ contentType: 'text/plain; version=0.0.4', body: 'wcs_up 1\n' });

  it('bearerMatches takes a list: any of the tokens, compared in full', () => {
    const both = [tokenDigest(A), tokenDigest(B)];
    expect(bearerMatches(`Bearer ${A}`, both)).to.equal(true);
    expect(bearerMatches(`Bearer ${B}`, both)).to.equal(true);
    expect(bearerMatches(`Bearer ${C}`, both)).to.equal(false);
    expect(bearerMatches(`Bearer ${A.slice(0, -1)}`, both)).to.equal(false);
    expect(bearerMatches(A, both)).to.equal(false);
    expect(bearerMatches(undefined, both)).to.equal(false);
    expect(bearerMatches('Bearer ', [tokenDigest('')])).to.equal(false);
    expect(bearerMatches(`Bearer ${A}`, [])).to.equal(false);
  });

  it('from the environment: the current and the previous token are both accepted, nothing else', async () => {
    const server = new MetricsServer({ host: '127.0.0.1', port: 0, token: B, tokens: new MetricsTokens({ token: B, previousToken: A }, testLogger()), render, logger: testLogger() });
    await server.start();
    try {
      const status = async (t?: string) => (await fetch(server.url, t ? { headers: { authorization: `Bearer ${t}` } } : {})).status;
      expect(await status(A)).to.equal(200);
      expect(await status(B)).to.equal(200);
      expect(await status(C)).to.equal(401);
      expect(await status()).to.equal(401);
    } finally {
      await server.stop();
    }
  });

  it('from files: a rotation takes effect at the next scrape after the files change, without a restart', async () => {
    const current = path.join(tmp, 'current');
    const previous = path.join(tmp, 'previous');
    fs.writeFileSync(current, `${A}\n`);
    const tokens = new MetricsTokens({ token: A, tokenFile: current, previousTokenFile: previous }, testLogger());
    const server = new MetricsServer({ host: '127.0.0.1', port: 0, token: A, tokens, render, logger: testLogger() });
    await server.start();
    const status = async (t: string) => (await fetch(server.url, { headers: { authorization: `Bearer ${t}` } })).status;
    const eventually = async (t: string, want: number) => {
      const deadline = Date.now() + 5000;
      for (;;) {
        const s = await status(t);
        if (s === want || Date.now() > deadline) return s;
        await sleep(100);
      }
    };
    try {
      expect(await status(A)).to.equal(200);
      expect(await status(B)).to.equal(401);
      // step 1: the new token becomes current, the old one previous (previous file written first)
      fs.writeFileSync(previous, `${A}\n`);
      fs.writeFileSync(path.join(tmp, 'current.tmp'), `${B}\n`);
      fs.renameSync(path.join(tmp, 'current.tmp'), current);
      expect(await eventually(B, 200)).to.equal(200);
      expect(await status(A), 'the old token still works during the rotation').to.equal(200);
      // step 2 (after Prometheus sends B): the previous file is emptied, or removed
      fs.writeFileSync(previous, '');
      expect(await eventually(A, 401)).to.equal(401);
      expect(await status(B)).to.equal(200);
      fs.writeFileSync(previous, `${C}\n`);
      expect(await eventually(C, 200)).to.equal(200);
      fs.rmSync(previous);
      expect(await eventually(C, 401)).to.equal(401);
      // a current token file that turns invalid or disappears keeps the last good token
      fs.writeFileSync(current, 'short\n');
      await sleep(1200);
      expect(await status(B)).to.equal(200);
      expect(await status('short')).to.equal(401);
      fs.rmSync(current);
      await sleep(1200);
      expect(await status(B)).to.equal(200);
      fs.writeFileSync(current, `${C}\n`);
      expect(await eventually(C, 200)).to.equal(200);
      expect(await status(B)).to.equal(401);
    } finally {
      await server.stop();
    }
  });
});
