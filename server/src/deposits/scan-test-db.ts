import { Client } from 'pg';
import { Sequelize } from 'sequelize';
import { migrate } from '../db/migrations';
import { createTestDatabase, type TestDatabase } from '../testing';

/** A migrated test database with one application and one chain row, for the deposit scan's unit tests (real Postgres). */
export interface ScanTestDb {
  readonly db: TestDatabase;
  readonly sequelize: Sequelize;
  /** A connection of the test's own (its transactions are the test's). */
  readonly pg: Client;
  readonly appId: number;
  close(): Promise<void>;
}

export async function scanTestDb(chain: { id: number; code: string; family: string; curve: string; addressing: 'hd' | 'memo'; nativeSymbol: string; decimals: number }): Promise<ScanTestDb> {
  const db = await createTestDatabase();
  const sequelize = new Sequelize(db.url, { dialect: 'postgres', logging: false });
  await migrate(sequelize);
  const pg = new Client({ connectionString: db.url });
  await pg.connect();
  const appId = (await pg.query(`INSERT INTO applications (name, environment, api_key) VALUES ('scan', 'test', 'pk_test_scan') RETURNING id`)).rows[0].id as number;
  await pg.query(
    `INSERT INTO chains (id, code, name, family, environment, network, curve, addressing, native_symbol, decimals, confirmations)
     VALUES ($1, $2, 'scan test', $3, 'test', 'local', $4, $5, $6, $7, 1)`,
    [chain.id, chain.code, chain.family, chain.curve, chain.addressing, chain.nativeSymbol, chain.decimals],
  );
  return {
    db, sequelize, pg, appId,
    close: async () => {
      await pg.end();
      await sequelize.close();
      await db.drop();
    },
  };
}
