/**
 * What the kill -9 tests of collection share (collection-crash, collection-delegated-crash): the
 * transactions mined since a block, read from the node, and the workers as a child process
 * (`wcs start --workers-only`) killed with SIGKILL.
 */
import { expect } from 'chai';
import { anvilRpc } from '@wcs/adapter-evm/devnet';
import { freePort, testEnv } from '@wcs/server/testing';
import { WcsProcess } from './processes';

/** A transaction as eth_getBlockByNumber(…, true) lists it (the fields the crash tests count). */
export interface ChainTx { hash: string; from: string; to: string | null; nonce: string; blockNumber: string }

/** Every transaction mined in blocks [from, latest], 50 blocks read at a time. */
export async function minedSince(url: string, from: bigint): Promise<ChainTx[]> {
  const top = BigInt(await anvilRpc<string>(url, 'eth_blockNumber'));
  const out: ChainTx[] = [];
  for (let n = from; n <= top; n += 50n) {
    const blocks = await Promise.all(Array.from({ length: Number(top - n + 1n < 50n ? top - n + 1n : 50n) }, (_x, i) =>
      anvilRpc<{ transactions: ChainTx[] }>(url, 'eth_getBlockByNumber', [`0x${(n + BigInt(i)).toString(16)}`, true])));
    for (const b of blocks) out.push(...b.transactions);
  }
  return out;
}

/**
 * The workers in a child process on the test database with `vars`; the killed process's deposit
 * scan lease lapses after 3 s (default 30 s), so a restarted one scans new deposits at once.
 */
export async function spawnWorkers(dbUrl: string, vars: Record<string, string>): Promise<WcsProcess> {
  const env = { ...process.env, ...testEnv(dbUrl, { ...vars, WCS_SCAN_LEASE_MS: '3000' }) };
  return WcsProcess.spawn(['start', '--workers-only'], env, await freePort());
}

/** kill -9 of the workers, checked to have died of it. */
export async function kill9(workers: WcsProcess): Promise<void> {
  const r = await workers.stop('SIGKILL');
  expect(r.signal).to.equal('SIGKILL');
}
