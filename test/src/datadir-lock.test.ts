/**
 * One `wcs start` per data directory: a second start on the same WCS_DATA_DIR is refused at once
 * (exit 3, one line, JSON with --json) before it starts anything, and the running instance keeps
 * its devnets, its devnets.json and its API. A lock left by a process that is gone is taken over.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import { freePort } from '@wcs/server/testing';
import { rawRequest } from './client/signing-client';
import { cleanEnv, cliJson, describeCli, killAllChildren, portOpen, runCli, stopLeftoverEmbeddedCluster, WcsProcess } from './support/processes';

async function evmChainId(url: string): Promise<bigint> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }) });
  return BigInt(((await res.json()) as { result: string }).result);
}

describe('wcs start takes an exclusive lock on its data directory', function () {
  this.timeout(180_000);
  let dataDir: string;
  let env: Record<string, string | undefined>;
  let first: WcsProcess;

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-e2e-lock-'));
    env = cleanEnv({ WCS_DATA_DIR: dataDir, WCS_EMBEDDED_PG_PORT: String(await freePort()) });
    first = WcsProcess.spawn(['start'], env, await freePort());
    await first.waitHealthy(90_000);
  });

  after(async () => {
    await killAllChildren();
    if (dataDir) {
      await stopLeftoverEmbeddedCluster(dataDir);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a second start on the same data directory is refused quickly, changes nothing, and the first keeps serving', async () => {
    const lockFile = path.join(dataDir, 'wcs.lock');
    const holder = JSON.parse(fs.readFileSync(lockFile, 'utf8'));
    expect(holder.pid).to.equal(first.child.pid);
    const devnetsBefore = fs.readFileSync(path.join(dataDir, 'devnets.json'), 'utf8');
    const entriesBefore = fs.readdirSync(dataDir).sort();

    const port = await freePort();
    const args = ['start', '--json'];
    const t0 = Date.now();
    const r = await runCli(args, { ...env, PORT: String(port) }, 30_000);
    const took = Date.now() - t0;
    expect(r.code, describeCli(args, r)).to.equal(3);
    expect(took, 'refused at once, not after starting devnets or Postgres').to.be.below(10_000);
    const err = cliJson(args, r).error;
    expect(err).to.include({ code: 'DATA_DIR_LOCKED', name: 'DataDirLockedError' });
    expect(err.msg).to.include(dataDir).and.to.include(`pid ${first.child.pid}`);
    expect(r.stderr).to.equal('');

    const human = await runCli(['start'], { ...env, PORT: String(port) }, 30_000);
    expect(human.code, describeCli(['start'], human)).to.equal(3);
    expect(human.stderr.trim().split('\n'), human.stderr).to.have.length(1);
    expect(human.stderr).to.match(/^wcs: data directory .* is in use by another wcs start \(pid \d+, started /);

    expect(fs.readFileSync(path.join(dataDir, 'devnets.json'), 'utf8'), 'devnets.json rewritten').to.equal(devnetsBefore);
    expect(fs.readdirSync(dataDir).sort(), 'files left in the data directory').to.deep.equal(entriesBefore);
    expect(JSON.parse(fs.readFileSync(lockFile, 'utf8'))).to.deep.equal(holder);
    expect(await portOpen(port), 'the refused start opened its API port').to.equal(false);
    expect(first.running, first.describe()).to.equal(true);
    const health = await rawRequest(first.url, { method: 'GET', path: '/healthz' }, 5000);
    expect(health.status).to.equal(200);
    const devnets = JSON.parse(devnetsBefore);
    expect(await evmChainId(devnets.chains.ETH.url)).to.equal(BigInt(devnets.chains.ETH.evmChainId));
  });

  it('the lock goes with the process: removed on SIGTERM; a lock whose process is gone is taken over', async () => {
    const lockFile = path.join(dataDir, 'wcs.lock');
    const stopped = await first.stop('SIGTERM', 30_000);
    expect(stopped, first.describe()).to.deep.include({ code: 0, killed: false });
    expect(fs.existsSync(lockFile), 'lock left after a clean stop').to.equal(false);

    // a holder that died without cleaning up (kill -9): its pid no longer runs
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const stale = { pid: Number(dead.stdout), host: os.hostname(), startTime: new Date().toISOString(), procStart: null, token: 'deadbeefdeadbeefdeadbeef' };
    fs.writeFileSync(lockFile, JSON.stringify(stale));
    const next = WcsProcess.spawn(['start'], { ...env, WCS_DEVNETS: '0' }, await freePort());
    await next.waitHealthy(90_000);
    const holder = JSON.parse(fs.readFileSync(lockFile, 'utf8'));
    expect(holder.pid).to.equal(next.child.pid);
    expect(holder.token).to.not.equal(stale.token);
    expect(fs.readdirSync(dataDir).filter((f) => f.startsWith('wcs.lock.')), 'takeover or temporary files left').to.deep.equal([]);
    const s = await next.stop('SIGTERM', 30_000);
    expect(s, next.describe()).to.deep.include({ code: 0, killed: false });
    expect(fs.existsSync(lockFile)).to.equal(false);
  });

  it('a SIGTERM while the service is still starting (the lock taken, the API not yet up) is an orderly stop: exit 0, the lock removed', async () => {
    const lockFile = path.join(dataDir, 'wcs.lock');
    expect(fs.existsSync(lockFile), 'the previous test left a lock').to.equal(false);
    const proc = WcsProcess.spawn(['start'], { ...env, WCS_DEVNETS: '0' }, await freePort());
    // the lock is the first thing the start command does; the signal handlers are installed before it
    const deadline = Date.now() + 60_000;
    for (;;) {
      const holder = fs.existsSync(lockFile) ? (JSON.parse(fs.readFileSync(lockFile, 'utf8')) as { pid: number }) : null;
      if (holder?.pid === proc.child.pid) break;
      expect(proc.running, proc.describe()).to.equal(true);
      expect(Date.now(), 'the start never took the lock').to.be.below(deadline);
      await new Promise((r) => setTimeout(r, 5));
    }
    const healthyAtSignal = await portOpen(proc.port);
    const s = await proc.stop('SIGTERM', 60_000);
    expect(s, `${proc.describe()} (API up when signalled: ${healthyAtSignal})`).to.deep.include({ code: 0, killed: false });
    expect(fs.existsSync(lockFile), 'lock left after a stop during startup').to.equal(false);
  });
});
