import { expect } from 'chai';
import type { Client } from 'pg';
import type { Sequelize } from 'sequelize';
import type { ChainDefinition, HistoryScanner, ObservedTransfer } from '@wcs/core';
import { testLogger } from '../testing';
import { ChainMonitor } from '../chain-events/monitor';
import { HistoryChainScan } from './history-scan';
import { ScanLease } from './scan-lease';
import { scanTestDb, type ScanTestDb } from './scan-test-db';
import { ChainTokens } from './tokens';
import { WatchList } from './watch-list';

/**
 * A memo chain's shared deposit account made while a scan step reads what it watches (real
 * Postgres, a scripted history scanner). The step reads the chain monitor (whose wallets include
 * shared deposit accounts) and the watch list (deposit addresses and memos) one after the other;
 * an address created between the two reads must still be read from its first transaction. Read the
 * other way round, the account was a wallet of the monitor but no deposit address yet, was read from
 * the chain's head, and a deposit it had received before was never credited (seen in CI on recorded
 * Stellar and EOS answers).
 */
describe('history scan: a shared deposit account created during a step is read from its first transaction (real Postgres)', () => {
  let t: ScanTestDb;
  let sequelize: Sequelize;
  let pg: Client;
  let appId: number;
  const CHAIN = 9107;
  const ACCOUNT = 'GSHAREDACCOUNT';
  const chain = { id: CHAIN, code: 'MTST', family: 'stellar', environment: 'test', addressing: 'memo', confirmations: 1 } as unknown as ChainDefinition;

  before(async () => {
    t = await scanTestDb({ id: CHAIN, code: 'MTST', family: 'stellar', curve: 'ed25519', addressing: 'memo', nativeSymbol: 'XLM', decimals: 7 });
    ({ sequelize, pg, appId } = t);
    await pg.query(`INSERT INTO chain_tokens (id, chain_id, symbol, name, contract, decimals) VALUES ($1, $2, 'XLM', 'Lumens', NULL, 7)`, [CHAIN * 100, CHAIN]);
  });
  after(async () => {
    await t?.close();
  });

  /** The shared account and the user's memo address, in one transaction, as address/create writes them. */
  async function createAddress(): Promise<void> {
    await pg.query('BEGIN');
    const account = await pg.query(`INSERT INTO deposit_accounts (application_id, chain_id, address, key_index, public_key) VALUES ($1, $2, $3, 0, '\\x00') RETURNING id`, [appId, CHAIN, ACCOUNT]);
    await pg.query(
      `INSERT INTO addresses (application_id, chain_id, chain_code, external_user_id, address, memo, deposit_account_id) VALUES ($1, $2, 'MTST', 'user-1', $3, '7', $4)`,
      [appId, CHAIN, ACCOUNT, account.rows[0].id],
    );
    await pg.query('COMMIT');
  }

  it('the deposit made before the first read of the account is credited; the account is never read from the head', async () => {
    const deposit: ObservedTransfer = {
      txHash: 'a'.repeat(64), position: 0, fromAddress: 'GSENDER', toAddress: ACCOUNT, memo: '7', contract: null, amount: 20_000_000n, blockHeight: 100n, blockHash: 'b'.repeat(64), succeeded: true,
    };
    const heads: string[] = [];
    const reads: Array<{ address: string; cursor: string | null }> = [];
    const scanner: HistoryScanner = {
      kind: 'history',
      tipHeight: async () => 200n,
      headCursor: async (address) => {
        heads.push(address);
        return 'head';
      },
      transfersSince: async (address, cursor) => {
        reads.push({ address, cursor });
        if (address !== ACCOUNT || cursor !== null) return { transfers: [], cursor };
        return { transfers: [deposit], cursor: 'after-deposit' };
      },
    };
    const watch = new WatchList(sequelize, CHAIN, true);
    const monitor = new ChainMonitor(sequelize, CHAIN);
    // the address is committed right after the first of the step's two reads (whichever it is)
    let created = false;
    for (const target of [watch, monitor] as Array<{ refresh(): Promise<void> }>) {
      const original = target.refresh.bind(target);
      target.refresh = async () => {
        await original();
        if (!created) {
          created = true;
          await createAddress();
        }
      };
    }
    const lease = new ScanLease(sequelize, CHAIN, 'test-owner', 60_000);
    expect(await lease.acquire()).to.equal(true);
    const scan = new HistoryChainScan(sequelize, chain, scanner, lease, watch, await ChainTokens.load(sequelize, CHAIN, 'stellar'), { pageSize: 100, concurrency: 2, pagesPerStep: 2 }, testLogger(), monitor);
    await scan.step();
    await scan.step();
    expect(created, 'the address was made during the first step').to.equal(true);
    expect(heads, 'the shared deposit account is never read from the head').to.deep.equal([]);
    expect(reads.filter((r) => r.address === ACCOUNT)[0], 'its first read is from its first transaction').to.deep.equal({ address: ACCOUNT, cursor: null });
    const credited = await pg.query(`SELECT memo, amount::text AS amount, tx_status FROM recharges WHERE chain_id = $1`, [CHAIN]);
    expect(credited.rows).to.deep.equal([{ memo: '7', amount: '20000000', tx_status: 'SETTLED' }]);
    expect((await pg.query('SELECT count(*)::int AS n FROM unattributed_deposits WHERE chain_id = $1', [CHAIN])).rows[0].n).to.equal(0);
  });
  it('a deposit to a memo made after the step read the watch list (its user paid at once) is credited to that user, not kept as unattributed', async () => {
    const account = (await pg.query('SELECT id FROM deposit_accounts WHERE chain_id = $1', [CHAIN])).rows[0].id;
    const deposit: ObservedTransfer = {
      txHash: 'c'.repeat(64), position: 0, fromAddress: 'GSENDER', toAddress: ACCOUNT, memo: '8', contract: null, amount: 30_000_000n, blockHeight: 150n, blockHash: 'd'.repeat(64), succeeded: true,
    };
    const scanner: HistoryScanner = {
      kind: 'history',
      tipHeight: async () => 200n,
      headCursor: async () => 'head',
      transfersSince: async (address, cursor) => {
        if (address !== ACCOUNT || cursor !== 'after-deposit') return { transfers: [], cursor };
        // user-2's address is made (and paid) after this step read the watch list
        await pg.query(
          `INSERT INTO addresses (application_id, chain_id, chain_code, external_user_id, address, memo, deposit_account_id) VALUES ($1, $2, 'MTST', 'user-2', $3, '8', $4)`,
          [appId, CHAIN, ACCOUNT, account],
        );
        return { transfers: [deposit], cursor: 'after-second' };
      },
    };
    await pg.query(`UPDATE scan_history_cursors SET cursor = 'after-deposit' WHERE chain_id = $1 AND address = $2`, [CHAIN, ACCOUNT]);
    const watch = new WatchList(sequelize, CHAIN, true);
    const lease = new ScanLease(sequelize, CHAIN, 'test-owner', 60_000);
    expect(await lease.acquire()).to.equal(true);
    const scan = new HistoryChainScan(sequelize, chain, scanner, lease, watch, await ChainTokens.load(sequelize, CHAIN, 'stellar'), { pageSize: 100, concurrency: 2, pagesPerStep: 2 }, testLogger(), new ChainMonitor(sequelize, CHAIN));
    await scan.step();
    const credited = await pg.query(`SELECT external_user_id, memo, amount::text AS amount FROM recharges WHERE chain_id = $1 ORDER BY id`, [CHAIN]);
    expect(credited.rows.map((r) => r.memo)).to.deep.equal(['7', '8']);
    expect(credited.rows[1]).to.deep.include({ external_user_id: 'user-2', amount: '30000000' });
    expect((await pg.query('SELECT count(*)::int AS n FROM unattributed_deposits WHERE chain_id = $1', [CHAIN])).rows[0].n).to.equal(0);
  });
});
