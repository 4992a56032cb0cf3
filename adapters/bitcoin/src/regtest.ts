/**
 * @wcs/adapter-bitcoin/regtest: a bcoin regtest node for tests (bcoin is a devDependency: install
 * it to use this). The node runs in a child process (src/regtest-node.ts) so that its block
 * validation does not share the test's event loop and stop() can always end it.
 *
 * bcoin facts the helpers work around: its bech32 hrp is "rb" (chain option bech32Hrp: "rb"); its
 * regtest base58 versions are 0x3c / 0x26, not Bitcoin Core's 0x6f / 0xc4, so its legacy
 * addresses are not those of our regtest chains (use segwit addresses with this node); the
 * wallet's getnewaddress answers in mainnet encoding (bcoin 1.0.2), re-encoded here; the wallet
 * RPC takes amounts only as JSON numbers, written here as exact decimal literals from satoshis.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { address as btcAddress } from 'bitcoinjs-lib';
import { bitcoinRpc, RawJson } from './rpc';
import type { JsonRpcClient } from '@wcs/core';

/** bcoin's regtest bech32 human-readable part. */
export const BCOIN_REGTEST_HRP = 'rb';
/** Height from which bcoin's regtest enforces segwit (BIP9: three 144-block windows). */
export const SEGWIT_ACTIVE_HEIGHT = 432;
/** Satoshis per BTC. */
const COIN = 100_000_000n;

export interface RegtestOptions {
  /** The RPC password (bcoin's API key); default random. */
  readonly apiKey?: string;
  /**
   * Blocks mined to the wallet before startRegtest resolves (default 432). bcoin's regtest
   * activates segwit by BIP9 signalling in 144-block windows (started at 144, locked in at 288,
   * active from 432); before that its mempool refuses witness spends ("no-witness-yet"), and the
   * wallet's coins are all P2WPKH. Coinbase outputs mature after 100 blocks.
   */
  readonly initialBlocks?: number;
  /** How long the node may take to answer RPC (default 30 000 ms). */
  readonly startTimeoutMs?: number;
  /** bcoin log level written to this process's stderr (default 'none'; 'error', 'warning', 'info', 'debug'). */
  readonly logLevel?: 'none' | 'error' | 'warning' | 'info' | 'debug';
}

export interface RegtestOutput {
  readonly address: string;
  readonly sats: bigint;
}

export interface RegtestNode {
  /** Node JSON-RPC endpoint with credentials: http://x:<apiKey>@127.0.0.1:<port> (a ChainEndpoint url). */
  readonly url: string;
  /** Wallet JSON-RPC endpoint, same credentials. */
  readonly walletUrl: string;
  readonly apiKey: string;
  /** "rb". */
  readonly hrp: string;
  /** A P2WPKH address of the node's wallet: where mine() pays by default. */
  readonly walletAddress: string;
  /** One node RPC call (no retries); throws ChainRpcError. */
  rpc<T = unknown>(method: string, params?: readonly unknown[]): Promise<T>;
  /** One wallet RPC call (no retries); throws ChainRpcError. */
  walletRpc<T = unknown>(method: string, params?: readonly unknown[]): Promise<T>;
  /** Mines n blocks (to walletAddress by default), waits for the wallet to see them, returns their hashes. */
  mine(n: number, toAddress?: string): Promise<string[]>;
  /** A fresh P2WPKH receive address of the node's wallet ("rb1q…"). */
  newAddress(): Promise<string>;
  /** Pays sats to an address from the wallet (sendtoaddress); the txid. The tx is in the mempool when this resolves. */
  send(toAddress: string, sats: bigint): Promise<string>;
  /** One transaction paying every output (sendmany, unconfirmed coins allowed); addresses must differ. The txid. */
  sendMany(outputs: readonly RegtestOutput[]): Promise<string>;
  /** Waits until the wallet has processed the node's tip (after invalidateblock, for instance). */
  syncWallet(): Promise<void>;
  /** Ends the node process (idempotent). */
  stop(): Promise<void>;
}

