/**
 * What the deposit-scanner scenarios on anvil share (deposits, chain-events): the chain's
 * constants and anvil's arguments, transaction helpers, the bulk address rows, and CPU
 * accounting with anvil taken out of "other".
 */
import * as crypto from 'node:crypto';
import type { Client } from 'pg';
import { CLK_TCK, cpuPercent, cpuSnapshot, procTicks, type CpuPercent, type CpuSnapshot } from './cpu';
import { withTimeout } from './processes';

/** The catalogue's test ETH (Sepolia definition): the scanner checks the node's chain id. */
export const EVM_CHAIN_ID = 11155111;
/** The bench token's catalogue id (listed through WCS_CONFIG). */
export const TOKEN_ID = 10299;
export const ERC20_TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
export const ETHER = 10n ** 18n;
/**
 * anvil's arguments: Cancun rules, and the states of the last `keptStates` blocks in memory
 * (`--prune-history N`), none on disk. With Prague (anvil 1.7's default) and history persisted,
 * anvil needs 2 to 4 ms per empty block (18 s for 4,500 blocks here). The bare `--prune-history`
 * keeps no state at all: anvil then cannot trace a block that has transactions ("Resource not
 * found": tracing re-executes the block on its parent's state), and the service's deposit scan,
 * which reads internal transfers from traces by default, stops at the first such block. Blocks,
 * transactions, logs and receipts (what the bare loops read) depend on neither setting.
 */
export function anvilArgs(keptStates: number): string[] {
  if (!Number.isSafeInteger(keptStates) || keptStates < 1) throw new RangeError(`anvilArgs: keptStates must be a positive integer, got ${keptStates}`);
  return ['--prune-history', String(keptStates), '--hardfork', 'cancun'];
}

/**
 * States to keep for a catch-up over `blocks` blocks: every block of the chain stays traceable
 * (the set-up's blocks, the run's, and those mined after it), as on an archive node. anvil's
 * memory grows with the blocks actually mined, not with this bound (about 2.8 GB for 5,000
 * blocks and 12,000 kept states in the deposits run).
 */
export const keptStatesFor = (blocks: number): number => blocks * 2 + 2_000;

export const hex = (n: number | bigint) => `0x${n.toString(16)}`;
/** ERC-20 transfer(to, amount) call data. */
export const erc20Transfer = (to: string, amount: bigint) => '0xa9059cbb' + to.slice(2).toLowerCase().padStart(64, '0') + amount.toString(16).padStart(64, '0');
/** mint(to, amount) call data of the devnet token (deployErc20: the deployer holds the minter role). */
export const erc20Mint = (to: string, amount: bigint) => '0x40c10f19' + to.slice(2).toLowerCase().padStart(64, '0') + amount.toString(16).padStart(64, '0');
/** An amount of an 18-decimal token as the callbacks write it: "0.01", "2.000000000000000003", "2". */
export const units18 = (amount: bigint) => `${amount / ETHER}.${(amount % ETHER).toString().padStart(18, '0')}`.replace(/\.?0+$/, '');

/**
 * Address rows in bulk, valid for the schema: a user key (random 33-byte public key, key
 * indices from 1,000,000 so the API's own allocation never meets them) and its test ETH row
 * with the given address, in one statement. The scanner only reads `addresses`.
 */
export async function bulkAddresses(pg: Client, appId: number, chainId: number, addresses: string[]): Promise<void> {
  const users = addresses.map((_, i) => `w-${i}`);
  await withTimeout(
    pg.query(
      `WITH k AS (
         INSERT INTO user_keys (application_id, namespace, external_user_id, key_index, public_key)
         SELECT $1, 'evm', u, i, pk FROM unnest($2::text[], $3::bigint[], $4::bytea[]) AS t(u, i, pk)
         RETURNING id, external_user_id
       )
       INSERT INTO addresses (application_id, chain_id, chain_code, external_user_id, address, memo, user_key_id)
       SELECT $1, $5, 'ETH', k.external_user_id, a.address, NULL, k.id
         FROM k JOIN unnest($2::text[], $6::text[]) AS a(u, address) ON a.u = k.external_user_id`,
      [appId, users, users.map((_, i) => String(1_000_000 + i)), users.map(() => Buffer.concat([Buffer.from([2]), crypto.randomBytes(32)])), chainId, addresses],
    ),
    120_000,
  );
}

// ---------------------------------------------------------------- CPU with anvil

export interface CpuRecord extends CpuPercent {
  anvil: number | null;
}

export interface CpuMark {
  s: CpuSnapshot;
  anvil: number | null;
}

export const cpuMark = (targetPid: number | undefined, anvilPid: number | undefined): CpuMark => ({ s: cpuSnapshot(targetPid), anvil: procTicks(anvilPid) });

export function cpuBetween(a: CpuMark, b: CpuMark): { cpu: CpuRecord; wallS: number } {
  const base = cpuPercent(a.s, b.s);
  const wallS = Number(b.s.at - a.s.at) / 1e9;
  const anvil = a.anvil === null || b.anvil === null ? null : ((b.anvil - a.anvil) / CLK_TCK / wallS) * 100;
  // lib/cpu's "other" is everything but this process, the target and Postgres: take anvil out too
  const other = base.other === null && base.host !== null ? Math.max(0, base.host - base.client - (base.postgres ?? 0) - (anvil ?? 0)) : base.other === null ? null : Math.max(0, base.other - (anvil ?? 0));
  return { cpu: { ...base, anvil, other }, wallS };
}

/** CPU µs per block from a percentage of one CPU over wallS seconds. */
export const perBlock = (pct: number | null, wallS: number, n: number) => (pct === null || n === 0 ? null : ((pct / 100) * wallS * 1e6) / n);

/**
 * Forgets every deposit, chain event, custody outflow and callback of the application on the chain,
 * and the chain's scan state, then vacuums: the next workers process scans from
 * WCS_SCAN_START_TEST_ETH again on tables with no dead rows and fresh statistics.
 */
export async function resetScanState(pg: Client, appId: number, chainId: number): Promise<void> {
  await pg.query('BEGIN');
  try {
    await pg.query('DELETE FROM callback_attempts WHERE callback_task_id IN (SELECT id FROM callback_tasks WHERE application_id = $1)', [appId]);
    await pg.query('DELETE FROM callback_tasks WHERE application_id = $1', [appId]);
    await pg.query('DELETE FROM recharge_notices WHERE recharge_id IN (SELECT id FROM recharges WHERE chain_id = $1)', [chainId]);
    await pg.query('DELETE FROM recharges WHERE chain_id = $1', [chainId]);
    await pg.query('DELETE FROM chain_events WHERE chain_id = $1', [chainId]);
    await pg.query('DELETE FROM custody_outflows WHERE chain_id = $1', [chainId]);
    await pg.query('DELETE FROM scan_blocks WHERE chain_id = $1', [chainId]);
    await pg.query('DELETE FROM scan_cursors WHERE chain_id = $1', [chainId]);
    await pg.query('COMMIT');
  } catch (e) {
    await pg.query('ROLLBACK');
    throw e;
  }
  await pg.query(
    'VACUUM ANALYZE callback_attempts, callback_tasks, recharge_notices, recharges, chain_events, custody_outflows, scan_blocks, scan_cursors, addresses, chain_subscriptions, chain_subscription_addresses, chain_monitor_versions',
  );
}
