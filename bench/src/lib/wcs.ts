/** The service under test: applications made with the operator CLI and the real `wcs start --api-only`. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createTestDatabase, freePort, prepareTestKeystore, type TestDatabase } from '@wcs/server/testing';
import { stopCluster } from './postgres';
import { RESULTS_DIR } from './report';
import { checkAborted, httpRequest, runNode, startChild, stopChild, waitReady, withTimeout, type Child, type CleanupStack } from './processes';
import { signedJsonPost, type Credentials } from './signing';

export const SERVER_DIR = path.dirname(require.resolve('@wcs/server/package.json'));
export const WCS_BIN = path.join(SERVER_DIR, 'bin', 'wcs.js');

/** `wcs app create --name <name> --env test --chains <chains> --json`; returns the credentials it prints once. */
export async function createAppViaCli(env: NodeJS.ProcessEnv, name: string, chains: string[]): Promise<Credentials & { id: number | null }> {
  const created = await runNode('wcs app create', [WCS_BIN, 'app', 'create', '--name', name, '--env', 'test', '--chains', chains.join(','), '--json'], env, 120_000);
  const app = JSON.parse(created.slice(created.indexOf('{'))) as { id?: number; apiKey?: string; apiSecret?: string };
  if (!app.apiKey || !app.apiSecret) throw new Error(`wcs app create printed no apiKey/apiSecret:\n${created}`);
  return { apiKey: app.apiKey, apiSecret: app.apiSecret, id: typeof app.id === 'number' ? app.id : null };
}

/** `wcs app set-callback --app <id> --biz-type <type> --url <url> --json`. */
export async function setCallbackViaCli(env: NodeJS.ProcessEnv, appId: number, bizType: string, url: string): Promise<void> {
  await runNode('wcs app set-callback', [WCS_BIN, 'app', 'set-callback', '--app', String(appId), '--biz-type', bizType, '--url', url, '--json'], env, 120_000);
}