/** Exact decimal BTC text for a positive satoshi amount (no float on the way). */
export function satsToBtcText(sats: bigint): string {
  if (typeof sats !== 'bigint' || sats <= 0n) throw new RangeError('sats must be a positive bigint');
  return `${sats / COIN}.${(sats % COIN).toString().padStart(8, '0')}`;
}

/** The child entry next to this file (dist/regtest-node.js). */
const CHILD = path.join(__dirname, 'regtest-node.js');

/**
 * Starts a bcoin regtest node (NODE_BACKEND=js, memory, no listening, workers off, indexTX,
 * indexAddress and replaceByFee on, wallet plugin with segwit keys) on free local ports, waits
 * until RPC answers, mines `initialBlocks` to its wallet. Rejects with the node's stderr when it cannot start.
 */
export async function startRegtest(options: RegtestOptions = {}): Promise<RegtestNode> {
  const apiKey = options.apiKey ?? randomBytes(18).toString('base64url');
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  const prefix = mkdtempSync(path.join(tmpdir(), 'wcs-bcoin-'));
  const child = fork(CHILD, [JSON.stringify({ apiKey, prefix, logLevel: options.logLevel ?? 'none' })], {
    env: { ...process.env, NODE_BACKEND: 'js' },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    execArgv: [],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString('utf8')).slice(-4000);
    if (options.logLevel && options.logLevel !== 'none') process.stderr.write(d);
  });
  child.stdout!.on('data', (d: Buffer) => {
    if (options.logLevel && options.logLevel !== 'none') process.stderr.write(d);
  });
  const cleanup = () => rmSync(prefix, { recursive: true, force: true });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(cleanup);

  let ports: { port: number; walletPort: number };
  try {
    ports = await waitReady(child, startTimeoutMs, () => stderr);
  } catch (e) {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
    throw e;
  }
  const node = new RegtestHandle(child, exited, () => stderr, apiKey, ports.port, ports.walletPort);
  try {
    await node.waitForRpc(startTimeoutMs);
    await node.init(options.initialBlocks ?? SEGWIT_ACTIVE_HEIGHT);
  } catch (e) {
    await node.stop();
    throw new Error(`bcoin regtest node did not come up: ${(e as Error).message}${stderr ? `\n${stderr}` : ''}`, { cause: e });
  }
  return node;
}

