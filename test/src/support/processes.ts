import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { rawRequest } from '../client/signing-client';
import { sleep } from './expect';

/** The real `wcs` executable of the server package (node bin/wcs.js ...). */
export const WCS_BIN = path.join(path.dirname(require.resolve('@wcs/server/package.json')), 'bin', 'wcs.js');

type Env = Record<string, string | undefined>;

/** Every child this test process spawned and that has not exited yet. */
const live = new Set<ChildProcess>();

process.on('exit', () => {
  // Last resort if an after() hook could not run: never leave servers behind.
  for (const c of live) {
    try {
      c.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
});

function track(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `node wcs.js ...args` to completion. */
export function runCli(args: string[], env: Env, timeoutMs = 60_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WCS_BIN, ...args], { env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    track(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`wcs ${args.join(' ')} did not finish within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export function describeCli(args: string[], r: CliResult): string {
  return `wcs ${args.join(' ')} -> exit ${r.code}${r.signal ? ` (${r.signal})` : ''}\nstdout: ${r.stdout.slice(0, 2000)}\nstderr: ${r.stderr.slice(0, 2000)}`;
}

/** Parses the JSON a `--json` command printed on stdout. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function cliJson(args: string[], r: CliResult): any {
  try {
    return JSON.parse(r.stdout);
  } catch {
    throw new Error(`stdout is not JSON: ${describeCli(args, r)}`);
  }
}

/** A long-running `wcs start ...` child. */
export class WcsProcess {
  stdout = '';
  stderr = '';
  private exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exitStatus: { code: number | null; signal: NodeJS.Signals | null } | null = null;

  private constructor(
    readonly child: ChildProcess,
    readonly args: string[],
    readonly port: number,
  ) {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (this.stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (this.stderr += d));
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitStatus = { code, signal };
        resolve({ code, signal });
      });
    });
  }

  static spawn(args: string[], env: Env, port: number): WcsProcess {
    const child = spawn(process.execPath, [WCS_BIN, ...args], {
      env: { ...env, PORT: String(port) } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    track(child);
    return new WcsProcess(child, args, port);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.exitStatus === null;
  }

  describe(): string {
    return `wcs ${this.args.join(' ')} (pid ${this.child.pid}, port ${this.port}, exit ${JSON.stringify(this.exitStatus)})\nstdout: ${this.stdout.slice(-2000)}\nstderr: ${this.stderr.slice(-2000)}`;
  }

  /** Waits until GET /healthz answers 200; fails early if the process exits. */
  async waitHealthy(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`server exited before it became healthy: ${this.describe()}`);
      try {
        const res = await rawRequest(this.url, { method: 'GET', path: '/healthz' }, 2000);
        if (res.status === 200 && res.json?.code === 0) return;
      } catch {
        /* not listening yet */
      }
      await sleep(100);
    }
    throw new Error(`server not healthy after ${timeoutMs} ms: ${this.describe()}`);
  }

  /** Waits until stderr contains text; fails early if the process exits. */
  async waitForOutput(text: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.stderr.includes(text) || this.stdout.includes(text)) return;
      if (!this.running) throw new Error(`process exited before printing "${text}": ${this.describe()}`);
      await sleep(50);
    }
    throw new Error(`"${text}" not printed within ${timeoutMs} ms: ${this.describe()}`);
  }

  /**
   * Sends the signal and waits for the exit. If the process does not exit within
   * timeoutMs it is SIGKILLed and the result says so (killed: true).
   */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<{ code: number | null; signal: NodeJS.Signals | null; killed: boolean }> {
    if (!this.running) return { ...this.exitStatus!, killed: false };
    this.child.kill(signal);
    const timedOut = Symbol('timeout');
    const r = await Promise.race([this.exited, sleep(timeoutMs).then(() => timedOut)]);
    if (r !== timedOut) return { ...(r as { code: number | null; signal: NodeJS.Signals | null }), killed: false };
    this.child.kill('SIGKILL');
    const k = await this.exited;
    return { ...k, killed: true };
  }
}

/** Stops every child still running (SIGTERM, then SIGKILL after a grace). For after() hooks. */
export async function killAllChildren(graceMs = 10_000): Promise<void> {
  const children = [...live];
  await Promise.all(
    children.map(async (c) => {
      if (c.exitCode !== null || c.signalCode !== null) return;
      const gone = new Promise<void>((r) => c.once('exit', () => r()));
      c.kill('SIGTERM');
      const t = setTimeout(() => c.kill('SIGKILL'), graceMs);
      await gone;
      clearTimeout(t);
    }),
  );
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.setTimeout(1000);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('timeout', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(false));
  });
}

/** Whether `pid` is a postgres process now (its command name), so a pid read from a file is not some other process that reused it. */
export function isPostgres(pid: number): boolean {
  try {
    return /postgres/.test(fs.readFileSync(`/proc/${pid}/comm`, 'utf8')) || /postgres/.test(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    return false;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Cleanup for an embedded cluster under a data directory this test created: if its
 * postmaster (started by one of our wcs children) outlived them, fast-shut it down.
 * Returns the pid it had to stop, or null when nothing was left running.
 */
export async function stopLeftoverEmbeddedCluster(dataDir: string): Promise<number | null> {
  const pidFile = path.join(dataDir, 'pg', 'postmaster.pid');
  let pid: number;
  try {
    pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  } catch {
    return null;
  }
  // a stale file's pid may belong to another process by now (pids are reused): only a postgres is stopped
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid) || !isPostgres(pid)) return null;
  process.kill(pid, 'SIGINT'); // postgres fast shutdown
  const deadline = Date.now() + 15_000;
  while (alive(pid) && Date.now() < deadline) await sleep(100);
  if (alive(pid)) process.kill(pid, 'SIGKILL');
  return pid;
}

/** A copy of this process's environment for spawning wcs, minus anything that selects a database or key. */
export function cleanEnv(extra: Record<string, string>): Env {
  const env: Env = { ...process.env };
  for (const k of ['DATABASE_URL', 'WCS_MASTER_KEY', 'WCS_MASTER_KEY_FILE', 'WCS_CONFIG', 'WCS_DATA_DIR', 'WCS_EMBEDDED_PG_PORT', 'PORT', 'WCS_LOG_FORMAT', 'WCS_DEBUG']) {
    delete env[k];
  }
  return { ...env, HOST: '127.0.0.1', WCS_LOG_LEVEL: 'error', ...extra };
}
