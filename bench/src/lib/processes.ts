/**
 * Child processes (each in its own process group, so nothing is left behind), small HTTP
 * helpers, signal handling (first Ctrl-C: stop and clean up; second: kill and exit) and
 * the cleanup stack the benchmarks run in `finally`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as http from 'node:http';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- abort handling

let abortedBy: string | null = null;
const abortHooks = new Set<() => void>();

/** The signal that aborted the run, or null. */
export function aborted(): string | null {
  return abortedBy;
}

export function checkAborted(): void {
  if (abortedBy) throw new Error(`aborted by ${abortedBy}`);
}

/** Called once when a signal aborts the run (e.g. to stop a running load); returns an unregister function. */
export function onAbort(fn: () => void): () => void {
  abortHooks.add(fn);
  return () => abortHooks.delete(fn);
}

const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function onSignal(sig: NodeJS.Signals): void {
  if (abortedBy) {
    // Second signal: do not wait for a graceful cleanup any more.
    for (const c of children) killGroup(c, 'SIGKILL');
    process.exit(130);
  }
  abortedBy = sig;
  process.stderr.write(`[bench] ${sig}: stopping and cleaning up (send again to force)\n`);
  for (const fn of abortHooks) fn();
}

/**
 * Runs a benchmark's main: installs the signal handlers and a last-resort exit hook that
 * kills every child still running, then exits explicitly once main (and its cleanup) is
 * done, so open handles cannot keep the process alive.
 */
export function runMain(main: () => Promise<number>, onExit?: () => void): void {
  for (const sig of SIGNALS) process.on(sig, onSignal);
  process.on('exit', () => {
    for (const c of children) killGroup(c, 'SIGKILL');
    onExit?.();
  });
  main().then(
    (code) => process.exit(abortedBy ? 130 : code),
    (e: unknown) => {
      if (abortedBy) process.stderr.write(`bench aborted by ${abortedBy}; cleaned up\n`);
      else process.stderr.write(`bench failed: ${(e as Error)?.stack ?? e}\n`);
      process.exit(abortedBy ? 130 : 1);
    },
  );
}

// ---------------------------------------------------------------- cleanup stack

/** Cleanup steps run in reverse order; a failing step is reported and the others still run. */
export class CleanupStack {
  private readonly steps: Array<{ what: string; fn: () => Promise<void> }> = [];

  push(what: string, fn: () => Promise<void>): void {
    this.steps.push({ what, fn });
  }

  async run(): Promise<void> {
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step.fn();
      } catch (e) {
        process.stderr.write(`[bench] cleanup (${step.what}) failed: ${(e as Error)?.message ?? e}\n`);
      }
    }
  }
}

export function withTimeout(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.then(() => undefined),
    new Promise<void>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------- child processes

export interface Child {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Last lines the child wrote (for error reports). */
  tail(): string;
  hasExited(): boolean;
}

const children = new Set<Child>();

/** Spawns `node ...args` as its own process group; output is forwarded to stderr with a prefix. */
export function startChild(name: string, args: string[], env: NodeJS.ProcessEnv): Child {
  const proc = spawn(process.execPath, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let done = false;
  const forward = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      lines.push(line);
      if (lines.length > 40) lines.shift();
      process.stderr.write(`[${name}] ${line}\n`);
    }
  };
  proc.stdout!.on('data', forward);
  proc.stderr!.on('data', forward);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
    proc.once('error', (e) => {
      done = true;
      lines.push(String(e));
      resolve({ code: null, signal: null });
    });
  });
  const child: Child = { name, proc, exited, tail: () => lines.join('\n'), hasExited: () => done };
  children.add(child);
  return child;
}

export function killGroup(child: Child, signal: NodeJS.Signals): void {
  if (child.proc.pid === undefined) return;
  try {
    process.kill(-child.proc.pid, signal);
  } catch {
    try {
      child.proc.kill(signal);
    } catch {
      /* already gone */
    }
  }
}

/** SIGTERM to the child's process group, SIGKILL after graceMs. */
export async function stopChild(child: Child, graceMs: number): Promise<void> {
  if (!child.hasExited()) {
    killGroup(child, 'SIGTERM');
    const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs).unref());
    if ((await Promise.race([child.exited, timer])) === 'timeout') {
      process.stderr.write(`[bench] ${child.name} did not stop within ${graceMs} ms; killing it\n`);
      killGroup(child, 'SIGKILL');
      await child.exited;
    }
  }
  // Anything else left in the group (there should be nothing).
  killGroup(child, 'SIGKILL');
  children.delete(child);
}

/** Runs `node ...args` to completion and returns its stdout (throws on a non-zero exit). */
export async function runNode(name: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<string> {
  const proc = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString('utf8')));
  proc.stderr!.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve, reject) => {
    proc.once('error', reject);
    proc.once('exit', (c) => resolve(c));
  }).finally(() => clearTimeout(timer));
  if (code !== 0) throw new Error(`${name} exited with ${code}\n${err}${out}`);
  return out;
}

// ---------------------------------------------------------------- HTTP

export interface HttpResponse {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** One request over a fresh connection to 127.0.0.1 (no agent, no keep-alive). */
export function httpRequest(port: number, method: string, p: string, headers: Record<string, string> = {}, body?: Buffer): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const h = body ? { ...headers, 'Content-Length': String(body.length) } : headers;
    const req = http.request({ host: '127.0.0.1', port, method, path: p, headers: h, agent: false, timeout: 5000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

export function httpGet(port: number, p: string, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return httpRequest(port, 'GET', p, headers);
}

/** Polls GET p until it answers 200, failing fast if the child exits. */
export async function waitReady(child: Child, port: number, p: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    checkAborted();
    if (child.hasExited()) throw new Error(`${child.name} exited before it was ready:\n${child.tail()}`);
    try {
      const r = await httpGet(port, p);
      if (r.status === 200) return;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`${child.name} not ready on port ${port} within ${timeoutMs} ms:\n${child.tail()}`);
    await sleep(100);
  }
}