function waitReady(child: ChildProcess, timeoutMs: number, stderr: () => string): Promise<{ port: number; walletPort: number }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`bcoin regtest node not ready within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (m: { type?: string; port?: number; walletPort?: number; message?: string }) => {
      if (m?.type === 'ready') finish(null, { port: m.port!, walletPort: m.walletPort! });
      else if (m?.type === 'fatal') finish(new Error(`bcoin regtest node failed to start: ${m.message}`));
    };
    const onExit = (code: number | null, signal: string | null) => finish(new Error(`bcoin regtest node exited (${signal ?? code}) before it was ready${stderr() ? `:\n${stderr()}` : ''}`));
    const onError = (e: Error) => finish(e);
    function finish(err: Error | null, value?: { port: number; walletPort: number }) {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      child.off('error', onError);
      if (err) reject(err);
      else resolve(value!);
    }
    child.on('message', onMessage);
    child.on('exit', onExit);
    child.on('error', onError);
  });
}

class RegtestHandle implements RegtestNode {
  readonly url: string;
  readonly walletUrl: string;
  readonly hrp = BCOIN_REGTEST_HRP;
  walletAddress = '';
  private readonly node: JsonRpcClient;
  private readonly wallet: JsonRpcClient;
  private nextSync = 1;
  private stopped: Promise<void> | null = null;

  constructor(
    private readonly child: ChildProcess,
    private readonly exited: Promise<void>,
    private readonly stderr: () => string,
    readonly apiKey: string,
    port: number,
    walletPort: number,
  ) {
    this.url = `http://x:${encodeURIComponent(apiKey)}@127.0.0.1:${port}`;
    this.walletUrl = `http://x:${encodeURIComponent(apiKey)}@127.0.0.1:${walletPort}`;
    // Wallet and mining calls are not idempotent: no retries.
    this.node = bitcoinRpc({ url: this.url, timeoutMs: 60_000 }, { attempts: 1 });
    this.wallet = bitcoinRpc({ url: this.walletUrl, timeoutMs: 60_000 }, { attempts: 1 });
  }

  async waitForRpc(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        await this.node.call('getblockcount');
        await this.wallet.call('getwalletinfo');
        return;
      } catch (e) {
        if (Date.now() > deadline) throw e;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  async init(initialBlocks: number): Promise<void> {
    this.walletAddress = await this.newAddress();
    if (initialBlocks > 0) await this.mine(initialBlocks);
  }

  rpc<T = unknown>(method: string, params: readonly unknown[] = []): Promise<T> {
    return this.node.call<T>(method, params);
  }

  walletRpc<T = unknown>(method: string, params: readonly unknown[] = []): Promise<T> {
    return this.wallet.call<T>(method, params);
  }

  async mine(n: number, toAddress?: string): Promise<string[]> {
    if (!Number.isInteger(n) || n < 1) throw new RangeError('mine(n): n must be a positive integer');
    const hashes = await this.rpc<string[]>('generatetoaddress', [n, toAddress ?? this.walletAddress]);
    await this.syncWallet();
    return hashes;
  }

  async newAddress(): Promise<string> {
    // bcoin 1.0.2's getnewaddress encodes for mainnet ("bc1q…"): same witness program, our hrp.
    const text = await this.walletRpc<string>('getnewaddress', ['default']);
    const { version, data } = btcAddress.fromBech32(text);
    return btcAddress.toBech32(data, version, this.hrp);
  }

  async send(toAddress: string, sats: bigint): Promise<string> {
    await this.syncWallet();
    const txid = await this.walletRpc<string>('sendtoaddress', [toAddress, new RawJson(satsToBtcText(sats))]);
    await this.inMempool(txid);
    return txid;
  }

  async sendMany(outputs: readonly RegtestOutput[]): Promise<string> {
    const to: Record<string, RawJson> = {};
    for (const o of outputs) {
      if (o.address in to) throw new Error(`sendMany: ${o.address} appears twice (one output per address)`);
      to[o.address] = new RawJson(satsToBtcText(o.sats));
    }
    await this.syncWallet();
    const txid = await this.walletRpc<string>('sendmany', ['default', to, 0]);
    await this.inMempool(txid);
    return txid;
  }

  /**
   * bcoin's wallet hands a transaction to the node without waiting for the mempool (NodeClient.send
   * calls node.relay, which logs a refusal and returns): wait until the mempool has it.
   */
  private async inMempool(txid: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const pool = await this.rpc<string[]>('getrawmempool');
      if (pool.includes(txid)) return;
      if (Date.now() > deadline) {
        const log = this.stderr().trim();
        throw new Error(`bcoin did not accept ${txid} into its mempool${log ? `:\n${log.slice(-1500)}` : ''}`);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  syncWallet(): Promise<void> {
    const id = this.nextSync++;
    return new Promise((resolve, reject) => {
      const onMessage = (m: { type?: string; id?: number; error?: string }) => {
        if (m?.type !== 'synced' || m.id !== id) return;
        done();
        if (m.error) reject(new Error(`bcoin wallet sync: ${m.error}`));
        else resolve();
      };
      const onExit = () => {
        done();
        reject(new Error('bcoin regtest node exited'));
      };
      const done = () => {
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
      };
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        reject(new Error('bcoin regtest node exited'));
        return;
      }
      this.child.on('message', onMessage);
      this.child.on('exit', onExit);
      this.child.send({ type: 'sync', id });
    });
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      if (this.child.exitCode === null && this.child.signalCode === null) {
        // In-memory node: nothing to flush. SIGKILL if SIGTERM is not enough within 3 s.
        this.child.kill('SIGTERM');
        const timer = setTimeout(() => this.child.kill('SIGKILL'), 3000);
        await this.exited;
        clearTimeout(timer);
      }
    })();
    return this.stopped;
  }
}
