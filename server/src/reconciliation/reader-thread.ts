import { Worker } from 'node:worker_threads';
import * as path from 'node:path';
import {
  ChainRpcError, WcsError,
  type BalanceAnswer, type BalanceHistory, type BalancePoint, type BalanceQuery, type BalanceReader, type ChainDefinition, type ChainEndpoint, type ChainRpcErrorName, type ListedOutput,
} from '@wcs/core';
import type { ReaderReply, ReaderRequest, ThreadError, ReaderMethod } from './reader-thread-protocol';

/** What the thread is asked to build: the adapter package (loaded by name there), the chain, the endpoint. */
export interface ReaderThreadSpec {
  readonly pluginPackage: string;
  readonly chain: ChainDefinition;
  readonly endpoint: ChainEndpoint;
}

const WORKER_FILE = path.join(__dirname, 'reader-thread-worker.js');

/**
 * A chain's BalanceReader running in a worker thread of its own (WCS_RECONCILE_READER=thread, the
 * default): the reader's JSON-RPC coding, address checks and decoding (most of a pass's CPU on a
 * large chain) run beside the pass's database work instead of on the same JavaScript thread.
 * The thread loads the adapter package by name and builds the same reader the process would
 * (adapter.createBalanceReader(endpoint)); calls and answers cross as structured clones (bigints
 * included); a ChainRpcError comes back as a ChainRpcError with its name and node details, so the
 * pass handles a reorg under the read (RPC_INCONSISTENT) as with a reader in the process.
 *
 * The thread does not keep the process alive while no call is pending (a `wcs reconcile run`
 * exits when its pass is done); close() ends it.
 */
export class ThreadedBalanceReader implements BalanceReader {
  readonly unspentOutputs?: BalanceReader['unspentOutputs'];
  readonly nativeChanges?: BalanceReader['nativeChanges'];
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  private next = 1;
  private known: BalanceHistory;
  private failed: Error | null = null;
  private readonly markReady: { resolve: () => void; reject: (e: unknown) => void } = { resolve: () => undefined, reject: () => undefined };
  private readonly started = new Promise<void>((resolve, reject) => Object.assign(this.markReady, { resolve, reject }));

  /** `inline`: the same reader built in this process, to learn its history before the first head() and which optional reads it has. */
  constructor(spec: ReaderThreadSpec, inline: BalanceReader) {
    this.known = inline.history;
    this.started.catch(() => undefined); // awaited by ready(); a failure also fails every call
    this.worker = new Worker(WORKER_FILE, { workerData: spec });
    this.worker.unref();
    this.worker.on('message', (m: ReaderReply) => this.settle(m));
    this.worker.on('error', (e) => this.fail(e));
    this.worker.on('exit', (code) => this.fail(new Error(`the balance reader thread exited (code ${code})`)));
    if (inline.unspentOutputs) this.unspentOutputs = (addresses) => this.ask('unspentOutputs', [addresses]) as Promise<{ at: BalancePoint; outputs: ReadonlyArray<readonly ListedOutput[]> }>;
    if (inline.nativeChanges) this.nativeChanges = (items) => this.ask('nativeChanges', [items]) as Promise<ReadonlyArray<bigint | null>>;
  }

  /** The thread failed or was closed: every call fails; the owner builds a new reader. */
  get broken(): boolean {
    return this.failed !== null;
  }

  get history(): BalanceHistory {
    return this.known;
  }

  head(): Promise<BalancePoint> {
    return this.ask('head', []) as Promise<BalancePoint>;
  }

  balancesAt(queries: readonly BalanceQuery[], at: BalancePoint): Promise<{ readonly at: BalancePoint; readonly answers: readonly BalanceAnswer[] }> {
    return this.ask('balancesAt', [queries, at]) as Promise<{ at: BalancePoint; answers: readonly BalanceAnswer[] }>;
  }

  /** Ends the thread; pending calls fail. */
  async close(): Promise<void> {
    this.fail(new Error('the balance reader thread was closed'));
    await this.worker.terminate();
  }

  private ask(method: ReaderMethod, args: unknown[]): Promise<unknown> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) this.worker.ref();
      try {
        this.worker.postMessage({ id, method, args } satisfies ReaderRequest);
      } catch (e) {
        this.pending.delete(id);
        if (this.pending.size === 0) this.worker.unref();
        reject(e);
      }
    });
  }

  /**
   * Resolves once the thread has loaded the adapter and built its reader (a process does this once,
   * before its first pass); rejects when it could not.
   */
  ready(): Promise<void> {
    return this.started;
  }

  private settle(m: ReaderReply): void {
    if ('ready' in m) {
      this.known = m.history;
      this.markReady.resolve();
      return;
    }
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (this.pending.size === 0) this.worker.unref();
    this.known = m.history;
    if (m.ok) p.resolve(m.value);
    else p.reject(revive(m.error));
  }

  private fail(e: Error): void {
    this.failed ??= e;
    this.markReady.reject(e);
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }
}

/** The thread's error as the process's own kind: ChainRpcError (name and node details kept), WcsError (code), TypeError, or Error. */
export function revive(e: ThreadError): Error {
  switch (e.kind) {
    case 'ChainRpcError':
      return new ChainRpcError(e.errorName as ChainRpcErrorName, e.message, {
        method: e.method ?? undefined, rpcCode: e.rpcCode ?? undefined, nodeCode: e.nodeCode ?? undefined, nodeMessage: e.nodeMessage ?? undefined,
        responseStatus: e.responseStatus ?? undefined, attempts: e.attempts ?? undefined,
      });
    case 'WcsError':
      return new WcsError({ code: e.code, name: e.errorName, httpStatus: e.httpStatus, errorClass: e.errorClass, message: e.message }, { message: e.message, details: e.details ?? undefined });
    case 'TypeError':
      return new TypeError(e.message);
    default:
      return new Error(e.message);
  }
}
