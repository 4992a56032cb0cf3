/**
 * Dev mode end to end, as the README tells a newcomer: `wcs start` with no DATABASE_URL and no
 * WCS_RPC_* starts an embedded Postgres and local anvil devnets for the test EVM chains, and
 * examples/deposit-demo.js (a merchant) creates an address, sends devnet ETH and the devnet token
 * to it, and receives and verifies the signed recharge callbacks up to SETTLED.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import { freePort } from '@wcs/server/testing';
import { cleanEnv, cliJson, describeCli, killAllChildren, portOpen, runCli, stopLeftoverEmbeddedCluster, WcsProcess } from './support/processes';

const DEMO = path.resolve(__dirname, '..', '..', 'examples', 'deposit-demo.js');

function runDemo(args: string[], env: Record<string, string | undefined>, timeoutMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DEMO, ...args], { env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`demo did not finish in ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe('dev mode: wcs start with local devnets, and the README\'s demo merchant', function () {
  this.timeout(180_000);
  let dataDir: string;
  let env: Record<string, string | undefined>;
  let server: WcsProcess;

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-e2e-dev-'));
    // as a fresh dev start logs (info); hot wallets read every second, so the catalogue tokens absent from the devnets are met during the test
    env = cleanEnv({ WCS_DATA_DIR: dataDir, WCS_EMBEDDED_PG_PORT: String(await freePort()), WCS_HOT_WALLET_REFRESH_MS: '1000', WCS_LOG_LEVEL: 'info' });
    server = WcsProcess.spawn(['start'], env, await freePort());
    await server.waitHealthy(90_000);
  });

  after(async () => {
    await killAllChildren();
    await stopLeftoverEmbeddedCluster(dataDir);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts an anvil devnet per test EVM chain with its EIP-155 id, and lists the devnet token', async () => {
    const devnets = JSON.parse(fs.readFileSync(path.join(dataDir, 'devnets.json'), 'utf8'));
    expect(Object.keys(devnets.chains).sort()).to.deep.equal(['BSC', 'ETH', 'POLYGON']);
    expect(devnets.chains.ETH.evmChainId).to.equal(11155111);
    for (const c of Object.values(devnets.chains) as Array<{ url: string; evmChainId: number }>) {
      const res = await fetch(c.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }) });
      expect(BigInt(((await res.json()) as { result: string }).result)).to.equal(BigInt(c.evmChainId));
    }
    expect(devnets.token).to.include({ id: 10299, symbol: 'DUSD' });
  });

  it('the demo merchant sees PENDING, CONFIRMED and SETTLED for a devnet ETH and a DUSD deposit, every callback verified', async () => {
    const args = ['app', 'create', '--name', 'demo', '--env', 'test', '--chains', 'ETH', '--json'];
    const r = await runCli(args, env);
    expect(r.code, describeCli(args, r)).to.equal(0);
    const app = cliJson(args, r);
    const demo = await runDemo([String(app.id), app.apiKey, app.apiSecret], { ...env, BASE_URL: server.url }, 120_000);
    expect(demo.code, demo.out).to.equal(0);
    for (const status of ['PENDING', 'CONFIRMED', 'SETTLED']) {
      expect(demo.out.match(new RegExp(`callback recharge id=\\d+ ${status}.*signature ok`, 'g')) ?? [], `${status} callbacks:\n${demo.out}`).to.have.length(2);
    }
    expect(demo.out).to.not.include('REJECTED');
    expect(demo.out).to.match(/recharge\/get \d+: 0\.5 ETH on ETH, SETTLED/);
    expect(demo.out).to.match(/recharge\/get \d+: 25 DUSD on ETH, SETTLED/);
  });

  it('`wcs chains` and `wcs hotwallets` (run while the service runs) list the devnet token; CLI commands keep it active', async () => {
    const args = ['chains', '--env', 'test', '--json'];
    const r = await runCli(args, env);
    expect(r.code, describeCli(args, r)).to.equal(0);
    type ChainRow = { code: string; tokens: Array<{ id: number; symbol: string }>; deposits: string; payouts: string; payoutsUnavailableReason: string | null };
    const chains = cliJson(args, r) as ChainRow[];
    const eth = chains.find((c) => c.code === 'ETH')!;
    expect(eth.tokens.map((t) => [t.id, t.symbol])).to.deep.include([10299, 'DUSD']);
    // the devnet chains are scanned and paid on; a chain without a node says why
    expect([eth.deposits, eth.payouts, eth.payoutsUnavailableReason]).to.deep.equal(['ENABLED', 'ENABLED', null]);
    const btc = chains.find((c) => c.code === 'BTC')!;
    expect([btc.deposits, btc.payouts, btc.payoutsUnavailableReason]).to.deep.equal(['NO_RPC', 'UNAVAILABLE', 'no RPC endpoint (set WCS_RPC_TEST_BTC)']);
    const hw = ['hotwallets', '--json'];
    const h = await runCli(hw, env);
    expect(h.code, describeCli(hw, h)).to.equal(0);
    const rows = (cliJson(hw, h) as Array<{ chainCode: string; token: string | null; reason?: string }>).filter((x) => x.chainCode === 'ETH');
    expect(rows.length, h.stdout).to.be.above(0);
    // either the worker made the ETH hot wallet (then DUSD is one of its tokens) or it is about to: never "no RPC endpoint"
    if (rows[0]!.token === null) expect(rows[0]!.reason, h.stdout).to.match(/^not made yet/);
    else expect(rows.map((x) => x.token), h.stdout).to.include('DUSD');
  });

  it('stopping the service stops its devnets', async () => {
    const devnets = JSON.parse(fs.readFileSync(path.join(dataDir, 'devnets.json'), 'utf8'));
    const stopped = await server.stop('SIGTERM', 30_000);
    expect(stopped.killed, server.describe()).to.equal(false);
    for (const c of Object.values(devnets.chains) as Array<{ url: string }>) {
      expect(await portOpen(Number(new URL(c.url).port)), c.url).to.equal(false);
    }
  });

  it('the whole run logged no stack trace: expected conditions (a catalogue token absent from the devnet, an empty hot wallet) are one line each', () => {
    const log = server.stderr;
    expect(log).to.contain('hot wallet balance not read'); // the absent token was met
    expect(log, log.slice(0, 4000)).to.not.match(/"stack"|\n\s+at \S+ \(/);
    expect(log.split('\n').filter((l) => /"level":"error"/.test(l)), 'no error-level lines').to.deep.equal([]);
  });
});