/** `node [--cpu-prof ...] [nodeArgs] wcs.js start <mode>`; the profile directory when profiling. */
export function wcsStartArgs(mode: '--api-only' | '--workers-only', nodeArgs: string[], cpuProf: boolean, profileName: string): { args: string[]; profileDir: string | null } {
  const args = [...nodeArgs, WCS_BIN, 'start', mode];
  if (!cpuProf) return { args, profileDir: null };
  const profileDir = path.join(RESULTS_DIR, 'profiles');
  fs.mkdirSync(profileDir, { recursive: true });
  args.unshift('--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${profileName}-${Date.now()}.cpuprofile`);
  return { args, profileDir };
}

/**
 * API rate limits far above any load a benchmark makes: the limiter stays on its normal path (a
 * token taken per request, leased from the shared bucket) but never refuses. The ops-overhead
 * scenario measures what that path costs against limits off.
 */
export const LIMITS_FAR_ABOVE_LOAD: Readonly<Record<string, string>> = { WCS_RATE_LIMIT_RPS: '1000000', WCS_RATE_LIMIT_BURST: '10000000' };

export interface ApiServer {
  child: Child;
  port: number;
  /** Where `--cpu-prof` writes the profile (BENCH_CPU_PROF), else null. */
  profileDir: string | null;
}

/**
 * Starts `node [nodeArgs] wcs start --api-only` on a free port (under `--cpu-prof` when
 * asked), registers its stop with the cleanup stack and waits for /healthz.
 * `env(port)` gives the server's environment.
 */
export async function startApiServer(o: {
  env: (port: number) => NodeJS.ProcessEnv;
  nodeArgs: string[];
  cpuProf: boolean;
  cleanup: CleanupStack;
}): Promise<ApiServer> {
  const port = await freePort();
  const { args, profileDir } = wcsStartArgs('--api-only', o.nodeArgs, o.cpuProf, 'server');
  const child = startChild('server', args, o.env(port));
  // Generous grace: with --cpu-prof the profile is written at exit.
  o.cleanup.push('stop server', () => stopChild(child, o.cpuProf ? 60_000 : 15_000));
  await waitReady(child, port, '/healthz', 60_000);
  return { child, port, profileDir };
}

/**
 * Starts `node [nodeArgs] wcs start --workers-only` (the callback dispatcher and the other
 * background workers; no HTTP port), under `--cpu-prof` when asked, and registers its stop
 * with the cleanup stack. It has no readiness endpoint: the caller finds out by its work.
 */
export function startWorkers(o: { env: NodeJS.ProcessEnv; nodeArgs: string[]; cpuProf: boolean; cleanup: CleanupStack }): { child: Child; profileDir: string | null } {
  const { args, profileDir } = wcsStartArgs('--workers-only', o.nodeArgs, o.cpuProf, 'workers');
  const child = startChild('workers', args, o.env);
  o.cleanup.push('stop workers', () => stopChild(child, o.cpuProf ? 60_000 : 15_000));
  return { child, profileDir };
}

/** Prints the .cpuprofile files in profileDir (after the server has stopped and written its profile). */
export function printProfiles(profileDir: string | null, newerThanMs = 0): void {
  if (!profileDir) return;
  const profiles = fs
    .readdirSync(profileDir)
    .filter((f) => f.endsWith('.cpuprofile') && fs.statSync(path.join(profileDir, f)).mtimeMs >= newerThanMs);
  process.stdout.write(`cpu profiles: ${profiles.map((f) => path.relative(process.cwd(), path.join(profileDir, f))).join(', ') || '(none written)'}\n`);
}

/**
 * Removes the software key store prepareTestKeystore() made (os.tmpdir()/wcs-test-ks-*),
 * named by its WCS_KEYSTORE_FILE; anything else is left alone.
 */
export function removeTestKeystore(env: Record<string, string>): void {
  const file = env.WCS_KEYSTORE_FILE;
  if (!file) return;
  const dir = path.dirname(path.resolve(file));
  if (path.dirname(dir) === path.resolve(os.tmpdir()) && path.basename(dir).startsWith('wcs-test-ks-')) fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * A fresh test database and the test key store, each registered for cleanup (with stopping the
 * embedded cluster). Every server scenario starts from this.
 */
export async function prepareBenchStorage(cleanup: CleanupStack): Promise<TestDatabase> {
  cleanup.push('stop test cluster', () => stopCluster());
  const db = await createTestDatabase();
  cleanup.push('drop database', () => withTimeout(db.drop(), 30_000));
  checkAborted();
  const ksEnv = await prepareTestKeystore();
  cleanup.push('remove test key store', async () => removeTestKeystore(ksEnv));
  checkAborted();
  return db;
}

/**
 * A WCS_CONFIG for scenarios that enable every test chain: EOS issues addresses only with a
 * deposit account (the service refuses to enable it otherwise), so the EOS test chain gets one
 * (never used on a node: no benchmark reaches EOS). The file is removed by the cleanup stack.
 */
export function allChainsConfigEnv(cleanup: CleanupStack): Record<string, string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-bench-config-'));
  cleanup.push('remove bench config', async () => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'config.json');
  const eos = { id: 108, code: 'EOS', name: 'EOS Jungle Testnet', family: 'eos', environment: 'test', network: 'jungle4', nativeSymbol: 'EOS', decimals: 4, confirmations: 1, evmChainId: null, options: { depositAccount: 'wcsdeposit11' } };
  fs.writeFileSync(file, JSON.stringify({ chains: [eos] }));
  return { WCS_CONFIG: file };
}

const ADDRESS_CREATE_PATH = '/api/v1/wallet/address/create';

/** One deposit address per user through the signed API (`address/create`), 16 requests at a time; the addresses in the users' order. */
export async function createAddresses(port: number, app: Credentials, chainCode: string, users: readonly string[]): Promise<string[]> {
  const res: string[] = new Array(users.length);
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < users.length) {
      const i = next++;
      const { body, headers } = signedJsonPost(app, ADDRESS_CREATE_PATH, JSON.stringify({ chainCode, externalUserId: users[i] }));
      const r = await httpRequest(port, 'POST', ADDRESS_CREATE_PATH, headers, body);
      const e = JSON.parse(r.body) as { code: number; data?: { address: string } };
      if (r.status !== 200 || e.code !== 0 || !e.data?.address) throw new Error(`address/create ${users[i]}: HTTP ${r.status} ${r.body.slice(0, 200)}`);
      res[i] = e.data.address;
    }
  }));
  return res;
}
